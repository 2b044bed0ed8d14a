//! Every editor feature the language server offers, at the protocol level: the server runs in
//! this process and is driven over a socket pair with real JSON-RPC framing, on a small `sm/`
//! state machine and on the climpt `fixer` agent (`steps/`). Each answer is snapshotted with the
//! temp dir replaced by `[ROOT]`.

mod lsp_client;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use lsp_client::{Client, redact, uri};

/// The server in this process, initialized on `root` with UTF-16 positions and ordered
/// `documentChanges` in workspace edits.
fn server(root: &Path) -> Client {
    let mut client = Client::in_process();
    client.initialize_with(
        root,
        json!({
            "general": {"positionEncodings": ["utf-16"]},
            "workspace": {"workspaceEdit": {"documentChanges": true}}
        }),
    );
    client
}

/// The edits of a workspace edit by URI, checking they come as `documentChanges` in path order.
fn document_changes(edit: &Value) -> serde_json::Map<String, Value> {
    let documents = edit["documentChanges"].as_array().expect("ordered documentChanges");
    let uris: Vec<&str> = documents.iter().filter_map(|d| d["textDocument"]["uri"].as_str()).collect();
    assert!(uris.is_sorted(), "files in path order: {uris:?}");
    documents
        .iter()
        .map(|d| (d["textDocument"]["uri"].as_str().unwrap_or("").to_string(), d["edits"].clone()))
        .collect()
}

fn labels(items: &Value) -> Vec<&str> {
    items.as_array().expect("a completion list").iter().filter_map(|i| i["label"].as_str()).collect()
}

/// `text` with the first `from` replaced by `to`, which must occur.
fn edit(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "`{from}` is in the text");
    text.replacen(from, to, 1)
}

/// The (start line, start character) of a location or an edit's range.
fn start(range: &Value) -> (u64, u64) {
    (range["start"]["line"].as_u64().unwrap(), range["start"]["character"].as_u64().unwrap())
}

// ---------------------------------------------------------------------------------------------
// The `sm/` family: plan → review.

const SM: &str = "entry: plan\ncontext:\n  required: [task]\n";

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
retryPolicy: { maxAttempts: 2, backoff: none }
turnCap: 20
resolutionPolicy: retry-later
next:
  nextStages: [review]
---
Task: {{ctx.task}}. Call submit_plan with a summary.
";

const REVIEW: &str = "---
id: review
name: Review
allowedTools: [Read]
completionTool: submit_review
completionSchema:
  type: object
  properties:
    approved: { type: boolean }
retryPolicy: { maxAttempts: 1, backoff: none }
turnCap: 10
resolutionPolicy: fail
---
Plan: {{ctx.upstream[0].parsed.summary}}. Call submit_review.
";

struct Sm {
    dir: tempfile::TempDir,
    client: Client,
}

impl Sm {
    fn new() -> Sm {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("sm.yaml"), SM).expect("write");
        std::fs::write(dir.path().join("plan.md"), PLAN).expect("write");
        std::fs::write(dir.path().join("review.md"), REVIEW).expect("write");
        let client = server(dir.path());
        Sm { dir, client }
    }

    fn plan(&self) -> PathBuf {
        self.dir.path().join("plan.md")
    }

    fn review(&self) -> PathBuf {
        self.dir.path().join("review.md")
    }

    fn redact(&self, value: &Value) -> Value {
        redact(self.dir.path(), value)
    }
}

#[test]
fn sm_completion() {
    let mut sm = Sm::new();
    let plan = sm.plan();
    let review = sm.review();

    let at = sm.client.at(&plan, &edit(PLAN, "allowedTools: [Read, Grep]", "allowedTools: [Read, $0]"));
    let tools = sm.client.request("textDocument/completion", at);
    assert!(labels(&tools).contains(&"Grep"), "{tools}");
    assert!(labels(&tools).contains(&"Bash"), "{tools}");
    insta::assert_json_snapshot!("sm_completion_tools", sm.redact(&tools));

    let at = sm.client.at(&plan, &edit(PLAN, "turnCap: 20\n", "turnCap: 20\n$0\n"));
    let keys = sm.client.request("textDocument/completion", at);
    // plan.md already has every other field: only the two optional ones left are offered.
    assert_eq!(labels(&keys), ["inputsSchema", "tags"], "{keys}");
    assert!(!labels(&keys).contains(&"turnCap"), "fields already present are not offered again: {keys}");
    assert!(keys.as_array().unwrap().iter().all(|i| !i["documentation"].is_null()), "documented: {keys}");
    insta::assert_json_snapshot!("sm_completion_keys", sm.redact(&keys));

    sm.client.set(&plan, PLAN);
    let at = sm.client.at(&plan, &edit(PLAN, "nextStages: [review]", "nextStages: [$0]"));
    let stages = sm.client.request("textDocument/completion", at);
    assert!(labels(&stages).contains(&"review"), "{stages}");
    insta::assert_json_snapshot!("sm_completion_stages", sm.redact(&stages));

    sm.client.set(&plan, PLAN);
    let at = sm.client.at(&review, &edit(REVIEW, "parsed.summary}}", "parsed.$0}}"));
    let properties = sm.client.request("textDocument/completion", at);
    assert_eq!(labels(&properties), ["summary"], "{properties}");
    insta::assert_json_snapshot!("sm_completion_upstream_properties", sm.redact(&properties));
}

#[test]
fn sm_completion_of_enum_values_and_json_schema_keywords() {
    let mut sm = Sm::new();
    let plan = sm.plan();
    // Enum values carry the key's documentation.
    for (from, to) in [
        ("resolutionPolicy: retry-later", "resolutionPolicy: $0"),
        ("backoff: none }", "backoff: $0 }"),
        ("nextStages: [review]", "nextStages: [review]\n  execution: $0"),
    ] {
        let at = sm.client.at(&plan, &edit(PLAN, from, to));
        let items = sm.client.request("textDocument/completion", at);
        assert!(!labels(&items).is_empty(), "{to}: {items}");
        assert!(items.as_array().unwrap().iter().all(|i| i["documentation"]["value"].is_string()), "{to}: {items}");
    }
    // Inside completionSchema: JSON Schema keywords, not frontmatter fields.
    let at = sm.client.at(&plan, &edit(PLAN, "  required: [summary]\n", "  required: [summary]\n  $0\n"));
    let keys = sm.client.request("textDocument/completion", at);
    let keys = labels(&keys);
    assert!(keys.contains(&"additionalProperties") && keys.contains(&"description"), "{keys:?}");
    assert!(!keys.contains(&"type") && !keys.contains(&"properties"), "present ones are not offered: {keys:?}");
    assert!(!keys.contains(&"turnCap"), "{keys:?}");
    let at = sm
        .client
        .at(&plan, &edit(PLAN, "summary: { type: string, description: One-line plan. }", "summary:\n      $0"));
    let keys = sm.client.request("textDocument/completion", at);
    assert!(labels(&keys).contains(&"type") && labels(&keys).contains(&"enum"), "a property's schema: {keys}");
    let at = sm.client.at(&plan, &edit(PLAN, "  properties:\n", "  properties:\n    $0\n"));
    let names = sm.client.request("textDocument/completion", at);
    assert!(names.is_null() || labels(&names).is_empty(), "property names are the author's: {names}");
    let at = sm.client.at(&plan, &edit(PLAN, "  type: object\n", "  type: $0\n"));
    let types = sm.client.request("textDocument/completion", at);
    assert_eq!(labels(&types), ["object", "array", "string", "number", "integer", "boolean", "null"], "{types}");
}

#[test]
fn sm_references_of_a_completion_schema_property() {
    let mut sm = Sm::new();
    let plan = sm.plan();
    let review = sm.review();
    let at = sm.client.at(&plan, &edit(PLAN, "    summary: {", "    sum$0mary: {"));
    let mut params = at;
    params["context"] = json!({"includeDeclaration": false});
    let references = sm.client.request("textDocument/references", params);
    let places: Vec<(String, (u64, u64))> = references
        .as_array()
        .expect("locations")
        .iter()
        .map(|l| (l["uri"].as_str().unwrap().to_string(), start(&l["range"])))
        .collect();
    let column = REVIEW.lines().nth(13).and_then(|l| l.find("summary")).unwrap() as u64;
    assert_eq!(places, [(uri(&review), (13, column))], "review's `ctx.upstream[0].parsed.summary`: {references}");
}

#[test]
fn sm_definition() {
    let mut sm = Sm::new();
    let plan = sm.plan();
    let review = sm.review();

    let at = sm.client.at(&plan, &edit(PLAN, "nextStages: [review]", "nextStages: [rev$0iew]"));
    let stage = sm.client.request("textDocument/definition", at);
    assert_eq!(stage[0]["uri"], uri(&review), "{stage}");
    assert_eq!(start(&stage[0]["range"]), (1, 4), "review.md's `id: review` value: {stage}");
    insta::assert_json_snapshot!("sm_definition_next_stage", sm.redact(&stage));

    let at = sm.client.at(&review, &edit(REVIEW, "parsed.summary", "parsed.sum$0mary"));
    let property = sm.client.request("textDocument/definition", at);
    assert_eq!(property[0]["uri"], uri(&plan), "{property}");
    assert_eq!(property[0]["range"]["start"]["line"], 10, "plan's `summary:` property: {property}");
    insta::assert_json_snapshot!("sm_definition_upstream_property", sm.redact(&property));
}

