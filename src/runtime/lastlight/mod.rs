//! The Last Light engine: a workflow (`workflows/<name>.yaml`) run as the seed-era engine
//! (`src/workflows/` at dd02adf) or the current one (`packages/workflow-engine/` at 2d26144)
//! runs it, with each phase's output, each `until_bash` exit code and each gate's answer taken
//! from a workflow cassette. Which engine is the one the `lastlight/` family checks the file
//! for (`[lastlight] engine`, or detected from the repository). Prompts are rendered as the
//! engine renders them and are part of the event stream; a render-only preview needs no
//! cassette.

pub mod cassette;
mod context;
mod lint;
mod phases;
pub mod preview;
pub mod render;
mod runner;
mod schedule;
mod timeline;
pub mod until;
pub mod value;
pub mod workflow;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::diagnostic::{Diagnostic, FileId, Severity};
use crate::families::lastlight::model::WorkflowDoc;
use crate::registry::cassette as rules;
use crate::runtime::engine::{Engine, Lens, Preview, Rendering, Request, Timeline};
use crate::runtime::read::{cassettes, has_top_key, is_json};
use crate::runtime::run::{DryRun, Ending, Options, UNUSABLE, finish};
use crate::source::Span;
use crate::template::lastlight::Engine as Dialect;
use crate::workspace::discover::{absolute, discover_with_overlay, read_as};
use crate::workspace::lastlight::{prompt_base, skill_candidates, skill_references};
use crate::workspace::{FileKind, SourceFile, Workspace};
use cassette::Cassette;
use runner::Runner;
use workflow::Workflow;

/// The Last Light engine.
pub struct Lastlight;

/// The directory beside a workflow that holds its cassettes: Last Light's loader reads every
/// `*.yaml` of the workflows directory itself (the current one throws on a file that is no
/// workflow), but not its subdirectories.
pub const CASSETTE_DIR: &str = "cassettes";

/// The codes only a replay finds.
const REPLAY: [&str; 9] = [
    rules::CassetteExhausted,
    rules::CassetteUnconsumed,
    rules::ExpectationFailed,
    rules::ExecutionLimit,
    rules::UnknownWorkflow,
    rules::RunStopped,
    rules::RenderedEmpty,
    rules::RenderedVerbatim,
    rules::EngineMismatch,
];

/// The `lastlight/` rules whose errors explain why the engine throws while running.
const THROWS: &[&str] = &[
    crate::registry::lastlight::PromptNotFound,
    crate::registry::lastlight::PromptPathEscapes,
    crate::registry::lastlight::InvalidSkillName,
    crate::registry::lastlight::SkillNotFound,
    crate::registry::lastlight::NoPromptOrSkill,
    crate::registry::lastlight::DependsOnUnknown,
    crate::registry::lastlight::DependsOnSelf,
    crate::registry::lastlight::DependsOnCycle,
    crate::registry::lastlight::TemplateMarkerInShell,
];

