//! The send/receive contract of a flow step: `structuredGate` (its intents and fields), the
//! `transitions` it needs, `outputSchemaRef`, the intent enum of the step schema, the
//! `handoffFields` the schema must produce, and every `$ref` of the agent's schema files.

use std::collections::HashSet;

use crate::diagnostic::{Applicability, Diagnostic, Edit, FileId, Severity};
use crate::families::steps::model::{Agent, Doc, INTENT_ALIASES, INTENTS, Step, StepKind, allowed_intents_for};
use crate::families::steps::rules::flow::{StepIndex, is_closure};
use crate::families::steps::schema_ref::{self, Loc, SchemaError};
use crate::families::steps::{
    R_B4, R_B12, R_B14, R_B15, R_D1, R_D2, R_D4, SR_VALID_001, SR_VALID_002, SR_VALID_003, SchemaRef,
};
use crate::source::{Node, Span, Value};
use crate::util::did_you_mean;

/// Schema keywords whose values are data, not schemas (a `$ref` key there is not a reference).
const DATA_KEYWORDS: [&str; 4] = ["enum", "const", "default", "examples"];

pub(super) fn check(agent: &Agent, index: &StepIndex, out: &mut Vec<Diagnostic>) {
    let closures: Vec<&str> = index.steps.iter().filter(|s| is_closure(s)).map(|s| s.id).collect();
    for step in &index.steps {
        check_intents(step, agent.registry.id(), out);
        check_gate_fields(step, agent.registry.id(), out);
        check_transition_keys(agent, index, &closures, step, out);
        if let Some(schema) = output_schema(agent, step, out) {
            check_intent_enum(agent, step, schema, out);
            check_handoff_fields(agent, step, schema, out);
        }
    }
    check_schema_refs(agent, out);
}

/// How the step's kind was decided, for messages.
fn kind_phrase(step: &Step, kind: StepKind) -> String {
    match (step.str_field("stepKind"), step.c2()) {
        (None, Some(c2)) => format!("a {} step (inferred from c2 `{c2}`)", kind.as_str()),
        _ => format!("a {} step", kind.as_str()),
    }
}

fn list(intents: &[&str]) -> String {
    intents.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", ")
}

/// Why `intent` cannot be in `allowedIntents` (or be `fallbackIntent`) of `step`, if it cannot.
fn intent_problem(step: &Step, intent: &str, span: Span, field: &str, file: FileId) -> Option<Diagnostic> {
    if intent == "fallback" && field == "allowedIntents" {
        return Some(
            Diagnostic::new(
                R_B12,
                file,
                span,
                "`fallback` is a reserved transitions key, not an intent; remove it from `allowedIntents`",
            )
            .with_help(
                "a transition rule's `fallback` names a step; the gate can never yield an intent called `fallback`",
            ),
        );
    }
    if intent == "abort" {
        return Some(
            Diagnostic::new(
                SR_VALID_001,
                file,
                span,
                format!(
                    "`abort` cannot be in `{field}`: climpt's registry validator rejects it (fatal at agent start)"
                ),
            )
            .with_help(
                "[doc≠code] climpt's docs call `abort` always allowed and its router lets an emitted `abort` through, \
                 but `validateStepKindIntents` rejects it in allowedIntents/fallbackIntent; remove it",
            ),
        );
    }
    if !INTENTS.contains(&intent) {
        let alias = INTENT_ALIASES.iter().find(|(a, _)| a.eq_ignore_ascii_case(intent)).map(|(_, i)| *i);
        let mut diagnostic = Diagnostic::new(
            SR_VALID_001,
            file,
            span,
            format!("`{intent}` is not an intent; `{field}` takes only next, repeat, jump, handoff, escalate, closing"),
        );
        if let Some(intent_name) = alias {
            diagnostic = diagnostic.with_help(format!(
                "`{intent}` is an alias the gate maps the LLM's answer to `{intent_name}` with; the registry uses the intent name `{intent_name}`"
            ));
        } else if let Some(s) = did_you_mean(intent, INTENTS) {
            diagnostic = diagnostic.with_help(format!("did you mean `{s}`?"));
        }
        return Some(diagnostic);
    }
    let kind = step.kind()?;
    let allowed = allowed_intents_for(kind);
    if allowed.contains(&intent) {
        return None;
    }
    let mut message = format!(
        "`{intent}` is not allowed for {}; fatal at agent start (allowed: {})",
        kind_phrase(step, kind),
        list(allowed)
    );
    if intent == "escalate" {
        message = format!(
            "`escalate` is only for verification steps, and this is {}; fatal at agent start",
            kind_phrase(step, kind)
        );
    }
    let help = match intent {
        "closing" => "only a closure step may end the flow; a work step hands off to a closure step with `handoff`",
        "handoff" => "only work steps hand off (to a closure step); a verification step must not skip closure",
        "next" | "jump" => "a closure step either completes (`closing`) or retries (`repeat`)",
        _ => "change the intent or the step's `stepKind`",
    };
    Some(Diagnostic::new(SR_VALID_001, file, span, message).with_help(help))
}

