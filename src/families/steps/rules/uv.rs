//! Where each step's UV variables come from: R-A2 (nothing supplies one), PR-RESOLVE-003 (one
//! supplied only from the second iteration), OptionalParamNoDefault, InitialContinuationMismatch
//! and InputsFromUnresolved. The prompt files themselves are `prompts`.

use std::collections::HashMap;

use super::flow::StepIndex;
use super::prompts::{names, opening, uses, uv_key};
use super::reach::{Live, Reach, reach};
use crate::diagnostic::{Diagnostic, Severity};
use crate::families::steps::model::{Agent, CONTINUATION_ONLY_UV_VARS, RUNTIME_SUPPLIED_UV_VARS, Step, StepKind};
use crate::families::steps::release::{self, Facts, Fate, Graded, PromptGrade, Uv, prompt_grade};
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

/// Whether a release gives a step's prompt the UV variable `var` (see [`Uv`]). Where a work
/// step's prompt that fails to resolve falls back to the verdict handler (1.12.4 to 1.13.6),
/// the handler resolves the mode's entry and continuation steps again with its own variables
/// (`max_iterations`, `remaining`, `previous_summary`, …), so those count as supplied.
fn supplied(facts: &Facts, step: &Step, var: &str, params: &[&str], handoff: &[String]) -> bool {
    let closure = step.kind() == Some(StepKind::Closure);
    let issue_number = var == "issue_number" && params.contains(&"issue");
    let parameter = params.contains(&var);
    let handed = handoff.iter().any(|h| h == var);
    let runner = ["iteration", "completed_iterations", "completion_keyword"].contains(&var);
    let handler = uses(var, &RUNTIME_SUPPLIED_UV_VARS);
    match facts.uv {
        Uv::IssueOnly => issue_number,
        Uv::IssueAndIterations => issue_number || (!closure && handler),
        Uv::Parameters => parameter || issue_number || runner || (!closure && handler),
        Uv::Handoff => parameter || handed || runner,
        Uv::All => parameter || handed || handler,
    }
}

/// What a release passes to step prompts, for messages.
fn passes(uv: Uv) -> &'static str {
    match uv {
        Uv::IssueOnly => "passes a closure prompt only `issue_number` (from `--issue`) and reads no other step prompt",
        Uv::IssueAndIterations => {
            "passes step prompts only `issue_number` (from `--issue`) and the runner's and verdict handler's iteration variables (a closure prompt only `issue_number`)"
        }
        Uv::Parameters => {
            "passes step prompts the agent.json parameters and the runner's and verdict handler's variables, but no handoff inputs"
        }
        Uv::Handoff => {
            "passes step prompts the agent.json parameters, the step's handoff inputs, `iteration`, `completed_iterations` and `completion_keyword` (no verdict handler variables)"
        }
        Uv::All => "passes the agent.json parameters, the runtime variables and the step's handoff inputs",
    }
}

