//! Navigation and rename. A stage's `id` value declares a stage id; `next.nextStages` (or
//! `stages`), `next.join`, `sm.yaml` `entry` and the cassettes (`stage:` of a stage cassette, a
//! `stages:` key of `sm.cassette.yaml`) refer to one. Renaming also renames a stage cassette
//! named after the id (`<id>.cassette.yaml`). Body placeholders lead to what
//! they read: `ctx.upstream[i]` to the predecessor, `.parsed.x` to its completionSchema property,
//! `stage.x` to the key, a declared `ctx.x` to its `sm.yaml` declaration.

use super::{Scope, declared_in, schema_at, unquoted};
use crate::diagnostic::FileId;
use crate::editor::occurrence::{self, Occurrence, Role};
use crate::editor::{Cursor, RenameResult, Target};
use crate::families::sm::model::StageDoc;
use crate::source::Span;
use crate::template::stage::{Segment, TagKind};
use crate::util::is_kebab_case;
use crate::workspace::{SourceFile, Workspace};

/// Every stage id declared or referred to in the cursor file's state machine (or, for a stage
/// outside any, in the file itself): the id's text without quotes, found by the cursor on the
/// whole scalar.
fn occurrences(scope: &Scope) -> Vec<Occurrence> {
    let stages: Vec<&StageDoc> = match scope.machine() {
        Some(machine) => machine.stages,
        None => scope.stages.iter().collect(),
    };
    let mut out = Vec::new();
    let mut push = |file: &SourceFile, hit: Span, id: &str, role: Role| {
        let span = unquoted(&file.text, hit);
        out.push(Occurrence { name: id.to_string(), file: file.id, span, hit, role });
    };
    for stage in stages {
        if let Some((id, span)) = stage.stage_id() {
            push(stage.file, span, id, Role::Definition);
        }
        if let Some(plan) = stage.next() {
            for (id, span) in plan.stages.iter().chain(&plan.join) {
                push(stage.file, *span, id, Role::Reference);
            }
        }
    }
    if let Some(sm) = scope.owner_sm()
        && let Some((id, span)) = sm.entry()
    {
        push(sm.file, span, id, Role::Reference);
    }
    for file in &scope.cassettes {
        let json = file.path.extension().is_some_and(|e| e == "json");
        let (cassette, _) = crate::cassette::read(&file.text, json);
        if let Some((id, span)) = cassette.stage.stage.as_ref().filter(|_| !cassette.is_machine()) {
            push(file, *span, id, Role::Reference);
        }
        for entry in &cassette.stages {
            push(file, entry.span, &entry.id, Role::Reference);
        }
    }
    out
}

pub(in crate::families::sm) fn definitions(workspace: &Workspace, at: Cursor) -> Vec<Target> {
    let Some(scope) = Scope::at(workspace, at) else {
        return Vec::new();
    };
    let all = occurrences(&scope);
    if let Some(here) = occurrence::at(&all, at) {
        return occurrence::definitions(&all, here);
    }
    match scope.stage() {
        Some(stage) => placeholder_definitions(&scope, stage, at.offset),
        None => Vec::new(),
    }
}

