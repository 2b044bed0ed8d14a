//! `stagelint explain [TOPIC]`: a rule's doc (by its code, an alias, or its name alone, in any
//! case and with or without `-` and `_`, when that names one rule), a topic page, or with no argument the list of both.

use std::process::ExitCode;

use stagelint::families::{self, RuleMeta};

use super::Failure;

/// Topics `explain` knows besides rules: name, what it is about, text.
const TOPICS: &[(&str, &str, &str)] = &[
    ("dry-run", "how the embedded runtime executes a stage", include_str!("../../docs/dry-run.md")),
    (
        "decisions",
        "where the upstream documents and code disagree, and what stagelint does",
        include_str!("../../docs/decisions.md"),
    ),
    ("configuration", "stagelint.toml: every table and key", include_str!("../../docs/configuration.md")),
    (
        "adoption",
        "an existing repository: a baseline, dry-runs in CI, the MCP server for coding agents",
        include_str!("../../docs/adoption.md"),
    ),
    ("versions", "the upstream releases each family models, and what changes between them", ""),
    (
        "security",
        "what stagelint does with an untrusted repository, and the tests that show it",
        include_str!("../../docs/security.md"),
    ),
];

pub fn run(topic: Option<&str>) -> Result<ExitCode, Failure> {
    super::print(text(topic)?.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// What `explain` prints for `topic`, or why it cannot (the MCP server's `explain` tool
/// answers the same).
pub fn text(topic: Option<&str>) -> Result<String, String> {
    let Some(topic) = topic else {
        return Ok(listing());
    };
    if let Some((name, _, text)) = TOPICS.iter().find(|(name, _, _)| fold(name) == fold(topic)) {
        // The releases are data, not a page: the text is made from the table.
        let text = if *name == "versions" { stagelint::registry::releases::versions_text() } else { text.to_string() };
        return Ok(format!("{}\n", text.trim_end()));
    }
    // A family (`sm`, `cassette/`): its rules, as the full listing shows them.
    let family = topic.strip_suffix('/').unwrap_or(topic).to_ascii_lowercase();
    if families::is_family(&family) {
        return Ok(family_listing(&family));
    }
    let rule = match resolve(topic).as_slice() {
        [rule] => *rule,
        [] => {
            let mut hint = families::code_hint(topic, false);
            if hint.is_empty()
                && let Some(near) = stagelint::util::did_you_mean(topic, TOPICS.iter().map(|(name, _, _)| *name))
            {
                hint = format!("; did you mean the topic `{near}`?");
            }
            return Err(format!(
                "unknown rule code or topic `{topic}`{hint} (`stagelint explain` lists the topics and rules)"
            ));
        }
        several => {
            let width = several.iter().map(|r| r.code.len()).max().unwrap_or(0);
            let lines: Vec<String> =
                several.iter().map(|r| format!("    {:width$}  {}", r.code, r.summary())).collect();
            return Err(format!(
                "`{topic}` names {} rules; give the family too, as in `stagelint explain {}`:\n{}",
                several.len(),
                several[0].code,
                lines.join("\n")
            ));
        }
    };
    let mut out = String::new();
    if rule.code != topic {
        out.push_str(&format!("`{topic}` is reported as `{}`.\n\n", rule.code));
    }
    // The page `docs/rules/<family>/<Name>.md` holds this same text.
    out.push_str(&stagelint::registry::docs::page(rule));
    Ok(out)
}

/// The rules `query` names: its exact code (or alias, or old name); else every rule whose code,
/// or whose name without the family, or an alias, equals it ignoring case.
fn resolve(query: &str) -> Vec<&'static RuleMeta> {
    if let Some(rule) = families::rule(query) {
        return vec![rule];
    }
    let mut found: Vec<&'static RuleMeta> = families::all_rules()
        .filter(|rule| {
            let name = rule.code.rsplit_once('/').map_or(rule.code, |(_, name)| name);
            let names = std::iter::once(name).chain(rule.aliases.iter().copied());
            let mut full = names.clone().map(|n| format!("{}/{n}", rule.family()));
            full.any(|code| fold(&code) == fold(query)) || names.into_iter().any(|n| fold(n) == fold(query))
        })
        .collect();
    if found.is_empty() {
        found.extend(
            families::RENAMED
                .iter()
                .filter(|(old, _)| fold(old) == fold(query))
                .filter_map(|(_, new)| families::rule(new)),
        );
    }
    found
}

/// A name as `explain` compares it: case and the separators `-` and `_` do not count
/// (`next-cycle` is `NextCycle`, `dryrun` is `dry-run`).
fn fold(name: &str) -> String {
    name.chars().filter(|c| *c != '-' && *c != '_').map(|c| c.to_ascii_lowercase()).collect()
}

/// `explain FAMILY`: the family's rules with their summaries.
fn family_listing(family: &str) -> String {
    let rules: Vec<&RuleMeta> = families::all_rules().filter(|r| r.family() == family).collect();
    let width = rules.iter().map(|r| r.code.len()).max().unwrap_or(0);
    let mut out = format!("The {family}/ rules (`stagelint explain CODE` for one):\n");
    for rule in rules {
        let line = format!("  {:width$}  {}", rule.code, rule.summary());
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `explain` alone: the topics, then every rule by family with its summary.
fn listing() -> String {
    let mut out = String::from("Topics (`stagelint explain TOPIC`):\n");
    let width = TOPICS.iter().map(|(name, _, _)| name.len()).max().unwrap_or(0);
    for (name, about, _) in TOPICS {
        out.push_str(&format!("  {name:width$}  {about}\n"));
    }
    out.push_str("\nRules (`stagelint explain CODE`; the name alone, in any case, works when one family has it):\n");
    let width = families::all_rules().map(|r| r.code.len()).max().unwrap_or(0);
    let mut family = "";
    for rule in families::all_rules() {
        if rule.family() != family {
            family = rule.family();
            out.push_str(&format!("\n{family}\n"));
        }
        let line = format!("  {:width$}  {}", rule.code, rule.summary());
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
