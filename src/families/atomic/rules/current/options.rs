//! The options of the `ctx` primitives (`docs/workflows.md`, *WorkflowContext* and *Task and
//! Stage Options*; the types of `shared/authoring-contract-stage.ts`): keys the types do not
//! have, literal values of the wrong type or outside an enum, options that exclude each other,
//! a task without its prompt, and members the run context does not have.

use crate::diagnostic::Diagnostic;
use crate::families::atomic::keys::{self, Role};
use crate::families::atomic::model::current::{CallKind, Current};
use crate::families::atomic::model::{Object, Value};
use crate::families::atomic::rules::options::unknown_keys;
use crate::families::atomic::{ConflictingOptions, InvalidOptionValue, MissingPrompt, UnknownContextMember};
use crate::util::did_you_mean;
use crate::workspace::SourceFile;

/// The reasoning levels a `model_name:level` suffix takes (*Reasoning levels*).
const LEVELS: [&str; 7] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

pub(super) fn check(file: &SourceFile, current: &Current, out: &mut Vec<Diagnostic>) {
    for call in &current.calls {
        let role = match call.kind {
            CallKind::Task => Role::Task,
            CallKind::Stage => Role::StageOptions,
            CallKind::Chain => Role::Chain,
            CallKind::Parallel => Role::Parallel,
            CallKind::Workflow => Role::Child,
            CallKind::Exit => Role::Exit,
            CallKind::Tool => Role::Tool,
            CallKind::UiSelect => {
                if let Some(at) = call.empty_choices {
                    out.push(
                        Diagnostic::new(
                            InvalidOptionValue,
                            file.id,
                            at,
                            "`ctx.ui.select` is given no choices; it throws before asking (\"an empty options array throws\")",
                        )
                        .with_help("list the choices the user picks from"),
                    );
                }
                continue;
            }
        };
        if let Some(options) = &call.options {
            keys_and_values(file, options, role, out);
            nested(file, options, "budget", Role::Budget, out);
            conflicts(file, options, None, out);
        }
        for step in &call.steps {
            keys_and_values(file, step, Role::Step, out);
            conflicts(file, step, call.options.as_ref(), out);
        }
        if call.kind == CallKind::Exit
            && let Some(options) = &call.options
        {
            exit_conflict(file, options, out);
        }
        if call.kind == CallKind::Task {
            prompt(file, call, out);
        }
    }
    for (member, at) in &current.unknown_members {
        let known = crate::families::atomic::model::current::CONTEXT_MEMBERS;
        let old = match member.as_str() {
            "transcript" | "getMessages" => {
                " (v0.5's stage reads; 0.9 hands results over as task results, files and `reads`)"
            }
            "session" | "client" | "save" => " (a v0.5 stage callback's `s.…`)",
            _ => "",
        };
        let guess = did_you_mean(member, known.iter().copied());
        let hint = guess.map(|g| format!("; did you mean `{g}`?")).unwrap_or_default();
        out.push(
            Diagnostic::new(
                UnknownContextMember,
                file.id,
                *at,
                format!("`ctx.{member}` is not a member of the run context{old}: it is `undefined`, and calling it is a `TypeError`{hint}"),
            )
            .with_help(format!("the context has: {}", known.join(", ")))
            .with_suggestion(*at, guess),
        );
    }
}

/// Unknown keys and literal values of `object` as `role`.
pub(super) fn keys_and_values(file: &SourceFile, object: &Object, role: Role, out: &mut Vec<Diagnostic>) {
    unknown_keys(file, object, role, None, false, out);
    let Some(table) = keys::keys(role, None) else { return };
    for prop in &object.props {
        let Some(key) = table.iter().find(|k| k.name == prop.key) else { continue };
        if let Some(problem) = value_problem(role, key, &prop.value) {
            let mut d =
                Diagnostic::new(InvalidOptionValue, file.id, prop.value.span(), format!("`{}` {problem}", prop.key))
                    .with_help(if key.values.is_empty() {
                        format!("`{}` takes `{}`", key.name, key.ty)
                    } else {
                        format!("use one of: {}", quoted(key.values))
                    });
            if let Value::Str(text, at) = &prop.value
                && !key.values.is_empty()
                && let Some(guess) = did_you_mean(text, key.values.iter().copied())
            {
                let inner = crate::source::Span::new(at.start + 1, at.end.saturating_sub(1).max(at.start + 1));
                d = d.with_did_you_mean(inner, guess.to_string(), guess);
            }
            out.push(d);
        }
    }
}

