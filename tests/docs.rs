//! Every rule's documented `## Example` and `## Use instead` are run through the linter.
//!
//! How a doc's code blocks become files (`src/families/*/docs/<Name>.md` follow this):
//! - The input of a section is the first fenced block (```` ``` ````) under its heading; the
//!   prose around the block is not read.
//! - A line `# <file name>` at column 0, where the name ends in `.md`, `.yaml`, `.yml`, `.json`,
//!   `.toml` or `.ts` (TypeScript may start with `.atomic/`), starts a new file of that name. Inside a stage's `---` frontmatter such a line
//!   is a YAML comment, never a file header. In a TypeScript block the line is `// <file name>`
//!   instead, so that the block stays TypeScript when pasted.
//! - A block without any header is one stage file, `stage.md`. A block with several files
//!   names every one of them (nothing may come before its first header).
//! - `# stagelint.toml` is the config for the whole block, loaded with `Config::load`;
//!   without one the defaults apply.
//! - "Use instead" shows only the files it changes or adds: a file it does not mention carries
//!   over unchanged from "Example". A file it names with no lines at all is gone (a file moved
//!   elsewhere, as `atomic/NotDiscovered` asks).
//!
//! The rule under test is the only rule enabled (see `common::only`). Its Example must report
//! it and its Use instead must not. Use instead must moreover be clean under every rule, except
//! that a block of state-machine files only stands for a machine whose stages are not shown,
//! and a block of stage files without `sm.yaml` for stages of a machine that is not shown.

mod common;

use std::collections::BTreeMap;

use stagelint::config::Config;
use stagelint::diagnostic::Diagnostic;
use stagelint::families::{self, RuleMeta};
use stagelint::workspace::Workspace;

/// Rules whose Example cannot be shown as files; their Use instead is still checked.
const NO_RUNNABLE_EXAMPLE: &[(&str, &str)] = &[
    (
        "stagelint/IoError",
        "the problem is the file's bytes (not UTF-8, binary, or over 16 MiB), which a markdown code block cannot hold",
    ),
    (
        "stagelint/InvalidConfig",
        "this harness loads the block's config first, as the CLI does, and stops at one that cannot be used; the fixtures in tests/fixtures/stagelint/InvalidConfig run the language server's tolerant discovery",
    ),
];

/// Rules that, besides themselves, need other rules enabled to show their Example.
const ALSO_ENABLED: &[(&str, &[&str], &str)] = &[(
    "stagelint/UnusedSuppression",
    &["sm/UnknownField"],
    "a suppression of a rule that is turned off is never reported as unused",
)];

const FILE_EXTENSIONS: [&str; 6] = [".md", ".yaml", ".yml", ".json", ".toml", ".ts"];

/// The name used for a block that names no file.
const DEFAULT_FILE: &str = "stage.md";

/// A block's files by name.
type Files = BTreeMap<String, String>;

/// The first fenced block under `## <section>`, or `None` when the section has none.
fn fenced_block<'d>(doc: &'d str, section: &str) -> Result<Option<&'d str>, String> {
    let heading = format!("## {section}\n");
    let Some(at) = doc.find(&heading) else { return Ok(None) };
    let rest = &doc[at + heading.len()..];
    let rest = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
    let Some(open) = rest.lines().position(|line| line.starts_with("```")) else { return Ok(None) };
    let mut body_start = 0;
    for line in rest.split_inclusive('\n').take(open + 1) {
        body_start += line.len();
    }
    let body = &rest[body_start..];
    let mut len = 0;
    for line in body.split_inclusive('\n') {
        if line.trim_end() == "```" {
            return Ok(Some(&body[..len]));
        }
        len += line.len();
    }
    Err("the code block is never closed".into())
}

/// `# name.ext` at column 0: the file header convention described at the top.
fn file_header(line: &str) -> Option<&str> {
    let name = line.strip_prefix("# ").or_else(|| line.strip_prefix("// "))?;
    // Atomic workflows live under `.atomic/workflows/`, the one hidden directory a header may start with.
    let hidden = name.starts_with('.') && !name.starts_with(".atomic/");
    let plain = !name.is_empty() && !name.contains(char::is_whitespace) && !hidden;
    (plain && FILE_EXTENSIONS.iter().any(|ext| name.ends_with(ext) && name.len() > ext.len())).then_some(name)
}

