//! A whole state machine: the entry stage, then what each stage's `next` chooses.
//! Sequential successors get `ctx.upstream = [result]`; parallel siblings run on a frozen
//! context (with an empty `upstream`), fail fast, and the join runs only when every sibling's
//! Assert said `ok`, with the siblings' results as `ctx.upstream` in `nextStages` order.
//!
//! Each execution of a stage replays its own recorded material: the n-th execution of stage
//! `x` takes the n-th entry of `stages.x` (a single mapping is one execution). An execution
//! with nothing recorded is `cassette/CassetteExhausted` and stops the machine; recorded
//! executions that never ran are reported after it (`ExpectationFailed` when they expected
//! something, else `CassetteUnconsumed`).

use std::collections::BTreeMap;

use serde_json::{Value as Json, json};

use crate::cassette::{Cassette, StageCassette, Verdict};
use crate::diagnostic::{Diagnostic, FileId};
use crate::families::sm::model::{SmDoc, StageDoc};
use crate::families::sm::roles::{self, Role};
use crate::registry::cassette as rules;
use crate::runtime::engine::Engine;
use crate::runtime::run::{DryRun, Focus, Options, UNUSABLE};
use crate::runtime::stages::lifecycle::{Ended, Env, Producer, Run, StageResult};
use crate::runtime::stages::owners::owning_machine;
use crate::runtime::stages::stage::StageSpec;
use crate::runtime::stages::{Stages, cassette_in_workspace, ending_of, finish_stages, read_cassette};
use crate::source::Span;
use crate::workspace::{FileKind, Workspace};

/// A bound on stage executions, so a `next` cycle ends even with a long recording.
const MAX_EXECUTIONS: u32 = 64;

