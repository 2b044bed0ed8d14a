//! `stagelint init`: a commented `stagelint.toml` for the project in a directory, with the
//! sections of the families found there switched on and the others left as comments.

use std::collections::BTreeSet;
use std::path::Path;

use crate::config::{Config, DEFAULT_BACKOFFS, DEFAULT_EXTRA_VARIABLES, DEFAULT_RESOLUTION_POLICIES, DEFAULT_TOOLS};
use crate::families::sm::model::StageDoc;
use crate::util::did_you_mean;
use crate::workspace::discover::{ConfigCache, discover};
use crate::workspace::{FileKind, Workspace};

/// What `init` found in a directory.
#[derive(Debug, Default)]
pub struct Found {
    /// The families whose files are there.
    pub families: BTreeSet<&'static str>,
    /// Names the stages' `allowedTools` use that the default tool set lacks, in the order met,
    /// except likely typos.
    pub unknown_tools: Vec<String>,
    /// Unknown names close to a default tool, with that tool (`Grpe`, `Grep`): not offered for
    /// `extra`, since sm/UnknownTool fixes them.
    pub typos: Vec<(String, String)>,
    /// The Last Light release detected for the first workflow, and why (`0.23`, "...").
    pub lastlight_release: Option<(String, String)>,
}

/// What is in `dir`, found by walking it as `check` does (with the default settings, so a
/// broken config upward does not stop `init`).
pub fn detect(dir: &Path) -> Result<Found, String> {
    let mut configs = ConfigCache::new(Some(Config::defaults(dir)));
    let workspace = discover(&[dir.to_path_buf()], &mut configs).map_err(|e| e.to_string())?;
    let mut found = Found { families: families_in(&workspace), ..Found::default() };
    let workflow = workspace.reported_files().find(|f| f.kind == FileKind::Workflow);
    if let Some(file) = workflow
        && let crate::config::ReleaseSource::Detected { marker, why } = &file.config.lastlight.release_source
    {
        let marker = marker.strip_prefix(dir).unwrap_or(marker).display();
        found.lastlight_release = Some((file.config.lastlight.release.describe(), format!("`{marker}`: {why}")));
    }
    for file in workspace.reported_files().filter(|f| f.kind == FileKind::Stage) {
        let stage = StageDoc::parse(file);
        let completion = stage.completion_tool().map(|(name, _)| name);
        let names = stage.field("allowedTools").and_then(|n| n.as_seq()).into_iter().flatten();
        for name in names.filter_map(|item| item.as_str()) {
            let known = DEFAULT_TOOLS.contains(&name) || Some(name) == completion;
            if known || found.unknown_tools.iter().chain(found.typos.iter().map(|(t, _)| t)).any(|t| t == name) {
                continue;
            }
            match did_you_mean(name, DEFAULT_TOOLS.iter().copied()) {
                Some(tool) => found.typos.push((name.to_string(), tool.to_string())),
                None => found.unknown_tools.push(name.to_string()),
            }
        }
    }
    Ok(found)
}

/// Which families own the files of `workspace`.
pub fn families_in(workspace: &Workspace) -> BTreeSet<&'static str> {
    workspace
        .files()
        .iter()
        .filter_map(|file| match file.kind {
            FileKind::Stage | FileKind::StateMachine => Some("sm"),
            FileKind::StepsRegistry
            | FileKind::AgentJson
            | FileKind::JsonSchema
            | FileKind::C3lPrompt
            | FileKind::BreakdownConfig => Some("steps"),
            FileKind::Workflow | FileKind::WorkflowPrompt | FileKind::Skill => Some("lastlight"),
            FileKind::Cassette => Some("cassette"),
            FileKind::AtomicWorkflow => Some("atomic"),
            FileKind::AtomicContext
            | FileKind::Baseline
            | FileKind::Unreadable { .. }
            | FileKind::BrokenConfig { .. } => None,
        })
        .collect()
}

