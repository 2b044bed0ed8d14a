//! Inline suppressions: `# stagelint: ignore[code]` in YAML, `<!-- stagelint: ignore[code] -->`
//! in markdown, `// stagelint: ignore[code]` or `/* … */` in TypeScript; `ignore-file[...]` covers
//! the whole file, and `# stagelint: ignore-body[...]` in a stage's frontmatter its markdown body
//! (the body is the prompt, and a comment written in it would be sent to the model and change the
//! request's fingerprint).
//!
//! Inside a multi-line YAML scalar (a block scalar `key: |` and its indented lines, a quoted
//! scalar whose quote closes on a later line, a plain scalar continued on more-indented lines) a
//! `#` line is content, never a suppression; a suppression on the line above the key, or
//! trailing its header line, covers the whole scalar.

use crate::source::{LineIndex, Span};

/// Where a suppression comment's codes apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// A 0-based line.
    Line(usize),
    /// 0-based lines, both included: a multi-line scalar from its header to its last line.
    Lines(usize, usize),
    File,
}

impl Scope {
    /// Whether a finding starting on 0-based `line` is in scope.
    pub fn covers(self, line: usize) -> bool {
        match self {
            Scope::Line(l) => l == line,
            Scope::Lines(first, last) => (first..=last).contains(&line),
            Scope::File => true,
        }
    }
}

/// A YAML scalar written over several lines, by 0-based lines: `header` is the line of the key
/// (or dash) that owns it, `last` its last content line. Block scalars (`key: |`), quoted
/// scalars whose closing quote is on a later line, and plain scalars continued on more-indented
/// lines. A `#` line inside one is part of the string (or, in a plain scalar, would end it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MultiLineScalar {
    pub header: usize,
    /// The last non-blank content line (`header` when there is none).
    pub last: usize,
}

impl MultiLineScalar {
    /// Whether 0-based `line` is one of its lines after the header.
    pub fn holds(&self, line: usize) -> bool {
        line > self.header && line <= self.last
    }
}

/// The multi-line scalars of the YAML in `text[region]`, read from the lines (so also while the
/// YAML does not parse).
pub fn multi_line_scalars(text: &str, lines: &LineIndex, region: Span) -> Vec<MultiLineScalar> {
    let first = lines.line_of(region.start);
    let last = lines.line_of(region.end);
    let line_text = |line: usize| -> &str {
        // A byte order mark is no text of the first line.
        let start = lines.column_start(line).max(region.start);
        let end = lines.line_end(text, line).min(region.end);
        text.get(start..end.max(start)).unwrap_or("")
    };
    let mut out = Vec::new();
    let mut line = first;
    while line <= last {
        let Some(head) = value_head(line_text(line)) else {
            line += 1;
            continue;
        };
        let indented = |l: usize| {
            let content = line_text(l);
            content.trim().is_empty() || indent_of(content) > head.parent
        };
        let mut next = line + 1;
        match head.value {
            Value::Block => {
                let mut end = line;
                while next <= last && indented(next) {
                    if !line_text(next).trim().is_empty() {
                        end = next;
                    }
                    next += 1;
                }
                out.push(MultiLineScalar { header: line, last: end });
                next = end + 1;
            }
            Value::Quoted(column) => {
                let (end, _) = close_quote(&line_text, line, column, last);
                if end > line {
                    out.push(MultiLineScalar { header: line, last: end });
                    next = end + 1;
                }
            }
            Value::Flow(column) => next = flow_end(&line_text, line, column, last, &mut out) + 1,
            Value::Plain => {
                let end = plain_end(&line_text, line + 1, last, &indented);
                if end > line {
                    out.push(MultiLineScalar { header: line, last: end });
                    next = end + 1;
                }
            }
            Value::Empty => {
                // `key:` with its value on the lines below: a quoted or plain scalar there is
                // owned by this key.
                let skipped = |l: usize| {
                    let content = line_text(l).trim();
                    content.is_empty() || content.starts_with('#')
                };
                let mut below = line + 1;
                while below <= last && skipped(below) {
                    below += 1;
                }
                if below <= last && indent_of(line_text(below)) > head.parent {
                    let content = line_text(below);
                    let column = indent_of(content);
                    let end = match content[column..].chars().next() {
                        Some('"' | '\'') => close_quote(&line_text, below, column, last).0,
                        Some('-' | '[' | '{' | '|' | '>' | '&' | '!' | '*' | '?') => below,
                        _ if value_head(content).is_some() => below,
                        _ => plain_end(&line_text, below + 1, last, &indented).max(below),
                    };
                    if end > below {
                        out.push(MultiLineScalar { header: line, last: end });
                        next = end + 1;
                    }
                }
            }
        }
        line = next;
    }
    out
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// What follows a key or a dash on a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Value {
    /// Nothing (or a comment): the value is on the lines below.
    Empty,
    /// `|` or `>` with indicators.
    Block,
    /// A quote opens at this byte column.
    Quoted(usize),
    /// `[` or `{` at this byte column.
    Flow(usize),
    Plain,
}

