//! JSON reader: a hand-written, iterative RFC 8259 parser producing the spanned `Node` tree.

use std::collections::HashMap;

use crate::source::{Entry, MAX_DEPTH, Node, Parsed, Span, SyntaxError, Value};

/// Reads one JSON value; it never panics, and a syntax error gives `root: None` and that one error.
///
/// - Integers in the `i64` range are `Int`; every other number is `Float` (`1e400` is infinity).
/// - A lone surrogate escape (`\ud800`) becomes U+FFFD without an error, as in most JSON readers.
/// - Duplicate keys keep the last value (like `JSON.parse`) at the position of the first key.
///   The later key is reported, with the first one as the related span.
/// - A leading BOM is skipped; spans still count its three bytes.
pub fn parse(text: &str) -> Parsed {
    let mut reader = Reader { text, bytes: text.as_bytes(), pos: 0, errors: Vec::new() };
    if text.starts_with('\u{feff}') {
        reader.pos = '\u{feff}'.len_utf8();
    }
    match reader.run() {
        Ok(root) => Parsed { root: Some(root), errors: reader.errors },
        Err(error) => Parsed { root: None, errors: vec![error] },
    }
}

type Result<T> = std::result::Result<T, SyntaxError>;

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// Duplicate keys (the only problems that do not stop the reader).
    errors: Vec<SyntaxError>,
}

/// An array or object still open; the explicit stack keeps input depth off the call stack.
struct Frame {
    open: usize,
    kind: Kind,
}

enum Kind {
    Array(Vec<Node>),
    Object {
        entries: Vec<Entry>,
        /// Key -> entry, built once the object outgrows a linear scan.
        index: Option<HashMap<String, usize>>,
        /// The key waiting for its value, and the entry it replaces when it is a duplicate.
        key: Option<(Node, Option<usize>)>,
    },
}

/// Objects up to this size look keys up by scanning, which allocates nothing.
const LINEAR: usize = 16;

fn find_key(entries: &[Entry], index: &mut Option<HashMap<String, usize>>, name: &str) -> Option<usize> {
    if entries.len() <= LINEAR {
        return entries.iter().position(|e| e.key.as_str() == Some(name));
    }
    let index = index.get_or_insert_with(|| {
        let mut index = HashMap::with_capacity(entries.len() * 2);
        for (i, entry) in entries.iter().enumerate() {
            if let Some(key) = entry.key.as_str() {
                index.entry(key.to_string()).or_insert(i);
            }
        }
        index
    });
    index.get(name).copied()
}

fn trailing_comma(comma: usize) -> SyntaxError {
    SyntaxError::new(Span::new(comma, comma + 1), "trailing comma is not allowed in JSON")
}

impl Frame {
    fn attach(&mut self, node: Node) {
        match &mut self.kind {
            Kind::Array(items) => items.push(node),
            Kind::Object { entries, index, key } => match key.take() {
                Some((_, Some(first))) => {
                    if let Some(entry) = entries.get_mut(first) {
                        entry.value = node;
                    }
                }
                Some((key, None)) => {
                    if let (Some(index), Some(name)) = (index.as_mut(), key.as_str()) {
                        index.insert(name.to_string(), entries.len());
                    }
                    entries.push(Entry { key, value: node });
                }
                None => {}
            },
        }
    }

    /// Holds `key_node` until its value arrives, reporting it when it repeats an earlier key.
    fn set_key(&mut self, key_node: Node, errors: &mut Vec<SyntaxError>) {
        let Kind::Object { entries, index, key } = &mut self.kind else {
            return;
        };
        let name = key_node.as_str().unwrap_or_default();
        let first = find_key(entries, index, name);
        if let Some(entry) = first.and_then(|i| entries.get(i)) {
            errors.push(
                SyntaxError::new(
                    key_node.span,
                    format!("duplicate key `{}`; the last one is used", crate::util::shorten(name, 40)),
                )
                .with_related(entry.key.span, "first defined here"),
            );
        }
        *key = Some((key_node, first));
    }

    fn finish(self, end: usize) -> Node {
        let value = match self.kind {
            Kind::Array(items) => Value::Seq(items),
            Kind::Object { entries, .. } => Value::Map(entries),
        };
        Node::new(Span::new(self.open, end), value)
    }

