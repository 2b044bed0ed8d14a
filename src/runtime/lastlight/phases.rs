//! The phase bodies, per engine, each following its upstream function line by line: the
//! seed-era linear runner (`runWorkflow` in `src/workflows/runner.ts` at dd02adf), its DAG
//! runner (`runDagWorkflow`, same file), and the current engine's `PhaseExecutor`
//! (`packages/workflow-engine/src/core/phase-executor.ts` at 2d26144). They differ in small
//! ways that change what runs: which messages are posted, whether a loop can pause, what a
//! loop leaves in `phaseOutputs`, how a label is named.

use serde_json::{Map, Value, json};

use crate::runtime::lastlight::cassette::Execution;
use crate::runtime::lastlight::runner::{
    Call, Outcome, Pending, PhaseResult, Prompt, Ran, Runner, Stop, WfResult, is_terminated,
};
use crate::runtime::lastlight::until;
use crate::runtime::lastlight::value::Ctx;
use crate::runtime::lastlight::workflow::{GenericLoop, Phase, resolve_budget};

/// How a seed-era linear phase ends the loop over phases.
pub enum Flow {
    Next,
    Return(WfResult),
}

/// A seed-era DAG node's end (`{ node, result, paused, alreadyPushed }`).
pub struct NodeEnd {
    pub result: PhaseResult,
    pub paused: bool,
    pub already_pushed: bool,
}

/// What the current engine's `execute(node, outputs)` returns (`PhaseOutcome`).
pub struct HeadEnd {
    pub results: Vec<PhaseResult>,
    pub status: Outcome,
    pub paused: bool,
    pub output_vars: Option<Map<String, Value>>,
}