/// What each family checks, for the header.
const FAMILY_NAMES: &[(&str, &str)] = &[
    ("sm", "stage definitions and state machines"),
    ("steps", "climpt agents"),
    ("lastlight", "Last Light workflows, prompts and skills"),
    ("atomic", "@bastani/atomic TypeScript workflows"),
    ("cassette", "dry-run cassettes"),
];

/// The text of the config for a project with what `found` says.
pub fn render(found: &Found) -> String {
    let families = &found.families;
    let header: Vec<String> = FAMILY_NAMES
        .iter()
        .filter(|(name, _)| families.contains(name))
        .map(|(name, what)| format!("#   {name}: {what}"))
        .collect();
    let header = if header.is_empty() {
        "# No stage definitions, state machines, climpt agents, Last Light workflows or cassettes\n\
         # were found here, so the family sections below are comments; uncomment what you need.\n"
            .to_string()
    } else {
        format!("# Found here (`stagelint init` walked this directory as `check` does):\n{}\n", header.join("\n"))
    };
    let sm = families.contains("sm");
    let lastlight = families.contains("lastlight");
    let dry_run = families.contains("cassette") || sm;
    let mut out = String::new();
    out.push_str(&format!(
        "# stagelint.toml, written by `stagelint init` (stagelint {}).\n\
         #\n\
         # Every key is optional: a setting left out keeps the default shown here. This file applies\n\
         # to the files in this directory and below, up to a nested stagelint.toml (files are not\n\
         # merged). Every table and key: `stagelint explain configuration`; a rule:\n\
         # `stagelint explain CODE`.\n\
         #\n{header}\n",
        env!("CARGO_PKG_VERSION")
    ));
    out.push_str(
        "# [files]: files to check that stagelint would not recognise by their content, and files to\n\
         # leave out. Globs are relative to this file's directory; `*` stays within a directory, `**`\n\
         # crosses them.\n\
         [files]\n\
         # Markdown files to check as stage definitions even without a stage key in the frontmatter.\n\
         stages = []\n\
         # YAML files to check as Last Light workflows even without `phases:` or `kind: cron`.\n\
         workflows = []\n\
         # Files and directories never read, besides `.gitignore`d ones: a name without `/` anywhere,\n\
         # a path with `/` from this directory. `exclude` replaces the defaults (node_modules,\n\
         # .venv, .tox, ...; `stagelint explain configuration` lists them), `extend-exclude` adds.\n\
         # extend-exclude = [\"tests/fixtures\", \"*.draft.md\"]\n\
         # Leave them out when named on the command line too (as pre-commit names staged files).\n\
         # force-exclude = true\n\n",
    );
    out.push_str(&tools(found));
    out.push_str(&section(
        sm,
        "[sm]: how stage bodies and state machines are read (sm/ rules).",
        &[
            ("\"mustache\" renders {{ctx.task}} (the wiki's form); \"dollar\" renders ${ctx.task}.", None),
            ("", Some("placeholder-dialect = \"mustache\"".to_string())),
            ("Every value resolutionPolicy may take (sm/InvalidResolutionPolicy); the default, as a comment.", None),
            ("", Some(format!("# resolution-policies = {}", list(DEFAULT_RESOLUTION_POLICIES)))),
            ("Every value retryPolicy.backoff may take (sm/InvalidRetryPolicy); the default, as a comment.", None),
            ("", Some(format!("# backoffs = {}", list(DEFAULT_BACKOFFS)))),
        ],
        "[sm]",
    ));
    out.push_str(&section(
        lastlight,
        "[lastlight]: the Last Light engine and what your dispatchers add (lastlight/ rules).",
        &[
            ("The Last Light release your server runs: a version (\"0.23\"), \"seed\" or \"head\" (the newest; see `stagelint explain versions`).", None),
            ("Unset, it is detected from the repository (the server's package.json, the engine's sources) each run.", None),
            ("", Some(release_line(found))),
            ("Template variables your dispatchers pass in request.extra (replaces the list; the default, as a comment).", None),
            ("", Some(format!("# variables = {}", list(DEFAULT_EXTRA_VARIABLES)))),
            ("Variables added to `variables`.", None),
            ("", Some("extra-variables = []".to_string())),
            ("Approval gates your server config enables (approval.<gate>: true).", None),
            ("", Some("approval-gates = []".to_string())),
        ],
        "[lastlight]",
    ));
    out.push_str(&section(
        families.contains("atomic"),
        "[atomic]: the @bastani/atomic SDK version and the names your project adds (atomic/ rules).",
        &[
            ("The SDK version the workflows run on; unset, the @bastani/atomic dependency of the nearest package.json.", None),
            ("", Some("# sdk-version = \"0.5.24\"".to_string())),
            ("Agents defined outside the project's agent files (say, in ~/.claude/agents/).", None),
            ("", Some("agents = []".to_string())),
            ("Workflow names reserved besides atomic's builtins (ralph, deep-research-codebase, open-claude-design).", None),
            ("", Some("reserved-names = []".to_string())),
        ],
        "[atomic]",
    ));
    out.push_str(&section(
        dry_run,
        "[dry-run]: where `stagelint dry-run` and the cassette/ rules look for cassettes.",
        &[
            ("Directories searched for <stage-id>.cassette.yaml after the stage's own directory.", None),
            ("", Some("cassettes = []".to_string())),
        ],
        "[dry-run]",
    ));
    out.push_str(
        "# [output]: where findings link to their rule's page (JSON `url`, SARIF `helpUri`, the\n\
         # editor's rule link): `docs-url` is the base of a copy of the stagelint repository that\n\
         # holds the pages; unset, the stagelint repository (the editor links a local page then).\n\
         # [output]\n\
         # docs-url = \"https://example.com/stagelint/\"\n\n",
    );
    out.push_str(
        "# [rules]: the severity of a rule or of a whole family: \"error\", \"warning\", \"info\",\n\
         # \"hint\", \"on\" (its own severities) or \"off\". A code's entry wins over its family's.\n\
         # `stagelint rules` lists every code.\n\
         [rules]\n\
         # \"sm/UnknownField\" = \"warning\"\n\
         # \"steps\" = \"off\"\n\n\
         # [per-file-ignores]: codes or families turned off for the files a glob matches.\n\
         [per-file-ignores]\n\
         # \"legacy/**\" = [\"sm/UnknownTool\"]\n",
    );
    out
}

