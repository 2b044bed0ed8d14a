//! A workflow of `@bastani/workflows` read into plain data: 0.9's `workflow({...})` definitions
//! (their spec, `inputs`/`outputs` schema maps and what `run` returns), 0.8's
//! `defineWorkflow("name")…compile()` builder chains (with what the migration needs), the
//! `ctx.task/chain/parallel/stage/workflow/tool/exit/ui` calls with their options and where they
//! sit (arms, loops, helpers), stage handles and task results and what is done with them, the
//! imports and exports. Like the rest of `model`, built from oxc's AST while it lives.

use std::collections::HashMap;

use oxc_ast::AstKind;
use oxc_ast::ast::{
    Argument, BindingPatternKind, CallExpression, ConditionalExpression, Declaration, Expression, FormalParameters,
    IfStatement, ImportDeclarationSpecifier, ObjectPropertyKind, Program, PropertyKey, Statement, SwitchStatement,
    TSType, UnaryOperator, VariableDeclarator,
};
use oxc_ast_visit::{Visit, walk};
use oxc_span::GetSpan;

use super::flow::{self, Arms, Name};
use super::session::InputRead;
use super::{Object, Value, read_value, span};
use crate::source::Span;

/// What the reader found in one file.
#[derive(Debug, Default)]
pub struct Current {
    /// `workflow({...})` calls, in order.
    pub definitions: Vec<Definition>,
    /// 0.8 builder chains, outermost call first.
    pub builders: Vec<Builder>,
    /// `ctx.*` calls, in order.
    pub calls: Vec<Call>,
    /// Methods called on stage handles (`const h = ctx.stage(…)`; `h.prompt(…)`).
    pub handle_uses: Vec<HandleUse>,
    /// `.structured` read off a task result.
    pub structured: Vec<ResultRead>,
    /// Regular expressions run on a task's or stage's text where a decision is made.
    pub prose_gates: Vec<ResultRead>,
    pub inputs: Vec<InputRead>,
    pub imports: Vec<ImportDecl>,
    pub exports: Vec<ExportItem>,
    /// `__piWorkflow` keys of object literals.
    pub hand_built: Vec<Span>,
    /// Imports the authoring API by a relative path: one of the SDK's own bundled workflows.
    pub own_sdk: bool,
    /// `def.run(…)` on a name bound to a workflow definition (imported or local).
    pub run_calls: Vec<(String, Span)>,
    /// Members of the run context that `WorkflowRunContext` does not have (`ctx.transcript`).
    pub unknown_members: Vec<(String, Span)>,
    /// The arms the calls sit in (see [`flow::Arms`]).
    pub arms: Arms,
}

/// One `workflow(spec)` call.
#[derive(Debug)]
pub struct Definition {
    /// The `workflow` callee.
    pub callee: Span,
    pub call: Span,
    /// The spec, when it is an object literal.
    pub spec: Option<Object>,
    pub inputs: Option<SchemaMap>,
    pub outputs: Option<SchemaMap>,
    pub run: Option<RunFn>,
    /// The name it is bound to (`const research = workflow(…)`).
    pub binding: Option<String>,
    /// `export default` (directly or through its binding).
    pub default_export: bool,
}

/// `inputs` or `outputs` of a spec.
#[derive(Debug, Clone)]
pub struct SchemaMap {
    /// The value of the key.
    pub span: Span,
    /// What it is when it is no object literal: "an array", "a string", ….
    pub not_map: Option<&'static str>,
    pub entries: Vec<Schema>,
    /// Has a spread or computed key.
    pub open: bool,
}

/// One key of a schema map.
#[derive(Debug, Clone)]
pub struct Schema {
    pub key: String,
    pub value: Span,
    pub kind: SchemaKind,
    /// Wrapped in `Type.Optional(…)`.
    pub optional: bool,
    /// Has a `default` in its options object.
    pub default: bool,
    /// `description` of its options object, when a string literal.
    pub description: Option<String>,
}

/// What a schema map's value is, as far as its text says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaKind {
    /// `Type.<builder>(…)`, with the builder's name (`String`, `Union`, …).
    Type(String),
    /// A name, a call or anything else that may hold a schema.
    Unknown,
    /// A literal that is no schema: "a string", "a number", "a boolean", "an array".
    NotSchema(&'static str),
}

/// The `run` function of a spec or builder.
#[derive(Debug)]
pub struct RunFn {
    /// The `run` key (or the `.run` property of a builder).
    pub at: Span,
    pub is_function: bool,
    /// What it is when it is surely no function ("a string", …).
    pub not_function: Option<(Span, &'static str)>,
    /// The function's returns: object literals, `ctx.exit(…)`, or other values.
    pub returns: Vec<Return>,
    /// Whether its body has no `return` with a value (an arrow's expression body counts).
    pub returns_nothing: bool,
    /// The end of the body, where a missing return would go.
    pub body_end: usize,
}

#[derive(Debug)]
pub enum Return {
    Object(Object),
    /// `return ctx.exit(…)`.
    Exit,
    Other,
}

/// One link of a builder chain: `.description(…)`, `.input(…)`, ….
#[derive(Debug)]
pub struct Link {
    pub method: String,
    pub args: Vec<Span>,
    /// `.input(key, schema)` and `.output(key, schema)`: the key (a string literal) and schema.
    pub schema: Option<Schema>,
}

impl Builder {
    /// The `.input(…)` (`"input"`) or `.output(…)` (`"output"`) calls as a schema map (spanning
    /// the chain); open when a key is not a string literal.
    pub fn map(&self, method: &str) -> SchemaMap {
        let links = self.links.iter().filter(|l| l.method == method);
        SchemaMap {
            span: self.define,
            not_map: None,
            entries: links.clone().filter_map(|l| l.schema.clone()).collect(),
            open: links.clone().any(|l| l.schema.is_none()),
        }
    }
}

/// 0.8's `defineWorkflow(name)…` chain.
#[derive(Debug)]
pub struct Builder {
    /// The whole chain expression.
    pub span: Span,
    /// `defineWorkflow`.
    pub define: Span,
    /// Its argument.
    pub name_arg: Option<Span>,
    pub links: Vec<Link>,
    pub run: Option<RunFn>,
    /// Comments inside the chain but outside every argument (a rewrite would drop them).
    pub loose_comments: bool,
}

/// What a `ctx` call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallKind {
    Task,
    Chain,
    Parallel,
    Stage,
    Workflow,
    Tool,
    Exit,
    /// `ctx.ui.select`, the one UI prompt whose options are checked.
    UiSelect,
}

