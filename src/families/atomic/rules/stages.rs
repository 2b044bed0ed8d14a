//! The stage graph: names the session registry refuses twice (`createSessionRunner`), stage
//! promises nobody waits for (F13), and transcript reads that cannot succeed: a name no stage
//! has, a stage not completed when the read runs (F12, F14), a stage that never saved.

use crate::diagnostic::{Applicability, Diagnostic, Edit};
use crate::families::atomic::model::flow::{Flow, Name, Read, Settled, Stage, Target};
use crate::families::atomic::{
    DuplicateStageName, ReadUnsavedStage, TranscriptNotReady, UnawaitedStage, UnknownStageRef,
};
use crate::source::Span;
use crate::util::did_you_mean;
use crate::workspace::SourceFile;

/// Steps of the arm tree the exclusivity checks of one file may take: a file of thousands of
/// stages down an `else if` ladder would otherwise take minutes (pairs times depth). Past it
/// the two checks that compare arms say nothing more.
const MAX_STEPS: usize = 4_000_000;

pub(super) fn check(file: &SourceFile, flow: &Flow, out: &mut Vec<Diagnostic>) {
    let mut steps = 0usize;
    duplicates(file, flow, &mut steps, out);
    unawaited(file, flow, out);
    for read in &flow.reads {
        if let Some(d) = unknown_ref(file, flow, read)
            .or_else(|| not_ready(file, flow, read, &mut steps))
            .or_else(|| unsaved(file, flow, read))
        {
            out.push(d);
        }
    }
}

fn static_name(stage: &Stage) -> Option<&str> {
    match &stage.name {
        Name::Static(name) => Some(name),
        _ => None,
    }
}

fn duplicates(file: &SourceFile, flow: &Flow, steps: &mut usize, out: &mut Vec<Diagnostic>) {
    let stages: Vec<(&Stage, &str)> =
        flow.stages.iter().filter(|s| !s.deferred).filter_map(|s| Some((s, static_name(s)?))).collect();
    // A stage a helper starts names the stage in the helper too.
    let helper = |d: Diagnostic, stage: &Stage| match stage.via {
        Some(at) => d.with_related(file.id, at, "the stage the helper starts"),
        None => d,
    };
    // The earlier stages of each name, so a stage is compared with its namesakes only.
    let mut seen: std::collections::HashMap<&str, Vec<&Stage>> = std::collections::HashMap::new();
    for (stage, name) in &stages {
        if *steps > MAX_STEPS {
            return;
        }
        if let Some(at) = stage.repeats {
            out.push(helper(
                Diagnostic::new(
                    DuplicateStageName,
                    file.id,
                    stage.name_span,
                    format!(
                        "stage `{name}` is started on every pass of a loop; the second pass throws `Duplicate session name: \"{name}\"`"
                    ),
                )
                .with_related(file.id, at, "the loop")
                .with_help(format!("give each pass its own name: a template with the loop variable, such as {name}-${{i}}")),
                stage,
            ));
            continue;
        }
        let namesakes = seen.entry(name).or_default();
        let earlier = namesakes
            .iter()
            .find(|other| other.repeats.is_none() && !flow.arms.exclusive(other.arms, stage.arms, steps))
            .copied();
        namesakes.push(stage);
        if let Some(first) = earlier {
            out.push(helper(
                Diagnostic::new(
                    DuplicateStageName,
                    file.id,
                    stage.name_span,
                    format!(
                        "stage `{name}` is started a second time; atomic throws `Duplicate session name: \"{name}\"` (a name stays taken once its stage completes or fails)"
                    ),
                )
                .with_related(file.id, first.name_span, format!("`{name}` is first started here"))
                .with_help("give each stage a unique name; only arms of one `if`, `switch` or `?:` may reuse one"),
                stage,
            ));
        }
    }
}

fn who(stage: &Stage) -> String {
    match &stage.name {
        Name::Unknown => "a stage".to_string(),
        name => format!("stage `{}`", shown(name)),
    }
}

