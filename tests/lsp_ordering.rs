//! The order in which the language server answers, as an editor sees it: an edit made while the
//! first index runs is published before the index ends; a keystroke's second pass (the cassette
//! replays) is dropped when the next edit comes first; and the first pass keeps the replay
//! findings it did not recompute, so they do not flicker. Each test builds its case so that the
//! order is forced by the work involved (a long index, a long replay), not by timing.

mod lsp_client;

use serde_json::{Value, json};

use lsp_client::{Client, uri};

const STAGE: &str = "---\nid: plan\nname: Plan\nallowedTools: [Read, Grep]\ncompletionTool: submit_plan\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5000\nresolutionPolicy: retry-later\n---\n\nTask: {{ctx.task}}. Call submit_plan.\n";

fn is_publish_for(message: &Value, uri: &str) -> bool {
    message["method"] == "textDocument/publishDiagnostics" && message["params"]["uri"] == uri
}

fn codes(message: &Value) -> Vec<String> {
    message["params"]["diagnostics"]
        .as_array()
        .map(|list| list.iter().filter_map(|d| d["code"].as_str().map(String::from)).collect())
        .unwrap_or_default()
}

#[test]
fn an_edit_made_during_the_first_index_is_published_before_the_index_ends() {
    // 300 machines: the index takes many batches; one scope's check takes one.
    let dir = tempfile::tempdir().expect("temp dir");
    for n in 0..300 {
        let sm = dir.path().join(format!("sm-{n:03}"));
        std::fs::create_dir(&sm).expect("mkdir");
        std::fs::write(sm.join("sm.yaml"), "entry: plan\n").expect("write");
        for stage in ["plan", "b", "c", "d", "e"] {
            std::fs::write(sm.join(format!("{stage}.md")), STAGE.replace("id: plan", &format!("id: {stage}")))
                .expect("write");
        }
    }
    let plan = dir.path().join("sm-299/plan.md");
    let mut client = Client::spawn();
    client.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(dir.path()), "capabilities": {"window": {"workDoneProgress": true}}}),
    );
    client.notify("initialized", json!({}));
    client.open(&plan, STAGE);
    // The open document's scope is checked first, while the workspace is still being listed.
    client.published(&uri(&plan), |p| p["version"] == 1);
    client.wait("the index to begin", |m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "begin");
    client.set(&plan, &STAGE.replace("turnCap: 5000", "turnCap: 0"));
    let edited = client.published(&uri(&plan), |p| p["version"] == 2);
    assert!(
        edited["diagnostics"].as_array().is_some_and(|l| l.iter().any(|d| d["code"] == "sm/StageTurnCapTooLow")),
        "{edited}"
    );
    // The index had not finished: its end comes after the edit's publish.
    let ended_before =
        client.backlog().iter().any(|m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end");
    assert!(!ended_before, "the edit waited for the whole index");
    client.wait("the index to end", |m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end");
}

/// A stage with a cassette of `reads` `Read` calls, then one `Grep` call, then the completion:
/// taking `Grep` away is found only by replaying the whole cassette, which takes a while.
fn long_replay(reads: usize) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("sm.yaml"), "entry: plan\n").expect("write");
    let plan = dir.path().join("plan.md");
    std::fs::write(&plan, STAGE).expect("write");
    let mut cassette = String::from(
        "cassette: 1\nstage: plan\nctx: { task: t }\ntools:\n  Read:\n    - { anyArgs: true, result: x }\n  Grep:\n    - { anyArgs: true, result: y }\nattempts:\n  - turns:\n",
    );
    let mut turn = |id: usize, tool: &str| {
        cassette.push_str(&format!(
            "      - response: {{ stop: tool_use, content: [ {{ toolCall: {{ id: c{id}, name: {tool}, args: {{}} }} }} ] }}\n        expect: [ {{ branch: tool, call: c{id}, outcome: dispatched }} ]\n"
        ));
    };
    for id in 0..reads {
        turn(id, "Read");
    }
    turn(reads, "Grep");
    cassette.push_str(&format!(
        "      - response: {{ stop: tool_use, content: [ {{ toolCall: {{ id: c{}, name: submit_plan, args: {{}} }} }} ] }}\n",
        reads + 1
    ));
    let path = dir.path().join("plan.cassette.yaml");
    std::fs::write(&path, cassette).expect("write");
    (dir, plan, path)
}

/// The stage with a field the runtime ignores: a finding on the stage (so its first pass
/// publishes) that changes nothing a replay sees.
fn with_unknown_field(stage: &str) -> String {
    stage.replace("name: Plan\n", "name: Plan\nnotes: x\n")
}

fn idle(client: &mut Client) {
    assert_eq!(client.request("stagelint/idle", json!(null)), json!(true), "the server became idle");
    client.wait("the idle notification", |m| m["method"] == "stagelint/idle");
}

#[test]
fn a_second_pass_made_stale_by_the_next_edit_never_publishes() {
    let (dir, plan, cassette) = long_replay(3000);
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    client.open(&plan, STAGE);
    idle(&mut client);
    let no_grep = STAGE.replace("allowedTools: [Read, Grep]", "allowedTools: [Read]");
    // Alone, taking Grep away is found by the second pass, on the cassette's Grep turn.
    client.set(&plan, &no_grep);
    client.diagnostics(&uri(&cassette), |l| l.iter().any(|d| d["code"] == "cassette/ExpectationFailed"));
    client.set(&plan, STAGE);
    client.diagnostics(&uri(&cassette), |l| l.is_empty());
    idle(&mut client);
    client.take_backlog();
    // Now the same edit, undone as soon as its first pass is published (a field the runtime
    // ignores makes it publish): its second pass is still replaying 3,000 turns, and its
    // result must not reach the editor.
    client.set(&plan, &with_unknown_field(&no_grep));
    client.published(&uri(&plan), |p| p["version"] == 4);
    client.set(&plan, STAGE);
    idle(&mut client);
    let stale: Vec<&Value> = client
        .backlog()
        .iter()
        .filter(|m| is_publish_for(m, &uri(&cassette)) && codes(m).iter().any(|c| c == "cassette/ExpectationFailed"))
        .collect();
    assert!(stale.is_empty(), "a cancelled second pass published: {stale:?}");
}

#[test]
fn the_first_pass_keeps_the_replay_findings_until_the_second_pass_is_in() {
    let (dir, plan, cassette) = long_replay(3000);
    let mut client = Client::spawn();
    client.initialize(dir.path(), &["utf-16"]);
    let no_grep = STAGE.replace("allowedTools: [Read, Grep]", "allowedTools: [Read]");
    client.open(&plan, &no_grep);
    client.diagnostics(&uri(&cassette), |l| l.iter().any(|d| d["code"] == "cassette/ExpectationFailed"));
    idle(&mut client);
    client.take_backlog();
    // An edit that changes nothing a replay sees: the first pass does not replay, and must not
    // clear the cassette's finding only for the second pass to put it back.
    client.set(&plan, &with_unknown_field(&no_grep));
    client.published(&uri(&plan), |p| p["version"] == 2);
    idle(&mut client);
    let cleared: Vec<&Value> = client
        .backlog()
        .iter()
        .filter(|m| is_publish_for(m, &uri(&cassette)) && !codes(m).iter().any(|c| c == "cassette/ExpectationFailed"))
        .collect();
    assert!(cleared.is_empty(), "the cassette's finding flickered: {cleared:?}");
    // The finding stands, and the stage itself was checked with the new text.
    client.set(&plan, STAGE);
    client.diagnostics(&uri(&cassette), |l| l.is_empty());
}
