//! Step output schemas: finding `outputSchemaRef.schema` in its file, following `$ref`s across
//! the agent's schema files (with cycle detection), and walking pointers and property paths the
//! way climpt's `SchemaResolver` sees them.

use std::collections::HashSet;

use crate::diagnostic::FileId;
use crate::families::steps::model::{Agent, Doc};
use crate::source::{Node, Span};

/// A node in one of the agent's schema files.
#[derive(Clone, Copy, Debug)]
pub struct Loc<'a> {
    pub doc: &'a Doc<'a>,
    pub node: &'a Node,
}

impl<'a> Loc<'a> {
    pub fn file(&self) -> FileId {
        self.doc.id()
    }

    pub fn span(&self) -> Span {
        self.node.span
    }
}

/// Why a schema could not be followed; `at` is where the problem is written.
#[derive(Clone, Debug)]
pub enum SchemaError<'a> {
    /// `outputSchemaRef.file` (or a `$ref` file part) names no file under `schemas/`.
    FileMissing,
    /// `outputSchemaRef.schema` names nothing in the file.
    NameMissing { name: String },
    /// `##/...` and other malformed identifiers.
    Malformed { name: String },
    /// A `$ref` that does not resolve.
    RefUnresolved { at: Loc<'a>, target: String, why: &'static str },
    /// A `$ref` chain that comes back to itself.
    Cycle { at: Loc<'a>, target: String },
}

/// Refs followed in one chain before giving up (climpt has a depth limit too).
const MAX_REF_DEPTH: usize = 32;

/// Schema nodes one property search visits at most.
const MAX_SEARCHED_NODES: usize = 4096;

/// Finds `outputSchemaRef` `{file, schema}`: `schema` is a bare name looked up in `definitions`,
/// then `$defs`, then the top level, or a `#/definitions/x` / `#/$defs/x` pointer.
pub fn step_schema<'a>(agent: &Agent<'a, 'a>, file: &str, schema: &str) -> Result<Loc<'a>, SchemaError<'a>> {
    let doc = agent.schema_file(file).ok_or(SchemaError::FileMissing)?;
    let root = doc.root().ok_or(SchemaError::FileMissing)?;
    if schema.starts_with("##") {
        return Err(SchemaError::Malformed { name: schema.to_string() });
    }
    let node = match schema.strip_prefix('#') {
        Some(pointer) => root.pointer(pointer),
        None => ["definitions", "$defs"]
            .iter()
            .find_map(|section| root.get(section).and_then(|s| s.get(schema)))
            .or_else(|| root.get(schema)),
    };
    node.map(|node| Loc { doc, node }).ok_or_else(|| SchemaError::NameMissing { name: schema.to_string() })
}

/// Follows `$ref` at `loc` until a node without one; cycle-safe.
pub fn deref<'a>(agent: &Agent<'a, 'a>, loc: Loc<'a>) -> Result<Loc<'a>, SchemaError<'a>> {
    let mut seen: HashSet<(FileId, usize)> = HashSet::new();
    let mut current = loc;
    for _ in 0..MAX_REF_DEPTH {
        let Some(target) = current.node.get("$ref").and_then(Node::as_str) else { return Ok(current) };
        if !seen.insert((current.file(), current.node.span.start)) {
            return Err(SchemaError::Cycle { at: current, target: target.to_string() });
        }
        current = resolve_ref(agent, current, target)?;
    }
    Err(SchemaError::Cycle { at: current, target: "(too many nested $refs)".into() })
}

/// Resolves one `$ref` value written at `at`: `#/...` within the same file, `file.json#/...`
/// relative to the schemas directory. Remote refs are never fetched.
pub fn resolve_ref<'a>(agent: &Agent<'a, 'a>, at: Loc<'a>, target: &str) -> Result<Loc<'a>, SchemaError<'a>> {
    let unresolved = |why| SchemaError::RefUnresolved { at, target: target.to_string(), why };
    if target.contains("://") {
        return Err(unresolved("remote references are never fetched"));
    }
    let (file, pointer) = target.split_once('#').unwrap_or((target, ""));
    let doc = if file.is_empty() {
        at.doc
    } else {
        let base = at.doc.path().parent().map(std::path::Path::to_path_buf).unwrap_or_else(|| agent.schemas_dir());
        let path = crate::workspace::discover::normalize(&base.join(file));
        agent
            .schemas
            .iter()
            .copied()
            .find(|d| d.file.path == path)
            .ok_or_else(|| unresolved("the file does not exist"))?
    };
    let root = doc.root().ok_or_else(|| unresolved("the file does not parse"))?;
    let node = root.pointer(pointer).ok_or_else(|| unresolved("the pointer leads nowhere"))?;
    Ok(Loc { doc, node })
}

