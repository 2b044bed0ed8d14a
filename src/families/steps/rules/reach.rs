//! How far a run gets: which steps a run of agent.json's verdict type reaches, which only a
//! run of another mapped mode would, and which none does. Built on the flow validator's graph
//! ([`super::flow`]), so reachability is computed one way for every rule, once per agent.

use std::collections::HashSet;

use crate::diagnostic::Severity;
use crate::families::steps::model::{Agent, Step};
use crate::families::steps::rules::flow::{Graph, Resolved, StepIndex};

/// Which steps a run reaches.
pub(super) enum Live<'a> {
    /// From the entry through transition targets, `repeat`, and the default `initial.X` →
    /// `continuation.X` transition: `active` from the entry of agent.json's verdict type,
    /// `any` from any entry of the registry (`entryStep`, every `entryStepMapping` value), which
    /// another verdict type would start from. `any` is `None` when a step it reaches may `jump`.
    Steps { active: HashSet<&'a str>, any: Option<HashSet<&'a str>>, verdict: Option<&'a str> },
    /// The entry names no step: the run fails at start, before any step.
    NoEntry(&'a str),
    /// Cannot be told: no entry, or a reachable step may `jump` anywhere.
    Unknown,
}

/// Whether a run resolves a step's prompt today.
pub(super) enum Reach {
    /// A run of agent.json's verdict type may (or no one can tell that it does not).
    Active,
    /// Only a run of another verdict type would: the registry maps it, agent.json does not
    /// select it. The reason, for messages.
    OtherMode(String),
    /// None does: a `section.*` step, a step no entry reaches, an entry that names no step.
    Never(&'static str),
}

impl Reach {
    /// The severity a finding of `default` severity has at this reach: info where no run
    /// resolves the step, at most a warning where only another verdict type's run would.
    pub(super) fn grade(&self, default: Severity) -> Severity {
        match self {
            Reach::Active => default,
            Reach::OtherMode(_) => default.min(Severity::Warning),
            Reach::Never(_) => Severity::Info,
        }
    }

    /// What to add to a message: `None` for an active step.
    pub(super) fn note(&self) -> Option<String> {
        match self {
            Reach::Active => None,
            Reach::OtherMode(why) => Some(format!("{why}, so this fails only when the agent runs in that mode")),
            Reach::Never(why) => Some(format!("{why}, so nothing fails yet")),
        }
    }
}

/// How far a run gets to a step (see [`Reach`]).
pub(super) fn reach(live: &Live, step: &Step) -> Reach {
    if step.is_section() {
        return Reach::Never("climpt's runner never resolves a `section.*` step");
    }
    match live {
        Live::Steps { active, .. } if active.contains(step.id) => Reach::Active,
        Live::Steps { any: Some(any), .. } if !any.contains(step.id) => Reach::Never("no entry reaches this step"),
        Live::Steps { verdict, .. } => Reach::OtherMode(format!(
            "only the entry of another verdict type than agent.json's {} reaches this step",
            verdict.map(|v| format!("`{v}`")).unwrap_or_else(|| "one".into())
        )),
        Live::NoEntry(_) => Reach::Never("the registry's entry names no step, so no run starts today"),
        Live::Unknown => Reach::Active,
    }
}

/// Which steps runs of `agent` reach.
pub(super) fn live<'a>(agent: &Agent<'a, '_>, index: &StepIndex<'a>) -> Live<'a> {
    let graph = Graph::new(agent, index);
    // The steps reachable from `starts`; `None` when one of them may `jump` anywhere.
    let reached = |starts: Vec<usize>| -> Option<HashSet<&'a str>> {
        let seen = graph.reach(starts);
        let mut ids = HashSet::new();
        for step in index.steps.iter().zip(seen).filter_map(|(step, seen)| seen.then_some(step)) {
            if step.allows("jump") {
                return None;
            }
            ids.insert(step.id);
        }
        Some(ids)
    };
    // A mapping key no type of the release equals is never a run's entry.
    let any = reached(graph.run_entries(agent.layout.types()));
    // The entry climpt starts with for agent.json's verdict type, else `entryStep`.
    let mapped =
        agent.verdict_type().and_then(|(verdict, ..)| agent.registry.get("entryStepMapping")?.get(verdict)?.as_str());
    let Some(name) = mapped.or_else(|| agent.registry.get("entryStep")?.as_str()) else {
        // No entry for agent.json's verdict type (or no agent.json): every mapped entry may be
        // the one a run starts from.
        return match any {
            Some(any) if !any.is_empty() => Live::Steps { active: any.clone(), any: Some(any), verdict: None },
            _ => Live::Unknown,
        };
    };
    // A typo of a step id counts as that step, so findings that follow from it keep their weight.
    let Resolved::Step(entry) = index.resolve(name) else { return Live::NoEntry(name) };
    let Some(active) = reached(vec![entry]) else { return Live::Unknown };
    Live::Steps { active, any, verdict: agent.verdict_type().map(|(v, ..)| v) }
}
