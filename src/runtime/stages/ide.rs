//! Editor features in stage and machine cassettes: values after a key (works on half-typed YAML: it reads the
//! line, not the tree), key documentation on hover, and `stage:` → the stage definition.

use crate::cassette::{ACT_ENDS, BRANCHES, DECISIONS, DRIFT_MODES, GATE_OUTCOMES, OUTCOMES, STOPS, VERDICTS};
use crate::editor::schema::{Schema, Step};
use crate::editor::yaml_lines::{self, Located, Place};
use crate::editor::{CompletionItem, CompletionKind, Cursor, HoverInfo, Target};
use crate::families::sm::model::StageDoc;
use crate::source::Span;
use crate::workspace::{FileKind, Workspace};

/// Keys with the values they take and what they mean.
const KEYS: &[(&str, &[&str], &str)] = &[
    ("cassette", &["1"], "The cassette format version. Always `1`."),
    ("stage", &[], "The `id` of the stage this cassette replays."),
    ("ctx", &[], "The StageContext given to Setup: SM fields, `upstream`, pinned `workflowRunId`/`stageExecutionId`."),
    (
        "grantStageTool",
        &DECISIONS,
        "How out-of-envelope tool calls are answered when a turn has no `grant:` (default: deny, as with no interactor).",
    ),
    ("onDrift", &DRIFT_MODES, "What a changed request fingerprint does: a warning, or a failure (also `--strict`)."),
    ("checkGate", &GATE_OUTCOMES, "The scripted CheckGate outcome; anything but `proceed` skips Act."),
    ("assert", &VERDICTS, "A scripted Assert outcome (the SM's assert hook); default: `capHit ? retry : ok`."),
    ("stop", &STOPS, "Why the model stopped."),
    ("branch", &BRANCHES, "The Act branch the runtime must take for this turn."),
    (
        "outcome",
        &OUTCOMES,
        "What happens to a tool call: dispatched (allowed), approved, denied or deferred (out of envelope), invalidArguments (argsRaw that is not JSON).",
    ),
    ("act", &ACT_ENDS, "How Act must end in this attempt."),
    ("attempts", &[], "Attempts in order; each holds the model turns Act consumes in order."),
    ("turns", &[], "One model response per turn, consumed in order within the attempt."),
    ("response", &[], "What the model said: `stop` and `content` blocks (`text`, `toolCall`, `thinking`)."),
    ("toolCall", &[], "A tool call: `{id, name, args}` (or `argsRaw` for arguments that are not JSON)."),
    ("grant", &[], "Answers to grantStageTool proposals in this turn, by call id."),
    ("results", &[], "Tool results for dispatched calls in this turn, by call id (they win over `tools:`)."),
    ("expect", &[], "What the runtime must do with this turn: `{branch, call, outcome, calls, errorAt}`."),
    ("expectEnd", &[], "How Act and Assert must end this attempt: `{act, assert}`."),
    ("expectResult", &[], "The StageResult the stage must exit with: verdict, capHit, attemptCount, parsed, reason."),
    ("request", &[], "Fingerprints of the request when the turn was recorded; a difference is reported as drift."),
    ("tools", &[], "Closed-world tool fakes: `Tool: [{args, result}]` or `{anyArgs: true, result}`."),
    (
        "stages",
        &[],
        "A machine cassette: each stage id with its own `attempts`, `tools`, `expectResult`; a list of them for a stage that runs more than once (one per execution).",
    ),
];

/// What the stage engine answers in its cassettes.
pub(super) const EDITOR: crate::editor::Hooks =
    crate::editor::Hooks { completions, hover, definitions, ..crate::editor::Hooks::NONE };

fn is_cassette(workspace: &Workspace, at: Cursor) -> bool {
    workspace.file(at.file).kind == FileKind::Cassette
}

/// Keys of the mapping at the cursor, from the cassette JSON Schema (which `tests/meta.rs` keeps
/// in step with the reader's key tables), with their documentation.
fn key_completions(located: Located) -> Vec<CompletionItem> {
    // Every block list of a cassette holds mappings.
    let located = located.item_as_key();
    let Place::Key(path) = located.place else { return Vec::new() };
    let steps: Vec<Step> = path.iter().map(|k| if k == "-" { Step::Item } else { Step::Key(k) }).collect();
    Schema::cassette()
        .fields(&steps)
        .into_iter()
        .filter(|field| !located.present.iter().any(|p| p == field.name))
        .map(|field| CompletionItem {
            label: field.name.to_string(),
            kind: CompletionKind::Field,
            detail: field.detail,
            documentation: field.doc.map(str::to_string),
            insert: Some(format!("{}: ", field.name)),
            replace: located.partial,
        })
        .collect()
}

