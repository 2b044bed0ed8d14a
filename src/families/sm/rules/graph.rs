//! The state machine's shape: its file, stage ids, `entry`, `next`/`join` targets, reachability.

use std::collections::{HashMap, HashSet};

use crate::diagnostic::{Diagnostic, FileId};
use crate::families::sm::model::{Execution, Machine, NextPlan, StageDoc};
use crate::families::sm::roles;
use crate::families::sm::rules::fields::unknown_key_diagnostic;
use crate::families::sm::{
    DuplicateStageId, EntryStageMissing, InvalidParallelPlan, JoinIsSibling, NextCycle, NextIgnored, StageJoinDangling,
    StageOutsideMachine, StateMachineInvalid, UnknownField, UnknownNextStage, UnreachableStage,
};
use crate::source::{Node, Span, Value};
use crate::template::stage::{Segment, TagKind};
use crate::util::{did_you_mean_valid, is_kebab_case, to_kebab_case};

const SM_KEYS: [&str; 7] = ["entry", "context", "enabled", "autoAttach", "name", "description", "$schema"];

/// The resolved graph, for the upstream rules.
pub(super) struct Graph<'a, 'w> {
    pub by_id: HashMap<&'a str, &'a StageDoc<'w>>,
    pub entry: Option<&'a str>,
    pub plans: Vec<(&'a StageDoc<'w>, NextPlan)>,
}

/// Runs the graph rules; returns the graph when the SM file is usable.
pub(super) fn check<'a, 'w>(machine: &Machine<'a, 'w>, out: &mut Vec<Diagnostic>) -> Option<Graph<'a, 'w>> {
    let usable = check_sm_file(machine, out);
    let by_id = index_ids(machine, out);
    // Stages whose frontmatter does not parse keep their id: naming them is no second defect.
    let broken: HashSet<&str> = machine.stages.iter().filter_map(|s| s.scanned_id()).collect();
    let hidden: HashMap<&str, &StageDoc> = machine.stages.iter().filter_map(|s| Some((s.hidden_id()?, *s))).collect();
    let plans: Vec<(&StageDoc, NextPlan)> = machine.stages.iter().filter_map(|s| Some((*s, s.next()?))).collect();
    for (stage, plan) in &plans {
        check_plan(stage, plan, &by_id, &broken, &hidden, out);
    }
    if !usable {
        return None;
    }
    let entry = check_entry(machine, &by_id, &broken, &hidden, out);
    if let Some(entry) = entry {
        check_reachable(machine, entry, &by_id, &broken, &plans, out);
    }
    Some(Graph { by_id, entry, plans })
}

fn check_sm_file(machine: &Machine, out: &mut Vec<Diagnostic>) -> bool {
    let sm = machine.sm;
    let file = sm.file.id;
    for error in &sm.syntax_errors {
        let mut diagnostic = Diagnostic::new(
            StateMachineInvalid,
            file,
            error.span,
            format!("invalid state machine file: {}", error.message),
        );
        if let Some((span, message)) = &error.related {
            diagnostic = diagnostic.with_related(file, *span, message.clone());
        }
        out.push(diagnostic);
    }
    let Some(root) = &sm.root else {
        if sm.syntax_errors.is_empty() {
            out.push(Diagnostic::new(
                StateMachineInvalid,
                file,
                Span::empty(0),
                "the state machine file is empty; it needs at least `entry: <stage-id>`",
            ));
        }
        return false;
    };
    let Some(entries) = root.as_map() else {
        out.push(Diagnostic::new(
            StateMachineInvalid,
            file,
            root.span,
            format!("the state machine file must be a mapping, but it is {}", root.type_name()),
        ));
        return false;
    };
    if root.get("entry").is_none() {
        out.push(Diagnostic::new(
            StateMachineInvalid,
            file,
            Span::new(root.span.start, root.span.start),
            "the state machine has no `entry`; add `entry: <stage-id>` naming its first stage",
        ));
    }
    for entry in entries {
        let key = entry.key_str().unwrap_or("");
        let value = &entry.value;
        let problem = match key {
            "entry" => value.as_str().is_none_or(|s| s.is_empty()).then_some("must be a stage id (a non-empty string)"),
            "enabled" | "autoAttach" => (!matches!(value.value, Value::Bool(_))).then_some("must be `true` or `false`"),
            "name" | "description" | "$schema" => value.as_str().is_none().then_some("must be a string"),
            "context" => check_context_shape(value),
            _ => {
                out.push(sm_unknown_key(file, root, &entry.key, key));
                None
            }
        };
        if let Some(problem) = problem {
            out.push(Diagnostic::new(StateMachineInvalid, file, value.span, format!("`{key}` {problem}")));
        }
    }
    true
}