/// `key` of `object`, when it is an object literal, checked as `role`.
pub(super) fn nested(file: &SourceFile, object: &Object, key: &str, role: Role, out: &mut Vec<Diagnostic>) {
    if let Some(Value::Object(inner)) = object.get(key).map(|p| &p.value) {
        keys_and_values(file, inner, role, out);
    }
}

/// What is wrong with a literal value of `key`, as the types and the runtime see it.
fn value_problem(role: Role, key: &keys::Key, value: &Value) -> Option<String> {
    let name = key.name;
    let ty = key.ty;
    let kind = match value {
        Value::Str(..) => "a string",
        Value::Num(..) => "a number",
        Value::Bool(..) => "a boolean",
        Value::Array(..) => "an array",
        Value::Object(..) => "an object",
        Value::Other(_) => return None,
    };
    if !key.values.is_empty() {
        return match value {
            Value::Str(text, _) if key.values.contains(&text.as_str()) => None,
            Value::Str(text, _) => Some(format!("is \"{text}\", not one of {}", quoted(key.values))),
            _ => Some(format!("is {kind}, not one of {}", quoted(key.values))),
        };
    }
    let wrong = |expected: &str| Some(format!("is {kind}; it takes {expected}{}", consequence(name)));
    match (ty, value) {
        ("boolean", Value::Bool(..)) => None,
        ("boolean", _) => wrong("a boolean"),
        ("string", Value::Str(text, _)) => model_suffix(name, text),
        ("string", _) => wrong("a string"),
        ("string | false", Value::Str(..) | Value::Bool(false, _)) => None,
        ("string | false", _) => wrong("a string or `false`"),
        ("string | true", Value::Str(..) | Value::Bool(true, _)) => None,
        ("string | true", _) => wrong("a string or `true`"),
        ("string | object", Value::Str(text, _)) => model_suffix(name, text),
        ("number", Value::Num(n, _)) => number_problem(role, name, *n),
        ("number", _) => wrong("a number"),
        ("readonly string[]" | "readonly string[] | false", Value::Array(items, _)) => {
            if name == "fallbackModels" {
                return items.iter().find_map(|item| match item {
                    Value::Str(text, _) => model_suffix(name, text),
                    _ => None,
                });
            }
            None
        }
        ("readonly string[] | false", Value::Bool(false, _)) => None,
        ("readonly string[]", _) => wrong("an array of strings"),
        ("readonly string[] | false", _) => wrong("an array of strings or `false`"),
        _ => None,
    }
}

/// What a value of the wrong type does at run time, where it is worth saying.
fn consequence(name: &str) -> &'static str {
    match name {
        "reads" => ": the runtime maps over it, so a string throws a `TypeError` before the stage runs",
        "failFast" => ": only `false` turns fail-fast off",
        "concurrency" => ": anything but a number is ignored and the default (4) applies",
        "autoAttach" => ": only the literal `true` opens the graph",
        "worktree" => ": only `true` makes a worktree",
        _ => "",
    }
}

fn number_problem(role: Role, name: &str, n: f64) -> Option<String> {
    let integer = n.fract() == 0.0;
    match (role, name) {
        (_, "concurrency") if n < 1.0 => Some(format!("is {n}: below 1 it is ignored and the default (4) applies")),
        (Role::Tool, "maxAttempts") if n < 1.0 || !integer => Some(format!(
            "is {n}; `ctx.tool` throws a `RangeError` (\"maxAttempts must be a positive integer\") when retries are on"
        )),
        (Role::Tool, "timeoutMs") if n <= 0.0 => {
            Some(format!("is {n}; `ctx.tool` throws a `RangeError` (\"timeoutMs must be a positive finite number\")"))
        }
        (Role::Spec, "heartbeatIntervalMinutes") if n < 0.0 => Some(format!(
            "is {n}; `workflow()` throws \"workflow: heartbeatIntervalMinutes must be a non-negative finite number\""
        )),
        (Role::Budget, "maxDurationMs" | "maxTokens") if n < 0.0 || !integer => Some(format!(
            "is {n}; a budget's `{name}` must be a non-negative integer, and the definition throws a `TypeError`"
        )),
        (Role::Budget, _) if n < 0.0 => {
            Some(format!("is {n}; budget values must be non-negative, and the definition throws a `TypeError`"))
        }
        _ => None,
    }
}

