//! The language server as an editor sees it: the real binary over stdio, JSON-RPC framing,
//! position encodings, incremental edits, cross-file re-checks, hover and quick fixes.

mod lsp_client;

use serde_json::{Value, json};

use lsp_client::{Client, uri};

const STAGE: &str = "---\nid: plan\nname: Plan 😀\nallowedTools: [Read]\ncompletionTool: submit_plan\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\n---\n\nTask: {{ctx.task}}. Call submit_plan.\n";

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("sm.yaml"), "entry: plan\n").expect("write");
    std::fs::write(dir.path().join("plan.md"), STAGE).expect("write");
    dir
}

#[test]
fn negotiates_utf8_when_offered_else_utf16() {
    let dir = workspace();
    let mut client = Client::spawn();
    let result = client.initialize(dir.path(), &["utf-8", "utf-16"]);
    assert_eq!(result["capabilities"]["positionEncoding"], "utf-8");
    assert_eq!(result["capabilities"]["textDocumentSync"]["change"], 2, "incremental sync");
    // Under UTF-8 the same finding starts at byte column 29 (the emoji is 4 bytes).
    let path = dir.path().join("plan.md");
    client.open(&path, &STAGE.replace("allowedTools: [Read]", "allowedTools: [Read, \"😀\", Raed]"));
    let (list, _) = client.diagnostics(&uri(&path), |l| !l.is_empty());
    let tool = list.iter().find(|d| d["message"].as_str().unwrap_or("").contains("Raed")).expect("UnknownTool");
    assert_eq!(tool["range"]["start"], json!({"line": 3, "character": 29}));
    let mut client = Client::spawn();
    let result = client.initialize(dir.path(), &["utf-16"]);
    assert_eq!(result["capabilities"]["positionEncoding"], "utf-16");
}

#[test]
fn diagnostics_follow_incremental_edits_with_utf16_columns() {
    let dir = workspace();
    let path = dir.path().join("plan.md");
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    // Unknown tools after an emoji on the same line: columns must count UTF-16 units.
    let broken = STAGE.replace("allowedTools: [Read]", "allowedTools: [Read, \"😀\", Raed]");
    client.open(&path, &broken);
    let (list, version) = client.diagnostics(&uri(&path), |l| !l.is_empty());
    assert_eq!(version, 1);
    let tool = list.iter().find(|d| d["message"].as_str().unwrap_or("").contains("Raed")).expect("UnknownTool");
    assert_eq!(tool["code"], "sm/UnknownTool");
    // `allowedTools: [Read, ` is 21 units and `"😀", ` is 6 (the emoji is a surrogate pair).
    assert_eq!(tool["range"], json!({"start": {"line": 3, "character": 27}, "end": {"line": 3, "character": 31}}));
    // No `[output] docs-url`: the page in this checkout, which the binary was built from.
    let page = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules/sm/UnknownTool.md");
    assert_eq!(tool["codeDescription"]["href"], uri(&page));
    // An edit on the emoji line: replace `😀` (2 UTF-16 units at character 11) with `x`.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&path), "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 2, "character": 11}, "end": {"line": 2, "character": 13}}, "text": "x"},
                        {"range": {"start": {"line": 3, "character": 21}, "end": {"line": 3, "character": 31}}, "text": "Grep"}
        ]}),
    );
    let (list, version) = client.diagnostics(&uri(&path), |l| l.is_empty());
    assert!(list.is_empty());
    assert_eq!(version, 2);
}

/// The rule link: a page here when no base is set, the page under `[output] docs-url` when one
/// is (an unsaved config counts), and the page's text from `stagelint.explain` for the read-only
/// `stagelint:` documents a client that asks for them opens.
#[test]
fn rule_links_lead_to_the_page_here_or_under_the_configured_base() {
    let dir = workspace();
    let path = dir.path().join("plan.md");
    let mut client = Client::spawn();
    let result = client.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(dir.path()), "capabilities": {},
               "initializationOptions": {"ruleDocuments": true}}),
    );
    let commands = result["capabilities"]["executeCommandProvider"]["commands"].as_array().expect("commands").clone();
    assert!(commands.contains(&json!("stagelint.explain")), "{commands:?}");
    client.notify("initialized", json!({}));
    client.open(&path, &STAGE.replace("[Read]", "[Raed]"));
    let (list, _) = client.diagnostics(&uri(&path), |l| !l.is_empty());
    let page = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules/sm/UnknownTool.md");
    assert_eq!(list[0]["codeDescription"]["href"], uri(&page));

    let text = std::fs::read_to_string(&page).expect("the page");
    for argument in ["stagelint:/docs/rules/sm/UnknownTool.md", "sm/UnknownTool"] {
        let answer = client
            .request("workspace/executeCommand", json!({"command": "stagelint.explain", "arguments": [argument]}));
        assert_eq!(answer, json!(text), "{argument}");
    }
    let unknown = client
        .try_request("workspace/executeCommand", json!({"command": "stagelint.explain", "arguments": ["sm/Nope"]}));
    assert!(unknown.is_err(), "{unknown:?}");

    let base = "https://git.example.com/mirror/stagelint/-/blob/main/";
    client.open(&dir.path().join("stagelint.toml"), &format!("[output]\ndocs-url = \"{base}\"\n"));
    let (list, _) = client.diagnostics(&uri(&path), |l| {
        l.first().is_some_and(|d| d["codeDescription"]["href"].as_str().is_some_and(|h| h.starts_with("https://git.")))
    });
    assert_eq!(list[0]["codeDescription"]["href"], format!("{base}docs/rules/sm/UnknownTool.md"));
}

#[test]
fn editing_one_file_rechecks_the_files_that_depend_on_it() {
    let dir = workspace();
    let plan = dir.path().join("plan.md");
    let sm = dir.path().join("sm.yaml");
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    client.open(&plan, STAGE);
    client.diagnostics(&uri(&plan), |l| l.is_empty());
    // Rename the stage without saving: `entry: plan` in sm.yaml (not open) now names nothing.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&plan), "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 8}}, "text": "planning"}
        ]}),
    );
    let (list, _) = client.diagnostics(&uri(&sm), |l| l.iter().any(|d| d["code"] == "sm/EntryStageMissing"));
    assert!(list[0]["message"].as_str().unwrap_or("").contains("did you mean `planning`"), "{list:?}");
    // Renaming it back clears sm.yaml again.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&plan), "version": 3}, "contentChanges": [
            {"range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 12}}, "text": "plan"}
        ]}),
    );
    client.diagnostics(&uri(&sm), |l| l.is_empty());
}

