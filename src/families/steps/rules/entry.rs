//! Entry points: `entryStep`, `entryStepMapping` and the agent's verdict type.

use crate::diagnostic::{Diagnostic, Severity};
use crate::families::steps::model::Agent;
use crate::families::steps::release::{Graded, grade, renamed_type};
use crate::families::steps::{R_F3, SR_ENTRY_001, SR_ENTRY_002, SR_ENTRY_003, SR_GATE_002};
use crate::source::Node;
use crate::util::did_you_mean;

pub(super) fn check(agent: &Agent, out: &mut Vec<Diagnostic>) {
    let registry = agent.registry;
    let Some(root) = registry.root().filter(|r| r.as_map().is_some()) else { return };
    let file = registry.id();
    let entry_step = root.get("entryStep");
    let mapping = root.entry("entryStepMapping");
    if entry_step.is_none() && mapping.is_none() {
        out.push(Diagnostic::new(
            SR_ENTRY_001,
            file,
            registry.anchor(),
            "the registry has neither `entryStep` nor `entryStepMapping`, so climpt cannot pick the first step (fatal at agent start); add `\"entryStep\": \"<step id>\"` or an `entryStepMapping` keyed by verdict type",
        ));
    }
    let ids = agent.step_ids();
    if let Some(node) = entry_step {
        match node.as_str() {
            Some(id) if agent.has_step(id) => {}
            Some(id) => {
                let suggestion = super::near_step(id, ids.iter().copied());
                out.push(
                    Diagnostic::new(
                        SR_ENTRY_002,
                        file,
                        node.span,
                        format!(
                            "`entryStep` `{id}` is not a step of this registry{}; climpt refuses to load it (fatal at agent start)",
                            hint(suggestion)
                        ),
                    )
                    .with_suggestion(inner(node), suggestion),
                );
            }
            None => out.push(Diagnostic::new(
                SR_ENTRY_002,
                file,
                node.span,
                format!("`entryStep` must be a step id string, but it is {}", node.type_name()),
            )),
        }
    }
    if let Some(mapping) = mapping {
        check_mapping(agent, &mapping.key, &mapping.value, &ids, out);
    }
    check_verdict_type(agent, out);
}

fn check_mapping(agent: &Agent, key: &Node, mapping: &Node, ids: &[&str], out: &mut Vec<Diagnostic>) {
    let file = agent.registry.id();
    let Some(entries) = mapping.as_map() else {
        out.push(Diagnostic::new(
            SR_ENTRY_003,
            file,
            mapping.span,
            format!(
                "`entryStepMapping` must map verdict types to step ids, like `{{ \"count:iteration\": \"initial.default\" }}`, but it is {}",
                mapping.type_name()
            ),
        ));
        return;
    };
    let types = agent.layout.types();
    for entry in entries {
        let verdict = entry.key.scalar_text();
        // R-F3: a key the agent's verdict type can never equal.
        if let Some(d) = unknown_type(agent, &verdict, entry.key.span, Place::MappingKey) {
            out.push(d);
        }
        let value = &entry.value;
        match value.as_str() {
            Some(id) if agent.has_step(id) => {}
            Some(id) => {
                let suggestion = super::near_step(id, ids.iter().copied());
                out.push(
                    Diagnostic::new(
                        SR_ENTRY_003,
                        file,
                        value.span,
                        format!(
                            "`entryStepMapping[\"{verdict}\"]` names `{id}`, which is not a step of this registry{}; climpt refuses to load it (fatal at agent start)",
                            hint(suggestion)
                        ),
                    )
                    .with_suggestion(inner(value), suggestion),
                );
            }
            None => out.push(Diagnostic::new(
                SR_ENTRY_003,
                file,
                value.span,
                format!("`entryStepMapping[\"{verdict}\"]` must be a step id string, but it is {}", value.type_name()),
            )),
        }
    }
    // SR-GATE-002: the agent's verdict type has no entry and there is no `entryStep` to fall back to.
    if agent.registry.get("entryStep").is_some() {
        return;
    }
    let Some((verdict, span, agent_file)) = agent.verdict_type() else { return };
    if !types.contains(&verdict) || mapping.get(verdict).is_some() {
        return;
    }
    let mapped: Vec<String> = entries.iter().map(|e| format!("`{}`", e.key.scalar_text())).collect();
    let noun = agent.layout.noun();
    let listed = if mapped.is_empty() { format!("no {noun} type") } else { mapped.join(", ") };
    out.push(
        Diagnostic::new(
            SR_GATE_002,
            file,
            key.span,
            format!(
                "`entryStepMapping` has no entry for the agent's {noun} type `{verdict}` (it maps {listed}) and there is no `entryStep`; the agent stops at its first iteration with SR-GATE-002"
            ),
        )
        .with_related(agent_file, span, format!("the agent's {noun} type"))
        .with_help(format!("add `\"{verdict}\": \"<step id>\"` to `entryStepMapping`, or an `entryStep`")),
    );
}

