//! Reading the pending files on all cores and placing them in the workspace as what they are.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::source::read::{Unreadable, check_text, read_listed_text, read_text};
use crate::util::FastMap;
use crate::workspace::discover::bounds::Bounds;
use crate::workspace::discover::configs::ConfigCache;
use crate::workspace::discover::paths::{absolute, display_path, normalize};
use crate::workspace::discover::pending::{Key, KindHint, Pending, PendingFile, Role};
use crate::workspace::{FileKind, Workspace, classify};

/// Makes the file at `path` part of `workspace` as a `kind`, whatever its name says (a cassette
/// passed with `--cassette`): the file already read, re-kinded, or read now (`overlay` first).
/// Only an I/O error is an `Err`; text that is not UTF-8 is kept as an unreadable file, which
/// is a finding.
pub fn read_as(
    workspace: &mut Workspace,
    path: &Path,
    kind: FileKind,
    configs: &mut ConfigCache,
    overlay: &HashMap<PathBuf, String>,
) -> Result<crate::diagnostic::FileId, String> {
    let absolute = absolute(path);
    if let Some(file) = workspace.file_at(&absolute) {
        let id = file.id;
        if !matches!(file.kind, FileKind::Unreadable { .. }) {
            workspace.set_kind(id, kind);
        }
        return Ok(id);
    }
    let config = configs.for_dir(absolute.parent().unwrap_or(Path::new("/"))).map_err(|e| e.to_string())?;
    let cwd = std::env::current_dir().unwrap_or_default();
    let display = display_path(path, &cwd);
    let read = match overlay.get(&absolute) {
        Some(text) => Ok(text.clone()),
        None => read_text(&absolute),
    };
    Ok(match read {
        Ok(text) => workspace.add(absolute, display, text, kind, config),
        // `whole` problems (the file cannot be read at all) carry no text.
        Err(unreadable) if unreadable.lossy_text.is_empty() => {
            return Err(format!("{}: {}", path.display(), unreadable.message));
        }
        Err(unreadable) => {
            let kind = FileKind::Unreadable { message: unreadable.message, offset: unreadable.offset };
            workspace.add(absolute, display, unreadable.lossy_text, kind, config)
        }
    })
}

/// In tolerant mode: each broken config under a checked root, as a file whose finding says why
/// (`stagelint/InvalidConfig`); with `above` (the command line), also one above them, which
/// governs a file asked about (the editor reports each config in its own scope).
pub(super) fn add_broken_configs(
    workspace: &mut Workspace,
    configs: &ConfigCache,
    roots: &[PathBuf],
    above: bool,
    pending: &Pending,
    overlay: &HashMap<PathBuf, String>,
) {
    for error in configs.broken() {
        let path = normalize(&error.path);
        if workspace.file_at(&path).is_some() || !(above || roots.iter().any(|root| path.starts_with(normalize(root))))
        {
            continue;
        }
        let text = overlay.get(&path).cloned().or_else(|| read_text(&path).ok()).unwrap_or_default();
        let kind = FileKind::BrokenConfig { problems: error.problems.clone() };
        let config = Arc::new(Config::defaults(path.parent().unwrap_or(Path::new("/"))));
        workspace.add(path.clone(), pending.display(&path), text, kind, config);
    }
}

/// A file read, with how it is shown and the config that governs it.
pub(super) struct ReadFile {
    text: String,
    display: String,
    config: Arc<Config>,
}

/// Adds a file read as a `kind` to `workspace`: reported unless it is only `role` context.
pub(super) fn add_file(
    workspace: &mut Workspace,
    configs: &mut ConfigCache,
    path: PathBuf,
    read: ReadFile,
    kind: FileKind,
    role: Role,
) {
    let config = match kind {
        FileKind::Workflow | FileKind::WorkflowPrompt => configs.with_release(&path, read.config, false),
        FileKind::Skill => configs.with_release(&path, read.config, true),
        _ => read.config,
    };
    match role {
        Role::Context => workspace.add_context(path, read.display, read.text, kind, config),
        _ => workspace.add(path, read.display, read.text, kind, config),
    };
}

/// Reads the pending files (in parallel) and adds the ones stagelint has something to say about.
pub(super) fn read_pending(
    workspace: &mut Workspace,
    files: Vec<PendingFile>,
    overlay: &HashMap<PathBuf, String>,
    configs: &mut ConfigCache,
    bounds: &Bounds,
    unclaimed: &mut FastMap<PathBuf, ReadFile>,
) {
    workspace.reserve(files.len());
    // Markdown no kind claims waits here for the workflows that name it: room for all of it up
    // front, since growing rehashes every path kept so far.
    unclaimed.reserve(files.len());
    if unclaimed.is_empty() {
        // The first, largest batch: nothing read earlier to look up, so files are added on this
        // thread while the other cores read the rest.
        let nothing = FastMap::default();
        let load = |file: &PendingFile| load(file, overlay, bounds, &nothing);
        let add = |file, loaded| add_loaded(workspace, configs, unclaimed, overlay, file, loaded, false);
        crate::util::par_map_consume(files, load, add);
    } else {
        let loaded = crate::util::par_map(&files, |file| load(file, overlay, bounds, unclaimed));
        for (file, loaded) in files.into_iter().zip(loaded) {
            add_loaded(workspace, configs, unclaimed, overlay, file, loaded, true);
        }
    }
}

