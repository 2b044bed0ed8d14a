//! Stage names and stage handles (`docs/workflows.md`: *Common Mistakes*, *Design Checklist*,
//! *Dynamic topology must remain acyclic*, `StageContext`): names that are blank or no string,
//! one name for two stages of a run (attach, send, pause and interrupt target a stage by name,
//! and a name two stages share is refused as ambiguous), a schema-backed stage prompted twice
//! (`stage-runner-context.ts` throws), and a stage handle re-prompted below the work that
//! follows it in a loop (an edge back to an ancestor).

use crate::diagnostic::Diagnostic;
use crate::families::atomic::model::current::{Call, CallKind, Current};
use crate::families::atomic::model::flow::Name;
use crate::families::atomic::model::{Object, Value};
use crate::families::atomic::{AmbiguousStageName, ReopenedStage, SchemaStageReprompted, UnreadableStageName};
use crate::source::Span;
use crate::workspace::SourceFile;

/// A stage's name where it is written, with where its call sits.
struct Named<'c> {
    name: String,
    at: Span,
    call: &'c Call,
    /// Several steps of one `ctx.parallel`/`ctx.chain` call.
    step: bool,
}

pub(super) fn check(file: &SourceFile, current: &Current, out: &mut Vec<Diagnostic>) {
    let mut named: Vec<Named> = Vec::new();
    for call in &current.calls {
        if let Some((at, what)) = call.name_not_string {
            let old = if call.kind == CallKind::Stage && what == "an object" {
                " (v0.5's `ctx.stage({ name }, clientOpts, sessionOpts, callback)`; 0.9 takes `ctx.stage(name, options)`)"
            } else {
                ""
            };
            out.push(
                Diagnostic::new(
                    UnreadableStageName,
                    file.id,
                    at,
                    format!("the stage name is {what}, not a string{old}: the stage is shown and targeted under its string form"),
                )
                .with_help("pass a readable name as the first argument: `ctx.task(\"review\", { prompt })`"),
            );
        }
        if let Some((name, at)) = &call.name {
            blank(file, name, *at, out);
            if let Name::Static(text) = name {
                named.push(Named { name: text.clone(), at: *at, call, step: false });
            }
        }
        for step in &call.steps {
            match step.get("name").map(|p| &p.value) {
                Some(Value::Str(text, at)) => {
                    blank(file, &Name::Static(text.clone()), *at, out);
                    named.push(Named { name: text.clone(), at: *at, call, step: true });
                }
                None if !step.open => out.push(
                    Diagnostic::new(
                        UnreadableStageName,
                        file.id,
                        Span::new(step.span.start, step.span.start + 1),
                        "this step has no `name`: every chain and parallel step needs one, and status and the graph show it",
                    )
                    .with_help("add `name: \"<readable stage name>\"`"),
                ),
                _ => {}
            }
        }
    }
    ambiguous(file, current, &named, out);
    handles(file, current, out);
}

fn blank(file: &SourceFile, name: &Name, at: Span, out: &mut Vec<Diagnostic>) {
    let Name::Static(text) = name else { return };
    if !text.trim().is_empty() {
        return;
    }
    out.push(
        Diagnostic::new(
            UnreadableStageName,
            file.id,
            at,
            "the stage name is blank: status views and the graph show nothing for it, and it cannot be told apart or targeted",
        )
        .with_help("give the stage a short readable name (`docs/workflows.md`: keep stage names readable)"),
    );
}

