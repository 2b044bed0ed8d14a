//! Where something is in a workflow's text, read from the text alone, so it works in the
//! half-typed code oxc gives no AST for (`ctx.stage({ name: "a", headl` at the end of a file).
//! One scan knows strings, template literals with their `${}`, comments, regular expressions
//! and brackets; it hands each token over with the open brackets around it, and a [`Spot`] says
//! what they mean: the call whose argument holds the token (`ctx.stage`, argument 0), the keys
//! from that argument down, and whether the token is a key, a value, an array item or an argument.

use crate::source::Span;

/// A token of code. Comments and whitespace are skipped. A bracket comes with its own frame
/// open, both the opening and the closing one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Token {
    /// A name or keyword.
    Ident(Span),
    /// A string literal or template; `content` is inside the quotes. `dynamic` templates have
    /// `${…}` substitutions.
    Str { span: Span, content: Span, dynamic: bool },
    /// A number or a regular expression.
    Literal(Span),
    /// One character of punctuation (`?.` is given as `.`).
    Punct(char, Span),
}

impl Token {
    pub(crate) fn span(&self) -> Span {
        match self {
            Token::Ident(span) | Token::Literal(span) | Token::Punct(_, span) => *span,
            Token::Str { span, .. } => *span,
        }
    }
}

/// What an open bracket is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `{` of an object literal.
    Object,
    /// `{` of a block or function body.
    Block,
    /// `[` of an array literal.
    Array,
    /// `(` of a call.
    Call,
    /// Any other `(`, or `[` of an index.
    Group,
    /// `${` in a template literal.
    Subst,
}

/// An open bracket and what is known inside it so far.
#[derive(Clone, Debug)]
pub(crate) struct Frame {
    pub kind: Kind,
    /// The opening bracket.
    pub open: usize,
    /// A call's callee as a path of names (`ctx.stage`, `.run` after a call), and its span.
    pub callee: Option<(String, Span)>,
    /// The current argument or element.
    pub index: usize,
    /// A call's or array's: where each argument or element starts.
    pub starts: Vec<usize>,
    /// An object's: whether the next token is a key, and the key of the current entry.
    pub expect_key: bool,
    pub key: Option<String>,
    /// An object's keys so far.
    pub keys: Vec<String>,
    /// An array's: the current and the previous element, when each is one string.
    pub item: Option<String>,
    pub previous: Option<String>,
    /// An array's: whether no token of the current element was seen yet.
    fresh: bool,
    /// Where an object or array sits in the one around it: the key, or `[]` for an array item.
    pub slot: Option<String>,
}

/// Where the scan ended (the cursor): in code, inside a string, or in a comment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inside {
    Code,
    /// A string or template literal whose text starts at `content`.
    Str {
        content: usize,
    },
    Comment,
}

