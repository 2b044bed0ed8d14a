//! Every rule's documented `## Example` and `## Use instead` are run through the linter.
//!
//! How a doc's code blocks become files (`src/families/*/docs/<Name>.md` follow this):
//! - The input of a section is the first fenced block (```` ``` ````) under its heading; the
//!   prose around the block is not read.
//! - A line `# <file name>` at column 0, where the name ends in `.md`, `.yaml`, `.yml`, `.json`
//!   or `.toml`, starts a new file of that name. Inside a stage's `---` frontmatter such a line
//!   is a YAML comment, never a file header.
//! - A block without any header is one stage file, `stage.md`. A block with several files
//!   names every one of them (nothing may come before its first header).
//! - `# stagelint.toml` is the config for the whole block, loaded with `Config::load`;
//!   without one the defaults apply.
//! - "Use instead" shows only the files it changes or adds: a file it does not mention carries
//!   over unchanged from "Example".
//!
//! The rule under test is the only rule enabled (see `common::only`). Its Example must report
//! it and its Use instead must not. Use instead must moreover be clean under every rule, except
//! that a block of state-machine files only stands for a machine whose stages are not shown.

mod common;

use std::collections::BTreeMap;

use stagelint::config::Config;
use stagelint::diagnostic::Diagnostic;
use stagelint::families::{self, RuleMeta};
use stagelint::workspace::Workspace;

/// Rules whose Example cannot be shown as files; their Use instead is still checked.
const NO_RUNNABLE_EXAMPLE: &[(&str, &str)] = &[(
    "stagelint/IoError",
    "the problem is the file's bytes (not UTF-8, binary, or over 16 MiB), which a markdown code block cannot hold",
)];

/// Rules that, besides themselves, need other rules enabled to show their Example.
const ALSO_ENABLED: &[(&str, &[&str], &str)] = &[(
    "stagelint/UnusedSuppression",
    &["sm/UnknownField"],
    "a suppression of a rule that is turned off is never reported as unused",
)];

const FILE_EXTENSIONS: [&str; 5] = [".md", ".yaml", ".yml", ".json", ".toml"];

/// The name used for a block (or the start of one) that names no file.
const DEFAULT_FILE: &str = "stage.md";

/// The first fenced block under `## <section>`, or `None` when the section has none.
fn fenced_block<'d>(doc: &'d str, section: &str) -> Option<&'d str> {
    let heading = format!("## {section}\n");
    let start = doc.find(&heading)? + heading.len();
    let rest = &doc[start..];
    let rest = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
    let open = rest.lines().position(|line| line.starts_with("```"))?;
    let mut body_start = 0;
    for line in rest.split_inclusive('\n').take(open + 1) {
        body_start += line.len();
    }
    let body = &rest[body_start..];
    let mut len = 0;
    for line in body.split_inclusive('\n') {
        if line.trim_end() == "```" {
            return Some(&body[..len]);
        }
        len += line.len();
    }
    panic!("the fenced block under `## {section}` is never closed");
}

/// `# name.ext` at column 0: the file header convention described at the top.
fn file_header(line: &str) -> Option<&str> {
    let name = line.strip_prefix("# ")?;
    let plain = !name.is_empty() && !name.contains(char::is_whitespace) && !name.starts_with('.');
    (plain && FILE_EXTENSIONS.iter().any(|ext| name.ends_with(ext) && name.len() > ext.len())).then_some(name)
}

/// Splits a block into files, in order of appearance.
fn split_files(block: &str) -> Result<BTreeMap<String, String>, String> {
    let mut files: Vec<(String, String)> = Vec::new();
    let mut current = DEFAULT_FILE.to_string();
    let mut text = String::new();
    let mut line_in_file = 0;
    let mut in_frontmatter = false;
    let mut named = false;
    for line in block.lines() {
        if in_frontmatter {
            in_frontmatter = line != "---";
        } else if line_in_file == 0 && line == "---" && current.ends_with(".md") {
            in_frontmatter = true;
        } else if let Some(name) = file_header(line) {
            if !named && !text.trim().is_empty() {
                return Err(format!("lines before the first `# {name}` belong to no named file"));
            }
            if named {
                files.push((current, std::mem::take(&mut text)));
            }
            text.clear();
            current = name.to_string();
            line_in_file = 0;
            named = true;
            continue;
        }
        text.push_str(line);
        text.push('\n');
        line_in_file += 1;
    }
    files.push((current, text));
    let mut map = BTreeMap::new();
    for (name, text) in files {
        if map.insert(name.clone(), text).is_some() {
            return Err(format!("`{name}` appears twice"));
        }
    }
    Ok(map)
}

/// Writes `files` into a fresh directory and checks it with `code` alone enabled (`None`: with
/// every rule at its default severity).
fn run(files: &BTreeMap<String, String>, code: Option<&str>) -> (tempfile::TempDir, Workspace, Vec<Diagnostic>) {
    // Under the target directory, so no `sm.yaml` in a shared temp dir is taken for ours.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    let config_path = dir.path().join("stagelint.toml");
    let mut config = if files.contains_key("stagelint.toml") {
        Config::load(&config_path).unwrap_or_else(|e| panic!("the block's stagelint.toml: {e}"))
    } else {
        Config::defaults(dir.path())
    };
    if let Some(code) = code {
        config = common::only(config, code);
        for (rule, others, _) in ALSO_ENABLED.iter().filter(|(rule, _, _)| *rule == code) {
            for other in *others {
                let severity = families::rule(other).unwrap_or_else(|| panic!("{rule}: unknown code {other}")).severity;
                config.rules.insert(other.to_string(), Some(severity));
            }
        }
    }
    let (workspace, diagnostics) = common::check_with(&[dir.path().to_path_buf()], config);
    // A file the linter does not take for a stage or a state machine (say, a stage whose first
    // line is not `---`) would make any "does not report" check pass for nothing.
    let linted = files.keys().filter(|name| name.as_str() != "stagelint.toml").count();
    assert_eq!(workspace.files().len(), linted, "not every file of the block is linted:\n{}", show(files));
    (dir, workspace, diagnostics)
}

