//! What happens inside the workflow's callbacks, for the session rules: per `ctx.stage(...)`
//! call its `headless` literal, the option objects, the `s.save(...)` arguments by shape, the
//! `s.session.query(...)` calls and the other calls made in it; the file's imports; every
//! `ctx.inputs.x` read; every `sendAndWait` call. Names are followed lexically (the callback's
//! parameter, destructuring, `const x = await s.session.query(...)`), never across files.

use std::collections::{HashMap, HashSet};

use oxc_ast::ast::{
    Argument, BindingPattern, BindingPatternKind, CallExpression, Expression, ExpressionStatement,
    ImportDeclarationSpecifier, ObjectPropertyKind, Program, PropertyKey, SimpleAssignmentTarget, UnaryOperator,
    VariableDeclarator,
};
use oxc_ast_visit::{Visit, walk};
use oxc_span::GetSpan;

use super::{Object, Value, read_value, span};
use crate::source::Span;

/// The facts of one file.
#[derive(Debug, Default)]
pub struct Sessions {
    pub imports: Vec<Import>,
    /// Every `X.stage(opts, clientOpts, sessionOpts, fn)` call (also `stage(...)` destructured
    /// from a callback's parameter), outermost first.
    pub stages: Vec<Stage>,
    /// Every read of a workflow input by name.
    pub inputs: Vec<InputRead>,
    /// Every `….sendAndWait(...)` call, wherever it is.
    pub send_and_wait: Vec<SendAndWait>,
}

/// One name an `import` declaration binds (value imports only).
#[derive(Debug)]
pub struct Import {
    pub module: String,
    /// The exported name (`query` of `import { query as q }`); `None` for a default or
    /// namespace import, whose local name stands for the whole module.
    pub imported: Option<String>,
    pub local: String,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Headless {
    /// No `headless` key in a closed object literal: the stage is interactive.
    Absent,
    Bool(bool, Span),
    /// A literal that is not a boolean (`"true"`, `1`): the runtime tests `=== true`.
    NotBool(Span),
    /// Not known statically.
    Unknown,
}

#[derive(Debug)]
pub struct Stage {
    /// The first argument.
    pub options: Option<Span>,
    pub headless: Headless,
    /// The second and third arguments when they are object literals.
    pub client: Option<Object>,
    pub session: Option<Object>,
    /// The callback's parameter when it is a plain name (`s`).
    pub param: Option<String>,
    pub saves: Vec<Save>,
    pub queries: Vec<Query>,
    /// Other calls in the callback by callee: a plain name, or `ns.member`.
    pub calls: Vec<(String, Span)>,
    /// Methods called on `s.session` (`send`, `query`, …), with the property's span.
    pub session_calls: Vec<(String, Span)>,
}

/// `s.save(arg)`.
#[derive(Debug)]
pub struct Save {
    pub arg: Span,
    pub shape: Shape,
}

/// What `s.save` is given, as far as the callback shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// A string: `s.sessionId`, `s.session.id`, `s.session.sessionId`, a string literal.
    Id,
    /// What an awaited provider call returned, then the properties read from it
    /// (`result.data` is `Result(Prompt, ["data"])`).
    Result(Source, Vec<String>),
    /// A provider call's promise that is never awaited.
    Pending(Source),
    Unknown,
}

/// The provider call a value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `s.session.query(...)` (Claude): `SessionMessage[]`.
    Query,
    /// `s.session.getMessages()` (Copilot): `SessionEvent[]`.
    GetMessages,
    /// `s.client.session.prompt(...)` (OpenCode): `{ data, error, … }`.
    Prompt,
}

/// A `s.session.query(prompt, options?)` call.
#[derive(Debug)]
pub struct Query {
    /// The second argument, when there is one.
    pub options: Option<Value>,
}

/// A workflow input read by name: `ctx.inputs.x`, `ctx.inputs["x"]`, `const { x } = ctx.inputs`.
#[derive(Debug)]
pub struct InputRead {
    pub name: String,
    /// The name as written (inside the quotes of a string key).
    pub span: Span,
}

#[derive(Debug)]
pub struct SendAndWait {
    /// The `sendAndWait` property.
    pub name: Span,
    /// The end of the first argument, and the second argument (a timeout) if any.
    pub first_end: Option<usize>,
    pub timeout: Option<Span>,
    /// Its value is dropped: the call is an awaited statement of its own (`await` or `void await`).
    pub discarded: bool,
}

