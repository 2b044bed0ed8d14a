//! The spanned value tree shared by the YAML and JSON readers.

use crate::source::Span;

/// One value with the byte span of its text (quotes included for quoted scalars).
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub span: Span,
    pub value: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// Held inline up to 22 bytes: most scalars are keys and short values, and a heap
    /// allocation for each weighed more than the text (a large check holds millions).
    String(crate::util::ShortStr),
    Seq(Vec<Node>),
    /// Entries in source order; duplicate keys are reported by the reader, the first one is kept.
    Map(Vec<Entry>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: Node,
    pub value: Node,
}

impl Entry {
    /// The key as text (non-string keys render as their scalar text).
    pub fn key_str(&self) -> Option<&str> {
        self.key.as_str()
    }
}

impl Node {
    pub fn new(span: Span, value: Value) -> Node {
        Node { span, value }
    }

    /// Moves every span in the tree by `offset` (the tree is depth-bounded by the reader).
    pub fn shift(&mut self, offset: usize) {
        self.span = self.span.shift(offset);
        match &mut self.value {
            Value::Seq(items) => items.iter_mut().for_each(|n| n.shift(offset)),
            Value::Map(entries) => entries.iter_mut().for_each(|e| {
                e.key.shift(offset);
                e.value.shift(offset);
            }),
            _ => {}
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self.value {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self.value {
            Value::Int(n) => Some(n),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&[Entry]> {
        match &self.value {
            Value::Map(entries) => Some(entries),
            _ => None,
        }
    }

    /// The entry under `key` when this node is a mapping.
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.as_map()?.iter().find(|e| e.key_str() == Some(key))
    }

    /// The string keys of this node when it is a mapping, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.as_map().unwrap_or_default().iter().filter_map(Entry::key_str)
    }

    /// The value under `key` when this node is a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }

    /// Follows a JSON Pointer (`/a/0/b`, RFC 6901 escapes) through the tree.
    pub fn pointer(&self, pointer: &str) -> Option<&Node> {
        if pointer.is_empty() {
            return Some(self);
        }
        let mut node = self;
        for raw in pointer.strip_prefix('/')?.split('/') {
            let token = raw.replace("~1", "/").replace("~0", "~");
            node = match &node.value {
                Value::Map(_) => node.get(&token)?,
                Value::Seq(items) => items.get(token.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// The key node of the last step of `pointer`, when it ends inside a mapping.
    pub fn pointer_key(&self, pointer: &str) -> Option<&Node> {
        let (parent, last) = pointer.rsplit_once('/')?;
        let token = last.replace("~1", "/").replace("~0", "~");
        Some(&self.pointer(parent)?.entry(&token)?.key)
    }

    /// A short name of the value's type for messages ("a string", "a mapping", ...).
    pub fn type_name(&self) -> &'static str {
        match self.value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::String(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    /// Converts to JSON for schema validation; mapping keys are stringified.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(n) => J::from(*n),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
            Value::String(s) => J::String(s.to_string()),
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => {
                J::Object(entries.iter().map(|e| (e.key.scalar_text(), e.value.to_json())).collect())
            }
        }
    }

    /// Text of a scalar (used for non-string mapping keys).
    pub fn scalar_text(&self) -> String {
        match &self.value {
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Int(n) => n.to_string(),
            Value::Float(f) => f.to_string(),
            Value::String(s) => s.to_string(),
            Value::Seq(_) => "[...]".into(),
            Value::Map(_) => "{...}".into(),
        }
    }
}
