//! `cassette import`: wire adapters, id normalisation, results from later requests, the YAML
//! writer's round trip through the project's own reader, and the CLI end to end.

use std::path::Path;
use std::process::{Command, Stdio};

use proptest::prelude::*;
use serde_json::{Value, json};

use stagelint::runtime::import::{ImportOptions, Imported, Input, import};
use stagelint::runtime::provider::{Block, Message, Request, Stop, ToolCall, ToolResult, ToolSpec};
use stagelint::runtime::wire::WireFormat;
use stagelint::source::yaml_write::to_yaml;

// Not under tests/fixtures/, whose folders are rule families (tests/rules.rs).
const DIR: &str = "tests/exchanges";

fn fixture(name: &str) -> Input {
    let path = Path::new(DIR).join(name);
    Input { name: name.into(), text: std::fs::read_to_string(&path).expect("fixture") }
}

fn import_fixture(name: &str, format: Option<WireFormat>) -> Imported {
    import(&[fixture(name)], &ImportOptions { stage: "plan".into(), format, ctx: None, redact: true })
        .expect("importable")
}

fn turns(imported: &Imported) -> &Vec<Value> {
    imported.cassette["attempts"][0]["turns"].as_array().expect("turns")
}

/// Every turn, across the attempts (a provider error ends one).
fn all_turns(imported: &Imported) -> Vec<Value> {
    let attempts = imported.cassette["attempts"].as_array().expect("attempts");
    attempts.iter().flat_map(|a| a["turns"].as_array().expect("turns").clone()).collect()
}

/// The YAML reads back, with the project's own reader, to exactly the cassette value.
fn yaml_round_trip(value: &Value) -> String {
    let yaml = to_yaml(value);
    let parsed = stagelint::source::yaml::parse(&yaml);
    assert!(parsed.errors.is_empty(), "{:?}\n{yaml}", parsed.errors);
    assert_eq!(&parsed.root.expect("a document").to_json(), value, "\n{yaml}");
    yaml
}

#[test]
fn snapshots_of_every_fixture() {
    for (name, format) in [
        ("anthropic.jsonl", WireFormat::AnthropicMessages),
        ("anthropic-stops.jsonl", WireFormat::AnthropicMessages),
        ("openai-chat.jsonl", WireFormat::OpenAiChat),
        ("openai-chat-stops.jsonl", WireFormat::OpenAiChat),
        ("openai-responses.jsonl", WireFormat::OpenAiResponses),
        ("openai-responses-stops.jsonl", WireFormat::OpenAiResponses),
    ] {
        let imported = import_fixture(name, None);
        assert_eq!(imported.format, format, "{name} detected");
        assert!(imported.warnings.is_empty(), "{name}: {:?}", imported.warnings);
        // Forcing the right format gives the same cassette.
        assert_eq!(import_fixture(name, Some(format)).cassette, imported.cassette, "{name} forced");
        let yaml = yaml_round_trip(&imported.cassette);
        insta::assert_snapshot!(name.trim_end_matches(".jsonl"), yaml);
    }
}

#[test]
fn ids_are_renamed_in_emission_order_across_the_cassette() {
    let imported = import_fixture("anthropic.jsonl", None);
    let ids: Vec<&str> = turns(&imported)
        .iter()
        .flat_map(|t| t["response"]["content"].as_array().into_iter().flatten())
        .filter_map(|block| block["toolCall"]["id"].as_str())
        .collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4"]);
    let yaml = to_yaml(&imported.cassette);
    assert!(!yaml.contains("toolu_"), "an original id is left:\n{yaml}");
}

