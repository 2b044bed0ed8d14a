//! The runtime, branch by branch, written from the spec's sentences (`spec/domain.md` §1.3–1.5,
//! `spec/dryrun.md` §3.3). Each test runs a stage (or a machine) against a small cassette and
//! asserts the exact event sequence, with the fields that matter.

mod common;

use std::path::Path;

use serde_json::Value;
use stagelint::config::Config;
use stagelint::runtime::{self, DryRun, Options};
use stagelint::workspace::Workspace;

const PLAN: &str = "---
id: plan
name: Plan
allowedTools: [Read, Grep]
completionTool: submit_plan
completionSchema:
  type: object
  required: [summary, steps]
  properties:
    summary: { type: string }
    steps: { type: array, items: { type: string } }
retryPolicy: { maxAttempts: 2, backoff: none }
turnCap: 3
resolutionPolicy: retry-later
---
Plan: {{ctx.task}}. Call `submit_plan` when done.
";

const DONE: &str = "{ toolCall: { id: cX, name: submit_plan, args: { summary: s, steps: [a] } } }";

/// A stage cassette for `plan` with `ctx: {task: t}`, the given extra top-level YAML and turns
/// per attempt (each turn a flow-mapping `response:` value or a whole turn mapping).
fn cassette(extra: &str, attempts: &[&[&str]]) -> String {
    let mut text = format!("cassette: 1\nstage: plan\nctx: {{ task: t }}\n{extra}attempts:\n");
    for (i, turns) in attempts.iter().enumerate() {
        let empty = if turns.is_empty() { " []" } else { "" };
        text.push_str(&format!("  - attempt: {}\n    turns:{empty}\n", i + 1));
        for turn in *turns {
            if turn.starts_with("response:") || turn.starts_with("error:") {
                text.push_str(&format!("      - {turn}\n"));
            } else {
                text.push_str(&format!("      - response: {{ stop: tool_use, content: [ {turn} ] }}\n"));
            }
        }
    }
    text
}

fn call(id: &str, name: &str, args: &str) -> String {
    format!("{{ toolCall: {{ id: {id}, name: {name}, args: {args} }} }}")
}

fn done(id: &str) -> String {
    DONE.replace("cX", id)
}

struct Ran {
    _dir: tempfile::TempDir,
    workspace: Workspace,
    run: DryRun,
}

fn run_files(files: &[(&str, &str)], target: &str, options: Options) -> Ran {
    try_run_files(files, target, None, options).expect("dry-run starts")
}

/// Writes `files` to a temp dir and dry-runs `target` against `cassette` (a file name, else
/// the conventional one).
fn try_run_files(
    files: &[(&str, &str)],
    target: &str,
    cassette: Option<&str>,
    options: Options,
) -> Result<Ran, String> {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(path, text).expect("write");
    }
    let mut configs = stagelint::workspace::discover::ConfigCache::new(Some(Config::defaults(dir.path())));
    let overlay = std::collections::HashMap::new();
    let cassette = cassette.map(|name| dir.path().join(name));
    let (workspace, run) =
        runtime::dry_run_path(&dir.path().join(target), cassette.as_deref(), options, &mut configs, &overlay)?;
    Ok(Ran { _dir: dir, workspace, run })
}

fn run_stage(stage: &str, cassette: &str) -> Ran {
    let options = Options { strict: false, explain_init: true };
    run_files(&[("plan.md", stage), ("plan.cassette.yaml", cassette)], "plan.md", options)
}

/// Each event as `Name field=value …` with the fields a test cares about (`stage` only on
/// the events that name the stage they are about; `stages_scope` checks the rest).
fn events(run: &DryRun) -> Vec<String> {
    run.trace
        .events
        .iter()
        .filter(|e| !matches!(e.name, "DryRunSummary" | "DryRunMismatch"))
        .map(|e| {
            let mut line = e.name.to_string();
            let about_stage = matches!(e.name, "StageSetup" | "StageExited" | "StageNext" | "StageCancelled");
            for key in [
                "attempt", "turn", "call", "calls", "outcome", "end", "turns", "verdict", "reason", "decision", "via",
                "stage",
            ] {
                if key == "stage" && !about_stage {
                    continue;
                }
                if let Some(value) = e.data.get(key) {
                    let value = match value {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    line.push_str(&format!(" {key}={value}"));
                }
            }
            line
        })
        .collect()
}

fn codes(run: &DryRun) -> Vec<&'static str> {
    run.findings.iter().map(|d| d.code).collect()
}

fn result(run: &DryRun) -> Value {
    run.trace.events.iter().rev().find(|e| e.name == "StageExited").map_or(Value::Null, |e| e.data["result"].clone())
}

const SETUP: [&str; 3] =
    ["StageSetup outcome=ok stage=plan", "StageInitRendered", "StageCheckGate attempt=1 outcome=proceed"];

fn with_setup(rest: &[&str]) -> Vec<String> {
    SETUP.iter().chain(rest).map(|s| s.to_string()).collect()
}

// ---- Act: the completion channel ----

#[test]
fn a_valid_completion_ends_act_and_assert_says_ok() {
    let ran = run_stage(PLAN, &cassette("", &[&[&done("c1")]]));
    assert_eq!(
        events(&ran.run),
        with_setup(&[
            "ProviderResponse attempt=1 turn=1",
            "CompletionAccepted attempt=1 turn=1 call=c1",
            "ActEnded attempt=1 end=completed turns=1",
            "StageAssertOutcome attempt=1 verdict=ok reason=completed via=default",
            "StageExited stage=plan",
            "StageNext stage=plan",
        ])
    );
    assert_eq!(result(&ran.run)["parsed"], serde_json::json!({"summary": "s", "steps": ["a"]}));
    assert_eq!(ran.run.exit_code(), 0, "{:?}", ran.run.findings);
}

#[test]
fn a_payload_that_fails_the_schema_is_returned_as_a_tool_result_and_act_continues() {
    let bad = call("c1", "submit_plan", "{ summary: s, steps: one }");
    // The second request holds: start, the assistant turn, the parse error as a tool result.
    let second =
        format!("response: {{ stop: tool_use, content: [ {} ] }}\n        request: {{ count: 3 }}", done("c2"));
    let ran = run_stage(PLAN, &cassette("", &[&[&bad, &second]]));
    assert_eq!(
        events(&ran.run),
        with_setup(&[
            "ProviderResponse attempt=1 turn=1",
            "CompletionParseFailed attempt=1 turn=1 call=c1",
            "ProviderResponse attempt=1 turn=2",
            "CompletionAccepted attempt=1 turn=2 call=c2",
            "ActEnded attempt=1 end=completed turns=2",
            "StageAssertOutcome attempt=1 verdict=ok reason=completed via=default",
            "StageExited stage=plan",
            "StageNext stage=plan",
        ])
    );
    let failed = ran.run.trace.events.iter().find(|e| e.name == "CompletionParseFailed").expect("event");
    assert_eq!(failed.data["errors"][0]["at"], "/steps");
    assert!(codes(&ran.run).is_empty(), "no drift: the tool result is on the transcript: {:?}", ran.run.findings);
}

#[test]
fn arguments_that_are_not_json_are_a_parse_failure_not_a_crash() {
    let raw = "{ toolCall: { id: c1, name: submit_plan, argsRaw: '{\"summary\": \"x\", \"steps\": [\"a\"' } }";
    let ran = run_stage(PLAN, &cassette("", &[&[raw, &done("c2")]]));
    let failed = ran.run.trace.events.iter().find(|e| e.name == "CompletionParseFailed").expect("parse failure");
    assert!(failed.data["errors"][0]["msg"].as_str().unwrap_or("").contains("not JSON"), "{failed:?}");
    assert_eq!(result(&ran.run)["verdict"], "ok");
}

#[test]
fn plain_text_is_answered_with_a_steering_message_and_counts_as_a_turn() {
    let text = "response: { stop: end_turn, content: [ { text: thinking aloud } ] }";
    // Start, the text reply, the steering message.
    let second =
        format!("response: {{ stop: tool_use, content: [ {} ] }}\n        request: {{ count: 3 }}", done("c1"));
    let ran = run_stage(PLAN, &cassette("", &[&[text, &second]]));
    assert_eq!(
        events(&ran.run)[3..6],
        ["ProviderResponse attempt=1 turn=1", "SteeringAppended attempt=1 turn=1", "ProviderResponse attempt=1 turn=2"]
    );
    assert!(codes(&ran.run).is_empty(), "{:?}", ran.run.findings);
}

#[test]
fn the_completion_tool_with_siblings_rejects_the_whole_batch_and_dispatches_nothing() {
    let batch = format!("{}, {}", call("c1", "Read", "{ path: a }"), done("c2"));
    let ran = run_stage(PLAN, &cassette("", &[&[&batch, &done("c3")]]));
    let all = events(&ran.run);
    assert_eq!(
        all[3..5],
        ["ProviderResponse attempt=1 turn=1", "BatchRejected attempt=1 turn=1 calls=[\"c1\",\"c2\"]"]
    );
    assert!(!all.iter().any(|e| e.starts_with("ToolCallStarted")), "nothing dispatched: {all:#?}");
    assert_eq!(result(&ran.run)["verdict"], "ok");
}

#[test]
fn two_completion_calls_are_rejected_the_same_way() {
    let batch = format!("{}, {}", done("c1"), done("c2"));
    let ran = run_stage(PLAN, &cassette("", &[&[&batch, &done("c3")]]));
    assert_eq!(events(&ran.run)[4], "BatchRejected attempt=1 turn=1 calls=[\"c1\",\"c2\"]");
}

#[test]
fn an_allowed_tool_is_dispatched_to_the_turns_result_before_the_fake_table() {
    let tools =
        "tools:\n  Read:\n    - { args: { path: a }, result: from-table }\n    - { anyArgs: true, result: any }\n";
    let with_result = format!(
        "response: {{ stop: tool_use, content: [ {} ] }}\n        results: {{ c1: {{ content: inline }} }}",
        call("c1", "Read", "{ path: a }")
    );
    let from_table = call("c2", "Read", "{ path: a }");
    let any = call("c3", "Read", "{ path: b }");
    let ran = run_stage(PLAN, &cassette(tools, &[&[&with_result, &from_table, &any], &[&done("c4")]]));
    let dispatched: Vec<String> = events(&ran.run).into_iter().filter(|e| e.starts_with("ToolCallSucceeded")).collect();
    assert_eq!(
        dispatched,
        [
            "ToolCallSucceeded attempt=1 turn=1 call=c1 via=turn.results",
            "ToolCallSucceeded attempt=1 turn=2 call=c2 via=tools",
            "ToolCallSucceeded attempt=1 turn=3 call=c3 via=tools",
        ]
    );
}

#[test]
fn a_dispatched_call_without_a_recorded_result_is_a_closed_world_error() {
    let ran = run_stage(PLAN, &cassette("", &[&[&call("c1", "Grep", "{ pattern: x }"), &done("c2")]]));
    assert_eq!(codes(&ran.run), ["cassette/ToolFakeMissing"]);
    assert!(events(&ran.run).contains(&"ToolCallFailed attempt=1 turn=1 call=c1 via=missing".to_string()));
    assert_eq!(ran.run.exit_code(), 1);
}

