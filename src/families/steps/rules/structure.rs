//! Step structure: the fields climpt's registry validator requires of every step and
//! validation step, naming, stepKind against c2, section steps, flow-step completeness, and the
//! enums and references of single fields (model, targetMode, priority, `args.*` conditions).

use crate::diagnostic::{Diagnostic, FileId, Severity};
use crate::families::steps::model::{Agent, Step, StepKind};
use crate::families::steps::rules::files::{brace, not_one_of, one_of, shown};
use crate::families::steps::{R_A5, R_B2, R_B11, R_E1, R_F13, R_F14, R_F20, SR_GATE_003, SR_VALID_004};
use crate::source::{Node, Span, Value};
use crate::util::did_you_mean;

/// Step-level `permissionMode` values (climpt's `validateStepRegistry`).
const PERMISSION_MODES: [&str; 4] = ["default", "plan", "acceptEdits", "bypassPermissions"];
/// `model` and `runner.flow.defaultModel` values.
const MODELS: [&str; 3] = ["sonnet", "opus", "haiku"];
/// `structuredGate.targetMode` values.
const TARGET_MODES: [&str; 3] = ["explicit", "dynamic", "conditional"];
/// stepId prefixes that name a phase (R-E1).
const PHASES: [&str; 5] = ["initial", "continuation", "closure", "section", "verification"];
/// The three keys of a flow step (R-B6).
const FLOW_KEYS: [&str; 3] = ["structuredGate", "transitions", "outputSchemaRef"];

pub(super) fn check(agent: &Agent, out: &mut Vec<Diagnostic>) {
    let registry = agent.registry;
    let file = registry.id();
    for entry in registry.get("steps").and_then(Node::as_map).unwrap_or_default() {
        if entry.value.as_map().is_none() {
            out.push(Diagnostic::new(
                SR_VALID_004,
                file,
                entry.value.span,
                format!(
                    "step `{}` must be an object (a step definition), but it is {}",
                    entry.key.scalar_text(),
                    entry.value.type_name()
                ),
            ));
        }
    }
    // climpt's runner checks every step's flow keys at start when any step has a gate.
    let routed = agent.steps().iter().any(|s| s.def.get("structuredGate").is_some());
    for step in agent.steps() {
        // The camelCase `c3` of a step matters where a run reads the step's prompt.
        let mut found = Vec::new();
        check_fields(file, &step, &mut found);
        let grade = crate::families::steps::release::prompt_grade(&agent.target, step.kind());
        for d in found {
            let c3 = step.get("c3").is_some_and(|n| d.span == n.span);
            out.push(if c3 { grade.apply(d, agent.layout.handler()) } else { d });
        }
        check_naming(file, &step, out);
        check_kind(file, &step, out);
        check_flow_keys(file, &step, routed, out);
        check_enums(file, &step, out);
        check_condition(agent, &step, out);
    }
    check_validation_steps(agent, out);
    check_default_model(agent, out);
}

/// SR-VALID-004 with the upstream id it stands for.
fn structural(file: FileId, span: Span, message: String, upstream: Option<&str>) -> Diagnostic {
    let id = upstream.map(|u| format!(", {u}")).unwrap_or_default();
    Diagnostic::new(SR_VALID_004, file, span, format!("{message} (SR-VALID-004{id})"))
}

/// `name`, `c2`, `c3`, `edition` (and `stepId` of a validation step): present, non-empty strings.
fn required_text(file: FileId, owner: &str, def: &Node, key: &str, out: &mut Vec<Diagnostic>) -> Option<String> {
    let upstream = (key != "stepId").then_some("R-F9");
    match def.get(key) {
        None if key == "edition" => {
            // The C3L loader uses `edition ?? "default"` (`c3l-prompt-loader.ts`).
            out.push(
                structural(
                    file,
                    brace(def),
                    format!("{owner} lacks `edition`; the runtime uses the edition `default` and runs the step, only `--validate` rejects the omission: write `\"edition\": \"default\"`"),
                    upstream,
                )
                .with_severity(Severity::Info),
            );
            None
        }
        None => {
            out.push(structural(
                file,
                brace(def),
                format!("{owner} lacks `{key}`, which must be a non-empty string; climpt's `--validate` rejects it"),
                upstream,
            ));
            None
        }
        Some(node) => match node.as_str() {
            Some(text) if !text.is_empty() => Some(text.to_string()),
            Some(_) => {
                out.push(structural(
                    file,
                    node.span,
                    format!("{owner}: `{key}` is empty; it must be a non-empty string"),
                    upstream,
                ));
                None
            }
            None => {
                out.push(structural(
                    file,
                    node.span,
                    format!("{owner}: `{key}` must be a non-empty string, but it is {}", node.type_name()),
                    upstream,
                ));
                None
            }
        },
    }
}