fn check_uv_supply(agent: &Agent, steps: &[Step], live: &Live, out: &mut Vec<Diagnostic>) {
    let file = agent.registry.id();
    let params = agent.parameter_names();
    let handler = agent.layout.handler();
    // PR-RESOLVE-003: needs no agent.json.
    for step in steps.iter().filter(|s| s.id.starts_with("initial.")) {
        let kind = step.kind();
        for (var, span) in step.uv_variables() {
            if !uses(var, &CONTINUATION_ONLY_UV_VARS) || params.contains(&var) {
                continue;
            }
            let d = Diagnostic::new(
                PR_RESOLVE_003,
                file,
                span,
                format!(
                    "`{var}` is supplied only from the second iteration on, but `{}` is an initial step; climpt fails with PR-RESOLVE-003 on the first iteration",
                    step.id
                ),
            )
            .with_help(format!("remove `{var}` here and declare it in the matching `continuation.*` step"));
            out.push(prompt_grade(&agent.target, kind).apply(d, handler));
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
        let kind = step.kind();
        for (var, span) in step.uv_variables() {
            if params.contains(&var) {
                optional_uses.entry(var).or_default().push((step.id, span));
            }
            let graded = release::grade(&agent.target, |facts| {
                if supplied(facts, step, var, &params, &handoff) {
                    return None;
                }
                match release::fate(facts, kind) {
                    Fate::Fatal => Some(Severity::Error),
                    Fate::Replaced => Some(Severity::Warning),
                    Fate::Unread => None,
                }
            });
            let newest = release::facts_of(&agent.target).last().map_or(Uv::All, |f| f.uv);
            let lead = match newest {
                Uv::All => format!(
                    "`{var}` has no supply source: it is not an agent.json parameter, not a runtime variable and not a handoff input of `{}`",
                    step.id
                ),
                uv => format!(
                    "`{var}` is not supplied to step `{}`: {} {}",
                    step.id,
                    agent.target.releases.named(),
                    passes(uv)
                ),
            };
            let mut d = match graded {
                Graded::None => {
                    // Supplied, or a prompt no release reads: where later ones would not supply it,
                    // say so as an info.
                    match prompt_grade(&agent.target, kind) {
                        PromptGrade::Unread { now, later } if !supplied(&release::FACTS[release::FACTS.len() - 1], step, var, &params, &handoff) => {
                            Diagnostic::new(
                                R_A2,
                                file,
                                span,
                                format!("{lead}; {now} never sends this step's prompt, so nothing fails yet ({later} send it)"),
                            )
                            .with_severity(Severity::Info)
                        }
                        _ => continue,
                    }
                }
                Graded::All(Severity::Error) => Diagnostic::new(
                    R_A2,
                    file,
                    span,
                    format!("{lead}; climpt fails with PR-RESOLVE-003 when the step runs"),
                ),
                Graded::All(level) => Diagnostic::new(
                    R_A2,
                    file,
                    span,
                    format!(
                        "{lead}; the step's prompt fails to resolve, and climpt sends the {handler}'s built-in prompt instead, silently"
                    ),
                )
                .with_severity(level),
                Graded::Some(releases) => Diagnostic::new(
                    R_A2,
                    file,
                    span,
                    format!(
                        "`{var}` is not supplied to step `{}` in {releases}, where its prompt fails to resolve; the other releases this agent may run on supply it or never read the prompt",
                        step.id
                    ),
                )
                .with_severity(Severity::Info),
            };
            let prefix = params.iter().find(|p| var.starts_with(&format!("{p}_")));
            let near = prefix.copied().or_else(|| did_you_mean(var, params.iter().copied()));
            d = match near {
                Some(near) if !params.contains(&var) => d.with_help(format!(
                    "UV names must equal parameter keys: did you mean `{near}`? Otherwise add `parameters.{var}` to agent.json or an `inputs` entry"
                )),
                _ => d.with_help(format!(
                    "add `parameters.{var}` to agent.json, or supply it through `inputs` from an earlier step"
                )),
            };
            if d.severity == Severity::Info {
                out.push(d);
                continue;
            }
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
                Reach::OtherMode(why) if d.severity == Severity::Error => {
                    d.message = format!("{lead}; {why}, where climpt fails with PR-RESOLVE-003 when the step runs");
                    d = d.with_severity(reached.grade(Severity::Error));
                }
                Reach::OtherMode(why) => {
                    d.message.push_str(&format!(" ({why}, so this happens only when the agent runs in that mode)"));
                }
                Reach::Never(why) => {
                    d.message = match newest {
                        Uv::All => format!(
                            "`{var}` has no supply source (not an agent.json parameter, not a runtime variable, not a handoff input of `{}`), but {why}, so climpt never asks for it today; it would fail with PR-RESOLVE-003 if the step ran",
                            step.id
                        ),
                        _ => format!("{lead}, but {why}, so climpt never asks for it today"),
                    };
                    d = d.with_severity(Severity::Info);
                }
            }
            out.push(d);
        }
    }
    // OptionalParamNoDefault matters where parameters are UV variables (1.13.0 and later).
    let parameters_used = release::grade(&agent.target, |facts| {
        matches!(facts.uv, Uv::Parameters | Uv::Handoff | Uv::All).then_some(Severity::Warning)
    });
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
        match &parameters_used {
            Graded::None => continue,
            Graded::All(_) => {}
            Graded::Some(releases) => {
                d.message.push_str(&format!(
                    " (only {releases} pass parameters to step prompts; the other releases this agent may run on never do)"
                ));
                d = d.with_severity(Severity::Info);
            }
        }
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