/// What a token or the cursor is to the call around it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Spot {
    /// The call whose argument holds the spot through object and array literals only.
    pub call: Option<Call>,
    /// The keys from that argument down to the spot's container; `[]` for an array item.
    pub path: Vec<String>,
    pub at: At,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Call {
    pub callee: String,
    pub span: Span,
    /// The argument index.
    pub arg: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum At {
    /// Where an object's key goes.
    Key,
    /// The value of an object's `key`.
    Value(String),
    /// An array element; the previous element when it is one string (`"--agent", |`).
    Item { previous: Option<String> },
    /// A call's argument itself.
    Argument,
    /// Anywhere else (a block, a group, a template substitution).
    Other,
}

/// The cursor: the spot, the text a completion replaces, and the open brackets around it.
#[derive(Clone, Debug)]
pub(crate) struct Located {
    pub spot: Spot,
    /// The word (in code) or the string's text (in a literal) from its start to the cursor.
    pub partial: Span,
    pub inside: Inside,
    pub frames: Vec<Frame>,
}

/// Where `offset` is in `text`; `None` in a comment or off a character boundary.
pub(crate) fn locate(text: &str, offset: usize) -> Option<Located> {
    let text = text.get(..offset)?;
    let mut scan = Scanner::new(text);
    scan.run(&mut |_, _| {});
    let inside = scan.inside;
    let partial = match inside {
        Inside::Comment => return None,
        Inside::Str { content } => Span::new(content, offset),
        Inside::Code => {
            let word: usize = text.chars().rev().take_while(|c| is_word(*c)).map(char::len_utf8).sum();
            Span::new(offset - word, offset)
        }
    };
    let spot = spot(&scan.frames);
    Some(Located { spot, partial, inside, frames: scan.frames })
}

/// Calls `each` with every token of `text` and the brackets open around it.
pub(crate) fn tokens(text: &str, each: &mut dyn FnMut(&Token, &[Frame])) {
    Scanner::new(text).run(each);
}

/// What the brackets `frames` (outermost first) make of a place inside the innermost.
pub(crate) fn spot(frames: &[Frame]) -> Spot {
    let at = match frames.last() {
        Some(f) if f.kind == Kind::Object => match (&f.key, f.expect_key) {
            (Some(key), false) => At::Value(key.clone()),
            _ => At::Key,
        },
        Some(f) if f.kind == Kind::Array => At::Item { previous: f.previous.clone() },
        Some(f) if f.kind == Kind::Call => At::Argument,
        _ => At::Other,
    };
    let mut path = Vec::new();
    let mut call = None;
    let as_call = |frame: &Frame| {
        let (callee, span) = frame.callee.clone()?;
        Some(Call { callee, span, arg: frame.index })
    };
    // Paths deeper than this are no option object's; the bound keeps hostile nesting linear.
    for (n, frame) in frames.iter().rev().enumerate().take(MAX_PATH) {
        match frame.kind {
            Kind::Call => {
                call = as_call(frame);
                break;
            }
            Kind::Object | Kind::Array => match &frame.slot {
                Some(slot) => path.push(slot.clone()),
                None => {
                    // Directly in a call's argument, or in something that is not a call.
                    let parent = frames.len().checked_sub(n + 2).and_then(|i| frames.get(i));
                    call = parent.filter(|p| p.kind == Kind::Call).and_then(as_call);
                    break;
                }
            },
            _ => break,
        }
    }
    path.reverse();
    Spot { call, path, at }
}

const MAX_PATH: usize = 32;

/// A character of a name (`$` and `_` included; any non-ASCII character too).
pub(crate) fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

const CALL_KEYWORDS: &[&str] = &[
    "if",
    "while",
    "for",
    "switch",
    "catch",
    "function",
    "return",
    "async",
    "await",
    "typeof",
    "of",
    "in",
    "yield",
    "do",
    "else",
    "case",
    "void",
    "delete",
    "throw",
    "new",
    "instanceof",
];

/// After these the next `/` starts a regular expression, and `{` an object.
const EXPRESSION_KEYWORDS: &[&str] = &["return", "yield", "await", "typeof", "case", "void", "throw", "in", "of"];

struct Scanner<'t> {
    text: &'t str,
    bytes: &'t [u8],
    at: usize,
    frames: Vec<Frame>,
    inside: Inside,
    /// The last token, to tell a call from a group and an object from a block.
    last: Option<Token>,
    /// Whether the last two punctuation characters were `=>`.
    arrow: bool,
}