fn unawaited(file: &SourceFile, flow: &Flow, out: &mut Vec<Diagnostic>) {
    let mut reported: Vec<Span> = Vec::new();
    for stage in &flow.stages {
        let d = match &stage.settled {
            Settled::Kept => match stage.forgotten {
                Some(method) if !reported.contains(&method) => {
                    reported.push(method);
                    let text = &file.text[method.start..method.end];
                    Diagnostic::new(
                        UnawaitedStage,
                        file.id,
                        method,
                        format!(
                            "nothing waits for the promises of this `{text}`'s async callback, so {} is started and left: the run goes on without it",
                            who(stage)
                        ),
                    )
                    .with_related(file.id, stage.callee, "the stage")
                    .with_help("loop with `for (const item of items) { await … }`, or `await Promise.all(items.map(async (item) => …))`")
                }
                _ => continue,
            },
            Settled::Dropped { statement, at, void } => {
                // One finding per statement: an unawaited `Promise.all([...])` drops all its stages.
                if reported.contains(statement) {
                    continue;
                }
                reported.push(*statement);
                let dropped: Vec<&Stage> = flow
                    .stages
                    .iter()
                    .filter(|s| matches!(&s.settled, Settled::Dropped { statement: t, .. } if t == statement))
                    .collect();
                let what = if dropped.len() > 1 {
                    let names: Vec<String> = dropped.iter().map(|s| format!("`{}`", shown(&s.name))).collect();
                    format!("the `Promise.all([...])` of stages {} is not awaited", names.join(", "))
                } else {
                    format!("the promise of {} is dropped", who(stage))
                };
                let mut d = Diagnostic::new(
                    UnawaitedStage,
                    file.id,
                    stage.callee,
                    format!(
                        "{what}: the run goes on without waiting, so later reads miss its transcript and the workflow may end before it does"
                    ),
                )
                .with_help(if stage.can_await {
                    "`await` the stage, or collect it in an awaited `Promise.all([...])`"
                } else {
                    "return the promise to code that awaits it; in an array callback, `await Promise.all(items.map(…))` instead"
                });
                if dropped.len() > 1 {
                    d = d.with_related(file.id, *statement, "the unawaited `Promise.all`");
                }
                match (void, stage.can_await) {
                    (Some(void), true) => d.with_fix(
                        "Replace `void` with `await`",
                        Applicability::Unsafe,
                        vec![Edit { span: *void, replacement: "await ".into() }],
                    ),
                    (None, true) => d.with_fix(
                        "Insert `await`",
                        Applicability::Unsafe,
                        vec![Edit { span: Span::empty(*at), replacement: "await ".into() }],
                    ),
                    _ => d,
                }
            }
            Settled::Unused { binding, at } => {
                let d = Diagnostic::new(
                    UnawaitedStage,
                    file.id,
                    *binding,
                    format!(
                        "the promise of {} is bound here but never awaited or passed on: the run goes on without waiting for it",
                        who(stage)
                    ),
                )
                .with_related(file.id, stage.callee, "the stage")
                .with_help("`await` the stage where it is bound, or await the binding (or pass it to `Promise.all`)");
                if stage.can_await {
                    d.with_fix(
                        "Insert `await`",
                        Applicability::Unsafe,
                        vec![Edit { span: Span::empty(*at), replacement: "await ".into() }],
                    )
                } else {
                    d
                }
            }
        };
        out.push(d);
    }
}

/// The upstream error a failed lookup throws.
fn upstream_error(read: &Read, name: &str) -> String {
    match read.method {
        "getMessages" => format!("`No messages for \"{name}\"`"),
        _ => format!("`No transcript for \"{name}\"`"),
    }
}

fn shown(name: &Name) -> String {
    match name {
        Name::Static(s) => s.clone(),
        Name::Pattern(parts) => parts.join("${…}"),
        Name::Unknown => "?".into(),
    }
}

fn unknown_ref(file: &SourceFile, flow: &Flow, read: &Read) -> Option<Diagnostic> {
    let Target::Name(name) = &read.target else { return None };
    // Every stage must be known for "no stage has it" to hold.
    if flow.open || flow.stages.iter().any(|s| s.name == Name::Unknown) {
        return None;
    }
    if flow.stages.iter().any(|s| s.name.may_equal(name)) {
        return None;
    }
    let text = shown(name);
    let statics: Vec<&str> = flow.stages.iter().filter_map(static_name).collect();
    let guess = match name {
        Name::Static(written) => did_you_mean(written, statics.iter().copied()),
        _ => None,
    };
    let mut names: Vec<String> = flow.stages.iter().map(|s| format!("`{}`", shown(&s.name))).collect();
    names.dedup();
    let help = if names.is_empty() {
        "this workflow starts no stage".to_string()
    } else {
        format!("stages of this workflow: {}", names.join(", "))
    };
    let d = Diagnostic::new(
        UnknownStageRef,
        file.id,
        read.arg,
        format!("no stage is named `{text}`; `{}` throws {}", read.method, upstream_error(read, &text)),
    )
    .with_help(help);
    Some(match guess {
        Some(guess) if read.literal && read.arg.len() >= 2 => {
            d.with_suggestion(Span::new(read.arg.start + 1, read.arg.end - 1), Some(guess))
        }
        _ => d,
    })
}

