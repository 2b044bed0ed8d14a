//! `stagelint cassette import`: recorded wire exchanges (JSON Lines) → a stage cassette.
//!
//! Each line is `{"request": …, "response": …}` in one provider's wire format, oldest first. A
//! line that is not such an exchange is skipped with a warning naming it; the input as a whole
//! is unusable only when no line is.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::families::sm::model::{CORE_CTX_FIELDS, StageDoc};
use crate::runtime::stages::owners;
use crate::template::stage::{Segment, TagKind};
use crate::workspace::FileKind;
use crate::workspace::discover::{ConfigCache, absolute, discover};

use crate::runtime::stages::turns::{TurnLog, cassette_document};
use crate::runtime::wire::{WireError, WireFormat};

/// One input: a name for messages (a path, or `-`) and its text.
pub struct Input {
    pub name: String,
    pub text: String,
}

pub struct ImportOptions {
    pub stage: String,
    /// `None`: detect the format from the exchanges.
    pub format: Option<WireFormat>,
    /// The cassette's `ctx:`, when the stage is known ([`scaffold_ctx`]).
    pub ctx: Option<Value>,
    /// Replace every secret in the cassette by its placeholder (`template::secrets`).
    pub redact: bool,
}

#[derive(Debug)]
pub struct Imported {
    pub cassette: Value,
    pub format: WireFormat,
    pub turns: usize,
    /// How many secrets were replaced by placeholders.
    pub redacted: usize,
    /// One line per skipped exchange or oddity, `name:line: what`.
    pub warnings: Vec<String>,
}

struct Exchange<'a> {
    at: String,
    request: &'a Value,
    response: &'a Value,
}

/// Builds the cassette; `Err` says why nothing usable was found.
pub fn import(inputs: &[Input], options: &ImportOptions) -> Result<Imported, String> {
    let mut warnings = Vec::new();
    let mut values = Vec::new();
    for input in inputs {
        for (index, line) in input.text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = format!("{}:{}", input.name, index + 1);
            match serde_json::from_str::<Value>(line) {
                Ok(value) => values.push((at, value)),
                Err(error) => warnings.push(format!("{at}: skipped: not JSON ({error})")),
            }
        }
    }
    let mut exchanges = Vec::new();
    for (at, value) in &values {
        match (value.get("request"), value.get("response")) {
            (Some(request), Some(response)) => exchanges.push(Exchange { at: at.clone(), request, response }),
            _ => warnings
                .push(format!("{at}: skipped: not an exchange (expected an object with `request` and `response`)")),
        }
    }
    let format = match options.format {
        Some(format) => format,
        None => exchanges
            .iter()
            .find_map(|e| WireFormat::detect(e.request, e.response))
            .ok_or_else(|| no_exchange(&warnings, "no line looks like an exchange of a supported provider API"))?,
    };

    let mut log = TurnLog::new();
    let mut model = None;
    for exchange in &exchanges {
        let at = &exchange.at;
        if options.format.is_none()
            && let Some(other) = WireFormat::detect(exchange.request, exchange.response).filter(|f| *f != format)
        {
            warnings.push(format!(
                "{at}: skipped: looks like {} but earlier lines are {} (use --provider to force one)",
                other.name(),
                format.name()
            ));
            continue;
        }
        let response = match format.parse_response(exchange.response) {
            Ok(response) => Ok(response),
            Err(WireError::Api(error)) => Err(error),
            Err(WireError::Shape(what)) => {
                warnings.push(format!("{at}: skipped: not a {} response: {what}", format.name()));
                continue;
            }
        };
        // This request answered the response before it.
        log.answer(format.request_results(exchange.request));
        match response {
            Ok(response) => log.push_response(response),
            Err(error) => log.push_error(error),
        }
        model = model.or_else(|| {
            [exchange.request, exchange.response].iter().find_map(|v| v.get("model").and_then(Value::as_str))
        });
    }
    if log.is_empty() {
        return Err(no_exchange(&warnings, "no line holds a usable exchange"));
    }
    let mut provenance = json!({"source": "recorded", "provider": format.name()});
    if let Some(model) = model {
        provenance["model"] = model.into();
    }
    let turns = log.len();
    let mut cassette = cassette_document(&options.stage, provenance, log.into_turns());
    if let (Some(ctx), Some(document)) = (&options.ctx, cassette.as_object_mut()) {
        // Right after `stage:`, where a reader looks for it.
        let entries = std::mem::take(document);
        for (key, value) in entries {
            let after_stage = key == "stage";
            document.insert(key, value);
            if after_stage {
                document.insert("ctx".into(), ctx.clone());
            }
        }
    }
    let redacted = if options.redact { crate::template::secrets::redact_json(&mut cassette) } else { 0 };
    Ok(Imported { cassette, format, turns, redacted, warnings })
}

