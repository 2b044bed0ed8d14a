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
        // The trees of climpt's releases have their own test (`tests/corpus_releases.rs`).
        if path.to_string_lossy().starts_with("_at-v") {
            continue;
        }
        *counts.entry((path.display().to_string(), d.severity.as_str(), d.code)).or_insert(0) += 1;
    }
    counts
}

#[rustfmt::skip]
const EXPECTED: &[(&str, &str, &str, usize)] = &[
    // Every warning and error below is a runtime defect: climpt's runtime fails, ignores what
    // the file says, or sends the model something other than intended. Info is what only
    // `--validate` or the blueprint's conventions object to, or a defect in a step no run
    // resolves today. Upstream paths are climpt's, at 4af87ad unless `91d:` says otherwise.

    // considerer, detailer, merger and triager: clean.

    // ---- facilitator ----
    // `status.metrics`/`status.delta` are handed off, but `status` is a string in the schema
    // (the object is `status_report`): the model's output never has them, and
    // `runner/step-gate-interpreter.ts` `extractHandoff` warns and passes nothing on each time.
    (".agent/facilitator/steps_registry.json", "error", "steps/R-D4", 2),
    // `validationSteps.closure.facilitation` never runs: the completion loop validates with
    // the entry of the agent's verdict type, `closure.structured` for `detect:structured`
    // (`runner/validation-chain.ts` `VERDICT_CLOSURE_MAP`, `completion-loop-processor.ts`
    // `getClosureStepId`), whichever closure step emits `closing`; so its missing retry prompts
    // are never asked for either.
    (".agent/facilitator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
    // `runner.flow.prompts.fallbackDir`: `config/defaults.ts` `applyDefaults` rebuilds
    // `prompts` without it, so climpt ignores the key (and `--validate` never sees it).
    (".agent/facilitator/agent.json", "warning", "steps/LegacyKey", 1),
    // `project` is optional with no default, yet seven steps declare it in `uvVariables`: a run
    // without `--project` throws PR-RESOLVE-003 at the first of them
    // (`common/prompt-resolver.ts` `substituteVariables`, required-UV check).
    (".agent/facilitator/agent.json", "warning", "steps/OptionalParamNoDefault", 1),
    // The step prompts write Handlebars (`#{{project}}`, `{{#if label_info}}`, ...):
    // `PromptResolver` fills only `{uv-x}` and `{input_text}` and breakdown leaves unknown
    // names, so the model gets the braces verbatim (`common/prompt-resolver.ts`; `{{…}}` is
    // filled only by `retry/param-injector.ts`, for retry prompts). Five of the declared
    // `project` variables are among them (UnusedUvVariable stays silent: one defect).
    (".agent/facilitator/prompts/steps/initial/statuscheck/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 9),
    (".agent/facilitator/prompts/steps/initial/blockercheck/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 2),
    (".agent/facilitator/prompts/steps/initial/stalecheck/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 2),
    (".agent/facilitator/prompts/steps/initial/judge/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
    (".agent/facilitator/prompts/steps/initial/facilitate/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 3),
    (".agent/facilitator/prompts/steps/initial/report/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 3),
    // The same in the prompts of the two orphan steps, which no run resolves.
    (".agent/facilitator/prompts/steps/initial/statuscheck/f_default_empty.md", "info", "steps/UnsubstitutedPlaceholder", 5),
    (".agent/facilitator/prompts/steps/continuation/statuscheck/f_default.md", "info", "steps/UnsubstitutedPlaceholder", 1),
    // `--validate` only: the router routes a handoff from an initial step and logs it; it does
    // not check target kinds (`initial.report` → `closure.facilitation` runs); the orphans
    // never run; each step resolves with its own `uvVariables`.
    (".agent/facilitator/steps_registry.json", "info", "steps/FLOW-HandoffFromInitial", 8),
    (".agent/facilitator/steps_registry.json", "info", "steps/FLOW-KindBoundary", 1),
    (".agent/facilitator/steps_registry.json", "info", "steps/FLOW-OrphanStep", 2),
    (".agent/facilitator/steps_registry.json", "info", "steps/InitialContinuationMismatch", 1),

    // ---- iterator ----
    // `continuation.issue` hands off `progress.completed_files`/`progress.pending_tasks`, which
    // `workProgress` does not declare: never in the output, warned and dropped at each handoff.
    (".agent/iterator/steps_registry.json", "error", "steps/R-D4", 2),
    (".agent/iterator/agent.json", "warning", "steps/LegacyKey", 1),
    // The `poll:state` flow (agent.json's verdict type): the entry prompt's `{issue_content}`
    // and the polling prompts' `{summary_section}` are frontmatter `customVariables`, which no
    // caller supplies (`runner/closure-manager.ts` `resolveFlowStepPrompt` passes only `uv`), so
    // the model gets the placeholder text.
    (".agent/iterator/prompts/steps/initial/polling/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
    (".agent/iterator/prompts/steps/continuation/polling/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
    // The closure prompt is the `label-only` variant: agent.json's `defaultClosureAction` is
    // `label-only`, which `runner/closure-adapter.ts` passes as the adaptation, so breakdown
    // sends `f_default_label-only.md` (its `{summary_section}` verbatim) and never `f_default.md`.
    (".agent/iterator/prompts/steps/closure/polling/f_default_label-only.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
    (".agent/iterator/prompts/steps/closure/polling/f_default.md", "info", "steps/UnsubstitutedPlaceholder", 1),
    // The `count:iteration` flow, which `entryStepMapping` maps (a run in that mode sends
    // `{summary_section}`/`{remaining_text}` verbatim) ...
    (".agent/iterator/prompts/steps/continuation/iteration/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 2),
    (".agent/iterator/prompts/steps/closure/iteration/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
    // ... and whose `initial.iteration` declares `iterations`, which no channel supplies: a run
    // in that mode throws PR-RESOLVE-003 there (warning: agent.json selects `poll:state`).
    (".agent/iterator/steps_registry.json", "warning", "steps/R-A2", 1),
    // The issue and project flows, which no entry reaches, and `section.projectcontext`, which
    // the runner never resolves: the same placeholders and 31 unsupplied variables, latent.
    (".agent/iterator/prompts/steps/initial/issue/f_default.md", "info", "steps/UnsubstitutedPlaceholder", 3),
    (".agent/iterator/prompts/steps/continuation/issue/f_default.md", "info", "steps/UnsubstitutedPlaceholder", 3),
    (".agent/iterator/prompts/steps/closure/issue/f_default.md", "info", "steps/UnsubstitutedPlaceholder", 1),
    (".agent/iterator/prompts/steps/closure/issue/f_default_label-only.md", "info", "steps/UnsubstitutedPlaceholder", 1),
    // `validationSteps.closure.issue` never runs: `poll:state` validates with `closure.polling`.
    (".agent/iterator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
    (".agent/iterator/prompts/steps/initial/project/f_again.md", "info", "steps/UnsubstitutedPlaceholder", 2),
    (".agent/iterator/prompts/steps/initial/project/f_preparation.md", "info", "steps/UnsubstitutedPlaceholder", 3),
    (".agent/iterator/prompts/steps/initial/project/f_preparation_empty.md", "info", "steps/UnsubstitutedPlaceholder", 2),
    (".agent/iterator/prompts/steps/initial/project/f_processing_empty.md", "info", "steps/UnsubstitutedPlaceholder", 2),
    (".agent/iterator/prompts/steps/initial/project/f_review.md", "info", "steps/UnsubstitutedPlaceholder", 1),
    (".agent/iterator/steps_registry.json", "info", "steps/R-A2", 31),
    // climpt's own test `flow-validator/integration - iterator` expects these `--validate`
    // findings ("tracked as known debt"); the runtime routes them (or never reaches them).
    (".agent/iterator/steps_registry.json", "info", "steps/FLOW-OrphanStep", 14),
    (".agent/iterator/steps_registry.json", "info", "steps/FLOW-KindBoundary", 4),
    (".agent/iterator/steps_registry.json", "info", "steps/FLOW-HandoffFromInitial", 5),
    (".agent/iterator/steps_registry.json", "info", "steps/FLOW-NextToSelf", 6),
    (".agent/iterator/steps_registry.json", "info", "steps/InitialContinuationMismatch", 5),
    // `stepKind: closure` under c2 `initial`/`continuation`: the runtime follows stepKind.
    (".agent/iterator/steps_registry.json", "info", "steps/R-B2", 2),
    // `continuation.iteration` declares `remaining` (supplied at run time) and writes
    // `{remaining_text}` (reported above): nothing fails, the value is just never sent.
    (".agent/iterator/steps_registry.json", "info", "steps/UnusedUvVariable", 1),

    // ---- reviewer ----
    // Two steps carry a step-level `condition` (`initial.default` reads `args.project`, which
    // agent.json does not declare): climpt never evaluates one (only transition rules have a
    // `condition`, `runner/workflow-router.ts`), so the file's selection is ignored.
    (".agent/reviewer/steps_registry.json", "warning", "steps/R-A5", 2),
    // As in the facilitator: `validationSteps.closure.review` never runs (`poll:state`
    // validates with `closure.polling`), and so neither do its retry prompts.
    (".agent/reviewer/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
    // `initial.default` (the `count:iteration` entry) declares `project`,
    // `requirements_label`, `review_label`: no parameter supplies them, so a run in that mode
    // throws PR-RESOLVE-003; and its prompt's custom variables reach the model verbatim.
    (".agent/reviewer/steps_registry.json", "warning", "steps/R-A2", 3),
    (".agent/reviewer/prompts/steps/initial/default/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 3),
    // The `poll:state` entry prompt writes `{issue_content}`, which nothing supplies.
    (".agent/reviewer/prompts/steps/initial/issue/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
    (".agent/reviewer/agent.json", "warning", "steps/LegacyKey", 1),
    (".agent/reviewer/steps_registry.json", "info", "steps/FLOW-HandoffFromInitial", 2),
    (".agent/reviewer/steps_registry.json", "info", "steps/FLOW-NextToSelf", 2),
    (".agent/reviewer/steps_registry.json", "info", "steps/InitialContinuationMismatch", 1),

    // ---- climpt 91d13e3 (the seed-era format) ----
    // The breakdown configs allow only c2 `initial|closure` and c3 `task` (iterator), so
    // breakdown rejects the prompt path of every step; climpt then uses the step's
    // `fallbackKey` (91d: `common/prompt-resolver.ts` `useFallback`), and an unknown key throws
    // PR-RESOLVE-002 (`agents/prompts/fallback.ts` has 26 keys; `issue_initial_default` is not
    // one). Errors for the `poll:state` flow, warnings for the `count:iteration` one, info for
    // steps no entry reaches and `section.projectcontext`.
    // The tree's deno.json says 1.13.14: the release range 1.13.7 to 1.13.14.
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "error", "steps/C3lPatternMismatch", 6),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "warning", "steps/C3lPatternMismatch", 4),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "info", "steps/C3lPatternMismatch", 22),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "error", "steps/FallbackKeyInvalid", 2),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "warning", "steps/FallbackKeyInvalid", 2),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "info", "steps/FallbackKeyInvalid", 12),
    // The same undeclared handoff fields as today's iterator, and `iterations` unsupplied in
    // the `count:iteration` flow.
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "error", "steps/R-D4", 2),
    // 1.13.14's runner passes no `remaining` either (91d13e3 itself adds it, after the 1.13.14
    // bump: a tree between two tags reads as the version it says).
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "warning", "steps/R-A2", 2),
    // `closure.issue` is not the `poll:state` entry (`closure.polling`): never runs.
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "info", "steps/R-A2", 31),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "info", "steps/FLOW-OrphanStep", 14),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "info", "steps/FLOW-KindBoundary", 4),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "info", "steps/FLOW-HandoffFromInitial", 5),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "info", "steps/FLOW-NextToSelf", 6),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "info", "steps/InitialContinuationMismatch", 5),
    ("_at-91d13e3/.agent/iterator/steps_registry.json", "info", "steps/R-B2", 2),
    // reviewer 91d: the user.yml allows c2 `initial|closure` and c3 `review` only, so every
    // step but `closure.review` and the `retry` validation step cannot load their prompts; the two steps' `initial_default`/`continuation_default` (lines 159 and 189) are
    // not keys of 91d's `fallback.ts`, so a `count:iteration` run throws PR-RESOLVE-002 there.
    ("_at-91d13e3/.agent/reviewer/steps_registry.json", "error", "steps/C3lPatternMismatch", 3),
    ("_at-91d13e3/.agent/reviewer/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
    ("_at-91d13e3/.agent/reviewer/steps_registry.json", "warning", "steps/C3lPatternMismatch", 3),
    ("_at-91d13e3/.agent/reviewer/steps_registry.json", "warning", "steps/FallbackKeyInvalid", 2),
    // The same unsupplied variables and ignored step conditions as today's reviewer.
    ("_at-91d13e3/.agent/reviewer/steps_registry.json", "warning", "steps/R-A2", 3),
    ("_at-91d13e3/.agent/reviewer/steps_registry.json", "warning", "steps/R-A5", 2),
    ("_at-91d13e3/.agent/reviewer/steps_registry.json", "info", "steps/FLOW-HandoffFromInitial", 2),
    ("_at-91d13e3/.agent/reviewer/steps_registry.json", "info", "steps/FLOW-NextToSelf", 2),
    ("_at-91d13e3/.agent/reviewer/steps_registry.json", "info", "steps/InitialContinuationMismatch", 1),

    // ---- climpt's responsibility fixture ----
    // Some steps have a structuredGate, so `runner/schema-manager.ts` `validateFlowSteps`
    // requires gate, transitions and outputSchemaRef of every step at start and throws: three
    // gated steps lack the outputSchemaRef.
    ("agents/test-artifacts/responsibility-fixtures/test-steps-registry.json", "error", "steps/SR-GATE-003", 3),
    // `validationSteps.closure.test` is the entry of no verdict type (`closure.polling` is
    // `poll:state`'s): the completion loop never reads it.
    ("agents/test-artifacts/responsibility-fixtures/test-steps-registry.json", "warning", "steps/ValidationStepUnknown", 1),
    // The `git-dirty` pattern lists `changedFiles`, which validator `always-pass` never
    // extracts: `retry/param-injector.ts` renders `{{changedFiles}}` as "" in the retry prompt.
    ("agents/test-artifacts/responsibility-fixtures/test-steps-registry.json", "warning", "steps/FailurePatternParams", 1),
    ("agents/test-artifacts/responsibility-fixtures/test-steps-registry.json", "info", "steps/FLOW-NextToSelf", 1),

    // ---- climpt's known-bad fixture (examples/45) ----
    // `initial.analysis` has transitions without a structuredGate or outputSchemaRef: no step
    // has a gate, so the gate never reads the model's intent and `next` is always taken.
    ("examples/45_verify_factory_completionpath/fixtures/steps_registry.json", "error", "steps/SR-GATE-003", 1),
    // Missing `uvVariables`, `usesStdin`, `edition`: the runtime defaults them, only
    // `--validate` rejects; the work → closure `next` is routed.
    ("examples/45_verify_factory_completionpath/fixtures/steps_registry.json", "info", "steps/SR-VALID-004", 6),
    ("examples/45_verify_factory_completionpath/fixtures/steps_registry.json", "info", "steps/FLOW-KindBoundary", 1),
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

/// (severity, code) → count of a fixture checked with every rule at its default severity.
fn severity_counts(root: &str) -> BTreeMap<(&'static str, &'static str), usize> {
    let root = PathBuf::from(root);
    let (_, diagnostics) = common::check_with(std::slice::from_ref(&root), Config::defaults(&root));
    let mut counts = BTreeMap::new();
    for d in &diagnostics {
        *counts.entry((d.severity.as_str(), d.code)).or_insert(0) += 1;
    }
    counts
}

/// climpt's iterator (registry, agent.json, schemas) with one step id misspelt: the typo is
/// one finding, and every other finding keeps the severity it has in the intact registry.
#[test]
fn a_typo_in_the_iterator_is_one_finding() {
    let intact: &[((&str, &str), usize)] = &[
        (("error", "steps/R-D4"), 2),
        (("warning", "steps/LegacyKey"), 1),
        (("info", "steps/FLOW-HandoffFromInitial"), 5),
        (("info", "steps/FLOW-KindBoundary"), 4),
        (("info", "steps/FLOW-NextToSelf"), 6),
        (("info", "steps/FLOW-OrphanStep"), 14),
        (("info", "steps/InitialContinuationMismatch"), 5),
        (("info", "steps/R-A2"), 31),
        (("warning", "steps/R-A2"), 1),
        (("info", "steps/R-B2"), 2),
        // `validationSteps.closure.issue`: `poll:state` validates with `closure.polling`.
        (("warning", "steps/ValidationStepUnknown"), 1),
    ];
    for (case, root_code) in [
        // `entryStepMapping["poll:state"]` = `initial.poling`: before the rule of one finding,
        // three more orphans and all 32 R-A2 findings as errors.
        ("tests/fixtures/steps/SR-ENTRY-003/bad-typo-in-iterator", "steps/SR-ENTRY-003"),
        // `initial.polling`'s `next` → `continuation.poling`: before it, FLOW-EntryCannotClose
        // and more orphans.
        ("tests/fixtures/steps/SR-TRANS-001/bad-typo-in-iterator", "steps/SR-TRANS-001"),
    ] {
        let mut expected: BTreeMap<(&str, &str), usize> = intact.iter().copied().collect();
        expected.insert(("error", root_code), 1);
        assert_eq!(severity_counts(case), expected, "{case}");
    }
}
