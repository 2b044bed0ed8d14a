//! One stage execution: Setup → Init → CheckGate → Act → Assert (→ retry) → Exit, against a
//! cassette. Every branch of the completion channel follows `spec/domain.md` §1.3–1.5 and
//! `spec/dryrun.md` §3.3; what happened is recorded as events, and every difference from
//! what the cassette expects becomes a finding on the cassette's lines.

mod expect;
mod request;

use std::collections::BTreeMap;

use serde_json::{Value as Json, json};

use crate::cassette::digest::{canonical, fingerprint};
use crate::cassette::provider::{Block, Message, Request, Response, ToolCall, ToolResult, ToolSpec};
use crate::cassette::{Decision, Expect, FakeResult, Gate, Reply, StageCassette, Turn, Verdict};
use crate::diagnostic::{Diagnostic, FileId, Severity};
use crate::registry::cassette as rules;
use crate::runtime::events::Trace;
use crate::runtime::stages::messages;
use crate::runtime::stages::stage::{InitFailure, Phase, StageSpec};
use crate::source::Span;
pub use expect::all_expectations;
use expect::{Observed, Used, end_expectations, result_expectations};
use request::provider_event;
pub use request::{fingerprints, tool_specs};

/// What a stage execution needs besides the stage and its cassette.
pub struct Env {
    /// Where mismatch findings point.
    pub cassette_file: FileId,
    /// Drift is an error, not a warning.
    pub strict: bool,
}

/// The typed StageResult of seed 000.
#[derive(Clone, Debug, PartialEq)]
pub struct StageResult {
    pub verdict: Verdict,
    pub reason: String,
    pub parsed: Option<Json>,
    pub cap_hit: bool,
    pub attempt_count: u32,
}

impl StageResult {
    pub fn to_json(&self) -> Json {
        json!({
            "verdict": self.verdict.as_str(),
            "reason": self.reason,
            "parsed": self.parsed,
            "capHit": self.cap_hit,
            "attemptCount": self.attempt_count,
        })
    }
}

/// How a stage execution ended.
#[derive(Clone, Debug)]
pub enum Ended {
    /// Ran to Exit with this result.
    Exited(StageResult),
    /// Setup or Init failed: an authoring error.
    InitFailed,
    /// The cassette ran out; the run cannot go on.
    Aborted,
}

/// The state one run (a stage or a machine) shares across stage executions.
pub struct Run<'a> {
    pub env: Env,
    pub trace: Trace,
    pub findings: Vec<Diagnostic>,
    /// The cassette being replayed as JSON, for `$ref` in `expectResult`.
    pub cassette_json: &'a Json,
    /// Expectations checked and failed, for the summary.
    pub passed: u32,
    pub failed: u32,
    /// Of the failed ones, those never checked (the run never reached them).
    pub unchecked: u32,
    /// Recording: turns come from this provider instead of the cassette, and are kept.
    pub live: Option<Live<'a>>,
    /// Recording: placeholder results given in the current turn, by call id.
    recorded_results: serde_json::Map<String, Json>,
    /// The current attempt's last completion parse error (`{call, errors}`).
    parse_error: Option<Json>,
    /// Where each `ctx.upstream` element of the next stage execution was recorded, when a stage
    /// of this run produced it (a machine sets it; empty when the cassette's `ctx` gives it).
    pub upstream_from: Vec<Producer>,
}

/// The recording of a stage execution whose result another stage receives.
#[derive(Clone, Debug)]
pub struct Producer {
    pub stage: String,
    pub file: FileId,
    /// Its `stages.<id>` entry (or execution) in a machine cassette, its `stage:` otherwise.
    pub span: Span,
}

/// A live provider and what it answered, for writing a cassette.
pub struct Live<'a> {
    pub provider: &'a mut dyn crate::cassette::provider::Provider,
    /// Per stage execution (stage id), per attempt: the recorded turns in cassette form.
    pub recorded: Vec<(String, Vec<Vec<Json>>)>,
    /// Tool calls seen so far, for normalized ids.
    pub calls: u32,
}

/// How Act ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ActEnd {
    Completed,
    CapHit,
    ProviderTransient,
    ProviderCapability,
    Gated(Gate),
    Exhausted,
}

impl ActEnd {
    fn as_str(self) -> &'static str {
        match self {
            ActEnd::Completed => "completed",
            ActEnd::CapHit => "capHit",
            ActEnd::ProviderTransient | ActEnd::ProviderCapability => "providerError",
            ActEnd::Gated(_) => "gated",
            ActEnd::Exhausted => "cassetteExhausted",
        }
    }
}

