//! What the runtime sends a provider, as the cassette records it: the tool list, the request's
//! fingerprints, messages and provider events in the event stream.

use super::*;
use crate::template::secrets;

/// The tools offered to the model: allowed tools, then the stage-local completion tool.
pub fn tool_specs(stage: &StageSpec) -> Vec<ToolSpec> {
    let mut tools: Vec<ToolSpec> = stage
        .allowed_tools
        .iter()
        .map(|name| ToolSpec { name: name.clone(), description: String::new(), input_schema: json!({}) })
        .collect();
    tools.push(ToolSpec {
        name: stage.completion_tool.clone(),
        description: messages::completion_description(stage),
        input_schema: stage.completion_schema.clone(),
    });
    tools
}

/// The request's digests, by component. Each is taken over the redacted text (every secret
/// replaced by its placeholder, `template::secrets`), so a recording whose secrets were
/// redacted, by import, recording or the `cassette/SecretInRecording` fix, replays without drift.
pub fn fingerprints(request: &Request) -> BTreeMap<&'static str, Json> {
    let mut tools = Json::Array(
        request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema}))
            .collect(),
    );
    let mut messages = Json::Array(request.messages.iter().map(message_json).collect());
    secrets::redact_json(&mut tools);
    secrets::redact_json(&mut messages);
    BTreeMap::from([
        ("system", json!(fingerprint(&secrets::redact(&request.system).0))),
        ("tools", json!(fingerprint(&canonical(&tools)))),
        ("messages", json!(fingerprint(&canonical(&messages)))),
        ("count", json!(request.messages.len())),
    ])
}

fn message_json(message: &Message) -> Json {
    match message {
        Message::User(text) => json!({"role": "user", "text": text}),
        Message::Assistant(content) => {
            let response = Response { stop: crate::cassette::provider::Stop::EndTurn, content: content.clone() };
            json!({"role": "assistant", "content": response.to_cassette_json()["content"]})
        }
        Message::ToolResults(results) => json!({
            "role": "tool",
            "results": results.iter().map(|r| json!({"callId": r.call_id, "content": r.content, "isError": r.is_error})).collect::<Vec<_>>(),
        }),
    }
}

pub(super) fn provider_event(attempt: u32, turn: usize, response: &Response) -> Json {
    let text: Vec<&str> = response
        .content
        .iter()
        .filter_map(|b| match b {
            Block::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    let calls: Vec<Json> = response.calls().map(|c| json!({"id": c.id, "name": c.name})).collect();
    let mut event = json!({"attempt": attempt, "turn": turn, "stop": response.stop.as_str(), "toolCalls": calls});
    if !text.is_empty() {
        event["text"] = json!(text.join("\n"));
    }
    event
}