#[test]
fn sm_references() {
    let mut sm = Sm::new();
    let plan = sm.plan();
    let review = sm.review();
    let at = sm.client.at(&review, &edit(REVIEW, "id: review", "id: rev$0iew"));
    let mut params = at.clone();
    params["context"] = json!({"includeDeclaration": true});
    let references = sm.client.request("textDocument/references", params);
    let places: HashSet<(String, u64)> = references
        .as_array()
        .expect("locations")
        .iter()
        .map(|l| (l["uri"].as_str().unwrap().to_string(), start(&l["range"]).0))
        .collect();
    assert!(places.contains(&(uri(&plan), 15)), "plan's nextStages: {references}");
    assert!(places.contains(&(uri(&review), 1)), "the declaration: {references}");
    insta::assert_json_snapshot!("sm_references_stage_id", sm.redact(&references));

    let mut params = at;
    params["context"] = json!({"includeDeclaration": false});
    let without = sm.client.request("textDocument/references", params);
    assert!(!without.as_array().unwrap().iter().any(|l| l["uri"] == uri(&review)), "{without}");
}

#[test]
fn sm_prepare_rename_and_rename() {
    let mut sm = Sm::new();
    let plan = sm.plan();
    let review = sm.review();

    let at = sm.client.at(&review, &edit(REVIEW, "id: review", "id: rev$0iew"));
    let range = sm.client.request("textDocument/prepareRename", at.clone());
    assert_eq!(range, json!({"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 10}}));
    insta::assert_json_snapshot!("sm_prepare_rename_stage_id", sm.redact(&range));

    let elsewhere = sm.client.at(&review, &edit(REVIEW, "name: Review", "name: Rev$0iew"));
    let refused = sm.client.try_request("textDocument/prepareRename", elsewhere).expect_err("refused");
    assert_eq!(refused["code"], -32602, "invalid params: {refused}");
    insta::assert_json_snapshot!("sm_prepare_rename_refused", sm.redact(&refused));

    let mut params = sm.client.at(&review, &edit(REVIEW, "id: review", "id: rev$0iew"));
    params["newName"] = json!("audit");
    let rename = sm.client.request("textDocument/rename", params);
    let changes = document_changes(&rename);
    assert_eq!(changes.len(), 2, "both files are edited: {rename}");
    for path in [&plan, &review] {
        let edits = changes[&uri(path)].as_array().expect("edits");
        assert!(edits.iter().all(|e| e["newText"] == "audit"), "{rename}");
    }
    assert_eq!(start(&changes[&uri(&plan)][0]["range"]), (15, 15), "{rename}");
    assert_eq!(start(&changes[&uri(&review)][0]["range"]), (1, 4), "{rename}");
    insta::assert_json_snapshot!("sm_rename_stage_id", sm.redact(&rename));
}

#[test]
fn sm_document_symbols_and_folding_ranges() {
    let mut sm = Sm::new();
    let plan = sm.plan();
    sm.client.set(&plan, PLAN);
    let symbols = sm.client.document("textDocument/documentSymbol", &plan);
    assert!(!symbols.as_array().expect("symbols").is_empty(), "{symbols}");
    assert!(symbols.to_string().contains("\"plan\""), "the stage id is in the outline: {symbols}");
    insta::assert_json_snapshot!("sm_document_symbols", sm.redact(&symbols));

    let folds = sm.client.document("textDocument/foldingRange", &plan);
    // The frontmatter folds from its opening fence to its closing one (line 16); no family adds
    // finer folds (completionSchema's block does not fold on its own).
    assert_eq!(folds, json!([{"startLine": 0, "endLine": 16, "kind": "region"}]));
    insta::assert_json_snapshot!("sm_folding_ranges", sm.redact(&folds));
}

// ---------------------------------------------------------------------------------------------
// The `steps/` family: the climpt `fixer` agent.

const REGISTRY: &str = include_str!("../examples/climpt/.agent/fixer/steps_registry.json");
const FIXER: &str = "examples/climpt/.agent/fixer";

struct Steps {
    dir: tempfile::TempDir,
    client: Client,
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

impl Steps {
    fn new() -> Steps {
        let dir = tempfile::tempdir().expect("temp dir");
        copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXER), &dir.path().join(".agent/fixer"));
        let client = server(dir.path());
        Steps { dir, client }
    }

    fn registry(&self) -> PathBuf {
        self.dir.path().join(".agent/fixer/steps_registry.json")
    }

    fn schema(&self) -> PathBuf {
        self.dir.path().join(".agent/fixer/schemas/fixer.schema.json")
    }

    fn redact(&self, value: &Value) -> Value {
        redact(self.dir.path(), value)
    }
}

#[test]
fn steps_completion() {
    let mut steps = Steps::new();
    let registry = steps.registry();

    let marked = edit(REGISTRY, "\"next\": { \"target\": \"continuation.issue\" }", "\"next\": { \"target\": \"$0\" }");
    let at = steps.client.at(&registry, &marked);
    let targets = steps.client.request("textDocument/completion", at);
    for step in ["initial.issue", "continuation.issue", "closure.issue"] {
        assert!(labels(&targets).contains(&step), "{step}: {targets}");
    }
    insta::assert_json_snapshot!("steps_completion_targets", steps.redact(&targets));

    // initial.issue allows `next` and `repeat`; with `next` written, a new key offers `repeat`.
    let marked = edit(
        REGISTRY,
        "\"transitions\": { \"next\": { \"target\": \"continuation.issue\" }, \"repeat\": { \"target\": \"initial.issue\" } }",
        "\"transitions\": { \"next\": { \"target\": \"continuation.issue\" },\n        \"$0\n      }",
    );
    let at = steps.client.at(&registry, &marked);
    let intents = steps.client.request("textDocument/completion", at);
    assert!(labels(&intents).contains(&"repeat"), "{intents}");
    assert!(!labels(&intents).contains(&"handoff"), "not allowed in initial.issue: {intents}");
    insta::assert_json_snapshot!("steps_completion_transition_intents", steps.redact(&intents));
}

#[test]
fn steps_definition() {
    let mut steps = Steps::new();
    let registry = steps.registry();
    let schema = steps.schema();
    let schema_text = std::fs::read_to_string(&schema).expect("schema");

    let marked = edit(
        REGISTRY,
        "\"next\": { \"target\": \"continuation.issue\" }",
        "\"next\": { \"target\": \"contin$0uation.issue\" }",
    );
    let at = steps.client.at(&registry, &marked);
    let step = steps.client.request("textDocument/definition", at);
    assert_eq!(step[0]["uri"], uri(&registry), "{step}");
    let key_line = REGISTRY.lines().position(|l| l.contains("\"continuation.issue\": {")).unwrap() as u64;
    assert_eq!(step[0]["range"]["start"]["line"], key_line, "the step key: {step}");
    insta::assert_json_snapshot!("steps_definition_transition_target", steps.redact(&step));

    let marked = edit(
        REGISTRY,
        "\"intentSchemaRef\": \"#/properties/next_action/properties/action\"",
        "\"intentSchemaRef\": \"#/properties/next_action/properties/act$0ion\"",
    );
    let at = steps.client.at(&registry, &marked);
    let intent = steps.client.request("textDocument/definition", at);
    assert_eq!(intent[0]["uri"], uri(&schema), "{intent}");
    let line = intent[0]["range"]["start"]["line"].as_u64().unwrap() as usize;
    // initial.issue's schema is the first with `next_action`; its enum is on that line.
    let expected = schema_text.lines().position(|l| l.contains("\"enum\": [\"next\", \"repeat\"]")).unwrap();
    assert_eq!(line, expected, "{intent}");
    insta::assert_json_snapshot!("steps_definition_intent_schema_ref", steps.redact(&intent));

    let marked = edit(REGISTRY, "\"file\": \"fixer.schema.json\"", "\"file\": \"fixer.sch$0ema.json\"");
    let at = steps.client.at(&registry, &marked);
    let file = steps.client.request("textDocument/definition", at);
    assert_eq!(file[0]["uri"], uri(&schema), "{file}");
    insta::assert_json_snapshot!("steps_definition_output_schema_file", steps.redact(&file));
}

#[test]
fn steps_references_and_rename() {
    let mut steps = Steps::new();
    let registry = steps.registry();
    let marked = edit(REGISTRY, "\"continuation.issue\": {", "\"continuation$0.issue\": {");

    let mut params = steps.client.at(&registry, &marked);
    params["context"] = json!({"includeDeclaration": false});
    let references = steps.client.request("textDocument/references", params);
    let list = references.as_array().expect("locations");
    // Referenced by initial's `next` target and by its own `repeat` target.
    assert!(list.len() >= 2, "{references}");
    assert!(list.iter().all(|l| l["uri"] == uri(&registry)), "{references}");
    insta::assert_json_snapshot!("steps_references_step_key", steps.redact(&references));

    let at = steps.client.at(&registry, &marked);
    let range = steps.client.request("textDocument/prepareRename", at.clone());
    insta::assert_json_snapshot!("steps_prepare_rename_step_key", steps.redact(&range));

    let elsewhere = edit(REGISTRY, "\"agentId\": \"fixer\"", "\"agent$0Id\": \"fixer\"");
    let at_elsewhere = steps.client.at(&registry, &elsewhere);
    let refused = steps.client.try_request("textDocument/prepareRename", at_elsewhere).expect_err("refused");
    insta::assert_json_snapshot!("steps_prepare_rename_refused", steps.redact(&refused));

    let mut params = steps.client.at(&registry, &marked);
    params["newName"] = json!("continuation.work");
    let rename = steps.client.request("textDocument/rename", params);
    let changes = document_changes(&rename);
    let edits = changes[&uri(&registry)].as_array().expect("registry edits");
    // The key, its `stepId`, and the two transition targets that name it.
    let text_after = apply(REGISTRY, edits);
    // Every mention of the step is renamed; `outputSchemaRef.schema` names a schema, not a step.
    assert_eq!(edits.len(), 4, "{rename}");
    assert_eq!(text_after.matches("\"continuation.work\"").count(), 4, "{text_after}");
    assert_eq!(text_after.matches("\"continuation.issue\"").count(), 1, "{text_after}");
    assert!(text_after.contains("\"schema\": \"continuation.issue\""), "{text_after}");
    insta::assert_json_snapshot!("steps_rename_step_key", steps.redact(&rename));
}

/// `text` with LSP `edits` (ASCII text, UTF-16 positions) applied.
fn apply(text: &str, edits: &[Value]) -> String {
    let line_starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let offset =
        |p: &Value| line_starts[p["line"].as_u64().unwrap() as usize] + p["character"].as_u64().unwrap() as usize;
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| (offset(&e["range"]["start"]), offset(&e["range"]["end"]), e["newText"].as_str().unwrap()))
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for (from, to, new) in spans {
        out.replace_range(from..to, new);
    }
    out
}

#[test]
fn steps_document_symbols_and_links() {
    let mut steps = Steps::new();
    let registry = steps.registry();
    steps.client.set(&registry, REGISTRY);
    let symbols = steps.client.document("textDocument/documentSymbol", &registry);
    let text = symbols.to_string();
    for step in ["initial.issue", "continuation.issue", "closure.issue"] {
        assert!(text.contains(step), "{step} is in the outline: {symbols}");
    }
    insta::assert_json_snapshot!("steps_document_symbols", steps.redact(&symbols));

    let links = steps.client.document("textDocument/documentLink", &registry);
    let targets: Vec<&str> = links.as_array().expect("links").iter().filter_map(|l| l["target"].as_str()).collect();
    assert!(targets.contains(&uri(&steps.schema()).as_str()), "{links}");
    insta::assert_json_snapshot!("steps_document_links", steps.redact(&links));
}

// ---- the dry-run code lens and its command ----

const DRY_STAGE: &str = "---
id: plan
name: Plan
allowedTools: [Read]
completionTool: submit_plan
completionSchema: { type: object, required: [summary], properties: { summary: { type: string } } }
retryPolicy: { maxAttempts: 1, backoff: none }
turnCap: 3
resolutionPolicy: retry-later
---
Plan {{ctx.task}}. Call `submit_plan`.
";

/// One turn that completes, expected (wrongly) to be a parse failure.
const DRY_CASSETTE: &str = "cassette: 1
stage: plan
ctx: { task: t }
attempts:
  - turns:
      - response: { stop: tool_use, content: [ { toolCall: { id: c1, name: submit_plan, args: { summary: s } } } ] }
        expect: [ { branch: parseFailure, call: c1 } ]
";

#[test]
fn a_stage_with_a_cassette_gets_a_dry_run_lens_whose_command_reports_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let stage = dir.path().join("plan.md");
    let cassette = dir.path().join("plan.cassette.yaml");
    std::fs::write(&stage, DRY_STAGE).expect("write");
    std::fs::write(&cassette, DRY_CASSETTE).expect("write");
    std::fs::write(dir.path().join("lone.md"), DRY_STAGE.replace("id: plan", "id: lone")).expect("write");
    // A client that shows progress and opens documents the server asks it to.
    let mut client = Client::in_process();
    client.initialize_with(
        dir.path(),
        json!({
            "general": {"positionEncodings": ["utf-16"]},
            "window": {"workDoneProgress": true, "showDocument": {"support": true}}
        }),
    );
    client.set(&stage, DRY_STAGE);
    let lenses = client.document("textDocument/codeLens", &stage);
    insta::assert_json_snapshot!("dry_run_code_lens", redact(dir.path(), &lenses));
    assert_eq!(lenses[0]["range"]["start"], json!({"line": 1, "character": 4}), "on the `id:` value");
    // No cassette, no lens.
    let lone = dir.path().join("lone.md");
    client.set(&lone, &DRY_STAGE.replace("id: plan", "id: lone"));
    assert_eq!(client.document("textDocument/codeLens", &lone), json!([]));

    let command = lenses[0]["command"].clone();
    let result = client
        .request("workspace/executeCommand", json!({"command": command["command"], "arguments": command["arguments"]}));
    assert_eq!(result["exitCode"], 1, "{result}");
    assert_eq!(result["expectations"], json!({"passed": 0, "failed": 1}));
    let report = std::fs::read_to_string(result["report"].as_str().expect("a report file")).expect("report");
    assert!(report.contains("t1   submit_plan(c1)"), "{report}");
    let shown = client.wait("the report", |m| m["method"] == "window/showDocument");
    assert_eq!(
        shown["params"]["uri"].as_str().and_then(|u| u.strip_prefix("file://")),
        result["report"].as_str(),
        "the report is opened: {shown}"
    );
    let begun = client.wait("dry-run progress", |m| {
        m["method"] == "$/progress" && m["params"]["value"]["title"] == "stagelint: dry-run"
    });
    assert_eq!(begun["params"]["value"]["kind"], "begin");
    let message = client.wait("the summary", |m| m["method"] == "window/showMessage");
    assert_eq!(message["params"]["message"], result["summary"]);
    assert!(result["summary"].as_str().unwrap_or("").starts_with("stagelint dry-run stage plan: mismatch"), "{result}");
    let (list, _) =
        client.diagnostics(&uri(&cassette), |l| l.iter().any(|d| d["code"] == "cassette/ExpectationFailed"));
    let failed = list.iter().find(|d| d["code"] == "cassette/ExpectationFailed").expect("on the cassette");
    assert_eq!(failed["range"]["start"]["line"], 6, "on the `expect:` entry");

    let refused = client.try_request("workspace/executeCommand", json!({"command": "nope", "arguments": []}));
    assert!(refused.is_err());
}

