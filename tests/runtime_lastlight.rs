//! The Last Light engine, path by path and per engine, written from the engines' code: the
//! seed-era runner (`src/workflows/runner.ts`, `templates.ts`, `loop-eval.ts`, `dag.ts` at
//! dd02adf) and the current one (`packages/workflow-engine/src/core/scheduler.ts`,
//! `phase-executor.ts`, `templates.ts`, `loop-eval.ts`, `verdict.ts`, `dag.ts` at 2d26144; the
//! server's `apps/server/src/workflows/simple.ts` for gates and resumes). Each test runs a small
//! workflow against a cassette and asserts the exact event sequence with the fields that
//! matter, or the prompt text the engine sends.

use std::path::Path;

use serde_json::Value;
use stagelint::runtime::lastlight::{render, until, value::Ctx};
use stagelint::runtime::{self, DryRun, Options};
use stagelint::template::lastlight::Engine;
use stagelint::workspace::Workspace;

struct Ran {
    _dir: tempfile::TempDir,
    workspace: Workspace,
    run: DryRun,
}

/// Writes a project (`stagelint.toml` choosing `engine`, the workflow as
/// `workflows/<name>.yaml`, `files` relative to `workflows/`, the cassette as
/// `workflows/cassettes/<name>.cassette.yaml`) and dry-runs the workflow.
fn run(engine: &str, workflow: &str, files: &[(&str, &str)], cassette: &str) -> Ran {
    try_run(engine, workflow, files, cassette).expect("the dry-run starts")
}

fn try_run(engine: &str, workflow: &str, files: &[(&str, &str)], cassette: &str) -> Result<Ran, String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let name = workflow
        .lines()
        .find_map(|l| l.strip_prefix("name: "))
        .map(|n| n.trim().to_string())
        .unwrap_or_else(|| "wf".into());
    let write = |path: &Path, text: &str| {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(path, text).expect("write");
    };
    std::fs::create_dir(dir.path().join(".git")).expect("git");
    write(&dir.path().join("stagelint.toml"), &format!("[lastlight]\nengine = \"{engine}\"\n"));
    let workflows = dir.path().join("workflows");
    write(&workflows.join(format!("{name}.yaml")), workflow);
    for (path, text) in files {
        write(&workflows.join(path), text);
    }
    let cassette_path = workflows.join("cassettes").join(format!("{name}.cassette.yaml"));
    write(&cassette_path, &format!("cassette: 1\nworkflow: {name}\n{cassette}"));
    let mut configs = stagelint::workspace::discover::ConfigCache::new(None);
    let overlay = std::collections::HashMap::new();
    let options = Options { strict: false, explain_init: true };
    let target = workflows.join(format!("{name}.yaml"));
    let (workspace, run) = runtime::dry_run_path(&target, None, options, &mut configs, &overlay)?;
    Ok(Ran { _dir: dir, workspace, run })
}

