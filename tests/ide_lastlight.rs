//! Editor features of the `lastlight/` family on a small workflow with prompts and a skill:
//! completion (keys, enums, phase names, template variables), hover, definitions, references,
//! rename across the workflow and its prompt files, outline, links and folds.

mod common;

use stagelint::ide::{self, Cursor, Target};
use stagelint::source::Span;

const BUILD: &str = "name: build
phases:
  - name: phase_0
    type: context
  - name: plan
    prompt: prompts/plan.md
    skills: [planning]
    output_var: plan_text
  - name: execute
    prompt: prompts/execute.md
    depends_on: [plan]
    messages:
      on_success: \"Done after ${plan.output}\"
";

const PLAN: &str = "Plan issue #{{issueNumber}}.\n{{#if issueBody}}\nBody: {{issueBody}}\n{{/if}}\n";
const EXECUTE: &str = "Implement: ${plan.output}\nAlso {{phaseOutputs.plan}} and {{plan_text}}.\n";
const SKILL: &str = "---\nname: planning\ndescription: Plan a change.\n---\nPlan.\n";

type Fixture = common::IdeFixture;

/// The workflow above with `overrides` (file, text) replacing or adding files; `$0` marks the cursor.
fn fixture(overrides: &[(&str, &str)]) -> Fixture {
    let mut files = vec![
        ("workflows/build.yaml", BUILD.to_string()),
        ("workflows/prompts/plan.md", PLAN.to_string()),
        ("workflows/prompts/execute.md", EXECUTE.to_string()),
        ("skills/planning/SKILL.md", SKILL.to_string()),
    ];
    for (name, text) in overrides {
        match files.iter_mut().find(|(n, _)| n == name) {
            Some(file) => file.1 = text.to_string(),
            None => files.push((name, text.to_string())),
        }
    }
    Fixture::new(&files)
}

fn with_cursor(text: &str, needle: &str, delta: usize) -> String {
    let at = text.find(needle).expect("needle") + delta;
    format!("{}$0{}", &text[..at], &text[at..])
}

#[test]
fn the_fixture_is_clean() {
    let f = fixture(&[]);
    let diagnostics = stagelint::check::check(&f.workspace);
    assert!(diagnostics.is_empty(), "{}", common::render_full(&f.workspace, &diagnostics));
}

#[test]
fn completes_phase_keys_without_the_present_ones() {
    let text = BUILD.replace("    depends_on: [plan]\n", "    dep$0\n");
    let f = fixture(&[("workflows/build.yaml", &text)]);
    let labels = f.labels();
    assert!(labels.contains(&"depends_on".to_string()), "{labels:?}");
    assert!(labels.contains(&"generic_loop".to_string()));
    assert!(!labels.contains(&"prompt".to_string()), "prompt is already there: {labels:?}");
    let item = ide::completions(&f.workspace, f.at()).into_iter().find(|i| i.label == "depends_on").unwrap();
    assert!(item.documentation.unwrap().contains("DAG"));
}

#[test]
fn completes_nested_loop_keys_and_enum_values() {
    let text = BUILD.replace("    depends_on: [plan]\n", "    generic_loop:\n      gate_kind: $0\n");
    let f = fixture(&[("workflows/build.yaml", &text)]);
    assert_eq!(f.labels(), ["approve", "reply"]);
    let text = BUILD.replace("    depends_on: [plan]\n", "    generic_loop:\n      max_iterations: 2\n      $0\n");
    let f = fixture(&[("workflows/build.yaml", &text)]);
    let labels = f.labels();
    assert!(labels.contains(&"until".to_string()) && !labels.contains(&"max_iterations".to_string()), "{labels:?}");
}

#[test]
fn completes_phase_names_in_depends_on() {
    let text = BUILD.replace("depends_on: [plan]", "depends_on: [plan, $0]");
    let f = fixture(&[("workflows/build.yaml", &text)]);
    // Neither `plan` (listed) nor `execute` (the phase itself).
    assert_eq!(f.labels(), ["phase_0"]);
}

#[test]
fn completes_variables_in_prompts_and_phase_names_after_dollar() {
    let f = fixture(&[("workflows/prompts/plan.md", "Plan {{iss$0")]);
    let labels = f.labels();
    assert!(labels.contains(&"issueNumber".to_string()) && labels.contains(&"plan_text".to_string()), "{labels:?}");
    let f = fixture(&[("workflows/prompts/execute.md", "Use ${$0")]);
    let items = ide::completions(&f.workspace, f.at());
    let labels: Vec<&str> = items.iter().map(|i| i.label.as_str()).collect();
    assert!(labels.contains(&"plan") && !labels.contains(&"issueNumber"), "{labels:?}");
    assert_eq!(items.iter().find(|i| i.label == "plan").unwrap().insert.as_deref(), Some("plan.output}"));
}

