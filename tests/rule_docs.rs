//! The rule pages in `docs/rules/` are what `stagelint explain` prints (generated from the rule
//! docs; `UPDATE_RULE_DOCS=1 cargo test --test rule_docs rule_pages_are_current` writes them
//! again), and every link a finding carries, in every output, leads to one of them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use stagelint::diagnostic::Diagnostic;
use stagelint::families;
use stagelint::registry::docs;
use stagelint::source::Span;
use stagelint::workspace::Workspace;
use stagelint::workspace::discover::{ConfigCache, discover};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir`, relative to the repository.
fn files_under(dir: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(relative) = path.strip_prefix(repo()) {
                found.insert(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    found
}

#[test]
fn rule_pages_are_current() {
    let wanted: BTreeMap<String, String> = docs::files().into_iter().collect();
    let on_disk = files_under(&repo().join(docs::DIR));
    let stale: Vec<&String> = wanted
        .iter()
        .filter(|(path, text)| std::fs::read_to_string(repo().join(path)).ok().as_ref() != Some(*text))
        .map(|(path, _)| path)
        .collect();
    let extra: Vec<&String> = on_disk.iter().filter(|path| !wanted.contains_key(*path)).collect();
    if stale.is_empty() && extra.is_empty() {
        return;
    }
    if std::env::var_os("UPDATE_RULE_DOCS").is_some() {
        for path in &stale {
            let file = repo().join(path);
            std::fs::create_dir_all(file.parent().expect("parent")).expect("create the family's directory");
            std::fs::write(&file, &wanted[*path]).expect("write the page");
        }
        for path in &extra {
            std::fs::remove_file(repo().join(path)).expect("remove a page no rule has");
        }
        return;
    }
    panic!(
        "the rule pages in {} are stale (missing or different: {stale:?}; no such rule: {extra:?}); run `{}`",
        docs::DIR,
        docs::REGENERATE
    );
}

/// The page a link names, as a path in this repository: the link must be the default base
/// (or `base`) followed by `docs/rules/<family>/<Name>.md`, and the file must exist.
fn page_of(url: &str, base: &str) -> PathBuf {
    let relative = url.strip_prefix(base).unwrap_or_else(|| panic!("{url} is not under {base}"));
    assert!(relative.starts_with("docs/rules/") && relative.ends_with(".md"), "{url}");
    let path = repo().join(relative);
    assert!(path.is_file(), "{url} leads to {}, which does not exist", path.display());
    path
}

/// A workspace with one finding of every rule, on one file governed by `config`.
fn every_rule(config_text: Option<&str>) -> (tempfile::TempDir, Workspace, Vec<Diagnostic>) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("sm.yaml"), "entry: plan\n").expect("write");
    if let Some(text) = config_text {
        std::fs::write(dir.path().join("stagelint.toml"), text).expect("write");
    }
    let mut configs = ConfigCache::new(None);
    let workspace = discover(&[dir.path().to_path_buf()], &mut configs).expect("config is valid");
    let file = workspace.reported_files().next().expect("sm.yaml is read").id;
    let diagnostics =
        families::all_rules().map(|rule| Diagnostic::new(rule.code, file, Span::new(0, 5), "x")).collect();
    (dir, workspace, diagnostics)
}

fn json_urls(workspace: &Workspace, diagnostics: &[Diagnostic]) -> Vec<String> {
    let mut out = Vec::new();
    stagelint::render::json::render(&mut out, workspace, diagnostics, &[]).expect("render");
    let json: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
    json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| d["url"].as_str().expect("url").into())
        .collect()
}

fn sarif_urls(workspace: &Workspace, diagnostics: &[Diagnostic]) -> Vec<String> {
    let mut out = Vec::new();
    stagelint::render::sarif::render(&mut out, workspace, diagnostics, &[]).expect("render");
    let sarif: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"].as_array().expect("rules").clone();
    assert_eq!(rules.len(), families::all_rules().count(), "SARIF describes every rule");
    rules
        .iter()
        .map(|rule| {
            let url = rule["helpUri"].as_str().expect("helpUri").to_string();
            assert!(rule["help"]["text"].as_str().expect("help").ends_with(&format!("({url})")), "{rule}");
            url
        })
        .collect()
}

#[test]
fn every_url_of_every_rule_leads_to_its_page() {
    let (_dir, workspace, diagnostics) = every_rule(None);
    let json = json_urls(&workspace, &diagnostics);
    let sarif = sarif_urls(&workspace, &diagnostics);
    for (rule, (json, sarif)) in families::all_rules().zip(json.iter().zip(&sarif)) {
        assert_eq!(json, sarif, "{}", rule.code);
        let page = page_of(json, docs::DEFAULT_BASE);
        let text = std::fs::read_to_string(page).expect("read the page");
        assert!(text.starts_with(&format!("# {}\n", rule.code)), "{json} is the page of {}", rule.code);
    }
}

#[test]
fn a_configured_base_is_used_by_json_and_sarif() {
    let base = "https://git.example.com/mirror/stagelint/-/blob/v1/";
    let (_dir, workspace, diagnostics) = every_rule(Some(&format!("[output]\ndocs-url = \"{base}\"\n")));
    for url in json_urls(&workspace, &diagnostics).iter().chain(&sarif_urls(&workspace, &diagnostics)) {
        page_of(url, base);
    }
}

/// The real binary's JSON and SARIF on the broken examples (findings from the rules, not made
/// up): every link leads to a page, and SARIF's tool link to the repository.
#[test]
fn the_binary_links_every_finding_to_its_page() {
    let run = |format: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_stagelint"))
            .args(["check", "examples", "tests/corpus", "--exit-zero", "--format", format])
            .current_dir(repo())
            .output()
            .expect("stagelint runs");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice::<serde_json::Value>(&output.stdout).expect("JSON")
    };
    let json = run("json");
    let findings = json["diagnostics"].as_array().expect("diagnostics");
    let codes: BTreeSet<&str> = findings.iter().map(|d| d["code"].as_str().expect("code")).collect();
    assert!(codes.len() > 40, "the examples and corpus exercise many rules: {codes:?}");
    for finding in findings {
        let page = page_of(finding["url"].as_str().expect("url"), docs::DEFAULT_BASE);
        assert!(page.ends_with(format!("{}.md", finding["code"].as_str().expect("code"))), "{finding}");
    }
    let sarif = run("sarif");
    let driver = &sarif["runs"][0]["tool"]["driver"];
    assert_eq!(driver["informationUri"], env!("CARGO_PKG_REPOSITORY"));
    for rule in driver["rules"].as_array().expect("rules") {
        page_of(rule["helpUri"].as_str().expect("helpUri"), docs::DEFAULT_BASE);
    }
}

/// `stagelint explain CODE` prints the page, byte for byte.
#[test]
fn explain_prints_the_page() {
    for code in ["sm/UnknownTool", "steps/SR-ENTRY-002", "atomic/UnknownOption"] {
        let output = Command::new(env!("CARGO_BIN_EXE_stagelint")).args(["explain", code]).output().expect("runs");
        assert!(output.status.success());
        let page = std::fs::read_to_string(repo().join(docs::path(code))).expect("the page");
        assert_eq!(String::from_utf8_lossy(&output.stdout), page, "{code}");
    }
}
