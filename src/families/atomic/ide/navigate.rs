//! Definitions, references and rename of inputs (`inputs: [{ name }]` ↔ `ctx.inputs.x`) and
//! stage names (`ctx.stage({ name })` ↔ `transcript("x")`, `getMessages("x")`); agent names →
//! their agent files; the outline (the workflow, its inputs and stages) and agent links.

use super::agents;
use super::facts::{Facts, Name};
use super::{agent_of, workflow};
use crate::diagnostic::FileId;
use crate::editor::occurrence::{self, Occurrence, Role};
use crate::editor::{Cursor, Link, RenameResult, Symbol, SymbolKind, Target};
use crate::source::Span;
use crate::workspace::{SourceFile, Workspace};

/// The two kinds of names, kept apart in [`Occurrence::name`] (an input and a stage may share one).
const INPUT: &str = "input ";
const STAGE: &str = "stage ";

/// Every static input and stage name of the file that is defined, with its uses.
fn occurrences(file: &SourceFile, facts: &Facts) -> Vec<Occurrence> {
    let mut out = Vec::new();
    let mut add = |kind: &str, names: Vec<&Name>, role: Role| {
        for name in names.into_iter().filter(|n| !n.dynamic && !n.text.is_empty()) {
            out.push(Occurrence {
                name: format!("{kind}{}", name.text),
                file: file.id,
                span: name.span,
                hit: name.hit,
                role,
            });
        }
    };
    let inputs: Vec<&Name> = facts.inputs.iter().filter_map(|i| i.name.as_ref()).collect();
    let declared = |n: &&Name| inputs.iter().any(|d| d.text == n.text);
    add(INPUT, facts.input_uses.iter().filter(declared).collect(), Role::Reference);
    add(INPUT, inputs.clone(), Role::Definition);
    let stages: Vec<&Name> = facts.stages.iter().filter_map(|s| s.name.as_ref()).filter(|n| !n.dynamic).collect();
    let defined = |n: &&Name| stages.iter().any(|d| d.text == n.text);
    add(STAGE, facts.stage_reads.iter().filter(defined).collect(), Role::Reference);
    add(STAGE, stages.clone(), Role::Definition);
    out
}

/// The file's occurrences and the one under the cursor.
fn occurrence_at(workspace: &Workspace, at: Cursor) -> Option<(Occurrence, Vec<Occurrence>, Facts)> {
    let file = workflow(workspace, at.file)?;
    let facts = Facts::read(&file.text);
    let all = occurrences(file, &facts);
    let hit = occurrence::at(&all, at)?.clone();
    Some((hit, all, facts))
}

/// The agent name under the cursor.
fn agent_at(workspace: &Workspace, at: Cursor) -> Option<(&SourceFile, Name)> {
    let file = workflow(workspace, at.file)?;
    let name = Facts::read(&file.text).agents.into_iter().find(|n| n.hit.contains(at.offset))?;
    Some((file, name))
}

pub(in crate::families::atomic) fn definitions(workspace: &Workspace, at: Cursor) -> Vec<Target> {
    if let Some((hit, all, _)) = occurrence_at(workspace, at) {
        return occurrence::definitions(&all, &hit);
    }
    let Some((file, name)) = agent_at(workspace, at) else { return Vec::new() };
    agents::files(workspace, &file.path)
        .into_iter()
        .filter(|a| a.name == name.text)
        .filter_map(|a| Some(Target { file: workspace.file_at(&a.path)?.id, span: Span::empty(0) }))
        .collect()
}

pub(in crate::families::atomic) fn references(workspace: &Workspace, at: Cursor) -> Vec<Target> {
    match occurrence_at(workspace, at) {
        Some((hit, all, _)) => occurrence::references(&all, &hit),
        None => Vec::new(),
    }
}

pub(in crate::families::atomic) fn prepare_rename(workspace: &Workspace, at: Cursor) -> Option<Result<Span, String>> {
    if let Some((hit, _, _)) = occurrence_at(workspace, at) {
        return Some(Ok(hit.span));
    }
    if agent_at(workspace, at).is_some() {
        return Some(Err("an agent is named by its file; rename the agent file instead".to_string()));
    }
    None
}

pub(in crate::families::atomic) fn rename(workspace: &Workspace, at: Cursor, new_name: &str) -> Option<RenameResult> {
    let (hit, all, _) = occurrence_at(workspace, at)?;
    let text = &workspace.file(at.file).text;
    Some(occurrence::rename(&all, &hit, new_name, |new| check_new_name(text, &all, &hit, new)))
}

