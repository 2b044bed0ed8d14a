//! agent.json: required structure, parameters, the verdict config per type, enums, and
//! `detect:graph` against the registry.

use crate::diagnostic::{Diagnostic, FileId};
use crate::families::steps::model::{Agent, Doc, written_layout};
use crate::families::steps::release::{Layout, renamed_type};
use crate::families::steps::rules::files::{brace, not_one_of, one_of, shown};
use crate::families::steps::{AC_VALID_001, R_F5, R_F6, R_F12, R_F15, R_F16, R_F17, R_F18, R_F19, SR_GATE_004};
use crate::source::{Node, Value};
use crate::util::did_you_mean;

const PARAMETER_TYPES: [&str; 4] = ["string", "number", "boolean", "array"];
const VALIDATION_KEYS: [&str; 4] = ["min", "max", "pattern", "enum"];
const LOG_FORMATS: [&str; 2] = ["jsonl", "text"];
const CLOSURE_ACTIONS: [&str; 3] = ["close", "label-only", "label-and-close"];
const COMPOSITE_OPERATORS: [&str; 3] = ["and", "or", "first"];

pub(super) fn check(agent: &Agent, out: &mut Vec<Diagnostic>) {
    let Some(doc) = agent.agent_json else { return };
    let Some(root) = doc.root() else { return };
    if root.as_map().is_none() {
        out.push(Diagnostic::new(
            AC_VALID_001,
            doc.id(),
            doc.anchor(),
            format!(
                "agent.json must be a JSON object (version, name, displayName, description, runner), but it is {}; climpt cannot load the agent",
                root.type_name()
            ),
        ));
        return;
    }
    match written_layout(root) {
        Some(written) if written != agent.layout => check_layout(agent, doc, root, written, out),
        _ => check_required(doc, root, agent.layout, out),
    }
    check_parameters(doc, out);
    check_verdict(agent, doc, out);
    check_enums(agent, doc, out);
}

// ---------------------------------------------------------------------------------------------
// AC-VALID-001: the required fields of climpt's agent schema.

/// (dotted path of an object, its required keys), per layout. Objects that are absent are
/// skipped (their own absence is reported at their parent when required).
const REQUIRED: [(&str, &[&str]); 9] = [
    ("", &["version", "name", "displayName", "description", "runner"]),
    ("runner", &["flow", "verdict", "boundaries"]),
    ("runner.flow", &["systemPromptPath", "prompts"]),
    ("runner.flow.prompts", &["registry"]),
    ("runner.verdict", &["type"]),
    ("runner.boundaries", &["allowedTools", "permissionMode"]),
    ("runner.integrations.github", &["enabled"]),
    ("runner.actions", &["enabled"]),
    ("runner.logging", &["directory", "format"]),
];

/// climpt 1.12.0 to 1.12.4: `runner.completion` for `runner.verdict`.
const REQUIRED_COMPLETION: [(&str, &[&str]); 9] = [
    ("", &["version", "name", "displayName", "description", "runner"]),
    ("runner", &["flow", "completion", "boundaries"]),
    ("runner.flow", &["systemPromptPath", "prompts"]),
    ("runner.flow.prompts", &["registry"]),
    ("runner.completion", &["type"]),
    ("runner.boundaries", &["allowedTools", "permissionMode"]),
    ("runner.integrations.github", &["enabled"]),
    ("runner.actions", &["enabled"]),
    ("runner.logging", &["directory", "format"]),
];

/// climpt 1.10.6 to 1.11.24, the flat layout (`agents/schemas/agent.schema.json` there).
const REQUIRED_FLAT: [(&str, &[&str]); 7] = [
    ("", &["version", "name", "displayName", "description", "behavior", "prompts", "logging"]),
    ("behavior", &["systemPromptPath", "completionType", "allowedTools", "permissionMode"]),
    ("prompts", &["registry"]),
    ("github", &["enabled"]),
    ("actions", &["enabled"]),
    ("logging", &["directory", "format"]),
    ("worktree", &["enabled"]),
];

