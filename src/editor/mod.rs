//! The editor vocabulary, as plain data on byte offsets: a cursor, what can be typed there,
//! where a name is defined, an outline entry; the one model of a name's definitions, uses and
//! rename (`occurrence`); and the readers families share to find their place in a half-typed
//! file (`yaml_lines`) and the docs of the shipped schemas (`schema`).
//! The families answer in these terms; `ide` asks every family, and `lsp/` converts.

pub(crate) mod occurrence;
pub(crate) mod schema;
pub(crate) mod yaml_lines;

use std::path::PathBuf;

use crate::diagnostic::{Edit, FileId};
use crate::source::Span;
use crate::workspace::Workspace;

/// What a family answers in the editor, as data: one function per feature. Each returns nothing
/// for files the family does not own, so `ide` can ask every family; a family without editor
/// features keeps [`Hooks::NONE`], one with some overrides just those
/// (`Hooks { hover: ide::hover, ..Hooks::NONE }`).
pub struct Hooks {
    pub completions: fn(&Workspace, Cursor) -> Vec<CompletionItem>,
    pub hover: fn(&Workspace, Cursor) -> Option<HoverInfo>,
    pub definitions: fn(&Workspace, Cursor) -> Vec<Target>,
    pub references: fn(&Workspace, Cursor) -> Vec<Target>,
    /// `None` when the cursor is not on something of this family; `Some(Err)` to refuse.
    pub prepare_rename: fn(&Workspace, Cursor) -> Option<Result<Span, String>>,
    pub rename: fn(&Workspace, Cursor, &str) -> Option<RenameResult>,
    /// Files a rename to the new name renames too (a stage's `<id>.cassette.yaml`), with their
    /// new path; clients that cannot rename files keep the old names.
    pub renamed_files: fn(&Workspace, Cursor, &str) -> Vec<(FileId, PathBuf)>,
    pub symbols: fn(&Workspace, FileId) -> Vec<Symbol>,
    pub links: fn(&Workspace, FileId) -> Vec<Link>,
    pub folds: fn(&Workspace, FileId) -> Vec<Fold>,
}

impl Hooks {
    pub const NONE: Hooks = Hooks {
        completions: |_, _| Vec::new(),
        hover: |_, _| None,
        definitions: |_, _| Vec::new(),
        references: |_, _| Vec::new(),
        prepare_rename: |_, _| None,
        rename: |_, _, _| None,
        renamed_files: |_, _, _| Vec::new(),
        symbols: |_, _| Vec::new(),
        links: |_, _| Vec::new(),
        folds: |_, _| Vec::new(),
    };
}

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
