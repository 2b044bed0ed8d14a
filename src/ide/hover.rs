//! Hover: the full explanation of the rule behind a finding under the cursor.

use crate::diagnostic::{Diagnostic, FileId};
use crate::families;
use crate::source::Span;

/// Markdown for the findings of `file` whose span contains `offset`, with their rule docs.
pub fn diagnostics_at(diagnostics: &[Diagnostic], file: FileId, offset: usize) -> Option<(Span, String)> {
    let here: Vec<&Diagnostic> = diagnostics
        .iter()
        .filter(|d| d.file == file && d.span.start <= offset && offset <= d.span.end.max(d.span.start + 1))
        .collect();
    let first = here.first()?;
    let span = here.iter().fold(first.span, |acc, d| acc.cover(d.span));
    let mut text = String::new();
    let mut shown = Vec::new();
    for d in &here {
        text.push_str(&format!("**{}** `{}`: {}\n\n", d.severity.as_str(), d.code, d.message));
        if let Some(help) = &d.help {
            text.push_str(&format!("help: {help}\n\n"));
        }
    }
    for d in &here {
        if shown.contains(&d.code) {
            continue;
        }
        shown.push(d.code);
        if let Some(rule) = families::rule(d.code) {
            text.push_str("---\n\n");
            text.push_str(rule.doc.trim_end());
            text.push_str("\n\n");
        }
    }
    Some((span, text.trim_end().to_string()))
}
