//! The `lastlight/` rules, grouped by what they read: keys and values (`fields`), the phase
//! graph (`graph`), prompt and skill files (`files`), templates (`template`), crons (`cron`).

mod cron;
mod fields;
mod files;
mod graph;
mod template;

use std::collections::HashSet;

use crate::config::Config;
use crate::diagnostic::Diagnostic;
use crate::families::lastlight::YamlSyntax;
use crate::families::lastlight::model::{self, Phase, Producers, WorkflowDoc};
use crate::source::Node;
use crate::workspace::{SourceFile, Workspace};

/// One workflow with what its rules share.
pub(super) struct Ctx<'a, 'w> {
    pub workspace: &'w Workspace,
    pub doc: &'a WorkflowDoc<'w>,
    pub root: &'a Node,
    pub phases: Vec<Phase<'a>>,
    pub producers: Producers<'a>,
    pub dag: bool,
    /// For each phase (by index in `phases:`), the phases that surely ran before it.
    pub before: Vec<HashSet<usize>>,
    /// Every workflow file of the workspace (crons look up names, prompts know their users).
    pub all: &'a [WorkflowDoc<'w>],
}

impl Ctx<'_, '_> {
    pub fn config(&self) -> &Config {
        &self.doc.file.config
    }

    pub fn file(&self) -> &SourceFile {
        self.doc.file
    }

    pub fn phase_name(&self, index: usize) -> &str {
        self.phases.iter().find(|p| p.index == index).and_then(|p| p.name()).unwrap_or("?")
    }
}

pub(super) fn check_workflow<'w>(
    workspace: &'w Workspace,
    doc: &WorkflowDoc<'w>,
    all: &[WorkflowDoc<'w>],
    out: &mut Vec<Diagnostic>,
) {
    for error in &doc.errors {
        let mut d = Diagnostic::new(YamlSyntax, doc.file.id, error.span, error.message.clone());
        if let Some((span, message)) = &error.related {
            d = d.with_related(doc.file.id, *span, message.clone());
        }
        out.push(d);
    }
    let Some(root) = doc.root.as_ref() else { return };
    if root.as_map().is_none() {
        out.push(Diagnostic::new(
            crate::families::lastlight::FieldType,
            doc.file.id,
            root.span,
            format!("a workflow file must be a mapping, not {}", root.type_name()),
        ));
        return;
    }
    fields::check_keys(doc, root, out);
    if model::is_cron(root) {
        cron::check(doc, root, all, out);
        return;
    }
    let phases = model::phases(root);
    let dag = model::is_dag(&phases);
    let producers = Producers::of(&phases);
    let before = graph::runs_before(&phases, dag);
    let ctx = Ctx { workspace, doc, root, phases, producers, dag, before, all };
    fields::check(&ctx, out);
    graph::check(&ctx, out);
    files::check(&ctx, out);
    template::check(&ctx, out);
}

/// Findings that need only the prompt file: how its tags parse.
pub(super) fn check_prompt_file(file: &SourceFile) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    template::check_prompt_structure(file, &mut out);
    out
}

pub(super) fn check_skill(file: &SourceFile, out: &mut Vec<Diagnostic>) {
    files::check_skill(file, out);
}
