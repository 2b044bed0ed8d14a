//! The analysis task: waits for changes, re-checks the scopes they touched (everything at first,
//! in batches so diagnostics appear while the workspace is still being read), stores the
//! results and publishes what changed. Runs for the server's lifetime, one analysis at a time.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{MessageType, NumberOrString, Uri};

use crate::lsp::convert;
use crate::lsp::state::{Analysis, State, is_untitled, lock};
use crate::workspace::Workspace;
use crate::workspace::discover::{ConfigCache, discover_for_editor, scope_of, scopes};

/// The first index is cut into this many batches, each published when done.
const BATCHES: usize = 8;

type Published = Vec<(Uri, Vec<tower_lsp_server::ls_types::Diagnostic>, Option<i32>)>;

pub(super) async fn analysis_loop(
    client: Client,
    state: Arc<Mutex<State>>,
    mut changed: watch::Receiver<u64>,
    done: watch::Sender<u64>,
) {
    let mut first = true;
    while changed.changed().await.is_ok() {
        let (generation, roots, overlay, untitled, versions, mut dirty, progress) = {
            let mut state = lock(&state);
            let mut dirty = std::mem::take(&mut state.dirty);
            dirty.all |= !state.indexed;
            // Scopes of a folder removed meanwhile are not checked again.
            dirty.scopes.retain(|scope| state.wanted_scope(scope));
            let (untitled, overlay): (HashMap<PathBuf, String>, HashMap<PathBuf, String>) =
                state.documents.iter().map(|(p, d)| (p.clone(), d.text())).partition(|(p, _)| is_untitled(p));
            let versions: HashMap<PathBuf, i32> = state.documents.iter().map(|(p, d)| (p.clone(), d.version)).collect();
            (state.generation, state.roots.clone(), Arc::new(overlay), untitled, versions, dirty, state.progress)
        };
        if dirty.is_empty() {
            let _ = done.send(generation);
            continue;
        }
        let all = dirty.all;
        let folders = std::mem::take(&mut dirty.folders);
        let whole = all || !folders.is_empty();
        let indexing_folders = !folders.is_empty();
        let wanted = if whole {
            let overlay = overlay.clone();
            let roots = roots.clone();
            let listed = tokio::task::spawn_blocking(move || {
                if all {
                    let mut wanted: HashSet<PathBuf> = overlay.keys().map(|p| scope_of(p)).collect();
                    wanted.extend(scopes(&roots));
                    wanted
                } else {
                    let mut wanted = dirty.scopes;
                    wanted.extend(scopes(&folders));
                    wanted
                }
            })
            .await;
            let mut wanted = listed.unwrap_or_default();
            if all {
                wanted.extend(untitled.keys().cloned());
            }
            wanted
        } else {
            dirty.scopes
        };
        let (untitled_scopes, mut wanted): (Vec<PathBuf>, Vec<PathBuf>) =
            wanted.into_iter().partition(|p| is_untitled(p));
        wanted.sort();
        // Untitled documents are checked on their own, each as its own batch.
        for path in untitled_scopes.iter().cloned() {
            let Some(text) = untitled.get(&path).cloned() else { continue };
            let scope = path.clone();
            let result = tokio::task::spawn_blocking(move || analyse_untitled(&scope, text)).await;
            let Ok(mut analysis) = result else { continue };
            analysis.versions = versions.iter().filter(|(p, _)| **p == path).map(|(p, v)| (p.clone(), *v)).collect();
            let publish = store(&state, std::slice::from_ref(&path), &Arc::new(analysis), &versions);
            deliver(&client, &state, publish).await;
        }
        // The first check reads the whole workspace, and a folder added later is read whole too;
        // show it as progress when the client can.
        let indexing = if (std::mem::take(&mut first) || indexing_folders) && progress {
            let token = NumberOrString::String("stagelint-index".into());
            match client.create_work_done_progress(token.clone()).await {
                Ok(()) => {
                    Some(client.progress(token, "stagelint: checking the workspace").with_percentage(0).begin().await)
                }
                Err(_) => None,
            }
        } else {
            None
        };
        let size = if whole { wanted.len().div_ceil(BATCHES).max(1) } else { wanted.len().max(1) };
        let batches: Vec<Vec<PathBuf>> = wanted.chunks(size).map(<[PathBuf]>::to_vec).collect();
        let count = batches.len();
        for (index, batch) in batches.into_iter().enumerate() {
            let paths = batch.clone();
            let texts = overlay.clone();
            let folders = roots.clone();
            let result = tokio::task::spawn_blocking(move || analyse(&paths, &texts, &folders)).await;
            let analysis = match result {
                Ok(Ok(mut analysis)) => {
                    analysis.versions = versions
                        .iter()
                        .filter(|(p, _)| overlay.contains_key(*p))
                        .map(|(p, v)| (p.clone(), *v))
                        .collect();
                    Arc::new(analysis)
                }
                Ok(Err(message)) => {
                    // Once per distinct problem, not once per keystroke.
                    if lock(&state).shown.insert(message.clone()) {
                        client.show_message(MessageType::ERROR, message).await;
                    }
                    continue;
                }
                Err(_) => {
                    let message = "stagelint: the analysis panicked; keeping the last results";
                    client.log_message(MessageType::ERROR, message).await;
                    continue;
                }
            };
            let publish = store(&state, &batch, &analysis, &versions);
            deliver(&client, &state, publish).await;
            if let Some(progress) = &indexing {
                let percent = u32::try_from((index + 1) * 100 / count).unwrap_or(100);
                progress.report(percent).await;
            }
        }
        if let Some(progress) = indexing {
            progress.finish().await;
        }
        wanted.extend(untitled_scopes);
        let publish = if all { forget_gone(&state, &wanted) } else { Vec::new() };
        deliver(&client, &state, publish).await;
        lock(&state).indexed = true;
        let _ = done.send(generation);
    }
}

