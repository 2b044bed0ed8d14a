//! No input may panic or hang the analysis: random and mutated inputs through every parser
//! entry point and through the whole check, plus the classic hostile documents.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use proptest::prelude::*;
use stagelint::config::Config;
use stagelint::source::{frontmatter, json, yaml};
use stagelint::template::lastlight;
use stagelint::template::stage as template;
use stagelint::workspace::{FileKind, Workspace, classify};

const STAGE: &str = "---\nid: plan\nname: Plan\nallowedTools: [Read, Grep]\ncompletionTool: submit_plan\ncompletionSchema:\n  type: object\n  properties:\n    summary: { type: string, $ref: '#/$defs/x' }\nretryPolicy: { maxAttempts: 2, backoff: none }\nturnCap: 20\nresolutionPolicy: retry-later\nnext: { nextStages: [review], execution: sequential }\n---\n\nTask: {{ctx.task}} {{ctx.upstream[0].parsed.summary}} ${ctx.x} {{stage.id}}\n<!-- stagelint: ignore[sm/UnknownTool] -->\nCall submit_plan.\n";
const SM: &str = "entry: plan\ncontext:\n  required: [task]\n# stagelint: ignore[sm/UnknownField]\n";
const SM_JSON: &str =
    "{\"entry\": \"plan\", \"context\": {\"required\": [\"task\"]}, \"x\": [1, 2.5e3, true, null, \"\\u00e9\"]}";

/// Runs the whole analysis over one state machine made of the given texts.
fn check_texts(stage: &str, sm: &str, sm_name: &str) {
    let config = Arc::new(Config::defaults(Path::new("/fuzz")));
    let mut workspace = Workspace::new();
    let stage_path = PathBuf::from("/fuzz/plan.md");
    let kind = classify(&stage_path, stage, &config).unwrap_or(FileKind::Stage);
    workspace.add(stage_path, "plan.md".into(), stage.to_string(), kind, config.clone());
    workspace.add(
        PathBuf::from(format!("/fuzz/{sm_name}")),
        sm_name.into(),
        sm.to_string(),
        FileKind::StateMachine,
        config,
    );
    let diagnostics = stagelint::check::check(&workspace);
    let mut out = Vec::new();
    stagelint::render::full::render(&mut out, &workspace, &diagnostics, false).expect("render");
    stagelint::render::json::render(&mut out, &workspace, &diagnostics, &[]).expect("render");
    for d in &diagnostics {
        let file = workspace.file(d.file);
        assert!(d.span.start <= d.span.end && d.span.end <= file.text.len(), "span out of range: {d:?}");
    }
}

const REGISTRY: &str = include_str!("../examples/climpt/.agent/fixer/steps_registry.json");
const STEP_SCHEMA: &str = include_str!("../examples/climpt/.agent/fixer/schemas/fixer.schema.json");
const AGENT_JSON: &str = include_str!("../examples/climpt/.agent/fixer/agent.json");

/// Runs the whole analysis over one climpt agent made of the given texts.
fn check_agent(registry: &str, schema: &str, agent: &str, prompt: &str) {
    let config = Arc::new(Config::defaults(Path::new("/fuzz")));
    let mut workspace = Workspace::new();
    let dir = PathBuf::from("/fuzz/.agent/fixer");
    let mut add = |path: PathBuf, text: &str, kind| {
        let display = path.display().to_string();
        workspace.add(path, display, text.to_string(), kind, config.clone());
    };
    add(dir.join("steps_registry.json"), registry, FileKind::StepsRegistry);
    add(dir.join("schemas/fixer.schema.json"), schema, FileKind::JsonSchema);
    add(dir.join("agent.json"), agent, FileKind::AgentJson);
    add(dir.join("prompts/steps/initial/issue/f_default.md"), prompt, FileKind::C3lPrompt);
    check_and_render(&workspace);
}

/// Checks, renders (when the output is of readable size) and asserts every span is in range.
fn check_and_render(workspace: &Workspace) {
    let diagnostics = stagelint::check::check(workspace);
    if diagnostics.len() < 1_000 {
        let mut out = Vec::new();
        stagelint::render::full::render(&mut out, workspace, &diagnostics, false).expect("render");
    }
    for d in &diagnostics {
        let file = workspace.file(d.file);
        assert!(d.span.start <= d.span.end && d.span.end <= file.text.len(), "span out of range: {d:?}");
    }
}

const LL_BUILD: &str = include_str!("../examples/lastlight/workflows/build.yaml");
const LL_CRON: &str = include_str!("../examples/lastlight/workflows/cron-build.yaml");
const LL_PROMPT: &str = include_str!("../examples/lastlight/workflows/prompts/plan.md");
const LL_SKILL: &str = include_str!("../examples/lastlight/skills/planning/SKILL.md");

