//! `stagelint.previewPrompt` (the "Preview prompt" code lens): renders what a definition's step
//! sends (a Last Light phase's prompt) from the analysis the server holds, open documents'
//! unsaved text included, into a read-only file the client is asked to show. The server keeps
//! the previews it opened and writes each again whenever an analysis covers its workflow, so
//! the document follows the edits.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{MessageType, ShowDocumentParams, Uri};

use crate::lsp::state::{Analysis, State, lock};

/// A preview the client was shown: what it renders, and the text last written.
pub(super) struct Open {
    pub(super) definition: PathBuf,
    pub(super) target: String,
    pub(super) text: String,
}

pub(super) async fn run(client: &Client, state: &Arc<Mutex<State>>, path: PathBuf, target: String) -> Result<Value> {
    let (rendered, show_document) = {
        let state = lock(state);
        let rendered = match state.analysis_for(&path) {
            Some(analysis) => render(&analysis, &path, &target),
            None => Err(format!("{} is not analysed yet", path.display())),
        };
        (rendered, state.show_document)
    };
    let (title, text) = match rendered {
        Ok(rendered) => rendered,
        Err(message) => {
            client.show_message(MessageType::ERROR, format!("stagelint preview: {message}")).await;
            return Err(Error::invalid_params(message));
        }
    };
    let document = document_path(&path, &target);
    let written = write(&document, &text);
    if written.is_some() {
        lock(state).previews.insert(document.clone(), Open { definition: path, target, text: text.clone() });
    }
    if show_document && let Some(uri) = written.as_ref().and_then(Uri::from_file_path) {
        let params = ShowDocumentParams { uri, external: Some(false), take_focus: Some(true), selection: None };
        let _ = client.show_document(params).await;
    }
    Ok(json!({
        "title": title,
        "document": written.map(|p| p.display().to_string()),
        "text": text,
    }))
}

/// Writes again the open previews whose definition `analysis` read, when their text changed.
pub(super) fn refresh(state: &mut State, analysis: &Analysis) {
    for (document, open) in state.previews.iter_mut() {
        if analysis.workspace.file_at(&open.definition).is_none() {
            continue;
        }
        let text = match render(analysis, &open.definition, &open.target) {
            Ok((_, text)) => text,
            Err(message) => format!("# stagelint preview: {message}\n"),
        };
        if text != open.text && write(document, &text).is_some() {
            open.text = text;
        }
    }
}

/// The preview's title and text, from `analysis`.
fn render(analysis: &Analysis, path: &Path, target: &str) -> std::result::Result<(String, String), String> {
    let file = analysis.workspace.file_at(path).ok_or_else(|| format!("{} is not analysed", path.display()))?;
    let rendering = crate::runtime::preview(&analysis.workspace, file.id, target, &[])?;
    Ok((rendering.title, rendering.marked))
}

/// `<temp>/stagelint-preview/<definition>-<target>-<8 hex of both>.md`.
fn document_path(definition: &Path, target: &str) -> PathBuf {
    let stem = definition.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let safe = |text: &str| -> String {
        text.chars().map(|c| if c.is_alphanumeric() || c == '-' { c } else { '_' }).collect()
    };
    let key = format!("{}\n{target}", definition.display());
    let hash = crate::cassette::digest::sha256_hex(key.as_bytes());
    std::env::temp_dir().join("stagelint-preview").join(format!("{}-{}-{}.md", safe(&stem), safe(target), &hash[..8]))
}

/// Writes `text` as a new read-only file at `path` (never through a link planted there, nor in
/// a linked directory).
fn write(path: &Path, text: &str) -> Option<PathBuf> {
    let dir = path.parent()?;
    std::fs::create_dir_all(dir).ok()?;
    if std::fs::symlink_metadata(dir).ok()?.file_type().is_symlink() {
        return None;
    }
    crate::util::write_new(path, text.as_bytes()).ok()?;
    let mut permissions = std::fs::metadata(path).ok()?.permissions();
    permissions.set_readonly(true);
    std::fs::set_permissions(path, permissions).ok()?;
    Some(path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_are_read_only_and_written_again() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("previews").join("build-plan.md");
        assert_eq!(write(&path, "one"), Some(path.clone()));
        assert!(std::fs::metadata(&path).expect("meta").permissions().readonly());
        assert_eq!(write(&path, "two"), Some(path.clone()), "a read-only preview is replaced");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "two");
        let a = document_path(Path::new("/a/workflows/build.yaml"), "plan");
        let b = document_path(Path::new("/b/workflows/build.yaml"), "plan");
        assert_ne!(a, b);
        assert!(
            a.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("build-plan-") && n.ends_with(".md"))
        );
    }
}
