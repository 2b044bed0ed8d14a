//! The dry-run of a three-stage pipeline (plan → execute → review) against a machine cassette
//! of 200 turns: 120 tool turns in plan, 60 in execute, 17 in review, each stage ending with its
//! completion. Target: under 20 ms in release mode. And a climpt agent's 50-iteration flow:
//! 48 iterations of its work steps, a handoff, and the closure step's `closing`, with prompt
//! fingerprints, under `--strict`. Target: under 10 ms. And a Last Light workflow of 20 phases
//! whose reviewer loop runs 5 fix cycles (targets: the replay under 10 ms, the render of one
//! phase's prompt under 2 ms). Run with `cargo bench --bench dry_run`.

#[allow(dead_code)]
mod generator;

use criterion::{Criterion, criterion_group, criterion_main};
use stagelint::runtime::{self, Options};
use stagelint::workspace::discover::{ConfigCache, discover};
use std::fmt::Write;
use std::path::Path;

const TURNS: [(&str, usize); 3] = [("plan", 119), ("execute", 59), ("review", 19)];

fn benches(c: &mut Criterion) {
    let dir = std::env::temp_dir().join("stagelint-bench-dry-run");
    generator::generate_pipeline(&dir, TURNS, 200);
    let mut configs = ConfigCache::new(None);
    let workspace = discover(std::slice::from_ref(&dir), &mut configs).expect("config");
    let sm = workspace.files().iter().find(|f| f.path.ends_with("sm.yaml")).expect("sm").id;
    let cassette = workspace.files().iter().find(|f| f.path.ends_with("sm.cassette.yaml")).expect("cassette").id;
    let options = Options { strict: true, explain_init: true };
    let run = runtime::machine(&workspace, sm, Some(cassette), options);
    assert_eq!(run.exit_code(), 0, "{:?}", run.findings);
    let turns = run.trace.events.iter().filter(|e| e.name == "ProviderResponse").count();
    assert_eq!(turns, 200);
    c.bench_function("dry-run 3-stage pipeline, 200-turn cassette (files in memory)", |b| {
        b.iter(|| runtime::machine(&workspace, sm, Some(cassette), options).trace.events.len())
    });
    c.bench_function("dry-run 3-stage pipeline, 200-turn cassette (with reading)", |b| {
        b.iter(|| {
            let mut configs = ConfigCache::new(None);
            let overlay = std::collections::HashMap::new();
            let (_, run) = runtime::dry_run_path(&dir, None, options, &mut configs, &overlay).expect("runs");
            run.trace.events.len()
        })
    });
}