pub(super) fn run(
    workspace: &Workspace,
    sm_file: FileId,
    cassette_file: Option<FileId>,
    options: Options,
    focus: Option<Focus>,
) -> DryRun {
    // Every way the run ends names the stage it was asked about.
    let refused = |title: String, cassette: Option<FileId>, findings: Vec<Diagnostic>, why: &str| {
        DryRun::failed_to_start(workspace, Stages.name(), title, cassette, findings, why, focus.clone())
    };
    let sm_source = workspace.file(sm_file);
    let sm = SmDoc::parse(sm_source);
    let dir = sm.dir().to_path_buf();
    let title = format!("machine {}", dir.file_name().and_then(|n| n.to_str()).unwrap_or("."));
    let mut stage_files: Vec<FileId> = workspace
        .files()
        .iter()
        // The stages this machine owns: a nested state machine owns its own directory.
        .filter(|f| f.kind == FileKind::Stage && owning_machine(workspace, f) == Some(sm_file))
        .map(|f| f.id)
        .collect();
    stage_files.sort();
    let mut specs: BTreeMap<String, StageSpec> = BTreeMap::new();
    for &file in &stage_files {
        let mut spec = StageSpec::read(&StageDoc::parse(workspace.file(file)));
        spec.optional_ctx = sm.context().map(|c| c.optional).unwrap_or_default();
        specs.entry(spec.id.clone()).or_insert(spec);
    }
    // A machine whose file, entry or ids leave open what runs is not replayed: its lint errors
    // say why, as `check` reports them.
    let ambiguous = crate::families::sm::machine_errors(workspace, sm_file);
    if !ambiguous.is_empty() {
        let mut codes: Vec<&str> = ambiguous.iter().map(|d| d.code).collect();
        codes.sort_unstable();
        codes.dedup();
        let why = format!("the state machine has errors that leave open what runs: {}", codes.join(", "));
        return refused(title, cassette_file, ambiguous, &why);
    }
    let Some((entry, entry_span)) = sm.entry().map(|(e, s)| (e.to_string(), s)) else {
        // `machine_errors` reports a missing entry; this is a guard, never reached.
        return refused(title, cassette_file, Vec::new(), "no entry stage");
    };
    // The machine cassette, or the entry stage's own cassette, anchors findings and the ctx.
    let machine_cassette = cassette_file.map(|file| (file, read_cassette(workspace.file(file))));
    let mut per_stage: BTreeMap<String, (FileId, Cassette)> = BTreeMap::new();
    let mut problems = Vec::new();
    if let Some((_, (_, found))) = &machine_cassette {
        problems.extend(found.iter().cloned());
    }
    for spec in specs.values() {
        if machine_cassette.is_some() {
            continue;
        }
        if let Some(file) = cassette_in_workspace(workspace, workspace.file(spec.file), &spec.id) {
            let (cassette, found) = read_cassette(workspace.file(file));
            problems.extend(found);
            per_stage.insert(spec.id.clone(), (file, cassette));
        }
    }
    if problems.iter().any(|d| d.severity == crate::diagnostic::Severity::Error) {
        return refused(title, cassette_file, problems, UNUSABLE);
    }
    if let Some((file, (cassette, _))) = &machine_cassette
        && !cassette.is_machine()
    {
        return refused(
            title,
            cassette_file,
            vec![stage_cassette_for_machine(*file, cassette)],
            "a stage cassette replays one stage, not a state machine",
        );
    }
    let anchor_file = cassette_file.or_else(|| per_stage.get(&entry).map(|(f, _)| *f));
    let Some(anchor_file) = anchor_file else {
        let finding = Diagnostic::new(
            rules::UnknownStage,
            sm_file,
            entry_span,
            format!(
                "no cassette for the entry stage `{entry}`: add `{entry}.cassette.yaml` beside it or pass --cassette"
            ),
        );
        return refused(title, cassette_file, vec![finding], "no cassette for the entry stage");
    };
    let env = Env { cassette_file: anchor_file, strict: options.strict };
    let mut run = Run::new(env, &Json::Null);
    run.findings.extend(problems);
    let lookup = Lookup { machine: machine_cassette.as_ref().map(|(f, (c, _))| (*f, c)), per_stage: &per_stage };
    let initial =
        lookup.cassette(&entry, 1).and_then(|(_, c, _)| c.ctx.map(|(ctx, _)| ctx)).unwrap_or_else(|| json!({}));
    let mut machine = Machine {
        run,
        specs: &specs,
        lookup,
        executions: BTreeMap::new(),
        total: 0,
        init_failed: false,
        why: BTreeMap::new(),
        stopped: String::new(),
    };
    machine.run.trace.emit("MachineStart", json!({"entry": entry}));
    let Some((entry, _)) = specs.get_key_value(&entry) else {
        // `machine_errors` reports an entry that names no stage; a guard, never reached.
        return refused(title, Some(anchor_file), Vec::new(), "no entry stage");
    };
    machine.from(entry, initial);
    machine.never_ran(entry);
    let init_failed = machine.init_failed;
    let explain = options.explain_init.then_some(&stage_files[..]);
    let mut ending = ending_of(machine.run, init_failed);
    ending.focus = focus;
    finish_stages(workspace, ending, title, Some(anchor_file), explain)
}

/// A stage cassette was given where a machine cassette is needed: it records one stage, not
/// what a machine runs.
fn stage_cassette_for_machine(file: FileId, cassette: &Cassette) -> Diagnostic {
    let (span, named) = match &cassette.stage.stage {
        Some((id, span)) => (*span, format!("stage `{id}`")),
        None => (Span::empty(0), "one stage".to_string()),
    };
    let message = format!(
        "this is a stage cassette (it replays {named}), but a state machine is being run: a machine replays a machine cassette, whose `stages:` maps each stage id to its recording"
    );
    Diagnostic::new(rules::UnknownStage, file, span, message).with_help(
        "dry-run the stage alone (`stagelint dry-run <stage.md> --cassette …`), or move its `attempts` under `stages.<id>` in a machine cassette (`sm.cassette.yaml`)",
    )
}

struct Lookup<'c> {
    machine: Option<(FileId, &'c Cassette)>,
    per_stage: &'c BTreeMap<String, (FileId, Cassette)>,
}

