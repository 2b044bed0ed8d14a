//! Editor features of the `atomic/` family on a small Claude workflow: hover on option keys,
//! inputs, stage and agent names; completion (also in half-typed code, where oxc gives no AST);
//! definitions, references and rename of inputs and stage names; agent files; the outline.

mod common;

use std::path::PathBuf;

use common::check_with;
use stagelint::config::Config;
use stagelint::ide::{self, Cursor};

const WORKFLOW: &str = r#"import { defineWorkflow } from "@bastani/atomic/workflows";

export default defineWorkflow({
  name: "review",
  description: "Plan, then review",
  inputs: [
    { name: "topic", type: "text", required: true, description: "What to review" },
    { name: "depth", type: "enum", values: ["quick", "full"], default: "quick" },
  ],
})
  .for<"claude">()
  .run(async (ctx) => {
    await ctx.stage(
      { name: "plan", description: "Write the plan" },
      { chatFlags: ["--agent", "planner"] },
      {},
      async (s) => {
        await s.session.query(`Plan ${ctx.inputs.topic}`);
        s.save(s.sessionId);
      },
    );
    await ctx.stage({ name: "check", headless: true }, {}, {}, async (s) => {
      const plan = await s.transcript("plan");
      await s.session.query(plan.content, { effort: "high", agent: "reviewer" });
      s.save(s.sessionId);
    });
    const again = await ctx.getMessages("plan");
    console.log(again.length, ctx.inputs.depth, ctx.inputs.topic);
  })
  .compile();
"#;

const PLANNER: &str = "---\nname: planner\ndescription: Plans.\n---\nPlan it.\n";

/// An agent file discovery reads (a skill); `.claude/agents/*.md` files are read as context by
/// the discovery of the `atomic/UnknownAgent` rule.
const PLANNER_AT: &str = ".agents/skills/planner/SKILL.md";

const PATH: &str = ".atomic/workflows/review/claude/index.ts";

type Fixture = common::IdeFixture;

/// The project with the workflow `text` (where `$0` marks the cursor) and extra files.
fn fixture_with(text: &str, extra: &[(&str, &str)]) -> Fixture {
    let mut files = vec![(PATH, text), (PLANNER_AT, PLANNER)];
    files.extend_from_slice(extra);
    Fixture::new(&files)
}

fn fixture(text: &str) -> Fixture {
    fixture_with(text, &[])
}

/// `WORKFLOW` with the cursor `delta` bytes into the `n`th (0-based) `needle`.
fn at(needle: &str, n: usize, delta: usize) -> String {
    let at = WORKFLOW.match_indices(needle).nth(n).expect("needle").0 + delta;
    format!("{}$0{}", &WORKFLOW[..at], &WORKFLOW[at..])
}

/// `WORKFLOW` cut at `needle`'s end, with `tail` typed after it and nothing after: a half-typed
/// file that does not parse.
fn half_typed(needle: &str, tail: &str) -> String {
    let end = WORKFLOW.find(needle).expect("needle") + needle.len();
    format!("{}{tail}$0", &WORKFLOW[..end])
}

#[test]
fn the_fixture_is_clean() {
    let f = fixture(WORKFLOW);
    let diagnostics = stagelint::check::check(&f.workspace);
    assert!(diagnostics.is_empty(), "{}", common::render_full(&f.workspace, &diagnostics));
}

#[test]
fn hover_on_option_keys_shows_type_doc_and_allowed_values() {
    let f = fixture(&at("effort", 0, 2));
    let (under, markdown) = f.hover().expect("hover");
    assert_eq!(under, "effort");
    assert!(markdown.starts_with("**effort** `string` · Claude `query()` options"), "{markdown}");
    assert!(markdown.contains("`low`, `medium`, `high`, `xhigh`, `max`"), "{markdown}");
    assert!(!markdown.contains("Ignored"), "the stage is headless: {markdown}");
    // The value shows its key's doc.
    let f = fixture(&at("\"high\"", 0, 2));
    assert!(f.hover().expect("hover").1.starts_with("**effort**"));
    let f = fixture(&at("headless", 0, 1));
    let (_, markdown) = f.hover().expect("hover");
    assert!(markdown.contains("`boolean` · stage options"), "{markdown}");
    let f = fixture(&at("chatFlags", 0, 1));
    assert!(f.hover().expect("hover").1.contains("`string[]` · client options"));
    let f = fixture(&at("required", 0, 1));
    assert!(f.hover().expect("hover").1.contains("input fields"));
}

