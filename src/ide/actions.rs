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
        let Some((title, edit)) = suppress_edit(file, d) else { continue };
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

/// A suppression comment for the finding, with the action's title. On the line above it, in the
/// syntax of the region it is in; inside a multi-line YAML scalar (block, quoted or plain) a
/// comment line would be part of the string, so it goes above the key that owns the scalar (a
/// suppression there covers all of it). A finding in a stage's body is suppressed from the
/// frontmatter (`ignore-body[...]`): a comment in the body would be sent to the model.
fn suppress_edit(file: &SourceFile, d: &Diagnostic) -> Option<(String, Edit)> {
    let text = &file.text;
    let (style, region) = comment_region(file, d.span.start)?;
    if matches!(style, Style::Body) {
        return body_suppress_edit(file, d.code).map(|edit| (format!("Suppress `{}` in the body", d.code), edit));
    }
    let mut line = file.lines().line_of(d.span.start);
    if matches!(style, Style::Hash)
        && let Some(scalar) = multi_line_scalars(text, file.lines(), region).into_iter().find(|b| b.holds(line))
    {
        line = scalar.header;
    }
    // After a byte order mark, which must stay the first thing in the file.
    let start = file.lines().column_start(line);
    let indent: String = text[start..].chars().take_while(|c| *c == ' ' || *c == '\t').collect();
    let newline = newline_of(file, line);
    let comment = match style {
        Style::Hash => format!("{indent}# stagelint: ignore[{}]{newline}", d.code),
        _ => format!("{indent}<!-- stagelint: ignore[{}] -->{newline}", d.code),
    };
    Some((format!("Suppress `{}` on this line", d.code), Edit { span: Span::empty(start), replacement: comment }))
}

/// `code` added to the frontmatter's `# stagelint: ignore-body[...]` line, or that line added
/// before the closing `---`.
fn body_suppress_edit(file: &SourceFile, code: &str) -> Option<Edit> {
    let text = &file.text;
    let fm = crate::source::frontmatter::split(text)?;
    let close = fm.close_fence?;
    const FORM: &str = "# stagelint: ignore-body[";
    let first = file.lines().line_of(fm.yaml.start);
    let last = file.lines().line_of(close.start);
    for line in first..last {
        let (start, end) = (file.lines().line_start(line), file.lines().line_end(text, line));
        let content = &text[start..end];
        if let Some(at) = content.find(FORM)
            && let Some(close_at) = content[at..].find(']')
        {
            let list = &content[at + FORM.len()..at + close_at];
            if list.split(',').any(|c| c.trim() == code) {
                return None;
            }
            let separator = if list.trim().is_empty() { "" } else { ", " };
            return Some(Edit { span: Span::empty(start + at + close_at), replacement: format!("{separator}{code}") });
        }
    }
    let newline = newline_of(file, last.saturating_sub(1));
    Some(Edit { span: Span::empty(close.start), replacement: format!("{FORM}{code}]{newline}") })
}

/// The line break `line` ends with (`\n` when it ends the text).
fn newline_of(file: &SourceFile, line: usize) -> &'static str {
    match file.lines().line_break(&file.text, line) {
        "\r\n" => "\r\n",
        "\r" => "\r",
        _ => "\n",
    }
}

enum Style {
    Hash,
    Html,
    /// A stage's (or skill's) markdown body: suppressed from the frontmatter.
    Body,
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
                Some((Style::Body, fm.body))
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
