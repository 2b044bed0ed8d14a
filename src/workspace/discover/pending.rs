//! The files found so far, each once, with the config that governs it and why it is read.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::{Config, ConfigError};
use crate::util::FastMap;
use crate::workspace::FileKind;
use crate::workspace::discover::configs::{ConfigCache, is_config_name};
use crate::workspace::discover::exclude::ConfigStore;
use crate::workspace::discover::paths::{Roots, display_path, normalize};
use crate::workspace::discover::walk::{walk_files, wanted};

/// How a file came to be read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// Named on the command line: read whatever its name.
    Explicit,
    /// Found by walking a directory on the command line.
    Walked,
    /// Read only so cross-file rules see the whole state machine.
    Context,
}

/// How a file was found, which says what an exclude does to it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Found {
    /// A walk listed it: the directories above it were matched already (an excluded one is not
    /// walked into), its own name is left. Excluded, it is not read, though rules may ask
    /// whether it exists.
    Listed,
    /// As a walk would find it (an editor's unsaved file, a workflow the walk skipped): its
    /// directories below the path named are matched too. Excluded, it is not read.
    Unlisted,
    /// Another file names it (a workflow's prompt, a `$schema`). Excluded, it is read for that
    /// file and never reported.
    Named,
}

/// What discovery already knows about a file's kind.
#[derive(Clone, PartialEq, Eq)]
pub(super) enum KindHint {
    /// Decide from the name and content ([`classify`]).
    Classify,
    /// Decided by where the file sits (a schema or prompt of an agent).
    Is(FileKind),
    /// Only its existence matters (a prompt that is not markdown, a file rules may look up).
    KnownOnly,
}

/// A file to read, with the config that governs it.
pub(super) struct PendingFile {
    pub(super) path: Key,
    pub(super) display: String,
    pub(super) config: Arc<Config>,
    pub(super) role: Role,
    pub(super) kind: KindHint,
    /// Listed by a walk: a regular file, not a link.
    pub(super) plain: bool,
}

/// A discovered file's path as the key of [`Pending`], always normalized, so two keys name the
/// same file exactly when their bytes are equal: hashed and compared as bytes, not component
/// by component. Its equality is counted in tests, so a test catches a return to comparing
/// each new file with every file seen so far.
#[derive(Clone, Debug, PartialOrd, Ord)]
pub(super) struct Key(pub(super) PathBuf);

#[cfg(test)]
thread_local! {
    /// How many times two [`Key`]s were compared on this thread.
    pub(super) static COMPARISONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        #[cfg(test)]
        COMPARISONS.with(|c| c.set(c.get() + 1));
        self.0.as_os_str() == other.0.as_os_str()
    }
}

impl Eq for Key {}

impl std::hash::Hash for Key {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.as_os_str().hash(state);
    }
}

/// The files found so far, in discovery order, each once.
pub(super) struct Pending {
    pub(super) cwd: PathBuf,
    /// The paths named (absolute, normalized): a file under one that is excluded there, or
    /// under an excluded directory below it, is never reported.
    roots: Vec<PathBuf>,
    /// Editor workspace folders: paths are shown relative to the one holding them.
    shown_from: Vec<PathBuf>,
    /// Where each path is in `files`: a lookup per file, not a search. The table holds
    /// positions, hashed by the file's key, so no path is copied into it.
    index: hashbrown::HashTable<usize>,
    hasher: foldhash::fast::RandomState,
    pub(super) files: Vec<PendingFile>,
    /// Each directory walked so far, by its normalized absolute path: the path as given and
    /// the files the walk listed, sorted.
    listed: FastMap<PathBuf, (PathBuf, Vec<PathBuf>)>,
}

impl Pending {
    pub(super) fn new(cwd: PathBuf, shown_from: Vec<PathBuf>, roots: Vec<PathBuf>) -> Pending {
        let index = hashbrown::HashTable::new();
        let (hasher, files, listed) = (Default::default(), Vec::new(), FastMap::default());
        Pending { cwd, roots, shown_from, index, hasher, files, listed }
    }

    /// A new, empty list with the same way of showing paths.
    pub(super) fn empty(&self) -> Pending {
        Pending::new(self.cwd.clone(), self.shown_from.clone(), self.roots.clone())
    }

    /// The files found so far, leaving the list empty (and forgetting them). The walks'
    /// listings go too: only placing agents reads them, which is done by the first read, and a
    /// large repository's listing is megabytes held while every file is read and parsed.
    pub(super) fn take(&mut self) -> Vec<PendingFile> {
        self.index = hashbrown::HashTable::new();
        self.listed = FastMap::default();
        std::mem::take(&mut self.files)
    }

