//! The state of one replayed run and what every phase body shares: the server's database as
//! far as the engine reads it back (the executions ledger that deduplicates a resumed run, the
//! run's `currentPhase` and `scratch`, the pending gate), the recorded executions, rendering
//! prompts and messages, and the events. The schedulers are in `schedule`, the phase bodies in
//! `phases`.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::diagnostic::{Diagnostic, FileId};
use crate::registry::cassette as rules;
use crate::registry::releases::lastlight::ReleaseId;
use crate::runtime::events::Trace;
use crate::runtime::lastlight::cassette::{Cassette, Execution};
use crate::runtime::lastlight::render::{self, Rendered};
use crate::runtime::lastlight::value::Ctx;
use crate::runtime::lastlight::workflow::{Phase, Text, Workflow};
use crate::source::Span;
use crate::template::lastlight::Engine;
use crate::workspace::lastlight::{PathProblem, prompt_base, resolve_prompt, skill_candidates};
use crate::workspace::{SourceFile, Workspace};

/// Phase executions a replay runs at most (a loop whose budget comes from the context can be
/// large; every execution needs a recording, so this only bounds a cassette's own size).
pub const MAX_EXECUTIONS: usize = 10_000;
/// Times a run is resumed after a gate at most.
pub const MAX_RESUMES: usize = 1_000;

/// Why the replay cannot go on.
#[derive(Debug)]
pub enum Stop {
    /// The engine threw: a prompt it cannot load, a skill it cannot find, a DAG it refuses. The
    /// seed-era linear runner lets it end the run; the DAG runners catch it per phase.
    Threw { phase: String, message: String },
    /// The run needs a recording the cassette does not have (the finding is made).
    Exhausted,
    /// More executions or resumes than a replay makes.
    Limit,
}

/// One execution's result, as the engine keeps it (`PhaseResult`).
#[derive(Clone, Debug)]
pub struct PhaseResult {
    pub label: String,
    pub success: bool,
    pub output: String,
    pub error: Option<String>,
}

impl PhaseResult {
    pub fn ok(label: &str, output: &str) -> PhaseResult {
        PhaseResult { label: label.to_string(), success: true, output: output.to_string(), error: None }
    }
}

/// What one call of `runWorkflow` ended with.
#[derive(Debug, Default)]
pub struct WfResult {
    pub success: bool,
    pub paused: bool,
    pub results: Vec<PhaseResult>,
    /// The error the run is failed with, when one is known.
    pub error: Option<String>,
}

/// What a phase's agent (or command) call came to.
pub enum Call {
    /// The ledger has it done: the engine skips it ("Already completed").
    Done {
        output: String,
    },
    Ran(Ran),
}

#[derive(Clone, Debug)]
pub struct Ran {
    pub success: bool,
    pub output: String,
    pub error: Option<String>,
    pub stop_reason: Option<String>,
    /// Which recording (index into the cassette's executions).
    pub recording: usize,
}

/// One row of the executions ledger.
#[derive(Clone, Debug)]
struct Row {
    success: bool,
    output: String,
}

/// The gate a run paused at.
#[derive(Clone, Debug)]
pub struct Pending {
    pub gate: String,
    pub reply: bool,
    pub phase: String,
}

/// The server's database, as far as the engine reads it back.
#[derive(Debug, Default)]
pub struct Db {
    ledger: HashMap<String, Vec<Row>>,
    /// Execution ids (`lastOutputExecutionId`) and the output text recorded on them.
    outputs_by_id: HashMap<String, String>,
    pub current_phase: Option<String>,
    pub history: usize,
    pub scratch: Map<String, Value>,
    pub pending: Option<Pending>,
    next_id: usize,
}

impl Db {
    /// `shouldRunPhase(...) === "done"`: the label's last execution succeeded.
    pub fn done(&self, label: &str) -> Option<&str> {
        self.ledger.get(label)?.last().filter(|r| r.success).map(|r| r.output.as_str())
    }

    /// Replaces the output the ledger keeps for the label's last execution (`recordOutputText`).
    pub fn mark_output(&mut self, label: &str, output: String) {
        if let Some(row) = self.ledger.get_mut(label).and_then(|rows| rows.last_mut()) {
            row.output = output;
        }
    }

