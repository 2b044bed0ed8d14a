//! `completionSchema` and `inputsSchema` must be valid JSON Schemas, checked offline.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::diagnostic::Diagnostic;
use crate::families::sm::model::StageDoc;
use crate::families::sm::{InputsSchemaInvalid, SchemaRequiredUnknown, StageCompletionSchemaInvalid};
use crate::source::{Node, Value};
use crate::util::{KeyGuess, did_you_mean, did_you_mean_key};

use super::keywords::{SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_VALUED};

/// `$schema` URIs of the drafts the bundled meta-schemas cover.
const KNOWN_DIALECTS: [&str; 5] = [
    "json-schema.org/draft-04/schema",
    "json-schema.org/draft-06/schema",
    "json-schema.org/draft-07/schema",
    "json-schema.org/draft/2019-09/schema",
    "json-schema.org/draft/2020-12/schema",
];

/// The seven JSON Schema type names.
pub(super) const JSON_TYPES: [&str; 7] = ["string", "number", "integer", "boolean", "object", "array", "null"];

/// Meta-validation errors shown per schema; the rest are usually consequences.
const MAX_ERRORS: usize = 10;

pub(super) fn check(stage: &StageDoc, out: &mut Vec<Diagnostic>) {
    for (field, code) in [("completionSchema", StageCompletionSchemaInvalid), ("inputsSchema", InputsSchemaInvalid)] {
        if let Some(schema) = stage.field(field).filter(|n| n.as_map().is_some()) {
            check_schema(stage, field, code, schema, out);
            check_required(stage, field, schema, 0, out);
        }
    }
}

/// A `required` name of `schema` that its `properties` do not declare but nearly do: the
/// property it is a typo of (`taken` when that property is required too). `None` when the name
/// is declared, or resembles no property.
pub(super) fn required_typo<'n>(schema: &'n Node, name: &str) -> Option<KeyGuess<'n>> {
    let properties = schema.get("properties")?.as_map()?;
    let names = properties.iter().filter_map(|e| e.key_str());
    if properties.iter().any(|e| e.key_str() == Some(name)) {
        return None;
    }
    let listed = schema.get("required").and_then(Node::as_seq).unwrap_or_default().iter().filter_map(Node::as_str);
    did_you_mean_key(name, names, listed)
}

/// Keywords through which a property can be declared other than `properties`.
const OTHER_PROPERTY_SOURCES: [&str; 9] = [
    "patternProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "$ref",
    "$dynamicRef",
    "if",
    "dependentSchemas",
    "unevaluatedProperties",
];

/// `sm/SchemaRequiredUnknown`: a `required` name that no property declares, at any depth, when
/// it is a near miss of a property (the model is told the properties, so it writes the declared
/// name and the parse gate fails on the required one every time), or when
/// `additionalProperties: false` means no payload can pass at all. Requiring an undeclared name
/// that resembles no property is valid JSON Schema ("present, any value") and is left alone.
fn check_required(stage: &StageDoc, field: &str, schema: &Node, depth: usize, out: &mut Vec<Diagnostic>) {
    if depth > crate::source::MAX_DEPTH || schema.as_map().is_none() {
        return;
    }
    let declared = schema.get("properties").filter(|p| p.as_map().is_some());
    let open = !OTHER_PROPERTY_SOURCES.iter().any(|k| schema.get(k).is_some());
    if let (Some(properties), Some(required), true) = (declared, schema.get("required").and_then(Node::as_seq), open) {
        let closed = schema.get("additionalProperties").is_some_and(|n| matches!(n.value, Value::Bool(false)));
        for entry in required {
            let Some(name) = entry.as_str() else { continue };
            let guess = required_typo(schema, name);
            if guess.is_none() && !(closed && properties.get(name).is_none()) {
                continue;
            }
            let hint = match guess {
                Some(KeyGuess { name: property, taken: false }) => format!(" (did you mean `{property}`?)"),
                Some(KeyGuess { name: property, taken: true }) => format!(" (`{property}` is required as well)"),
                None => String::new(),
            };
            let consequence = if closed {
                "with `additionalProperties: false` no payload can satisfy it"
            } else {
                "a payload that follows the declared properties fails validation every time"
            };
            out.push(
                Diagnostic::new(
                    SchemaRequiredUnknown,
                    stage.id(),
                    entry.span,
                    format!("`{field}` requires `{name}`, which none of its properties declares{hint}; {consequence}"),
                )
                .with_suggestion(entry.span, KeyGuess::rename(guess)),
            );
        }
    }
    for entry in schema.as_map().unwrap_or_default() {
        let key = entry.key_str().unwrap_or("");
        let value = &entry.value;
        if SCHEMA_VALUED.contains(&key) {
            check_required(stage, field, value, depth + 1, out);
            for item in value.as_seq().unwrap_or_default() {
                check_required(stage, field, item, depth + 1, out);
            }
        } else if SCHEMA_LISTS.contains(&key) {
            for item in value.as_seq().unwrap_or_default() {
                check_required(stage, field, item, depth + 1, out);
            }
        } else if SCHEMA_MAPS.contains(&key) {
            for sub in value.as_map().unwrap_or_default() {
                check_required(stage, field, &sub.value, depth + 1, out);
            }
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
        if keyword == Some("type")
            && let Some(finding) = type_finding(stage, field, node)
        {
            out.push(finding);
            continue;
        }
        let fix = None;
        let message = match (keyword, node.as_str()) {
            (Some(keyword), _) => format!("invalid `{field}`: at `{keyword}`: {message}"),
            (None, _) => format!("invalid `{field}`: {message}"),
        };
        out.push(
            Diagnostic::new(code, file, node.span, message)
                .with_help(
                    "the completion channel and Setup validate against this schema; an invalid schema fails the stage at Init",
                )
                .with_suggestion(node.span, fix),
        );
    }
}

/// An unknown type name in the `type` value `node` (a name or a list of names) of `field`, with
/// its did-you-mean: `sm/StageCompletionSchemaInvalid` or `sm/InputsSchemaInvalid`.
pub(super) fn type_finding(stage: &StageDoc, field: &str, node: &Node) -> Option<Diagnostic> {
    let names: Vec<&Node> = match &node.value {
        Value::Seq(items) => items.iter().collect(),
        _ => vec![node],
    };
    let (name, at) =
        names.iter().find_map(|n| Some((n.as_str()?, n)).filter(|(name, _)| !JSON_TYPES.contains(name)))?;
    let code = if field == "inputsSchema" { InputsSchemaInvalid } else { StageCompletionSchemaInvalid };
    let fix = did_you_mean(name, JSON_TYPES);
    let hint = fix.map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default();
    let message =
        format!("invalid `{field}`: `{name}` is not a JSON Schema type{hint}; use one of {}", JSON_TYPES.join(", "));
    Some(
        Diagnostic::new(code, stage.id(), at.span, message)
            .with_help(
                "the completion channel and Setup validate against this schema; an invalid schema fails the stage at Init",
            )
            .with_suggestion(at.span, fix),
    )
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
