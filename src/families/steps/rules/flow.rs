//! climpt's flow validator: the step graph from the entries through transitions to closure
//! steps, and the per-kind rules for transition keys and targets.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::diagnostic::{Diagnostic, Severity};
use crate::families::steps::model::{
    Agent, INTENT_ALIASES, INTENTS, Step, StepKind, allowed_intents_for, rule_targets,
};
use crate::families::steps::{
    FLOW_EntryCannotClose, FLOW_HandoffFromInitial, FLOW_IntentNotAllowedForKind, FLOW_KindBoundary, FLOW_NextToSelf,
    FLOW_NoClosureStep, FLOW_NoPathToClosure, FLOW_OrphanStep, FLOW_UnknownIntentKey,
};
use crate::source::{Node, Span};
use crate::util::did_you_mean;

/// Whether a step ends a run: `stepKind` closure (explicit or inferred) or `c2: closure`.
/// climpt's flow validator looks at `c2` only; a `stepKind: closure` step under another `c2`
/// (iterator's `initial.project.closure`) completes the run just the same, so it counts.
pub(super) fn is_closure(step: &Step) -> bool {
    step.kind() == Some(StepKind::Closure) || step.c2() == Some("closure")
}

/// Whether a transition rule routes by itself: a `target` key, or `condition` with `targets`.
/// Any other rule falls through to climpt's default transition.
pub(super) fn rule_routes(rule: &Node) -> bool {
    rule.get("target").is_some() || (rule.get("condition").is_some() && rule.get("targets").is_some())
}

/// Whether the step has a `next` rule the router can use.
pub(super) fn has_next_rule(step: &Step) -> bool {
    step.transition("next").is_some_and(rule_routes)
}

/// What a step reference resolves to for the graph (see [`StepIndex::resolve`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Resolved {
    /// A step, or the step a dangling reference is a typo of.
    Step(usize),
    /// A key of `steps` whose value is not a step definition.
    Elsewhere,
    /// Nothing like it: where the flow goes cannot be told.
    Unknown,
}

/// The registry's steps with constant-time lookups (registries may hold thousands of steps).
pub(super) struct StepIndex<'a> {
    pub steps: Vec<Step<'a>>,
    by_id: HashMap<&'a str, usize>,
    /// Every key of `steps`, whatever its value.
    keys: HashSet<&'a str>,
}

impl<'a> StepIndex<'a> {
    pub(super) fn new(agent: &Agent<'a, '_>) -> StepIndex<'a> {
        let steps = agent.steps();
        let by_id = steps.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
        StepIndex { steps, by_id, keys: agent.step_ids().into_iter().collect() }
    }

    /// Whether `steps` has the key `id`.
    pub(super) fn has(&self, id: &str) -> bool {
        self.keys.contains(id)
    }

    pub(super) fn position(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    pub(super) fn get(&self, id: &str) -> Option<&Step<'a>> {
        self.position(id).map(|i| &self.steps[i])
    }

    /// Where a step reference leads for the graph findings: the step itself, or, when `steps`
    /// has no such key, the step it is most likely a typo of (SR-ENTRY-003 and SR-TRANS-001
    /// report the typo; the graph findings that follow from it would repeat that one defect).
    pub(super) fn resolve(&self, id: &str) -> Resolved {
        if let Some(i) = self.position(id) {
            return Resolved::Step(i);
        }
        if self.has(id) {
            return Resolved::Elsewhere;
        }
        match super::near_step(id, self.steps.iter().map(|s| s.id)).and_then(|guess| self.position(guess)) {
            Some(i) => Resolved::Step(i),
            None => Resolved::Unknown,
        }
    }

    /// `continuation.X` for `initial.X` when that step exists: climpt's default transition
    /// ("prefix substitution") taken when `next` has no rule.
    pub(super) fn default_continuation(&self, step: &Step) -> Option<String> {
        let rest = step.id.strip_prefix("initial.")?;
        let continuation = format!("continuation.{rest}");
        self.has(&continuation).then_some(continuation)
    }
}

