//! Quick fixes: each finding's own fix, and "Suppress `code` on this line"; and "fix all": the
//! safe fixes of a document in one edit. No action is offered that would leave a file with more
//! syntax errors than it has (the guard of `check --fix`).

use crate::diagnostic::suppress::multi_line_scalars;
use crate::diagnostic::{Diagnostic, Edit, FileId};
use crate::families::stagelint::{InvalidSuppression, UnusedSuppression};
use crate::source::Span;
use crate::workspace::{FileKind, SourceFile, Workspace};

/// One code action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    pub title: String,
    /// Each edit with the file it applies to.
    pub edits: Vec<(FileId, Edit)>,
    /// Index of the diagnostic it fixes, in the slice given.
    pub diagnostic: usize,
    /// A fix the diagnostic offered (rather than a suppression).
    pub preferred: bool,
}

/// Actions for the findings of `file` that overlap `range`.
pub fn actions_for(workspace: &Workspace, diagnostics: &[Diagnostic], file: &SourceFile, range: Span) -> Vec<Action> {
    let mut out = Vec::new();
    for (index, d) in diagnostics.iter().enumerate() {
        if d.file != file.id || d.span.end < range.start || d.span.start > range.end {
            continue;
        }
        if let Some(fix) = &d.fix
            && !breaks_syntax(workspace, &fix.edits)
        {
            out.push(Action { title: fix.title.clone(), edits: fix.edits.clone(), diagnostic: index, preferred: true });
        }
        // Suppressing a suppression finding would only add another unused suppression; their own
        // fix (removing it) is the action.
        if d.code == UnusedSuppression || d.code == InvalidSuppression {
            continue;
        }
        let Some(edit) = suppress_edit(file, d) else { continue };
        let title = format!("Suppress `{}` on this line", d.code);
        let edits = vec![(file.id, edit)];
        // Two findings of one code on one line would offer the same comment twice.
        if out.iter().any(|a| a.title == title && a.edits == edits) || breaks_syntax(workspace, &edits) {
            continue;
        }
        out.push(Action { title, edits, diagnostic: index, preferred: false });
    }
    out
}

/// The edits of every safe fix among the findings of `file` that edits only `file`, as one
/// round of `check --fix` chooses them (in finding order, none overlapping, none breaking the
/// syntax): what `source.fixAll` applies on save. Empty when there is nothing to fix.
pub fn fix_all(workspace: &Workspace, diagnostics: &[Diagnostic], file: &SourceFile) -> Vec<Edit> {
    let own: Vec<Diagnostic> = diagnostics
        .iter()
        .filter(|d| d.file == file.id)
        .filter(|d| d.fix.as_ref().is_some_and(|f| f.files() == [file.id]))
        .cloned()
        .collect();
    let mut plan = crate::fix::plan(workspace, &own, false);
    let mut edits = plan.edits.remove(&file.id).unwrap_or_default();
    edits.sort_by_key(|e| (e.span.start, e.span.end));
    edits
}

/// Whether `edits` (each with its file) would leave any file with more syntax errors.
fn breaks_syntax(workspace: &Workspace, edits: &[(FileId, Edit)]) -> bool {
    let mut files: Vec<FileId> = edits.iter().map(|(file, _)| *file).collect();
    files.sort();
    files.dedup();
    files.into_iter().any(|id| {
        let own: Vec<Edit> = edits.iter().filter(|(file, _)| *file == id).map(|(_, edit)| edit.clone()).collect();
        crate::fix::breaks_syntax(workspace.file(id), &own)
    })
}

/// A suppression comment on the line above the finding, in the syntax of the region it is in.
/// Inside a multi-line YAML scalar (block, quoted or plain) a comment line would be part of the
/// string, so it goes above the key that owns the scalar (a suppression there covers all of it).
fn suppress_edit(file: &SourceFile, d: &Diagnostic) -> Option<Edit> {
    let text = &file.text;
    let (style, region) = comment_region(file, d.span.start)?;
    let mut line = file.lines.line_of(d.span.start);
    if matches!(style, Style::Hash)
        && let Some(scalar) = multi_line_scalars(text, &file.lines, region).into_iter().find(|b| b.holds(line))
    {
        line = scalar.header;
    }
    let start = file.lines.line_start(line);
    let indent: String = text[start..].chars().take_while(|c| *c == ' ' || *c == '\t').collect();
    let newline = match file.lines.line_break(text, line) {
        "" => "\n",
        brk => brk,
    };
    let comment = match style {
        Style::Hash => format!("{indent}# stagelint: ignore[{}]{newline}", d.code),
        Style::Html => format!("{indent}<!-- stagelint: ignore[{}] -->{newline}", d.code),
    };
    Some(Edit { span: Span::empty(start), replacement: comment })
}

enum Style {
    Hash,
    Html,
}

/// The comment syntax at `offset` and the region using it (the same places `check` reads
/// suppressions from).
fn comment_region(file: &SourceFile, offset: usize) -> Option<(Style, Span)> {
    let whole = Span::new(0, file.text.len());
    match file.kind {
        FileKind::Stage | FileKind::Skill => {
            let fm = crate::source::frontmatter::split(&file.text)?;
            if fm.yaml.contains(offset) && offset > fm.open_fence.end {
                Some((Style::Hash, fm.yaml))
            } else if fm.close_fence.is_some_and(|c| offset >= c.end) {
                Some((Style::Html, fm.body))
            } else {
                None
            }
        }
        FileKind::StateMachine if file.path.extension().is_none_or(|e| e != "json") => Some((Style::Hash, whole)),
        FileKind::Workflow => Some((Style::Hash, whole)),
        FileKind::WorkflowPrompt => Some((Style::Html, whole)),
        _ => None,
    }
}
