//! The template context a run starts with, as `runSimpleWorkflow` builds it from the request
//! (the cassette's `trigger`) and the server's settings (`server`), in the engine's key order:
//! the request's fields, what the server derives from them (`branch`, `taskId`, `issueDir`,
//! `contextSnapshot`), the configured maps, `request.extra`, and last the cassette's
//! `context`, which may set any key. Which of the variables the server derives a run has is the
//! release model's: the rows of the family's variable table (`families::lastlight::model::
//! VARIABLES`) the release sets for a run of this workflow. What the dispatcher passes in
//! `request.extra` (the PR render context, `baseBranch`) is the cassette's `trigger.extra`. The render-only preview starts from `--var`
//! values alone.

use serde_json::{Map, Value, json};

use crate::families::lastlight::model::VARIABLES;
use crate::registry::releases::lastlight::ReleaseId;
use crate::runtime::lastlight::cassette::Cassette;
use crate::runtime::lastlight::value::{Ctx, slugify, string_or_undefined};

/// The run id a replay uses (the server's is random): its first 8 characters name the run's
/// task and, for runs without an issue, its directory.
pub const RUN_ID: &str = "dryrun00-0000-4000-8000-000000000000";

const UNTRUSTED_OPEN: &str = "<<<USER_CONTENT_UNTRUSTED";
const UNTRUSTED_CLOSE: &str = "<<<END_USER_CONTENT_UNTRUSTED>>>";

/// Whether the server sets variable `var` at `release` for a run of workflow `name`.
pub fn sets(var: &str, release: ReleaseId, name: &str, pr_scoped: bool) -> bool {
    VARIABLES.iter().any(|v| v.name == var && v.since <= release && v.set_for_run(Some(name), pr_scoped))
}

/// The context of a run of workflow `name` (PR-scoped or not) at `release` that `cassette`
/// records.
pub fn base(cassette: &Cassette, name: &str, release: ReleaseId, pr_scoped: bool) -> Ctx {
    let has = |var: &str| sets(var, release, name, pr_scoped);
    let request = &cassette.trigger;
    let server = &cassette.server;
    let get = |key: &str| request.get(key).filter(|v| !v.is_null());
    let text = |key: &str| get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    let issue = get("issueNumber").and_then(Value::as_i64);
    let pr = get("prNumber").and_then(Value::as_i64);
    let number = issue.or(pr);
    let owner = get("owner").cloned();
    let repo = get("repo").cloned();
    let run_id = server.get("runId").and_then(Value::as_str).unwrap_or(RUN_ID);
    let id8: String = run_id.chars().take(8).collect();
    let repo_text = string_or_undefined(repo.as_ref());
    let branch = match get("prePopulateBranch").and_then(Value::as_str) {
        Some(given) => given.to_string(),
        None => match number {
            Some(n) => {
                let title = text("issueTitle");
                let title = if title.is_empty() { format!("issue-{n}") } else { title };
                format!("lastlight/{n}-{}", slugify(&title))
            }
            None => format!("lastlight/{name}"),
        },
    };
    let pre_populate = get("prePopulateBranch").cloned().or_else(|| (name == "build").then(|| json!(branch)));
    let task_id = match number {
        Some(n) => format!("{repo_text}-{n}-{name}-{id8}"),
        None => format!("{repo_text}-{name}-{id8}"),
    };
    let issue_dir = match number {
        Some(n) => format!(".lastlight/issue-{n}"),
        None => format!(".lastlight/{name}-{id8}"),
    };
    let sender = get("sender").cloned();
    let extra = get("extra").and_then(Value::as_object).cloned().unwrap_or_default();
    let snapshot = context_snapshot(request, &extra, &branch);
    let mut ctx = Ctx::default();
    ctx.set("owner", owner.clone());
    ctx.set("repo", repo.clone());
    // Before 0.10.2 a PR run's number reached no variable: `issueNumber` is 0 there.
    let issue_number = if has("prNumber") { number.unwrap_or(0) } else { issue.unwrap_or(0) };
    ctx.set("issueNumber", Some(json!(issue_number)));
    if has("prNumber") {
        ctx.set("prNumber", pr.map(Value::from));
    }
    ctx.set("issueTitle", Some(json!(text("issueTitle"))));
    ctx.set("issueBody", Some(json!(text("issueBody"))));
    ctx.set("issueLabels", Some(get("issueLabels").cloned().unwrap_or_else(|| json!([]))));
    ctx.set("commentBody", Some(json!(text("commentBody"))));
    ctx.set("sender", sender);
    let public_url = server.get("publicUrl").cloned();
    if has("botMention") {
        let bot = server.get("botName").and_then(Value::as_str).unwrap_or("last-light");
        ctx.set("botMention", Some(json!(format!("@{bot}"))));
    }
    ctx.set("branch", Some(json!(branch)));
    ctx.set("taskId", Some(json!(task_id)));
    ctx.set("issueDir", Some(json!(issue_dir)));
    if has("externalizeArtifacts") {
        let server_mode = server.get("buildAssets").and_then(Value::as_str) == Some("server");
        ctx.set("externalizeArtifacts", Some(json!(server_mode)));
        ctx.set("publicUrl", public_url.clone());
        let artifacts = match public_url.as_ref().and_then(Value::as_str) {
            Some(url) if !url.is_empty() => {
                let key = issue_dir.strip_prefix(".lastlight/").unwrap_or(&issue_dir);
                format!(
                    "{}/admin/api/public/artifacts/{}/{repo_text}/{key}",
                    url.trim_end_matches('/'),
                    string_or_undefined(owner.as_ref())
                )
            }
            _ => String::new(),
        };
        ctx.set("artifactBaseUrl", Some(json!(artifacts)));
    }
    let bootstrap = server.get("bootstrapLabel").and_then(Value::as_str).unwrap_or("lastlight:bootstrap");
    ctx.set("bootstrapLabel", Some(json!(bootstrap)));
    ctx.set("contextSnapshot", Some(json!(snapshot)));
    if has("prePopulateBranch") {
        ctx.set("prePopulateBranch", pre_populate);
    }
    ctx.set("models", server.get("models").cloned());
    if has("variants") {
        ctx.set("variants", server.get("variants").cloned());
    }
    for var in ["fix", "dependencies"].into_iter().filter(|v| has(v)) {
        ctx.set(var, server.get(var).cloned());
    }
    ctx.set("triggerIdOverride", get("triggerId").cloned());
    for (key, value) in &extra {
        ctx.set(key, Some(value.clone()));
    }
    for (key, value) in &cassette.context {
        ctx.set(key, Some(value.clone()));
    }
    ctx
}

