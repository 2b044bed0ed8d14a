//! The keys of the objects a workflow passes to atomic, once: their type, what they do and the
//! values they allow. `rules/options` reports the keys missing here, and the editor shows these
//! docs on hover and completion; both read this table (upstream `types.ts`, and
//! `references/session-config.md` for the Claude `query()` options; `current` for the API of
//! `@bastani/workflows`).

mod current;

/// One key of an option object.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    pub name: &'static str,
    /// The TypeScript type, as `types.ts` writes it.
    pub ty: &'static str,
    /// Markdown.
    pub doc: &'static str,
    /// The literal values it allows; empty when any value of its type goes.
    pub values: &'static [&'static str],
    /// The release that added it to a v0.5 object (`"0.6"`, `"0.7"`); `None`: there from the
    /// start of its API.
    pub since: Option<&'static str>,
}

/// Which object of a workflow a key belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `defineWorkflow({ … })`: `WorkflowOptions`.
    Workflow,
    /// An item of `inputs`: `WorkflowInput`.
    Input,
    /// `ctx.stage`'s first argument: `SessionRunOptions`.
    Stage,
    /// `ctx.stage`'s second argument: the agent's client options.
    Client,
    /// `ctx.stage`'s third argument: the agent's session options.
    Session,
    /// The second argument of a Claude `s.session.query(prompt, options)`: the Agent SDK's
    /// options, forwarded in headless stages only.
    Query,
    /// `thinking` of the query options.
    QueryThinking,
    /// `outputFormat` of the query options.
    QueryOutputFormat,
    /// `workflow({ … })` of `@bastani/workflows`.
    Spec,
    /// `ctx.task(name, options)`.
    Task,
    /// A step of `ctx.chain([...])` or `ctx.parallel([...])`.
    Step,
    /// `ctx.chain(steps, options)`.
    Chain,
    /// `ctx.parallel(steps, options)`.
    Parallel,
    /// `ctx.stage(name, options)` of `@bastani/workflows`.
    StageOptions,
    /// `ctx.workflow(definition, options)`.
    Child,
    /// `ctx.exit(options)`.
    Exit,
    /// `ctx.tool(name, args, fn, options)`.
    Tool,
    /// `budget` of a spec or child.
    Budget,
    /// `worktreeFromInputs` of a spec.
    Worktree,
}

impl Role {
    /// What the object is, for messages and hover.
    pub fn describe(self) -> &'static str {
        match self {
            Role::Workflow => "workflow options (`defineWorkflow`)",
            Role::Input => "input fields",
            Role::Stage => "stage options (`ctx.stage`'s first argument)",
            Role::Client => "client options (`ctx.stage`'s second argument)",
            Role::Session => "session options (`ctx.stage`'s third argument)",
            Role::Query => "Claude `query()` options",
            Role::QueryThinking => "`thinking` options",
            Role::QueryOutputFormat => "`outputFormat` options",
            Role::Spec => "workflow spec keys (`workflow({ … })`)",
            Role::Task => "task options (`ctx.task`'s second argument)",
            Role::Step => "step keys (an item of `ctx.chain`/`ctx.parallel`)",
            Role::Chain => "chain options (`ctx.chain`'s second argument)",
            Role::Parallel => "parallel options (`ctx.parallel`'s second argument)",
            Role::StageOptions => "stage options (`ctx.stage`'s second argument)",
            Role::Child => "child workflow options (`ctx.workflow`'s second argument)",
            Role::Exit => "exit options (`ctx.exit`)",
            Role::Tool => "tool options (`ctx.tool`'s fourth argument)",
            Role::Budget => "budget keys",
            Role::Worktree => "`worktreeFromInputs` keys",
        }
    }

    /// Whether the object belongs to the API of `@bastani/workflows` (0.8 and 0.9), whose
    /// types TypeScript holds an object literal to.
    pub fn is_current(self) -> bool {
        !matches!(
            self,
            Role::Workflow
                | Role::Input
                | Role::Stage
                | Role::Client
                | Role::Session
                | Role::Query
                | Role::QueryThinking
                | Role::QueryOutputFormat
        )
    }

    /// Whether atomic drops keys missing from [`keys`] (the query options are the SDK's own,
    /// which this table lists only in part).
    pub fn is_closed(self) -> bool {
        matches!(self, Role::Workflow | Role::Input | Role::Stage | Role::Client | Role::Session) || self.is_current()
    }
}

