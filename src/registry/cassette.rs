//! The `cassette/` rules: codes, default severities and docs (`src/runtime/lint/docs/`).

use crate::registry::declare_rules;

declare_rules! { "cassette", "../runtime/lint/docs/";
    UnknownKey => Error, fix = true;
    InvalidVersion => Error;
    MalformedTurn => Error;
    InvalidValue => Error, fix = true;
    UnknownStage => Error, fix = true;
    UnknownCallId => Error;
    DuplicateCallId => Error;
    UnknownTool => Warning, fix = true;
    ContextIncomplete => Error;
    StageInitFailed => Warning;
    CassetteExhausted => Error;
    CassetteUnconsumed => Warning;
    RequestDrift => Warning, fix = true;
    ExpectationFailed => Error;
    ToolFakeMissing => Error;
    ResultIgnored => Warning;
    ExecutionLimit => Error;
    SecretInRecording => Error, fix = true;
    OutputRejected => Error;
    FlowStopped => Error;
    UnknownAgent => Error, fix = true;
    UnknownWorkflow => Error, fix = true;
    RunStopped => Warning;
    RenderedEmpty => Warning;
    RenderedVerbatim => Warning;
    EngineMismatch => Warning, fix = true;
}
