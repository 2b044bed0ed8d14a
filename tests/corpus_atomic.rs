//! stagelint over atomic's real workflows and SDK sources (copied under `tests/corpus/atomic/`,
//! see `tests/corpus/NOTICE.md`), one corpus per dialect: v0.5 (`_at-v0.5.24`, `_at-v0.5.34`),
//! 0.6–0.7 (`_at-v0.7.17`), 0.8's builder (`_at-0.8.24`, `_at-0.8.30`) and 0.9's
//! `workflow({...})` (`_at-0.9.15`, `_at-HEAD-6031a92`). Each tag's builtin and example
//! workflows give nothing at warning or above on the release they were written for; the SDK's
//! own sources are not claimed. The 0.8 files checked as 0.9 get the migration, and its fixes
//! give files the 0.9 rules accept.

mod common;

use std::path::{Path, PathBuf};

use stagelint::config::Config;
use stagelint::registry::Severity;
use stagelint::workspace::FileKind;

/// The corpus's own `stagelint.toml` when it has one (atomic's repository runs its workflows on
/// the workspace's SDK, which only `[atomic] sdk-version` can state), else the defaults.
fn config(root: &Path) -> Config {
    let own = root.join("stagelint.toml");
    if own.is_file() { Config::load(&own).expect("corpus config") } else { Config::defaults(root) }
}

/// The atomic workflows found under `root` and every finding there, as `path: code message`.
fn check(root: &str) -> (Vec<String>, Vec<String>) {
    check_in(&PathBuf::from(root), config(Path::new(root)))
}

fn check_in(root: &Path, config: Config) -> (Vec<String>, Vec<String>) {
    let (workspace, diagnostics) = common::check_with(&[root.to_path_buf()], config);
    let base = if root.is_absolute() { root.to_path_buf() } else { std::env::current_dir().unwrap().join(root) };
    let owned = workspace
        .files()
        .iter()
        .filter(|f| f.kind == FileKind::AtomicWorkflow)
        .map(|f| f.path.strip_prefix(&base).unwrap_or(&f.path).display().to_string())
        .collect();
    let findings = diagnostics
        .iter()
        .filter(|d| d.severity >= Severity::Warning || d.code.starts_with("atomic/"))
        .map(|d| format!("{}: {} {}", workspace.file(d.file).display, d.code, d.message))
        .collect();
    (owned, findings)
}

#[test]
fn the_seed_tag_is_clean() {
    let (owned, findings) = check("tests/corpus/atomic/_at-v0.5.24");
    // 5 example workflows and the 2 builtins (`ralph`, `deep-research-codebase`), each for 3 agents.
    assert_eq!(owned.len(), 21, "{owned:#?}");
    assert!(owned.iter().all(|p| p.ends_with("/index.ts")), "{owned:#?}");
    // Not claimed: the SDK (`define-workflow.ts` shows `export default defineWorkflow` in JSDoc,
    // `define-workflow.test.ts` is invalid on purpose), helpers, the CLI.
    assert!(!owned.iter().any(|p| p.contains("helpers/") || p.ends_with(".test.ts")), "{owned:#?}");
    assert!(findings.is_empty(), "{findings:#?}");
}

#[test]
fn the_last_tag_of_the_seed_api_is_clean() {
    let (owned, findings) = check("tests/corpus/atomic/_at-v0.5.34");
    assert_eq!(owned.len(), 4, "{owned:#?}");
    assert!(findings.is_empty(), "{findings:#?}");
}

/// 0.7's builtins take the agent as `.for("claude")` and an input of type `"integer"`, and its
/// OpenCode sessions a `permission` option: all valid there, none in v0.5. The SDK package's own
/// `package.json` (`@bastani/atomic-sdk` 0.7.17) says which release they are.
#[test]
fn the_sdk_line_is_clean() {
    let (owned, findings) = check("tests/corpus/atomic/_at-v0.7.17");
    assert_eq!(owned.len(), 4, "{owned:#?}");
    assert!(findings.is_empty(), "{findings:#?}");
    // The same file as v0.5 reports what 0.6 added.
    let ralph = "packages/atomic-sdk/src/workflows/builtin/ralph/opencode/index.ts";
    let codes = codes_at("_at-v0.7.17", ralph, ".atomic/workflows/ralph/opencode/index.ts", &[]);
    assert!(codes.iter().any(|c| c == "atomic/InvalidOptionValue"), "{codes:?}");
    assert!(codes.iter().any(|c| c == "atomic/UnknownOption"), "{codes:?}");
}

