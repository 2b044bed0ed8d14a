//! The climpt engine: a climpt agent (`steps_registry.json`, `agent.json`, step schemas, C3L
//! prompts) run against a flow cassette, as climpt's runner at [`RELEASE`] runs it, with the
//! model's structured outputs and the validators' results taken from the cassette.

mod agent;
pub mod cassette;
mod flow;
mod prompt;
mod timeline;

use std::path::{Path, PathBuf};

use crate::diagnostic::{Diagnostic, FileId, Severity};
use crate::registry::cassette as rules;
use crate::runtime::engine::{Engine, Lens, Request, Timeline};
use crate::runtime::read::{cassettes, has_top_key, is_json};
use crate::runtime::run::{DryRun, Ending, Focus, Options, UNUSABLE, finish};
use crate::source::Span;
use crate::workspace::discover::{absolute, discover_with_overlay, read_as};
use crate::workspace::{FileKind, SourceFile, Workspace};
use agent::Agent;
use cassette::FlowCassette;
use flow::{Flow, Outcome};

/// The climpt release the engine models, named in the event stream and the docs. The one
/// place the engine's release assumption lives: the runner semantics in `flow` and `agent`
/// follow this release's `agents/runner/` and `agents/common/`.
pub const RELEASE: &str = "climpt v1.13.27 (4af87ad)";

/// A flow cassette's conventional names, in the agent directory.
pub const AGENT_CASSETTES: [&str; 3] = ["agent.cassette.yaml", "agent.cassette.yml", "agent.cassette.json"];

const REGISTRY: &str = "steps_registry.json";

/// The climpt engine.
pub struct Climpt;

impl Engine for Climpt {
    fn name(&self) -> &'static str {
        "climpt"
    }

    fn subject_keys(&self) -> &'static [&'static str] {
        &["agent"]
    }

    fn dry_run_path(
        &self,
        path: &Path,
        cassette: Option<&Path>,
        request: &mut Request<'_>,
    ) -> Option<Result<(Workspace, DryRun), String>> {
        let path = absolute(path);
        let registry = if path.is_dir() {
            Some(path.join(REGISTRY)).filter(|p| p.is_file())?
        } else if path.file_name().is_some_and(|n| n == REGISTRY) {
            path.clone()
        } else {
            return None;
        };
        Some(dry_run_registry(&registry, cassette, request))
    }

    fn replay(&self, workspace: &Workspace, file: &SourceFile, options: Options) -> Result<DryRun, Vec<Diagnostic>> {
        let (cassette, found) = read_cassette(file);
        if found.iter().any(|d| d.severity == Severity::Error) {
            return Err(found);
        }
        let registry = owning_registry(workspace, file, &cassette)?;
        Ok(run_read(workspace, registry, file.id, &cassette, Vec::new(), options, None))
    }

    fn lint(&self, workspace: &Workspace, file: &SourceFile, replays: bool, out: &mut Vec<Diagnostic>) {
        let (cassette, found) = read_cassette(file);
        let broken = found.iter().any(|d| d.severity == Severity::Error);
        out.extend(found);
        if !replays || broken {
            return;
        }
        let registry = match owning_registry(workspace, file, &cassette) {
            Ok(registry) => registry,
            Err(unowned) => {
                out.extend(unowned);
                return;
            }
        };
        let options = Options { strict: false, explain_init: false };
        let run = run_read(workspace, registry, file.id, &cassette, Vec::new(), options, None);
        for finding in run.findings.into_iter().filter(|d| d.file == file.id && REPLAY.contains(&d.code)) {
            if !out.contains(&finding) {
                out.push(finding);
            }
        }
    }

    fn replay_codes(&self) -> &'static [&'static str] {
        &REPLAY
    }

    fn lenses(&self, workspace: &Workspace, file: &SourceFile) -> Vec<Lens> {
        if file.kind != FileKind::StepsRegistry {
            return Vec::new();
        }
        lenses(workspace, file)
    }

    fn conventional_cassette(&self, workspace: &Workspace, file: &SourceFile) -> Option<FileId> {
        if file.kind != FileKind::StepsRegistry {
            return None;
        }
        let dir = file.path.parent()?;
        AGENT_CASSETTES.iter().find_map(|name| workspace.file_at(&dir.join(name))).map(|f| f.id)
    }

    fn replays_reading(&self, workspace: &Workspace, files: &[&SourceFile]) -> Vec<FileId> {
        // The agent is the nearest directory above with a registry: its prompts, schemas and
        // agent.json are under it.
        let mut registries: Vec<&SourceFile> = files
            .iter()
            .filter_map(|file| {
                let registry = file.path.ancestors().skip(1).find_map(|dir| {
                    workspace.file_at(&dir.join("steps_registry.json")).filter(|f| f.kind == FileKind::StepsRegistry)
                });
                registry.filter(|r| r.id != file.id)
            })
            .collect();
        registries.sort_by_key(|r| r.id);
        registries.dedup_by_key(|r| r.id);
        let mut out = Vec::new();
        for registry in registries {
            out.extend(lenses(workspace, registry).into_iter().map(|lens| lens.cassette));
            out.extend(self.conventional_cassette(workspace, registry));
        }
        out
    }

    fn timeline(&self) -> Box<dyn Timeline> {
        Box::new(timeline::ClimptLines)
    }

    fn editor(&self) -> &'static crate::editor::Hooks {
        &crate::editor::Hooks::NONE
    }
}

