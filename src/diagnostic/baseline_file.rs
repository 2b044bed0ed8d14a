//! The baseline file (`stagelint-baseline.json`): findings a project accepted as they were, so
//! that only new ones are reported. An entry names a finding by its code, its file (relative to
//! the baseline's directory, with `/`) and a fingerprint of the text it points at and of that
//! text's line, never by line number: lines added above a finding keep it baselined, changing
//! the offending text makes it new. Identical findings in one file are one entry with a count.
//!
//! The file is written sorted, one entry a line, so that it is the same on every run and a
//! change of one finding is a one-line diff.

use std::fmt::Write;

use sha2::{Digest, Sha256};

use crate::source::Span;

/// The version of the file format, written and required.
pub const VERSION: i64 = 1;

/// The file `--write-baseline` writes when none is named or configured.
pub const DEFAULT_NAME: &str = "stagelint-baseline.json";

/// One accepted finding (or `count` identical ones).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub code: String,
    /// Relative to the baseline file's directory, `/`-separated.
    pub path: String,
    pub fingerprint: String,
    pub count: u32,
    /// The message when it was recorded: for people reading the file, never matched.
    pub message: String,
    /// Where the entry is in the file (empty when it was never read from one).
    pub span: Span,
    /// Where its `count` value is, when read from a file.
    pub count_span: Option<Span>,
}

/// A baseline file read: its entries and what is wrong with it.
#[derive(Debug, Default)]
pub struct BaselineFile {
    pub entries: Vec<Entry>,
    /// Problems that make the file unusable, with where they are.
    pub problems: Vec<(Span, String)>,
}

/// Reads a baseline file's text. Never fails: a text that is not a baseline has problems.
pub fn parse(text: &str) -> BaselineFile {
    let parsed = crate::source::json::parse(text);
    let mut out = BaselineFile::default();
    if let Some(error) = parsed.errors.first() {
        out.problems.push((error.span, format!("not valid JSON: {}", error.message)));
        return out;
    }
    let Some(root) = parsed.root.filter(|root| root.as_map().is_some()) else {
        out.problems.push((Span::empty(0), "a baseline is a JSON object with `version` and `findings`".into()));
        return out;
    };
    match root.get("version") {
        Some(version) if version.as_i64() == Some(VERSION) => {}
        Some(version) => out.problems.push((
            version.span,
            format!("baseline version {} is not one this stagelint reads (it reads version {VERSION}); write it again with `stagelint check --write-baseline`", version.scalar_text()),
        )),
        None => out.problems.push((root.span, format!("a baseline needs `\"version\": {VERSION}`"))),
    }
    let Some(findings) = root.get("findings").and_then(|f| f.as_seq()) else {
        let span = root.get("findings").map_or(root.span, |f| f.span);
        out.problems.push((span, "a baseline needs `findings`, a list of entries".into()));
        return out;
    };
    for item in findings {
        let text_of = |key: &str| item.get(key).and_then(|v| v.as_str()).map(str::to_string);
        let count = item.get("count");
        let number = count.map_or(Some(1), |c| c.as_i64().filter(|n| (1..=i64::from(u32::MAX)).contains(n)));
        match (text_of("code"), text_of("path"), text_of("fingerprint"), number) {
            (Some(code), Some(path), Some(fingerprint), Some(number)) => out.entries.push(Entry {
                code,
                path,
                fingerprint,
                count: number as u32,
                message: text_of("message").unwrap_or_default(),
                span: item.span,
                count_span: count.map(|c| c.span),
            }),
            _ => out.problems.push((
                item.span,
                "an entry needs `code`, `path` and `fingerprint` (strings) and `count` (a positive whole number)"
                    .into(),
            )),
        }
    }
    out
}

/// The baseline file for `entries`: sorted by path, code and fingerprint, one entry a line.
pub fn write(entries: &[Entry]) -> String {
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by(|a, b| (&a.path, &a.code, &a.fingerprint).cmp(&(&b.path, &b.code, &b.fingerprint)));
    let mut out = format!("{{\n  \"version\": {VERSION},\n  \"findings\": [");
    for (i, entry) in sorted.iter().enumerate() {
        let line = serde_json::json!({
            "path": entry.path,
            "code": entry.code,
            "fingerprint": entry.fingerprint,
            "count": entry.count,
            "message": entry.message,
        });
        let separator = if i == 0 { "" } else { "," };
        let _ = write!(out, "{separator}\n    {line}");
    }
    if !sorted.is_empty() {
        out.push_str("\n  ");
    }
    out.push_str("]\n}\n");
    out
}

