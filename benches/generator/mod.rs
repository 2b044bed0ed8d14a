//! Generates synthetic state-machine workspaces for benchmarks: `machines` directories of
//! `stages_per_machine` stages each, with sequential chains, parallel fan-outs and joins.

use std::fmt::Write as _;
use std::path::Path;

pub fn generate(root: &Path, machines: usize, stages_per_machine: usize) {
    for m in 0..machines {
        let dir = root.join(format!("sm-{m:04}"));
        std::fs::create_dir_all(&dir).expect("create dir");
        std::fs::write(dir.join("sm.yaml"), "entry: stage-0\ncontext:\n  required: [task]\n  optional: [branch]\n")
            .expect("write sm.yaml");
        for s in 0..stages_per_machine {
            std::fs::write(dir.join(format!("stage-{s}.md")), stage(s, stages_per_machine)).expect("write stage");
        }
    }
}

/// Every fourth stage fans out to two siblings that join on the stage after them.
fn stage(s: usize, count: usize) -> String {
    let next = if s + 1 >= count {
        String::new()
    } else if s.is_multiple_of(4) && s + 3 < count {
        format!(
            "next:\n  nextStages: [stage-{}, stage-{}]\n  execution: parallel\n  join: stage-{}\n",
            s + 1,
            s + 2,
            s + 3
        )
    } else if s % 4 == 1 || s % 4 == 2 {
        String::new()
    } else {
        format!("next:\n  nextStages: [stage-{}]\n  execution: sequential\n", s + 1)
    };
    let upstream = match s % 4 {
        _ if s == 0 => String::new(),
        1 | 2 => String::new(),
        3 => "Sibling results: {{ctx.upstream[0].parsed.summary}} and {{ctx.upstream[1].parsed.items}}\n".into(),
        _ => "Previous summary: {{ctx.upstream[0].parsed.summary}}\n".into(),
    };
    let mut body = String::new();
    for i in 0..12 {
        let _ = writeln!(
            body,
            "Paragraph {i} of the instructions for stage {s}: work on {{{{ctx.task}}}} in branch {{{{ctx.branch}}}}, keep the change small and explain each step clearly."
        );
    }
    format!(
        "---\nid: stage-{s}\nname: Stage {s}\ndescription: Synthetic stage {s}\nallowedTools: [Read, Grep, Glob, Edit]\ncompletionTool: submit_{s}\ncompletionSchema:\n  type: object\n  required: [summary]\n  properties:\n    summary: {{ type: string }}\n    items:\n      type: array\n      items: {{ type: string }}\nretryPolicy:\n  maxAttempts: 2\n  backoff: none\nturnCap: 20\nresolutionPolicy: retry-later\ntags: [bench]\n{next}---\n\n# Stage {s} (`{{{{stage.id}}}}`)\n\n{upstream}{body}\nWhen done, call `submit_{s}` with a `summary`.\n"
    )
}