#[test]
fn a_call_no_fake_matches_names_its_args_and_the_fakes_for_other_args() {
    let tools = "tools:\n  Read:\n    - { args: { path: a }, result: from-table }\n";
    let ran = run_stage(PLAN, &cassette(tools, &[&[&call("c1", "Read", "{ path: b }"), &done("c2")]]));
    assert_eq!(codes(&ran.run), ["cassette/ToolFakeMissing"]);
    let finding = &ran.run.findings[0];
    assert!(
        finding.message.contains(r#"with args {"path":"b"} but no `tools.Read` fake has those args"#),
        "{}",
        finding.message
    );
    assert_eq!(finding.related.len(), 1);
    assert_eq!(finding.related[0].message, "a fake for other args");
}

#[test]
fn an_out_of_envelope_call_is_denied_without_an_interactor() {
    let ran = run_stage(PLAN, &cassette("", &[&[&call("c1", "Edit", "{ path: a }"), &done("c2")]]));
    assert_eq!(
        events(&ran.run)[4..6],
        [
            "GrantRequested attempt=1 turn=1 call=c1",
            "ToolCallDenied attempt=1 turn=1 call=c1 decision=deny via=no interactor"
        ]
    );
    let requested = ran.run.trace.events.iter().find(|e| e.name == "GrantRequested").expect("proposal");
    // argsDigest is SHA-256 over the canonical arguments.
    assert_eq!(requested.data["argsDigest"], runtime::digest::args_digest(&serde_json::json!({"path": "a"})));
    assert_eq!(requested.data["proposalId"], "p1");
}

#[test]
fn grants_come_from_the_turn_then_the_interactor() {
    let tools = "interactor: { grantStageTool: approve }\ntools:\n  Edit:\n    - { anyArgs: true, result: edited }\n";
    let denied_here = format!(
        "response: {{ stop: tool_use, content: [ {} ] }}\n        grant: {{ c1: deny }}",
        call("c1", "Edit", "{ path: a }")
    );
    let approved = call("c2", "Edit", "{ path: a }");
    let ran = run_stage(PLAN, &cassette(tools, &[&[&denied_here, &approved, &done("c3")]]));
    let grants: Vec<String> =
        events(&ran.run).into_iter().filter(|e| e.starts_with("Grant") || e.starts_with("ToolCall")).collect();
    assert_eq!(
        grants,
        [
            "GrantRequested attempt=1 turn=1 call=c1",
            "ToolCallDenied attempt=1 turn=1 call=c1 decision=deny via=cassette.grant",
            // The same tool and arguments need a fresh grant: a token covers one proposal.
            "GrantRequested attempt=1 turn=2 call=c2",
            "GrantApproved attempt=1 turn=2 call=c2 via=cassette.interactor",
            "ToolCallStarted attempt=1 turn=2 call=c2",
            "ToolCallSucceeded attempt=1 turn=2 call=c2 via=tools",
        ]
    );
    let proposals: Vec<&Value> =
        ran.run.trace.events.iter().filter(|e| e.name == "GrantRequested").map(|e| &e.data["proposalId"]).collect();
    assert_eq!(proposals, ["p1", "p2"]);
}

#[test]
fn turn_cap_ends_act_with_cap_hit_and_the_default_assert_retries_with_a_fresh_count() {
    let read = call("c1", "Read", "{ path: a }");
    let tools = "tools:\n  Read:\n    - { anyArgs: true, result: x }\n";
    let ran = run_stage(
        PLAN,
        &cassette(tools, &[&[&read, &read.replace("c1", "c2"), &read.replace("c1", "c3")], &[&done("c4")]]),
    );
    let all = events(&ran.run);
    let wanted = [
        "ActEnded attempt=1 end=capHit turns=3",
        "StageAssertOutcome attempt=1 verdict=retry reason=capHit via=default",
        "RetryAppended attempt=2 reason=capHit",
        "StageCheckGate attempt=2 outcome=proceed",
        "ProviderResponse attempt=2 turn=1",
    ];
    let at = all.iter().position(|e| e == wanted[0]).expect("cap hit");
    assert_eq!(all[at..at + 5], wanted);
    // Retry re-enters Act without re-rendering the body.
    assert_eq!(all.iter().filter(|e| e.starts_with("StageInitRendered")).count(), 1);
    let result = result(&ran.run);
    assert_eq!(
        (result["verdict"].as_str(), result["attemptCount"].as_u64(), result["capHit"].as_bool()),
        (Some("ok"), Some(2), Some(false))
    );
}

#[test]
fn a_valid_completion_on_the_last_turn_wins_over_the_cap() {
    let read = call("c1", "Read", "{ path: a }");
    let tools = "tools:\n  Read:\n    - { anyArgs: true, result: x }\n";
    let ran = run_stage(PLAN, &cassette(tools, &[&[&read, &read.replace("c1", "c2"), &done("c3")]]));
    assert!(events(&ran.run).contains(&"ActEnded attempt=1 end=completed turns=3".to_string()));
}

#[test]
fn retry_on_the_last_attempt_fails_the_stage() {
    let text = "response: { stop: end_turn, content: [ { text: hm } ] }";
    let ran = run_stage(PLAN, &cassette("", &[&[text, text, text], &[text, text, text]]));
    let result = result(&ran.run);
    assert_eq!(result["verdict"], "fail");
    assert_eq!(result["capHit"], true);
    assert_eq!(result["reason"], "retry budget exhausted (2 attempts)");
    // With one attempt allowed, the reason is still grammatical.
    let one = PLAN.replace("maxAttempts: 2", "maxAttempts: 1");
    let ran = run_stage(&one, &cassette("", &[&[text, text, text]]));
    assert_eq!(self::result(&ran.run)["reason"], "retry budget exhausted (1 attempt)");
}

#[test]
fn a_scripted_assert_and_check_gate_replace_the_defaults() {
    let gated = "checkGate: skip\n";
    let ran = run_stage(PLAN, &cassette(gated, &[&[]]));
    assert_eq!(
        events(&ran.run),
        with_setup(&[])
            .into_iter()
            .map(|e| e.replace("outcome=proceed", "outcome=skip"))
            .chain([
                "StageAssertOutcome attempt=1 verdict=skip reason=checkGate via=checkGate".to_string(),
                "StageExited stage=plan".to_string(),
                "StageNext stage=plan".to_string(),
            ])
            .collect::<Vec<_>>()
    );
    let scripted = cassette("", &[&[&done("c1")]]).replace("  - attempt: 1\n", "  - attempt: 1\n    assert: fail\n");
    let ran = run_stage(PLAN, &scripted);
    assert!(
        events(&ran.run)
            .contains(&"StageAssertOutcome attempt=1 verdict=fail reason=completed via=cassette.assert".to_string())
    );
}

#[test]
fn a_transient_provider_error_ends_act_and_retries() {
    let error = "error: { class: ProviderTransient, code: rate_limited }";
    let ran = run_stage(PLAN, &cassette("", &[&[error], &[&done("c1")]]));
    let all = events(&ran.run);
    assert!(all.contains(&"ActEnded attempt=1 end=providerError turns=1".to_string()), "{all:#?}");
    assert!(
        all.contains(&"StageAssertOutcome attempt=1 verdict=retry reason=providerTransient via=default".to_string())
    );
    assert_eq!(result(&ran.run)["verdict"], "ok");
}

// ---- Setup and Init ----

#[test]
fn init_fails_on_unknown_tools_collisions_and_unresolved_placeholders() {
    let stage = PLAN
        .replace("allowedTools: [Read, Grep]", "allowedTools: [Read, Teleport]")
        .replace("completionTool: submit_plan", "completionTool: Glob")
        .replace("{{ctx.task}}", "{{ctx.task}} {{ctx.branch}}");
    let ran = run_stage(&stage, &cassette("", &[&[&done("c1")]]));
    let reasons: Vec<&str> =
        ran.run.trace.events.iter().filter(|e| e.name == "StageInitFailed").map(|e| e.str("reason")).collect();
    assert_eq!(reasons, ["UnknownTool", "CompletionToolCollision", "UnresolvedPlaceholder"]);
    assert!(!events(&ran.run).iter().any(|e| e.starts_with("ProviderResponse")), "nothing runs after Init fails");
    assert_eq!(ran.run.exit_code(), 2);
    // The CLI explains with the lint findings of the stage.
    assert!(codes(&ran.run).contains(&"sm/UnknownTool"), "{:?}", codes(&ran.run));
    assert!(codes(&ran.run).contains(&"cassette/ContextIncomplete"), "{:?}", codes(&ran.run));
}

#[test]
fn setup_validates_each_upstream_result_against_inputs_schema() {
    let stage = PLAN.replace(
        "turnCap: 3",
        "turnCap: 3\ninputsSchema: { type: object, required: [parsed], properties: { parsed: { type: object } } }",
    );
    let bad =
        cassette("", &[&[&done("c1")]]).replace("ctx: { task: t }", "ctx: { task: t, upstream: [ { verdict: ok } ] }");
    let ran = run_stage(&stage, &bad);
    let failed = ran.run.trace.events.iter().find(|e| e.name == "StageInitFailed").expect("init failed");
    assert_eq!(failed.str("reason"), "InputsSchemaInvalid");
    assert!(failed.str("detail").starts_with("ctx.upstream[0]"), "{failed:?}");
    let good = bad.replace("{ verdict: ok }", "{ verdict: ok, parsed: {} }");
    assert_eq!(run_stage(&stage, &good).run.exit_code(), 0);
}

#[test]
fn ids_are_pinned_never_random() {
    let ran = run_stage(
        &PLAN.replace("{{ctx.task}}", "{{ctx.task}} {{ctx.stageExecutionId}}"),
        &cassette("", &[&[&done("c1")]]),
    );
    let setup = &ran.run.trace.events[0];
    assert_eq!(setup.data["ids"], serde_json::json!({"workflowRunId": "wr-dryrun", "stageExecutionId": "se-plan-1"}));
}

// ---- the cassette against the run ----

#[test]
fn running_out_of_turns_and_leaving_turns_unused_are_reported_on_the_cassette() {
    let text = "response: { stop: end_turn, content: [ { text: hm } ] }";
    let short = run_stage(PLAN, &cassette("", &[&[text]]));
    assert_eq!(codes(&short.run), ["cassette/CassetteExhausted"]);
    assert_eq!(short.run.exit_code(), 1);
    let long = run_stage(PLAN, &cassette("", &[&[&done("c1"), text], &[text]]));
    assert_eq!(codes(&long.run), ["cassette/CassetteUnconsumed", "cassette/CassetteUnconsumed"]);
    assert_eq!(long.run.exit_code(), 0, "unused turns are a warning");
}

#[test]
fn expectations_are_checked_per_turn_per_attempt_and_on_the_result() {
    let turn = format!(
        "response: {{ stop: tool_use, content: [ {} ] }}\n        expect: [ {{ branch: tool, call: c1, outcome: dispatched }} ]",
        call("c1", "Edit", "{ path: a }")
    );
    let mut text = cassette("", &[&[&turn, &done("c2")]]);
    text.push_str("    expectEnd: { act: capHit, assert: ok }\nexpectResult: { verdict: ok, attemptCount: 1 }\n");
    let ran = run_stage(PLAN, &text);
    let messages: Vec<&str> = ran.run.findings.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "expected tool c1 (dispatched), but the runtime took tool c1 (denied)",
            "expected Act to end with `capHit`, but it was `completed`",
        ]
    );
    assert_eq!((ran.run.passed, ran.run.failed), (3, 2));
    assert_eq!(ran.run.exit_code(), 1);
}

#[test]
fn an_edited_prompt_is_drift_a_warning_unless_strict() {
    let first = format!(
        "response: {{ stop: tool_use, content: [ {} ] }}\n        request: {{ system: \"sha256:0000000000000000\" }}",
        done("c1")
    );
    let text = cassette("", &[&[&first]]);
    let ran = run_stage(PLAN, &text);
    assert_eq!(codes(&ran.run), ["cassette/RequestDrift"]);
    assert_eq!(ran.run.exit_code(), 0);
    let strict = run_files(
        &[("plan.md", PLAN), ("plan.cassette.yaml", &text)],
        "plan.md",
        Options { strict: true, explain_init: true },
    );
    assert_eq!(strict.run.exit_code(), 1);
    // The fix writes the current digest; with it the drift is gone.
    let fix = ran.run.findings[0].fix.as_ref().expect("a fix");
    let fixed = text.replace("\"sha256:0000000000000000\"", &fix.edits[0].1.replacement);
    assert!(codes(&run_stage(PLAN, &fixed).run).is_empty());
}

#[test]
fn the_same_dry_run_twice_is_byte_identical() {
    let text = cassette(
        "tools:\n  Read:\n    - { anyArgs: true, result: x }\n",
        &[&[&call("c1", "Edit", "{ a: 1 }"), &call("c2", "Read", "{}"), &done("c3")]],
    );
    let a = run_stage(PLAN, &text);
    let mut configs = stagelint::workspace::discover::ConfigCache::new(Some(Config::defaults(a._dir.path())));
    let overlay = std::collections::HashMap::new();
    let options = Options { strict: false, explain_init: true };
    let (workspace, b) =
        runtime::dry_run_path(&a._dir.path().join("plan.md"), None, options, &mut configs, &overlay).expect("runs");
    assert_eq!(a.run.trace.to_json_lines(), b.trace.to_json_lines());
    assert_eq!(runtime::report::timeline(&a.workspace, &a.run), runtime::report::timeline(&workspace, &b));
}

// ---- Next: a whole machine ----

fn stage(id: &str, next: &str, body: &str) -> String {
    format!(
        "---\nid: {id}\nname: {id}\nallowedTools: []\ncompletionTool: done_{u}\ncompletionSchema: {{ type: object, properties: {{ note: {{ type: string }} }} }}\nretryPolicy: {{ maxAttempts: 1, backoff: none }}\nturnCap: 2\nresolutionPolicy: fail\n{next}---\n{body} Call `done_{u}`.\n",
        u = id.replace('-', "_")
    )
}

/// A machine cassette where each listed stage completes with `{note: <id>}`, except `fails`,
/// which answers in plain text until its turnCap (2) is hit.
fn machine_cassette(stages: &[&str], fails: Option<&str>) -> String {
    let mut text = "cassette: 1\nctx: { task: t }\nstages:\n".to_string();
    for id in stages {
        let u = id.replace('-', "_");
        text.push_str(&format!("  {id}:\n    attempts:\n      - turns:\n"));
        if Some(*id) == fails {
            text.push_str(&"          - response: { stop: end_turn, content: [ { text: no } ] }\n".repeat(2));
        } else {
            text.push_str(&format!(
                "          - response: {{ stop: tool_use, content: [ {{ toolCall: {{ id: {id}-c1, name: done_{u}, args: {{ note: {id} }} }} }} ] }}\n"
            ));
        }
    }
    text
}

/// `plan` fanning out to `siblings` in parallel, joined by `review` (with `review_body`).
fn fan_out(siblings: &[&str], review_body: &str, cassette: String) -> Vec<(String, String)> {
    let next = format!("next: {{ nextStages: [{}], execution: parallel, join: review }}\n", siblings.join(", "));
    let mut files = vec![
        ("sm.yaml".to_string(), "entry: plan\n".to_string()),
        ("plan.md".to_string(), stage("plan", &next, "Task {{ctx.task}}.")),
        ("review.md".to_string(), stage("review", "", review_body)),
        ("sm.cassette.yaml".to_string(), cassette),
    ];
    files.extend(siblings.iter().map(|id| (format!("{id}.md"), stage(id, "", "Work on {{ctx.task}}."))));
    files
}

fn run_machine<N: AsRef<str>>(files: &[(N, String)]) -> Ran {
    let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (n.as_ref(), t.as_str())).collect();
    run_files(&files, ".", Options::default())
}

fn stages_run(run: &DryRun) -> Vec<String> {
    run.trace
        .events
        .iter()
        .filter(|e| matches!(e.name, "StageSetup" | "StageCancelled" | "MachineFinished"))
        .map(|e| match e.name {
            "StageSetup" => format!("{} upstream={}", e.str("stage"), e.num("upstream")),
            "StageCancelled" => format!("cancelled {}", e.str("stage")),
            _ => format!("finished {} {}", e.str("outcome"), e.str("code")).trim_end().to_string(),
        })
        .collect()
}

#[test]
fn sequential_successors_see_the_previous_result_as_upstream() {
    let files = [
        ("sm.yaml", "entry: plan\n".to_string()),
        ("plan.md", stage("plan", "next: { nextStages: [build] }\n", "Task {{ctx.task}}.")),
        ("build.md", stage("build", "", "Plan said {{ctx.upstream[0].parsed.note}}.")),
        ("sm.cassette.yaml", machine_cassette(&["plan", "build"], None)),
    ];
    let ran = run_machine(&files);
    assert_eq!(stages_run(&ran.run), ["plan upstream=0", "build upstream=1", "finished completed"]);
    assert_eq!(ran.run.exit_code(), 0, "{:?}", ran.run.findings);
}

