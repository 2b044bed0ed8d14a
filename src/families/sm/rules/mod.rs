//! The `sm/` rules, grouped by what they look at.

mod fields;
mod graph;
mod inputs;
mod keywords;
mod schema;
mod template;
mod tools;
pub(super) mod upstream;

use crate::diagnostic::{Diagnostic, Severity};
use crate::families::sm::model::{Machine, StageDoc};

/// Rules that need only the stage file itself.
pub(super) fn check_stage(stage: &StageDoc, out: &mut Vec<Diagnostic>) {
    if !fields::check_syntax(stage, out) {
        return;
    }
    fields::check(stage, out);
    schema::check(stage, out);
    keywords::check(stage, out);
    tools::check(stage, out);
    template::check(stage, out);
}

/// Rules that need the state machine: ids, the next graph, ctx declarations, upstream.
pub(super) fn check_machine(machine: &Machine, out: &mut Vec<Diagnostic>) {
    let graph = graph::check(machine, out);
    template::check_context(machine, out);
    if let Some(graph) = graph {
        upstream::check(machine, &graph, out);
        inputs::check(machine, &graph, out);
    }
}

/// Rules for a stage that no state machine owns.
pub(super) fn check_outside(stage: &StageDoc, out: &mut Vec<Diagnostic>) {
    graph::check_outside(stage, out);
}

/// The error findings that make a stage fail Setup or Init, as the per-file rules see them:
/// the frontmatter contract, the schemas, tool names, and the placeholders of the dialect the
/// project renders (tags of the other dialect reach the model verbatim, which is a warning).
/// The runtime reads these instead of re-deciding what a valid stage is.
pub(super) fn init_errors(stage: &StageDoc) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if fields::check_syntax(stage, &mut out) {
        fields::check(stage, &mut out);
        schema::check(stage, &mut out);
        keywords::check(stage, &mut out);
        tools::check(stage, &mut out);
        template::check_rendered(stage, &mut out);
    }
    out.retain(|d| d.severity == Severity::Error);
    out
}
