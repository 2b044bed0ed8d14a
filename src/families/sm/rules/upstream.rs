//! `ctx.upstream[i]...`: what predecessors a stage can have, and what their results hold.

use crate::diagnostic::Diagnostic;
use crate::families::sm::model::{Execution, Machine, STAGE_RESULT_FIELDS, StageDoc};
use crate::families::sm::rules::graph::Graph;
use crate::families::sm::{UpstreamEmpty, UpstreamFieldUnknown, UpstreamIndexOutOfRange};
use crate::source::Node;
use crate::template::stage::{Path, Segment, TagKind};
use crate::util::did_you_mean;

/// One way into a stage: the StageResults its `ctx.upstream` holds, in order.
/// `None` stands for a predecessor whose id names no stage (reported elsewhere).
pub(super) struct Incoming<'a, 'w> {
    pub(super) results: Vec<Option<&'a StageDoc<'w>>>,
    /// Why it is empty, for the message.
    empty_reason: &'static str,
}

pub(super) fn check(machine: &Machine, graph: &Graph, out: &mut Vec<Diagnostic>) {
    for stage in &machine.stages {
        let Some((id, _)) = stage.stage_id() else {
            continue;
        };
        if graph.by_id.get(id).is_none_or(|first| first.id() != stage.id()) {
            continue;
        }
        let incoming = incoming(graph, id);
        if incoming.is_empty() {
            continue;
        }
        for tag in stage.tags.iter() {
            let TagKind::Path(path) = &tag.kind else {
                continue;
            };
            if path.root() == Some("ctx") && path.segments.get(1).and_then(Segment::name) == Some("upstream") {
                check_reference(stage, path, &incoming, out);
            }
        }
    }
}

/// The stages whose result `ctx.upstream[index]` can be in the stage `id`, over every way into
/// it, first way first (for the editor: completion, hover and navigation of `parsed` paths).
pub(crate) fn predecessors<'a, 'w>(machine: &Machine<'a, 'w>, id: &str, index: usize) -> Vec<&'a StageDoc<'w>> {
    let Some(graph) = super::graph::check(machine, &mut Vec::new()) else {
        return Vec::new();
    };
    let mut found: Vec<&'a StageDoc<'w>> = Vec::new();
    for way in incoming(&graph, id) {
        if let Some(Some(stage)) = way.results.get(index)
            && !found.iter().any(|seen| seen.id() == stage.id())
        {
            found.push(stage);
        }
    }
    found
}

const SIBLING: &str = "it runs as a parallel sibling";

pub(super) fn incoming<'a, 'w>(graph: &Graph<'a, 'w>, id: &str) -> Vec<Incoming<'a, 'w>> {
    let mut ways = Vec::new();
    if graph.entry == Some(id) {
        ways.push(Incoming { results: Vec::new(), empty_reason: "it is the entry stage" });
    }
    // A plan whose `execution` cannot be read (`sm/FieldType`) could hand over results either
    // way; its successors' upstream is not judged on a guess.
    for (from, plan) in graph.plans.iter().filter(|(_, plan)| !plan.execution_unknown) {
        let lookup = |name: &str| graph.by_id.get(name).copied();
        for (k, (target, _)) in plan.stages.iter().enumerate() {
            if target != id {
                continue;
            }
            match plan.execution {
                Execution::Parallel => ways.push(Incoming { results: Vec::new(), empty_reason: SIBLING }),
                // A sequential list runs in order; each stage receives the result before it.
                Execution::Sequential => {
                    let previous = if k == 0 { Some(*from) } else { lookup(&plan.stages[k - 1].0) };
                    ways.push(Incoming { results: vec![previous], empty_reason: "" });
                }
            }
        }
        if plan.execution == Execution::Parallel && plan.join.as_ref().is_some_and(|(j, _)| j == id) {
            let results = plan.stages.iter().map(|(s, _)| lookup(s)).collect();
            ways.push(Incoming { results, empty_reason: "" });
        }
    }
    ways
}

