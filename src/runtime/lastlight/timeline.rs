//! The Last Light engine's timeline lines: each execution with the prompt it was sent (its
//! first lines, or all of it with `--show-prompts`, substitutions marked `⟦…⟧`), what it
//! returned, what the engine decided from it (a verdict, the BLOCKED rule, a loop's `until`),
//! the messages posted, the gates and the run's end.

use std::fmt::Write;

use serde_json::Value;

use crate::runtime::engine::Timeline;
use crate::runtime::events::Event;
use crate::runtime::lastlight::preview::{Marked, mark};
use crate::runtime::text::{escape, text};

/// Prompt lines shown when prompts are collapsed.
const SHOWN: usize = 4;

#[derive(Default)]
pub struct Lines {
    full: bool,
}

impl Timeline for Lines {
    fn line(&mut self, event: &Event, out: &mut String) {
        line(event, self.full, out);
    }

    fn flush(&mut self, _out: &mut String) {}

    fn stopped(&self, events: &[Event]) -> Option<String> {
        let threw = events.iter().find(|e| e.name == "EngineThrew")?;
        let phase = text(threw, "phase");
        let at = if phase.is_empty() { String::new() } else { format!(" in phase `{phase}`") };
        Some(format!("the engine threw{at}: {} (an authoring error, exit 2)", text(threw, "message")))
    }

    fn show_in_full(&mut self) {
        self.full = true;
    }
}

/// A field of an event's payload (`null` when it has none).
fn field<'d>(data: &'d serde_json::Map<String, Value>, key: &str) -> &'d Value {
    data.get(key).unwrap_or(&Value::Null)
}

fn first_line(value: &str) -> String {
    let mut line = value.lines().next().unwrap_or("").to_string();
    if line.chars().count() > 80 {
        line = line.chars().take(79).collect::<String>() + "…";
    }
    let more = value.lines().count() > 1;
    format!("{}{}", escape(&line), if more { " …" } else { "" })
}

