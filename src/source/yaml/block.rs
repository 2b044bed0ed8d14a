//! The plain block YAML that definition files are nearly always written in, read without
//! saphyr: mappings and lists by indentation, one-line plain and quoted scalars, one-line flow
//! lists and mappings of scalars, comments. A workflow directory is mostly this, and saphyr spends about
//! thirty times as long on it (a string allocated per scalar, a character at a time).
//!
//! Anything else returns `None` and saphyr reads the file: anchors, aliases, tags, block and
//! multi-line scalars, escapes, nested or multi-line flow collections, document markers, tabs,
//! carriage returns, non-ASCII text, and every shape saphyr would reject. The events are the
//! ones saphyr's would become (the same spans where the tree keeps them), so the tree is built
//! by the same code; a differential test holds the two readers to the same tree.

use std::borrow::Cow;
use std::collections::HashSet;

use saphyr_parser::ScalarStyle;

use super::{Ev, Events, Resolve};
use crate::source::Span;

/// Deeper than this, saphyr reads the file (and reports the depth limit where it applies).
const MAX_OPEN: usize = 64;
/// saphyr stops reading a word as a key once its colon is 1,024 characters past the word's
/// start (blanks before the colon count); well short of that, it decides.
const MAX_KEY: usize = 1000;

pub(super) fn events(text: &str) -> Option<Events<'_>> {
    let bytes = text.as_bytes();
    if !printable(text) {
        return None;
    }
    let mut reader = Reader { text, events: Vec::with_capacity(text.len() / 12), open: Vec::new(), pending: None };
    let mut start = 0;
    while start < bytes.len() {
        let end = bytes[start..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| start + i);
        reader.line(start, end)?;
        start = end + 1;
    }
    reader.finish();
    Some(Events { events: reader.events, referenced: HashSet::new(), second_document: None })
}

struct Reader<'a> {
    text: &'a str,
    events: Vec<(Ev<'a>, Span)>,
    open: Vec<Open>,
    /// A `key:` or `-` with nothing after it on its line: its value is the next line, if that
    /// is indented further, or else an empty scalar.
    pending: Option<Pending>,
}

#[derive(Clone, Copy)]
struct Open {
    indent: usize,
    map: bool,
    /// A list written at its key's indentation (`key:` then `- item` below it, not indented).
    indentless: bool,
}

/// The value left open at the end of a line.
#[derive(Clone, Copy)]
struct Pending {
    /// Where an empty value is placed: saphyr's position (the colon, or the end of the dash's line).
    at: usize,
    /// The indentation of the collection holding the key or item.
    indent: usize,
    item: bool,
}

/// A scalar read from one line.
struct Scalar<'a> {
    span: Span,
    value: &'a str,
    style: ScalarStyle,
}

impl<'a> Reader<'a> {
    fn line(&mut self, start: usize, end: usize) -> Option<()> {
        let line = &self.text.as_bytes()[start..end];
        let indent = line.iter().position(|&b| b != b' ').unwrap_or(line.len());
        if indent == line.len() || line[indent] == b'#' {
            return Some(());
        }
        if indent == 0 && (line.starts_with(b"---") || line.starts_with(b"...")) {
            return None;
        }
        let dash = is_dash(line, indent);
        if let Some(pending) = self.pending.take() {
            if indent > pending.indent {
                return self.nested(start, indent, end);
            }
            if indent == pending.indent && !pending.item && dash {
                return self.open_list(start, indent, end, true);
            }
            self.empty(pending.at);
        }
        while let Some(top) = self.open.last() {
            if top.indent > indent || (top.indentless && top.indent == indent && !dash) {
                self.close(start + indent);
            } else {
                break;
            }
        }
        match self.open.last().copied() {
            // The root: a collection, or a scalar alone in the document.
            None if self.events.is_empty() => self.nested(start, indent, end),
            Some(top) if top.indent == indent && top.map => self.entry(start + indent, end),
            Some(top) if top.indent == indent && dash => self.item(start + indent, end),
            // More text after the root scalar, a line deeper than its collection with no open
            // value (a continuation or an error), or a list item among keys: saphyr decides.
            _ => None,
        }
    }

