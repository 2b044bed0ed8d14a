//! The `lastlight/` rules, grouped by what they read: keys and values (`fields`), the phase
//! graph (`graph`), prompt and skill files (`files`), templates (`template`), crons (`cron`).

mod cron;
mod fields;
mod files;
mod graph;
mod index;
mod names;
mod template;

use std::sync::atomic::{AtomicBool, Ordering};

use crate::config::Config;
use crate::diagnostic::{Diagnostic, FileId};
use crate::families::lastlight::YamlSyntax;
use crate::families::lastlight::model::{self, Phase, Producers, WorkflowDoc};
use crate::registry::releases::lastlight::{self as releases, Has, Target};
use crate::source::{Node, Span, SyntaxError, SyntaxKind};
use crate::util::FastSet;
use crate::workspace::lastlight::unloaded_subdirectory;
use crate::workspace::{SourceFile, Workspace};
pub(super) use index::Index;

/// One workflow with what its rules share.
pub(super) struct Ctx<'a, 'w> {
    pub workspace: &'w Workspace,
    pub doc: &'a WorkflowDoc<'w>,
    pub root: &'a Node,
    pub phases: Vec<Phase<'a>>,
    pub producers: Producers<'a>,
    pub dag: bool,
    /// For each phase (by index in `phases:`), the phases that surely ran before it.
    pub before: Vec<FastSet<usize>>,
    /// Every workflow file of the workspace (crons look up names, prompts know their users).
    pub all: &'a [WorkflowDoc<'w>],
    /// For each prompt file: how many workflows and how many phases use it.
    pub uses: &'a PromptUses,
    /// `all` by namespace and name.
    pub index: &'a Index<'a>,
    /// Per file of the workspace: whether a workflow has checked it as a prompt already.
    pub claimed: &'a [AtomicBool],
}

/// Per file of the workspace (by id): how many workflows and how many phases use it as a prompt.
pub(super) type PromptUses = Vec<(u32, u32)>;

/// How many workflows and phases name each prompt file, from the files `docs` located
/// ([`WorkflowDoc::located`]); `files` is the number of files in the workspace.
pub(super) fn prompt_uses(docs: &[WorkflowDoc], files: usize) -> PromptUses {
    let mut counts = vec![(0, 0); files];
    let mut seen: Vec<(u32, usize)> = Vec::new();
    for doc in docs {
        seen.clear();
        let located = doc.prompts.iter().zip(&doc.prompt_files);
        seen.extend(located.filter_map(|((reference, _), id)| Some((id.as_ref()?.0, reference.phase))));
        seen.sort_unstable();
        seen.dedup();
        let mut previous = None;
        for &(id, _) in &seen {
            let Some(count) = counts.get_mut(id as usize) else { continue };
            count.1 += 1;
            // A file's phases are adjacent: its first one counts the workflow.
            if previous != Some(id) {
                count.0 += 1;
            }
            previous = Some(id);
        }
    }
    counts
}

impl Ctx<'_, '_> {
    pub fn config(&self) -> &Config {
        &self.doc.file.config
    }

    pub fn file(&self) -> &SourceFile {
        self.doc.file
    }

    /// Whether this workflow is the first to check `prompt`'s own structure (then it must).
    pub fn claim(&self, prompt: FileId) -> bool {
        self.claimed.get(prompt.0 as usize).is_some_and(|c| !c.swap(true, Ordering::Relaxed))
    }

    pub fn phase_name(&self, index: usize) -> &str {
        self.phases.iter().find(|p| p.index == index).and_then(|p| p.name()).unwrap_or("?")
    }
}

