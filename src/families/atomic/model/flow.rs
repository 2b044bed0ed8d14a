//! The stage graph of a workflow's `.run(...)` callback: each `ctx.stage(...)` / `s.stage(...)`
//! call with its name, where it sits (exclusive arms, loops, `Promise.all` elements, enclosing
//! stage callbacks), whether its promise is kept, and what its callback does with `s`; and each
//! `transcript(ref)` / `getMessages(ref)` read with its target. Positions are byte offsets, so
//! "later" means later in the text; code whose run time the walk cannot place is marked
//! `deferred` and the rules leave ordering questions about it alone.

use std::collections::{HashMap, HashSet};

use oxc_ast::AstKind;
use oxc_ast::ast::{
    Argument, ArrayExpressionElement, BindingPatternKind, CallExpression, ConditionalExpression, Expression,
    ExpressionStatement, FormalParameters, IfStatement, ObjectPropertyKind, PropertyKey, Statement, SwitchStatement,
    TemplateLiteral, UnaryOperator, VariableDeclarationKind, VariableDeclarator,
};
use oxc_ast_visit::{Visit, walk};
use oxc_span::GetSpan;

use crate::source::Span;

/// What the walk found; empty when the file has no `.run(...)` callback literal.
#[derive(Debug, Default)]
pub struct Flow {
    /// A context (`ctx` or a stage's `s`) is destructured or handed to code the walk does not
    /// follow: stages may exist that `stages` lacks.
    pub open: bool,
    pub stages: Vec<Stage>,
    pub reads: Vec<Read>,
    /// The arms of `if`/`switch`/`?:` the walk entered, as a tree: each call keeps the node it
    /// sits in (a path kept per call would grow with the square of an `else if` ladder).
    pub arms: Arms,
}

/// A tree of arms: node `i` is `(construct, arm, parent, depth)`; node 0 is the root (no arm).
#[derive(Debug, Clone)]
pub struct Arms(Vec<(u32, u32, u32, u32)>);

impl Default for Arms {
    fn default() -> Arms {
        Arms(vec![(u32::MAX, 0, 0, 0)])
    }
}

impl Arms {
    /// A node for `(construct, arm)` under `parent`.
    pub(super) fn push(&mut self, parent: u32, construct: u32, arm: u32) -> u32 {
        let depth = self.0[parent as usize].3 + 1;
        self.0.push((construct, arm, parent, depth));
        u32::try_from(self.0.len() - 1).unwrap_or(0)
    }

    pub(super) fn parent(&self, node: u32) -> u32 {
        self.0[node as usize].2
    }

    /// Whether calls in nodes `a` and `b` are in different arms of one construct, so at most
    /// one of them runs; the steps it took are added to `steps`.
    pub fn exclusive(&self, mut a: u32, mut b: u32, steps: &mut usize) -> bool {
        let depth = |n: u32| self.0[n as usize].3;
        // Walk the deeper up to the other's depth, then both up to the nodes just below their
        // common ancestor: they split there.
        while depth(a) > depth(b) {
            a = self.parent(a);
            *steps += 1;
        }
        while depth(b) > depth(a) {
            b = self.parent(b);
            *steps += 1;
        }
        if a == b {
            return false;
        }
        while self.parent(a) != self.parent(b) {
            a = self.parent(a);
            b = self.parent(b);
            *steps += 1;
        }
        let (x, y) = (self.0[a as usize], self.0[b as usize]);
        x.0 == y.0 && x.1 != y.1
    }

    /// The path from the root to `node`, as (construct, arm) pairs.
    #[cfg(test)]
    pub fn path(&self, mut node: u32) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        while node != 0 {
            let (construct, arm, parent, _) = self.0[node as usize];
            out.push((construct, arm));
            node = parent;
        }
        out.reverse();
        out
    }
}

/// A stage name, or a read's string reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Name {
    /// A string literal, a template without substitutions, or a `const` bound to one.
    Static(String),
    /// A template with substitutions: its literal parts, around the holes.
    Pattern(Vec<String>),
    Unknown,
}

impl Name {
    /// Whether the two can be the same string at run time (a pattern's holes match anything).
    pub fn may_equal(&self, other: &Name) -> bool {
        match (self, other) {
            (Name::Static(a), Name::Static(b)) => a == b,
            (Name::Static(s), Name::Pattern(p)) | (Name::Pattern(p), Name::Static(s)) => glob(p, s),
            (Name::Pattern(a), Name::Pattern(b)) => {
                let (a0, b0) = (first(a), first(b));
                let (a1, b1) = (last(a), last(b));
                (a0.starts_with(b0) || b0.starts_with(a0)) && (a1.ends_with(b1) || b1.ends_with(a1))
            }
            _ => true,
        }
    }
}

fn first(parts: &[String]) -> &str {
    parts.first().map_or("", String::as_str)
}

fn last(parts: &[String]) -> &str {
    parts.last().map_or("", String::as_str)
}

/// Whether `text` is the literal `parts` with anything in the holes between them.
fn glob(parts: &[String], text: &str) -> bool {
    let Some((head, rest)) = parts.split_first() else { return true };
    let Some(mut tail) = text.strip_prefix(head.as_str()) else { return false };
    let Some((end, middle)) = rest.split_last() else { return tail.is_empty() };
    for part in middle {
        match tail.find(part.as_str()) {
            Some(at) => tail = &tail[at + part.len()..],
            None => return false,
        }
    }
    tail.len() >= end.len() && tail.ends_with(end.as_str())
}

/// One `ctx.stage(...)` or `s.stage(...)` call.
#[derive(Debug)]
pub struct Stage {
    /// The whole call.
    pub call: Span,
    /// `ctx.stage`.
    pub callee: Span,
    pub name: Name,
    /// The name's value, else the options argument, else the callee.
    pub name_span: Span,
    /// The node of [`Flow::arms`] it is in. Two calls in different arms of one construct are
    /// exclusive.
    pub arms: u32,
    /// The innermost loop (or array-method callback) it repeats in, as the loop's keyword.
    pub repeats: Option<Span>,
    /// Inside a function the walk cannot place in time (a helper, a handler).
    pub deferred: bool,
    /// The `Promise.all([...])` elements it is in: (call, element).
    pub groups: Vec<(u32, u32)>,
    pub settled: Settled,
    /// Its callback, when it is a function literal.
    pub callback: Option<Callback>,
    /// Whether `await` may be written before the call: its function is async and not an
    /// array-method callback (whose promise nobody waits for).
    pub can_await: bool,
    /// The array method whose async callback holds the call and whose promises nobody waits
    /// for (`forEach`, or a `map` whose result is dropped): the stage is unawaited however
    /// the callback treats it.
    pub forgotten: Option<Span>,
    /// Bound to a name without `await` (`const late = ctx.stage(…)`): the binding, and where
    /// the name is first used in a way that may await it or pass it on.
    pub pending_until: Option<(Span, usize)>,
    /// Started through a helper function handed a context (`await lint(ctx)`): the stage's
    /// name inside the helper. `call` and `name_span` are then the helper call.
    pub via: Option<Span>,
}

