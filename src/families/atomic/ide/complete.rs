//! Completion in a workflow, also while it is half-typed: keys by the object's role, the values
//! a key allows, agent names, input names after `ctx.inputs.`, stage names in `transcript("`.

use super::agents;
use super::facts::{Facts, is_agent_value, is_current, is_read, stage_arg};
use super::locate::{self, At, Inside, Kind, Located};
use super::{agent_of, ignored_here, role_of, workflow};
use crate::editor::{CompletionItem, CompletionKind, Cursor};
use crate::families::atomic::keys::{self, Key, Role};
use crate::source::Span;
use crate::workspace::{SourceFile, Workspace};

pub(in crate::families::atomic) fn completions(workspace: &Workspace, at: Cursor) -> Vec<CompletionItem> {
    let Some(file) = workflow(workspace, at.file) else { return Vec::new() };
    let text = file.text.as_str();
    if !text.is_char_boundary(at.offset) {
        return Vec::new();
    }
    let Some(located) = locate::locate(text, at.offset) else { return Vec::new() };
    let in_string = matches!(located.inside, Inside::Str { .. });
    let replace = replaced(text, &located, in_string);
    let agent = agent_of(file);
    let before = text[..located.partial.start].trim_end_matches(char::is_whitespace);
    if !in_string && (before.ends_with(".inputs.") || before.ends_with(".inputs?.")) {
        return input_names(text, replace);
    }
    let spot = &located.spot;
    let current = is_current(text);
    match &spot.at {
        At::Key => {
            let Some(role) = role_of(spot, current) else { return Vec::new() };
            let Some(table) = keys::keys(role, agent) else { return Vec::new() };
            let present = present_keys(text, &located);
            let note = ignored_here(text, &located.frames, role, agent);
            // v0.5 lacks the keys 0.6 and 0.7 added (`Key::since`).
            let seed = !matches!(
                crate::workspace::atomic::sdk_module(text),
                Some(crate::workspace::atomic::Module::AtomicSdk)
            ) && !current;
            table
                .iter()
                .filter(|k| !present.iter().any(|p| p == k.name))
                .filter(|k| !seed || k.since.is_none())
                .map(|k| CompletionItem {
                    label: k.name.to_string(),
                    kind: CompletionKind::Field,
                    detail: Some(k.ty.to_string()),
                    documentation: Some(key_doc(k, role, note)),
                    insert: (!in_string).then(|| format!("{}: ", k.name)),
                    replace,
                })
                .collect()
        }
        At::Value(key) => {
            // After a finished value (`headless: true |`) the next thing is a `,` or `}`.
            if !in_string && located.partial.is_empty() && !before.ends_with(':') {
                return Vec::new();
            }
            if is_agent_value(spot) {
                return agent_names(workspace, file, replace, in_string);
            }
            let Some(role) = role_of(spot, current) else { return Vec::new() };
            let Some(k) = keys::key(role, agent, key) else { return Vec::new() };
            let note = ignored_here(text, &located.frames, role, agent);
            let quoted = !in_string && k.ty != "boolean";
            let booleans: &[&str] = if k.ty == "boolean" && !in_string { &["true", "false"] } else { &[] };
            let values = if k.values.is_empty() { booleans } else { k.values };
            values
                .iter()
                .map(|value| CompletionItem {
                    label: value.to_string(),
                    kind: CompletionKind::Value,
                    detail: Some(k.ty.to_string()),
                    documentation: Some(key_doc(k, role, note)),
                    insert: quoted.then(|| format!("\"{value}\"")),
                    replace,
                })
                .collect()
        }
        At::Item { previous } => {
            let flags = stage_arg(spot, 1) && spot.path == ["chatFlags"];
            match flags && previous.as_deref() == Some("--agent") {
                true => agent_names(workspace, file, replace, in_string),
                false => Vec::new(),
            }
        }
        At::Argument => {
            let read = spot.call.as_ref().is_some_and(|c| is_read(&c.callee) && c.arg == 0);
            match read && in_string {
                true => stage_names(text, &located, replace),
                false => Vec::new(),
            }
        }
        At::Other => Vec::new(),
    }
}

/// The keys of the object the cursor is in, before and after it.
fn present_keys(text: &str, located: &Located) -> Vec<String> {
    let Some(object) = located.frames.last().filter(|f| f.kind == Kind::Object) else { return Vec::new() };
    let mut keys = object.keys.clone();
    let (open, offset) = (object.open, located.partial.end);
    locate::tokens(text, &mut |token, frames| {
        if let locate::Token::Punct(':', at) = token
            && at.start >= offset
            && let Some(frame) = frames.last().filter(|f| f.open == open && f.kind == Kind::Object)
            && let Some(key) = &frame.key
        {
            keys.push(key.clone());
        }
    });
    keys
}

