//! The `steps/` family: climpt agents — `steps_registry.json`, `agent.json`, step output
//! schemas, C3L prompts and the breakdown config. Codes are climpt's own where it has one.

mod ide;
pub(crate) mod model;
pub(crate) mod release;
mod rules;
pub(crate) mod schema_ref;

use std::path::{Path, PathBuf};

use crate::diagnostic::{Diagnostic, Severity};
use crate::editor;
use crate::families::{Family, RuleMeta};
use crate::util::{FastMap, par_map};
use crate::workspace::{FileKind, SourceFile, Workspace};
use model::{Agent, Doc};

pub use crate::registry::steps::*;

/// The level climpt's `--validate` gives each check that stagelint grades lower by default
/// (it reports only what the runtime does), for `[steps] validate-parity`. The level of a
/// finding is raised, never lowered. `FLOW-OrphanStep` of a gated step is raised to an error in
/// the rule itself (climpt grades the two kinds of orphan differently).
const VALIDATE_LEVELS: &[(&str, Severity)] = &[
    (FLOW_HandoffFromInitial, Severity::Warning),
    (FLOW_NextToSelf, Severity::Warning),
    (FLOW_KindBoundary, Severity::Error),
    (FLOW_OrphanStep, Severity::Warning),
    (InitialContinuationMismatch, Severity::Warning),
    (UnusedUvVariable, Severity::Warning),
    (SR_VALID_004, Severity::Error),
    (R_A2, Severity::Error),
    // climpt 91d13e3's `--validate` (`prompt-validator.ts`), and the config-registry check.
    (FallbackKeyInvalid, Severity::Warning),
    (C3lPatternMismatch, Severity::Error),
];

fn raise_to_validate(diagnostic: &mut Diagnostic) {
    if let Some((_, level)) = VALIDATE_LEVELS.iter().find(|(code, _)| *code == diagnostic.code) {
        diagnostic.severity = diagnostic.severity.max(*level);
    }
}

pub struct Steps;

impl Family for Steps {
    fn name(&self) -> &'static str {
        "steps"
    }

    fn rules(&self) -> &'static [RuleMeta] {
        RULES
    }

    fn check(&self, workspace: &Workspace, out: &mut Vec<Diagnostic>) {
        let files: Vec<&SourceFile> = workspace
            .files()
            .iter()
            .filter(|f| {
                matches!(
                    f.kind,
                    FileKind::StepsRegistry | FileKind::AgentJson | FileKind::JsonSchema | FileKind::BreakdownConfig
                )
            })
            .collect();
        if files.is_empty() {
            return;
        }
        // Each file's cached parse (discovery made the registries' already): kept with the
        // workspace, not dropped here on one core.
        let docs: Vec<Doc> = par_map(&files, |file| Doc::of(file));
        for doc in &docs {
            rules::files::check_syntax(doc, out);
        }
        let by_path: FastMap<&Path, &Doc> = docs.iter().map(|d| (d.path(), d)).collect();
        let owned = Owned::collect(workspace, &docs);
        let registries: Vec<&Doc> = docs.iter().filter(|d| d.file.kind == FileKind::StepsRegistry).collect();
        let found = par_map(&registries, |registry| {
            let agent = build_agent(workspace, registry, &owned, &by_path);
            let mut found = Vec::new();
            rules::check_agent(&agent, &mut found);
            if agent.validate_parity() {
                found.iter_mut().for_each(raise_to_validate);
            }
            found
        });
        out.extend(found.into_iter().flatten());
    }

    fn editor(&self) -> &'static editor::Hooks {
        &EDITOR
    }

    /// The climpt release each checked agent directory is read as, and why, unless a config
    /// names it; agents with the same assumption share a note.
    fn notes(&self, workspace: &Workspace) -> Vec<String> {
        use crate::registry::releases::{ReleaseSource, assumed_note};
        use crate::workspace::climpt::{Assumed, UNDETECTED};
        let cwd = std::env::current_dir().unwrap_or_default();
        let mut grouped: Vec<(Assumed, Vec<PathBuf>)> = Vec::new();
        for registry in workspace.reported_files().filter(|f| f.kind == FileKind::StepsRegistry) {
            let dir = model::agent_dir(registry);
            let agent_json = workspace.file_at(&dir.join("agent.json")).filter(|f| f.kind == FileKind::AgentJson);
            let target = crate::workspace::climpt::target(
                &registry.config,
                &dir,
                workspace.climpt_pin(&dir),
                registry.document().root.as_ref(),
                agent_json.and_then(|f| f.document().root.as_ref()),
            );
            match grouped.iter_mut().find(|(a, _)| *a == target) {
                Some((_, dirs)) => dirs.push(dir),
                None => grouped.push((target, vec![dir])),
            }
        }
        grouped
            .into_iter()
            .filter_map(|(assumed, dirs)| {
                let shown: Vec<String> =
                    dirs.iter().map(|d| format!("`{}/`", d.strip_prefix(&cwd).unwrap_or(d).display())).collect();
                let place = match shown.len() {
                    1..=3 => shown.join(", "),
                    n => format!("{}, {} and {} more", shown[0], shown[1], n - 2),
                };
                // Detected from the agent's own files: the marker is the directory already.
                let place = match &assumed.source {
                    ReleaseSource::Detected { marker, .. } if dirs == [marker.clone()] => None,
                    _ => Some(place.as_str()),
                };
                assumed_note(assumed.releases, &assumed.source, place, UNDETECTED, &cwd)
            })
            .collect()
    }
}

