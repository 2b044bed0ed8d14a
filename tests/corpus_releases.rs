//! stagelint over climpt's own agents at the releases it models: the iterator, reviewer and
//! facilitator (registry, agent.json, schemas, prompts, breakdown configs) copied from the tags on
//! both sides of each change `registry::releases::CLIMPT` names (`tests/corpus/climpt/_at-v*/`, see
//! `tests/corpus/NOTICE.md`), each with its `deno.json` cut down to name and version, so the check
//! detects the release the tree is. Every warning and error below was checked by hand against
//! climpt's sources at that tag; a row without a comment is explained at the first tree that has
//! one like it. Infos (prompts no run of that release sends, `--validate`-only checks, steps no
//! entry reaches) are counted, not listed.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use stagelint::config::Config;

/// One release's tree: its directory, its warnings and errors as (file, severity, code, count),
/// and how many infos and hints it has.
struct Tree {
    dir: &'static str,
    infos: usize,
    warnings: &'static [(&'static str, &'static str, &'static str, usize)],
}

/// The release each tree is detected as, and why.
const DETECTED: &[(&str, &str)] = &[
    (
        "_at-v1.10.6",
        "climpt release 1.10.6 to 1.11.24 assumed for `tests/corpus/climpt/_at-v1.10.6/.agent/facilitator/`, `tests/corpus/climpt/_at-v1.10.6/.agent/iterator/`, `tests/corpus/climpt/_at-v1.10.6/.agent/reviewer/` (from `tests/corpus/climpt/_at-v1.10.6/deno.json`: the tree is climpt 1.10.6); set `[steps] climpt-version` in stagelint.toml to choose",
    ),
    (
        "_at-v1.11.24",
        "climpt release 1.10.6 to 1.11.24 assumed for `tests/corpus/climpt/_at-v1.11.24/.agent/facilitator/`, `tests/corpus/climpt/_at-v1.11.24/.agent/iterator/`, `tests/corpus/climpt/_at-v1.11.24/.agent/reviewer/` (from `tests/corpus/climpt/_at-v1.11.24/deno.json`: the tree is climpt 1.11.24); set `[steps] climpt-version` in stagelint.toml to choose",
    ),
    (
        "_at-v1.12.0",
        "climpt release 1.12.0 to 1.12.3 assumed for `tests/corpus/climpt/_at-v1.12.0/.agent/facilitator/`, `tests/corpus/climpt/_at-v1.12.0/.agent/iterator/`, `tests/corpus/climpt/_at-v1.12.0/.agent/reviewer/` (from `tests/corpus/climpt/_at-v1.12.0/deno.json`: the tree is climpt 1.12.0); set `[steps] climpt-version` in stagelint.toml to choose",
    ),
    (
        "_at-v1.12.3",
        "climpt release 1.12.0 to 1.12.3 assumed for `tests/corpus/climpt/_at-v1.12.3/.agent/facilitator/`, `tests/corpus/climpt/_at-v1.12.3/.agent/iterator/`, `tests/corpus/climpt/_at-v1.12.3/.agent/reviewer/` (from `tests/corpus/climpt/_at-v1.12.3/deno.json`: the tree is climpt 1.12.3); set `[steps] climpt-version` in stagelint.toml to choose",
    ),
    (
        "_at-v1.12.4",
        "climpt release 1.12.4 assumed for `tests/corpus/climpt/_at-v1.12.4/.agent/facilitator/`, `tests/corpus/climpt/_at-v1.12.4/.agent/iterator/`, `tests/corpus/climpt/_at-v1.12.4/.agent/reviewer/` (from `tests/corpus/climpt/_at-v1.12.4/deno.json`: the tree is climpt 1.12.4); set `[steps] climpt-version` in stagelint.toml to choose",
    ),
    // The tag's deno.json says 1.13.0; its stagelint.toml names the release its code is.
    ("_at-v1.12.5", ""),
    (
        "_at-v1.13.0",
        "climpt release 1.13.0 to 1.13.6 assumed for `tests/corpus/climpt/_at-v1.13.0/.agent/facilitator/`, `tests/corpus/climpt/_at-v1.13.0/.agent/iterator/`, `tests/corpus/climpt/_at-v1.13.0/.agent/reviewer/` (from `tests/corpus/climpt/_at-v1.13.0/deno.json`: the tree is climpt 1.13.0); set `[steps] climpt-version` in stagelint.toml to choose",
    ),
    (
        "_at-v1.13.6",
        "climpt release 1.13.0 to 1.13.6 assumed for `tests/corpus/climpt/_at-v1.13.6/.agent/facilitator/`, `tests/corpus/climpt/_at-v1.13.6/.agent/iterator/`, `tests/corpus/climpt/_at-v1.13.6/.agent/reviewer/` (from `tests/corpus/climpt/_at-v1.13.6/deno.json`: the tree is climpt 1.13.6); set `[steps] climpt-version` in stagelint.toml to choose",
    ),
    (
        "_at-v1.13.7",
        "climpt release 1.13.7 to 1.13.14 assumed for `tests/corpus/climpt/_at-v1.13.7/.agent/facilitator/`, `tests/corpus/climpt/_at-v1.13.7/.agent/iterator/`, `tests/corpus/climpt/_at-v1.13.7/.agent/reviewer/` (from `tests/corpus/climpt/_at-v1.13.7/deno.json`: the tree is climpt 1.13.7); set `[steps] climpt-version` in stagelint.toml to choose",
    ),
    (
        "_at-v1.13.15",
        "climpt release 1.13.15 to 1.13.22 assumed for `tests/corpus/climpt/_at-v1.13.15/.agent/facilitator/`, `tests/corpus/climpt/_at-v1.13.15/.agent/iterator/`, `tests/corpus/climpt/_at-v1.13.15/.agent/reviewer/` (from `tests/corpus/climpt/_at-v1.13.15/deno.json`: the tree is climpt 1.13.15); set `[steps] climpt-version` in stagelint.toml to choose",
    ),
    (
        "_at-v1.13.22",
        "climpt release 1.13.15 to 1.13.22 assumed for `tests/corpus/climpt/_at-v1.13.22/.agent/facilitator/`, `tests/corpus/climpt/_at-v1.13.22/.agent/iterator/`, `tests/corpus/climpt/_at-v1.13.22/.agent/reviewer/` (from `tests/corpus/climpt/_at-v1.13.22/deno.json`: the tree is climpt 1.13.22); set `[steps] climpt-version` in stagelint.toml to choose",
    ),
    (
        "_at-v1.13.23",
        "climpt release 1.13.23 assumed for `tests/corpus/climpt/_at-v1.13.23/.agent/facilitator/`, `tests/corpus/climpt/_at-v1.13.23/.agent/iterator/`, `tests/corpus/climpt/_at-v1.13.23/.agent/reviewer/` (from `tests/corpus/climpt/_at-v1.13.23/deno.json`: the tree is climpt 1.13.23); set `[steps] climpt-version` in stagelint.toml to choose",
    ),
];

