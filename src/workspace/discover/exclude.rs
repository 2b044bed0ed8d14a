//! Which files and directories discovery leaves out: the `[files] exclude` and
//! `extend-exclude` of the config governing each (ruff's patterns, `config::Excludes`), and the
//! command line's `--exclude`, `--extend-exclude` and `--force-exclude`.
//!
//! The configs are found and loaded once per run in a [`ConfigStore`], which the walkers'
//! threads share: a directory an exclude matches is not walked into. Exclusion follows ruff:
//! each entry below a walked directory is matched against the config that governs the
//! directory holding it, so a nested config's patterns apply below it; a walk's own root and a
//! path named on the command line are read whatever the patterns say, unless `force-exclude`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::config::{self, Config, ConfigError, Excludes};
use crate::util::FastMap;

/// What the command line says about excludes. Its patterns are anchored at the current
/// directory; `exclude` replaces every config's `exclude`, `extend_exclude` adds to all.
#[derive(Clone, Debug, Default)]
pub struct ExcludeOptions {
    pub exclude: Option<Vec<String>>,
    pub extend_exclude: Vec<String>,
    /// Paths named on the command line are excluded too (pre-commit names every staged file).
    pub force_exclude: bool,
}

/// Configs found and loaded once, by any thread: the source of a `ConfigCache`, and what the
/// walkers ask whether an entry is excluded.
pub struct ConfigStore {
    /// `--config`: one config for everything.
    forced: Option<Arc<Config>>,
    /// Config texts an editor holds (saved or not), read instead of the files.
    overlay: HashMap<PathBuf, String>,
    cli_exclude: Option<Arc<Excludes>>,
    cli_extend: Arc<Excludes>,
    cli_force: bool,
    cwd: PathBuf,
    /// `--baseline`: the baseline of every config loaded, whatever the file says.
    baseline: Option<PathBuf>,
    /// Directories no config is looked for outside of (the MCP server's roots); empty: no limit.
    ceiling: Vec<PathBuf>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The nearest config file at or above each directory looked at.
    nearest: FastMap<PathBuf, Option<PathBuf>>,
    /// Each config file read, by path.
    loaded: FastMap<PathBuf, Result<Arc<Config>, ConfigError>>,
}

impl ConfigStore {
    /// The store for one run. A pattern of `options` that does not parse is an error naming it.
    pub fn new(
        forced: Option<Arc<Config>>,
        overlay: HashMap<PathBuf, String>,
        options: &ExcludeOptions,
    ) -> Result<ConfigStore, String> {
        let cwd = std::env::current_dir().unwrap_or_default();
        let compile = |option: &str, patterns: &[String]| -> Result<Arc<Excludes>, String> {
            // `--exclude ''` excludes nothing, not even the defaults.
            let spans: Vec<(&str, std::ops::Range<usize>)> =
                patterns.iter().filter(|p| !p.is_empty()).map(|p| (p.as_str(), 0..0)).collect();
            let (excludes, problems) = Excludes::compile(&spans, &cwd);
            match problems.first() {
                Some((_, message)) => Err(format!("{option}: {message}")),
                None => Ok(Arc::new(excludes)),
            }
        };
        let cli_exclude = options.exclude.as_deref().map(|p| compile("--exclude", p)).transpose()?;
        let cli_extend = compile("--extend-exclude", &options.extend_exclude)?;
        let state = Mutex::new(State::default());
        Ok(ConfigStore {
            forced,
            overlay,
            cli_exclude,
            cli_extend,
            cli_force: options.force_exclude,
            cwd,
            baseline: None,
            ceiling: Vec::new(),
            state,
        })
    }

    /// The store with no option set: every config says what it excludes.
    pub fn plain(forced: Option<Arc<Config>>, overlay: HashMap<PathBuf, String>) -> ConfigStore {
        let state = Mutex::new(State::default());
        let cwd = std::env::current_dir().unwrap_or_default();
        ConfigStore {
            forced,
            overlay,
            cli_exclude: None,
            cli_extend: Excludes::none(),
            cli_force: false,
            cwd,
            baseline: None,
            ceiling: Vec::new(),
            state,
        }
    }

