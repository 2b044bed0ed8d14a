//! Editor features of the `sm/` family on small state machines: completion (also in a
//! half-typed frontmatter), hover, definitions, references, rename and the outline.

mod common;

use common::check_with;
use stagelint::config::Config;
use stagelint::families::Family;
use stagelint::ide::{self, CompletionItem, CompletionKind, Cursor, SymbolKind, Target};
use stagelint::source::Span;

const SM: &str = "entry: plan\ncontext:\n  required: [task]\n  optional: [branch]\n";

const PLAN: &str = "---
id: plan
name: Plan
description: Decide what to do.
allowedTools: [Read, Grep]
completionTool: submit_plan
completionSchema:
  type: object
  required: [summary]
  properties:
    summary: { type: string, description: One-line plan. }
    steps:
      type: array
      items:
        type: object
        properties:
          title: { type: string, description: What the step does. }
retryPolicy: { maxAttempts: 2, backoff: none }
turnCap: 20
resolutionPolicy: retry-later
next:
  nextStages: [execute]
---
Task: {{ctx.task}}. Call submit_plan with a summary.
";

const EXECUTE: &str = "---
id: execute
name: Execute
allowedTools: [Bash]
completionTool: submit_result
completionSchema:
  type: object
  properties:
    ok: { type: boolean }
retryPolicy: { maxAttempts: 1, backoff: none }
turnCap: 30
resolutionPolicy: fail
next:
  nextStages: [test, lint]
  execution: parallel
  join: review
---
Plan: {{ctx.upstream[0].parsed.summary}}. Call submit_result.
";

/// A stage with the required fields, the given completion properties, extra frontmatter and body.
fn stage(id: &str, properties: &str, extra: &str, body: &str) -> String {
    format!(
        "---\nid: {id}\nname: {id}\nallowedTools: []\ncompletionTool: submit_{id}\ncompletionSchema:\n  type: object\n  properties: {{ {properties} }}\nretryPolicy: {{ maxAttempts: 1, backoff: none }}\nturnCap: 5\nresolutionPolicy: fail\n{extra}---\n{body} Call submit_{id}.\n"
    )
}

/// The state machine plan → execute → (test ∥ lint) → review → plan, with `overrides`
/// replacing or adding files. One text may mark the cursor with `$0`.
fn machine(overrides: &[(&str, &str)]) -> Fixture {
    let test = stage("test", "passed: { type: boolean }", "", "Test.");
    let lint = stage("lint", "warnings: { type: integer, description: How many. }", "", "Lint.");
    let review = stage(
        "review",
        "approved: { type: boolean }",
        "next:\n  nextStages: [\"plan\"]\n",
        "Warnings: {{ctx.upstream[1].parsed.warnings}}.",
    );
    let mut files: Vec<(&str, String)> = vec![
        ("sm.yaml", SM.to_string()),
        ("plan.md", PLAN.to_string()),
        ("execute.md", EXECUTE.to_string()),
        ("test.md", test),
        ("lint.md", lint),
        ("review.md", review),
    ];
    for (name, text) in overrides {
        match files.iter_mut().find(|(n, _)| n == name) {
            Some(file) => file.1 = text.to_string(),
            None => files.push((name, text.to_string())),
        }
    }
    fixture(&files)
}

type Fixture = common::IdeFixture;

fn fixture<S: AsRef<str>>(files: &[(&str, S)]) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let marked = common::write_marked(dir.path(), files);
    let mut config = Config::defaults(dir.path());
    config.tools = ["Read", "Grep", "Glob", "Bash"].into_iter().map(String::from).collect();
    let (workspace, _) = check_with(&[dir.path().to_path_buf()], config);
    let cursor = common::cursor_at(&workspace, marked);
    Fixture { _dir: dir, workspace, cursor }
}

fn labels(items: &[CompletionItem]) -> Vec<&str> {
    items.iter().map(|item| item.label.as_str()).collect()
}

// ---- completion: frontmatter keys ----

