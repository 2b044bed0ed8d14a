//! The rule pages: `docs/rules/<family>/<Name>.md`, one per rule, and `docs/rules/README.md`,
//! their index, made from the same text `stagelint explain CODE` prints; and the URL a finding
//! links to, `<base>docs/rules/<family>/<Name>.md`. `tests/rule_docs.rs` holds the files in the
//! repository to what these functions make.

use crate::registry::{RuleMeta, TABLES, all_rules};

/// Where the pages are, relative to the repository's root.
pub const DIR: &str = "docs/rules";

/// The base of the links when no `[output] docs-url` sets one: the repository as published
/// (`Cargo.toml`'s `repository`), at the branch the pages are generated on. Rule codes are
/// stable (`RENAMED` keeps moved ones working), so a page of the branch fits every release.
pub const DEFAULT_BASE: &str = concat!(env!("CARGO_PKG_REPOSITORY"), "/blob/main/");

/// How to regenerate the pages, named where a test finds them stale
/// (the one test: the others, run alongside, would read the pages while it writes them).
pub const REGENERATE: &str = "UPDATE_RULE_DOCS=1 cargo test --test rule_docs rule_pages_are_current";

/// The page's path relative to the repository's root: `docs/rules/sm/UnknownTool.md`.
pub fn path(code: &str) -> String {
    format!("{DIR}/{code}.md")
}

/// The link to a rule's page under `base` (a URL the pages' repository root is at).
pub fn url(base: &str, code: &str) -> String {
    let separator = if base.ends_with('/') { "" } else { "/" };
    format!("{base}{separator}{}", path(code))
}

/// A rule's page: its doc, its default severity and its upstream names, as `explain` prints it.
pub fn page(rule: &RuleMeta) -> String {
    let mut out = format!("{}\n\nDefault severity: {}\n", rule.doc.trim_end(), rule.severity.as_str());
    if !rule.aliases.is_empty() {
        out.push_str(&format!("Also known upstream as: {}\n", rule.aliases.join(", ")));
    }
    out
}

/// `docs/rules/README.md`: every rule by family, each linked to its page.
pub fn index() -> String {
    let mut out = format!(
        "# Rules\n\n\
         Every rule of stagelint, by family, with its default severity, whether it offers a fix, and what it finds.\n\
         Each page is what `stagelint explain CODE` prints; the findings of `stagelint check` (JSON `url`, SARIF `helpUri`) and the language server link to them.\n\
         These files are generated from the rule docs in the source: `{REGENERATE}` writes them again.\n"
    );
    for (family, rules) in TABLES {
        out.push_str(&format!("\n## {family}\n\n| code | default | fix | finds |\n|---|---|---|---|\n"));
        for rule in *rules {
            let name = rule.code.split_once('/').map_or(rule.code, |(_, name)| name);
            let fix = if rule.fixable { "yes" } else { "" };
            let summary = rule.summary().replace('|', "\\|");
            let line =
                format!("| [`{}`]({family}/{name}.md) | {} | {fix} | {summary} |", rule.code, rule.severity.as_str());
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// Every generated file: its path relative to the repository's root, and its text.
pub fn files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = all_rules().map(|rule| (path(rule.code), page(rule))).collect();
    files.push((format!("{DIR}/README.md"), index()));
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_the_page_path_under_its_base() {
        assert_eq!(
            url("https://example.com/x/", "sm/UnknownTool"),
            "https://example.com/x/docs/rules/sm/UnknownTool.md"
        );
        assert_eq!(
            url("https://example.com/x", "steps/SR-LOAD-001"),
            "https://example.com/x/docs/rules/steps/SR-LOAD-001.md"
        );
        assert!(DEFAULT_BASE.starts_with("https://") && DEFAULT_BASE.ends_with('/'), "{DEFAULT_BASE}");
    }

    #[test]
    fn every_rule_has_one_page_and_one_index_row() {
        let files = files();
        assert_eq!(files.len(), all_rules().count() + 1);
        let index = index();
        for rule in all_rules() {
            let name = rule.code.rsplit_once('/').map_or(rule.code, |(_, name)| name);
            assert!(index.contains(&format!("({}/{name}.md)", rule.family())), "{}", rule.code);
            assert!(page(rule).starts_with(&format!("# {}\n", rule.code)), "{}", rule.code);
        }
    }
}