#[test]
fn parallel_siblings_run_on_a_frozen_context_and_the_join_sees_them_in_order() {
    let review = "Tests {{ctx.upstream[0].parsed.note}}, lint {{ctx.upstream[1].parsed.note}}.";
    let files = fan_out(&["test", "lint"], review, machine_cassette(&["plan", "test", "lint", "review"], None));
    let ran = run_machine(&files);
    assert_eq!(
        stages_run(&ran.run),
        ["plan upstream=0", "test upstream=0", "lint upstream=0", "review upstream=2", "finished completed"]
    );
    let rendered = ran.run.trace.events.iter().rfind(|e| e.name == "StageInitRendered").expect("join rendered");
    assert_eq!(
        rendered.data["placeholders"],
        serde_json::json!(["ctx.upstream[0].parsed.note", "ctx.upstream[1].parsed.note"])
    );
}

#[test]
fn a_failing_sibling_cancels_the_rest_and_the_join_never_runs() {
    let cassette = machine_cassette(&["plan", "test", "lint", "docs", "review"], Some("lint"));
    let files = fan_out(&["test", "lint", "docs"], "Review.", cassette);
    let ran = run_machine(&files);
    assert_eq!(
        stages_run(&ran.run),
        [
            "plan upstream=0",
            "test upstream=0",
            "lint upstream=0",
            "cancelled docs",
            "finished failed ExtensionHost/ParallelSiblingFailure",
        ]
    );
    // Stage outcomes are not dry-run outcomes: the cassette did what it said, so no mismatch
    // except the docs and review turns nobody asked for.
    assert!(ran.run.findings.iter().all(|d| d.code == "cassette/CassetteUnconsumed"), "{:?}", ran.run.findings);
}

#[test]
fn a_join_runs_only_when_every_sibling_said_ok() {
    let cassette = machine_cassette(&["plan", "test", "lint", "review"], None).replace(
        "  lint:\n    attempts:\n      - turns:",
        "  lint:\n    attempts:\n      - assert: skip\n        turns:",
    );
    let files = fan_out(&["test", "lint"], "Review.", cassette);
    let ran = run_machine(&files);
    assert_eq!(
        stages_run(&ran.run),
        [
            "plan upstream=0",
            "test upstream=0",
            "lint upstream=0",
            "finished failed ExtensionHost/JoinPreconditionViolated"
        ]
    );
}

#[test]
fn stage_cassettes_found_by_convention_drive_a_machine_run() {
    let files = [
        ("sm.yaml", "entry: plan\n".to_string()),
        ("plan.md", stage("plan", "next: { nextStages: [build] }\n", "Task {{ctx.task}}.")),
        ("build.md", stage("build", "", "Build.")),
        ("plan.cassette.yaml", "cassette: 1\nstage: plan\nctx: { task: t }\nattempts:\n  - turns:\n      - response: { stop: tool_use, content: [ { toolCall: { id: c1, name: done_plan, args: {} } } ] }\n".to_string()),
        ("build.cassette.yaml", "cassette: 1\nstage: build\nattempts:\n  - turns:\n      - response: { stop: tool_use, content: [ { toolCall: { id: c1, name: done_build, args: {} } } ] }\n".to_string()),
    ];
    let ran = run_machine(&files);
    assert_eq!(stages_run(&ran.run), ["plan upstream=0", "build upstream=1", "finished completed"]);
}

/// `a → b → a`, with `plan`-style stages that complete at once.
fn cycle(cassette: &str) -> Vec<(String, String)> {
    vec![
        ("sm.yaml".to_string(), "entry: a\n".to_string()),
        ("a.md".to_string(), stage("a", "next: { nextStages: [b] }\n", "A.")),
        ("b.md".to_string(), stage("b", "next: { nextStages: [a] }\n", "B.")),
        ("sm.cassette.yaml".to_string(), cassette.to_string()),
    ]
}

fn completes(id: &str, call: &str) -> String {
    let u = id.replace('-', "_");
    format!(
        "{{ attempts: [ {{ turns: [ {{ response: {{ stop: tool_use, content: [ {{ toolCall: {{ id: {call}, name: done_{u}, args: {{}} }} }} ] }} }} ] }} ] }}"
    )
}

#[test]
fn a_next_cycle_never_replays_an_execution_again_it_fails_loudly_when_the_recording_runs_out() {
    // dryrun.md §1, lesson 1: fail loudly on exhaustion, never wrap around.
    let text = format!("cassette: 1\nstages:\n  a: {}\n  b: {}\n", completes("a", "a1"), completes("b", "b1"));
    let ran = run_machine(&cycle(&text));
    assert_eq!(
        stages_run(&ran.run),
        ["a upstream=0", "b upstream=1", "finished stopped"],
        "a's second execution has nothing recorded"
    );
    let messages: Vec<String> = ran.run.findings.iter().map(|d| format!("{}: {}", d.code, d.message)).collect();
    assert_eq!(
        messages,
        [
            "cassette/CassetteExhausted: stage `a` runs a second time, but `stages.a` records 1 execution(s); list one entry per execution, or fix the `next` cycle"
        ]
    );
    assert_eq!(ran.run.exit_code(), 1);
}

#[test]
fn each_execution_of_a_stage_replays_its_own_entry_in_order() {
    // The second execution of `a` is recorded as the second list entry, and fails (its Assert
    // is scripted), which ends the cycle.
    let second = completes("a", "a2").replacen("{ turns:", "{ assert: fail, turns:", 1);
    let text = format!(
        "cassette: 1\nstages:\n  a:\n    - {}\n    - {second}\n  b: {}\n",
        completes("a", "a1"),
        completes("b", "b1")
    );
    let ran = run_machine(&cycle(&text));
    assert_eq!(
        stages_run(&ran.run),
        ["a upstream=0", "b upstream=1", "a upstream=1", "finished failed ExtensionHost/LifecycleFailure"]
    );
    let calls: Vec<String> = ran
        .run
        .trace
        .events
        .iter()
        .filter(|e| e.name == "ProviderResponse")
        .map(|e| format!("{} {}", e.str("stage"), e.data["toolCalls"][0]["id"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(calls, ["a a1", "b b1", "a a2"]);
    let setups: Vec<&str> = ran
        .run
        .trace
        .events
        .iter()
        .filter(|e| e.name == "StageSetup")
        .map(|e| e.data["ids"]["stageExecutionId"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(setups, ["se-a-1", "se-b-1", "se-a-2"]);
    assert!(ran.run.findings.is_empty(), "{:?}", ran.run.findings);
}

#[test]
fn a_long_recorded_cycle_still_stops_after_a_bounded_number_of_executions() {
    let entries: Vec<String> = (1..=70).map(|i| format!("    - {}\n", completes("plan", &format!("p{i}")))).collect();
    let files = [
        ("sm.yaml", "entry: plan\n".to_string()),
        ("plan.md", stage("plan", "next: { nextStages: [plan] }\n", "Again.")),
        ("sm.cassette.yaml", format!("cassette: 1\nstages:\n  plan:\n{}", entries.concat())),
    ];
    let ran = run_machine(&files);
    assert_eq!(stages_run(&ran.run).pop().as_deref(), Some("finished stopped"));
    assert_eq!(ran.run.trace.events.iter().filter(|e| e.name == "StageSetup").count(), 64);
    // Hitting the bound is a finding on the `next` that loops (the run fails), and the six
    // executions never reached are recordings nobody replays.
    let mut found = codes(&ran.run);
    found.sort();
    let mut expected = vec!["cassette/CassetteUnconsumed"; 6];
    expected.push("cassette/ExecutionLimit");
    assert_eq!(found, expected);
    let limit = ran.run.findings.iter().find(|d| d.code == "cassette/ExecutionLimit").expect("the limit");
    let plan = ran.workspace.file(limit.file);
    assert_eq!(&plan.text[limit.span.start..limit.span.end], "next", "on the `next` that loops");
    assert_eq!(limit.related.len(), 1, "the cycle's one stage: {:?}", limit.related);
    assert_eq!(ran.run.exit_code(), 1);
}

// ---- the shipped examples, as snapshots ----

fn example(cassette: Option<&str>) -> (Workspace, DryRun) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut configs = stagelint::workspace::discover::ConfigCache::new(None);
    let overlay = std::collections::HashMap::new();
    let cassette = cassette.map(|c| root.join(c));
    let options = Options { strict: true, explain_init: true };
    runtime::dry_run_path(&root.join("examples/code-review"), cassette.as_deref(), options, &mut configs, &overlay)
        .expect("the example runs")
}

#[test]
fn the_example_machine_passes_every_expectation() {
    let (workspace, run) = example(None);
    assert_eq!(run.exit_code(), 0, "{:?}", run.findings);
    assert_eq!((run.passed, run.failed), (26, 0));
    insta::assert_snapshot!("code_review_timeline", runtime::report::timeline(&workspace, &run));
    insta::assert_snapshot!("code_review_events", run.trace.to_json_lines());
}

#[test]
fn the_failing_sibling_example_stops_before_the_join() {
    let (workspace, run) = example(Some("examples/code-review/failing-lint.cassette.yaml"));
    assert_eq!(run.exit_code(), 0, "the cassette expects the failure: {:?}", run.findings);
    assert!(!run.trace.events.iter().any(|e| e.name == "StageSetup" && e.str("stage") == "review"));
    insta::assert_snapshot!("code_review_failing_lint_timeline", runtime::report::timeline(&workspace, &run));
}

// ---- recording ----

/// Answers with scripted responses, in order.
struct Scripted(Vec<runtime::provider::Response>);

impl runtime::provider::Provider for Scripted {
    fn respond(
        &mut self,
        _: &runtime::provider::Request,
    ) -> Result<runtime::provider::Response, runtime::provider::ProviderError> {
        Ok(self.0.remove(0))
    }
}

fn tool_use(id: &str, name: &str, args: Value) -> runtime::provider::Response {
    use runtime::provider::{Block, Response, Stop, ToolCall};
    Response {
        stop: Stop::ToolUse,
        content: vec![Block::ToolCall(ToolCall { id: id.into(), name: name.into(), args: Some(args), args_raw: None })],
    }
}

#[test]
fn a_fresh_recording_replays_green() {
    use runtime::provider::{Block, Response, Stop};
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("plan.md"), PLAN).expect("write");
    let seed = "cassette: 1\nstage: plan\nctx: { task: t }\ntools:\n  Grep:\n    - { anyArgs: true, result: found }\nattempts: []\n";
    std::fs::write(dir.path().join("seed.cassette.yaml"), seed).expect("write");
    let mut provider = Scripted(vec![
        tool_use("c1", "Edit", serde_json::json!({"path": "a"})),
        tool_use("c2", "Read", serde_json::json!({"path": "a"})),
        Response { stop: Stop::EndTurn, content: vec![Block::Text("thinking".into())] },
        tool_use("c3", "submit_plan", serde_json::json!({"summary": "s", "steps": ["a"]})),
    ]);
    let (run, cassette) = record_plan(dir.path(), &mut provider);
    assert_eq!(run.exit_code(), 0, "{:?}", run.findings);
    let yaml = stagelint::source::yaml_write::to_yaml(&cassette);
    // Read has no fake: the recording gives it a placeholder to fill in, never a real run.
    assert!(yaml.contains("TODO: recorded without running `Read`"), "{yaml}");
    insta::assert_snapshot!("recorded_cassette", yaml);
    std::fs::remove_file(dir.path().join("seed.cassette.yaml")).expect("rm");
    std::fs::write(dir.path().join("plan.cassette.yaml"), &yaml).expect("write");
    let options = Options { strict: true, explain_init: true };
    let mut configs = stagelint::workspace::discover::ConfigCache::new(Some(Config::defaults(dir.path())));
    let (_, replay) =
        runtime::dry_run_path(&dir.path().join("plan.md"), None, options, &mut configs, &Default::default())
            .expect("replays");
    assert_eq!(replay.exit_code(), 0, "strict replay of a fresh recording: {:?}", replay.findings);
    assert_eq!((replay.passed, replay.failed), (4, 0));
}

#[test]
fn cassettes_in_configured_directories_are_found_by_the_cli_the_check_and_the_lens() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("stages")).expect("dir");
    std::fs::create_dir_all(dir.path().join("recordings")).expect("dir");
    std::fs::write(dir.path().join("stagelint.toml"), "[dry-run]\ncassettes = [\"recordings\"]\n").expect("write");
    std::fs::write(dir.path().join("stages/plan.md"), PLAN).expect("write");
    std::fs::write(dir.path().join("recordings/plan.cassette.yaml"), cassette("", &[&[&done("c1")]])).expect("write");
    let stage = dir.path().join("stages/plan.md");
    let mut configs = stagelint::workspace::discover::ConfigCache::new(None);
    let workspace = stagelint::workspace::discover::discover(std::slice::from_ref(&stage), &mut configs).expect("read");
    let file = workspace.file_at(&stagelint::workspace::discover::normalize(&stage)).expect("stage").id;
    let lenses = stagelint::ide::lens::lenses(&workspace, file);
    assert_eq!(lenses.len(), 1, "{lenses:?}");
    assert_eq!(lenses[0].title, "▶ Dry-run (plan.cassette.yaml)");
    let options = Options { strict: true, explain_init: true };
    let (_, run) = runtime::dry_run_path(&stage, None, options, &mut configs, &Default::default()).expect("runs");
    assert_eq!(run.exit_code(), 0, "{:?}", run.findings);
}

#[test]
fn a_completion_schema_that_does_not_compile_fails_init() {
    let stage = PLAN.replace("completionSchema:\n  type: object\n", "completionSchema:\n  type: 5\n");
    let ran = run_stage(&stage, &cassette("", &[&[&done("c1")]]));
    let reasons: Vec<&str> =
        ran.run.trace.events.iter().filter(|e| e.name == "StageInitFailed").map(|e| e.str("reason")).collect();
    assert_eq!(reasons, ["CompletionSchemaInvalid"]);
    assert_eq!(ran.run.exit_code(), 2);
}

#[test]
fn a_state_machine_with_a_machine_cassette_gets_a_lens_on_its_first_line() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/code-review");
    let mut configs = stagelint::workspace::discover::ConfigCache::new(None);
    let workspace = stagelint::workspace::discover::discover(std::slice::from_ref(&root), &mut configs).expect("read");
    let sm = workspace.file_at(&root.join("sm.yaml")).expect("sm.yaml").id;
    let lenses = stagelint::ide::lens::lenses(&workspace, sm);
    // One lens per machine cassette of the directory (the recorded run and its failing scenario).
    let titles: Vec<&str> = lenses.iter().map(|l| l.title.as_str()).collect();
    assert_eq!(titles, ["▶ Dry-run machine (sm.cassette.yaml)", "▶ Dry-run machine (failing-lint.cassette.yaml)"],);
    assert!(lenses.iter().all(|l| l.span.start == 0));
}