struct Head {
    /// The column of the key (or dash): a scalar's continuation lines are indented more.
    parent: usize,
    value: Value,
}

/// The key or list item a line starts and the kind of its value; `None` for a line that is not
/// one (a comment, a continuation line).
fn value_head(line: &str) -> Option<Head> {
    let mut column = indent_of(line);
    let mut parent = None;
    // `- `, `- - `: the innermost dash owns what follows.
    loop {
        let rest = &line[column..];
        if rest == "-" || rest.starts_with("- ") || rest.starts_with("-\t") {
            parent = Some(column);
            column += 1;
            column += line[column..].len() - line[column..].trim_start_matches([' ', '\t']).len();
        } else {
            break;
        }
    }
    let value_at = match key_end(&line[column..]) {
        Some(after_colon) => {
            parent = Some(column);
            column + after_colon
        }
        None => column,
    };
    let parent = parent?;
    let skip_blanks = |at: usize| at + (line[at..].len() - line[at..].trim_start_matches([' ', '\t']).len());
    let mut at = skip_blanks(value_at);
    // Anchors and tags come before the value itself.
    while line[at..].starts_with(['&', '!']) {
        at += line[at..].find([' ', '\t']).unwrap_or(line.len() - at);
        at = skip_blanks(at);
    }
    let value = match line[at..].chars().next() {
        None | Some('#' | '*') => Value::Empty,
        Some('"' | '\'') => Value::Quoted(at),
        Some('[' | '{') => Value::Flow(at),
        Some('|' | '>') => {
            let token = line[at..].split([' ', '\t']).next().unwrap_or("");
            let indicators = token[1..].chars().all(|c| c.is_ascii_digit() || c == '+' || c == '-');
            let after = line[at + token.len()..].trim_start();
            if indicators && (after.is_empty() || after.starts_with('#')) { Value::Block } else { Value::Plain }
        }
        Some(_) => Value::Plain,
    };
    Some(Head { parent, value })
}

