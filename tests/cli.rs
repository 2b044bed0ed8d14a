//! The real binary: exit codes, output formats, config handling, discovery.

mod common;

use common::{assert_valid_sarif, repo, sarif_validator, stagelint, stagelint_stdin, stderr, stdout, write};

const CLEAN_STAGE: &str = "---\nid: plan\nname: Plan\nallowedTools: [Read]\ncompletionTool: submit_plan\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\n---\n\nTask: {{ctx.task}}. Call submit_plan.\n";

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
        "examples/broken/bad-entry/sm.yaml:1:8: error[sm/EntryStageMissing] entry stage `strat` is not a stage of this state machine; did you mean `start`?\nFound 1 error (2 files checked). 1 fixable with `--fix --unsafe-fixes`.\n"
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
    assert!(text.ends_with("(1 file checked). 1 fixable with `--fix` (1 more with `--unsafe-fixes`).\n"), "{text}");
}

#[test]
fn a_cassette_named_alone_replays_the_loose_stage_beside_it() {
    // Found by an outside audit: the cassette alone was `cassette/UnknownStage`, though its
    // stage sat beside it (a pre-commit hook names only the changed cassette).
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "plan.md", CLEAN_STAGE);
    let cassette = "cassette: 1\nstage: plan\nctx: { task: t }\nattempts:\n  - attempt: 1\n    turns:\n      - response:\n          stop: tool_use\n          content:\n            - toolCall: { id: c1, name: submit_plan, args: {} }\n        expect: [ { branch: completion, call: c1 } ]\n";
    write(dir.path(), "plan.cassette.yaml", cassette);
    // The stage beside it is context: the cassette's own findings only.
    let output = stagelint(&["check", "plan.cassette.yaml", "--format", "concise"], dir.path());
    assert_eq!(stdout(&output), "No findings (1 file checked).\n");
    // A wrong id is still reported, against the stages of the directory.
    write(dir.path(), "plan.cassette.yaml", &cassette.replace("stage: plan", "stage: plam"));
    let output = stagelint(&["check", "plan.cassette.yaml", "--format", "concise"], dir.path());
    assert!(
        stdout(&output).contains("cassette/UnknownStage] no stage `plam` in this directory; did you mean `plan`?"),
        "{}",
        stdout(&output)
    );
}

