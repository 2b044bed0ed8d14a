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
use crate::lsp::state::{Analysis, Replay, State, is_untitled, lock, publishing, reads};
use crate::workspace::Workspace;
use crate::workspace::discover::{ConfigCache, discover_for_editor, scope_of_with_open, scopes_with_open};

/// The first index is cut into at least this many batches, each published when done.
const BATCHES: usize = 8;

/// At most this many scopes in one index batch (a few milliseconds of work): edits wait for at
/// most one batch, as they are checked before the next one starts.
const MAX_BATCH: usize = 16;

type Published = Vec<(Uri, Vec<tower_lsp_server::ls_types::Diagnostic>, Option<i32>)>;

pub(super) async fn analysis_loop(
    client: Client,
    state: Arc<Mutex<State>>,
    mut changed: watch::Receiver<u64>,
    done: watch::Sender<u64>,
) {
    let mut first = true;
    let mut trimmed = std::time::Instant::now();
    while changed.changed().await.is_ok() {
        let (generation, roots, overlay, untitled, versions, mut dirty, progress) = {
            let mut state = lock(&state);
            let mut dirty = std::mem::take(&mut state.dirty);
            state.analysing = true;
            dirty.all |= !state.indexed;
            // Scopes of a folder removed meanwhile are not checked again.
            dirty.scopes.retain(|scope| state.wanted_scope(scope));
            state.checking = if dirty.all { None } else { Some(dirty.scopes.clone()) };
            state.checked.clear();
            let (untitled, overlay): (HashMap<PathBuf, String>, HashMap<PathBuf, String>) =
                state.documents.iter().map(|(p, d)| (p.clone(), d.text())).partition(|(p, _)| is_untitled(p));
            let versions: HashMap<PathBuf, i32> = state.documents.iter().map(|(p, d)| (p.clone(), d.version)).collect();
            (state.generation, state.roots.clone(), Arc::new(overlay), untitled, versions, dirty, state.progress)
        };
        if dirty.is_empty() {
            let mut locked = lock(&state);
            locked.analysing = false;
            locked.checking = Some(HashSet::new());
            drop(locked);
            let _ = done.send(generation);
            continue;
        }
        let all = dirty.all;
        let folders = std::mem::take(&mut dirty.folders);
        let relist = std::mem::take(&mut dirty.relist);
        let whole = all || !folders.is_empty();
        let indexing_folders = !folders.is_empty();
        // Scopes checked with newer text than this round's (edits during the index).
        let mut edited: HashSet<PathBuf> = HashSet::new();
        let wanted = if whole || !relist.is_empty() {
            if all {
                // The open documents' scopes are checked while the workspace is listed.
                let open: Vec<PathBuf> = overlay.keys().map(|p| scope_in(p, &overlay)).collect();
                lock(&state).dirty.scopes.extend(open);
            }
            let overlay = overlay.clone();
            let roots = roots.clone();
            let listing = tokio::task::spawn_blocking(move || {
                // Excluded directories are not walked, with the open configs' unsaved text.
                let configs = ConfigCache::for_editor(&overlay);
                let open = |p: &Path| overlay.contains_key(p);
                if all {
                    let mut wanted: HashSet<PathBuf> = overlay.keys().map(|p| scope_in(p, &overlay)).collect();
                    wanted.extend(scopes_with_open(&roots, &open, configs.store()));
                    wanted
                } else {
                    let mut wanted = dirty.scopes;
                    wanted.extend(scopes_with_open(&folders, &open, configs.store()));
                    // A changed config's excludes may let in scopes no analysis has: its
                    // directory is listed again (the folders below it, for one above them).
                    let mut below: Vec<PathBuf> = relist
                        .iter()
                        .flat_map(|dir| match roots.iter().any(|root| dir.starts_with(root) && dir != root) {
                            true => vec![dir.clone()],
                            false => roots.iter().filter(|root| root.starts_with(dir)).cloned().collect(),
                        })
                        .collect();
                    below.sort();
                    below.dedup();
                    wanted.extend(scopes_with_open(&below, &open, configs.store()));
                    wanted
                }
            });
            // Listing a large workspace takes a while: documents opened or edited meanwhile are
            // checked as it runs.
            while !listing.is_finished() {
                edited.extend(check_edits(&client, &state).await);
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            }
            let mut wanted = listing.await.unwrap_or_default();
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
            let _turn = publishing(&state).await;
            let publish = store(&state, std::slice::from_ref(&path), &Arc::new(analysis), &versions, generation);
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
        // The open documents' scopes first: what the user looks at is published first.
        let open: HashSet<PathBuf> = overlay.keys().map(|p| scope_in(p, &overlay)).collect();
        if whole {
            wanted.sort_by_key(|scope| !open.contains(scope));
        }
        let size = if whole { wanted.len().div_ceil(BATCHES).clamp(1, MAX_BATCH) } else { wanted.len().max(1) };
        let batches: Vec<Vec<PathBuf>> = wanted.chunks(size).map(<[PathBuf]>::to_vec).collect();
        let count = batches.len();
        let mut reported = 0;
        for (index, mut batch) in batches.into_iter().enumerate() {
            // Edits made while indexing go before the next batch.
            if whole {
                edited.extend(check_edits(&client, &state).await);
                batch.retain(|scope| !edited.contains(scope));
            }
            if batch.is_empty() {
                continue;
            }
            let paths = batch.clone();
            let texts = overlay.clone();
            let folders = roots.clone();
            // A keystroke's re-check publishes without replays first (see `replay_later`).
            let first_pass = !whole && !lock(&state).pull;
            let result = tokio::task::spawn_blocking(move || {
                let mut analysis = analyse(&paths, &texts, &folders, first_pass)?;
                if whole {
                    // The index keeps every scope's workspace for the editor features; the
                    // parses are made again for the few a request touches. Dropped here, off
                    // the thread that answers the editor.
                    analysis.workspace.forget_parses();
                }
                Ok::<Analysis, String>(analysis)
            })
            .await;
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
            lock(&state).checked.extend(batch.iter().cloned());
            let turn = publishing(&state).await;
            let publish = store(&state, &batch, &analysis, &versions, generation);
            deliver(&client, &state, publish).await;
            drop(turn);
            if analysis.replays_left {
                replay_later(&client, &state, batch, overlay.clone(), versions.clone(), roots.clone(), generation);
            }
            if let Some(progress) = &indexing {
                let percent = u32::try_from((index + 1) * 100 / count).unwrap_or(100);
                if percent != reported {
                    reported = percent;
                    progress.report(percent).await;
                }
            }
        }
        if let Some(progress) = indexing {
            progress.finish().await;
        }
        wanted.extend(untitled_scopes);
        // Scopes checked for edits during the round (a document opened while the index ran)
        // are current too, though the listing, made before, did not have them.
        wanted.extend(edited);
        let turn = publishing(&state).await;
        let publish = if all { forget_gone(&state, &wanted) } else { Vec::new() };
        deliver(&client, &state, publish).await;
        drop(turn);
        {
            let mut state = lock(&state);
            state.indexed = true;
            state.analysing = false;
            state.checking = Some(HashSet::new());
            state.checked.clear();
            // Analyses still running started after this round; older changes are no news to them.
            state.touched.retain(|(touched, _)| *touched > generation);
        }
        let _ = done.send(generation);
        // Nothing waiting: hand the memory this round freed back, at most once a second.
        if !changed.has_changed().unwrap_or(true) && trimmed.elapsed() >= std::time::Duration::from_secs(1) {
            crate::util::release_free_memory();
            trimmed = std::time::Instant::now();
        }
    }
}

/// Checks the scopes edited since the analysis started (not a whole re-check) and publishes
/// them, so a keystroke during the first index waits for one batch, not for the index.
/// Returns the scopes it checked.
async fn check_edits(client: &Client, state: &Arc<Mutex<State>>) -> Vec<PathBuf> {
    let (scopes, overlay, versions, roots, generation, first_pass) = {
        let mut state = lock(state);
        if state.dirty.all || state.dirty.scopes.is_empty() {
            return Vec::new();
        }
        let mut scopes: Vec<PathBuf> = std::mem::take(&mut state.dirty.scopes).into_iter().collect();
        // Untitled documents and scopes of removed folders are left to the next round.
        let (now, later): (Vec<PathBuf>, Vec<PathBuf>) =
            scopes.drain(..).partition(|scope| !is_untitled(scope) && state.wanted_scope(scope));
        state.dirty.scopes.extend(later);
        let overlay: HashMap<PathBuf, String> =
            state.documents.iter().filter(|(p, _)| !is_untitled(p)).map(|(p, d)| (p.clone(), d.text())).collect();
        let versions: HashMap<PathBuf, i32> = state.documents.iter().map(|(p, d)| (p.clone(), d.version)).collect();
        (now, Arc::new(overlay), versions, state.roots.clone(), state.generation, !state.pull)
    };
    if scopes.is_empty() {
        return scopes;
    }
    let (paths, texts, folders) = (scopes.clone(), overlay.clone(), roots.clone());
    let done = tokio::task::spawn_blocking(move || analyse(&paths, &texts, &folders, first_pass)).await;
    let Ok(Ok(mut analysis)) = done else {
        // The main loop's next round reports the problem.
        lock(state).dirty.scopes.extend(scopes);
        return Vec::new();
    };
    analysis.versions =
        versions.iter().filter(|(p, _)| overlay.contains_key(*p)).map(|(p, v)| (p.clone(), *v)).collect();
    let replays_left = analysis.replays_left;
    lock(state).checked.extend(scopes.iter().cloned());
    let turn = publishing(state).await;
    let publish = store(state, &scopes, &Arc::new(analysis), &versions, generation);
    deliver(client, state, publish).await;
    drop(turn);
    if replays_left {
        replay_later(client, state, scopes.clone(), overlay, versions, roots, generation);
    }
    scopes
}

/// The second pass after a keystroke: the full check with the cassettes' replays, of the same
/// texts, published when done unless anything changed meanwhile (the next edit cancels it: it
/// does not start, or its result is dropped). The keystroke's own findings are out already.
/// One runs at a time: a keystroke made while one runs leaves its pass to run next, in place
/// of any other waiting (with their scopes), so replays never pile up behind fast typing.
fn replay_later(
    client: &Client,
    state: &Arc<Mutex<State>>,
    scopes: Vec<PathBuf>,
    overlay: Arc<HashMap<PathBuf, String>>,
    versions: HashMap<PathBuf, i32>,
    roots: Vec<PathBuf>,
    generation: u64,
) {
    let mut job = Replay { scopes, overlay, versions, roots, generation };
    {
        let mut locked = lock(state);
        if locked.replaying {
            if let Some(waiting) = locked.replay_next.take() {
                for scope in waiting.scopes {
                    if !job.scopes.contains(&scope) {
                        job.scopes.push(scope);
                    }
                }
            }
            locked.replay_next = Some(job);
            return;
        }
        locked.replaying = true;
    }
    let (client, state) = (client.clone(), state.clone());
    tokio::spawn(async move {
        let mut next = Some(job);
        while let Some(job) = next {
            replay(&client, &state, job).await;
            let mut locked = lock(&state);
            next = locked.replay_next.take();
            locked.replaying = next.is_some();
        }
    });
}

/// Runs one second pass, unless its keystroke is stale.
async fn replay(client: &Client, state: &Arc<Mutex<State>>, job: Replay) {
    let Replay { scopes, overlay, versions, roots, generation } = job;
    {
        let mut locked = lock(state);
        if locked.generation != generation {
            owe_replays(&mut locked, scopes);
            return;
        }
    }
    let (paths, texts) = (scopes.clone(), overlay.clone());
    let Ok(Ok(mut analysis)) = tokio::task::spawn_blocking(move || analyse(&paths, &texts, &roots, false)).await else {
        return;
    };
    analysis.versions =
        versions.iter().filter(|(p, _)| overlay.contains_key(*p)).map(|(p, v)| (p.clone(), *v)).collect();
    let _turn = publishing(state).await;
    let publish = {
        let mut locked = lock(state);
        if locked.generation != generation {
            owe_replays(&mut locked, scopes);
            return;
        }
        store_in(&mut locked, &scopes, &Arc::new(analysis), &versions, generation)
    };
    deliver(client, state, publish).await;
}

/// A second pass dropped as stale still owes its scopes their replays: a change elsewhere
/// made it stale, and the first pass keeps a closed cassette's old findings until a second
/// pass is in. Scopes that a waiting pass, a pending re-check or the running round covers are
/// left to it; the others are checked again (a first pass, then their own second pass).
fn owe_replays(state: &mut State, scopes: Vec<PathBuf>) {
    let covered = |scope: &PathBuf| {
        state.dirty.all
            || state.dirty.scopes.contains(scope)
            // The running round checks it, and a first pass schedules its own second pass;
            // not once it has (this pass may be that one), nor a scope it checked aside.
            || (state.analysing
                && !state.checked.contains(scope)
                && state.checking.as_ref().is_none_or(|checking| checking.contains(scope)))
            || state.replay_next.as_ref().is_some_and(|next| next.scopes.contains(scope))
    };
    let owed: Vec<PathBuf> = scopes.into_iter().filter(|scope| !covered(scope)).collect();
    if owed.is_empty() {
        return;
    }
    state.dirty.scopes.extend(owed);
    // The same generation: a new one would make other second passes stale in turn.
    if let Some(wake) = &state.wake {
        let _ = wake.send(state.generation);
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
    since: u64,
) -> Published {
    store_in(&mut lock(state), batch, analysis, versions, since)
}

/// [`store`] under a lock already held.
fn store_in(
    state: &mut State,
    batch: &[PathBuf],
    analysis: &Arc<Analysis>,
    versions: &HashMap<PathBuf, i32>,
    since: u64,
) -> Published {
    // A file it read changed after generation `since` (a skill, a context file, a file of
    // another scope of the batch): its result is stale.
    let read_changed = state
        .touched
        .iter()
        .any(|(generation, path)| *generation > since && batch.iter().any(|scope| reads(scope, analysis, path)));
    if state.dirty.all || read_changed || batch.iter().any(|scope| state.dirty.scopes.contains(scope)) {
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
    crate::lsp::preview::refresh(state, analysis);
    changed_batches(state, batch, analysis, versions)
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
    // The analysis' texts: an open document's as the client sent it.
    let open = state.open_in(analysis);
    let mut by_file: HashMap<crate::diagnostic::FileId, Vec<_>> = HashMap::new();
    for d in analysis.diagnostics.iter().filter(|d| open.shows(d)) {
        by_file.entry(d.file).or_default().push(convert::diagnostic(&analysis.workspace, d, &open));
    }
    let mut out = Vec::new();
    let mut covered = HashSet::new();
    for file in analysis.workspace.reported_files() {
        covered.insert(file.path.clone());
        let mut diagnostics = by_file.remove(&file.id).unwrap_or_default();
        // A first pass keeps what it did not check, so nothing flickers until the second pass
        // is in: a closed cassette (not read at all) keeps everything, any other file (an
        // open cassette too) its replay findings.
        if analysis.replays_left
            && let Some(before) = state.published.get(&file.path)
        {
            if file.kind == crate::workspace::FileKind::Cassette && !versions.contains_key(&file.path) {
                diagnostics = before.clone();
            } else {
                diagnostics.extend(before.iter().filter(|d| is_replay(d)).cloned());
            }
        }
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
    let mut gone: Vec<PathBuf> = scopes
        .iter()
        .flat_map(|scope| published_under(&state.published, scope))
        .filter(|path| !covered.contains(*path))
        .cloned()
        .collect();
    // Scopes may nest (a loose file inside a directory scope of the same batch).
    gone.sort();
    gone.dedup();
    for path in gone {
        if let Some(uri) = state.uris.get(&path).cloned().or_else(|| Uri::from_file_path(&path)) {
            out.push((uri, Vec::new(), versions.get(&path).copied()));
        }
        state.published.remove(&path);
    }
    out
}

/// The published files at or under `scope` (a directory or one file): one range of the
/// ordered map, as paths order by component and a directory's files follow it.
fn published_under<'a, V>(
    published: &'a std::collections::BTreeMap<PathBuf, V>,
    scope: &'a Path,
) -> impl Iterator<Item = &'a PathBuf> + 'a {
    published
        .range::<Path, _>((std::ops::Bound::Included(scope), std::ops::Bound::Unbounded))
        .map(|(path, _)| path)
        .take_while(move |path| path.starts_with(scope))
}

/// Reads and checks the scopes `paths`. A `first_pass` leaves the cassettes' replays out when
/// there are any (`replays_left`): the keystroke path publishes without them.
fn analyse(
    paths: &[PathBuf],
    overlay: &HashMap<PathBuf, String>,
    roots: &[PathBuf],
    first_pass: bool,
) -> Result<Analysis, String> {
    // Open configs count unsaved; a broken one is a finding on itself and only leaves out the
    // files it governs.
    let mut configs = ConfigCache::for_editor(overlay);
    let workspace = discover_for_editor(paths, &mut configs, overlay, roots).map_err(|e| e.to_string())?;
    let replays_left = first_pass && workspace.files().iter().any(|f| f.kind == crate::workspace::FileKind::Cassette);
    let diagnostics = if replays_left {
        crate::check::check_without_replays(&workspace, &|file| overlay.contains_key(&file.path))
    } else {
        crate::check::check(&workspace)
    };
    Ok(Analysis { workspace, diagnostics, versions: HashMap::new(), replays_left })
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
    Analysis { workspace, diagnostics, versions: HashMap::new(), replays_left: false }
}

/// The scope of `path` with the open documents counted as files (an unsaved `sm.yaml`).
fn scope_in(path: &Path, overlay: &HashMap<PathBuf, String>) -> PathBuf {
    scope_of_with_open(path, &|p| overlay.contains_key(p))
}

/// Whether a published diagnostic is one only a replay finds.
fn is_replay(diagnostic: &tower_lsp_server::ls_types::Diagnostic) -> bool {
    matches!(&diagnostic.code, Some(NumberOrString::String(code)) if crate::runtime::lint::is_replay_code(code))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::lsp::state::State;

    #[test]
    fn the_files_under_a_scope_are_one_range_of_the_published_map() {
        let published: std::collections::BTreeMap<PathBuf, ()> = [
            "/w/a.md",
            "/w/sm",
            "/w/sm/plan.md",
            "/w/sm/sub/deep.md",
            "/w/sm-2/plan.md",
            "/w/sm.md",
            "/w/smx/x.md",
            "/w/sm2/y.md",
            "/w/z.md",
        ]
        .into_iter()
        .map(|p| (PathBuf::from(p), ()))
        .collect();
        let under = |scope: &str| -> Vec<String> {
            published_under(&published, Path::new(scope)).map(|p| p.display().to_string()).collect()
        };
        assert_eq!(under("/w/sm"), ["/w/sm", "/w/sm/plan.md", "/w/sm/sub/deep.md"]);
        // A loose file is its own scope.
        assert_eq!(under("/w/a.md"), ["/w/a.md"]);
        assert!(under("/w/none").is_empty());
        assert_eq!(under("/w").len(), published.len());
    }

    /// Found by the property test (3,000 sequences): a keystroke round published its first
    /// pass, and its own second pass, made stale by an edit elsewhere before the round ended,
    /// was dropped as "the running round checks it"; the round had, and a closed cassette kept
    /// the findings of its old text. A scope the round has checked is owed its second pass.
    #[test]
    fn a_stale_second_pass_of_a_scope_the_round_has_checked_is_owed() {
        let scope = PathBuf::from("/w/dry");
        let mut state = State { analysing: true, checking: Some(HashSet::from([scope.clone()])), ..State::default() };
        // Not checked yet: the round's first pass will schedule a second pass of its own.
        owe_replays(&mut state, vec![scope.clone()]);
        assert!(state.dirty.scopes.is_empty());
        // Checked: nothing else would replay it.
        state.checked.insert(scope.clone());
        owe_replays(&mut state, vec![scope.clone()]);
        assert!(state.dirty.scopes.contains(&scope));
    }
}
