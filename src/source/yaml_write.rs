//! Writing YAML: quoted scalars for fixes, and a small writer for `serde_json::Value`, for
//! cassettes people read and edit.
//!
//! Block style throughout, keys in their stored order, multi-line strings as `|` literals, and a
//! string quoted whenever a YAML reader could take it for something else (`yes`, `null`, `1.0`,
//! `- x`, `a: b`, `#x`). What it writes reads back to the same value (`tests/cassette_import.rs`).

use serde_json::{Map, Value};

/// Characters YAML does not allow as they are: C0/C1 controls, DEL, BOM, non-characters and
/// the Unicode line separators (which YAML 1.1 readers treat as line breaks).
pub fn needs_escape(c: char) -> bool {
    matches!(c, '\0'..='\x1f' | '\x7f'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}')
}

/// `s` as a YAML double-quoted scalar, escaped so it reads back unchanged.
pub fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if needs_escape(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `s` (one line) as a quoted YAML scalar for a fix that quotes a value: single quotes when it
/// holds `"` but no `'` (so nothing needs escaping), else double quotes with escapes.
pub fn quoted_scalar(s: &str) -> String {
    if s.contains('"') && !s.contains('\'') && !s.chars().any(needs_escape) {
        format!("'{s}'")
    } else {
        double_quoted(s)
    }
}

/// The YAML text of `value`, ending with a newline.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => write_map(&mut out, map, 0, false),
        Value::Array(items) if !items.is_empty() => write_seq(&mut out, items, 0, false),
        scalar => {
            // A literal block's lines are indented here too: at column 0 a `---` or `...` line
            // would end the document.
            write_scalar(&mut out, scalar, 2);
            // `write_scalar` starts with the space that follows `key:`; a document has none.
            out.remove(0);
        }
    }
    out
}

/// Entries at column `indent`; with `inline` the first one continues the current line (after `- `).
fn write_map(out: &mut String, map: &Map<String, Value>, indent: usize, inline: bool) {
    for (i, (key, value)) in map.iter().enumerate() {
        if i > 0 || !inline {
            push_indent(out, indent);
        }
        if key.chars().count() > 1000 {
            // YAML caps implicit keys at 1024 characters; longer ones need the explicit `? ` form.
            out.push_str("? ");
            out.push_str(&double_quoted(key));
            out.push('\n');
            push_indent(out, indent);
        } else {
            out.push_str(&key_text(key));
        }
        out.push(':');
        write_child(out, value, indent + 2, false);
    }
}

fn write_seq(out: &mut String, items: &[Value], indent: usize, inline: bool) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 || !inline {
            push_indent(out, indent);
        }
        out.push('-');
        write_child(out, item, indent + 2, true);
    }
}

/// The value after `key:` or `-`: a collection on the next lines at `indent`, or (`inline`, after
/// `-`) starting on this line; a scalar on this line.
fn write_child(out: &mut String, value: &Value, indent: usize, inline: bool) {
    let separator = if inline { ' ' } else { '\n' };
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push(separator);
            write_map(out, map, indent, inline);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push(separator);
            write_seq(out, items, indent, inline);
        }
        scalar => write_scalar(out, scalar, indent),
    }
}

/// ` value\n` for a scalar or an empty collection; a literal block's lines go at `block_indent`.
fn write_scalar(out: &mut String, value: &Value, block_indent: usize) {
    out.push(' ');
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::Object(_) => out.push_str("{}"),
        Value::Array(_) => out.push_str("[]"),
        Value::String(s) if literal_ok(s) => {
            // Chomping keeps exactly the trailing newlines the string has.
            let body = s.trim_end_matches('\n');
            out.push_str(match s.len() - body.len() {
                0 => "|-",
                1 => "|",
                _ => "|+",
            });
            for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
                out.push('\n');
                if !line.is_empty() {
                    out.push_str(&" ".repeat(block_indent));
                    out.push_str(line);
                }
            }
        }
        Value::String(s) if plain_ok(s) => out.push_str(s),
        Value::String(s) => out.push_str(&double_quoted(s)),
    }
    out.push('\n');
}

fn push_indent(out: &mut String, indent: usize) {
    out.push_str(&" ".repeat(indent));
}