/// The keys of `role` for a workflow of `agent`; `None` when they are not known here (Copilot's
/// client and session options are the Copilot SDK's types, and only Claude has query options).
pub fn keys(role: Role, agent: Option<&str>) -> Option<&'static [Key]> {
    match (role, agent) {
        (Role::Workflow, _) => Some(WORKFLOW),
        (Role::Input, _) => Some(INPUT),
        (Role::Stage, _) => Some(STAGE),
        (Role::Client, Some("claude")) => Some(CLAUDE_CLIENT),
        (Role::Client, Some("opencode")) => Some(OPENCODE_CLIENT),
        (Role::Session, Some("claude")) => Some(&[]),
        (Role::Session, Some("opencode")) => Some(OPENCODE_SESSION),
        (Role::Query, Some("claude") | None) => Some(CLAUDE_QUERY),
        (Role::QueryThinking, Some("claude") | None) => Some(THINKING),
        (Role::QueryOutputFormat, Some("claude") | None) => Some(OUTPUT_FORMAT),
        (Role::Spec, _) => Some(current::SPEC),
        (Role::Task, _) => Some(current::TASK),
        (Role::Step, _) => Some(current::STEP),
        (Role::Chain, _) => Some(current::CHAIN),
        (Role::Parallel, _) => Some(current::PARALLEL),
        (Role::StageOptions, _) => Some(current::STAGE),
        (Role::Child, _) => Some(current::CHILD),
        (Role::Exit, _) => Some(current::EXIT),
        (Role::Tool, _) => Some(current::TOOL),
        (Role::Budget, _) => Some(current::BUDGET),
        (Role::Worktree, _) => Some(current::WORKTREE),
        _ => None,
    }
}

/// The signature and doc of the run context's member `name` (`@bastani/workflows`).
pub fn context_member(name: &str) -> Option<(&'static str, &'static str)> {
    current::CONTEXT.iter().find(|(n, ..)| *n == name).map(|(_, ty, doc)| (*ty, *doc))
}

/// The key `name` of `role`.
pub fn key(role: Role, agent: Option<&str>, name: &str) -> Option<&'static Key> {
    keys(role, agent)?.iter().find(|k| k.name == name)
}

const fn plain(name: &'static str, ty: &'static str, doc: &'static str) -> Key {
    Key { name, ty, doc, values: &[], since: None }
}

const fn choice(name: &'static str, doc: &'static str, values: &'static [&'static str]) -> Key {
    Key { name, ty: "string", doc, values, since: None }
}

/// A key a later release added to a v0.5 object.
const fn later(since: &'static str, key: Key) -> Key {
    Key { since: Some(since), ..key }
}

/// `inputs` says what the CLI does with a positional prompt: the skill says otherwise ([doc≠code]).
const WORKFLOW: &[Key] = &[
    plain(
        "name",
        "string",
        "Unique workflow name, shown in tmux and in CLI hints. `atomic workflow -n` and the picker use the directory's name instead, so keep them equal.",
    ),
    plain("description", "string", "Human-readable description, shown in the picker and `atomic workflow -l`."),
    plain(
        "inputs",
        "WorkflowInput[]",
        "Declared inputs: the CLI makes one `--<name>` flag per entry and the picker one form field. Write the array inline so TypeScript infers the names `ctx.inputs` accepts.\n\nA workflow with inputs takes **no positional prompt**: `atomic workflow -n <name> \"prompt\"` is rejected for any workflow that declares inputs, even one named `prompt` (the workflow-creator skill says otherwise; the CLI's code decides). Pass `--prompt \"…\"` instead. Leave `inputs` unset to take a free-form positional prompt as `ctx.inputs.prompt`.",
    ),
    later(
        "0.7",
        plain(
            "source",
            "string",
            "The workflow file's path, which the orchestrator re-imports; auto-captured from the caller, so only needed from a non-ESM caller.",
        ),
    ),
    plain(
        "minSDKVersion",
        "string",
        "Minimum atomic version this workflow works with, `MAJOR.MINOR.PATCH[-TAG]`; an older install refuses to load it. A string of another form is ignored, so the gate is off.",
    ),
];

const INPUT: &[Key] = &[
    plain(
        "name",
        "string",
        "Field name: the CLI flag `--<name>`, the form field and the key of `ctx.inputs`. Starts with a letter; letters, digits, `_` and `-`.",
    ),
    choice(
        "type",
        "Input kind: `\"string\"` (one line), `\"text\"` (multi-line prose) or `\"enum\"` (one of `values`); from 0.6 also `\"integer\"`.",
        &["string", "text", "enum"],
    ),
    plain("required", "boolean", "Whether the field must be non-empty before the workflow can run."),
    plain("description", "string", "Short description, shown as the field's caption."),
    plain("placeholder", "string", "Text shown while the field is empty."),
    plain("default", "string", "Value pre-filled into the field; an enum's default must be one of its `values`."),
    plain("values", "string[]", "Allowed values; required when `type` is `\"enum\"`."),
];

const STAGE: &[Key] = &[
    plain(
        "name",
        "string",
        "Unique session name: transcript references (`s.transcript(\"name\")`) and the graph use it. Two stages of one run with the same name throw \"Duplicate session name\".",
    ),
    plain("description", "string", "Human-readable description."),
    Key {
        since: None,
        name: "headless",
        ty: "boolean",
        doc: "Run the agent in-process in the background instead of in a tmux pane; the stage is invisible in the graph. Headless Claude and OpenCode stages never read the client options (the second argument).",
        values: &["true", "false"],
    },
];

