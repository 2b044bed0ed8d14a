//! File-level `steps/` rules: syntax and duplicate keys of every family file; loading the
//! registry (required keys, agentId, the registry agent.json names), names and versions, legacy
//! keys and seed-era `fallbackKey`s; and the helpers the other groups share.

use super::prompts::C3lLoad;
use super::reach::{Live, Reach};
use crate::diagnostic::{Diagnostic, FileId, Severity};
use crate::families::steps::model::{Agent, Doc};
use crate::families::steps::release::{self, FALLBACK_KEYS, Fate, Graded};
use crate::families::steps::{
    DuplicateKey, FallbackKeyInvalid, JsonSyntax, LegacyKey, R_A1, R_F1, R_F2, SR_LOAD_001, SR_LOAD_002, SR_LOAD_003,
};
use crate::source::{Node, Span, Value};
use crate::util::did_you_mean;

/// Syntax errors and duplicate keys of one JSON or YAML file of the family.
pub(crate) fn check_syntax(doc: &Doc, out: &mut Vec<Diagnostic>) {
    for error in doc.errors() {
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
    let Some(root) = registry.root() else { return };
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
// LegacyKey and FallbackKeyInvalid: the seed-era format.

fn check_legacy(agent: &Agent, live: &Live, out: &mut Vec<Diagnostic>) {
    let registry = agent.registry;
    // The seed-era keys are part of the format up to 1.13.22 and ignored from 1.13.23 on.
    let dropped = release::grade(&agent.target, |facts| (!facts.seed_keys).then_some(Severity::Warning));
    let legacy_note = |what: String| -> Option<(String, Severity)> {
        match &dropped {
            Graded::None => None,
            Graded::All(level) => Some((what, *level)),
            Graded::Some(releases) => Some((
                format!("{what} (only {releases} ignore it; the other releases this agent may run on read it)"),
                Severity::Info,
            )),
        }
    };
    for key in ["userPromptsBase", "schemasBase"] {
        if let Some(entry) = registry.root().and_then(|r| r.entry(key))
            && let Some((message, level)) = legacy_note(format!(
                "`{key}` belongs to climpt's seed-era registry format, which climpt 1.13.23 dropped (e223069); the runtime ignores it; remove it (prompts resolve from `<agent>/prompts/`, schemas from `<agent>/schemas/`)"
            ))
        {
            out.push(legacy(registry.id(), &entry.key, message).with_severity(level));
        }
    }
    for step in agent.steps() {
        if let Some(entry) = step.def.entry("fallbackKey")
            && let Some((message, level)) = legacy_note(format!(
                "step `{}` has `fallbackKey`, which belongs to climpt's seed-era registry format, which climpt 1.13.23 dropped (c2d9cf6); the runtime ignores it and resolves only the C3L prompt file; remove it",
                step.id
            ))
        {
            out.push(legacy(registry.id(), &entry.key, message).with_severity(level));
        }
    }
    // A `fallbackKey` names an embedded prompt only in the releases that have them (1.13.0 to
    // 1.13.14), for the steps whose prompts a run reads.
    for step in agent.steps() {
        let Some(node) = step.get("fallbackKey") else { continue };
        let kind = step.kind();
        let used = release::grade(&agent.target, |facts| {
            (facts.embedded && release::fate(facts, kind) != Fate::Unread).then_some(Severity::Error)
        });
        if used == Graded::None {
            continue;
        }
        let load = super::prompts::c3l_load(agent, &step);
        let reached = super::reach::reach(live, &step);
        let mut found = Vec::new();
        check_fallback_key(registry.id(), step.id, node, (load, reached), &mut found);
        for mut d in found {
            if let Graded::Some(releases) = &used {
                d.message.push_str(&format!(
                    " (only {releases} send embedded prompts; the other releases this agent may run on never read the key)"
                ));
                d = d.with_severity(Severity::Info);
            }
            out.push(d);
        }
    }
    // `fallbackDir` went with the fallback prompts (a1af6c4); before, it is part of the format.
    if let Some(agent_json) = agent.agent_json
        && let Some(entry) = agent.setting("runner.flow.prompts").and_then(|p| p.entry("fallbackDir"))
        && let Some((message, level)) = legacy_note(
            "`runner.flow.prompts.fallbackDir` is legacy: climpt 1.13.23 and later ignore this key (its defaults drop it when the agent loads, and there are no fallback prompts any more); remove it".into(),
        )
    {
        out.push(legacy(agent_json.id(), &entry.key, message).with_severity(level));
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
    FALLBACK_KEYS.iter().copied().find(|k| *k == candidate || *k == with_default)
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
    if FALLBACK_KEYS.contains(&key) {
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
        let known = FALLBACK_KEYS.iter().copied().find(|k| *k == underscored);
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
        let typo = did_you_mean(key, FALLBACK_KEYS).filter(|k| crate::util::edit_distance(key, k) <= 2);
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