/// The codes only replaying a flow cassette finds.
const REPLAY: [&str; 8] = [
    rules::RequestDrift,
    rules::CassetteExhausted,
    rules::CassetteUnconsumed,
    rules::ExpectationFailed,
    rules::ResultIgnored,
    rules::OutputRejected,
    rules::FlowStopped,
    rules::UnknownAgent,
];

/// Reads flow cassette `file` with its structural findings.
fn read_cassette(file: &SourceFile) -> (FlowCassette, Vec<Diagnostic>) {
    if let FileKind::Unreadable { message, offset } = &file.kind {
        let finding =
            Diagnostic::new(crate::families::stagelint::IoError, file.id, Span::empty(*offset), message.clone());
        return (FlowCassette::default(), vec![finding]);
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

/// The registry of the agent a flow cassette belongs to: the agent directory that holds it (or
/// is named `.agent/<agent>` beside a directory that holds it), whose `agentId` is the
/// cassette's `agent`.
fn owning_registry(
    workspace: &Workspace,
    file: &SourceFile,
    cassette: &FlowCassette,
) -> Result<FileId, Vec<Diagnostic>> {
    let Some((agent, span)) = &cassette.agent else { return Err(Vec::new()) };
    let mut other = None;
    for dir in file.path.ancestors().skip(1) {
        for candidate in [dir.join(REGISTRY), dir.join(".agent").join(agent).join(REGISTRY)] {
            let Some(registry) = workspace.file_at(&candidate).filter(|f| f.kind == FileKind::StepsRegistry) else {
                continue;
            };
            match agent_id(registry) {
                Some(id) if id == *agent => return Ok(registry.id),
                Some(id) => {
                    other.get_or_insert((id, registry.id));
                }
                None => {}
            }
        }
    }
    let message = match &other {
        Some((id, _)) => format!("this cassette replays agent `{agent}`, but it sits in agent `{id}`'s directory"),
        None => format!(
            "no agent `{agent}` holds this cassette: put it in `.agent/{agent}/` beside its `steps_registry.json`"
        ),
    };
    let finding = Diagnostic::new(rules::UnknownAgent, file.id, *span, message);
    let fix = other.as_ref().map(|(id, _)| id.as_str());
    Err(vec![finding.with_suggestion(*span, fix)])
}

fn agent_id(registry: &SourceFile) -> Option<String> {
    let root = crate::source::json::parse(&registry.text).root?;
    root.get("agentId")?.as_str().map(str::to_string)
}

/// Dry-runs the agent of `registry` against `cassette` (default: `agent.cassette.yaml` in the
/// agent directory).
fn dry_run_registry(
    registry: &Path,
    cassette: Option<&Path>,
    request: &mut Request<'_>,
) -> Result<(Workspace, DryRun), String> {
    let Request { options, configs, overlay, focus } = request;
    let (options, overlay) = (*options, *overlay);
    let dir = registry.parent().map(Path::to_path_buf).unwrap_or_default();
    let cassette = match cassette.map(absolute) {
        Some(c) => c,
        None => AGENT_CASSETTES
            .iter()
            .map(|name| dir.join(name))
            .find(|p| p.is_file() || overlay.contains_key(p))
            .ok_or_else(|| {
                format!(
                    "{}: no cassette: pass --cassette, or add `agent.cassette.yaml` beside `steps_registry.json`",
                    dir.display()
                )
            })?,
    };
    let roots: Vec<PathBuf> = vec![dir.clone(), cassette.clone()];
    let mut workspace = discover_with_overlay(&roots, configs, overlay).map_err(|e| e.to_string())?;
    let registry = workspace.file_at(registry).ok_or_else(|| format!("{}: not read", registry.display()))?.id;
    let cassette = read_as(&mut workspace, &cassette, FileKind::Cassette, configs, overlay)?;
    let file = workspace.file(cassette);
    if !has_top_key(file, Climpt.subject_keys()) && has_top_key(file, &["stage", "stages", "attempts"]) {
        let finding = Diagnostic::new(
            rules::UnknownAgent,
            cassette,
            Span::empty(0),
            "this is a stage cassette (`stage:`/`stages:`), but a climpt agent is being run: a flow cassette names its `agent:` and lists `iterations:`",
        );
        let title = format!("agent {}", dir.file_name().and_then(|n| n.to_str()).unwrap_or("."));
        let why = "a stage cassette replays a stage, not a climpt agent";
        let run = DryRun::failed_to_start(&workspace, Climpt.name(), title, Some(cassette), vec![finding], why, None);
        return Ok((workspace, run));
    }
    let (read, problems) = read_cassette(workspace.file(cassette));
    let focus = focus.take().map(|id| Focus { key: "step", id });
    let run = run_read(&workspace, registry, cassette, &read, problems, options, focus);
    Ok((workspace, run))
}

/// Runs the agent of `registry` against the read cassette (`problems`: what reading found).
fn run_read(
    workspace: &Workspace,
    registry: FileId,
    cassette_file: FileId,
    cassette: &FlowCassette,
    problems: Vec<Diagnostic>,
    options: Options,
    focus: Option<Focus>,
) -> DryRun {
    let registry_source = workspace.file(registry);
    let dir_name = registry_source.path.parent().and_then(|d| d.file_name()).and_then(|n| n.to_str()).unwrap_or(".");
    let title = format!("agent {dir_name}");
    let refuse = |findings: Vec<Diagnostic>, why: &str| {
        DryRun::failed_to_start(
            workspace,
            Climpt.name(),
            title.clone(),
            Some(cassette_file),
            findings,
            why,
            focus.clone(),
        )
    };
    if problems.iter().any(|d| d.severity == Severity::Error) {
        return refuse(problems, UNUSABLE);
    }
    let agent = match Agent::load(workspace, registry) {
        Ok(agent) => agent,
        Err(why) => {
            let message = format!("the agent cannot start: {why}");
            let finding = Diagnostic::new(rules::FlowStopped, registry, Span::empty(0), message);
            return refuse(vec![finding], "the registry does not load");
        }
    };
    let named = cassette.agent.as_ref();
    if let Some((name, span)) = named.filter(|(name, _)| name != agent.id()) {
        let message = format!("this cassette replays agent `{name}`, not `{}`", agent.id());
        let finding = Diagnostic::new(rules::UnknownAgent, cassette_file, *span, message)
            .with_suggestion(*span, Some(agent.id()));
        return refuse(vec![finding], "the cassette replays another agent");
    }
    let verdict_type = cassette.verdict_type.as_ref().map(|(v, _)| v.as_str()).or(agent.verdict_type());
    let Some(verdict_type) = verdict_type.map(str::to_string) else {
        let message = "no verdict type: agent.json has no `runner.verdict.type`; give the cassette `verdictType:`";
        let finding = Diagnostic::new(rules::FlowStopped, cassette_file, Span::empty(0), message);
        return refuse(vec![finding], "no verdict type");
    };
    let mut flow = Flow::new(&agent, cassette, cassette_file, verdict_type, options.strict);
    flow.run();
    // A registry defect (climpt's ConfigError ids) stops the run as an authoring error.
    let authoring = matches!(&flow.outcome, Some(Outcome::Failed { code, .. }) if code.starts_with("SR-") || code.starts_with("PR-"));
    let mut findings = problems;
    findings.extend(flow.findings);
    let ending = Ending {
        trace: flow.trace,
        findings,
        passed: flow.passed,
        failed: flow.failed,
        unchecked: flow.unchecked,
        authoring_error: authoring,
        focus,
    };
    finish(workspace, Climpt.name(), ending, title, Some(cassette_file), None)
}

/// The lenses of a registry: for each flow cassette of the agent, one on the entry
/// (`entryStepMapping`/`entryStep`) and one on each step the cassette's run reaches. Replaying
/// is cheap (no I/O, a few milliseconds for fifty iterations).
fn lenses(workspace: &Workspace, registry: &SourceFile) -> Vec<Lens> {
    let Some(root) = crate::source::json::parse(&registry.text).root else { return Vec::new() };
    let Some(id) = root.get("agentId").and_then(|n| n.as_str()) else { return Vec::new() };
    let entry_span = root.entry("entryStepMapping").or_else(|| root.entry("entryStep")).map(|e| e.key.span);
    let mut mine: Vec<&SourceFile> = cassettes(workspace)
        .filter(|f| has_top_key(f, Climpt.subject_keys()))
        .filter(|f| {
            let (cassette, _) = read_cassette(f);
            cassette.agent.as_ref().is_some_and(|(a, _)| a == id)
                && owning_registry(workspace, f, &cassette).is_ok_and(|r| r == registry.id)
        })
        .collect();
    let conventional = registry.path.parent().map(|d| AGENT_CASSETTES.map(|n| d.join(n)));
    mine.sort_by_key(|f| (!conventional.as_ref().is_some_and(|c| c.contains(&f.path)), f.path.clone()));
    let mut out = Vec::new();
    for file in mine {
        let name = file.path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        if let Some(span) = entry_span {
            out.push(Lens { span, title: format!("▶ Dry-run ({name})"), cassette: file.id, focus: None });
        }
        let (cassette, _) = read_cassette(file);
        let options = Options { strict: false, explain_init: false };
        let run = run_read(workspace, registry.id, file.id, &cassette, Vec::new(), options, None);
        let mut reached: Vec<(String, Vec<u64>)> = Vec::new();
        for event in run.trace.events.iter().filter(|e| e.name == "IterationStart") {
            let step = event.str("step").to_string();
            match reached.iter_mut().find(|(s, _)| *s == step) {
                Some((_, iterations)) => iterations.push(event.num("iteration")),
                None => reached.push((step, vec![event.num("iteration")])),
            }
        }
        let steps = root.get("steps");
        for (step, iterations) in reached {
            let Some(span) = steps.and_then(|s| s.entry(&step)).map(|e| e.key.span) else { continue };
            let shown: Vec<String> = iterations.iter().map(u64::to_string).collect();
            let title = format!("▶ Dry-run ({name}) · iteration {}", shown.join(", "));
            out.push(Lens { span, title, cassette: file.id, focus: Some(step) });
        }
    }
    out
}