impl Engine for Lastlight {
    fn name(&self) -> &'static str {
        "lastlight"
    }

    fn subject_keys(&self) -> &'static [&'static str] {
        &["workflow"]
    }

    fn dry_run_path(
        &self,
        path: &Path,
        cassette: Option<&Path>,
        request: &mut Request<'_>,
    ) -> Option<Result<(Workspace, DryRun), String>> {
        let path = absolute(path);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let yaml = name.ends_with(".yaml") || name.ends_with(".yml");
        if !yaml || crate::workspace::SM_FILE_NAMES.contains(&name) || crate::workspace::is_cassette_name(name) {
            return None;
        }
        let Request { options, configs, overlay, .. } = request;
        let (options, overlay) = (*options, *overlay);
        let mut roots = vec![path.clone()];
        roots.extend(cassette.map(absolute));
        let mut workspace = match discover_with_overlay(&roots, configs, overlay) {
            Ok(workspace) => workspace,
            Err(error) => return Some(Err(error.to_string())),
        };
        let file = workspace.file_at(&path)?;
        if file.kind != FileKind::Workflow {
            return None;
        }
        let id = file.id;
        if WorkflowDoc::parse(file).is_cron() {
            let doc = WorkflowDoc::parse(file);
            let runs = doc.get("workflow").and_then(crate::source::Node::as_str).unwrap_or("its workflow");
            return Some(Err(format!(
                "{}: a cron schedule runs no phases itself; dry-run the workflow it starts (`{runs}`)",
                path.display()
            )));
        }
        let cassette_path = match cassette.map(absolute) {
            Some(c) => c,
            None => match conventional_path(&workspace, id) {
                Some(found) => found,
                None => {
                    let name = workflow_name(workspace.file(id)).unwrap_or_default();
                    return Some(Err(format!(
                        "{}: no cassette: pass --cassette, or add `{CASSETTE_DIR}/{name}.cassette.yaml` beside the workflow",
                        path.display()
                    )));
                }
            },
        };
        let cassette_id = match read_as(&mut workspace, &cassette_path, FileKind::Cassette, configs, overlay) {
            Ok(id) => id,
            Err(error) => return Some(Err(error)),
        };
        let run = dry_run(&workspace, id, cassette_id, options);
        Some(Ok((workspace, run)))
    }

    fn lint(&self, workspace: &Workspace, file: &SourceFile, replays: bool, out: &mut Vec<Diagnostic>) {
        self.lint_all(workspace, &[file], replays, out);
    }

    fn lint_all(&self, workspace: &Workspace, files: &[&SourceFile], replays: bool, out: &mut Vec<Diagnostic>) {
        let catalog = Catalog::new(workspace);
        let mut refusals = Refusals::default();
        for file in files {
            let (cassette, found) = read_cassette(file);
            let broken = found.iter().any(|d| d.severity == Severity::Error);
            out.extend(found);
            if !replays || broken {
                continue;
            }
            let workflow = match catalog.owner(file, &cassette) {
                Ok(workflow) => workflow,
                Err(unowned) => {
                    out.extend(unowned);
                    continue;
                }
            };
            // A workflow the loader refuses is reported by its own rules, and not replayed.
            if !refusals.of(workspace, workflow).is_empty() {
                continue;
            }
            let options = Options { strict: false, explain_init: false };
            let run = replay_read(workspace, workflow, file.id, &cassette, Vec::new(), options, Vec::new());
            for finding in run.findings.into_iter().filter(|d| d.file == file.id && REPLAY.contains(&d.code)) {
                if !out.contains(&finding) {
                    out.push(finding);
                }
            }
        }
    }

    fn replay(&self, workspace: &Workspace, file: &SourceFile, options: Options) -> Result<DryRun, Vec<Diagnostic>> {
        let (cassette, found) = read_cassette(file);
        if found.iter().any(|d| d.severity == Severity::Error) {
            return Err(found);
        }
        let workflow = Catalog::new(workspace).owner(file, &cassette)?;
        let refused = Refusals::default().of(workspace, workflow);
        Ok(replay_read(workspace, workflow, file.id, &cassette, found, options, refused))
    }

    fn replay_codes(&self) -> &'static [&'static str] {
        &REPLAY
    }

    fn lenses(&self, workspace: &Workspace, file: &SourceFile) -> Vec<Lens> {
        if file.kind != FileKind::Workflow {
            return Vec::new();
        }
        let doc = WorkflowDoc::parse(file);
        let Some(span) = doc.root.and_then(|r| r.entry("name")).map(|e| e.key.span) else { return Vec::new() };
        owned_cassettes(workspace, file)
            .into_iter()
            .map(|cassette| {
                let path = &workspace.file(cassette).path;
                let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                Lens { span, title: format!("▶ Dry-run ({name})"), cassette, focus: None }
            })
            .collect()
    }

    fn conventional_cassette(&self, workspace: &Workspace, file: &SourceFile) -> Option<FileId> {
        if file.kind != FileKind::Workflow {
            return None;
        }
        let name = workflow_name(file)?;
        candidates(file, &name).find_map(|path| workspace.file_at(&path)).map(|f| f.id)
    }

    fn replays_reading(&self, workspace: &Workspace, files: &[&SourceFile]) -> Vec<FileId> {
        let read: HashSet<FileId> = files
            .iter()
            .filter(|f| matches!(f.kind, FileKind::WorkflowPrompt | FileKind::Skill))
            .map(|f| f.id)
            .collect();
        if read.is_empty() {
            return Vec::new();
        }
        // The workflows whose phases name one of them: a prompt path resolved as the loader
        // resolves it, a skill found where the engine stages it from.
        let readers: HashSet<FileId> = workspace
            .files()
            .iter()
            .filter(|f| f.kind == FileKind::Workflow)
            .filter(|file| {
                let doc = WorkflowDoc::located(file, workspace);
                let mut prompts = (0..doc.prompts.len()).filter_map(|i| doc.prompt_file(i, workspace));
                let skills = doc.root.map(skill_references).unwrap_or_default();
                prompts.any(|p| read.contains(&p.id))
                    || skills.iter().any(|skill| {
                        skill_candidates(doc.dir(), skill.text)
                            .find(|p| workspace.exists(p))
                            .and_then(|p| workspace.file_at(&p))
                            .is_some_and(|f| read.contains(&f.id))
                    })
            })
            .map(|f| f.id)
            .collect();
        if readers.is_empty() {
            return Vec::new();
        }
        cassettes_owned_by(workspace, &|id| readers.contains(&id)).into_iter().map(|f| f.id).collect()
    }

    fn timeline(&self) -> Box<dyn Timeline> {
        Box::new(timeline::Lines::default())
    }

    fn editor(&self) -> &'static crate::editor::Hooks {
        &crate::editor::Hooks::NONE
    }

    fn previews(&self, _workspace: &Workspace, file: &SourceFile) -> Vec<Preview> {
        preview::lenses(file)
    }

    fn preview(
        &self,
        workspace: &Workspace,
        file: &SourceFile,
        target: &str,
        vars: &[(String, Value)],
    ) -> Option<Result<Rendering, String>> {
        (file.kind == FileKind::Workflow).then(|| {
            preview::render_phase(workspace, file, target, vars).map(|previewed| Rendering {
                title: previewed.title.clone(),
                marked: preview::text(&previewed, false),
                exact: previewed.rendered.text.clone(),
                json: preview::json(&previewed),
            })
        })
    }
}

