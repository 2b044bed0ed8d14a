//! The human timeline of a dry-run, built from its events alone (so the JSON stream and the
//! timeline cannot disagree). The core writes the frame every engine shares: the header, each
//! expectation that failed or was never checked, and the `Result:` line; the engine that ran
//! writes its own events in between ([`crate::runtime::engine::Timeline`]).

use std::fmt::Write;

use crate::runtime::events::Event;
use crate::runtime::run::DryRun;
use crate::runtime::text::{escape, text};
use crate::workspace::Workspace;

pub fn timeline(workspace: &Workspace, run: &DryRun) -> String {
    timeline_with(workspace, run, false)
}

/// [`timeline`], with what an engine collapses by default (prompts) in full when `full`.
pub fn timeline_with(workspace: &Workspace, run: &DryRun, full: bool) -> String {
    let mut out = String::new();
    let cassette = run.cassette.map_or_else(|| "(none)".to_string(), |id| workspace.file(id).display.clone());
    let _ = writeln!(out, "dry-run {}    cassette {}", escape(&run.title), escape(&cassette));
    let focus = run.focus.as_ref();
    if let Some(focus) = focus {
        let _ = writeln!(out, "focus: {} {} (its lines are marked ▶)", focus.key, escape(&focus.id));
    }
    let mut focus_ran = false;
    let mut lines = crate::runtime::engine_named(run.engine).timeline();
    if full {
        lines.show_in_full();
    }
    for event in &run.trace.events {
        let start = out.len();
        match event.name {
            "ExpectationOutcome" => {
                lines.flush(&mut out);
                expectation(event, &mut out);
            }
            // The findings follow the timeline, rendered as findings.
            "DryRunMismatch" => lines.flush(&mut out),
            "DryRunSummary" => {
                lines.flush(&mut out);
                if let Some(focus) = focus.filter(|_| !focus_ran) {
                    let _ = writeln!(out, "focus: {} {} never ran in this run", focus.key, escape(&focus.id));
                }
                summary(event, lines.stopped(&run.trace.events), &mut out);
            }
            _ => lines.line(event, &mut out),
        }
        // The lines written for an event of the part in focus (a turn line is written at the
        // next event, which is of the same part: every event of a stage execution names it).
        if let Some(focus) = focus
            && event.str(focus.key) == focus.id
        {
            focus_ran = true;
            mark(&mut out, start);
        }
    }
    lines.flush(&mut out);
    out
}

/// Marks each line of `out` from byte `start` on as part of the focus.
fn mark(out: &mut String, start: usize) {
    let written = out.split_off(start);
    for line in written.split_inclusive('\n') {
        out.push_str("▶ ");
        out.push_str(line);
    }
}

/// An expectation that failed or was never checked (one that held says nothing).
fn expectation(event: &Event, out: &mut String) {
    match event.str("outcome") {
        "failed" => {
            let _ = writeln!(
                out,
                "  expect ✗ {}: expected {}, got {}",
                text(event, "kind"),
                text(event, "expected"),
                text(event, "actual")
            );
        }
        "unchecked" => {
            let _ = writeln!(out, "  expect ✗ never checked: {} ({})", text(event, "expected"), text(event, "why"));
        }
        _ => {}
    }
}

/// The `Result:` line. `stopped` says what stopped a run that ended with an authoring error,
/// when the engine's events say so.
fn summary(event: &Event, stopped: Option<String>, out: &mut String) {
    let data = &event.data;
    if event.num("exitCode") == 2 {
        // No tick for a run an authoring error stopped: say what stopped it.
        let what = stopped.unwrap_or_else(|| {
            let why = data.get("refused").and_then(|r| r.as_str()).unwrap_or("the run could not start");
            format!("not run: {} (an authoring error, exit 2)", escape(why))
        });
        let _ = writeln!(out, "Result: {what} · mismatches {}", event.num("mismatches"));
        return;
    }
    let passed = data["expectations"]["passed"].as_u64().unwrap_or(0);
    let failed = data["expectations"]["failed"].as_u64().unwrap_or(0);
    // A tick only for a run that passed: a mismatch without a failed expectation (a missing
    // fake, an exhausted cassette) fails the run too.
    let mark = if failed == 0 && event.num("exitCode") == 0 { "✓" } else { "✗" };
    let unchecked = data["expectations"]["unchecked"].as_u64().unwrap_or(0);
    let unchecked = if unchecked > 0 { format!(" ({unchecked} never checked)") } else { String::new() };
    let _ = writeln!(
        out,
        "Result: expectations {passed}/{} {mark}{unchecked} · drift {} · mismatches {}",
        passed + failed,
        event.num("drift"),
        event.num("mismatches")
    );
}
