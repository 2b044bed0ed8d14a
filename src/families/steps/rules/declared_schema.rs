//! `steps/SchemaViolation`: the registry and agent.json validated against the local file their
//! `$schema` names (never fetched).

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::files::brace;
use crate::diagnostic::Diagnostic;
use crate::families::steps::SchemaViolation;
use crate::families::steps::model::{Agent, Doc};
use crate::source::{Node, Span, json};
use crate::workspace::FileKind;

/// Errors reported per file; the rest are usually consequences of the first ones.
const MAX_SCHEMA_ERRORS: usize = 50;

/// Validates the registry and agent.json against the local file their `$schema` names. Runs
/// after every other rule of the agent: an error at a place another `steps/` finding already
/// points into is that finding's defect and is not reported again.
pub(super) fn check_schema_violations(agent: &Agent, out: &mut Vec<Diagnostic>) {
    for doc in std::iter::once(agent.registry).chain(agent.agent_json) {
        validate_against_declared(agent, doc, out);
    }
}

/// One validation error, detached from the validator's lifetimes.
struct Violation {
    pointer: String,
    kind: ViolationKind,
    message: String,
    /// Where in the schema file the failing keyword is (a JSON Pointer), when known.
    keyword: Option<String>,
}

enum ViolationKind {
    Additional(Vec<String>),
    Required(String),
    Other,
}

fn validate_against_declared(agent: &Agent, doc: &Doc, out: &mut Vec<Diagnostic>) {
    let Some(root) = doc.root() else { return };
    let Some(target) = root.get("$schema").and_then(Node::as_str) else { return };
    if target.contains("://") {
        return;
    }
    let Some(dir) = doc.path().parent() else { return };
    let path = crate::workspace::discover::normalize(&dir.join(target));
    let Some(schema_file) = agent.workspace.file_at(&path).filter(|f| f.kind == FileKind::JsonSchema) else {
        return;
    };
    let parsed = json::parse(&schema_file.text);
    let Some(schema_root) = parsed.root.filter(|_| parsed.errors.is_empty()) else { return };
    let schema = schema_root.to_json();
    if has_non_local_ref(&schema) {
        return;
    }
    let instance = root.to_json();
    // The validator must never take the process down; a panic means no finding.
    let violations = catch_unwind(AssertUnwindSafe(|| -> Option<Vec<Violation>> {
        let validator = jsonschema::options().build(&schema).ok()?;
        Some(
            validator
                .iter_errors(&instance)
                .take(MAX_SCHEMA_ERRORS)
                .map(|e| {
                    let kind = match e.kind() {
                        jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => {
                            ViolationKind::Additional(unexpected.clone())
                        }
                        jsonschema::error::ValidationErrorKind::Required { property } => ViolationKind::Required(
                            property.as_str().map_or_else(|| property.to_string(), String::from),
                        ),
                        _ => ViolationKind::Other,
                    };
                    let keyword = e
                        .absolute_keyword_location()
                        .and_then(|uri| uri.as_str().split_once('#').map(|(_, f)| percent_decode(f)))
                        .or_else(|| Some(e.schema_path().to_string()));
                    Violation { pointer: e.instance_path().to_string(), kind, message: e.to_string(), keyword }
                })
                .collect(),
        )
    }));
    let Ok(Some(violations)) = violations else { return };
    let schema_name = path.file_name().and_then(|n| n.to_str()).unwrap_or(target);
    let file = doc.id();
    let mut found: Vec<Diagnostic> = Vec::new();
    for violation in violations {
        let Some(node) = root.pointer(&violation.pointer) else { continue };
        let at = if violation.pointer.is_empty() {
            "at the top level".to_string()
        } else {
            format!("at `{}`", violation.pointer)
        };
        let mut located: Vec<(Span, String)> = Vec::new();
        match &violation.kind {
            ViolationKind::Additional(keys) => {
                for key in keys {
                    let escaped = key.replace('~', "~0").replace('/', "~1");
                    let span =
                        root.pointer_key(&format!("{}/{escaped}", violation.pointer)).map_or(node.span, |k| k.span);
                    located.push((
                        span,
                        format!("`{key}` is not allowed {at}: `{schema_name}` admits no other keys there"),
                    ));
                }
            }
            ViolationKind::Required(property) => {
                located.push((brace(node), format!("missing `{property}` {at}, which `{schema_name}` requires")));
            }
            ViolationKind::Other => {
                located.push((node.span, format!("{at}: {} (per `{schema_name}`)", violation.message)));
            }
        }
        for (span, message) in located {
            let covered = out.iter().chain(&found).any(|d| d.file == file && overlaps(d.span, span));
            if covered {
                continue;
            }
            let mut d = Diagnostic::new(SchemaViolation, file, span, message);
            if let Some(keyword) = violation.keyword.as_deref().and_then(|p| schema_root.pointer(p)) {
                d = d.with_related(schema_file.id, keyword.span, "the schema's constraint");
            }
            found.push(d);
        }
    }
    out.extend(found);
}

fn overlaps(a: Span, b: Span) -> bool {
    if a.is_empty() || b.is_empty() {
        return a.start == b.start;
    }
    a.start < b.end && b.start < a.end
}

/// Whether a `$ref` leaves the document (a remote or file reference is never fetched).
fn has_non_local_ref(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Object(map) => map
            .iter()
            .any(|(key, v)| (key == "$ref" && v.as_str().is_some_and(|r| !r.starts_with('#'))) || has_non_local_ref(v)),
        serde_json::Value::Array(items) => items.iter().any(has_non_local_ref),
        _ => false,
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && bytes[i + 1].is_ascii_hexdigit()
            && bytes[i + 2].is_ascii_hexdigit()
            && let Ok(b) = u8::from_str_radix(&text[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
