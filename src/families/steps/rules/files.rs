//! File-level `steps/` rules: syntax and duplicate keys of every family file; loading the
//! registry (required keys, agentId, the registry agent.json names), names and versions,
//! unknown and legacy keys, seed-era `fallbackKey`s, and validation against a declared `$schema`.

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::prompts::C3lLoad;
use super::reach::{Live, Reach};
use crate::diagnostic::{Diagnostic, FileId, Severity};
use crate::families::steps::model::{Agent, Dialect, Doc, KNOWN_FALLBACK_KEYS};
use crate::families::steps::{
    DuplicateKey, FallbackKeyInvalid, JsonSyntax, LegacyKey, R_A1, R_F1, R_F2, SR_LOAD_001, SR_LOAD_002, SR_LOAD_003,
    SchemaViolation, UnknownKey,
};
use crate::source::{Node, Span, Value, json};
use crate::util::{KeyGuess, did_you_mean, did_you_mean_key};
use crate::workspace::FileKind;

/// Syntax errors and duplicate keys of one JSON or YAML file of the family.
pub(crate) fn check_syntax(doc: &Doc, out: &mut Vec<Diagnostic>) {
    for error in &doc.errors {
        let duplicate = error.message.starts_with("duplicate key");
        let code = if duplicate { DuplicateKey } else { JsonSyntax };
        let mut diagnostic = Diagnostic::new(code, doc.id(), error.span, error.message.clone());
        if let Some((span, message)) = &error.related {
            diagnostic = diagnostic.with_related(doc.id(), *span, message.clone());
        }
        out.push(diagnostic);
    }
}

/// Registry-level file rules that need the agent.
pub(super) fn check(agent: &Agent, live: &Live, out: &mut Vec<Diagnostic>) {
    check_required(agent, out);
    check_names(agent, out);
    check_versions(agent, out);
    check_registry_path(agent, out);
    check_unknown_keys(agent, out);
    check_legacy(agent, live, out);
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the groups of this crate's `steps/` rules.

/// Where a key missing from `node` is reported: the mapping's opening brace.
pub(super) fn brace(node: &Node) -> Span {
    Span::new(node.span.start, (node.span.start + 1).min(node.span.end))
}

/// `^[a-z][a-z0-9-]*$`: climpt's agent name pattern.
pub(super) fn is_agent_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// `^\d+\.\d+\.\d+$`.
pub(super) fn is_semver(text: &str) -> bool {
    let parts: Vec<&str> = text.split('.').collect();
    parts.len() == 3 && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// "`a`, `b` or `c`".
/// For a value outside a closed set, the message tail "`x` is not a <noun> (did you mean `y`?);
/// use `a`, `b` or `c`"; `None` when the value is in the set.
pub(super) fn not_one_of(node: &Node, noun: &str, allowed: &[&str]) -> Option<String> {
    if node.as_str().is_some_and(|v| allowed.contains(&v)) {
        return None;
    }
    let hint = node
        .as_str()
        .and_then(|v| crate::util::did_you_mean(v, allowed.iter().copied()))
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default();
    Some(format!("{} is not a {noun}{hint}; use {}", shown(node), one_of(allowed)))
}

pub(super) fn one_of(values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

/// How a value reads in a message: strings quoted, others as their JSON text.
pub(super) fn shown(node: &Node) -> String {
    match &node.value {
        Value::String(s) => format!("`{s}`"),
        Value::Map(_) => "a mapping".into(),
        Value::Seq(_) => "a list".into(),
        _ => format!("`{}`", node.scalar_text()),
    }
}

/// The agent directory as people know it: `.agent/<name>/` or the directory's own name.
pub(super) fn agent_dir_name<'p>(agent: &'p Agent) -> Option<&'p str> {
    agent.dir.file_name().and_then(|n| n.to_str())
}

// ---------------------------------------------------------------------------------------------
// SR-LOAD-001: the four keys the loader requires.

const REQUIRED_REGISTRY_KEYS: [(&str, &str); 4] = [
    ("agentId", "the agent's name"),
    ("version", "a semver string such as `1.0.0`"),
    ("c1", "the first C3L path segment, usually `steps`"),
    ("steps", "the step definitions"),
];

fn check_required(agent: &Agent, out: &mut Vec<Diagnostic>) {
    let registry = agent.registry;
    let Some(root) = &registry.root else { return };
    if root.as_map().is_none() {
        out.push(Diagnostic::new(
            SR_LOAD_001,
            registry.id(),
            registry.anchor(),
            format!(
                "the registry must be a JSON object with `agentId`, `version`, `c1` and `steps`, but it is {}; climpt cannot load it (fatal at agent start)",
                root.type_name()
            ),
        ));
        return;
    }
    for (key, what) in REQUIRED_REGISTRY_KEYS {
        match root.get(key) {
            None => out.push(Diagnostic::new(
                SR_LOAD_001,
                registry.id(),
                registry.anchor(),
                format!("the registry lacks required `{key}` ({what}); climpt refuses to load it (fatal at agent start)"),
            )),
            Some(value) if key == "c1" && value.as_str().is_none_or(str::is_empty) => out.push(Diagnostic::new(
                SR_LOAD_001,
                registry.id(),
                value.span,
                format!(
                    "`c1` must be a non-empty string ({what}), but it is {}; climpt refuses to load the registry",
                    type_or_empty(value)
                ),
            )),
            Some(value) if key == "steps" && value.as_map().is_none() => out.push(Diagnostic::new(
                SR_LOAD_001,
                registry.id(),
                value.span,
                format!(
                    "`steps` must be an object of step definitions keyed by step id, but it is {}; climpt refuses to load the registry",
                    value.type_name()
                ),
            )),
            Some(_) => {}
        }
    }
}

/// "empty" for `""`, else the value's type name.
fn type_or_empty(node: &Node) -> &'static str {
    if node.as_str() == Some("") { "empty" } else { node.type_name() }
}