/// `^[a-z]+(-[a-z]+)*$`: breakdown's LayerType accepts nothing else.
pub(super) fn is_c3(text: &str) -> bool {
    !text.is_empty() && text.split('-').all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase()))
}

fn check_c3(file: FileId, owner: &str, def: &Node, out: &mut Vec<Diagnostic>) {
    let Some(node) = def.get("c3") else { return };
    let Some(c3) = node.as_str().filter(|c| !c.is_empty()) else { return };
    if is_c3(c3) {
        return;
    }
    let kebab = crate::util::to_kebab_case(c3);
    let hint = if is_c3(&kebab) { format!("; use `{kebab}`") } else { String::new() };
    out.push(structural(
        file,
        node.span,
        format!(
            "{owner}: `c3` `{c3}` is not lowercase kebab-case (`^[a-z]+(-[a-z]+)*$`, no digits or capitals){hint}; breakdown's LayerType validation rejects it"
        ),
        Some("R-E3"),
    ));
}

fn check_fields(file: FileId, step: &Step, out: &mut Vec<Diagnostic>) {
    let owner = format!("step `{}`", step.id);
    let def = step.def;
    // R-B1: stepId equals its key.
    match def.get("stepId") {
        None => out.push(structural(
            file,
            brace(def),
            format!("{owner} lacks `stepId`; it must repeat the step's key `{}`", step.id),
            Some("R-B1"),
        )),
        Some(node) => match node.as_str() {
            Some(id) if id == step.id => {}
            Some(id) => out.push(
                structural(
                    file,
                    node.span,
                    format!("step key `{}` does not match stepId `{id}`; the key and stepId must be the same", step.id),
                    Some("R-B1"),
                )
                .with_related(file, step.key.span, "the step's key"),
            ),
            None => out.push(structural(
                file,
                node.span,
                format!("{owner}: `stepId` must be the string `{}`, but it is {}", step.id, node.type_name()),
                Some("R-B1"),
            )),
        },
    }
    for key in ["name", "c2", "c3", "edition"] {
        required_text(file, &owner, def, key, out);
    }
    check_c3(file, &owner, def, out);
    // R-F7: uvVariables is a list of names.
    match def.get("uvVariables") {
        None => out.push(structural(
            file,
            brace(def),
            format!(
                "{owner} lacks `uvVariables`; the runtime defaults it to `[]` and runs the step, only `--validate` rejects the omission: declare the UV variables its prompt uses, or `[]`"
            ),
            Some("R-F7"),
        )
        .with_severity(Severity::Info)),
        Some(node) => match node.as_seq() {
            Some(items) => {
                for item in items.iter().filter(|i| i.as_str().is_none()) {
                    out.push(structural(
                        file,
                        item.span,
                        format!("{owner}: `uvVariables` entries must be variable names (strings), but this is {}", item.type_name()),
                        Some("R-F7"),
                    ));
                }
            }
            None => out.push(structural(
                file,
                node.span,
                format!("{owner}: `uvVariables` must be a list of variable names, but it is {}", node.type_name()),
                Some("R-F7"),
            )),
        },
    }
    // R-F8: usesStdin is a boolean.
    match def.get("usesStdin") {
        None => out.push(structural(
            file,
            brace(def),
            format!(
                "{owner} lacks `usesStdin`; the runtime defaults it to `false` and runs the step, only `--validate` rejects the omission: set `true` if its prompt reads `{{input_text}}`, else `false`"
            ),
            Some("R-F8"),
        )
        .with_severity(Severity::Info)),
        Some(node) if !matches!(node.value, Value::Bool(_)) => out.push(structural(
            file,
            node.span,
            format!("{owner}: `usesStdin` must be `true` or `false`, but it is {}", node.type_name()),
            Some("R-F8"),
        )),
        Some(_) => {}
    }
    if let Some(node) = def.get("type")
        && node.as_str() != Some("prompt")
    {
        out.push(structural(
            file,
            node.span,
            format!("{owner}: `type` must be `\"prompt\"` (the only step type), or left out"),
            None,
        ));
    }
    if !step.is_section() {
        if let Some(node) = def.get("stepKind")
            && node.as_str().and_then(StepKind::parse).is_none()
        {
            let suggestion = node.as_str().and_then(|k| did_you_mean(k, ["work", "verification", "closure"]));
            let hint = suggestion.map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default();
            out.push(structural(
                file,
                node.span,
                format!(
                    "{owner}: `stepKind` {} is not a step kind{hint}; use `work`, `verification` or `closure`",
                    shown(node)
                ),
                None,
            ));
        }
        // R-B10: a step with a gate names its kind; tool permissions depend on it.
        if def.get("structuredGate").is_some() && def.get("stepKind").is_none() {
            let inferred = step.c2().and_then(StepKind::from_c2);
            let hint = inferred.map(|k| format!(" (its c2 suggests `{}`)", k.as_str())).unwrap_or_default();
            out.push(structural(
                file,
                brace(def),
                format!(
                    "{owner} has a `structuredGate` but no explicit `stepKind`{hint}; flow steps must name their kind, since allowed intents and tool permissions depend on it"
                ),
                Some("R-B10"),
            ));
        }
    }
    // R-F4: step-level permissionMode.
    if let Some(node) = def.get("permissionMode")
        && let Some(problem) = not_one_of(node, "permission mode", &PERMISSION_MODES)
    {
        out.push(structural(file, node.span, format!("{owner}: `permissionMode` {problem}"), Some("R-F4")));
    }
    // R-F10: outputSchemaRef is `{ file, schema }`.
    if let Some(node) = def.get("outputSchemaRef") {
        check_output_schema_ref(file, &owner, node, out);
    }
}