pub(super) fn check(agent: &Agent, index: &StepIndex, out: &mut Vec<Diagnostic>) {
    if index.steps.is_empty() {
        return;
    }
    for step in &index.steps {
        check_keys(agent, step, out);
        check_boundaries(agent, index, step, out);
    }
    let graph = Graph::new(agent, index);
    check_reachability(agent, &graph, out);
    check_cycles(agent, &graph, out);
}

/// Unknown and kind-forbidden transitions keys, `handoff` on initial steps, `next` to itself.
fn check_keys(agent: &Agent, step: &Step, out: &mut Vec<Diagnostic>) {
    let file = agent.registry.id();
    let id = step.id;
    let kind = step.kind();
    for (key, _) in step.transitions() {
        let Some(name) = key.as_str() else { continue };
        if name == "fallback" {
            continue;
        }
        if !INTENTS.contains(&name) {
            let mut diagnostic = Diagnostic::new(
                FLOW_UnknownIntentKey,
                file,
                key.span,
                format!("`{name}` in the transitions of `{id}` is not an intent, so the router never looks it up"),
            );
            let alias = INTENT_ALIASES.iter().find(|(a, _)| a.eq_ignore_ascii_case(name)).map(|(_, i)| *i);
            diagnostic = match (alias, did_you_mean(name, INTENTS)) {
                (Some(intent), _) => diagnostic.with_help(format!(
                    "`{name}` is an alias the gate maps the LLM's answer to `{intent}` with; transitions keys use the intent name `{intent}`"
                )),
                (None, Some(s)) => diagnostic.with_help(format!("did you mean `{s}`?")),
                (None, None) => diagnostic.with_help("transitions keys are intents: next, repeat, jump, handoff, escalate, closing"),
            };
            out.push(diagnostic);
            continue;
        }
        let Some(kind) = kind else { continue };
        let allowed = allowed_intents_for(kind);
        if allowed.contains(&name) {
            continue;
        }
        let message = match name {
            "abort" => format!(
                "`abort` in the transitions of `{id}` is never used: the router stops the run on `abort` without reading a rule"
            ),
            "escalate" => {
                format!("`escalate` is only valid for verification steps, but `{id}` is a {} step", kind.as_str())
            }
            _ => format!(
                "transition `{name}` is not allowed for {} step `{id}` (allowed: {})",
                kind.as_str(),
                allowed.join(", ")
            ),
        };
        let help = if name == "abort" {
            "remove the rule; `abort` is also rejected in allowedIntents (SR-VALID-001)"
        } else {
            "the router rejects an intent the step kind does not allow (SR-INTENT-001); remove the rule or change the step's `stepKind`"
        };
        out.push(Diagnostic::new(FLOW_IntentNotAllowedForKind, file, key.span, message).with_help(help));
    }
    if kind == Some(StepKind::Work) && step.c2() == Some("initial") {
        let at = step
            .def
            .get("transitions")
            .and_then(|t| t.entry("handoff"))
            .map(|e| e.key.span)
            .or_else(|| step.allowed_intents().into_iter().find(|(i, _)| *i == "handoff").map(|(_, s)| s));
        if let Some(span) = at {
            out.push(
                Diagnostic::new(
                    FLOW_HandoffFromInitial,
                    file,
                    span,
                    format!(
                        "`{id}` is an initial step that hands off: the router allows it and only logs a warning (design §7.3), and `--validate` warns"
                    ),
                )
                .with_help(
                    "an initial step should go on with `next` to a continuation step, which hands off to closure",
                ),
            );
        }
    }
    let next_allowed = kind.is_none_or(|k| allowed_intents_for(k).contains(&"next"));
    if next_allowed
        && let Some(target) = step.transition("next").and_then(|r| r.get("target"))
        && target.as_str() == Some(id)
    {
        out.push(
            Diagnostic::new(
                FLOW_NextToSelf,
                file,
                target.span,
                format!("`next` of `{id}` targets `{id}` itself: the router runs the step again, as `repeat` would, and `--validate` warns"),
            )
                .with_help("use `repeat` to run a step again; `next` is meant to move on"),
        );
    }
}