/// Writes a climpt agent `<root>/.agent/bench/` whose registry has `steps` steps (a chain of
/// gated work steps ending in a closure step), one schema file with a schema per step sharing
/// a cross-file `$ref`, and agent.json.
pub fn generate_agent(root: &Path, steps: usize) {
    let dir = root.join(".agent").join("bench");
    std::fs::create_dir_all(dir.join("schemas")).expect("create dir");
    let ids: Vec<String> = (0..steps)
        .map(|i| if i + 1 == steps { "closure.bench".to_string() } else { format!("continuation.n{i}") })
        .collect();
    let mut registry_steps = Vec::new();
    let mut schemas = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let closure = i + 1 == steps;
        let (kind, c2, intents, transitions) = if closure {
            (
                "closure",
                "closure",
                "[\"closing\", \"repeat\"]",
                format!("{{\"closing\": {{\"target\": null}}, \"repeat\": {{\"target\": \"{id}\"}}}}"),
            )
        } else {
            let next = &ids[i + 1];
            (
                "work",
                "continuation",
                "[\"next\", \"repeat\"]",
                format!("{{\"next\": {{\"target\": \"{next}\"}}, \"repeat\": {{\"target\": \"{id}\"}}}}"),
            )
        };
        registry_steps.push(format!(
            "    \"{id}\": {{\n      \"stepId\": \"{id}\",\n      \"name\": \"Step {i}\",\n      \"stepKind\": \"{kind}\",\n      \"c2\": \"{c2}\",\n      \"c3\": \"bench\",\n      \"edition\": \"default\",\n      \"uvVariables\": [],\n      \"usesStdin\": false,\n      \"outputSchemaRef\": {{ \"file\": \"bench.schema.json\", \"schema\": \"{id}\" }},\n      \"structuredGate\": {{\n        \"allowedIntents\": {intents},\n        \"intentSchemaRef\": \"#/properties/next_action/properties/action\",\n        \"intentField\": \"next_action.action\"\n      }},\n      \"transitions\": {transitions}\n    }}"
        ));
        schemas.push(format!(
            "  \"{id}\": {{\n    \"type\": \"object\",\n    \"allOf\": [{{ \"$ref\": \"common.schema.json#/$defs/stepResponse\" }}],\n    \"properties\": {{\n      \"next_action\": {{\n        \"type\": \"object\",\n        \"properties\": {{ \"action\": {{ \"type\": \"string\", \"enum\": {intents} }}, \"reason\": {{ \"type\": \"string\" }} }},\n        \"required\": [\"action\"]\n      }}\n    }}\n  }}"
        ));
    }
    let registry = format!(
        "{{\n  \"agentId\": \"bench\",\n  \"version\": \"1.0.0\",\n  \"c1\": \"steps\",\n  \"entryStepMapping\": {{ \"count:iteration\": \"{}\" }},\n  \"steps\": {{\n{}\n  }}\n}}\n",
        ids[0],
        registry_steps.join(",\n")
    );
    std::fs::write(dir.join("steps_registry.json"), registry).expect("write registry");
    std::fs::write(dir.join("schemas").join("bench.schema.json"), format!("{{\n{}\n}}\n", schemas.join(",\n")))
        .expect("write schema");
    std::fs::write(
        dir.join("schemas").join("common.schema.json"),
        "{\n  \"$defs\": {\n    \"stepResponse\": {\n      \"type\": \"object\",\n      \"required\": [\"stepId\", \"status\", \"summary\"],\n      \"properties\": {\n        \"stepId\": { \"type\": \"string\" },\n        \"status\": { \"enum\": [\"completed\", \"in_progress\", \"failed\", \"needs_retry\", \"skipped\"] },\n        \"summary\": { \"type\": \"string\" }\n      }\n    }\n  }\n}\n",
    )
    .expect("write common schema");
    std::fs::write(
        dir.join("agent.json"),
        "{\n  \"version\": \"1.0.0\",\n  \"name\": \"bench\",\n  \"displayName\": \"Bench\",\n  \"description\": \"Generated\",\n  \"parameters\": {},\n  \"runner\": {\n    \"flow\": { \"systemPromptPath\": \"prompts/system.md\", \"prompts\": { \"registry\": \"steps_registry.json\" } },\n    \"verdict\": { \"type\": \"count:iteration\", \"config\": { \"maxIterations\": 5 } },\n    \"boundaries\": { \"allowedTools\": [\"Read\", \"Edit\"], \"permissionMode\": \"acceptEdits\" }\n  }\n}\n",
    )
    .expect("write agent.json");
    std::fs::create_dir_all(dir.join("prompts")).expect("create dir");
    std::fs::write(dir.join("prompts/system.md"), "You are the bench agent. Work through the steps in order.\n")
        .expect("write system prompt");
    for c2 in ["continuation", "closure"] {
        let prompts = dir.join(format!("prompts/steps/{c2}/bench"));
        std::fs::create_dir_all(&prompts).expect("create dir");
        std::fs::write(prompts.join("f_default.md"), format!("Do the {c2} step of the bench agent.\n"))
            .expect("write step prompt");
    }
}