/// Each event as `Name field=value …`, with the fields a test cares about.
fn events(run: &DryRun) -> Vec<String> {
    run.trace
        .events
        .iter()
        .filter(|e| {
            !matches!(e.name, "DryRunSummary" | "DryRunMismatch" | "ExpectationOutcome" | "PromptRendered" | "Notify")
        })
        .map(|e| {
            let mut line = e.name.to_string();
            for key in [
                "label",
                "phase",
                "success",
                "verdict",
                "viaFallback",
                "fromFile",
                "found",
                "bypassed",
                "fails",
                "met",
                "form",
                "exitCode",
                "rejected",
                "gate",
                "kind",
                "answer",
                "approved",
                "cycles",
                "completed",
                "iterations",
                "status",
                "error",
                "reason",
                "message",
                "resume",
                "scheduler",
            ] {
                if key == "phase" && e.data.contains_key("label") {
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

/// [`events`] with the project's directory written `$DIR`.
fn events_of(ran: &Ran) -> Vec<String> {
    let dir = ran._dir.path().display().to_string();
    events(&ran.run).into_iter().map(|e| e.replace(&dir, "$DIR")).collect()
}

/// The prompt each execution was sent, by label.
fn prompt<'r>(run: &'r DryRun, label: &str) -> &'r str {
    run.trace
        .events
        .iter()
        .find(|e| e.name == "PromptRendered" && e.str("label") == label)
        .map_or("", |e| e.str("prompt"))
}

/// The messages posted, as `key: text`.
fn notes(run: &DryRun) -> Vec<String> {
    run.trace
        .events
        .iter()
        .filter(|e| e.name == "Notify")
        .map(|e| format!("{}: {}", e.str("message"), e.str("text")))
        .collect()
}

fn codes(run: &DryRun) -> Vec<&'static str> {
    run.findings.iter().map(|d| d.code).collect()
}

fn strings(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|s| s.to_string()).collect()
}

const TRIGGER: &str = "trigger: { owner: acme, repo: widgets, issueNumber: 42, issueTitle: Add a flag, issueBody: Please., issueLabels: [enhancement], sender: alice }\n";

const TWO: &str = "name: two
phases:
  - name: plan
    prompt: prompts/plan.md
  - name: build
    prompt: prompts/build.md
";

const PROMPTS: &[(&str, &str)] = &[
    ("prompts/plan.md", "Plan #{{issueNumber}}: {{issueTitle}}\n"),
    ("prompts/build.md", "Build from:\n${plan.output}\n"),
];

// ---- Linear scheduling and phase outputs ----

#[test]
fn phases_run_in_order_and_a_phase_output_reaches_the_next_prompt() {
    for engine in ["seed", "head"] {
        let ran = run(
            engine,
            TWO,
            PROMPTS,
            &format!(
                "{TRIGGER}executions:\n  plan: {{ output: 'step 1 for {{{{issueTitle}}}}' }}\n  build: {{ output: done }}\nexpect: {{ status: succeeded, outputs: {{ plan: 'step 1 for {{{{issueTitle}}}}' }} }}\n"
            ),
        );
        let scheduler = if engine == "seed" { "linear" } else { "unified" };
        assert_eq!(
            events(&ran.run),
            strings(&[
                &format!("WorkflowStart resume=0 scheduler={scheduler}"),
                "PhaseStart label=plan",
                "PhaseEnd label=plan success=true",
                "PhaseStart label=build",
                "PhaseEnd label=build success=true",
                "WorkflowEnd status=succeeded",
            ]),
            "{engine}"
        );
        assert_eq!(prompt(&ran.run, "plan"), "Plan #42: Add a flag\n");
        // Pass 0 inserts the output and pass 4 renders the tag it holds.
        assert_eq!(prompt(&ran.run, "build"), "Build from:\nstep 1 for Add a flag\n", "{engine}");
        assert_eq!(ran.run.exit_code(), 0, "{:?}", ran.run.findings);
    }
}

#[test]
fn a_context_phase_runs_no_agent_and_a_seed_era_context_phase_leaves_no_output() {
    let wf = "name: ctx\nphases:\n  - name: phase_0\n    type: context\n  - name: plan\n    prompt: prompts/plan.md\n";
    let files = &[("prompts/plan.md", "[${phase_0.output}]")];
    let seed = run("seed", wf, files, "executions: { plan: { output: p } }\n");
    assert_eq!(events(&seed.run)[1..3], strings(&["PhaseStart label=phase_0", "ContextAssembled phase=phase_0"]));
    assert_eq!(prompt(&seed.run, "plan"), "[]");
    // The seed-era DAG runner stores "Context assembled" as the context phase's output.
    let dag = "name: ctx\nphases:\n  - name: phase_0\n    type: context\n  - name: plan\n    prompt: prompts/plan.md\n    depends_on: [phase_0]\n";
    let seed_dag = run("seed", dag, files, "executions: { plan: { output: p } }\n");
    assert_eq!(prompt(&seed_dag.run, "plan"), "[Context assembled]");
    let head = run("head", dag, files, "executions: { plan: { output: p } }\n");
    assert_eq!(prompt(&head.run, "plan"), "[]");
}

#[test]
fn a_phase_with_only_skills_is_skipped_by_the_seed_era_runner_and_nudged_by_the_current_one() {
    let wf = "name: sk\nphases:\n  - name: triage\n    skills: [issue-triage, labels]\n";
    let skills = "---\nname: issue-triage\ndescription: Triage issues.\n---\nTriage.\n";
    let files = &[
        ("../skills/issue-triage/SKILL.md", skills),
        ("../skills/labels/SKILL.md", &skills.replace("issue-triage", "labels")[..]),
    ];
    let seed = run("seed", wf, files, "executions: { triage: { output: done } }\n");
    assert!(events(&seed.run).iter().any(|e| e.starts_with("PhaseSkipped phase=triage")), "{:?}", events(&seed.run));
    assert_eq!(codes(&seed.run), ["cassette/CassetteUnconsumed"]);
    let head = run("head", wf, files, &format!("{TRIGGER}executions: {{ triage: {{ output: done }} }}\n"));
    let nudge = prompt(&head.run, "triage");
    assert!(nudge.starts_with("Use the **issue-triage** skill to handle this request.\nOther skills available if you need them: labels.\nContext:\nowner: acme\nrepo: widgets\nissueNumber: 42\n"), "{nudge}");
    assert!(
        nudge.contains("\nissueLabels: [\"enhancement\"]\n") && nudge.contains("\nscratch: {}\nphaseOutputs: {}"),
        "{nudge}"
    );
    // `skill:` is read by both; the seed-era nudge names the skill's file.
    let one = "name: sk\nphases:\n  - name: triage\n    skill: issue-triage\n";
    let seed = run("seed", one, files, "executions: { triage: { output: done } }\n");
    assert!(prompt(&seed.run, "triage").starts_with("Use the **issue-triage** skill to handle this request.\nRead `.agents/skills/issue-triage/SKILL.md` for the full instructions.\nContext:\n"));
}

// ---- Authoring errors: what the engine throws ----

#[test]
fn a_missing_prompt_fails_the_seed_era_linear_run_and_one_phase_of_the_current_engine() {
    let wf = "name: miss\nphases:\n  - name: plan\n    prompt: prompts/plan.md\n  - name: build\n    prompt: prompts/gone.md\n  - name: pr\n    prompt: prompts/plan.md\n";
    let files = &[("prompts/plan.md", "Plan.")];
    let cassette = "executions: { plan: { output: p }, pr: { output: q } }\n";
    let seed = run("seed", wf, files, cassette);
    assert_eq!(
        events_of(&seed)[3..],
        strings(&[
            "PhaseStart label=build",
            "EngineThrew phase=build message=Prompt template not found: $DIR/workflows/prompts/gone.md",
            "WorkflowEnd status=failed error=Prompt template not found: $DIR/workflows/prompts/gone.md",
        ])
    );
    assert_eq!(seed.run.exit_code(), 2, "an authoring error");
    assert!(codes(&seed.run).contains(&"lastlight/PromptNotFound"), "the lint error says why: {:?}", codes(&seed.run));
    // The current engine fails the phase and skips what follows it in the chain.
    let head = run("head", wf, files, cassette);
    assert_eq!(
        events_of(&head)[3..],
        strings(&[
            "PhaseStart label=build",
            "EngineThrew phase=build message=Prompt template not found: $DIR/workflows/prompts/gone.md",
            "PhaseSkipped phase=pr reason=trigger rule `all_success` not satisfied",
            "WorkflowEnd status=failed error=Error: Prompt template not found: $DIR/workflows/prompts/gone.md",
        ])
    );
    assert_eq!(head.run.exit_code(), 2);
}

#[test]
fn a_dag_the_engine_refuses_stops_the_run_before_any_phase() {
    let wf = "name: cyc\nphases:\n  - name: a\n    prompt: prompts/a.md\n    depends_on: [b]\n  - name: b\n    prompt: prompts/a.md\n    depends_on: [a]\n";
    for engine in ["seed", "head"] {
        let ran = run(engine, wf, &[("prompts/a.md", "A")], "executions: {}\n");
        assert_eq!(events(&ran.run)[1], "EngineThrew phase= message=Cycle detected: a -> b -> a", "{engine}");
        assert_eq!(ran.run.exit_code(), 2);
        assert!(codes(&ran.run).contains(&"lastlight/DependsOnCycle"), "{:?}", codes(&ran.run));
    }
}

// ---- on_output.contains_BLOCKED ----

const GUARDED: &str = "name: guarded
phases:
  - name: guardrails
    prompt: prompts/plan.md
    on_output:
      contains_BLOCKED:
        action: fail
        message: 'Guardrails: BLOCKED'
        unless_label: bootstrap
        unless_title_matches: '^(guardrails:|\\[guardrails\\])'
        bypass_message: bypassed for {{issueTitle}}
      contains_READY:
        action: fail
  - name: build
    prompt: prompts/plan.md
";

fn guarded(engine: &str, trigger: &str, output: &str) -> Ran {
    let cassette =
        format!("trigger: {trigger}\nexecutions: {{ guardrails: {{ output: '{output}' }}, build: {{ output: b }} }}\n");
    run(engine, GUARDED, &[("prompts/plan.md", "Plan.")], &cassette)
}

#[test]
fn blocked_anywhere_in_the_output_fails_the_workflow_with_the_rules_message() {
    for engine in ["seed", "head"] {
        // A substring, in any case: "unblocked" trips it.
        let ran = guarded(engine, "{ owner: o, repo: r, issueTitle: Add x }", "The path is unblocked now. READY");
        let seen = events(&ran.run);
        assert!(
            seen.contains(&"BlockedRule phase=guardrails found=true bypassed=null fails=true".to_string()),
            "{engine}: {seen:?}"
        );
        let end = if engine == "seed" {
            "WorkflowEnd status=failed error=Guardrails: BLOCKED"
        } else {
            "WorkflowEnd status=failed error=BLOCKED"
        };
        assert_eq!(seen.last().map(String::as_str), Some(end), "{engine}");
        assert!(!seen.iter().any(|e| e.contains("label=build")), "build never runs: {seen:?}");
        assert!(notes(&ran.run).contains(&"on_blocked: Guardrails: BLOCKED".to_string()), "{:?}", notes(&ran.run));
    }
}

#[test]
fn blocked_is_bypassed_by_the_label_or_a_case_insensitive_title_match() {
    for engine in ["seed", "head"] {
        let by_label =
            guarded(engine, "{ owner: o, repo: r, issueTitle: Add x, issueLabels: [bootstrap] }", "BLOCKED: no tests");
        assert!(
            events(&by_label.run)
                .contains(&"BlockedRule phase=guardrails found=true bypassed=label fails=false".to_string())
        );
        assert!(
            notes(&by_label.run).contains(&"bypass_message: bypassed for Add x".to_string()),
            "{:?}",
            notes(&by_label.run)
        );
        assert_eq!(events(&by_label.run).last().map(String::as_str), Some("WorkflowEnd status=succeeded"));
        let by_title = guarded(engine, "{ owner: o, repo: r, issueTitle: 'GUARDRAILS: add lint' }", "BLOCKED");
        assert!(
            events(&by_title.run)
                .contains(&"BlockedRule phase=guardrails found=true bypassed=title fails=false".to_string())
        );
    }
}

#[test]
fn contains_ready_is_never_evaluated_and_continue_does_nothing() {
    // `contains_READY` has `action: fail`, and the output says READY: nothing happens.
    let ran = guarded("head", "{ owner: o, repo: r }", "READY");
    assert_eq!(events(&ran.run).last().map(String::as_str), Some("WorkflowEnd status=succeeded"));
    let wf = GUARDED.replace("action: fail\n        message", "action: continue\n        message");
    let ran = run(
        "seed",
        &wf,
        &[("prompts/plan.md", "Plan.")],
        "executions: { guardrails: { output: BLOCKED }, build: { output: b } }\n",
    );
    assert!(
        events(&ran.run).contains(&"BlockedRule phase=guardrails found=true bypassed=null fails=false".to_string())
    );
    assert_eq!(events(&ran.run).last().map(String::as_str), Some("WorkflowEnd status=succeeded"));
}

// ---- The reviewer loop ----

const REVIEWED: &str = "name: rev
phases:
  - name: reviewer
    prompt: prompts/review.md
    output_var: review
    loop:
      max_cycles: 2
      on_request_changes:
        fix_prompt: prompts/fix.md
        re_review_prompt: prompts/recheck.md
      approval_gate: post_reviewer
      messages:
        on_request_changes: 'changes (cycle {{cycle}}/{{maxCycles}})'
        on_max_cycles: 'gave up after {{maxCycles}}'
  - name: pr
    prompt: prompts/pr.md
";

const REVIEW_PROMPTS: &[(&str, &str)] = &[
    ("prompts/review.md", "Review (fixCycle={{fixCycle}})."),
    ("prompts/fix.md", "Fix cycle {{fixCycle}}."),
    ("prompts/recheck.md", "Re-review after {{fixCycle}}."),
    ("prompts/pr.md", "PR: approved={{review.approved}} cycles={{review.cycles}}"),
];

#[test]
fn a_reviewer_loop_fixes_and_reviews_again_with_each_engines_labels() {
    for (engine, second) in [("seed", "reviewer_2"), ("head", "reviewer_recheck_1")] {
        let cassette = format!(
            "executions:\n  reviewer: {{ output: \"Needs tests.\\nVERDICT: REQUEST_CHANGES\" }}\n  reviewer_fix_1: {{ output: fixed }}\n  {second}: {{ output: 'VERDICT: APPROVED' }}\n  pr: {{ output: opened }}\nexpect: {{ cycles: {{ reviewer: 1 }}, outputs: {{ review: {{ approved: true, cycles: 1 }} }} }}\n"
        );
        let ran = run(engine, REVIEWED, REVIEW_PROMPTS, &cassette);
        assert_eq!(
            events(&ran.run)[1..],
            strings(&[
                "PhaseStart label=reviewer",
                "PhaseEnd label=reviewer success=true",
                "Verdict label=reviewer verdict=REQUEST_CHANGES viaFallback=false fromFile=false",
                "PhaseStart label=reviewer_fix_1",
                "PhaseEnd label=reviewer_fix_1 success=true",
                &format!("PhaseStart label={second}"),
                &format!("PhaseEnd label={second} success=true"),
                &format!("Verdict label={second} verdict=APPROVED viaFallback=false fromFile=false"),
                "LoopEnd phase=reviewer kind=loop approved=true cycles=1",
                "PhaseStart label=pr",
                "PhaseEnd label=pr success=true",
                "WorkflowEnd status=succeeded",
            ]),
            "{engine}"
        );
        assert_eq!(prompt(&ran.run, "reviewer"), "Review (fixCycle=0).");
        assert_eq!(prompt(&ran.run, "reviewer_fix_1"), "Fix cycle 1.");
        assert_eq!(prompt(&ran.run, second), "Re-review after 1.");
        assert_eq!(prompt(&ran.run, "pr"), "PR: approved=true cycles=1");
        assert!(notes(&ran.run).contains(&"on_request_changes: changes (cycle 1/2)".to_string()));
        assert_eq!(ran.run.exit_code(), 0, "{:?}", ran.run.findings);
    }
}

#[test]
fn a_reviewer_that_never_approves_runs_max_cycles_and_the_run_goes_on() {
    let cassette = "executions:\n  reviewer: { output: REQUEST_CHANGES }\n  reviewer_fix_1: { output: f1 }\n  reviewer_2: { output: still REQUEST_CHANGES }\n  reviewer_fix_2: { output: f2 }\n  reviewer_3: { output: no verdict at all }\n  pr: { output: opened }\n";
    let ran = run("seed", REVIEWED, REVIEW_PROMPTS, cassette);
    let seen = events(&ran.run);
    assert!(
        seen.contains(&"Verdict label=reviewer_3 verdict=REQUEST_CHANGES viaFallback=true fromFile=false".to_string()),
        "{seen:?}"
    );
    assert!(seen.contains(&"LoopEnd phase=reviewer kind=loop approved=false cycles=2".to_string()), "{seen:?}");
    assert!(notes(&ran.run).contains(&"on_max_cycles: gave up after 2".to_string()));
    assert_eq!(prompt(&ran.run, "pr"), "PR: approved=false cycles=2");
    assert_eq!(seen.last().map(String::as_str), Some("WorkflowEnd status=succeeded"));
}

#[test]
fn the_verdict_fallback_approves_only_an_output_that_starts_with_approved() {
    let cassette = "executions:\n  reviewer: { output: 'APPROVED. Ship it.' }\n  pr: { output: opened }\n";
    let ran = run("head", REVIEWED, REVIEW_PROMPTS, cassette);
    assert!(
        events(&ran.run)
            .contains(&"Verdict label=reviewer verdict=APPROVED viaFallback=true fromFile=false".to_string())
    );
    // The current engine reads reviewer-verdict.md when the output has no marker.
    let cassette = "executions:\n  reviewer: { output: '', verdictFile: APPROVED }\n  pr: { output: opened }\n";
    let ran = run("head", REVIEWED, REVIEW_PROMPTS, cassette);
    assert!(
        events(&ran.run)
            .contains(&"Verdict label=reviewer verdict=APPROVED viaFallback=false fromFile=true".to_string())
    );
}

#[test]
fn a_failed_fix_ends_the_loop() {
    let cassette = "executions:\n  reviewer: { output: 'VERDICT: REQUEST_CHANGES' }\n  reviewer_fix_1: { success: false, error: tests failed }\n  pr: { output: opened }\n";
    let ran = run("head", REVIEWED, REVIEW_PROMPTS, cassette);
    let seen = events(&ran.run);
    assert!(seen.contains(&"PhaseEnd label=reviewer_fix_1 success=false error=tests failed".to_string()), "{seen:?}");
    assert!(seen.contains(&"LoopEnd phase=reviewer kind=loop approved=false cycles=1".to_string()), "{seen:?}");
    // The failed fix fails the run's rollup, though the loop node succeeds and pr runs.
    assert!(seen.contains(&"PhaseStart label=pr".to_string()));
    assert_eq!(seen.last().map(String::as_str), Some("WorkflowEnd status=failed error=tests failed"));
}

#[test]
fn approving_the_fix_gate_skips_the_fix_in_the_seed_era_engine_and_runs_it_in_the_current_one() {
    let gate = "server: { approval: { post_reviewer: true } }\ngates: { post_reviewer: approve }\n";
    let seed = run(
        "seed",
        REVIEWED,
        REVIEW_PROMPTS,
        &format!(
            "{gate}executions:\n  reviewer: {{ output: 'VERDICT: REQUEST_CHANGES' }}\n  pr: {{ output: opened }}\n"
        ),
    );
    assert_eq!(
        events(&seed.run)[1..],
        strings(&[
            "PhaseStart label=reviewer",
            "PhaseEnd label=reviewer success=true",
            "Verdict label=reviewer verdict=REQUEST_CHANGES viaFallback=false fromFile=false",
            "GatePaused label=reviewer gate=post_reviewer kind=approve",
            "GateAnswered gate=post_reviewer answer=approve",
            "WorkflowStart resume=1 scheduler=linear",
            // The server resumes after the gate's phase: the loop counts as approved.
            "LoopEnd phase=reviewer kind=loop approved=true cycles=0",
            "PhaseStart label=pr",
            "PhaseEnd label=pr success=true",
            "WorkflowEnd status=succeeded",
        ])
    );
    assert_eq!(prompt(&seed.run, "pr"), "PR: approved=true cycles=0");
    let head = run(
        "head",
        REVIEWED,
        REVIEW_PROMPTS,
        &format!(
            "{gate}executions:\n  reviewer: {{ output: 'VERDICT: REQUEST_CHANGES' }}\n  reviewer_fix_1: {{ output: fixed }}\n  reviewer_recheck_1: {{ output: 'VERDICT: APPROVED' }}\n  pr: {{ output: opened }}\n"
        ),
    );
    assert_eq!(
        events(&head.run)[5..],
        strings(&[
            "GateAnswered gate=post_reviewer answer=approve",
            "WorkflowStart resume=1 scheduler=unified",
            "PhaseStart label=reviewer",
            "PhaseDeduplicated label=reviewer",
            "Verdict label=reviewer verdict=REQUEST_CHANGES viaFallback=false fromFile=false",
            "PhaseStart label=reviewer_fix_1",
            "PhaseEnd label=reviewer_fix_1 success=true",
            "PhaseStart label=reviewer_recheck_1",
            "PhaseEnd label=reviewer_recheck_1 success=true",
            "Verdict label=reviewer_recheck_1 verdict=APPROVED viaFallback=false fromFile=false",
            "LoopEnd phase=reviewer kind=loop approved=true cycles=1",
            "PhaseStart label=pr",
            "PhaseEnd label=pr success=true",
            "WorkflowEnd status=succeeded",
        ])
    );
}

// ---- generic_loop ----

fn looped(loop_yaml: &str) -> String {
    format!(
        "name: tdd\nphases:\n  - name: implement\n    prompt: prompts/impl.md\n    output_var: impl\n    generic_loop:\n{loop_yaml}  - name: report\n    prompt: prompts/report.md\n"
    )
}

const LOOP_PROMPTS: &[(&str, &str)] = &[
    ("prompts/impl.md", "Iteration {{iteration}}/{{maxIterations}}. Before: [{{previousOutput}}]"),
    ("prompts/report.md", "completed={{impl.completed}} iterations={{impl.iterations}}"),
];

#[test]
fn until_ends_the_loop_when_it_holds_and_previous_output_accumulates() {
    for engine in ["seed", "head"] {
        let wf = looped("      max_iterations: 5\n      until: \"output.contains('PASS')\"\n");
        let ran = run(
            engine,
            &wf,
            LOOP_PROMPTS,
            "executions:\n  implement_iter_1: { output: FAIL 1 }\n  implement_iter_2: { output: 2 PASS }\n  report: { output: r }\nexpect: { cycles: { implement: 2 }, outputs: { impl: { completed: true, iterations: 2 } } }\n",
        );
        assert_eq!(
            events(&ran.run)[1..9],
            strings(&[
                "PhaseStart label=implement_iter_1",
                "PhaseEnd label=implement_iter_1 success=true",
                "UntilEvaluated label=implement_iter_1 met=false form=contains",
                "PhaseStart label=implement_iter_2",
                "PhaseEnd label=implement_iter_2 success=true",
                "UntilEvaluated label=implement_iter_2 met=true form=contains",
                "LoopEnd phase=implement kind=generic_loop completed=true iterations=2",
                "PhaseStart label=report",
            ]),
            "{engine}"
        );
        assert_eq!(prompt(&ran.run, "implement_iter_1"), "Iteration 1/5. Before: []");
        assert_eq!(prompt(&ran.run, "implement_iter_2"), "Iteration 2/5. Before: [FAIL 1]");
        assert_eq!(prompt(&ran.run, "report"), "completed=true iterations=2");
        assert_eq!(ran.run.exit_code(), 0, "{:?}", ran.run.findings);
    }
}

#[test]
fn an_until_outside_the_grammar_is_never_true_and_the_loop_runs_to_max_iterations() {
    let wf = looped("      max_iterations: 3\n      until: output contains DONE\n      fresh_context: true\n");
    let ran = run(
        "seed",
        &wf,
        LOOP_PROMPTS,
        "executions:\n  implement_iter_1: { output: DONE }\n  implement_iter_2: { output: DONE }\n  implement_iter_3: { output: DONE }\n  report: { output: r }\nexpect: { cycles: { implement: 3 } }\n",
    );
    let seen = events(&ran.run);
    assert_eq!(
        seen.iter().filter(|e| e.starts_with("UntilEvaluated") && e.contains("met=false")).count(),
        3,
        "{seen:?}"
    );
    assert!(
        seen.iter().filter(|e| e.starts_with("Until")).all(|e| e.ends_with("form=null")),
        "no form of the grammar matched: {seen:?}"
    );
    assert!(seen.contains(&"LoopEnd phase=implement kind=generic_loop completed=false iterations=3".to_string()));
    // `fresh_context` drops the previous output.
    assert_eq!(prompt(&ran.run, "implement_iter_3"), "Iteration 3/3. Before: []");
    assert_eq!(prompt(&ran.run, "report"), "completed=false iterations=3");
    assert_eq!(ran.run.exit_code(), 0, "{:?}", ran.run.findings);
}

#[test]
fn until_bash_takes_the_recorded_exit_code_and_a_template_marker_is_never_met() {
    let wf = looped("      max_iterations: 3\n      until_bash: npm test\n");
    let ran = run(
        "head",
        &wf,
        LOOP_PROMPTS,
        "executions:\n  implement_iter_1: { output: a, untilBash: 1 }\n  implement_iter_2: { output: b, untilBash: 0 }\n  report: { output: r }\n",
    );
    let seen = events(&ran.run);
    assert!(seen.contains(&"UntilBash label=implement_iter_1 met=false exitCode=1".to_string()), "{seen:?}");
    assert!(seen.contains(&"UntilBash label=implement_iter_2 met=true exitCode=0".to_string()), "{seen:?}");
    let wf = looped("      max_iterations: 2\n      until_bash: test -f {{issueDir}}/done\n");
    let ran = run(
        "seed",
        &wf,
        LOOP_PROMPTS,
        "executions:\n  implement_iter_1: { output: a }\n  implement_iter_2: { output: b }\n  report: { output: r }\n",
    );
    let seen = events(&ran.run);
    assert!(seen.contains(&"UntilBash label=implement_iter_1 met=false rejected=true".to_string()), "{seen:?}");
    assert!(seen.contains(&"LoopEnd phase=implement kind=generic_loop completed=false iterations=2".to_string()));
    // A missing exit code stops the replay: it cannot tell whether the loop goes on.
    let wf = looped("      max_iterations: 2\n      until_bash: npm test\n");
    let ran = run("seed", &wf, LOOP_PROMPTS, "executions:\n  implement_iter_1: { output: a }\n");
    assert_eq!(codes(&ran.run), ["cassette/CassetteExhausted"]);
    assert_eq!(ran.run.exit_code(), 1);
}

#[test]
fn a_reply_gate_adds_the_reply_to_scratch_and_resumes_the_explore_workflow_only() {
    let explore = "name: explore\nphases:\n  - name: ask\n    prompt: prompts/ask.md\n    generic_loop:\n      max_iterations: 4\n      until: \"output.contains('READY')\"\n      interactive: true\n      gate_kind: reply\n      scratch_key: socratic\n";
    let files =
        &[("prompts/ask.md", "Round {{iteration}}. Q&A so far: {{scratch.socratic.qa}} Last: [{{previousOutput}}]")];
    for engine in ["seed", "head"] {
        let ran = run(
            engine,
            explore,
            files,
            "gates: { ask_iter_1: { reply: Postgres, sender: bob } }\nexecutions:\n  ask_iter_1: { output: Which database? }\n  ask_iter_2: { output: READY }\nexpect: { status: succeeded }\n",
        );
        let seen = events(&ran.run);
        assert!(seen.contains(&"GatePaused label=ask_iter_1 gate=ask_iter_1 kind=reply".to_string()), "{seen:?}");
        assert!(seen.contains(&"GateAnswered gate=ask_iter_1 answer=reply".to_string()), "{seen:?}");
        assert_eq!(
            prompt(&ran.run, "ask_iter_2"),
            "Round 2. Q&A so far: [{\"question\":\"Which database?\",\"answer\":\"Postgres\",\"sender\":\"bob\",\"at\":\"1970-01-01T00:00:00.000Z\"}] Last: [Which database?]",
            "{engine}"
        );
        assert_eq!(ran.run.exit_code(), 0, "{engine}: {:?}", ran.run.findings);
    }
    // The reply handler re-dispatches the workflow named `explore`, whatever paused.
    let other = explore.replace("name: explore", "name: interview");
    let ran = run(
        "head",
        &other,
        files,
        "gates: { ask_iter_1: { reply: Postgres } }\nexecutions:\n  ask_iter_1: { output: Which database? }\n  ask_iter_2: { output: READY }\n",
    );
    assert!(events(&ran.run).contains(&"ReplyNotResumed gate=ask_iter_1".to_string()), "{:?}", events(&ran.run));
    assert!(codes(&ran.run).contains(&"cassette/RunStopped"), "{:?}", codes(&ran.run));
}

#[test]
fn an_unanswered_gate_leaves_the_run_paused_and_a_rejection_fails_it() {
    let wf = "name: gated\nphases:\n  - name: plan\n    prompt: prompts/plan.md\n    approval_gate: post_plan\n  - name: build\n    prompt: prompts/plan.md\n";
    let files = &[("prompts/plan.md", "Plan.")];
    let ran = run(
        "head",
        wf,
        files,
        "server: { approval: { post_plan: true } }\nexecutions: { plan: { output: p } }\nexpect: { status: paused, phases: { plan: paused, build: notRun } }\n",
    );
    assert_eq!(events(&ran.run).last().map(String::as_str), Some("WorkflowEnd status=paused"));
    assert_eq!(ran.run.exit_code(), 0, "{:?}", ran.run.findings);
    let ran = run(
        "seed",
        wf,
        files,
        "server: { approval: { post_plan: true } }\ngates: { post_plan: { reject: not now } }\nexecutions: { plan: { output: p } }\nexpect: { status: failed, error: 'Rejected: not now' }\n",
    );
    assert_eq!(events(&ran.run).last().map(String::as_str), Some("WorkflowEnd status=failed error=Rejected: not now"));
    assert_eq!(ran.run.exit_code(), 0, "{:?}", ran.run.findings);
    // A gate that is not enabled never pauses.
    let ran = run(
        "seed",
        wf,
        files,
        "executions: { plan: { output: p }, build: { output: b } }\nexpect: { status: succeeded }\n",
    );
    assert_eq!(ran.run.exit_code(), 0, "{:?}", ran.run.findings);
}

#[test]
fn phase_outputs_are_gone_after_a_resume() {
    let wf = "name: gated\nphases:\n  - name: plan\n    prompt: prompts/plan.md\n    approval_gate: post_plan\n  - name: build\n    prompt: prompts/build.md\n";
    let files = &[("prompts/plan.md", "Plan."), ("prompts/build.md", "Plan was: [${plan.output}]")];
    for engine in ["seed", "head"] {
        let ran = run(
            engine,
            wf,
            files,
            "server: { approval: { post_plan: true } }\ngates: { post_plan: approve }\nexecutions: { plan: { output: the plan }, build: { output: b } }\n",
        );
        assert_eq!(prompt(&ran.run, "build"), "Plan was: []", "{engine}");
        assert!(codes(&ran.run).contains(&"cassette/RenderedEmpty"), "{engine}: {:?}", codes(&ran.run));
    }
}

// ---- DAG scheduling ----

const DIAMOND: &str = "name: dag
phases:
  - name: a
    prompt: prompts/p.md
  - name: b
    prompt: prompts/p.md
    depends_on: [a]
  - name: c
    prompt: prompts/p.md
    depends_on: [a]
  - name: d
    prompt: prompts/d.md
    depends_on: [b, c]
    trigger_rule: TRIGGER
";

#[test]
fn a_failed_dependency_skips_all_success_and_a_skipped_one_skips_too() {
    let wf = "name: dag\nphases:\n  - name: a\n    prompt: prompts/p.md\n  - name: b\n    prompt: prompts/p.md\n    depends_on: [a]\n  - name: c\n    prompt: prompts/p.md\n    depends_on: [b]\n  - name: d\n    prompt: prompts/p.md\n    depends_on: [c]\n    trigger_rule: all_done\n";
    for engine in ["seed", "head"] {
        let ran = run(
            engine,
            wf,
            &[("prompts/p.md", "P")],
            "executions: { a: { success: false, error: boom }, d: { output: cleanup } }\nexpect: { phases: { a: failed, b: skipped, c: skipped, d: succeeded } }\n",
        );
        assert_eq!(ran.run.exit_code(), 0, "{engine}: {:?} {:?}", ran.run.findings, events(&ran.run));
    }
}

#[test]
fn trigger_rules_decide_the_join() {
    for (rule, expected) in [
        ("one_success", "succeeded"),
        ("all_success", "skipped"),
        ("none_failed_min_one_success", "skipped"),
        ("all_done", "succeeded"),
    ] {
        let wf = DIAMOND.replace("TRIGGER", rule);
        let d = if expected == "succeeded" { ", d: { output: joined }" } else { "" };
        let cassette = format!(
            "executions: {{ a: {{ output: A }}, b: {{ output: B }}, c: {{ success: false }}{d} }}\nexpect: {{ phases: {{ d: {expected} }} }}\n"
        );
        let ran = run("seed", &wf, &[("prompts/p.md", "P"), ("prompts/d.md", "D")], &cassette);
        assert_eq!(ran.run.exit_code(), 0, "{rule}: {:?}", ran.run.findings);
    }
}

#[test]
fn concurrent_seed_era_phases_see_the_outputs_from_before_their_batch() {
    let wf = DIAMOND.replace("TRIGGER", "all_success");
    let files = &[("prompts/p.md", "a=[${a.output}] b=[${b.output}]"), ("prompts/d.md", "b=${b.output} c=${c.output}")];
    let ran = run(
        "seed",
        &wf,
        files,
        "executions: { a: { output: A }, b: { output: B }, c: { output: C }, d: { output: D } }\n",
    );
    // b and c run in one batch: c does not see b's output.
    assert_eq!(prompt(&ran.run, "c"), "a=[A] b=[]");
    assert_eq!(prompt(&ran.run, "d"), "b=B c=C");
    // The current engine runs one ready node at a time, in order.
    let ran = run(
        "head",
        &wf,
        files,
        "executions: { a: { output: A }, b: { output: B }, c: { output: C }, d: { output: D } }\n",
    );
    assert_eq!(prompt(&ran.run, "c"), "a=[A] b=[B]");
}

#[test]
fn the_current_engine_skips_a_phase_whose_skip_if_holds() {
    let wf = "name: fix\nphases:\n  - name: diagnose\n    prompt: prompts/p.md\n  - name: repair\n    prompt: prompts/p.md\n    skip_if: \"phaseOutputs.diagnose.contains('class=flaky')\"\n    messages:\n      on_skipped_done: flaky, nothing to fix\n";
    let ran = run(
        "head",
        wf,
        &[("prompts/p.md", "P")],
        "executions: { diagnose: { output: 'class=flaky' } }\nexpect: { status: succeeded, phases: { repair: skipped } }\n",
    );
    assert!(
        events(&ran.run).contains(
            &"PhaseSkipped phase=repair reason=skip_if matched: phaseOutputs.diagnose.contains('class=flaky')"
                .to_string()
        ),
        "{:?}",
        events(&ran.run)
    );
    assert!(notes(&ran.run).contains(&"on_skipped_done: flaky, nothing to fix".to_string()));
    assert_eq!(ran.run.exit_code(), 0, "{:?}", ran.run.findings);
}

// ---- Findings, expectations, bad input ----

#[test]
fn expectations_that_fail_or_are_never_reached_fail_the_run() {
    let ran = run(
        "seed",
        TWO,
        PROMPTS,
        &format!(
            "{TRIGGER}executions:\n  plan: {{ output: p, expect: {{ promptContains: '#42', promptOmits: Plan }} }}\n  build: {{ output: b }}\n  ghost: {{ output: g, expect: {{ promptContains: x }} }}\nexpect: {{ status: failed, phases: {{ build: skipped }} }}\n"
        ),
    );
    let messages: Vec<&str> = ran.run.findings.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "expected the prompt of `plan` not to contain \"Plan\", got a prompt with it",
            "expected the prompt of `ghost` to contain \"x\", but this was never checked: execution `ghost` never ran",
            "expected status failed, got succeeded",
            "expected phase `build` skipped, got succeeded",
        ]
    );
    assert_eq!(ran.run.exit_code(), 1);
    assert_eq!((ran.run.passed, ran.run.failed, ran.run.unchecked), (1, 4, 1));
}