#[test]
fn the_builder_tags_are_clean_on_their_own_release() {
    let (owned, findings) = check("tests/corpus/atomic/_at-0.8.24");
    assert_eq!(owned.len(), 13, "{owned:#?}");
    assert!(findings.is_empty(), "{findings:#?}");
    let (owned, findings) = check("tests/corpus/atomic/_at-0.8.30");
    // The 2 release workflows (not their `lib/` helpers) and the 4 builtins.
    assert_eq!(owned.len(), 6, "{owned:#?}");
    assert!(!owned.iter().any(|p| p.contains("/lib/")), "{owned:#?}");
    assert!(findings.is_empty(), "{findings:#?}");
}

#[test]
fn the_current_tags_are_clean() {
    let (owned, findings) = check("tests/corpus/atomic/_at-0.9.15");
    // The 9 builtins and the 2 release workflows.
    assert_eq!(owned.len(), 11, "{owned:#?}");
    assert!(!owned.iter().any(|p| p.contains("/lib/")), "{owned:#?}");
    assert!(findings.is_empty(), "{findings:#?}");
    let (owned, findings) = check("tests/corpus/atomic/_at-HEAD-6031a92");
    assert_eq!(owned.len(), 3, "{owned:#?}");
    assert!(findings.is_empty(), "{findings:#?}");
}

