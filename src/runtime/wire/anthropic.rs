//! Anthropic Messages (`POST /v1/messages`).

use serde_json::{Value, json};

use super::{ANTHROPIC_MAX_TOKENS, WireError, error_body, inferred_stop, list, results_in, str_field};
use crate::cassette::provider::{Block, Message, Request, Response, Stop, ToolCall, ToolResult};

pub(super) fn parse_response(body: &Value) -> Result<Response, WireError> {
    if let Some(error) = error_body(body, None) {
        return Err(WireError::Api(error));
    }
    let blocks = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| WireError::Shape("an Anthropic message needs a `content` list".into()))?;
    let mut content = Vec::new();
    for block in blocks {
        match str_field(block, "type") {
            Some("text") => content.push(Block::Text(str_field(block, "text").unwrap_or_default().into())),
            Some("thinking") => content.push(Block::Thinking(str_field(block, "thinking").unwrap_or_default().into())),
            Some("tool_use") => {
                let (Some(id), Some(name)) = (str_field(block, "id"), str_field(block, "name")) else {
                    return Err(WireError::Shape("a `tool_use` block needs an `id` and a `name`".into()));
                };
                let input = block.get("input").cloned().unwrap_or(Value::Null);
                let (args, args_raw) = match input {
                    Value::Object(_) => (Some(input), None),
                    other => (None, Some(other.to_string())),
                };
                content.push(Block::ToolCall(ToolCall { id: id.into(), name: name.into(), args, args_raw }));
            }
            // `redacted_thinking` and server-tool blocks carry nothing the runtime acts on.
            _ => {}
        }
    }
    let stop = match str_field(body, "stop_reason") {
        Some("end_turn" | "stop_sequence" | "pause_turn") => Stop::EndTurn,
        Some("tool_use") => Stop::ToolUse,
        Some("max_tokens" | "model_context_window_exceeded") => Stop::MaxTokens,
        Some("refusal") => Stop::Refusal,
        _ => inferred_stop(&content),
    };
    Ok(Response { stop, content })
}

pub(super) fn request_body(request: &Request, model: &str) -> Value {
    let mut messages: Vec<Value> = Vec::new();
    for message in &request.messages {
        let (role, blocks): (&str, Vec<Value>) = match message {
            Message::User(text) => ("user", vec![json!({"type": "text", "text": text})]),
            Message::ToolResults(results) => (
                "user",
                results
                    .iter()
                    .map(|r| json!({"type": "tool_result", "tool_use_id": r.call_id, "content": r.content, "is_error": r.is_error}))
                    .collect(),
            ),
            // Thinking is not sent back: the recorded text has no signature, which the API requires.
            Message::Assistant(blocks) => ("assistant", blocks.iter().filter_map(assistant_block).collect()),
        };
        // Roles alternate: results and the user text after them share one user message.
        match messages.last_mut() {
            Some(last) if last["role"] == role => {
                if let Some(content) = last["content"].as_array_mut() {
                    content.extend(blocks);
                }
            }
            _ => messages.push(json!({"role": role, "content": blocks})),
        }
    }
    let mut body = json!({"model": model, "max_tokens": ANTHROPIC_MAX_TOKENS});
    if !request.system.is_empty() {
        body["system"] = request.system.clone().into();
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
    }
    body["messages"] = messages.into();
    body
}

fn assistant_block(block: &Block) -> Option<Value> {
    match block {
        Block::Text(text) => Some(json!({"type": "text", "text": text})),
        Block::Thinking(_) => None,
        // Unparseable arguments cannot be sent as `input`, which must be an object.
        Block::ToolCall(call) => Some(json!({
            "type": "tool_use",
            "id": call.id,
            "name": call.name,
            "input": call.args.clone().unwrap_or_else(|| json!({})),
        })),
    }
}

pub(super) fn request_results(body: &Value) -> Vec<ToolResult> {
    let blocks = list(body, "messages").iter().flat_map(|m| list(m, "content"));
    results_in(blocks, ("type", "tool_result"), "tool_use_id", "content")
}