fn check_context_shape(value: &Node) -> Option<&'static str> {
    let Some(entries) = value.as_map() else {
        return Some("must be a mapping with `required` and/or `optional` lists of field names");
    };
    for entry in entries {
        let is_list = entry.value.as_seq().is_some_and(|items| items.iter().all(|i| i.as_str().is_some()));
        if !matches!(entry.key_str(), Some("required" | "optional")) || !is_list {
            return Some("must only hold `required` and `optional`, each a list of field names");
        }
    }
    None
}

/// Maps ids to stages (the first stage with an id is the one that runs) and reports ids used
/// twice on every stage that has them: checking any one of the files (a pre-commit hook names
/// only the changed ones) then shows the clash.
fn index_ids<'a, 'w>(machine: &Machine<'a, 'w>, out: &mut Vec<Diagnostic>) -> HashMap<&'a str, &'a StageDoc<'w>> {
    let mut by_id: HashMap<&'a str, &'a StageDoc<'w>> = HashMap::new();
    let mut sharing: HashMap<&'a str, Vec<(&'a StageDoc<'w>, Span)>> = HashMap::new();
    let mut order: Vec<&'a str> = Vec::new();
    for stage in &machine.stages {
        let Some((id, span)) = stage.stage_id() else {
            continue;
        };
        by_id.entry(id).or_insert(stage);
        let group = sharing.entry(id).or_default();
        if group.is_empty() {
            order.push(id);
        }
        group.push((stage, span));
    }
    for id in order {
        let group = &sharing[id];
        if group.len() < 2 {
            continue;
        }
        for (stage, span) in group {
            let others: Vec<&(&StageDoc, Span)> = group.iter().filter(|(o, _)| o.id() != stage.id()).collect();
            let names: Vec<String> = others.iter().map(|(o, _)| format!("`{}`", o.file.display)).collect();
            let mut diagnostic = Diagnostic::new(
                DuplicateStageId,
                stage.id(),
                *span,
                format!(
                    "stage id `{id}` is also used by {}; ids must be unique in a state machine: give each stage its own id",
                    names.join(", ")
                ),
            );
            for (other, other_span) in others {
                diagnostic = diagnostic.with_related(other.id(), *other_span, format!("`{id}` is also defined here"));
            }
            out.push(diagnostic);
        }
    }
    by_id
}

/// A reference to a stage whose fields sit after blank or comment lines: it does exist as a file,
/// but the runtime does not read it as a stage (`sm/FrontmatterNotFirst`).
fn not_read(code: &'static str, file: FileId, span: Span, id: &str, doc: &StageDoc) -> Diagnostic {
    Diagnostic::new(
        code,
        file,
        span,
        format!(
            "`{id}` is defined in `{}`, but lines come before its `---`, so the runtime reads that file as plain markdown, not as a stage",
            doc.file.display
        ),
    )
    .with_related(doc.id(), late_fence(doc), "start this file with its `---` line")
}

fn late_fence(doc: &StageDoc) -> Span {
    crate::source::frontmatter::late_start(&doc.file.text).map_or(Span::empty(0), |(at, _)| Span::new(at, at + 3))
}

/// The id a mistyped reference most likely means, valid ids first (see `did_you_mean_valid`).
fn guess<'a>(word: &str, ids: &HashMap<&'a str, &StageDoc>) -> Option<(&'a str, bool)> {
    // Sorted: of equally near ids, the same one on every run.
    let mut sorted: Vec<&'a str> = ids.keys().copied().collect();
    sorted.sort_unstable();
    did_you_mean_valid(word, sorted, is_kebab_case)
}

/// A fix only towards a valid id: renaming a reference to an id that `sm/InvalidStageId` is
/// about to rename would leave it dangling again.
fn suggest_fix(diagnostic: Diagnostic, span: Span, word: &str, ids: &HashMap<&str, &StageDoc>) -> Diagnostic {
    let valid = guess(word, ids).filter(|(_, valid)| *valid).map(|(id, _)| id);
    diagnostic.with_suggestion(span, valid)
}