/// The `[tools]` section. The default set is a comment, so the defaults of later versions reach
/// the project; `extra` holds, as a comment to review, the tools the stages use that the default
/// set lacks.
fn tools(found: &Found) -> String {
    let mut out = String::from(
        "# [tools]: the live tool set, the tool names that exist where the stages run.\n\
         # sm/UnknownTool checks allowedTools against it; sm/CompletionToolCollision keeps\n\
         # completionTool names out of it.\n\
         [tools]\n\
         # `registered` replaces the default set, which is shown here as a comment: left so, the\n\
         # defaults of later stagelint versions apply. Uncomment it to list exactly the tools your\n\
         # runtime registers.\n",
    );
    list(DEFAULT_TOOLS).lines().for_each(|line| {
        let line = if line.starts_with('[') { format!("registered = {line}") } else { line.to_string() };
        out.push_str(&format!("# {line}\n"));
    });
    out.push_str("# `extra`: names added to the set in effect (MCP tools such as \"mcp__github__search\").\n");
    if found.unknown_tools.is_empty() {
        out.push_str("extra = []\n");
    } else {
        out.push_str(
            "# The stages here list these tools in allowedTools, and the default set lacks them: uncomment\n\
             # the line (keeping the ones your runtime registers), or sm/UnknownTool reports them.\n",
        );
        let names: Vec<&str> = found.unknown_tools.iter().map(String::as_str).collect();
        list(&names).lines().for_each(|line| {
            let line = if line.starts_with('[') { format!("extra = {line}") } else { line.to_string() };
            out.push_str(&format!("# {line}\n"));
        });
    }
    if !found.typos.is_empty() {
        let typos: Vec<String> = found.typos.iter().map(|(name, tool)| format!("`{name}` (`{tool}`?)")).collect();
        out.push_str(&format!("# Left out as likely typos (sm/UnknownTool offers the fix): {}.\n", typos.join(", ")));
    }
    out.push('\n');
    out
}