/// The workflow's `name`.
fn workflow_name(file: &SourceFile) -> Option<String> {
    WorkflowDoc::parse(file).name().map(str::to_string)
}

/// Where a workflow's cassette is by convention, in order: `cassettes/<name>.cassette.{yaml,
/// yml,json}` beside the workflow, then `<name>.cassette.*` in each `[dry-run] cassettes`
/// directory.
fn candidates<'a>(file: &'a SourceFile, name: &'a str) -> impl Iterator<Item = PathBuf> + 'a {
    let own = file.path.parent().map(|d| d.join(CASSETTE_DIR));
    own.into_iter()
        .chain(file.config.cassette_dirs.iter().cloned())
        .flat_map(move |dir| ["yaml", "yml", "json"].map(|ext| dir.join(format!("{name}.cassette.{ext}"))))
}

/// The conventional cassette of a workflow, on disk or among the files read.
fn conventional_path(workspace: &Workspace, workflow: FileId) -> Option<PathBuf> {
    let file = workspace.file(workflow);
    let name = workflow_name(file)?;
    candidates(file, &name).find(|p| workspace.file_at(p).is_some() || p.is_file())
}

/// Reads a workflow cassette with its structural findings.
pub fn read_cassette(file: &SourceFile) -> (Cassette, Vec<Diagnostic>) {
    if let FileKind::Unreadable { message, offset } = &file.kind {
        let finding =
            Diagnostic::new(crate::families::stagelint::IoError, file.id, Span::empty(*offset), message.clone());
        return (Cassette::default(), vec![finding]);
    }
    let cassette = cassette::read(&file.text, is_json(file));
    let findings = cassette
        .problems
        .iter()
        .map(|p| {
            Diagnostic::new(p.rule, file.id, p.span, p.message.clone()).with_suggestion(p.span, p.suggestion.as_deref())
        })
        .collect();
    (cassette, findings)
}

/// The agent workflows of a workspace by name, made once for every cassette of a check.
struct Catalog<'w> {
    by_name: std::collections::HashMap<String, Vec<&'w SourceFile>>,
}