/// Splits a block into its files.
fn split_files(block: &str) -> Result<Files, String> {
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
            if named {
                files.push((current, std::mem::take(&mut text)));
            } else if text.trim().is_empty() {
                text.clear();
            } else {
                return Err(format!("lines before the first `# {name}` belong to no named file"));
            }
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
    let mut map = Files::new();
    for (name, text) in files {
        if map.insert(name.clone(), text).is_some() {
            return Err(format!("`{name}` appears twice"));
        }
    }
    Ok(map)
}

/// The outcome of linting a set of files; the directory lives as long as the workspace.
struct Linted {
    _dir: tempfile::TempDir,
    workspace: Workspace,
    diagnostics: Vec<Diagnostic>,
}

impl Linted {
    fn reports(&self, code: &str) -> bool {
        self.diagnostics.iter().any(|d| d.code == code)
    }

    fn render(&self) -> String {
        common::render_full(&self.workspace, &self.diagnostics)
    }
}

/// Writes `files` into a fresh directory and checks it with `code` alone enabled (`None`: with
/// every rule at its default severity).
fn lint(files: &Files, code: Option<&str>) -> Result<Linted, String> {
    // Under the target directory, so no `sm.yaml` in a shared temp dir is taken for ours.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    let mut config = if files.contains_key("stagelint.toml") {
        Config::load(&dir.path().join("stagelint.toml")).map_err(|e| format!("the block's stagelint.toml: {e}"))?
    } else {
        Config::defaults(dir.path())
    };
    if let Some(code) = code {
        config = common::only(config, code);
        for (_, others, _) in ALSO_ENABLED.iter().filter(|(rule, ..)| *rule == code) {
            for other in *others {
                families::rule(other).ok_or(format!("ALSO_ENABLED names unknown `{other}`"))?;
                config.rules.insert(other.to_string(), stagelint::config::Level::On);
            }
        }
    }
    let (workspace, diagnostics) = common::check_with(&[dir.path().to_path_buf()], config);
    // A file the linter does not take for a stage or a state machine (say, a stage whose first
    // line is not `---`) would let every "does not report" check pass for nothing.
    let linted = files.keys().filter(|name| name.as_str() != "stagelint.toml").count();
    if workspace.files().len() != linted {
        let seen: Vec<&str> = workspace.files().iter().filter_map(|f| f.path.file_name()?.to_str()).collect();
        return Err(format!("only {seen:?} of these files are linted:\n{}", show(files)));
    }
    Ok(Linted { _dir: dir, workspace, diagnostics })
}

fn show(files: &Files) -> String {
    files.iter().map(|(name, text)| format!("--- {name}\n{text}")).collect()
}

/// The Example's files (`None` without a code block) and the fixed set: the Example's files
/// with those of Use instead put in place.
fn example_and_fix(rule: &RuleMeta) -> Result<(Option<Files>, Files), String> {
    let files = |section: &str| -> Result<Option<Files>, String> {
        let block = fenced_block(rule.doc, section).map_err(|e| format!("`## {section}`: {e}"))?;
        block.map(split_files).transpose().map_err(|e| format!("`## {section}`: {e}"))
    };
    let example = files("Example")?;
    let changed = files("Use instead")?.ok_or("`## Use instead` has no code block")?;
    if let Some(example) = &example
        && changed.contains_key(DEFAULT_FILE)
        && !example.contains_key(DEFAULT_FILE)
    {
        return Err(
            "`## Use instead` starts with an unnamed file, but `## Example` names its files; add `# <file>`".into()
        );
    }
    let mut fixed = example.clone().unwrap_or_default();
    fixed.extend(changed);
    fixed.retain(|_, text| !text.is_empty());
    Ok((example, fixed))
}