/// `contextSnapshot`: the repository and issue, the triggering comment, who asked, the branch,
/// and the issue's body or thread, user text wrapped as untrusted; empty without user text.
fn context_snapshot(request: &Map<String, Value>, extra: &Map<String, Value>, branch: &str) -> String {
    let text = |key: &str| request.get(key).and_then(Value::as_str).unwrap_or_default();
    let combined = extra.get("combinedContext").and_then(Value::as_str).unwrap_or_default();
    let (body, comment) = (text("issueBody"), text("commentBody"));
    if combined.is_empty() && body.is_empty() && comment.is_empty() {
        return String::new();
    }
    let owner = string_or_undefined(request.get("owner"));
    let repo = string_or_undefined(request.get("repo"));
    let issue = request.get("issueNumber").and_then(Value::as_i64).filter(|n| *n != 0);
    let reference = format!("{owner}/{repo}{}", issue.map(|n| format!("#{n}")).unwrap_or_default());
    let sender = string_or_undefined(request.get("sender"));
    let title = text("issueTitle");
    let mut parts =
        vec![format!("Repo: {reference}"), format!("Issue title: {}", if title.is_empty() { "(none)" } else { title })];
    if !comment.is_empty() {
        let author = request.get("sender").and_then(Value::as_str).filter(|s| !s.is_empty());
        parts.push(format!("Triggering comment:\n{}", wrap_untrusted(comment, "github-comment", author)));
    }
    parts.push(format!("Requested by: {sender}"));
    parts.push(format!("Branch: {branch}"));
    if !combined.is_empty() {
        parts.push(format!("Issue body and full thread:\n{}", wrap_untrusted(combined, "github-issue-thread", None)));
    } else if !body.is_empty() {
        parts.push(format!("Issue body:\n{}", wrap_untrusted(body, "github-issue-body", None)));
    }
    parts.join("\n\n")
}

/// `wrapUntrusted`: the text between the untrusted-content markers, markers inside it defused.
fn wrap_untrusted(body: &str, source: &str, author: Option<&str>) -> String {
    let sanitized = body.replace(UNTRUSTED_OPEN, "<<<UCU").replace(UNTRUSTED_CLOSE, "END_UCU>>>");
    let mut attrs = format!("source=\"{source}\"");
    if let Some(author) = author {
        attrs.push_str(&format!(" author=\"{author}\""));
    }
    format!("{UNTRUSTED_OPEN} {attrs}>>>\n{sanitized}\n{UNTRUSTED_CLOSE}")
}

/// The context of a render-only preview: the `--var` values alone (a dotted key sets a field
/// of an object: `models.plan=x`), `scratch` and `phaseOutputs` as every phase has them, and
/// the loop variables a phase's first execution gets.
pub fn preview(vars: &[(String, Value)], loop_vars: &[(&str, Value)]) -> Ctx {
    let mut object = Map::new();
    object.insert("scratch".into(), json!({}));
    object.insert("phaseOutputs".into(), json!({}));
    for (key, value) in loop_vars {
        object.insert(key.to_string(), value.clone());
    }
    for (key, value) in vars {
        let parts: Vec<&str> = key.split('.').collect();
        insert_path(&mut object, &parts, value.clone());
    }
    Ctx::from_map(&object)
}