// ---------------------------------------------------------------------------------------------
// The `lastlight/` family: the shipped clean example (workflow, prompts, skill).

const LL_BUILD: &str = include_str!("../examples/lastlight/workflows/build.yaml");
const LL_IMPLEMENT: &str = include_str!("../examples/lastlight/workflows/prompts/implement.md");

struct Lastlight {
    dir: tempfile::TempDir,
    client: Client,
}

impl Lastlight {
    fn new() -> Lastlight {
        let dir = tempfile::tempdir().expect("temp dir");
        copy_dir(Path::new("examples/lastlight"), dir.path());
        let client = server(dir.path());
        Lastlight { dir, client }
    }

    fn build(&self) -> PathBuf {
        self.dir.path().join("workflows/build.yaml")
    }

    fn implement(&self) -> PathBuf {
        self.dir.path().join("workflows/prompts/implement.md")
    }

    fn redact(&self, value: &Value) -> Value {
        redact(self.dir.path(), value)
    }
}

#[test]
fn lastlight_completion() {
    let mut ll = Lastlight::new();
    let build = ll.build();
    let at = ll.client.at(&build, &edit(LL_BUILD, "    variant: high\n", "    variant: high\n    dep$0\n"));
    let keys = ll.client.request("textDocument/completion", at);
    assert!(labels(&keys).contains(&"depends_on"), "{keys}");
    assert!(!labels(&keys).contains(&"prompt"), "present keys are not offered: {keys}");
    insta::assert_json_snapshot!("lastlight_completion_phase_keys", ll.redact(&keys));

    let at = ll.client.at(&build, &edit(LL_BUILD, "    variant: high\n", "    variant: high\n    depends_on: [$0]\n"));
    let phases = ll.client.request("textDocument/completion", at);
    assert_eq!(labels(&phases), ["phase_0", "plan", "review", "pr"], "not the phase itself: {phases}");
    // The block form, without the names already listed.
    let at = ll.client.at(
        &build,
        &edit(LL_BUILD, "    variant: high\n", "    variant: high\n    depends_on:\n      - plan\n      - $0\n"),
    );
    let phases = ll.client.request("textDocument/completion", at);
    assert_eq!(labels(&phases), ["phase_0", "review", "pr"], "{phases}");
    // Enum values carry the key's documentation.
    let at = ll.client.at(&build, &edit(LL_BUILD, "    type: context\n", "    type: $0\n"));
    let kinds = ll.client.request("textDocument/completion", at);
    assert!(!labels(&kinds).is_empty(), "{kinds}");
    assert!(kinds.as_array().unwrap().iter().all(|i| i["documentation"]["value"].is_string()), "{kinds}");

    ll.client.set(&build, LL_BUILD);
    let implement = ll.implement();
    let at = ll.client.at(&implement, &edit(LL_IMPLEMENT, "${plan.output}", "${$0"));
    let outputs = ll.client.request("textDocument/completion", at);
    assert!(labels(&outputs).contains(&"plan") && !labels(&outputs).contains(&"branch"), "{outputs}");
    insta::assert_json_snapshot!("lastlight_completion_phase_outputs", ll.redact(&outputs));
}

#[test]
fn lastlight_prompt_completion_replaces_an_auto_closed_brace_and_offers_output_after_the_phase() {
    let mut ll = Lastlight::new();
    let implement = ll.implement();
    // `${}` as an editor auto-closes it: the item's edit covers the `}` instead of doubling it.
    let at = ll.client.at(&implement, &edit(LL_IMPLEMENT, "${plan.output}", "X ${$0}"));
    let position = at["position"].clone();
    let items = ll.client.request("textDocument/completion", at);
    let plan = items.as_array().expect("items").iter().find(|i| i["label"] == "plan").expect("plan").clone();
    assert_eq!(plan["textEdit"]["newText"], "plan.output}", "{plan}");
    assert_eq!(plan["textEdit"]["range"]["start"], position, "{plan}");
    let end = plan["textEdit"]["range"]["end"]["character"].as_u64();
    assert_eq!(end, position["character"].as_u64().map(|c| c + 1), "the `}}` is replaced: {plan}");
    // After `${plan.`: only `output`.
    let at = ll.client.at(&implement, &edit(LL_IMPLEMENT, "${plan.output}", "X ${plan.$0}"));
    let position = at["position"].clone();
    let items = ll.client.request("textDocument/completion", at);
    assert_eq!(labels(&items), ["output"], "{items}");
    assert_eq!(items[0]["textEdit"]["newText"], "output}");
    assert_eq!(items[0]["textEdit"]["range"]["start"], position);
    let at = ll.client.at(&implement, &edit(LL_IMPLEMENT, "${plan.output}", "X ${plan.ou$0"));
    let items = ll.client.request("textDocument/completion", at);
    assert_eq!(labels(&items), ["output"], "{items}");
    assert_eq!(
        items[0]["textEdit"]["range"]["end"]["character"].as_u64(),
        items[0]["textEdit"]["range"]["start"]["character"].as_u64().map(|c| c + 2)
    );
}

