//! Editor features of the `atomic/` family on a `@bastani/workflows` (0.9) workflow: completion
//! of the `workflow({...})` spec's and the `ctx` primitives' option keys and their values (also
//! half-typed), `ctx.inputs.` from the `inputs` map, hover with the SDK's docs, definitions,
//! references and rename of inputs and stage names, the outline.

mod common;

use stagelint::ide::{self, Cursor};

const WORKFLOW: &str = r#"import { workflow } from "@bastani/workflows";
import { Type } from "typebox";

export default workflow({
  name: "review",
  description: "Scout, review in parallel, synthesize.",
  inputs: {
    target: Type.String({ description: "What to review." }),
    depth: Type.Optional(Type.Number({ description: "How deep." })),
  },
  outputs: { summary: Type.String() },
  run: async (ctx) => {
    await ctx.task("scout", { prompt: `Map ${ctx.inputs.target}`, context: "fresh" });
    const [quality] = await ctx.parallel(
      [
        { name: "quality", prompt: "Review quality." },
        { name: "runtime", prompt: "Review runtime behaviour." },
      ],
      { concurrency: 2 },
    );
    return { summary: quality.text };
  },
});
"#;

const PATH: &str = ".atomic/workflows/review.ts";

type Fixture = common::IdeFixture;

fn fixture(text: &str) -> Fixture {
    Fixture::new(&[(PATH, text)])
}

/// `WORKFLOW` cut at `needle`'s end, with `tail` typed after it and nothing after.
fn half_typed(needle: &str, tail: &str) -> String {
    let end = WORKFLOW.find(needle).expect("needle") + needle.len();
    format!("{}{tail}$0", &WORKFLOW[..end])
}

/// `WORKFLOW` with the cursor `delta` bytes into the `n`th (0-based) `needle`.
fn at(needle: &str, n: usize, delta: usize) -> String {
    let at = WORKFLOW.match_indices(needle).nth(n).expect("needle").0 + delta;
    format!("{}$0{}", &WORKFLOW[..at], &WORKFLOW[at..])
}

#[test]
fn the_fixture_is_clean() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join(PATH);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, WORKFLOW).unwrap();
    let dir = root.path().to_path_buf();
    let (_, diagnostics) = common::check_with(std::slice::from_ref(&dir), stagelint::config::Config::defaults(&dir));
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
}

#[test]
fn completes_the_keys_of_each_object_by_its_role() {
    let spec = fixture(&half_typed("  name: \"review\",\n", "  "));
    let labels = spec.labels();
    assert!(
        labels.contains(&"outputs".to_string()) && labels.contains(&"worktreeFromInputs".to_string()),
        "{labels:?}"
    );
    assert!(!labels.contains(&"name".to_string()), "a key already there: {labels:?}");
    let task = fixture(&half_typed("await ctx.task(\"scout\", { ", "pro"));
    assert!(task.labels().contains(&"prompt".to_string()), "{:?}", task.labels());
    assert!(task.labels().contains(&"outputMode".to_string()));
    let step = fixture(&half_typed("{ name: \"quality\", ", ""));
    assert!(step.labels().contains(&"schema".to_string()) && step.labels().contains(&"reads".to_string()));
    let parallel = fixture(&half_typed("      ],\n      { ", "con"));
    let labels = parallel.labels();
    assert!(labels.contains(&"concurrency".to_string()) && labels.contains(&"failFast".to_string()), "{labels:?}");
    let doc = parallel.completions().into_iter().find(|i| i.label == "failFast").and_then(|i| i.documentation);
    assert!(doc.is_some_and(|d| d.contains("exactly `false`")));
}

#[test]
fn completes_values_and_not_after_a_finished_one() {
    let f = fixture(&half_typed("context: ", ""));
    assert_eq!(f.labels(), ["fresh", "fork"]);
    let f = fixture(&half_typed("context: \"fresh\"", ", outputMode: "));
    assert_eq!(f.labels(), ["inline", "file-only"]);
    let f = fixture(&half_typed("      ],\n      { ", "failFast: "));
    assert_eq!(f.labels(), ["true", "false"]);
    // After `context: "fresh" ` or `failFast: true ` the value is finished.
    assert!(fixture(&half_typed("      ],\n      { ", "failFast: true ")).labels().is_empty());
    assert!(fixture(&at("context: \"fresh\"", 0, "context: \"fresh\"".len())).labels().is_empty());
}

#[test]
fn completes_inputs_from_the_inputs_map() {
    let f = fixture(&half_typed("prompt: `Map ${ctx.inputs.", ""));
    let items = f.completions();
    assert_eq!(f.labels(), ["target", "depth"]);
    assert_eq!(items[0].detail.as_deref(), Some("input · Type.String"));
    assert_eq!(items[1].detail.as_deref(), Some("input · Type.Number · optional"));
    assert_eq!(items[0].documentation.as_deref(), Some("What to review."));
}

#[test]
fn hover_shows_the_sdk_docs() {
    let key = fixture(&at("context: \"fresh\"", 0, 2)).hover().expect("hover").1;
    assert!(key.contains("**context**") && key.contains("`\"fresh\"`"), "{key}");
    let primitive = fixture(&at("ctx.parallel", 0, 5)).hover().expect("hover").1;
    assert!(primitive.contains("**ctx.parallel**") && primitive.contains("concurrency"), "{primitive}");
    let input = fixture(&at("ctx.inputs.target", 0, 12)).hover().expect("hover").1;
    assert!(
        input.contains("**input** `target` · `Type.String` · required") && input.contains("What to review."),
        "{input}"
    );
    let stage = fixture(&at("\"quality\"", 0, 2)).hover().expect("hover").1;
    assert!(stage.contains("**step** `quality`"), "{stage}");
    let spec = fixture(&at("description: \"Scout", 0, 2)).hover().expect("hover").1;
    assert!(spec.contains("Required listing text"), "{spec}");
}

#[test]
fn inputs_and_stages_are_defined_referenced_and_renamed() {
    let f = fixture(&at("ctx.inputs.target", 0, 13));
    let defined: Vec<_> = ide::definitions(&f.workspace, f.at()).iter().map(|t| f.show(t).1).collect();
    assert_eq!(defined, ["target"]);
    let renamed = ide::rename(&f.workspace, f.at(), "subject").expect("rename");
    assert_eq!(renamed.len(), 2, "the key and the read");
    let f = fixture(&at("\"runtime\"", 0, 2));
    let defined: Vec<_> = ide::definitions(&f.workspace, f.at()).iter().map(|t| f.show(t).1).collect();
    assert_eq!(defined, ["runtime"]);
}

#[test]
fn the_outline_lists_inputs_and_stages() {
    let f = fixture(WORKFLOW);
    let symbols = ide::symbols(&f.workspace, f.file("review.ts"));
    assert_eq!(symbols.len(), 1, "{symbols:#?}");
    assert_eq!(symbols[0].name, "review");
    let children: Vec<(&str, &str)> =
        symbols[0].children.iter().map(|s| (s.name.as_str(), s.detail.as_deref().unwrap_or(""))).collect();
    assert_eq!(
        children,
        [
            ("target", "input · Type.String"),
            ("depth", "input · Type.Number"),
            ("scout", "task"),
            ("quality", "step"),
            ("runtime", "step")
        ]
    );
}

#[test]
fn every_offset_is_answered_without_panicking() {
    let half = &WORKFLOW[..WORKFLOW.len() / 2];
    for text in [WORKFLOW, half] {
        let f = fixture(text);
        let file = f.workspace.file(f.file("review.ts"));
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