#[test]
fn editing_a_stage_replays_its_cassette_and_updates_the_cassettes_diagnostics() {
    let dir = workspace();
    let plan = dir.path().join("plan.md");
    let cassette = dir.path().join("plan.cassette.yaml");
    // Read is allowed, so the call is dispatched, as the cassette expects.
    std::fs::write(
        &cassette,
        "cassette: 1\nstage: plan\nctx: { task: t }\ntools:\n  Read:\n    - { anyArgs: true, result: x }\nattempts:\n  - turns:\n      - response: { stop: tool_use, content: [ { toolCall: { id: c1, name: Read, args: {} } } ] }\n        expect: [ { branch: tool, call: c1, outcome: dispatched } ]\n      - response: { stop: tool_use, content: [ { toolCall: { id: c2, name: submit_plan, args: {} } } ] }\n",
    )
    .expect("write");
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    client.open(&plan, STAGE);
    client.diagnostics(&uri(&plan), |l| l.is_empty());
    // Take Read away without saving: the cassette (not open) now sees a denial it did not expect.
    let narrowed = STAGE.replace("allowedTools: [Read]", "allowedTools: []");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&plan), "version": 2}, "contentChanges": [{"text": narrowed}]}),
    );
    let (list, _) =
        client.diagnostics(&uri(&cassette), |l| l.iter().any(|d| d["code"] == "cassette/ExpectationFailed"));
    assert_eq!(list[0]["range"]["start"]["line"], 9, "on the `expect:` of turn 1: {list:?}");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&plan), "version": 3}, "contentChanges": [{"text": STAGE}]}),
    );
    client.diagnostics(&uri(&cassette), |l| l.is_empty());
}

#[test]
fn a_cassette_created_beside_a_loose_stage_joins_its_scope() {
    // No sm.yaml: the stage is a scope of its own until a cassette appears beside it.
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = dir.path().join("plan.md");
    std::fs::write(&plan, STAGE).expect("write");
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    client.open(&plan, STAGE);
    client.diagnostics(&uri(&plan), |l| l.is_empty());
    let cassette = dir.path().join("plan.cassette.yaml");
    std::fs::write(
        &cassette,
        "cassette: 1\nstage: plan\nctx: { task: t }\nattempts:\n  - turns:\n      - response: { stop: end_turn, content: [ { text: hi } ] }\n        expect: [ { branch: completion } ]\n",
    )
    .expect("write");
    client.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": uri(&cassette), "type": 1}]}));
    client.diagnostics(&uri(&cassette), |l| l.iter().any(|d| d["code"] == "cassette/ExpectationFailed"));
    // Typing in the stage now re-checks the directory, cassette included, and the lens sees it.
    let reads_more = STAGE.replace("Task: {{ctx.task}}.", "Task: {{ctx.task}} on {{ctx.branch}}.");
    assert_ne!(reads_more, STAGE);
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&plan), "version": 2}, "contentChanges": [{"text": reads_more}]}),
    );
    client.diagnostics(&uri(&cassette), |l| l.iter().any(|d| d["code"] == "cassette/ContextIncomplete"));
    let lenses = client.request("textDocument/codeLens", json!({"textDocument": {"uri": uri(&plan)}}));
    assert_eq!(lenses.as_array().map(Vec::len), Some(1), "{lenses}");
}

#[test]
fn hover_explains_the_rule_and_code_actions_fix_or_suppress() {
    let dir = workspace();
    let path = dir.path().join("plan.md");
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    let broken = STAGE.replace("turnCap: 5", "turncap: 5");
    client.open(&path, &broken);
    // A misspelt required key is one finding with one fix, the rename (issue 16).
    let (list, _) = client.diagnostics(&uri(&path), |l| l.iter().any(|d| d["code"] == "sm/MissingRequiredField"));
    assert!(list.iter().all(|d| d["code"] != "sm/UnknownField"), "{list:?}");
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri(&path)}, "position": {"line": 7, "character": 2}}),
    );
    let text = hover["contents"]["value"].as_str().expect("markdown");
    assert!(text.contains("sm/MissingRequiredField") && text.contains("## What it does"), "{text}");
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(&path)},
               "range": {"start": {"line": 7, "character": 0}, "end": {"line": 7, "character": 7}},
               "context": {"diagnostics": []}}),
    );
    let titles: Vec<&str> = actions.as_array().expect("actions").iter().filter_map(|a| a["title"].as_str()).collect();
    assert!(titles.contains(&"Replace with `turnCap`"), "{titles:?}");
    assert!(!titles.iter().any(|t| t.starts_with("Add ")), "{titles:?}");
    assert!(titles.contains(&"Suppress `sm/MissingRequiredField` on this line"), "{titles:?}");
    let suppress = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Suppress `sm/MissingRequiredField` on this line")
        .unwrap();
    let edit = &suppress["edit"]["changes"][uri(&path)][0];
    assert_eq!(edit["newText"], "# stagelint: ignore[sm/MissingRequiredField]\n");
    assert_eq!(edit["range"]["start"], json!({"line": 7, "character": 0}));
}

#[test]
fn no_did_you_mean_renames_a_key_onto_one_the_mapping_has() {
    let dir = workspace();
    let path = dir.path().join("plan.md");
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    // `turnCap` is there already: renaming `turncap` to it would write a duplicate key.
    let broken = STAGE.replace("turnCap: 5", "turncap: 5\nturnCap: 5");
    client.open(&path, &broken);
    let (list, _) = client.diagnostics(&uri(&path), |l| l.iter().any(|d| d["code"] == "sm/UnknownField"));
    let finding = list.iter().find(|d| d["code"] == "sm/UnknownField").unwrap();
    assert!(finding["message"].as_str().unwrap().contains("`turnCap` is set already"), "{finding}");
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(&path)},
               "range": {"start": {"line": 7, "character": 0}, "end": {"line": 7, "character": 7}},
               "context": {"diagnostics": []}}),
    );
    let titles: Vec<&str> = actions.as_array().expect("actions").iter().filter_map(|a| a["title"].as_str()).collect();
    assert_eq!(titles, ["Suppress `sm/UnknownField` on this line"]);
    // The same in a climpt registry, a Last Light workflow and a cassette.
    for (name, text, line) in [
        (
            "steps_registry.json",
            "{\n  \"agentId\": \"a\",\n  \"version\": \"1\",\n  \"entryStep\": \"s\",\n  \"entrystep\": \"s\",\n  \"steps\": {}\n}\n",
            4,
        ),
        ("flow.yaml", "name: f\nphases:\n  - name: a\n    prompt: x\n    Prompt: y\n", 4),
        ("plan.cassette.yaml", "cassette: 1\nstage: plan\nstages: {}\nStage: plan\nattempts: []\n", 3),
    ] {
        let file = dir.path().join(name);
        client.open(&file, text);
        let (list, _) =
            client.diagnostics(&uri(&file), |l| l.iter().any(|d| d["code"].as_str().unwrap().ends_with("Key")));
        let unknown = list.iter().find(|d| d["code"].as_str().unwrap().ends_with("Key")).unwrap();
        assert_eq!(unknown["range"]["start"]["line"], line, "{name}: {unknown}");
        assert!(unknown["message"].as_str().unwrap().contains("set already"), "{name}: {unknown}");
        let actions = client.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri(&file)}, "range": unknown["range"], "context": {"diagnostics": []}}),
        );
        let renames: Vec<&Value> = actions
            .as_array()
            .into_iter()
            .flatten()
            .filter(|a| a["title"].as_str().unwrap().starts_with("Replace"))
            .collect();
        assert!(renames.is_empty(), "{name}: {renames:?}");
    }
}