/// A pending file's text (or why it has none) and its kind when it had to be classified.
type Loaded = (Result<String, Unreadable>, Option<FileKind>);

/// Reads and classifies one pending file: independent per file, run on all cores.
fn load(
    file: &PendingFile,
    overlay: &HashMap<PathBuf, String>,
    bounds: &Bounds,
    unclaimed: &FastMap<PathBuf, ReadFile>,
) -> Loaded {
    let claimed = unclaimed.contains_key(&file.path.0);
    let text = match (&file.kind, overlay.get(&file.path.0)) {
        (KindHint::KnownOnly, _) => Err(Unreadable::whole(String::new())),
        // An editor's text is judged like the file's bytes (a binary file stays unreadable).
        (_, Some(text)) => check_text(text),
        // Read already (taken from `unclaimed` when added).
        _ if claimed => Ok(String::new()),
        _ if !bounds.holds(&file.path.0, file.plain) => Err(Unreadable {
            message: "leads outside the workspace (through a symlink or `..`); stagelint does not read it".into(),
            offset: 0,
            lossy_text: String::new(),
        }),
        // Listed by a walk as a regular file: opened without asking the path first.
        _ if file.plain => read_listed_text(&file.path.0),
        _ => read_text(&file.path.0),
    };
    // Classified here too, on all cores (a file the walk read already by the walk's text). A
    // file whose kind its content decides and whose bytes are no text is classified by their
    // lossy reading: only one stagelint lints is reported unreadable, not a TypeScript test
    // helper with a NUL in a template literal. Markdown stays reported: it is a stage, prompt
    // or skill by its text, and a zero-filled stage is what an unreadable file usually is.
    let kind = match (&text, &file.kind) {
        (Ok(text), KindHint::Classify) => {
            let text = unclaimed.get(&file.path.0).map_or(text.as_str(), |walked| walked.text.as_str());
            classify(&file.path.0, text, &file.config)
        }
        (Err(unreadable), KindHint::Classify) if !unreadable.lossy_text.is_empty() && !is_markdown(&file.path.0) => {
            classify(&file.path.0, &unreadable.lossy_text, &file.config)
        }
        _ => None,
    };
    (text, kind)
}

/// Adds one loaded file to `workspace`, or keeps it in `unclaimed` (markdown no kind claims
/// yet), or only notes that its path exists. `earlier`: whether `unclaimed` held files before
/// this batch (a file of this batch is never among the ones it adds).
fn add_loaded(
    workspace: &mut Workspace,
    configs: &mut ConfigCache,
    unclaimed: &mut FastMap<PathBuf, ReadFile>,
    overlay: &HashMap<PathBuf, String>,
    file: PendingFile,
    (text, classified): Loaded,
    earlier: bool,
) {
    let Key(path) = file.path;
    if file.kind == KindHint::KnownOnly {
        workspace.add_known_path(path);
        return;
    }
    let text = match text {
        Ok(text) if earlier => Ok(unclaimed.remove(&path).map_or(text, |walked| walked.text)),
        text => text,
    };
    match text {
        Ok(text) => {
            let kind = match file.kind {
                KindHint::Is(kind) => Some(kind),
                _ => classified,
            };
            let Some(kind) = kind else {
                if path.extension().is_some_and(|e| e == "md") && !overlay.contains_key(&path) {
                    let walked = ReadFile { text, display: file.display, config: file.config };
                    unclaimed.insert(path.clone(), walked);
                }
                workspace.add_known_path(path);
                return;
            };
            let read = ReadFile { text, display: file.display, config: file.config };
            add_file(workspace, configs, path, read, kind, file.role);
        }
        // Not a file stagelint lints, whatever its bytes: never reported unreadable.
        Err(_)
            if file.kind == KindHint::Classify
                && classified.is_none()
                && !is_markdown(&path)
                && file.role != Role::Explicit =>
        {
            workspace.add_known_path(path);
        }
        Err(unreadable) if file.role != Role::Context => {
            let kind = FileKind::Unreadable { message: unreadable.message, offset: unreadable.offset };
            workspace.add(path, file.display, unreadable.lossy_text, kind, file.config);
        }
        Err(_) => workspace.add_known_path(path),
    }
}

fn is_markdown(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "md" || e == "markdown")
}