// ---- runs that cannot start still end with a stream ----

/// The JSON Lines stream as `event code/reason` lines, without seq.
fn stream(run: &DryRun) -> Vec<String> {
    run.trace
        .events
        .iter()
        .map(|e| {
            let detail = ["code", "phase", "reason", "outcome", "exitCode"]
                .iter()
                .filter_map(|key| {
                    e.data.get(*key).map(|v| format!("{key}={}", v.as_str().map_or(v.to_string(), str::to_string)))
                })
                .collect::<Vec<_>>()
                .join(" ");
            format!("{} {detail}", e.name).trim_end().to_string()
        })
        .collect()
}

#[test]
fn a_run_that_cannot_start_still_emits_its_findings_and_a_summary() {
    let options = Options { strict: false, explain_init: true };
    // An unusable cassette: a YAML list.
    let files = [("plan.md", PLAN), ("plan.cassette.yaml", "- cassette: 1\n")];
    let ran = run_files(&files, "plan.md", options);
    assert_eq!(stream(&ran.run), ["DryRunMismatch code=cassette/MalformedTurn", "DryRunSummary exitCode=2"]);
    let lines = ran.run.trace.to_json_lines();
    assert_eq!(lines.lines().count(), 2, "{lines}");
    assert!(lines.lines().all(|l| serde_json::from_str::<Value>(l).is_ok()), "{lines}");
    // A stage that cannot be read: Setup fails with the definition's reason.
    let stage = PLAN.replace("turnCap: 3", "turnCap: 0");
    let ran = run_stage(&stage, &cassette("", &[&[&done("c1")]]));
    assert_eq!(
        stream(&ran.run),
        [
            "StageSetup outcome=failed",
            "StageInitFailed phase=Setup reason=StageDefinitionInvalid",
            "DryRunMismatch code=cassette/StageInitFailed",
            "DryRunMismatch code=sm/StageTurnCapTooLow",
            "DryRunSummary exitCode=2",
        ]
    );
}

// ---- Setup and Init enforce the definition contract ----

fn init_reasons(stage: &str) -> (Vec<String>, u8) {
    let ran = run_stage(stage, &cassette("", &[&[&done("c1")]]));
    let reasons = ran
        .run
        .trace
        .events
        .iter()
        .filter(|e| e.name == "StageInitFailed")
        .map(|e| format!("{} {}", e.str("phase"), e.str("reason")))
        .collect();
    (reasons, ran.run.exit_code())
}

#[test]
fn a_definition_the_linter_says_fails_init_fails_setup() {
    // domain.md §1.1: "All eight are required. A stage definition missing any of them fails init."
    for (what, stage) in [
        ("no name", PLAN.replace("name: Plan\n", "")),
        ("no resolutionPolicy", PLAN.replace("resolutionPolicy: retry-later\n", "")),
        ("an id that is not kebab-case", PLAN.replace("id: plan", "id: Bad_Id")),
        ("a resolutionPolicy outside the configured set", PLAN.replace("retry-later", "whenever")),
        ("a backoff outside the configured set", PLAN.replace("backoff: none", "backoff: quantum")),
    ] {
        // The cassette is named explicitly: the conventional name follows the (bad) id.
        let text = cassette("", &[&[&done("c1")]])
            .replace("stage: plan", if what.contains("kebab") { "stage: Bad_Id" } else { "stage: plan" });
        let options = Options { strict: false, explain_init: true };
        let ran = try_run_files(
            &[("plan.md", &stage), ("s.cassette.yaml", &text)],
            "plan.md",
            Some("s.cassette.yaml"),
            options,
        )
        .expect(what);
        let events = stream(&ran.run);
        assert_eq!(
            events[..2],
            ["StageSetup outcome=failed", "StageInitFailed phase=Setup reason=StageDefinitionInvalid"],
            "{what}: {events:#?}"
        );
        assert!(!events.iter().any(|e| e.starts_with("StageInitRendered")), "{what}: nothing is rendered");
        assert_eq!(ran.run.exit_code(), 2, "{what}");
        assert!(ran.run.findings.iter().any(|d| d.code.starts_with("sm/")), "{what}: the lint errors explain it");
    }
}

#[test]
fn tags_the_template_language_rejects_fail_init_and_the_other_dialect_stays_verbatim() {
    for (tag, reason) in [
        ("{{#ctx.task}}x{{/ctx.task}}", "TemplateInvalid"),
        ("{{upper ctx.task}}", "TemplateInvalid"),
        ("{{ctx.task | upper}}", "TemplateInvalid"),
        ("{{ctx.task", "TemplateInvalid"),
        ("{{}}", "TemplateInvalid"),
        ("{{ctx.attempts.0}}", "TemplateInvalid"),
        ("{{ctx.attempts}}", "ForbiddenPlaceholder"),
        ("{{ctx.host.session}}", "ForbiddenPlaceholder"),
        ("{{env.HOME}}", "ForbiddenPlaceholder"),
        ("{{secrets.token}}", "ForbiddenPlaceholder"),
    ] {
        let (reasons, exit) =
            init_reasons(&PLAN.replace("Plan: {{ctx.task}}.", &format!("Plan: {{{{ctx.task}}}} {tag}.")));
        let wanted: Vec<String> = if tag.starts_with("{{#") {
            vec![format!("Init {reason}"), format!("Init {reason}")]
        } else {
            vec![format!("Init {reason}")]
        };
        assert_eq!((reasons, exit), (wanted, 2), "{tag}");
    }
    // `${ctx.task}` is the other dialect here: it reaches the model as written (a warning only).
    let ran = run_stage(&PLAN.replace("{{ctx.task}}", "${ctx.task}"), &cassette("", &[&[&done("c1")]]));
    assert_eq!(ran.run.exit_code(), 0, "{:?}", ran.run.findings);
    let rendered = ran.run.trace.events.iter().find(|e| e.name == "StageInitRendered").expect("rendered");
    assert_eq!(rendered.data["verbatim"], 1);
}

#[test]
fn an_inputs_schema_failure_stops_at_setup_before_anything_is_rendered() {
    // dryrun.md §3.3.1: validate inputsSchema at Setup "→ on failure emit StageInitFailed and stop".
    let stage = PLAN
        .replace("turnCap: 3", "turnCap: 3\ninputsSchema: { type: object, required: [parsed] }")
        .replace("{{ctx.task}}", "{{ctx.task}} after {{ctx.upstream[0].parsed.summary}}");
    let text =
        cassette("", &[&[&done("c1")]]).replace("ctx: { task: t }", "ctx: { task: t, upstream: [ { verdict: ok } ] }");
    let ran = run_stage(&stage, &text);
    assert_eq!(
        stream(&ran.run)[..2],
        ["StageSetup outcome=failed", "StageInitFailed phase=Setup reason=InputsSchemaInvalid"]
    );
    assert_eq!(ran.run.trace.events.iter().filter(|e| e.name == "StageInitFailed").count(), 1);
    let timeline = runtime::report::timeline(&ran.workspace, &ran.run);
    // One line names the file and the reason (issue 16 audit: no separate `plan  Setup  <file>`).
    let failed: Vec<&str> = timeline.lines().filter(|l| l.starts_with("plan  Setup")).collect();
    assert_eq!(failed.len(), 1, "{timeline}");
    assert!(failed[0].contains("plan.md  InputsSchemaInvalid: ctx.upstream[0]"), "{timeline}");
    assert!(!timeline.contains("Setup  ok") && !timeline.contains("Init "), "{timeline}");
}

// ---- what a stage result and an attempt carry ----

#[test]
fn parsed_is_the_payload_the_final_attempt_accepted() {
    // Attempt 1 completes but Assert says retry; attempt 2 hits the cap and Assert says ok.
    let text = "response: { stop: end_turn, content: [ { text: hm } ] }";
    let scripted = cassette("", &[&[&done("c1")], &[text, text, text]])
        .replace("  - attempt: 1\n", "  - attempt: 1\n    assert: retry\n")
        .replace("  - attempt: 2\n", "  - attempt: 2\n    assert: ok\n");
    let ran = run_stage(PLAN, &scripted);
    let result = result(&ran.run);
    assert_eq!((result["verdict"].as_str(), result["capHit"].as_bool()), (Some("ok"), Some(true)));
    assert_eq!(result["parsed"], Value::Null, "attempt 1's payload was rejected by Assert");
}

#[test]
fn the_assert_outcome_carries_the_attempts_last_parse_error() {
    // ctx.attempts[i].parseError: the last completion parse error of the attempt, if any.
    let bad = call("c1", "submit_plan", "{ summary: s, steps: one }");
    let text = "response: { stop: end_turn, content: [ { text: hm } ] }";
    let ran = run_stage(PLAN, &cassette("", &[&[&bad, text, text], &[&done("c2")]]));
    let outcomes: Vec<&Value> =
        ran.run.trace.events.iter().filter(|e| e.name == "StageAssertOutcome").map(|e| &e.data["parseError"]).collect();
    assert_eq!(
        outcomes,
        [
            &serde_json::json!({"call": "c1", "errors": [{"at": "/steps", "msg": "\"one\" is not of type \"array\""}]}),
            &Value::Null
        ]
    );
}

#[test]
fn error_at_names_the_root_as_empty_or_slash_and_a_required_error_by_its_property() {
    // The payload lacks `summary`: one `required` error at the root.
    let missing = call("c1", "submit_plan", "{ steps: [a] }");
    let turn = |error_at: &str| {
        format!(
            "response: {{ stop: tool_use, content: [ {} ] }}\n        expect: {{ branch: parseFailure, call: c1, errorAt: {error_at} }}",
            missing
        )
    };
    for error_at in ["\"\"", "/", "/summary"] {
        let ran = run_stage(PLAN, &cassette("", &[&[&turn(error_at), &done("c2")]]));
        assert_eq!((ran.run.passed, ran.run.failed), (1, 0), "errorAt {error_at}: {:?}", ran.run.findings);
    }
    let ran = run_stage(PLAN, &cassette("", &[&[&turn("/steps"), &done("c2")]]));
    let messages: Vec<&str> = ran.run.findings.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        ["expected parseFailure c1 at \"/steps\", but the runtime took parseFailure c1 at \"\" (root)"]
    );
    let timeline = runtime::report::timeline(&ran.workspace, &ran.run);
    assert!(timeline.contains("PARSE (root): \"summary\" is a required property"), "{timeline}");
}

// ---- the cassette, read once for every surface ----

#[test]
fn a_content_block_with_two_keys_is_malformed_whatever_the_key_order() {
    for block in [
        "{ text: hi, toolCall: { id: c1, name: submit_plan, args: {} } }",
        "{ toolCall: { id: c1, name: submit_plan, args: {} }, text: hi }",
    ] {
        // The expectation naming the call of the unreadable block is not reported again.
        let turn = format!(
            "response: {{ stop: tool_use, content: [ {block} ] }}\n        expect: {{ branch: completion, call: c1 }}"
        );
        let ran = run_stage(PLAN, &cassette("", &[&[&turn]]));
        let found: Vec<(&str, &str)> = ran.run.findings.iter().map(|d| (d.code, d.message.as_str())).collect();
        let keys = if block.starts_with("{ text") { "text, toolCall" } else { "toolCall, text" };
        let message = format!(
            "a content block has exactly one key, `text:`, `toolCall:` or `thinking:`; this one has {keys}: split it into one block per key"
        );
        assert_eq!(found, [("cassette/MalformedTurn", message.as_str())]);
        let file = ran.workspace.file(ran.run.findings[0].file);
        assert!(file.text[ran.run.findings[0].span.start..].starts_with(block), "on the block");
        assert_eq!(ran.run.exit_code(), 2, "nothing is guessed: the cassette is not replayed");
    }
}

#[test]
fn call_id_problems_are_reported_by_the_dry_run_and_once_by_check() {
    let grant_unknown = format!(
        "response: {{ stop: tool_use, content: [ {} ] }}\n        grant: {{ zz: approve }}",
        call("c1", "Edit", "{}")
    );
    let text = cassette("", &[&[&grant_unknown, &done("c1")]]);
    let ran = run_stage(PLAN, &text);
    assert_eq!(codes(&ran.run), ["cassette/UnknownCallId", "cassette/DuplicateCallId"]);
    let check = stagelint::check::check(&ran.workspace);
    let mut found: Vec<&str> = check.iter().map(|d| d.code).filter(|c| c.starts_with("cassette/")).collect();
    found.sort();
    assert_eq!(found, ["cassette/DuplicateCallId", "cassette/UnknownCallId"]);
}

#[test]
fn a_cassette_named_explicitly_is_read_whatever_its_name() {
    let options = Options { strict: false, explain_init: true };
    let yaml = cassette("", &[&[&done("c1")]]);
    let json = r#"{"cassette": 1, "stage": "plan", "ctx": {"task": "t"}, "attempts": [{"turns": [{"response": {"stop": "tool_use", "content": [{"toolCall": {"id": "c1", "name": "submit_plan", "args": {"summary": "s", "steps": ["a"]}}}]}}]}]}"#;
    for (name, text) in [("s.yaml", yaml.as_str()), ("s.json", json), ("s.txt", yaml.as_str()), ("json.txt", json)] {
        let ran = try_run_files(&[("plan.md", PLAN), (name, text)], "plan.md", Some(name), options).expect(name);
        assert_eq!(ran.run.exit_code(), 0, "{name}: {:?}", ran.run.findings);
        assert_eq!(result(&ran.run)["verdict"], "ok", "{name}");
    }
    // A parse problem is a finding on the file, not "cannot read".
    let ran =
        try_run_files(&[("plan.md", PLAN), ("s.yaml", "cassette: 1\nstage: [\n")], "plan.md", Some("s.yaml"), options)
            .expect("starts");
    assert_eq!(codes(&ran.run), ["cassette/MalformedTurn"]);
    assert_eq!(ran.run.exit_code(), 2);
    // Only an I/O error is.
    let Err(error) = try_run_files(&[("plan.md", PLAN)], "plan.md", Some("missing.yaml"), options) else {
        panic!("a missing cassette cannot be read")
    };
    assert!(error.contains("missing.yaml: cannot read file"), "{error}");
}

