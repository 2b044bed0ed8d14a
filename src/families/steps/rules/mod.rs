//! The `steps/` rules, grouped by what they look at. Each group is `check(&Agent, out)`.

mod agent_json;
mod entry;
pub(super) mod files;
mod flow;
mod gate;
mod prompts;
mod reach;
mod structure;
mod transitions;
mod validators;

use crate::diagnostic::Diagnostic;
use crate::families::steps::model::Agent;

/// Rules over one agent (its registry and companions). Syntax findings are made per file
/// before this runs; a registry that did not parse is skipped here.
pub(super) fn check_agent(agent: &Agent, out: &mut Vec<Diagnostic>) {
    if agent.registry.root.is_none() {
        return;
    }
    // Which steps a run reaches: several rules grade their findings by it.
    let live = reach::live(agent);
    files::check(agent, &live, out);
    entry::check(agent, out);
    structure::check(agent, out);
    agent_json::check(agent, out);
    gate::check(agent, out);
    transitions::check(agent, out);
    flow::check(agent, out);
    validators::check(agent, out);
    prompts::check(agent, &live, out);
    // Last: it skips what the rules above already report.
    files::check_schema_violations(agent, out);
}