#[test]
fn hover_says_when_the_stage_ignores_a_key() {
    // Query options in an interactive Claude stage.
    let text = WORKFLOW.replace(
        "await s.session.query(`Plan ${ctx.inputs.topic}`);",
        "await s.session.query(\"x\", { permissionMode: \"plan\" });",
    );
    let at = text.find("permissionMode").expect("key") + 3;
    let f = fixture(&format!("{}$0{}", &text[..at], &text[at..]));
    let (_, markdown) = f.hover().expect("hover");
    assert!(markdown.contains("`default`, `dontAsk`, `acceptEdits`, `bypassPermissions`, `plan`"), "{markdown}");
    assert!(markdown.contains("Ignored in this stage") && markdown.contains("HeadlessOnlyOption"), "{markdown}");
    // Client options in a headless Claude stage.
    let text = WORKFLOW.replace(
        "{ name: \"check\", headless: true }, {}",
        "{ name: \"check\", headless: true }, { readyTimeoutMs: 5 }",
    );
    let at = text.find("readyTimeoutMs").expect("key") + 3;
    let f = fixture(&format!("{}$0{}", &text[..at], &text[at..]));
    let (_, markdown) = f.hover().expect("hover");
    assert!(markdown.contains("Ignored in this stage") && markdown.contains("InteractiveOnlyOption"), "{markdown}");
}

#[test]
fn hover_on_inputs_names_the_positional_prompt_rule() {
    let f = fixture(&at("inputs: [", 0, 2));
    let (under, markdown) = f.hover().expect("hover");
    assert_eq!(under, "inputs");
    assert!(markdown.contains("**no positional prompt**"), "{markdown}");
    let f = fixture(&at("ctx.inputs.topic", 0, 12));
    let (under, markdown) = f.hover().expect("hover");
    assert_eq!(under, "topic");
    assert!(
        markdown.starts_with("**input** `topic` · `text` · required") && markdown.contains("What to review"),
        "{markdown}"
    );
    let f = fixture(&WORKFLOW.replace("ctx.inputs.depth", "ctx.inputs.dep$0x"));
    assert!(f.hover().expect("hover").1.contains("not a declared input"));
}

#[test]
fn hover_on_stage_and_agent_names() {
    let f = fixture(&at("\"plan\"", 1, 2));
    let (under, markdown) = f.hover().expect("hover");
    assert_eq!(under, "plan");
    assert!(markdown.starts_with("**stage** `plan`") && markdown.contains("Write the plan"), "{markdown}");
    assert!(markdown.contains("Read by 2 transcript reads"), "{markdown}");
    let f = fixture(&at("\"check\"", 0, 2));
    assert!(f.hover().expect("hover").1.starts_with("**headless stage** `check`"));
    let f = fixture(&at("\"planner\"", 0, 2));
    let (under, markdown) = f.hover().expect("hover");
    assert_eq!(under, "planner");
    assert!(markdown.contains("Defined in") && markdown.contains("planner/SKILL.md"), "{markdown}");
    let f = fixture(&at("\"reviewer\"", 0, 2));
    assert!(f.hover().expect("hover").1.contains("`atomic init` installs"));
}

#[test]
fn completes_stage_option_keys_in_half_typed_code() {
    // The issue's example: nothing after it, so oxc has no AST.
    let f = fixture(&half_typed("await ctx.stage(", "{ name: \"a\", headl"));
    assert!(stagelint::families::atomic::syntax_errors(&f.workspace.file(f.at().file).text) > 0);
    let items = f.completions();
    let labels: Vec<&str> = items.iter().map(|i| i.label.as_str()).collect();
    assert_eq!(labels, ["description", "headless"], "`name` is there already");
    let headless = items.iter().find(|i| i.label == "headless").expect("headless");
    assert_eq!(headless.insert.as_deref(), Some("headless: "));
    assert_eq!(f.text(f.at().file, headless.replace), "headl");
}