#[test]
fn completes_missing_keys_in_a_half_typed_frontmatter() {
    let f = machine(&[("draft.md", "---\nid: draft\nname: Draft\ncompletionTool: submit_draft\ntur$0\n---\nBody.\n")]);
    let items = f.completions();
    assert_eq!(
        labels(&items),
        [
            "allowedTools",
            "completionSchema",
            "retryPolicy",
            "turnCap",
            "resolutionPolicy",
            "description",
            "inputsSchema",
            "tags",
            "next"
        ]
    );
    let turn_cap = items.iter().find(|i| i.label == "turnCap").expect("turnCap");
    assert_eq!(f.text(f.at().file, turn_cap.replace), "tur");
    assert_eq!(turn_cap.kind, CompletionKind::Field);
    assert_eq!(turn_cap.insert.as_deref(), Some("turnCap: "));
    assert_eq!(turn_cap.detail.as_deref(), Some("integer, required"));
    let doc = turn_cap.documentation.as_deref().expect("documentation");
    assert!(doc.starts_with("**`turnCap`**: integer, required\n\nMaximum number of model turns in Act."), "{doc}");
    let description = items.iter().find(|i| i.label == "description").expect("description");
    assert_eq!(description.detail.as_deref(), Some("string"));
}

#[test]
fn completes_keys_on_a_blank_line_of_a_parsed_frontmatter() {
    let f = machine(&[("plan.md", &PLAN.replace("turnCap: 20\n", "turnCap: 20\n$0\n"))]);
    assert_eq!(f.labels(), ["inputsSchema", "tags"]);
    assert_eq!(f.completions()[0].replace, Span::empty(f.at().offset));
}

#[test]
fn completes_next_keys_by_indentation_while_broken() {
    let text = EXECUTE.replace("  execution: parallel\n  join: review\n", "  exe$0\n");
    let f = machine(&[("execute.md", &text)]);
    assert_eq!(f.labels(), ["execution", "join"]);
    let items = f.completions();
    assert!(items[0].documentation.as_deref().expect("doc").contains("`sequential` runs the successors"));
}

#[test]
fn completes_retry_policy_keys_in_a_flow_mapping() {
    let f = machine(&[("plan.md", &PLAN.replace("{ maxAttempts: 2, backoff: none }", "{ maxAttempts: 2, $0 }"))]);
    assert_eq!(f.labels(), ["backoff"]);
}

#[test]
fn no_key_already_written_is_offered_again_but_the_one_under_the_cursor_is() {
    let f = machine(&[("plan.md", &PLAN.replace("turnCap: 20", "turn$0Cap: 20"))]);
    let items = f.completions();
    assert_eq!(labels(&items), ["turnCap", "inputsSchema", "tags"]);
    // The colon is already there.
    assert_eq!(items[0].insert, None);
}

// ---- completion: values ----

#[test]
fn completes_execution_from_the_schema() {
    let f = machine(&[("execute.md", &EXECUTE.replace("execution: parallel", "execution: p$0"))]);
    let items = f.completions();
    assert_eq!(labels(&items), ["sequential", "parallel"]);
    assert_eq!(f.text(f.at().file, items[0].replace), "p");
    assert_eq!(items[0].kind, CompletionKind::Value);
}

#[test]
fn completes_policies_and_backoffs_from_the_config() {
    let f = machine(&[("plan.md", &PLAN.replace("resolutionPolicy: retry-later", "resolutionPolicy: $0"))]);
    assert_eq!(f.labels(), ["retry-later", "fail", "skip"]);
    let f = machine(&[("plan.md", &PLAN.replace("backoff: none", "backoff: $0"))]);
    assert_eq!(f.labels(), ["none", "fixed", "linear", "exponential"]);
    let mut broken = PLAN.replace("retryPolicy: { maxAttempts: 2, backoff: none }", "retryPolicy:\n  backoff: ex$0");
    broken = broken.replace("turnCap: 20\n", "turnCap: 20\nresol\n");
    let f = machine(&[("plan.md", &broken)]);
    assert_eq!(f.labels(), ["none", "fixed", "linear", "exponential"]);
}

#[test]
fn completes_tools_sorted_without_the_listed_ones() {
    let f = machine(&[("plan.md", &PLAN.replace("[Read, Grep]", "[Read, $0, Grep]"))]);
    assert_eq!(f.labels(), ["Bash", "Glob"]);
    // A block list in a frontmatter that does not parse (`turnCap` has no colon yet).
    let text = PLAN
        .replace("allowedTools: [Read, Grep]", "allowedTools:\n  - Grep\n  - G$0")
        .replace("turnCap: 20", "turnCap");
    let f = machine(&[("plan.md", &text)]);
    let items = f.completions();
    assert_eq!(labels(&items), ["Bash", "Glob", "Read"]);
    assert_eq!(f.text(f.at().file, items[0].replace), "G");
}

