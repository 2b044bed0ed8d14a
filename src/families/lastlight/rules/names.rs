//! Names across workflow files: the loader keys workflows (and crons) by `name`, and loses one
//! of two with the same one (before 0.2) or refuses to load them (0.2 on).

use crate::diagnostic::Diagnostic;
use crate::families::lastlight::DuplicateWorkflowName;
use crate::families::lastlight::model::WorkflowDoc;
use crate::families::lastlight::rules::index::Index;
use crate::registry::releases::lastlight::{self as releases, Has};
use crate::workspace::lastlight::unloaded_subdirectory;

/// Reported on the later file (by path) of each pair, with the earlier one as related location.
pub(super) fn duplicate_name(doc: &WorkflowDoc, all: &[WorkflowDoc], index: &Index, out: &mut Vec<Diagnostic>) {
    let Some(node) = doc.get("name").filter(|n| n.as_str().is_some()) else { return };
    let name = node.as_str().unwrap_or_default();
    let cron = doc.is_cron();
    let first = index
        .named(doc, cron, name)
        .iter()
        .map(|&i| &all[i])
        .filter(|other| other.file.path < doc.file.path)
        .min_by(|a, b| a.file.path.cmp(&b.file.path));
    let Some(first) = first else { return };
    let Some(first_node) = first.get("name") else { return };
    // A file the server never loads (`workflows/examples/`) takes no name from another.
    if [doc.file, first.file].iter().any(|f| unloaded_subdirectory(&f.path).is_some()) {
        return;
    }
    let what = if cron { "cron" } else { "workflow" };
    // Before 0.2 the loader keys its cache by name and says nothing; from 0.2 on it throws.
    let outcome = match doc.file.config.lastlight.release.has(releases::V0_2) {
        Has::No => "the loader keeps whichever file it reads last and loses the other without a word".to_string(),
        Has::Yes => format!(
            "the loader throws (\"Duplicate {what} name\"), so the first lookup fails and the workflow files after this one (by name) are never loaded"
        ),
        Has::From(_) => format!(
            "the loader loses one of them without a word (before 0.2) or throws (\"Duplicate {what} name\", 0.2 on)"
        ),
    };
    out.push(
        Diagnostic::new(
            DuplicateWorkflowName,
            doc.file.id,
            node.span,
            format!("{what} name `{name}` is also used by {}: {outcome}", first.file.display),
        )
        .with_related(first.file.id, first_node.span, format!("`{name}` is first used here"))
        .with_help(format!("give each {what} its own `name`")),
    );
}