/// SR-VALID-001 and R-B12: `allowedIntents` items and `fallbackIntent`.
fn check_intents(step: &Step, file: FileId, out: &mut Vec<Diagnostic>) {
    let Some(gate) = step.gate() else { return };
    for item in gate.get("allowedIntents").and_then(Node::as_seq).unwrap_or_default() {
        if let Some(intent) = item.as_str() {
            out.extend(intent_problem(step, intent, item.span, "allowedIntents", file));
        }
    }
    if let Some(fallback) = gate.get("fallbackIntent")
        && let Some(intent) = fallback.as_str()
    {
        out.extend(intent_problem(step, intent, fallback.span, "fallbackIntent", file));
    }
}

/// Opening brace of a mapping: where a missing key is reported.
fn brace(node: &Node) -> Span {
    Span::new(node.span.start, (node.span.start + 1).min(node.span.end))
}

/// SR-VALID-002 (intentSchemaRef, intentField), R-B14 (targetField), R-B15 (handoffFields).
fn check_gate_fields(step: &Step, file: FileId, out: &mut Vec<Diagnostic>) {
    let Some(gate) = step.gate() else { return };
    let id = step.id;
    match gate.get("intentSchemaRef") {
        None => out.push(
            Diagnostic::new(
                SR_VALID_002,
                file,
                brace(gate),
                format!("the structuredGate of `{id}` has no `intentSchemaRef`; fatal at agent start"),
            )
            .with_help("add the JSON Pointer to the intent enum in the step schema, e.g. `\"intentSchemaRef\": \"#/properties/next_action/properties/action\"`"),
        ),
        Some(node) => {
            let text = node.as_str();
            if !text.is_some_and(|t| t.starts_with("#/")) {
                let shown = text.map_or_else(|| node.type_name().to_string(), |t| format!("`{t}`"));
                let mut diagnostic = Diagnostic::new(
                    SR_VALID_002,
                    file,
                    node.span,
                    format!("`intentSchemaRef` must be an internal JSON Pointer starting with `#/`, not {shown} (R-B7); fatal at agent start"),
                );
                if let Some((file_part, pointer)) = text.and_then(|t| t.split_once('#'))
                    && !file_part.is_empty()
                {
                    diagnostic = diagnostic.with_help(format!(
                        "external file references are not allowed: the pointer is walked inside the step's own schema; write `#{pointer}` and use `$ref` in the schema file for shared parts"
                    ));
                }
                out.push(diagnostic);
            }
        }
    }
    if gate.get("intentField").and_then(Node::as_str).is_none_or(str::is_empty) {
        let span = gate.get("intentField").map_or(brace(gate), |n| n.span);
        out.push(
            Diagnostic::new(
                SR_VALID_002,
                file,
                span,
                format!("the structuredGate of `{id}` has no `intentField` (R-B8); climpt never infers where the intent is"),
            )
            .with_help("add the dotted path of the intent in the structured output, e.g. `\"intentField\": \"next_action.action\"`"),
        );
    }
    for (intent, span) in step.allowed_intents() {
        if intent == "jump" && gate.get("targetField").is_none() {
            out.push(
                Diagnostic::new(
                    R_B14,
                    file,
                    brace(gate),
                    format!("`{id}` allows `jump` but its structuredGate has no `targetField`: a jump never gets a target step"),
                )
                .with_related(file, span, "`jump` is allowed here")
                .with_help("add the dotted path of the target step id, e.g. `\"targetField\": \"next_action.details.target\"`"),
            );
        }
        if intent == "handoff" && gate.get("handoffFields").is_none() {
            out.push(
                Diagnostic::new(
                    R_B15,
                    file,
                    brace(gate),
                    format!("`{id}` allows `handoff` but its structuredGate has no `handoffFields`"),
                )
                .with_related(file, span, "`handoff` is allowed here")
                .with_help("list the dotted output paths handed to the next step, or write `\"handoffFields\": []` to hand off nothing"),
            );
        }
    }
}