/// One `ctx.*` call.
#[derive(Debug)]
pub struct Call {
    pub kind: CallKind,
    pub call: Span,
    /// `ctx.task`.
    pub callee: Span,
    /// The stage name: the first argument of task/stage/tool, `stageName` of a child
    /// workflow.
    pub name: Option<(Name, Span)>,
    /// The options object literal (task/stage: second argument, chain/parallel: second,
    /// workflow: second, tool: fourth, exit: first), when it is one.
    pub options: Option<Object>,
    /// Whether an options argument is given at all.
    pub has_options: bool,
    /// Chain and parallel steps that are object literals, and whether all of them are.
    pub steps: Vec<Object>,
    pub steps_open: bool,
    /// `ctx.workflow`'s first argument.
    pub child: Option<Child>,
    /// What the name argument of task/stage/tool is when it is a literal but no string.
    pub name_not_string: Option<(Span, &'static str)>,
    /// `ctx.ui.select`'s choices when they are an empty array literal.
    pub empty_choices: Option<Span>,
    /// The node of [`Current::arms`] it is in.
    pub arm: u32,
    /// The loop it repeats in.
    pub repeats: Option<Span>,
    /// In a function the reader cannot place in time (a helper).
    pub deferred: bool,
}

/// What `ctx.workflow` is given.
#[derive(Debug)]
pub enum Child {
    /// A name: an imported or local definition (or anything else).
    Name(String, Span),
    /// A string, template, object literal or other literal: no definition.
    Literal(Span, &'static str),
    Other,
}

/// A method called on a stage handle.
#[derive(Debug)]
pub struct HandleUse {
    /// The `ctx.stage` call in [`Current::calls`].
    pub stage: usize,
    pub method: String,
    pub at: Span,
    pub arm: u32,
    pub repeats: Option<Span>,
}

/// A read of a task result or stage text, with the call it came from.
#[derive(Debug)]
pub struct ResultRead {
    pub call: usize,
    pub at: Span,
}

/// An import declaration.
#[derive(Debug)]
pub struct ImportDecl {
    pub module: String,
    pub span: Span,
    pub type_only: bool,
    pub specifiers: Vec<Specifier>,
}

#[derive(Debug)]
pub struct Specifier {
    /// The exported name; `None` for a default or namespace import.
    pub imported: Option<String>,
    pub local: String,
    pub is_type: bool,
    pub span: Span,
}

/// A runtime export of the module.
#[derive(Debug)]
pub struct ExportItem {
    /// `default` or the exported name.
    pub name: String,
    pub span: Span,
    /// Whether it is a workflow definition, as far as the file shows.
    pub definition: bool,
}

impl Current {
    /// The local name `imported` is bound to from `module`, if imported (as a value).
    pub fn local_of(&self, module_matches: impl Fn(&str) -> bool, imported: &str) -> Option<&str> {
        self.imports.iter().filter(|i| module_matches(&i.module) && !i.type_only).find_map(|i| {
            i.specifiers
                .iter()
                .find(|s| !s.is_type && s.imported.as_deref() == Some(imported))
                .map(|s| s.local.as_str())
        })
    }
}

/// Reads `program`.
pub fn read(program: &Program) -> Current {
    let mut reader = Reader::default();
    reader.collect_imports(program);
    reader.visit_program(program);
    reader.collect_exports(program);
    reader.out
}

/// Whether `module` is where a workflow imports the authoring API from.
fn is_sdk(module: &str) -> bool {
    // `@bastani/atomic/workflows` re-exports the same API from 0.9.
    matches!(module, "@bastani/workflows" | "@bastani/atomic/workflows")
        || crate::workspace::atomic::is_own_authoring(module)
}

/// The members of `WorkflowRunContext` (`shared/authoring-contract-ui.ts`, with `models`).
pub const CONTEXT_MEMBERS: [&str; 12] =
    ["inputs", "runId", "cwd", "models", "exit", "stage", "task", "chain", "parallel", "workflow", "ui", "tool"];

#[derive(Default)]
struct Reader {
    out: Current,
    /// The local names of `workflow` and `defineWorkflow`.
    workflow_fn: Vec<String>,
    define_fn: Vec<String>,
    /// Function starts that are a `run` function.
    run_fns: Vec<u32>,
    /// The context names in scope, with the function that binds them and whether it surely is
    /// the run context (the run function's or a `WorkflowRunContext` parameter, not just one
    /// named `ctx`).
    contexts: Vec<(String, u32, bool)>,
    /// Function frames: (start, kind).
    frames: Vec<(u32, Frame)>,
    arm: u32,
    repeats: Vec<Option<Span>>,
    /// Functions that are array-method callbacks (by start), with the method's name.
    array_callbacks: HashMap<u32, Span>,
    iife: Vec<u32>,
    /// Names bound to stage handles, task results and stage texts: name → (what, call).
    bindings: HashMap<String, (Bound, usize)>,
    /// Names bound to definitions (local `workflow(...)` or imported from another module).
    definitions: Vec<String>,
    /// Regex literal names: `const APPROVED = /.../`.
    regexes: Vec<String>,
    /// Inside the test of an `if`, `while`, `?:`, or a `!`/`&&`/`||` operand.
    test_depth: usize,
    /// Builder chain spans already read (inner calls of a chain are not chains again).
    chain_spans: Vec<Span>,
    comments: Vec<Span>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    Run,
    Repeating,
    Immediate,
    Deferred,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bound {
    Handle,
    /// A task result (`ctx.task`), or one of a chain's or parallel's results.
    Result,
    /// The text a stage's `prompt()` resolves to.
    StageText,
}

/// What a literal is, for messages.
fn literal_kind(expr: &Expression) -> Option<&'static str> {
    Some(match expr.get_inner_expression() {
        Expression::StringLiteral(_) | Expression::TemplateLiteral(_) => "a string",
        Expression::NumericLiteral(_) => "a number",
        Expression::BooleanLiteral(_) => "a boolean",
        Expression::NullLiteral(_) => "null",
        Expression::ArrayExpression(_) => "an array",
        Expression::ObjectExpression(_) => "an object",
        Expression::Identifier(id) if id.name == "undefined" => "undefined",
        _ => return None,
    })
}

fn key_name(key: &PropertyKey) -> Option<String> {
    match key {
        PropertyKey::StaticIdentifier(id) => Some(id.name.to_string()),
        PropertyKey::StringLiteral(s) => Some(s.value.to_string()),
        _ => None,
    }
}

/// A stage name argument.
fn name_of(expr: Option<&Expression>) -> Option<(Name, Span)> {
    let expr = expr?.get_inner_expression();
    let at = span(expr.span());
    Some(match expr {
        Expression::StringLiteral(s) => (Name::Static(s.value.to_string()), at),
        Expression::TemplateLiteral(t) => (flow::template(t), at),
        _ => (Name::Unknown, at),
    })
}

/// The schema a map's value holds.
fn schema(key: String, value: &Expression) -> Schema {
    let mut out = Schema {
        key,
        value: span(value.span()),
        kind: SchemaKind::Unknown,
        optional: false,
        default: false,
        description: None,
    };
    let mut expr = value.get_inner_expression();
    if let Some(kind) = literal_kind(expr).filter(|k| *k != "an object") {
        out.kind = SchemaKind::NotSchema(kind);
        return out;
    }
    // A JSON Schema object literal is a schema; v0.5's `{ type: "text", required: true }`
    // descriptor is none (no JSON Schema type is called `text` or `enum`).
    if let Value::Object(object) = read_value(expr) {
        let legacy_type = object.get("type").and_then(|p| p.value.as_str()).is_some_and(|t| t == "text" || t == "enum");
        let legacy_required = object.get("required").is_some_and(|p| matches!(p.value, Value::Bool(..)));
        if legacy_type || legacy_required {
            out.kind = SchemaKind::NotSchema("a v0.5 input descriptor (`{ type, required }`)");
        }
        return out;
    }
    // `Type.Optional(Type.String({ … }))`: the key may be absent.
    while let Expression::CallExpression(call) = expr {
        let Some(callee) = flow::dotted(&call.callee) else { break };
        let Some(builder) = callee.strip_prefix("Type.") else { break };
        if builder == "Optional" {
            out.optional = true;
            match call.arguments.first().and_then(Argument::as_expression) {
                Some(inner) => {
                    expr = inner.get_inner_expression();
                    continue;
                }
                None => break,
            }
        }
        out.kind = SchemaKind::Type(builder.to_string());
        // The options object is the last argument (`Type.Array(items, { … })`).
        if let Some(Value::Object(options)) = call.arguments.last().and_then(Argument::as_expression).map(read_value) {
            out.default = options.get("default").is_some();
            out.description = options.get("description").and_then(|p| p.value.as_str()).map(str::to_string);
        }
        break;
    }
    out
}

/// A spec's `inputs`/`outputs` value.
fn schema_map(value: &Expression) -> SchemaMap {
    let value = value.get_inner_expression();
    let at = span(value.span());
    let Expression::ObjectExpression(object) = value else {
        let not_map = match value {
            Expression::Identifier(_) | Expression::CallExpression(_) | Expression::StaticMemberExpression(_) => None,
            other => Some(literal_kind(other).unwrap_or("no object literal")),
        };
        return SchemaMap {
            span: at,
            not_map: not_map.or(Some("")).filter(|k| !k.is_empty()),
            entries: Vec::new(),
            open: true,
        };
    };
    let mut entries = Vec::new();
    let mut open = false;
    for property in &object.properties {
        match property {
            ObjectPropertyKind::ObjectProperty(p) if !p.computed => match key_name(&p.key) {
                Some(key) => entries.push(schema(key, &p.value)),
                None => open = true,
            },
            _ => open = true,
        }
    }
    SchemaMap { span: at, not_map: None, entries, open }
}

impl Reader {
    fn collect_imports(&mut self, program: &Program) {
        for statement in &program.body {
            let Statement::ImportDeclaration(decl) = statement else { continue };
            let module = decl.source.value.to_string();
            let type_only = decl.import_kind.is_type();
            let mut specifiers = Vec::new();
            for specifier in decl.specifiers.iter().flatten() {
                let (imported, local, is_type) = match specifier {
                    ImportDeclarationSpecifier::ImportSpecifier(s) => {
                        (Some(s.imported.name().to_string()), s.local.name.to_string(), s.import_kind.is_type())
                    }
                    ImportDeclarationSpecifier::ImportDefaultSpecifier(s) => (None, s.local.name.to_string(), false),
                    ImportDeclarationSpecifier::ImportNamespaceSpecifier(s) => (None, s.local.name.to_string(), false),
                };
                specifiers.push(Specifier {
                    imported,
                    local,
                    is_type: is_type || type_only,
                    span: span(specifier.span()),
                });
            }
            if !type_only {
                for s in specifiers.iter().filter(|s| !s.is_type) {
                    if is_sdk(&module) && s.imported.as_deref() == Some("workflow") {
                        self.workflow_fn.push(s.local.clone());
                    } else if is_sdk(&module) && s.imported.as_deref() == Some("defineWorkflow") {
                        self.define_fn.push(s.local.clone());
                    } else if module.starts_with('.')
                        || module.starts_with("@bastani/workflows/builtin")
                        || module.starts_with("@bastani/atomic/workflows/builtin")
                    {
                        // A default import of a workflow module, or a named one of the
                        // builtins barrel: a definition (what else a module exports is not
                        // known here).
                        self.definitions.push(s.local.clone());
                    }
                }
            }
            self.out.own_sdk |= !type_only && crate::workspace::atomic::is_own_authoring(&module);
            self.out.imports.push(ImportDecl { module, span: span(decl.span), type_only, specifiers });
        }
        if self.workflow_fn.is_empty() {
            self.workflow_fn.push("workflow".into());
        }
        if self.define_fn.is_empty() {
            self.define_fn.push("defineWorkflow".into());
        }
        self.comments = program.comments.iter().map(|c| span(c.span)).collect();
    }

