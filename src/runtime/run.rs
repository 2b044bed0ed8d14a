//! A dry-run's outcome, the same for every engine: the event stream, the findings, the
//! expectation counts and the exit code, ended the same way whether the run started or not
//! (one `DryRunMismatch` per finding, then `DryRunSummary`).

use serde_json::json;

use crate::diagnostic::{Diagnostic, FileId, Severity};
use crate::runtime::events::{self, Trace};
use crate::runtime::text;
use crate::workspace::Workspace;

#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Request drift fails the dry-run.
    pub strict: bool,
    /// When the definitions stop the run (a stage fails Init), add their lint errors to the
    /// findings (the CLI does; the `cassette/` rules, which run inside the check, do not).
    pub explain_init: bool,
}

/// The outcome of one dry-run.
#[derive(Debug)]
pub struct DryRun {
    /// The name of the engine that ran it (its timeline writes the events).
    pub engine: &'static str,
    /// What was run: `stage plan` or `machine code-review`.
    pub title: String,
    pub cassette: Option<FileId>,
    pub trace: Trace,
    /// Mismatches and cassette problems (on cassette lines), and lint errors of definitions
    /// that stop the run.
    pub findings: Vec<Diagnostic>,
    pub passed: u32,
    pub failed: u32,
    /// Of the failed expectations, those the run never reached (they count as failed).
    pub unchecked: u32,
    /// An authoring error stopped the run (a stage fails Init, the cassette is unusable).
    pub authoring_error: bool,
    /// Why nothing was replayed, when the run could not start (the summary's `refused`).
    pub refused: Option<String>,
    /// What the run was asked about, when it runs more than that (a stage of a machine): the
    /// timeline marks its lines.
    pub focus: Option<Focus>,
}

/// A part of a run to highlight: the events whose field `key` is `id` (`stage: plan`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Focus {
    /// The event field that names the part (`stage`).
    pub key: &'static str,
    pub id: String,
}

impl DryRun {
    /// 0: ran and every expectation held; 1: a mismatch (or drift under `--strict`); 2: an
    /// authoring error.
    pub fn exit_code(&self) -> u8 {
        if self.authoring_error {
            2
        } else if self.findings.iter().any(|d| d.severity == Severity::Error) {
            1
        } else {
            0
        }
    }

    /// A run that could not start (the cassette is unusable, there is nothing to run): still a
    /// whole event stream, the findings and the summary.
    pub fn failed_to_start(
        workspace: &Workspace,
        engine: &'static str,
        title: String,
        cassette: Option<FileId>,
        findings: Vec<Diagnostic>,
        why: &str,
        focus: Option<Focus>,
    ) -> DryRun {
        let ended = Ending {
            trace: Trace::default(),
            findings,
            passed: 0,
            failed: 0,
            unchecked: 0,
            authoring_error: true,
            focus,
        };
        finish(workspace, engine, ended, title, cassette, Some(why))
    }
}

/// What a run left to report: its events so far, findings and expectation counts.
pub struct Ending {
    pub trace: Trace,
    pub findings: Vec<Diagnostic>,
    pub passed: u32,
    pub failed: u32,
    pub unchecked: u32,
    /// The definitions stopped the run, or nothing could run.
    pub authoring_error: bool,
    /// The part of the run to highlight (the summary names it).
    pub focus: Option<Focus>,
}

/// Why a cassette with structural errors is not replayed.
pub const UNUSABLE: &str = "the cassette has errors, so it cannot be replayed";

/// Ends every dry-run, started or not: one `DryRunMismatch` per finding and the `DryRunSummary`.
pub fn finish(
    workspace: &Workspace,
    engine: &'static str,
    ending: Ending,
    title: String,
    cassette: Option<FileId>,
    refused: Option<&str>,
) -> DryRun {
    let Ending { mut trace, mut findings, passed, failed, unchecked, authoring_error, focus } = ending;
    // Cassette text reaches messages: no control or bidi characters reach a terminal raw.
    for finding in &mut findings {
        workspace.settle_did_you_mean(finding);
        finding.message = text::escape(&finding.message).into_owned();
    }
    // By file and position, as `check` sorts: the stream reads top to bottom of each file.
    findings.sort_by(|a, b| {
        let (fa, fb) = (workspace.file(a.file), workspace.file(b.file));
        (&fa.display, a.span.start, a.code).cmp(&(&fb.display, b.span.start, b.code))
    });
    for finding in &findings {
        let file = workspace.file(finding.file);
        let at = file.lines().line_col(&file.text, finding.span.start);
        trace.emit(
            "DryRunMismatch",
            json!({
                "code": finding.code, "severity": finding.severity.as_str(), "file": file.display,
                "line": at.line, "column": at.column, "message": finding.message,
            }),
        );
    }
    let drift = findings.iter().filter(|d| d.code == crate::registry::cassette::RequestDrift).count();
    let refused = refused.map(str::to_string);
    let mut run =
        DryRun { engine, title, cassette, trace, findings, passed, failed, unchecked, authoring_error, refused, focus };
    let exit = run.exit_code();
    let mut summary = json!({
        "expectations": {"passed": passed, "failed": failed, "unchecked": unchecked},
        "drift": drift,
        "mismatches": run.findings.iter().filter(|d| d.severity == Severity::Error).count(),
        "exitCode": exit,
    });
    if let Some(why) = &run.refused {
        summary["refused"] = json!(why);
    }
    if let Some(focus) = &run.focus {
        summary["focus"] = json!({focus.key: focus.id});
    }
    run.trace.emit("DryRunSummary", summary);
    run
}

/// The event stream of a dry-run that could not even be set up (the target or the cassette
/// cannot be read, a configuration error): its `DryRunSummary` alone, with the `error`.
pub fn error_stream(message: &str) -> String {
    let mut trace = Trace::default();
    trace.emit(
        "DryRunSummary",
        json!({
            "expectations": {"passed": 0, "failed": 0, "unchecked": 0},
            "drift": 0,
            "mismatches": 0,
            "exitCode": 2,
            "error": message,
        }),
    );
    trace.to_json_lines()
}

/// The version every event of the stream carries.
pub fn events_version() -> u32 {
    events::VERSION
}
