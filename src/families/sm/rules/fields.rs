//! Frontmatter shape: syntax, required fields, types, ids, turnCap, policies, unknown keys.

use crate::diagnostic::{Applicability, Diagnostic, Edit};
use crate::families::sm::model::{EXECUTIONS, OPTIONAL_FIELDS, REQUIRED_FIELDS, StageDoc};
use crate::families::sm::{
    FieldType, FrontmatterNotFirst, FrontmatterSyntax, InvalidResolutionPolicy, InvalidRetryPolicy, InvalidStageId,
    MissingRequiredField, StageTurnCapTooLow, UnknownField,
};
use crate::source::{Node, Span, Value};
use crate::util::{KeyGuess, did_you_mean, did_you_mean_key, is_kebab_case, to_kebab_case};

/// Reports why the frontmatter cannot be read; returns whether the other rules can run.
pub(super) fn check_syntax(stage: &StageDoc, out: &mut Vec<Diagnostic>) -> bool {
    let file = stage.id();
    let Some(fm) = &stage.frontmatter else {
        if let Some((at, blank_only)) = crate::source::frontmatter::late_start(&stage.file.text) {
            out.push(late_frontmatter(stage, at, blank_only));
            return false;
        }
        out.push(Diagnostic::new(
            FrontmatterSyntax,
            file,
            Span::empty(0),
            "this file is configured as a stage definition but has no frontmatter; start it with a `---` line",
        ));
        return false;
    };
    if fm.close_fence.is_none() {
        out.push(Diagnostic::new(
            FrontmatterSyntax,
            file,
            fm.open_fence,
            "the frontmatter is never closed; add a `---` line after the last field",
        ));
        return false;
    }
    for error in &stage.syntax_errors {
        let mut diagnostic = Diagnostic::new(FrontmatterSyntax, file, error.span, error.message.clone());
        if let Some((span, message)) = &error.related {
            diagnostic = diagnostic.with_related(file, *span, message.clone());
        }
        out.push(diagnostic);
    }
    match &stage.root {
        None => stage.syntax_errors.is_empty(),
        Some(root) if root.as_map().is_none() => {
            out.push(Diagnostic::new(
                FrontmatterSyntax,
                file,
                root.span,
                format!("the frontmatter must be a mapping of fields, but it is {}", root.type_name()),
            ));
            false
        }
        Some(_) => true,
    }
}

/// `sm/FrontmatterNotFirst`: the stage keys sit in a block after blank or comment lines, which
/// frontmatter readers do not take for frontmatter: the runtime sees a plain markdown file.
fn late_frontmatter(stage: &StageDoc, at: usize, blank_only: bool) -> Diagnostic {
    let start = if stage.file.text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
    let fence = Span::new(at, at + 3);
    let what = if blank_only { "blank lines" } else { "comment lines" };
    let diagnostic = Diagnostic::new(
        FrontmatterNotFirst,
        stage.id(),
        fence,
        format!(
            "this `---` block has stage fields, but {what} come before it, so it is no frontmatter: the file is read as plain markdown and is not a stage"
        ),
    )
    .with_help("start the file with the `---` line; a comment belongs inside the frontmatter, as a `#` line");
    if !blank_only {
        return diagnostic;
    }
    diagnostic.with_fix(
        "Remove the blank lines before the frontmatter",
        Applicability::Safe,
        vec![Edit { span: Span::new(start, at), replacement: String::new() }],
    )
}