fn hint(word: &str, ids: &HashMap<&str, &StageDoc>) -> String {
    match guess(word, ids) {
        Some((s, true)) => format!("; did you mean `{s}`?"),
        Some((s, false)) if to_kebab_case(s) == word => {
            format!("; `{s}` is not kebab-case, and renaming it to `{word}` (`sm/InvalidStageId`'s fix) resolves this")
        }
        Some((s, false)) => {
            format!("; the closest id, `{s}`, is not kebab-case (`sm/InvalidStageId`): rename that stage first")
        }
        None => String::new(),
    }
}

fn check_plan(
    stage: &StageDoc,
    plan: &NextPlan,
    ids: &HashMap<&str, &StageDoc>,
    broken: &HashSet<&str>,
    hidden: &HashMap<&str, &StageDoc>,
    out: &mut Vec<Diagnostic>,
) {
    let file = stage.id();
    let known = |id: &str| ids.contains_key(id) || broken.contains(id);
    for (target, span) in &plan.stages {
        if let Some(doc) = hidden.get(target.as_str()).filter(|_| !known(target)) {
            out.push(not_read(UnknownNextStage, file, *span, target, doc));
        } else if !known(target) {
            let diagnostic = Diagnostic::new(
                UnknownNextStage,
                file,
                *span,
                format!("`{target}` is not a stage of this state machine{}", hint(target, ids)),
            );
            out.push(suggest_fix(diagnostic, *span, target, ids));
        }
    }
    if plan.execution == Execution::Parallel && plan.stages.len() < 2 && !plan.execution_unknown {
        let span = plan.execution_span.unwrap_or(plan.span);
        out.push(Diagnostic::new(
            InvalidParallelPlan,
            file,
            span,
            format!(
                "`execution: parallel` needs at least two `nextStages`, but there {}; use `sequential` or add a sibling",
                if plan.stages.len() == 1 { "is one".to_string() } else { format!("are {}", plan.stages.len()) }
            ),
        ));
    }
    let Some((join, join_span)) = &plan.join else {
        return;
    };
    if plan.execution == Execution::Sequential && !plan.execution_unknown {
        out.push(Diagnostic::new(
            InvalidParallelPlan,
            file,
            plan.join_key.unwrap_or(*join_span),
            "`join` only applies to `execution: parallel`; a sequential next never joins. Remove `join` or make the plan parallel",
        ));
    }
    if broken.contains(join.as_str()) {
        return;
    }
    if let Some(doc) = hidden.get(join.as_str()).filter(|_| !ids.contains_key(join.as_str())) {
        out.push(not_read(StageJoinDangling, file, *join_span, join, doc));
        return;
    }
    if !ids.contains_key(join.as_str()) {
        let diagnostic = Diagnostic::new(
            StageJoinDangling,
            file,
            *join_span,
            format!("join stage `{join}` is not a stage of this state machine{}", hint(join, ids)),
        );
        out.push(suggest_fix(diagnostic, *join_span, join, ids));
    } else if let Some((_, sibling_span)) = plan.stages.iter().find(|(s, _)| s == join) {
        out.push(
            Diagnostic::new(
                JoinIsSibling,
                file,
                *join_span,
                format!("`{join}` is both a parallel sibling and the join; the join runs after every sibling, so it must be another stage"),
            )
            .with_related(file, *sibling_span, "listed as a sibling here"),
        );
    }
}

fn check_entry<'a>(
    machine: &Machine<'a, '_>,
    ids: &HashMap<&'a str, &StageDoc>,
    broken: &HashSet<&str>,
    hidden: &HashMap<&str, &StageDoc>,
    out: &mut Vec<Diagnostic>,
) -> Option<&'a str> {
    let (entry, span) = machine.sm.entry()?;
    if let Some((found, _)) = ids.get_key_value(entry) {
        return Some(found);
    }
    if broken.contains(entry) {
        return None;
    }
    if let Some(doc) = hidden.get(entry) {
        out.push(not_read(EntryStageMissing, machine.sm.file.id, span, entry, doc));
        return None;
    }
    let message = if ids.is_empty() {
        format!("entry stage `{entry}` does not exist: no stage definition was found under this directory")
    } else {
        format!("entry stage `{entry}` is not a stage of this state machine{}", hint(entry, ids))
    };
    out.push(suggest_fix(Diagnostic::new(EntryStageMissing, machine.sm.file.id, span, message), span, entry, ids));
    None
}

