//! Editor features of the `steps/` family on a small climpt agent: completion (also in a
//! half-typed registry and after `{uv-` in a prompt), hover, definitions, references, rename,
//! outline and links.

mod common;

use std::path::{Path, PathBuf};

use stagelint::config::Config;
use stagelint::diagnostic::{Edit, FileId};
use stagelint::families::Family;
use stagelint::families::steps::Steps;
use stagelint::ide::{self, CompletionItem, CompletionKind, Cursor, Symbol, Target};
use stagelint::source::Span;
use stagelint::workspace::Workspace;

const REGISTRY: &str = r##"{
  "$schema": "../registry.schema.json",
  "agentId": "demo",
  "version": "1.0.0",
  "c1": "steps",
  "entryStepMapping": { "poll:state": "initial.issue" },
  "steps": {
    "initial.issue": {
      "stepId": "initial.issue",
      "name": "Initial Issue",
      "stepKind": "work",
      "c2": "initial",
      "c3": "issue",
      "edition": "default",
      "uvVariables": ["issue"],
      "outputSchemaRef": { "file": "issue.schema.json", "schema": "initial.issue" },
      "structuredGate": {
        "allowedIntents": ["next", "repeat"],
        "intentSchemaRef": "#/properties/next_action/properties/action",
        "intentField": "next_action.action"
      },
      "transitions": {
        "next": { "target": "continuation.issue", "fallback": "closure.issue" },
        "repeat": { "target": "initial.issue" }
      }
    },
    "continuation.issue": {
      "stepId": "continuation.issue",
      "name": "Continuation Issue",
      "c2": "continuation",
      "c3": "issue",
      "uvVariables": ["issue", "iteration"],
      "outputSchemaRef": { "file": "issue.schema.json", "schema": "continuation.issue" },
      "structuredGate": {
        "allowedIntents": ["next", "repeat", "handoff"],
        "intentSchemaRef": "#/properties/next_action/properties/action",
        "intentField": "next_action.action",
        "handoffFields": ["analysis.summary"]
      },
      "transitions": {
        "next": { "condition": "summary", "targets": { "done": "closure.issue", "default": "continuation.issue" } },
        "handoff": { "target": "closure.issue" }
      }
    },
    "closure.issue": {
      "stepId": "closure.issue",
      "name": "Closure Issue",
      "stepKind": "closure",
      "c2": "closure",
      "c3": "issue",
      "inputs": { "summary": { "from": "continuation.issue.summary" } },
      "outputSchemaRef": { "file": "issue.schema.json", "schema": "closure.issue" },
      "structuredGate": {
        "allowedIntents": ["closing", "repeat"],
        "intentSchemaRef": "#/properties/next_action/properties/action",
        "intentField": "next_action.action"
      },
      "transitions": { "closing": { "target": null } }
    }
  },
  "validators": {
    "git-clean": {
      "type": "command",
      "command": "git status --porcelain",
      "successWhen": "empty",
      "failurePattern": "git-dirty",
      "extractParams": { "changedFiles": "parseChangedFiles" }
    }
  },
  "failurePatterns": {
    "git-dirty": { "description": "Uncommitted changes remain", "edition": "failed", "adaptation": "git-dirty", "params": ["changedFiles"] }
  },
  "validationSteps": {
    "closure.issue": {
      "stepId": "closure.issue",
      "name": "Closure validation",
      "c2": "retry",
      "c3": "issue",
      "validationConditions": [{ "validator": "git-clean" }],
      "onFailure": { "action": "retry", "maxAttempts": 3 }
    }
  }
}
"##;

const SCHEMA: &str = r##"{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "$defs": {
    "continuationAction": { "type": "object", "properties": { "action": { "type": "string", "enum": ["next", "repeat", "handoff"] } } }
  },
  "initial.issue": {
    "type": "object",
    "allOf": [{ "$ref": "common.schema.json#/$defs/stepResponse" }],
    "properties": {
      "next_action": { "type": "object", "properties": { "action": { "type": "string", "enum": ["next", "repeat"] } } }
    }
  },
  "continuation.issue": {
    "type": "object",
    "properties": {
      "next_action": { "$ref": "#/$defs/continuationAction" },
      "analysis": { "type": "object", "properties": { "summary": { "type": "string" } } }
    }
  },
  "closure.issue": {
    "type": "object",
    "properties": {
      "next_action": { "type": "object", "properties": { "action": { "type": "string", "enum": ["closing", "repeat"] } } }
    }
  }
}
"##;

const COMMON: &str = r#"{
  "$defs": { "stepResponse": { "type": "object", "properties": { "stepId": { "type": "string" } } } }
}
"#;

const AGENT_JSON: &str = r#"{
  "$schema": "../agent.schema.json",
  "version": "1.0.0",
  "name": "demo",
  "displayName": "Demo",
  "description": "A demo agent",
  "parameters": { "issue": { "type": "number", "description": "GitHub Issue number", "required": true, "cli": "--issue" } },
  "runner": {
    "flow": { "systemPromptPath": "prompts/system.md", "prompts": { "registry": "steps_registry.json" } },
    "verdict": { "type": "poll:state", "config": {} }
  }
}
"#;

const INITIAL_PROMPT: &str = "# Initial\n\nWork on issue {uv-issue}.\n";
const CONTINUATION_PROMPT: &str = "# Continuation\n\nIteration {uv-iteration} of issue {uv-issue}.\n";