    /// Marks the label's last execution failed (`markLatestAsFailed`).
    pub fn mark_failed(&mut self, label: &str) {
        if let Some(row) = self.ledger.get_mut(label).and_then(|rows| rows.last_mut()) {
            row.success = false;
        }
    }

    /// Records the output text on a new execution id (`recordOutputText`).
    pub fn execution_id(&mut self, output: &str) -> String {
        self.next_id += 1;
        let id = format!("dry-run-execution-{}", self.next_id);
        self.outputs_by_id.insert(id.clone(), output.to_string());
        id
    }

    pub fn output_of(&self, id: &str) -> Option<&str> {
        self.outputs_by_id.get(id).map(String::as_str)
    }

    /// `persistPhase`/`updateWorkflowPhase`: the run's current phase and its history.
    pub fn persist(&mut self, phase: &str) {
        self.current_phase = Some(phase.to_string());
        self.history += 1;
    }
}

/// A phase's end state, for `expect.phases` and the summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    Failed,
    Skipped,
    Paused,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded",
            Outcome::Failed => "failed",
            Outcome::Skipped => "skipped",
            Outcome::Paused => "paused",
        }
    }
}

/// A tag of a prompt that rendered empty or verbatim, with the executions that sent it.
#[derive(Debug)]
pub struct TagUse {
    pub file: FileId,
    pub span: Span,
    pub tag: String,
    pub key: String,
    pub verbatim: Option<String>,
    pub labels: Vec<String>,
    /// The first execution that sent it (where the finding goes).
    pub recording: usize,
}

pub struct Runner<'a> {
    pub workspace: &'a Workspace,
    pub file: &'a SourceFile,
    pub wf: &'a Workflow,
    pub engine: Engine,
    pub cassette: &'a Cassette,
    pub cassette_file: FileId,
    /// The context `runSimpleWorkflow` builds (without `scratch`, which each run adds).
    pub base: Ctx,
    pub db: Db,
    pub trace: Trace,
    pub findings: Vec<Diagnostic>,
    pub passed: u32,
    pub failed: u32,
    pub unchecked: u32,
    /// How many recordings of each label were used.
    consumed: HashMap<String, usize>,
    /// Which recordings were used.
    pub used: Vec<bool>,
    /// How many answers of each gate were used.
    pub answers_used: HashMap<String, usize>,
    pub executions: usize,
    pub outcomes: Vec<(String, Outcome)>,
    /// Fix cycles or iterations of each loop phase, at its last run.
    pub cycles: HashMap<String, i64>,
    /// `phaseOutputs` when the last call of `runWorkflow` ended.
    pub outputs: Map<String, Value>,
    pub tags: Vec<TagUse>,
    /// The prompts sent, by recording.
    pub prompts: HashMap<usize, String>,
    /// The engine threw inside a phase a DAG runner caught (an authoring error all the same).
    pub threw: bool,
    /// Recordings whose verdict or BLOCKED expectation was checked.
    pub verdict_checked: std::collections::HashSet<usize>,
    pub blocked_checked: std::collections::HashSet<usize>,
    /// The labels executed, in order.
    pub ran_labels: Vec<String>,
    /// The first execution that failed in the run's last call.
    pub failed_label: Option<String>,
    /// The execution the run needed and the cassette did not record.
    pub missing_label: Option<String>,
    approvals: usize,
}

