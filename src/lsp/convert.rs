//! The only place that knows LSP positions: byte offsets ↔ `Position` in the negotiated
//! encoding, and our diagnostics ↔ protocol diagnostics.
//!
//! A leading byte order mark is a character in a text the client sent (an open document: the
//! client counts what it sent, and its edits do), and none in a file read from disk, which
//! editors load without it (`source::LineIndex`, and the command line, count columns after it).

use tower_lsp_server::ls_types::{
    self as lsp, CodeDescription, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Position,
    Range, Uri,
};

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Diagnostic, Edit, FileId, Severity};
use crate::source::{LineIndex, Span, line_index::floor_char_boundary};
use crate::workspace::{SourceFile, Workspace};

/// How `Position.character` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Encoding {
    Utf8,
    /// The protocol's default.
    #[default]
    Utf16,
}

/// How the client counts the characters of one text: in its encoding, and with a leading byte
/// order mark as a character when the text is one the client sent (`bom`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Columns {
    pub encoding: Encoding,
    pub bom: bool,
}

impl Columns {
    /// A text the client sent: an open document.
    pub fn sent(encoding: Encoding) -> Columns {
        Columns { encoding, bom: true }
    }

    /// A file read from disk, as editors load it.
    pub fn read(encoding: Encoding) -> Columns {
        Columns { encoding, bom: false }
    }

    /// Byte offset where the columns of `line` start.
    fn line_start(self, lines: &LineIndex, line: usize) -> usize {
        if self.bom { lines.line_start(line) } else { lines.column_start(line) }
    }
}

impl Encoding {
    pub fn kind(self) -> lsp::PositionEncodingKind {
        match self {
            Encoding::Utf8 => lsp::PositionEncodingKind::UTF8,
            Encoding::Utf16 => lsp::PositionEncodingKind::UTF16,
        }
    }

    /// UTF-8 when the client offers it (no conversion needed), else the protocol default.
    pub fn negotiate(offered: Option<&[lsp::PositionEncodingKind]>) -> Encoding {
        match offered {
            Some(kinds) if kinds.contains(&lsp::PositionEncodingKind::UTF8) => Encoding::Utf8,
            _ => Encoding::Utf16,
        }
    }
}

pub fn position(text: &str, lines: &LineIndex, offset: usize, columns: Columns) -> Position {
    let offset = floor_char_boundary(text, offset);
    let line = lines.line_of(offset);
    // An offset inside a byte order mark is just after it (where the command line puts it,
    // column 1, whether or not the client counts the mark); one inside a CRLF (between the two)
    // is the end of its line, as the position reads back.
    let start = columns.line_start(lines, line);
    let after_mark = lines.column_start(line);
    let offset = offset.max(after_mark).min(lines.line_end(text, line).max(after_mark));
    let character = match columns.encoding {
        Encoding::Utf8 => offset - start,
        Encoding::Utf16 => text[start..offset].chars().map(char::len_utf16).sum(),
    };
    Position { line: line as u32, character: character as u32 }
}

/// The byte offset of `pos`; past the end of a line clamps to the line's end, past the last
/// line to the end of text.
pub fn offset(text: &str, lines: &LineIndex, pos: Position, columns: Columns) -> usize {
    let line = pos.line as usize;
    if line >= lines.line_count() {
        return text.len();
    }
    let start = columns.line_start(lines, line);
    let end = lines.line_end(text, line);
    let wanted = pos.character as usize;
    match columns.encoding {
        Encoding::Utf8 => floor_char_boundary(text, (start + wanted).min(end)),
        Encoding::Utf16 => {
            let mut units = 0;
            for (i, c) in text[start..end].char_indices() {
                if units >= wanted {
                    return start + i;
                }
                units += c.len_utf16();
            }
            end
        }
    }
}

pub fn range(file: &SourceFile, span: Span, open: &Open) -> Range {
    let columns = open.columns(&file.path);
    Range {
        start: position(&file.text, file.lines(), span.start, columns),
        end: position(&file.text, file.lines(), span.end, columns),
    }
}

pub fn span(file: &SourceFile, range: Range, open: &Open) -> Span {
    let columns = open.columns(&file.path);
    let start = offset(&file.text, file.lines(), range.start, columns);
    let end = offset(&file.text, file.lines(), range.end, columns);
    Span::new(start.min(end), end.max(start))
}

/// The byte offset of `pos` in `file`.
pub fn offset_in(file: &SourceFile, pos: Position, open: &Open) -> usize {
    offset(&file.text, file.lines(), pos, open.columns(&file.path))
}