#[test]
fn hover_on_keys_and_variables() {
    let f = fixture(&[("workflows/build.yaml", &with_cursor(BUILD, "output_var", 2))]);
    let info = ide::hover(&f.workspace, f.at()).expect("hover");
    assert!(info.markdown.starts_with("**output_var**"), "{}", info.markdown);
    let f = fixture(&[("workflows/prompts/execute.md", &with_cursor(EXECUTE, "plan_text", 1))]);
    let info = ide::hover(&f.workspace, f.at()).expect("hover");
    assert_eq!(f.text(f.at().file, info.span), "plan_text");
    assert!(info.markdown.contains("output_var"), "{}", info.markdown);
    let f = fixture(&[("workflows/prompts/plan.md", &with_cursor(PLAN, "issueNumber", 3))]);
    assert!(ide::hover(&f.workspace, f.at()).unwrap().markdown.contains("Issue number"));
}

#[test]
fn definition_of_phase_references_and_prompt_paths() {
    let f = fixture(&[("workflows/prompts/execute.md", &with_cursor(EXECUTE, "plan.output", 1))]);
    let targets = ide::definitions(&f.workspace, f.at());
    assert_eq!(targets.iter().map(|t| f.show(t)).collect::<Vec<_>>(), [("build.yaml".into(), "plan".into())]);
    let f = fixture(&[("workflows/build.yaml", &with_cursor(BUILD, "[plan]", 2))]);
    let targets = ide::definitions(&f.workspace, f.at());
    assert_eq!(f.show(&targets[0]), ("build.yaml".into(), "plan".into()));
    assert_eq!(f.workspace.file(targets[0].file).lines().line_of(targets[0].span.start), 4);
    let f = fixture(&[("workflows/build.yaml", &with_cursor(BUILD, "prompts/execute.md", 3))]);
    let targets = ide::definitions(&f.workspace, f.at());
    assert_eq!(targets, [Target { file: f.file("execute.md"), span: Span::empty(0) }]);
}

#[test]
fn references_of_a_phase_span_the_workflow_and_its_prompts() {
    let f = fixture(&[("workflows/build.yaml", &with_cursor(BUILD, "name: plan", 7))]);
    let mut shown: Vec<(String, String)> = ide::references(&f.workspace, f.at()).iter().map(|t| f.show(t)).collect();
    shown.sort();
    assert_eq!(shown.len(), 4, "the uses, without the definition: {shown:?}");
    assert_eq!(shown.iter().filter(|(file, _)| file == "execute.md").count(), 2);
    assert!(shown.iter().all(|(_, text)| text == "plan"));
}

/// A phase merging another (`<<: *shared`) shares its `depends_on` and message text: each place
/// is one reference and one edit, however many phases read it.
#[test]
fn merged_phases_list_each_place_once() {
    let workflow = "name: build
phases:
  - name: plan
    prompt: prompts/plan.md
  - &shared
    name: execute
    depends_on: [plan]
    messages:
      on_success: \"Done after ${plan.output}\"
  - name: review
    messages:
      on_success: \"Reviewed ${plan.output}\"
  - <<: *shared
    name: ship
";
    let f = fixture(&[("workflows/build.yaml", &with_cursor(workflow, "name: plan", 7))]);
    let references = ide::references(&f.workspace, f.at());
    let mut places: Vec<(u32, usize)> = references.iter().map(|t| (t.file.0, t.span.start)).collect();
    places.sort();
    places.dedup();
    assert_eq!(places.len(), references.len(), "each place once: {references:?}");
    assert_eq!(references.len(), 3, "depends_on and two messages: {references:?}");
    let edits = ide::rename(&f.workspace, f.at(), "design").expect("rename");
    assert_eq!(edits.len(), 4, "the definition and the three uses: {edits:?}");
}