impl<'c> Lookup<'c> {
    /// The stage's part of its cassette for its `execution`-th run, with the cassette's file
    /// and whole document.
    fn cassette(&self, id: &str, execution: u32) -> Option<(FileId, StageCassette, &'c Json)> {
        let (file, cassette) = self.file_of(id)?;
        cassette.for_stage(id, execution).map(|part| (file, part, &cassette.json))
    }

    /// Where the recording of `part`, the `execution`-th run of `id`, is: its `stages.<id>`
    /// entry (that execution, in a list of them), else the stage cassette's `stage:`.
    fn span_of(&self, id: &str, execution: u32, part: &StageCassette) -> Span {
        match self.file_of(id) {
            Some((_, cassette)) if cassette.is_machine() => match cassette.stages.iter().find(|e| e.id == id) {
                Some(entry) if entry.executions.len() > 1 => {
                    entry.executions.get(execution as usize - 1).map_or(part.span, |e| e.span)
                }
                Some(entry) => entry.span,
                None => part.span,
            },
            _ => part.stage.as_ref().map_or(part.span, |(_, span)| *span),
        }
    }

    fn file_of(&self, id: &str) -> Option<(FileId, &'c Cassette)> {
        match self.machine {
            Some((file, cassette)) => Some((file, cassette)),
            None => self.per_stage.get(id).map(|(file, c)| (*file, c)),
        }
    }
}

struct Machine<'a> {
    run: Run<'a>,
    specs: &'a BTreeMap<String, StageSpec>,
    lookup: Lookup<'a>,
    /// Executions so far, per stage id.
    executions: BTreeMap<String, u32>,
    total: u32,
    init_failed: bool,
    /// Why a stage never ran, when the machine knows (a cancelled sibling, a join whose
    /// precondition failed).
    why: BTreeMap<String, String>,
    /// How the machine stopped, for the stages it never reached.
    stopped: String,
}

/// A stage execution's result and where it was recorded.
struct Ran {
    result: StageResult,
    producer: Producer,
}

impl<'a> Machine<'a> {
    fn stop(&mut self, outcome: &str, detail: Json) {
        let mut event = json!({"outcome": outcome});
        self.stopped = match (detail.get("code").and_then(Json::as_str), detail.get("reason").and_then(Json::as_str)) {
            (Some(code), _) => format!("the machine {outcome} earlier ({code})"),
            (None, Some(reason)) => format!("the machine {outcome} earlier ({reason})"),
            _ => format!("the machine {outcome} without reaching it"),
        };
        if let (Some(map), Json::Object(extra)) = (event.as_object_mut(), detail) {
            map.extend(extra);
        }
        self.run.trace.emit("MachineFinished", event);
    }