    fn collect_exports(&mut self, program: &Program) {
        let is_definition_expr = |expr: &Expression, reader: &Reader| -> bool {
            match expr.get_inner_expression() {
                Expression::CallExpression(call) => {
                    let at = span(call.span);
                    reader.out.definitions.iter().any(|d| d.call == at)
                        || reader.out.builders.iter().any(|b| b.span == at)
                }
                Expression::Identifier(id) => reader.definitions.contains(&id.name.to_string()),
                _ => false,
            }
        };
        let mut exports = Vec::new();
        for statement in &program.body {
            match statement {
                Statement::ExportDefaultDeclaration(decl) => {
                    let definition = decl.declaration.as_expression().is_some_and(|e| is_definition_expr(e, self));
                    if let Some(Expression::Identifier(id)) =
                        decl.declaration.as_expression().map(Expression::get_inner_expression)
                    {
                        for d in &mut self.out.definitions {
                            if d.binding.as_deref() == Some(id.name.as_str()) {
                                d.default_export = true;
                            }
                        }
                    }
                    exports.push(ExportItem { name: "default".into(), span: span(decl.span), definition });
                }
                Statement::ExportNamedDeclaration(decl) if !decl.export_kind.is_type() => {
                    match &decl.declaration {
                        Some(Declaration::VariableDeclaration(vars)) => {
                            for d in &vars.declarations {
                                let Some(name) = d.id.get_identifier_name() else { continue };
                                let definition = d.init.as_ref().is_some_and(|e| is_definition_expr(e, self));
                                exports.push(ExportItem {
                                    name: name.to_string(),
                                    span: span(d.id.span()),
                                    definition,
                                });
                            }
                        }
                        Some(Declaration::FunctionDeclaration(f)) => {
                            let name = f.id.as_ref().map_or_else(String::new, |id| id.name.to_string());
                            let at = f.id.as_ref().map_or(span(f.span), |id| span(id.span));
                            exports.push(ExportItem { name, span: at, definition: false });
                        }
                        Some(Declaration::ClassDeclaration(c)) => {
                            let name = c.id.as_ref().map_or_else(String::new, |id| id.name.to_string());
                            let at = c.id.as_ref().map_or(span(c.span), |id| span(id.span));
                            exports.push(ExportItem { name, span: at, definition: false });
                        }
                        // Types, interfaces and `declare` forms are erased.
                        _ => {}
                    }
                    if decl.source.is_none() {
                        for s in decl.specifiers.iter().filter(|s| !s.export_kind.is_type()) {
                            let local = s.local.name().to_string();
                            let definition = self.definitions.contains(&local);
                            if s.exported.name() == "default" {
                                for d in &mut self.out.definitions {
                                    if d.binding.as_deref() == Some(local.as_str()) {
                                        d.default_export = true;
                                    }
                                }
                            }
                            exports.push(ExportItem {
                                name: s.exported.name().to_string(),
                                span: span(s.span),
                                definition,
                            });
                        }
                    }
                }
                _ => {}
            }
        }
        // `export default workflow(…)`.
        for export in &exports {
            if export.name == "default" {
                for d in &mut self.out.definitions {
                    if export.span.start <= d.call.start && d.call.end <= export.span.end {
                        d.default_export = true;
                    }
                }
            }
        }
        self.out.exports = exports;
    }

