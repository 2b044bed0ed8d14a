//! The provider-neutral conversation the runtime has with a model.
//!
//! The runtime builds a [`Request`] per turn and asks a [`Provider`] for a [`Response`]. The
//! cassette replays recorded responses; the optional `record` feature talks to a live endpoint.
//! Wire formats (Anthropic Messages, OpenAI Chat, OpenAI Responses) map to and from these types;
//! nothing here knows HTTP.

use serde_json::Value;

/// What the runtime sends for one turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The rendered stage body.
    pub system: String,
    /// The tools offered this turn: the allowed tools plus the synthesized completion tool.
    pub tools: Vec<ToolSpec>,
    /// The transcript so far, oldest first.
    pub messages: Vec<Message>,
    /// 1-based attempt and turn within the attempt (for replay lookup and reports).
    pub attempt: u32,
    pub turn: u32,
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments (`{}` when the tool set does not say).
    pub input_schema: Value,
}

/// One transcript entry.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// Text from the runtime acting as the user: the task, steering, a retry reason.
    User(String),
    /// What the model said.
    Assistant(Vec<Block>),
    /// Results for the calls of the previous assistant message, one per call id.
    ToolResults(Vec<ToolResult>),
}

/// A result the runtime returns for one call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub call_id: String,
    pub content: String,
    pub is_error: bool,
}

/// One content block of a model response.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text(String),
    ToolCall(ToolCall),
    /// Reasoning text; recorded, ignored by Act.
    Thinking(String),
}

/// A tool call. `args` is `None` when the model's arguments are kept as the text it sent
/// (`args_raw`); text that is not JSON is a parse failure for the completion tool and an
/// error result for any other tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub args: Option<Value>,
    pub args_raw: Option<String>,
}

impl ToolCall {
    /// The arguments as JSON: `args`, else the `argsRaw` text parsed. Text that is not JSON, or
    /// not a JSON object (as the importer keeps it), cannot be run whatever the tool: the error
    /// says which (`not valid JSON`, `not a JSON object`).
    pub fn arguments(&self) -> Result<Value, &'static str> {
        match (&self.args, &self.args_raw) {
            (Some(args), _) => Ok(args.clone()),
            (None, Some(raw)) => match serde_json::from_str::<Value>(raw) {
                Ok(value) if value.is_object() => Ok(value),
                Ok(_) => Err("not a JSON object"),
                Err(_) => Err("not valid JSON"),
            },
            (None, None) => Ok(Value::Object(serde_json::Map::new())),
        }
    }

    /// The proposal's `argsDigest`: SHA-256 hex of the canonical arguments, or of the text as
    /// the model sent it when the call carries `argsRaw`.
    pub fn args_digest(&self) -> String {
        match (&self.args, &self.args_raw) {
            (None, Some(raw)) => crate::cassette::digest::raw_args_digest(raw),
            (args, _) => crate::cassette::digest::args_digest(args.as_ref().unwrap_or(&Value::Null)),
        }
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    EndTurn,
    ToolUse,
    MaxTokens,
    Refusal,
}

impl Stop {
    pub fn as_str(&self) -> &'static str {
        match self {
            Stop::EndTurn => "end_turn",
            Stop::ToolUse => "tool_use",
            Stop::MaxTokens => "max_tokens",
            Stop::Refusal => "refusal",
        }
    }

    pub fn parse(text: &str) -> Option<Stop> {
        Some(match text {
            "end_turn" => Stop::EndTurn,
            "tool_use" => Stop::ToolUse,
            "max_tokens" => Stop::MaxTokens,
            "refusal" => Stop::Refusal,
            _ => return None,
        })
    }
}

/// One model response.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub stop: Stop,
    pub content: Vec<Block>,
}

impl Response {
    pub fn calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|b| match b {
            Block::ToolCall(c) => Some(c),
            _ => None,
        })
    }

    /// The neutral cassette form of this response (`{stop, content: [{text}|{toolCall}|{thinking}]}`).
    pub fn to_cassette_json(&self) -> Value {
        let content: Vec<Value> = self
            .content
            .iter()
            .map(|block| match block {
                Block::Text(t) => serde_json::json!({ "text": t }),
                Block::Thinking(t) => serde_json::json!({ "thinking": t }),
                Block::ToolCall(c) => {
                    let mut call = serde_json::Map::new();
                    call.insert("id".into(), c.id.clone().into());
                    call.insert("name".into(), c.name.clone().into());
                    match (&c.args, &c.args_raw) {
                        (Some(args), _) => call.insert("args".into(), args.clone()),
                        (None, Some(raw)) => call.insert("argsRaw".into(), raw.clone().into()),
                        (None, None) => call.insert("args".into(), serde_json::json!({})),
                    };
                    serde_json::json!({ "toolCall": call })
                }
            })
            .collect();
        serde_json::json!({ "stop": self.stop.as_str(), "content": content })
    }
}

/// A provider failure (a cassette `error:` turn, or a live endpoint error).
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderError {
    /// `ProviderTransient` or `ProviderCapability`.
    pub class: String,
    pub code: String,
}

/// Answers model turns. Replay, recording and tests implement it.
pub trait Provider {
    fn respond(&mut self, request: &Request) -> Result<Response, ProviderError>;
}
