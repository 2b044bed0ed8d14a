//! The language server under a real editor: Neovim (headless), configured with the shipped
//! `editors/neovim`, starts `stagelint lsp`, shows its diagnostics, sends an incremental edit,
//! asks for a completion and a definition, runs the dry-run lenses of a stage, a climpt
//! registry and a Last Light workflow and previews a phase's prompt. CI installs Neovim
//! (`.ci/run`); elsewhere the test is reported as ignored when `nvim` is not on `PATH` (`build.rs`).

use std::path::Path;
use std::process::Command;

#[test]
#[cfg_attr(not(tool_nvim), ignore = "nvim is not on PATH (CI installs it: .ci/run)")]
fn neovim_shows_diagnostics_and_clears_them_after_an_edit() {
    let has_nvim = Command::new("nvim").arg("--version").output().is_ok_and(|o| o.status.success());
    // Run without it only when STAGELINT_REQUIRE_TOOLS says the tools must be there (CI).
    assert!(has_nvim, "nvim does not run, and STAGELINT_REQUIRE_TOOLS requires it (see .ci/run)");
    let dir = tempfile::tempdir().expect("temp dir");
    // A project: its root has `.git`, and files in several directories (one with a space in its
    // name) must share one server.
    std::fs::create_dir(dir.path().join(".git")).expect("mkdir");
    std::fs::write(dir.path().join("sm.yaml"), "entry: plan\n").expect("write");
    let stage = dir.path().join("plan.md");
    std::fs::write(
        &stage,
        "---\nid: plan\nname: Plan\nallowedTools: [Read, \"😀\", Raed]\ncompletionTool: submit_plan\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\nnext:\n  nextStages: [review]\n---\n\nTask: {{ctx.task}}. Call submit_plan.\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("review.md"),
        "---\nid: review\nname: Review\nallowedTools: []\ncompletionTool: submit_review\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\n---\n\nReview {{ctx.upstream[0].parsed}}. Call submit_review.\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("review.cassette.yaml"),
        "cassette: 1\nstage: review\nctx: { upstream: [ { verdict: ok, parsed: { summary: s } } ] }\nattempts:\n  - turns:\n      - response: { stop: tool_use, content: [ { toolCall: { id: c1, name: submit_review, args: {} } } ] }\n        expect: [ { branch: completion, call: c1 } ]\n",
    )
    .expect("write");
    // A loose stage in `sub dir/` with two scenario cassettes and no conventional one: one
    // passes, one does not.
    let sub = dir.path().join("sub dir");
    std::fs::create_dir(&sub).expect("mkdir");
    std::fs::write(
        sub.join("check.md"),
        "---\nid: check\nname: Check\nallowedTools: []\ncompletionTool: submit_check\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\n---\n\nCheck it. Call submit_check.\n",
    )
    .expect("write");
    let scenario = |branch: &str| {
        format!(
            "cassette: 1\nstage: check\nattempts:\n  - turns:\n      - response: {{ stop: tool_use, content: [ {{ toolCall: {{ id: c1, name: submit_check, args: {{}} }} }} ] }}\n        expect: [ {{ branch: {branch}, call: c1 }} ]\n"
        )
    };
    std::fs::write(sub.join("check-bad.cassette.yaml"), scenario("parseFailure")).expect("write");
    std::fs::write(sub.join("check-ok.cassette.yaml"), scenario("completion")).expect("write");
    // A TOML file of another project, and a broken stagelint.toml governing only `cfg/`.
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").expect("write");
    std::fs::create_dir(dir.path().join("cfg")).expect("mkdir");
    std::fs::write(dir.path().join("cfg/stagelint.toml"), "[tools]\nregistred = []\n").expect("write");
    // An atomic workflow with a misspelt stage option, and TypeScript that is none.
    let atomic = dir.path().join(".atomic/workflows/hello/claude/index.ts");
    std::fs::create_dir_all(atomic.parent().expect("parent")).expect("mkdir");
    std::fs::write(
        &atomic,
        "import { defineWorkflow } from \"@bastani/atomic/workflows\";\nexport default defineWorkflow({ name: \"hello\" })\n  .for<\"claude\">()\n  .run(async (ctx) => {\n    await ctx.stage({ name: \"a\", headles: true }, {}, {}, async (s) => { s.save(s.sessionId); });\n  })\n  .compile();\n",
    )
    .expect("write");
    std::fs::write(dir.path().join("util.ts"), "export const x = 1;\n").expect("write");
    // A climpt agent with a flow cassette.
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/climpt"), dir.path());
    // A Last Light workflow with a cassette, in `workflows/`.
    let workflows = dir.path().join("workflows");
    std::fs::create_dir_all(workflows.join("prompts")).expect("mkdir");
    std::fs::create_dir_all(workflows.join("cassettes")).expect("mkdir");
    let workflow = workflows.join("flow.yaml");
    std::fs::write(
        &workflow,
        "name: flow\nphases:\n  - name: phase_0\n    type: context\n  - name: plan\n    prompt: prompts/plan.md\n",
    )
    .expect("write");
    std::fs::write(workflows.join("prompts/plan.md"), "Plan: {{issueTitle}}\n").expect("write");
    std::fs::write(
        workflows.join("cassettes/flow.cassette.yaml"),
        "cassette: 1\nworkflow: flow\ntrigger: { owner: o, repo: r, issueTitle: Add a flag }\nexecutions: { plan: { output: planned } }\nexpect: { status: succeeded }\n",
    )
    .expect("write");
    let out = dir.path().join("out.txt");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/editors/nvim_lsp.lua");
    let status = Command::new("nvim")
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("STAGELINT_BIN", env!("CARGO_BIN_EXE_stagelint"))
        .env("STAGELINT_NVIM_CONFIG", Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/neovim"))
        .env("STAGE_FILE", &stage)
        .env("REVIEW_FILE", dir.path().join("review.md"))
        .env("OTHER_SERVER", Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/editors/other_server.py"))
        .env("OTHER_TOML", dir.path().join("Cargo.toml"))
        .env("OTHER_TS", dir.path().join("util.ts"))
        .env("ATOMIC_FILE", &atomic)
        .env("CONFIG_FILE", dir.path().join("cfg/stagelint.toml"))
        .env("SCENARIO_STAGE", sub.join("check.md"))
        .env("CLIMPT_REGISTRY", dir.path().join(".agent/fixer/steps_registry.json"))
        .env("WORKFLOW_FILE", &workflow)
        .env("WORKFLOW_PROMPT", workflows.join("prompts/plan.md"))
        .env("OUT_FILE", &out)
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_DATA_HOME", dir.path())
        .status()
        .expect("nvim runs");
    assert!(status.success());
    let report = std::fs::read_to_string(&out).expect("the script wrote its report");
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines.first(), Some(&"found=true"), "{report}");
    // The server sends UTF-16 columns (Neovim 0.7 offers nothing else); Neovim turns them into
    // byte columns: `Raed` is at UTF-16 column 27 and byte column 29, after a 4-byte emoji.
    assert!(lines.contains(&"3:21:sm/UnknownTool"), "{report}");
    assert!(lines.contains(&"3:29:sm/UnknownTool"), "{report}");
    assert!(lines.contains(&"kind=stage:markdown"), "the stage was recognised by its frontmatter: {report}");
    assert!(lines.contains(&"cleared=true"), "{report}");
    let after: Vec<&&str> = lines.iter().skip_while(|l| !l.starts_with("cleared=")).skip(1).collect();
    let after: Vec<&&str> = after.into_iter().take_while(|l| !l.contains('=')).collect();
    assert_eq!(after, vec![&"3:21:sm/UnknownTool"], "only the emoji entry is still unknown: {report}");
    assert!(lines.contains(&"completion=review"), "stage ids are offered in nextStages: {report}");
    assert!(lines.contains(&"definition=review.md:1:4"), "nextStages leads to review's id: {report}");
    assert!(
        lines.contains(&"lens=1:stagelint.dryRun:▶ Dry-run (review.cassette.yaml)"),
        "a dry-run lens on review's `id:` line: {report}"
    );
    assert!(
        lines.contains(&"dry-run=true:stagelint dry-run stage review: passed · expectations 1/1 · findings 0"),
        ":StagelintDryRun ran the lens command and got its summary: {report}"
    );
    assert!(lines.contains(&"dry-run-errors="), "the command went to stagelint alone, not the other server: {report}");
    assert!(lines.contains(&"other-toml-clients=0"), "a Cargo.toml does not attach stagelint: {report}");
    assert!(lines.contains(&"config=1:0:stagelint/InvalidConfig"), "stagelint.toml is checked: {report}");
    assert!(
        lines.contains(&"other-ts-clients=0"),
        "TypeScript that is no workflow does not attach stagelint: {report}"
    );
    assert!(lines.contains(&"atomic=4:33:atomic/UnknownOption"), "the workflow is checked: {report}");
    // Files in three directories (`sub dir` has a space): one server, rooted at the project.
    assert!(lines.contains(&"scenario-attached=true"), "{report}");
    assert!(lines.contains(&"stagelint-clients=1"), "one server for the whole project: {report}");
    let root = format!("root={}", dir.path().display());
    assert!(lines.contains(&root.as_str()), "rooted at the directory with .git: {report}");
    // Two scenario cassettes: `:StagelintDryRun` offers both lenses, and runs the one picked.
    assert!(
        lines.contains(&"choices=▶ Dry-run (check-bad.cassette.yaml)|▶ Dry-run (check-ok.cassette.yaml)"),
        "{report}"
    );
    assert!(
        lines
            .contains(&"scenario-dry-run=true:stagelint dry-run stage check: mismatch · expectations 0/1 · findings 1"),
        "the picked cassette (check-bad) ran: {report}"
    );
    // A climpt registry: a lens on its entry and on each step the cassette reaches (issue 33),
    // and `:StagelintDryRun` runs the lens on the cursor's line.
    let climpt: Vec<&str> = lines.iter().filter(|l| l.starts_with("climpt-")).copied().collect();
    assert_eq!(
        climpt,
        [
            "climpt-lens=4:stagelint.dryRun:▶ Dry-run (agent.cassette.yaml):",
            "climpt-lens=6:stagelint.dryRun:▶ Dry-run (agent.cassette.yaml) · iteration 1:initial.issue",
            "climpt-lens=17:stagelint.dryRun:▶ Dry-run (agent.cassette.yaml) · iteration 2:continuation.issue",
            "climpt-lens=29:stagelint.dryRun:▶ Dry-run (agent.cassette.yaml) · iteration 3:closure.issue",
            "climpt-dry-run=5:true:stagelint dry-run agent fixer: passed · expectations 11/11 · findings 0",
            "climpt-dry-run=18:true:stagelint dry-run agent fixer (step continuation.issue): passed · expectations 11/11 · findings 0",
        ],
        "{report}"
    );
    // A Last Light workflow: the dry-run lens on `name:`, a preview lens on its agent phase.
    assert!(lines.contains(&"workflow-lens=0:stagelint.dryRun:▶ Dry-run (flow.cassette.yaml)"), "{report}");
    assert!(lines.contains(&"workflow-lens=4:stagelint.previewPrompt:Preview prompt"), "{report}");
    assert!(
        lines
            .contains(&"workflow-dry-run=true:stagelint dry-run workflow flow: passed · expectations 1/1 · findings 0"),
        "{report}"
    );
    assert!(lines.contains(&"preview=true:md"), "{report}");
    assert!(lines.contains(&"preview-readonly=true"), "{report}");
    assert!(lines.contains(&"preview-text=Plan: ⟦∅ issueTitle⟧"), "{report}");
    assert!(lines.contains(&"preview-followed=true"), "the preview follows an unsaved edit of the prompt: {report}");
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}