/// Allowed intents that are real, listable and allowed for the step's kind (others are
/// reported by SR-VALID-001/R-B12), without duplicates.
fn valid_allowed<'a>(step: &Step<'a>) -> Vec<(&'a str, Span)> {
    let mut seen = HashSet::new();
    step.allowed_intents()
        .into_iter()
        .filter(|(intent, _)| INTENTS.contains(intent) && *intent != "abort")
        .filter(|(intent, _)| step.kind().is_none_or(|k| allowed_intents_for(k).contains(intent)))
        .filter(|(intent, _)| seen.insert(*intent))
        .collect()
}

/// R-B4: every allowed intent but `repeat` has a transition; every transition is allowed.
fn check_transition_keys(agent: &Agent, index: &StepIndex, closures: &[&str], step: &Step, out: &mut Vec<Diagnostic>) {
    let file = agent.registry.id();
    let Some(gate) = step.gate() else { return };
    if gate.get("allowedIntents").and_then(Node::as_seq).is_none() {
        return;
    }
    let Some(transitions) = step.get("transitions").filter(|t| t.as_map().is_some()) else { return };
    let id = step.id;
    let allowed = valid_allowed(step);
    for (intent, span) in &allowed {
        if *intent == "repeat" {
            continue;
        }
        match transitions.get(intent) {
            None => {
                let consequence = match *intent {
                    "next" => match index.default_continuation(step) {
                        Some(c) => format!("climpt's --validate rejects this (at runtime `next` falls back to `{c}`)"),
                        None => "routing fails when the LLM sends it (SR-TRANS-003)".to_string(),
                    },
                    "handoff" => "routing fails when the LLM sends it (SR-TRANS-004)".to_string(),
                    "escalate" => "routing fails when the LLM sends it (SR-TRANS-007)".to_string(),
                    "jump" => "a jump without a target at `targetField` falls back to the default transition or fails (SR-TRANS-003)".to_string(),
                    _ => "climpt's --validate rejects this".to_string(),
                };
                let mut diagnostic = Diagnostic::new(
                    R_B4,
                    file,
                    *span,
                    format!(
                        "`{intent}` is in allowedIntents of `{id}` but `transitions` has no `{intent}` rule; {consequence}"
                    ),
                );
                if let Some((value, applicability)) = missing_rule_value(index, closures, step, intent)
                    && let Some(edit) = insert_entry(&agent.registry.file.text, transitions, intent, &value)
                {
                    diagnostic = diagnostic.with_fix(
                        format!("Add `\"{intent}\": {value}` to transitions"),
                        applicability,
                        vec![edit],
                    );
                }
                out.push(diagnostic);
            }
            Some(rule) if *intent == "handoff" && rule.as_map().is_some() && rule.get("target").is_none() => {
                out.push(
                    Diagnostic::new(
                        R_B4,
                        file,
                        rule.span,
                        format!("the `handoff` rule of `{id}` has no `target`; climpt routes handoff only through `transitions.handoff.target` (SR-TRANS-004)"),
                    )
                    .with_help("a conditional rule (`condition`/`targets`) is not read for handoff; write `{ \"target\": \"<closure step>\" }`"),
                );
            }
            Some(_) => {}
        }
    }
    let kind_allowed = |key: &str| step.kind().is_none_or(|k| allowed_intents_for(k).contains(&key));
    for (key, _) in step.transitions() {
        let Some(name) = key.as_str() else { continue };
        // Unknown keys, `abort` and intents the kind forbids have their own codes.
        if !INTENTS.contains(&name) || name == "abort" || !kind_allowed(name) {
            continue;
        }
        if !step.allows(name) {
            out.push(
                Diagnostic::new(
                    R_B4,
                    file,
                    key.span,
                    format!(
                        "dead transition: `{name}` is not in allowedIntents of `{id}`, so the gate never yields it"
                    ),
                )
                .with_severity(Severity::Warning)
                .with_help(format!(
                    "add `{name}` to allowedIntents (and to the schema's intent enum), or remove this rule"
                )),
            );
        }
    }
}