#[test]
fn a_missing_recording_stops_the_run_with_a_hint_at_the_engines_label() {
    let cassette = "executions:\n  reviewer: { output: 'VERDICT: REQUEST_CHANGES' }\n  reviewer_fix_1: { output: f }\n  reviewer_2: { output: 'VERDICT: APPROVED' }\n  pr: { output: p }\n";
    let ran = run("head", REVIEWED, REVIEW_PROMPTS, cassette);
    let exhausted: Vec<&str> = ran
        .run
        .findings
        .iter()
        .filter(|d| d.code == "cassette/CassetteExhausted")
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(
        exhausted,
        ["the run needs execution `reviewer_recheck_1` of phase `reviewer`, which the cassette does not record"]
    );
    assert!(codes(&ran.run).contains(&"cassette/CassetteUnconsumed"));
    assert_eq!(ran.run.exit_code(), 1);
}

#[test]
fn tags_sent_empty_or_as_written_are_reported_once_on_the_cassette() {
    let files = &[
        ("prompts/plan.md", "Plan {{prePopulateBranch}} {{#each issueLabels}}x{{/each}}"),
        ("prompts/build.md", "Build {{prePopulateBranch}}"),
    ];
    let ran = run("head", TWO, files, "executions: { plan: { output: p }, build: { output: b } }\n");
    let found: Vec<(&str, &str)> = ran.run.findings.iter().map(|d| (d.code, d.message.as_str())).collect();
    assert_eq!(found.len(), 4, "{found:?}");
    assert!(found[0].1.starts_with("`plan` was sent `{{prePopulateBranch}}` as an empty string"), "{found:?}");
    assert!(
        found.iter().any(|(c, m)| *c == "cassette/RenderedVerbatim"
            && m.starts_with("`plan` was sent `{{#each issueLabels}}` as written")),
        "{found:?}"
    );
    assert!(ran.run.findings.iter().all(|d| d.related.len() == 1), "each points at its tag");
    assert_eq!(ran.run.exit_code(), 0, "warnings only");
}