pub(super) fn check(stage: &StageDoc, out: &mut Vec<Diagnostic>) {
    let known = known_fields();
    let misspelt =
        stage.root.as_ref().map(|root| misspelt_required(root, &known, &REQUIRED_FIELDS)).unwrap_or_default();
    check_missing(stage, &misspelt, out);
    let Some(entries) = stage.root.as_ref().and_then(Node::as_map) else {
        return;
    };
    let file = stage.id();
    for entry in entries {
        let Some(key) = entry.key_str() else {
            out.push(Diagnostic::new(FieldType, file, entry.key.span, "frontmatter keys must be strings"));
            continue;
        };
        let value = &entry.value;
        match key {
            "id" => {
                if expect(stage, key, value, Expect::Text, out) {
                    check_id(stage, value, out);
                }
            }
            "name" | "completionTool" => {
                expect(stage, key, value, Expect::Text, out);
            }
            "description" => {
                expect(stage, key, value, Expect::String, out);
            }
            "resolutionPolicy" => {
                if expect(stage, key, value, Expect::Text, out) {
                    check_resolution_policy(stage, value, out);
                }
            }
            "allowedTools" | "tags" => {
                expect(stage, key, value, Expect::StringList, out);
            }
            "completionSchema" | "inputsSchema" => {
                expect(stage, key, value, Expect::Mapping, out);
            }
            "turnCap" => {
                if expect(stage, key, value, Expect::Integer, out) && value.as_i64().is_some_and(|n| n < 1) {
                    out.push(Diagnostic::new(
                        StageTurnCapTooLow,
                        file,
                        value.span,
                        format!(
                            "`turnCap` is {}; it must be at least 1 (it bounds the LLM turns of Act)",
                            shown(stage, value)
                        ),
                    ));
                }
            }
            "retryPolicy" => {
                if expect(stage, key, value, Expect::Mapping, out) {
                    check_retry_policy(stage, entry.key.span, value, out);
                }
            }
            "next" => {
                if let Some(ids) = bare_next_list(value) {
                    out.push(next_as_list(stage, value, &ids));
                } else if expect(stage, key, value, Expect::Mapping, out) {
                    check_next(stage, value, out);
                }
            }
            _ => match misspelt.iter().find(|(_, node)| node.span == entry.key.span) {
                Some((field, _)) => out.push(misspelt_diagnostic(
                    MissingRequiredField,
                    file,
                    &entry.key,
                    key,
                    field,
                    "stage frontmatter field",
                    "the stage fails Setup (StageDefinitionInvalid)",
                )),
                None => {
                    let root = stage.root.as_ref().unwrap_or(value);
                    unknown_key(stage, root, &entry.key, key, &known, "stage frontmatter field", out)
                }
            },
        }
    }
}

fn known_fields() -> Vec<&'static str> {
    REQUIRED_FIELDS.iter().chain(OPTIONAL_FIELDS.iter()).copied().collect()
}

