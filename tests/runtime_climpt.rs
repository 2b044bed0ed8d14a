//! The climpt engine, branch by branch, written from climpt's sources at 4af87ad (v1.13.27):
//! `agents/runner/step-gate-interpreter.ts` (the gate), `workflow-router.ts` (the router),
//! `flow-orchestrator.ts` (entry, stepId normalisation, handoff), `runner.ts` and
//! `completion-loop-processor.ts` (the two loops), `validation-chain.ts` and
//! `agents/retry/retry-handler.ts` (validation and retry prompts), `agents/common/prompt-resolver.ts`
//! (prompts). Each test runs a small agent against a flow cassette and asserts the exact event
//! sequence with the fields that matter.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};
use stagelint::config::Config;
use stagelint::runtime::{self, DryRun, Options};
use stagelint::workspace::Workspace;

/// A work step `a` (`initial.a`), its continuation, and a closure step, all gated.
fn registry(steps: Value, extra: Value) -> Value {
    let mut registry = json!({
        "agentId": "demo", "version": "1.0.0", "c1": "steps",
        "entryStepMapping": {"poll:state": "initial.a"},
        "steps": steps,
    });
    if let (Some(map), Value::Object(extra)) = (registry.as_object_mut(), extra) {
        map.extend(extra);
    }
    registry
}

fn step(id: &str, kind: &str, intents: &[&str], transitions: Value) -> (String, Value) {
    let (c2, c3) = id.split_once('.').unwrap_or((id, ""));
    let value = json!({
        "stepId": id, "name": id, "stepKind": kind, "c2": c2, "c3": c3.replace('.', "-"), "edition": "default",
        "uvVariables": [], "usesStdin": false,
        "structuredGate": {
            "allowedIntents": intents, "intentSchemaRef": "#/properties/next_action/properties/action",
            "intentField": "next_action.action"
        },
        "transitions": transitions,
    });
    (id.to_string(), value)
}

fn steps(list: Vec<(String, Value)>) -> Value {
    Value::Object(list.into_iter().collect())
}

/// The usual three: `initial.a` → `continuation.a` → `closure.a`.
fn three() -> Vec<(String, Value)> {
    vec![
        step("initial.a", "work", &["next", "repeat"], json!({"next": {"target": "continuation.a"}})),
        step("continuation.a", "work", &["repeat", "handoff"], json!({"handoff": {"target": "closure.a"}})),
        step("closure.a", "closure", &["closing", "repeat"], json!({"closing": {"target": null}})),
    ]
}

struct Ran {
    _dir: tempfile::TempDir,
    workspace: Workspace,
    run: DryRun,
}

/// Writes the agent (`registry`, an agent.json with `maxIterations`, a prompt per step and
/// `prompts`) and `cassette`, then dry-runs the agent directory.
fn run(registry: &Value, max_iterations: u64, prompts: &[(&str, &str)], cassette: &str) -> Ran {
    run_with(registry, max_iterations, prompts, cassette, Options { strict: false, explain_init: true })
}

/// [`run`] with these options (`--strict`).
fn run_with(registry: &Value, max_iterations: u64, prompts: &[(&str, &str)], cassette: &str, options: Options) -> Ran {
    let dir = tempfile::tempdir().expect("temp dir");
    let agent = dir.path().join(".agent/demo");
    let write = |path: &Path, text: &str| {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(path, text).expect("write");
    };
    write(&agent.join("steps_registry.json"), &serde_json::to_string_pretty(registry).expect("json"));
    let definition = json!({
        "version": "1.0.0", "name": "demo", "displayName": "Demo", "description": "A demo",
        "parameters": {"issue": {"type": "number", "description": "Issue", "required": true, "cli": "--issue"}},
        "runner": {"flow": {"systemPromptPath": "prompts/system.md", "prompts": {"registry": "steps_registry.json"}},
                   "verdict": {"type": "poll:state", "config": {"maxIterations": max_iterations}}}
    });
    write(&agent.join("agent.json"), &definition.to_string());
    for (id, step) in registry["steps"].as_object().into_iter().flatten() {
        let (c2, c3) = (step["c2"].as_str().unwrap_or(""), step["c3"].as_str().unwrap_or(""));
        write(
            &agent.join(format!("prompts/steps/{c2}/{c3}/f_default.md")),
            &format!("Step {id} of issue {{uv-issue}}.\n"),
        );
    }
    for (path, text) in prompts {
        write(&agent.join("prompts").join(path), text);
    }
    write(&agent.join("agent.cassette.yaml"), cassette);
    let mut configs = stagelint::workspace::discover::ConfigCache::new(Some(Config::defaults(dir.path())));
    let (workspace, run) =
        runtime::dry_run_path(&agent, None, options, &mut configs, &HashMap::new()).expect("the dry-run starts");
    Ran { _dir: dir, workspace, run }
}

/// A cassette for `demo` with issue 42 and these iterations (each a flow mapping).
fn cassette(iterations: &[&str]) -> String {
    let mut text = "cassette: 1\nagent: demo\nargs: { issue: 42 }\niterations:\n".to_string();
    for iteration in iterations {
        text.push_str(&format!("  - {iteration}\n"));
    }
    text
}

/// An iteration whose output says `action`.
fn says(action: &str) -> String {
    format!("{{ output: {{ next_action: {{ action: {action} }} }} }}")
}

