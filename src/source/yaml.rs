//! YAML reader: builds the spanned `Node` tree from saphyr's event stream, within hard limits.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Tag};

use crate::source::{Entry, MAX_ALIAS_NODES, MAX_DEPTH, Node, Parsed, Span, SyntaxError, Value};

mod block;

/// Reads the first YAML document of `text`; it never panics, and hostile input ends with one error.
///
/// - Plain scalars resolve with the YAML 1.2 core schema; quoted and block scalars are strings.
///   Integers outside the `i64` range (decimal, `0x`, `0o`) become `Float`.
/// - `!!str` and the non-specific `!` force a string. `!!null`, `!!bool`, `!!int` and `!!float`
///   read the text as that type, falling back to a string when it does not fit. Other tags are
///   ignored.
/// - Merge keys are applied as js-yaml applies them: a plain `<<` key takes a mapping or a list
///   of mappings, whose entries join the mapping unless it has the key itself (explicit keys win,
///   wherever they are written, and an earlier mapping of the list wins over a later one). The
///   merged entries keep the spans of the text they were written in, and are moved out of the
///   `<<` value rather than copied, so merging stays within the alias budget. Any other `<<`
///   value is an error. A quoted `"<<"` is an ordinary key.
/// - An alias becomes a clone of its anchored node. The clone's top span is the alias (`*name`);
///   the nodes inside it keep the spans of the anchored text.
/// - Nesting deeper than `MAX_DEPTH` is reported at the first collection that is too deep. The one
///   exception is flow nesting past 255 levels, which saphyr's scanner rejects first, at the 256th bracket.
/// - Duplicate keys compare by resolved value, so `1` and `"1"` are different keys. Collection
///   keys are never reported as duplicates.
pub fn parse(text: &str) -> Parsed {
    // Plain block YAML (most definition files) is read without saphyr, into the same events.
    if let Some(events) = block::events(text) {
        return build(text, events);
    }
    saphyr(text)
}

/// [`parse`] by saphyr's events, whatever the text.
fn saphyr(text: &str) -> Parsed {
    let mut offsets = Offsets::new(text);
    // saphyr has internal `unwrap`s, and a bug there must not take the language server down.
    match catch_unwind(AssertUnwindSafe(|| read_events(text, &mut offsets))) {
        Ok(Ok(events)) => build(text, events),
        Ok(Err(error)) => Parsed { root: None, errors: vec![error] },
        Err(_) => Parsed {
            root: None,
            errors: vec![SyntaxError::new(
                Span::empty(0),
                "the YAML parser failed on this file; stagelint stops reading here",
            )],
        },
    }
}

/// saphyr counts characters; spans are bytes. Event positions arrive in (nearly) increasing
/// order, so a cursor that walks from the last answer costs O(n) overall and no table.
struct Offsets<'a> {
    text: &'a str,
    ascii: bool,
    /// The last conversion: (char index, byte offset).
    at: (usize, usize),
}

impl<'a> Offsets<'a> {
    fn new(text: &'a str) -> Offsets<'a> {
        Offsets { text, ascii: text.is_ascii(), at: (0, 0) }
    }

    fn byte(&mut self, char_index: usize) -> usize {
        let len = self.text.len();
        if self.ascii {
            return char_index.min(len);
        }
        let bytes = self.text.as_bytes();
        let (mut c, mut b) = self.at;
        while c < char_index && b < len {
            // `b` is always a char boundary, so this is a leading byte.
            let width = match bytes.get(b).copied().unwrap_or(0) {
                0..0x80 => 1,
                0x80..0xE0 => 2,
                0xE0..0xF0 => 3,
                _ => 4,
            };
            b = (b + width).min(len);
            c += 1;
        }
        while c > char_index && b > 0 {
            b -= 1;
            while !self.text.is_char_boundary(b) {
                b -= 1;
            }
            c -= 1;
        }
        self.at = (c, b);
        b
    }

    fn span(&mut self, span: saphyr_parser::Span) -> Span {
        let start = self.byte(span.start.index());
        let end = self.byte(span.end.index()).max(start);
        Span::new(start, end)
    }
}

/// The first pass: the validated events of the first document.
struct Events<'a> {
    events: Vec<(Ev<'a>, Span)>,
    /// Anchors some alias refers to; only these are kept for cloning.
    referenced: HashSet<usize>,
    second_document: Option<Span>,
}

/// What the build needs of one saphyr event (half the size of `Event`, which is kept for a whole document).
enum Ev<'a> {
    Scalar { value: Cow<'a, str>, style: ScalarStyle, anchor: usize, tag: Resolve, props: bool },
    Open { map: bool, anchor: usize },
    Close,
    Alias(usize),
}

/// How a scalar's text becomes a value, decided by its tag.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Resolve {
    /// No tag, or one we ignore: core schema for plain scalars, a string otherwise.
    Untagged,
    Str,
    Null,
    Bool,
    Int,
    Float,
}

impl Resolve {
    fn of(tag: Option<&Tag>) -> Resolve {
        match tag {
            Some(tag) if tag.is_yaml_core_schema() => match tag.suffix.as_str() {
                "null" => Resolve::Null,
                "bool" => Resolve::Bool,
                "int" => Resolve::Int,
                "float" => Resolve::Float,
                _ => Resolve::Str,
            },
            // The non-specific tag `!` marks a string.
            Some(tag) if tag.handle.is_empty() && tag.suffix == "!" => Resolve::Str,
            _ => Resolve::Untagged,
        }
    }
}

/// A collection still open during the first pass.
struct Open {
    anchor: usize,
    /// Nodes in the collection once aliases are expanded (itself included).
    size: usize,
    /// Collection levels in the collection (itself included).
    height: usize,
}

