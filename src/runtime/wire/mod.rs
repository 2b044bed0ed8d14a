//! The three provider wire formats, mapped to and from the neutral types of `provider`.
//!
//! Each adapter reads a response body into a [`Response`] (or the API error it reports), writes
//! a neutral [`Request`] as a request body, and reads the tool results a request body carries
//! (the importer uses those to fill a cassette's `results`). Nothing here does IO.

mod anthropic;
mod openai_chat;
mod openai_responses;

use serde_json::Value;

use crate::cassette::provider::{Block, ProviderError, Request, Response, Stop, ToolResult};

/// A provider API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireFormat {
    AnthropicMessages,
    OpenAiChat,
    OpenAiResponses,
}

/// Why a response body could not be read as a [`Response`].
#[derive(Debug, Clone, PartialEq)]
pub enum WireError {
    /// The body is the API's error report.
    Api(ProviderError),
    /// The body is not a response of this format; the text says what is missing.
    Shape(String),
}

/// `max_tokens` is required by Anthropic; this leaves room for a long completion payload.
pub const ANTHROPIC_MAX_TOKENS: u32 = 8192;

impl WireFormat {
    pub const ALL: [WireFormat; 3] =
        [WireFormat::AnthropicMessages, WireFormat::OpenAiChat, WireFormat::OpenAiResponses];

    /// The name used in cassettes (`provenance.provider`) and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            WireFormat::AnthropicMessages => "anthropic-messages",
            WireFormat::OpenAiChat => "openai-chat",
            WireFormat::OpenAiResponses => "openai-responses",
        }
    }

    pub fn parse(name: &str) -> Option<WireFormat> {
        WireFormat::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The endpoint path under the API's base URL.
    pub fn path(self) -> &'static str {
        match self {
            WireFormat::AnthropicMessages => "/v1/messages",
            WireFormat::OpenAiChat => "/v1/chat/completions",
            WireFormat::OpenAiResponses => "/v1/responses",
        }
    }

    /// Guesses the format of one recorded exchange. The response shape decides; an error body
    /// (which looks alike in both OpenAI APIs) falls back to the request's shape.
    pub fn detect(request: &Value, response: &Value) -> Option<WireFormat> {
        let object = response.get("object").and_then(Value::as_str);
        if response.get("choices").is_some() || object == Some("chat.completion") {
            return Some(WireFormat::OpenAiChat);
        }
        if response.get("output").is_some() || object == Some("response") {
            return Some(WireFormat::OpenAiResponses);
        }
        let kind = response.get("type").and_then(Value::as_str);
        if matches!(kind, Some("message" | "error")) || response.get("stop_reason").is_some() {
            return Some(WireFormat::AnthropicMessages);
        }
        if request.get("input").is_some() || request.get("instructions").is_some() {
            return Some(WireFormat::OpenAiResponses);
        }
        let messages = request.get("messages").and_then(Value::as_array)?;
        if request.get("system").is_some() {
            return Some(WireFormat::AnthropicMessages);
        }
        let chat_only = messages.iter().any(|m| {
            matches!(m.get("role").and_then(Value::as_str), Some("system" | "developer" | "tool"))
                || m.get("tool_calls").is_some()
        });
        chat_only.then_some(WireFormat::OpenAiChat)
    }

    /// Reads a response body.
    pub fn parse_response(self, body: &Value) -> Result<Response, WireError> {
        if !body.is_object() {
            return Err(WireError::Shape("a response body must be a JSON object".into()));
        }
        match self {
            WireFormat::AnthropicMessages => anthropic::parse_response(body),
            WireFormat::OpenAiChat => openai_chat::parse_response(body),
            WireFormat::OpenAiResponses => openai_responses::parse_response(body),
        }
    }

    /// The request body for `request`, non-streaming.
    pub fn request_body(self, request: &Request, model: &str) -> Value {
        match self {
            WireFormat::AnthropicMessages => anthropic::request_body(request, model),
            WireFormat::OpenAiChat => openai_chat::request_body(request, model),
            WireFormat::OpenAiResponses => openai_responses::request_body(request, model),
        }
    }

    /// The tool results a request body carries, in order (OpenAI has no error flag: `is_error` is false).
    pub fn request_results(self, body: &Value) -> Vec<ToolResult> {
        match self {
            WireFormat::AnthropicMessages => anthropic::request_results(body),
            WireFormat::OpenAiChat => openai_chat::request_results(body),
            WireFormat::OpenAiResponses => openai_responses::request_results(body),
        }
    }
}