/// The kinds a transition may lead to, by source kind and intent (climpt's BOUNDARY_RULES).
fn boundary(source: StepKind, intent: &str) -> Option<&'static [StepKind]> {
    use StepKind::{Closure, Verification, Work};
    match (source, intent) {
        (Work, "next" | "jump") => Some(&[Work, Verification]),
        (Work, "handoff") => Some(&[Closure]),
        (Verification, "escalate") => Some(&[Work, Verification]),
        (Closure, "repeat") => Some(&[Work]),
        _ => None,
    }
}

fn kinds(list: &[StepKind]) -> String {
    list.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(" or ")
}

/// FLOW-KindBoundary: where each kind may route with each intent.
fn check_boundaries(agent: &Agent, index: &StepIndex, step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(source) = step.kind() else { return };
    for (key, rule) in step.transitions() {
        let Some(intent) = key.as_str() else { continue };
        let Some(expected) = boundary(source, intent) else { continue };
        for target in rule_targets(rule) {
            let Some(name) = target.step else { continue };
            if name == step.id {
                continue;
            }
            let Some(target_kind) = index.get(name).and_then(|t| t.kind()) else { continue };
            if expected.contains(&target_kind) {
                continue;
            }
            out.push(
                Diagnostic::new(
                    FLOW_KindBoundary,
                    agent.registry.id(),
                    target.node.span,
                    format!(
                        "`{intent}` of {} step `{}` targets `{name}`, a {} step: the router does not check the target's kind and routes there, but `--validate` rejects it (`{intent}` from a {} step must lead to a {} step)",
                        source.as_str(),
                        step.id,
                        target_kind.as_str(),
                        source.as_str(),
                        kinds(expected)
                    ),
                )
                .with_help(match (source, intent) {
                    (StepKind::Work, "handoff") => "handoff ends the work phase: point it at a closure step, and move between work steps with `next`",
                    (StepKind::Work, _) => "a work step reaches closure only through `handoff`",
                    (StepKind::Closure, _) => "a closure step retries itself, or goes back to a work step",
                    _ => "escalate routes to a support step (work or verification)",
                }),
            );
        }
    }
}

/// The step graph: transition targets, the default transition and `repeat` loops.
pub(super) struct Graph<'s, 'a> {
    steps: &'s [Step<'a>],
    edges: Vec<Vec<usize>>,
    /// A step that loops to itself by something other than `repeat`.
    self_loop: Vec<bool>,
    closure: Vec<bool>,
    /// (value node, what it is, step index) for entryStep and every entryStepMapping value.
    entries: Vec<(&'a Node, String, usize)>,
    /// A step with a transition target that names no step and resembles none: where it leads
    /// cannot be told, so it counts as able to reach anything.
    open: Vec<bool>,
    /// An entry names no step and resembles none: which steps a run starts from cannot be told.
    entry_unknown: bool,
}