fn check_output_schema_ref(file: FileId, owner: &str, node: &Node, out: &mut Vec<Diagnostic>) {
    if node.as_map().is_none() {
        out.push(structural(
            file,
            node.span,
            format!(
                "{owner}: `outputSchemaRef` must be an object `{{ \"file\": \"<x>.schema.json\", \"schema\": \"<name>\" }}`, but it is {}",
                node.type_name()
            ),
            Some("R-F10"),
        ));
        return;
    }
    for key in ["file", "schema"] {
        match node.get(key) {
            None => out.push(structural(
                file,
                brace(node),
                format!("{owner}: `outputSchemaRef` lacks `{key}`; it needs both `file` and `schema`"),
                Some("R-F10"),
            )),
            Some(value) if value.as_str().is_none_or(str::is_empty) => out.push(structural(
                file,
                value.span,
                format!("{owner}: `outputSchemaRef.{key}` must be a non-empty string, but it is {}", value.type_name()),
                Some("R-F10"),
            )),
            Some(_) => {}
        }
    }
}

/// R-E1: a dotted stepId starts with its phase, which matches c2.
fn check_naming(file: FileId, step: &Step, out: &mut Vec<Diagnostic>) {
    let Some((prefix, _)) = step.id.split_once('.') else { return };
    if !PHASES.contains(&prefix) {
        out.push(Diagnostic::new(
            R_E1,
            file,
            step.key.span,
            format!(
                "step id `{}` starts with `{prefix}`, which is not a phase; dotted step ids start with {} (matching c2)",
                step.id,
                one_of(&PHASES)
            ),
        ));
        return;
    }
    let Some(c2_node) = step.get("c2") else { return };
    let Some(c2) = c2_node.as_str().filter(|c| !c.is_empty()) else { return };
    if c2 == prefix || (prefix == "verification" && c2 == "initial") {
        return;
    }
    out.push(
        Diagnostic::new(
            R_E1,
            file,
            step.key.span,
            format!(
                "step id `{}` names phase `{prefix}` but its c2 is `{c2}`; the prompt lives under `{c2}/` and the default transition `initial.X` → `continuation.X` follows the id, so keep them the same",
                step.id
            ),
        )
        .with_related(file, c2_node.span, "c2"),
    );
}

