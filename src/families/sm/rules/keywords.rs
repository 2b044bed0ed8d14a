//! `sm/SchemaUnknownKeyword`: a key of a schema object that is no JSON Schema keyword but nearly
//! is one (`requried`, `propertes`). JSON Schema ignores unknown keywords, so the constraint the
//! author meant is silently not applied.

use crate::diagnostic::Diagnostic;
use crate::families::sm::SchemaUnknownKeyword;
use crate::families::sm::model::StageDoc;
use crate::families::sm::rules::schema::type_finding;
use crate::source::Node;
use crate::util::{KeyGuess, did_you_mean_key};

/// Every keyword of drafts 4 to 2020-12 (vocabularies core, applicator, validation, meta-data,
/// format, content, unevaluated) and draft 4's `id`.
#[rustfmt::skip]
const KEYWORDS: [&str; 63] = [
    "$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment", "$defs",
    "$recursiveRef", "$recursiveAnchor", "id", "definitions", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
    "dependentSchemas", "prefixItems", "items", "additionalItems", "contains", "properties", "patternProperties",
    "additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "dependencies", "type",
    "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength",
    "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains", "maxProperties",
    "minProperties", "required", "dependentRequired", "format", "contentEncoding", "contentMediaType",
    "contentSchema", "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
];

/// Keywords whose value is a schema (or, for `items`, a list of schemas in older drafts).
pub(super) const SCHEMA_VALUED: [&str; 13] = [
    "items",
    "additionalItems",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
    "dependencies",
];
pub(super) const SCHEMA_LISTS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
pub(super) const SCHEMA_MAPS: [&str; 5] =
    ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];

pub(super) fn check(stage: &StageDoc, out: &mut Vec<Diagnostic>) {
    for field in ["completionSchema", "inputsSchema"] {
        if let Some(schema) = stage.field(field) {
            walk(stage, field, schema, 0, false, out);
        }
    }
}

/// Walks the schema object `node`. `guessed`: it sits under a misspelt keyword, where the
/// meta-schema validation does not look, so its `type` values are checked here.
fn walk(stage: &StageDoc, field: &str, node: &Node, depth: usize, guessed: bool, out: &mut Vec<Diagnostic>) {
    let Some(entries) = node.as_map() else { return };
    if depth > crate::source::MAX_DEPTH {
        return;
    }
    for entry in entries {
        let Some(key) = entry.key_str() else { continue };
        let (keyword, under_guess) = if KEYWORDS.contains(&key) {
            (key, guessed)
        } else {
            let Some(guess) = did_you_mean_key(key, KEYWORDS, node.keys()) else { continue };
            out.push(finding(stage, field, entry, key, guess));
            (guess.name, true)
        };
        let value = &entry.value;
        if keyword == "type" && under_guess {
            out.extend(type_finding(stage, field, value));
        } else if SCHEMA_VALUED.contains(&keyword) {
            walk(stage, field, value, depth + 1, under_guess, out);
            for item in value.as_seq().unwrap_or_default() {
                walk(stage, field, item, depth + 1, under_guess, out);
            }
        } else if SCHEMA_LISTS.contains(&keyword) {
            for item in value.as_seq().unwrap_or_default() {
                walk(stage, field, item, depth + 1, under_guess, out);
            }
        } else if SCHEMA_MAPS.contains(&keyword) {
            for sub in value.as_map().unwrap_or_default() {
                walk(stage, field, &sub.value, depth + 1, under_guess, out);
            }
        }
    }
}

fn finding(stage: &StageDoc, field: &str, entry: &crate::source::Entry, key: &str, guess: KeyGuess) -> Diagnostic {
    let meant = guess.name;
    let taken = if guess.taken { format!(" (this schema has `{meant}` already)") } else { String::new() };
    Diagnostic::new(
        SchemaUnknownKeyword,
        stage.id(),
        entry.key.span,
        format!(
            "`{key}` in `{field}` is not a JSON Schema keyword; did you mean `{meant}`?{taken} JSON Schema ignores unknown keywords, so nothing here is checked"
        ),
    )
    .with_suggestion(entry.key.span, KeyGuess::rename(Some(guess)))
}