#[test]
fn the_first_workspace_check_reports_progress_and_publishes_batch_by_batch() {
    // Ten machines, each with one broken stage: indexed in batches, each published when done.
    let dir = tempfile::tempdir().expect("temp dir");
    for n in 0..10 {
        let sm = dir.path().join(format!("sm-{n}"));
        std::fs::create_dir(&sm).expect("mkdir");
        std::fs::write(sm.join("sm.yaml"), "entry: plan\n").expect("write");
        std::fs::write(sm.join("plan.md"), STAGE.replace("turnCap: 5", "turnCap: 0")).expect("write");
    }
    let mut client = Client::spawn();
    client.request(
        "initialize",
        json!({
            "processId": null,
            "rootUri": uri(dir.path()),
            "capabilities": {"window": {"workDoneProgress": true}}
        }),
    );
    client.notify("initialized", json!({}));
    let create = client.wait("window/workDoneProgress/create", |m| m["method"] == "window/workDoneProgress/create");
    let token = create["params"]["token"].clone();
    let begin = client.wait("$/progress", |m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "begin");
    assert_eq!(begin["params"]["token"], token);
    assert!(begin["params"]["value"]["title"].as_str().unwrap_or("").contains("stagelint"));
    let end = client.wait("$/progress", |m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end");
    assert_eq!(end["params"]["token"], token);
    // Everything before `end` is in the backlog, in arrival order.
    let kinds: Vec<String> = client
        .backlog()
        .iter()
        .filter_map(|m| match m["method"].as_str() {
            Some("$/progress") => Some(format!("report {}", m["params"]["value"]["percentage"])),
            Some("textDocument/publishDiagnostics") => Some("publish".to_string()),
            _ => None,
        })
        .collect();
    let reports: Vec<&String> = kinds.iter().filter(|k| k.starts_with("report")).collect();
    assert!(reports.len() >= 2, "several batches: {kinds:?}");
    assert_eq!(reports.last().map(|r| r.as_str()), Some("report 100"), "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| *k == "publish").count(), 10, "every broken stage: {kinds:?}");
    // The first batch is published before the last one is reported done.
    let first_publish = kinds.iter().position(|k| k == "publish").expect("a publish");
    assert!(first_publish < kinds.iter().position(|k| k == "report 100").expect("100%"), "{kinds:?}");
}

#[test]
fn a_change_rechecks_only_its_scope_and_watched_files_refresh_closed_ones() {
    let dir = tempfile::tempdir().expect("temp dir");
    for sm in ["a", "b"] {
        std::fs::create_dir_all(dir.path().join(sm)).expect("mkdir");
        std::fs::write(dir.path().join(sm).join("sm.yaml"), "entry: plan\n").expect("write");
    }
    let a = dir.path().join("a/plan.md");
    let b = dir.path().join("b/plan.md");
    std::fs::write(&a, STAGE).expect("write");
    std::fs::write(&b, STAGE.replace("turnCap: 5", "turnCap: 0")).expect("write");
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    client.diagnostics(&uri(&b), |l| l.iter().any(|d| d["code"] == "sm/StageTurnCapTooLow"));
    client.open(&a, STAGE);
    client.diagnostics(&uri(&a), |l| l.is_empty());
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&a), "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 7, "character": 9}, "end": {"line": 7, "character": 10}}, "text": "0"}
        ]}),
    );
    client.diagnostics(&uri(&a), |l| l.iter().any(|d| d["code"] == "sm/StageTurnCapTooLow"));
    // Only `a/` was re-checked: nothing was sent again for `b/plan.md`.
    assert!(
        !client.backlog().iter().any(|m| m["params"]["uri"] == uri(&b)),
        "b/plan.md was re-published: {:?}",
        client.backlog()
    );
    // Fix `b/plan.md` on disk (not open) and say so, as a file watcher would.
    std::fs::write(&b, STAGE).expect("write");
    client.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": uri(&b), "type": 2}]}));
    client.diagnostics(&uri(&b), |l| l.is_empty());
}

/// Bug 8 of issue 16: a byte order mark, which editors hide, is no character of line 1, so the
/// server's positions are the ones the CLI prints (`sm.yaml:1:8`) and the editor shows.
#[test]
fn a_byte_order_mark_is_no_character_of_the_first_line() {
    let dir = workspace();
    let sm = dir.path().join("sm.yaml");
    std::fs::write(&sm, "\u{feff}entry: plna\n").expect("write");
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    let (list, _) = client.diagnostics(&uri(&sm), |l| l.iter().any(|d| d["code"] == "sm/EntryStageMissing"));
    let entry = list.iter().find(|d| d["code"] == "sm/EntryStageMissing").expect("EntryStageMissing");
    assert_eq!(entry["range"], json!({"start": {"line": 0, "character": 7}, "end": {"line": 0, "character": 11}}));
}

#[test]
fn a_quick_fix_can_edit_another_file() {
    // allowedIntents lists `jump`; the schema's enum does not: the fix edits the schema file.
    let dir = tempfile::tempdir().expect("temp dir");
    let agent = dir.path().join(".agent/fixer");
    std::fs::create_dir_all(agent.join("schemas")).expect("mkdir");
    let registry = include_str!("../examples/climpt/.agent/fixer/steps_registry.json").replacen(
        "\"allowedIntents\": [\"next\", \"repeat\"]",
        "\"allowedIntents\": [\"next\", \"repeat\", \"jump\"]",
        1,
    );
    std::fs::write(agent.join("steps_registry.json"), &registry).expect("write");
    std::fs::write(
        agent.join("schemas/fixer.schema.json"),
        include_str!("../examples/climpt/.agent/fixer/schemas/fixer.schema.json"),
    )
    .expect("write");
    let path = agent.join("steps_registry.json");
    let schema = agent.join("schemas/fixer.schema.json");
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    client.open(&path, &registry);
    let (list, _) = client.diagnostics(&uri(&path), |l| l.iter().any(|d| d["code"] == "steps/SR-VALID-003"));
    let finding = list.iter().find(|d| d["code"] == "steps/SR-VALID-003").expect("SR-VALID-003");
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(&path)}, "range": finding["range"], "context": {"diagnostics": []}}),
    );
    let fix = actions
        .as_array()
        .expect("actions")
        .iter()
        .find(|a| a["title"] == "Add `jump` to the schema's enum")
        .unwrap_or_else(|| panic!("{actions}"));
    let edits = &fix["edit"]["changes"][uri(&schema)];
    assert_eq!(edits[0]["newText"], "[\"next\", \"repeat\", \"jump\"]", "{fix}");
}