impl<'a> Run<'a> {
    pub fn new(env: Env, cassette_json: &'a Json) -> Run<'a> {
        Run {
            env,
            trace: Trace::default(),
            findings: Vec::new(),
            cassette_json,
            passed: 0,
            failed: 0,
            unchecked: 0,
            live: None,
            recorded_results: serde_json::Map::new(),
            parse_error: None,
            upstream_from: Vec::new(),
        }
    }

    fn finding(&mut self, code: &'static str, span: Span, message: String) {
        self.findings.push(self.diagnostic(code, span, message));
    }

    fn diagnostic(&self, code: &'static str, span: Span, message: String) -> Diagnostic {
        Diagnostic::new(code, self.env.cassette_file, span, message)
    }

    /// Runs `stage` with `ctx` against `cassette`. `execution` numbers repeated executions of
    /// the same stage in one run, for its pinned `stageExecutionId`.
    pub fn stage(&mut self, stage: &StageSpec, cassette: &StageCassette, ctx: Json, execution: u32) -> Ended {
        let ctx = pin_ids(ctx, &stage.id, execution);
        // Every event until Exit (and Next) is about this stage.
        self.trace.scope = Some(stage.id.clone());
        if let Some(live) = &mut self.live {
            live.recorded.push((stage.id.clone(), Vec::new()));
        }
        let ended = self.execute(stage, cassette, ctx);
        self.trace.scope = None;
        ended
    }

    fn execute(&mut self, stage: &StageSpec, cassette: &StageCassette, ctx: Json) -> Ended {
        let setup = self.setup(stage, &ctx);
        self.trace.emit(
            "StageSetup",
            json!({
                "stage": stage.id,
                "file": stage.path,
                "outcome": if setup.is_empty() { "ok" } else { "failed" },
                "ids": {"workflowRunId": ctx["workflowRunId"], "stageExecutionId": ctx["stageExecutionId"]},
                "ctxKeys": ctx.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()).unwrap_or_default(),
                "upstream": ctx["upstream"].as_array().map_or(0, Vec::len),
                "maxAttempts": stage.max_attempts,
                "turnCap": stage.turn_cap,
            }),
        );
        // A failed Setup stops the stage before anything is rendered.
        let system = if setup.is_empty() { self.init(stage, &ctx) } else { Err(setup) };
        let system = match system {
            Ok(system) => system,
            Err(failures) => {
                // One event for all upstream results the inputsSchema rejects: a join whose siblings both fail its
                // inputsSchema failed Setup once, for two reasons.
                let mut merged = false;
                for failure in &failures {
                    if failure.upstream.is_some() && std::mem::replace(&mut merged, true) {
                        continue;
                    }
                    let same = failures
                        .iter()
                        .filter(|f| std::ptr::eq(*f, failure) || (failure.upstream.is_some() && f.upstream.is_some()));
                    let detail = same.map(|f| f.detail.as_str()).collect::<Vec<_>>().join("; ");
                    self.trace.emit(
                        "StageInitFailed",
                        json!({"stage": stage.id, "phase": failure.phase.as_str(), "reason": failure.reason, "detail": detail}),
                    );
                }
                self.report_init_failed(stage, cassette, failures);
                return Ended::InitFailed;
            }
        };
        let tools = tool_specs(stage);
        let mut transcript = vec![Message::User(messages::start(stage))];
        let mut result = StageResult {
            verdict: Verdict::Fail,
            reason: String::new(),
            parsed: None,
            cap_hit: false,
            attempt_count: 0,
        };
        let mut used: Vec<Used> = Vec::new();
        let mut proposals = 0;
        for attempt in 1..=stage.max_attempts {
            result.attempt_count = attempt;
            // `parsed` is what the final attempt accepted: an earlier attempt's payload that
            // Assert sent back for a retry does not carry over.
            result.parsed = None;
            self.parse_error = None;
            let scripted = cassette.attempts.get(attempt as usize - 1);
            let gate = scripted.and_then(|a| a.check_gate).or(cassette.check_gate).map_or(Gate::Proceed, |(g, _)| g);
            let gate_name = match gate {
                Gate::Proceed => "proceed",
                Gate::Retry => "retry",
                Gate::Skip => "skip",
            };
            self.trace.emit("StageCheckGate", json!({"attempt": attempt, "outcome": gate_name}));
            let (end, turns) = if gate == Gate::Proceed {
                let mut act =
                    Act { stage, cassette, system: &system, tools: &tools, attempt, proposals: &mut proposals };
                self.act(&mut act, &mut transcript, &mut result)
            } else {
                (ActEnd::Gated(gate), 0)
            };
            used.push(Used { turns, gate: (gate != Gate::Proceed).then_some(gate_name) });
            if end == ActEnd::Exhausted {
                self.unconsumed(cassette, &used, "the replay stopped");
                self.never_exited(cassette, scripted, attempt);
                return Ended::Aborted;
            }
            if gate == Gate::Proceed {
                self.trace.emit(
                    "ActEnded",
                    json!({"attempt": attempt, "end": end.as_str(), "turns": turns, "turnCap": stage.turn_cap}),
                );
            }
            result.cap_hit = end == ActEnd::CapHit;
            let verdict = match (scripted.and_then(|a| a.assert), end) {
                (Some((verdict, _)), _) => verdict,
                (None, ActEnd::Gated(Gate::Skip)) => Verdict::Skip,
                (None, ActEnd::Gated(_) | ActEnd::CapHit | ActEnd::ProviderTransient) => Verdict::Retry,
                (None, ActEnd::ProviderCapability) => Verdict::Fail,
                (None, _) => Verdict::Ok,
            };
            let reason = match end {
                ActEnd::Completed => "completed",
                ActEnd::CapHit => "capHit",
                ActEnd::ProviderTransient => "providerTransient",
                ActEnd::ProviderCapability => "providerCapability",
                ActEnd::Gated(_) => "checkGate",
                ActEnd::Exhausted => "cassetteExhausted",
            };
            let via = match (scripted.and_then(|a| a.assert), end) {
                (Some(_), _) => "cassette.assert",
                // The gate's verdict is the Assert outcome (stud-cli's CheckGate).
                (None, ActEnd::Gated(_)) => "checkGate",
                (None, _) => "default",
            };
            // `ctx.attempts[i].parseError`: the attempt's last completion parse error, if any.
            let parse_error = self.parse_error.take().unwrap_or(Json::Null);
            self.trace.emit(
                "StageAssertOutcome",
                json!({"attempt": attempt, "verdict": verdict.as_str(), "reason": reason, "via": via, "parseError": parse_error}),
            );
            if let Some(end_expect) = scripted.and_then(|a| a.expect_end.clone()) {
                if let Some((act, span)) = &end_expect.act {
                    self.expect_value("act", *span, "Act to end with", act, end.as_str());
                }
                if let Some((assert, span)) = &end_expect.assert {
                    self.expect_value("assert", *span, "Assert to return", assert, verdict.as_str());
                }
            }
            result.verdict = verdict;
            result.reason = reason.to_string();
            if verdict != Verdict::Retry {
                break;
            }
            if attempt == stage.max_attempts {
                result.verdict = Verdict::Fail;
                result.reason = format!(
                    "retry budget exhausted ({} attempt{})",
                    stage.max_attempts,
                    if stage.max_attempts == 1 { "" } else { "s" }
                );
                break;
            }
            let message = messages::retry(stage, attempt + 1, reason);
            self.trace.emit("RetryAppended", json!({"attempt": attempt + 1, "reason": reason}));
            transcript.push(Message::User(message));
        }
        self.unconsumed(cassette, &used, "the stage exited");
        self.trace.emit("StageExited", json!({"stage": stage.id, "result": result.to_json()}));
        self.expect_result(cassette, &result);
        Ended::Exited(result)
    }

