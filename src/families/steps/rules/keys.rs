//! `steps/UnknownKey`: the known keys of every object of the registry and agent.json, as one
//! table of shapes, and the walk that reports the others.

use crate::diagnostic::{Diagnostic, FileId};
use crate::families::steps::UnknownKey;
use crate::families::steps::model::{Agent, Doc};
use crate::source::Node;
use crate::util::{KeyGuess, did_you_mean_key};

/// What a value is expected to look like, for the unknown-key walk.
#[derive(Clone, Copy)]
enum Shape {
    /// Not walked: a scalar, a free-form value, or keys another rule owns.
    Any,
    /// A mapping with known keys.
    Object(&'static Object),
    /// A mapping of names (step ids, validator names, ...) to one shape.
    MapOf(&'static Shape),
    /// A list of one shape.
    ListOf(&'static Shape),
}

struct Object {
    /// How a message names the mapping: "unknown {what} key".
    what: &'static str,
    fields: &'static [(&'static str, Shape)],
    /// Seed-era keys: LegacyKey and FallbackKeyInvalid speak about them.
    legacy: &'static [&'static str],
    /// Other keys are allowed too (only the known ones are walked).
    open: bool,
}

const ANY: Shape = Shape::Any;

const fn object(what: &'static str, fields: &'static [(&'static str, Shape)]) -> Object {
    Object { what, fields, legacy: &[], open: false }
}

const OUTPUT_SCHEMA_REF: Object = object("`outputSchemaRef`", &[("file", ANY), ("schema", ANY)]);
const GATE: Object = object(
    "`structuredGate`",
    &[
        ("allowedIntents", ANY),
        ("intentSchemaRef", ANY),
        ("intentField", ANY),
        ("targetField", ANY),
        ("handoffFields", ANY),
        ("targetMode", ANY),
        ("failFast", ANY),
        ("fallbackIntent", ANY),
    ],
);
// `targets` keys are condition values.
const TRANSITION_RULE: Object =
    object("transition rule", &[("target", ANY), ("fallback", ANY), ("condition", ANY), ("targets", ANY)]);
const STEP_RUNNER: Object = object("step runner", &[("command", ANY), ("args", ANY), ("timeout", ANY)]);
const INPUT: Object = object("input", &[("from", ANY), ("required", ANY), ("default", ANY)]);
const STEP: Object = Object {
    what: "step",
    fields: &[
        ("stepId", ANY),
        ("name", ANY),
        ("type", ANY),
        ("stepKind", ANY),
        ("c2", ANY),
        ("c3", ANY),
        ("edition", ANY),
        ("adaptation", ANY),
        ("uvVariables", ANY),
        ("usesStdin", ANY),
        ("outputSchemaRef", Shape::Object(&OUTPUT_SCHEMA_REF)),
        ("structuredGate", Shape::Object(&GATE)),
        // Transition keys are intents: FLOW-UnknownIntentKey speaks about them.
        ("transitions", Shape::MapOf(&Shape::Object(&TRANSITION_RULE))),
        ("description", ANY),
        ("model", ANY),
        ("permissionMode", ANY),
        ("runner", Shape::Object(&STEP_RUNNER)),
        ("inputs", Shape::MapOf(&Shape::Object(&INPUT))),
        ("condition", ANY),
        ("priority", ANY),
    ],
    legacy: &["fallbackKey"],
    open: false,
};
const SEMANTIC_CONFIG: Object = object("`semanticConfig`", &[("checkType", ANY)]);
const VALIDATOR: Object = object(
    "validator",
    &[
        ("type", ANY),
        ("command", ANY),
        ("path", ANY),
        ("semanticConfig", Shape::Object(&SEMANTIC_CONFIG)),
        ("successWhen", ANY),
        ("failurePattern", ANY),
        // Keys are parameter names.
        ("extractParams", ANY),
        ("recoverableByDefault", ANY),
    ],
);
const VALIDATION_CONDITION: Object = object("validation condition", &[("validator", ANY), ("params", ANY)]);
const ON_FAILURE: Object = object("`onFailure`", &[("action", ANY), ("maxAttempts", ANY)]);
const VALIDATION_STEP: Object = object(
    "validation step",
    &[
        ("stepId", ANY),
        ("name", ANY),
        ("c2", ANY),
        ("c3", ANY),
        ("validationConditions", Shape::ListOf(&Shape::Object(&VALIDATION_CONDITION))),
        ("onFailure", Shape::Object(&ON_FAILURE)),
        ("outputSchema", ANY),
        ("outputSchemaRef", Shape::Object(&OUTPUT_SCHEMA_REF)),
        ("description", ANY),
    ],
);
const FAILURE_PATTERN: Object = object(
    "failure pattern",
    &[("description", ANY), ("edition", ANY), ("adaptation", ANY), ("params", ANY), ("semanticMatch", ANY)],
);
const REGISTRY: Object = Object {
    what: "registry",
    fields: &[
        ("$schema", ANY),
        ("agentId", ANY),
        ("version", ANY),
        ("c1", ANY),
        ("pathTemplate", ANY),
        ("pathTemplateNoAdaptation", ANY),
        ("entryStep", ANY),
        // Keys are verdict types: R-F3 speaks about them.
        ("entryStepMapping", ANY),
        ("failurePatterns", Shape::MapOf(&Shape::Object(&FAILURE_PATTERN))),
        ("validators", Shape::MapOf(&Shape::Object(&VALIDATOR))),
        ("validationSteps", Shape::MapOf(&Shape::Object(&VALIDATION_STEP))),
        ("steps", Shape::MapOf(&Shape::Object(&STEP))),
    ],
    legacy: &["userPromptsBase", "schemasBase"],
    open: false,
};

// agent.json, after climpt's `agents/schemas/agent.schema.json`.
const PARAMETER: Object = object(
    "parameter",
    &[
        ("type", ANY),
        ("description", ANY),
        ("required", ANY),
        ("default", ANY),
        ("cli", ANY),
        // Its keys are R-F16's.
        ("validation", ANY),
    ],
);
const PROMPTS: Object =
    Object { what: "`runner.flow.prompts`", fields: &[("registry", ANY)], legacy: &["fallbackDir"], open: false };
const FLOW_SCHEMAS: Object = object("`runner.flow.schemas`", &[("base", ANY), ("inspection", ANY)]);
const FLOW: Object = object(
    "`runner.flow`",
    &[
        ("systemPromptPath", ANY),
        ("prompts", Shape::Object(&PROMPTS)),
        ("schemas", Shape::Object(&FLOW_SCHEMAS)),
        ("defaultModel", ANY),
        ("askUserAutoResponse", ANY),
    ],
);
/// The schema's config keys plus the optional ones of the blueprint's R-F12 table.
const VERDICT_CONFIG_FIELDS: &[(&str, Shape)] = &[
    ("maxIterations", ANY),
    ("verdictKeyword", ANY),
    ("handlerPath", ANY),
    ("maxChecks", ANY),
    ("resourceType", ANY),
    ("targetState", ANY),
    ("operator", ANY),
    ("conditions", Shape::ListOf(&Shape::Object(&COMPOSITE_CONDITION))),
    ("signalType", ANY),
    ("requiredFields", ANY),
    ("registryPath", ANY),
    ("entryStep", ANY),
    ("issueParam", ANY),
    ("type", ANY),
    ("iterationParam", ANY),
    ("counterParam", ANY),
];
const COMPOSITE_CONDITION: Object = object("verdict condition", &[("type", ANY), ("config", ANY)]);
const VERDICT_CONFIG: Object = object("`runner.verdict.config`", VERDICT_CONFIG_FIELDS);
const VERDICT: Object = object("`runner.verdict`", &[("type", ANY), ("config", Shape::Object(&VERDICT_CONFIG))]);
const NETWORK: Object = object("sandbox network", &[("mode", ANY), ("trustedDomains", ANY)]);
const FILESYSTEM: Object = object("sandbox filesystem", &[("allowedPaths", ANY)]);
const SANDBOX: Object = object(
    "`runner.boundaries.sandbox`",
    &[
        ("enabled", ANY),
        ("network", Shape::Object(&NETWORK)),
        ("filesystem", Shape::Object(&FILESYSTEM)),
        ("excludedCommands", ANY),
        ("allowUnsandboxedCommands", ANY),
    ],
);
const BOUNDARIES: Object = object(
    "`runner.boundaries`",
    &[("allowedTools", ANY), ("permissionMode", ANY), ("sandbox", Shape::Object(&SANDBOX))],
);
const COMPLETION_LABELS: Object = object("completion labels", &[("add", ANY), ("remove", ANY)]);
/// Agent-specific label names are allowed besides these.
const LABELS: Object = Object {
    what: "labels",
    fields: &[
        ("requirements", ANY),
        ("inProgress", ANY),
        ("blocked", ANY),
        ("completion", Shape::Object(&COMPLETION_LABELS)),
    ],
    legacy: &[],
    open: true,
};
const GITHUB: Object = object(
    "`runner.integrations.github`",
    &[("enabled", ANY), ("labels", Shape::Object(&LABELS)), ("defaultClosureAction", ANY)],
);
const INTEGRATIONS: Object = object("`runner.integrations`", &[("github", Shape::Object(&GITHUB))]);
const ACTIONS: Object =
    object("`runner.actions`", &[("enabled", ANY), ("types", ANY), ("outputFormat", ANY), ("handlers", ANY)]);
const WORKTREE: Object = object("worktree", &[("enabled", ANY), ("root", ANY)]);
const FINALIZE: Object =
    object("finalize", &[("autoMerge", ANY), ("push", ANY), ("remote", ANY), ("createPr", ANY), ("prTarget", ANY)]);
const EXECUTION: Object =
    object("`runner.execution`", &[("worktree", Shape::Object(&WORKTREE)), ("finalize", Shape::Object(&FINALIZE))]);
const LOGGING: Object = object("`runner.logging`", &[("directory", ANY), ("format", ANY), ("maxFiles", ANY)]);
const RUNNER: Object = object(
    "`runner`",
    &[
        ("flow", Shape::Object(&FLOW)),
        ("verdict", Shape::Object(&VERDICT)),
        ("boundaries", Shape::Object(&BOUNDARIES)),
        ("integrations", Shape::Object(&INTEGRATIONS)),
        ("actions", Shape::Object(&ACTIONS)),
        ("execution", Shape::Object(&EXECUTION)),
        ("logging", Shape::Object(&LOGGING)),
    ],
);
const AGENT_JSON: Object = object(
    "agent.json",
    &[
        ("$schema", ANY),
        ("version", ANY),
        ("name", ANY),
        ("displayName", ANY),
        ("description", ANY),
        ("parameters", Shape::MapOf(&Shape::Object(&PARAMETER))),
        ("runner", Shape::Object(&RUNNER)),
    ],
);

pub(super) fn check(agent: &Agent, out: &mut Vec<Diagnostic>) {
    if let Some(root) = &agent.registry.root {
        walk_keys(agent.registry.id(), root, Shape::Object(&REGISTRY), out);
    }
    if let Some(root) = agent.agent_json.and_then(|a| a.root.as_ref()) {
        walk_keys(agent.agent_json.map(Doc::id).expect("agent.json"), root, Shape::Object(&AGENT_JSON), out);
    }
}

fn walk_keys(file: FileId, node: &Node, shape: Shape, out: &mut Vec<Diagnostic>) {
    match shape {
        Shape::Any => {}
        Shape::Object(object) => {
            for entry in node.as_map().unwrap_or_default() {
                let Some(key) = entry.key_str() else { continue };
                if let Some((_, inner)) = object.fields.iter().find(|(k, _)| *k == key) {
                    walk_keys(file, &entry.value, *inner, out);
                } else if !object.open && !object.legacy.contains(&key) {
                    out.push(unknown_key(file, node, &entry.key, key, object));
                }
            }
        }
        Shape::MapOf(inner) => {
            for entry in node.as_map().unwrap_or_default() {
                walk_keys(file, &entry.value, *inner, out);
            }
        }
        Shape::ListOf(inner) => {
            for item in node.as_seq().unwrap_or_default() {
                walk_keys(file, item, *inner, out);
            }
        }
    }
}

/// An unknown key of `mapping`, with a rename fix when it looks like a typo of a known key that
/// the mapping does not have yet.
fn unknown_key(file: FileId, mapping: &Node, key_node: &Node, key: &str, object: &Object) -> Diagnostic {
    let known = object.fields.iter().map(|(k, _)| *k);
    let guess = did_you_mean_key(key, known, |k| mapping.get(k).is_some());
    let what = object.what;
    let message = match guess {
        Some(KeyGuess { name, taken: false }) => {
            format!(
                "unknown {what} key `{key}`; did you mean `{name}`? climpt ignores unknown keys, so it has no effect"
            )
        }
        Some(KeyGuess { name, taken: true }) => {
            format!("unknown {what} key `{key}`; `{name}` is set already, and climpt ignores this one")
        }
        None => format!("unknown {what} key `{key}`; climpt ignores it"),
    };
    Diagnostic::new(UnknownKey, file, key_node.span, message).with_suggestion(key_node.span, KeyGuess::rename(guess))
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    /// `node` with `$ref`s followed and `anyOf`/`oneOf`/`allOf` branches merged: the
    /// properties, `additionalProperties` and `items` a value at that place may have.
    fn resolve<'s>(root: &'s Value, node: &'s Value) -> Vec<&'s Value> {
        if let Some(reference) = node.get("$ref").and_then(Value::as_str) {
            let pointer = reference.trim_start_matches('#');
            return resolve(root, root.pointer(pointer).unwrap_or_else(|| panic!("{reference} resolves")));
        }
        let mut out = vec![node];
        for key in ["anyOf", "oneOf", "allOf"] {
            for branch in node.get(key).and_then(Value::as_array).into_iter().flatten() {
                out.extend(resolve(root, branch));
            }
        }
        out
    }

    /// Walks the key table beside the JSON Schema and lists where their keys differ.
    fn compare(root: &Value, shape: Shape, node: &Value, path: &str, out: &mut Vec<String>) {
        let nodes = resolve(root, node);
        match shape {
            Shape::Any => {}
            Shape::Object(object) => {
                let mut schema: Vec<&str> = nodes
                    .iter()
                    .filter_map(|n| n.get("properties")?.as_object())
                    .flat_map(|p| p.keys())
                    .map(String::as_str)
                    .collect();
                schema.sort_unstable();
                schema.dedup();
                let mut table: Vec<&str> =
                    object.fields.iter().map(|(k, _)| *k).chain(object.legacy.iter().copied()).collect();
                table.sort_unstable();
                if schema != table {
                    out.push(format!("{path}: the table has {table:?}, the schema {schema:?}"));
                }
                for (key, field) in object.fields {
                    let property = nodes.iter().find_map(|n| n.get("properties")?.get(*key));
                    if let Some(property) = property {
                        compare(root, *field, property, &format!("{path}.{key}"), out);
                    }
                }
            }
            Shape::MapOf(inner) => {
                match nodes.iter().find_map(|n| n.get("additionalProperties").filter(|v| v.is_object())) {
                    Some(values) => compare(root, *inner, values, &format!("{path}.*"), out),
                    None => out.push(format!(
                        "{path}: the table maps names to values; the schema has no additionalProperties"
                    )),
                }
            }
            Shape::ListOf(inner) => match nodes.iter().find_map(|n| n.get("items")) {
                Some(items) => compare(root, *inner, items, &format!("{path}[]"), out),
                None => out.push(format!("{path}: the table lists values; the schema has no items")),
            },
        }
    }

    /// The key table and the shipped JSON Schemas name the same keys at every place the table
    /// walks: a key added to one is added to the other (editors complete from the schemas).
    #[test]
    fn the_key_tables_and_the_shipped_schemas_agree() {
        for (shape, text, name) in [
            (&REGISTRY, include_str!("../../../../schemas/steps-registry.schema.json"), "steps-registry"),
            (&AGENT_JSON, include_str!("../../../../schemas/agent.schema.json"), "agent"),
        ] {
            let root: Value = serde_json::from_str(text).expect("schema is JSON");
            let mut differences = Vec::new();
            compare(&root, Shape::Object(shape), &root, name, &mut differences);
            assert!(differences.is_empty(), "{}", differences.join("\n"));
        }
    }
}
