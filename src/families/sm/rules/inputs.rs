//! `inputsSchema` against what the predecessors' `completionSchema`s can produce.

use crate::diagnostic::Diagnostic;
use crate::families::sm::InputsSchemaMismatch;
use crate::families::sm::model::{Machine, StageDoc};
use crate::families::sm::rules::graph::Graph;
use crate::families::sm::rules::schema::{JSON_TYPES, required_typo};
use crate::families::sm::rules::upstream::incoming;
use crate::source::{Node, Span, Value};

/// Keywords that let a schema produce or accept more than its `type` and `properties` say.
const DYNAMIC: [&str; 8] = ["allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "if", "not", "patternProperties"];

/// One demand of the `inputsSchema` that a predecessor cannot meet.
struct Mismatch<'a, 'w> {
    span: Span,
    message: String,
    predecessor: &'a StageDoc<'w>,
}

pub(super) fn check(machine: &Machine, graph: &Graph, out: &mut Vec<Diagnostic>) {
    for stage in &machine.stages {
        let Some((id, _)) = stage.stage_id() else { continue };
        if graph.by_id.get(id).is_none_or(|first| first.id() != stage.id()) {
            continue;
        }
        let Some(inputs) = stage.field("inputsSchema").filter(|n| n.as_map().is_some()) else { continue };
        if DYNAMIC.iter().any(|k| inputs.get(k).is_some()) {
            continue;
        }
        let Some(parsed) = inputs.get("properties").and_then(|p| p.get("parsed")) else { continue };
        let mut found: Vec<Mismatch> = Vec::new();
        for way in incoming(graph, id) {
            for predecessor in way.results.into_iter().flatten() {
                let Some(produced) = predecessor.field("completionSchema") else { continue };
                if found.iter().any(|m| m.predecessor.id() == predecessor.id()) {
                    continue;
                }
                let mut mismatches = Vec::new();
                compare(parsed, produced, "parsed", 0, &mut mismatches);
                found.extend(mismatches.into_iter().map(|(span, message)| Mismatch { span, message, predecessor }));
            }
        }
        report(stage, &found, out);
    }
}

/// One finding per `inputsSchema` entry; every predecessor that cannot meet it is related.
fn report(stage: &StageDoc, found: &[Mismatch], out: &mut Vec<Diagnostic>) {
    let mut done: Vec<Span> = Vec::new();
    for first in found {
        if done.contains(&first.span) {
            continue;
        }
        done.push(first.span);
        let name = |m: &Mismatch| m.predecessor.stage_id().map_or("?", |(id, _)| id).to_string();
        let after: Vec<String> =
            found.iter().filter(|m| m.span == first.span).map(|m| format!("`{}`", name(m))).collect();
        let mut diagnostic = Diagnostic::new(
            InputsSchemaMismatch,
            stage.id(),
            first.span,
            format!("{}, so this stage fails Setup after {}", first.message, after.join(" and ")),
        )
        .with_help("change the inputsSchema or the predecessor's completionSchema so that they agree");
        for m in found.iter().filter(|m| m.span == first.span) {
            let at = m.predecessor.root.as_ref().and_then(|root| root.entry("completionSchema"));
            let span = at.map_or(m.predecessor.anchor(), |entry| entry.key.span);
            diagnostic = diagnostic.with_related(m.predecessor.id(), span, format!("`{}`'s completionSchema", name(m)));
        }
        out.push(diagnostic);
    }
}

/// Compares what `demand` (a part of the inputsSchema) requires at `path` with what `produced`
/// (the same part of the predecessor's completionSchema) allows.
fn compare(demand: &Node, produced: &Node, path: &str, depth: usize, out: &mut Vec<(Span, String)>) {
    if depth > crate::source::MAX_DEPTH || demand.as_map().is_none() || produced.as_map().is_none() {
        return;
    }
    if DYNAMIC.iter().any(|k| produced.get(k).is_some() || demand.get(k).is_some()) {
        return;
    }
    if let (Some(wanted), Some(made)) = (types(demand), types(produced))
        && !made.iter().any(|m| wanted.iter().any(|w| accepts(w, m)))
    {
        let span = demand.get("type").map_or(demand.span, |n| n.span);
        out.push((
            span,
            format!(
                "`{path}` must be {}, but the predecessor's completionSchema makes it {}",
                quoted(&wanted),
                quoted(&made)
            ),
        ));
        return;
    }
    let declared = produced.get("properties").filter(|p| p.as_map().is_some());
    let open = produced.get("additionalProperties").is_some_and(|n| n.as_map().is_some());
    if let (Some(declared), false) = (declared, open) {
        let required_there = |name: &str| {
            produced.get("required").and_then(Node::as_seq).is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name)))
        };
        for entry in demand.get("required").and_then(Node::as_seq).unwrap_or_default() {
            let Some(name) = entry.as_str() else { continue };
            // A near miss of the demand's own property is `sm/SchemaRequiredUnknown`'s.
            if declared.get(name).is_none() && !required_there(name) && required_typo(demand, name).is_none() {
                out.push((
                    entry.span,
                    format!("`{path}.{name}` is required, but the predecessor's completionSchema does not declare it"),
                ));
            }
        }
    }
    for entry in demand.get("properties").and_then(Node::as_map).unwrap_or_default() {
        let Some(name) = entry.key_str() else { continue };
        if let Some(there) = declared.and_then(|d| d.get(name)) {
            compare(&entry.value, there, &format!("{path}.{name}"), depth + 1, out);
        }
    }
    if let (Some(items), Some(there)) = (demand.get("items"), produced.get("items")) {
        compare(items, there, &format!("{path}[]"), depth + 1, out);
    }
}

/// The JSON types a schema's `type` allows, when it says (a misspelt type is the schema rules'
/// finding, not a mismatch).
fn types(schema: &Node) -> Option<Vec<&str>> {
    let names: Vec<&str> = match &schema.get("type")?.value {
        Value::String(name) => vec![name.as_str()],
        Value::Seq(items) => items.iter().map(Node::as_str).collect::<Option<_>>()?,
        _ => return None,
    };
    names.iter().all(|name| JSON_TYPES.contains(name)).then_some(names)
}

/// Whether a value of type `made` can satisfy `type: wanted` (an integer is a number; a number
/// may be integral).
fn accepts(wanted: &str, made: &str) -> bool {
    wanted == made || (wanted == "number" && made == "integer") || (wanted == "integer" && made == "number")
}

fn quoted(types: &[&str]) -> String {
    types.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(" or ")
}
