//! One run of a climpt agent against a flow cassette, iteration by iteration, as climpt's
//! runner at the modelled release runs it (`agents/runner/runner.ts`): the step of the
//! iteration (`FlowOrchestrator`), its prompt, the model's structured output from the
//! cassette, stepId normalisation, the gate (`StepGateInterpreter`), the handoff, the router
//! (`WorkflowRouter`), and for closure steps the completion loop (`CompletionLoopProcessor`,
//! `ValidationChain`, `RetryHandler`). Validators are never run: their results come from the
//! cassette. What happened is recorded as events named after climpt's own log vocabulary.

mod query;
mod stop;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value as Json, json};

use crate::diagnostic::{Diagnostic, FileId};
use crate::registry::cassette as rules;
use crate::runtime::climpt::agent::Agent;
use crate::runtime::climpt::cassette::{Expectation, FlowCassette, Iteration, ValidatorResult};
use crate::runtime::climpt::prompt::{self, js_string};
use crate::runtime::events::Trace;
use crate::source::Span;
use stop::{Cause, Stop, stop};

/// The seven intents and the aliases `StepGateInterpreter` maps a lower-cased answer through.
const ACTION_TO_INTENT: [(&str, &str); 14] = [
    ("next", "next"),
    ("repeat", "repeat"),
    ("jump", "jump"),
    ("closing", "closing"),
    ("abort", "abort"),
    ("escalate", "escalate"),
    ("handoff", "handoff"),
    ("continue", "next"),
    ("retry", "repeat"),
    ("wait", "repeat"),
    ("done", "closing"),
    ("finished", "closing"),
    ("pass", "next"),
    ("fail", "repeat"),
];

/// `STEP_KIND_ALLOWED_INTENTS`.
fn kind_allows(kind: &str, intent: &str) -> bool {
    let allowed: &[&str] = match kind {
        "work" => &["next", "repeat", "jump", "handoff"],
        "verification" => &["next", "repeat", "jump", "escalate"],
        "closure" => &["closing", "repeat"],
        _ => return true,
    };
    allowed.contains(&intent)
}

/// `ValidationChain.VERDICT_CLOSURE_MAP`: the validation step a verdict type's completion loop
/// checks.
fn closure_step_for(verdict_type: &str) -> String {
    match verdict_type {
        "poll:state" => "closure.polling".into(),
        "count:iteration" => "closure.iteration".into(),
        "count:check" => "closure.check".into(),
        "detect:keyword" => "closure.keyword".into(),
        "detect:structured" => "closure.structured".into(),
        "detect:graph" => "closure.graph".into(),
        "meta:composite" => "closure.composite".into(),
        "meta:custom" => "closure.custom".into(),
        other => format!("closure.{other}"),
    }
}

/// The stop of a run whose cassette has nothing for it (a finding says what is missing).
const EXHAUSTED: &str = "CassetteExhausted";

/// `ValidationChain`'s `DEFAULT_MAX_ATTEMPTS`.
const DEFAULT_MAX_ATTEMPTS: u64 = 3;

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Completed(String),
    /// Stopped by one of climpt's errors: its id (`SR-TRANS-001`, `GateInterpretationError`)
    /// and message.
    Failed {
        code: String,
        message: String,
    },
    MaxIterations,
    /// The cassette has nothing for what the run needs next (a finding says what).
    Exhausted,
}

impl Outcome {
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Completed(_) => "completed",
            Outcome::Failed { .. } => "failed",
            Outcome::MaxIterations => "maxIterations",
            Outcome::Exhausted => "cassetteExhausted",
        }
    }
}

/// The state of one run.
pub struct Flow<'a> {
    agent: &'a Agent<'a>,
    cassette: &'a FlowCassette,
    cassette_file: FileId,
    pub trace: Trace,
    pub findings: Vec<Diagnostic>,
    pub passed: u32,
    pub failed: u32,
    pub unchecked: u32,
    /// The CLI parameters as UV values.
    args: Vec<(String, String)>,
    verdict_type: String,
    /// `StepContext`: each step's recorded output, or its handoff once it gave one.
    context: BTreeMap<String, Map<String, Json>>,
    current: Option<String>,
    pending_retry: Option<Prompt>,
    /// `ValidationChain.retryAttempts`, per validation step.
    retry_attempts: BTreeMap<String, u64>,
    /// The validator results the run asked for: (iteration index, validator id).
    used_validators: BTreeSet<(usize, String)>,
    /// The last iteration's structured output, for `previous_summary`.
    last_output: Option<(u64, Json)>,
    /// How many iterations ran.
    pub iterations: u64,
    pub outcome: Option<Outcome>,
    pub last_step: Option<String>,
    /// The iteration whose output the schema rejected last.
    rejected: Option<u64>,
    /// Drift fails the run (`--strict`).
    strict: bool,
    /// Each step's output schema, resolved when first needed.
    schemas: BTreeMap<String, query::Resolved>,
    /// The system prompt's fingerprint and file, once read (`Some(None)`: there is none).
    system: Option<Option<(String, FileId)>>,
    /// What in the agent stopped the run, when one of climpt's errors did.
    cause: Option<Cause>,
}

/// A prompt as the model is sent it, and the file it came from (none for climpt's generic
/// retry message and the format-validation retry).
#[derive(Clone, Debug)]
pub(super) struct Prompt {
    pub text: String,
    pub file: Option<FileId>,
}

/// What routing decided (`RoutingResult`).
struct Routing {
    next: String,
    closing: bool,
    reason: String,
}

impl<'a> Flow<'a> {
    pub fn new(
        agent: &'a Agent<'a>,
        cassette: &'a FlowCassette,
        cassette_file: FileId,
        verdict_type: String,
        strict: bool,
    ) -> Self {
        let args = cassette
            .args
            .iter()
            .filter(|(_, value)| !value.is_null())
            .map(|(key, value)| (key.clone(), js_string(value)))
            .collect();
        Flow {
            agent,
            cassette,
            cassette_file,
            trace: Trace::default(),
            findings: Vec::new(),
            passed: 0,
            failed: 0,
            unchecked: 0,
            args,
            verdict_type,
            context: BTreeMap::new(),
            current: None,
            pending_retry: None,
            retry_attempts: BTreeMap::new(),
            used_validators: BTreeSet::new(),
            last_output: None,
            iterations: 0,
            outcome: None,
            last_step: None,
            rejected: None,
            strict,
            schemas: BTreeMap::new(),
            system: None,
            cause: None,
        }
    }

