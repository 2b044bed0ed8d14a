//! SARIF 2.1.0 for code-scanning services: one rule descriptor per code, results with
//! 1-based lines and UTF-16 columns (`columnKind: utf16CodeUnits`), related locations, fixes
//! a partial fingerprint that survives lines moving, and the findings a baseline accepts as
//! results with an external suppression. What the run assumed (the upstream release linted
//! for) is a `note` in the invocation's `toolExecutionNotifications`.

use std::collections::HashMap;
use std::io::{self, Write};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::diagnostic::{Diagnostic, Severity};
use crate::families::{self, Note, RuleMeta};
use crate::render::rule_url;
use crate::source::Span;
use crate::workspace::{SourceFile, Workspace};

/// The schema the output declares (the OASIS errata 01 schema, `tests/sarif/`).
pub const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The `partialFingerprints` key; its value hashes the code, the path and the trimmed text of
/// the finding's first line (and an occurrence count), not the line number.
pub const FINGERPRINT_KEY: &str = "stagelint/v1";

/// Relative paths are relative to this base, which `originalUriBaseIds` maps to the current
/// directory.
const SRCROOT: &str = "%SRCROOT%";

pub fn render(
    out: &mut dyn Write,
    workspace: &Workspace,
    diagnostics: &[Diagnostic],
    notes: &[Note],
) -> io::Result<()> {
    let rules: Vec<&RuleMeta> = families::all_rules().collect();
    // A run names each rule once, so one base serves them all: the first that a checked file's
    // configuration sets (one project, one base; the JSON output takes each finding's own).
    let docs_base = workspace.reported_files().find_map(|file| file.config.docs_url.as_deref());
    let index: HashMap<&str, usize> = rules.iter().enumerate().map(|(i, r)| (r.code, i)).collect();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let results: Vec<Value> = diagnostics
        .iter()
        .map(|d| {
            let file = workspace.file(d.file);
            let base = fingerprint_base(file, d);
            let occurrence = seen.entry(base.clone()).and_modify(|n| *n += 1).or_insert(0);
            result(workspace, d, index.get(d.code).copied(), fingerprint(&base, *occurrence))
        })
        .collect();
    let mut run = json!({
        "tool": {"driver": {
            "name": "stagelint",
            "version": env!("CARGO_PKG_VERSION"),
            "semanticVersion": env!("CARGO_PKG_VERSION"),
            "informationUri": env!("CARGO_PKG_REPOSITORY"),
            "rules": rules.iter().map(|r| descriptor(r, docs_base)).collect::<Vec<_>>(),
        }},
        "columnKind": "utf16CodeUnits",
        "results": results,
    });
    if !notes.is_empty() {
        let notifications: Vec<Value> = notes
            .iter()
            .map(|n| json!({"level": "note", "message": {"text": n.message}, "properties": {"family": n.family}}))
            .collect();
        run["invocations"] = json!([{"executionSuccessful": true, "toolExecutionNotifications": notifications}]);
    }
    if let Some(root) = current_dir_uri() {
        run["originalUriBaseIds"] = json!({SRCROOT: {"uri": root}});
    }
    let log = json!({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]});
    serde_json::to_writer_pretty(&mut *out, &log)?;
    writeln!(out)
}

/// `error`, `warning` or `note` (SARIF has no hint level).
pub fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info | Severity::Hint => "note",
    }
}

fn descriptor(rule: &RuleMeta, docs_base: Option<&str>) -> Value {
    let name = rule.code.split_once('/').map_or(rule.code, |(_, name)| name);
    let url = rule_url(docs_base, rule.code);
    let mut value = json!({
        "id": rule.code,
        "name": name,
        "shortDescription": {"text": rule.summary()},
        "fullDescription": {"text": what_it_does(rule.doc).unwrap_or_else(|| rule.summary().to_string())},
        "help": {"text": format!("{} ({url})", rule.summary()), "markdown": rule.doc.trim_end()},
        "helpUri": url,
        "defaultConfiguration": {"level": level(rule.severity)},
        "properties": {"tags": [rule.family()]},
    });
    if !rule.aliases.is_empty() {
        let aliases: Vec<String> = rule.aliases.iter().map(|a| format!("{}/{a}", rule.family())).collect();
        value["properties"]["aliases"] = json!(aliases);
    }
    value
}

