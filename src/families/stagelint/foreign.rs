//! `stagelint/ForeignSuppression`: another tool's suppression comment (`# noqa`,
//! `# eslint-disable-line`, `<!-- markdownlint-disable -->`, …) where stagelint reads its own.
//! Made by the collector (`check`), like the other suppression findings, because whether a
//! comment matters depends on the findings left on its lines.

use crate::diagnostic::suppress::{Comment, CommentStyle, comments};
use crate::diagnostic::{Applicability, Diagnostic, Edit};
use crate::families::stagelint::{CommentRegion, ForeignSuppression, comment_regions};
use crate::workspace::{FileKind, SourceFile};

/// Reports the foreign suppression comments of `file` that sit on (or apply to) a line with one
/// of `findings` (0-based line, code), or that name a stagelint code.
pub fn foreign_suppressions(file: &SourceFile, findings: &[(usize, &'static str)], out: &mut Vec<Diagnostic>) {
    for region in comment_regions(file) {
        let lower = file.text[region.span.start..region.span.end].to_ascii_lowercase();
        if !FORMS.iter().any(|form| lower.contains(form.0)) {
            continue;
        }
        for comment in comments(&file.text, file.lines(), region.span, region.style) {
            if let Some(d) = check_comment(file, &region, &comment, findings) {
                out.push(d);
            }
        }
    }
}

/// Which lines a foreign comment covers, by its form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reach {
    /// Its own line when it trails code, else the next line (`# noqa`, `eslint-disable-line`).
    Line,
    /// The next line (`eslint-disable-next-line`, `prettier-ignore`).
    NextLine,
    /// Every line after it (`eslint-disable`, `yamllint disable`, `markdownlint-disable`).
    Rest,
}

/// The forms recognised, longest first where one starts another, lower case.
const FORMS: &[(&str, Reach)] = &[
    ("noqa", Reach::Line),
    ("type: ignore", Reach::Line),
    ("pylint: disable", Reach::Line),
    ("nosec", Reach::Line),
    ("eslint-disable-next-line", Reach::NextLine),
    ("eslint-disable-line", Reach::Line),
    ("eslint-disable", Reach::Rest),
    ("yamllint disable-line", Reach::Line),
    ("yamllint disable", Reach::Rest),
    ("markdownlint-disable-next-line", Reach::NextLine),
    ("markdownlint-disable-line", Reach::Line),
    ("markdownlint-disable", Reach::Rest),
    ("prettier-ignore", Reach::NextLine),
];

fn check_comment(
    file: &SourceFile,
    region: &CommentRegion,
    comment: &Comment,
    findings: &[(usize, &'static str)],
) -> Option<Diagnostic> {
    let inner = file.text[comment.inner.start..comment.inner.end].trim();
    let lower = inner.to_ascii_lowercase();
    let (form, reach) = FORMS.iter().find(|(form, _)| lower.starts_with(form))?;
    let written = &inner[..form.len()];
    let named = named_codes(&inner[form.len()..]);
    let covers = |line: usize| match reach {
        Reach::Line if comment.standalone => line == comment.line + 1,
        Reach::Line => line == comment.line,
        Reach::NextLine => line == comment.line + 1,
        Reach::Rest => line > comment.line,
    };
    let mut reported: Vec<&'static str> = Vec::new();
    for (line, code) in findings {
        if covers(*line) && !reported.contains(code) {
            reported.push(code);
        }
    }
    if named.is_empty() && reported.is_empty() {
        return None;
    }
    let codes = if named.is_empty() { reported.clone() } else { named.clone() };
    let list = codes.join(", ");
    let in_body = region.style == CommentStyle::Html && matches!(file.kind, FileKind::Stage | FileKind::Skill);
    let whole_file = *reach == Reach::Rest;
    let (syntax, placement) = match (region.style, in_body, whole_file) {
        (_, true, _) => (
            format!("# stagelint: ignore-body[{list}]"),
            " in the frontmatter (a comment in the body is sent to the model)",
        ),
        (CommentStyle::Hash, _, false) => (format!("# stagelint: ignore[{list}]"), ""),
        (CommentStyle::Hash, _, true) => (format!("# stagelint: ignore-file[{list}]"), ""),
        (CommentStyle::Html, _, false) => (format!("<!-- stagelint: ignore[{list}] -->"), ""),
        (CommentStyle::Html, _, true) => (format!("<!-- stagelint: ignore-file[{list}] -->"), ""),
    };
    let what = match region.style {
        CommentStyle::Hash => format!("`# {written}`"),
        CommentStyle::Html => format!("`<!-- {written} -->`"),
    };
    let message = if reported.is_empty() {
        format!(
            "{what} is another tool's suppression comment and names `{list}`; stagelint reads only its own: write `{syntax}`{placement}"
        )
    } else {
        let still = reported.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ");
        format!(
            "{what} is another tool's suppression comment: stagelint does not read it, so {still} is still reported here; to suppress it write `{syntax}`{placement}"
        )
    };
    let mut d = Diagnostic::new(ForeignSuppression, file.id, comment.span, message).with_help(
        "keep the other tool's comment if that tool reads this file; stagelint's own is `# stagelint: ignore[code]` in YAML and `ignore-body[code]` in a stage's frontmatter for its body",
    );
    // Only a comment that names our codes was meant for us; and only where the stagelint form
    // covers the same lines.
    let same_lines = match reach {
        Reach::Line | Reach::Rest => true,
        Reach::NextLine => comment.standalone,
    };
    if !named.is_empty() && !in_body && same_lines {
        d = d.with_fix(
            format!("Replace with `{syntax}`"),
            Applicability::Unsafe,
            vec![Edit { span: comment.span, replacement: syntax }],
        );
    }
    Some(d)
}

/// The stagelint rule codes named in the rest of a foreign comment (`: sm/UnknownTool, E501`),
/// aliases as their primary code.
fn named_codes(rest: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    for token in rest.split(|c: char| c.is_whitespace() || matches!(c, ',' | ':' | ';' | '[' | ']' | '(' | ')')) {
        if let Some(rule) = crate::families::rule(token)
            && token.contains('/')
            && !out.contains(&rule.code)
        {
            out.push(rule.code);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_named_after_the_form() {
        assert_eq!(named_codes(": sm/UnknownTool, E501"), ["sm/UnknownTool"]);
        assert_eq!(named_codes(" rule:line-length"), Vec::<&str>::new());
        assert_eq!(named_codes(" sm"), Vec::<&str>::new(), "a family name could be any word");
    }
}
