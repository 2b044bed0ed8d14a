//! One atomic workflow file read into plain data. For v0.5 to 0.7: the `defineWorkflow(...)`
//! chain that is exported by default (its options, `.for<"x">()`, `.run(...)` and `.compile()`
//! calls), the `ctx.stage(...)` option objects, the calls the provider rules look for, the
//! comments, and the stage graph of the `.run(...)` callback (`flow`). For `@bastani/workflows`
//! (0.8 and 0.9): `current`.
//! Built from oxc's AST, which lives only while the file is read: rules never see oxc types.

pub mod current;
pub mod flow;

use oxc_allocator::Allocator;
use oxc_ast::ast::{
    Argument, ArrayExpressionElement, Declaration, Expression, ObjectPropertyKind, Program, PropertyKey, Statement,
    TSLiteral, TSType,
};
use oxc_ast_visit::{Visit, walk};
use oxc_parser::Parser;
use oxc_span::{GetSpan, SourceType};

mod agents;
pub mod session;

pub use agents::AgentRef;

use super::depth::{self, scan};
use crate::source::Span;
use crate::workspace::SourceFile;

/// The parse of one file.
#[derive(Debug, Default)]
pub struct WorkflowFile {
    /// A fatal problem: the first parse error, or nesting too deep to parse. No AST rule runs.
    pub syntax: Option<(Span, String)>,
    /// The problem is stagelint's limit, not a parse error: atomic may load the file.
    pub too_deep: bool,
    /// Where `export default` is, and what it exports.
    pub export: Option<Export>,
    /// The `defineWorkflow` chain: the exported one, else the first in the file.
    pub chain: Option<Chain>,
    /// `ctx.stage(stageOpts, clientOpts, sessionOpts, fn)` calls: each of the three option
    /// arguments that is an object literal.
    pub stages: Vec<[Option<Object>; 3]>,
    /// Calls and constructions by their dotted callee (`client.session.create`), for the
    /// provider rules; `new` ones start with `new `.
    pub calls: Vec<(String, Span)>,
    /// What the callbacks do with their sessions and inputs (`session`).
    pub session: session::Sessions,
    /// The stage graph of the `.run(...)` callback (`flow`).
    pub flow: flow::Flow,
    /// The agent names the file uses (`--agent x`, `agent: "x"`).
    pub agent_refs: Vec<AgentRef>,
    /// The file read as `@bastani/workflows` code (only when parsed as such).
    pub current: current::Current,
    /// `extractAssistantText(…)` calls: the callee, how many arguments, and where the first
    /// argument ends.
    pub extract_text: Vec<(Span, usize, usize)>,
    /// The agent every `.for("x")` (or `.for<"x">()`) of the file names: 0.6–0.7 files may
    /// define one workflow per agent.
    pub for_agents: Vec<String>,
}

/// The `export default` statement.
#[derive(Debug)]
pub struct Export {
    /// The `export default` keywords and what follows, up to the statement's end.
    pub span: Span,
    /// Whether it exports (directly or through a `const`) a `defineWorkflow` chain.
    pub is_chain: bool,
}

/// `defineWorkflow(options).for<"a">().run(fn).compile()`, links in any order and number.
#[derive(Debug)]
pub struct Chain {
    /// The `defineWorkflow` callee.
    pub define: Span,
    pub options: Option<Object>,
    /// Whether `defineWorkflow` is given any argument at all.
    pub has_options: bool,
    /// `.for<"claude">()` (also 0.6's `.for("claude")`): the agent literal and its span.
    pub agent: Option<(String, Span)>,
    /// Whether `.for(…)` is called at all.
    pub has_for: bool,
    /// The agent given as `.for("claude")`'s argument (0.6 and later read only this).
    pub agent_arg: Option<(String, Span)>,
    pub runs: Vec<Run>,
    /// The `compile` property of `.compile()`.
    pub compile: Option<Span>,
    /// Where the chain's last call ends (where a missing `.compile()` goes).
    pub end: usize,
}

/// One `.run(...)` call.
#[derive(Debug)]
pub struct Run {
    /// The `run` property name.
    pub name: Span,
    pub arg: RunArg,
}

