//! The completion loop's configuration: `validators`, `validationSteps` and `failurePatterns`
//! (the chain `validationSteps.*.validationConditions[].validator` → `validators.*` →
//! `failurePattern` → `failurePatterns.*`; `completionSteps`, `completionConditions` and
//! `completionPatterns` up to climpt 1.12.4). Retry prompt files are checked in `prompts`.

use crate::diagnostic::{Diagnostic, Severity};
use crate::families::steps::model::{Agent, EXTRACTORS};
use crate::families::steps::release::{self, Graded, grade, validation_step_ids};
use crate::families::steps::{
    FailurePatternParams, R_C1, R_C2, R_C5, R_C6, SuccessWhenInvalid, UnknownExtractor, ValidationStepUnknown,
};
use crate::source::{Entry, Node, Span, Value};
use crate::util::did_you_mean;
use crate::workspace::climpt::VERDICT_TYPES;

/// Extractor names climpt's `ParamExtractor` also maps, though the docs do not list them.
const UNDOCUMENTED_EXTRACTORS: [&str; 10] = [
    "parseStagedFiles",
    "parseUnstagedFiles",
    "failedTests",
    "errorOutput",
    "errors",
    "files",
    "lintErrors",
    "lintFiles",
    "formatFiles",
    "diff",
];

pub(super) fn check(agent: &Agent, out: &mut Vec<Diagnostic>) {
    let file = agent.registry.id();
    let names = agent.retry;
    let (patterns_key, steps_key) = (names.patterns(), names.steps());
    let patterns = entries(agent.registry.get(patterns_key));
    let validators = entries(agent.registry.get("validators"));
    let pattern_names: Vec<&str> = patterns.iter().filter_map(Entry::key_str).collect();
    let validator_names: Vec<&str> = validators.iter().filter_map(Entry::key_str).collect();

    for validator in validators {
        let Some(name) = validator.key_str() else { continue };
        let def = &validator.value;
        if let Some(node) = def.get("failurePattern")
            && let Some(pattern) = node.as_str()
            && !pattern_names.contains(&pattern)
        {
            let mut d = Diagnostic::new(
                R_C1,
                file,
                node.span,
                format!(
                    "validator `{name}` names failure pattern `{pattern}`, which `{patterns_key}` does not define; when the check fails, climpt cannot pick its retry prompt and falls back to `f_failed.md` or a generic message"
                ),
            );
            d = match did_you_mean(pattern, pattern_names.iter().copied()) {
                Some(near) => d.with_help(format!("did you mean `{near}`?")),
                None if pattern_names.is_empty() => {
                    d.with_help(format!("add `{patterns_key}.{pattern}` with its `description` and `edition`"))
                }
                None => d.with_help(format!("defined patterns: {}", list(&pattern_names))),
            };
            out.push(d);
        }
        if let Some(node) = def.get("successWhen")
            && let Some(problem) = success_when_problem(node)
        {
            out.push(
                Diagnostic::new(SuccessWhenInvalid, file, node.span, format!("validator `{name}`: {problem}"))
                    .with_help("write `empty`, `exitCode:<N>`, `contains:<text>` or `matches:<regex>`"),
            );
        }
        for param in entries(def.get("extractParams")) {
            let Some(extractor) = param.value.as_str() else { continue };
            if EXTRACTORS.contains(&extractor) || UNDOCUMENTED_EXTRACTORS.contains(&extractor) {
                continue;
            }
            let key = param.key_str().unwrap_or("?");
            let near = did_you_mean(extractor, EXTRACTORS.iter().copied());
            let inner = string_inner(&agent.registry.file.text, &param.value);
            out.push(
                Diagnostic::new(
                    UnknownExtractor,
                    file,
                    param.value.span,
                    format!("`{extractor}` is not an extractor climpt knows; the retry prompt gets `null` for `{key}`"),
                )
                .with_help(match near {
                    Some(near) => format!("did you mean `{near}`?"),
                    None => format!("extractors: {}", EXTRACTORS.join(", ")),
                })
                .with_suggestion(inner, near),
            );
        }
    }

    for pattern in patterns {
        check_pattern_params(agent, pattern, validators, out);
    }

    for vstep in entries(agent.registry.get(steps_key)) {
        let Some(key) = vstep.key_str() else { continue };
        check_guarded_step(agent, vstep, key, out);
        let def = &vstep.value;
        for condition in def.get(names.conditions()).and_then(Node::as_seq).unwrap_or_default() {
            let Some(node) = condition.get("validator") else { continue };
            let Some(name) = node.as_str() else { continue };
            if validator_names.contains(&name) {
                continue;
            }
            let mut d = Diagnostic::new(
                R_C2,
                file,
                node.span,
                format!("{} `{key}` runs validator `{name}`, which `validators` does not define", step_noun(agent)),
            );
            d = match did_you_mean(name, validator_names.iter().copied()) {
                Some(near) => d.with_help(format!("did you mean `{near}`?")),
                None if validator_names.is_empty() => d.with_help(format!(
                    "add `validators.{name}` with `type`, `command`, `successWhen` and `failurePattern`"
                )),
                None => d.with_help(format!("defined validators: {}", list(&validator_names))),
            };
            out.push(d);
        }
        if let Some(on_failure) = def.get("onFailure") {
            check_on_failure(agent, key, on_failure, out);
        }
    }
}

