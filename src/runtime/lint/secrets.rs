//! `cassette/SecretInRecording`: an API key, token or private key in any string of a cassette.
//! The fix writes the value's stable placeholder (`«redacted:anthropic-key»`), which request
//! fingerprints treat as the value it replaced (they hash redacted text).

use crate::diagnostic::{Applicability, Diagnostic, Edit};
use crate::source::{Node, Span, Value, json, yaml, yaml_write};
use crate::template::secrets::{self, Mode, placeholder};
use crate::workspace::SourceFile;

use super::SecretInRecording;

pub fn check(file: &SourceFile, is_json: bool, out: &mut Vec<Diagnostic>) {
    let parsed = if is_json { json::parse(&file.text) } else { yaml::parse(&file.text) };
    if let Some(root) = &parsed.root {
        strings(root, &mut |node, text| report(file, is_json, node, text, out));
        if !is_json {
            comments(file, root, out);
        }
    }
}

/// Keys in YAML comments: a comment is committed with the cassette as much as a string is.
/// A `#` starts a comment at the start of a line or after a blank, outside every scalar.
fn comments(file: &SourceFile, root: &Node, out: &mut Vec<Diagnostic>) {
    let mut scalars = Vec::new();
    leaves(root, &mut scalars);
    scalars.sort_by_key(|s: &Span| s.start);
    let inside = |at: usize| {
        let i = scalars.partition_point(|s| s.start <= at);
        i > 0 && scalars[i - 1].end > at
    };
    let text = &file.text;
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let base = line_start;
        line_start += line.len();
        let bytes = line.as_bytes();
        let Some(hash) = (0..bytes.len()).find(|&i| {
            bytes[i] == b'#' && (i == 0 || bytes[i - 1] == b' ' || bytes[i - 1] == b'\t') && !inside(base + i)
        }) else {
            continue;
        };
        let comment = line[hash..].trim_end_matches(['\n', '\r']);
        for secret in secrets::find(comment, Mode::Lint) {
            let span = Span::new(base + hash + secret.span.start, base + hash + secret.span.end);
            let kind = secret.kind;
            out.push(
                Diagnostic::new(
                    SecretInRecording,
                    file.id,
                    span,
                    format!("this comment holds what looks like a real secret ({kind}); a cassette is committed, comments and all, so the secret is published with it"),
                )
                .with_help("revoke the secret, then replace it with a placeholder or delete the comment")
                .with_fix(
                    format!("Replace with `{}`", placeholder(kind)),
                    Applicability::Unsafe,
                    vec![Edit { span, replacement: placeholder(kind) }],
                ),
            );
        }
    }
}

/// The spans of every scalar of the tree (its keys included).
fn leaves(node: &Node, out: &mut Vec<Span>) {
    match &node.value {
        Value::Seq(items) => items.iter().for_each(|n| leaves(n, out)),
        Value::Map(entries) => entries.iter().for_each(|e| {
            leaves(&e.key, out);
            leaves(&e.value, out);
        }),
        _ => out.push(node.span),
    }
}

/// Every string scalar of the tree, keys included (depth is bounded by the reader).
fn strings(node: &Node, visit: &mut dyn FnMut(&Node, &str)) {
    match &node.value {
        Value::String(text) => visit(node, text),
        Value::Seq(items) => items.iter().for_each(|n| strings(n, visit)),
        Value::Map(entries) => entries.iter().for_each(|e| {
            strings(&e.key, visit);
            strings(&e.value, visit);
        }),
        _ => {}
    }
}

fn report(file: &SourceFile, is_json: bool, node: &Node, text: &str, out: &mut Vec<Diagnostic>) {
    let found = secrets::find(text, Mode::Lint);
    if found.is_empty() {
        return;
    }
    let raw = file.text.get(node.span.start..node.span.end).unwrap_or_default();
    for secret in found {
        let value = &text[secret.span.start..secret.span.end];
        let kind = secret.kind;
        let message = format!(
            "this string holds what looks like a real secret ({kind}); a cassette is committed, so the secret is published with it"
        );
        // The value as written, when the scalar holds it verbatim (no escapes inside it);
        // otherwise the whole scalar, rewritten with the value redacted.
        let (span, replacement) = match verbatim(raw, value) {
            Some((start, end)) => {
                let span = Span::new(node.span.start + start, node.span.start + end);
                (span, placeholder(kind))
            }
            None => {
                let mut redacted = String::with_capacity(text.len());
                redacted.push_str(&text[..secret.span.start]);
                redacted.push_str(&placeholder(kind));
                redacted.push_str(&text[secret.span.end..]);
                let quoted = if is_json {
                    serde_json::to_string(&redacted).unwrap_or_default()
                } else {
                    yaml_write::double_quoted(&redacted)
                };
                (node.span, quoted)
            }
        };
        // The finding points at the secret even when the fix rewrites the whole scalar (a PEM
        // key in a quoted string, its lines joined by `\n` escapes): its first line to its last.
        let shown = match lines_extent(raw, value).or_else(|| anchored_extent(raw, value)) {
            Some((start, end)) if span == node.span => Span::new(node.span.start + start, node.span.start + end),
            _ => span,
        };
        out.push(
            Diagnostic::new(SecretInRecording, file.id, shown, message)
                .with_help("revoke the secret, then replace it with a placeholder; `cassette import` and recording redact by default")
                .with_fix(
                    format!("Replace with `{}`", placeholder(kind)),
                    Applicability::Unsafe,
                    vec![Edit { span, replacement }],
                ),
        );
    }
}

