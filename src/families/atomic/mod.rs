//! The `atomic/` family: @bastani/atomic TypeScript workflows
//! (`.atomic/workflows/<name>/<agent>/index.ts`), read with oxc into `model`; `project` holds
//! what the rules read around them (agent files, `package.json`, the base's `.gitignore`).

mod depth;
mod ide;
pub(crate) mod keys;
pub(crate) mod model;
mod project;
mod rules;

use crate::diagnostic::Diagnostic;
use crate::editor;
use crate::families::{Family, RuleMeta};
use crate::util::par_map;
use crate::workspace::{FileKind, SourceFile, Workspace};

pub use crate::registry::atomic::*;
pub use model::{comments, syntax_errors};

pub struct Atomic;

impl Family for Atomic {
    fn name(&self) -> &'static str {
        "atomic"
    }

    fn rules(&self) -> &'static [RuleMeta] {
        RULES
    }

    fn check(&self, workspace: &Workspace, out: &mut Vec<Diagnostic>) {
        let files: Vec<&SourceFile> = workspace.files().iter().filter(|f| f.kind == FileKind::AtomicWorkflow).collect();
        if files.is_empty() {
            return;
        }
        let project = project::Project::new(workspace);
        out.extend(par_map(&files, |file| rules::check_file(file, &project)).into_iter().flatten());
    }

    fn editor(&self) -> &'static editor::Hooks {
        &EDITOR
    }
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
    ..editor::Hooks::NONE
};