#[test]
fn clients_that_pull_get_document_and_workspace_reports() {
    let dir = workspace();
    std::fs::write(dir.path().join("plan.md"), STAGE.replace("turnCap: 5", "turnCap: 0")).expect("write");
    let path = dir.path().join("plan.md");
    let mut client = Client::spawn();
    let result = client.request(
        "initialize",
        json!({
            "processId": null,
            "rootUri": uri(dir.path()),
            "capabilities": {"textDocument": {"diagnostic": {"dynamicRegistration": false}}}
        }),
    );
    assert_eq!(result["capabilities"]["diagnosticProvider"]["workspaceDiagnostics"], true);
    client.notify("initialized", json!({}));
    let report = client.request("workspace/diagnostic", json!({"previousResultIds": []}));
    let items = report["items"].as_array().expect("items");
    let plan = items.iter().find(|i| i["uri"] == uri(&path)).expect("plan.md, not open, is reported");
    assert_eq!(plan["kind"], "full");
    assert!(plan["items"].as_array().unwrap().iter().any(|d| d["code"] == "sm/StageTurnCapTooLow"), "{plan}");
    client.open(&path, STAGE);
    let report = client.request("textDocument/diagnostic", json!({"textDocument": {"uri": uri(&path)}}));
    assert_eq!(report["kind"], "full");
    assert_eq!(report["items"], json!([]), "the open text (fixed) wins over the file on disk");
    assert!(
        !client.backlog().iter().any(|m| m["method"] == "textDocument/publishDiagnostics"),
        "a pulling client gets no pushed diagnostics"
    );
}

#[test]
fn malformed_frames_are_answered_and_the_server_keeps_serving() {
    let dir = workspace();
    let path = dir.path().join("plan.md");
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    let frames: [(&[u8], i64); 4] = [
        (b"Content-Length: 5\r\n\r\n{bad}", -32700),
        (b"Content-Length: 3\r\n\r\n[1]", -32600),
        (b"Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"id\":{}}  ", -32600),
        (b"Content-Type: application/vscode-jsonrpc\r\n\r\n", -32700),
    ];
    for (frame, code) in frames {
        client.write_raw(frame);
        let reply = client.wait("an error reply", |m| m.get("error").is_some() && m["id"].is_null());
        assert_eq!(reply["error"]["code"], code, "{}", String::from_utf8_lossy(frame));
    }
    // Still serving, on the same output.
    client.open(&path, &STAGE.replace("turnCap: 5", "turnCap: 0"));
    client.diagnostics(&uri(&path), |l| l.iter().any(|d| d["code"] == "sm/StageTurnCapTooLow"));
    let symbols = client.document("textDocument/documentSymbol", &path);
    assert!(symbols.as_array().is_some_and(|s| !s.is_empty()), "{symbols}");
}

#[test]
fn exit_code_is_0_after_shutdown_and_1_without() {
    let dir = workspace();
    for shutdown in [false, true] {
        let mut client = Client::spawn();
        client.initialize(dir.path(), &["utf-16"]);
        if shutdown {
            client.request("shutdown", json!(null));
        }
        client.notify("exit", json!(null));
        assert_eq!(client.exit_code(), Some(if shutdown { 0 } else { 1 }), "shutdown first: {shutdown}");
    }
}

#[test]
fn garbage_between_frames_is_skipped_and_the_next_frame_served() {
    // Found by an outside audit: one stray byte glued the next header to it, and every frame
    // after it was read out of step (each body taken for the next header), so none was served.
    let dir = workspace();
    let path = dir.path().join("plan.md");
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    let garbage: [&[u8]; 3] = [b"x", b"hello world\r\n", b"Content-Length: 5\r\n\r\nnot json at all"];
    for bytes in garbage {
        client.write_raw(bytes);
        client.set(&path, &STAGE.replace("turnCap: 5", "turnCap: 0"));
        client.diagnostics(&uri(&path), |l| l.iter().any(|d| d["code"] == "sm/StageTurnCapTooLow"));
        let symbols = client.document("textDocument/documentSymbol", &path);
        assert!(
            symbols.as_array().is_some_and(|s| !s.is_empty()),
            "after {:?}: {symbols}",
            String::from_utf8_lossy(bytes)
        );
        client.set(&path, STAGE);
        client.diagnostics(&uri(&path), |l| l.is_empty());
        let skipped = client.wait("the skipped bytes' error", |m| m.get("error").is_some() && m["id"].is_null());
        assert_eq!(skipped["error"]["code"], -32700);
    }
}

/// The client's view of LSP lines: only `\n`, `\r\n` and `\r` end one.
fn lsp_offset(text: &str, line: usize, column: usize, utf16: bool) -> usize {
    let bytes = text.as_bytes();
    let mut start = 0;
    for _ in 0..line {
        let Some(at) = bytes[start..].iter().position(|b| *b == b'\n' || *b == b'\r') else { return text.len() };
        let at = start + at;
        start = if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') { at + 2 } else { at + 1 };
    }
    let end = bytes[start..].iter().position(|b| *b == b'\n' || *b == b'\r').map_or(text.len(), |i| start + i);
    let mut units = 0;
    for (i, c) in text[start..end].char_indices() {
        if units >= column {
            return start + i;
        }
        units += if utf16 { c.len_utf16() } else { c.len_utf8() };
    }
    end
}