impl<'s, 'a> Graph<'s, 'a> {
    pub(super) fn new(agent: &Agent<'a, '_>, index: &'s StepIndex<'a>) -> Graph<'s, 'a> {
        let steps = &index.steps[..];
        let mut edges = vec![Vec::new(); steps.len()];
        let mut self_loop = vec![false; steps.len()];
        let mut open = vec![false; steps.len()];
        for (i, step) in steps.iter().enumerate() {
            for (key, rule) in step.transitions() {
                for target in rule_targets(rule) {
                    let Some(name) = target.step else { continue };
                    let j = match index.resolve(name) {
                        Resolved::Step(j) => j,
                        Resolved::Elsewhere => continue,
                        Resolved::Unknown => {
                            open[i] = true;
                            continue;
                        }
                    };
                    edges[i].push(j);
                    if i == j && key.as_str() != Some("repeat") {
                        self_loop[i] = true;
                    }
                }
            }
            // The default transition, for a step that can route on `next` (or a `jump` without
            // a target) but has no usable `next` rule.
            let takes_next = match step.gate() {
                None => step.def.get("structuredGate").is_none(),
                Some(_) => step.allows("next") || step.allows("jump"),
            };
            if takes_next
                && !is_closure(step)
                && !has_next_rule(step)
                && let Some(j) = index.default_continuation(step).as_deref().and_then(|c| index.position(c))
            {
                edges[i].push(j);
            }
        }
        let closure = steps.iter().map(is_closure).collect();
        let mut entries = Vec::new();
        let mut entry_unknown = false;
        let root = agent.registry.root();
        let mut add = |node: &'a Node, label: String| {
            let Some(name) = node.as_str() else { return };
            match index.resolve(name) {
                Resolved::Step(i) => entries.push((node, label, i)),
                Resolved::Elsewhere => {}
                Resolved::Unknown => entry_unknown = true,
            }
        };
        if let Some(node) = agent.registry.get("entryStep") {
            add(node, "entryStep".to_string());
        }
        for entry in root.and_then(|r| r.get("entryStepMapping")).and_then(Node::as_map).unwrap_or_default() {
            let key = entry.key_str().unwrap_or("");
            match entry.value.as_map() {
                // climpt's newer `{ initial, continuation }` form.
                Some(pair) => {
                    for side in pair {
                        add(&side.value, format!("entryStepMapping.{key}.{}", side.key_str().unwrap_or("")));
                    }
                }
                None => add(&entry.value, format!("entryStepMapping.{key}")),
            }
        }
        Graph { steps, edges, self_loop, closure, entries, open, entry_unknown }
    }

    /// The steps a run can start from: `entryStep`, and the `entryStepMapping` values whose key
    /// is one of `types` (a key no type equals is never used).
    pub(super) fn run_entries(&self, types: &[&str]) -> Vec<usize> {
        let usable = |label: &str| match label.strip_prefix("entryStepMapping.") {
            Some(rest) => types.iter().any(|t| rest == *t || rest.strip_prefix(t).is_some_and(|r| r.starts_with('.'))),
            None => true,
        };
        self.entries.iter().filter(|(_, label, _)| usable(label)).map(|(_, _, i)| *i).collect()
    }

    /// Steps reachable from `starts`.
    pub(super) fn reach(&self, starts: impl IntoIterator<Item = usize>) -> Vec<bool> {
        let mut seen = vec![false; self.steps.len()];
        let mut queue: VecDeque<usize> = starts.into_iter().collect();
        while let Some(i) = queue.pop_front() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            queue.extend(self.edges[i].iter().copied().filter(|j| !seen[*j]));
        }
        seen
    }

    /// Steps from which some closure step is reachable.
    fn can_close(&self) -> Vec<bool> {
        let n = self.steps.len();
        let mut reverse = vec![Vec::new(); n];
        for (i, targets) in self.edges.iter().enumerate() {
            for &j in targets {
                reverse[j].push(i);
            }
        }
        let mut can_close = vec![false; n];
        let mut queue: VecDeque<usize> = (0..n).filter(|i| self.closure[*i] || self.open[*i]).collect();
        while let Some(i) = queue.pop_front() {
            if std::mem::replace(&mut can_close[i], true) {
                continue;
            }
            queue.extend(reverse[i].iter().copied().filter(|j| !can_close[*j]));
        }
        can_close
    }
}

fn key_span(step: &Step) -> Span {
    step.key.span
}