/// The byte offset just after the `:` of a `key:` at the start of `rest` (plain or quoted key),
/// if the line has one.
fn key_end(rest: &str) -> Option<usize> {
    let bytes = rest.as_bytes();
    let mut i = match bytes.first() {
        Some(&q @ (b'"' | b'\'')) => close_in_line(rest, 1, q)?,
        Some(b'[' | b'{' | b'#' | b'|' | b'>' | b'&' | b'*' | b'!') | None => return None,
        Some(_) => 0,
    };
    while i < bytes.len() {
        match bytes[i] {
            b':' if bytes.get(i + 1).is_none_or(|b| *b == b' ' || *b == b'\t') => return Some(i + 1),
            b'#' if i > 0 && (bytes[i - 1] == b' ' || bytes[i - 1] == b'\t') => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

/// In one line, the offset just after the quote `q` that closes a scalar whose text starts at
/// `from`.
fn close_in_line(line: &str, from: usize, q: u8) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if q == b'"' => i += 1,
            b'\'' if q == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 1,
            b if b == q => return Some(i + 1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The line (and the offset after the quote on it) where the quoted scalar opening at `column`
/// of `line` closes; an unclosed one runs to the last line.
fn close_quote<'t>(line_text: &impl Fn(usize) -> &'t str, line: usize, column: usize, last: usize) -> (usize, usize) {
    let q = line_text(line).as_bytes()[column];
    let mut from = column + 1;
    for l in line..=last {
        let text = line_text(l);
        if let Some(end) = close_in_line(text, from.min(text.len()), q) {
            return (l, end);
        }
        from = 0;
    }
    (last, line_text(last).len())
}

/// The last line of a plain scalar continued from `from` on lines `indented` enough (blank and
/// comment lines between continuation lines count as inside).
fn plain_end<'t>(
    line_text: &impl Fn(usize) -> &'t str,
    from: usize,
    last: usize,
    indented: &impl Fn(usize) -> bool,
) -> usize {
    let mut end = from.saturating_sub(1);
    let mut next = from;
    while next <= last && indented(next) {
        let content = line_text(next).trim();
        if !content.is_empty() && !content.starts_with('#') {
            end = next;
        }
        next += 1;
    }
    end
}

/// Walks a flow collection opening at `column` of `line` to its end, recording the quoted scalars
/// in it that span lines; returns the line where it closes.
fn flow_end<'t>(
    line_text: &impl Fn(usize) -> &'t str,
    line: usize,
    column: usize,
    last: usize,
    out: &mut Vec<MultiLineScalar>,
) -> usize {
    let mut depth = 0usize;
    let (mut l, mut i) = (line, column);
    'lines: while l <= last {
        let bytes = line_text(l).as_bytes();
        while i < bytes.len() {
            let token_start = i == 0 || matches!(bytes[i - 1], b' ' | b'\t' | b'[' | b'{' | b',' | b':');
            match bytes[i] {
                b'[' | b'{' => depth += 1,
                b']' | b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return l;
                    }
                }
                b'#' if i == 0 || bytes[i - 1] == b' ' || bytes[i - 1] == b'\t' => break,
                b'"' | b'\'' if token_start => {
                    let (end_line, end) = close_quote(line_text, l, i, last);
                    i = end;
                    if end_line > l {
                        out.push(MultiLineScalar { header: l, last: end_line });
                        l = end_line;
                        continue 'lines;
                    }
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        l += 1;
        i = 0;
    }
    last
}

/// One code named in a suppression comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuppressedCode {
    pub code: String,
    pub span: Span,
    pub used: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suppression {
    /// The whole comment, for a removal fix.
    pub comment: Span,
    pub scope: Scope,
    pub codes: Vec<SuppressedCode>,
}

/// A comment that looks like a suppression but cannot be read, or a part of one that is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadSuppression {
    pub span: Span,
    pub message: String,
    /// What to delete to repair it, when that is certain (an empty entry's stray `,`).
    pub removal: Option<Span>,
}

impl BadSuppression {
    /// An empty entry of a code list (a stray `,`), removed by its fix.
    fn empty_entry(span: Span) -> BadSuppression {
        BadSuppression {
            span,
            message: "empty entry in the code list (a stray `,`); remove it".into(),
            removal: Some(span),
        }
    }
}

/// Which comment syntax a region of a file uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommentStyle {
    /// `# ...` (YAML)
    Hash,
    /// `<!-- ... -->` (markdown)
    Html,
}