/// A target that is not a stage says so, and a missing one says it is missing: neither is
/// "not read", which named neither reason.
#[test]
fn a_target_that_is_no_stage_or_is_missing_says_which() {
    let options = Options { strict: false, explain_init: true };
    let files = [("notes.md", "# Notes\n\nNo frontmatter.\n"), ("plan.cassette.yaml", "cassette: 1\n")];
    let Err(error) = try_run_files(&files, "notes.md", None, options) else { panic!("notes.md is no stage") };
    assert!(error.ends_with("notes.md: not a stage definition, a state machine or a climpt agent (`steps_registry.json` or its directory)"), "{error}");
    let Err(error) = try_run_files(&files, "gone.md", None, options) else { panic!("gone.md does not exist") };
    assert!(error.ends_with("gone.md: cannot read file: no such file"), "{error}");
}

/// A failed expectation about one call of a batch says what happened to that call, not to every
/// call of the turn.
#[test]
fn a_failed_expectation_about_one_call_reports_that_call() {
    let tools = "tools:\n  Read:\n    - { anyArgs: true, result: x }\n";
    let turn = format!(
        "response: {{ stop: tool_use, content: [ {}, {} ] }}\n        grant: {{ c2: defer }}\n        expect: [ {{ branch: tool, call: c2, outcome: denied }} ]",
        call("c1", "Read", "{}"),
        call("c2", "Write", "{}")
    );
    let ran = run_stage(PLAN, &cassette(tools, &[&[&turn, &done("c3")]]));
    assert_eq!(codes(&ran.run), ["cassette/ExpectationFailed"]);
    assert_eq!(ran.run.findings[0].message, "expected tool c2 (denied), but the runtime took tool c2 (deferred)");
}

#[test]
fn unused_grants_are_reported_like_unused_results() {
    let tools = "tools:\n  Read:\n    - { anyArgs: true, result: x }\n";
    let allowed = format!(
        "response: {{ stop: tool_use, content: [ {} ] }}\n        grant: {{ c1: approve }}",
        call("c1", "Read", "{}")
    );
    let batch = format!(
        "response: {{ stop: tool_use, content: [ {}, {} ] }}\n        grant: {{ c2: approve }}",
        call("c2", "Edit", "{}"),
        done("c3")
    );
    let completion =
        format!("response: {{ stop: tool_use, content: [ {} ] }}\n        grant: {{ c4: deny }}", done("c4"));
    let ran = run_stage(PLAN, &cassette(tools, &[&[&allowed, &batch, &completion]]));
    let found: Vec<(&str, &str)> = ran.run.findings.iter().map(|d| (d.code, d.message.as_str())).collect();
    let unused = |id: &str| {
        format!(
            "the grant for `{id}` is never used: the call is not a grantStageTool proposal (an allowed tool, the completion tool or part of a rejected batch)"
        )
    };
    let (a, b, c) = (unused("c1"), unused("c2"), unused("c4"));
    assert_eq!(
        found,
        [
            ("cassette/ResultIgnored", a.as_str()),
            ("cassette/ResultIgnored", b.as_str()),
            ("cassette/ResultIgnored", c.as_str())
        ]
    );
    assert_eq!(ran.run.exit_code(), 0, "a warning");
}

#[test]
fn every_structural_problem_of_a_turn_is_reported() {
    let turn = format!(
        "response: {{ stop: tool_call, content: [ {} ] }}\n        grant: {{ c1: allow }}",
        call("c1", "Edit", "{}")
    );
    let ran = run_stage(PLAN, &cassette("", &[&[&turn]]));
    let messages: Vec<String> = ran.run.findings.iter().map(|d| format!("{}: {}", d.code, d.message)).collect();
    assert_eq!(
        messages,
        [
            "cassette/InvalidValue: `tool_call` is not a valid stop reason; expected one of end_turn, tool_use, max_tokens, refusal",
            "cassette/InvalidValue: `allow` is not a valid grant decision; expected one of approve, deny, defer",
        ]
    );
}

// ---- machine runs ----

#[test]
fn a_recorded_stage_that_never_runs_fails_its_expectations_or_is_unused() {
    // ingest → (fix ∥ doc, join merge); fix's Assert fails, so doc is cancelled and merge never
    // runs. merge expects something (its expectations were never checked); doc does not.
    let doc = format!(
        "{{ attempts: [ {{ turns: [ {{ response: {{ stop: tool_use, content: [ {} ] }} }} ] }} ] }}",
        "{ toolCall: { id: d1, name: done_doc, args: {} } }"
    );
    let merge = "{ expectResult: { verdict: ok, attemptCount: 1 }, attempts: [ { turns: [ { response: { stop: tool_use, content: [ { toolCall: { id: m1, name: done_merge, args: {} } } ] }, expect: { branch: completion, call: m1 } } ] } ] }";
    let fix = completes("fix", "f1").replacen("{ turns:", "{ assert: fail, turns:", 1);
    let text = format!(
        "cassette: 1\nctx: {{ task: t }}\nstages:\n  ingest: {}\n  fix: {fix}\n  doc: {doc}\n  merge: {merge}\n",
        completes("ingest", "i1")
    );
    let files = vec![
        ("sm.yaml".to_string(), "entry: ingest\n".to_string()),
        (
            "ingest.md".to_string(),
            stage("ingest", "next: { nextStages: [fix, doc], execution: parallel, join: merge }\n", "Ingest."),
        ),
        ("fix.md".to_string(), stage("fix", "", "Fix.")),
        ("doc.md".to_string(), stage("doc", "", "Doc.")),
        ("merge.md".to_string(), stage("merge", "", "Merge.")),
        ("sm.cassette.yaml".to_string(), text),
    ];
    let ran = run_machine(&files);
    let found: Vec<String> = ran.run.findings.iter().map(|d| format!("{}: {}", d.code, d.message)).collect();
    assert_eq!(
        found,
        [
            "cassette/CassetteUnconsumed: stage `doc` never ran, so its recording is unused: it was cancelled: sibling `fix` failed",
            "cassette/ExpectationFailed: stage `merge` never ran, so its 3 expectation(s) were never checked: sibling `fix` failed, so the join never ran",
        ]
    );
    let file = ran.workspace.file(ran.run.findings[1].file);
    assert_eq!(&file.text[ran.run.findings[1].span.start..ran.run.findings[1].span.end], "merge", "on the entry");
    assert_eq!((ran.run.passed, ran.run.failed, ran.run.unchecked), (0, 3, 3));
    let unchecked: Vec<String> = ran
        .run
        .trace
        .events
        .iter()
        .filter(|e| e.name == "ExpectationOutcome")
        .map(|e| format!("{} {} {}", e.str("stage"), e.str("outcome"), e.str("expected")))
        .collect();
    assert_eq!(
        unchecked,
        [
            "merge unchecked turn 1 of attempt 1: completion m1",
            "merge unchecked expectResult.verdict: \"ok\"",
            "merge unchecked expectResult.attemptCount: 1",
        ]
    );
    assert_eq!(ran.run.exit_code(), 1);
}

#[test]
fn every_stage_scoped_event_of_a_machine_names_its_stage() {
    let (_, run) = example(None);
    let mut current: Option<String> = None;
    for event in &run.trace.events {
        match event.name {
            "StageSetup" => current = Some(event.str("stage").to_string()),
            "MachineStart" | "ParallelStart" | "StageCancelled" | "MachineFinished" | "DryRunMismatch"
            | "DryRunSummary" => {
                current = None;
                continue;
            }
            _ => {}
        }
        let stage = current.as_deref().unwrap_or_else(|| panic!("{} outside a stage", event.name));
        assert_eq!(event.str("stage"), stage, "{event:?}");
        if event.name == "StageNext" {
            current = None;
        }
    }
}

// ---- the human report ----

#[test]
fn control_characters_from_the_cassette_are_escaped_in_the_timeline() {
    let hostile = "{ toolCall: { id: \"\\e[2J\\e[31mX\", name: \"Bash\\u202e\", args: {} } }";
    let ran = run_stage(PLAN, &cassette("", &[&[hostile, &done("c2")]]));
    let timeline = runtime::report::timeline(&ran.workspace, &ran.run);
    assert!(!timeline.chars().any(|c| c == '\u{1b}' || c == '\u{202e}'), "{timeline:?}");
    assert!(timeline.contains("Bash\\u{202e}(\\u{1b}[2J\\u{1b}[31mX)"), "{timeline}");
    assert!(ran.run.findings.iter().all(|d| !d.message.contains('\u{1b}')));
}

// ---- scenario cassettes ----

#[test]
fn a_cassette_belongs_to_the_stage_its_stage_field_names_so_scenarios_are_checked_and_get_lenses() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("plan.md"), PLAN).expect("write");
    std::fs::write(dir.path().join("plan.cassette.yaml"), cassette("", &[&[&done("c1")]])).expect("write");
    // A scenario beside the stage that expects the wrong branch, and one naming no stage here.
    let branches = cassette(
        "",
        &[&[&format!(
            "response: {{ stop: tool_use, content: [ {} ] }}\n        expect: {{ branch: steer }}",
            done("c1")
        )]],
    );
    std::fs::write(dir.path().join("branches.cassette.yaml"), branches).expect("write");
    std::fs::write(
        dir.path().join("typo.cassette.yaml"),
        cassette("", &[&[&done("c1")]]).replace("stage: plan", "stage: plna"),
    )
    .expect("write");
    let mut configs = stagelint::workspace::discover::ConfigCache::new(Some(Config::defaults(dir.path())));
    let workspace = stagelint::workspace::discover::discover(&[dir.path().to_path_buf()], &mut configs).expect("read");
    let found: Vec<(String, &str)> = stagelint::check::check(&workspace)
        .into_iter()
        .filter(|d| d.code.starts_with("cassette/"))
        .map(|d| (workspace.file(d.file).path.file_name().unwrap().to_string_lossy().into_owned(), d.code))
        .collect();
    assert_eq!(
        found,
        [
            ("branches.cassette.yaml".to_string(), "cassette/ExpectationFailed"),
            ("typo.cassette.yaml".to_string(), "cassette/UnknownStage"),
        ]
    );
    let stage =
        workspace.file_at(&stagelint::workspace::discover::normalize(&dir.path().join("plan.md"))).expect("stage");
    let titles: Vec<String> = stagelint::ide::lens::lenses(&workspace, stage.id).into_iter().map(|l| l.title).collect();
    assert_eq!(titles, ["▶ Dry-run (plan.cassette.yaml)", "▶ Dry-run (branches.cassette.yaml)"]);
}

// ---- second audit (issue 7): each defect, one test ----

/// The finding of `code` as `message` text, for tests that check wording.
fn messages_of(run: &DryRun, code: &str) -> Vec<String> {
    run.findings.iter().filter(|d| d.code == code).map(|d| d.message.clone()).collect()
}

/// The text a finding's span covers.
fn spanned<'a>(ran: &'a Ran, finding: &stagelint::diagnostic::Diagnostic) -> &'a str {
    let file = ran.workspace.file(finding.file);
    &file.text[finding.span.start..finding.span.end]
}

#[test]
fn a_misspelt_key_is_a_structural_error_so_no_expectation_is_dropped_unnoticed() {
    // dryrun.md §8: unknown cassette keys are typos. Without the fix the run passed 0/0.
    let text =
        cassette("", &[&[&done("c1")]]).replace("  - attempt: 1\n", "  - attempt: 1\n    expectend: { act: capHit }\n");
    let text = format!("{text}        expct: {{ branch: steer }}\n        zzz: 1\n");
    let ran = run_stage(PLAN, &text);
    assert_eq!(ran.run.exit_code(), 2, "{:?}", ran.run.findings);
    let unknown: Vec<_> = ran.run.findings.iter().filter(|d| d.code == "cassette/UnknownKey").collect();
    assert_eq!(unknown.len(), 3);
    assert!(unknown.iter().all(|d| d.severity == stagelint::diagnostic::Severity::Error));
    let texts = messages_of(&ran.run, "cassette/UnknownKey");
    assert!(
        texts
            .contains(&"unknown key `expct` in a turn: the runtime never reads it; did you mean `expect`?".to_string())
    );
    assert!(texts.contains(&"unknown key `zzz` in a turn: the runtime never reads it".to_string()), "{texts:?}");
    assert!(unknown.iter().any(|d| d.fix.is_some()), "the did-you-mean fix stays");
    assert!(!ran.run.trace.events.iter().any(|e| e.name == "StageSetup"), "nothing is replayed");
    let timeline = runtime::report::timeline(&ran.workspace, &ran.run);
    assert!(timeline.contains("Result: not run: the cassette has errors, so it cannot be replayed"), "{timeline}");
    assert!(!timeline.contains('✓'), "{timeline}");
}