pub(super) fn read(program: &Program) -> Sessions {
    let mut reader =
        Reader { out: Sessions::default(), scopes: Vec::new(), dropped: HashSet::new(), arrow_bodies: HashSet::new() };
    reader.visit_program(program);
    reader.out
}

/// What a name stands for inside a callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The run callback's `ctx` or a stage callback's `s`.
    Ctx,
    Session,
    Client,
    /// `s.client.session`.
    ClientSession,
    Save,
    SessionId,
    Inputs,
    /// `ctx.stage` taken out by destructuring.
    Stage,
}

/// A callback being read: the run callback (`stage` is `None`) or a stage callback.
struct Scope {
    stage: Option<usize>,
    roles: HashMap<String, Role>,
    /// `const` and `let` bindings by what they hold; a name bound twice or assigned holds `Unknown`.
    locals: HashMap<String, Shape>,
}

struct Reader {
    out: Sessions,
    scopes: Vec<Scope>,
    /// Calls whose value a statement drops, by their start.
    dropped: HashSet<u32>,
    /// An arrow function's expression body, by its start: returned, not dropped.
    arrow_bodies: HashSet<u32>,
}

/// The key of a non-computed property: `a` and `"a"`.
fn key_name(key: &PropertyKey) -> Option<String> {
    match key {
        PropertyKey::StaticIdentifier(id) => Some(id.name.to_string()),
        PropertyKey::StringLiteral(s) => Some(s.value.to_string()),
        _ => None,
    }
}

/// Whether `expr` is a `defineWorkflow(...)` chain (`defineWorkflow(...).for<"a">()`).
fn is_define_chain(expr: &Expression) -> bool {
    match expr.get_inner_expression() {
        Expression::CallExpression(call) => match call.callee.get_inner_expression() {
            Expression::Identifier(id) => id.name == "defineWorkflow",
            Expression::StaticMemberExpression(member) => is_define_chain(&member.object),
            _ => false,
        },
        _ => false,
    }
}

/// The callback literal of an argument.
fn callback<'b, 'a>(argument: Option<&'b Argument<'a>>) -> Option<&'b oxc_ast::ast::FormalParameters<'a>> {
    match argument?.as_expression()?.get_inner_expression() {
        Expression::ArrowFunctionExpression(f) => Some(&f.params),
        Expression::FunctionExpression(f) => Some(&f.params),
        _ => None,
    }
}

/// `headless` of a stage's first argument.
fn headless(options: Option<&Expression>) -> Headless {
    let Some(Expression::ObjectExpression(object)) = options.map(Expression::get_inner_expression) else {
        return Headless::Unknown;
    };
    let mut open = false;
    for property in &object.properties {
        match property {
            ObjectPropertyKind::ObjectProperty(p) if !p.computed => {
                let key = key_name(&p.key);
                // A misspelt `headless` (`atomic/UnknownOption`) says nothing yet: what the
                // stage is waits for the fix, so its consequences are not reported too.
                if key
                    .as_deref()
                    .is_some_and(|k| k != "headless" && crate::util::did_you_mean(k, ["headless"]).is_some())
                {
                    open = true;
                }
                if key.as_deref() == Some("headless") {
                    let at = span(p.value.span());
                    return match p.value.get_inner_expression() {
                        Expression::BooleanLiteral(b) => Headless::Bool(b.value, at),
                        Expression::StringLiteral(_)
                        | Expression::NumericLiteral(_)
                        | Expression::NullLiteral(_)
                        | Expression::TemplateLiteral(_) => Headless::NotBool(at),
                        _ => Headless::Unknown,
                    };
                }
            }
            _ => open = true,
        }
    }
    if open { Headless::Unknown } else { Headless::Absent }
}

impl Reader {
    /// The role of `expr` and the scope that gives it, innermost first.
    fn role(&self, expr: &Expression) -> Option<(Role, usize)> {
        match expr.get_inner_expression() {
            Expression::Identifier(id) => self
                .scopes
                .iter()
                .enumerate()
                .rev()
                .find_map(|(i, scope)| scope.roles.get(id.name.as_str()).map(|role| (*role, i))),
            Expression::StaticMemberExpression(member) => {
                let (role, scope) = self.role(&member.object)?;
                let next = match (role, member.property.name.as_str()) {
                    (Role::Ctx, "session") => Role::Session,
                    (Role::Ctx, "client") => Role::Client,
                    (Role::Ctx, "save") => Role::Save,
                    (Role::Ctx, "sessionId") => Role::SessionId,
                    (Role::Ctx, "inputs") => Role::Inputs,
                    (Role::Client, "session") => Role::ClientSession,
                    (Role::Session, "id" | "sessionId") => Role::SessionId,
                    _ => return None,
                };
                Some((next, scope))
            }
            _ => None,
        }
    }

