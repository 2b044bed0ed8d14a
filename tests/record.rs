//! The live provider (feature `record`) against a mock HTTP server on 127.0.0.1: request paths,
//! headers and body shapes per API, the neutral responses, errors, and recorder turns that the
//! importer reads back from the raw sidecar identically. Never touches the internet.
#![cfg(feature = "record")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex, mpsc};
use std::thread;

use serde_json::{Value, json};

use stagelint::runtime::import::{ImportOptions, Input, import};
use stagelint::runtime::provider::{Block, Message, Provider, Request, Stop, ToolCall, ToolResult, ToolSpec};
use stagelint::runtime::record::{LiveProvider, check_endpoint};
use stagelint::runtime::turns::Recorder;
use stagelint::runtime::wire::WireFormat;

/// What the mock saw of one request.
struct Seen {
    path: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Serves one canned `(status, body)` per connection, in order, then stops.
fn mock(replies: Vec<(u16, String)>) -> (String, mpsc::Receiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://127.0.0.1:{}", listener.local_addr().expect("addr").port());
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for (status, reply) in replies {
            let Ok((stream, _)) = listener.accept() else { return };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut line = String::new();
            reader.read_line(&mut line).expect("request line");
            let path = line.split_whitespace().nth(1).unwrap_or_default().to_string();
            let mut headers = Vec::new();
            loop {
                line.clear();
                reader.read_line(&mut line).expect("header");
                let Some((k, v)) = line.trim_end().split_once(':') else { break };
                headers.push((k.trim().to_string(), v.trim().to_string()));
            }
            let length = headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(0);
            let mut body = vec![0; length];
            reader.read_exact(&mut body).expect("body");
            let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let _ = tx.send(Seen { path, headers, body });
            let mut stream = stream;
            let head = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                reply.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    (base, rx)
}

#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn first_request() -> Request {
    Request {
        system: "Plan the refactor.".into(),
        tools: vec![ToolSpec {
            name: "Read".into(),
            description: "Read a file".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
        messages: vec![Message::User("Begin.".into())],
        attempt: 1,
        turn: 1,
    }
}

/// The runtime's second request: the first answer and its result appended.
fn second_request(first: &stagelint::runtime::provider::Response) -> Request {
    let mut request = first_request();
    let call = first.calls().next().expect("a call").id.clone();
    request.messages.push(Message::Assistant(first.content.clone()));
    request.messages.push(Message::ToolResults(vec![ToolResult {
        call_id: call,
        content: "pub mod token;\n".into(),
        is_error: false,
    }]));
    request.turn = 2;
    request
}

/// Runs two turns through a recorder and checks what every side saw.
fn two_turns(api: WireFormat, replies: [Value; 2], original_id: &str) -> Vec<Seen> {
    let (base, seen) = mock(replies.iter().map(|r| (200, r.to_string())).collect());
    let mut live = LiveProvider::new(&format!("{base}/v1/"), api, "test-model", Some("sk-test".into())).expect("local");
    let sink = Sink::default();
    live.keep_raw(Box::new(sink.clone()));
    let mut recorder = Recorder::new(live);

    let first = recorder.respond(&first_request()).expect("first turn");
    assert_eq!(first.stop, Stop::ToolUse);
    assert_eq!(
        first.content.last(),
        Some(&Block::ToolCall(ToolCall {
            id: original_id.into(),
            name: "Read".into(),
            args: Some(json!({"path": "src/auth/mod.rs"})),
            args_raw: None,
        }))
    );
    let second = recorder.respond(&second_request(&first)).expect("second turn");
    assert_eq!((second.stop, second.content), (Stop::EndTurn, vec![Block::Text("Done.".into())]));

    let turns = recorder.into_cassette_turns();
    assert_eq!(
        turns[0]["response"]["content"].as_array().and_then(|c| c.last()).map(|b| &b["toolCall"]["id"]),
        Some(&json!("c1"))
    );
    assert_eq!(turns[0]["results"], json!({"c1": {"content": "pub mod token;\n", "isError": false}}));
    let raw = String::from_utf8(sink.0.lock().expect("lock").clone()).expect("utf-8");
    assert_eq!(raw.lines().count(), 2);
    let imported = import(
        &[Input { name: "raw".into(), text: raw }],
        &ImportOptions { stage: "plan".into(), format: None, ctx: None, redact: true },
    )
    .expect("the sidecar imports");
    assert_eq!(imported.format, api);
    assert_eq!(imported.cassette["attempts"][0]["turns"], Value::Array(turns), "recorder and importer agree");
    assert!(!imported.cassette.to_string().contains("sk-test"), "no key in the cassette");

    let seen: Vec<Seen> = seen.try_iter().collect();
    assert_eq!(seen.len(), 2);
    for s in &seen {
        assert_eq!(s.path, api.path());
        assert_eq!(s.body["model"], "test-model");
    }
    seen
}

#[test]
fn anthropic_messages() {
    let use_read = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "stop_reason": "tool_use",
        "content": [{"type": "thinking", "thinking": "Look first.", "signature": "sig"}, {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "toolu_01X", "name": "Read", "input": {"path": "src/auth/mod.rs"}}]});
    let done = json!({"id": "msg_2", "type": "message", "role": "assistant", "stop_reason": "end_turn", "content": [{"type": "text", "text": "Done."}]});
    let seen = two_turns(WireFormat::AnthropicMessages, [use_read, done], "toolu_01X");
    assert_eq!(seen[0].header("x-api-key"), Some("sk-test"));
    assert_eq!(seen[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(seen[0].body["system"], "Plan the refactor.");
    assert!(seen[0].body["max_tokens"].as_u64().is_some());
    let messages = &seen[1].body["messages"];
    assert_eq!(messages[1]["content"].as_array().map(Vec::len), Some(2), "thinking is not sent back");
    assert_eq!(
        messages[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_01X", "content": "pub mod token;\n", "is_error": false})
    );
}

#[test]
fn openai_chat() {
    let use_read = json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-x", "choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "call_A1", "type": "function",
            "function": {"name": "Read", "arguments": "{\"path\": \"src/auth/mod.rs\"}"}}]}}]});
    let done = json!({"id": "chatcmpl-2", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "Done."}}]});
    let seen = two_turns(WireFormat::OpenAiChat, [use_read, done], "call_A1");
    assert_eq!(seen[0].header("authorization"), Some("Bearer sk-test"));
    assert_eq!(seen[0].body["messages"][0], json!({"role": "system", "content": "Plan the refactor."}));
    assert_eq!(seen[0].body["tools"][0]["type"], "function");
    let messages = &seen[1].body["messages"];
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_A1");
    assert_eq!(messages[3], json!({"role": "tool", "tool_call_id": "call_A1", "content": "pub mod token;\n"}));
}

