//! Scopes: which files change together (a state machine, an agent, a workflows directory), so an
//! editor re-checks only what a change touches; and the directories that make them.

use std::path::{Path, PathBuf};

use crate::util::FastMap;
use crate::workspace::discover::configs::is_config_name;
use crate::workspace::discover::exclude::ConfigStore;
use crate::workspace::discover::paths::normalize;
use crate::workspace::discover::walk::{could_be_ours, walk_files_parallel};

/// The nearest directory named `workflows` at or above `path`, not crossing a repository root.
/// An atomic workflows base is none: its workflows are checked one by one.
pub(super) fn find_workflows_dir(path: &Path) -> Option<PathBuf> {
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

/// The scopes ([`scope_of`]) of the files a walk of `roots` would read, sorted and each once.
/// The language server indexes a workspace scope by scope, so it can publish as it goes.
pub fn scopes(roots: &[PathBuf]) -> Vec<PathBuf> {
    let store = std::sync::Arc::new(ConfigStore::plain(None, std::collections::HashMap::new()));
    scopes_with_open(roots, &|_| false, &store)
}

/// [`scopes`], where `open` says which files an editor has open: an open `sm.yaml` makes its
/// directory a state machine even before it is saved, or after it was deleted on disk. The
/// directories `store`'s configs exclude are not walked.
pub fn scopes_with_open(
    roots: &[PathBuf],
    open: &dyn Fn(&Path) -> bool,
    store: &std::sync::Arc<ConfigStore>,
) -> Vec<PathBuf> {
    let mut found = std::collections::BTreeSet::new();
    // Files of one directory share a scope (except breakdown configs, named after their agent).
    let mut by_dir: FastMap<PathBuf, Option<PathBuf>> = FastMap::default();
    for root in roots {
        if root.is_file() {
            found.insert(scope_of_with_open(&normalize(root), open));
            continue;
        }
        for path in walk_files_parallel(root, store) {
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
    if let Some(agent) = breakdown_agent_dir(path) {
        return agent;
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

/// The agent a breakdown config belongs to: `.agent/climpt/config/<agent>-steps-app.yml` (or
/// `-steps-user.yml`) to `.agent/<agent>/`, which need not exist.
pub(super) fn breakdown_agent_dir(path: &Path) -> Option<PathBuf> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let agent = name.strip_suffix("-steps-app.yml").or_else(|| name.strip_suffix("-steps-user.yml"))?;
    Some(path.parent()?.parent()?.parent()?.join(agent))
}

/// The nearest directory at or above `path` that is a climpt agent directory (holds
/// `steps_registry.json` or `agent.json`), not crossing a repository root.
pub(super) fn find_agent_dir(path: &Path) -> Option<PathBuf> {
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

/// The nearest directory at or above `dir` holding a state-machine file, not crossing a
/// repository root.
pub(super) fn find_sm_dir_with_open(dir: &Path, open: &dyn Fn(&Path) -> bool) -> Option<PathBuf> {
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
