//! `steps/UnknownKey`: the keys climpt reads at every place of the registry and agent.json come
//! from the shipped JSON Schemas (the one table; editors complete from the same files), and the
//! walk reports the others. The schemas describe climpt 1.12.5 and later; an agent read as an
//! older release is walked with the older names in place of the newer (a flat agent.json's
//! `behavior`, `runner.completion`, `completionPatterns`, …), and the newer ones unknown.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use crate::diagnostic::{Diagnostic, FileId};
use crate::editor::schema::{Mapping, Schema, Step};
use crate::families::steps::UnknownKey;
use crate::families::steps::model::{Agent, written_layout};
use crate::families::steps::release::{Layout, Retry};
use crate::source::Node;
use crate::util::{KeyGuess, did_you_mean_key};

pub(super) fn check(agent: &Agent, out: &mut Vec<Diagnostic>) {
    static REGISTRY: OnceLock<Walker> = OnceLock::new();
    static REGISTRY_COMPLETION: OnceLock<Walker> = OnceLock::new();
    static AGENT_JSON: OnceLock<Walker> = OnceLock::new();
    static AGENT_COMPLETION: OnceLock<Walker> = OnceLock::new();
    static AGENT_FLAT: OnceLock<Walker> = OnceLock::new();
    if let Some(root) = agent.registry.root() {
        let current = || Walker::new(Schema::registry());
        let walker = match agent.retry {
            Retry::Validation => REGISTRY.get_or_init(current),
            Retry::Completion => REGISTRY_COMPLETION
                .get_or_init(|| current().derive(&COMPLETION_RETRY, &[]).relabel(&COMPLETION_RETRY_NAMES)),
        };
        walker.walk(agent.registry.id(), root, 0, out);
    }
    if let Some(doc) = agent.agent_json
        && let Some(root) = doc.root()
        // A file in another release's layout is one finding (`AC-VALID-001`), not a key each.
        && written_layout(root).is_none_or(|l| l == agent.layout)
    {
        let current = || Walker::new(Schema::agent());
        let walker = match agent.layout {
            Layout::Verdict => AGENT_JSON.get_or_init(current),
            Layout::Completion => AGENT_COMPLETION.get_or_init(|| current().derive(&COMPLETION_LAYOUT, &[])),
            Layout::Flat => AGENT_FLAT.get_or_init(|| current().derive(&FLAT_LAYOUT, &FLAT_BEHAVIOR)),
        };
        walker.walk(doc.id(), root, 0, out);
    }
}

/// One rename of an older release: at the place of `parent` (a path of the current schema,
/// `*` for any key), the key `old` stands where the current schema has `current` (a path below
/// `parent`, or `behavior` for the virtual place of a flat agent.json's `behavior`); `current`'s
/// first key is unknown there. `what` renames the mapping the old key leads to in messages.
struct Rename {
    parent: &'static [&'static str],
    old: &'static str,
    current: &'static [&'static str],
    what: Option<&'static str>,
}

/// `runner.completion` (climpt 1.12.0 to 1.12.4).
const COMPLETION_LAYOUT: [Rename; 2] = [
    Rename { parent: &["runner"], old: "completion", current: &["verdict"], what: Some("`runner.completion`") },
    Rename {
        parent: &["runner", "verdict", "config"],
        old: "completionKeyword",
        current: &["verdictKeyword"],
        what: None,
    },
];

/// The flat agent.json of climpt 1.10.6 to 1.11.24.
const FLAT_LAYOUT: [Rename; 7] = [
    Rename { parent: &[], old: "prompts", current: &["runner", "flow", "prompts"], what: Some("`prompts`") },
    Rename { parent: &[], old: "github", current: &["runner", "integrations", "github"], what: Some("`github`") },
    Rename { parent: &[], old: "worktree", current: &["runner", "execution", "worktree"], what: Some("`worktree`") },
    Rename { parent: &[], old: "logging", current: &["runner", "logging"], what: Some("`logging`") },
    Rename { parent: &[], old: "actions", current: &["runner", "actions"], what: Some("`actions`") },
    Rename { parent: &[], old: "behavior", current: &["behavior"], what: None },
    Rename {
        parent: &["runner", "verdict", "config"],
        old: "completionKeyword",
        current: &["verdictKeyword"],
        what: None,
    },
];

