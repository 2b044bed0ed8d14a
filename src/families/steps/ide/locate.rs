//! Where the cursor is in a registry: the node under it in the parsed tree, or the completion
//! site (a key or value slot with its path). When the registry does not parse mid-typing, the
//! site comes from the braces and quotes around the cursor, and the half-typed member is
//! blanked out so that the rest of the file still parses for the model.

use crate::source::{Node, Span, Value, json};

use super::{Seg, inner};

/// The node under the cursor in a parsed tree.
pub(super) struct Hit<'n> {
    /// From the root to `node`; for a key, ends with that key.
    pub path: Vec<Seg>,
    /// The deepest node holding the cursor; for a key, the entry's value.
    pub node: &'n Node,
    /// The key node, when the cursor is on a mapping key.
    pub key: Option<&'n Node>,
    /// The mapping or list holding `node`.
    pub parent: Option<&'n Node>,
}

/// The deepest node (or key) whose span holds `offset`.
pub(super) fn hit(root: &Node, offset: usize) -> Option<Hit<'_>> {
    if !root.span.contains(offset) {
        return None;
    }
    let mut path = Vec::new();
    let mut node = root;
    let mut parent = None;
    loop {
        let next = match &node.value {
            Value::Map(entries) => entries.iter().find_map(|e| {
                let key = e.key_str().unwrap_or_default().to_string();
                if e.key.span.contains(offset) {
                    Some((Seg::Key(key), &e.value, Some(&e.key)))
                } else {
                    e.value.span.contains(offset).then_some((Seg::Key(key), &e.value, None))
                }
            }),
            Value::Seq(items) => {
                items.iter().enumerate().find(|(_, n)| n.span.contains(offset)).map(|(i, n)| (Seg::Index(i), n, None))
            }
            _ => None,
        };
        let Some((seg, child, key)) = next else { return Some(Hit { path, node, key: None, parent }) };
        path.push(seg);
        parent = Some(node);
        node = child;
        if key.is_some() {
            return Some(Hit { path, node, key, parent });
        }
    }
}