/// R-B2: an explicit stepKind agrees with c2. R-B11: section steps take no part in the flow.
fn check_kind(file: FileId, step: &Step, out: &mut Vec<Diagnostic>) {
    if step.is_section() {
        for key in ["structuredGate", "transitions", "outputSchemaRef", "stepKind"] {
            if let Some(entry) = step.def.entry(key) {
                out.push(Diagnostic::new(
                    R_B11,
                    file,
                    entry.key.span,
                    format!(
                        "section step `{}` has `{key}`; a section step (c2 `section`) is a prompt fragment injected into other steps and takes no part in the flow, so it must not have structuredGate, transitions, outputSchemaRef or stepKind; remove it",
                        step.id
                    ),
                ));
            }
        }
        return;
    }
    let Some(kind_node) = step.get("stepKind") else { return };
    let Some(kind) = kind_node.as_str().and_then(StepKind::parse) else { return };
    let Some(c2_node) = step.get("c2") else { return };
    let Some(c2) = c2_node.as_str() else { return };
    let diagnostic = match (c2, kind) {
        ("initial" | "continuation", StepKind::Closure) => Diagnostic::new(
            R_B2,
            file,
            kind_node.span,
            format!(
                "step `{}` is a `closure` step under c2 `{c2}`: the runtime follows `stepKind` and runs it as a closure step (c2 only names its prompt directory), but climpt's `--validate` counts only c2 `closure` steps as closures; move it to c2 `closure` to follow the convention",
                step.id
            ),
        )
        .with_severity(Severity::Info),
        ("initial" | "continuation", _) => return,
        ("closure", StepKind::Closure) => return,
        ("closure", _) => Diagnostic::new(
            R_B2,
            file,
            kind_node.span,
            format!(
                "step `{}` has c2 `closure` but stepKind `{}`: the runtime follows `stepKind`, so the step can never emit `closing` and no run ends there, although climpt's `--validate` counts it as the closure that ends the flow; use stepKind `closure`, or another c2",
                step.id,
                kind.as_str()
            ),
        ),
        _ => return,
    };
    out.push(diagnostic.with_related(file, c2_node.span, "c2"));
}

/// SR-GATE-003: a step that routes has all of structuredGate, transitions and outputSchemaRef.
fn check_flow_keys(file: FileId, step: &Step, routed: bool, out: &mut Vec<Diagnostic>) {
    if step.is_section() || !step.is_flow_step() {
        return;
    }
    let (present, missing): (Vec<&str>, Vec<&str>) = FLOW_KEYS.iter().partition(|k| step.def.get(k).is_some());
    if missing.is_empty() {
        return;
    }
    let quoted = |keys: &[&str]| keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(" and ");
    // `SchemaManager.validateFlowSteps` (`schema-manager.ts`), called when the runner starts.
    // Without any gate the runner creates no router (`closure-manager.ts`), and the flow
    // orchestrator routes only through a gate: the step's transitions are never read.
    let consequence = if routed {
        "climpt's runner checks this when the agent starts and refuses to run it (`Steps missing …`)"
    } else {
        "no step has a structuredGate, so climpt creates no router and ignores these `transitions`"
    };
    out.push(Diagnostic::new(
        SR_GATE_003,
        file,
        brace(step.def),
        format!(
            "step `{}` has {} but no {}; a flow step needs structuredGate, transitions and outputSchemaRef together: {}",
            step.id,
            quoted(&present),
            quoted(&missing).replace(" and ", " or "),
            consequence
        ),
    ));
}

/// R-F13 (model), R-F14 (targetMode), R-F20 (priority).
fn check_enums(file: FileId, step: &Step, out: &mut Vec<Diagnostic>) {
    if let Some(node) = step.get("model") {
        check_model(file, &format!("step `{}`: `model`", step.id), node, out);
    }
    if let Some(node) = step.gate().and_then(|g| g.get("targetMode"))
        && let Some(problem) = not_one_of(node, "target mode", &TARGET_MODES)
    {
        out.push(Diagnostic::new(
            R_F14,
            file,
            node.span,
            format!("step `{}`: `targetMode` {problem} (default `explicit`)", step.id),
        ));
    }
    if let Some(node) = step.get("priority")
        && node.as_i64().is_none_or(|p| p < 1)
    {
        out.push(Diagnostic::new(
            R_F20,
            file,
            node.span,
            format!("step `{}`: `priority` must be a positive integer (1 or more), but it is {}", step.id, shown(node)),
        ));
    }
}