#[test]
fn a_cassette_for_another_workflow_and_a_workflow_that_does_not_load_are_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let wf = dir.path().join("workflows");
    std::fs::create_dir_all(&wf).expect("dir");
    std::fs::write(wf.join("two.yaml"), TWO).expect("write");
    std::fs::write(wf.join("broken.yaml"), "name: broken\nphases:\n  - prompt: x.md\n").expect("write");
    std::fs::write(dir.path().join("c.cassette.yaml"), "cassette: 1\nworkflow: three\n").expect("write");
    let mut configs = stagelint::workspace::discover::ConfigCache::new(None);
    let overlay = std::collections::HashMap::new();
    let options = Options { strict: false, explain_init: true };
    let (_, run) = runtime::dry_run_path(
        &wf.join("two.yaml"),
        Some(&dir.path().join("c.cassette.yaml")),
        options,
        &mut configs,
        &overlay,
    )
    .expect("runs");
    assert_eq!(codes(&run), ["lastlight/MissingName"], "the current loader throws on broken.yaml first");
    assert_eq!(run.exit_code(), 2);
    std::fs::remove_file(wf.join("broken.yaml")).expect("rm");
    let (_, run) = runtime::dry_run_path(
        &wf.join("two.yaml"),
        Some(&dir.path().join("c.cassette.yaml")),
        options,
        &mut configs,
        &overlay,
    )
    .expect("runs");
    assert_eq!(codes(&run), ["cassette/UnknownWorkflow"]);
    assert_eq!(run.findings[0].message, "this cassette replays workflow `three`, not `two`");
    assert_eq!(run.exit_code(), 2);
}