/// Finds suppression comments in `text[region]`. `body` is the markdown body an
/// `ignore-body[...]` there covers (given for a frontmatter only).
pub fn scan(
    text: &str,
    lines: &LineIndex,
    region: Span,
    style: CommentStyle,
    body: Option<Span>,
    out: &mut Vec<Suppression>,
    bad: &mut Vec<BadSuppression>,
) {
    // Nothing to find (most files): no need to look for multi-line scalars.
    if !text[region.start..region.end].contains("stagelint:") {
        return;
    }
    let blocks = if style == CommentStyle::Hash { multi_line_scalars(text, lines, region) } else { Vec::new() };
    for found in comments(text, lines, region, style) {
        let inner = &text[found.inner.start..found.inner.end];
        let Some(after) = inner.trim_start().strip_prefix("stagelint:") else {
            continue;
        };
        let (comment, line, standalone) = (found.span, found.line, found.standalone);
        let directive_start = found.inner.end - after.len();
        match parse_directive(&text[directive_start..comment.end], directive_start) {
            Ok((reach, codes, empty)) => {
                bad.extend(empty.into_iter().map(BadSuppression::empty_entry));
                let target = if standalone { line + 1 } else { line };
                let scope = match (reach, body) {
                    (Reach::File, _) => Scope::File,
                    (Reach::Body, Some(body)) => Scope::Lines(lines.line_of(body.start), lines.line_of(body.end)),
                    (Reach::Body, None) => {
                        let message = "`ignore-body[...]` belongs in the frontmatter of a stage (or skill) with a markdown body; use `ignore[...]` here";
                        bad.push(BadSuppression { span: comment, message: message.into(), removal: None });
                        continue;
                    }
                    (Reach::Line, _) => match blocks.iter().find(|b| b.header == target) {
                        Some(block) => Scope::Lines(block.header, block.last),
                        None => Scope::Line(target),
                    },
                };
                out.push(Suppression { comment, scope, codes });
            }
            Err(message) => bad.push(BadSuppression { span: comment, message, removal: None }),
        }
    }
}

/// A comment in a region of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comment {
    /// 0-based line.
    pub line: usize,
    /// The whole comment: from `#` to the end of the line, or `<!--` to `-->`.
    pub span: Span,
    /// Its text: after `#`, or between `<!--` and `-->` (to the end of the line if unclosed).
    pub inner: Span,
    /// Alone on its line (it then applies to the next line).
    pub standalone: bool,
}

/// The comments in `text[region]`, one per line at most (the first): `#` comments outside
/// quotes and multi-line scalars in YAML, `<!-- -->` in markdown.
pub fn comments(text: &str, lines: &LineIndex, region: Span, style: CommentStyle) -> Vec<Comment> {
    let first = lines.line_of(region.start);
    let last = lines.line_of(region.end);
    let blocks = if style == CommentStyle::Hash { multi_line_scalars(text, lines, region) } else { Vec::new() };
    let mut out = Vec::new();
    for line in first..=last {
        // A `#` inside a multi-line scalar is part of the string.
        if blocks.iter().any(|b| b.holds(line)) {
            continue;
        }
        let start = lines.column_start(line).max(region.start);
        let end = lines.line_end(text, line).min(region.end);
        if start >= end {
            continue;
        }
        let line_text = &text[start..end];
        let (span, inner) = match style {
            CommentStyle::Hash => {
                let Some(at) = yaml_comment_start(line_text) else { continue };
                // `# noqa # stagelint: ignore[x]`: each ` #` starts another comment.
                let mut from = at;
                while let Some(next) = next_hash(line_text, from + 1) {
                    let end = from + line_text[from..next].trim_end().len();
                    let standalone = from == at && line_text[..at].trim().is_empty();
                    let (span, inner) = (Span::new(from, end).shift(start), Span::new(from + 1, end).shift(start));
                    out.push(Comment { line, span, inner, standalone });
                    from = next;
                }
                (Span::new(from, line_text.len()), Span::new(from + 1, line_text.len()))
            }
            CommentStyle::Html => {
                let Some(open) = line_text.find("<!--") else { continue };
                match line_text[open + 4..].find("-->") {
                    Some(close) => (Span::new(open, open + 4 + close + 3), Span::new(open + 4, open + 4 + close)),
                    None => (Span::new(open, line_text.len()), Span::new(open + 4, line_text.len())),
                }
            }
        };
        let standalone = line_text[..span.start].trim().is_empty();
        out.push(Comment { line, span: span.shift(start), inner: inner.shift(start), standalone });
    }
    out
}

