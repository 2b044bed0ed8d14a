//! Whether atomic ever runs the workflow (`runtime/discovery.ts` `discoverFromBaseDir` and the
//! builtin reservation), and the loader's `minSDKVersion` gate (`runtime/loader.ts`).

use std::path::Path;

use ignore::gitignore::GitignoreBuilder;

use crate::config::SdkVersion;
use crate::diagnostic::Diagnostic;
use crate::families::atomic::model::{Value, WorkflowFile};
use crate::families::atomic::project::{Ignore, Project};
use crate::families::atomic::{IncompatibleSdk, NotDiscovered, ReservedName};
use crate::source::Span;
use crate::util::did_you_mean;
use crate::workspace::{SourceFile, atomic};

/// The `.gitignore` upstream writes into a base that has none (`WORKFLOWS_GITIGNORE`).
const DEFAULT_GITIGNORE: &str = "node_modules/\ndist/\nbuild/\ncoverage/\n.cache/\n*.log\n*.tsbuildinfo\n";

/// Builtin workflow names and the first SDK version shipping each: reserved across agents.
static BUILTINS: [(&str, SdkVersion); 3] = [
    ("ralph", SdkVersion::plain(0, 0, 0)),
    ("deep-research-codebase", SdkVersion::plain(0, 0, 0)),
    ("open-claude-design", SdkVersion::plain(0, 5, 26)),
];

pub(super) fn check(file: &SourceFile, parsed: &WorkflowFile, project: &Project, out: &mut Vec<Diagnostic>) {
    // Where discovery's findings go: the `export default` keywords (or the `default` of
    // `export { wf as default }`).
    let at = match &parsed.export {
        Some(export) if file.text.get(export.span.start..).is_some_and(|t| t.starts_with("export default")) => {
            Span::new(export.span.start, export.span.start + "export default".len())
        }
        Some(export) => export.span,
        None => parsed.chain.as_ref().map_or(Span::empty(0), |c| c.define),
    };
    let discovered = match why_not_discovered(file, project) {
        Some((message, help, related)) => {
            let mut d = Diagnostic::new(NotDiscovered, file.id, at, message).with_help(help);
            if let Some((id, span, what)) = related {
                d = d.with_related(id, span, what);
            }
            out.push(d);
            false
        }
        None => true,
    };
    if discovered {
        reserved(file, project, at, out);
    }
    incompatible(file, parsed, project.sdk(file).as_ref(), out);
}

type Related = Option<(crate::diagnostic::FileId, Span, String)>;

/// Why `discoverFromBaseDir` never returns this file: (message, help, related location).
fn why_not_discovered(file: &SourceFile, project: &Project) -> Option<(String, String, Related)> {
    let expected = "atomic discovers workflows only at `.atomic/workflows/<name>/<agent>/index.ts`";
    let Some((base, builtin)) = atomic::base(&file.path) else {
        return Some((
            format!("this file exports an atomic workflow, but {expected}; it never runs"),
            "move it to `.atomic/workflows/<name>/<agent>/index.ts` (agent `claude`, `copilot` or `opencode`)".into(),
            None,
        ));
    };
    let parts: Vec<&str> = file.path.strip_prefix(base).ok()?.iter().filter_map(|p| p.to_str()).collect();
    let shown = base.file_name().and_then(|n| n.to_str()).unwrap_or("workflows");
    match parts.as_slice() {
        [name, agent, "index.ts"] if atomic::AGENTS.contains(agent) => {
            if name.starts_with('.') {
                return Some((
                    format!(
                        "the workflow directory `{name}` starts with `.`; atomic skips such directories, so it never runs"
                    ),
                    format!("rename the directory (e.g. `{}`)", name.trim_start_matches('.')),
                    None,
                ));
            }
            if atomic::AGENTS.contains(name) {
                return Some((
                    format!(
                        "a workflow directory named `{name}` is taken for an agent directory; atomic skips it, so it never runs"
                    ),
                    "give the workflow its own name: `.atomic/workflows/<name>/<agent>/index.ts`".into(),
                    None,
                ));
            }
            if builtin {
                return None;
            }
            ignored(project, base, name)
        }
        [_, agent, "index.ts"] => {
            let guess =
                did_you_mean(agent, atomic::AGENTS).map(|a| format!(" (did you mean `{a}`?)")).unwrap_or_default();
            Some((
                format!(
                    "`{agent}/` is not an agent directory{guess}; atomic looks only in `claude/`, `copilot/` and `opencode/`, so this workflow never runs"
                ),
                "move the file into the directory of the agent it is written for".into(),
                None,
            ))
        }
        [_, agent, other] if atomic::AGENTS.contains(agent) => Some((
            format!("atomic loads only `index.ts` from an agent directory, not `{other}`; this workflow never runs"),
            "rename the file to `index.ts`".into(),
            None,
        )),
        _ => Some((
            format!(
                "this file exports an atomic workflow, but {expected} (here: `{shown}/<name>/<agent>/index.ts`); it never runs"
            ),
            "move it to `<name>/<agent>/index.ts` under the workflows directory".into(),
            None,
        )),
    }
}

