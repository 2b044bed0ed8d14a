//! Names across workflow files: the loader keys workflows (and crons) by `name` and refuses to
//! load two with the same one.

use crate::diagnostic::Diagnostic;
use crate::families::lastlight::DuplicateWorkflowName;
use crate::families::lastlight::model::WorkflowDoc;
use crate::families::lastlight::rules::index::Index;

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
    let what = if cron { "cron" } else { "workflow" };
    out.push(
        Diagnostic::new(
            DuplicateWorkflowName,
            doc.file.id,
            node.span,
            format!(
                "{what} name `{name}` is also used by {}: the loader refuses to load both (\"Duplicate {what} name\")",
                first.file.display
            ),
        )
        .with_related(first.file.id, first_node.span, format!("`{name}` is first used here"))
        .with_help(format!("give each {what} its own `name`")),
    );
}
