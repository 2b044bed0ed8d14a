//! Phase names and the `depends_on` graph: duplicates, output_var collisions, unknown, self
//! and cyclic dependencies, and which phases surely ran before which.

use crate::diagnostic::Diagnostic;
use crate::families::lastlight::model::Phase;
use crate::families::lastlight::rules::Ctx;
use crate::families::lastlight::{DependsOnCycle, DependsOnSelf, DependsOnUnknown, DuplicatePhase, OutputVarCollision};
use crate::source::Node;
use crate::util::{FastMap, FastSet, did_you_mean};

pub(super) fn check(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    duplicates(ctx, out);
    collisions(ctx, out);
    dependencies(ctx, out);
}

fn duplicates(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let id = ctx.file().id;
    let mut first: FastMap<&str, &Node> = FastMap::default();
    for phase in &ctx.phases {
        let Some(node) = phase.name_node() else { continue };
        let name = node.as_str().unwrap_or_default();
        match first.get(name) {
            Some(earlier) => out.push(
                Diagnostic::new(
                    DuplicatePhase,
                    id,
                    node.span,
                    format!("phase `{name}` is defined twice; outputs, `depends_on` and resume keys (`workflow:phase`) mix them up"),
                )
                .with_related(id, earlier.span, "first defined here")
                .with_help("give each phase its own name"),
            ),
            None => {
                first.insert(name, node);
            }
        }
    }
}

fn collisions(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let id = ctx.file().id;
    let mut seen: FastMap<&str, (&Node, &str)> = FastMap::default();
    for phase in &ctx.phases {
        if let Some(node) = phase.name_node() {
            seen.entry(node.as_str().unwrap_or_default()).or_insert((node, "a phase name"));
        }
    }
    for phase in &ctx.phases {
        let Some(node) = phase.output_var() else { continue };
        let name = node.as_str().unwrap_or_default();
        let own_name = phase.name() == Some(name);
        match seen.get(name) {
            Some((other, what)) if !own_name => out.push(
                Diagnostic::new(
                    OutputVarCollision,
                    id,
                    node.span,
                    format!(
                        "output_var `{name}` is also {what}; both write `phaseOutputs.{name}` and the last writer wins"
                    ),
                )
                .with_related(id, other.span, format!("`{name}` is {what} here"))
                .with_help("pick an output_var no other phase uses"),
            ),
            Some(_) => {}
            None => {
                seen.insert(name, (node, "another phase's output_var"));
            }
        }
    }
}

fn dependencies(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let id = ctx.file().id;
    let names: Vec<&str> = ctx.phases.iter().filter_map(Phase::name).collect();
    for phase in &ctx.phases {
        let own = phase.name();
        for dep in phase.depends_on() {
            let dep_name = dep.as_str().unwrap_or_default();
            if Some(dep_name) == own {
                out.push(
                    Diagnostic::new(DependsOnSelf, id, dep.span, format!("Phase \"{dep_name}\" depends on itself"))
                        .with_help("remove it from its own `depends_on`"),
                );
            } else if !names.contains(&dep_name) {
                // `depends_on` names phases by `name`, not by their dashboard `label`.
                let by_label = ctx
                    .phases
                    .iter()
                    .find(|p| p.get("label").and_then(Node::as_str) == Some(dep_name))
                    .and_then(Phase::name);
                // The fix writes the name unquoted, so only a name that needs no quotes.
                let plain = |n: &&str| {
                    n.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                        && n.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ' '))
                        && !n.ends_with(' ')
                };
                let suggestion = by_label
                    .filter(plain)
                    .or_else(|| by_label.is_none().then(|| did_you_mean(dep_name, names.iter().copied())).flatten());
                let hint = match (by_label, suggestion) {
                    (Some(name), _) => {
                        format!("; `{dep_name}` is the `label` of phase `{name}`, and `depends_on` takes names")
                    }
                    (None, Some(s)) => format!("; did you mean `{s}`?"),
                    (None, None) => String::new(),
                };
                out.push(
                    Diagnostic::new(
                        DependsOnUnknown,
                        id,
                        dep.span,
                        format!("Phase \"{}\" depends on unknown phase \"{dep_name}\"{hint}", own.unwrap_or("?")),
                    )
                    .with_suggestion(dep.span, suggestion),
                );
            }
        }
    }
    for cycle in cycles(&ctx.phases) {
        let (Some(first), Some(last)) = (cycle.first(), cycle.last()) else { continue };
        let phase_of = |i: usize| ctx.phases.iter().find(|p| p.index == i);
        let name_of = |i: usize| phase_of(i).and_then(Phase::name).unwrap_or("?");
        let mut path: Vec<&str> = cycle.iter().map(|i| name_of(*i)).collect();
        path.push(name_of(*first));
        // Point at the edge that closes the cycle: `last` depends on `first`.
        let edge = phase_of(*last)
            .and_then(|p| p.depends_on().into_iter().find(|d| d.as_str() == Some(name_of(*first))))
            .map(|n| n.span);
        let Some(span) = edge else { continue };
        let mut d = Diagnostic::new(
            DependsOnCycle,
            id,
            span,
            format!("Cycle detected: {}; none of these phases can ever start", path.join(" -> ")),
        )
        .with_help("remove one of the `depends_on` edges in the cycle");
        for index in &cycle {
            if let Some(node) = phase_of(*index).and_then(Phase::name_node) {
                d = d.with_related(id, node.span, format!("`{}` is in the cycle", name_of(*index)));
            }
        }
        out.push(d);
    }
}

