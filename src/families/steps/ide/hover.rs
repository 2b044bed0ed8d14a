//! Hover in a registry: a key's documentation from the schema, what an intent does and which
//! step kinds allow it, and the step a step id names.

use crate::editor::{Cursor, HoverInfo};
use crate::families::steps::model::{INTENT_ALIASES, INTENTS, Step};
use crate::workspace::Workspace;

use super::locate::{self, Hit};
use super::navigate::occurrence_at;
use super::{Scope, inner, key_at, kinds_allowing, matches, schema};

pub(crate) fn hover(workspace: &Workspace, at: Cursor) -> Option<HoverInfo> {
    let scope = Scope::registry(workspace, workspace.file(at.file))?;
    let agent = scope.agent();
    let root = agent.registry.root()?;
    if let Some((here, _)) = occurrence_at(&agent, at.offset)
        && let Some(step) = agent.step(&here.name)
    {
        return Some(HoverInfo { span: here.span, markdown: step_markdown(&step) });
    }
    let hit = locate::hit(root, at.offset)?;
    let step = (key_at(&hit.path, 0) == "steps").then(|| agent.step(key_at(&hit.path, 1))).flatten();
    if let Some(key) = hit.key {
        let name = key.as_str().unwrap_or_default();
        if matches(&hit.path, &["steps", "*", "transitions", "*"]) && INTENTS.contains(&name) {
            return Some(HoverInfo { span: inner(key), markdown: intent_markdown(name, step.as_ref()) });
        }
        let doc = schema::at(&hit.path).and_then(schema::doc)?;
        return Some(HoverInfo { span: inner(key), markdown: format!("**`{name}`**\n\n{doc}") });
    }
    value_hover(&hit, step.as_ref())
}

fn value_hover(hit: &Hit, step: Option<&Step>) -> Option<HoverInfo> {
    let value = hit.node.as_str()?;
    let span = inner(hit.node);
    let intent_slot = matches(&hit.path, &["steps", "*", "structuredGate", "allowedIntents", "#"])
        || matches(&hit.path, &["steps", "*", "structuredGate", "fallbackIntent"]);
    if intent_slot {
        if let Some((_, intent)) = INTENT_ALIASES.iter().find(|(alias, _)| *alias == value) {
            let markdown = format!(
                "**`{value}`** is an output alias of the intent `{intent}`: the gate maps it when it reads the \
                 model's answer, but it is not an intent name and is not valid here; write `{intent}`."
            );
            return Some(HoverInfo { span, markdown });
        }
        return INTENTS.contains(&value).then(|| HoverInfo { span, markdown: intent_markdown(value, step) });
    }
    let (_, doc) = schema::values(&hit.path).into_iter().find(|(v, _)| *v == value)?;
    Some(HoverInfo { span, markdown: format!("**`{value}`**\n\n{}", doc?) })
}

/// What an intent does and which step kinds allow it; for a step, whether it may use it.
fn intent_markdown(intent: &str, step: Option<&Step>) -> String {
    let mut out = format!("**intent `{intent}`**");
    if let Some(doc) = schema::intent_doc(intent) {
        out.push_str("\n\n");
        out.push_str(doc);
    }
    let kinds = kinds_allowing(intent);
    let allowed = if kinds.is_empty() {
        "no step kind (listing it in `allowedIntents` stops the agent at start, `SR-VALID-001`)".to_string()
    } else {
        kinds.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
    };
    out.push_str(&format!("\n\nAllowed for: {allowed}."));
    if let Some((step, kind)) = step.and_then(|s| Some((s, s.kind()?)))
        && !kinds.contains(&kind.as_str())
    {
        out.push_str(&format!("\n\nNot allowed for `{}`, a `{}` step.", step.id, kind.as_str()));
    }
    out
}

/// A step's name, kind and C3L address.
fn step_markdown(step: &Step) -> String {
    let mut out = format!("**step `{}`**", step.id);
    if let Some(name) = step.str_field("name") {
        out.push_str(&format!(": {name}"));
    }
    let mut facts = Vec::new();
    if let Some(kind) = step.kind() {
        let inferred = if step.get("stepKind").is_none() { " (inferred from `c2`)" } else { "" };
        facts.push(format!("- kind: `{}`{inferred}", kind.as_str()));
    }
    let c3l: Vec<String> = ["c2", "c3"].iter().filter_map(|k| Some(format!("{k} `{}`", step.str_field(k)?))).collect();
    if !c3l.is_empty() {
        facts.push(format!("- {}", c3l.join(", ")));
    }
    if !facts.is_empty() {
        out.push_str("\n\n");
        out.push_str(&facts.join("\n"));
    }
    out
}
