//! Scheduling, per engine, and the run around it: the seed-era runner's linear loop and its DAG
//! (`buildDag`, trigger rules, concurrent batches), the current engine's one scheduler (a DAG,
//! a synthesized chain when no phase declares `depends_on`, one ready node at a time), and
//! `runSimpleWorkflow`'s part: a run that pauses at a gate is resumed with the cassette's
//! answer, as the server resumes it (the seed-era runner from the phase after the gate's owner,
//! the current one from the top, deduplicated by the executions ledger).

use serde_json::{Map, Value, json};

use crate::diagnostic::Diagnostic;
use crate::registry::cassette as rules;
use crate::runtime::lastlight::cassette::Answer;
use crate::runtime::lastlight::phases::Flow;
use crate::runtime::lastlight::runner::{
    MAX_RESUMES, Outcome, PhaseResult, Runner, Stop, WfResult, engine_name, next_phase_after, phase_index,
};
use crate::runtime::lastlight::until;
use crate::runtime::lastlight::value::Ctx;
use crate::runtime::lastlight::workflow::Phase;
use crate::template::lastlight::Engine;

/// How the recorded run ended.
#[derive(Debug, Default)]
pub struct End {
    /// `succeeded`, `failed`, `paused`, or `stopped` (the replay could not go on).
    pub status: &'static str,
    pub error: Option<String>,
    /// The engine threw (an authoring error).
    pub threw: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum NodeStatus {
    Pending,
    Running,
    Succeeded,
    Failed,
    Skipped,
}

impl NodeStatus {
    fn terminal(self) -> bool {
        matches!(self, NodeStatus::Succeeded | NodeStatus::Failed | NodeStatus::Skipped)
    }
}

struct Node {
    deps: Vec<usize>,
    rule: String,
    status: NodeStatus,
}

/// `buildDag`: the nodes with their dependencies, or what the engine throws.
fn build_dag(phases: &[Phase], chain: bool) -> Result<Vec<Node>, String> {
    let index = |name: &str| phases.iter().position(|p| p.name == name);
    for phase in phases {
        for dep in &phase.depends_on {
            if *dep == phase.name {
                return Err(format!("Phase \"{}\" depends on itself", phase.name));
            }
            if index(dep).is_none() {
                return Err(format!("Phase \"{}\" depends on unknown phase \"{dep}\"", phase.name));
            }
        }
    }
    let synthesize = chain && !phases.iter().any(|p| !p.depends_on.is_empty());
    let nodes: Vec<Node> = phases
        .iter()
        .enumerate()
        .map(|(i, p)| Node {
            deps: if synthesize {
                if i > 0 { vec![i - 1] } else { Vec::new() }
            } else {
                p.depends_on.iter().filter_map(|d| index(d)).collect()
            },
            rule: p.trigger_rule.clone(),
            status: NodeStatus::Pending,
        })
        .collect();
    // Depth-first along `depends_on`, in the nodes' order, as the engine walks.
    let mut color = vec![0u8; nodes.len()];
    fn dfs(at: usize, nodes: &[Node], phases: &[Phase], color: &mut [u8], path: &mut Vec<usize>) -> Result<(), String> {
        color[at] = 1;
        for &dep in &nodes[at].deps {
            if color[dep] == 1 {
                let mut names: Vec<&str> = path.iter().map(|i| phases[*i].name.as_str()).collect();
                names.push(&phases[at].name);
                names.push(&phases[dep].name);
                return Err(format!("Cycle detected: {}", names.join(" -> ")));
            }
            if color[dep] == 0 {
                path.push(at);
                dfs(dep, nodes, phases, color, path)?;
                path.pop();
            }
        }
        color[at] = 2;
        Ok(())
    }
    for i in 0..nodes.len() {
        if color[i] == 0 {
            dfs(i, &nodes, phases, &mut color, &mut Vec::new())?;
        }
    }
    Ok(nodes)
}

/// `evaluateTriggerRule`.
fn rule_holds(rule: &str, deps: &[NodeStatus]) -> bool {
    if deps.is_empty() {
        return true;
    }
    let succeeded = |s: &&NodeStatus| **s == NodeStatus::Succeeded;
    match rule {
        "one_success" => deps.iter().any(|s| succeeded(&s)),
        "none_failed_min_one_success" => !deps.contains(&NodeStatus::Failed) && deps.iter().any(|s| succeeded(&s)),
        "all_done" => deps.iter().all(|s| s.terminal()),
        _ => deps.iter().all(|s| succeeded(&s)),
    }
}

/// The pending nodes whose dependencies are all done, split by whether their rule holds.
fn ready_and_skipped(nodes: &[Node]) -> (Vec<usize>, Vec<usize>) {
    let mut ready = Vec::new();
    let mut skip = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        if node.status != NodeStatus::Pending {
            continue;
        }
        let deps: Vec<NodeStatus> = node.deps.iter().map(|d| nodes[*d].status).collect();
        if !deps.iter().all(|s| s.terminal()) {
            continue;
        }
        if rule_holds(&node.rule, &deps) { ready.push(i) } else { skip.push(i) }
    }
    (ready, skip)
}