    /// The cassette ran out in `attempt`: its `expectEnd` and the `expectResult` were never
    /// checked, so they did not hold (one `ExpectationFailed` each, naming what was expected).
    fn never_exited(&mut self, cassette: &StageCassette, scripted: Option<&crate::cassette::Attempt>, attempt: u32) {
        let why = format!("the cassette ran out in attempt {attempt}, so the stage never exited");
        if let Some(scripted) = scripted {
            let listed = end_expectations(attempt as usize, scripted);
            if let (false, Some(end)) = (listed.is_empty(), &scripted.expect_end) {
                self.unchecked(&listed, &why);
                let message = format!("`expectEnd` of attempt {attempt} was never checked: {why}");
                self.finding(rules::ExpectationFailed, end.span, message);
            }
        }
        let listed = result_expectations(cassette);
        if let (false, Some(result)) = (listed.is_empty(), &cassette.expect_result) {
            self.unchecked(&listed, &why);
            let fields: Vec<&str> = result.fields.iter().map(|(f, _, _)| f.as_str()).collect();
            let message = format!(
                "`expectResult` ({}) was never checked: {why}",
                fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
            );
            self.finding(rules::ExpectationFailed, result.span, message);
        }
    }

    /// Setup: the definition contract (the linter's errors on the frontmatter and
    /// `inputsSchema`), then each `ctx.upstream` element against `inputsSchema`. Every reason
    /// it fails, or none.
    fn setup(&mut self, stage: &StageSpec, ctx: &Json) -> Vec<InitFailure> {
        let mut failures: Vec<InitFailure> =
            stage.definition.iter().filter(|f| f.phase == Phase::Setup).cloned().collect();
        if !failures.is_empty() {
            return failures;
        }
        if let Some(schema) = &stage.inputs_schema {
            match jsonschema::options().build(schema) {
                Ok(validator) => {
                    for (i, upstream) in ctx["upstream"].as_array().into_iter().flatten().enumerate() {
                        if let Some(error) = validator.iter_errors(upstream).next() {
                            let at = error.instance_path().to_string();
                            failures.push(InitFailure {
                                phase: Phase::Setup,
                                reason: "InputsSchemaInvalid",
                                detail: format!("ctx.upstream[{i}]{at}: {error}"),
                                at: None,
                                from_ctx: true,
                                upstream: Some(i),
                            });
                        }
                    }
                }
                Err(_) => failures.push(InitFailure {
                    phase: Phase::Setup,
                    reason: "InputsSchemaInvalid",
                    detail: "inputsSchema is not a valid JSON Schema".into(),
                    at: None,
                    from_ctx: false,
                    upstream: None,
                }),
            }
        }
        failures
    }