fn check_reference(stage: &StageDoc, path: &Path, incoming: &[Incoming], out: &mut Vec<Diagnostic>) {
    let file = stage.id();
    let max = incoming.iter().map(|w| w.results.len()).max().unwrap_or(0);
    if max == 0 {
        let reason = incoming.iter().map(|w| w.empty_reason).find(|r| !r.is_empty()).unwrap_or("");
        // No context can fill it (a cassette's `ctx.upstream` is replaced by the run's), so
        // the help points at what can carry the data.
        let help = if reason == SIBLING {
            "a parallel sibling never receives another stage's result: read it in the join (its `ctx.upstream` holds each sibling's result), or have the state machine write the data to a ctx field before the fan-out and read `{{ctx.<field>}}`"
        } else {
            "nothing runs before the entry stage: pass the data in a ctx field the state machine writes, and read `{{ctx.<field>}}`"
        };
        out.push(
            Diagnostic::new(
                UpstreamEmpty,
                file,
                path.span(),
                format!(
                    "`ctx.upstream` is always empty in this stage because {reason}; this placeholder renders nothing"
                ),
            )
            .with_help(help),
        );
        return;
    }
    let Some(third) = path.segments.get(2) else {
        return;
    };
    let Segment::Index { index, span } = third else {
        out.push(Diagnostic::new(
            UpstreamFieldUnknown,
            file,
            third.span(),
            "`ctx.upstream` is a list of StageResults; index it, as in `ctx.upstream[0].parsed`",
        ));
        return;
    };
    if *index >= max {
        out.push(Diagnostic::new(
            UpstreamIndexOutOfRange,
            file,
            *span,
            format!(
                "`ctx.upstream[{index}]` is out of range: this stage receives at most {max} predecessor result{} (`ctx.upstream[0]`{})",
                if max == 1 { "" } else { "s" },
                if max > 1 { format!("..`ctx.upstream[{}]`", max - 1) } else { String::new() }
            ),
        ));
        return;
    }
    let Some(field_segment) = path.segments.get(3) else {
        return;
    };
    let Some(field) = field_segment.name() else {
        return;
    };
    if !STAGE_RESULT_FIELDS.contains(&field) {
        let suggestion = did_you_mean(field, STAGE_RESULT_FIELDS);
        let list = STAGE_RESULT_FIELDS.join(", ");
        let diagnostic = Diagnostic::new(
            UpstreamFieldUnknown,
            file,
            field_segment.span(),
            format!("a StageResult has no `{field}`; its fields are {list}"),
        );
        out.push(diagnostic.with_suggestion(field_segment.span(), suggestion));
        return;
    }
    if field == "parsed" && path.segments.len() > 4 {
        check_parsed(stage, path, *index, incoming, out);
    }
}

/// Result of following a path through a completion schema.
enum Lookup<'n> {
    Found,
    /// The schema is too dynamic to say (composition, `$ref`, no `properties`).
    Unknown,
    Missing {
        segment: usize,
        properties: &'n Node,
    },
}

fn check_parsed(stage: &StageDoc, path: &Path, index: usize, incoming: &[Incoming], out: &mut Vec<Diagnostic>) {
    let rest = &path.segments[4..];
    let mut missing = Vec::new();
    for way in incoming {
        let Some(Some(predecessor)) = way.results.get(index) else {
            continue;
        };
        let Some(schema) = predecessor.field("completionSchema") else {
            continue;
        };
        match lookup(schema, rest) {
            Lookup::Found | Lookup::Unknown => return,
            Lookup::Missing { segment, properties } => missing.push((*predecessor, segment, properties)),
        }
    }
    // Report once, against the first predecessor; the others are related locations.
    let Some((first, segment, properties)) = missing.first() else {
        return;
    };
    let bad = &rest[*segment];
    let Some(name) = bad.name() else { return };
    let names: Vec<&str> = properties.as_map().unwrap_or_default().iter().filter_map(|e| e.key_str()).collect();
    let predecessor_id = first.stage_id().map_or("?", |(id, _)| id);
    let mut message = format!("`{name}` is not a property of `{predecessor_id}`'s completionSchema");
    match did_you_mean(name, names.iter().copied()) {
        Some(s) => message.push_str(&format!("; did you mean `{s}`?")),
        None if !names.is_empty() => message.push_str(&format!("; it has {}", names.join(", "))),
        None => {}
    }
    let mut diagnostic = Diagnostic::new(UpstreamFieldUnknown, stage.id(), bad.span(), message);
    diagnostic = diagnostic.with_suggestion(bad.span(), did_you_mean(name, names.iter().copied()));
    for (predecessor, _, properties) in &missing {
        let span = properties.span;
        let id = predecessor.stage_id().map_or("?", |(id, _)| id);
        diagnostic =
            diagnostic.with_related(predecessor.id(), span, format!("`{id}` declares its completion properties here"));
    }
    out.push(diagnostic);
}

fn lookup<'n>(schema: &'n Node, path: &[Segment]) -> Lookup<'n> {
    let mut node = schema;
    for (i, segment) in path.iter().enumerate() {
        if ["allOf", "anyOf", "oneOf", "$ref", "if", "patternProperties", "$dynamicRef"]
            .iter()
            .any(|k| node.get(k).is_some())
        {
            return Lookup::Unknown;
        }
        match segment {
            Segment::Field { name, .. } => {
                let Some(properties) = node.get("properties").filter(|p| p.as_map().is_some()) else {
                    return Lookup::Unknown;
                };
                match properties.get(name) {
                    Some(next) => node = next,
                    // A `required` name is a field the payload has: the typo is the schema's
                    // (`sm/SchemaRequiredUnknown`), not this reader's.
                    None if is_required(node, name) => return Lookup::Unknown,
                    None => {
                        return Lookup::Missing { segment: i, properties };
                    }
                }
            }
            Segment::Index { .. } => match node.get("items").filter(|n| n.as_map().is_some()) {
                Some(items) => node = items,
                None => return Lookup::Unknown,
            },
        }
    }
    Lookup::Found
}

fn is_required(schema: &Node, name: &str) -> bool {
    schema.get("required").and_then(Node::as_seq).is_some_and(|names| names.iter().any(|n| n.as_str() == Some(name)))
}
