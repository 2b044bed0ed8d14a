//! Byte offset to line/column conversion (UTF-8 columns for people, UTF-16 for SARIF and LSP).
//! Lines break where LSP says they do, and editors show them: at `\n`, `\r\n` and a lone `\r`
//! (not at U+2028, U+2029, NEL, VT or form feed), so the CLI and the server give the same lines.
//! A leading byte order mark is no column: editors hide it, so `1:8` must mean what they show.
//! Spans still count its bytes.

/// 1-based line, 1-based column counted in Unicode scalar values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    pub line: usize,
    pub column: usize,
}

/// Start offsets of every line of a text; built once per file.
#[derive(Clone, Debug)]
pub struct LineIndex {
    line_starts: Vec<usize>,
    /// Per line: whether it is all ASCII, so columns are byte differences (no scan of long lines).
    ascii: Vec<bool>,
    len: usize,
    /// Bytes of a leading UTF-8 byte order mark (3, or 0 when there is none).
    bom: usize,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = vec![0];
        let mut ascii = Vec::new();
        let mut line_ascii = true;
        let bytes = text.as_bytes();
        let bom = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
        for (i, &b) in bytes.iter().enumerate().skip(bom) {
            line_ascii &= b.is_ascii();
            if b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
                line_starts.push(i + 1);
                ascii.push(line_ascii);
                line_ascii = true;
            }
        }
        ascii.push(line_ascii);
        // Every file keeps its index for the whole check.
        line_starts.shrink_to_fit();
        ascii.shrink_to_fit();
        LineIndex { line_starts, ascii, len: text.len(), bom }
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// 0-based line holding `offset` (offsets past the end clamp to the last line).
    pub fn line_of(&self, offset: usize) -> usize {
        let offset = offset.min(self.len);
        match self.line_starts.binary_search(&offset) {
            Ok(line) => line,
            Err(next) => next - 1,
        }
    }

    /// Byte offset where 0-based `line` starts.
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts.get(line).copied().unwrap_or(self.len)
    }

    /// Byte offset where the columns of 0-based `line` start: its start, or after a byte order
    /// mark on the first line.
    pub fn column_start(&self, line: usize) -> usize {
        if line == 0 { self.bom } else { self.line_start(line) }
    }

    /// Byte offset of the end of 0-based `line`, excluding its line break.
    pub fn line_end(&self, text: &str, line: usize) -> usize {
        let next = self.line_starts.get(line + 1).copied().unwrap_or(self.len);
        let bytes = text.as_bytes();
        let start = self.line_start(line);
        let mut end = next;
        if end > start && bytes.get(end - 1) == Some(&b'\n') {
            end -= 1;
        }
        if end > start && bytes.get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        end
    }

    /// The line break ending 0-based `line` (`"\n"`, `"\r\n"`, `"\r"`, or `""` for the last line).
    pub fn line_break<'t>(&self, text: &'t str, line: usize) -> &'t str {
        let next = self.line_starts.get(line + 1).copied().unwrap_or(self.len);
        &text[self.line_end(text, line)..next]
    }

    /// 1-based line and column (in characters) of `offset`; an offset inside a byte order mark
    /// is column 1, one inside a CRLF (between the two) the end of its line, as in the server.
    pub fn line_col(&self, text: &str, offset: usize) -> LineCol {
        let offset = floor_char_boundary(text, offset);
        let line = self.line_of(offset);
        let start = self.column_start(line);
        let offset = offset.max(start).min(self.line_end(text, line).max(start));
        let column = if self.ascii[line] { offset - start + 1 } else { text[start..offset].chars().count() + 1 };
        LineCol { line: line + 1, column }
    }

    /// 1-based line and column counted in UTF-16 code units (SARIF `utf16CodeUnits`).
    pub fn line_col_utf16(&self, text: &str, offset: usize) -> LineCol {
        let offset = floor_char_boundary(text, offset);
        let line = self.line_of(offset);
        let start = self.column_start(line);
        let offset = offset.max(start).min(self.line_end(text, line).max(start));
        let column = if self.ascii[line] {
            offset - start + 1
        } else {
            text[start..offset].chars().map(char::len_utf16).sum::<usize>() + 1
        };
        LineCol { line: line + 1, column }
    }
}

