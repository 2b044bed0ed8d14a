//! The config that governs each directory: found upward once per directory, loaded once per
//! file (by the shared `ConfigStore`), and in tolerant mode a broken one recorded instead of
//! failing discovery.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::{self, Config, ConfigError, ReleaseSource};
use crate::util::FastMap;
use crate::workspace::discover::exclude::{ConfigStore, ExcludeOptions};
use crate::workspace::lastlight_release;

/// A config with the Last Light release detected, per `workflows` directory.
type ReleaseConfigs = HashMap<PathBuf, Arc<Config>>;

/// The config for each directory, looked up once: a [`ConfigStore`] finds and loads the
/// files (shared with the walkers), this keeps the answers of one thread.
pub struct ConfigCache {
    store: Arc<ConfigStore>,
    by_dir: FastMap<PathBuf, Result<Arc<Config>, ConfigError>>,
    /// The built-in defaults, shared by every directory no config file governs: a config is a
    /// few hundred small allocations, and a large repository has thousands of directories.
    defaults: Option<Arc<Config>>,
    /// The directory asked about last, and its answer.
    last: Option<(PathBuf, Result<Arc<Config>, ConfigError>)>,
    /// `--config`, kept to build the store again with an overlay or options.
    forced: Option<Arc<Config>>,
    /// Set by `--baseline`: the baseline of every config, whatever the file says.
    baseline: Option<PathBuf>,
    /// Directories nothing is read outside of (the MCP server's roots): no config is looked
    /// for above them, and discovery's bounds stop at them. Empty: no limit.
    ceiling: Vec<PathBuf>,
    /// A config that cannot be used is recorded in `broken` and the files it governs are left
    /// out, instead of failing the whole discovery (the language server, and `check`).
    tolerant: bool,
    broken: std::collections::BTreeMap<PathBuf, ConfigError>,
    /// Configs with the Last Light release detected: per config (by address, kept alive here so
    /// the address is not reused), per `workflows` directory.
    releases: HashMap<usize, (Arc<Config>, ReleaseConfigs)>,
}

impl ConfigCache {
    pub fn new(forced: Option<Config>) -> ConfigCache {
        let forced = forced.map(Arc::new);
        ConfigCache {
            store: Arc::new(ConfigStore::plain(forced.clone(), HashMap::new())),
            by_dir: FastMap::default(),
            defaults: None,
            last: None,
            forced,
            baseline: None,
            ceiling: Vec::new(),
            tolerant: false,
            broken: std::collections::BTreeMap::new(),
            releases: HashMap::new(),
        }
    }

    /// The config of a Last Light file (a workflow, prompt or skill) whose config names no
    /// release: the release detected from the repository around its `workflows/` directory,
    /// one shared config per (config, directory).
    pub(super) fn with_release(&mut self, path: &Path, config: Arc<Config>, is_skill: bool) -> Arc<Config> {
        if config.lastlight.release_source == ReleaseSource::Configured {
            return config;
        }
        let Some(workflows) = lastlight_release::governing_workflows(path, is_skill) else {
            return config;
        };
        // Detection reads the engine's sources beside `workflows/`: not outside the ceiling.
        if !workflows.parent().is_some_and(|root| self.under_ceiling(root)) {
            return config;
        }
        let key = Arc::as_ptr(&config) as usize;
        let (_, by_dir) = self.releases.entry(key).or_insert_with(|| (config.clone(), HashMap::new()));
        // Asked once per file: found without building a key.
        if let Some(detected) = by_dir.get(&workflows) {
            return detected.clone();
        }
        let detected = match lastlight_release::detect(&workflows) {
            Some(found) => {
                let mut detected = (*config).clone();
                detected.lastlight.release = found.release;
                detected.lastlight.release_source = ReleaseSource::Detected { marker: found.marker, why: found.why };
                Arc::new(detected)
            }
            None => config,
        };
        by_dir.insert(workflows, detected.clone());
        detected
    }

    /// The cache of an editor: configs are read from `overlay` when it holds them (unsaved
    /// edits count), and a broken one only leaves out the files it governs.
    pub fn for_editor(overlay: &HashMap<PathBuf, String>) -> ConfigCache {
        ConfigCache::new(None).with_overlay(overlay).tolerant()
    }

    /// A broken config is recorded (see [`ConfigCache::broken`]) and leaves out only the files
    /// it governs, instead of failing the whole discovery.
    pub fn tolerant(mut self) -> ConfigCache {
        self.tolerant = true;
        self
    }