    /// A node that starts a line: a list, a mapping, or (for the root only) a scalar.
    fn nested(&mut self, start: usize, indent: usize, end: usize) -> Option<()> {
        let col = start + indent;
        if is_dash(&self.text.as_bytes()[start..end], indent) {
            return self.open_list(start, indent, end, false);
        }
        if self.key(col, end).is_some() {
            self.push_open(col, Open { indent, map: true, indentless: false })?;
            return self.entry(col, end);
        }
        if !self.open.is_empty() {
            // `key:` with its scalar on the next line may run on over several: saphyr decides.
            return None;
        }
        // Nothing may follow a root scalar: any later line sends the file to saphyr.
        self.inline(col, end)
    }

    fn open_list(&mut self, start: usize, indent: usize, end: usize, indentless: bool) -> Option<()> {
        let col = start + indent;
        // saphyr starts a list under its key's indentation at its first item's text (or at the
        // end of that line, when the item is empty), and an indented one at the dash.
        let at = if indentless {
            let text = skip_spaces(self.text, col + 1, end);
            if text == end || self.text.as_bytes()[text] == b'#' { end } else { text }
        } else {
            col
        };
        self.push_open(at, Open { indent, map: false, indentless })?;
        self.item(col, end)
    }

    fn push_open(&mut self, at: usize, open: Open) -> Option<()> {
        if self.open.len() >= MAX_OPEN {
            return None;
        }
        self.open.push(open);
        self.events.push((Ev::Open { map: open.map, anchor: 0 }, Span::empty(at)));
        Some(())
    }

    fn close(&mut self, at: usize) {
        self.open.pop();
        self.events.push((Ev::Close, Span::empty(at)));
    }

    fn empty(&mut self, at: usize) {
        self.scalar(Scalar { span: Span::empty(at), value: "", style: ScalarStyle::Plain });
    }

    fn scalar(&mut self, scalar: Scalar<'a>) {
        let ev = Ev::Scalar {
            value: Cow::Borrowed(scalar.value),
            style: scalar.style,
            anchor: 0,
            tag: Resolve::Untagged,
            props: false,
        };
        self.events.push((ev, scalar.span));
    }

    /// `key: value` at `col`, in the mapping open there.
    fn entry(&mut self, col: usize, end: usize) -> Option<()> {
        let (key, colon) = self.key(col, end)?;
        let indent = self.open.last()?.indent;
        self.scalar(key);
        let at = skip_spaces(self.text, colon + 1, end);
        if at == end || self.text.as_bytes()[at] == b'#' {
            self.pending = Some(Pending { at: colon, indent, item: false });
            return Some(());
        }
        self.inline(at, end)
    }

    /// `- item` at `col`, in the list open there.
    fn item(&mut self, col: usize, end: usize) -> Option<()> {
        let indent = self.open.last()?.indent;
        let at = skip_spaces(self.text, col + 1, end);
        if at == end || self.text.as_bytes()[at] == b'#' {
            self.pending = Some(Pending { at: end, indent, item: true });
            return Some(());
        }
        if is_dash(self.text.as_bytes(), at) {
            // A list in a list on one line: saphyr decides.
            return None;
        }
        if self.key(at, end).is_some() {
            // A mapping that starts on the item's line: its keys line up under the first.
            let indent = at - line_start(self.text, at);
            self.push_open(at, Open { indent, map: true, indentless: false })?;
            return self.entry(at, end);
        }
        self.inline(at, end)
    }

    /// The key at `col` and the position of its colon, if the line is `key:` something.
    fn key(&self, col: usize, end: usize) -> Option<(Scalar<'a>, usize)> {
        let bytes = self.text.as_bytes();
        let (key, after) = match bytes[col] {
            b'"' | b'\'' => {
                let key = self.quoted(col, end)?;
                let after = key.span.end;
                (key, after)
            }
            b if starts_special(b) => return None,
            _ => {
                let mut i = col;
                loop {
                    if i >= end || (bytes[i] == b'#' && bytes[i - 1] == b' ') {
                        return None;
                    }
                    if bytes[i] == b':' && (i + 1 == end || bytes[i + 1] == b' ') {
                        break;
                    }
                    i += 1;
                }
                let stop = trim_end(bytes, col, i);
                (Scalar { span: Span::new(col, stop), value: &self.text[col..stop], style: ScalarStyle::Plain }, i)
            }
        };
        let colon = after;
        let is_key = bytes.get(colon) == Some(&b':') && (colon + 1 == end || bytes[colon + 1] == b' ');
        (is_key && colon - col <= MAX_KEY).then_some((key, colon))
    }

