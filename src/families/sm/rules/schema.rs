//! `completionSchema` and `inputsSchema` must be valid JSON Schemas, checked offline.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::diagnostic::Diagnostic;
use crate::families::sm::model::StageDoc;
use crate::families::sm::{InputsSchemaInvalid, StageCompletionSchemaInvalid};
use crate::source::{Node, Value};
use crate::util::did_you_mean;

/// `$schema` URIs of the drafts the bundled meta-schemas cover.
const KNOWN_DIALECTS: [&str; 5] = [
    "json-schema.org/draft-04/schema",
    "json-schema.org/draft-06/schema",
    "json-schema.org/draft-07/schema",
    "json-schema.org/draft/2019-09/schema",
    "json-schema.org/draft/2020-12/schema",
];

/// The seven JSON Schema type names.
const JSON_TYPES: [&str; 7] = ["string", "number", "integer", "boolean", "object", "array", "null"];

/// Meta-validation errors shown per schema; the rest are usually consequences.
const MAX_ERRORS: usize = 10;

pub(super) fn check(stage: &StageDoc, out: &mut Vec<Diagnostic>) {
    for (field, code) in [("completionSchema", StageCompletionSchemaInvalid), ("inputsSchema", InputsSchemaInvalid)] {
        if let Some(schema) = stage.field(field).filter(|n| n.as_map().is_some()) {
            check_schema(stage, field, code, schema, out);
        }
    }
}

fn check_schema(stage: &StageDoc, field: &str, code: &'static str, schema: &Node, out: &mut Vec<Diagnostic>) {
    let file = stage.id();
    check_refs(stage, field, code, schema, schema, out);
    if let Some(dialect) = schema.get("$schema") {
        let known = dialect.as_str().is_some_and(|uri| {
            let uri = uri.trim_end_matches('#');
            KNOWN_DIALECTS.iter().any(|d| uri == format!("http://{d}") || uri == format!("https://{d}"))
        });
        if !known {
            out.push(Diagnostic::new(
                code,
                file,
                dialect.span,
                format!(
                    "`{field}` declares an unknown `$schema` {}; stagelint validates drafts 4, 6, 7, 2019-09 and 2020-12 and does not fetch meta-schemas",
                    stage.source_text(dialect.span)
                ),
            ));
            return;
        }
    }
    let json = schema.to_json();
    // The validator must never take the process down; a panic becomes one finding.
    let result = catch_unwind(AssertUnwindSafe(|| -> Vec<(String, String)> {
        let Ok(validator) = jsonschema::meta::validator_for(&json) else {
            return vec![(String::new(), "the meta-schema could not be loaded".into())];
        };
        validator.iter_errors(&json).take(MAX_ERRORS).map(|e| (e.instance_path().to_string(), e.to_string())).collect()
    }));
    let errors = result.unwrap_or_else(|_| vec![(String::new(), "the schema could not be checked".into())]);
    let mut seen = std::collections::HashSet::new();
    for (pointer, message) in errors {
        if !seen.insert(pointer.clone()) {
            continue;
        }
        let node = schema.pointer(&pointer).unwrap_or(schema);
        let keyword = pointer.rsplit('/').next().filter(|k| !k.is_empty());
        let message = match (keyword, node.as_str()) {
            (Some("type"), Some(name)) if !JSON_TYPES.contains(&name) => {
                let hint =
                    did_you_mean(name, JSON_TYPES).map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default();
                format!(
                    "invalid `{field}`: `{name}` is not a JSON Schema type{hint}; use one of {}",
                    JSON_TYPES.join(", ")
                )
            }
            (Some(keyword), _) => format!("invalid `{field}`: at `{keyword}`: {message}"),
            (None, _) => format!("invalid `{field}`: {message}"),
        };
        out.push(Diagnostic::new(code, file, node.span, message).with_help(
            "the completion channel and Setup validate against this schema; an invalid schema fails the stage at Init",
        ));
    }
}

/// Reports `$ref`s that are not local pointers, and local pointers that land nowhere.
fn check_refs(stage: &StageDoc, field: &str, code: &'static str, root: &Node, node: &Node, out: &mut Vec<Diagnostic>) {
    match &node.value {
        Value::Map(entries) => {
            for entry in entries {
                let key = entry.key_str().unwrap_or("");
                if matches!(key, "$ref" | "$dynamicRef" | "$recursiveRef") {
                    if let Some(target) = entry.value.as_str() {
                        check_ref(stage, field, code, root, &entry.value, target, out);
                    }
                } else {
                    check_refs(stage, field, code, root, &entry.value, out);
                }
            }
        }
        Value::Seq(items) => items.iter().for_each(|item| check_refs(stage, field, code, root, item, out)),
        _ => {}
    }
}

fn check_ref(
    stage: &StageDoc,
    field: &str,
    code: &'static str,
    root: &Node,
    at: &Node,
    target: &str,
    out: &mut Vec<Diagnostic>,
) {
    let file = stage.id();
    let Some(fragment) = target.strip_prefix('#') else {
        out.push(Diagnostic::new(
            code,
            file,
            at.span,
            format!(
                "`{field}` refers to `{target}`, which stagelint does not resolve: remote and file references are never fetched; inline the schema or point into `#/$defs/...`"
            ),
        ));
        return;
    };
    // `#anchor` (no slash) names a `$anchor`; only JSON Pointers can be checked here.
    if fragment.is_empty() || !fragment.starts_with('/') {
        return;
    }
    let decoded = fragment.replace("%25", "%").replace("%22", "\"");
    if root.pointer(&decoded).is_none() {
        out.push(Diagnostic::new(
            code,
            file,
            at.span,
            format!("`$ref` `{target}` points to nothing in `{field}`; add the definition or fix the pointer"),
        ));
    }
}
