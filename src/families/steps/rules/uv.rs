//! Where each step's UV variables come from: R-A2 (nothing supplies one), PR-RESOLVE-003 (one
//! supplied only from the second iteration), OptionalParamNoDefault, InitialContinuationMismatch
//! and InputsFromUnresolved. The prompt files themselves are `prompts`.

use std::collections::HashMap;

use super::flow::StepIndex;
use super::prompts::{names, opening, uses, uv_key};
use super::reach::{Live, Reach, reach};
use crate::diagnostic::{Diagnostic, Severity};
use crate::families::steps::model::{Agent, CONTINUATION_ONLY_UV_VARS, RUNTIME_SUPPLIED_UV_VARS, Step};
use crate::families::steps::{
    InitialContinuationMismatch, InputsFromUnresolved, OptionalParamNoDefault, PR_RESOLVE_003, R_A2,
};
use crate::source::{Node, Span, Value};
use crate::util::did_you_mean;

pub(super) fn check(agent: &Agent, index: &StepIndex, live: &Live, out: &mut Vec<Diagnostic>) {
    let steps = &index.steps;
    check_uv_supply(agent, steps, live, out);
    check_initial_continuation(agent, steps, index, out);
    check_inputs_from(agent, steps, index, out);
}

// ---------------------------------------------------------------------------------------------
// UV supply: R-A2, PR-RESOLVE-003, OptionalParamNoDefault
// ---------------------------------------------------------------------------------------------

/// UV names a step's `inputs` produce (channel 4): `<stepId with . → _>_<key>`.
fn handoff_uv_names(step: &Step) -> Vec<String> {
    let inputs = step.get("inputs").and_then(Node::as_map).unwrap_or_default();
    inputs
        .iter()
        .filter_map(|e| {
            let from = e.value.get("from")?.as_str()?;
            let dot = from.rfind('.').filter(|d| *d > 0)?;
            Some(format!("{}_{}", from[..dot].replace('.', "_"), &from[dot + 1..]))
        })
        .collect()
}

