//! The embedded runtime: `stagelint dry-run`, the editor's dry-run lens and the `cassette/`
//! findings, for every system that has a dry-run engine.
//!
//! A runtime-neutral core, and one folder per system's engine (`stages/`: stud-cli stages and
//! state machines; `climpt/`: climpt agents; `lastlight/`: Last Light workflows). The core's
//! lower half is what engines build on: the seam ([`engine`]), a
//! run's outcome and its ending ([`run`]), the event stream ([`events`]), cassette reading
//! helpers ([`read`]) and terminal-safe text ([`text`]). Its upper half dispatches to the
//! engines: [`ENGINES`], paths to a run ([`target`]), the timeline frame ([`report`]), the
//! lenses ([`lenses`]) and the `cassette/` family ([`lint`]). Engines read definitions from the
//! [`Workspace`] (already in memory) and answer every tool and model call from the cassette: no
//! network, no shell, no file system.

pub mod all;
pub mod climpt;
pub mod coverage;
pub mod engine;
pub mod events;
pub mod lastlight;
pub(crate) mod lint;
pub mod read;
#[cfg(feature = "record")]
pub mod record;
pub mod report;
pub mod run;
pub mod stages;
mod target;
pub mod text;
pub mod wire;

// The cassette format sits below the runtime (`crate::cassette`); these paths stay for callers.
pub use crate::cassette::{self, digest, provider};
// The stage engine's public items, at the paths callers have always used.
pub use stages::{
    MACHINE_CASSETTES, cassette_in_workspace, cassette_path_for, import, machine, messages, read_cassette, recording,
    refuse_duplicate, stage, stage_with, turns,
};

pub use engine::{Engine, Lens, Preview, Rendering};
pub use read::{cassettes, is_json};
pub use run::{DryRun, Options, error_stream, events_version};
pub use target::{dry_run_focused, dry_run_path};

use crate::diagnostic::FileId;
use crate::workspace::{SourceFile, Workspace};

/// Every dry-run engine. A cassette belongs to the first whose keys it has, and a path to the
/// first that claims it; the last engine takes every cassette and path the others do not.
pub static ENGINES: &[&dyn Engine] = &[&climpt::Climpt, &lastlight::Lastlight, &stages::Stages];

/// The engine whose cassette `file` is.
pub fn engine_of(file: &SourceFile) -> &'static dyn Engine {
    let last = ENGINES[ENGINES.len() - 1];
    ENGINES.iter().copied().find(|engine| read::has_top_key(file, engine.subject_keys())).unwrap_or(last)
}

/// The engine called `name` (the last engine, for a name no engine has).
pub fn engine_named(name: &str) -> &'static dyn Engine {
    let last = ENGINES[ENGINES.len() - 1];
    ENGINES.iter().copied().find(|engine| engine.name() == name).unwrap_or(last)
}

/// The code lenses of definition file `file`, from every engine.
pub fn lenses(workspace: &Workspace, file: FileId) -> Vec<Lens> {
    let source = workspace.file(file);
    ENGINES.iter().flat_map(|engine| engine.lenses(workspace, source)).collect()
}

/// The cassette a dry-run of `file` takes when none is named, if it is in `workspace`.
pub fn conventional_cassette(workspace: &Workspace, file: FileId) -> Option<FileId> {
    let source = workspace.file(file);
    ENGINES.iter().find_map(|engine| engine.conventional_cassette(workspace, source))
}

/// The render-only previews definition file `file` offers, from every engine.
pub fn previews(workspace: &Workspace, file: FileId) -> Vec<Preview> {
    let source = workspace.file(file);
    ENGINES.iter().flat_map(|engine| engine.previews(workspace, source)).collect()
}

/// Renders preview `target` of `file` from `vars`: `Err` says why there is nothing to render.
pub fn preview(
    workspace: &Workspace,
    file: FileId,
    target: &str,
    vars: &[(String, serde_json::Value)],
) -> Result<Rendering, String> {
    let source = workspace.file(file);
    ENGINES
        .iter()
        .find_map(|engine| engine.preview(workspace, source, target, vars))
        .unwrap_or_else(|| Err(format!("{}: no engine previews this file", source.display)))
}

/// A `--var` value of a preview: JSON when it parses as JSON (`false`, `3`, `["a"]`,
/// `"text"`), else the text itself.
pub fn var_value(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_string()))
}