/// Sets `parts` (a dotted key) in `object`, making the objects on the way.
fn insert_path(object: &mut Map<String, Value>, parts: &[&str], value: Value) {
    match parts {
        [] => {}
        [last] => {
            object.insert(last.to_string(), value);
        }
        [first, rest @ ..] => {
            let slot = object.entry(first.to_string()).or_insert_with(|| json!({}));
            if !slot.is_object() {
                *slot = json!({});
            }
            if let Value::Object(inner) = slot {
                insert_path(inner, rest, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::releases::lastlight as releases;

    #[test]
    fn the_server_derives_branch_task_and_directory() {
        let cassette = crate::runtime::lastlight::cassette::read(
            "cassette: 1\nworkflow: build\ntrigger: { owner: acme, repo: widgets, issueNumber: 42, issueTitle: 'Add a --dry-run flag', issueBody: 'Please.', sender: alice, extra: { mode: scan } }\ncontext: { models: { architect: opus } }\n",
            false,
        );
        let ctx = base(&cassette, "build", releases::SEED, false);
        let get = |k: &str| ctx.get(k).cloned();
        assert_eq!(get("branch"), Some(json!("lastlight/42-add-a-dry-run-flag")));
        assert_eq!(get("taskId"), Some(json!("widgets-42-build-dryrun00")));
        assert_eq!(get("issueDir"), Some(json!(".lastlight/issue-42")));
        assert_eq!(get("prePopulateBranch"), get("branch"));
        assert_eq!(get("mode"), Some(json!("scan")));
        assert_eq!(get("models"), Some(json!({"architect": "opus"})));
        assert_eq!(get("prNumber"), None, "the seed-era context has no prNumber");
        let snapshot = get("contextSnapshot").and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        assert!(snapshot.starts_with("Repo: acme/widgets#42\n\nIssue title: Add a --dry-run flag\n\nRequested by: alice\n\nBranch: lastlight/42-add-a-dry-run-flag\n\nIssue body:\n<<<USER_CONTENT_UNTRUSTED source=\"github-issue-body\">>>\nPlease.\n<<<END_USER_CONTENT_UNTRUSTED>>>"), "{snapshot}");
        let head = base(&cassette, "build", releases::NEWEST, false);
        assert_eq!(head.get("botMention"), Some(&json!("@last-light")));
        let keys: Vec<&str> = head.entries().into_iter().map(|(k, _)| k).take(4).collect();
        assert_eq!(keys, ["owner", "repo", "issueNumber", "prNumber"]);
    }

    /// Each variable from the release that sets it (the family's table): `prNumber` from
    /// 0.10.2 (a PR run's `issueNumber` is 0 before), `botMention` from 0.10.6,
    /// `artifactBaseUrl` from 0.2, `variants` from the seed.
    #[test]
    fn the_context_is_the_releases() {
        let cassette = crate::runtime::lastlight::cassette::read(
            "cassette: 1\nworkflow: pr-fix\ntrigger: { owner: acme, repo: widgets, prNumber: 7, issueTitle: Fix CI }\n",
            false,
        );
        let at = |release| base(&cassette, "pr-fix", release, true);
        let old = at(releases::V0_7_7);
        assert_eq!(old.get("issueNumber"), Some(&json!(0)));
        assert_eq!(old.get("prNumber"), None);
        assert_eq!(old.get("botMention"), None);
        assert_eq!(old.get("artifactBaseUrl"), Some(&json!("")), "set from 0.2, empty without a public URL");
        let new = at(releases::V0_18_5);
        assert_eq!(new.get("issueNumber"), Some(&json!(7)));
        assert_eq!(new.get("prNumber"), Some(&json!(7)));
        assert_eq!(new.get("botMention"), Some(&json!("@last-light")));
        let seed = at(releases::SEED);
        assert_eq!(seed.get("artifactBaseUrl"), None);
        assert_eq!(seed.get("variants").map(|_| ()), None, "no variants configured");
        assert!(seed.entries().iter().any(|(k, _)| *k == "variants"), "the seed sets variants");
        assert!(!at(releases::V0_1).entries().iter().any(|(k, _)| *k == "variants"), "not before the seed");
    }

    #[test]
    fn preview_vars_build_objects() {
        let vars = vec![("models.plan".to_string(), json!("opus")), ("approved".to_string(), json!(false))];
        let ctx = preview(&vars, &[("fixCycle", json!(0))]);
        assert_eq!(ctx.get("models"), Some(&json!({"plan": "opus"})));
        assert_eq!(ctx.get("approved"), Some(&json!(false)));
        assert_eq!(ctx.get("fixCycle"), Some(&json!(0)));
        assert_eq!(ctx.get("phaseOutputs"), Some(&json!({})));
    }
}