#[test]
fn two_replays_are_byte_identical() {
    let cassette = "server: { approval: { post_reviewer: true } }\ngates: { post_reviewer: approve }\nexecutions:\n  reviewer: { output: 'VERDICT: REQUEST_CHANGES' }\n  reviewer_fix_1: { output: f }\n  reviewer_recheck_1: { output: 'VERDICT: APPROVED' }\n  pr: { output: p }\n";
    let one = run("head", REVIEWED, REVIEW_PROMPTS, cassette);
    let two = run("head", REVIEWED, REVIEW_PROMPTS, cassette);
    let strip = |ran: &Ran| ran.run.trace.to_json_lines().replace(&ran._dir.path().display().to_string(), "$DIR");
    assert_eq!(strip(&one), strip(&two));
    assert_eq!(
        runtime::report::timeline(&one.workspace, &one.run).replace(&one._dir.path().display().to_string(), "$DIR"),
        runtime::report::timeline(&two.workspace, &two.run).replace(&two._dir.path().display().to_string(), "$DIR")
    );
}

// ---- Corpus workflows (tests/corpus/lastlight), with the cassettes of tests/lastlight ----

/// Dry-runs a corpus workflow against one of `tests/lastlight`'s cassettes, with the engine
/// detected from the corpus tree (the seed-era renderer beside `_at-dd02adf/workflows`).
fn corpus(workflow: &str, cassette: &str) -> (Workspace, DryRun) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut configs = stagelint::workspace::discover::ConfigCache::new(None);
    let overlay = std::collections::HashMap::new();
    let options = Options { strict: false, explain_init: true };
    let cassette = root.join("tests/lastlight").join(cassette);
    runtime::dry_run_path(&root.join(workflow), Some(&cassette), options, &mut configs, &overlay).expect("runs")
}

