//! Neutral cassette turns, from recorded exchanges or a live run.
//!
//! Call ids become `c1, c2, …` per occurrence, in the order the model emitted them (dryrun.md
//! §2.4), so a provider that reuses ids across responses (`call_0` in every OpenAI response)
//! still gives distinct calls. A call's result is the one the next request carries for it (the
//! request that answered that response), and goes into its turn's `results` so the cassette
//! replays without any real tool.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::cassette::provider::{Block, Message, Provider, ProviderError, Request, Response, ToolResult};

/// One logged turn: the model's answer, and the results found for its calls by new id.
#[derive(Debug)]
struct Logged {
    outcome: Result<Response, ProviderError>,
    /// The provider's id of each call, in order, beside the normalized one it got.
    ids: Vec<(String, String)>,
    results: Map<String, Value>,
}

/// Collects turns and results, then writes them in cassette form.
#[derive(Debug, Default)]
pub struct TurnLog {
    turns: Vec<Logged>,
    calls: usize,
}

impl TurnLog {
    pub fn new() -> TurnLog {
        TurnLog::default()
    }

    /// The next request of the exchange: the results it carries answer the calls of the last
    /// turn. A request repeats the whole history, so for a provider id used in several turns
    /// the last results with that id are the ones for this turn.
    pub fn answer(&mut self, results: impl IntoIterator<Item = ToolResult>) {
        let Some(last) = self.turns.last_mut() else { return };
        if !last.results.is_empty() || last.ids.is_empty() {
            return;
        }
        let mut by_id: HashMap<String, Vec<ToolResult>> = HashMap::new();
        for result in results {
            by_id.entry(result.call_id.clone()).or_default().push(result);
        }
        for (original, _) in &last.ids {
            let Some(found) = by_id.get_mut(original) else { continue };
            // The same id twice in one response: its results are the last ones, in order.
            let calls: Vec<&String> = last.ids.iter().filter(|(o, _)| o == original).map(|(_, n)| n).collect();
            let first = found.len().saturating_sub(calls.len());
            for (name, result) in calls.into_iter().zip(found.drain(first..)) {
                last.results.insert(name.clone(), json!({"content": result.content, "isError": result.is_error}));
            }
        }
    }

    pub fn push_response(&mut self, mut response: Response) {
        let mut ids = Vec::new();
        for block in &mut response.content {
            if let Block::ToolCall(call) = block {
                self.calls += 1;
                let name = format!("c{}", self.calls);
                ids.push((std::mem::replace(&mut call.id, name.clone()), name));
            }
        }
        self.turns.push(Logged { outcome: Ok(response), ids, results: Map::new() });
    }

    pub fn push_error(&mut self, error: ProviderError) {
        self.turns.push(Logged { outcome: Err(error), ids: Vec::new(), results: Map::new() });
    }

    pub fn len(&self) -> usize {
        self.turns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    /// The turns as cassette values: `{response, results?}` or `{error: {class, code}}`.
    pub fn into_turns(self) -> Vec<Value> {
        self.turns
            .into_iter()
            .map(|turn| match turn.outcome {
                Err(error) => json!({"error": {"class": error.class, "code": error.code}}),
                Ok(response) => {
                    let mut out = json!({"response": response.to_cassette_json()});
                    if !turn.results.is_empty() {
                        out["results"] = Value::Object(turn.results);
                    }
                    out
                }
            })
            .collect()
    }
}

/// A whole cassette. `provenance` is written as given (`source`, `provider`, `model`). A provider
/// `error:` turn ends Act on replay (Assert then retries or fails), so the turns after one start
/// the next attempt: the exchange that followed a provider error is what the next attempt asks for.
pub fn cassette_document(stage: &str, provenance: Value, turns: Vec<Value>) -> Value {
    let mut attempts: Vec<Vec<Value>> = vec![Vec::new()];
    for turn in turns {
        let ends_act = turn.get("error").is_some();
        attempts.last_mut().expect("one attempt at least").push(turn);
        if ends_act {
            attempts.push(Vec::new());
        }
    }
    if attempts.len() > 1 && attempts.last().is_some_and(Vec::is_empty) {
        attempts.pop();
    }
    let attempts: Vec<Value> =
        attempts.into_iter().enumerate().map(|(i, turns)| json!({"attempt": i + 1, "turns": turns})).collect();
    json!({
        "cassette": 1,
        "stage": stage,
        "provenance": provenance,
        "attempts": attempts,
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
            let results = request.messages.into_iter().filter_map(|message| match message {
                Message::ToolResults(results) => Some(results),
                _ => None,
            });
            log.answer(results.flatten());
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
