//! `inputsSchema` against what the predecessors' `completionSchema`s can produce.

use crate::diagnostic::Diagnostic;
use crate::families::sm::InputsSchemaMismatch;
use crate::families::sm::model::{Machine, STAGE_RESULT_FIELDS, StageDoc};
use crate::families::sm::rules::graph::Graph;
use crate::families::sm::rules::schema::{JSON_TYPES, required_typo};
use crate::families::sm::rules::upstream::incoming;
use crate::source::{Node, Span, Value};
use crate::util::did_you_mean;

/// Keywords that let a schema produce or accept more than its `type` and `properties` say.
const DYNAMIC: [&str; 8] = ["allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "if", "not", "patternProperties"];

/// One demand of the `inputsSchema` that a predecessor cannot meet.
struct Mismatch<'a, 'w> {
    span: Span,
    message: String,
    help: Option<String>,
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
        let mut predecessors: Vec<&StageDoc> = Vec::new();
        for predecessor in incoming(graph, id).into_iter().flat_map(|way| way.results).flatten() {
            if !predecessors.iter().any(|p| p.id() == predecessor.id()) {
                predecessors.push(predecessor);
            }
        }
        let mut found: Vec<Mismatch> = Vec::new();
        for (span, message, help) in result_demands(inputs, &predecessors) {
            for &predecessor in &predecessors {
                found.push(Mismatch { span, message: message.clone(), help: help.clone(), predecessor });
            }
        }
        let parsed = inputs.get("properties").and_then(|p| p.get("parsed"));
        // A `parsed` type no StageResult can carry is reported once, as such.
        let taken: Vec<Span> = found.iter().map(|m| m.span).collect();
        for &predecessor in predecessors.iter().filter(|_| parsed.is_some()) {
            let (Some(parsed), Some(produced)) = (parsed, predecessor.field("completionSchema")) else { continue };
            let mut mismatches = Vec::new();
            compare(parsed, produced, "parsed", 0, &mut mismatches);
            let fresh = mismatches.into_iter().filter(|(span, _)| !taken.contains(span));
            found.extend(fresh.map(|(span, message)| Mismatch { span, message, help: None, predecessor }));
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
        .with_help(first.help.clone().unwrap_or_else(|| {
            "change the inputsSchema or the predecessor's completionSchema so that they agree".to_string()
        }));
        for m in found.iter().filter(|m| m.span == first.span) {
            let at = m.predecessor.root.as_ref().and_then(|root| root.entry("completionSchema"));
            let span = at.map_or(m.predecessor.anchor(), |entry| entry.key.span);
            diagnostic = diagnostic.with_related(m.predecessor.id(), span, format!("`{}`'s completionSchema", name(m)));
        }
        out.push(diagnostic);
    }
}

/// The JSON types each StageResult field can have (`output` is SM-authored, so any).
const RESULT_TYPES: [(&str, &[&str]); 5] = [
    ("verdict", &["string"]),
    ("reason", &["string"]),
    ("parsed", &["object", "null"]),
    ("capHit", &["boolean"]),
    ("attemptCount", &["integer"]),
];

/// What the top level of the inputsSchema demands of a StageResult that no StageResult has:
/// a required name that is not a StageResult field, or a field `type` the field cannot have.
fn result_demands(inputs: &Node, predecessors: &[&StageDoc]) -> Vec<(Span, String, Option<String>)> {
    let mut out = Vec::new();
    if predecessors.is_empty() {
        return out;
    }
    let declared_by_predecessor = |name: &str| {
        predecessors.iter().any(|p| {
            p.field("completionSchema").and_then(|s| s.get("properties")).and_then(|props| props.get(name)).is_some()
        })
    };
    for entry in inputs.get("required").and_then(Node::as_seq).unwrap_or_default() {
        let Some(name) = entry.as_str() else { continue };
        // A near miss of the schema's own property is `sm/SchemaRequiredUnknown`'s.
        if STAGE_RESULT_FIELDS.contains(&name) || required_typo(inputs, name).is_some() {
            continue;
        }
        let help = if declared_by_predecessor(name) {
            format!(
                "`{name}` is a property of the predecessor's `parsed`: require it under `properties.parsed` (`properties: {{parsed: {{required: [{name}]}}}}`)"
            )
        } else if let Some(field) = did_you_mean(name, STAGE_RESULT_FIELDS) {
            format!("did you mean `{field}`?")
        } else {
            format!("a StageResult has only {}", STAGE_RESULT_FIELDS.join(", "))
        };
        out.push((
            entry.span,
            format!("`{name}` is required of each `ctx.upstream` element, but a StageResult has no field `{name}`"),
            Some(help),
        ));
    }
    for (field, can_be) in RESULT_TYPES {
        let Some(schema) = inputs.get("properties").and_then(|p| p.get(field)) else { continue };
        let Some(wanted) = types(schema) else { continue };
        if can_be.iter().any(|made| wanted.iter().any(|w| accepts(w, made))) {
            continue;
        }
        out.push((
            schema.get("type").map_or(schema.span, |n| n.span),
            format!(
                "`{field}` must be {}, but a StageResult's `{field}` is always {}",
                quoted(&wanted),
                quoted(can_be)
            ),
            Some(format!("give `{field}` the type {}, or drop the `type`", quoted(can_be))),
        ));
    }
    out
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
