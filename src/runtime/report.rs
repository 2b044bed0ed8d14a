//! The human timeline of a dry-run, built from its events alone (so the JSON stream and the
//! timeline cannot disagree): one line per turn with what the model did and what the runtime
//! answered, then the Act ending, the Assert outcome and what Next chose.

use std::borrow::Cow;
use std::fmt::Write;

use crate::runtime::DryRun;
use crate::runtime::events::Event;
use crate::workspace::Workspace;

/// A turn line being assembled.
#[derive(Default)]
struct TurnLine {
    number: u64,
    calls: Vec<String>,
    text_only: bool,
    verdicts: Vec<String>,
}

impl TurnLine {
    fn flush(&mut self, out: &mut String) {
        if self.number == 0 {
            return;
        }
        let what = if self.text_only { "text only".to_string() } else { self.calls.join(" + ") };
        let verdicts = if self.verdicts.is_empty() { "-".to_string() } else { self.verdicts.join(", ") };
        let _ = writeln!(out, "  t{:<3} {:<34} {}", self.number, what, verdicts);
        *self = TurnLine::default();
    }
}

pub fn timeline(workspace: &Workspace, run: &DryRun) -> String {
    let mut out = String::new();
    let cassette = run.cassette.map_or_else(|| "(none)".to_string(), |id| workspace.file(id).display.clone());
    let _ = writeln!(out, "dry-run {}    cassette {}", escape(&run.title), escape(&cassette));
    let mut turn = TurnLine::default();
    let mut caps = (0u64, 0u64);
    let mut stage = String::new();
    // The file of a stage whose Setup failed, shown on its first `FAILED` line.
    let mut failed_file = None;
    for event in &run.trace.events {
        if event.name != "ProviderResponse" && !is_turn_detail(event) {
            turn.flush(&mut out);
        }
        if event.name == "DryRunSummary" && event.num("exitCode") == 2 {
            // No tick for a run an authoring error stopped: say what stopped it.
            let failed = run.trace.events.iter().find(|e| e.name == "StageInitFailed");
            let what = match failed {
                Some(e) => format!(
                    "stopped: stage `{}` failed {} (an authoring error, exit 2)",
                    text(e, "stage"),
                    text(e, "phase")
                ),
                None => {
                    let why = event.data.get("refused").and_then(|r| r.as_str()).unwrap_or("the run could not start");
                    format!("not run: {} (an authoring error, exit 2)", escape(why))
                }
            };
            let _ = writeln!(out, "Result: {what} · mismatches {}", event.num("mismatches"));
            continue;
        }
        line(event, &mut out, &mut turn, &mut caps, (&mut stage, &mut failed_file));
    }
    turn.flush(&mut out);
    out
}

/// `text` with control and bidirectional-formatting characters escaped (`\u{1b}`), so
/// cassette-supplied strings cannot move the cursor, recolor or reorder a terminal.
pub fn escape(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{061c}')
    };
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A string field of an event, escaped for the terminal.
fn text<'e>(event: &'e Event, key: &str) -> Cow<'e, str> {
    escape(event.str(key))
}

/// A JSON string, escaped for the terminal.
fn esc(value: &serde_json::Value) -> Cow<'_, str> {
    escape(value.as_str().unwrap_or(""))
}

/// A JSON pointer as the timeline shows it: the root is `(root)`.
fn pointer(at: &str) -> Cow<'_, str> {
    if at.is_empty() { Cow::Borrowed("(root)") } else { escape(at) }
}

fn is_turn_detail(event: &Event) -> bool {
    matches!(
        event.name,
        "SteeringAppended"
            | "BatchRejected"
            | "CompletionAccepted"
            | "CompletionParseFailed"
            | "GrantRequested"
            | "GrantApproved"
            | "ToolCallDenied"
            | "ToolCallStarted"
            | "ToolCallSucceeded"
            | "ToolCallFailed"
            | "ToolCallInvalid"
    )
}

