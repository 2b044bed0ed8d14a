//! The `sm/` family: stud-cli state-machine stage definitions and their `sm.yaml`.

mod ide;
pub(crate) mod model;
pub(crate) mod roles;
mod rules;

use crate::diagnostic::Diagnostic;
use crate::families::{Family, RuleMeta};
use crate::source::Span;
use crate::util::par_map;
use crate::workspace::{FileKind, SourceFile, Workspace};
use model::{SmDoc, StageDoc};

pub use crate::registry::sm::*;

/// The error findings that make `stage` fail Setup or Init (the runtime's definition check).
pub fn init_errors(stage: &StageDoc) -> Vec<Diagnostic> {
    rules::init_errors(stage)
}

/// The error findings that make the state machine of `sm_file` ambiguous to run: its file is
/// invalid (no `entry`, not a mapping), its `entry` names no stage, or two stages share an id.
/// The runtime refuses to replay such a machine, with these findings (`check` reports them too).
pub fn machine_errors(workspace: &Workspace, sm_file: crate::diagnostic::FileId) -> Vec<Diagnostic> {
    let mut stage_files: Vec<&SourceFile> = workspace.files().iter().filter(|f| f.kind == FileKind::Stage).collect();
    // In path order, as a walk of the directory finds them: the same stage is "first" as in `check`.
    stage_files.sort_by(|a, b| a.path.cmp(&b.path));
    let stages: Vec<StageDoc> = stage_files.iter().map(|f| StageDoc::parse(f)).collect();
    let sms: Vec<SmDoc> =
        workspace.files().iter().filter(|f| f.kind == FileKind::StateMachine).map(SmDoc::parse).collect();
    let mut out = Vec::new();
    if let Some(machine) = model::group(&sms, &stages).iter().find(|m| m.sm.file.id == sm_file) {
        rules::check_machine(machine, &mut out);
    }
    out.retain(|d| {
        d.severity == crate::diagnostic::Severity::Error
            && [StateMachineInvalid, EntryStageMissing, DuplicateStageId].contains(&d.code)
    });
    out
}

pub struct Sm;

impl Family for Sm {
    fn name(&self) -> &'static str {
        "sm"
    }

    fn rules(&self) -> &'static [RuleMeta] {
        RULES
    }

    fn check(&self, workspace: &Workspace, out: &mut Vec<Diagnostic>) {
        let first = out.len();
        let stage_files: Vec<&SourceFile> = workspace.files().iter().filter(|f| f.kind == FileKind::Stage).collect();
        // Parsing and the per-file rules are independent per file, so they run on all cores.
        let parsed = par_map(&stage_files, |file| {
            let stage = StageDoc::parse(file);
            let mut found = Vec::new();
            rules::check_stage(&stage, &mut found);
            (stage, found)
        });
        let mut stages = Vec::with_capacity(parsed.len());
        for (stage, found) in parsed {
            out.extend(found);
            stages.push(stage);
        }
        let sms: Vec<SmDoc> =
            workspace.files().iter().filter(|f| f.kind == FileKind::StateMachine).map(SmDoc::parse).collect();

        let machines = model::group(&sms, &stages);
        let mut owners: crate::util::FastMap<&std::path::Path, &SmDoc> = Default::default();
        for machine in &machines {
            if let Some(first) = owners.get(machine.sm.dir()) {
                out.push(
                    Diagnostic::new(
                        StateMachineInvalid,
                        machine.sm.file.id,
                        Span::empty(0),
                        format!(
                            "this directory already has a state machine file, `{}`; keep one of them",
                            first.file.display
                        ),
                    )
                    .with_related(first.file.id, Span::empty(0), "this one is used"),
                );
                continue;
            }
            owners.insert(machine.sm.dir(), machine.sm);
            rules::check_machine(machine, out);
        }
        let owned: std::collections::HashSet<crate::diagnostic::FileId> =
            machines.iter().flat_map(|m| m.stages.iter().map(|s| s.id())).collect();
        for stage in stages.iter().filter(|s| !owned.contains(&s.id())) {
            rules::check_outside(stage, out);
        }
        rename_fixes_across_files(workspace, &mut out[first..]);
    }

    fn editor(&self) -> &'static crate::editor::Hooks {
        &EDITOR
    }
}

/// A stage id's kebab-case fix renames it the way the editor's rename does: with its uses in
/// the other files of the state machine and its cassettes. A name that is taken drops the fix
/// (two stages would share an id).
fn rename_fixes_across_files(workspace: &Workspace, found: &mut [Diagnostic]) {
    for diagnostic in found.iter_mut().filter(|d| d.code == InvalidStageId) {
        let Some(fix) = diagnostic.fix.as_mut() else { continue };
        let Some(new_id) = fix.edits.first().map(|(_, edit)| edit.replacement.clone()) else { continue };
        let at = crate::editor::Cursor { file: diagnostic.file, offset: diagnostic.span.start };
        match ide::rename(workspace, at, &new_id) {
            Some(Ok(edits)) if !edits.is_empty() => fix.edits = edits,
            _ => diagnostic.fix = None,
        }
    }
}

/// What the family answers in the editor.
const EDITOR: crate::editor::Hooks = crate::editor::Hooks {
    completions: ide::completions,
    hover: ide::hover,
    definitions: ide::definitions,
    references: ide::references,
    prepare_rename: ide::prepare_rename,
    rename: ide::rename,
    renamed_files: ide::renamed_files,
    symbols: ide::symbols,
    ..crate::editor::Hooks::NONE
};