/// Writes a Last Light project `<root>/workflows/` with `workflows` workflow files (five phases
/// each: a context checkpoint, a planner, a DAG fan-out of two agents, a reviewer loop), a
/// cron per ten workflows, three prompt files per workflow and a shared skill.
pub fn generate_lastlight(root: &Path, workflows: usize) {
    let dir = root.join("workflows");
    std::fs::create_dir_all(dir.join("prompts")).expect("create dir");
    std::fs::create_dir_all(root.join("skills/planning")).expect("create dir");
    std::fs::write(
        root.join("skills/planning/SKILL.md"),
        "---\nname: planning\ndescription: Plan a change before writing code.\n---\nPlan.\n",
    )
    .expect("write");
    for w in 0..workflows {
        let yaml = format!(
            "kind: build\nname: flow-{w}\ndescription: Generated workflow {w}\nphases:\n  - name: phase_0\n    type: context\n    depends_on: []\n  - name: plan\n    prompt: prompts/plan-{w}.md\n    skills: [planning]\n    model: \"{{{{models.plan}}}}\"\n    output_var: plan_text\n    depends_on: [phase_0]\n    messages:\n      on_start: \"Planning #{{{{issueNumber}}}} on `{{{{branch}}}}`\"\n  - name: build\n    prompt: prompts/build-{w}.md\n    depends_on: [plan]\n  - name: docs\n    prompt: prompts/build-{w}.md\n    depends_on: [plan]\n  - name: review\n    prompt: prompts/review-{w}.md\n    depends_on: [build, docs]\n    output_var: verdict\n    loop:\n      max_cycles: 2\n      on_request_changes:\n        fix_prompt: prompts/build-{w}.md\n        re_review_prompt: prompts/review-{w}.md\n      messages:\n        on_cycle_start: \"Cycle {{{{cycle}}}} of {{{{maxCycles}}}}\"\n"
        );
        std::fs::write(dir.join(format!("flow-{w}.yaml")), yaml).expect("write");
        let plan = format!(
            "# Plan {w}\n\n{{{{#if issueTitle}}}}**{{{{issueTitle}}}}**{{{{/if}}}}\n\n{{{{issueBody}}}}\n\nWrite the plan to `{{{{issueDir}}}}/plan.md` in {{{{owner}}}}/{{{{repo}}}}.\n"
        );
        std::fs::write(dir.join(format!("prompts/plan-{w}.md")), plan).expect("write");
        let build = "Implement this plan on `{{branch}}`:\n\n${plan.output}\n";
        std::fs::write(dir.join(format!("prompts/build-{w}.md")), build).expect("write");
        let review = "Review `{{branch}}` against {{plan_text}}.\nAnswer `VERDICT: APPROVED` or `VERDICT: REQUEST_CHANGES` first.\n";
        std::fs::write(dir.join(format!("prompts/review-{w}.md")), review).expect("write");
        if w % 10 == 0 {
            let cron = format!(
                "kind: cron\nname: nightly-{w}\nschedule: \"0 2 * * 1-5\"\nworkflow: flow-{w}\ncontext:\n  mode: nightly\n"
            );
            std::fs::write(dir.join(format!("cron-{w}.yaml")), cron).expect("write");
        }
    }
}