fn check_required(doc: &Doc, root: &Node, layout: Layout, out: &mut Vec<Diagnostic>) {
    let file = doc.id();
    let required: &[(&str, &[&str])] = match layout {
        Layout::Verdict => &REQUIRED,
        Layout::Completion => &REQUIRED_COMPLETION,
        Layout::Flat => &REQUIRED_FLAT,
    };
    for (path, keys) in required {
        let node = if path.is_empty() { Some(root) } else { doc.at(path) };
        let Some(node) = node else { continue };
        if node.as_map().is_none() {
            out.push(Diagnostic::new(
                AC_VALID_001,
                file,
                node.span,
                format!(
                    "agent.json `{path}` must be an object, but it is {}; climpt rejects the agent definition",
                    node.type_name()
                ),
            ));
            continue;
        }
        for key in keys.iter().filter(|k| node.get(k).is_none()) {
            let full = if path.is_empty() { key.to_string() } else { format!("{path}.{key}") };
            out.push(Diagnostic::new(
                AC_VALID_001,
                file,
                brace(node),
                format!(
                    "agent.json lacks required `{full}`; climpt rejects the agent definition (fatal at agent start)"
                ),
            ));
        }
    }
    if layout != Layout::Flat
        && let Some(worktree) = doc.at("runner.execution.worktree")
        && worktree.as_map().is_some()
        && worktree.get("enabled").is_none()
    {
        out.push(Diagnostic::new(
            AC_VALID_001,
            file,
            brace(worktree),
            "agent.json lacks required `runner.execution.worktree.enabled`; climpt rejects the agent definition",
        ));
    }
    for entry in doc.get("parameters").and_then(Node::as_map).unwrap_or_default() {
        let name = entry.key.scalar_text();
        let Some(_) = entry.value.as_map() else {
            out.push(Diagnostic::new(
                AC_VALID_001,
                file,
                entry.value.span,
                format!(
                    "parameter `{name}` must be an object with `type`, `description` and `cli`, but it is {}",
                    entry.value.type_name()
                ),
            ));
            continue;
        };
        for key in ["type", "description", "cli"].iter().filter(|k| entry.value.get(k).is_none()) {
            out.push(Diagnostic::new(
                AC_VALID_001,
                file,
                brace(&entry.value),
                format!("parameter `{name}` lacks required `{key}`; climpt rejects the agent definition"),
            ));
        }
    }
}

/// AC-VALID-001 for an agent.json written in another release's layout than the one it runs on:
/// one finding at the key that shows it.
fn check_layout(agent: &Agent, doc: &Doc, root: &Node, written: Layout, out: &mut Vec<Diagnostic>) {
    let releases = agent.target.releases.named();
    let (key, message, fix) = match (written, agent.layout) {
        (Layout::Flat, _) => (
            "behavior",
            format!(
                "agent.json is in the flat layout of climpt 1.10.6 to 1.11.24 (`behavior`, `prompts`, `logging` at the top); {releases} rejects it when the agent loads (\"Detected v1.11.x config format\", since 1.12.0)"
            ),
            "move the keys under `runner` (`behavior.systemPromptPath` → `runner.flow.systemPromptPath`, `behavior.completionType` → `runner.verdict.type`, …; climpt's migration guide lists them), or pin the climpt release the agent was written for",
        ),
        (_, Layout::Flat) => (
            "runner",
            format!(
                "agent.json is in the `runner.*` layout of climpt 1.12.0 and later; {releases} reads the flat layout (`behavior`, `prompts`, `logging` at the top) and rejects an agent definition without `behavior`"
            ),
            "write the flat layout of that release, or upgrade climpt",
        ),
        (Layout::Completion, _) => (
            "runner",
            format!(
                "agent.json names `runner.completion`, which climpt 1.12.5 renamed `runner.verdict`; {releases} finds no `runner.verdict.type` and rejects the agent definition"
            ),
            "rename `runner.completion` to `runner.verdict` and its type to the verdict type (`externalState` → `poll:state`, …)",
        ),
        (_, _) => (
            "runner",
            format!(
                "agent.json names `runner.verdict`, which climpt calls `runner.completion` up to 1.12.4; {releases} finds no `runner.completion.type` and rejects the agent definition"
            ),
            "rename `runner.verdict` to `runner.completion` and its type to the completion type (`poll:state` → `externalState`, …), or upgrade climpt",
        ),
    };
    let span = root.entry(key).map_or(doc.anchor(), |e| e.key.span);
    out.push(Diagnostic::new(AC_VALID_001, doc.id(), span, message).with_help(fix));
}