/// Pulls events and enforces every limit before any tree is built, so the build never clones
/// more than `MAX_ALIAS_NODES` nodes and never nests deeper than `MAX_DEPTH`.
fn read_events<'a>(text: &'a str, offsets: &mut Offsets<'_>) -> Result<Events<'a>, SyntaxError> {
    let mut parser = Parser::new_from_str(text);
    // About one event per dozen bytes in real frontmatter: room up front, not a dozen regrowths.
    let events = Vec::with_capacity((text.len() / 12).min(1 << 16));
    let mut out = Events { events, referenced: HashSet::new(), second_document: None };
    let mut open: Vec<Open> = Vec::new();
    // Anchors map to (size, height) once their node is complete, and to `None` while it is open.
    let mut anchors: HashMap<usize, Option<(usize, usize)>> = HashMap::new();
    let mut expanded = 0usize;
    let mut documents = 0usize;

    while let Some(next) = parser.next_event() {
        let (event, raw) = next.map_err(|error| scan_error(text, offsets, &error))?;
        let span = offsets.span(raw);
        // This holds (anchor, size, height) when the event completes a node.
        let mut done = None;
        let ev = match event {
            Event::StreamEnd => break,
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    out.second_document = Some(point(text, span));
                    break;
                }
                continue;
            }
            Event::Scalar(value, style, anchor, tag) => {
                done = Some((anchor, 1, 0));
                let props = anchor > 0 || tag.is_some();
                Ev::Scalar { value, style, anchor, tag: Resolve::of(tag.as_deref()), props }
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if open.len() >= MAX_DEPTH {
                    return Err(too_deep(point(text, span)));
                }
                if anchor > 0 {
                    anchors.insert(anchor, None);
                }
                open.push(Open { anchor, size: 1, height: 1 });
                Ev::Open { map: matches!(event, Event::MappingStart(..)), anchor }
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some(closed) = open.pop() {
                    done = Some((closed.anchor, closed.size, closed.height));
                }
                Ev::Close
            }
            Event::Alias(id) => match anchors.get(&id) {
                Some(Some((size, height))) => {
                    expanded = expanded.saturating_add(*size);
                    if expanded > MAX_ALIAS_NODES {
                        return Err(SyntaxError::new(
                            span,
                            format!(
                                "alias expansion exceeds {MAX_ALIAS_NODES} nodes (a YAML alias bomb?); stagelint stops reading here"
                            ),
                        ));
                    }
                    if open.len() + height > MAX_DEPTH {
                        return Err(too_deep(span));
                    }
                    out.referenced.insert(id);
                    done = Some((0, *size, *height));
                    Ev::Alias(id)
                }
                Some(None) => {
                    let alias = crate::util::shorten(snippet(text, span), 40);
                    return Err(SyntaxError::new(span, format!("alias `{alias}` refers to a node that contains it")));
                }
                None => return Err(unknown_alias(text, span.start)),
            },
            _ => continue,
        };
        if let Some((anchor, size, height)) = done {
            if anchor > 0 {
                anchors.insert(anchor, Some((size, height)));
            }
            if let Some(parent) = open.last_mut() {
                parent.size = parent.size.saturating_add(size);
                parent.height = parent.height.max(height + 1);
            }
        }
        out.events.push((ev, span));
    }
    Ok(out)
}

fn too_deep(span: Span) -> SyntaxError {
    SyntaxError::new(span, format!("nesting deeper than {MAX_DEPTH} levels; stagelint stops reading here"))
}

/// A one-character span at `span.start` when `span` is empty (so editors show something).
fn point(text: &str, span: Span) -> Span {
    if !span.is_empty() {
        return span;
    }
    match text.get(span.start..).and_then(|rest| rest.chars().next()) {
        Some(c) if c != '\n' && c != '\r' => Span::new(span.start, span.start + c.len_utf8()),
        _ => span,
    }
}

fn scan_error(text: &str, offsets: &mut Offsets<'_>, error: &ScanError) -> SyntaxError {
    let mut at = offsets.byte(error.marker().index());
    let info = error.info();
    if info.contains("tab") {
        at = indenting_tab(text, at).unwrap_or(at);
    }
    let span = point(text, Span::empty(at));
    if info == "recursion limit exceeded" {
        // saphyr caps flow nesting at 255 and scans a whole flow collection before emitting its
        // first event, so past 255 levels this arrives before our own (lower) limit can fire.
        return too_deep(span);
    }
    if info == "while parsing node, found unknown anchor" {
        return unknown_alias(text, at);
    }
    let error = SyntaxError::new(span, format!("invalid YAML: {}", readable(info)));
    // An unclosed `[` or `{` makes saphyr complain about a later line; point back at it.
    match unclosed_flow_bracket(text, at) {
        Some(open) if !text[open..at].trim_end().ends_with(['[', '{']) && text[open..at].contains('\n') => {
            let bracket = &text[open..open + 1];
            error.with_related(Span::new(open, open + 1), format!("this `{bracket}` is never closed"))
        }
        _ => error,
    }
}

/// The tab in the indentation of the line holding `at` or of one of the next two lines, where
/// saphyr's tab errors belong (it reports them at the token after the tab, or at the start of a
/// plain scalar that the tabbed line would continue).
fn indenting_tab(text: &str, at: usize) -> Option<usize> {
    let line_start = text.get(..at)?.rfind('\n').map_or(0, |i| i + 1);
    let mut start = line_start;
    for line in text[line_start..].split_inclusive('\n').take(3) {
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        if let Some(tab) = line[..indent].find('\t') {
            return Some(start + tab);
        }
        start += line.len();
    }
    None
}