/// Walks a JSON Pointer literally from `start`, following `$ref` at every step (climpt inlines
/// refs first, then walks without descending into `allOf`/`anyOf`).
pub fn walk_pointer<'a>(
    agent: &Agent<'a, 'a>,
    start: Loc<'a>,
    pointer: &str,
) -> Result<Option<Loc<'a>>, SchemaError<'a>> {
    let mut loc = deref(agent, start)?;
    let Some(rest) = pointer.strip_prefix('/') else { return Ok(Some(loc)) };
    for raw in rest.split('/') {
        let token = raw.replace("~1", "/").replace("~0", "~");
        let next = match &loc.node.value {
            crate::source::Value::Seq(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => loc.node.get(&token),
        };
        let Some(next) = next else { return Ok(None) };
        loc = deref(agent, Loc { doc: loc.doc, node: next })?;
    }
    Ok(Some(loc))
}

/// Finds the schema of a dotted property path (`analysis.understanding`) in an object schema,
/// looking through `properties` and the members of `allOf`/`anyOf`/`oneOf`.
pub fn property<'a>(agent: &Agent<'a, 'a>, start: Loc<'a>, dotted: &str) -> Result<Option<Loc<'a>>, SchemaError<'a>> {
    let mut loc = deref(agent, start)?;
    for segment in dotted.split('.') {
        match find_property(agent, loc, segment, 0, &mut HashSet::new())? {
            Some(next) => loc = next,
            None => return Ok(None),
        }
    }
    Ok(Some(loc))
}

fn find_property<'a>(
    agent: &Agent<'a, 'a>,
    loc: Loc<'a>,
    name: &str,
    depth: usize,
    seen: &mut HashSet<(FileId, usize)>,
) -> Result<Option<Loc<'a>>, SchemaError<'a>> {
    if depth > MAX_REF_DEPTH {
        return Ok(None);
    }
    let loc = deref(agent, loc)?;
    // Each schema node is searched once: members shared through `$ref`s (a hostile schema can
    // fan out exponentially) are not searched again, and the search stays bounded.
    if seen.len() > MAX_SEARCHED_NODES || !seen.insert((loc.file(), loc.node.span.start)) {
        return Ok(None);
    }
    if let Some(node) = loc.node.get("properties").and_then(|p| p.get(name)) {
        return deref(agent, Loc { doc: loc.doc, node }).map(Some);
    }
    // Arrays: `items.x` is not a dotted path climpt writes, but numeric segments index arrays.
    if name.parse::<usize>().is_ok()
        && let Some(items) = loc.node.get("items")
    {
        return deref(agent, Loc { doc: loc.doc, node: items }).map(Some);
    }
    for combinator in ["allOf", "anyOf", "oneOf"] {
        for member in loc.node.get(combinator).and_then(Node::as_seq).unwrap_or_default() {
            if let Some(found) = find_property(agent, Loc { doc: loc.doc, node: member }, name, depth + 1, seen)? {
                return Ok(Some(found));
            }
        }
    }
    Ok(None)
}

/// Whether a schema is open enough that any property may appear (no `properties` anywhere,
/// or `additionalProperties` not false), in which case a missing property is not provable.
pub fn is_open<'a>(agent: &Agent<'a, 'a>, loc: Loc<'a>) -> bool {
    let Ok(loc) = deref(agent, loc) else { return true };
    let closed = loc.node.get("additionalProperties").is_some_and(|n| n.value == crate::source::Value::Bool(false));
    let has_members = ["allOf", "anyOf", "oneOf"].iter().any(|c| loc.node.get(c).is_some());
    !closed && loc.node.get("properties").is_none() && !has_members
}