/// The rule to add for an allowed intent without one, when it is clear what it should be.
fn missing_rule_value(
    index: &StepIndex,
    closures: &[&str],
    step: &Step,
    intent: &str,
) -> Option<(String, Applicability)> {
    match intent {
        "closing" => Some(("{ \"target\": null }".to_string(), Applicability::Safe)),
        "next" => {
            let continuation = index.default_continuation(step)?;
            Some((format!("{{ \"target\": {} }}", quote(&continuation)), Applicability::Safe))
        }
        "handoff" => match closures {
            [only] => Some((format!("{{ \"target\": {} }}", quote(only)), Applicability::Unsafe)),
            _ => None,
        },
        _ => None,
    }
}

fn quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("\"{text}\""))
}

/// An edit adding `"key": value` as the last entry of the JSON object `map`.
fn insert_entry(text: &str, map: &Node, key: &str, value: &str) -> Option<Edit> {
    let entries = map.as_map()?;
    let Some(last) = entries.last() else {
        return Some(Edit { span: map.span, replacement: format!("{{ {}: {value} }}", quote(key)) });
    };
    // Only within the mapping: a minified file is one long line.
    let line_start = text[map.span.start..last.key.span.start].rfind('\n').map(|i| map.span.start + i + 1);
    let indent = line_start.map_or("", |start| &text[start..last.key.span.start]);
    let separator = if let Some(line_start) = line_start
        && indent.chars().all(|c| c == ' ' || c == '\t')
    {
        let newline = if text[..line_start].ends_with("\r\n") { "\r\n" } else { "\n" };
        format!(",{newline}{indent}")
    } else {
        ", ".to_string()
    };
    Some(Edit { span: Span::empty(last.value.span.end), replacement: format!("{separator}{}: {value}", quote(key)) })
}

/// Whether schema files are expected next to the registry: an agent directory with an
/// `agent.json` or a `schemas/` file. A registry alone (a test fixture) is checked for its
/// own consistency only.
fn expects_schema_files(agent: &Agent) -> bool {
    agent.agent_json.is_some() || !agent.schemas.is_empty()
}

/// R-D1, R-D2: finds the step schema `outputSchemaRef` names.
fn output_schema<'a>(agent: &Agent<'a, 'a>, step: &Step<'a>, out: &mut Vec<Diagnostic>) -> Option<Loc<'a>> {
    let reference = step.get("outputSchemaRef")?;
    let file_node = reference.get("file")?;
    let schema_node = reference.get("schema")?;
    let (file_name, schema) = (file_node.as_str()?, schema_node.as_str()?);
    if file_name.is_empty() || schema.is_empty() {
        return None;
    }
    let registry = agent.registry.id();
    let consequence =
        if step.gate().is_some() { "fatal at agent start" } else { "the step fails at its first iteration" };
    match schema_ref::step_schema(agent, file_name, schema) {
        Ok(loc) => Some(loc),
        Err(SchemaError::FileMissing) => {
            // A schema file that does not parse is reported as JsonSyntax in that file.
            if agent.schema_file(file_name).is_none() && expects_schema_files(agent) {
                out.push(schema_file_missing(agent, file_name, file_node.span, consequence));
            }
            None
        }
        Err(SchemaError::Malformed { name }) => {
            out.push(
                Diagnostic::new(
                    R_D2,
                    registry,
                    schema_node.span,
                    format!("`outputSchemaRef.schema` `{name}` is malformed: a pointer starts with a single `#`; {consequence}"),
                )
                .with_help(format!("write `{}`", &name[1..])),
            );
            None
        }
        Err(SchemaError::NameMissing { name }) => {
            let doc = agent.schema_file(file_name)?;
            let mut diagnostic = Diagnostic::new(
                R_D2,
                registry,
                schema_node.span,
                format!(
                    "schema `{name}` is not in `{file_name}` (looked in `definitions`, `$defs` and the top level); {consequence}"
                ),
            );
            if let Some(s) = did_you_mean(name.rsplit('/').next().unwrap_or(&name), schema_names(doc)) {
                diagnostic = diagnostic.with_help(format!("did you mean `{s}`?"));
            }
            out.push(diagnostic);
            None
        }
        Err(_) => None,
    }
}