#[test]
fn edit_bursts_over_unusual_line_separators_match_a_fresh_open() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("sm.yaml"), "entry: plan\ncontext:\n  required: [task]\n").expect("write");
    let path = dir.path().join("plan.md");
    let body = "Intro\u{2028}more\u{85}x\u{c}y\u{b}z\rw\u{2029}v\r\nTask: {{ctx.task}} 😀 {{ctx.zz}}\n";
    let base = STAGE.replace("\nTask: {{ctx.task}}. Call submit_plan.\n", &format!("\n{body}Call submit_plan.\n"));
    let inserts =
        ["\u{2028}", "\u{85}", "\u{c}", "\u{b}", "\r", "\n", "\r\n", "\u{2029}", "😀", "é", "{{ctx.zz}}", "", "ab"];
    let mut seed: u64 = 0x5eed;
    let mut random = move |n: usize| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n.max(1)
    };
    for (encodings, utf16) in [(["utf-16"], true), (["utf-8"], false)] {
        let mut client = Client::spawn();
        client.initialize(dir.path(), &encodings);
        // After a lone `\r` (line 11 ends there) and `\r\n`, `{{ctx.zz}}` is on line 13.
        client.open_versioned(&path, &base, 1);
        let found = client.pulled(&path);
        let zz = found.iter().find(|d| d["code"] == "sm/StageCtxUnresolved").expect("ctx.zz is unresolved");
        let column = if utf16 { 28 } else { 30 };
        assert_eq!(zz["range"]["start"], json!({"line": 13, "character": column}), "{encodings:?}");
        client.notify("textDocument/didClose", json!({"textDocument": {"uri": uri(&path)}}));
        for round in 0..2 {
            let mut text = base.clone();
            let version = 100 * (round + 1);
            client.open_versioned(&path, &text, version);
            let mut version = version;
            for _ in 0..40 {
                // Only the body (line 11 on), so the frontmatter keeps parsing.
                let lines = 1 + text.matches('\n').count() + text.matches('\r').count() - text.matches("\r\n").count();
                let line = 11 + random(lines - 11);
                // Short deletions, so the placeholders (findings with positions) mostly survive.
                let from = random(12);
                let to = from + random(2);
                let start = lsp_offset(&text, line, from, utf16);
                let end = lsp_offset(&text, line, to, utf16);
                // Columns as the client computes them (clamped to the line, like the server).
                let column = |offset: usize| -> usize {
                    let line_start = lsp_offset(&text, line, 0, utf16);
                    let part = &text[line_start..offset];
                    if utf16 { part.encode_utf16().count() } else { part.len() }
                };
                let (c0, c1) = (column(start), column(end));
                let insert = inserts[random(inserts.len())];
                text.replace_range(start..end, insert);
                version += 1;
                client.change(&path, version, line, c0, c1, insert);
            }
            // Pulled: a push comes only when the findings change.
            let burst = client.pulled(&path);
            client.notify("textDocument/didClose", json!({"textDocument": {"uri": uri(&path)}}));
            client.open_versioned(&path, &text, version + 1);
            let fresh = client.pulled(&path);
            assert!(fresh.iter().any(|d| d["range"]["start"]["line"].as_u64() > Some(10)), "{fresh:?}");
            assert_eq!(burst, fresh, "{encodings:?} round {round}: the server's text is not the client's:\n{text:?}");
            client.notify("textDocument/didClose", json!({"textDocument": {"uri": uri(&path)}}));
        }
    }
}

#[test]
fn an_open_binary_file_keeps_its_io_error() {
    let dir = workspace();
    let path = dir.path().join("plan.md");
    let binary = STAGE.replace("Task:", "Task:\0\0");
    std::fs::write(&path, &binary).expect("write");
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    client.diagnostics(&uri(&path), |l| l.iter().any(|d| d["code"] == "stagelint/IoError"));
    // The editor shows the same bytes; the finding must stay.
    client.open(&path, &binary);
    let found = client.pulled(&path);
    assert!(found.iter().any(|d| d["code"] == "stagelint/IoError"), "{found:?}");
}

#[test]
fn deleting_sm_yaml_rechecks_its_stages() {
    let stage = STAGE.replace("{{ctx.task}}", "{{ctx.tsak}}");
    for opened in [false, true] {
        let dir = tempfile::tempdir().expect("temp dir");
        let sm = dir.path().join("p/sm.yaml");
        let plan = dir.path().join("p/plan.md");
        std::fs::create_dir_all(dir.path().join("p")).expect("mkdir");
        std::fs::write(&sm, "entry: plan\ncontext:\n  required: [task]\n").expect("write");
        std::fs::write(&plan, &stage).expect("write");
        let mut client = Client::spawn();
        client.initialize(dir.path(), &["utf-16"]);
        client.diagnostics(&uri(&plan), |l| l.iter().any(|d| d["code"] == "sm/StageCtxUnresolved"));
        if opened {
            client.open(&plan, &stage);
        }
        std::fs::remove_file(&sm).expect("delete");
        client.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": uri(&sm), "type": 3}]}));
        // Loose now: no context is declared, so nothing is unresolved.
        client.diagnostics(&uri(&plan), |l| !l.iter().any(|d| d["code"] == "sm/StageCtxUnresolved"));
        let pulled = client.pulled(&plan);
        assert!(!pulled.iter().any(|d| d["code"] == "sm/StageCtxUnresolved"), "open: {opened}: {pulled:?}");
    }
}

#[test]
fn a_broken_config_is_a_finding_on_itself_and_leaves_other_scopes_alone() {
    // m00's config is broken; m00 and m01 share the first index batch.
    let dir = tempfile::tempdir().expect("temp dir");
    let broken = STAGE.replace("allowedTools: [Read]", "allowedTools: [Raed]");
    for n in 0..10 {
        let sm = dir.path().join(format!("m{n:02}"));
        std::fs::create_dir(&sm).expect("mkdir");
        std::fs::write(sm.join("sm.yaml"), "entry: plan\n").expect("write");
        std::fs::write(sm.join("plan.md"), &broken).expect("write");
    }
    let toml = dir.path().join("m00/stagelint.toml");
    std::fs::write(&toml, "[tools]\nregistred = [\"Read\"]\n").expect("write");
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    let (list, _) = client.diagnostics(&uri(&toml), |l| !l.is_empty());
    assert_eq!(list[0]["code"], "stagelint/InvalidConfig", "{list:?}");
    assert_eq!(list[0]["range"]["start"], json!({"line": 1, "character": 0}), "{list:?}");
    assert!(list[0]["message"].as_str().unwrap_or("").contains("registred"), "{list:?}");
    for n in 1..10 {
        let plan = dir.path().join(format!("m{n:02}/plan.md"));
        client.diagnostics(&uri(&plan), |l| l.iter().any(|d| d["code"] == "sm/UnknownTool"));
    }
    // Typing in a stage under the broken config: no popup, and the config's finding stays.
    let plan = dir.path().join("m00/plan.md");
    client.open(&plan, &broken);
    client.change(&plan, 2, 11, 0, 0, "x");
    assert!(client.pulled(&toml).iter().any(|d| d["code"] == "stagelint/InvalidConfig"));
    client.change(&plan, 3, 11, 0, 1, "");
    assert!(client.pulled(&plan).is_empty(), "files under a broken config are not checked");
    // Fixing the config in the editor, unsaved, checks m00 again.
    client.open(&toml, "[tools]\nregistred = [\"Read\"]\n");
    client.change(&toml, 2, 1, 0, 9, "registered");
    client.diagnostics(&uri(&toml), |l| l.is_empty());
    client.diagnostics(&uri(&plan), |l| l.iter().any(|d| d["code"] == "sm/UnknownTool"));
    assert!(
        !client.backlog().iter().any(|m| m["method"] == "window/showMessage"),
        "no popups: {:?}",
        client.backlog().iter().filter(|m| m["method"] == "window/showMessage").collect::<Vec<_>>()
    );
}