    /// How `path` is shown: relative to the innermost workspace folder holding it, else as
    /// given (relative to the current directory when under it).
    pub(super) fn display(&self, path: &Path) -> String {
        let absolute = if path.is_absolute() { path.to_path_buf() } else { self.cwd.join(path) };
        let folder =
            self.shown_from.iter().filter(|root| absolute.starts_with(root)).max_by_key(|r| r.as_os_str().len());
        match folder {
            Some(root) if absolute != *root => display_path(&absolute, root),
            _ => display_path(path, &self.cwd),
        }
    }

    pub(super) fn walk(&mut self, root: &Path, configs: &mut ConfigCache, role: Role) -> Result<(), ConfigError> {
        let files = walk_files(root, configs.store());
        self.walk_files(files, root, configs, role)
    }

    /// Adds `files`, the files a walk of `root` found, and keeps the list for
    /// [`Pending::listed_under`].
    pub(super) fn walk_files(
        &mut self,
        files: Vec<PathBuf>,
        root: &Path,
        configs: &mut ConfigCache,
        role: Role,
    ) -> Result<(), ConfigError> {
        let first = self.files.len();
        self.files.reserve(files.len());
        self.index.reserve(files.len(), |&i| self.hasher.hash_one(&self.files[i].path));
        // Each file's key and shown path on all cores (allocations, and most of the work),
        // while this thread adds the ones named so far.
        let namer = self.empty();
        let name = |path: &PathBuf| wanted(path, role).then(|| namer.name(path));
        let mut listed = Vec::with_capacity(files.len());
        let mut failed = None;
        crate::util::par_map_consume(files, name, |path, named| {
            // A config is reported even when no definition file under it is checked yet (the
            // first step after `stagelint init` in an empty project).
            if failed.is_none() && role == Role::Walked && is_config_name(&path) {
                failed = configs.governing(path.parent().unwrap_or(root)).err();
            }
            if failed.is_none()
                && let Some((key, display)) = named
            {
                failed = self.push_named(key, display, configs, role, KindHint::Classify, Found::Listed).err();
            }
            listed.push(path);
        });
        if let Some(error) = failed {
            return Err(error);
        }
        // What the walk added is no link (a walk does not follow them): no `lstat` to read it.
        self.files[first..].iter_mut().for_each(|file| file.plain = true);
        // Sorted by the walk already, in the order of `Path` (compared here as bytes).
        if !listed.is_sorted_by(|a, b| crate::util::path_order(a, b).is_le()) {
            listed.sort();
        }
        let absolute = if root.is_absolute() { root.to_path_buf() } else { self.cwd.join(root) };
        self.listed.insert(normalize(&absolute), (root.to_path_buf(), listed));
        Ok(())
    }

    /// Whether an earlier walk listed the directory `dir` (absolute and normalized) whole.
    pub(super) fn covers(&self, dir: &Path) -> bool {
        dir.ancestors().any(|a| self.listed.contains_key(a))
    }

    /// The files under `dir` (absolute and normalized) that an earlier walk of a directory holding it listed,
    /// found by a binary search in that walk's sorted list: no second walk of the disk (a
    /// repository of 2,000 agents would otherwise be walked twice, and a walk's setup reads the
    /// git config each time). `None` when no walk covered `dir`.
    fn listed_under(&self, dir: &Path) -> Option<Vec<PathBuf>> {
        let (absolute, (given, files)) = dir.ancestors().find_map(|a| self.listed.get_key_value(a))?;
        // The walk's paths are spelled as its root was given.
        let prefix = given.join(dir.strip_prefix(absolute).ok()?);
        let start = files.partition_point(|path| path.as_path() < prefix.as_path());
        // Absolute, as a walk of `dir` itself would list them: the caller places files by `dir`.
        let under = files[start..].iter().take_while(|path| path.starts_with(&prefix));
        Some(under.map(|path| normalize(&self.cwd.join(path))).collect())
    }

    /// Adds a file found as a walk would find it (see [`Found::Unlisted`]).
    pub(super) fn push(&mut self, path: &Path, configs: &mut ConfigCache, role: Role) -> Result<(), ConfigError> {
        if !wanted(path, role) {
            return Ok(());
        }
        self.push_as(path, configs, role, None, Found::Unlisted)
    }

    pub(super) fn push_as(
        &mut self,
        path: &Path,
        configs: &mut ConfigCache,
        role: Role,
        kind: Option<FileKind>,
        found: Found,
    ) -> Result<(), ConfigError> {
        self.push_hinted(path, configs, role, kind.map_or(KindHint::Classify, KindHint::Is), found)
    }

    fn push_hinted(
        &mut self,
        path: &Path,
        configs: &mut ConfigCache,
        role: Role,
        kind: KindHint,
        found: Found,
    ) -> Result<(), ConfigError> {
        let (key, display) = self.name(path);
        self.push_named(key, display, configs, role, kind, found)
    }

    /// The key `path` is found by, and how it is shown.
    fn name(&self, path: &Path) -> (Key, String) {
        let absolute = if path.is_absolute() { path.to_path_buf() } else { self.cwd.join(path) };
        (Key(normalize(&absolute)), self.display(path))
    }

