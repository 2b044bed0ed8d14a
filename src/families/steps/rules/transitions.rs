//! Transition rules as climpt's `WorkflowRouter` follows them: targets that exist, terminal
//! `null` targets, the default transition, and `handoff`/`escalate` targets.

use crate::diagnostic::Diagnostic;
use crate::families::steps::model::{Agent, INTENTS, Step, TargetVia, rule_targets};
use crate::families::steps::rules::flow::{StepIndex, has_next_rule, is_closure};
use crate::families::steps::{SR_TRANS_001, SR_TRANS_002, SR_TRANS_003, SR_TRANS_005, SR_TRANS_009};
use crate::source::{Node, Span, Value};

/// Did-you-mean lookups per agent: each scans every step id, and a hostile registry may hold
/// thousands of dangling targets.
const SUGGESTION_BUDGET: usize = 200;

pub(super) fn check(agent: &Agent, index: &StepIndex, out: &mut Vec<Diagnostic>) {
    let ids = agent.step_ids();
    let mut budget = SUGGESTION_BUDGET;
    let routed = index.steps.iter().any(|s| s.gate().is_some());
    for step in &index.steps {
        for (key, rule) in step.transitions() {
            let Some(intent) = key.as_str() else { continue };
            if rule.as_map().is_none() {
                continue;
            }
            check_targets_exist(agent, index, step, intent, rule, (&ids, &mut budget), out);
            check_null_targets(step, intent, rule, agent, out);
        }
        check_default_transition(agent, index, routed, step, out);
    }
}

/// SR-TRANS-001 (and its upstream ids): every `target`, `fallback` and `targets.*` names a step.
fn check_targets_exist(
    agent: &Agent,
    index: &StepIndex,
    step: &Step,
    intent: &str,
    rule: &Node,
    (ids, budget): (&[&str], &mut usize),
    out: &mut Vec<Diagnostic>,
) {
    let file = agent.registry.id();
    for target in rule_targets(rule) {
        let Some(name) = target.step else { continue };
        if index.has(name) {
            continue;
        }
        let (what, upstream) = match (target.via, intent) {
            (TargetVia::Fallback, _) => (format!("the `fallback` of transition `{intent}`"), "R-C3"),
            (TargetVia::Conditional, _) => (format!("a conditional target of transition `{intent}`"), "R-C4"),
            (TargetVia::Direct, "handoff") => ("transition `handoff`".to_string(), "SR-TRANS-006"),
            (TargetVia::Direct, "escalate") => ("transition `escalate`".to_string(), "SR-TRANS-008"),
            (TargetVia::Direct, "jump") => ("transition `jump`".to_string(), "SR-TRANS-010"),
            (TargetVia::Direct, _) => (format!("transition `{intent}`"), "R-B5"),
        };
        let consequence = match target.via {
            TargetVia::Fallback => "climpt's --validate rejects it (the router never uses `fallback`)",
            _ => "routing fails when the step takes it",
        };
        let mut diagnostic = Diagnostic::new(
            SR_TRANS_001,
            file,
            target.node.span,
            format!("{what} of `{}` names `{name}`, which is not a step ({upstream}); {consequence}", step.id),
        );
        let suggestion = (*budget > 0).then(|| super::near_step(name, ids.iter().copied())).flatten();
        *budget = budget.saturating_sub(1);
        if let Some(suggestion) = suggestion {
            let replacement = serde_json::to_string(suggestion).unwrap_or_else(|_| format!("\"{suggestion}\""));
            diagnostic = diagnostic.with_did_you_mean(target.node.span, replacement, suggestion);
        }
        out.push(diagnostic);
    }
}

