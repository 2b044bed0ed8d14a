//! The embedded runtime: the state-machine stage lifecycle, run against a recorded provider
//! (a cassette) for `stagelint dry-run`, the editor's code lens and `cassette/` findings.
//!
//! It reads definitions from the [`Workspace`] (already in memory) and answers every tool
//! from the cassette: no network, no shell, no file system.

pub(crate) mod engine;
pub(crate) mod events;
pub mod import;
pub(crate) mod lint;
mod machine;
pub mod messages;
pub(crate) mod owners;
#[cfg(feature = "record")]
pub mod record;
pub mod recording;
pub mod report;
pub(crate) mod stage;
mod target;

pub use target::MACHINE_CASSETTES;
pub mod turns;
pub mod wire;

// The cassette format sits below the runtime (`crate::cassette`); these paths stay for callers.
pub use crate::cassette::{self, digest, provider};

pub use target::dry_run_path;

use std::path::PathBuf;

use serde_json::json;

use crate::cassette::Cassette;
use crate::diagnostic::{Diagnostic, FileId, Severity};
use crate::families::sm::model::StageDoc;
use crate::runtime::engine::{Env, Run};
use crate::runtime::events::Trace;
use crate::runtime::stage::StageSpec;
use crate::workspace::{FileKind, SourceFile, Workspace};

#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Request drift fails the dry-run.
    pub strict: bool,
    /// When a stage fails Init, add the stage's lint errors to the findings (the CLI does; the
    /// `cassette/` rules, which run inside the check, do not).
    pub explain_init: bool,
}

/// The outcome of one dry-run.
#[derive(Debug)]
pub struct DryRun {
    /// What was run: `stage plan` or `machine code-review`.
    pub title: String,
    pub cassette: Option<FileId>,
    pub trace: Trace,
    /// Mismatches and cassette problems (on cassette lines), and lint errors of stages that
    /// fail Init.
    pub findings: Vec<Diagnostic>,
    pub passed: u32,
    pub failed: u32,
    /// Of the failed expectations, those the run never reached (they count as failed).
    pub unchecked: u32,
    /// An authoring error stopped the run (a stage fails Init, the cassette is unusable).
    pub authoring_error: bool,
    /// Why nothing was replayed, when the run could not start (the summary's `refused`).
    pub refused: Option<String>,
}

impl DryRun {
    /// 0: ran and every expectation held; 1: a mismatch (or drift under `--strict`); 2: an
    /// authoring error.
    pub fn exit_code(&self) -> u8 {
        if self.authoring_error {
            2
        } else if self.findings.iter().any(|d| d.severity == Severity::Error) {
            1
        } else {
            0
        }
    }