    /// Runs `id` (the entry) and everything after it. The run continues from a stage whose
    /// own `next` is followed (`roles`): the entry, the last stage of a sequential list, a
    /// join; the owner of a list or fan-out runs its members and siblings.
    fn from(&mut self, id: &'a str, ctx: Json) {
        let specs = self.specs;
        let mut current: &'a str = id;
        let mut role = Role::Entry;
        let mut ctx = ctx;
        let mut producers: Vec<Producer> = Vec::new();
        loop {
            let Some(ran) = self.execute(current, ctx.clone(), role, producers) else { return };
            if ran.result.verdict == Verdict::Fail {
                self.stop("failed", json!({"code": "ExtensionHost/LifecycleFailure", "stage": current}));
                return;
            }
            let spec = &specs[current];
            let Some(next) = spec.next.as_ref() else {
                self.run.trace.emit("StageNext", json!({"stage": current, "next": null, "evaluated": true}));
                self.stop("completed", json!({"last": current}));
                return;
            };
            self.run.trace.emit("StageNext", json!({"stage": current, "next": next.to_json(), "evaluated": true}));
            let owner = current;
            if !next.parallel {
                // Sequential: each successor sees the one before it as `upstream[0]`; the run
                // continues from the last.
                let (last, rest) = next.stages.split_last().expect("not empty");
                let mut previous = ran;
                for stage in rest {
                    let member = Role::Member { owner, last: last.as_str() };
                    let upstream = with_upstream(&ctx, vec![previous.result.to_json()]);
                    let Some(r) = self.execute(stage, upstream, member, vec![previous.producer]) else { return };
                    if r.result.verdict == Verdict::Fail {
                        self.stop("failed", json!({"code": "ExtensionHost/LifecycleFailure", "stage": stage}));
                        return;
                    }
                    previous = r;
                }
                ctx = with_upstream(&ctx, vec![previous.result.to_json()]);
                producers = vec![previous.producer];
                current = last.as_str();
                role = Role::Successor { owner };
                continue;
            }
            if next.stages.len() < 2 {
                self.stop("failed", json!({"code": "ExtensionHost/InvalidParallelPlan", "stage": current}));
                return;
            }
            // One compound turn: siblings on a frozen snapshot, fail fast.
            let frozen = with_upstream(&ctx, Vec::new());
            self.run.trace.emit("ParallelStart", json!({"siblings": next.stages, "join": next.join}));
            let mut results: Vec<(&str, Ran)> = Vec::new();
            let sibling = Role::Sibling { owner, join: next.join.as_deref() };
            for (index, stage) in next.stages.iter().enumerate() {
                let Some(r) = self.execute(stage, frozen.clone(), sibling, Vec::new()) else { return };
                let failed = r.result.verdict == Verdict::Fail;
                results.push((stage, r));
                if failed {
                    for cancelled in &next.stages[index + 1..] {
                        self.run.trace.emit("StageCancelled", json!({"stage": cancelled, "reason": "siblingFailed"}));
                        self.why.insert(cancelled.clone(), format!("it was cancelled: sibling `{stage}` failed"));
                    }
                    if let Some(join) = &next.join {
                        let why = format!("sibling `{stage}` failed, so the join never ran");
                        self.why.insert(join.clone(), why);
                    }
                    self.stop(
                        "failed",
                        json!({"code": "ExtensionHost/ParallelSiblingFailure", "failedSiblingId": stage, "joinReady": false}),
                    );
                    return;
                }
            }
            let Some(join) = next.join.as_deref() else {
                self.stop("completed", json!({"last": next.stages}));
                return;
            };
            if let Some((sibling, r)) = results.iter().find(|(_, r)| r.result.verdict != Verdict::Ok) {
                let why = format!(
                    "its join precondition failed: sibling `{sibling}` ended `{}`, not `ok`",
                    r.result.verdict.as_str()
                );
                self.why.insert(join.to_string(), why);
                self.stop(
                    "failed",
                    json!({"code": "ExtensionHost/JoinPreconditionViolated", "stage": sibling, "verdict": r.result.verdict.as_str()}),
                );
                return;
            }
            ctx = with_upstream(&ctx, results.iter().map(|(_, r)| r.result.to_json()).collect());
            producers = results.into_iter().map(|(_, r)| r.producer).collect();
            current = join;
            role = Role::Join { owner };
        }
    }

    /// One stage execution in `role`, its `ctx.upstream` recorded by `producers`; `None` when
    /// the run must stop (no stage, nothing recorded for this execution, Init failed, cassette
    /// exhausted, too many executions). A stage whose own `next` this role never follows, or
    /// that failed, gets its `StageNext` here, not evaluated, saying why.
    fn execute(&mut self, id: &str, ctx: Json, role: Role, producers: Vec<Producer>) -> Option<Ran> {
        self.total += 1;
        if self.total > MAX_EXECUTIONS {
            self.execution_limit(role);
            self.stop(
                "stopped",
                json!({"reason": format!("more than {MAX_EXECUTIONS} stage executions: `next` loops")}),
            );
            return None;
        }
        let Some(spec) = self.specs.get(id) else {
            self.stop("failed", json!({"code": "UnknownStage", "stage": id}));
            return None;
        };
        let execution = self.executions.get(id).copied().unwrap_or(0) + 1;
        let Some((file, cassette, document)) = self.lookup.cassette(id, execution) else {
            self.exhausted(spec, execution);
            self.stop("stopped", json!({"reason": "cassette exhausted", "stage": id}));
            return None;
        };
        self.executions.insert(id.to_string(), execution);
        self.run.env.cassette_file = file;
        // `$ref` in `expectResult` points into the cassette this stage is replayed from.
        self.run.cassette_json = document;
        self.run.upstream_from = producers;
        let producer = Producer { stage: id.to_string(), file, span: self.lookup.span_of(id, execution, &cassette) };
        let ended = self.run.stage(spec, &cassette, ctx, execution);
        self.run.upstream_from = Vec::new();
        match ended {
            Ended::Exited(result) => {
                let ignored = if result.verdict == Verdict::Fail {
                    Some(format!("`{id}` failed"))
                } else {
                    role.why_next_ignored(id)
                };
                if let Some(reason) = ignored {
                    // What the stage declares (`null`: nothing), shown but not followed.
                    let next = spec.next.as_ref().map_or(Json::Null, |n| n.to_json());
                    self.run
                        .trace
                        .emit("StageNext", json!({"stage": id, "next": next, "evaluated": false, "reason": reason}));
                }
                Some(Ran { result, producer })
            }
            Ended::InitFailed => {
                self.init_failed = true;
                self.stop("failed", json!({"code": "StageInitFailed", "stage": id}));
                None
            }
            Ended::Aborted => {
                self.stop("stopped", json!({"reason": "cassette exhausted", "stage": id}));
                None
            }
        }
    }

