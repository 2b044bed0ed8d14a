//! Inline suppressions: `# stagelint: ignore[code]` in YAML, `<!-- stagelint: ignore[code] -->`
//! in markdown; `ignore-file[...]` covers the whole file.
//!
//! Inside a YAML block scalar (`key: |` and its indented lines) a `#` line is content, never a
//! suppression; a suppression on the line above the key, or trailing its header line, covers the
//! whole block scalar.

use crate::source::{LineIndex, Span};

/// Where a suppression comment's codes apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// A 0-based line.
    Line(usize),
    /// 0-based lines, both included: a block scalar from its header to its last content line.
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

/// A YAML block scalar, by 0-based lines: the header (`key: |`, `- >-`) and its content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockScalar {
    pub header: usize,
    /// The last non-blank content line (`header` when there is none).
    pub last: usize,
}

impl BlockScalar {
    /// Whether 0-based `line` is one of its content lines (not the header).
    pub fn holds(&self, line: usize) -> bool {
        line > self.header && line <= self.last
    }
}

/// The block scalars of the YAML in `text[region]`, read from the lines (so also while the YAML
/// does not parse): a header line whose value is `|` or `>` (with chomping or indentation
/// indicators), then the blank lines and the lines indented more than its key or dash.
pub fn block_scalars(text: &str, lines: &LineIndex, region: Span) -> Vec<BlockScalar> {
    let first = lines.line_of(region.start);
    let last = lines.line_of(region.end);
    let line_text = |line: usize| -> &str {
        let start = lines.line_start(line).max(region.start);
        let end = lines.line_end(text, line).min(region.end);
        text.get(start..end.max(start)).unwrap_or("")
    };
    let mut out = Vec::new();
    let mut line = first;
    while line <= last {
        let Some(parent) = block_header(line_text(line)) else {
            line += 1;
            continue;
        };
        let mut end = line;
        let mut next = line + 1;
        while next <= last {
            let content = line_text(next);
            let blank = content.trim().is_empty();
            if !blank && content.len() - content.trim_start_matches(' ').len() <= parent {
                break;
            }
            if !blank {
                end = next;
            }
            next += 1;
        }
        out.push(BlockScalar { header: line, last: end });
        line = end + 1;
    }
    out
}

/// For a block scalar header line, the column of its key (or dash): content must be indented
/// more than that.
fn block_header(line: &str) -> Option<usize> {
    let value = match yaml_comment_start(line) {
        Some(comment) => &line[..comment],
        None => line,
    }
    .trim_end();
    let token_start = value.rfind([' ', '\t']).map_or(0, |i| i + 1);
    let token = &value[token_start..];
    let mut chars = token.chars();
    if !matches!(chars.next(), Some('|' | '>')) || !chars.all(|c| c.is_ascii_digit() || c == '+' || c == '-') {
        return None;
    }
    let before = value[..token_start].trim_end();
    let indent = line.len() - line.trim_start_matches(' ').len();
    if before.ends_with(':') {
        // `key: |`, or `- key: |` whose mapping starts after the dash.
        let rest = &line[indent..];
        let key = rest.strip_prefix("- ").map_or(indent, |after| indent + 2 + (after.len() - after.trim_start().len()));
        Some(key)
    } else if before.trim_start() == "-" {
        Some(indent)
    } else {
        None
    }
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

/// A comment that looks like a suppression but cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadSuppression {
    pub span: Span,
    pub message: String,
}

/// Which comment syntax a region of a file uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommentStyle {
    /// `# ...` (YAML)
    Hash,
    /// `<!-- ... -->` (markdown)
    Html,
}

