//! Code lenses: one "Dry-run" per cassette of a stage on its `id:` line (the conventional
//! `<id>.cassette.yaml` first, then scenario cassettes whose `stage:` names it, see
//! `runtime::owners`), and on a state machine's first line one per machine cassette of its
//! directory (`sm.cassette.yaml` first, then the other cassettes with `stages:`, by path).
//! Looking up is cheap; nothing runs until the command is executed.

use crate::diagnostic::FileId;
use crate::families::sm::model::StageDoc;
use crate::runtime::MACHINE_CASSETTES;
use crate::source::Span;
use crate::workspace::{FileKind, SourceFile, Workspace};

/// The command a lens runs; its arguments are the file's URI and the cassette's URI.
pub const DRY_RUN_COMMAND: &str = "stagelint.dryRun";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lens {
    pub span: Span,
    pub title: String,
    /// The cassette it replays.
    pub cassette: FileId,
}

pub fn lenses(workspace: &Workspace, file: FileId) -> Vec<Lens> {
    let source = workspace.file(file);
    match source.kind {
        FileKind::Stage => {
            let doc = StageDoc::parse(source);
            let Some((id, span)) = doc.stage_id() else { return Vec::new() };
            crate::runtime::owners::cassettes_for(workspace, source, id)
                .into_iter()
                .map(|cassette| {
                    let title = format!("▶ Dry-run ({})", file_name(workspace, cassette));
                    Lens { span, title, cassette }
                })
                .collect()
        }
        FileKind::StateMachine => machine_cassettes(workspace, source)
            .into_iter()
            .map(|cassette| {
                let title = format!("▶ Dry-run machine ({})", file_name(workspace, cassette));
                Lens { span: Span::empty(0), title, cassette }
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The machine cassettes beside the state machine `sm`: the conventional `sm.cassette.yaml`
/// first, then every other cassette of the directory that has `stages:`, by path.
fn machine_cassettes(workspace: &Workspace, sm: &SourceFile) -> Vec<FileId> {
    let Some(dir) = sm.path.parent() else { return Vec::new() };
    let conventional = MACHINE_CASSETTES.iter().find_map(|name| workspace.file_at(&dir.join(name))).map(|f| f.id);
    let mut others: Vec<&SourceFile> = crate::runtime::cassettes(workspace)
        .filter(|f| Some(f.id) != conventional && f.path.parent() == Some(dir))
        .filter(|f| crate::cassette::read(&f.text, crate::runtime::is_json(f)).0.is_machine())
        .collect();
    others.sort_by(|a, b| a.path.cmp(&b.path));
    conventional.into_iter().chain(others.into_iter().map(|f| f.id)).collect()
}

/// The cassette a dry-run of `file` without a named cassette replays: `Ok(None)` when the
/// conventional one is there (or there is none at all: the run then says so), `Ok(Some)` when the
/// file has exactly one other cassette, and `Err` listing them when it has several.
pub fn cassette_to_run(workspace: &Workspace, file: FileId) -> Result<Option<FileId>, String> {
    let source = workspace.file(file);
    let conventional = match source.kind {
        FileKind::Stage => StageDoc::parse(source)
            .stage_id()
            .and_then(|(id, _)| crate::runtime::cassette_in_workspace(workspace, source, id)),
        FileKind::StateMachine => source
            .path
            .parent()
            .and_then(|dir| MACHINE_CASSETTES.iter().find_map(|name| workspace.file_at(&dir.join(name))))
            .map(|f| f.id),
        _ => return Ok(None),
    };
    if conventional.is_some() {
        return Ok(None);
    }
    let found: Vec<FileId> = lenses(workspace, file).into_iter().map(|lens| lens.cassette).collect();
    match found.as_slice() {
        [] => Ok(None),
        [only] => Ok(Some(*only)),
        several => {
            let names: Vec<String> = several.iter().map(|id| format!("`{}`", workspace.file(*id).display)).collect();
            Err(format!(
                "{} has {} cassettes and none by the conventional name; choose one (pass its URI as the second argument): {}",
                source.display,
                several.len(),
                names.join(", ")
            ))
        }
    }
}

fn file_name(workspace: &Workspace, file: FileId) -> String {
    let path = &workspace.file(file).path;
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}
