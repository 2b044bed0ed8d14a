//! stagelint over a real project's files: climpt's whole `.agent/` tree plus its shipped
//! fixtures (copied under `tests/corpus/climpt/`, see `tests/corpus/NOTICE.md`). Every expected
//! finding below was checked by hand against climpt's docs, code and the files themselves.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use stagelint::config::Config;

/// (file, severity, code) → count.
fn findings() -> BTreeMap<(String, &'static str, &'static str), usize> {
    let root = PathBuf::from("tests/corpus/climpt");
    let (workspace, diagnostics) = common::check_with(std::slice::from_ref(&root), Config::defaults(&root));
    let mut counts = BTreeMap::new();
    for d in &diagnostics {
        let file = workspace.file(d.file);
        let path = file.path.strip_prefix(std::env::current_dir().unwrap().join(&root)).unwrap();
        *counts.entry((path.display().to_string(), d.severity.as_str(), d.code)).or_insert(0) += 1;
    }
    counts
}

#[rustfmt::skip]
const EXPECTED: &[(&str, &str, &str, usize)] = &[
    // considerer, detailer, merger and triager: clean.

    // facilitator: real defects. climpt's own flow validator rejects both orphans (nothing
    // routes to `continuation.statuscheck` or `initial.statuscheck.empty`) and the `next` from
    // the work step `initial.report` straight into a closure step. `status.metrics` and
    // `status.delta` are handed off, but `status` is a string in the schema (the object is
    // `status_report`), so those handoff values are never produced.
    (".agent/facilitator/steps_registry.json", "error", "steps/FLOW-OrphanStep", 2),
    (".agent/facilitator/steps_registry.json", "error", "steps/FLOW-KindBoundary", 1),
    (".agent/facilitator/steps_registry.json", "error", "steps/R-D4", 2),
    // climpt's validator warns on handoff from c2=initial steps (design §7.3).
    (".agent/facilitator/steps_registry.json", "warning", "steps/FLOW-HandoffFromInitial", 8),
    // `initial.X` and `continuation.X` declare different uvVariables, but prefix substitution
    // reuses the initial step's variables.
    (".agent/facilitator/steps_registry.json", "warning", "steps/InitialContinuationMismatch", 1),
    // No `prompts/steps/retry/facilitation/` directory: climpt's RetryHandler falls back to a
    // generic message, so these are warnings.
    (".agent/facilitator/steps_registry.json", "warning", "steps/PR-C3L-004", 3),
    // The prompts write `{{project}}`/`{{completed_iterations}}`, which climpt never
    // substitutes (its syntax is `{uv-project}`), so the declared variables go unused.
    (".agent/facilitator/steps_registry.json", "warning", "steps/UnusedUvVariable", 8),
    // `runner.flow.prompts.fallbackDir` is legacy; climpt's `--validate` says `[LEGACY]` too.
    (".agent/facilitator/agent.json", "warning", "steps/LegacyKey", 1),
    // `project` is optional with no default but seven steps use it as a UV variable.
    (".agent/facilitator/agent.json", "warning", "steps/OptionalParamNoDefault", 1),

    // iterator: climpt's own test `flow-validator/integration - iterator` expects the orphan
    // and kind-boundary errors on this registry ("tracked as known debt"): the issue and
    // project flows are not reachable from `entryStepMapping`, and work steps hand off to the
    // work step `initial.project.review`. `continuation.issue` hands off
    // `progress.completed_files`/`progress.pending_tasks`, which `workProgress` does not declare.
    (".agent/iterator/steps_registry.json", "error", "steps/FLOW-OrphanStep", 14),
    (".agent/iterator/steps_registry.json", "error", "steps/FLOW-KindBoundary", 4),
    (".agent/iterator/steps_registry.json", "error", "steps/R-D4", 2),
    (".agent/iterator/steps_registry.json", "warning", "steps/FLOW-HandoffFromInitial", 5),
    // `next` rules that target their own step: climpt says "use repeat".
    (".agent/iterator/steps_registry.json", "warning", "steps/FLOW-NextToSelf", 6),
    (".agent/iterator/steps_registry.json", "warning", "steps/InitialContinuationMismatch", 5),
    // Project-mode variables in steps no entry reaches: no parameter supplies them. Warnings
    // because the steps are unreachable (an error in a reachable step).
    (".agent/iterator/steps_registry.json", "warning", "steps/R-A2", 32),
    // `stepKind: closure` under c2 `initial`/`continuation` (`initial.project.closure`): it runs,
    // but breaks the c2 → stepKind convention.
    (".agent/iterator/steps_registry.json", "warning", "steps/R-B2", 2),
    // `remaining` is declared; the prompt writes `{remaining_text}`.
    (".agent/iterator/steps_registry.json", "warning", "steps/UnusedUvVariable", 1),
    (".agent/iterator/agent.json", "warning", "steps/LegacyKey", 1),

    // reviewer: `initial.default` has `condition: "args.project !== undefined"`, but agent.json
    // declares no `project` parameter, so the condition is always false.
    (".agent/reviewer/steps_registry.json", "error", "steps/R-A5", 1),
    (".agent/reviewer/steps_registry.json", "warning", "steps/FLOW-HandoffFromInitial", 2),
    (".agent/reviewer/steps_registry.json", "warning", "steps/FLOW-NextToSelf", 2),
    (".agent/reviewer/steps_registry.json", "warning", "steps/InitialContinuationMismatch", 1),
    (".agent/reviewer/steps_registry.json", "warning", "steps/PR-C3L-004", 3),
    // The same missing `project` parameter, seen from the uvVariables side.
    (".agent/reviewer/steps_registry.json", "warning", "steps/R-A2", 3),
    (".agent/reviewer/agent.json", "warning", "steps/LegacyKey", 1),

    // The seed-era iterator (climpt 91d13e3): the same flow debt as today's iterator, and its
    // `fallbackKey`s are written `issue_initial_default`-style, which the seed's default
    // template registry does not know (it has `initial_issue`): the step fails at runtime with
    // `No fallback prompt found for key`.
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "error", "steps/FLOW-OrphanStep", 14),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "error", "steps/FLOW-KindBoundary", 4),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "error", "steps/FallbackKeyInvalid", 16),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "warning", "steps/FLOW-HandoffFromInitial", 5),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "warning", "steps/FLOW-NextToSelf", 6),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "warning", "steps/InitialContinuationMismatch", 5),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "warning", "steps/R-B2", 2),

    // climpt's responsibility fixture: gated steps without outputSchemaRef, a validationSteps
    // entry for a step the registry does not have, and failurePattern params that differ from
    // the validator's extractParams.
    ("agents/test-artifacts/responsibility-fixtures/test-steps-registry.json", "error", "steps/SR-GATE-003", 3),
    ("agents/test-artifacts/responsibility-fixtures/test-steps-registry.json", "error", "steps/ValidationStepUnknown", 1),
    ("agents/test-artifacts/responsibility-fixtures/test-steps-registry.json", "warning", "steps/FLOW-NextToSelf", 1),
    ("agents/test-artifacts/responsibility-fixtures/test-steps-registry.json", "warning", "steps/FailurePatternParams", 1),

    // The known-bad fixture: both steps lack uvVariables, usesStdin and edition (what climpt's
    // `--validate` reports as SR-VALID-004); `initial.analysis` has transitions without a gate
    // or output schema, and its `next` goes from a work step straight to a closure step.
    ("examples/45_verify_factory_completionpath/fixtures/steps_registry.json", "error", "steps/SR-VALID-004", 6),
    ("examples/45_verify_factory_completionpath/fixtures/steps_registry.json", "error", "steps/SR-GATE-003", 1),
    ("examples/45_verify_factory_completionpath/fixtures/steps_registry.json", "error", "steps/FLOW-KindBoundary", 1),
];

