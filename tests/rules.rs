//! Per-rule fixtures: `tests/fixtures/<family>/<Rule>/bad*/` must fire the rule (snapshot of the
//! `full` output, only that rule enabled) and `ok*/` must stay silent. Adding a case is adding a
//! directory; no Rust changes.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use stagelint::workspace::discover::{ConfigCache, discover};

use common::{check_with, fixture_config, only, render_full};

fn fixture_root() -> PathBuf {
    PathBuf::from("tests/fixtures")
}

/// Every case directory: (code, case dir).
fn cases() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for family in std::fs::read_dir(fixture_root()).expect("fixtures dir") {
        let family = family.expect("entry").path();
        if !family.is_dir() {
            continue;
        }
        let family_name = family.file_name().unwrap().to_string_lossy().into_owned();
        for rule in std::fs::read_dir(&family).expect("family dir") {
            let rule = rule.expect("entry").path();
            let code = format!("{family_name}/{}", rule.file_name().unwrap().to_string_lossy());
            for case in std::fs::read_dir(&rule).expect("rule dir") {
                let case = case.expect("entry").path();
                if case.is_dir() {
                    out.push((code.clone(), case));
                }
            }
        }
    }
    out.sort();
    out
}

/// A case's `full` output and its findings as (code, whether it offers a fix).
fn run_case(code: &str, case: &Path) -> (String, Vec<(&'static str, bool)>) {
    let own = case.join("stagelint.toml");
    if own.is_file() && stagelint::config::Config::load(&own).is_err() {
        // A config that cannot be used: checked as the language server checks (reading the
        // configs, tolerating a broken one), where it is a finding rather than exit code 2.
        let mut configs = ConfigCache::for_editor(&HashMap::new());
        let workspace = discover(&[case.to_path_buf()], &mut configs).expect("tolerant discovery");
        let diagnostics = stagelint::check::check(&workspace);
        return (
            render_full(&workspace, &diagnostics),
            diagnostics.iter().map(|d| (d.code, d.fix.is_some())).collect(),
        );
    }
    let config = only(fixture_config(case), code);
    let (workspace, diagnostics) = check_with(&[case.to_path_buf()], config);
    (render_full(&workspace, &diagnostics), diagnostics.iter().map(|d| (d.code, d.fix.is_some())).collect())
}

#[test]
fn bad_fixtures_fire_and_match_snapshots() {
    let mut failures = Vec::new();
    // Per code: whether some bad fixture's finding of it offers a fix.
    let mut fixed: HashMap<&str, bool> = HashMap::new();
    for (code, case) in cases() {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("bad") {
            continue;
        }
        let (rendered, codes) = run_case(&code, &case);
        for (found, has_fix) in &codes {
            *fixed.entry(found).or_default() |= *has_fix;
        }
        if !codes.iter().any(|(c, _)| *c == code) {
            failures.push(format!("{}: expected {code} to fire, got {codes:?}", case.display()));
            continue;
        }
        let snapshot = format!("{}__{name}", code.replace('/', "__"));
        insta::with_settings!({ snapshot_path => "snapshots/rules", prepend_module_to_snapshot => false, description => case.display().to_string() }, {
            insta::assert_snapshot!(snapshot, rendered);
        });
    }
    // `RuleMeta.fixable` says what the fixtures show: a rule marked fixable offers a fix on some
    // bad fixture, and a rule not marked offers none.
    for rule in stagelint::registry::all_rules() {
        let offers = fixed.get(rule.code).copied().unwrap_or(false);
        if offers != rule.fixable {
            failures.push(format!(
                "{}: `fixable` is {} but its bad fixtures {} a fix",
                rule.code,
                rule.fixable,
                if offers { "offer" } else { "never offer" }
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn ok_fixtures_stay_silent() {
    let mut failures = Vec::new();
    for (code, case) in cases() {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("ok") {
            continue;
        }
        let (rendered, codes) = run_case(&code, &case);
        if !codes.is_empty() {
            failures.push(format!("{}: expected no finding, got:\n{rendered}", case.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_rule_has_a_bad_and_an_ok_fixture() {
    let cases = cases();
    let mut missing = Vec::new();
    for rule in stagelint::families::all_rules() {
        for prefix in ["bad", "ok"] {
            let has = cases.iter().any(|(code, case)| {
                code == rule.code && case.file_name().unwrap().to_string_lossy().starts_with(prefix)
            });
            if !has {
                missing.push(format!("{} has no `{prefix}*` fixture", rule.code));
            }
        }
    }
    let unknown: Vec<_> =
        cases.iter().filter(|(code, _)| stagelint::families::rule(code).is_none()).map(|(c, _)| c.clone()).collect();
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    assert!(unknown.is_empty(), "fixture directories for unknown codes: {unknown:?}");
}