    /// Adds a file once; `found` says what an exclude does to it.
    fn push_named(
        &mut self,
        key: Key,
        display: String,
        configs: &mut ConfigCache,
        role: Role,
        kind: KindHint,
        found: Found,
    ) -> Result<(), ConfigError> {
        let hash = self.hasher.hash_one(&key);
        if let Some(&at) = self.index.find(hash, |&i| self.files[i].path == key) {
            let existing = &mut self.files[at];
            // An agent walk knows better than name-based classification.
            if matches!(kind, KindHint::Is(_)) && existing.kind == KindHint::Classify {
                existing.kind = kind;
            }
            return Ok(());
        }
        let dir = key.0.parent().unwrap_or(Path::new("/"));
        let (config, mut kind) = match configs.governing(dir)? {
            Some(config) => (config, kind),
            // Governed by a broken config: not read, but rules may still ask whether it exists.
            None => (Arc::new(Config::defaults(dir)), KindHint::KnownOnly),
        };
        let mut role = role;
        if role != Role::Explicit && kind != KindHint::KnownOnly {
            let store = configs.store();
            match found {
                Found::Listed if store.excluded_by(Some(&config), &key.0) => kind = KindHint::KnownOnly,
                Found::Listed => {}
                // In an excluded directory: as unknown as the files a walk did not enter.
                Found::Unlisted if self.excluded_below_roots(store, dir) => return Ok(()),
                Found::Unlisted if store.excluded_by(Some(&config), &key.0) => kind = KindHint::KnownOnly,
                Found::Unlisted => {}
                Found::Named if self.excluded_below_roots(store, &key.0) => role = Role::Context,
                Found::Named => {}
            }
        }
        self.index.insert_unique(hash, self.files.len(), |&i| self.hasher.hash_one(&self.files[i].path));
        self.files.push(PendingFile { path: key, display, config, role, kind, plain: false });
        Ok(())
    }

    /// Whether `path`, or a directory between it and the named path holding it, is excluded
    /// (a path outside every named one: whether it is, itself; a named path: never).
    fn excluded_below_roots(&self, store: &ConfigStore, path: &Path) -> bool {
        match self.roots.iter().filter(|root| path.starts_with(root)).max_by_key(|root| root.as_os_str().len()) {
            Some(root) => store.excludes_below(path, root),
            None => store.excludes(path),
        }
    }

    /// Adds an agent directory's files: JSON (registry, agent.json, schemas), prompts, and the
    /// breakdown config under `../climpt/config/`. Files under a checked root are reported.
    /// Files only in the editor's `overlay` (unsaved new ones) count as files of the directory.
    pub(super) fn walk_agent(
        &mut self,
        dir: &Path,
        roots: &Roots,
        configs: &mut ConfigCache,
        overlay: &HashMap<PathBuf, String>,
    ) -> Result<(), ConfigError> {
        let role_of = |path: &Path| if roots.holds(path) { Role::Walked } else { Role::Context };
        let schemas = dir.join("schemas");
        let prompts = dir.join("prompts");
        let on_disk = self.listed_under(dir).unwrap_or_else(|| walk_files(dir, configs.store()));
        let mut unsaved: Vec<PathBuf> =
            overlay.keys().filter(|path| path.starts_with(dir) && !path.is_file()).cloned().collect();
        unsaved.sort();
        let found = std::iter::repeat_n(Found::Listed, on_disk.len()).chain(std::iter::repeat(Found::Unlisted));
        for (path, found) in on_disk.into_iter().chain(unsaved).zip(found) {
            let path = path.as_path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let kind = if path.starts_with(&prompts) && name.ends_with(".md") {
                KindHint::Is(FileKind::C3lPrompt)
            } else if path.starts_with(&schemas) && name.ends_with(".json") {
                KindHint::Is(FileKind::JsonSchema)
            } else if path.parent() == Some(dir) && name == "agent.json" {
                KindHint::Is(FileKind::AgentJson)
            } else if name.ends_with(".json") {
                KindHint::Classify
            } else {
                KindHint::KnownOnly
            };
            self.push_hinted(path, configs, role_of(path), kind, found)?;
        }
        let Some(agent_name) = dir.file_name().and_then(|n| n.to_str()) else { return Ok(()) };
        let Some(config_dir) = dir.parent().map(|p| p.join("climpt").join("config")) else { return Ok(()) };
        for side in ["app", "user"] {
            let path = config_dir.join(format!("{agent_name}-steps-{side}.yml"));
            if path.is_file() {
                self.push_hinted(
                    &path,
                    configs,
                    role_of(&path),
                    KindHint::Is(FileKind::BreakdownConfig),
                    Found::Named,
                )?;
            } else if config_dir.is_dir() {
                // Its absence is a finding; the directory's existence says the project uses breakdown.
                self.push_hinted(&config_dir, configs, Role::Context, KindHint::KnownOnly, Found::Named)?;
            }
        }
        Ok(())
    }
}