    /// A run that could not start (the cassette is unusable, there is nothing to run): still a
    /// whole event stream, the findings and the summary.
    fn failed_to_start(
        workspace: &Workspace,
        title: String,
        cassette: Option<FileId>,
        findings: Vec<Diagnostic>,
        why: &str,
    ) -> DryRun {
        let ended =
            Ending { trace: Trace::default(), findings, passed: 0, failed: 0, unchecked: 0, authoring_error: true };
        finish(workspace, ended, title, cassette, None, Some(why))
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

/// Whether a cassette is read as JSON: a `.json` name, or text that starts with `{`.
pub fn is_json(file: &SourceFile) -> bool {
    file.path.extension().is_some_and(|e| e == "json")
        || file.text.trim_start_matches('\u{feff}').trim_start().starts_with('{')
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
    let (cassette, errors) = cassette::read(&file.text, is_json(file));
    let mut findings: Vec<Diagnostic> = errors
        .into_iter()
        .map(|error| Diagnostic::new(crate::registry::cassette::MalformedTurn, file.id, error.span, error.message))
        .collect();
    findings.extend(crate::runtime::lint::problems(file, &cassette));
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
        return DryRun::failed_to_start(workspace, title, Some(cassette_file), problems, UNUSABLE);
    }
    if cassette.is_machine() {
        let finding = machine_cassette_for_stage(workspace.file(cassette_file), cassette);
        let why = "a machine cassette replays a whole state machine, not one stage";
        return DryRun::failed_to_start(workspace, title, Some(cassette_file), vec![finding], why);
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
        return DryRun::failed_to_start(workspace, title, Some(cassette_file), findings, why);
    };
    let mut run = new_run(cassette_file, cassette, options);
    run.findings.extend(problems);
    let ctx = stage_cassette.ctx.clone().map_or_else(|| json!({}), |(ctx, _)| ctx);
    let ended = run.stage(&spec, &stage_cassette, ctx, 1);
    if let engine::Ended::Exited(_) = &ended {
        // No next (none declared, or empty `nextStages`) is `null`, in every `StageNext`.
        let next = spec.next.as_ref().map_or(serde_json::Value::Null, stage::Next::to_json);
        run.trace.emit("StageNext", json!({"stage": spec.id, "next": next, "evaluated": false}));
    }
    let stages = [stage_file];
    let explain = options.explain_init.then_some(&stages[..]);
    let ending = Ending::of(run, matches!(ended, engine::Ended::InitFailed));
    finish(workspace, ending, title, Some(cassette_file), explain, None)
}

/// The ctx fields the state machine owning `stage` declares `optional`.
pub(crate) fn optional_ctx(workspace: &Workspace, stage: &SourceFile) -> Vec<String> {
    let Some(sm) = owners::owning_machine(workspace, stage) else { return Vec::new() };
    let sm = crate::families::sm::model::SmDoc::parse(workspace.file(sm));
    sm.context().map(|c| c.optional).unwrap_or_default()
}

/// Why a cassette with structural errors is not replayed.
const UNUSABLE: &str = "the cassette has errors, so it cannot be replayed";

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
    Some(DryRun::failed_to_start(workspace, title, cassette, duplicated, why))
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
    machine::run(workspace, sm_file, cassette_file, options)
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

/// What a run left to report: its events so far, findings and expectation counts.
struct Ending {
    trace: Trace,
    findings: Vec<Diagnostic>,
    passed: u32,
    failed: u32,
    unchecked: u32,
    /// A stage failed Setup or Init, or nothing could run.
    authoring_error: bool,
}

impl Ending {
    fn of(run: Run, authoring_error: bool) -> Ending {
        Ending {
            trace: run.trace,
            findings: run.findings,
            passed: run.passed,
            failed: run.failed,
            unchecked: run.unchecked,
            authoring_error,
        }
    }
}

/// Ends every dry-run, started or not: adds the lint errors that explain a failed Init (when
/// `explain` lists the stages), one `DryRunMismatch` per finding and the `DryRunSummary`.
fn finish(
    workspace: &Workspace,
    ending: Ending,
    title: String,
    cassette: Option<FileId>,
    explain: Option<&[FileId]>,
    refused: Option<&str>,
) -> DryRun {
    let Ending { mut trace, mut findings, passed, failed, unchecked, authoring_error } = ending;
    if authoring_error && let Some(stages) = explain {
        findings.extend(lint_errors(workspace, stages));
    }
    // Cassette text reaches messages: no control or bidi characters reach a terminal raw.
    for finding in &mut findings {
        workspace.settle_did_you_mean(finding);
        finding.message = report::escape(&finding.message).into_owned();
    }
    // By file and position, as `check` sorts: the stream reads top to bottom of each file.
    findings.sort_by(|a, b| {
        let (fa, fb) = (workspace.file(a.file), workspace.file(b.file));
        (&fa.display, a.span.start, a.code).cmp(&(&fb.display, b.span.start, b.code))
    });
    for finding in &findings {
        let file = workspace.file(finding.file);
        let at = file.lines().line_col(&file.text, finding.span.start);
        trace.emit(
            "DryRunMismatch",
            json!({
                "code": finding.code, "severity": finding.severity.as_str(), "file": file.display,
                "line": at.line, "column": at.column, "message": finding.message,
            }),
        );
    }
    let drift = findings.iter().filter(|d| d.code == crate::registry::cassette::RequestDrift).count();
    let refused = refused.map(str::to_string);
    let mut run = DryRun { title, cassette, trace, findings, passed, failed, unchecked, authoring_error, refused };
    let exit = run.exit_code();
    let mut summary = json!({
        "expectations": {"passed": passed, "failed": failed, "unchecked": unchecked},
        "drift": drift,
        "mismatches": run.findings.iter().filter(|d| d.severity == Severity::Error).count(),
        "exitCode": exit,
    });
    if let Some(why) = &run.refused {
        summary["refused"] = json!(why);
    }
    run.trace.emit("DryRunSummary", summary);
    run
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

/// The event stream of a dry-run that could not even be set up (the target or the cassette
/// cannot be read, a configuration error): its `DryRunSummary` alone, with the `error`.
pub fn error_stream(message: &str) -> String {
    let mut trace = Trace::default();
    trace.emit(
        "DryRunSummary",
        json!({
            "expectations": {"passed": 0, "failed": 0, "unchecked": 0},
            "drift": 0,
            "mismatches": 0,
            "exitCode": 2,
            "error": message,
        }),
    );
    trace.to_json_lines()
}

/// The version every event of the stream carries.
pub fn events_version() -> u32 {
    events::VERSION
}

/// Every cassette file of `workspace`.
pub fn cassettes(workspace: &Workspace) -> impl Iterator<Item = &SourceFile> {
    workspace.files().iter().filter(|f| f.kind == FileKind::Cassette)
}