/// The next `#` after a blank at or after `from` in a comment's text.
fn next_hash(line: &str, from: usize) -> Option<usize> {
    let bytes = line.as_bytes();
    (from.max(1)..bytes.len()).find(|&i| bytes[i] == b'#' && matches!(bytes[i - 1], b' ' | b'\t'))
}

/// Finds suppressions in comments a parser found (TypeScript's `//` and `/* */`, by their
/// spans, so a string holding the same text is never one). A comment alone on its line covers
/// the next line; one with code before it (trailing) or after it (a leading `/* … */`) covers
/// the line it ends on.
pub fn scan_comments(
    text: &str,
    lines: &LineIndex,
    comments: &[Span],
    out: &mut Vec<Suppression>,
    bad: &mut Vec<BadSuppression>,
) {
    for &comment in comments {
        let Some(body) = text.get(comment.start..comment.end) else { continue };
        let inner = body.strip_prefix("//").or_else(|| body.strip_prefix("/*")).unwrap_or(body);
        let inner = inner.strip_suffix("*/").unwrap_or(inner);
        let lead = inner.len() - inner.trim_start().len();
        let Some(after) = inner.trim_start().strip_prefix("stagelint:") else { continue };
        let directive_start = comment.start + (body.len() - inner.len()).min(2) + lead + "stagelint:".len();
        let line = lines.line_of(comment.start);
        let last = lines.line_of(comment.end);
        let rest = text.get(comment.end..lines.line_end(text, last).max(comment.end)).unwrap_or("");
        let standalone = text[lines.line_start(line)..comment.start].trim().is_empty() && rest.trim().is_empty();
        match parse_directive(after, directive_start) {
            Ok((reach, codes, empty)) => {
                bad.extend(empty.into_iter().map(BadSuppression::empty_entry));
                let scope = if reach == Reach::File {
                    Scope::File
                } else if reach == Reach::Body {
                    let message = "`ignore-body[...]` belongs in the frontmatter of a stage (or skill) with a markdown body; use `ignore[...]` here";
                    bad.push(BadSuppression { span: comment, message: message.into(), removal: None });
                    continue;
                } else if standalone {
                    Scope::Line(last + 1)
                } else {
                    Scope::Line(last)
                };
                out.push(Suppression { comment, scope, codes });
            }
            Err(message) => bad.push(BadSuppression { span: comment, message, removal: None }),
        }
    }
}

/// Where a YAML comment starts on a line: a `#` at the start or after a blank, outside quotes.
/// The lines of a multi-line quoted scalar after its first are skipped by the callers.
fn yaml_comment_start(line: &str) -> Option<usize> {
    let mut quote: Option<u8> = None;
    let mut previous = b' ';
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(b'"') if b == b'\\' => i += 1,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'#' && (previous == b' ' || previous == b'\t') => return Some(i),
            None if (b == b'"' || b == b'\'') && matches!(previous, b' ' | b'\t' | b'[' | b'{' | b',' | b':') => {
                quote = Some(b)
            }
            None => {}
        }
        previous = b;
        i += 1;
    }
    None
}

