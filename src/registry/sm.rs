//! The `sm/` rules: codes, default severities and docs (`src/families/sm/docs/`).

use crate::registry::declare_rules;

declare_rules! { "sm", "../families/sm/docs/";
    FrontmatterSyntax => Error;
    FrontmatterNotFirst => Info, fix = true;
    StageOutsideMachine => Info;
    MissingRequiredField => Error, fix = true;
    FieldType => Error, fix = true;
    InvalidStageId => Error, fix = true;
    DuplicateStageId => Error;
    StageTurnCapTooLow => Error;
    StageCompletionSchemaInvalid => Error, fix = true;
    InputsSchemaInvalid => Error, fix = true;
    SchemaRequiredUnknown => Warning, fix = true;
    SchemaUnknownKeyword => Warning, fix = true;
    InputsSchemaMismatch => Error;
    CompletionToolCollision => Error;
    UnknownTool => Error, fix = true;
    InvalidRetryPolicy => Error, fix = true;
    InvalidResolutionPolicy => Error, fix = true;
    UnknownField => Hint, fix = true;
    ForbiddenPlaceholder => Error;
    TemplateControlFlow => Error;
    MalformedPlaceholder => Error;
    UnknownStageField => Error, fix = true;
    StageCtxUnresolved => Error, fix = true;
    PlaceholderDialect => Warning, fix = true;
    StageJoinDangling => Error, fix = true;
    JoinIsSibling => Error;
    UnknownNextStage => Error, fix = true;
    InvalidParallelPlan => Error;
    EntryStageMissing => Error, fix = true;
    StateMachineInvalid => Error;
    UnreachableStage => Warning;
    NextCycle => Error;
    NextIgnored => Warning;
    UpstreamEmpty => Warning;
    UpstreamIndexOutOfRange => Error;
    UpstreamFieldUnknown => Warning, fix = true;
    CompletionToolNotMentioned => Hint;
}
