//! Editor features for Last Light workflows and their prompts.

use crate::diagnostic::FileId;
use crate::ide::{CompletionItem, Cursor, Fold, HoverInfo, Link, RenameResult, Symbol, Target};
use crate::source::Span;
use crate::workspace::Workspace;

pub(super) fn completions(_workspace: &Workspace, _at: Cursor) -> Vec<CompletionItem> {
    Vec::new()
}
pub(super) fn hover(_workspace: &Workspace, _at: Cursor) -> Option<HoverInfo> {
    None
}
pub(super) fn definitions(_workspace: &Workspace, _at: Cursor) -> Vec<Target> {
    Vec::new()
}
pub(super) fn references(_workspace: &Workspace, _at: Cursor) -> Vec<Target> {
    Vec::new()
}
pub(super) fn prepare_rename(_workspace: &Workspace, _at: Cursor) -> Option<Result<Span, String>> {
    None
}
pub(super) fn rename(_workspace: &Workspace, _at: Cursor, _new_name: &str) -> Option<RenameResult> {
    None
}
pub(super) fn symbols(_workspace: &Workspace, _file: FileId) -> Vec<Symbol> {
    Vec::new()
}
pub(super) fn links(_workspace: &Workspace, _file: FileId) -> Vec<Link> {
    Vec::new()
}
pub(super) fn folds(_workspace: &Workspace, _file: FileId) -> Vec<Fold> {
    Vec::new()
}