fn line(event: &Event, full: bool, out: &mut String) {
    let data = &event.data;
    let label = text(event, "label");
    match event.name {
        "WorkflowStart" => {
            let resume = event.num("resume");
            let again = if resume > 0 { format!(" · resumed ({resume})") } else { String::new() };
            let _ = writeln!(
                out,
                "workflow {} · Last Light {} · {} engine · {} · {} phases{again}",
                text(event, "workflow"),
                text(event, "release"),
                text(event, "engine"),
                text(event, "scheduler"),
                event.num("phases")
            );
        }
        "PhaseStart" if text(event, "phase") == label && !label.is_empty() => {}
        "PhaseStart" => {}
        "ContextAssembled" => {
            let _ = writeln!(out, "  {:<22} context assembled", text(event, "phase"));
        }
        "PhaseSkipped" => {
            let _ = writeln!(out, "  {:<22} skipped: {}", text(event, "phase"), text(event, "reason"));
        }
        "PhaseDeduplicated" => {
            let _ = writeln!(out, "  {label:<22} already completed (deduplicated by the executions ledger)");
        }
        "PhaseHandler" => {
            let _ = writeln!(
                out,
                "  {:<22} `{}` phase: its recorded result stands in for the handler",
                text(event, "phase"),
                text(event, "type")
            );
        }
        "PromptRendered" => {
            let prompt = field(data, "prompt").as_str().unwrap_or("");
            let marks: Vec<Marked> = field(data, "substitutions")
                .as_array()
                .map(|items| {
                    items
                        .iter()
                        .map(|m| Marked {
                            start: m["start"].as_u64().unwrap_or(0) as usize,
                            end: m["end"].as_u64().unwrap_or(0) as usize,
                            missing: m["missing"].as_bool().unwrap_or(false),
                            key: m["key"].as_str().unwrap_or("").to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            let empty = marks.iter().filter(|m| m.missing).count();
            let verbatim = field(data, "verbatim").as_array().map_or(0, Vec::len);
            let mut notes = vec![match marks.len() {
                1 => "1 substitution".to_string(),
                n => format!("{n} substitutions"),
            }];
            if empty > 0 {
                notes.push(format!("{empty} empty"));
            }
            if verbatim > 0 {
                notes.push(format!("{verbatim} sent as written"));
            }
            let lines: Vec<&str> = prompt.lines().collect();
            let model = data
                .get("model")
                .and_then(Value::as_str)
                .map(|m| format!(" · model {}", escape(m)))
                .unwrap_or_default();
            let count = if lines.len() == 1 { "1 line".to_string() } else { format!("{} lines", lines.len()) };
            let _ =
                writeln!(out, "  {label:<22} prompt {} · {count} · {}{model}", text(event, "source"), notes.join(", "));
            let marked = mark(prompt, &marks);
            let shown: Vec<&str> = marked.lines().collect();
            let limit = if full { shown.len() } else { SHOWN.min(shown.len()) };
            for line in &shown[..limit] {
                let _ = writeln!(out, "  │ {}", escape(line));
            }
            if shown.len() > limit {
                let _ = writeln!(out, "  │ … {} more lines (--show-prompts shows them)", shown.len() - limit);
            }
        }
        "PhaseEnd" => {
            let output = field(data, "output").as_str().unwrap_or("");
            let status = if field(data, "success").as_bool() == Some(false) {
                format!("FAILED ({})", text(event, "error"))
            } else {
                "ok".to_string()
            };
            let _ = writeln!(out, "  {label:<22} → {status}: {}", first_line(output));
        }
        "Verdict" => {
            let how = if field(data, "fromFile").as_bool() == Some(true) {
                " (from reviewer-verdict.md)"
            } else if field(data, "viaFallback").as_bool() == Some(true) {
                " (no VERDICT: line; the fallback reads the output's start)"
            } else {
                ""
            };
            let _ = writeln!(out, "  {:<22}   verdict {}{how}", "", text(event, "verdict"));
        }
        "BlockedRule" => {
            let what = if field(data, "found").as_bool() != Some(true) {
                "no BLOCKED in the output".to_string()
            } else if let Some(by) = field(data, "bypassed").as_str() {
                format!("BLOCKED in the output, bypassed by the issue's {by}")
            } else if field(data, "fails").as_bool() == Some(true) {
                "BLOCKED in the output: the workflow fails".to_string()
            } else {
                format!("BLOCKED in the output; action `{}` does nothing", text(event, "action"))
            };
            let _ = writeln!(out, "  {:<22}   contains_BLOCKED: {what}", "");
        }
        "MarkerMissing" => {
            let _ = writeln!(
                out,
                "  {:<22}   the output lacks the completion marker {:?}: the phase fails",
                "",
                text(event, "marker")
            );
        }
        "UntilEvaluated" => {
            let form = field(data, "form")
                .as_str()
                .map_or_else(|| " (not in the engine's grammar: always false)".to_string(), |f| format!(" ({f})"));
            let _ =
                writeln!(out, "  {:<22}   until `{}` → {}{form}", "", text(event, "expression"), field(data, "met"));
        }
        "UntilBash" => {
            let what = if field(data, "rejected").as_bool() == Some(true) {
                "rejected: it contains `{{`, which the engine refuses (not met)".to_string()
            } else {
                format!(
                    "exit {} → {}",
                    event.num("exitCode"),
                    if field(data, "met").as_bool() == Some(true) { "done" } else { "again" }
                )
            };
            let _ = writeln!(out, "  {:<22}   until_bash `{}` {what}", "", text(event, "command"));
        }
        "SoftOutcome" => {
            let _ = writeln!(out, "  {label:<22}   soft outcome: on_soft_failure completes the loop");
        }
        "LoopEnd" => {
            let what = if text(event, "kind") == "loop" {
                format!(
                    "{} after {} fix cycle(s)",
                    if field(data, "approved").as_bool() == Some(true) { "approved" } else { "not approved" },
                    event.num("cycles")
                )
            } else {
                format!(
                    "{} after {} iteration(s)",
                    if field(data, "completed").as_bool() == Some(true) {
                        "completed"
                    } else {
                        "ran out of iterations"
                    },
                    event.num("iterations")
                )
            };
            let _ = writeln!(out, "  {:<22} loop {what}", text(event, "phase"));
        }
        "Notify" => {
            let _ = writeln!(
                out,
                "  {:<22}   ✉ {}: {}",
                text(event, "phase"),
                text(event, "message"),
                first_line(field(data, "text").as_str().unwrap_or(""))
            );
        }
        "GatePaused" => {
            let _ = writeln!(
                out,
                "  {:<22} ⏸ paused at gate `{}` ({})",
                text(event, "phase"),
                text(event, "gate"),
                text(event, "kind")
            );
        }
        "GateAnswered" => {
            let detail = match text(event, "answer").as_ref() {
                "reject" => format!(": {}", text(event, "reason")),
                "reply" => format!(
                    " from {}: {}",
                    text(event, "sender"),
                    first_line(field(data, "text").as_str().unwrap_or(""))
                ),
                _ => String::new(),
            };
            let _ = writeln!(out, "gate `{}` answered {}{detail}", text(event, "gate"), text(event, "answer"));
        }
        "GateUnanswered" => {
            let _ = writeln!(out, "gate `{}`: no answer recorded, the run stays paused", text(event, "gate"));
        }
        "ReplyNotResumed" => {
            let _ = writeln!(
                out,
                "the reply resumes the workflow named `explore`, not `{}`: this run never continues",
                text(event, "workflow")
            );
        }
        "EngineThrew" => {
            let caught =
                if field(data, "caught").as_bool() == Some(true) { " (the phase fails)" } else { " (the run fails)" };
            let _ = writeln!(out, "  {:<22} THREW: {}{caught}", text(event, "phase"), text(event, "message"));
        }
        "RunStopped" => {
            let _ = writeln!(out, "  {label:<22} stopped: {}", text(event, "why"));
        }
        "SetPhase" => {}
        "WorkflowEnd" => {
            let phases: Vec<String> = field(data, "phases")
                .as_object()
                .map(|m| m.iter().map(|(p, o)| format!("{} {}", escape(p), o.as_str().unwrap_or(""))).collect())
                .unwrap_or_default();
            let error =
                data.get("error").and_then(Value::as_str).map(|e| format!(" ({})", escape(e))).unwrap_or_default();
            let _ = writeln!(out, "end: {}{error} · {}", text(event, "status"), phases.join(", "));
        }
        _ => {}
    }
}