    /// Init: tool names and the completion channel, the template (the linter's errors on the
    /// tags it renders), then the rendering itself. The rendered system prompt, or every
    /// reason it fails.
    fn init(&mut self, stage: &StageSpec, ctx: &Json) -> Result<String, Vec<InitFailure>> {
        let mut failures: Vec<InitFailure> =
            stage.definition.iter().filter(|f| f.phase == Phase::Init).cloned().collect();
        if jsonschema::options().build(&stage.completion_schema).is_err()
            && !failures.iter().any(|f| f.reason == "CompletionSchemaInvalid")
        {
            failures.push(InitFailure {
                phase: Phase::Init,
                reason: "CompletionSchemaInvalid",
                detail: "completionSchema is not a valid JSON Schema".into(),
                at: None,
                from_ctx: false,
                upstream: None,
            });
        }
        let rendered = stage.render(ctx);
        // A tag the definition check already rejects (`{{env.HOME}}`) is not also unresolved.
        let rejected =
            |span: &Span| failures.iter().filter_map(|f| f.at).any(|at| at.start < span.end && span.start < at.end);
        let unresolved: Vec<_> = rendered.unresolved.iter().filter(|(_, span, _)| !rejected(span)).cloned().collect();
        for (path, span, from_ctx) in &unresolved {
            let detail = format!("`{path}` has no value in the stage context");
            failures.push(InitFailure {
                phase: Phase::Init,
                reason: "UnresolvedPlaceholder",
                detail,
                at: Some(*span),
                from_ctx: *from_ctx,
                upstream: None,
            });
        }
        if !failures.is_empty() {
            return Err(failures);
        }
        self.trace.emit(
            "StageInitRendered",
            json!({
                "bodySha256": fingerprint(&rendered.text),
                "length": rendered.text.chars().count(),
                "placeholders": rendered.resolved,
                "empty": rendered.empty,
                "verbatim": rendered.verbatim,
            }),
        );
        Ok(rendered.text)
    }

    /// One finding per reason: what the cassette's ctx lacks is the cassette's defect
    /// (`ContextIncomplete`); what the stage gets wrong only stops the replay (`StageInitFailed`).
    fn report_init_failed(&mut self, stage: &StageSpec, cassette: &StageCassette, failures: Vec<InitFailure>) {
        let stage_span = cassette.stage.as_ref().map_or(Span::empty(cassette.span.start), |(_, s)| *s);
        // The stage's expectations were never checked, so they did not hold: counted once,
        // however many reasons it failed for (a join whose siblings both fail its inputsSchema).
        let phase = failures.first().map_or("Init", |f| f.phase.as_str());
        let listed = all_expectations(cassette);
        self.unchecked(&listed, &format!("`{}` failed {phase}", stage.id));
        let unchecked = listed.len();
        let note = if unchecked > 0 {
            format!(" ({unchecked} expectation(s) of `{}` were never checked)", stage.id)
        } else {
            String::new()
        };
        for failure in failures {
            let producer = failure.upstream.and_then(|i| self.upstream_from.get(i)).cloned();
            let finding = if let Some(producer) = producer {
                self.upstream_rejected(stage, &failure, &producer, &note)
            } else if failure.from_ctx {
                let span = cassette.ctx.as_ref().map_or(stage_span, |(_, s)| *s);
                let message = format!("stage `{}` would fail Init with this ctx: {}{note}", stage.id, failure.detail);
                self.diagnostic(rules::ContextIncomplete, span, message)
                    .with_related(stage.file, failure.at.unwrap_or(stage.anchor), "needed here")
                    .with_help(if failure.upstream.is_some() {
                        "make the cassette's `ctx.upstream` elements satisfy the stage's inputsSchema (each is a StageResult: verdict, reason, parsed, capHit, attemptCount)"
                    } else {
                        "add the value to the cassette's `ctx:`; if the state machine may leave the field out, declare it under `context.optional` in its file (then it renders empty)"
                    })
            } else {
                let message = format!(
                    "stage `{}` fails {} ({}), so this cassette cannot be replayed: {}{note}",
                    stage.id,
                    failure.phase.as_str(),
                    failure.reason,
                    failure.detail
                );
                self.diagnostic(rules::StageInitFailed, stage_span, message)
                    .with_related(stage.file, stage.anchor, "the stage")
                    .with_help("`stagelint check` on the stage explains the reason; fix the stage, then replay")
            };
            self.findings.push(finding);
        }
    }

