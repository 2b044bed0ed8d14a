//! Editor-neutral features on byte offsets: what is under the cursor, what can be typed there,
//! where a name is defined and used, which fixes apply. Plain data only; `lsp/` converts it.
//!
//! Each feature asks every family (`Family` has a default, empty implementation of each), so a
//! family added later gets completion, hover, navigation and rename without server changes.

pub mod actions;
pub mod config;
pub mod hover;
pub mod lens;
pub mod schema;
pub mod yaml_lines;

use std::path::PathBuf;

use crate::diagnostic::{Edit, FileId};
use crate::families::FAMILIES;
use crate::source::Span;
use crate::workspace::Workspace;

/// A cursor: a byte offset in one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cursor {
    pub file: FileId,
    pub offset: usize,
}

/// A place to jump to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    pub file: FileId,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionKind {
    /// A mapping key.
    Field,
    /// A value from a closed set (an enum, a tool name).
    Value,
    /// The id of something defined elsewhere (a stage, a step).
    Reference,
    /// A template variable or placeholder path.
    Variable,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletionItem {
    pub label: String,
    pub kind: CompletionKind,
    pub detail: Option<String>,
    /// Markdown.
    pub documentation: Option<String>,
    /// Text to insert instead of `label`.
    pub insert: Option<String>,
    /// The text the insertion replaces (the partial word under the cursor); empty = insert.
    pub replace: Span,
}

/// Documentation for what is under the cursor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HoverInfo {
    pub span: Span,
    /// Markdown.
    pub markdown: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    /// A stage, a step, a phase.
    Node,
    /// A field or group inside one.
    Field,
}

/// An outline entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub detail: Option<String>,
    pub kind: SymbolKind,
    /// The whole definition.
    pub span: Span,
    /// The name within it.
    pub selection: Span,
    pub children: Vec<Symbol>,
}

/// A path written in a file that names another file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    pub span: Span,
    pub target: PathBuf,
}

/// A foldable region, by 0-based lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fold {
    pub start_line: usize,
    pub end_line: usize,
}

/// What a rename would change, or why it cannot be done.
pub type RenameResult = Result<Vec<(FileId, Edit)>, String>;

pub fn completions(workspace: &Workspace, at: Cursor) -> Vec<CompletionItem> {
    FAMILIES.iter().flat_map(|family| family.completions(workspace, at)).collect()
}

/// Family documentation under the cursor (field docs, placeholder types).
pub fn hover(workspace: &Workspace, at: Cursor) -> Option<HoverInfo> {
    FAMILIES.iter().find_map(|family| family.hover(workspace, at))
}

pub fn definitions(workspace: &Workspace, at: Cursor) -> Vec<Target> {
    FAMILIES.iter().flat_map(|family| family.definitions(workspace, at)).collect()
}

pub fn references(workspace: &Workspace, at: Cursor) -> Vec<Target> {
    FAMILIES.iter().flat_map(|family| family.references(workspace, at)).collect()
}

/// The span of the name a rename would change; `Err` says why this cannot be renamed.
pub fn prepare_rename(workspace: &Workspace, at: Cursor) -> Result<Span, String> {
    FAMILIES
        .iter()
        .find_map(|family| family.prepare_rename(workspace, at))
        .unwrap_or_else(|| Err("only stage ids, step ids and phase names can be renamed".into()))
}

pub fn rename(workspace: &Workspace, at: Cursor, new_name: &str) -> RenameResult {
    FAMILIES
        .iter()
        .find_map(|family| family.rename(workspace, at, new_name))
        .unwrap_or_else(|| Err("only stage ids, step ids and phase names can be renamed".into()))
}

/// Files the same rename renames (with their new paths), for clients that can rename files.
pub fn renamed_files(workspace: &Workspace, at: Cursor, new_name: &str) -> Vec<(FileId, PathBuf)> {
    FAMILIES.iter().flat_map(|family| family.renamed_files(workspace, at, new_name)).collect()
}

pub fn symbols(workspace: &Workspace, file: FileId) -> Vec<Symbol> {
    FAMILIES.iter().flat_map(|family| family.symbols(workspace, file)).collect()
}

pub fn links(workspace: &Workspace, file: FileId) -> Vec<Link> {
    FAMILIES.iter().flat_map(|family| family.links(workspace, file)).collect()
}

pub fn folds(workspace: &Workspace, file: FileId) -> Vec<Fold> {
    let mut out: Vec<Fold> = FAMILIES.iter().flat_map(|family| family.folds(workspace, file)).collect();
    out.extend(frontmatter_fold(workspace, file));
    out
}

/// Every markdown file with frontmatter folds it, whatever its family.
fn frontmatter_fold(workspace: &Workspace, file: FileId) -> Option<Fold> {
    let source = workspace.file(file);
    let fm = crate::source::frontmatter::split(&source.text)?;
    let close = fm.close_fence?;
    let start_line = source.lines.line_of(fm.open_fence.start);
    let end_line = source.lines.line_of(close.start);
    (end_line > start_line).then_some(Fold { start_line, end_line })
}