/// What becomes of a stage's promise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// Awaited, returned, passed on, or bound to a name that is.
    Kept,
    /// An expression statement (also `void …` or `….then(…)`), or an element of an unawaited
    /// `Promise.all([...])` statement. `at` is where `await` would go; `void` is the operator.
    Dropped { statement: Span, at: usize, void: Option<Span> },
    /// Bound to a name that nothing awaits or passes on.
    Unused { binding: Span, at: usize },
}

/// A stage's callback: whether it saves the transcript.
#[derive(Debug, Clone)]
pub struct Callback {
    /// The function's parameters (or its start when it has none).
    pub params: Span,
    /// Mentions `s.save`.
    pub saves: bool,
    /// Destructures `s` or hands it to other code, which may save.
    pub hands_away: bool,
}

/// One `ctx.transcript(ref)`, `ctx.getMessages(ref)` (or on `s`).
#[derive(Debug)]
pub struct Read {
    pub call: Span,
    /// `transcript` or `getMessages`.
    pub method: &'static str,
    /// The reference argument (the callee when there is none).
    pub arg: Span,
    /// The argument is a plain string literal (its quotes are its first and last bytes).
    pub literal: bool,
    pub target: Target,
    pub arms: u32,
    pub repeats: Option<Span>,
    pub deferred: bool,
    /// The stages whose callbacks enclose the read, outermost first.
    pub within: Vec<usize>,
    pub groups: Vec<(u32, u32)>,
}

/// What a read refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A string (static or a template pattern).
    Name(Name),
    /// A name bound to a stage's result; `pending` when it holds the unawaited promise.
    Handle {
        stage: usize,
        pending: bool,
        binding: Span,
    },
    Unknown,
}

/// Walks `program` and returns the flow of its `.run(...)` callback.
pub fn read(program: &oxc_ast::ast::Program) -> Flow {
    let mut runs = RunFinder::default();
    runs.visit_program(program);
    let run_fn = runs.chained.clone().or(runs.named.clone()).and_then(|f| runs.start(f));
    // A helper is a function known by one name; the run callback is none.
    let helpers = runs
        .helpers
        .iter()
        .filter(|(name, (start, _))| runs.functions.get(*name).is_some_and(|s| s.len() == 1) && Some(*start) != run_fn)
        .map(|(name, (_, stages))| (name.clone(), stages.clone()))
        .collect();
    let mut walker = Walker { run_fn, helpers, ..Walker::default() };
    walker.visit_program(program);
    walker.finish()
}

/// Finds the `.run(fn)` callback: on a `defineWorkflow(...)` chain, else on a name.
#[derive(Default)]
struct RunFinder {
    chained: Option<RunArg>,
    named: Option<RunArg>,
    /// Functions by the name they are declared or bound to (`const main = async (ctx) => …`).
    functions: HashMap<String, Vec<u32>>,
    /// The stages with static names a function starts on its first parameter
    /// (`function lint(ctx) { return ctx.stage({ name: "lint" }, …) }`), by its name and start.
    helpers: HashMap<String, (u32, Vec<(String, Span)>)>,
}

/// The argument of `.run(…)`: a function literal, or the name of one.
#[derive(Clone)]
enum RunArg {
    At(u32),
    Name(String),
}

impl RunFinder {
    fn add_function(&mut self, name: &str, start: u32) {
        let starts = self.functions.entry(name.to_string()).or_default();
        if !starts.contains(&start) {
            starts.push(start);
        }
    }

    fn start(&self, arg: RunArg) -> Option<u32> {
        match arg {
            RunArg::At(start) => Some(start),
            RunArg::Name(name) => match self.functions.get(&name).map(Vec::as_slice) {
                Some([start]) => Some(*start),
                _ => None,
            },
        }
    }
}

impl<'a> Visit<'a> for RunFinder {
    fn visit_call_expression(&mut self, call: &CallExpression<'a>) {
        if let Some(chained) = is_run(call) {
            let arg =
                call.arguments.first().and_then(Argument::as_expression).and_then(|e| match e.get_inner_expression() {
                    Expression::Identifier(id) => Some(RunArg::Name(id.name.to_string())),
                    e => function_start(e).map(RunArg::At),
                });
            let slot = if chained { &mut self.chained } else { &mut self.named };
            if slot.is_none() {
                *slot = arg;
            }
        }
        walk::walk_call_expression(self, call);
    }

    fn visit_variable_declarator(&mut self, it: &VariableDeclarator<'a>) {
        if let (Some(name), Some(start)) = (it.id.get_identifier_name(), it.init.as_ref().and_then(function_start)) {
            self.add_function(name.as_str(), start);
            match it.init.as_ref().map(Expression::get_inner_expression) {
                Some(Expression::ArrowFunctionExpression(f)) => {
                    self.add_helper(name.as_str(), start, &f.params, |v| v.visit_function_body(&f.body));
                }
                Some(Expression::FunctionExpression(f)) => {
                    if let Some(body) = &f.body {
                        self.add_helper(name.as_str(), start, &f.params, |v| v.visit_function_body(body));
                    }
                }
                _ => {}
            }
        }
        walk::walk_variable_declarator(self, it);
    }

    fn enter_node(&mut self, kind: AstKind<'a>) {
        if let AstKind::Function(f) = kind
            && let Some(id) = &f.id
        {
            self.add_function(id.name.as_str(), f.span.start);
            if let Some(body) = &f.body {
                self.add_helper(id.name.as_str(), f.span.start, &f.params, |v| v.visit_function_body(body));
            }
        }
    }
}