/// Where `value` is written in the scalar's source `raw`: verbatim, or for a value over several
/// lines of a block scalar (a PEM key), from its first line to its last, the indentation between.
fn verbatim(raw: &str, value: &str) -> Option<(usize, usize)> {
    if let Some(at) = raw.find(value) {
        return Some((at, at + value.len()));
    }
    let (start, end) = lines_extent(raw, value)?;
    let between: Vec<&str> = raw[start..end].lines().map(str::trim_start).collect();
    (between == value.lines().collect::<Vec<_>>()).then_some((start, end))
}

/// In `raw`, from the first line of `value` to its last, whatever is written between them.
/// The key's extent in `raw` when an escape inside it (`sk-ant-\u0061pi03-…`) keeps it from
/// appearing as written: from its first few characters to its last few, when both do.
fn anchored_extent(raw: &str, value: &str) -> Option<(usize, usize)> {
    const ANCHOR: usize = 6;
    let head = value.get(..ANCHOR)?;
    let tail = value.get(value.len().checked_sub(ANCHOR)?..)?;
    let start = raw.find(head)?;
    let end = start + ANCHOR + raw[start + ANCHOR..].find(tail)? + tail.len();
    Some((start, end))
}

fn lines_extent(raw: &str, value: &str) -> Option<(usize, usize)> {
    let (first, last) = (value.lines().next()?, value.lines().last()?);
    if first.is_empty() || last.is_empty() {
        return None;
    }
    let start = raw.find(first)?;
    Some((start, start + raw[start..].rfind(last)? + last.len()))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::config::Config;
    use crate::workspace::{FileKind, Workspace};

    #[test]
    fn a_key_joined_by_escapes_is_reported_on_the_key_and_fixed_in_the_whole_string() {
        // Found by an outside audit: a PEM key inside a double-quoted string (its lines joined
        // by `\n` escapes) was reported on the whole string, not on the key.
        let key = "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACB\\n-----END OPENSSH PRIVATE KEY-----";
        let text = format!("cassette: 1\nstage: plan\ntools:\n  Read:\n    - result: \"id_rsa:\\n{key}\\nend\"\n");
        let mut workspace = Workspace::new();
        let path = PathBuf::from("/w/plan.cassette.yaml");
        let config = Arc::new(Config::defaults(std::path::Path::new("/w")));
        let id = workspace.add(path, "plan.cassette.yaml".into(), text.clone(), FileKind::Cassette, config);
        let mut out = Vec::new();
        check(workspace.file(id), false, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        let shown = &text[out[0].span.start..out[0].span.end];
        assert_eq!(shown, key);
        let (_, edit) = &out[0].fix.as_ref().expect("a fix").edits[0];
        assert!(text[edit.span.start..edit.span.end].starts_with("\"id_rsa:"), "the fix rewrites the whole scalar");
        assert!(edit.replacement.contains("«redacted:private-key»"), "{}", edit.replacement);
    }

    #[test]
    fn a_key_with_an_escape_inside_is_reported_on_the_key() {
        // Found by an outside audit: `\u0061` for the `a` of `api03` hid the key from a verbatim
        // search, and the finding covered the whole string, quotes and words around it.
        let raw_key = "sk-ant-\\u0061pi03-Qx7fK2mZp9LwR4tYb8NcV1sD6hJ3gE5uA0oIxMzWqRkTyUiOpLk";
        let text = format!("cassette: 1\nstage: plan\nctx:\n  task: \"escaped {raw_key} here\"\n");
        let mut workspace = Workspace::new();
        let config = Arc::new(Config::defaults(std::path::Path::new("/w")));
        let id =
            workspace.add(PathBuf::from("/w/plan.cassette.yaml"), "p".into(), text.clone(), FileKind::Cassette, config);
        let mut out = Vec::new();
        check(workspace.file(id), false, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(&text[out[0].span.start..out[0].span.end], raw_key);
        let (_, edit) = &out[0].fix.as_ref().expect("a fix").edits[0];
        assert_eq!(edit.replacement, "\"escaped «redacted:anthropic-key» here\"");
    }
}
