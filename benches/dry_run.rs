//! The dry-run of a three-stage pipeline (plan → execute → review) against a machine cassette
//! of 200 turns: 120 tool turns in plan, 60 in execute, 17 in review, each stage ending with its
//! completion. Target: under 20 ms in release mode. Run with `cargo bench --bench dry_run`.

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use stagelint::runtime::{self, Options};
use stagelint::workspace::discover::{ConfigCache, discover};

const TURNS: [(&str, usize); 3] = [("plan", 119), ("execute", 59), ("review", 19)];

fn stage(id: &str, next: Option<&str>) -> String {
    let next = next.map_or(String::new(), |n| format!("next: {{ nextStages: [{n}] }}\n"));
    format!(
        "---\nid: {id}\nname: {id}\nallowedTools: [Read, Grep]\ncompletionTool: submit_{id}\ncompletionSchema:\n  type: object\n  required: [summary]\n  properties:\n    summary: {{ type: string }}\n    files: {{ type: array, items: {{ type: string }} }}\nretryPolicy: {{ maxAttempts: 1, backoff: none }}\nturnCap: 200\nresolutionPolicy: retry-later\n{next}---\nTask: {{{{ctx.task}}}}. Previous: {{{{ctx.upstream}}}}. Call `submit_{id}` when done.\n"
    )
}

fn generate(dir: &Path) {
    std::fs::create_dir_all(dir).expect("dir");
    std::fs::write(dir.join("sm.yaml"), "entry: plan\n").expect("write");
    std::fs::write(dir.join("plan.md"), stage("plan", Some("execute"))).expect("write");
    std::fs::write(dir.join("execute.md"), stage("execute", Some("review"))).expect("write");
    std::fs::write(dir.join("review.md"), stage("review", None)).expect("write");
    let mut cassette = String::from(
        "cassette: 1\nctx: { task: benchmark }\ntools:\n  Read:\n    - { anyArgs: true, result: \"fn main() {}\" }\n  Grep:\n    - { args: { pattern: main }, result: \"src/main.rs:1\" }\n    - { anyArgs: true, result: \"\" }\nstages:\n",
    );
    let mut call = 0;
    for (id, tool_turns) in TURNS {
        cassette.push_str(&format!("  {id}:\n    attempts:\n      - turns:\n"));
        for turn in 0..tool_turns {
            call += 1;
            let (tool, args) =
                if turn % 2 == 0 { ("Read", "{ path: src/main.rs }") } else { ("Grep", "{ pattern: main }") };
            cassette.push_str(&format!(
                "          - response: {{ stop: tool_use, content: [ {{ text: step {turn} }}, {{ toolCall: {{ id: c{call}, name: {tool}, args: {args} }} }} ] }}\n            expect: [ {{ branch: tool, call: c{call}, outcome: dispatched }} ]\n"
            ));
        }
        call += 1;
        cassette.push_str(&format!(
            "          - response: {{ stop: tool_use, content: [ {{ toolCall: {{ id: c{call}, name: submit_{id}, args: {{ summary: done, files: [a, b] }} }} }} ] }}\n            expect: [ {{ branch: completion, call: c{call} }} ]\n"
        ));
    }
    std::fs::write(dir.join("sm.cassette.yaml"), cassette).expect("write");
}

fn benches(c: &mut Criterion) {
    let dir = std::env::temp_dir().join("stagelint-bench-dry-run");
    generate(&dir);
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

criterion_group!(dry_run, benches);
criterion_main!(dry_run);
