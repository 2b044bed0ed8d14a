//! Field documentation and value sets of the registry, read once from our JSON Schema
//! (`schemas/steps-registry.schema.json`).

use std::sync::OnceLock;

use serde_json::Value;

use super::Seg;

fn root() -> &'static Value {
    static ROOT: OnceLock<Value> = OnceLock::new();
    // The schema ships with the crate and `tests/meta.rs` checks it, so this cannot fail.
    ROOT.get_or_init(|| {
        serde_json::from_str(include_str!("../../../../schemas/steps-registry.schema.json")).unwrap_or(Value::Null)
    })
}

/// Follows local `$ref`s (`#/$defs/x`); a few hops at most in our schema.
fn resolve(mut node: &'static Value) -> &'static Value {
    for _ in 0..8 {
        let Some(target) = node.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) else {
            break;
        };
        match root().pointer(target) {
            Some(next) => node = next,
            None => break,
        }
    }
    node
}

/// The node and the `oneOf`/`anyOf`/`allOf` members it combines, each resolved, in order.
fn members(node: &'static Value) -> Vec<&'static Value> {
    let mut out = vec![resolve(node)];
    let mut at = 0;
    while at < out.len() && out.len() < 32 {
        for combinator in ["oneOf", "anyOf", "allOf"] {
            for member in out[at].get(combinator).and_then(Value::as_array).into_iter().flatten() {
                out.push(resolve(member));
            }
        }
        at += 1;
    }
    out
}

fn child(node: &'static Value, seg: &Seg) -> Option<&'static Value> {
    let members = members(node);
    match seg {
        Seg::Key(key) => members
            .iter()
            .find_map(|m| m.get("properties")?.get(key))
            .or_else(|| members.iter().find_map(|m| m.get("additionalProperties").filter(|a| a.is_object()))),
        Seg::Index(_) => members.iter().find_map(|m| m.get("items")),
    }
}

/// The schema of the value at `path` from the registry's root, as written under its key.
pub(super) fn at(path: &[Seg]) -> Option<&'static Value> {
    path.iter().try_fold(root(), child)
}

/// Markdown documentation of a schema node: its own, else that of what it refers to.
pub(super) fn doc(node: &'static Value) -> Option<&'static str> {
    [node, resolve(node)]
        .into_iter()
        .find_map(|n| n.get("markdownDescription").or_else(|| n.get("description")).and_then(Value::as_str))
}

/// The JSON type of a schema node (`string`, `string | null`), looking through `$ref`s and
/// combinators.
fn type_name(node: &'static Value) -> Option<String> {
    members(node).into_iter().find_map(|m| match m.get("type")? {
        Value::String(name) => Some(name.clone()),
        Value::Array(names) => Some(names.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" | ")),
        _ => None,
    })
}

/// A key the schema defines for a mapping.
pub(super) struct Field {
    pub name: &'static str,
    /// Its type, and `required` when the mapping requires it.
    pub detail: Option<String>,
    pub doc: Option<&'static str>,
    pub deprecated: bool,
}

/// The keys the schema defines for the mapping at `path`, in schema order.
pub(super) fn fields(path: &[Seg]) -> Vec<Field> {
    let Some(node) = at(path) else { return Vec::new() };
    let mut out: Vec<Field> = Vec::new();
    for member in members(node) {
        let required: Vec<&str> =
            member.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        for (name, schema) in member.get("properties").and_then(Value::as_object).into_iter().flatten() {
            if out.iter().any(|f| f.name == name) {
                continue;
            }
            let kind = type_name(schema);
            let detail = match (kind, required.contains(&name.as_str())) {
                (Some(kind), true) => Some(format!("{kind}, required")),
                (Some(kind), false) => Some(kind),
                (None, true) => Some("required".to_string()),
                (None, false) => None,
            };
            let deprecated = schema.get("deprecated").and_then(Value::as_bool).unwrap_or(false);
            out.push(Field { name, detail, doc: doc(schema), deprecated });
        }
    }
    out
}

/// The `enum` of the value at `path`, each value with its documentation.
pub(super) fn values(path: &[Seg]) -> Vec<(&'static str, Option<&'static str>)> {
    at(path).map(enum_of).unwrap_or_default()
}

fn enum_of(node: &'static Value) -> Vec<(&'static str, Option<&'static str>)> {
    let Some(member) = members(node).into_iter().find(|m| m.get("enum").is_some()) else { return Vec::new() };
    let docs = member
        .get("markdownEnumDescriptions")
        .or_else(|| member.get("enumDescriptions"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let values = member.get("enum").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    values.iter().enumerate().filter_map(|(i, v)| Some((v.as_str()?, docs.get(i).and_then(Value::as_str)))).collect()
}

/// What an intent does (the schema's documentation of the intent enum).
pub(super) fn intent_doc(intent: &str) -> Option<&'static str> {
    let intent_schema = root().pointer("/$defs/intent")?;
    enum_of(intent_schema).into_iter().find(|(value, _)| *value == intent).and_then(|(_, doc)| doc)
}