/// Writes an atomic project `<root>/.atomic/workflows/` with `workflows` workflow files made
/// from the corpus shapes: each `wf-NNN/` copies one corpus workflow directory (its agent
/// directories and helpers) with the workflow's `name` changed to match, until `workflows`
/// `index.ts` files exist. Returns the bytes written.
pub fn generate_atomic(root: &Path, workflows: usize) -> u64 {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/atomic");
    let templates = [
        "_at-v0.5.24/src/sdk/workflows/builtin/deep-research-codebase",
        "_at-v0.5.24/src/sdk/workflows/builtin/ralph",
        "_at-v0.5.24/.atomic/workflows/headless-test",
        "_at-v0.5.24/.atomic/workflows/hello-world",
        "_at-v0.5.24/.atomic/workflows/hil-favorite-color",
        "_at-v0.5.24/.atomic/workflows/hil-favorite-color-headless",
        "_at-v0.5.24/.atomic/workflows/parallel-hello-world",
        "_at-v0.5.34/.atomic/workflows/structured-output-demo",
        "_at-v0.5.34/.atomic/workflows/reviewer-tool-test",
    ];
    let base = root.join(".atomic/workflows");
    let (mut written, mut bytes) = (0, 0);
    for k in 0.. {
        let template = corpus.join(templates[k % templates.len()]);
        let old = template.file_name().and_then(|n| n.to_str()).expect("template name").to_string();
        let name = format!("wf-{k:03}");
        for agent in std::fs::read_dir(&template).expect("template dir").flatten() {
            let into = base.join(&name).join(agent.file_name());
            std::fs::create_dir_all(&into).expect("create dir");
            for file in std::fs::read_dir(agent.path()).expect("agent dir").flatten() {
                let text = std::fs::read_to_string(file.path()).expect("read template");
                let text = text.replacen(&format!("name: \"{old}\""), &format!("name: \"{name}\""), 1);
                bytes += text.len() as u64;
                std::fs::write(into.join(file.file_name()), text).expect("write");
                if file.file_name() == "index.ts" {
                    written += 1;
                    if written == workflows {
                        return bytes;
                    }
                }
            }
        }
    }
    bytes
}

/// Writes `workflows` flat 0.9 workflows `.atomic/workflows/wf-NNN.ts` from the current corpus
/// shapes (atomic's two release workflows, its builtins importing `workflow` from the package (all but the one exporting more),
/// the example with a child workflow), their `lib/` helpers and child once, and a `package.json`
/// pinning `@bastani/workflows`; returns the bytes written.
pub fn generate_atomic_current(root: &Path, workflows: usize) -> u64 {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = manifest.join("tests/corpus/atomic/_at-0.9.15");
    let mut templates = vec![
        corpus.join(".atomic/workflows/publish-release.ts"),
        corpus.join(".atomic/workflows/release-docs.ts"),
        manifest.join("examples/atomic/.atomic/workflows/review-changes.ts"),
    ];
    // A builtin that exports more than its definition (classify-and-act's categories) stays
    // out: under `.atomic/workflows/` discovery rejects that export (atomic/NonWorkflowExport).
    let mut builtins: Vec<_> = std::fs::read_dir(corpus.join("packages/workflows/builtin"))
        .expect("builtins")
        .flatten()
        .map(|e| e.path())
        .filter(|p| !std::fs::read_to_string(p).expect("read builtin").contains("\nexport const "))
        .collect();
    builtins.sort();
    templates.extend(builtins);
    let base = root.join(".atomic/workflows");
    std::fs::create_dir_all(base.join("lib")).expect("create dir");
    let pins = r#"{ "name": "bench", "private": true, "devDependencies": { "@bastani/workflows": "^0.9.15", "typebox": "^1.0.0" } }"#;
    std::fs::write(root.join("package.json"), pins).expect("write");
    let mut bytes = pins.len() as u64;
    let helpers = [
        corpus.join(".atomic/workflows/lib/publish-release.ts"),
        corpus.join(".atomic/workflows/lib/release-docs.ts"),
        manifest.join("examples/atomic/.atomic/workflows/lib/research.ts"),
    ];
    for helper in helpers {
        let text = std::fs::read_to_string(&helper).expect("read helper");
        bytes += text.len() as u64;
        std::fs::write(base.join("lib").join(helper.file_name().expect("name")), text).expect("write");
    }
    for k in 0..workflows {
        let template = &templates[k % templates.len()];
        let text = std::fs::read_to_string(template).expect("read template");
        let old = template.file_stem().and_then(|n| n.to_str()).expect("template name");
        let name = format!("wf-{k:03}");
        let text = text.replacen("from \"../src/authoring/workflow.js\"", "from \"@bastani/workflows\"", 1).replacen(
            &format!("name: \"{old}\""),
            &format!("name: \"{name}\""),
            1,
        );
        bytes += text.len() as u64;
        std::fs::write(base.join(format!("{name}.ts")), text).expect("write");
    }
    bytes
}

