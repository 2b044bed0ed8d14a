//! JSON Schema keywords for completion inside `completionSchema:` and `inputsSchema:`, and where
//! in such a schema a mapping is itself a schema (rather than a map of property names).

/// The keywords offered, with what each does.
pub(super) const KEYWORDS: &[(&str, &str)] = &[
    (
        "type",
        "The JSON type of the value: `object`, `array`, `string`, `number`, `integer`, `boolean` or `null` (or a list of them).",
    ),
    ("properties", "For an object: each property name with the schema its value must satisfy."),
    ("required", "For an object: the property names that must be present."),
    ("items", "For an array: the schema every item must satisfy."),
    ("enum", "The value must equal one of these."),
    ("const", "The value must equal this one."),
    ("description", "What the value means; shown in hovers and completion of `ctx.upstream[i].parsed.` placeholders."),
    ("title", "A short name for the value."),
    (
        "additionalProperties",
        "For an object: `false` forbids properties not listed in `properties`; a schema constrains them.",
    ),
    ("default", "The value assumed when none is given (documentation only; not applied)."),
    ("examples", "Example values (documentation only)."),
    ("minimum", "For a number: the smallest allowed value."),
    ("maximum", "For a number: the largest allowed value."),
    ("minLength", "For a string: the fewest characters allowed."),
    ("maxLength", "For a string: the most characters allowed."),
    ("pattern", "For a string: a regular expression it must match."),
    ("format", "For a string: a named format such as `date-time`, `uri` or `email` (annotation unless enforced)."),
    ("minItems", "For an array: the fewest items allowed."),
    ("maxItems", "For an array: the most items allowed."),
    ("uniqueItems", "For an array: `true` requires all items to differ."),
    ("anyOf", "The value must satisfy at least one of these schemas."),
    ("oneOf", "The value must satisfy exactly one of these schemas."),
    ("allOf", "The value must satisfy all of these schemas."),
    ("not", "The value must not satisfy this schema."),
    ("$ref", "Use the schema at this pointer instead (only local `#/...` references are allowed)."),
    ("$defs", "Named schemas for `$ref` to point at (`#/$defs/<name>`)."),
];

/// The values of `type`.
pub(super) const TYPES: &[&str] = &["object", "array", "string", "number", "integer", "boolean", "null"];

pub(super) fn doc(keyword: &str) -> Option<&'static str> {
    KEYWORDS.iter().find(|(k, _)| *k == keyword).map(|(_, d)| *d)
}

/// Whether the mapping at `path` (keys below the schema's root) is a schema: keywords that hold
/// a name map (`properties`, `$defs`) are followed by a name, then a schema again.
pub(super) fn is_schema_object(path: &[&str]) -> bool {
    let mut schema = true;
    for key in path {
        schema = if schema {
            match *key {
                // An item of a list of schemas (`anyOf`, `prefixItems`, …).
                "-" => true,
                "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => false,
                "items"
                | "additionalProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "additionalItems"
                | "anyOf"
                | "oneOf"
                | "allOf"
                | "prefixItems"
                | "unevaluatedProperties"
                | "unevaluatedItems" => true,
                // Any other keyword holds a value, not a schema.
                _ => return false,
            }
        } else {
            true
        };
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_positions() {
        assert!(is_schema_object(&[]));
        assert!(!is_schema_object(&["properties"]));
        assert!(is_schema_object(&["properties", "summary"]));
        assert!(is_schema_object(&["properties", "steps", "items"]));
        assert!(!is_schema_object(&["required"]));
        assert!(!is_schema_object(&["properties", "summary", "enum"]));
    }
}
