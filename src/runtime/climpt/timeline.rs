//! The climpt engine's lines of the timeline: one block per iteration, with the step, the
//! prompt it was sent, the model's output, the gate's intent and the route, the completion
//! loop's validators and the verdict.

use std::fmt::Write;

use serde_json::Value as Json;

use crate::runtime::engine::Timeline;
use crate::runtime::events::Event;
use crate::runtime::text::{escape, text};

#[derive(Default)]
pub(super) struct ClimptLines;

impl Timeline for ClimptLines {
    fn line(&mut self, event: &Event, out: &mut String) {
        let data = &event.data;
        let line = match event.name {
            "AgentStart" => format!(
                "agent {} · {} · verdict {} · entry {} · maxIterations {}",
                text(event, "agent"),
                text(event, "release"),
                text(event, "verdictType"),
                data.get("entry").and_then(Json::as_str).map_or_else(|| "(none)".into(), escape),
                event.num("maxIterations")
            ),
            "IterationStart" => {
                let kind = data.get("kind").and_then(Json::as_str).unwrap_or("no kind");
                format!("i{:<3} {} ({kind})", event.num("iteration"), text(event, "step"))
            }
            "PromptBuilt" => {
                let length = event.str("prompt").chars().count();
                if event.str("source") == "retry" {
                    format!("      prompt: the retry prompt ({length} chars)")
                } else {
                    let uv = names(data.get("substituted"));
                    let uv = if uv.is_empty() { String::new() } else { format!(", uv: {uv}") };
                    let verbatim = names(data.get("verbatim"));
                    let verbatim =
                        if verbatim.is_empty() { String::new() } else { format!(", left as written: {verbatim}") };
                    format!("      prompt {} ({length} chars{uv}{verbatim})", text(event, "path"))
                }
            }
            "PreflightFailed" => format!(
                "      pre-flight validation of {} failed ({}): the model is not asked, the retry prompt is queued",
                text(event, "step"),
                text(event, "pattern")
            ),
            "ValidatorRan" => format!(
                "      validator {} {} (successWhen {}, exitCode {})",
                text(event, "validator"),
                if data["passed"] == true { "✓" } else { "✗" },
                text(event, "successWhen"),
                data["exitCode"]
            ),
            "QueryExecuted" => match data.get("structuredOutput") {
                Some(Json::Null) | None => "      output: none (no structured output)".to_string(),
                Some(output) => format!("      output {}", escape(&crate::util::shorten(&output.to_string(), 100))),
            },
            "StepIdCorrected" => format!("      stepId corrected: {} → {}", text(event, "from"), text(event, "to")),
            "OutputValidated" if data["valid"] == false => {
                let first = data["errors"].as_array().and_then(|e| e.first()).and_then(Json::as_str).unwrap_or("");
                format!("      output REJECTED by {}: {}", text(event, "schema"), escape(first))
            }
            "IntentInterpreted" => {
                let mut line = format!("      intent {}", text(event, "intent"));
                if data["usedFallback"] == true {
                    line.push_str(&format!(" (fallback: {})", text(event, "reason")));
                }
                if let Some(target) = data.get("target").and_then(Json::as_str) {
                    line.push_str(&format!(" · target {}", escape(target)));
                }
                if let Some(Json::Object(handoff)) = data.get("handoff") {
                    let keys: Vec<&str> = handoff.keys().map(String::as_str).collect();
                    line.push_str(&format!(" · handoff {}", escape(&keys.join(", "))));
                }
                line
            }
            "ConditionEvaluated" => {
                format!("      condition {} = {}", text(event, "condition"), text(event, "value"))
            }
            "PrefixSubstitution" => format!("      default transition {} → {}", text(event, "from"), text(event, "to")),
            "RoutingDecision" if data["signalClosing"] == true => {
                format!("      route: closing ({})", text(event, "reason"))
            }
            "RoutingDecision" => format!("      route → {}", text(event, "to")),
            "CompletionLoopEnter" => {
                format!("      completion loop (validation step {})", text(event, "validationStep"))
            }
            "RetryPromptQueued" => {
                format!("      retry prompt queued ({}, attempt {})", text(event, "pattern"), event.num("attempt"))
            }
            "ValidationSkipped" => {
                format!("      validation failed ({}), skipped per onFailure", text(event, "pattern"))
            }
            "BoundaryHook" => format!("      boundary hook of {} (not run)", text(event, "step")),
            "VerdictChecked" if data["isComplete"] == true => {
                format!("      verdict: done ({})", text(event, "reason"))
            }
            "CassetteExhausted" => {
                format!("      cassette exhausted: nothing recorded for iteration {}", event.num("iteration"))
            }
            "FlowError" => format!("error {}: {}", text(event, "code"), text(event, "message")),
            "AgentFinished" => format!(
                "finished: {} after {} iteration(s) ({})",
                text(event, "outcome"),
                event.num("iterations"),
                text(event, "reason")
            ),
            _ => return,
        };
        let _ = writeln!(out, "{line}");
    }

    fn flush(&mut self, _out: &mut String) {}

    fn stopped(&self, events: &[Event]) -> Option<String> {
        let error = events.iter().find(|e| e.name == "FlowError")?;
        Some(format!("stopped: {} (an authoring error, exit 2)", text(error, "code")))
    }
}

/// A list of names from an event, comma-separated.
fn names(value: Option<&Json>) -> String {
    let names: Vec<&str> = value.and_then(Json::as_array).into_iter().flatten().filter_map(Json::as_str).collect();
    escape(&names.join(", ")).into_owned()
}
