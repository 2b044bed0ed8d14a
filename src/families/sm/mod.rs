//! The `sm/` family: stud-cli state-machine stage definitions and their `sm.yaml`.

pub mod model;
mod rules;

use crate::diagnostic::Diagnostic;
use crate::families::{Family, RuleMeta, declare_rules};
use crate::workspace::{FileKind, Workspace};
use model::{SmDoc, StageDoc};

declare_rules! { "sm";
    FrontmatterSyntax => Error;
    MissingRequiredField => Error, fix = true;
    FieldType => Error;
    InvalidStageId => Error, fix = true;
    DuplicateStageId => Error;
    StageTurnCapTooLow => Error;
    StageCompletionSchemaInvalid => Error;
    InputsSchemaInvalid => Error;
    CompletionToolCollision => Error;
    UnknownTool => Error, fix = true;
    InvalidRetryPolicy => Error;
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
    UpstreamEmpty => Warning;
    UpstreamIndexOutOfRange => Error;
    UpstreamFieldUnknown => Warning, fix = true;
    CompletionToolNotMentioned => Hint;
}

pub struct Sm;

impl Family for Sm {
    fn name(&self) -> &'static str {
        "sm"
    }

    fn rules(&self) -> &'static [RuleMeta] {
        RULES
    }

    fn check(&self, workspace: &Workspace, out: &mut Vec<Diagnostic>) {
        let stages: Vec<StageDoc> = workspace
            .files()
            .iter()
            .filter(|f| f.kind == FileKind::Stage)
            .map(StageDoc::parse)
            .collect();
        let sms: Vec<SmDoc> = workspace
            .files()
            .iter()
            .filter(|f| f.kind == FileKind::StateMachine)
            .map(SmDoc::parse)
            .collect();
        for stage in &stages {
            rules::check_stage(stage, out);
        }
        let machines = model::group(&sms, &stages);
        for machine in &machines {
            rules::check_machine(machine, out);
        }
    }
}