fn schema_file_missing(agent: &Agent, name: &str, span: Span, consequence: &str) -> Diagnostic {
    let schemas_dir = agent.schemas_dir();
    let path = crate::workspace::discover::normalize(&schemas_dir.join(name));
    let message = if !path.starts_with(&schemas_dir) {
        format!("`outputSchemaRef.file` `{name}` points outside the agent's `schemas/` directory; {consequence}")
    } else if agent.workspace.exists(&path) {
        format!("`outputSchemaRef.file` `{name}` is not a JSON schema file; {consequence}")
    } else {
        format!("`outputSchemaRef.file` `{name}` does not exist in the agent's `schemas/` directory; {consequence}")
    };
    let names: Vec<String> = agent
        .schemas
        .iter()
        .filter_map(|d| Some(d.path().strip_prefix(&schemas_dir).ok()?.to_string_lossy().replace('\\', "/")))
        .collect();
    let mut diagnostic = Diagnostic::new(R_D1, agent.registry.id(), span, message);
    diagnostic = match did_you_mean(name, names.iter().map(String::as_str)) {
        Some(s) => diagnostic.with_help(format!("did you mean `{s}`?")),
        None => diagnostic.with_help("climpt reads `outputSchemaRef.file` relative to `.agent/<agent>/schemas/`"),
    };
    diagnostic
}

/// Names `outputSchemaRef.schema` can take in a schema file.
fn schema_names<'d>(doc: &'d Doc) -> Vec<&'d str> {
    let Some(root) = doc.root() else { return Vec::new() };
    let section =
        |key: &str| root.get(key).and_then(Node::as_map).unwrap_or_default().iter().filter_map(|e| e.key_str());
    section("definitions")
        .chain(section("$defs"))
        .chain(root.as_map().unwrap_or_default().iter().filter_map(|e| e.key_str()).filter(|k| !k.starts_with('$')))
        .collect()
}

/// Where a schema error is written, for a related location.
fn error_site<'a>(error: &SchemaError<'a>) -> Option<(FileId, Span, String)> {
    match error {
        SchemaError::RefUnresolved { at, target, why } => {
            let span = at.node.get("$ref").map_or(at.span(), |n| n.span);
            Some((at.file(), span, format!("`$ref` `{target}` does not resolve: {why}")))
        }
        SchemaError::Cycle { at, target } => {
            let span = at.node.get("$ref").map_or(at.span(), |n| n.span);
            Some((at.file(), span, format!("`$ref` `{target}` leads back to itself")))
        }
        _ => None,
    }
}

