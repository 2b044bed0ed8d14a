//! Stage-body placeholders: `{{path}}` (mustache dialect) and `${path}` (dollar dialect).
//!
//! The engine is deliberately narrow: a placeholder is a dotted path with `[n]` indexes.
//! Everything else a mustache user might type is classified so rules can say what it is.

use crate::source::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// `{{ctx.x}}`: the wiki's body syntax.
    Mustache,
    /// `${ctx.x}`: what the stud-cli code substitutes.
    Dollar,
}

impl Dialect {
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Mustache => "mustache",
            Dialect::Dollar => "dollar",
        }
    }

    pub fn render(self, path: &str) -> String {
        match self {
            Dialect::Mustache => format!("{{{{{path}}}}}"),
            Dialect::Dollar => format!("${{{path}}}"),
        }
    }
}

/// One `{{...}}` or `${...}` occurrence in a body.
#[derive(Clone, Debug, PartialEq)]
pub struct Tag {
    /// The whole tag, delimiters included.
    pub span: Span,
    /// The text between the delimiters.
    pub inner: Span,
    pub dialect: Dialect,
    pub kind: TagKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TagKind {
    Path(Path),
    Control(Control),
    Empty,
    /// No closing delimiter on the same line.
    Unclosed,
    /// Looks like a placeholder but the path does not parse; the string says why.
    BadPath(String),
}

/// Mustache features the stage engine does not have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Control {
    Section(String),
    Inverted(String),
    Close(String),
    Else,
    Comment,
    Partial,
    Unescaped,
    Helper(String),
    Pipe,
    Expression,
}

