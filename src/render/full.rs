//! The human format: source snippets with labels, via codespan-reporting.

use std::io::{self, Write};
use std::ops::Range;

use codespan_reporting::diagnostic::{Diagnostic as Report, Label, Severity as Level};
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term::{self, termcolor::Buffer};

use crate::diagnostic::{Applicability, Diagnostic, FileId, Severity};
use crate::workspace::Workspace;

/// Adapts the workspace to codespan's file database without copying text.
struct Sources<'w>(&'w Workspace);

impl<'w> Files<'w> for Sources<'w> {
    type FileId = FileId;
    type Name = &'w str;
    type Source = &'w str;

    fn name(&'w self, id: FileId) -> Result<&'w str, FilesError> {
        Ok(&self.0.file(id).display)
    }

    fn source(&'w self, id: FileId) -> Result<&'w str, FilesError> {
        Ok(&self.0.file(id).text)
    }

    fn line_index(&'w self, id: FileId, byte_index: usize) -> Result<usize, FilesError> {
        Ok(self.0.file(id).lines().line_of(byte_index))
    }

    /// From the line index, so a byte order mark is no column here either.
    fn column_number(&'w self, id: FileId, _line_index: usize, byte_index: usize) -> Result<usize, FilesError> {
        let file = self.0.file(id);
        Ok(file.lines().line_col(&file.text, byte_index).column)
    }

    fn line_range(&'w self, id: FileId, line_index: usize) -> Result<Range<usize>, FilesError> {
        let file = self.0.file(id);
        if line_index >= file.lines().line_count() {
            return Err(FilesError::LineTooLarge { given: line_index, max: file.lines().line_count() - 1 });
        }
        let start = file.lines().line_start(line_index);
        let end = if line_index + 1 < file.lines().line_count() {
            file.lines().line_start(line_index + 1)
        } else {
            file.text.len()
        };
        Ok(start..end)
    }
}

pub fn render(out: &mut dyn Write, workspace: &Workspace, diagnostics: &[Diagnostic], color: bool) -> io::Result<()> {
    let files = Sources(workspace);
    let config = term::Config::default();
    for d in diagnostics {
        let mut buffer = if color { Buffer::ansi() } else { Buffer::no_color() };
        term::emit_to_write_style(&mut buffer, &config, &files, &convert(d)).map_err(io::Error::other)?;
        out.write_all(&own_severity_name(buffer.as_slice(), d.severity))?;
    }
    Ok(())
}

/// codespan-reporting names its levels `note` and `help`; every other format, `rules` and the
/// config say `info` and `hint`. The header leads each report (after color codes at most), so
/// its first `note[` or `help[` is the name, which is swapped for one of the same length.
fn own_severity_name(report: &[u8], severity: Severity) -> std::borrow::Cow<'_, [u8]> {
    let theirs: &[u8] = match severity {
        Severity::Info => b"note[",
        Severity::Hint => b"help[",
        Severity::Error | Severity::Warning => return report.into(),
    };
    let header = report.iter().position(|b| *b == b'\n').unwrap_or(report.len());
    let Some(at) = report[..header].windows(theirs.len()).position(|w| w == theirs) else { return report.into() };
    let mut named = report.to_vec();
    named[at..at + 4].copy_from_slice(severity.as_str().as_bytes());
    named.into()
}

fn convert(d: &Diagnostic) -> Report<FileId> {
    let level = match d.severity {
        Severity::Error => Level::Error,
        Severity::Warning => Level::Warning,
        Severity::Info => Level::Note,
        Severity::Hint => Level::Help,
    };
    let mut labels = vec![Label::primary(d.file, d.span.start..d.span.end)];
    labels.extend(
        d.related
            .iter()
            .map(|r| Label::secondary(r.file.unwrap_or(d.file), r.span.start..r.span.end).with_message(&r.message)),
    );
    let mut notes = Vec::new();
    if let Some(help) = &d.help {
        notes.push(format!("help: {help}"));
    }
    match &d.fix {
        Some(fix) if fix.applicability == Applicability::Safe => notes.push(format!("safe fix: {}", fix.title)),
        Some(fix) => notes.push(format!("unsafe fix: {} (applied with `--unsafe-fixes`)", fix.title)),
        None => {}
    }
    Report::new(level).with_code(d.code).with_message(&d.message).with_labels(labels).with_notes(notes)
}
