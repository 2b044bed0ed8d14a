//! `check --fix`, `--diff` and `--unsafe-fixes` on fixtures (before and after, comments kept,
//! idempotence, a fix in another file), and `stagelint init`.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use common::{copy_dir, repo, stagelint, stderr, stdout, write};
use stagelint::config::Config;
use stagelint::diagnostic::{Applicability, Diagnostic, Edit};
use stagelint::source::Span;
use stagelint::workspace::{FileKind, Workspace};

/// Comments in the frontmatter, a dollar placeholder (a safe fix) and a typo'd tool (an unsafe
/// fix); a second file with a trailing unused suppression (a safe fix).
const PLAN: &str = "---\n# The planning stage.\nid: plan\nname: Plan\nallowedTools: [Read, Grpe]   # tools\ncompletionTool: submit_plan\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }  # keep\nturnCap: 5\nresolutionPolicy: retry-later\n---\n\nTask: ${ctx.task}, on ${ctx.branch}.\n<!-- Call submit_plan when done. -->\nCall submit_plan.\n";
const REVIEW: &str = "---\nid: review\nname: Review\nallowedTools: [Read]\ncompletionTool: submit_review\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later # stagelint: ignore[sm/UnknownTool, sm/UnknownField]\n---\n\nTask: {{ctx.task}}. Call submit_review.\n";

