//! What is done with task results (`docs/workflows.md`: `schema`, *Result Types*, *Common
//! Mistakes*, *Guiding Principles*): `result.structured` of a task without `schema` (always
//! `undefined`), and a gate decision parsed out of a model's prose with a regular expression.

use crate::diagnostic::Diagnostic;
use crate::families::atomic::model::current::{Call, CallKind, Current};
use crate::families::atomic::{ProseGate, StructuredWithoutSchema};
use crate::workspace::SourceFile;

pub(super) fn check(file: &SourceFile, current: &Current, out: &mut Vec<Diagnostic>) {
    for read in &current.structured {
        let call = &current.calls[read.call];
        if schema(call) != Some(false) {
            continue;
        }
        out.push(
            Diagnostic::new(
                StructuredWithoutSchema,
                file.id,
                read.at,
                "`structured` of a result whose task has no `schema`: atomic sets it only for schema-backed items, so it is always `undefined`",
            )
            .with_related(file.id, call.callee, "the task, without `schema`")
            .with_help("give the task `schema: Type.Object({ … })` (the model then answers through `structured_output`), or read `.text`"),
        );
    }
    for gate in &current.prose_gates {
        let call = &current.calls[gate.call];
        let has = if schema(call) == Some(true) { "; this task has a `schema`: read `result.structured`" } else { "" };
        out.push(
            Diagnostic::new(
                ProseGate,
                file.id,
                gate.at,
                format!("a decision made by matching a regular expression against a model's prose: wording drifts and the gate flips (`docs/workflows.md`, Common Mistakes: use `schema` and `result.structured`){has}"),
            )
            .with_related(file.id, call.callee, "the stage whose text is matched")
            .with_help("give the deciding stage a `schema` (e.g. `Type.Object({ approved: Type.Boolean() })`) and branch on `result.structured`"),
        );
    }
}

/// Whether the call's item has a `schema` (`None`: not known).
fn schema(call: &Call) -> Option<bool> {
    let options = call.options.as_ref();
    let in_options = options.is_some_and(|o| o.get("schema").is_some());
    match call.kind {
        CallKind::Task | CallKind::Stage => match options {
            Some(o) if !o.open => Some(in_options),
            Some(_) => None,
            None => Some(false),
        },
        CallKind::Chain | CallKind::Parallel => {
            if in_options || call.steps.iter().any(|s| s.get("schema").is_some()) {
                return Some(true);
            }
            let closed = !call.steps_open && call.steps.iter().all(|s| !s.open) && options.is_none_or(|o| !o.open);
            closed.then_some(false)
        }
        _ => None,
    }
}