/// A `model_name:level` suffix that is no reasoning level.
fn model_suffix(name: &str, text: &str) -> Option<String> {
    if !matches!(name, "model" | "fallbackModels") {
        return None;
    }
    let (_, level) = text.rsplit_once(':')?;
    // `provider/model` ids never hold `:` but as the suffix; a URL-like value is not judged.
    if level.is_empty() || level.contains('/') || LEVELS.contains(&level) {
        return None;
    }
    let guess = did_you_mean(level, LEVELS).map(|g| format!("; did you mean `:{g}`?")).unwrap_or_default();
    Some(format!("\"{text}\" ends in `:{level}`, which is no reasoning level ({}){guess}", LEVELS.join(", ")))
}

fn quoted(values: &[&str]) -> String {
    values.iter().map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(", ")
}

/// `worktree: true` with `gitWorktreeDir`, `outputMode: "file-only"` without `output`
/// (`executor-direct-helpers.ts`, `stage-runner-output.ts`). `shared` holds the defaults a
/// step inherits.
fn conflicts(file: &SourceFile, options: &Object, shared: Option<&Object>, out: &mut Vec<Diagnostic>) {
    let get = |key: &str| options.get(key).or_else(|| shared.and_then(|s| s.get(key)));
    if let (Some(worktree), Some(dir)) = (options.get("worktree"), get("gitWorktreeDir"))
        && matches!(worktree.value, Value::Bool(true, _))
    {
        out.push(
            Diagnostic::new(
                ConflictingOptions,
                file.id,
                worktree.key_span,
                "`worktree: true` with `gitWorktreeDir`: atomic throws \"worktree and gitWorktreeDir are mutually exclusive\"",
            )
            .with_related(file.id, dir.key_span, "the reusable worktree")
            .with_help("use `gitWorktreeDir` for a reusable worktree, or `worktree: true` for a temporary one"),
        );
    }
    if let Some(mode) = options.get("outputMode")
        && mode.value.as_str() == Some("file-only")
        && get("output").is_none()
        && !options.open
        && !shared.is_some_and(|s| s.open)
    {
        out.push(
            Diagnostic::new(
                ConflictingOptions,
                file.id,
                mode.value.span(),
                "`outputMode: \"file-only\"` without `output`: the stage throws \"prompt sets outputMode: \\\"file-only\\\" but does not configure an output file\"",
            )
            .with_help("add `output: \"<path>\"`, or use `outputMode: \"inline\"`"),
        );
    }
}

/// `ctx.exit({ resumable })` with a status other than `failed`.
fn exit_conflict(file: &SourceFile, options: &Object, out: &mut Vec<Diagnostic>) {
    let Some(resumable) = options.get("resumable") else { return };
    let statuses = ["completed", "skipped", "cancelled", "blocked", "failed"];
    let status = match options.get("status").map(|p| &p.value) {
        None if !options.open => "completed".to_string(),
        // An unknown status is `atomic/InvalidOptionValue`'s.
        Some(Value::Str(status, _)) if statuses.contains(&status.as_str()) => status.clone(),
        _ => return,
    };
    if status == "failed" {
        return;
    }
    out.push(
        Diagnostic::new(
            ConflictingOptions,
            file.id,
            resumable.key_span,
            format!("`resumable` with status \"{status}\": it is valid only with `status: \"failed\"`, so the run ends as a non-resumable authoring failure instead"),
        )
        .with_help("drop `resumable`, or exit with `status: \"failed\"`"),
    );
}

/// `ctx.task` without `prompt` or `task` (`executor-task-prompts.ts` `taskPrompt`).
fn prompt(file: &SourceFile, call: &crate::families::atomic::model::current::Call, out: &mut Vec<Diagnostic>) {
    let message = match &call.options {
        _ if !call.has_options => {
            "`ctx.task` is called without options; it needs `{ prompt }` and fails before the stage starts"
        }
        Some(options) if !options.has_or_misspells("prompt") && !options.has_or_misspells("task") && !options.open => {
            "the task has no `prompt` (or `task`); `ctx.task` throws \"ctx.task requires options.prompt or options.task\""
        }
        _ => return,
    };
    let at = call.options.as_ref().map_or(call.callee, |o| o.span);
    out.push(
        Diagnostic::new(MissingPrompt, file.id, at, message).with_help("add `prompt: \"<what the stage should do>\"`"),
    );
}
