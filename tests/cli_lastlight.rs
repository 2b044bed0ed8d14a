//! The real binary on Last Light workflows: `stagelint dry-run WORKFLOW`, `stagelint render
//! WORKFLOW --phase NAME`, and `stagelint check` replaying workflow cassettes; exit codes,
//! formats and the one message each kind of bad input gets.

mod common;

use common::{repo, stagelint, stderr, stdout, write};

const BUILD: &str = "examples/lastlight/workflows/build.yaml";

#[test]
fn the_example_dry_run_passes_and_shows_its_prompts() {
    let output = stagelint(&["dry-run", BUILD, "--color", "never"], repo());
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let text = stdout(&output);
    assert!(
        text.starts_with(
            "dry-run workflow build    cassette examples/lastlight/workflows/cassettes/build.cassette.yaml\n"
        ),
        "{text}"
    );
    assert!(text.contains("  │ # Plan issue #⟦42⟧ in ⟦acme⟧/⟦widgets⟧\n"), "substitutions are marked: {text}");
    assert!(text.contains("more lines (--show-prompts shows them)"), "{text}");
    assert!(text.ends_with("Result: expectations 6/6 ✓ · drift 0 · mismatches 0\n"), "{text}");
    let full = stdout(&stagelint(&["dry-run", BUILD, "--show-prompts"], repo()));
    assert!(!full.contains("more lines"), "{full}");
    assert!(full.contains("  │ Write the plan to `⟦.lastlight/issue-42⟧/plan.md` (⟦interactive⟧ run).\n"), "{full}");
}

#[test]
fn the_json_stream_holds_each_prompt_exactly_and_ends_with_the_summary() {
    let output = stagelint(&["dry-run", BUILD, "--format", "json"], repo());
    assert_eq!(output.status.code(), Some(0));
    let events: Vec<serde_json::Value> =
        stdout(&output).lines().map(|l| serde_json::from_str(l).expect("one JSON object per line")).collect();
    assert!(events.iter().enumerate().all(|(i, e)| e["version"] == 1 && e["seq"] == i + 1));
    let plan = events.iter().find(|e| e["event"] == "PromptRendered" && e["label"] == "plan").expect("plan's prompt");
    let prompt = plan["prompt"].as_str().expect("text");
    assert!(
        prompt.starts_with("# Plan issue #42 in acme/widgets\n\n**Add a --dry-run flag**\n"),
        "exact, unmarked: {prompt}"
    );
    let first = &plan["substitutions"][0];
    assert_eq!(
        (first["tag"].as_str(), first["start"].as_u64(), first["end"].as_u64()),
        (Some("{{issueNumber}}"), Some(14), Some(16))
    );
    let last = events.last().expect("events");
    assert_eq!(last["event"], "DryRunSummary");
    assert_eq!(last["exitCode"], 0);
    assert_eq!(last["expectations"]["passed"], 6);
}

/// A copy of the example to change.
fn example() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("dir");
    for path in [
        "stagelint.toml",
        "skills/planning/SKILL.md",
        "workflows/build.yaml",
        "workflows/cron-build.yaml",
        "workflows/cassettes/build.cassette.yaml",
        "workflows/prompts/plan.md",
        "workflows/prompts/implement.md",
        "workflows/prompts/review.md",
        "workflows/prompts/fix.md",
        "workflows/prompts/pr.md",
    ] {
        let text = std::fs::read_to_string(repo().join("examples/lastlight").join(path)).expect("example file");
        write(dir.path(), path, &text);
    }
    std::fs::create_dir(dir.path().join(".git")).expect("git");
    dir
}

