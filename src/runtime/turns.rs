//! Neutral cassette turns, from recorded exchanges or a live run.
//!
//! Call ids become `c1, c2, …` in the order the model emitted them (the same original id always
//! gets the same name), and a call's result, found in a later request, goes into its turn's
//! `results` so the cassette replays without any real tool.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::runtime::provider::{Block, Message, Provider, ProviderError, Request, Response, ToolResult};

/// Collects turns and results, then writes them in cassette form.
#[derive(Debug, Default)]
pub struct TurnLog {
    turns: Vec<Result<Response, ProviderError>>,
    ids: HashMap<String, String>,
    /// Results by original call id; the first one seen wins (later requests repeat the history).
    results: HashMap<String, ToolResult>,
}

impl TurnLog {
    pub fn new() -> TurnLog {
        TurnLog::default()
    }

    pub fn push_response(&mut self, response: Response) {
        for call in response.calls() {
            let next = format!("c{}", self.ids.len() + 1);
            self.ids.entry(call.id.clone()).or_insert(next);
        }
        self.turns.push(Ok(response));
    }

    pub fn push_error(&mut self, error: ProviderError) {
        self.turns.push(Err(error));
    }

    pub fn add_results(&mut self, results: impl IntoIterator<Item = ToolResult>) {
        for result in results {
            self.results.entry(result.call_id.clone()).or_insert(result);
        }
    }

    pub fn len(&self) -> usize {
        self.turns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    /// The turns as cassette values: `{response, results?}` or `{error: {class, code}}`.
    pub fn into_turns(self) -> Vec<Value> {
        let TurnLog { turns, ids, results } = self;
        turns
            .into_iter()
            .map(|turn| match turn {
                Err(error) => json!({"error": {"class": error.class, "code": error.code}}),
                Ok(mut response) => {
                    let mut found = Map::new();
                    for block in &mut response.content {
                        if let Block::ToolCall(call) = block {
                            let name = ids.get(&call.id).cloned().unwrap_or_else(|| call.id.clone());
                            if let Some(result) = results.get(&call.id) {
                                found.insert(
                                    name.clone(),
                                    json!({"content": result.content, "isError": result.is_error}),
                                );
                            }
                            call.id = name;
                        }
                    }
                    let mut turn = json!({"response": response.to_cassette_json()});
                    if !found.is_empty() {
                        turn["results"] = Value::Object(found);
                    }
                    turn
                }
            })
            .collect()
    }
}

/// A whole cassette holding one attempt. `provenance` is written as given (`source`, `provider`, `model`).
pub fn cassette_document(stage: &str, provenance: Value, turns: Vec<Value>) -> Value {
    json!({
        "cassette": 1,
        "stage": stage,
        "provenance": provenance,
        "attempts": [{"attempt": 1, "turns": turns}],
    })
}

/// Forwards to `inner` and keeps every exchange, so a run can be saved as a cassette.
pub struct Recorder<P> {
    inner: P,
    exchanges: Vec<(Request, Result<Response, ProviderError>)>,
}

impl<P: Provider> Recorder<P> {
    pub fn new(inner: P) -> Recorder<P> {
        Recorder { inner, exchanges: Vec::new() }
    }

    pub fn inner(&self) -> &P {
        &self.inner
    }

    /// The recorded exchanges, oldest first.
    pub fn exchanges(&self) -> &[(Request, Result<Response, ProviderError>)] {
        &self.exchanges
    }

    /// The turns in cassette form, results taken from the requests that followed each call.
    pub fn into_cassette_turns(self) -> Vec<Value> {
        let mut log = TurnLog::new();
        for (request, outcome) in self.exchanges {
            for message in request.messages {
                if let Message::ToolResults(results) = message {
                    log.add_results(results);
                }
            }
            match outcome {
                Ok(response) => log.push_response(response),
                Err(error) => log.push_error(error),
            }
        }
        log.into_turns()
    }
}

impl<P: Provider> Provider for Recorder<P> {
    fn respond(&mut self, request: &Request) -> Result<Response, ProviderError> {
        let outcome = self.inner.respond(request);
        self.exchanges.push((request.clone(), outcome.clone()));
        outcome
    }
}
