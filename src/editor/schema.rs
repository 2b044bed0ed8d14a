//! Keys, documentation and enum values from the JSON Schemas shipped in `schemas/`, by the path
//! of keys (and list items) to a value: completion and hover in the files a schema describes
//! (climpt registries and `agent.json`, cassettes). `tests/meta.rs` checks each schema against
//! the rules, so what is offered here is what the rules accept.

use std::sync::OnceLock;

use serde_json::Value;

/// One step of a path from a document's root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    Key(&'a str),
    /// An item of a list.
    Item,
}

/// A schema, read once.
#[derive(Clone, Copy)]
pub struct Schema {
    root: &'static Value,
}

fn load(cell: &'static OnceLock<Value>, text: &'static str) -> Schema {
    // The schemas ship with the crate and `tests/meta.rs` checks them, so parsing cannot fail.
    Schema { root: cell.get_or_init(|| serde_json::from_str(text).unwrap_or(Value::Null)) }
}

const UNKNOWN_KEYS: &str = "x-stagelint-unknown-keys";

/// A mapping whose unknown keys are reported (see [`Schema::mapping`]).
#[derive(Clone)]
pub struct Mapping {
    /// How a message names it: "unknown {what} key".
    pub what: &'static str,
    /// Its keys, each with whether it is legacy (`deprecated`).
    pub keys: Vec<(&'static str, bool)>,
    /// Other keys are allowed too.
    pub open: bool,
}

/// A key the schema defines for a mapping.
pub struct Field {
    pub name: &'static str,
    /// Its type, and `required` when the mapping requires it.
    pub detail: Option<String>,
    pub doc: Option<&'static str>,
    pub deprecated: bool,
}

impl Schema {
    /// `schemas/steps-registry.schema.json`.
    pub fn registry() -> Schema {
        static CELL: OnceLock<Value> = OnceLock::new();
        load(&CELL, include_str!("../../schemas/steps-registry.schema.json"))
    }

    /// `schemas/agent.schema.json`.
    pub fn agent() -> Schema {
        static CELL: OnceLock<Value> = OnceLock::new();
        load(&CELL, include_str!("../../schemas/agent.schema.json"))
    }

    /// `schemas/cassette.schema.json`.
    pub fn cassette() -> Schema {
        static CELL: OnceLock<Value> = OnceLock::new();
        load(&CELL, include_str!("../../schemas/cassette.schema.json"))
    }

    /// The schema of the whole document.
    pub fn root(&self) -> &'static Value {
        self.root
    }

