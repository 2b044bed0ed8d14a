//! Which stage a cassette belongs to, and which cassettes a stage has. A stage cassette
//! belongs to the stage its `stage:` names, looked up among the stages of the same state
//! machine (or, for a loose stage, the same directory, or a `[dry-run] cassettes` directory
//! of the stage's config). `<id>.cassette.yaml` is only the default the CLI and the lens pick.

use std::path::Path;

use crate::diagnostic::FileId;
use crate::families::sm::model::StageDoc;
use crate::runtime::read::{cassettes, is_json};
use crate::runtime::stages::cassette_in_workspace;
use crate::workspace::{FileKind, SourceFile, Workspace};

/// The state-machine file of the directory holding `file`, or the nearest above it.
pub fn owning_machine(workspace: &Workspace, file: &SourceFile) -> Option<FileId> {
    owning_machine_of(workspace, &file.path)
}

/// [`owning_machine`] of a file at `path` (which need not exist yet).
fn owning_machine_of(workspace: &Workspace, path: &Path) -> Option<FileId> {
    let dir = path.parent()?;
    workspace
        .files()
        .iter()
        .filter(|f| f.kind == FileKind::StateMachine)
        .filter_map(|f| Some((f.path.parent()?, f.id)))
        .filter(|(sm_dir, _)| dir.starts_with(sm_dir))
        .max_by_key(|(sm_dir, _)| sm_dir.components().count())
        .map(|(_, id)| id)
}

/// The stages a cassette at `file` may belong to, with their ids.
pub fn stages_in_scope<'w>(workspace: &'w Workspace, file: &SourceFile) -> Vec<(String, &'w SourceFile)> {
    stages_in_scope_of(workspace, &file.path)
}

/// [`stages_in_scope`] of a cassette at `path` (which need not exist yet, as for an import).
pub fn stages_in_scope_of<'w>(workspace: &'w Workspace, path: &Path) -> Vec<(String, &'w SourceFile)> {
    let dir = path.parent().unwrap_or(Path::new(""));
    let machine_dir = owning_machine_of(workspace, path).and_then(|sm| workspace.file(sm).path.parent());
    workspace
        .files()
        .iter()
        .filter(|f| f.kind == FileKind::Stage)
        .filter(|stage| match machine_dir {
            Some(sm_dir) => stage.path.starts_with(sm_dir),
            None => stage.path.parent() == Some(dir) || stage.config.cassette_dirs.iter().any(|d| d == dir),
        })
        .filter_map(|f| Some((StageDoc::parse(f).stage_id()?.0.to_string(), f)))
        .collect()
}

/// The stage the stage cassette `file` (naming `id`) belongs to: the stage whose cassette it is
/// by convention, else the stage with that id in its scope.
pub fn stage_for<'w>(workspace: &'w Workspace, file: &SourceFile, id: &str) -> Option<&'w SourceFile> {
    let conventional = workspace
        .files()
        .iter()
        .filter(|f| f.kind == FileKind::Stage && cassette_in_workspace(workspace, f, id) == Some(file.id))
        .find(|f| StageDoc::parse(f).stage_id().is_some_and(|(own, _)| own == id));
    conventional.or_else(|| stages_in_scope(workspace, file).into_iter().find(|(own, _)| own == id).map(|(_, f)| f))
}

/// Every stage cassette of the stage in `stage` (with id `id`): the conventional one first,
/// then the others (scenarios) by path.
pub fn cassettes_for(workspace: &Workspace, stage: &SourceFile, id: &str) -> Vec<FileId> {
    let conventional = cassette_in_workspace(workspace, stage, id);
    let mut others: Vec<&SourceFile> = cassettes(workspace)
        .filter(|f| Some(f.id) != conventional)
        .filter(|f| {
            let (cassette, _) = crate::cassette::read(&f.text, is_json(f));
            !cassette.is_machine()
                && cassette.stage.stage.as_ref().is_some_and(|(named, _)| named == id)
                && stage_for(workspace, f, id).is_some_and(|owner| owner.id == stage.id)
        })
        .collect();
    others.sort_by(|a, b| a.path.cmp(&b.path));
    conventional.into_iter().chain(others.into_iter().map(|f| f.id)).collect()
}