/// Sends what changed: published to a pushing client; to a pulling one that takes it, a
/// `workspace/diagnostic/refresh`, so it pulls again (not awaited: the client answers when it
/// can, and the analysis goes on).
pub(super) async fn deliver(client: &Client, state: &Mutex<State>, changed: Published) {
    if changed.is_empty() {
        return;
    }
    let (pull, refresh) = {
        let state = lock(state);
        (state.pull, state.refresh)
    };
    if !pull {
        for (uri, diagnostics, version) in changed {
            client.publish_diagnostics(uri, diagnostics, version).await;
        }
    } else if refresh {
        let client = client.clone();
        tokio::spawn(async move {
            let _ = client.workspace_diagnostic_refresh().await;
        });
    }
}

/// Stores `analysis` for the scopes of `batch` and returns what to publish, unless a change
/// arrived meanwhile for one of them: then the batch is redone with the newer text.
fn store(
    state: &Mutex<State>,
    batch: &[PathBuf],
    analysis: &Arc<Analysis>,
    versions: &HashMap<PathBuf, i32>,
) -> Published {
    let mut state = lock(state);
    if state.dirty.all || batch.iter().any(|scope| state.dirty.scopes.contains(scope)) {
        state.dirty.scopes.extend(batch.iter().cloned());
        return Vec::new();
    }
    // A workspace folder was removed while this ran: what is left of the batch is redone.
    if batch.iter().any(|scope| !state.wanted_scope(scope)) {
        let left: Vec<PathBuf> = batch.iter().filter(|scope| state.wanted_scope(scope)).cloned().collect();
        state.dirty.scopes.extend(left);
        return Vec::new();
    }
    // A loose file's own scope is stale once a directory scope covers it (a cassette or a state
    // machine appeared beside it).
    let own: HashSet<&PathBuf> = batch.iter().collect();
    for file in analysis.workspace.reported_files() {
        if !own.contains(&file.path) {
            state.scoped.remove(&file.path);
        }
    }
    for scope in batch {
        state.scoped.insert(scope.clone(), analysis.clone());
    }
    // A fresh check replaces what a dry-run added to a file.
    for file in analysis.workspace.reported_files() {
        state.dry_run.remove(&file.path);
    }
    changed_batches(&mut state, batch, analysis, versions)
}