fn line(
    event: &Event,
    out: &mut String,
    turn: &mut TurnLine,
    caps: &mut (u64, u64),
    (stage, failed_file): (&mut String, &mut Option<String>),
) {
    let data = &event.data;
    match event.name {
        "MachineStart" => {
            let _ = writeln!(out, "machine: entry {}", text(event, "entry"));
        }
        "StageSetup" => {
            *stage = text(event, "stage").to_string();
            *caps = (event.num("maxAttempts"), event.num("turnCap"));
            let ids = &data["ids"];
            // A failed Setup shows its reasons as the `StageInitFailed` lines that follow, the
            // first naming the file.
            if text(event, "outcome") == "failed" {
                *failed_file = Some(text(event, "file").into_owned());
            } else {
                let _ = writeln!(
                    out,
                    "{stage}  Setup  ok   {}  workflowRunId={} stageExecutionId={} upstream={}",
                    text(event, "file"),
                    esc(&ids["workflowRunId"]),
                    esc(&ids["stageExecutionId"]),
                    event.num("upstream")
                );
            }
        }
        "StageInitFailed" => {
            let file = failed_file.take().map(|f| format!("{f}  ")).unwrap_or_default();
            let _ = writeln!(
                out,
                "{stage}  {:<6} FAILED  {file}{}: {}",
                text(event, "phase"),
                text(event, "reason"),
                text(event, "detail")
            );
        }
        "StageInitRendered" => {
            let count = data["placeholders"].as_array().map_or(0, Vec::len);
            let empty = data["empty"].as_array().map_or(0, Vec::len);
            let empty = if empty > 0 { format!(", {empty} rendered empty") } else { String::new() };
            let _ =
                writeln!(out, "{stage}  Init   ok   body {} chars, {count} placeholder(s){empty}", event.num("length"));
        }
        "StageCheckGate" => {
            let _ = writeln!(
                out,
                "{stage} — attempt {}/{} (turnCap {})  CheckGate {}",
                event.num("attempt"),
                caps.0,
                caps.1,
                text(event, "outcome")
            );
        }
        "ProviderResponse" => {
            turn.flush(out);
            turn.number = event.num("turn");
            let calls = data["toolCalls"].as_array().cloned().unwrap_or_default();
            turn.text_only = calls.is_empty();
            turn.calls = calls.iter().map(|c| format!("{}({})", esc(&c["name"]), esc(&c["id"]))).collect();
        }
        "ProviderError" => {
            let _ = writeln!(
                out,
                "  t{:<3} provider error {} {}",
                event.num("turn"),
                text(event, "class"),
                text(event, "code")
            );
        }
        "SteeringAppended" => turn.verdicts.push("STEER steering message appended".into()),
        "BatchRejected" => turn.verdicts.push("REJECTED completion tool must be the sole call".into()),
        "CompletionAccepted" => turn.verdicts.push(format!("DONE {}", text(event, "call"))),
        "CompletionParseFailed" => {
            let first = data["errors"].as_array().and_then(|e| e.first()).cloned().unwrap_or_default();
            let at = first["at"].as_str().unwrap_or("");
            turn.verdicts.push(format!("PARSE {}: {}", pointer(at), esc(&first["msg"])));
        }
        "GrantApproved" => turn.verdicts.push(format!("{} APPROVED via {}", text(event, "call"), text(event, "via"))),
        "ToolCallDenied" => turn.verdicts.push(format!(
            "{} DENIED not in allowedTools; grantStageTool → {} ({})",
            text(event, "call"),
            text(event, "decision"),
            text(event, "via")
        )),
        "ToolCallSucceeded" => turn.verdicts.push(format!(
            "{} ok result {} B ({})",
            text(event, "call"),
            event.num("bytes"),
            text(event, "via")
        )),
        "ToolCallFailed" => turn.verdicts.push(format!(
            "{} tool error {} B ({})",
            text(event, "call"),
            event.num("bytes"),
            text(event, "via")
        )),
        "ToolCallInvalid" => turn.verdicts.push(format!(
            "{} INVALID {}; error result {} B, not run",
            text(event, "call"),
            text(event, "reason"),
            event.num("bytes")
        )),
        "ActEnded" => {
            let _ = writeln!(out, "  Act {} {}/{}", text(event, "end"), event.num("turns"), event.num("turnCap"));
        }
        "StageAssertOutcome" => {
            let (reason, via) = (text(event, "reason"), text(event, "via"));
            // A gated attempt's outcome comes from the gate: "(checkGate)", not said twice.
            let why = if reason == via { reason.to_string() } else { format!("{reason}, {via}") };
            let _ = writeln!(
                out,
                "  Assert {} ({why}) attempt {}/{}",
                text(event, "verdict"),
                event.num("attempt"),
                caps.0
            );
        }
        "RetryAppended" => {
            // After a gated attempt Act never ran, so it is not "re-entered".
            let line = if text(event, "reason") == "checkGate" {
                "  retry: reason appended; the next attempt starts at CheckGate on the same transcript"
            } else {
                "  retry: reason appended, Act re-entered on the same transcript"
            };
            let _ = writeln!(out, "{line}");
        }
        "StageExited" => {
            let result = &data["result"];
            let _ = writeln!(
                out,
                "{stage}  Exit   verdict={} capHit={} attempts={} reason={}",
                esc(&result["verdict"]),
                result["capHit"],
                result["attemptCount"],
                esc(&result["reason"])
            );
        }
        "StageNext" => {
            let next = &data["next"];
            let evaluated = data["evaluated"] == true;
            let chosen = if next.is_null() {
                if evaluated { "none: the run ends here" } else { "none" }.to_string()
            } else {
                let stages: Vec<&str> =
                    next["nextStages"].as_array().into_iter().flatten().filter_map(|s| s.as_str()).collect();
                let mut chosen = format!("{} [{}]", esc(&next["execution"]), escape(&stages.join(", ")));
                if let Some(join) = next["join"].as_str() {
                    chosen.push_str(&format!(" join {}", escape(join)));
                }
                chosen
            };
            let how = match (data["evaluated"] == true, data.get("reason").and_then(|r| r.as_str())) {
                (true, _) => String::new(),
                (false, Some(reason)) => format!(" (not evaluated: {})", escape(reason)),
                (false, None) => " (not run: single-stage dry-run)".to_string(),
            };
            let _ = writeln!(out, "{}  Next   {chosen}{how}", text(event, "stage"));
        }
        "ParallelStart" => {
            let siblings: Vec<&str> =
                data["siblings"].as_array().into_iter().flatten().filter_map(|s| s.as_str()).collect();
            let _ = writeln!(out, "parallel: {} on a frozen context", escape(&siblings.join(" ∥ ")));
        }
        "ExpectationOutcome" => match event.str("outcome") {
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
        },
        "StageCancelled" => {
            let _ = writeln!(out, "{}  cancelled ({})", text(event, "stage"), text(event, "reason"));
        }
        "MachineFinished" => {
            let mut finished = format!("machine: {}", text(event, "outcome"));
            for key in ["code", "failedSiblingId", "stage", "reason"] {
                if let Some(value) = data.get(key).and_then(|v| v.as_str()) {
                    finished.push_str(&format!(" {key}={}", escape(value)));
                }
            }
            let _ = writeln!(out, "{finished}");
        }
        "DryRunSummary" => {
            let passed = data["expectations"]["passed"].as_u64().unwrap_or(0);
            let failed = data["expectations"]["failed"].as_u64().unwrap_or(0);
            // A tick only for a run that passed: a mismatch without a failed expectation (a
            // missing fake, an exhausted cassette) fails the run too.
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
        _ => {}
    }
}