/// The agent's files, relative to `.agent/demo/`, before overrides.
fn base_files() -> Vec<(&'static str, String)> {
    vec![
        ("steps_registry.json", REGISTRY.to_string()),
        ("agent.json", AGENT_JSON.to_string()),
        ("schemas/issue.schema.json", SCHEMA.to_string()),
        ("schemas/common.schema.json", COMMON.to_string()),
        ("prompts/system.md", "You are the demo agent.\n".to_string()),
        ("prompts/steps/initial/issue/f_default.md", INITIAL_PROMPT.to_string()),
        ("prompts/steps/continuation/issue/f_default.md", CONTINUATION_PROMPT.to_string()),
        ("prompts/steps/closure/issue/f_default.md", "# Closure\n".to_string()),
        ("../registry.schema.json", "{ \"type\": \"object\" }\n".to_string()),
    ]
}

struct Fixture {
    dir: tempfile::TempDir,
    agent: PathBuf,
    workspace: Workspace,
    /// Where `$0` was, if a file had it.
    cursor: Option<Cursor>,
}

impl Fixture {
    fn cursor(&self) -> Cursor {
        self.cursor.expect("a file has `$0`")
    }

    fn id(&self, relative: &str) -> FileId {
        let path = stagelint::workspace::discover::normalize(&self.agent.join(relative));
        self.workspace.file_at(&path).unwrap_or_else(|| panic!("{relative} was read")).id
    }

    fn text(&self, file: FileId) -> &str {
        &self.workspace.file(file).text
    }

    /// The text under a target.
    fn at(&self, target: &Target) -> &str {
        &self.text(target.file)[target.span.start..target.span.end]
    }

    /// The 1-based line a span starts on, in the cursor's file.
    fn line(&self, file: FileId, span: Span) -> usize {
        let source = self.workspace.file(file);
        source.lines().line_col(&source.text, span.start).line
    }

    fn file_name(&self, file: FileId) -> String {
        let path = &self.workspace.file(file).path;
        path.strip_prefix(&self.agent).unwrap_or(path).to_string_lossy().replace('\\', "/")
    }

    fn completions(&self) -> Vec<CompletionItem> {
        ide::completions(&self.workspace, self.cursor())
    }
}

/// The demo agent with some files replaced; one of them may mark the cursor with `$0`.
fn fixture(overrides: &[(&str, String)]) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let agent = dir.path().join(".agent").join("demo");
    let mut files = base_files();
    for (name, text) in overrides {
        match files.iter_mut().find(|(n, _)| n == name) {
            Some(file) => file.1 = text.clone(),
            None => files.push((name, text.clone())),
        }
    }
    let marked = common::write_marked(&agent, &files);
    let (workspace, _) = common::check_with(&[dir.path().to_path_buf()], Config::defaults(dir.path()));
    let cursor = common::cursor_at(&workspace, marked);
    Fixture { dir, agent, workspace, cursor }
}

/// The registry with the first occurrence of `marked` without its `$0` replaced by `marked`.
fn mark(text: &str, marked: &str) -> String {
    let plain = marked.replacen("$0", "", 1);
    assert!(text.contains(&plain), "fixture lacks {plain:?}");
    text.replacen(&plain, marked, 1)
}

/// The registry with `from` replaced by `to` (which may hold `$0`).
fn edit(from: &str, to: &str) -> String {
    assert!(REGISTRY.contains(from), "fixture lacks {from:?}");
    REGISTRY.replacen(from, to, 1)
}

fn registry_at(marked: &str) -> Fixture {
    fixture(&[("steps_registry.json", mark(REGISTRY, marked))])
}

fn labels(items: &[CompletionItem]) -> Vec<&str> {
    items.iter().map(|i| i.label.as_str()).collect()
}

fn replaced<'f>(fixture: &'f Fixture, item: &CompletionItem) -> &'f str {
    &fixture.text(fixture.cursor().file)[item.replace.start..item.replace.end]
}

fn item<'i>(items: &'i [CompletionItem], label: &str) -> &'i CompletionItem {
    items.iter().find(|i| i.label == label).unwrap_or_else(|| panic!("no completion {label}"))
}

fn does_not_parse(fixture: &Fixture) -> bool {
    stagelint::source::json::parse(fixture.text(fixture.cursor().file)).root.is_none()
}

// ---------------------------------------------------------------------------------------------
// Completion

#[test]
fn completes_top_level_keys_not_yet_present_without_legacy_ones() {
    let f = registry_at("{$0\n  \"$schema\"");
    let items = f.completions();
    assert_eq!(labels(&items), ["pathTemplate", "pathTemplateNoAdaptation", "entryStep"]);
    let entry = item(&items, "entryStep");
    assert_eq!(entry.kind, CompletionKind::Field);
    assert_eq!(entry.detail.as_deref(), Some("string"));
    assert_eq!(entry.insert.as_deref(), Some("\"entryStep\": "));
    assert_eq!(entry.replace, Span::empty(f.cursor().offset));
    assert!(entry.documentation.as_deref().unwrap().starts_with("Generic entry step, used when `entryStepMapping`"));
}

#[test]
fn completes_gate_keys_with_a_comma_after_the_last_entry() {
    let f = registry_at(
        "\"intentField\": \"next_action.action\"$0\n      },\n      \"transitions\": {\n        \"next\": { \"target\": \"continuation.issue\"",
    );
    let items = f.completions();
    assert_eq!(labels(&items), ["targetField", "handoffFields", "targetMode", "failFast", "fallbackIntent"]);
    assert_eq!(item(&items, "failFast").insert.as_deref(), Some(", \"failFast\": "));
    assert_eq!(item(&items, "failFast").detail.as_deref(), Some("boolean"));
}