fn placeholder_definitions(scope: &Scope, stage: &StageDoc, offset: usize) -> Vec<Target> {
    let Some(TagKind::Path(path)) = stage.tags.iter().find(|t| t.span.contains(offset)).map(|t| &t.kind) else {
        return Vec::new();
    };
    let segments = &path.segments;
    let Some(last) = segments.iter().position(|s| s.span().contains(offset)) else {
        return Vec::new();
    };
    let names: Vec<Option<&str>> = segments[..=last].iter().map(Segment::name).collect();
    let here = |span: Span| Target { file: stage.id(), span };
    match names.as_slice() {
        [Some("stage"), Some(key)] => {
            stage.root.as_ref().and_then(|r| r.entry(key)).map(|e| here(e.key.span)).into_iter().collect()
        }
        [Some("ctx"), Some(name)] => scope
            .owner_sm()
            .and_then(|sm| Some((sm.file, declared_in(sm, name)?.1)))
            .map(|(file, item)| Target { file: file.id, span: unquoted(&file.text, item.span) })
            .into_iter()
            .collect(),
        [Some("ctx"), Some("upstream"), None, rest @ ..] => {
            let Segment::Index { index, .. } = segments[2] else {
                return Vec::new();
            };
            let predecessors = scope.predecessors(stage, index);
            match rest {
                [] => predecessors
                    .iter()
                    .filter_map(|p| {
                        let (_, span) = p.stage_id()?;
                        Some(Target { file: p.id(), span: unquoted(&p.file.text, span) })
                    })
                    .collect(),
                [Some("parsed"), .., Some(name)] => predecessors
                    .iter()
                    .filter_map(|p| {
                        let parent = schema_at(p.field("completionSchema")?, &segments[4..last])?;
                        let key = &parent.get("properties")?.entry(name)?.key;
                        Some(Target { file: p.id(), span: unquoted(&p.file.text, key.span) })
                    })
                    .collect(),
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

pub(in crate::families::sm) fn references(workspace: &Workspace, at: Cursor) -> Vec<Target> {
    let Some(scope) = Scope::at(workspace, at) else {
        return Vec::new();
    };
    let all = occurrences(&scope);
    match occurrence::at(&all, at) {
        Some(here) => occurrence::references(&all, here),
        None => parsed_references(&scope, at.offset),
    }
}

/// From a property key in a stage's `completionSchema`: the successors' `ctx.upstream[i].parsed`
/// placeholders whose definition is that key (the reverse of `placeholder_definitions`).
fn parsed_references(scope: &Scope, offset: usize) -> Vec<Target> {
    let Some(stage) = scope.stage() else { return Vec::new() };
    if !stage.field("completionSchema").is_some_and(|schema| schema.span.contains(offset)) {
        return Vec::new();
    }
    let Some(machine) = scope.machine() else { return Vec::new() };
    let mut out = Vec::new();
    for other in machine.stages {
        for tag in other.tags.iter() {
            let TagKind::Path(path) = &tag.kind else { continue };
            let names: Vec<Option<&str>> = path.segments.iter().map(Segment::name).collect();
            if !matches!(names.as_slice(), [Some("ctx"), Some("upstream"), None, Some("parsed"), _, ..]) {
                continue;
            }
            for segment in &path.segments[4..] {
                let Segment::Field { .. } = segment else { continue };
                let found = placeholder_definitions(scope, other, segment.span().start);
                if found.iter().any(|t| t.file == stage.id() && t.span.contains(offset)) {
                    out.push(Target { file: other.id(), span: segment.span() });
                }
            }
        }
    }
    out
}

/// Why the cursor's position cannot be renamed.
fn refusal(scope: &Scope) -> String {
    match scope.stage() {
        Some(stage) if stage.root.is_none() => {
            "the frontmatter does not parse; fix it before renaming a stage id".into()
        }
        Some(_) => "only stage ids can be renamed in a stage definition: the `id` value, or an id in `next.nextStages` or `next.join`".into(),
        None => "only stage ids can be renamed in a state machine file: the `entry` value".into(),
    }
}

/// Whether `new_name` may replace the stage id `here`: a kebab-case id that no other stage of
/// the state machine declares.
fn check_new_id(workspace: &Workspace, all: &[Occurrence], here: &Occurrence, new_name: &str) -> Result<(), String> {
    if !is_kebab_case(new_name) {
        return Err(format!(
            "`{new_name}` is not a valid stage id: use lowercase kebab-case (a-z, 0-9, single hyphens), as in `run-tests`"
        ));
    }
    if new_name == here.name {
        return Ok(());
    }
    if let Some(taken) = all.iter().find(|o| o.is_definition() && o.name == new_name) {
        let display = &workspace.file(taken.file).display;
        return Err(format!("stage id `{new_name}` is already used by `{display}` in this state machine"));
    }
    Ok(())
}

pub(in crate::families::sm) fn prepare_rename(workspace: &Workspace, at: Cursor) -> Option<Result<Span, String>> {
    let scope = Scope::at(workspace, at)?;
    let all = occurrences(&scope);
    Some(occurrence::prepare_rename(occurrence::at(&all, at), || refusal(&scope)))
}

pub(in crate::families::sm) fn rename(workspace: &Workspace, at: Cursor, new_name: &str) -> Option<RenameResult> {
    let scope = Scope::at(workspace, at)?;
    let all = occurrences(&scope);
    let Some(here) = occurrence::at(&all, at) else {
        return Some(Err(refusal(&scope)));
    };
    let edits = occurrence::rename(&all, here, new_name, |new| check_new_id(workspace, &all, here, new));
    // Renaming an id to itself changes nothing.
    Some(edits.map(|edits| if new_name == here.name { Vec::new() } else { edits }))
}

/// The stage cassettes a rename to `new_name` renames too: those named `<old id>.cassette.*`
/// that replay the renamed stage, when no file has the new name yet.
pub(in crate::families::sm) fn renamed_files(
    workspace: &Workspace,
    at: Cursor,
    new_name: &str,
) -> Vec<(FileId, std::path::PathBuf)> {
    let Some(scope) = Scope::at(workspace, at) else { return Vec::new() };
    let all = occurrences(&scope);
    let Some(here) = occurrence::at(&all, at) else { return Vec::new() };
    if new_name == here.name || check_new_id(workspace, &all, here, new_name).is_err() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for cassette in &scope.cassettes {
        let name = cassette.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let Some(ext) = name.strip_prefix(&format!("{}.cassette.", here.name)) else { continue };
        let replays = all.iter().any(|o| o.file == cassette.id && o.name == here.name);
        let target = cassette.path.with_file_name(format!("{new_name}.cassette.{ext}"));
        if replays && !workspace.exists(&target) {
            out.push((cassette.id, target));
        }
    }
    out
}