fn no_exchange(warnings: &[String], what: &str) -> String {
    let mut message = format!(
        "{what}; each line must be a JSON object {{\"request\": …, \"response\": …}} recorded from anthropic-messages, openai-chat or openai-responses"
    );
    for warning in warnings {
        message.push_str("\n  ");
        message.push_str(warning);
    }
    message
}

/// The stage a cassette is imported for, as `--stage` names it.
#[derive(Debug)]
pub struct ImportStage {
    pub id: String,
    /// The stage file, when found: its placeholders give the `ctx:` scaffold.
    pub file: Option<PathBuf>,
    /// `ctx:` with a `TODO` for each field the stage's body reads, when the stage was found.
    pub ctx: Option<Value>,
    /// The stage ids in scope of `--output` when none is `id`: a warning names them.
    pub others: Vec<String>,
}

/// Resolves `--stage`: a stage file (its id, and `ctx:` from its placeholders), or an id,
/// whose stage is looked up as a cassette's owner is (beside `output`, in its state machine).
pub fn import_stage(stage: &str, output: Option<&Path>) -> Result<ImportStage, String> {
    let named = Path::new(stage);
    let mut configs = ConfigCache::new(None);
    if named.is_file() {
        let path = absolute(named);
        let workspace = discover(std::slice::from_ref(&path), &mut configs).map_err(|e| e.to_string())?;
        let file = workspace
            .file_at(&path)
            .filter(|f| f.kind == FileKind::Stage)
            .ok_or_else(|| format!("{stage}: not a stage definition (`--stage` takes a stage id or a stage file)"))?;
        let doc = StageDoc::parse(file);
        let (id, _) = doc.stage_id().ok_or_else(|| format!("{stage}: the stage has no valid `id:`"))?;
        let (file, ctx) = (Some(named.to_path_buf()), Some(scaffold_ctx(&doc)));
        return Ok(ImportStage { id: id.to_string(), file, ctx, others: Vec::new() });
    }
    if named.extension().is_some_and(|e| e == "md") {
        return Err(format!("{stage}: no such stage file (`--stage` takes a stage id or a stage file)"));
    }
    let mut others = Vec::new();
    let found = output.and_then(|output| {
        let output = absolute(output);
        let dir = output.parent()?.to_path_buf();
        let workspace = discover(&[dir], &mut configs).ok()?;
        let in_scope = owners::stages_in_scope_of(&workspace, &output);
        let Some((_, file)) = in_scope.iter().find(|(id, _)| id == stage) else {
            others = in_scope.iter().map(|(id, _)| id.to_string()).collect();
            return None;
        };
        let doc = StageDoc::parse(file);
        Some((file.display.clone(), scaffold_ctx(&doc)))
    });
    Ok(match found {
        Some((file, ctx)) => {
            ImportStage { id: stage.to_string(), file: Some(PathBuf::from(file)), ctx: Some(ctx), others }
        }
        None => ImportStage { id: stage.to_string(), file: None, ctx: None, others },
    })
}

/// `ctx:` for a cassette of `stage`: each field its body reads (in the dialect it renders),
/// nested as the placeholder reads it, with `TODO` to fill in. Core-provided fields
/// (`upstream`, the ids) are left out: the runtime supplies them.
pub fn scaffold_ctx(stage: &StageDoc) -> Value {
    let dialect = stage.config().dialect;
    let mut ctx = Value::Object(serde_json::Map::new());
    for tag in stage.tags.iter().filter(|t| t.dialect == dialect) {
        let TagKind::Path(path) = &tag.kind else { continue };
        let Some((Segment::Field { name: root, .. }, rest)) = path.segments.split_first() else { continue };
        let Some(Segment::Field { name: field, .. }) = rest.first() else { continue };
        if root != "ctx" || CORE_CTX_FIELDS.contains(&field.as_str()) || matches!(field.as_str(), "attempts" | "host") {
            continue;
        }
        fill(&mut ctx, rest);
    }
    ctx
}

/// Makes `at` hold something at `path`: objects for fields, lists for indexes, `TODO` at the
/// end. A value already there stays (an object read both whole and by field stays an object).
fn fill(at: &mut Value, path: &[Segment]) {
    let Some((first, rest)) = path.split_first() else {
        if at.is_null() {
            *at = Value::from("TODO");
        }
        return;
    };
    match first {
        Segment::Field { name, .. } => {
            if !at.is_object() {
                *at = Value::Object(serde_json::Map::new());
            }
            let map = at.as_object_mut().expect("an object");
            fill(map.entry(name.to_string()).or_insert(Value::Null), rest);
        }
        Segment::Index { index, .. } => {
            if !at.is_array() {
                *at = Value::Array(Vec::new());
            }
            let items = at.as_array_mut().expect("a list");
            // A bound, so `{{ctx.x[100000]}}` cannot make a huge scaffold.
            let index = (*index).min(16);
            while items.len() <= index {
                items.push(Value::Null);
            }
            fill(&mut items[index], rest);
            for item in items.iter_mut().filter(|i| i.is_null()) {
                *item = Value::from("TODO");
            }
        }
    }
}