/// SR-VALID-003: the enum at `intentSchemaRef` equals `allowedIntents`, as a set, exactly.
fn check_intent_enum<'a>(agent: &Agent<'a, 'a>, step: &Step<'a>, schema: Loc<'a>, out: &mut Vec<Diagnostic>) {
    let file = agent.registry.id();
    let Some(gate) = step.gate() else { return };
    let Some(pointer_node) = gate.get("intentSchemaRef") else { return };
    let Some(pointer) = pointer_node.as_str().and_then(|p| p.strip_prefix('#')).filter(|p| p.starts_with('/')) else {
        return;
    };
    let Some(allowed_node) = gate.get("allowedIntents").filter(|n| n.as_seq().is_some()) else { return };
    let schema_name = step.get("outputSchemaRef").and_then(|r| r.get("schema")).and_then(Node::as_str).unwrap_or("");
    let schema_file = schema.doc.file.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let target = match schema_ref::walk_pointer(agent, schema, pointer) {
        Err(error) => {
            let mut diagnostic = Diagnostic::new(
                SR_VALID_003,
                file,
                pointer_node.span,
                format!(
                    "cannot check the intent enum of `{}`: the step schema does not resolve; fatal at agent start",
                    step.id
                ),
            );
            if let Some((site_file, span, message)) = error_site(&error) {
                diagnostic = diagnostic.with_related(site_file, span, message);
            }
            out.push(diagnostic);
            return;
        }
        Ok(None) => {
            out.push(pointer_leads_nowhere(agent, step, schema, pointer, pointer_node.span, schema_name, schema_file));
            return;
        }
        Ok(Some(loc)) => loc,
    };
    let Some(enum_node) = target.node.get("enum").filter(|e| e.as_seq().is_some()) else {
        out.push(
            Diagnostic::new(
                SR_VALID_003,
                file,
                pointer_node.span,
                format!("`intentSchemaRef` of `{}` does not point to an enum in schema `{schema_name}`; fatal at agent start", step.id),
            )
            .with_related(target.file(), target.span(), "the pointer lands here, a node without `enum`")
            .with_help("point at the string property whose `enum` lists the step's intents, usually `#/properties/next_action/properties/action`"),
        );
        return;
    };
    let enum_values: Vec<&str> = dedup(enum_node.as_seq().unwrap_or_default().iter().filter_map(Node::as_str));
    let allowed_values: Vec<&str> = dedup(step.allowed_intents().into_iter().map(|(i, _)| i));
    // Values SR-VALID-001/R-B12 already ask to remove from allowedIntents are not asked into the enum.
    let listable = |i: &&str| {
        INTENTS.contains(i) && *i != "abort" && step.kind().is_none_or(|k| allowed_intents_for(k).contains(i))
    };
    let enum_lacks: Vec<&str> =
        allowed_values.iter().copied().filter(|i| listable(i) && !enum_values.contains(i)).collect();
    let allowed_lacks: Vec<&str> = enum_values.iter().copied().filter(|i| !allowed_values.contains(i)).collect();
    if enum_lacks.is_empty() && allowed_lacks.is_empty() {
        return;
    }
    let mut parts = Vec::new();
    if !enum_lacks.is_empty() {
        parts.push(format!("the schema's enum lacks {}", list(&enum_lacks)));
    }
    if !allowed_lacks.is_empty() {
        parts.push(format!("allowedIntents lacks {}", list(&allowed_lacks)));
    }
    let mut diagnostic = Diagnostic::new(
        SR_VALID_003,
        file,
        allowed_node.span,
        format!(
            "allowedIntents of `{}` and the intent enum of schema `{schema_name}` differ: {}; fatal at agent start",
            step.id,
            parts.join("; ")
        ),
    )
    .with_related(target.file(), enum_node.span, format!("the intent enum in `{schema_file}`"))
    .with_help(
        "the LLM can only send what the enum lists and the gate only accepts what allowedIntents lists; climpt requires both to hold the same intents",
    );
    // The step already routes these intents (allowedIntents), so the schema should let the LLM
    // send them: the fix edits the enum in the schema file. Intents the enum has and the step
    // does not allow are left to the author (allowing them needs transitions too).
    if !enum_lacks.is_empty() && enum_node.as_seq().is_some() {
        let mut values: Vec<String> = enum_values.iter().map(|i| quote(i)).collect();
        values.extend(enum_lacks.iter().map(|i| quote(i)));
        diagnostic = diagnostic.with_fix_in(
            target.file(),
            format!("Add {} to the schema's enum", list(&enum_lacks)),
            Applicability::Unsafe,
            vec![Edit { span: enum_node.span, replacement: format!("[{}]", values.join(", ")) }],
        );
    }
    out.push(diagnostic);
}

fn dedup<'a>(values: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen = HashSet::new();
    values.filter(|v| seen.insert(*v)).collect()
}