impl RunFinder {
    fn add_helper(&mut self, name: &str, start: u32, params: &FormalParameters, walk: impl FnOnce(&mut HelperStages)) {
        let Some(param) = params.items.first().and_then(|p| p.pattern.get_identifier_name()) else { return };
        let mut finder = HelperStages { param: param.to_string(), found: Vec::new() };
        walk(&mut finder);
        if !finder.found.is_empty() {
            self.helpers.insert(name.to_string(), (start, finder.found));
        }
    }
}

/// The `param.stage({ name: "…" }, …)` calls with static names in a function body.
struct HelperStages {
    param: String,
    found: Vec<(String, Span)>,
}

impl<'a> Visit<'a> for HelperStages {
    fn visit_call_expression(&mut self, call: &CallExpression<'a>) {
        if let Expression::StaticMemberExpression(m) = call.callee.get_inner_expression()
            && m.property.name == "stage"
            && let Expression::Identifier(receiver) = m.object.get_inner_expression()
            && receiver.name == self.param
            && let (NameExpr::Known(Name::Static(name)), at) = stage_name(call)
        {
            self.found.push((name, at));
        }
        walk::walk_call_expression(self, call);
    }
}

fn span(s: oxc_span::Span) -> Span {
    Span::new(s.start as usize, s.end as usize)
}

fn key(s: oxc_span::Span) -> (u32, u32) {
    (s.start, s.end)
}

/// What an identifier in the run callback stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Run,
    Stage(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The `.run(...)` callback.
    Run,
    /// A stage callback.
    Stage(usize),
    /// Called where it stands: an IIFE.
    Immediate,
    /// An array method's callback: called where it stands, once per element.
    Repeating,
    /// Anything else: called who knows when.
    Deferred,
}

#[derive(Debug)]
struct Frame {
    kind: Kind,
    is_async: bool,
    /// An async array callback whose promises nobody awaits: the method's name.
    forgotten: Option<Span>,
    contexts: usize,
    within: bool,
    repeats: bool,
}

/// How the parent holds a call, noted before the call is visited.
#[derive(Debug, Clone)]
enum Mark {
    Dropped { statement: Span, at: usize, void: Option<Span> },
    Bound { name: String, binding: Span, at: usize },
}

/// A name the post-pass resolves.
#[derive(Debug)]
enum Pending {
    StageName(usize, String),
    ReadTarget(usize, String),
    /// (name, call key, pending, is const, binding)
    Handle(String, (u32, u32), bool, bool, Span),
}

pub(super) const ARRAY_METHODS: &[&str] =
    &["map", "forEach", "flatMap", "filter", "some", "every", "find", "findIndex", "reduce"];
const ALL: &[&str] = &["Promise.all", "Promise.allSettled", "Promise.race", "Promise.any"];

#[derive(Default)]
struct Walker {
    flow: Flow,
    contexts: Vec<(String, Ctx)>,
    frames: Vec<Frame>,
    /// The node of `flow.arms` the walk is in.
    arm: u32,
    repeats: Vec<Option<Span>>,
    groups: Vec<(u32, u32)>,
    within: Vec<usize>,
    run_fn: Option<u32>,
    /// The stages helper functions start, by the helper's name (see `RunFinder::helpers`).
    helpers: HashMap<String, Vec<(String, Span)>>,
    callbacks: HashMap<u32, usize>,
    /// Array-method callbacks: the method's name, and whether it is `forEach`.
    array_callbacks: HashMap<u32, (Span, bool)>,
    /// Array callbacks whose results a statement drops (`items.map(…);`).
    dropped_callbacks: HashSet<u32>,
    iife: HashSet<u32>,
    marks: HashMap<(u32, u32), Mark>,
    stage_at: HashMap<(u32, u32), usize>,
    /// Identifiers that are the object of a static member, with the property.
    member_of: HashMap<u32, String>,
    /// Context identifiers that are the receiver of a recorded stage or read.
    receivers: HashSet<u32>,
    /// The statements that are an arrow function's expression body: returned, not dropped.
    arrow_bodies: HashSet<(u32, u32)>,
    declared: HashMap<String, u32>,
    consts: HashMap<String, String>,
    /// The first reference to each name that may await or pass it on (anything but a member
    /// read such as `.result`).
    first_kept: HashMap<String, u32>,
    bound: Vec<(usize, String, Span, usize)>,
    pending: Vec<Pending>,
}

impl Walker {
    fn context(&self, name: &str) -> Option<Ctx> {
        self.contexts.iter().rev().find(|(n, _)| n == name).map(|(_, c)| *c)
    }

    fn deferred(&self) -> bool {
        self.frames.iter().rev().take_while(|f| f.kind != Kind::Run).any(|f| f.kind == Kind::Deferred)
    }

    fn can_await(&self) -> bool {
        self.frames.last().is_some_and(|f| f.is_async && f.kind != Kind::Repeating)
    }

    /// The forgotten array callback between the call and its stage or run callback.
    fn forgotten(&self) -> Option<Span> {
        self.frames.iter().rev().take_while(|f| !matches!(f.kind, Kind::Run | Kind::Stage(_))).find_map(|f| f.forgotten)
    }

    fn repeats(&self) -> Option<Span> {
        self.repeats.last().copied().flatten()
    }

    fn enter_function(&mut self, start: u32, params: &FormalParameters, is_async: bool) {
        let kind = if self.run_fn == Some(start) {
            Kind::Run
        } else if let Some(&i) = self.callbacks.get(&start) {
            Kind::Stage(i)
        } else if self.array_callbacks.contains_key(&start) {
            Kind::Repeating
        } else if self.iife.contains(&start) {
            Kind::Immediate
        } else {
            Kind::Deferred
        };
        let param = params.items.first().map(|p| p.pattern.get_identifier_name().map(|n| n.to_string()));
        let destructured = matches!(param, Some(None)) || params.rest.is_some() && param.is_none();
        let mut frame = Frame { kind, is_async, forgotten: None, contexts: 0, within: false, repeats: false };
        match kind {
            Kind::Run => {
                if let Some(Some(name)) = param {
                    self.contexts.push((name, Ctx::Run));
                    frame.contexts = 1;
                }
                self.flow.open |= destructured;
            }
            Kind::Stage(i) => {
                let at =
                    if params.items.is_empty() { Span::empty(params.span.start as usize) } else { span(params.span) };
                self.flow.stages[i].callback = Some(Callback { params: at, saves: false, hands_away: destructured });
                if let Some(Some(name)) = param {
                    self.contexts.push((name, Ctx::Stage(i)));
                    frame.contexts = 1;
                }
                self.flow.open |= destructured;
                self.within.push(i);
                frame.within = true;
            }
            Kind::Repeating => {
                let (at, for_each) = self.array_callbacks[&start];
                self.repeats.push(Some(at));
                frame.repeats = true;
                let unwaited = for_each || self.dropped_callbacks.contains(&start);
                if is_async && unwaited {
                    frame.forgotten = Some(at);
                }
            }
            _ => {}
        }
        self.frames.push(frame);
    }