    fn deferred(&self) -> bool {
        self.frames.iter().rev().take_while(|(_, f)| *f != Frame::Run).any(|(_, f)| *f == Frame::Deferred)
    }

    fn repeats(&self) -> Option<Span> {
        self.repeats.last().copied().flatten()
    }

    fn is_context(&self, expr: &Expression) -> bool {
        matches!(expr.get_inner_expression(), Expression::Identifier(id) if self.contexts.iter().any(|(n, ..)| n == id.name.as_str()))
    }

    /// Whether `expr` surely is the run context.
    fn is_run_context(&self, expr: &Expression) -> bool {
        matches!(expr.get_inner_expression(), Expression::Identifier(id) if self.contexts.iter().rev().find(|(n, ..)| n == id.name.as_str()).is_some_and(|c| c.2))
    }

    /// What the `run` of a spec or builder is, and its returns.
    fn run_fn(&mut self, at: Span, value: &Expression) -> RunFn {
        let value = value.get_inner_expression();
        let mut run = RunFn {
            at,
            is_function: false,
            not_function: None,
            returns: Vec::new(),
            returns_nothing: false,
            body_end: span(value.span()).end,
        };
        match value {
            Expression::ArrowFunctionExpression(f) => {
                run.is_function = true;
                self.run_fns.push(f.span.start);
                run.body_end = span(f.body.span).end.saturating_sub(1);
                if f.expression {
                    if let Some(Statement::ExpressionStatement(e)) = f.body.statements.first() {
                        run.returns.push(returned(&e.expression));
                    }
                } else {
                    collect_returns(&f.body.statements, &mut run.returns);
                    run.returns_nothing = run.returns.is_empty();
                }
            }
            Expression::FunctionExpression(f) => {
                run.is_function = true;
                self.run_fns.push(f.span.start);
                if let Some(body) = &f.body {
                    run.body_end = span(body.span).end.saturating_sub(1);
                    collect_returns(&body.statements, &mut run.returns);
                    run.returns_nothing = run.returns.is_empty();
                }
            }
            other => run.not_function = literal_kind(other).map(|k| (span(other.span()), k)),
        }
        run
    }