/// The entries of a mapping node (none when absent or not a mapping).
fn entries(node: Option<&Node>) -> &[Entry] {
    node.and_then(Node::as_map).unwrap_or_default()
}

fn list(names: &[&str]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// The span of a JSON string's text without its quotes, when it has no escapes (so offsets
/// into the value are offsets into the file); else the whole node.
pub(super) fn string_inner(text: &str, node: &Node) -> Span {
    let Some(value) = node.as_str() else { return node.span };
    let raw = text.get(node.span.start..node.span.end).unwrap_or("");
    if raw.len() == value.len() + 2 && raw.starts_with('"') && raw.ends_with('"') && &raw[1..raw.len() - 1] == value {
        Span::new(node.span.start + 1, node.span.end - 1)
    } else {
        node.span
    }
}

/// What climpt's `checkSuccessCondition` cannot use; `None` when it is a known form.
fn success_when_problem(node: &Node) -> Option<String> {
    let Some(text) = node.as_str() else {
        return Some(format!("`successWhen` must be a string, not {}", node.type_name()));
    };
    if text == "empty" {
        return None;
    }
    if let Some(code) = text.strip_prefix("exitCode:") {
        let digits = code.strip_prefix('-').unwrap_or(code);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        return Some(format!(
            "`{text}` names no exit code; climpt compares the exit code against `NaN`, so the check always fails"
        ));
    }
    for prefix in ["contains:", "matches:"] {
        if let Some(rest) = text.strip_prefix(prefix) {
            if rest.is_empty() {
                return Some(format!("`{text}` gives nothing to look for, so the check passes on any output"));
            }
            return None;
        }
    }
    Some(format!(
        "`{text}` is not a success condition climpt knows; an unknown condition counts as failed, so the check never passes"
    ))
}

/// FailurePatternParams: a pattern's `params` against the `extractParams` keys of each
/// validator that uses it.
fn check_pattern_params(agent: &Agent, pattern: &Entry, validators: &[Entry], out: &mut Vec<Diagnostic>) {
    let Some(name) = pattern.key_str() else { return };
    let Some(params_entry) = pattern.value.entry("params") else { return };
    let Some(items) = params_entry.value.as_seq() else { return };
    let params: Vec<&str> = items.iter().filter_map(Node::as_str).collect();
    for validator in validators {
        let Some(validator_name) = validator.key_str() else { continue };
        if validator.value.get("failurePattern").and_then(Node::as_str) != Some(name) {
            continue;
        }
        let extract = validator.value.get("extractParams");
        let extracted: Vec<&str> = entries(extract).iter().filter_map(Entry::key_str).collect();
        let never: Vec<&str> = params.iter().copied().filter(|p| !extracted.contains(p)).collect();
        let unlisted: Vec<&str> = extracted.iter().copied().filter(|p| !params.contains(p)).collect();
        if never.is_empty() && unlisted.is_empty() {
            continue;
        }
        let mut parts = Vec::new();
        if !never.is_empty() {
            parts.push(format!("{} never extracted, so the retry prompt gets no value for it", plural_list(&never)));
        }
        if !unlisted.is_empty() {
            parts.push(format!("{} extracted but not listed here", plural_list(&unlisted)));
        }
        let (related_span, related_message) = match validator.value.entry("extractParams") {
            Some(entry) => (entry.key.span, format!("`{validator_name}` extracts {}", bracket(&extracted))),
            None => (validator.key.span, format!("`{validator_name}` has no `extractParams`")),
        };
        out.push(
            Diagnostic::new(
                FailurePatternParams,
                agent.registry.id(),
                params_entry.key.span,
                format!(
                    "failure pattern `{name}` lists params {} but validator `{validator_name}` extracts {}: {}",
                    bracket(&params),
                    bracket(&extracted),
                    parts.join("; ")
                ),
            )
            .with_related(agent.registry.id(), related_span, related_message)
            .with_help("make `params` equal the keys of the validator's `extractParams`"),
        );
    }
}

fn bracket(names: &[&str]) -> String {
    format!("[{}]", names.join(", "))
}

fn plural_list(names: &[&str]) -> String {
    let verb = if names.len() == 1 { "is" } else { "are" };
    format!("{} {verb}", list(names))
}

/// "validation step" (or "completion step" up to climpt 1.12.4).
fn step_noun(agent: &Agent) -> &'static str {
    match agent.retry {
        crate::families::steps::release::Retry::Validation => "validation step",
        crate::families::steps::release::Retry::Completion => "completion step",
    }
}

