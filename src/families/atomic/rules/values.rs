//! Literal option values that atomic or the SDK it forwards to does not accept: an input's
//! `type`, a stage's `headless`, and the Claude query options `effort`, `permissionMode`,
//! `thinking.type` and `outputFormat.type` (`references/session-config.md`). Only literals are
//! judged; a name or call may hold anything.

use crate::diagnostic::{Applicability, Diagnostic, Edit};
use crate::families::atomic::InvalidOptionValue;
use crate::families::atomic::dialect::Dialect;
use crate::families::atomic::keys::{self, Role};
use crate::families::atomic::model::session::Headless;
use crate::families::atomic::model::{Object, Value, WorkflowFile};
use crate::source::Span;
use crate::util::did_you_mean;
use crate::workspace::SourceFile;

/// The Claude query options whose values are closed: (key, the key of an object under it, the
/// role that object's keys have). The values themselves are in [`keys`].
const CLAUDE: &[(&str, Option<(&str, Role)>)] = &[
    ("effort", None),
    ("permissionMode", None),
    ("thinking", Some(("type", Role::QueryThinking))),
    ("outputFormat", Some(("type", Role::QueryOutputFormat))),
];

/// The values `keys` allows for `name` of `role`.
fn allowed(role: Role, name: &str) -> &'static [&'static str] {
    keys::key(role, Some("claude"), name).map_or(&[], |k| k.values)
}

pub(super) fn check(
    file: &SourceFile,
    parsed: &WorkflowFile,
    agent: Option<&str>,
    dialect: Dialect,
    out: &mut Vec<Diagnostic>,
) {
    let options = parsed.chain.as_ref().and_then(|c| c.options.as_ref());
    if let Some(Value::Array(inputs, _)) = options.and_then(|o| o.get("inputs")).map(|p| &p.value) {
        for input in inputs {
            if let Value::Object(input) = input
                && let Some(Value::Str(kind, at)) = input.get("type").map(|p| &p.value)
            {
                // `"integer"` came with 0.6.
                let mut types: Vec<&str> = allowed(Role::Input, "type").to_vec();
                if dialect != Dialect::Seed {
                    types.push("integer");
                }
                literal(file, "input `type`", kind, *at, &types, "`WorkflowInputType` in `types.ts`", out);
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
    for (key, inner) in CLAUDE {
        let (value, values) = match (options.get(key).map(|p| &p.value), inner) {
            (Some(value), None) => (value, allowed(Role::Query, key)),
            (Some(Value::Object(object)), Some((inner, role))) => match object.get(inner) {
                Some(prop) => (&prop.value, allowed(*role, inner)),
                None => continue,
            },
            _ => continue,
        };
        if let Value::Str(text, at) = value {
            let what = match inner {
                Some((inner, _)) => format!("`{key}.{inner}`"),
                None => format!("`{key}`"),
            };
            literal(file, &what, text, *at, values, "the Claude Agent SDK's `Options`", out);
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