/// Checks one rule's doc; returns whether its Example ran.
fn check_doc(rule: &RuleMeta, problems: &mut Vec<String>) -> bool {
    let code = rule.code;
    let (example, fixed) = match example_and_fix(rule) {
        Ok(files) => files,
        Err(e) => {
            problems.push(e);
            return false;
        }
    };
    let mut example_ran = false;
    if !NO_RUNNABLE_EXAMPLE.iter().any(|(c, _)| *c == code) {
        match example.as_ref().ok_or("`## Example` has no code block".to_string()).and_then(|f| lint(f, Some(code))) {
            Ok(linted) if linted.reports(code) => example_ran = true,
            Ok(linted) => problems.push(format!(
                "the Example does not report it:\n{}{}",
                show(example.as_ref().expect("linted")),
                linted.render()
            )),
            Err(e) => problems.push(format!("Example: {e}")),
        }
    }
    match lint(&fixed, Some(code)) {
        Ok(linted) if linted.reports(code) => {
            problems.push(format!("Use instead still reports it:\n{}{}", show(&fixed), linted.render()))
        }
        Ok(_) => {}
        Err(e) => problems.push(format!("Use instead: {e}")),
    }
    example_ran
}

#[test]
fn examples_report_their_rule_and_fixes_do_not() {
    let listed = NO_RUNNABLE_EXAMPLE.iter().map(|(code, _)| *code).chain(ALSO_ENABLED.iter().map(|(code, ..)| *code));
    for code in listed {
        assert!(families::rule(code).is_some(), "an exception names unknown rule {code}");
    }
    let mut failures = Vec::new();
    let mut examples_run = 0;
    let total = families::all_rules().count();
    for rule in families::all_rules() {
        let mut problems = Vec::new();
        examples_run += usize::from(check_doc(rule, &mut problems));
        failures.extend(problems.into_iter().map(|p| format!("{}: {p}", rule.code)));
    }
    assert!(failures.is_empty(), "{} problem(s):\n\n{}", failures.len(), failures.join("\n\n"));
    assert_eq!(examples_run, total - NO_RUNNABLE_EXAMPLE.len(), "every Example but the listed exceptions runs");
}

#[test]
fn fixes_are_clean_under_every_rule() {
    let mut failures = Vec::new();
    for rule in families::all_rules() {
        let Ok((_, fixed)) = example_and_fix(rule) else {
            continue; // reported by the test above
        };
        match lint(&fixed, None) {
            Ok(mut linted) => {
                if !fixed.keys().any(|name| name.ends_with(".md")) {
                    linted.diagnostics.retain(|d| d.code != "sm/EntryStageMissing");
                }
                // Likewise a block of stage files without `sm.yaml` stands for stages of a
                // machine that is not shown.
                if !fixed.keys().any(|name| name.starts_with("sm.")) && rule.code != "sm/StageOutsideMachine" {
                    linted.diagnostics.retain(|d| d.code != "sm/StageOutsideMachine");
                }
                if !linted.diagnostics.is_empty() {
                    failures.push(format!(
                        "{}: Use instead is not clean:\n{}{}",
                        rule.code,
                        show(&fixed),
                        linted.render()
                    ));
                }
            }
            Err(e) => failures.push(format!("{}: Use instead: {e}", rule.code)),
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
        Ok(Some("a\nb\n"))
    );
    assert!(fenced_block("## Example\n```\na\n", "Example").is_err());
}

#[test]
fn a_block_config_applies_to_the_block() {
    let block = "# stagelint.toml\n[sm]\nplaceholder-dialect = \"dollar\"\n# plan.md\n---\nid: plan\nname: Plan\n\
                 allowedTools: [Read]\ncompletionTool: submit_plan\ncompletionSchema: { type: object }\n\
                 retryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 10\nresolutionPolicy: fail\n---\n\
                 Task: {{ctx.task}}. Call `submit_plan` when done.\n";
    let files = split_files(block).unwrap();
    let linted = lint(&files, Some("sm/PlaceholderDialect")).unwrap();
    assert!(linted.reports("sm/PlaceholderDialect"), "{}", linted.render());
    assert_eq!(linted.diagnostics.len(), 1, "only the rule under test runs: {}", linted.render());
}