#[test]
fn lastlight_definition_of_a_crons_workflow() {
    let mut ll = Lastlight::new();
    let cron = ll.dir.path().join("workflows/cron-build.yaml");
    let text = std::fs::read_to_string(&cron).expect("read");
    let at = ll.client.at(&cron, &edit(&text, "workflow: build", "workflow: bu$0ild"));
    let targets = ll.client.request("textDocument/definition", at);
    assert_eq!(targets[0]["uri"], uri(&ll.build()), "{targets}");
    assert_eq!(targets[0]["range"], json!({"start": {"line": 1, "character": 6}, "end": {"line": 1, "character": 11}}));
}

#[test]
fn lastlight_definition_and_hover() {
    let mut ll = Lastlight::new();
    let build = ll.build();
    let implement = ll.implement();
    let at = ll.client.at(&implement, &edit(LL_IMPLEMENT, "${plan.output}", "${pl$0an.output}"));
    let definition = ll.client.request("textDocument/definition", at.clone());
    assert_eq!(definition[0]["uri"], uri(&build), "{definition}");
    assert_eq!(start(&definition[0]["range"]), (10, 10), "`- name: plan`: {definition}");
    insta::assert_json_snapshot!("lastlight_definition_phase_output", ll.redact(&definition));
    let hover = ll.client.request("textDocument/hover", at);
    assert!(hover.to_string().contains("Output of phase `plan`"), "{hover}");
}

#[test]
fn lastlight_references_and_rename() {
    let mut ll = Lastlight::new();
    let build = ll.build();
    let implement = ll.implement();
    let mut params = ll.client.at(&build, &edit(LL_BUILD, "- name: plan", "- name: pl$0an"));
    params["context"] = json!({"includeDeclaration": true});
    let references = ll.client.request("textDocument/references", params);
    let files: HashSet<&str> = references.as_array().unwrap().iter().map(|l| l["uri"].as_str().unwrap()).collect();
    assert!(files.contains(uri(&implement).as_str()) && files.contains(uri(&build).as_str()), "{references}");
    insta::assert_json_snapshot!("lastlight_references_phase", ll.redact(&references));

    let mut params = ll.client.at(&build, &edit(LL_BUILD, "- name: plan", "- name: pl$0an"));
    params["newName"] = json!("design");
    let rename = ll.client.request("textDocument/rename", params);
    let changes = document_changes(&rename);
    let renamed = apply(LL_IMPLEMENT, changes[&uri(&implement)].as_array().unwrap());
    assert!(renamed.contains("${design.output}"), "{renamed}");
    insta::assert_json_snapshot!("lastlight_rename_phase", ll.redact(&rename));
}

#[test]
fn lastlight_document_symbols_links_and_folds() {
    let mut ll = Lastlight::new();
    let build = ll.build();
    ll.client.set(&build, LL_BUILD);
    let symbols = ll.client.document("textDocument/documentSymbol", &build);
    for phase in ["phase_0", "plan", "implement", "review", "pr"] {
        assert!(symbols.to_string().contains(&format!("\"{phase}\"")), "{phase}: {symbols}");
    }
    insta::assert_json_snapshot!("lastlight_document_symbols", ll.redact(&symbols));
    let links = ll.client.document("textDocument/documentLink", &build);
    assert_eq!(links.as_array().unwrap().len(), 7, "6 prompt paths and the skill: {links}");
    insta::assert_json_snapshot!("lastlight_document_links", ll.redact(&links));
    let folds = ll.client.document("textDocument/foldingRange", &build);
    assert_eq!(folds.as_array().unwrap().len(), 5, "one per phase: {folds}");
}

// ---------------------------------------------------------------------------------------------
// The second audit's findings, each at the protocol level.

#[test]
fn lastlight_phase_rename_and_navigation_cover_skip_if_and_until_conditions() {
    let mut ll = Lastlight::new();
    let build = ll.build();
    let text = edit(
        LL_BUILD,
        "    variant: high\n",
        "    variant: high\n    depends_on: [plan]\n    skip_if: \"phaseOutputs.plan.contains('SKIP')\"\n",
    );
    let text = edit(
        &text,
        "    on_success:\n      set_phase: complete\n",
        "    generic_loop:\n      max_iterations: 2\n      until: \"phaseOutputs.plan.contains('DONE')\"\n",
    );
    ll.client.set(&build, &text);
    let at = ll
        .client
        .at(&build, &edit(&text, "phaseOutputs.plan.contains('SKIP')", "phaseOutputs.pl$0an.contains('SKIP')"));
    let definition = ll.client.request("textDocument/definition", at);
    assert_eq!(start(&definition[0]["range"]), (10, 10), "to `- name: plan`: {definition}");
    let mut params = ll.client.at(&build, &edit(&text, "- name: plan", "- name: pl$0an"));
    params["context"] = json!({"includeDeclaration": false});
    let references = ll.client.request("textDocument/references", params);
    let lines: Vec<u64> = references
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["uri"] == uri(&build))
        .map(|l| l["range"]["start"]["line"].as_u64().unwrap())
        .collect();
    let skip = text.lines().position(|l| l.contains("skip_if")).unwrap() as u64;
    let until = text.lines().position(|l| l.contains("until:")).unwrap() as u64;
    assert!(lines.contains(&skip) && lines.contains(&until), "{lines:?} {references}");
    let mut params = ll.client.at(&build, &edit(&text, "- name: plan", "- name: pl$0an"));
    params["newName"] = json!("design");
    let rename = ll.client.request("textDocument/rename", params);
    let renamed = apply(&text, document_changes(&rename)[&uri(&build)].as_array().unwrap());
    assert!(renamed.contains("skip_if: \"phaseOutputs.design.contains('SKIP')\""), "{renamed}");
    assert!(renamed.contains("until: \"phaseOutputs.design.contains('DONE')\""), "{renamed}");
    assert!(!renamed.contains("phaseOutputs.plan"), "{renamed}");
}

#[test]
fn a_prompt_that_exists_only_in_the_editor_is_checked_and_completed() {
    // Last Light: a phase names a new prompt that is not saved yet.
    let mut ll = Lastlight::new();
    let build = ll.build();
    let text = format!(
        "{LL_BUILD}\n  - name: deploy\n    label: Deploy\n    prompt: prompts/deploy.md\n    depends_on: [pr]\n"
    );
    ll.client.set(&build, &text);
    let (list, _) = ll.client.diagnostics(&uri(&build), |l| l.iter().any(|d| d["code"] == "lastlight/PromptNotFound"));
    assert_eq!(list.len(), 1, "{list:?}");
    let deploy = ll.dir.path().join("workflows/prompts/deploy.md");
    let prompt = "Deploy {{isueDir}}\n";
    ll.client.set(&deploy, prompt);
    let (list, _) = ll.client.diagnostics(&uri(&deploy), |l| !l.is_empty());
    assert_eq!(list[0]["code"], "lastlight/UnknownVariable", "{list:?}");
    ll.client.diagnostics(&uri(&build), |l| l.is_empty());
    let at = ll.client.at(&deploy, "Deploy {{iss$0\n");
    let items = ll.client.request("textDocument/completion", at);
    assert!(labels(&items).contains(&"issueDir"), "{items}");

    // climpt: a step's C3L prompt deleted on disk and open, unsaved, in the editor.
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(Path::new("examples/climpt/.agent"), dir.path());
    let prompt = dir.path().join("fixer/prompts/steps/initial/issue/f_default.md");
    std::fs::remove_file(&prompt).expect("remove");
    let mut client = server(dir.path());
    let registry = dir.path().join("fixer/steps_registry.json");
    client.set(&prompt, "Work on {uv-issue} and {uv-brnch}\n");
    let (list, _) = client.diagnostics(&uri(&prompt), |l| !l.is_empty());
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["code"], "steps/PR-RESOLVE-005", "{list:?}");
    let registry_findings = client.pulled(&registry);
    assert!(registry_findings.is_empty(), "the registry sees the prompt: {registry_findings:?}");
    let at = client.at(&prompt, "Work on {uv-$0\n");
    let items = client.request("textDocument/completion", at);
    assert!(labels(&items).contains(&"issue"), "{items}");
}

#[test]
fn every_machine_cassette_gets_a_lens_and_runs_with_that_cassette() {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(Path::new("examples/code-review"), dir.path());
    let mut client = server(dir.path());
    let sm = dir.path().join("sm.yaml");
    client.set(&sm, &std::fs::read_to_string(&sm).expect("read"));
    let lenses = client.document("textDocument/codeLens", &sm);
    let titles: Vec<&str> = lenses.as_array().unwrap().iter().filter_map(|l| l["command"]["title"].as_str()).collect();
    assert_eq!(
        titles,
        ["▶ Dry-run machine (sm.cassette.yaml)", "▶ Dry-run machine (failing-lint.cassette.yaml)"],
        "{lenses}"
    );
    let command = &lenses[1]["command"];
    assert_eq!(command["arguments"][1], uri(&dir.path().join("failing-lint.cassette.yaml")));
    let result = client
        .request("workspace/executeCommand", json!({"command": command["command"], "arguments": command["arguments"]}));
    assert_eq!(result["exitCode"], 0, "{result}");
    let report = std::fs::read_to_string(result["report"].as_str().expect("a report")).expect("report");
    assert!(report.contains("failedSiblingId=lint"), "the failing-lint scenario ran: {report}");
}