#[test]
fn climpt_corpus_findings_are_the_checked_ones() {
    let expected: BTreeMap<(String, &str, &str), usize> =
        EXPECTED.iter().map(|(path, severity, code, n)| ((path.to_string(), *severity, *code), *n)).collect();
    let actual = findings();
    let missing: Vec<_> = expected.iter().filter(|(k, n)| actual.get(*k) != Some(n)).collect();
    let extra: Vec<_> = actual.iter().filter(|(k, _)| !expected.contains_key(*k)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "expected but not found (or other count): {missing:#?}\nfound but not expected: {extra:#?}"
    );
}

#[test]
fn the_known_bad_fixture_is_reported_where_its_defects_are() {
    let root = PathBuf::from("tests/corpus/climpt/examples/45_verify_factory_completionpath");
    let (workspace, diagnostics) = common::check_with(std::slice::from_ref(&root), Config::defaults(&root));
    let got: Vec<(String, usize, &str)> = common::lines_and_codes(&workspace, &diagnostics);
    let at = |line: usize, code: &str| got.iter().filter(|(_, l, c)| *l == line && *c == code).count();
    // Step objects open on lines 7 (`initial.analysis`) and 16 (`closure.review`).
    assert_eq!(at(7, "steps/SR-VALID-004"), 3, "{got:?}");
    assert_eq!(at(16, "steps/SR-VALID-004"), 3, "{got:?}");
    assert_eq!(at(7, "steps/SR-GATE-003"), 1, "{got:?}");
    assert_eq!(at(13, "steps/FLOW-KindBoundary"), 1, "{got:?}");
}