// ---------------------------------------------------------------------------------------------
// R-F5, R-F6, R-F16, R-F17: parameters.

fn check_parameters(doc: &Doc, out: &mut Vec<Diagnostic>) {
    let file = doc.id();
    for entry in doc.get("parameters").and_then(Node::as_map).unwrap_or_default() {
        let name = entry.key.scalar_text();
        let def = &entry.value;
        if def.as_map().is_none() {
            continue;
        }
        if let Some(node) = def.get("type")
            && let Some(problem) = not_one_of(node, "parameter type", &PARAMETER_TYPES)
        {
            out.push(Diagnostic::new(R_F5, file, node.span, format!("parameter `{name}`: `type` {problem}")));
        }
        if let Some(node) = def.get("cli")
            && node.as_str().is_none_or(|c| !is_cli_flag(c))
        {
            let fix = node
                .as_str()
                .map(suggest_flag)
                .filter(|s| is_cli_flag(s))
                .map(|s| format!(" such as `{s}`"))
                .unwrap_or_default();
            out.push(Diagnostic::new(
                R_F6,
                file,
                node.span,
                format!(
                    "parameter `{name}`: `cli` {} is not a CLI flag; write `--` and a lowercase kebab-case name{fix} (`^--[a-z][a-z0-9-]*$`)",
                    shown(node)
                ),
            ));
        }
        if let Some(node) = def.get("required")
            && !matches!(node.value, Value::Bool(_))
        {
            out.push(Diagnostic::new(
                R_F17,
                file,
                node.span,
                format!("parameter `{name}`: `required` must be `true` or `false`, but it is {}", shown(node)),
            ));
        }
        if let Some(validation) = def.get("validation") {
            for key_entry in validation.as_map().unwrap_or_default() {
                let key = key_entry.key.scalar_text();
                if VALIDATION_KEYS.contains(&key.as_str()) {
                    continue;
                }
                out.push(Diagnostic::new(
                    R_F16,
                    file,
                    key_entry.key.span,
                    format!(
                        "parameter `{name}`: `validation.{key}` is not a validation keyword{}; use {}",
                        hint(validation_alias(&key).or_else(|| did_you_mean(&key, VALIDATION_KEYS))),
                        one_of(&VALIDATION_KEYS)
                    ),
                ));
            }
        }
    }
}

/// JSON Schema spellings of the four validation keywords.
fn validation_alias(key: &str) -> Option<&'static str> {
    match key {
        "minimum" | "minLength" | "minItems" => Some("min"),
        "maximum" | "maxLength" | "maxItems" => Some("max"),
        "regex" | "regexp" => Some("pattern"),
        "oneOf" | "values" | "choices" => Some("enum"),
        _ => None,
    }
}

/// `^--[a-z][a-z0-9-]*$`.
fn is_cli_flag(text: &str) -> bool {
    text.strip_prefix("--").is_some_and(crate::families::steps::rules::files::is_agent_name)
}

fn suggest_flag(text: &str) -> String {
    format!("--{}", crate::util::to_kebab_case(text.trim_start_matches('-')))
}

// ---------------------------------------------------------------------------------------------
// R-F12, R-F15, SR-GATE-004: the verdict.