fn scheduler_name(engine: Engine, dag: bool) -> &'static str {
    match (engine, dag) {
        (Engine::Seed, false) => "linear",
        (Engine::Seed, true) => "dag",
        (Engine::Head, _) => "unified",
    }
}

impl Runner<'_> {
    /// The whole recorded run: `runSimpleWorkflow`, and again after each answered gate.
    pub fn run(&mut self) -> End {
        let mut resumes = 0;
        loop {
            let dag = self.wf.has_dependencies();
            self.emit(
                "WorkflowStart",
                json!({
                    "workflow": self.wf.name, "file": self.file.display, "release": self.release().name(), "engine": engine_name(self.engine),
                    "scheduler": scheduler_name(self.engine, dag), "phases": self.wf.phases.len(), "resume": resumes,
                }),
            );
            let ran = match self.engine {
                Engine::Seed => self.seed_run(),
                Engine::Head => self.head_run(),
            };
            let result = match ran {
                Ok(result) => result,
                Err(Stop::Threw { phase, message }) => {
                    self.emit("EngineThrew", json!({"phase": phase, "message": message, "caught": false}));
                    self.threw_finding(&phase, &message, false);
                    return self.end("failed", Some(message), true);
                }
                Err(Stop::Exhausted) => return self.end("stopped", None, false),
                Err(Stop::Limit) => {
                    self.limit();
                    return self.end("stopped", None, false);
                }
            };
            if !result.paused {
                let failed = result.results.iter().find(|r| !r.success);
                if let Some(failed) = failed {
                    self.failed_label = Some(failed.label.clone());
                }
                let error = result
                    .error
                    .or_else(|| failed.map(|r| r.error.clone().unwrap_or_else(|| "workflow failed".into())));
                let status = if result.success { "succeeded" } else { "failed" };
                return self.end(status, if result.success { None } else { error }, false);
            }
            let Some(pending) = self.db.pending.clone() else { return self.end("paused", None, false) };
            let Some((answer, span)) = self.take_answer(&pending.gate) else {
                self.emit("GateUnanswered", json!({"gate": pending.gate, "phase": pending.phase}));
                return self.end("paused", None, false);
            };
            resumes += 1;
            if resumes > MAX_RESUMES {
                self.limit();
                return self.end("stopped", None, false);
            }
            match answer {
                Answer::Reject { reason } => {
                    let reason = reason.unwrap_or_else(|| "no reason given".into());
                    self.emit("GateAnswered", json!({"gate": pending.gate, "answer": "reject", "reason": reason}));
                    let name = self.wf.name.clone();
                    self.note(&pending.phase, "rejected", format!("Workflow `{name}` was rejected. Reason: {reason}"));
                    return self.end("failed", Some(format!("Rejected: {reason}")), false);
                }
                Answer::Approve | Answer::Reply { .. } if pending.reply != matches!(answer, Answer::Reply { .. }) => {
                    let (given, wants) = if pending.reply {
                        ("an approval", "a reply (`{ reply: <text> }`): any comment on the issue is the reply")
                    } else {
                        ("a reply", "`approve` or `reject`")
                    };
                    let message = format!(
                        "gate `{}` is never resumed by {given}: it waits for {wants}, so the run stays paused here",
                        pending.gate
                    );
                    self.findings.push(Diagnostic::new(rules::CassetteUnconsumed, self.cassette_file, span, message));
                    self.emit("GateUnanswered", json!({"gate": pending.gate, "phase": pending.phase}));
                    return self.end("paused", None, false);
                }
                Answer::Approve => {
                    self.emit("GateAnswered", json!({"gate": pending.gate, "answer": "approve"}));
                    self.approved(&pending.gate);
                }
                Answer::Reply { text, sender } => {
                    let sender = sender.unwrap_or_else(|| "unknown".into());
                    self.emit(
                        "GateAnswered",
                        json!({"gate": pending.gate, "answer": "reply", "text": text, "sender": sender}),
                    );
                    self.replied(&pending.gate, &text, &sender);
                    // The server re-dispatches the workflow named `explore`, whatever paused.
                    if self.wf.name != "explore" {
                        let message = format!(
                            "the reply at gate `{}` is recorded, but the server then runs the workflow named `explore` (the reply handler names it), not `{}`: this run never continues",
                            pending.gate, self.wf.name
                        );
                        self.findings.push(Diagnostic::new(rules::RunStopped, self.cassette_file, span, message));
                        self.emit("ReplyNotResumed", json!({"gate": pending.gate, "workflow": self.wf.name}));
                        return self.end("paused", None, false);
                    }
                }
            }
            for (_, outcome) in self.outcomes.iter_mut().filter(|(_, o)| *o == Outcome::Paused) {
                *outcome = Outcome::Succeeded;
            }
        }
    }

    fn limit(&mut self) {
        let message = "the replay stops: the run made more executions or resumed more often than a dry-run replays (10,000 executions, 1,000 resumes)";
        let span = self.cassette.key_span("executions");
        self.findings.push(Diagnostic::new(rules::ExecutionLimit, self.cassette_file, span, message));
    }

    fn end(&mut self, status: &'static str, error: Option<String>, threw: bool) -> End {
        let outcomes: Map<String, Value> = self.outcomes.iter().map(|(p, o)| (p.clone(), json!(o.as_str()))).collect();
        let mut data = json!({"status": status, "phases": outcomes, "outputs": Value::Object(self.outputs.clone())});
        if let Some(error) = &error {
            data["error"] = json!(error);
        }
        if let Some(label) = &self.failed_label {
            data["failedAt"] = json!(label);
        }
        self.emit("WorkflowEnd", data);
        End { status, error, threw }
    }

    /// An approval at a gate: the seed-era server moves the run's current phase to the gate's
    /// owner, so the runner resumes after it; the current one resumes from the top.
    fn approved(&mut self, gate: &str) {
        if self.engine == Engine::Seed {
            let owner = self.owning_loop_gate(gate).or_else(|| self.owning_gate(gate));
            if let Some(owner) = owner {
                self.db.persist(&owner);
            }
        }
        self.db.pending = None;
        let name = self.wf.name.clone();
        self.note("", "resumed", format!("**Approval received** — resuming `{name}`."));
    }

    /// A reply at a reply gate: the handler adds it to `scratch.socratic.qa`, with the question
    /// the loop's last output asked, and (seed-era) moves the run to the phase before the
    /// loop, so the runner re-enters it.
    fn replied(&mut self, gate: &str, text: &str, sender: &str) {
        let previous = self.db.scratch.get("socratic").and_then(Value::as_object).cloned().unwrap_or_default();
        let mut qa = previous.get("qa").and_then(Value::as_array).cloned().unwrap_or_default();
        let question = match previous.get("lastOutputExecutionId").and_then(Value::as_str) {
            Some(id) => self.db.output_of(id).unwrap_or_default().to_string(),
            None => previous.get("lastOutput").and_then(Value::as_str).unwrap_or_default().to_string(),
        };
        qa.push(json!({"question": question, "answer": text, "sender": sender, "at": REPLY_TIME}));
        let mut socratic = previous;
        socratic.insert("qa".into(), Value::Array(qa));
        self.db.scratch.insert("socratic".into(), Value::Object(socratic));
        if self.engine == Engine::Seed
            && let Some(owner) = gate.rsplit_once("_iter_").map(|(owner, _)| owner.to_string())
        {
            let at = self.wf.phases.iter().position(|p| p.name == owner);
            let prior = at.filter(|i| *i > 0).map_or(owner.clone(), |i| self.wf.phases[i - 1].name.clone());
            self.db.persist(&prior);
        }
        self.db.pending = None;
    }

    fn owning_gate(&self, gate: &str) -> Option<String> {
        self.wf
            .phases
            .iter()
            .find(|p| {
                p.approval_gate.as_deref() == Some(gate)
                    || p.review_loop.as_ref().and_then(|l| l.approval_gate.as_deref()) == Some(gate)
            })
            .map(|p| p.name.clone())
    }

    fn owning_loop_gate(&self, gate: &str) -> Option<String> {
        self.wf
            .phases
            .iter()
            .find(|p| p.generic_loop.is_some() && gate.starts_with(&format!("{}_iter_", p.name)))
            .map(|p| p.name.clone())
    }

    /// The run's scratch: the context's, if the trigger set one, else the database's.
    fn scratch(&self) -> Map<String, Value> {
        self.db.scratch.clone()
    }

    // ── The seed-era runner ──────────────────────────────────────────────────────────────────

    fn seed_run(&mut self) -> Result<WfResult, Stop> {
        let scratch = self.scratch();
        let mut ctx = self.run_ctx(&scratch);
        let mut outputs = Map::new();
        let mut results = Vec::new();
        let mut resume_from = 0;
        if let Some(current) = self.db.current_phase.clone().filter(|_| self.db.history > 0)
            && let Some(next) = next_phase_after(self.wf, &current)
            && let Some(i) = phase_index(self.wf, next)
        {
            resume_from = i;
        }
        if self.wf.has_dependencies() {
            let result = self.seed_dag(&ctx, &mut outputs, results);
            self.outputs = outputs;
            return result;
        }
        let wf = self.wf;
        for phase in &wf.phases {
            let should_run = phase_index(wf, &phase.name).is_none_or(|i| i >= resume_from);
            match self.seed_linear(phase, &mut ctx, &mut outputs, &mut results, should_run) {
                Ok(Flow::Next) => {}
                Ok(Flow::Return(result)) => {
                    self.outputs = outputs;
                    return Ok(result);
                }
                Err(stop) => {
                    self.outputs = outputs;
                    return Err(stop);
                }
            }
        }
        self.outputs = outputs;
        Ok(self.wrap_up(results, &ctx))
    }

    /// The end of a run that went through: success when no execution failed, and the
    /// terminal marker of `on_success.set_phase`.
    fn wrap_up(&mut self, results: Vec<PhaseResult>, ctx: &Ctx) -> WfResult {
        let success = !results.iter().any(|r| !r.success);
        if let Some(phase) = self.wf.phases.iter().rev().find(|p| p.set_phase.is_some())
            && success
        {
            let marker = phase.set_phase.clone().unwrap_or_default();
            self.db.persist(&marker);
            self.emit("SetPhase", json!({"phase": phase.name, "setPhase": marker}));
        }
        if success
            && self.engine == Engine::Head
            && let Some(message) = self.wf.final_message.clone()
        {
            let with_outputs = {
                let mut c = ctx.clone();
                c.set("phaseOutputs", Some(Value::Object(self.outputs.clone())));
                c
            };
            let text = self.render_text(&message, &with_outputs).trim().to_string();
            self.note("", "final_message", text);
        }
        let error =
            results.iter().find(|r| !r.success).map(|r| r.error.clone().unwrap_or_else(|| "workflow failed".into()));
        WfResult { success, paused: false, results, error }
    }

    fn seed_dag(
        &mut self,
        ctx: &Ctx,
        outputs: &mut Map<String, Value>,
        mut results: Vec<PhaseResult>,
    ) -> Result<WfResult, Stop> {
        let wf = self.wf;
        let mut nodes =
            build_dag(&wf.phases, false).map_err(|message| Stop::Threw { phase: String::new(), message })?;
        loop {
            if nodes.iter().all(|n| n.status.terminal()) {
                break;
            }
            let (ready, skip) = ready_and_skipped(&nodes);
            for &i in &skip {
                nodes[i].status = NodeStatus::Skipped;
                results.push(PhaseResult::ok(&wf.phases[i].name, "Skipped (trigger rule not satisfied)"));
                let reason = format!("trigger rule `{}` not satisfied", nodes[i].rule);
                self.skip(&wf.phases[i], &reason);
            }
            if ready.is_empty() {
                if skip.is_empty() {
                    break;
                }
                continue;
            }
            for &i in &ready {
                nodes[i].status = NodeStatus::Running;
            }
            // Concurrent in the engine: every node of the batch starts with the same outputs.
            let snapshot = outputs.clone();
            let mut ends = Vec::new();
            for &i in &ready {
                let phase = &wf.phases[i];
                let end = match self.seed_dag_node(phase, ctx, &snapshot, outputs, &mut results) {
                    Ok(end) => end,
                    Err(Stop::Threw { message, .. }) => {
                        self.emit("EngineThrew", json!({"phase": phase.name, "message": message, "caught": true}));
                        self.threw_finding(&phase.name, &message, true);
                        self.threw = true;
                        let result = PhaseResult {
                            label: phase.name.clone(),
                            success: false,
                            output: String::new(),
                            error: Some(format!("Error: {message}")),
                        };
                        crate::runtime::lastlight::phases::NodeEnd { result, paused: false, already_pushed: false }
                    }
                    Err(stop) => return Err(stop),
                };
                ends.push((i, end));
            }
            let mut paused = false;
            for (i, end) in ends {
                let phase = &wf.phases[i];
                if !end.already_pushed {
                    results.push(end.result.clone());
                }
                if end.paused {
                    paused = true;
                    nodes[i].status = NodeStatus::Succeeded;
                    continue;
                }
                nodes[i].status = if end.result.success { NodeStatus::Succeeded } else { NodeStatus::Failed };
                let outcome = if end.result.success { Outcome::Succeeded } else { Outcome::Failed };
                self.set_outcome(&phase.name, outcome);
                let own = outputs.get(&phase.name);
                if own.is_none() || own.is_some_and(Value::is_string) {
                    outputs.insert(phase.name.clone(), json!(end.result.output));
                }
                if let Some(var) = &phase.output_var
                    && !outputs.contains_key(var)
                {
                    outputs.insert(var.clone(), json!(end.result.output));
                }
            }
            if paused {
                return Ok(WfResult { success: true, paused: true, results, error: None });
            }
        }
        self.outputs = outputs.clone();
        Ok(self.wrap_up(results, ctx))
    }

    // ── The current engine ───────────────────────────────────────────────────────────────────

    fn head_run(&mut self) -> Result<WfResult, Stop> {
        let scratch = self.scratch();
        let mut ctx = self.run_ctx(&scratch);
        let mut outputs = Map::new();
        let mut results: Vec<PhaseResult> = Vec::new();
        let wf = self.wf;
        let mut nodes = build_dag(&wf.phases, true).map_err(|message| Stop::Threw { phase: String::new(), message })?;
        let backend = self.cassette.server.get("sandbox").and_then(Value::as_str).unwrap_or("gondolin").to_string();
        let qa_image = self.cassette.server.get("qaImage").and_then(Value::as_bool).unwrap_or(true);
        loop {
            if nodes.iter().all(|n| n.status.terminal()) {
                break;
            }
            // The run's scratch is read again from the database before each node.
            let mut merged = ctx.get("scratch").and_then(Value::as_object).cloned().unwrap_or_default();
            merged.extend(self.db.scratch.clone());
            ctx.set("scratch", Some(Value::Object(merged)));
            let (ready, skip) = ready_and_skipped(&nodes);
            for &i in &skip {
                nodes[i].status = NodeStatus::Skipped;
                results.push(PhaseResult::ok(&wf.phases[i].name, "Skipped (trigger rule not satisfied)"));
                let reason = format!("trigger rule `{}` not satisfied", nodes[i].rule);
                self.skip(&wf.phases[i], &reason);
            }
            let mut gated = Vec::new();
            for &i in &ready {
                let phase = &wf.phases[i];
                let reason = if let Some(required) = phase.requires_sandbox.as_ref().filter(|r| **r != backend) {
                    Some(format!("requires {required} sandbox; running {backend}"))
                } else if phase.sandbox_image.as_deref() == Some("qa") && backend == "docker" && !qa_image {
                    Some("requires the QA image, not built on this host".to_string())
                } else if !phase.skip_if.is_empty() {
                    let mut eval_ctx = ctx.clone();
                    eval_ctx.set("phaseOutputs", Some(Value::Object(outputs.clone())));
                    eval_ctx.set("output", Some(json!("")));
                    phase
                        .skip_if
                        .iter()
                        .find(|e| until::eval(e, &eval_ctx, until::Grammar::at(self.release())).met)
                        .map(|e| format!("skip_if matched: {e}"))
                } else {
                    None
                };
                if let Some(reason) = reason {
                    gated.push((i, reason));
                }
            }
            if !gated.is_empty() {
                for (i, reason) in gated {
                    nodes[i].status = NodeStatus::Skipped;
                    let phase = &wf.phases[i];
                    results.push(PhaseResult::ok(&phase.name, &format!("Skipped ({reason})")));
                    self.skip(phase, &reason);
                    let with_outputs = {
                        let mut c = ctx.clone();
                        c.set("phaseOutputs", Some(Value::Object(outputs.clone())));
                        c
                    };
                    self.notify(&phase.name, "on_skipped_done", phase.message("on_skipped_done"), &with_outputs);
                }
                continue;
            }
            if ready.is_empty() {
                if skip.is_empty() {
                    break;
                }
                continue;
            }
            let i = ready[0];
            nodes[i].status = NodeStatus::Running;
            let phase = &wf.phases[i];
            let end = match self.head_execute(phase, &mut ctx, &outputs) {
                Ok(end) => end,
                Err(Stop::Threw { message, .. }) => {
                    self.emit("EngineThrew", json!({"phase": phase.name, "message": message, "caught": true}));
                    self.threw_finding(&phase.name, &message, true);
                    self.threw = true;
                    let error = format!("Error: {message}");
                    results.push(PhaseResult {
                        label: phase.name.clone(),
                        success: false,
                        output: String::new(),
                        error: Some(error),
                    });
                    nodes[i].status = NodeStatus::Failed;
                    self.set_outcome(&phase.name, Outcome::Failed);
                    continue;
                }
                Err(stop) => {
                    self.outputs = outputs;
                    return Err(stop);
                }
            };
            results.extend(end.results);
            if let Some(vars) = end.output_vars {
                outputs.extend(vars);
            }
            if end.paused {
                self.outputs = outputs;
                return Ok(WfResult { success: true, paused: true, results, error: None });
            }
            nodes[i].status = if end.status == Outcome::Failed { NodeStatus::Failed } else { NodeStatus::Succeeded };
            self.set_outcome(&phase.name, end.status);
        }
        self.outputs = outputs;
        Ok(self.wrap_up(results, &ctx))
    }
}