#[test]
fn completes_stage_ids_in_next_stages() {
    let f = machine(&[("plan.md", &PLAN.replace("nextStages: [execute]", "nextStages: [execute, $0]"))]);
    let items = f.completions();
    assert_eq!(labels(&items), ["lint", "plan", "review", "test"]);
    assert!(items.iter().all(|i| i.kind == CompletionKind::Reference));
    assert_eq!(items[1].detail.as_deref(), Some("Plan"));
    assert_eq!(items[1].documentation.as_deref(), Some("Decide what to do."));
}

#[test]
fn completes_a_join_that_is_neither_a_sibling_nor_the_stage_itself() {
    let f = machine(&[("execute.md", &EXECUTE.replace("join: review", "join: $0"))]);
    assert_eq!(f.labels(), ["plan", "review"]);
}

#[test]
fn completes_entry_and_keys_in_sm_yaml() {
    let f = machine(&[("sm.yaml", "entry: $0\n")]);
    assert_eq!(f.labels(), ["execute", "lint", "plan", "review", "test"]);
    let f = machine(&[("sm.yaml", "entry: plan\n$0\n")]);
    let items = f.completions();
    assert_eq!(labels(&items), ["name", "description", "enabled", "autoAttach", "context"]);
    assert_eq!(items[4].detail.as_deref(), Some("mapping"));
    let f = machine(&[("sm.yaml", "entry: plan\ncontext:\n  req$0\n")]);
    assert_eq!(f.labels(), ["required", "optional"]);
}

// ---- completion: body placeholders ----

#[test]
fn completes_placeholder_roots() {
    let f = machine(&[("plan.md", &PLAN.replace("Task: {{ctx.task}}", "Task: {{$0"))]);
    assert_eq!(f.labels(), ["ctx.", "stage."]);
    let f = machine(&[("plan.md", &PLAN.replace("Task: {{ctx.task}}", "Task: ${ st$0"))]);
    let items = f.completions();
    assert_eq!(labels(&items), ["ctx.", "stage."]);
    assert_eq!(f.text(f.at().file, items[0].replace), "st");
}

#[test]
fn completes_ctx_fields() {
    let f = machine(&[("plan.md", &PLAN.replace("{{ctx.task}}", "{{ctx.$0}}"))]);
    let items = f.completions();
    assert_eq!(labels(&items), ["task", "branch", "upstream", "workflowRunId", "stageExecutionId"]);
    assert_eq!(items[1].detail.as_deref(), Some("declared in sm.yaml context.optional"));
    assert_eq!(items[2].detail.as_deref(), Some("provided by core"));
    assert!(items.iter().all(|i| i.kind == CompletionKind::Variable));
}

#[test]
fn completes_stage_fields() {
    let f = machine(&[("execute.md", &EXECUTE.replace("Plan: {{", "{{stage.n$0 Plan: {{"))]);
    let items = f.completions();
    assert_eq!(
        labels(&items),
        [
            "id",
            "name",
            "allowedTools",
            "completionTool",
            "completionSchema",
            "retryPolicy",
            "turnCap",
            "resolutionPolicy",
            "next"
        ]
    );
    assert_eq!(items[1].detail.as_deref(), Some("Execute"));
    assert_eq!(f.text(f.at().file, items[1].replace), "n");
}

#[test]
fn completes_stage_result_fields() {
    let f = machine(&[("execute.md", &EXECUTE.replace("{{ctx.upstream[0].parsed.summary}}", "{{ctx.upstream[0].$0"))]);
    assert_eq!(f.labels(), ["verdict", "reason", "parsed", "capHit", "attemptCount", "output"]);
}

