//! Walking the paths given on the command line into a [`Workspace`] (the only file-system reader).

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::{self, Config, ConfigError, EngineSource};
use crate::template::lastlight::Engine;
use crate::workspace::{FileKind, Workspace, classify};

use crate::source::read::check_text;
use crate::source::read::{Unreadable, read_listed_text, read_text};
use crate::util::{FastMap, FastSet};

/// A config with the Last Light engine detected, per `workflows` directory.
type EngineConfigs = HashMap<PathBuf, Arc<Config>>;

/// Finds and loads the config for each directory once.
pub struct ConfigCache {
    by_dir: FastMap<PathBuf, Result<Arc<Config>, ConfigError>>,
    by_file: FastMap<PathBuf, Result<Arc<Config>, ConfigError>>,
    /// The nearest config file at or above each directory looked at.
    nearest: FastMap<PathBuf, Option<PathBuf>>,
    /// The built-in defaults, shared by every directory no config file governs: a config is a
    /// few hundred small allocations, and a large repository has thousands of directories.
    defaults: Option<Arc<Config>>,
    /// The directory asked about last, and its answer.
    last: Option<(PathBuf, Result<Arc<Config>, ConfigError>)>,
    /// Set by `--config`: one config for everything.
    forced: Option<Arc<Config>>,
    /// Config texts an editor holds (saved or not), read instead of the files.
    overlay: HashMap<PathBuf, String>,
    /// The language server's mode: a config that cannot be used is recorded in `broken` and the
    /// files it governs are left out, instead of failing the whole discovery.
    tolerant: bool,
    broken: std::collections::BTreeMap<PathBuf, ConfigError>,
    /// Configs with the Last Light engine detected: per config (by address, kept alive here so
    /// the address is not reused), per `workflows` directory.
    engines: HashMap<usize, (Arc<Config>, EngineConfigs)>,
}

impl ConfigCache {
    pub fn new(forced: Option<Config>) -> ConfigCache {
        ConfigCache {
            by_dir: FastMap::default(),
            by_file: FastMap::default(),
            nearest: FastMap::default(),
            defaults: None,
            last: None,
            forced: forced.map(Arc::new),
            overlay: HashMap::new(),
            tolerant: false,
            broken: std::collections::BTreeMap::new(),
            engines: HashMap::new(),
        }
    }

    /// The config of a Last Light file whose config names no engine: the engine detected from
    /// the repository around its `workflows/` directory, one shared config per (config,
    /// directory).
    fn with_engine(&mut self, path: &Path, config: Arc<Config>) -> Arc<Config> {
        if config.lastlight.engine_source == EngineSource::Configured {
            return config;
        }
        let Some(workflows) = path.ancestors().find(|a| a.file_name().is_some_and(|n| n == "workflows")) else {
            return config;
        };
        let key = Arc::as_ptr(&config) as usize;
        let (_, by_dir) = self.engines.entry(key).or_insert_with(|| (config.clone(), HashMap::new()));
        // Asked once per file: found without building a key.
        if let Some(detected) = by_dir.get(workflows) {
            return detected.clone();
        }
        let detected = match detect_engine(workflows) {
            Some((engine, marker)) => {
                let mut detected = (*config).clone();
                detected.lastlight.engine = engine;
                detected.lastlight.engine_source = EngineSource::Detected(marker);
                Arc::new(detected)
            }
            None => config,
        };
        by_dir.insert(workflows.to_path_buf(), detected.clone());
        detected
    }

    /// The cache of an editor: configs are read from `overlay` when it holds them (unsaved
    /// edits count), and a broken one only leaves out the files it governs.
    pub fn for_editor(overlay: &HashMap<PathBuf, String>) -> ConfigCache {
        ConfigCache { tolerant: true, ..ConfigCache::new(None).with_overlay(overlay) }
    }

    /// Reads config files from `overlay` when it holds them.
    pub fn with_overlay(mut self, overlay: &HashMap<PathBuf, String>) -> ConfigCache {
        self.overlay = overlay
            .iter()
            .filter(|(path, _)| is_config_name(path))
            .map(|(path, text)| (path.clone(), text.clone()))
            .collect();
        self
    }

    /// The config that governs files in `dir` (nearest `stagelint.toml` upward, else defaults).
    pub fn for_dir(&mut self, dir: &Path) -> Result<Arc<Config>, ConfigError> {
        if let Some(forced) = &self.forced {
            return Ok(forced.clone());
        }
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
        let config = match self.find(dir) {
            Some(path) => match self.by_file.get(&path) {
                Some(loaded) => loaded.clone(),
                None => {
                    let loaded = match self.overlay.get(&path) {
                        Some(text) => Config::parse(text, &path),
                        None => Config::load(&path),
                    }
                    .map(Arc::new);
                    self.by_file.insert(path, loaded.clone());
                    loaded
                }
            },
            // Their root is never read: it anchors a config file's globs and paths, and the
            // defaults have none.
            None => Ok(self.defaults.get_or_insert_with(|| Arc::new(Config::defaults(dir))).clone()),
        };
        self.by_dir.insert(dir.to_path_buf(), config.clone());
        self.last = Some((dir.to_path_buf(), config.clone()));
        config
    }

    /// [`ConfigCache::for_dir`] for discovery: in tolerant mode a broken config is recorded and
    /// gives `None` (leave the file out) instead of an error.
    fn governing(&mut self, dir: &Path) -> Result<Option<Arc<Config>>, ConfigError> {
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

    /// The nearest config file at or above `dir`, on disk or in the overlay. Each directory is
    /// looked at once: its answer is its own config or its parent's (cached) answer.
    fn find(&mut self, dir: &Path) -> Option<PathBuf> {
        if let Some(found) = self.nearest.get(dir) {
            return found.clone();
        }
        let here = config::CONFIG_NAMES
            .iter()
            .map(|name| dir.join(name))
            .find(|candidate| self.overlay.contains_key(candidate) || candidate.is_file());
        let found = here.or_else(|| dir.parent().and_then(|parent| self.find(parent)));
        self.nearest.insert(dir.to_path_buf(), found.clone());
        found
    }
}

/// Whether `path` is named like a config file.
pub fn is_config_name(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|name| config::CONFIG_NAMES.contains(&name))
}

/// Builds the workspace for `paths`: directories are walked honouring `.gitignore`
/// (hidden directories such as `.agent/` are included, `.git` is not); files named explicitly
/// are always read.
pub fn discover(paths: &[PathBuf], configs: &mut ConfigCache) -> Result<Workspace, ConfigError> {
    discover_with_overlay(paths, configs, &HashMap::new())
}

/// [`discover`], where `overlay` holds texts that replace what is on disk (documents open in an
/// editor, saved or not). Overlay files under a walked root are included even if not on disk.
pub fn discover_with_overlay(
    paths: &[PathBuf],
    configs: &mut ConfigCache,
    overlay: &HashMap<PathBuf, String>,
) -> Result<Workspace, ConfigError> {
    discover_shown_from(paths, configs, overlay, &[])
}

/// [`discover_with_overlay`] for an editor with workspace folders `roots`: each file is shown
/// (in messages, `file.display`) relative to the folder holding it, as the CLI shows paths
/// relative to its current directory.
pub fn discover_for_editor(
    paths: &[PathBuf],
    configs: &mut ConfigCache,
    overlay: &HashMap<PathBuf, String>,
    roots: &[PathBuf],
) -> Result<Workspace, ConfigError> {
    discover_shown_from(paths, configs, overlay, roots)
}