impl<'t> Scanner<'t> {
    fn new(text: &'t str) -> Scanner<'t> {
        Scanner {
            text,
            bytes: text.as_bytes(),
            at: 0,
            frames: Vec::new(),
            inside: Inside::Code,
            last: None,
            arrow: false,
        }
    }

    fn run(&mut self, each: &mut dyn FnMut(&Token, &[Frame])) {
        while self.at < self.bytes.len() {
            let start = self.at;
            let byte = self.bytes[start];
            match byte {
                b' ' | b'\t' | b'\n' | b'\r' => self.at += 1,
                b'/' if self.bytes.get(start + 1) == Some(&b'/') => {
                    self.at = self.find_from(start, b"\n").unwrap_or(self.bytes.len());
                    if self.at == self.bytes.len() {
                        self.inside = Inside::Comment;
                    }
                }
                b'/' if self.bytes.get(start + 1) == Some(&b'*') => match self.find_from(start + 2, b"*/") {
                    Some(end) => self.at = end + 2,
                    None => {
                        self.at = self.bytes.len();
                        self.inside = Inside::Comment;
                    }
                },
                b'/' if self.value_may_start() => {
                    let end = self.regex_end(start + 1);
                    self.emit(Token::Literal(Span::new(start, end)), each);
                }
                b'"' | b'\'' => {
                    let (end, closed) = self.string_end(start + 1, byte);
                    let content = Span::new(start + 1, if closed { end - 1 } else { end });
                    if !closed && end == self.bytes.len() {
                        self.inside = Inside::Str { content: start + 1 };
                    }
                    self.emit(Token::Str { span: Span::new(start, end), content, dynamic: false }, each);
                }
                b'`' => self.template(start, start + 1, false, each),
                b'}' if self.frames.last().is_some_and(|f| f.kind == Kind::Subst) => {
                    // A substitution's frame opens at its template's backtick.
                    let literal_start = self.frames.pop().map_or(start, |f| f.open);
                    self.template(literal_start, start + 1, true, each);
                }
                b'0'..=b'9' => {
                    let end = self.word_end(start);
                    self.emit(Token::Literal(Span::new(start, end)), each);
                }
                b'(' | b'[' | b'{' => self.open(start, byte, each),
                b')' | b']' | b'}' => self.close(start, byte, each),
                b',' => {
                    if let Some(frame) = self.frames.last_mut() {
                        match frame.kind {
                            Kind::Object => {
                                frame.expect_key = true;
                                frame.key = None;
                            }
                            Kind::Array => {
                                frame.previous = frame.item.take();
                                frame.fresh = true;
                                frame.index += 1;
                                frame.starts.push(start + 1);
                            }
                            Kind::Call => {
                                frame.index += 1;
                                frame.starts.push(start + 1);
                            }
                            _ => {}
                        }
                    }
                    self.emit(Token::Punct(',', Span::new(start, start + 1)), each);
                }
                b':' => {
                    let key = self.last_text();
                    if let Some(frame) = self.frames.last_mut()
                        && frame.kind == Kind::Object
                        && frame.expect_key
                    {
                        frame.expect_key = false;
                        if let Some(key) = key.clone() {
                            frame.keys.push(key);
                        }
                        frame.key = key;
                    }
                    self.emit(Token::Punct(':', Span::new(start, start + 1)), each);
                }
                b'?' if self.bytes.get(start + 1) == Some(&b'.')
                    && !self.bytes.get(start + 2).is_some_and(u8::is_ascii_digit) =>
                {
                    self.at = start + 2;
                    self.emit(Token::Punct('.', Span::new(start, start + 2)), each);
                }
                _ if byte.is_ascii_alphabetic() || byte == b'_' || byte == b'$' || byte >= 0x80 => {
                    let end = self.word_end(start);
                    self.emit(Token::Ident(Span::new(start, end)), each);
                }
                _ => {
                    let len = self.text[start..].chars().next().map_or(1, char::len_utf8);
                    self.at = start + len;
                    let arrow = byte == b'>' && matches!(self.last, Some(Token::Punct('=', _)));
                    self.emit(Token::Punct(byte as char, Span::new(start, start + len)), each);
                    self.arrow = arrow;
                }
            }
        }
    }
}

impl Scanner<'_> {
    fn emit(&mut self, token: Token, each: &mut dyn FnMut(&Token, &[Frame])) {
        self.note_item(&token);
        self.deliver(token, each);
    }

    /// An array element that is one string literal is remembered (`"--agent", "planner"`).
    fn note_item(&mut self, token: &Token) {
        if let Some(frame) = self.frames.last_mut()
            && frame.kind == Kind::Array
        {
            let fresh = std::mem::replace(&mut frame.fresh, false);
            frame.item = match token {
                Token::Str { content, dynamic: false, .. } if fresh => {
                    Some(self.text[content.start..content.end].to_string())
                }
                _ => None,
            };
        }
    }

    fn deliver(&mut self, token: Token, each: &mut dyn FnMut(&Token, &[Frame])) {
        each(&token, &self.frames);
        self.at = self.at.max(token.span().end);
        self.last = Some(token);
        self.arrow = false;
    }

    /// The text of the last token when it is a name or a string.
    fn last_text(&self) -> Option<String> {
        match &self.last {
            Some(Token::Ident(span)) => Some(self.text[span.start..span.end].to_string()),
            Some(Token::Str { content, dynamic: false, .. }) => Some(self.text[content.start..content.end].to_string()),
            _ => None,
        }
    }

    fn last_ident(&self) -> Option<&str> {
        match &self.last {
            Some(Token::Ident(span)) => Some(&self.text[span.start..span.end]),
            _ => None,
        }
    }

    /// Whether a value can start here: after an operator, an opening bracket, a comma or a
    /// keyword such as `return` (so `/` starts a regular expression and `[` an array).
    fn value_may_start(&self) -> bool {
        match &self.last {
            None => true,
            Some(Token::Punct(c, _)) => !matches!(c, ')' | ']' | '}'),
            Some(Token::Ident(_)) => self.last_ident().is_some_and(|w| EXPRESSION_KEYWORDS.contains(&w)),
            _ => false,
        }
    }

