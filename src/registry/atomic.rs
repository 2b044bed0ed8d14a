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
    // Discovery and the loader's version gate.
    NotDiscovered => Warning;
    ReservedName => Warning;
    IncompatibleSdk => Error, aliases = ["IncompatibleSDKError"];
    // Agents.
    UnknownAgent => Info, fix = true;
    // Options.
    UnknownOption => Warning, fix = true;
    InvalidOptionValue => Warning, fix = true;
    // Inputs read in the callbacks.
    UndeclaredInput => Warning, fix = true;
    // What a stage's callback does with its session.
    HeadlessOnlyOption => Warning;
    InteractiveOnlyOption => Warning, fix = true;
    HumanInputInHeadless => Warning;
    SaveShape => Warning, fix = true;
    CopilotSendAndWait => Warning, fix = true;
    ClaudeSdkQuery => Warning;
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
    // What stage callbacks call (v0.5 to 0.7).
    ExtractTextWithoutIndex => Warning, fix = true;
    WrongSessionMethod => Error;
    // Dialects and the migration between them.
    UnmodeledDialect => Info;
    MissingAgent => Error;
    ReservedInputName => Error;
    BuilderRemoved => Warning, fix = true;
    RemovedImport => Warning, fix = true;
    // The `workflow({...})` definition (0.9).
    MissingDescription => Error;
    MissingOutputs => Error, fix = true;
    SchemaMapShape => Error;
    WorktreeBinding => Warning;
    NonWorkflowExport => Warning;
    HandBuiltDefinition => Error;
    // What `run` returns.
    UndeclaredOutput => Error, fix = true;
    MissingOutput => Error;
    // The `ctx` primitives of `@bastani/workflows`.
    UnknownContextMember => Error;
    MissingPrompt => Error;
    ConflictingOptions => Error;
    UnreadableStageName => Warning;
    AmbiguousStageName => Warning;
    SchemaStageReprompted => Error;
    ReopenedStage => Warning;
    StructuredWithoutSchema => Warning;
    ProseGate => Warning;
    WorkflowByName => Error;
    SelfComposition => Error;
    ChildRunCalled => Warning;
}
