//! Rule families: each declares its rules once and checks the workspace files it owns.

pub mod lastlight;
pub mod sm;
pub mod stagelint;
pub mod steps;

use std::path::PathBuf;

use crate::diagnostic::{Diagnostic, FileId};
use crate::editor;
use crate::source::Span;
use crate::workspace::Workspace;

pub use crate::registry::{RENAMED, RuleMeta, all_rules, code_hint, default_severity, is_family, rule};

/// A rule family. A family added later implements this and is listed in [`FAMILIES`]; the CLI
/// (and the editor features built on the same analysis) pick it up from there.
pub trait Family: Sync {
    fn name(&self) -> &'static str;
    fn rules(&self) -> &'static [RuleMeta];
    /// Runs every rule of the family over the files it owns. Rules are pure: no IO, no config
    /// filtering (the collector in `check` applies `[rules]` and suppressions).
    fn check(&self, workspace: &Workspace, out: &mut Vec<Diagnostic>);

    // Editor features (see `crate::editor`). Each returns nothing for files the family does not
    // own, so the server can ask every family.

    fn completions(&self, _workspace: &Workspace, _at: editor::Cursor) -> Vec<editor::CompletionItem> {
        Vec::new()
    }

    fn hover(&self, _workspace: &Workspace, _at: editor::Cursor) -> Option<editor::HoverInfo> {
        None
    }

    fn definitions(&self, _workspace: &Workspace, _at: editor::Cursor) -> Vec<editor::Target> {
        Vec::new()
    }

    fn references(&self, _workspace: &Workspace, _at: editor::Cursor) -> Vec<editor::Target> {
        Vec::new()
    }

    /// `None` when the cursor is not on something of this family; `Some(Err)` to refuse.
    fn prepare_rename(&self, _workspace: &Workspace, _at: editor::Cursor) -> Option<Result<Span, String>> {
        None
    }

    fn rename(&self, _workspace: &Workspace, _at: editor::Cursor, _new_name: &str) -> Option<editor::RenameResult> {
        None
    }

    /// Files a rename to `new_name` renames too (a stage's `<id>.cassette.yaml`), with their new
    /// path; clients that cannot rename files keep the old names.
    fn renamed_files(&self, _workspace: &Workspace, _at: editor::Cursor, _new_name: &str) -> Vec<(FileId, PathBuf)> {
        Vec::new()
    }

    fn symbols(&self, _workspace: &Workspace, _file: FileId) -> Vec<editor::Symbol> {
        Vec::new()
    }

    fn links(&self, _workspace: &Workspace, _file: FileId) -> Vec<editor::Link> {
        Vec::new()
    }

    fn folds(&self, _workspace: &Workspace, _file: FileId) -> Vec<editor::Fold> {
        Vec::new()
    }
}
