//! The dry-run of a three-stage pipeline (plan → execute → review) against a machine cassette
//! of 200 turns: 120 tool turns in plan, 60 in execute, 17 in review, each stage ending with its
//! completion. Target: under 20 ms in release mode. Run with `cargo bench --bench dry_run`.

#[allow(dead_code)]
mod generator;

use criterion::{Criterion, criterion_group, criterion_main};
use stagelint::runtime::{self, Options};
use stagelint::workspace::discover::{ConfigCache, discover};

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

criterion_group!(dry_run, benches);
criterion_main!(dry_run);