/// After a whole-workspace check: drops analyses of scopes that are gone and clears the
/// diagnostics of files nothing covers any more.
fn forget_gone(state: &Mutex<State>, wanted: &[PathBuf]) -> Published {
    let mut state = lock(state);
    let keep: HashSet<&PathBuf> = wanted.iter().collect();
    let dirty = state.dirty.scopes.clone();
    state.scoped.retain(|scope, _| keep.contains(scope) || dirty.contains(scope));
    let gone: Vec<PathBuf> =
        state.published.keys().filter(|path| state.analysis_for(path).is_none()).cloned().collect();
    let mut out = Vec::new();
    for path in gone {
        state.published.remove(&path);
        if let Some(uri) = state.uris.get(&path).cloned().or_else(|| Uri::from_file_path(&path)) {
            out.push((uri, Vec::new(), None));
        }
    }
    out
}

/// The (uri, diagnostics, version) to publish after `analysis` of `scopes`: files whose
/// diagnostics changed, and files of those scopes that no longer have any.
fn changed_batches(
    state: &mut State,
    scopes: &[PathBuf],
    analysis: &Analysis,
    versions: &HashMap<PathBuf, i32>,
) -> Published {
    let encoding = state.encoding();
    let open = state.open();
    let mut by_file: HashMap<crate::diagnostic::FileId, Vec<_>> = HashMap::new();
    for d in &analysis.diagnostics {
        by_file.entry(d.file).or_default().push(convert::diagnostic_named(&analysis.workspace, d, encoding, &open));
    }
    let mut out = Vec::new();
    let mut covered = HashSet::new();
    for file in analysis.workspace.reported_files() {
        covered.insert(file.path.clone());
        let diagnostics = by_file.remove(&file.id).unwrap_or_default();
        // Unchanged findings are not sent again; an open file hears once even when clean.
        let before = state.published.get(&file.path);
        let open = state.uris.contains_key(&file.path);
        if before.map_or(diagnostics.is_empty() && !open, |b| *b == diagnostics) {
            continue;
        }
        let Some(uri) = state.uris.get(&file.path).cloned().or_else(|| convert::uri(file)) else { continue };
        out.push((uri, diagnostics.clone(), versions.get(&file.path).copied()));
        state.published.insert(file.path.clone(), diagnostics);
    }
    // Files that showed findings and are gone from these scopes (deleted, no longer ours).
    let in_scopes = |path: &Path| scopes.iter().any(|s| path.starts_with(s));
    let gone: Vec<PathBuf> =
        state.published.keys().filter(|path| !covered.contains(*path) && in_scopes(path)).cloned().collect();
    for path in gone {
        if let Some(uri) = state.uris.get(&path).cloned().or_else(|| Uri::from_file_path(&path)) {
            out.push((uri, Vec::new(), versions.get(&path).copied()));
        }
        state.published.remove(&path);
    }
    out
}

fn analyse(paths: &[PathBuf], overlay: &HashMap<PathBuf, String>, roots: &[PathBuf]) -> Result<Analysis, String> {
    // Open configs count unsaved; a broken one is a finding on itself and only leaves out the
    // files it governs.
    let mut configs = ConfigCache::for_editor(overlay);
    let workspace = discover_for_editor(paths, &mut configs, overlay, roots).map_err(|e| e.to_string())?;
    let diagnostics = crate::check::check(&workspace);
    Ok(Analysis { workspace, diagnostics, versions: HashMap::new() })
}

/// An untitled document alone, as what its content says it is, with the default settings.
fn analyse_untitled(path: &Path, text: String) -> Analysis {
    let mut workspace = Workspace::new();
    if let Some(kind) = crate::workspace::classify_content(&text) {
        let config = Arc::new(crate::config::Config::defaults(Path::new("/")));
        let display = path.to_string_lossy().into_owned();
        workspace.add(path.to_path_buf(), display, text, kind, config);
    }
    let diagnostics = crate::check::check(&workspace);
    Analysis { workspace, diagnostics, versions: HashMap::new() }
}
