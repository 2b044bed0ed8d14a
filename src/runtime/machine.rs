//! A whole state machine: the entry stage, then what each stage's `next` chooses.
//! Sequential successors get `ctx.upstream = [result]`; parallel siblings run on a frozen
//! context (with an empty `upstream`), fail fast, and the join runs only when every sibling's
//! Assert said `ok`, with the siblings' results as `ctx.upstream` in `nextStages` order.

use std::collections::BTreeMap;

use serde_json::{Value as Json, json};

use crate::diagnostic::{Diagnostic, FileId};
use crate::families::sm::model::{SmDoc, StageDoc};
use crate::runtime::cassette::{Cassette, StageCassette, Verdict};
use crate::runtime::engine::{Ended, Env, Run, StageResult};
use crate::runtime::stage::StageSpec;
use crate::runtime::{DryRun, Options, cassette_in_workspace, read_cassette};
use crate::source::Span;
use crate::workspace::{FileKind, Workspace};

/// A bound on stage executions, so a `next` cycle ends.
const MAX_EXECUTIONS: u32 = 64;

pub(super) fn run(workspace: &Workspace, sm_file: FileId, cassette_file: Option<FileId>, options: Options) -> DryRun {
    let sm_source = workspace.file(sm_file);
    let sm = SmDoc::parse(sm_source);
    let dir = sm.dir().to_path_buf();
    let title = format!("machine {}", dir.file_name().and_then(|n| n.to_str()).unwrap_or("."));
    let stage_files: Vec<FileId> = workspace
        .files()
        .iter()
        .filter(|f| f.kind == FileKind::Stage && f.path.starts_with(&dir))
        .map(|f| f.id)
        .collect();
    let mut specs: BTreeMap<String, StageSpec> = BTreeMap::new();
    let mut unusable = Vec::new();
    for &file in &stage_files {
        let doc = StageDoc::parse(workspace.file(file));
        match StageSpec::read(&doc) {
            Ok(spec) => {
                specs.entry(spec.id.clone()).or_insert(spec);
            }
            Err(problem) => unusable.push(Diagnostic::new(
                crate::families::cassette::StageInitFailed,
                file,
                problem.span,
                problem.message,
            )),
        }
    }
    let Some((entry, entry_span)) = sm.entry().map(|(e, s)| (e.to_string(), s)) else {
        let finding = Diagnostic::new(
            crate::families::cassette::StageInitFailed,
            sm_file,
            Span::empty(0),
            "the state machine has no `entry:` stage to start from",
        );
        return DryRun::failed_to_start(title, cassette_file, vec![finding]);
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
        return DryRun::failed_to_start(title, cassette_file, problems);
    }
    let anchor_file = cassette_file.or_else(|| per_stage.get(&entry).map(|(f, _)| *f));
    let Some(anchor_file) = anchor_file else {
        let finding = Diagnostic::new(
            crate::families::cassette::UnknownStage,
            sm_file,
            entry_span,
            format!(
                "no cassette for the entry stage `{entry}`: add `{entry}.cassette.yaml` beside it or pass --cassette"
            ),
        );
        return DryRun::failed_to_start(title, cassette_file, vec![finding]);
    };
    let Some(entry_spec) = specs.get(&entry) else {
        let mut findings = unusable;
        findings.push(Diagnostic::new(
            crate::families::cassette::StageInitFailed,
            sm_file,
            entry_span,
            format!("the entry stage `{entry}` is not a usable stage of this machine"),
        ));
        return DryRun::failed_to_start(title, cassette_file, findings);
    };
    let config = &workspace.file(entry_spec.file).config;
    let env = Env { tools: &config.tools, dialect: config.dialect, cassette_file: anchor_file, strict: options.strict };
    let mut run = Run::new(env, &Json::Null);
    run.findings.extend(problems);
    let lookup = Lookup { machine: machine_cassette.as_ref().map(|(f, (c, _))| (*f, c)), per_stage: &per_stage };
    let initial = lookup.cassette(&entry).and_then(|(_, c, _)| c.ctx.map(|(ctx, _)| ctx)).unwrap_or_else(|| json!({}));
    let mut machine = Machine { run, specs: &specs, lookup, executions: BTreeMap::new(), total: 0, init_failed: false };
    machine.trace_start(&entry);
    machine.from(&entry, initial);
    let init_failed = machine.init_failed;
    let mut run = machine.run;
    let mut stage_ids = stage_files.clone();
    stage_ids.sort();
    if init_failed {
        run.findings.extend(unusable);
    }
    let explain = options.explain_init.then_some(&stage_ids[..]);
    super::finish(workspace, run, title, anchor_file, init_failed, explain)
}

struct Lookup<'c> {
    machine: Option<(FileId, &'c Cassette)>,
    per_stage: &'c BTreeMap<String, (FileId, Cassette)>,
}

impl<'c> Lookup<'c> {
    /// The stage's part of its cassette, with the cassette's file and whole document.
    fn cassette(&self, id: &str) -> Option<(FileId, StageCassette, &'c Json)> {
        let (file, cassette) = match self.machine {
            Some((file, cassette)) => (file, cassette),
            None => self.per_stage.get(id).map(|(file, c)| (*file, c))?,
        };
        cassette.for_stage(id).map(|part| (file, part, &cassette.json))
    }
}

struct Machine<'a> {
    run: Run<'a>,
    specs: &'a BTreeMap<String, StageSpec>,
    lookup: Lookup<'a>,
    executions: BTreeMap<String, u32>,
    total: u32,
    init_failed: bool,
}

impl Machine<'_> {
    fn trace_start(&mut self, entry: &str) {
        self.run.trace.emit("MachineStart", json!({"entry": entry}));
    }

    fn stop(&mut self, outcome: &str, detail: Json) {
        let mut event = json!({"outcome": outcome});
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

    /// One stage execution; `None` when the run must stop (no stage, no cassette, Init
    /// failed, cassette exhausted, too many executions).
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
        let Some((file, cassette, document)) = self.lookup.cassette(id) else {
            self.stop("stopped", json!({"reason": format!("no cassette for stage `{id}`"), "stage": id}));
            return None;
        };
        let count = self.executions.entry(id.to_string()).or_insert(0);
        *count += 1;
        let execution = *count;
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