#[test]
fn rename_a_phase_across_the_workflow_and_prompts() {
    let f = fixture(&[("workflows/prompts/execute.md", &with_cursor(EXECUTE, "plan.output", 1))]);
    let span = ide::prepare_rename(&f.workspace, f.at()).expect("renamable");
    assert_eq!(f.text(f.at().file, span), "plan");
    let edits = ide::rename(&f.workspace, f.at(), "design").expect("rename");
    assert_eq!(edits.len(), 5);
    assert!(edits.iter().all(|(_, e)| e.replacement == "design"));
    assert!(ide::rename(&f.workspace, f.at(), "de-sign").is_err(), "`-` never matches ${{x.output}}");
    assert!(ide::rename(&f.workspace, f.at(), "execute").is_err(), "taken");
    let f = fixture(&[("workflows/prompts/plan.md", &with_cursor(PLAN, "issueNumber", 2))]);
    assert!(ide::prepare_rename(&f.workspace, f.at()).is_err());
}

#[test]
fn outline_links_and_folds() {
    let f = fixture(&[]);
    let build = f.file("build.yaml");
    let symbols = ide::symbols(&f.workspace, build);
    let names: Vec<&str> = symbols.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["phase_0", "plan", "execute"]);
    assert_eq!(symbols[0].detail.as_deref(), Some("context"));
    let links = ide::links(&f.workspace, build);
    let targets: Vec<String> =
        links.iter().map(|l| l.target.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(targets, ["plan.md", "execute.md", "SKILL.md"]);
    assert_eq!(f.text(build, links[0].span), "prompts/plan.md");
    let folds = ide::folds(&f.workspace, build);
    assert_eq!(folds.len(), 3, "{folds:?}");
    assert_eq!(ide::folds(&f.workspace, f.file("plan.md")).len(), 1);
}

#[test]
fn every_offset_is_answered_without_panicking() {
    let f = fixture(&[]);
    for file in f.workspace.files() {
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

/// Phases that take their keys from an anchored mapping (`<<: *review`).
const MERGED: &str = "name: review
x-review: &review
  prompt: prompts/review.md
phases:
  - name: plan
    prompt: prompts/plan.md
  - <<: *review
    name: style
  - <<: *review
    name: security
";

#[test]
fn merged_phases_are_seen_by_the_editor() {
    let review = "Review ${plan.output} for #{{issueNumber}}.\n";
    let files = [("workflows/review.yaml", MERGED), ("workflows/prompts/review.md", review)];
    let f = fixture(&files);
    assert!(stagelint::check::check(&f.workspace).is_empty());
    // The prompt only merged phases name is read as a prompt: hover and definitions work there.
    let cursor = with_cursor(review, "plan.output", 1);
    let f = fixture(&[files[0], ("workflows/prompts/review.md", &cursor)]);
    let targets = ide::definitions(&f.workspace, f.at());
    assert_eq!(targets.iter().map(|t| f.show(t)).collect::<Vec<_>>(), [("review.yaml".into(), "plan".into())]);
    let cursor = with_cursor(review, "issueNumber", 2);
    let f = fixture(&[files[0], ("workflows/prompts/review.md", &cursor)]);
    assert!(ide::hover(&f.workspace, f.at()).expect("hover").markdown.contains("Issue number"));
    // One link for the shared `prompt:`, at the anchored text.
    let f = fixture(&files);
    let links = ide::links(&f.workspace, f.file("review.yaml"));
    let shown: Vec<String> = links.iter().map(|l| f.text(f.file("review.yaml"), l.span).to_string()).collect();
    assert_eq!(shown, ["prompts/plan.md", "prompts/review.md"]);
    let names: Vec<String> = ide::symbols(&f.workspace, f.file("review.yaml")).into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["plan", "style", "security"]);
}

#[test]
fn a_cron_finds_its_workflow_in_a_subdirectory() {
    // The `workflows` directory and its subdirectories are one namespace, as for the rules.
    let cron = "kind: cron\nname: nightly\nschedule: \"0 3 * * *\"\nworkflow: $0team-build\n";
    let team = "name: team-build\nphases:\n  - name: plan\n    prompt: prompts/plan.md\n";
    let f = fixture(&[("workflows/nightly.yaml", cron), ("workflows/team/build.yaml", team)]);
    assert!(stagelint::check::check(&f.workspace).is_empty());
    let targets = ide::definitions(&f.workspace, f.at());
    assert_eq!(targets.iter().map(|t| f.show(t)).collect::<Vec<_>>(), [("build.yaml".into(), "team-build".into())]);
    assert_eq!(targets[0].file, f.workspace.files().iter().find(|x| x.path.ends_with("team/build.yaml")).unwrap().id);
}