/// SR-VALID-003 when the pointer stops early: names the missing token and where it stopped.
fn pointer_leads_nowhere<'a>(
    agent: &Agent<'a, 'a>,
    step: &Step<'a>,
    schema: Loc<'a>,
    pointer: &str,
    span: Span,
    schema_name: &str,
    schema_file: &str,
) -> Diagnostic {
    let tokens: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
    let mut reached = schema;
    let mut walked = 0;
    let mut combined = ["allOf", "anyOf", "oneOf"].iter().any(|c| schema.node.get(c).is_some());
    for i in 0..tokens.len() {
        let prefix = format!("/{}", tokens[..=i].join("/"));
        match schema_ref::walk_pointer(agent, schema, &prefix) {
            Ok(Some(loc)) => {
                reached = loc;
                walked = i + 1;
                combined |= ["allOf", "anyOf", "oneOf"].iter().any(|c| loc.node.get(c).is_some());
            }
            _ => break,
        }
    }
    let missing = tokens.get(walked).copied().unwrap_or("");
    let under =
        if walked == 0 { "the schema's root".to_string() } else { format!("`#/{}`", tokens[..walked].join("/")) };
    let mut diagnostic = Diagnostic::new(
        SR_VALID_003,
        agent.registry.id(),
        span,
        format!(
            "`intentSchemaRef` of `{}` leads nowhere in schema `{schema_name}` of `{schema_file}`: there is no `{missing}` under {under}; fatal at agent start",
            step.id
        ),
    )
    .with_related(reached.file(), reached.span(), format!("the pointer stops here, finding no `{missing}`"));
    diagnostic = if combined {
        diagnostic.with_help(
            "climpt inlines `$ref`s and then walks the pointer literally, without looking into `allOf`/`anyOf`/`oneOf`; declare the property in the step schema itself",
        )
    } else {
        diagnostic
            .with_help("the pointer is walked from the step schema `outputSchemaRef` names, after inlining `$ref`s")
    };
    diagnostic
}

/// Whether a schema node is a non-object type that can have no properties.
fn is_scalar_type(node: &Node) -> bool {
    matches!(
        node.get("type").and_then(Node::as_str),
        Some("string" | "number" | "integer" | "boolean" | "null" | "array")
    )
}

/// Property names a schema node declares, directly or in its `allOf`/`anyOf`/`oneOf` members.
fn property_names<'a>(
    agent: &Agent<'a, 'a>,
    loc: Loc<'a>,
    seen: &mut HashSet<(FileId, usize)>,
    names: &mut Vec<&'a str>,
) {
    let Ok(loc) = schema_ref::deref(agent, loc) else { return };
    // Members reached twice (shared `$ref`s) are read once: no blow-up on hostile schemas.
    if seen.len() > 256 || !seen.insert((loc.file(), loc.node.span.start)) {
        return;
    }
    names.extend(
        loc.node.get("properties").and_then(Node::as_map).unwrap_or_default().iter().filter_map(|e| e.key_str()),
    );
    for combinator in ["allOf", "anyOf", "oneOf"] {
        for member in loc.node.get(combinator).and_then(Node::as_seq).unwrap_or_default() {
            property_names(agent, Loc { doc: loc.doc, node: member }, seen, names);
        }
    }
}

/// R-D4: each `handoffFields` path is a property the step schema can produce.
fn check_handoff_fields<'a>(agent: &Agent<'a, 'a>, step: &Step<'a>, schema: Loc<'a>, out: &mut Vec<Diagnostic>) {
    let Some(gate) = step.gate() else { return };
    let schema_name = step.get("outputSchemaRef").and_then(|r| r.get("schema")).and_then(Node::as_str).unwrap_or("");
    for item in gate.get("handoffFields").and_then(Node::as_seq).unwrap_or_default() {
        let Some(path) = item.as_str().filter(|p| !p.is_empty()) else { continue };
        let mut current = schema;
        let mut under: Vec<&str> = Vec::new();
        for segment in path.split('.') {
            match schema_ref::property(agent, current, segment) {
                Err(_) => break,
                Ok(Some(next)) => {
                    current = next;
                    under.push(segment);
                }
                Ok(None) => {
                    let Ok(resolved) = schema_ref::deref(agent, current) else { break };
                    if schema_ref::is_open(agent, resolved) && !is_scalar_type(resolved.node) {
                        break;
                    }
                    let place = if under.is_empty() {
                        format!("the step schema `{schema_name}`")
                    } else {
                        format!("`{}`", under.join("."))
                    };
                    let mut diagnostic = Diagnostic::new(
                        R_D4,
                        agent.registry.id(),
                        item.span,
                        format!("handoff field `{path}` cannot be produced: {place} declares no property `{segment}`, so the model's structured output never has it; {}", handoff_consequence(agent, path)),
                    )
                    .with_related(
                        resolved.file(),
                        resolved.span(),
                        format!("{place} is declared here"),
                    );
                    let mut names = Vec::new();
                    property_names(agent, resolved, &mut HashSet::new(), &mut names);
                    let scalar =
                        resolved.node.get("type").and_then(Node::as_str).filter(|_| is_scalar_type(resolved.node));
                    diagnostic = match (did_you_mean(segment, names), scalar) {
                        (Some(s), _) => diagnostic.with_help(format!("did you mean `{s}`?")),
                        (None, Some(kind)) => diagnostic.with_help(format!("{place} is of type `{kind}`, which has no properties")),
                        (None, None) => diagnostic.with_help(
                            "climpt passes the schema with `additionalProperties: false`, so the LLM cannot output an undeclared property; the handoff value is always missing",
                        ),
                    };
                    out.push(diagnostic);
                    break;
                }
            }
        }
    }
}

