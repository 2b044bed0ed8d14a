//! Open documents: ropey text, applied edits in order, and the version each edit produced.
//! ropey is built with `cr_lines`, so its lines are LSP's (and `source::LineIndex`'s): `\n`,
//! `\r\n` and `\r` end a line; U+2028, U+2029, NEL, VT and form feed do not.

use ropey::Rope;
use tower_lsp_server::ls_types::{Position, TextDocumentContentChangeEvent};

use crate::lsp::convert::Encoding;

/// One document the client has open.
#[derive(Debug, Clone)]
pub struct OpenDocument {
    pub rope: Rope,
    pub version: i32,
}

impl OpenDocument {
    pub fn new(text: &str, version: i32) -> OpenDocument {
        OpenDocument { rope: Rope::from_str(text), version }
    }

    /// Applies one change (a range edit, or the whole text when `range` is absent).
    pub fn apply(&mut self, change: &TextDocumentContentChangeEvent, encoding: Encoding) {
        match change.range {
            Some(range) => {
                let start = self.char_index(range.start, encoding);
                let end = self.char_index(range.end, encoding).max(start);
                self.rope.remove(start..end);
                self.rope.insert(start, &change.text);
            }
            None => self.rope = Rope::from_str(&change.text),
        }
    }

    pub fn text(&self) -> String {
        self.rope.to_string()
    }

    /// The rope char index of `pos`, clamped like the protocol says (past a line's end means
    /// the end of that line's content; past the last line means the end of the text).
    fn char_index(&self, pos: Position, encoding: Encoding) -> usize {
        let line = pos.line as usize;
        if line >= self.rope.len_lines() {
            return self.rope.len_chars();
        }
        let line_start = self.rope.line_to_char(line);
        let slice = self.rope.line(line);
        let mut content_chars = slice.len_chars();
        while content_chars > 0 && matches!(slice.char(content_chars - 1), '\n' | '\r') {
            content_chars -= 1;
        }
        let column = match encoding {
            Encoding::Utf16 => slice.utf16_cu_to_char((pos.character as usize).min(slice.len_utf16_cu())),
            Encoding::Utf8 => slice.byte_to_char((pos.character as usize).min(slice.len_bytes())),
        };
        line_start + column.min(content_chars)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::Range;

    fn edit(line: u32, from: u32, to: u32, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range { start: Position { line, character: from }, end: Position { line, character: to } }),
            range_length: None,
            text: text.into(),
        }
    }

    #[test]
    fn utf16_edits_after_astral_characters() {
        let mut doc = OpenDocument::new("name: 😀x\nid: a\n", 1);
        // `x` is at UTF-16 column 8 (the emoji is two code units).
        doc.apply(&edit(0, 8, 9, "y"), Encoding::Utf16);
        assert_eq!(doc.text(), "name: 😀y\nid: a\n");
        doc.apply(&edit(1, 4, 5, "plan"), Encoding::Utf16);
        assert_eq!(doc.text(), "name: 😀y\nid: plan\n");
    }

    #[test]
    fn utf8_edits_and_full_replacement() {
        let mut doc = OpenDocument::new("é: 1\n", 1);
        doc.apply(&edit(0, 4, 5, "2"), Encoding::Utf8);
        assert_eq!(doc.text(), "é: 2\n");
        doc.apply(
            &TextDocumentContentChangeEvent { range: None, range_length: None, text: "x".into() },
            Encoding::Utf8,
        );
        assert_eq!(doc.text(), "x");
    }

    #[test]
    fn only_lf_crlf_and_cr_are_line_breaks() {
        let mut doc = OpenDocument::new("a\u{2028}b\u{85}c\u{c}d\u{b}e\rf\r\ng\n", 1);
        // Line 0 runs to the lone CR; `e` is at column 8.
        doc.apply(&edit(0, 8, 9, "E"), Encoding::Utf16);
        doc.apply(&edit(1, 0, 1, "F"), Encoding::Utf16);
        doc.apply(&edit(2, 0, 1, "G"), Encoding::Utf16);
        assert_eq!(doc.text(), "a\u{2028}b\u{85}c\u{c}d\u{b}E\rF\r\nG\n");
    }

    /// A leading byte order mark the client sent is a character of its text: 0:0 is before it,
    /// 0:0–0:1 (UTF-16) or 0:0–0:3 (UTF-8) removes it, and `convert` counts it the same way, so
    /// a position read back from the analysis lands where the client's edit put the text.
    #[test]
    fn a_leading_byte_order_mark_is_a_character_of_the_clients_text() {
        let mut doc = OpenDocument::new("\u{feff}entry: plna\n", 1);
        doc.apply(&edit(0, 8, 12, "plan"), Encoding::Utf16);
        assert_eq!(doc.text(), "\u{feff}entry: plan\n");
        doc.apply(&edit(0, 0, 1, ""), Encoding::Utf16);
        assert_eq!(doc.text(), "entry: plan\n");
        doc.apply(&edit(0, 0, 0, "\u{feff}"), Encoding::Utf8);
        doc.apply(&edit(0, 3, 8, "first"), Encoding::Utf8);
        assert_eq!(doc.text(), "\u{feff}first: plan\n");
        let text = doc.text();
        let lines = crate::source::LineIndex::new(&text);
        let plan = text.find("plan").unwrap_or(0);
        let columns = crate::lsp::convert::Columns::sent(Encoding::Utf16);
        assert_eq!(crate::lsp::convert::position(&text, &lines, plan, columns), Position { line: 0, character: 8 });
    }

    #[test]
    fn random_edits_match_a_plain_string() {
        // Apply the same edits to a String through UTF-16 columns computed by hand.
        let mut doc = OpenDocument::new("a😀b\nçd\n", 1);
        let mut plain = String::from("a😀b\nçd\n");
        for (line, from, to, text) in [(0u32, 3u32, 4u32, "Z"), (1, 0, 1, "c"), (0, 0, 0, "💡"), (1, 2, 2, "!")] {
            doc.apply(&edit(line, from, to, text), Encoding::Utf16);
            let lines: Vec<&str> = plain.split('\n').collect();
            let to_byte = |l: usize, col: u32| {
                let mut units = 0;
                let base: usize = lines[..l].iter().map(|s| s.len() + 1).sum();
                for (i, c) in lines[l].char_indices() {
                    if units >= col as usize {
                        return base + i;
                    }
                    units += c.len_utf16();
                }
                base + lines[l].len()
            };
            let (a, b) = (to_byte(line as usize, from), to_byte(line as usize, to));
            plain.replace_range(a..b, text);
            assert_eq!(doc.text(), plain);
        }
    }
}
