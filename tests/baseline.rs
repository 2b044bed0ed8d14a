//! Baselines, through the real binary: adopting a repository with `--write-baseline`, findings
//! that stay baselined across edits elsewhere and become new when their text changes,
//! identical findings counted, stale entries reported and pruned, the file kept for what a run
//! did not check, SARIF suppressions valid against the official schema.

mod common;

use std::path::Path;

use common::{assert_valid_sarif, copy_dir, repo, sarif_validator, stagelint, stderr, stdout, write};

/// A stage with two identical findings (`{{env.HOME}}` twice, one line each) and an unknown tool.
const STAGE: &str = "---\nid: plan\nname: Plan\nallowedTools: [Read, Grpe]\ncompletionTool: submit_plan\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\n---\n\nTask: {{ctx.task}}. Call submit_plan.\nHome: {{env.HOME}}\nHome: {{env.HOME}}\n";

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

fn edit(dir: &Path, name: &str, from: &str, to: &str) {
    let text = read(dir, name);
    assert!(text.contains(from), "{name} has no {from:?}");
    write(dir, name, &text.replacen(from, to, 1));
}

/// `check --format concise` in `dir`: its exit code and its lines.
fn concise(dir: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["check", "--format", "concise"];
    args.extend_from_slice(extra);
    let output = stagelint(&args, dir);
    (output.status.code(), stdout(&output))
}

fn baselined_workspace() -> tempfile::TempDir {
    let dir = common::temp_files(&[
        ("stagelint.toml", "baseline = \"stagelint-baseline.json\"\n"),
        ("sm/sm.yaml", "entry: plan\ncontext:\n  required: [task]\n"),
        ("sm/plan.md", STAGE),
    ]);
    let output = stagelint(&["check", "--write-baseline"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stderr(&output), "stagelint: recorded 3 finding(s) in stagelint-baseline.json\n");
    dir
}

#[test]
fn an_adopted_repository_reports_only_new_findings() {
    let dir = baselined_workspace();
    let written = read(dir.path(), "stagelint-baseline.json");
    // Sorted, one entry a line, the two identical findings one entry counted twice.
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len(), 7, "{written}");
    assert!(lines[3].contains("\"code\":\"sm/ForbiddenPlaceholder\"") && lines[3].contains("\"count\":2"), "{written}");
    assert!(lines[4].contains("\"code\":\"sm/UnknownTool\"") && lines[4].contains("\"count\":1"), "{written}");
    assert!(lines.iter().all(|l| !l.contains("\"line\"")), "no line numbers: {written}");
    assert_eq!(concise(dir.path(), &[]), (Some(0), "No findings (2 files checked; 3 baselined).\n".into()));
    // Written again, the same bytes.
    assert_eq!(stagelint(&["check", "--write-baseline"], dir.path()).status.code(), Some(0));
    assert_eq!(read(dir.path(), "stagelint-baseline.json"), written);

    // Lines added above the findings, and the frontmatter reformatted elsewhere: still baselined.
    edit(dir.path(), "sm/plan.md", "Task: {{ctx.task}}", "A new first line.\n\nTask:   {{ctx.task}}");
    edit(dir.path(), "sm/plan.md", "turnCap: 5", "turnCap:    5");
    assert_eq!(concise(dir.path(), &[]).1, "No findings (2 files checked; 3 baselined).\n");
    // The offending text changed: the finding is new (and its old entry stale).
    edit(dir.path(), "sm/plan.md", "[Read, Grpe]", "[Read, Grpx]");
    let (code, out) = concise(dir.path(), &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("sm/plan.md:4:22: error[sm/UnknownTool] `Grpx`"), "{out}");
    assert!(out.contains("stagelint-baseline.json:5:5: info[stagelint/BaselineStale] `sm/UnknownTool` in `sm/plan.md` is baselined but no longer found there"), "{out}");
    assert!(out.ends_with("Found 1 error, 1 info (2 files checked; 2 baselined). 1 fixable with `--fix`.\n"), "{out}");
}