    /// A value that starts at `at` and ends its line: a scalar or a flow list.
    fn inline(&mut self, at: usize, end: usize) -> Option<()> {
        let bytes = self.text.as_bytes();
        let stop = match bytes[at] {
            b'[' => self.flow(at, end, false)?,
            b'{' => self.flow(at, end, true)?,
            b'"' | b'\'' => {
                let scalar = self.quoted(at, end)?;
                let stop = scalar.span.end;
                self.scalar(scalar);
                stop
            }
            // `-1` is a plain scalar; `- ` would be a list where none may start.
            b'-' if is_dash(bytes, at) => return None,
            b if b != b'-' && starts_special(b) => return None,
            _ => {
                let mut stop = at;
                while stop < end && !(bytes[stop] == b'#' && bytes[stop - 1] == b' ') {
                    stop += 1;
                }
                let stop = trim_end(bytes, at, stop);
                let value = &self.text[at..stop];
                // `a: b: c` is an error, and `a: b:` the start of another mapping: saphyr decides.
                if value.contains(": ") || value.ends_with(':') {
                    return None;
                }
                self.scalar(Scalar { span: Span::new(at, stop), value, style: ScalarStyle::Plain });
                stop
            }
        };
        // After the value: blanks, then the end of the line or a comment.
        let rest = skip_spaces(self.text, stop, end);
        (rest == end || (bytes[rest] == b'#' && rest > stop)).then_some(())
    }

    /// `[a, "b", c]` or `{a: 1, "b": c}` on one line, of scalars only; returns where it ends.
    fn flow(&mut self, at: usize, end: usize, map: bool) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let closer = if map { b'}' } else { b']' };
        // saphyr's opening span runs on over the blanks inside; the tree reads it only for an
        // empty collection whose closing span runs on too (blanks or a comment after it).
        self.events.push((Ev::Open { map, anchor: 0 }, Span::new(at, skip_spaces(self.text, at + 1, end))));
        let mut i = skip_spaces(self.text, at + 1, end);
        if i < end && bytes[i] == closer {
            self.events.push((Ev::Close, Span::new(i, end.max(i + 1))));
            return Some(i + 1);
        }
        loop {
            if map {
                let key = self.flow_scalar(i, end, true)?;
                i = skip_spaces(self.text, key.span.end, end);
                if !(i + 1 < end && bytes[i] == b':' && bytes[i + 1] == b' ') {
                    return None;
                }
                self.scalar(key);
                i = skip_spaces(self.text, i + 1, end);
            }
            let value = self.flow_scalar(i, end, false)?;
            i = skip_spaces(self.text, value.span.end, end);
            self.scalar(value);
            if i >= end {
                return None;
            }
            match bytes[i] {
                b if b == closer => {
                    // saphyr's closing span runs on to the end of the line when blanks or a
                    // comment follow, and the tree then ends the collection at its last item.
                    self.events.push((Ev::Close, Span::new(i, end.max(i + 1))));
                    return Some(i + 1);
                }
                b',' => {
                    i = skip_spaces(self.text, i + 1, end);
                    // A trailing comma, or an empty item: saphyr decides.
                    if i >= end || matches!(bytes[i], b']' | b'}' | b',') {
                        return None;
                    }
                }
                _ => return None,
            }
        }
    }

    /// A scalar inside a flow collection at `at`: quoted, or plain up to the next `,`, closer
    /// or (for a key) `: `. Anything that could nest or need saphyr's rules returns `None`.
    fn flow_scalar(&self, at: usize, end: usize, key: bool) -> Option<Scalar<'a>> {
        let bytes = self.text.as_bytes();
        if at >= end {
            return None;
        }
        if matches!(bytes[at], b'"' | b'\'') {
            return self.quoted(at, end);
        }
        if starts_special(bytes[at]) {
            return None;
        }
        let mut i = at;
        while i < end {
            match bytes[i] {
                b',' | b']' | b'}' if !key => break,
                b':' if key && bytes.get(i + 1) == Some(&b' ') => break,
                b',' | b'[' | b']' | b'{' | b'}' | b'#' | b':' => return None,
                _ => i += 1,
            }
        }
        if i >= end {
            return None;
        }
        let stop = trim_end(bytes, at, i);
        Some(Scalar { span: Span::new(at, stop), value: &self.text[at..stop], style: ScalarStyle::Plain })
    }

    /// A one-line quoted scalar with nothing to unescape: `"..."` without `\`, `'...'` without `''`.
    fn quoted(&self, at: usize, end: usize) -> Option<Scalar<'a>> {
        let bytes = self.text.as_bytes();
        let quote = bytes[at];
        let close = at + 1 + bytes[at + 1..end].iter().position(|&b| b == quote)?;
        if (quote == b'"' && bytes[at + 1..close].contains(&b'\\'))
            || (quote == b'\'' && bytes.get(close + 1) == Some(&b'\''))
        {
            return None;
        }
        let style = if quote == b'"' { ScalarStyle::DoubleQuoted } else { ScalarStyle::SingleQuoted };
        Some(Scalar { span: Span::new(at, close + 1), value: &self.text[at + 1..close], style })
    }

    fn finish(&mut self) {
        if let Some(pending) = self.pending.take() {
            self.empty(pending.at);
        }
        while !self.open.is_empty() {
            self.close(self.text.len());
        }
    }
}

