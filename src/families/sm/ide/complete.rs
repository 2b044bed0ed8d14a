//! Completion: frontmatter keys and values (from the schema, the config and the state
//! machine's stage ids), `sm.yaml` keys and `entry`, and body placeholder paths.

use std::collections::HashSet;

use super::json_schema;
use super::schema::{self, Format};
use super::{Scope, core_ctx_doc, declared_in, result_field_doc, schema_at, schema_type};
use crate::editor::yaml_lines::{self as lines, Place};
use crate::editor::{CompletionItem, CompletionKind, Cursor};
use crate::families::sm::model::{CORE_CTX_FIELDS, OPTIONAL_FIELDS, REQUIRED_FIELDS, STAGE_RESULT_FIELDS, StageDoc};
use crate::source::{Node, Span};
use crate::template::stage::{self as template, Segment, TagKind};
use crate::workspace::Workspace;

pub(in crate::families::sm) fn completions(workspace: &Workspace, at: Cursor) -> Vec<CompletionItem> {
    let Some(scope) = Scope::at(workspace, at) else {
        return Vec::new();
    };
    if let Some(stage) = scope.stage() {
        let Some(fm) = stage.frontmatter else {
            return Vec::new();
        };
        let in_yaml = fm.yaml.start <= at.offset && (at.offset < fm.yaml.end || fm.close_fence.is_none());
        if in_yaml {
            let tree = stage.root.as_ref();
            return yaml_completions(&scope, Format::Stage, fm.yaml, tree, at.offset);
        }
        if fm.close_fence.is_some() && at.offset >= fm.body.start {
            return body_completions(&scope, stage, at.offset);
        }
        return Vec::new();
    }
    let Some(sm) = scope.sm() else {
        return Vec::new();
    };
    let text = &scope.file.text;
    yaml_completions(&scope, Format::Sm, Span::new(0, text.len()), sm.root.as_ref(), at.offset)
}

fn item(label: &str, kind: CompletionKind, replace: Span) -> CompletionItem {
    CompletionItem { label: label.to_string(), kind, detail: None, documentation: None, insert: None, replace }
}

/// Keys and values in a stage's frontmatter or in `sm.yaml`.
fn yaml_completions(
    scope: &Scope,
    format: Format,
    block: Span,
    tree: Option<&Node>,
    offset: usize,
) -> Vec<CompletionItem> {
    let text = &scope.file.text;
    let Some(located) = lines::locate(text, block, offset) else {
        return Vec::new();
    };
    let replace = located.partial;
    match &located.place {
        Place::Key(parents) => {
            let parents: Vec<&str> = parents.iter().map(String::as_str).collect();
            // Keys are not offered in JSON, where they need quotes and commas.
            if format == Format::Sm && scope.file.path.extension().is_some_and(|e| e == "json") {
                return Vec::new();
            }
            let present = match tree {
                Some(root) => tree_keys(root, &parents, offset),
                None => located.present.clone(),
            };
            let after = &text[offset..];
            let has_colon = after.trim_start_matches(lines::is_word).starts_with(':');
            let in_schema = format == Format::Stage && parents.first().is_some_and(|root| is_schema_field(root));
            key_candidates(format, &parents, &present)
                .into_iter()
                .map(|key| {
                    let mut path = parents.clone();
                    path.push(key);
                    if in_schema {
                        return CompletionItem {
                            detail: Some("JSON Schema keyword".into()),
                            documentation: json_schema::doc(key).map(str::to_string),
                            insert: (!has_colon).then(|| format!("{key}: ")),
                            ..item(key, CompletionKind::Field, replace)
                        };
                    }
                    CompletionItem {
                        detail: schema::summary(format, &path),
                        documentation: schema::doc(format, &path),
                        insert: (!has_colon).then(|| format!("{key}: ")),
                        ..item(key, CompletionKind::Field, replace)
                    }
                })
                .collect()
        }
        Place::Value { path, .. } | Place::Item(path) => {
            let in_list = matches!(located.place, Place::Item(_) | Place::Value { in_list: true, .. });
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            let listed = match tree {
                Some(root) if in_list => tree_items(root, &path, offset),
                Some(_) => Vec::new(),
                None => located.present.clone(),
            };
            value_items(scope, format, &path, &listed, tree, replace)
        }
    }
}