    fn leave_function(&mut self) {
        let Some(frame) = self.frames.pop() else { return };
        for _ in 0..frame.contexts {
            self.contexts.pop();
        }
        if frame.within {
            self.within.pop();
        }
        if frame.repeats {
            self.repeats.pop();
        }
    }

    fn record_stage(&mut self, call: &CallExpression) {
        let (name, name_span) = stage_name(call);
        let i = self.flow.stages.len();
        let settled = match self.marks.remove(&key(call.span)) {
            Some(Mark::Dropped { statement, at, void }) => Settled::Dropped { statement, at, void },
            Some(Mark::Bound { name, binding, at }) => {
                self.bound.push((i, name, binding, at));
                Settled::Kept
            }
            None => Settled::Kept,
        };
        let name = match name {
            NameExpr::Known(name) => name,
            NameExpr::Ident(id) => {
                self.pending.push(Pending::StageName(i, id));
                Name::Unknown
            }
        };
        self.flow.stages.push(Stage {
            call: span(call.span),
            callee: span(call.callee.span()),
            name,
            name_span,
            arms: self.arm,
            repeats: self.repeats(),
            deferred: self.deferred(),
            groups: self.groups.clone(),
            settled,
            callback: None,
            can_await: self.can_await(),
            forgotten: self.forgotten(),
            pending_until: None,
            via: None,
        });
        self.stage_at.insert(key(call.span), i);
        if let Some(callback) = call.arguments.get(3).and_then(Argument::as_expression) {
            match callback.get_inner_expression() {
                Expression::ArrowFunctionExpression(f) => {
                    self.callbacks.insert(f.span.start, i);
                }
                Expression::FunctionExpression(f) => {
                    self.callbacks.insert(f.span.start, i);
                }
                _ => {}
            }
        }
    }

    /// `lint(ctx)`: the helper's static stages start here, as one stage each.
    fn record_helper_call(&mut self, call: &CallExpression, helper: &str) {
        let Some(stages) = self.helpers.get(helper) else { return };
        let hands_context = call.arguments.iter().any(|a| {
            matches!(a.as_expression().map(Expression::get_inner_expression), Some(Expression::Identifier(id)) if self.context(&id.name).is_some())
        });
        if !hands_context {
            return;
        }
        for (name, at) in stages.clone() {
            self.flow.stages.push(Stage {
                call: span(call.span),
                callee: span(call.callee.span()),
                name: Name::Static(name),
                name_span: span(call.span),
                arms: self.arm,
                repeats: self.repeats(),
                deferred: self.deferred(),
                groups: self.groups.clone(),
                settled: Settled::Kept,
                callback: None,
                can_await: self.can_await(),
                forgotten: None,
                pending_until: None,
                via: Some(at),
            });
        }
    }

    fn record_read(&mut self, call: &CallExpression, method: &'static str) {
        let arg = call.arguments.first().and_then(Argument::as_expression).map(Expression::get_inner_expression);
        let i = self.flow.reads.len();
        let (target, literal) = match arg {
            Some(Expression::StringLiteral(s)) => (Target::Name(Name::Static(s.value.to_string())), true),
            Some(Expression::TemplateLiteral(t)) => (Target::Name(template(t)), false),
            Some(Expression::Identifier(id)) => {
                self.pending.push(Pending::ReadTarget(i, id.name.to_string()));
                (Target::Unknown, false)
            }
            Some(Expression::StaticMemberExpression(m)) => {
                if let Expression::Identifier(id) = m.object.get_inner_expression() {
                    self.pending.push(Pending::ReadTarget(i, format!("{}.{}", id.name, m.property.name)));
                }
                (Target::Unknown, false)
            }
            _ => (Target::Unknown, false),
        };
        self.flow.reads.push(Read {
            call: span(call.span),
            method,
            arg: arg.map_or(span(call.callee.span()), |a| span(a.span())),
            literal,
            target,
            arms: self.arm,
            repeats: self.repeats(),
            deferred: self.deferred(),
            within: self.within.clone(),
            groups: self.groups.clone(),
        });
    }

    fn finish(mut self) -> Flow {
        let declared = |name: &str| self.declared.get(name).copied().unwrap_or(0);
        let mut handles: HashMap<String, Target> = HashMap::new();
        for pending in &self.pending {
            if let Pending::Handle(name, call, promise, is_const, binding) = pending
                && let Some(&stage) = self.stage_at.get(call)
                && declared(name) == 1
                && (*is_const || !promise)
            {
                handles.insert(name.clone(), Target::Handle { stage, pending: *promise, binding: *binding });
            }
        }
        // `STAGES.scan` is as constant as `STAGES` is declared once.
        let constant = |name: &str| match self.consts.get(name) {
            Some(value) if declared(name.split('.').next().unwrap_or(name)) == 1 => Name::Static(value.clone()),
            _ => Name::Unknown,
        };
        for pending in &self.pending {
            match pending {
                Pending::StageName(i, name) => self.flow.stages[*i].name = constant(name),
                Pending::ReadTarget(i, name) => {
                    self.flow.reads[*i].target = match handles.get(name) {
                        Some(handle) => handle.clone(),
                        None => match constant(name) {
                            Name::Unknown => Target::Unknown,
                            name => Target::Name(name),
                        },
                    }
                }
                Pending::Handle(..) => {}
            }
        }
        for (i, name, binding, at) in &self.bound {
            if declared(name) != 1 {
                continue;
            }
            match self.first_kept.get(name) {
                Some(&first) => self.flow.stages[*i].pending_until = Some((*binding, first as usize)),
                None => self.flow.stages[*i].settled = Settled::Unused { binding: *binding, at: *at },
            }
        }
        self.flow
    }