/// The innermost `[`/`{` still open at `at`, skipping quoted scalars and comments.
fn unclosed_flow_bracket(text: &str, at: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut stack = Vec::new();
    let mut i = 0;
    let end = at.min(bytes.len());
    while i < end {
        match bytes[i] {
            b'[' | b'{' => stack.push(i),
            b']' | b'}' => {
                stack.pop();
            }
            quote @ (b'"' | b'\'')
                if i == 0 || matches!(bytes[i - 1], b' ' | b'\t' | b'[' | b'{' | b',' | b':' | b'\n') =>
            {
                i += 1;
                while i < end && bytes[i] != quote && bytes[i] != b'\n' {
                    i += usize::from(quote == b'"' && bytes[i] == b'\\') + 1;
                }
            }
            b'#' if i == 0 || matches!(bytes[i - 1], b' ' | b'\t' | b'\n') => {
                while i < end && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    stack.pop()
}

/// The error for the alias `*name` that starts at `at`.
fn unknown_alias(text: &str, at: usize) -> SyntaxError {
    // saphyr's marker is the `*`, except after a directive with non-ASCII text (its index then
    // runs ahead): the alias is then the last `*` before the marker.
    let at = text
        .get(..at)
        .map_or(text.len(), |before| if text[at..].starts_with('*') { at } else { before.rfind('*').unwrap_or(at) });
    let rest = &text[at..];
    let name_len: usize = rest
        .strip_prefix('*')
        .unwrap_or_default()
        .chars()
        .take_while(|c| !c.is_whitespace() && !matches!(c, ',' | '[' | ']' | '{' | '}'))
        .map(char::len_utf8)
        .sum();
    let span = point(text, Span::new(at, at + usize::from(rest.starts_with('*')) + name_len));
    let name = crate::util::shorten(snippet(text, span).trim_start_matches('*'), 40);
    SyntaxError::new(span, format!("unknown alias `*{name}`: no anchor `&{name}` is defined before it"))
}

/// The text under `span`, or nothing when the span does not fit the text.
fn snippet(text: &str, span: Span) -> &str {
    text.get(span.start..span.end).unwrap_or_default()
}

/// Rephrases saphyr's libyaml-style messages: context last, backticks for characters.
fn readable(info: &str) -> String {
    let info = match info {
        "unexpected eof" => "unexpected end of file",
        "simple key expect ':'" => "expected `:` after a mapping key",
        _ => info,
    };
    let contextual = info
        .strip_prefix("while parsing ")
        .or_else(|| info.strip_prefix("while scanning "))
        .and_then(|rest| rest.split_once(", "));
    let message = match contextual {
        Some((context, what)) => format!("{what} (in {context})"),
        None => info.to_string(),
    };
    // Both `'x'` and saphyr's "`x'" become `x` in backticks.
    let chars: Vec<char> = message.replace(": `", " `").chars().collect();
    let mut out = String::with_capacity(message.len());
    let mut i = 0;
    while i < chars.len() {
        let quoted = matches!(chars[i], '\'' | '`')
            && chars.get(i + 2) == Some(&'\'')
            && chars.get(i + 1).is_some_and(|c| *c != '\'');
        if quoted {
            out.push('`');
            out.push(chars[i + 1]);
            out.push('`');
            i += 3;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// A collection being built in the second pass.
struct Frame {
    start: usize,
    /// End of the start event, used only when the collection has no child.
    start_end: usize,
    anchor: usize,
    /// End of the last child seen (duplicates included), for block collections.
    last_end: Option<usize>,
    kind: FrameKind,
}

/// Children of the open collections, innermost last: each collection's children are the tail
/// from its `base`, moved into a vector of exactly their number when it closes (one
/// allocation per collection, where pushing into its own vector grew and then shrank it).
#[derive(Default)]
struct Children {
    nodes: Vec<Node>,
    entries: Vec<Entry>,
}

enum FrameKind {
    Seq {
        base: usize,
    },
    Map {
        base: usize,
        /// Key -> entry, built once the mapping outgrows a linear scan.
        index: Option<HashMap<KeyId, usize>>,
        /// The key waiting for its value, and what it is.
        key: Option<(Node, KeyRole)>,
        /// The values of `<<` keys, in order, merged when the mapping ends.
        merges: Vec<Node>,
    },
}

/// What a mapping key waiting for its value is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeyRole {
    New,
    /// It duplicates an earlier key: its value is dropped.
    Duplicate,
    /// A merge key `<<`.
    Merge,
}

/// Identity of a scalar key for duplicate detection.
#[derive(PartialEq, Eq, Hash)]
enum KeyId {
    Null,
    Bool(bool),
    Int(i64),
    Float(u64),
    Str(crate::util::ShortStr),
}

impl KeyId {
    fn of(node: &Node) -> Option<KeyId> {
        Some(match &node.value {
            Value::Null => KeyId::Null,
            Value::Bool(b) => KeyId::Bool(*b),
            Value::Int(n) => KeyId::Int(*n),
            Value::Float(f) => KeyId::Float(f.to_bits()),
            Value::String(s) => KeyId::Str(s.clone()),
            Value::Seq(_) | Value::Map(_) => return None,
        })
    }
}

/// Mappings up to this size look keys up by scanning, which allocates nothing.
const LINEAR: usize = 16;

/// The entry whose key equals `key`.
fn find_key(entries: &[Entry], index: &mut Option<HashMap<KeyId, usize>>, key: &Node) -> Option<usize> {
    if entries.len() <= LINEAR {
        return entries.iter().position(|e| same_key(&e.key.value, &key.value));
    }
    let index = index.get_or_insert_with(|| {
        let mut index = HashMap::with_capacity(entries.len() * 2);
        for (i, entry) in entries.iter().enumerate() {
            if let Some(id) = KeyId::of(&entry.key) {
                index.entry(id).or_insert(i);
            }
        }
        index
    });
    index.get(&KeyId::of(key)?).copied()
}

fn same_key(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::String(x), Value::String(y)) => x == y,
        _ => false,
    }
}

impl Frame {
    fn new(span: Span, anchor: usize, kind: FrameKind) -> Frame {
        Frame { start: span.start, start_end: span.end, anchor, last_end: None, kind }
    }

    /// Adds a child; `merge` says that it is a plain `<<` scalar (a merge key in key position).
    fn push(&mut self, children: &mut Children, node: Node, merge: bool, errors: &mut Vec<SyntaxError>) {
        self.last_end = Some(self.last_end.map_or(node.span.end, |end| end.max(node.span.end)));
        match &mut self.kind {
            FrameKind::Seq { .. } => children.nodes.push(node),
            FrameKind::Map { base, index, key, merges } => match key.take() {
                None if merge => *key = Some((node, KeyRole::Merge)),
                None => {
                    let entries = &children.entries[*base..];
                    let first = find_key(entries, index, &node).and_then(|i| entries.get(i));
                    let duplicate = match first {
                        Some(first) => {
                            errors.push(
                                SyntaxError::new(
                                    node.span,
                                    format!(
                                        "duplicate key `{}`; the first one is used",
                                        crate::util::shorten(&node.scalar_text(), 40)
                                    ),
                                )
                                .with_related(first.key.span, "first defined here")
                                .with_kind(super::SyntaxKind::DuplicateKey),
                            );
                            KeyRole::Duplicate
                        }
                        None => KeyRole::New,
                    };
                    *key = Some((node, duplicate));
                }
                Some((_, KeyRole::Duplicate)) => {}
                Some((key_node, KeyRole::Merge)) => match merge_sources(&key_node, node) {
                    Ok(sources) => merges.extend(sources),
                    Err(error) => errors.push(error),
                },
                Some((key_node, KeyRole::New)) => {
                    if let (Some(index), Some(id)) = (index.as_mut(), KeyId::of(&key_node)) {
                        index.insert(id, children.entries.len() - *base);
                    }
                    children.entries.push(Entry { key: key_node, value: node });
                }
            },
        }
    }

    fn finish(self, children: &mut Children, text: &str, end_event: Span) -> Node {
        // Flow collections end at their bracket, and block ones at their last child.
        let closing = text.get(end_event.start..end_event.end);
        let end =
            if matches!(closing, Some("]" | "}")) { end_event.end } else { self.last_end.unwrap_or(self.start_end) };
        let span = Span::new(self.start, end.max(self.start));
        // Trees of every file stay alive until the check ends: exactly sized, they carry no
        // spare capacity.
        let value = match self.kind {
            FrameKind::Seq { base } => Value::Seq(children.nodes.drain(base..).collect()),
            FrameKind::Map { base, mut index, merges, .. } => {
                let mut entries: Vec<Entry> = children.entries.drain(base..).collect();
                for source in merges {
                    let Value::Map(merged) = source.value else { continue };
                    for entry in merged {
                        if find_key(&entries, &mut index, &entry.key).is_none() {
                            if let (Some(index), Some(id)) = (index.as_mut(), KeyId::of(&entry.key)) {
                                index.insert(id, entries.len());
                            }
                            entries.push(entry);
                        }
                    }
                }
                // Only merged entries can leave spare room; otherwise this changes nothing.
                entries.shrink_to_fit();
                Value::Map(entries)
            }
        };
        Node::new(span, value)
    }
}

/// The mappings a `<<` value merges, in order: itself, or the items of a list of mappings.
fn merge_sources(key: &Node, value: Node) -> Result<Vec<Node>, SyntaxError> {
    let bad = |node: &Node, what: &str| {
        let span = if node.span.is_empty() { key.span } else { node.span };
        SyntaxError::new(
            span,
            format!(
                "the merge key `<<` takes a mapping or a list of mappings, not {what}; js-yaml rejects the file (\"cannot merge mappings; the provided source object is unacceptable\")"
            ),
        )
    };
    match value.value {
        Value::Map(_) => Ok(vec![value]),
        Value::Seq(items) => match items.iter().find(|item| item.as_map().is_none()) {
            Some(item) => Err(bad(item, &format!("a list holding {}", item.type_name()))),
            None => Ok(items),
        },
        _ => Err(bad(&value, value.type_name())),
    }
}

/// The second pass: builds the tree with an explicit stack (input depth never becomes call depth).
fn build(text: &str, events: Events<'_>) -> Parsed {
    let mut errors = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut children = Children::default();
    let mut anchored: HashMap<usize, Node> = HashMap::new();
    let mut root = None;

    for (event, span) in events.events {
        let mut merge = false;
        let (node, anchor, implicit) = match event {
            Ev::Scalar { value, style, anchor, tag, props } => {
                let implicit = value.is_empty() && style == ScalarStyle::Plain && !props;
                merge = value == "<<" && style == ScalarStyle::Plain && tag == Resolve::Untagged;
                (scalar(text, value, style, tag, span, implicit), anchor, implicit)
            }
            Ev::Open { map: false, anchor } => {
                stack.push(Frame::new(span, anchor, FrameKind::Seq { base: children.nodes.len() }));
                continue;
            }
            Ev::Open { map: true, anchor } => {
                let base = children.entries.len();
                let kind = FrameKind::Map { base, index: None, key: None, merges: Vec::new() };
                stack.push(Frame::new(span, anchor, kind));
                continue;
            }
            Ev::Close => {
                let Some(frame) = stack.pop() else { continue };
                let anchor = frame.anchor;
                (frame.finish(&mut children, text, span), anchor, false)
            }
            Ev::Alias(id) => {
                // The first pass guarantees that the anchor exists, but a missing one must not panic.
                let mut node = anchored.get(&id).cloned().unwrap_or(Node::new(span, Value::Null));
                node.span = span;
                (node, 0, false)
            }
        };
        if anchor > 0 && events.referenced.contains(&anchor) {
            anchored.insert(anchor, node.clone());
        }
        match stack.last_mut() {
            Some(frame) => frame.push(&mut children, node, merge, &mut errors),
            // An empty document (`---` alone) has no root.
            None if implicit => {}
            None => root = Some(node),
        }
    }

    if let Some(span) = events.second_document {
        errors.push(
            SyntaxError::new(span, "more than one YAML document; only the first is read")
                .with_kind(super::SyntaxKind::ExtraDocument),
        );
    }
    Parsed { root, errors }
}

fn scalar(text: &str, value: Cow<'_, str>, style: ScalarStyle, tag: Resolve, span: Span, implicit: bool) -> Node {
    let span = match style {
        ScalarStyle::Literal | ScalarStyle::Folded => block_scalar_span(text, span),
        // saphyr places an implicit empty value on a neighbouring token, so an empty span is more honest.
        _ if implicit => Span::empty(span.start),
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => quoted_span(text, span),
        _ => span,
    };
    let resolved = match tag {
        Resolve::Untagged if style == ScalarStyle::Plain => core_schema(&value),
        Resolve::Untagged | Resolve::Str => None,
        _ => tagged(tag, &value),
    };
    Node::new(
        span,
        // Boxed when long: the scanner's buffer grows as it reads, and every scalar stays in memory.
        resolved.unwrap_or_else(|| {
            Value::String(if value.len() <= 22 { value.as_ref().into() } else { value.into_owned().into() })
        }),
    )
}

/// saphyr's span of a quoted scalar can run on over the blanks and comment after it; ours ends
/// at the closing quote, so an edit of the value keeps the comment.
fn quoted_span(text: &str, span: Span) -> Span {
    let bytes = text.as_bytes();
    let Some(&quote) = bytes.get(span.start).filter(|b| matches!(b, b'"' | b'\'')) else { return span };
    let mut i = span.start + 1;
    while i < span.end.min(bytes.len()) {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 1,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 1,
            b if b == quote => return Span::new(span.start, i + 1),
            _ => {}
        }
        i += 1;
    }
    span
}

/// saphyr's block scalar span starts at the content; ours starts at the `|`/`>` indicator
/// and drops the trailing line breaks.
fn block_scalar_span(text: &str, span: Span) -> Span {
    let bytes = text.as_bytes();
    let mut start = span.start;
    if !matches!(bytes.get(start), Some(b'|' | b'>'))
        && let Some(header) = find_header(text, start)
    {
        start = header.min(start);
    }
    let mut end = span.end.max(start);
    while end > start + 1 && matches!(bytes.get(end - 1), Some(b' ' | b'\t' | b'\r' | b'\n')) {
        end -= 1;
    }
    Span::new(start, end)
}

/// Offset of the block scalar indicator on the last non-blank line before `pos`.
fn find_header(text: &str, pos: usize) -> Option<usize> {
    let mut line_end = pos;
    loop {
        let before = text.get(..line_end)?;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let line = &before[line_start..];
        if !line.trim().is_empty() {
            return indicator(line).map(|i| line_start + i);
        }
        if line_start == 0 {
            return None;
        }
        line_end = line_start - 1;
    }
}

/// The last `|`/`>` of a header line that only indentation/chomping indicators and a comment follow.
fn indicator(line: &str) -> Option<usize> {
    line.char_indices().rev().filter(|(_, c)| matches!(c, '|' | '>')).find_map(|(i, _)| {
        let rest = line[i + 1..]
            .trim_start_matches(|c: char| c.is_ascii_digit() || c == '+' || c == '-')
            .trim_start_matches([' ', '\t', '\r']);
        (rest.is_empty() || rest.starts_with('#')).then_some(i)
    })
}

/// `!!null`, `!!bool`, `!!int`, `!!float`: the text read as that type; `None` means "a string".
fn tagged(tag: Resolve, text: &str) -> Option<Value> {
    match (tag, core_schema(text)?) {
        (Resolve::Null, Value::Null) => Some(Value::Null),
        (Resolve::Bool, Value::Bool(b)) => Some(Value::Bool(b)),
        (Resolve::Int, Value::Int(n)) => Some(Value::Int(n)),
        // An out-of-range integer already resolved to a float.
        (Resolve::Int, Value::Float(f)) if is_int(text) || text.starts_with("0x") || text.starts_with("0o") => {
            Some(Value::Float(f))
        }
        (Resolve::Float, Value::Float(f)) => Some(Value::Float(f)),
        (Resolve::Float, Value::Int(n)) => Some(Value::Float(n as f64)),
        _ => None,
    }
}

/// YAML 1.2 core schema resolution of a plain scalar; `None` means "a string".
fn core_schema(text: &str) -> Option<Value> {
    Some(match text {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Value::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Value::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => Value::Float(f64::NAN),
        _ => {
            if let Some(digits) = text.strip_prefix("0x") {
                return radix(digits, 16);
            }
            if let Some(digits) = text.strip_prefix("0o") {
                return radix(digits, 8);
            }
            if is_int(text) {
                return Some(match text.parse::<i64>() {
                    Ok(n) => Value::Int(n),
                    Err(_) => Value::Float(text.parse::<f64>().ok()?),
                });
            }
            if is_float(text) {
                return text.parse::<f64>().ok().map(Value::Float);
            }
            return None;
        }
    })
}

fn is_int(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
fn is_float(text: &str) -> bool {
    let s = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => !frac.is_empty() && all_digits(frac),
        Some((int, frac)) => all_digits(int) && all_digits(frac),
        None => !mantissa.is_empty() && all_digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && all_digits(e)
    });
    mantissa_ok && exponent_ok
}

fn radix(digits: &str, radix: u32) -> Option<Value> {
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    Some(match i64::from_str_radix(digits, radix) {
        Ok(n) => Value::Int(n),
        Err(_) => Value::Float(
            digits.chars().filter_map(|c| c.to_digit(radix)).fold(0.0, |acc, d| acc * f64::from(radix) + f64::from(d)),
        ),
    })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use crate::source::yaml::*;

    fn root(text: &str) -> Node {
        let parsed = parse(text);
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        parsed.root.expect("a root")
    }

    /// Found by the `yaml` fuzz target: an error's span split the `�` after it.
    #[test]
    fn error_spans_keep_to_character_boundaries() {
        let text = "%\u{fffd}\r---\n*:\u{fffd}";
        let parsed = parse(text);
        for error in &parsed.errors {
            let span = error.span;
            assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end), "{error:?}");
        }
        // saphyr's marker runs ahead after the directive; the error is still on the alias.
        let alias = text.find('*').unwrap_or(0);
        assert_eq!(parsed.errors[0].span, Span::new(alias, text.len()), "{:?}", parsed.errors);
    }

    #[test]
    fn a_quoted_scalar_ends_at_its_closing_quote() {
        for text in ["a: \"15\"  # bumped\nb: x\n", "a: '15'  # bumped\n", "a: \"15\"\n", "{a: \"15\" , b: 1}\n"] {
            let node = root(text);
            let span = node.get("a").unwrap().span;
            assert_eq!(&text[span.start..span.end], if text.contains('\'') { "'15'" } else { "\"15\"" }, "{text:?}");
        }
    }

    fn slice(text: &str, span: Span) -> &str {
        &text[span.start..span.end]
    }

    fn only_error(text: &str) -> SyntaxError {
        let parsed = parse(text);
        assert!(parsed.root.is_none());
        assert_eq!(parsed.errors.len(), 1, "{:?}", parsed.errors);
        parsed.errors.into_iter().next().expect("one error")
    }

    #[test]
    fn spans_count_bytes_on_non_ascii_text() {
        let text = "é: \"ü\"\n😀: [x, {y: ñ}]\n";
        let node = root(text);
        let map = node.as_map().expect("map");
        assert_eq!(slice(text, map[0].key.span), "é");
        assert_eq!(slice(text, map[0].value.span), "\"ü\"");
        assert_eq!(map[0].value.as_str(), Some("ü"));
        assert_eq!(slice(text, map[1].key.span), "😀");
        assert_eq!(slice(text, map[1].value.span), "[x, {y: ñ}]");
        assert_eq!(slice(text, node.pointer("/😀/1").expect("item").span), "{y: ñ}");
        assert_eq!(slice(text, node.pointer("/😀/1/y").expect("y").span), "ñ");
        assert_eq!(node.span, Span::new(0, text.len() - 1));
    }

    #[test]
    fn char_offsets_walk_both_ways() {
        let text = "aé😀\u{feff}€b";
        let expected: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
        let mut offsets = Offsets::new(text);
        for index in [3, 0, 6, 2, 5, 1, 4, 4, 9, 0] {
            assert_eq!(offsets.byte(index), *expected.get(index).unwrap_or(&text.len()), "{index}");
        }
    }

    #[test]
    fn crlf_and_bom() {
        let text = "\u{feff}a: 1\r\nb: \"x\r\n y\"\r\nc:\r\n  - z\r\n";
        let node = root(text);
        assert_eq!(slice(text, node.entry("a").expect("a").key.span), "a");
        assert_eq!(node.entry("a").expect("a").key.span.start, 3);
        assert_eq!(slice(text, node.get("b").expect("b").span), "\"x\r\n y\"");
        assert_eq!(node.get("b").and_then(Node::as_str), Some("x y"));
        assert_eq!(slice(text, node.get("c").expect("c").span), "- z");
    }

    #[test]
    fn block_collections_span_to_their_last_child() {
        let text = "top:\n  a: 1\n  b:\n    - x\n    - y  \n# trailing comment\nnext: 2\n";
        let node = root(text);
        assert_eq!(slice(text, node.get("top").expect("top").span), "a: 1\n  b:\n    - x\n    - y");
        assert_eq!(node.span, Span::new(0, text.len() - 1));
    }

    #[test]
    fn block_scalar_spans_start_at_the_indicator() {
        let text = "a: |  # note > here\n  one\n  two\n\nb: >-\n\n  folded\nc: |\nd: !!str |\n  t\n";
        let node = root(text);
        assert_eq!(slice(text, node.get("a").expect("a").span), "|  # note > here\n  one\n  two");
        assert_eq!(node.get("a").and_then(Node::as_str), Some("one\ntwo\n"));
        assert_eq!(slice(text, node.get("b").expect("b").span), ">-\n\n  folded");
        assert_eq!(slice(text, node.get("c").expect("c").span), "|");
        assert_eq!(slice(text, node.get("d").expect("d").span), "!!str |\n  t");
    }

    #[test]
    fn empty_values_get_empty_spans() {
        let text = "a:\nb: {c, d: }\n";
        let node = root(text);
        let a = node.get("a").expect("a");
        assert_eq!(a.value, Value::Null);
        assert!(a.span.is_empty());
        let c = node.pointer("/b/c").expect("c");
        assert_eq!((c.value.clone(), c.span), (Value::Null, Span::empty(text.find('c').expect("c") + 1)));
    }

    #[test]
    fn core_schema_scalars() {
        let value = |scalar: &str| root(&format!("v: {scalar}")).get("v").expect("v").value.clone();
        for null in ["", "~", "null", "Null", "NULL"] {
            assert_eq!(value(null), Value::Null, "{null:?}");
        }
        for (text, b) in
            [("true", true), ("True", true), ("TRUE", true), ("false", false), ("False", false), ("FALSE", false)]
        {
            assert_eq!(value(text), Value::Bool(b));
        }
        for (text, n) in [("12", 12), ("-3", -3), ("+4", 4), ("007", 7), ("0o17", 15), ("0x1F", 31), ("0xff", 255)] {
            assert_eq!(value(text), Value::Int(n), "{text}");
        }
        let floats = [
            ("1.5", 1.5),
            ("1e3", 1000.0),
            ("-2.5E-1", -0.25),
            (".5", 0.5),
            ("1.", 1.0),
            ("+1.5e+2", 150.0),
            (".inf", f64::INFINITY),
            ("+.INF", f64::INFINITY),
            ("-.Inf", f64::NEG_INFINITY),
            ("9223372036854775808", 9_223_372_036_854_775_808.0),
            ("0x10000000000000000", 18_446_744_073_709_551_616.0),
        ];
        for (text, f) in floats {
            assert_eq!(value(text), Value::Float(f), "{text}");
        }
        assert!(matches!(value(".nan"), Value::Float(f) if f.is_nan()));
        for text in [
            "yes", "nULL", "0x", "0o8", "0x-1", "1_000", "1e", ".", "-x", "+.5.", "1.2.3", "0b1", "'1'", "\"true\"",
            "|\n  1",
        ] {
            let expected = root(&format!("v: {text}")).get("v").and_then(|n| n.as_str().map(str::to_owned));
            assert!(expected.is_some(), "{text} should be a string");
        }
        assert_eq!(root("v: '1'").get("v").and_then(Node::as_str), Some("1"));
    }

    #[test]
    fn tags_str_int_and_non_specific() {
        let text = "a: !!str 12\nb: !!int \"7\"\nc: ! true\nd: !custom 5\ne: !!float 2\nf: !!int x\n";
        let node = root(text);
        assert_eq!(node.get("a").and_then(Node::as_str), Some("12"));
        assert_eq!(node.get("b").and_then(Node::as_i64), Some(7));
        assert_eq!(node.get("c").and_then(Node::as_str), Some("true"));
        assert_eq!(node.get("d").and_then(Node::as_i64), Some(5));
        assert_eq!(node.get("e").map(|n| n.value.clone()), Some(Value::Float(2.0)));
        assert_eq!(node.get("f").and_then(Node::as_str), Some("x"));
    }

    #[test]
    fn non_string_keys_are_kept() {
        let node = root("1: one\ntrue: yes\n~: nothing\n");
        let map = node.as_map().expect("map");
        assert_eq!(map[0].key.value, Value::Int(1));
        assert_eq!(map[1].key.value, Value::Bool(true));
        assert_eq!(map[2].key.value, Value::Null);
    }

    #[test]
    fn duplicate_keys_keep_the_first_and_report_both_spans() {
        let text = "name: first\nother: 1\nname: second\n\"name\": third\n1: a\n\"1\": b\n";
        let parsed = parse(text);
        let node = parsed.root.expect("root");
        assert_eq!(node.get("name").and_then(Node::as_str), Some("first"));
        assert_eq!(node.as_map().expect("map").len(), 4);
        assert_eq!(parsed.errors.len(), 2);
        let first = text.find("name").expect("first");
        let second = text.rfind("name:").expect("second");
        assert_eq!(parsed.errors[0].message, "duplicate key `name`; the first one is used");
        assert_eq!(parsed.errors[0].span, Span::new(second, second + 4));
        assert_eq!(parsed.errors[0].related, Some((Span::new(first, first + 4), "first defined here".into())));
        assert_eq!(slice(text, parsed.errors[1].span), "\"name\"");
    }

    #[test]
    fn long_keys_are_shortened_in_messages() {
        let key = "k".repeat(100);
        let parsed = parse(&format!("{key}: 1\n{key}: 2\n"));
        assert_eq!(parsed.errors[0].message, format!("duplicate key `{}…`; the first one is used", "k".repeat(40)));
    }

    #[test]
    fn aliases_expand_with_the_alias_span() {
        let text = "base: &b {x: 1, y: [2]}\nuse: *b\n";
        let node = root(text);
        let used = node.get("use").expect("use");
        assert_eq!(slice(text, used.span), "*b");
        assert_eq!(used.pointer("/y/0").and_then(Node::as_i64), Some(2));
        assert_eq!(slice(text, used.get("x").expect("x").span), "1");
    }

    #[test]
    fn merge_keys_apply_with_explicit_keys_winning() {
        let text = "d: &d {prompt: p.md, model: m1, variant: low}\nx:\n  model: mine\n  <<: *d\n  variant: high\n";
        let node = root(text);
        let x = node.get("x").expect("x");
        assert_eq!(x.get("model").and_then(Node::as_str), Some("mine"));
        assert_eq!(x.get("variant").and_then(Node::as_str), Some("high"));
        assert_eq!(x.get("prompt").and_then(Node::as_str), Some("p.md"));
        assert!(x.get("<<").is_none());
        assert_eq!(x.as_map().expect("map").len(), 3);
        // Merged entries keep the spans of the anchored text.
        let prompt = x.entry("prompt").expect("prompt");
        assert_eq!(slice(text, prompt.key.span), "prompt");
        assert_eq!(prompt.value.span.start, text.find("p.md").expect("p.md"));
    }

    #[test]
    fn merge_lists_prefer_earlier_mappings() {
        let text = "a: &a {k: 1, a: 1}\nb: &b {k: 2, b: 2}\nc:\n  <<: [*a, *b]\n  own: 3\n";
        let c = root(text).get("c").cloned().expect("c");
        assert_eq!(c.get("k").and_then(Node::as_i64), Some(1));
        assert_eq!(c.get("a").and_then(Node::as_i64), Some(1));
        assert_eq!(c.get("b").and_then(Node::as_i64), Some(2));
        assert_eq!(c.get("own").and_then(Node::as_i64), Some(3));
        // Flow mappings, nested merges, two `<<` keys (js-yaml allows them) and a quoted key.
        let text = "a: &a {x: 1}\nb: &b {<<: *a, y: 2}\nc: {<<: *b, <<: {z: 3}, \"<<\": kept}\n";
        let c = root(text).get("c").cloned().expect("c");
        assert_eq!(c.get("x").and_then(Node::as_i64), Some(1));
        assert_eq!(c.get("y").and_then(Node::as_i64), Some(2));
        assert_eq!(c.get("z").and_then(Node::as_i64), Some(3));
        assert_eq!(c.get("<<").and_then(Node::as_str), Some("kept"));
    }

    #[test]
    fn merge_keys_stay_within_the_alias_budget() {
        // Merging moves what the alias copied, so the budget that stops alias bombs covers it.
        let mut text = String::from("a0: &a0 {k0: 0}\n");
        for n in 1..=20 {
            text.push_str(&format!("a{n}: &a{n} {{<<: [*a{}, *a{}], k{n}: {n}}}\n", n - 1, n - 1));
        }
        let error = only_error(&text);
        assert!(error.message.starts_with("alias expansion exceeds"), "{}", error.message);
    }

    #[test]
    fn merging_a_scalar_is_an_error() {
        for (text, what) in [
            ("a: 1\nb:\n  <<: x\n", "a string"),
            ("a: &a [1]\nb:\n  <<: *a\n", "a list holding an integer"),
            ("a: &a {k: 1}\nb:\n  <<: [*a, 2]\n", "a list holding an integer"),
            ("b:\n  <<:\n", "null"),
        ] {
            let parsed = parse(text);
            assert!(parsed.root.is_some());
            assert_eq!(parsed.errors.len(), 1, "{text}");
            assert!(parsed.errors[0].message.contains(&format!("not {what};")), "{}", parsed.errors[0].message);
        }
    }

    #[test]
    fn billion_laughs_stops_quickly() {
        let mut text = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for (name, prev) in
            ["b", "c", "d", "e", "f", "g", "h", "i"].iter().zip(["a", "b", "c", "d", "e", "f", "g", "h"])
        {
            let refs = vec![format!("*{prev}"); 9].join(", ");
            text.push_str(&format!("{name}: &{name} [{refs}]\n"));
        }
        let started = Instant::now();
        let error = only_error(&text);
        assert!(started.elapsed() < Duration::from_secs(1));
        assert_eq!(
            error.message,
            "alias expansion exceeds 10000 nodes (a YAML alias bomb?); stagelint stops reading here"
        );
        assert!(text[error.span.start..].starts_with("*d"), "{:?}", &text[error.span.start..]);
    }

    #[test]
    fn unknown_and_recursive_aliases() {
        let error = only_error("a: 1\nb: *nope\n");
        assert_eq!(error.message, "unknown alias `*nope`: no anchor `&nope` is defined before it");
        assert_eq!(error.span, Span::new(8, 13));
        let error = only_error("a: &x [1, *x]\n");
        assert_eq!(error.message, "alias `*x` refers to a node that contains it");
        assert_eq!(error.span, Span::new(10, 12));
    }

    #[test]
    fn ten_thousand_levels_stop_at_the_limit() {
        let message = "nesting deeper than 128 levels; stagelint stops reading here";
        let flow = "[".repeat(10_000);
        let started = Instant::now();
        let error = only_error(&flow);
        assert_eq!(error.message, message);
        assert_eq!(error.span, Span::new(255, 256));
        // Below saphyr's own flow cap, our limit fires at the 129th level.
        let error = only_error(&format!("{}1{}", "[".repeat(200), "]".repeat(200)));
        assert_eq!((error.message.as_str(), error.span), (message, Span::new(128, 129)));
        let block = "- ".repeat(10_000) + "x\n";
        let error = only_error(&block);
        assert_eq!(error.message, message);
        assert_eq!(error.span, Span::new(256, 257));
        let mut mapping = String::new();
        for depth in 0..200 {
            mapping.push_str(&" ".repeat(depth));
            mapping.push_str("k:\n");
        }
        assert_eq!(only_error(&mapping).message, message);
        assert!(started.elapsed() < Duration::from_secs(2));
        // Exactly 128 levels are fine.
        let ok = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert!(parse(&ok).errors.is_empty());
    }

    #[test]
    fn aliases_cannot_nest_past_the_limit() {
        let inner = format!("{}1{}", "[".repeat(100), "]".repeat(100));
        let text = format!("a: &a {inner}\nb: {}*a{}\n", "[".repeat(40), "]".repeat(40));
        let error = only_error(&text);
        assert!(error.message.starts_with("nesting deeper"));
        assert_eq!(&text[error.span.start..error.span.end], "*a");
    }

    #[test]
    fn empty_documents_have_no_root_and_no_error() {
        for text in ["", "   \n", "# only a comment\n", "---\n", "--- # c\n...\n"] {
            let parsed = parse(text);
            assert!(parsed.root.is_none(), "{text:?}");
            assert!(parsed.errors.is_empty(), "{text:?}: {:?}", parsed.errors);
        }
        assert_eq!(root("~").value, Value::Null);
    }

    #[test]
    fn only_the_first_document_is_read() {
        let text = "a: 1\n---\nb: 2\n";
        let parsed = parse(text);
        assert_eq!(parsed.root.expect("root").get("a").and_then(Node::as_i64), Some(1));
        assert_eq!(parsed.errors.len(), 1);
        assert_eq!(parsed.errors[0].message, "more than one YAML document; only the first is read");
        assert_eq!(parsed.errors[0].span, Span::new(5, 8));
        let parsed = parse("a: 1\n...\nb: 2\n");
        assert_eq!(parsed.errors[0].span, Span::new(9, 10));
    }

    #[test]
    fn syntax_errors_point_at_the_problem() {
        let error = only_error("a: b: c\n");
        assert_eq!(error.span, Span::new(4, 5));
        assert_eq!(error.message, "invalid YAML: mapping values are not allowed in this context");
        let error = only_error("é: [1, 2\n");
        assert_eq!(error.span, Span::empty(10));
        assert_eq!(error.message, "invalid YAML: expected `,` or `]` (in a flow sequence)");
        let error = only_error("key: \"open\n");
        assert!(error.message.starts_with("invalid YAML: "), "{}", error.message);
    }

    #[test]
    fn tab_errors_point_at_the_tab() {
        // A tab before a sequence entry: saphyr reports the `-` after it.
        let text = "name: t\nphases:\n\t- name: a\n";
        let error = &parse(text).errors[0];
        assert_eq!(error.span, Span::new(16, 17), "{error:?}");
        // A tab-indented key under a plain scalar: saphyr reports the scalar on the line above.
        let text = "name: t\nphases:\n  - name: a\n\tprompt: x.md\n";
        let error = &parse(text).errors[0];
        assert_eq!(error.span, Span::new(28, 29), "{error:?}");
    }

    #[test]
    fn readable_messages() {
        assert_eq!(readable("unexpected character: `@'"), "unexpected character `@`");
        assert_eq!(
            readable("while parsing a block mapping, did not find expected key"),
            "did not find expected key (in a block mapping)"
        );
        assert_eq!(
            readable("':' must be followed by a valid YAML whitespace"),
            "`:` must be followed by a valid YAML whitespace"
        );
    }

    mod prop {
        use crate::source::yaml::parse;
        use proptest::prelude::*;

        const SEED: &str = "name: \"wörkflow\"\nsteps:\n  - id: a\n    run: |\n      echo hi\n  - {id: b, when: [x, 'y']}\nanchor: &x {k: 1}\nref: *x\n# comment\nemoji: 😀 ok\r\nlast: ~\n";

        fn check(text: &str) {
            let parsed = parse(text);
            crate::source::assert_spans_inside(text, &parsed);
        }

        /// An edit for [`crate::source::mutate`]: insert, delete or replace at an offset.
        fn edit() -> impl Strategy<Value = (u8, usize, char)> {
            let c = prop_oneof![
                prop::sample::select(vec![
                    ':', '-', '[', ']', '{', '}', ',', '&', '*', '!', '|', '>', '"', '\'', '#', '\n', ' ', '\t', '?',
                    '%', '@', '`', '\r', 'é', '😀', '\u{feff}'
                ]),
                any::<char>(),
            ];
            (0u8..3, any::<usize>(), c)
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]
            #[test]
            fn never_panics_and_spans_stay_in_bounds(random in "\\PC{0,64}", edits in prop::collection::vec(edit(), 0..8)) {
                check(&random);
                check(&crate::source::mutate(SEED, &edits));
            }
        }
    }

    #[test]
    fn an_unclosed_flow_bracket_is_named_as_related() {
        let text = "id: x\nallowedTools: [Read, \"a]b\" # ]\nturnCap: 3\n";
        let parsed = parse(text);
        let error = parsed.errors.first().expect("an error");
        let (span, message) = error.related.clone().expect("related bracket");
        assert_eq!(span.start, text.find('[').expect("bracket"));
        assert_eq!(message, "this `[` is never closed");
    }
}