/// The `file://` URI of a workspace file.
pub fn uri(file: &SourceFile) -> Option<Uri> {
    Uri::from_file_path(&file.path)
}

/// How the client sees the files of one analysis: its position encoding, and the documents it
/// has open, as it named them (the URI it sent: its spelling of percent-escapes, or an
/// `untitled:` URI) with the version of the text the analysis read.
#[derive(Default, Clone)]
pub struct Open {
    pub encoding: Encoding,
    pub uris: HashMap<PathBuf, Uri>,
    pub versions: HashMap<PathBuf, i32>,
    /// Whether findings a baseline accepts are hidden (`initializationOptions.baselined:
    /// "hide"`) instead of shown as hints.
    pub hide_baselined: bool,
    /// Where rule links lead for this client.
    pub rule_links: crate::lsp::rule_docs::RuleLinks,
}

impl Open {
    /// Whether `d` is shown at all: a baselined finding is not when the client asked so.
    pub fn shows(&self, d: &Diagnostic) -> bool {
        !(d.baselined && self.hide_baselined)
    }

    /// The URI to name `file` by: the client's for an open document, else its `file://` URI.
    pub fn uri(&self, file: &SourceFile) -> Option<Uri> {
        self.uris.get(&file.path).cloned().or_else(|| uri(file))
    }

    /// The version of an open document.
    pub fn version(&self, path: &Path) -> Option<i32> {
        self.versions.get(path).copied()
    }

    /// How the client counts in the file at `path`: the text it sent, or the file on disk.
    pub fn columns(&self, path: &Path) -> Columns {
        if self.versions.contains_key(path) { Columns::sent(self.encoding) } else { Columns::read(self.encoding) }
    }
}

/// A finding as a protocol diagnostic, naming open documents in related locations as the
/// client does.
pub fn diagnostic(workspace: &Workspace, d: &Diagnostic, open: &Open) -> lsp::Diagnostic {
    let file = workspace.file(d.file);
    let severity = match d.severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
        Severity::Hint => DiagnosticSeverity::HINT,
    };
    let related: Vec<DiagnosticRelatedInformation> = d
        .related
        .iter()
        .filter_map(|r| {
            let other = workspace.file(r.file.unwrap_or(d.file));
            Some(DiagnosticRelatedInformation {
                location: Location { uri: open.uri(other)?, range: range(other, r.span, open) },
                message: r.message.clone(),
            })
        })
        .collect();
    // Baselined: accepted debt, a hint labelled by its source (the LSP's two tags, unnecessary
    // and deprecated, would fade or strike out the text, which says something else).
    let (severity, source) =
        if d.baselined { (DiagnosticSeverity::HINT, "stagelint baseline") } else { (severity, "stagelint") };
    let mut message = d.message.clone();
    if let Some(help) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    lsp::Diagnostic {
        range: range(file, d.span, open),
        severity: Some(severity),
        code: Some(NumberOrString::String(d.code.to_string())),
        code_description: open
            .rule_links
            .href(file.config.docs_url.as_deref(), d.code)
            .map(|href| CodeDescription { href }),
        source: Some(source.into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: d.baselined.then(|| serde_json::json!({"baselined": true})),
    }
}

pub fn locations(workspace: &Workspace, targets: &[crate::ide::Target], open: &Open) -> Vec<Location> {
    targets
        .iter()
        .filter_map(|t| {
            let file = workspace.file(t.file);
            Some(Location { uri: open.uri(file)?, range: range(file, t.span, open) })
        })
        .collect()
}

/// A workspace edit, as ordered `documentChanges` (files in path order) when the client
/// supports them, else the `changes` map. Open documents are named by the client's URI, and in
/// `documentChanges` carry the version the edit was computed on.
pub fn workspace_edit(
    workspace: &Workspace,
    edits: &[(FileId, Edit)],
    document_changes: bool,
    open: &Open,
) -> lsp::WorkspaceEdit {
    let mut by_file: std::collections::BTreeMap<&std::path::Path, (Uri, Vec<lsp::TextEdit>)> =
        std::collections::BTreeMap::new();
    for (id, edit) in edits {
        let file = workspace.file(*id);
        let Some(uri) = open.uri(file) else { continue };
        let text_edit = lsp::TextEdit { range: range(file, edit.span, open), new_text: edit.replacement.clone() };
        by_file.entry(&file.path).or_insert_with(|| (uri, Vec::new())).1.push(text_edit);
    }
    if !document_changes {
        let changes = by_file.into_values().collect();
        return lsp::WorkspaceEdit { changes: Some(changes), ..lsp::WorkspaceEdit::default() };
    }
    let edits = by_file
        .into_iter()
        .map(|(path, (uri, edits))| lsp::TextDocumentEdit {
            text_document: lsp::OptionalVersionedTextDocumentIdentifier { uri, version: open.version(path) },
            edits: edits.into_iter().map(lsp::OneOf::Left).collect(),
        })
        .collect();
    lsp::WorkspaceEdit { document_changes: Some(lsp::DocumentChanges::Edits(edits)), ..lsp::WorkspaceEdit::default() }
}