fn show(files: &BTreeMap<String, String>) -> String {
    files.iter().map(|(name, text)| format!("--- {name}\n{text}")).collect()
}

/// The Example's files and the Use instead's files with the Example's carried over.
fn example_and_fix(rule: &RuleMeta) -> (Option<BTreeMap<String, String>>, BTreeMap<String, String>) {
    let code = rule.code;
    let files = |section: &str| {
        fenced_block(rule.doc, section)
            .map(|block| split_files(block).unwrap_or_else(|e| panic!("{code}, `## {section}` block: {e}")))
    };
    let example = files("Example");
    let changed = files("Use instead").unwrap_or_else(|| panic!("{code}: `## Use instead` has no code block"));
    let mut fixed = example.clone().unwrap_or_default();
    for name in changed.keys() {
        let carried = example.as_ref().is_some_and(|e| e.contains_key(name));
        assert!(
            name != DEFAULT_FILE || carried || example.is_none(),
            "{code}: `## Use instead` adds an unnamed file while `## Example` names its files; name it with `# <file>`"
        );
    }
    fixed.extend(changed);
    (example, fixed)
}

fn fires(code: &str, diagnostics: &[Diagnostic]) -> bool {
    diagnostics.iter().any(|d| d.code == code)
}

#[test]
fn examples_report_their_rule_and_fixes_do_not() {
    let listed = NO_RUNNABLE_EXAMPLE.iter().map(|(code, _)| *code).chain(ALSO_ENABLED.iter().map(|(code, ..)| *code));
    for code in listed {
        assert!(families::rule(code).is_some(), "exception for unknown rule {code}");
    }
    let mut failures = Vec::new();
    let mut checked = 0;
    let total = families::all_rules().count();
    for rule in families::all_rules() {
        let code = rule.code;
        let (example, fixed) = example_and_fix(rule);
        let skip_example = NO_RUNNABLE_EXAMPLE.iter().any(|(c, _)| *c == code);
        if !skip_example {
            match &example {
                None => failures.push(format!("{code}: `## Example` has no code block")),
                Some(files) => {
                    let (_dir, workspace, diagnostics) = run(files, Some(code));
                    if fires(code, &diagnostics) {
                        checked += 1;
                    } else {
                        failures.push(format!(
                            "{code}: the Example does not report it\n{}{}",
                            show(files),
                            common::render_full(&workspace, &diagnostics)
                        ));
                    }
                }
            }
        }
        let (_dir, workspace, diagnostics) = run(&fixed, Some(code));
        if fires(code, &diagnostics) {
            failures.push(format!(
                "{code}: Use instead still reports it\n{}{}",
                show(&fixed),
                common::render_full(&workspace, &diagnostics)
            ));
        }
    }
    assert!(failures.is_empty(), "{} problem(s):\n\n{}", failures.len(), failures.join("\n\n"));
    assert_eq!(checked, total - NO_RUNNABLE_EXAMPLE.len(), "every Example but the listed exceptions runs");
}

#[test]
fn fixes_are_clean_under_every_rule() {
    let mut failures = Vec::new();
    for rule in families::all_rules() {
        let (_, fixed) = example_and_fix(rule);
        let (_dir, workspace, mut diagnostics) = run(&fixed, None);
        if !fixed.keys().any(|name| name.ends_with(".md")) {
            diagnostics.retain(|d| d.code != "sm/EntryStageMissing");
        }
        if !diagnostics.is_empty() {
            failures.push(format!(
                "{}: Use instead is not clean\n{}{}",
                rule.code,
                show(&fixed),
                common::render_full(&workspace, &diagnostics)
            ));
        }
    }
    assert!(failures.is_empty(), "{} problem(s):\n\n{}", failures.len(), failures.join("\n\n"));
}

#[test]
fn file_headers_follow_the_convention() {
    let block = "# sm.yaml\nentry: plan\n# plan.md\n---\n# review.md\nid: plan\n---\nbody\n";
    let files = split_files(block).unwrap();
    assert_eq!(files.keys().collect::<Vec<_>>(), ["plan.md", "sm.yaml"]);
    assert_eq!(files["plan.md"], "---\n# review.md\nid: plan\n---\nbody\n");
    assert_eq!(split_files("---\nid: plan\n---\n").unwrap().keys().collect::<Vec<_>>(), [DEFAULT_FILE]);
    assert!(split_files("---\nid: a\n---\n# b.md\n---\nid: b\n---\n").is_err());
    assert_eq!(file_header("# stagelint: ignore[sm/UnknownField]"), None);
    assert_eq!(file_header("# plan.md, saved in UTF-8"), None);
    assert_eq!(
        fenced_block("## Example\nprose\n```markdown\na\nb\n```\nmore\n## Use instead\n", "Example"),
        Some("a\nb\n")
    );
}