/// The verdict of a reviewer's output (`parseReviewerVerdict`): the first `VERDICT:` line, else
/// approved only when the output starts with `APPROVED` and never says `REQUEST_CHANGES`.
pub fn parse_verdict(output: &str) -> (bool, bool) {
    for line in output.split('\n') {
        let line = line.trim_matches(crate::runtime::lastlight::value::is_js_space);
        let Some(rest) = line.get(..8).filter(|head| head.eq_ignore_ascii_case("VERDICT:")).map(|_| &line[8..]) else {
            continue;
        };
        let verdict = rest.trim_matches(crate::runtime::lastlight::value::is_js_space);
        if verdict.eq_ignore_ascii_case("APPROVED") {
            return (true, false);
        }
        if verdict.eq_ignore_ascii_case("REQUEST_CHANGES") {
            return (false, false);
        }
    }
    let upper = output.to_uppercase();
    let request_changes = word_in(&upper, "REQUEST_CHANGES");
    let approved =
        upper.starts_with("APPROVED") && !upper[8..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
    (!request_changes && approved, true)
}

/// `/\bWORD\b/` on ASCII word boundaries.
fn word_in(text: &str, word: &str) -> bool {
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    text.match_indices(word)
        .any(|(at, _)| !is_word(text[..at].chars().next_back()) && !is_word(text[at + word.len()..].chars().next()))
}

fn put(ctx: &mut Ctx, key: &str, value: Value) {
    ctx.set(key, Some(value));
}

fn with(ctx: &Ctx, pairs: &[(&str, Value)]) -> Ctx {
    let mut out = ctx.clone();
    for (key, value) in pairs {
        out.set(key, Some(value.clone()));
    }
    out
}

impl Runner<'_> {
    fn models(&self, phase: &Phase, task: &str) -> (Option<String>, Option<String>) {
        (
            self.model(phase.model.as_ref(), task, None, "models"),
            self.model(phase.variant.as_ref(), task, None, "variants"),
        )
    }

    fn fix_models(&self, phase: &Phase) -> (Option<String>, Option<String>) {
        let review = phase.review_loop.as_ref();
        let fix = format!("{}_fix", phase.name);
        (
            self.model(review.and_then(|l| l.fix_model.as_ref()), &fix, Some(&phase.name), "models"),
            self.model(review.and_then(|l| l.fix_variant.as_ref()), &fix, Some(&phase.name), "variants"),
        )
    }

    fn start(&mut self, phase: &Phase, label: &str) {
        self.emit("PhaseStart", json!({"phase": phase.name, "label": label}));
    }

    /// The `contains_BLOCKED` rule on an output: `None` when it does not fail the workflow,
    /// else the error. Posts the bypass or blocked message.
    fn blocked(
        &mut self,
        phase: &Phase,
        output: &str,
        ctx: &Ctx,
        guarded: bool,
        recording: usize,
    ) -> Result<Option<String>, Stop> {
        let Some(rule) = phase.blocked_rule.clone() else { return Ok(None) };
        let found = output.to_uppercase().contains("BLOCKED");
        let mut fails = false;
        let mut bypass = Value::Null;
        if found {
            let labels = ctx.get("issueLabels");
            let by_label = rule.unless_label.as_ref().is_some_and(|label| {
                labels.and_then(Value::as_array).is_some_and(|l| l.iter().any(|v| v.as_str() == Some(label.as_str())))
            });
            let title = ctx.get("issueTitle").and_then(Value::as_str).unwrap_or("");
            let by_title = match &rule.unless_title_matches {
                None => false,
                Some(pattern) => match title_matches(pattern, title, guarded) {
                    Ok(m) => m,
                    // The DAG runner builds the regular expression unguarded: a bad one throws.
                    Err(message) => return Err(Stop::Threw { phase: phase.name.clone(), message }),
                },
            };
            if by_label || by_title {
                bypass = json!(if by_label { "label" } else { "title" });
                let message = rule.bypass_message.as_ref().or(phase.message("on_blocked_bypassed"));
                self.notify(&phase.name, "bypass_message", message, ctx);
            } else if rule.action == "fail" {
                fails = true;
            }
        }
        self.emit(
            "BlockedRule",
            json!({"phase": phase.name, "found": found, "bypassed": bypass, "action": rule.action, "fails": fails}),
        );
        self.blocked_checked.insert(recording);
        if let Some((expected, span)) = self.recording(recording).expect.blocked {
            let actual = (fails != expected)
                .then(|| if fails { "a rule that fails it" } else { "a rule that does not fail it" }.to_string());
            self.expectation(
                "blocked",
                format!("BLOCKED to {}fail the workflow", if expected { "" } else { "not " }),
                actual,
                span,
            );
        }
        Ok(fails.then(|| rule.message.as_ref().map(|m| m.text.clone()).unwrap_or_else(|| "BLOCKED".into())))
    }

    fn verdict(&mut self, phase: &Phase, label: &str, output: &str, recording: Option<usize>) -> bool {
        let (approved, fallback) = parse_verdict(output);
        self.report_verdict(phase, label, approved, fallback, false, recording);
        approved
    }

    fn report_verdict(
        &mut self,
        phase: &Phase,
        label: &str,
        approved: bool,
        fallback: bool,
        from_file: bool,
        recording: Option<usize>,
    ) {
        let verdict = if approved { "APPROVED" } else { "REQUEST_CHANGES" };
        self.emit(
            "Verdict",
            json!({"phase": phase.name, "label": label, "verdict": verdict, "viaFallback": fallback, "fromFile": from_file}),
        );
        if let Some(recording) = recording {
            self.verdict_checked.insert(recording);
        }
        if let Some(recording) = recording
            && let Some((expected, span)) = self.recording(recording).expect.verdict.clone()
        {
            let actual = (expected != verdict).then(|| verdict.to_string());
            self.expectation("verdict", format!("verdict {expected} for `{label}`"), actual, span);
        }
    }

    fn loop_end(&mut self, phase: &Phase, approved: bool, cycles: i64) {
        self.cycles.insert(phase.name.clone(), cycles);
        self.emit("LoopEnd", json!({"phase": phase.name, "kind": "loop", "approved": approved, "cycles": cycles}));
    }

    fn generic_end(&mut self, phase: &Phase, completed: bool, iterations: i64) {
        self.cycles.insert(phase.name.clone(), iterations);
        self.emit(
            "LoopEnd",
            json!({"phase": phase.name, "kind": "generic_loop", "completed": completed, "iterations": iterations}),
        );
    }

    /// What an interactive `generic_loop` gate posts after an iteration, the same in both
    /// engines: `gate_message` rendered with the loop's state, or the default line.
    fn loop_gate_message(
        &self,
        lp: &GenericLoop,
        ctx: &Ctx,
        outputs: &Map<String, Value>,
        iteration: i64,
        max: i64,
    ) -> String {
        let scratch = ctx.get("scratch").and_then(Value::as_object).cloned().unwrap_or_default();
        let gate_ctx = with(
            ctx,
            &[
                ("phaseOutputs", Value::Object(outputs.clone())),
                ("iteration", json!(iteration)),
                ("maxIterations", json!(max)),
                ("scratch", Value::Object(scratch)),
            ],
        );
        match &lp.gate_message {
            Some(text) => self.render_text(text, &gate_ctx),
            None => format!("Loop iteration {iteration}/{max} complete."),
        }
    }

    fn pause(&mut self, phase: &Phase, gate: &str, reply: bool, label: &str) {
        self.db.persist("waiting_approval");
        self.db.pending = Some(Pending { gate: gate.into(), reply, phase: phase.name.clone() });
        self.set_outcome(&phase.name, Outcome::Paused);
        self.emit(
            "GatePaused",
            json!({"phase": phase.name, "gate": gate, "kind": if reply { "reply" } else { "approve" }, "label": label}),
        );
    }

    /// Whether a loop is done after an iteration: `until`, then `until_bash` (not rendered; a
    /// `{{` makes the engine throw, which reads as not met).
    fn until(
        &mut self,
        phase: &Phase,
        lp: &GenericLoop,
        label: &str,
        output: &str,
        ctx: &Ctx,
        recording: usize,
    ) -> Result<bool, Stop> {
        let mut met = false;
        if let Some((expression, _)) = &lp.until {
            let mut eval_ctx = Ctx::default();
            put(&mut eval_ctx, "output", json!(output));
            eval_ctx.set("scratch", ctx.get("scratch").cloned());
            for (key, value) in ctx.entries() {
                if let Some(Value::String(s)) = value {
                    eval_ctx.set(key, Some(json!(s)));
                }
            }
            let outcome = until::eval(expression, &eval_ctx, until::Grammar::at(self.release()));
            met = outcome.met;
            self.emit(
                "UntilEvaluated",
                json!({"phase": phase.name, "label": label, "expression": expression, "met": outcome.met, "form": outcome.form}),
            );
        }
        if !met && let Some((command, _)) = &lp.until_bash {
            if command.contains("{{") {
                self.emit(
                    "UntilBash",
                    json!({"phase": phase.name, "label": label, "command": command, "rejected": true, "met": false}),
                );
            } else {
                let code = self.until_bash_exit(recording, command)?;
                met = code == 0;
                self.emit(
                    "UntilBash",
                    json!({"phase": phase.name, "label": label, "command": command, "exitCode": code, "met": met}),
                );
            }
        }
        Ok(met)
    }

    // ── The seed-era linear runner ───────────────────────────────────────────────────────────

    /// One phase of the seed-era linear runner's loop over the phases.
    #[allow(clippy::too_many_arguments)]
    pub fn seed_linear(
        &mut self,
        phase: &Phase,
        ctx: &mut Ctx,
        outputs: &mut Map<String, Value>,
        results: &mut Vec<PhaseResult>,
        should_run: bool,
    ) -> Result<Flow, Stop> {
        let name = phase.name.as_str();
        if phase.kind == "context" {
            if should_run {
                self.start(phase, name);
                self.emit("ContextAssembled", json!({"phase": name}));
                results.push(PhaseResult::ok(name, "Context assembled"));
                self.db.persist(name);
                self.set_outcome(name, Outcome::Succeeded);
            }
            return Ok(Flow::Next);
        }
        // The seed-era runner checks `skill`, not `skills`: a phase with only `skills:` is skipped.
        if phase.prompt.is_none() && phase.skill.is_none() {
            self.skip(
                phase,
                "type=agent but neither prompt: nor skill: (the seed-era runner does not read `skills:` here)",
            );
            return Ok(Flow::Next);
        }
        if phase.review_loop.is_some() {
            return self.seed_linear_loop(phase, ctx, outputs, results, should_run);
        }
        if phase.generic_loop.is_some() {
            return self.seed_linear_generic(phase, ctx, outputs, results, should_run);
        }
        if !should_run {
            return Ok(Flow::Next);
        }
        self.start(phase, name);
        let msg_ctx = with(ctx, &[("phaseOutputs", Value::Object(outputs.clone()))]);
        self.notify(name, "on_start", phase.message("on_start"), &msg_ctx);
        let models = self.models(phase, name);
        let prompt_ctx = msg_ctx.clone();
        let prompt = self.build_prompt(phase, &prompt_ctx)?;
        self.check_skills(phase)?;
        let ran = match self.call(phase, name, &prompt, models)? {
            Call::Done { .. } => {
                results.push(PhaseResult::ok(name, "Already completed"));
                self.db.persist(name);
                self.notify(name, "on_skipped_done", phase.message("on_skipped_done"), &msg_ctx);
                self.set_outcome(name, Outcome::Succeeded);
                return Ok(Flow::Next);
            }
            Call::Ran(ran) => ran,
        };
        results.push(PhaseResult {
            label: name.into(),
            success: ran.success,
            output: ran.output.clone(),
            error: ran.error.clone(),
        });
        outputs.insert(name.into(), json!(ran.output));
        if let Some(var) = &phase.output_var {
            outputs.insert(var.clone(), json!(ran.output));
        }
        let msg_ctx = with(ctx, &[("phaseOutputs", Value::Object(outputs.clone()))]);
        if !ran.success {
            if !is_terminated(ran.error.as_deref()) {
                self.notify(name, "on_failure", phase.message("on_failure"), &msg_ctx);
            }
            self.set_outcome(name, Outcome::Failed);
            return Ok(Flow::Return(WfResult {
                success: false,
                error: ran.error,
                results: std::mem::take(results),
                ..WfResult::default()
            }));
        }
        if let Some(error) = self.blocked(phase, &ran.output, ctx, true, ran.recording)? {
            self.db.mark_failed(name);
            let template = phase.blocked_rule.as_ref().and_then(|r| r.message.as_ref()).or(phase.message("on_blocked"));
            self.notify(name, "on_blocked", template, &msg_ctx);
            self.set_outcome(name, Outcome::Failed);
            return Ok(Flow::Return(WfResult {
                success: false,
                error: Some(error),
                results: std::mem::take(results),
                ..WfResult::default()
            }));
        }
        if self.gate_enabled(phase.approval_gate.as_deref()) {
            let gate = phase.approval_gate.clone().unwrap_or_default();
            self.pause(phase, &gate, false, name);
            let gate_ctx = with(&msg_ctx, &[("gateKey", json!(gate))]);
            self.notify(name, "approval_gate_message", phase.approval_gate_message.as_ref(), &gate_ctx);
            return Ok(Flow::Return(WfResult {
                success: true,
                paused: true,
                results: std::mem::take(results),
                ..WfResult::default()
            }));
        }
        self.db.persist(name);
        self.notify(name, "on_success", phase.message("on_success"), &msg_ctx);
        self.set_outcome(name, Outcome::Succeeded);
        Ok(Flow::Next)
    }

    pub fn skip(&mut self, phase: &Phase, reason: &str) {
        self.emit("PhaseSkipped", json!({"phase": phase.name, "reason": reason}));
        self.set_outcome(&phase.name, Outcome::Skipped);
    }

    fn seed_linear_loop(
        &mut self,
        phase: &Phase,
        ctx: &mut Ctx,
        outputs: &mut Map<String, Value>,
        results: &mut Vec<PhaseResult>,
        should_run: bool,
    ) -> Result<Flow, Stop> {
        let name = phase.name.as_str();
        let Some(lp) = phase.review_loop.clone() else { return Ok(Flow::Next) };
        let max = lp.max_cycles;
        let mut approved = false;
        let mut fix_cycles: i64 = 0;
        if !should_run {
            approved = true;
            results.push(PhaseResult::ok(name, "Already completed"));
        }
        while !approved && fix_cycles <= max {
            let review_label = if fix_cycles == 0 { name.to_string() } else { format!("{name}_{}", fix_cycles + 1) };
            self.start(phase, &review_label);
            let msg = |outputs: &Map<String, Value>, pairs: &[(&str, Value)]| {
                let mut c = with(ctx, &[("phaseOutputs", Value::Object(outputs.clone()))]);
                for (k, v) in pairs {
                    put(&mut c, k, v.clone());
                }
                c
            };
            let cycle_ctx = msg(outputs, &[("cycle", json!(fix_cycles + 1)), ("maxCycles", json!(max))]);
            self.notify(name, "on_cycle_start", lp.message("on_cycle_start"), &cycle_ctx);
            let prompt_ctx = msg(outputs, &[("fixCycle", json!(fix_cycles))]);
            let prompt = if fix_cycles == 0 {
                self.build_prompt(phase, &prompt_ctx)?
            } else {
                self.template_prompt(name, &lp.re_review_prompt.0, &prompt_ctx)?
            };
            let models = self.models(phase, name);
            self.check_skills(phase)?;
            let ran = match self.call(phase, &review_label, &prompt, models)? {
                Call::Done { .. } => {
                    approved = true;
                    results.push(PhaseResult::ok(&review_label, "Already completed"));
                    break;
                }
                Call::Ran(ran) => ran,
            };
            results.push(PhaseResult {
                label: review_label.clone(),
                success: ran.success,
                output: ran.output.clone(),
                error: ran.error.clone(),
            });
            let is_approved = self.verdict(phase, &review_label, ran.output.trim(), Some(ran.recording));
            if is_approved {
                approved = true;
                self.db.persist(&review_label);
                let c = msg(outputs, &[("cycle", json!(fix_cycles + 1))]);
                self.notify(name, "on_approved", lp.message("on_approved"), &c);
            } else if fix_cycles < max {
                fix_cycles += 1;
                self.db.persist(&review_label);
                if self.gate_enabled(lp.approval_gate.as_deref()) {
                    let gate = lp.approval_gate.clone().unwrap_or_default();
                    self.pause(phase, &gate, false, &review_label);
                    let c = msg(
                        outputs,
                        &[("cycle", json!(fix_cycles)), ("maxCycles", json!(max)), ("gateKey", json!(gate))],
                    );
                    self.notify(name, "on_pause_for_approval", lp.message("on_pause_for_approval"), &c);
                    self.cycles.insert(name.to_string(), fix_cycles);
                    return Ok(Flow::Return(WfResult {
                        success: true,
                        paused: true,
                        results: std::mem::take(results),
                        ..WfResult::default()
                    }));
                }
                let c = msg(outputs, &[("cycle", json!(fix_cycles)), ("maxCycles", json!(max))]);
                self.notify(name, "on_request_changes", lp.message("on_request_changes"), &c);
                let fix_label = format!("{name}_fix_{fix_cycles}");
                self.start(phase, &fix_label);
                self.notify(name, "on_fix_start", lp.message("on_fix_start"), &c);
                let fix_ctx = msg(outputs, &[("fixCycle", json!(fix_cycles))]);
                let prompt = self.template_prompt(name, &lp.fix_prompt.0, &fix_ctx)?;
                let models = self.fix_models(phase);
                self.check_skills(phase)?;
                match self.call(phase, &fix_label, &prompt, models)? {
                    Call::Done { .. } => results.push(PhaseResult::ok(&fix_label, "Already completed")),
                    Call::Ran(fix) => {
                        results.push(PhaseResult {
                            label: fix_label.clone(),
                            success: fix.success,
                            output: fix.output.clone(),
                            error: fix.error.clone(),
                        });
                        if !fix.success {
                            if !is_terminated(fix.error.as_deref()) {
                                self.notify(name, "on_fix_failed", lp.message("on_fix_failed"), &c);
                            }
                            break;
                        }
                        self.db.persist(&fix_label);
                    }
                }
            } else {
                self.db.persist(&review_label);
                let c = msg(outputs, &[("cycle", json!(fix_cycles)), ("maxCycles", json!(max))]);
                self.notify(name, "on_max_cycles", lp.message("on_max_cycles"), &c);
                break;
            }
        }
        if let Some(var) = &phase.output_var {
            outputs.insert(var.clone(), json!({"approved": approved, "cycles": fix_cycles}));
        }
        self.loop_end(phase, approved, fix_cycles);
        self.set_outcome(name, Outcome::Succeeded);
        Ok(Flow::Next)
    }

    fn seed_linear_generic(
        &mut self,
        phase: &Phase,
        ctx: &mut Ctx,
        outputs: &mut Map<String, Value>,
        results: &mut Vec<PhaseResult>,
        should_run: bool,
    ) -> Result<Flow, Stop> {
        let name = phase.name.as_str();
        let Some(lp) = phase.generic_loop.clone() else { return Ok(Flow::Next) };
        let max = resolve_budget(&lp.max_iterations, ctx).unwrap_or(1);
        if !should_run {
            results.push(PhaseResult::ok(name, "Already completed"));
            return Ok(Flow::Next);
        }
        let scratch_key = lp.scratch_key.clone();
        let scratch = |ctx: &Ctx| ctx.get("scratch").and_then(Value::as_object).cloned().unwrap_or_default();
        let slot: Map<String, Value> = scratch_key
            .as_ref()
            .and_then(|k| scratch(ctx).get(k).and_then(Value::as_object).cloned())
            .unwrap_or_default();
        let resume_from = match (lp.gate_kind.as_deref(), slot.get("iteration").and_then(Value::as_f64)) {
            (Some("reply"), Some(n)) => (n as i64).min(max),
            _ => 0,
        };
        let mut iteration = resume_from;
        let mut complete = false;
        let mut previous = match slot.get("lastOutputExecutionId").and_then(Value::as_str) {
            Some(id) => self.db.output_of(id).unwrap_or_default().to_string(),
            None => slot.get("lastOutput").and_then(Value::as_str).unwrap_or_default().to_string(),
        };
        while !complete && iteration < max {
            iteration += 1;
            let label = format!("{name}_iter_{iteration}");
            self.start(phase, &label);
            let previous_value = if lp.fresh_context { String::new() } else { previous.clone() };
            let iter_ctx = with(
                ctx,
                &[
                    ("iteration", json!(iteration)),
                    ("maxIterations", json!(max)),
                    ("previousOutput", json!(previous_value)),
                    ("phaseOutputs", Value::Object(outputs.clone())),
                    ("scratch", Value::Object(scratch(ctx))),
                ],
            );
            let prompt = self.build_prompt(phase, &iter_ctx)?;
            let models = self.models(phase, name);
            self.check_skills(phase)?;
            let ran = match self.call(phase, &label, &prompt, models)? {
                Call::Done { .. } => {
                    results.push(PhaseResult::ok(&label, "Already completed"));
                    complete = true;
                    break;
                }
                Call::Ran(ran) => ran,
            };
            results.push(PhaseResult {
                label: label.clone(),
                success: ran.success,
                output: ran.output.clone(),
                error: ran.error.clone(),
            });
            if !ran.success {
                let c = with(ctx, &[("phaseOutputs", Value::Object(outputs.clone())), ("iteration", json!(iteration))]);
                if !is_terminated(ran.error.as_deref()) {
                    self.notify(name, "on_failure", phase.message("on_failure"), &c);
                }
                self.generic_end(phase, false, iteration);
                self.set_outcome(name, Outcome::Failed);
                return Ok(Flow::Return(WfResult {
                    success: false,
                    error: ran.error,
                    results: std::mem::take(results),
                    ..WfResult::default()
                }));
            }
            let output = ran.output.clone();
            if !lp.fresh_context {
                previous = accumulate(&previous, &output);
            }
            let met = self.until(phase, &lp, &label, &output, ctx, ran.recording)?;
            let execution_id = self.db.execution_id(&output);
            if met {
                complete = true;
                if let Some(key) = &scratch_key {
                    let mut new_slot = slot.clone();
                    new_slot.insert("iteration".into(), json!(iteration));
                    new_slot.insert("ready".into(), json!(true));
                    new_slot.insert("lastOutputExecutionId".into(), json!(execution_id));
                    new_slot.remove("lastOutput");
                    self.db.scratch.insert(key.clone(), Value::Object(new_slot.clone()));
                    set_scratch(ctx, key, Value::Object(new_slot));
                }
                self.db.persist(&label);
                break;
            }
            if lp.interactive {
                let reply = lp.gate_kind.as_deref() == Some("reply");
                let gate_message = self.loop_gate_message(&lp, ctx, outputs, iteration, max);
                if let Some(key) = &scratch_key {
                    let mut new_slot = scratch(ctx).get(key).and_then(Value::as_object).cloned().unwrap_or_default();
                    new_slot.insert("iteration".into(), json!(iteration));
                    new_slot.insert("lastOutputExecutionId".into(), json!(execution_id));
                    new_slot.remove("lastOutput");
                    set_scratch(ctx, key, Value::Object(new_slot.clone()));
                    self.db.scratch.insert(key.clone(), Value::Object(new_slot));
                }
                self.pause(phase, &label, reply, &label);
                self.note(name, "gate", gate_note(reply, name, iteration, max, &output, &gate_message, "last-light"));
                self.cycles.insert(name.to_string(), iteration);
                return Ok(Flow::Return(WfResult {
                    success: true,
                    paused: true,
                    results: std::mem::take(results),
                    ..WfResult::default()
                }));
            }
            self.db.persist(&label);
        }
        if !complete {
            let c = with(
                ctx,
                &[
                    ("phaseOutputs", Value::Object(outputs.clone())),
                    ("iteration", json!(iteration)),
                    ("maxIterations", json!(max)),
                ],
            );
            self.notify(name, "on_failure", phase.message("on_failure"), &c);
        }
        if let Some(var) = &phase.output_var {
            outputs.insert(var.clone(), json!({"completed": complete, "iterations": iteration}));
        }
        self.generic_end(phase, complete, iteration);
        self.set_outcome(name, Outcome::Succeeded);
        Ok(Flow::Next)
    }

    // ── The seed-era DAG runner ──────────────────────────────────────────────────────────────

    /// One node of the seed-era DAG runner (the body of its `ready.map(async (node) => …)`),
    /// with the outputs as they were when its batch started. A loop writes its `output_var` to
    /// `shared` itself.
    pub fn seed_dag_node(
        &mut self,
        phase: &Phase,
        ctx: &Ctx,
        snapshot: &Map<String, Value>,
        shared: &mut Map<String, Value>,
        results: &mut Vec<PhaseResult>,
    ) -> Result<NodeEnd, Stop> {
        let name = phase.name.as_str();
        self.start(phase, name);
        let end = |result: PhaseResult, already_pushed: bool| NodeEnd { result, paused: false, already_pushed };
        if phase.kind == "context" {
            self.emit("ContextAssembled", json!({"phase": name}));
            self.db.persist(name);
            return Ok(end(PhaseResult::ok(name, "Context assembled"), false));
        }
        if phase.prompt.is_none() && phase.skill.is_none() {
            self.emit("PhaseSkipped", json!({"phase": name, "reason": "type=agent but neither prompt: nor skill: (the seed-era runner does not read `skills:` here); the node succeeds"}));
            return Ok(end(PhaseResult::ok(name, "Skipped (no prompt or skill)"), false));
        }
        let outputs_value = Value::Object(snapshot.clone());
        if let Some(lp) = phase.review_loop.clone() {
            let max = lp.max_cycles;
            let mut approved = false;
            let mut fix_cycles = 0;
            while !approved && fix_cycles <= max {
                let review_label =
                    if fix_cycles == 0 { name.to_string() } else { format!("{name}_{}", fix_cycles + 1) };
                let prompt_ctx =
                    with(ctx, &[("phaseOutputs", Value::Object(shared.clone())), ("fixCycle", json!(fix_cycles))]);
                let prompt = if fix_cycles == 0 {
                    self.build_prompt(phase, &prompt_ctx)?
                } else {
                    self.template_prompt(name, &lp.re_review_prompt.0, &prompt_ctx)?
                };
                let models = self.models(phase, name);
                self.check_skills(phase)?;
                let ran = match self.call(phase, &review_label, &prompt, models)? {
                    Call::Done { .. } => {
                        approved = true;
                        results.push(PhaseResult::ok(&review_label, "Already completed"));
                        break;
                    }
                    Call::Ran(ran) => ran,
                };
                results.push(PhaseResult {
                    label: review_label.clone(),
                    success: ran.success,
                    output: ran.output.clone(),
                    error: ran.error.clone(),
                });
                if self.verdict(phase, &review_label, ran.output.trim(), Some(ran.recording)) {
                    approved = true;
                } else if fix_cycles < max {
                    fix_cycles += 1;
                    let fix_label = format!("{name}_fix_{fix_cycles}");
                    let fix_ctx =
                        with(ctx, &[("phaseOutputs", Value::Object(shared.clone())), ("fixCycle", json!(fix_cycles))]);
                    let prompt = self.template_prompt(name, &lp.fix_prompt.0, &fix_ctx)?;
                    let models = self.fix_models(phase);
                    self.check_skills(phase)?;
                    // The DAG runner goes on to the next review whether the fix succeeded or not.
                    if let Call::Ran(fix) = self.call(phase, &fix_label, &prompt, models)? {
                        results.push(PhaseResult {
                            label: fix_label,
                            success: fix.success,
                            output: fix.output,
                            error: fix.error,
                        });
                    }
                } else {
                    break;
                }
            }
            let output = if approved { "Approved" } else { "Request changes" };
            if let Some(var) = &phase.output_var {
                shared.insert(var.clone(), json!({"approved": approved, "cycles": fix_cycles}));
            }
            self.loop_end(phase, approved, fix_cycles);
            let result = PhaseResult { label: name.into(), success: approved, output: output.into(), error: None };
            return Ok(end(result, true));
        }
        if let Some(lp) = phase.generic_loop.clone() {
            let max = resolve_budget(&lp.max_iterations, ctx).unwrap_or(1);
            let mut iteration = 0;
            let mut complete = false;
            let mut previous = String::new();
            while !complete && iteration < max {
                iteration += 1;
                let label = format!("{name}_iter_{iteration}");
                let iter_ctx = with(
                    ctx,
                    &[
                        ("iteration", json!(iteration)),
                        ("maxIterations", json!(max)),
                        ("previousOutput", json!(if lp.fresh_context { String::new() } else { previous.clone() })),
                        ("phaseOutputs", Value::Object(shared.clone())),
                    ],
                );
                let prompt = self.build_prompt(phase, &iter_ctx)?;
                let models = self.models(phase, name);
                self.check_skills(phase)?;
                let ran = match self.call(phase, &label, &prompt, models)? {
                    Call::Done { .. } => {
                        complete = true;
                        break;
                    }
                    Call::Ran(ran) => ran,
                };
                results.push(PhaseResult {
                    label: label.clone(),
                    success: ran.success,
                    output: ran.output.clone(),
                    error: ran.error.clone(),
                });
                if !ran.success {
                    self.generic_end(phase, false, iteration);
                    let result =
                        PhaseResult { label: name.into(), success: false, output: String::new(), error: ran.error };
                    return Ok(end(result, true));
                }
                if !lp.fresh_context {
                    previous = accumulate(&previous, &ran.output);
                }
                if self.until(phase, &lp, &label, &ran.output.clone(), ctx, ran.recording)? {
                    complete = true;
                }
            }
            if !complete {
                let c = with(
                    ctx,
                    &[
                        ("phaseOutputs", Value::Object(shared.clone())),
                        ("iteration", json!(iteration)),
                        ("maxIterations", json!(max)),
                    ],
                );
                self.notify(name, "on_failure", phase.message("on_failure"), &c);
            }
            if let Some(var) = &phase.output_var {
                shared.insert(var.clone(), json!({"completed": complete, "iterations": iteration}));
            }
            self.generic_end(phase, complete, iteration);
            return Ok(end(PhaseResult::ok(name, &previous), true));
        }
        // `executeSinglePhase`.
        let msg_ctx = with(ctx, &[("phaseOutputs", Value::Object(shared.clone()))]);
        self.notify(name, "on_start", phase.message("on_start"), &msg_ctx);
        let prompt_ctx = with(ctx, &[("phaseOutputs", outputs_value)]);
        let prompt = self.build_prompt(phase, &prompt_ctx)?;
        let models = self.models(phase, name);
        self.check_skills(phase)?;
        let ran = match self.call(phase, name, &prompt, models)? {
            Call::Done { .. } => return Ok(end(PhaseResult::ok(name, "Already completed"), false)),
            Call::Ran(ran) => ran,
        };
        let result = PhaseResult {
            label: name.into(),
            success: ran.success,
            output: ran.output.clone(),
            error: ran.error.clone(),
        };
        if !ran.success {
            self.notify(name, "on_failure", phase.message("on_failure"), &msg_ctx);
            return Ok(end(result, false));
        }
        if let Some(error) = self.blocked(phase, &ran.output, ctx, false, ran.recording)? {
            self.db.mark_failed(name);
            let template = phase.blocked_rule.as_ref().and_then(|r| r.message.as_ref()).or(phase.message("on_blocked"));
            self.notify(name, "on_blocked", template, &msg_ctx);
            let failed =
                PhaseResult { label: name.into(), success: false, output: ran.output, error: Some("BLOCKED".into()) };
            let _ = error;
            return Ok(end(failed, false));
        }
        if self.gate_enabled(phase.approval_gate.as_deref()) {
            let gate = phase.approval_gate.clone().unwrap_or_default();
            self.pause(phase, &gate, false, name);
            let gate_ctx = with(&msg_ctx, &[("gateKey", json!(gate))]);
            self.notify(name, "approval_gate_message", phase.approval_gate_message.as_ref(), &gate_ctx);
            return Ok(NodeEnd { result, paused: true, already_pushed: false });
        }
        self.db.persist(name);
        self.notify(name, "on_success", phase.message("on_success"), &msg_ctx);
        Ok(end(result, false))
    }

    // ── The current engine ───────────────────────────────────────────────────────────────────

    /// `PhaseExecutor.execute(node, outputs)`.
    pub fn head_execute(
        &mut self,
        phase: &Phase,
        ctx: &mut Ctx,
        outputs: &Map<String, Value>,
    ) -> Result<HeadEnd, Stop> {
        let name = phase.name.as_str();
        let done = |results, status| HeadEnd { results, status, paused: false, output_vars: None };
        match phase.kind.as_str() {
            "context" => {
                self.start(phase, name);
                self.emit("ContextAssembled", json!({"phase": name}));
                self.db.persist(name);
                return Ok(done(vec![PhaseResult::ok(name, "Context assembled")], Outcome::Succeeded));
            }
            "bash" | "script" => return self.head_command(phase, ctx, outputs),
            "agent" => {}
            other => {
                // An app-registered handler (`post-review`) runs it; the dry-run replays its
                // recorded result like an agent phase's.
                self.emit("PhaseHandler", json!({"phase": name, "type": other}));
            }
        }
        if phase.prompt.is_none() && phase.skill_names().is_empty() {
            self.emit("PhaseSkipped", json!({"phase": name, "reason": "agent phase has neither prompt nor skills"}));
            return Ok(done(Vec::new(), Outcome::Succeeded));
        }
        if phase.review_loop.is_some() {
            return self.head_review_loop(phase, ctx, outputs);
        }
        if phase.generic_loop.is_some() {
            return self.head_generic_loop(phase, ctx, outputs);
        }
        self.head_standard(phase, ctx, outputs)
    }

    fn head_standard(&mut self, phase: &Phase, ctx: &Ctx, outputs: &Map<String, Value>) -> Result<HeadEnd, Stop> {
        let name = phase.name.as_str();
        self.start(phase, name);
        let msg_ctx = with(ctx, &[("phaseOutputs", Value::Object(outputs.clone()))]);
        self.notify(name, "on_start", phase.message("on_start"), &msg_ctx);
        let models = self.models(phase, name);
        let prompt = self.build_prompt(phase, &msg_ctx)?;
        self.check_skills(phase)?;
        let ran = match self.call(phase, name, &prompt, models)? {
            Call::Done { .. } => {
                self.db.persist(name);
                self.notify(name, "on_skipped_done", phase.message("on_skipped_done"), &msg_ctx);
                let results = vec![PhaseResult::ok(name, "Already completed")];
                return Ok(HeadEnd { results, status: Outcome::Succeeded, paused: false, output_vars: None });
            }
            Call::Ran(ran) => ran,
        };
        self.head_standard_end(phase, ctx, outputs, ran)
    }

    /// After a standard or command phase ran: failure, the BLOCKED rule, the completion marker,
    /// the approval gate, success.
    fn head_standard_end(
        &mut self,
        phase: &Phase,
        ctx: &Ctx,
        outputs: &Map<String, Value>,
        ran: Ran,
    ) -> Result<HeadEnd, Stop> {
        let name = phase.name.as_str();
        let result = PhaseResult {
            label: name.into(),
            success: ran.success,
            output: ran.output.clone(),
            error: ran.error.clone(),
        };
        let mut vars = Map::new();
        vars.insert(name.into(), json!(ran.output));
        if let Some(var) = &phase.output_var {
            vars.insert(var.clone(), json!(ran.output));
        }
        let msg_ctx = with(ctx, &[("phaseOutputs", Value::Object(outputs.clone()))]);
        let failed = |result: PhaseResult, vars: Map<String, Value>| HeadEnd {
            results: vec![result],
            status: Outcome::Failed,
            paused: false,
            output_vars: Some(vars),
        };
        if !ran.success {
            if !is_terminated(ran.error.as_deref()) {
                self.notify(name, "on_failure", phase.message("on_failure"), &msg_ctx);
            }
            return Ok(failed(result, vars));
        }
        if phase.blocked_rule.is_some() || phase.requires_marker.is_some() || phase.ready_rule {
            if let Some(error) = self.blocked(phase, &ran.output, ctx, true, ran.recording)? {
                self.db.mark_failed(name);
                let template =
                    phase.blocked_rule.as_ref().and_then(|r| r.message.as_ref()).or(phase.message("on_blocked"));
                self.notify(name, "on_blocked", template, &msg_ctx);
                let _ = error;
                let blocked = PhaseResult {
                    label: name.into(),
                    success: false,
                    output: ran.output,
                    error: Some("BLOCKED".into()),
                };
                return Ok(failed(blocked, vars));
            }
            if let Some(marker) = &phase.requires_marker
                && !ran.output.contains(marker.as_str())
            {
                let error = format!("phase produced no outcome — missing completion marker \"{marker}\"");
                self.emit("MarkerMissing", json!({"phase": name, "marker": marker}));
                self.notify(name, "on_failure", phase.message("on_failure"), &msg_ctx);
                let missing =
                    PhaseResult { label: name.into(), success: false, output: ran.output, error: Some(error) };
                return Ok(failed(missing, vars));
            }
        }
        if self.gate_enabled(phase.approval_gate.as_deref()) {
            let gate = phase.approval_gate.clone().unwrap_or_default();
            self.pause(phase, &gate, false, name);
            let approval = self.next_approval_id();
            let gate_ctx = with(&msg_ctx, &[("gateKey", json!(gate)), ("approvalId", json!(approval))]);
            self.notify(name, "approval_gate_message", phase.approval_gate_message.as_ref(), &gate_ctx);
            return Ok(HeadEnd {
                results: vec![result],
                status: Outcome::Succeeded,
                paused: true,
                output_vars: Some(vars),
            });
        }
        self.db.persist(name);
        let mut merged = outputs.clone();
        merged.extend(vars.clone());
        let success_ctx = with(ctx, &[("phaseOutputs", Value::Object(merged))]);
        self.notify(name, "on_success", phase.message("on_success"), &success_ctx);
        Ok(HeadEnd { results: vec![result], status: Outcome::Succeeded, paused: false, output_vars: Some(vars) })
    }

    /// `type: bash` / `type: script`: the command rendered (a `{{` left in a bash command
    /// makes the engine throw), its recorded result.
    fn head_command(&mut self, phase: &Phase, ctx: &Ctx, outputs: &Map<String, Value>) -> Result<HeadEnd, Stop> {
        let name = phase.name.as_str();
        self.start(phase, name);
        let msg_ctx = with(ctx, &[("phaseOutputs", Value::Object(outputs.clone()))]);
        self.notify(name, "on_start", phase.message("on_start"), &msg_ctx);
        let (template, source) = if phase.kind == "script" {
            (phase.script.clone().unwrap_or_default(), "script")
        } else {
            (phase.command.clone().unwrap_or_default(), "command")
        };
        let command = self.render_text(&template, &msg_ctx);
        if phase.kind == "bash" && command.contains("{{") {
            let message =
                "until_bash command rejected: contains template marker '{{'. Render templates before passing to shell."
                    .to_string();
            return Err(Stop::Threw { phase: name.into(), message });
        }
        let prompt = Prompt::plain(command, source);
        let ran = match self.call(phase, name, &prompt, (None, None))? {
            Call::Done { .. } => {
                self.db.persist(name);
                self.notify(name, "on_skipped_done", phase.message("on_skipped_done"), &msg_ctx);
                let results = vec![PhaseResult::ok(name, "Already completed")];
                return Ok(HeadEnd { results, status: Outcome::Succeeded, paused: false, output_vars: None });
            }
            Call::Ran(ran) => ran,
        };
        let mut plain = phase.clone();
        // The command body checks neither the BLOCKED rule nor the marker.
        plain.blocked_rule = None;
        plain.requires_marker = None;
        plain.ready_rule = false;
        self.head_standard_end(&plain, ctx, outputs, ran)
    }

    fn head_review_loop(
        &mut self,
        phase: &Phase,
        ctx: &mut Ctx,
        outputs: &Map<String, Value>,
    ) -> Result<HeadEnd, Stop> {
        let name = phase.name.as_str();
        let Some(lp) = phase.review_loop.clone() else { unreachable_loop() };
        let max = lp.max_cycles;
        let mut results = Vec::new();
        let mut approved = false;
        let mut fix_cycles: i64 = 0;
        let loop_key = format!("rloop:{name}");
        let slot =
            ctx.get("scratch").and_then(|s| s.get(&loop_key)).and_then(Value::as_object).cloned().unwrap_or_default();
        let paused_at = slot.get("pausedAtCycle").and_then(Value::as_i64);
        let msg = |ctx: &Ctx, pairs: &[(&str, Value)]| {
            let mut c = with(ctx, &[("phaseOutputs", Value::Object(outputs.clone()))]);
            for (k, v) in pairs {
                put(&mut c, k, v.clone());
            }
            c
        };
        while !approved && fix_cycles <= max {
            let review_label = if fix_cycles == 0 { name.to_string() } else { format!("{name}_recheck_{fix_cycles}") };
            self.start(phase, &review_label);
            let c = msg(ctx, &[("cycle", json!(fix_cycles + 1)), ("maxCycles", json!(max))]);
            self.notify(name, "on_cycle_start", lp.message("on_cycle_start"), &c);
            let prompt_ctx = msg(ctx, &[("fixCycle", json!(fix_cycles))]);
            let prompt = if fix_cycles == 0 {
                self.build_prompt(phase, &prompt_ctx)?
            } else {
                self.template_prompt(name, &lp.re_review_prompt.0, &prompt_ctx)?
            };
            let models = self.models(phase, name);
            self.check_skills(phase)?;
            let approved_now;
            let mut ran_review = false;
            match self.call(phase, &review_label, &prompt, models)? {
                Call::Done { output } => {
                    // A deduplicated review is not taken as approved: its verdict is read again.
                    let (verdict, fallback) = parse_verdict(&output);
                    self.report_verdict(phase, &review_label, verdict, fallback, false, None);
                    approved_now = verdict;
                    results.push(PhaseResult::ok(&review_label, "Already completed"));
                }
                Call::Ran(ran) => {
                    ran_review = true;
                    let output = ran.output.trim().to_string();
                    let (mut verdict, fallback) = parse_verdict(&output);
                    let mut success = ran.success;
                    let mut error = ran.error.clone();
                    let soft = is_soft(&ran);
                    let recorded: &Execution = self.recording(ran.recording);
                    let from_file = fallback && soft && recorded.verdict_file.is_some();
                    if from_file {
                        verdict = recorded.verdict_file.as_deref() == Some("APPROVED");
                        success = true;
                        error = None;
                    }
                    self.report_verdict(
                        phase,
                        &review_label,
                        verdict,
                        fallback && !from_file,
                        from_file,
                        Some(ran.recording),
                    );
                    approved_now = verdict;
                    // What the ledger keeps: the output with a `VERDICT:` line, for a resume.
                    let has_marker = output.lines().any(|l| {
                        let l = l.trim_start();
                        l.len() >= 8 && l[..8].eq_ignore_ascii_case("VERDICT:")
                    });
                    if !has_marker {
                        let label_verdict = if verdict { "APPROVED" } else { "REQUEST_CHANGES" };
                        self.db.mark_output(&review_label, format!("VERDICT: {label_verdict}\n{output}"));
                    }
                    results.push(PhaseResult {
                        label: review_label.clone(),
                        success,
                        output: ran.output.clone(),
                        error,
                    });
                }
            }
            if approved_now {
                approved = true;
                if ran_review {
                    self.db.persist(&review_label);
                }
                let c = msg(ctx, &[("cycle", json!(fix_cycles + 1))]);
                self.notify(name, "on_approved", lp.message("on_approved"), &c);
            } else if fix_cycles < max {
                fix_cycles += 1;
                if ran_review {
                    self.db.persist(&review_label);
                }
                if self.gate_enabled(lp.approval_gate.as_deref()) {
                    let fix_label = format!("{name}_fix_{fix_cycles}");
                    let fix_done = self.db.done(&fix_label).is_some();
                    let resuming = paused_at == Some(fix_cycles);
                    if !fix_done && !resuming {
                        let mut new_slot = slot.clone();
                        new_slot.insert("pausedAtCycle".into(), json!(fix_cycles));
                        set_scratch(ctx, &loop_key, Value::Object(new_slot.clone()));
                        self.db.scratch.insert(loop_key.clone(), Value::Object(new_slot));
                        let gate = lp.approval_gate.clone().unwrap_or_default();
                        self.pause(phase, &gate, false, &review_label);
                        let approval = self.next_approval_id();
                        let c = msg(
                            ctx,
                            &[
                                ("cycle", json!(fix_cycles)),
                                ("maxCycles", json!(max)),
                                ("gateKey", json!(gate)),
                                ("approvalId", json!(approval)),
                            ],
                        );
                        self.notify(name, "on_pause_for_approval", lp.message("on_pause_for_approval"), &c);
                        self.cycles.insert(name.to_string(), fix_cycles);
                        return Ok(HeadEnd { results, status: Outcome::Succeeded, paused: true, output_vars: None });
                    }
                }
                let c = msg(ctx, &[("cycle", json!(fix_cycles)), ("maxCycles", json!(max))]);
                self.notify(name, "on_request_changes", lp.message("on_request_changes"), &c);
                let fix_label = format!("{name}_fix_{fix_cycles}");
                self.start(phase, &fix_label);
                self.notify(name, "on_fix_start", lp.message("on_fix_start"), &c);
                let models = self.fix_models(phase);
                let fix_ctx = msg(ctx, &[("fixCycle", json!(fix_cycles))]);
                let prompt = self.template_prompt(name, &lp.fix_prompt.0, &fix_ctx)?;
                self.check_skills(phase)?;
                match self.call(phase, &fix_label, &prompt, models)? {
                    Call::Done { .. } => results.push(PhaseResult::ok(&fix_label, "Already completed")),
                    Call::Ran(fix) => {
                        results.push(PhaseResult {
                            label: fix_label.clone(),
                            success: fix.success,
                            output: fix.output.clone(),
                            error: fix.error.clone(),
                        });
                        if !fix.success {
                            if !is_terminated(fix.error.as_deref()) {
                                self.notify(name, "on_fix_failed", lp.message("on_fix_failed"), &c);
                            }
                            break;
                        }
                        self.db.persist(&fix_label);
                    }
                }
            } else {
                self.db.persist(&review_label);
                let c = msg(ctx, &[("cycle", json!(fix_cycles)), ("maxCycles", json!(max))]);
                self.notify(name, "on_max_cycles", lp.message("on_max_cycles"), &c);
                break;
            }
        }
        let vars = phase.output_var.as_ref().map(|var| {
            let mut vars = Map::new();
            vars.insert(var.clone(), json!({"approved": approved, "cycles": fix_cycles}));
            vars
        });
        self.loop_end(phase, approved, fix_cycles);
        Ok(HeadEnd { results, status: Outcome::Succeeded, paused: false, output_vars: vars })
    }

    fn head_generic_loop(
        &mut self,
        phase: &Phase,
        ctx: &mut Ctx,
        outputs: &Map<String, Value>,
    ) -> Result<HeadEnd, Stop> {
        let name = phase.name.as_str();
        let Some(lp) = phase.generic_loop.clone() else { unreachable_loop() };
        let max = resolve_budget(&lp.max_iterations, ctx).unwrap_or(1);
        let mut results = Vec::new();
        let scratch = |ctx: &Ctx| ctx.get("scratch").and_then(Value::as_object).cloned().unwrap_or_default();
        let scratch_key = lp.scratch_key.clone();
        let slot: Map<String, Value> = scratch_key
            .as_ref()
            .and_then(|k| scratch(ctx).get(k).and_then(Value::as_object).cloned())
            .unwrap_or_default();
        let resume_from = match (lp.gate_kind.as_deref(), slot.get("iteration").and_then(Value::as_f64)) {
            (Some("reply"), Some(n)) => (n as i64).min(max),
            _ => 0,
        };
        let mut iteration = resume_from;
        let mut complete = false;
        let mut previous = match slot.get("lastOutputExecutionId").and_then(Value::as_str) {
            Some(id) => self.db.output_of(id).unwrap_or_default().to_string(),
            None => slot.get("lastOutput").and_then(Value::as_str).unwrap_or_default().to_string(),
        };
        let mut last_output = String::new();
        let mut marker_applies = false;
        let msg = |ctx: &Ctx, pairs: &[(&str, Value)]| {
            let mut c = with(ctx, &[("phaseOutputs", Value::Object(outputs.clone()))]);
            for (k, v) in pairs {
                put(&mut c, k, v.clone());
            }
            c
        };
        let c = msg(ctx, &[("iteration", json!(resume_from)), ("maxIterations", json!(max))]);
        self.notify(name, "on_start", phase.message("on_start"), &c);
        while !complete && iteration < max {
            iteration += 1;
            let label = format!("{name}_iter_{iteration}");
            self.start(phase, &label);
            let iter_ctx = with(
                ctx,
                &[
                    ("iteration", json!(iteration)),
                    ("maxIterations", json!(max)),
                    ("previousOutput", json!(if lp.fresh_context { String::new() } else { previous.clone() })),
                    ("phaseOutputs", Value::Object(outputs.clone())),
                    ("scratch", Value::Object(scratch(ctx))),
                ],
            );
            let prompt = self.build_prompt(phase, &iter_ctx)?;
            let models = self.models(phase, name);
            self.check_skills(phase)?;
            let mut ran = match self.call(phase, &label, &prompt, models.clone())? {
                Call::Done { .. } => {
                    results.push(PhaseResult::ok(&label, "Already completed"));
                    complete = true;
                    break;
                }
                Call::Ran(ran) => ran,
            };
            let (retries, then) = lp.soft_failure.clone();
            let mut attempts = 0;
            while !ran.success && is_soft(&ran) && attempts < retries {
                attempts += 1;
                let retry_label = format!("{name}_iter_{iteration}_retry");
                self.start(phase, &retry_label);
                match self.call(phase, &retry_label, &prompt, models.clone())? {
                    Call::Done { .. } => break,
                    Call::Ran(retry) => ran = retry,
                }
            }
            if !ran.success && is_soft(&ran) && then == "complete" {
                let output = if ran.output.is_empty() { previous.clone() } else { ran.output.clone() };
                results.push(PhaseResult::ok(&label, &output));
                complete = true;
                let execution_id = self.db.execution_id(&ran.output);
                if let Some(key) = &scratch_key {
                    let mut new_slot = slot.clone();
                    new_slot.insert("iteration".into(), json!(iteration));
                    new_slot.insert("ready".into(), json!(true));
                    new_slot.insert("lastOutputExecutionId".into(), json!(execution_id));
                    new_slot.remove("lastOutput");
                    self.db.scratch.insert(key.clone(), Value::Object(new_slot.clone()));
                    set_scratch(ctx, key, Value::Object(new_slot));
                }
                self.db.persist(&label);
                self.emit("SoftOutcome", json!({"phase": name, "label": label, "then": "complete"}));
                break;
            }
            results.push(PhaseResult {
                label: label.clone(),
                success: ran.success,
                output: ran.output.clone(),
                error: ran.error.clone(),
            });
            if !ran.success {
                if !is_terminated(ran.error.as_deref()) {
                    let c = msg(ctx, &[("iteration", json!(iteration))]);
                    self.notify(name, "on_failure", phase.message("on_failure"), &c);
                }
                let vars = phase.output_var.as_ref().map(|var| {
                    let mut vars = Map::new();
                    vars.insert(var.clone(), json!({"completed": false, "iterations": iteration}));
                    vars
                });
                self.generic_end(phase, false, iteration);
                return Ok(HeadEnd { results, status: Outcome::Failed, paused: false, output_vars: vars });
            }
            let output = ran.output.clone();
            last_output = output.clone();
            marker_applies = true;
            if !lp.fresh_context {
                previous = accumulate(&previous, &output);
            }
            let execution_id = self.db.execution_id(&output);
            self.db.persist(&label);
            let met = self.until(phase, &lp, &label, &output, ctx, ran.recording)?;
            if met {
                complete = true;
                if let Some(key) = &scratch_key {
                    let mut new_slot = slot.clone();
                    new_slot.insert("iteration".into(), json!(iteration));
                    new_slot.insert("ready".into(), json!(true));
                    new_slot.insert("lastOutputExecutionId".into(), json!(execution_id));
                    new_slot.remove("lastOutput");
                    self.db.scratch.insert(key.clone(), Value::Object(new_slot.clone()));
                    set_scratch(ctx, key, Value::Object(new_slot));
                }
                self.db.persist(&label);
                let c = msg(ctx, &[("iteration", json!(iteration)), ("maxIterations", json!(max))]);
                self.notify(name, "on_success", phase.message("on_success"), &c);
                break;
            }
            if lp.interactive {
                let reply = lp.gate_kind.as_deref() == Some("reply");
                let gate_message = self.loop_gate_message(&lp, ctx, outputs, iteration, max);
                if let Some(key) = &scratch_key {
                    let mut new_slot = scratch(ctx).get(key).and_then(Value::as_object).cloned().unwrap_or_default();
                    new_slot.insert("iteration".into(), json!(iteration));
                    new_slot.insert("lastOutputExecutionId".into(), json!(execution_id));
                    new_slot.remove("lastOutput");
                    set_scratch(ctx, key, Value::Object(new_slot.clone()));
                    self.db.scratch.insert(key.clone(), Value::Object(new_slot));
                }
                self.pause(phase, &label, reply, &label);
                let bot =
                    self.cassette.server.get("botName").and_then(Value::as_str).unwrap_or("last-light").to_string();
                self.note(name, "gate", gate_note(reply, name, iteration, max, &output, &gate_message, &bot));
                self.cycles.insert(name.to_string(), iteration);
                return Ok(HeadEnd { results, status: Outcome::Succeeded, paused: true, output_vars: None });
            }
        }
        if !complete {
            let c = msg(ctx, &[("iteration", json!(iteration)), ("maxIterations", json!(max))]);
            self.notify(name, "on_failure", phase.message("on_failure"), &c);
        }
        let vars = phase.output_var.as_ref().map(|var| {
            let mut vars = Map::new();
            vars.insert(var.clone(), json!({"completed": complete, "iterations": iteration}));
            vars
        });
        self.generic_end(phase, complete, iteration);
        if let Some(marker) = &phase.requires_marker
            && marker_applies
            && !last_output.contains(marker.as_str())
        {
            let error = format!("phase produced no outcome — missing completion marker \"{marker}\"");
            self.emit("MarkerMissing", json!({"phase": name, "marker": marker}));
            results.push(PhaseResult { label: name.into(), success: false, output: last_output, error: Some(error) });
            return Ok(HeadEnd { results, status: Outcome::Failed, paused: false, output_vars: vars });
        }
        Ok(HeadEnd { results, status: Outcome::Succeeded, paused: false, output_vars: vars })
    }
}

