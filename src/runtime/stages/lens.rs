//! The stage engine's code lenses: one per cassette of a stage on its `id:` line (the
//! conventional `<id>.cassette.yaml` first, then scenario cassettes whose `stage:` names it,
//! see `owners`), and on a state machine's first line one per machine cassette of its
//! directory (`sm.cassette.yaml` first, then the other cassettes with `stages:`, by path).
//! Looking up is cheap; nothing runs until the command is executed.

use crate::diagnostic::FileId;
use crate::families::sm::model::StageDoc;
use crate::runtime::engine::Lens;
use crate::runtime::read::{cassettes, is_json};
use crate::runtime::stages::{MACHINE_CASSETTES, cassette_in_workspace, owners};
use crate::source::Span;
use crate::workspace::{FileKind, SourceFile, Workspace};

pub(super) fn lenses(workspace: &Workspace, source: &SourceFile) -> Vec<Lens> {
    match source.kind {
        FileKind::Stage => {
            let doc = StageDoc::parse(source);
            let Some((id, span)) = doc.stage_id() else { return Vec::new() };
            let own = owners::cassettes_for(workspace, source, id).into_iter().map(|cassette| {
                let title = format!("▶ Dry-run ({})", file_name(workspace, cassette));
                Lens { span, title, cassette, focus: None }
            });
            // The machine cassettes that record the stage run its machine, focused on it.
            let machine = machine_cassettes_recording(workspace, source, id).into_iter().flat_map(|(_, found)| found);
            let machine = machine.map(|cassette| {
                let title = format!("▶ Dry-run machine ({})", file_name(workspace, cassette));
                Lens { span, title, cassette, focus: None }
            });
            own.chain(machine).collect()
        }
        FileKind::StateMachine => machine_cassettes(workspace, source)
            .into_iter()
            .map(|cassette| {
                let title = format!("▶ Dry-run machine ({})", file_name(workspace, cassette));
                Lens { span: Span::empty(0), title, cassette, focus: None }
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The cassette a dry-run of a stage or state machine takes by convention, when it is there.
pub(super) fn conventional(workspace: &Workspace, source: &SourceFile) -> Option<FileId> {
    match source.kind {
        FileKind::Stage => {
            StageDoc::parse(source).stage_id().and_then(|(id, _)| cassette_in_workspace(workspace, source, id))
        }
        FileKind::StateMachine => source
            .path
            .parent()
            .and_then(|dir| MACHINE_CASSETTES.iter().find_map(|name| workspace.file_at(&dir.join(name))))
            .map(|f| f.id),
        _ => None,
    }
}

/// The state machine that owns stage `stage` (with id `id`), and the machine cassettes beside it
/// that record an execution of the stage (`stages.<id>`), the conventional one first.
pub(super) fn machine_cassettes_recording(
    workspace: &Workspace,
    stage: &SourceFile,
    id: &str,
) -> Option<(FileId, Vec<FileId>)> {
    let sm = owners::owning_machine(workspace, stage)?;
    let recording: Vec<FileId> = machine_cassettes(workspace, workspace.file(sm))
        .into_iter()
        .filter(|&file| {
            let file = workspace.file(file);
            crate::cassette::read(&file.text, is_json(file)).0.stages.iter().any(|entry| entry.id == id)
        })
        .collect();
    Some((sm, recording))
}

/// The machine cassettes beside the state machine `sm`: the conventional `sm.cassette.yaml`
/// first, then every other cassette of the directory that has `stages:`, by path.
fn machine_cassettes(workspace: &Workspace, sm: &SourceFile) -> Vec<FileId> {
    let Some(dir) = sm.path.parent() else { return Vec::new() };
    let conventional = MACHINE_CASSETTES.iter().find_map(|name| workspace.file_at(&dir.join(name))).map(|f| f.id);
    let mut others: Vec<&SourceFile> = cassettes(workspace)
        .filter(|f| Some(f.id) != conventional && f.path.parent() == Some(dir))
        .filter(|f| crate::cassette::read(&f.text, is_json(f)).0.is_machine())
        .collect();
    others.sort_by(|a, b| a.path.cmp(&b.path));
    conventional.into_iter().chain(others.into_iter().map(|f| f.id)).collect()
}

fn file_name(workspace: &Workspace, file: FileId) -> String {
    let path = &workspace.file(file).path;
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}