    fn open(&mut self, start: usize, byte: u8, each: &mut dyn FnMut(&Token, &[Frame])) {
        let mut kind = match byte {
            b'(' => match &self.last {
                Some(Token::Ident(_)) => match self.last_ident() {
                    Some(word) if CALL_KEYWORDS.contains(&word) => Kind::Group,
                    _ => Kind::Call,
                },
                Some(Token::Punct(')' | ']' | '>', _)) => Kind::Call,
                _ => Kind::Group,
            },
            b'[' if self.value_may_start() => Kind::Array,
            b'{' if !self.arrow
                && matches!(&self.last, Some(Token::Punct('(' | ',' | '=' | ':' | '[' | '?' | '!' | '&' | '|', _)))
                || self.last_ident().is_some_and(|w| EXPRESSION_KEYWORDS.contains(&w)) =>
            {
                Kind::Object
            }
            b'{' => Kind::Block,
            _ => Kind::Group,
        };
        let callee = if kind == Kind::Call { callee_before(self.text, start) } else { None };
        if kind == Kind::Call && callee.is_none() {
            kind = Kind::Group;
        }
        let slot = match (kind, self.frames.last()) {
            (Kind::Object | Kind::Array, Some(parent)) => match parent.kind {
                Kind::Object if !parent.expect_key => parent.key.clone(),
                Kind::Array => Some("[]".to_string()),
                _ => None,
            },
            _ => None,
        };
        let token = Token::Punct(byte as char, Span::new(start, start + 1));
        self.note_item(&token);
        self.frames.push(Frame {
            kind,
            open: start,
            callee,
            index: 0,
            starts: vec![start + 1],
            expect_key: kind == Kind::Object,
            key: None,
            keys: Vec::new(),
            item: None,
            previous: None,
            fresh: true,
            slot,
        });
        // The opening token is seen with its bracket open, as the closing one is.
        self.deliver(token, each);
    }

    /// Closes the innermost bracket `byte` matches, and those left open inside it; a close
    /// that matches none is passed over.
    fn close(&mut self, start: usize, byte: u8, each: &mut dyn FnMut(&Token, &[Frame])) {
        let matches = |kind: Kind| match byte {
            b')' => matches!(kind, Kind::Call | Kind::Group),
            b']' => matches!(kind, Kind::Array | Kind::Group),
            _ => matches!(kind, Kind::Object | Kind::Block),
        };
        let token = Token::Punct(byte as char, Span::new(start, start + 1));
        // Not past a template's `${` (its text follows), nor further than a few brackets, which
        // keeps hostile nesting linear.
        let mut open = self.frames.iter().rev().take(MAX_PATH).take_while(|f| f.kind != Kind::Subst);
        let found = open.position(|f| matches(f.kind)).map(|n| self.frames.len() - 1 - n);
        match found {
            Some(at) => {
                // The closing token is seen with its bracket still open, so readers learn where it ends.
                self.frames.truncate(at + 1);
                self.emit(token, each);
                self.frames.pop();
            }
            None => self.emit(token, each),
        }
    }

    /// Reads a template literal's text from `from` (after its backtick, or after a `}` closing
    /// a substitution) to its end or its next `${`.
    fn template(&mut self, literal_start: usize, from: usize, resumed: bool, each: &mut dyn FnMut(&Token, &[Frame])) {
        let mut i = from;
        while i < self.bytes.len() {
            match self.bytes[i] {
                b'\\' => i += 2,
                b'`' => {
                    let span = Span::new(literal_start, i + 1);
                    let content = Span::new(literal_start + 1, i);
                    self.at = i + 1;
                    self.emit(Token::Str { span, content, dynamic: resumed }, each);
                    return;
                }
                b'$' if self.bytes.get(i + 1) == Some(&b'{') => {
                    self.at = i + 2;
                    self.last = Some(Token::Punct('{', Span::new(i + 1, i + 2)));
                    self.frames.push(Frame {
                        kind: Kind::Subst,
                        open: literal_start,
                        callee: None,
                        index: 0,
                        starts: vec![i + 2],
                        expect_key: false,
                        key: None,
                        keys: Vec::new(),
                        item: None,
                        previous: None,
                        fresh: false,
                        slot: None,
                    });
                    return;
                }
                _ => i += 1,
            }
        }
        let end = self.bytes.len();
        self.inside = Inside::Str { content: from };
        self.at = end;
        let content = Span::new((literal_start + 1).min(end), end);
        self.emit(Token::Str { span: Span::new(literal_start, end), content, dynamic: true }, each);
    }