/// A workflow directory the base's `.gitignore` (or, when there is none, the one upstream
/// writes) matches: `ig.ignores(name + "/")`.
fn ignored(project: &Project, base: &Path, name: &str) -> Option<(String, String, Related)> {
    let (text, source) = match project.ignore(base) {
        Ignore::File(ignore) => (ignore.text.as_str(), Some(ignore)),
        Ignore::Missing => (DEFAULT_GITIGNORE, None),
        Ignore::Unknown => return None,
    };
    let mut builder = GitignoreBuilder::new(base);
    for line in text.lines() {
        // A line the matcher cannot read is one upstream's would not match either.
        let _ = builder.add_line(None, line);
    }
    let matcher = builder.build().ok()?;
    let glob = match matcher.matched(base.join(name), true) {
        ignore::Match::Ignore(glob) => glob.original().to_string(),
        _ => return None,
    };
    Some(match source {
        Some(ignore) => {
            let line = line_span(&ignore.text, &glob);
            (
                format!("the workflow directory `{name}/` matches `{glob}` in the workflows directory's `.gitignore`; atomic skips it, so this workflow never runs"),
                format!("rename the workflow directory, or remove `{glob}` from `.gitignore`"),
                line.map(|span| (ignore.id, span, format!("`{glob}` ignores `{name}/`"))),
            )
        }
        None => (
            format!("the workflows directory has no `.gitignore`, so atomic writes its default one, whose `{glob}` matches the workflow directory `{name}/`; atomic skips it, so this workflow never runs"),
            "rename the workflow directory (atomic's `.gitignore` lists node_modules/, dist/, build/, coverage/, .cache/, *.log and *.tsbuildinfo)".into(),
            None,
        ),
    })
}

/// The line of `text` holding the pattern `glob`.
fn line_span(text: &str, glob: &str) -> Option<Span> {
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        if content.trim_end() == glob {
            return Some(Span::new(start, start + content.len()));
        }
        start += line.len();
    }
    None
}

/// A local workflow named like a builtin (or `[atomic] reserved-names`) is dropped.
fn reserved(file: &SourceFile, project: &Project, at: Span, out: &mut Vec<Diagnostic>) {
    let Some((name, _)) = atomic::layout(&file.path) else { return };
    if atomic::base(&file.path).is_none_or(|(_, builtin)| builtin) {
        return;
    }
    let builtin = BUILTINS.iter().find(|(n, since)| *n == name && project.may_reach(file, since));
    let configured = file.config.atomic.reserved_names.iter().any(|n| n == name);
    let dropped = format!("atomic drops this local workflow, for every agent, and runs the builtin `{name}` instead");
    let mut related = None;
    let message = match builtin {
        Some((_, since)) if since.major + since.minor + since.patch > 0 => {
            // Say why the version gate applies.
            let why = match project.sdk(file) {
                Some(sdk) => match sdk.at {
                    Some(at) => {
                        related = Some(at);
                        format!("the `package.json` range `{}` allows {since} or newer", sdk.range.text)
                    }
                    None => format!("`[atomic] sdk-version` is {}", sdk.range.text),
                },
                None => "no @bastani/atomic version is known here (no `[atomic] sdk-version`, no `package.json` dependency): a new install gets the newest".to_string(),
            };
            format!(
                "the workflow name `{name}` is reserved by atomic's builtin `{name}` from {since}, and {why}; {dropped}"
            )
        }
        Some(_) => format!("the workflow name `{name}` is reserved by atomic's builtin `{name}`; {dropped}"),
        None if configured => format!(
            "the workflow name `{name}` is reserved by your config (`[atomic] reserved-names`): this project keeps it for another workflow (a fork's builtin, say), so no local workflow should take it"
        ),
        None => return,
    };
    let mut d =
        Diagnostic::new(ReservedName, file.id, at, message).with_help("rename the workflow directory (and its `name`)");
    if let Some((id, span)) = related {
        d = d.with_related(id, span, "the @bastani/atomic version");
    }
    out.push(d);
}

