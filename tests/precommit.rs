//! The pre-commit hook (`.pre-commit-hooks.yaml`) under the real `pre-commit`: a temporary git
//! repository whose own git hook runs `pre-commit try-repo <this repository> stagelint`, as a
//! user's installed hook would run the published one. A commit of a broken stage is refused with
//! the finding shown; once it is fixed, the commit goes through.
//!
//! `try-repo` clones this repository at HEAD (with tracked and staged changes committed to a
//! temporary shadow copy, untracked files left out) and `cargo install`s it into a temporary
//! store, so every run builds the crate. The build goes to a stable directory under the target
//! directory, at `opt-level = 0`, so that only the first run compiles the dependencies.
//!
//! The `stagelint-system` hook (`language: system`) runs the `stagelint` on PATH instead; its
//! test puts this build's binary there and commits an atomic workflow, broken and then fixed.
//!
//! CI installs `pre-commit` from PyPI (`.ci/run`); elsewhere the tests are reported as ignored
//! when `pre-commit` or `git` is not on `PATH` (`build.rs`).
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

const BROKEN_STAGE: &str = "---\nid: plan\nname: Plan\nallowedTools: [Read, Grpe]\ncompletionTool: submit_plan\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\n---\n\nTask: {{ctx.task}}. Call submit_plan.\n";

/// The git hook: what `pre-commit install` would write, with `try-repo` instead of a config.
/// Git runs it with the index to commit; `try-repo` checks the staged files.
const GIT_HOOK: &str = "#!/bin/sh\nexec pre-commit try-repo \"$STAGELINT_REPO\" stagelint --verbose\n";

/// The same for the `stagelint-dry-run` hook.
const DRY_RUN_HOOK: &str = "#!/bin/sh\nexec pre-commit try-repo \"$STAGELINT_REPO\" stagelint-dry-run --verbose\n";

fn runs(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// `git` in `dir`, isolated from the environment of an enclosing git command.
fn git(dir: &Path, args: &[&str]) -> Output {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_WORK_TREE")
        .env("STAGELINT_REPO", env!("CARGO_MANIFEST_DIR"))
        // The hook's `cargo install` builds here; the dependencies are compiled once.
        .env("CARGO_TARGET_DIR", target.join("pre-commit-target"))
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env("CARGO_PROFILE_RELEASE_LTO", "false")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        // `try-repo` uses a temporary store; this only keeps pre-commit's log out of ~/.cache.
        .env("PRE_COMMIT_HOME", dir.join(".pre-commit-home"))
        .env("PRE_COMMIT_COLOR", "never")
        .env_remove("NO_COLOR")
        .output()
        .expect("git runs")
}

/// An empty git repository for a hook test, once the tools it needs are known to run (without
/// them the test is ignored, unless STAGELINT_REQUIRE_TOOLS says they must be there, as in CI).
fn repository() -> tempfile::TempDir {
    for tool in ["pre-commit", "git"] {
        assert!(runs(tool), "{tool} does not run, and STAGELINT_REQUIRE_TOOLS requires it (see .ci/run)");
    }
    let temp = tempfile::tempdir().expect("temp dir");
    ok(temp.path(), &["init", "--quiet"]);
    temp
}

/// Makes `hook` the repository's own pre-commit hook (as `pre-commit install` would), with a
/// committer configured.
fn install_git_hook(dir: &Path, hook: &str) {
    ok(dir, &["config", "user.name", "stagelint test"]);
    ok(dir, &["config", "user.email", "test@stagelint.invalid"]);
    ok(dir, &["config", "commit.gpgsign", "false"]);
    ok(dir, &["config", "core.hooksPath", "githooks"]);
    let path = dir.join("githooks/pre-commit");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, hook).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn ok(dir: &Path, args: &[&str]) {
    let output = git(dir, args);
    assert!(output.status.success(), "git {args:?}: {}", text(&output));
}

#[test]
#[cfg_attr(
    not(all(tool_pre_commit, tool_git)),
    ignore = "pre-commit or git is not on PATH (CI installs them: .ci/run)"
)]
fn commit_of_a_broken_stage_is_refused_and_a_fixed_one_goes_through() {
    let temp = repository();
    let dir = temp.path();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(
        git(repo, &["rev-parse", "--verify", "HEAD"]).status.success(),
        "try-repo needs this repository as a git checkout with a commit"
    );
    install_git_hook(dir, GIT_HOOK);

    std::fs::write(dir.join("sm.yaml"), "entry: plan\n").unwrap();
    std::fs::write(dir.join("plan.md"), BROKEN_STAGE).unwrap();
    // Markdown that is not a definition is passed to the hook too, and ignored.
    std::fs::write(dir.join("README.md"), "# Notes\n\nNot a stage.\n").unwrap();
    ok(dir, &["add", "sm.yaml", "plan.md", "README.md"]);

    let refused = git(dir, &["commit", "--quiet", "-m", "broken stage"]);
    let report = text(&refused);
    assert!(!refused.status.success(), "the commit must be refused: {report}");
    assert!(report.contains("stagelint") && report.contains("Failed"), "{report}");
    assert!(report.contains("sm/UnknownTool"), "the finding is shown: {report}");
    assert!(report.contains("plan.md:4:"), "with its position: {report}");
    assert!(report.contains("did you mean `Grep`?"), "{report}");
    assert!(!git(dir, &["rev-parse", "--verify", "--quiet", "HEAD"]).status.success(), "nothing was committed");

    std::fs::write(dir.join("plan.md"), BROKEN_STAGE.replace("Grpe", "Grep")).unwrap();
    ok(dir, &["add", "plan.md"]);
    let accepted = git(dir, &["commit", "--quiet", "-m", "fixed stage"]);
    let report = text(&accepted);
    assert!(accepted.status.success(), "the fixed stage is committed: {report}");
    assert!(report.contains("Passed"), "{report}");
    // `--verbose` shows the hook's output: the files were checked, not skipped.
    assert!(report.contains("No findings (2 files checked)."), "{report}");
    ok(dir, &["rev-parse", "--verify", "HEAD"]);
}