pub(super) fn check_workflow<'w>(
    workspace: &'w Workspace,
    doc: &WorkflowDoc<'w>,
    all: &[WorkflowDoc<'w>],
    uses: &PromptUses,
    index: &Index,
    claimed: &[AtomicBool],
    out: &mut Vec<Diagnostic>,
) {
    for error in doc.errors {
        let mut d = Diagnostic::new(
            YamlSyntax,
            doc.file.id,
            error.span,
            yaml_message(error, doc.file.config.lastlight.release, doc.file),
        );
        if let Some((span, message)) = &error.related {
            d = d.with_related(doc.file.id, *span, message.clone());
        }
        if error.kind == SyntaxKind::Invalid {
            d = unquoted_tag_hint(&doc.file.text, d);
        }
        out.push(d);
    }
    let Some(root) = doc.root else { return };
    if root.as_map().is_none() {
        out.push(Diagnostic::new(
            crate::families::lastlight::FieldType,
            doc.file.id,
            root.span,
            format!("a workflow file must be a mapping, not {}", root.type_name()),
        ));
        return;
    }
    names::duplicate_name(doc, all, index, out);
    // A file with a schedule but no `kind: cron` is read as an agent workflow and skipped; say
    // so once, then check it as the cron it was meant to be.
    let forgot_kind = cron::missing_kind(doc, root, out);
    fields::check_keys(doc, root, model::is_cron(root) || forgot_kind, out);
    if model::is_cron(root) || forgot_kind {
        cron::check(doc, root, all, index, out);
        return;
    }
    let phases = model::phases(root);
    let dag = model::is_dag(&phases);
    let producers = Producers::of(&phases);
    let before = graph::runs_before(&phases, dag);
    let ctx = Ctx { workspace, doc, root, phases, producers, dag, before, all, uses, index, claimed };
    fields::check(&ctx, out);
    graph::check(&ctx, out);
    files::check(&ctx, out);
    template::check(&ctx, out);
}

/// What the loader does with a workflow file it cannot load, at the repository's release:
/// before 0.2 it logs the error and skips the file; from 0.2 on it throws, so the lookup that
/// loads the directory fails and the files after this one (by name) are never loaded either.
/// A file in a subdirectory of `workflows/` is never read by the loader at all.
pub(super) fn loader_rejects(release: Target, file: &SourceFile) -> &'static str {
    if unloaded_subdirectory(&file.path).is_some() {
        return "the server never loads this file (its loader reads only the files directly in `workflows/`), but copied there it would be rejected";
    }
    match release.has(releases::V0_2) {
        Has::No => "the loader logs the error and skips the file, so the workflow does not exist at run time",
        Has::Yes => {
            "the loader throws on the file, so the first lookup fails and neither this file nor the workflow files after it (by name) are ever loaded"
        }
        Has::From(_) => {
            "the loader skips the file (before 0.2) or throws on it, so the workflow files after it (by name) are not loaded either (0.2 on)"
        }
    }
}

/// The reader recovers from duplicate keys and extra documents, but the engine's loader
/// (js-yaml) rejects the whole file.
fn yaml_message(error: &SyntaxError, release: Target, file: &SourceFile) -> String {
    let first = error.message.split(';').next().unwrap_or(&error.message);
    let rejects = loader_rejects(release, file);
    match error.kind {
        SyntaxKind::DuplicateKey => {
            format!("{first}: js-yaml refuses the whole file (\"duplicated mapping key\"); {rejects}")
        }
        SyntaxKind::ExtraDocument => format!(
            "more than one YAML document: js-yaml refuses the whole file (\"expected a single document in the stream\"); {rejects}"
        ),
        SyntaxKind::Invalid => error.message.clone(),
    }
}

/// A syntax error on a line whose value starts with `{{` (`on_start: {{issueTitle}} started`):
/// YAML opened a flow mapping there. Say so, and quote the value up to the end of the line.
fn unquoted_tag_hint(text: &str, d: Diagnostic) -> Diagnostic {
    let line_start = text[..d.span.start.min(text.len())].rfind('\n').map_or(0, |n| n + 1);
    let line_end = text[line_start..].find('\n').map_or(text.len(), |n| line_start + n);
    let line = text[line_start..line_end].trim_end_matches('\r');
    let Some(colon) = line.find(": {{").or_else(|| line.find("- {{")) else { return d };
    let value_start = line_start + colon + 2;
    let value = line[colon + 2..].trim_end();
    let mut d = d;
    d.message.push_str("; YAML reads an unquoted `{{…}}` as a mapping: quote the value");
    // A comment after the value would be quoted with it.
    if value.contains(" #") {
        return d;
    }
    let replacement = crate::source::yaml_write::quoted_scalar(value);
    d.with_fix(
        format!("Quote the value: `{replacement}`"),
        crate::diagnostic::Applicability::Safe,
        vec![crate::diagnostic::Edit { span: Span::new(value_start, value_start + value.len()), replacement }],
    )
}

/// Findings that need only the prompt file: how its tags parse.
pub(super) fn check_prompt_file(file: &SourceFile) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    template::check_prompt_structure(file, &mut out);
    out
}