// ---------------------------------------------------------------------------------------------
// SR-LOAD-002, R-A1, R-F1: agentId, agent.json `name` and the directory.

/// Whether the registry sits where climpt looks for agents: next to an agent.json, or in
/// `.agent/<name>/`. A registry elsewhere (a test fixture) is loaded by explicit path.
fn in_agent_dir(agent: &Agent) -> bool {
    agent.agent_json.is_some() || agent.dir.parent().and_then(|p| p.file_name()).is_some_and(|n| n == ".agent")
}

fn check_names(agent: &Agent, out: &mut Vec<Diagnostic>) {
    let registry = agent.registry;
    let dir_name = agent_dir_name(agent).filter(|_| in_agent_dir(agent));
    let id_node = registry.get("agentId");
    let agent_id = id_node.and_then(Node::as_str);
    let name_node = agent.agent_json.and_then(|a| a.get("name"));
    let name = name_node.and_then(Node::as_str);

    // SR-LOAD-002: the registry's agentId against the directory climpt loads it from.
    let mut id_mismatch = false;
    if let (Some(node), Some(id), Some(dir)) = (id_node, agent_id, dir_name)
        && id != dir
    {
        id_mismatch = true;
        let also = match name {
            Some(n) if n == dir => format!(" (agent.json says `{n}` too)"),
            _ => String::new(),
        };
        let mut d = Diagnostic::new(
            SR_LOAD_002,
            registry.id(),
            node.span,
            format!(
                "agentId `{id}` does not match the agent directory `{dir}/`{also}; climpt loads `.agent/{dir}/` and rejects a registry whose agentId differs (fatal at agent start)"
            ),
        )
        .with_help(format!("set `\"agentId\": \"{dir}\"`, or rename the directory"));
        if let (Some(agent_json), Some(node)) = (agent.agent_json, name_node)
            && name == Some(dir)
        {
            d = d.with_related(agent_json.id(), node.span, "the agent's name");
        }
        out.push(d);
    }

    // R-A1: agent.json `name` against the registry's agentId.
    let mut name_mismatch = false;
    if let (Some(agent_json), Some(node), Some(name), Some(id)) = (agent.agent_json, name_node, name, agent_id)
        && name != id
        && !(id_mismatch && Some(name) == dir_name)
    {
        name_mismatch = true;
        let mut d = Diagnostic::new(
            R_A1,
            agent_json.id(),
            node.span,
            format!(
                "agent.json names the agent `{name}` but its registry's agentId is `{id}`; climpt loads the registry for `{name}` and rejects the mismatch (fatal at agent start)"
            ),
        );
        if let Some(id_node) = id_node {
            d = d.with_related(registry.id(), id_node.span, "the registry's agentId");
        }
        out.push(d);
    }

    // R-F1: both names are kebab-case.
    if let Some(node) = id_node
        && !id_mismatch
    {
        check_agent_name(registry.id(), "the registry's `agentId`", node, out);
    }
    if let (Some(agent_json), Some(node)) = (agent.agent_json, name_node)
        && !name_mismatch
    {
        check_agent_name(agent_json.id(), "agent.json `name`", node, out);
    }
}

