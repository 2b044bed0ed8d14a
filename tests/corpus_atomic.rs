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
