//! The stage engine: stud-cli's stage lifecycle (Setup → Init → CheckGate → Act → Assert →
//! Exit → Next), for one stage or a whole state machine, against a stage or machine cassette.
//!
//! It reads definitions from the [`Workspace`] (already in memory) and answers every tool
//! from the cassette: no network, no shell, no file system.

mod coverage;
mod ide;
pub mod import;
mod lens;
mod lifecycle;
mod lint;
mod machine;
pub mod messages;
pub(crate) mod owners;
pub mod recording;
pub(crate) mod stage;
mod target;
mod timeline;
pub mod turns;

use std::path::PathBuf;

use serde_json::json;

use crate::cassette::Cassette;
use crate::diagnostic::{Diagnostic, FileId, Severity};
use crate::families::sm::model::StageDoc;
use crate::runtime::engine::{Engine, Lens, Request, Timeline};
use crate::runtime::read::is_json;
use crate::runtime::run::{DryRun, Ending, Focus, Options, UNUSABLE, finish};
use crate::runtime::stages::lifecycle::{Env, Run};
use crate::runtime::stages::stage::StageSpec;
use crate::workspace::{FileKind, SourceFile, Workspace};

/// Machine cassette names, beside `sm.yaml`.
pub const MACHINE_CASSETTES: [&str; 3] = ["sm.cassette.yaml", "sm.cassette.yml", "sm.cassette.json"];

/// The stage engine.
pub struct Stages;

impl Engine for Stages {
    fn name(&self) -> &'static str {
        "stages"
    }

    fn subject_keys(&self) -> &'static [&'static str] {
        &["stage", "stages", "attempts"]
    }

    fn dry_run_path(
        &self,
        path: &std::path::Path,
        cassette: Option<&std::path::Path>,
        request: &mut Request<'_>,
    ) -> Option<Result<(Workspace, DryRun), String>> {
        Some(target::dry_run_path(path, cassette, request))
    }

    fn lint(&self, workspace: &Workspace, file: &SourceFile, replays: bool, out: &mut Vec<Diagnostic>) {
        lint::check(workspace, file, replays, out);
    }

    fn replay(&self, workspace: &Workspace, file: &SourceFile, options: Options) -> Result<DryRun, Vec<Diagnostic>> {
        let (cassette, found) = read_cassette(file);
        if found.iter().any(|d| d.severity == Severity::Error) {
            return Err(found);
        }
        lint::replay_read(workspace, file, &cassette, options)
    }

    fn replay_codes(&self) -> &'static [&'static str] {
        &lint::REPLAY
    }

    fn lenses(&self, workspace: &Workspace, file: &SourceFile) -> Vec<Lens> {
        lens::lenses(workspace, file)
    }

    fn conventional_cassette(&self, workspace: &Workspace, file: &SourceFile) -> Option<FileId> {
        lens::conventional(workspace, file)
    }

    fn timeline(&self) -> Box<dyn Timeline> {
        Box::new(timeline::StageLines::default())
    }

    fn editor(&self) -> &'static crate::editor::Hooks {
        &ide::EDITOR
    }

    fn coverage(&self, workspace: &Workspace, runs: &[&DryRun]) -> Option<Vec<crate::runtime::coverage::Part>> {
        Some(coverage::coverage(workspace, runs))
    }
}

/// Where a stage's cassette may be, by convention, in order: `<id>.cassette.{yaml,yml,json}`
/// beside the stage, then in each `[dry-run] cassettes` directory.
fn cassette_candidates<'a>(stage: &'a SourceFile, id: &'a str) -> impl Iterator<Item = PathBuf> + 'a {
    let own = stage.path.parent().map(std::path::Path::to_path_buf);
    own.into_iter()
        .chain(stage.config.cassette_dirs.iter().cloned())
        .flat_map(move |dir| ["yaml", "yml", "json"].map(|ext| dir.join(format!("{id}.cassette.{ext}"))))
}

/// The stage's cassette on disk (the CLI, before anything is read).
pub fn cassette_path_for(stage: &SourceFile, id: &str) -> Option<PathBuf> {
    cassette_candidates(stage, id).find(|path| path.is_file())
}

/// The same lookup among the files already in `workspace` (rules and the editor: no file system).
pub fn cassette_in_workspace(workspace: &Workspace, stage: &SourceFile, id: &str) -> Option<FileId> {
    cassette_candidates(stage, id).find_map(|path| workspace.file_at(&path).map(|f| f.id))
}

/// Reads the cassette `file`: the typed model and every structural finding (the one reading
/// path of `check`, the dry-run and the editor).
pub fn read_cassette(file: &SourceFile) -> (Cassette, Vec<Diagnostic>) {
    if let FileKind::Unreadable { message, offset } = &file.kind {
        let finding = Diagnostic::new(
            crate::families::stagelint::IoError,
            file.id,
            crate::source::Span::empty(*offset),
            message.clone(),
        );
        return (Cassette::default(), vec![finding]);
    }
    let (cassette, errors) = crate::cassette::read(&file.text, is_json(file));
    let mut findings: Vec<Diagnostic> = errors
        .into_iter()
        .map(|error| Diagnostic::new(crate::registry::cassette::MalformedTurn, file.id, error.span, error.message))
        .collect();
    findings.extend(lint::problems(file, &cassette));
    (cassette, findings)
}