fn check_agent_name(file: FileId, what: &str, node: &Node, out: &mut Vec<Diagnostic>) {
    let message = match node.as_str() {
        Some(name) if is_agent_name(name) => return,
        Some(name) => {
            let kebab = crate::util::to_kebab_case(name);
            let hint = if is_agent_name(&kebab) { format!(" such as `{kebab}`") } else { String::new() };
            format!(
                "{what} `{name}` is not a valid agent name; use lowercase kebab-case (`^[a-z][a-z0-9-]*$`){hint}, as the agent directory and `--agent` flag expect"
            )
        }
        None => format!("{what} must be a string naming the agent, but it is {}", node.type_name()),
    };
    out.push(Diagnostic::new(R_F1, file, node.span, message));
}

// ---------------------------------------------------------------------------------------------
// R-F2: semver versions.

fn check_versions(agent: &Agent, out: &mut Vec<Diagnostic>) {
    let docs = std::iter::once((agent.registry, "the registry's")).chain(agent.agent_json.map(|a| (a, "agent.json")));
    for (doc, whose) in docs {
        let Some(node) = doc.get("version") else { continue };
        let message = match node.as_str() {
            Some(v) if is_semver(v) => continue,
            Some(v) => format!(
                "{whose} `version` `{v}` is not semver; write three dot-separated numbers such as `1.0.0` (`^\\d+\\.\\d+\\.\\d+$`)"
            ),
            None => format!("{whose} `version` must be a string such as `\"1.0.0\"`, but it is {}", node.type_name()),
        };
        out.push(Diagnostic::new(R_F2, doc.id(), node.span, message));
    }
}

// ---------------------------------------------------------------------------------------------
// SR-LOAD-003: agent.json `runner.flow.prompts.registry` names a file.

fn check_registry_path(agent: &Agent, out: &mut Vec<Diagnostic>) {
    let Some(agent_json) = agent.agent_json else { return };
    let Some(node) = agent_json.at("runner.flow.prompts.registry") else { return };
    let Some(name) = node.as_str() else { return };
    let path = crate::workspace::discover::normalize(&agent.dir.join(name));
    if !name.is_empty() && agent.workspace.exists(&path) {
        return;
    }
    let dir = agent_dir_name(agent).unwrap_or("");
    let registry_name = agent.registry.path().file_name().and_then(|n| n.to_str()).unwrap_or("steps_registry.json");
    out.push(
        Diagnostic::new(
            SR_LOAD_003,
            agent_json.id(),
            node.span,
            format!(
                "`runner.flow.prompts.registry` names `{name}`, which does not exist in `{dir}/`; climpt cannot load the registry (fatal at agent start)"
            ),
        )
        .with_related(agent.registry.id(), agent.registry.anchor(), "the registry in this agent directory")
        .with_help(format!("point it at `{registry_name}` (relative to the agent directory)")),
    );
}

// ---------------------------------------------------------------------------------------------
// UnknownKey: the known keys of every object of the registry and agent.json.

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

fn check_unknown_keys(agent: &Agent, out: &mut Vec<Diagnostic>) {
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

// ---------------------------------------------------------------------------------------------
// LegacyKey and FallbackKeyInvalid: the seed-era format.

fn check_legacy(agent: &Agent, live: &Live, out: &mut Vec<Diagnostic>) {
    let registry = agent.registry;
    let dialect = agent.dialect();
    match dialect {
        Dialect::Current => {
            for key in ["userPromptsBase", "schemasBase"] {
                if let Some(entry) = registry.root.as_ref().and_then(|r| r.entry(key)) {
                    out.push(legacy(
                        registry.id(),
                        &entry.key,
                        format!(
                            "`{key}` belongs to climpt's seed-era registry format (removed in 2026-04); the runtime ignores it; remove it (prompts resolve from `<agent>/prompts/`, schemas from `<agent>/schemas/`)"
                        ),
                    ));
                }
            }
            for step in agent.steps() {
                if let Some(entry) = step.def.entry("fallbackKey") {
                    out.push(legacy(
                        registry.id(),
                        &entry.key,
                        format!(
                            "step `{}` has `fallbackKey`, which belongs to climpt's seed-era registry format (removed in 2026-04); the runtime ignores it and resolves only the C3L prompt file; remove it",
                            step.id
                        ),
                    ));
                }
            }
        }
        Dialect::Seed => {
            for step in agent.steps() {
                if let Some(node) = step.get("fallbackKey") {
                    let load = super::prompts::c3l_load(agent, step.def);
                    let reached = super::reach::reach(live, &step);
                    check_fallback_key(registry.id(), step.id, node, (load, reached), out);
                }
            }
        }
    }
    // `fallbackDir` went with the fallback prompts; in a seed-era agent it is part of the format.
    if dialect == Dialect::Current
        && let Some(agent_json) = agent.agent_json
        && let Some(entry) = agent_json.at("runner.flow.prompts").and_then(|p| p.entry("fallbackDir"))
    {
        out.push(legacy(
            agent_json.id(),
            &entry.key,
            "`runner.flow.prompts.fallbackDir` is legacy: climpt ignores this key (its defaults drop it when the agent loads, and there are no fallback prompts any more); remove it".into(),
        ));
    }
}

/// `issue_initial_default` → `initial_issue`: the seed guide's own example puts the mode first.
fn swapped_fallback_key(key: &str) -> Option<&'static str> {
    let parts: Vec<&str> = key.trim_end_matches("_default").split('_').collect();
    let [mode, phase, rest @ ..] = parts.as_slice() else { return None };
    let mut swapped = vec![*phase, *mode];
    swapped.extend(rest);
    let candidate = swapped.join("_");
    let with_default = format!("{candidate}_default");
    KNOWN_FALLBACK_KEYS.iter().copied().find(|k| *k == candidate || *k == with_default)
}

