//! Hover: a frontmatter or `sm.yaml` key's schema documentation, and what a body placeholder
//! resolves to.

use super::schema::{self, Format};
use super::{Scope, core_ctx_doc, declared_in, result_field_doc, schema_at, schema_type};
use crate::editor::{Cursor, HoverInfo};
use crate::families::sm::model::{CORE_CTX_FIELDS, STAGE_RESULT_FIELDS, StageDoc};
use crate::source::{Node, Span};
use crate::template::stage::{Path, Segment, TagKind};
use crate::workspace::Workspace;

pub(in crate::families::sm) fn hover(workspace: &Workspace, at: Cursor) -> Option<HoverInfo> {
    let scope = Scope::at(workspace, at)?;
    if let Some(stage) = scope.stage() {
        let fm = stage.frontmatter?;
        if fm.yaml.start <= at.offset && at.offset < fm.yaml.end {
            return key_hover(&scope, Format::Stage, fm.yaml, stage.root.as_ref(), at.offset);
        }
        let tag = stage.tags.iter().find(|tag| tag.span.contains(at.offset))?;
        let TagKind::Path(path) = &tag.kind else {
            return None;
        };
        return placeholder_hover(&scope, stage, path, at.offset);
    }
    let sm = scope.sm()?;
    key_hover(&scope, Format::Sm, Span::new(0, scope.file.text.len()), sm.root.as_ref(), at.offset)
}

fn key_hover(scope: &Scope, format: Format, block: Span, tree: Option<&Node>, offset: usize) -> Option<HoverInfo> {
    let (path, span) = match tree {
        Some(root) => tree_key_at(root, offset)?,
        None => crate::editor::yaml_lines::key_at(&scope.file.text, block, offset)?,
    };
    let path: Vec<&str> = path.iter().map(String::as_str).collect();
    Some(HoverInfo { span, markdown: schema::doc(format, &path)? })
}

/// The key path whose key is under `offset`, through nested mappings.
fn tree_key_at(node: &Node, offset: usize) -> Option<(Vec<String>, Span)> {
    for entry in node.as_map()? {
        if entry.key.span.contains(offset) {
            return Some((vec![entry.key_str()?.to_string()], entry.key.span));
        }
        if entry.value.span.contains(offset) {
            let (mut path, span) = tree_key_at(&entry.value, offset)?;
            path.insert(0, entry.key_str()?.to_string());
            return Some((path, span));
        }
    }
    None
}

/// What the placeholder path up to the segment under the cursor stands for.
fn placeholder_hover(scope: &Scope, stage: &StageDoc, path: &Path, offset: usize) -> Option<HoverInfo> {
    let last = path.segments.iter().position(|s| s.span().contains(offset))?;
    let segments = &path.segments[..=last];
    let span = segments[0].span().cover(segments[last].span());
    let shown = Path { segments: segments.to_vec() }.text();
    let names: Vec<Option<&str>> = segments.iter().map(Segment::name).collect();
    let markdown = match names.as_slice() {
        [Some("ctx")] => "`ctx`: the workflow context: the fields the state machine writes (declared in sm.yaml `context`) and the core fields `upstream`, `workflowRunId` and `stageExecutionId`".to_string(),
        [Some("stage")] => "`stage`: this stage's frontmatter fields".to_string(),
        [Some("ctx"), Some(name)] if CORE_CTX_FIELDS.contains(name) => {
            format!("`{shown}`: provided by core: {}", core_ctx_doc(name))
        }
        [Some("ctx"), Some(name)] => {
            let (list, _) = declared_in(scope.owner_sm()?, name)?;
            format!("`{shown}`: declared in sm.yaml context.{list}")
        }
        [Some("stage"), Some(key)] => {
            let value = stage.field(key)?;
            let text = value.as_str().map_or_else(|| stage.source_text(value.span), str::to_string);
            format!("`{shown}` = `{text}`")
        }
        [Some("ctx"), Some("upstream"), None, rest @ ..] => {
            let Segment::Index { index, .. } = segments[2] else {
                return None;
            };
            let predecessors = scope.predecessors(stage, index);
            let ids: Vec<String> =
                predecessors.iter().filter_map(|p| p.stage_id()).map(|(id, _)| format!("`{id}`")).collect();
            if ids.is_empty() {
                return None;
            }
            match rest {
                [] => format!("`{shown}`: the StageResult of {}", ids.join(" or ")),
                [Some(field)] if STAGE_RESULT_FIELDS.contains(field) => {
                    format!("`{shown}`: StageResult field of {}: {}", ids.join(" or "), result_field_doc(field))
                }
                [Some("parsed"), ..] => parsed_hover(&shown, &predecessors, &segments[4..])?,
                _ => return None,
            }
        }
        _ => return None,
    };
    Some(HoverInfo { span, markdown })
}

/// `ctx.upstream[i].parsed.x`: the property in each predecessor's completionSchema.
fn parsed_hover(shown: &str, predecessors: &[&StageDoc], rest: &[Segment]) -> Option<String> {
    let mut sections = Vec::new();
    for predecessor in predecessors {
        let (Some((id, _)), Some(schema)) = (predecessor.stage_id(), predecessor.field("completionSchema")) else {
            continue;
        };
        let Some(node) = schema_at(schema, rest) else {
            continue;
        };
        let what = if rest.is_empty() { "completion payload" } else { "completionSchema property" };
        let mut section = format!("`{shown}`: {what} of `{id}`");
        if let Some(kind) = schema_type(node) {
            section.push_str(&format!("\n\ntype: `{kind}`"));
        }
        if let Some(description) = node.get("description").and_then(Node::as_str) {
            section.push_str(&format!("\n\n{description}"));
        }
        sections.push(section);
    }
    (!sections.is_empty()).then(|| sections.join("\n\n---\n\n"))
}