/// Issue 16: each problem of a broken config is its own finding, all of them at once.
#[test]
fn every_problem_of_a_broken_config_is_a_finding() {
    let dir = workspace();
    let toml = dir.path().join("stagelint.toml");
    std::fs::write(&toml, "[tools]\nregistred = [\"Read\"]\n[rules]\n\"sm/UnknownTol\" = \"off\"\n").expect("write");
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    let (list, _) = client.diagnostics(&uri(&toml), |l| !l.is_empty());
    let starts: Vec<&Value> = list.iter().map(|d| &d["range"]["start"]).collect();
    assert_eq!(starts, [&json!({"line": 1, "character": 0}), &json!({"line": 3, "character": 0})], "{list:?}");
    assert!(list.iter().all(|d| d["code"] == "stagelint/InvalidConfig"), "{list:?}");
}

#[test]
fn an_unsaved_tool_list_edit_rechecks_the_stages_it_governs() {
    let dir = workspace();
    let toml = dir.path().join("stagelint.toml");
    let plan = dir.path().join("plan.md");
    let full = "[tools]\nregistered = [\"Read\", \"Grep\"]\n";
    std::fs::write(&toml, full).expect("write");
    std::fs::write(&plan, STAGE.replace("allowedTools: [Read]", "allowedTools: [Grep]")).expect("write");
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    assert!(client.pulled(&plan).is_empty());
    client.open(&toml, full);
    // Drop `Grep` without saving: plan.md (not open) now uses an unknown tool.
    client.change(&toml, 2, 1, 20, 28, "");
    client.diagnostics(&uri(&plan), |l| l.iter().any(|d| d["code"] == "sm/UnknownTool"));
    client.change(&toml, 3, 1, 20, 20, ", \"Grep\"");
    client.diagnostics(&uri(&plan), |l| l.is_empty());
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    for entry in std::fs::read_dir(from).expect("read dir") {
        let path = entry.expect("entry").path();
        let target = to.join(path.file_name().expect("name"));
        if path.is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("copy");
        }
    }
}

/// `text` with LSP `edits` (line/character in UTF-16, single-line ranges here) applied.
fn apply_edits(text: &str, edits: &[serde_json::Value]) -> String {
    let mut out = text.to_string();
    let mut sorted = edits.to_vec();
    sorted.sort_by_key(|e| (e["range"]["start"]["line"].as_u64(), e["range"]["start"]["character"].as_u64()));
    for edit in sorted.iter().rev() {
        let at = |p: &serde_json::Value| {
            let (line, column) =
                (p["line"].as_u64().unwrap_or(0) as usize, p["character"].as_u64().unwrap_or(0) as usize);
            lsp_offset(&out, line, column, true)
        };
        let (start, end) = (at(&edit["range"]["start"]), at(&edit["range"]["end"]));
        out.replace_range(start..end, edit["newText"].as_str().unwrap_or(""));
    }
    out
}

/// The edits of the "Suppress `code` on this line" action offered for `finding` in `path`.
fn suppress_edits(client: &mut Client, path: &std::path::Path, finding: &serde_json::Value) -> Vec<serde_json::Value> {
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(path)}, "range": finding["range"], "context": {"diagnostics": [finding]}}),
    );
    let title = format!("Suppress `{}` on this line", finding["code"].as_str().expect("a code"));
    let suppress = actions
        .as_array()
        .expect("actions")
        .iter()
        .find(|a| a["title"] == title.as_str())
        .unwrap_or_else(|| panic!("no `{title}` in {actions}"));
    suppress["edit"]["changes"][uri(path)].as_array().expect("edits").clone()
}

#[test]
fn suppressing_inside_a_block_scalar_comments_above_its_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(std::path::Path::new("examples/lastlight"), dir.path());
    let build = dir.path().join("workflows/build.yaml");
    let text =
        std::fs::read_to_string(&build).expect("read").replace("`{{issueDir}}/plan.md`", "`{{isueDir}}/plan.md`");
    let header = text.lines().position(|l| l.trim_start().starts_with("approval_gate_message: |")).expect("header");
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    client.open(&build, &text);
    let (list, _) = client.diagnostics(&uri(&build), |l| l.iter().any(|d| d["code"] == "lastlight/UnknownVariable"));
    let finding = list.iter().find(|d| d["code"] == "lastlight/UnknownVariable").expect("finding");
    assert_eq!(finding["range"]["start"]["line"], header + 1, "{finding}");
    let edits = suppress_edits(&mut client, &build, finding);
    // Above the key, at its indentation: not a line of the string.
    let indent = &text.lines().nth(header).expect("header")[..4];
    assert_eq!(edits[0]["range"]["start"], json!({"line": header, "character": 0}), "{edits:?}");
    assert_eq!(edits[0]["newText"], format!("{indent}# stagelint: ignore[lastlight/UnknownVariable]\n"));
    let suppressed = apply_edits(&text, &edits);
    client.set(&build, &suppressed);
    let found = client.pulled(&build);
    assert!(found.is_empty(), "the suppression covers the block scalar and is used: {found:?}");
    // A `#` line inside the block scalar is part of the string, never a suppression.
    let inside = text.replace(
        "approval_gate_message: |\n",
        "approval_gate_message: |\n      # stagelint: ignore[lastlight/UnknownVariable]\n",
    );
    assert_ne!(inside, text);
    client.set(&build, &inside);
    let found = client.pulled(&build);
    assert!(found.iter().any(|d| d["code"] == "lastlight/UnknownVariable"), "{found:?}");
    assert!(!found.iter().any(|d| d["code"] == "stagelint/UnusedSuppression"), "{found:?}");
}