/// Reachability as the runtime runs `next` (`roles`): a stage's own `next` counts only where
/// the run continues from it. A stage reached only where its `next` is never evaluated (a
/// non-last list member, a parallel sibling) gets `sm/NextIgnored` on that `next`.
fn check_reachable(
    machine: &Machine,
    entry: &str,
    by_id: &HashMap<&str, &StageDoc>,
    broken: &HashSet<&str>,
    plans: &[(&StageDoc, NextPlan)],
    out: &mut Vec<Diagnostic>,
) {
    // A duplicate id is `sm/DuplicateStageId`; the first stage with it is the one that runs.
    let owned: HashMap<&str, &NextPlan> = plans
        .iter()
        .filter_map(|(stage, plan)| {
            let (id, _) = stage.stage_id()?;
            (by_id.get(id)?.id() == stage.id()).then_some((id, plan))
        })
        .collect();
    let found = roles::roles(entry, |id| {
        let plan = owned.get(id)?;
        Some(roles::Plan {
            stages: plan.stages.iter().map(|(s, _)| s.as_str()).collect(),
            parallel: plan.execution == Execution::Parallel,
            join: plan.join.as_ref().map(|(j, _)| j.as_str()),
        })
    });
    check_cycle(entry, by_id, &owned, out);
    // Where the run goes through a stage whose `next` cannot be read (its frontmatter or its
    // `next` has an error, or its `execution` is unknown), what runs after it is unknown: those
    // errors are the findings, not the stages they hide.
    let unreadable = |id: &str| {
        broken.contains(id)
            || owned.get(id).is_some_and(|plan| plan.execution_unknown)
            || by_id.get(id).is_some_and(|stage| stage.field("next").is_some() && !owned.contains_key(id))
    };
    if found.keys().any(|id| unreadable(id)) {
        return;
    }
    let followed = |id: &str| found.get(id).is_some_and(|ways| ways.iter().any(|r| r.follows_next()));
    for stage in &machine.stages {
        let Some((id, span)) = stage.stage_id() else {
            continue;
        };
        match found.get(id) {
            None => {
                // Named only by a `next` the runtime never follows: say which.
                let names = |plan: &NextPlan| {
                    plan.stages.iter().any(|(s, _)| s == id) || plan.join.as_ref().is_some_and(|(j, _)| j == id)
                };
                let ignored = owned
                    .iter()
                    .filter(|(owner, plan)| found.contains_key(**owner) && !followed(owner) && names(plan))
                    .map(|(owner, _)| *owner)
                    .min();
                out.push(unreachable(machine, stage, (id, span), entry, ignored));
            }
            Some(ways) if !followed(id) && by_id.get(id).is_some_and(|first| first.id() == stage.id()) => {
                let Some(next) = stage.root.as_ref().and_then(|root| root.entry("next")) else {
                    continue;
                };
                let why = ways.iter().find_map(|r| r.why_next_ignored(id)).unwrap_or_default();
                out.push(
                    Diagnostic::new(
                        NextIgnored,
                        stage.id(),
                        next.key.span,
                        format!("{why}; the runtime never evaluates the `next` of `{id}`"),
                    )
                    .with_help(
                        "move these successors to the `next` of the stage that owns the list or fan-out, or remove this `next`",
                    ),
                );
            }
            Some(_) => {}
        }
    }
}