#[test]
fn a_failed_expectation_exits_1_and_check_reports_it_on_the_cassette() {
    let dir = example();
    let cassette = dir.path().join("workflows/cassettes/build.cassette.yaml");
    let text =
        std::fs::read_to_string(&cassette).expect("read").replace("cycles: { review: 1 }", "cycles: { review: 2 }");
    std::fs::write(&cassette, text).expect("write");
    let output = stagelint(&["dry-run", "workflows/build.yaml", "--color", "never"], dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(
        stdout(&output).contains("error[cassette/ExpectationFailed]: expected 2 fix cycles of `review`, got 1"),
        "{}",
        stdout(&output)
    );
    let output = stagelint(&["check", ".", "--format", "concise"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output).lines().next(),
        Some(
            "workflows/cassettes/build.cassette.yaml:42:21: error[cassette/ExpectationFailed] expected 2 fix cycles of `review`, got 1"
        )
    );
    // The cassette named alone is replayed with its workflow.
    let output = stagelint(&["check", "workflows/cassettes/build.cassette.yaml", "--format", "concise"], dir.path());
    assert!(stdout(&output).contains("error[cassette/ExpectationFailed]"), "{}", stdout(&output));
}

#[test]
fn bad_input_gets_one_message_and_exit_code_2() {
    let dir = example();
    write(dir.path(), "other.cassette.yaml", "cassette: 1\nworkflow: deploy\n");
    let other = stagelint(
        &["dry-run", "workflows/build.yaml", "--cassette", "other.cassette.yaml", "--color", "never"],
        dir.path(),
    );
    assert_eq!(other.status.code(), Some(2));
    assert!(
        stdout(&other).contains("Result: not run: the cassette replays another workflow (an authoring error, exit 2)"),
        "{}",
        stdout(&other)
    );
    assert!(
        stdout(&other)
            .contains("error[cassette/UnknownWorkflow]: this cassette replays workflow `deploy`, not `build`"),
        "{}",
        stdout(&other)
    );
    // A cron runs nothing itself.
    let cron = stagelint(&["dry-run", "workflows/cron-build.yaml"], dir.path());
    assert_eq!(cron.status.code(), Some(2));
    assert!(
        stderr(&cron).contains("a cron schedule runs no phases itself; dry-run the workflow it starts (`build`)"),
        "{}",
        stderr(&cron)
    );
    // No cassette by the convention.
    std::fs::remove_file(dir.path().join("workflows/cassettes/build.cassette.yaml")).expect("rm");
    let none = stagelint(&["dry-run", "workflows/build.yaml"], dir.path());
    assert_eq!(none.status.code(), Some(2));
    assert!(
        stderr(&none)
            .contains("no cassette: pass --cassette, or add `cassettes/build.cassette.yaml` beside the workflow"),
        "{}",
        stderr(&none)
    );
    // A workflow that does not load.
    let build = dir.path().join("workflows/build.yaml");
    let text = std::fs::read_to_string(&build).expect("read").replace("name: build\n", "name: build\nphases: 3\n");
    std::fs::write(&build, text).expect("write");
    write(dir.path(), "workflows/cassettes/build.cassette.yaml", "cassette: 1\nworkflow: build\n");
    let broken = stagelint(&["dry-run", "workflows/build.yaml", "--color", "never"], dir.path());
    assert_eq!(broken.status.code(), Some(2), "{}", stdout(&broken));
    assert!(
        stdout(&broken).contains("Result: not run: the workflow does not load: the engine's loader rejects it"),
        "{}",
        stdout(&broken)
    );
}

#[test]
fn render_prints_a_phase_prompt_from_the_given_context() {
    let output = stagelint(
        &[
            "render",
            BUILD,
            "--phase",
            "plan",
            "--var",
            "issueNumber=42",
            "--var",
            "owner=acme",
            "--var",
            "issueTitle=Add a flag",
        ],
        repo(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.starts_with(
            "# phase plan of workflow build · examples/lastlight/workflows/prompts/plan.md · Last Light 0.25.6 · current engine\n"
        ),
        "{text}"
    );
    assert!(text.contains("# Plan issue #⟦42⟧ in ⟦acme⟧/⟦∅ repo⟧\n"), "missing values are shown: {text}");
    assert!(
        text.contains("# sent empty, no value in the context (give them with --var key=value):\n  {{repo}} (line 1)\n"),
        "{text}"
    );
    let exact = stdout(&stagelint(&["render", BUILD, "--phase", "plan", "--var", "issueNumber=42", "--exact"], repo()));
    assert!(exact.starts_with("# Plan issue #42 in /\n"), "{exact}");
    let json = stdout(&stagelint(&["render", BUILD, "--phase", "review", "--format", "json"], repo()));
    let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(value["source"], "examples/lastlight/workflows/prompts/review.md");
    assert_eq!(value["missing"], serde_json::json!(["{{branch}}", "{{issueDir}}"]));
    // A loop's first review is rendered with `fixCycle` 0, as the engine renders it.
    assert!(!value["prompt"].as_str().unwrap_or("").contains("re-review"), "{value}");
    // JSON values: `false` is false, so the block is dropped.
    let dropped =
        stdout(&stagelint(&["render", BUILD, "--phase", "plan", "--var", "issueTitle=false", "--exact"], repo()));
    assert!(!dropped.contains("**"), "{dropped}");
}

#[test]
fn render_refuses_what_it_cannot_render_with_one_message() {
    let unknown = stagelint(&["render", BUILD, "--phase", "plna"], repo());
    assert_eq!(unknown.status.code(), Some(2));
    assert_eq!(
        stderr(&unknown),
        "stagelint: examples/lastlight/workflows/build.yaml: workflow `build` has no phase `plna`; did you mean `plan`? (its phases: `phase_0`, `plan`, `implement`, `review`, `pr`)\n"
    );
    let context = stagelint(&["render", BUILD, "--phase", "phase_0"], repo());
    assert_eq!(context.status.code(), Some(2));
    assert!(stderr(&context).contains("is a context phase: it runs no agent and sends no prompt"));
    let var = stagelint(&["render", BUILD, "--phase", "plan", "--var", "issueNumber"], repo());
    assert_eq!(var.status.code(), Some(2));
    assert!(stderr(&var).contains("`issueNumber` has no `=`: write key=value"), "{}", stderr(&var));
    let not_a_workflow = stagelint(&["render", "examples/lastlight/stagelint.toml", "--phase", "plan"], repo());
    assert_eq!(not_a_workflow.status.code(), Some(2));
    assert!(stderr(&not_a_workflow).contains("not a Last Light workflow"), "{}", stderr(&not_a_workflow));
}