    fn definition(&mut self, call: &CallExpression, binding: Option<String>) {
        let arg = call.arguments.first().and_then(Argument::as_expression);
        let mut definition = Definition {
            callee: span(call.callee.span()),
            call: span(call.span),
            spec: None,
            inputs: None,
            outputs: None,
            run: None,
            binding,
            default_export: false,
        };
        if let Some(Expression::ObjectExpression(object)) = arg.map(Expression::get_inner_expression) {
            for property in &object.properties {
                let ObjectPropertyKind::ObjectProperty(p) = property else { continue };
                match key_name(&p.key).as_deref().filter(|_| !p.computed) {
                    Some("inputs") => definition.inputs = Some(schema_map(&p.value)),
                    Some("outputs") => definition.outputs = Some(schema_map(&p.value)),
                    Some("run") => definition.run = Some(self.run_fn(span(p.key.span()), &p.value)),
                    _ => {}
                }
            }
            if let Value::Object(spec) = read_value(arg.expect("an argument")) {
                definition.spec = Some(spec);
            }
        }
        if let Some(name) = &definition.binding {
            self.definitions.push(name.clone());
        }
        self.out.definitions.push(definition);
    }

    /// Reads a `defineWorkflow(name)…` chain whose outermost call is `call`.
    fn builder(&mut self, call: &CallExpression) -> bool {
        let mut links = Vec::new();
        let mut current = call;
        loop {
            match current.callee.get_inner_expression() {
                Expression::Identifier(id) if self.define_fn.iter().any(|n| n == id.name.as_str()) => {
                    links.reverse();
                    let whole = span(call.span);
                    let mut builder = Builder {
                        span: whole,
                        define: span(id.span),
                        name_arg: current.arguments.first().map(|a| span(a.span())),
                        links,
                        run: None,
                        loose_comments: false,
                    };
                    let mut kept: Vec<Span> = builder.name_arg.into_iter().collect();
                    kept.extend(builder.links.iter().flat_map(|l| l.args.iter().copied()));
                    builder.loose_comments = self.comments.iter().any(|c| {
                        whole.start <= c.start
                            && c.end <= whole.end
                            && !kept.iter().any(|k| k.start <= c.start && c.end <= k.end)
                    });
                    self.chain_spans.push(whole);
                    // The run callback, read once the links are known.
                    let mut chain = call;
                    while let Expression::StaticMemberExpression(m) = chain.callee.get_inner_expression() {
                        if m.property.name == "run" && builder.run.is_none() {
                            if let Some(arg) = chain.arguments.first().and_then(Argument::as_expression) {
                                builder.run = Some(self.run_fn(span(m.property.span), arg));
                            } else {
                                builder.run = Some(RunFn {
                                    at: span(m.property.span),
                                    is_function: false,
                                    not_function: Some((span(m.property.span), "nothing")),
                                    returns: Vec::new(),
                                    returns_nothing: false,
                                    body_end: span(chain.span).end,
                                });
                            }
                        }
                        match m.object.get_inner_expression() {
                            Expression::CallExpression(c) => chain = c,
                            _ => break,
                        }
                    }
                    self.out.builders.push(builder);
                    return true;
                }
                Expression::StaticMemberExpression(m) => {
                    let method = m.property.name.to_string();
                    let declared = match current.arguments.as_slice() {
                        [key, value] if matches!(method.as_str(), "input" | "output") => {
                            match (key.as_expression().map(Expression::get_inner_expression), value.as_expression()) {
                                (Some(Expression::StringLiteral(k)), Some(v)) => Some(schema(k.value.to_string(), v)),
                                _ => None,
                            }
                        }
                        _ => None,
                    };
                    links.push(Link {
                        method,
                        args: current.arguments.iter().map(|a| span(a.span())).collect(),
                        schema: declared,
                    });
                    match m.object.get_inner_expression() {
                        Expression::CallExpression(inner) => current = inner,
                        _ => return false,
                    }
                }
                _ => return false,
            }
        }
    }

    fn ctx_call(&mut self, call: &CallExpression, kind: CallKind) -> usize {
        let args: Vec<Option<&Expression>> = call.arguments.iter().map(Argument::as_expression).collect();
        let object = |i: usize| match args.get(i).copied().flatten().map(read_value) {
            Some(Value::Object(object)) => Some(object),
            _ => None,
        };
        let (name, options_at) = match kind {
            CallKind::Task | CallKind::Stage | CallKind::Tool => {
                (name_of(args.first().copied().flatten()), if kind == CallKind::Tool { 3 } else { 1 })
            }
            CallKind::Chain | CallKind::Parallel | CallKind::Workflow => (None, 1),
            CallKind::Exit => (None, 0),
            CallKind::UiSelect => (None, 1),
        };
        let options = object(options_at);
        let mut steps = Vec::new();
        let mut steps_open = false;
        if matches!(kind, CallKind::Chain | CallKind::Parallel) {
            match args.first().copied().flatten().map(Expression::get_inner_expression) {
                Some(Expression::ArrayExpression(array)) => {
                    for element in &array.elements {
                        match element.as_expression().map(read_value) {
                            Some(Value::Object(step)) => steps.push(step),
                            _ => steps_open = true,
                        }
                    }
                }
                _ => steps_open = true,
            }
        }
        let child = (kind == CallKind::Workflow).then(|| {
            match args.first().copied().flatten().map(Expression::get_inner_expression) {
                Some(Expression::Identifier(id)) => Child::Name(id.name.to_string(), span(id.span)),
                Some(e) => match literal_kind(e) {
                    Some(what) => Child::Literal(span(e.span()), what),
                    None => Child::Other,
                },
                None => Child::Literal(span(call.span), "nothing"),
            }
        });
        let name = match kind {
            CallKind::Workflow => options.as_ref().and_then(|o| o.get("stageName")).map(|p| match &p.value {
                Value::Str(text, at) => (Name::Static(text.clone()), *at),
                other => (Name::Unknown, other.span()),
            }),
            _ => name,
        };
        let name_not_string = match kind {
            CallKind::Task | CallKind::Stage | CallKind::Tool => args
                .first()
                .copied()
                .flatten()
                .and_then(|e| literal_kind(e).filter(|k| *k != "a string").map(|k| (span(e.span()), k))),
            _ => None,
        };
        let empty_choices = match (kind, args.get(1).copied().flatten().map(Expression::get_inner_expression)) {
            (CallKind::UiSelect, Some(Expression::ArrayExpression(a))) if a.elements.is_empty() => Some(span(a.span)),
            _ => None,
        };
        let index = self.out.calls.len();
        self.out.calls.push(Call {
            kind,
            name_not_string,
            empty_choices,
            call: span(call.span),
            callee: span(call.callee.span()),
            name,
            has_options: args.len() > options_at,
            options,
            steps,
            steps_open,
            child,
            arm: self.arm,
            repeats: self.repeats(),
            deferred: self.deferred(),
        });
        index
    }

