//! Navigation: from step id references to the step, from `intentSchemaRef` and
//! `outputSchemaRef` into the agent's schema files, from validator and failure-pattern names to
//! their entries, from `{uv-x}` in a prompt to its step's `uvVariables`; the references of a
//! step id, and renaming one everywhere.

use crate::diagnostic::Edit;
use crate::editor::{Cursor, RenameResult, Target};
use crate::families::steps::model::{self, Agent};
use crate::families::steps::schema_ref;
use crate::source::{Node, Span};
use crate::template::c3l::{self, C3lKind};
use crate::workspace::{FileKind, SourceFile, Workspace};

use super::{Scope, inner, key_at, matches, node_at, steps_prompting};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// The step's key under `steps`, or its own `stepId` (equal to the key).
    Definition,
    /// Anything else that names a step.
    Reference,
}

/// A place in the registry that names a step.
pub(super) struct Occurrence {
    pub id: String,
    /// The id's text, without quotes (what a rename replaces).
    pub span: Span,
    /// Where the cursor finds it (quotes included).
    pub hit: Span,
    pub role: Role,
}

impl Occurrence {
    fn of(node: &Node, role: Role) -> Option<Occurrence> {
        let id = node.as_str()?.to_string();
        Some(Occurrence { id, span: inner(node), hit: node.span, role })
    }
}

/// Every place the registry names a step: step keys, `stepId`s, transition targets, fallbacks
/// and conditional targets, `entryStep`, `entryStepMapping` values, `validationSteps` keys and
/// their `stepId`s, and the step part of `inputs.*.from`.
pub(super) fn occurrences(agent: &Agent) -> Vec<Occurrence> {
    let Some(root) = agent.registry.root.as_ref() else { return Vec::new() };
    let text = &agent.registry.file.text;
    let mut out = Vec::new();
    for step in agent.steps() {
        out.extend(Occurrence::of(step.key, Role::Definition));
        let step_id = step.get("stepId").filter(|n| n.as_str() == Some(step.id));
        out.extend(step_id.and_then(|n| Occurrence::of(n, Role::Definition)));
        for (_, rule) in step.transitions() {
            let targets = model::rule_targets(rule).into_iter().filter(|t| t.step.is_some());
            out.extend(targets.filter_map(|t| Occurrence::of(t.node, Role::Reference)));
        }
        for input in step.get("inputs").and_then(Node::as_map).unwrap_or_default() {
            out.extend(input.value.get("from").and_then(|from| from_prefix(text, from)));
        }
    }
    out.extend(root.get("entryStep").and_then(|n| Occurrence::of(n, Role::Reference)));
    for entry in root.get("entryStepMapping").and_then(Node::as_map).unwrap_or_default() {
        out.extend(Occurrence::of(&entry.value, Role::Reference));
    }
    for entry in root.get("validationSteps").and_then(Node::as_map).unwrap_or_default() {
        out.extend(Occurrence::of(&entry.key, Role::Reference));
        out.extend(entry.value.get("stepId").and_then(|n| Occurrence::of(n, Role::Reference)));
    }
    out.sort_by_key(|o| o.span);
    out
}

/// The `<stepId>` of an `inputs.*.from` value `<stepId>.<key>` (written without escapes).
fn from_prefix(text: &str, from: &Node) -> Option<Occurrence> {
    let value = from.as_str()?;
    let raw = inner(from);
    let dot = value.rfind('.').filter(|d| *d > 0 && *d + 1 < value.len())?;
    if text.get(raw.start..raw.end) != Some(value) {
        return None;
    }
    let span = Span::new(raw.start, raw.start + dot);
    Some(Occurrence {
        id: value[..dot].to_string(),
        span,
        hit: Span::new(from.span.start, span.end),
        role: Role::Reference,
    })
}

pub(super) fn occurrence_at(agent: &Agent, offset: usize) -> Option<Occurrence> {
    occurrences(agent).into_iter().find(|o| o.hit.contains(offset))
}

pub(crate) fn definitions(workspace: &Workspace, at: Cursor) -> Vec<Target> {
    let file = workspace.file(at.file);
    match file.kind {
        FileKind::StepsRegistry => registry_definition(workspace, file, at.offset).into_iter().collect(),
        FileKind::C3lPrompt => prompt_definitions(workspace, file, at.offset),
        _ => Vec::new(),
    }
}