/// A climpt agent (`examples/climpt`'s fixer, its bound raised to 60 iterations) and a flow
/// cassette of 50 iterations, each with the fingerprints of what it sends, replayed under
/// `--strict` (so every prompt, the system prompt and each output schema are fingerprinted and
/// compared).
fn climpt(c: &mut Criterion) {
    let dir = std::env::temp_dir().join("stagelint-bench-dry-run-climpt");
    let _ = std::fs::remove_dir_all(&dir);
    let agent = dir.join(".agent/fixer");
    copy_dir(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/climpt/.agent/fixer"), &agent);
    let definition = std::fs::read_to_string(agent.join("agent.json")).expect("agent.json");
    assert!(definition.contains("\"maxIterations\": 10"), "the example's bound moved");
    std::fs::write(agent.join("agent.json"), definition.replace("\"maxIterations\": 10", "\"maxIterations\": 60"))
        .expect("write");
    let options = Options { strict: true, explain_init: true };
    let run = || {
        let mut configs = ConfigCache::new(None);
        let overlay = std::collections::HashMap::new();
        runtime::dry_run_path(&agent, None, options, &mut configs, &overlay).expect("runs").1
    };
    // Recorded once without fingerprints, then with the ones that run sent.
    std::fs::write(agent.join("agent.cassette.yaml"), flow_cassette(&[])).expect("write");
    let recorded: Vec<String> = run()
        .trace
        .events
        .iter()
        .filter(|e| e.name == "QueryExecuted")
        .map(|e| serde_json::to_string(&e.data["request"]).expect("json"))
        .collect();
    assert_eq!(recorded.len(), 50);
    std::fs::write(agent.join("agent.cassette.yaml"), flow_cassette(&recorded)).expect("write");
    let first = run();
    assert_eq!(first.exit_code(), 0, "{:?}", first.findings);
    assert_eq!(first.trace.events.iter().filter(|e| e.name == "IterationStart").count(), 50);
    c.bench_function("dry-run climpt agent, 50-iteration flow, --strict (with reading)", |b| {
        b.iter(|| run().trace.events.len())
    });
}

/// 48 iterations of the fixer's work steps (one `next`, 47 `repeat`s), a handoff and the
/// closure step's `closing`; with `request` fingerprints (JSON flow mappings) when given.
fn flow_cassette(requests: &[String]) -> String {
    let mut outputs = vec!["{ summary: read, next_action: { action: next } }".to_string()];
    for n in 2..49 {
        outputs.push(format!("{{ summary: step {n}, next_action: {{ action: repeat }} }}"));
    }
    outputs.push("{ summary: done, next_action: { action: handoff } }".into());
    outputs.push("{ next_action: { action: closing } }".into());
    let mut cassette = String::from("cassette: 1\nagent: fixer\nargs: { issue: 42 }\niterations:\n");
    for (index, output) in outputs.iter().enumerate() {
        cassette.push_str(&format!("  - output: {output}\n"));
        if let Some(request) = requests.get(index) {
            cassette.push_str(&format!("    request: {request}\n"));
        }
        if (1..48).contains(&index) {
            cassette.push_str("    expect: { step: continuation.issue, route: continuation.issue }\n");
        }
    }
    cassette.push_str("expect: { outcome: completed, iterations: 50 }\n");
    cassette
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else if entry.file_name() != "agent.cassette.yaml" {
            std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
        }
    }
}

/// A Last Light project: `workflows/big.yaml` with 20 phases (a context phase, 17 agent phases
/// each reading the one before, a reviewer loop that asks for changes 5 times, a PR phase), a
/// prompt of about 2 KB with a dozen tags per phase, and a cassette recording every execution.
fn lastlight_project(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    let prompts = dir.join("workflows/prompts");
    std::fs::create_dir_all(&prompts).expect("dir");
    std::fs::create_dir_all(dir.join("workflows/cassettes")).expect("dir");
    std::fs::write(dir.join("stagelint.toml"), "[lastlight]\nengine = \"head\"\n").expect("write");
    let mut workflow = String::from("name: big\nphases:\n  - name: phase_0\n    type: context\n");
    let mut cassette = String::from(
        "cassette: 1\nworkflow: big\ntrigger: { owner: acme, repo: widgets, issueNumber: 42, issueTitle: A big change, issueBody: Do it all., issueLabels: [a, b], sender: alice }\nserver: { models: { default: m } }\nexecutions:\n",
    );
    let filler =
        "Follow the repository's conventions; run the tests, the linter and the type checker before you commit. "
            .repeat(12);
    for n in 1..=17 {
        let name = format!("step_{n:02}");
        let before = if n == 1 { "phase_0".to_string() } else { format!("step_{:02}", n - 1) };
        let _ =
            writeln!(workflow, "  - name: {name}\n    prompt: prompts/{name}.md\n    model: \"{{{{models.{name}}}}}\"");
        let prompt = format!(
            "# {name} for #{{{{issueNumber}}}}: {{{{issueTitle}}}}\n\nRepository {{{{owner}}}}/{{{{repo}}}}, branch `{{{{branch}}}}`, files in `{{{{issueDir}}}}`.\n{{{{#if issueLabels}}}}Labels: {{{{issueLabels}}}}{{{{/if}}}}\n\nWhat {before} said:\n${{{before}.output}}\n\n{filler}\nSlug: {{{{slugify issueTitle}}}}. Plan: {{{{branchUrl plan.md}}}}\n"
        );
        std::fs::write(prompts.join(format!("{name}.md")), prompt).expect("write");
        let _ = writeln!(cassette, "  {name}: {{ output: \"{name} done: {}\" }}", "x".repeat(900));
    }
    workflow.push_str(
        "  - name: review\n    prompt: prompts/review.md\n    output_var: verdict\n    loop:\n      max_cycles: 5\n      on_request_changes:\n        fix_prompt: prompts/fix.md\n        re_review_prompt: prompts/review.md\n  - name: pr\n    prompt: prompts/pr.md\n",
    );
    std::fs::write(
        prompts.join("review.md"),
        format!(
            "Review cycle {{{{fixCycle}}}} of #{{{{issueNumber}}}} on `{{{{branch}}}}`.\n{filler}\nVERDICT first.\n"
        ),
    )
    .expect("write");
    std::fs::write(prompts.join("fix.md"), format!("Fix cycle {{{{fixCycle}}}} on `{{{{branch}}}}`.\n{filler}\n"))
        .expect("write");
    std::fs::write(
        prompts.join("pr.md"),
        "PR for #{{issueNumber}}: approved={{verdict.approved}} after {{verdict.cycles}}.\n",
    )
    .expect("write");
    let _ = writeln!(cassette, "  review: {{ output: 'VERDICT: REQUEST_CHANGES' }}");
    for cycle in 1..=5 {
        let verdict = if cycle == 5 { "APPROVED" } else { "REQUEST_CHANGES" };
        let _ = writeln!(
            cassette,
            "  review_fix_{cycle}: {{ output: fixed }}\n  review_recheck_{cycle}: {{ output: 'VERDICT: {verdict}' }}"
        );
    }
    cassette.push_str("  pr: { output: opened }\nexpect: { status: succeeded, cycles: { review: 5 } }\n");
    std::fs::write(dir.join("workflows/big.yaml"), workflow).expect("write");
    std::fs::write(dir.join("workflows/cassettes/big.cassette.yaml"), cassette).expect("write");
}

