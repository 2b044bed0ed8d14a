//! C3L prompt placeholders (climpt): `{uv-<name>}`, `{input_text}` and the runner's custom
//! `{<name>}` variables, with byte spans.
//!
//! The UV form follows climpt's substitutor (`/\{uv-([a-zA-Z0-9_-]+)\}/`), so whatever the
//! runtime substitutes is seen here. Handlebars-style `{{...}}` blocks of retry prompts are
//! not placeholders of this kind; their inner `{x}` is reported as custom, which rules ignore.

use crate::source::Span;

/// What a placeholder stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum C3lKind<'t> {
    /// `{uv-<name>}`: a UV variable the step must declare.
    Uv(&'t str),
    /// `{input_text}`: stdin, filled only for steps with `usesStdin: true`.
    InputText,
    /// `{<name>}`: a custom variable the runner supplies (`{issue_content}`).
    Custom(&'t str),
}

/// One placeholder occurrence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct C3lPlaceholder<'t> {
    pub kind: C3lKind<'t>,
    /// The whole placeholder, braces included.
    pub span: Span,
    /// The variable name (for `{uv-x}`, just `x`).
    pub name: Span,
}

/// Every placeholder in `text[range]`; spans are offsets into `text`.
pub fn scan(text: &str, range: Span) -> Vec<C3lPlaceholder<'_>> {
    let bytes = text.as_bytes();
    let end = range.end.min(text.len());
    let mut out = Vec::new();
    let mut at = range.start;
    while at < end {
        if bytes[at] != b'{' {
            at += 1;
            continue;
        }
        let name_start = at + 1;
        let mut close = name_start;
        while close < end && is_name_byte(bytes[close]) {
            close += 1;
        }
        if close >= end || bytes[close] != b'}' || close == name_start {
            at += 1;
            continue;
        }
        let inner = &text[name_start..close];
        let span = Span::new(at, close + 1);
        let placeholder = if let Some(name) = inner.strip_prefix("uv-") {
            (!name.is_empty()).then(|| C3lPlaceholder {
                kind: C3lKind::Uv(name),
                span,
                name: Span::new(name_start + 3, close),
            })
        } else if inner == "input_text" {
            Some(C3lPlaceholder { kind: C3lKind::InputText, span, name: Span::new(name_start, close) })
        } else if inner.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_') && !inner.contains('-') {
            Some(C3lPlaceholder { kind: C3lKind::Custom(inner), span, name: Span::new(name_start, close) })
        } else {
            None
        };
        out.extend(placeholder);
        at = close + 1;
    }
    out
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(C3lKind<'_>, &str)> {
        scan(text, Span::new(0, text.len())).into_iter().map(|p| (p.kind, &text[p.span.start..p.span.end])).collect()
    }

    #[test]
    fn finds_uv_input_and_custom_placeholders() {
        let text = "Issue {uv-issue} of {uv-repo_name}\n{input_text}{issue_content} {uv-} {x y} {uv-a-b}";
        assert_eq!(
            kinds(text),
            [
                (C3lKind::Uv("issue"), "{uv-issue}"),
                (C3lKind::Uv("repo_name"), "{uv-repo_name}"),
                (C3lKind::InputText, "{input_text}"),
                (C3lKind::Custom("issue_content"), "{issue_content}"),
                (C3lKind::Uv("a-b"), "{uv-a-b}"),
            ]
        );
    }

    #[test]
    fn spans_point_into_the_text() {
        let text = "ab {uv-issue}";
        let found = scan(text, Span::new(2, text.len()));
        assert_eq!(found.len(), 1);
        assert_eq!(&text[found[0].name.start..found[0].name.end], "issue");
        assert_eq!(found[0].span, Span::new(3, 13));
    }

    #[test]
    fn handlebars_blocks_are_not_uv() {
        assert_eq!(kinds("{{#if files}}{{this}}{{/if}}"), [(C3lKind::Custom("this"), "{this}")]);
        assert!(kinds("{ uv-x } {uv-x").is_empty());
    }
}