#[test]
fn suppressing_inside_a_quoted_or_plain_multi_line_scalar_comments_above_its_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(std::path::Path::new("examples/lastlight"), dir.path());
    let build = dir.path().join("workflows/build.yaml");
    let original = std::fs::read_to_string(&build).expect("read");
    let line = "      on_start: \"Implementing the plan on `{{branch}}`...\"\n";
    assert!(original.contains(line));
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    // The same message as a double-quoted, a single-quoted and a plain scalar over two lines.
    for (style, value) in [
        ("double-quoted", "      on_start: \"Implementing the plan\n        on `{{brnch}}`...\"\n"),
        ("single-quoted", "      on_start: 'Implementing the plan\n        on `{{brnch}}`...'\n"),
        ("plain", "      on_start: Implementing the plan\n        on `{{brnch}}`...\n"),
    ] {
        let text = original.replace(line, value);
        let header = text.lines().position(|l| l.starts_with("      on_start: ")).expect("header");
        client.set(&build, &text);
        let found = client.pulled(&build);
        let finding = found
            .iter()
            .find(|d| d["code"] == "lastlight/UnknownVariable")
            .unwrap_or_else(|| panic!("{style}: {found:?}"))
            .clone();
        assert_eq!(finding["range"]["start"]["line"], header + 1, "{style}: {finding}");
        let edits = suppress_edits(&mut client, &build, &finding);
        assert_eq!(edits[0]["range"]["start"], json!({"line": header, "character": 0}), "{style}: {edits:?}");
        assert_eq!(edits[0]["newText"], "      # stagelint: ignore[lastlight/UnknownVariable]\n", "{style}");
        client.set(&build, &apply_edits(&text, &edits));
        let found = client.pulled(&build);
        assert!(found.is_empty(), "{style}: the suppression covers the whole scalar and is used: {found:?}");
        // A `#` line inside the scalar is part of it (or ends a plain one), never a suppression.
        let inside = text.replace(
            "        on `{{brnch}}`",
            "        # stagelint: ignore[lastlight/UnknownVariable]\n        on `{{brnch}}`",
        );
        client.set(&build, &inside);
        let found = client.pulled(&build);
        assert!(!found.iter().any(|d| d["code"] == "stagelint/UnusedSuppression"), "{style}: {found:?}");
        if style != "plain" {
            assert!(found.iter().any(|d| d["code"] == "lastlight/UnknownVariable"), "{style}: {found:?}");
        }
    }
}

const EXECUTE: &str = "---\nid: execute\nname: Execute\nallowedTools: [Read]\ncompletionTool: submit_execute\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\n---\n\nDo it. Call submit_execute.\n";

/// plan → execute, with a stage cassette named after `execute` and a machine cassette.
fn pipeline(execute_id: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("sm.yaml"), "entry: plan\n").expect("write");
    let plan = STAGE.replace(
        "resolutionPolicy: retry-later\n",
        &format!("resolutionPolicy: retry-later\nnext:\n  nextStages: [{execute_id}]\n"),
    );
    std::fs::write(dir.path().join("plan.md"), plan).expect("write");
    std::fs::write(dir.path().join("execute.md"), EXECUTE.replace("id: execute", &format!("id: {execute_id}")))
        .expect("write");
    let turn = "attempts:\n  - turns:\n      - response: { stop: end_turn, content: [ { text: hi } ] }\n";
    std::fs::write(dir.path().join("execute.cassette.yaml"), format!("cassette: 1\nstage: {execute_id}\n{turn}"))
        .expect("write");
    let stage_turns =
        "    attempts:\n      - turns:\n          - response: { stop: end_turn, content: [ { text: hi } ] }\n";
    std::fs::write(
        dir.path().join("sm.cassette.yaml"),
        format!("cassette: 1\nctx: {{ task: t }}\nstages:\n  plan:\n{stage_turns}  {execute_id}:\n{stage_turns}"),
    )
    .expect("write");
    dir
}

/// `documentChanges` of a workspace edit as (file name, new texts) and file renames (old, new).
/// Per file: its name and the new texts of its edits.
type TextChanges = Vec<(String, Vec<String>)>;

fn changes(edit: &serde_json::Value) -> (TextChanges, Vec<(String, String)>) {
    let name = |uri: &serde_json::Value| uri.as_str().unwrap_or("").rsplit('/').next().unwrap_or("").to_string();
    let mut texts = Vec::new();
    let mut renames = Vec::new();
    for change in edit["documentChanges"].as_array().expect("documentChanges") {
        if change["kind"] == "rename" {
            renames.push((name(&change["oldUri"]), name(&change["newUri"])));
        } else {
            let new: Vec<String> = change["edits"]
                .as_array()
                .expect("edits")
                .iter()
                .map(|e| e["newText"].as_str().unwrap_or("").to_string())
                .collect();
            texts.push((name(&change["textDocument"]["uri"]), new));
        }
    }
    (texts, renames)
}

#[test]
fn renaming_a_stage_id_renames_its_cassettes_too() {
    let dir = pipeline("execute");
    let execute = dir.path().join("execute.md");
    for can_rename_files in [true, false] {
        let mut client = Client::spawn();
        let kinds = if can_rename_files { json!(["create", "rename", "delete"]) } else { json!([]) };
        client.initialize_with(
            dir.path(),
            json!({"workspace": {"workspaceEdit": {"documentChanges": true, "resourceOperations": kinds}}}),
        );
        let at = client.at(&execute, &EXECUTE.replace("id: execute", "id: exe$0cute"));
        let mut params = at.clone();
        params["newName"] = json!("implement");
        let edit = client.request("textDocument/rename", params);
        let (texts, renames) = changes(&edit);
        let files: Vec<&str> = texts.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(files, ["execute.cassette.yaml", "execute.md", "plan.md", "sm.cassette.yaml"], "{edit}");
        assert!(texts.iter().all(|(_, new)| new == &["implement"]), "{edit}");
        if can_rename_files {
            assert_eq!(renames, [("execute.cassette.yaml".to_string(), "implement.cassette.yaml".to_string())]);
            let last = edit["documentChanges"].as_array().and_then(|c| c.last()).cloned().unwrap_or_default();
            assert_eq!(last["kind"], "rename", "the file is renamed after its edit: {edit}");
            assert_eq!(last["options"], json!({"overwrite": false, "ignoreIfExists": true}));
        } else {
            assert!(renames.is_empty(), "no file rename without resourceOperations: {edit}");
        }
    }
}

#[test]
fn the_kebab_case_fix_renames_the_stage_id_in_every_file() {
    let dir = pipeline("Execute_Step");
    let execute = dir.path().join("execute.md");
    let text = std::fs::read_to_string(&execute).expect("read");
    let mut client = Client::spawn();
    client.initialize_with(dir.path(), json!({"workspace": {"workspaceEdit": {"documentChanges": true}}}));
    client.open(&execute, &text);
    let (list, _) = client.diagnostics(&uri(&execute), |l| l.iter().any(|d| d["code"] == "sm/InvalidStageId"));
    let finding = list.iter().find(|d| d["code"] == "sm/InvalidStageId").expect("finding");
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(&execute)}, "range": finding["range"], "context": {"diagnostics": [finding]}}),
    );
    let fix = actions
        .as_array()
        .expect("actions")
        .iter()
        .find(|a| a["title"] == "Rename to `execute-step`")
        .unwrap_or_else(|| panic!("{actions}"));
    let (texts, _) = changes(&fix["edit"]);
    let files: Vec<&str> = texts.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(files, ["execute.cassette.yaml", "execute.md", "plan.md", "sm.cassette.yaml"], "{fix}");
    assert!(texts.iter().all(|(_, new)| new == &["execute-step"]), "{fix}");
}