/// How messages name the completion loop's entries up to climpt 1.12.4.
const COMPLETION_RETRY_NAMES: [(&[&str], &str); 2] =
    [(&["completionSteps", "*"], "completion step"), (&["completionPatterns", "*"], "completion pattern")];

/// The keys of a flat agent.json's `behavior` and where each leads in the current schema.
const FLAT_BEHAVIOR: [(&str, &[&str]); 8] = [
    ("systemPromptPath", &["runner", "flow", "systemPromptPath"]),
    ("completionType", &["runner", "verdict", "type"]),
    ("completionConfig", &["runner", "verdict", "config"]),
    ("allowedTools", &["runner", "boundaries", "allowedTools"]),
    ("permissionMode", &["runner", "boundaries", "permissionMode"]),
    ("sandboxConfig", &["runner", "boundaries", "sandbox"]),
    ("defaultModel", &["runner", "flow", "defaultModel"]),
    ("askUserAutoResponse", &["runner", "flow", "askUserAutoResponse"]),
];

/// `completionPatterns`, `completionSteps`, `completionConditions` (climpt up to 1.12.4).
const COMPLETION_RETRY: [Rename; 3] = [
    Rename { parent: &[], old: "completionPatterns", current: &["failurePatterns"], what: None },
    Rename { parent: &[], old: "completionSteps", current: &["validationSteps"], what: None },
    Rename {
        parent: &["validationSteps", "*"],
        old: "completionConditions",
        current: &["validationConditions"],
        what: None,
    },
];

/// A schema read once into what the walk asks at each place: whether its unknown keys are
/// reported, and where each key or item leads. (Asking the schema itself resolves `$ref`s and
/// combinators afresh for every key of every step.)
struct Walker {
    places: Vec<Place>,
}

#[derive(Clone)]
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

    /// The place at a path of keys (`*` for any key) from the root.
    fn at(&self, path: &[&str]) -> Option<usize> {
        let mut at = 0;
        for key in path {
            let place = &self.places[at];
            at = match *key {
                "*" => place.other?,
                key => *place.properties.get(key)?,
            };
        }
        Some(at)
    }

    /// This walker for an older release: each rename puts the old key where the current one was
    /// (which becomes unknown there); `behavior` is a flat agent.json's, a place of its own whose
    /// keys lead to the current schema's places.
    fn derive(&self, renames: &[Rename], behavior: &[(&'static str, &[&'static str])]) -> Walker {
        let mut derived = Walker { places: self.places.clone() };
        for rename in renames {
            let Some(parent) = self.at(rename.parent) else { continue };
            let target = match rename.current {
                ["behavior"] => {
                    let mut properties = HashMap::new();
                    for (key, path) in behavior {
                        if let Some(at) = self.at(path) {
                            properties.insert(*key, at);
                        }
                    }
                    let keys = behavior.iter().map(|(k, _)| (*k, false)).collect();
                    let mapping = Mapping { what: "`behavior`", keys, open: false };
                    derived.places.push(Place { mapping: Some(mapping), properties, other: None, item: None });
                    Some(derived.places.len() - 1)
                }
                path => self.at(&[rename.parent, path].concat()),
            };
            let Some(target) = target else { continue };
            if let Some(what) = rename.what
                && let Some(mapping) = &mut derived.places[target].mapping
            {
                mapping.what = what;
            }
            let place = &mut derived.places[parent];
            place.properties.remove(rename.current[0]);
            place.properties.insert(rename.old, target);
            if let Some(mapping) = &mut place.mapping {
                mapping.keys.retain(|(k, _)| *k != rename.current[0]);
                mapping.keys.push((rename.old, false));
            }
        }
        derived
    }

    /// Renames the mappings at `paths` in messages.
    fn relabel(mut self, names: &[(&[&str], &'static str)]) -> Walker {
        for (path, what) in names {
            if let Some(at) = self.at(path)
                && let Some(mapping) = &mut self.places[at].mapping
            {
                mapping.what = what;
            }
        }
        self
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
