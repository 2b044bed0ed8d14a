//! The option keys of `@bastani/workflows` (0.8 and 0.9): the `workflow({...})` spec and the
//! options of `ctx.task`, `ctx.chain`, `ctx.parallel` (and their steps), `ctx.stage`,
//! `ctx.workflow`, `ctx.tool` and `ctx.exit`, as `shared/authoring-contract-stage.ts` and
//! `authoring-contract-ui.ts` type them at 0.9.15, with what `docs/workflows.md` says they do.

use super::{Key, choice, plain};

/// `workflow({ … })`: `AuthoredWorkflowSpec`.
pub(super) const SPEC: &[Key] = &[
    plain(
        "name",
        "string",
        "The workflow's name, for `/workflow <name>` and listings. Optional: without it atomic takes the file's base name (`review-changes.ts` is `review-changes`). Lookup normalizes it: lower case, blanks and `_` to `-`, other punctuation dropped.",
    ),
    plain(
        "description",
        "string",
        "Required listing text, shown by discovery and `/workflow list`. A missing or non-string value throws `workflow: description must be a string`.",
    ),
    plain(
        "autoAttach",
        "boolean",
        "Exactly `true` opens the graph overlay when the workflow is launched by name interactively; anything else, `\"true\"` included, does not.",
    ),
    plain(
        "heartbeatIntervalMinutes",
        "number",
        "Minutes between heartbeat cards in the main chat (default 15); `0` turns them off. Negative or non-finite values throw a `TypeError` when the file loads.",
    ),
    plain(
        "inputs",
        "Record<string, TSchema>",
        "Declared inputs: a map from input name to a TypeBox schema (`Type.String({ description, default })`). An input is required unless wrapped in `Type.Optional(…)` or given a `default`. `ctx.inputs` is typed from it, and unknown keys are rejected before `run` starts.",
    ),
    plain(
        "outputs",
        "Record<string, TSchema>",
        "Declared outputs: required, also when empty (`outputs: {}`); a missing map throws `workflow: outputs must be a schema map`. `run` must return exactly these keys: an undeclared key or a missing required one fails the run.",
    ),
    plain(
        "worktreeFromInputs",
        "{ gitWorktreeDir: string; baseBranch?: string }",
        "Names the inputs (not paths) whose values give every stage a reusable Git worktree: `gitWorktreeDir` names the input holding the directory, `baseBranch` the one holding the branch.",
    ),
    plain(
        "budget",
        "{ maxDurationMs?, maxTokens?, maxCost?, warnAtPercent? }",
        "Default run budget; each field may be overridden per run. `0` disables a dimension; negative or non-integer durations and token counts throw a `TypeError`.",
    ),
    plain(
        "run",
        "(ctx) => Promise<outputs> | outputs",
        "The workflow body. It receives `ctx` and returns an object with exactly the declared output keys (or calls `ctx.exit(…)`).",
    ),
];

/// The fields `StageOptions` gives every stage-making call: `ctx.stage(name, options)`.
const STAGE_FIELDS: [Key; 19] = [
    plain(
        "schema",
        "TSchema",
        "A TypeBox (or JSON Schema) schema for the stage's final answer: the stage gets a single-use `structured_output` tool and the captured value becomes `result.structured` (a schema-backed `ctx.stage` takes one `prompt()` only).",
    ),
    plain(
        "model",
        "string | object",
        "The stage's model, e.g. `\"anthropic/claude-sonnet-4:high\"`; a `:level` suffix sets its reasoning effort (`off`, `minimal`, `low`, `medium`, `high`, `xhigh`, `max`).",
    ),
    plain(
        "fallbackModels",
        "readonly string[]",
        "Models tried in order after `model` fails for rate limits, outages or incompatible requests; each may carry a `:level` suffix.",
    ),
    plain(
        "fallbackThinkingLevels",
        "readonly string[]",
        "Deprecated: reasoning levels aligned with `fallbackModels`; prefer a `:level` suffix on each model.",
    ),
    plain(
        "mcp",
        "{ allow?: string[]; deny?: string[] }",
        "The MCP servers this stage may use; omitted, server access is not scoped.",
    ),
    plain(
        "tools",
        "readonly string[]",
        "Allowlist of the tools the stage sees (built-in and extension tools); `excludedTools` and `noTools: \"all\"` still win.",
    ),
    choice("noTools", "Removes all tools (`\"all\"`) or only the built-in ones (`\"builtin\"`).", &["all", "builtin"]),
    plain("excludedTools", "readonly string[]", "Tools removed from the stage."),
    plain(
        "customTools",
        "readonly WorkflowCustomToolDefinition[]",
        "Stage-local tools, each with its schema and `execute` handler.",
    ),
    plain("cwd", "string", "The stage's working directory."),
    plain("agentDir", "string", "The agent configuration directory of the stage."),
    plain(
        "scopedModels",
        "readonly WorkflowScopedModel[]",
        "Stage-scoped model objects, with optional (deprecated) reasoning levels.",
    ),
    choice(
        "context",
        "`\"fresh\"` starts a clean session (the default); `\"fork\"` continues from the current conversation.",
        &["fresh", "fork"],
    ),
    plain("forkFromSessionFile", "string", "An explicit session file to fork from."),
    plain(
        "gitWorktreeDir",
        "string",
        "A reusable same-repository Git worktree for the stage (created with `git worktree add --detach` when missing). Cannot be combined with `worktree: true`.",
    ),
    plain("baseBranch", "string", "The ref a new `gitWorktreeDir` worktree starts from (default `HEAD`)."),
    plain("sessionDir", "string", "Where the stage's transcript is written."),
    choice(
        "thinkingLevel",
        "Deprecated: the default reasoning effort of models without a `:level` suffix.",
        &["off", "minimal", "low", "medium", "high", "xhigh", "max"],
    ),
    plain(
        "group",
        "string | true",
        "The stage's Intercom group: a name joins that group; `true` makes one shared group per `ctx.parallel` set.",
    ),
];