#[test]
fn a_pulling_client_is_asked_to_refresh_and_pulls_the_dry_runs_findings() {
    let dir = workspace();
    let plan = dir.path().join("plan.md");
    let cassette = dir.path().join("plan.cassette.yaml");
    // Read is not allowed, so the call the cassette expects dispatched is denied.
    std::fs::write(&plan, STAGE.replace("allowedTools: [Read]", "allowedTools: []")).expect("write");
    std::fs::write(
        &cassette,
        "cassette: 1\nstage: plan\nctx: { task: t }\ntools:\n  Read:\n    - { anyArgs: true, result: x }\nattempts:\n  - turns:\n      - response: { stop: tool_use, content: [ { toolCall: { id: c1, name: Read, args: {} } } ] }\n        expect: [ { branch: tool, call: c1, outcome: dispatched } ]\n      - response: { stop: tool_use, content: [ { toolCall: { id: c2, name: submit_plan, args: {} } } ] }\n",
    )
    .expect("write");
    let mut client = Client::spawn();
    client.initialize_with(
        dir.path(),
        json!({"textDocument": {"diagnostic": {}}, "workspace": {"diagnostics": {"refreshSupport": true}}}),
    );
    let is_refresh = |m: &serde_json::Value| m["method"] == "workspace/diagnostic/refresh";
    client.wait("a refresh after the first check", is_refresh);
    // An edit that changes the findings asks for a refresh too.
    client.open(&plan, STAGE);
    client.wait("a refresh after an edit", is_refresh);
    client.set(&plan, &STAGE.replace("allowedTools: [Read]", "allowedTools: []"));
    client.wait("a refresh after another edit", is_refresh);
    assert!(client.pulled(&cassette).iter().any(|d| d["code"] == "cassette/ExpectationFailed"));
    let result =
        client.request("workspace/executeCommand", json!({"command": "stagelint.dryRun", "arguments": [uri(&plan)]}));
    assert_eq!(result["exitCode"], 1, "{result}");
    client.wait("a refresh after the dry-run", is_refresh);
    let pulled = client.pulled(&cassette);
    assert!(pulled.iter().any(|d| d["code"] == "cassette/ExpectationFailed"), "{pulled:?}");
    assert!(
        !client.backlog().iter().any(|m| m["method"] == "textDocument/publishDiagnostics"),
        "nothing is pushed to a pulling client, the dry-run's findings neither"
    );
}

/// An atomic workflow is re-checked in its own `<base>/<name>/` directory, with the context
/// around it (`package.json` above the base, the base's `.gitignore`), and no other workflow.
#[test]
fn an_atomic_workflow_is_rechecked_alone_with_its_context() {
    let dir = tempfile::tempdir().expect("temp dir");
    let workflow = |name: &str, min: &str| {
        format!(
            "import {{ defineWorkflow }} from \"@bastani/atomic/workflows\";\n\nexport default defineWorkflow({{ name: \"{name}\", minSDKVersion: \"{min}\" }})\n  .for<\"claude\">()\n  .run(async (ctx) => {{\n    await ctx.stage({{ name: \"a\" }}, {{}}, {{}}, async (s) => {{\n      await s.session.query(\"Go.\");\n      s.save(s.sessionId);\n    }});\n  }})\n  .compile();\n"
        )
    };
    let base = dir.path().join(".atomic/workflows");
    let hello = base.join("hello/claude/index.ts");
    let other = base.join("other/claude/index.ts");
    for path in [&hello, &other] {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    }
    std::fs::write(dir.path().join("package.json"), "{\"devDependencies\": {\"@bastani/atomic\": \"0.5.24\"}}\n")
        .expect("write");
    std::fs::write(base.join(".gitignore"), "node_modules/\n").expect("write");
    std::fs::write(&hello, workflow("hello", "0.5.24")).expect("write");
    std::fs::write(&other, workflow("other", "0.9.0")).expect("write");
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    client.diagnostics(&uri(&other), |l| l.iter().any(|d| d["code"] == "atomic/IncompatibleSdk"));
    client.open(&hello, &workflow("hello", "0.5.24"));
    client.diagnostics(&uri(&hello), |l| l.is_empty());
    // `minSDKVersion: "0.5.24"` becomes "0.6.24": newer than the package.json's version.
    client.change(&hello, 2, 2, 65, 66, "6");
    client.diagnostics(&uri(&hello), |l| l.iter().any(|d| d["code"] == "atomic/IncompatibleSdk"));
    assert!(
        !client.backlog().iter().any(|m| m["params"]["uri"] == uri(&other)),
        "the other workflow was re-published: {:?}",
        client.backlog()
    );
    // The base's `.gitignore` decides which workflows run: an edit re-checks them all.
    let ignore = base.join(".gitignore");
    client.open(&ignore, "node_modules/\n");
    client.change(&ignore, 2, 1, 0, 0, "other/\n");
    client.diagnostics(&uri(&other), |l| l.iter().any(|d| d["code"] == "atomic/NotDiscovered"));
}

/// A baseline's findings are hints labelled `stagelint baseline` (or hidden, when the client
/// asks), and a new finding beside them keeps its severity.
#[test]
fn baselined_findings_are_hints_or_hidden() {
    let dir = workspace();
    let plan = dir.path().join("plan.md");
    let broken = STAGE.replace("allowedTools: [Read]", "allowedTools: [Read, Raed]");
    std::fs::write(&plan, &broken).expect("write");
    std::fs::write(dir.path().join("stagelint.toml"), "baseline = \"stagelint-baseline.json\"\n").expect("write");
    let written = std::process::Command::new(env!("CARGO_BIN_EXE_stagelint"))
        .args(["check", "--write-baseline"])
        .current_dir(dir.path())
        .output()
        .expect("runs");
    assert!(written.status.success());
    for (options, hidden) in [(Value::Null, false), (json!({"baselined": "hide"}), true)] {
        let mut client = Client::spawn();
        client.initialize_options(dir.path(), &["utf-16"], options);
        // A new unknown tool on another line: an error, beside the baselined hint.
        client.open(&plan, &broken.replace("Call submit_plan.", "Call submit_plan. Tools: {{tool.Nope}}"));
        let (list, _) = client.diagnostics(&uri(&plan), |l| l.iter().any(|d| d["severity"] == 1));
        let baselined: Vec<&Value> = list.iter().filter(|d| d["code"] == "sm/UnknownTool").collect();
        if hidden {
            assert!(baselined.is_empty(), "{list:?}");
        } else {
            assert_eq!(baselined.len(), 1, "{list:?}");
            assert_eq!(baselined[0]["severity"], 4);
            assert_eq!(baselined[0]["source"], "stagelint baseline");
            assert_eq!(baselined[0]["data"], json!({"baselined": true}));
        }
        assert!(list.iter().any(|d| d["severity"] == 1 && d["source"] == "stagelint"), "{list:?}");
    }
}
