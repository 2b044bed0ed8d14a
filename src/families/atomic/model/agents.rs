//! Where a workflow names an agent: `"--agent", "x"` (or `"--agent=x"`) in an array literal,
//! as Claude's `chatFlags` take it, and `agent: "x"` in an object passed to a call (Copilot's
//! session options, Claude's headless `query` options, OpenCode's `session.prompt`).

use oxc_ast::ast::{ArrayExpression, CallExpression, Expression, ObjectPropertyKind, Program, StringLiteral};
use oxc_ast_visit::{Visit, walk};

use crate::source::Span;

/// One agent name a workflow uses.
#[derive(Debug, Clone)]
pub struct AgentRef {
    pub name: String,
    /// The name inside its string literal, when the literal holds it as written (no escapes):
    /// what a did-you-mean fix replaces.
    pub name_span: Option<Span>,
    /// The whole string literal.
    pub span: Span,
}

pub(super) fn find(program: &Program) -> Vec<AgentRef> {
    let mut finder = Finder(Vec::new());
    finder.visit_program(program);
    finder.0
}

/// `literal` as a reference, its name starting `skip` bytes into the literal's text.
fn agent_ref(literal: &StringLiteral, skip: usize) -> Option<AgentRef> {
    let name = literal.value.as_str().get(skip..)?.to_string();
    let (start, end) = (literal.span.start as usize, literal.span.end as usize);
    // Quotes plus the value: the literal has no escape sequence, so offsets map one to one.
    let plain = end - start == literal.value.len() + 2;
    let name_span = plain.then(|| Span::new(start + 1 + skip, end - 1));
    (!name.is_empty()).then_some(AgentRef { name, name_span, span: Span::new(start, end) })
}

fn string<'p, 'a>(expr: Option<&'p Expression<'a>>) -> Option<&'p StringLiteral<'a>> {
    match expr?.get_inner_expression() {
        Expression::StringLiteral(s) => Some(s),
        _ => None,
    }
}

struct Finder(Vec<AgentRef>);

impl<'a> Visit<'a> for Finder {
    fn visit_array_expression(&mut self, array: &ArrayExpression<'a>) {
        let items: Vec<Option<&StringLiteral>> = array.elements.iter().map(|e| string(e.as_expression())).collect();
        for (i, item) in items.iter().enumerate() {
            let Some(flag) = item else { continue };
            if flag.value == "--agent" {
                self.0.extend(items.get(i + 1).copied().flatten().and_then(|next| agent_ref(next, 0)));
            } else if flag.value.starts_with("--agent=") {
                self.0.extend(agent_ref(flag, "--agent=".len()));
            }
        }
        walk::walk_array_expression(self, array);
    }

    fn visit_call_expression(&mut self, call: &CallExpression<'a>) {
        for argument in &call.arguments {
            let Some(Expression::ObjectExpression(object)) = argument.as_expression().map(|e| e.get_inner_expression())
            else {
                continue;
            };
            for property in &object.properties {
                if let ObjectPropertyKind::ObjectProperty(p) = property
                    && !p.computed
                    && p.key.static_name().is_some_and(|k| k == "agent")
                {
                    self.0.extend(string(Some(&p.value)).and_then(|s| agent_ref(s, 0)));
                }
            }
        }
        walk::walk_call_expression(self, call);
    }
}