/// The fingerprint of a finding at `span` in `text`: the first line of the text it points at
/// and the whole line it starts on, each with its whitespace runs made one space (reindenting
/// the line keeps it), hashed (SHA-256, the first 16 hex digits).
pub fn fingerprint(text: &str, span: Span) -> String {
    let start = floor_char(text, span.start.min(text.len()));
    let end = floor_char(text, span.end.clamp(start, text.len()));
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let pointed = text[start..end].lines().next().unwrap_or("");
    let mut hasher = Sha256::new();
    hasher.update(squeeze(pointed).as_bytes());
    hasher.update([0]);
    hasher.update(squeeze(&text[line_start..line_end]).as_bytes());
    hasher.finalize().iter().take(8).fold(String::with_capacity(16), |mut out, byte| {
        let _ = write!(out, "{byte:02x}");
        out
    })
}

/// `text` with each run of whitespace made one space, trimmed.
fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The char boundary at or before `at`.
fn floor_char(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, code: &str, fingerprint: &str, count: u32) -> Entry {
        Entry {
            code: code.into(),
            path: path.into(),
            fingerprint: fingerprint.into(),
            count,
            message: "m".into(),
            span: Span::default(),
            count_span: None,
        }
    }

    #[test]
    fn written_sorted_one_entry_a_line_and_read_back() {
        let entries = [entry("b.md", "sm/X", "00", 2), entry("a.md", "sm/Y", "11", 1), entry("a.md", "sm/X", "22", 1)];
        let text = write(&entries);
        assert_eq!(
            text,
            "{\n  \"version\": 1,\n  \"findings\": [\n    \
             {\"path\":\"a.md\",\"code\":\"sm/X\",\"fingerprint\":\"22\",\"count\":1,\"message\":\"m\"},\n    \
             {\"path\":\"a.md\",\"code\":\"sm/Y\",\"fingerprint\":\"11\",\"count\":1,\"message\":\"m\"},\n    \
             {\"path\":\"b.md\",\"code\":\"sm/X\",\"fingerprint\":\"00\",\"count\":2,\"message\":\"m\"}\n  ]\n}\n"
        );
        let read = parse(&text);
        assert!(read.problems.is_empty(), "{:?}", read.problems);
        let found: Vec<(&str, &str, u32)> =
            read.entries.iter().map(|e| (e.path.as_str(), e.code.as_str(), e.count)).collect();
        assert_eq!(found, [("a.md", "sm/X", 1), ("a.md", "sm/Y", 1), ("b.md", "sm/X", 2)]);
        assert_eq!(write(&[]), "{\n  \"version\": 1,\n  \"findings\": []\n}\n");
    }

    #[test]
    fn the_fingerprint_ignores_other_lines_and_indentation_but_not_the_text() {
        let text = "a: 1\ntools: [Reed]\n";
        let at = text.find("Reed").unwrap();
        let span = Span::new(at, at + 4);
        let moved = "# new line\na: 2\n    tools:   [Reed]\n";
        let moved_at = moved.find("Reed").unwrap();
        assert_eq!(fingerprint(text, span), fingerprint(moved, Span::new(moved_at, moved_at + 4)));
        let changed = "a: 1\ntools: [Reed, Grep]\n";
        assert_ne!(fingerprint(text, span), fingerprint(changed, span));
        // Two findings on one line point at different text.
        let two = "tools: [Reed, Grpe]\n";
        let (a, b) = (two.find("Reed").unwrap(), two.find("Grpe").unwrap());
        assert_ne!(fingerprint(two, Span::new(a, a + 4)), fingerprint(two, Span::new(b, b + 4)));
        // Spans past the end or inside a character are clamped, not a panic.
        assert_eq!(fingerprint("é", Span::new(1, 99)).len(), 16);
    }

    #[test]
    fn problems_name_what_is_wrong() {
        let cases = [
            ("not json", "not valid JSON"),
            ("[]", "a JSON object"),
            ("{\"version\": 2, \"findings\": []}", "version 2"),
            ("{\"findings\": []}", "needs `\"version\": 1`"),
            ("{\"version\": 1}", "needs `findings`"),
            ("{\"version\": 1, \"findings\": [{\"code\": \"sm/X\"}]}", "an entry needs"),
            (
                "{\"version\": 1, \"findings\": [{\"code\": \"a\", \"path\": \"b\", \"fingerprint\": \"c\", \"count\": 0}]}",
                "positive",
            ),
        ];
        for (text, wanted) in cases {
            let read = parse(text);
            assert!(read.problems.iter().any(|(_, m)| m.contains(wanted)), "{text}: {:?}", read.problems);
        }
    }
}