fn check_verdict(agent: &Agent, doc: &Doc, out: &mut Vec<Diagnostic>) {
    let file = doc.id();
    let layout = agent.layout;
    let Some(verdict) = doc.at(layout.path("runner.verdict")).filter(|v| v.as_map().is_some()) else { return };
    let type_key = if layout == Layout::Flat { "completionType" } else { "type" };
    let Some(type_node) = verdict.get(type_key) else { return };
    let Some(written) = type_node.as_str().filter(|t| layout.types().contains(t)) else { return };
    // The requirements by the verdict type it became (or is).
    let verdict_type = if layout == Layout::Verdict { written } else { renamed_type(written).unwrap_or(written) };
    let keyword = layout.keyword();
    let needs: &[(&str, Need)] = match (verdict_type, layout) {
        ("poll:state" | "count:iteration", Layout::Verdict) => &[("maxIterations", Need::Count)],
        ("count:check", _) => &[("maxChecks", Need::Count)],
        ("detect:keyword", _) => &[(keyword, Need::Text)],
        ("detect:structured", _) => &[("signalType", Need::Text)],
        ("detect:graph", Layout::Verdict) => &[("registryPath", Need::Text), ("entryStep", Need::Text)],
        ("meta:composite", _) => &[("operator", Need::Operator), ("conditions", Need::List)],
        ("meta:custom", _) => &[("handlerPath", Need::Text)],
        // Up to 1.12.4 the defaults give `maxIterations`, and the external state and the step
        // machine take their settings at run time (`validateCompletionConfig`).
        _ => &[],
    };
    let config_key = if layout == Layout::Flat { "completionConfig" } else { "config" };
    let config_path = layout.path("runner.verdict.config");
    let noun = layout.noun();
    let config = verdict.get(config_key);
    match config {
        None if needs.is_empty() => {}
        None => {
            let keys: Vec<&str> = needs.iter().map(|(k, _)| *k).collect();
            out.push(Diagnostic::new(
                R_F12,
                file,
                brace(verdict),
                format!(
                    "the `{written}` {noun} has no `{config_key}`; it needs `{config_key}.{}`",
                    keys.join(&format!("` and `{config_key}."))
                ),
            ));
        }
        Some(config) if config.as_map().is_none() => out.push(Diagnostic::new(
            R_F12,
            file,
            config.span,
            format!("`{config_path}` must be an object, but it is {}", config.type_name()),
        )),
        Some(config) => {
            for (key, need) in needs {
                check_need(file, (written, noun, config_key), config, key, *need, out);
            }
            if verdict_type == "meta:composite" {
                check_conditions(file, layout, config, out);
            }
        }
    }
    // SR-GATE-004: a graph verdict walks the step machine; it needs gated steps.
    if verdict_type == "detect:graph" && !agent.steps().iter().any(|s| s.gate().is_some()) {
        let what = if layout == Layout::Verdict {
            "the verdict type is `detect:graph`".to_string()
        } else {
            format!("the completion type is `{written}`")
        };
        let registry = agent.registry;
        let steps_span = registry.root().and_then(|r| r.entry("steps")).map_or(registry.anchor(), |e| e.key.span);
        out.push(
            Diagnostic::new(
                SR_GATE_004,
                file,
                type_node.span,
                format!("{what}, but no step of the registry has a `structuredGate`, so there is no step machine to walk (fatal at agent start); give the flow steps a structuredGate or pick another {noun} type"),
            )
            .with_related(registry.id(), steps_span, "the registry's steps"),
        );
    }
}

#[derive(Clone, Copy)]
enum Need {
    /// A number of at least 1.
    Count,
    /// A non-empty string.
    Text,
    /// `and`, `or` or `first`.
    Operator,
    /// A list.
    List,
}