/// A section that is live when its family was found, and commented out otherwise. Each entry is
/// a comment line or a setting; a setting written as a comment (a default shown, not set) stays
/// one either way.
fn section(live: bool, about: &str, entries: &[(&str, Option<String>)], header: &str) -> String {
    let off = if live { "" } else { "# " };
    let mut out = format!("# {about}\n");
    if !live {
        out.push_str("# (None of these files were found here; uncomment to use.)\n");
    }
    out.push_str(&format!("{off}{header}\n"));
    for (comment, setting) in entries {
        match setting {
            Some(setting) if setting.starts_with("# ") => {
                let mut lines = setting.lines();
                lines.next().into_iter().for_each(|line| out.push_str(&format!("{line}\n")));
                lines.for_each(|line| out.push_str(&format!("# {line}\n")));
            }
            Some(setting) => setting.lines().for_each(|line| out.push_str(&format!("{off}{line}\n"))),
            None => out.push_str(&format!("# {comment}\n")),
        }
    }
    out.push('\n');
    out
}

/// `[lastlight] release`, commented so that detection follows the repository: the release
/// detected now when there is one.
fn release_line(found: &Found) -> String {
    match &found.lastlight_release {
        Some((release, why)) if !release.contains(' ') => format!("# release = \"{release}\"  # detected from {why}"),
        Some((range, why)) => format!("# release = \"head\"  # detected: {range}, from {why}"),
        None => "# release = \"head\"".to_string(),
    }
}

/// A TOML array of strings, wrapped at about 100 columns.
fn list(values: &[&str]) -> String {
    let items: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    let one_line = format!("[{}]", items.join(", "));
    if one_line.len() <= 80 {
        return one_line;
    }
    let mut out = String::from("[\n");
    let mut line = String::new();
    for item in items {
        if !line.is_empty() && line.len() + item.len() + 2 > 96 {
            out.push_str(&format!("    {}\n", line.trim_end()));
            line.clear();
        }
        line.push_str(&item);
        line.push_str(", ");
    }
    out.push_str(&format!("    {}\n]", line.trim_end().trim_end_matches(',')));
    out
}

/// What `init` wrote.
pub struct Written {
    pub path: std::path::PathBuf,
    pub families: BTreeSet<&'static str>,
    /// The config of a parent directory that governed `dir` until now (configs are not merged).
    pub shadows: Option<std::path::PathBuf>,
}