#[test]
fn expectations_on_turns_and_attempts_that_never_run_fail_and_say_why() {
    // A turn after the completion, and a second attempt that never runs, both expecting.
    let text = cassette(
        "",
        &[
            &[
                &done("c1"),
                "response: { stop: end_turn, content: [ { text: late } ] }\n        expect: { branch: steer }",
            ],
            &[&done("c2")],
        ],
    )
    .replace("  - attempt: 2\n", "  - attempt: 2\n    expectEnd: { act: completed }\n");
    let ran = run_stage(PLAN, &text);
    assert_eq!(
        messages_of(&ran.run, "cassette/ExpectationFailed"),
        [
            "turn 2 of attempt 1 is never replayed, so its 1 expectation(s) were never checked: Act ended after turn 1 of attempt 1",
            "attempt 2 is never run: the stage exited after attempt 1, so its 1 expectation(s) were never checked",
        ]
    );
    assert!(messages_of(&ran.run, "cassette/CassetteUnconsumed").is_empty(), "never both on the same turns");
    assert_eq!((ran.run.passed, ran.run.failed), (0, 2));
    assert_eq!(ran.run.exit_code(), 1);
    // Turns that expect nothing stay a warning, one finding for the attempt's unused turns.
    let quiet = cassette(
        "",
        &[&[&done("c1"), "response: { content: [ { text: a } ] }", "response: { content: [ { text: b } ] }"]],
    );
    let ran = run_stage(PLAN, &quiet);
    assert_eq!(
        messages_of(&ran.run, "cassette/CassetteUnconsumed"),
        ["2 turn(s) of attempt 1 are never replayed (turn 2, 3): Act ended after turn 1 of attempt 1"]
    );
    assert_eq!(ran.run.exit_code(), 0);
}

#[test]
fn a_gated_attempt_fails_the_expectations_of_its_turns_and_says_checkgate_skipped_act() {
    let text = cassette(
        "checkGate: skip\n",
        &[&[&format!(
            "response: {{ stop: tool_use, content: [ {} ] }}\n        expect: {{ branch: completion }}",
            done("c1")
        )]],
    );
    let ran = run_stage(PLAN, &text);
    let failed = messages_of(&ran.run, "cassette/ExpectationFailed");
    assert_eq!(
        failed,
        [
            "turn 1 of attempt 1 is never replayed, so its 1 expectation(s) were never checked: CheckGate said skip, so Act never ran in attempt 1"
        ]
    );
    assert!(!format!("{:?}", ran.run.findings).contains("after turn 0"));
    // A CheckGate retry: the timeline does not claim Act was re-entered.
    let text =
        cassette("", &[&[], &[&done("c1")]]).replace("  - attempt: 1\n", "  - attempt: 1\n    checkGate: retry\n");
    let ran = run_stage(PLAN, &text);
    let timeline = runtime::report::timeline(&ran.workspace, &ran.run);
    assert!(!timeline.contains("Act re-entered"), "{timeline}");
    assert!(timeline.contains("Assert retry (checkGate) attempt 1/"), "{timeline}");
}

#[test]
fn integer_call_ids_name_their_calls_in_grant_and_results() {
    // `grant: {1: approve}` answers the call with `id: 1`, and `results: {2: …}` the call `id: 2`.
    let text = cassette(
        "tools: { Edit: [ { anyArgs: true, result: edited } ] }\n",
        &[&[
            "response: { stop: tool_use, content: [ { toolCall: { id: 1, name: Edit, args: { path: a } } } ] }\n        grant: { 1: approve }\n        expect: { branch: tool, call: 1, outcome: approved }",
            "response: { stop: tool_use, content: [ { toolCall: { id: 2, name: Read, args: { path: a } } } ] }\n        results: { 2: read }",
            &done("3"),
        ]],
    );
    let ran = run_stage(PLAN, &text);
    assert!(ran.run.findings.is_empty(), "{:?}", ran.run.findings);
    assert_eq!((ran.run.passed, ran.run.failed), (1, 0));
    let via: Vec<&str> =
        ran.run.trace.events.iter().filter(|e| e.name == "ToolCallSucceeded").map(|e| e.str("via")).collect();
    assert_eq!(via, ["tools", "turn.results"]);
}

#[test]
fn a_dangling_ref_in_expect_result_is_an_invalid_value() {
    let text = format!(
        "{}expectResult:\n  parsed: {{ $ref: \"#/attempts/5/turns/0/response/content/0/toolCall/args\" }}\n",
        cassette("", &[&[&done("c1")]])
    );
    let ran = run_stage(PLAN, &text);
    assert_eq!(codes(&ran.run), ["cassette/InvalidValue"]);
    assert!(ran.run.findings[0].message.contains("points to nothing in this cassette"), "{:?}", ran.run.findings);
    assert_eq!(
        spanned(&ran, &ran.run.findings[0]).trim_end(),
        "\"#/attempts/5/turns/0/response/content/0/toolCall/args\""
    );
    assert_eq!(ran.run.exit_code(), 2);
    // One that lands passes.
    let text = format!(
        "{}expectResult:\n  parsed: {{ $ref: \"#/attempts/0/turns/0/response/content/0/toolCall/args\" }}\n",
        cassette("", &[&[&done("c1")]])
    );
    assert_eq!(run_stage(PLAN, &text).run.exit_code(), 0);
}

#[test]
fn a_cassette_that_is_not_a_regular_file_is_refused_before_it_is_read() {
    // (`/dev/zero` is the case that matters most, but a regression would eat the machine's
    // memory; `/dev/null` is a device all the same.)
    let options = Options::default();
    for special in ["/dev/null", "."] {
        let error = match try_run_files(&[("plan.md", PLAN)], "plan.md", Some(special), options) {
            Err(error) => error,
            Ok(ran) => panic!("{special} was read: {:?}", ran.run.findings),
        };
        assert!(error.contains("not a regular file"), "{special}: {error}");
    }
    // A FIFO without a writer would block forever if it were opened.
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("plan.cassette.yaml");
    if std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
        let (sender, receiver) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let _ = sender.send(stagelint::source::read::read_text(&path).map_err(|e| e.message));
        });
        let read = receiver.recv_timeout(std::time::Duration::from_secs(10)).expect("reading a FIFO must not block");
        assert!(read.is_err_and(|e| e.contains("not a regular file")));
    }
}