/// Runs the whole analysis over one Last Light project made of the given texts.
fn check_lastlight(workflow: &str, cron: &str, prompt: &str, skill: &str) {
    let config = Arc::new(Config::defaults(Path::new("/fuzz")));
    let mut workspace = Workspace::new();
    let dir = PathBuf::from("/fuzz/workflows");
    let mut add = |path: PathBuf, text: &str, kind| {
        let display = path.display().to_string();
        workspace.add(path, display, text.to_string(), kind, config.clone());
    };
    add(dir.join("build.yaml"), workflow, FileKind::Workflow);
    add(dir.join("cron-build.yaml"), cron, FileKind::Workflow);
    add(dir.join("prompts/plan.md"), prompt, FileKind::WorkflowPrompt);
    add(PathBuf::from("/fuzz/skills/planning/SKILL.md"), skill, FileKind::Skill);
    check_and_render(&workspace);
    // The editor features too, on files of editing size.
    for file in workspace.files().iter().filter(|f| f.text.len() < 10_000) {
        let _ = stagelint::ide::symbols(&workspace, file.id);
        let _ = stagelint::ide::folds(&workspace, file.id);
        let _ = stagelint::ide::links(&workspace, file.id);
        for offset in (0..=file.text.len()).step_by(37).filter(|o| file.text.is_char_boundary(*o)) {
            let at = stagelint::ide::Cursor { file: file.id, offset };
            let _ = stagelint::ide::completions(&workspace, at);
            let _ = stagelint::ide::hover(&workspace, at);
            let _ = stagelint::ide::references(&workspace, at);
        }
    }
}

fn every_parser(text: &str) {
    let _ = frontmatter::split(text);
    let _ = yaml::parse(text);
    let _ = json::parse(text);
    let _ = template::parse(text, 0);
    for engine in [lastlight::Engine::Head, lastlight::Engine::Seed] {
        let tags = lastlight::parse(text, 0, engine);
        let _ = lastlight::blocks(&tags);
    }
    for dotted_contains in [true, false] {
        let _ = stagelint::template::until::parse(text, dotted_contains);
    }
    for engine in [lastlight::Engine::Head, lastlight::Engine::Seed] {
        // The Last Light engine's renderer and `until` evaluator, with a context holding values
        // of every kind and the text itself.
        let ctx = serde_json::json!({
            "issueTitle": text, "issueLabels": [text, 1], "phaseOutputs": {"plan": text, "loop": {"output": text}},
            "models": {"a-b": text}, "owner": null, "publicUrl": "https://x/", "approvalId": 1.5, "output": text,
        });
        let ctx = stagelint::runtime::lastlight::value::Ctx::from_map(ctx.as_object().expect("object"));
        let rendered = stagelint::runtime::lastlight::render::render(text, &ctx, engine);
        for mark in &rendered.marks {
            if let Some((start, end)) = mark.range {
                assert!(
                    start <= end
                        && end <= rendered.text.len()
                        && rendered.text.is_char_boundary(start)
                        && rendered.text.is_char_boundary(end),
                    "{mark:?}"
                );
            }
        }
        let _ = stagelint::runtime::lastlight::until::eval(text, &ctx, engine);
    }
    let _ = Config::parse(text, Path::new("/fuzz/stagelint.toml"));
}

/// Byte-level mutations that keep the text UTF-8: insert, delete or replace a char.
fn mutate(seed: &str, edits: &[(usize, u8, char)]) -> String {
    let mut chars: Vec<char> = seed.chars().collect();
    for &(at, op, c) in edits {
        if chars.is_empty() {
            chars.push(c);
            continue;
        }
        let at = at % chars.len();
        match op % 3 {
            0 => chars.insert(at, c),
            1 => {
                chars.remove(at);
            }
            _ => chars[at] = c,
        }
    }
    chars.into_iter().collect()
}

fn interesting_char() -> impl Strategy<Value = char> {
    prop_oneof![
        Just('{'),
        Just('}'),
        Just('['),
        Just(']'),
        Just(':'),
        Just('-'),
        Just('\n'),
        Just('\r'),
        Just(' '),
        Just('"'),
        Just('\''),
        Just('#'),
        Just('&'),
        Just('*'),
        Just('!'),
        Just('$'),
        Just('|'),
        Just('>'),
        Just('\t'),
        Just('é'),
        Just('😀'),
        Just('\u{feff}'),
        any::<char>(),
    ]
}

const MACHINE: [(&str, &str); 7] = [
    ("sm.yaml", include_str!("../examples/code-review/sm.yaml")),
    ("plan.md", include_str!("../examples/code-review/plan.md")),
    ("execute.md", include_str!("../examples/code-review/execute.md")),
    ("test.md", include_str!("../examples/code-review/test.md")),
    ("lint.md", include_str!("../examples/code-review/lint.md")),
    ("review.md", include_str!("../examples/code-review/review.md")),
    ("sm.cassette.yaml", include_str!("../examples/code-review/sm.cassette.yaml")),
];