fn key_text(key: &str) -> String {
    if plain_ok(key) { key.to_string() } else { double_quoted(key) }
}

/// A literal block holds the text as is: it needs a line break, nothing that must be escaped,
/// and a first line that does not start with a space (which would set the block's indentation).
fn literal_ok(s: &str) -> bool {
    s.contains('\n')
        && s.chars().any(|c| !c.is_whitespace())
        && !s.trim_start_matches('\n').starts_with([' ', '\t'])
        && s.chars().all(|c| c == '\n' || (c != '\t' && c != '\r' && !needs_escape(c)))
        // Trailing spaces are invisible and editors strip them; a space-only line would also
        // read as indentation. Such text is quoted instead.
        && s.split('\n').all(|line| !line.ends_with(' '))
}

/// Plain (unquoted) is fine when the text cannot be read as another type, an indicator or a comment.
fn plain_ok(s: &str) -> bool {
    let Some(first) = s.chars().next() else { return false };
    let reserved = ["null", "~", "true", "false", "yes", "no", "on", "off", "y", "n", "<<"];
    !reserved.iter().any(|r| s.eq_ignore_ascii_case(r))
        // Indicators, and anything that might be a number (`1`, `-2`, `+3`, `.5`, `.inf`).
        && !"-?:,[]{}#&*!|>'\"%@`+.=".contains(first)
        && !first.is_ascii_digit()
        && !s.starts_with(' ')
        && !s.ends_with([' ', ':'])
        && !s.contains(": ")
        && !s.contains(" #")
        && s.chars().all(|c| c != '\t' && c != '\n' && c != '\r' && !needs_escape(c))
}

#[cfg(test)]
mod tests {
    use super::{quoted_scalar, to_yaml};
    use crate::source::Node;
    use serde_json::json;

    /// Found by the `yaml_roundtrip` fuzz target: a document that is one multi-line string
    /// wrote its lines at column 0, where `...` ends the document (and `---` starts another).
    #[test]
    fn a_document_string_with_marker_lines_reads_back() {
        for text in ["...\n\n", "a\n---\nb", "x\n... y\n"] {
            let written = to_yaml(&json!(text));
            let parsed = crate::source::yaml::parse(&written);
            assert!(parsed.errors.is_empty(), "{written:?}: {:?}", parsed.errors);
            assert_eq!(parsed.root.as_ref().and_then(Node::as_str), Some(text), "{written:?}");
        }
    }

    #[test]
    fn layout() {
        let value = json!({
            "a": {"b": [1, {"c": "x", "d": []}, [true, null]]},
            "empty": {},
            "text": "line 1\nline 2\n",
        });
        let expected = "a:\n  b:\n    - 1\n    - c: x\n      d: []\n    - - true\n      - null\nempty: {}\ntext: |\n  line 1\n  line 2\n";
        assert_eq!(to_yaml(&value), expected);
    }

    #[test]
    fn quoting() {
        for (s, written) in [
            ("yes", "\"yes\""),
            ("Null", "\"Null\""),
            ("1.0", "\"1.0\""),
            ("a: b", "\"a: b\""),
            ("- x", "\"- x\""),
            ("#x", "\"#x\""),
            ("x #y", "\"x #y\""),
            ("", "\"\""),
            ("tab\there", "\"tab\\there\""),
            ("bell\u{7}", "\"bell\\u0007\""),
            ("plain words, with commas", "plain words, with commas"),
        ] {
            assert_eq!(to_yaml(&json!(s)), format!("{written}\n"), "{s:?}");
        }
    }

    #[test]
    fn a_quoted_scalar_reads_back_as_the_same_string() {
        for value in
            ["{{issueTitle}} started", r"{{x}} in C:\temp", r#"{{x}} says "hi""#, r#"it's "{{x}}""#, "{{x}}\u{7}"]
        {
            let text = format!("k: {}\n", quoted_scalar(value));
            assert_eq!(
                crate::source::yaml::parse(&text).root.expect("parses").get("k").and_then(Node::as_str),
                Some(value),
                "{text}"
            );
        }
        assert_eq!(quoted_scalar(r#"a "b""#), r#"'a "b"'"#);
    }
}