    /// Marks the calls an unawaited statement drops.
    fn mark_dropped(&mut self, statement: &ExpressionStatement) {
        let at = statement.expression.span().start as usize;
        let whole = span(statement.span);
        let mut expr = statement.expression.get_inner_expression();
        let mut void = None;
        if let Expression::UnaryExpression(u) = expr
            && u.operator == UnaryOperator::Void
        {
            void = Some(Span::new(u.span.start as usize, u.argument.span().start as usize));
            expr = u.argument.get_inner_expression();
        }
        // `ctx.stage(…).then(…)` drops the stage as surely.
        while let Expression::CallExpression(call) = expr {
            match call.callee.get_inner_expression() {
                Expression::StaticMemberExpression(m)
                    if ["then", "catch", "finally"].contains(&m.property.name.as_str()) =>
                {
                    expr = m.object.get_inner_expression();
                }
                _ => break,
            }
        }
        let Expression::CallExpression(call) = expr else { return };
        if let Expression::StaticMemberExpression(m) = call.callee.get_inner_expression()
            && ARRAY_METHODS.contains(&m.property.name.as_str())
        {
            self.dropped_callbacks
                .extend(call.arguments.first().and_then(Argument::as_expression).and_then(function_start));
        }
        let mark = Mark::Dropped { statement: whole, at, void };
        if dotted(&call.callee).is_some_and(|d| ALL.contains(&d.as_str())) {
            if let Some(Expression::ArrayExpression(array)) =
                call.arguments.first().and_then(Argument::as_expression).map(Expression::get_inner_expression)
            {
                for element in array.elements.iter().filter_map(ArrayExpressionElement::as_expression) {
                    if let Expression::CallExpression(c) = element.get_inner_expression() {
                        self.marks.insert(key(c.span), mark.clone());
                    }
                }
            }
        } else {
            self.marks.insert(key(call.span), mark);
        }
    }

    fn note_declarator(&mut self, d: &VariableDeclarator) {
        let is_const = d.kind == VariableDeclarationKind::Const;
        let Some(init) = d.init.as_ref().map(Expression::get_inner_expression) else { return };
        let binding = span(d.id.span());
        if let Some(name) = d.id.get_identifier_name() {
            let name = name.to_string();
            match init {
                Expression::StringLiteral(s) if is_const => {
                    self.consts.insert(name, s.value.to_string());
                }
                Expression::TemplateLiteral(t) if is_const => {
                    if let Name::Static(value) = template(t) {
                        self.consts.insert(name, value);
                    }
                }
                // `const STAGES = { scan: "scan" } as const`: each string member as `STAGES.scan`.
                Expression::ObjectExpression(object) if is_const => {
                    for property in &object.properties {
                        let ObjectPropertyKind::ObjectProperty(p) = property else { continue };
                        let key = match &p.key {
                            PropertyKey::StaticIdentifier(id) if !p.computed => id.name.to_string(),
                            PropertyKey::StringLiteral(s) => s.value.to_string(),
                            _ => continue,
                        };
                        let value = match p.value.get_inner_expression() {
                            Expression::StringLiteral(s) => s.value.to_string(),
                            Expression::TemplateLiteral(t) => match template(t) {
                                Name::Static(value) => value,
                                _ => continue,
                            },
                            _ => continue,
                        };
                        self.consts.insert(format!("{name}.{key}"), value);
                    }
                }
                Expression::CallExpression(call) => {
                    let at = init.span().start as usize;
                    self.marks.insert(key(call.span), Mark::Bound { name: name.clone(), binding, at });
                    self.pending.push(Pending::Handle(name, key(call.span), true, is_const, binding));
                }
                Expression::AwaitExpression(a) => {
                    if let Expression::CallExpression(call) = a.argument.get_inner_expression() {
                        self.pending.push(Pending::Handle(name, key(call.span), false, is_const, binding));
                    }
                }
                _ => {}
            }
            return;
        }
        // `const [a, b] = await Promise.all([ctx.stage(…), ctx.stage(…)])`.
        let (BindingPatternKind::ArrayPattern(pattern), Expression::AwaitExpression(a)) = (&d.id.kind, init) else {
            return;
        };
        let Expression::CallExpression(all) = a.argument.get_inner_expression() else { return };
        if !dotted(&all.callee).is_some_and(|d| d == "Promise.all" || d == "Promise.allSettled") {
            return;
        }
        let Some(Expression::ArrayExpression(array)) =
            all.arguments.first().and_then(Argument::as_expression).map(Expression::get_inner_expression)
        else {
            return;
        };
        let settled = dotted(&all.callee).is_some_and(|d| d == "Promise.allSettled");
        for (element, bound) in array.elements.iter().zip(pattern.elements.iter()) {
            let (Some(Expression::CallExpression(call)), Some(bound)) =
                (element.as_expression().map(Expression::get_inner_expression), bound)
            else {
                continue;
            };
            if let (Some(name), false) = (bound.get_identifier_name(), settled) {
                self.pending.push(Pending::Handle(
                    name.to_string(),
                    key(call.span),
                    false,
                    is_const,
                    span(bound.span()),
                ));
            }
        }
    }
}

/// A stage name as written: known now, or a name the post-pass looks up.
enum NameExpr {
    Known(Name),
    Ident(String),
}

pub(super) fn template(t: &TemplateLiteral) -> Name {
    let parts: Vec<String> =
        t.quasis.iter().map(|q| q.value.cooked.as_ref().unwrap_or(&q.value.raw).to_string()).collect();
    if t.expressions.is_empty() { Name::Static(parts.concat()) } else { Name::Pattern(parts) }
}

