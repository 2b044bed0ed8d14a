//! The seam between the runtime's core and each system's engine. An engine replays one
//! system's definitions against its kind of cassette; the core finds the cassettes of a
//! workspace, asks which engine each belongs to, and gives every engine the same CLI, event
//! stream, timeline frame, lens command and `cassette/` findings. The core calls engines only
//! through [`Engine`]; an engine uses the core's lower half (`run`, `events`, `read`,
//! `report`'s helpers) and never the dispatch above it (`runtime/mod.rs`, `target`, `lint`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Diagnostic, FileId};
use crate::editor;
use crate::runtime::coverage::Part;
use crate::runtime::events::Event;
use crate::runtime::run::{DryRun, Options};
use crate::source::Span;
use crate::workspace::discover::ConfigCache;
use crate::workspace::{SourceFile, Workspace};

/// One system's dry-run engine. Adding one is a folder under `runtime/` with a type that
/// implements this, and a line in `runtime::ENGINES`.
pub trait Engine: Sync {
    /// The system it replays, as output and docs name it (`stages`, `climpt`).
    fn name(&self) -> &'static str;

    /// The top-level cassette keys that make a cassette this engine's (`stage`, `stages` for
    /// the stage engine). A cassette with none of any engine's keys goes to the last engine of
    /// `runtime::ENGINES`, whose reader says what a cassette needs.
    fn subject_keys(&self) -> &'static [&'static str];

    /// Dry-runs `path` when it names something this engine runs (`None`: not this engine's;
    /// the next engine is asked, and the last one answers every path). `cassette` is the one named on the command line; without it
    /// the engine picks its conventional cassette. `overlay` holds unsaved editor texts.
    fn dry_run_path(
        &self,
        path: &Path,
        cassette: Option<&Path>,
        request: &mut Request<'_>,
    ) -> Option<Result<(Workspace, DryRun), String>>;

    /// The cassette's findings in `check`: what reading it finds (the same findings the dry-run
    /// reports for it) and, with `replays`, what replaying it against its definitions finds.
    fn lint(&self, workspace: &Workspace, file: &SourceFile, replays: bool, out: &mut Vec<Diagnostic>);

    /// [`Engine::lint`] for every cassette of this engine in a check, at once: an engine that
    /// looks something up across the workspace for each cassette does it once here.
    fn lint_all(&self, workspace: &Workspace, files: &[&SourceFile], replays: bool, out: &mut Vec<Diagnostic>) {
        for file in files {
            self.lint(workspace, file, replays, out);
        }
    }

    /// Replays cassette `file` against the definitions it belongs to, as `check` replays it
    /// (for `check` and for a run over every cassette of a workspace); `Err` with the findings
    /// that say why it cannot be replayed (it does not read, or belongs to nothing).
    fn replay(&self, workspace: &Workspace, file: &SourceFile, options: Options) -> Result<DryRun, Vec<Diagnostic>>;

    /// The `cassette/` codes only a replay finds (the language server's first pass after a
    /// keystroke leaves them out, and keeps the ones it already has).
    fn replay_codes(&self) -> &'static [&'static str];

    /// The code lenses on definition file `file`: one per cassette that replays it.
    fn lenses(&self, workspace: &Workspace, file: &SourceFile) -> Vec<Lens>;

    /// The cassette a dry-run of `file` takes when none is named, if it is in `workspace`.
    fn conventional_cassette(&self, workspace: &Workspace, file: &SourceFile) -> Option<FileId>;

    /// The cassettes whose replay reads one of `files`, files of this engine's definitions
    /// that have no lens of their own (a climpt agent's prompt or schema: its agent's
    /// cassettes; a Last Light prompt or skill: the cassettes of the workflows naming it), for
    /// a run over the cassettes a change can break. All at once, so that a hook naming every
    /// file of a repository looks each definition up once. Default: none.
    fn replays_reading(&self, workspace: &Workspace, files: &[&SourceFile]) -> Vec<FileId> {
        let _ = (workspace, files);
        Vec::new()
    }

    /// A writer of the timeline lines of this engine's events.
    fn timeline(&self) -> Box<dyn Timeline>;

    /// The editor features inside this engine's cassettes.
    fn editor(&self) -> &'static editor::Hooks;

    /// What `runs` (this engine's replays of the workspace's cassettes) exercised of every
    /// definition of `workspace` this engine replays, those no run reached included; `None`
    /// for an engine that does not report coverage.
    fn coverage(&self, workspace: &Workspace, runs: &[&DryRun]) -> Option<Vec<Part>> {
        let _ = (workspace, runs);
        None
    }

    /// The render-only previews of definition file `file` (no cassette: what a step would be
    /// sent, from a context given by hand), each on the line of what it previews.
    fn previews(&self, _workspace: &Workspace, _file: &SourceFile) -> Vec<Preview> {
        Vec::new()
    }

    /// Renders preview `target` of `file` from `vars` (`None`: not this engine's file; `Err`:
    /// why there is nothing to preview).
    fn preview(
        &self,
        _workspace: &Workspace,
        _file: &SourceFile,
        _target: &str,
        _vars: &[(String, serde_json::Value)],
    ) -> Option<Result<Rendering, String>> {
        None
    }
}

/// A render-only preview a definition file offers: where its lens sits, its title and what it
/// renders (a phase's name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preview {
    pub span: Span,
    pub title: String,
    pub target: String,
}

/// What a preview rendered: the text as a person reads it (substitutions marked), exactly as
/// it would be sent, and as JSON.
#[derive(Clone, Debug)]
pub struct Rendering {
    pub title: String,
    pub marked: String,
    pub exact: String,
    pub json: serde_json::Value,
}

/// What a dry-run from paths needs besides the paths: the options, the configs read so far and
/// the unsaved editor texts.
pub struct Request<'a> {
    pub options: Options,
    pub configs: &'a mut ConfigCache,
    pub overlay: &'a HashMap<PathBuf, String>,
    /// The part of the run to highlight, when the engine cannot tell it from the path (a step
    /// of a climpt registry).
    pub focus: Option<String>,
}

/// A code lens: where it sits, its title and the cassette its command replays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lens {
    pub span: Span,
    pub title: String,
    /// The cassette it replays.
    pub cassette: FileId,
    /// The part of the run it is about, when the file alone does not say (a registry's step):
    /// the command's third argument.
    pub focus: Option<String>,
}

/// Writes an engine's events as timeline lines. The core writes the header, the final
/// `Result:` line and the findings; the engine writes everything in between.
pub trait Timeline {
    /// The lines of `event` (nothing for an event the timeline does not show).
    fn line(&mut self, event: &Event, out: &mut String);

    /// Writes what is still pending (a line being assembled) before the run's result.
    fn flush(&mut self, out: &mut String);

    /// What stopped a run that ended with an authoring error, when its events say so (`None`:
    /// the summary's `refused` says why the run did not start).
    fn stopped(&self, events: &[Event]) -> Option<String>;

    /// Shows what is collapsed by default (a prompt's lines past its first) in full.
    fn show_in_full(&mut self) {}
}