#[test]
fn completes_keys_of_transition_rules_and_output_schema_refs() {
    let f = registry_at("\"repeat\": { \"target\": \"initial.issue\"$0 }");
    assert_eq!(labels(&f.completions()), ["fallback", "condition", "targets"]);
    let f = registry_at("\"outputSchemaRef\": { \"file\": \"issue.schema.json\"$0, \"schema\": \"initial.issue\" }");
    assert!(labels(&f.completions()).is_empty());
    let f = registry_at("\"failurePattern\": \"git-dirty\",$0");
    assert_eq!(labels(&f.completions()), ["recoverableByDefault", "path", "semanticConfig"]);
    let f = registry_at("\"onFailure\": { \"action\": \"retry\", \"maxAttempts\": 3 }$0");
    assert_eq!(labels(&f.completions()), ["outputSchemaRef", "description", "outputSchema"]);
}

#[test]
fn completes_step_ids_inside_a_target_string() {
    let f = registry_at("\"next\": { \"target\": \"cont$0inuation.issue\"");
    let items = f.completions();
    assert_eq!(labels(&items), ["initial.issue", "continuation.issue", "closure.issue"]);
    let closure = item(&items, "closure.issue");
    assert_eq!(closure.kind, CompletionKind::Reference);
    assert_eq!(closure.detail.as_deref(), Some("Closure Issue · closure"));
    assert_eq!(item(&items, "continuation.issue").detail.as_deref(), Some("Continuation Issue · work (from c2)"));
    assert_eq!(closure.insert, None);
    assert_eq!(replaced(&f, closure), "continuation.issue");
}

#[test]
fn completes_step_ids_for_fallbacks_conditional_targets_and_entries() {
    for marked in
        ["\"fallback\": \"$0closure.issue\"", "\"done\": \"closure.issue$0\"", "\"poll:state\": \"initial$0.issue\""]
    {
        let f = registry_at(marked);
        assert_eq!(labels(&f.completions()), ["initial.issue", "continuation.issue", "closure.issue"], "{marked}");
    }
    // `null` is replaced by a quoted id.
    let f = registry_at("\"closing\": { \"target\": nu$0ll }");
    let items = f.completions();
    assert_eq!(item(&items, "closure.issue").insert.as_deref(), Some("\"closure.issue\""));
    assert_eq!(replaced(&f, &items[0]), "null");
}

#[test]
fn completes_verdict_types_as_entry_step_mapping_keys() {
    let f = registry_at("\"entryStepMapping\": { \"poll:state\": \"initial.issue\"$0 }");
    let items = f.completions();
    assert_eq!(
        labels(&items),
        [
            "count:iteration",
            "count:check",
            "detect:keyword",
            "detect:structured",
            "detect:graph",
            "meta:composite",
            "meta:custom"
        ]
    );
    assert_eq!(item(&items, "count:check").insert.as_deref(), Some(", \"count:check\": "));
}

#[test]
fn completes_allowed_intents_for_the_step_kind_not_yet_listed() {
    let f = registry_at("\"allowedIntents\": [\"next\", \"repeat\"$0]");
    let items = f.completions();
    assert_eq!(labels(&items), ["jump", "handoff"]);
    let handoff = item(&items, "handoff");
    assert_eq!(handoff.insert.as_deref(), Some(", \"handoff\""));
    assert_eq!(handoff.detail.as_deref(), Some("intent (work)"));
    assert!(handoff.documentation.as_deref().unwrap().starts_with("Hand over from work to closure"));
    // Inside an item, the item itself does not count as listed.
    let f = registry_at("\"allowedIntents\": [\"closing\", \"re$0peat\"]");
    assert_eq!(labels(&f.completions()), ["repeat"]);
}

#[test]
fn completes_enums_from_the_schema() {
    let with = |field: &str| {
        fixture(&[(
            "steps_registry.json",
            edit("\"name\": \"Initial Issue\",", &format!("\"name\": \"Initial Issue\", {field},")),
        )])
    };
    let f = fixture(&[(
        "steps_registry.json",
        edit("\"c2\": \"continuation\",", "\"stepKind\": \"$0\", \"c2\": \"continuation\","),
    )]);
    assert_eq!(labels(&f.completions()), ["work", "verification", "closure"]);
    let f = with("\"model\": \"$0\"");
    assert_eq!(labels(&f.completions()), ["sonnet", "opus", "haiku"]);
    assert_eq!(f.completions()[1].kind, CompletionKind::Value);
    assert!(f.completions()[1].documentation.as_deref().unwrap().starts_with("Claude Opus"));
    let f = with("\"permissionMode\": \"$0\"");
    assert_eq!(labels(&f.completions()), ["default", "plan", "acceptEdits", "bypassPermissions"]);
    let f = fixture(&[(
        "steps_registry.json",
        edit(
            "\"intentField\": \"next_action.action\"\n      },",
            "\"intentField\": \"next_action.action\",\n        \"targetMode\": \"$0\"\n      },",
        ),
    )]);
    assert_eq!(labels(&f.completions()), ["explicit", "dynamic", "conditional"]);
    // `fallbackIntent`: the intents the step's kind allows.
    let f = fixture(&[(
        "steps_registry.json",
        edit("[\"closing\", \"repeat\"],", "[\"closing\", \"repeat\"],\n        \"fallbackIntent\": \"$0\","),
    )]);
    assert_eq!(labels(&f.completions()), ["repeat", "closing"]);
}