/// Issue 32, item 3: a stage of a state machine that has no cassette of its own gets the lens
/// of the machine cassette that records it; the lens runs the machine with the stage's lines
/// marked, and so does a dry-run of the stage without a named cassette (`:StagelintDryRun`).
#[test]
fn a_stage_of_a_machine_gets_the_machine_cassettes_lens_focused_on_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(Path::new("examples/code-review"), dir.path());
    let mut client = server(dir.path());
    let plan = dir.path().join("plan.md");
    client.set(&plan, &std::fs::read_to_string(&plan).expect("read"));
    let lenses = client.document("textDocument/codeLens", &plan);
    let titles: Vec<&str> = lenses.as_array().unwrap().iter().filter_map(|l| l["command"]["title"].as_str()).collect();
    // `failing-lint.cassette.yaml` records `plan` too; both run the machine.
    assert_eq!(
        titles,
        ["▶ Dry-run machine (sm.cassette.yaml)", "▶ Dry-run machine (failing-lint.cassette.yaml)"],
        "{lenses}"
    );
    assert_eq!(lenses[0]["range"]["start"], json!({"line": 1, "character": 4}), "on the `id:` value: {lenses}");
    let command = &lenses[0]["command"];
    assert_eq!(command["arguments"], json!([uri(&plan), uri(&dir.path().join("sm.cassette.yaml"))]));
    let result = client
        .request("workspace/executeCommand", json!({"command": command["command"], "arguments": command["arguments"]}));
    assert_eq!(result["exitCode"], 0, "{result}");
    assert_eq!(result["focus"], json!({"stage": "plan"}), "{result}");
    let report = std::fs::read_to_string(result["report"].as_str().expect("a report")).expect("report");
    assert!(report.contains("focus: stage plan") && report.contains("▶ plan  Setup  ok"), "{report}");
    assert!(report.contains("\nexecute  Setup  ok"), "other stages are not marked: {report}");
    // A stage that is not recorded in any machine cassette gets none of them.
    let lenses = client.document("textDocument/codeLens", &dir.path().join("sm.yaml"));
    assert_eq!(lenses.as_array().map(Vec::len), Some(2));
    // Without a named cassette, the one machine cassette that records the stage is used.
    std::fs::remove_file(dir.path().join("failing-lint.cassette.yaml")).expect("remove");
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&dir.path().join("failing-lint.cassette.yaml")), "type": 3}]}),
    );
    client.pulled(&dir.path().join("sm.cassette.yaml"));
    let arguments = json!([uri(&plan)]);
    let result =
        client.request("workspace/executeCommand", json!({"command": "stagelint.dryRun", "arguments": arguments}));
    assert_eq!((result["exitCode"].as_u64(), &result["focus"]), (Some(0), &json!({"stage": "plan"})), "{result}");
}

/// Issue 33: a climpt registry gets a lens on its entry and on each step its flow cassette
/// reaches; a step's lens runs the agent with that step's lines marked.
#[test]
fn a_climpt_registry_gets_a_lens_on_its_entry_and_on_every_step_the_cassette_reaches() {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(Path::new("examples/climpt"), dir.path());
    let mut client = server(dir.path());
    let registry = dir.path().join(".agent/fixer/steps_registry.json");
    client.set(&registry, &std::fs::read_to_string(&registry).expect("read"));
    let lenses = client.document("textDocument/codeLens", &registry);
    let titles: Vec<&str> = lenses.as_array().unwrap().iter().filter_map(|l| l["command"]["title"].as_str()).collect();
    assert_eq!(
        titles,
        [
            "▶ Dry-run (agent.cassette.yaml)",
            "▶ Dry-run (agent.cassette.yaml) · iteration 1",
            "▶ Dry-run (agent.cassette.yaml) · iteration 2",
            "▶ Dry-run (agent.cassette.yaml) · iteration 3",
        ],
        "{lenses}"
    );
    // The entry lens sits on `entryStepMapping`, the step lenses on their keys.
    assert_eq!(lenses[0]["range"]["start"]["line"], 4, "{lenses}");
    assert_eq!(lenses[2]["command"]["arguments"][2], "continuation.issue");
    let command = &lenses[2]["command"];
    let result = client
        .request("workspace/executeCommand", json!({"command": command["command"], "arguments": command["arguments"]}));
    assert_eq!(
        (result["exitCode"].as_u64(), &result["focus"]),
        (Some(0), &json!({"step": "continuation.issue"})),
        "{result}"
    );
    let report = std::fs::read_to_string(result["report"].as_str().expect("a report")).expect("report");
    assert!(report.contains("▶ i2   continuation.issue (work)") && report.contains("\ni1   initial.issue"), "{report}");
}

#[test]
fn a_dry_run_without_a_named_cassette_takes_the_only_one_and_lists_several() {
    let dir = tempfile::tempdir().expect("temp dir");
    let stage = dir.path().join("plan.md");
    std::fs::write(&stage, DRY_STAGE).expect("write");
    // One scenario cassette, none by the conventional name.
    std::fs::write(dir.path().join("plan-happy.cassette.yaml"), DRY_CASSETTE).expect("write");
    let mut client = server(dir.path());
    client.set(&stage, DRY_STAGE);
    let arguments = json!([uri(&stage)]);
    let result =
        client.request("workspace/executeCommand", json!({"command": "stagelint.dryRun", "arguments": arguments}));
    assert!(result["summary"].as_str().unwrap().starts_with("stagelint dry-run stage plan"), "{result}");
    // A second one: the server cannot choose, and says which there are.
    std::fs::write(dir.path().join("plan-other.cassette.yaml"), DRY_CASSETTE).expect("write");
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&dir.path().join("plan-other.cassette.yaml")), "type": 1}]}),
    );
    // A request about a file that is not open waits for the re-check the new file caused.
    client.pulled(&dir.path().join("plan-other.cassette.yaml"));
    let lenses = client.document("textDocument/codeLens", &stage);
    assert_eq!(lenses.as_array().unwrap().len(), 2, "{lenses}");
    let error = client
        .try_request("workspace/executeCommand", json!({"command": "stagelint.dryRun", "arguments": arguments}))
        .expect_err("several cassettes");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("plan-happy.cassette.yaml") && message.contains("plan-other.cassette.yaml"), "{message}");
}

#[test]
fn suppression_findings_are_not_offered_another_suppression() {
    let mut sm = Sm::new();
    let plan = sm.plan();
    let text = edit(PLAN, "turnCap: 20\n", "turnCap: 20 # stagelint: ignore[sm/UnknownTool]\n");
    sm.client.set(&plan, &text);
    let (list, _) =
        sm.client.diagnostics(&uri(&plan), |l| l.iter().any(|d| d["code"] == "stagelint/UnusedSuppression"));
    let unused = list.iter().find(|d| d["code"] == "stagelint/UnusedSuppression").unwrap();
    let actions = sm.client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(&plan)}, "range": unused["range"], "context": {"diagnostics": [unused]}}),
    );
    // Quick fixes only: the document's fix-all (`source.fixAll.stagelint`) comes too.
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "quickfix")
        .filter_map(|a| a["title"].as_str())
        .collect();
    assert!(!titles.iter().any(|t| t.starts_with("Suppress")), "{titles:?}");
    assert_eq!(titles.len(), 1, "only its own fix, removing it: {titles:?}");
    let text = edit(PLAN, "turnCap: 20\n", "turnCap: 20 # stagelint: ignroe[x]\n");
    sm.client.set(&plan, &text);
    let (list, _) =
        sm.client.diagnostics(&uri(&plan), |l| l.iter().any(|d| d["code"] == "stagelint/InvalidSuppression"));
    let invalid = list.iter().find(|d| d["code"] == "stagelint/InvalidSuppression").unwrap();
    let actions = sm.client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(&plan)}, "range": invalid["range"], "context": {"diagnostics": [invalid]}}),
    );
    assert_eq!(actions, json!([]), "nothing to offer");
}

/// A `file://` URI with every byte outside `[A-Za-z0-9/._-]` percent-escaped in lower case, as
/// some clients write it (the server's own spelling uses upper case).
fn lower_escaped_uri(path: &Path) -> String {
    let mut out = String::from("file://");
    for byte in path.display().to_string().bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'/' | b'.' | b'_' | b'-' => out.push(byte as char),
            _ => out.push_str(&format!("%{byte:02x}")),
        }
    }
    out
}

#[test]
fn workspace_edits_name_open_documents_as_the_client_did_with_their_version() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("my proj é");
    std::fs::create_dir(&project).expect("mkdir");
    std::fs::write(project.join("sm.yaml"), SM).expect("write");
    std::fs::write(project.join("plan.md"), PLAN).expect("write");
    std::fs::write(project.join("review.md"), REVIEW).expect("write");
    let mut client = Client::in_process();
    let root = lower_escaped_uri(&project);
    client.request(
        "initialize",
        json!({"processId": null, "rootUri": root, "workspaceFolders": [{"uri": root, "name": "p"}],
               "capabilities": {"workspace": {"workspaceEdit": {"documentChanges": true}}}}),
    );
    client.notify("initialized", json!({}));
    let plan = lower_escaped_uri(&project.join("plan.md"));
    let review = lower_escaped_uri(&project.join("review.md"));
    for (uri, text) in [(&plan, PLAN), (&review, REVIEW)] {
        client.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 7, "text": text}}),
        );
    }
    // Rename `review` from its use in plan.md: both open files are edited.
    let line = PLAN.lines().position(|l| l.contains("nextStages: [review]")).unwrap();
    let rename = client.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": plan}, "position": {"line": line, "character": 16}, "newName": "check"}),
    );
    let documents = rename["documentChanges"].as_array().expect("documentChanges");
    let named: Vec<(&str, &Value)> =
        documents.iter().map(|d| (d["textDocument"]["uri"].as_str().unwrap(), &d["textDocument"]["version"])).collect();
    assert!(named.contains(&(plan.as_str(), &json!(7))), "{rename}");
    assert!(named.contains(&(review.as_str(), &json!(7))), "{rename}");
    // Definition: the location names the open file as the client does.
    let definition = client.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": plan}, "position": {"line": line, "character": 16}}),
    );
    assert_eq!(definition[0]["uri"], review, "{definition}");
}

