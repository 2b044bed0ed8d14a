//! Where discovery may read: the bounds of a run, with symlinks resolved once per directory.

use std::path::{Path, PathBuf};

use crate::util::{FastMap, FastSet};

/// Where discovery may read, with symlinks resolved: the named roots (a named file's
/// directory), the repository each lies in, the directory of the config governing each, and
/// the state machine, agent and Last Light directories found above them. A link or a `..` reference leading elsewhere is not followed.
pub(super) struct Bounds {
    dirs: FastSet<PathBuf>,
    /// Real directories nothing is read outside of, whatever the bounds (empty: no limit).
    ceiling: Vec<PathBuf>,
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
    pub(super) fn new(roots: &[PathBuf]) -> Bounds {
        let mut bounds = Bounds { dirs: FastSet::default(), ceiling: Vec::new(), cache: Default::default() };
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

    /// Reads nothing outside `ceiling` (real paths), whatever the bounds say.
    pub(super) fn cap(&mut self, ceiling: &[PathBuf]) {
        self.ceiling = ceiling.to_vec();
        self.cache.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner).inside.clear();
    }

    /// Whether a real path is under the ceiling.
    fn capped(&self, real: &Path) -> bool {
        self.ceiling.is_empty() || self.ceiling.iter().any(|c| real.starts_with(c))
    }

    pub(super) fn extend(&mut self, dirs: impl IntoIterator<Item = PathBuf>) {
        for dir in dirs {
            self.dirs.insert(std::fs::canonicalize(&dir).unwrap_or(dir));
        }
        self.cache.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner).inside.clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BoundsCache> {
        self.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether the directory's real path lies in a bound.
    pub(super) fn holds_dir(&self, dir: &Path) -> bool {
        self.dir_inside(dir, &mut self.lock()).unwrap_or(false)
    }

    /// [`Bounds::holds_dir`], or `None` when the directory has no real path (it is gone).
    fn dir_inside(&self, dir: &Path, cache: &mut BoundsCache) -> Option<bool> {
        if let Some(inside) = cache.inside.get(dir) {
            return Some(*inside);
        }
        let real = real_dir(dir, &mut cache.real)?;
        let inside = real.ancestors().any(|a| self.dirs.contains(a)) && self.capped(&real);
        cache.inside.insert(dir.to_path_buf(), inside);
        Some(inside)
    }

    /// Whether the file's real path lies in a bound: a link is resolved; any other file is where
    /// its directory really is (resolved once per directory).
    /// `plain` says a walk listed the file, so it is no link (a walk does not follow links) and
    /// needs no `lstat` of its own.
    pub(super) fn holds(&self, path: &Path, plain: bool) -> bool {
        let is_link = if plain {
            false
        } else {
            // A file that does not exist is left to the read to report.
            let Ok(meta) = std::fs::symlink_metadata(path) else { return true };
            meta.file_type().is_symlink()
        };
        if is_link {
            return std::fs::canonicalize(path)
                .ok()
                .is_none_or(|real| real.ancestors().any(|a| self.dirs.contains(a)) && self.capped(&real));
        }
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { return true };
        let mut cache = self.lock();
        match self.dir_inside(dir, &mut cache) {
            None | Some(true) => true,
            // A file named on purpose (or an atomic workflow's context file) is a bound of its own.
            Some(false) => {
                real_dir(dir, &mut cache.real).is_some_and(|d| self.dirs.contains(&d.join(name)) && self.capped(&d))
            }
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