/// The time a reply is recorded at in `scratch.socratic.qa` (the server writes the clock's; a
/// replay writes this, so that two replays are the same).
pub const REPLY_TIME: &str = "1970-01-01T00:00:00.000Z";

#[cfg(test)]
mod tests {
    use super::*;

    fn phases(spec: &[(&str, &[&str])]) -> Vec<Phase> {
        spec.iter()
            .map(|(name, deps)| Phase {
                name: name.to_string(),
                depends_on: deps.iter().map(|d| d.to_string()).collect(),
                trigger_rule: "all_success".into(),
                ..Phase::default()
            })
            .collect()
    }

    #[test]
    fn dag_errors_are_the_engines() {
        let err = |spec: &[(&str, &[&str])]| build_dag(&phases(spec), false).err();
        assert_eq!(err(&[("a", &["a"])]).as_deref(), Some("Phase \"a\" depends on itself"));
        assert_eq!(err(&[("a", &["x"])]).as_deref(), Some("Phase \"a\" depends on unknown phase \"x\""));
        assert_eq!(err(&[("a", &["b"]), ("b", &["a"])]).as_deref(), Some("Cycle detected: a -> b -> a"));
        assert!(err(&[("a", &[]), ("b", &["a"])]).is_none());
    }

    #[test]
    fn trigger_rules() {
        use NodeStatus::*;
        assert!(!rule_holds("all_success", &[Succeeded, Skipped]), "a skipped dependency is no success");
        assert!(rule_holds("one_success", &[Failed, Succeeded]));
        assert!(!rule_holds("none_failed_min_one_success", &[Failed, Succeeded]));
        assert!(rule_holds("none_failed_min_one_success", &[Skipped, Succeeded]));
        assert!(rule_holds("all_done", &[Failed, Skipped]));
        assert!(rule_holds("all_success", &[]));
    }

    #[test]
    fn a_chain_when_nothing_declares_edges() {
        let nodes = build_dag(&phases(&[("a", &[]), ("b", &[]), ("c", &[])]), true).expect("dag");
        assert_eq!(nodes.iter().map(|n| n.deps.clone()).collect::<Vec<_>>(), vec![vec![], vec![0], vec![1]]);
    }
}