impl Control {
    pub fn describe(&self) -> String {
        match self {
            Control::Section(name) => format!("a `{{{{#{name}}}}}` block"),
            Control::Inverted(name) => format!("an inverted `{{{{^{name}}}}}` block"),
            Control::Close(name) => format!("a closing `{{{{/{name}}}}}` tag"),
            Control::Else => "an `{{else}}` branch".into(),
            Control::Comment => "a mustache comment".into(),
            Control::Partial => "a partial include".into(),
            Control::Unescaped => "an unescaped (triple-brace or `&`) tag".into(),
            Control::Helper(name) => format!("a helper call `{name}`"),
            Control::Pipe => "a pipe/filter".into(),
            Control::Expression => "an expression".into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Path {
    pub segments: Vec<Segment>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Segment {
    Field { name: crate::util::ShortStr, span: Span },
    Index { index: usize, span: Span },
}

impl Segment {
    pub fn span(&self) -> Span {
        match self {
            Segment::Field { span, .. } | Segment::Index { span, .. } => *span,
        }
    }

    pub fn name(&self) -> Option<&str> {
        match self {
            Segment::Field { name, .. } => Some(name),
            Segment::Index { .. } => None,
        }
    }
}

impl Path {
    pub fn root(&self) -> Option<&str> {
        self.segments.first().and_then(Segment::name)
    }

    /// The path as written without spaces (`ctx.upstream[0].parsed`).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for (i, seg) in self.segments.iter().enumerate() {
            match seg {
                Segment::Field { name, .. } => {
                    if i > 0 {
                        out.push('.');
                    }
                    out.push_str(name);
                }
                Segment::Index { index, .. } => out.push_str(&format!("[{index}]")),
            }
        }
        out
    }

    /// Span from the first to the last segment.
    pub fn span(&self) -> Span {
        match (self.segments.first(), self.segments.last()) {
            (Some(first), Some(last)) => first.span().cover(last.span()),
            _ => Span::default(),
        }
    }
}

/// Finds every tag in `body`; `offset` is where the body starts in its file.
pub fn parse(body: &str, offset: usize) -> Vec<Tag> {
    let bytes = body.as_bytes();
    let mut tags = Vec::new();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'{' && bytes[i + 1] == b'{' {
            let tag = mustache_tag(body, i);
            i = tag.span.end;
            tags.push(shift(tag, offset));
        } else if bytes[i] == b'$' && bytes[i + 1] == b'{' {
            match dollar_tag(body, i) {
                Some(tag) => {
                    i = tag.span.end;
                    tags.push(shift(tag, offset));
                }
                None => i += 2,
            }
        } else {
            i += 1;
        }
    }
    tags
}

fn shift(mut tag: Tag, offset: usize) -> Tag {
    tag.span = tag.span.shift(offset);
    tag.inner = tag.inner.shift(offset);
    if let TagKind::Path(path) = &mut tag.kind {
        for seg in &mut path.segments {
            match seg {
                Segment::Field { span, .. } | Segment::Index { span, .. } => *span = span.shift(offset),
            }
        }
    }
    tag
}

fn line_end(body: &str, from: usize) -> usize {
    body[from..].find('\n').map_or(body.len(), |n| from + n)
}

fn mustache_tag(body: &str, start: usize) -> Tag {
    let eol = line_end(body, start);
    let line = &body[start..eol];
    if let Some(close) = line.strip_prefix("{{{").and_then(|rest| rest.find("}}}")) {
        let end = start + 3 + close + 3;
        return Tag {
            span: Span::new(start, end),
            inner: Span::new(start + 3, end - 3),
            dialect: Dialect::Mustache,
            kind: TagKind::Control(Control::Unescaped),
        };
    }
    let Some(close) = line[2..].find("}}") else {
        let end = eol - usize::from(body[..eol].ends_with('\r'));
        return Tag {
            span: Span::new(start, end.max(start + 2)),
            inner: Span::new(start + 2, end.max(start + 2)),
            dialect: Dialect::Mustache,
            kind: TagKind::Unclosed,
        };
    };
    let inner = Span::new(start + 2, start + 2 + close);
    Tag { span: Span::new(start, inner.end + 2), inner, dialect: Dialect::Mustache, kind: classify(body, inner) }
}

fn dollar_tag(body: &str, start: usize) -> Option<Tag> {
    let eol = line_end(body, start);
    let close = body[start + 2..eol].find('}')?;
    let inner = Span::new(start + 2, start + 2 + close);
    let text = body[inner.start..inner.end].trim_start();
    // Only ctx/stage roots are ours; `${HOME}` in a shell snippet is not a placeholder.
    let ours = ["ctx", "stage"].iter().any(|root| {
        text.strip_prefix(root).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[', ' ', '}']))
    });
    if !ours {
        return None;
    }
    let kind = match parse_path(body, trimmed(body, inner)) {
        Ok(path) => TagKind::Path(path),
        Err(reason) => TagKind::BadPath(reason),
    };
    Some(Tag { span: Span::new(start, inner.end + 1), inner, dialect: Dialect::Dollar, kind })
}

fn trimmed(body: &str, span: Span) -> Span {
    let text = &body[span.start..span.end];
    let lead = text.len() - text.trim_start().len();
    let trail = text.len() - text.trim_end().len();
    Span::new(span.start + lead, (span.end - trail).max(span.start + lead))
}

fn classify(body: &str, inner: Span) -> TagKind {
    let span = trimmed(body, inner);
    let text = &body[span.start..span.end];
    if text.is_empty() {
        return TagKind::Empty;
    }
    let rest = || text[1..].trim().to_string();
    let control = match text.as_bytes()[0] {
        b'#' => Some(Control::Section(rest())),
        b'^' => Some(Control::Inverted(rest())),
        b'/' => Some(Control::Close(rest())),
        b'!' => Some(Control::Comment),
        b'>' => Some(Control::Partial),
        b'&' => Some(Control::Unescaped),
        _ if text == "else" => Some(Control::Else),
        _ => None,
    };
    if let Some(control) = control {
        return TagKind::Control(control);
    }
    if text.contains('|') {
        return TagKind::Control(Control::Pipe);
    }
    if text.contains(|c: char| "()+*/=<>!&?:,'\"%".contains(c)) {
        return TagKind::Control(Control::Expression);
    }
    if let Some((head, _)) = text.split_once(char::is_whitespace) {
        return TagKind::Control(Control::Helper(head.to_string()));
    }
    match parse_path(body, span) {
        Ok(path) => TagKind::Path(path),
        Err(reason) => TagKind::BadPath(reason),
    }
}

fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$'
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'-'
}