#[test]
fn completes_keys_by_the_objects_role() {
    let f = fixture(&half_typed("defineWorkflow({\n", "  "));
    assert_eq!(f.labels(), ["name", "description", "inputs", "minSDKVersion"]);
    let f = fixture(&half_typed("{ name: \"topic\", ", "ty"));
    assert!(f.labels().contains(&"type".to_string()) && !f.labels().contains(&"name".to_string()));
    let f = fixture(&half_typed("{ name: \"plan\", description: \"Write the plan\" },\n      {", " "));
    assert_eq!(f.labels(), ["chatFlags", "readyTimeoutMs"], "Claude client options");
    let f = fixture(&half_typed("{ effort: \"high\", ", ""));
    let labels = f.labels();
    assert!(labels.contains(&"permissionMode".to_string()) && !labels.contains(&"effort".to_string()), "{labels:?}");
    // The same key list is the rule's: an unknown key is reported against it.
    let f = fixture(&half_typed("{ name: \"check\", ", ""));
    assert_eq!(f.labels(), ["description", "headless"]);
    // Keys after the cursor are present too.
    let f = fixture(&WORKFLOW.replace("{ name: \"check\", headless: true }", "{ $0 name: \"check\", headless: true }"));
    assert_eq!(f.labels(), ["description"]);
}

/// Hostile nesting (oxc would overflow its stack on it, so the rules refuse to parse it) is
/// answered at once by the lexical editor features.
#[test]
fn deep_nesting_is_answered() {
    let deep = format!("{}ctx.stage({{ he$0", "[".repeat(10_000));
    let f = fixture(&deep);
    let started = std::time::Instant::now();
    assert_eq!(f.labels(), ["name", "description", "headless"]);
    let _ = f.hover();
    let _ = ide::symbols(&f.workspace, f.file("index.ts"));
    let _ = ide::definitions(&f.workspace, f.at());
    assert!(started.elapsed() < std::time::Duration::from_secs(2), "{:?}", started.elapsed());
}

#[test]
fn completes_enum_values_quoted_in_code_and_bare_in_strings() {
    let f = fixture(&half_typed("{ effort: ", ""));
    let items = f.completions();
    assert_eq!(items.iter().map(|i| i.label.as_str()).collect::<Vec<_>>(), ["low", "medium", "high", "xhigh", "max"]);
    assert_eq!(items[0].insert.as_deref(), Some("\"low\""));
    let f = fixture(&at("\"high\"", 0, 2));
    let items = f.completions();
    let high = items.iter().find(|i| i.label == "high").expect("high");
    assert_eq!((high.insert.as_deref(), f.text(f.at().file, high.replace)), (None, "high"), "the whole string text");
    let f = fixture(&half_typed("{ name: \"depth\", type: \"", ""));
    assert_eq!(f.labels(), ["string", "text", "enum"]);
    let f = fixture(&half_typed("{ effort: \"high\", ", "thinking: { type: \""));
    assert_eq!(f.labels(), ["adaptive", "enabled", "disabled"]);
    let f = fixture(&half_typed("{ name: \"check\", headless: ", ""));
    let items = f.completions();
    assert_eq!(
        items.iter().map(|i| (i.label.as_str(), i.insert.as_deref())).collect::<Vec<_>>(),
        [("true", None), ("false", None)]
    );
}