/// The fields a task adds (`WorkflowTaskSessionFields`).
const TASK_FIELDS: [Key; 8] = [
    plain(
        "prompt",
        "string",
        "The task's text. `ctx.task` needs `prompt` (or its alias `task`); without either it throws `ctx.task requires options.prompt or options.task`.",
    ),
    plain("task", "string", "Alias of `prompt`; prefer `prompt`."),
    plain(
        "output",
        "string | false",
        "A path the stage's final assistant message is written to (the runner owns that file), or `false` for none.",
    ),
    choice(
        "outputMode",
        "`\"inline\"` returns the text (the default); `\"file-only\"` returns only a reference to `output`, which it then requires.",
        &["inline", "file-only"],
    ),
    plain(
        "reads",
        "readonly string[] | false",
        "Files the stage must read first: their paths (not contents) are prepended to the prompt, and a missing file fails the stage before the model runs. `false` drops inherited reads.",
    ),
    plain(
        "worktree",
        "boolean",
        "`true` runs the task in a temporary branch-backed worktree that is removed afterwards. Cannot be combined with `gitWorktreeDir`.",
    ),
    plain(
        "maxOutput",
        "{ bytes?: number; lines?: number }",
        "Truncates the inline result (default 204800 bytes, 5000 lines).",
    ),
    plain("artifacts", "boolean", "Whether session and diff artifacts are collected (default `true`)."),
];

const PREVIOUS: Key = plain(
    "previous",
    "string | result | readonly (string | result)[]",
    "Context from earlier tasks: replaces `{previous}` in the prompt, or is appended to it. Keep it small; hand large results over as files with `reads`.",
);

const STEP_NAME: Key = plain(
    "name",
    "string",
    "The step's stage name, shown in status and the graph: required, and best unique in the run (a stage is targeted by name).",
);

/// `a` then `b`, in a `const`.
const fn join<const A: usize, const B: usize, const N: usize>(a: [Key; A], b: [Key; B]) -> [Key; N] {
    assert!(A + B == N, "the lengths add up");
    let mut out = [PREVIOUS; N];
    let mut i = 0;
    while i < A {
        out[i] = a[i];
        i += 1;
    }
    let mut j = 0;
    while j < B {
        out[A + j] = b[j];
        j += 1;
    }
    out
}

const TASK_ALL: [Key; 28] = join(join::<19, 1, 20>(STAGE_FIELDS, [PREVIOUS]), TASK_FIELDS);
const SHARED: [Key; 27] = join(STAGE_FIELDS, TASK_FIELDS);
const STEP_ALL: [Key; 29] = join(TASK_ALL, [STEP_NAME]);
const CHAIN_ALL: [Key; 28] = join(
    SHARED,
    [plain("chainDir", "string", "Base directory for relative `reads` and `output` paths inside the chain.")],
);
const PARALLEL_ALL: [Key; 29] = join(
    SHARED,
    [
        plain(
            "concurrency",
            "number",
            "How many steps run at once (default: the `defaultConcurrency` setting, 4). A value below 1, or not a number, is ignored.",
        ),
        plain("failFast", "boolean", "Parallel steps stop at the first failure unless this is exactly `false`."),
    ],
);

/// `ctx.stage(name, options)`: `StageOptions`.
pub(super) const STAGE: &[Key] = &STAGE_FIELDS;
/// `ctx.task(name, options)`: `WorkflowTaskOptions`.
pub(super) const TASK: &[Key] = &TASK_ALL;
/// A `ctx.chain`/`ctx.parallel` step: `WorkflowTaskStep`.
pub(super) const STEP: &[Key] = &STEP_ALL;
/// `ctx.chain(steps, options)`: `WorkflowChainOptions`.
pub(super) const CHAIN: &[Key] = &CHAIN_ALL;
/// `ctx.parallel(steps, options)`: `WorkflowParallelOptions`.
pub(super) const PARALLEL: &[Key] = &PARALLEL_ALL;

/// `ctx.workflow(definition, options)`: `WorkflowRunChildOptions`.
pub(super) const CHILD: &[Key] = &[
    plain(
        "inputs",
        "object",
        "The child's inputs, validated against its `inputs` schema map before it starts (unknown keys and missing required ones fail).",
    ),
    plain("stageName", "string", "The label of the parent's boundary stage (default `workflow:<name>`)."),
    plain("budget", "{ maxDurationMs?, maxTokens?, maxCost?, warnAtPercent? }", "The child run's own budget."),
];

