//! File-level `steps/` rules: JSON/YAML syntax and duplicate keys of every family file.

use crate::diagnostic::Diagnostic;
use crate::families::steps::model::{Agent, Doc};
use crate::families::steps::{DuplicateKey, JsonSyntax};

/// Syntax errors and duplicate keys of one JSON or YAML file of the family.
pub(crate) fn check_syntax(doc: &Doc, out: &mut Vec<Diagnostic>) {
    for error in &doc.errors {
        let duplicate = error.message.starts_with("duplicate key");
        let code = if duplicate { DuplicateKey } else { JsonSyntax };
        let mut diagnostic = Diagnostic::new(code, doc.id(), error.span, error.message.clone());
        if let Some((span, message)) = &error.related {
            diagnostic = diagnostic.with_related(doc.id(), *span, message.clone());
        }
        out.push(diagnostic);
    }
}

/// Registry-level file rules that need the agent (filled in by the load/format rules).
pub(super) fn check(_agent: &Agent, _out: &mut Vec<Diagnostic>) {}