fn timeline(workspace: &Workspace, run: &DryRun) -> String {
    let root = format!("{}/", env!("CARGO_MANIFEST_DIR"));
    runtime::report::timeline_with(workspace, run, false).replace(&root, "")
}

#[test]
fn the_seed_era_build_workflow_with_a_fix_cycle() {
    let (workspace, run) = corpus("tests/corpus/lastlight/_at-dd02adf/workflows/build.yaml", "build.cassette.yaml");
    assert_eq!(run.exit_code(), 0, "{:?}", run.findings);
    assert_eq!((run.passed, run.failed), (14, 0));
    insta::assert_snapshot!("lastlight_build_seed", timeline(&workspace, &run));
}

#[test]
fn the_seed_era_build_workflow_blocked_by_its_guardrails() {
    let (_, run) = corpus("tests/corpus/lastlight/_at-dd02adf/workflows/build.yaml", "build-blocked.cassette.yaml");
    assert_eq!(run.exit_code(), 0, "{:?}", run.findings);
    assert_eq!((run.passed, run.failed), (5, 0));
}

#[test]
fn the_tdd_example_as_shipped_cannot_run_its_prompts_are_missing() {
    let (_, run) = corpus(
        "tests/corpus/lastlight/_at-dd02adf/workflows/examples/tdd-loop.yaml",
        "tdd-cycle-as-shipped.cassette.yaml",
    );
    assert_eq!(run.exit_code(), 2, "{:?}", run.findings);
    let found: Vec<&str> = run.findings.iter().map(|d| d.code).collect();
    assert_eq!(found, ["lastlight/PromptNotFound", "lastlight/PromptNotFound", "cassette/RunStopped"]);
    assert_eq!((run.passed, run.failed), (2, 0), "status failed and the error, as expected");
}