/// The text of a doc's `## What it does` section, joined into one paragraph.
fn what_it_does(doc: &str) -> Option<String> {
    let start = doc.find("## What it does")?;
    let body = doc[start..].lines().skip(1).take_while(|line| !line.starts_with("## "));
    let text = body.map(str::trim).filter(|line| !line.is_empty()).collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

fn result(workspace: &Workspace, d: &Diagnostic, rule_index: Option<usize>, fingerprint: String) -> Value {
    let file = workspace.file(d.file);
    let mut text = d.message.clone();
    if let Some(help) = &d.help {
        text.push_str("\nhelp: ");
        text.push_str(help);
    }
    let mut value = json!({
        "ruleId": d.code,
        "level": level(d.severity),
        "message": {"text": text},
        "locations": [{"physicalLocation": physical(file, d.span)}],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
    });
    if let Some(index) = rule_index {
        value["ruleIndex"] = json!(index);
    }
    if d.baselined {
        // Kept, marked as accepted outside the source: code-scanning services show it as
        // suppressed instead of new.
        let baseline = file.config.baseline.as_deref().and_then(|p| p.file_name()).map(|n| n.to_string_lossy());
        let justification = format!("accepted in the baseline {}", baseline.unwrap_or_default());
        value["suppressions"] = json!([{"kind": "external", "status": "accepted", "justification": justification}]);
    }
    if !d.related.is_empty() {
        let related: Vec<Value> = d
            .related
            .iter()
            .enumerate()
            .map(|(id, r)| {
                let other = workspace.file(r.file.unwrap_or(d.file));
                json!({"id": id, "physicalLocation": physical(other, r.span), "message": {"text": r.message}})
            })
            .collect();
        value["relatedLocations"] = json!(related);
    }
    if let Some(fix) = &d.fix {
        // One artifact change per file the fix edits.
        let changes: Vec<Value> = fix
            .files()
            .into_iter()
            .map(|id| {
                let target = workspace.file(id);
                let replacements: Vec<Value> = fix
                    .edits
                    .iter()
                    .filter(|(file, _)| *file == id)
                    .map(|(_, e)| {
                        json!({"deletedRegion": region(target, e.span), "insertedContent": {"text": e.replacement}})
                    })
                    .collect();
                json!({"artifactLocation": artifact(target), "replacements": replacements})
            })
            .collect();
        if !changes.is_empty() {
            value["fixes"] = json!([{
                "description": {"text": fix.title},
                "artifactChanges": changes,
                "properties": {"applicability": fix.applicability},
            }]);
        }
    }
    value
}

fn physical(file: &SourceFile, span: Span) -> Value {
    json!({"artifactLocation": artifact(file), "region": region(file, span)})
}

/// 1-based lines, 1-based UTF-16 columns; `endColumn` is the column after the last character.
fn region(file: &SourceFile, span: Span) -> Value {
    let start = file.lines().line_col_utf16(&file.text, span.start);
    let end = file.lines().line_col_utf16(&file.text, span.end);
    json!({"startLine": start.line, "startColumn": start.column, "endLine": end.line, "endColumn": end.column})
}

fn artifact(file: &SourceFile) -> Value {
    let path = file.display.replace('\\', "/");
    if std::path::Path::new(&file.display).is_absolute() {
        json!({"uri": file_uri(&path)})
    } else {
        json!({"uri": percent_encode(&path), "uriBaseId": SRCROOT})
    }
}

fn current_dir_uri() -> Option<String> {
    let cwd = std::env::current_dir().ok()?;
    let mut uri = file_uri(&cwd.to_string_lossy().replace('\\', "/"));
    if !uri.ends_with('/') {
        uri.push('/');
    }
    Some(uri)
}

/// `file:///abs/path` for an absolute path (`/`-separated; a Windows drive gets a leading `/`).
fn file_uri(path: &str) -> String {
    let path = if path.starts_with('/') { path.to_string() } else { format!("/{path}") };
    // Keep a Windows drive's colon (`/C:/…`); elsewhere `:` is encoded.
    match path.as_bytes() {
        [b'/', drive, b':', ..] if drive.is_ascii_alphabetic() => {
            format!("file:///{}:{}", *drive as char, percent_encode(&path[3..]))
        }
        _ => format!("file://{}", percent_encode(&path)),
    }
}

/// Percent-encodes every byte outside the URI path characters that need no escaping (`:` is
/// encoded too, so a relative path never reads as a scheme).
pub fn percent_encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=@".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn fingerprint_base(file: &SourceFile, d: &Diagnostic) -> String {
    let line = file.lines().line_of(d.span.start);
    let text = &file.text[file.lines().line_start(line)..file.lines().line_end(&file.text, line)];
    format!("{}\0{}\0{}", d.code, file.display, text.trim())
}

fn fingerprint(base: &str, occurrence: usize) -> String {
    let digest = Sha256::digest(format!("{base}\0{occurrence}").as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_percent_encoded_uris() {
        assert_eq!(percent_encode("a dir/ß.md"), "a%20dir/%C3%9F.md");
        assert_eq!(percent_encode("a:b/100%.md"), "a%3Ab/100%25.md");
        assert_eq!(file_uri("/tmp/x y"), "file:///tmp/x%20y");
        assert_eq!(file_uri("C:/w/x.md"), "file:///C:/w/x.md");
    }

    #[test]
    fn full_description_is_the_what_it_does_section() {
        let doc = "# sm/X\n\nsummary\n\n## What it does\nChecks a\nthing.\n\n## Why is this bad?\nBecause.\n";
        assert_eq!(what_it_does(doc).as_deref(), Some("Checks a thing."));
        assert_eq!(what_it_does("# sm/X\n\nsummary\n"), None);
    }

    #[test]
    fn levels_map_info_and_hint_to_note() {
        assert_eq!(level(Severity::Error), "error");
        assert_eq!(level(Severity::Warning), "warning");
        assert_eq!(level(Severity::Info), "note");
        assert_eq!(level(Severity::Hint), "note");
    }
}
