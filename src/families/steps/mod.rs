//! The `steps/` family: climpt agents — `steps_registry.json`, `agent.json`, step output
//! schemas, C3L prompts and the breakdown config. Codes are climpt's own where it has one.

mod ide;
pub(crate) mod model;
mod rules;
pub(crate) mod schema_ref;

use std::collections::HashMap;

use crate::diagnostic::{Diagnostic, Severity};
use crate::editor;
use crate::families::{Family, RuleMeta};
use crate::source::{json, yaml};
use crate::util::par_map;
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
        let docs: Vec<Doc> = par_map(&files, |file| {
            let parsed =
                if file.kind == FileKind::BreakdownConfig { yaml::parse(&file.text) } else { json::parse(&file.text) };
            Doc { file, root: parsed.root, errors: parsed.errors }
        });
        for doc in &docs {
            rules::files::check_syntax(doc, out);
        }
        let by_path: HashMap<&std::path::Path, &Doc> = docs.iter().map(|d| (d.path(), d)).collect();
        for registry in docs.iter().filter(|d| d.file.kind == FileKind::StepsRegistry) {
            let agent = build_agent(workspace, registry, &docs, &by_path);
            let first = out.len();
            rules::check_agent(&agent, out);
            if agent.validate_parity() {
                out[first..].iter_mut().for_each(raise_to_validate);
            }
        }
    }

    fn editor(&self) -> &'static editor::Hooks {
        &EDITOR
    }
}

fn build_agent<'a, 'w>(
    workspace: &'w Workspace,
    registry: &'a Doc<'w>,
    docs: &'a [Doc<'w>],
    by_path: &HashMap<&std::path::Path, &'a Doc<'w>>,
) -> Agent<'a, 'w> {
    let dir = model::agent_dir(registry.file);
    let schemas_dir = dir.join("schemas");
    let prompts_dir = dir.join("prompts");
    let agent_json =
        by_path.get(dir.join("agent.json").as_path()).copied().filter(|d| d.file.kind == FileKind::AgentJson);
    let schemas =
        docs.iter().filter(|d| d.file.kind == FileKind::JsonSchema && d.path().starts_with(&schemas_dir)).collect();
    let prompts = workspace
        .files()
        .iter()
        .filter(|f| f.kind == FileKind::C3lPrompt && f.path.starts_with(&prompts_dir))
        .collect();
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let config_dir = dir.parent().map(|p| p.join("climpt").join("config")).unwrap_or_default();
    let breakdown = |side: &str| by_path.get(config_dir.join(format!("{name}-steps-{side}.yml")).as_path()).copied();
    Agent {
        workspace,
        dir: dir.clone(),
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