impl<'w> Catalog<'w> {
    fn new(workspace: &'w Workspace) -> Catalog<'w> {
        let mut by_name: std::collections::HashMap<String, Vec<&SourceFile>> = std::collections::HashMap::new();
        for file in workspace.files().iter().filter(|f| f.kind == FileKind::Workflow) {
            let doc = WorkflowDoc::parse(file);
            if let Some(name) = doc.name().filter(|_| !doc.is_cron()) {
                by_name.entry(name.to_string()).or_default().push(file);
            }
        }
        Catalog { by_name }
    }

    /// The workflow a cassette replays: the agent workflow named by its `workflow:` whose
    /// directory is nearest above the cassette (the one it sits beside, in `cassettes/`), else
    /// the only one of that name in the workspace.
    fn owner(&self, file: &SourceFile, cassette: &Cassette) -> Result<FileId, Vec<Diagnostic>> {
        let Some((name, span)) = &cassette.workflow else { return Err(Vec::new()) };
        let named = self.by_name.get(name).map_or(&[][..], Vec::as_slice);
        for dir in file.path.ancestors().skip(1) {
            if let Some(found) = named.iter().find(|f| f.path.parent() == Some(dir) || prompt_base(&f.path) == dir) {
                return Ok(found.id);
            }
        }
        if let [only] = named {
            return Ok(only.id);
        }
        let message = if named.is_empty() {
            format!("no workflow named `{name}` is in this workspace, so this cassette replays nothing")
        } else {
            format!(
                "{} workflows are named `{name}` and none is above this cassette: put it in `{CASSETTE_DIR}/` beside the one it replays",
                named.len()
            )
        };
        let suggestion = crate::util::did_you_mean(name, self.by_name.keys().map(String::as_str)).map(str::to_string);
        let finding = Diagnostic::new(rules::UnknownWorkflow, file.id, *span, message)
            .with_suggestion(*span, suggestion.as_deref());
        Err(vec![finding])
    }
}

/// Why workflows cannot be looked up, found once per directory: the loader's errors on the
/// file, and (current engine) on any file of its directory, on which the loader throws for
/// every lookup.
#[derive(Default)]
struct Refusals {
    by_dir: std::collections::HashMap<PathBuf, Vec<Diagnostic>>,
}

impl Refusals {
    fn of(&mut self, workspace: &Workspace, workflow: FileId) -> Vec<Diagnostic> {
        let file = workspace.file(workflow);
        let dir = file.path.parent().map(Path::to_path_buf).unwrap_or_default();
        let errors = self.by_dir.entry(dir.clone()).or_insert_with(|| {
            let siblings: Vec<&SourceFile> = workspace
                .files()
                .iter()
                .filter(|f| f.kind == FileKind::Workflow && f.path.parent() == Some(dir.as_path()))
                .collect();
            crate::families::lastlight::loader_errors(workspace, &siblings)
        });
        let own: Vec<Diagnostic> = errors.iter().filter(|d| d.file == workflow).cloned().collect();
        // Before 0.2 the loader skips a file it cannot load; from 0.2 on it throws.
        if !own.is_empty() || file.config.lastlight.dialect() == Dialect::Seed {
            return own;
        }
        errors.clone()
    }
}

/// The cassettes that replay `workflow`: the conventional one first, then the others whose owner
/// it is, by path.
fn owned_cassettes(workspace: &Workspace, workflow: &SourceFile) -> Vec<FileId> {
    let conventional = Lastlight.conventional_cassette(workspace, workflow);
    let mut others = cassettes_owned_by(workspace, &|id| id == workflow.id);
    others.retain(|f| Some(f.id) != conventional);
    others.sort_by(|a, b| a.path.cmp(&b.path));
    conventional.into_iter().chain(others.into_iter().map(|f| f.id)).collect()
}

/// The workflow cassettes of the workspace whose owner (see [`Catalog::owner`]) `owner` takes,
/// each cassette read once.
fn cassettes_owned_by<'w>(workspace: &'w Workspace, owner: &dyn Fn(FileId) -> bool) -> Vec<&'w SourceFile> {
    let catalog = Catalog::new(workspace);
    cassettes(workspace)
        .filter(|f| has_top_key(f, Lastlight.subject_keys()))
        .filter(|f| {
            let (cassette, _) = read_cassette(f);
            catalog.owner(f, &cassette).is_ok_and(owner)
        })
        .collect()
}

/// Dry-runs the workflow in `workflow` against the cassette in `cassette_file`.
pub fn dry_run(workspace: &Workspace, workflow: FileId, cassette_file: FileId, options: Options) -> DryRun {
    let (cassette, problems) = read_cassette(workspace.file(cassette_file));
    let refused = Refusals::default().of(workspace, workflow);
    replay_read(workspace, workflow, cassette_file, &cassette, problems, options, refused)
}

fn title(workspace: &Workspace, workflow: FileId) -> String {
    let file = workspace.file(workflow);
    format!("workflow {}", workflow_name(file).unwrap_or_else(|| file.display.clone()))
}