    /// Runs from the entry step until the run completes, fails, reaches `maxIterations` or the
    /// cassette runs out; then checks the run's expectations and reports what was recorded and
    /// never used.
    pub fn run(&mut self) {
        let entry = self.agent.entry(&self.verdict_type).map(str::to_string);
        let max = self.agent.max_iterations();
        self.emit(
            "AgentStart",
            json!({
                "agent": self.agent.id(), "release": super::RELEASE, "verdictType": self.verdict_type,
                "entry": entry, "maxIterations": max,
            }),
        );
        let outcome = match entry {
            Some(entry) => {
                self.current = Some(entry);
                self.iterate(max)
            }
            None => {
                let note = "the entry steps, by verdict type";
                self.cause = Some(Cause::Registry(vec!["entryStepMapping".into()], note.into()));
                Outcome::Failed {
                    code: "SR-GATE-002".into(),
                    message: format!(
                        "no entry step for verdict type `{}`: neither `entryStepMapping[\"{}\"]` nor `entryStep`",
                        self.verdict_type, self.verdict_type
                    ),
                }
            }
        };
        if let Outcome::Failed { code, message } = &outcome {
            self.emit("FlowError", json!({"code": code, "message": message, "step": self.last_step}));
            let stops = format!("the run stops in iteration {}: {message} (climpt: {code})", self.iterations.max(1));
            // An output the schema rejects is the defect; what the runtime then makes of it is
            // part of that finding, not another one.
            match self
                .findings
                .iter_mut()
                .find(|d| d.code == rules::OutputRejected && self.rejected == Some(self.iterations))
            {
                Some(rejected) => rejected.message.push_str(&format!("; {stops}")),
                None => {
                    let span = self.failure_span();
                    let finding = Diagnostic::new(rules::FlowStopped, self.cassette_file, span, stops);
                    let finding = self.with_cause(finding, self.cause.as_ref());
                    self.findings.push(finding);
                }
            }
        }
        let reason = match &outcome {
            Outcome::Completed(reason) => reason.clone(),
            Outcome::Failed { code, .. } => code.clone(),
            Outcome::MaxIterations => format!("Maximum iterations ({max}) reached without completion"),
            Outcome::Exhausted => "the cassette has nothing more to replay".into(),
        };
        // Not an event of the last step: the run's own.
        self.trace.emit(
            "AgentFinished",
            json!({"outcome": outcome.name(), "iterations": self.iterations, "lastStep": self.last_step, "reason": reason}),
        );
        self.outcome = Some(outcome);
        self.run_expectations();
        self.unused();
    }

    /// Appends an event; during an iteration every event names the iteration's step (`step`),
    /// so a timeline can mark the lines of one step.
    fn emit(&mut self, name: &'static str, data: Json) {
        let mut data = data;
        if let (Some(step), Some(map)) = (&self.last_step, data.as_object_mut())
            && !map.contains_key("step")
        {
            map.insert("step".into(), json!(step));
        }
        self.trace.emit(name, data);
    }

    /// Where a run that stopped is reported: the output of its last iteration, else the
    /// cassette's `iterations`.
    fn failure_span(&self) -> Span {
        let index = (self.iterations as usize).saturating_sub(1);
        self.cassette
            .iterations
            .get(index)
            .map(|it| it.output.as_ref().map_or(it.span, |(_, span)| *span))
            .or(self.cassette.iterations_key)
            .unwrap_or_default()
    }

    fn iterate(&mut self, max: u64) -> Outcome {
        loop {
            self.iterations += 1;
            let iteration = self.iterations;
            let step = self.current.clone().unwrap_or_default();
            self.last_step = Some(step.clone());
            let kind = self.agent.kind(&step);
            self.emit("IterationStart", json!({"iteration": iteration, "step": step, "kind": kind}));
            let result =
                if kind == Some("closure") { self.closure_iteration(&step) } else { self.flow_iteration(&step) };
            let done = match result {
                Ok(Some(done)) => done,
                Ok(None) => return Outcome::Exhausted,
                Err(Stop { code, .. }) if code == EXHAUSTED => return Outcome::Exhausted,
                Err(Stop { code, message, cause }) => {
                    self.cause = cause;
                    return Outcome::Failed { code, message };
                }
            };
            if let Some(reason) = done {
                return Outcome::Completed(reason);
            }
            if iteration >= max {
                return Outcome::MaxIterations;
            }
        }
    }