#[derive(Debug, PartialEq, Eq)]
pub enum RunArg {
    Missing,
    Function,
    /// A value that is surely not a function (a literal), with its span.
    NotFunction(Span, &'static str),
    /// A name or call: may be a function.
    Unknown,
}

/// An object literal.
#[derive(Debug, Clone)]
pub struct Object {
    pub span: Span,
    pub props: Vec<Prop>,
    /// Has a spread or a computed key: its key set is not known.
    pub open: bool,
}

impl Object {
    pub fn get(&self, key: &str) -> Option<&Prop> {
        self.props.iter().find(|p| p.key == key)
    }

    /// Whether `key` is set, or a key that looks like a misspelling of it is: a missing key
    /// is then the misspelling's finding (`atomic/UnknownOption`), not one of its own.
    pub fn has_or_misspells(&self, key: &str) -> bool {
        self.get(key).is_some()
            || self.props.iter().any(|p| p.key != key && crate::util::did_you_mean(&p.key, [key]).is_some())
    }
}

#[derive(Debug, Clone)]
pub struct Prop {
    pub key: String,
    pub key_span: Span,
    pub value: Value,
}

/// A value as far as the rules need it.
#[derive(Debug, Clone)]
pub enum Value {
    /// A string literal or a template without substitutions.
    Str(String, Span),
    Array(Vec<Value>, Span),
    Object(Object),
    Bool(bool, Span),
    /// A number literal, also a negated one (`-1`).
    Num(f64, Span),
    /// Anything else.
    Other(Span),
}

impl Value {
    pub fn span(&self) -> Span {
        match self {
            Value::Str(_, span)
            | Value::Array(_, span)
            | Value::Bool(_, span)
            | Value::Num(_, span)
            | Value::Other(span) => *span,
            Value::Object(object) => object.span,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(text, _) => Some(text),
            _ => None,
        }
    }
}

fn span(s: oxc_span::Span) -> Span {
    Span::new(s.start as usize, s.end as usize)
}

/// How many parse errors `text` has (the deep-nesting refusal counts as one), for the fixer's
/// check that a fix does not break the file.
pub fn syntax_errors(text: &str) -> usize {
    let found = scan(text);
    if found.too_deep.is_some() {
        return 1;
    }
    depth::run(found.levels, || {
        let allocator = Allocator::default();
        Parser::new(&allocator, text, SourceType::ts()).parse().errors.len()
    })
    .unwrap_or(1)
}

/// The comments of a file, by span (for suppressions), or none when it cannot be parsed.
pub fn comments(text: &str) -> Vec<Span> {
    let found = scan(text);
    if found.too_deep.is_some() {
        return Vec::new();
    }
    depth::run(found.levels, || {
        let allocator = Allocator::default();
        let parsed = Parser::new(&allocator, text, SourceType::ts()).parse();
        parsed.program.comments.iter().map(|c| span(c.span)).collect()
    })
    .unwrap_or_default()
}

impl WorkflowFile {
    /// Parses `file`; `current` reads it as `@bastani/workflows` code (`WorkflowFile::current`)
    /// instead of the v0.5 to 0.7 API.
    pub fn parse(file: &SourceFile, current: bool) -> WorkflowFile {
        let text = file.text.as_str();
        let found = scan(text);
        let refused = |at: usize, why: String| WorkflowFile {
            syntax: Some((Span::new(at, (at + 1).min(text.len())), why)),
            too_deep: true,
            ..WorkflowFile::default()
        };
        if let Some(at) = found.too_deep {
            return refused(at.offset, format!("{}; stagelint does not parse a file this deep", at.what.message()));
        }
        let parsed = depth::run(found.levels, || Self::read(file, text, current));
        parsed.unwrap_or_else(|| refused(0, "no thread with a stack deep enough for this file could be made".into()))
    }