    /// A result another stage of the run produced fails this stage's `inputsSchema`: the
    /// recording of that stage (or the schema) is at fault, not the cassette's `ctx`. The
    /// finding goes on the producer's recording; this stage's expectations were never checked.
    fn upstream_rejected(
        &self,
        stage: &StageSpec,
        failure: &InitFailure,
        producer: &Producer,
        unchecked: &str,
    ) -> Diagnostic {
        let index = failure.upstream.unwrap_or(0);
        let role = if self.upstream_from.len() > 1 { "join" } else { "stage" };
        let message = format!(
            "{role} `{}` fails Setup: the result recorded for `{}` (its `ctx.upstream[{index}]`) does not satisfy the inputsSchema of `{}`: {}{unchecked}",
            stage.id, producer.stage, stage.id, failure.detail
        );
        Diagnostic::new(rules::StageInitFailed, producer.file, producer.span, message)
            .with_severity(Severity::Error)
            .with_related(stage.file, stage.inputs_schema_key.unwrap_or(stage.anchor), "the inputsSchema it fails")
            .with_help(format!(
                "`{}` receives this result as `ctx.upstream[{index}]`: change what `{}` records (its completion payload), or the inputsSchema of `{}`",
                stage.id, producer.stage, stage.id
            ))
    }

    /// The Act loop of one attempt; returns how it ended and how many turns it used.
    fn act(&mut self, act: &mut Act, transcript: &mut Vec<Message>, result: &mut StageResult) -> (ActEnd, usize) {
        let turns = act.cassette.attempts.get(act.attempt as usize - 1).map_or(&[][..], |a| &a.turns[..]);
        let mut used = 0;
        loop {
            let index = used;
            // The request (a copy of the transcript) is built only for what reads it: a live
            // provider, or a turn with recorded fingerprints.
            let wanted = self.live.is_some() || turns.get(index).is_some_and(|t| t.request.is_some());
            let request = wanted.then(|| Request {
                system: act.system.to_string(),
                tools: act.tools.to_vec(),
                messages: transcript.clone(),
                attempt: act.attempt,
                turn: index as u32 + 1,
            });
            let live_turn;
            let turn = if let Some(request) = request.as_ref().filter(|_| self.live.is_some()) {
                live_turn = self.ask_live(request);
                &live_turn
            } else if let Some(turn) = turns.get(index) {
                turn
            } else {
                self.exhausted(act, index);
                return (ActEnd::Exhausted, used);
            };
            used += 1;
            if let Some(request) = &request {
                self.drift(turn, request, act.stage, act.cassette);
            }
            let response = match &turn.reply {
                Reply::Error(error) => {
                    self.trace.emit(
                        "ProviderError",
                        json!({"attempt": act.attempt, "turn": used, "class": error.class, "code": error.code}),
                    );
                    let observed = vec![Observed { branch: "providerError", ..Observed::default() }];
                    self.expectations(turn, &observed);
                    if let Some(live) = &mut self.live
                        && let Some((_, attempts)) = live.recorded.last_mut()
                    {
                        let error = json!({"error": {"class": error.class, "code": error.code}});
                        slot(attempts, act.attempt).push(error);
                    }
                    let end = if error.class == "ProviderCapability" {
                        ActEnd::ProviderCapability
                    } else {
                        ActEnd::ProviderTransient
                    };
                    return (end, used);
                }
                Reply::Response(response) => response,
            };
            self.trace.emit("ProviderResponse", provider_event(act.attempt, used, response));
            transcript.push(Message::Assistant(response.content.clone()));
            let (observed, results, completed) = self.classify(act, turn, response, used, result);
            if !results.is_empty() {
                transcript.push(Message::ToolResults(results));
            }
            if let Some(steer) = observed.iter().find(|o| o.branch == "steer").map(|_| messages::steer(act.stage)) {
                transcript.push(Message::User(steer));
            }
            self.expectations(turn, &observed);
            if let Some(request) = &request {
                self.record(act, request, response, &observed);
            }
            if completed {
                return (ActEnd::Completed, used);
            }
            if used as u32 >= act.stage.turn_cap {
                return (ActEnd::CapHit, used);
            }
        }
    }

    /// Asks the live provider for the next turn (recording).
    fn ask_live(&mut self, request: &Request) -> Turn {
        let live = self.live.as_mut().expect("recording");
        let reply = match live.provider.respond(request) {
            Ok(mut response) => {
                // Ids are normalized as they arrive (`c1`, `c2`, … per run), so the transcript,
                // the fingerprints and the written cassette all use the same ones.
                for block in &mut response.content {
                    if let Block::ToolCall(call) = block {
                        live.calls += 1;
                        call.id = format!("c{}", live.calls);
                    }
                }
                Reply::Response(response)
            }
            Err(error) => Reply::Error(error),
        };
        Turn {
            span: Span::default(),
            reply,
            call_spans: BTreeMap::new(),
            grant: BTreeMap::new(),
            results: BTreeMap::new(),
            expect: Vec::new(),
            request: None,
        }
    }