/// Whether a run validates with the `validationSteps` entry `key`: climpt looks the entry up by
/// the agent's verdict (completion) type, whichever closure step emitted `closing`; without
/// agent.json, by any type. A defect (the entry never runs) graded by release.
pub(super) fn validation_step_runs(agent: &Agent, key: &str) -> Option<Graded> {
    let kind = agent.verdict_type().map(|(kind, ..)| kind);
    let graded = grade(&agent.target, |facts| {
        let ids: Vec<String> = match kind {
            Some(kind) => validation_step_ids(facts, kind),
            None => VERDICT_TYPES.iter().flat_map(|t| validation_step_ids(facts, t)).collect(),
        };
        (!ids.is_empty() && !ids.iter().any(|id| id == key)).then_some(Severity::Warning)
    });
    Some(graded)
}

/// ValidationStepUnknown: a `validationSteps` entry the completion loop never reads: not the
/// entry of the agent's verdict type (without agent.json, of any verdict type).
fn check_guarded_step(agent: &Agent, vstep: &Entry, key: &str, out: &mut Vec<Diagnostic>) {
    let file = agent.registry.id();
    let steps_key = agent.retry.steps();
    let Some(graded) = validation_step_runs(agent, key) else { return };
    let newest = release::facts_of(&agent.target).last().expect("a target names a release");
    let (message, severity, help) = match (graded, agent.verdict_type()) {
        (Graded::None, _) => return,
        (Graded::All(level), Some((kind, ..))) => {
            let used = validation_step_ids(newest, kind).into_iter().next().unwrap_or_default();
            (
                format!(
                    "`{steps_key}.{key}` never runs: climpt validates a closing with the entry of the agent's {} type `{kind}`, `{steps_key}.{used}`, whichever closure step emits `closing`",
                    agent.layout.noun()
                ),
                level,
                format!("key the entry `{used}`, or remove it"),
            )
        }
        (Graded::All(level), None) => {
            let ids: Vec<String> = VERDICT_TYPES.iter().flat_map(|t| validation_step_ids(newest, t)).collect();
            let near = did_you_mean(key, ids.iter().map(String::as_str)).map(str::to_string);
            (
                format!(
                    "`{steps_key}.{key}` never runs: climpt validates a closing with the entry of the agent's {} type ({}), whichever closure step emits `closing`",
                    agent.layout.noun(),
                    ids.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", ")
                ),
                level,
                match near {
                    Some(near) => format!("did you mean `{near}`?"),
                    None => "key the entry by the closure id of the agent's type, or remove it".to_string(),
                },
            )
        }
        (Graded::Some(releases), _) => (
            format!(
                "`{steps_key}.{key}` never runs in {releases}, which validate a closing with the entry of the agent's {} type; other releases this agent may run on use it",
                agent.layout.noun()
            ),
            Severity::Info,
            "key the entry by the closure id of the release the agent runs on".to_string(),
        ),
    };
    let mut d =
        Diagnostic::new(ValidationStepUnknown, file, vstep.key.span, message).with_severity(severity).with_help(help);
    if let Some((_, span, agent_file)) = agent.verdict_type() {
        d = d.with_related(agent_file, span, "the agent's type");
    }
    out.push(d);
}

/// R-C5 and R-C6: `onFailure.action` and `onFailure.maxAttempts`.
fn check_on_failure(agent: &Agent, key: &str, on_failure: &Node, out: &mut Vec<Diagnostic>) {
    let file = agent.registry.id();
    if on_failure.as_map().is_none() {
        return;
    }
    let action = on_failure.get("action");
    if let Some(node) = action {
        let ok = matches!(node.as_str(), Some("retry" | "abort" | "skip"));
        if !ok {
            let shown = node.as_str().map_or_else(|| node.type_name().to_string(), |s| format!("`{s}`"));
            let mut d = Diagnostic::new(
                R_C5,
                file,
                node.span,
                format!(
                    "`{}.{key}.onFailure.action` is {shown}; it must be `retry`, `abort` or `skip`",
                    agent.retry.steps()
                ),
            );
            if let Some(near) = node.as_str().and_then(|s| did_you_mean(s, ["retry", "abort", "skip"])) {
                d = d.with_help(format!("did you mean `{near}`?"));
            }
            out.push(d);
        }
    }
    match on_failure.get("maxAttempts") {
        Some(node) => {
            let valid = matches!(node.value, Value::Int(n) if n >= 1);
            if !valid {
                let shown = match &node.value {
                    Value::Int(n) => format!("`{n}`"),
                    Value::Float(f) => format!("`{f}`"),
                    _ => node.type_name().to_string(),
                };
                out.push(Diagnostic::new(
                    R_C6,
                    file,
                    node.span,
                    format!(
                        "`{}.{key}.onFailure.maxAttempts` is {shown}; it must be an integer of at least 1",
                        agent.retry.steps()
                    ),
                ));
            }
        }
        None if action.and_then(Node::as_str) == Some("retry") => {
            out.push(
                Diagnostic::new(
                    R_C6,
                    file,
                    Span::new(on_failure.span.start, on_failure.span.start + 1),
                    format!(
                        "`{}.{key}.onFailure` retries without `maxAttempts`; say how many attempts are allowed (climpt's default is 3)",
                        agent.retry.steps()
                    ),
                )
                .with_help("add `\"maxAttempts\": 3`"),
            );
        }
        None => {}
    }
}