fn pipeline_stage(id: &str, next: Option<&str>, turn_cap: usize) -> String {
    let next = next.map_or(String::new(), |n| format!("next: {{ nextStages: [{n}] }}\n"));
    format!(
        "---\nid: {id}\nname: {id}\nallowedTools: [Read, Grep]\ncompletionTool: submit_{id}\ncompletionSchema:\n  type: object\n  required: [summary]\n  properties:\n    summary: {{ type: string }}\n    files: {{ type: array, items: {{ type: string }} }}\nretryPolicy: {{ maxAttempts: 1, backoff: none }}\nturnCap: {turn_cap}\nresolutionPolicy: retry-later\n{next}---\nTask: {{{{ctx.task}}}}. Previous: {{{{ctx.upstream}}}}. Call `submit_{id}` when done.\n"
    )
}

/// Writes a three-stage pipeline (plan -> execute -> review) with a machine cassette
/// `sm.cassette.yaml` in which each stage makes `turns` tool calls and then its completion.
pub fn generate_pipeline(dir: &Path, turns: [(&str, usize); 3], turn_cap: usize) {
    std::fs::create_dir_all(dir).expect("dir");
    std::fs::write(dir.join("sm.yaml"), "entry: plan\n").expect("write");
    std::fs::write(dir.join("plan.md"), pipeline_stage("plan", Some("execute"), turn_cap)).expect("write");
    std::fs::write(dir.join("execute.md"), pipeline_stage("execute", Some("review"), turn_cap)).expect("write");
    std::fs::write(dir.join("review.md"), pipeline_stage("review", None, turn_cap)).expect("write");
    let mut cassette = String::from(
        "cassette: 1\nctx: { task: benchmark }\ntools:\n  Read:\n    - { anyArgs: true, result: \"fn main() {}\" }\n  Grep:\n    - { args: { pattern: main }, result: \"src/main.rs:1\" }\n    - { anyArgs: true, result: \"\" }\nstages:\n",
    );
    let mut call = 0;
    for (id, tool_turns) in turns {
        cassette.push_str(&format!("  {id}:\n    attempts:\n      - turns:\n"));
        for turn in 0..tool_turns {
            call += 1;
            let (tool, args) =
                if turn % 2 == 0 { ("Read", "{ path: src/main.rs }") } else { ("Grep", "{ pattern: main }") };
            cassette.push_str(&format!(
                "          - response: {{ stop: tool_use, content: [ {{ text: step {turn} }}, {{ toolCall: {{ id: c{call}, name: {tool}, args: {args} }} }} ] }}\n            expect: [ {{ branch: tool, call: c{call}, outcome: dispatched }} ]\n"
            ));
        }
        call += 1;
        cassette.push_str(&format!(
            "          - response: {{ stop: tool_use, content: [ {{ toolCall: {{ id: c{call}, name: submit_{id}, args: {{ summary: done, files: [a, b] }} }} }} ] }}\n            expect: [ {{ branch: completion, call: c{call} }} ]\n"
        ));
    }
    std::fs::write(dir.join("sm.cassette.yaml"), cassette).expect("write");
}
