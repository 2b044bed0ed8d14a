//! OpenAI Responses (`POST /v1/responses`).

use serde_json::{Value, json};

use super::{
    WireError, api_error, arguments_text, call_from_text, error_body, list, openai_tools, results_in, str_field,
    text_of,
};
use crate::cassette::provider::{Block, Message, Request, Response, Stop, ToolResult};

pub(super) fn parse_response(body: &Value) -> Result<Response, WireError> {
    if let Some(error) = error_body(body, None) {
        return Err(WireError::Api(error));
    }
    if str_field(body, "status") == Some("failed") {
        return Err(WireError::Api(api_error("failed", None)));
    }
    let items = body
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| WireError::Shape("a response needs an `output` list".into()))?;
    let mut content = Vec::new();
    let mut refused = false;
    for item in items {
        match str_field(item, "type") {
            Some("message") => {
                for part in list(item, "content") {
                    match str_field(part, "type") {
                        Some("output_text") => {
                            content.push(Block::Text(str_field(part, "text").unwrap_or_default().into()))
                        }
                        Some("refusal") => {
                            refused = true;
                            content.push(Block::Text(str_field(part, "refusal").unwrap_or_default().into()));
                        }
                        _ => {}
                    }
                }
            }
            Some("function_call") => {
                // `call_id` is what `function_call_output` answers; `id` (`fc_…`) is the item's own.
                let id = str_field(item, "call_id").or_else(|| str_field(item, "id"));
                let (Some(id), Some(name)) = (id, str_field(item, "name")) else {
                    return Err(WireError::Shape("a `function_call` item needs a `call_id` and a `name`".into()));
                };
                content.push(call_from_text(id, name, str_field(item, "arguments").unwrap_or_default()));
            }
            Some("reasoning") => {
                // Summaries and reasoning text when the API returns them; encrypted content is dropped.
                let text: Vec<String> = ["summary", "content"]
                    .iter()
                    .filter_map(|k| item.get(*k))
                    .map(text_of)
                    .filter(|t| !t.is_empty())
                    .collect();
                if !text.is_empty() {
                    content.push(Block::Thinking(text.join("\n")));
                }
            }
            _ => {}
        }
    }
    let incomplete = body.get("incomplete_details").and_then(|d| str_field(d, "reason"));
    let stop = match (str_field(body, "status"), incomplete) {
        (_, Some("content_filter")) => Stop::Refusal,
        (Some("incomplete"), _) | (_, Some(_)) => Stop::MaxTokens,
        _ if refused => Stop::Refusal,
        _ if content.iter().any(|b| matches!(b, Block::ToolCall(_))) => Stop::ToolUse,
        _ => Stop::EndTurn,
    };
    Ok(Response { stop, content })
}

pub(super) fn request_body(request: &Request, model: &str) -> Value {
    let mut input = Vec::new();
    for message in &request.messages {
        match message {
            Message::User(text) => input.push(json!({"role": "user", "content": text})),
            // Reasoning items cannot be replayed without their ids and encrypted content: dropped.
            Message::Assistant(blocks) => input.extend(blocks.iter().filter_map(|b| match b {
                Block::Text(text) => Some(json!({"role": "assistant", "content": text})),
                Block::ToolCall(call) => Some(json!({
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": arguments_text(call),
                })),
                Block::Thinking(_) => None,
            })),
            Message::ToolResults(results) => input.extend(
                results
                    .iter()
                    .map(|r| json!({"type": "function_call_output", "call_id": r.call_id, "output": r.content})),
            ),
        }
    }
    let mut body = json!({"model": model});
    if !request.system.is_empty() {
        body["instructions"] = request.system.clone().into();
    }
    if !request.tools.is_empty() {
        body["tools"] = openai_tools(request, false).into();
    }
    body["input"] = input.into();
    body
}

pub(super) fn request_results(body: &Value) -> Vec<ToolResult> {
    results_in(list(body, "input"), ("type", "function_call_output"), "call_id", "output")
}