#[test]
fn a_reused_provider_id_is_one_call_per_occurrence_answered_by_the_next_request() {
    // dryrun.md §2.4: "c1, c2, … per cassette, in emission order". The provider sends `call_0`
    // in all four responses; each request answers the response before it.
    let imported = import_fixture("openai-chat-reused-ids.jsonl", None);
    let t = turns(&imported);
    let ids: Vec<&str> =
        t.iter().map(|t| t["response"]["content"][0]["toolCall"]["id"].as_str().unwrap_or("")).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4"]);
    let results: Vec<Value> = t.iter().map(|t| t.get("results").cloned().unwrap_or(Value::Null)).collect();
    assert_eq!(
        results,
        [
            json!({"c1": {"content": "first", "isError": false}}),
            json!({"c2": {"content": "second", "isError": false}}),
            json!({"c3": {"content": "third", "isError": false}}),
            Value::Null,
        ]
    );
    // The imported cassette replays: no duplicate ids, each call gets its own result.
    let dir = tempfile::tempdir().expect("temp dir");
    let stage = "---\nid: plan\nname: Plan\nallowedTools: [Read]\ncompletionTool: submit_plan\ncompletionSchema: { type: object, required: [summary] }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\n---\nPlan. Call `submit_plan`.\n";
    std::fs::write(dir.path().join("plan.md"), stage).expect("write");
    std::fs::write(dir.path().join("plan.cassette.yaml"), to_yaml(&imported.cassette)).expect("write");
    let mut configs =
        stagelint::workspace::discover::ConfigCache::new(Some(stagelint::config::Config::defaults(dir.path())));
    let options = stagelint::runtime::Options { strict: false, explain_init: true };
    let (_, run) =
        stagelint::runtime::dry_run_path(&dir.path().join("plan.md"), None, options, &mut configs, &Default::default())
            .expect("runs");
    assert!(run.findings.is_empty(), "{:?}", run.findings);
    let sizes: Vec<u64> =
        run.trace.events.iter().filter(|e| e.name == "ToolCallSucceeded").map(|e| e.num("bytes")).collect();
    assert_eq!(sizes, [5, 6, 5], "first, second, third");
}

#[test]
fn results_come_from_later_requests() {
    let anthropic = import_fixture("anthropic.jsonl", None);
    let t = turns(&anthropic);
    assert_eq!(t[0]["results"], json!({"c1": {"content": "pub mod session;\npub mod token;\n", "isError": false}}));
    assert_eq!(t[1]["results"]["c2"]["content"], "src/auth/token.rs:12:    pub fn refresh(&mut self) -> Result<()> {");
    assert_eq!(t[1]["results"]["c3"], json!({"content": "No such file: src/auth/missing.rs", "isError": true}));
    // The last call was never answered: no `results` at all.
    assert!(t[3].get("results").is_none());

    let chat = import_fixture("openai-chat.jsonl", None);
    let t = turns(&chat);
    assert_eq!(t[0]["results"].as_object().map(|m| m.len()), Some(2));
    assert_eq!(t[0]["results"]["c2"]["content"], "pub struct Token { expires_at: Instant }\n");
    assert!(t[1]["results"]["c3"]["content"].as_str().is_some_and(|c| c.contains("not valid JSON")));

    let responses = import_fixture("openai-responses.jsonl", None);
    let t = turns(&responses);
    assert_eq!(t[0]["results"]["c1"]["content"], "src/auth/token.rs:12:    pub fn refresh(&mut self) -> Result<()> {");
    assert!(t[1]["results"]["c3"]["content"].as_str().is_some_and(|c| c.starts_with("/steps:")));
}