/// [`workspace_edit`] as ordered `documentChanges` followed by file renames (after the edits,
/// which name the files by their old URIs). An existing target is never overwritten.
pub fn workspace_edit_renaming(
    workspace: &Workspace,
    edits: &[(FileId, Edit)],
    renames: &[(FileId, std::path::PathBuf)],
    open: &Open,
) -> lsp::WorkspaceEdit {
    let mut edit = workspace_edit(workspace, edits, true, open);
    if renames.is_empty() {
        return edit;
    }
    let mut operations: Vec<lsp::DocumentChangeOperation> = match edit.document_changes.take() {
        Some(lsp::DocumentChanges::Edits(edits)) => edits.into_iter().map(lsp::DocumentChangeOperation::Edit).collect(),
        Some(lsp::DocumentChanges::Operations(operations)) => operations,
        None => Vec::new(),
    };
    for (id, to) in renames {
        let (Some(old_uri), Some(new_uri)) = (open.uri(workspace.file(*id)), Uri::from_file_path(to)) else { continue };
        let options = lsp::RenameFileOptions { overwrite: Some(false), ignore_if_exists: Some(true) };
        operations.push(lsp::DocumentChangeOperation::Op(lsp::ResourceOp::Rename(lsp::RenameFile {
            old_uri,
            new_uri,
            options: Some(options),
            annotation_id: None,
        })));
    }
    lsp::WorkspaceEdit { document_changes: Some(lsp::DocumentChanges::Operations(operations)), ..edit }
}

pub fn completion(file: &SourceFile, item: crate::ide::CompletionItem, open: &Open) -> lsp::CompletionItem {
    completion_in(&file.text, file.lines(), item, open.columns(&file.path))
}

/// [`completion`] for a text that is not a workspace file (a `stagelint.toml`).
pub fn completion_in(
    text: &str,
    lines: &LineIndex,
    item: crate::ide::CompletionItem,
    columns: Columns,
) -> lsp::CompletionItem {
    use crate::ide::CompletionKind;
    let kind = match item.kind {
        CompletionKind::Field => lsp::CompletionItemKind::FIELD,
        CompletionKind::Value => lsp::CompletionItemKind::ENUM_MEMBER,
        CompletionKind::Reference => lsp::CompletionItemKind::REFERENCE,
        CompletionKind::Variable => lsp::CompletionItemKind::VARIABLE,
    };
    let new_text = item.insert.clone().unwrap_or_else(|| item.label.clone());
    lsp::CompletionItem {
        label: item.label,
        kind: Some(kind),
        detail: item.detail,
        documentation: item.documentation.map(|value| {
            lsp::Documentation::MarkupContent(lsp::MarkupContent { kind: lsp::MarkupKind::Markdown, value })
        }),
        text_edit: Some(lsp::CompletionTextEdit::Edit(lsp::TextEdit {
            range: Range {
                start: position(text, lines, item.replace.start, columns),
                end: position(text, lines, item.replace.end, columns),
            },
            new_text,
        })),
        ..lsp::CompletionItem::default()
    }
}

