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

use crate::diagnostic::{Diagnostic, FileId};
use crate::families::cassette as rules;
use crate::families::sm::model::{SmDoc, StageDoc};
use crate::runtime::cassette::{Cassette, StageCassette, Verdict};
use crate::runtime::engine::{Ended, Env, Run, StageResult};
use crate::runtime::stage::StageSpec;
use crate::runtime::{DryRun, Ending, Options, cassette_in_workspace, read_cassette};
use crate::source::Span;
use crate::workspace::{FileKind, Workspace};

/// A bound on stage executions, so a `next` cycle ends even with a long recording.
const MAX_EXECUTIONS: u32 = 64;

pub(super) fn run(workspace: &Workspace, sm_file: FileId, cassette_file: Option<FileId>, options: Options) -> DryRun {
    let sm_source = workspace.file(sm_file);
    let sm = SmDoc::parse(sm_source);
    let dir = sm.dir().to_path_buf();
    let title = format!("machine {}", dir.file_name().and_then(|n| n.to_str()).unwrap_or("."));
    let mut stage_files: Vec<FileId> = workspace
        .files()
        .iter()
        .filter(|f| f.kind == FileKind::Stage && f.path.starts_with(&dir))
        .map(|f| f.id)
        .collect();
    stage_files.sort();
    let mut specs: BTreeMap<String, StageSpec> = BTreeMap::new();
    for &file in &stage_files {
        let spec = StageSpec::read(&StageDoc::parse(workspace.file(file)));
        specs.entry(spec.id.clone()).or_insert(spec);
    }
    let Some((entry, entry_span)) = sm.entry().map(|(e, s)| (e.to_string(), s)) else {
        let finding = Diagnostic::new(
            rules::StageInitFailed,
            sm_file,
            Span::empty(0),
            "the state machine has no `entry:` stage to start from",
        );
        return DryRun::failed_to_start(workspace, title, cassette_file, vec![finding]);
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
        return DryRun::failed_to_start(workspace, title, cassette_file, problems);
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
        return DryRun::failed_to_start(workspace, title, cassette_file, vec![finding]);
    };
    if !specs.contains_key(&entry) {
        let finding = Diagnostic::new(
            rules::StageInitFailed,
            sm_file,
            entry_span,
            format!("the entry stage `{entry}` is not a stage of this machine"),
        );
        return DryRun::failed_to_start(workspace, title, Some(anchor_file), vec![finding]);
    }
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
    machine.from(&entry, initial);
    machine.never_ran(&entry);
    let init_failed = machine.init_failed;
    let explain = options.explain_init.then_some(&stage_files[..]);
    super::finish(workspace, Ending::of(machine.run, init_failed), title, Some(anchor_file), explain)
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

impl Machine<'_> {
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

    /// Runs `id` and everything after it.
    fn from(&mut self, id: &str, ctx: Json) {
        let mut current = id.to_string();
        let mut ctx = ctx;
        loop {
            let Some(result) = self.execute(&current, ctx.clone()) else { return };
            if result.verdict == Verdict::Fail {
                self.stop("failed", json!({"code": "ExtensionHost/LifecycleFailure", "stage": current}));
                return;
            }
            let spec = &self.specs[&current];
            let Some(next) = spec.next.clone().filter(|n| !n.stages.is_empty()) else {
                self.run
                    .trace
                    .emit("StageNext", json!({"stage": current, "next": {"terminate": true}, "evaluated": true}));
                self.stop("completed", json!({"last": current}));
                return;
            };
            self.run.trace.emit("StageNext", json!({"stage": current, "next": next.to_json(), "evaluated": true}));
            if !next.parallel {
                // Sequential: each successor sees the one before it as `upstream[0]`.
                let mut upstream = result;
                let (last, rest) = next.stages.split_last().expect("not empty");
                for stage in rest {
                    let Some(r) = self.execute(stage, with_upstream(&ctx, vec![upstream.to_json()])) else { return };
                    if r.verdict == Verdict::Fail {
                        self.stop("failed", json!({"code": "ExtensionHost/LifecycleFailure", "stage": stage}));
                        return;
                    }
                    upstream = r;
                }
                ctx = with_upstream(&ctx, vec![upstream.to_json()]);
                current = last.clone();
                continue;
            }
            if next.stages.len() < 2 {
                self.stop("failed", json!({"code": "ExtensionHost/InvalidParallelPlan", "stage": current}));
                return;
            }
            // One compound turn: siblings on a frozen snapshot, fail fast.
            let frozen = with_upstream(&ctx, Vec::new());
            self.run.trace.emit("ParallelStart", json!({"siblings": next.stages, "join": next.join}));
            let mut results = Vec::new();
            for (index, sibling) in next.stages.iter().enumerate() {
                let Some(r) = self.execute(sibling, frozen.clone()) else { return };
                let failed = r.verdict == Verdict::Fail;
                results.push((sibling.clone(), r));
                if failed {
                    for cancelled in &next.stages[index + 1..] {
                        self.run.trace.emit("StageCancelled", json!({"stage": cancelled, "reason": "siblingFailed"}));
                        self.why.insert(cancelled.clone(), format!("it was cancelled: sibling `{sibling}` failed"));
                    }
                    if let Some(join) = &next.join {
                        let why = format!("sibling `{sibling}` failed, so the join never ran");
                        self.why.insert(join.clone(), why);
                    }
                    self.stop(
                        "failed",
                        json!({"code": "ExtensionHost/ParallelSiblingFailure", "failedSiblingId": sibling, "joinReady": false}),
                    );
                    return;
                }
            }
            let Some(join) = next.join.clone() else {
                self.stop("completed", json!({"last": next.stages}));
                return;
            };
            if let Some((sibling, r)) = results.iter().find(|(_, r)| r.verdict != Verdict::Ok) {
                let why = format!(
                    "its join precondition failed: sibling `{sibling}` ended `{}`, not `ok`",
                    r.verdict.as_str()
                );
                self.why.insert(join.clone(), why);
                self.stop(
                    "failed",
                    json!({"code": "ExtensionHost/JoinPreconditionViolated", "stage": sibling, "verdict": r.verdict.as_str()}),
                );
                return;
            }
            ctx = with_upstream(&ctx, results.iter().map(|(_, r)| r.to_json()).collect());
            current = join;
        }
    }

    /// One stage execution; `None` when the run must stop (no stage, nothing recorded for
    /// this execution, Init failed, cassette exhausted, too many executions).
    fn execute(&mut self, id: &str, ctx: Json) -> Option<StageResult> {
        self.total += 1;
        if self.total > MAX_EXECUTIONS {
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
        match self.run.stage(spec, &cassette, ctx, execution) {
            Ended::Exited(result) => Some(result),
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
                    Span::empty(0),
                    format!("the machine runs stage `{}`, but the cassette has no `stages.{}` entry", spec.id, spec.id),
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
                let why = if !self.specs.contains_key(&entry.id) {
                    "no stage of this machine has this id".to_string()
                } else if !reachable.contains(entry.id.as_str()) {
                    format!("no `next` leads to it from the entry stage `{start}`")
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
                let expectations = part.expectation_count();
                let finding = if expectations > 0 {
                    self.run.failed += expectations;
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

/// The stages `next` can reach from `start` (successors and joins), `start` included.
fn reachable<'s>(specs: &'s BTreeMap<String, StageSpec>, start: &'s str) -> std::collections::BTreeSet<&'s str> {
    let mut seen = std::collections::BTreeSet::new();
    let mut pending = vec![start];
    while let Some(id) = pending.pop() {
        if !seen.insert(id) {
            continue;
        }
        if let Some(next) = specs.get(id).and_then(|spec| spec.next.as_ref()) {
            pending.extend(next.stages.iter().chain(&next.join).map(String::as_str));
        }
    }
    seen
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
