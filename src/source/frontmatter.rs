//! Splits a markdown file into its `---` YAML frontmatter block and the body, with byte spans.

use crate::source::Span;

/// Where the parts of a frontmatter file are; every offset is a byte offset into the original text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frontmatter {
    /// Span of the opening `---` fence line (without its line break).
    pub open_fence: Span,
    /// Span of the YAML text between the fences (may be empty).
    pub yaml: Span,
    /// Span of the closing fence line, `None` when the file never closes the block.
    pub close_fence: Option<Span>,
    /// Span of everything after the closing fence's line break (the markdown body); when unclosed, an empty span at the end of file.
    pub body: Span,
}

/// Finds the frontmatter block; `None` when the first line (after an optional BOM) is not `---`.
pub fn split(text: &str) -> Option<Frontmatter> {
    let start = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
    let mut lines = Lines { text, pos: start };
    let (open_fence, first) = lines.next()?;
    if !is_fence(&text[open_fence.start..open_fence.end], &["---"]) {
        return None;
    }
    let yaml_start = first;
    for (line, next) in lines {
        if is_fence(&text[line.start..line.end], &["---", "..."]) {
            // A fence on the last line without a line break leaves an empty body at the end.
            return Some(Frontmatter {
                open_fence,
                yaml: Span::new(yaml_start, line.start),
                close_fence: Some(line),
                body: Span::new(next, text.len()),
            });
        }
    }
    Some(Frontmatter {
        open_fence,
        yaml: Span::new(yaml_start, text.len()),
        close_fence: None,
        body: Span::empty(text.len()),
    })
}

/// A frontmatter block that does not start on the first line: blank lines, `#` lines or HTML
/// comments come before the opening `---`, so frontmatter readers (and `split`) see none. Returns
/// where the opening fence starts, and whether only blank lines come before it.
pub fn late_start(text: &str) -> Option<(usize, bool)> {
    if split(text).is_some() {
        return None;
    }
    let start = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
    let mut in_comment = false;
    let mut blank_only = true;
    for (line, _) in (Lines { text, pos: start }) {
        let content = text[line.start..line.end].trim();
        if in_comment {
            in_comment = !content.contains("-->");
            continue;
        }
        if is_fence(&text[line.start..line.end], &["---"]) {
            return Some((line.start, blank_only));
        }
        if content.is_empty() {
            continue;
        }
        if content.starts_with("<!--") {
            in_comment = !content.contains("-->");
        } else if !content.starts_with('#') {
            return None;
        }
        blank_only = false;
    }
    None
}

/// `---` (or `...`) followed only by spaces and tabs.
fn is_fence(line: &str, fences: &[&str]) -> bool {
    fences.contains(&line.trim_end_matches([' ', '\t']))
}

/// Lines as (span without `\n`/`\r\n`, offset where the next line starts).
struct Lines<'a> {
    text: &'a str,
    pos: usize,
}

impl Iterator for Lines<'_> {
    type Item = (Span, usize);

    fn next(&mut self) -> Option<(Span, usize)> {
        // The empty "line" after a final `\n` is never a fence.
        let rest = self.text.get(self.pos..).filter(|rest| !rest.is_empty())?;
        let start = self.pos;
        let (mut end, next) = match rest.find('\n') {
            Some(i) => (start + i, start + i + 1),
            None => (self.text.len(), self.text.len()),
        };
        if end > start && self.text.as_bytes().get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        self.pos = next;
        Some((Span::new(start, end), next))
    }
}

#[cfg(test)]
mod tests {
    use crate::source::frontmatter::*;

    #[test]
    fn late_frontmatter() {
        assert_eq!(late_start("\n---\nid: a\n---\n"), Some((1, true)));
        assert_eq!(late_start("# note\n<!-- a\nb -->\n---\nid: a\n---\n"), Some((20, false)));
        assert_eq!(late_start("---\nid: a\n---\n"), None);
        assert_eq!(late_start("text\n---\nid: a\n---\n"), None);
    }