fn unreachable_loop() -> ! {
    // The callers check the loop is there; keep a message should that ever change.
    panic!("a loop body was entered for a phase without its loop")
}

/// `isSoftOutcome`: a clean exit, or one that stopped for an unknown reason or truncated.
fn is_soft(ran: &Ran) -> bool {
    if ran.success {
        return true;
    }
    if is_terminated(ran.error.as_deref()) {
        return false;
    }
    matches!(ran.stop_reason.as_deref(), Some("unknown" | "error_truncated"))
}

/// `previousOutput`: the outputs so far, joined by a line, the last 10 KiB of them (in UTF-16
/// units, as JavaScript's `slice`).
fn accumulate(previous: &str, output: &str) -> String {
    const MAX: usize = 10 * 1024;
    let combined = if previous.is_empty() { output.to_string() } else { format!("{previous}\n{output}") };
    let units: Vec<u16> = combined.encode_utf16().collect();
    if units.len() <= MAX {
        return combined;
    }
    String::from_utf16_lossy(&units[units.len() - MAX..])
}

fn set_scratch(ctx: &mut Ctx, key: &str, value: Value) {
    let mut scratch = ctx.get("scratch").and_then(Value::as_object).cloned().unwrap_or_default();
    scratch.insert(key.into(), value);
    ctx.set("scratch", Some(Value::Object(scratch)));
}