const AT_1_10_6: Tree = Tree {
    dir: "_at-v1.10.6",
    infos: 170,
    warnings: &[
        // Handoff fields the step schema does not declare, as at HEAD (`tests/corpus.rs`): the structured
        // output never has them (passed on as nothing; silently before 1.13.21).
        (".agent/facilitator/steps_registry.json", "error", "steps/R-D4", 2),
        // `entryStepMapping` keys `issue` and `iterate`: completion-type aliases 1.10.5 removed (43a13a9), so
        // those entries are dead.
        (".agent/facilitator/steps_registry.json", "error", "steps/R-F3", 2),
        // No `<agent>-steps-{app,user}.yml` in `.agent/climpt/config/`: breakdown loads none of the agent's
        // C3L prompts, so climpt sends the handler's prompts.
        (".agent/facilitator/steps_registry.json", "warning", "steps/BreakdownConfigMissing", 2),
        // `closure.facilitation` has no prompt file: the closure adapter (`runner/closure-adapter.ts`) catches
        // the failure and the handler's built-in continuation prompt goes instead.
        (".agent/facilitator/steps_registry.json", "warning", "steps/PR-C3L-004", 1),
        // Closure prompts get only `issue_number` until 1.13.0 (`closure-adapter.ts`): `closure.facilitation`
        // declares `project_number` and `actions_taken`, so it fails to resolve and the handler's prompt goes
        // instead.
        (".agent/facilitator/steps_registry.json", "warning", "steps/R-A2", 2),
        // The completion loop validates with `completionSteps.closure.<completionType>` (`runner/completion-
        // chain.ts` `getCompletionStepId`): this agent's other entry never runs.
        (".agent/facilitator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/iterator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/iterator/steps_registry.json", "error", "steps/R-F3", 2),
        // `iterator-steps-user.yml`'s patterns do not allow the step's c2/c3 (`closure`, later
        // `polling`/`iteration`): breakdown rejects the path and the prompt never loads.
        (".agent/iterator/steps_registry.json", "warning", "steps/C3lPatternMismatch", 1),
        // camelCase c3 `externalState`: breakdown's LayerType rejects it (climpt 9da7df6); the closure step's
        // prompt (and, from 1.12.4, the work steps') never loads.
        (".agent/iterator/steps_registry.json", "warning", "steps/SR-VALID-004", 1),
        (".agent/iterator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/reviewer/steps_registry.json", "error", "steps/R-F3", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/BreakdownConfigMissing", 2),
        // `closure.review` has no prompt file (from 1.12.4 `continuation.issue` neither, a work step now
        // read): the handler's prompt goes instead.
        (".agent/reviewer/steps_registry.json", "warning", "steps/PR-C3L-004", 1),
        // Step-level `condition`s, which nothing evaluates (only transition rules have one, `runner/workflow-
        // router.ts`).
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A5", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
    ],
};

const AT_1_11_24: Tree = Tree {
    dir: "_at-v1.11.24",
    infos: 172,
    warnings: &[
        (".agent/facilitator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/facilitator/steps_registry.json", "error", "steps/R-F3", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/BreakdownConfigMissing", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/PR-C3L-004", 1),
        (".agent/facilitator/steps_registry.json", "warning", "steps/R-A2", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/iterator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/iterator/steps_registry.json", "error", "steps/R-F3", 2),
        (".agent/iterator/steps_registry.json", "warning", "steps/C3lPatternMismatch", 1),
        (".agent/iterator/steps_registry.json", "warning", "steps/SR-VALID-004", 1),
        (".agent/iterator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/reviewer/steps_registry.json", "error", "steps/R-F3", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/BreakdownConfigMissing", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/PR-C3L-004", 1),
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A5", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
    ],
};

const AT_1_12_0: Tree = Tree {
    dir: "_at-v1.12.0",
    infos: 169,
    warnings: &[
        (".agent/facilitator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/facilitator/steps_registry.json", "error", "steps/R-F3", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/BreakdownConfigMissing", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/PR-C3L-004", 1),
        (".agent/facilitator/steps_registry.json", "warning", "steps/R-A2", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/iterator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/iterator/steps_registry.json", "error", "steps/R-F3", 2),
        (".agent/iterator/steps_registry.json", "warning", "steps/C3lPatternMismatch", 1),
        (".agent/iterator/steps_registry.json", "warning", "steps/SR-VALID-004", 1),
        (".agent/iterator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/reviewer/steps_registry.json", "error", "steps/R-F3", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/BreakdownConfigMissing", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/PR-C3L-004", 1),
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A5", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
    ],
};

const AT_1_12_3: Tree = Tree {
    dir: "_at-v1.12.3",
    infos: 169,
    warnings: &[
        (".agent/facilitator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/facilitator/steps_registry.json", "error", "steps/R-F3", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/BreakdownConfigMissing", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/PR-C3L-004", 1),
        (".agent/facilitator/steps_registry.json", "warning", "steps/R-A2", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/iterator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/iterator/steps_registry.json", "error", "steps/R-F3", 2),
        (".agent/iterator/steps_registry.json", "warning", "steps/C3lPatternMismatch", 1),
        (".agent/iterator/steps_registry.json", "warning", "steps/SR-VALID-004", 1),
        (".agent/iterator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/reviewer/steps_registry.json", "error", "steps/R-F3", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/BreakdownConfigMissing", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/PR-C3L-004", 1),
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A5", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
    ],
};

const AT_1_12_4: Tree = Tree {
    dir: "_at-v1.12.4",
    infos: 146,
    warnings: &[
        (".agent/facilitator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/facilitator/steps_registry.json", "error", "steps/R-F3", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/BreakdownConfigMissing", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/PR-C3L-004", 1),
        // 1.12.4 passes step prompts `issue_number`, `completed_iterations` and the handler's iteration
        // variables, no parameters: 15 variables of the work steps and 2 of `closure.facilitation` are never
        // supplied, so those prompts fail and the handler's go instead.
        (".agent/facilitator/steps_registry.json", "warning", "steps/R-A2", 17),
        (".agent/facilitator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/iterator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/iterator/steps_registry.json", "error", "steps/R-F3", 2),
        (".agent/iterator/steps_registry.json", "warning", "steps/C3lPatternMismatch", 1),
        (".agent/iterator/steps_registry.json", "warning", "steps/SR-VALID-004", 3),
        (".agent/iterator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/reviewer/steps_registry.json", "error", "steps/R-F3", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/BreakdownConfigMissing", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/PR-C3L-004", 2),
        // 1.12.4 passes `issue_number`, not the `issue` parameter that `initial.issue` and
        // `continuation.issue` declare: their prompts fail and the handler's go instead.
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A2", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A5", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
    ],
};

const AT_1_12_5: Tree = Tree {
    dir: "_at-v1.12.5",
    infos: 111,
    warnings: &[
        // Handlebars `{{…}}` and custom `{x}` in a prompt the run sends (a work step's from 1.12.4, a closure
        // step's `label-only` variant from 1.13.x, where breakdown allows its c2/c3): climpt fills only
        // `{uv-x}` and `{input_text}`.
        (
            ".agent/facilitator/prompts/steps/continuation/statuscheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            2,
        ),
        (
            ".agent/facilitator/prompts/steps/initial/blockercheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            2,
        ),
        (
            ".agent/facilitator/prompts/steps/initial/facilitate/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            3,
        ),
        (".agent/facilitator/prompts/steps/initial/judge/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
        (
            ".agent/facilitator/prompts/steps/initial/report/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            3,
        ),
        (
            ".agent/facilitator/prompts/steps/initial/stalecheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            2,
        ),
        (
            ".agent/facilitator/prompts/steps/initial/statuscheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            9,
        ),
        (".agent/facilitator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/PR-C3L-004", 1),
        (".agent/facilitator/steps_registry.json", "warning", "steps/R-A2", 17),
        // The completion loop validates with the entry of the agent's verdict type (`VERDICT_CLOSURE_MAP`):
        // this other entry never runs.
        (".agent/facilitator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (
            ".agent/iterator/prompts/steps/continuation/iterate/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            2,
        ),
        (".agent/iterator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/iterator/steps_registry.json", "warning", "steps/C3lPatternMismatch", 5),
        // The iterator's `externalState` steps have no prompt files any more (renamed to `polling` in the
        // prompts directory first): work prompts fail and the verdict handler's go instead.
        (".agent/iterator/steps_registry.json", "warning", "steps/PR-C3L-004", 3),
        // `initial.iterate` declares `iterations`, which nothing supplies (a `count:iteration`-mode step), and
        // `closure.iterate` `completed_iterations` (closure prompts get only `issue_number`).
        (".agent/iterator/steps_registry.json", "warning", "steps/R-A2", 2),
        // `outputSchemaRef.file` `externalState.schema.json` is gone: the registry load fails, which 1.12.5
        // logs and runs on without the registry.
        (".agent/iterator/steps_registry.json", "warning", "steps/R-D1", 3),
        (".agent/iterator/steps_registry.json", "warning", "steps/SR-VALID-004", 3),
        (".agent/iterator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/reviewer/prompts/steps/initial/default/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 3),
        (".agent/reviewer/prompts/steps/initial/issue/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
        (".agent/reviewer/steps_registry.json", "warning", "steps/PR-C3L-004", 2),
        // `issue` of `initial.issue`/`continuation.issue` as in 1.12.4, and `project`, `requirements_label`,
        // `review_label` of `initial.default`, which no parameter supplies.
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A2", 5),
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A5", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
    ],
};

const AT_1_13_0: Tree = Tree {
    dir: "_at-v1.13.0",
    infos: 140,
    warnings: &[
        // `project` is optional without a default, yet seven steps declare it: a run without `--project`
        // cannot resolve them.
        (".agent/facilitator/agent.json", "warning", "steps/OptionalParamNoDefault", 1),
        (
            ".agent/facilitator/prompts/steps/initial/blockercheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            2,
        ),
        (
            ".agent/facilitator/prompts/steps/initial/facilitate/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            3,
        ),
        (".agent/facilitator/prompts/steps/initial/judge/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
        (
            ".agent/facilitator/prompts/steps/initial/report/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            3,
        ),
        (
            ".agent/facilitator/prompts/steps/initial/stalecheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            2,
        ),
        (
            ".agent/facilitator/prompts/steps/initial/statuscheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            9,
        ),
        (".agent/facilitator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (
            ".agent/iterator/prompts/steps/continuation/iteration/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            2,
        ),
        (
            ".agent/iterator/prompts/steps/continuation/polling/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            1,
        ),
        (".agent/iterator/prompts/steps/initial/polling/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
        (".agent/iterator/steps_registry.json", "error", "steps/C3lPatternMismatch", 1),
        (".agent/iterator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/iterator/steps_registry.json", "warning", "steps/C3lPatternMismatch", 1),
        // `initial.iteration` declares `iterations`, which nothing supplies (the `count:iteration` mode).
        (".agent/iterator/steps_registry.json", "warning", "steps/R-A2", 1),
        (".agent/iterator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/reviewer/prompts/steps/initial/default/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 3),
        (".agent/reviewer/prompts/steps/initial/issue/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
        // `initial.default` declares `project`, `requirements_label`, `review_label`, which no parameter
        // supplies (the `count:iteration` mode), as at HEAD.
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A2", 3),
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A5", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
    ],
};

const AT_1_13_6: Tree = Tree {
    dir: "_at-v1.13.6",
    infos: 138,
    warnings: &[
        (".agent/facilitator/agent.json", "warning", "steps/OptionalParamNoDefault", 1),
        (
            ".agent/facilitator/prompts/steps/initial/blockercheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            2,
        ),
        (
            ".agent/facilitator/prompts/steps/initial/facilitate/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            3,
        ),
        (".agent/facilitator/prompts/steps/initial/judge/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
        (
            ".agent/facilitator/prompts/steps/initial/report/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            3,
        ),
        (
            ".agent/facilitator/prompts/steps/initial/stalecheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            2,
        ),
        (
            ".agent/facilitator/prompts/steps/initial/statuscheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            9,
        ),
        (".agent/facilitator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (
            ".agent/iterator/prompts/steps/continuation/iteration/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            2,
        ),
        (
            ".agent/iterator/prompts/steps/continuation/polling/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            1,
        ),
        (".agent/iterator/prompts/steps/initial/polling/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
        (".agent/iterator/steps_registry.json", "error", "steps/C3lPatternMismatch", 1),
        (".agent/iterator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/iterator/steps_registry.json", "warning", "steps/C3lPatternMismatch", 1),
        (".agent/iterator/steps_registry.json", "warning", "steps/R-A2", 1),
        (".agent/iterator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/reviewer/prompts/steps/initial/default/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 3),
        (".agent/reviewer/prompts/steps/initial/issue/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A2", 3),
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A5", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
    ],
};

const AT_1_13_7: Tree = Tree {
    dir: "_at-v1.13.7",
    infos: 168,
    warnings: &[
        (".agent/facilitator/agent.json", "warning", "steps/OptionalParamNoDefault", 1),
        (
            ".agent/facilitator/prompts/steps/initial/statuscheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            9,
        ),
        // `facilitator-steps-user.yml` allows only some c3 values: the other steps' prompts never load.
        (".agent/facilitator/steps_registry.json", "error", "steps/C3lPatternMismatch", 5),
        // 1.13.0 to 1.13.14 send the embedded prompt of a step's `fallbackKey` when the C3L prompt does not
        // load (these steps' do not): keys `fallback.ts` lacks throw PR-RESOLVE-002.
        (".agent/facilitator/steps_registry.json", "error", "steps/FallbackKeyInvalid", 5),
        (".agent/facilitator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/C3lPatternMismatch", 1),
        (".agent/facilitator/steps_registry.json", "warning", "steps/FallbackKeyInvalid", 1),
        (".agent/facilitator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/iterator/steps_registry.json", "error", "steps/C3lPatternMismatch", 6),
        (".agent/iterator/steps_registry.json", "error", "steps/FallbackKeyInvalid", 2),
        (".agent/iterator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/iterator/steps_registry.json", "warning", "steps/C3lPatternMismatch", 4),
        (".agent/iterator/steps_registry.json", "warning", "steps/FallbackKeyInvalid", 2),
        // `iterations` as before, and `remaining` of `continuation.iteration`: the runner passes the verdict
        // handler's variables only from 1.13.15 (91d13e3).
        (".agent/iterator/steps_registry.json", "warning", "steps/R-A2", 2),
        (".agent/iterator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        // `reviewer-steps-user.yml` allows c2 `initial|closure` and c3 `review`: the other steps' prompts
        // never load.
        (".agent/reviewer/steps_registry.json", "error", "steps/C3lPatternMismatch", 3),
        (".agent/reviewer/steps_registry.json", "warning", "steps/C3lPatternMismatch", 3),
        (".agent/reviewer/steps_registry.json", "warning", "steps/FallbackKeyInvalid", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A2", 3),
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A5", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
    ],
};

const AT_1_13_15: Tree = Tree {
    dir: "_at-v1.13.15",
    infos: 154,
    warnings: &[
        (".agent/facilitator/agent.json", "warning", "steps/OptionalParamNoDefault", 1),
        (
            ".agent/facilitator/prompts/steps/initial/statuscheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            9,
        ),
        (".agent/facilitator/steps_registry.json", "error", "steps/C3lPatternMismatch", 5),
        (".agent/facilitator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/C3lPatternMismatch", 1),
        (".agent/facilitator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/iterator/steps_registry.json", "error", "steps/C3lPatternMismatch", 5),
        (".agent/iterator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/iterator/steps_registry.json", "warning", "steps/C3lPatternMismatch", 5),
        (".agent/iterator/steps_registry.json", "warning", "steps/R-A2", 1),
        (".agent/iterator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/reviewer/steps_registry.json", "error", "steps/C3lPatternMismatch", 3),
        (".agent/reviewer/steps_registry.json", "warning", "steps/C3lPatternMismatch", 3),
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A2", 3),
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A5", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
    ],
};

const AT_1_13_22: Tree = Tree {
    dir: "_at-v1.13.22",
    infos: 110,
    warnings: &[
        (".agent/facilitator/agent.json", "warning", "steps/OptionalParamNoDefault", 1),
        (
            ".agent/facilitator/prompts/steps/initial/blockercheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            2,
        ),
        (
            ".agent/facilitator/prompts/steps/initial/facilitate/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            3,
        ),
        (".agent/facilitator/prompts/steps/initial/judge/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
        (
            ".agent/facilitator/prompts/steps/initial/report/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            3,
        ),
        (
            ".agent/facilitator/prompts/steps/initial/stalecheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            2,
        ),
        (
            ".agent/facilitator/prompts/steps/initial/statuscheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            9,
        ),
        (".agent/facilitator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (
            ".agent/iterator/prompts/steps/closure/iteration/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            1,
        ),
        (
            ".agent/iterator/prompts/steps/closure/polling/f_default_label-only.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            1,
        ),
        (
            ".agent/iterator/prompts/steps/continuation/iteration/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            2,
        ),
        (
            ".agent/iterator/prompts/steps/continuation/polling/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            1,
        ),
        (".agent/iterator/prompts/steps/initial/polling/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
        (".agent/iterator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/iterator/steps_registry.json", "warning", "steps/R-A2", 1),
        (".agent/iterator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/reviewer/prompts/steps/initial/default/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 3),
        (".agent/reviewer/prompts/steps/initial/issue/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A2", 3),
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A5", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
    ],
};

const AT_1_13_23: Tree = Tree {
    dir: "_at-v1.13.23",
    infos: 110,
    warnings: &[
        // `runner.flow.prompts.fallbackDir`, which 1.13.23 dropped (its defaults rebuild `prompts` without
        // it).
        (".agent/facilitator/agent.json", "warning", "steps/LegacyKey", 1),
        (".agent/facilitator/agent.json", "warning", "steps/OptionalParamNoDefault", 1),
        (
            ".agent/facilitator/prompts/steps/initial/blockercheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            2,
        ),
        (
            ".agent/facilitator/prompts/steps/initial/facilitate/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            3,
        ),
        (".agent/facilitator/prompts/steps/initial/judge/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
        (
            ".agent/facilitator/prompts/steps/initial/report/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            3,
        ),
        (
            ".agent/facilitator/prompts/steps/initial/stalecheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            2,
        ),
        (
            ".agent/facilitator/prompts/steps/initial/statuscheck/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            9,
        ),
        (".agent/facilitator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/facilitator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/iterator/agent.json", "warning", "steps/LegacyKey", 1),
        (
            ".agent/iterator/prompts/steps/closure/iteration/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            1,
        ),
        (
            ".agent/iterator/prompts/steps/closure/polling/f_default_label-only.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            1,
        ),
        (
            ".agent/iterator/prompts/steps/continuation/iteration/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            2,
        ),
        (
            ".agent/iterator/prompts/steps/continuation/polling/f_default.md",
            "warning",
            "steps/UnsubstitutedPlaceholder",
            1,
        ),
        (".agent/iterator/prompts/steps/initial/polling/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
        (".agent/iterator/steps_registry.json", "error", "steps/R-D4", 2),
        (".agent/iterator/steps_registry.json", "warning", "steps/R-A2", 1),
        (".agent/iterator/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
        (".agent/reviewer/agent.json", "warning", "steps/LegacyKey", 1),
        (".agent/reviewer/prompts/steps/initial/default/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 3),
        (".agent/reviewer/prompts/steps/initial/issue/f_default.md", "warning", "steps/UnsubstitutedPlaceholder", 1),
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A2", 3),
        (".agent/reviewer/steps_registry.json", "warning", "steps/R-A5", 2),
        (".agent/reviewer/steps_registry.json", "warning", "steps/ValidationStepUnknown", 1),
    ],
};

const TREES: [&Tree; 12] = [
    &AT_1_10_6,
    &AT_1_11_24,
    &AT_1_12_0,
    &AT_1_12_3,
    &AT_1_12_4,
    &AT_1_12_5,
    &AT_1_13_0,
    &AT_1_13_6,
    &AT_1_13_7,
    &AT_1_13_15,
    &AT_1_13_22,
    &AT_1_13_23,
];

/// (file, severity, code) → count of the warnings and errors of a tree, and its infos.
fn findings(dir: &str) -> (BTreeMap<(String, &'static str, &'static str), usize>, usize) {
    let root = PathBuf::from("tests/corpus/climpt").join(dir);
    let config = match root.join("stagelint.toml").is_file() {
        true => Config::load(&root.join("stagelint.toml")).expect("the tree's config"),
        false => Config::defaults(&root),
    };
    let (workspace, diagnostics) = common::check_with(std::slice::from_ref(&root), config);
    let base = std::env::current_dir().unwrap().join(&root);
    let mut counts = BTreeMap::new();
    let mut infos = 0;
    for d in &diagnostics {
        if d.severity < stagelint::diagnostic::Severity::Warning {
            infos += 1;
            continue;
        }
        let path = workspace.file(d.file).path.strip_prefix(&base).unwrap().display().to_string();
        *counts.entry((path, d.severity.as_str(), d.code)).or_insert(0) += 1;
    }
    (counts, infos)
}

#[test]
fn each_release_tree_has_the_checked_findings() {
    let mut failures = Vec::new();
    for tree in TREES {
        let expected: BTreeMap<(String, &str, &str), usize> =
            tree.warnings.iter().map(|(path, severity, code, n)| ((path.to_string(), *severity, *code), *n)).collect();
        let (actual, infos) = findings(tree.dir);
        let missing: Vec<_> = expected.iter().filter(|(k, n)| actual.get(*k) != Some(n)).collect();
        let extra: Vec<_> = actual.iter().filter(|(k, _)| !expected.contains_key(*k)).collect();
        if !missing.is_empty() || !extra.is_empty() || infos != tree.infos {
            failures.push(format!(
                "{}: expected but not found (or other count): {missing:#?}\nfound but not expected: {extra:#?}\ninfos: {infos}, expected {}",
                tree.dir, tree.infos
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The check says which release it assumed for each tree, and why; the tree whose config names
/// it gets no note.
#[test]
fn the_note_names_the_release_and_why() {
    for (dir, note) in DETECTED {
        let root = PathBuf::from("tests/corpus/climpt").join(dir);
        let config = match root.join("stagelint.toml").is_file() {
            true => Config::load(&root.join("stagelint.toml")).expect("the tree's config"),
            false => Config::defaults(&root),
        };
        let (workspace, _) = common::check_with(std::slice::from_ref(&root), config);
        let notes = stagelint::check::FAMILIES
            .iter()
            .find(|f| f.name() == "steps")
            .map(|f| f.notes(&workspace))
            .unwrap_or_default();
        match note.is_empty() {
            true => assert!(notes.is_empty(), "{dir}: {notes:?}"),
            false => {
                assert_eq!(notes.len(), 1, "{dir}: {notes:?}");
                assert_eq!(notes[0], *note, "{dir}");
            }
        }
    }
}