/// Issue 32: a config that cannot be used is a finding on itself at each problem's position
/// (`stagelint/InvalidConfig`, an error: exit code 1); the files it governs are not checked.
#[test]
fn a_bad_config_is_a_finding_at_its_position() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "stagelint.toml", "[rules]\n\"sm/UnknownTol\" = \"off\"\n");
    write(dir.path(), "plan.md", &CLEAN_STAGE.replace("[Read]", "[Grpe]"));
    let output = stagelint(&["check", ".", "--format", "concise"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        "stagelint.toml:2:1: error[stagelint/InvalidConfig] invalid config: unknown rule code or family `sm/UnknownTol`; did you mean `sm/UnknownTool`?\nFound 1 error (1 file checked).\n"
    );
    write(dir.path(), "stagelint.toml", "[sm]\nplaceholder-dialect = \"handlebars\"\n");
    let output = stagelint(&["check", ".", "--format", "concise"], dir.path());
    assert!(stdout(&output).starts_with("stagelint.toml:2:23: error[stagelint/InvalidConfig]"), "{}", stdout(&output));
    // `--select` does not hide it: the files it governs went unchecked.
    let output = stagelint(&["check", ".", "--format", "concise", "--select", "sm"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).contains("[stagelint/InvalidConfig]"), "{}", stdout(&output));
    // A config named with --config is an argument: a usage error, exit code 2.
    let output = stagelint(&["check", ".", "--config", "stagelint.toml"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("stagelint.toml:2:23: invalid config"), "{}", stderr(&output));
}

/// Issue 16: every problem of a config in one run, each at its own position; issue 32: every
/// broken config of the tree, and the rest of the tree checked.
#[test]
fn every_config_problem_is_reported_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let config = "[tool]\n[tools]\nregistred = []\n[sm]\nbackoffs = \"none\"\n[rules]\n\"sm/UnknownTol\" = \"loud\"\n";
    write(dir.path(), "stagelint.toml", config);
    write(dir.path(), "plan.md", CLEAN_STAGE);
    let output = stagelint(&["check", ".", "--format", "concise"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        "stagelint.toml:1:2: error[stagelint/InvalidConfig] invalid config: unknown table `[tool]`; did you mean `tools`?
stagelint.toml:3:1: error[stagelint/InvalidConfig] invalid config: unknown key `registred` in `[tools]`; did you mean `registered`?
stagelint.toml:5:12: error[stagelint/InvalidConfig] invalid config: `backoffs` in `[sm]` takes a list of strings, not a string
stagelint.toml:7:1: error[stagelint/InvalidConfig] invalid config: unknown rule code or family `sm/UnknownTol`; did you mean `sm/UnknownTool`?
stagelint.toml:7:19: error[stagelint/InvalidConfig] invalid config: unknown level `loud`; expected \"error\", \"warning\", \"info\", \"hint\", \"on\" or \"off\" (`warn` is `warning`)
Found 5 errors (1 file checked).
"
    );
    // Two broken configs in the tree: both reported, with --fix too, which fixes nothing they
    // govern; a sound config beside them governs files that are checked and fixed.
    write(dir.path(), "stagelint.toml", "[tols]\n");
    write(dir.path(), "b/stagelint.toml", "[rules]\nnope = \"off\"\n");
    let plan = CLEAN_STAGE.replace("Task:", "Task: ${ctx.task}");
    write(dir.path(), "b/plan.md", &plan);
    write(dir.path(), "c/stagelint.toml", "");
    write(dir.path(), "c/plan.md", &plan);
    for args in [&["check", "--format", "concise"][..], &["check", "--fix", "--format", "concise"]] {
        let output = stagelint(args, dir.path());
        assert_eq!(output.status.code(), Some(1));
        let out = stdout(&output);
        assert!(
            out.contains("stagelint.toml:1:2: error[stagelint/InvalidConfig] invalid config: unknown table `[tols]`"),
            "{out}"
        );
        assert!(out.contains("b/stagelint.toml:2:1: error[stagelint/InvalidConfig] invalid config: unknown rule code or family `nope`"), "{out}");
        assert!(!out.contains("b/plan.md"), "{out}");
    }
    assert_eq!(std::fs::read_to_string(dir.path().join("b/plan.md")).unwrap(), plan, "nothing fixed");
    assert!(std::fs::read_to_string(dir.path().join("c/plan.md")).unwrap().contains("{{ctx.task}}"), "fixed");
}

/// A broken config is reported with its path relative to the current directory, also when
/// nothing is there to check, and also when it sits above the paths named.
#[test]
fn a_bad_config_without_definitions_is_reported_with_a_relative_path() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "stagelint.toml", "[tols]\n");
    let output = stagelint(&["check", "--format", "concise"], dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let out = stdout(&output);
    assert!(out.starts_with("stagelint.toml:1:2: error[stagelint/InvalidConfig] invalid config"), "{out}");
    assert!(!out.contains(&dir.path().display().to_string()), "the path is relative: {out}");
    write(dir.path(), "sub/plan.md", CLEAN_STAGE);
    let output = stagelint(&["check", "--format", "concise", "sub/plan.md"], dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(stdout(&output).starts_with("stagelint.toml:1:2: error[stagelint/InvalidConfig]"), "{}", stdout(&output));
    // A broken config further down the tree, with nothing to check beside it, too.
    std::fs::remove_file(dir.path().join("stagelint.toml")).unwrap();
    write(dir.path(), "sub/stagelint.toml", "[rules]\nnope = \"off\"\n");
    let output = stagelint(&["check", ".", "--format", "concise"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).contains("sub/stagelint.toml:2:1: error[stagelint/InvalidConfig]"), "{}", stdout(&output));
}

#[test]
fn an_empty_select_is_a_usage_error() {
    let output = stagelint(&["check", "examples/broken/bad-entry", "--select", ""], repo());
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--select: no rule code or family given"), "{}", stderr(&output));
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

/// `explain decisions` prints the page, and every rule code it names exists.
#[test]
fn explain_decisions_names_real_rules() {
    let output = stagelint(&["explain", "decisions"], repo());
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(text.starts_with("# Where the upstream documents disagree"), "{text}");
    let codes: Vec<&str> = text
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.starts_with("sm/") || s.starts_with("steps/") || s.starts_with("lastlight/"))
        .collect();
    assert!(codes.len() >= 8, "{codes:?}");
    for code in codes {
        assert!(stagelint::families::rule(code).is_some(), "decisions.md names `{code}`, which is no rule");
    }
}

#[test]
fn explain_a_code_without_its_family_names_the_full_codes() {
    // Issue 16: a name that one family has is explained, in any case.
    for name in ["SkipIfGrammar", "skipifgrammar", "LASTLIGHT/skipIfGrammar"] {
        let output = stagelint(&["explain", name], repo());
        assert_eq!(output.status.code(), Some(0), "{name}: {}", stderr(&output));
        let text = stdout(&output);
        let note = format!("`{name}` is reported as `lastlight/SkipIfGrammar`.\n\n# lastlight/SkipIfGrammar\n");
        assert!(text.starts_with(&note), "{text}");
    }
    // A name several families have lists them, and exits 2.
    let output = stagelint(&["explain", "unknownkey"], repo());
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(text.starts_with("stagelint: `unknownkey` names 3 rules; give the family too"), "{text}");
    for code in ["steps/UnknownKey", "lastlight/UnknownKey", "cassette/UnknownKey"] {
        assert!(text.contains(&format!("\n    {code} ")), "{code}: {text}");
    }
    // Aliases too, in any case; an unknown name keeps its did-you-mean.
    let output = stagelint(&["explain", "r-a6"], repo());
    assert!(stdout(&output).contains("# steps/"), "{}", stdout(&output));
    let output = stagelint(&["explain", "sm/UnknownTol"], repo());
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("did you mean `sm/UnknownTool`?"), "{}", stderr(&output));
    // The same hint for `--select`/`--ignore` and `[rules]`.
    let output = stagelint(&["check", "--select", "SkipIfGrammar", "."], repo());
    assert!(
        stderr(&output).contains("`SkipIfGrammar`; did you mean `lastlight/SkipIfGrammar`?"),
        "{}",
        stderr(&output)
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("stagelint.toml"), "[rules]\nNestedIf = \"off\"\n").unwrap();
    let output = stagelint(&["check", "."], dir.path());
    assert!(stdout(&output).contains("`NestedIf`; did you mean `lastlight/NestedIf`?"), "{}", stdout(&output));
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

/// Whether a file is one stagelint lints is decided before its bytes are judged: a TypeScript
/// test helper with a NUL in a template literal (Last Light's
/// `packages/workflow-engine/src/test-support/fakes.ts`) or a binary YAML file outside any
/// workflows directory is not reported, while an atomic workflow or a Last Light workflow with
/// a NUL byte still is.
#[test]
fn only_files_stagelint_lints_are_reported_unreadable() {
    let dir = tempfile::tempdir().unwrap();
    let helper = dir.path().join("packages/workflow-engine/src/test-support");
    std::fs::create_dir_all(&helper).unwrap();
    std::fs::write(helper.join("fakes.ts"), b"export const nul = `a\x00b`;\nexport const raw = `\x00`;\n").unwrap();
    std::fs::write(dir.path().join("logo.yaml"), b"\x00\x01\x02").unwrap();
    let workflow = dir.path().join(".atomic/workflows/review/claude");
    std::fs::create_dir_all(&workflow).unwrap();
    std::fs::write(
        workflow.join("index.ts"),
        b"import { defineWorkflow } from \"@bastani/atomic/workflows\";\n// \x00\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("workflows")).unwrap();
    std::fs::write(dir.path().join("workflows/build.yaml"), b"name: build\nphases:\n  - name: a\x00\n").unwrap();
    let output = stagelint(&["check", ".", "--format", "concise"], dir.path());
    let text = stdout(&output);
    assert!(!text.contains("fakes.ts"), "{text}");
    assert!(!text.contains("logo.yaml"), "{text}");
    assert!(text.contains("index.ts:2:4: error[stagelint/IoError] file looks binary"), "{text}");
    assert!(text.contains("build.yaml:3:12: error[stagelint/IoError] file looks binary"), "{text}");
}

/// A small broken workspace: a non-ASCII tool name before a typo on one line (UTF-16 columns),
/// a dollar placeholder (a safe fix), comments to keep, and a file whose name has a comma with
/// an unused suppression (a safe fix).
const PLAN: &str = "---\n# The planning stage.\nid: plan\nname: Plan\nallowedTools: [\"Réad😀\", Grpe]\ncompletionTool: submit_plan\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }  # keep\nturnCap: 5\nresolutionPolicy: retry-later\n---\n\nTask: ${ctx.task}. Call submit_plan.\n";
const ODD: &str = "---\nid: odd\nname: Odd\nallowedTools: [Read]\ncompletionTool: submit_odd\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later # stagelint: ignore[sm/UnknownTool]\n---\n\nTask: {{ctx.task}}. Call submit_odd.\n";

fn broken_workspace() -> tempfile::TempDir {
    common::temp_files(&[("plan.md", PLAN), ("sub/odd,name.md", ODD)])
}

#[test]
fn sarif_matches_the_official_schema_with_one_rule_per_code() {
    let validator = sarif_validator();
    assert!(!validator.is_valid(&serde_json::json!({"version": "2.1.0"})), "the validator rejects a log without runs");
    let dir = broken_workspace();
    let output = stagelint(&["check", "--format", "sarif"], dir.path());
    assert_eq!(output.status.code(), Some(1), "errors still fail without --exit-zero");
    let mut sarif: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    assert_valid_sarif(&validator, &sarif);
    let run = &mut sarif["runs"][0];
    assert_eq!(run["columnKind"], "utf16CodeUnits");
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let codes: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let all: Vec<&str> = stagelint::families::all_rules().map(|r| r.code).collect();
    assert_eq!(codes, all, "one descriptor per code, in registry order");
    for rule in rules {
        for key in ["name", "shortDescription", "fullDescription", "helpUri", "defaultConfiguration"] {
            assert!(rule.get(key).is_some(), "{} lacks {key}", rule["id"]);
        }
    }
    for result in run["results"].as_array().unwrap() {
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], result["ruleId"]);
    }
    // `Grpe` follows an emoji: character column 25, UTF-16 column 26.
    let grpe = &run["results"][1]["locations"][0]["physicalLocation"]["region"];
    assert_eq!((grpe["startColumn"].as_u64(), grpe["endColumn"].as_u64()), (Some(26), Some(30)));
    // Redact what changes whenever a rule is added, and the machine's paths.
    run["tool"]["driver"]["rules"] = serde_json::json!("[one descriptor per code]");
    for result in run["results"].as_array_mut().unwrap() {
        result["ruleIndex"] = serde_json::json!("[index]");
    }
    run["originalUriBaseIds"]["%SRCROOT%"]["uri"] = serde_json::json!("file:///[cwd]/");
    run["tool"]["driver"]["version"] = serde_json::json!("[version]");
    run["tool"]["driver"]["semanticVersion"] = serde_json::json!("[version]");
    insta::assert_json_snapshot!("small_sarif", sarif);
}

#[test]
fn sarif_of_every_broken_example_matches_the_schema() {
    let validator = sarif_validator();
    let output = stagelint(&["check", "examples/broken", "--format", "sarif", "--exit-zero"], repo());
    assert_eq!(output.status.code(), Some(0));
    let sarif: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    assert_valid_sarif(&validator, &sarif);
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(results.iter().any(|r| r.get("relatedLocations").is_some()), "related locations are exercised");
    assert!(results.iter().any(|r| r.get("fixes").is_some()), "fixes are exercised");
    let mut fingerprints: Vec<&str> =
        results.iter().map(|r| r["partialFingerprints"]["stagelint/v1"].as_str().unwrap()).collect();
    fingerprints.sort();
    fingerprints.dedup();
    assert_eq!(fingerprints.len(), results.len(), "fingerprints are unique within a run");
}

