//! Editor features for Last Light workflows and their prompts: completion of keys, enum values,
//! phase names and template variables; hover; navigation and rename of phase names across a
//! workflow and its prompt files; outline, links and folds.

mod locate;

use std::path::PathBuf;

use crate::diagnostic::FileId;
use crate::editor::occurrence::{self, Occurrence, Role};
use crate::editor::{
    CompletionItem, CompletionKind, Cursor, Fold, HoverInfo, Link, RenameResult, Symbol, SymbolKind, Target,
};
use crate::families::lastlight::model::{self, Phase, WorkflowDoc};
use crate::families::lastlight::schema::{self, Ty};
use crate::source::{Node, Span};
use crate::template::lastlight::{self as tpl, Engine, TagKind};
use crate::workspace::{FileKind, SourceFile, Workspace};
use locate::Place;

/// The workflows a file belongs to: itself, or those whose phases use it as a prompt.
fn workflows_of<'w>(workspace: &'w Workspace, file: &SourceFile) -> Vec<WorkflowDoc<'w>> {
    let docs = workspace.files().iter().filter(|f| f.kind == FileKind::Workflow);
    match file.kind {
        FileKind::Workflow => docs.filter(|f| f.id == file.id).map(WorkflowDoc::parse).collect(),
        FileKind::WorkflowPrompt => docs
            .map(WorkflowDoc::parse)
            .filter(|doc| prompt_files(workspace, doc).iter().any(|(_, f)| *f == file.id))
            .collect(),
        _ => Vec::new(),
    }
}

/// The prompt files a workflow uses, with the phase index using each.
fn prompt_files(workspace: &Workspace, doc: &WorkflowDoc) -> Vec<(usize, FileId)> {
    doc.prompts.iter().filter_map(|(r, path)| Some((r.phase, workspace.file_at(path.as_ref().ok()?)?.id))).collect()
}

fn engine(file: &SourceFile) -> Engine {
    file.config.lastlight.dialect()
}

/// The text span of a string scalar without its quotes.
fn inner(text: &str, node: &Node) -> Span {
    model::template_region(text, node)
}

/// Every occurrence of a phase name in a workflow and its prompt files: its definition (the
/// phase's `name`), `depends_on` entries, conditions and template references.
fn occurrences(workspace: &Workspace, doc: &WorkflowDoc) -> Vec<Occurrence> {
    let Some(root) = doc.root else { return Vec::new() };
    let text = &doc.file.text;
    let phases = model::phases(root);
    let names: Vec<&str> = phases.iter().filter_map(Phase::name).collect();
    let mut out = Vec::new();
    let mut push = |file: FileId, span: Span, name: &str, role: Role| {
        if names.contains(&name) {
            out.push(Occurrence { name: name.to_string(), file, span, hit: span, role });
        }
    };
    for phase in &phases {
        if let Some(node) = phase.name_node() {
            push(doc.file.id, inner(text, node), node.as_str().unwrap_or_default(), Role::Definition);
        }
        for dep in phase.depends_on() {
            push(doc.file.id, inner(text, dep), dep.as_str().unwrap_or_default(), Role::Reference);
        }
        for condition in conditions(phase) {
            for (span, name) in phase_outputs_read(text, inner(text, condition)) {
                push(doc.file.id, span, name, Role::Reference);
            }
        }
    }
    let mut templates: Vec<(FileId, Vec<tpl::Tag>)> = Vec::new();
    for template in model::yaml_templates(root) {
        let region = model::template_region(text, template.node);
        templates.push((doc.file.id, tpl::parse(&text[region.start..region.end], region.start, engine(doc.file))));
    }
    let mut seen = Vec::new();
    for (_, id) in prompt_files(workspace, doc) {
        if !seen.contains(&id) {
            seen.push(id);
            templates.push((id, tpl::parse(&workspace.file(id).text, 0, engine(doc.file))));
        }
    }
    for (file, tags) in templates {
        for tag in tags {
            let segment = match &tag.kind {
                TagKind::PhaseOutput(segment) => Some(segment),
                TagKind::Var(path) | TagKind::Braced(path) | TagKind::IfOpen { key: path, .. } => match path.first() {
                    Some(first) if first.name == "phaseOutputs" => path.get(1),
                    first => first,
                },
                _ => None,
            };
            if let Some(segment) = segment {
                push(file, segment.span, &segment.name, Role::Reference);
            }
        }
    }
    out
}