/// The note posted at a loop's interactive gate.
fn gate_note(reply: bool, phase: &str, iteration: i64, max: i64, output: &str, message: &str, bot: &str) -> String {
    if reply {
        let parts: Vec<&str> = [output.trim(), message.trim()].into_iter().filter(|p| !p.is_empty()).collect();
        return parts.join("\n\n---\n\n");
    }
    format!(
        "**{phase} iteration {iteration}/{max} complete** — approval required to continue.\n\n{message}\n\n**To continue:** comment `@{bot} approve`\n**To abort:** comment `@{bot} reject [reason]`"
    )
}

/// The unless-title rule: the engine's guard first (the linear runner and the current engine
/// refuse long or nested-quantifier patterns and invalid ones), then a case-insensitive match.
fn title_matches(pattern: &str, title: &str, guarded: bool) -> Result<bool, String> {
    if guarded {
        if pattern.chars().map(char::len_utf16).sum::<usize>() > 200 {
            return Ok(false);
        }
        let risky = fancy_regex::Regex::new(r"[+*]\{0,\}.*[+*]")
            .ok()
            .zip(fancy_regex::Regex::new(r"(\([^)]*[+*][^)]*\))[+*?]").ok())
            .is_some_and(|(a, b)| a.is_match(pattern).unwrap_or(false) || b.is_match(pattern).unwrap_or(false));
        if risky {
            return Ok(false);
        }
    }
    match fancy_regex::Regex::new(&format!("(?i){pattern}")) {
        Ok(regex) => Ok(regex.is_match(title).unwrap_or(false)),
        Err(_) if guarded => Ok(false),
        Err(error) => Err(format!("SyntaxError: Invalid regular expression: /{pattern}/i: {error}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        assert_eq!(parse_verdict("Looks good.\nVERDICT: APPROVED\n"), (true, false));
        assert_eq!(parse_verdict("  verdict:   request_changes  "), (false, false));
        assert_eq!(parse_verdict("VERDICT: APPROVED with nits"), (false, true), "not a whole line");
        assert_eq!(parse_verdict("APPROVED — ship it"), (true, true));
        assert_eq!(parse_verdict("APPROVED, but REQUEST_CHANGES on x"), (false, true));
        assert_eq!(parse_verdict("APPROVEDX"), (false, true));
        assert_eq!(parse_verdict("I approve"), (false, true));
    }

    #[test]
    fn title_rules() {
        assert_eq!(title_matches("^(guardrails:|\\[guardrails\\])", "Guardrails: add lint", true), Ok(true));
        assert_eq!(title_matches("(a+)+", "aaa", true), Ok(false), "refused by the guard");
        assert_eq!(title_matches("(", "x", true), Ok(false));
        assert!(title_matches("(", "x", false).is_err());
    }

    #[test]
    fn previous_output_keeps_the_last_10_kib() {
        let a = "a".repeat(10 * 1024);
        assert_eq!(accumulate("", "x"), "x");
        assert_eq!(accumulate("x", "y"), "x\ny");
        let kept = accumulate(&a, "b");
        assert_eq!(kept.len(), 10 * 1024);
        assert!(kept.ends_with("\nb"));
    }
}