    fn noun(&self) -> &'static str {
        match self.kind {
            Kind::Array(_) => "array",
            Kind::Object { .. } => "object",
        }
    }
}

impl Reader<'_> {
    fn run(&mut self) -> Result<Node> {
        let mut stack: Vec<Frame> = Vec::new();
        // This is the comma just before the value being read, so that a trailing comma can be named.
        let mut after_comma: Option<usize> = None;
        loop {
            self.skip_ws();
            let start = self.pos;
            let mut node = match (self.peek(), after_comma) {
                (None, _) => return Err(self.eof(&stack)),
                (Some(b']' | b'}'), Some(comma)) => return Err(trailing_comma(comma)),
                (Some(b'['), _) => {
                    self.open(&mut stack, Kind::Array(Vec::new()))?;
                    self.skip_ws();
                    if self.peek() != Some(b']') {
                        after_comma = None;
                        continue;
                    }
                    self.pos += 1;
                    self.close(&mut stack)
                }
                (Some(b'{'), _) => {
                    let kind = Kind::Object { entries: Vec::new(), index: None, key: None };
                    self.open(&mut stack, kind)?;
                    self.skip_ws();
                    match self.peek() {
                        Some(b'}') => {
                            self.pos += 1;
                            self.close(&mut stack)
                        }
                        _ => {
                            self.key(&mut stack)?;
                            after_comma = None;
                            continue;
                        }
                    }
                }
                (Some(b'"'), _) => {
                    let (value, span) = self.string()?;
                    Node::new(span, Value::String(value.into()))
                }
                (Some(b'-' | b'0'..=b'9'), _) => self.number()?,
                (Some(b'a'..=b'z' | b'A'..=b'Z'), _) => self.literal()?,
                (Some(_), _) => return Err(self.unexpected(start)),
            };

            // A value is complete, so attach it and close every container that ends right here.
            loop {
                let Some(frame) = stack.last_mut() else {
                    self.skip_ws();
                    if self.pos < self.bytes.len() {
                        let mut error = self.unexpected(self.pos);
                        error.message = format!("{} after the JSON value", error.message);
                        return Err(error);
                    }
                    return Ok(node);
                };
                frame.attach(node);
                let is_array = matches!(frame.kind, Kind::Array(_));
                self.skip_ws();
                match (self.peek(), is_array) {
                    (Some(b','), _) => {
                        let comma = self.pos;
                        self.pos += 1;
                        after_comma = Some(comma);
                        if !is_array {
                            self.skip_ws();
                            if self.peek() == Some(b'}') {
                                return Err(trailing_comma(comma));
                            }
                            self.key(&mut stack)?;
                            after_comma = None;
                        }
                        break;
                    }
                    (Some(b']'), true) | (Some(b'}'), false) => {
                        self.pos += 1;
                        node = self.close(&mut stack);
                    }
                    (None, _) => return Err(self.eof(&stack)),
                    (Some(_), true) => {
                        return Err(self.expected(self.pos, "expected `,` or `]` after an array element"));
                    }
                    (Some(_), false) => {
                        return Err(self.expected(self.pos, "expected `,` or `}` after an object member"));
                    }
                }
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// The character at `at` (whole, for multi-byte ones), or an empty span at the end.
    fn char_span(&self, at: usize) -> Span {
        match self.text.get(at..).and_then(|rest| rest.chars().next()) {
            Some(c) => Span::new(at, at + c.len_utf8()),
            None => Span::empty(at.min(self.text.len())),
        }
    }

    fn expected(&self, at: usize, message: &str) -> SyntaxError {
        SyntaxError::new(self.char_span(at), message)
    }

    fn unexpected(&self, at: usize) -> SyntaxError {
        let Some(c) = self.text.get(at..).and_then(|rest| rest.chars().next()) else {
            return SyntaxError::new(Span::empty(self.text.len()), "unexpected end of input");
        };
        let message = if c.is_control() || c.is_whitespace() || c == '\u{feff}' {
            format!("unexpected character U+{:04X}", u32::from(c))
        } else if c == '\'' {
            "unexpected character `'`; JSON strings use double quotes".to_string()
        } else {
            format!("unexpected character `{c}`")
        };
        SyntaxError::new(self.char_span(at), message)
    }

    fn eof(&self, stack: &[Frame]) -> SyntaxError {
        let error = SyntaxError::new(Span::empty(self.text.len()), "unexpected end of input");
        match stack.last() {
            Some(frame) => error
                .with_related(Span::new(frame.open, frame.open + 1), format!("this {} is never closed", frame.noun())),
            None => error,
        }
    }

    /// Pushes a container whose bracket is at `self.pos` and steps over the bracket.
    fn open(&mut self, stack: &mut Vec<Frame>, kind: Kind) -> Result<()> {
        if stack.len() >= MAX_DEPTH {
            return Err(SyntaxError::new(
                Span::new(self.pos, self.pos + 1),
                format!("nesting deeper than {MAX_DEPTH} levels; stagelint stops reading here"),
            ));
        }
        stack.push(Frame { open: self.pos, kind });
        self.pos += 1;
        Ok(())
    }

    /// Pops the innermost container; its closing bracket was just consumed.
    fn close(&mut self, stack: &mut Vec<Frame>) -> Node {
        match stack.pop() {
            Some(frame) => frame.finish(self.pos),
            None => Node::new(Span::empty(self.pos), Value::Null),
        }
    }

    /// Reads `"key" :` inside the innermost object (whitespace before it already skipped).
    fn key(&mut self, stack: &mut [Frame]) -> Result<()> {
        match self.peek() {
            Some(b'"') => {}
            None => return Err(self.eof(stack)),
            Some(_) => {
                return Err(self.expected(self.pos, "expected a string key in double quotes"));
            }
        }
        let (name, span) = self.string()?;
        self.skip_ws();
        match self.peek() {
            Some(b':') => self.pos += 1,
            None => return Err(self.eof(stack)),
            Some(_) => return Err(self.expected(self.pos, "expected `:` after an object key")),
        }
        if let Some(frame) = stack.last_mut() {
            frame.set_key(Node::new(span, Value::String(name.into())), &mut self.errors);
        }
        Ok(())
    }

    /// Reads a string starting at the `"` under `self.pos`; the span includes both quotes.
    fn string(&mut self) -> Result<(String, Span)> {
        let open = self.pos;
        self.pos += 1;
        let mut out = String::new();
        let mut run = self.pos;
        loop {
            match self.peek() {
                None => {
                    return Err(SyntaxError::new(Span::new(open, open + 1), "unterminated string"));
                }
                Some(b'"') => {
                    out.push_str(&self.text[run..self.pos]);
                    self.pos += 1;
                    return Ok((out, Span::new(open, self.pos)));
                }
                Some(b'\\') => {
                    out.push_str(&self.text[run..self.pos]);
                    self.escape(open, &mut out)?;
                    run = self.pos;
                }
                Some(b'\n' | b'\r') => {
                    return Err(SyntaxError::new(
                        Span::new(open, open + 1),
                        "unterminated string (a JSON string cannot contain a line break)",
                    ));
                }
                Some(b) if b < 0x20 => {
                    return Err(SyntaxError::new(
                        Span::new(self.pos, self.pos + 1),
                        format!("control character U+{b:04X} must be escaped in a JSON string"),
                    ));
                }
                // Only ASCII bytes stop the run, so every slice above falls on a char boundary.
                Some(_) => self.pos += 1,
            }
        }
    }

    /// Reads one escape at the `\` under `self.pos`.
    fn escape(&mut self, open: usize, out: &mut String) -> Result<()> {
        let at = self.pos;
        let Some(c) = self.text.get(at + 1..).and_then(|rest| rest.chars().next()) else {
            return Err(SyntaxError::new(Span::new(open, open + 1), "unterminated string"));
        };
        let simple = match c {
            '"' => Some('"'),
            '\\' => Some('\\'),
            '/' => Some('/'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            _ => None,
        };
        if let Some(decoded) = simple {
            out.push(decoded);
            self.pos += 2;
            return Ok(());
        }
        if c != 'u' {
            let shown = if c.is_control() { format!("U+{:04X}", u32::from(c)) } else { c.to_string() };
            return Err(SyntaxError::new(Span::new(at, at + 1 + c.len_utf8()), format!("invalid escape `\\{shown}`")));
        }
        let high = self.hex4(at)?;
        self.pos = at + 6;
        if (0xD800..0xDC00).contains(&high) && self.bytes.get(self.pos..self.pos + 2) == Some(b"\\u") {
            // A following low surrogate completes the pair, and anything else leaves `high` alone.
            let low = self.hex4(self.pos)?;
            if (0xDC00..0xE000).contains(&low) {
                self.pos += 6;
                let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                return Ok(());
            }
        }
        out.push(char::from_u32(high).unwrap_or('\u{fffd}'));
        Ok(())
    }

    /// The four hex digits after the `\u` at `at`.
    fn hex4(&self, at: usize) -> Result<u32> {
        let mut code = 0;
        for i in 0..4 {
            let digit = self.bytes.get(at + 2 + i).and_then(|&b| char::from(b).to_digit(16));
            match digit {
                Some(d) => code = code * 16 + d,
                None => {
                    let end = self.char_span(at + 2 + i).end;
                    let shown = self.text.get(at..end).unwrap_or("\\u");
                    return Err(SyntaxError::new(
                        Span::new(at, end),
                        format!("invalid escape `{shown}`; `\\u` takes four hex digits"),
                    ));
                }
            }
        }
        Ok(code)
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Node> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let int_start = self.pos;
        match self.digits() {
            0 => return Err(self.expected(self.pos, "expected a digit after `-`")),
            n if n > 1 && self.bytes.get(int_start) == Some(&b'0') => {
                return Err(SyntaxError::new(
                    Span::new(start, self.pos),
                    "leading zeros are not allowed in JSON numbers",
                ));
            }
            _ => {}
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            integer = false;
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.expected(self.pos, "expected a digit after the decimal point"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            integer = false;
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.expected(self.pos, "expected a digit in the exponent"));
            }
        }
        let span = Span::new(start, self.pos);
        let raw = &self.text[start..self.pos];
        let int = if integer { raw.parse::<i64>().ok() } else { None };
        let value = match int {
            Some(n) => Value::Int(n),
            None => match raw.parse::<f64>() {
                Ok(f) => Value::Float(f),
                Err(_) => {
                    return Err(SyntaxError::new(span, format!("invalid number `{}`", crate::util::shorten(raw, 40))));
                }
            },
        };
        Ok(Node::new(span, value))
    }

    fn literal(&mut self) -> Result<Node> {
        let start = self.pos;
        while matches!(self.peek(), Some(b) if b.is_ascii_alphanumeric() || b == b'_') {
            self.pos += 1;
        }
        let span = Span::new(start, self.pos);
        let value = match &self.text[start..self.pos] {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "null" => Value::Null,
            word => {
                return Err(SyntaxError::new(
                    span,
                    format!(
                        "invalid literal `{}`; expected `true`, `false`, `null`, a number or a string",
                        crate::util::shorten(word, 40)
                    ),
                ));
            }
        };
        Ok(Node::new(span, value))
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use crate::source::json::*;

    fn root(text: &str) -> Node {
        let parsed = parse(text);
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        parsed.root.expect("a root")
    }

    fn error(text: &str) -> SyntaxError {
        let parsed = parse(text);
        assert!(parsed.root.is_none(), "{text:?} parsed");
        assert_eq!(parsed.errors.len(), 1);
        parsed.errors.into_iter().next().expect("one error")
    }

    fn slice(text: &str, span: Span) -> &str {
        &text[span.start..span.end]
    }

    #[test]
    fn spans_on_every_key_and_value_in_bytes() {
        let text = "{\"é\": \"ü\", \"😀\": [1, {\"k\": null}], \"t\": true}";
        let node = root(text);
        assert_eq!(node.span, Span::new(0, text.len()));
        let map = node.as_map().expect("map");
        assert_eq!(slice(text, map[0].key.span), "\"é\"");
        assert_eq!(map[0].key.as_str(), Some("é"));
        assert_eq!(slice(text, map[0].value.span), "\"ü\"");
        assert_eq!(slice(text, map[1].key.span), "\"😀\"");
        assert_eq!(slice(text, map[1].value.span), "[1, {\"k\": null}]");
        assert_eq!(slice(text, node.pointer("/😀/1/k").expect("k").span), "null");
        assert_eq!(slice(text, node.pointer("/😀/1").expect("obj").span), "{\"k\": null}");
        assert_eq!(node.get("t").map(|n| n.value.clone()), Some(Value::Bool(true)));
    }

    #[test]
    fn bom_is_skipped_but_counted_and_crlf_is_whitespace() {
        let text = "\u{feff}{\r\n  \"a\": 1\r\n}\r\n";
        let node = root(text);
        assert_eq!(node.span, Span::new(3, text.len() - 2));
        assert_eq!(slice(text, node.entry("a").expect("a").key.span), "\"a\"");
    }

    #[test]
    fn escapes() {
        let text = r#"["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u20AC", "\ud83d\ude00", "\ud800x", "\udc00", "\ud800\u0041"]"#;
        let node = root(text);
        let strings: Vec<&str> = node.as_seq().expect("seq").iter().filter_map(Node::as_str).collect();
        assert_eq!(strings, ["a\"b\\c/d\u{8}\u{c}\n\r\t", "é€", "😀", "\u{fffd}x", "\u{fffd}", "\u{fffd}A"]);
        let e = error(r#"{"a": "x\qy"}"#);
        assert_eq!((e.message.as_str(), e.span), ("invalid escape `\\q`", Span::new(8, 10)));
        let e = error(r#""\é""#);
        assert_eq!((e.message.as_str(), e.span), ("invalid escape `\\é`", Span::new(1, 4)));
        let e = error(r#""\u12G4""#);
        assert_eq!(e.message, "invalid escape `\\u12G`; `\\u` takes four hex digits");
        assert_eq!(e.span, Span::new(1, 6));
    }

    #[test]
    fn numbers() {
        let text = "[0, -0, 12, -34, 9223372036854775807, -9223372036854775808, 9223372036854775808, 1.5, -2e3, 1E+2, 3e-1, 1e400]";
        let node = root(text);
        let values: Vec<Value> = node.as_seq().expect("seq").iter().map(|n| n.value.clone()).collect();
        assert_eq!(
            values,
            [
                Value::Int(0),
                Value::Int(0),
                Value::Int(12),
                Value::Int(-34),
                Value::Int(i64::MAX),
                Value::Int(i64::MIN),
                Value::Float(9_223_372_036_854_775_808.0),
                Value::Float(1.5),
                Value::Float(-2000.0),
                Value::Float(100.0),
                Value::Float(0.3),
                Value::Float(f64::INFINITY),
            ]
        );
        let e = error("[01]");
        assert_eq!((e.message.as_str(), e.span), ("leading zeros are not allowed in JSON numbers", Span::new(1, 3)));
        let e = error("-007");
        assert_eq!(e.span, Span::new(0, 4));
        assert_eq!(error("[-]").message, "expected a digit after `-`");
        assert_eq!(error("1.").message, "expected a digit after the decimal point");
        let e = error("[1e+]");
        assert_eq!((e.message.as_str(), e.span), ("expected a digit in the exponent", Span::new(4, 5)));
        assert_eq!(error(".5").message, "unexpected character `.`");
        assert_eq!(error("+1").message, "unexpected character `+`");
    }

    #[test]
    fn syntax_errors_have_exact_positions() {
        let cases: &[(&str, &str, Span)] = &[
            ("{\"a\": 1 \"b\": 2}", "expected `,` or `}` after an object member", Span::new(8, 9)),
            ("[1 2]", "expected `,` or `]` after an array element", Span::new(3, 4)),
            ("{\"a\": \"x", "unterminated string", Span::new(6, 7)),
            ("[1, 2,]", "trailing comma is not allowed in JSON", Span::new(5, 6)),
            ("{\"a\": 1,\n}", "trailing comma is not allowed in JSON", Span::new(7, 8)),
            ("", "unexpected end of input", Span::empty(0)),
            ("[1, ", "unexpected end of input", Span::empty(4)),
            ("{\"a\" 1}", "expected `:` after an object key", Span::new(5, 6)),
            ("{a: 1}", "expected a string key in double quotes", Span::new(1, 2)),
            ("[x]", "invalid literal `x`; expected `true`, `false`, `null`, a number or a string", Span::new(1, 2)),
            (
                "[True]",
                "invalid literal `True`; expected `true`, `false`, `null`, a number or a string",
                Span::new(1, 5),
            ),
            ("[é]", "unexpected character `é`", Span::new(1, 3)),
            ("['a']", "unexpected character `'`; JSON strings use double quotes", Span::new(1, 2)),
            ("{} x", "unexpected character `x` after the JSON value", Span::new(3, 4)),
            ("[1]]", "unexpected character `]` after the JSON value", Span::new(3, 4)),
            ("\"a\u{1}b\"", "control character U+0001 must be escaped in a JSON string", Span::new(2, 3)),
            ("\"ab\ncd\"", "unterminated string (a JSON string cannot contain a line break)", Span::new(0, 1)),
            ("[1,,2]", "unexpected character `,`", Span::new(3, 4)),
            ("\u{feff}\u{feff}1", "unexpected character U+FEFF", Span::new(3, 6)),
        ];
        for (text, message, span) in cases {
            let e = error(text);
            assert_eq!((e.message.as_str(), e.span), (*message, *span), "{text:?}");
        }
        let e = error("{\"a\": [1, 2");
        assert_eq!(e.related, Some((Span::new(6, 7), "this array is never closed".to_string())));
    }

    #[test]
    fn duplicate_keys_keep_the_last_value_in_the_first_position() {
        let text = r#"{"a": 1, "b": 2, "a": 3}"#;
        let parsed = parse(text);
        let node = parsed.root.expect("root");
        let map = node.as_map().expect("map");
        assert_eq!(map.len(), 2);
        assert_eq!(map[0].key.span, Span::new(1, 4));
        assert_eq!(map[0].value.as_i64(), Some(3));
        assert_eq!(slice(text, map[0].value.span), "3");
        assert_eq!(parsed.errors.len(), 1);
        let e = &parsed.errors[0];
        assert_eq!(e.message, "duplicate key `a`; the last one is used");
        assert_eq!(e.span, Span::new(17, 20));
        assert_eq!(e.related, Some((Span::new(1, 4), "first defined here".to_string())));
        // Keys compare after unescaping.
        assert_eq!(parse(r#"{"é": 1, "\u00e9": 2}"#).errors.len(), 1);
    }

    #[test]
    fn ten_thousand_levels_stop_at_the_limit() {
        let started = Instant::now();
        for text in ["[".repeat(10_000), "{\"a\":".repeat(10_000)] {
            let e = error(&text);
            assert_eq!(e.message, "nesting deeper than 128 levels; stagelint stops reading here");
            assert_eq!(&text[e.span.start..e.span.end], &text[..1]);
        }
        let ok = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert_eq!(root(&ok).span, Span::new(0, 256));
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn long_words_are_shortened_in_messages() {
        let text = format!("[{}]", "é".repeat(50));
        assert_eq!(error(&text).message, "unexpected character `é`");
        let text = format!("[{}]", "x".repeat(1000));
        let e = error(&text);
        assert_eq!(e.span, Span::new(1, 1001));
        assert!(e.message.starts_with(&format!("invalid literal `{}…`;", "x".repeat(40))));
    }

    #[test]
    fn scalars_at_the_top_level() {
        assert_eq!(root(" \"x\" ").span, Span::new(1, 4));
        assert_eq!(root("null").value, Value::Null);
        assert_eq!(root("[]").value, Value::Seq(Vec::new()));
        assert_eq!(root("{ }").value, Value::Map(Vec::new()));
    }

    mod prop {
        use crate::source::json::parse;
        use proptest::prelude::*;

        const SEED: &str = "\u{feff}{\"name\": \"wörkflow 😀\", \"steps\": [{\"id\": \"a\", \"n\": -1.5e3}, {\"id\": \"b\\u00e9\\n\"}],\r\n \"ok\": true, \"none\": null, \"big\": 123456789012345678901}";

        fn check(text: &str) {
            let parsed = parse(text);
            assert!(parsed.root.is_some() || parsed.errors.len() == 1);
            crate::source::assert_spans_inside(text, &parsed);
        }

        fn interesting() -> impl Strategy<Value = char> {
            prop_oneof![
                prop::sample::select(vec![
                    '"', '\\', 'u', '{', '}', '[', ']', ',', ':', '-', '0', '9', 'e', '.', '\n', '\u{1}', 'é', '😀',
                    '\u{feff}'
                ]),
                any::<char>(),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]
            #[test]
            fn never_panics_and_spans_stay_in_bounds(
                random in "\\PC{0,64}",
                edits in prop::collection::vec((any::<u8>(), any::<usize>(), interesting()), 0..8),
            ) {
                check(&random);
                check(&crate::source::mutate(SEED, &edits));
            }
        }
    }
}