#[test]
fn completes_validators_failure_patterns_and_extractors() {
    let f = registry_at("\"validator\": \"git$0-clean\"");
    let items = f.completions();
    assert_eq!(labels(&items), ["git-clean"]);
    assert_eq!(items[0].detail.as_deref(), Some("validator (command)"));
    assert_eq!(replaced(&f, &items[0]), "git-clean");
    let f = registry_at("\"failurePattern\": \"git-$0dirty\"");
    let items = f.completions();
    assert_eq!(labels(&items), ["git-dirty"]);
    assert_eq!(items[0].documentation.as_deref(), Some("Uncommitted changes remain"));
    let f = registry_at("\"changedFiles\": \"parse$0ChangedFiles\"");
    let items = f.completions();
    assert_eq!(items.len(), 16);
    assert_eq!(labels(&items)[..3], ["parseChangedFiles", "parseUntrackedFiles", "parseTestOutput"]);
}

#[test]
fn completes_schema_files_and_the_schemas_in_the_named_file() {
    let f = registry_at("\"file\": \"iss$0ue.schema.json\", \"schema\": \"initial.issue\"");
    let items = f.completions();
    assert_eq!(labels(&items), ["common.schema.json", "issue.schema.json"]);
    assert_eq!(replaced(&f, &items[0]), "issue.schema.json");
    let f = registry_at("\"schema\": \"init$0ial.issue\"");
    let items = f.completions();
    assert_eq!(labels(&items), ["continuationAction", "initial.issue", "continuation.issue", "closure.issue"]);
    assert_eq!(items[0].detail.as_deref(), Some("schema in $defs"));
    assert_eq!(items[1].detail.as_deref(), Some("schema in top level"));
}

#[test]
fn completes_in_a_half_typed_registry() {
    // A transitions key being typed: the step's allowed intents without a rule.
    let f = fixture(&[(
        "steps_registry.json",
        edit(
            "\"handoff\": { \"target\": \"closure.issue\" }\n",
            "\"handoff\": { \"target\": \"closure.issue\" },\n        \"$0\n",
        ),
    )]);
    assert!(does_not_parse(&f));
    let items = f.completions();
    assert_eq!(labels(&items), ["repeat"]);
    assert_eq!(items[0].kind, CompletionKind::Field);
    assert_eq!(items[0].insert, None);
    assert_eq!(items[0].replace, Span::empty(f.cursor().offset));

    // A value without its closing quote.
    let f = fixture(&[(
        "steps_registry.json",
        edit("\"c2\": \"continuation\",", "\"stepKind\": \"wo$0\n      \"c2\": \"continuation\","),
    )]);
    assert!(does_not_parse(&f));
    let items = f.completions();
    assert_eq!(labels(&items), ["work", "verification", "closure"]);
    assert_eq!(replaced(&f, &items[0]), "wo");
    assert_eq!(items[0].insert, None);

    // A missing value: inserted with its quotes.
    let f = fixture(&[(
        "steps_registry.json",
        edit("\"repeat\": { \"target\": \"initial.issue\" }", "\"repeat\": { \"target\": $0 }"),
    )]);
    assert!(does_not_parse(&f));
    let items = f.completions();
    assert_eq!(labels(&items), ["initial.issue", "continuation.issue", "closure.issue"]);
    assert_eq!(item(&items, "closure.issue").detail.as_deref(), Some("Closure Issue · closure"));
    assert_eq!(item(&items, "initial.issue").insert.as_deref(), Some("\"initial.issue\""));

    // A trailing comma in allowedIntents: the step is still known.
    let f = fixture(&[(
        "steps_registry.json",
        edit(
            "\"allowedIntents\": [\"next\", \"repeat\", \"handoff\"]",
            "\"allowedIntents\": [\"next\", \"repeat\", \"handoff\", $0]",
        ),
    )]);
    assert!(does_not_parse(&f));
    assert_eq!(labels(&f.completions()), ["jump"]);

    // A key being typed in the gate: present keys are left out.
    let f = fixture(&[(
        "steps_registry.json",
        edit(
            "\"handoffFields\": [\"analysis.summary\"]\n",
            "\"handoffFields\": [\"analysis.summary\"],\n        \"fail$0\n",
        ),
    )]);
    assert!(does_not_parse(&f));
    let items = f.completions();
    assert_eq!(labels(&items), ["targetField", "targetMode", "failFast", "fallbackIntent"]);
    assert_eq!(replaced(&f, &items[0]), "fail");

    // The rest of the file not typed yet: what is still open is closed for the model.
    let cut = |marker: &str, keep: usize| {
        let end = REGISTRY.find(marker).expect("marker") + keep;
        fixture(&[("steps_registry.json", format!("{}$0", &REGISTRY[..end]))])
    };
    let f = cut("[\"closing\", \"repeat\"]", 1);
    assert!(does_not_parse(&f));
    assert_eq!(labels(&f.completions()), ["closing", "repeat"]);
    let f = cut("\"repeat\": { \"target\": \"initial.issue\"", "\"repeat\": { \"target\": \"".len());
    assert_eq!(labels(&f.completions()), ["initial.issue"]);
}