/// Parses ` ignore[a, b]` (or `ignore-file[...]`, `ignore-body[...]`) starting at `offset` in
/// the file: what it reaches, its codes, and the spans of its empty entries (`ignore[, a]`, `ignore[a, ]`),
/// each covering what deleting it takes (the entry's blanks and one `,`).
fn parse_directive(text: &str, offset: usize) -> Result<Directive, String> {
    let trimmed = text.trim_start();
    let lead = text.len() - trimmed.len();
    let forms = [("ignore-file[", Reach::File), ("ignore-body[", Reach::Body), ("ignore[", Reach::Line)];
    let Some((reach, rest, consumed)) =
        forms.iter().find_map(|(form, reach)| trimmed.strip_prefix(form).map(|rest| (*reach, rest, form.len())))
    else {
        return Err(
            "expected `stagelint: ignore[code, ...]`, `stagelint: ignore-file[code, ...]` or (in a stage's frontmatter) `stagelint: ignore-body[code, ...]`"
                .into(),
        );
    };
    let Some(close) = rest.find(']') else {
        return Err("the code list is not closed with `]`".into());
    };
    let list_start = offset + lead + consumed;
    let list = &rest[..close];
    let parts: Vec<&str> = list.split(',').collect();
    let mut codes = Vec::new();
    let mut empty = Vec::new();
    let mut at = 0;
    for (index, part) in parts.iter().enumerate() {
        let code = part.trim();
        let inner = part.len() - part.trim_start().len();
        let start = list_start + at;
        if !code.is_empty() {
            codes.push(SuppressedCode {
                code: code.to_string(),
                span: Span::new(start + inner, start + inner + code.len()),
                used: false,
            });
        } else if parts.len() > 1 {
            // Not the last entry: the entry and its `,` (`[a, , b]` → `[a, b]`), the first with
            // the blanks after (`[, a]` → `[a]`). The last: the `,` before it and the entry
            // (`[a, ]` → `[a]`).
            let removal = if index + 1 < parts.len() {
                let after = &list[at + part.len() + 1..];
                let blanks = if index == 0 { after.len() - after.trim_start().len() } else { 0 };
                Span::new(start, start + part.len() + 1 + blanks)
            } else {
                Span::new(start - 1, start + part.len())
            };
            empty.push(removal);
        }
        at += part.len() + 1;
    }
    if codes.is_empty() {
        return Err("the suppression names no code; list the codes to ignore, e.g. `ignore[sm/UnknownTool]`".into());
    }
    Ok((reach, codes, empty))
}

/// What [`parse_directive`] reads: what it reaches, the codes, the empty entries.
type Directive = (Reach, Vec<SuppressedCode>, Vec<Span>);

