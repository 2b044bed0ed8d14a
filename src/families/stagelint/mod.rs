//! The `stagelint/` family: findings about files and suppressions rather than about a format,
//! and about agent skills (`SKILL.md`), which several tools load.

mod foreign;
mod secrets;
mod skill;

use crate::diagnostic::Diagnostic;
use crate::diagnostic::suppress::CommentStyle;
use crate::families::{Family, RuleMeta};
use crate::source::{Span, frontmatter};
use crate::workspace::{FileKind, SourceFile, Workspace};

pub use foreign::foreign_suppressions;

/// A part of a file where stagelint reads comments, in one comment syntax.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommentRegion {
    pub span: Span,
    pub style: CommentStyle,
    /// For a stage's (or skill's) frontmatter: the markdown body its `ignore-body[...]` covers.
    pub body: Option<Span>,
}

/// Where `file` can hold suppression comments: a frontmatter (YAML) and the markdown body after
/// it, a whole YAML state machine or workflow, a whole prompt template. JSON holds none.
pub fn comment_regions(file: &SourceFile) -> Vec<CommentRegion> {
    let whole = Span::new(0, file.text.len());
    let region = |span, style| CommentRegion { span, style, body: None };
    match file.kind {
        FileKind::Stage | FileKind::Skill => {
            let Some(fm) = frontmatter::split(&file.text) else { return Vec::new() };
            let body = fm.close_fence.is_some().then_some(fm.body);
            let mut out = vec![CommentRegion { span: fm.yaml, style: CommentStyle::Hash, body }];
            out.extend(body.map(|body| region(body, CommentStyle::Html)));
            out
        }
        FileKind::StateMachine if file.path.extension().is_none_or(|e| e != "json") => {
            vec![region(whole, CommentStyle::Hash)]
        }
        FileKind::Workflow => vec![region(whole, CommentStyle::Hash)],
        FileKind::WorkflowPrompt => vec![region(whole, CommentStyle::Html)],
        _ => Vec::new(),
    }
}

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
        // The secret scan reads every prompt's text: on all cores.
        let found = crate::util::par_map(workspace.files(), |file| {
            let mut found = Vec::new();
            secrets::check(file, &mut found);
            found
        });
        out.extend(found.into_iter().flatten());
        for file in workspace.files() {
            if file.kind == FileKind::Skill {
                skill::check_skill(file, out);
            }
            if let FileKind::Unreadable { message, offset } = &file.kind {
                let at = if *offset <= file.text.len() { *offset } else { 0 };
                out.push(Diagnostic::new(IoError, file.id, Span::empty(at), message.clone()));
            }
            invalid_config(file, out);
        }
    }
}

/// Why a config that cannot be used is refused (`stagelint/InvalidConfig`, one finding per
/// problem), for a file read as a broken config; nothing for any other file.
pub fn invalid_config(file: &SourceFile, out: &mut Vec<Diagnostic>) {
    if let FileKind::BrokenConfig { problems } = &file.kind {
        for problem in problems {
            let span = if problem.span.end <= file.text.len() { problem.span } else { Span::empty(0) };
            let message = format!("invalid config: {}", problem.message);
            out.push(
                Diagnostic::new(InvalidConfig, file.id, span, message)
                    .with_help("the files this config governs are not checked until it is fixed"),
            );
        }
    }
}