/// Writes the config into `dir`; refuses to replace an existing one (`stagelint.toml` or
/// `.stagelint.toml`, which the new file would silently shadow) unless `force`, which
/// overwrites the existing file under its own name.
pub fn write(dir: &Path, force: bool) -> Result<Written, String> {
    let existing = crate::config::CONFIG_NAMES.iter().map(|name| dir.join(name)).find(|p| p.is_file());
    if let Some(existing) = &existing
        && !force
    {
        return Err(format!("{} exists; pass --force to overwrite it", existing.display()));
    }
    let path = existing.unwrap_or_else(|| dir.join(crate::config::CONFIG_NAMES[0]));
    let shadows = dir.parent().and_then(crate::config::discover);
    let found = detect(dir)?;
    std::fs::write(&path, render(&found)).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(Written { path, families: found.families, shadows })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every combination of families yields a config that parses, with the defaults it shows.
    #[test]
    fn every_variant_parses() {
        let names = ["sm", "steps", "lastlight", "cassette"];
        for mask in 0..16u32 {
            let families: BTreeSet<&str> =
                names.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, n)| *n).collect();
            let text = render(&Found { families: families.clone(), ..Found::default() });
            let config = Config::parse(&text, Path::new("/p/stagelint.toml"))
                .unwrap_or_else(|e| panic!("{families:?}: {e}\n{text}"));
            let defaults = Config::defaults(Path::new("/p"));
            assert_eq!(config.tools, defaults.tools);
            assert_eq!(config.resolution_policies, defaults.resolution_policies);
            assert_eq!(config.lastlight.variables, defaults.lastlight.variables);
            assert!(config.rules.is_empty());
        }
    }

    #[test]
    fn sections_of_missing_families_are_comments() {
        let text = render(&Found { families: BTreeSet::from(["sm"]), ..Found::default() });
        assert!(text.contains("\n[sm]\n"), "{text}");
        assert!(text.contains("\n# [lastlight]\n"), "{text}");
        assert!(text.contains("\n# release = \"head\"\n"), "{text}");
        assert!(!text.contains("\n[lastlight]"), "{text}");
        assert!(text.contains("#   sm: stage definitions and state machines"), "{text}");
    }

    /// The release detected now is offered commented, so that detection keeps following the
    /// repository; a range is not a value `release` takes.
    #[test]
    fn the_detected_last_light_release_is_offered_as_a_comment() {
        let found = |release: &str| Found {
            families: BTreeSet::from(["lastlight"]),
            lastlight_release: Some((release.to_string(), "`package.json`: `lastlight` 0.10.1".to_string())),
            ..Found::default()
        };
        let text = render(&found("0.7.7"));
        assert!(
            text.contains("\n# release = \"0.7.7\"  # detected from `package.json`: `lastlight` 0.10.1\n"),
            "{text}"
        );
        let text = render(&found("0.2 to 0.15"));
        assert!(text.contains("\n# release = \"head\"  # detected: 0.2 to 0.15, from `package.json`"), "{text}");
        let config = Config::parse(&text.replace("# release", "release"), Path::new("/p/stagelint.toml"));
        assert!(config.is_ok(), "{config:?}");
    }

    #[test]
    fn an_atomic_project_gets_its_section() {
        let text = render(&Found { families: BTreeSet::from(["atomic"]), ..Found::default() });
        assert!(text.contains("\n[atomic]\n"), "{text}");
        assert!(text.contains("\n# sdk-version = \"0.5.24\"\n") && text.contains("\nagents = []\n"), "{text}");
        let config = Config::parse(&text.replace("# sdk-version", "sdk-version"), Path::new("/p/stagelint.toml"));
        assert!(config.expect("parses").atomic.sdk_version.is_some());
    }

    /// Issue 16: the default tool set is a comment (later defaults reach the project), and the
    /// tools the stages use beyond it are offered for `extra`, commented, typos left out.
    #[test]
    fn unknown_tools_are_offered_for_extra_as_a_comment() {
        let found = Found {
            families: BTreeSet::from(["sm"]),
            unknown_tools: vec!["mcp__jira__search".into(), "jira-comment".into()],
            typos: vec![("Grpe".into(), "Grep".into())],
            ..Found::default()
        };
        let text = render(&found);
        assert!(text.contains("\n# registered = [\n"), "{text}");
        assert!(!text.contains("\nregistered"), "{text}");
        assert!(text.contains("\n# extra = [\"mcp__jira__search\", \"jira-comment\"]\n"), "{text}");
        assert!(!text.contains("\nextra = []"), "no second `extra` to collide with the commented one: {text}");
        assert!(text.contains("`Grpe` (`Grep`?)"), "{text}");
        let uncommented = text.replace("\n# extra = ", "\nextra = ");
        let config = Config::parse(&uncommented, Path::new("/p/stagelint.toml")).expect("parses");
        assert!(config.tools.contains("jira-comment") && config.tools.contains("Read"), "{text}");
        // Without unknown names, `extra` is set, empty.
        let text = render(&Found { families: BTreeSet::from(["sm"]), ..Found::default() });
        assert!(text.contains("\nextra = []\n"), "{text}");
    }
}