/// Largest char boundary `<= offset` (spans from other tools may land mid-character).
pub fn floor_char_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_and_utf16_units() {
        let text = "ab\né😀x\n";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(index.line_col(text, x), LineCol { line: 2, column: 3 });
        assert_eq!(index.line_col_utf16(text, x), LineCol { line: 2, column: 4 });
        assert_eq!(index.line_col(text, 0), LineCol { line: 1, column: 1 });
        assert_eq!(index.line_col(text, text.len()), LineCol { line: 3, column: 1 });
    }

    #[test]
    fn only_lf_crlf_and_lone_cr_break_lines() {
        let text = "a\rb\r\nc\nd\u{2028}e\u{85}f\u{c}g\u{b}h\u{2029}i";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 4);
        let lines: Vec<&str> = (0..4).map(|l| &text[index.line_start(l)..index.line_end(text, l)]).collect();
        assert_eq!(lines, ["a", "b", "c", "d\u{2028}e\u{85}f\u{c}g\u{b}h\u{2029}i"]);
        assert_eq!([0, 1, 2, 3].map(|l| index.line_break(text, l)), ["\r", "\r\n", "\n", ""]);
        let i = text.find('i').unwrap();
        assert_eq!(index.line_col(text, i), LineCol { line: 4, column: 11 });
        assert_eq!(index.line_col_utf16(text, i), LineCol { line: 4, column: 11 });
    }

    #[test]
    fn a_byte_order_mark_is_no_column() {
        let text = "\u{feff}entry: strat\nnext: \u{feff}z\n";
        let index = LineIndex::new(text);
        let strat = text.find("strat").unwrap();
        assert_eq!(index.line_col(text, strat), LineCol { line: 1, column: 8 });
        assert_eq!(index.line_col_utf16(text, strat), LineCol { line: 1, column: 8 });
        assert_eq!(index.line_col(text, 0), LineCol { line: 1, column: 1 });
        assert_eq!(index.line_col(text, 3), LineCol { line: 1, column: 1 });
        assert_eq!(index.column_start(0), 3);
        // Only a leading one: elsewhere U+FEFF is a character like any other.
        let z = text.find('z').unwrap();
        assert_eq!(index.line_col(text, z), LineCol { line: 2, column: 8 });
        let plain = LineIndex::new("entry: strat\n");
        assert_eq!(plain.line_col("entry: strat\n", 7), LineCol { line: 1, column: 8 });
        assert_eq!(plain.column_start(0), 0);
    }

    /// Found by the language server's property test: a span ending between the `\r` and `\n`
    /// of a CRLF (`stagelint/SkillFrontmatter` on a first line) was one column past the line
    /// in the command line's output, and at the line's end in the server's.
    #[test]
    fn an_offset_inside_a_crlf_is_the_end_of_its_line() {
        let text = "abc\r\ndé\r\n";
        let index = LineIndex::new(text);
        assert_eq!(index.line_col(text, 4), LineCol { line: 1, column: 4 });
        assert_eq!(index.line_col_utf16(text, 4), LineCol { line: 1, column: 4 });
        assert_eq!(index.line_col(text, 3), LineCol { line: 1, column: 4 });
        assert_eq!(index.line_col(text, 5), LineCol { line: 2, column: 1 });
        let inside = text.len() - 1;
        assert_eq!(index.line_col(text, inside), LineCol { line: 2, column: 3 });
        assert_eq!(index.line_col_utf16(text, inside), LineCol { line: 2, column: 3 });
    }

    #[test]
    fn line_end_excludes_crlf() {
        let text = "a\r\nbc\r\n";
        let index = LineIndex::new(text);
        assert_eq!(&text[index.line_start(1)..index.line_end(text, 1)], "bc");
    }
}
