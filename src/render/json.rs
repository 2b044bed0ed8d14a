//! Versioned JSON output (`version: 1`). Its structs are its own, so internal changes do not
//! change the format. Fields are only ever added (`notes`, the assumptions of the run, came
//! later and is left out when empty), so `version` stays 1.

use std::io::{self, Write};

use serde::Serialize;

use crate::diagnostic::{Applicability, Diagnostic, Severity};
use crate::families::Note;
use crate::render::{Summary, range, rule_url};
use crate::source::{LineCol, Span};
use crate::workspace::{SourceFile, Workspace};

#[derive(Serialize)]
struct Output<'a> {
    version: u32,
    diagnostics: Vec<JsonDiagnostic<'a>>,
    summary: Summary,
    /// What the run assumed (the upstream release each family linted for, and why).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    notes: Vec<JsonNote<'a>>,
}

#[derive(Serialize)]
struct JsonNote<'a> {
    family: &'a str,
    message: &'a str,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    path: &'a str,
    code: &'static str,
    severity: Severity,
    message: &'a str,
    range: Range,
    related: Vec<JsonRelated<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    help: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<JsonFix<'a>>,
    url: String,
}

#[derive(Serialize)]
struct JsonRelated<'a> {
    path: &'a str,
    message: &'a str,
    range: Range,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    title: &'a str,
    /// Set when every edit applies to one other file than the diagnostic's.
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    applicability: Applicability,
    edits: Vec<JsonEdit<'a>>,
}

#[derive(Serialize)]
struct JsonEdit<'a> {
    /// Set when the fix edits several files: the file of this edit.
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    range: Range,
    replacement: &'a str,
}

#[derive(Serialize)]
struct Range {
    start: Position,
    end: Position,
}

#[derive(Serialize)]
struct Position {
    line: usize,
    column: usize,
}

impl From<LineCol> for Position {
    fn from(at: LineCol) -> Position {
        Position { line: at.line, column: at.column }
    }
}

fn to_range(file: &SourceFile, span: Span) -> Range {
    let (start, end) = range(file, span);
    Range { start: start.into(), end: end.into() }
}

pub fn render(
    out: &mut dyn Write,
    workspace: &Workspace,
    diagnostics: &[Diagnostic],
    notes: &[Note],
) -> io::Result<()> {
    let output = Output {
        version: 1,
        // What a baseline accepts is counted in the summary, not listed.
        diagnostics: diagnostics.iter().filter(|d| !d.baselined).map(|d| convert(workspace, d)).collect(),
        summary: Summary::new(workspace, diagnostics),
        notes: notes.iter().map(|n| JsonNote { family: n.family, message: &n.message }).collect(),
    };
    serde_json::to_writer_pretty(&mut *out, &output)?;
    writeln!(out)
}

fn convert<'a>(workspace: &'a Workspace, d: &'a Diagnostic) -> JsonDiagnostic<'a> {
    let file = workspace.file(d.file);
    JsonDiagnostic {
        path: &file.display,
        code: d.code,
        severity: d.severity,
        message: &d.message,
        range: to_range(file, d.span),
        related: d
            .related
            .iter()
            .map(|r| {
                let other = workspace.file(r.file.unwrap_or(d.file));
                JsonRelated { path: &other.display, message: &r.message, range: to_range(other, r.span) }
            })
            .collect(),
        help: d.help.as_deref(),
        fix: d.fix.as_ref().map(|fix| {
            let files = fix.files();
            let several = files.len() > 1;
            let other = match files.as_slice() {
                [only] if *only != d.file => Some(workspace.file(*only).display.as_str()),
                _ => None,
            };
            JsonFix {
                title: &fix.title,
                path: other,
                applicability: fix.applicability,
                edits: fix
                    .edits
                    .iter()
                    .map(|(id, e)| {
                        let edited = workspace.file(*id);
                        JsonEdit {
                            path: several.then_some(edited.display.as_str()),
                            range: to_range(edited, e.span),
                            replacement: &e.replacement,
                        }
                    })
                    .collect(),
            }
        }),
        url: rule_url(file.config.docs_url.as_deref(), d.code),
    }
}

/// One finding in this format's shape, for reports that list findings inside their own
/// structure (`dry-run --all --format json`).
pub fn finding(workspace: &Workspace, d: &Diagnostic) -> serde_json::Value {
    serde_json::to_value(convert(workspace, d)).unwrap_or_default()
}
