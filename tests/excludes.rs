//! What a run leaves out (issue 32): `[files] exclude` / `extend-exclude` and the command
//! line's `--exclude` / `--extend-exclude`, with ruff's patterns (a name anywhere, a path from
//! the config's directory), the default excludes, nested configs, `force-exclude` for paths
//! named on the command line, and a broken nested config, which is reported while the files it
//! governs are left out and the rest is checked.

mod common;

use std::path::Path;

use common::{stagelint, stderr, stdout, write};

/// A stage with one error (`sm/UnknownTool`) and no other finding.
const BROKEN_STAGE: &str = "---\nid: plan\nname: Plan\nallowedTools: [Read, Grpe]\ncompletionTool: submit_plan\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\n---\n\nTask: {{ctx.task}}. Call submit_plan.\n";

/// The files `check --format concise` reports findings in, sorted, each once.
fn reported(args: &[&str], dir: &Path) -> Vec<String> {
    let mut full = vec!["check", "--format", "concise"];
    full.extend_from_slice(args);
    let output = stagelint(&full, dir);
    assert_ne!(output.status.code(), Some(2), "{}", stderr(&output));
    let mut files: Vec<String> =
        stdout(&output).lines().filter_map(|l| l.split_once(':').map(|(file, _)| file.to_string())).collect();
    files.retain(|f| !f.starts_with("Found ") && !f.starts_with("No findings"));
    files.sort();
    files.dedup();
    files
}

/// The same broken stage in every directory of `dirs` (each its own state machine).
fn machines(dirs: &[&str]) -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("temp dir");
    for dir in dirs {
        write(root.path(), &format!("{dir}/sm.yaml"), "entry: plan\n");
        write(root.path(), &format!("{dir}/plan.md"), BROKEN_STAGE);
    }
    root
}

#[test]
fn default_excludes_skip_tool_directories_and_keep_ours() {
    let root = machines(&["node_modules/pkg", ".venv/lib", "site-packages/x", ".agent/a", "build", "dist", "ok"]);
    let found = reported(&[], root.path());
    assert_eq!(found, [".agent/a/plan.md", "build/plan.md", "dist/plan.md", "ok/plan.md"]);
    // A config that sets `exclude` replaces the defaults; `extend-exclude` adds to them.
    write(root.path(), "stagelint.toml", "[files]\nexclude = [\"build\"]\n");
    let found = reported(&[], root.path());
    assert_eq!(
        found,
        [
            ".agent/a/plan.md",
            ".venv/lib/plan.md",
            "dist/plan.md",
            "node_modules/pkg/plan.md",
            "ok/plan.md",
            "site-packages/x/plan.md"
        ]
    );
    write(root.path(), "stagelint.toml", "[files]\nextend-exclude = [\"build\"]\n");
    assert_eq!(reported(&[], root.path()), [".agent/a/plan.md", "dist/plan.md", "ok/plan.md"]);
}

#[test]
fn a_name_matches_anywhere_and_a_path_from_the_config() {
    let root = machines(&["a/fixtures", "b/deep/fixtures", "legacy", "x/legacy", "keep"]);
    write(root.path(), "keep/notes.draft.md", BROKEN_STAGE);
    write(root.path(), "stagelint.toml", "[files]\nextend-exclude = [\"fixtures\", \"legacy/*\", \"*.draft.md\"]\n");
    // `legacy/*` is anchored at the config: `x/legacy/plan.md` stays.
    let found = reported(&[], root.path());
    assert_eq!(found, ["keep/plan.md", "x/legacy/plan.md"]);
    // The same from a subdirectory: the patterns stay anchored at their config.
    let output = stagelint(&["check", "--format", "concise", "."], &root.path().join("x"));
    assert!(stdout(&output).starts_with("legacy/plan.md:4:"), "{}", stdout(&output));
}

#[test]
fn a_nested_config_excludes_below_it_and_is_excluded_by_the_one_above() {
    let root = machines(&["sub/gen", "sub/kept", "gen", "skipped/inner"]);
    write(root.path(), "stagelint.toml", "[files]\nextend-exclude = [\"skipped\"]\n");
    // The nested config has its own excludes (configs are not merged): `gen` only below it.
    write(root.path(), "sub/stagelint.toml", "[files]\nextend-exclude = [\"gen\"]\n");
    // A config inside an excluded directory does not bring it back.
    write(root.path(), "skipped/stagelint.toml", "[files]\nexclude = []\n");
    assert_eq!(reported(&[], root.path()), ["gen/plan.md", "sub/kept/plan.md"]);
}