#[test]
fn the_wrong_kind_of_cassette_is_refused_plainly() {
    // A stage cassette given for a machine.
    let files = [
        ("sm.yaml", "entry: plan\n".to_string()),
        ("plan.md", stage("plan", "next: { nextStages: [build] }\n", "Task {{ctx.task}}.")),
        ("build.md", stage("build", "", "Build.")),
        (
            "one.cassette.yaml",
            "cassette: 1\nstage: plan\nctx: { task: t }\nattempts:\n  - turns:\n      - response: { stop: tool_use, content: [ { toolCall: { id: p1, name: done_plan, args: {} } } ] }\n".to_string(),
        ),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let ran = try_run_files(&files, ".", Some("one.cassette.yaml"), Options::default()).expect("runs");
    assert_eq!(codes(&ran.run), ["cassette/UnknownStage"]);
    assert!(
        ran.run.findings[0]
            .message
            .starts_with("this is a stage cassette (it replays stage `plan`), but a state machine is being run")
    );
    assert_eq!(ran.run.exit_code(), 2);
    // A machine cassette given for a stage.
    let machine = machine_cassette(&["plan"], None);
    let ran = run_stage(PLAN, &machine);
    assert_eq!(codes(&ran.run), ["cassette/UnknownStage"]);
    assert!(
        ran.run.findings[0]
            .message
            .starts_with("this is a machine cassette (`stages:`), but a single stage is being run")
    );
    assert_eq!(spanned(&ran, &ran.run.findings[0]), "stages");
    assert_eq!(ran.run.exit_code(), 2);
}

#[test]
fn arguments_that_do_not_parse_get_an_error_result_and_are_neither_run_nor_granted() {
    let text = cassette(
        "tools: { Read: [ { anyArgs: true, result: fake } ], Edit: [ { anyArgs: true, result: fake } ] }\n",
        &[&[
            "response: { stop: tool_use, content: [ { toolCall: { id: q1, name: Read, argsRaw: '{\"path\": \"a' } }, { toolCall: { id: q2, name: Edit, argsRaw: '{\"path\": \"a' } } ] }\n        grant: { q2: approve }\n        expect: [ { branch: tool, call: q1, outcome: invalidArguments }, { branch: tool, call: q2, outcome: invalidArguments } ]",
            &done("q3"),
        ]],
    );
    let ran = run_stage(PLAN, &text);
    let names: Vec<&str> = ran.run.trace.events.iter().map(|e| e.name).collect();
    assert_eq!(names.iter().filter(|n| **n == "ToolCallInvalid").count(), 2);
    assert!(!names.iter().any(|n| matches!(*n, "ToolCallStarted" | "GrantRequested" | "GrantApproved")), "{names:?}");
    assert_eq!((ran.run.passed, ran.run.failed), (2, 0));
    // The grant is never used: the call never becomes a proposal.
    assert_eq!(codes(&ran.run), ["cassette/ResultIgnored"]);
    let timeline = runtime::report::timeline(&ran.workspace, &ran.run);
    assert!(timeline.contains("q1 INVALID arguments are not valid JSON"), "{timeline}");
}

#[test]
fn a_raw_argument_proposal_is_digested_from_its_text_and_args_with_args_raw_is_malformed() {
    let raw = r#"{"path":"b"}"#;
    let text = cassette(
        "",
        &[&[
            &format!(
                "response: {{ stop: tool_use, content: [ {{ toolCall: {{ id: r1, name: Edit, argsRaw: '{raw}' }} }} ] }}"
            ),
            &done("r2"),
        ]],
    );
    let ran = run_stage(PLAN, &text);
    let requested = ran.run.trace.events.iter().find(|e| e.name == "GrantRequested").expect("a proposal");
    use sha2::Digest;
    let expected: String = sha2::Sha256::digest(raw.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(requested.str("argsDigest"), expected);
    assert_ne!(
        requested.str("argsDigest"),
        "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b",
        "not sha256(null)"
    );
    // Both forms at once: the runtime could not tell which the model sent.
    let both = text.replace(&format!("argsRaw: '{raw}'"), &format!("args: {{ path: a }}, argsRaw: '{raw}'"));
    let ran = run_stage(PLAN, &both);
    assert_eq!(codes(&ran.run), ["cassette/MalformedTurn"]);
    assert_eq!(ran.run.exit_code(), 2);
}

#[test]
fn numbers_compare_and_digest_as_javascript_prints_them() {
    // A fake for `n: 1` answers a call with `n: 1.0`; the digest is that of `{"n":1}`.
    let text = cassette(
        "tools: { Read: [ { args: { n: 1, b: { y: 2, x: 1 } }, result: exact } ] }\n",
        &[&[&call("c1", "Read", "{ b: { x: 1, y: 2.0 }, n: 1.0 }"), &call("c2", "Edit", "{ n: 1.0 }"), &done("c3")]],
    );
    let ran = run_stage(PLAN, &text);
    let via: Vec<&str> =
        ran.run.trace.events.iter().filter(|e| e.name == "ToolCallSucceeded").map(|e| e.str("via")).collect();
    assert_eq!(via, ["tools"], "{:?}", ran.run.findings);
    use sha2::Digest;
    let js: String = sha2::Sha256::digest(br#"{"n":1}"#).iter().map(|b| format!("{b:02x}")).collect();
    let requested = ran.run.trace.events.iter().find(|e| e.name == "GrantRequested").expect("a proposal");
    assert_eq!(requested.str("argsDigest"), js);
}

#[test]
fn a_missing_fake_reports_the_size_of_the_error_text_it_returns() {
    let ran = run_stage(PLAN, &cassette("", &[&[&call("c1", "Read", "{ path: a }"), &done("c2")]]));
    let failed = ran.run.trace.events.iter().find(|e| e.name == "ToolCallFailed").expect("failed");
    assert_eq!(failed.num("bytes"), runtime::messages::FAKE_MISSING.len() as u64);
    // The run fails (exit 1) with no expectation failed: no tick on the result line.
    let timeline = runtime::report::timeline(&ran.workspace, &ran.run);
    assert!(timeline.contains("Result: expectations 0/0 ✗"), "{timeline}");
}

#[test]
fn mismatch_events_come_in_file_and_line_order() {
    // The unconsumed turn (line 10) is found after the expectation on line 8 fails… and the
    // drift of line 9; the stream lists them top to bottom.
    let text = cassette(
        "",
        &[&[
            &format!(
                "response: {{ stop: tool_use, content: [ {} ] }}\n        expect: {{ branch: steer }}\n        request: {{ system: x }}",
                done("c1")
            ),
            "response: { content: [ { text: late } ] }",
        ]],
    );
    let ran = run_stage(PLAN, &text);
    let lines: Vec<u64> =
        ran.run.trace.events.iter().filter(|e| e.name == "DryRunMismatch").map(|e| e.num("line")).collect();
    assert!(lines.len() >= 3, "{:?}", ran.run.findings);
    assert!(lines.windows(2).all(|w| w[0] <= w[1]), "{lines:?}");
}

// A machine: start → [s1, s2] (sequential); s1 declares its own next.
fn own_next_machine() -> Vec<(String, String)> {
    vec![
        ("sm.yaml".to_string(), "entry: start\n".to_string()),
        ("start.md".to_string(), stage("start", "next: { nextStages: [s1, s2] }\n", "Start {{ctx.task}}.")),
        ("s1.md".to_string(), stage("s1", "next: { nextStages: [side] }\n", "S1.")),
        ("s2.md".to_string(), stage("s2", "", "S2.")),
        ("side.md".to_string(), stage("side", "", "Side.")),
        ("sm.cassette.yaml".to_string(), machine_cassette(&["start", "s1", "s2"], None)),
    ]
}

#[test]
fn every_stage_execution_emits_stage_next_and_a_list_member_does_not_follow_its_own_next() {
    let ran = run_machine(&own_next_machine());
    let next: Vec<String> = ran
        .run
        .trace
        .events
        .iter()
        .filter(|e| e.name == "StageNext")
        .map(|e| {
            format!(
                "{} {} {}",
                e.str("stage"),
                e.data["evaluated"],
                e.data.get("reason").and_then(Value::as_str).unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        next,
        [
            "start true ",
            "s1 false `s1` runs in `start`'s sequential nextStages, before `s2`: the list decides what runs next (`s2`)",
            "s2 true ",
        ]
    );
    assert_eq!(stages_run(&ran.run), ["start upstream=0", "s1 upstream=1", "s2 upstream=1", "finished completed"]);
    // The linter agrees: `side` is unreachable and `s1`'s `next` is ignored.
    let root = ran._dir.path().to_path_buf();
    let (checked, found) = common::check_with(std::slice::from_ref(&root), stagelint::config::Config::defaults(&root));
    let found: Vec<(&str, String)> = found
        .iter()
        .filter(|d| d.code.starts_with("sm/"))
        .map(|d| {
            (d.code, checked.file(d.file).path.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned()))
        })
        .collect();
    assert!(found.contains(&("sm/UnreachableStage", "side.md".to_string())), "{found:?}");
    assert!(found.contains(&("sm/NextIgnored", "s1.md".to_string())), "{found:?}");
}

#[test]
fn a_join_whose_inputs_schema_rejects_a_sibling_result_fails_setup_on_that_siblings_recording() {
    let inputs = "inputsSchema: { type: object, required: [parsed], properties: { parsed: { type: object, required: [note] } } }\n";
    let mut cassette = machine_cassette(&["plan", "test", "lint", "review"], None);
    // lint completes without a note; review expects to complete.
    cassette = cassette.replace("args: { note: lint }", "args: {}");
    cassette.push_str("    expectResult: { verdict: ok }\n");
    let mut files = fan_out(&["test", "lint"], "Review.", cassette);
    files[2].1 = stage("review", inputs, "Review.");
    let ran = run_machine(&files);
    assert_eq!(codes(&ran.run), ["cassette/StageInitFailed"], "{:?}", ran.run.findings);
    let finding = &ran.run.findings[0];
    assert_eq!(finding.severity, stagelint::diagnostic::Severity::Error);
    assert_eq!(spanned(&ran, finding), "lint", "on the sibling's entry in the machine cassette");
    assert!(
        finding
            .message
            .starts_with("join `review` fails Setup: the result recorded for `lint` (its `ctx.upstream[1]`)"),
        "{}",
        finding.message
    );
    assert!(finding.help.as_deref().is_some_and(|h| h.contains("change what `lint` records")), "{:?}", finding.help);
    assert!(!finding.message.contains("would fail Init") && !finding.help.as_deref().unwrap_or("").contains("ctx:"));
    assert_eq!(ran.run.failed, 1, "the join's expectation counts as failed");
}

#[test]
fn request_digests_follow_the_documented_recipe() {
    // docs/dry-run.md, "Request fingerprints": each digest computed here from that text alone.
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/dry-run.md")).expect("doc");
    let template = |name: &str| -> String {
        let line = doc.lines().find(|l| l.starts_with(&format!("- {name}: `` "))).expect(name);
        let text = &line[line.find("`` ").expect("open") + 3..];
        text[..text.find(" ``").expect("close")].replace("<id>", "plan").replace("<done>", "submit_plan")
    };
    let description = {
        let at = doc.find("\"description\": \"Ends stage").expect("the completion tool's description")
            + "\"description\": \"".len();
        doc[at..at + doc[at..].find('"').expect("end")].replace("<id>", "plan")
    };
    // RFC 8785 for this data: sorted ASCII keys, integral numbers without a fraction.
    fn jcs(value: &Value) -> String {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let members: Vec<String> =
                    keys.iter().map(|k| format!("{}:{}", Value::from(k.as_str()), jcs(&map[*k]))).collect();
                format!("{{{}}}", members.join(","))
            }
            Value::Array(items) => format!("[{}]", items.iter().map(jcs).collect::<Vec<_>>().join(",")),
            Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => {
                format!("{}", n.as_f64().unwrap_or(0.0) as i64)
            }
            other => other.to_string(),
        }
    }
    fn digest(text: &str) -> String {
        use sha2::Digest;
        let hex: String = sha2::Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        format!("sha256:{}", &hex[..16])
    }
    let schema = serde_json::json!({"type": "object", "required": ["summary"], "properties": {"summary": {"type": "string", "maxLength": 80.0}}});
    let stage = format!(
        "---\nid: plan\nname: Plan\nallowedTools: [Read, Grep]\ncompletionTool: submit_plan\ncompletionSchema: {schema}\nretryPolicy: {{ maxAttempts: 1, backoff: none }}\nturnCap: 5\nresolutionPolicy: retry-later\n---\nPlan: {{{{ctx.task}}}}. Call `submit_plan` when done.\n"
    );
    let tools = serde_json::json!([
        {"name": "Read", "description": "", "inputSchema": {}},
        {"name": "Grep", "description": "", "inputSchema": {}},
        {"name": "submit_plan", "description": description, "inputSchema": schema},
    ]);
    let messages = serde_json::json!([
        {"role": "user", "text": template("start")},
        {"role": "assistant", "content": [{"text": "thinking"}]},
        {"role": "user", "text": template("steering")},
        {"role": "assistant", "content": [{"toolCall": {"id": "c2", "name": "Read", "args": {"path": "a.rs", "limit": 2.0}}}]},
        {"role": "tool", "results": [{"callId": "c2", "content": "fn main() {}", "isError": false}]},
    ]);
    let request = format!(
        "request: {{ system: \"{}\", tools: \"{}\", messages: \"{}\", count: 5 }}",
        digest("Plan: t. Call `submit_plan` when done.\n"),
        digest(&jcs(&tools)),
        digest(&jcs(&messages))
    );
    let turns = [
        "response: { stop: end_turn, content: [ { text: thinking } ] }".to_string(),
        "response: { stop: tool_use, content: [ { toolCall: { id: c2, name: Read, args: { path: a.rs, limit: 2.0 } } } ] }\n        results: { c2: \"fn main() {}\" }".to_string(),
        format!("response: {{ stop: tool_use, content: [ {{ toolCall: {{ id: c3, name: submit_plan, args: {{ summary: s }} }} }} ] }}\n        {request}"),
    ];
    let turns: Vec<&str> = turns.iter().map(String::as_str).collect();
    let ran = run_stage(&stage, &cassette("", &[&turns]));
    assert!(ran.run.findings.is_empty(), "{:?}", ran.run.findings);
    // And a digest that differs is drift, so the comparison did happen.
    let ran = run_stage(&stage, &cassette("", &[&turns]).replace("count: 5", "count: 4"));
    assert_eq!(codes(&ran.run), ["cassette/RequestDrift"]);
}

// ---- one verdict: a machine `check` calls ambiguous is not replayed (issue 16) ----

fn summary(run: &DryRun) -> Value {
    let last = run.trace.events.last().expect("a summary");
    assert_eq!(last.name, "DryRunSummary");
    last.to_json()
}

/// `a.md` and a Finder-style `a copy.md` with the same id, and `a.cassette.yaml`.
fn duplicated() -> Vec<(&'static str, String)> {
    let copy = PLAN.replace("Plan: {{ctx.task}}", "Plan the copy: {{ctx.task}}");
    let expects = cassette("expectResult: { verdict: ok }\n", &[&[&done("c1")]]);
    vec![
        ("sm.yaml", "entry: plan\n".to_string()),
        ("plan.md", PLAN.to_string()),
        ("plan copy.md", copy),
        ("plan.cassette.yaml", expects),
    ]
}

#[test]
fn a_machine_with_a_duplicate_stage_id_is_not_replayed_by_the_dry_run_or_by_check() {
    let files = duplicated();
    let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let options = Options { strict: false, explain_init: true };
    for target in [".", "plan.md", "plan copy.md"] {
        let ran = run_files(&files, target, options);
        assert_eq!(ran.run.exit_code(), 2, "{target}");
        // The machine names both stages' findings (one on each file); a stage run, its own.
        let expected: &[&str] = if target == "." { &["sm/DuplicateStageId"; 2] } else { &["sm/DuplicateStageId"] };
        assert_eq!(codes(&ran.run), expected, "{target}: the lint error, nothing else");
        assert!(!ran.run.trace.events.iter().any(|e| e.name == "StageSetup"), "{target}: nothing is replayed");
        assert!(
            summary(&ran.run)["refused"].as_str().is_some_and(|r| r.contains("ambiguous") || r.contains("leave open"))
        );
        let timeline = runtime::report::timeline(&ran.workspace, &ran.run);
        assert!(timeline.contains("Result: not run: "), "{timeline}");
        assert!(!timeline.contains('✓'), "{timeline}");
    }
    // `check` reports the duplicate and replays the cassette against neither stage.
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in &files {
        std::fs::write(dir.path().join(name), text).expect("write");
    }
    let (_, found) = common::check_with(&[dir.path().to_path_buf()], Config::defaults(dir.path()));
    let found: Vec<&str> = found.iter().map(|d| d.code).collect();
    assert_eq!(found, ["sm/DuplicateStageId"; 2], "one on each stage that shares the id");
}

#[test]
fn a_machine_whose_entry_is_no_stage_reports_entry_stage_missing_not_the_cassette() {
    let files = [
        ("sm.yaml", "entry: fetch\n".to_string()),
        ("plan.md", PLAN.to_string()),
        ("plan.cassette.yaml", cassette("", &[&[&done("c1")]])),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let ran = run_files(&files, ".", Options { strict: false, explain_init: true });
    assert_eq!(ran.run.exit_code(), 2);
    assert_eq!(
        messages_of(&ran.run, "sm/EntryStageMissing"),
        ["entry stage `fetch` is not a stage of this state machine"]
    );
    assert_eq!(codes(&ran.run), ["sm/EntryStageMissing"], "no cassette is blamed");
    // No entry at all: the state machine file's own error.
    let files = [("sm.yaml", "name: x\n"), ("plan.md", PLAN)];
    let ran = run_files(&files, ".", Options::default());
    assert_eq!((ran.run.exit_code(), codes(&ran.run)), (2, vec!["sm/StateMachineInvalid"]));
}

#[test]
fn the_timeline_names_the_file_each_stage_came_from() {
    let (workspace, run) = example(None);
    let timeline = runtime::report::timeline(&workspace, &run);
    for (id, file) in [("plan", "plan.md"), ("execute", "execute.md"), ("review", "review.md")] {
        let line = timeline.lines().find(|l| l.starts_with(&format!("{id}  Setup"))).expect("a Setup line");
        assert!(line.contains(&format!("examples/code-review/{file}")), "{line}");
    }
    let setup = run.trace.events.iter().find(|e| e.name == "StageSetup").expect("setup");
    assert!(setup.str("file").ends_with("plan.md"), "{setup:?}");
}

// ---- expectations never checked did not hold ----

#[test]
fn an_exhausted_cassette_counts_the_expectations_it_never_reached_as_failed() {
    // One plain-text turn, then the cassette runs out: expectEnd and expectResult are never
    // checked. (Before: `expectations 1/1 ✓`-style counts with `failed: 0`.)
    let text = cassette(
        "expectResult: { verdict: ok, attemptCount: 1 }\n",
        &[&["response: { stop: end_turn, content: [ { text: hm } ] }"]],
    )
    .replace("  - attempt: 1\n", "  - attempt: 1\n    expectEnd: { act: completed }\n");
    let text = text.replace(
        "content: [ { text: hm } ] }\n",
        "content: [ { text: hm } ] }\n        expect: [ { branch: steer } ]\n",
    );
    let ran = run_stage(PLAN, &text);
    assert_eq!((ran.run.passed, ran.run.failed, ran.run.unchecked), (1, 3, 3));
    let failed = messages_of(&ran.run, "cassette/ExpectationFailed");
    assert_eq!(
        failed,
        [
            "`expectResult` (`verdict`, `attemptCount`) was never checked: the cassette ran out in attempt 1, so the stage never exited",
            "`expectEnd` of attempt 1 was never checked: the cassette ran out in attempt 1, so the stage never exited",
        ]
    );
    let counts = &summary(&ran.run)["expectations"];
    assert_eq!(counts, &serde_json::json!({"passed": 1, "failed": 3, "unchecked": 3}));
    let timeline = runtime::report::timeline(&ran.workspace, &ran.run);
    assert!(timeline.contains("Result: expectations 1/4 ✗ (3 never checked)"), "{timeline}");
    assert!(timeline.contains("expect ✗ never checked: expectResult.attemptCount: 1"), "{timeline}");
    assert_eq!(ran.run.exit_code(), 1);
}

#[test]
fn each_expectation_is_an_event_and_the_stream_is_versioned() {
    let text = cassette("expectResult: { verdict: ok }\n", &[&[&done("c1")]])
        .replace(&format!("{}\n", done("c1").replace("{ toolCall", "[ { toolCall").trim_end()), "")
        .replace("] }\n", "] }\n        expect: [ { branch: completion, call: c1 }, { branch: steer } ]\n");
    let ran = run_stage(PLAN, &text);
    let outcomes: Vec<String> = ran
        .run
        .trace
        .events
        .iter()
        .filter(|e| e.name == "ExpectationOutcome")
        .map(|e| format!("{} {} {}", e.str("kind"), e.str("expected"), e.str("outcome")))
        .collect();
    assert_eq!(outcomes, ["turn completion c1 held", "turn steer failed", "result verdict: \"ok\" held"]);
    for line in ran.run.trace.to_json_lines().lines() {
        let event: Value = serde_json::from_str(line).expect("json");
        assert_eq!(event["version"], runtime::events_version(), "{line}");
    }
}

#[test]
fn no_next_is_null_in_every_stage_next() {
    // A single stage without `next`, and a machine's last stage: the same encoding.
    let ran = run_stage(PLAN, &cassette("", &[&[&done("c1")]]));
    let next = ran.run.trace.events.iter().find(|e| e.name == "StageNext").expect("next");
    assert_eq!((next.data["next"].clone(), next.data["evaluated"].clone()), (Value::Null, Value::Bool(false)));
    let (_, run) = example(None);
    let last = run.trace.events.iter().rev().find(|e| e.name == "StageNext").expect("next");
    assert_eq!((last.str("stage"), last.data["next"].clone()), ("review", Value::Null));
    assert!(!run.trace.to_json_lines().contains("terminate"));
}

// ---- values the context may lack render empty (docs/decisions.md) ----

#[test]
fn an_optional_ctx_field_or_an_empty_upstream_renders_empty_a_required_one_fails_init() {
    let stage = PLAN.replace(
        "Plan: {{ctx.task}}.",
        "Plan: {{ctx.task}} on {{ctx.branch}} after {{ctx.upstream[0].parsed.summary}}.",
    );
    let run = |context: &str| {
        let sm = format!("entry: plan\ncontext: {context}\n");
        let files = [
            ("sm.yaml", sm.as_str()),
            ("plan.md", stage.as_str()),
            ("plan.cassette.yaml", &cassette("", &[&[&done("c1")]])),
        ];
        let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, *t)).collect();
        run_files(&files, "plan.md", Options { strict: false, explain_init: true })
    };
    // `branch` may be left out: it renders empty, like the entry stage's `ctx.upstream`.
    let ran = run("{ required: [task], optional: [branch] }");
    assert_eq!(ran.run.exit_code(), 0, "{:?}", ran.run.findings);
    let rendered = ran.run.trace.events.iter().find(|e| e.name == "StageInitRendered").expect("rendered");
    assert_eq!(rendered.data["empty"], serde_json::json!(["ctx.branch", "ctx.upstream[0].parsed.summary"]));
    let timeline = runtime::report::timeline(&ran.workspace, &ran.run);
    assert!(timeline.contains("1 placeholder(s), 2 rendered empty"), "{timeline}");
    // `branch` is required: a cassette without it records a run that cannot happen.
    let ran = run("{ required: [task, branch] }");
    assert_eq!(ran.run.exit_code(), 2);
    let incomplete: Vec<_> = ran.run.findings.iter().filter(|d| d.code == "cassette/ContextIncomplete").collect();
    assert_eq!(incomplete.len(), 1, "{:?}", ran.run.findings);
    assert!(incomplete[0].message.contains("`ctx.branch` has no value"), "{}", incomplete[0].message);
    assert!(incomplete[0].help.as_deref().is_some_and(|h| h.contains("context.optional")));
}

/// The `system` fingerprint `PLAN`'s request has, read from the drift fix of a wrong one.
fn system_fingerprint(stage: &str) -> String {
    let first = format!(
        "response: {{ stop: tool_use, content: [ {} ] }}\n        request: {{ system: \"sha256:0000000000000000\" }}",
        done("c1")
    );
    let ran = run_stage(stage, &cassette("", &[&[&first]]));
    let fix = ran.run.findings.iter().find_map(|f| f.fix.as_ref()).expect("a drift fix");
    fix.edits[0].1.replacement.clone()
}

#[test]
fn a_crlf_checkout_and_a_body_suppression_from_the_frontmatter_keep_the_system_fingerprint() {
    // Issue 16, bug 10: `core.autocrlf` turns every `\n` into `\r\n`.
    let lf = system_fingerprint(PLAN);
    assert_eq!(system_fingerprint(&PLAN.replace('\n', "\r\n")), lf);
    // A body suppression written in the frontmatter is not part of the prompt.
    let suppressed = PLAN.replace("turnCap: 3\n", "turnCap: 3\n# stagelint: ignore-body[sm/StageCtxUnresolved]\n");
    assert_eq!(system_fingerprint(&suppressed), lf);
    // One written in the body is: that is why the editor writes the frontmatter form.
    let in_body = PLAN.replace("Plan: ", "<!-- stagelint: ignore[sm/StageCtxUnresolved] -->\nPlan: ");
    assert_ne!(system_fingerprint(&in_body), lf);
}

/// Issue 19: a recording redacted after the fact (as `dry-run --record` does by default) replays
/// with no `RequestDrift`, though the fingerprints were taken while the secrets were in the
/// requests: fingerprints are computed over redacted text on both sides.
#[test]
fn a_redacted_recording_replays_without_drift() {
    let key = "sk-ant-api03-Qx7fK2mZp9LwR4tYb8NcV1sD6hJ3gE5uA0oIxMzWqRkTyUiOpLk";
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("plan.md"), PLAN).expect("write");
    let seed = format!(
        "cassette: 1\nstage: plan\nctx: {{ task: \"deploy with {key}\" }}\ntools:\n  Grep:\n    - {{ anyArgs: true, result: \"GITHUB_TOKEN=ghp_Zr8Kq2LmX4vN7bT1yW9cH3fJ6dP0sG5aE2uR\" }}\nattempts: []\n"
    );
    std::fs::write(dir.path().join("seed.cassette.yaml"), seed).expect("write");
    let mut provider = Scripted(vec![
        tool_use("c1", "Grep", serde_json::json!({"pattern": key})),
        tool_use("c2", "submit_plan", serde_json::json!({"summary": "s", "steps": ["a"]})),
    ]);
    let (run, mut cassette) = record_plan(dir.path(), &mut provider);
    assert_eq!(run.exit_code(), 0, "{:?}", run.findings);
    // `ctx.task`, the fake's result (copied from the seed) and the call's arguments.
    assert_eq!(runtime::recording::redact(&mut cassette), 3);
    let yaml = stagelint::source::yaml_write::to_yaml(&cassette);
    assert!(!yaml.contains(key) && !yaml.contains("ghp_"), "{yaml}");
    assert!(yaml.contains("«redacted:anthropic-key»"), "{yaml}");
    std::fs::remove_file(dir.path().join("seed.cassette.yaml")).expect("rm");
    std::fs::write(dir.path().join("plan.cassette.yaml"), &yaml).expect("write");
    let options = Options { strict: true, explain_init: true };
    let mut configs = stagelint::workspace::discover::ConfigCache::new(Some(Config::defaults(dir.path())));
    let (_, replay) =
        runtime::dry_run_path(&dir.path().join("plan.md"), None, options, &mut configs, &Default::default())
            .expect("replays");
    let drift: Vec<_> = replay.findings.iter().filter(|d| d.code == "cassette/RequestDrift").collect();
    assert!(drift.is_empty(), "{drift:?}");
    assert_eq!(replay.exit_code(), 0, "{:?}", replay.findings);
}