/// Replays a read cassette against `workflow` (`problems`: what reading it found;
/// `unloadable`: why the loader refuses the workflow, when it does).
fn replay_read(
    workspace: &Workspace,
    workflow: FileId,
    cassette_file: FileId,
    cassette: &Cassette,
    problems: Vec<Diagnostic>,
    options: Options,
    unloadable: Vec<Diagnostic>,
) -> DryRun {
    let title = title(workspace, workflow);
    let refuse = |findings: Vec<Diagnostic>, why: &str| {
        DryRun::failed_to_start(workspace, Lastlight.name(), title.clone(), Some(cassette_file), findings, why, None)
    };
    if problems.iter().any(|d| d.severity == Severity::Error) {
        return refuse(problems, UNUSABLE);
    }
    let file = workspace.file(workflow);
    if !unloadable.is_empty() {
        let own = unloadable.iter().any(|d| d.file == workflow);
        let why = if own {
            "the workflow does not load: the engine's loader rejects it".to_string()
        } else {
            let other = workspace.file(unloadable[0].file).display.clone();
            format!("`{other}` beside it does not load, and the current engine's loader throws on it for every lookup")
        };
        return refuse(unloadable, &why);
    }
    let doc = WorkflowDoc::parse(file);
    let wf = Workflow::read(&doc);
    if let Some((name, span)) = &cassette.workflow
        && *name != wf.name
    {
        let message = format!("this cassette replays workflow `{name}`, not `{}`", wf.name);
        let finding = Diagnostic::new(rules::UnknownWorkflow, cassette_file, *span, message)
            .with_suggestion(*span, Some(&wf.name));
        return refuse(vec![finding], "the cassette replays another workflow");
    }
    let dialect = file.config.lastlight.dialect();
    let mut findings = problems;
    if let Some((named, span)) = cassette.engine
        && named != dialect
    {
        let configured = if dialect == Dialect::Seed { "seed" } else { "head" };
        let message = format!(
            "this cassette says it records the {} engine, but the workflow is checked and replayed for Last Light {}, which runs the {} one (`[lastlight] release`)",
            runner::engine_name(named),
            file.config.lastlight.release.describe(),
            runner::engine_name(dialect)
        );
        findings.push(Diagnostic::new(rules::EngineMismatch, cassette_file, span, message).with_fix(
            format!("Replace with `{configured}`"),
            crate::diagnostic::Applicability::Unsafe,
            vec![crate::diagnostic::Edit { span, replacement: configured.into() }],
        ));
    }
    let base = context::base(cassette, &wf.name, file.config.lastlight.release.newest, doc.is_pr_scoped());
    let mut runner = Runner::new(workspace, file, &wf, dialect, cassette, cassette_file, base);
    let end = runner.run();
    lint::after_run(&mut runner, &end);
    let authoring = end.threw || runner.threw;
    findings.extend(std::mem::take(&mut runner.findings));
    if authoring && options.explain_init {
        findings.extend(throw_reasons(workspace, workflow));
    }
    let ending = Ending {
        trace: runner.trace,
        findings,
        passed: runner.passed,
        failed: runner.failed,
        unchecked: runner.unchecked,
        authoring_error: authoring,
        focus: None,
    };
    finish(workspace, Lastlight.name(), ending, title, Some(cassette_file), None)
}

/// The `lastlight/` errors that say why the engine threw (a prompt it cannot load, a DAG it
/// refuses), on the workflow and its prompts. A workflow below `workflows/` (an example) has
/// them as warnings, since the server never loads it; run explicitly, it throws all the same.
fn throw_reasons(workspace: &Workspace, workflow: FileId) -> Vec<Diagnostic> {
    let mut all = Vec::new();
    crate::families::Family::check(&crate::families::lastlight::Lastlight, workspace, &mut all);
    let unloaded = crate::workspace::lastlight::unloaded_subdirectory(&workspace.file(workflow).path).is_some();
    all.into_iter()
        .filter(|d| d.file == workflow && THROWS.contains(&d.code))
        .filter(|d| d.severity == Severity::Error || (unloaded && d.severity == Severity::Warning))
        .map(|mut d| {
            d.severity = Severity::Error;
            d
        })
        .collect()
}

/// The JSON a preview's substitutions are listed with, shared by the CLI and the editor.
pub fn substitutions_json(rendered: &render::Rendered) -> Value {
    json!(
        rendered
            .marks
            .iter()
            .filter_map(|m| m.range.map(|r| json!({"tag": m.tag, "start": r.0, "end": r.1, "missing": m.missing})))
            .collect::<Vec<_>>()
    )
}