/// `stagelint-dry-run`: a commit that changes a stage so that its cassette no longer replays
/// (the completion tool renamed) is refused with the cassette's line; restoring it goes through.
#[test]
#[cfg_attr(
    not(all(tool_pre_commit, tool_git)),
    ignore = "pre-commit or git is not on PATH (CI installs them: .ci/run)"
)]
fn the_dry_run_hook_refuses_a_stage_its_cassette_no_longer_replays() {
    let temp = repository();
    let dir = temp.path();
    install_git_hook(dir, DRY_RUN_HOOK);
    let fixed = BROKEN_STAGE.replace("Grpe", "Grep");
    let cassette = "cassette: 1\nstage: plan\nctx: { task: t }\nattempts:\n  - turns:\n      - response:\n          content:\n            - toolCall: { id: c1, name: submit_plan, args: {} }\n        expect: [ { branch: completion, call: c1 } ]\n";
    std::fs::write(dir.join("plan.md"), fixed.replace("submit_plan", "finish")).unwrap();
    std::fs::write(dir.join("plan.cassette.yaml"), cassette).unwrap();
    ok(dir, &["add", "plan.md", "plan.cassette.yaml"]);
    let refused = git(dir, &["commit", "--quiet", "-m", "renamed completion tool"]);
    let report = text(&refused);
    assert!(!refused.status.success(), "the commit must be refused: {report}");
    assert!(report.contains("✗ plan.cassette.yaml: stage plan"), "{report}");
    assert!(report.contains("cassette/ExpectationFailed"), "{report}");
    std::fs::write(dir.join("plan.md"), &fixed).unwrap();
    ok(dir, &["add", "plan.md"]);
    let accepted = git(dir, &["commit", "--quiet", "-m", "completion tool back"]);
    let report = text(&accepted);
    assert!(accepted.status.success(), "{report}");
    assert!(report.contains("Total: 1 cassette, 1 replayed, 1 passed"), "{report}");
}

const BROKEN_WORKFLOW: &str = "import { defineWorkflow } from \"@bastani/atomic/workflows\";\n\nexport default defineWorkflow({ name: \"hello\" })\n  .for<\"claude\">()\n  .compile();\n";

const RUN: &str = "  .run(async (ctx) => {\n    await ctx.stage({ name: \"greet\" }, {}, {}, async (s) => {\n      await s.session.query(\"Say hello.\");\n      s.save(s.sessionId);\n    });\n  })\n";

/// `pre-commit try-repo <this repository> stagelint-system` in `dir`: the `language: system` hook,
/// which runs the `stagelint` on PATH (here the one this test suite built), on the staged files.
fn try_system_hook(dir: &Path) -> Output {
    let binary = Path::new(env!("CARGO_BIN_EXE_stagelint"));
    let path = std::env::join_paths(
        std::iter::once(binary.parent().expect("the binary's directory").to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .expect("PATH");
    Command::new("pre-commit")
        .args(["try-repo", env!("CARGO_MANIFEST_DIR"), "stagelint-system", "--verbose"])
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_WORK_TREE")
        .env("PRE_COMMIT_HOME", dir.join(".pre-commit-home"))
        .env("PRE_COMMIT_COLOR", "never")
        .output()
        .expect("pre-commit runs")
}

/// The fast path: no build, the binary the user has. An atomic workflow without `.run()` is
/// refused with its finding; with it, the hook passes (the TypeScript is matched at all).
#[test]
#[cfg_attr(
    not(all(tool_pre_commit, tool_git)),
    ignore = "pre-commit or git is not on PATH (CI installs them: .ci/run)"
)]
fn the_system_hook_checks_a_staged_atomic_workflow() {
    let temp = repository();
    let dir = temp.path();
    let workflow = dir.join(".atomic/workflows/hello/claude/index.ts");
    std::fs::create_dir_all(workflow.parent().unwrap()).unwrap();
    std::fs::write(&workflow, BROKEN_WORKFLOW).unwrap();
    // TypeScript that is not a workflow is passed too, and ignored.
    std::fs::write(dir.join("util.ts"), "export const answer = 42;\n").unwrap();
    ok(dir, &["add", "."]);

    let refused = try_system_hook(dir);
    let report = text(&refused);
    assert!(!refused.status.success(), "the broken workflow fails the hook: {report}");
    assert!(report.contains("Failed") && report.contains("atomic/MissingRun"), "{report}");
    assert!(report.contains(".atomic/workflows/hello/claude/index.ts:5:4"), "with its position: {report}");

    std::fs::write(&workflow, BROKEN_WORKFLOW.replace("  .compile();\n", &format!("{RUN}  .compile();\n"))).unwrap();
    ok(dir, &["add", "."]);
    let passed = try_system_hook(dir);
    let report = text(&passed);
    assert!(passed.status.success(), "the fixed workflow passes: {report}");
    assert!(report.contains("Passed") && report.contains("No findings (1 file checked)."), "{report}");
}