/// The markdown shown for a key: its type, what it does, the values it allows, and why it does
/// nothing where it is (`note`).
pub(super) fn key_doc(k: &Key, role: Role, note: Option<&str>) -> String {
    let mut out = format!("**{}** `{}` · {}\n\n{}", k.name, k.ty, role.describe(), k.doc);
    if !k.values.is_empty() {
        let values: Vec<String> = k.values.iter().map(|v| format!("`{v}`")).collect();
        out.push_str(&format!("\n\nAllowed: {}", values.join(", ")));
    }
    if let Some(note) = note {
        out.push_str(&format!("\n\n**{note}**"));
    }
    out
}

/// The text an item replaces: the partial word or string text before the cursor, and the rest
/// of it after the cursor (up to the closing quote).
fn replaced(text: &str, located: &Located, in_string: bool) -> Span {
    let partial = located.partial;
    let rest = &text[partial.end..];
    let len = match in_string {
        true => rest.find(['"', '\'', '`', '\n', '$']).unwrap_or(rest.len()),
        false => rest.chars().take_while(|c| locate::is_word(*c)).map(char::len_utf8).sum(),
    };
    Span::new(partial.start, partial.end + len)
}

fn input_names(text: &str, replace: Span) -> Vec<CompletionItem> {
    let current = is_current(text);
    let facts = Facts::read(text);
    let mut seen = Vec::new();
    facts
        .inputs
        .iter()
        .filter_map(|input| {
            let name = input.name.as_ref().filter(|n| !n.dynamic)?;
            if seen.contains(&name.text) {
                return None;
            }
            seen.push(name.text.clone());
            let ty = input.ty.as_ref().map(|t| if current { format!("Type.{t}") } else { t.clone() });
            let optional = if current && input.optional { " · optional" } else { "" };
            Some(CompletionItem {
                label: name.text.clone(),
                kind: CompletionKind::Variable,
                detail: ty.map(|t| format!("input · {t}{optional}")),
                documentation: input.description.clone(),
                insert: None,
                replace,
            })
        })
        .collect()
}

/// The static stage names of the workflow whose transcripts can be read where the cursor is, as
/// `atomic/TranscriptNotReady` judges it: not the stages the cursor is in (a stage never reads
/// its own transcript), not a stage that starts after the cursor, and not a sibling in the same
/// `Promise.all([...])` (it runs at the same time).
fn stage_names(text: &str, located: &Located, replace: Span) -> Vec<CompletionItem> {
    let facts = Facts::read(text);
    let enclosing: Vec<usize> = located
        .frames
        .iter()
        .filter(|f| f.kind == Kind::Call && f.callee.as_ref().is_some_and(|c| super::is_stage(&c.0)))
        .map(|f| f.open)
        .collect();
    // The array of each `Promise.all` the cursor is in: a stage inside it is a sibling.
    let groups: Vec<usize> = located
        .frames
        .windows(2)
        .filter(|w| {
            w[0].kind == Kind::Call
                && w[0].callee.as_ref().is_some_and(|c| c.0.starts_with("Promise."))
                && w[1].kind == Kind::Array
        })
        .map(|w| w[1].open)
        .collect();
    let cursor = located.partial.start;
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for stage in &facts.stages {
        let Some(name) = stage.name.as_ref().filter(|n| !n.dynamic) else { continue };
        let later = stage.start > cursor;
        let sibling = groups.iter().any(|open| *open < stage.start);
        if enclosing.iter().any(|open| stage.is_call_at(*open))
            || later
            || sibling
            || seen.contains(&name.text.as_str())
        {
            continue;
        }
        seen.push(&name.text);
        out.push(CompletionItem {
            label: name.text.clone(),
            kind: CompletionKind::Reference,
            detail: Some(if stage.headless { "headless stage" } else { "stage" }.to_string()),
            documentation: stage.description.clone(),
            insert: None,
            replace,
        });
    }
    out
}

fn agent_names(workspace: &Workspace, file: &SourceFile, replace: Span, in_string: bool) -> Vec<CompletionItem> {
    let mut out: Vec<CompletionItem> = Vec::new();
    let item = |name: &str, detail: String| CompletionItem {
        label: name.to_string(),
        kind: CompletionKind::Reference,
        detail: Some(detail),
        documentation: None,
        insert: (!in_string).then(|| format!("\"{name}\"")),
        replace,
    };
    let provider = agent_of(file);
    for agent in agents::files(workspace, &file.path) {
        // The provider's CLI reads only its own directory (as `atomic/UnknownAgent` judges).
        let serves = |p: Option<&str>| p.is_none() || provider.is_none() || p == provider;
        if !serves(crate::workspace::atomic::agent_provider(&agent.path)) {
            continue;
        }
        if !out.iter().any(|i| i.label == agent.name) {
            let shown =
                workspace.file_at(&agent.path).map_or_else(|| agent.path.display().to_string(), |f| f.display.clone());
            out.push(item(&agent.name, shown));
        }
    }
    for name in agents::INSTALLED {
        if !out.iter().any(|i| i.label == *name) {
            out.push(item(name, "installed by `atomic init`".to_string()));
        }
    }
    out
}
