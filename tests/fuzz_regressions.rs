//! The fuzz targets' inputs on stable, in CI: every file under `tests/fuzz_regressions/<target>/`
//! (minimized crashes, hangs and tricky seeds) goes through the same body as `fuzz/fuzz_targets/<target>.rs`,
//! which panics on a broken invariant, within a time bound per input. `fuzz/README.md` says how
//! to add one.

mod fuzz_entry;

use std::path::Path;
use std::time::{Duration, Instant};

/// The fuzzing timeout is 1 s per input in an optimized build; a debug build is slower.
const BOUND: Duration = Duration::from_secs(10);

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new("tests/fuzz_regressions").join(target);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("entry").path();
            (path.display().to_string(), std::fs::read(&path).expect("readable"))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_saved_input_passes_its_target() {
    let mut count = 0;
    for (target, run) in fuzz_entry::TARGETS {
        let inputs = inputs(target);
        assert!(inputs.len() >= 3, "{target}: at least three inputs exercise it, found {}", inputs.len());
        for (name, data) in inputs {
            let started = Instant::now();
            run(&data);
            let took = started.elapsed();
            assert!(took < BOUND, "{name} took {took:?}");
            count += 1;
        }
    }
    assert!(count >= 3 * fuzz_entry::TARGETS.len());
}

#[test]
fn every_target_has_a_fuzz_target_and_a_directory() {
    for (target, _) in fuzz_entry::TARGETS {
        let source = Path::new("fuzz/fuzz_targets").join(format!("{target}.rs"));
        let text = std::fs::read_to_string(&source).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
        assert!(text.contains(&format!("entry::{target}_target(data)")), "{} runs another body", source.display());
        assert!(Path::new("tests/fuzz_regressions").join(target).is_dir());
    }
}
