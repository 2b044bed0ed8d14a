//! The `stagelint/` family: findings about files and suppressions rather than about a format,
//! and about agent skills (`SKILL.md`), which several tools load.

mod skill;

use crate::diagnostic::Diagnostic;
use crate::families::{Family, RuleMeta};
use crate::source::Span;
use crate::workspace::{FileKind, Workspace};

pub use crate::registry::stagelint::*;

pub struct Stagelint;

impl Family for Stagelint {
    fn name(&self) -> &'static str {
        "stagelint"
    }

    fn rules(&self) -> &'static [RuleMeta] {
        RULES
    }

    /// Reports unreadable files and configs that cannot be used. Suppression findings are made by the collector, which is the
    /// only place that knows which suppressions were used.
    fn check(&self, workspace: &Workspace, out: &mut Vec<Diagnostic>) {
        for file in workspace.files() {
            if file.kind == FileKind::Skill {
                skill::check_skill(file, out);
            }
            if let FileKind::Unreadable { message, offset } = &file.kind {
                let at = if *offset <= file.text.len() { *offset } else { 0 };
                out.push(Diagnostic::new(IoError, file.id, Span::empty(at), message.clone()));
            }
            if let FileKind::BrokenConfig { problems } = &file.kind {
                for problem in problems {
                    let span = if problem.span.end <= file.text.len() { problem.span } else { Span::empty(0) };
                    let message = format!("invalid config: {}", problem.message);
                    out.push(Diagnostic::new(InvalidConfig, file.id, span, message).with_help(
                        "the files this config governs are not checked until it is fixed (`stagelint check` stops with exit code 2)",
                    ));
                }
            }
        }
    }
}