    /// The provider call `expr` is, if any.
    fn source(&self, expr: &Expression) -> Option<Source> {
        let Expression::CallExpression(call) = expr.get_inner_expression() else { return None };
        let Expression::StaticMemberExpression(member) = call.callee.get_inner_expression() else { return None };
        match (self.role(&member.object)?.0, member.property.name.as_str()) {
            (Role::Session, "query") => Some(Source::Query),
            (Role::Session, "getMessages") => Some(Source::GetMessages),
            (Role::ClientSession, "prompt") => Some(Source::Prompt),
            _ => None,
        }
    }

    fn shape(&self, expr: &Expression) -> Shape {
        if let Some(source) = self.source(expr) {
            return Shape::Pending(source);
        }
        if self.role(expr).is_some_and(|(role, _)| role == Role::SessionId) {
            return Shape::Id;
        }
        match expr.get_inner_expression() {
            Expression::StringLiteral(_) | Expression::TemplateLiteral(_) => Shape::Id,
            Expression::AwaitExpression(e) => match self.shape(&e.argument) {
                Shape::Pending(source) => Shape::Result(source, Vec::new()),
                other => other,
            },
            Expression::StaticMemberExpression(member) => match self.shape(&member.object) {
                Shape::Result(source, mut path) => {
                    path.push(member.property.name.to_string());
                    Shape::Result(source, path)
                }
                _ => Shape::Unknown,
            },
            Expression::Identifier(id) => self
                .scopes
                .iter()
                .rev()
                .find_map(|scope| scope.locals.get(id.name.as_str()).cloned())
                .unwrap_or(Shape::Unknown),
            _ => Shape::Unknown,
        }
    }

    /// Binds the names of `pattern` to what they take from a value of `role` or `shape`.
    fn bind(&mut self, pattern: &BindingPattern, role: Option<Role>, shape: Shape) {
        let Some(scope) = self.scopes.last_mut() else { return };
        match &pattern.kind {
            BindingPatternKind::BindingIdentifier(id) => {
                let name = id.name.to_string();
                match role {
                    Some(role) => {
                        scope.roles.insert(name, role);
                    }
                    None => {
                        let shape = if scope.locals.contains_key(&name) { Shape::Unknown } else { shape };
                        scope.locals.insert(name, shape);
                    }
                }
            }
            BindingPatternKind::ObjectPattern(object) => {
                for property in &object.properties {
                    let Some(key) = key_name(&property.key).filter(|_| !property.computed) else { continue };
                    let BindingPatternKind::BindingIdentifier(id) = &property.value.kind else { continue };
                    let name = id.name.to_string();
                    let taken = match (role, key.as_str()) {
                        (Some(Role::Ctx), "session") => Some(Role::Session),
                        (Some(Role::Ctx), "client") => Some(Role::Client),
                        (Some(Role::Ctx), "save") => Some(Role::Save),
                        (Some(Role::Ctx), "sessionId") => Some(Role::SessionId),
                        (Some(Role::Ctx), "inputs") => Some(Role::Inputs),
                        (Some(Role::Ctx), "stage") => Some(Role::Stage),
                        (Some(Role::Client), "session") => Some(Role::ClientSession),
                        _ => None,
                    };
                    if let Some(taken) = taken {
                        scope.roles.insert(name, taken);
                    } else if let Shape::Result(source, path) = &shape {
                        let mut path = path.clone();
                        path.push(key);
                        scope.locals.insert(name, Shape::Result(*source, path));
                    } else {
                        scope.locals.insert(name, Shape::Unknown);
                    }
                }
            }
            _ => {}
        }
    }

