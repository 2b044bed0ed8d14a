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

/// No test is ignored, except one that drives an outside tool `build.rs` looks for, which is
/// ignored with a reason exactly when that tool is not on `PATH` (see [`is_tool_ignore`]).
#[test]
fn no_ignored_or_should_panic_tests_and_no_stubs() {
    let banned = ["#[ignore", "#[should_panic", "todo!(", "unimplemented!(", "dbg!("];
    let tools = build_tools();
    let mut found = Vec::new();
    for (path, text) in files(&["src", "tests", "benches"]) {
        if path.ends_with("tidy.rs") {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            if let Some(b) = banned.iter().find(|b| line.contains(*b)) {
                found.push(format!("{}:{}: {b}", path.display(), n + 1));
            }
            let attribute = line.trim_start().starts_with("#[cfg_attr(");
            if attribute && line.contains("ignore") && !is_tool_ignore(line, &tools) {
                found.push(format!(
                    "{}:{}: an ignore that is not `#[cfg_attr(not(tool_…), ignore = \"why\")]`",
                    path.display(),
                    n + 1
                ));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The cfgs `build.rs` sets for the tools in its `TOOLS` list: `tool_<name>`, `-` written `_`.
fn build_tools() -> Vec<String> {
    let script = std::fs::read_to_string("build.rs").expect("build.rs");
    let list = script.lines().find(|l| l.starts_with("const TOOLS: &[&str] = &[")).expect("the TOOLS list");
    list.split('"').skip(1).step_by(2).map(|tool| format!("tool_{}", tool.replace('-', "_"))).collect()
}

/// Whether `line` is `#[cfg_attr(not(CONDITION), ignore = "REASON")]`, where CONDITION names
/// only `tools` (alone, or in `all(…)`/`any(…)`) and REASON is not empty.
fn is_tool_ignore(line: &str, tools: &[String]) -> bool {
    let Some(rest) = line.trim().strip_prefix("#[cfg_attr(not(") else { return false };
    let Some((condition, reason)) = rest.split_once("), ignore = \"") else { return false };
    let Some(reason) = reason.strip_suffix("\")]") else { return false };
    let names: Vec<&str> = condition
        .split(|c: char| c == '(' || c == ')' || c == ',' || c.is_whitespace())
        .filter(|word| !word.is_empty() && *word != "all" && *word != "any")
        .collect();
    !names.is_empty() && names.iter().all(|name| tools.iter().any(|t| t == name)) && !reason.trim().is_empty()
}

#[test]
fn a_tool_ignore_names_a_tool_of_build_rs_and_a_reason() {
    let tools = build_tools();
    assert!(tools.contains(&"tool_pre_commit".to_string()), "{tools:?}");
    let ok = [
        "#[cfg_attr(not(tool_nvim), ignore = \"nvim is not on PATH\")]",
        "    #[cfg_attr(not(all(tool_pre_commit, tool_git)), ignore = \"no pre-commit\")]",
    ];
    for line in ok {
        assert!(is_tool_ignore(line, &tools), "{line}");
    }
    let wrong = [
        "#[cfg_attr(not(tool_nvim), ignore)]",
        "#[cfg_attr(not(tool_nvim), ignore = \"\")]",
        "#[cfg_attr(not(tool_emacs), ignore = \"no emacs\")]",
        "#[cfg_attr(unix, ignore = \"flaky\")]",
        "#[cfg_attr(not(feature = \"lsp\"), ignore = \"needs lsp\")]",
    ];
    for line in wrong {
        assert!(!is_tool_ignore(line, &tools), "{line}");
    }
}

/// The floors of `src/`, lowest first (ARCHITECTURE.md draws them). A module imports only
/// modules earlier in this list; within a floor the order is fixed too, so no two top-level
/// modules import each other.
const FLOORS: &[&str] = &[
    "util",
    "source",
    "registry",
    "diagnostic",
    "template",
    "config",
    "workspace",
    "editor",
    "cassette",
    "families",
    "runtime",
    "baseline",
    "check",
    "select",
    "render",
    "fix",
    "init",
    "ide",
    "lsp",
    "cli",
    "main",
    "lib",
];

/// The top-level modules a Rust text names through `crate::` (also inside `use crate::{…}`
/// groups) and through `super::` chains that climb to the crate root from `module` (the
/// file's module path, `["families", "sm", "model"]`). Comments are skipped.
fn top_level_imports(text: &str, module: &[String]) -> Vec<String> {
    let code: String = text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        match rest.strip_prefix('{') {
            // `crate::{a::b, c}`: the first segment of each item at the group's own depth.
            Some(group) => {
                for item in split_top(group) {
                    out.push(ident(item.trim_start()));
                }
            }
            None => out.push(ident(rest)),
        }
    }
    // `super::…` climbs one module per `super`; a chain that leaves the file's top-level module
    // names another one.
    let own_depth = module.len();
    for (at, _) in code.match_indices("super::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let mut rest = &code[at..];
        let mut hops = 0;
        while let Some(next) = rest.strip_prefix("super::") {
            hops += 1;
            rest = next;
        }
        if hops >= own_depth {
            out.push(ident(rest));
        }
    }
    out.retain(|m| !m.is_empty());
    out
}

/// The items of a `{…}` use group at its own depth, up to its closing brace.
fn split_top(group: &str) -> Vec<&str> {
    let (mut depth, mut start, mut items) = (0, 0, Vec::new());
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..i]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items
}

/// The module path of a file under `src/` (`src/families/sm/model.rs` → families, sm, model;
/// `mod.rs` is its directory's module).
fn module_path(path: &Path) -> Vec<String> {
    let relative = path.strip_prefix("src").expect("under src");
    let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs").to_string();
    if stem != "mod" {
        parts.push(stem);
    }
    parts
}

#[test]
fn every_import_goes_to_a_lower_floor() {
    let mut upward = Vec::new();
    for (path, text) in files(&["src"]) {
        let module = module_path(&path);
        let own = module.first().cloned().unwrap_or_else(|| "lib".into());
        let Some(floor) = FLOORS.iter().position(|f| *f == own) else {
            upward.push(format!("{}: top-level module `{own}` is on no floor (add it to FLOORS)", path.display()));
            continue;
        };
        for target in top_level_imports(&text, &module) {
            if target == own || target == "self" || target == "super" {
                continue;
            }
            match FLOORS.iter().position(|f| *f == target) {
                Some(to) if to < floor => {}
                // Names under the crate root that are not modules (a macro, a re-export) have
                // no floor; only modules are checked.
                None if !Path::new("src").join(&target).exists()
                    && !Path::new("src").join(format!("{target}.rs")).exists() => {}
                _ => upward.push(format!("{}: `{own}` imports `{target}`", path.display())),
            }
        }
    }
    upward.sort();
    upward.dedup();
    assert!(upward.is_empty(), "imports that do not go to a lower floor:\n{}", upward.join("\n"));
}

/// The runtime's core modules an engine builds on (`src/runtime/mod.rs` draws the halves).
const RUNTIME_LOWER_HALF: &[&str] = &["engine", "run", "events", "read", "text", "wire", "coverage"];

/// The runtime folders that are no engine: the `cassette/` family and the wire formats.
const RUNTIME_CORE_FOLDERS: &[&str] = &["lint", "wire"];

/// An engine (a folder under `src/runtime/`) imports the core's lower half and its own folder:
/// never the dispatch (`runtime/mod.rs`, `target`, `report`, `lint`) nor another engine.
#[test]
fn engines_import_only_the_runtime_cores_lower_half() {
    let mut found = Vec::new();
    for (path, text) in files(&["src/runtime"]) {
        let module = module_path(&path);
        let Some(engine) = module.get(1) else { continue };
        if RUNTIME_CORE_FOLDERS.contains(&engine.as_str()) || !Path::new("src/runtime").join(engine).is_dir() {
            continue;
        }
        let code: String = text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
        let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
        for (at, _) in code.match_indices("crate::runtime::") {
            let rest = &code[at + "crate::runtime::".len()..];
            let targets: Vec<String> = match rest.strip_prefix('{') {
                Some(group) => split_top(group).into_iter().map(|item| ident(item.trim_start())).collect(),
                None => vec![ident(rest)],
            };
            for target in targets {
                if target != *engine && !RUNTIME_LOWER_HALF.contains(&target.as_str()) {
                    found.push(format!("{}: engine `{engine}` imports `runtime::{target}`", path.display()));
                }
            }
        }
    }
    found.sort();
    found.dedup();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_import_reader_sees_groups_nested_paths_and_super_chains() {
    let module: Vec<String> = ["families", "sm", "model"].iter().map(|s| s.to_string()).collect();
    let text = "use crate::{source::{Node, Span}, workspace::SourceFile};\n\
                // use crate::lsp::x;\n\
                fn f() { crate::runtime::run(); super::super::super::check::check(); super::rules::x(); }\n";
    let mut found = top_level_imports(text, &module);
    found.sort();
    assert_eq!(found, ["check", "runtime", "source", "workspace"]);
}

/// docs/security.md: nothing in the library or the binary starts a process or opens a socket;
/// the only HTTP client is `ureq`, used by `runtime/record.rs` alone and only with the
/// non-default `record` feature.
#[test]
fn nothing_executes_and_only_the_record_feature_reaches_the_network() {
    // Threads and tasks are fine; processes and sockets are not.
    let forbidden = ["process::Command", "Command::new", "std::net", "TcpStream", "UdpSocket", "libc::"];
    let mut found = Vec::new();
    for (path, text) in files(&["src"]) {
        for needle in forbidden {
            if text.contains(needle) {
                found.push(format!("{}: {needle}", path.display()));
            }
        }
        if text.contains("ureq") && !path.ends_with("runtime/record.rs") && !path.ends_with("main.rs") {
            found.push(format!("{}: ureq outside runtime/record.rs", path.display()));
        }
    }
    assert!(found.is_empty(), "{found:?}");
    let manifest = std::fs::read_to_string("Cargo.toml").expect("Cargo.toml");
    assert!(
        manifest
            .contains("ureq = { version = \"3\", default-features = false, features = [\"rustls\"], optional = true }")
    );
    let defaults = manifest.lines().find(|l| l.starts_with("default = [")).expect("a default feature list");
    assert_eq!(defaults, "default = [\"lsp\", \"mcp\"]", "the record feature is not a default");
    let lib = std::fs::read_to_string("src/runtime/mod.rs").expect("runtime");
    assert!(lib.contains("#[cfg(feature = \"record\")]"), "record.rs is compiled only with the feature");
}