#[test]
fn completes_agent_input_and_stage_names() {
    let f = fixture(&half_typed("chatFlags: [\"--agent\", \"", "pl"));
    let labels = f.labels();
    assert_eq!(labels.first().map(String::as_str), Some("planner"), "the agent file first: {labels:?}");
    assert!(labels.contains(&"codebase-locator".to_string()));
    let f = fixture(&half_typed("{ effort: \"high\", agent: ", ""));
    assert!(f.labels().contains(&"reviewer".to_string()));
    // Copilot's session options and OpenCode's `prompt` name agents too.
    let copilot = "ctx.stage({ name: \"a\" }, {}, { agent: \"$0\" }, async (s) => {});";
    let opencode = "s.client.session.prompt({ sessionID: s.session.id, agent: \"$0\" });";
    for (agent, tail) in [("copilot", copilot), ("opencode", opencode)] {
        let text = half_typed("  .run(async (ctx) => {\n", tail)
            .replace("$0", "")
            .replace(".for<\"claude\">", &format!(".for<\"{agent}\">"));
        let at = text.find("agent: \"").expect("agent") + "agent: \"".len();
        let f = fixture_with(
            "",
            &[(
                &format!(".atomic/workflows/review/{agent}/index.ts")[..],
                &format!("{}$0{}", &text[..at], &text[at..]),
            )],
        );
        assert!(f.labels().contains(&"planner".to_string()), "{agent}: {:?}", f.labels());
    }
    let f = fixture(&half_typed("await s.session.query(`Plan ${ctx.inputs.", ""));
    assert_eq!(f.labels(), ["topic", "depth"]);
    let f = fixture(&half_typed("const plan = await s.transcript(\"", ""));
    assert_eq!(f.labels(), ["plan"], "not `check`, the stage it is in");
    let f = fixture(&half_typed("const again = await ctx.getMessages(\"", "c"));
    assert_eq!(f.labels(), ["plan", "check"]);
}

#[test]
fn definitions_and_references_of_inputs_and_stages() {
    let f = fixture(&at("ctx.inputs.topic", 0, 13));
    let targets = ide::definitions(&f.workspace, f.at());
    assert_eq!(targets.len(), 1);
    assert_eq!(f.show(&targets[0]), ("index.ts".into(), "topic".into()));
    assert_eq!(f.workspace.file(targets[0].file).lines().line_of(targets[0].span.start), 6);
    let references = ide::references(&f.workspace, f.at());
    assert_eq!(references.len(), 2, "both `ctx.inputs.topic`: {references:?}");
    let f = fixture(&at("\"plan\"", 1, 3));
    let targets = ide::definitions(&f.workspace, f.at());
    assert_eq!(targets.iter().map(|t| f.show(t)).collect::<Vec<_>>(), [("index.ts".into(), "plan".into())]);
    assert_eq!(f.workspace.file(targets[0].file).lines().line_of(targets[0].span.start), 13);
    let f = fixture(&at("name: \"plan\"", 0, 8));
    assert_eq!(ide::references(&f.workspace, f.at()).len(), 2, "transcript and getMessages");
}

#[test]
fn an_agent_name_goes_to_its_file() {
    let f = fixture(&at("\"planner\"", 0, 3));
    let targets = ide::definitions(&f.workspace, f.at());
    assert_eq!(targets.len(), 1, "{targets:?}");
    assert!(f.workspace.file(targets[0].file).path.ends_with(PLANNER_AT));
    let links = ide::links(&f.workspace, f.file("index.ts"));
    assert_eq!(links.len(), 1);
    assert_eq!(f.text(f.file("index.ts"), links[0].span), "planner");
    let refused = ide::prepare_rename(&f.workspace, f.at()).expect_err("agent names are file names");
    assert!(refused.contains("agent file"), "{refused}");
}

#[test]
fn rename_inputs_and_stages() {
    let f = fixture(&at("ctx.inputs.depth", 0, 12));
    assert_eq!(f.text(f.at().file, ide::prepare_rename(&f.workspace, f.at()).expect("renamable")), "depth");
    let edits = ide::rename(&f.workspace, f.at(), "level").expect("rename");
    assert_eq!(edits.len(), 2);
    assert!(ide::rename(&f.workspace, f.at(), "topic").is_err(), "taken");
    assert!(ide::rename(&f.workspace, f.at(), "1st").is_err(), "not a --flag");
    assert!(ide::rename(&f.workspace, f.at(), "the-depth").is_err(), "read as ctx.inputs.depth");
    let f = fixture(&at("transcript(\"plan\")", 0, 13));
    let edits = ide::rename(&f.workspace, f.at(), "design").expect("rename");
    assert_eq!(edits.len(), 3, "the name and two reads: {edits:?}");
    assert!(edits.iter().all(|(_, e)| e.replacement == "design"));
    assert!(ide::rename(&f.workspace, f.at(), "check").is_err(), "taken");
    assert!(ide::rename(&f.workspace, f.at(), "a\"b").is_err());
}