#[test]
fn completes_uv_variables_of_the_prompts_step() {
    let f = fixture(&[("prompts/steps/continuation/issue/f_default.md", "Iteration {uv-$0\n".to_string())]);
    let items = f.completions();
    assert_eq!(labels(&items), ["issue", "iteration"]);
    assert_eq!(items[0].kind, CompletionKind::Variable);
    assert_eq!(items[0].detail.as_deref(), Some("uvVariables of continuation.issue"));
    assert_eq!(items[0].documentation.as_deref(), Some("Filled from the `agent.json` parameter `issue`."));
    assert_eq!(items[1].documentation.as_deref(), Some("Supplied by the runner."));
    assert_eq!(items[0].insert.as_deref(), Some("issue}"));
    let f = fixture(&[("prompts/steps/initial/issue/f_default.md", "Issue {uv-is$0sue}\n".to_string())]);
    let items = f.completions();
    assert_eq!(labels(&items), ["issue"]);
    // Before an existing `}` the item replaces the name and adds no second brace.
    assert_eq!(items[0].insert.as_deref(), Some("issue"));
    assert_eq!(replaced(&f, &items[0]), "issue");
    // After a bare `{` the items write the `uv-` prefix, and `{input_text}` is offered too.
    let f = fixture(&[("prompts/steps/continuation/issue/f_default.md", "Iteration {$0\n".to_string())]);
    let items = f.completions();
    assert_eq!(labels(&items), ["input_text", "uv-issue", "uv-iteration"]);
    assert_eq!(items[1].insert.as_deref(), Some("uv-issue}"));
    // `{issue}` (the `uv-` prefix forgotten) is offered the real placeholder, replacing the name.
    let f = fixture(&[("prompts/steps/initial/issue/f_default.md", "Issue {issue$0}\n".to_string())]);
    let items = f.completions();
    assert_eq!(labels(&items), ["uv-issue"]);
    assert_eq!(replaced(&f, &items[0]), "issue");
    // Not a placeholder (a JSON example in prose): nothing.
    let f = fixture(&[("prompts/steps/initial/issue/f_default.md", "Send {\"a\": $0}\n".to_string())]);
    assert!(f.completions().is_empty());
}

// ---------------------------------------------------------------------------------------------
// Hover

fn hover(f: &Fixture) -> (String, String) {
    let info = ide::hover(&f.workspace, f.cursor()).expect("hover");
    (f.text(f.cursor().file)[info.span.start..info.span.end].to_string(), info.markdown)
}

#[test]
fn hover_documents_registry_keys_from_the_schema() {
    let (under, markdown) = hover(&registry_at("\"intent$0Field\": \"next_action.action\""));
    assert_eq!(under, "intentField");
    assert!(markdown.starts_with("**`intentField`**\n\nDot path of the intent in the model's output"), "{markdown}");
    let (under, markdown) = hover(&registry_at("\"validation$0Conditions\""));
    assert_eq!(under, "validationConditions");
    assert_eq!(markdown, "**`validationConditions`**\n\nChecks to run in order; the first failure stops the pass.");
    let (_, markdown) = hover(&registry_at("\"stepKind\": \"wo$0rk\""));
    assert!(markdown.starts_with("**`work`**\n\nProduces artifacts."), "{markdown}");
}

#[test]
fn hover_explains_intents_and_the_kinds_that_allow_them() {
    let (under, markdown) = hover(&registry_at("\"allowedIntents\": [\"next\", \"repeat\", \"hand$0off\"]"));
    assert_eq!(under, "handoff");
    assert!(markdown.starts_with("**intent `handoff`**\n\nHand over from work to closure"), "{markdown}");
    assert!(markdown.ends_with("\n\nAllowed for: `work`."), "{markdown}");
    let (under, markdown) = hover(&registry_at("\"closing\": { \"target\"$0: null }"));
    assert_eq!(under, "target");
    assert!(markdown.starts_with("**`target`**"), "{markdown}");
    let (under, markdown) = hover(&registry_at("\"clos$0ing\": { \"target\": null }"));
    assert_eq!(under, "closing");
    assert!(markdown.ends_with("Allowed for: `closure`."), "{markdown}");
    // Not allowed for this step's kind.
    let f =
        fixture(&[("steps_registry.json", edit("[\"closing\", \"repeat\"]", "[\"closing\", \"repeat\", \"ne$0xt\"]"))]);
    let (_, markdown) = hover(&f);
    assert!(
        markdown
            .ends_with("Allowed for: `work`, `verification`.\n\nNot allowed for `closure.issue`, a `closure` step.")
    );
    let f = fixture(&[(
        "steps_registry.json",
        edit("[\"closing\", \"repeat\"]", "[\"closing\", \"repeat\", \"ab$0ort\"]"),
    )]);
    let (_, markdown) = hover(&f);
    assert!(markdown.contains("Allowed for: no step kind"), "{markdown}");
    let f =
        fixture(&[("steps_registry.json", edit("[\"closing\", \"repeat\"]", "[\"closing\", \"repeat\", \"do$0ne\"]"))]);
    let (_, markdown) = hover(&f);
    assert!(markdown.starts_with("**`done`** is an output alias of the intent `closing`"), "{markdown}");
}

#[test]
fn hover_on_a_step_reference_shows_the_step() {
    let (under, markdown) = hover(&registry_at("\"fallback\": \"closure$0.issue\""));
    assert_eq!(under, "closure.issue");
    assert_eq!(markdown, "**step `closure.issue`**: Closure Issue\n\n- kind: `closure`\n- c2 `closure`, c3 `issue`");
    let (_, markdown) = hover(&registry_at("\"default\": \"continuation$0.issue\""));
    assert_eq!(
        markdown,
        "**step `continuation.issue`**: Continuation Issue\n\n- kind: `work` (inferred from `c2`)\n- c2 `continuation`, c3 `issue`"
    );
    let (under, _) = hover(&registry_at("\"from\": \"continuation.is$0sue.summary\""));
    assert_eq!(under, "continuation.issue");
}

