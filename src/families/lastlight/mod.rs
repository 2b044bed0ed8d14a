//! The `lastlight/` family: Last Light workflow YAML (agent workflows and crons), the prompt
//! templates they name, and agent skills.

mod ide;
pub(crate) mod model;
mod rules;
pub mod schema;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::diagnostic::Diagnostic;
use crate::editor;
use crate::families::{Family, RuleMeta};
use crate::util::par_map;
use crate::workspace::{FileKind, SourceFile, Workspace};
use model::WorkflowDoc;

pub use crate::registry::lastlight::*;

pub struct Lastlight;

impl Family for Lastlight {
    fn name(&self) -> &'static str {
        "lastlight"
    }

    fn rules(&self) -> &'static [RuleMeta] {
        RULES
    }

    fn check(&self, workspace: &Workspace, out: &mut Vec<Diagnostic>) {
        let files: Vec<&SourceFile> = workspace.files().iter().filter(|f| f.kind == FileKind::Workflow).collect();
        let docs: Vec<WorkflowDoc> = par_map(&files, |file| WorkflowDoc::located(file, workspace));
        // Two independent passes over all workflows, one per core.
        let (uses, index) = crate::util::par_join(
            docs.len() >= crate::util::PAR_MIN_ITEMS,
            || rules::prompt_uses(&docs, workspace.files().len()),
            || rules::Index::new(&docs),
        );
        // A prompt's own structure is checked by the first workflow that reads it, while its text
        // and tags are at hand; the prompts no workflow read are checked on their own below.
        let claimed: Vec<AtomicBool> = workspace.files().iter().map(|_| AtomicBool::new(false)).collect();
        let found = par_map(&docs, |doc| {
            let mut found = Vec::new();
            rules::check_workflow(workspace, doc, &docs, &uses, &index, &claimed, &mut found);
            found
        });
        let mut all: Vec<Diagnostic> = found.into_iter().flatten().collect();
        let unread = |f: &&SourceFile| !claimed[f.id.0 as usize].load(Ordering::Relaxed);
        let prompts: Vec<&SourceFile> =
            workspace.files().iter().filter(|f| f.kind == FileKind::WorkflowPrompt).filter(unread).collect();
        all.extend(par_map(&prompts, |file| rules::check_prompt_file(file)).into_iter().flatten());
        // A prompt used by several phases or workflows is checked once per use; keep one of each
        // finding that does not depend on the use.
        let mut seen = HashSet::new();
        all.retain(|d| {
            seen.insert((d.code, d.file, d.span, d.message.clone(), d.related.first().map(|r| (r.file, r.span))))
        });
        unloaded_at_most_warnings(workspace, &mut all);
        out.extend(all);
    }

    /// The release each checked workflow was read for, and why, when no config names it.
    fn notes(&self, workspace: &Workspace) -> Vec<String> {
        release_notes(workspace)
    }

    fn editor(&self) -> &'static editor::Hooks {
        &EDITOR
    }
}

/// The rules whose errors mean Last Light's loader refuses the file: the YAML does not parse
/// or the engine's schema rejects it (the dry-run does not run such a workflow).
pub const LOADER_CODES: &[&str] = &[
    YamlSyntax,
    FieldType,
    InvalidEnum,
    MissingName,
    MissingField,
    EmptyPhases,
    SkillAndSkills,
    GenericLoopNoUntil,
    PhaseTypeField,
    ReservedIntent,
    DuplicateWorkflowName,
    CronKindMissing,
];

/// The loader's refusals among `files` (workflow files, checked together: a duplicate name
/// among them counts): the errors of [`LOADER_CODES`].
pub fn loader_errors(workspace: &Workspace, files: &[&SourceFile]) -> Vec<Diagnostic> {
    let docs: Vec<WorkflowDoc> = files.iter().map(|file| WorkflowDoc::located(file, workspace)).collect();
    let uses = rules::prompt_uses(&docs, workspace.files().len());
    let index = rules::Index::new(&docs);
    let claimed: Vec<AtomicBool> = workspace.files().iter().map(|_| AtomicBool::new(true)).collect();
    let mut out = Vec::new();
    for doc in &docs {
        rules::check_workflow(workspace, doc, &docs, &uses, &index, &claimed, &mut out);
    }
    out.retain(|d| d.severity == crate::diagnostic::Severity::Error && LOADER_CODES.contains(&d.code));
    out
}

/// A workflow in a subdirectory of `workflows/` (upstream's `examples/`) is never loaded by the
/// server: what would break a run there is a defect of the example, to fix before it is copied
/// into `workflows/`, but it breaks nothing as it stands. Its errors are warnings that say so.
fn unloaded_at_most_warnings(workspace: &Workspace, found: &mut [Diagnostic]) {
    for d in found.iter_mut().filter(|d| d.severity == crate::diagnostic::Severity::Error) {
        let file = workspace.file(d.file);
        let Some(dir) = crate::workspace::lastlight::unloaded_subdirectory(&file.path) else { continue };
        if file.kind != FileKind::Workflow {
            continue;
        }
        d.severity = crate::diagnostic::Severity::Warning;
        if !d.message.contains("the server never loads this file") {
            let name = dir.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
            d.message.push_str(&format!(
                " (the server never loads `workflows/{name}/`, whose files matter once copied into `workflows/`)"
            ));
        }
    }
}

/// One note per distinct release assumed for the workflows and prompts that were checked:
/// detected from the repository (with the file and what it said), or the newest by default.
fn release_notes(workspace: &Workspace) -> Vec<String> {
    use crate::registry::releases::assumed_note;
    let cwd = std::env::current_dir().unwrap_or_default();
    // Files share their config: each config is looked at once.
    let mut seen = HashSet::new();
    let mut notes: Vec<String> = workspace
        .reported_files()
        .filter(|f| matches!(f.kind, FileKind::Workflow | FileKind::WorkflowPrompt))
        .filter(|f| seen.insert(std::sync::Arc::as_ptr(&f.config)))
        .filter_map(|f| {
            let undetected = "no Last Light `package.json` or engine sources beside `workflows/`";
            assumed_note(f.config.lastlight.release, &f.config.lastlight.release_source, None, undetected, &cwd)
        })
        .collect();
    notes.sort();
    notes.dedup();
    notes
}

/// What the family answers in the editor.
const EDITOR: editor::Hooks = editor::Hooks {
    completions: ide::completions,
    hover: ide::hover,
    definitions: ide::definitions,
    references: ide::references,
    prepare_rename: ide::prepare_rename,
    rename: ide::rename,
    symbols: ide::symbols,
    links: ide::links,
    folds: ide::folds,
    ..editor::Hooks::NONE
};

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::config::Config;

    /// A prompt no workflow pass reads (a library caller's workspace of the prompt alone) still
    /// has its own structure checked: the workflow passes claim the prompts they read, and the
    /// rest are checked on their own.
    #[test]
    fn a_prompt_no_workflow_reads_is_still_checked_alone() {
        let mut workspace = Workspace::new();
        let path = PathBuf::from("/repo/workflows/prompts/plan.md");
        let config = Arc::new(Config::defaults(std::path::Path::new("/repo")));
        let text = "Plan.\n{{#if commentBody}}\nSaid: {{commentBody}}\n".to_string();
        workspace.add(path, "plan.md".into(), text, FileKind::WorkflowPrompt, config);
        let mut out = Vec::new();
        Lastlight.check(&workspace, &mut out);
        let codes: Vec<&str> = out.iter().map(|d| d.code).collect();
        assert_eq!(codes, ["lastlight/UnbalancedIf"]);
    }
}
