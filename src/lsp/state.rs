//! What the handlers, the analysis task and the dry-run command share: the server's state
//! under one lock, the analyses it keeps, and what is left to re-check.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tower_lsp_server::ls_types::Uri;

use crate::diagnostic::Diagnostic as Finding;
use crate::lsp::convert::{self, Encoding};
use crate::lsp::documents::OpenDocument;
use crate::workspace::Workspace;
use crate::workspace::discover::scope_of_with_open;

#[derive(Default)]
pub(super) struct State {
    pub(super) encoding: Option<Encoding>,
    pub(super) roots: Vec<PathBuf>,
    pub(super) documents: HashMap<PathBuf, OpenDocument>,
    /// The URI each open document was opened with (unsaved files have no path on disk).
    pub(super) uris: HashMap<PathBuf, Uri>,
    /// Bumped on every change; an analysis publishes only if nothing changed meanwhile.
    pub(super) generation: u64,
    /// What changed since the last analysis started.
    pub(super) dirty: Dirty,
    /// The newest analysis of each scope (a state machine or agent directory, or a loose file);
    /// one analysis may cover several scopes.
    pub(super) scoped: HashMap<PathBuf, Arc<Analysis>>,
    /// The whole workspace has been checked once.
    pub(super) indexed: bool,
    /// `scope_of` for files changed so far; forgotten when files appear or disappear.
    pub(super) scopes: HashMap<PathBuf, PathBuf>,
    /// What each file currently shows in the client. Ordered, so the files under a directory
    /// are one range (a batch of the first index asks that of its scopes; a scan of every
    /// file per batch made the index quadratic).
    pub(super) published: std::collections::BTreeMap<PathBuf, Vec<tower_lsp_server::ls_types::Diagnostic>>,
    /// `initializationOptions.baselined` is `"hide"`: findings a baseline accepts are not shown
    /// (by default they are hints).
    pub(super) hide_baselined: bool,
    /// Whether the client lets us register a file watcher at `initialized`.
    pub(super) dynamic_watchers: bool,
    /// The client pulls diagnostics (`textDocument/diagnostic`), so we do not push them.
    pub(super) pull: bool,
    /// A pulling client that takes `workspace/diagnostic/refresh` when results change.
    pub(super) refresh: bool,
    /// In pull mode, the dry-run's findings by file, returned with the next pulls until the file
    /// is checked again (a pushing client gets them published instead).
    pub(super) dry_run: HashMap<PathBuf, Vec<tower_lsp_server::ls_types::Diagnostic>>,
    /// The client takes ordered `documentChanges` in workspace edits.
    pub(super) document_changes: bool,
    /// The client renames files in workspace edits (`resourceOperations` has `rename`).
    pub(super) rename_files: bool,
    /// The client opens documents we ask it to (`window/showDocument`): the dry-run report.
    pub(super) show_document: bool,
    /// The client shows server-initiated `$/progress` (for the first, whole-workspace check).
    pub(super) progress: bool,
    /// Where rule links lead (decided at `initialize`).
    pub(super) rule_links: crate::lsp::rule_docs::RuleLinks,
    /// Error messages already shown with `window/showMessage`.
    pub(super) shown: std::collections::HashSet<String>,
    /// A second pass (the replays) is running: at most one runs at a time, as each is long.
    pub(super) replaying: bool,
    /// The second pass to run when the running one ends: the newest keystroke's, over the
    /// scopes of every keystroke it stands for.
    pub(super) replay_next: Option<Replay>,
    /// The files changed, with the generation of each change, since the running round began:
    /// an analysis that read one of them before it changed is stale.
    pub(super) touched: Vec<(u64, PathBuf)>,
    /// A round of the analysis task is running (for `stagelint/idle`).
    pub(super) analysing: bool,
    /// The scopes the running round checks (`None`: all of them, as a whole index does).
    pub(super) checking: Option<HashSet<PathBuf>>,
    /// Scopes the running round has checked already: its batches so far, and those checked
    /// aside for edits made while a whole round ran (which it then leaves out). A second pass
    /// of one of them made stale is not the round's to redo.
    pub(super) checked: HashSet<PathBuf>,
    /// Held from computing what to publish until it is sent: two tasks (the analysis and a
    /// second pass) must not send in another order than they decided, or the client keeps an
    /// older list that `published` says it has not.
    pub(super) outbox: Arc<tokio::sync::Mutex<()>>,
    /// Wakes the analysis task (a dropped second pass hands its scopes back to it).
    pub(super) wake: Option<tokio::sync::watch::Sender<u64>>,
    /// The previews the client was shown (`stagelint.previewPrompt`), by their file: written
    /// again when an analysis covers what they render.
    pub(super) previews: HashMap<PathBuf, crate::lsp::preview::Open>,
}

