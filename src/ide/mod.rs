//! Editor-neutral features on byte offsets: what is under the cursor, what can be typed there,
//! where a name is defined and used, which fixes apply. Plain data only; `lsp/` converts it.
//!
//! Each feature asks every family (through its `editor::Hooks`, empty unless it has the feature), so a
//! family added later gets completion, hover, navigation and rename without server changes.

// Only the language server asks for code actions.
#[cfg_attr(not(feature = "lsp"), allow(dead_code))]
pub(crate) mod actions;
pub mod config;
pub mod hover;
pub mod lens;

use std::path::PathBuf;

use crate::check::FAMILIES;
use crate::diagnostic::FileId;
pub use crate::editor::*;
use crate::source::Span;
use crate::workspace::Workspace;

pub fn completions(workspace: &Workspace, at: Cursor) -> Vec<CompletionItem> {
    FAMILIES.iter().flat_map(|family| (family.editor().completions)(workspace, at)).collect()
}

/// Family documentation under the cursor (field docs, placeholder types).
pub fn hover(workspace: &Workspace, at: Cursor) -> Option<HoverInfo> {
    FAMILIES.iter().find_map(|family| (family.editor().hover)(workspace, at))
}

pub fn definitions(workspace: &Workspace, at: Cursor) -> Vec<Target> {
    FAMILIES.iter().flat_map(|family| (family.editor().definitions)(workspace, at)).collect()
}

pub fn references(workspace: &Workspace, at: Cursor) -> Vec<Target> {
    FAMILIES.iter().flat_map(|family| (family.editor().references)(workspace, at)).collect()
}

/// The span of the name a rename would change; `Err` says why this cannot be renamed.
pub fn prepare_rename(workspace: &Workspace, at: Cursor) -> Result<Span, String> {
    FAMILIES.iter().find_map(|family| (family.editor().prepare_rename)(workspace, at)).unwrap_or_else(|| {
        Err("only stage ids, step ids, phase names, and atomic stage and input names can be renamed".into())
    })
}

pub fn rename(workspace: &Workspace, at: Cursor, new_name: &str) -> RenameResult {
    FAMILIES.iter().find_map(|family| (family.editor().rename)(workspace, at, new_name)).unwrap_or_else(|| {
        Err("only stage ids, step ids, phase names, and atomic stage and input names can be renamed".into())
    })
}

/// Files the same rename renames (with their new paths), for clients that can rename files.
pub fn renamed_files(workspace: &Workspace, at: Cursor, new_name: &str) -> Vec<(FileId, PathBuf)> {
    FAMILIES.iter().flat_map(|family| (family.editor().renamed_files)(workspace, at, new_name)).collect()
}

pub fn symbols(workspace: &Workspace, file: FileId) -> Vec<Symbol> {
    FAMILIES.iter().flat_map(|family| (family.editor().symbols)(workspace, file)).collect()
}

pub fn links(workspace: &Workspace, file: FileId) -> Vec<Link> {
    FAMILIES.iter().flat_map(|family| (family.editor().links)(workspace, file)).collect()
}

pub fn folds(workspace: &Workspace, file: FileId) -> Vec<Fold> {
    let mut out: Vec<Fold> = FAMILIES.iter().flat_map(|family| (family.editor().folds)(workspace, file)).collect();
    out.extend(frontmatter_fold(workspace, file));
    out
}

/// Every markdown file with frontmatter folds it, whatever its family.
fn frontmatter_fold(workspace: &Workspace, file: FileId) -> Option<Fold> {
    let source = workspace.file(file);
    let fm = crate::source::frontmatter::split(&source.text)?;
    let close = fm.close_fence?;
    let start_line = source.lines().line_of(fm.open_fence.start);
    let end_line = source.lines().line_of(close.start);
    (end_line > start_line).then_some(Fold { start_line, end_line })
}
