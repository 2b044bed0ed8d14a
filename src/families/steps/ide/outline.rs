//! The registry's outline (one symbol per step, the validation groups) and the file paths
//! written in the registry and `agent.json`.

use std::path::Path;

use crate::diagnostic::FileId;
use crate::editor::{Link, Symbol, SymbolKind};
use crate::families::steps::model::{self, Step};
use crate::source::{Entry, Node};
use crate::workspace::discover::normalize;
use crate::workspace::{FileKind, Workspace};

use super::{Scope, inner, step_detail};

pub(crate) fn symbols(workspace: &Workspace, file: FileId) -> Vec<Symbol> {
    let Some(scope) = Scope::registry(workspace, workspace.file(file)) else { return Vec::new() };
    let agent = scope.agent();
    let Some(root) = agent.registry.root() else { return Vec::new() };
    let mut out = Vec::new();
    for entry in root.as_map().unwrap_or_default() {
        match entry.key_str() {
            Some("steps") => out.extend(agent.steps().iter().map(step_symbol)),
            Some(group @ ("validators" | "failurePatterns" | "validationSteps")) => {
                out.push(group_symbol(group, entry))
            }
            _ => {}
        }
    }
    out
}

fn symbol(name: &str, detail: Option<String>, kind: SymbolKind, key: &Node, value: &Node) -> Symbol {
    Symbol {
        name: name.to_string(),
        detail,
        kind,
        span: key.span.cover(value.span),
        selection: key.span,
        children: Vec::new(),
    }
}

/// A step with its gate (the intents it accepts) and its transitions (where each intent goes).
fn step_symbol(step: &Step) -> Symbol {
    let mut out = symbol(step.id, step_detail(step), SymbolKind::Node, step.key, step.def);
    if let Some(gate) = step.def.entry("structuredGate") {
        let intents: Vec<&str> = step.allowed_intents().into_iter().map(|(i, _)| i).collect();
        let detail = (!intents.is_empty()).then(|| intents.join(", "));
        out.children.push(symbol("structuredGate", detail, SymbolKind::Field, &gate.key, &gate.value));
    }
    if let Some(transitions) = step.def.entry("transitions") {
        let mut group = symbol("transitions", None, SymbolKind::Field, &transitions.key, &transitions.value);
        for rule in transitions.value.as_map().unwrap_or_default() {
            let Some(intent) = rule.key_str() else { continue };
            let targets: Vec<&str> =
                model::rule_targets(&rule.value).iter().map(|t| t.step.unwrap_or("(end)")).collect();
            let detail = (!targets.is_empty()).then(|| format!("→ {}", targets.join(", ")));
            group.children.push(symbol(intent, detail, SymbolKind::Field, &rule.key, &rule.value));
        }
        out.children.push(group);
    }
    out
}

/// `validators`, `failurePatterns` or `validationSteps`, with one child per entry.
fn group_symbol(name: &str, group: &Entry) -> Symbol {
    let mut out = symbol(name, None, SymbolKind::Field, &group.key, &group.value);
    for entry in group.value.as_map().unwrap_or_default() {
        let Some(key) = entry.key_str() else { continue };
        let detail = match name {
            "validators" => entry.value.get("type").and_then(Node::as_str).map(str::to_string),
            "failurePatterns" => entry.value.get("description").and_then(Node::as_str).map(str::to_string),
            _ => entry.value.get("name").and_then(Node::as_str).map(str::to_string),
        };
        out.children.push(symbol(key, detail, SymbolKind::Field, &entry.key, &entry.value));
    }
    out
}

pub(crate) fn links(workspace: &Workspace, file: FileId) -> Vec<Link> {
    let source = workspace.file(file);
    let Some(dir) = source.path.parent() else { return Vec::new() };
    match source.kind {
        FileKind::StepsRegistry => {
            let Some(scope) = Scope::registry(workspace, source) else { return Vec::new() };
            let agent = scope.agent();
            let Some(root) = agent.registry.root() else { return Vec::new() };
            let schemas = agent.schemas_dir();
            let owners = [root.get("steps"), root.get("validationSteps")].into_iter().flatten();
            let definitions = owners.flat_map(|o| o.as_map().unwrap_or_default()).map(|e| &e.value);
            let files = definitions.filter_map(|d| d.get("outputSchemaRef")?.get("file"));
            let mut out: Vec<Link> = schema_link(workspace, root, dir).into_iter().collect();
            out.extend(files.filter_map(|node| link(workspace, node, &schemas)));
            out.sort_by_key(|l| l.span);
            out
        }
        FileKind::AgentJson => {
            let doc = model::Doc::of(source);
            let Some(root) = doc.root() else { return Vec::new() };
            let paths = ["runner.flow.prompts.registry", "runner.flow.systemPromptPath"].map(|p| doc.at(p));
            let mut out: Vec<Link> = schema_link(workspace, root, dir).into_iter().collect();
            out.extend(paths.into_iter().flatten().filter_map(|node| link(workspace, node, dir)));
            out.sort_by_key(|l| l.span);
            out
        }
        _ => Vec::new(),
    }
}

/// A local `$schema`; remote ones are not files.
fn schema_link(workspace: &Workspace, root: &Node, dir: &Path) -> Option<Link> {
    let node = root.get("$schema")?;
    if node.as_str()?.contains("://") {
        return None;
    }
    link(workspace, node, dir)
}

/// A path relative to `base`, linked when the file exists.
fn link(workspace: &Workspace, node: &Node, base: &Path) -> Option<Link> {
    let value = node.as_str().filter(|v| !v.is_empty())?;
    let target = normalize(&base.join(value));
    workspace.exists(&target).then(|| Link { span: inner(node), target })
}