/// `ctx.exit(options)`: `WorkflowExitOptions`.
pub(super) const EXIT: &[Key] = &[
    choice(
        "status",
        "How the run ends (default `\"completed\"`); any other value fails the run as an authoring error.",
        &["completed", "skipped", "cancelled", "blocked", "failed"],
    ),
    plain("reason", "string", "Shown in status surfaces and notices; keep secrets out."),
    plain(
        "resumable",
        "boolean",
        "Only with `status: \"failed\"`: keeps the run eligible for a durable retry. With another status it records a non-resumable authoring failure.",
    ),
    plain("outputs", "object", "A partial set of the declared outputs; every key must be declared."),
];

/// `ctx.tool(name, args, fn, options)`: `WorkflowToolOptions`.
pub(super) const TOOL: &[Key] = &[
    choice(
        "failureMode",
        "`\"throw\"` (the default) rethrows a failure; `\"return\"` returns `{ ok, value | error }`.",
        &["throw", "return"],
    ),
    plain("retriesAllowed", "boolean", "Retry a failed callback (default `false`)."),
    plain(
        "maxAttempts",
        "number",
        "Attempts when retries are allowed (default 3); anything but a positive integer throws a `RangeError` before the callback runs.",
    ),
    plain("intervalMs", "number", "The first retry interval (default 1000)."),
    plain("backoffRate", "number", "The retry interval multiplier (default 2)."),
    plain(
        "timeoutMs",
        "number",
        "A per-attempt deadline in milliseconds; anything but a positive finite number throws a `RangeError`. Forward the callback's `signal` to stop the work itself.",
    ),
];

/// `budget`: `WorkflowBudget`.
pub(super) const BUDGET: &[Key] = &[
    plain("maxDurationMs", "number", "Run time in milliseconds (a non-negative integer); `0` disables it."),
    plain(
        "maxTokens",
        "number",
        "Uncached input plus output tokens across the run tree (a non-negative integer); `0` disables it.",
    ),
    plain("maxCost", "number", "Summed provider cost (non-negative); `0` disables it."),
    plain("warnAtPercent", "number", "When a `budget_warning` notice is emitted (default 80)."),
];

/// `worktreeFromInputs`: `WorkflowWorktreeInputBinding`.
pub(super) const WORKTREE: &[Key] = &[
    plain(
        "gitWorktreeDir",
        "string",
        "The name of the input holding the worktree directory. Required: without it the binding does nothing.",
    ),
    plain("baseBranch", "string", "The name of the input holding the base branch."),
];

/// The members of the run context (`WorkflowRunContext`), for hover: (name, signature, doc).
pub(super) const CONTEXT: &[(&str, &str, &str)] = &[
    (
        "inputs",
        "Readonly<inputs>",
        "The validated inputs, typed from the `inputs` schema map; defaults applied before `run` starts.",
    ),
    ("cwd", "string | undefined", "The invocation's working directory, for workflow-owned artifacts."),
    ("runId", "string | undefined", "The run's durable id, for run-scoped artifacts."),
    (
        "models",
        "WorkflowModelCatalogPort | undefined",
        "The invoking session's model catalog, when the host provides one: `currentModel`, `listModels()`.",
    ),
    (
        "task",
        "(name, options) => Promise<WorkflowTaskResult>",
        "One tracked stage: prompts its agent with `prompt` and returns `{ text, structured?, … }`. `options` is required.",
    ),
    (
        "chain",
        "(steps, options?) => Promise<WorkflowTaskResult[]>",
        "Named steps in sequence; a step without a prompt takes `{task}` (the first) or `{previous}`.",
    ),
    (
        "parallel",
        "(steps, options?) => Promise<WorkflowTaskResult[]>",
        "Named steps at once, bounded by `concurrency` (default 4) and fail-fast unless `failFast: false`.",
    ),
    (
        "stage",
        "(name, options?) => StageContext",
        "A named stage for direct session control (`prompt`, `complete`, `sendUserMessage`); a schema-backed one takes one `prompt()`.",
    ),
    (
        "workflow",
        "(definition, options?) => Promise<WorkflowChildResult>",
        "Runs an imported definition (never a name or path) behind a boundary stage `workflow:<name>`; check `child.exited` before reading its outputs.",
    ),
    (
        "tool",
        "(name, args, fn, options?) => Promise<value>",
        "A durable, non-chat node: `fn`'s serializable result is cached by call order and a hash of `name` and `args`, so a resume does not rerun it. Forward `signal`.",
    ),
    (
        "exit",
        "(options?) => never",
        "Ends the run on purpose with a status (`completed`, `skipped`, `cancelled`, `blocked`, `failed`), a reason and partial outputs; write `return ctx.exit(…)`.",
    ),
    ("ui", "WorkflowUIContext", "Human input that suspends the run: `input`, `confirm`, `select`, `editor`, `custom`."),
];