/// Classifies an API error: overload, rate limits, timeouts and server faults are worth a retry
/// (`ProviderTransient`); everything else needs a change by someone (`ProviderCapability`).
pub fn api_error(code: &str, status: Option<u16>) -> ProviderError {
    let transient_code = matches!(
        code,
        "overloaded_error"
            | "rate_limit_error"
            | "api_error"
            | "timeout_error"
            | "rate_limit_exceeded"
            | "server_error"
    );
    let transient_status = matches!(status, Some(408 | 409 | 429 | 500..=599));
    let class = if transient_code || transient_status { "ProviderTransient" } else { "ProviderCapability" };
    ProviderError { class: class.into(), code: code.into() }
}

/// Reads `{"error": {"type"|"code": …}}` (both OpenAI APIs) or Anthropic's `{"type": "error", "error": {"type": …}}`.
pub(crate) fn error_body(body: &Value, status: Option<u16>) -> Option<ProviderError> {
    let error = body.get("error").filter(|e| e.is_object())?;
    let code = ["code", "type"]
        .iter()
        .find_map(|k| error.get(*k).and_then(Value::as_str).filter(|s| !s.is_empty()))
        .unwrap_or("unknown_error");
    Some(api_error(code, status))
}

/// A tool call from an arguments string: a JSON object becomes `args`, anything else `args_raw`.
/// An empty string means no arguments (some servers send it for tools without parameters).
fn call_from_text(id: &str, name: &str, arguments: &str) -> Block {
    let (args, args_raw) = if arguments.trim().is_empty() {
        (Some(Value::Object(Default::default())), None)
    } else {
        match serde_json::from_str::<Value>(arguments) {
            Ok(value @ Value::Object(_)) => (Some(value), None),
            _ => (None, Some(arguments.to_string())),
        }
    };
    Block::ToolCall(crate::cassette::provider::ToolCall { id: id.into(), name: name.into(), args, args_raw })
}

/// The arguments of a neutral call as the string OpenAI expects.
fn arguments_text(call: &crate::cassette::provider::ToolCall) -> String {
    match (&call.args, &call.args_raw) {
        (Some(args), _) => args.to_string(),
        (None, Some(raw)) => raw.clone(),
        (None, None) => "{}".into(),
    }
}

/// Text content as a string: a string as is, a list of parts as their `text` fields joined.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The tool results among `items`: those whose `field` is `value`, with the call id under `id` and
/// the text under `content` (an optional `is_error` flag is read where the API has one).
fn results_in<'a>(
    items: impl IntoIterator<Item = &'a Value>,
    (field, value): (&str, &str),
    id: &str,
    content: &str,
) -> Vec<ToolResult> {
    items
        .into_iter()
        .filter(|item| str_field(item, field) == Some(value))
        .filter_map(|item| {
            Some(ToolResult {
                call_id: str_field(item, id)?.into(),
                content: text_of(item.get(content).unwrap_or(&Value::Null)),
                is_error: item.get("is_error").and_then(Value::as_bool).unwrap_or(false),
            })
        })
        .collect()
}

/// The list under `key`, or nothing.
fn list<'a>(body: &'a Value, key: &str) -> &'a [Value] {
    body.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// When the body names no usable stop reason: calls mean the model wants them run.
fn inferred_stop(content: &[Block]) -> Stop {
    if content.iter().any(|b| matches!(b, Block::ToolCall(_))) { Stop::ToolUse } else { Stop::EndTurn }
}

/// The tools as OpenAI function definitions (`nested` for Chat's `{type, function: {…}}`).
fn openai_tools(request: &Request, nested: bool) -> Vec<Value> {
    request
        .tools
        .iter()
        .map(|t| {
            let function =
                serde_json::json!({"name": t.name, "description": t.description, "parameters": t.input_schema});
            if nested {
                serde_json::json!({"type": "function", "function": function})
            } else {
                let mut flat = serde_json::json!({"type": "function"});
                if let (Some(flat), Value::Object(fields)) = (flat.as_object_mut(), function) {
                    flat.extend(fields);
                }
                flat
            }
        })
        .collect()
}