/// R-F3: agent.json `runner.verdict.type` (`runner.completion.type`, `behavior.completionType`)
/// is one of the eight types of the release.
fn check_verdict_type(agent: &Agent, out: &mut Vec<Diagnostic>) {
    let Some(agent_json) = agent.agent_json else { return };
    let path = agent.layout.path("runner.verdict.type");
    let Some(node) = agent_json.at(path) else { return };
    let types = agent.layout.types();
    let d = match node.as_str() {
        Some(verdict) => unknown_type(agent, verdict, node.span, Place::AgentJson),
        None => Some(Diagnostic::new(
            R_F3,
            agent_json.id(),
            node.span,
            format!(
                "`{path}` must be a {} type string, but it is {}; use one of {}",
                agent.layout.noun(),
                node.type_name(),
                types.join(", ")
            ),
        )),
    };
    out.extend(d);
}

/// Where a verdict (or completion) type is written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    MappingKey,
    AgentJson,
}

/// R-F3 for a type name: none when every release the agent may run on knows it; an info when
/// only some do; else what the release calls it instead, when it is another release's name.
fn unknown_type(agent: &Agent, name: &str, span: crate::source::Span, place: Place) -> Option<Diagnostic> {
    let graded = grade(&agent.target, |facts| (!facts.layout.types().contains(&name)).then_some(Severity::Error));
    let types = agent.layout.types();
    let noun = agent.layout.noun();
    let path = agent.layout.path("runner.verdict.type");
    let file = match place {
        Place::MappingKey => agent.registry.id(),
        Place::AgentJson => agent.agent_json?.id(),
    };
    let renamed = renamed_type(name).filter(|r| types.contains(r));
    let message = match (&graded, place, renamed) {
        (Graded::None, ..) => return None,
        (Graded::Some(releases), Place::MappingKey, _) => format!(
            "`entryStepMapping` key `{name}` is not a {noun} type of {releases}, where the entry is never used; other releases this agent may run on read it"
        ),
        (Graded::Some(releases), Place::AgentJson, _) => format!(
            "`{path}` `{name}` is not a {noun} type of {releases}, which reject the agent definition; other releases this agent may run on read it"
        ),
        (Graded::All(_), Place::MappingKey, Some(current)) => format!(
            "`entryStepMapping` key `{name}` is another climpt release's name for `{current}`: {} maps `{current}`, so the entry is never used",
            agent.target.releases.named()
        ),
        (Graded::All(_), Place::AgentJson, Some(current)) => format!(
            "`{path}` `{name}` is another climpt release's name for `{current}`: {} rejects the agent definition",
            agent.target.releases.named()
        ),
        (Graded::All(_), Place::MappingKey, None) => format!(
            "`entryStepMapping` key `{name}` is not a {noun} type{}, so the entry is never used; keys are `{path}` values: {}",
            hint(did_you_mean(name, types.iter().copied())),
            types.join(", ")
        ),
        (Graded::All(_), Place::AgentJson, None) => format!(
            "`{path}` `{name}` is not a {noun} type{}; use one of {} (climpt rejects the agent definition)",
            hint(did_you_mean(name, types.iter().copied())),
            types.join(", ")
        ),
    };
    let severity = match graded {
        Graded::All(level) => level,
        _ => Severity::Info,
    };
    let mut d = Diagnostic::new(R_F3, file, span, message).with_severity(severity);
    if let Some(current) = renamed {
        d = d.with_help(format!(
            "write `{current}` (climpt 1.12.5 renamed the completion types to verdict types, 78d6131)"
        ));
    }
    Some(d)
}

fn hint(suggestion: Option<&str>) -> String {
    suggestion.map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default()
}

/// A JSON string's text without its quotes, for a replacement that keeps them.
fn inner(node: &Node) -> crate::source::Span {
    let span = node.span;
    if span.len() >= 2 { crate::source::Span::new(span.start + 1, span.end - 1) } else { span }
}