#[test]
fn messages_name_files_relative_to_the_workspace_folder_that_holds_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for folder in [&a, &b] {
        std::fs::create_dir_all(folder.join("flow")).expect("mkdir");
        std::fs::write(folder.join("flow/sm.yaml"), SM).expect("write");
        std::fs::write(folder.join("flow/plan.md"), PLAN).expect("write");
        std::fs::write(folder.join("flow/plan-copy.md"), PLAN).expect("write");
        std::fs::write(folder.join("flow/review.md"), REVIEW).expect("write");
    }
    let mut client = Client::in_process();
    client.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&a),
               "workspaceFolders": [{"uri": uri(&a), "name": "a"}, {"uri": uri(&b), "name": "b"}],
               "capabilities": {}}),
    );
    client.notify("initialized", json!({}));
    for folder in [&a, &b] {
        let plan = folder.join("flow/plan.md");
        let (list, _) = client.diagnostics(&uri(&plan), |l| l.iter().any(|d| d["code"] == "sm/DuplicateStageId"));
        let duplicate = list.iter().find(|d| d["code"] == "sm/DuplicateStageId").unwrap();
        let message = duplicate["message"].as_str().unwrap();
        assert!(message.contains("also used by `flow/plan-copy.md`"), "{message}");
    }
}

#[test]
fn workspace_folders_added_and_removed_at_runtime() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for folder in [&a, &b] {
        std::fs::create_dir_all(folder).expect("mkdir");
        std::fs::write(folder.join("sm.yaml"), SM).expect("write");
        std::fs::write(folder.join("plan.md"), edit(PLAN, "allowedTools: [Read, Grep]", "allowedTools: [Raed]"))
            .expect("write");
        std::fs::write(folder.join("review.md"), REVIEW).expect("write");
    }
    let mut client = Client::in_process();
    let result = client.initialize_with(&a, json!({"window": {"workDoneProgress": true}}));
    let folders = &result["capabilities"]["workspace"]["workspaceFolders"];
    assert_eq!(folders, &json!({"supported": true, "changeNotifications": true}), "{result}");
    client.diagnostics(&uri(&a.join("plan.md")), |l| l.iter().any(|d| d["code"] == "sm/UnknownTool"));
    // Adding b indexes it, with progress.
    client.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [{"uri": uri(&b), "name": "b"}], "removed": []}}),
    );
    client.diagnostics(&uri(&b.join("plan.md")), |l| l.iter().any(|d| d["code"] == "sm/UnknownTool"));
    let progress: Vec<&Value> = client
        .backlog()
        .iter()
        .filter(|m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "begin")
        .collect();
    assert_eq!(progress.len(), 2, "the first index and the added folder: {progress:?}");
    // Removing a clears what it showed and forgets it.
    client.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [], "removed": [{"uri": uri(&a), "name": "a"}]}}),
    );
    client.diagnostics(&uri(&a.join("plan.md")), |l| l.is_empty());
    let report = client.request("workspace/diagnostic", json!({"previousResultIds": []}));
    let uris: Vec<&str> = report["items"].as_array().unwrap().iter().filter_map(|i| i["uri"].as_str()).collect();
    assert!(uris.iter().all(|u| u.starts_with(&uri(&b))), "only b is known: {uris:?}");
    assert!(!uris.is_empty());
}

#[test]
fn an_untitled_document_is_checked_on_its_own() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut client = server(dir.path());
    let untitled = "untitled:Untitled-1";
    let stage = edit(PLAN, "allowedTools: [Read, Grep]", "allowedTools: [Raed]");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": untitled, "languageId": "markdown", "version": 1, "text": stage}}),
    );
    let (list, version) = client.diagnostics(untitled, |l| l.iter().any(|d| d["code"] == "sm/UnknownTool"));
    assert_eq!(version, 1);
    assert!(!list.iter().any(|d| d["code"] == "sm/UnknownNextStage"), "a loose stage: {list:?}");
    let line = stage.lines().position(|l| l.starts_with("turnCap")).unwrap();
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": untitled}, "position": {"line": line, "character": 2}}),
    );
    assert!(hover["contents"]["value"].as_str().unwrap().contains("turnCap"), "{hover}");
    let symbols = client.request("textDocument/documentSymbol", json!({"textDocument": {"uri": untitled}}));
    assert!(!symbols.as_array().unwrap().is_empty(), "{symbols}");
    let completion = client.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": untitled}, "position": {"line": 4, "character": 15}}),
    );
    assert!(labels(&completion).contains(&"Bash"), "{completion}");
    // A workflow by its `phases:`.
    let workflow = "untitled:Untitled-2";
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": workflow, "languageId": "yaml", "version": 1,
               "text": "name: w\nphases:\n  - name: a\n    typo_key: 1\n"}}),
    );
    client.diagnostics(workflow, |l| l.iter().any(|d| d["code"] == "lastlight/UnknownKey"));
    // Closing it clears it.
    client.notify("textDocument/didClose", json!({"textDocument": {"uri": untitled}}));
    client.diagnostics(untitled, |l| l.is_empty());
}

#[test]
fn a_request_on_an_unchanged_document_does_not_wait_for_the_analysis_of_another_edit() {
    // A scope whose check takes a while: a stage with a long cassette, replayed on every check.
    let dir = tempfile::tempdir().expect("temp dir");
    let turns = 3000;
    let mut cassette = String::from(
        "cassette: 1\nstage: plan\nctx: { task: t }\ntools:\n  Read:\n    - { anyArgs: true, result: x }\nattempts:\n  - turns:\n",
    );
    for i in 0..turns {
        cassette.push_str(&format!(
            "      - response: {{ stop: tool_use, content: [ {{ toolCall: {{ id: r{i}, name: Read, args: {{ path: f{i} }} }} }} ] }}\n"
        ));
    }
    cassette.push_str(
        "      - response: { stop: tool_use, content: [ { toolCall: { id: c1, name: submit_plan, args: {} } } ] }\n",
    );
    std::fs::write(dir.path().join("plan.cassette.yaml"), cassette).expect("write");
    let stage = DRY_STAGE.replace("turnCap: 3", &format!("turnCap: {}", turns + 5));
    let plan = dir.path().join("plan.md");
    let other = dir.path().join("other.md");
    std::fs::write(&plan, &stage).expect("write");
    std::fs::write(&other, stage.replace("id: plan", "id: other")).expect("write");
    let mut client = server(dir.path());
    client.set(&plan, &stage);
    client.published(&uri(&plan), |p| p["version"] == 1);
    client.set(&other, &stage.replace("id: plan", "id: other"));
    client.published(&uri(&other), |p| p["version"] == 1);
    // An edit of other.md starts a check of the scope; a hover on plan.md, unchanged, is
    // answered from the stored analysis before that check is published.
    client.set(&other, &stage.replace("id: plan", "id: other").replace("[Read]", "[Raed]"));
    let line = stage.lines().position(|l| l.starts_with("turnCap")).unwrap();
    let id = client.send_request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri(&plan)}, "position": {"line": line, "character": 2}}),
    );
    let first = client.wait("the hover or the new check", |m| {
        m["id"] == json!(id) || (m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri(&other))
    });
    assert_eq!(first["id"], json!(id), "the hover came first: {first}");
    assert!(first["result"]["contents"]["value"].as_str().unwrap().contains("turnCap"), "{first}");
}

#[test]
fn completion_in_agent_json_cassettes_configs_skills_crons_step_schemas_and_prompts() {
    // climpt: agent.json keys by position, intents in a step schema's enum, `{` in a prompt.
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(Path::new("examples/climpt/.agent"), dir.path());
    let mut client = server(dir.path());
    let agent = dir.path().join("fixer/agent.json");
    let text = std::fs::read_to_string(&agent).expect("read");
    let at = client.at(&agent, &edit(&text, "    \"verdict\": {", "    $0\n    \"verdict\": {"));
    let keys = client.request("textDocument/completion", at);
    assert!(labels(&keys).contains(&"execution") && !labels(&keys).contains(&"flow"), "{keys}");
    assert!(keys.as_array().unwrap().iter().all(|i| i["documentation"]["value"].is_string()), "{keys}");
    client.set(&agent, &text);
    let at = client.at(&agent, &edit(&text, "\"type\": \"poll:state\"", "\"type\": \"$0\""));
    let kinds = client.request("textDocument/completion", at);
    assert!(labels(&kinds).contains(&"poll:state"), "{kinds}");
    client.set(&agent, &text);
    let schema = dir.path().join("fixer/schemas/fixer.schema.json");
    let text = std::fs::read_to_string(&schema).expect("read");
    let at = client
        .at(&schema, &edit(&text, "\"enum\": [\"next\", \"repeat\"]", "\"enum\": [\"next\", \"repeat\", \"$0\"]"));
    let intents = client.request("textDocument/completion", at);
    assert!(labels(&intents).contains(&"handoff") && !labels(&intents).contains(&"next"), "{intents}");
    client.set(&schema, &text);
    let prompt = dir.path().join("fixer/prompts/steps/initial/issue/f_default.md");
    let at = client.at(&prompt, "Work on issue {$0\n");
    let items = client.request("textDocument/completion", at);
    assert!(labels(&items).contains(&"uv-issue") && labels(&items).contains(&"input_text"), "{items}");

    // Last Light: SKILL.md frontmatter, a cron's `workflow:`, stagelint.toml.
    let mut ll = Lastlight::new();
    let skill = ll.dir.path().join("skills/planning/SKILL.md");
    let text = std::fs::read_to_string(&skill).expect("read");
    let at = ll.client.at(&skill, &edit(&text, "description:", "$0\ndescription:"));
    let keys = ll.client.request("textDocument/completion", at);
    assert!(labels(&keys).contains(&"disable-model-invocation") && !labels(&keys).contains(&"name"), "{keys}");
    ll.client.set(&skill, &text);
    let cron = ll.dir.path().join("workflows/cron-build.yaml");
    let text = std::fs::read_to_string(&cron).expect("read");
    let at = ll.client.at(&cron, &edit(&text, "workflow: build", "workflow: $0"));
    let workflows = ll.client.request("textDocument/completion", at);
    assert_eq!(labels(&workflows), ["build"], "{workflows}");
    ll.client.set(&cron, &text);
    let config = ll.dir.path().join("stagelint.toml");
    let at = ll.client.at(&config, "[lastlight]\nengine = \"head\"\n$0\n");
    let keys = ll.client.request("textDocument/completion", at);
    assert!(labels(&keys).contains(&"extra-variables") && !labels(&keys).contains(&"engine"), "{keys}");
    assert!(keys.as_array().unwrap().iter().all(|i| i["documentation"]["value"].is_string()), "{keys}");
    let at = ll.client.at(&config, "[lastlight]\n[$0\n");
    let tables = ll.client.request("textDocument/completion", at);
    assert!(labels(&tables).contains(&"rules") && !labels(&tables).contains(&"lastlight"), "{tables}");

    // Cassettes: keys by position, with their documentation.
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("plan.md"), DRY_STAGE).expect("write");
    let cassette = dir.path().join("plan.cassette.yaml");
    let text = DRY_CASSETTE;
    std::fs::write(&cassette, text).expect("write");
    let mut client = server(dir.path());
    let at = client.at(&cassette, &format!("{text}$0"));
    let top = client.request("textDocument/completion", at);
    assert!(labels(&top).contains(&"tools") && !labels(&top).contains(&"stage"), "{top}");
    assert!(top.as_array().unwrap().iter().all(|i| i["documentation"]["value"].is_string()), "{top}");
    let at = client.at(&cassette, &edit(text, "      - response:", "      - $0\n        response:"));
    let turn = client.request("textDocument/completion", at);
    assert!(labels(&turn).contains(&"expect") && labels(&turn).contains(&"grant"), "{turn}");
}

