//! The baseline files that the configs of the checked files name (`baseline = "…"`, or
//! `--baseline` for all): read as context for `check`, which marks the findings they accept.
//! The files their entries name are looked up here too, so that `check` can tell an entry of a
//! file deleted since (stale) from one of a file this run did not check, without the disk.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::source::read::read_text;
use crate::workspace::discover::bounds::Bounds;
use crate::workspace::discover::configs::ConfigCache;
use crate::workspace::discover::paths::normalize;
use crate::workspace::discover::pending::Pending;
use crate::workspace::{FileKind, Workspace};

/// Adds each baseline file named by the config of a reported file (one that does not exist
/// yet is nothing: every finding is new), and notes which files its entries name still exist.
pub(super) fn add_baselines(
    workspace: &mut Workspace,
    configs: &mut ConfigCache,
    overlay: &HashMap<PathBuf, String>,
    pending: &Pending,
    bounds: &Bounds,
    roots: &[PathBuf],
) {
    let mut named: Vec<PathBuf> = workspace.reported_files().filter_map(|f| f.config.baseline.clone()).collect();
    // A baseline named itself (a pre-commit run of a commit that changes only it), when the
    // config around it says it is the baseline: checked as one.
    for root in roots.iter().filter(|root| root.is_file()) {
        let dir = root.parent().unwrap_or(Path::new("/"));
        if let Ok(config) = configs.for_dir(dir)
            && config.baseline.as_deref().is_some_and(|b| normalize(b) == *root)
        {
            named.push(root.clone());
        }
    }
    if named.is_empty() {
        return;
    }
    let mut named: Vec<PathBuf> = named.iter().map(|path| normalize(path)).collect();
    named.sort();
    named.dedup();
    for path in named {
        if workspace.file_at(&path).is_some() || !(overlay.contains_key(&path) || path.exists()) {
            continue;
        }
        let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        let config = configs.for_dir(&dir).unwrap_or_else(|_| Arc::new(Config::defaults(&dir)));
        let display = pending.display(&path);
        let text = match overlay.get(&path).cloned().map_or_else(|| read_text(&path), Ok) {
            Ok(text) => text,
            Err(unreadable) => {
                // Reported, so that `stagelint/IoError` says why the baseline is not used.
                let kind = FileKind::Unreadable { message: unreadable.message, offset: unreadable.offset };
                workspace.add(path, display, unreadable.lossy_text, kind, config);
                continue;
            }
        };
        let entries = crate::diagnostic::baseline_file::parse(&text).entries;
        workspace.add_context(path, display, text, FileKind::Baseline, config);
        for entry in entries {
            let target = normalize(&dir.join(&entry.path));
            // Only inside the run's bounds is the disk asked: a hostile entry learns nothing of
            // the rest of it. Outside them (`check sub/`, no project root above it) the run did
            // not look, so the file counts as existing: its entry is neither stale nor dropped.
            let inside = target.parent().is_some_and(|parent| bounds.holds_dir(parent));
            if workspace.exists(&target) {
                continue;
            }
            if !inside || overlay.contains_key(&target) || target.exists() {
                workspace.add_known_path(target);
            }
        }
    }
}