/// The node under the cursor when it is a string value (not a key), with its path.
pub(super) fn string_value(root: &Node, offset: usize) -> Option<(Vec<Seg>, &Node, &str)> {
    let hit = hit(root, offset)?;
    if hit.key.is_some() {
        return None;
    }
    let text = hit.node.as_str()?;
    Some((hit.path, hit.node, text))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Slot {
    /// A mapping key.
    Key,
    /// A value (of a mapping entry or a list item).
    Value,
}

/// Where a completion goes.
#[derive(Clone, Debug)]
pub(super) struct Site {
    pub slot: Slot,
    /// For a key, the mapping's path; for a value, the value's own path.
    pub path: Vec<Seg>,
    /// What the completion replaces: the text inside the quotes, a bare word, or nothing.
    pub replace: Span,
    /// The cursor is inside quotes: insert without them.
    pub quoted: bool,
    /// A previous member ends without a comma: the insertion needs one first.
    pub comma: bool,
}

/// The completion site in a parsed registry.
pub(super) fn site(root: &Node, text: &str, offset: usize) -> Option<Site> {
    let Hit { mut path, mut node, key, parent } = hit(root, offset)?;
    let strictly_inside = |span: Span| span.start < offset && offset < span.end;
    // Right after a closing quote, brace or bracket the cursor is in the container around.
    let closed = matches!(node.value, Value::String(_) | Value::Map(_) | Value::Seq(_));
    if let (None, true, Some(parent)) = (key, closed, parent)
        && offset == node.span.end
    {
        path.pop();
        node = parent;
    }
    if let Some(key) = key {
        path.pop();
        let quoted = key.as_str().is_some() && strictly_inside(key.span);
        return quoted.then(|| Site { slot: Slot::Key, path, replace: inner(key), quoted, comma: false });
    }
    match &node.value {
        Value::Map(entries) => {
            // Between a key and its value there is nothing to complete.
            let in_entry = entries.iter().any(|e| e.key.span.start < offset && offset < e.value.span.end);
            if !strictly_inside(node.span) || in_entry {
                return None;
            }
            let comma = needs_comma(text, entries.iter().map(|e| e.value.span), offset);
            Some(Site { slot: Slot::Key, path, replace: Span::empty(offset), quoted: false, comma })
        }
        Value::Seq(items) => {
            if !strictly_inside(node.span) {
                return None;
            }
            let before = items.iter().filter(|n| n.span.end <= offset).count();
            let comma = needs_comma(text, items.iter().map(|n| n.span), offset);
            path.push(Seg::Index(before));
            Some(Site { slot: Slot::Value, path, replace: Span::empty(offset), quoted: false, comma })
        }
        Value::String(_) if strictly_inside(node.span) => {
            Some(Site { slot: Slot::Value, path, replace: inner(node), quoted: true, comma: false })
        }
        _ if path.is_empty() => None,
        _ => Some(Site { slot: Slot::Value, path, replace: node.span, quoted: false, comma: false }),
    }
}

/// Whether the last member ending before `offset` is followed by no comma up to `offset`.
fn needs_comma(text: &str, members: impl Iterator<Item = Span>, offset: usize) -> bool {
    let last_end = members.filter(|s| s.end <= offset).map(|s| s.end).max();
    last_end.is_some_and(|end| !text[end..offset].contains(','))
}

// ---------------------------------------------------------------------------------------------
// Half-typed registries

enum FrameKind {
    Object,
    Array,
}

/// An object or array still open at the cursor.
struct Frame {
    kind: FrameKind,
    /// The key of the member being read (objects).
    key: Option<String>,
    /// A `:` was read after the key.
    colon: bool,
    /// The index of the item being read (arrays).
    index: usize,
    /// Where the member being read starts (after `{`, `[` or `,`).
    member_start: usize,
    /// The member being read has a complete key or value.
    done: bool,
}

impl Frame {
    fn new(kind: FrameKind, member_start: usize) -> Frame {
        Frame { kind, key: None, colon: false, index: 0, member_start, done: false }
    }
}

/// The completion site from the text alone, and the half-typed member around the cursor (what
/// [`repair`] blanks out).
pub(super) fn scan(text: &str, offset: usize) -> Option<(Site, Span)> {
    let bytes = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte.is_ascii_whitespace() {
            at += 1;
            continue;
        }
        if at >= offset {
            break;
        }
        match byte {
            b'{' | b'[' => {
                let kind = if byte == b'{' { FrameKind::Object } else { FrameKind::Array };
                stack.push(Frame::new(kind, at + 1));
                at += 1;
            }
            b'}' | b']' => {
                stack.pop();
                if let Some(top) = stack.last_mut() {
                    top.done = true;
                }
                at += 1;
            }
            b':' => {
                if let Some(top) = stack.last_mut() {
                    top.colon = true;
                }
                at += 1;
            }
            b',' => {
                if let Some(top) = stack.last_mut() {
                    match top.kind {
                        FrameKind::Object => (top.key, top.colon) = (None, false),
                        FrameKind::Array => top.index += 1,
                    }
                    top.member_start = at + 1;
                    top.done = false;
                }
                at += 1;
            }
            b'"' => {
                let (end, closed) = string_end(bytes, at);
                let content_end = if closed { end - 1 } else { end };
                if offset <= content_end {
                    let replace_end = if closed { content_end } else { word_end(bytes, offset) };
                    let token_end = if closed { end } else { replace_end };
                    return slot(&stack, Span::new(at + 1, replace_end), true, token_end);
                }
                if let Some(top) = stack.last_mut() {
                    if matches!(top.kind, FrameKind::Object) && !top.colon {
                        top.key = Some(unescape(&text[at + 1..content_end]));
                    }
                    top.done = true;
                }
                at = end;
            }
            _ => {
                let end = word_end(bytes, at);
                if offset <= end {
                    return slot(&stack, Span::new(at, end), false, end);
                }
                if let Some(top) = stack.last_mut() {
                    top.done = true;
                }
                at = end.max(at + 1);
            }
        }
    }
    slot(&stack, Span::empty(offset), false, offset)
}