    /// Keeps a live turn in cassette form: the response, the results the fakes gave, the
    /// request's fingerprints and what the runtime did (as `expect`, so the new cassette is a
    /// passing conformance test).
    fn record(&mut self, act: &Act, request: &Request, response: &Response, observed: &[Observed]) {
        let results = std::mem::take(&mut self.recorded_results);
        let Some(live) = &mut self.live else { return };
        let Some((_, attempts)) = live.recorded.last_mut() else { return };
        let mut turn = serde_json::Map::new();
        turn.insert("response".into(), response.to_cassette_json());
        if !results.is_empty() {
            turn.insert("results".into(), Json::Object(results));
        }
        let expect: Vec<Json> = observed.iter().map(Observed::to_expect).collect();
        turn.insert("expect".into(), Json::Array(expect));
        let request = fingerprints(request).into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        turn.insert("request".into(), Json::Object(request));
        slot(attempts, act.attempt).push(Json::Object(turn));
    }

    /// Classifies a response exactly as seed 000 does, before any gate, and answers it.
    fn classify(
        &mut self,
        act: &mut Act,
        turn: &Turn,
        response: &Response,
        number: usize,
        result: &mut StageResult,
    ) -> (Vec<Observed>, Vec<ToolResult>, bool) {
        let attempt = act.attempt;
        let stage = act.stage;
        let calls: Vec<&ToolCall> = response.calls().collect();
        let completions = calls.iter().filter(|c| c.name == stage.completion_tool).count();
        let mut results = Vec::new();
        let mut observed = Vec::new();
        let mut synthesized: Vec<&str> = Vec::new();
        // Calls that never become a grantStageTool proposal, so a `grant:` for them is unused.
        let mut unproposed: Vec<&str> = Vec::new();
        if calls.is_empty() {
            self.trace.emit("SteeringAppended", json!({"attempt": attempt, "turn": number}));
            observed.push(Observed { branch: "steer", ..Observed::default() });
        } else if completions >= 1 && calls.len() > 1 {
            let ids: Vec<String> = calls.iter().map(|c| c.id.clone()).collect();
            for call in &calls {
                results.push(ToolResult { call_id: call.id.clone(), content: messages::batch(stage), is_error: true });
                synthesized.push(&call.id);
                unproposed.push(&call.id);
            }
            self.trace.emit("BatchRejected", json!({"attempt": attempt, "turn": number, "calls": ids}));
            observed.push(Observed { branch: "batchRejected", calls: ids, ..Observed::default() });
        } else if completions == 1 {
            let call = calls[0];
            synthesized.push(&call.id);
            unproposed.push(&call.id);
            match parse_completion(stage, call) {
                Ok(parsed) => {
                    self.trace.emit("CompletionAccepted", json!({"attempt": attempt, "turn": number, "call": call.id}));
                    observed.push(Observed {
                        branch: "completion",
                        call: Some(call.id.clone()),
                        ..Observed::default()
                    });
                    result.parsed = Some(parsed);
                    self.ignored(turn, &synthesized, &unproposed);
                    return (observed, results, true);
                }
                Err(errors) => {
                    let listed: Vec<Json> = errors.iter().map(|e| json!({"at": e.at, "msg": e.message})).collect();
                    self.parse_error = Some(json!({"call": call.id, "errors": listed}));
                    self.trace.emit(
                        "CompletionParseFailed",
                        json!({"attempt": attempt, "turn": number, "call": call.id, "errors": listed}),
                    );
                    results.push(ToolResult {
                        call_id: call.id.clone(),
                        content: messages::parse_failure(stage, &errors),
                        is_error: true,
                    });
                    observed.push(Observed {
                        branch: "parseFailure",
                        call: Some(call.id.clone()),
                        error_at: errors.iter().map(|e| e.at.clone()).collect(),
                        missing: errors.into_iter().filter_map(|e| e.missing).collect(),
                        ..Observed::default()
                    });
                }
            }
        } else {
            for call in &calls {
                if let Err(why) = call.arguments() {
                    // Arguments that do not parse cannot be run or granted: the model gets an
                    // error result, as a provider adapter would give it.
                    let content = messages::invalid_arguments(&call.name, why);
                    self.trace.emit(
                        "ToolCallInvalid",
                        json!({
                            "attempt": attempt, "turn": number, "call": call.id, "tool": call.name,
                            "reason": format!("arguments are {why}"), "bytes": content.len(),
                        }),
                    );
                    results.push(ToolResult { call_id: call.id.clone(), content, is_error: true });
                    synthesized.push(&call.id);
                    unproposed.push(&call.id);
                    observed.push(Observed {
                        branch: "tool",
                        call: Some(call.id.clone()),
                        outcome: Some("invalidArguments"),
                        ..Observed::default()
                    });
                    continue;
                }
                let allowed = stage.allowed_tools.contains(&call.name);
                let outcome = if allowed {
                    unproposed.push(&call.id);
                    "dispatched"
                } else {
                    *act.proposals += 1;
                    match self.grant(act, turn, call, number) {
                        Decision::Approve => "approved",
                        Decision::Deny => "denied",
                        Decision::Defer => "deferred",
                    }
                };
                let answer = if matches!(outcome, "dispatched" | "approved") {
                    self.dispatch(attempt, number, turn, act.cassette, call)
                } else {
                    synthesized.push(&call.id);
                    FakeResult { content: messages::denied(stage, &call.name), is_error: true }
                };
                results.push(ToolResult {
                    call_id: call.id.clone(),
                    content: answer.content,
                    is_error: answer.is_error,
                });
                observed.push(Observed {
                    branch: "tool",
                    call: Some(call.id.clone()),
                    outcome: Some(outcome),
                    ..Observed::default()
                });
            }
        }
        self.ignored(turn, &synthesized, &unproposed);
        (observed, results, false)
    }

