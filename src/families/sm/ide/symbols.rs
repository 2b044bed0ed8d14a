//! The outline: a stage file is one stage (named by its id) with its required fields; a
//! state-machine file shows its `entry`.

use super::{Scope, unquoted};
use crate::diagnostic::FileId;
use crate::editor::{Symbol, SymbolKind};
use crate::families::sm::model::REQUIRED_FIELDS;
use crate::source::Entry;
use crate::workspace::Workspace;

pub(in crate::families::sm) fn symbols(workspace: &Workspace, file: FileId) -> Vec<Symbol> {
    let Some(scope) = Scope::new(workspace, file) else {
        return Vec::new();
    };
    if let Some(sm) = scope.sm() {
        return sm.root.as_ref().and_then(|root| root.entry("entry")).map(field).into_iter().collect();
    }
    let Some(stage) = scope.stage() else {
        return Vec::new();
    };
    let Some(fm) = stage.frontmatter else {
        return Vec::new();
    };
    let span = fm.open_fence.cover(fm.close_fence.unwrap_or(fm.yaml));
    let (name, selection) = match stage.stage_id() {
        Some((id, at)) => (id.to_string(), unquoted(&stage.file.text, at)),
        // Without a readable id, the file name stands in.
        None => {
            let stem = stage.file.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            (stem, fm.open_fence)
        }
    };
    let entries = stage.root.as_ref().and_then(|root| root.as_map()).unwrap_or_default();
    let children =
        entries.iter().filter(|e| e.key_str().is_some_and(|k| REQUIRED_FIELDS.contains(&k))).map(field).collect();
    let detail = stage.field("name").and_then(|n| n.as_str()).map(str::to_string);
    vec![Symbol { name, detail, kind: SymbolKind::Node, span, selection, children }]
}

/// A `key: value` entry as a field symbol; a scalar value is its detail.
fn field(entry: &Entry) -> Symbol {
    let detail = match &entry.value.value {
        crate::source::Value::Seq(_) | crate::source::Value::Map(_) => None,
        _ => Some(entry.value.scalar_text()),
    };
    Symbol {
        name: entry.key.scalar_text(),
        detail,
        kind: SymbolKind::Field,
        span: entry.key.span.cover(entry.value.span),
        selection: entry.key.span,
        children: Vec::new(),
    }
}