    /// A callback's first parameter, bound as `ctx`/`s`.
    fn enter(&mut self, stage: Option<usize>, params: &oxc_ast::ast::FormalParameters) -> Option<String> {
        self.scopes.push(Scope { stage, roles: HashMap::new(), locals: HashMap::new() });
        let first = params.items.first()?;
        self.bind(&first.pattern, Some(Role::Ctx), Shape::Unknown);
        first.pattern.get_identifier_name().map(|n| n.to_string())
    }

    fn input_pattern(&mut self, pattern: &BindingPattern) {
        let BindingPatternKind::ObjectPattern(object) = &pattern.kind else { return };
        for property in object.properties.iter().filter(|p| !p.computed) {
            if let Some(name) = key_name(&property.key) {
                let mut at = span(property.key.span());
                if matches!(property.key, PropertyKey::StringLiteral(_)) {
                    at = Span::new(at.start + 1, at.end.saturating_sub(1).max(at.start + 1));
                }
                self.out.inputs.push(InputRead { name, span: at });
            }
        }
    }

    fn stage_call(&mut self, call: &CallExpression<'_>) {
        let args: Vec<Option<&Expression>> = call.arguments.iter().map(Argument::as_expression).collect();
        let object = |i: usize| match args.get(i).copied().flatten().map(read_value) {
            Some(Value::Object(object)) => Some(object),
            _ => None,
        };
        let index = self.out.stages.len();
        self.out.stages.push(Stage {
            options: args.first().copied().flatten().map(|e| span(e.span())),
            headless: headless(args.first().copied().flatten()),
            client: object(1),
            session: object(2),
            param: None,
            saves: Vec::new(),
            queries: Vec::new(),
            calls: Vec::new(),
            session_calls: Vec::new(),
        });
        self.visit_expression(&call.callee);
        for argument in call.arguments.iter().take(3) {
            self.visit_argument(argument);
        }
        let Some(argument) = call.arguments.get(3) else { return };
        let Some(params) = callback(Some(argument)) else {
            self.visit_argument(argument);
            return;
        };
        let param = self.enter(Some(index), params);
        self.out.stages[index].param = param;
        self.visit_argument(argument);
        self.scopes.pop();
        for argument in call.arguments.iter().skip(4) {
            self.visit_argument(argument);
        }
    }

    /// Records what a call inside a stage callback is.
    fn note_call(&mut self, call: &CallExpression<'_>) {
        let callee = call.callee.get_inner_expression();
        if let Some((Role::Save, scope)) = self.role(callee)
            && let Some(stage) = self.scopes[scope].stage
            && let Some(arg) = call.arguments.first().and_then(Argument::as_expression)
        {
            let save = Save { arg: span(arg.span()), shape: self.shape(arg) };
            self.out.stages[stage].saves.push(save);
            return;
        }
        if let Expression::StaticMemberExpression(member) = callee {
            if let Some((Role::Session, scope)) = self.role(&member.object)
                && let Some(stage) = self.scopes[scope].stage
            {
                self.out.stages[stage]
                    .session_calls
                    .push((member.property.name.to_string(), span(member.property.span)));
            }
            if member.property.name == "sendAndWait" {
                let first = call.arguments.first().map(|a| a.span().end as usize);
                let timeout = call.arguments.get(1).map(|a| span(a.span()));
                self.out.send_and_wait.push(SendAndWait {
                    name: span(member.property.span),
                    first_end: first,
                    timeout,
                    discarded: self.dropped.contains(&call.span.start),
                });
            }
            if member.property.name == "query"
                && let Some((Role::Session, scope)) = self.role(&member.object)
                && let Some(stage) = self.scopes[scope].stage
            {
                let options = call.arguments.get(1).and_then(Argument::as_expression).map(read_value);
                self.out.stages[stage].queries.push(Query { options });
                return;
            }
        }
        let Some(stage) = self.scopes.iter().rev().find_map(|s| s.stage) else { return };
        let name = match callee {
            Expression::Identifier(id) => id.name.to_string(),
            Expression::StaticMemberExpression(member) => match member.object.get_inner_expression() {
                Expression::Identifier(id) => format!("{}.{}", id.name, member.property.name),
                _ => return,
            },
            _ => return,
        };
        self.out.stages[stage].calls.push((name, span(callee.span())));
    }
}

impl<'a> Visit<'a> for Reader {
    fn visit_arrow_function_expression(&mut self, it: &oxc_ast::ast::ArrowFunctionExpression<'a>) {
        if it.expression {
            self.arrow_bodies.extend(it.body.statements.first().map(|s| s.span().start));
        }
        walk::walk_arrow_function_expression(self, it);
    }

