//! `stagelint dry-run --all` through the real binary, on `examples/`: a line per cassette and
//! a total, every format (JUnit read back by a JUnit reader, SARIF against the official
//! schema, GitHub annotations on cassette lines), the coverage of the stages, exit codes. Every
//! engine of `runtime::ENGINES` joins the sweep: `examples/climpt`'s flow cassette is replayed
//! by the climpt engine and `examples/lastlight`'s workflow cassette by the Last Light engine,
//! beside the stage cassettes.

mod common;

use common::{assert_valid_sarif, copy_dir, repo, sarif_validator, stagelint, stderr, stdout};
use serde_json::json;

fn all(args: &[&str]) -> std::process::Output {
    let mut full = vec!["dry-run", "--all"];
    full.extend_from_slice(args);
    stagelint(&full, &repo().join("examples"))
}

#[test]
fn a_line_per_cassette_and_a_total() {
    let output = all(&["--color", "never"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().take(6).collect();
    assert_eq!(
        lines,
        [
            "✗ broken/dry-run/plan.cassette.yaml: stage plan · expectations 1/2 · drift 1 · unused 0 · mismatches 3",
            "✗ broken/dry-run/typo.cassette.yaml: not replayed: unknown key `expectd` in a turn: the runtime never reads it; did you mean `expect`?",
            "✓ climpt/.agent/fixer/agent.cassette.yaml: agent fixer · expectations 11/11 · drift 0 · unused 0 · mismatches 0",
            "✓ code-review/failing-lint.cassette.yaml: machine code-review · expectations 4/4 · drift 0 · unused 0 · mismatches 0",
            "✓ code-review/sm.cassette.yaml: machine code-review · expectations 26/26 · drift 0 · unused 0 · mismatches 0",
            "✓ lastlight/workflows/cassettes/build.cassette.yaml: workflow build · expectations 6/6 · drift 0 · unused 0 · mismatches 0",
        ]
    );
    // The findings where they are, as `check` shows them.
    assert!(text.contains("error[cassette/ExpectationFailed]: expected tool c1 (denied)"), "{text}");
    assert!(text.contains("┌─ broken/dry-run/plan.cassette.yaml:16:19"), "{text}");
    assert!(
        text.ends_with(
            "Total: 6 cassettes, 5 replayed, 4 passed · expectations 48/49 · drift 1 · unused turns 0 · mismatches 4\n"
        ),
        "{text}"
    );
    // A clean directory passes.
    let clean = stagelint(&["dry-run", "--all", "examples/code-review"], repo());
    assert_eq!(clean.status.code(), Some(0), "{}", stdout(&clean));
    assert!(stdout(&clean).ends_with(
        "Total: 2 cassettes, 2 replayed, 2 passed · expectations 30/30 · drift 0 · unused turns 0 · mismatches 0\n"
    ));
}

#[test]
fn json_lists_each_cassette_with_its_counts_findings_and_coverage() {
    let output = all(&["--format", "json", "--coverage"]);
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(report["version"], 1);
    let cassettes = report["cassettes"].as_array().unwrap();
    assert_eq!(cassettes.len(), 6);
    let plan = &cassettes[0];
    assert_eq!(plan["path"], "broken/dry-run/plan.cassette.yaml");
    assert_eq!(plan["engine"], "stages");
    assert_eq!(plan["title"], "stage plan");
    assert_eq!(plan["expectations"], serde_json::json!({"passed": 1, "failed": 1, "unchecked": 0}));
    assert_eq!(
        (plan["drift"].as_u64(), plan["mismatches"].as_u64(), plan["passed"].as_bool()),
        (Some(1), Some(3), Some(false))
    );
    assert_eq!(plan["findings"][0]["code"], "cassette/ToolFakeMissing");
    assert_eq!(plan["findings"][0]["range"]["start"], serde_json::json!({"line": 15, "column": 25}));
    assert_eq!(cassettes[1]["replayed"], false);
    // The climpt agent's flow cassette, replayed by the climpt engine.
    let climpt = &cassettes[2];
    assert_eq!(
        (&climpt["path"], &climpt["engine"], &climpt["title"], &climpt["replayed"], &climpt["passed"]),
        (
            &json!("climpt/.agent/fixer/agent.cassette.yaml"),
            &json!("climpt"),
            &json!("agent fixer"),
            &json!(true),
            &json!(true)
        )
    );
    assert_eq!(climpt["expectations"], json!({"passed": 11, "failed": 0, "unchecked": 0}));
    // The Last Light workflow's cassette, replayed by the Last Light engine (no special case:
    // the engine registry finds it).
    let lastlight = &cassettes[5];
    assert_eq!(
        (&lastlight["path"], &lastlight["engine"], &lastlight["title"], &lastlight["replayed"], &lastlight["passed"]),
        (
            &json!("lastlight/workflows/cassettes/build.cassette.yaml"),
            &json!("lastlight"),
            &json!("workflow build"),
            &json!(true),
            &json!(true)
        )
    );
    assert_eq!(lastlight["expectations"], json!({"passed": 6, "failed": 0, "unchecked": 0}));
    assert_eq!(
        report["total"],
        serde_json::json!({"cassettes": 6, "replayed": 5, "passed": 4, "expectations_passed": 48, "expectations_failed": 1, "drift": 1, "unused": 0, "mismatches": 4})
    );
    let stages = &report["coverage"][0];
    assert_eq!(stages["engine"], "stages");
    let review = stages["parts"].as_array().unwrap().iter().find(|p| p["path"] == "code-review/execute.md").unwrap();
    let hits = |group: &str, name: &str| {
        review["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["group"] == group && i["name"] == name)
            .map(|i| i["hits"].clone())
    };
    assert_eq!(hits("completion channel", "completion"), Some(2.into()));
    assert_eq!(hits("completion channel", "turnCap"), Some(0.into()));
    assert_eq!(hits("Next", "→ review"), Some(1.into()), "the join ran in one of the two machine runs");
    assert_eq!(hits("Assert", "fail"), Some(0.into()));
}

#[test]
fn coverage_names_what_each_stage_took_and_what_none_did() {
    let output = stagelint(&["dry-run", "--all", "--coverage", "examples/code-review"], repo());
    let text = stdout(&output);
    let coverage = &text[text.find("Coverage (stages)").expect("a coverage section")..];
    assert!(coverage.starts_with("Coverage (stages): 25 of 57 ways taken (43 %)\n"), "{coverage}");
    assert!(
        coverage.contains(
            "  stage lint  examples/code-review/lint.md:2\n    completion channel: completion 2 · not taken: parseFailure, plainText, otherTool, batchRejected, turnCap\n    Assert: ok 1, fail 1 · not taken: retry, skip\n"
        ),
        "{coverage}"
    );
    assert!(coverage.contains("    Next: → test 2, → lint 2, → review 1\n"), "{coverage}");
    // Coverage goes with the formats that can hold it.
    let output = stagelint(&["dry-run", "--all", "--coverage", "--format", "junit", "examples"], repo());
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--coverage is printed with --format full or json"));
}

#[test]
fn junit_has_one_test_case_per_cassette_and_a_junit_reader_reads_it() {
    let output = all(&["--format", "junit"]);
    assert_eq!(output.status.code(), Some(1));
    let suites = junit_parser::from_reader(std::io::Cursor::new(output.stdout)).expect("JUnit XML");
    assert_eq!((suites.tests, suites.failures, suites.errors), (6, 1, 1));
    let cases = &suites.suites[0].cases;
    let names: Vec<&str> = cases.iter().map(|c| c.original_name.as_str()).collect();
    assert_eq!(
        names,
        [
            "broken/dry-run/plan.cassette.yaml",
            "broken/dry-run/typo.cassette.yaml",
            "climpt/.agent/fixer/agent.cassette.yaml",
            "code-review/failing-lint.cassette.yaml",
            "code-review/sm.cassette.yaml",
            "lastlight/workflows/cassettes/build.cassette.yaml"
        ]
    );
    let classes: Vec<Option<&str>> = cases.iter().map(|c| c.classname.as_deref()).collect();
    assert_eq!(
        classes,
        [
            Some("stagelint.stages"),
            Some("stagelint.stages"),
            Some("stagelint.climpt"),
            Some("stagelint.stages"),
            Some("stagelint.stages"),
            Some("stagelint.lastlight")
        ]
    );
    let failure = cases[0].status.failure_as_ref();
    assert_eq!(failure.failure_type, "cassette/ToolFakeMissing");
    assert!(
        failure.text.contains("broken/dry-run/plan.cassette.yaml:16:19: error[cassette/ExpectationFailed]"),
        "{}",
        failure.text
    );
    let error = cases[1].status.error_as_ref();
    assert_eq!(error.error_type, "not replayed");
    assert!(error.message.contains("unknown key `expectd`"), "{}", error.message);
    assert!(cases[2..].iter().all(|c| c.status.is_success()));
}

#[test]
fn sarif_and_github_annotations_sit_on_the_cassette_lines() {
    let output = all(&["--format", "sarif"]);
    assert_eq!(output.status.code(), Some(1));
    let sarif: serde_json::Value = serde_json::from_slice(&output.stdout).expect("SARIF");
    assert_valid_sarif(&sarif_validator(), &sarif);
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 6);
    let located: Vec<(&str, u64)> = results
        .iter()
        .map(|r| {
            let at = &r["locations"][0]["physicalLocation"];
            (at["artifactLocation"]["uri"].as_str().unwrap(), at["region"]["startLine"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(located[1], ("broken/dry-run/plan.cassette.yaml", 16));
    let output = all(&["--format", "github"]);
    let text = stdout(&output);
    assert_eq!(text.lines().count(), 6, "{text}");
    assert!(
        text.contains("::error file=broken/dry-run/plan.cassette.yaml,line=16,col=19,endLine=16,endColumn=60,title=cassette/ExpectationFailed::"),
        "{text}"
    );
}

/// Files instead of a directory (the pre-commit hook names the staged files): the cassettes a
/// change to each can break, whichever engine replays them.
#[test]
fn files_replay_the_cassettes_they_can_break() {
    let lines = |args: &[&str]| {
        let mut full = vec!["dry-run", "--all", "--color", "never"];
        full.extend_from_slice(args);
        let output = stagelint(&full, repo());
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        stdout(&output).lines().map(|l| l.split(':').next().unwrap().to_string()).collect::<Vec<_>>()
    };
    // A stage: the machine cassettes that replay it.
    assert_eq!(
        lines(&["examples/code-review/plan.md"]),
        ["✓ examples/code-review/failing-lint.cassette.yaml", "✓ examples/code-review/sm.cassette.yaml", "Total"]
    );
    // A climpt agent's registry, and a prompt file deep under it: the agent's flow cassette.
    let agent = ["✓ examples/climpt/.agent/fixer/agent.cassette.yaml", "Total"];
    assert_eq!(lines(&["examples/climpt/.agent/fixer/steps_registry.json"]), agent);
    assert_eq!(lines(&["examples/climpt/.agent/fixer/prompts/steps/closure/issue/f_default.md"]), agent);
    assert_eq!(lines(&["examples/climpt/.agent/fixer/schemas/fixer.schema.json"]), agent);
    // A Last Light workflow: its cassettes.
    let workflow = ["✓ examples/lastlight/workflows/cassettes/build.cassette.yaml", "Total"];
    assert_eq!(lines(&["examples/lastlight/workflows/build.yaml"]), workflow);
    // A prompt a phase names, and a skill one stages (found at the repository's skills/, above
    // workflows/): the cassettes of the workflows reading them.
    assert_eq!(lines(&["examples/lastlight/workflows/prompts/review.md"]), workflow);
    assert_eq!(lines(&["examples/lastlight/skills/planning/SKILL.md"]), workflow);
    // A cassette itself, named twice, and a file nothing replays.
    let cassette = "examples/code-review/sm.cassette.yaml";
    assert_eq!(lines(&[cassette, cassette]), ["✓ examples/code-review/sm.cassette.yaml", "Total"]);
    assert_eq!(lines(&["README.md"]), ["Total"]);
}

#[test]
fn usage_errors() {
    let output = stagelint(&["dry-run", "--all", "examples/no-such-dir"], repo());
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no such file or directory"), "{}", stderr(&output));
    let output = stagelint(&["dry-run", "examples/code-review", "--format", "junit"], repo());
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("add --all"), "{}", stderr(&output));
    let output = stagelint(&["dry-run", "--coverage", "examples/code-review"], repo());
    assert_eq!(output.status.code(), Some(2));
}

/// A prompt or skill that no workflow names replays nothing; one named by another workflow
/// replays only that workflow's cassettes.
#[test]
fn a_last_light_prompt_replays_only_the_workflows_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let src = repo().join("examples/lastlight");
    copy_dir(&src, dir.path());
    std::fs::write(dir.path().join("workflows/prompts/unused.md"), "Nobody reads {{taskId}}.\n").unwrap();
    std::fs::create_dir_all(dir.path().join("skills/idle")).unwrap();
    std::fs::write(dir.path().join("skills/idle/SKILL.md"), "---\nname: idle\ndescription: unused\n---\nBody.\n")
        .unwrap();
    for unused in ["workflows/prompts/unused.md", "skills/idle/SKILL.md"] {
        let output = stagelint(&["dry-run", "--all", "--color", "never", unused], dir.path());
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(stdout(&output).lines().next().unwrap_or_default().split(':').next(), Some("Total"), "{unused}");
    }
    let output = stagelint(&["dry-run", "--all", "--color", "never", "workflows/prompts/plan.md"], dir.path());
    assert!(stdout(&output).starts_with("✓ workflows/cassettes/build.cassette.yaml"), "{}", stdout(&output));
}

/// A config that cannot be used fails the sweep with a finding on itself in every format (as
/// `check` reports it), and the cassettes it governs are left out, not replayed with defaults.
#[test]
fn a_broken_config_is_a_finding_not_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo().join("examples/code-review"), dir.path());
    std::fs::write(dir.path().join("stagelint.toml"), "[check]\nbogus = 1\n").unwrap();
    let run = |format: &str| {
        let output = stagelint(&["dry-run", "--all", "--color", "never", "--format", format, "."], dir.path());
        assert_eq!(output.status.code(), Some(1), "{format}: {}", stderr(&output));
        stdout(&output)
    };
    let full = run("full");
    assert!(full.contains("error[stagelint/InvalidConfig]: invalid config: unknown table `[check]`"), "{full}");
    assert!(
        full.ends_with(
            "Total: 0 cassettes, 0 replayed, 0 passed · expectations 0/0 · drift 0 · unused turns 0 · mismatches 0\n"
        ),
        "{full}"
    );
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    assert_eq!(json["findings"][0]["code"], json!("stagelint/InvalidConfig"));
    assert_eq!(json["cassettes"], json!([]));
    let junit = run("junit");
    let suites = junit_parser::from_reader(std::io::Cursor::new(junit.as_bytes())).unwrap();
    let case = &suites.suites[0].cases[0];
    assert_eq!((case.original_name.as_str(), case.classname.as_deref()), ("stagelint.toml", Some("stagelint.config")));
    assert!(case.status.is_error(), "{junit}");
    let sarif: serde_json::Value = serde_json::from_str(&run("sarif")).unwrap();
    assert_valid_sarif(&sarif_validator(), &sarif);
    assert_eq!(sarif["runs"][0]["results"][0]["ruleId"], json!("stagelint/InvalidConfig"));
}