    /// This store with `forced`, the baseline of every config and the ceiling replaced, nothing
    /// loaded yet.
    pub(super) fn rebuilt(
        &self,
        forced: Option<Arc<Config>>,
        baseline: Option<PathBuf>,
        ceiling: Vec<PathBuf>,
    ) -> ConfigStore {
        ConfigStore {
            forced,
            overlay: self.overlay.clone(),
            cli_exclude: self.cli_exclude.clone(),
            cli_extend: self.cli_extend.clone(),
            cli_force: self.cli_force,
            cwd: self.cwd.clone(),
            baseline,
            ceiling,
            state: Mutex::new(State::default()),
        }
    }

    /// Config texts the editor holds.
    pub(super) fn overlay(&self) -> &HashMap<PathBuf, String> {
        &self.overlay
    }

    /// The config that governs files in `dir`: `--config`, else the nearest file at or above
    /// it; `None` when no file does (the defaults apply).
    pub(super) fn config_of(&self, dir: &Path) -> Option<Result<Arc<Config>, ConfigError>> {
        if let Some(forced) = &self.forced {
            return Some(Ok(forced.clone()));
        }
        let mut state = self.lock();
        let path = self.nearest(dir, &mut state)?;
        if let Some(loaded) = state.loaded.get(&path) {
            return Some(loaded.clone());
        }
        let loaded = match self.overlay.get(&path) {
            Some(text) => Config::parse(text, &path),
            None => Config::load(&path),
        }
        .map(|mut config| {
            if let Some(baseline) = &self.baseline {
                config.baseline = Some(baseline.clone());
            }
            Arc::new(config)
        });
        state.loaded.insert(path, loaded.clone());
        Some(loaded)
    }

    /// Whether `path` (absolute and normalized), an entry of a directory being walked, is
    /// excluded by the config governing that directory or by the command line.
    pub fn excludes(&self, path: &Path) -> bool {
        let config = path.parent().and_then(|dir| self.config_of(dir)).and_then(Result::ok);
        self.excluded_by(config.as_deref(), path)
    }

    /// Whether `config` (the one governing the directory holding `path`; `None`: the defaults)
    /// or the command line excludes `path`.
    pub fn excluded_by(&self, config: Option<&Config>, path: &Path) -> bool {
        let exclude = match (&self.cli_exclude, config) {
            (Some(cli), _) => cli.matches(path),
            (None, Some(config)) => config.exclude.matches(path),
            (None, None) => Excludes::defaults().matches(path),
        };
        exclude || config.is_some_and(|c| c.extend_exclude.matches(path)) || self.cli_extend.matches(path)
    }

    /// Whether a walk of `top` would have left `path` out: `path` or a directory between them
    /// is excluded. A path not under `top` is judged alone.
    pub fn excludes_below(&self, path: &Path, top: &Path) -> bool {
        if !path.starts_with(top) {
            return self.excludes(path);
        }
        path.ancestors().take_while(|entry| *entry != top).any(|entry| self.excludes(entry))
    }

    /// Whether the excludes apply to `path`, named on the command line (`--force-exclude`, or
    /// `force-exclude` in the config governing it), and exclude it as a walk from the current
    /// directory, or else from the repository holding it, would.
    pub fn force_excludes(&self, path: &Path) -> bool {
        let path = crate::workspace::discover::normalize(&self.cwd.join(path));
        let dir = path.parent().unwrap_or(&path);
        let config = self.config_of(dir).and_then(Result::ok);
        if !self.cli_force && !config.is_some_and(|c| c.force_exclude) {
            return false;
        }
        let top = path.ancestors().skip(1).find(|a| *a == self.cwd || a.join(".git").exists());
        match top {
            Some(top) => self.excludes_below(&path, top),
            None => self.excludes(&path),
        }
    }

    /// The current directory, as the store resolves relative paths.
    pub(super) fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The nearest config file at or above `dir`, on disk or in the overlay. Each directory is
    /// looked at once: its answer is its own config or its parent's (cached) answer.
    fn nearest(&self, dir: &Path, state: &mut State) -> Option<PathBuf> {
        if let Some(found) = state.nearest.get(dir) {
            return found.clone();
        }
        if !(self.ceiling.is_empty() || self.ceiling.iter().any(|c| dir.starts_with(c))) {
            return None;
        }
        let here = config::CONFIG_NAMES
            .iter()
            .map(|name| dir.join(name))
            .find(|candidate| self.overlay.contains_key(candidate) || candidate.is_file());
        let found = here.or_else(|| dir.parent().and_then(|parent| self.nearest(parent, state)));
        state.nearest.insert(dir.to_path_buf(), found.clone());
        found
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