fn lastlight(c: &mut Criterion) {
    let dir = std::env::temp_dir().join("stagelint-bench-dry-run-lastlight");
    lastlight_project(&dir);
    let target = dir.join("workflows/big.yaml");
    let mut configs = ConfigCache::new(None);
    let workspace = discover(std::slice::from_ref(&target), &mut configs).expect("config");
    let workflow = workspace.file_at(&target).expect("workflow").id;
    let cassette = workspace.files().iter().find(|f| f.path.ends_with("big.cassette.yaml")).expect("cassette").id;
    let options = Options { strict: false, explain_init: true };
    let run = runtime::lastlight::dry_run(&workspace, workflow, cassette, options);
    assert_eq!(run.exit_code(), 0, "{:?}", run.findings);
    let executions = run.trace.events.iter().filter(|e| e.name == "PhaseEnd").count();
    assert_eq!(executions, 17 + 11 + 1, "17 steps, 6 reviews and 5 fixes, the PR");
    c.bench_function("dry-run Last Light workflow, 20 phases, 5-cycle loop (files in memory)", |b| {
        b.iter(|| runtime::lastlight::dry_run(&workspace, workflow, cassette, options).trace.events.len())
    });
    c.bench_function("dry-run Last Light workflow, 20 phases, 5-cycle loop (with reading)", |b| {
        b.iter(|| {
            let mut configs = ConfigCache::new(None);
            let overlay = std::collections::HashMap::new();
            let (_, run) = runtime::dry_run_path(&target, None, options, &mut configs, &overlay).expect("runs");
            run.trace.events.len()
        })
    });
    let vars = vec![
        ("issueNumber".to_string(), serde_json::json!(42)),
        ("issueTitle".to_string(), serde_json::json!("A big change")),
    ];
    let rendered = runtime::preview(&workspace, workflow, "step_10", &vars).expect("renders");
    assert!(rendered.exact.starts_with("# step_10 for #42: A big change"), "{}", rendered.exact);
    c.bench_function("render one Last Light phase's prompt", |b| {
        b.iter(|| runtime::preview(&workspace, workflow, "step_10", &vars).expect("renders").exact.len())
    });
}

criterion_group!(dry_run, benches, climpt, lastlight);
criterion_main!(dry_run);