/// The 0.8 workflows where a project runs 0.9: each is reported once (an error, since 0.9 is
/// required), and applying the fixes gives files the 0.9 rules accept.
#[test]
fn the_migration_converts_the_builder_tags() {
    for tag in ["_at-0.8.24", "_at-0.8.30"] {
        let dir = tempfile::tempdir().expect("temp dir");
        let from = PathBuf::from("tests/corpus/atomic").join(tag).join(".atomic/workflows");
        copy_dir(&from, &dir.path().join(".atomic/workflows"));
        std::fs::write(dir.path().join("stagelint.toml"), "[atomic]\nsdk-version = \"0.9.15\"\n").unwrap();
        let root = dir.path().to_path_buf();
        let (workspace, diagnostics) = common::check_with(std::slice::from_ref(&root), config(&root));
        let removed: Vec<_> = diagnostics.iter().filter(|d| d.code == "atomic/BuilderRemoved").collect();
        let workflows = workspace.files().iter().filter(|f| f.kind == FileKind::AtomicWorkflow).count();
        assert_eq!(removed.len(), workflows, "{tag}: one per file: {diagnostics:#?}");
        assert!(removed.iter().all(|d| d.severity == Severity::Error && d.fix.is_some()), "{tag}: {removed:#?}");
        let others: Vec<_> = diagnostics.iter().filter(|d| d.code != "atomic/BuilderRemoved").map(|d| d.code).collect();
        assert!(others.is_empty(), "{tag}: only the builder is reported: {others:?}");
        for d in &removed {
            let file = workspace.file(d.file);
            let edits: Vec<_> = d.fix.as_ref().unwrap().edits.iter().map(|(_, e)| e.clone()).collect();
            std::fs::write(&file.path, stagelint::fix::apply_edits(&file.text, &edits)).unwrap();
        }
        let (owned, findings) = check_in(&root, config(&root));
        assert_eq!(owned.len(), workflows, "{tag}: the migrated files are still workflows");
        let migrated = std::fs::read_to_string(root.join(".atomic/workflows").join(&owned[0])).unwrap_or_default()
            + &std::fs::read_to_string(root.join(&owned[0])).unwrap_or_default();
        assert!(migrated.contains("workflow({") && !migrated.contains(".compile()"), "{tag}: {migrated}");
        assert!(findings.is_empty(), "{tag}: the migrated files: {findings:#?}");
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The codes found after editing one corpus workflow, checked alone at `at` in a fresh directory.
fn codes_at(tag: &str, path: &str, at: &str, edits: &[(&str, &str)]) -> Vec<String> {
    let text = std::fs::read_to_string(format!("tests/corpus/atomic/{tag}/{path}")).expect("corpus file");
    let mut edited = text.clone();
    for (from, to) in edits {
        assert!(edited.contains(from), "{from:?} is not in {path}");
        edited = edited.replacen(from, to, 1);
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join(at);
    std::fs::create_dir_all(file.parent().unwrap()).expect("dirs");
    std::fs::write(&file, edited).expect("write");
    let root = dir.path().to_path_buf();
    let (_, diagnostics) = common::check_with(std::slice::from_ref(&root), Config::defaults(&root));
    diagnostics.iter().filter(|d| d.code.starts_with("atomic/")).map(|d| d.code.to_string()).collect()
}

/// The codes found after editing one v0.5.24 corpus workflow, checked at its own layout path.
fn codes_after_edit(path: &str, edits: &[(&str, &str)]) -> Vec<String> {
    let at = format!(".atomic/workflows/{}", path.rsplit("workflows/").next().unwrap());
    codes_at("_at-v0.5.24", path, &at, edits)
}

/// The stage rules are silent on the corpus because its graph is sound, not because they
/// cannot read it: one edit to a real workflow makes each fire.
#[test]
fn the_stage_rules_read_the_corpus_shapes() {
    let hello = ".atomic/workflows/parallel-hello-world/claude/index.ts";
    // `formal` and `casual` are `Promise.all` siblings.
    let sibling = codes_after_edit(
        hello,
        &[(
            "const prior = await s.transcript(greet);\n          await s.session.query(\n            `Read ${prior.path} and rewrite it as a casual",
            "const prior = await s.transcript(\"formal\");\n          await s.session.query(\n            `Read ${prior.path} and rewrite it as a casual",
        )],
    );
    assert_eq!(sibling, ["atomic/TranscriptNotReady"]);
    // Without `await`, `greet` holds a promise: both reads of it fail.
    let pending = codes_after_edit(hello, &[("const greet = await ctx.stage(", "const greet = ctx.stage(")]);
    assert_eq!(pending, ["atomic/TranscriptNotReady", "atomic/TranscriptNotReady"]);
    let unknown = codes_after_edit(hello, &[("await s.transcript(formal)", "await s.transcript(\"formall\")")]);
    assert_eq!(unknown, ["atomic/UnknownStageRef"]);
    let dropped = codes_after_edit(
        hello,
        &[("    await ctx.stage(\n      { name: \"merge\"", "    ctx.stage(\n      { name: \"merge\"")],
    );
    assert_eq!(dropped, ["atomic/UnawaitedStage"]);
    let twice = codes_after_edit(hello, &[("{ name: \"merge\"", "{ name: \"greet\"")]);
    assert_eq!(twice, ["atomic/DuplicateStageName"]);
    // The scout's transcript is read after the fan-out; without its save there is none.
    let research = "src/sdk/workflows/builtin/deep-research-codebase/claude/index.ts";
    let unsaved = codes_after_edit(
        research,
        &[(
            "              partitionPreview: partitions,\n            }),\n          );\n          s.save(s.sessionId);",
            "              partitionPreview: partitions,\n            }),\n          );",
        )],
    );
    assert_eq!(unsaved, ["atomic/ReadUnsavedStage"]);
}

/// A file named alone (pre-commit names the staged files) gets the findings a check of its
/// whole tree gives it: the workflows that import a child workflow are read with it, so it is
/// not reported as never running.
#[test]
fn a_workflow_named_alone_gets_the_findings_of_its_tree() {
    for root in ["examples/atomic", "tests/corpus/atomic/_at-0.9.15", "tests/corpus/atomic/_at-HEAD-6031a92"] {
        let root = common::repo().join(root);
        let (workspace, whole) = common::check_with(std::slice::from_ref(&root), config(&root));
        let on =
            |workspace: &stagelint::workspace::Workspace, found: &[stagelint::diagnostic::Diagnostic], path: &Path| {
                let mut out: Vec<String> = found
                    .iter()
                    .filter(|d| workspace.file(d.file).path == path)
                    .map(|d| format!("{}:{} {}", d.span.start, d.code, d.message))
                    .collect();
                out.sort();
                out
            };
        let files: Vec<PathBuf> = workspace
            .files()
            .iter()
            .filter(|f| f.kind == FileKind::AtomicWorkflow && f.reported)
            .map(|f| f.path.clone())
            .collect();
        assert!(files.len() >= 2, "{}: {files:?}", root.display());
        for path in files {
            let (alone_ws, alone) = common::check_with(std::slice::from_ref(&path), config(&root));
            assert_eq!(on(&alone_ws, &alone, &path), on(&workspace, &whole, &path), "{}", path.display());
        }
    }
}
