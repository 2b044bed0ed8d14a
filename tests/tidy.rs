//! Code hygiene checked under `cargo test`: module docs, no ignored or panicking tests, no stubs.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn files(dirs: &[&str]) -> Vec<(PathBuf, String)> {
    let mut paths = Vec::new();
    for dir in dirs {
        rust_files(Path::new(dir), &mut paths);
    }
    paths.sort();
    paths.into_iter().map(|p| (p.clone(), std::fs::read_to_string(&p).expect("readable"))).collect()
}

#[test]
fn every_module_starts_with_a_doc_comment() {
    let missing: Vec<String> = files(&["src", "tests", "benches"])
        .into_iter()
        .filter(|(_, text)| !text.trim_start().starts_with("//!"))
        .map(|(p, _)| p.display().to_string())
        .collect();
    assert!(missing.is_empty(), "modules without a `//!` doc: {missing:?}");
}

#[test]
fn no_ignored_or_should_panic_tests_and_no_stubs() {
    let banned = ["#[ignore", "#[should_panic", "todo!(", "unimplemented!(", "dbg!("];
    let mut found = Vec::new();
    for (path, text) in files(&["src", "tests", "benches"]) {
        if path.ends_with("tidy.rs") {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            if let Some(b) = banned.iter().find(|b| line.contains(*b)) {
                found.push(format!("{}:{}: {b}", path.display(), n + 1));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