    /// The cassette's record of the current iteration; `None` (with a finding) when it has none.
    fn recorded(&mut self) -> Option<&'a Iteration> {
        let index = self.iterations as usize - 1;
        let found = self.cassette.iterations.get(index);
        if found.is_none() {
            let span = self.cassette.iterations_key.unwrap_or_default();
            let step = self.last_step.clone().unwrap_or_default();
            let message = format!(
                "the run needs iteration {} (step `{step}`), but the cassette records {} iteration(s); record what the model answers there",
                self.iterations,
                self.cassette.iterations.len()
            );
            self.findings.push(Diagnostic::new(rules::CassetteExhausted, self.cassette_file, span, message));
            self.emit("CassetteExhausted", json!({"iteration": self.iterations, "step": step}));
        }
        found
    }

    /// A work, verification or section step (climpt's Flow Loop). `Ok(Some(Some(reason)))`:
    /// the run completed; `Ok(Some(None))`: it goes on; `Ok(None)`: the cassette ran out.
    fn flow_iteration(&mut self, step: &str) -> Result<Option<Option<String>>, Stop> {
        if !self.agent.has_step(step) {
            let entry = self.entry_path();
            return Err(stop(
                "PR-C3L-003",
                format!("no C3L prompt for step `{step}`: it is not a step of the registry"),
            )
            .at(&entry, "the entry step"));
        }
        let prompt = self.next_prompt(step)?;
        let Some(recorded) = self.recorded() else { return Ok(None) };
        self.expect_prompt(recorded, &prompt.text);
        let output = self.ask(step, recorded, &prompt);
        let routing = self.handle_transition(step, output.as_ref())?;
        let flow_routing = self.flow_routing_enabled();
        if routing.is_none() && self.iterations > 1 && flow_routing {
            return Err(stop(
                "AgentStepRoutingError",
                format!(
                    "[StepFlow] No intent produced for iteration {} on step \"{step}\": flow steps must produce structured output with a valid intent",
                    self.iterations
                ),
            ));
        }
        self.expect_route(recorded, routing.as_ref().map(|r| r.next.as_str()));
        let done = if self.pending_retry.is_some() {
            None
        } else {
            let closing = routing.as_ref().is_some_and(|r| r.closing) || declares_closing(output.as_ref());
            if closing || !flow_routing {
                let reason = routing.as_ref().filter(|r| r.closing).map(|r| r.reason.clone());
                self.completion_loop(step, output.as_ref(), reason)?
            } else {
                None
            }
        };
        self.verdict(recorded, &done);
        Ok(Some(done))
    }

    /// A closure step: its own procedure (`runClosureIteration`).
    fn closure_iteration(&mut self, step: &str) -> Result<Option<Option<String>>, Stop> {
        if self.agent.step(step).and_then(|s| s.get("runner")).is_some() {
            return Err(stop(
                "SubprocessRunner",
                format!("closure step `{step}` runs a subprocess (`runner`), which the dry-run never starts"),
            )
            .at(&["steps", step, "runner"], "the subprocess runner"));
        }
        let prompt = self.next_prompt(step)?;
        let closure_id = closure_step_for(&self.verdict_type);
        // Pre-flight: the validation conditions before the model is asked (their `onFailure`
        // action is not read here: a failure only queues the retry prompt).
        let index = self.iterations as usize - 1;
        let recorded = self.cassette.iterations.get(index);
        if let Some(failed) = self.validate_state(&closure_id, recorded)? {
            self.emit(
                "PreflightFailed",
                json!({"iteration": self.iterations, "step": closure_id, "pattern": failed.pattern, "retryPrompt": failed.retry_prompt.text}),
            );
            self.pending_retry = Some(failed.retry_prompt);
            let Some(recorded) = self.recorded() else { return Ok(None) };
            // What the iteration records of a model answer is never used: one finding, on the
            // output (or on the request fingerprints when there is no output).
            let unused = recorded.output.as_ref().map(|(_, span)| ("output", *span));
            if let Some((what, span)) = unused.or(recorded.request_span.map(|span| ("request", span))) {
                let message = format!(
                    "the model is not asked in iteration {}: pre-flight validation of `{closure_id}` failed (`{}`), so this {what} is never used",
                    self.iterations, failed.pattern
                );
                self.findings.push(Diagnostic::new(rules::CassetteUnconsumed, self.cassette_file, span, message));
            }
            self.expect_prompt(recorded, &prompt.text);
            self.verdict(recorded, &None);
            return Ok(Some(None));
        }
        let Some(recorded) = self.recorded() else { return Ok(None) };
        self.expect_prompt(recorded, &prompt.text);
        let output = self.ask(step, recorded, &prompt);
        // The closure step's own answer goes into the step context; it is never routed.
        self.current = Some(step.to_string());
        self.expect_route(recorded, None);
        let done = self.completion_loop(step, output.as_ref(), None)?;
        self.verdict(recorded, &done);
        Ok(Some(done))
    }

    /// Where the registry names the entry step of this run's verdict type.
    fn entry_path(&self) -> Vec<String> {
        let mapped = self.agent.registry.get("entryStepMapping").and_then(|m| m.get(&self.verdict_type)).is_some();
        if mapped { vec!["entryStepMapping".into(), self.verdict_type.clone()] } else { vec!["entryStep".into()] }
    }

    /// The prompt of this iteration: the queued retry prompt, else the step's C3L prompt.
    fn next_prompt(&mut self, step: &str) -> Result<Prompt, Stop> {
        let Some(retry) = self.pending_retry.take() else { return self.step_prompt(step) };
        self.emit(
            "PromptBuilt",
            json!({"iteration": self.iterations, "step": step, "source": "retry", "prompt": retry.text, "verbatim": []}),
        );
        Ok(retry)
    }

    /// The C3L prompt of `step`, with its UV variables (`PromptResolver.resolve`).
    fn step_prompt(&mut self, step: &str) -> Result<Prompt, Stop> {
        let def = self.agent.step(step).cloned().unwrap_or(Json::Null);
        let field = |key: &str| def.get(key).and_then(Json::as_str).map(str::to_string);
        let (c2, c3) = (field("c2").unwrap_or_default(), field("c3").unwrap_or_default());
        let edition = field("edition").unwrap_or_else(|| "default".into());
        let adaptation = field("adaptation");
        let (path, file) = self.agent.prompt(&c2, &c3, &edition, adaptation.as_deref());
        let shown = path.strip_prefix(&self.agent.dir).unwrap_or(&path).display().to_string();
        let Some(file) = file else {
            let at = ["steps", step];
            return Err(stop("PR-C3L-004", format!("C3L prompt file not found for step `{step}`: {shown}"))
                .at(&at, "the step whose C3L prompt (c2, c3, edition, adaptation) is missing"));
        };
        let uv = self.uv_variables(step);
        let declared: Vec<String> = def
            .get("uvVariables")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        for (index, name) in declared.iter().enumerate() {
            let key = name.strip_prefix("uv-").unwrap_or(name);
            if uv.get(key).is_none_or(|v| v.is_empty()) {
                let index = index.to_string();
                return Err(stop(
                    "PR-RESOLVE-003",
                    format!("required UV variable `{name}` of step `{step}` has no value"),
                )
                .at(&["steps", step, "uvVariables", &index], "the variable declared here"));
            }
        }
        let uses_stdin = def.get("usesStdin").and_then(Json::as_bool) == Some(true);
        if uses_stdin && self.cassette.stdin.as_deref().is_none_or(str::is_empty) {
            return Err(stop(
                "PR-RESOLVE-004",
                format!("step `{step}` uses stdin, but the cassette gives no `stdin` text"),
            )
            .at(&["steps", step, "usesStdin"], "the step reads stdin"));
        }
        let rendered = prompt::render(&file.text, &uv, self.cassette.stdin.as_deref());
        if let Some(missing) = rendered.missing.first() {
            let tag = format!("{{uv-{missing}}}");
            let at = file.text.find(&tag).map_or(Span::empty(0), |start| Span::new(start, start + tag.len()));
            // A name of the handoff form (`<step_id>_<key>`) with no `inputs` entry: say so.
            let steps = self.agent.registry["steps"].as_object();
            let handoff = steps.into_iter().flatten().find_map(|(id, _)| {
                let key = missing.strip_prefix(&format!("{}_", id.replace('.', "_")))?;
                Some(format!(
                    "; to read `{key}` from the handoff of step `{id}`, declare it in the step's `inputs`: `\"{key}\": {{ \"from\": \"{id}.{key}\" }}`"
                ))
            });
            let hint = handoff.unwrap_or_default();
            return Err(stop("PR-RESOLVE-005", format!("`{tag}` in {shown} is not provided for step `{step}`{hint}"))
                .in_file(file.id, at, "the variable no channel provides"));
        }
        self.emit(
            "PromptBuilt",
            json!({
                "iteration": self.iterations, "step": step, "source": "c3l", "path": shown,
                "prompt": rendered.text, "substituted": rendered.substituted, "verbatim": rendered.verbatim,
            }),
        );
        Ok(Prompt { text: rendered.text, file: Some(file.id) })
    }

    /// The UV values of an iteration (`buildUvVariables` and channel 3): the CLI parameters, the
    /// runtime's own, the verdict handler's, and the inputs a step takes from earlier handoffs.
    fn uv_variables(&self, step: &str) -> BTreeMap<String, String> {
        let iteration = self.iterations;
        let mut uv: BTreeMap<String, String> = self.args.iter().cloned().collect();
        uv.insert("iteration".into(), iteration.to_string());
        if iteration > 1 {
            uv.insert("completed_iterations".into(), (iteration - 1).to_string());
        }
        let config = self.agent.verdict_config();
        if let Some(keyword) = config.get("verdictKeyword") {
            uv.insert("completion_keyword".into(), js_string(keyword));
        }
        if let Some(inputs) = self.agent.step(step).and_then(|s| s.get("inputs")).and_then(Json::as_object) {
            for (name, spec) in inputs {
                let (key, value) = match spec.get("from").and_then(Json::as_str).and_then(|f| f.rsplit_once('.')) {
                    Some((from_step, key)) => (
                        format!("{}_{key}", from_step.replace('.', "_")),
                        self.context.get(from_step).and_then(|out| out.get(key)).cloned(),
                    ),
                    None => (name.clone(), None),
                };
                let value = value.or_else(|| spec.get("default").cloned());
                if let Some(value) = value {
                    uv.entry(key).or_insert_with(|| js_string(&value));
                }
            }
        }
        if let Some(max) = config.get("maxIterations").and_then(Json::as_u64) {
            uv.insert("max_iterations".into(), max.to_string());
            uv.insert("remaining".into(), max.saturating_sub(iteration).to_string());
        }
        if let Some(max) = config.get("maxChecks") {
            uv.insert("max_checks".into(), js_string(max));
            uv.insert("check_count".into(), iteration.to_string());
        }
        let previous = match &self.last_output {
            Some((n, output)) if iteration > 1 => previous_summary(*n, output),
            _ => String::new(),
        };
        uv.insert("previous_summary".into(), previous);
        uv
    }

    fn flow_routing_enabled(&self) -> bool {
        self.agent.registry["steps"]
            .as_object()
            .is_some_and(|steps| steps.values().any(|s| s.get("structuredGate").is_some()))
    }

    /// `FlowOrchestrator.handleStepTransition`: the gate, the handoff, the router.
    fn handle_transition(&mut self, step: &str, output: Option<&Json>) -> Result<Option<Routing>, Stop> {
        let Some(output) = output else { return Ok(None) };
        let Some(def) = self.agent.step(step) else { return Ok(None) };
        let Some(gate) = def.get("structuredGate") else { return Ok(None) };
        let (intent, used_fallback, why) = interpret(gate, output, step)?;
        let target = (intent == "jump")
            .then(|| gate.get("targetField").and_then(Json::as_str))
            .flatten()
            .and_then(|field| value_at(output, field))
            .and_then(Json::as_str)
            .map(str::to_string);
        let mut handoff = Map::new();
        for field in gate.get("handoffFields").and_then(Json::as_array).into_iter().flatten().filter_map(Json::as_str) {
            match value_at(output, field) {
                Some(value) if !value.is_null() => {
                    handoff.insert(field.rsplit('.').next().unwrap_or(field).to_string(), value.clone());
                }
                _ => self
                    .emit("HandoffFieldMissing", json!({"iteration": self.iterations, "step": step, "field": field})),
            }
        }
        let reason = ["next_action.reason", "reason", "message", "next_action.details.reason"]
            .iter()
            .find_map(|path| value_at(output, path).and_then(Json::as_str))
            .map(str::to_string)
            .or(why);
        self.emit(
            "IntentInterpreted",
            json!({
                "iteration": self.iterations, "step": step, "intent": intent, "usedFallback": used_fallback,
                "target": target, "handoff": if handoff.is_empty() { Json::Null } else { Json::Object(handoff.clone()) },
                "reason": reason,
            }),
        );
        if let Some(recorded) = self.cassette.iterations.get(self.iterations as usize - 1) {
            self.expect(recorded, "intent", &json!(intent));
        }
        if !handoff.is_empty() {
            // `StepContext.set` replaces what the step recorded.
            self.context.insert(step.to_string(), handoff.clone());
        }
        let routing = self.route(step, &intent, target.as_deref(), &handoff, reason)?;
        self.emit(
            "RoutingDecision",
            json!({"iteration": self.iterations, "from": step, "to": routing.next, "intent": intent, "signalClosing": routing.closing, "reason": routing.reason}),
        );
        if !routing.closing && routing.next != step {
            self.current = Some(routing.next.clone());
        }
        Ok(Some(routing))
    }

    /// `WorkflowRouter.route`.
    fn route(
        &mut self,
        step: &str,
        intent: &str,
        target: Option<&str>,
        handoff: &Map<String, Json>,
        reason: Option<String>,
    ) -> Result<Routing, Stop> {
        let agent = self.agent;
        let def = agent.step(step).cloned().unwrap_or(Json::Null);
        if let Some(kind) = agent.kind(step)
            && intent != "abort"
            && !kind_allows(kind, intent)
        {
            let allowed = def.pointer("/structuredGate/allowedIntents").and_then(Json::as_array);
            let index = allowed.and_then(|a| a.iter().position(|i| i.as_str() == Some(intent)));
            let index = index.map(|i| i.to_string()).unwrap_or_default();
            return Err(stop(
                "SR-INTENT-001",
                format!("intent `{intent}` is not allowed for stepKind `{kind}` (step `{step}`)"),
            )
            .at(&["steps", step, "structuredGate", "allowedIntents", &index], "the gate allows the intent here"));
        }
        let done = |next: &str, closing: bool, default: String| Routing {
            next: next.to_string(),
            closing,
            reason: reason.clone().unwrap_or(default),
        };
        let transitions = def.get("transitions");
        let rule = |key: &str| transitions.and_then(|t| t.get(key));
        match intent {
            "closing" => return Ok(done(step, true, "Intent: closing".into())),
            "abort" => return Ok(done(step, true, "Intent: abort".into())),
            "repeat" => return Ok(done(step, false, "Intent: repeat".into())),
            "escalate" => {
                let Some(rule) = rule("escalate") else {
                    return Err(stop(
                        "SR-TRANS-007",
                        format!("step `{step}` escalates, but has no `transitions.escalate`"),
                    )
                    .at(&["steps", step, "transitions"], "the step's transitions"));
                };
                return match rule.get("target").and_then(Json::as_str) {
                    Some(to) if agent.has_step(to) => Ok(done(to, false, format!("Escalate to: {to}"))),
                    Some(to) => {
                        Err(stop("SR-TRANS-008", format!("escalate target `{to}` of step `{step}` is not a step"))
                            .at(&["steps", step, "transitions", "escalate", "target"], "the transition"))
                    }
                    None => Err(stop("SR-TRANS-009", format!("`transitions.escalate` of step `{step}` has no target"))
                        .at(&["steps", step, "transitions", "escalate"], "the transition")),
                };
            }
            "handoff" => {
                if let Some(rule) = rule("handoff")
                    && let Some(to) = rule.get("target")
                {
                    return match to.as_str() {
                        Some(to) if agent.has_step(to) => {
                            if def.get("c2").and_then(Json::as_str) == Some("initial") {
                                self.emit(
                                    "RoutingWarning",
                                    json!({"step": step, "warning": format!("Handoff from initial step '{step}'")}),
                                );
                            }
                            Ok(done(to, false, format!("Handoff to closure: {to}")))
                        }
                        Some(to) => {
                            Err(stop("SR-TRANS-006", format!("handoff target `{to}` of step `{step}` is not a step"))
                                .at(&["steps", step, "transitions", "handoff", "target"], "the transition"))
                        }
                        None => {
                            Err(stop("SR-TRANS-005", format!("`transitions.handoff` of step `{step}` has target null"))
                                .at(&["steps", step, "transitions", "handoff", "target"], "the transition"))
                        }
                    };
                }
                return Err(stop(
                    "SR-TRANS-004",
                    format!("step `{step}` hands off, but has no `transitions.handoff` target"),
                )
                .at(&["steps", step, "transitions", "handoff"], "the step's transitions"));
            }
            "jump" if target.is_some() => {
                let to = target.unwrap_or_default();
                if !agent.has_step(to) {
                    return Err(stop("SR-TRANS-010", format!("jump target `{to}` (from step `{step}`) is not a step"))
                        .at(&["steps", step, "structuredGate", "targetField"], "the gate reads the target here"));
                }
                return Ok(done(to, false, format!("Jump to: {to}")));
            }
            _ => {}
        }
        if let Some(rule) = rule(intent) {
            // The target, and the key of the transition it is under (`target`, `targets/<value>`).
            let mut under = vec!["target".to_string()];
            let resolved = if let Some(to) = rule.get("target") {
                Some(to.as_str())
            } else if let (Some(condition), Some(targets)) =
                (rule.get("condition").and_then(Json::as_str), rule.get("targets"))
            {
                let value = match handoff.get(condition) {
                    Some(Json::String(text)) => text.clone(),
                    Some(Json::Bool(b)) => b.to_string(),
                    Some(Json::Null) | None => "default".into(),
                    Some(other) => js_string(other),
                };
                self.emit("ConditionEvaluated", json!({"step": step, "condition": condition, "value": value}));
                // `targets[value] ?? targets.default ?? null`: a null target falls through too.
                let key = if targets.get(&value).is_some_and(|t| !t.is_null()) { value } else { "default".to_string() };
                under = vec!["targets".to_string(), key.clone()];
                Some(targets.get(&key).and_then(Json::as_str))
            } else {
                None
            };
            let mut at = vec!["steps", step, "transitions", intent];
            at.extend(under.iter().map(String::as_str));
            match resolved {
                Some(None) => {
                    return Err(stop(
                        "SR-TRANS-002",
                        format!(
                            "`transitions.{intent}` of step `{step}` leads to null (terminal), which only `closing` may"
                        ),
                    )
                    .at(&at, "the transition"));
                }
                Some(Some(to)) if agent.has_step(to) => {
                    return Ok(done(to, false, format!("Transition: {intent} -> {to}")));
                }
                Some(Some(to)) => {
                    return Err(stop(
                        "SR-TRANS-001",
                        format!("`transitions.{intent}` of step `{step}` leads to `{to}`, which is not a step"),
                    )
                    .at(&at, "the transition"));
                }
                None => {}
            }
        }
        // The default transition: `initial.X` → `continuation.X` ("prefix substitution").
        if let Some(rest) = step.strip_prefix("initial.") {
            let continuation = format!("continuation.{rest}");
            if agent.has_step(&continuation) {
                self.emit("PrefixSubstitution", json!({"from": step, "to": continuation}));
                let default = format!("Default transition: {step} -> {continuation}");
                return Ok(done(&continuation, false, default));
            }
        }
        Err(stop(
            "SR-TRANS-003",
            format!("step `{step}` has no transition for `{intent}` and no `continuation.*` step to fall back to"),
        )
        .at(&["steps", step, "transitions"], "the step's transitions"))
    }

    /// `CompletionLoopProcessor.runClosureLoop`: validation, the closure step's own signal, or
    /// the router's closing. `Some(reason)`: done.
    fn completion_loop(
        &mut self,
        step: &str,
        output: Option<&Json>,
        closing: Option<String>,
    ) -> Result<Option<String>, Stop> {
        let closure_id = closure_step_for(&self.verdict_type);
        self.emit(
            "CompletionLoopEnter",
            json!({"iteration": self.iterations, "step": step, "validationStep": closure_id}),
        );
        let recorded = self.cassette.iterations.get(self.iterations as usize - 1);
        if let Some(failed) = self.validate(&closure_id, output, recorded)? {
            match failed.action.as_str() {
                "abort" => {
                    return Err(stop(
                        "AgentValidationAbortError",
                        format!("Validation aborted for step \"{closure_id}\": {}", failed.why),
                    )
                    .at(&["validationSteps", &closure_id, "onFailure"], "what a failed validation does"));
                }
                "skip" => self.emit("ValidationSkipped", json!({"step": closure_id, "pattern": failed.pattern})),
                _ => {
                    self.emit(
                        "RetryPromptQueued",
                        json!({"iteration": self.iterations, "step": closure_id, "pattern": failed.pattern, "attempt": failed.attempt, "retryPrompt": failed.retry_prompt.text}),
                    );
                    self.pending_retry = Some(failed.retry_prompt);
                    return Ok(None);
                }
            }
        }
        if closing.is_none()
            && let Some(action) =
                output.and_then(|o| o.get("next_action")).and_then(|n| n.get("action")).and_then(Json::as_str)
            && (action == "closing" || action == "repeat")
        {
            let kind = self.agent.kind(step);
            if kind != Some("closure") {
                return Err(stop(
                    "AgentStepRoutingError",
                    format!(
                        "non-closure step \"{step}\" (kind: {}) emitted closing signal \"{action}\": only closure steps may",
                        kind.unwrap_or("unknown")
                    ),
                )
                .at(&["steps", step, "stepKind"], "the step's kind"));
            }
            if action == "closing" {
                self.emit("BoundaryHook", json!({"step": step}));
                return Ok(Some("Closure step emitted closing signal".into()));
            }
            return Ok(None);
        }
        if let Some(reason) = closing {
            self.emit("BoundaryHook", json!({"step": step}));
            return Ok(Some(reason));
        }
        // The verdict handler decides from the outside world (an issue's state, a keyword):
        // nothing the cassette records, so the run goes on.
        Ok(None)
    }

    /// `ValidationChain.validateState`: the conditions alone.
    fn validate_state(
        &mut self,
        validation_step: &str,
        recorded: Option<&'a Iteration>,
    ) -> Result<Option<Failed>, Stop> {
        let Some(config) = self.agent.registry.get("validationSteps").and_then(|v| v.get(validation_step)).cloned()
        else {
            return Ok(None);
        };
        self.conditions(validation_step, &config, recorded)
    }

    /// `ValidationChain.validate`: an inline `outputSchema` of the validation step, then the
    /// conditions.
    fn validate(
        &mut self,
        validation_step: &str,
        output: Option<&Json>,
        recorded: Option<&'a Iteration>,
    ) -> Result<Option<Failed>, Stop> {
        let Some(config) = self.agent.registry.get("validationSteps").and_then(|v| v.get(validation_step)).cloned()
        else {
            return Ok(None);
        };
        if let (Some(schema), Some(output)) = (config.get("outputSchema"), output)
            && let Ok(validator) = jsonschema::options().build(schema)
            && let Some(error) = validator.iter_errors(output).next()
        {
            let retry = format!(
                "The previous response did not match the expected format.\n\nError: {error}\n\nPlease provide a response in the correct format."
            );
            return Ok(Some(Failed {
                pattern: "format".into(),
                retry_prompt: Prompt { text: retry, file: None },
                action: "retry".into(),
                why: error.to_string(),
                attempt: 0,
            }));
        }
        self.conditions(validation_step, &config, recorded)
    }

    /// The validation conditions in order (`StepValidator.validate`), each answered from the
    /// iteration's recorded `validators`; the first failure decides.
    fn conditions(
        &mut self,
        validation_step: &str,
        config: &Json,
        recorded: Option<&'a Iteration>,
    ) -> Result<Option<Failed>, Stop> {
        let conditions = config.get("validationConditions").and_then(Json::as_array).cloned().unwrap_or_default();
        if conditions.is_empty() {
            return Ok(None);
        }
        let index = self.iterations as usize - 1;
        for (number, condition) in conditions.iter().enumerate() {
            let Some(id) = condition.get("validator").and_then(Json::as_str) else { continue };
            let Some(def) = self.agent.registry.get("validators").and_then(|v| v.get(id)).cloned() else {
                let number = number.to_string();
                let at = ["validationSteps", validation_step, "validationConditions", &number, "validator"];
                return Err(
                    stop("ValidatorNotFound", format!("Validator not found: \"{id}\"")).at(&at, "the condition")
                );
            };
            let Some(recorded) = recorded else {
                // The iteration itself is not recorded.
                self.recorded();
                return Err(stop(EXHAUSTED, "the iteration is not recorded"));
            };
            let Some(result) = recorded.validators.iter().find(|v| v.id == id) else {
                let span = recorded.span;
                let message = format!(
                    "iteration {} runs validator `{id}` (validation of `{validation_step}`), but the cassette records no result for it; add `validators: {{{id}: {{exitCode: …, stdout: …}}}}`",
                    self.iterations
                );
                self.findings.push(Diagnostic::new(rules::CassetteExhausted, self.cassette_file, span, message));
                self.emit("CassetteExhausted", json!({"iteration": self.iterations, "validator": id}));
                return Err(stop(EXHAUSTED, format!("no recorded result for validator `{id}`")));
            };
            self.used_validators.insert((index, id.to_string()));
            let success_when = def.get("successWhen").and_then(Json::as_str).unwrap_or("");
            let passed = match success(success_when, result) {
                Some(passed) => passed,
                None => {
                    return Err(stop(
                        "SuccessConditionNotEvaluated",
                        format!("validator `{id}`'s `successWhen: {success_when}` is not evaluated by the dry-run"),
                    )
                    .at(&["validators", id, "successWhen"], "the condition"));
                }
            };
            self.emit(
                "ValidatorRan",
                json!({"iteration": self.iterations, "validator": id, "successWhen": success_when, "exitCode": result.exit_code, "passed": passed}),
            );
            if passed {
                continue;
            }
            let pattern = def.get("failurePattern").and_then(Json::as_str).unwrap_or("").to_string();
            let recoverable = result.exit_code != 126
                && result.exit_code != 127
                && !result.stderr.contains("EACCES")
                && !result.stderr.contains("Permission denied")
                && def.get("recoverableByDefault").and_then(Json::as_bool).unwrap_or(true);
            let mut action = config.pointer("/onFailure/action").and_then(Json::as_str).unwrap_or("retry").to_string();
            if !recoverable {
                action = "abort".into();
            }
            let mut attempt = 0;
            if action == "retry" {
                let count = self.retry_attempts.entry(validation_step.to_string()).or_insert(0);
                *count += 1;
                attempt = *count;
                let max =
                    config.pointer("/onFailure/maxAttempts").and_then(Json::as_u64).unwrap_or(DEFAULT_MAX_ATTEMPTS);
                if attempt >= max {
                    action = "abort".into();
                }
            }
            let params = params(&def, result);
            let retry_prompt = self.retry_prompt(config, &pattern, &params);
            let why = if result.stderr.is_empty() { result.stdout.clone() } else { result.stderr.clone() };
            return Ok(Some(Failed { pattern, retry_prompt, action, why, attempt }));
        }
        self.retry_attempts.remove(validation_step);
        Ok(None)
    }

    /// `RetryHandler.buildRetryPrompt`: the failure pattern's C3L prompt under the validation
    /// step's `c2`/`c3`, its params injected; else `f_failed.md`; else a generic message.
    fn retry_prompt(&mut self, config: &Json, pattern: &str, params: &Map<String, Json>) -> Prompt {
        let field = |key: &str| config.get(key).and_then(Json::as_str).unwrap_or("").to_string();
        let (c2, c3) = (field("c2"), field("c3"));
        let found = self.agent.registry.get("failurePatterns").and_then(|p| p.get(pattern));
        let mut tried = Vec::new();
        if let Some(found) = found {
            let edition = found.get("edition").and_then(Json::as_str).unwrap_or("failed");
            let adaptation = found.get("adaptation").and_then(Json::as_str);
            let (path, file) = self.agent.prompt(&c2, &c3, edition, adaptation);
            tried.push(path.clone());
            if let Some(file) = file {
                let text = prompt::inject_params(&file.text, params);
                self.emit("RetryPromptBuilt", json!({"pattern": pattern, "path": shown(self.agent, &path)}));
                return Prompt { text, file: Some(file.id) };
            }
        }
        let (path, file) = self.agent.prompt(&c2, &c3, "failed", None);
        if let Some(file) = file {
            self.emit(
                "RetryPromptBuilt",
                json!({"pattern": pattern, "path": shown(self.agent, &path), "fallback": true}),
            );
            return Prompt { text: prompt::inject_params(&file.text, params), file: Some(file.id) };
        }
        tried.push(path);
        let tried: Vec<String> = tried.iter().map(|p| shown(self.agent, p)).collect();
        self.emit("RetryPromptBuilt", json!({"pattern": pattern, "path": null, "tried": tried}));
        let mut lines = vec!["## Verdict conditions not met".to_string(), String::new()];
        if !pattern.is_empty() {
            lines.push(format!("Detected pattern: {pattern}"));
            lines.push(String::new());
        }
        Prompt { text: lines.join("\n"), file: None }
    }

    /// `verdictChecked`, and the iteration's expectations about the verdict.
    fn verdict(&mut self, recorded: &Iteration, done: &Option<String>) {
        self.emit(
            "VerdictChecked",
            json!({"iteration": self.iterations, "isComplete": done.is_some(), "reason": done.clone().unwrap_or_else(|| "continue".into())}),
        );
        let verdict = if done.is_some() { "done" } else { "continue" };
        self.expect(recorded, "verdict", &json!(verdict));
        self.expect(recorded, "step", &json!(self.last_step));
    }

    fn expect_route(&mut self, recorded: &Iteration, next: Option<&str>) {
        self.expect(recorded, "route", &json!(next));
    }

    fn expect_prompt(&mut self, recorded: &Iteration, prompt: &str) {
        for expectation in recorded.expect.iter().filter(|e| e.key.starts_with("prompt.")) {
            let text = expectation.value.as_str().unwrap_or("");
            let contains = prompt.contains(text);
            let held = if expectation.key == "prompt.contains" { contains } else { !contains };
            let what = if expectation.key == "prompt.contains" { "contains" } else { "does not contain" };
            let actual = if contains { "it does".to_string() } else { "it does not".to_string() };
            self.outcome_of(
                expectation,
                format!("iteration {}: the prompt {what} {}", self.iterations, json!(text)),
                actual,
                held,
            );
        }
    }

    /// Checks the iteration's expectation `key`, if it has one, against `actual`.
    fn expect(&mut self, recorded: &Iteration, key: &str, actual: &Json) {
        for expectation in recorded.expect.iter().filter(|e| e.key == key) {
            let held = &expectation.value == actual;
            let expected = format!("iteration {} {key}: {}", self.iterations, expectation.value);
            self.outcome_of(expectation, expected, actual.to_string(), held);
        }
    }

    fn outcome_of(&mut self, expectation: &Expectation, expected: String, actual: String, held: bool) {
        if held {
            self.passed += 1;
        } else {
            self.failed += 1;
            let message = format!("expected {expected}, but the run gives {actual}");
            self.findings.push(Diagnostic::new(
                rules::ExpectationFailed,
                self.cassette_file,
                expectation.span,
                message,
            ));
        }
        let outcome = if held { "held" } else { "failed" };
        self.emit(
            "ExpectationOutcome",
            json!({"kind": expectation.key, "expected": expected, "actual": actual, "outcome": outcome}),
        );
    }

    /// The run's own `expect`, and the iterations' expectations the run never reached.
    fn run_expectations(&mut self) {
        let outcome = self.outcome.clone().unwrap_or(Outcome::Exhausted);
        for expectation in &self.cassette.expect {
            let actual = match expectation.key.as_str() {
                "outcome" => json!(outcome.name()),
                "iterations" => json!(self.iterations),
                "step" => json!(self.last_step),
                "error" => match &outcome {
                    Outcome::Failed { code, .. } => json!(code),
                    _ => Json::Null,
                },
                _ => continue,
            };
            let held = expectation.value == actual;
            self.outcome_of(
                expectation,
                format!("expect.{}: {}", expectation.key, expectation.value),
                actual.to_string(),
                held,
            );
        }
        let reached = self.iterations as usize;
        for (index, iteration) in self.cassette.iterations.iter().enumerate().skip(reached) {
            if iteration.expect.is_empty() {
                continue;
            }
            let why = format!("the run ended after iteration {reached} ({})", outcome.name());
            let count = u32::try_from(iteration.expect.len()).unwrap_or(u32::MAX);
            self.failed = self.failed.saturating_add(count);
            self.unchecked = self.unchecked.saturating_add(count);
            for expectation in &iteration.expect {
                let expected = format!("iteration {} {}: {}", index + 1, expectation.key, expectation.value);
                self.emit(
                    "ExpectationOutcome",
                    json!({"kind": expectation.key, "expected": expected, "outcome": "unchecked", "why": why}),
                );
            }
            let message = format!(
                "iteration {} is never run, so its {} expectation(s) were never checked: {why}",
                index + 1,
                iteration.expect.len()
            );
            self.findings.push(Diagnostic::new(rules::ExpectationFailed, self.cassette_file, iteration.span, message));
        }
    }

    /// Recorded iterations the run never reached, and validator results it never asked for.
    fn unused(&mut self) {
        let reached = self.iterations as usize;
        let left: Vec<&Iteration> =
            self.cassette.iterations.iter().skip(reached).filter(|i| i.expect.is_empty()).collect();
        if let Some(first) = left.first() {
            let message = format!(
                "{} recorded iteration(s) from iteration {} on are never replayed: the run ended after iteration {reached}",
                left.len(),
                reached + 1
            );
            self.findings.push(Diagnostic::new(rules::CassetteUnconsumed, self.cassette_file, first.span, message));
        }
        // climpt validates the entry of `validationSteps` its verdict type maps to, whatever the
        // closure step is called: a registry keyed otherwise is never validated.
        let closure_id = closure_step_for(&self.verdict_type);
        let steps = self.agent.registry.get("validationSteps").and_then(Json::as_object);
        let unread = |id: &str| -> String {
            if steps.is_some_and(|s| s.contains_key(&closure_id)) {
                return String::new();
            }
            let listed = steps.into_iter().flatten().find(|(_, config)| {
                config
                    .get("validationConditions")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                    .any(|c| c.get("validator").and_then(Json::as_str) == Some(id))
            });
            listed.map_or(String::new(), |(name, _)| {
                format!(
                    ": climpt validates `validationSteps.{closure_id}` under verdict type `{}`, which the registry does not have (`{name}` lists `{id}` and is never used)",
                    self.verdict_type
                )
            })
        };
        for (index, iteration) in self.cassette.iterations.iter().enumerate().take(reached) {
            for result in &iteration.validators {
                if !self.used_validators.contains(&(index, result.id.clone())) {
                    let message = format!(
                        "iteration {} never runs validator `{}`, so this result is never read{}",
                        index + 1,
                        result.id,
                        unread(&result.id)
                    );
                    self.findings.push(Diagnostic::new(rules::ResultIgnored, self.cassette_file, result.span, message));
                }
            }
        }
    }
}

