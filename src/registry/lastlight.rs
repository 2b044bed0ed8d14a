//! The `lastlight/` rules: codes, default severities and docs (`src/families/lastlight/docs/`).

use crate::registry::declare_rules;

declare_rules! { "lastlight", "../families/lastlight/docs/";
    // The file and its keys.
    YamlSyntax => Error, fix = true;
    UnknownKey => Warning, fix = true;
    FieldType => Error, fix = true;
    InvalidEnum => Error, fix = true;
    MissingName => Error;
    MissingField => Error, fix = true;
    EmptyPhases => Error;
    CronKindMissing => Error, fix = true;
    DuplicateWorkflowName => Error;
    ReservedIntent => Error;
    // Phases.
    SkillAndSkills => Error;
    NoPromptOrSkill => Error;
    PhaseTypeField => Error;
    GenericLoopNoUntil => Error;
    UntilGrammar => Warning;
    SkipIfGrammar => Warning;
    TemplateMarkerInShell => Error;
    NeverEvaluated => Info;
    ApprovalGateUnknown => Info, fix = true;
    // Names and the phase graph.
    DuplicatePhase => Error;
    OutputVarCollision => Warning;
    DependsOnUnknown => Error, fix = true;
    DependsOnSelf => Error;
    DependsOnCycle => Error;
    // Files: prompts and skills.
    PromptNotFound => Error, fix = true;
    PromptPathEscapes => Error;
    InvalidSkillName => Error;
    SkillNotFound => Error, fix = true;
    // Templates.
    NestedIf => Warning;
    UnbalancedIf => Warning;
    UnknownHelper => Warning, fix = true;
    TemplateSyntax => Warning, fix = true;
    UnknownVariable => Warning, fix = true;
    PhaseOrder => Warning;
    LoopVariableOutsideLoop => Warning;
    VerdictMarkerMissing => Warning;
    // Crons.
    CronWorkflowUnknown => Error, fix = true;
    CronSchedule => Error;
}