// ---------------------------------------------------------------------------------------------
// Issue 16: suppress actions offered once, body findings suppressed from the frontmatter, and
// `source.fixAll.stagelint`.

/// The actions offered for the whole of `line` of `path`, limited to `only` kinds if given.
fn actions_on_line(client: &mut Client, path: &Path, line: usize, only: Option<&[&str]>) -> Vec<Value> {
    let mut context = json!({"diagnostics": []});
    if let Some(only) = only {
        context["only"] = json!(only);
    }
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(path)},
               "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 200}},
               "context": context}),
    );
    actions.as_array().expect("actions").clone()
}

fn titles(actions: &[Value]) -> Vec<&str> {
    actions.iter().filter_map(|a| a["title"].as_str()).collect()
}

#[test]
fn suppress_is_offered_once_for_two_findings_of_one_code_on_a_line() {
    let mut sm = Sm::new();
    let plan = sm.plan();
    let text = edit(PLAN, "allowedTools: [Read, Grep]", "allowedTools: [Raed, Grpe]");
    sm.client.set(&plan, &text);
    sm.client.diagnostics(&uri(&plan), |l| l.iter().filter(|d| d["code"] == "sm/UnknownTool").count() == 2);
    let line = text.lines().position(|l| l.starts_with("allowedTools")).unwrap();
    let actions = actions_on_line(&mut sm.client, &plan, line, None);
    let titles = titles(&actions);
    let suppress = titles.iter().filter(|t| **t == "Suppress `sm/UnknownTool` on this line").count();
    assert_eq!(suppress, 1, "{titles:?}");
    assert!(titles.contains(&"Replace with `Read`") && titles.contains(&"Replace with `Grep`"), "{titles:?}");
}

#[test]
fn a_body_finding_is_suppressed_from_the_frontmatter_so_the_prompt_stays_the_same() {
    let mut sm = Sm::new();
    let plan = sm.plan();
    let text = edit(PLAN, "Task: {{ctx.task}}.", "Task: {{ctx.tsak}} and {{ctx.tusk}}.");
    sm.client.set(&plan, &text);
    sm.client.diagnostics(&uri(&plan), |l| l.iter().filter(|d| d["code"] == "sm/StageCtxUnresolved").count() == 2);
    let line = text.lines().position(|l| l.starts_with("Task:")).unwrap();
    let actions = actions_on_line(&mut sm.client, &plan, line, Some(&["quickfix"]));
    let suppress: Vec<&Value> =
        actions.iter().filter(|a| a["title"].as_str().is_some_and(|t| t.starts_with("Suppress"))).collect();
    assert_eq!(suppress.len(), 1, "one action for both findings: {:?}", titles(&actions));
    assert_eq!(suppress[0]["title"], "Suppress `sm/StageCtxUnresolved` in the body");
    let changes = document_changes(&suppress[0]["edit"]);
    let edits = changes[&uri(&plan)].as_array().unwrap().clone();
    let suppressed = apply(&text, &edits);
    let (fm_end, body) = text.split_at(text.rfind("---\n").unwrap());
    assert_eq!(suppressed, format!("{fm_end}# stagelint: ignore-body[sm/StageCtxUnresolved]\n{body}"));
    sm.client.set(&plan, &suppressed);
    let found = sm.client.pulled(&plan);
    assert!(found.is_empty(), "suppressed, and the suppression is used: {found:?}");
    // A second code in the body joins the same comment.
    let again = edit(&suppressed, "Call submit_plan", "Call ${ctx.task} then submit_plan");
    sm.client.set(&plan, &again);
    let found = sm.client.pulled(&plan);
    // The comment line moved the body one line down.
    let line = again.lines().position(|l| l.starts_with("Task:")).unwrap();
    let other = found.iter().find(|d| d["range"]["start"]["line"] == json!(line)).expect("a body finding");
    let code = other["code"].as_str().unwrap().to_string();
    let actions = actions_on_line(&mut sm.client, &plan, line, Some(&["quickfix"]));
    let title = format!("Suppress `{code}` in the body");
    let action = actions.iter().find(|a| a["title"] == title.as_str()).expect("a body suppression");
    let edits = document_changes(&action["edit"])[&uri(&plan)].as_array().unwrap().clone();
    let both = apply(&again, &edits);
    assert!(both.contains(&format!("# stagelint: ignore-body[sm/StageCtxUnresolved, {code}]\n")), "{both}");
}

#[test]
fn fix_all_applies_the_safe_fixes_of_a_document_in_one_edit() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("sm.yaml"), SM).expect("write");
    std::fs::write(dir.path().join("review.md"), REVIEW).expect("write");
    let mut client = Client::in_process();
    let result = client.initialize_with(dir.path(), json!({"general": {"positionEncodings": ["utf-16"]}}));
    let kinds = &result["capabilities"]["codeActionProvider"]["codeActionKinds"];
    assert_eq!(kinds, &json!(["quickfix", "source.fixAll.stagelint"]), "{result}");
    let plan = dir.path().join("plan.md");
    // Safe: a case-only tool name, a separator-only policy, a dollar placeholder, an unused
    // suppression. Unsafe: `Grpe`, left alone.
    let text = edit(
        &edit(
            &edit(PLAN, "allowedTools: [Read, Grep]", "allowedTools: [Webfetch, Grpe]"),
            "resolutionPolicy: retry-later",
            "resolutionPolicy: retry_later # stagelint: ignore[sm/FieldType]",
        ),
        "{{ctx.task}}",
        "${ctx.task}",
    );
    client.set(&plan, &text);
    client.diagnostics(&uri(&plan), |l| l.iter().any(|d| d["code"] == "stagelint/UnusedSuppression"));
    // One round, as `check --fix` runs them: the suppression on the line the policy fix edits
    // waits for the next round (that edit could bring its finding back).
    let expected = edit(
        &edit(PLAN, "allowedTools: [Read, Grep]", "allowedTools: [WebFetch, Grpe]"),
        "resolutionPolicy: retry-later",
        "resolutionPolicy: retry-later # stagelint: ignore[sm/FieldType]",
    );
    for only in [&["source.fixAll"][..], &["source.fixAll.stagelint"], &["source"]] {
        let actions = actions_on_line(&mut client, &plan, 0, Some(only));
        assert_eq!(titles(&actions), ["Fix all safe stagelint findings"], "{only:?}");
        assert_eq!(actions[0]["kind"], "source.fixAll.stagelint");
        let edits = actions[0]["edit"]["changes"][uri(&plan)].as_array().expect("edits").clone();
        assert_eq!(apply(&text, &edits), expected, "{only:?}");
    }
    // A light bulb asks for quick fixes only; fix-all is not one.
    let quick = actions_on_line(&mut client, &plan, 0, Some(&["quickfix"]));
    assert!(!titles(&quick).contains(&"Fix all safe stagelint findings"), "{:?}", titles(&quick));
    // The next round removes the suppression, still unused.
    client.set(&plan, &expected);
    client.pulled(&plan);
    let actions = actions_on_line(&mut client, &plan, 0, Some(&["source.fixAll"]));
    let edits = actions[0]["edit"]["changes"][uri(&plan)].as_array().expect("edits").clone();
    let fixed = apply(&expected, &edits);
    assert_eq!(fixed, expected.replace(" # stagelint: ignore[sm/FieldType]", ""));
    // Nothing safe left: no action.
    client.set(&plan, &fixed);
    client.pulled(&plan);
    assert!(actions_on_line(&mut client, &plan, 0, Some(&["source.fixAll"])).is_empty());
}