/// The site in the innermost open frame, for a token spanning `replace` and ending at `end`.
fn slot(stack: &[Frame], replace: Span, quoted: bool, end: usize) -> Option<(Site, Span)> {
    let (top, outer) = stack.split_last()?;
    let mut path: Vec<Seg> = outer
        .iter()
        .map(|frame| match frame.kind {
            FrameKind::Object => Seg::Key(frame.key.clone().unwrap_or_default()),
            FrameKind::Array => Seg::Index(frame.index),
        })
        .collect();
    let typing = !replace.is_empty() || quoted;
    let slot = match top.kind {
        FrameKind::Object if !top.colon => Slot::Key,
        FrameKind::Object => {
            path.push(Seg::Key(top.key.clone().unwrap_or_default()));
            Slot::Value
        }
        FrameKind::Array => {
            path.push(Seg::Index(top.index + usize::from(top.done && !typing)));
            Slot::Value
        }
    };
    // A complete member before the cursor and no comma since: the new one needs a comma.
    let comma = top.done && !typing && !(matches!(top.kind, FrameKind::Object) && top.colon);
    let member = if comma { Span::empty(end) } else { Span::new(top.member_start.min(end), end) };
    Some((Site { slot, path, replace, quoted, comma }, member))
}

/// Where a string starting at `open` ends: after its closing quote, or at the end of its line
/// when it is not closed there.
fn string_end(bytes: &[u8], open: usize) -> (usize, bool) {
    let mut at = open + 1;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return (at + 1, true),
            b'\n' | b'\r' => return (at, false),
            _ => at += 1,
        }
    }
    (bytes.len(), false)
}

/// The end of the bare word (or unclosed string's word) starting at `at`.
fn word_end(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && !matches!(bytes[at], b'"' | b',' | b':' | b'{' | b'}' | b'[' | b']') {
        if bytes[at].is_ascii_whitespace() {
            break;
        }
        at += 1;
    }
    at
}

/// A JSON string's content as text; escapes other than `\"` and `\\` are kept as written.
fn unescape(raw: &str) -> String {
    raw.replace("\\\"", "\"").replace("\\\\", "\\")
}

/// The registry with the half-typed `member` blanked out (and a comma left dangling by it), so
/// the rest of the file parses; `None` when it still does not.
pub(super) fn repair(text: &str, member: Span) -> Option<Node> {
    let mut bytes = text.as_bytes().to_vec();
    let blank = |bytes: &mut Vec<u8>, span: Span| {
        for byte in &mut bytes[span.start..span.end] {
            if *byte != b'\n' && *byte != b'\r' {
                *byte = b' ';
            }
        }
    };
    blank(&mut bytes, member);
    let before = bytes[..member.start].iter().rposition(|b| !b.is_ascii_whitespace());
    let after = bytes[member.end..].iter().position(|b| !b.is_ascii_whitespace()).map(|i| member.end + i);
    match (before.map(|i| (i, bytes[i])), after.map(|i| (i, bytes[i]))) {
        (Some((comma, b',')), Some((_, b'}' | b']'))) => blank(&mut bytes, Span::new(comma, comma + 1)),
        (Some((_, b'{' | b'[' | b',')), Some((comma, b','))) => blank(&mut bytes, Span::new(comma, comma + 1)),
        _ => {}
    }
    // The spans start and end at ASCII bytes or the cursor, so whole characters became spaces.
    let repaired = String::from_utf8(bytes).ok()?;
    if let Some(root) = json::parse(&repaired).root {
        return Some(root);
    }
    // The rest of the file may not be typed yet: close what is still open at its end.
    let closers = unclosed(repaired.as_bytes());
    if closers.is_empty() {
        return None;
    }
    let mut closed = repaired.trim_end().trim_end_matches(',').to_string();
    closed.extend(closers.iter().rev().map(|b| char::from(*b)));
    json::parse(&closed).root
}

/// The closing brackets the objects and arrays still open at the end of `bytes` need.
fn unclosed(bytes: &[u8]) -> Vec<u8> {
    let mut stack = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                at = string_end(bytes, at).0;
                continue;
            }
            b'{' => stack.push(b'}'),
            b'[' => stack.push(b']'),
            close @ (b'}' | b']') if stack.last() == Some(&close) => {
                stack.pop();
            }
            _ => {}
        }
        at += 1;
    }
    stack
}