    /// The parse and the walks over its tree, on a stack deep enough for the file.
    fn read(file: &SourceFile, text: &str, modern: bool) -> WorkflowFile {
        let allocator = Allocator::default();
        let parsed = Parser::new(&allocator, text, SourceType::ts()).parse();
        let _ = file.comment_spans.set(parsed.program.comments.iter().map(|c| span(c.span)).collect());
        if parsed.panicked || !parsed.errors.is_empty() {
            let error = parsed.errors.first();
            let message = error.map_or_else(|| "the file cannot be parsed".to_string(), |e| e.message.to_string());
            let at = error
                .and_then(|e| e.labels.as_ref())
                .and_then(|labels| labels.first())
                .map_or(Span::empty(0), |l| Span::new(l.offset(), l.offset() + l.len()));
            let at = Span::new(at.start.min(text.len()), at.end.min(text.len()));
            return WorkflowFile { syntax: Some((at, message)), ..WorkflowFile::default() };
        }
        let mut out = WorkflowFile::default();
        if modern {
            out.current = current::read(&parsed.program);
            return out;
        }
        read_program(&parsed.program, &mut out);
        out.flow = flow::read(&parsed.program);
        out
    }
}

fn read_program(program: &Program, out: &mut WorkflowFile) {
    let mut exported: Option<&Expression> = None;
    for statement in &program.body {
        match statement {
            Statement::ExportDefaultDeclaration(decl) => {
                exported = decl.declaration.as_expression();
                let chain = exported.and_then(|e| read_chain(program, e, 0));
                out.export = Some(Export { span: span(decl.span), is_chain: chain.is_some() });
                out.chain = chain;
            }
            // `export { wf as default }` is a default export too.
            Statement::ExportNamedDeclaration(decl) if decl.source.is_none() => {
                for specifier in decl.specifiers.iter().filter(|s| s.exported.name() == "default") {
                    let local = specifier.local.name();
                    let bound = binding(program, &local);
                    exported = exported.or(bound);
                    let chain = bound.and_then(|e| read_chain(program, e, 1));
                    out.export = Some(Export { span: span(specifier.span), is_chain: chain.is_some() });
                    out.chain = chain;
                }
            }
            _ => {}
        }
    }
    let mut finder = Finder { out: Vec::new(), stages: Vec::new(), extract_text: Vec::new(), for_agents: Vec::new() };
    finder.visit_program(program);
    out.calls = finder.out;
    out.stages = finder.stages;
    out.extract_text = finder.extract_text;
    out.for_agents = finder.for_agents;
    out.session = session::read(program);
    out.agent_refs = agents::find(program);
    if exported.is_none() {
        // No default export: the first top-level chain still tells the other rules its options.
        out.chain = program.body.iter().find_map(|statement| match statement {
            Statement::ExpressionStatement(e) => read_chain(program, &e.expression, 0),
            Statement::VariableDeclaration(d) => {
                d.declarations.iter().find_map(|d| d.init.as_ref().and_then(|e| read_chain(program, e, 0)))
            }
            Statement::ExportNamedDeclaration(e) => match &e.declaration {
                Some(Declaration::VariableDeclaration(d)) => {
                    d.declarations.iter().find_map(|d| d.init.as_ref().and_then(|e| read_chain(program, e, 0)))
                }
                _ => None,
            },
            _ => None,
        });
    }
}

/// The initializer of the top-level `const name = …` (also `export const`).
fn binding<'p, 'a>(program: &'p Program<'a>, name: &str) -> Option<&'p Expression<'a>> {
    program.body.iter().find_map(|statement| {
        let declaration = match statement {
            Statement::VariableDeclaration(d) => d,
            Statement::ExportNamedDeclaration(e) => match &e.declaration {
                Some(Declaration::VariableDeclaration(d)) => d,
                _ => return None,
            },
            _ => return None,
        };
        declaration
            .declarations
            .iter()
            .find(|d| d.id.get_identifier_name().is_some_and(|n| n == name))
            .and_then(|d| d.init.as_ref())
    })
}

/// Reads a `defineWorkflow` chain from the outside in; `None` when `expr` is not one. A name
/// in the chain is followed to its `const` (a few levels, against cycles).
fn read_chain(program: &Program, expr: &Expression, hops: usize) -> Option<Chain> {
    let mut links: Vec<(&str, Span, &oxc_ast::ast::CallExpression)> = Vec::new();
    let mut current = expr.get_inner_expression();
    let end = span(expr.span()).end;
    loop {
        match current {
            Expression::CallExpression(call) => match call.callee.get_inner_expression() {
                Expression::Identifier(id) if id.name == "defineWorkflow" => {
                    let mut chain = Chain {
                        define: span(id.span),
                        options: call.arguments.first().and_then(Argument::as_expression).and_then(
                            |e| match read_value(e) {
                                Value::Object(object) => Some(object),
                                _ => None,
                            },
                        ),
                        has_options: !call.arguments.is_empty(),
                        agent: None,
                        has_for: false,
                        agent_arg: None,
                        runs: Vec::new(),
                        compile: None,
                        end,
                    };
                    for (name, at, link) in links.into_iter().rev() {
                        add_link(&mut chain, name, at, link);
                    }
                    return Some(chain);
                }
                Expression::StaticMemberExpression(member) => {
                    links.push((member.property.name.as_str(), span(member.property.span), call));
                    current = member.object.get_inner_expression();
                }
                _ => return None,
            },
            Expression::Identifier(id) if hops < 4 => {
                let mut chain = read_chain(program, binding(program, &id.name)?, hops + 1)?;
                chain.end = end;
                for (name, at, link) in links.into_iter().rev() {
                    add_link(&mut chain, name, at, link);
                }
                return Some(chain);
            }
            _ => return None,
        }
    }
}

fn add_link(chain: &mut Chain, name: &str, at: Span, call: &oxc_ast::ast::CallExpression) {
    match name {
        "for" => {
            let literal = call.type_arguments.as_ref().and_then(|t| t.params.first()).and_then(|t| match t {
                TSType::TSLiteralType(l) => match &l.literal {
                    TSLiteral::StringLiteral(s) => Some((s.value.to_string(), span(s.span))),
                    _ => None,
                },
                _ => None,
            });
            // 0.6 and later take the agent as the argument.
            let argument =
                match call.arguments.first().and_then(Argument::as_expression).map(Expression::get_inner_expression) {
                    Some(Expression::StringLiteral(s)) => Some((s.value.to_string(), span(s.span))),
                    _ => None,
                };
            chain.has_for = true;
            chain.agent_arg = argument.clone().or(chain.agent_arg.take());
            chain.agent = literal.or(argument).or(chain.agent.take());
        }
        "run" => {
            let arg = match call.arguments.first() {
                None => RunArg::Missing,
                Some(argument) => match argument.as_expression().map(Expression::get_inner_expression) {
                    Some(Expression::ArrowFunctionExpression(_) | Expression::FunctionExpression(_)) => {
                        RunArg::Function
                    }
                    Some(e @ (Expression::StringLiteral(_) | Expression::TemplateLiteral(_))) => {
                        RunArg::NotFunction(span(e.span()), "a string")
                    }
                    Some(e @ Expression::NumericLiteral(_)) => RunArg::NotFunction(span(e.span()), "a number"),
                    Some(e @ Expression::BooleanLiteral(_)) => RunArg::NotFunction(span(e.span()), "a boolean"),
                    Some(e @ Expression::NullLiteral(_)) => RunArg::NotFunction(span(e.span()), "null"),
                    Some(e @ Expression::ObjectExpression(_)) => RunArg::NotFunction(span(e.span()), "an object"),
                    Some(e @ Expression::ArrayExpression(_)) => RunArg::NotFunction(span(e.span()), "an array"),
                    Some(Expression::Identifier(id)) if id.name == "undefined" => {
                        RunArg::NotFunction(span(id.span), "undefined")
                    }
                    _ => RunArg::Unknown,
                },
            };
            chain.runs.push(Run { name: at, arg });
        }
        "compile" => chain.compile = Some(at),
        _ => {}
    }
}

fn read_value(expr: &Expression) -> Value {
    let expr = expr.get_inner_expression();
    let at = span(expr.span());
    match expr {
        Expression::StringLiteral(s) => Value::Str(s.value.to_string(), at),
        Expression::BooleanLiteral(b) => Value::Bool(b.value, at),
        Expression::NumericLiteral(n) => Value::Num(n.value, at),
        Expression::UnaryExpression(u)
            if u.operator == oxc_ast::ast::UnaryOperator::UnaryNegation
                && matches!(u.argument.get_inner_expression(), Expression::NumericLiteral(_)) =>
        {
            match u.argument.get_inner_expression() {
                Expression::NumericLiteral(n) => Value::Num(-n.value, at),
                _ => Value::Other(at),
            }
        }
        Expression::TemplateLiteral(t) if t.is_no_substitution_template() => {
            Value::Str(t.single_quasi().map(|q| q.to_string()).unwrap_or_default(), at)
        }
        Expression::ArrayExpression(array) => Value::Array(
            array
                .elements
                .iter()
                .map(|e| match e {
                    ArrayExpressionElement::SpreadElement(s) => Value::Other(span(s.span)),
                    ArrayExpressionElement::Elision(e) => Value::Other(span(e.span)),
                    other => other.as_expression().map_or(Value::Other(at), read_value),
                })
                .collect(),
            at,
        ),
        Expression::ObjectExpression(object) => {
            let mut props = Vec::new();
            let mut open = false;
            for property in &object.properties {
                match property {
                    ObjectPropertyKind::ObjectProperty(p) if !p.computed => {
                        let key = match &p.key {
                            PropertyKey::StaticIdentifier(id) => Some(id.name.to_string()),
                            PropertyKey::StringLiteral(s) => Some(s.value.to_string()),
                            _ => None,
                        };
                        match key {
                            Some(key) => {
                                props.push(Prop { key, key_span: span(p.key.span()), value: read_value(&p.value) })
                            }
                            None => open = true,
                        }
                    }
                    _ => open = true,
                }
            }
            Value::Object(Object { span: at, props, open })
        }
        _ => Value::Other(at),
    }
}

/// Collects stage option objects and calls by callee path.
struct Finder {
    out: Vec<(String, Span)>,
    stages: Vec<[Option<Object>; 3]>,
    extract_text: Vec<(Span, usize, usize)>,
    for_agents: Vec<String>,
}

/// `a.b.c` of a callee made of names and static members, or `None`.
fn dotted(expr: &Expression) -> Option<String> {
    match expr.get_inner_expression() {
        Expression::Identifier(id) => Some(id.name.to_string()),
        Expression::StaticMemberExpression(m) => Some(format!("{}.{}", dotted(&m.object)?, m.property.name)),
        _ => None,
    }
}

impl<'a> Visit<'a> for Finder {
    fn visit_call_expression(&mut self, call: &oxc_ast::ast::CallExpression<'a>) {
        if let Expression::StaticMemberExpression(m) = call.callee.get_inner_expression()
            && m.property.name == "for"
        {
            let typed = call.type_arguments.as_ref().and_then(|t| t.params.first()).and_then(|t| match t {
                TSType::TSLiteralType(l) => match &l.literal {
                    TSLiteral::StringLiteral(s) => Some(s.value.to_string()),
                    _ => None,
                },
                _ => None,
            });
            let argument =
                match call.arguments.first().and_then(Argument::as_expression).map(Expression::get_inner_expression) {
                    Some(Expression::StringLiteral(s)) => Some(s.value.to_string()),
                    _ => None,
                };
            self.for_agents.extend(typed.or(argument));
        }
        if let Some(path) = dotted(&call.callee) {
            if path.ends_with(".stage") {
                let object = |i: usize| match call.arguments.get(i).and_then(Argument::as_expression).map(read_value) {
                    Some(Value::Object(object)) => Some(object),
                    _ => None,
                };
                self.stages.push([object(0), object(1), object(2)]);
            }
            if path == "extractAssistantText" {
                let first_end = call.arguments.first().map_or(call.span.end as usize, |a| a.span().end as usize);
                self.extract_text.push((span(call.callee.span()), call.arguments.len(), first_end));
            }
            self.out.push((path, span(call.callee.span())));
        }
        walk::walk_call_expression(self, call);
    }

    fn visit_new_expression(&mut self, new: &oxc_ast::ast::NewExpression<'a>) {
        if let Some(path) = dotted(&new.callee) {
            self.out.push((format!("new {path}"), Span::new(new.span.start as usize, new.callee.span().end as usize)));
        }
        walk::walk_new_expression(self, new);
    }
}