/// A validation that failed.
struct Failed {
    pattern: String,
    retry_prompt: Prompt,
    /// `retry`, `abort` or `skip`.
    action: String,
    why: String,
    /// The retry counter after this failure (0 when not retried).
    attempt: u64,
}

/// `StepGateInterpreter.extractIntent`: the intent, whether the fallback was used, and why.
fn interpret(gate: &Json, output: &Json, step: &str) -> Result<(String, bool, Option<String>), Stop> {
    let allowed: Vec<&str> =
        gate.get("allowedIntents").and_then(Json::as_array).into_iter().flatten().filter_map(Json::as_str).collect();
    let field = gate.get("intentField").and_then(Json::as_str).unwrap_or("");
    let refused = match value_at(output, field) {
        None | Some(Json::Null) => format!("No value at path: {field}"),
        Some(value) => {
            let text = js_string(value).to_lowercase();
            match ACTION_TO_INTENT.iter().find(|(alias, _)| *alias == text) {
                Some((_, intent)) if allowed.contains(intent) => return Ok((intent.to_string(), false, None)),
                Some((_, intent)) => format!("Intent '{intent}' not in allowedIntents"),
                None => format!("Unknown intent value: {text}"),
            }
        }
    };
    if gate.get("failFast").and_then(Json::as_bool) != Some(false) {
        return Err(stop(
            "GateInterpretationError",
            format!(
                "[failFast] Cannot determine intent: {refused}. Step \"{step}\" has failFast enabled (default), no fallback allowed."
            ),
        )
        .at(&["steps", step, "structuredGate", "intentField"], "the gate reads the intent here"));
    }
    let fallback = gate.get("fallbackIntent").and_then(Json::as_str).filter(|f| allowed.contains(f));
    let intent = fallback.or_else(|| allowed.contains(&"next").then_some("next")).or_else(|| allowed.first().copied());
    match intent {
        Some(intent) => Ok((intent.to_string(), true, Some(refused))),
        None => Err(stop("GateInterpretationError", format!("Cannot determine intent: {refused}"))
            .at(&["steps", step, "structuredGate", "allowedIntents"], "the gate allows no intent")),
    }
}