/// The `name` of a stage's options object literal.
fn stage_name(call: &CallExpression) -> (NameExpr, Span) {
    let callee = span(call.callee.span());
    let Some(options) = call.arguments.first().and_then(Argument::as_expression).map(Expression::get_inner_expression)
    else {
        return (NameExpr::Known(Name::Unknown), callee);
    };
    let Expression::ObjectExpression(object) = options else {
        return (NameExpr::Known(Name::Unknown), span(options.span()));
    };
    let mut found = (NameExpr::Known(Name::Unknown), span(object.span));
    for property in &object.properties {
        match property {
            ObjectPropertyKind::ObjectProperty(p) if !p.computed => {
                let is_name = match &p.key {
                    PropertyKey::StaticIdentifier(id) => id.name == "name",
                    PropertyKey::StringLiteral(s) => s.value == "name",
                    _ => false,
                };
                if !is_name {
                    continue;
                }
                let value = p.value.get_inner_expression();
                let at = span(value.span());
                found = match value {
                    Expression::StringLiteral(s) => (NameExpr::Known(Name::Static(s.value.to_string())), at),
                    Expression::TemplateLiteral(t) => (NameExpr::Known(template(t)), at),
                    Expression::Identifier(id) => (NameExpr::Ident(id.name.to_string()), at),
                    Expression::StaticMemberExpression(m) => match m.object.get_inner_expression() {
                        Expression::Identifier(id) => (NameExpr::Ident(format!("{}.{}", id.name, m.property.name)), at),
                        _ => (NameExpr::Known(Name::Unknown), at),
                    },
                    _ => (NameExpr::Known(Name::Unknown), at),
                };
            }
            // A spread may set the name.
            _ => found = (NameExpr::Known(Name::Unknown), span(object.span)),
        }
    }
    found
}

/// `a.b.c` of a callee made of names and static members.
pub(super) fn dotted(expr: &Expression) -> Option<String> {
    match expr.get_inner_expression() {
        Expression::Identifier(id) => Some(id.name.to_string()),
        Expression::StaticMemberExpression(m) => Some(format!("{}.{}", dotted(&m.object)?, m.property.name)),
        _ => None,
    }
}

/// Whether `call` is `<chain>.run(…)`: `Some(true)` on a `defineWorkflow(...)` chain,
/// `Some(false)` on a name (`const wf = defineWorkflow(...)` elsewhere).
fn is_run(call: &CallExpression) -> Option<bool> {
    let Expression::StaticMemberExpression(m) = call.callee.get_inner_expression() else { return None };
    if m.property.name != "run" {
        return None;
    }
    let mut object = m.object.get_inner_expression();
    loop {
        match object {
            Expression::Identifier(_) => return Some(false),
            Expression::CallExpression(c) => match c.callee.get_inner_expression() {
                Expression::Identifier(id) => return (id.name == "defineWorkflow").then_some(true),
                Expression::StaticMemberExpression(m) => object = m.object.get_inner_expression(),
                _ => return None,
            },
            _ => return None,
        }
    }
}

pub(super) fn function_start(expr: &Expression) -> Option<u32> {
    match expr.get_inner_expression() {
        Expression::ArrowFunctionExpression(f) => Some(f.span.start),
        Expression::FunctionExpression(f) => Some(f.span.start),
        _ => None,
    }
}

/// Whether a statement always leaves the enclosing loop or function (ends in `return`,
/// `throw` or `break`).
pub(super) fn exits(statement: &Statement) -> bool {
    match statement {
        Statement::ReturnStatement(_) | Statement::ThrowStatement(_) | Statement::BreakStatement(_) => true,
        Statement::BlockStatement(b) => b.body.last().is_some_and(exits),
        _ => false,
    }
}

/// Whether a statement always leaves the function.
fn returns(statement: &Statement) -> bool {
    match statement {
        Statement::ReturnStatement(_) | Statement::ThrowStatement(_) => true,
        Statement::BlockStatement(b) => b.body.last().is_some_and(returns),
        _ => false,
    }
}

