//! Where a markdown text holds code: fenced blocks (```` ``` ```` and `~~~`) and inline code
//! spans. Prompts show code examples there, whose braces belong to another language.
//!
//! Deliberately lenient: a fence may be indented any amount (prompts indent them inside list
//! items), an unclosed fence runs to the end of the text, and an inline span ends on its own line
//! (template tags never span lines, so a span across lines changes nothing that matters here).

use crate::source::Span;

/// The code regions of `text`, in order and disjoint; spans are shifted by `base`.
pub fn code_regions(text: &str, base: usize) -> Vec<Span> {
    let mut out = Vec::new();
    // The open fence: its character, length and where its line starts.
    let mut fence: Option<(u8, usize, usize)> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let trimmed = line.trim_start_matches([' ', '\t']);
        let run = |c: u8| trimmed.bytes().take_while(|b| *b == c).count();
        match fence {
            Some((c, len, open)) => {
                if run(c) >= len && trimmed[run(c)..].trim().is_empty() {
                    out.push(Span::new(base + open, base + at));
                    fence = None;
                }
            }
            None => {
                let opens = [b'`', b'~'].into_iter().find(|c| {
                    let n = run(*c);
                    // An info string after backticks may not hold a backtick (that is inline code).
                    n >= 3 && (*c == b'~' || !trimmed[n..].contains('`'))
                });
                match opens {
                    Some(c) => fence = Some((c, run(c), start)),
                    None => inline_spans(line, base + start, &mut out),
                }
            }
        }
    }
    if let Some((_, _, open)) = fence {
        out.push(Span::new(base + open, base + text.len()));
    }
    out
}

/// Inline code spans of one line: a run of backticks up to the next run of the same length.
fn inline_spans(line: &str, base: usize, out: &mut Vec<Span>) {
    let bytes = line.as_bytes();
    let run_at = |i: usize| bytes[i..].iter().take_while(|b| **b == b'`').count();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let len = run_at(i);
        let mut j = i + len;
        let mut close = None;
        while j < bytes.len() {
            if bytes[j] == b'`' {
                let n = run_at(j);
                if n == len {
                    close = Some(j + n);
                    break;
                }
                j += n;
            } else {
                j += 1;
            }
        }
        match close {
            Some(end) => {
                out.push(Span::new(base + i, base + end));
                i = end;
            }
            // No closing run: the backticks are text.
            None => i += len,
        }
    }
}

/// Whether `span` lies inside one of `regions` (as returned by [`code_regions`]).
pub fn in_code(regions: &[Span], span: Span) -> bool {
    let after = regions.partition_point(|r| r.end <= span.start);
    regions.get(after).is_some_and(|r| r.start <= span.start && span.end <= r.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> Vec<&str> {
        code_regions(text, 0).into_iter().map(|s| &text[s.start..s.end]).collect()
    }

    #[test]
    fn fences_and_inline_spans() {
        let text =
            "a `x` b ``y ` z`` c\n```go\nm := [][]int{{1, 2}}\n```\n~~~\nt\n~~~~\n  ```\n  in a list\n  ```\nd\n";
        assert_eq!(
            shown(text),
            ["`x`", "``y ` z``", "```go\nm := [][]int{{1, 2}}\n```\n", "~~~\nt\n~~~~\n", "  ```\n  in a list\n  ```\n"]
        );
        // A shorter or different fence does not close; an unclosed one runs to the end.
        assert_eq!(shown("````\n```\n~~~\nx"), ["````\n```\n~~~\nx"]);
        // Backticks without a partner are text.
        assert!(shown("a ` b {{x}}\n").is_empty());
        // Three backticks with more on the line are inline code, not a fence.
        assert_eq!(shown("```a``` {{x}}\n"), ["```a```"]);
    }

    #[test]
    fn in_code_finds_the_region() {
        let text = "{{a}} `{{b}}` {{c}}\n```\n{{d}}\n```\n";
        let regions = code_regions(text, 0);
        let at = |needle: &str| {
            let start = text.find(needle).unwrap();
            in_code(&regions, Span::new(start, start + needle.len()))
        };
        assert_eq!([at("{{a}}"), at("{{b}}"), at("{{c}}"), at("{{d}}")], [false, true, false, true]);
    }
}