/// Dry-runs the stage in `stage_file` against the cassette in `cassette_file`.
pub fn stage(workspace: &Workspace, stage_file: FileId, cassette_file: FileId, options: Options) -> DryRun {
    let (cassette, problems) = read_cassette(workspace.file(cassette_file));
    stage_with(workspace, stage_file, cassette_file, &cassette, problems, options)
}

/// [`stage`] with the cassette already read (`problems`: what reading it found).
pub fn stage_with(
    workspace: &Workspace,
    stage_file: FileId,
    cassette_file: FileId,
    cassette: &Cassette,
    problems: Vec<Diagnostic>,
    options: Options,
) -> DryRun {
    let file = workspace.file(stage_file);
    let doc = StageDoc::parse(file);
    let title = format!("stage {}", doc.stage_id().map_or_else(|| file.display.clone(), |(id, _)| id.to_string()));
    if let Some(refused) = refuse_duplicate(workspace, stage_file, Some(cassette_file)) {
        return refused;
    }
    if problems.iter().any(|d| d.severity == Severity::Error) {
        return refused(workspace, title, Some(cassette_file), problems, UNUSABLE);
    }
    if cassette.is_machine() {
        let finding = machine_cassette_for_stage(workspace.file(cassette_file), cassette);
        let why = "a machine cassette replays a whole state machine, not one stage";
        return refused(workspace, title, Some(cassette_file), vec![finding], why);
    }
    let mut spec = StageSpec::read(&doc);
    spec.optional_ctx = optional_ctx(workspace, file);
    // A stage cassette replays the stage it is run against even when the stage has no valid
    // id: Setup then says why the definition fails.
    let unnamed = doc.stage_id().is_none() && !cassette.is_machine();
    let found = cassette.for_stage(&spec.id, 1).or_else(|| unnamed.then(|| cassette.stage.clone()));
    let Some(stage_cassette) = found else {
        let mut findings = problems;
        findings.push(unknown_stage(workspace, cassette_file, cassette, &spec.id));
        let why = "the cassette replays another stage";
        return refused(workspace, title, Some(cassette_file), findings, why);
    };
    let mut run = new_run(cassette_file, cassette, options);
    run.findings.extend(problems);
    let ctx = stage_cassette.ctx.clone().map_or_else(|| json!({}), |(ctx, _)| ctx);
    let ended = run.stage(&spec, &stage_cassette, ctx, 1);
    if let lifecycle::Ended::Exited(_) = &ended {
        // No next (none declared, or empty `nextStages`) is `null`, in every `StageNext`.
        let next = spec.next.as_ref().map_or(serde_json::Value::Null, stage::Next::to_json);
        run.trace.emit("StageNext", json!({"stage": spec.id, "next": next, "evaluated": false}));
    }
    let stages = [stage_file];
    let explain = options.explain_init.then_some(&stages[..]);
    let ending = ending_of(run, matches!(ended, lifecycle::Ended::InitFailed));
    finish_stages(workspace, ending, title, Some(cassette_file), explain)
}

/// The ctx fields the state machine owning `stage` declares `optional`.
pub(crate) fn optional_ctx(workspace: &Workspace, stage: &SourceFile) -> Vec<String> {
    let Some(sm) = owners::owning_machine(workspace, stage) else { return Vec::new() };
    let sm = crate::families::sm::model::SmDoc::parse(workspace.file(sm));
    sm.context().map(|c| c.optional).unwrap_or_default()
}

/// The refusal to replay a stage whose id another stage of its machine uses (`None`: the id is
/// its own). The CLI asks before looking for a cassette: which cassette is the stage's is
/// ambiguous too.
pub fn refuse_duplicate(workspace: &Workspace, stage_file: FileId, cassette: Option<FileId>) -> Option<DryRun> {
    let duplicated = duplicate_id(workspace, stage_file);
    if duplicated.is_empty() {
        return None;
    }
    let file = workspace.file(stage_file);
    let doc = StageDoc::parse(file);
    let title = format!("stage {}", doc.stage_id().map_or_else(|| file.display.clone(), |(id, _)| id.to_string()));
    let why = "the stage's id is used by another stage of its state machine, so which stage runs is ambiguous";
    Some(refused(workspace, title, cassette, duplicated, why))
}