    /// The bound on stage executions is hit: a finding on the `next` that leads around again,
    /// with the stages that ran more than once (the cycle).
    fn execution_limit(&mut self, role: Role) {
        let owner = match role {
            Role::Entry => None,
            Role::Successor { owner }
            | Role::Member { owner, .. }
            | Role::Sibling { owner, .. }
            | Role::Join { owner } => Some(owner),
        };
        let looping: Vec<(&String, &u32)> = self.executions.iter().filter(|(_, n)| **n > 1).collect();
        let counts: Vec<String> = looping.iter().map(|(id, n)| format!("`{id}` {n} times")).collect();
        let (file, span, message) = match owner.and_then(|o| self.specs.get(o)) {
            Some(spec) => (
                spec.file,
                spec.next_key.unwrap_or(spec.anchor),
                format!(
                    "the dry-run stops after {MAX_EXECUTIONS} stage executions: the `next` of `{}` leads around the cycle again ({})",
                    spec.id,
                    counts.join(", ")
                ),
            ),
            None => (
                self.run.env.cassette_file,
                Span::empty(0),
                format!("the dry-run stops after {MAX_EXECUTIONS} stage executions ({})", counts.join(", ")),
            ),
        };
        let mut finding = Diagnostic::new(rules::ExecutionLimit, file, span, message).with_help(
            "a dry-run replays at most 64 stage executions: end the cycle sooner in the cassette (a stage whose Assert fails, or fewer recorded executions), or check that this `next` can leave the cycle",
        );
        for (id, n) in looping {
            if let Some(spec) = self.specs.get(id.as_str()) {
                finding = finding.with_related(spec.file, spec.anchor, format!("`{id}` ran {n} times in the cycle"));
            }
        }
        self.run.findings.push(finding);
    }

    /// The machine needs an execution of `spec` that the cassette does not record: never
    /// replay an earlier one again (lesson 1 of the spec: fail loudly, never wrap around).
    fn exhausted(&mut self, spec: &StageSpec, execution: u32) {
        let ordinal = ordinal(execution);
        let (file, span, message) = match self.lookup.file_of(&spec.id) {
            Some((file, cassette)) if cassette.is_machine() => match cassette.stages.iter().find(|e| e.id == spec.id) {
                Some(entry) => (
                    file,
                    entry.span,
                    format!(
                        "stage `{}` runs a {ordinal} time, but `stages.{}` records {} execution(s); list one entry per execution, or fix the `next` cycle",
                        spec.id,
                        spec.id,
                        entry.executions.len()
                    ),
                ),
                None => (
                    file,
                    cassette.stages_key.unwrap_or_default(),
                    format!(
                        "the machine runs stage `{}`, but the cassette has no `stages.{}` entry; add one under `stages:`",
                        spec.id, spec.id
                    ),
                ),
            },
            Some((file, cassette)) => (
                file,
                cassette.stage.stage.as_ref().map_or(Span::empty(0), |(_, s)| *s),
                format!(
                    "stage `{}` runs a {ordinal} time, but its cassette records one execution; use a machine cassette with one `stages.{}` entry per execution",
                    spec.id, spec.id
                ),
            ),
            None => (
                spec.file,
                spec.anchor,
                format!(
                    "the machine runs stage `{}`, but it has no cassette: add `{}.cassette.yaml` beside it",
                    spec.id, spec.id
                ),
            ),
        };
        self.run.findings.push(Diagnostic::new(rules::CassetteExhausted, file, span, message));
    }

