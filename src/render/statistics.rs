//! `check --statistics`: one line per code with its count, sorted by count (then code), and
//! `--show-fixes`: the fixes findings offer, per file.

use std::io::{self, Write};

use serde::Serialize;

use crate::diagnostic::{Applicability, Diagnostic};
use crate::workspace::Workspace;

/// One code's line.
#[derive(Serialize)]
struct Count {
    code: &'static str,
    count: usize,
    /// `safe` when `--fix` fixes some of them, else `unsafe` when only `--unsafe-fixes` does,
    /// else absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<Applicability>,
    summary: &'static str,
}

/// Writes the counts as aligned text: count, code, `[*]` (some have a safe fix) or `[-]` (only
/// unsafe fixes) or blanks, and the rule's summary.
pub fn render(out: &mut dyn Write, diagnostics: &[Diagnostic]) -> io::Result<()> {
    let counts = counts(diagnostics);
    let count_width = counts.iter().map(|c| c.count.to_string().len()).max().unwrap_or(1);
    let code_width = counts.iter().map(|c| c.code.len()).max().unwrap_or(0);
    for c in &counts {
        let marker = match c.fix {
            Some(Applicability::Safe) => "[*]",
            Some(Applicability::Unsafe) => "[-]",
            None => "   ",
        };
        writeln!(out, "{:>count_width$}  {:<code_width$}  {marker} {}", c.count, c.code, c.summary)?;
    }
    Ok(())
}

/// The counts as a JSON array of `{code, count, fix?, summary}`.
pub fn render_json(out: &mut dyn Write, diagnostics: &[Diagnostic]) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &counts(diagnostics)).map_err(io::Error::other)?;
    writeln!(out)
}

fn counts(diagnostics: &[Diagnostic]) -> Vec<Count> {
    let mut counts: Vec<Count> = Vec::new();
    for d in diagnostics {
        let fix = d.fix.as_ref().map(|f| f.applicability);
        match counts.iter_mut().find(|c| c.code == d.code) {
            Some(c) => {
                c.count += 1;
                c.fix = best(c.fix, fix);
            }
            None => counts.push(Count {
                code: d.code,
                count: 1,
                fix,
                summary: crate::registry::rule(d.code).map_or("", |r| r.summary()),
            }),
        }
    }
    counts.sort_by(|a, b| b.count.cmp(&a.count).then(a.code.cmp(b.code)));
    counts
}

fn best(a: Option<Applicability>, b: Option<Applicability>) -> Option<Applicability> {
    match (a, b) {
        (Some(Applicability::Safe), _) | (_, Some(Applicability::Safe)) => Some(Applicability::Safe),
        (Some(x), _) | (_, Some(x)) => Some(x),
        (None, None) => None,
    }
}

/// `--show-fixes` without `--fix`: the fixes the findings offer, per file, in finding order,
/// each with its position, code and title, unsafe ones marked.
pub fn available_fixes(out: &mut dyn Write, workspace: &Workspace, diagnostics: &[Diagnostic]) -> io::Result<()> {
    let with_fix: Vec<&Diagnostic> = crate::render::with_distinct_fixes(diagnostics).collect();
    if with_fix.is_empty() {
        return writeln!(out, "No fixes available.");
    }
    writeln!(out, "Fixes available ({}):", with_fix.len())?;
    let mut current = None;
    for d in with_fix {
        let file = workspace.file(d.file);
        if current != Some(d.file) {
            writeln!(out, "  {}:", file.display)?;
            current = Some(d.file);
        }
        let Some(fix) = &d.fix else { continue };
        let at = file.lines().line_col(&file.text, d.span.start);
        let mark = if fix.applicability == Applicability::Unsafe { " (unsafe: `--unsafe-fixes`)" } else { "" };
        writeln!(out, "    {}:{} {}: {}{mark}", at.line, at.column, d.code, fix.title)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::{Edit, FileId};
    use crate::source::Span;

    fn finding(code: &'static str, fix: Option<Applicability>) -> Diagnostic {
        let d = Diagnostic::new(code, FileId(0), Span::empty(0), "m");
        match fix {
            Some(a) => d.with_fix("f", a, vec![Edit { span: Span::empty(0), replacement: String::new() }]),
            None => d,
        }
    }

    #[test]
    fn counts_sort_by_count_and_mark_fixes() {
        let diagnostics = [
            finding("sm/UnknownTool", Some(Applicability::Unsafe)),
            finding("sm/UnknownField", None),
            finding("sm/UnknownField", Some(Applicability::Safe)),
            finding("sm/UnknownTool", Some(Applicability::Unsafe)),
            finding("sm/UnknownTool", None),
            finding("sm/FieldType", None),
        ];
        let mut out = Vec::new();
        render(&mut out, &diagnostics).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("3  sm/UnknownTool   [-] "), "{text}");
        assert!(lines[1].starts_with("2  sm/UnknownField  [*] "), "{text}");
        assert!(lines[2].starts_with("1  sm/FieldType         "), "{text}");
    }
}