/// SchemaRef: every `$ref` of every schema file of the agent resolves, locally, without a cycle.
fn check_schema_refs<'a>(agent: &Agent<'a, 'a>, out: &mut Vec<Diagnostic>) {
    for doc in &agent.schemas {
        if let Some(root) = doc.root() {
            visit_refs(agent, doc, root, out);
        }
    }
}

fn visit_refs<'a>(agent: &Agent<'a, 'a>, doc: &'a Doc<'a>, node: &'a Node, out: &mut Vec<Diagnostic>) {
    match &node.value {
        Value::Map(entries) => {
            if let Some(reference) = node.get("$ref")
                && let Some(target) = reference.as_str()
            {
                check_ref(agent, Loc { doc, node }, reference, target, out);
            }
            for entry in entries {
                if !entry.key_str().is_some_and(|k| DATA_KEYWORDS.contains(&k)) {
                    visit_refs(agent, doc, &entry.value, out);
                }
            }
        }
        Value::Seq(items) => {
            for item in items {
                visit_refs(agent, doc, item, out);
            }
        }
        _ => {}
    }
}

fn check_ref<'a>(agent: &Agent<'a, 'a>, here: Loc<'a>, reference: &Node, target: &str, out: &mut Vec<Diagnostic>) {
    match schema_ref::resolve_ref(agent, here, target) {
        Err(SchemaError::RefUnresolved { why, .. }) => {
            // The other file's syntax error is reported there.
            if why != "the file does not parse" {
                out.push(
                    Diagnostic::new(SchemaRef, here.file(), reference.span, format!("`$ref` `{target}` does not resolve: {why}"))
                        .with_help("climpt resolves `$ref` within the file (`#/...`) or in files next to it (`other.schema.json#/...`); a step using this schema fails to load it"),
                );
            }
        }
        Err(_) => {}
        Ok(_) => {
            if let Err(SchemaError::Cycle { at, .. }) = schema_ref::deref(agent, here)
                && at.file() == here.file()
                && at.node.span == here.node.span
            {
                out.push(
                    Diagnostic::new(
                        SchemaRef,
                        here.file(),
                        reference.span,
                        format!("`$ref` `{target}` is part of a reference cycle: following it leads back here"),
                    )
                    .with_help("climpt fails with SchemaCircularReferenceError when it inlines this schema"),
                );
            }
        }
    }
}

/// What climpt does with a handoff field the output never has: it has warned at every handoff
/// since 1.13.21 (b60c431); before, it drops the field silently.
fn handoff_consequence(agent: &Agent, path: &str) -> String {
    let key = path.rsplit('.').next().unwrap_or(path);
    use crate::registry::releases::climpt::{ReleaseId, Target};
    match agent.target.releases == Target::exact(ReleaseId::newest()) {
        true => format!(
            "climpt warns `Handoff field '{path}' not found` at every handoff and passes nothing on under `{key}`"
        ),
        false => format!(
            "climpt passes nothing on under `{key}` (silently before 1.13.21; later releases warn `Handoff field '{path}' not found` at every handoff)"
        ),
    }
}
