//! The stage engine from paths: reads the definitions (through `workspace::discover`, the one
//! place that touches the file system) and picks a stage or a machine run.

use std::path::{Path, PathBuf};

use crate::runtime::engine::Request;
use crate::runtime::run::DryRun;
use crate::runtime::stages::{MACHINE_CASSETTES, cassette_path_for, lens, machine_for_stage, owners, read_cassette};
use crate::workspace::discover::{absolute, discover_with_overlay, read_as};
use crate::workspace::{FileKind, SM_FILE_NAMES, Workspace};

fn sm_dir(workspace: &Workspace, sm: crate::diagnostic::FileId) -> PathBuf {
    workspace.file(sm).path.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// Dry-runs `path` (a stage file, a state-machine file or its directory) against `cassette`
/// (default: by convention). The stage engine answers every path no other engine claims.
pub(super) fn dry_run_path(
    path: &Path,
    cassette: Option<&Path>,
    request: &mut Request<'_>,
) -> Result<(Workspace, DryRun), String> {
    let Request { options, configs, overlay, .. } = request;
    let (options, overlay) = (*options, *overlay);
    let path = absolute(path);
    let sm_file = if path.is_dir() {
        let found = SM_FILE_NAMES.iter().map(|name| path.join(name)).find(|p| p.is_file());
        Some(found.ok_or_else(|| format!("{}: no sm.yaml, sm.json or steps_registry.json here", path.display()))?)
    } else if path.file_name().and_then(|n| n.to_str()).is_some_and(|n| SM_FILE_NAMES.contains(&n)) {
        Some(path.clone())
    } else {
        None
    };
    let cassette = cassette.map(absolute);
    let mut roots = vec![sm_file.as_deref().and_then(Path::parent).map_or(path.clone(), Path::to_path_buf)];
    roots.extend(cassette.clone());
    let mut workspace = discover_with_overlay(&roots, configs, overlay).map_err(|e| e.to_string())?;
    if let Some(sm) = sm_file {
        let sm = workspace.file_at(&sm).ok_or_else(|| format!("{}: not read", sm.display()))?.id;
        // A machine cassette is passed, or sits beside the state machine as `sm.cassette.yaml`;
        // else each stage's own cassette is used.
        let cassette = match cassette {
            Some(c) => Some(read_as(&mut workspace, &c, FileKind::Cassette, configs, overlay)?),
            None => MACHINE_CASSETTES
                .iter()
                .find_map(|name| workspace.file_at(&sm_dir(&workspace, sm).join(name)).map(|f| f.id)),
        };
        let run = crate::runtime::stages::machine(&workspace, sm, cassette, options);
        return Ok((workspace, run));
    }
    // Discovery keeps only the files a family reads: a plain markdown file is not among them.
    let not_a_stage = || {
        format!(
            "{}: not a stage definition, a state machine or a climpt agent (`steps_registry.json` or its directory)",
            path.display()
        )
    };
    let stage = workspace.file_at(&path).ok_or_else(|| {
        if path.exists() { not_a_stage() } else { format!("{}: cannot read file: no such file", path.display()) }
    })?;
    if stage.kind != FileKind::Stage {
        return Err(not_a_stage());
    }
    // A duplicate id is refused before any cassette is looked at (which one is the stage's?).
    if let Some(refused) = crate::runtime::stages::refuse_duplicate(&workspace, stage.id, None) {
        return Ok((workspace, refused));
    }
    let doc = crate::families::sm::model::StageDoc::parse(stage);
    let id = doc.stage_id().map(|(id, _)| id.to_string()).unwrap_or_default();
    let cassette = match cassette.or_else(|| cassette_path_for(stage, &id)) {
        Some(c) => c,
        None => {
            // A stage of a machine whose machine cassette records it: the machine runs, focused
            // on the stage.
            return match lens::machine_cassettes_recording(&workspace, stage, &id) {
                Some((sm, found)) if !found.is_empty() => {
                    let run = machine_for_stage(&workspace, sm, found[0], &id, options);
                    Ok((workspace, run))
                }
                _ => Err(format!(
                    "{}: no cassette: pass --cassette, or add `{id}.cassette.yaml` beside the stage, or record the stage under `stages.{id}` in its state machine's `sm.cassette.yaml`",
                    path.display()
                )),
            };
        }
    };
    if workspace.file_at(&cassette).is_none() {
        roots.push(cassette.clone());
        workspace = discover_with_overlay(&roots, configs, overlay).map_err(|e| e.to_string())?;
    }
    let stage = workspace.file_at(&path).map(|f| f.id).ok_or("the stage vanished")?;
    // A cassette named explicitly is read whatever its name (JSON or YAML by its text).
    let cassette = read_as(&mut workspace, &cassette, FileKind::Cassette, configs, overlay)?;
    // A machine cassette for a stage of a machine: the machine runs, focused on the stage.
    if let Some(sm) = owners::owning_machine(&workspace, workspace.file(stage))
        && read_cassette(workspace.file(cassette)).0.is_machine()
    {
        let run = machine_for_stage(&workspace, sm, cassette, &id, options);
        return Ok((workspace, run));
    }
    let run = crate::runtime::stages::stage(&workspace, stage, cassette, options);
    Ok((workspace, run))
}
