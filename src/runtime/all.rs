//! Every cassette of a workspace, replayed (`stagelint dry-run --all`): each goes to the
//! engine whose cassette it is (`runtime::engine_of`) and is replayed as `check` replays it, so
//! an engine added to `runtime::ENGINES` joins the sweep, its totals and its coverage without a
//! change here.

use std::collections::HashMap;
use std::path::Path;

use crate::diagnostic::{Diagnostic, FileId, Severity};
use crate::registry::cassette::{CassetteUnconsumed, RequestDrift};
use crate::runtime::coverage::Part;
use crate::runtime::read::cassettes;
use crate::runtime::run::{DryRun, Options};
use crate::runtime::{ENGINES, engine_of};
use crate::workspace::{FileKind, SourceFile, Workspace};

/// One cassette and what replaying it gave.
#[derive(Debug)]
pub struct Replayed {
    pub cassette: FileId,
    /// The engine whose cassette it is.
    pub engine: &'static str,
    /// The run, or the findings that say why it could not be replayed (it does not read, or
    /// replays nothing in this workspace).
    pub run: Result<DryRun, Vec<Diagnostic>>,
}

impl Replayed {
    /// What the replay found (or why there was none).
    pub fn findings(&self) -> &[Diagnostic] {
        match &self.run {
            Ok(run) => &run.findings,
            Err(findings) => findings,
        }
    }

    /// Replayed, with no error found.
    pub fn passed(&self) -> bool {
        self.run.as_ref().is_ok_and(|run| run.refused.is_none())
            && !self.findings().iter().any(|d| d.severity == Severity::Error)
    }

    /// The findings of `code`.
    pub fn count(&self, code: &str) -> usize {
        self.findings().iter().filter(|d| d.code == code).count()
    }

    /// Findings that fail the run (errors).
    pub fn mismatches(&self) -> usize {
        self.findings().iter().filter(|d| d.severity == Severity::Error).count()
    }
}

/// The sums over a sweep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Totals {
    pub cassettes: usize,
    pub replayed: usize,
    pub passed: usize,
    /// Expectations that held.
    pub expectations_passed: u32,
    /// Expectations that failed (those never checked included).
    pub expectations_failed: u32,
    /// Request drift findings.
    pub drift: usize,
    /// Findings of recorded turns no run used (`cassette/CassetteUnconsumed`).
    pub unused: usize,
    /// Error findings.
    pub mismatches: usize,
}

/// Replays every cassette of `workspace` (on all cores), in the order of their paths.
pub fn replay_all(workspace: &Workspace, options: Options) -> Vec<Replayed> {
    let every: Vec<FileId> = cassettes(workspace).map(|f| f.id).collect();
    replay(workspace, &every, options)
}

/// Replays `cassettes` (on all cores), in the order of their paths.
pub fn replay(workspace: &Workspace, cassettes: &[FileId], options: Options) -> Vec<Replayed> {
    let mut files: Vec<&SourceFile> = cassettes.iter().map(|id| workspace.file(*id)).collect();
    files.sort_by(|a, b| a.display.cmp(&b.display));
    files.dedup_by_key(|f| f.id);
    crate::util::par_map(&files, |file| {
        let engine = engine_of(file);
        Replayed { cassette: file.id, engine: engine.name(), run: engine.replay(workspace, file, options) }
    })
}

/// The cassettes a change to the files `changed` can break: each changed cassette, every
/// cassette beside a changed definition (a stage's own, a machine's), each one an engine
/// offers a code lens for on it or takes for it by convention (`[dry-run] cassettes`), and
/// those whose replay reads it (`Engine::replays_reading`: a climpt agent's prompt).
pub fn cassettes_of(workspace: &Workspace, changed: &[FileId]) -> Vec<FileId> {
    // The cassettes of each directory, found once (a hook run over every file of a large
    // repository names them all).
    let mut beside: HashMap<Option<&Path>, Vec<FileId>> = HashMap::new();
    for cassette in cassettes(workspace) {
        beside.entry(cassette.path.parent()).or_default().push(cassette.id);
    }
    let mut out = Vec::new();
    let mut definitions = Vec::new();
    for &id in changed {
        let file = workspace.file(id);
        if file.kind == FileKind::Cassette {
            out.push(id);
            continue;
        }
        out.extend(beside.get(&file.path.parent()).into_iter().flatten().copied());
        out.extend(crate::runtime::lenses(workspace, id).into_iter().map(|lens| lens.cassette));
        out.extend(crate::runtime::conventional_cassette(workspace, id));
        definitions.push(file);
    }
    out.extend(ENGINES.iter().flat_map(|engine| engine.replays_reading(workspace, &definitions)));
    out.sort();
    out.dedup();
    out
}

/// The sums over `runs`.
pub fn totals(runs: &[Replayed]) -> Totals {
    let mut totals = Totals { cassettes: runs.len(), ..Totals::default() };
    for replayed in runs {
        if let Ok(run) = &replayed.run {
            totals.replayed += 1;
            totals.expectations_passed += run.passed;
            totals.expectations_failed += run.failed;
        }
        totals.passed += usize::from(replayed.passed());
        totals.drift += replayed.count(RequestDrift);
        totals.unused += replayed.count(CassetteUnconsumed);
        totals.mismatches += replayed.mismatches();
    }
    totals
}

/// Every finding of the sweep once (two runs may find the same stage error), in the order
/// `check` gives findings.
pub fn findings(workspace: &Workspace, runs: &[Replayed]) -> Vec<Diagnostic> {
    let mut all: Vec<&Diagnostic> = runs.iter().flat_map(Replayed::findings).collect();
    // Sorted first, so that a duplicate sits among the few findings with its key: no
    // comparison of every finding with every other.
    all.sort_by(|a, b| {
        let (fa, fb) = (workspace.file(a.file), workspace.file(b.file));
        (&fa.display, a.span.start, a.code, &a.message).cmp(&(&fb.display, b.span.start, b.code, &b.message))
    });
    let mut out: Vec<Diagnostic> = Vec::with_capacity(all.len());
    let mut group_start = 0;
    for finding in all {
        let same_key = |d: &Diagnostic| {
            d.file == finding.file
                && d.span.start == finding.span.start
                && d.code == finding.code
                && d.message == finding.message
        };
        if out.last().is_none_or(|last| !same_key(last)) {
            group_start = out.len();
        }
        if !out[group_start..].contains(finding) {
            out.push(finding.clone());
        }
    }
    out
}

/// The configs of the sweep that cannot be used (`stagelint/InvalidConfig`): the cassettes they
/// govern are left out, as `check` leaves out the files, and the sweep fails.
pub fn config_findings(workspace: &Workspace) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for file in workspace.files() {
        crate::families::stagelint::invalid_config(file, &mut out);
    }
    out
}

/// What the runs exercised, per engine that reports coverage (engines in `ENGINES` order).
pub fn coverage(workspace: &Workspace, runs: &[Replayed]) -> Vec<(&'static str, Vec<Part>)> {
    ENGINES
        .iter()
        .filter_map(|engine| {
            let own: Vec<&DryRun> =
                runs.iter().filter(|r| r.engine == engine.name()).filter_map(|r| r.run.as_ref().ok()).collect();
            Some((engine.name(), engine.coverage(workspace, &own)?))
        })
        .collect()
}