/// The keys a mapping can have that it does not have yet (the key being typed aside).
fn key_candidates(format: Format, parents: &[&str], present: &[String]) -> Vec<&'static str> {
    let known: Vec<&'static str> = match (format, parents) {
        (Format::Stage, []) => REQUIRED_FIELDS.iter().chain(OPTIONAL_FIELDS.iter()).copied().collect(),
        (Format::Stage, [root, rest @ ..]) if is_schema_field(root) => {
            if json_schema::is_schema_object(rest) {
                json_schema::KEYWORDS.iter().map(|(k, _)| *k).collect()
            } else {
                Vec::new()
            }
        }
        _ => schema::keys(format, parents),
    };
    let has = |key: &str| present.iter().any(|p| p == key);
    known
        .into_iter()
        .filter(|key| !has(key))
        // `$schema` is for `sm.json`, where keys are not offered.
        .filter(|key| !key.starts_with('$'))
        // `stages` is the wiki's alias of `nextStages`; offer one spelling, and neither once
        // one of them is written.
        .filter(|key| !(parents == ["next"] && (*key == "stages" || has("stages"))))
        .collect()
}

fn value_items(
    scope: &Scope,
    format: Format,
    path: &[&str],
    listed: &[String],
    tree: Option<&Node>,
    replace: Span,
) -> Vec<CompletionItem> {
    let config = &scope.file.config;
    // Values carry the key's documentation, as its hover shows it.
    let key_doc = schema::doc(format, path);
    let values = |names: Vec<&str>| -> Vec<CompletionItem> {
        names
            .into_iter()
            .filter(|name| !listed.iter().any(|l| l == name))
            .map(|name| CompletionItem { documentation: key_doc.clone(), ..item(name, CompletionKind::Value, replace) })
            .collect()
    };
    match (format, path) {
        (Format::Stage, [root, rest @ .., "type"]) if is_schema_field(root) && json_schema::is_schema_object(rest) => {
            json_schema::TYPES
                .iter()
                .map(|name| CompletionItem {
                    detail: Some("JSON Schema type".into()),
                    documentation: json_schema::doc("type").map(str::to_string),
                    ..item(name, CompletionKind::Value, replace)
                })
                .collect()
        }
        (Format::Stage, ["allowedTools"]) => {
            let mut tools: Vec<&str> = config.tools.iter().map(String::as_str).collect();
            tools.sort_unstable();
            tools
                .into_iter()
                .filter(|name| !listed.iter().any(|l| l == name))
                .map(|name| item(name, CompletionKind::Value, replace))
                .collect()
        }
        (Format::Stage, ["resolutionPolicy"]) => {
            values(config.resolution_policies.iter().map(String::as_str).collect())
        }
        (Format::Stage, ["retryPolicy", "backoff"]) => values(config.backoffs.iter().map(String::as_str).collect()),
        (Format::Stage, ["next", "nextStages" | "stages"]) => stage_ids(scope, listed, replace),
        (Format::Stage, ["next", "join"]) => {
            // The join runs after the siblings, so neither a sibling nor the stage itself.
            let mut exclude = match tree {
                Some(root) => tree_items(root, &["next", "nextStages"], usize::MAX)
                    .into_iter()
                    .chain(tree_items(root, &["next", "stages"], usize::MAX))
                    .collect(),
                None => Vec::new(),
            };
            exclude.extend(scope.stage().and_then(|s| s.stage_id()).map(|(id, _)| id.to_string()));
            stage_ids(scope, &exclude, replace)
        }
        (Format::Sm, ["entry"]) => stage_ids(scope, &[], replace),
        _ => values(schema::values(format, path)),
    }
}

/// The state machine's stage ids, with each stage's name and description.
fn stage_ids(scope: &Scope, exclude: &[String], replace: Span) -> Vec<CompletionItem> {
    let mut seen = HashSet::new();
    scope
        .stage_ids()
        .into_iter()
        .filter(|(id, _)| !exclude.iter().any(|e| e == id) && seen.insert(*id))
        .map(|(id, stage)| CompletionItem {
            detail: stage.field("name").and_then(Node::as_str).map(str::to_string),
            documentation: stage.field("description").and_then(Node::as_str).map(str::to_string),
            ..item(id, CompletionKind::Reference, replace)
        })
        .collect()
}

/// The keys of the mapping at `parents`, except one whose key is under the cursor.
fn tree_keys(root: &Node, parents: &[&str], offset: usize) -> Vec<String> {
    let map = parents.iter().try_fold(root, |node, key| node.get(key));
    map.and_then(Node::as_map)
        .unwrap_or_default()
        .iter()
        .filter(|e| !e.key.span.contains(offset))
        .filter_map(|e| e.key_str().map(str::to_string))
        .collect()
}