/// Each agent directory's schemas (under `schemas/`) and C3L prompts (under `prompts/`), found
/// by walking each file's ancestors once rather than scanning every file for every agent.
struct Owned<'a, 'w> {
    schemas: FastMap<&'w Path, Vec<&'a Doc<'w>>>,
    prompts: FastMap<&'w Path, Vec<&'w SourceFile>>,
}

impl<'a, 'w> Owned<'a, 'w> {
    fn collect(workspace: &'w Workspace, docs: &'a [Doc<'w>]) -> Self {
        let mut schemas: FastMap<&'w Path, Vec<&'a Doc<'w>>> = FastMap::default();
        for doc in docs.iter().filter(|d| d.file.kind == FileKind::JsonSchema) {
            for agent in owners(&doc.file.path, "schemas") {
                schemas.entry(agent).or_default().push(doc);
            }
        }
        let mut prompts: FastMap<&'w Path, Vec<&'w SourceFile>> = FastMap::default();
        for file in workspace.files().iter().filter(|f| f.kind == FileKind::C3lPrompt) {
            for agent in owners(&file.path, "prompts") {
                prompts.entry(agent).or_default().push(file);
            }
        }
        Owned { schemas, prompts }
    }
}

/// The directories `d` such that `path` lies under `d/<folder>`.
fn owners<'p>(path: &'p Path, folder: &'static str) -> impl Iterator<Item = &'p Path> {
    path.ancestors().skip(1).filter(move |a| a.file_name().is_some_and(|n| n == folder)).filter_map(Path::parent)
}

fn build_agent<'a, 'w>(
    workspace: &'w Workspace,
    registry: &'a Doc<'w>,
    owned: &Owned<'a, 'w>,
    by_path: &FastMap<&Path, &'a Doc<'w>>,
) -> Agent<'a, 'w> {
    let dir = model::agent_dir(registry.file);
    let agent_json =
        by_path.get(dir.join("agent.json").as_path()).copied().filter(|d| d.file.kind == FileKind::AgentJson);
    let schemas = owned.schemas.get(dir.as_path()).cloned().unwrap_or_default();
    let prompts = owned.prompts.get(dir.as_path()).cloned().unwrap_or_default();
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let config_dir = dir.parent().map(|p| p.join("climpt").join("config")).unwrap_or_default();
    let breakdown = |side: &str| by_path.get(config_dir.join(format!("{name}-steps-{side}.yml")).as_path()).copied();
    let target = crate::workspace::climpt::target(
        &registry.file.config,
        &dir,
        workspace.climpt_pin(&dir),
        registry.root(),
        agent_json.and_then(|a| a.root()),
    );
    let (layout, retry) = model::read_as(&target, registry.root(), agent_json.and_then(|a| a.root()));
    Agent {
        workspace,
        dir: dir.clone(),
        target,
        layout,
        retry,
        registry,
        agent_json,
        schemas,
        prompts,
        breakdown_app: breakdown("app"),
        breakdown_user: breakdown("user"),
    }
}

/// What the family answers in the editor.
const EDITOR: editor::Hooks = editor::Hooks {
    completions: ide::completions,
    hover: ide::hover,
    definitions: ide::definitions,
    references: ide::references,
    prepare_rename: ide::prepare_rename,
    rename: ide::rename,
    symbols: ide::symbols,
    links: ide::links,
    ..editor::Hooks::NONE
};
