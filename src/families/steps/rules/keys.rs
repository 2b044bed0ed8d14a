//! `steps/UnknownKey`: the keys climpt reads at every place of the registry and agent.json come
//! from the shipped JSON Schemas (the one table; editors complete from the same files), and the
//! walk reports the others.

use serde_json::Value;

use crate::diagnostic::{Diagnostic, FileId};
use crate::editor::schema::{Mapping, Schema, Step};
use crate::families::steps::UnknownKey;
use crate::families::steps::model::Agent;
use crate::source::Node;
use crate::util::{KeyGuess, did_you_mean_key};

pub(super) fn check(agent: &Agent, out: &mut Vec<Diagnostic>) {
    if let Some(root) = &agent.registry.root {
        let schema = Schema::registry();
        walk_keys(schema, agent.registry.id(), root, schema.root(), out);
    }
    if let Some(doc) = agent.agent_json
        && let Some(root) = &doc.root
    {
        let schema = Schema::agent();
        walk_keys(schema, doc.id(), root, schema.root(), out);
    }
}

/// Reports the keys of `node` that its schema `at` does not know, in the mappings the schema
/// marks (see `Schema::mapping`), and walks on into the values it knows.
fn walk_keys(schema: Schema, file: FileId, node: &Node, at: &'static Value, out: &mut Vec<Diagnostic>) {
    if let Some(entries) = node.as_map() {
        let mapping = schema.mapping(at);
        for entry in entries {
            let Some(key) = entry.key_str() else { continue };
            if let Some(mapping) = &mapping
                && !mapping.keys.iter().any(|(k, _)| *k == key)
            {
                if !mapping.open {
                    out.push(unknown_key(file, node, &entry.key, key, mapping));
                }
                continue;
            }
            if let Some(inner) = schema.child(at, Step::Key(key)) {
                walk_keys(schema, file, &entry.value, inner, out);
            }
        }
    } else if let Some(items) = node.as_seq()
        && let Some(inner) = schema.child(at, Step::Item)
    {
        for item in items {
            walk_keys(schema, file, item, inner, out);
        }
    }
}

/// An unknown key of `mapping`, with a rename fix when it looks like a typo of a known key that
/// the mapping does not have yet.
fn unknown_key(file: FileId, node: &Node, key_node: &Node, key: &str, mapping: &Mapping) -> Diagnostic {
    let known = mapping.keys.iter().filter(|(_, legacy)| !legacy).map(|(k, _)| *k);
    let guess = did_you_mean_key(key, known, |k| node.get(k).is_some());
    let what = mapping.what;
    let message = match guess {
        Some(KeyGuess { name, taken: false }) => {
            format!(
                "unknown {what} key `{key}`; did you mean `{name}`? climpt ignores unknown keys, so it has no effect"
            )
        }
        Some(KeyGuess { name, taken: true }) => {
            format!("unknown {what} key `{key}`; `{name}` is set already, and climpt ignores this one")
        }
        None => format!("unknown {what} key `{key}`; climpt ignores it"),
    };
    Diagnostic::new(UnknownKey, file, key_node.span, message).with_suggestion(key_node.span, KeyGuess::rename(guess))
}
