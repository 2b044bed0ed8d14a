//! Paths as discovery keys and shows them: absolute and normalized without touching the disk,
//! shown relative to the current directory, and the set of roots given.

use std::path::{Path, PathBuf};

use crate::util::FastSet;

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
pub(super) fn normalize_components(path: &Path) -> PathBuf {
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

/// The paths given on the command line, for asking whether a file is under one of them in
/// the depth of its path instead of the number of paths (a pre-commit run names thousands).
pub(super) struct Roots(FastSet<PathBuf>);

impl Roots {
    pub(super) fn new(roots: &[PathBuf]) -> Roots {
        Roots(roots.iter().cloned().collect())
    }

    /// Whether `path` is one of the roots or under one (as `Path::starts_with` says).
    pub(super) fn holds(&self, path: &Path) -> bool {
        // A few roots (the usual case) are compared: cheaper than hashing every ancestor.
        if self.0.len() <= 4 {
            return self.0.iter().any(|root| path.starts_with(root));
        }
        path.ancestors().any(|ancestor| self.0.contains(ancestor))
    }
}

/// The path as given, or relative to the current directory, without `./` noise.
pub(super) fn display_path(path: &Path, cwd: &Path) -> String {
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