#[allow(deprecated)]
pub fn symbol(file: &SourceFile, symbol: crate::ide::Symbol, open: &Open) -> lsp::DocumentSymbol {
    let kind = match symbol.kind {
        crate::ide::SymbolKind::Node => lsp::SymbolKind::CLASS,
        crate::ide::SymbolKind::Field => lsp::SymbolKind::FIELD,
    };
    lsp::DocumentSymbol {
        name: symbol.name,
        detail: symbol.detail,
        kind,
        tags: None,
        deprecated: None,
        range: range(file, symbol.span, open),
        selection_range: range(file, symbol.selection, open),
        children: (!symbol.children.is_empty())
            .then(|| symbol.children.into_iter().map(|c| self::symbol(file, c, open)).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip_in_both_encodings() {
        let text = "a: é😀x\nb\r\nlast";
        let lines = LineIndex::new(text);
        let x = text.find('x').unwrap_or(0);
        let (utf8_columns, utf16_columns) = (Columns::read(Encoding::Utf8), Columns::read(Encoding::Utf16));
        let utf16 = position(text, &lines, x, utf16_columns);
        assert_eq!(utf16, Position { line: 0, character: 6 });
        let utf8 = position(text, &lines, x, utf8_columns);
        assert_eq!(utf8, Position { line: 0, character: 9 });
        assert_eq!(offset(text, &lines, utf16, utf16_columns), x);
        assert_eq!(offset(text, &lines, utf8, utf8_columns), x);
        // Past the end of a line clamps before its line break.
        let b_end = offset(text, &lines, Position { line: 1, character: 99 }, utf16_columns);
        assert_eq!(&text[b_end..b_end + 2], "\r\n");
        assert_eq!(offset(text, &lines, Position { line: 9, character: 0 }, utf16_columns), text.len());
    }

    /// Found by the `render` fuzz target: an offset between the `\r` and `\n` of a CRLF was
    /// one character past the end of its line, which reads back as the end of the line.
    #[test]
    fn an_offset_inside_a_crlf_is_the_end_of_its_line() {
        let text = "---\r\nid: x\r\n";
        let lines = LineIndex::new(text);
        for encoding in [Encoding::Utf8, Encoding::Utf16] {
            let columns = Columns::sent(encoding);
            assert_eq!(position(text, &lines, 4, columns), Position { line: 0, character: 3 });
            assert_eq!(position(text, &lines, 3, columns), Position { line: 0, character: 3 });
            assert_eq!(position(text, &lines, 5, columns), Position { line: 1, character: 0 });
        }
    }

    /// A byte order mark in a file read from disk, which editors load without it, is no
    /// character: `strat` is at 0:7 as they show it, and 0:7 maps back to it.
    #[test]
    fn a_byte_order_mark_read_from_disk_is_no_character() {
        let text = "\u{feff}entry: strat\n";
        let lines = LineIndex::new(text);
        let strat = text.find("strat").unwrap_or(0);
        for encoding in [Encoding::Utf8, Encoding::Utf16] {
            let columns = Columns::read(encoding);
            assert_eq!(position(text, &lines, strat, columns), Position { line: 0, character: 7 });
            assert_eq!(position(text, &lines, 0, columns), Position { line: 0, character: 0 });
            assert_eq!(offset(text, &lines, Position { line: 0, character: 7 }, columns), strat);
            assert_eq!(offset(text, &lines, Position { line: 0, character: 0 }, columns), 3);
        }
    }

    /// In a text the client sent, a byte order mark is a character, as the client counts it
    /// (one UTF-16 unit, three UTF-8 bytes), and as `documents` applies its edits: 0:0 is
    /// before it, so an edit can remove it. What the server reports is never inside or before
    /// it.
    #[test]
    fn a_byte_order_mark_the_client_sent_is_a_character() {
        let text = "\u{feff}entry: strat\n";
        let lines = LineIndex::new(text);
        let strat = text.find("strat").unwrap_or(0);
        for (encoding, bom) in [(Encoding::Utf8, 3), (Encoding::Utf16, 1)] {
            let columns = Columns::sent(encoding);
            let at = Position { line: 0, character: 7 + bom };
            assert_eq!(position(text, &lines, strat, columns), at);
            assert_eq!(offset(text, &lines, at, columns), strat);
            assert_eq!(offset(text, &lines, Position { line: 0, character: 0 }, columns), 0);
            assert_eq!(offset(text, &lines, Position { line: 0, character: bom }, columns), 3);
            // A finding at offset 0 is after the mark, where the command line shows it (found
            // by an outside audit: an empty `sm.yaml` holding only a mark was reported at 0:0).
            assert_eq!(position(text, &lines, 0, columns), Position { line: 0, character: bom });
            assert_eq!(
                position("\u{feff}", &LineIndex::new("\u{feff}"), 0, columns),
                Position { line: 0, character: bom }
            );
        }
        let mut open = Open::default();
        open.versions.insert(PathBuf::from("/w/sm.yaml"), 1);
        assert_eq!(open.columns(Path::new("/w/sm.yaml")), Columns::sent(Encoding::Utf16));
        assert_eq!(open.columns(Path::new("/w/plan.md")), Columns::read(Encoding::Utf16));
    }
}
