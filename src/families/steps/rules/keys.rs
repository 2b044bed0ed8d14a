//! `steps/UnknownKey`: the keys climpt reads at every place of the registry and agent.json come
//! from the shipped JSON Schemas (the one table; editors complete from the same files), and the
//! walk reports the others.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use crate::diagnostic::{Diagnostic, FileId};
use crate::editor::schema::{Mapping, Schema, Step};
use crate::families::steps::UnknownKey;
use crate::families::steps::model::Agent;
use crate::source::Node;
use crate::util::{KeyGuess, did_you_mean_key};

pub(super) fn check(agent: &Agent, out: &mut Vec<Diagnostic>) {
    static REGISTRY: OnceLock<Walker> = OnceLock::new();
    static AGENT_JSON: OnceLock<Walker> = OnceLock::new();
    if let Some(root) = agent.registry.root() {
        REGISTRY.get_or_init(|| Walker::new(Schema::registry())).walk(agent.registry.id(), root, 0, out);
    }
    if let Some(doc) = agent.agent_json
        && let Some(root) = doc.root()
    {
        AGENT_JSON.get_or_init(|| Walker::new(Schema::agent())).walk(doc.id(), root, 0, out);
    }
}

/// A schema read once into what the walk asks at each place: whether its unknown keys are
/// reported, and where each key or item leads. (Asking the schema itself resolves `$ref`s and
/// combinators afresh for every key of every step.)
struct Walker {
    places: Vec<Place>,
}

struct Place {
    mapping: Option<Mapping>,
    properties: HashMap<&'static str, usize>,
    other: Option<usize>,
    item: Option<usize>,
}

impl Walker {
    fn new(schema: Schema) -> Walker {
        let mut walker = Walker { places: Vec::new() };
        let mut seen: HashMap<*const Value, usize> = HashMap::new();
        walker.place(schema, schema.root(), &mut seen);
        walker
    }

    /// The index of the place `node` describes, compiled with everything below it.
    fn place(&mut self, schema: Schema, node: &'static Value, seen: &mut HashMap<*const Value, usize>) -> usize {
        if let Some(&index) = seen.get(&(node as *const Value)) {
            return index;
        }
        let index = self.places.len();
        seen.insert(node, index);
        self.places.push(Place { mapping: schema.mapping(node), properties: HashMap::new(), other: None, item: None });
        for name in schema.property_names(node) {
            if let Some(child) = schema.child(node, Step::Key(name)) {
                let at = self.place(schema, child, seen);
                self.places[index].properties.insert(name, at);
            }
        }
        self.places[index].other = schema.other(node).map(|child| self.place(schema, child, seen));
        self.places[index].item = schema.child(node, Step::Item).map(|child| self.place(schema, child, seen));
        index
    }

    /// Reports the keys of `node` that its place does not know, in the mappings the schema marks
    /// (see `Schema::mapping`), and walks on into the values it knows.
    fn walk(&self, file: FileId, node: &Node, at: usize, out: &mut Vec<Diagnostic>) {
        let place = &self.places[at];
        if let Some(entries) = node.as_map() {
            for entry in entries {
                let Some(key) = entry.key_str() else { continue };
                if let Some(&inner) = place.properties.get(key) {
                    self.walk(file, &entry.value, inner, out);
                    continue;
                }
                match &place.mapping {
                    Some(mapping) if !mapping.keys.iter().any(|(k, _)| *k == key) => {
                        if !mapping.open {
                            out.push(unknown_key(file, node, &entry.key, key, mapping));
                        }
                    }
                    _ => {
                        if let Some(inner) = place.other {
                            self.walk(file, &entry.value, inner, out);
                        }
                    }
                }
            }
        } else if let (Some(items), Some(inner)) = (node.as_seq(), place.item) {
            for item in items {
                self.walk(file, item, inner, out);
            }
        }
    }
}

/// An unknown key of `mapping`, with a rename fix when it looks like a typo of a known key that
/// the mapping does not have yet.
fn unknown_key(file: FileId, node: &Node, key_node: &Node, key: &str, mapping: &Mapping) -> Diagnostic {
    let known = mapping.keys.iter().filter(|(_, legacy)| !legacy).map(|(k, _)| *k);
    let guess = did_you_mean_key(key, known, node.keys());
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