/// `written`: the type as agent.json names it, the verdict's noun and its config key.
fn check_need(
    file: FileId,
    (verdict_type, noun, config_key): (&str, &str, &str),
    config: &Node,
    key: &str,
    need: Need,
    out: &mut Vec<Diagnostic>,
) {
    let Some(node) = config.get(key) else {
        let what = match need {
            Need::Count => "a number of at least 1",
            Need::Text => "a string",
            Need::Operator => "`and`, `or` or `first`",
            Need::List => "a list of verdict conditions",
        };
        out.push(Diagnostic::new(
            R_F12,
            file,
            brace(config),
            format!(
                "the `{verdict_type}` {noun} needs `{config_key}.{key}` ({what}); climpt rejects the {noun} config"
            ),
        ));
        return;
    };
    let problem = match need {
        Need::Count => match node.value {
            Value::Int(n) if n >= 1 => None,
            Value::Float(f) if f >= 1.0 => None,
            _ => Some(format!("must be a number of at least 1, but it is {}", shown(node))),
        },
        Need::Text => match node.as_str() {
            Some(text) if !text.is_empty() => None,
            _ => Some(format!("must be a non-empty string, but it is {}", shown(node))),
        },
        Need::Operator => match node.as_str() {
            Some(op) if COMPOSITE_OPERATORS.contains(&op) => None,
            _ => Some(format!(
                "{} is not an operator{}; use {}",
                shown(node),
                hint(node.as_str().and_then(|o| did_you_mean(o, COMPOSITE_OPERATORS))),
                one_of(&COMPOSITE_OPERATORS)
            )),
        },
        Need::List => node
            .as_seq()
            .is_none()
            .then(|| format!("must be a list of verdict conditions, but it is {}", node.type_name())),
    };
    if let Some(problem) = problem {
        out.push(Diagnostic::new(
            R_F12,
            file,
            node.span,
            format!("`{verdict_type}` {noun}: `{config_key}.{key}` {problem}"),
        ));
    }
}

/// R-F15: each composite condition is a verdict type other than `meta:composite` (a completion
/// type other than `composite` up to 1.12.4).
fn check_conditions(file: FileId, layout: Layout, config: &Node, out: &mut Vec<Diagnostic>) {
    let composite = if layout == Layout::Verdict { "meta:composite" } else { "composite" };
    let noun = layout.noun();
    for condition in config.get("conditions").and_then(Node::as_seq).unwrap_or_default() {
        let Some(node) = condition.get("type") else { continue };
        let allowed: Vec<&str> = layout.types().iter().copied().filter(|t| *t != composite).collect();
        let message = match node.as_str() {
            Some(t) if allowed.contains(&t) => continue,
            Some(t) if t == composite => format!(
                "a `{composite}` condition cannot itself be `{composite}` (no nesting); use one of the other {noun} types"
            ),
            _ => format!(
                "composite condition type {} is not a {noun} type{}; use one of {}",
                shown(node),
                hint(node.as_str().and_then(|t| did_you_mean(t, allowed.iter().copied()))),
                allowed.join(", ")
            ),
        };
        out.push(Diagnostic::new(R_F15, file, node.span, message));
    }
}

// ---------------------------------------------------------------------------------------------
// R-F18, R-F19: enums.

fn check_enums(agent: &Agent, doc: &Doc, out: &mut Vec<Diagnostic>) {
    let file = doc.id();
    let path = agent.layout.path("runner.logging.format");
    if let Some(node) = doc.at(path)
        && let Some(problem) = not_one_of(node, "log format", &LOG_FORMATS)
    {
        out.push(Diagnostic::new(R_F18, file, node.span, format!("`{path}` {problem}")));
    }
    if let Some(node) = doc.at(agent.layout.path("runner.integrations.github.defaultClosureAction"))
        && let Some(problem) = not_one_of(node, "closure action", &CLOSURE_ACTIONS)
    {
        out.push(Diagnostic::new(
            R_F19,
            file,
            node.span,
            format!("`defaultClosureAction` {problem} (default `close`)"),
        ));
    }
}

fn hint(suggestion: Option<&str>) -> String {
    suggestion.map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default()
}