/// Parses `a.b[0].c` inside `span`; spaces are not allowed inside a path.
fn parse_path(body: &str, span: Span) -> Result<Path, String> {
    let bytes = body.as_bytes();
    let mut segments = Vec::new();
    let mut i = span.start;
    let end = span.end;
    if i == end {
        return Err("the placeholder is empty".into());
    }
    loop {
        if i >= end || !is_name_start(bytes[i]) {
            return Err(format!("expected a field name at `{}`", &body[i.min(end)..end]));
        }
        let name_start = i;
        while i < end && is_name_char(bytes[i]) {
            i += 1;
        }
        segments.push(Segment::Field { name: body[name_start..i].into(), span: Span::new(name_start, i) });
        while i < end && bytes[i] == b'[' {
            let open = i;
            i += 1;
            let digits = i;
            while i < end && bytes[i].is_ascii_digit() {
                i += 1;
            }
            if i == digits || i >= end || bytes[i] != b']' {
                return Err("an index must be a number in brackets, like `[0]`".into());
            }
            let index = body[digits..i].parse::<usize>().map_err(|_| "the index is too large".to_string())?;
            i += 1;
            segments.push(Segment::Index { index, span: Span::new(open, i) });
        }
        if i == end {
            segments.shrink_to_fit();
            return Ok(Path { segments });
        }
        if bytes[i] != b'.' {
            return Err(format!("unexpected `{}` in a placeholder path", &body[i..end]));
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(body: &str) -> Vec<TagKind> {
        parse(body, 0).into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn parses_paths_with_indexes_and_spans() {
        let body = "Task: {{ ctx.upstream[1].parsed.summary }}!";
        let tags = parse(body, 10);
        assert_eq!(tags.len(), 1);
        let TagKind::Path(path) = &tags[0].kind else { panic!("not a path: {:?}", tags[0].kind) };
        assert_eq!(path.text(), "ctx.upstream[1].parsed.summary");
        assert_eq!(tags[0].span, Span::new(16, 16 + 36));
        let idx = &path.segments[2];
        assert_eq!(idx, &Segment::Index { index: 1, span: Span::new(10 + 21, 10 + 24) });
    }

    #[test]
    fn classifies_control_flow() {
        use Control::*;
        let got = kinds("{{#if x}}{{/if}}{{^y}}{{else}}{{! c}}{{> p}}{{{raw}}}{{upper ctx.x}}{{ctx.x | up}}{{a == b}}");
        let want = [
            Section("if x".into()),
            Close("if".into()),
            Inverted("y".into()),
            Else,
            Comment,
            Partial,
            Unescaped,
            Helper("upper".into()),
            Pipe,
            Expression,
        ];
        assert_eq!(got, want.into_iter().map(TagKind::Control).collect::<Vec<_>>());
    }

    #[test]
    fn malformed_tags() {
        assert_eq!(kinds("{{}} {{  }}"), vec![TagKind::Empty, TagKind::Empty]);
        assert_eq!(kinds("a {{ctx.x\nb}}"), vec![TagKind::Unclosed]);
        assert!(matches!(kinds("{{ctx..x}}")[0], TagKind::BadPath(_)));
        assert!(matches!(kinds("{{ctx.x[a]}}")[0], TagKind::BadPath(_)));
    }

    #[test]
    fn dollar_only_for_ctx_and_stage() {
        let tags = parse("echo ${HOME} ${ctx.task} ${stage.id}", 0);
        assert_eq!(tags.len(), 2);
        assert!(tags.iter().all(|t| t.dialect == Dialect::Dollar));
    }

    #[test]
    fn unclosed_span_stops_before_crlf() {
        let tags = parse("x {{ctx\r\ny", 0);
        assert_eq!(tags[0].span, Span::new(2, 7));
    }
}