    /// Makes `path` the baseline of every config handed out (`--baseline`), whatever the
    /// config files name.
    pub fn with_baseline(mut self, path: PathBuf) -> ConfigCache {
        let path = crate::workspace::discover::absolute(&path);
        self.forced = self.forced.map(|forced| Arc::new(Config { baseline: Some(path.clone()), ..(*forced).clone() }));
        self.baseline = Some(path);
        self.store = Arc::new(self.store.rebuilt(self.forced.clone(), self.baseline.clone(), self.ceiling.clone()));
        self.forget();
        self
    }

    /// Drops the configs handed out so far: they were made by the store before it was rebuilt.
    fn forget(&mut self) {
        self.by_dir.clear();
        self.last = None;
        self.defaults = None;
        self.releases.clear();
    }

    /// Reads nothing outside `dirs`: no config above them, and discovery stays inside them.
    pub fn with_ceiling(mut self, dirs: Vec<PathBuf>) -> ConfigCache {
        self.ceiling = dirs.iter().map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.clone())).collect();
        self.store = Arc::new(self.store.rebuilt(self.forced.clone(), self.baseline.clone(), self.ceiling.clone()));
        self.forget();
        self
    }

    /// The directories nothing is read outside of (empty: no limit).
    pub(super) fn ceiling(&self) -> &[PathBuf] {
        &self.ceiling
    }

    /// Whether `dir` may be read from: inside the ceiling, or there is none.
    fn under_ceiling(&self, dir: &Path) -> bool {
        self.ceiling.is_empty() || self.ceiling.iter().any(|c| dir.starts_with(c))
    }

    /// Reads config files from `overlay` when it holds them.
    pub fn with_overlay(mut self, overlay: &HashMap<PathBuf, String>) -> ConfigCache {
        let configs = overlay
            .iter()
            .filter(|(path, _)| is_config_name(path))
            .map(|(path, text)| (path.clone(), text.clone()))
            .collect();
        let store = ConfigStore::plain(self.forced.clone(), configs);
        self.store = Arc::new(store.rebuilt(self.forced.clone(), self.baseline.clone(), self.ceiling.clone()));
        self
    }

    /// Leaves out what the command line's `options` say besides the configs. A pattern that
    /// does not parse is an error naming the option.
    pub fn with_excludes(mut self, options: &ExcludeOptions) -> Result<ConfigCache, String> {
        let overlay = self.store.overlay().clone();
        let store = ConfigStore::new(self.forced.clone(), overlay, options)?;
        self.store = Arc::new(store.rebuilt(self.forced.clone(), self.baseline.clone(), self.ceiling.clone()));
        Ok(self)
    }

    /// The store the walkers share.
    pub fn store(&self) -> &Arc<ConfigStore> {
        &self.store
    }

    /// The config that governs files in `dir` (nearest `stagelint.toml` upward, else defaults).
    pub fn for_dir(&mut self, dir: &Path) -> Result<Arc<Config>, ConfigError> {
        // A walk's files come directory by directory: the last answer, compared as bytes, is
        // cheaper than hashing the path again.
        if let Some((last, found)) = &self.last
            && last.as_os_str() == dir.as_os_str()
        {
            return found.clone();
        }
        if let Some(found) = self.by_dir.get(dir) {
            let found = found.clone();
            self.last = Some((dir.to_path_buf(), found.clone()));
            return found;
        }
        let config = match self.store.config_of(dir) {
            Some(loaded) => loaded,
            // Their root is never read: it anchors a config file's globs and paths, and the
            // defaults have none.
            None => {
                let baseline = self.baseline.clone();
                let defaults = || Arc::new(Config { baseline, ..Config::defaults(dir) });
                Ok(self.defaults.get_or_insert_with(defaults).clone())
            }
        };
        self.by_dir.insert(dir.to_path_buf(), config.clone());
        self.last = Some((dir.to_path_buf(), config.clone()));
        config
    }

    /// [`ConfigCache::for_dir`] for discovery: in tolerant mode a broken config is recorded and
    /// gives `None` (leave the file out) instead of an error.
    pub(super) fn governing(&mut self, dir: &Path) -> Result<Option<Arc<Config>>, ConfigError> {
        match self.for_dir(dir) {
            Ok(config) => Ok(Some(config)),
            Err(error) if self.tolerant => {
                self.broken.entry(error.path.clone()).or_insert(error);
                Ok(None)
            }
            Err(error) => Err(error),
        }
    }

    /// The configs that could not be used (tolerant mode only), by path.
    pub fn broken(&self) -> impl Iterator<Item = &ConfigError> {
        self.broken.values()
    }
}

/// Whether `path` is named like a config file.
pub fn is_config_name(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|name| config::CONFIG_NAMES.contains(&name))
}