fn check_uv_supply(agent: &Agent, steps: &[Step], live: &Live, out: &mut Vec<Diagnostic>) {
    let file = agent.registry.id();
    let params = agent.parameter_names();
    // PR-RESOLVE-003: needs no agent.json.
    for step in steps.iter().filter(|s| s.id.starts_with("initial.")) {
        for (var, span) in step.uv_variables() {
            if uses(var, &CONTINUATION_ONLY_UV_VARS) && !params.contains(&var) {
                out.push(
                    Diagnostic::new(
                        PR_RESOLVE_003,
                        file,
                        span,
                        format!(
                            "`{var}` is supplied only from the second iteration on, but `{}` is an initial step; climpt fails with PR-RESOLVE-003 on the first iteration",
                            step.id
                        ),
                    )
                    .with_help(format!(
                        "remove `{var}` here and declare it in the matching `continuation.*` step"
                    )),
                );
            }
        }
    }
    let Some(agent_json) = agent.agent_json else { return };
    if agent_json.root().is_none() {
        return;
    }
    let param_map = agent_json.get("parameters").and_then(Node::as_map).unwrap_or_default();
    // OptionalParamNoDefault: parameter name → the uvVariables items that use it.
    let mut optional_uses: HashMap<&str, Vec<(&str, Span)>> = HashMap::new();
    for step in steps {
        let handoff = handoff_uv_names(step);
        for (var, span) in step.uv_variables() {
            if params.contains(&var) {
                optional_uses.entry(var).or_default().push((step.id, span));
                continue;
            }
            if uses(var, &RUNTIME_SUPPLIED_UV_VARS) || handoff.iter().any(|h| h == var) {
                continue;
            }
            let mut d = Diagnostic::new(
                R_A2,
                file,
                span,
                format!(
                    "`{var}` has no supply source: it is not an agent.json parameter, not a runtime variable and not a handoff input of `{}`; climpt fails with PR-RESOLVE-003 when the step runs",
                    step.id
                ),
            );
            let prefix = params.iter().find(|p| var.starts_with(&format!("{p}_")));
            let near = prefix.copied().or_else(|| did_you_mean(var, params.iter().copied()));
            d = match near {
                Some(near) => d.with_help(format!(
                    "UV names must equal parameter keys: did you mean `{near}`? Otherwise add `parameters.{var}` to agent.json or an `inputs` entry"
                )),
                None => d.with_help(format!(
                    "add `parameters.{var}` to agent.json, or supply it through `inputs` from an earlier step"
                )),
            };
            // The run asks for the variable only when it resolves the step's prompt.
            let reached = match live {
                Live::NoEntry(name) => Reach::Never(if step.is_section() {
                    "climpt's runner never resolves a `section.*` step"
                } else {
                    let _ = name;
                    "the registry's entry names no step, so the run fails before any step (SR-ENTRY-003)"
                }),
                _ => reach(live, step),
            };
            match &reached {
                Reach::Active => {}
                Reach::OtherMode(why) => {
                    d.message = format!(
                        "`{var}` has no supply source: it is not an agent.json parameter, not a runtime variable and not a handoff input of `{}`; {why}, where climpt fails with PR-RESOLVE-003 when the step runs",
                        step.id
                    );
                    d = d.with_severity(reached.grade(Severity::Error));
                }
                Reach::Never(why) => {
                    d.message = format!(
                        "`{var}` has no supply source (not an agent.json parameter, not a runtime variable, not a handoff input of `{}`), but {why}, so climpt never asks for it today; it would fail with PR-RESOLVE-003 if the step ran",
                        step.id
                    );
                    d = d.with_severity(Severity::Info);
                }
            }
            out.push(d);
        }
    }
    for entry in param_map {
        let Some(name) = entry.key_str() else { continue };
        let Some(uses) = optional_uses.get(name) else { continue };
        let def = &entry.value;
        let required = matches!(def.get("required").map(|r| &r.value), Some(Value::Bool(true)));
        if def.as_map().is_none() || required || def.get("default").is_some() {
            continue;
        }
        let flag =
            def.get("cli").and_then(Node::as_str).map(|c| format!("`{c}`")).unwrap_or_else(|| format!("`{name}`"));
        let step_list: Vec<&str> = uses.iter().map(|(id, _)| *id).collect();
        let who = if step_list.len() == 1 {
            format!("step {} declares", names(&step_list))
        } else {
            format!("steps {} declare", names(&step_list))
        };
        let mut d = Diagnostic::new(
            OptionalParamNoDefault,
            agent_json.id(),
            entry.key.span,
            format!(
                "parameter `{name}` is optional and has no `default`, but {who} it in `uvVariables`; a run without {flag} fails with PR-RESOLVE-003 at such a step"
            ),
        )
        .with_help(format!("add a `default` to `parameters.{name}`, or mark it `\"required\": true`"));
        for (id, span) in uses {
            d = d.with_related(file, *span, format!("used by `{id}`"));
        }
        out.push(d);
    }
}

// ---------------------------------------------------------------------------------------------
// InitialContinuationMismatch
// ---------------------------------------------------------------------------------------------

/// InitialContinuationMismatch: `initial.X` and `continuation.X` declare the same UV variables.
/// A missing `continuation.X` matters only to a step that takes the default transition, which
/// SR-TRANS-003 (no gate) and R-B4 (`next` allowed without a rule) already report.
fn check_initial_continuation(agent: &Agent, steps: &[Step], index: &StepIndex, out: &mut Vec<Diagnostic>) {
    let file = agent.registry.id();
    for step in steps {
        let Some(suffix) = step.id.strip_prefix("initial.") else { continue };
        let continuation_id = format!("continuation.{suffix}");
        let Some(continuation) = index.get(continuation_id.as_str()) else { continue };
        let (initial_vars, continuation_vars) = (compared_vars(step), compared_vars(continuation));
        if initial_vars == continuation_vars {
            continue;
        }
        let only_initial: Vec<&str> = initial_vars.iter().copied().filter(|v| !continuation_vars.contains(v)).collect();
        let only_continuation: Vec<&str> =
            continuation_vars.iter().copied().filter(|v| !initial_vars.contains(v)).collect();
        let mut parts = Vec::new();
        if !only_initial.is_empty() {
            parts.push(format!("only `{}` declares {}", step.id, names(&only_initial)));
        }
        if !only_continuation.is_empty() {
            parts.push(format!("only `{continuation_id}` declares {}", names(&only_continuation)));
        }
        out.push(
            Diagnostic::new(
                InitialContinuationMismatch,
                file,
                uv_key(step),
                format!(
                    "`{}` and `{continuation_id}` declare different UV variables ({}): each step resolves its prompt with its own `uvVariables`, so the runtime is unaffected, but `--validate` warns because its prefix substitution (`initial.*` → `continuation.*`) pairs them",
                    step.id,
                    parts.join("; ")
                ),
            )
            .with_related(file, uv_key(continuation), format!("`{continuation_id}` declares these"))
            .with_help("declare the same variables in both; runtime-supplied ones (`completed_iterations`, `previous_summary`, …) are not compared"),
        );
    }
}

