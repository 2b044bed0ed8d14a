//! The completion loop's configuration: `validators`, `validationSteps` and `failurePatterns`
//! (the chain `validationSteps.*.validationConditions[].validator` → `validators.*` →
//! `failurePattern` → `failurePatterns.*`). Retry prompt files are checked in `prompts`.

use crate::diagnostic::Diagnostic;
use crate::families::steps::model::{Agent, EXTRACTORS, StepKind};
use crate::families::steps::{
    FailurePatternParams, R_C1, R_C2, R_C5, R_C6, SuccessWhenInvalid, UnknownExtractor, ValidationStepUnknown,
};
use crate::source::{Entry, Node, Span, Value};
use crate::util::did_you_mean;

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
    let patterns = entries(agent.registry.get("failurePatterns"));
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
                    "validator `{name}` names failure pattern `{pattern}`, which `failurePatterns` does not define; when the check fails, climpt cannot pick its retry prompt and falls back to `f_failed.md` or a generic message"
                ),
            );
            d = match did_you_mean(pattern, pattern_names.iter().copied()) {
                Some(near) => d.with_help(format!("did you mean `{near}`?")),
                None if pattern_names.is_empty() => {
                    d.with_help(format!("add `failurePatterns.{pattern}` with its `description` and `edition`"))
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

    for vstep in entries(agent.registry.get("validationSteps")) {
        let Some(key) = vstep.key_str() else { continue };
        check_guarded_step(agent, vstep, key, out);
        let def = &vstep.value;
        for condition in def.get("validationConditions").and_then(Node::as_seq).unwrap_or_default() {
            let Some(node) = condition.get("validator") else { continue };
            let Some(name) = node.as_str() else { continue };
            if validator_names.contains(&name) {
                continue;
            }
            let mut d = Diagnostic::new(
                R_C2,
                file,
                node.span,
                format!("validation step `{key}` runs validator `{name}`, which `validators` does not define"),
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

/// ValidationStepUnknown: a `validationSteps` key guards a closure step of `steps`.
fn check_guarded_step(agent: &Agent, vstep: &Entry, key: &str, out: &mut Vec<Diagnostic>) {
    let file = agent.registry.id();
    match agent.step(key) {
        None if !agent.has_step(key) => {
            let ids = agent.step_ids();
            let mut d = Diagnostic::new(
                ValidationStepUnknown,
                file,
                vstep.key.span,
                format!("`validationSteps.{key}` guards no step: `steps` has no `{key}`, so its validators never run"),
            );
            if let Some(near) = did_you_mean(key, ids.iter().copied()) {
                d = d.with_help(format!("did you mean `{near}`?"));
            }
            out.push(d);
        }
        None => {}
        Some(step) => {
            let kind = step.kind();
            if kind == Some(StepKind::Closure) {
                return;
            }
            let what = match kind {
                Some(kind) => format!("a {} step", kind.as_str()),
                None => "not a closure step".to_string(),
            };
            out.push(
                Diagnostic::new(
                    ValidationStepUnknown,
                    file,
                    vstep.key.span,
                    format!(
                        "`validationSteps.{key}` guards `{key}`, which is {what}; validators run only after a closure step's `closing`, so they never run"
                    ),
                )
                .with_related(file, step.key.span, "the step")
                .with_help("key `validationSteps` by the closure step it guards"),
            );
        }
    }
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
                format!("`validationSteps.{key}.onFailure.action` is {shown}; it must be `retry`, `abort` or `skip`"),
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
                        "`validationSteps.{key}.onFailure.maxAttempts` is {shown}; it must be an integer of at least 1"
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
                        "`validationSteps.{key}.onFailure` retries without `maxAttempts`; say how many attempts are allowed (climpt's default is 3)"
                    ),
                )
                .with_help("add `\"maxAttempts\": 3`"),
            );
        }
        None => {}
    }
}