/// What a second pass checks: scopes, the texts and versions of the keystroke, and its
/// generation (a newer edit makes it stale).
pub(super) struct Replay {
    pub(super) scopes: Vec<PathBuf>,
    pub(super) overlay: std::sync::Arc<HashMap<PathBuf, String>>,
    pub(super) versions: HashMap<PathBuf, i32>,
    pub(super) roots: Vec<PathBuf>,
    pub(super) generation: u64,
}

impl State {
    pub(super) fn encoding(&self) -> Encoding {
        self.encoding.unwrap_or(Encoding::Utf16)
    }

    /// How the client sees the files of `analysis`: the open documents as it named them, with
    /// the versions the analysis read (the texts it sent, where positions count a byte order mark).
    pub(super) fn open_in(&self, analysis: &Analysis) -> convert::Open {
        convert::Open {
            encoding: self.encoding(),
            uris: self.uris.clone(),
            versions: analysis.versions.clone(),
            hide_baselined: self.hide_baselined,
            rule_links: self.rule_links.clone(),
        }
    }

    /// [`State::open_in`] for texts read now: every open document, at its current version.
    pub(super) fn open_now(&self) -> convert::Open {
        let versions = self.documents.iter().map(|(p, d)| (p.clone(), d.version)).collect();
        convert::Open {
            encoding: self.encoding(),
            uris: self.uris.clone(),
            versions,
            hide_baselined: self.hide_baselined,
            rule_links: self.rule_links.clone(),
        }
    }

    /// Whether the scope is still the server's to check: under a workspace folder, or holding
    /// an open document.
    pub(super) fn wanted_scope(&self, scope: &std::path::Path) -> bool {
        self.roots.iter().any(|root| scope.starts_with(root)) || self.documents.keys().any(|p| p.starts_with(scope))
    }

    /// Whether a command may read `path`: an open document, or a file under a workspace folder
    /// once symlinks are resolved (a repository's link cannot lead a dry-run outside it).
    pub(super) fn may_read(&self, path: &std::path::Path) -> bool {
        if self.documents.contains_key(path) {
            return true;
        }
        let real = |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let path = real(path);
        self.roots.iter().any(|root| path.starts_with(real(root)))
    }

    /// Whether the stored analysis covering the open document at `path` read its current text.
    pub(super) fn fresh(&self, path: &std::path::Path) -> bool {
        let Some(doc) = self.documents.get(path) else { return false };
        self.analysis_for(path).is_some_and(|analysis| analysis.versions.get(path) == Some(&doc.version))
    }

    /// The freshest analysis that covers `path`: that of the nearest analysed scope at or above
    /// it (map lookups only; requests must not touch the file system).
    pub(super) fn analysis_for(&self, path: &std::path::Path) -> Option<Arc<Analysis>> {
        if is_untitled(path) {
            return self.scoped.get(path).cloned();
        }
        path.ancestors()
            .find_map(|scope| self.scoped.get(scope))
            // A breakdown config's scope is its agent directory, not an ancestor.
            .or_else(|| self.scoped.get(&scope_of_with_open(path, &|p| self.documents.contains_key(p))))
            .cloned()
    }

    /// Marks what the config at `path` governs for re-checking: the analysed scopes below its
    /// directory or holding it, the open documents below it, and the config's own scope; and its
    /// directory for listing again, as its excludes may now let in scopes never analysed.
    pub(super) fn dirty_governed(&mut self, path: &std::path::Path) {
        let dir = path.parent().unwrap_or(path).to_path_buf();
        self.dirty.relist.push(dir.clone());
        let mut scopes: Vec<PathBuf> =
            self.scoped.keys().filter(|s| s.starts_with(&dir) || dir.starts_with(s)).cloned().collect();
        let open: Vec<PathBuf> = self.documents.keys().filter(|p| p.starts_with(&dir)).cloned().collect();
        scopes.extend(open.iter().map(|p| self.scope(p)));
        scopes.push(self.scope(path));
        self.dirty.scopes.extend(scopes);
    }

