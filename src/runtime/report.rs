//! The human timeline of a dry-run, built from its events alone (so the JSON stream and the
//! timeline cannot disagree): one line per turn with what the model did and what the runtime
//! answered, then the Act ending, the Assert outcome and what Next chose.

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
    let cassette = run.cassette.map(|id| workspace.file(id).display.clone()).unwrap_or_default();
    let _ = writeln!(out, "dry-run {}    cassette {}", run.title, cassette);
    let mut turn = TurnLine::default();
    let mut caps = (0u64, 0u64);
    let mut stage = String::new();
    for event in &run.trace.events {
        if event.name != "ProviderResponse" && !is_turn_detail(event) {
            turn.flush(&mut out);
        }
        line(event, &mut out, &mut turn, &mut caps, &mut stage);
    }
    turn.flush(&mut out);
    out
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
    )
}

fn line(event: &Event, out: &mut String, turn: &mut TurnLine, caps: &mut (u64, u64), stage: &mut String) {
    let data = &event.data;
    match event.name {
        "MachineStart" => {
            let _ = writeln!(out, "machine: entry {}", event.str("entry"));
        }
        "StageSetup" => {
            *stage = event.str("stage").to_string();
            *caps = (event.num("maxAttempts"), event.num("turnCap"));
            let ids = &data["ids"];
            let _ = writeln!(
                out,
                "{stage}  Setup  ok   workflowRunId={} stageExecutionId={} upstream={}",
                ids["workflowRunId"].as_str().unwrap_or(""),
                ids["stageExecutionId"].as_str().unwrap_or(""),
                event.num("upstream")
            );
        }
        "StageInitFailed" => {
            let _ = writeln!(out, "{stage}  Init   FAILED  {}: {}", event.str("reason"), event.str("detail"));
        }
        "StageInitRendered" => {
            let count = data["placeholders"].as_array().map_or(0, Vec::len);
            let _ = writeln!(out, "{stage}  Init   ok   body {} chars, {count} placeholder(s)", event.num("length"));
        }
        "StageCheckGate" => {
            let _ = writeln!(
                out,
                "{stage} — attempt {}/{} (turnCap {})  CheckGate {}",
                event.num("attempt"),
                caps.0,
                caps.1,
                event.str("outcome")
            );
        }
        "ProviderResponse" => {
            turn.flush(out);
            turn.number = event.num("turn");
            let calls = data["toolCalls"].as_array().cloned().unwrap_or_default();
            turn.text_only = calls.is_empty();
            turn.calls = calls
                .iter()
                .map(|c| format!("{}({})", c["name"].as_str().unwrap_or("?"), c["id"].as_str().unwrap_or("?")))
                .collect();
        }
        "ProviderError" => {
            let _ = writeln!(
                out,
                "  t{:<3} provider error {} {}",
                event.num("turn"),
                event.str("class"),
                event.str("code")
            );
        }
        "SteeringAppended" => turn.verdicts.push("STEER steering message appended".into()),
        "BatchRejected" => turn.verdicts.push("REJECTED completion tool must be the sole call".into()),
        "CompletionAccepted" => turn.verdicts.push(format!("DONE {}", event.str("call"))),
        "CompletionParseFailed" => {
            let first = data["errors"].as_array().and_then(|e| e.first()).cloned().unwrap_or_default();
            let at = first["at"].as_str().unwrap_or("");
            let msg = first["msg"].as_str().unwrap_or("");
            turn.verdicts.push(format!("PARSE {}: {msg}", if at.is_empty() { "/" } else { at }));
        }
        "GrantApproved" => turn.verdicts.push(format!("{} APPROVED via {}", event.str("call"), event.str("via"))),
        "ToolCallDenied" => turn.verdicts.push(format!(
            "{} DENIED not in allowedTools; grantStageTool → {} ({})",
            event.str("call"),
            event.str("decision"),
            event.str("via")
        )),
        "ToolCallSucceeded" => turn.verdicts.push(format!(
            "{} ok result {} B ({})",
            event.str("call"),
            event.num("bytes"),
            event.str("via")
        )),
        "ToolCallFailed" => turn.verdicts.push(format!(
            "{} tool error {} B ({})",
            event.str("call"),
            event.num("bytes"),
            event.str("via")
        )),
        "ActEnded" => {
            let _ = writeln!(out, "  Act {} {}/{}", event.str("end"), event.num("turns"), event.num("turnCap"));
        }
        "StageAssertOutcome" => {
            let _ = writeln!(
                out,
                "  Assert {} ({}, {}) attempt {}/{}",
                event.str("verdict"),
                event.str("reason"),
                event.str("via"),
                event.num("attempt"),
                caps.0
            );
        }
        "RetryAppended" => {
            let _ = writeln!(out, "  retry: reason appended, Act re-entered on the same transcript");
        }
        "StageExited" => {
            let result = &data["result"];
            let _ = writeln!(
                out,
                "{stage}  Exit   verdict={} capHit={} attempts={} reason={}",
                result["verdict"].as_str().unwrap_or(""),
                result["capHit"],
                result["attemptCount"],
                result["reason"].as_str().unwrap_or("")
            );
        }
        "StageNext" => {
            let next = &data["next"];
            let chosen = if next["terminate"] == true {
                "terminate".to_string()
            } else {
                let stages: Vec<&str> =
                    next["nextStages"].as_array().into_iter().flatten().filter_map(|s| s.as_str()).collect();
                let mut text = format!("{} [{}]", next["execution"].as_str().unwrap_or(""), stages.join(", "));
                if let Some(join) = next["join"].as_str() {
                    text.push_str(&format!(" join {join}"));
                }
                text
            };
            let how = if data["evaluated"] == true { "" } else { " (not run: single-stage dry-run)" };
            let _ = writeln!(out, "{stage}  Next   {chosen}{how}");
        }
        "ParallelStart" => {
            let siblings: Vec<&str> =
                data["siblings"].as_array().into_iter().flatten().filter_map(|s| s.as_str()).collect();
            let _ = writeln!(out, "parallel: {} on a frozen context", siblings.join(" ∥ "));
        }
        "StageCancelled" => {
            let _ = writeln!(out, "{}  cancelled ({})", event.str("stage"), event.str("reason"));
        }
        "MachineFinished" => {
            let mut text = format!("machine: {}", event.str("outcome"));
            for key in ["code", "failedSiblingId", "stage", "reason"] {
                if let Some(value) = data.get(key).and_then(|v| v.as_str()) {
                    text.push_str(&format!(" {key}={value}"));
                }
            }
            let _ = writeln!(out, "{text}");
        }
        "DryRunSummary" => {
            let passed = data["expectations"]["passed"].as_u64().unwrap_or(0);
            let failed = data["expectations"]["failed"].as_u64().unwrap_or(0);
            let mark = if failed == 0 { "✓" } else { "✗" };
            let _ = writeln!(
                out,
                "Result: expectations {passed}/{} {mark} · drift {} · mismatches {}",
                passed + failed,
                event.num("drift"),
                event.num("mismatches")
            );
        }
        _ => {}
    }
}