/// The `skip_if` (one or a list) and `generic_loop.until` conditions of a phase: they read other
/// phases' outputs as `phaseOutputs.<phase>`.
fn conditions<'n>(phase: &Phase<'n>) -> Vec<&'n Node> {
    let mut out: Vec<&Node> = Vec::new();
    if let Some(skip) = phase.get("skip_if") {
        match skip.as_seq() {
            Some(items) => out.extend(items.iter().filter(|i| i.as_str().is_some())),
            None => out.extend(skip.as_str().map(|_| skip)),
        }
    }
    out.extend(phase.get("generic_loop").and_then(|l| l.get("until")).filter(|n| n.as_str().is_some()));
    out
}

/// The phase names read as `phaseOutputs.<name>` in `text[region]`, with their spans.
fn phase_outputs_read(text: &str, region: Span) -> Vec<(Span, &str)> {
    const PREFIX: &str = "phaseOutputs.";
    let Some(body) = text.get(region.start..region.end) else { return Vec::new() };
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    for (at, _) in body.match_indices(PREFIX) {
        if body[..at].chars().next_back().is_some_and(|c| is_name(c) || c == '.') {
            continue;
        }
        let start = at + PREFIX.len();
        let len = body[start..].find(|c: char| !is_name(c)).unwrap_or(body.len() - start);
        if len > 0 {
            let span = Span::new(region.start + start, region.start + start + len);
            out.push((span, &body[start..start + len]));
        }
    }
    out
}

/// The occurrence under the cursor and all occurrences of its workflows.
fn occurrence_at(workspace: &Workspace, at: Cursor) -> Option<(Occurrence, Vec<Occurrence>)> {
    let file = workspace.file(at.file);
    for doc in workflows_of(workspace, file) {
        let all = occurrences(workspace, &doc);
        if let Some(hit) = occurrence::at(&all, at).cloned() {
            return Some((hit, all));
        }
    }
    None
}

pub(super) fn definitions(workspace: &Workspace, at: Cursor) -> Vec<Target> {
    if let Some((hit, all)) = occurrence_at(workspace, at) {
        return occurrence::definitions(&all, &hit);
    }
    let cron = cron_workflow(workspace, at);
    if !cron.is_empty() {
        return cron;
    }
    links(workspace, at.file)
        .into_iter()
        .filter(|link| link.span.contains(at.offset))
        .filter_map(|link| Some(Target { file: workspace.file_at(&link.target)?.id, span: Span::empty(0) }))
        .collect()
}

/// A cron's `workflow: <name>` → the `name:` of that workflow (looked up as the rules do: by
/// `name`, then by file name, in the cron's `workflows` directory and its subdirectories).
fn cron_workflow(workspace: &Workspace, at: Cursor) -> Vec<Target> {
    let file = workspace.file(at.file);
    if file.kind != FileKind::Workflow {
        return Vec::new();
    }
    let doc = WorkflowDoc::parse(file);
    let Some(node) = doc.get("workflow").filter(|n| doc.is_cron() && n.span.contains(at.offset)) else {
        return Vec::new();
    };
    let Some(wanted) = node.as_str() else { return Vec::new() };
    let agents: Vec<WorkflowDoc> = workspace
        .files()
        .iter()
        .filter(|f| f.kind == FileKind::Workflow && f.id != file.id)
        .map(WorkflowDoc::parse)
        .filter(|w| !w.is_cron() && w.same_namespace(&doc))
        .collect();
    let target = |w: &WorkflowDoc| {
        let span = w.get("name").map_or(Span::empty(0), |n| inner(&w.file.text, n));
        Target { file: w.file.id, span }
    };
    let by_name: Vec<Target> = agents.iter().filter(|w| w.name() == Some(wanted)).map(target).collect();
    if !by_name.is_empty() {
        return by_name;
    }
    agents.iter().filter(|w| w.file.path.file_stem().and_then(|s| s.to_str()) == Some(wanted)).map(target).collect()
}

pub(super) fn references(workspace: &Workspace, at: Cursor) -> Vec<Target> {
    let Some((hit, all)) = occurrence_at(workspace, at) else { return Vec::new() };
    // Uses only: the server adds the declaration (`definitions`) when the client asks for it.
    occurrence::references(&all, &hit)
}