fn completions(workspace: &Workspace, at: Cursor) -> Vec<CompletionItem> {
    if !is_cassette(workspace, at) {
        return Vec::new();
    }
    let file = workspace.file(at.file);
    if !file.text.is_char_boundary(at.offset) {
        return Vec::new();
    }
    let Some(located) = yaml_lines::locate(&file.text, Span::new(0, file.text.len()), at.offset) else {
        return Vec::new();
    };
    let key = match &located.place {
        Place::Value { path, .. } => path.last().map_or("", String::as_str),
        _ => return key_completions(located),
    };
    let typed = &file.text[located.partial.start..at.offset];
    let values: Vec<String> = match key {
        "name" => file.config.tools.iter().cloned().chain(stage_tools(workspace, at)).collect(),
        "stage" => stage_ids(workspace, at),
        _ => KEYS
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, v, _)| v.iter().map(|s| s.to_string()).collect())
            .unwrap_or_default(),
    };
    let mut values: Vec<String> = values.into_iter().filter(|v| v.starts_with(typed)).collect();
    values.sort();
    values.dedup();
    let doc = KEYS.iter().find(|(k, _, _)| *k == key).map(|(_, _, d)| d.to_string());
    values
        .into_iter()
        .map(|value| CompletionItem {
            label: value.clone(),
            kind: CompletionKind::Value,
            detail: Some(key.to_string()),
            documentation: doc.clone(),
            insert: Some(value),
            replace: located.partial,
        })
        .collect()
}

/// Completion tools of the stages near the cassette (a `toolCall` may name them).
fn stage_tools(workspace: &Workspace, at: Cursor) -> Vec<String> {
    near_stages(workspace, at).filter_map(|doc| doc.completion_tool().map(|(t, _)| t.to_string())).collect()
}

fn stage_ids(workspace: &Workspace, at: Cursor) -> Vec<String> {
    near_stages(workspace, at).filter_map(|doc| doc.stage_id().map(|(id, _)| id.to_string())).collect()
}

fn near_stages(workspace: &Workspace, at: Cursor) -> impl Iterator<Item = StageDoc<'_>> {
    let dir = workspace.file(at.file).path.parent().map(std::path::Path::to_path_buf);
    workspace
        .files()
        .iter()
        .filter(move |f| f.kind == FileKind::Stage && dir.as_deref().is_some_and(|d| f.path.starts_with(d)))
        .map(StageDoc::parse)
}

fn hover(workspace: &Workspace, at: Cursor) -> Option<HoverInfo> {
    if !is_cassette(workspace, at) {
        return None;
    }
    let text = &workspace.file(at.file).text;
    let (start, end) = word_at(text, at.offset)?;
    let word = &text[start..end];
    if !text[end..].starts_with(':') {
        return None;
    }
    let (_, values, doc) = KEYS.iter().find(|(k, _, _)| *k == word)?;
    let mut markdown = format!("**`{word}`** (cassette)\n\n{doc}");
    if !values.is_empty() {
        markdown.push_str(&format!(
            "\n\nValues: {}",
            values.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
        ));
    }
    Some(HoverInfo { span: Span::new(start, end), markdown })
}

/// `stage: <id>` → the stage definition's `id:`.
fn definitions(workspace: &Workspace, at: Cursor) -> Vec<Target> {
    if !is_cassette(workspace, at) {
        return Vec::new();
    }
    let text = &workspace.file(at.file).text;
    let whole = Span::new(0, text.len());
    // `stage: <id>`, or an id under a machine cassette's `stages:`.
    let word = match yaml_lines::key_at(text, whole, at.offset) {
        Some((path, span)) if path.len() == 2 && path[0] == "stages" => &text[span.start..span.end],
        _ => {
            let Some((start, end)) = word_at(text, at.offset) else { return Vec::new() };
            let Some(located) = yaml_lines::locate(text, whole, end) else { return Vec::new() };
            match located.place {
                Place::Value { path, .. } if path.last().is_some_and(|k| k == "stage") => &text[start..end],
                _ => return Vec::new(),
            }
        }
    };
    near_stages(workspace, at)
        .filter_map(|doc| {
            let (id, span) = doc.stage_id()?;
            (id == word).then(|| Target { file: doc.id(), span })
        })
        .collect()
}

/// The identifier-ish word around `offset`.
fn word_at(text: &str, offset: usize) -> Option<(usize, usize)> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    // After the character that ends the word on the left, however many bytes it takes.
    let start = text[..offset].char_indices().rfind(|(_, c)| !is_word(*c)).map_or(0, |(i, c)| i + c.len_utf8());
    let end = text[offset..].find(|c: char| !is_word(c)).map_or(text.len(), |i| offset + i);
    (start < end).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::word_at;

    /// Found by the language server's property test: a hover just after a multi-byte
    /// character that is no word character (`😀x`, at `x`) sliced inside it and panicked.
    #[test]
    fn a_word_after_a_multi_byte_character_starts_after_all_of_it() {
        assert_eq!(word_at("😀x", 4), Some((4, 5)));
        assert_eq!(word_at("😀x", 5), Some((4, 5)));
        assert_eq!(word_at("«stage»: plan", 7), Some((2, 7)));
        assert_eq!(word_at("😀", 4), None);
    }
}