/// A step's UV variables as prefix substitution compares them: sorted, runtime-supplied ones left out.
fn compared_vars<'a>(step: &Step<'a>) -> Vec<&'a str> {
    let mut vars: Vec<&'a str> =
        step.uv_variables().iter().map(|(n, _)| *n).filter(|n| !uses(n, &RUNTIME_SUPPLIED_UV_VARS)).collect();
    vars.sort_unstable();
    vars.dedup();
    vars
}

// ---------------------------------------------------------------------------------------------
// InputsFromUnresolved
// ---------------------------------------------------------------------------------------------

fn check_inputs_from(agent: &Agent, steps: &[Step], index: &StepIndex, out: &mut Vec<Diagnostic>) {
    let file = agent.registry.id();
    let ids = agent.step_ids();
    for step in steps {
        let inputs = step.get("inputs").and_then(Node::as_map).unwrap_or_default();
        for input in inputs {
            let Some(name) = input.key_str() else { continue };
            let spec = &input.value;
            let Some(from_node) = spec.get("from") else { continue };
            let Some(from) = from_node.as_str() else { continue };
            if matches!(spec.get("required").map(|r| &r.value), Some(Value::Bool(false))) {
                continue;
            }
            let lead = format!("input `{name}` of `{}` reads `{from}`", step.id);
            let Some(dot) = from.rfind('.').filter(|d| *d > 0 && *d + 1 < from.len()) else {
                out.push(
                    Diagnostic::new(
                        InputsFromUnresolved,
                        file,
                        from_node.span,
                        format!("{lead}, which is not of the form `<stepId>.<key>`; the input is never filled"),
                    )
                    .with_help("write the source step id, a dot, and the handoff key: `initial.issue.number`"),
                );
                continue;
            };
            let (source_id, key) = (&from[..dot], &from[dot + 1..]);
            let Some(source) = index.get(source_id) else {
                let mut d = Diagnostic::new(
                    InputsFromUnresolved,
                    file,
                    from_node.span,
                    format!("{lead}, but `steps` has no `{source_id}`; the required input is never filled"),
                );
                if let Some(near) = did_you_mean(source_id, ids.iter().copied()) {
                    d = d.with_help(format!("did you mean `{near}.{key}`?"));
                }
                out.push(d);
                continue;
            };
            let Some(gate) = source.gate() else {
                out.push(
                    Diagnostic::new(
                        InputsFromUnresolved,
                        file,
                        from_node.span,
                        format!("{lead}, but `{source_id}` has no `structuredGate`, so it hands nothing off"),
                    )
                    .with_related(file, source.key.span, format!("`{source_id}`")),
                );
                continue;
            };
            let fields = gate.get("handoffFields");
            let list: Vec<&str> =
                fields.and_then(Node::as_seq).unwrap_or_default().iter().filter_map(Node::as_str).collect();
            let problem = match fields.map(|f| &f.value) {
                None | Some(Value::Null) => Some(format!("`{source_id}` declares no `handoffFields`")),
                Some(Value::Seq(items)) if items.is_empty() => Some(format!("`{source_id}` has empty `handoffFields`")),
                Some(_) if !list.iter().any(|f| f.rsplit('.').next() == Some(key)) => Some(format!(
                    "no handoff field of `{source_id}` ends in `{key}` (it hands off {})",
                    if list.is_empty() { "nothing".to_string() } else { names(&list) }
                )),
                Some(_) => None,
            };
            if let Some(problem) = problem {
                let related = gate.entry("handoffFields").map_or(opening(gate), |e| e.key.span);
                out.push(
                    Diagnostic::new(
                        InputsFromUnresolved,
                        file,
                        from_node.span,
                        format!("{lead}, but {problem}; handoff data is stored under each field's last path segment"),
                    )
                    .with_related(file, related, format!("`{source_id}` handoff fields")),
                );
            }
        }
    }
}