fn discover_shown_from(
    paths: &[PathBuf],
    configs: &mut ConfigCache,
    overlay: &HashMap<PathBuf, String>,
    shown_from: &[PathBuf],
) -> Result<Workspace, ConfigError> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let shown_from = shown_from.to_vec();
    let mut pending = Pending::new(cwd, shown_from);
    // Several directories (an editor's batch of machine directories): one walker lists them all.
    let mut batch = if paths.len() > 1 { walk_files_of(paths) } else { HashMap::new() };
    for root in paths {
        // The config that governs the root itself, even when nothing below it is ours.
        let absolute = if root.is_absolute() { root.clone() } else { pending.cwd.join(root) };
        configs.governing(if root.is_file() { absolute.parent().unwrap_or(&absolute) } else { &absolute })?;
        if root.is_file() {
            pending.push(root, configs, Role::Explicit)?;
        } else if paths.len() == 1 {
            // One directory, maybe a whole repository: read on all cores.
            pending.walk_files(walk_files_parallel(root), root, configs, Role::Walked)?;
        } else {
            let files = batch.remove(root).unwrap_or_else(|| walk_files(root));
            pending.walk_files(files, root, configs, Role::Walked)?;
        }
    }
    let mut unsaved: Vec<&PathBuf> = overlay
        .keys()
        .filter(|path| !path.is_file() && could_be_ours(path) && paths.iter().any(|root| path.starts_with(root)))
        .collect();
    unsaved.sort();
    for path in unsaved {
        pending.push(path, configs, Role::Walked)?;
    }
    // A file checked on its own still belongs to its state machine: read the rest of the
    // machine as context so cross-file rules see the whole graph.
    // Each machine once, however many of its files were named (a pre-commit run names many).
    let mut sm_dirs = HashMap::new();
    let mut walked = HashSet::new();
    for root in paths {
        let absolute = if root.is_absolute() { root.clone() } else { pending.cwd.join(root) };
        let start = if root.is_file() { absolute.parent().map(Path::to_path_buf) } else { Some(absolute) };
        let Some(start) = start else { continue };
        let unsaved = |file: &Path| overlay.contains_key(file);
        let sm_dir = sm_dirs.entry(start).or_insert_with_key(|start| find_sm_dir_with_open(start, &unsaved)).clone();
        // A machine directory that was walked as a root (or inside one) has all its files already.
        let loose = sm_dir.is_none();
        if let Some(sm_dir) = sm_dir
            && walked.insert(sm_dir.clone())
            && !pending.covers(&normalize(&sm_dir))
        {
            pending.walk(&sm_dir, configs, Role::Context)?;
        }
        // A cassette of a loose stage replays the stage beside it: read the directory's
        // markdown (not below it) so the cassette named alone finds its stage.
        let is_cassette = root.file_name().and_then(|n| n.to_str()).is_some_and(crate::workspace::is_cassette_name);
        if loose && is_cassette && root.is_file() {
            let dir = if root.is_absolute() { root.clone() } else { pending.cwd.join(root) };
            let dir = dir.parent().map(Path::to_path_buf).unwrap_or_default();
            if walked.insert(dir.clone()) {
                let mut stages: Vec<PathBuf> = std::fs::read_dir(&dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "md"))
                    .collect();
                stages.sort();
                for stage in stages {
                    pending.push(&stage, configs, Role::Context)?;
                }
            }
        }
    }
    // A climpt agent is its directory: registry, agent.json, schemas, prompts, and the
    // breakdown config beside it. Whatever part was named, read the whole agent.
    // Normalized, as file paths are: a root given as `..` must hold the files under it.
    let roots: Vec<PathBuf> =
        paths.iter().map(|p| normalize(&if p.is_absolute() { p.clone() } else { pending.cwd.join(p) })).collect();
    let mut agent_dirs: Vec<PathBuf> = pending
        .files
        .iter()
        .filter(|f| f.path.0.file_name().is_some_and(|n| n == "steps_registry.json" || n == "agent.json"))
        .filter_map(|f| f.path.0.parent().map(Path::to_path_buf))
        .collect();
    agent_dirs.extend(roots.iter().filter_map(|root| find_agent_dir(root)));
    agent_dirs.sort();
    agent_dirs.dedup();
    let under_roots = Roots::new(&roots);
    for dir in &agent_dirs {
        pending.walk_agent(dir, &under_roots, configs, overlay)?;
    }
    // A Last Light workflow directory is one unit: crons name workflows, and prompts are read
    // through the workflows that use them. Whatever part was named, read the whole directory.
    let mut walked = HashSet::new();
    for root in &roots {
        if let Some(dir) = find_workflows_dir(root)
            && walked.insert(dir.clone())
        {
            pending.walk(&dir, configs, Role::Context)?;
        }
    }
    let mut bounds = Bounds::new(&roots);
    // A project's config names its layout (`[dry-run] cassettes`): its directory is the project's.
    for root in &roots {
        let dir = if root.is_file() { root.parent().unwrap_or(root) } else { root };
        let config = configs.for_dir(dir).ok().and_then(|c| c.path.as_ref()?.parent().map(Path::to_path_buf));
        bounds.extend(config);
    }
    let unsaved = |file: &Path| overlay.contains_key(file);
    bounds.extend(
        roots
            .iter()
            .filter_map(|root| find_sm_dir_with_open(if root.is_file() { root.parent()? } else { root }, &unsaved)),
    );
    bounds.extend(agent_dirs);
    // Skills sit beside `workflows/`, so a workflow directory's parent is read too.
    bounds.extend(roots.iter().filter_map(|root| Some(find_workflows_dir(root)?.parent()?.to_path_buf())));
    let mut workspace = Workspace::new();
    // Markdown the walk read but could not place: a Last Light prompt or skill is known only
    // once the workflows naming it are read, and is then taken from here, not read again.
    let mut unclaimed = FastMap::default();
    read_pending(&mut workspace, pending.take(), overlay, configs, &bounds, &mut unclaimed);
    // What atomic workflows depend on, and the workflows of a base the walk skipped.
    let found = atomic_context(&workspace, &roots, &under_roots, &bounds);
    // Exactly these files may be read, not their directories (the project may be a home).
    bounds.extend(found.context.iter().cloned());
    let mut atomic = pending.empty();
    for path in &found.workflows {
        atomic.push_as(path, configs, Role::Walked, None)?;
    }
    for path in &found.context {
        atomic.push_as(path, configs, Role::Context, Some(FileKind::AtomicContext))?;
    }
    read_pending(&mut workspace, atomic.take(), overlay, configs, &bounds, &mut unclaimed);
    // The prompts and skills that workflows name are read as what they are, whatever their name.
    let mut referenced = pending.empty();
    let named = workflow_references(&workspace, overlay);
    workspace.reserve(named.len());
    for (path, kind) in named {
        let role = if under_roots.holds(&path) { Role::Walked } else { Role::Context };
        // Read by the walk already: placed now, as what the workflow says it is.
        if let Some(walked) = unclaimed.remove(&path) {
            add_file(&mut workspace, configs, path, walked, kind, role);
            continue;
        }
        referenced.push_as(&path, configs, role, Some(kind))?;
    }
    read_pending(&mut workspace, referenced.take(), overlay, configs, &bounds, &mut unclaimed);
    // A registry's or agent.json's `$schema` that names a local file is read too (never fetched).
    // A fresh list: a schema the walk met and classified as nothing must still be read now.
    let mut schema_refs = pending.empty();
    for target in declared_schemas(&workspace) {
        schema_refs.push_as(&target, configs, Role::Context, Some(FileKind::JsonSchema))?;
    }
    // Cassettes kept in `[dry-run] cassettes` directories belong to the stages that use them.
    let mut cassette_dirs: Vec<PathBuf> = workspace
        .files()
        .iter()
        .filter(|f| f.kind == FileKind::Stage)
        .flat_map(|f| f.config.cassette_dirs.iter().cloned())
        .collect();
    cassette_dirs.sort();
    cassette_dirs.dedup();
    for dir in cassette_dirs {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let is_cassette = path.file_name().and_then(|n| n.to_str()).is_some_and(crate::workspace::is_cassette_name);
            if is_cassette && workspace.file_at(&normalize(&path)).is_none() {
                schema_refs.push_as(&path, configs, Role::Context, Some(FileKind::Cassette))?;
            }
        }
    }
    read_pending(&mut workspace, schema_refs.take(), overlay, configs, &bounds, &mut unclaimed);
    add_broken_configs(&mut workspace, configs, &roots, &schema_refs, overlay);
    // Every stage's frontmatter and YAML parse, on all cores; the rules read it from the file.
    crate::util::par_map(workspace.files(), |file| {
        if file.kind == FileKind::Stage {
            file.stage_parts.get_or_init(|| Box::new(crate::workspace::StageParts::parse(&file.text)));
        }
    });
    Ok(workspace)
}

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