pub(super) fn prepare_rename(workspace: &Workspace, at: Cursor) -> Option<Result<Span, String>> {
    let hit = occurrence_at(workspace, at).map(|(hit, _)| hit);
    let refusal = if hit.is_some() { String::new() } else { refusal(workspace, at)? };
    Some(occurrence::prepare_rename(hit.as_ref(), || refusal))
}

/// Why the template tag under the cursor cannot be renamed; `None` off any tag of a workflow or
/// prompt (nothing of this family).
fn refusal(workspace: &Workspace, at: Cursor) -> Option<String> {
    let file = workspace.file(at.file);
    if !matches!(file.kind, FileKind::Workflow | FileKind::WorkflowPrompt) {
        return None;
    }
    let tags = tpl::parse(&file.text, 0, engine(file));
    let tag = tags.iter().find(|t| t.span.contains(at.offset))?;
    let name = tpl::reads(tag).and_then(|p| p.first()).map(|s| s.name.clone()).unwrap_or_default();
    Some(format!("`{name}` is not a phase name of a workflow using this file; only phase names can be renamed"))
}

pub(super) fn rename(workspace: &Workspace, at: Cursor, new_name: &str) -> Option<RenameResult> {
    let (hit, all) = occurrence_at(workspace, at)?;
    Some(occurrence::rename(&all, &hit, new_name, |new| check_new_name(&all, new)))
}

/// Whether `new` may be a phase name of the workflow: what `${name.output}` matches, and no
/// phase's name yet (the renamed one's included).
fn check_new_name(all: &[Occurrence], new: &str) -> Result<(), String> {
    if new.is_empty() || !new.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("`{new}` cannot be a phase name: `${{name.output}}` only matches letters, digits and `_`"));
    }
    if all.iter().any(|o| o.is_definition() && o.name == new) {
        return Err(format!("a phase named `{new}` already exists"));
    }
    Ok(())
}

pub(super) fn symbols(workspace: &Workspace, file: FileId) -> Vec<Symbol> {
    let source = workspace.file(file);
    if source.kind != FileKind::Workflow {
        return Vec::new();
    }
    let doc = WorkflowDoc::parse(source);
    doc.phases()
        .iter()
        .map(|phase| {
            let name = phase.name().unwrap_or("(unnamed)").to_string();
            let selection = phase.name_node().map_or(phase.node.span, |n| inner(&source.text, n));
            let label = phase.get("label").and_then(Node::as_str);
            let detail = Some(match label {
                Some(label) => format!("{} · {label}", phase.kind()),
                None => phase.kind().to_string(),
            });
            Symbol { name, detail, kind: SymbolKind::Node, span: phase.node.span, selection, children: Vec::new() }
        })
        .collect()
}

pub(super) fn links(workspace: &Workspace, file: FileId) -> Vec<Link> {
    let source = workspace.file(file);
    if source.kind != FileKind::Workflow {
        return Vec::new();
    }
    let doc = WorkflowDoc::parse(source);
    let Some(root) = doc.root else { return Vec::new() };
    let mut out = Vec::new();
    for (reference, target) in &doc.prompts {
        if let Ok(target) = target
            && workspace.exists(target)
        {
            out.push(Link { span: inner(&source.text, reference.node), target: target.clone() });
        }
    }
    for reference in model::skill_references(root) {
        let found: Option<PathBuf> = model::skill_candidates(doc.dir(), reference.text).find(|p| workspace.exists(p));
        if let Some(target) = found {
            out.push(Link { span: inner(&source.text, reference.node), target });
        }
    }
    // Phases that merge one anchored mapping (`<<: *defaults`) share its `prompt:` text.
    let mut seen = std::collections::HashSet::new();
    out.retain(|link| seen.insert(link.span));
    out
}