#[test]
fn completes_the_predecessors_completion_properties() {
    let f = machine(&[("execute.md", &EXECUTE.replace("parsed.summary}}", "parsed.su$0}}"))]);
    let items = f.completions();
    assert_eq!(labels(&items), ["summary", "steps"]);
    assert_eq!(items[0].detail.as_deref(), Some("string"));
    assert_eq!(items[0].documentation.as_deref(), Some("One-line plan."));
    assert_eq!(items[1].detail.as_deref(), Some("array"));
    assert_eq!(f.text(f.at().file, items[0].replace), "su");

    let f = machine(&[("execute.md", &EXECUTE.replace("parsed.summary}}", "parsed.steps[0].$0"))]);
    let items = f.completions();
    assert_eq!(labels(&items), ["title"]);
    assert_eq!(items[0].documentation.as_deref(), Some("What the step does."));

    // The join sees one result per sibling, in `nextStages` order.
    let review = stage("review", "", "", "{{ctx.upstream[1].parsed.$0");
    let f = machine(&[("review.md", &review)]);
    assert_eq!(f.labels(), ["warnings"]);
}

// ---- hover ----

#[test]
fn hover_on_keys_shows_the_schema_documentation() {
    let f = machine(&[("plan.md", &PLAN.replace("turnCap: 20", "turn$0Cap: 20"))]);
    let (text, markdown) = f.hover().expect("hover");
    assert_eq!(text, "turnCap");
    assert!(markdown.starts_with("**`turnCap`**: integer, required\n\nMaximum number of model turns"), "{markdown}");

    let f = machine(&[("plan.md", &PLAN.replace("backoff: none", "back$0off: none"))]);
    let (text, markdown) = f.hover().expect("hover");
    assert_eq!(text, "backoff");
    assert!(markdown.starts_with("**`retryPolicy.backoff`**: string, required\n\nWait strategy"), "{markdown}");

    let f = machine(&[("sm.yaml", "en$0try: plan\n")]);
    let (_, markdown) = f.hover().expect("hover");
    assert!(markdown.starts_with("**`entry`**: string, required\n\nId of the first stage to run."), "{markdown}");
}

#[test]
fn hover_on_keys_works_while_the_frontmatter_is_broken() {
    let text = EXECUTE.replace("  join: review\n", "  jo$0in: review\n  exe\n");
    let f = machine(&[("execute.md", &text)]);
    let (text, markdown) = f.hover().expect("hover");
    assert_eq!(text, "join");
    assert!(
        markdown.starts_with("**`next.join`**: string\n\nStage that runs once every parallel sibling"),
        "{markdown}"
    );
}

#[test]
fn hover_on_placeholders_says_what_they_resolve_to() {
    let f = machine(&[("execute.md", &EXECUTE.replace("parsed.summary", "parsed.sum$0mary"))]);
    assert_eq!(
        f.hover(),
        Some((
            "ctx.upstream[0].parsed.summary".into(),
            "`ctx.upstream[0].parsed.summary`: completionSchema property of `plan`\n\ntype: `string`\n\nOne-line plan."
                .into()
        ))
    );
    let f = machine(&[("execute.md", &EXECUTE.replace("upstream[0]", "upstream[$00]"))]);
    assert_eq!(f.hover(), Some(("ctx.upstream[0]".into(), "`ctx.upstream[0]`: the StageResult of `plan`".into())));
    let f = machine(&[("plan.md", &PLAN.replace("{{ctx.task}}", "{{ctx.ta$0sk}}"))]);
    assert_eq!(f.hover(), Some(("ctx.task".into(), "`ctx.task`: declared in sm.yaml context.required".into())));
    let f = machine(&[("plan.md", &PLAN.replace("{{ctx.task}}", "{{stage.turn$0Cap}}"))]);
    assert_eq!(f.hover(), Some(("stage.turnCap".into(), "`stage.turnCap` = `20`".into())));
    let f = machine(&[("plan.md", &PLAN.replace("{{ctx.task}}", "{{ctx.upstream[0].cap$0Hit}}"))]);
    // `plan` is the entry and follows `review`: its only predecessor is `review`.
    assert_eq!(
        f.hover(),
        Some((
            "ctx.upstream[0].capHit".into(),
            "`ctx.upstream[0].capHit`: StageResult field of `review`: `true` when Act reached `turnCap` before a valid completion call".into()
        ))
    );
}

// ---- definitions and references ----