/// Where discovery may read, with symlinks resolved: the named roots (a named file's
/// directory), the repository each lies in, the directory of the config governing each, and
/// the state machine, agent and Last Light directories found above them. A link or a `..` reference leading elsewhere is not followed.
struct Bounds {
    dirs: FastSet<PathBuf>,
    /// Per directory, resolved once (a read asks for every file): its real path, and whether
    /// that lies in a bound.
    cache: std::sync::Mutex<BoundsCache>,
}

#[derive(Default)]
struct BoundsCache {
    real: FastMap<PathBuf, Option<PathBuf>>,
    /// Emptied when the bounds grow.
    inside: FastMap<PathBuf, bool>,
}

impl Bounds {
    fn new(roots: &[PathBuf]) -> Bounds {
        let mut bounds = Bounds { dirs: FastSet::default(), cache: Default::default() };
        let mut seen: FastSet<&Path> = FastSet::default();
        for root in roots {
            let is_file = root.is_file();
            // A file named on purpose is read even when it is a link.
            bounds.extend(is_file.then(|| root.clone()));
            let Some(dir) = (if is_file { root.parent() } else { Some(root.as_path()) }) else { continue };
            // Many files named in one directory (a pre-commit run) look it up once.
            if !seen.insert(dir) {
                continue;
            }
            bounds.extend(Some(dir.to_path_buf()));
            bounds.extend(dir.ancestors().find(|a| a.join(".git").exists()).map(Path::to_path_buf));
        }
        bounds
    }