#[test]
fn outline_of_workflow_inputs_and_stages() {
    let f = fixture(WORKFLOW);
    let symbols = ide::symbols(&f.workspace, f.file("index.ts"));
    assert_eq!(symbols.len(), 1);
    assert_eq!((symbols[0].name.as_str(), symbols[0].detail.as_deref()), ("review", Some("workflow · claude")));
    let children: Vec<(&str, Option<&str>)> =
        symbols[0].children.iter().map(|s| (s.name.as_str(), s.detail.as_deref())).collect();
    assert_eq!(
        children,
        [
            ("topic", Some("input · text")),
            ("depth", Some("input · enum")),
            ("plan", Some("stage")),
            ("check", Some("headless stage"))
        ]
    );
    let workflow = f.text(f.file("index.ts"), symbols[0].span);
    assert!(
        workflow.starts_with("defineWorkflow({") && workflow.ends_with(".compile();"),
        "not the import: {workflow}"
    );
    let plan = &symbols[0].children[2];
    assert!(
        f.text(f.file("index.ts"), plan.span).starts_with("ctx.stage(")
            && f.text(f.file("index.ts"), plan.span).ends_with(")")
    );
    for symbol in &symbols[0].children {
        assert!(symbol.span.start <= symbol.selection.start && symbol.selection.end <= symbol.span.end, "{symbol:?}");
        assert!(symbols[0].span.start <= symbol.span.start && symbol.span.end <= symbols[0].span.end, "{symbol:?}");
    }
}

/// Other TypeScript is tsserver's: it is not read, so no family answers for it (the server
/// test `a_typescript_file_that_is_no_workflow_gets_nothing` opens one).
#[test]
fn a_ts_file_that_is_no_workflow_is_not_read() {
    let f = fixture_with(WORKFLOW, &[("src/other.ts", "export const x = { name: \"a\", headl };\n")]);
    assert!(f.workspace.files().iter().all(|file| !file.path.ends_with("src/other.ts")));
    assert!(f.workspace.files().iter().any(|file| file.path.ends_with(PATH)));
}

#[test]
fn every_offset_is_answered_without_panicking() {
    let half = &WORKFLOW[..WORKFLOW.len() / 2];
    for text in [WORKFLOW, half] {
        let f = fixture(text);
        let file = f.workspace.file(f.file("index.ts"));
        for offset in 0..=file.text.len() {
            let at = Cursor { file: file.id, offset };
            let _ = ide::completions(&f.workspace, at);
            let _ = ide::hover(&f.workspace, at);
            let _ = ide::definitions(&f.workspace, at);
            let _ = ide::references(&f.workspace, at);
            let _ = ide::prepare_rename(&f.workspace, at);
        }
    }
}

/// A read of a name built at run time matches the template, as `atomic/UnknownStageRef` does.
#[test]
fn hover_on_a_read_of_a_stage_named_at_run_time() {
    let text =
        WORKFLOW.replace("{ name: \"check\", headless: true }", "{ name: `check-${1}`, headless: true }").replace(
            "const again = await ctx.getMessages(\"plan\");",
            "const again = await ctx.getMessages(\"check-$01\");",
        );
    let f = fixture(&text);
    let (under, markdown) = f.hover().expect("hover");
    assert_eq!(under, "check-1");
    assert!(markdown.contains("may be the stage named at run time `check-${1}`"), "{markdown}");
    let f = fixture(&text.replace("check-$01", "chekc-$01"));
    assert!(f.hover().expect("hover").1.contains("UnknownStageRef"));
}

