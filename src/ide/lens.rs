//! Code lenses: one "Dry-run" per cassette that replays a definition file, as each dry-run
//! engine finds them (`runtime::lenses`; the stage engine puts one per cassette of a stage on its
//! `id:` line and one per machine cassette on a state machine's first line), and the engines'
//! render-only previews ("Preview prompt" on each Last Light phase). Looking up is cheap;
//! nothing runs until the command is executed.

use crate::diagnostic::FileId;
use crate::runtime::Lens;
use crate::workspace::Workspace;

/// The command a lens runs; its arguments are the file's URI and the cassette's URI.
pub const DRY_RUN_COMMAND: &str = "stagelint.dryRun";

/// The command a preview lens runs; its arguments are the file's URI and what it previews (a
/// phase's name).
pub const PREVIEW_COMMAND: &str = "stagelint.previewPrompt";

pub fn lenses(workspace: &Workspace, file: FileId) -> Vec<Lens> {
    crate::runtime::lenses(workspace, file)
}

/// The render-only previews of `file` ("Preview prompt" on each Last Light phase).
pub fn previews(workspace: &Workspace, file: FileId) -> Vec<crate::runtime::Preview> {
    crate::runtime::previews(workspace, file)
}

/// The cassette a dry-run of `file` without a named cassette replays: `Ok(None)` when the
/// conventional one is there (or there is none at all: the run then says so), `Ok(Some)` when the
/// file has exactly one other cassette, and `Err` listing them when it has several.
pub fn cassette_to_run(workspace: &Workspace, file: FileId) -> Result<Option<FileId>, String> {
    if crate::runtime::conventional_cassette(workspace, file).is_some() {
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
                workspace.file(file).display,
                several.len(),
                names.join(", ")
            ))
        }
    }
}