// ---------------------------------------------------------------------------------------------
// Definitions

fn definitions(f: &Fixture) -> Vec<(String, usize, String)> {
    ide::definitions(&f.workspace, f.cursor())
        .iter()
        .map(|t| (f.file_name(t.file), f.line(t.file, t.span), f.at(t).to_string()))
        .collect()
}

fn registry_line(needle: &str) -> usize {
    REGISTRY.lines().position(|line| line.contains(needle)).expect("line") + 1
}

#[test]
fn step_references_go_to_the_step_key() {
    let key = registry_line("\"closure.issue\": {");
    for marked in [
        "\"fallback\": \"clo$0sure.issue\"",
        "\"done\": \"$0closure.issue\"",
        "\"handoff\": { \"target\": \"closure.issue$0\"",
    ] {
        assert_eq!(definitions(&registry_at(marked)), [("steps_registry.json".into(), key, "closure.issue".into())]);
    }
    let initial = registry_line("\"initial.issue\": {");
    assert_eq!(
        definitions(&registry_at("\"poll:state\": \"initial.is$0sue\"")),
        [("steps_registry.json".into(), initial, "initial.issue".into())]
    );
}

#[test]
fn schema_references_go_into_the_schema_files() {
    let f = registry_at("\"intentSchemaRef\": \"#/properties/next_action$0/properties/action\"");
    assert_eq!(definitions(&f), [("schemas/issue.schema.json".into(), 10, "[\"next\", \"repeat\"]".into())]);
    // Through a `$ref`, as climpt resolves it.
    let f = fixture(&[(
        "steps_registry.json",
        mark(
            &REGISTRY.replacen("\"intentSchemaRef\"", "\"intentSchemaRef_\"", 1),
            "\"intentSchemaRef\": \"#/prop$0erties",
        ),
    )]);
    assert_eq!(
        definitions(&f),
        [("schemas/issue.schema.json".into(), 4, "[\"next\", \"repeat\", \"handoff\"]".into())]
    );
    let f = registry_at("\"file\": \"issue.sch$0ema.json\"");
    let found = definitions(&f);
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].0.as_str(), found[0].1), ("schemas/issue.schema.json", 1));
    assert_eq!(found[0].2, SCHEMA.trim_end());
    let f = registry_at("\"schema\": \"closure$0.issue\"");
    let found = definitions(&f);
    assert_eq!((found[0].0.as_str(), found[0].1), ("schemas/issue.schema.json", 20));
    assert!(found[0].2.starts_with("{\n    \"type\": \"object\""));
}

#[test]
fn validator_and_failure_pattern_names_go_to_their_entries() {
    let f = registry_at("\"validator\": \"git-cl$0ean\"");
    assert_eq!(
        definitions(&f),
        [("steps_registry.json".into(), registry_line("\"git-clean\": {"), "git-clean".into())]
    );
    let f = registry_at("\"failurePattern\": \"git$0-dirty\"");
    assert_eq!(
        definitions(&f),
        [("steps_registry.json".into(), registry_line("\"git-dirty\": {"), "git-dirty".into())]
    );
}

#[test]
fn uv_placeholders_go_to_the_steps_uv_variables() {
    let f = fixture(&[("prompts/steps/continuation/issue/f_default.md", "Issue {uv-is$0sue}\n".to_string())]);
    assert_eq!(
        definitions(&f),
        [("steps_registry.json".into(), registry_line("\"uvVariables\": [\"issue\", \"iteration\"]"), "issue".into())]
    );
    let f = fixture(&[("prompts/steps/continuation/issue/f_default.md", "Issue {uv-unknown$0}\n".to_string())]);
    assert!(definitions(&f).is_empty());
}

// ---------------------------------------------------------------------------------------------
// References and rename

/// The trimmed line a target is on, to say which reference it is.
fn line_text<'f>(f: &'f Fixture, target: &Target) -> &'f str {
    let text = f.text(target.file);
    let start = text[..target.span.start].rfind('\n').map_or(0, |i| i + 1);
    let end = text[target.span.start..].find('\n').map_or(text.len(), |i| target.span.start + i);
    text[start..end].trim()
}

#[test]
fn references_of_a_step_list_every_place_that_names_it() {
    let f =
        registry_at("\"closure$0.issue\": {\n      \"stepId\": \"closure.issue\",\n      \"name\": \"Closure Issue\"");
    let targets = ide::references(&f.workspace, f.cursor());
    assert!(targets.iter().all(|t| f.at(t) == "closure.issue"));
    let lines: Vec<&str> = targets.iter().map(|t| line_text(&f, t)).collect();
    assert_eq!(
        lines,
        [
            "\"next\": { \"target\": \"continuation.issue\", \"fallback\": \"closure.issue\" },",
            "\"next\": { \"condition\": \"summary\", \"targets\": { \"done\": \"closure.issue\", \"default\": \"continuation.issue\" } },",
            "\"handoff\": { \"target\": \"closure.issue\" }",
            "\"closure.issue\": {",
            "\"stepId\": \"closure.issue\",",
        ]
    );
    // The last two are under `validationSteps`, not the step itself.
    assert!(targets[3].span.start > REGISTRY.find("\"validationSteps\"").unwrap());

    // From a reference, the same list; `inputs.*.from` names its step too. Going to the
    // definition from the step key finds the key (the declaration).
    let f = registry_at("\"target\": \"continuation$0.issue\", \"fallback\"");
    let targets = ide::references(&f.workspace, f.cursor());
    let found: Vec<(&str, &str)> = targets.iter().map(|t| (line_text(&f, t), f.at(t))).collect();
    assert_eq!(
        found,
        [
            (
                "\"next\": { \"target\": \"continuation.issue\", \"fallback\": \"closure.issue\" },",
                "continuation.issue"
            ),
            (
                "\"next\": { \"condition\": \"summary\", \"targets\": { \"done\": \"closure.issue\", \"default\": \"continuation.issue\" } },",
                "continuation.issue"
            ),
            ("\"inputs\": { \"summary\": { \"from\": \"continuation.issue.summary\" } },", "continuation.issue"),
        ]
    );
    let f = registry_at("\"continuation.iss$0ue\": {");
    assert_eq!(
        definitions(&f),
        [("steps_registry.json".into(), registry_line("\"continuation.issue\": {"), "continuation.issue".into())]
    );
}