/// The lines a suppression comment reaches, by its form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reach {
    /// `ignore[...]`: its line, or the next, or the multi-line scalar it heads.
    Line,
    /// `ignore-file[...]`.
    File,
    /// `ignore-body[...]`: the markdown body after the frontmatter.
    Body,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typescript_suppressions_come_from_comment_spans() {
        let text = "// stagelint: ignore[atomic/A]\nx;\ny; /* stagelint: ignore[atomic/B, atomic/C] */\n/* stagelint: ignore-file[atomic/D] */\n// stagelint: ignroe[x]\n  /* stagelint: ignore[atomic/E] */ z();\n/* stagelint:\n ignore[atomic/F] */ w();\n";
        let lines = LineIndex::new(text);
        let comment = |needle: &str, close: &str| {
            let start = text.find(needle).unwrap();
            Span::new(start, start + text[start..].find(close).unwrap() + close.len())
        };
        let comments = [
            comment("// stagelint: ignore[atomic/A]", "]"),
            comment("/* stagelint: ignore[atomic/B", "*/"),
            comment("/* stagelint: ignore-file", "*/"),
            comment("// stagelint: ignroe", "]"),
            comment("/* stagelint: ignore[atomic/E]", "*/"),
            comment("/* stagelint:\n ignore[atomic/F]", "*/"),
        ];
        let (mut ok, mut bad) = (Vec::new(), Vec::new());
        scan_comments(text, &lines, &comments, &mut ok, &mut bad);
        assert_eq!(ok.len(), 5);
        assert_eq!(ok[3].scope, Scope::Line(5), "a block comment before code covers its own line");
        assert_eq!(ok[4].scope, Scope::Line(7), "… the line it ends on");
        assert_eq!(ok[0].scope, Scope::Line(1), "a comment alone covers the next line");
        assert_eq!(&text[ok[0].codes[0].span.start..ok[0].codes[0].span.end], "atomic/A");
        assert_eq!(ok[1].scope, Scope::Line(2), "a trailing comment covers its own line");
        let codes: Vec<&str> = ok[1].codes.iter().map(|c| &text[c.span.start..c.span.end]).collect();
        assert_eq!(codes, ["atomic/B", "atomic/C"]);
        assert_eq!(ok[2].scope, Scope::File);
        assert_eq!(bad.len(), 1);
        // Text that is not one of the given comments (a string) is never read.
        let (mut none, mut bad) = (Vec::new(), Vec::new());
        scan_comments("\"// stagelint: ignore[atomic/A]\"", &LineIndex::new("x"), &[], &mut none, &mut bad);
        assert!(none.is_empty() && bad.is_empty());
    }

    fn scan_all(text: &str, style: CommentStyle) -> (Vec<Suppression>, Vec<BadSuppression>) {
        let lines = LineIndex::new(text);
        let (mut ok, mut bad) = (Vec::new(), Vec::new());
        scan(text, &lines, Span::new(0, text.len()), style, None, &mut ok, &mut bad);
        (ok, bad)
    }

    #[test]
    fn trailing_and_standalone_hash_comments() {
        let text = "a: 1 # stagelint: ignore[sm/UnknownTool]\n# stagelint: ignore[sm/FieldType, sm]\nb: 2\n";
        let (ok, bad) = scan_all(text, CommentStyle::Hash);
        assert!(bad.is_empty());
        assert_eq!(ok[0].scope, Scope::Line(0));
        assert_eq!(ok[1].scope, Scope::Line(2));
        let codes: Vec<&str> = ok[1].codes.iter().map(|c| c.code.as_str()).collect();
        assert_eq!(codes, ["sm/FieldType", "sm"]);
        assert_eq!(&text[ok[1].codes[0].span.start..ok[1].codes[0].span.end], "sm/FieldType");
    }

    #[test]
    fn html_comments_and_file_scope() {
        let text = "x <!-- stagelint: ignore-file[sm/UpstreamEmpty] --> y\n";
        let (ok, _) = scan_all(text, CommentStyle::Html);
        assert_eq!(ok[0].scope, Scope::File);
        assert_eq!(&text[ok[0].comment.start..ok[0].comment.end], "<!-- stagelint: ignore-file[sm/UpstreamEmpty] -->");
    }

    #[test]
    fn malformed_directives() {
        let (_, bad) =
            scan_all("# stagelint: ignroe[x]\n# stagelint: ignore[]\n# stagelint: ignore[a\n", CommentStyle::Hash);
        assert_eq!(bad.len(), 3);
    }

    #[test]
    fn hash_inside_quotes_is_not_a_comment() {
        let (ok, bad) = scan_all(
            "description: \"use # stagelint: ignore[x] here\"\nb: 'it''s' # stagelint: ignore[sm]\n",
            CommentStyle::Hash,
        );
        assert!(bad.is_empty());
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].scope, Scope::Line(1));
    }

    #[test]
    fn block_scalars_hold_content_and_a_suppression_above_covers_them() {
        let text = "a: 1\n# stagelint: ignore[x]\nmsg: |\n  one {{isueDir}}\n  # stagelint: ignore[y]\n\n  two\nb: >- # stagelint: ignore[z]\n  three\nphases:\n  - prompt: |\n      four\n    next: 1\n";
        let lines = LineIndex::new(text);
        let blocks = multi_line_scalars(text, &lines, Span::new(0, text.len()));
        assert_eq!(
            blocks,
            [
                MultiLineScalar { header: 2, last: 6 },
                MultiLineScalar { header: 7, last: 8 },
                MultiLineScalar { header: 10, last: 11 }
            ]
        );
        let (ok, bad) = scan_all(text, CommentStyle::Hash);
        assert!(bad.is_empty());
        // The `#` line inside `msg` is content: only two suppressions.
        let scopes: Vec<Scope> = ok.iter().map(|s| s.scope).collect();
        assert_eq!(scopes, [Scope::Lines(2, 6), Scope::Lines(7, 8)]);
        assert!(Scope::Lines(2, 6).covers(3) && !Scope::Lines(2, 6).covers(7));
    }

    #[test]
    fn quoted_and_plain_scalars_over_several_lines_hold_their_hash_lines() {
        let text = "a: \"one\n  # stagelint: ignore[x]\n  two\"\nb: 'it''s\n  # stagelint: ignore[y]\n  three'\nc: plain\n  # stagelint: ignore[z]\n  words\nd:\n  wrapped\n  text\ne: [\"q\n  # stagelint: ignore[w]\n  r\", s]\nf: \"closed\" # stagelint: ignore[v]\n- item \"x\"\n";
        let lines = LineIndex::new(text);
        let found = multi_line_scalars(text, &lines, Span::new(0, text.len()));
        let spans: Vec<(usize, usize)> = found.iter().map(|m| (m.header, m.last)).collect();
        assert_eq!(spans, [(0, 2), (3, 5), (6, 8), (9, 11), (12, 14)]);
        let (ok, bad) = scan_all(text, CommentStyle::Hash);
        assert!(bad.is_empty());
        // Only the trailing comment after a closed quote is a suppression.
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].scope, Scope::Line(15));
        // A suppression above a key covers all lines of its scalar.
        let (ok, _) = scan_all("# stagelint: ignore[x]\na: \"one\n  two\"\n", CommentStyle::Hash);
        assert_eq!(ok[0].scope, Scope::Lines(1, 2));
    }

    #[test]
    fn empty_entries_are_bad_but_the_codes_still_count() {
        for (text, removed) in [
            ("# stagelint: ignore[, sm/UnknownTool]\n", "ignore[sm/UnknownTool]"),
            ("# stagelint: ignore[sm/UnknownTool, ]\n", "ignore[sm/UnknownTool]"),
            ("# stagelint: ignore[sm/FieldType,,sm/UnknownTool]\n", "ignore[sm/FieldType,sm/UnknownTool]"),
            ("# stagelint: ignore[sm/FieldType, , sm/UnknownTool]\n", "ignore[sm/FieldType, sm/UnknownTool]"),
        ] {
            let (ok, bad) = scan_all(text, CommentStyle::Hash);
            assert_eq!(ok.len(), 1, "{text}");
            assert_eq!(bad.len(), 1, "{text}");
            let span = bad[0].removal.expect("a removal");
            let mut fixed = text.to_string();
            fixed.replace_range(span.start..span.end, "");
            assert!(fixed.contains(removed), "{text} -> {fixed}");
        }
    }

    #[test]
    fn ignore_body_reaches_the_body_and_only_from_a_frontmatter() {
        let text = "---\nid: a # stagelint: ignore-body[sm/UnknownPlaceholder]\n---\nline 3\nline 4\n";
        let lines = LineIndex::new(text);
        let (mut ok, mut bad) = (Vec::new(), Vec::new());
        let fm = crate::source::frontmatter::split(text).expect("a frontmatter");
        scan(text, &lines, fm.yaml, CommentStyle::Hash, Some(fm.body), &mut ok, &mut bad);
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(ok[0].scope, Scope::Lines(3, 5));
        assert!(!ok[0].scope.covers(1));
        let (ok, bad) = scan_all("a: 1 # stagelint: ignore-body[sm]\n", CommentStyle::Hash);
        assert!(ok.is_empty());
        assert!(bad[0].message.contains("frontmatter"), "{bad:?}");
    }

    #[test]
    fn a_suppression_may_follow_another_comment_on_its_line() {
        let text = "a: 1 # noqa # stagelint: ignore[x] # why\n";
        let (ok, bad) = scan_all(text, CommentStyle::Hash);
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(&text[ok[0].comment.start..ok[0].comment.end], "# stagelint: ignore[x]");
        assert_eq!(ok[0].scope, Scope::Line(0));
    }

    #[test]
    fn hash_inside_a_word_is_not_a_comment() {
        let (ok, _) = scan_all("a: b#stagelint: ignore[x]\n", CommentStyle::Hash);
        assert!(ok.is_empty());
    }
}