/// Two stages that may both run with one name, or one named statically in a loop.
fn ambiguous(file: &SourceFile, current: &Current, named: &[Named], out: &mut Vec<Diagnostic>) {
    let live: Vec<&Named> = named.iter().filter(|n| !n.call.deferred && !n.name.trim().is_empty()).collect();
    let mut reported: Vec<Span> = Vec::new();
    for (i, later) in live.iter().enumerate() {
        let earlier = live[..i].iter().find(|e| {
            e.name == later.name && {
                let mut steps = 0;
                // Steps of one call both run; calls in two arms of one `if` never both do.
                (e.step && later.step && std::ptr::eq(e.call, later.call))
                    || !current.arms.exclusive(e.call.arm, later.call.arm, &mut steps)
            }
        });
        if let Some(earlier) = earlier {
            reported.push(later.at);
            out.push(
                Diagnostic::new(
                    AmbiguousStageName,
                    file.id,
                    later.at,
                    format!("a second stage named \"{}\" in one run: attach, send, pause and interrupt name stages, and atomic refuses the name as ambiguous (\"Ambiguous stage identifier\")", later.name),
                )
                .with_related(file.id, earlier.at, "the first stage of that name")
                .with_help("give each stage its own name"),
            );
            continue;
        }
        if let Some(each) = later.call.repeats
            && !later.step
        {
            out.push(
                Diagnostic::new(
                    AmbiguousStageName,
                    file.id,
                    later.at,
                    format!("every pass of this loop makes a stage named \"{}\": attach, send, pause and interrupt name stages, and atomic refuses the name as ambiguous", later.name),
                )
                .with_related(file.id, each, "the loop")
                .with_help("put the iteration in the name: `ctx.task(`review-${i}`, …)`"),
            );
        }
    }
}

/// Schema-backed stages prompted twice, and stages re-prompted below later work in a loop.
fn handles(file: &SourceFile, current: &Current, out: &mut Vec<Diagnostic>) {
    for (index, stage) in current.calls.iter().enumerate().filter(|(_, c)| c.kind == CallKind::Stage) {
        let uses: Vec<_> = current.handle_uses.iter().filter(|u| u.stage == index).collect();
        let prompts: Vec<_> = uses.iter().filter(|u| u.method == "prompt").collect();
        let schema = stage.options.as_ref().and_then(|o: &Object| o.get("schema")).is_some();
        if schema {
            let twice = prompts.iter().enumerate().find_map(|(i, later)| {
                let mut steps = 0;
                let again = prompts[..i].iter().find(|e| !current.arms.exclusive(e.arm, later.arm, &mut steps));
                match again {
                    Some(first) => Some((later.at, Some(first.at))),
                    None => later.repeats.filter(|l| l.start > stage.call.start).map(|_| (later.at, None)),
                }
            });
            if let Some((at, first)) = twice {
                let mut d = Diagnostic::new(
                    SchemaStageReprompted,
                    file.id,
                    at,
                    "a schema-backed stage is prompted again: it takes one `prompt()` (its `structured_output` tool is single-use), so atomic throws \"stage schema supports one prompt() call per stage context\"",
                )
                .with_related(file.id, stage.callee, "the stage, created with `schema`")
                .with_help("create a new `ctx.stage(…)` for each structured prompt (or use `sendUserMessage` for a follow-up turn)");
                if let Some(first) = first {
                    d = d.with_related(file.id, first, "the first prompt");
                }
                out.push(d);
                continue;
            }
        }
        // Re-prompted inside a loop that also makes other stages, the stage was made before it.
        for use_ in uses.iter().filter(|u| matches!(u.method.as_str(), "prompt" | "complete")) {
            let Some(each) = use_.repeats.filter(|l| l.start > stage.call.start) else { continue };
            let downstream = current.calls.iter().find(|c| {
                c.repeats == Some(each)
                    && !std::ptr::eq(*c, stage)
                    && matches!(
                        c.kind,
                        CallKind::Task | CallKind::Chain | CallKind::Parallel | CallKind::Stage | CallKind::Workflow
                    )
            });
            let Some(downstream) = downstream else { continue };
            out.push(
                Diagnostic::new(
                    ReopenedStage,
                    file.id,
                    use_.at,
                    "this loop prompts a stage made before it again after the loop's other stages ran: from the second pass the earlier stage is reopened below its own downstream work, an edge back to an ancestor, and workflow graphs must stay acyclic",
                )
                .with_related(file.id, stage.callee, "the stage, made before the loop")
                .with_related(file.id, downstream.callee, "downstream work in the same loop")
                .with_help("make a new stage each pass (`ctx.task(`implement-${i}`, …)`), so the loop unrolls into distinct nodes"),
            );
            break;
        }
    }
}
