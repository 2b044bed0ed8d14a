//! Literal option values that atomic or the SDK it forwards to does not accept: an input's
//! `type`, a stage's `headless`, and the Claude query options `effort`, `permissionMode`,
//! `thinking.type` and `outputFormat.type` (`references/session-config.md`). Only literals are
//! judged; a name or call may hold anything.

use crate::diagnostic::{Applicability, Diagnostic, Edit};
use crate::families::atomic::InvalidOptionValue;
use crate::families::atomic::model::session::Headless;
use crate::families::atomic::model::{Object, Value, WorkflowFile};
use crate::source::Span;
use crate::util::did_you_mean;
use crate::workspace::SourceFile;

/// `WorkflowInputType` (`types.ts`).
const INPUT_TYPES: &[&str] = &["string", "text", "enum"];
/// The Claude Agent SDK's option values, as `references/session-config.md` lists them.
const CLAUDE: &[(&str, Option<&str>, &[&str])] = &[
    ("effort", None, &["low", "medium", "high", "xhigh", "max"]),
    ("permissionMode", None, &["default", "dontAsk", "acceptEdits", "bypassPermissions", "plan"]),
    ("thinking", Some("type"), &["adaptive", "enabled", "disabled"]),
    ("outputFormat", Some("type"), &["json_schema"]),
];

pub(super) fn check(file: &SourceFile, parsed: &WorkflowFile, agent: Option<&str>, out: &mut Vec<Diagnostic>) {
    let options = parsed.chain.as_ref().and_then(|c| c.options.as_ref());
    if let Some(Value::Array(inputs, _)) = options.and_then(|o| o.get("inputs")).map(|p| &p.value) {
        for input in inputs {
            if let Value::Object(input) = input
                && let Some(Value::Str(kind, at)) = input.get("type").map(|p| &p.value)
            {
                literal(file, "input `type`", kind, *at, INPUT_TYPES, "`WorkflowInputType` in `types.ts`", out);
            }
        }
    }
    for stage in &parsed.session.stages {
        if let Headless::NotBool(at) = stage.headless {
            headless(file, at, out);
        }
        if agent != Some("claude") {
            continue;
        }
        for query in &stage.queries {
            let Some(Value::Object(options)) = &query.options else { continue };
            claude_options(file, options, out);
        }
    }
}

fn claude_options(file: &SourceFile, options: &Object, out: &mut Vec<Diagnostic>) {
    for (key, inner, allowed) in CLAUDE {
        let value = match (options.get(key).map(|p| &p.value), inner) {
            (Some(value), None) => value,
            (Some(Value::Object(object)), Some(inner)) => match object.get(inner) {
                Some(prop) => &prop.value,
                None => continue,
            },
            _ => continue,
        };
        if let Value::Str(text, at) = value {
            let what = match inner {
                Some(inner) => format!("`{key}.{inner}`"),
                None => format!("`{key}`"),
            };
            literal(file, &what, text, *at, allowed, "the Claude Agent SDK's `Options`", out);
        }
    }
}

/// A string literal at `at` (quotes included) that must be one of `allowed`, as `source` defines.
fn literal(
    file: &SourceFile,
    what: &str,
    value: &str,
    at: Span,
    allowed: &[&str],
    source: &str,
    out: &mut Vec<Diagnostic>,
) {
    if allowed.contains(&value) {
        return;
    }
    let guess = did_you_mean(value, allowed.iter().copied());
    let hint = guess.map(|g| format!("; did you mean \"{g}\"?")).unwrap_or_default();
    let inner = Span::new(at.start + 1, at.end.saturating_sub(1).max(at.start + 1));
    let d = Diagnostic::new(
        InvalidOptionValue,
        file.id,
        at,
        format!("{what} \"{value}\" is not one of the values {source} defines{hint}"),
    )
    .with_help(format!("use one of: {}", allowed.join(", ")));
    out.push(match guess {
        Some(guess) => d.with_did_you_mean(inner, guess.to_string(), guess),
        None => d,
    });
}

/// `headless: "true"`: the runtime tests `options.headless === true`.
fn headless(file: &SourceFile, at: Span, out: &mut Vec<Diagnostic>) {
    let written = file.text.get(at.start..at.end).unwrap_or("");
    let meant = match written.trim_matches(['"', '\'', '`']).to_ascii_lowercase().as_str() {
        "true" => Some("true"),
        "false" => Some("false"),
        _ => None,
    };
    let d = Diagnostic::new(
        InvalidOptionValue,
        file.id,
        at,
        format!("`headless` is {written}, not a boolean; the runtime tests `headless === true`, so this stage runs in a tmux pane"),
    )
    .with_help("write `headless: true` or `headless: false`");
    out.push(match meant {
        Some(meant) => d.with_fix(
            format!("Replace with `{meant}`"),
            Applicability::Unsafe,
            vec![Edit { span: at, replacement: meant.to_string() }],
        ),
        None => d,
    });
}