/// Reports a key nobody reads, with a rename fix when it looks like a typo.
pub(super) fn unknown_key(
    stage: &StageDoc,
    mapping: &Node,
    key_node: &Node,
    key: &str,
    known: &[&'static str],
    what: &str,
    out: &mut Vec<Diagnostic>,
) {
    out.push(unknown_key_diagnostic(stage.id(), mapping, key_node, key, known, what));
}

/// An unknown key of `mapping`, with a rename fix when it looks like a typo of a known key that
/// the mapping does not have yet.
pub(crate) fn unknown_key_diagnostic(
    file: crate::diagnostic::FileId,
    mapping: &Node,
    key_node: &Node,
    key: &str,
    known: &[&'static str],
    what: &str,
) -> Diagnostic {
    let guess = did_you_mean_key(key, known.iter().copied(), mapping.keys());
    let message = match guess {
        Some(KeyGuess { name, taken: false }) => {
            format!("unknown {what} `{key}`; did you mean `{name}`? The runtime ignores unknown keys silently")
        }
        Some(KeyGuess { name, taken: true }) => {
            format!("unknown {what} `{key}`; `{name}` is set already, and the runtime ignores this one")
        }
        None => format!("unknown {what} `{key}`; the runtime ignores it"),
    };
    Diagnostic::new(UnknownField, file, key_node.span, message).with_suggestion(key_node.span, KeyGuess::rename(guess))
}

/// The required keys of `mapping` that are missing because they are misspelt, each with the
/// unknown key whose did-you-mean names it. Both findings would be one defect, so the rules
/// report it once, on the misspelt key, with the rename as the fix (which keeps the author's
/// value, where adding the key would write a second one).
fn misspelt_required<'n>(
    mapping: &'n Node,
    known: &[&'static str],
    required: &[&'static str],
) -> Vec<(&'static str, &'n Node)> {
    let mut found: Vec<(&'static str, &'n Node)> = Vec::new();
    for entry in mapping.as_map().unwrap_or_default() {
        let Some(key) = entry.key_str().filter(|key| !known.contains(key)) else { continue };
        let guess = KeyGuess::rename(did_you_mean_key(key, known.iter().copied(), mapping.keys()));
        if let Some(field) = guess.filter(|field| required.contains(field))
            && !found.iter().any(|(seen, _)| *seen == field)
        {
            found.push((field, &entry.key));
        }
    }
    found
}

/// The finding for a required key written as `key`: `code` (the missing key's), on the key,
/// renaming it.
fn misspelt_diagnostic(
    code: &'static str,
    file: crate::diagnostic::FileId,
    key_node: &Node,
    key: &str,
    field: &str,
    what: &str,
    consequence: &str,
) -> Diagnostic {
    Diagnostic::new(
        code,
        file,
        key_node.span,
        format!(
            "`{key}` is not a {what}, so the required `{field}` is missing and {consequence}; did you mean `{field}`?"
        ),
    )
    .with_suggestion(key_node.span, Some(field))
}

fn check_missing(stage: &StageDoc, misspelt: &[(&str, &Node)], out: &mut Vec<Diagnostic>) {
    let root = stage.root.as_ref();
    let missing: Vec<&str> = REQUIRED_FIELDS
        .iter()
        .copied()
        .filter(|f| root.and_then(|r| r.get(f)).is_none() && !misspelt.iter().any(|(field, _)| field == f))
        .collect();
    let Some(fm) = &stage.frontmatter else { return };
    let Some(close) = fm.close_fence else { return };
    let text = &stage.file.text;
    let newline = if text[..close.start].ends_with("\r\n") { "\r\n" } else { "\n" };
    // A flow-style frontmatter (`{id: a, name: A}`) takes the field inside its braces.
    let flow = root.filter(|r| text[r.span.start..r.span.end].starts_with('{') && text[..r.span.end].ends_with('}'));
    for field in missing {
        let (at, line) = match flow {
            Some(r) => {
                let empty = r.as_map().is_some_and(<[_]>::is_empty);
                let separator = if empty { "" } else { ", " };
                (r.span.end - 1, format!("{separator}{field}: {}", placeholder(stage, field)))
            }
            None => (close.start, format!("{field}: {}{newline}", placeholder(stage, field))),
        };
        out.push(
            Diagnostic::new(
                MissingRequiredField,
                stage.id(),
                fm.open_fence,
                format!(
                    "missing required field `{field}` ({}); a stage without it fails Setup (StageDefinitionInvalid)",
                    describe(field)
                ),
            )
            .with_fix(
                format!("Add `{field}`"),
                Applicability::Unsafe,
                vec![Edit { span: Span::empty(at), replacement: line }],
            ),
        );
    }
}

fn describe(field: &str) -> &'static str {
    match field {
        "id" => "a kebab-case id unique in the state machine",
        "name" => "a human-readable label",
        "allowedTools" => "the tools this stage may call, `[]` for none",
        "completionTool" => "the tool the model calls to finish the stage",
        "completionSchema" => "a JSON Schema for the completion payload",
        "retryPolicy" => "`{ maxAttempts, backoff }`",
        "turnCap" => "a positive integer bounding the LLM turns of Act",
        _ => "how CheckGate outcomes are handled, e.g. `retry-later`",
    }
}

/// A sensible starting value for a missing field.
fn placeholder(stage: &StageDoc, field: &str) -> String {
    let stem = stage.file.path.file_stem().and_then(|s| s.to_str()).unwrap_or("stage");
    let id = stage.stage_id().map(|(id, _)| id.to_string()).unwrap_or_else(|| to_kebab_case(stem));
    match field {
        "id" => id,
        "name" => {
            let mut chars = id.replace('-', " ").chars().collect::<Vec<_>>();
            if let Some(first) = chars.first_mut() {
                *first = first.to_ascii_uppercase();
            }
            chars.into_iter().collect()
        }
        "allowedTools" => "[]".into(),
        "completionTool" => format!("submit_{}", id.replace('-', "_")),
        "completionSchema" => "{ type: object }".into(),
        "retryPolicy" => "{ maxAttempts: 1, backoff: none }".into(),
        "turnCap" => "10".into(),
        _ => stage.config().resolution_policies.first().cloned().unwrap_or_else(|| "retry-later".into()),
    }
}

#[derive(Clone, Copy)]
enum Expect {
    /// A non-empty string.
    Text,
    String,
    StringList,
    Mapping,
    Integer,
}

/// Checks a value's type; returns whether it has the expected type.
fn expect(stage: &StageDoc, key: &str, value: &Node, expect: Expect, out: &mut Vec<Diagnostic>) -> bool {
    let file = stage.id();
    let wanted = match expect {
        Expect::Text | Expect::String => "a string",
        Expect::StringList => "a list of strings",
        Expect::Mapping => "a mapping",
        Expect::Integer => "an integer",
    };
    let ok = match (&value.value, expect) {
        (Value::String(s), Expect::Text) => {
            if s.trim().is_empty() {
                out.push(Diagnostic::new(FieldType, file, value.span, format!("`{key}` is empty; give it a value")));
                return false;
            }
            true
        }
        (Value::String(_), Expect::String) | (Value::Map(_), Expect::Mapping) | (Value::Int(_), Expect::Integer) => {
            true
        }
        (Value::Seq(items), Expect::StringList) => {
            let mut all = true;
            for item in items.iter().filter(|item| item.as_str().is_none()) {
                out.push(Diagnostic::new(
                    FieldType,
                    file,
                    item.span,
                    format!("every `{key}` entry must be a string, but this one is {}", item.type_name()),
                ));
                all = false;
            }
            return all;
        }
        _ => false,
    };
    if !ok {
        let found = match &value.value {
            Value::Null => "empty (null)".to_string(),
            // Integers beyond 64 bits reach us as floats: too large, not fractional.
            Value::Float(f) if matches!(expect, Expect::Integer) && f.fract() == 0.0 && f.abs() >= 9.2e18 => {
                format!("{} (too large)", shown(stage, value))
            }
            Value::Float(f) if matches!(expect, Expect::Integer) && f.fract() == 0.0 => {
                format!("{} (a decimal; write it as {f:.0})", shown(stage, value))
            }
            Value::Float(_) if matches!(expect, Expect::Integer) => {
                format!("{} (not a whole number)", shown(stage, value))
            }
            Value::String(s) if matches!(expect, Expect::Integer) => format!("the string \"{s}\""),
            _ => value.type_name().to_string(),
        };
        let hint = if key == "allowedTools" { " such as `[Read, Grep]`" } else { "" };
        let diagnostic =
            Diagnostic::new(FieldType, file, value.span, format!("`{key}` must be {wanted}{hint}, but it is {found}"));
        out.push(with_retyped(diagnostic, value, expect));
    }
    ok
}

/// `diagnostic` with the safe fix that writes `value` with the type it needs, when there is one.
fn with_retyped(diagnostic: Diagnostic, value: &Node, expect: Expect) -> Diagnostic {
    match retyped(value, expect) {
        Some(fixed) => diagnostic.with_fix(
            format!("Write `{fixed}`"),
            Applicability::Safe,
            vec![Edit { span: value.span, replacement: fixed }],
        ),
        None => diagnostic,
    }
}

/// The value written with the type the field needs, when that is beyond doubt: `"15"` or
/// `15.0` as the integer 15, and `Read, Grep` (one string to YAML) as the list `[Read, Grep]`
/// when every item is a plain name. Anything else (`Read Grep`, `"a: b"`) is left to the author.
fn retyped(value: &Node, expect: Expect) -> Option<String> {
    match (&value.value, expect) {
        (Value::String(s), Expect::Integer) => s.trim().parse::<i64>().ok().map(|n| n.to_string()),
        (Value::Float(f), Expect::Integer) if f.fract() == 0.0 && f.abs() < 9.2e18 => Some(format!("{f:.0}")),
        (Value::String(s), Expect::StringList) => {
            let items: Vec<&str> = s.split(',').map(str::trim).collect();
            let plain = |item: &str| {
                !item.is_empty()
                    && item.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
                    && item.chars().next().is_some_and(char::is_alphabetic)
                    // In a flow list YAML would read these as booleans or null, not names.
                    && !["true", "false", "null", "yes", "no", "on", "off"].contains(&item.to_lowercase().as_str())
            };
            items.iter().all(|item| plain(item)).then(|| format!("[{}]", items.join(", ")))
        }
        _ => None,
    }
}

fn check_id(stage: &StageDoc, value: &Node, out: &mut Vec<Diagnostic>) {
    let Some(id) = value.as_str() else { return };
    if is_kebab_case(id) {
        return;
    }
    let fixed = to_kebab_case(id);
    let mut diagnostic = Diagnostic::new(
        InvalidStageId,
        stage.id(),
        value.span,
        format!("stage id `{id}` is not kebab-case (lowercase letters and digits joined by single `-`)"),
    );
    // Non-ASCII letters would be dropped by the conversion; let the author choose.
    if is_kebab_case(&fixed) && id.is_ascii() {
        // Unsafe: the id is part of the workflow's contract. The family widens the edit to the
        // id's uses in other files (as a rename does) once it sees the whole state machine.
        diagnostic = diagnostic.with_fix(
            format!("Rename to `{fixed}`"),
            Applicability::Unsafe,
            vec![Edit { span: value.span, replacement: fixed }],
        );
    }
    out.push(diagnostic);
}

fn check_resolution_policy(stage: &StageDoc, value: &Node, out: &mut Vec<Diagnostic>) {
    let Some(policy) = value.as_str() else { return };
    let known = &stage.config().resolution_policies;
    if known.iter().any(|k| k == policy) {
        return;
    }
    let suggestion = did_you_mean(policy, known.iter().map(String::as_str));
    let list = known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    let diagnostic = Diagnostic::new(
        InvalidResolutionPolicy,
        stage.id(),
        value.span,
        format!("unknown resolutionPolicy `{policy}`; expected one of {list}"),
    )
    .with_help("the accepted values are configurable with `[sm] resolution-policies` in stagelint.toml");
    out.push(diagnostic.with_suggestion(value.span, suggestion));
}

fn check_retry_policy(stage: &StageDoc, key_span: Span, value: &Node, out: &mut Vec<Diagnostic>) {
    let file = stage.id();
    let keys = ["maxAttempts", "backoff"];
    let misspelt = misspelt_required(value, &keys, &keys);
    let is_misspelt = |field: &str| misspelt.iter().any(|(f, _)| *f == field);
    match value.get("maxAttempts") {
        None if is_misspelt("maxAttempts") => {}
        None => out.push(Diagnostic::new(
            InvalidRetryPolicy,
            file,
            key_span,
            "`retryPolicy` has no `maxAttempts`; add `maxAttempts: 1` (or more) to bound Assert → retry",
        )),
        Some(n) if n.as_i64().is_none_or(|n| n < 1) => {
            let diagnostic = Diagnostic::new(
                InvalidRetryPolicy,
                file,
                n.span,
                format!("`maxAttempts` must be an integer of at least 1, but it is {}", shown(stage, n)),
            );
            // `"3"` is written `3`; `0` or `"0"` needs the author's number.
            let positive = retyped(n, Expect::Integer).and_then(|t| t.parse::<i64>().ok()).is_some_and(|t| t >= 1);
            out.push(if positive { with_retyped(diagnostic, n, Expect::Integer) } else { diagnostic });
        }
        Some(_) => {}
    }
    let known = &stage.config().backoffs;
    let list = known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    match value.get("backoff") {
        None if is_misspelt("backoff") => {}
        None => out.push(Diagnostic::new(
            InvalidRetryPolicy,
            file,
            key_span,
            format!("`retryPolicy` has no `backoff`; add one of {list}"),
        )),
        Some(b) => match b.as_str() {
            Some(name) if known.iter().any(|k| k == name) => {}
            _ => {
                let suggestion = b.as_str().and_then(|name| did_you_mean(name, known.iter().map(String::as_str)));
                let hint = suggestion.map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default();
                out.push(
                    Diagnostic::new(
                        InvalidRetryPolicy,
                        file,
                        b.span,
                        format!("unknown backoff `{}`{hint}; expected one of {list}", shown(stage, b)),
                    )
                    .with_help("the accepted values are configurable with `[sm] backoffs` in stagelint.toml")
                    .with_suggestion(b.span, suggestion),
                );
            }
        },
    }
    for entry in value.as_map().unwrap_or_default() {
        let key = entry.key_str().unwrap_or("");
        if keys.contains(&key) {
            continue;
        }
        match misspelt.iter().find(|(_, node)| node.span == entry.key.span) {
            Some((field, _)) => out.push(misspelt_diagnostic(
                InvalidRetryPolicy,
                file,
                &entry.key,
                key,
                field,
                "retryPolicy key",
                if *field == "maxAttempts" { "Assert → retry has no bound" } else { "the backoff is unset" },
            )),
            None => unknown_key(stage, value, &entry.key, key, &keys, "retryPolicy key", out),
        }
    }
}

/// `next: [b]` or `next: b`: stage ids where the `NextResult` mapping belongs.
fn bare_next_list(value: &Node) -> Option<Vec<&str>> {
    match &value.value {
        Value::String(id) if !id.trim().is_empty() => Some(vec![id.as_str()]),
        Value::Seq(items) if !items.is_empty() => items.iter().map(Node::as_str).collect(),
        _ => None,
    }
}

/// A bare id list is what an author means by `nextStages`. Several ids could be a sequence (each
/// stage gets the previous result) or a fan-out; the fix writes the sequence, which needs no join
/// and shares no frozen context, and only `--unsafe-fixes` applies it.
fn next_as_list(stage: &StageDoc, value: &Node, ids: &[&str]) -> Diagnostic {
    let list = ids.join(", ");
    let applicability = if ids.len() == 1 { Applicability::Safe } else { Applicability::Unsafe };
    let mapping = format!("{{ nextStages: [{list}], execution: sequential }}");
    let found = if matches!(value.value, Value::Seq(_)) { "a list of stage ids" } else { "a bare stage id" };
    let help = if ids.len() == 1 {
        "`next` holds `nextStages`, `execution` (`sequential` or `parallel`) and, for a fan-out, an optional `join`"
    } else {
        "for a fan-out that runs these stages side by side, write `execution: parallel` instead (with a `join` stage to run once all succeed)"
    };
    Diagnostic::new(
        FieldType,
        stage.id(),
        value.span,
        format!("`next` must be a mapping (a `NextResult`), but it is {found}; write `next: {mapping}`"),
    )
    .with_help(help)
    .with_fix(format!("Write `{mapping}`"), applicability, vec![Edit { span: value.span, replacement: mapping }])
}

fn check_next(stage: &StageDoc, value: &Node, out: &mut Vec<Diagnostic>) {
    let file = stage.id();
    let mut list_seen = false;
    for entry in value.as_map().unwrap_or_default() {
        let key = entry.key_str().unwrap_or("");
        match key {
            "nextStages" | "stages" => {
                if list_seen {
                    out.push(Diagnostic::new(
                        FieldType,
                        file,
                        entry.key.span,
                        "`next` has both `nextStages` and its alias `stages`; keep one",
                    ));
                }
                list_seen = true;
                expect(stage, key, &entry.value, Expect::StringList, out);
            }
            "execution" => {
                if expect(stage, key, &entry.value, Expect::Text, out)
                    && !matches!(entry.value.as_str(), Some("sequential" | "parallel"))
                {
                    let written = entry.value.as_str().unwrap_or("");
                    let guess = did_you_mean(written, EXECUTIONS);
                    let hint = guess.map(|g| format!("; did you mean `{g}`?")).unwrap_or_default();
                    out.push(
                        Diagnostic::new(
                            FieldType,
                            file,
                            entry.value.span,
                            format!(
                                "`execution` must be `sequential` or `parallel`, not `{}`{hint}",
                                shown(stage, &entry.value)
                            ),
                        )
                        .with_suggestion(entry.value.span, guess),
                    );
                }
            }
            "join" => {
                expect(stage, key, &entry.value, Expect::Text, out);
            }
            _ => {
                let known = ["nextStages", "stages", "execution", "join"];
                unknown_key(stage, value, &entry.key, key, &known, "`next` key", out)
            }
        }
    }
}

/// A value as the author wrote it, for messages (`"3"` stays quoted, `5.0` stays `5.0`).
fn shown(stage: &StageDoc, node: &Node) -> String {
    stage.source_text(node.span)
}
