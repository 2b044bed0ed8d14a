//! Inline suppressions: `# stagelint: ignore[code]` in YAML, `<!-- stagelint: ignore[code] -->`
//! in markdown; `ignore-file[...]` covers the whole file.

use crate::source::{LineIndex, Span};

/// Where a suppression comment's codes apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// A 0-based line.
    Line(usize),
    File,
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
    for line in first..=last {
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
                let scope = if file_wide {
                    Scope::File
                } else if standalone {
                    Scope::Line(line + 1)
                } else {
                    Scope::Line(line)
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
    fn hash_inside_a_word_is_not_a_comment() {
        let (ok, _) = scan_all("a: b#stagelint: ignore[x]\n", CommentStyle::Hash);
        assert!(ok.is_empty());
    }
}