pub(super) fn folds(workspace: &Workspace, file: FileId) -> Vec<Fold> {
    let source = workspace.file(file);
    let lines = source.lines();
    let fold = |span: Span| {
        let end = source.text[..span.end].trim_end().len();
        let (start_line, end_line) = (lines.line_of(span.start), lines.line_of(end));
        (end_line > start_line).then_some(Fold { start_line, end_line })
    };
    match source.kind {
        FileKind::Workflow => {
            let doc = WorkflowDoc::parse(source);
            doc.phases().iter().filter_map(|p| fold(p.node.span)).collect()
        }
        FileKind::WorkflowPrompt => {
            let tags = tpl::parse(&source.text, 0, engine(source));
            let mut open = Vec::new();
            let mut out = Vec::new();
            for tag in &tags {
                match tag.kind {
                    TagKind::IfOpen { .. } => open.push(tag.span.start),
                    TagKind::IfClose => {
                        if let Some(start) = open.pop() {
                            out.extend(fold(Span::new(start, tag.span.end)));
                        }
                    }
                    _ => {}
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

/// Names a template in `file` may read, with what each is: the variables the server sets on
/// every run at the newest release the repository may be at, the loop variables, and the
/// extras and phases.
fn variables(workspace: &Workspace, file: &SourceFile) -> Vec<(String, String)> {
    let newest = file.config.lastlight.release.newest;
    let mut out: Vec<(String, String)> = model::VARIABLES
        .iter()
        .filter(|v| v.since <= newest && v.set_for == model::SetFor::Every)
        .map(|v| (v.name, v.doc))
        .chain(model::LOOP_VARIABLES.iter().copied())
        .map(|(n, d)| (n.to_string(), d.to_string()))
        .collect();
    // A variable set for more runs in a later release has a row for each: keep the first.
    let mut seen = std::collections::HashSet::new();
    out.retain(|(name, _)| seen.insert(name.clone()));
    out.extend(
        file.config
            .lastlight
            .variables
            .iter()
            .map(|v| (v.clone(), "Declared in stagelint.toml (`request.extra`).".into())),
    );
    for doc in workflows_of(workspace, file) {
        for phase in doc.phases() {
            let Some(name) = phase.name() else { continue };
            out.push((
                name.to_string(),
                format!("Output of phase `{name}` of workflow `{}`.", doc.name().unwrap_or("?")),
            ));
            if let Some(alias) = phase.output_var().and_then(Node::as_str) {
                out.push((alias.to_string(), format!("Output of phase `{name}` (its `output_var`).")));
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|(n, _)| seen.insert(n.clone()));
    out
}

/// `SKILL.md`: its frontmatter keys, `true`/`false`, and the directory's name for `name`.
fn skill_completions(file: &SourceFile, offset: usize) -> Vec<CompletionItem> {
    let Some(fm) = crate::source::frontmatter::split(&file.text) else { return Vec::new() };
    if !(fm.yaml.start <= offset && offset <= fm.yaml.end) {
        return Vec::new();
    }
    let yaml = &file.text[fm.yaml.start..fm.yaml.end];
    let Some(located) = locate::locate(yaml, Span::new(0, yaml.len()), offset - fm.yaml.start) else {
        return Vec::new();
    };
    let replace = located.partial.shift(fm.yaml.start);
    match located.place {
        Place::Key(path) if path.is_empty() => schema::SKILL
            .iter()
            .filter(|f| !located.present.iter().any(|p| p == f.name))
            .map(|f| CompletionItem {
                label: f.name.to_string(),
                kind: CompletionKind::Field,
                detail: f.required.then(|| "required".to_string()),
                documentation: Some(f.doc.to_string()),
                insert: Some(format!("{}: ", f.name)),
                replace,
            })
            .collect(),
        Place::Value { path, .. } if path.len() == 1 => {
            let field = schema::SKILL.iter().find(|f| f.name == path[0]);
            let doc = field.map(|f| format!("**{}**\n\n{}", f.name, f.doc));
            let values: Vec<String> = match (path[0].as_str(), field.map(|f| &f.ty)) {
                (_, Some(Ty::Bool)) => vec!["true".into(), "false".into()],
                ("name", _) => file
                    .path
                    .parent()
                    .and_then(|d| d.file_name())
                    .and_then(|n| n.to_str())
                    .map(str::to_string)
                    .into_iter()
                    .collect(),
                _ => Vec::new(),
            };
            values
                .into_iter()
                .map(|label| CompletionItem {
                    label,
                    kind: CompletionKind::Value,
                    detail: None,
                    documentation: doc.clone(),
                    insert: None,
                    replace,
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// A cron's `workflow:`: the workflows of its directory, by `name` (as the engine looks them up).
fn cron_workflow_names(workspace: &Workspace, file: &SourceFile, replace: Span) -> Vec<CompletionItem> {
    let dir = file.path.parent();
    let mut out: Vec<CompletionItem> = workspace
        .files()
        .iter()
        .filter(|f| f.kind == FileKind::Workflow && f.id != file.id && f.path.parent() == dir)
        .map(WorkflowDoc::parse)
        .filter(|w| !w.is_cron())
        .filter_map(|w| {
            let name = w.name()?.to_string();
            let description = w.get("description").and_then(Node::as_str);
            Some(CompletionItem {
                documentation: Some(match description {
                    Some(d) => format!("Workflow `{name}`: {d}"),
                    None => format!("Workflow `{name}`."),
                }),
                label: name,
                kind: CompletionKind::Reference,
                detail: w.file.path.file_name().map(|n| n.to_string_lossy().into_owned()),
                insert: None,
                replace,
            })
        })
        .collect();
    out.sort_by(|a, b| a.label.cmp(&b.label));
    out.dedup_by(|a, b| a.label == b.label);
    out
}

pub(super) fn completions(workspace: &Workspace, at: Cursor) -> Vec<CompletionItem> {
    let file = workspace.file(at.file);
    if !file.text.is_char_boundary(at.offset) {
        return Vec::new();
    }
    if file.kind == FileKind::Skill {
        return skill_completions(file, at.offset);
    }
    if !matches!(file.kind, FileKind::Workflow | FileKind::WorkflowPrompt) {
        return Vec::new();
    }
    if let Some((partial, dollar)) = locate::template_at(&file.text, at.offset) {
        let phases_only = dollar;
        let vars = variables(workspace, file);
        // `${…}`: the item writes the closing brace, so one already there (an editor's
        // auto-close) is replaced rather than doubled.
        let closes = dollar && file.text[at.offset..].starts_with('}');
        let replace = if closes { Span::new(partial.start, at.offset + 1) } else { partial };
        let typed = &file.text[partial.start..at.offset];
        if dollar && let Some((phase, _)) = typed.split_once('.') {
            // `${plan.`: the phase is chosen; only `output` can follow.
            let Some((_, doc)) = vars.into_iter().find(|(n, d)| n == phase && d.starts_with("Output of phase")) else {
                return Vec::new();
            };
            let after_dot = partial.start + phase.len() + 1;
            return vec![CompletionItem {
                label: "output".into(),
                kind: CompletionKind::Variable,
                detail: None,
                documentation: Some(doc),
                insert: Some("output}".into()),
                replace: Span::new(after_dot, replace.end),
            }];
        }
        return vars
            .into_iter()
            .filter(|(_, doc)| !phases_only || doc.starts_with("Output of phase"))
            .map(|(label, doc)| CompletionItem {
                insert: dollar.then(|| format!("{label}.output}}")),
                label,
                kind: CompletionKind::Variable,
                detail: None,
                documentation: Some(doc),
                replace,
            })
            .collect();
    }
    if file.kind != FileKind::Workflow {
        return Vec::new();
    }
    let Some(located) = locate::locate(&file.text, Span::new(0, file.text.len()), at.offset) else { return Vec::new() };
    let cron = file.text.lines().any(|l| l.trim_end() == "kind: cron");
    // Block lists other than `depends_on` (`phases`) hold mappings.
    let located = match &located.place {
        Place::Item(path) if path.last().is_none_or(|k| k != "depends_on") => located.item_as_key(),
        _ => located,
    };
    match located.place {
        // An item of a block list under `depends_on:` (`- |`).
        Place::Item(_) => depends_on_items(file, at.offset, &located.present, located.partial),
        Place::Key(path) => {
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            let Some(fields) = schema::fields_at(&path, cron) else { return Vec::new() };
            fields
                .iter()
                .filter(|f| !located.present.iter().any(|p| p == f.name))
                .filter(|f| file.config.lastlight.release.any_has(f.since))
                .map(|f| CompletionItem {
                    label: f.name.to_string(),
                    kind: CompletionKind::Field,
                    detail: None,
                    documentation: Some(f.doc.to_string()),
                    insert: Some(format!("{}: ", f.name)),
                    replace: located.partial,
                })
                .collect()
        }
        Place::Value { path, .. } => {
            let keys: Vec<&str> = path.iter().map(String::as_str).collect();
            let value = |label: &str, kind, doc: Option<String>| CompletionItem {
                label: label.to_string(),
                kind,
                detail: None,
                documentation: doc,
                insert: None,
                replace: located.partial,
            };
            if keys.last() == Some(&"depends_on") {
                return depends_on_items(file, at.offset, &located.present, located.partial);
            }
            if cron && keys == ["workflow"] {
                return cron_workflow_names(workspace, file, located.partial);
            }
            // Values carry the key's documentation, as its hover shows it.
            let field = schema::field_at(&keys, cron);
            let doc = field.map(|f| format!("**{}**\n\n{}", f.name, f.doc));
            let values = |labels: &[&str]| -> Vec<CompletionItem> {
                labels.iter().map(|v| value(v, CompletionKind::Value, doc.clone())).collect()
            };
            match field.map(|f| &f.ty) {
                Some(Ty::Enum(labels)) => values(labels),
                Some(Ty::Bool) => values(&["true", "false"]),
                _ if keys.last() == Some(&"variant") => values(schema::VARIANTS),
                _ => Vec::new(),
            }
        }
    }
}

/// Phase names for a `depends_on` list: neither the phase's own name nor those already listed.
fn depends_on_items(file: &SourceFile, offset: usize, listed: &[String], replace: Span) -> Vec<CompletionItem> {
    let doc = WorkflowDoc::parse(file);
    let phases = doc.phases();
    let own = phases
        .iter()
        .find(|p| p.node.span.contains(offset))
        .and_then(Phase::name)
        .map(str::to_string)
        .or_else(|| locate::phase_name_at(&file.text, offset));
    let names: Vec<String> = if phases.is_empty() {
        // Half-typed YAML: the names from the lines.
        file.text
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("- name:").or_else(|| l.trim_start().strip_prefix("name:")))
            .map(|n| n.trim().trim_matches(['"', '\'']).to_string())
            .collect()
    } else {
        phases.iter().filter_map(Phase::name).map(str::to_string).collect()
    };
    names
        .into_iter()
        .filter(|n| !n.is_empty() && own.as_ref() != Some(n) && !listed.contains(n))
        .map(|n| CompletionItem {
            documentation: Some(format!("Phase `{n}`.")),
            label: n,
            kind: CompletionKind::Reference,
            detail: None,
            insert: None,
            replace,
        })
        .collect()
}

pub(super) fn hover(workspace: &Workspace, at: Cursor) -> Option<HoverInfo> {
    let file = workspace.file(at.file);
    if !matches!(file.kind, FileKind::Workflow | FileKind::WorkflowPrompt) || !file.text.is_char_boundary(at.offset) {
        return None;
    }
    let tags = tpl::parse(&file.text, 0, engine(file));
    if let Some(tag) = tags.iter().find(|t| t.span.contains(at.offset)) {
        let segment = match &tag.kind {
            TagKind::PhaseOutput(s) => Some(s),
            _ => tpl::reads(tag).and_then(|p| {
                let first = p.first()?;
                if first.name == "phaseOutputs" { p.get(1).or(Some(first)) } else { Some(first) }
            }),
        };
        let segment = segment?;
        let doc = variables(workspace, file).into_iter().find(|(n, _)| *n == segment.name).map(|(_, d)| d);
        let markdown = match doc {
            Some(doc) => format!("`{}`: {doc}", segment.name),
            None => format!("`{}` is not set by the engine: it renders as an empty string", segment.name),
        };
        return Some(HoverInfo { span: segment.span, markdown });
    }
    if file.kind != FileKind::Workflow {
        return None;
    }
    let (path, span) = locate::key_at(&file.text, Span::new(0, file.text.len()), at.offset)?;
    let cron = file.text.lines().any(|l| l.trim_end() == "kind: cron");
    let keys: Vec<&str> = path.iter().map(String::as_str).collect();
    let field = schema::field_at(&keys, cron)?;
    let release_note = if field.since == crate::registry::releases::lastlight::OLDEST {
        String::new()
    } else {
        format!("\n\nLast Light {} and later.", field.since.name())
    };
    Some(HoverInfo { span, markdown: format!("**{}**\n\n{}{release_note}", field.name, field.doc) })
}