/// Why `stage` has not completed when `read` runs, if it surely has not.
fn why_not_ready(flow: &Flow, read: &Read, index: usize, stage: &Stage, steps: &mut usize) -> Option<&'static str> {
    if read.within.last() == Some(&index) {
        return Some("is read inside its own callback, before it completes");
    }
    if read.within.contains(&index) {
        return Some("is still running: this read is inside its callback");
    }
    let sibling =
        read.groups.iter().any(|(group, element)| stage.groups.iter().any(|(g, e)| g == group && e != element));
    if sibling {
        return Some("runs alongside this read in one `Promise.all([...])`, so it has not completed");
    }
    let later = stage.call.start > read.call.start;
    let apart = read.repeats.is_none() && stage.repeats.is_none() && !flow.arms.exclusive(read.arms, stage.arms, steps);
    if later && apart {
        return Some("starts only after this read");
    }
    // `const late = ctx.stage(…)` read before anything awaits `late`.
    if apart && stage.call.end <= read.call.start && stage.pending_until.is_some_and(|(_, at)| at > read.call.end) {
        return Some("is started without `await` and awaited only after this read, so it may still be running");
    }
    None
}

fn not_ready(file: &SourceFile, flow: &Flow, read: &Read, steps: &mut usize) -> Option<Diagnostic> {
    let candidates: Vec<usize> = match &read.target {
        Target::Handle { stage, pending: true, binding } => {
            let stage = &flow.stages[*stage];
            let who = static_name(stage).map_or_else(|| "a stage".to_string(), |n| format!("stage `{n}`"));
            return Some(
                Diagnostic::new(
                    TranscriptNotReady,
                    file.id,
                    read.arg,
                    format!(
                        "this holds the promise of {who}, not its handle: `{}` reads the promise's `name`, which is undefined, and throws {}",
                        read.method,
                        upstream_error(read, "undefined")
                    ),
                )
                .with_related(file.id, *binding, "bound to the unawaited stage here")
                .with_help("bind the awaited handle: `const h = await ctx.stage(…)`"),
            );
        }
        _ if read.deferred => return None,
        Target::Handle { stage, .. } => vec![*stage],
        Target::Name(name @ Name::Static(_)) => {
            flow.stages.iter().enumerate().filter(|(_, s)| !s.deferred && s.name == *name).map(|(i, _)| i).collect()
        }
        _ => return None,
    };
    if *steps > MAX_STEPS {
        return None;
    }
    let mut reasons =
        candidates.iter().map(|&i| why_not_ready(flow, read, i, &flow.stages[i], steps).map(|why| (i, why)));
    let (first, why) = reasons.next()??;
    if reasons.any(|r| r.is_none()) {
        return None;
    }
    let stage = &flow.stages[first];
    let who = static_name(stage).map_or_else(|| "the stage".to_string(), |n| format!("stage `{n}`"));
    let mut diagnostic = Diagnostic::new(
        TranscriptNotReady,
        file.id,
        read.arg,
        format!(
            "{who} {why}; `{}` sees completed stages only and throws {}",
            read.method,
            upstream_error(read, static_name(stage).unwrap_or("…"))
        ),
    )
    .with_related(file.id, stage.name_span, "the stage is started here");
    match stage.pending_until {
        Some((binding, at)) if at > read.call.end && stage.call.end <= read.call.start => {
            let awaited = Span::new(at, at + binding.len());
            diagnostic = diagnostic
                .with_related(file.id, awaited, "first awaited (or passed on) here")
                .with_help("await the stage before the stage that reads it starts: move `await` up, or start the stage with `await ctx.stage(…)`");
        }
        _ => {
            diagnostic = diagnostic.with_help(
                "read a stage after awaiting it: move the read to a later stage, or read siblings after their `Promise.all`",
            );
        }
    }
    Some(diagnostic)
}

fn unsaved(file: &SourceFile, flow: &Flow, read: &Read) -> Option<Diagnostic> {
    let candidates: Vec<&Stage> = match &read.target {
        Target::Handle { stage, .. } => vec![&flow.stages[*stage]],
        Target::Name(name @ Name::Static(_)) => {
            // Another stage, unseen or unnamed here, may be the one read.
            if flow.open || flow.stages.iter().any(|s| s.name == Name::Unknown) {
                return None;
            }
            flow.stages.iter().filter(|s| s.name.may_equal(name)).collect()
        }
        _ => return None,
    };
    let first = candidates.first()?;
    let unsaved = |s: &Stage| s.callback.as_ref().is_some_and(|c| !c.saves && !c.hands_away);
    if !candidates.iter().all(|s| unsaved(s)) {
        return None;
    }
    let callback = first.callback.as_ref()?;
    let who = static_name(first).map_or_else(|| "the stage".to_string(), |n| format!("stage `{n}`"));
    let what = if read.method == "getMessages" { "messages.json" } else { "inbox.md" };
    Some(
        Diagnostic::new(
            ReadUnsavedStage,
            file.id,
            read.arg,
            format!(
                "{who} never calls `s.save(…)`, so it has no {what}; `{}` fails reading it",
                read.method
            ),
        )
        .with_related(file.id, callback.params, "this callback never saves")
        .with_help("save the stage's messages at the end of its callback (Claude `s.save(s.sessionId)`, Copilot `s.save(await s.session.getMessages())`, OpenCode `s.save(result.data)`), or pass data on with the callback's return value (`handle.result`)"),
    )
}
