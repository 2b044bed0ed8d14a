//! Reading cassettes, for every engine: which files are cassettes, and how their text is read.

use crate::workspace::{FileKind, SourceFile, Workspace};

/// Whether a cassette is read as JSON: a `.json` name, or text that starts with `{`.
pub fn is_json(file: &SourceFile) -> bool {
    file.path.extension().is_some_and(|e| e == "json")
        || file.text.trim_start_matches('\u{feff}').trim_start().starts_with('{')
}

/// Every cassette file of `workspace`, of every engine.
pub fn cassettes(workspace: &Workspace) -> impl Iterator<Item = &SourceFile> {
    workspace.files().iter().filter(|f| f.kind == FileKind::Cassette)
}

/// Whether the cassette's top level has one of `keys`: enough to tell which engine's cassette
/// it is. YAML is read by lines (no parse); JSON, as the readers read it ([`is_json`]), is
/// parsed.
pub fn has_top_key(file: &SourceFile, keys: &[&str]) -> bool {
    if !is_json(file) {
        return crate::workspace::top_level_keys(&file.text).any(|(key, _)| keys.contains(&key));
    }
    let parsed = crate::source::json::parse(&file.text);
    parsed.root.is_some_and(|root| root.keys().any(|key| keys.contains(&key)))
}