/// Finds suppression comments in `text[region]`.
pub fn scan(
    text: &str,
    lines: &LineIndex,
    region: Span,
    style: CommentStyle,
    out: &mut Vec<Suppression>,
    bad: &mut Vec<BadSuppression>,
) {
    let first = lines.line_of(region.start);
    let last = lines.line_of(region.end);
    let blocks = if style == CommentStyle::Hash { block_scalars(text, lines, region) } else { Vec::new() };
    for line in first..=last {
        // A `#` inside a block scalar is part of the string.
        if blocks.iter().any(|b| b.holds(line)) {
            continue;
        }
        let start = lines.line_start(line).max(region.start);
        let end = lines.line_end(text, line).min(region.end);
        if start >= end {
            continue;
        }
        let line_text = &text[start..end];
        let Some((comment, directive)) = find_directive(line_text, style) else {
            continue;
        };
        let comment = comment.shift(start);
        let directive_start = start + directive;
        let standalone = text[start..comment.start].trim().is_empty();
        match parse_directive(&text[directive_start..comment.end], directive_start) {
            Ok((file_wide, codes)) => {
                let target = if standalone { line + 1 } else { line };
                let scope = match blocks.iter().find(|b| b.header == target) {
                    _ if file_wide => Scope::File,
                    Some(block) => Scope::Lines(block.header, block.last),
                    None => Scope::Line(target),
                };
                out.push(Suppression { comment, scope, codes });
            }
            Err(message) => bad.push(BadSuppression { span: comment, message }),
        }
    }
}

/// Returns the comment's span within the line and the offset of the text after `stagelint:`.
fn find_directive(line: &str, style: CommentStyle) -> Option<(Span, usize)> {
    match style {
        CommentStyle::Hash => {
            let at = yaml_comment_start(line)?;
            let rest = line[at + 1..].trim_start();
            let after = rest.strip_prefix("stagelint:")?;
            let directive = line.len() - after.len();
            Some((Span::new(at, line.len()), directive))
        }
        CommentStyle::Html => {
            let open = line.find("<!--")?;
            let rest = line[open + 4..].trim_start();
            let after = rest.strip_prefix("stagelint:")?;
            let directive = line.len() - after.len();
            let close = line[directive..].find("-->").map_or(line.len(), |c| directive + c + 3);
            Some((Span::new(open, close), directive))
        }
    }
}

/// Where a YAML comment starts on a line: a `#` at the start or after a blank, outside quotes.
/// Multi-line quoted scalars are rare in frontmatter and are not tracked.
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

/// Parses ` ignore[a, b]` (or `ignore-file[...]`) starting at `offset` in the file.
fn parse_directive(text: &str, offset: usize) -> Result<(bool, Vec<SuppressedCode>), String> {
    let trimmed = text.trim_start();
    let lead = text.len() - trimmed.len();
    let (file_wide, rest, consumed) = if let Some(rest) = trimmed.strip_prefix("ignore-file[") {
        (true, rest, "ignore-file[".len())
    } else if let Some(rest) = trimmed.strip_prefix("ignore[") {
        (false, rest, "ignore[".len())
    } else {
        return Err("expected `stagelint: ignore[code, ...]` or `stagelint: ignore-file[code, ...]`".into());
    };
    let Some(close) = rest.find(']') else {
        return Err("the code list is not closed with `]`".into());
    };
    let list_start = offset + lead + consumed;
    let mut codes = Vec::new();
    let mut at = 0;
    for part in rest[..close].split(',') {
        let code = part.trim();
        let inner = part.len() - part.trim_start().len();
        if !code.is_empty() {
            let start = list_start + at + inner;
            codes.push(SuppressedCode {
                code: code.to_string(),
                span: Span::new(start, start + code.len()),
                used: false,
            });
        }
        at += part.len() + 1;
    }
    if codes.is_empty() {
        return Err("the suppression names no code; list the codes to ignore, e.g. `ignore[sm/UnknownTool]`".into());
    }
    Ok((file_wide, codes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_all(text: &str, style: CommentStyle) -> (Vec<Suppression>, Vec<BadSuppression>) {
        let lines = LineIndex::new(text);
        let (mut ok, mut bad) = (Vec::new(), Vec::new());
        scan(text, &lines, Span::new(0, text.len()), style, &mut ok, &mut bad);
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
        let blocks = block_scalars(text, &lines, Span::new(0, text.len()));
        assert_eq!(
            blocks,
            [
                BlockScalar { header: 2, last: 6 },
                BlockScalar { header: 7, last: 8 },
                BlockScalar { header: 10, last: 11 }
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
    fn hash_inside_a_word_is_not_a_comment() {
        let (ok, _) = scan_all("a: b#stagelint: ignore[x]\n", CommentStyle::Hash);
        assert!(ok.is_empty());
    }
}
