//! The `steps/` rules, grouped by what they look at. Each group is `check(&Agent, out)`.

mod agent_json;
mod declared_schema;
mod entry;
pub(super) mod files;
mod flow;
mod gate;
mod keys;
mod prompts;
mod reach;
mod structure;
mod transitions;
mod uv;
mod validators;

use crate::diagnostic::Diagnostic;
use crate::families::steps::model::Agent;

/// Rules over one agent (its registry and companions). Syntax findings are made per file
/// before this runs; a registry that did not parse is skipped here.
pub(super) fn check_agent(agent: &Agent, out: &mut Vec<Diagnostic>) {
    if agent.registry.root.is_none() {
        return;
    }
    // The steps with their lookups, and which of them a run reaches (several rules grade
    // their findings by it), built once for every rule.
    let index = flow::StepIndex::new(agent);
    let live = reach::live(agent, &index);
    files::check(agent, &live, out);
    keys::check(agent, out);
    entry::check(agent, out);
    structure::check(agent, out);
    agent_json::check(agent, out);
    gate::check(agent, &index, out);
    transitions::check(agent, &index, out);
    flow::check(agent, &index, out);
    validators::check(agent, out);
    uv::check(agent, &index, &live, out);
    prompts::check(agent, &index, &live, out);
    // Last: it skips what the rules above already report.
    declared_schema::check_schema_violations(agent, out);
}