#[test]
fn the_command_line_replaces_or_extends_the_excludes() {
    let root = machines(&["node_modules/pkg", "vendor", "old", "ok"]);
    write(root.path(), "stagelint.toml", "[files]\nextend-exclude = [\"vendor\"]\n");
    assert_eq!(reported(&["--extend-exclude", "old"], root.path()), ["ok/plan.md"]);
    // `--exclude` replaces every config's `exclude` (the defaults too), not `extend-exclude`.
    assert_eq!(reported(&["--exclude", "ok,old"], root.path()), ["node_modules/pkg/plan.md"]);
    assert_eq!(reported(&["--exclude", ""], root.path()), ["node_modules/pkg/plan.md", "ok/plan.md", "old/plan.md"]);
    // Patterns with `/` on the command line are anchored at the current directory.
    let output = stagelint(&["check", "--format", "concise", "--extend-exclude", "ok/plan.md", "."], root.path());
    assert!(!stdout(&output).contains("ok/plan.md"), "{}", stdout(&output));
    let output = stagelint(&["check", "--extend-exclude", "a/["], root.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).starts_with("stagelint: --extend-exclude: bad glob:"), "{}", stderr(&output));
}

/// A file named on the command line is checked whatever the excludes say, unless
/// `--force-exclude` or `force-exclude = true`: pre-commit names every staged file.
#[test]
fn force_exclude_applies_the_excludes_to_named_paths() {
    let root = machines(&["vendor/x", "ok"]);
    write(root.path(), "stagelint.toml", "[files]\nextend-exclude = [\"vendor\"]\n");
    let named = ["vendor/x/plan.md", "ok/plan.md"];
    assert_eq!(reported(&named, root.path()), named.iter().rev().copied().collect::<Vec<_>>());
    let mut forced = vec!["--force-exclude"];
    forced.extend(named);
    assert_eq!(reported(&forced, root.path()), ["ok/plan.md"]);
    // A directory named is left out whole.
    assert_eq!(reported(&["--force-exclude", "vendor", "ok"], root.path()), ["ok/plan.md"]);
    write(root.path(), "stagelint.toml", "[files]\nextend-exclude = [\"vendor\"]\nforce-exclude = true\n");
    assert_eq!(reported(&named, root.path()), ["ok/plan.md"]);
    // Standard input named as an excluded file: nothing is checked, and `--fix` gives the text back.
    let output = common::stagelint_stdin(
        &["check", "-", "--stdin-filename", "vendor/x/plan.md", "--fix"],
        root.path(),
        BROKEN_STAGE,
    );
    assert_eq!(stdout(&output), BROKEN_STAGE);
    assert!(stderr(&output).contains("No findings (0 files checked)."), "{}", stderr(&output));
}

/// An excluded prompt that a workflow names is read for the workflow (no missing-file finding)
/// and never reported itself.
#[test]
fn an_excluded_file_another_names_is_read_for_it_not_reported() {
    let root = tempfile::tempdir().expect("temp dir");
    write(root.path(), "workflows/build.yaml", "name: build\nphases:\n  - name: plan\n    prompt: legacy/plan.md\n");
    write(root.path(), "workflows/legacy/plan.md", "Plan {{issueTitel}}.\n");
    assert_eq!(reported(&[], root.path()), ["workflows/legacy/plan.md"]);
    write(root.path(), "stagelint.toml", "[files]\nextend-exclude = [\"legacy\"]\n");
    let output = stagelint(&["check", "--format", "concise"], root.path());
    assert_eq!(stdout(&output), "No findings (1 file checked).\n", "{}", stderr(&output));
}

/// Issue 32: `stagelint check` at a repository root stopped with exit code 2 at a test
/// fixture's broken `stagelint.toml`, and checked nothing else. Now the broken config is a
/// finding, the stage it governs is left out, and the broken stage beside it is reported.
#[test]
fn a_broken_nested_config_beside_a_broken_stage() {
    let root = machines(&["fixtures/bad-config", "pipeline"]);
    write(root.path(), "fixtures/bad-config/stagelint.toml", "[tools]\nregistred = [\"Read\"]\n");
    let output = stagelint(&["check", "--format", "concise"], root.path());
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "fixtures/bad-config/stagelint.toml:2:1: error[stagelint/InvalidConfig] invalid config: unknown key `registred` in `[tools]`; did you mean `registered`?\n\
         pipeline/plan.md:4:22: error[sm/UnknownTool] `Grpe` is not in the live tool set; did you mean `Grep`?\n\
         Found 2 errors (3 files checked). 1 fixable with `--fix --unsafe-fixes`.\n"
    );
    assert_eq!(stagelint(&["check", "--exit-zero"], root.path()).status.code(), Some(0));
    // JSON and SARIF carry the config's finding like any other.
    let json: serde_json::Value =
        serde_json::from_slice(&stagelint(&["check", "--format", "json"], root.path()).stdout).expect("JSON");
    let codes: Vec<&str> =
        json["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["stagelint/InvalidConfig", "sm/UnknownTool"]);
    // Excluded, the broken config is not read at all.
    write(root.path(), "stagelint.toml", "[files]\nextend-exclude = [\"fixtures\"]\n");
    assert_eq!(reported(&[], root.path()), ["pipeline/plan.md"]);
}