fn apply(text: &str, edits: &[(FileId, Edit)]) -> String {
    let mut out = text.to_string();
    let mut sorted: Vec<&Edit> = edits.iter().map(|(_, e)| e).collect();
    sorted.sort_by_key(|e| std::cmp::Reverse(e.span.start));
    for e in sorted {
        out.replace_range(e.span.start..e.span.end, &e.replacement);
    }
    out
}

#[test]
fn renaming_a_step_changes_its_key_stepid_and_every_reference() {
    let f = registry_at("\"closure.issue\": {\n      \"stepId\": \"clo$0sure.issue\"");
    let prepared = ide::prepare_rename(&f.workspace, f.cursor()).expect("renameable");
    assert_eq!(&f.text(f.cursor().file)[prepared.start..prepared.end], "closure.issue");
    let edits = ide::rename(&f.workspace, f.cursor(), "finish.issue").expect("renamed");
    let registry = f.id("steps_registry.json");
    assert!(edits.iter().all(|(file, _)| *file == registry));
    assert_eq!(edits.len(), 7);
    // Everything but the schema name `closure.issue` in `outputSchemaRef` changes.
    let expected = REGISTRY
        .replace("closure.issue", "finish.issue")
        .replace("\"schema\": \"finish.issue\"", "\"schema\": \"closure.issue\"");
    assert_eq!(apply(f.text(registry), &edits), expected);

    // From an `inputs.*.from` prefix: the key after the dot stays.
    let f = registry_at("\"from\": \"contin$0uation.issue.summary\"");
    let edits = ide::rename(&f.workspace, f.cursor(), "work.issue").expect("renamed");
    let expected = REGISTRY
        .replace("continuation.issue", "work.issue")
        .replace("\"schema\": \"work.issue\"", "\"schema\": \"continuation.issue\"");
    assert_eq!(apply(f.text(registry), &edits), expected);
    assert!(expected.contains("\"from\": \"work.issue.summary\""));
}

#[test]
fn rename_refuses_bad_names_and_other_positions() {
    let f = registry_at("\"fallback\": \"closure$0.issue\"");
    let refuse = |name: &str| ide::rename(&f.workspace, f.cursor(), name).expect_err("refused");
    assert_eq!(refuse("initial.issue"), "`initial.issue` is already the id of another step");
    assert_eq!(refuse(""), "a step id cannot be empty");
    assert!(refuse("a\"b").contains("contains a quote"));
    assert_eq!(ide::rename(&f.workspace, f.cursor(), "closure.issue").unwrap().len(), 7);

    let f = registry_at("\"c2\": \"clo$0sure\"");
    let reason = ide::prepare_rename(&f.workspace, f.cursor()).expect_err("refused");
    assert!(reason.starts_with("only step ids can be renamed in a steps registry"), "{reason}");
    assert!(ide::rename(&f.workspace, f.cursor(), "x").is_err());

    let f = fixture(&[("steps_registry.json", edit("\"fallback\": \"closure.issue\"", "\"fallback\": \"clo$0sed\""))]);
    assert_eq!(
        ide::prepare_rename(&f.workspace, f.cursor()),
        Err("no step is named `closed`, so there is nothing to rename".to_string())
    );

    let f = fixture(&[(
        "steps_registry.json",
        edit("\"fallback\": \"closure.issue\"", "\"fallback\": \"clo$0sure.issue\",,"),
    )]);
    assert_eq!(
        ide::prepare_rename(&f.workspace, f.cursor()),
        Err("the registry does not parse; fix its syntax before renaming".to_string())
    );

    // Files the family does not rename in: no answer from `steps/`.
    let f = fixture(&[("prompts/steps/initial/issue/f_default.md", "Issue {uv-is$0sue}\n".to_string())]);
    assert_eq!((Steps.editor().prepare_rename)(&f.workspace, f.cursor()), None);
    assert!((Steps.editor().rename)(&f.workspace, f.cursor(), "x").is_none());
}

// ---------------------------------------------------------------------------------------------
// Outline and links

fn outline(symbols: &[Symbol], depth: usize, out: &mut String) {
    for s in symbols {
        let detail = s.detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default();
        out.push_str(&format!("{}{:?} {}{detail}\n", "  ".repeat(depth), s.kind, s.name));
        outline(&s.children, depth + 1, out);
    }
}