fn legacy(file: FileId, key: &Node, message: String) -> Diagnostic {
    Diagnostic::new(LegacyKey, file, key.span, message).with_severity(Severity::Warning)
}

fn check_fallback_key(file: FileId, step: &str, node: &Node, load: (C3lLoad, Reach), out: &mut Vec<Diagnostic>) {
    let (load, reached) = load;
    let Some(key) = node.as_str() else {
        out.push(Diagnostic::new(
            FallbackKeyInvalid,
            file,
            node.span,
            format!(
                "step `{step}`: `fallbackKey` must be a string naming a default template, but it is {}",
                node.type_name()
            ),
        ));
        return;
    };
    if KNOWN_FALLBACK_KEYS.contains(&key) {
        return;
    }
    // climpt 91d13e3 reads the key only when the C3L prompt fails to load
    // (`prompt-resolver.ts` `useFallback`); an unknown key then throws PR-RESOLVE-002.
    let (runtime, severity) = match load {
        C3lLoad::Fails(why) => (
            format!(
                "the step's C3L prompt cannot load ({why}), so climpt falls back to this key, which throws `No fallback prompt found for key: \"{key}\"` (PR-RESOLVE-002) and the step fails"
            ),
            Severity::Error,
        ),
        C3lLoad::Unknown => (
            format!(
                "climpt reads it only when the step's C3L prompt fails to load, and then throws `No fallback prompt found for key: \"{key}\"` (PR-RESOLVE-002) and the step fails"
            ),
            Severity::Warning,
        ),
        C3lLoad::Loads => (
            "climpt reads it only when the step's C3L prompt fails to load, which it does not today; should it ever, the unknown key throws PR-RESOLVE-002 and the step fails".to_string(),
            Severity::Info,
        ),
    };
    let (runtime, severity) = match reached.note() {
        Some(note) => (format!("{runtime} ({note})"), reached.grade(severity)),
        None => (runtime, severity),
    };
    let (message, suggestion) = if key.contains('.') {
        let underscored = key.replace('.', "_");
        let known = KNOWN_FALLBACK_KEYS.iter().copied().find(|k| *k == underscored);
        let hint = known.map(|k| format!("; use `{k}`")).unwrap_or_default();
        (
            format!(
                "step `{step}`: `fallbackKey` `{key}` is dot-separated, but fallback keys are underscore-separated names of the default template registry{hint}; {runtime}"
            ),
            known,
        )
    } else {
        // A typo (two edits at most) or the seed guide's swapped order; a mere resemblance
        // (`initial_default` and `initial_manual`) would name another template.
        let typo = did_you_mean(key, KNOWN_FALLBACK_KEYS).filter(|k| crate::util::edit_distance(key, k) <= 2);
        let near = swapped_fallback_key(key).or(typo);
        let hint = near.map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default();
        (
            format!(
                "step `{step}`: `fallbackKey` `{key}` is not a key of the default template registry{hint}; {runtime}"
            ),
            near,
        )
    };
    let mut d = Diagnostic::new(FallbackKeyInvalid, file, node.span, message).with_severity(severity).with_help(
        "known keys pair a phase and a mode, e.g. `initial_issue`, `continuation_issue`, `issue_closure_default`",
    );
    if let Some(s) = suggestion {
        d = d.with_suggestion(string_inner_span(node), Some(s));
    }
    out.push(d);
}

/// The inside of a JSON string node (without its quotes).
fn string_inner_span(node: &Node) -> Span {
    if node.span.end >= node.span.start + 2 { Span::new(node.span.start + 1, node.span.end - 1) } else { node.span }
}

// ---------------------------------------------------------------------------------------------
// SchemaViolation: validation against a local `$schema`.

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
    let Some(root) = &doc.root else { return };
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