/// A `minSDKVersion` newer than every SDK version the project may run (`sdk`): the loader
/// refuses it.
pub(super) fn incompatible(
    file: &SourceFile,
    parsed: &WorkflowFile,
    sdk: Option<&crate::families::atomic::project::Sdk>,
    out: &mut Vec<Diagnostic>,
) {
    let Some(prop) = parsed.chain.as_ref().and_then(|c| c.options.as_ref()).and_then(|o| o.get("minSDKVersion")) else {
        return;
    };
    let Value::Str(text, span) = &prop.value else { return };
    let Some(required) = SdkVersion::parse(text) else { return };
    let Some(sdk) = sdk else { return };
    if !sdk.range.all_older_than(&required) {
        return;
    }
    let from = match sdk.at {
        Some(_) => format!("`{}` in package.json", sdk.range.text),
        None => format!("{} in `[atomic] sdk-version`", sdk.range.text),
    };
    let mut d = Diagnostic::new(
        IncompatibleSdk,
        file.id,
        *span,
        format!("`minSDKVersion` {required} is newer than the atomic SDK this project runs ({from}); the loader refuses the workflow (IncompatibleSDKError)"),
    )
    .with_help(format!("upgrade @bastani/atomic to {required} or later, or lower `minSDKVersion`"));
    if let Some((id, at)) = sdk.at {
        d = d.with_related(id, at, "the @bastani/atomic version");
    }
    out.push(d);
}

/// A v0.5–0.7 file (`defineWorkflow({...})…compile()`) whose project pins only 0.8 or later,
/// where `@bastani/atomic/workflows` serves `@bastani/workflows`: 0.8's `defineWorkflow` takes
/// the workflow's name, 0.9 has none (PR #1457), so the file fails to load. One finding; the
/// v0.5–0.7 rules would judge an API the project does not run. `true` when reported.
pub(super) fn superseded(
    file: &SourceFile,
    parsed: &WorkflowFile,
    sdk: Option<&crate::families::atomic::project::Sdk>,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let Some(sdk) = sdk.filter(|sdk| sdk.range.all_at_least(&crate::families::atomic::dialect::BUILDER_LINE)) else {
        return false;
    };
    let Some(chain) = &parsed.chain else { return false };
    let api = &crate::families::atomic::dialect::WORKFLOW_API;
    let (why, help) = if sdk.range.all_at_least(api) {
        (
            "0.9 exports no `defineWorkflow` (atomic PR #1457 removed the builder)",
            "rewrite it as `export default workflow({ description, inputs: {…}, outputs: {…}, run })` in `.atomic/workflows/<name>.ts`, with `Type` from `typebox` (`docs/workflows.md`, *Writing a Workflow*), or pin the release it was written for",
        )
    } else if sdk.range.all_older_than(api) {
        (
            "0.8's `defineWorkflow` takes the workflow's name, not an options object",
            "rewrite it with 0.8's builder, `export default defineWorkflow(\"<name>\").description(…).run(async (ctx) => …).compile()` from `@bastani/workflows` in `.atomic/workflows/<name>.ts`, or pin the release it was written for",
        )
    } else {
        (
            "0.8's `defineWorkflow` takes the workflow's name and 0.9 has none",
            "pin atomic 0.9 and rewrite it as `export default workflow({ description, inputs: {…}, outputs: {…}, run })` in `.atomic/workflows/<name>.ts` (`docs/workflows.md`, *Writing a Workflow*), or pin the release it was written for",
        )
    };
    let mut d = Diagnostic::new(
        IncompatibleSdk,
        file.id,
        chain.define,
        format!(
            "`defineWorkflow({{…}})…compile()` is the v0.5–0.7 API, and this project pins {}: from 0.8 the workflow API is `@bastani/workflows` (also served as `@bastani/atomic/workflows`) and {why}, so the file fails to load",
            sdk.source()
        ),
    )
    .with_help(help);
    if let Some((id, at)) = sdk.at {
        d = d.with_related(id, at, "the pinned version");
    }
    out.push(d);
    true
}