fn workspace() -> tempfile::TempDir {
    common::temp_files(&[("plan.md", PLAN), ("review.md", REVIEW)])
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

#[test]
fn fix_applies_safe_fixes_keeps_the_rest_and_is_idempotent() {
    let dir = workspace();
    let output = stagelint(&["check", "--fix", "--format", "concise"], dir.path());
    assert_eq!(output.status.code(), Some(1), "the unsafe-only typo remains an error");
    assert_eq!(
        stderr(&output),
        "stagelint: applied 3 fix(es) to 2 file(s)\nstagelint: 1 more fix(es) available with --unsafe-fixes (review them with --diff --unsafe-fixes)\n",
        "the unsafe fix left is announced"
    );
    assert_eq!(
        stdout(&output),
        "plan.md:5:22: error[sm/UnknownTool] `Grpe` is not in the live tool set; did you mean `Grep`?\nFound 1 error (2 files checked). 1 fixable with `--fix --unsafe-fixes`.\n"
    );
    let plan = PLAN.replace("${ctx.task}", "{{ctx.task}}").replace("${ctx.branch}", "{{ctx.branch}}");
    assert_eq!(read(dir.path(), "plan.md"), plan, "only the placeholders changed");
    // Both codes of the suppression were unused; one fix removed the comment, the other
    // overlapped it and had nothing left to do on the next round.
    assert_eq!(
        read(dir.path(), "review.md"),
        REVIEW.replace(" # stagelint: ignore[sm/UnknownTool, sm/UnknownField]", "")
    );

    let again = stagelint(&["check", "--fix", "--format", "concise"], dir.path());
    assert_eq!(
        stderr(&again),
        "stagelint: 1 more fix(es) available with --unsafe-fixes (review them with --diff --unsafe-fixes)\n",
        "nothing safe left to fix"
    );
    assert_eq!(read(dir.path(), "plan.md"), plan);
    let diff = stagelint(&["check", "--diff"], dir.path());
    assert_eq!((diff.status.code(), stdout(&diff)), (Some(0), String::new()));
}

#[test]
fn diff_prints_without_writing_and_exits_one() {
    let dir = workspace();
    let output = stagelint(&["check", "--diff"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(read(dir.path(), "plan.md"), PLAN, "--diff writes nothing");
    insta::assert_snapshot!("fix_diff", stdout(&output));
    let output = stagelint(&["check", "--diff", "--exit-zero", "--output", "changes.diff"], dir.path());
    assert_eq!(output.status.code(), Some(0));
    assert!(read(dir.path(), "changes.diff").starts_with("--- a/plan.md\n+++ b/plan.md\n"));
}

#[test]
fn unsafe_fixes_and_select_narrow_or_widen_what_is_fixed() {
    let dir = workspace();
    let output = stagelint(&["check", "--fix", "--unsafe-fixes", "--select", "sm/UnknownTool"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let plan = read(dir.path(), "plan.md");
    assert!(plan.contains("allowedTools: [Read, Grep]   # tools\n"), "{plan}");
    assert!(plan.contains("${ctx.task}"), "findings not selected are not fixed: {plan}");
    assert_eq!(read(dir.path(), "review.md"), REVIEW);
}

#[test]
fn a_fix_may_edit_another_file() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = repo().join("tests/fixtures/steps/SR-VALID-003/bad-enum-missing-intent");
    copy_dir(&fixture, dir.path());
    let schema = ".agent/demo/schemas/issue.schema.json";
    let before = read(dir.path(), schema);
    let output = stagelint(&["check", "--fix", "--select", "steps/SR-VALID-003"], dir.path());
    assert_eq!(output.status.code(), Some(1), "the enum fix is unsafe: {}", stdout(&output));
    assert_eq!(read(dir.path(), schema), before);
    let output = stagelint(&["check", "--fix", "--unsafe-fixes", "--select", "steps/SR-VALID-003"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let after = read(dir.path(), schema);
    assert!(after.contains("\"enum\": [\"next\", \"repeat\", \"handoff\"]"), "{after}");
    assert!(!read(dir.path(), ".agent/demo/steps_registry.json").is_empty());
}

#[test]
fn lastlight_fixes_insert_required_fields_and_kind_cron() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo().join("tests/fixtures/lastlight/MissingField/bad-nested"), dir.path());
    copy_dir(&repo().join("tests/fixtures/lastlight/CronKindMissing/bad-doc"), dir.path());
    let select = "lastlight/MissingField,lastlight/CronKindMissing";
    let output =
        stagelint(&["check", "--fix", "--unsafe-fixes", "--select", select, "--format", "concise"], dir.path());
    let build = read(dir.path(), "workflows/build.yaml");
    assert!(build.contains("    generic_loop:\n      max_iterations: 5\n      until: "), "{build}");
    assert!(build.contains("      contains_BLOCKED:\n        action: fail\n        message: blocked\n"), "{build}");
    let cron = read(dir.path(), "workflows/cron-triage.yaml");
    assert!(cron.starts_with("kind: cron\nname: nightly-triage\n"), "{cron}");
    // The prompt paths have no placeholder: those findings remain.
    assert_eq!(output.status.code(), Some(1));
    let remaining = stdout(&output);
    assert!(
        remaining.contains("has no `re_review_prompt`") && remaining.contains("has no `on_request_changes`"),
        "{remaining}"
    );
    assert!(!remaining.contains("CronKindMissing"), "{remaining}");
}

/// Overlapping fixes: the first in finding order wins the round; both inserts at one offset
/// clash too; a fix out of bounds is skipped.
#[test]
fn plan_takes_each_fix_whole_or_not_at_all() {
    let mut workspace = Workspace::new();
    let text = "abcdef".to_string();
    let path = std::path::PathBuf::from("/w/a.md");
    let file = workspace.add(path, "a.md".into(), text, FileKind::Stage, Arc::new(Config::defaults(Path::new("/w"))));
    let fix = |edits: &[(usize, usize, &str)]| {
        let edits = edits.iter().map(|&(s, e, r)| Edit { span: Span::new(s, e), replacement: r.into() }).collect();
        Diagnostic::new("sm/UnknownTool", file, Span::new(0, 1), "x").with_fix("t", Applicability::Safe, edits)
    };
    let diagnostics = vec![
        fix(&[(0, 2, "AB"), (4, 4, "|")]),
        fix(&[(1, 3, "no")]),
        fix(&[(4, 4, "also no")]),
        fix(&[(5, 6, "F")]),
        fix(&[(9, 12, "out of bounds")]),
    ];
    let plan = stagelint::fix::plan(&workspace, &diagnostics, false);
    assert_eq!(plan.fixes, 2);
    let edits = &plan.edits[&file];
    assert_eq!(stagelint::fix::apply_edits("abcdef", edits), "ABcd|eF");
}

/// Flow-style frontmatter takes the missing fields inside its braces, one round at a time, and
/// the file still parses after every round.
#[test]
fn missing_fields_go_inside_a_flow_mapping() {
    let dir = common::temp_files(&[("d.md", "---\n{id: d, name: D, turnCap: 3}\n---\nbody\n")]);
    let output = stagelint(&["check", "--fix", "--unsafe-fixes", "--format", "concise", "d.md"], dir.path());
    let after = read(dir.path(), "d.md");
    assert!(!stdout(&output).contains("FrontmatterSyntax"), "{}\n{after}", stdout(&output));
    assert!(!stdout(&output).contains("MissingRequiredField"), "{}", stdout(&output));
    assert_eq!(
        after,
        "---\n{id: d, name: D, turnCap: 3, allowedTools: [], completionSchema: { type: object }, \
         completionTool: submit_d, resolutionPolicy: retry-later, retryPolicy: { maxAttempts: 1, backoff: none }}\n---\nbody\n"
    );
    // `{}` is a stage only by a `[files] stages` glob.
    let empty =
        common::temp_files(&[("e.md", "---\n{}\n---\nbody\n"), ("stagelint.toml", "[files]\nstages = [\"*.md\"]\n")]);
    stagelint(&["check", "--fix", "--unsafe-fixes", "e.md"], empty.path());
    let fixed = read(empty.path(), "e.md");
    assert!(fixed.starts_with("---\n{allowedTools: [], completionSchema: { type: object }, "), "{fixed}");
}

/// A fix whose edits would leave the file unreadable is not applied, whatever the rule says.
#[test]
fn plan_skips_a_fix_that_breaks_the_syntax() {
    let mut workspace = Workspace::new();
    let text = "---\n{id: a}\n---\n".to_string();
    let path = std::path::PathBuf::from("/w/a.md");
    let file = workspace.add(path, "a.md".into(), text, FileKind::Stage, Arc::new(Config::defaults(Path::new("/w"))));
    let fix = |at: usize, replacement: &str| {
        let edits = vec![Edit { span: Span::empty(at), replacement: replacement.into() }];
        Diagnostic::new("sm/MissingRequiredField", file, Span::new(0, 3), "x").with_fix("t", Applicability::Safe, edits)
    };
    let plan = stagelint::fix::plan(&workspace, &[fix(12, "name: A\n")], false);
    assert_eq!(plan.fixes, 0, "a block line after a flow mapping does not parse");
    let plan = stagelint::fix::plan(&workspace, &[fix(10, ", name: A")], false);
    assert_eq!(plan.fixes, 1);
}

/// Two renames that each parse alone but write the same key twice together: the second waits
/// for the next round, where the rule sees the key set already.
#[test]
fn plan_skips_a_fix_that_duplicates_a_key_another_fix_writes() {
    let mut workspace = Workspace::new();
    let text = "---\nturncap: 1\nturn_cap: 2\n---\n".to_string();
    let path = std::path::PathBuf::from("/w/a.md");
    let file = workspace.add(path, "a.md".into(), text, FileKind::Stage, Arc::new(Config::defaults(Path::new("/w"))));
    let rename = |start: usize, end: usize| {
        let edits = vec![Edit { span: Span::new(start, end), replacement: "turnCap".into() }];
        Diagnostic::new("sm/UnknownField", file, Span::new(start, end), "x").with_fix("t", Applicability::Safe, edits)
    };
    let plan = stagelint::fix::plan(&workspace, &[rename(4, 11), rename(15, 23)], false);
    assert_eq!(plan.fixes, 1, "the second rename would write `turnCap` twice");
}

/// Two misspellings of one key in a mapping: only the first is renamed; the second is told the
/// key is set already, in every family that suggests key renames.
#[test]
fn fix_renames_only_the_first_misspelling_of_a_key() {
    let stage = "---\nid: a\nname: A\nallowedTools: [Read]\ncompletionTool: submit_a\ncompletionSchema:\n  type: object\n  Required: [x]\n  REQUIRED: [x]\n  properties:\n    x: { type: string }\nretry_policy: { maxAttempts: 1, backoff: none }\nRetryPolicy: { maxAttempts: 2, backoff: none }\nturncap: 10\nturn_cap: 12\nresolutionPolicy: skip\n---\nCall submit_a with x.\n";
    let dir = common::temp_files(&[("a.md", stage)]);
    let output = stagelint(&["check", "--fix", "--format", "concise", "a.md"], dir.path());
    let fixed = read(dir.path(), "a.md");
    assert_eq!(
        fixed,
        stage
            .replace("Required:", "required:")
            .replace("retry_policy:", "retryPolicy:")
            .replace("turncap:", "turnCap:")
    );
    let out = stdout(&output);
    assert!(!out.contains("duplicate key"), "{out}");
    assert!(out.contains("field `turn_cap`; `turnCap` is set already"), "{out}");
    assert!(out.contains("field `RetryPolicy`; `retryPolicy` is set already"), "{out}");
    assert!(out.contains("`REQUIRED` in `completionSchema` is not a JSON Schema keyword; did you mean `required`? (this schema has `required` already)"), "{out}");
}

/// The `sm/FieldType` fix edits the value only: the comment after a quoted value stays, and a
/// suppression on the edited line is not removed in the round that brings its finding back.
#[test]
fn field_type_fix_keeps_the_comment_and_its_suppression() {
    let stage = |tools: &str| {
        format!(
            "---\nid: a\nname: A\nallowedTools: {tools}  # stagelint: ignore[sm/UnknownTool]\ncompletionTool: submit_a\ncompletionSchema: {{ type: object }}\nretryPolicy: {{ maxAttempts: \"3\", backoff: none }}  # three\nturnCap: \"15\"  # bumped\nresolutionPolicy: skip\n---\nCall submit_a.\n"
        )
    };
    let dir = common::temp_files(&[
        ("a.md", &stage("\"Read, mcp__x__y\"")),
        ("b.md", &stage("Read, mcp__x__y").replace("id: a", "id: b")),
    ]);
    let output = stagelint(&["check", "--fix", "--format", "concise", "a.md", "b.md"], dir.path());
    assert_eq!(stdout(&output), "No findings (2 files checked).\n", "{}", stderr(&output));
    let fixed = stage("[Read, mcp__x__y]").replace("\"3\"", "3").replace("\"15\"", "15");
    assert_eq!(read(dir.path(), "a.md"), fixed);
    assert_eq!(read(dir.path(), "b.md"), fixed.replace("id: a", "id: b"));
}

#[test]
fn init_writes_a_commented_config_that_loads() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "stages/plan.md", PLAN);
    write(dir.path(), "stages/plan.cassette.yaml", "cassette: 1\nstage: plan\nturns: []\n");
    let output = stagelint(&["init"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "wrote stagelint.toml (families found: cassette, sm)\n");
    let path = dir.path().join("stagelint.toml");
    let config = Config::load(&path).expect("the written config loads");
    assert!(config.tools.contains("Read"));
    let text = read(dir.path(), "stagelint.toml");
    assert!(text.contains("\n[sm]\n") && text.contains("\n[dry-run]\n") && text.contains("\n# [lastlight]\n"));
    let check = stagelint(&["check"], dir.path());
    assert!(!stdout(&check).contains("stagelint/InvalidConfig"), "{}", stdout(&check));
    // The commented examples load once uncommented.
    let uncommented =
        text.replace("# extend-exclude = ", "extend-exclude = ").replace("# force-exclude = ", "force-exclude = ");
    assert_ne!(uncommented, text);
    let config = Config::parse(&uncommented, &path).expect("the examples load");
    assert!(config.force_exclude);
    assert_eq!(config.extend_exclude.patterns(), ["tests/fixtures", "*.draft.md"]);

    let again = stagelint(&["init"], dir.path());
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("exists; pass --force to overwrite it"), "{}", stderr(&again));
    write(dir.path(), "stagelint.toml", "# mine\n");
    let forced = stagelint(&["init", "--force"], dir.path());
    assert_eq!(forced.status.code(), Some(0));
    assert!(read(dir.path(), "stagelint.toml").contains("[tools]"));
}

/// Issue 16: `init` leaves the default tool set a comment, and offers the tools the stages
/// allow beyond it for `extra`, commented; uncommented, the check no longer reports them.
#[test]
fn init_offers_the_stages_unknown_tools_for_extra() {
    let dir = tempfile::tempdir().unwrap();
    let stage = PLAN.replace("[Read, Grpe]", "[Read, mcp__jira__search, Grpe, jira-comment]");
    assert_ne!(stage, PLAN);
    write(dir.path(), "stages/plan.md", &stage);
    let output = stagelint(&["init"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = read(dir.path(), "stagelint.toml");
    assert!(text.contains("\n# registered = [\n"), "{text}");
    assert!(text.contains("\n# extra = [\"mcp__jira__search\", \"jira-comment\"]\n"), "{text}");
    assert!(text.contains("`Grpe` (`Grep`?)"), "{text}");
    let concise = |dir: &std::path::Path| stdout(&stagelint(&["check", "--format", "concise"], dir));
    assert!(concise(dir.path()).contains("`jira-comment` is not in the live tool set"));
    write(dir.path(), "stagelint.toml", &text.replace("\n# extra = ", "\nextra = "));
    let after = concise(dir.path());
    assert!(!after.contains("jira") && after.contains("`Grpe` is not in the live tool set"), "{after}");
}

#[test]
fn init_does_not_shadow_a_dot_config_and_notes_a_parent_one() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".stagelint.toml", "[tools]\nextra = [\"mine\"]\n");
    let refused = stagelint(&["init"], dir.path());
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains(".stagelint.toml exists; pass --force"), "{}", stderr(&refused));
    assert!(!dir.path().join("stagelint.toml").exists(), "nothing written beside it");
    let forced = stagelint(&["init", "--force"], dir.path());
    assert_eq!(forced.status.code(), Some(0));
    assert_eq!(stdout(&forced), "wrote .stagelint.toml (families found: none)\n");
    assert!(!dir.path().join("stagelint.toml").exists(), "the existing file is overwritten under its name");

    write(dir.path(), "sub/plan.md", PLAN);
    let nested = stagelint(&["init"], &dir.path().join("sub"));
    assert_eq!(nested.status.code(), Some(0));
    assert!(stderr(&nested).contains(".stagelint.toml governed this directory until now"), "{}", stderr(&nested));
}

/// Issue 32: what `init` writes points at references a user has, not at this repository's
/// files: every `stagelint explain TOPIC` it names is a topic `explain` prints.
#[test]
fn init_names_explain_topics_that_exist() {
    let all = stagelint::init::Found {
        families: BTreeSet::from(["sm", "steps", "lastlight", "atomic", "cassette"]),
        ..Default::default()
    };
    let text = stagelint::init::render(&all);
    assert!(!text.contains("docs/"), "a path the user's project does not have:\n{text}");
    let topics: Vec<&str> = text
        .split("`stagelint explain ")
        .skip(1)
        .filter_map(|rest| rest.split('`').next())
        .filter(|topic| *topic != "CODE")
        .collect();
    assert!(topics.contains(&"configuration"), "{text}");
    for topic in topics {
        let output = stagelint(&["explain", topic], common::repo());
        assert_eq!(output.status.code(), Some(0), "`stagelint explain {topic}`: {}", stderr(&output));
    }
}

#[test]
fn init_text_for_stage_definitions() {
    let found = stagelint::init::Found { families: BTreeSet::from(["sm"]), ..Default::default() };
    let text = stagelint::init::render(&found);
    insta::assert_snapshot!("init_sm", text.replace(env!("CARGO_PKG_VERSION"), "[version]"));
}

/// A stage id kebab-cased by `--fix --unsafe-fixes` is renamed in every file that uses it, as
/// the editor's rename does; JSON and SARIF name each edit's file.
#[test]
fn the_kebab_case_fix_renames_across_files() {
    let stage = |id: &str, next: &str| {
        format!(
            "---\nid: {id}\nname: S\nallowedTools: [Read]\ncompletionTool: submit\ncompletionSchema: {{ type: object }}\nretryPolicy: {{ maxAttempts: 1, backoff: none }}\nturnCap: 5\nresolutionPolicy: retry-later\n{next}---\n\nCall submit.\n"
        )
    };
    let dir = common::temp_files(&[
        ("sm.yaml", "entry: plan\n"),
        ("plan.md", &stage("plan", "next:\n  nextStages: [Execute_Step]\n")),
        ("execute.md", &stage("Execute_Step", "")),
    ]);
    let json = stagelint(&["check", "--format", "json"], dir.path());
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let finding = json["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "sm/InvalidStageId").unwrap();
    let paths: BTreeSet<&str> =
        finding["fix"]["edits"].as_array().unwrap().iter().filter_map(|e| e["path"].as_str()).collect();
    assert_eq!(paths, BTreeSet::from(["execute.md", "plan.md"]), "{finding}");
    let sarif = stagelint(&["check", "--format", "sarif"], dir.path());
    let sarif: serde_json::Value = serde_json::from_slice(&sarif.stdout).expect("SARIF");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let result = results.iter().find(|r| r["ruleId"] == "sm/InvalidStageId").unwrap();
    assert_eq!(result["fixes"][0]["artifactChanges"].as_array().map(Vec::len), Some(2), "{result}");

    let output = stagelint(&["check", "--fix", "--unsafe-fixes", "--format", "concise"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert_eq!(read(dir.path(), "execute.md"), stage("execute-step", ""));
    assert_eq!(read(dir.path(), "plan.md"), stage("plan", "next:\n  nextStages: [execute-step]\n"));
}

/// docs/dry-run.md, "Request fingerprints": `request:` written with placeholder digests is filled
/// in by the unsafe RequestDrift fix, and only with `--unsafe-fixes`.
#[test]
fn the_request_drift_fix_fills_in_fingerprints_written_by_hand() {
    let stage = "---\nid: plan\nname: Plan\nallowedTools: [Read]\ncompletionTool: submit_plan\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\n---\nPlan {{ctx.task}}. Call `submit_plan`.\n";
    let cassette = "cassette: 1\nstage: plan\nctx: { task: t }\nattempts:\n  - turns:\n      - response: { stop: tool_use, content: [ { toolCall: { id: c1, name: submit_plan, args: {} } } ] }\n        request: { system: x, tools: x, messages: x, count: 0 }\n";
    let dir = common::temp_files(&[("plan.md", stage), ("plan.cassette.yaml", cassette)]);
    let select = ["check", "--fix", "--select", "cassette/RequestDrift", "--format", "concise"];
    stagelint(&select, dir.path());
    assert_eq!(read(dir.path(), "plan.cassette.yaml"), cassette, "accepting a digest is an unsafe fix");
    let unsafe_fix = ["check", "--fix", "--unsafe-fixes", "--select", "cassette/RequestDrift", "--format", "concise"];
    let output = stagelint(&unsafe_fix, dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let fixed = read(dir.path(), "plan.cassette.yaml");
    assert!(!fixed.contains(": x") && fixed.contains("count: 1"), "{fixed}");
    let strict = stagelint(&["dry-run", "plan.md", "--strict", "--format", "json"], dir.path());
    assert_eq!(strict.status.code(), Some(0), "{}", stdout(&strict));
}

/// The same for a climpt flow cassette: placeholder `request:` fingerprints of each iteration
/// (prompt, system prompt, output schema) are filled in, after which `--strict` replays green
/// and an edited prompt fails it.
#[test]
fn the_request_drift_fix_fills_in_a_flow_cassettes_fingerprints() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo().join("examples/climpt"), dir.path());
    let path = ".agent/fixer/agent.cassette.yaml";
    let recorded = read(dir.path(), path)
        .replace("    expect: {", "    request: { prompt: x, system: x, schema: x }\n    expect: {");
    assert_eq!(recorded.matches("request:").count(), 3);
    std::fs::write(dir.path().join(path), &recorded).unwrap();
    let strict = ["dry-run", ".agent/fixer", "--strict", "--format", "json"];
    assert_eq!(stagelint(&strict, dir.path()).status.code(), Some(1), "placeholders drift");
    let unsafe_fix = ["check", "--fix", "--unsafe-fixes", "--select", "cassette/RequestDrift", "--format", "concise"];
    let output = stagelint(&unsafe_fix, dir.path());
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let fixed = read(dir.path(), path);
    assert!(!fixed.contains(": x") && fixed.matches("sha256:").count() == 9, "{fixed}");
    let output = stagelint(&strict, dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let prompt = dir.path().join(".agent/fixer/prompts/steps/initial/issue/f_default.md");
    std::fs::write(&prompt, std::fs::read_to_string(&prompt).unwrap() + "\nBe brief.\n").unwrap();
    let output = stagelint(&strict, dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert_eq!(stdout(&output).matches("cassette/RequestDrift").count(), 1, "{}", stdout(&output));
}

/// `next: review` becomes the mapping under `--fix`; a bare list of several ids could be a
/// sequence or a fan-out, so writing the sequence needs `--unsafe-fixes`.
#[test]
fn a_bare_next_becomes_a_next_result_mapping() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo().join("tests/fixtures/sm/FieldType/bad-next-bare-id-and-fanout"), dir.path());
    let output = stagelint(&["check", "--fix", "--select", "sm/FieldType", "--format", "concise"], dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(read(dir.path(), "build-a.md").contains("\nnext: { nextStages: [review], execution: sequential }\n"));
    assert!(read(dir.path(), "plan.md").contains("next:\n  - build-a\n  - build-b\n"), "the fan-out waits");
    assert!(stdout(&output).contains("plan.md:11:3"), "{}", stdout(&output));

    let output = stagelint(&["check", "--fix", "--unsafe-fixes", "--format", "concise"], dir.path());
    let plan = read(dir.path(), "plan.md");
    assert!(plan.contains("next:\n  { nextStages: [build-a, build-b], execution: sequential }\n"), "{plan}");
    let remaining = stdout(&output);
    assert!(!remaining.contains("sm/FieldType"), "{remaining}");
}

/// A misspelt required key (`turncap`, `retry_policy`, `backof`) is one defect: renaming it
/// keeps the author's value, where adding the missing key as well would write a duplicate key
/// or replace `maxAttempts: 2` with the default.
#[test]
fn a_misspelt_required_key_is_renamed_keeping_its_value() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo().join("tests/fixtures/sm/MissingRequiredField/bad-misspelt-key"), dir.path());
    copy_dir(&repo().join("tests/fixtures/sm/InvalidRetryPolicy/bad-misspelt-key"), dir.path());
    let output = stagelint(&["check", "--fix", "--unsafe-fixes", "--format", "concise"], dir.path());
    let plan = read(dir.path(), "plan.md");
    assert!(plan.contains("\nretryPolicy:\n  maxAttempts: 2\n  backoff: none\nturnCap: 8\n"), "{plan}");
    assert_eq!(plan.matches("turnCap").count(), 1, "{plan}");
    assert_eq!(plan.matches("retryPolicy").count(), 1, "{plan}");
    let review = read(dir.path(), "review.md");
    assert!(review.contains("\nretryPolicy: { maxAttempts: 2, backoff: none }\n"), "{review}");
    let remaining = stdout(&output);
    assert!(!remaining.contains("sm/FrontmatterSyntax"), "{remaining}");
    assert!(!remaining.contains("sm/MissingRequiredField"), "{remaining}");
    assert!(!remaining.contains("sm/InvalidRetryPolicy"), "{remaining}");
}

/// A did-you-mean that differs only in case or separators is the same word: `--fix` applies it
/// without `--unsafe-fixes`; a real guess (`concurrent`, `highlights` → `highlight`) waits.
#[test]
fn respellings_are_safe_fixes() {
    let dir = tempfile::tempdir().unwrap();
    let (keys, plan_dir) = (dir.path().join("keys"), dir.path().join("machine"));
    std::fs::create_dir_all(&keys).unwrap();
    std::fs::create_dir_all(&plan_dir).unwrap();
    copy_dir(&repo().join("tests/fixtures/sm/MissingRequiredField/bad-misspelt-key"), &keys);
    copy_dir(&repo().join("tests/fixtures/sm/FieldType/bad-execution-misspelt"), &plan_dir);
    let output = stagelint(&["check", "--fix", "--format", "concise"], dir.path());
    let plan = read(&keys, "plan.md");
    assert!(plan.contains("\nretryPolicy:\n  maxAttempts: 2\n") && plan.contains("\nturnCap: 8\n"), "{plan}");
    assert!(plan.contains("required: [summary, highlights]"), "a guess is not applied: {plan}");
    assert!(read(&plan_dir, "plan.md").contains("\n  execution: parallel\n"));
    assert!(read(&plan_dir, "other.md").contains("execution: concurrent"));
    let remaining = stdout(&output);
    assert!(remaining.contains("sm/SchemaRequiredUnknown") && remaining.contains("sm/FieldType"), "{remaining}");
}

/// Bug 8 of issue 16: removing an unused suppression on line 1 of a file with a byte order
/// mark keeps the mark first in the file.
#[test]
fn removing_a_first_line_suppression_keeps_the_byte_order_mark() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "sm.yaml", "\u{feff}# stagelint: ignore[sm/UnknownTool]\nentry: plan\n");
    write(
        dir.path(),
        "plan.md",
        &PLAN.replace("[Read, Grpe]", "[Read]").replace("${ctx.task}, on ${ctx.branch}", "{{ctx.task}}"),
    );
    let output = stagelint(&["check", "--fix", "--select", "stagelint/UnusedSuppression"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(read(dir.path(), "sm.yaml"), "\u{feff}entry: plan\n");
}

/// Issue 16, bug 3: removing an unused code from a list that keeps another leaves no empty
/// entry (`ignore[, b]`, `ignore[a, ]`), wherever the unused codes sit.
#[test]
fn removing_unused_codes_leaves_no_empty_entry() {
    let stage = |comment: &str| {
        REVIEW.replace("allowedTools: [Read]", &format!("allowedTools: [Read, Grpe] # stagelint: ignore[{comment}]"))
    };
    for (written, left) in [
        ("sm/StageTurnCapTooLow, sm/UnknownTool", "sm/UnknownTool"),
        ("sm/UnknownTool, sm/StageTurnCapTooLow", "sm/UnknownTool"),
        ("sm/StageTurnCapTooLow, sm/UnknownTool, sm/FieldType", "sm/UnknownTool"),
        ("sm/FieldType, sm/StageTurnCapTooLow, sm/UnknownTool", "sm/UnknownTool"),
        ("sm/FieldType, sm/UnknownTool, sm/StageTurnCapTooLow", "sm/UnknownTool"),
    ] {
        let dir = common::temp_files(&[(
            "review.md",
            &stage(written).replace(" # stagelint: ignore[sm/UnknownTool, sm/UnknownField]", ""),
        )]);
        let output = stagelint(&["check", "--fix", "--format", "concise"], dir.path());
        assert_eq!(output.status.code(), Some(0), "{written}: {}", stdout(&output));
        let after = read(dir.path(), "review.md");
        assert!(after.contains(&format!("# stagelint: ignore[{left}]\n")), "{written}:\n{after}");
    }
}

/// Issue 16: the did-you-means that differ only in case or separators are safe, so `--fix`
/// applies them without `--unsafe-fixes`; a real guess (`Grpe`) waits for that flag.
#[test]
fn case_and_separator_only_did_you_means_are_safe_fixes() {
    let stage = REVIEW
        .replace("allowedTools: [Read]", "allowedTools: [Webfetch, Grpe]")
        .replace("turnCap: 5", "turncap: 5")
        .replace(
            "resolutionPolicy: retry-later # stagelint: ignore[sm/UnknownTool, sm/UnknownField]",
            "resolutionPolicy: retry_later",
        );
    let dir = common::temp_files(&[("review.md", &stage)]);
    let output = stagelint(&["check", "--fix", "--format", "concise"], dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let after = read(dir.path(), "review.md");
    assert!(after.contains("allowedTools: [WebFetch, Grpe]\n"), "{after}");
    assert!(after.contains("\nturnCap: 5\n"), "{after}");
    assert!(after.contains("resolutionPolicy: retry-later\n"), "{after}");
    assert!(stdout(&output).contains("did you mean `Grep`?"), "{}", stdout(&output));
}

/// An atomic workflow: the exported chain lacks `.compile()` (a safe fix) and a stage option
/// is misspelt (an unsafe did-you-mean fix).
const ATOMIC: &str = "import { defineWorkflow } from \"@bastani/atomic/workflows\";\n\nexport default defineWorkflow({ name: \"hello\" })\n  .for<\"claude\">()\n  .run(async (ctx) => {\n    await ctx.stage({ name: \"greet\", headles: true }, {}, {}, async (s) => {\n      s.save(s.sessionId);\n    });\n  });\n";

#[test]
fn atomic_fixes_append_compile_and_rename_a_misspelt_option() {
    let path = ".atomic/workflows/hello/claude/index.ts";
    let dir = common::temp_files(&[(path, ATOMIC)]);
    let output = stagelint(&["check", "--fix", "--format", "concise"], dir.path());
    assert_eq!(stderr(&output).lines().next(), Some("stagelint: applied 1 fix(es) to 1 file(s)"));
    let compiled = format!("{}.compile();\n", ATOMIC.strip_suffix(";\n").unwrap());
    assert_eq!(read(dir.path(), path), compiled);
    let output = stagelint(&["check", "--fix", "--unsafe-fixes", "--format", "concise"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let fixed = compiled.replace("headles:", "headless:");
    assert_eq!(read(dir.path(), path), fixed);
}

/// A stage dropped as a statement and one bound to a name nobody awaits get `await` (unsafe
/// fixes), and a misspelt stage reference its stage's name.
const ATOMIC_STAGES: &str = r#"import { defineWorkflow } from "@bastani/atomic/workflows";

export default defineWorkflow({ name: "hello" })
  .for<"claude">()
  .run(async (ctx) => {
    ctx.stage({ name: "greet" }, {}, {}, async (s) => {
      s.save(s.sessionId);
    });
    const extra = ctx.stage({ name: "extra" }, {}, {}, async (s) => s.save(s.sessionId));
    await ctx.stage({ name: "reply" }, {}, {}, async (s) => {
      const greeting = await s.transcript("greeet");
      await s.session.query(greeting.content);
      s.save(s.sessionId);
    });
  })
  .compile();
"#;

#[test]
fn atomic_stage_fixes_insert_await_and_correct_a_stage_reference() {
    let path = ".atomic/workflows/hello/claude/index.ts";
    let dir = common::temp_files(&[(path, ATOMIC_STAGES)]);
    let output = stagelint(&["check", "--fix", "--format", "concise"], dir.path());
    assert_eq!(read(dir.path(), path), ATOMIC_STAGES, "no safe fix: {}", stdout(&output));
    let output = stagelint(&["check", "--fix", "--unsafe-fixes", "--format", "concise"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let fixed = ATOMIC_STAGES
        .replace("    ctx.stage({ name: \"greet\" }", "    await ctx.stage({ name: \"greet\" }")
        .replace("const extra = ctx.stage", "const extra = await ctx.stage")
        .replace("\"greeet\"", "\"greet\"");
    assert_eq!(read(dir.path(), path), fixed);
}

/// A `/* … */` suppression that code follows on its line covers that line: the used one stays,
/// and removing the unused one takes the blank after it too.
const ATOMIC_LEADING_BLOCK: &str = r#"import { defineWorkflow } from "@bastani/atomic/workflows";

export default defineWorkflow({ name: "hello" })
  .for<"copilot">()
  .run(async (ctx) => {
    await ctx.stage({ name: "only" }, {}, {}, async (s) => {
      /* stagelint: ignore[atomic/CopilotSendAndWait] */ await s.session.sendAndWait({ prompt: "x" });
      /* stagelint: ignore[atomic/UnknownStageRef] */ s.save(await s.session.getMessages());
    });
  })
  .compile();
"#;

#[test]
fn a_leading_block_suppression_covers_its_own_line() {
    let path = ".atomic/workflows/hello/copilot/index.ts";
    let dir = common::temp_files(&[(path, ATOMIC_LEADING_BLOCK)]);
    let output = stagelint(&["check", "--format", "concise"], dir.path());
    let out = stdout(&output);
    assert!(!out.contains("CopilotSendAndWait"), "{out}");
    assert!(out.contains("index.ts:8:28: warning[stagelint/UnusedSuppression]"), "{out}");
    stagelint(&["check", "--fix", "--format", "concise"], dir.path());
    let fixed = ATOMIC_LEADING_BLOCK.replace("/* stagelint: ignore[atomic/UnknownStageRef] */ ", "");
    assert_eq!(read(dir.path(), path), fixed);
}

/// Issue 32: the closing line counts fixes, not findings with a fix. A prompt shared by two
/// workflows is reported for each, with the same fix, which `--fix` applies once: on a copy of
/// `examples/` the summary said 6 and `--fix` applied 5.
#[test]
fn the_fix_count_is_what_fix_applies() {
    let shared = common::temp_files(&[
        ("workflows/a.yaml", "name: a\nphases:\n  - name: plan\n    prompt: prompts/plan.md\n"),
        ("workflows/b.yaml", "name: b\nphases:\n  - name: plan\n    prompt: prompts/plan.md\n"),
        ("workflows/prompts/plan.md", "Plan {{issue_title}}.\n"),
    ]);
    let examples = tempfile::tempdir().unwrap();
    copy_dir(&common::repo().join("examples"), examples.path());
    for dir in [shared.path(), examples.path()] {
        let json = stagelint(&["check", "--format", "json"], dir);
        let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        let fixable = json["summary"]["fixable"].as_u64().unwrap();
        let concise = stdout(&stagelint(&["check", "--format", "concise"], dir));
        assert!(concise.contains(&format!(" {fixable} fixable with `--fix`")), "{concise}");
        let listed = stdout(&stagelint(&["check", "--show-fixes", "--format", "concise"], dir));
        let unsafe_fixable = json["summary"]["unsafe_fixable"].as_u64().unwrap();
        assert!(listed.contains(&format!("Fixes available ({}):", fixable + unsafe_fixable)), "{listed}");
        let fixed = stagelint(&["check", "--fix"], dir);
        assert!(stderr(&fixed).contains(&format!("applied {fixable} fix(es)")), "{fixable}: {}", stderr(&fixed));
    }
    let fixed = std::fs::read_to_string(shared.path().join("workflows/prompts/plan.md")).unwrap();
    assert_eq!(fixed, "Plan {{issueTitle}}.\n");
}