/// Each dependency cycle once (as phase indexes, in dependency order), via strongly connected
/// components.
fn cycles(phases: &[Phase]) -> Vec<Vec<usize>> {
    let index_of = first_index(phases);
    let deps: FastMap<usize, Vec<usize>> = phases
        .iter()
        .map(|p| (p.index, p.depends_on().iter().filter_map(|d| index_of.get(d.as_str()?).copied()).collect()))
        .collect();
    let mut out = Vec::new();
    let mut done: FastSet<usize> = FastSet::default();
    for phase in phases {
        if done.contains(&phase.index) {
            continue;
        }
        // Walk dependencies depth-first; a phase met again on the current path closes a cycle.
        let mut path: Vec<usize> = Vec::new();
        let mut on_path: FastSet<usize> = FastSet::default();
        let mut stack: Vec<(usize, usize)> = vec![(phase.index, 0)];
        while let Some((node, next)) = stack.pop() {
            if next == 0 {
                path.push(node);
                on_path.insert(node);
            }
            let edges = deps.get(&node).map(Vec::as_slice).unwrap_or_default();
            if let Some(&dep) = edges.get(next) {
                stack.push((node, next + 1));
                if dep == node {
                    // A self-dependency is DependsOnSelf.
                } else if on_path.contains(&dep) {
                    let start = path.iter().position(|n| *n == dep).unwrap_or(0);
                    let cycle: Vec<usize> = path[start..].to_vec();
                    if !out.iter().any(|c: &Vec<usize>| same_cycle(c, &cycle)) {
                        out.push(cycle);
                    }
                } else if !done.contains(&dep) {
                    stack.push((dep, 0));
                }
            } else {
                path.pop();
                on_path.remove(&node);
                done.insert(node);
            }
        }
    }
    out
}

/// Phase name → index of the first phase with that name (duplicates are reported elsewhere).
fn first_index<'a>(phases: &[Phase<'a>]) -> FastMap<&'a str, usize> {
    let mut out = FastMap::default();
    for phase in phases {
        if let Some(name) = phase.name() {
            out.entry(name).or_insert(phase.index);
        }
    }
    out
}

fn same_cycle(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().all(|x| b.contains(x))
}

/// For each phase index, the phases that surely completed before it starts: the earlier
/// phases in linear mode, the `depends_on` ancestors in DAG mode.
pub(super) fn runs_before(phases: &[Phase], dag: bool) -> Vec<FastSet<usize>> {
    let len = phases.iter().map(|p| p.index + 1).max().unwrap_or(0);
    let mut out = vec![FastSet::default(); len];
    if !dag {
        for phase in phases {
            out[phase.index] = phases.iter().filter(|p| p.index < phase.index).map(|p| p.index).collect();
        }
        return out;
    }
    let index_of = first_index(phases);
    for phase in phases {
        let mut seen = FastSet::default();
        let mut stack = vec![phase.index];
        while let Some(current) = stack.pop() {
            let Some(p) = phases.iter().find(|p| p.index == current) else { continue };
            for dep in p.depends_on() {
                if let Some(&d) = dep.as_str().and_then(|n| index_of.get(n))
                    && d != phase.index
                    && seen.insert(d)
                {
                    stack.push(d);
                }
            }
        }
        out[phase.index] = seen;
    }
    out
}
