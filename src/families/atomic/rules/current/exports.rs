//! What discovery does with a `@bastani/workflows` file (`extension/discovery.ts`,
//! `workflow-module-loader.ts`; `docs/workflows.md`, *Workflow Locations* and *Package Setup*):
//! it imports every top-level `.atomic/workflows/*.ts` and every file a package ships, and
//! shape-checks each runtime export; it never looks in a subdirectory of `.atomic/workflows`,
//! nor at v0.5's `<name>/<agent>/index.ts`. Definitions built by hand are refused.

use crate::diagnostic::Diagnostic;
use crate::families::atomic::model::current::Current;
use crate::families::atomic::project::Project;
use crate::families::atomic::{HandBuiltDefinition, MissingDefaultExport, NonWorkflowExport, NotDiscovered};
use crate::source::Span;
use crate::workspace::{SourceFile, atomic};

pub(super) fn check(file: &SourceFile, current: &Current, project: &Project, out: &mut Vec<Diagnostic>) {
    for at in &current.hand_built {
        out.push(
            Diagnostic::new(
                HandBuiltDefinition,
                file.id,
                *at,
                "a workflow definition built by hand (`__piWorkflow: true`): discovery rejects it (\"hand-rolled __piWorkflow objects are not supported\") and so does `ctx.workflow(…)`",
            )
            .with_help("make the definition with `workflow({ … })`, which brands it"),
        );
    }
    let flat = atomic::flat(&file.path).is_some();
    let package = project.package_of(&file.path);
    // The SDK's own workflows are bundled with it, not discovered.
    if current.own_sdk {
        return;
    }
    let configured = project.configured(&file.path);
    let discovered = flat || package.is_some() || configured.is_some();
    let defined = current.exports.iter().any(|e| e.definition);
    if discovered {
        if !defined && current.hand_built.is_empty() {
            let at = current
                .definitions
                .first()
                .map_or(Span::new(0, file.text.find('\n').unwrap_or(file.text.len())), |d| d.callee);
            let place = if flat {
                "a top-level file of `.atomic/workflows/`"
            } else {
                "a file the package ships as a workflow"
            };
            let mut d = Diagnostic::new(
                MissingDefaultExport,
                file.id,
                at,
                format!("{place} is imported as a workflow module, but it exports no workflow definition: discovery lists it as invalid (INVALID_DEFINITION for each export, or none found)"),
            )
            .with_help("`export default workflow({ … })`, or move a support module into a subdirectory such as `lib/`");
            if let Some((_, manifest)) = package {
                d = d.with_related(manifest.file, Span::empty(0), "the package's manifest");
            }
            out.push(d);
        }
        // Type-only exports are erased; every other export is shape-checked.
        if defined {
            for export in current.exports.iter().filter(|e| !e.definition) {
                out.push(
                    Diagnostic::new(
                        NonWorkflowExport,
                        file.id,
                        export.span,
                        format!("discovery shape-checks every export of a workflow file and rejects `{}`, which is no workflow definition (INVALID_DEFINITION, \"export is not an object\" or \"missing … __piWorkflow\"); the workflow itself still loads", export.name),
                    )
                    .with_help("keep helpers, widgets and constants in a subdirectory (`.atomic/workflows/lib/`) and import them"),
                );
            }
        }
        return;
    }
    if !defined || project.is_imported(&file.path) {
        return;
    }
    // An exported definition no discovery finds and no workflow imports.
    let at = current.exports.iter().find(|e| e.definition).map_or(Span::empty(0), |e| e.span);
    let at = Span::new(at.start, at.end.min(at.start + "export default".len()));
    // Outside `.atomic/workflows/`, a workflow may be registered where stagelint cannot see
    // (`atomic -e <dir>`, the global config, settings `packages`): info, not a warning.
    let elsewhere = atomic::layout(&file.path).is_none() && atomic::base(&file.path).is_none();
    let (message, help) = match atomic::layout(&file.path) {
        Some((name, _)) => (
            "this file is in v0.5's `<name>/<agent>/index.ts` layout, which atomic 0.8 and later never scan: it is a support module in a subdirectory, and no workflow imports it; the workflow never runs".to_string(),
            format!("move it to `.atomic/workflows/{name}.ts` (one file per workflow; the agent is no longer part of the path)"),
        ),
        None if atomic::base(&file.path).is_some() => (
            "this workflow is in a subdirectory of `.atomic/workflows/`, which discovery does not scan (only top-level files are workflows), and no workflow imports it; it never runs".to_string(),
            "move it to `.atomic/workflows/<name>.ts`, or import it from a workflow and run it with `ctx.workflow(…)`".to_string(),
        ),
        None => (
            "this file exports a workflow, but atomic discovers only `.atomic/workflows/*.ts`, the files a package's `atomic.workflows` names and the paths `.atomic/extensions/workflow/config.json` registers, and no workflow imports it; unless it is registered elsewhere (`atomic -e`, a global config), it never runs".to_string(),
            "move it to `.atomic/workflows/<name>.ts`, list it in `package.json` `atomic.workflows`, or register it in `.atomic/extensions/workflow/config.json`".to_string(),
        ),
    };
    let d = Diagnostic::new(NotDiscovered, file.id, at, message).with_help(help);
    out.push(if elsewhere { d.with_severity(crate::diagnostic::Severity::Info) } else { d });
}