impl<'a> Runner<'a> {
    pub fn new(
        workspace: &'a Workspace,
        file: &'a SourceFile,
        wf: &'a Workflow,
        engine: Engine,
        cassette: &'a Cassette,
        cassette_file: FileId,
        base: Ctx,
    ) -> Runner<'a> {
        Runner {
            workspace,
            file,
            wf,
            engine,
            cassette,
            cassette_file,
            base,
            db: Db::default(),
            trace: Trace::default(),
            findings: Vec::new(),
            passed: 0,
            failed: 0,
            unchecked: 0,
            consumed: HashMap::new(),
            used: vec![false; cassette.executions.len()],
            answers_used: HashMap::new(),
            executions: 0,
            outcomes: Vec::new(),
            cycles: HashMap::new(),
            outputs: Map::new(),
            tags: Vec::new(),
            prompts: HashMap::new(),
            threw: false,
            verdict_checked: Default::default(),
            blocked_checked: Default::default(),
            ran_labels: Vec::new(),
            failed_label: None,
            missing_label: None,
            approvals: 0,
        }
    }

    pub fn emit(&mut self, name: &'static str, data: Value) {
        self.trace.emit(name, data);
    }

    pub fn set_outcome(&mut self, phase: &str, outcome: Outcome) {
        match self.outcomes.iter_mut().find(|(p, _)| p == phase) {
            Some(entry) => entry.1 = outcome,
            None => self.outcomes.push((phase.to_string(), outcome)),
        }
    }

    pub fn outcome(&self, phase: &str) -> Option<Outcome> {
        self.outcomes.iter().find(|(p, _)| p == phase).map(|(_, o)| *o)
    }

    /// Whether the approval gate `gate` pauses (`config.approval[gate] === true`).
    pub fn gate_enabled(&self, gate: Option<&str>) -> bool {
        let Some(gate) = gate else { return false };
        match self.cassette.server.get("approval") {
            Some(Value::Object(gates)) => gates.get(gate) == Some(&Value::Bool(true)),
            _ => self.file.config.lastlight.approval_gates.iter().any(|g| g == gate),
        }
    }

    pub fn next_approval_id(&mut self) -> String {
        self.approvals += 1;
        format!("dry-run-approval-{}", self.approvals)
    }

    /// `ctx` with the run's `scratch` (`ctx.scratch = scratch`, set once per run).
    pub fn run_ctx(&self, scratch: &Map<String, Value>) -> Ctx {
        let mut ctx = self.base.clone();
        let scratch = match ctx.get("scratch") {
            Some(Value::Object(given)) => given.clone(),
            _ => scratch.clone(),
        };
        ctx.set("scratch", Some(Value::Object(scratch)));
        ctx
    }

    /// The phase's prompt (`buildPhasePrompt`): its template rendered, or the skills nudge.
    /// `Err` is what the engine throws.
    pub fn build_prompt(&mut self, phase: &Phase, ctx: &Ctx) -> Result<Prompt, Stop> {
        if let Some((path, _)) = &phase.prompt {
            return self.template_prompt(&phase.name, path, ctx);
        }
        let skills = phase.skill_names();
        if skills.is_empty() {
            let message = format!("Phase \"{}\" has neither prompt: nor skills: — cannot build prompt", phase.name);
            return Err(Stop::Threw { phase: phase.name.clone(), message });
        }
        let text = render::skills_nudge(&skills, ctx, self.engine);
        Ok(Prompt { rendered: Rendered { text, ..Rendered::default() }, source: "skills nudge".into(), file: None })
    }

    /// A prompt template named by `path` (relative to the workflows directory), rendered.
    pub fn template_prompt(&mut self, phase: &str, path: &str, ctx: &Ctx) -> Result<Prompt, Stop> {
        let base = prompt_base(&self.file.path);
        let threw = |message: String| Stop::Threw { phase: phase.to_string(), message };
        let resolved = match resolve_prompt(base, path) {
            Ok(resolved) => resolved,
            Err(PathProblem::Empty) => return Err(threw("Prompt path is empty".into())),
            Err(PathProblem::Absolute | PathProblem::Escapes) => {
                return Err(threw(format!("Prompt path escapes workflow directory: {path}")));
            }
        };
        let Some(file) = self.workspace.file_at(&resolved) else {
            return Err(threw(format!("Prompt template not found: {}", self.shown(&resolved))));
        };
        let rendered = render::render(&file.text, ctx, self.engine);
        Ok(Prompt { rendered, source: file.display.clone(), file: Some(file.id) })
    }

    /// A path of the workflows directory as the workflow's own path is shown (relative to
    /// where the command runs), so that messages do not depend on the machine.
    pub fn shown(&self, path: &std::path::Path) -> String {
        let base = prompt_base(&self.file.path);
        let (Ok(inside), Ok(own)) = (path.strip_prefix(base), self.file.path.strip_prefix(base)) else {
            return path.display().to_string();
        };
        let own = own.to_string_lossy();
        match self.file.display.strip_suffix(own.as_ref()) {
            Some(prefix) => format!("{prefix}{}", inside.display()),
            None => path.display().to_string(),
        }
    }

    /// The skills a phase stages (`resolveSkillPaths`), or what the engine throws.
    pub fn check_skills(&self, phase: &Phase) -> Result<(), Stop> {
        let base = prompt_base(&self.file.path);
        for name in phase.skill_names() {
            if !crate::workspace::lastlight::is_valid_skill_name(&name) {
                return Err(Stop::Threw { phase: phase.name.clone(), message: format!("Invalid skill name: {name}") });
            }
            if !skill_candidates(base, &name).any(|p| self.workspace.exists(&p)) {
                let message = format!("Skill not found: skills/{name}/SKILL.md");
                return Err(Stop::Threw { phase: phase.name.clone(), message });
            }
        }
        Ok(())
    }

    /// A YAML template (a message, a model) rendered with `ctx`.
    pub fn render_text(&self, text: &Text, ctx: &Ctx) -> String {
        render::render(&text.text, ctx, self.engine).text
    }

    /// Renders and posts a message (`notifyMessage`): nothing when it renders blank.
    pub fn notify(&mut self, phase: &str, key: &str, template: Option<&Text>, ctx: &Ctx) {
        let Some(template) = template else { return };
        let text = self.render_text(template, ctx);
        if text.trim().is_empty() {
            return;
        }
        self.emit("Notify", json!({"phase": phase, "message": key, "text": text}));
    }

    /// Posts a text the engine builds itself.
    pub fn note(&mut self, phase: &str, key: &str, text: String) {
        if text.trim().is_empty() {
            return;
        }
        self.emit("Notify", json!({"phase": phase, "message": key, "text": text}));
    }

    /// The model a phase execution runs with: its template rendered with the run's context (no
    /// phase outputs), else the configured one for `task` (then `fallback`).
    pub fn model(&self, template: Option<&Text>, task: &str, fallback: Option<&str>, key: &str) -> Option<String> {
        let raw = template.map(|t| render::render(&t.text, &self.base, self.engine).text).filter(|t| !t.is_empty());
        let configured = |task: &str| {
            let map = self.cassette.server.get(key)?.as_object()?;
            map.get(task).or_else(|| map.get("default")).and_then(Value::as_str).filter(|s| !s.is_empty())
        };
        raw.or_else(|| configured(task).or_else(|| fallback.and_then(configured)).map(str::to_string))
    }

    /// Runs one agent (or command) execution: the ledger first (a done label is skipped), then
    /// the cassette's next recording of `label`. The prompt is reported when it is sent.
    pub fn call(
        &mut self,
        phase: &Phase,
        label: &str,
        prompt: &Prompt,
        models: (Option<String>, Option<String>),
    ) -> Result<Call, Stop> {
        if let Some(output) = self.db.done(label) {
            let output = output.to_string();
            self.emit("PhaseDeduplicated", json!({"phase": phase.name, "label": label}));
            return Ok(Call::Done { output });
        }
        self.executions += 1;
        if self.executions > MAX_EXECUTIONS {
            return Err(Stop::Limit);
        }
        let nth = self.consumed.get(label).copied().unwrap_or(0);
        let recording =
            self.cassette.executions.iter().enumerate().filter(|(_, e)| e.label == label).nth(nth).map(|(i, _)| i);
        self.report_prompt(phase, label, prompt, recording, models);
        let Some(recording) = recording else {
            self.exhausted(label, phase);
            return Err(Stop::Exhausted);
        };
        *self.consumed.entry(label.to_string()).or_default() += 1;
        self.used[recording] = true;
        self.ran_labels.push(label.to_string());
        let execution: &Execution = &self.cassette.executions[recording];
        let ran = Ran {
            success: execution.success,
            output: execution.output.clone(),
            error: execution.error.clone().or_else(|| (!execution.success).then(|| "failed".to_string())),
            stop_reason: execution.stop_reason.clone(),
            recording,
        };
        self.db
            .ledger
            .entry(label.to_string())
            .or_default()
            .push(Row { success: ran.success, output: ran.output.clone() });
        let mut data = json!({"phase": phase.name, "label": label, "success": ran.success, "output": ran.output});
        if let Some(error) = &ran.error {
            data["error"] = json!(error);
        }
        if let Some(reason) = &ran.stop_reason {
            data["stopReason"] = json!(reason);
        }
        self.emit("PhaseEnd", data);
        self.check_prompt_expectations(recording, prompt);
        Ok(Call::Ran(ran))
    }

    fn report_prompt(
        &mut self,
        phase: &Phase,
        label: &str,
        prompt: &Prompt,
        recording: Option<usize>,
        (model, variant): (Option<String>, Option<String>),
    ) {
        let rendered = &prompt.rendered;
        let marks: Vec<Value> = rendered
            .marks
            .iter()
            .filter_map(|m| {
                let (start, end) = m.range?;
                Some(json!({"tag": m.tag, "key": m.key, "start": start, "end": end, "missing": m.missing, "fromTemplate": m.origin.is_some()}))
            })
            .collect();
        let verbatim: Vec<Value> = rendered
            .verbatim
            .iter()
            .map(|v| json!({"tag": v.text, "start": v.range.0, "end": v.range.1, "why": v.why}))
            .collect();
        let mut data = json!({
            "phase": phase.name, "label": label, "source": prompt.source,
            "prompt": rendered.text, "substitutions": marks, "verbatim": verbatim,
        });
        if let Some(model) = model {
            data["model"] = json!(model);
        }
        if let Some(variant) = variant {
            data["variant"] = json!(variant);
        }
        self.emit("PromptRendered", data);
        if let Some(recording) = recording {
            self.prompts.insert(recording, rendered.text.clone());
        }
        let Some(file) = prompt.file else { return };
        let at = recording.unwrap_or(usize::MAX);
        let missing: Vec<(usize, usize, String, String)> =
            rendered.missing().filter_map(|m| Some((m.origin?, m.tag.len(), m.tag.clone(), m.key.clone()))).collect();
        for (origin, len, tag, key) in missing {
            self.tag_use(file, Span::new(origin, origin + len), tag, key, None, label, at);
        }
        let verbatim: Vec<(usize, usize, String, String)> =
            rendered.verbatim.iter().map(|v| (v.origin, v.text.len(), v.text.clone(), v.why.clone())).collect();
        for (origin, len, tag, why) in verbatim {
            self.tag_use(file, Span::new(origin, origin + len), tag.clone(), tag, Some(why), label, at);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn tag_use(
        &mut self,
        file: FileId,
        span: Span,
        tag: String,
        key: String,
        verbatim: Option<String>,
        label: &str,
        recording: usize,
    ) {
        let same = |u: &&mut TagUse| u.file == file && u.span == span && u.verbatim.is_some() == verbatim.is_some();
        match self.tags.iter_mut().find(|u| same(u)) {
            Some(found) => {
                if !found.labels.iter().any(|l| l == label) {
                    found.labels.push(label.to_string());
                }
                found.recording = found.recording.min(recording);
            }
            None => {
                self.tags.push(TagUse { file, span, tag, key, verbatim, labels: vec![label.to_string()], recording })
            }
        }
    }

    /// `CassetteExhausted`: the run needs an execution the cassette does not record.
    fn exhausted(&mut self, label: &str, phase: &Phase) {
        self.missing_label = Some(label.to_string());
        let earlier = self.consumed.get(label).copied().unwrap_or(0);
        let what = if earlier > 0 {
            format!(
                "execution `{label}` runs again (time {}), but the cassette records it {earlier} time(s)",
                earlier + 1
            )
        } else {
            format!("the run needs execution `{label}` of phase `{}`, which the cassette does not record", phase.name)
        };
        let span = self
            .cassette
            .executions
            .iter()
            .find(|e| e.label == label)
            .map_or_else(|| self.cassette.key_span("executions"), |e| e.span);
        let labels: Vec<&str> = self.cassette.executions.iter().map(|e| e.label.as_str()).collect();
        let hint = crate::util::did_you_mean(label, labels.iter().copied())
            .filter(|near| *near != label)
            .map(|near| {
                format!(
                    " (the cassette has `{near}`: the {} engine names this execution `{label}`)",
                    engine_name(self.engine)
                )
            })
            .unwrap_or_default();
        let finding = Diagnostic::new(rules::CassetteExhausted, self.cassette_file, span, format!("{what}{hint}"))
            .with_help(format!("record what `{label}` returned under `executions: {{ {label}: {{ output: ... }} }}`"));
        self.findings.push(finding);
        self.emit("RunStopped", json!({"phase": phase.name, "label": label, "why": "no recording"}));
    }

    /// `RunStopped`: the engine threw while running `phase` (the whole run, or only that phase
    /// when a DAG runner `caught` it).
    pub fn threw_finding(&mut self, phase: &str, message: &str, caught: bool) {
        let recorded =
            self.cassette.executions.iter().find(|e| e.label == phase || e.label.starts_with(&format!("{phase}_")));
        let span = recorded.map(|e| e.span).or(self.cassette.workflow.as_ref().map(|w| w.1)).unwrap_or_default();
        let at = if phase.is_empty() { "before any phase".to_string() } else { format!("at phase `{phase}`") };
        let what = if caught {
            "that phase fails and the phases that need it are skipped"
        } else {
            "the run fails there, and nothing after it runs"
        };
        let finding = Diagnostic::new(
            rules::RunStopped,
            self.cassette_file,
            span,
            format!("the engine throws {at} (`{message}`): {what}; the workflow's own errors say why"),
        );
        let finding = match self.wf.phase(phase) {
            Some(p) => finding.with_related(self.file.id, p.span, "the phase"),
            None => finding.with_related(self.file.id, self.wf.name_span, "the workflow"),
        };
        self.findings.push(finding);
    }

    /// The `untilBash` exit code recorded on an iteration, or `CassetteExhausted`.
    pub fn until_bash_exit(&mut self, recording: usize, command: &str) -> Result<i64, Stop> {
        let execution = &self.cassette.executions[recording];
        if let Some((code, _)) = execution.until_bash {
            return Ok(code);
        }
        let message = format!(
            "execution `{}` has no `untilBash` exit code, and the loop runs `{command}` after it: record its exit code (0 ends the loop)",
            execution.label
        );
        self.findings.push(Diagnostic::new(rules::CassetteExhausted, self.cassette_file, execution.span, message));
        let label = execution.label.clone();
        self.emit("RunStopped", json!({"label": label, "why": "no untilBash exit code"}));
        Err(Stop::Exhausted)
    }

    /// The next answer recorded for `gate`.
    pub fn take_answer(&mut self, gate: &str) -> Option<(crate::runtime::lastlight::cassette::Answer, Span)> {
        let used = self.answers_used.get(gate).copied().unwrap_or(0);
        let answer = self.cassette.gate(gate)?.answers.get(used).cloned()?;
        *self.answers_used.entry(gate.to_string()).or_default() += 1;
        Some(answer)
    }

    /// The recording of a call, for expectations checked after it ran.
    pub fn recording(&self, recording: usize) -> &Execution {
        &self.cassette.executions[recording]
    }

    /// Records an expectation's outcome (an event, and a finding when it failed).
    pub fn expectation(&mut self, kind: &str, expected: String, actual: Option<String>, span: Span) {
        let held = actual.is_none();
        let mut data = json!({"kind": kind, "expected": expected, "outcome": if held { "held" } else { "failed" }});
        if let Some(actual) = &actual {
            data["actual"] = json!(actual);
            self.failed += 1;
            let message = format!("expected {expected}, got {actual}");
            self.findings.push(Diagnostic::new(rules::ExpectationFailed, self.cassette_file, span, message));
        } else {
            self.passed += 1;
        }
        self.emit("ExpectationOutcome", data);
    }

    /// An expectation the run never reached: it counts as failed.
    pub fn unreached(&mut self, kind: &str, expected: String, why: String, span: Span) {
        self.failed += 1;
        self.unchecked += 1;
        let message = format!("expected {expected}, but this was never checked: {why}");
        self.findings.push(Diagnostic::new(rules::ExpectationFailed, self.cassette_file, span, message));
        self.emit(
            "ExpectationOutcome",
            json!({"kind": kind, "expected": expected, "outcome": "unchecked", "why": why}),
        );
    }

    fn check_prompt_expectations(&mut self, recording: usize, prompt: &Prompt) {
        let expect = self.cassette.executions[recording].expect.clone();
        let label = self.cassette.executions[recording].label.clone();
        for (text, span) in &expect.prompt_contains {
            let actual = (!prompt.rendered.text.contains(text.as_str())).then(|| "a prompt without it".to_string());
            self.expectation("prompt", format!("the prompt of `{label}` to contain {text:?}"), actual, *span);
        }
        for (text, span) in &expect.prompt_omits {
            let actual = prompt.rendered.text.contains(text.as_str()).then(|| "a prompt with it".to_string());
            self.expectation("prompt", format!("the prompt of `{label}` not to contain {text:?}"), actual, *span);
        }
    }
}

/// A phase prompt, rendered.
pub struct Prompt {
    pub rendered: Rendered,
    /// Where it came from: the template's path as shown, or `skills nudge`.
    pub source: String,
    /// The template file, when it is one of the workspace's.
    pub file: Option<FileId>,
}

impl Prompt {
    /// A prompt that is a plain text (a command).
    pub fn plain(text: String, source: &str) -> Prompt {
        Prompt { rendered: Rendered { text, ..Rendered::default() }, source: source.into(), file: None }
    }
}

impl Runner<'_> {
    /// The release the run models: the newest the workflow's repository may be at (the one
    /// its engine, `[lastlight] release` or detection, names when it is known).
    pub fn release(&self) -> ReleaseId {
        self.file.config.lastlight.release.newest
    }
}

