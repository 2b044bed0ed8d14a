//! What the stage engine's runs exercised of each stage, read from their events: the
//! completion channel's branches (`spec/domain.md` §1.3: success, parse failure, plain text,
//! another tool, a rejected batch, the turn cap), the Assert outcomes (ok, retry, skip, fail)
//! and the `next` paths (each successor the stage names, or `terminate` when it names none). A
//! path counts when a machine run followed it: the successor ran after the stage's `next` was
//! evaluated (a stage cassette never evaluates `next`).

use std::collections::HashMap;

use serde_json::Value as Json;

use crate::families::sm::model::StageDoc;
use crate::runtime::coverage::{Item, Part};
use crate::runtime::run::DryRun;
use crate::runtime::stages::stage::StageSpec;
use crate::workspace::{FileKind, Workspace};

/// The completion channel's branches: the event that shows each, and its name.
const BRANCHES: [(&str, &str); 6] = [
    ("CompletionAccepted", "completion"),
    ("CompletionParseFailed", "parseFailure"),
    ("SteeringAppended", "plainText"),
    ("ToolCall", "otherTool"),
    ("BatchRejected", "batchRejected"),
    ("capHit", "turnCap"),
];

/// The Assert outcomes.
const VERDICTS: [&str; 4] = ["ok", "retry", "skip", "fail"];

/// The group names, as output shows them.
const CHANNEL: &str = "completion channel";
const ASSERT: &str = "Assert";
const NEXT: &str = "Next";

/// Every stage of `workspace` with what `runs` did with it.
pub(super) fn coverage(workspace: &Workspace, runs: &[&DryRun]) -> Vec<Part> {
    let mut parts: Vec<Part> = Vec::new();
    // By the path the runs name a stage by (its display path).
    let mut by_path: HashMap<&str, usize> = HashMap::new();
    for file in workspace.reported_files().filter(|f| f.kind == FileKind::Stage) {
        let doc = StageDoc::parse(file);
        let Some((id, span)) = doc.stage_id() else { continue };
        let spec = StageSpec::read(&doc);
        let mut items: Vec<Item> = BRANCHES.iter().map(|(_, name)| item(CHANNEL, name)).collect();
        items.extend(VERDICTS.iter().map(|verdict| item(ASSERT, verdict)));
        match &spec.next {
            Some(next) => {
                for to in next.stages.iter().chain(&next.join) {
                    let name = format!("→ {to}");
                    // A join that is also a sibling (an authoring error) is one path.
                    if !items.iter().any(|i| i.name == name) {
                        items.push(item(NEXT, &name));
                    }
                }
            }
            None => items.push(item(NEXT, "terminate")),
        }
        by_path.insert(&file.display, parts.len());
        parts.push(Part { name: format!("stage {id}"), file: file.id, span, items });
    }
    for run in runs {
        count(run, &by_path, &mut parts);
    }
    parts.sort_by(|a, b| {
        (&workspace.file(a.file).display, a.span.start).cmp(&(&workspace.file(b.file).display, b.span.start))
    });
    parts
}

fn item(group: &'static str, name: &str) -> Item {
    Item { group, name: name.to_string(), hits: 0 }
}

/// Adds what one run did.
fn count(run: &DryRun, by_path: &HashMap<&str, usize>, parts: &mut [Part]) {
    // The stage file of each stage id, as its Setup named it (an id names one stage per run).
    let mut file_of: HashMap<&str, usize> = HashMap::new();
    // Per stage whose `next` was followed: the successors not seen running since.
    let mut followed: Vec<(usize, Vec<String>)> = Vec::new();
    for event in &run.trace.events {
        let stage = event.str("stage");
        if event.name == "StageSetup"
            && let Some(&at) = by_path.get(event.str("file"))
        {
            file_of.insert(stage, at);
            for (from, waiting) in &mut followed {
                if let Some(k) = waiting.iter().position(|to| to == stage) {
                    waiting.remove(k);
                    hit(&mut parts[*from], NEXT, &format!("→ {stage}"));
                }
            }
        }
        let Some(&at) = file_of.get(stage) else { continue };
        let part = &mut parts[at];
        match event.name {
            "ToolCallStarted" | "ToolCallDenied" | "ToolCallInvalid" => hit(part, CHANNEL, "otherTool"),
            "ActEnded" if event.str("end") == "capHit" => hit(part, CHANNEL, "turnCap"),
            "StageAssertOutcome" => hit(part, ASSERT, event.str("verdict")),
            "StageNext" if event.data.get("evaluated") == Some(&Json::Bool(true)) => {
                match event.data.get("next").and_then(|n| n.as_object()) {
                    None => hit(part, NEXT, "terminate"),
                    Some(next) => {
                        let names = next.get("nextStages").and_then(Json::as_array).into_iter().flatten();
                        let join = next.get("join").into_iter();
                        let waiting = names.chain(join).filter_map(Json::as_str).map(str::to_string).collect();
                        followed.push((at, waiting));
                    }
                }
            }
            name => {
                if let Some((_, branch)) = BRANCHES.iter().find(|(event, _)| *event == name) {
                    hit(part, CHANNEL, branch);
                }
            }
        }
    }
}

fn hit(part: &mut Part, group: &str, name: &str) {
    if let Some(item) = part.items.iter_mut().find(|i| i.group == group && i.name == name) {
        item.hits += 1;
    }
}