/// atomic's own workflows: each outline holds the workflow with its stages, every string read
/// of a stage finds it (as `atomic/UnknownStageRef` finds nothing there; these workflows read
/// stages through their handles, so there are none today), and the features answer anywhere
/// without panicking.
#[test]
fn the_corpus_workflows_are_outlined_and_their_reads_resolve() {
    for root in ["tests/corpus/atomic/_at-v0.5.24", "tests/corpus/atomic/_at-v0.5.34"] {
        let root = PathBuf::from(root);
        let (workspace, _) = check_with(std::slice::from_ref(&root), Config::defaults(&root));
        let workflows: Vec<_> =
            workspace.files().iter().filter(|f| f.kind == stagelint::workspace::FileKind::AtomicWorkflow).collect();
        assert!(!workflows.is_empty(), "{}", root.display());
        for file in workflows {
            let symbols = ide::symbols(&workspace, file.id);
            let workflow = symbols.iter().find(|s| s.detail.as_deref().is_some_and(|d| d.starts_with("workflow")));
            let workflow = workflow.unwrap_or_else(|| panic!("{}: {symbols:?}", file.display));
            assert!(
                workflow.children.iter().any(|c| c.detail.as_deref().is_some_and(|d| d.ends_with("stage"))),
                "{}",
                file.display
            );
            for (at, _) in file.text.match_indices("transcript(\"").chain(file.text.match_indices("getMessages(\"")) {
                let offset = file.text[at..].find('"').map(|q| at + q + 1).expect("quote");
                let info = ide::hover(&workspace, Cursor { file: file.id, offset }).expect("hover on a read");
                assert!(info.markdown.contains("stage"), "{}: {}", file.display, info.markdown);
                assert!(!info.markdown.contains("UnknownStageRef"), "{}: {}", file.display, info.markdown);
            }
            for offset in (0..file.text.len()).step_by(97).filter(|o| file.text.is_char_boundary(*o)) {
                let at = Cursor { file: file.id, offset };
                let _ = ide::completions(&workspace, at);
                let _ = ide::hover(&workspace, at);
                let _ = ide::definitions(&workspace, at);
            }
        }
    }
}

/// After a finished value (`headless: true |`) the next thing is a `,` or `}`, not another
/// value.
#[test]
fn no_value_is_offered_after_a_finished_one() {
    assert!(fixture(&half_typed("{ name: \"check\", headless: ", "true ")).labels().is_empty());
    assert!(fixture(&half_typed("{ effort: ", "\"high\" ")).labels().is_empty());
    assert_eq!(fixture(&half_typed("{ name: \"check\", headless: ", "t")).labels(), ["true", "false"]);
}

/// `s.transcript("…")` offers the stages whose transcripts are ready there, as
/// `atomic/TranscriptNotReady` judges: not a later stage, not a `Promise.all` sibling.
#[test]
fn transcript_completion_offers_only_finished_stages() {
    let text = r#"import { defineWorkflow } from "@bastani/atomic/workflows";

export default defineWorkflow({ name: "fan" })
  .for<"claude">()
  .run(async (ctx) => {
    await ctx.stage({ name: "scout" }, {}, {}, async (s) => { s.save(s.sessionId); });
    await Promise.all([
      ctx.stage({ name: "left" }, {}, {}, async (s) => { s.save(s.sessionId); }),
      ctx.stage({ name: "right" }, {}, {}, async (s) => {
        await s.transcript("$0");
        s.save(s.sessionId);
      }),
    ]);
    await ctx.stage({ name: "merge" }, {}, {}, async (s) => { s.save(s.sessionId); });
  })
  .compile();
"#;
    let f = fixture_with("", &[(".atomic/workflows/fan/claude/index.ts", text)]);
    assert_eq!(f.labels(), ["scout"]);
}

/// A Copilot workflow is offered the agents Copilot CLI reads (`.github/agents/`), not those of
/// `.claude/agents/`, as `atomic/UnknownAgent` judges.
#[test]
fn agent_completion_follows_the_provider() {
    let text = r#"import { defineWorkflow } from "@bastani/atomic/workflows";

export default defineWorkflow({ name: "review" })
  .for<"copilot">()
  .run(async (ctx) => {
    await ctx.stage({ name: "a" }, {}, { agent: "$0" }, async (s) => { s.save(s.sessionId); });
  })
  .compile();
"#;
    let f = fixture_with(
        "",
        &[
            (".atomic/workflows/review/copilot/index.ts", text),
            (".claude/agents/claude-only.md", "---\nname: claude-only\n---\nx\n"),
            (".github/agents/copilot-one.agent.md", "---\nname: copilot-one\n---\nx\n"),
        ],
    );
    let labels = f.labels();
    assert!(labels.contains(&"copilot-one".to_string()), "{labels:?}");
    assert!(!labels.contains(&"claude-only".to_string()), "{labels:?}");
    assert!(labels.contains(&"planner".to_string()), "the skill and the installed agents: {labels:?}");
}