#[test]
fn definition_of_a_stage_id_reference() {
    let f = machine(&[("plan.md", &PLAN.replace("nextStages: [execute]", "nextStages: [exe$0cute]"))]);
    let targets = ide::definitions(&f.workspace, f.at());
    assert_eq!(targets.iter().map(|t| f.show(t)).collect::<Vec<_>>(), [("execute.md".into(), "execute".into())]);
    assert_eq!(targets[0].span.start, EXECUTE.find("execute").expect("id"));

    let f = machine(&[("sm.yaml", &SM.replace("entry: plan", "entry: pl$0an"))]);
    let targets = ide::definitions(&f.workspace, f.at());
    assert_eq!(targets.iter().map(|t| f.show(t)).collect::<Vec<_>>(), [("plan.md".into(), "plan".into())]);

    let f = machine(&[("execute.md", &EXECUTE.replace("join: review", "join: rev$0iew"))]);
    let targets = ide::definitions(&f.workspace, f.at());
    assert_eq!(targets.iter().map(|t| f.show(t)).collect::<Vec<_>>(), [("review.md".into(), "review".into())]);
}

#[test]
fn definition_of_a_cassettes_stage() {
    let stage_of = |cassette: &str| {
        let f = machine(&[("plan.cassette.yaml", cassette)]);
        ide::definitions(&f.workspace, f.at()).iter().map(|t| f.show(t)).collect::<Vec<_>>()
    };
    let plan = [("plan.md".to_string(), "plan".to_string())];
    assert_eq!(stage_of("cassette: 1\nstage: pl$0an\nattempts: []\n"), plan);
    // A machine cassette names its stages as keys.
    assert_eq!(stage_of("cassette: 1\nstages:\n  pl$0an:\n    attempts: []\n"), plan);
    assert_eq!(stage_of("cassette: 1\nstage: plan\nctx: {task: pl$0an}\n"), []);
}

#[test]
fn definition_of_a_parsed_property_is_its_key_in_the_predecessors_schema() {
    let f = machine(&[("execute.md", &EXECUTE.replace("parsed.summary", "parsed.sum$0mary"))]);
    let targets = ide::definitions(&f.workspace, f.at());
    assert_eq!(targets.iter().map(|t| f.show(t)).collect::<Vec<_>>(), [("plan.md".into(), "summary".into())]);
    assert_eq!(targets[0].span.start, PLAN.find("summary: {").expect("key"));

    let f = machine(&[(
        "execute.md",
        &EXECUTE.replace("{{ctx.upstream[0].parsed.summary}}", "{{ctx.upstream[0].parsed.steps[0].ti$0tle}}"),
    )]);
    let targets = ide::definitions(&f.workspace, f.at());
    assert_eq!(targets.iter().map(|t| f.show(t)).collect::<Vec<_>>(), [("plan.md".into(), "title".into())]);
}

#[test]
fn definition_of_other_placeholder_parts() {
    let f = machine(&[("execute.md", &EXECUTE.replace("upstream[0]", "upstream[$00]"))]);
    let targets = ide::definitions(&f.workspace, f.at());
    assert_eq!(targets.iter().map(|t| f.show(t)).collect::<Vec<_>>(), [("plan.md".into(), "plan".into())]);

    let f = machine(&[("plan.md", &PLAN.replace("{{ctx.task}}", "{{ctx.ta$0sk}} {{stage.name}}"))]);
    let targets = ide::definitions(&f.workspace, f.at());
    assert_eq!(targets.iter().map(|t| f.show(t)).collect::<Vec<_>>(), [("sm.yaml".into(), "task".into())]);

    let f = machine(&[("plan.md", &PLAN.replace("{{ctx.task}}", "{{stage.na$0me}}"))]);
    let targets = ide::definitions(&f.workspace, f.at());
    assert_eq!(targets.iter().map(|t| f.show(t)).collect::<Vec<_>>(), [("plan.md".into(), "name".into())]);
}

