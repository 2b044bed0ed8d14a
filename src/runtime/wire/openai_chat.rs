//! OpenAI Chat Completions (`POST /v1/chat/completions`).

use serde_json::{Value, json};

use super::{
    WireError, arguments_text, call_from_text, error_body, inferred_stop, list, openai_tools, results_in, str_field,
    text_of,
};
use crate::cassette::provider::{Block, Message, Request, Response, Stop, ToolResult};

pub(super) fn parse_response(body: &Value) -> Result<Response, WireError> {
    if let Some(error) = error_body(body, None) {
        return Err(WireError::Api(error));
    }
    let choice = body
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| WireError::Shape("a chat completion needs a non-empty `choices` list".into()))?;
    let message = choice
        .get("message")
        .filter(|m| m.is_object())
        .ok_or_else(|| WireError::Shape("`choices[0]` needs a `message` object".into()))?;
    let mut content = Vec::new();
    // Not part of OpenAI's API, but compatible servers (DeepSeek, vLLM, OpenRouter) report reasoning here.
    for key in ["reasoning_content", "reasoning"] {
        if let Some(text) = str_field(message, key).filter(|t| !t.is_empty()) {
            content.push(Block::Thinking(text.into()));
            break;
        }
    }
    let text = text_of(message.get("content").unwrap_or(&Value::Null));
    if !text.is_empty() {
        content.push(Block::Text(text));
    }
    let refusal = str_field(message, "refusal").filter(|r| !r.is_empty());
    if let Some(refusal) = refusal {
        content.push(Block::Text(refusal.into()));
    }
    for call in list(message, "tool_calls") {
        let function = call.get("function").unwrap_or(&Value::Null);
        let (Some(id), Some(name)) = (str_field(call, "id"), str_field(function, "name")) else {
            return Err(WireError::Shape("a tool call needs an `id` and a `function.name`".into()));
        };
        content.push(call_from_text(id, name, str_field(function, "arguments").unwrap_or_default()));
    }
    let stop = match str_field(choice, "finish_reason") {
        _ if refusal.is_some() => Stop::Refusal,
        Some("stop") => Stop::EndTurn,
        Some("tool_calls" | "function_call") => Stop::ToolUse,
        Some("length") => Stop::MaxTokens,
        Some("content_filter") => Stop::Refusal,
        _ => inferred_stop(&content),
    };
    Ok(Response { stop, content })
}

pub(super) fn request_body(request: &Request, model: &str) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        match message {
            Message::User(text) => messages.push(json!({"role": "user", "content": text})),
            Message::Assistant(blocks) => messages.push(assistant_message(blocks)),
            // One `tool` message per call id; there is no error flag, the content says it.
            Message::ToolResults(results) => messages.extend(
                results.iter().map(|r| json!({"role": "tool", "tool_call_id": r.call_id, "content": r.content})),
            ),
        }
    }
    let mut body = json!({"model": model, "messages": messages});
    if !request.tools.is_empty() {
        body["tools"] = openai_tools(request, true).into();
    }
    body
}

fn assistant_message(blocks: &[Block]) -> Value {
    let text: Vec<&str> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    let calls: Vec<Value> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolCall(call) => Some(json!({
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": arguments_text(call)},
            })),
            _ => None,
        })
        .collect();
    let mut message =
        json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { text.join("\n").into() }});
    if !calls.is_empty() {
        message["tool_calls"] = calls.into();
    }
    message
}

pub(super) fn request_results(body: &Value) -> Vec<ToolResult> {
    results_in(list(body, "messages"), ("role", "tool"), "tool_call_id", "content")
}