    fn visit_expression_statement(&mut self, it: &ExpressionStatement<'a>) {
        if !self.arrow_bodies.contains(&it.span.start) {
            // Only an awaited call's value is dropped with nothing else lost: `send` without
            // `await` would leave the next line running before the message is handled.
            let mut expr = it.expression.get_inner_expression();
            let mut awaited = false;
            loop {
                match expr {
                    Expression::AwaitExpression(a) => {
                        awaited = true;
                        expr = a.argument.get_inner_expression();
                    }
                    Expression::UnaryExpression(u) if u.operator == UnaryOperator::Void => {
                        expr = u.argument.get_inner_expression()
                    }
                    _ => break,
                }
            }
            if let Expression::CallExpression(call) = expr
                && awaited
            {
                self.dropped.insert(call.span.start);
            }
        }
        walk::walk_expression_statement(self, it);
    }

    fn visit_import_declaration(&mut self, decl: &oxc_ast::ast::ImportDeclaration<'a>) {
        if decl.import_kind.is_type() {
            return;
        }
        for specifier in decl.specifiers.iter().flatten() {
            let (imported, local) = match specifier {
                ImportDeclarationSpecifier::ImportSpecifier(s) if !s.import_kind.is_type() => {
                    (Some(s.imported.name().to_string()), &s.local)
                }
                ImportDeclarationSpecifier::ImportSpecifier(_) => continue,
                ImportDeclarationSpecifier::ImportDefaultSpecifier(s) => (None, &s.local),
                ImportDeclarationSpecifier::ImportNamespaceSpecifier(s) => (None, &s.local),
            };
            self.out.imports.push(Import {
                module: decl.source.value.to_string(),
                imported,
                local: local.name.to_string(),
                span: span(specifier.span()),
            });
        }
    }

    fn visit_call_expression(&mut self, call: &CallExpression<'a>) {
        let callee = call.callee.get_inner_expression();
        let is_stage = match callee {
            Expression::StaticMemberExpression(member) => member.property.name == "stage",
            _ => self.role(callee).is_some_and(|(role, _)| role == Role::Stage),
        };
        if is_stage && call.arguments.len() >= 4 {
            self.stage_call(call);
            return;
        }
        if let Expression::StaticMemberExpression(member) = callee
            && member.property.name == "run"
            && is_define_chain(&member.object)
            && let Some(params) = callback(call.arguments.first())
        {
            self.visit_expression(&call.callee);
            self.enter(None, params);
            for argument in &call.arguments {
                self.visit_argument(argument);
            }
            self.scopes.pop();
            return;
        }
        self.note_call(call);
        walk::walk_call_expression(self, call);
    }

    fn visit_variable_declarator(&mut self, decl: &VariableDeclarator<'a>) {
        if let Some(init) = &decl.init {
            self.visit_expression(init);
            // `const { query } = await import("@anthropic-ai/claude-agent-sdk")`.
            if let Expression::AwaitExpression(e) = init.get_inner_expression()
                && let Expression::ImportExpression(import) = e.argument.get_inner_expression()
                && let Expression::StringLiteral(module) = import.source.get_inner_expression()
            {
                let bound: Vec<(Option<String>, String)> = match &decl.id.kind {
                    BindingPatternKind::BindingIdentifier(id) => vec![(None, id.name.to_string())],
                    BindingPatternKind::ObjectPattern(object) => object
                        .properties
                        .iter()
                        .filter_map(|p| Some((Some(key_name(&p.key)?), p.value.get_identifier_name()?.to_string())))
                        .collect(),
                    _ => Vec::new(),
                };
                for (imported, local) in bound {
                    let module = module.value.to_string();
                    self.out.imports.push(Import { module, imported, local, span: span(decl.span) });
                }
            }
            let role = self.role(init).map(|(role, _)| role);
            if role == Some(Role::Inputs) {
                self.input_pattern(&decl.id);
            }
            let shape = self.shape(init);
            self.bind(&decl.id, role, shape);
        } else {
            self.bind(&decl.id, None, Shape::Unknown);
        }
    }

