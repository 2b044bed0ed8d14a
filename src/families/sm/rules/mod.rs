//! The `sm/` rules, grouped by what they look at.

mod fields;
mod graph;
mod schema;
mod template;
mod tools;
pub(super) mod upstream;

use crate::diagnostic::Diagnostic;
use crate::families::sm::model::{Machine, StageDoc};

/// Rules that need only the stage file itself.
pub(super) fn check_stage(stage: &StageDoc, out: &mut Vec<Diagnostic>) {
    if !fields::check_syntax(stage, out) {
        return;
    }
    fields::check(stage, out);
    schema::check(stage, out);
    tools::check(stage, out);
    template::check(stage, out);
}

/// Rules that need the state machine: ids, the next graph, ctx declarations, upstream.
pub(super) fn check_machine(machine: &Machine, out: &mut Vec<Diagnostic>) {
    let graph = graph::check(machine, out);
    template::check_context(machine, out);
    if let Some(graph) = graph {
        upstream::check(machine, &graph, out);
    }
}
