//! The stage engine's lines of the timeline: one line per turn with what the model did and
//! what the runtime answered, then the Act ending, the Assert outcome and what Next chose.

use std::fmt::Write;

use crate::runtime::engine::Timeline;
use crate::runtime::events::Event;
use crate::runtime::text::{esc, escape, pointer, text};

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

/// The stage timeline's state between events.
#[derive(Default)]
pub(super) struct StageLines {
    turn: TurnLine,
    /// `maxAttempts` and `turnCap` of the stage being executed.
    caps: (u64, u64),
    stage: String,
    /// The file of a stage whose Setup failed, shown on its first `FAILED` line.
    failed_file: Option<String>,
}

impl Timeline for StageLines {
    fn line(&mut self, event: &Event, out: &mut String) {
        if event.name != "ProviderResponse" && !is_turn_detail(event) {
            self.turn.flush(out);
        }
        line(event, out, &mut self.turn, &mut self.caps, (&mut self.stage, &mut self.failed_file));
    }

    fn flush(&mut self, out: &mut String) {
        self.turn.flush(out);
    }

    fn stopped(&self, events: &[Event]) -> Option<String> {
        let failed = events.iter().find(|e| e.name == "StageInitFailed")?;
        Some(format!(
            "stopped: stage `{}` failed {} (an authoring error, exit 2)",
            text(failed, "stage"),
            text(failed, "phase")
        ))
    }
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
        _ => {}
    }
}