    fn visit_assignment_expression(&mut self, assign: &oxc_ast::ast::AssignmentExpression<'a>) {
        if let Some(SimpleAssignmentTarget::AssignmentTargetIdentifier(id)) = assign.left.as_simple_assignment_target()
            && let Some(scope) = self.scopes.iter_mut().rev().find(|s| s.locals.contains_key(id.name.as_str()))
        {
            scope.locals.insert(id.name.to_string(), Shape::Unknown);
        }
        walk::walk_assignment_expression(self, assign);
    }

    fn visit_static_member_expression(&mut self, member: &oxc_ast::ast::StaticMemberExpression<'a>) {
        if self.role(&member.object).is_some_and(|(role, _)| role == Role::Inputs) {
            self.out
                .inputs
                .push(InputRead { name: member.property.name.to_string(), span: span(member.property.span) });
        }
        walk::walk_static_member_expression(self, member);
    }

    fn visit_computed_member_expression(&mut self, member: &oxc_ast::ast::ComputedMemberExpression<'a>) {
        if self.role(&member.object).is_some_and(|(role, _)| role == Role::Inputs)
            && let Expression::StringLiteral(key) = member.expression.get_inner_expression()
        {
            let at = span(key.span);
            let inner = Span::new(at.start + 1, at.end.saturating_sub(1).max(at.start + 1));
            self.out.inputs.push(InputRead { name: key.value.to_string(), span: inner });
        }
        walk::walk_computed_member_expression(self, member);
    }
}

#[cfg(test)]
mod tests {
    use oxc_allocator::Allocator;
    use oxc_parser::Parser;
    use oxc_span::SourceType;

    use super::*;

    fn sessions(text: &str) -> Sessions {
        let allocator = Allocator::default();
        let parsed = Parser::new(&allocator, text, SourceType::ts()).parse();
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        read(&parsed.program)
    }

    #[test]
    fn saves_are_followed_to_their_source() {
        let found = sessions(
            r#"defineWorkflow({}).run(async (ctx) => {
                await ctx.stage({ name: "a" }, {}, {}, async (s) => {
                    const messages = await s.session.query("x");
                    const { data } = await s.client.session.prompt({});
                    let later = await s.session.getMessages();
                    later = [];
                    s.save(messages);
                    s.save(data);
                    s.save(s.session.id);
                    s.save(s.session.getMessages());
                    s.save(later);
                });
            });"#,
        );
        let shapes: Vec<&Shape> = found.stages[0].saves.iter().map(|s| &s.shape).collect();
        assert_eq!(
            shapes,
            [
                &Shape::Result(Source::Query, vec![]),
                &Shape::Result(Source::Prompt, vec!["data".to_string()]),
                &Shape::Id,
                &Shape::Pending(Source::GetMessages),
                &Shape::Unknown,
            ]
        );
    }

    #[test]
    fn a_nested_stage_owns_its_calls_and_an_outer_name_keeps_its_stage() {
        let found = sessions(
            r#"defineWorkflow({}).run(async (ctx) => {
                await ctx.stage({ name: "outer", headless: true }, {}, {}, async (s) => {
                    await s.stage({ name: "inner" }, {}, {}, async (t) => {
                        await t.session.query("a", { agent: "x" });
                        await s.session.query("b");
                    });
                });
            });"#,
        );
        assert_eq!(found.stages.len(), 2);
        assert!(matches!(found.stages[0].headless, Headless::Bool(true, _)));
        assert_eq!(found.stages[1].headless, Headless::Absent);
        assert_eq!(found.stages[0].queries.len(), 1);
        assert!(found.stages[0].queries[0].options.is_none());
        assert!(found.stages[1].queries[0].options.is_some());
    }

    #[test]
    fn input_reads_in_every_form_and_only_value_imports() {
        let found = sessions(
            r#"import type { query } from "sdk";
            import { type Options, query as q } from "sdk";
            import * as ns from "sdk";
            defineWorkflow({}).run(async ({ inputs, stage }) => {
                const { a, "b": c } = inputs;
                inputs.d;
                await stage({ name: "x" }, {}, {}, async (s) => { s.inputs["e"]; s.inputs?.f; });
            });
            function helper(ctx) { return ctx.inputs.g; }"#,
        );
        let names: Vec<&str> = found.inputs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "d", "e", "f"]);
        let imports: Vec<(Option<&str>, &str)> =
            found.imports.iter().map(|i| (i.imported.as_deref(), i.local.as_str())).collect();
        assert_eq!(imports, [(Some("query"), "q"), (None, "ns")]);
    }
}