/// `sm/NextCycle`: the run continues from one stage at a time (the entry, the last of a
/// sequential list, a join), so from the entry it is a single path; coming back to a stage on it
/// is a cycle that nothing leaves. Linear in the stages, without recursion.
fn check_cycle(
    entry: &str,
    by_id: &HashMap<&str, &StageDoc>,
    owned: &HashMap<&str, &NextPlan>,
    out: &mut Vec<Diagnostic>,
) {
    let mut path: Vec<&str> = vec![entry];
    let mut on_path: HashMap<&str, usize> = HashMap::from([(entry, 0)]);
    loop {
        let current = path[path.len() - 1];
        let Some(plan) = owned.get(current).filter(|plan| !plan.execution_unknown) else { return };
        let continues = match plan.execution {
            Execution::Parallel => plan.join.as_ref(),
            Execution::Sequential => plan.stages.last(),
        };
        let Some((target, span)) = continues else { return };
        let Some((target, _)) = by_id.get_key_value(target.as_str()) else { return };
        let Some(&start) = on_path.get(target) else {
            on_path.insert(target, path.len());
            path.push(target);
            continue;
        };
        let Some(stage) = by_id.get(current) else { return };
        let mut cycle: Vec<String> = path[start..].iter().chain([target]).map(|id| format!("`{id}`")).collect();
        // A long cycle is named by its ends.
        if cycle.len() > 8 {
            let stages = cycle.len() - 1;
            cycle.splice(3..cycle.len() - 2, [format!("… ({stages} stages) …")]);
        }
        let mut diagnostic = Diagnostic::new(
            NextCycle,
            stage.id(),
            *span,
            format!(
                "this `next` leads back to `{target}`, closing the cycle {}; no stage on it ends the machine, so the run never terminates",
                cycle.join(" → ")
            ),
        )
        .with_help("end the cycle with a stage that has no `next`; a retry within one stage belongs to `retryPolicy`");
        if let Some(first) = by_id.get(target)
            && let Some((_, id_span)) = first.stage_id()
        {
            diagnostic = diagnostic.with_related(
                first.id(),
                id_span,
                format!("`{target}` already ran on the path from the entry"),
            );
        }
        out.push(diagnostic);
        return;
    }
}

/// `sm/UnreachableStage` on `stage`; `ignored` names a stage whose `next` lists it but is never
/// evaluated.
fn unreachable(
    machine: &Machine,
    stage: &StageDoc,
    (id, span): (&str, Span),
    entry: &str,
    ignored: Option<&str>,
) -> Diagnostic {
    let why = ignored.map_or(String::new(), |owner| {
        format!(" (`{owner}`'s `next` names it, but the runtime never evaluates that `next`)")
    });
    Diagnostic::new(
        UnreachableStage,
        stage.id(),
        span,
        format!("stage `{id}` is never reached from the entry stage `{entry}`{why}; add it to a `next` or remove it"),
    )
    .with_related(machine.sm.file.id, machine.sm.entry().map_or(Span::empty(0), |(_, s)| s), "entry declared here")
}

/// Unknown `sm.yaml` keys, with what authors coming from other workflow tools usually mean.
fn sm_unknown_key(file: FileId, root: &Node, key_node: &Node, key: &str) -> Diagnostic {
    let d = unknown_key_diagnostic(file, root, key_node, key, &SM_KEYS, "state machine key");
    if d.fix.is_some() {
        return d;
    }
    match key {
        "start" | "startStage" | "start_stage" | "initial" | "initialStage" | "entryStage" | "entry_stage" | "first"
            if root.get("entry").is_none() =>
        {
            Diagnostic::new(
                UnknownField,
                file,
                key_node.span,
                format!("unknown state machine key `{key}`; the first stage is named by `entry`"),
            )
            .with_suggestion(key_node.span, Some("entry"))
        }
        "stages" | "steps" | "states" => d.with_help(
            "every stage definition below the directory of `sm.yaml` belongs to the state machine; list nothing here, and name the first stage in `entry`",
        ),
        _ => d,
    }
}

/// `sm/StageOutsideMachine`: a stage with a `next` or a `ctx.upstream` placeholder that no state
/// machine owns; those need the machine, so without a word the run would read as all clear.
pub(super) fn check_outside(stage: &StageDoc, out: &mut Vec<Diagnostic>) {
    let next = stage.root.as_ref().and_then(|root| root.entry("next")).map(|entry| (entry.key.span, "`next`"));
    let upstream = stage.tags.iter().find_map(|tag| match &tag.kind {
        TagKind::Path(path)
            if path.root() == Some("ctx") && path.segments.get(1).and_then(Segment::name) == Some("upstream") =>
        {
            Some((path.span(), "`ctx.upstream`"))
        }
        _ => None,
    });
    let Some((span, what)) = next.or(upstream) else { return };
    out.push(
        Diagnostic::new(
            StageOutsideMachine,
            stage.id(),
            span,
            format!(
                "this stage belongs to no state machine (there is no `sm.yaml` in its directory or above), so its {what} was not checked"
            ),
        )
        .with_help("put an `sm.yaml` naming the `entry` stage in the directory that holds the machine's stages"),
    );
}
