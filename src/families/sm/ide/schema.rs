//! Field documentation, types and value sets from our JSON Schemas (`schemas/`), read once.

use std::sync::OnceLock;

use serde_json::Value;

/// Which file format's schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Format {
    /// A stage definition's frontmatter.
    Stage,
    /// `sm.yaml` / `sm.json`.
    Sm,
}

fn root(format: Format) -> &'static Value {
    static STAGE: OnceLock<Value> = OnceLock::new();
    static SM: OnceLock<Value> = OnceLock::new();
    let (cell, text) = match format {
        Format::Stage => (&STAGE, include_str!("../../../../schemas/stage-frontmatter.schema.json")),
        Format::Sm => (&SM, include_str!("../../../../schemas/sm.schema.json")),
    };
    // The schemas ship with the crate and `tests/meta.rs` checks them, so this cannot fail.
    cell.get_or_init(|| serde_json::from_str(text).unwrap_or(Value::Null))
}

/// Follows local `$ref`s (`#/$defs/x`); a few hops at most in our schemas.
fn resolve(root: &'static Value, mut node: &'static Value) -> &'static Value {
    for _ in 0..8 {
        let Some(target) = node.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) else {
            break;
        };
        match root.pointer(target) {
            Some(next) => node = next,
            None => break,
        }
    }
    node
}

/// The schema of the value at `path` (keys from the document root), unresolved, and its parent
/// mapping's schema (resolved).
fn at(format: Format, path: &[&str]) -> Option<(&'static Value, Option<&'static Value>)> {
    let root = root(format);
    let mut node = root;
    let mut parent = None;
    for key in path {
        let map = resolve(root, node);
        node = map.get("properties")?.get(*key)?;
        parent = Some(map);
    }
    Some((node, parent))
}

/// Markdown documentation of the key at `path`, with its type and whether it is required.
pub(super) fn doc(format: Format, path: &[&str]) -> Option<String> {
    let (node, _) = at(format, path)?;
    let text = node.get("markdownDescription").or_else(|| node.get("description"))?.as_str()?;
    Some(format!("**`{}`**: {}\n\n{text}", path.join("."), summary(format, path).unwrap_or_default()))
}

/// A one-line summary of the key at `path`: its type, and `required` when it is.
pub(super) fn summary(format: Format, path: &[&str]) -> Option<String> {
    let (node, parent) = at(format, path)?;
    let resolved = resolve(root(format), node);
    let kind = match resolved.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        _ => "any",
    };
    let kind = if kind == "object" {
        "mapping"
    } else if kind == "array" {
        "list"
    } else {
        kind
    };
    let required = parent
        .and_then(|p| p.get("required"))
        .and_then(Value::as_array)
        .is_some_and(|list| list.iter().any(|k| k.as_str() == path.last().copied()));
    Some(if required { format!("{kind}, required") } else { kind.to_string() })
}

/// The keys the schema defines for the mapping at `parents`, in schema order.
pub(super) fn keys(format: Format, parents: &[&str]) -> Vec<&'static str> {
    let Some((node, _)) = at(format, parents) else {
        return Vec::new();
    };
    let map = resolve(root(format), node);
    map.get("properties").and_then(Value::as_object).map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default()
}

/// The `enum` of the value at `path` (of its items, for a list).
pub(super) fn values(format: Format, path: &[&str]) -> Vec<&'static str> {
    let Some((node, _)) = at(format, path) else {
        return Vec::new();
    };
    let mut node = resolve(root(format), node);
    if let Some(items) = node.get("items") {
        node = resolve(root(format), items);
    }
    node.get("enum")
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}