#[test]
fn the_tdd_example_whose_tests_never_pass_runs_out_of_iterations() {
    // The corpus workflow, with prompts an adopter would write for it.
    let dir = tempfile::tempdir().expect("dir");
    let workflows = dir.path().join("workflows");
    std::fs::create_dir_all(workflows.join("examples")).expect("dir");
    std::fs::create_dir_all(workflows.join("prompts")).expect("dir");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus/lastlight/_at-dd02adf/workflows/examples/tdd-loop.yaml");
    std::fs::copy(&corpus, workflows.join("examples/tdd-loop.yaml")).expect("copy");
    std::fs::write(workflows.join("prompts/write-test.md"), "Write a failing test for: {{issueTitle}}\n")
        .expect("write");
    std::fs::write(
        workflows.join("prompts/implement.md"),
        "Make the test pass (iteration {{iteration}} of {{maxIterations}}).\n{{#if previousOutput}}So far:\n{{previousOutput}}{{/if}}\n",
    )
    .expect("write");
    std::fs::write(dir.path().join("stagelint.toml"), "[lastlight]\nengine = \"seed\"\n").expect("write");
    let mut configs = stagelint::workspace::discover::ConfigCache::new(None);
    let overlay = std::collections::HashMap::new();
    let options = Options { strict: false, explain_init: true };
    let cassette = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lastlight/tdd-cycle.cassette.yaml");
    let (workspace, run) = runtime::dry_run_path(
        &workflows.join("examples/tdd-loop.yaml"),
        Some(&cassette),
        options,
        &mut configs,
        &overlay,
    )
    .expect("runs");
    assert_eq!(run.exit_code(), 0, "{:?}", run.findings);
    let text = timeline(&workspace, &run).replace(&dir.path().display().to_string(), "$DIR");
    insta::assert_snapshot!("lastlight_tdd_loop_never_passes", text);
}

/// The corpus `tdd-loop.yaml` of the current tree with its `until_bash` replaced by an `until:`
/// an adopter would write: the engine's greedy `contains` form reads it with a needle no output
/// holds, so the loop never ends early (every iteration's `UntilEvaluated` is `contains`, false).
#[test]
fn the_tdd_example_with_an_until_that_can_never_be_true() {
    let dir = tempfile::tempdir().expect("dir");
    let workflows = dir.path().join("workflows");
    std::fs::create_dir_all(workflows.join("prompts")).expect("dir");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus/lastlight/apps/server/workflows/examples/tdd-loop.yaml");
    let shipped = std::fs::read_to_string(corpus).expect("read");
    assert!(shipped.contains("      until_bash: \"npm test\"\n"), "{shipped}");
    let edited = shipped.replace(
        "      until_bash: \"npm test\"\n",
        "      until: \"output.contains('PASS') && !output.contains('FAIL')\"\n",
    );
    std::fs::write(workflows.join("tdd-loop.yaml"), edited).expect("write");
    std::fs::write(workflows.join("prompts/write-test.md"), "Write a failing test for: {{issueTitle}}\n")
        .expect("write");
    std::fs::write(workflows.join("prompts/implement.md"), "Make the test pass (iteration {{iteration}}).\n")
        .expect("write");
    std::fs::write(dir.path().join("stagelint.toml"), "[lastlight]\nrelease = \"0.25.6\"\n").expect("write");
    let mut configs = stagelint::workspace::discover::ConfigCache::new(None);
    let overlay = std::collections::HashMap::new();
    let options = Options { strict: false, explain_init: true };
    let cassette = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lastlight/tdd-until-never.cassette.yaml");
    let (workspace, run) =
        runtime::dry_run_path(&workflows.join("tdd-loop.yaml"), Some(&cassette), options, &mut configs, &overlay)
            .expect("runs");
    assert_eq!(run.exit_code(), 0, "{:?}", run.findings);
    let seen = events(&run);
    let untils: Vec<&String> = seen.iter().filter(|e| e.starts_with("UntilEvaluated")).collect();
    assert_eq!(untils.len(), 5, "{seen:?}");
    assert!(untils.iter().all(|e| e.contains("met=false") && e.contains("form=contains")), "{untils:?}");
    assert!(seen.contains(&"LoopEnd phase=implement kind=generic_loop completed=false iterations=5".to_string()));
    let text = timeline(&workspace, &run).replace(&dir.path().display().to_string(), "$DIR");
    insta::assert_snapshot!("lastlight_tdd_until_never_true", text);
}

#[test]
fn the_current_explore_workflow_with_its_reply_gate() {
    let (workspace, run) = corpus("tests/corpus/lastlight/apps/server/workflows/explore.yaml", "explore.cassette.yaml");
    assert_eq!(run.exit_code(), 0, "{:?}", run.findings);
    insta::assert_snapshot!("lastlight_explore_head", timeline(&workspace, &run));
}

// ---- The engine's own tests, case by case ----

fn ctx(extra: serde_json::Value) -> Ctx {
    // BASE_CTX of upstream's `src/workflows/templates.test.ts` at dd02adf.
    let mut base = serde_json::json!({
        "owner": "acme", "repo": "widget", "issueNumber": 42, "issueTitle": "Add Rate Limiter",
        "issueBody": "We need a rate limiter", "issueLabels": [], "commentBody": "Please implement this",
        "sender": "alice", "branch": "lastlight/42-add-rate-limiter", "taskId": "widget-42",
        "issueDir": ".lastlight/issue-42", "bootstrapLabel": "lastlight:bootstrap",
    });
    for (key, value) in extra.as_object().cloned().unwrap_or_default() {
        base[key] = value;
    }
    Ctx::from_map(base.as_object().expect("object"))
}