impl<'a> Visit<'a> for Walker {
    fn enter_node(&mut self, kind: AstKind<'a>) {
        match kind {
            AstKind::Function(f) => self.enter_function(f.span.start, &f.params, f.r#async),
            AstKind::ArrowFunctionExpression(f) => self.enter_function(f.span.start, &f.params, f.r#async),
            _ => {}
        }
    }

    fn leave_node(&mut self, kind: AstKind<'a>) {
        if matches!(kind, AstKind::Function(_) | AstKind::ArrowFunctionExpression(_)) {
            self.leave_function();
        }
    }

    fn visit_binding_identifier(&mut self, it: &oxc_ast::ast::BindingIdentifier<'a>) {
        *self.declared.entry(it.name.to_string()).or_default() += 1;
    }

    fn visit_identifier_reference(&mut self, it: &oxc_ast::ast::IdentifierReference<'a>) {
        let start = it.span.start;
        if let Some(ctx) = self.context(&it.name) {
            if self.receivers.contains(&start) {
                return;
            }
            match self.member_of.get(&start).map(String::as_str) {
                Some("save") => {
                    if let Ctx::Stage(i) = ctx
                        && let Some(callback) = &mut self.flow.stages[i].callback
                    {
                        callback.saves = true;
                    }
                }
                // A stage runner or reader taken off the context is called where the walk
                // cannot see it.
                Some("stage" | "transcript" | "getMessages") => self.flow.open = true,
                Some(_) => {}
                None => {
                    self.flow.open = true;
                    if let Ctx::Stage(i) = ctx
                        && let Some(callback) = &mut self.flow.stages[i].callback
                    {
                        callback.hands_away = true;
                    }
                }
            }
            return;
        }
        // A read's argument counts: `TranscriptNotReady` reports reading a pending handle.
        let passes = match self.member_of.get(&start).map(String::as_str) {
            Some(property) => ["then", "catch", "finally"].contains(&property),
            None => true,
        };
        if passes {
            self.first_kept.entry(it.name.to_string()).or_insert(start);
        }
    }

    fn visit_static_member_expression(&mut self, it: &oxc_ast::ast::StaticMemberExpression<'a>) {
        if let Expression::Identifier(id) = it.object.get_inner_expression() {
            self.member_of.insert(id.span.start, it.property.name.to_string());
        }
        walk::walk_static_member_expression(self, it);
    }

    fn visit_arrow_function_expression(&mut self, it: &oxc_ast::ast::ArrowFunctionExpression<'a>) {
        if it.expression {
            self.arrow_bodies.extend(it.body.statements.first().map(|s| key(s.span())));
        }
        walk::walk_arrow_function_expression(self, it);
    }

    fn visit_expression_statement(&mut self, it: &ExpressionStatement<'a>) {
        if !self.arrow_bodies.contains(&key(it.span)) {
            self.mark_dropped(it);
        }
        walk::walk_expression_statement(self, it);
    }

    fn visit_variable_declarator(&mut self, it: &VariableDeclarator<'a>) {
        self.note_declarator(it);
        walk::walk_variable_declarator(self, it);
    }

    fn visit_call_expression(&mut self, call: &CallExpression<'a>) {
        let callee = call.callee.get_inner_expression();
        if function_start(callee).is_some() {
            self.iife.extend(function_start(callee));
        }
        if let Expression::Identifier(helper) = callee {
            self.record_helper_call(call, &helper.name);
        }
        if let Expression::StaticMemberExpression(m) = callee {
            let method = m.property.name.as_str();
            if ARRAY_METHODS.contains(&method)
                && let Some(start) = call.arguments.first().and_then(Argument::as_expression).and_then(function_start)
            {
                self.array_callbacks.insert(start, (span(m.property.span), method == "forEach"));
            }
            if let Expression::Identifier(receiver) = m.object.get_inner_expression()
                && self.context(&receiver.name).is_some()
            {
                match method {
                    "stage" => {
                        self.receivers.insert(receiver.span.start);
                        self.record_stage(call);
                    }
                    "transcript" => {
                        self.receivers.insert(receiver.span.start);
                        self.record_read(call, "transcript");
                    }
                    "getMessages" => {
                        self.receivers.insert(receiver.span.start);
                        self.record_read(call, "getMessages");
                    }
                    _ => {}
                }
            }
        }
        let all = dotted(&call.callee).is_some_and(|d| ALL.contains(&d.as_str()));
        let array = call.arguments.first().and_then(Argument::as_expression).map(Expression::get_inner_expression);
        match (all, array) {
            (true, Some(Expression::ArrayExpression(array))) => {
                self.visit_expression(&call.callee);
                for (i, element) in array.elements.iter().enumerate() {
                    self.groups.push((call.span.start, i as u32));
                    self.visit_array_expression_element(element);
                    self.groups.pop();
                }
                for argument in call.arguments.iter().skip(1) {
                    self.visit_argument(argument);
                }
            }
            _ => walk::walk_call_expression(self, call),
        }
    }

    fn visit_statements(&mut self, it: &oxc_allocator::Vec<'a, Statement<'a>>) {
        // After `if (c) { …; return; }` the rest of the block is the `if`'s other arm.
        let mut pushed = 0;
        for statement in it {
            self.visit_statement(statement);
            if let Statement::IfStatement(s) = statement
                && s.alternate.is_none()
                && returns(&s.consequent)
            {
                self.enter_arm(s.span.start, 1);
                pushed += 1;
            }
        }
        for _ in 0..pushed {
            self.leave_arm();
        }
    }

    fn visit_if_statement(&mut self, it: &IfStatement<'a>) {
        self.visit_expression(&it.test);
        self.arm(it.span.start, 0, &it.consequent);
        if let Some(alternate) = &it.alternate {
            self.arm(it.span.start, 1, alternate);
        }
    }

    fn visit_conditional_expression(&mut self, it: &ConditionalExpression<'a>) {
        self.visit_expression(&it.test);
        self.enter_arm(it.span.start, 0);
        self.visit_expression(&it.consequent);
        self.leave_arm();
        self.enter_arm(it.span.start, 1);
        self.visit_expression(&it.alternate);
        self.leave_arm();
    }

    fn visit_switch_statement(&mut self, it: &SwitchStatement<'a>) {
        self.visit_expression(&it.discriminant);
        // Cases that fall through into each other are one arm.
        let mut group = 0;
        for case in &it.cases {
            self.enter_arm(it.span.start, group);
            let leaves =
                case.consequent.last().is_some_and(|s| exits(s) || matches!(s, Statement::ContinueStatement(_)));
            self.visit_switch_case(case);
            self.leave_arm();
            if leaves {
                group += 1;
            }
        }
    }

    fn visit_for_statement(&mut self, it: &oxc_ast::ast::ForStatement<'a>) {
        self.looping(it.span, 3, &it.body, |w| walk::walk_for_statement(w, it));
    }

    fn visit_for_of_statement(&mut self, it: &oxc_ast::ast::ForOfStatement<'a>) {
        self.looping(it.span, 3, &it.body, |w| walk::walk_for_of_statement(w, it));
    }

    fn visit_for_in_statement(&mut self, it: &oxc_ast::ast::ForInStatement<'a>) {
        self.looping(it.span, 3, &it.body, |w| walk::walk_for_in_statement(w, it));
    }

    fn visit_while_statement(&mut self, it: &oxc_ast::ast::WhileStatement<'a>) {
        self.looping(it.span, 5, &it.body, |w| walk::walk_while_statement(w, it));
    }

    fn visit_do_while_statement(&mut self, it: &oxc_ast::ast::DoWhileStatement<'a>) {
        self.looping(it.span, 2, &it.body, |w| walk::walk_do_while_statement(w, it));
    }
}

impl Walker {
    /// Visits one arm of an `if`; an arm that leaves the loop runs at most once in it.
    fn enter_arm(&mut self, construct: u32, arm: u32) {
        self.arm = self.flow.arms.push(self.arm, construct, arm);
    }

    fn leave_arm(&mut self) {
        self.arm = self.flow.arms.parent(self.arm);
    }

    fn arm(&mut self, construct: u32, arm: u32, body: &Statement) {
        self.enter_arm(construct, arm);
        let once = exits(body);
        if once {
            self.repeats.push(None);
        }
        self.visit_statement(body);
        if once {
            self.repeats.pop();
        }
        self.leave_arm();
    }

    /// Visits a loop: its body repeats unless it always leaves at its end.
    fn looping(&mut self, at: oxc_span::Span, keyword: usize, body: &Statement, walk: impl FnOnce(&mut Self)) {
        let start = at.start as usize;
        self.repeats.push(if exits(body) { None } else { Some(Span::new(start, start + keyword)) });
        walk(self);
        self.repeats.pop();
    }
}

#[cfg(test)]
mod tests {
    use oxc_allocator::Allocator;
    use oxc_parser::Parser;
    use oxc_span::SourceType;

    use super::*;

    fn flow(text: &str) -> Flow {
        let allocator = Allocator::default();
        let parsed = Parser::new(&allocator, text, SourceType::ts()).parse();
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        read(&parsed.program)
    }

    fn wrap(body: &str) -> String {
        format!("export default defineWorkflow({{ name: \"w\" }}).run(async (ctx) => {{\n{body}\n}}).compile();")
    }

    #[test]
    fn handles_resolve_through_await_and_promise_all() {
        let f = flow(&wrap(
            r#"const greet = await ctx.stage({ name: "greet" }, {}, {}, async (s) => { s.save(s.sessionId); });
            const [a, b] = await Promise.all([
              ctx.stage({ name: "a" }, {}, {}, async (s) => { await s.transcript(greet); }),
              ctx.stage({ name: "b" }, {}, {}, async (s) => {}),
            ]);
            await ctx.transcript(a);
            await ctx.getMessages(b);"#,
        ));
        assert!(!f.open);
        let targets: Vec<_> = f.reads.iter().map(|r| r.target.clone()).collect();
        assert!(matches!(targets[0], Target::Handle { stage: 0, pending: false, .. }), "{targets:?}");
        assert!(matches!(targets[1], Target::Handle { stage: 1, pending: false, .. }), "{targets:?}");
        assert!(matches!(targets[2], Target::Handle { stage: 2, pending: false, .. }), "{targets:?}");
        assert_eq!(f.reads[0].within, vec![1]);
        assert_eq!(f.stages[1].groups.len(), 1);
        assert_eq!(f.stages[2].groups[0].1, 1);
        assert!(f.stages[0].callback.as_ref().is_some_and(|c| c.saves && !c.hands_away));
        assert!(f.stages[2].callback.as_ref().is_some_and(|c| !c.saves));
    }

    #[test]
    fn an_arrow_body_returns_its_stage() {
        let f = flow(&wrap(
            r#"const run = async (name: string) => ctx.stage({ name }, {}, {}, async (s) => {});
            await run("x");
            ctx.stage({ name: "dropped" }, {}, {}, async () => {});"#,
        ));
        assert_eq!(f.stages[0].settled, Settled::Kept);
        assert!(f.stages[0].deferred);
        assert_eq!(f.stages[0].name, Name::Unknown);
        assert!(matches!(f.stages[1].settled, Settled::Dropped { .. }));
    }

    #[test]
    fn names_from_consts_and_templates() {
        let f = flow(&format!(
            "const PLAN = \"plan\";\n{}",
            wrap(
                r#"await ctx.stage({ name: PLAN }, {}, {}, async () => {});
                for (let i = 0; i < 2; i++) await ctx.stage({ name: `r-${i}-x` }, {}, {}, async () => {});
                await ctx.transcript(`r-${1}-x`);"#
            )
        ));
        assert_eq!(f.stages[0].name, Name::Static("plan".into()));
        let g = flow(&format!(
            "const STAGES = {{ scan: \"scan\", \"fix\": `fix` }} as const;\n{}",
            wrap(
                "await ctx.stage({ name: STAGES.scan }, {}, {}, async () => {}); await ctx.stage({ name: STAGES.fix }, {}, {}, async () => {}); await ctx.transcript(STAGES.scan);"
            )
        ));
        assert_eq!(g.stages[0].name, Name::Static("scan".into()));
        assert_eq!(g.stages[1].name, Name::Static("fix".into()));
        assert_eq!(g.reads[0].target, Target::Name(Name::Static("scan".into())));
        assert_eq!(f.stages[1].name, Name::Pattern(vec!["r-".into(), "-x".into()]));
        assert!(f.stages[1].repeats.is_some());
        assert!(f.stages[1].name.may_equal(&Name::Static("r-7-x".into())));
        assert!(!f.stages[1].name.may_equal(&Name::Static("r-7-y".into())));
        let Target::Name(read) = &f.reads[0].target else { panic!("{:?}", f.reads[0].target) };
        assert!(read.may_equal(&f.stages[1].name));
        assert!(!read.may_equal(&Name::Pattern(vec!["q-".into(), "".into()])));
    }

    #[test]
    fn switch_cases_that_fall_through_share_an_arm() {
        let f = flow(&wrap(
            r#"switch (x) {
              case 1: await ctx.stage({ name: "a" }, {}, {}, async () => {});
              case 2: await ctx.stage({ name: "b" }, {}, {}, async () => {}); break;
              default: await ctx.stage({ name: "c" }, {}, {}, async () => {});
            }"#,
        ));
        let arm = |i: usize| f.arms.path(f.stages[i].arms)[0].1;
        assert_eq!(arm(0), arm(1));
        assert_ne!(arm(1), arm(2));
    }

    #[test]
    fn handing_a_context_away_opens_the_graph() {
        let f = flow(&wrap(
            r#"await helper(ctx);
            await ctx.stage({ name: "a" }, {}, {}, async (s) => { await finish(s); });"#,
        ));
        assert!(f.open);
        assert!(f.stages[0].callback.as_ref().is_some_and(|c| c.hands_away));
        let f = flow(&wrap(r#"await ctx.stage({ name: "a" }, {}, {}, async ({ save }) => {});"#));
        assert!(f.open);
    }

    #[test]
    fn a_run_callback_given_by_name_is_followed() {
        let text = r#"async function main(ctx) { ctx.stage({ name: "a" }, {}, {}, async () => {}); }
            export default defineWorkflow({ name: "w" }).run(main).compile();"#;
        let f = flow(text);
        assert_eq!(f.stages.len(), 1);
        assert!(matches!(f.stages[0].settled, Settled::Dropped { .. }));
        let f = flow(&text.replace("async function main(ctx)", "const main = async (ctx) =>"));
        assert_eq!(f.stages.len(), 1);
        // Two functions of the name: which one runs is not known.
        let f = flow(&format!("{text}\nfunction other() {{ const main = () => 1; }}"));
        assert!(f.stages.is_empty());
    }

    #[test]
    fn the_chained_run_wins_over_another_run_call() {
        let f = flow(&format!(
            "task.run(async (t) => {{ t.stage({{ name: \"no\" }}); }});\n{}",
            wrap(r#"await ctx.stage({ name: "yes" }, {}, {}, async () => {});"#)
        ));
        assert_eq!(f.stages.len(), 1);
        assert_eq!(f.stages[0].name, Name::Static("yes".into()));
    }
}