    /// An out-of-envelope call: a `grantStageTool` proposal answered by the cassette
    /// (`grant:` for the call, else `interactor.grantStageTool`, else deny: no interactor).
    fn grant(&mut self, act: &Act, turn: &Turn, call: &ToolCall, number: usize) -> Decision {
        let (decision, via) = match (turn.grant.get(&call.id), act.cassette.grant_default) {
            (Some((decision, _)), _) => (*decision, "cassette.grant"),
            (None, Some(decision)) => (decision, "cassette.interactor"),
            (None, None) => (Decision::Deny, "no interactor"),
        };
        let digest = call.args_digest();
        let proposal = format!("p{}", act.proposals);
        self.trace.emit(
            "GrantRequested",
            json!({
                "attempt": act.attempt, "turn": number, "call": call.id, "tool": call.name,
                "proposalId": proposal, "argsDigest": digest,
            }),
        );
        if decision == Decision::Approve {
            // A single-use token bound to exactly this proposal: consumed by this dispatch.
            self.trace.emit(
                "GrantApproved",
                json!({"attempt": act.attempt, "turn": number, "call": call.id, "proposalId": proposal, "via": via}),
            );
        } else {
            self.trace.emit(
                "ToolCallDenied",
                json!({
                    "attempt": act.attempt, "turn": number, "call": call.id, "tool": call.name,
                    "argsDigest": digest, "decision": decision.as_str(), "via": via,
                }),
            );
        }
        decision
    }

    /// Answers a dispatched call from the turn's `results`, else the `tools:` table; with
    /// neither, the closed world says no (`cassette/ToolFakeMissing`).
    fn dispatch(
        &mut self,
        attempt: u32,
        number: usize,
        turn: &Turn,
        cassette: &StageCassette,
        call: &ToolCall,
    ) -> FakeResult {
        self.trace
            .emit("ToolCallStarted", json!({"attempt": attempt, "turn": number, "call": call.id, "tool": call.name}));
        let args = call.arguments().unwrap_or_default();
        let found = turn.results.get(&call.id).map(|(r, _)| (r.clone(), "turn.results")).or_else(|| {
            let fakes = cassette.tools.get(&call.name)?;
            let exact = fakes.iter().find(|f| f.args.as_ref().is_some_and(|a| canonical(a) == canonical(&args)));
            exact.or_else(|| fakes.iter().find(|f| f.args.is_none())).map(|f| (f.result.clone(), "tools"))
        });
        match found {
            Some((result, via)) => {
                let name = if result.is_error { "ToolCallFailed" } else { "ToolCallSucceeded" };
                self.trace.emit(
                    name,
                    json!({"attempt": attempt, "turn": number, "call": call.id, "bytes": result.content.len(), "via": via}),
                );
                result
            }
            None if self.live.is_some() => {
                // Recording never runs a real tool: the author fills in the placeholder.
                let content = messages::record_placeholder(&call.name);
                self.recorded_results.insert(call.id.clone(), json!({"content": content}));
                self.trace.emit(
                    "ToolCallSucceeded",
                    json!({"attempt": attempt, "turn": number, "call": call.id, "bytes": content.len(), "via": "placeholder"}),
                );
                FakeResult { content, is_error: false }
            }
            None => {
                let span = turn.call_spans.get(&call.id).copied().unwrap_or(turn.span);
                let fakes = cassette.tools.get(&call.name).map(Vec::as_slice).unwrap_or_default();
                let mut d = if fakes.is_empty() {
                    self.diagnostic(
                        rules::ToolFakeMissing,
                        span,
                        format!(
                            "`{}` ({}) is dispatched but the cassette has no result for it; add `results: {{{}: …}}` to the turn or a `tools.{}` fake",
                            call.name, call.id, call.id, call.name
                        ),
                    )
                } else {
                    // Fakes match on canonical args; say so, and show the ones that did not.
                    self.diagnostic(
                        rules::ToolFakeMissing,
                        span,
                        format!(
                            "`{}` ({}) is dispatched with args {} but no `tools.{}` fake has those args; add a fake for them (or `anyArgs: true`), or `results: {{{}: …}}` on the turn",
                            call.name,
                            call.id,
                            crate::util::shorten(&canonical(&args), 120),
                            call.name,
                            call.id
                        ),
                    )
                };
                for fake in fakes.iter().take(3) {
                    d = d.with_related(self.env.cassette_file, fake.span, "a fake for other args");
                }
                self.findings.push(d);
                let bytes = messages::FAKE_MISSING.len();
                self.trace.emit(
                    "ToolCallFailed",
                    json!({"attempt": attempt, "turn": number, "call": call.id, "bytes": bytes, "via": "missing"}),
                );
                FakeResult { content: messages::FAKE_MISSING.into(), is_error: true }
            }
        }
    }

