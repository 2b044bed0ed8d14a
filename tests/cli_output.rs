//! Every command's output when it cannot be written (issue 32): a full device is
//! `cannot write output` with exit code 1; a closed pipe (`| head`) ends the command quietly with
//! exit code 0 (the language server: 1, the client is gone); never a panic.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{repo, write};

/// Where a command's standard output goes.
#[derive(Clone, Copy, Debug)]
enum Sink {
    /// `/dev/full`: every write fails with "No space left on device".
    Full,
    /// A pipe whose reading end is closed before the command starts: every write fails with
    /// "Broken pipe", as after `| head` has read its lines.
    Closed,
}

/// A command to run: its arguments, its directory, and what it reads on standard input.
struct Case {
    args: Vec<String>,
    cwd: PathBuf,
    stdin: Vec<u8>,
}

fn case(args: &[&str], cwd: &Path) -> Case {
    Case { args: args.iter().map(|a| a.to_string()).collect(), cwd: cwd.to_path_buf(), stdin: Vec::new() }
}

fn run(case: &Case, sink: Sink) -> Output {
    let stdout = match sink {
        Sink::Full => Stdio::from(std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full")),
        Sink::Closed => {
            let (reader, writer) = std::io::pipe().expect("a pipe");
            drop(reader);
            Stdio::from(writer)
        }
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_stagelint"))
        .args(&case.args)
        .current_dir(&case.cwd)
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    let mut stdin = child.stdin.take().expect("stdin");
    // The command may stop before reading it all (a server whose output failed).
    let _ = std::io::Write::write_all(&mut stdin, &case.stdin);
    drop(stdin);
    child.wait_with_output().expect("output")
}

const STAGE: &str = "---\nid: plan\nname: Plan\nallowedTools: [Read, Grpe]\ncompletionTool: submit_plan\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry_later\n---\n\nTask: {{ctx.task}}. Call submit_plan.\n";

/// The LSP `initialize` request, framed.
fn initialize() -> Vec<u8> {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#;
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// Every command that writes to standard output, in each of its output modes. `dir` holds a
/// broken stage with fixes (safe and unsafe) and an exchange to import.
fn cases(dir: &Path) -> Vec<Case> {
    let repo = repo();
    let exchanges = repo.join("tests/exchanges/anthropic.jsonl");
    let exchanges = exchanges.to_str().expect("UTF-8 path");
    let mut cases = vec![
        case(&["check", "examples/broken"], repo),
        case(&["check", "examples/broken", "--format", "concise"], repo),
        case(&["check", "examples/broken", "--format", "json"], repo),
        case(&["check", "examples/broken", "--format", "sarif"], repo),
        case(&["check", "examples/broken", "--format", "github"], repo),
        case(&["check", "examples/broken", "--statistics"], repo),
        case(&["check", "examples/broken", "--show-fixes"], repo),
        case(&["check", "examples/code-review"], repo),
        case(&["check", "--diff", "--unsafe-fixes", "plan.md"], dir),
        case(&["rules"], repo),
        case(&["explain"], repo),
        case(&["explain", "sm/UnknownTool"], repo),
        case(&["explain", "stagejoindangling"], repo),
        case(&["explain", "sm"], repo),
        case(&["explain", "decisions"], repo),
        case(&["explain", "versions"], repo),
        case(&["completions", "bash"], repo),
        case(&["completions", "zsh"], repo),
        case(&["completions", "fish"], repo),
        case(&["completions", "elvish"], repo),
        case(&["completions", "powershell"], repo),
        case(&["dry-run", "examples/code-review"], repo),
        case(&["dry-run", "examples/code-review", "--format", "json"], repo),
        // A stage of a state machine runs its machine's cassette.
        case(&["dry-run", "examples/code-review/plan.md"], repo),
        case(&["dry-run", "examples/climpt/.agent/fixer"], repo),
        case(&["dry-run", "examples/climpt/.agent/fixer", "--format", "json"], repo),
        // Nothing can run: the JSON stream still ends with its summary.
        case(&["dry-run", "examples/broken/bad-entry", "--format", "json"], repo),
        case(&["cassette", "import", exchanges, "--stage", "plan"], dir),
        case(&["cassette", "import", exchanges, "--stage", "plan", "--format", "json"], dir),
        case(&["--help"], repo),
        case(&["--version"], repo),
        case(&["check", "--help"], repo),
        case(&["help", "dry-run"], repo),
    ];
    let mut stdin = case(&["check", "-", "--stdin-filename", "plan.md", "--fix"], dir);
    stdin.stdin = STAGE.as_bytes().to_vec();
    cases.push(stdin);
    let mut lsp = case(&["lsp"], repo);
    lsp.stdin = initialize();
    cases.push(lsp);
    cases
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "plan.md", STAGE);
    dir
}

fn described(case: &Case, output: &Output) -> String {
    format!(
        "stagelint {}: exit {:?}\n{}",
        case.args.join(" "),
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn a_full_device_is_an_error_with_exit_code_1() {
    let dir = workspace();
    let mut all = cases(dir.path());
    // `init` writes its config, then says so on standard output.
    let init = tempfile::tempdir().expect("temp dir");
    all.push(case(&["init"], init.path()));
    for case in &all {
        let output = run(case, Sink::Full);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{}", described(case, &output));
        assert!(
            stderr.contains("stagelint: cannot write output: No space left on device"),
            "{}",
            described(case, &output)
        );
        assert!(!stderr.contains("panicked"), "{}", described(case, &output));
    }
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let dir = workspace();
    let mut all = cases(dir.path());
    let init = tempfile::tempdir().expect("temp dir");
    all.push(case(&["init"], init.path()));
    for case in &all {
        let output = run(case, Sink::Closed);
        let stderr = String::from_utf8_lossy(&output.stderr);
        // The language server's client is gone: exit code 1, as when it leaves without `exit`.
        let expected = if case.args[0] == "lsp" { 1 } else { 0 };
        assert_eq!(output.status.code(), Some(expected), "{}", described(case, &output));
        for noise in ["panicked", "cannot write", "Broken pipe", "os error"] {
            assert!(!stderr.contains(noise), "{noise}: {}", described(case, &output));
        }
    }
    assert!(init.path().join("stagelint.toml").is_file(), "init wrote its config before saying so");
}

/// A report file is written through `--output`: a device or pipe named itself is written to
/// (a full one is the same error), a link to one is refused, and neither is removed.
#[cfg(unix)]
#[test]
fn an_output_file_that_is_a_device_or_pipe_is_written_to_not_replaced() {
    let dir = workspace();
    std::os::unix::fs::symlink("/dev/full", dir.path().join("report")).expect("symlink");
    let output = common::stagelint(&["check", "plan.md", "-o", "report"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    let stderr = common::stderr(&output);
    assert!(stderr.starts_with("stagelint: cannot write report: a link to a device or pipe"), "{stderr}");
    assert!(std::fs::symlink_metadata(dir.path().join("report")).expect("still there").is_symlink());

    // A FIFO made by the user (`-o` into another program): its reader gets the report.
    let fifo = dir.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
    let reader = std::thread::spawn({
        let fifo = fifo.clone();
        move || std::fs::read_to_string(fifo).expect("read the FIFO")
    });
    let output = common::stagelint(&["check", "plan.md", "-o", "fifo", "--format", "concise"], dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", common::stderr(&output));
    assert!(reader.join().expect("reader").contains("plan.md:4:22: error[sm/UnknownTool]"));
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo).expect("still there").file_type().is_fifo());
}
