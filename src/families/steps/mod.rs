//! The `steps/` family: climpt agents — `steps_registry.json`, `agent.json`, step output
//! schemas, C3L prompts and the breakdown config. Codes are climpt's own where it has one.

mod ide;
pub mod model;
mod rules;
pub mod schema_ref;

use std::collections::HashMap;

use crate::diagnostic::{Diagnostic, FileId, Severity};
use crate::families::{Family, RuleMeta, declare_rules};
use crate::ide as editor;
use crate::source::{Span, json, yaml};
use crate::util::par_map;
use crate::workspace::{FileKind, SourceFile, Workspace};
use model::{Agent, Doc};

declare_rules! { "steps";
    // Files and loading.
    JsonSyntax => Error;
    DuplicateKey => Warning;
    SR_LOAD_001 = "SR-LOAD-001" => Error;
    SR_LOAD_002 = "SR-LOAD-002" => Error;
    SR_LOAD_003 = "SR-LOAD-003" => Error;
    R_A1 = "R-A1" => Error;
    R_F1 = "R-F1" => Error;
    R_F2 = "R-F2" => Error;
    UnknownKey => Hint, fix = true;
    LegacyKey => Warning;
    FallbackKeyInvalid => Error, fix = true;
    SchemaViolation => Error;
    // Entry points.
    SR_ENTRY_001 = "SR-ENTRY-001" => Error, aliases = ["R-F11"];
    SR_ENTRY_002 = "SR-ENTRY-002" => Error, fix = true, aliases = ["R-A6"];
    SR_ENTRY_003 = "SR-ENTRY-003" => Error, fix = true, aliases = ["R-A4"];
    SR_GATE_002 = "SR-GATE-002" => Error, aliases = ["R-A3"];
    R_F3 = "R-F3" => Error;
    // Step structure.
    SR_VALID_004 = "SR-VALID-004" => Error, aliases = ["R-B1", "R-B10", "R-E3", "R-F4", "R-F7", "R-F8", "R-F9", "R-F10"];
    R_E1 = "R-E1" => Warning;
    R_B2 = "R-B2" => Error;
    R_B11 = "R-B11" => Error;
    SR_GATE_003 = "SR-GATE-003" => Error, aliases = ["R-B6"];
    R_F13 = "R-F13" => Error;
    R_F14 = "R-F14" => Error;
    R_F20 = "R-F20" => Error;
    R_A5 = "R-A5" => Warning;
    // agent.json.
    AC_VALID_001 = "AC-VALID-001" => Error;
    R_F5 = "R-F5" => Error;
    R_F6 = "R-F6" => Error;
    R_F12 = "R-F12" => Error;
    R_F15 = "R-F15" => Error;
    R_F16 = "R-F16" => Error;
    R_F17 = "R-F17" => Error;
    R_F18 = "R-F18" => Error;
    R_F19 = "R-F19" => Error;
    SR_GATE_004 = "SR-GATE-004" => Error;
    // Gate, intents and the send/receive contract.
    SR_VALID_001 = "SR-VALID-001" => Error, aliases = ["R-B3", "R-B9"];
    SR_VALID_002 = "SR-VALID-002" => Error, aliases = ["R-B7", "R-B8"];
    SR_VALID_003 = "SR-VALID-003" => Error, fix = true, aliases = ["R-D3"];
    R_B4 = "R-B4" => Error, fix = true, aliases = ["SR-TRANS-004", "SR-TRANS-007"];
    R_B12 = "R-B12" => Error;
    R_B14 = "R-B14" => Error;
    R_B15 = "R-B15" => Error;
    R_D1 = "R-D1" => Error;
    R_D2 = "R-D2" => Error;
    R_D4 = "R-D4" => Error;
    SchemaRef => Error;
    // Transitions.
    SR_TRANS_001 = "SR-TRANS-001" => Error, fix = true, aliases = ["R-B5", "R-C3", "R-C4", "SR-TRANS-006", "SR-TRANS-008", "SR-TRANS-010"];
    SR_TRANS_002 = "SR-TRANS-002" => Error;
    SR_TRANS_003 = "SR-TRANS-003" => Error;
    SR_TRANS_005 = "SR-TRANS-005" => Error;
    SR_TRANS_009 = "SR-TRANS-009" => Error;
    // Flow reachability (climpt's flow validator).
    FLOW_EntryCannotClose = "FLOW-EntryCannotClose" => Error;
    FLOW_NoClosureStep = "FLOW-NoClosureStep" => Error;
    FLOW_OrphanStep = "FLOW-OrphanStep" => Info, aliases = ["R-B13"];
    FLOW_UnknownIntentKey = "FLOW-UnknownIntentKey" => Warning;
    FLOW_IntentNotAllowedForKind = "FLOW-IntentNotAllowedForKind" => Error;
    FLOW_HandoffFromInitial = "FLOW-HandoffFromInitial" => Info;
    FLOW_KindBoundary = "FLOW-KindBoundary" => Info;
    FLOW_NextToSelf = "FLOW-NextToSelf" => Info;
    FLOW_NoPathToClosure = "FLOW-NoPathToClosure" => Error;
    // Validators and the completion loop.
    R_C1 = "R-C1" => Error;
    R_C2 = "R-C2" => Error;
    R_C5 = "R-C5" => Error;
    R_C6 = "R-C6" => Error;
    SuccessWhenInvalid => Error;
    UnknownExtractor => Error, fix = true;
    FailurePatternParams => Warning;
    ValidationStepUnknown => Warning;
    // Prompts and UV variables.
    PR_C3L_001 = "PR-C3L-001" => Error;
    PR_C3L_004 = "PR-C3L-004" => Error, aliases = ["PR-FILE-001"];
    PR_SYSTEM_002 = "PR-SYSTEM-002" => Error;
    PR_RESOLVE_003 = "PR-RESOLVE-003" => Error;
    PR_RESOLVE_004 = "PR-RESOLVE-004" => Error;
    PR_RESOLVE_005 = "PR-RESOLVE-005" => Error;
    UnusedUvVariable => Info;
    UnsubstitutedPlaceholder => Warning, fix = true;
    R_A2 = "R-A2" => Error;
    OptionalParamNoDefault => Warning;
    InitialContinuationMismatch => Info;
    PromptFrontmatterMismatch => Error;
    InputsFromUnresolved => Warning;
    C3lPatternMismatch => Error;
    BreakdownConfigMissing => Warning;
}

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

    fn completions(&self, workspace: &Workspace, at: editor::Cursor) -> Vec<editor::CompletionItem> {
        ide::completions(workspace, at)
    }

    fn hover(&self, workspace: &Workspace, at: editor::Cursor) -> Option<editor::HoverInfo> {
        ide::hover(workspace, at)
    }

    fn definitions(&self, workspace: &Workspace, at: editor::Cursor) -> Vec<editor::Target> {
        ide::definitions(workspace, at)
    }

    fn references(&self, workspace: &Workspace, at: editor::Cursor) -> Vec<editor::Target> {
        ide::references(workspace, at)
    }

    fn prepare_rename(&self, workspace: &Workspace, at: editor::Cursor) -> Option<Result<Span, String>> {
        ide::prepare_rename(workspace, at)
    }

    fn rename(&self, workspace: &Workspace, at: editor::Cursor, new_name: &str) -> Option<editor::RenameResult> {
        ide::rename(workspace, at, new_name)
    }

    fn symbols(&self, workspace: &Workspace, file: FileId) -> Vec<editor::Symbol> {
        ide::symbols(workspace, file)
    }

    fn links(&self, workspace: &Workspace, file: FileId) -> Vec<editor::Link> {
        ide::links(workspace, file)
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