/// Issue 16 audit: a machine cassette without an entry for a stage that runs is reported at
/// its `stages:` key (where the entry belongs), not at 1:1.
#[test]
fn a_stage_missing_from_a_machine_cassette_is_reported_at_its_stages_key() {
    let files = [
        ("sm.yaml", "entry: plan\n".to_string()),
        ("plan.md", stage("plan", "next: { nextStages: [build] }\n", "Task {{ctx.task}}.")),
        ("build.md", stage("build", "", "Plan said {{ctx.upstream[0].parsed.note}}.")),
        ("sm.cassette.yaml", machine_cassette(&["plan"], None)),
    ];
    let ran = run_machine(&files);
    let exhausted: Vec<_> = ran.run.findings.iter().filter(|d| d.code == "cassette/CassetteExhausted").collect();
    assert_eq!(exhausted.len(), 1, "{:?}", ran.run.findings);
    let text = &ran.workspace.file(exhausted[0].file).text;
    assert_eq!(&text[exhausted[0].span.start..exhausted[0].span.end], "stages");
    assert!(exhausted[0].message.contains("no `stages.build` entry"), "{}", exhausted[0].message);
}

/// Issue 16 audit: a stage that fails Setup is said to fail Setup by its `cassette/` finding
/// too, as the timeline and the events say; and after the machine failed, every stage it
/// never reached gets that one reason, reachable from the entry or not.
#[test]
fn a_setup_failure_is_named_as_setup_and_the_stages_after_it_get_one_reason() {
    let files = [
        ("sm.yaml", "entry: plan\n".to_string()),
        (
            "plan.md",
            stage("plan", "next: { nextStages: [build] }\n", "Task {{ctx.task}}.")
                .replace("turnCap: 2", "turnCap: \"2\""),
        ),
        ("build.md", stage("build", "", "Plan said {{ctx.upstream[0].parsed.note}}.")),
        ("orphan.md", stage("orphan", "", "Alone.")),
        ("sm.cassette.yaml", machine_cassette(&["plan", "build", "orphan"], None)),
    ];
    let ran = run_machine(&files);
    let init_failed = messages_of(&ran.run, "cassette/StageInitFailed");
    assert_eq!(init_failed.len(), 1, "{:?}", ran.run.findings);
    assert!(init_failed[0].starts_with("stage `plan` fails Setup (StageDefinitionInvalid)"), "{}", init_failed[0]);
    let unused = messages_of(&ran.run, "cassette/CassetteUnconsumed");
    assert_eq!(unused.len(), 2, "{:?}", ran.run.findings);
    for message in unused {
        assert!(message.ends_with("the machine failed earlier (StageInitFailed)"), "{message}");
    }
}

/// The dry-run labels a did-you-mean fix as `check` does: `entry: Intake` only changes case,
/// so its fix is safe in both.
#[test]
fn dry_run_settles_a_case_only_did_you_mean_as_check_does() {
    let files = [
        (
            "sm.yaml",
            r#"entry: Intake
context:
  required: [issue]
  optional: [repo]
"#,
        ),
        (
            "intake.md",
            r#"---
id: intake
name: Intake
allowedTools: [Read, Grep]
completionTool: submit_intake
completionSchema:
  type: object
  required: [question, area]
  properties:
    question: { type: string }
    area: { type: string }
retryPolicy: { maxAttempts: 2, backoff: none }
turnCap: 8
resolutionPolicy: retry-later
next:
  nextStages: [search-code, search-web]
  execution: parallel
  join: synthesize
---
Read the issue: {{ctx.issue}} in {{ctx.repo}}.
Call `submit_intake` with `question` and `area`.
"#,
        ),
        (
            "search-code.md",
            r#"---
id: search-code
name: Search code
allowedTools: [Read, Grep, Glob]
completionTool: submit_code_hits
completionSchema:
  type: object
  required: [hits]
  properties:
    hits: { type: array, items: { type: string } }
retryPolicy: { maxAttempts: 1, backoff: none }
turnCap: 10
resolutionPolicy: retry-later
---
Search the code for {{ctx.issue}}. Call `submit_code_hits` with `hits`.
"#,
        ),
        (
            "search-web.md",
            r#"---
id: search-web
name: Search web
allowedTools: [WebFetch]
completionTool: submit_web_hits
completionSchema:
  type: object
  required: [links]
  properties:
    links: { type: array, items: { type: string } }
retryPolicy: { maxAttempts: 1, backoff: fixed }
turnCap: 6
resolutionPolicy: skip
---
Search the web for {{ctx.issue}}. Call `submit_web_hits` with `links`.
"#,
        ),
        (
            "synthesize.md",
            r#"---
id: synthesize
name: Synthesize
allowedTools: []
completionTool: submit_answer
completionSchema:
  type: object
  required: [answer]
  properties:
    answer: { type: string }
inputsSchema:
  type: object
  required: [verdict]
retryPolicy: { maxAttempts: 2, backoff: exponential }
turnCap: 5
resolutionPolicy: fail
---
Code hits: {{ctx.upstream[0].parsed.hits}}
Web links: {{ctx.upstream[1].parsed.links}}
Call `submit_answer` with `answer`.
"#,
        ),
        (
            "sm.cassette.yaml",
            r#"cassette: 1
ctx:
  issue: Login fails after token refresh
  repo: acme/web
tools:
  Read:
    - anyArgs: true
      result: "fn refresh() {}"
  Grep:
    - anyArgs: true
      result: "src/auth.rs:3: fn refresh"
  WebFetch:
    - anyArgs: true
      result: "<html>refresh docs</html>"
stages:
  intake:
    attempts:
      - turns:
          - response:
              stop: tool_use
              content:
                - toolCall: { id: c1, name: Grep, args: { pattern: refresh } }
            expect: [ { branch: tool, call: c1, outcome: dispatched } ]
          - response:
              stop: tool_use
              content:
                - toolCall: { id: c2, name: submit_intake, args: { question: why, area: auth } }
            expect: [ { branch: completion, call: c2 } ]
        expectEnd: { act: completed, assert: ok }
    expectResult: { verdict: ok, attemptCount: 1, capHit: false }
  search-code:
    attempts:
      - turns:
          - response:
              stop: tool_use
              content:
                - toolCall: { id: c3, name: submit_code_hits, args: { hits: [src/auth.rs] } }
            expect: [ { branch: completion, call: c3 } ]
    expectResult: { verdict: ok }
  search-web:
    attempts:
      - turns:
          - response:
              stop: tool_use
              content:
                - toolCall: { id: c4, name: WebFetch, args: { url: "https://x" } }
            expect: [ { branch: tool, call: c4, outcome: dispatched } ]
          - response:
              stop: tool_use
              content:
                - toolCall: { id: c5, name: submit_web_hits, args: { links: ["https://x"] } }
            expect: [ { branch: completion, call: c5 } ]
    expectResult: { verdict: ok }
  synthesize:
    attempts:
      - turns:
          - response:
              stop: end_turn
              content:
                - text: "thinking..."
            expect: [ { branch: steer } ]
          - response:
              stop: tool_use
              content:
                - toolCall: { id: c6, name: submit_answer, args: { answer: "clock skew" } }
            expect: [ { branch: completion, call: c6 } ]
    expectResult: { verdict: ok, attemptCount: 1 }
"#,
        ),
    ];
    let options = Options { strict: false, explain_init: true };
    let ran = try_run_files(&files, ".", Some("sm.cassette.yaml"), options).expect("dry-run starts");
    let entry = ran.run.findings.iter().find(|d| d.message.contains("`Intake`")).expect("the entry finding");
    let fix = entry.fix.as_ref().expect("a fix");
    assert_eq!(
        (fix.title.as_str(), fix.applicability),
        ("Replace with `intake`", stagelint::diagnostic::Applicability::Safe)
    );
    let _ = &ran.workspace;
}

/// Records the stage `plan.md` of `dir` from its `seed.cassette.yaml` against `provider`.
fn record_plan(
    dir: &std::path::Path,
    provider: &mut dyn stagelint::cassette::provider::Provider,
) -> (runtime::DryRun, serde_json::Value) {
    let mut configs = stagelint::workspace::discover::ConfigCache::new(Some(Config::defaults(dir)));
    let workspace = stagelint::workspace::discover::discover(&[dir.to_path_buf()], &mut configs).expect("read");
    let stage = workspace.file_at(&dir.join("plan.md")).expect("stage").id;
    let seed = workspace.file_at(&dir.join("seed.cassette.yaml")).expect("seed").id;
    let provenance = serde_json::json!({"source": "recorded", "provider": "scripted"});
    runtime::recording::record_stage(&workspace, stage, Some(seed), provider, provenance).expect("records")
}
