//! `stagelint cassette import`: recorded wire exchanges (JSON Lines) → a stage cassette.
//!
//! Each line is `{"request": …, "response": …}` in one provider's wire format, oldest first. A
//! line that is not such an exchange is skipped with a warning naming it; the input as a whole
//! is unusable only when no line is.

use serde_json::{Value, json};

use crate::runtime::turns::{TurnLog, cassette_document};
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
}

#[derive(Debug)]
pub struct Imported {
    pub cassette: Value,
    pub format: WireFormat,
    pub turns: usize,
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
    let cassette = cassette_document(&options.stage, provenance, log.into_turns());
    Ok(Imported { cassette, format, turns, warnings })
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
