//! `stagelint init`: a commented `stagelint.toml` for the project in a directory, with the
//! sections of the families found there switched on and the others left as comments.

use std::collections::BTreeSet;
use std::path::Path;

use crate::config::{Config, DEFAULT_BACKOFFS, DEFAULT_EXTRA_VARIABLES, DEFAULT_RESOLUTION_POLICIES, DEFAULT_TOOLS};
use crate::workspace::discover::{ConfigCache, discover};
use crate::workspace::{FileKind, Workspace};

/// The families whose files are in `dir`, found by walking it as `check` does (with the
/// default settings, so a broken config upward does not stop `init`).
pub fn detect(dir: &Path) -> Result<BTreeSet<&'static str>, String> {
    let mut configs = ConfigCache::new(Some(Config::defaults(dir)));
    let workspace = discover(&[dir.to_path_buf()], &mut configs).map_err(|e| e.to_string())?;
    Ok(families_in(&workspace))
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
            FileKind::Unreadable { .. } | FileKind::BrokenConfig { .. } => None,
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

/// The text of the config for a project holding `families`.
pub fn render(families: &BTreeSet<&str>) -> String {
    let found: Vec<String> = FAMILY_NAMES
        .iter()
        .filter(|(name, _)| families.contains(name))
        .map(|(name, what)| format!("#   {name}: {what}"))
        .collect();
    let found = if found.is_empty() {
        "# No stage definitions, state machines, climpt agents, Last Light workflows or cassettes\n\
         # were found here, so the family sections below are comments; uncomment what you need.\n"
            .to_string()
    } else {
        format!("# Found here (`stagelint init` walked this directory as `check` does):\n{}\n", found.join("\n"))
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
         # merged). Full reference: docs/configuration.md; `stagelint explain CODE` explains a rule.\n\
         #\n{found}\n",
        env!("CARGO_PKG_VERSION")
    ));
    out.push_str(
        "# [files]: files to check that stagelint would not recognise by their content. Globs are\n\
         # relative to this file's directory; `*` stays within a directory, `**` crosses them.\n\
         [files]\n\
         # Markdown files to check as stage definitions even without a stage key in the frontmatter.\n\
         stages = []\n\
         # YAML files to check as Last Light workflows even without `phases:` or `kind: cron`.\n\
         workflows = []\n\n",
    );
    out.push_str(&format!(
        "# [tools]: the live tool set, the tool names that exist where the stages run.\n\
         # sm/UnknownTool checks allowedTools against it; sm/CompletionToolCollision keeps\n\
         # completionTool names out of it.\n\
         [tools]\n\
         # The default set, spelled out; replace it with the tools your runtime registers.\n\
         registered = {}\n\
         # Names added to `registered` (MCP tools such as \"mcp__github__search\").\n\
         extra = []\n\n",
        list(DEFAULT_TOOLS)
    ));
    out.push_str(&section(
        sm,
        "[sm]: how stage bodies and state machines are read (sm/ rules).",
        &[
            ("\"mustache\" renders {{ctx.task}} (the wiki's form); \"dollar\" renders ${ctx.task}.", None),
            ("", Some("placeholder-dialect = \"mustache\"".to_string())),
            ("Every value resolutionPolicy may take (sm/InvalidResolutionPolicy).", None),
            ("", Some(format!("resolution-policies = {}", list(DEFAULT_RESOLUTION_POLICIES)))),
            ("Every value retryPolicy.backoff may take (sm/InvalidRetryPolicy).", None),
            ("", Some(format!("backoffs = {}", list(DEFAULT_BACKOFFS)))),
        ],
        "[sm]",
    ));
    out.push_str(&section(
        lastlight,
        "[lastlight]: the Last Light engine and what your dispatchers add (lastlight/ rules).",
        &[
            ("\"head\" is the current engine; \"seed\" the one of the seed-era documentation; unset, it is detected from the repository.", None),
            ("", Some("engine = \"head\"".to_string())),
            ("Template variables your dispatchers pass in request.extra (replaces the list).", None),
            ("", Some(format!("variables = {}", list(DEFAULT_EXTRA_VARIABLES)))),
            ("Variables added to `variables`.", None),
            ("", Some("extra-variables = []".to_string())),
            ("Approval gates your server config enables (approval.<gate>: true).", None),
            ("", Some("approval-gates = []".to_string())),
        ],
        "[lastlight]",
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

/// A section that is live when its family was found, and commented out otherwise. Each entry is
/// a comment line or a setting.
fn section(live: bool, about: &str, entries: &[(&str, Option<String>)], header: &str) -> String {
    let off = if live { "" } else { "# " };
    let mut out = format!("# {about}\n");
    if !live {
        out.push_str("# (None of these files were found here; uncomment to use.)\n");
    }
    out.push_str(&format!("{off}{header}\n"));
    for (comment, setting) in entries {
        match setting {
            Some(setting) => setting.lines().for_each(|line| out.push_str(&format!("{off}{line}\n"))),
            None => out.push_str(&format!("# {comment}\n")),
        }
    }
    out.push('\n');
    out
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
    let families = detect(dir)?;
    std::fs::write(&path, render(&families)).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(Written { path, families, shadows })
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
            let text = render(&families);
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
        let text = render(&BTreeSet::from(["sm"]));
        assert!(text.contains("\n[sm]\n"), "{text}");
        assert!(text.contains("\n# [lastlight]\n"), "{text}");
        assert!(text.contains("\n# engine = \"head\"\n"), "{text}");
        assert!(!text.contains("\n[lastlight]"), "{text}");
        assert!(text.contains("#   sm: stage definitions and state machines"), "{text}");
    }
}