/// The example machine with `mutated` replacing one file: the check (which replays the
/// cassette) and a dry-run of the machine must not panic, and every span must be in range.
fn dry_run_machine(mutated: (&str, &str)) {
    let config = Arc::new(Config::defaults(Path::new("/fuzz")));
    let mut workspace = Workspace::new();
    for (name, text) in MACHINE {
        let text = if name == mutated.0 { mutated.1 } else { text };
        let path = PathBuf::from(format!("/fuzz/{name}"));
        let kind = classify(&path, text, &config).unwrap_or(FileKind::Stage);
        workspace.add(path, name.into(), text.to_string(), kind, config.clone());
    }
    let diagnostics = stagelint::check::check(&workspace);
    let sm = workspace.files()[0].id;
    let cassette = workspace.files()[6].id;
    let options = stagelint::runtime::Options { strict: true, explain_init: true };
    let run = stagelint::runtime::machine(&workspace, sm, Some(cassette), options);
    let _ = stagelint::runtime::report::timeline(&workspace, &run);
    for d in diagnostics.iter().chain(&run.findings) {
        let file = workspace.file(d.file);
        assert!(d.span.start <= d.span.end && d.span.end <= file.text.len(), "span out of range: {d:?}");
    }
}

/// The example Last Light project (`examples/lastlight`), with its cassette.
const LASTLIGHT: [(&str, &str); 8] = [
    ("workflows/build.yaml", include_str!("../examples/lastlight/workflows/build.yaml")),
    ("workflows/prompts/plan.md", include_str!("../examples/lastlight/workflows/prompts/plan.md")),
    ("workflows/prompts/implement.md", include_str!("../examples/lastlight/workflows/prompts/implement.md")),
    ("workflows/prompts/review.md", include_str!("../examples/lastlight/workflows/prompts/review.md")),
    ("workflows/prompts/fix.md", include_str!("../examples/lastlight/workflows/prompts/fix.md")),
    ("workflows/prompts/pr.md", include_str!("../examples/lastlight/workflows/prompts/pr.md")),
    ("skills/planning/SKILL.md", include_str!("../examples/lastlight/skills/planning/SKILL.md")),
    (
        "workflows/cassettes/build.cassette.yaml",
        include_str!("../examples/lastlight/workflows/cassettes/build.cassette.yaml"),
    ),
];

