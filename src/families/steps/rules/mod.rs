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

use crate::diagnostic::{Diagnostic, Severity};
use crate::families::steps::model::Agent;
use crate::families::steps::release;
use crate::families::steps::{AC_VALID_001, SR_GATE_003, SR_GATE_004, SR_LOAD_003};
use crate::registry::releases::climpt::Releases;

/// The step id `id` is most likely a typo of. Ids share phase prefixes (`continuation.`), which
/// make any two look alike by edit distance (`continuation.nowhere` is a third away from
/// `continuation.hotel`): when the guess has the same prefix, the part after it must be a near
/// miss on its own.
pub(super) fn near_step<'a>(id: &str, ids: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let guess = crate::util::did_you_mean(id, ids)?;
    match (id.rsplit_once('.'), guess.rsplit_once('.')) {
        (Some((prefix, tail)), Some((guess_prefix, guess_tail))) if prefix == guess_prefix => {
            crate::util::did_you_mean(tail, [guess_tail]).map(|_| guess)
        }
        _ => Some(guess),
    }
}

/// Rules over one agent (its registry and companions). Syntax findings are made per file
/// before this runs; a registry that did not parse is skipped here.
pub(super) fn check_agent(agent: &Agent, out: &mut Vec<Diagnostic>) {
    if agent.registry.root().is_none() {
        return;
    }
    let first = out.len();
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
    registry_load(agent, &mut out[first..]);
}

/// The checks climpt makes when it loads the registry: fatal from 1.13.7; before, the runner
/// logs `Failed to load steps registry` and runs on without it. Besides these, any finding that
/// says "fatal at agent start" but agent.json's own (`AC-VALID-001`), which fails before.
const REGISTRY_LOAD: [&str; 3] = [SR_LOAD_003, SR_GATE_003, SR_GATE_004];

/// Registry load findings for releases where a failed load does not stop the agent.
fn registry_load(agent: &Agent, found: &mut [Diagnostic]) {
    let lenient = agent
        .target
        .releases
        .iter()
        .filter(|r| !release::FACTS[r.index()].registry_fatal)
        .fold(Releases::none(), Releases::with);
    if lenient.is_empty() {
        return;
    }
    let releases = lenient.named();
    let at_load = |d: &Diagnostic| {
        REGISTRY_LOAD.contains(&d.code) || (d.code != AC_VALID_001 && d.message.contains("fatal at agent start"))
    };
    for d in found.iter_mut().filter(|d| at_load(d) && d.severity == Severity::Error) {
        d.message = d.message.replace("fatal at agent start", "fatal at agent start from climpt 1.13.7 on");
        d.message.push_str(&format!(
            " ({releases} only logs `Failed to load steps registry` and runs on without the registry: no routing, no validation, no step prompts)"
        ));
        d.severity = Severity::Warning;
    }
}

#[cfg(test)]
mod tests {
    use super::near_step;

    #[test]
    fn a_step_id_is_guessed_only_when_the_part_after_its_prefix_is_a_near_miss() {
        let ids = ["initial.alpha", "continuation.hotel", "continuation.golf", "closure.juliet"];
        assert_eq!(near_step("continuation.nowhere", ids), None);
        assert_eq!(near_step("continuation.hotle", ids), Some("continuation.hotel"));
        // A typo in the prefix itself is still a typo.
        assert_eq!(near_step("continuaton.golf", ids), Some("continuation.golf"));
        assert_eq!(near_step("intial.alpha", ids), Some("initial.alpha"));
    }
}
