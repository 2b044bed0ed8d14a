//! The rules of `@bastani/workflows` (0.8 and 0.9), over `model::current`: the 0.8 builder and
//! the migration off it and its imports (`builder`), the `workflow({...})` spec (`definition`),
//! exports and discovery (`exports`), what `run` returns and reads (`outputs`), the options of
//! the `ctx` primitives (`options`), stage names and handles (`stages`), what is done with task
//! results (`results`) and composition (`composition`). Each rule's doc cites the SDK source or
//! the section of `docs/workflows.md` (0.9.15) that makes its finding a defect.

mod builder;
mod composition;
mod definition;
mod exports;
mod options;
mod outputs;
mod results;
mod stages;

use crate::diagnostic::Diagnostic;
use crate::families::atomic::dialect::Judged;
use crate::families::atomic::model::current::Current;
use crate::families::atomic::project::Project;
use crate::workspace::SourceFile;

pub(super) fn check(
    file: &SourceFile,
    current: &Current,
    judged: &Judged,
    project: &Project,
    out: &mut Vec<Diagnostic>,
) {
    builder::check(file, current, judged, out);
    definition::check(file, current, judged, out);
    exports::check(file, current, project, out);
    outputs::check(file, current, judged, out);
    options::check(file, current, out);
    stages::check(file, current, out);
    results::check(file, current, out);
    composition::check(file, current, out);
}

/// The pin a finding rests on, as a related location.
fn with_pin(d: Diagnostic, judged: &Judged) -> Diagnostic {
    match judged.sdk.as_ref().and_then(|s| s.at) {
        Some((id, at)) => d.with_related(id, at, "the pinned version"),
        None => d,
    }
}

/// Where the version a finding depends on comes from, for messages.
fn pins(judged: &Judged) -> String {
    match &judged.sdk {
        Some(sdk) => format!("this project pins {}", sdk.source()),
        None => "no atomic version is pinned here (no `package.json` dependency, no `[atomic] sdk-version`), and a new install gets the newest".to_string(),
    }
}