/// The example Last Light project with `mutated` replacing one file, at a seed-era, a middle
/// and the newest release: the
/// check (which replays the cassette), the dry-run, its timeline and each phase's preview must
/// not panic, and every span must be in range.
fn dry_run_workflow(mutated: (&str, &str)) {
    use stagelint::registry::releases::lastlight as releases;
    for release in [releases::SEED, releases::V0_10_2, releases::NEWEST] {
        let mut config = Config::defaults(Path::new("/fuzz"));
        config.lastlight.release = releases::Target::exact(release);
        let config = Arc::new(config);
        let mut workspace = Workspace::new();
        for (name, text) in LASTLIGHT {
            let text = if name == mutated.0 { mutated.1 } else { text };
            let path = PathBuf::from(format!("/fuzz/{name}"));
            let kind = match name {
                n if n.ends_with(".cassette.yaml") => FileKind::Cassette,
                n if n.ends_with("SKILL.md") => FileKind::Skill,
                n if n.ends_with(".md") => FileKind::WorkflowPrompt,
                _ => FileKind::Workflow,
            };
            workspace.add(path, name.into(), text.to_string(), kind, config.clone());
        }
        let diagnostics = stagelint::check::check(&workspace);
        let workflow = workspace.files()[0].id;
        let cassette = workspace.files()[7].id;
        let options = stagelint::runtime::Options { strict: false, explain_init: true };
        let run = stagelint::runtime::lastlight::dry_run(&workspace, workflow, cassette, options);
        let _ = stagelint::runtime::report::timeline_with(&workspace, &run, true);
        for phase in ["plan", "implement", "review", "pr", "phase_0", "nope"] {
            let _ = stagelint::runtime::preview(&workspace, workflow, phase, &[]);
        }
        for d in diagnostics.iter().chain(&run.findings) {
            let file = workspace.file(d.file);
            assert!(d.span.start <= d.span.end && d.span.end <= file.text.len(), "span out of range: {d:?}");
            for related in &d.related {
                let file = workspace.file(related.file.unwrap_or(d.file));
                assert!(related.span.end <= file.text.len(), "related span out of range: {d:?}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn mutated_workflow_projects_never_panic_the_last_light_runtime(edits in prop::collection::vec((any::<usize>(), any::<u8>(), interesting_char()), 1..12), which in 0usize..8) {
        let (name, text) = LASTLIGHT[which];
        dry_run_workflow((name, &mutate(text, &edits)));
    }

    #[test]
    fn random_text_as_a_workflow_cassette_never_panics(text in "\\PC{0,300}") {
        dry_run_workflow(("workflows/cassettes/build.cassette.yaml", &format!("cassette: 1\nworkflow: build\n{text}")));
        dry_run_workflow(("workflows/cassettes/build.cassette.yaml", &text));
    }

    #[test]
    fn mutated_cassettes_and_stages_never_panic_the_runtime(edits in prop::collection::vec((any::<usize>(), any::<u8>(), interesting_char()), 1..12)) {
        dry_run_machine(("sm.cassette.yaml", &mutate(MACHINE[6].1, &edits)));
        dry_run_machine(("execute.md", &mutate(MACHINE[2].1, &edits)));
        let (cassette, _) = stagelint::runtime::cassette::read(&mutate(MACHINE[6].1, &edits), false);
        let _ = cassette.for_stage("plan", 1);
    }

    #[test]
    fn random_text_as_a_cassette_never_panics(text in "\\PC{0,300}") {
        dry_run_machine(("sm.cassette.yaml", &text));
    }

    #[test]
    fn random_text_never_panics(text in "\\PC{0,200}") {
        every_parser(&text);
        check_texts(&text, &text, "sm.yaml");
        check_lastlight(&text, &text, &text, &text);
    }

    #[test]
    fn mutated_stage_files_never_panic(edits in prop::collection::vec((any::<usize>(), any::<u8>(), interesting_char()), 1..12)) {
        let stage = mutate(STAGE, &edits);
        every_parser(&stage);
        check_texts(&stage, SM, "sm.yaml");
    }

    #[test]
    fn mutated_climpt_agents_never_panic(edits in prop::collection::vec((any::<usize>(), any::<u8>(), interesting_char()), 1..12)) {
        let prompt = "---\nuvVariables: [issue]\n---\nIssue {uv-issue} {input_text} {uv-x";
        check_agent(&mutate(REGISTRY, &edits), STEP_SCHEMA, AGENT_JSON, prompt);
        check_agent(REGISTRY, &mutate(STEP_SCHEMA, &edits), &mutate(AGENT_JSON, &edits), &mutate(prompt, &edits));
    }

    #[test]
    fn mutated_lastlight_projects_never_panic(edits in prop::collection::vec((any::<usize>(), any::<u8>(), interesting_char()), 1..12)) {
        let workflow = mutate(LL_BUILD, &edits);
        every_parser(&workflow);
        check_lastlight(&workflow, LL_CRON, LL_PROMPT, LL_SKILL);
        check_lastlight(LL_BUILD, &mutate(LL_CRON, &edits), &mutate(LL_PROMPT, &edits), &mutate(LL_SKILL, &edits));
    }

    #[test]
    fn mutated_state_machines_never_panic(edits in prop::collection::vec((any::<usize>(), any::<u8>(), interesting_char()), 1..12)) {
        let sm = mutate(SM, &edits);
        let sm_json = mutate(SM_JSON, &edits);
        every_parser(&sm);
        every_parser(&sm_json);
        check_texts(STAGE, &sm, "sm.yaml");
        check_texts(STAGE, &sm_json, "sm.json");
    }
}

fn stage_with_frontmatter(extra: &str) -> String {
    STAGE.replacen("---\nid: plan\n", &format!("---\n{extra}\nid: plan\n"), 1)
}

#[test]
fn yaml_alias_bomb_is_reported_not_expanded() {
    let mut bomb = String::from("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    for (i, name) in ["b", "c", "d", "e", "f", "g", "h", "i"].iter().enumerate() {
        let prev = ["a", "b", "c", "d", "e", "f", "g", "h"][i];
        let refs = vec![format!("*{prev}"); 9].join(",");
        bomb.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    let parsed = yaml::parse(&bomb);
    assert!(parsed.root.is_none());
    assert!(parsed.errors.iter().any(|e| e.message.contains("alias")), "{:?}", parsed.errors);
    let stage = format!("---\n{bomb}completionTool: x\n---\nbody\n");
    let config = Config::defaults(Path::new("/fuzz"));
    let (workspace, diagnostics) = in_memory(&stage, config);
    assert!(diagnostics.iter().any(|d| d.code == "sm/FrontmatterSyntax" && d.message.contains("alias")));
    drop(workspace);
}

#[test]
fn ten_thousand_levels_of_nesting_are_reported() {
    let flow = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    assert!(yaml::parse(&flow).errors.iter().any(|e| e.message.contains("nesting")));
    assert!(json::parse(&flow).errors.iter().any(|e| e.message.contains("nesting")));
    let block: String = (0..10_000).map(|i| format!("{}k:\n", " ".repeat(i))).collect();
    assert!(yaml::parse(&block).errors.iter().any(|e| e.message.contains("nesting")));
    let stage = format!("---\ncompletionTool: x\ndeep: {flow}\n---\nbody\n");
    let (_, diagnostics) = in_memory(&stage, Config::defaults(Path::new("/fuzz")));
    assert!(diagnostics.iter().any(|d| d.code == "sm/FrontmatterSyntax" && d.message.contains("nesting")));
}

#[test]
fn a_ten_megabyte_stage_file_is_checked() {
    let line = "Some long prompt text with a {{ctx.task}} placeholder and ${HOME} in it.\n";
    let body = line.repeat(10 * 1024 * 1024 / line.len());
    let stage = format!("{}{body}", stage_with_frontmatter("description: big"));
    assert!(stage.len() >= 10 * 1024 * 1024);
    let (_, diagnostics) = in_memory(&stage, Config::defaults(Path::new("/fuzz")));
    // The stage is valid apart from its standalone `next`; nothing may blow up on size.
    assert!(diagnostics.iter().all(|d| d.code != "sm/FrontmatterSyntax"));
}

#[test]
fn remote_schema_refs_are_reported_never_fetched() {
    let stage = STAGE.replace("'#/$defs/x'", "'https://example.invalid/schema.json'");
    let (_, diagnostics) = in_memory(&stage, Config::defaults(Path::new("/fuzz")));
    let found = diagnostics
        .iter()
        .find(|d| d.code == "sm/StageCompletionSchemaInvalid" && d.message.contains("never fetched"))
        .expect("remote $ref reported");
    assert!(found.message.contains("https://example.invalid/schema.json"));
}

#[test]
fn invalid_utf8_and_binary_files_are_findings() {
    use stagelint::source::read::decode;
    let bad = decode(b"---\nname: Caf\xe9\n---\n".to_vec()).expect_err("not UTF-8");
    assert_eq!(bad.offset, 13);
    assert!(bad.message.contains("not valid UTF-8"));
    let binary = decode(b"\x00\x01\x02".to_vec()).expect_err("binary");
    assert!(binary.message.contains("binary"));
}

fn in_memory(stage: &str, config: Config) -> (Workspace, Vec<stagelint::diagnostic::Diagnostic>) {
    let config = Arc::new(config);
    let mut workspace = Workspace::new();
    workspace.add(PathBuf::from("/fuzz/plan.md"), "plan.md".into(), stage.to_string(), FileKind::Stage, config);
    let diagnostics = stagelint::check::check(&workspace);
    (workspace, diagnostics)
}

#[test]
fn hostile_lastlight_workflows_are_findings() {
    let bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nname: bomb\nphases: []\n";
    check_lastlight(bomb, LL_CRON, LL_PROMPT, LL_SKILL);
    let deep = format!("name: deep\nphases:\n  - name: a\n    prompt: {}x{}\n", "[".repeat(10_000), "]".repeat(10_000));
    check_lastlight(&deep, LL_CRON, LL_PROMPT, LL_SKILL);
    let huge_prompt = "{{#if a}}{{b}}${c.output}{{ x }}\n".repeat(20_000);
    check_lastlight(LL_BUILD, LL_CRON, &huge_prompt, LL_SKILL);
}

/// Unterminated `{{` used to cost time quadratic in their number (400 KB of `{{x ` took 17 s, a
/// 1 MB run of `{` minutes); the scan is linear now. No timing assertion: the test harness's
/// timeout is the guard.
#[test]
fn megabytes_of_unterminated_tags_are_checked() {
    let prompt = format!("{}{}{}", "{{x ".repeat(250_000), "{".repeat(1_000_000), "${a ".repeat(100_000));
    assert!(prompt.len() > 2_000_000);
    check_lastlight(LL_BUILD, LL_CRON, &prompt, LL_SKILL);
    let message = format!(
        "name: big\nfinal_message: \"{}\"\nphases:\n  - name: a\n    prompt: prompts/plan.md\n",
        "{{x ".repeat(250_000)
    );
    check_lastlight(&message, LL_CRON, LL_PROMPT, LL_SKILL);
}

/// A chain of 5 000 stages whose last one leads back to the first: `sm/NextCycle` walks the
/// run without recursion, so a long machine is one finding, not a stack overflow.
#[test]
fn a_five_thousand_stage_cycle_is_one_finding() {
    let config = Arc::new(Config::defaults(Path::new("/big")));
    let mut workspace = Workspace::new();
    let n = 5_000;
    for i in 0..n {
        let next = format!("s{}", (i + 1) % n);
        let text = format!(
            "---\nid: s{i}\nname: S\nallowedTools: []\ncompletionTool: done\ncompletionSchema: {{ type: object }}\nretryPolicy: {{ maxAttempts: 1, backoff: none }}\nturnCap: 1\nresolutionPolicy: retry-later\nnext: {{ nextStages: [{next}] }}\n---\nCall done.\n"
        );
        workspace.add(
            PathBuf::from(format!("/big/s{i}.md")),
            format!("s{i}.md"),
            text,
            FileKind::Stage,
            config.clone(),
        );
    }
    workspace.add(
        PathBuf::from("/big/sm.yaml"),
        "sm.yaml".into(),
        "entry: s0\n".into(),
        FileKind::StateMachine,
        config,
    );
    let diagnostics = stagelint::check::check(&workspace);
    let cycles: Vec<_> = diagnostics.iter().filter(|d| d.code == "sm/NextCycle").collect();
    assert_eq!(cycles.len(), 1, "{:?}", diagnostics.iter().map(|d| d.code).collect::<Vec<_>>());
    assert_eq!(workspace.file(cycles[0].file).display, format!("s{}.md", n - 1));
    assert!(
        cycles[0].message.contains("`s0` → `s1` → `s2` → … (5000 stages) … → `s4999` → `s0`"),
        "{}",
        cycles[0].message
    );
}

const ATOMIC: &str = "import { defineWorkflow } from \"@bastani/atomic/workflows\";\n\n// stagelint: ignore[atomic/NameMismatch]\nexport default defineWorkflow({ name: \"hello\", inputs: [{ name: \"style\", type: \"enum\", values: [\"a\"], default: \"a\" }] })\n  .for<\"claude\">()\n  .run(async (ctx) => {\n    await ctx.stage({ name: \"greet\", headless: true }, { chatFlags: [] }, {}, async (s) => {\n      await s.session.query(`Say ${ctx.inputs.style} hello.`);\n      s.save(s.sessionId);\n    });\n  })\n  .compile();\n";

/// The whole check over one atomic workflow text, on a thread with `stack` bytes of stack (a
/// `par_map` worker has the platform default, 2 MiB).
fn check_atomic(text: &str, stack: usize) -> Vec<stagelint::diagnostic::Diagnostic> {
    let text = text.to_string();
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            let config = Arc::new(Config::defaults(Path::new("/fuzz")));
            let mut workspace = Workspace::new();
            let path = PathBuf::from("/fuzz/.atomic/workflows/hello/claude/index.ts");
            workspace.add(path, "index.ts".into(), text, FileKind::AtomicWorkflow, config);
            let diagnostics = stagelint::check::check(&workspace);
            check_and_render(&workspace);
            diagnostics
        })
        .expect("spawn")
        .join()
        .expect("no panic, no stack overflow")
}

#[test]
fn deeply_nested_typescript_is_a_finding_not_a_stack_overflow() {
    let deep = format!("export default {}{};\n", "[".repeat(10_000), "]".repeat(10_000));
    let found = check_atomic(&deep, 256 * 1024);
    assert!(found.iter().any(|d| d.code == "atomic/SyntaxError" && d.message.contains("nested deeper")), "{found:?}");
    // A suppression comment in such a file is not read (the file is not parsed) and breaks nothing.
    let suppressed = format!("// stagelint: ignore[atomic/SyntaxError]\n{deep}");
    assert!(check_atomic(&suppressed, 256 * 1024).iter().any(|d| d.code == "atomic/SyntaxError"));
    // Just under the limit, every kind of bracket, parsed from a small stack (the deep file
    // gets a thread of its own).
    let mixed: String = ["(", "[", "{ a: "].iter().cycle().take(999).copied().collect();
    let closing: String = mixed
        .chars()
        .rev()
        .filter_map(|c| match c {
            '(' => Some(')'),
            '[' => Some(']'),
            '{' => Some('}'),
            _ => None,
        })
        .collect();
    let text = format!("export default {mixed}1{closing};\n");
    let found = check_atomic(&text, 256 * 1024);
    assert!(!found.iter().any(|d| d.code == "atomic/SyntaxError"), "{found:?}");
}

/// Valid TypeScript that nests without brackets: an `else if` ladder nests each `if` in the one
/// before, a chain of `+` each operand; these once overflowed the stack (a 4,000-step ladder
/// killed the language server).
#[test]
fn deep_statements_and_long_chains_are_checked_not_a_stack_overflow() {
    let workflow = |body: String| format!("{}\n{body}", ATOMIC);
    let ladder: String = (1..20_000).map(|i| format!("  else if (x === {i}) return {i};\n")).collect();
    let ladder =
        workflow(format!("function h(x: number): number {{\n  if (x === 0) return 0;\n{ladder}  return -1;\n}}\n"));
    let nested = workflow(format!("function g(a: boolean) {{ {} return; }}\n", "if (a) ".repeat(20_000)));
    let lines: String = (0..5_000).map(|i| format!("  \"line {i}\\n\" +\n")).collect();
    let chain = workflow(format!("const P =\n{lines}  \"\";\n"));
    // Stages in the arms: the stage graph's rules read what the walk found, on the caller's stack.
    let arms: String = (1..3_000)
        .map(|i| format!("    else if (ctx.inputs.style === \"{i}\") await ctx.stage({{ name: \"s{i}\" }}, {{}}, {{}}, async (s) => {{ s.save(s.sessionId); }});\n"))
        .collect();
    let staged = ATOMIC.replace(
        "  .run(async (ctx) => {\n",
        &format!("  .run(async (ctx) => {{\n    if (ctx.inputs.style === \"0\") await ctx.stage({{ name: \"s0\" }}, {{}}, {{}}, async (s) => {{ s.save(s.sessionId); }});\n{arms}"),
    );
    // oxc reads each `<` as a possible type argument list and backtracks: a long chain took
    // minutes, so past 500 it is refused at once.
    let compared = workflow(format!("const D = x{};\n", " < x".repeat(15_000)));
    let found = check_atomic(&compared, 256 * 1024);
    assert!(found.iter().any(|d| d.code == "atomic/SyntaxError" && d.message.contains("comparisons")), "{found:?}");
    // `&&` is one operator each: 15,000 of them are under the limit.
    let anded = workflow(format!("const E = a{};\n", " && a".repeat(15_000)));
    for text in [ladder, nested, chain, staged, anded] {
        let found = check_atomic(&text, 256 * 1024);
        assert!(!found.iter().any(|d| d.code == "atomic/SyntaxError"), "{found:?}");
    }
}

#[test]
fn half_typed_atomic_workflows_are_a_syntax_error() {
    let cut = &ATOMIC[..ATOMIC.find("headless").unwrap() + 5];
    let found = check_atomic(cut, 2 * 1024 * 1024);
    assert_eq!(found.iter().map(|d| d.code).collect::<Vec<_>>(), ["atomic/SyntaxError"], "{found:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn mutated_atomic_workflows_never_panic(edits in prop::collection::vec((any::<usize>(), any::<u8>(), interesting_char()), 1..12)) {
        check_atomic(&mutate(ATOMIC, &edits), 2 * 1024 * 1024);
    }
}

#[test]
fn long_operator_chains_are_a_finding_not_a_stack_overflow() {
    for (name, text) in [
        ("unary", format!("export default {}1;\n", "!".repeat(100_000))),
        ("binary", format!("export default 1{};\n", "+1".repeat(100_000))),
        ("arrow", format!("export default {}1;\n", "a=>".repeat(100_000))),
        ("ternary", format!("export default {}1;\n", "a?b:".repeat(100_000))),
        ("member", format!("export default a{};\n", ".b".repeat(100_000))),
        ("assign", format!("export default {}1;\n", "a=".repeat(100_000))),
    ] {
        let found = check_atomic(&text, 2 * 1024 * 1024);
        assert!(found.iter().any(|d| d.code == "atomic/SyntaxError" && d.message.contains("operators")), "{name}");
    }
    // Just under the limits: 127 brackets around the longest chain allowed, on a worker's stack.
    let limit = stagelint::source::MAX_DEPTH - 1;
    let text = format!("export default {}{}1{};\n", "[".repeat(limit), "!".repeat(1000), "]".repeat(limit));
    let found = check_atomic(&text, 2 * 1024 * 1024);
    assert!(!found.iter().any(|d| d.code == "atomic/SyntaxError"), "{found:?}");
}

/// Issue 19 (docs/security.md): discovery never reads through a symlink or a `..` reference
/// that leaves the workspace. Linked files and directories are not walked into; a prompt named
/// by a workflow or a `$schema` outside the repository is not read.
#[cfg(unix)]
#[test]
fn links_and_references_that_leave_the_workspace_are_not_read() {
    const MARK: &str = "OUTSIDE-THE-WORKSPACE";
    let dir = tempfile::tempdir().expect("temp dir");
    let outside = dir.path().join("elsewhere");
    let repo = dir.path().join("repo");
    for sub in ["workflows/prompts", ".git", "agent/schemas"] {
        std::fs::create_dir_all(repo.join(sub)).expect("mkdir");
    }
    std::fs::create_dir_all(&outside).expect("mkdir");
    let stage = format!("---\nid: leak\nname: {MARK}\n---\n{MARK}\n");
    std::fs::write(outside.join("stage.md"), &stage).expect("write");
    std::fs::write(outside.join("prompt.md"), MARK).expect("write");
    std::fs::write(outside.join("schema.json"), format!("{{\"title\": \"{MARK}\"}}")).expect("write");
    std::os::unix::fs::symlink(outside.join("stage.md"), repo.join("plan.md")).expect("symlink");
    std::os::unix::fs::symlink(&outside, repo.join("linked")).expect("symlink");
    std::os::unix::fs::symlink(outside.join("prompt.md"), repo.join("workflows/prompts/linked.md")).expect("symlink");
    std::fs::write(repo.join("workflows/prompts/plan.md"), "Plan issue #{{issueNumber}}.\n").expect("write");
    let workflow = "name: build\nphases:\n  - name: plan\n    prompt: prompts/plan.md\n  - name: leak\n    prompt: ../../elsewhere/prompt.md\n    depends_on: [plan]\n  - name: linked\n    prompt: prompts/linked.md\n    depends_on: [plan]\n";
    std::fs::write(repo.join("workflows/build.yaml"), workflow).expect("write");
    let registry = r#"{"$schema": "../../elsewhere/schema.json", "agentId": "agent", "version": "1.0.0", "c1": "steps", "steps": {}}"#;
    std::fs::write(repo.join("agent/steps_registry.json"), registry).expect("write");

    let mut configs = stagelint::workspace::discover::ConfigCache::new(Some(Config::defaults(&repo)));
    let workspace =
        stagelint::workspace::discover::discover(std::slice::from_ref(&repo), &mut configs).expect("discovers");
    let read: Vec<String> = workspace.files().iter().map(|f| f.display.clone()).collect();
    assert!(read.iter().any(|f| f.ends_with("prompts/plan.md")), "the workflow's own prompt is read: {read:?}");
    for file in workspace.files() {
        assert!(!file.text.contains(MARK), "{} was read from outside the workspace", file.display);
    }
    // What `check` reports still never quotes the outside files.
    let findings = stagelint::check::check(&workspace);
    assert!(!findings.iter().any(|d| d.message.contains(MARK)), "{findings:?}");
}

/// The Deno files a climpt agent's release is read from: only the nearest project's, inside the
/// repository, and never through a link (a `deno.json` linked from elsewhere, or one above `.git`).
#[test]
fn climpt_pins_are_read_only_inside_the_repository() {
    let dir = tempfile::tempdir().expect("temp dir");
    let outside = dir.path().join("elsewhere");
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&outside).expect("mkdir");
    let pinned = r#"{"imports": {"@aidevtool/climpt": "jsr:@aidevtool/climpt@1.11.0"}}"#;
    std::fs::write(outside.join("deno.json"), pinned).expect("write");
    // Above the repository's root: not read.
    std::fs::write(dir.path().join("deno.json"), pinned).expect("write");
    let registry = r#"{"agentId": "agent", "version": "1.0.0", "c1": "steps", "steps": {}}"#;
    let agent_dir = |name: &str| repo.join(name).join(".agent/agent");
    for name in ["linked", "plain"] {
        std::fs::create_dir_all(agent_dir(name)).expect("mkdir");
        std::fs::write(agent_dir(name).join("steps_registry.json"), registry).expect("write");
    }
    std::fs::create_dir_all(repo.join(".git")).expect("mkdir");
    std::os::unix::fs::symlink(outside.join("deno.json"), repo.join("linked/deno.json")).expect("symlink");
    std::fs::write(repo.join("plain/deno.json"), pinned).expect("write");

    let mut configs = stagelint::workspace::discover::ConfigCache::new(Some(Config::defaults(&repo)));
    let workspace =
        stagelint::workspace::discover::discover(std::slice::from_ref(&repo), &mut configs).expect("discovers");
    let pin_of = |name: &str| {
        let registry = workspace
            .files()
            .iter()
            .find(|f| f.path.starts_with(repo.join(name)) && f.path.ends_with("steps_registry.json"));
        let agent = registry.and_then(|f| f.path.parent()).expect("the agent is discovered");
        workspace.climpt_pin(agent).map(|pin| format!("{pin:?}"))
    };
    assert!(
        pin_of("plain").is_some_and(|pin| pin.contains("1.11.0")),
        "the repository's own deno.json is read: {:?}",
        pin_of("plain")
    );
    assert_eq!(pin_of("linked"), None, "a linked deno.json, and the one above `.git`, are not read");
}

/// The one read above the workspace: `stagelint.toml` (or `.stagelint.toml`) in an ancestor
/// directory, which applies. Nothing else there is read: not a stage, not an `sm.yaml` (the
/// repository root, with `.git`, ends the search for a machine), not a skill or a prompt.
#[test]
fn configs_found_upward_are_the_only_reads_above_the_workspace() {
    const MARK: &str = "ABOVE-THE-WORKSPACE";
    for config_name in ["stagelint.toml", ".stagelint.toml"] {
        let dir = tempfile::tempdir().expect("temp dir");
        let above = dir.path().join("above");
        let repo = above.join("repo");
        std::fs::create_dir_all(repo.join(".git")).expect("mkdir");
        std::fs::create_dir_all(above.join("workflows")).expect("mkdir");
        // The config above turns a rule off, and its effect shows in the repository.
        std::fs::write(above.join(config_name), "[rules]\n\"sm/StageTurnCapTooLow\" = \"off\"\n").expect("write");
        let stray = format!("---\nid: {MARK}\nname: {MARK}\nturnCap: 0\n---\n{{{{ctx.{MARK}}}}}\n");
        std::fs::write(above.join("stray.md"), &stray).expect("write");
        std::fs::write(above.join("sm.yaml"), format!("entry: {MARK}\n")).expect("write");
        std::fs::write(above.join("workflows/build.yaml"), format!("name: {MARK}\nphases: []\n")).expect("write");
        std::fs::write(repo.join("sm.yaml"), "entry: plan\ncontext:\n  required: [task]\n").expect("write");
        let stage = "---\nid: plan\nname: Plan\nallowedTools: [Read]\ncompletionTool: done\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 0\nresolutionPolicy: retry-later\n---\n\nDo {{ctx.task}}; call done.\n";
        std::fs::write(repo.join("plan.md"), stage).expect("write");
        // A workflow of the repository names the stage above as its prompt: not read either.
        std::fs::create_dir_all(repo.join("workflows")).expect("mkdir");
        let workflow = "name: build\nphases:\n  - name: plan\n    prompt: ../../stray.md\n";
        std::fs::write(repo.join("workflows/build.yaml"), workflow).expect("write");

        let mut configs = stagelint::workspace::discover::ConfigCache::new(None);
        let workspace =
            stagelint::workspace::discover::discover(std::slice::from_ref(&repo), &mut configs).expect("discovers");
        let read: Vec<&Path> = workspace.files().iter().map(|f| f.path.as_path()).collect();
        assert!(read.iter().all(|p| p.starts_with(&repo)), "{config_name}: read above the workspace: {read:?}");
        assert!(read.contains(&repo.join("workflows/build.yaml").as_path()), "the workflow is read: {read:?}");
        for file in workspace.files() {
            assert!(!file.text.contains(MARK), "{}: {} was read from above", config_name, file.display);
        }
        let plan = workspace.files().iter().find(|f| f.path.ends_with("plan.md")).expect("plan.md is read");
        assert_eq!(plan.config.path.as_deref(), Some(above.join(config_name).as_path()), "the config above governs");
        let findings = stagelint::check::check(&workspace);
        assert!(!findings.iter().any(|d| d.code == "sm/StageTurnCapTooLow"), "{config_name} applies: {findings:?}");
        assert!(!findings.iter().any(|d| d.message.contains(MARK)), "{findings:?}");
        // Without the config, the same repository has the finding: the config made the difference.
        std::fs::remove_file(above.join(config_name)).expect("remove");
        let mut configs = stagelint::workspace::discover::ConfigCache::new(None);
        let workspace =
            stagelint::workspace::discover::discover(std::slice::from_ref(&repo), &mut configs).expect("discovers");
        let findings = stagelint::check::check(&workspace);
        assert!(findings.iter().any(|d| d.code == "sm/StageTurnCapTooLow"), "{findings:?}");
    }
}