    /// The `ctx` call `expr` is (through `await`), with its index once recorded.
    fn call_kind(&self, call: &CallExpression) -> Option<CallKind> {
        let Expression::StaticMemberExpression(m) = call.callee.get_inner_expression() else { return None };
        if self.is_context(&m.object) {
            return Some(match m.property.name.as_str() {
                "task" => CallKind::Task,
                "chain" => CallKind::Chain,
                "parallel" => CallKind::Parallel,
                "stage" => CallKind::Stage,
                "workflow" => CallKind::Workflow,
                "tool" => CallKind::Tool,
                "exit" => CallKind::Exit,
                _ => return None,
            });
        }
        if m.property.name == "select"
            && let Expression::StaticMemberExpression(ui) = m.object.get_inner_expression()
            && ui.property.name == "ui"
            && self.is_context(&ui.object)
        {
            return Some(CallKind::UiSelect);
        }
        None
    }

    /// Binds `const x = [await] ctx.task(…)` and its kin.
    fn note_binding(&mut self, decl: &VariableDeclarator) {
        let Some(init) = decl.init.as_ref().map(Expression::get_inner_expression) else { return };
        let (awaited, inner) = match init {
            Expression::AwaitExpression(a) => (true, a.argument.get_inner_expression()),
            other => (false, other),
        };
        match (&decl.id.kind, inner) {
            (BindingPatternKind::BindingIdentifier(id), Expression::RegExpLiteral(_)) => {
                self.regexes.push(id.name.to_string());
            }
            (BindingPatternKind::BindingIdentifier(id), Expression::CallExpression(call)) => {
                let name = id.name.to_string();
                if let Some(index) = self.out.calls.iter().position(|c| c.call == span(call.span)) {
                    let kind = self.out.calls[index].kind;
                    let bound = match kind {
                        CallKind::Stage if !awaited => Some(Bound::Handle),
                        CallKind::Task | CallKind::Chain | CallKind::Parallel if awaited => Some(Bound::Result),
                        _ => None,
                    };
                    if let Some(bound) = bound {
                        self.bindings.insert(name, (bound, index));
                    }
                    return;
                }
                // `await h.prompt(…)` on a stage handle.
                if awaited
                    && let Expression::StaticMemberExpression(m) = call.callee.get_inner_expression()
                    && m.property.name == "prompt"
                    && let Expression::Identifier(h) = m.object.get_inner_expression()
                    && let Some((Bound::Handle, stage)) = self.bindings.get(h.name.as_str()).copied()
                {
                    self.bindings.insert(name, (Bound::StageText, stage));
                }
            }
            // `const [a, b] = await ctx.parallel([...])`.
            (BindingPatternKind::ArrayPattern(pattern), Expression::CallExpression(call)) if awaited => {
                if let Some(index) = self.out.calls.iter().position(|c| c.call == span(call.span))
                    && matches!(self.out.calls[index].kind, CallKind::Chain | CallKind::Parallel)
                {
                    for element in pattern.elements.iter().flatten() {
                        if let Some(name) = element.get_identifier_name() {
                            self.bindings.insert(name.to_string(), (Bound::Result, index));
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// The task result or stage text `expr` reads (`r.text`, `r`, `(await ctx.task(…)).text`).
    fn result_of(&self, expr: &Expression) -> Option<(Bound, usize)> {
        match expr.get_inner_expression() {
            Expression::Identifier(id) => self.bindings.get(id.name.as_str()).copied(),
            Expression::StaticMemberExpression(m) if m.property.name == "text" => match self.result_of(&m.object) {
                Some((Bound::Result, i)) => Some((Bound::StageText, i)),
                _ => None,
            },
            Expression::ComputedMemberExpression(m) => self.result_of(&m.object),
            _ => None,
        }
    }

    /// A regular expression run on a result's text: `/re/.test(r.text)`, `r.text.match(/re/)`.
    fn note_gate(&mut self, call: &CallExpression) {
        if self.test_depth == 0 {
            return;
        }
        let Expression::StaticMemberExpression(m) = call.callee.get_inner_expression() else { return };
        let is_regex = |e: &Expression, reader: &Reader| match e.get_inner_expression() {
            Expression::RegExpLiteral(_) => true,
            Expression::NewExpression(n) => flow::dotted(&n.callee).is_some_and(|d| d == "RegExp"),
            Expression::Identifier(id) => reader.regexes.contains(&id.name.to_string()),
            _ => false,
        };
        let subject = match m.property.name.as_str() {
            "test" | "exec" if is_regex(&m.object, self) => call.arguments.first().and_then(Argument::as_expression),
            "match" | "search" | "matchAll"
                if call.arguments.first().and_then(Argument::as_expression).is_some_and(|a| is_regex(a, self)) =>
            {
                Some(&m.object)
            }
            _ => None,
        };
        if let Some(subject) = subject
            && let Some((Bound::StageText, index)) = self.result_of(subject)
        {
            self.out.prose_gates.push(ResultRead { call: index, at: span(call.span) });
        }
    }

    fn enter_function(&mut self, start: u32, params: &FormalParameters) {
        let frame = if self.run_fns.contains(&start) {
            Frame::Run
        } else if self.array_callbacks.contains_key(&start) {
            Frame::Repeating
        } else if self.iife.contains(&start) {
            Frame::Immediate
        } else {
            Frame::Deferred
        };
        if frame == Frame::Repeating {
            self.repeats.push(self.array_callbacks.get(&start).copied());
        }
        // The run function's first parameter, a parameter typed `WorkflowRunContext`, or one
        // named `ctx` (the name atomic's docs give it) is a context.
        if let Some(first) = params.items.first()
            && let Some(name) = first.pattern.get_identifier_name()
        {
            let typed = first.pattern.type_annotation.as_ref().is_some_and(|t| match &t.type_annotation {
                TSType::TSTypeReference(r) => r.type_name.to_string().ends_with("WorkflowRunContext"),
                _ => false,
            });
            if frame == Frame::Run || typed || name == "ctx" {
                self.contexts.push((name.to_string(), start, frame == Frame::Run || typed));
            }
        }
        self.frames.push((start, frame));
    }

    fn leave_function(&mut self) {
        let Some((start, frame)) = self.frames.pop() else { return };
        while self.contexts.last().is_some_and(|(_, s, _)| *s == start) {
            self.contexts.pop();
        }
        if frame == Frame::Repeating {
            self.repeats.pop();
        }
    }

    fn enter_arm(&mut self, construct: u32, arm: u32) {
        self.arm = self.out.arms.push(self.arm, construct, arm);
    }

    fn leave_arm(&mut self) {
        self.arm = self.out.arms.parent(self.arm);
    }

    fn looping(&mut self, at: oxc_span::Span, keyword: usize, body: &Statement, walk: impl FnOnce(&mut Self)) {
        let start = at.start as usize;
        self.repeats.push(if flow::exits(body) { None } else { Some(Span::new(start, start + keyword)) });
        walk(self);
        self.repeats.pop();
    }

    fn tested(&mut self, expr: &Expression<'_>) {
        self.test_depth += 1;
        self.visit_expression(expr);
        self.test_depth -= 1;
    }
}

/// What a return statement's value is.
fn returned(expr: &Expression) -> Return {
    let expr = expr.get_inner_expression();
    let expr = match expr {
        Expression::AwaitExpression(a) => a.argument.get_inner_expression(),
        other => other,
    };
    if let Expression::CallExpression(call) = expr
        && flow::dotted(&call.callee).is_some_and(|d| d.ends_with(".exit"))
    {
        return Return::Exit;
    }
    match read_value(expr) {
        Value::Object(object) => Return::Object(object),
        _ => Return::Other,
    }
}

/// The `return` statements of a function body, not of the functions inside it.
fn collect_returns(statements: &[Statement], out: &mut Vec<Return>) {
    struct Returns<'o> {
        out: &'o mut Vec<Return>,
    }
    impl<'a> Visit<'a> for Returns<'_> {
        fn visit_return_statement(&mut self, it: &oxc_ast::ast::ReturnStatement<'a>) {
            if let Some(argument) = &it.argument {
                self.out.push(returned(argument));
            }
        }
        // Only the body's own statements are visited here: every function inside it has a body.
        fn visit_function_body(&mut self, _: &oxc_ast::ast::FunctionBody<'a>) {}
    }
    let mut visitor = Returns { out };
    for statement in statements {
        visitor.visit_statement(statement);
    }
}

impl<'a> Visit<'a> for Reader {
    fn enter_node(&mut self, kind: AstKind<'a>) {
        match kind {
            AstKind::Function(f) => self.enter_function(f.span.start, &f.params),
            AstKind::ArrowFunctionExpression(f) => self.enter_function(f.span.start, &f.params),
            _ => {}
        }
    }

    fn leave_node(&mut self, kind: AstKind<'a>) {
        if matches!(kind, AstKind::Function(_) | AstKind::ArrowFunctionExpression(_)) {
            self.leave_function();
        }
    }

    fn visit_variable_declarator(&mut self, decl: &VariableDeclarator<'a>) {
        // A definition's binding, known before its call is read.
        if let (Some(name), Some(Expression::CallExpression(call))) =
            (decl.id.get_identifier_name(), decl.init.as_ref().map(Expression::get_inner_expression))
            && let Expression::Identifier(callee) = call.callee.get_inner_expression()
            && self.workflow_fn.iter().any(|n| n == callee.name.as_str())
        {
            self.definition(call, Some(name.to_string()));
            walk::walk_variable_declarator(self, decl);
            return;
        }
        walk::walk_variable_declarator(self, decl);
        self.note_binding(decl);
    }

    fn visit_object_property(&mut self, it: &oxc_ast::ast::ObjectProperty<'a>) {
        if !it.computed && key_name(&it.key).as_deref() == Some("__piWorkflow") {
            self.out.hand_built.push(span(it.key.span()));
        }
        walk::walk_object_property(self, it);
    }

    fn visit_call_expression(&mut self, call: &CallExpression<'a>) {
        let callee = call.callee.get_inner_expression();
        if let Some(start) = flow::function_start(callee) {
            self.iife.push(start);
        }
        match callee {
            Expression::Identifier(id)
                if self.workflow_fn.iter().any(|n| n == id.name.as_str())
                    && !self.out.definitions.iter().any(|d| d.call == span(call.span)) =>
            {
                self.definition(call, None);
            }
            Expression::StaticMemberExpression(_)
                if !self
                    .chain_spans
                    .iter()
                    .any(|s| s.start <= call.span.start as usize && call.span.end as usize <= s.end) =>
            {
                self.builder(call);
            }
            _ => {}
        }
        if let Expression::StaticMemberExpression(m) = callee {
            let method = m.property.name.as_str();
            if flow::ARRAY_METHODS.contains(&method)
                && let Some(start) =
                    call.arguments.first().and_then(Argument::as_expression).and_then(flow::function_start)
            {
                self.array_callbacks.insert(start, span(m.property.span));
            }
            if let Expression::Identifier(receiver) = m.object.get_inner_expression() {
                if let Some((Bound::Handle, stage)) = self.bindings.get(receiver.name.as_str()).copied() {
                    self.out.handle_uses.push(HandleUse {
                        stage,
                        method: method.to_string(),
                        at: span(call.span),
                        arm: self.arm,
                        repeats: self.repeats(),
                    });
                }
                if method == "run" && self.definitions.contains(&receiver.name.to_string()) {
                    self.out.run_calls.push((receiver.name.to_string(), span(call.span)));
                }
            }
        }
        self.note_gate(call);
        if let Some(kind) = self.call_kind(call) {
            self.ctx_call(call, kind);
        }
        walk::walk_call_expression(self, call);
    }

    fn visit_static_member_expression(&mut self, member: &oxc_ast::ast::StaticMemberExpression<'a>) {
        // A cast (`(ctx as Ctx & { extra }).extra`) says the member is meant to be there.
        if matches!(&member.object, Expression::Identifier(_))
            && self.is_run_context(&member.object)
            && !CONTEXT_MEMBERS.contains(&member.property.name.as_str())
        {
            self.out.unknown_members.push((member.property.name.to_string(), span(member.property.span)));
        }
        // `ctx.inputs.x`.
        if let Expression::StaticMemberExpression(inputs) = member.object.get_inner_expression()
            && inputs.property.name == "inputs"
            && self.is_context(&inputs.object)
        {
            self.out
                .inputs
                .push(InputRead { name: member.property.name.to_string(), span: span(member.property.span) });
        }
        if member.property.name == "structured"
            && let Some((Bound::Result, index)) = self.result_of(&member.object)
        {
            self.out.structured.push(ResultRead { call: index, at: span(member.property.span) });
        }
        // `(await ctx.task(…)).structured`.
        if member.property.name == "structured"
            && let Expression::AwaitExpression(a) = member.object.get_inner_expression()
            && let Expression::CallExpression(call) = a.argument.get_inner_expression()
            && self.call_kind(call) == Some(CallKind::Task)
        {
            walk::walk_static_member_expression(self, member);
            if let Some(index) = self.out.calls.iter().position(|c| c.call == span(call.span)) {
                self.out.structured.push(ResultRead { call: index, at: span(member.property.span) });
            }
            return;
        }
        walk::walk_static_member_expression(self, member);
    }

    fn visit_computed_member_expression(&mut self, member: &oxc_ast::ast::ComputedMemberExpression<'a>) {
        if let Expression::StaticMemberExpression(inputs) = member.object.get_inner_expression()
            && inputs.property.name == "inputs"
            && self.is_context(&inputs.object)
            && let Expression::StringLiteral(key) = member.expression.get_inner_expression()
        {
            let at = span(key.span);
            let inner = Span::new(at.start + 1, at.end.saturating_sub(1).max(at.start + 1));
            self.out.inputs.push(InputRead { name: key.value.to_string(), span: inner });
        }
        walk::walk_computed_member_expression(self, member);
    }

    fn visit_variable_declaration(&mut self, it: &oxc_ast::ast::VariableDeclaration<'a>) {
        walk::walk_variable_declaration(self, it);
        // `const { a, b } = ctx.inputs`.
        for decl in &it.declarations {
            if let Some(Expression::StaticMemberExpression(m)) =
                decl.init.as_ref().map(Expression::get_inner_expression)
                && m.property.name == "inputs"
                && self.is_context(&m.object)
                && let BindingPatternKind::ObjectPattern(object) = &decl.id.kind
            {
                for property in object.properties.iter().filter(|p| !p.computed) {
                    if let Some(name) = key_name(&property.key) {
                        self.out.inputs.push(InputRead { name, span: span(property.key.span()) });
                    }
                }
            }
        }
    }

    fn visit_if_statement(&mut self, it: &IfStatement<'a>) {
        self.tested(&it.test);
        self.enter_arm(it.span.start, 0);
        self.visit_statement(&it.consequent);
        self.leave_arm();
        if let Some(alternate) = &it.alternate {
            self.enter_arm(it.span.start, 1);
            self.visit_statement(alternate);
            self.leave_arm();
        }
    }

    fn visit_conditional_expression(&mut self, it: &ConditionalExpression<'a>) {
        self.tested(&it.test);
        self.enter_arm(it.span.start, 0);
        self.visit_expression(&it.consequent);
        self.leave_arm();
        self.enter_arm(it.span.start, 1);
        self.visit_expression(&it.alternate);
        self.leave_arm();
    }

    fn visit_switch_statement(&mut self, it: &SwitchStatement<'a>) {
        self.visit_expression(&it.discriminant);
        let mut group = 0;
        for case in &it.cases {
            self.enter_arm(it.span.start, group);
            let leaves =
                case.consequent.last().is_some_and(|s| flow::exits(s) || matches!(s, Statement::ContinueStatement(_)));
            self.visit_switch_case(case);
            self.leave_arm();
            if leaves {
                group += 1;
            }
        }
    }

    fn visit_unary_expression(&mut self, it: &oxc_ast::ast::UnaryExpression<'a>) {
        if it.operator == UnaryOperator::LogicalNot {
            self.tested(&it.argument);
        } else {
            walk::walk_unary_expression(self, it);
        }
    }

    fn visit_logical_expression(&mut self, it: &oxc_ast::ast::LogicalExpression<'a>) {
        self.tested(&it.left);
        self.tested(&it.right);
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
        self.looping(it.span, 5, &it.body, |w| {
            w.tested(&it.test);
            w.visit_statement(&it.body);
        });
    }

    fn visit_do_while_statement(&mut self, it: &oxc_ast::ast::DoWhileStatement<'a>) {
        self.looping(it.span, 2, &it.body, |w| {
            w.visit_statement(&it.body);
            w.tested(&it.test);
        });
    }
}