#[test]
fn openai_responses() {
    let use_read = json!({"id": "resp_1", "object": "response", "status": "completed", "model": "o-x", "output": [
        {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Look first."}]},
        {"id": "fc_1", "type": "function_call", "call_id": "call_B2", "name": "Read", "arguments": "{\"path\":\"src/auth/mod.rs\"}"}]});
    let done = json!({"id": "resp_2", "object": "response", "status": "completed", "output": [
        {"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}]});
    let seen = two_turns(WireFormat::OpenAiResponses, [use_read, done], "call_B2");
    assert_eq!(seen[0].header("authorization"), Some("Bearer sk-test"));
    assert_eq!(seen[0].body["instructions"], "Plan the refactor.");
    let input = &seen[1].body["input"];
    assert_eq!(input[1]["type"], "function_call");
    assert_eq!(input[2], json!({"type": "function_call_output", "call_id": "call_B2", "output": "pub mod token;\n"}));
}

#[test]
fn http_and_api_errors_become_provider_errors() {
    let (base, _seen) = mock(vec![
        (
            429,
            json!({"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}}).to_string(),
        ),
        (400, json!({"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}).to_string()),
        (503, "<html>unavailable</html>".into()),
        (200, "{\"not\": \"a response\"}".into()),
    ]);
    let mut live = LiveProvider::new(&base, WireFormat::OpenAiChat, "m", None).expect("local");
    let errors: Vec<(String, String)> =
        (0..4).map(|_| live.respond(&first_request()).expect_err("an error")).map(|e| (e.class, e.code)).collect();
    let pair = |c: &str, k: &str| (c.to_string(), k.to_string());
    assert_eq!(
        errors,
        [
            pair("ProviderTransient", "rate_limit_exceeded"),
            pair("ProviderCapability", "invalid_request_error"),
            pair("ProviderTransient", "http_503"),
            pair("ProviderCapability", "unexpected_response"),
        ]
    );
    // A port nothing listens on.
    let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
    let mut nobody =
        LiveProvider::new(&format!("http://127.0.0.1:{port}"), WireFormat::OpenAiChat, "m", None).expect("local");
    let closed = nobody.respond(&first_request()).expect_err("refused");
    assert_eq!((closed.class.as_str(), closed.code.as_str()), ("ProviderTransient", "connection_failed"));
}

#[test]
fn ci_allows_only_this_machine() {
    assert!(check_endpoint("https://api.anthropic.com", false).is_ok());
    let refused = check_endpoint("https://api.anthropic.com", true).expect_err("refused in CI");
    assert!(refused.contains("CI is set"), "{refused}");
    for local in ["http://127.0.0.1:8080", "http://localhost/v1", "http://[::1]:9000"] {
        assert!(check_endpoint(local, true).is_ok(), "{local}");
    }
    assert!(check_endpoint("api.openai.com", false).expect_err("no scheme").contains("http://"));
    assert!(check_endpoint("http://", false).is_err());
}

/// `stagelint dry-run --record` end to end: a stage run against the mock, written as a
/// cassette, which then replays green under `--strict`.
#[test]
fn the_cli_records_a_cassette_that_replays_green() {
    let dir = tempfile::tempdir().expect("temp dir");
    let stage = dir.path().join("plan.md");
    std::fs::write(
        &stage,
        "---\nid: plan\nname: Plan\nallowedTools: [Read]\ncompletionTool: submit_plan\ncompletionSchema: { type: object, required: [summary], properties: { summary: { type: string } } }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\n---\nPlan. Call `submit_plan`.\n",
    )
    .expect("write");
    let read = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "toolu_A", "name": "Read", "input": {"path": "src/lib.rs"}}]});
    let done = json!({"id": "msg_2", "type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "toolu_B", "name": "submit_plan", "input": {"summary": "s"}}]});
    let (base, seen) = mock(vec![(200, read.to_string()), (200, done.to_string())]);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_stagelint"))
        .args(["dry-run", "--record", "--endpoint", &base, "--api", "anthropic-messages", "--model", "m"])
        .arg(&stage)
        .output()
        .expect("runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let first = seen.recv().expect("a request");
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(first.body["tools"][1]["name"], "submit_plan", "the completion tool is offered: {}", first.body);
    let cassette = std::fs::read_to_string(dir.path().join("plan.cassette.yaml")).expect("written beside the stage");
    assert!(cassette.contains("id: c1") && cassette.contains("name: Read"), "{cassette}");
    assert!(cassette.contains("TODO: recorded without running `Read`"), "{cassette}");
    let replay = std::process::Command::new(env!("CARGO_BIN_EXE_stagelint"))
        .args(["dry-run", "--strict"])
        .arg(&stage)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&replay.stdout);
    assert!(replay.status.success(), "{stdout}");
    assert!(stdout.contains("expectations 2/2"), "{stdout}");
}

/// Issue 19: a live recording redacts secrets by default and says how many, and the redacted
/// cassette replays green under `--strict` (no `RequestDrift`: fingerprints hash redacted
/// text); `--no-redact` keeps them and warns.
#[test]
fn the_cli_redacts_secrets_in_a_recording_unless_told_not_to() {
    const KEY: &str = "sk-ant-api03-Qx7fK2mZp9LwR4tYb8NcV1sD6hJ3gE5uA0oIxMzWqRkTyUiOpLk";
    let dir = tempfile::tempdir().expect("temp dir");
    let stage = dir.path().join("plan.md");
    std::fs::write(
        &stage,
        "---\nid: plan\nname: Plan\nallowedTools: [Read]\ncompletionTool: submit_plan\ncompletionSchema: { type: object, required: [summary], properties: { summary: { type: string } } }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\n---\nPlan. Call `submit_plan`.\n",
    )
    .expect("write");
    let read = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use",
        "content": [{"type": "text", "text": format!("The key is {KEY}.")},
                    {"type": "tool_use", "id": "toolu_A", "name": "Read", "input": {"path": "src/lib.rs", "auth": KEY}}]});
    let done = json!({"id": "msg_2", "type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "toolu_B", "name": "submit_plan", "input": {"summary": "s"}}]});
    let record = |extra: &[&str], out: &str| {
        let (base, _seen) = mock(vec![(200, read.to_string()), (200, done.to_string())]);
        std::process::Command::new(env!("CARGO_BIN_EXE_stagelint"))
            .args([
                "dry-run",
                "--record",
                "--endpoint",
                &base,
                "--api",
                "anthropic-messages",
                "--model",
                "m",
                "-o",
                out,
            ])
            .args(extra)
            .arg(&stage)
            .current_dir(dir.path())
            .output()
            .expect("runs")
    };
    let output = record(&[], "plan.cassette.yaml");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("stagelint: redacted 2 secret value(s)"), "{stderr}");
    let cassette = std::fs::read_to_string(dir.path().join("plan.cassette.yaml")).expect("written");
    assert!(!cassette.contains(KEY) && cassette.contains("«redacted:anthropic-key»"), "{cassette}");
    let replay = std::process::Command::new(env!("CARGO_BIN_EXE_stagelint"))
        .args(["dry-run", "--strict"])
        .arg(&stage)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&replay.stdout);
    assert!(replay.status.success(), "{stdout}");
    assert!(!stdout.contains("RequestDrift"), "{stdout}");

    let output = record(&["--no-redact"], "kept.yaml");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("stagelint: warning: --no-redact"), "{stderr}");
    assert!(std::fs::read_to_string(dir.path().join("kept.yaml")).expect("written").contains(KEY));
}