#[test]
fn github_annotations_escape_messages_and_properties() {
    let dir = broken_workspace();
    let output = stagelint(&["check", "--format", "github"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(text.contains("::warning file=sub/odd%2Cname.md,line=9,col=51,"), "{text}");
    assert!(text.lines().all(|line| line.starts_with("::")), "one annotation per line: {text}");
    insta::assert_snapshot!("small_github", text);
}

#[test]
fn output_file_exit_zero_and_usage_errors() {
    let dir = broken_workspace();
    let output = stagelint(&["check", "--output", "report.txt", "--exit-zero"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(output.stdout.is_empty());
    let report = std::fs::read_to_string(dir.path().join("report.txt")).unwrap();
    assert!(report.contains("error[sm/UnknownTool]"), "{report}");
    assert!(!report.contains("\u{1b}["), "a file gets no color under auto");
    assert!(
        report.ends_with(
            "Found 2 errors, 2 warnings (2 files checked). 2 fixable with `--fix` (1 more with `--unsafe-fixes`).\n"
        ),
        "{report}"
    );

    let output = stagelint(&["check", "--format", "json", "-o", "out.json"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out.json")).unwrap()).unwrap();
    assert_eq!(json["version"], 1);

    let output = stagelint(&["check", "--exit-zero", "--select", "sm/UnknownTol"], dir.path());
    assert_eq!(output.status.code(), Some(2), "usage errors stay 2 under --exit-zero");
    assert!(stderr(&output).contains("did you mean `sm/UnknownTool`?"), "{}", stderr(&output));
}

#[test]
fn select_and_ignore_apply_after_the_config() {
    let dir = broken_workspace();
    let concise = |args: &[&str]| {
        let mut all = vec!["check", "--format", "concise"];
        all.extend_from_slice(args);
        stdout(&stagelint(&all, dir.path()))
    };
    let text = concise(&["--select", "sm/UnknownTool"]);
    assert_eq!(text.lines().filter(|l| l.contains("[sm/UnknownTool]")).count(), 2, "{text}");
    assert!(text.ends_with("Found 2 errors (2 files checked). 1 fixable with `--fix --unsafe-fixes`.\n"), "{text}");
    let text = concise(&["--select", "sm", "--ignore", "sm/UnknownTool,sm/PlaceholderDialect"]);
    assert!(text.starts_with("No findings"), "{text}");
    let text = concise(&["--ignore", "sm/UnknownTool", "--ignore", "stagelint"]);
    assert_eq!(
        text.lines().next().unwrap_or(""),
        "plan.md:13:7: warning[sm/PlaceholderDialect] `${ctx.task}` is the dollar dialect, but this project renders the mustache dialect, so it reaches the model verbatim"
    );
    // The config turns a rule off; --select cannot bring it back.
    write(dir.path(), "stagelint.toml", "[rules]\n\"sm/UnknownTool\" = \"off\"\n");
    let text = concise(&["--select", "sm/UnknownTool"]);
    assert!(text.starts_with("No findings"), "{text}");
    // An alias selects its rule.
    let rule = stagelint::families::all_rules().find(|r| !r.aliases.is_empty()).unwrap();
    let output = stagelint(&["check", "--select", &format!("{}/{}", rule.family(), rule.aliases[0])], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let output = stagelint(&["check", "--ignore", "smm"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--ignore: unknown rule code or family `smm`; did you mean `sm`?"));
}

#[test]
fn version_and_completions() {
    let output = stagelint(&["--version"], repo());
    assert_eq!(stdout(&output), format!("stagelint {}\n", env!("CARGO_PKG_VERSION")));
    for shell in ["bash", "zsh", "fish"] {
        let output = stagelint(&["completions", shell], repo());
        assert_eq!(output.status.code(), Some(0));
        let script = stdout(&output);
        assert!(script.contains("stagelint") && script.contains("exit-zero"), "{shell}: {script}");
    }
    let output = stagelint(&["completions", "tcsh"], repo());
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn dry_run_findings_follow_the_color_flag() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "plan.md", CLEAN_STAGE);
    write(dir.path(), "plan.cassette.yaml", "cassette: 1\nstage: plan\nturns: []\n");
    let args = ["dry-run", "plan.md", "--color"];
    let colored = stagelint(&[&args[..], &["always"]].concat(), dir.path());
    assert!(stdout(&colored).contains("\u{1b}["), "{}", stdout(&colored));
    let plain = stagelint(&[&args[..], &["never"]].concat(), dir.path());
    assert!(!stdout(&plain).contains("\u{1b}[") && stdout(&plain).contains("turns: []"), "{}", stdout(&plain));
}

#[test]
fn line_numbers_count_lone_cr_and_not_unicode_separators() {
    // As editors (and the language server) count lines: `\r` alone ends one, U+2028 and form
    // feed do not.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "sm.yaml", "entry: plan\ncontext:\n  required: [task]\n");
    let stage = CLEAN_STAGE.replace("Task: {{ctx.task}}.", "Intro\u{2028}x\u{c}y\ralone\rTask: {{ctx.zz}}.");
    write(dir.path(), "plan.md", &stage);
    let output = stagelint(&["check", ".", "--format", "concise"], dir.path());
    let text = stdout(&output);
    assert!(text.contains("plan.md:14:13: error[sm/StageCtxUnresolved]"), "{text}");
}

/// Issue 32: `--help` names every system stagelint reads, not only stud-cli's.
#[test]
fn help_names_every_system() {
    let help = stdout(&stagelint(&["--help"], repo()));
    for system in ["stud-cli state machines", "climpt agents", "Last Light workflows", "@bastani/atomic workflows"] {
        assert!(help.contains(system), "{system}: {help}");
    }
    // dry-run replays climpt agents too.
    assert!(help.contains("a whole state machine, a climpt agent or a Last Light workflow"), "{help}");
    let dry_run = stdout(&stagelint(&["dry-run", "--help"], repo()));
    assert!(dry_run.contains("a climpt agent (its directory or"), "{dry_run}");
}

/// Issue 32: a severity has one name wherever stagelint names it (`full` said `note` and `help`
/// for info and hint, through its rendering library); SARIF and GitHub keep their own fixed
/// vocabularies (`note`, `notice`), which the README lists.
#[test]
fn each_severity_has_one_name_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let stage = CLEAN_STAGE
        .replace("name: Plan\n", "name: Plan\ncolour: red\n")
        .replace("resolutionPolicy: retry-later\n", "resolutionPolicy: retry-later\nnext: { nextStages: [execute] }\n");
    write(dir.path(), "plan.md", &stage);
    let (info, hint) = ("sm/StageOutsideMachine", "sm/UnknownField");
    let strip_ansi = |text: &str| {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find('\u{1b}') {
            out.push_str(&rest[..at]);
            rest = rest[at..].find('m').map_or("", |end| &rest[at + end + 1..]);
        }
        out + rest
    };
    for color in ["never", "always"] {
        let full = strip_ansi(&stdout(&stagelint(&["check", "--color", color], dir.path())));
        assert!(full.contains(&format!("\ninfo[{info}]: ")) || full.starts_with(&format!("info[{info}]: ")), "{full}");
        assert!(full.starts_with(&format!("hint[{hint}]: ")), "{full}");
        assert!(!full.contains("note[") && !full.contains("help["), "{full}");
    }
    let concise = stdout(&stagelint(&["check", "--format", "concise"], dir.path()));
    assert!(
        concise.contains(&format!(": info[{info}] ")) && concise.contains(&format!(": hint[{hint}] ")),
        "{concise}"
    );
    assert!(concise.ends_with("Found 1 info, 1 hint (1 file checked).\n"), "{concise}");
    let json: serde_json::Value =
        serde_json::from_slice(&stagelint(&["check", "--format", "json"], dir.path()).stdout).unwrap();
    let severities: Vec<&str> =
        json["diagnostics"].as_array().unwrap().iter().map(|d| d["severity"].as_str().unwrap()).collect();
    assert_eq!(severities, ["hint", "info"]);
    assert_eq!((json["summary"]["infos"].as_u64(), json["summary"]["hints"].as_u64()), (Some(1), Some(1)));
    let rules = stdout(&stagelint(&["rules"], dir.path()));
    let level = |code: &str| rules.lines().find(|l| l.starts_with(code)).unwrap().split_whitespace().nth(1).unwrap();
    assert_eq!((level(info), level(hint)), ("info", "hint"));
    let explained = stdout(&stagelint(&["explain", info], dir.path()));
    assert!(explained.contains("\nDefault severity: info\n"), "{explained}");
}

/// With no release configured, the run says which Last Light release was assumed and what was
/// read: in the `full` report, and on standard error in every other format (issue 32: `concise`
/// had it among the findings on standard output); machine outputs also carry it as data (the
/// JSON `notes`, a SARIF notification, a GitHub `::notice`). A configured release needs no note.
#[test]
fn the_assumed_last_light_release_is_named_in_every_output() {
    let fixture = "tests/fixtures/lastlight/TemplateSyntax/bad-seed-detected";
    let said = format!(
        "Last Light release 0.1 assumed (from `{fixture}/src/workflows/templates.ts`: no server `package.json` beside `workflows/`; the engine's sources show nothing of seed (not `phaseOutputs?.[key]` in `src/workflows/templates.ts`)); set `[lastlight] release` in stagelint.toml to choose"
    );
    let note = format!("note: {said}\n");
    let full = stdout(&stagelint(&["check", fixture, "--color", "never"], repo()));
    assert!(full.contains(&note), "{full}");
    for format in ["concise", "json", "sarif", "github"] {
        let output = stagelint(&["check", fixture, "--format", format], repo());
        assert!(!stdout(&output).contains("note:"), "{format}: {}", stdout(&output));
        assert_eq!(stderr(&output), note, "{format}");
        if format == "concise" {
            assert!(stdout(&output).contains("lastlight/TemplateSyntax"), "the seed engine's rules applied");
        }
    }
    let statistics = stagelint(&["check", fixture, "--statistics"], repo());
    assert!(!stdout(&statistics).contains("note:") && stderr(&statistics) == note, "{}", stdout(&statistics));
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&stagelint(&["check", fixture, "--format", "json"], repo()))).unwrap();
    assert_eq!(json["notes"], serde_json::json!([{"family": "lastlight", "message": said}]));
    let sarif: serde_json::Value =
        serde_json::from_str(&stdout(&stagelint(&["check", fixture, "--format", "sarif"], repo()))).unwrap();
    let notification = &sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"][0];
    assert_eq!(notification["message"]["text"], said.as_str());
    assert_eq!(notification["level"], "note");
    let github = stdout(&stagelint(&["check", fixture, "--format", "github"], repo()));
    assert!(github.ends_with(&format!("::notice title=stagelint (lastlight)::{said}\n")), "{github}");
    // Nothing found around the workflows: the newest release, said so.
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "workflows/build.yaml", "name: build\nphases:\n  - name: plan\n    prompt: prompts/plan.md\n");
    write(dir.path(), "workflows/prompts/plan.md", "Plan {{issueTitle}}.\n");
    let default = stderr(&stagelint(&["check", ".", "--format", "concise"], dir.path()));
    assert!(default.contains("note: Last Light release 0.25.6 assumed, the newest stagelint models"), "{default}");

    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "stagelint.toml", "[lastlight]\nrelease = \"0.10\"\n");
    write(dir.path(), "workflows/build.yaml", "name: build\nphases:\n  - name: plan\n    prompt: prompts/plan.md\n");
    write(dir.path(), "workflows/prompts/plan.md", "Plan {{issueTitle}}.\n");
    let configured = stdout(&stagelint(&["check", ".", "--format", "concise"], dir.path()));
    assert_eq!(configured, "No findings (2 files checked).\n");
}

/// The human output says which atomic release each workflow was read as, and from what: the API
/// the file calls and the project's pin; `[atomic] sdk-version` needs no note; JSON carries the
/// notes as data (`notes`), never as a `note:` line.
#[test]
fn the_assumed_atomic_release_is_named_in_human_output() {
    // Notes go to standard error, apart from the findings a parser reads (issue 32).
    let concise = stderr(&stagelint(&["check", "examples/atomic", "--format", "concise"], repo()));
    assert!(
        concise.contains("note: atomic 0.9 assumed for `examples/atomic/.atomic/workflows/`, `examples/atomic/.atomic/workflows/lib/` (2 workflows), from the API they call and `package.json` `@bastani/atomic ^0.9.15`\n"),
        "{concise}"
    );
    assert!(concise.contains("note: atomic 0.5 assumed for `examples/atomic/legacy/.atomic/workflows/hello/claude/` (1 workflow), from the API they call and `package.json` `@bastani/atomic ^0.5.24`\n"), "{concise}");
    let json = stdout(&stagelint(&["check", "examples/atomic", "--format", "json"], repo()));
    assert!(!json.contains("note:"), "{json}");
    let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
    let notes: Vec<(&str, &str)> = parsed["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["family"].as_str().unwrap(), n["message"].as_str().unwrap()))
        .collect();
    assert!(
        notes.iter().any(|(f, m)| *f == "atomic" && m.starts_with("atomic 0.5 assumed for `examples/atomic/legacy/")),
        "{json}"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "stagelint.toml", "[atomic]\nsdk-version = \"0.9.15\"\n");
    let flow = "import { workflow } from \"@bastani/workflows\";\n\nexport default workflow({ description: \"Say hi.\", outputs: {}, run: async () => ({}) });\n";
    write(dir.path(), ".atomic/workflows/hi.ts", flow);
    let configured = stagelint(&["check", ".", "--format", "concise"], dir.path());
    assert!(!stderr(&configured).contains("note: atomic"), "{}", stderr(&configured));
    assert!(stdout(&configured).contains("No findings (1 file checked)"), "{}", stdout(&configured));
    std::fs::remove_file(dir.path().join("stagelint.toml")).unwrap();
    let unpinned = stderr(&stagelint(&["check", ".", "--format", "concise"], dir.path()));
    assert!(
        unpinned.contains(
            "note: atomic 0.9 assumed for `.atomic/workflows/` (1 workflow), from the API they call (no version pinned"
        ),
        "{unpinned}"
    );
}

/// A guarded read is not a typo because a similar name is declared (issue: `extra-variables =
/// ["checksState"]` made `{{#if baseChecksState}}…{{baseChecksState}}` two warnings).
#[test]
fn a_guarded_read_near_a_declared_variable_is_no_warning() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "stagelint.toml", "[lastlight]\nextra-variables = [\"checksState\"]\n");
    write(dir.path(), "workflows/merge.yaml", "name: merge\nphases:\n  - name: merge\n    prompt: prompts/merge.md\n");
    let prompt = "Checks: {{checksState}}. Base{{#if baseChecksState}} is **{{baseChecksState}}**{{/if}}.\n";
    write(dir.path(), "workflows/prompts/merge.md", prompt);
    let output = stdout(&stagelint(&["check", ".", "--format", "concise"], dir.path()));
    assert!(!output.contains("warning["), "{output}");
    assert_eq!(output.matches("lastlight/UnknownVariable").count(), 1, "one info on the {{#if}}: {output}");
}

/// The last line of a `dry-run --format json` stream, parsed.
fn last_event(output: &std::process::Output) -> serde_json::Value {
    let text = stdout(output);
    let last = text.lines().last().unwrap_or_else(|| panic!("an empty stream; stderr: {}", stderr(output)));
    serde_json::from_str(last).expect("a JSON line")
}

#[test]
fn every_json_dry_run_ends_with_a_summary_even_when_nothing_can_run() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "plan.md", CLEAN_STAGE);
    // No cassette at all: the summary carries the error, stderr the message, exit 2.
    let output = stagelint(&["dry-run", "plan.md", "--format", "json"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    let summary = last_event(&output);
    assert_eq!((summary["event"].as_str(), summary["exitCode"].as_u64()), (Some("DryRunSummary"), Some(2)));
    assert!(summary["error"].as_str().is_some_and(|e| e.contains("no cassette")), "{summary}");
    // The same expectation counts as every other summary.
    assert_eq!(summary["expectations"], serde_json::json!({"passed": 0, "failed": 0, "unchecked": 0}));
    assert!(stderr(&output).contains("no cassette"), "{}", stderr(&output));
    // A refused cassette (a machine cassette for a stage): the findings, then the summary.
    write(dir.path(), "plan.cassette.yaml", "cassette: 1\nstages:\n  plan:\n    attempts: []\n");
    let output = stagelint(&["dry-run", "plan.md", "--format", "json"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    let summary = last_event(&output);
    assert_eq!(summary["event"], "DryRunSummary");
    assert!(summary["refused"].as_str().is_some_and(|r| r.contains("machine cassette")), "{summary}");
    // A machine whose entry is no stage: `sm/EntryStageMissing`, not the cassette, in every format.
    write(dir.path(), "sm.yaml", "entry: fetch\n");
    write(dir.path(), "plan.cassette.yaml", "cassette: 1\nstage: plan\nattempts: []\n");
    let output = stagelint(&["dry-run", ".", "--format", "json"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(stdout(&output).contains(r#""code":"sm/EntryStageMissing""#), "{}", stdout(&output));
    assert!(last_event(&output)["refused"].is_string());
    let output = stagelint(&["dry-run", ".", "--color", "never"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    let text = stdout(&output);
    assert!(text.contains("error[sm/EntryStageMissing]") && !text.contains("cassette.yaml`"), "{text}");
}

/// Issue 32, item 3: `dry-run` of a stage of a state machine that has no cassette of its own
/// runs the machine from the machine cassette that records it, with the stage's lines marked;
/// a machine cassette named for such a stage does the same. A stage no cassette records says
/// where a recording could go.
#[test]
fn a_stage_of_a_machine_is_dry_run_through_its_machine_cassette() {
    let output = stagelint(&["dry-run", "examples/code-review/plan.md"], repo());
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let text = stdout(&output);
    assert!(
        text.starts_with(
            "dry-run machine code-review    cassette examples/code-review/sm.cassette.yaml\nfocus: stage plan"
        ),
        "{text}"
    );
    assert!(text.contains("\n▶ plan  Setup  ok") && text.contains("\n▶   t5   submit_plan(c5)"), "{text}");
    assert!(text.contains("\nexecute  Setup  ok") && !text.contains("▶ execute"), "{text}");
    let output = stagelint(&["dry-run", "examples/code-review/review.md", "--format", "json"], repo());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(last_event(&output)["focus"], serde_json::json!({"stage": "review"}));
    // Named explicitly, a machine cassette runs the stage's machine too.
    let args =
        ["dry-run", "examples/code-review/lint.md", "--cassette", "examples/code-review/failing-lint.cassette.yaml"];
    let output = stagelint(&args, repo());
    let text = stdout(&output);
    assert!(text.contains("focus: stage lint") && text.contains("failedSiblingId=lint"), "{text}");
    // No recording of the stage anywhere: the message names the machine cassette.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "sm.yaml", "entry: plan\n");
    write(dir.path(), "plan.md", CLEAN_STAGE);
    write(dir.path(), "sm.cassette.yaml", "cassette: 1\nstages:\n  other:\n    attempts: []\n");
    let output = stagelint(&["dry-run", "plan.md"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("under `stages.plan` in its state machine's `sm.cassette.yaml`"),
        "{}",
        stderr(&output)
    );
}

/// Bug 8 of issue 16: a UTF-8 byte order mark is no column of line 1 in any format (editors
/// hide it: `strat` is at 1:8 there), while spans and fixes still count its bytes.
#[test]
fn a_byte_order_mark_is_no_column_in_any_format() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "sm.yaml", "\u{feff}entry: strat\n");
    write(dir.path(), "start.md", &CLEAN_STAGE.replace("id: plan", "id: start"));
    let run = |format: &str| stdout(&stagelint(&["check", ".", "--color", "never", "--format", format], dir.path()));
    assert!(run("full").contains("┌─ sm.yaml:1:8\n"), "{}", run("full"));
    assert!(run("concise").starts_with("sm.yaml:1:8: error[sm/EntryStageMissing]"), "{}", run("concise"));
    assert!(
        run("github").starts_with("::error file=sm.yaml,line=1,col=8,endLine=1,endColumn=13,"),
        "{}",
        run("github")
    );
    let json: serde_json::Value = serde_json::from_str(&run("json")).expect("JSON");
    let range = serde_json::json!({"start": {"line": 1, "column": 8}, "end": {"line": 1, "column": 13}});
    assert_eq!(json["diagnostics"][0]["range"], range);
    assert_eq!(json["diagnostics"][0]["fix"]["edits"][0]["range"], range);
    let sarif: serde_json::Value = serde_json::from_str(&run("sarif")).expect("SARIF");
    let region = &sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"];
    assert_eq!((&region["startColumn"], &region["endColumn"]), (&serde_json::json!(8), &serde_json::json!(13)));
    // The fix replaces `strat`, not the bytes the mark takes.
    let output = stagelint(&["check", ".", "--fix", "--unsafe-fixes"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert_eq!(std::fs::read_to_string(dir.path().join("sm.yaml")).unwrap(), "\u{feff}entry: start\n");
}

/// Issue 16: `--output-format` is `--format` (ruff's spelling); `--output json` is a usage
/// error that names `--format json`, not a report written to a file named `json`.
/// Issue 19 (docs/security.md): a report file is created fresh; a symlink planted at its path
/// is replaced, not written through.
#[cfg(unix)]
#[test]
fn the_output_file_is_not_written_through_a_symlink() {
    let dir = broken_workspace();
    let victim = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(victim.path(), "precious").unwrap();
    std::os::unix::fs::symlink(victim.path(), dir.path().join("report.txt")).unwrap();
    let output = stagelint(&["check", "--output", "report.txt", "--exit-zero"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(victim.path()).unwrap(), "precious");
    let meta = std::fs::symlink_metadata(dir.path().join("report.txt")).unwrap();
    assert!(meta.file_type().is_file(), "the link was replaced by the report");
    assert!(std::fs::read_to_string(dir.path().join("report.txt")).unwrap().contains("error[sm/UnknownTool]"));
}

#[test]
fn output_format_is_an_alias_and_output_json_is_a_usage_error() {
    let dir = broken_workspace();
    let alias = stagelint(&["check", "--output-format", "concise"], dir.path());
    assert_eq!(stdout(&alias), stdout(&stagelint(&["check", "--format", "concise"], dir.path())));
    assert!(stdout(&alias).contains("plan.md:5:"), "{}", stdout(&alias));
    for format in ["json", "sarif", "Github", "concise", "full"] {
        let output = stagelint(&["check", "--output", format], dir.path());
        assert_eq!(output.status.code(), Some(2), "{format}");
        assert!(stderr(&output).contains(&format!("did you mean `--format {format}`?")), "{}", stderr(&output));
        assert!(!dir.path().join(format).exists(), "no file `{format}` written");
    }
    let output = stagelint(&["check", "-o", "./json", "--exit-zero"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(std::fs::read_to_string(dir.path().join("json")).unwrap().contains("error[sm/UnknownTool]"));
    let help = stdout(&stagelint(&["check", "--help"], dir.path()));
    assert!(help.contains("--output-format"), "{help}");
}

/// Issue 16: `explain` alone lists the topics and every rule by family, each topic works.
#[test]
fn explain_alone_lists_topics_and_rules_by_family() {
    let output = stagelint(&["explain"], repo());
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(text.starts_with("Topics (`stagelint explain TOPIC`):\n  dry-run "), "{text}");
    for topic in ["dry-run", "decisions", "configuration"] {
        assert!(text.contains(&format!("\n  {topic} ")), "{topic}: {text}");
        let page = stagelint(&["explain", topic], repo());
        assert_eq!(page.status.code(), Some(0), "{topic}");
        assert!(stdout(&page).starts_with("# "), "{topic}: {}", stdout(&page));
    }
    for family in stagelint::check::FAMILIES.iter().map(|f| f.name()).chain(["cassette"]) {
        assert!(text.contains(&format!("\n\n{family}\n")), "{family}: {text}");
    }
    for rule in stagelint::families::all_rules() {
        assert!(text.contains(&format!("\n  {} ", rule.code)), "{}: {text}", rule.code);
    }
}

/// A state machine for the standard-input tests: `plan` returns `summary` to `execute`.
fn machine_for_stdin() -> tempfile::TempDir {
    let plan = CLEAN_STAGE
        .replace(
            "completionSchema: { type: object }",
            "completionSchema: { type: object, properties: { summary: { type: string } } }",
        )
        .replace("resolutionPolicy: retry-later\n", "resolutionPolicy: retry-later\nnext:\n  nextStages: [execute]\n");
    let execute = CLEAN_STAGE
        .replace("id: plan\nname: Plan", "id: execute\nname: Execute")
        .replace("submit_plan", "submit_exec")
        .replace("Task: {{ctx.task}}.", "Do {{ctx.upstream[0].parsed.summary}}.");
    common::temp_files(&[
        ("sm.yaml", "entry: plan\ncontext:\n  required: [task]\n"),
        ("plan.md", &plan),
        ("execute.md", &execute),
    ])
}

/// Issue 16: `check - --stdin-filename PATH` (ALE, conform.nvim, efm) checks the text on
/// standard input as the file at PATH, with the rest of its state machine from disk; findings
/// name PATH. `--stdin-filename` alone reads standard input too.
#[test]
fn stdin_is_checked_as_the_named_file_with_its_machine_from_disk() {
    let dir = machine_for_stdin();
    assert_eq!(stdout(&stagelint(&["check", "--format", "concise"], dir.path())), "No findings (3 files checked).\n");
    let edited =
        std::fs::read_to_string(dir.path().join("execute.md")).unwrap().replace("parsed.summary", "parsed.summry");
    for args in [&["check", "-", "--stdin-filename", "execute.md"][..], &["check", "--stdin-filename", "execute.md"]] {
        let output = stagelint_stdin(&[args, &["--format", "concise"]].concat(), dir.path(), &edited);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(
            stdout(&output),
            "execute.md:12:29: warning[sm/UpstreamFieldUnknown] `summry` is not a property of `plan`'s completionSchema; did you mean `summary`?\nFound 1 warning (1 file checked). 1 fixable with `--fix --unsafe-fixes`.\n"
        );
    }
    // The machine's other files are context: a finding the stdin text causes in them is not
    // reported, and the JSON path is the named file's.
    let output =
        stagelint_stdin(&["check", "-", "--stdin-filename", "execute.md", "--format", "json"], dir.path(), &edited);
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(json["diagnostics"][0]["path"], "execute.md");
    // An absolute path as editors pass it, and a new file that is not on disk yet.
    let absolute = dir.path().join("draft.md");
    let draft = edited.replace("id: execute", "id: draft");
    let output = stagelint_stdin(
        &["check", "-", "--stdin-filename", absolute.to_str().unwrap(), "--format", "concise"],
        dir.path(),
        &draft,
    );
    let text = stdout(&output);
    assert!(
        text.starts_with(
            "draft.md:2:5: warning[sm/UnreachableStage] stage `draft` is never reached from the entry stage `plan`"
        ),
        "{text}"
    );
    assert!(!dir.path().join("draft.md").exists());
}

/// `--fix` with `-` writes the fixed text to standard output and the report to standard error
/// (as ruff does), and leaves the file on disk alone; `--diff` prints the diff.
#[test]
fn stdin_fix_writes_the_fixed_text_to_stdout() {
    let dir = machine_for_stdin();
    let on_disk = std::fs::read_to_string(dir.path().join("execute.md")).unwrap();
    let edited = on_disk.replace("Do {{ctx.upstream", "Do ${ctx.task} {{ctx.upstream");
    let output = stagelint_stdin(&["check", "-", "--stdin-filename", "execute.md", "--fix"], dir.path(), &edited);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), on_disk.replace("Do {{ctx.upstream", "Do {{ctx.task}} {{ctx.upstream"));
    let err = stderr(&output);
    assert!(
        err.contains("stagelint: applied 1 fix(es) to 1 file(s)") && err.contains("No findings (1 file checked)."),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("execute.md")).unwrap(), on_disk, "the file is not written");
    // Nothing to fix: the text comes back as it was.
    let output = stagelint_stdin(&["check", "-", "--stdin-filename", "execute.md", "--fix"], dir.path(), &on_disk);
    assert_eq!(stdout(&output), on_disk);
    let output = stagelint_stdin(&["check", "-", "--stdin-filename", "execute.md", "--diff"], dir.path(), &edited);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).contains("+Do {{ctx.task}} {{ctx.upstream"), "{}", stdout(&output));
}

#[test]
fn stdin_usage_errors() {
    let dir = machine_for_stdin();
    let output = stagelint_stdin(&["check", "-"], dir.path(), "");
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("give --stdin-filename PATH"), "{}", stderr(&output));
    let output = stagelint_stdin(&["check", "-", "plan.md", "--stdin-filename", "execute.md"], dir.path(), "");
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("`plan.md` would be checked too"), "{}", stderr(&output));
    let output = stagelint_stdin(&["check", "--stdin-filename", "."], dir.path(), "");
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("a directory, not a file"), "{}", stderr(&output));
}

/// Issue 16: a stage with a safe fix (a case-only tool name), an unsafe one (`Grpe`), a finding
/// without a fix, and a `# noqa` on the line of a finding.
const FIXABLE: &str = "---\nid: plan\nname: Plan\nallowedTools: [Webfetch, Grpe] # noqa\ncompletionTool: submit_plan\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\n---\n\nTask: {{ctx.tsak}}. Call submit_plan.\n";

#[test]
fn the_summary_counts_safe_and_unsafe_fixes_and_full_output_marks_them() {
    let dir = common::temp_files(&[("sm.yaml", "entry: plan\ncontext:\n  required: [task]\n"), ("plan.md", FIXABLE)]);
    let full = stagelint(&["check", "--select", "sm"], dir.path());
    let text = stdout(&full);
    assert!(text.contains("= safe fix: Replace with `WebFetch`\n"), "{text}");
    assert!(text.contains("= unsafe fix: Replace with `Grep` (applied with `--unsafe-fixes`)\n"), "{text}");
    assert!(
        text.ends_with("Found 3 errors (2 files checked). 1 fixable with `--fix` (2 more with `--unsafe-fixes`).\n"),
        "{text}"
    );
    let concise = stagelint(&["check", "--format", "concise", "--select", "sm/StageCtxUnresolved"], dir.path());
    assert!(
        stdout(&concise).ends_with("Found 1 error (2 files checked). 1 fixable with `--fix --unsafe-fixes`.\n"),
        "{}",
        stdout(&concise)
    );
}

#[test]
fn statistics_count_per_code_and_show_fixes_lists_them_per_file() {
    let dir = common::temp_files(&[("sm.yaml", "entry: plan\ncontext:\n  required: [task]\n"), ("plan.md", FIXABLE)]);
    let stats = stagelint(&["check", "--statistics"], dir.path());
    assert_eq!(stats.status.code(), Some(1));
    assert_eq!(
        stdout(&stats),
        "2  sm/UnknownTool                [*] An allowedTools entry is not in the live tool set\n\
         1  sm/StageCtxUnresolved         [-] A ctx placeholder names a field the state machine does not declare\n\
         1  stagelint/ForeignSuppression      Another tool's suppression comment where stagelint reads its own\n\
         Found 3 errors, 1 hint (2 files checked). 1 fixable with `--fix` (2 more with `--unsafe-fixes`).\n"
    );
    let json = stagelint(&["check", "--statistics", "--format", "json"], dir.path());
    let counts: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("JSON");
    assert_eq!(counts[0]["code"], "sm/UnknownTool");
    assert_eq!((&counts[0]["count"], &counts[0]["fix"]), (&serde_json::json!(2), &serde_json::json!("safe")));
    let sarif = stagelint(&["check", "--statistics", "--format", "sarif"], dir.path());
    assert_eq!(sarif.status.code(), Some(2), "{}", stderr(&sarif));

    let shown = stagelint(&["check", "--format", "concise", "--show-fixes"], dir.path());
    assert!(
        stdout(&shown).ends_with(
            "Fixes available (3):\n  plan.md:\n    4:16 sm/UnknownTool: Replace with `WebFetch`\n    4:26 sm/UnknownTool: Replace with `Grep` (unsafe: `--unsafe-fixes`)\n    12:13 sm/StageCtxUnresolved: Replace with `task` (unsafe: `--unsafe-fixes`)\n"
        ),
        "{}",
        stdout(&shown)
    );
    let fixed = stagelint(&["check", "--format", "concise", "--fix", "--show-fixes"], dir.path());
    assert!(
        stdout(&fixed).ends_with("Applied 1 fix:\n  plan.md:\n    1 × sm/UnknownTool: Replace with `WebFetch`\n"),
        "{}",
        stdout(&fixed)
    );
    assert!(std::fs::read_to_string(dir.path().join("plan.md")).unwrap().contains("[WebFetch, Grpe]"));
}

#[test]
fn a_noqa_on_a_reported_line_names_the_stagelint_comment() {
    let dir = common::temp_files(&[("sm.yaml", "entry: plan\ncontext:\n  required: [task]\n"), ("plan.md", FIXABLE)]);
    let output = stagelint(&["check", "--format", "concise", "--select", "stagelint,sm/UnknownTool"], dir.path());
    assert!(
        stdout(&output).contains("plan.md:4:32: hint[stagelint/ForeignSuppression] `# noqa` is another tool's suppression comment: stagelint does not read it, so `sm/UnknownTool` is still reported here; to suppress it write `# stagelint: ignore[sm/UnknownTool]`\n"),
        "{}",
        stdout(&output)
    );
    // A `# noqa` on a line stagelint has nothing to say about is that tool's business.
    let quiet =
        common::temp_files(&[("plan.md", &FIXABLE.replace(" # noqa", "").replace("turnCap: 5", "turnCap: 5 # noqa"))]);
    let output = stagelint(&["check", "--format", "concise", "--select", "stagelint"], quiet.path());
    assert!(!stdout(&output).contains("ForeignSuppression"), "{}", stdout(&output));
}

#[test]
fn a_foreign_comment_lists_the_codes_it_leaves_reported_in_file_order() {
    // The unbalanced `{{#if}}` (line 3) is found while its workflow is checked, before the
    // unknown variable (line 2): the message follows the file, not the order of the rules.
    let dir = common::temp_files(&[
        ("workflows/build.yaml", "name: build\nphases:\n  - name: plan\n    prompt: prompts/plan.md\n"),
        (
            "workflows/prompts/plan.md",
            "<!-- markdownlint-disable -->\nPlan for {{isueTitle}}.\n{{#if commentBody}}\nSaid: {{commentBody}}\n",
        ),
    ]);
    let output = stagelint(&["check", "--format", "concise"], dir.path());
    assert!(
        stdout(&output).contains("so `lastlight/UnknownVariable`, `lastlight/UnbalancedIf` is still reported here; to suppress it write `<!-- stagelint: ignore-file[lastlight/UnknownVariable, lastlight/UnbalancedIf] -->`"),
        "{}",
        stdout(&output)
    );
}

/// Issue 16 audit: a pre-commit hook names only the changed files. Two stages sharing an id
/// (`lint.md` and a Finder copy, which sorts first) show the clash whichever one is named,
/// also on standard input; and the dry-run refuses the stage before looking for a cassette.
#[test]
fn a_duplicate_stage_id_is_reported_on_whichever_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "sm.yaml", "entry: plan\n");
    write(dir.path(), "plan.md", CLEAN_STAGE);
    write(dir.path(), "plan copy.md", CLEAN_STAGE);
    for (name, other) in [("plan.md", "plan copy.md"), ("plan copy.md", "plan.md")] {
        let expected = format!(
            "{name}:2:5: error[sm/DuplicateStageId] stage id `plan` is also used by `{other}`; ids must be unique in a state machine: give each stage its own id\nFound 1 error (1 file checked).\n"
        );
        let output = stagelint(&["check", name, "--format", "concise"], dir.path());
        assert_eq!(stdout(&output), expected);
        let output =
            stagelint_stdin(&["check", "-", "--stdin-filename", name, "--format", "concise"], dir.path(), CLEAN_STAGE);
        assert_eq!(stdout(&output), expected);
        // No cassette anywhere: the refusal is the duplicate, not a missing cassette.
        let output = stagelint(&["dry-run", name, "--color", "never"], dir.path());
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        let text = stdout(&output);
        assert!(text.contains("Result: not run: the stage's id is used by another stage"), "{text}");
        assert!(text.contains("error[sm/DuplicateStageId]"), "{text}");
        assert!(!stderr(&output).contains("no cassette"), "{}", stderr(&output));
    }
}

/// Issue 16 audit: `explain FAMILY` (or `FAMILY/`) lists that family's rules instead of saying
/// the name is unknown or guessing a rule.
#[test]
fn explain_a_family_lists_its_rules() {
    for (topic, family) in [("sm", "sm"), ("cassette/", "cassette"), ("Steps", "steps")] {
        let output = stagelint(&["explain", topic], repo());
        assert_eq!(output.status.code(), Some(0), "{topic}: {}", stderr(&output));
        let text = stdout(&output);
        assert!(text.starts_with(&format!("The {family}/ rules")), "{topic}: {text}");
        let listed = text.lines().skip(1).count();
        let rules = stagelint::families::all_rules().filter(|r| r.family() == family).count();
        assert_eq!(listed, rules, "{topic}: {text}");
        assert!(text.lines().skip(1).all(|l| l.trim_start().starts_with(&format!("{family}/"))), "{text}");
    }
}

/// A stage that fails Setup or Init counts each of its expectations once, as unchecked: a join
/// whose two siblings both fail its inputsSchema fails Setup once (one event listing both),
/// and a sibling that fails Init keeps its own expectations in the summary.
#[test]
fn a_stage_that_fails_setup_or_init_counts_its_expectations_once() {
    let root = repo().join("tests/fixtures/cassette/StageInitFailed");
    for (case, unchecked) in [("bad-join-both-siblings", 4), ("bad-sibling-init", 7)] {
        let output = stagelint(&["dry-run", ".", "--format", "json"], &root.join(case));
        let text = stdout(&output);
        let summary = last_event(&output);
        assert_eq!(
            summary["expectations"],
            serde_json::json!({"passed": 16 - unchecked, "failed": unchecked, "unchecked": unchecked}),
            "{case}: {text}"
        );
        assert_eq!(text.matches(r#""event":"StageInitFailed""#).count(), 1, "{case}: {text}");
        assert_eq!(text.matches(r#""outcome":"unchecked""#).count(), unchecked as usize, "{case}: {text}");
    }
    let output = stagelint(&["dry-run", ".", "--color", "never"], &root.join("bad-join-both-siblings"));
    let text = stdout(&output);
    assert_eq!(text.matches("Setup  FAILED").count(), 1, "{text}");
    assert!(text.contains(r#"ctx.upstream[0]: "hits" is a required property; ctx.upstream[1]"#), "{text}");
}

/// Issue 16 audit: `explain` matches names ignoring case and the separators `-` and `_`, and an
/// unknown name close to a topic suggests it.
#[test]
fn explain_ignores_case_and_separators_and_suggests_a_topic() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["next-cycle", "next_cycle", "sm/next-cycle", "NEXTCYCLE"] {
        let output = stagelint(&["explain", name], dir.path());
        assert_eq!(output.status.code(), Some(0), "{name}: {}", stderr(&output));
        assert!(stdout(&output).contains("is reported as `sm/NextCycle`"), "{name}: {}", stdout(&output));
    }
    for name in ["dryrun", "Dry_Run"] {
        let output = stagelint(&["explain", name], dir.path());
        assert_eq!(output.status.code(), Some(0), "{name}: {}", stderr(&output));
        assert!(stdout(&output).starts_with("# dry-run"), "{name}: {}", stdout(&output));
    }
    let output = stagelint(&["explain", "drynrun"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("did you mean the topic `dry-run`?"), "{}", stderr(&output));
}

/// Issue 16 audit: the README's example of a safe did-you-mean fix is one `check --fix` applies.
#[test]
fn the_readmes_safe_fix_example_is_safe() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let example = readme.split("differ from what was written only in case").nth(1).expect("the passage");
    let wrong = example.split("such as `").nth(1).and_then(|s| s.split('`').next()).expect("an example");
    let right = example.split("` → `").nth(1).and_then(|s| s.split('`').next()).expect("its fix");
    let stage = CLEAN_STAGE.replacen("allowedTools: [", &format!("allowedTools: [{wrong}, "), 1);
    assert!(stage.contains(wrong), "CLEAN_STAGE lists its tools in flow style");
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "plan.md", &stage);
    let output = stagelint(&["check", "--fix", "plan.md"], dir.path());
    let fixed = std::fs::read_to_string(dir.path().join("plan.md")).unwrap();
    assert!(fixed.contains(&format!("[{right}, ")), "{}{}", stdout(&output), stderr(&output));
}

/// Under `check -`, only the one text is written back (to standard output): a fix that would
/// also edit another file (a stage id renamed with its uses) is not applied, while on disk the
/// same fix renames both files.
#[test]
fn stdin_fix_leaves_out_fixes_that_edit_other_files() {
    let dir = machine_for_stdin();
    let plan = std::fs::read_to_string(dir.path().join("plan.md")).unwrap().replace("[execute]", "[Execute_Stage]");
    write(dir.path(), "plan.md", &plan);
    let execute =
        std::fs::read_to_string(dir.path().join("execute.md")).unwrap().replace("id: execute", "id: Execute_Stage");
    let args = ["check", "-", "--stdin-filename", "execute.md", "--fix", "--unsafe-fixes", "--format", "concise"];
    let output = stagelint_stdin(&args, dir.path(), &execute);
    assert_eq!(stdout(&output), execute, "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(dir.path().join("plan.md")).unwrap(), plan);
    // The same fix on disk edits both files: it is the cross-file edit that stdin leaves out.
    write(dir.path(), "execute.md", &execute);
    stagelint(&["check", "--fix", "--unsafe-fixes"], dir.path());
    assert!(std::fs::read_to_string(dir.path().join("plan.md")).unwrap().contains("[execute-stage]"));
    assert!(std::fs::read_to_string(dir.path().join("execute.md")).unwrap().contains("id: execute-stage"));
}

/// A Last Light workflow directory whose prompt reads an unknown variable, and an atomic
/// workflow, under `proj/`; `elsewhere/` is a sibling to run from.
fn parent_root_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let flow = "kind: build\nname: w\nphases:\n  - name: a\n    prompt: prompts/p.md\n";
    write(dir.path(), "proj/workflows/w.yaml", flow);
    write(dir.path(), "proj/workflows/prompts/p.md", "Work on {{nope}}.\n");
    let atomic = "import { defineWorkflow } from \"@bastani/atomic/workflows\";\nexport default defineWorkflow({ name: \"x\" }).run(async () => {}).compile();\n";
    write(dir.path(), "proj/.atomic/workflows/demo/claude/index.ts", atomic);
    std::fs::create_dir_all(dir.path().join("elsewhere")).unwrap();
    dir
}

/// Found by an outside audit: a root given as `../proj` left the prompts it holds out of the
/// report (their findings vanished) and counted an atomic workflow twice.
#[test]
fn a_root_given_through_a_parent_directory_checks_what_the_same_root_does() {
    let dir = parent_root_project();
    let direct = stagelint(&["check", "proj", "--format", "concise"], dir.path());
    let through = stagelint(&["check", "../proj", "--format", "concise"], &dir.path().join("elsewhere"));
    let (direct, through) = (stdout(&direct), stdout(&through));
    assert!(direct.contains("proj/workflows/prompts/p.md:1:11: warning[lastlight/UnknownVariable]"), "{direct}");
    assert!(through.contains("../proj/workflows/prompts/p.md:1:11: warning[lastlight/UnknownVariable]"), "{through}");
    let summary = |out: &str| out.lines().last().unwrap_or("").to_string();
    assert_eq!(summary(&direct), summary(&through));
    assert!(summary(&direct).contains("(3 files checked)"), "{direct}");
}

/// Found by an outside audit: among equally near prompt names, the suggestion depended on the
/// order a hash set returned the workspace's paths, so it changed from run to run.
#[test]
fn a_missing_prompt_suggests_the_same_name_on_every_run() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "workflows/w.yaml", "kind: build\nname: w\nphases:\n  - name: a\n    prompt: prompts/c.md\n");
    for name in ["b", "a", "d"] {
        write(dir.path(), &format!("workflows/prompts/{name}.md"), "Do it.\n");
    }
    for _ in 0..6 {
        let out = stdout(&stagelint(&["check", ".", "--format", "concise"], dir.path()));
        assert!(out.contains("did you mean `prompts/a.md`?"), "{out}");
    }
}

/// Found by an outside audit: a reviewer prompt that could not be read (a link out of the
/// workspace) was also said to never ask for the verdict, whatever its target holds.
#[cfg(unix)]
#[test]
fn an_unreadable_reviewer_prompt_is_not_said_to_lack_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let flow = "kind: build\nname: w\nphases:\n  - name: r\n    prompt: prompts/a.md\n    loop:\n      max_cycles: 2\n      on_request_changes:\n        fix_prompt: prompts/a.md\n";
    write(dir.path(), "ws/workflows/w.yaml", flow);
    write(dir.path(), "outside/a.md", "Review, then answer VERDICT: APPROVED or VERDICT: REQUEST_CHANGES.\n");
    std::fs::create_dir_all(dir.path().join("ws/workflows/prompts")).unwrap();
    std::os::unix::fs::symlink("../../../outside/a.md", dir.path().join("ws/workflows/prompts/a.md")).unwrap();
    let out = stdout(&stagelint(&["check", ".", "--format", "concise"], &dir.path().join("ws")));
    assert!(out.contains("workflows/prompts/a.md:1:1: error[stagelint/IoError] leads outside the workspace"), "{out}");
    assert!(!out.contains("VerdictMarkerMissing"), "{out}");
}

/// Found by an outside audit: a workflow whose lines end in a lone CR (YAML line breaks, which
/// the engine's loader reads) was not recognized as a workflow and silently skipped.
#[test]
fn a_workflow_with_carriage_return_line_ends_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let flow = "kind: build\rname: w\rbogus: 1\rphases:\r  - name: a\r    prompt: prompts/missing.md\r";
    write(dir.path(), "workflows/w.yaml", flow);
    let out = stdout(&stagelint(&["check", ".", "--format", "concise"], dir.path()));
    assert!(out.contains("workflows/w.yaml:3:1: warning[lastlight/UnknownKey] unknown key `bogus`"), "{out}");
    assert!(out.contains("workflows/w.yaml:6:13: error[lastlight/PromptNotFound]"), "{out}");
}

/// Found by an outside audit: of equally near names, a did-you-mean named one at random per
/// run (stage ids, tools and Last Light variables came from hash sets).
#[test]
fn equally_near_names_are_suggested_the_same_on_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let stage = |id: &str, tools: &str| {
        format!(
            "---\nid: {id}\nname: S\nallowedTools: [{tools}]\ncompletionTool: done\ncompletionSchema: {{type: object}}\nturnCap: 2\nretryPolicy: {{ maxAttempts: 2, backoff: none }}\nresolutionPolicy: retry-later\n---\nCall done.\n"
        )
    };
    write(dir.path(), "sm/sm.yaml", "entry: stage-x\n");
    for id in ["stage-c", "stage-a", "stage-b"] {
        write(dir.path(), &format!("sm/{id}.md"), &stage(id, "Read"));
    }
    write(dir.path(), "tools/sm.yaml", "entry: s1\n");
    write(dir.path(), "tools/s1.md", &stage("s1", "Read, Gre"));
    let flow = "kind: build\nname: w\nphases:\n  - name: alpha2\n    prompt: prompts/p.md\n  - name: alpha1\n    prompt: prompts/p.md\n";
    write(dir.path(), "workflows/w.yaml", flow);
    write(dir.path(), "workflows/prompts/p.md", "Use {{alpha}}.\n");
    for _ in 0..6 {
        let out = stdout(&stagelint(&["check", ".", "--format", "concise"], dir.path()));
        assert!(
            out.contains("entry stage `stage-x` is not a stage of this state machine; did you mean `stage-a`?"),
            "{out}"
        );
        assert!(out.contains("`Gre` is not in the live tool set; did you mean `Grep`?"), "{out}");
        assert!(out.contains("did you mean `alpha1`?"), "{out}");
    }
}