/// Text of nothing but printable characters and line feeds: no tab, carriage return, byte
/// order mark or line separator, whose handling is saphyr's to decide.
fn printable(text: &str) -> bool {
    if text.is_ascii() {
        return text.bytes().all(|b| b == b'\n' || (0x20..0x7f).contains(&b));
    }
    text.chars().all(|c| {
        c == '\n'
            || (c >= ' '
                && !('\u{7f}'..='\u{9f}').contains(&c)
                && !matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'))
    })
}

/// Whether a `-` at `at` starts a list item (followed by a blank or the end of the line).
fn is_dash(bytes: &[u8], at: usize) -> bool {
    bytes.get(at) == Some(&b'-') && matches!(bytes.get(at + 1), None | Some(b' ' | b'\n'))
}

/// Characters that make a scalar something other than a plain one (or may): saphyr decides.
/// A value may still start with `-` followed by a non-blank (`-1`); a key may not.
fn starts_special(b: u8) -> bool {
    matches!(
        b,
        b'-' | b'?'
            | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'%'
            | b'@'
            | b'`'
    )
}

fn skip_spaces(text: &str, mut at: usize, end: usize) -> usize {
    let bytes = text.as_bytes();
    while at < end && bytes[at] == b' ' {
        at += 1;
    }
    at
}

fn trim_end(bytes: &[u8], start: usize, mut stop: usize) -> usize {
    while stop > start && bytes[stop - 1] == b' ' {
        stop -= 1;
    }
    stop
}

fn line_start(text: &str, at: usize) -> usize {
    text.as_bytes()[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::super::{build, saphyr};
    use super::events;
    use proptest::prelude::*;

    /// The tree from these events, or `None` when saphyr is left to read the text.
    fn fast(text: &str) -> Option<crate::source::Parsed> {
        events(text).map(|events| build(text, events))
    }

    /// Trees compared by their text: `.nan` is never equal to itself.
    fn shown(parsed: &crate::source::Parsed) -> String {
        format!("{parsed:?}")
    }

    fn yaml_texts(dir: &std::path::Path, out: &mut Vec<(std::path::PathBuf, String)>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                yaml_texts(&path, out);
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            match path.extension().and_then(|e| e.to_str()) {
                Some("yaml" | "yml") => out.push((path, text)),
                Some("md") => {
                    if let Some(fm) = crate::source::frontmatter::split(&text) {
                        out.push((path, text[fm.yaml.start..fm.yaml.end].to_string()));
                    }
                }
                _ => {}
            }
        }
    }

    #[test]
    fn every_yaml_file_in_the_repository_reads_as_saphyr_reads_it() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut texts = Vec::new();
        for dir in ["tests", "examples", "docs", "benches"] {
            yaml_texts(&root.join(dir), &mut texts);
        }
        let mut read = 0;
        for (path, text) in &texts {
            if let Some(tree) = fast(text) {
                read += 1;
                assert_eq!(shown(&tree), shown(&saphyr(text)), "{}", path.display());
            }
        }
        // Most of them are plain block YAML; the test compares something.
        assert!(read * 2 > texts.len(), "{read} of {} read without saphyr", texts.len());
    }

    #[test]
    fn shapes_outside_the_subset_are_left_to_saphyr() {
        for text in [
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "a: |\n  text\n",
            "a: >\n  text\n",
            "a: b\n  c\n",
            "a: {b: [1]}\n",
            "a: {b}\n",
            "a: {b: }\n",
            "a: [[1]]\n",
            "a: \"x\\ty\"\n",
            "a: 'it''s'\n",
            "---\na: 1\n",
            "a: 1\n---\nb: 2\n",
            "a:\tb\n",
            "a: b\r\n",
            "a: \u{2028}\n",
            "\u{feff}a: 1\n",
            "a: b: c\n",
            "a:\n  - x\n  b: 1\n",
            "a:\n  b: 1\n c: 2\n",
            "? a\n: b\n",
            "a: [x,]\n",
            "a: \"open\n",
            "hello\nworld\n",
            "- - a\n",
            "a:\n  text on its own line\n",
            // Found by an outside audit: a colon 1,024 characters past the key's start.
            &format!("a{}: b\n", " ".repeat(1024)),
            &format!("- a{}: b\n", " ".repeat(1024)),
        ] {
            assert!(events(text).is_none(), "{text:?}");
        }
    }

    #[test]
    fn the_common_shapes_are_read_without_saphyr() {
        for text in [
            "",
            "# only a comment\n",
            "a: 1\n",
            "a:\nb: 2\n",
            "a:\n- x\n- y\nb: 1\n",
            "a:\n  - p\n  - k: 1\n    j: 2\n  -\n  - [a]\n",
            "f: [x, \"y\", 'z']\ng: []\n",
            "e:   # note\n  f: -1 # more\n",
            "\"q\": 'v'\n",
            "a: { type: string }\nb: {}\nc: {x: 1, \"y\": z}\n",
            "a: é — ü\n",
            "hello\n",
        ] {
            let tree = fast(text).unwrap_or_else(|| panic!("{text:?} was left to saphyr"));
            assert_eq!(shown(&tree), shown(&saphyr(text)), "{text:?}");
        }
    }

    /// Lines of block YAML made of pieces that sit at the subset's edges.
    fn document() -> impl Strategy<Value = String> {
        let scalar = prop::sample::select(vec![
            "a",
            "b c",
            "-1",
            "x:y",
            "\"q\"",
            "'s'",
            "a#b",
            "a #c",
            "1",
            "true",
            "~",
            "null",
            "0x1f",
            "1e3",
            ".inf",
            "\"\"",
            "''",
            "<<",
            "a]",
            "[x]",
            "[]",
            "[a, 'b', \"c\"]",
            "[ a ,b ]",
            "[a]  ",
            "[b] # c",
            "{a: b}  #c",
            "[] ",
            "{a: 1}",
            "{ a : b, 'c': d }",
            "{}",
            "{a: [b]}",
            "é",
            "http://x",
            "-",
            "- a",
            "?",
            ":",
            "a:",
            "'x' y",
            "\"a\\b\"",
            "'it''s'",
            "&a",
            "*a",
            "!t",
            "|",
            ">",
            "{}",
            "%",
            "@",
            "`",
            "#",
            "a: b",
            "key",
            "x y z",
            "  ",
        ]);
        let line = (
            0usize..7,
            prop::sample::select(vec!["k: v", "k:", "- v", "-", "- k: v", "- k:", "# c", "", "v"]),
            scalar.clone(),
            scalar,
        )
            .prop_map(|(indent, shape, key, value)| {
                let body = shape.replace('k', key).replace('v', value);
                format!("{}{body}", " ".repeat(indent))
            });
        prop::collection::vec(line, 0..12).prop_map(|lines| lines.join("\n"))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]
        #[test]
        fn what_is_read_without_saphyr_is_what_saphyr_reads(text in document()) {
            if let Some(tree) = fast(&text) {
                prop_assert_eq!(shown(&tree), shown(&saphyr(&text)), "{:?}", text);
            }
        }
    }
}