fn registry_definition(workspace: &Workspace, file: &SourceFile, offset: usize) -> Option<Target> {
    let scope = Scope::registry(workspace, file)?;
    let agent = scope.agent();
    let registry = agent.registry.id();
    // From a step key or `stepId` too, so that "include the declaration" finds it.
    if let Some(occurrence) = occurrence_at(&agent, offset) {
        let step = agent.step(&occurrence.id)?;
        return Some(Target { file: registry, span: inner(step.key) });
    }
    let root = agent.registry.root.as_ref()?;
    let (path, _, value) = super::locate::string_value(root, offset)?;
    let key_target = |section: &str| {
        let entry = root.get(section)?.entry(value)?;
        Some(Target { file: registry, span: inner(&entry.key) })
    };
    if matches(&path, &["validationSteps", "*", "validationConditions", "#", "validator"]) {
        return key_target("validators");
    }
    if matches(&path, &["validators", "*", "failurePattern"]) {
        return key_target("failurePatterns");
    }
    if matches(&path, &["steps", "*", "structuredGate", "intentSchemaRef"]) {
        let reference = agent.step(key_at(&path, 1))?.get("outputSchemaRef")?;
        let (file, name) = (reference.get("file")?.as_str()?, reference.get("schema")?.as_str()?);
        let schema = schema_ref::step_schema(&agent, file, name).ok()?;
        let found = schema_ref::walk_pointer(&agent, schema, value.strip_prefix('#')?).ok()??;
        let node = found.node.get("enum").unwrap_or(found.node);
        return Some(Target { file: found.file(), span: node.span });
    }
    if matches(&path, &["*", "*", "outputSchemaRef", "file"]) {
        let doc = agent.schema_file(value)?;
        return Some(Target { file: doc.id(), span: doc.root.as_ref()?.span });
    }
    if matches(&path, &["*", "*", "outputSchemaRef", "schema"]) {
        let reference = node_at(root, &path[..path.len() - 1])?;
        let schema = schema_ref::step_schema(&agent, reference.get("file")?.as_str()?, value).ok()?;
        return Some(Target { file: schema.file(), span: schema.span() });
    }
    None
}

/// `{uv-x}` → the `x` in `uvVariables` of the steps this prompt belongs to.
fn prompt_definitions(workspace: &Workspace, file: &SourceFile, offset: usize) -> Vec<Target> {
    let placeholders = c3l::scan(&file.text, Span::new(0, file.text.len()));
    let Some(name) = placeholders.iter().find(|p| p.span.contains(offset)).and_then(|p| match p.kind {
        C3lKind::Uv(name) => Some(name),
        _ => None,
    }) else {
        return Vec::new();
    };
    let Some(scope) = Scope::prompt(workspace, file) else { return Vec::new() };
    let agent = scope.agent();
    let registry = agent.registry.id();
    steps_prompting(&agent, file)
        .iter()
        .flat_map(|step| step.uv_variables())
        .filter(|(variable, _)| *variable == name)
        .map(|(_, span)| Target { file: registry, span: Span::new(span.start + 1, span.end - 1) })
        .collect()
}

pub(crate) fn references(workspace: &Workspace, at: Cursor) -> Vec<Target> {
    let Some(scope) = Scope::registry(workspace, workspace.file(at.file)) else { return Vec::new() };
    let agent = scope.agent();
    let Some(id) = occurrence_at(&agent, at.offset).map(|o| o.id) else { return Vec::new() };
    occurrences(&agent)
        .into_iter()
        .filter(|o| o.role == Role::Reference && o.id == id)
        .map(|o| Target { file: agent.registry.id(), span: o.span })
        .collect()
}

const NOT_A_STEP_ID: &str = "only step ids can be renamed in a steps registry: put the cursor on a key under \
    `steps`, a `stepId`, or a reference to a step (`target`, `fallback`, `targets`, `entryStep`, \
    `entryStepMapping`, a `validationSteps` key, the step part of `inputs.*.from`)";

/// The step id under the cursor that a rename would change, or why there is none.
fn renamed(agent: &Agent, offset: usize) -> Result<Occurrence, String> {
    if agent.registry.root.is_none() {
        return Err("the registry does not parse; fix its syntax before renaming".into());
    }
    let occurrence = occurrence_at(agent, offset).ok_or_else(|| NOT_A_STEP_ID.to_string())?;
    if !agent.has_step(&occurrence.id) {
        return Err(format!("no step is named `{}`, so there is nothing to rename", occurrence.id));
    }
    Ok(occurrence)
}

pub(crate) fn prepare_rename(workspace: &Workspace, at: Cursor) -> Option<Result<Span, String>> {
    let scope = Scope::registry(workspace, workspace.file(at.file))?;
    Some(renamed(&scope.agent(), at.offset).map(|o| o.span))
}

pub(crate) fn rename(workspace: &Workspace, at: Cursor, new_name: &str) -> Option<RenameResult> {
    let scope = Scope::registry(workspace, workspace.file(at.file))?;
    let agent = scope.agent();
    Some(renamed(&agent, at.offset).and_then(|old| {
        check_new_id(&agent, &old.id, new_name)?;
        let mut edits: Vec<Edit> = occurrences(&agent)
            .into_iter()
            .filter(|o| o.id == old.id)
            .map(|o| Edit { span: o.span, replacement: new_name.to_string() })
            .collect();
        edits.sort_by_key(|e| e.span);
        edits.dedup_by_key(|e| e.span);
        Ok(edits.into_iter().map(|e| (agent.registry.id(), e)).collect())
    }))
}

fn check_new_id(agent: &Agent, old: &str, new: &str) -> Result<(), String> {
    if new.trim().is_empty() {
        return Err("a step id cannot be empty".into());
    }
    if new.chars().any(|c| c == '"' || c == '\\' || c.is_control()) {
        return Err(format!(
            "`{new}` is not a usable step id: it contains a quote, a backslash or a control character"
        ));
    }
    if new != old && agent.has_step(new) {
        return Err(format!("`{new}` is already the id of another step"));
    }
    Ok(())
}
