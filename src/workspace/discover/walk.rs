//! Walking directories: which files a walk lists (`.gitignore` honoured, hidden directories
//! included, `.git` not) and which of them discovery reads.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::workspace::discover::exclude::ConfigStore;
use crate::workspace::discover::pending::Role;

#[cfg(test)]
thread_local! {
    /// How many files the walks started on this thread listed.
    pub(super) static WALKED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// How many walkers were set up on this thread (each reads the git config).
    pub(super) static WALKERS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The files under `root` that a walk reads (`.gitignore` honoured, hidden directories
/// included, `.git` and excluded directories not), sorted by path: the order of a depth-first
/// walk by name. Excluded files are listed: whoever adds them decides (a file can be excluded
/// and still exist for the rules that look it up).
pub(super) fn walk_files(root: &Path, store: &Arc<ConfigStore>) -> Vec<PathBuf> {
    let walker = walker(root, store).sort_by_file_name(|a, b| a.cmp(b)).build();
    let files: Vec<PathBuf> = walker
        .flatten()
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.into_path())
        .collect();
    #[cfg(test)]
    WALKED.with(|w| w.set(w.get() + files.len()));
    files
}

/// [`walk_files`] of each directory in `paths` (files are left out), by one walker: the git
/// config and the ignore files of the directories' common ancestors are read once, not once
/// per directory (an editor indexes thousands of machine directories in batches).
pub(super) fn walk_files_of(paths: &[PathBuf], store: &Arc<ConfigStore>) -> HashMap<PathBuf, Vec<PathBuf>> {
    let dirs: Vec<&PathBuf> = paths.iter().filter(|p| p.is_dir()).collect();
    let Some((first, rest)) = dirs.split_first() else { return HashMap::new() };
    let mut builder = walker(first, store);
    for dir in rest {
        builder.add(dir);
    }
    let mut out: HashMap<PathBuf, Vec<PathBuf>> = HashMap::new();
    // The walker lists each root whole before the next; its entry at depth 0 says which.
    let mut current: Option<PathBuf> = None;
    for entry in builder.sort_by_file_name(|a, b| a.cmp(b)).build().flatten() {
        if entry.depth() == 0 {
            current = Some(entry.path().to_path_buf());
            out.entry(entry.path().to_path_buf()).or_default();
        } else if let Some(root) = &current
            && entry.file_type().is_some_and(|t| t.is_file())
        {
            out.entry(root.clone()).or_default().push(entry.into_path());
        }
    }
    #[cfg(test)]
    WALKED.with(|w| w.set(w.get() + out.values().map(Vec::len).sum::<usize>()));
    out
}

fn walker(root: &Path, store: &Arc<ConfigStore>) -> ignore::WalkBuilder {
    #[cfg(test)]
    WALKERS.with(|w| w.set(w.get() + 1));
    let mut builder = ignore::WalkBuilder::new(root);
    let store = store.clone();
    // A directory an exclude names is not walked into (a root is walked whatever its name).
    builder.hidden(false).require_git(false).filter_entry(move |entry| {
        let is_dir = entry.depth() > 0 && entry.file_type().is_some_and(|t| t.is_dir());
        entry.file_name() != ".git" && !(is_dir && store.excludes(&super::normalize(&store.cwd().join(entry.path()))))
    });
    builder
}

/// [`walk_files`] with directories read on all cores, for the one directory named on the
/// command line (a whole repository). Not for small ones: the parallel walker's threads cost about a
/// millisecond to start and stop, more than a machine directory takes to read.
pub(super) fn walk_files_parallel(root: &Path, store: &Arc<ConfigStore>) -> Vec<PathBuf> {
    /// One walker thread's finds, handed over when its visitor is dropped: no lock per file.
    struct Sink<'a> {
        mine: Vec<PathBuf>,
        all: &'a std::sync::Mutex<Vec<PathBuf>>,
    }
    impl Drop for Sink<'_> {
        fn drop(&mut self) {
            self.all.lock().unwrap_or_else(|e| e.into_inner()).append(&mut self.mine);
        }
    }
    let all = std::sync::Mutex::new(Vec::new());
    walker(root, store).build_parallel().run(|| {
        let mut sink = Sink { mine: Vec::new(), all: &all };
        Box::new(move |entry| {
            if let Ok(entry) = entry
                && entry.file_type().is_some_and(|t| t.is_file())
            {
                sink.mine.push(entry.into_path());
            }
            ignore::WalkState::Continue
        })
    });
    let mut files = all.into_inner().unwrap_or_else(|e| e.into_inner());
    files.sort_unstable_by(|a, b| crate::util::path_order(a, b));
    #[cfg(test)]
    WALKED.with(|w| w.set(w.get() + files.len()));
    files
}

/// Only markdown, YAML (state machines, workflows), climpt JSON and TypeScript (atomic
/// workflows) files are read during a walk.
pub(super) fn could_be_ours(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    crate::workspace::SM_FILE_NAMES.contains(&name)
        || name.ends_with(".yaml")
        || name.ends_with(".yml")
        || name.ends_with(".md")
        || name.ends_with(".markdown")
        || name == "agent.json"
        || (name.ends_with(".json") && name.contains("registry"))
        || crate::workspace::is_cassette_name(name)
        || (name.ends_with(".ts") && !name.ends_with(".d.ts"))
}

/// Whether a file met as `role` is read: a file named on the command line always is.
pub(super) fn wanted(path: &Path, role: Role) -> bool {
    role == Role::Explicit || could_be_ours(path)
}