    /// Results the cassette supplies for calls the runtime answers itself, and grants for
    /// calls that never become a proposal: recorded data the replay never reads.
    fn ignored(&mut self, turn: &Turn, synthesized: &[&str], unproposed: &[&str]) {
        for id in synthesized {
            if let Some((_, span)) = turn.results.get(*id) {
                let message = format!(
                    "the result for `{id}` is never used: the runtime answers this call itself (denied, rejected or the completion tool)"
                );
                self.finding(rules::ResultIgnored, *span, message);
            }
        }
        for id in unproposed {
            if let Some((_, span)) = turn.grant.get(*id) {
                let message = format!(
                    "the grant for `{id}` is never used: the call is not a grantStageTool proposal (an allowed tool, the completion tool or part of a rejected batch)"
                );
                self.finding(rules::ResultIgnored, *span, message);
            }
        }
    }
}

/// The per-attempt inputs of Act.
struct Act<'s> {
    stage: &'s StageSpec,
    cassette: &'s StageCassette,
    system: &'s str,
    tools: &'s [ToolSpec],
    attempt: u32,
    proposals: &'s mut u32,
}

/// The recorded turns of `attempt` (1-based), created on first use.
fn slot(attempts: &mut Vec<Vec<Json>>, attempt: u32) -> &mut Vec<Json> {
    while attempts.len() < attempt as usize {
        attempts.push(Vec::new());
    }
    &mut attempts[attempt as usize - 1]
}

/// One validation error of a completion payload.
#[derive(Clone, Debug)]
pub struct PayloadError {
    /// The JSON pointer of the failing value (`""` is the root).
    pub at: String,
    pub message: String,
    /// For a `required` error, the pointer of the missing property (`/severity`).
    pub missing: Option<String>,
}

/// Validates a completion payload.
fn parse_completion(stage: &StageSpec, call: &ToolCall) -> Result<Json, Vec<PayloadError>> {
    let error = |message: String| PayloadError { at: String::new(), message, missing: None };
    // Raw text that parses, object or not, goes to the schema, which says what it expected.
    let args = match (&call.args, &call.args_raw) {
        (None, Some(raw)) => match serde_json::from_str::<Json>(raw) {
            Ok(args) => args,
            Err(_) => return Err(vec![error(format!("the arguments are not JSON: {}", short(&json!(raw))))]),
        },
        _ => call.arguments().unwrap_or_default(),
    };
    let args = &args;
    let Ok(validator) = jsonschema::options().build(&stage.completion_schema) else {
        return Err(vec![error("completionSchema does not compile".into())]);
    };
    let errors: Vec<PayloadError> = validator
        .iter_errors(args)
        .map(|e| {
            let at = e.instance_path().to_string();
            let missing = match e.kind() {
                jsonschema::error::ValidationErrorKind::Required { property } => {
                    let name = property.as_str().map_or_else(|| property.to_string(), str::to_string);
                    Some(format!("{at}/{}", name.replace('~', "~0").replace('/', "~1")))
                }
                _ => None,
            };
            PayloadError { at, message: e.to_string(), missing }
        })
        .collect();
    if errors.is_empty() { Ok(args.clone()) } else { Err(errors) }
}

/// `errorAt` as written: `""` and `"/"` both name the root.
fn pointer(text: &str) -> &str {
    if text == "/" { "" } else { text }
}

/// A JSON pointer in a message, quoted so an empty one shows: `"/steps"`, `"" (root)`.
pub fn show_pointer(at: &str) -> String {
    if at.is_empty() { "\"\" (root)".into() } else { format!("\"{at}\"") }
}

/// `workflowRunId` and `stageExecutionId` from the cassette's ctx, else pinned, never random.
fn pin_ids(mut ctx: Json, stage: &str, execution: u32) -> Json {
    if !ctx.is_object() {
        ctx = json!({});
    }
    let map = ctx.as_object_mut().expect("an object");
    map.entry("workflowRunId").or_insert_with(|| json!("wr-dryrun"));
    let fresh = json!(format!("se-{stage}-{execution}"));
    if execution > 1 || !map.contains_key("stageExecutionId") {
        map.insert("stageExecutionId".into(), fresh);
    }
    map.entry("upstream").or_insert_with(|| json!([]));
    ctx
}

/// A value for a message, at most 60 characters.
fn short(value: &Json) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}