#[test]
fn references_of_a_stage_id() {
    let f = machine(&[("plan.md", &PLAN.replace("id: plan", "id: pl$0an"))]);
    let targets = ide::references(&f.workspace, f.at());
    let shown: Vec<(String, String)> = targets.iter().map(|t| f.show(t)).collect();
    assert_eq!(shown, [("review.md".to_string(), "plan".to_string()), ("sm.yaml".into(), "plan".into())]);

    // From a reference, the same list.
    let f = machine(&[("sm.yaml", &SM.replace("entry: plan", "entry: $0plan"))]);
    let again: Vec<(String, String)> = ide::references(&f.workspace, f.at()).iter().map(|t| f.show(t)).collect();
    assert_eq!(again, shown);

    let f = machine(&[("review.md", "---\nid: rev$0iew\nname: R\nturnCap: 3\n---\n")]);
    let targets = ide::references(&f.workspace, f.at());
    assert_eq!(targets.iter().map(|t| f.show(t)).collect::<Vec<_>>(), [("execute.md".into(), "review".into())]);
}

// ---- rename ----

#[test]
fn rename_a_stage_id_across_three_files() {
    let f = machine(&[("plan.md", &PLAN.replace("id: plan", "id: pl$0an"))]);
    let span = ide::prepare_rename(&f.workspace, f.at()).expect("renameable");
    assert_eq!(f.text(f.at().file, span), "plan");
    let edits = ide::rename(&f.workspace, f.at(), "design").expect("rename");
    let shown: Vec<(String, String, String)> = edits
        .iter()
        .map(|(file, edit)| {
            let (name, old) = f.show(&Target { file: *file, span: edit.span });
            (name, old, edit.replacement.clone())
        })
        .collect();
    let mut sorted = shown.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            ("plan.md".to_string(), "plan".to_string(), "design".to_string()),
            ("review.md".into(), "plan".into(), "design".into()),
            ("sm.yaml".into(), "plan".into(), "design".into()),
        ]
    );
    // The quoted reference keeps its quotes.
    let review = f.file("review.md");
    let (_, edit) = edits.iter().find(|(file, _)| *file == review).expect("review edit");
    assert_eq!(&f.workspace.file(review).text[edit.span.start - 1..edit.span.end + 1], "\"plan\"");
}

#[test]
fn rename_from_a_reference() {
    let f = machine(&[("execute.md", &EXECUTE.replace("join: review", "join: review$0"))]);
    let edits = ide::rename(&f.workspace, f.at(), "final-review").expect("rename");
    let files: Vec<String> =
        edits.iter().map(|(file, _)| f.show(&Target { file: *file, span: Span::empty(0) }).0).collect();
    assert_eq!(files.len(), 2);
    assert!(files.contains(&"execute.md".to_string()) && files.contains(&"review.md".to_string()));
    assert!(edits.iter().all(|(_, e)| e.replacement == "final-review"));
}

#[test]
fn rename_refuses_bad_and_taken_names() {
    let f = machine(&[("plan.md", &PLAN.replace("id: plan", "id: pl$0an"))]);
    let bad = ide::rename(&f.workspace, f.at(), "Design").expect_err("not kebab-case");
    assert_eq!(
        bad,
        "`Design` is not a valid stage id: use lowercase kebab-case (a-z, 0-9, single hyphens), as in `run-tests`"
    );
    let taken = ide::rename(&f.workspace, f.at(), "execute").expect_err("taken");
    assert!(taken.starts_with("stage id `execute` is already used by `"), "{taken}");
    assert!(taken.ends_with("execute.md` in this state machine"), "{taken}");
    assert_eq!(ide::rename(&f.workspace, f.at(), "plan"), Ok(Vec::new()));
}

#[test]
fn rename_refuses_other_positions() {
    let f = machine(&[("plan.md", &PLAN.replace("name: Plan", "name: Pl$0an"))]);
    let reason = ide::prepare_rename(&f.workspace, f.at()).expect_err("refused");
    assert!(reason.starts_with("only stage ids can be renamed in a stage definition"), "{reason}");
    assert!(ide::rename(&f.workspace, f.at(), "x").is_err());

    let f = machine(&[("sm.yaml", &SM.replace("context:", "con$0text:"))]);
    let reason = ide::prepare_rename(&f.workspace, f.at()).expect_err("refused");
    assert_eq!(reason, "only stage ids can be renamed in a state machine file: the `entry` value");

    let f = machine(&[("plan.md", &PLAN.replace("id: plan", "id: pl$0an").replace("turnCap: 20", "turnCap"))]);
    let reason = ide::prepare_rename(&f.workspace, f.at()).expect_err("refused");
    assert_eq!(reason, "the frontmatter does not parse; fix it before renaming a stage id");
}