/// `getValueAtPath`: a dot path; a segment indexes an object by key or an array by number.
fn value_at<'j>(value: &'j Json, path: &str) -> Option<&'j Json> {
    path.split('.').try_fold(value, |current, part| match current {
        Json::Object(map) => map.get(part),
        Json::Array(items) => part.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

/// `hasAIVerdictDeclaration`: `next_action.action` is exactly `closing`.
fn declares_closing(output: Option<&Json>) -> bool {
    output.and_then(|o| o.get("next_action")).and_then(|n| n.get("action")).and_then(Json::as_str) == Some("closing")
}

/// `checkSuccessCondition` (`None` for a form the dry-run cannot evaluate: `matches:`).
fn success(condition: &str, result: &ValidatorResult) -> Option<bool> {
    if condition == "empty" {
        return Some(result.stdout.trim().is_empty());
    }
    if let Some(code) = condition.strip_prefix("exitCode:") {
        let digits: String = code.trim_start().chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
        return Some(digits.parse::<i64>().ok() == Some(result.exit_code));
    }
    if let Some(text) = condition.strip_prefix("contains:") {
        return Some(result.stdout.contains(text));
    }
    if condition.starts_with("matches:") {
        return None;
    }
    Some(false)
}

/// The parameters a failed validator hands its retry prompt: the recorded `params`, else what
/// the extractors the dry-run knows give (`stdout`, `stderr`, `exitCode`, and git status lines
/// for `parseChangedFiles` and `parseUntrackedFiles`).
fn params(def: &Json, result: &ValidatorResult) -> Map<String, Json> {
    let mut out = Map::new();
    for (name, extractor) in def.get("extractParams").and_then(Json::as_object).into_iter().flatten() {
        let value = match extractor.as_str().unwrap_or("") {
            "stdout" => Some(json!(result.stdout)),
            "stderr" => Some(json!(result.stderr)),
            "exitCode" => Some(json!(result.exit_code)),
            "parseChangedFiles" => Some(json!(
                result
                    .stdout
                    .lines()
                    .filter(|l| l.len() > 3 && !l.starts_with("??"))
                    .map(|l| l[3..].trim().to_string())
                    .collect::<Vec<_>>()
            )),
            "parseUntrackedFiles" => Some(json!(
                result
                    .stdout
                    .lines()
                    .filter_map(|l| l.strip_prefix("?? "))
                    .map(|l| l.trim().to_string())
                    .collect::<Vec<_>>()
            )),
            _ => None,
        };
        if let Some(value) = value {
            out.insert(name.clone(), value);
        }
    }
    out.extend(result.params.clone());
    out
}

/// `formatIterationSummary`, from what the cassette records of an iteration (its structured
/// output; the assistant's text and tools are not recorded).
fn previous_summary(iteration: u64, output: &Json) -> String {
    let mut parts = vec![format!("## Previous Iteration Summary (Iteration {iteration})")];
    let mut status = Vec::new();
    if let Some(value) = output.get("status").filter(|s| !s.is_null() && s.as_str() != Some("")) {
        status.push(format!("**Reported Status**: {}", js_string(value)));
    }
    if let Some(next) = output.get("next_action").filter(|n| !n.is_null()) {
        let action = next.get("action").unwrap_or(next);
        let reason = next.get("reason").and_then(Json::as_str).filter(|r| !r.is_empty());
        let reason = reason.map_or(String::new(), |r| format!(" ({r})"));
        status.push(format!("**Declared Next Action**: {}{reason}", js_string(action)));
    }
    if !status.is_empty() {
        parts.push(format!("### Previous Iteration Decision\n{}", status.join("\n")));
    }
    parts.join("\n\n")
}

fn shown(agent: &Agent, path: &std::path::Path) -> String {
    path.strip_prefix(&agent.dir).unwrap_or(path).display().to_string()
}