const CLAUDE_CLIENT: &[Key] = &[
    plain(
        "chatFlags",
        "string[]",
        "Flags for the `claude` command of the stage's pane, e.g. `[\"--agent\", \"planner\", \"--model\", \"opus\"]`.",
    ),
    plain(
        "readyTimeoutMs",
        "number",
        "How long to wait for the Claude pane to be ready, in milliseconds (default 30000).",
    ),
];

const OPENCODE_CLIENT: &[Key] = &[
    plain(
        "directory",
        "string",
        "The working directory of the OpenCode client (`baseUrl` is injected by the runtime).",
    ),
    plain("experimental_workspaceID", "string", "The OpenCode workspace the client works in (experimental)."),
];

const OPENCODE_SESSION: &[Key] = &[
    plain("parentID", "string", "The session this one is a child of."),
    plain("title", "string", "The session's title."),
    plain("workspaceID", "string", "The workspace the session belongs to."),
    later("0.6", plain("permission", "PermissionRuleset", "Per-session permission rules (OpenCode SDK v2).")),
];

const CLAUDE_QUERY: &[Key] = &[
    plain("model", "string", "Full model id or alias (`\"opus\"`, `\"sonnet\"`, `\"haiku\"`)."),
    choice(
        "effort",
        "How hard the model thinks; `\"max\"` is for Opus 4.6/4.7 only.",
        &["low", "medium", "high", "xhigh", "max"],
    ),
    plain(
        "thinking",
        "{ type, budgetTokens? }",
        "Extended thinking: `{ type: \"adaptive\" }` (the default where supported) or `{ type: \"enabled\", budgetTokens: N }`.",
    ),
    plain("maxTurns", "number", "Maximum conversation turns."),
    plain("maxBudgetUsd", "number", "Spending cap in USD."),
    choice(
        "permissionMode",
        "How tool use is approved.",
        &["default", "dontAsk", "acceptEdits", "bypassPermissions", "plan"],
    ),
    plain("allowDangerouslySkipPermissions", "boolean", "Required with `permissionMode: \"bypassPermissions\"`."),
    plain("tools", "string[] | { type: \"preset\", preset }", "The built-in tools available to the model."),
    plain(
        "allowedTools",
        "string[]",
        "Tools allowed without asking. Headless Claude denies `AskUserQuestion` (atomic ≥ 0.5.27), so listing it here does not make it work.",
    ),
    plain("disallowedTools", "string[]", "Tools removed from the model's context."),
    plain(
        "systemPrompt",
        "string | { type: \"preset\", preset, append? }",
        "The system prompt, or a preset with additions.",
    ),
    plain(
        "outputFormat",
        "{ type: \"json_schema\", schema }",
        "Structured output: a JSON Schema the result must match.",
    ),
    plain("agents", "Record<string, AgentDefinition>", "Subagents by name."),
    plain("agent", "string", "The agent the main thread runs as: a file in `.claude/agents/` or one of `agents`."),
    plain("mcpServers", "Record<string, McpServerConfig>", "MCP servers by name."),
    plain("hooks", "Partial<Record<HookEvent, HookCallbackMatcher[]>>", "Callbacks on tool use and session events."),
    plain("resume", "string", "A session id to resume."),
    plain("forkSession", "boolean", "With `resume`, fork to a new session."),
    plain("persistSession", "boolean", "Persist the session to disk (default true)."),
    plain("sandbox", "{ enabled, … }", "Isolated command execution."),
    plain("betas", "string[]", "Beta features, e.g. `\"context-1m-2025-08-07\"`."),
];

const THINKING: &[Key] = &[
    choice(
        "type",
        "`\"adaptive\"` lets the model decide; `\"enabled\"` needs `budgetTokens`.",
        &["adaptive", "enabled", "disabled"],
    ),
    plain("budgetTokens", "number", "Tokens the model may think with (`type: \"enabled\"`)."),
];

const OUTPUT_FORMAT: &[Key] = &[
    choice("type", "The only kind of structured output.", &["json_schema"]),
    plain("schema", "JSONSchema", "The JSON Schema the result must match."),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_table_names_a_key_once() {
        let roles = [
            Role::Workflow,
            Role::Input,
            Role::Stage,
            Role::Client,
            Role::Session,
            Role::Query,
            Role::Spec,
            Role::Task,
            Role::Step,
            Role::Chain,
            Role::Parallel,
            Role::StageOptions,
            Role::Child,
            Role::Exit,
            Role::Tool,
            Role::Budget,
            Role::Worktree,
        ];
        for role in roles {
            for agent in ["claude", "copilot", "opencode"] {
                let names: Vec<&str> = keys(role, Some(agent)).unwrap_or_default().iter().map(|k| k.name).collect();
                let mut unique = names.clone();
                unique.sort();
                unique.dedup();
                assert_eq!(names.len(), unique.len(), "{role:?} {agent}");
            }
        }
        assert!(keys(Role::Client, Some("copilot")).is_none());
        assert_eq!(key(Role::Query, Some("claude"), "effort").map(|k| k.values.len()), Some(5));
    }
}