    /// The node at a JSON Pointer of the schema document itself (`/$defs/intent`).
    pub fn pointer(&self, pointer: &str) -> Option<&'static Value> {
        self.root.pointer(pointer)
    }

    /// Follows local `$ref`s (`#/$defs/x`); a few hops at most in our schemas.
    fn resolve(&self, mut node: &'static Value) -> &'static Value {
        for _ in 0..8 {
            let Some(target) = node.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) else {
                break;
            };
            match self.root.pointer(target) {
                Some(next) => node = next,
                None => break,
            }
        }
        node
    }

    /// The node and the `oneOf`/`anyOf`/`allOf` members (and `then`/`else` branches) it
    /// combines, each resolved, in order.
    fn members(&self, node: &'static Value) -> Vec<&'static Value> {
        let mut out = vec![self.resolve(node)];
        let mut at = 0;
        while at < out.len() && out.len() < 32 {
            for combinator in ["oneOf", "anyOf", "allOf"] {
                for member in out[at].get(combinator).and_then(Value::as_array).into_iter().flatten() {
                    out.push(self.resolve(member));
                }
            }
            for branch in ["then", "else"] {
                if let Some(member) = out[at].get(branch) {
                    out.push(self.resolve(member));
                }
            }
            at += 1;
        }
        out
    }

    /// The schema of what is under `step` of a value that `node` describes.
    pub fn child(&self, node: &'static Value, step: Step) -> Option<&'static Value> {
        let members = self.members(node);
        match step {
            Step::Key(key) => {
                members.iter().find_map(|m| m.get("properties")?.get(key)).or_else(|| Self::other_in(&members))
            }
            Step::Item => members.iter().find_map(|m| m.get("items").filter(|i| i.is_object())),
        }
    }

    /// The names of the properties `node` defines, in schema order, each once.
    pub fn property_names(&self, node: &'static Value) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for member in self.members(node) {
            for name in member.get("properties").and_then(Value::as_object).into_iter().flat_map(|p| p.keys()) {
                if !out.contains(&name.as_str()) {
                    out.push(name);
                }
            }
        }
        out
    }

    /// The schema of the values under keys that are not properties of `node`.
    pub fn other(&self, node: &'static Value) -> Option<&'static Value> {
        Self::other_in(&self.members(node))
    }

    fn other_in(members: &[&'static Value]) -> Option<&'static Value> {
        members.iter().find_map(|m| {
            let by_pattern = m.get("patternProperties").and_then(Value::as_object);
            by_pattern.and_then(|p| p.values().next()).or(m.get("additionalProperties")).filter(|a| a.is_object())
        })
    }

    /// The schema of the value at `path`, as written under its key.
    pub fn at(&self, path: &[Step]) -> Option<&'static Value> {
        path.iter().try_fold(self.root, |node, step| self.child(node, *step))
    }

    /// Markdown documentation of a schema node: its own, else that of what it refers to.
    pub fn doc(&self, node: &'static Value) -> Option<&'static str> {
        [node, self.resolve(node)]
            .into_iter()
            .find_map(|n| n.get("markdownDescription").or_else(|| n.get("description")).and_then(Value::as_str))
    }

    /// The JSON type of a schema node (`string`, `string | null`), through `$ref`s and combinators.
    fn type_name(&self, node: &'static Value) -> Option<String> {
        self.members(node).into_iter().find_map(|m| match m.get("type")? {
            Value::String(name) => Some(name.clone()),
            Value::Array(names) => Some(names.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" | ")),
            _ => None,
        })
    }

    /// The keys the schema defines for the mapping at `path`, in schema order.
    pub fn fields(&self, path: &[Step]) -> Vec<Field> {
        let Some(node) = self.at(path) else { return Vec::new() };
        let mut out: Vec<Field> = Vec::new();
        for member in self.members(node) {
            let required: Vec<&str> = member
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            for (name, schema) in member.get("properties").and_then(Value::as_object).into_iter().flatten() {
                if out.iter().any(|f| f.name == name) {
                    continue;
                }
                let kind = self.type_name(schema);
                let detail = match (kind, required.contains(&name.as_str())) {
                    (Some(kind), true) => Some(format!("{kind}, required")),
                    (Some(kind), false) => Some(kind),
                    (None, true) => Some("required".to_string()),
                    (None, false) => None,
                };
                let deprecated = schema.get("deprecated").and_then(Value::as_bool).unwrap_or(false);
                out.push(Field { name, detail, doc: self.doc(schema), deprecated });
            }
        }
        out
    }

    /// How `steps/UnknownKey` treats the mapping `node` describes. The schema marks each mapping
    /// whose unknown keys climpt ignores with `x-stagelint-unknown-keys`, the name a message
    /// gives it; its keys are its properties (the `deprecated` ones are legacy), and a mapping
    /// with `additionalProperties` takes other keys too.
    pub fn mapping(&self, node: &'static Value) -> Option<Mapping> {
        let members = self.members(node);
        let what = members.iter().find_map(|m| m.get(UNKNOWN_KEYS)?.as_str())?;
        let mut keys = Vec::new();
        for member in &members {
            for (name, property) in member.get("properties").and_then(Value::as_object).into_iter().flatten() {
                let deprecated = self.resolve(property).get("deprecated").and_then(Value::as_bool).unwrap_or(false)
                    || property.get("deprecated").and_then(Value::as_bool).unwrap_or(false);
                if !keys.iter().any(|(k, _)| k == name) {
                    keys.push((name.as_str(), deprecated));
                }
            }
        }
        let open = members
            .iter()
            .any(|m| m.get("additionalProperties").is_some_and(|a| a.is_object() || a.as_bool() == Some(true)));
        Some(Mapping { what, keys, open })
    }

    /// The `enum` (or `const`) values of the value at `path`, each with its documentation.
    pub fn values(&self, path: &[Step]) -> Vec<(&'static str, Option<&'static str>)> {
        self.at(path).map(|node| self.enum_of(node)).unwrap_or_default()
    }

    pub fn enum_of(&self, node: &'static Value) -> Vec<(&'static str, Option<&'static str>)> {
        let members = self.members(node);
        if let Some(member) = members.iter().find(|m| m.get("enum").is_some()) {
            let docs = member
                .get("markdownEnumDescriptions")
                .or_else(|| member.get("enumDescriptions"))
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let values = member.get("enum").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            return values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| Some((v.as_str()?, docs.get(i).and_then(Value::as_str))))
                .collect();
        }
        members.iter().filter_map(|m| Some((m.get("const")?.as_str()?, self.doc(m)))).collect()
    }
}