    fn parts(text: &str) -> (String, String, Option<String>, String) {
        let fm = split(text).expect("frontmatter");
        let s = |span: Span| text[span.start..span.end].to_string();
        (s(fm.open_fence), s(fm.yaml), fm.close_fence.map(s), s(fm.body))
    }

    #[test]
    fn basic_split() {
        let text = "---\nname: x\n---\n# Body\n";
        let fm = split(text).expect("frontmatter");
        assert_eq!(fm.open_fence, Span::new(0, 3));
        assert_eq!(fm.yaml, Span::new(4, 12));
        assert_eq!(fm.close_fence, Some(Span::new(12, 15)));
        assert_eq!(fm.body, Span::new(16, text.len()));
    }

    #[test]
    fn crlf_spans_exclude_the_carriage_return() {
        let text = "---  \r\na: 1\r\n--- \t\r\nbody\r\n";
        assert_eq!(parts(text), ("---  ".into(), "a: 1\r\n".into(), Some("--- \t".into()), "body\r\n".into()));
    }

    #[test]
    fn bom_is_skipped_but_counted() {
        let text = "\u{feff}---\nk: é\n...\n";
        let fm = split(text).expect("frontmatter");
        assert_eq!(fm.open_fence, Span::new(3, 6));
        assert_eq!(&text[fm.yaml.start..fm.yaml.end], "k: é\n");
        assert_eq!(&text[fm.close_fence.expect("close").start..], "...\n");
        assert_eq!(fm.body, Span::empty(text.len()));
    }

    #[test]
    fn unclosed_and_minimal_blocks() {
        let text = "---\na: 1\nb: 😀";
        let fm = split(text).expect("frontmatter");
        assert_eq!((fm.yaml, fm.close_fence, fm.body), (Span::new(4, text.len()), None, Span::empty(text.len())));
        for text in ["---", "---\n", "---\r\n", "--- "] {
            let fm = split(text).expect("frontmatter");
            assert!(fm.yaml.is_empty(), "{text:?}");
            assert_eq!(fm.yaml.start, text.len());
            assert_eq!(fm.close_fence, None);
            assert_eq!(fm.body, Span::empty(text.len()));
        }
        let fm = split("---\n---").expect("frontmatter");
        assert_eq!((fm.yaml, fm.close_fence, fm.body), (Span::empty(4), Some(Span::new(4, 7)), Span::empty(7)));
    }

    #[test]
    fn no_frontmatter() {
        for text in
            ["", "# Title\n---\n", " ---\n", "----\n", "--- x\n", "\n---\n", "\u{feff}\u{feff}---\n", "---\ra: 1\r"]
        {
            assert_eq!(split(text), None, "{text:?}");
        }
    }

    #[test]
    fn fence_lines_must_be_exact() {
        let text = "---\na: ---\n ---\n----\n---x\n--- \nbody";
        let (_, yaml, close, body) = parts(text);
        assert_eq!(yaml, "a: ---\n ---\n----\n---x\n");
        assert_eq!(close.as_deref(), Some("--- "));
        assert_eq!(body, "body");
    }

    mod prop {
        use crate::source::frontmatter::split;
        use proptest::prelude::*;

        use crate::source::Span;

        fn check_span(text: &str, span: Span) {
            assert!(span.start <= span.end && span.end <= text.len());
            assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
        }

        proptest! {
            #[test]
            fn spans_are_ordered_and_in_bounds(text in "(\u{feff})?(---[ \t]*\r?\n)?([-.a-zé \t]{0,6}\r?\n){0,6}[-. a]{0,4}") {
                if let Some(fm) = split(&text) {
                    for span in [fm.open_fence, fm.yaml, fm.body].into_iter().chain(fm.close_fence) {
                        check_span(&text, span);
                    }
                    assert!(fm.open_fence.end <= fm.yaml.start);
                    assert!(fm.yaml.end <= fm.body.start);
                    if let Some(close) = fm.close_fence {
                        assert_eq!(close.start, fm.yaml.end);
                        assert!(close.end <= fm.body.start);
                    }
                }
            }
        }
    }
}
