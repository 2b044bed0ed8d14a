//! Output formats. Each takes the workspace (for paths and text) and the diagnostics.

pub mod concise;
pub mod full;
pub mod github;
pub mod json;
pub mod sarif;
pub mod statistics;
pub mod sweep;

use std::collections::HashSet;

use crate::diagnostic::{Applicability, Diagnostic, FileId, Severity};
use crate::source::{LineCol, Span};
use crate::workspace::{SourceFile, Workspace};

/// Counts shown after a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    pub files: usize,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    pub hints: usize,
    /// Fixes `--fix` applies: each counted once, however many findings offer it.
    pub fixable: usize,
    /// Fixes only `--fix --unsafe-fixes` applies, each counted once.
    pub unsafe_fixable: usize,
    /// Findings a baseline accepts, counted here only (they are not reported).
    #[serde(skip_serializing_if = "is_zero")]
    pub baselined: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Summary {
    pub fn new(workspace: &Workspace, diagnostics: &[Diagnostic]) -> Summary {
        let mut summary = Summary { files: workspace.reported_files().count(), ..Summary::default() };
        for d in diagnostics {
            if d.baselined {
                summary.baselined += 1;
                continue;
            }
            match d.severity {
                Severity::Error => summary.errors += 1,
                Severity::Warning => summary.warnings += 1,
                Severity::Info => summary.infos += 1,
                Severity::Hint => summary.hints += 1,
            }
        }
        for fix in with_distinct_fixes(diagnostics).filter_map(|d| d.fix.as_ref()) {
            match fix.applicability {
                Applicability::Safe => summary.fixable += 1,
                Applicability::Unsafe => summary.unsafe_fixable += 1,
            }
        }
        summary
    }

    /// One closing line for people.
    pub fn line(&self) -> String {
        let checked = format!("{} file{} checked", self.files, plural(self.files));
        let parts: Vec<String> =
            [(self.errors, "error"), (self.warnings, "warning"), (self.infos, "info"), (self.hints, "hint")]
                .into_iter()
                .filter(|(n, _)| *n > 0)
                .map(|(n, what)| format!("{n} {what}{}", plural(n)))
                .collect();
        let checked = match self.baselined {
            0 => checked,
            n => format!("{checked}; {n} baselined"),
        };
        if parts.is_empty() {
            return format!("No findings ({checked}).");
        }
        let fixes = match (self.fixable, self.unsafe_fixable) {
            (0, 0) => String::new(),
            (0, n) => format!(" {n} fixable with `--fix --unsafe-fixes`."),
            (n, 0) => format!(" {n} fixable with `--fix`."),
            (n, more) => format!(" {n} fixable with `--fix` ({more} more with `--unsafe-fixes`)."),
        };
        format!("Found {} ({checked}).{fixes}", parts.join(", "))
    }
}

/// The findings that offer a fix, each fix once: two findings may offer the same edits (a
/// prompt shared by two workflows is reported for each), which `--fix` applies once. In finding
/// order, each fix with the first finding that offers it.
pub fn with_distinct_fixes(diagnostics: &[Diagnostic]) -> impl Iterator<Item = &Diagnostic> {
    let mut seen: HashSet<Vec<(FileId, Span, &str)>> = HashSet::new();
    diagnostics.iter().filter(move |d| {
        // A baselined finding's fix is never applied (`--fix` leaves it alone): none to count.
        let Some(fix) = d.fix.as_ref().filter(|_| !d.baselined) else { return false };
        let mut edits: Vec<(FileId, Span, &str)> =
            fix.edits.iter().map(|(file, edit)| (*file, edit.span, edit.replacement.as_str())).collect();
        edits.sort_unstable();
        seen.insert(edits)
    })
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// 1-based start and end positions of a span (columns in characters).
pub fn range(file: &SourceFile, span: Span) -> (LineCol, LineCol) {
    (file.lines().line_col(&file.text, span.start), file.lines().line_col(&file.text, span.end))
}

/// Where a rule's page is, for links in JSON, SARIF and editors: under the `[output] docs-url`
/// base when one is set, else under the published repository (`registry::docs`).
pub fn rule_url(docs_base: Option<&str>, code: &str) -> String {
    crate::registry::docs::url(docs_base.unwrap_or(crate::registry::docs::DEFAULT_BASE), code)
}
