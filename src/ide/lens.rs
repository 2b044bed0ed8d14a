//! Code lenses: one "Dry-run" per cassette of a stage on its `id:` line (the conventional
//! `<id>.cassette.yaml` first, then scenario cassettes whose `stage:` names it, see
//! `runtime::owners`), and one on a state machine's first line when `sm.cassette.yaml` sits
//! beside it. Looking up is cheap; nothing runs until the command is executed.

use crate::diagnostic::FileId;
use crate::families::sm::model::StageDoc;
use crate::runtime::MACHINE_CASSETTES;
use crate::source::Span;
use crate::workspace::{FileKind, Workspace};

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
        FileKind::StateMachine => {
            let Some(dir) = source.path.parent() else { return Vec::new() };
            let found = MACHINE_CASSETTES.iter().find_map(|name| workspace.file_at(&dir.join(name)));
            found.map_or_else(Vec::new, |cassette| {
                let title = format!("▶ Dry-run machine ({})", file_name(workspace, cassette.id));
                vec![Lens { span: Span::empty(0), title, cassette: cassette.id }]
            })
        }
        _ => Vec::new(),
    }
}

fn file_name(workspace: &Workspace, file: FileId) -> String {
    let path = &workspace.file(file).path;
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}