    fn find_from(&self, from: usize, needle: &[u8]) -> Option<usize> {
        let rest = self.bytes.get(from..)?;
        rest.windows(needle.len()).position(|w| w == needle).map(|p| from + p)
    }

    /// The end of a name, or of a number (which may hold `.`), starting at `start`.
    fn word_end(&self, start: usize) -> usize {
        let number = self.bytes[start].is_ascii_digit();
        let len: usize =
            self.text[start..].chars().take_while(|c| is_word(*c) || (number && *c == '.')).map(char::len_utf8).sum();
        // A character that is no part of a name (`®`) is a token of its own.
        let one = self.text[start..].chars().next().map_or(1, char::len_utf8);
        start + if len == 0 { one } else { len }
    }

    /// The end of a string's text: after its closing quote (`true`), or at the line's end or
    /// the text's end when it is not closed.
    fn string_end(&self, from: usize, quote: u8) -> (usize, bool) {
        let mut i = from;
        while i < self.bytes.len() {
            match self.bytes[i] {
                b'\\' => i += 2,
                b'\n' => return (i, false),
                b if b == quote => return (i + 1, true),
                _ => i += 1,
            }
        }
        (self.bytes.len(), false)
    }

    /// The end of a regular expression whose body starts at `from`, flags included.
    fn regex_end(&self, from: usize) -> usize {
        let mut i = from;
        let mut class = false;
        while i < self.bytes.len() {
            match self.bytes[i] {
                b'\\' => i += 2,
                b'\n' => return i,
                b'[' => {
                    class = true;
                    i += 1;
                }
                b']' => {
                    class = false;
                    i += 1;
                }
                b'/' if !class => {
                    i += 1;
                    return i + self.text[i..].chars().take_while(|c| c.is_ascii_alphabetic()).count();
                }
                _ => i += 1,
            }
        }
        self.bytes.len()
    }
}