fn check_model(file: FileId, what: &str, node: &Node, out: &mut Vec<Diagnostic>) {
    if let Some(problem) = not_one_of(node, "model", &MODELS) {
        out.push(Diagnostic::new(R_F13, file, node.span, format!("{what} {problem}")));
    }
}

/// R-F13 for agent.json `runner.flow.defaultModel`.
fn check_default_model(agent: &Agent, out: &mut Vec<Diagnostic>) {
    let Some(agent_json) = agent.agent_json else { return };
    if let Some(node) = agent_json.at("runner.flow.defaultModel") {
        check_model(agent_json.id(), "`runner.flow.defaultModel`", node, out);
    }
}

/// R-A5: a step-level `condition`. climpt never evaluates one (only transition rules have a
/// `condition`, `workflow-router.ts`), so the step runs whenever a transition or an entry
/// reaches it, whatever the condition says. An `args.<name>` that is not an agent.json
/// parameter is named too: the condition could not have held anyway.
fn check_condition(agent: &Agent, step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(entry) = step.def.entry("condition") else { return };
    let node = &entry.value;
    if node.as_str().is_none() {
        return;
    }
    let file = agent.registry.file;
    let raw = &file.text[node.span.start..node.span.end];
    let params = agent.parameter_names();
    let unknown: Vec<(usize, &str)> = match agent.agent_json {
        Some(_) => arg_refs(raw).into_iter().filter(|(_, name)| !params.contains(name)).collect(),
        None => Vec::new(),
    };
    let also = match unknown.first() {
        Some((_, name)) => {
            let hint = did_you_mean(name, params.iter().copied())
                .map(|s| format!(" (did you mean `args.{s}`?)"))
                .unwrap_or_default();
            format!(
                "; besides, agent.json declares no parameter `{name}`{hint}, so `args.{name}` would always be undefined"
            )
        }
        None => String::new(),
    };
    let mut d = Diagnostic::new(
        R_A5,
        agent.registry.id(),
        entry.key.span,
        format!(
            "step `{}` has a `condition`, which climpt ignores: the runtime never evaluates a step-level condition, so the step runs whenever a transition or an entry reaches it{also}",
            step.id
        ),
    )
    .with_help("route to the step with a conditional transition rule (`condition` + `targets` on the rule of the step before it), or remove the `condition`");
    if let (Some(agent_json), Some((offset, name))) = (agent.agent_json, unknown.first()) {
        let span = Span::new(node.span.start + offset, node.span.start + offset + "args.".len() + name.len());
        d = d.with_related(agent.registry.id(), span, format!("`args.{name}` is not a parameter"));
        if let Some(params_node) = agent_json.get("parameters") {
            d = d.with_related(agent_json.id(), brace(params_node), "the agent's parameters");
        }
    }
    out.push(d);
}

/// `args.<identifier>` occurrences (byte offset, name) in a condition expression.
fn arg_refs(text: &str) -> Vec<(usize, &str)> {
    let bytes = text.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("args.").map(|i| i + from) {
        from = at + "args.".len();
        if at > 0 && (ident(bytes[at - 1]) || bytes[at - 1] == b'.') {
            continue;
        }
        let end = bytes[from..].iter().position(|b| !ident(*b)).map_or(bytes.len(), |i| i + from);
        if end > from && !bytes[from].is_ascii_digit() {
            out.push((at, &text[from..end]));
        }
    }
    out
}

/// Validation steps: `stepId`, `name`, `c2`, `c3` are required non-empty strings; c3 is kebab.
fn check_validation_steps(agent: &Agent, out: &mut Vec<Diagnostic>) {
    let file = agent.registry.id();
    for entry in agent.registry.get("validationSteps").and_then(Node::as_map).unwrap_or_default() {
        let def = &entry.value;
        if def.as_map().is_none() {
            continue;
        }
        let owner = format!("validation step `{}`", entry.key.scalar_text());
        for key in ["stepId", "name", "c2", "c3"] {
            required_text(file, &owner, def, key, out);
        }
        check_c3(file, &owner, def, out);
    }
}
