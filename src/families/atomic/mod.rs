//! The `atomic/` family: @bastani/atomic TypeScript workflows
//! (`.atomic/workflows/<name>/<agent>/index.ts`), read with oxc into `model`; `project` holds
//! what the rules read around them (agent files, `package.json`, the base's `.gitignore`).

mod depth;
mod dialect;
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

    /// Which release of atomic each workflow was checked as, and why, one line per release and
    /// source: "atomic 0.9 assumed for `.atomic/workflows/` (2 workflows), from the API they call
    /// and `package.json` `@bastani/workflows ^0.9.3`". None where `[atomic] sdk-version` names
    /// the release.
    fn notes(&self, workspace: &Workspace) -> Vec<String> {
        let files: Vec<&SourceFile> =
            workspace.reported_files().filter(|f| f.kind == FileKind::AtomicWorkflow).collect();
        if files.is_empty() {
            return Vec::new();
        }
        let project = project::Project::new(workspace);
        // (release, or none when not modelled; its source) and the files read so.
        type Group<'a> = ((Option<&'static str>, String), Vec<&'a SourceFile>);
        let mut groups: Vec<Group> = Vec::new();
        for file in files {
            let judged = dialect::judge(file, &project);
            if judged.sdk.as_ref().is_some_and(|sdk| sdk.package.is_none()) {
                continue;
            }
            let release = match &judged.unmodeled {
                Some(_) => None,
                None => Some(judged.dialect.release()),
            };
            let source = match &judged.sdk {
                Some(sdk) => format!("from the API they call and {}", sdk.source()),
                None => {
                    "from the API they call (no version pinned in `package.json` or `[atomic] sdk-version`)".to_string()
                }
            };
            match groups.iter_mut().find(|(key, _)| key.0 == release && key.1 == source) {
                Some((_, list)) => list.push(file),
                None => groups.push(((release, source), vec![file])),
            }
        }
        groups
            .into_iter()
            .map(|((release, source), list)| {
                let dirs: std::collections::BTreeSet<String> =
                    list.iter().map(|f| f.display.rsplit_once('/').map_or(".", |(dir, _)| dir).to_string()).collect();
                let shown: Vec<String> = dirs.iter().take(3).map(|d| format!("`{d}/`")).collect();
                let more = if dirs.len() > 3 { format!(" and {} more", dirs.len() - 3) } else { String::new() };
                let count =
                    if list.len() == 1 { "1 workflow".to_string() } else { format!("{} workflows", list.len()) };
                match release {
                    Some(release) => {
                        format!("atomic {release} assumed for {}{more} ({count}), {source}", shown.join(", "))
                    }
                    None => format!(
                        "atomic not checked in {}{more} ({count}): a release stagelint does not model, {source}",
                        shown.join(", ")
                    ),
                }
            })
            .collect()
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