/// The string items of the list at `path`, except one under the cursor.
fn tree_items(root: &Node, path: &[&str], offset: usize) -> Vec<String> {
    let list = path.iter().try_fold(root, |node, key| node.get(key));
    list.and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter(|n| !n.span.contains(offset))
        .filter_map(|n| n.as_str().map(str::to_string))
        .collect()
}

/// Placeholder paths after `{{` or `${` on the cursor's line.
fn body_completions(scope: &Scope, stage: &StageDoc, offset: usize) -> Vec<CompletionItem> {
    let text = &scope.file.text;
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..offset];
    let Some(open) = [before.rfind("{{"), before.rfind("${")].into_iter().flatten().max() else {
        return Vec::new();
    };
    let inner = &before[open + 2..];
    if inner.contains('}') {
        return Vec::new();
    }
    let inner = inner.trim_start();
    let partial_len: usize = inner.chars().rev().take_while(|c| lines::is_word(*c)).map(char::len_utf8).sum();
    let replace = Span::new(offset - partial_len, offset);
    let head = &inner[..inner.len() - partial_len];
    if head.is_empty() {
        return ["ctx.", "stage."].iter().map(|root| item(root, CompletionKind::Variable, replace)).collect();
    }
    // Reuse the placeholder parser on the complete part of the path (`ctx.upstream[0]`).
    let Some(path_text) = head.strip_suffix('.') else {
        return Vec::new();
    };
    let tags = template::parse(&format!("{{{{{path_text}}}}}"), 0);
    let [tag] = tags.as_slice() else {
        return Vec::new();
    };
    let TagKind::Path(path) = &tag.kind else {
        return Vec::new();
    };
    let segments = &path.segments;
    let names: Vec<Option<&str>> = segments.iter().map(Segment::name).collect();
    let variable = |label: &str, detail: Option<String>, documentation: Option<String>| CompletionItem {
        detail,
        documentation,
        ..item(label, CompletionKind::Variable, replace)
    };
    match names.as_slice() {
        [Some("ctx")] => {
            let declared = scope.owner_sm().and_then(|sm| sm.context()).map(|c| c.names).unwrap_or_default();
            let sm = scope.owner_sm();
            let mut items: Vec<CompletionItem> = declared
                .iter()
                .filter(|name| !CORE_CTX_FIELDS.contains(&name.as_str()))
                .map(|name| {
                    let list = sm.and_then(|sm| declared_in(sm, name)).map_or("required", |(list, _)| list);
                    variable(name, Some(format!("declared in sm.yaml context.{list}")), None)
                })
                .collect();
            items.extend(
                CORE_CTX_FIELDS
                    .iter()
                    .map(|name| variable(name, Some("provided by core".into()), Some(core_ctx_doc(name).to_string()))),
            );
            items
        }
        [Some("stage")] => stage
            .root
            .as_ref()
            .and_then(Node::as_map)
            .unwrap_or_default()
            .iter()
            .filter_map(|e| {
                let key = e.key_str()?;
                Some(variable(key, Some(stage.source_text(e.value.span)), schema::doc(Format::Stage, &[key])))
            })
            .collect(),
        [Some("ctx"), Some("upstream"), None] => STAGE_RESULT_FIELDS
            .iter()
            .map(|field| variable(field, Some("StageResult field".into()), Some(result_field_doc(field).into())))
            .collect(),
        [Some("ctx"), Some("upstream"), None, Some("parsed"), ..] => {
            let Segment::Index { index, .. } = segments[2] else {
                return Vec::new();
            };
            let mut seen = HashSet::new();
            let mut items = Vec::new();
            for predecessor in scope.predecessors(stage, index) {
                let properties = predecessor
                    .field("completionSchema")
                    .and_then(|schema| schema_at(schema, &segments[4..]))
                    .and_then(|schema| schema.get("properties"))
                    .and_then(Node::as_map)
                    .unwrap_or_default();
                for entry in properties {
                    let Some(name) = entry.key_str().filter(|name| seen.insert(name.to_string())) else {
                        continue;
                    };
                    let description = entry.value.get("description").and_then(Node::as_str).map(str::to_string);
                    items.push(variable(name, schema_type(&entry.value), description));
                }
            }
            items
        }
        _ => Vec::new(),
    }
}

/// A frontmatter field whose value is a JSON Schema.
fn is_schema_field(key: &str) -> bool {
    matches!(key, "completionSchema" | "inputsSchema")
}
