//! Documented defaults used when `stagelint.toml` does not say otherwise.

/// The live tool set when `[tools] registered` is absent: the Claude-style names the wiki
/// examples use (and the rest of that family), the tool ids bundled with stud-cli, and the
/// names its code examples use.
pub const DEFAULT_TOOLS: &[&str] = &[
    "LS",
    "BashOutput",
    "KillShell",
    "NotebookRead",
    "Skill",
    "SlashCommand",
    "ExitPlanMode",
    "AskUserQuestion",
    "list",
    "read_file",
    "list_files",
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "Grep",
    "Glob",
    "Bash",
    "WebFetch",
    "WebSearch",
    "TodoWrite",
    "NotebookEdit",
    "Task",
    "bash",
    "glob",
    "grep",
    "read",
    "edit",
    "write",
    "multi-edit",
    "diff",
    "lsp",
    "web-fetch",
    "http-request",
    "memory",
    "sleep",
    "web-search",
    "ask-user",
    "catalog",
    "context-compaction",
];

/// `resolutionPolicy` values accepted by default. The wiki shows only `retry-later`.
pub const DEFAULT_RESOLUTION_POLICIES: &[&str] = &["retry-later", "fail", "skip"];

/// `retryPolicy.backoff` values accepted by default. The wiki shows only `none`.
pub const DEFAULT_BACKOFFS: &[&str] = &["none", "fixed", "linear", "exponential"];

/// Last Light template variables that reach the context through `request.extra` in the
/// upstream project's own dispatchers (the spec names these); `[lastlight] variables` replaces
/// this list and `extra-variables` adds to it.
pub const DEFAULT_EXTRA_VARIABLES: &[&str] =
    &["failedChecks", "ciSection", "mode", "combinedContext", "workflowMode", "workflowName", "workflowRequest"];