/// Each event as `Name field=value …`, with the fields the tests care about.
fn events(run: &DryRun) -> Vec<String> {
    run.trace
        .events
        .iter()
        .filter(|e| {
            !matches!(e.name, "DryRunSummary" | "DryRunMismatch" | "PromptBuilt" | "QueryExecuted" | "OutputValidated")
        })
        .map(|e| {
            let mut line = e.name.to_string();
            for key in [
                "iteration",
                "iterations",
                "step",
                "intent",
                "usedFallback",
                "to",
                "signalClosing",
                "code",
                "validator",
                "passed",
                "pattern",
                "attempt",
                "isComplete",
                "reason",
                "outcome",
                "value",
            ] {
                if matches!(key, "step" | "reason")
                    && !matches!(e.name, "IterationStart" | "VerdictChecked" | "AgentFinished")
                {
                    continue;
                }
                if let Some(value) = e.data.get(key).filter(|v| !v.is_null()) {
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

fn last(run: &DryRun, name: &str) -> Value {
    let event = run.trace.events.iter().rev().find(|e| e.name == name);
    event.map_or(Value::Null, |e| Value::Object(e.data.clone()))
}

fn finished(run: &DryRun) -> (String, u64) {
    let event = last(run, "AgentFinished");
    (event["outcome"].as_str().unwrap_or("").to_string(), event["iterations"].as_u64().unwrap_or(0))
}

fn error_code(run: &DryRun) -> String {
    last(run, "FlowError")["code"].as_str().unwrap_or("").to_string()
}

/// The stop's climpt id, and where its `cassette/FlowStopped` finding points in the agent: the
/// related location's file name, text (and in a registry the step it is in: the pretty JSON the
/// tests write has each step's `stepId` before its gate and transitions) and note.
fn cause(ran: &Ran) -> (String, String, String) {
    let stopped = ran.run.findings.iter().find(|d| d.code == "cassette/FlowStopped");
    let related = stopped.and_then(|d| d.related.first());
    let at = related.map(|r| {
        let file = ran.workspace.file(r.file.expect("another file"));
        let name = file.path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
        let before = &file.text[..r.span.start];
        let step = before.rfind("\"stepId\": \"").map(|at| &before[at + 11..]);
        let step = step.and_then(|s| s.split('"').next()).map(|s| format!(" in {s}")).unwrap_or_default();
        format!("{name}: {}{step}", &file.text[r.span.start..r.span.end])
    });
    (error_code(&ran.run), at.unwrap_or_default(), related.map(|r| r.message.clone()).unwrap_or_default())
}

#[test]
fn the_happy_path_runs_entry_to_closing_with_the_exact_events() {
    let ran = run(
        &registry(steps(three()), json!({})),
        10,
        &[],
        &cassette(&[&says("next"), &says("handoff"), &says("closing")]),
    );
    assert_eq!(
        events(&ran.run),
        [
            "AgentStart",
            "IterationStart iteration=1 step=initial.a",
            "IntentInterpreted iteration=1 intent=next usedFallback=false",
            "RoutingDecision iteration=1 intent=next to=continuation.a signalClosing=false",
            "VerdictChecked iteration=1 step=initial.a isComplete=false reason=continue",
            "IterationStart iteration=2 step=continuation.a",
            "IntentInterpreted iteration=2 intent=handoff usedFallback=false",
            "RoutingDecision iteration=2 intent=handoff to=closure.a signalClosing=false",
            "VerdictChecked iteration=2 step=continuation.a isComplete=false reason=continue",
            "IterationStart iteration=3 step=closure.a",
            "CompletionLoopEnter iteration=3",
            "BoundaryHook",
            "VerdictChecked iteration=3 step=closure.a isComplete=true reason=Closure step emitted closing signal",
            "AgentFinished iterations=3 reason=Closure step emitted closing signal outcome=completed",
        ]
    );
    assert_eq!(ran.run.exit_code(), 0, "{:?}", ran.run.findings);
    let start = last(&ran.run, "AgentStart");
    assert_eq!(
        (start["release"].as_str(), start["entry"].as_str()),
        (Some("climpt v1.13.27 (4af87ad)"), Some("initial.a"))
    );
    // The prompt as sent, UV substituted.
    let prompt = ran.run.trace.events.iter().find(|e| e.name == "PromptBuilt").expect("a prompt");
    assert_eq!(prompt.str("prompt"), "Step initial.a of issue 42.");
    assert_eq!(prompt.data["substituted"], json!(["issue"]));
}

#[test]
fn the_gate_lower_cases_and_maps_aliases() {
    // `Continue` → next, `DONE` would be closing; numbers are `String(v)`.
    let ran = run(
        &registry(steps(three()), json!({})),
        10,
        &[],
        &cassette(&[&says("Continue"), &says("handoff"), &says("closing")]),
    );
    assert_eq!(last(&ran.run, "RoutingDecision")["to"], "closure.a");
    assert!(events(&ran.run).contains(&"IntentInterpreted iteration=1 intent=next usedFallback=false".to_string()));
}

#[test]
fn fail_fast_refuses_an_unknown_missing_or_disallowed_intent() {
    for (output, why) in [
        ("{ output: { next_action: { action: sideways } } }", "Unknown intent value: sideways"),
        ("{ output: { summary: none } }", "No value at path: next_action.action"),
        ("{ output: { next_action: { action: handoff } } }", "Intent 'handoff' not in allowedIntents"),
    ] {
        let ran = run(&registry(steps(three()), json!({})), 10, &[], &cassette(&[output]));
        assert_eq!(error_code(&ran.run), "GateInterpretationError", "{output}");
        let error = last(&ran.run, "FlowError");
        assert!(error["message"].as_str().unwrap_or("").contains(why), "{error}");
        assert_eq!(codes(&ran.run), ["cassette/FlowStopped"], "{output}");
        // A model answer the gate cannot read is a mismatch, not an authoring error.
        assert_eq!(ran.run.exit_code(), 1);
    }
}

#[test]
fn without_fail_fast_the_fallback_is_fallback_intent_then_next_then_the_first_allowed() {
    let gate = |fallback: Option<&str>, intents: &[&str]| {
        let mut list = three();
        list[0].1["structuredGate"]["failFast"] = json!(false);
        list[0].1["structuredGate"]["allowedIntents"] = json!(intents);
        if let Some(fallback) = fallback {
            list[0].1["structuredGate"]["fallbackIntent"] = json!(fallback);
        }
        list[0].1["transitions"] = json!({"next": {"target": "continuation.a"}, "repeat": {"target": "initial.a"}});
        registry(steps(list), json!({}))
    };
    let cases = [
        (Some("repeat"), &["next", "repeat"][..], "repeat"),
        (None, &["repeat", "next"], "next"),
        (None, &["repeat"], "repeat"),
    ];
    for (fallback, intents, expected) in cases {
        let ran = run(&gate(fallback, intents), 1, &[], &cassette(&[&says("sideways")]));
        let interpreted = last(&ran.run, "IntentInterpreted");
        assert_eq!((interpreted["intent"].as_str(), &interpreted["usedFallback"]), (Some(expected), &json!(true)));
        assert_eq!(interpreted["reason"], "Unknown intent value: sideways");
    }
}

#[test]
fn the_reason_is_read_in_climpts_order_and_handoff_fields_by_their_last_segment() {
    let mut list = three();
    list[1].1["structuredGate"]["handoffFields"] = json!(["result.pr.number", "missing.field"]);
    let ran = run(
        &registry(steps(list), json!({})),
        10,
        &[],
        &cassette(&[
            "{ output: { message: m, reason: r, next_action: { action: next, details: { reason: d } } } }",
            "{ output: { result: { pr: { number: 7 } }, next_action: { action: handoff } } }",
        ]),
    );
    let first = ran.run.trace.events.iter().find(|e| e.name == "IntentInterpreted").expect("interpreted");
    assert_eq!(first.str("reason"), "r");
    let second = last(&ran.run, "IntentInterpreted");
    assert_eq!(second["handoff"], json!({"number": 7}));
    assert!(ran.run.trace.events.iter().any(|e| e.name == "HandoffFieldMissing" && e.str("field") == "missing.field"));
}

#[test]
fn the_router_follows_direct_and_conditional_transitions_with_climpts_coercion() {
    let conditional = |value: &str| {
        let mut list = three();
        list[0].1["structuredGate"]["handoffFields"] = json!(["verdict"]);
        list[0].1["transitions"] = json!({"next": {"condition": "verdict", "targets": {
            "approved": "closure.a", "true": "continuation.a", "3": "continuation.a", "held": null, "default": "initial.a"}}});
        run(
            &registry(steps(list), json!({})),
            1,
            &[],
            &cassette(&[&format!("{{ output: {{ verdict: {value}, next_action: {{ action: next }} }} }}")]),
        )
    };
    for (value, expected, to) in [
        ("approved", "approved", "closure.a"),
        ("true", "true", "continuation.a"),
        ("3", "3", "continuation.a"),
        ("other", "other", "initial.a"),
        ("null", "default", "initial.a"),
        // `targets[value] ?? targets.default`: a null target falls through to `default`.
        ("held", "held", "initial.a"),
    ] {
        let ran = conditional(value);
        assert_eq!(last(&ran.run, "ConditionEvaluated")["value"], expected, "{value}");
        assert_eq!(last(&ran.run, "RoutingDecision")["to"], to, "{value}");
    }
}

#[test]
fn router_errors_carry_climpts_ids() {
    let with = |index: usize, transitions: Value, intents: &[&str], action: &str| {
        let mut list = three();
        list[index].1["transitions"] = transitions;
        list[index].1["structuredGate"]["allowedIntents"] = json!(intents);
        list[index].1["structuredGate"]["targetField"] = json!("next_action.target");
        let mut iterations = vec![says("next")];
        if index == 1 {
            iterations.push(action.to_string());
        } else {
            iterations[0] = action.to_string();
        }
        let iterations: Vec<&str> = iterations.iter().map(String::as_str).collect();
        let ran = run(&registry(steps(list), json!({})), 10, &[], &cassette(&iterations));
        let (code, at, _) = cause(&ran);
        (code, at)
    };
    let act = |action: &str| format!("{{ output: {{ next_action: {{ action: {action}, target: nowhere }} }} }}");
    assert_eq!(
        with(0, json!({"next": {"target": "gone"}}), &["next"], &says("next")),
        ("SR-TRANS-001".into(), "steps_registry.json: \"gone\" in initial.a".into())
    );
    assert_eq!(
        with(0, json!({"next": {"target": null}}), &["next"], &says("next")),
        ("SR-TRANS-002".into(), "steps_registry.json: null in initial.a".into())
    );
    assert_eq!(
        with(1, json!({}), &["next", "repeat"], &says("next")),
        ("SR-TRANS-003".into(), "steps_registry.json: \"transitions\" in continuation.a".into())
    );
    assert_eq!(
        with(1, json!({}), &["handoff"], &says("handoff")),
        ("SR-TRANS-004".into(), "steps_registry.json: \"transitions\" in continuation.a".into())
    );
    assert_eq!(
        with(1, json!({"handoff": {"target": null}}), &["handoff"], &says("handoff")),
        ("SR-TRANS-005".into(), "steps_registry.json: null in continuation.a".into())
    );
    assert_eq!(
        with(1, json!({"handoff": {"target": "gone"}}), &["handoff"], &says("handoff")),
        ("SR-TRANS-006".into(), "steps_registry.json: \"gone\" in continuation.a".into())
    );
    assert_eq!(
        with(0, json!({}), &["jump"], &act("jump")),
        ("SR-TRANS-010".into(), "steps_registry.json: \"next_action.target\" in initial.a".into())
    );
    // `escalate` is a verification step's; a work step that allows it is refused by kind.
    assert_eq!(
        with(0, json!({}), &["escalate"], &says("escalate")),
        ("SR-INTENT-001".into(), "steps_registry.json: \"escalate\" in initial.a".into())
    );
    let verification = |transitions: Value| {
        let mut list = three();
        list[0] = step("initial.a", "verification", &["escalate"], transitions);
        let ran = run(&registry(steps(list), json!({})), 10, &[], &cassette(&[&says("escalate")]));
        let (code, at, _) = cause(&ran);
        ((code, at), last(&ran.run, "RoutingDecision")["to"].clone())
    };
    assert_eq!(
        verification(json!({})).0,
        ("SR-TRANS-007".into(), "steps_registry.json: \"transitions\" in initial.a".into())
    );
    assert_eq!(
        verification(json!({"escalate": {"target": "gone"}})).0,
        ("SR-TRANS-008".into(), "steps_registry.json: \"gone\" in initial.a".into())
    );
    assert_eq!(
        verification(json!({"escalate": {"condition": "x", "targets": {}}})).0,
        ("SR-TRANS-009".into(), "steps_registry.json: \"escalate\" in initial.a".into())
    );
    assert_eq!(verification(json!({"escalate": {"target": "continuation.a"}})).1, "continuation.a");
}

#[test]
fn a_registry_defect_is_an_authoring_error() {
    let mut list = three();
    list[0].1["transitions"] = json!({"next": {"target": "gone"}});
    let ran = run(&registry(steps(list), json!({})), 10, &[], &cassette(&[&says("next")]));
    assert_eq!(ran.run.exit_code(), 2);
    let text = runtime::report::timeline(&ran.workspace, &ran.run);
    assert!(text.ends_with("Result: stopped: SR-TRANS-001 (an authoring error, exit 2) · mismatches 1\n"), "{text}");
    // The finding is on the cassette; its related location is the registry's defect.
    assert_eq!(
        cause(&ran),
        ("SR-TRANS-001".into(), "steps_registry.json: \"gone\" in initial.a".into(), "the transition".into())
    );
    // A conditional transition: the target its handoff value chose (here `default`).
    let mut list = three();
    list[0].1["structuredGate"]["handoffFields"] = json!(["verdict"]);
    list[0].1["transitions"] =
        json!({"next": {"condition": "verdict", "targets": {"ok": "continuation.a", "default": "gone"}}});
    let output = "{ output: { verdict: maybe, next_action: { action: next } } }";
    let ran = run(&registry(steps(list), json!({})), 10, &[], &cassette(&[output]));
    assert_eq!(cause(&ran).1, "steps_registry.json: \"gone\" in initial.a");
    // A `{uv-x}` no channel provides: the tag in the prompt file.
    let prompt = ("steps/initial/a/f_default.md", "Step for {uv-issue} on {uv-branch}.\n");
    let ran = run(&registry(steps(three()), json!({})), 10, &[prompt], &cassette(&[&says("next")]));
    assert_eq!(
        cause(&ran),
        ("PR-RESOLVE-005".into(), "f_default.md: {uv-branch}".into(), "the variable no channel provides".into())
    );
    // A validation condition naming no validator.
    let mut reg = validated(json!({}));
    reg["validationSteps"]["closure.polling"]["validationConditions"] = json!([{"validator": "gone"}]);
    let ran = run(&reg, 10, &[], &cassette(&[&says("next"), &says("handoff"), "{ validators: {} }"]));
    assert_eq!(cause(&ran).0, "ValidatorNotFound");
    assert!(cause(&ran).1.starts_with("steps_registry.json: \"gone\""), "{:?}", cause(&ran));
    // The gate refusing the model's answer is not the registry's defect, but says where it reads.
    let ran = run(&registry(steps(three()), json!({})), 10, &[], &cassette(&[&says("sideways")]));
    assert_eq!(cause(&ran).1, "steps_registry.json: \"next_action.action\" in initial.a");
}

#[test]
fn jump_repeat_and_the_initial_to_continuation_default() {
    let mut list = three();
    list[0].1["structuredGate"]["allowedIntents"] = json!(["next", "jump", "repeat"]);
    list[0].1["structuredGate"]["targetField"] = json!("next_action.target");
    list[0].1["transitions"] = json!({});
    let ran = run(
        &registry(steps(list), json!({})),
        4,
        &[],
        &cassette(&[
            &says("repeat"),
            "{ output: { next_action: { action: jump, target: closure.a } } }",
            &says("closing"),
        ]),
    );
    let routes: Vec<String> =
        ran.run.trace.events.iter().filter(|e| e.name == "RoutingDecision").map(|e| e.str("to").to_string()).collect();
    assert_eq!(routes, ["initial.a", "closure.a"]);
    assert_eq!(finished(&ran.run), ("completed".into(), 3));
    // `next` with no rule: `initial.X` → `continuation.X`, logged as prefix substitution.
    let mut list = three();
    list[0].1["transitions"] = json!({});
    let ran = run(&registry(steps(list), json!({})), 1, &[], &cassette(&[&says("next")]));
    assert_eq!(last(&ran.run, "PrefixSubstitution")["to"], "continuation.a");
}

#[test]
fn the_step_id_in_the_output_is_corrected_by_the_flow() {
    let ran = run(
        &registry(steps(three()), json!({})),
        1,
        &[],
        &cassette(&["{ output: { stepId: wrong.id, next_action: { action: next } } }"]),
    );
    let corrected = last(&ran.run, "StepIdCorrected");
    assert_eq!((corrected["from"].as_str(), corrected["to"].as_str()), (Some("wrong.id"), Some("initial.a")));
}

#[test]
fn a_closure_step_repeats_until_it_says_closing() {
    let ran = run(
        &registry(steps(three()), json!({})),
        10,
        &[],
        &cassette(&[&says("next"), &says("handoff"), &says("repeat"), &says("closing")]),
    );
    let verdicts: Vec<bool> = ran
        .run
        .trace
        .events
        .iter()
        .filter(|e| e.name == "VerdictChecked")
        .map(|e| e.data["isComplete"] == true)
        .collect();
    assert_eq!(verdicts, [false, false, false, true]);
    assert_eq!(finished(&ran.run), ("completed".into(), 4));
}

fn validated(on_failure: Value) -> Value {
    registry(
        steps(three()),
        json!({
            "validators": {"git-clean": {"type": "command", "command": "git status --porcelain", "successWhen": "empty",
                "failurePattern": "git-dirty", "extractParams": {"changedFiles": "parseChangedFiles"}}},
            "failurePatterns": {"git-dirty": {"description": "dirty", "edition": "failed", "adaptation": "git-dirty", "params": ["changedFiles"]}},
            "validationSteps": {"closure.polling": {"stepId": "closure.polling", "name": "v", "c2": "retry", "c3": "issue",
                "validationConditions": [{"validator": "git-clean"}], "onFailure": on_failure}}
        }),
    )
}

const RETRY: (&str, &str) =
    ("steps/retry/issue/f_failed_git-dirty.md", "Commit:\n{{#each changedFiles}}- {{this}}\n{{/each}}");

#[test]
fn a_failing_pre_flight_validation_sends_the_closure_step_back_with_the_retry_prompt() {
    let dirty = "validators: { git-clean: { stdout: \" M a.rs\\n\" } }";
    let clean = "validators: { git-clean: { stdout: \"\" } }";
    let ran = run(
        &validated(json!({"action": "retry", "maxAttempts": 3})),
        10,
        &[RETRY],
        &cassette(&[
            &says("next"),
            &says("handoff"),
            &format!("{{ {dirty} }}"),
            &format!("{{ {clean}, output: {{ next_action: {{ action: closing }} }} }}"),
        ]),
    );
    assert_eq!(
        events(&ran.run)[9..],
        [
            "IterationStart iteration=3 step=closure.a",
            "ValidatorRan iteration=3 validator=git-clean passed=false",
            "RetryPromptBuilt pattern=git-dirty",
            "PreflightFailed iteration=3 pattern=git-dirty",
            "VerdictChecked iteration=3 step=closure.a isComplete=false reason=continue",
            "IterationStart iteration=4 step=closure.a",
            "ValidatorRan iteration=4 validator=git-clean passed=true",
            "CompletionLoopEnter iteration=4",
            "ValidatorRan iteration=4 validator=git-clean passed=true",
            "BoundaryHook",
            "VerdictChecked iteration=4 step=closure.a isComplete=true reason=Closure step emitted closing signal",
            "AgentFinished iterations=4 reason=Closure step emitted closing signal outcome=completed",
        ]
    );
    let prompts: Vec<&str> =
        ran.run.trace.events.iter().filter(|e| e.name == "PromptBuilt").map(|e| e.str("prompt")).collect();
    assert_eq!(prompts[3], "Commit:\n- a.rs\n", "iteration 4 is sent the retry prompt");
    assert_eq!(ran.run.exit_code(), 0, "{:?}", ran.run.findings);
}

#[test]
fn pre_flight_failures_never_abort_so_the_iteration_bound_ends_the_run() {
    // climpt counts the retries (`maxAttempts`), but `runClosureIteration` reads only `valid`
    // of the pre-flight result: the closure step keeps being sent back until maxIterations.
    let dirty = "{ validators: { git-clean: { stdout: \" M a.rs\\n\" } } }";
    let ran = run(
        &validated(json!({"action": "retry", "maxAttempts": 1})),
        5,
        &[RETRY],
        &cassette(&[&says("next"), &says("handoff"), dirty, dirty, dirty]),
    );
    assert_eq!(finished(&ran.run), ("maxIterations".into(), 5));
    assert_eq!(ran.run.exit_code(), 0);
}

#[test]
fn a_validation_that_aborts_or_is_skipped_after_an_abort_intent() {
    // A work step may end the run with `abort` (when its allowedIntents lists it, which
    // climpt's validator refuses at start): the router signals closing, and the completion
    // loop validates first.
    let abort = |on_failure: Value| {
        let mut reg = validated(on_failure);
        reg["steps"]["initial.a"]["structuredGate"]["allowedIntents"] = json!(["next", "abort"]);
        run(
            &reg,
            10,
            &[RETRY],
            &cassette(&[
                "{ output: { next_action: { action: abort, reason: giving up } }, validators: { git-clean: { stdout: x } } }",
            ]),
        )
    };
    let ran = abort(json!({"action": "abort"}));
    assert_eq!(error_code(&ran.run), "AgentValidationAbortError");
    let ran = abort(json!({"action": "skip"}));
    assert_eq!(finished(&ran.run), ("completed".into(), 1));
    assert_eq!(last(&ran.run, "VerdictChecked")["reason"], "giving up");
    // An unrecoverable failure (exit 127: command not found) aborts whatever onFailure says.
    let mut reg = validated(json!({"action": "retry"}));
    reg["steps"]["initial.a"]["structuredGate"]["allowedIntents"] = json!(["next", "abort"]);
    let ran = run(
        &reg,
        10,
        &[RETRY],
        &cassette(&[
            "{ output: { next_action: { action: abort } }, validators: { git-clean: { exitCode: 127, stdout: x } } }",
        ]),
    );
    assert_eq!(error_code(&ran.run), "AgentValidationAbortError");
}

#[test]
fn the_retry_prompt_falls_back_to_f_failed_then_to_a_generic_message() {
    let dirty = "{ validators: { git-clean: { stdout: \" M a.rs\\n\" } } }";
    let iterations = [
        says("next"),
        says("handoff"),
        dirty.to_string(),
        "{ validators: { git-clean: { stdout: \"\" } }, output: { next_action: { action: closing } } }".into(),
    ];
    let iterations: Vec<&str> = iterations.iter().map(String::as_str).collect();
    let fallback = ("steps/retry/issue/f_failed.md", "Fix: {{changedFiles}}");
    let ran = run(&validated(json!({})), 10, &[fallback], &cassette(&iterations));
    let prompts: Vec<&str> =
        ran.run.trace.events.iter().filter(|e| e.name == "PromptBuilt").map(|e| e.str("prompt")).collect();
    assert_eq!(prompts[3], "Fix: a.rs");
    let ran = run(&validated(json!({})), 10, &[], &cassette(&iterations));
    let prompts: Vec<&str> =
        ran.run.trace.events.iter().filter(|e| e.name == "PromptBuilt").map(|e| e.str("prompt")).collect();
    assert_eq!(prompts[3], "## Verdict conditions not met\n\nDetected pattern: git-dirty\n");
}

#[test]
fn a_non_closure_step_that_declares_closing_stops_the_run() {
    // With failFast off the gate falls back to `next`, but the output still says `closing`:
    // the completion loop refuses it from a work step.
    let mut list = three();
    list[0].1["structuredGate"]["failFast"] = json!(false);
    let ran = run(&registry(steps(list), json!({})), 10, &[], &cassette(&[&says("closing")]));
    assert_eq!(error_code(&ran.run), "AgentStepRoutingError");
    assert!(
        last(&ran.run, "FlowError")["message"].as_str().unwrap_or("").contains("emitted closing signal \"closing\"")
    );
}

#[test]
fn the_iteration_bound_ends_a_run_before_its_closure_step() {
    let ran = run(
        &registry(steps(three()), json!({})),
        2,
        &[],
        &cassette(&[&says("next"), &says("handoff"), &says("closing")]),
    );
    assert_eq!(finished(&ran.run), ("maxIterations".into(), 2));
    assert_eq!(codes(&ran.run), ["cassette/CassetteUnconsumed"]);
}

#[test]
fn a_flow_step_after_the_first_iteration_must_give_an_intent() {
    let ran = run(&registry(steps(three()), json!({})), 10, &[], &cassette(&[&says("next"), "{ output: null }"]));
    // `output: null` is no structured output.
    assert_eq!(error_code(&ran.run), "AgentStepRoutingError");
}

#[test]
fn prompts_need_their_uv_values_and_inputs_come_from_earlier_handoffs() {
    let mut list = three();
    list[0].1["uvVariables"] = json!(["branch"]);
    let ran = run(&registry(steps(list), json!({})), 10, &[], &cassette(&[&says("next")]));
    assert_eq!(error_code(&ran.run), "PR-RESOLVE-003");
    // `{uv-x}` in the text with no value.
    let ran = run(
        &registry(steps(three()), json!({})),
        10,
        &[("steps/initial/a/f_default.md", "{uv-nothing}")],
        &cassette(&[&says("next")]),
    );
    assert_eq!(error_code(&ran.run), "PR-RESOLVE-005");
    // A missing prompt file.
    let mut list = three();
    list[0].1["edition"] = json!("other");
    let ran = run(&registry(steps(list), json!({})), 10, &[], &cassette(&[&says("next")]));
    assert_eq!(error_code(&ran.run), "PR-C3L-004");
    // `inputs.from` reads the handoff stored under the earlier step: `initial_a_plan`.
    let mut list = three();
    list[0].1["structuredGate"]["handoffFields"] = json!(["plan"]);
    list[1].1["inputs"] = json!({"plan": {"from": "initial.a.plan"}});
    let prompt = ("steps/continuation/a/f_default.md", "Plan: {uv-initial_a_plan}; {uv-iteration}/{uv-max_iterations}");
    let ran = run(
        &registry(steps(list), json!({})),
        10,
        &[prompt],
        &cassette(&["{ output: { plan: fix it, next_action: { action: next } } }", &says("repeat")]),
    );
    let prompts: Vec<&str> =
        ran.run.trace.events.iter().filter(|e| e.name == "PromptBuilt").map(|e| e.str("prompt")).collect();
    assert_eq!(prompts[1], "Plan: fix it; 2/10");
    // Without the `inputs` entry, the name of the handoff form is not provided, and the
    // message says how to declare it.
    let prompt = ("steps/continuation/a/f_default.md", "Plan: {uv-initial_a_plan}");
    let ran = run(&registry(steps(three()), json!({})), 10, &[prompt], &cassette(&[&says("next"), &says("repeat")]));
    let message = last(&ran.run, "FlowError")["message"].as_str().unwrap_or("").to_string();
    assert!(
        message.ends_with(
            "; to read `plan` from the handoff of step `initial.a`, declare it in the step's `inputs`: `\"plan\": { \"from\": \"initial.a.plan\" }`"
        ),
        "{message}"
    );
}

#[test]
fn what_the_cassette_records_and_the_run_never_reads_is_reported() {
    let ran = run(
        &validated(json!({})),
        10,
        &[],
        &cassette(&[
            "{ validators: { git-clean: { stdout: x } }, output: { next_action: { action: next } } }",
            &says("handoff"),
            "{ validators: { git-clean: { stdout: \"\" } } }",
        ]),
    );
    // The validator result of iteration 1 is never read; iteration 3 runs the closure step,
    // whose answer (none recorded) does not close, so the run needs an iteration 4.
    assert_eq!(codes(&ran.run), ["cassette/CassetteExhausted", "cassette/ResultIgnored"], "{:?}", ran.run.findings);
    assert_eq!(finished(&ran.run).0, "cassetteExhausted");
}

#[test]
fn an_exhausted_cassette_stops_the_run_and_never_reached_expectations_fail() {
    let text = cassette(&[&says("next")]) + "expect: { outcome: completed }\n";
    let ran = run(&registry(steps(three()), json!({})), 10, &[], &text);
    assert_eq!(finished(&ran.run), ("cassetteExhausted".into(), 2));
    assert_eq!(codes(&ran.run), ["cassette/CassetteExhausted", "cassette/ExpectationFailed"]);
    assert_eq!(ran.run.exit_code(), 1);
}

#[test]
fn expectations_are_checked_per_iteration_and_for_the_run() {
    let text = "cassette: 1\nagent: demo\nargs: { issue: 42 }\niterations:\n  - output: { next_action: { action: next } }\n    expect: { step: initial.a, intent: next, route: closure.a, prompt: { contains: issue 42, notContains: TODO } }\nexpect: { outcome: maxIterations, iterations: 1 }\n";
    let ran = run(&registry(steps(three()), json!({})), 1, &[], text);
    let outcomes: Vec<(String, String)> = ran
        .run
        .trace
        .events
        .iter()
        .filter(|e| e.name == "ExpectationOutcome")
        .map(|e| (e.str("kind").to_string(), e.str("outcome").to_string()))
        .collect();
    let expected = [
        ("prompt.contains", "held"),
        ("prompt.notContains", "held"),
        ("intent", "held"),
        ("route", "failed"),
        ("step", "held"),
        ("outcome", "held"),
        ("iterations", "held"),
    ];
    let expected: Vec<(String, String)> = expected.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    assert_eq!(outcomes, expected);
    assert_eq!((ran.run.passed, ran.run.failed), (6, 1));
}

#[test]
fn the_same_run_gives_the_same_stream() {
    let reg = validated(json!({}));
    let iterations = [
        says("next"),
        says("handoff"),
        "{ validators: { git-clean: { stdout: \" M a.rs\\n\" } } }".into(),
        "{ validators: { git-clean: { stdout: \"\" } }, output: { next_action: { action: closing } } }".into(),
    ];
    let iterations: Vec<&str> = iterations.iter().map(String::as_str).collect();
    let first = run(&reg, 10, &[RETRY], &cassette(&iterations));
    let second = run(&reg, 10, &[RETRY], &cassette(&iterations));
    assert_eq!(first.run.trace.to_json_lines(), second.run.trace.to_json_lines());
    assert!(first.run.trace.events.len() > 20);
}

#[test]
fn bad_input_is_one_clear_finding_and_exit_2() {
    // A cassette for another agent.
    let ran = run(
        &registry(steps(three()), json!({})),
        10,
        &[],
        &cassette(&[&says("next")]).replace("agent: demo", "agent: other"),
    );
    assert_eq!((codes(&ran.run), ran.run.exit_code()), (vec!["cassette/UnknownAgent"], 2));
    assert_eq!(last(&ran.run, "DryRunSummary")["refused"], "the cassette replays another agent");
    // A cassette that does not parse.
    let ran =
        run(&registry(steps(three()), json!({})), 10, &[], "cassette: 1\nagent: demo\niterations: [ { output: \n");
    assert_eq!((codes(&ran.run), ran.run.exit_code()), (vec!["cassette/MalformedTurn"], 2));
    // A registry that does not load.
    let dir = tempfile::tempdir().expect("temp dir");
    let agent = dir.path().join(".agent/demo");
    std::fs::create_dir_all(&agent).expect("dir");
    std::fs::write(agent.join("steps_registry.json"), "{ \"agentId\": \"demo\", \"version\": \"1.0.0\", \"steps\": { ")
        .expect("write");
    std::fs::write(agent.join("agent.cassette.yaml"), cassette(&[&says("next")])).expect("write");
    let mut configs = stagelint::workspace::discover::ConfigCache::new(Some(Config::defaults(dir.path())));
    let options = Options { strict: false, explain_init: true };
    let (_, ran) = runtime::dry_run_path(&agent, None, options, &mut configs, &HashMap::new()).expect("runs");
    assert_eq!((codes(&ran), ran.exit_code()), (vec!["cassette/FlowStopped"], 2));
    assert!(
        ran.findings[0].message.starts_with("the agent cannot start: the registry is not valid JSON"),
        "{}",
        ran.findings[0].message
    );
}

#[test]
fn the_corpus_iterator_cassettes_replay_green() {
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/climpt/.agent/iterator");
    for (name, iterations) in [("iterator-completes", 3), ("iterator-retry", 4)] {
        let cassette =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/cassettes/climpt/{name}.cassette.yaml"));
        let mut configs = stagelint::workspace::discover::ConfigCache::new(None);
        let options = Options { strict: false, explain_init: true };
        let (workspace, ran) =
            runtime::dry_run_path(&agent, Some(&cassette), options, &mut configs, &HashMap::new()).expect("runs");
        assert_eq!(ran.exit_code(), 0, "{name}: {:?}", ran.findings);
        assert_eq!(finished(&ran), ("completed".into(), iterations), "{name}");
        let timeline = runtime::report::timeline(&workspace, &ran);
        insta::assert_snapshot!(
            format!("climpt_{name}"),
            timeline.replace(&format!("{}/", env!("CARGO_MANIFEST_DIR")), "")
        );
    }
}

#[test]
fn validation_steps_are_found_by_verdict_type_not_by_the_closure_step() {
    // climpt's own reviewer keys its validation by its closure step (`closure.review`) under
    // `poll:state`, whose completion loop validates `closure.polling`: its validators never run.
    let mut reg = validated(json!({}));
    let config = reg["validationSteps"]["closure.polling"].take();
    reg["validationSteps"] = json!({"closure.a": config});
    let ran = run(
        &reg,
        10,
        &[],
        &cassette(&[
            &says("next"),
            &says("handoff"),
            "{ validators: { git-clean: { stdout: \" M a.rs\\n\" } }, output: { next_action: { action: closing } } }",
        ]),
    );
    assert_eq!(finished(&ran.run), ("completed".into(), 3));
    assert_eq!(codes(&ran.run), ["cassette/ResultIgnored"]);
    assert!(
        ran.run.findings[0].message.ends_with("(`closure.a` lists `git-clean` and is never used)"),
        "{}",
        ran.run.findings[0].message
    );
}

/// `sha256:` and the first 16 hex digits of the SHA-256 of `text`: a fingerprint as
/// docs/dry-run.md (*Request fingerprints*) defines it.
fn digest(text: &str) -> String {
    use sha2::Digest;
    let hex: String = sha2::Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{}", &hex[..16])
}

#[test]
fn recorded_fingerprints_show_prompt_drift_which_fails_only_under_strict() {
    let system = ("system.md", "You are {uv-agent_name}.\n");
    let (prompt_now, system_now) = (digest("Step initial.a of issue 42."), digest("You are demo.\n"));
    let first = |prompt: &str, system: &str| {
        format!(
            "{{ output: {{ next_action: {{ action: next }} }}, request: {{ prompt: \"{prompt}\", system: \"{system}\" }} }}"
        )
    };
    let flow = |first: &str| cassette(&[first, &says("handoff"), &says("closing")]);
    let strict = Options { strict: true, explain_init: true };
    let drift = |ran: &Ran| -> Vec<(String, String, String)> {
        ran.run
            .findings
            .iter()
            .filter(|d| d.code == "cassette/RequestDrift")
            .map(|d| {
                let written = &ran.workspace.file(d.file).text[d.span.start..d.span.end];
                let fix = d.fix.as_ref().map(|f| f.edits[0].1.replacement.clone()).unwrap_or_default();
                (written.to_string(), d.severity.as_str().to_string(), fix)
            })
            .collect()
    };

    // What the model is sent is fingerprinted in the event stream as it is recorded.
    let ran = run(&registry(steps(three()), json!({})), 10, &[system], &flow(&first(&prompt_now, &system_now)));
    let query = ran.run.trace.events.iter().find(|e| e.name == "QueryExecuted").expect("a query");
    assert_eq!(query.data["request"], json!({"prompt": prompt_now, "system": system_now}));
    assert_eq!((codes(&ran.run), ran.run.exit_code()), (vec![], 0));

    // Placeholders: one warning per component, whose fix writes the current digest.
    let ran = run(&registry(steps(three()), json!({})), 10, &[system], &flow(&first("x", "y")));
    assert_eq!(
        drift(&ran),
        [
            ("\"x\"".to_string(), "warning".to_string(), format!("\"{prompt_now}\"")),
            ("\"y\"".to_string(), "warning".to_string(), format!("\"{system_now}\"")),
        ]
    );
    assert_eq!((ran.run.exit_code(), last(&ran.run, "DryRunSummary")["drift"].clone()), (0, json!(2)));

    // The prompt file changed since the recording: drift on `prompt` alone, pointing at the file.
    let changed = ("steps/initial/a/f_default.md", "Step one of issue {uv-issue}.\n");
    let cassette = flow(&first(&prompt_now, &system_now));
    let ran = run(&registry(steps(three()), json!({})), 10, &[system, changed], &cassette);
    let new = digest("Step one of issue 42.");
    assert_eq!(drift(&ran), [(format!("\"{prompt_now}\""), "warning".to_string(), format!("\"{new}\""))]);
    let finding = &ran.run.findings[0];
    assert_eq!(
        finding.message,
        format!(
            "prompt drift: the prompt of step `initial.a` ({}) changed since iteration 1 was recorded (now {new}, recorded {prompt_now})",
            ran.workspace.file(finding.related[0].file.expect("the prompt file")).display
        )
    );
    assert!(ran.workspace.file(finding.related[0].file.expect("a file")).display.ends_with("f_default.md"));
    assert_eq!(finished(&ran.run), ("completed".into(), 3));
    assert_eq!(ran.run.exit_code(), 0);
    // `--strict`, or the cassette's `match.onDrift: fail`, makes it an error: exit code 1.
    let ran = run_with(&registry(steps(three()), json!({})), 10, &[system, changed], &cassette, strict);
    assert_eq!((drift(&ran)[0].1.as_str(), ran.run.exit_code()), ("error", 1));
    let fails = cassette.replace("iterations:", "match: { onDrift: fail }\niterations:");
    let ran = run(&registry(steps(three()), json!({})), 10, &[system, changed], &fails);
    assert_eq!((drift(&ran)[0].1.as_str(), ran.run.exit_code()), ("error", 1));
    let warns = cassette.replace("iterations:", "match: { onDrift: sometimes }\niterations:");
    let ran = run(&registry(steps(three()), json!({})), 10, &[system, changed], &warns);
    assert_eq!((codes(&ran.run), ran.run.exit_code()), (vec!["cassette/InvalidValue"], 2));
}

#[test]
fn a_retry_prompt_and_an_output_schema_are_fingerprinted_too() {
    // The retry prompt the closure step is sent back with, and the step's output schema.
    let mut reg = validated(json!({"action": "retry", "maxAttempts": 3}));
    reg["steps"]["closure.a"]["outputSchemaRef"] = json!({"file": "closure.schema.json", "schema": "closure"});
    let schema = json!({"closure": {"type": "object", "properties": {"next_action": {"type": "object",
        "properties": {"action": {"type": "string"}}}}}});
    let schema_text = schema.to_string();
    let retry_now = digest("Commit:\n- a.rs\n");
    let dirty = "validators: { git-clean: { stdout: \" M a.rs\\n\" } }";
    let clean = "validators: { git-clean: { stdout: \"\" } }";
    let ran = run(
        &reg,
        10,
        &[RETRY, ("../schemas/closure.schema.json", &schema_text)],
        &cassette(&[
            &says("next"),
            &says("handoff"),
            // A pre-flight failure asks no model: what it records of a request is never used.
            &format!("{{ {dirty}, request: {{ prompt: x }} }}"),
            &format!(
                "{{ {clean}, output: {{ next_action: {{ action: closing }} }}, request: {{ prompt: x, schema: x }} }}"
            ),
        ]),
    );
    let query = ran.run.trace.events.iter().rev().find(|e| e.name == "QueryExecuted").expect("a query");
    let prompt = ran.run.trace.events.iter().rev().find(|e| e.name == "PromptBuilt").expect("a prompt");
    assert_eq!(prompt.str("prompt"), "Commit:\n- a.rs\n");
    // The schema as climpt resolves it (with `additionalProperties: false`), canonical JSON.
    let resolved = r#"{"additionalProperties":false,"properties":{"next_action":{"additionalProperties":false,"properties":{"action":{"type":"string"}},"type":"object"}},"type":"object"}"#;
    assert_eq!(query.data["request"], json!({"prompt": retry_now, "schema": digest(resolved)}));
    assert_eq!(
        codes(&ran.run),
        ["cassette/CassetteUnconsumed", "cassette/RequestDrift", "cassette/RequestDrift"],
        "{:?}",
        ran.run.findings
    );
    assert!(ran.run.findings[0].message.ends_with("so this request is never used"), "{}", ran.run.findings[0].message);
    assert!(ran.run.findings[2].message.starts_with("prompt drift: the output schema of step `closure.a`"));
}

#[test]
fn an_object_schema_without_properties_accepts_only_the_empty_object() {
    // climpt adds `additionalProperties: false` to every `type: object` schema, so
    // `analysis: { type: object }` (climpt's own quickstart) admits `{}` alone; the finding
    // names the property.
    let mut list = three();
    list[0].1["outputSchemaRef"] = json!({"file": "a.schema.json", "schema": "#/definitions/initial.a"});
    let schema = json!({"definitions": {"initial.a": {"type": "object", "properties": {
        "analysis": {"type": "object"}, "next_action": {"type": "object", "properties": {"action": {"type": "string"}}}}}}});
    let schema = schema.to_string();
    let output = "{ output: { analysis: { files: 2 }, next_action: { action: next } } }";
    let ran = run(
        &registry(steps(list), json!({})),
        10,
        &[("../schemas/a.schema.json", &schema)],
        &cassette(&[output, &says("handoff"), &says("closing")]),
    );
    assert_eq!(codes(&ran.run), ["cassette/OutputRejected"]);
    let finding = &ran.run.findings[0];
    assert!(
        finding.message.contains("rejects this output: /analysis: property `files` is not allowed (its object's schema lists no such property)"),
        "{}",
        finding.message
    );
    assert_eq!(&ran.workspace.file(finding.file).text[finding.span.start..finding.span.end], "files");
    assert_eq!(last(&ran.run, "OutputValidated")["schema"], "a.schema.json#/definitions/initial.a");
}