/// The callee of a call whose `(` is at `open`: the dotted names before it, after any type
/// arguments (`.for<"claude">`). A path after a call or index starts with `.` (`.run`).
fn callee_before(text: &str, open: usize) -> Option<(String, Span)> {
    let bytes = text.as_bytes();
    let skip_space = |mut i: usize| {
        while i > 0 && bytes[i - 1].is_ascii_whitespace() {
            i -= 1;
        }
        i
    };
    let mut end = skip_space(open);
    if end > 0 && bytes[end - 1] == b'>' {
        // Type arguments: back to the matching `<`, within one short stretch.
        let mut depth = 0usize;
        let mut i = end;
        let floor = end.saturating_sub(200);
        loop {
            if i <= floor {
                return None;
            }
            i -= 1;
            match bytes[i] {
                b'>' => depth += 1,
                b'<' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        end = skip_space(i);
    }
    let mut parts: Vec<&str> = Vec::new();
    let mut i = end;
    let mut path_start;
    let mut leading_dot = false;
    loop {
        let len: usize = text[..i].chars().rev().take_while(|c| is_word(*c)).map(char::len_utf8).sum();
        if len == 0 || text[i - len..].starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        parts.push(&text[i - len..i]);
        path_start = i - len;
        i = skip_space(i - len);
        let dot = match i {
            _ if i >= 2 && bytes[i - 1] == b'.' && bytes[i - 2] == b'?' => 2,
            _ if i >= 1 && bytes[i - 1] == b'.' => 1,
            _ => 0,
        };
        if dot == 0 {
            break;
        }
        i = skip_space(i - dot);
        if i > 0 && matches!(bytes[i - 1], b')' | b']') {
            leading_dot = true;
            break;
        }
    }
    parts.reverse();
    let path = format!("{}{}", if leading_dot { "." } else { "" }, parts.join("."));
    Some((path, Span::new(path_start, end)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spot at `$0` in `text`, with the partial text.
    fn at(text: &str) -> (Spot, String) {
        let offset = text.find("$0").expect("cursor");
        let text = text.replacen("$0", "", 1);
        let located = locate(&text, offset).expect("not in a comment");
        (located.spot, text[located.partial.start..located.partial.end].to_string())
    }

    fn call(callee: &str, arg: usize) -> Option<String> {
        Some(format!("{callee}#{arg}"))
    }

    fn shown(spot: &Spot) -> Option<String> {
        spot.call.as_ref().map(|c| format!("{}#{}", c.callee, c.arg))
    }

    #[test]
    fn a_half_typed_stage_option_key_at_the_end_of_the_file() {
        let (spot, partial) = at("await ctx.stage({ name: \"a\", headl$0");
        assert_eq!(
            (shown(&spot), spot.path.clone(), spot.at, partial.as_str()),
            (call("ctx.stage", 0), vec![], At::Key, "headl")
        );
    }

    #[test]
    fn values_nested_keys_and_array_items() {
        let (spot, partial) = at("s.session.query(p, { thinking: { type: \"ad$0");
        assert_eq!(shown(&spot), call("s.session.query", 1));
        assert_eq!(
            (spot.path, spot.at, partial.as_str()),
            (vec!["thinking".to_string()], At::Value("type".into()), "ad")
        );
        let (spot, _) = at("defineWorkflow({ name: \"x\", inputs: [{ name: \"a\", type: \"text\" }, { $0");
        assert_eq!(
            (shown(&spot), spot.path, spot.at),
            (call("defineWorkflow", 0), vec!["inputs".into(), "[]".into()], At::Key)
        );
        let (spot, partial) =
            at("ctx.stage({ name: `p-${i}` }, { chatFlags: [\"--agent\", \"pl$0\"] }, {}, async (s) => {})");
        assert_eq!(shown(&spot), call("ctx.stage", 1));
        assert_eq!((spot.at, partial.as_str()), (At::Item { previous: Some("--agent".into()) }, "pl"));
    }

    #[test]
    fn calls_through_chains_type_arguments_and_callbacks() {
        let (spot, partial) =
            at("defineWorkflow({}).for<\"claude\">().run(async (ctx) => {\n  await ctx.transcript(\"pla$0");
        assert_eq!((shown(&spot), spot.at, partial.as_str()), (call("ctx.transcript", 0), At::Argument, "pla"));
        let (spot, _) = at("defineWorkflow({ name: \"x\" })\n  .for<\"claude\">($0");
        assert_eq!(shown(&spot), call(".for", 0));
        // A function body is not an option object, even as a call's argument.
        let (spot, _) = at("ctx.stage({ name: \"a\" }, {}, {}, async (s) => { const o = { $0");
        assert_eq!((shown(&spot), spot.at), (None, At::Key));
    }

    #[test]
    fn strings_templates_comments_and_regexes_hide_brackets() {
        let (spot, _) = at("ctx.stage({ name: \"({[\", description: `a ${f(\"}\")} ]`, // ( {\n /* [ */ he$0");
        assert_eq!((shown(&spot), spot.at), (call("ctx.stage", 0), At::Key));
        let (spot, _) = at("const r = /[(]/g; ctx.stage({ he$0");
        assert_eq!((shown(&spot), spot.at), (call("ctx.stage", 0), At::Key));
        assert!(locate("ctx.stage({ // he", 17).is_none(), "in a comment");
        let (spot, partial) = at("ctx.stage({ name: `plan-${x}-$0");
        assert_eq!((spot.at, partial.as_str()), (At::Value("name".into()), "-"));
    }

    #[test]
    fn tokens_come_with_their_spot_and_closing_brackets_with_their_frame() {
        let text = "ctx.stage({ name: \"plan\" }, {}, {}, async (s) => { await s.transcript(\"plan\"); });";
        let mut seen = Vec::new();
        tokens(text, &mut |token, frames| match token {
            Token::Str { content, .. } => {
                let spot = spot(frames);
                seen.push(format!(
                    "{}:{:?}:{}",
                    &text[content.start..content.end],
                    spot.at,
                    shown(&spot).unwrap_or_default()
                ));
            }
            Token::Punct(')', at)
                if frames.last().is_some_and(|f| f.callee.as_ref().is_some_and(|c| c.0 == "ctx.stage")) =>
            {
                seen.push(format!("close@{}", at.start));
            }
            _ => {}
        });
        assert_eq!(
            seen,
            [
                "plan:Value(\"name\"):ctx.stage#0",
                "plan:Argument:s.transcript#0",
                format!("close@{}", text.len() - 2).as_str()
            ]
        );
    }

    #[test]
    fn hostile_nesting_is_scanned_in_linear_time() {
        let text = "[".repeat(20_000) + &"]".repeat(20_000) + &"(".repeat(20_000) + &"}".repeat(20_000);
        let mut count = 0;
        tokens(&text, &mut |_, _| count += 1);
        assert_eq!(count, 80_000);
        assert!(locate(&text, text.len()).is_some());
    }
}
