//! Navigation: from step id references to the step, from `intentSchemaRef` and
//! `outputSchemaRef` into the agent's schema files, from validator and failure-pattern names to
//! their entries, from `{uv-x}` in a prompt to its step's `uvVariables`; the references of a
//! step id, and renaming one everywhere.

use crate::diagnostic::FileId;
use crate::editor::occurrence::{self, Occurrence, Role};
use crate::editor::{Cursor, RenameResult, Target};
use crate::families::steps::model::{self, Agent};
use crate::families::steps::schema_ref;
use crate::source::{Node, Span};
use crate::template::c3l::{self, C3lKind};
use crate::workspace::{FileKind, SourceFile, Workspace};

use super::{Scope, inner, key_at, matches, node_at, steps_prompting};

/// A step id written as the string `node` of the registry `file`: the step's key or its own
/// `stepId` (equal to the key) define it, anything else refers to it.
fn occurrence_of(file: FileId, node: &Node, role: Role) -> Option<Occurrence> {
    let name = node.as_str()?.to_string();
    Some(Occurrence { name, file, span: inner(node), hit: node.span, role })
}

/// Every place the registry names a step, by position: step keys, `stepId`s, transition targets,
/// fallbacks and conditional targets, `entryStep`, `entryStepMapping` values, `validationSteps`
/// keys and their `stepId`s, and the step part of `inputs.*.from`.
pub(super) fn occurrences(agent: &Agent) -> Vec<Occurrence> {
    let Some(root) = agent.registry.root() else { return Vec::new() };
    let file = agent.registry.id();
    let text = &agent.registry.file.text;
    let of = |node: &Node, role| occurrence_of(file, node, role);
    let mut out = Vec::new();
    for step in agent.steps() {
        out.extend(of(step.key, Role::Definition));
        let step_id = step.get("stepId").filter(|n| n.as_str() == Some(step.id));
        out.extend(step_id.and_then(|n| of(n, Role::Definition)));
        for (_, rule) in step.transitions() {
            let targets = model::rule_targets(rule).into_iter().filter(|t| t.step.is_some());
            out.extend(targets.filter_map(|t| of(t.node, Role::Reference)));
        }
        for input in step.get("inputs").and_then(Node::as_map).unwrap_or_default() {
            out.extend(input.value.get("from").and_then(|from| from_prefix(file, text, from)));
        }
    }
    out.extend(root.get("entryStep").and_then(|n| of(n, Role::Reference)));
    for entry in root.get("entryStepMapping").and_then(Node::as_map).unwrap_or_default() {
        out.extend(of(&entry.value, Role::Reference));
    }
    for entry in root.get("validationSteps").and_then(Node::as_map).unwrap_or_default() {
        out.extend(of(&entry.key, Role::Reference));
        out.extend(entry.value.get("stepId").and_then(|n| of(n, Role::Reference)));
    }
    out.sort_by_key(|o| o.span);
    out
}

/// The `<stepId>` of an `inputs.*.from` value `<stepId>.<key>` (written without escapes).
fn from_prefix(file: FileId, text: &str, from: &Node) -> Option<Occurrence> {
    let value = from.as_str()?;
    let raw = inner(from);
    let dot = value.rfind('.').filter(|d| *d > 0 && *d + 1 < value.len())?;
    if text.get(raw.start..raw.end) != Some(value) {
        return None;
    }
    let span = Span::new(raw.start, raw.start + dot);
    Some(Occurrence {
        name: value[..dot].to_string(),
        file,
        span,
        hit: Span::new(from.span.start, span.end),
        role: Role::Reference,
    })
}

/// The step id under the cursor in the registry, with every occurrence of the registry.
pub(super) fn occurrence_at(agent: &Agent, offset: usize) -> Option<(Occurrence, Vec<Occurrence>)> {
    let all = occurrences(agent);
    let at = Cursor { file: agent.registry.id(), offset };
    let here = occurrence::at(&all, at)?.clone();
    Some((here, all))
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
    // A step is defined by its key (first, by position); its `stepId` repeats it.
    if let Some((here, all)) = occurrence_at(&agent, offset) {
        return occurrence::definitions(&all, &here).into_iter().next();
    }
    let root = agent.registry.root()?;
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
        return Some(Target { file: doc.id(), span: doc.root()?.span });
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
    let Some((here, all)) = occurrence_at(&scope.agent(), at.offset) else { return Vec::new() };
    occurrence::references(&all, &here)
}

const NOT_A_STEP_ID: &str = "only step ids can be renamed in a steps registry: put the cursor on a key under \
    `steps`, a `stepId`, or a reference to a step (`target`, `fallback`, `targets`, `entryStep`, \
    `entryStepMapping`, a `validationSteps` key, the step part of `inputs.*.from`)";

/// The step id under the cursor that a rename would change (with every occurrence), or why
/// there is none.
fn renamed(agent: &Agent, offset: usize) -> Result<(Occurrence, Vec<Occurrence>), String> {
    if agent.registry.root().is_none() {
        return Err("the registry does not parse; fix its syntax before renaming".into());
    }
    let (here, all) = occurrence_at(agent, offset).ok_or_else(|| NOT_A_STEP_ID.to_string())?;
    if !agent.has_step(&here.name) {
        return Err(format!("no step is named `{}`, so there is nothing to rename", here.name));
    }
    Ok((here, all))
}

pub(crate) fn prepare_rename(workspace: &Workspace, at: Cursor) -> Option<Result<Span, String>> {
    let scope = Scope::registry(workspace, workspace.file(at.file))?;
    Some(renamed(&scope.agent(), at.offset).map(|(here, _)| here.span))
}

pub(crate) fn rename(workspace: &Workspace, at: Cursor, new_name: &str) -> Option<RenameResult> {
    let scope = Scope::registry(workspace, workspace.file(at.file))?;
    let agent = scope.agent();
    Some(
        renamed(&agent, at.offset).and_then(|(here, all)| {
            occurrence::rename(&all, &here, new_name, |new| check_new_id(&agent, &here.name, new))
        }),
    )
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