#[test]
fn files_of_other_families_are_not_answered() {
    let f = machine(&[("steps_registry.json", "{\"agentId\": \"a\", $0\"steps\": {}}")]);
    let sm = stagelint::families::sm::Sm;
    assert!((sm.editor().prepare_rename)(&f.workspace, f.at()).is_none());
    assert!((sm.editor().rename)(&f.workspace, f.at(), "x").is_none());
    assert!((sm.editor().completions)(&f.workspace, f.at()).is_empty());
    assert!((sm.editor().hover)(&f.workspace, f.at()).is_none());
    assert!((sm.editor().definitions)(&f.workspace, f.at()).is_empty());
    assert!((sm.editor().symbols)(&f.workspace, f.at().file).is_empty());
}

// ---- symbols ----

#[test]
fn outline_of_a_stage_and_of_sm_yaml() {
    let f = machine(&[]);
    let plan = f.file("plan.md");
    let symbols = ide::symbols(&f.workspace, plan);
    assert_eq!(symbols.len(), 1);
    let stage = &symbols[0];
    assert_eq!((stage.name.as_str(), stage.detail.as_deref(), stage.kind), ("plan", Some("Plan"), SymbolKind::Node));
    let frontmatter_end = PLAN.find("---\nTask").expect("close") + 3;
    assert_eq!(stage.span, Span::new(0, frontmatter_end));
    assert_eq!(f.text(plan, stage.selection), "plan");
    let children: Vec<(&str, Option<&str>, SymbolKind)> =
        stage.children.iter().map(|c| (c.name.as_str(), c.detail.as_deref(), c.kind)).collect();
    assert_eq!(
        children,
        [
            ("id", Some("plan"), SymbolKind::Field),
            ("name", Some("Plan"), SymbolKind::Field),
            ("allowedTools", None, SymbolKind::Field),
            ("completionTool", Some("submit_plan"), SymbolKind::Field),
            ("completionSchema", None, SymbolKind::Field),
            ("retryPolicy", None, SymbolKind::Field),
            ("turnCap", Some("20"), SymbolKind::Field),
            ("resolutionPolicy", Some("retry-later"), SymbolKind::Field),
        ]
    );
    assert_eq!(f.text(plan, stage.children[6].span), "turnCap: 20");
    assert_eq!(f.text(plan, stage.children[6].selection), "turnCap");

    let sm = f.file("sm.yaml");
    let symbols = ide::symbols(&f.workspace, sm);
    assert_eq!(symbols.len(), 1);
    assert_eq!((symbols[0].name.as_str(), symbols[0].detail.as_deref()), ("entry", Some("plan")));
    assert_eq!(f.text(sm, symbols[0].span), "entry: plan");
}

// ---- robustness ----

#[test]
fn every_offset_of_every_kind_of_file_is_answered_without_panicking() {
    let broken = "---\nid: \"dr\nname: [a, {b: \nallowedTools:\n  - é\n  - \nnext:\n  nextStages: [x,\n  join:\n---\n{{ctx.upstream[0].parsed.a[ {{ ${ctx.}} {{stage.\u{301}\n";
    let unclosed = "---\r\nturnCap: 3\r\nnext:\r\n  exe";
    let f = machine(&[("broken.md", broken), ("unclosed.md", unclosed), ("sub/sm.yaml", "entry: [\n")]);
    for name in ["broken.md", "unclosed.md", "execute.md", "sm.yaml", "sub/sm.yaml"] {
        let file = f.file(name);
        let text = &f.workspace.file(file).text;
        for offset in (0..=text.len() + 1).filter(|o| *o > text.len() || text.is_char_boundary(*o)) {
            let at = Cursor { file, offset };
            for item in ide::completions(&f.workspace, at) {
                assert!(item.replace.end == offset && text.is_char_boundary(item.replace.start), "{name}@{offset}");
            }
            let _ = ide::hover(&f.workspace, at);
            let _ = ide::definitions(&f.workspace, at);
            let _ = ide::references(&f.workspace, at);
            let _ = ide::prepare_rename(&f.workspace, at);
            let _ = ide::rename(&f.workspace, at, "x");
        }
        let _ = ide::symbols(&f.workspace, file);
    }
}