/// An input name must be a valid `--flag` (`^[a-zA-Z][a-zA-Z0-9_-]*$`) and, where it is read
/// as `ctx.inputs.x`, a name; a stage name must fit in a string literal. Neither may be taken.
fn check_new_name(text: &str, all: &[Occurrence], hit: &Occurrence, new: &str) -> Result<(), String> {
    let (kind, what) = match hit.name.starts_with(INPUT) {
        true => (INPUT, "an input"),
        false => (STAGE, "a stage"),
    };
    if kind == INPUT && super::facts::is_current(text) {
        // 0.9's inputs are keys of a map, given as `name=value`: any name a key can be.
        let plain = new.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && new.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !plain {
            return Err(format!(
                "`{new}` cannot be an input name: use letters, digits, `_` and `-`, starting with a letter"
            ));
        }
    } else if kind == INPUT {
        let mut chars = new.chars();
        let flag = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !flag {
            return Err(format!(
                "`{new}` cannot be an input name: it must start with a letter and hold only letters, digits, `_` and `-`"
            ));
        }
        let dotted = all.iter().any(|o| o.name == hit.name && text[..o.span.start].ends_with('.'));
        if new.contains('-') && dotted {
            return Err(format!(
                "`{new}` cannot be read as `ctx.inputs.{new}`; keep `-` out of it, or read it as `ctx.inputs[\"{new}\"]` first"
            ));
        }
    } else if new.trim().is_empty() || new.contains(['"', '\'', '`', '\\', '\n']) || new.contains("${") {
        return Err(format!("`{new}` cannot be a stage name: it must be non-empty plain text"));
    }
    if all.iter().any(|o| o.is_definition() && o.name == format!("{kind}{new}")) {
        return Err(format!("{what} named `{new}` already exists"));
    }
    Ok(())
}

pub(in crate::families::atomic) fn symbols(workspace: &Workspace, id: FileId) -> Vec<Symbol> {
    let Some(file) = workflow(workspace, id) else { return Vec::new() };
    let text = file.text.as_str();
    let facts = Facts::read(text);
    let mut children: Vec<Symbol> = Vec::new();
    for input in &facts.inputs {
        let Some(name) = &input.name else { continue };
        let detail = Some(match (facts.current, input.ty.as_deref()) {
            (true, Some(ty)) => format!("input · Type.{ty}"),
            (true, None) => "input".to_string(),
            (false, ty) => format!("input · {}", ty.unwrap_or("string")),
        });
        children.push(Symbol {
            name: name.text.clone(),
            detail,
            kind: SymbolKind::Field,
            span: name.hit,
            selection: name.span,
            children: Vec::new(),
        });
    }
    for stage in &facts.stages {
        let span = stage.span(text.trim_end().len().max(stage.start));
        let (label, selection) = match &stage.name {
            Some(name) => (name.text.clone(), name.span),
            None => ("(unnamed stage)".to_string(), Span::new(stage.start, stage.start)),
        };
        let detail = Some(stage.kind.unwrap_or(if stage.headless { "headless stage" } else { "stage" }).to_string());
        children.push(Symbol { name: label, detail, kind: SymbolKind::Node, span, selection, children: Vec::new() });
    }
    let Some(define) = facts.define else { return children };
    let end = text.trim_end().len().max(define.end);
    let (name, selection) = match &facts.workflow {
        Some(name) => (name.text.clone(), name.span),
        None => ("(unnamed workflow)".to_string(), define),
    };
    let detail = Some(match agent_of(file) {
        Some(agent) => format!("workflow · {agent}"),
        None => "workflow".to_string(),
    });
    // Children before `defineWorkflow` (a stage in a helper above it) stay beside it.
    let (inside, outside): (Vec<Symbol>, Vec<Symbol>) =
        children.into_iter().partition(|c| c.span.start >= define.start);
    let mut out = outside;
    out.push(Symbol {
        name,
        detail,
        kind: SymbolKind::Node,
        span: Span::new(define.start, end),
        selection,
        children: inside,
    });
    out
}

/// The agent names that have an agent file, linked to it.
pub(in crate::families::atomic) fn links(workspace: &Workspace, id: FileId) -> Vec<Link> {
    let Some(file) = workflow(workspace, id) else { return Vec::new() };
    let facts = Facts::read(&file.text);
    if facts.agents.is_empty() {
        return Vec::new();
    }
    let files = agents::files(workspace, &file.path);
    facts
        .agents
        .iter()
        .filter_map(|name| {
            let agent = files.iter().find(|a| a.name == name.text)?;
            Some(Link { span: name.span, target: agent.path.clone() })
        })
        .collect()
}