/// FLOW-NoClosureStep, FLOW-EntryCannotClose, FLOW-OrphanStep.
fn check_reachability(agent: &Agent, graph: &Graph, out: &mut Vec<Diagnostic>) {
    let file = agent.registry.id();
    if !graph.closure.iter().any(|c| *c) {
        let span = agent.registry.root().and_then(|r| r.entry("steps")).map_or(agent.registry.anchor(), |e| e.key.span);
        out.push(
            Diagnostic::new(
                FLOW_NoClosureStep,
                file,
                span,
                "the registry has no closure step (`stepKind: closure` or c2 `closure`), so no run can ever complete",
            )
            .with_help(
                "add a closure step whose `closing` transition targets `null`, and hand off to it from the work steps",
            ),
        );
    } else {
        let can_close = graph.can_close();
        for (node, label, start) in &graph.entries {
            if !can_close[*start] {
                out.push(
                    Diagnostic::new(
                        FLOW_EntryCannotClose,
                        file,
                        node.span,
                        format!(
                            "entry `{label}` (`{}`) cannot reach any closure step; a run started there never completes",
                            graph.steps[*start].id
                        ),
                    )
                    .with_help(
                        "route the steps reachable from this entry to a closure step (a work step hands off to it)",
                    ),
                );
            }
        }
    }
    if graph.entries.is_empty() || graph.entry_unknown {
        return;
    }
    let reached = graph.reach(graph.entries.iter().map(|(_, _, i)| *i));
    // A reached step whose target names nothing may lead anywhere: every orphan is in doubt.
    if (0..graph.steps.len()).any(|i| reached[i] && graph.open[i]) {
        return;
    }
    for (i, step) in graph.steps.iter().enumerate() {
        if reached[i] || step.is_section() {
            continue;
        }
        let gated = step.gate().is_some();
        let mut diagnostic = Diagnostic::new(
            FLOW_OrphanStep,
            file,
            key_span(step),
            format!(
                "no entry reaches `{}` through transitions, so climpt never runs it (dead code; `--validate` reports it as {})",
                step.id,
                if gated { "an error, since the step has a structuredGate" } else { "a warning" }
            ),
        )
        .with_help("route to it from another step's transitions or from entryStepMapping, or remove it");
        // `--validate` grades a gated orphan an error (`flow-validator.ts`).
        if gated && agent.validate_parity() {
            diagnostic = diagnostic.with_severity(Severity::Error);
        }
        out.push(diagnostic);
    }
}

/// Strongly connected components (iterative Tarjan), each in discovery order.
fn components(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const NONE: usize = usize::MAX;
    let n = edges.len();
    let (mut index, mut low, mut on_stack) = (vec![NONE; n], vec![0; n], vec![false; n]);
    let (mut stack, mut found, mut next) = (Vec::new(), Vec::new(), 0);
    for root in 0..n {
        if index[root] != NONE {
            continue;
        }
        let mut calls: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&(v, i)) = calls.last() {
            if let Some(&w) = edges[v].get(i) {
                calls.last_mut().expect("non-empty").1 += 1;
                if index[w] == NONE {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(u, _)) = calls.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                component.sort_unstable();
                found.push(component);
            }
        }
    }
    found
}

/// FLOW-NoPathToClosure: a cycle of steps none of which can reach a closure step.
fn check_cycles(agent: &Agent, graph: &Graph, out: &mut Vec<Diagnostic>) {
    let can_close = graph.can_close();
    let file = agent.registry.id();
    for component in components(&graph.edges) {
        let first = component[0];
        if component.len() == 1 && !graph.self_loop[first] {
            continue;
        }
        if can_close[first] {
            continue;
        }
        let names: Vec<String> = component.iter().map(|i| format!("`{}`", graph.steps[*i].id)).collect();
        let message = if component.len() == 1 {
            format!(
                "`{}` loops to itself and never reaches a closure step; a run that gets here never completes",
                graph.steps[first].id
            )
        } else {
            format!(
                "steps {} form a cycle with no path to a closure step; a run that gets here never completes",
                names.join(", ")
            )
        };
        let mut diagnostic = Diagnostic::new(FLOW_NoPathToClosure, file, key_span(&graph.steps[first]), message)
            .with_help("give one step of the cycle a transition that leads on to a closure step");
        for &i in &component[1..] {
            diagnostic = diagnostic.with_related(file, key_span(&graph.steps[i]), "also in the cycle");
        }
        out.push(diagnostic);
    }
}