#[test]
fn invalid_arguments_are_kept_raw() {
    let chat = import_fixture("openai-chat.jsonl", None);
    let call = &turns(&chat)[1]["response"]["content"][1]["toolCall"];
    assert_eq!(call["argsRaw"], r#"{"summary": "Extract refresh", "steps": ["extract", "test""#);
    assert!(call.get("args").is_none());
    let responses = import_fixture("openai-responses.jsonl", None);
    let call = &turns(&responses)[2]["response"]["content"][0]["toolCall"];
    assert!(call["argsRaw"].as_str().is_some_and(|raw| raw.ends_with("\"add tests\"]")));
}

#[test]
fn stop_reasons_and_errors_map_per_the_table() {
    let stops = |name: &str| -> Vec<Value> {
        all_turns(&import_fixture(name, None))
            .iter()
            .map(|t| if t.get("error").is_some() { t["error"].clone() } else { t["response"]["stop"].clone() })
            .collect()
    };
    let transient = |code: &str| json!({"class": "ProviderTransient", "code": code});
    let capability = |code: &str| json!({"class": "ProviderCapability", "code": code});
    assert_eq!(
        stops("anthropic-stops.jsonl"),
        [
            json!("max_tokens"),
            json!("end_turn"),
            json!("refusal"),
            transient("overloaded_error"),
            capability("invalid_request_error")
        ]
    );
    assert_eq!(
        stops("openai-chat-stops.jsonl"),
        [json!("max_tokens"), json!("refusal"), json!("refusal"), json!("end_turn"), transient("rate_limit_exceeded")]
    );
    assert_eq!(
        stops("openai-responses-stops.jsonl"),
        [json!("max_tokens"), json!("refusal"), json!("refusal"), transient("server_error")]
    );
}

#[test]
fn hostile_lines_are_skipped_with_their_line_numbers() {
    let imported = import_fixture("hostile.jsonl", None);
    assert_eq!(imported.format, WireFormat::AnthropicMessages);
    let warnings: Vec<&str> = imported.warnings.iter().map(|w| w.split(": ").next().unwrap_or("")).collect();
    assert_eq!(
        warnings,
        [
            "hostile.jsonl:1",
            "hostile.jsonl:9",
            "hostile.jsonl:3",
            "hostile.jsonl:4",
            "hostile.jsonl:6",
            "hostile.jsonl:7",
            "hostile.jsonl:8"
        ],
        "{:#?}",
        imported.warnings
    );
    assert!(imported.warnings[0].contains("not JSON"));
    assert!(imported.warnings[4].contains("looks like openai-chat"));
    assert!(imported.warnings[6].contains("needs an `id`"));
    // Line 5 and line 10 (whose `input` is not an object) remain.
    assert_eq!(imported.turns, 2);
    assert_eq!(turns(&imported)[1]["response"]["content"][0]["toolCall"]["argsRaw"], "\"src/a.rs\"");
}

#[test]
fn nothing_usable_is_an_error_that_says_what_a_line_must_be() {
    let error = import(
        &[Input { name: "in".into(), text: "nope\n{\"a\": 1}\n".into() }],
        &ImportOptions { stage: "s".into(), format: None, ctx: None, redact: true },
    )
    .expect_err("no exchange");
    assert!(error.contains("\"request\""), "{error}");
    assert!(error.contains("in:1: skipped: not JSON"), "{error}");
    assert!(error.contains("in:2: skipped: not an exchange"), "{error}");
}

fn sample_request() -> Request {
    Request {
        system: "Be brief.".into(),
        tools: vec![ToolSpec {
            name: "Read".into(),
            description: "Read a file".into(),
            input_schema: json!({"type": "object"}),
        }],
        messages: vec![
            Message::User("Start.".into()),
            Message::Assistant(vec![
                Block::Thinking("hidden".into()),
                Block::Text("Reading.".into()),
                Block::ToolCall(ToolCall {
                    id: "k1".into(),
                    name: "Read".into(),
                    args: Some(json!({"path": "a"})),
                    args_raw: None,
                }),
                Block::ToolCall(ToolCall {
                    id: "k2".into(),
                    name: "Read".into(),
                    args: None,
                    args_raw: Some("{bad".into()),
                }),
            ]),
            Message::ToolResults(vec![
                ToolResult { call_id: "k1".into(), content: "A".into(), is_error: false },
                ToolResult { call_id: "k2".into(), content: "bad arguments".into(), is_error: true },
            ]),
            Message::User("Go on.".into()),
        ],
        attempt: 1,
        turn: 2,
    }
}

#[test]
fn request_bodies_follow_each_apis_rules() {
    let request = sample_request();
    let anthropic = WireFormat::AnthropicMessages.request_body(&request, "m");
    assert_eq!(anthropic["system"], "Be brief.");
    assert_eq!(anthropic["tools"][0]["input_schema"], json!({"type": "object"}));
    let messages = anthropic["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 3, "results and the next user text share one user message");
    assert_eq!(messages[1]["content"].as_array().map(Vec::len), Some(3), "thinking is not sent back");
    assert_eq!(messages[1]["content"][2]["input"], json!({}));
    assert_eq!(messages[2]["content"][0]["type"], "tool_result");
    assert_eq!(messages[2]["content"][1]["is_error"], true);
    assert_eq!(messages[2]["content"][2], json!({"type": "text", "text": "Go on."}));

    let chat = WireFormat::OpenAiChat.request_body(&request, "m");
    let roles: Vec<&str> =
        chat["messages"].as_array().into_iter().flatten().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "tool", "user"]);
    assert_eq!(chat["messages"][2]["tool_calls"][1]["function"]["arguments"], "{bad");
    assert_eq!(chat["messages"][2]["tool_calls"][0]["function"]["arguments"], r#"{"path":"a"}"#);
    assert_eq!(chat["tools"][0]["function"]["parameters"], json!({"type": "object"}));

    let responses = WireFormat::OpenAiResponses.request_body(&request, "m");
    assert_eq!(responses["instructions"], "Be brief.");
    let kinds: Vec<&str> = responses["input"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| i["type"].as_str().or(i["role"].as_str()).unwrap_or("?"))
        .collect();
    assert_eq!(
        kinds,
        ["user", "assistant", "function_call", "function_call", "function_call_output", "function_call_output", "user"]
    );
    assert_eq!(
        responses["tools"][0],
        json!({"type": "function", "name": "Read", "description": "Read a file", "parameters": {"type": "object"}})
    );

    // Every format reads its own results back (OpenAI has no error flag).
    for format in WireFormat::ALL {
        let results = format.request_results(&format.request_body(&request, "m"));
        let ids: Vec<(&str, &str)> = results.iter().map(|r| (r.call_id.as_str(), r.content.as_str())).collect();
        assert_eq!(ids, [("k1", "A"), ("k2", "bad arguments")], "{}", format.name());
        assert_eq!(results[1].is_error, format == WireFormat::AnthropicMessages);
    }
}

#[test]
fn parsed_responses_keep_thinking_text_and_calls_in_order() {
    let imported = import_fixture("openai-responses.jsonl", None);
    let first = &turns(&imported)[0]["response"];
    assert_eq!(first["stop"], "tool_use");
    assert_eq!(
        first["content"][0]["thinking"],
        "**Finding refresh**\n\nI need the refresh function and the token type."
    );
    assert_eq!(first["content"][2]["toolCall"]["args"], json!({"path": "src/auth/token.rs"}));
    let direct = WireFormat::AnthropicMessages
        .parse_response(&json!({"content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"}))
        .expect("a response");
    assert_eq!((direct.stop, direct.content), (Stop::EndTurn, vec![Block::Text("hi".into())]));
}

// ---- the YAML writer ----

#[test]
fn awkward_strings_round_trip() {
    let strings = [
        "yes",
        "No",
        "NULL",
        "~",
        "true",
        "1.0",
        "1e3",
        "0x1F",
        ".inf",
        "-.5",
        "+1",
        "-",
        "- item",
        "key: value",
        "#comment",
        "a #b",
        "trailing:",
        "'single'",
        "\"double\"",
        "[list]",
        "{map}",
        "*alias",
        "&anchor",
        "!tag",
        "%directive",
        "@at",
        "`tick`",
        "|pipe",
        ">fold",
        "?q",
        " lead",
        "trail ",
        "",
        "tab\tin",
        "cr\r\nlf",
        "line\n",
        "two\n\n",
        "\nlead\nbreak",
        "  indented\nblock",
        "a\n  b\n",
        "ends\n\n\n",
        "spaces\n   \nline",
        "del\u{7f}",
        "nel\u{85}x",
        "bom\u{feff}",
        "ls\u{2028}ps",
        "ünïcødé 😀",
        "null\nnull",
        "---",
        "...",
        "<<",
        "=",
        "multi\nline # not a comment\n- not a list",
    ];
    let value = Value::Object(strings.iter().map(|s| ((*s).to_string(), json!([s, {"v": s}]))).collect());
    yaml_round_trip(&value);
    for s in strings {
        yaml_round_trip(&json!(s));
    }
}

#[test]
fn scalars_and_empty_collections_round_trip() {
    yaml_round_trip(&json!({"i": -7, "f": 1.5, "big": 1e300, "small": -2.5e-8, "zero": 0.0, "t": true, "n": null,
        "e": {}, "l": [], "nested": [[], [{}], [[1]]]}));
    yaml_round_trip(&json!([]));
    yaml_round_trip(&json!({}));
    yaml_round_trip(&json!(null));
    let long_key = "k".repeat(1500);
    yaml_round_trip(&json!({ long_key: {"a": 1}, "after": 2 }));
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        "\\PC*".prop_map(Value::String),
        "[ -~\\n\\t\u{85}\u{2028}]{0,12}".prop_map(Value::String),
        prop::sample::select(vec!["yes", "null", "1.0", "- x", "a: b", "#", "\n", " \n", "x\n"]).prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(("[ -~\\n]{0,8}", inner), 0..5)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn any_value_round_trips(value in arb_json()) {
        let yaml = to_yaml(&value);
        let parsed = stagelint::source::yaml::parse(&yaml);
        prop_assert!(parsed.errors.is_empty(), "{:?}\n{}", parsed.errors, yaml);
        let back = parsed.root.map(|r| r.to_json());
        prop_assert_eq!(back.as_ref(), Some(&value), "\n{}", yaml);
    }
}

// ---- the CLI ----

fn stagelint() -> Command {
    Command::new(env!("CARGO_BIN_EXE_stagelint"))
}

#[test]
fn cli_writes_yaml_to_stdout_and_json_to_a_file() {
    let path = Path::new(DIR).join("openai-chat.jsonl");
    let output = stagelint().args(["cassette", "import", "--stage", "plan"]).arg(&path).output().expect("runs");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let yaml = String::from_utf8(output.stdout).expect("utf-8");
    assert_eq!(yaml, to_yaml(&import_fixture("openai-chat.jsonl", None).cassette));
    assert!(String::from_utf8_lossy(&output.stderr).contains("imported 3 turn(s) from openai-chat"));

    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("plan.cassette.json");
    let status = stagelint()
        .args(["cassette", "import", "--stage", "plan", "--format", "json", "--provider", "openai-chat", "-o"])
        .arg(&out)
        .arg(&path)
        .status()
        .expect("runs");
    assert_eq!(status.code(), Some(0));
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("written")).expect("json");
    assert_eq!(written, import_fixture("openai-chat.jsonl", None).cassette);
}