/// SR-TRANS-002 (terminal `null` outside `closing`), SR-TRANS-005 (`handoff` to `null`) and
/// SR-TRANS-009 (`escalate` without a target).
fn check_null_targets(step: &Step, intent: &str, rule: &Node, agent: &Agent, out: &mut Vec<Diagnostic>) {
    let file = agent.registry.id();
    let id = step.id;
    let direct = rule.get("target");
    let is_null = |n: &Node| n.value == Value::Null;
    match intent {
        // `closing` ends the run; `repeat` re-runs the step and `abort` stops it without
        // reading their rules; unknown keys have their own code.
        "closing" | "repeat" | "abort" => {}
        "handoff" => {
            if let Some(target) = direct.filter(|n| is_null(n)) {
                out.push(
                    Diagnostic::new(
                        SR_TRANS_005,
                        file,
                        target.span,
                        format!("`handoff` of `{id}` targets `null`, but a handoff must route to a step; routing fails when the LLM hands off"),
                    )
                    .with_help("only `closing` on a closure step ends the flow; point `handoff` at the closure step that should take over"),
                );
            }
        }
        "escalate" => {
            let usable = direct.and_then(Node::as_str).is_some_and(|t| !t.is_empty());
            if !usable {
                let span = direct.map_or(rule.span, |n| n.span);
                out.push(
                    Diagnostic::new(
                        SR_TRANS_009,
                        file,
                        span,
                        format!("the `escalate` rule of `{id}` has no target step; routing fails when the LLM escalates"),
                    )
                    .with_help("escalate routes only through `transitions.escalate.target`; set it to the verification support step"),
                );
            }
        }
        _ if INTENTS.contains(&intent) => {
            if let Some(target) = direct.filter(|n| is_null(n)) {
                out.push(terminal_not_allowed(file, target.span, id, intent));
            }
            if direct.is_none() && rule.get("condition").is_some() {
                for entry in rule.get("targets").and_then(Node::as_map).unwrap_or_default() {
                    if is_null(&entry.value) {
                        out.push(terminal_not_allowed(file, entry.value.span, id, intent));
                    }
                }
            }
        }
        _ => {}
    }
}

fn terminal_not_allowed(file: crate::diagnostic::FileId, span: Span, id: &str, intent: &str) -> Diagnostic {
    Diagnostic::new(
        SR_TRANS_002,
        file,
        span,
        format!("transition `{intent}` of `{id}` targets `null`, which only `closing` on a closure step may do; routing fails when the step takes it"),
    )
    .with_help("name the step to go to; to end the flow, hand off to a closure step whose `closing` targets `null`")
}

/// SR-TRANS-003: a step that can take `next` without a `next` rule needs climpt's default
/// transition `initial.X` → `continuation.X`. Steps with a gate that allows `next` are R-B4's
/// (allowedIntents without a rule) unless their `next` rule exists but does not route.
fn check_default_transition(agent: &Agent, index: &StepIndex, routed: bool, step: &Step, out: &mut Vec<Diagnostic>) {
    if step.is_section() || is_closure(step) || has_next_rule(step) {
        return;
    }
    let next_rule = step.transition("next");
    let can_take_next = match step.def.get("structuredGate") {
        // Without any gate in the registry climpt does not route at all.
        None => routed,
        // A gate listing `next` without any `next` rule is R-B4's.
        Some(gate) => gate.as_map().is_some() && step.allows("next") && next_rule.is_some(),
    };
    if !can_take_next {
        return;
    }
    if index.default_continuation(step).is_some() {
        return;
    }
    let why = if step.def.get("structuredGate").is_none() {
        "it has no structuredGate, so climpt's gate always yields `next`"
    } else {
        "its `next` rule has neither `target` nor `condition`/`targets`"
    };
    let fallback = match step.id.strip_prefix("initial.") {
        Some(rest) => format!("and there is no `continuation.{rest}` for the default transition"),
        None => "and only `initial.X` steps have a default transition (to `continuation.X`)".to_string(),
    };
    let node = next_rule.or_else(|| step.def.get("transitions").filter(|t| t.as_map().is_some())).unwrap_or(step.def);
    let span = if next_rule.is_some() {
        node.span
    } else {
        Span::new(node.span.start, (node.span.start + 1).min(node.span.end))
    };
    out.push(
        Diagnostic::new(
            SR_TRANS_003,
            agent.registry.id(),
            span,
            format!("`{}` has no usable `next` transition: {why}, {fallback}; routing fails after its first run", step.id),
        )
        .with_help(if step.def.get("structuredGate").is_none() {
            "a step without a gate moves on only through the default transition: name it `initial.X` next to a gated `continuation.X`, or give it a structuredGate and a `next` rule"
        } else {
            "give the `next` rule a `target` (or `condition` with `targets`)"
        }),
    );
}