/// `sm/DuplicateStageId` findings about the stage in `stage_file` (its id is used by another
/// stage of its state machine): which stage a cassette or a `next` means is then ambiguous,
/// so the stage is not replayed, by the dry-run or by `check`.
fn duplicate_id(workspace: &Workspace, stage_file: FileId) -> Vec<Diagnostic> {
    let file = workspace.file(stage_file);
    let Some(sm) = owners::owning_machine(workspace, file) else { return Vec::new() };
    // Cheap first: the machine's rules run only when another stage in scope has this id.
    let id = StageDoc::parse(file).stage_id().map(|(id, _)| id.to_string());
    let same = owners::stages_in_scope(workspace, file).iter().filter(|(other, _)| Some(other) == id.as_ref()).count();
    if same < 2 {
        return Vec::new();
    }
    crate::families::sm::machine_errors(workspace, sm)
        .into_iter()
        .filter(|d| d.code == crate::families::sm::DuplicateStageId)
        // Every stage sharing the id has its own finding; this stage's names the others.
        .filter(|d| d.file == stage_file)
        .collect()
}

/// Dry-runs the state machine of `sm_file` from its entry stage. `cassette_file` is a machine
/// cassette; without one, each stage's cassette is found by convention.
pub fn machine(workspace: &Workspace, sm_file: FileId, cassette_file: Option<FileId>, options: Options) -> DryRun {
    machine::run(workspace, sm_file, cassette_file, options, None)
}

/// [`machine`], asked about stage `stage` (a stage of the machine that has no stage cassette of
/// its own, or was given a machine cassette): the whole machine runs, and the timeline marks
/// the lines of that stage's executions.
pub fn machine_for_stage(
    workspace: &Workspace,
    sm_file: FileId,
    cassette_file: FileId,
    stage: &str,
    options: Options,
) -> DryRun {
    let focus = Focus { key: "stage", id: stage.to_string() };
    machine::run(workspace, sm_file, Some(cassette_file), options, Some(focus))
}

fn new_run(cassette_file: FileId, cassette: &Cassette, options: Options) -> Run<'_> {
    let env = Env { cassette_file, strict: options.strict };
    Run::new(env, &cassette.json)
}

fn unknown_stage(workspace: &Workspace, file: FileId, cassette: &Cassette, id: &str) -> Diagnostic {
    let source = workspace.file(file);
    let (span, named) = match &cassette.stage.stage {
        Some((name, span)) => (*span, format!("`{name}`")),
        None => (crate::source::Span::empty(0), "no stage".to_string()),
    };
    let message = format!("this cassette replays {named}, not stage `{id}`");
    Diagnostic::new(crate::registry::cassette::UnknownStage, source.id, span, message)
}

/// A machine cassette was given where a stage cassette is needed: it records what a whole
/// machine runs, from its entry stage.
fn machine_cassette_for_stage(file: &SourceFile, cassette: &Cassette) -> Diagnostic {
    let span = cassette.stages_key.unwrap_or_default();
    let message = "this is a machine cassette (`stages:`), but a single stage is being run: a machine cassette replays a whole state machine from its entry stage";
    Diagnostic::new(crate::registry::cassette::UnknownStage, file.id, span, message).with_help(
        "dry-run the state machine (`stagelint dry-run <sm-dir>`), or give the stage a stage cassette (`<id>.cassette.yaml` with `stage: <id>` and `attempts:`)",
    )
}

/// A stage run that could not start: see [`DryRun::failed_to_start`].
fn refused(
    workspace: &Workspace,
    title: String,
    cassette: Option<FileId>,
    findings: Vec<Diagnostic>,
    why: &str,
) -> DryRun {
    DryRun::failed_to_start(workspace, Stages.name(), title, cassette, findings, why, None)
}

/// What a stage run left to report.
fn ending_of(run: Run, authoring_error: bool) -> Ending {
    Ending {
        trace: run.trace,
        findings: run.findings,
        passed: run.passed,
        failed: run.failed,
        unchecked: run.unchecked,
        authoring_error,
        focus: None,
    }
}

/// Ends a stage run: adds the lint errors that explain a failed Init (when `explain` lists the
/// stages), then the core's ending.
fn finish_stages(
    workspace: &Workspace,
    mut ending: Ending,
    title: String,
    cassette: Option<FileId>,
    explain: Option<&[FileId]>,
) -> DryRun {
    if ending.authoring_error
        && let Some(stages) = explain
    {
        ending.findings.extend(lint_errors(workspace, stages));
    }
    finish(workspace, Stages.name(), ending, title, cassette, None)
}

/// The reasons `stages` fail Setup or Init: the definition contract the runtime enforces
/// (`sm::init_errors`), the same findings `check` reports for them as errors.
fn lint_errors(workspace: &Workspace, stages: &[FileId]) -> Vec<Diagnostic> {
    stages
        .iter()
        .map(|id| workspace.file(*id))
        .filter(|file| file.kind == FileKind::Stage)
        .flat_map(|file| crate::families::sm::init_errors(&crate::families::sm::model::StageDoc::parse(file)))
        .collect()
}
