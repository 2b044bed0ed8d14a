//! The `cassette/` family: dry-run cassettes (`*.cassette.yaml|yml|json`) are linted like any
//! other file. Each cassette goes to the engine whose cassette it is (`runtime::engine_of`):
//! its structural rules read the cassette alone, its replay rules run the engine against the
//! definitions the cassette belongs to and report where the recording and the definitions
//! disagree, while the author types. Secrets are found here, in every engine's cassettes.

mod secrets;

use crate::diagnostic::Diagnostic;
use crate::editor::{self, CompletionItem, Cursor, HoverInfo, Target};
use crate::families::{Family, RuleMeta};
use crate::runtime::read::{cassettes, is_json};
use crate::runtime::{ENGINES, engine_of};
use crate::workspace::{FileKind, SourceFile, Workspace};

pub use crate::registry::cassette::*;

pub struct Cassettes;

impl Family for Cassettes {
    fn name(&self) -> &'static str {
        "cassette"
    }

    fn rules(&self) -> &'static [RuleMeta] {
        RULES
    }

    fn check(&self, workspace: &Workspace, out: &mut Vec<Diagnostic>) {
        check_cassettes(workspace, true, &|_| true, out);
    }

    fn editor(&self) -> &'static editor::Hooks {
        &EDITOR
    }
}

/// The `cassette/` findings of the cassettes of `workspace` that `checked` takes; with
/// `replays` false only the structural ones (the language server's first pass after a
/// keystroke: replays come in a second, later pass).
pub fn check_cassettes(
    workspace: &Workspace,
    replays: bool,
    checked: &dyn Fn(&SourceFile) -> bool,
    out: &mut Vec<Diagnostic>,
) {
    let files: Vec<&SourceFile> = cassettes(workspace).filter(|f| checked(f)).collect();
    for file in &files {
        if !matches!(file.kind, FileKind::Unreadable { .. }) {
            secrets::check(file, is_json(file), out);
        }
    }
    for engine in ENGINES {
        let own: Vec<&SourceFile> = files.iter().copied().filter(|f| engine_of(f).name() == engine.name()).collect();
        if !own.is_empty() {
            engine.lint_all(workspace, &own, replays, out);
        }
    }
}

/// Whether only a replay finds `code` (the family's name counts: it covers them).
pub fn is_replay_code(code: &str) -> bool {
    code == "cassette" || ENGINES.iter().any(|engine| engine.replay_codes().contains(&code))
}

/// What the family answers in the editor: what the engine of the cassette under the cursor
/// answers.
const EDITOR: editor::Hooks = editor::Hooks { completions, hover, definitions, ..editor::Hooks::NONE };

/// The cassette file under the cursor.
fn cassette_at(workspace: &Workspace, at: Cursor) -> Option<&SourceFile> {
    Some(workspace.file(at.file)).filter(|f| f.kind == FileKind::Cassette)
}

fn completions(workspace: &Workspace, at: Cursor) -> Vec<CompletionItem> {
    cassette_at(workspace, at).map_or_else(Vec::new, |file| (engine_of(file).editor().completions)(workspace, at))
}

fn hover(workspace: &Workspace, at: Cursor) -> Option<HoverInfo> {
    cassette_at(workspace, at).and_then(|file| (engine_of(file).editor().hover)(workspace, at))
}

fn definitions(workspace: &Workspace, at: Cursor) -> Vec<Target> {
    cassette_at(workspace, at).map_or_else(Vec::new, |file| (engine_of(file).editor().definitions)(workspace, at))
}
