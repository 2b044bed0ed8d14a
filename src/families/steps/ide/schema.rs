//! Field documentation and value sets of the registry and `agent.json`, read from our JSON
//! Schemas (`schemas/steps-registry.schema.json`, `schemas/agent.schema.json`) through
//! `editor::schema`.

use serde_json::Value;

use super::Seg;
use crate::editor::schema::{Schema, Step};

pub(super) use crate::editor::schema::Field;

fn steps(path: &[Seg]) -> Vec<Step<'_>> {
    path.iter()
        .map(|seg| match seg {
            Seg::Key(key) => Step::Key(key),
            Seg::Index(_) => Step::Item,
        })
        .collect()
}

/// The schema of the value at `path` from the registry's root, as written under its key.
pub(super) fn at(path: &[Seg]) -> Option<&'static Value> {
    Schema::registry().at(&steps(path))
}

/// Markdown documentation of a registry schema node.
pub(super) fn doc(node: &'static Value) -> Option<&'static str> {
    Schema::registry().doc(node)
}

/// The keys the registry schema defines for the mapping at `path`, in schema order.
pub(super) fn fields(path: &[Seg]) -> Vec<Field> {
    Schema::registry().fields(&steps(path))
}

/// The `enum` of the registry value at `path`, each value with its documentation.
pub(super) fn values(path: &[Seg]) -> Vec<(&'static str, Option<&'static str>)> {
    Schema::registry().values(&steps(path))
}

/// The keys `agent.json` has at `path`.
pub(super) fn agent_fields(path: &[Seg]) -> Vec<Field> {
    Schema::agent().fields(&steps(path))
}

/// The `enum` of the `agent.json` value at `path`.
pub(super) fn agent_values(path: &[Seg]) -> Vec<(&'static str, Option<&'static str>)> {
    Schema::agent().values(&steps(path))
}

/// The intents, with what each does (the schema's documentation of the intent enum).
pub(super) fn intents() -> Vec<(&'static str, Option<&'static str>)> {
    let registry = Schema::registry();
    registry.pointer("/$defs/intent").map(|node| registry.enum_of(node)).unwrap_or_default()
}

/// What an intent does.
pub(super) fn intent_doc(intent: &str) -> Option<&'static str> {
    intents().into_iter().find(|(value, _)| *value == intent).and_then(|(_, doc)| doc)
}