    /// The analysed scopes whose check read `path` or may read it once it exists, beyond its
    /// own scope: a workflow's skill beside `workflows/`, a schema or prompt another scope
    /// names. A change there must re-check them too.
    pub(super) fn readers(&self, path: &std::path::Path) -> Vec<PathBuf> {
        self.scoped
            .iter()
            .filter(|(scope, analysis)| {
                // Within one index batch, the batch's own files are no reason: their scopes
                // are dirtied by name.
                reads(scope, analysis, path) && analysis.workspace.file_at(path).is_none_or(|file| !file.reported)
                    || beside_workflows(scope, path)
            })
            .map(|(scope, _)| scope.clone())
            .collect()
    }

    /// The scope of `path`, remembered: it changes only when files appear or disappear, which
    /// the file watcher reports (and clears the memory), so a keystroke costs no file-system call.
    pub(super) fn scope(&mut self, path: &std::path::Path) -> PathBuf {
        if is_untitled(path) {
            return path.to_path_buf();
        }
        if let Some(scope) = self.scopes.get(path) {
            return scope.clone();
        }
        let scope = scope_of_with_open(path, &|p| self.documents.contains_key(p));
        self.scopes.insert(path.to_path_buf(), scope.clone());
        scope
    }
}

/// Whether the analysis of `scope` read `path`, or would read it once it exists.
pub(super) fn reads(scope: &Path, analysis: &Analysis, path: &Path) -> bool {
    analysis.workspace.exists(path) || beside_workflows(scope, path) || governs(scope, path)
}

/// Whether a config at `path` governs `scope` or some of its files, once it exists: configs
/// are looked for upward from each file, and a missing one is no file of the analysis.
fn governs(scope: &Path, path: &Path) -> bool {
    crate::workspace::discover::is_config_name(path)
        && path.parent().is_some_and(|dir| scope.starts_with(dir) || dir.starts_with(scope))
}

/// Skills sit beside `workflows/`: a workflows scope reads its parent (see `discover`).
fn beside_workflows(scope: &Path, path: &Path) -> bool {
    scope.file_name().is_some_and(|n| n == "workflows") && scope.parent().is_some_and(|parent| path.starts_with(parent))
}

/// One finished check of some scopes, with the open documents' texts.
pub(super) struct Analysis {
    pub(super) workspace: Workspace,
    pub(super) diagnostics: Vec<Finding>,
    /// The version of each open document whose text it read.
    pub(super) versions: HashMap<PathBuf, i32>,
    /// A keystroke's first pass: the cassettes' replays were left out and follow.
    pub(super) replays_left: bool,
}

/// The scopes to re-check.
#[derive(Default, Clone)]
pub(super) struct Dirty {
    /// Everything (the first index, a config change).
    pub(super) all: bool,
    pub(super) scopes: HashSet<PathBuf>,
    /// Workspace folders added since: indexed whole, with progress.
    pub(super) folders: Vec<PathBuf>,
    /// Directories of changed configs: the workspace's scopes below them are listed again.
    pub(super) relist: Vec<PathBuf>,
}

impl Dirty {
    pub(super) fn is_empty(&self) -> bool {
        !self.all && self.scopes.is_empty() && self.folders.is_empty() && self.relist.is_empty()
    }
}

/// An `untitled:` document (no path on disk): the server keys it by its URI as a relative path,
/// and checks it on its own.
pub(super) fn is_untitled(path: &Path) -> bool {
    !path.is_absolute()
}

/// The turn to publish (see [`State::outbox`]); take it before the state lock.
pub(super) async fn publishing(state: &Mutex<State>) -> tokio::sync::OwnedMutexGuard<()> {
    let outbox = lock(state).outbox.clone();
    outbox.lock_owned().await
}

pub(super) fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    // A panic while holding the lock must not take the server down with it.
    state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