#[test]
fn the_outline_has_one_node_per_step_and_the_validation_groups() {
    let f = fixture(&[]);
    let registry = f.id("steps_registry.json");
    let symbols = ide::symbols(&f.workspace, registry);
    let mut out = String::new();
    outline(&symbols, 0, &mut out);
    assert_eq!(
        out,
        "\
Node initial.issue (Initial Issue · work)
  Field structuredGate (next, repeat)
  Field transitions
    Field next (→ continuation.issue, closure.issue)
    Field repeat (→ initial.issue)
Node continuation.issue (Continuation Issue · work (from c2))
  Field structuredGate (next, repeat, handoff)
  Field transitions
    Field next (→ closure.issue, continuation.issue)
    Field handoff (→ closure.issue)
Node closure.issue (Closure Issue · closure)
  Field structuredGate (closing, repeat)
  Field transitions
    Field closing (→ (end))
Field validators
  Field git-clean (command)
Field failurePatterns
  Field git-dirty (Uncommitted changes remain)
Field validationSteps
  Field closure.issue (Closure validation)
"
    );
    let text = f.text(registry);
    let step = &symbols[1];
    assert_eq!(&text[step.selection.start..step.selection.end], "\"continuation.issue\"");
    assert!(text[step.span.start..step.span.end].ends_with("\"target\": \"closure.issue\" }\n      }\n    }"));
    assert!(ide::symbols(&f.workspace, f.id("agent.json")).is_empty());
}

fn links(f: &Fixture, file: &str) -> Vec<(String, String)> {
    let id = f.id(file);
    ide::links(&f.workspace, id)
        .into_iter()
        .map(|l| {
            let target = l.target.strip_prefix(&f.agent).map(Path::to_path_buf).unwrap_or_else(|_| l.target.clone());
            (f.text(id)[l.span.start..l.span.end].to_string(), target.to_string_lossy().replace('\\', "/"))
        })
        .collect()
}

#[test]
fn links_name_schema_files_the_registry_and_the_system_prompt() {
    let f = fixture(&[]);
    let schema = |text: &str| (text.to_string(), "schemas/issue.schema.json".to_string());
    let outside = f.dir.path().join(".agent").join("registry.schema.json");
    assert_eq!(
        links(&f, "steps_registry.json"),
        [
            ("../registry.schema.json".to_string(), outside.to_string_lossy().into_owned()),
            schema("issue.schema.json"),
            schema("issue.schema.json"),
            schema("issue.schema.json"),
        ]
    );
    // agent.json's `$schema` names a file that does not exist: no link.
    assert_eq!(
        links(&f, "agent.json"),
        [
            ("prompts/system.md".to_string(), "prompts/system.md".to_string()),
            ("steps_registry.json".to_string(), "steps_registry.json".to_string()),
        ]
    );
}

#[test]
fn other_files_get_nothing_from_the_registry_features() {
    // agent.json gets key completion from its schema (tested with the LSP), nothing else here.
    let f = fixture(&[("agent.json", AGENT_JSON.replacen("\"name\"", "\"na$0me\"", 1))]);
    assert_eq!((Steps.editor().hover)(&f.workspace, f.cursor()), None);
    assert!((Steps.editor().definitions)(&f.workspace, f.cursor()).is_empty());
    assert!((Steps.editor().references)(&f.workspace, f.cursor()).is_empty());
    let f = fixture(&[("schemas/common.schema.json", COMMON.replacen("\"type\"", "\"ty$0pe\"", 1))]);
    assert!((Steps.editor().completions)(&f.workspace, f.cursor()).is_empty());
    assert_eq!((Steps.editor().prepare_rename)(&f.workspace, f.cursor()), None);
    assert!((Steps.editor().symbols)(&f.workspace, f.cursor().file).is_empty());
    assert!((Steps.editor().links)(&f.workspace, f.cursor().file).is_empty());
}

/// The same workspace with `file`'s text replaced (a buffer being edited).
fn with_text(workspace: &Workspace, file: FileId, text: &str) -> Workspace {
    let mut out = Workspace::new();
    for f in workspace.files() {
        let text = if f.id == file { text.to_string() } else { f.text.clone() };
        out.add(f.path.clone(), f.display.clone(), text, f.kind.clone(), f.config.clone());
    }
    out
}

#[test]
fn positions_of_a_real_agent_answer_whole_and_half_typed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/climpt/.agent/facilitator");
    let (workspace, _) = common::check_with(std::slice::from_ref(&dir), Config::defaults(&dir));
    let registry = workspace.file_at(&dir.join("steps_registry.json")).expect("registry").id;
    let text = workspace.file(registry).text.clone();
    let boundaries: Vec<usize> = (0..=text.len()).filter(|o| text.is_char_boundary(*o)).collect();
    let mut answered = 0;
    for offset in boundaries.iter().copied().step_by(29) {
        let at = Cursor { file: registry, offset };
        answered += ide::completions(&workspace, at).len();
        let _ = (ide::hover(&workspace, at), ide::definitions(&workspace, at), ide::references(&workspace, at));
        let _ = ide::prepare_rename(&workspace, at);
    }
    assert!(answered > 0);
    assert!(!ide::symbols(&workspace, registry).is_empty());
    // Cut off anywhere (the rest of the file not typed yet), completion still answers.
    let mut half_typed = 0;
    for cut in boundaries.iter().copied().step_by(211) {
        let typed = with_text(&workspace, registry, &text[..cut]);
        half_typed += ide::completions(&typed, Cursor { file: registry, offset: cut }).len();
    }
    assert!(half_typed > 0);
}