    fn extend(&mut self, dirs: impl IntoIterator<Item = PathBuf>) {
        for dir in dirs {
            self.dirs.insert(std::fs::canonicalize(&dir).unwrap_or(dir));
        }
        self.cache.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner).inside.clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BoundsCache> {
        self.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether the directory's real path lies in a bound.
    fn holds_dir(&self, dir: &Path) -> bool {
        self.dir_inside(dir, &mut self.lock()).unwrap_or(false)
    }

    /// [`Bounds::holds_dir`], or `None` when the directory has no real path (it is gone).
    fn dir_inside(&self, dir: &Path, cache: &mut BoundsCache) -> Option<bool> {
        if let Some(inside) = cache.inside.get(dir) {
            return Some(*inside);
        }
        let real = real_dir(dir, &mut cache.real)?;
        let inside = real.ancestors().any(|a| self.dirs.contains(a));
        cache.inside.insert(dir.to_path_buf(), inside);
        Some(inside)
    }

    /// Whether the file's real path lies in a bound: a link is resolved; any other file is where
    /// its directory really is (resolved once per directory).
    /// `plain` says a walk listed the file, so it is no link (a walk does not follow links) and
    /// needs no `lstat` of its own.
    fn holds(&self, path: &Path, plain: bool) -> bool {
        let is_link = if plain {
            false
        } else {
            // A file that does not exist is left to the read to report.
            let Ok(meta) = std::fs::symlink_metadata(path) else { return true };
            meta.file_type().is_symlink()
        };
        if is_link {
            return std::fs::canonicalize(path).ok().is_none_or(|real| real.ancestors().any(|a| self.dirs.contains(a)));
        }
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { return true };
        let mut cache = self.lock();
        match self.dir_inside(dir, &mut cache) {
            None | Some(true) => true,
            // A file named on purpose (or an atomic workflow's context file) is a bound of its own.
            Some(false) => real_dir(dir, &mut cache.real).is_some_and(|d| self.dirs.contains(&d.join(name))),
        }
    }
}

/// The real path of `dir`, from its parent's (cached) when `dir` itself is not a link: one
/// `lstat` per directory instead of a `readlink` per component of every directory.
fn real_dir(dir: &Path, cache: &mut FastMap<PathBuf, Option<PathBuf>>) -> Option<PathBuf> {
    if let Some(real) = cache.get(dir) {
        return real.clone();
    }
    let real = match (dir.parent(), dir.file_name()) {
        (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => match std::fs::symlink_metadata(dir) {
            Ok(meta) if !meta.file_type().is_symlink() => real_dir(parent, cache).map(|p| p.join(name)),
            Ok(_) => std::fs::canonicalize(dir).ok(),
            Err(_) => None,
        },
        // The root, a relative name, or a path ending in `..`.
        _ => std::fs::canonicalize(dir).ok(),
    };
    cache.insert(dir.to_path_buf(), real.clone());
    real
}

/// In tolerant mode: each broken config under a checked root, as a file whose finding says why
/// (`stagelint/InvalidConfig`).
fn add_broken_configs(
    workspace: &mut Workspace,
    configs: &ConfigCache,
    roots: &[PathBuf],
    pending: &Pending,
    overlay: &HashMap<PathBuf, String>,
) {
    for error in configs.broken() {
        let path = normalize(&error.path);
        if workspace.file_at(&path).is_some() || !roots.iter().any(|root| path.starts_with(normalize(root))) {
            continue;
        }
        let text = overlay.get(&path).cloned().or_else(|| read_text(&path).ok()).unwrap_or_default();
        let kind = FileKind::BrokenConfig { problems: error.problems.clone() };
        let config = Arc::new(Config::defaults(path.parent().unwrap_or(Path::new("/"))));
        workspace.add(path.clone(), pending.display(&path), text, kind, config);
    }
}

/// A file read, with how it is shown and the config that governs it.
struct ReadFile {
    text: String,
    display: String,
    config: Arc<Config>,
}

/// Adds a file read as a `kind` to `workspace`: reported unless it is only `role` context.
fn add_file(
    workspace: &mut Workspace,
    configs: &mut ConfigCache,
    path: PathBuf,
    read: ReadFile,
    kind: FileKind,
    role: Role,
) {
    let config = match kind {
        FileKind::Workflow | FileKind::WorkflowPrompt => configs.with_engine(&path, read.config),
        _ => read.config,
    };
    match role {
        Role::Context => workspace.add_context(path, read.display, read.text, kind, config),
        _ => workspace.add(path, read.display, read.text, kind, config),
    };
}

/// Reads the pending files (in parallel) and adds the ones stagelint has something to say about.
fn read_pending(
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
    // Classified here too, on all cores (a file the walk read already by the walk's text).
    let kind = match (&text, &file.kind) {
        (Ok(text), KindHint::Classify) => {
            let text = unclaimed.get(&file.path.0).map_or(text.as_str(), |walked| walked.text.as_str());
            classify(&file.path.0, text, &file.config)
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
        Err(unreadable) if file.role != Role::Context => {
            let kind = FileKind::Unreadable { message: unreadable.message, offset: unreadable.offset };
            workspace.add(path, file.display, unreadable.lossy_text, kind, file.config);
        }
        Err(_) => workspace.add_known_path(path),
    }
}

/// Which Last Light engine loads the `workflows` directory `workflows`, from the engine's own
/// sources in the repository: `src/workflows/templates.ts` beside it holding the seed-era key
/// pattern is the seed-era renderer (top-level `workflows/`); one allowing `-` in keys, or
/// re-exporting the workflow engine package (as `apps/server/` does today), or a
/// `packages/workflow-engine/` above it, is the current engine.
/// `None` when neither is there (an overlay repository, a copy of the files).
pub fn detect_engine(workflows: &Path) -> Option<(Engine, PathBuf)> {
    let root = workflows.parent()?;
    let renderer = root.join("src").join("workflows").join("templates.ts");
    if let Ok(text) = read_text(&renderer) {
        // The seed-era key pattern is `\w+(?:\.\w+)*`; from mid-2026 the same file allowed `-`
        // (`[\w-]+`), and today it re-exports the engine package. Any other file of that name
        // is not a renderer.
        if text.contains("workflow-engine") || text.contains("[\\w-]+") {
            return Some((Engine::Head, renderer));
        }
        if text.contains("(\\w+(?:\\.\\w+)*)") {
            return Some((Engine::Seed, renderer));
        }
    }
    for ancestor in root.ancestors() {
        let current = ancestor.join("packages").join("workflow-engine");
        if current.is_dir() {
            return Some((Engine::Head, current));
        }
        if ancestor.join(".git").exists() {
            break;
        }
    }
    None
}

/// The existing prompt and skill files that Last Light workflows name and the walk did not read
/// (on disk, or only in the editor's `overlay`). Workflows are parsed here, on all cores; the
/// family's rules read the same parse.
fn workflow_references(workspace: &Workspace, overlay: &HashMap<PathBuf, String>) -> Vec<(PathBuf, FileKind)> {
    use crate::workspace::lastlight as model;
    // Most were met by the walk already.
    let exists = |path: &Path| workspace.exists(path) || overlay.contains_key(path) || path.is_file();
    let workflows: Vec<&crate::workspace::SourceFile> =
        workspace.files().iter().filter(|f| f.kind == FileKind::Workflow).collect();
    let named = crate::util::par_map(&workflows, |file| {
        let Some(root) = &file.document().root else { return (Vec::new(), Vec::new()) };
        let base = model::prompt_base(&file.path);
        // A prompt is often named by several phases (the build prompt is also the fix prompt).
        let mut texts: Vec<&str> = model::prompt_references(root).into_iter().map(|r| r.text).collect();
        texts.sort_unstable();
        texts.dedup();
        let prompts = texts
            .into_iter()
            .filter_map(|text| model::resolve_prompt(base, text).ok())
            .filter(|path| workspace.file_at(path).is_none() && exists(path))
            .collect::<Vec<_>>();
        (prompts, model::skill_references(root).into_iter().map(|s| s.text).collect::<Vec<_>>())
    });
    let mut out = Vec::new();
    // Every workflow of a directory names the same few skills: each is looked up once.
    let mut skills = HashSet::new();
    for (file, (prompts, names)) in workflows.iter().zip(named) {
        out.extend(prompts.into_iter().map(|path| (path, FileKind::WorkflowPrompt)));
        let Some(dir) = file.path.parent() else { continue };
        skills.extend(names.into_iter().map(|name| (dir, name)));
    }
    for (dir, name) in skills {
        if let Some(path) = model::skill_candidates(dir, name).find(|p| exists(p))
            && workspace.file_at(&path).is_none()
        {
            out.push((path, FileKind::Skill));
        }
    }
    out.sort_by(|a, b| crate::util::path_order(&a.0, &b.0));
    // Normalized paths: equal exactly when their bytes are.
    out.dedup_by(|a, b| a.0.as_os_str() == b.0.as_os_str());
    out
}

/// What atomic workflows need besides themselves (upstream `runtime/discovery.ts`).
#[derive(Default)]
struct AtomicFound {
    /// Workflows of a base under a checked root that the walk skipped (a `.gitignore` above
    /// them): upstream lists the base itself, so they are checked too.
    workflows: Vec<PathBuf>,
    /// Each local base's `.gitignore`, the `package.json`s from a workflow up to its project,
    /// and the project's agent files; never a symlink.
    context: Vec<PathBuf>,
}

/// Gathers [`AtomicFound`] for the atomic workflows read so far, and the bases at or under
/// `roots`. Each directory is looked at once, and a base is listed, not walked.
fn atomic_context(workspace: &Workspace, roots: &[PathBuf], under_roots: &Roots, bounds: &Bounds) -> AtomicFound {
    use crate::workspace::atomic;
    let read: Vec<&Path> =
        workspace.files().iter().filter(|f| f.kind == FileKind::AtomicWorkflow).map(|f| f.path.as_path()).collect();
    let mut bases = std::collections::BTreeSet::new();
    for root in roots.iter().filter(|r| r.is_dir()) {
        let local = root.join(".atomic").join("workflows");
        bases.extend(local.is_dir().then_some(local));
        bases.extend(atomic::base(&root.join("_")).map(|(base, _)| base.to_path_buf()));
    }
    bases.extend(read.iter().filter_map(|path| Some(atomic::base(path)?.0.to_path_buf())));
    let mut found = AtomicFound::default();
    let add = |path: PathBuf, found: &mut AtomicFound| {
        let link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
        if workspace.file_at(&path).is_none() && !link {
            found.context.push(path);
        }
    };
    for base in &bases {
        let builtin = atomic::base(&base.join("_")).is_some_and(|(_, builtin)| builtin);
        let ignore = base.join(".gitignore");
        if !builtin && ignore.is_file() {
            add(ignore, &mut found);
        }
        // The workflow directories to list: all of a base under a root, else the ones roots are in.
        let names: Vec<PathBuf> = if under_roots.holds(base) {
            std::fs::read_dir(base).into_iter().flatten().flatten().map(|e| e.path()).collect()
        } else {
            let inside = roots.iter().filter_map(|r| r.strip_prefix(base).ok()?.components().next());
            inside.map(|c| base.join(c)).collect()
        };
        for name in names {
            for agent in atomic::AGENTS {
                let index = name.join(agent).join("index.ts");
                if workspace.file_at(&index).is_none() && under_roots.holds(&index) && index.is_file() {
                    found.workflows.push(index);
                }
            }
        }
    }
    found.workflows.sort();
    found.workflows.dedup();
    // Per directory: whether it holds `package.json`, and whether it is a repository root.
    let mut marks: FastMap<PathBuf, (bool, bool)> = FastMap::default();
    let mut packages = std::collections::BTreeSet::new();
    let mut projects = std::collections::BTreeSet::new();
    for path in read.iter().copied().chain(found.workflows.iter().map(PathBuf::as_path)) {
        // Under `.atomic/`, the directory above it; elsewhere the nearest directory holding
        // `package.json` or `.git`, within the bounds.
        let fixed = atomic::project_root(path);
        let mut project = path.parent().map(Path::to_path_buf);
        for dir in path.ancestors().skip(1) {
            if fixed.is_none() && !bounds.holds_dir(dir) {
                break;
            }
            let (package, git) = *marks
                .entry(dir.to_path_buf())
                .or_insert_with(|| (dir.join("package.json").is_file(), dir.join(".git").exists()));
            if package {
                packages.insert(dir.join("package.json"));
            }
            if fixed.map_or(package || git, |root| root == dir) {
                project = Some(dir.to_path_buf());
                break;
            }
        }
        projects.extend(project);
    }
    for package in packages {
        add(package, &mut found);
    }
    for project in &projects {
        for (dir, skills) in atomic::AGENT_DIRS {
            let mut entries: Vec<PathBuf> =
                std::fs::read_dir(project.join(dir)).into_iter().flatten().flatten().map(|e| e.path()).collect();
            entries.sort();
            for entry in entries {
                let path = if skills { entry.join("SKILL.md") } else { entry };
                if path.is_file() && atomic::agent_file(&path).is_some() {
                    add(path, &mut found);
                }
            }
        }
    }
    found
}

/// The nearest directory named `workflows` at or above `path`, not crossing a repository root.
/// An atomic workflows base is none: its workflows are checked one by one.
fn find_workflows_dir(path: &Path) -> Option<PathBuf> {
    let probe = path.join("_");
    let atomic = crate::workspace::atomic::base(&probe)
        .and_then(|(base, builtin)| if builtin { base.parent() } else { Some(base) });
    for ancestor in path.ancestors() {
        if Some(ancestor) == atomic {
            return None;
        }
        if ancestor.file_name().is_some_and(|n| n == "workflows") && ancestor.is_dir() {
            return Some(ancestor.to_path_buf());
        }
        if ancestor.join(".git").exists() {
            return None;
        }
    }
    None
}

/// Local files named by `$schema` in registries and agent.json files. Their parses are made
/// here, on all cores, and kept for the steps family's rules.
fn declared_schemas(workspace: &Workspace) -> Vec<PathBuf> {
    let files: Vec<&crate::workspace::SourceFile> =
        workspace.files().iter().filter(|f| matches!(f.kind, FileKind::StepsRegistry | FileKind::AgentJson)).collect();
    let named = crate::util::par_map(&files, |file| {
        let target = file.document().root.as_ref()?.get("$schema")?.as_str()?;
        if target.contains("://") {
            return None;
        }
        let path = normalize(&file.path.parent()?.join(target));
        (path.is_file() && workspace.file_at(&path).is_none()).then_some(path)
    });
    let mut out: Vec<PathBuf> = named.into_iter().flatten().collect();
    out.sort();
    out.dedup();
    out
}

/// `path` made absolute against the current directory, then [`normalize`]d: how files are keyed
/// in a [`Workspace`].
pub fn absolute(path: &Path) -> PathBuf {
    normalize(&std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()))
}

/// Removes `.` and `..` components without touching the file system.
pub fn normalize(path: &Path) -> PathBuf {
    // Most paths (every file a walk of an absolute root lists) are normal already.
    if is_normal(path) {
        return path.to_path_buf();
    }
    normalize_components(path)
}

/// [`normalize`] for any path, component by component.
fn normalize_components(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether `path` is absolute and spelled as [`normalize`] would spell it: no `.` or `..`
/// part, no doubled or trailing separator.
fn is_normal(path: &Path) -> bool {
    let Some(text) = path.to_str() else { return false };
    text.len() > 1 && text.starts_with('/') && no_dot_parts(text) && !text.ends_with("/..") && !text.contains("/../")
}

/// Whether `text` has no `.` part after its first, no doubled separator and no trailing one:
/// what both shortcuts, [`is_normal`] and [`display_path`]'s, need.
fn no_dot_parts(text: &str) -> bool {
    !text.ends_with('/') && !text.ends_with("/.") && !text.contains("//") && !text.contains("/./")
}

/// The scopes ([`scope_of`]) of the files a walk of `roots` would read, sorted and each once.
/// The language server indexes a workspace scope by scope, so it can publish as it goes.
pub fn scopes(roots: &[PathBuf]) -> Vec<PathBuf> {
    scopes_with_open(roots, &|_| false)
}

/// [`scopes`], where `open` says which files an editor has open: an open `sm.yaml` makes its
/// directory a state machine even before it is saved, or after it was deleted on disk.
pub fn scopes_with_open(roots: &[PathBuf], open: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut found = std::collections::BTreeSet::new();
    // Files of one directory share a scope (except breakdown configs, named after their agent).
    let mut by_dir: FastMap<PathBuf, Option<PathBuf>> = FastMap::default();
    for root in roots {
        if root.is_file() {
            found.insert(scope_of_with_open(&normalize(root), open));
            continue;
        }
        for path in walk_files_parallel(root) {
            let path = path.as_path();
            // A config is checked in the scope it sits in (its own, when nothing else is there).
            if is_config_name(path) {
                found.insert(scope_of_with_open(&normalize(path), open));
                continue;
            }
            if !could_be_ours(path) {
                continue;
            }
            let path = normalize(path);
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let special = name.ends_with("-steps-app.yml") || name.ends_with("-steps-user.yml");
            let Some(dir) = path.parent().filter(|_| !special) else {
                found.insert(scope_of_with_open(&path, open));
                continue;
            };
            let shared = by_dir.entry(dir.to_path_buf()).or_insert_with(|| {
                let scope = scope_of_with_open(&path, open);
                (scope != path).then_some(scope)
            });
            // A loose file (no state machine or agent around it) is its own scope.
            found.insert(shared.clone().unwrap_or(path));
        }
    }
    found.into_iter().collect()
}

/// What must be re-checked when `path` changes: its state machine or climpt agent directory,
/// or the file alone. Editors use it to re-check only the files that depend on a change.
pub fn scope_of(path: &Path) -> PathBuf {
    scope_of_with_open(path, &|_| false)
}

/// [`scope_of`], where `open` says which files an editor has open (see [`scopes_with_open`]).
pub fn scope_of_with_open(path: &Path, open: &dyn Fn(&Path) -> bool) -> PathBuf {
    // An atomic workflow is checked with its base's `.gitignore` and its project around it,
    // so its own `<base>/<name>/` directory is enough.
    if let Some((base, _)) = crate::workspace::atomic::base(path)
        && let Some(name) = path.strip_prefix(base).ok().and_then(|rest| rest.components().next())
    {
        if base.join(name) != path {
            return base.join(name);
        }
        // The base's `.gitignore` decides which of its workflows run.
        if path.file_name().is_some_and(|n| n == ".gitignore") {
            return base.to_path_buf();
        }
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    // `.agent/climpt/config/<agent>-steps-app.yml` belongs to `.agent/<agent>/`.
    if let Some(agent) = name.strip_suffix("-steps-app.yml").or_else(|| name.strip_suffix("-steps-user.yml"))
        && let Some(agents) = path.parent().and_then(Path::parent).and_then(Path::parent)
    {
        return agents.join(agent);
    }
    let dir = path.parent().unwrap_or(Path::new("/"));
    let sm = find_sm_dir_with_open(dir, open);
    let agent = find_agent_dir(path);
    if sm.is_none()
        && agent.is_none()
        && let Some(workflows) = find_workflows_dir(dir)
    {
        return workflows;
    }
    match (sm, agent) {
        // The nearer one owns the file.
        (Some(sm), Some(agent)) => {
            if sm.starts_with(&agent) {
                sm
            } else {
                agent
            }
        }
        (Some(dir), None) | (None, Some(dir)) => dir,
        // A loose stage and the cassettes beside it change together.
        (None, None) if has_cassette(dir) => dir.to_path_buf(),
        (None, None) => path.to_path_buf(),
    }
}

fn has_cassette(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|entry| entry.file_name().to_str().is_some_and(crate::workspace::is_cassette_name))
}

/// The nearest directory at or above `path` that is a climpt agent directory (holds
/// `steps_registry.json` or `agent.json`), not crossing a repository root.
fn find_agent_dir(path: &Path) -> Option<PathBuf> {
    let start = if path.is_file() { path.parent()? } else { path };
    for ancestor in start.ancestors() {
        if ancestor.join("steps_registry.json").is_file() || ancestor.join("agent.json").is_file() {
            return Some(ancestor.to_path_buf());
        }
        if ancestor.join(".git").exists() {
            return None;
        }
    }
    None
}

/// How a file came to be read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Named on the command line: read whatever its name.
    Explicit,
    /// Found by walking a directory on the command line.
    Walked,
    /// Read only so cross-file rules see the whole state machine.
    Context,
}

/// What discovery already knows about a file's kind.
#[derive(Clone, PartialEq, Eq)]
enum KindHint {
    /// Decide from the name and content ([`classify`]).
    Classify,
    /// Decided by where the file sits (a schema or prompt of an agent).
    Is(FileKind),
    /// Only its existence matters (a prompt that is not markdown, a file rules may look up).
    KnownOnly,
}

/// A file to read, with the config that governs it.
struct PendingFile {
    path: Key,
    display: String,
    config: Arc<Config>,
    role: Role,
    kind: KindHint,
    /// Listed by a walk: a regular file, not a link.
    plain: bool,
}

/// A discovered file's path as the key of [`Pending`], always normalized, so two keys name the
/// same file exactly when their bytes are equal: hashed and compared as bytes, not component
/// by component. Its equality is counted in tests, so a test catches a return to comparing
/// each new file with every file seen so far.
#[derive(Clone, Debug, PartialOrd, Ord)]
struct Key(PathBuf);

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

#[cfg(test)]
thread_local! {
    /// How many times two [`Key`]s were compared on this thread.
    static COMPARISONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// How many files the walks started on this thread listed.
    static WALKED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// How many walkers were set up on this thread (each reads the git config).
    static WALKERS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The files found so far, in discovery order, each once.
struct Pending {
    cwd: PathBuf,
    /// Editor workspace folders: paths are shown relative to the one holding them.
    shown_from: Vec<PathBuf>,
    /// Where each path is in `files`: a lookup per file, not a search. The table holds
    /// positions, hashed by the file's key, so no path is copied into it.
    index: hashbrown::HashTable<usize>,
    hasher: foldhash::fast::RandomState,
    files: Vec<PendingFile>,
    /// Each directory walked so far, by its normalized absolute path: the path as given and
    /// the files the walk listed, sorted.
    listed: FastMap<PathBuf, (PathBuf, Vec<PathBuf>)>,
}

impl Pending {
    fn new(cwd: PathBuf, shown_from: Vec<PathBuf>) -> Pending {
        let index = hashbrown::HashTable::new();
        Pending { cwd, shown_from, index, hasher: Default::default(), files: Vec::new(), listed: FastMap::default() }
    }

    /// A new, empty list with the same way of showing paths.
    fn empty(&self) -> Pending {
        Pending::new(self.cwd.clone(), self.shown_from.clone())
    }

    /// The files found so far, leaving the list empty (and forgetting them). The walks'
    /// listings go too: only placing agents reads them, which is done by the first read, and a
    /// large repository's listing is megabytes held while every file is read and parsed.
    fn take(&mut self) -> Vec<PendingFile> {
        self.index = hashbrown::HashTable::new();
        self.listed = FastMap::default();
        std::mem::take(&mut self.files)
    }

    /// How `path` is shown: relative to the innermost workspace folder holding it, else as
    /// given (relative to the current directory when under it).
    fn display(&self, path: &Path) -> String {
        let absolute = if path.is_absolute() { path.to_path_buf() } else { self.cwd.join(path) };
        let folder =
            self.shown_from.iter().filter(|root| absolute.starts_with(root)).max_by_key(|r| r.as_os_str().len());
        match folder {
            Some(root) if absolute != *root => display_path(&absolute, root),
            _ => display_path(path, &self.cwd),
        }
    }

    fn walk(&mut self, root: &Path, configs: &mut ConfigCache, role: Role) -> Result<(), ConfigError> {
        self.walk_files(walk_files(root), root, configs, role)
    }

    /// Adds `files`, the files a walk of `root` found, and keeps the list for
    /// [`Pending::listed_under`].
    fn walk_files(
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
                failed = self.push_named(key, display, configs, role, KindHint::Classify).err();
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
    fn covers(&self, dir: &Path) -> bool {
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

    fn push(&mut self, path: &Path, configs: &mut ConfigCache, role: Role) -> Result<(), ConfigError> {
        if !wanted(path, role) {
            return Ok(());
        }
        self.push_as(path, configs, role, None)
    }

    fn push_as(
        &mut self,
        path: &Path,
        configs: &mut ConfigCache,
        role: Role,
        kind: Option<FileKind>,
    ) -> Result<(), ConfigError> {
        self.push_hinted(path, configs, role, kind.map_or(KindHint::Classify, KindHint::Is))
    }

    fn push_hinted(
        &mut self,
        path: &Path,
        configs: &mut ConfigCache,
        role: Role,
        kind: KindHint,
    ) -> Result<(), ConfigError> {
        let (key, display) = self.name(path);
        self.push_named(key, display, configs, role, kind)
    }

    /// The key `path` is found by, and how it is shown.
    fn name(&self, path: &Path) -> (Key, String) {
        let absolute = if path.is_absolute() { path.to_path_buf() } else { self.cwd.join(path) };
        (Key(normalize(&absolute)), self.display(path))
    }

    fn push_named(
        &mut self,
        key: Key,
        display: String,
        configs: &mut ConfigCache,
        role: Role,
        kind: KindHint,
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
        let (config, kind) = match configs.governing(dir)? {
            Some(config) => (config, kind),
            // Governed by a broken config: not read, but rules may still ask whether it exists.
            None => (Arc::new(Config::defaults(dir)), KindHint::KnownOnly),
        };
        self.index.insert_unique(hash, self.files.len(), |&i| self.hasher.hash_one(&self.files[i].path));
        self.files.push(PendingFile { path: key, display, config, role, kind, plain: false });
        Ok(())
    }

    /// Adds an agent directory's files: JSON (registry, agent.json, schemas), prompts, and the
    /// breakdown config under `../climpt/config/`. Files under a checked root are reported.
    /// Files only in the editor's `overlay` (unsaved new ones) count as files of the directory.
    fn walk_agent(
        &mut self,
        dir: &Path,
        roots: &Roots,
        configs: &mut ConfigCache,
        overlay: &HashMap<PathBuf, String>,
    ) -> Result<(), ConfigError> {
        let role_of = |path: &Path| if roots.holds(path) { Role::Walked } else { Role::Context };
        let schemas = dir.join("schemas");
        let prompts = dir.join("prompts");
        let on_disk = self.listed_under(dir).unwrap_or_else(|| walk_files(dir));
        let mut unsaved: Vec<PathBuf> =
            overlay.keys().filter(|path| path.starts_with(dir) && !path.is_file()).cloned().collect();
        unsaved.sort();
        for path in on_disk.into_iter().chain(unsaved) {
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
            self.push_hinted(path, configs, role_of(path), kind)?;
        }
        let Some(agent_name) = dir.file_name().and_then(|n| n.to_str()) else { return Ok(()) };
        let Some(config_dir) = dir.parent().map(|p| p.join("climpt").join("config")) else { return Ok(()) };
        for side in ["app", "user"] {
            let path = config_dir.join(format!("{agent_name}-steps-{side}.yml"));
            if path.is_file() {
                self.push_hinted(&path, configs, role_of(&path), KindHint::Is(FileKind::BreakdownConfig))?;
            } else if config_dir.is_dir() {
                // Its absence is a finding; the directory's existence says the project uses breakdown.
                self.push_hinted(&config_dir, configs, Role::Context, KindHint::KnownOnly)?;
            }
        }
        Ok(())
    }
}

/// The files under `root` that a walk reads (`.gitignore` honoured, hidden directories
/// included, `.git` not), sorted by path: the order of a depth-first walk by name.
fn walk_files(root: &Path) -> Vec<PathBuf> {
    let walker = walker(root).sort_by_file_name(|a, b| a.cmp(b)).build();
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
fn walk_files_of(paths: &[PathBuf]) -> HashMap<PathBuf, Vec<PathBuf>> {
    let dirs: Vec<&PathBuf> = paths.iter().filter(|p| p.is_dir()).collect();
    let Some((first, rest)) = dirs.split_first() else { return HashMap::new() };
    let mut builder = walker(first);
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

fn walker(root: &Path) -> ignore::WalkBuilder {
    #[cfg(test)]
    WALKERS.with(|w| w.set(w.get() + 1));
    let mut builder = ignore::WalkBuilder::new(root);
    builder.hidden(false).require_git(false).filter_entry(|entry| entry.file_name() != ".git");
    builder
}

/// [`walk_files`] with directories read on all cores, for the one directory named on the
/// command line (a whole repository). Not for small ones: the parallel walker's threads cost about a
/// millisecond to start and stop, more than a machine directory takes to read.
fn walk_files_parallel(root: &Path) -> Vec<PathBuf> {
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
    walker(root).build_parallel().run(|| {
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

/// The paths given on the command line, for asking whether a file is under one of them in
/// the depth of its path instead of the number of paths (a pre-commit run names thousands).
struct Roots(FastSet<PathBuf>);

impl Roots {
    fn new(roots: &[PathBuf]) -> Roots {
        Roots(roots.iter().cloned().collect())
    }

    /// Whether `path` is one of the roots or under one (as `Path::starts_with` says).
    fn holds(&self, path: &Path) -> bool {
        // A few roots (the usual case) are compared: cheaper than hashing every ancestor.
        if self.0.len() <= 4 {
            return self.0.iter().any(|root| path.starts_with(root));
        }
        path.ancestors().any(|ancestor| self.0.contains(ancestor))
    }
}

/// The nearest directory at or above `dir` holding a state-machine file, not crossing a
/// repository root.
fn find_sm_dir_with_open(dir: &Path, open: &dyn Fn(&Path) -> bool) -> Option<PathBuf> {
    for ancestor in dir.ancestors() {
        if crate::workspace::SM_FILE_NAMES.iter().any(|name| {
            let file = ancestor.join(name);
            file.is_file() || open(&file)
        }) {
            return Some(ancestor.to_path_buf());
        }
        if ancestor.join(".git").exists() {
            return None;
        }
    }
    None
}

/// Only markdown, YAML (state machines, workflows), climpt JSON and TypeScript (atomic
/// workflows) files are read during a walk.
fn could_be_ours(path: &Path) -> bool {
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
fn wanted(path: &Path, role: Role) -> bool {
    role == Role::Explicit || could_be_ours(path)
}

/// The path as given, or relative to the current directory, without `./` noise.
fn display_path(path: &Path, cwd: &Path) -> String {
    let shown = path.strip_prefix(cwd).unwrap_or(path);
    // Spelled without `.` parts or doubled separators already (the usual case): as it is.
    if let Some(text) = shown.to_str()
        && !text.is_empty()
        && text != "."
        && !text.starts_with("./")
        && no_dot_parts(text)
    {
        return text.to_string();
    }
    let cleaned: PathBuf = shown.components().filter(|c| *c != std::path::Component::CurDir).collect();
    cleaned.to_string_lossy().into_owned()
}

#[cfg(test)]
mod engine_tests {
    use super::*;

    fn detect(files: &[(&str, &str)]) -> Option<Engine> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        detect_engine(&dir.path().join("workflows")).map(|(engine, _)| engine)
    }

    #[test]
    fn the_engine_comes_from_its_renderer_or_package() {
        let seed = r"result.replace(/\{\{(\w+(?:\.\w+)*)\}\}/g, (_m, key) => lookup(key));";
        let mid = r"result.replace(/\{\{([\w-]+(?:\.[\w-]+)*)\}\}/g, (_m, key) => lookup(key));";
        assert_eq!(detect(&[("src/workflows/templates.ts", seed)]), Some(Engine::Seed));
        assert_eq!(detect(&[("src/workflows/templates.ts", mid)]), Some(Engine::Head));
        let reexport = "export * from \"lastlight-workflow-engine\";\n";
        assert_eq!(detect(&[("src/workflows/templates.ts", reexport)]), Some(Engine::Head));
        assert_eq!(detect(&[("packages/workflow-engine/package.json", "{}")]), Some(Engine::Head));
        // A file of that name that is no renderer says nothing.
        let other = "export const welcome = (name: string) => `Welcome, ${name}!`;\n";
        assert_eq!(detect(&[("src/workflows/templates.ts", other)]), None);
        assert_eq!(detect(&[]), None);
    }
}

#[cfg(test)]
mod scale_tests {
    use super::*;

    #[test]
    fn directories_no_config_governs_share_one_default_config() {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["a", "b", "c"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        std::fs::write(dir.path().join("c").join("stagelint.toml"), "").unwrap();
        let mut configs = ConfigCache::new(None);
        let a = configs.for_dir(&dir.path().join("a")).unwrap();
        let b = configs.for_dir(&dir.path().join("b")).unwrap();
        let c = configs.for_dir(&dir.path().join("c")).unwrap();
        assert!(a.path.is_none() && Arc::ptr_eq(&a, &b), "one shared default");
        assert!(c.path.is_some() && !Arc::ptr_eq(&a, &c), "a config file is its own");
    }

    /// Bounds are decided once per directory: growing them must undo an earlier "outside", and
    /// a file added as a bound of its own is inside though its directory is not.
    #[test]
    fn bounds_answer_again_after_they_grow_and_hold_single_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for name in ["ws/a.md", "other/b.md", "lib/c.md", "lib/d.md"] {
            std::fs::create_dir_all(root.join(name).parent().unwrap()).unwrap();
            std::fs::write(root.join(name), "x").unwrap();
        }
        let mut bounds = Bounds::new(&[root.join("ws")]);
        assert!(bounds.holds(&root.join("ws/a.md"), true));
        assert!(!bounds.holds(&root.join("other/b.md"), true));
        assert!(!bounds.holds_dir(&root.join("other")));
        bounds.extend([root.join("other"), root.join("lib/c.md")]);
        assert!(bounds.holds(&root.join("other/b.md"), true));
        assert!(bounds.holds_dir(&root.join("other")));
        assert!(bounds.holds(&root.join("lib/c.md"), true));
        assert!(!bounds.holds(&root.join("lib/d.md"), true));
    }

    /// The shortcuts for paths spelled normally already give what the general case gives.
    #[test]
    fn normal_paths_are_kept_as_the_general_case_would_spell_them() {
        let slow_display = |path: &Path, cwd: &Path| {
            let shown = path.strip_prefix(cwd).unwrap_or(path);
            let cleaned: PathBuf = shown.components().filter(|c| *c != std::path::Component::CurDir).collect();
            cleaned.to_string_lossy().into_owned()
        };
        let paths = [
            "/",
            "/a",
            "/a/b.md",
            "/a/./b",
            "/a/../b",
            "/a//b",
            "/a/b/",
            "/a/b/.",
            "/a/b/..",
            "/a/.b/..c",
            "a/b",
            "./a/b",
            "../a",
            "a/../b",
            ".",
            "",
            "/w/x/./y",
            "/w/x",
            "/w/x/",
            "/w",
            "/w/..x",
        ];
        for text in paths {
            let path = Path::new(text);
            assert_eq!(normalize(path), normalize_components(path), "normalize {text:?}");
            for cwd in ["/w", "/w/x", "/", "/other"] {
                let cwd = Path::new(cwd);
                assert_eq!(display_path(path, cwd), slow_display(path, cwd), "display {text:?} from {cwd:?}");
            }
        }
    }

    /// `machines` state machines of five stages each under a fresh directory.
    fn machines(machines: usize) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for m in 0..machines {
            let sm = dir.path().join(format!("sm-{m:04}"));
            std::fs::create_dir(&sm).unwrap();
            std::fs::write(sm.join("sm.yaml"), "entry: stage-0\n").unwrap();
            for s in 0..5 {
                let stage = format!("---\nid: stage-{s}\ncompletionTool: submit\n---\nStage {s}.\n");
                std::fs::write(sm.join(format!("stage-{s}.md")), stage).unwrap();
            }
        }
        dir
    }

    /// Discovers `paths`, giving the workspace, the path comparisons and the files walked.
    fn counted(paths: &[PathBuf]) -> (Workspace, usize, usize) {
        COMPARISONS.with(|c| c.set(0));
        WALKED.with(|w| w.set(0));
        let workspace = discover(paths, &mut ConfigCache::new(None)).unwrap();
        (workspace, COMPARISONS.with(|c| c.get()), WALKED.with(|w| w.get()))
    }

    #[test]
    fn discovery_compares_each_file_a_bounded_number_of_times() {
        // A search of the files seen so far for each new file (issue 18) made 600 files cost
        // about 180,000 comparisons; a lookup costs one or two, however many files there are.
        for count in [20, 100] {
            let dir = machines(count);
            let (workspace, comparisons, _) = counted(&[dir.path().to_path_buf()]);
            assert_eq!(workspace.files().len(), count * 6);
            assert!(comparisons <= 2 * workspace.files().len(), "{comparisons} comparisons for {count} machines");
        }
    }

    #[test]
    fn named_files_read_only_their_machines() {
        let dir = machines(200);
        let named: Vec<PathBuf> = (0..10).map(|m| dir.path().join(format!("sm-{:04}/stage-2.md", m * 20))).collect();
        let (workspace, comparisons, walked) = counted(&named);
        // The ten files and the other five files of each of their machines, nothing else.
        assert_eq!(workspace.files().len(), 60);
        assert_eq!(workspace.reported_files().count(), 10);
        assert_eq!(walked, 60, "only the named files' machines are walked");
        assert!(comparisons <= 120, "{comparisons} comparisons");
    }

    #[test]
    fn a_batch_of_directories_is_listed_by_one_walker() {
        // An editor's index names machine directories in batches; a walker per directory read
        // the git config and probed every ancestor for ignore files each time (issue 18).
        let dir = machines(40);
        let dirs: Vec<PathBuf> = (0..40).map(|m| dir.path().join(format!("sm-{m:04}"))).collect();
        WALKERS.with(|w| w.set(0));
        let (workspace, _, walked) = counted(&dirs);
        assert_eq!(WALKERS.with(|w| w.get()), 1);
        assert_eq!((walked, workspace.reported_files().count()), (240, 240));
        // Each directory's files are its own: the first stage of each machine is where it was.
        for m in [0, 17, 39] {
            let stage = dir.path().join(format!("sm-{m:04}/stage-0.md"));
            assert!(workspace.file_at(&normalize(&stage)).is_some(), "{}", stage.display());
        }
    }

    #[test]
    fn agents_under_a_walked_directory_are_listed_not_walked_again() {
        // Each agent's files come from the walk of the repository (issue 18: a second walk per
        // agent made 2,000 agents cost 23 times 200), and are placed as the agent's own.
        let dir = tempfile::tempdir().unwrap();
        for a in 0..30 {
            let agent = dir.path().join(format!("a-{a:02}/.agent/bench"));
            std::fs::create_dir_all(agent.join("schemas")).unwrap();
            std::fs::create_dir_all(agent.join("prompts/steps/initial/bench")).unwrap();
            std::fs::write(agent.join("steps_registry.json"), r#"{"agentId": "bench", "steps": {}}"#).unwrap();
            std::fs::write(agent.join("agent.json"), r#"{"name": "bench"}"#).unwrap();
            std::fs::write(agent.join("schemas/bench.schema.json"), r#"{"type": "object"}"#).unwrap();
            std::fs::write(agent.join("prompts/steps/initial/bench/f_default.md"), "Work.\n").unwrap();
        }
        let cwd = std::env::current_dir().unwrap();
        let relative = pathdiff(dir.path(), &cwd);
        for root in [dir.path().to_path_buf(), relative] {
            let (workspace, _, walked) = counted(std::slice::from_ref(&root));
            assert_eq!(walked, 30 * 4, "the agents were walked again from {}", root.display());
            let kinds = |kind: FileKind| workspace.files().iter().filter(|f| f.kind == kind).count();
            assert_eq!((kinds(FileKind::JsonSchema), kinds(FileKind::C3lPrompt)), (30, 30), "from {}", root.display());
        }
    }

    /// `path` relative to `base` through `..`s, so a walk's paths are spelled relative.
    fn pathdiff(path: &Path, base: &Path) -> PathBuf {
        let common = path.ancestors().find(|a| base.starts_with(a)).unwrap();
        let ups = base.strip_prefix(common).unwrap().components().count();
        let mut out: PathBuf = std::iter::repeat_n("..", ups).collect();
        out.push(path.strip_prefix(common).unwrap());
        out
    }

    #[test]
    fn a_walk_lists_files_in_depth_first_name_order() {
        let dir = tempfile::tempdir().unwrap();
        for path in ["b/x.md", "b.md", "a/z/y.md", "a/a.md", "c.md"] {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let found: Vec<PathBuf> =
            walk_files(dir.path()).into_iter().map(|p| p.strip_prefix(dir.path()).unwrap().to_path_buf()).collect();
        let expected: Vec<PathBuf> =
            ["a/a.md", "a/z/y.md", "b/x.md", "b.md", "c.md"].iter().map(PathBuf::from).collect();
        assert_eq!(found, expected);
    }
}

#[cfg(test)]
mod atomic_tests {
    use super::*;

    const WORKFLOW: &str = "import { defineWorkflow } from \"@bastani/atomic/workflows\";\nexport default defineWorkflow({ name: \"x\" }).run(async () => {}).compile();\n";

    /// A project with two workflows (one `.gitignore`d), a `package.json` and agent files.
    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        for (path, text) in [
            (".atomic/workflows/.gitignore", "wip/\n"),
            (".atomic/workflows/hello/claude/index.ts", WORKFLOW),
            (".atomic/workflows/wip/claude/index.ts", WORKFLOW),
            ("package.json", "{\"devDependencies\": {\"@bastani/atomic\": \"^0.5.24\"}}"),
            (".claude/agents/planner.md", "---\nname: planner\n---\n"),
            (".agents/skills/notes/SKILL.md", "---\nname: notes\ndescription: d\n---\n"),
            ("src/index.ts", "export const x = 1;\n"),
        ] {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn kinds(workspace: &Workspace, root: &Path) -> Vec<(String, FileKind, bool)> {
        let mut out: Vec<_> = workspace
            .files()
            .iter()
            .map(|f| (f.path.strip_prefix(root).unwrap().display().to_string(), f.kind.clone(), f.reported))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    #[test]
    fn a_walk_reads_the_context_and_the_workflows_the_gitignore_hides() {
        let dir = project();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let workspace = discover(std::slice::from_ref(&root), &mut ConfigCache::new(None)).unwrap();
        let context = |p: &str| (p.to_string(), FileKind::AtomicContext, false);
        let workflow = |p: &str| (p.to_string(), FileKind::AtomicWorkflow, true);
        let mut expected = vec![
            // A skill the walk meets is checked as one (and still names an agent).
            (".agents/skills/notes/SKILL.md".to_string(), FileKind::Skill, true),
            workflow(".atomic/workflows/hello/claude/index.ts"),
            workflow(".atomic/workflows/wip/claude/index.ts"),
            context(".atomic/workflows/.gitignore"),
            context(".claude/agents/planner.md"),
            context("package.json"),
        ];
        expected.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(kinds(&workspace, &root), expected);
    }

    #[test]
    fn a_base_holding_only_hidden_workflows_still_gets_their_context() {
        let dir = project();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::remove_dir_all(root.join(".atomic/workflows/hello")).unwrap();
        std::fs::write(root.join(".gitignore"), ".atomic/workflows/wip/\n").unwrap();
        let workspace = discover(std::slice::from_ref(&root), &mut ConfigCache::new(None)).unwrap();
        let found = kinds(&workspace, &root);
        assert!(found.iter().any(|f| f.0 == ".atomic/workflows/wip/claude/index.ts" && f.2), "{found:?}");
        assert!(found.iter().any(|f| f.0 == "package.json"), "{found:?}");
        assert!(found.iter().any(|f| f.0 == ".claude/agents/planner.md"), "{found:?}");
    }

    #[test]
    fn a_named_workflow_reads_its_context_and_no_other_workflow() {
        let dir = project();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let named = root.join(".atomic/workflows/hello");
        let workspace = discover(std::slice::from_ref(&named), &mut ConfigCache::new(None)).unwrap();
        let found = kinds(&workspace, &root);
        let reported: Vec<&str> = found.iter().filter(|f| f.2).map(|f| f.0.as_str()).collect();
        assert_eq!(reported, [".atomic/workflows/hello/claude/index.ts"], "{found:?}");
        assert!(found.iter().any(|f| f.0 == ".atomic/workflows/.gitignore"), "{found:?}");
        assert!(found.iter().any(|f| f.0 == "package.json"), "{found:?}");
        assert!(found.iter().any(|f| f.0 == ".claude/agents/planner.md"), "{found:?}");
        assert!(!found.iter().any(|f| f.0.contains("wip")), "the base is not read whole: {found:?}");
    }

    #[cfg(unix)]
    #[test]
    fn context_files_that_are_links_are_not_read() {
        let dir = project();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.md"), "---\nname: secret\n---\n").unwrap();
        std::fs::write(outside.path().join("package.json"), "{}").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), root.join(".claude/agents/evil.md")).unwrap();
        std::fs::remove_file(root.join("package.json")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("package.json"), root.join("package.json")).unwrap();
        let named = root.join(".atomic/workflows/hello");
        let workspace = discover(std::slice::from_ref(&named), &mut ConfigCache::new(None)).unwrap();
        let found = kinds(&workspace, &root);
        assert!(!found.iter().any(|f| f.0.contains("evil") || f.0 == "package.json"), "{found:?}");
        assert!(found.iter().any(|f| f.0 == ".claude/agents/planner.md"), "{found:?}");
    }

    #[test]
    fn an_atomic_workflow_is_rechecked_with_its_own_directory() {
        let base = Path::new("/p/.atomic/workflows");
        assert_eq!(scope_of(&base.join("hello/claude/index.ts")), base.join("hello"));
        assert_eq!(scope_of(&base.join("hello/helpers/prompts.ts")), base.join("hello"));
        assert_eq!(scope_of(&base.join(".gitignore")), base);
        let builtin = Path::new("/s/src/sdk/workflows/builtin");
        assert_eq!(scope_of(&builtin.join("ralph/copilot/index.ts")), builtin.join("ralph"));
    }
}
