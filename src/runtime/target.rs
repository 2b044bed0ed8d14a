//! From paths to a dry-run: the engines are asked in order (`runtime::ENGINES`) which of them
//! runs `path`; the last answers every path no other engine claims.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::runtime::ENGINES;
use crate::runtime::engine::Request;
use crate::runtime::run::{DryRun, Options};
use crate::workspace::Workspace;
use crate::workspace::discover::{ConfigCache, absolute};

/// Dry-runs `path` (what an engine runs: a stage file, a state-machine file or its directory)
/// against `cassette` (default: by the engine's convention). `overlay` holds unsaved editor
/// texts.
pub fn dry_run_path(
    path: &Path,
    cassette: Option<&Path>,
    options: Options,
    configs: &mut ConfigCache,
    overlay: &HashMap<PathBuf, String>,
) -> Result<(Workspace, DryRun), String> {
    dry_run_focused(path, cassette, None, options, configs, overlay)
}

/// [`dry_run_path`], highlighting `focus` (a climpt step) in the timeline.
pub fn dry_run_focused(
    path: &Path,
    cassette: Option<&Path>,
    focus: Option<String>,
    options: Options,
    configs: &mut ConfigCache,
    overlay: &HashMap<PathBuf, String>,
) -> Result<(Workspace, DryRun), String> {
    // Only a regular file is a cassette: standard input, a device or a FIFO could be endless or
    // block forever (unsaved editor text, in `overlay`, is a file's text).
    if let Some(path) = cassette.map(absolute).filter(|p| !overlay.contains_key(p))
        && let Ok(meta) = std::fs::metadata(&path)
        && !meta.is_file()
    {
        return Err(format!(
            "{}: not a regular file; --cassette names a cassette file (a directory, device, FIFO or standard input is not read)",
            path.display()
        ));
    }
    let mut request = Request { options, configs, overlay, focus };
    for engine in ENGINES {
        if let Some(ran) = engine.dry_run_path(path, cassette, &mut request) {
            return ran;
        }
    }
    // The last engine answers every path; a guard, never reached.
    Err(format!("{}: nothing to dry-run here", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dry-run of one stage reads its machine, not the workspace around it (issue 18: a
    /// 20,000-file workspace must not cost a full read and check to run one stage).
    #[test]
    fn a_stage_dry_run_reads_only_its_machine() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        for m in 0..30 {
            let sm = dir.path().join(format!("machines/sm-{m}"));
            std::fs::create_dir_all(&sm).unwrap();
            std::fs::write(sm.join("sm.yaml"), "entry: plan\n").unwrap();
            std::fs::write(sm.join("plan.md"), "---\nid: plan\ncompletionTool: submit_plan\n---\nPlan.\n").unwrap();
        }
        let one = dir.path().join("one");
        std::fs::create_dir(&one).unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cassette/UnknownKey/ok-provenance");
        for name in ["plan.md", "plan.cassette.yaml"] {
            std::fs::copy(fixture.join(name), one.join(name)).unwrap();
        }
        std::fs::write(one.join("sm.yaml"), "entry: plan\n").unwrap();
        let options = Options { strict: false, explain_init: true };
        let overlay = HashMap::new();
        let (workspace, run) =
            dry_run_path(&one.join("plan.md"), None, options, &mut ConfigCache::new(None), &overlay).unwrap();
        let read: Vec<&Path> = workspace.files().iter().map(|f| f.path.as_path()).collect();
        assert_eq!(read.len(), 3, "{read:?}");
        assert!(read.iter().all(|path| path.starts_with(&one)), "{read:?}");
        assert_eq!(run.exit_code(), 0, "{:?}", run.findings);
    }
}