#[test]
fn cli_reads_stdin_and_warns_about_skipped_lines() {
    let text = std::fs::read_to_string(Path::new(DIR).join("hostile.jsonl")).expect("fixture");
    let mut child = stagelint()
        .args(["cassette", "import", "--stage", "plan", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), text.as_bytes()).expect("written");
    let output = child.wait_with_output().expect("exits");
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("stagelint: warning: -:1: skipped: not JSON"), "{stderr}");
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("cassette: 1\nstage: plan\n"));
}

#[test]
fn cli_exits_2_on_unusable_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    let garbage = dir.path().join("garbage.jsonl");
    std::fs::write(&garbage, "hello\n").expect("written");
    for args in [vec![garbage.display().to_string()], vec![dir.path().join("missing.jsonl").display().to_string()]] {
        let output = stagelint().args(["cassette", "import", "--stage", "plan"]).args(&args).output().expect("runs");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty());
        assert!(String::from_utf8_lossy(&output.stderr).starts_with("stagelint: "));
    }
    let output = stagelint()
        .args(["cassette", "import", "--stage", "plan", "--provider", "gemini", "x"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2), "clap rejects an unknown provider");
}

proptest! {
    /// Hostile exchanges (any JSON as request and response, in every format) never panic.
    #[test]
    fn any_exchange_is_handled(request in arb_json(), response in arb_json(), shaped in arb_json()) {
        for format in WireFormat::ALL {
            let _ = format.parse_response(&response);
            let _ = format.request_results(&request);
            // Plausible outer shapes with random insides reach deeper into the adapters.
            let _ = format.parse_response(&json!({"content": [shaped], "choices": [{"message": shaped}], "output": [shaped]}));
            let _ = format.request_results(&json!({"messages": [{"content": [shaped]}, shaped], "input": [shaped]}));
        }
        let text = format!("{}\n{}\n", json!({"request": request, "response": response}), json!({"request": shaped, "response": shaped}));
        if let Ok(imported) = import(&[Input { name: "p".into(), text }], &ImportOptions { stage: "s".into(), format: None, ctx: None, redact: true }) {
            yaml_round_trip(&imported.cassette);
        }
    }
}