pub fn engine_name(engine: Engine) -> &'static str {
    match engine {
        Engine::Seed => "seed-era",
        Engine::Head => "current",
    }
}

/// `isTerminated(error)`: a kill, not a failure of the work.
pub fn is_terminated(error: Option<&str>) -> bool {
    let Some(error) = error else { return false };
    let lower = error.to_lowercase();
    lower.contains("terminated")
        || lower.contains("killed")
        || lower.contains("exit undefined")
        || (lower.contains("container") && lower.contains("not running"))
}

/// `phaseIndexInDefinition`: a declared name, or a generated label's phase.
pub fn phase_index(wf: &Workflow, name: &str) -> Option<usize> {
    if let Some(i) = wf.phases.iter().position(|p| p.name == name) {
        return Some(i);
    }
    for suffix in ["_iter_", "_fix_", "_"] {
        if let Some(base) = strip_numbered(name, suffix)
            && let Some(i) = wf.phases.iter().position(|p| p.name == base)
        {
            return Some(i);
        }
    }
    None
}

/// `^(.*)<suffix>\d+$`: the greedy prefix before the last `<suffix><digits>` at the end.
fn strip_numbered<'n>(name: &'n str, suffix: &str) -> Option<&'n str> {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    name[..name.len() - digits].strip_suffix(suffix)
}

/// `nextPhaseAfter`: the phase after the one `completed` names, if any.
pub fn next_phase_after<'w>(wf: &'w Workflow, completed: &str) -> Option<&'w str> {
    let i = phase_index(wf, completed)?;
    wf.phases.get(i + 1).map(|p| p.name.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_labels_find_their_phase() {
        let wf = Workflow {
            phases: ["plan", "reviewer", "tdd_iter"]
                .iter()
                .map(|n| Phase { name: n.to_string(), ..Phase::default() })
                .collect(),
            ..Workflow::default()
        };
        assert_eq!(phase_index(&wf, "reviewer_fix_2"), Some(1));
        assert_eq!(phase_index(&wf, "reviewer_3"), Some(1));
        assert_eq!(phase_index(&wf, "tdd_iter_iter_4"), Some(2));
        assert_eq!(phase_index(&wf, "complete"), None);
        assert_eq!(next_phase_after(&wf, "plan"), Some("reviewer"));
        assert_eq!(next_phase_after(&wf, "tdd_iter"), None);
        assert!(is_terminated(Some("Container xyz is not running")));
        assert!(!is_terminated(Some("tests failed")));
    }
}
