//! The real binary: exit codes, output formats, config handling, discovery.

use std::path::Path;
use std::process::{Command, Output};

fn stagelint(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stagelint"))
        .args(args)
        .current_dir(cwd)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .expect("binary runs")
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

const CLEAN_STAGE: &str = "---\nid: plan\nname: Plan\nallowedTools: [Read]\ncompletionTool: submit_plan\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\n---\n\nTask: {{ctx.task}}. Call submit_plan.\n";

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn clean_example_exits_zero() {
    let output = stagelint(&["check", "examples/code-review"], repo());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert_eq!(stdout(&output).trim(), "No findings (8 files checked).");
}

#[test]
fn broken_example_full_and_json_snapshots() {
    let output = stagelint(&["check", "examples/broken", "--color", "never"], repo());
    assert_eq!(output.status.code(), Some(1));
    insta::assert_snapshot!("broken_full", stdout(&output));
    let output = stagelint(&["check", "examples/broken", "--format", "json"], repo());
    assert_eq!(output.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    assert_eq!(json["version"], 1);
    insta::assert_json_snapshot!("broken_json", json);
}

#[test]
fn concise_format_is_one_line_per_finding() {
    let output = stagelint(&["check", "examples/broken/bad-entry", "--format", "concise"], repo());
    assert_eq!(
        stdout(&output),
        "examples/broken/bad-entry/sm.yaml:1:8: error[sm/EntryStageMissing] entry stage `strat` is not a stage of this state machine; did you mean `start`?\nFound 1 error (2 files checked).\n"
    );
}

#[test]
fn color_always_emits_ansi_and_never_does_not() {
    let colored = stagelint(&["check", "examples/broken/bad-entry", "--color", "always"], repo());
    assert!(stdout(&colored).contains("\u{1b}["));
    let plain = stagelint(&["check", "examples/broken/bad-entry", "--color", "never"], repo());
    assert!(!stdout(&plain).contains("\u{1b}["));
}

#[test]
fn a_file_named_alone_is_checked_with_its_state_machine() {
    let output = stagelint(&["check", "examples/broken/pipeline/execute.md", "--format", "concise"], repo());
    let text = stdout(&output);
    assert!(text.contains("sm/UpstreamFieldUnknown"), "{text}");
    assert!(text.contains("sm/JoinIsSibling"), "{text}");
    assert!(!text.contains("plan.md"), "only the named file is reported: {text}");
    assert!(text.ends_with("(1 file checked).\n"), "{text}");
}

#[test]
fn bad_config_is_exit_two_with_position() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "stagelint.toml", "[rules]\n\"sm/UnknownTol\" = \"off\"\n");
    write(dir.path(), "plan.md", CLEAN_STAGE);
    let output = stagelint(&["check", "."], dir.path());
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(err.contains("stagelint.toml:2:1"), "{err}");
    assert!(err.contains("did you mean `sm/UnknownTool`"), "{err}");

    write(dir.path(), "stagelint.toml", "[sm]\nplaceholder-dialect = \"handlebars\"\n");
    let output = stagelint(&["check", "."], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("stagelint.toml:2:23"), "{}", stderr(&output));

    write(dir.path(), "stagelint.toml", "[tool]\nregistered = []\n");
    let output = stagelint(&["check", "."], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("unknown field `tool`"), "{}", stderr(&output));
}

#[test]
fn missing_path_is_exit_two() {
    let output = stagelint(&["check", "does/not/exist"], repo());
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no such file or directory"));
}

#[test]
fn config_remaps_severity_turns_rules_off_and_per_file_ignores() {
    let dir = tempfile::tempdir().unwrap();
    let stage = CLEAN_STAGE.replace("[Read]", "[Read, Mystery]").replace("Call submit_plan.", "Done.");
    write(dir.path(), "a/plan.md", &stage);
    write(dir.path(), "legacy/plan.md", &stage);
    write(
        dir.path(),
        "stagelint.toml",
        "[rules]\n\"sm/UnknownTool\" = \"warning\"\n\"sm/CompletionToolNotMentioned\" = \"off\"\n\n[per-file-ignores]\n\"legacy/**\" = [\"sm\"]\n",
    );
    let output = stagelint(&["check", ".", "--format", "concise"], dir.path());
    assert_eq!(output.status.code(), Some(0), "warnings do not fail: {}", stdout(&output));
    assert_eq!(
        stdout(&output),
        "a/plan.md:4:22: warning[sm/UnknownTool] `Mystery` is not in the live tool set; the stage fails Init on unknown tool names\nFound 1 warning (2 files checked).\n"
    );
}

#[test]
fn registered_tools_replace_the_default_set() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "plan.md", &CLEAN_STAGE.replace("[Read]", "[Read, mcp__github__search]"));
    write(dir.path(), "stagelint.toml", "[tools]\nregistered = [\"Read\", \"mcp__github__search\"]\n");
    let output = stagelint(&["check", "."], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
}

#[test]
fn gitignore_is_honoured_and_stage_globs_add_files() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".gitignore", "generated/\n");
    write(dir.path(), "generated/plan.md", &CLEAN_STAGE.replace("turnCap: 5", "turnCap: 0"));
    // No stage key in the frontmatter: only the glob makes this a stage definition.
    write(dir.path(), "prompts/review.md", "---\nid: Review\n---\nbody\n");
    write(dir.path(), "notes/readme.md", "---\ntitle: not a stage\n---\n");
    write(dir.path(), "stagelint.toml", "[files]\nstages = [\"prompts/*.md\"]\n");
    let output = stagelint(&["check", ".", "--format", "concise"], dir.path());
    let text = stdout(&output);
    assert!(!text.contains("generated"), "{text}");
    assert!(!text.contains("notes"), "{text}");
    assert!(text.contains("prompts/review.md:2:5: error[sm/InvalidStageId]"), "{text}");
    assert!(text.contains("prompts/review.md:1:1: error[sm/MissingRequiredField]"), "{text}");
}

#[test]
fn rules_lists_every_code_and_explain_prints_the_doc() {
    let output = stagelint(&["rules"], repo());
    let text = stdout(&output);
    for rule in stagelint::families::all_rules() {
        assert!(text.contains(rule.code), "{} missing from `stagelint rules`", rule.code);
    }
    let output = stagelint(&["explain", "sm/StageJoinDangling"], repo());
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout(&output).starts_with("# sm/StageJoinDangling"));
    assert!(stdout(&output).contains("## Why is this bad?"));
    let output = stagelint(&["explain", "sm/StageJoinDangle"], repo());
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("did you mean `sm/StageJoinDangling`"));
}

#[test]
fn unreadable_files_are_findings_not_crashes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("latin1.md"), b"---\nname: Caf\xe9\n---\n").unwrap();
    std::fs::write(dir.path().join("blob.md"), b"\x00\x01binary").unwrap();
    let output = stagelint(&["check", ".", "--format", "concise"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(text.contains("latin1.md:2:10: error[stagelint/IoError] file is not valid UTF-8"), "{text}");
    assert!(text.contains("blob.md:1:1: error[stagelint/IoError] file looks binary"), "{text}");
}
