//! stagelint over atomic's real workflows and SDK sources (copied under `tests/corpus/atomic/`,
//! see `tests/corpus/NOTICE.md`). The workflows of the seed tag and of the last tag of this API
//! must give nothing at warning or above; the later `@bastani/workflows` dialect and the SDK's
//! own sources are not claimed at all.

mod common;

use std::path::PathBuf;

use stagelint::config::Config;
use stagelint::registry::Severity;
use stagelint::workspace::FileKind;

/// The atomic workflows found under `root` and every finding there, as `path: code message`.
fn check(root: &str) -> (Vec<String>, Vec<String>) {
    let root = PathBuf::from(root);
    let (workspace, diagnostics) = common::check_with(std::slice::from_ref(&root), Config::defaults(&root));
    let owned = workspace
        .files()
        .iter()
        .filter(|f| f.kind == FileKind::AtomicWorkflow)
        .map(|f| f.path.strip_prefix(std::env::current_dir().unwrap().join(&root)).unwrap().display().to_string())
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
fn the_last_tag_of_this_api_is_clean() {
    let (owned, findings) = check("tests/corpus/atomic/_at-v0.5.34");
    assert_eq!(owned.len(), 4, "{owned:#?}");
    assert!(findings.is_empty(), "{findings:#?}");
}

#[test]
fn the_later_dialect_is_not_claimed() {
    let (owned, findings) = check("tests/corpus/atomic/_at-HEAD-6031a92");
    assert!(owned.is_empty(), "{owned:#?}");
    assert!(findings.is_empty(), "{findings:#?}");
}

/// The codes found after editing one corpus workflow, checked at its own layout path.
fn codes_after_edit(path: &str, edits: &[(&str, &str)]) -> Vec<String> {
    let text = std::fs::read_to_string(format!("tests/corpus/atomic/_at-v0.5.24/{path}")).expect("corpus file");
    let mut edited = text.clone();
    for (from, to) in edits {
        assert!(edited.contains(from), "{from:?} is not in {path}");
        edited = edited.replacen(from, to, 1);
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join(".atomic/workflows").join(path.rsplit("workflows/").next().unwrap());
    std::fs::create_dir_all(file.parent().unwrap()).expect("dirs");
    std::fs::write(&file, edited).expect("write");
    let root = dir.path().to_path_buf();
    let (_, diagnostics) = common::check_with(std::slice::from_ref(&root), Config::defaults(&root));
    diagnostics.iter().filter(|d| d.code.starts_with("atomic/")).map(|d| d.code.to_string()).collect()
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