/// A provider error ends Act on replay (a transient one retries), so the exchange after it is
/// the first turn of the next attempt: an imported recording of an overload followed by the
/// resent request replays green, with nothing exhausted or left over.
#[test]
fn a_provider_error_ends_the_attempt_so_the_imported_recording_replays() {
    let lines = [
        r#"{"request":{"model":"m","messages":[]},"response":{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}}"#,
        r#"{"request":{"model":"m","messages":[]},"response":{"type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"done","input":{"ok":true}}],"stop_reason":"tool_use"}}"#,
    ];
    let imported = import(
        &[Input { name: "in".into(), text: lines.join("\n") }],
        &ImportOptions { stage: "plan".into(), format: None, ctx: None, redact: true },
    )
    .expect("importable");
    let attempts = imported.cassette["attempts"].as_array().expect("attempts");
    assert_eq!(attempts.len(), 2, "{:#}", imported.cassette);
    assert_eq!(attempts[0]["turns"][0]["error"]["class"], "ProviderTransient");
    assert_eq!(attempts[1]["attempt"], 2);
    assert_eq!(attempts[1]["turns"][0]["response"]["content"][0]["toolCall"]["name"], "done");

    let dir = tempfile::tempdir().expect("tempdir");
    let stage = "---\nid: plan\nname: Plan\nallowedTools: []\ncompletionTool: done\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 2, backoff: none }\nturnCap: 2\nresolutionPolicy: retry-later\n---\nCall `done`.\n";
    std::fs::write(dir.path().join("plan.md"), stage).expect("written");
    std::fs::write(dir.path().join("plan.cassette.yaml"), to_yaml(&imported.cassette)).expect("written");
    let output =
        stagelint().args(["dry-run", "--format", "json"]).arg(dir.path().join("plan.md")).output().expect("runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(!stdout.contains("DryRunMismatch"), "{stdout}");
    assert!(stdout.contains(r#""event":"CompletionAccepted","stage":"plan","attempt":2"#), "{stdout}");
}

const CTX_STAGE: &str = "---\nid: plan\nname: Plan\nallowedTools: []\ncompletionTool: done\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 2\nresolutionPolicy: retry-later\n---\nPlan {{ctx.task}} on {{ctx.repo.branch}} ({{ctx.repo}}), files {{ctx.files[1]}}, after {{ctx.upstream[0].parsed.x}} in {{ctx.workflowRunId}}. Call `done`.\n";

/// `cassette import` with the stage (its file, or its id beside `--output`) scaffolds `ctx:`
/// from the placeholders the body reads, core fields left out; without it, it says so.
#[test]
fn cli_scaffolds_ctx_from_the_stage_or_says_it_did_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stage = dir.path().join("plan.md");
    std::fs::write(&stage, CTX_STAGE).expect("written");
    let input = Path::new(DIR).join("anthropic.jsonl");
    let expected = "cassette: 1\nstage: plan\nctx:\n  task: TODO\n  repo:\n    branch: TODO\n  files:\n    - TODO\n    - TODO\nprovenance:";

    let output = stagelint().args(["cassette", "import", "--stage"]).arg(&stage).arg(&input).output().expect("runs");
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.starts_with(expected), "{stdout}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("scaffolded `ctx:` from"), "{stderr}");
    assert!(stderr.contains("`task`, `repo`, `files`"), "{stderr}");

    // An id, written beside its stage: the owners logic finds the stage.
    let out = dir.path().join("plan.cassette.yaml");
    let output =
        stagelint().args(["cassette", "import", "--stage", "plan", "-o"]).arg(&out).arg(&input).output().expect("runs");
    assert_eq!(output.status.code(), Some(0));
    let written = std::fs::read_to_string(&out).expect("written");
    assert!(written.starts_with(expected), "{written}");

    // An id with no stage in reach: no `ctx:`, and a note on standard error.
    let output = stagelint().args(["cassette", "import", "--stage", "plan"]).arg(&input).output().expect("runs");
    assert_eq!(output.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&output.stdout).contains("ctx:"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no `ctx:` scaffolded: stage `plan` was not found"), "{stderr}");

    // A stage file that is not there, or a file that is no stage, is a usage error.
    let output =
        stagelint().args(["cassette", "import", "--stage", "nowhere/plan.md"]).arg(&input).output().expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no such stage file"));
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "hello").expect("written");
    let output = stagelint().args(["cassette", "import", "--stage"]).arg(&notes).arg(&input).output().expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a stage definition"));
}

// ---- secrets ----

const PLANTED: [&str; 3] = [
    "sk-ant-api03-Qx7fK2mZp9LwR4tYb8NcV1sD6hJ3gE5uA0oIxMzWqRkTyUiOpLk",
    "sk-proj-Zr8Kq2LmX4vN7bT1yW9cH3fJ6dP0sG5aE2uR",
    "ghp_Zr8Kq2LmX4vN7bT1yW9cH3fJ6dP0sG5aE2uR",
];

/// Issue 19: keys in a system prompt and in a tool result never reach the cassette; the
/// placeholders name what was there, and the rule finds nothing in what import wrote.
#[test]
fn import_redacts_keys_in_tool_results_and_system_prompts() {
    let input = fixture("anthropic-secrets.jsonl");
    assert!(PLANTED.iter().all(|key| input.text.contains(key)));
    let imported = import_fixture("anthropic-secrets.jsonl", None);
    let yaml = yaml_round_trip(&imported.cassette);
    for key in PLANTED {
        assert!(!yaml.contains(key), "{key} leaked:\n{yaml}");
    }
    assert_eq!(imported.redacted, 2, "the .env result holds two keys; the system prompt is not recorded");
    let result = &turns(&imported)[0]["results"]["c1"]["content"];
    assert_eq!(
        result.as_str().expect("a result"),
        "pub mod session;\npub mod token;\n\n# .env\nOPENAI_API_KEY=«redacted:openai-key»\nGITHUB_TOKEN=«redacted:github-token»\n"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("plan.cassette.yaml"), &yaml).expect("write");
    let config = stagelint::config::Config::defaults(dir.path());
    let mut configs = stagelint::workspace::discover::ConfigCache::new(Some(config));
    let workspace = stagelint::workspace::discover::discover(&[dir.path().to_path_buf()], &mut configs).expect("read");
    let found = stagelint::check::check(&workspace);
    assert!(!found.iter().any(|d| d.code == "cassette/SecretInRecording"), "{found:?}");

    let kept = import(
        &[fixture("anthropic-secrets.jsonl")],
        &ImportOptions { stage: "plan".into(), format: None, ctx: None, redact: false },
    )
    .expect("importable");
    assert_eq!(kept.redacted, 0);
    assert!(to_yaml(&kept.cassette).contains(PLANTED[1]));
}

#[test]
fn cli_says_how_many_secrets_it_redacted_and_warns_on_no_redact() {
    let path = Path::new(DIR).join("anthropic-secrets.jsonl");
    let output = stagelint().args(["cassette", "import", "--stage", "plan"]).arg(&path).output().expect("runs");
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("stagelint: redacted 2 secret value(s)"), "{stderr}");
    assert!(!String::from_utf8_lossy(&output.stdout).contains(PLANTED[1]));

    let output =
        stagelint().args(["cassette", "import", "--no-redact", "--stage", "plan"]).arg(&path).output().expect("runs");
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("stagelint: warning: --no-redact"), "{stderr}");
    assert!(String::from_utf8_lossy(&output.stdout).contains(PLANTED[1]));
}

/// Issue 16 audit: an id that names no stage near `-o` is written all the same (the stage may
/// come later), with a warning naming the stages there and the closest.
#[test]
fn cli_warns_when_the_stage_id_names_no_stage_near_the_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stage = "---\nid: plan\nname: Plan\nallowedTools: [Read]\ncompletionTool: submit_plan\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\n---\nTask: {{ctx.task}}. Call submit_plan.\n";
    std::fs::write(dir.path().join("plan.md"), stage).expect("write");
    let out = dir.path().join("x.yaml");
    let output = stagelint()
        .args(["cassette", "import", "--stage", "plam", "-o"])
        .arg(&out)
        .arg(Path::new(DIR).join("openai-chat.jsonl"))
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "stagelint: warning: no stage `plam` near the output (did you mean `plan`?); the stages there are `plan`"
        ),
        "{stderr}"
    );
    assert!(std::fs::read_to_string(&out).expect("written").starts_with("cassette: 1\nstage: plam\n"));
}
