//! Source text, byte spans, line index, frontmatter split and spanned YAML/JSON trees.

pub mod frontmatter;
pub mod json;
pub(crate) mod line_index;
pub(crate) mod node;
pub mod read;
pub mod yaml;
pub mod yaml_write;

pub use line_index::{LineCol, LineIndex};
pub use node::{Entry, Node, Value};

/// A half-open byte range `start..end` into one file's text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        debug_assert!(start <= end);
        Span { start, end }
    }

    pub fn empty(at: usize) -> Span {
        Span { start: at, end: at }
    }

    pub fn len(self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// Moves the span by `offset` bytes (used when a sub-document starts inside a file).
    pub fn shift(self, offset: usize) -> Span {
        Span { start: self.start + offset, end: self.end + offset }
    }

    pub fn contains(self, offset: usize) -> bool {
        self.start <= offset && offset <= self.end
    }

    pub fn cover(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

/// A parse problem: where, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub span: Span,
    pub message: String,
    /// Another place the problem involves (the first occurrence of a duplicate key).
    pub related: Option<(Span, String)>,
    pub kind: SyntaxKind,
}

/// What kind of problem: the reader recovers from the last two, but some loaders do not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SyntaxKind {
    #[default]
    Invalid,
    DuplicateKey,
    ExtraDocument,
}

impl SyntaxError {
    pub fn new(span: Span, message: impl Into<String>) -> SyntaxError {
        SyntaxError { span, message: message.into(), related: None, kind: SyntaxKind::Invalid }
    }

    pub fn with_kind(mut self, kind: SyntaxKind) -> SyntaxError {
        self.kind = kind;
        self
    }

    pub fn with_related(mut self, span: Span, message: impl Into<String>) -> SyntaxError {
        self.related = Some((span, message.into()));
        self
    }
}

/// What a reader returns: a tree when one could be built, and every problem found.
/// Readers never fail and never panic; a document that does not parse has `root: None`.
#[derive(Clone, Debug, Default)]
pub struct Parsed {
    pub root: Option<Node>,
    pub errors: Vec<SyntaxError>,
}

/// Limits that keep hostile input bounded in time and memory.
pub const MAX_DEPTH: usize = 128;
/// Nodes that alias expansion may copy in one document before the reader gives up.
pub const MAX_ALIAS_NODES: usize = 10_000;

/// For property tests: `span` lies on character boundaries inside the text.
#[cfg(test)]
pub(crate) fn assert_span_inside(text: &str, span: Span) {
    assert!(span.start <= span.end && span.end <= text.len(), "{span:?} in {}", text.len());
    assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end), "{span:?}");
}

/// For property tests: `seed` after `edits`, each `(op, at, c)` inserting (`op % 3 == 0`),
/// deleting (1) or replacing (2) the character at `at` (modulo the length) with `c`.
#[cfg(test)]
pub(crate) fn mutate(seed: &str, edits: &[(u8, usize, char)]) -> String {
    let mut chars: Vec<char> = seed.chars().collect();
    for &(op, at, c) in edits {
        let n = chars.len();
        match op % 3 {
            0 => chars.insert(at % (n + 1), c),
            1 if n > 0 => {
                chars.remove(at % n);
            }
            2 if n > 0 => chars[at % n] = c,
            _ => {}
        }
    }
    chars.into_iter().collect()
}

/// For the parsers' property tests: every span of a parse lies on character boundaries
/// inside the text.
#[cfg(test)]
pub(crate) fn assert_spans_inside(text: &str, parsed: &Parsed) {
    let check_span = |span: Span| assert_span_inside(text, span);
    for error in &parsed.errors {
        check_span(error.span);
        if let Some((span, _)) = &error.related {
            check_span(*span);
        }
    }
    let mut todo: Vec<&Node> = parsed.root.iter().collect();
    while let Some(node) = todo.pop() {
        check_span(node.span);
        match &node.value {
            Value::Seq(items) => todo.extend(items),
            Value::Map(entries) => todo.extend(entries.iter().flat_map(|e| [&e.key, &e.value])),
            _ => {}
        }
    }
}
