//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use stagelint::config::{Config, Level};
use stagelint::diagnostic::Diagnostic;
use stagelint::workspace::Workspace;
use stagelint::workspace::discover::{ConfigCache, discover};

/// Checks `paths` with `config` for every file (no discovery of `stagelint.toml`).
pub fn check_with(paths: &[PathBuf], config: Config) -> (Workspace, Vec<Diagnostic>) {
    let mut configs = ConfigCache::new(Some(config));
    let workspace = discover(paths, &mut configs).expect("config is valid");
    let diagnostics = stagelint::check::check(&workspace);
    (workspace, diagnostics)
}

/// The fixture's own `stagelint.toml` when it has one, else the defaults.
pub fn fixture_config(dir: &Path) -> Config {
    let path = dir.join("stagelint.toml");
    if path.is_file() { Config::load(&path).expect("fixture config parses") } else { Config::defaults(dir) }
}

/// Turns every rule off except `code`, which keeps its default severity.
pub fn only(mut config: Config, code: &str) -> Config {
    config.rules.clear();
    for family in stagelint::families::FAMILIES {
        config.rules.insert(family.name().to_string(), Level::Off);
    }
    let rule = stagelint::families::rule(code).expect("known code");
    config.rules.insert(rule.code.to_string(), Level::On);
    config
}

/// Renders diagnostics in the `full` format without color.
pub fn render_full(workspace: &Workspace, diagnostics: &[Diagnostic]) -> String {
    let mut out = Vec::new();
    stagelint::diagnostic::render::full::render(&mut out, workspace, diagnostics, false).expect("render");
    String::from_utf8(out).expect("utf-8")
}

pub fn render_json(workspace: &Workspace, diagnostics: &[Diagnostic]) -> String {
    let mut out = Vec::new();
    stagelint::diagnostic::render::json::render(&mut out, workspace, diagnostics).expect("render");
    String::from_utf8(out).expect("utf-8")
}

/// `line:code` pairs, for precise assertions.
pub fn lines_and_codes(workspace: &Workspace, diagnostics: &[Diagnostic]) -> Vec<(String, usize, &'static str)> {
    diagnostics
        .iter()
        .map(|d| {
            let file = workspace.file(d.file);
            let at = file.lines.line_col(&file.text, d.span.start);
            (file.path.file_name().unwrap().to_string_lossy().into_owned(), at.line, d.code)
        })
        .collect()
}