/// Issue 19 (docs/security.md): the dry-run command reads only the workspace. A stage outside
/// every workspace folder, or a link leading out of one, is refused before anything is read.
#[test]
fn a_dry_run_of_a_file_outside_the_workspace_folders_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("repo");
    let outside = dir.path().join("elsewhere");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::fs::write(root.join("plan.md"), DRY_STAGE).expect("write");
    std::fs::write(root.join("plan.cassette.yaml"), DRY_CASSETTE).expect("write");
    std::fs::write(outside.join("plan.md"), DRY_STAGE).expect("write");
    std::fs::write(outside.join("plan.cassette.yaml"), DRY_CASSETTE).expect("write");
    let mut client = server(&root);
    let run = |client: &mut Client, arguments: Value| {
        client.try_request("workspace/executeCommand", json!({"command": "stagelint.dryRun", "arguments": arguments}))
    };
    let error = run(&mut client, json!([uri(&outside.join("plan.md"))])).expect_err("outside");
    assert!(error["message"].as_str().unwrap().contains("outside the workspace folders"), "{error}");
    // The stage inside, its cassette outside.
    let arguments = json!([uri(&root.join("plan.md")), uri(&outside.join("plan.cassette.yaml"))]);
    let error = run(&mut client, arguments).expect_err("cassette outside");
    assert!(error["message"].as_str().unwrap().contains("plan.cassette.yaml"), "{error}");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, root.join("linked")).expect("symlink");
        let error = run(&mut client, json!([uri(&root.join("linked/plan.md"))])).expect_err("through a link");
        assert!(error["message"].as_str().unwrap().contains("outside the workspace folders"), "{error}");
    }
    // Inside, it runs.
    let result = run(&mut client, json!([uri(&root.join("plan.md"))])).expect("inside");
    assert!(result["summary"].as_str().unwrap().starts_with("stagelint dry-run stage plan"), "{result}");
}

// ---------------------------------------------------------------------------------------------
// The `atomic/` family: a Claude workflow in TypeScript.

const AT_WORKFLOW: &str = r#"import { defineWorkflow } from "@bastani/atomic/workflows";

export default defineWorkflow({
  name: "review",
  inputs: [{ name: "topic", type: "text" }],
})
  .for<"claude">()
  .run(async (ctx) => {
    await ctx.stage({ name: "plan", headles: true }, {}, {}, async (s) => {
      await s.session.query(`Plan ${ctx.inputs.topic}`, { effort: "high" });
      s.save(s.sessionId);
    });
    await ctx.stage({ name: "check" }, {}, {}, async (s) => {
      await s.session.query((await s.transcript("plan")).content);
      s.save(s.sessionId);
    });
  })
  .compile();
"#;

/// Diagnostics, the did-you-mean quick fix, hover, completion in half-typed code, definition,
/// references, rename and the outline of a `.ts` workflow; another `.ts` file opened beside it
/// gets nothing (it is tsserver's).
#[test]
fn atomic_workflow_features_and_nothing_for_other_typescript() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(".atomic/workflows/review/claude/index.ts");
    std::fs::create_dir_all(path.parent().unwrap()).expect("dir");
    std::fs::write(&path, AT_WORKFLOW).expect("write");
    let other = dir.path().join("src/other.ts");
    std::fs::create_dir_all(other.parent().unwrap()).expect("dir");
    let other_text = "export const x = { name: \"plan\", headles: true };\nctx.stage({ name: \"a\", headl";
    std::fs::write(&other, other_text).expect("write");
    let mut client = server(dir.path());
    client.open(&other, other_text);
    client.open(&path, AT_WORKFLOW);
    let (diagnostics, _) = client.diagnostics(&uri(&path), |l| !l.is_empty());
    let codes: Vec<&str> = diagnostics.iter().filter_map(|d| d["code"].as_str()).collect();
    assert_eq!(codes, ["atomic/UnknownOption"], "{diagnostics:?}");
    assert!(client.pulled(&other).is_empty());
    let published_for_other = client.backlog().iter().any(|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == uri(&other)
            && m["params"]["diagnostics"].as_array().is_some_and(|d| !d.is_empty())
    });
    assert!(!published_for_other, "{:?}", client.backlog());
    let at = client.at(&other, &format!("{other_text}$0"));
    assert_eq!(client.request("textDocument/completion", at), Value::Null);

    // The rule's fix reaches the code actions of a `.ts` file.
    let line = AT_WORKFLOW.lines().position(|l| l.contains("headles:")).unwrap();
    let actions = actions_on_line(&mut client, &path, line, Some(&["quickfix"]));
    assert!(titles(&actions).contains(&"Replace with `headless`"), "{:?}", titles(&actions));

    let at = client.at(&path, &edit(AT_WORKFLOW, "effort:", "eff$0ort:"));
    let hover = client.request("textDocument/hover", at);
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(shown.contains("**effort**") && shown.contains("`xhigh`"), "{hover}");

    // Half-typed: the file ends in the middle of a stage's options.
    let cut = AT_WORKFLOW.find("await ctx.stage({ name: \"check\" }").unwrap();
    let half = format!("{}await ctx.stage({{ name: \"x\", he$0", &AT_WORKFLOW[..cut]);
    let at = client.at(&path, &half);
    let items = client.request("textDocument/completion", at);
    assert_eq!(labels(&items), ["description", "headless"], "{items}");
    let half =
        format!("{}await ctx.stage({{ name: \"x\" }}, {{}}, {{}}, async (s) => s.transcript(\"$0", &AT_WORKFLOW[..cut]);
    let at = client.at(&path, &half);
    assert_eq!(labels(&client.request("textDocument/completion", at)), ["plan"]);

    let at = client.at(&path, &edit(AT_WORKFLOW, "transcript(\"plan\")", "transcript(\"pl$0an\")"));
    let definition = client.request("textDocument/definition", at.clone());
    assert_eq!(start(&definition[0]["range"]), (8, 29), "{definition}");
    let mut params = at.clone();
    params["context"] = json!({"includeDeclaration": true});
    assert_eq!(client.request("textDocument/references", params).as_array().map(Vec::len), Some(2));
    let mut params = at;
    params["newName"] = json!("design");
    let rename = client.request("textDocument/rename", params);
    let edits = document_changes(&rename)[&uri(&path)].as_array().unwrap().clone();
    let renamed = apply(AT_WORKFLOW, &edits);
    assert!(renamed.contains("name: \"design\"") && renamed.contains("transcript(\"design\")"), "{renamed}");

    client.set(&path, AT_WORKFLOW);
    let symbols = client.document("textDocument/documentSymbol", &path);
    assert_eq!(symbols[0]["name"], "review", "{symbols}");
    let children: Vec<&str> =
        symbols[0]["children"].as_array().unwrap().iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(children, ["topic", "plan", "check"]);
    assert_eq!(client.document("textDocument/documentSymbol", &other), Value::Null, "no outline for other TypeScript");
}

#[test]
fn a_workflow_gets_a_dry_run_lens_per_cassette_and_a_preview_lens_per_phase() {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(Path::new("examples/lastlight"), dir.path());
    let mut client = Client::in_process();
    client.initialize_with(
        dir.path(),
        json!({
            "general": {"positionEncodings": ["utf-16"]},
            "window": {"showDocument": {"support": true}}
        }),
    );
    let build = dir.path().join("workflows/build.yaml");
    client.set(&build, LL_BUILD);
    let lenses = client.document("textDocument/codeLens", &build);
    let titles: Vec<(u64, &str, &str)> = lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["range"]["start"]["line"].as_u64().unwrap_or(0),
                l["command"]["title"].as_str().unwrap_or(""),
                l["command"]["command"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        titles,
        [
            (1, "▶ Dry-run (build.cassette.yaml)", "stagelint.dryRun"),
            (10, "Preview prompt", "stagelint.previewPrompt"),
            (21, "Preview prompt", "stagelint.previewPrompt"),
            (29, "Preview prompt", "stagelint.previewPrompt"),
            (41, "Preview prompt", "stagelint.previewPrompt"),
        ],
        "the dry-run on `name:`, a preview on each phase but the context one: {lenses}"
    );
    // The dry-run lens runs the workflow against its cassette.
    let command = lenses[0]["command"].clone();
    let result = client
        .request("workspace/executeCommand", json!({"command": command["command"], "arguments": command["arguments"]}));
    assert_eq!(result["exitCode"], 0, "{result}");
    let report = std::fs::read_to_string(result["report"].as_str().expect("a report")).expect("report");
    assert!(report.contains("workflow build · Last Light 0.25.6 · current engine · unified · 5 phases"), "{report}");

    // The preview lens opens a read-only document of the phase's prompt.
    let plan = lenses[1]["command"].clone();
    assert_eq!(plan["arguments"][1], "plan");
    let preview =
        client.request("workspace/executeCommand", json!({"command": plan["command"], "arguments": plan["arguments"]}));
    let document = PathBuf::from(preview["document"].as_str().expect("a document"));
    let shown = client.wait("the preview", |m| {
        m["method"] == "window/showDocument" && m["params"]["uri"].as_str().is_some_and(|u| u.ends_with(".md"))
    });
    assert_eq!(shown["params"]["uri"], uri(&document));
    assert!(std::fs::metadata(&document).expect("written").permissions().readonly());
    let text = std::fs::read_to_string(&document).expect("read");
    assert!(text.contains("# Plan issue #⟦∅ issueNumber⟧ in ⟦∅ owner⟧/⟦∅ repo⟧\n"), "{text}");
    // An edit of the prompt (unsaved) writes the preview again.
    let prompt = dir.path().join("workflows/prompts/plan.md");
    let edited = std::fs::read_to_string(&prompt).expect("read").replace("# Plan issue", "# Plan the issue");
    client.set(&prompt, &edited);
    client.pulled(&prompt);
    let text = std::fs::read_to_string(&document).expect("read");
    assert!(text.contains("# Plan the issue #⟦∅ issueNumber⟧"), "the preview follows the edit: {text}");
    // Bad arguments are refused with a message.
    let refused = client.try_request(
        "workspace/executeCommand",
        json!({"command": "stagelint.previewPrompt", "arguments": [uri(&build), "nope"]}),
    );
    let message = refused.expect_err("no such phase")["message"].as_str().unwrap_or("").to_string();
    assert!(message.contains("workflow `build` has no phase `nope`"), "{message}");
}