#[test]
fn identical_findings_are_counted() {
    let dir = baselined_workspace();
    // A third identical line: one of the three is new.
    edit(dir.path(), "sm/plan.md", "Home: {{env.HOME}}\n", "Home: {{env.HOME}}\nHome: {{env.HOME}}\n");
    let (code, out) = concise(dir.path(), &[]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(out.matches("sm/ForbiddenPlaceholder").count(), 1, "{out}");
    // The one after the baselined two is the new one.
    assert!(out.contains("sm/plan.md:15:9: error[sm/ForbiddenPlaceholder]"), "{out}");
    // Down to one: the entry counts two, so it is stale by one, and the fix lowers its count.
    let text = read(dir.path(), "sm/plan.md").replace("Home: {{env.HOME}}\n", "");
    write(dir.path(), "sm/plan.md", &format!("{text}Home: {{{{env.HOME}}}}\n"));
    let (code, out) = concise(dir.path(), &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("info[stagelint/BaselineStale] `sm/ForbiddenPlaceholder` in `sm/plan.md` is baselined 2 times but found 1 time; lower its count to 1"),
        "{out}"
    );
    let output = stagelint(&["check", "--fix"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert!(read(dir.path(), "stagelint-baseline.json").contains("\"count\":1,\"message\":\"environment"));
    assert_eq!(concise(dir.path(), &[]).1, "No findings (2 files checked; 2 baselined).\n");
}

#[test]
fn stale_entries_are_reported_and_pruned_by_the_fix_and_by_writing_again() {
    let dir = baselined_workspace();
    // Both findings of `{{env.HOME}}` fixed, and the unknown tool too.
    edit(dir.path(), "sm/plan.md", "Home: {{env.HOME}}\nHome: {{env.HOME}}\n", "");
    edit(dir.path(), "sm/plan.md", ", Grpe]", "]");
    let (code, out) = concise(dir.path(), &[]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(out.matches("BaselineStale").count(), 2, "{out}");
    // Removing both entries keeps the file valid JSON (the last entry's comma goes too).
    let output = stagelint(&["check", "--fix"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let fixed: serde_json::Value = serde_json::from_str(&read(dir.path(), "stagelint-baseline.json")).unwrap();
    assert_eq!(fixed["findings"], serde_json::json!([]));
    assert_eq!(concise(dir.path(), &[]).1, "No findings (2 files checked).\n");

    // The same through `--write-baseline`, which keeps only what still matches.
    let dir = baselined_workspace();
    edit(dir.path(), "sm/plan.md", ", Grpe]", "]");
    assert_eq!(stagelint(&["check", "--write-baseline"], dir.path()).status.code(), Some(0));
    let written = read(dir.path(), "stagelint-baseline.json");
    assert!(!written.contains("UnknownTool") && written.contains("ForbiddenPlaceholder"), "{written}");
    assert_eq!(concise(dir.path(), &[]).1, "No findings (2 files checked; 2 baselined).\n");
}

#[test]
fn a_run_over_part_of_the_repository_judges_and_rewrites_only_that_part() {
    let dir = baselined_workspace();
    write(dir.path(), "other/sm.yaml", "entry: plna\n");
    write(dir.path(), "other/plan.md", STAGE);
    assert_eq!(stagelint(&["check", "--write-baseline"], dir.path()).status.code(), Some(0));
    let full = read(dir.path(), "stagelint-baseline.json");
    // Checking `sm/` alone: the entries of `other/` are neither stale nor dropped.
    assert_eq!(concise(dir.path(), &["sm"]).1, "No findings (2 files checked; 3 baselined).\n");
    assert_eq!(stagelint(&["check", "--write-baseline", "sm"], dir.path()).status.code(), Some(0));
    assert_eq!(read(dir.path(), "stagelint-baseline.json"), full);
    // A file that is gone: its entries are stale whatever was checked.
    std::fs::remove_file(dir.path().join("other/plan.md")).unwrap();
    let (_, out) = concise(dir.path(), &["sm"]);
    assert_eq!(out.matches("in `other/plan.md` is baselined but the file no longer exists").count(), 2, "{out}");
}

/// The same with no project root (no `stagelint.toml`, no `.git`): discovery of `sm/` never
/// sees `other/`, which still exists, so its entries are neither stale nor dropped.
#[test]
fn a_partial_run_without_a_project_root_keeps_the_other_entries() {
    let dir = common::temp_files(&[("sm/sm.yaml", "entry: plan\n"), ("sm/plan.md", STAGE), ("other/plan.md", STAGE)]);
    write(dir.path(), "other/sm.yaml", "entry: plan\n");
    assert_eq!(stagelint(&["check", "--write-baseline"], dir.path()).status.code(), Some(0));
    let full = read(dir.path(), "stagelint-baseline.json");
    assert!(full.contains("\"path\":\"other/plan.md\""), "{full}");
    let baseline = ["--baseline", "stagelint-baseline.json"];
    for part in ["sm", "sm/plan.md"] {
        let (code, out) = concise(dir.path(), &[part, baseline[0], baseline[1]]);
        assert_eq!(code, Some(0), "{part}: {out}");
        assert!(!out.contains("BaselineStale"), "{part}: {out}");
    }
    assert_eq!(stagelint(&["check", "--write-baseline", "sm"], dir.path()).status.code(), Some(0));
    assert_eq!(read(dir.path(), "stagelint-baseline.json"), full);
}

/// A baselined finding's fix is never applied, so it is not counted as one `--fix` would apply.
#[test]
fn fixes_of_baselined_findings_are_not_counted() {
    let dir = baselined_workspace();
    let output = stagelint(&["check", "--format", "json"], dir.path());
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let summary = &report["summary"];
    assert_eq!(
        (&summary["fixable"], &summary["unsafe_fixable"], &summary["baselined"]),
        (&serde_json::json!(0), &serde_json::json!(0), &serde_json::json!(3))
    );
    // One new finding with a fix: the closing line counts its fix, not the baselined one's.
    edit(dir.path(), "sm/plan.md", "Task: {{ctx.task}}", "Task: {{ctx.task}} {{ctx.task2}}");
    let (_, out) = concise(dir.path(), &[]);
    assert!(
        out.ends_with("Found 1 error (2 files checked; 3 baselined). 1 fixable with `--fix --unsafe-fixes`.\n"),
        "{out}"
    );
}

/// A commit that changes only the baseline (pre-commit names just it) still checks it.
#[test]
fn a_baseline_named_alone_is_checked() {
    let dir = baselined_workspace();
    write(dir.path(), "stagelint-baseline.json", "{bad\n");
    let (code, out) = concise(dir.path(), &["stagelint-baseline.json"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.starts_with("stagelint-baseline.json:1:2: error[stagelint/InvalidConfig] this baseline cannot be used"),
        "{out}"
    );
}

#[test]
fn a_baseline_named_on_the_command_line_and_one_that_cannot_be_used() {
    let dir = baselined_workspace();
    std::fs::rename(dir.path().join("stagelint-baseline.json"), dir.path().join("accepted.json")).unwrap();
    write(dir.path(), "stagelint.toml", "");
    assert_eq!(concise(dir.path(), &[]).0, Some(1));
    let (code, out) = concise(dir.path(), &["--baseline", "accepted.json"]);
    assert_eq!((code, out.as_str()), (Some(0), "No findings (2 files checked; 3 baselined).\n"));
    let missing = stagelint(&["check", "--baseline", "nowhere.json"], dir.path());
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("--baseline nowhere.json: no such file"), "{}", stderr(&missing));
    write(dir.path(), "accepted.json", "{\"version\": 7, \"findings\": []}\n");
    let (code, out) = concise(dir.path(), &["--baseline", "accepted.json"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("accepted.json:1:13: error[stagelint/InvalidConfig] this baseline cannot be used, so no finding is baselined: baseline version 7"),
        "{out}"
    );
    // A config cannot point outside its directory: like every config problem, a finding on it.
    write(dir.path(), "stagelint.toml", "baseline = \"../elsewhere.json\"\n");
    let (code, out) = concise(dir.path(), &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("stagelint.toml:1:12: error[stagelint/InvalidConfig]")
            && out.contains("`baseline` is a path inside this file's directory"),
        "{out}"
    );
    // Usage errors say what does not combine.
    let output = stagelint(&["check", "--write-baseline", "--select", "sm"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("does not take --select and --ignore"), "{}", stderr(&output));
}

#[test]
fn sarif_keeps_baselined_results_as_external_suppressions_valid_against_the_schema() {
    let dir = baselined_workspace();
    edit(dir.path(), "sm/plan.md", "[Read, Grpe]", "[Read, Grpx]");
    let output = stagelint(&["check", "--format", "sarif"], dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let sarif: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_valid_sarif(&sarif_validator(), &sarif);
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let suppressed: Vec<&str> =
        results.iter().filter(|r| r.get("suppressions").is_some()).map(|r| r["ruleId"].as_str().unwrap()).collect();
    assert_eq!(suppressed, ["sm/ForbiddenPlaceholder", "sm/ForbiddenPlaceholder"]);
    let first = results.iter().find(|r| r.get("suppressions").is_some()).unwrap();
    assert_eq!(
        first["suppressions"],
        serde_json::json!([{"kind": "external", "status": "accepted", "justification": "accepted in the baseline stagelint-baseline.json"}])
    );
    let reported: Vec<&str> =
        results.iter().filter(|r| r.get("suppressions").is_none()).map(|r| r["ruleId"].as_str().unwrap()).collect();
    assert_eq!(reported, ["sm/UnknownTool", "stagelint/BaselineStale"]);
    // JSON lists what is reported and counts what is baselined.
    let output = stagelint(&["check", "--format", "json"], dir.path());
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["diagnostics"].as_array().unwrap().len(), 2);
    assert_eq!(json["summary"]["baselined"], 2);
}

#[test]
fn every_broken_example_adopted_then_checked_is_clean() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("broken");
    copy_dir(&repo().join("examples/broken"), &copy);
    assert_eq!(stagelint(&["check", "--write-baseline", "broken"], dir.path()).status.code(), Some(0));
    let output = stagelint(&["check", "broken", "--baseline", "stagelint-baseline.json"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert!(stdout(&output).ends_with("No findings (42 files checked; 142 baselined).\n"), "{}", stdout(&output));
}
