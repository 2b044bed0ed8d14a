//! The `atomic/` rules: codes, default severities and docs (`src/families/atomic/docs/`).
//! Upstream ids (`WorkflowNotCompiledError`, `claude/manual-session`) are aliases.

use crate::registry::declare_rules;

declare_rules! { "atomic", "../families/atomic/docs/";
    // The file.
    SyntaxError => Error;
    // The builder chain and the loader.
    EmptyWorkflowName => Error;
    MissingRun => Error;
    RunCalledTwice => Error;
    RunNotFunction => Error;
    MissingCompile => Error, fix = true, aliases = ["WorkflowNotCompiledError"];
    MissingDefaultExport => Error, aliases = ["InvalidWorkflowError"];
    MinSdkVersionFormat => Warning;
    // Inputs.
    InvalidInputName => Error;
    EnumWithoutValues => Error;
    EnumDefaultNotInValues => Error;
    DuplicateInput => Error;
    // The directory.
    AgentMismatch => Error;
    NameMismatch => Warning;
    // Options.
    UnknownOption => Warning, fix = true;
    // The stage graph.
    DuplicateStageName => Error;
    UnawaitedStage => Warning, fix = true;
    UnknownStageRef => Error, fix = true;
    TranscriptNotReady => Error;
    ReadUnsavedStage => Error;
    // Upstream's provider validators.
    ClaudeManualSession => Warning, aliases = ["claude/manual-session"];
    ClaudeManualQuery => Warning, aliases = ["claude/manual-query"];
    CopilotManualClient => Warning, aliases = ["copilot/manual-client"];
    CopilotManualSession => Warning, aliases = ["copilot/manual-session"];
    OpencodeManualClient => Warning, aliases = ["opencode/manual-client"];
    OpencodeManualSession => Warning, aliases = ["opencode/manual-session"];
}