/// `src/workflows/templates.test.ts` at dd02adf (and the same cases of
/// `packages/workflow-engine/src/core/templates.ts` at 2d26144), each `expect` as an assertion.
#[test]
fn upstreams_template_tests() {
    use serde_json::json;
    for engine in [Engine::Seed, Engine::Head] {
        let r = |template: &str, extra: Value| render::render(template, &ctx(extra), engine).text;
        assert_eq!(stagelint::runtime::lastlight::value::slugify("Hello World"), "hello-world");
        assert_eq!(stagelint::runtime::lastlight::value::slugify("  Hello  "), "hello");
        assert_eq!(stagelint::runtime::lastlight::value::slugify("Fix: bug #42!"), "fix-bug-42");
        assert_eq!(stagelint::runtime::lastlight::value::slugify(&"a".repeat(50)).len(), 40);
        assert_eq!(stagelint::runtime::lastlight::value::slugify("foo -- bar !! baz"), "foo-bar-baz");
        assert_eq!(r("Hello {{owner}}/{{repo}}#{{issueNumber}}", json!({})), "Hello acme/widget#42");
        assert_eq!(r("{{unknownVar}}", json!({})), "");
        assert_eq!(r("Issue {{issueNumber}}", json!({})), "Issue 42");
        let published =
            json!({"phaseOutputs": {"publishResult": "**Spec published:** https://github.com/a/b/issues/1"}});
        assert_eq!(r("{{publishResult}}", published), "**Spec published:** https://github.com/a/b/issues/1");
        assert_eq!(r("{{owner}}", json!({"owner": "ctxOwner", "phaseOutputs": {"owner": "phaseOwner"}})), "ctxOwner");
        let models = json!({"models": {"architect": "claude-opus-4-6", "default": "claude-sonnet-4-6"}});
        assert_eq!(r("Model: {{models.architect}}", models), "Model: claude-opus-4-6");
        assert_eq!(r("{{models.architect}}", json!({"models": {"default": "claude-sonnet-4-6"}})), "");
        assert_eq!(r("{{slugify issueTitle}}", json!({})), "add-rate-limiter");
        assert_eq!(
            r("{{branchUrl architect-plan.md}}", json!({})),
            "https://github.com/acme/widget/blob/lastlight%2F42-add-rate-limiter/.lastlight/issue-42/architect-plan.md"
        );
        let ci = |v: Value| json!({ "ciSection": v });
        assert_eq!(
            r("{{#if ciSection}}CI section present{{/if}}", ci(json!("CI FAILURES: tests failed"))),
            "CI section present"
        );
        assert_eq!(r("{{#if ciSection}}CI section present{{/if}}", ci(json!(""))), "");
        assert_eq!(r("{{#if ciSection}}CI section present{{/if}}", json!({})), "");
        assert_eq!(r("{{#if approved}}yes{{/if}}", json!({"approved": false})), "");
        assert_eq!(r("{{#if approved}}yes{{/if}}", json!({"approved": true})), "yes");
        let multiline = r("{{#if ciSection}}\n  CI failures:\n  {{ciSection}}\n{{/if}}", ci(json!("failures here")));
        assert!(multiline.contains("CI failures:") && multiline.contains("failures here"), "{multiline}");
        let qa = json!({"scratch": {"socratic": {"qa": [{"q": "q1", "a": "a1"}]}}});
        assert_eq!(r("{{scratch.socratic.qa}}", qa.clone()), r#"[{"q":"q1","a":"a1"}]"#);
        assert_eq!(r("{{scratch.socratic.qa}}", json!({"scratch": {}})), "");
        assert_eq!(r("{{scratch.socratic.ready}}", json!({"scratch": {"socratic": {"ready": true}}})), "true");
        assert_eq!(r("{{#if scratch.socratic.qa}}has qa{{/if}}", qa), "has qa");
        assert_eq!(r("{{#if scratch.socratic.qa}}has qa{{/if}}", json!({"scratch": {}})), "");
        assert_eq!(r("{{#if ciSection}}Fix: {{ciSection}}{{/if}}", ci(json!("some failures"))), "Fix: some failures");
    }
}

/// `src/workflows/loop-eval.test.ts` at dd02adf, each `expect` as an assertion, for both engines.
#[test]
fn upstreams_loop_eval_tests() {
    use serde_json::json;
    let eval = |expression: &str, context: Value, engine| {
        until::eval(expression, &Ctx::from_map(context.as_object().expect("object")), engine).met
    };
    for engine in [Engine::Seed, Engine::Head] {
        assert!(eval("output.contains('APPROVED')", json!({"output": "VERDICT: APPROVED"}), engine));
        assert!(!eval("output.contains('APPROVED')", json!({"output": "REQUEST_CHANGES"}), engine));
        assert!(!eval("output.contains('approved')", json!({"output": "APPROVED"}), engine), "case-sensitive");
        assert!(eval("output.contains(\"PASS\")", json!({"output": "All tests PASS"}), engine));
        assert!(eval("verdict == 'APPROVED'", json!({"output": "", "verdict": "APPROVED"}), engine));
        assert!(!eval("verdict == 'APPROVED'", json!({"output": "", "verdict": "REQUEST_CHANGES"}), engine));
        assert!(eval("status == \"done\"", json!({"output": "", "status": "done"}), engine));
        assert!(!eval("missing == 'value'", json!({"output": ""}), engine));
        assert!(eval("verdict != 'FAILED'", json!({"output": "", "verdict": "APPROVED"}), engine));
        assert!(!eval("verdict != 'FAILED'", json!({"output": "", "verdict": "FAILED"}), engine));
        assert!(!eval("missing != 'value'", json!({"output": ""}), engine));
        let scratch = |socratic: Value| json!({"output": "", "scratch": {"socratic": socratic}});
        assert!(eval("scratch.socratic.ready == true", scratch(json!({"ready": true})), engine));
        assert!(eval("scratch.socratic.status == 'done'", scratch(json!({"status": "done"})), engine));
        assert!(!eval("scratch.socratic.ready == true", json!({"output": "", "scratch": {}}), engine));
        assert!(!eval("scratch.socratic.ready == true", scratch(json!({"ready": false})), engine));
        assert!(eval("scratch.socratic.ready != false", scratch(json!({"ready": true})), engine));
        assert!(!eval("__proto__.polluted == 'yes'", json!({"output": ""}), engine));
        assert!(!eval("obj.constructor == 'Object'", json!({"output": "", "obj": {}}), engine));
        assert!(!eval("obj.prototype.x == 'y'", json!({"output": "", "obj": {}}), engine));
        assert!(!eval("", json!({"output": "anything"}), engine));
        assert!(!eval("output > 5", json!({"output": "10"}), engine));
        assert!(!eval("verdict", json!({"output": "", "verdict": "APPROVED"}), engine));
    }
}

/// A project at `release` with one PR-scoped workflow whose prompt reads variables of several
/// releases, and a cassette of a PR trigger whose dispatcher passes `baseBranch`.
fn at_release(release: &str) -> (tempfile::TempDir, Workspace, DryRun) {
    let dir = tempfile::tempdir().expect("dir");
    let workflows = dir.path().join("workflows");
    std::fs::create_dir_all(workflows.join("prompts")).expect("dir");
    std::fs::create_dir_all(workflows.join("cassettes")).expect("dir");
    std::fs::write(dir.path().join("stagelint.toml"), format!("[lastlight]\nrelease = \"{release}\"\n"))
        .expect("write");
    std::fs::write(workflows.join("pr-fix.yaml"), "name: pr-fix\nphases:\n  - name: fix\n    prompt: prompts/fix.md\n")
        .expect("write");
    std::fs::write(
        workflows.join("prompts/fix.md"),
        "issue={{issueNumber}} pr={{prNumber}} title={{prTitle}} sha={{headSha}} base={{baseBranch}} bot={{botMention}} ci={{ciSection}}\n",
    )
    .expect("write");
    std::fs::write(
        workflows.join("cassettes/pr-fix.cassette.yaml"),
        "cassette: 1\nworkflow: pr-fix\ntrigger: { owner: acme, repo: widgets, prNumber: 7, issueTitle: Fix CI, extra: { baseBranch: main } }\nexecutions:\n  fix: { output: pushed }\n",
    )
    .expect("write");
    let mut configs = stagelint::workspace::discover::ConfigCache::new(None);
    let overlay = std::collections::HashMap::new();
    let options = Options { strict: false, explain_init: true };
    let (workspace, run) =
        runtime::dry_run_path(&workflows.join("pr-fix.yaml"), None, options, &mut configs, &overlay).expect("runs");
    (dir, workspace, run)
}

/// The run's context is the release's, from the family's variable table: `prNumber` from 0.10.2
/// (before, a PR run's `issueNumber` is 0), `botMention` from 0.10.6. A variable the release
/// does not set renders empty and the finding names the release that sets it; the preview says
/// so too, for the PR render context of a PR-scoped workflow (0.23) as well.
#[test]
fn the_context_of_a_run_is_the_releases() {
    let (_dir, _, old) = at_release("0.7.7");
    assert_eq!(prompt(&old, "fix"), "issue=0 pr= title= sha= base=main bot= ci=\n");
    let why: Vec<String> = old.findings.iter().map(|d| d.message.clone()).collect();
    assert!(why.iter().any(|m| m.contains("`prNumber` from Last Light 0.10.2 on; this run models 0.7.7")), "{why:#?}");
    // A variable the dispatcher passes (`[lastlight] variables`) is the cassette's to give.
    let extra = "`ciSection` reaches the context through the dispatcher's `request.extra`";
    assert!(why.iter().any(|m| m.contains(extra)), "{why:#?}");
    let (_dir, mid_ws, mid) = at_release("0.18.5");
    assert_eq!(prompt(&mid, "fix"), "issue=7 pr=7 title= sha= base=main bot=@last-light ci=\n");
    assert!(timeline(&mid_ws, &mid).contains("workflow pr-fix · Last Light 0.18.5 · current engine"));

    let (_dir, workspace, _) = at_release("0.7.7");
    let workflow = workspace.files().iter().find(|f| f.path.ends_with("pr-fix.yaml")).expect("workflow").id;
    let preview = runtime::preview(&workspace, workflow, "fix", &[]).expect("renders");
    assert!(
        preview.marked.contains("{{prNumber}} (line 1): set from Last Light 0.10.2 on, not at 0.7.7"),
        "{}",
        preview.marked
    );
    assert!(
        preview.marked.contains("{{prTitle}} (line 1): set from Last Light 0.23 on, not at 0.7.7"),
        "{}",
        preview.marked
    );
    assert!(
        preview.marked.contains("{{issueNumber}} (line 1)\n"),
        "given with --var, it would render: {}",
        preview.marked
    );
}