    /// A machine cassette's recorded executions that never ran: a failed expectation when
    /// they expect something (the expectation was never checked), else unused material.
    fn never_ran(&mut self, start: &str) {
        let Some((file, cassette)) = self.lookup.machine else { return };
        let reachable = reachable(self.specs, start);
        for entry in &cassette.stages {
            let ran = self.executions.get(&entry.id).copied().unwrap_or(0) as usize;
            for (index, part) in entry.executions.iter().enumerate().skip(ran) {
                // A machine that ended early explains every stage it did not reach, reachable
                // or not: one reason per run, not two.
                let ended_early = !self.stopped.is_empty() && !self.stopped.starts_with("the machine completed");
                let why = if !self.specs.contains_key(&entry.id) {
                    "no stage of this machine has this id".to_string()
                } else if ran == 0 && ended_early {
                    self.why.get(&entry.id).cloned().unwrap_or_else(|| self.stopped.clone())
                } else if !reachable.contains(entry.id.as_str()) {
                    format!("no `next` the runtime follows leads to it from the entry stage `{start}`")
                } else if ran > 0 {
                    format!("the stage ran only {ran} time(s)")
                } else {
                    self.why.get(&entry.id).cloned().unwrap_or_else(|| self.stopped.clone())
                };
                let which = if entry.executions.len() > 1 {
                    format!("execution {} of stage `{}`", index + 1, entry.id)
                } else {
                    format!("stage `{}`", entry.id)
                };
                let span = if entry.executions.len() > 1 { part.span } else { entry.span };
                let listed = crate::runtime::stages::lifecycle::all_expectations(part);
                let expectations = listed.len();
                let finding = if expectations > 0 {
                    // Its outcomes are about that stage, as its events would have been.
                    self.run.trace.scope = Some(entry.id.clone());
                    self.run.unchecked(&listed, &format!("{which} never ran: {why}"));
                    self.run.trace.scope = None;
                    let message =
                        format!("{which} never ran, so its {expectations} expectation(s) were never checked: {why}");
                    Diagnostic::new(rules::ExpectationFailed, file, span, message)
                } else {
                    let message = format!("{which} never ran, so its recording is unused: {why}");
                    Diagnostic::new(rules::CassetteUnconsumed, file, span, message)
                };
                self.run.findings.push(finding);
            }
        }
    }
}

/// The stages the run can reach from `start`, as it follows `next` (`roles`).
fn reachable<'s>(specs: &'s BTreeMap<String, StageSpec>, start: &'s str) -> std::collections::BTreeSet<&'s str> {
    let found = roles::roles(start, |id| {
        let next = specs.get(id)?.next.as_ref()?;
        Some(roles::Plan {
            stages: next.stages.iter().map(String::as_str).collect(),
            parallel: next.parallel,
            join: next.join.as_deref(),
        })
    });
    found.into_keys().collect()
}

fn ordinal(n: u32) -> String {
    match n {
        1 => "first".into(),
        2 => "second".into(),
        3 => "third".into(),
        n => format!("{n}th"),
    }
}

/// `ctx` with `upstream` replaced.
fn with_upstream(ctx: &Json, upstream: Vec<Json>) -> Json {
    let mut next = ctx.clone();
    if let Some(map) = next.as_object_mut() {
        map.insert("upstream".into(), Json::Array(upstream));
        // Ids are per stage execution; the next stage gets its own.
        map.remove("stageExecutionId");
    }
    next
}
