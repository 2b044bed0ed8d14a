//! Walking the paths given on the command line into a [`Workspace`] (the only file-system
//! reader): which configs govern which directories (`configs`), where a run may read
//! (`bounds`), walking (`walk`), the list of files found (`pending`), reading and placing them
//! (`read`), what they lead to (`context`), the baselines configs name (`baselines`), scopes
//! for editors (`scope`) and paths (`paths`).
//! The names callers use are re-exported here, so they stay `workspace::discover::…`.

mod baselines;
mod bounds;
mod configs;
mod context;
mod exclude;
mod paths;
mod pending;
mod read;
mod scope;
#[cfg(test)]
mod tests;
mod walk;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::config::ConfigError;
use crate::util::FastMap;
use crate::workspace::{FileKind, Workspace};

use bounds::Bounds;
pub use configs::{ConfigCache, is_config_name};
use context::{atomic_context, declared_schemas, workflow_references};
pub use exclude::{ConfigStore, ExcludeOptions};
use paths::Roots;
pub use paths::{absolute, normalize};
use pending::{Found, Pending, Role};
pub use read::read_as;
use read::{add_broken_configs, add_file, read_pending};
use scope::{breakdown_agent_dir, find_agent_dir, find_sm_dir_with_open, find_workflows_dir};
pub use scope::{scope_of, scope_of_with_open, scopes, scopes_with_open};
use walk::{could_be_ours, walk_files, walk_files_of, walk_files_parallel};

/// Builds the workspace for `paths`: directories are walked honouring `.gitignore`
/// (hidden directories such as `.agent/` are included, `.git` is not); files named explicitly
/// are always read.
pub fn discover(paths: &[PathBuf], configs: &mut ConfigCache) -> Result<Workspace, ConfigError> {
    discover_with_overlay(paths, configs, &HashMap::new())
}

/// [`discover`], where `overlay` holds texts that replace what is on disk (documents open in an
/// editor, saved or not). Overlay files under a walked root are included even if not on disk.
pub fn discover_with_overlay(
    paths: &[PathBuf],
    configs: &mut ConfigCache,
    overlay: &HashMap<PathBuf, String>,
) -> Result<Workspace, ConfigError> {
    discover_shown_from(paths, configs, overlay, &[])
}

/// [`discover_with_overlay`] for an editor with workspace folders `roots`: each file is shown
/// (in messages, `file.display`) relative to the folder holding it, as the CLI shows paths
/// relative to its current directory.
pub fn discover_for_editor(
    paths: &[PathBuf],
    configs: &mut ConfigCache,
    overlay: &HashMap<PathBuf, String>,
    roots: &[PathBuf],
) -> Result<Workspace, ConfigError> {
    discover_shown_from(paths, configs, overlay, roots)
}

fn discover_shown_from(
    paths: &[PathBuf],
    configs: &mut ConfigCache,
    overlay: &HashMap<PathBuf, String>,
    shown_from: &[PathBuf],
) -> Result<Workspace, ConfigError> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let store = configs.store().clone();
    // A named path is checked whatever the excludes say, unless `force-exclude` (the editor:
    // always, so that it shows what `check` of its folders shows).
    let named: Vec<PathBuf> =
        paths.iter().filter(|path| !excluded_as_named(&store, path, shown_from)).cloned().collect();
    let paths = named.as_slice();
    // Normalized, as file paths are: a root given as `..` must hold the files under it.
    let roots: Vec<PathBuf> =
        paths.iter().map(|p| normalize(&if p.is_absolute() { p.clone() } else { cwd.join(p) })).collect();
    let mut pending = Pending::new(cwd, shown_from.to_vec(), roots.clone());
    // Several directories (an editor's batch of machine directories): one walker lists them all.
    let mut batch = if paths.len() > 1 { walk_files_of(paths, &store) } else { HashMap::new() };
    for root in paths {
        // The config that governs the root itself, even when nothing below it is ours.
        let absolute = if root.is_absolute() { root.clone() } else { pending.cwd.join(root) };
        configs.governing(if root.is_file() { absolute.parent().unwrap_or(&absolute) } else { &absolute })?;
        if root.is_file() {
            pending.push(root, configs, Role::Explicit)?;
        } else if paths.len() == 1 {
            // One directory, maybe a whole repository: read on all cores.
            pending.walk_files(walk_files_parallel(root, &store), root, configs, Role::Walked)?;
        } else {
            let files = batch.remove(root).unwrap_or_else(|| walk_files(root, &store));
            pending.walk_files(files, root, configs, Role::Walked)?;
        }
    }
    let mut unsaved: Vec<&PathBuf> = overlay
        .keys()
        .filter(|path| !path.is_file() && could_be_ours(path) && paths.iter().any(|root| path.starts_with(root)))
        .collect();
    unsaved.sort();
    for path in unsaved {
        pending.push(path, configs, Role::Walked)?;
    }
    // A file checked on its own still belongs to its state machine: read the rest of the
    // machine as context so cross-file rules see the whole graph.
    // Each machine once, however many of its files were named (a pre-commit run names many).
    let mut sm_dirs = HashMap::new();
    let mut walked = HashSet::new();
    for root in paths {
        let absolute = if root.is_absolute() { root.clone() } else { pending.cwd.join(root) };
        let start = if root.is_file() { absolute.parent().map(Path::to_path_buf) } else { Some(absolute) };
        let Some(start) = start else { continue };
        let unsaved = |file: &Path| overlay.contains_key(file);
        let sm_dir = sm_dirs.entry(start).or_insert_with_key(|start| find_sm_dir_with_open(start, &unsaved)).clone();
        // A machine directory that was walked as a root (or inside one) has all its files already.
        let loose = sm_dir.is_none();
        if let Some(sm_dir) = sm_dir
            && walked.insert(sm_dir.clone())
            && !pending.covers(&normalize(&sm_dir))
        {
            pending.walk(&sm_dir, configs, Role::Context)?;
        }
        // A cassette of a loose stage replays the stage beside it: read the directory's
        // markdown (not below it) so the cassette named alone finds its stage.
        let is_cassette = root.file_name().and_then(|n| n.to_str()).is_some_and(crate::workspace::is_cassette_name);
        if loose && is_cassette && root.is_file() {
            let dir = if root.is_absolute() { root.clone() } else { pending.cwd.join(root) };
            let dir = dir.parent().map(Path::to_path_buf).unwrap_or_default();
            if walked.insert(dir.clone()) {
                let mut stages: Vec<PathBuf> = std::fs::read_dir(&dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "md"))
                    .collect();
                stages.sort();
                for stage in stages {
                    pending.push(&stage, configs, Role::Context)?;
                }
            }
        }
    }
    // A climpt agent is its directory: registry, agent.json, schemas, prompts, and the
    // breakdown config beside it. Whatever part was named, read the whole agent.
    let mut agent_dirs: Vec<PathBuf> = pending
        .files
        .iter()
        .filter(|f| f.path.0.file_name().is_some_and(|n| n == "steps_registry.json" || n == "agent.json"))
        .filter_map(|f| f.path.0.parent().map(Path::to_path_buf))
        .collect();
    agent_dirs.extend(roots.iter().filter_map(|root| find_agent_dir(root)));
    // A breakdown config named alone sits outside its agent's directory.
    let agent_of_config =
        |root: &PathBuf| breakdown_agent_dir(root).filter(|dir| find_agent_dir(dir).as_ref() == Some(dir));
    agent_dirs.extend(roots.iter().filter_map(agent_of_config));
    agent_dirs.sort();
    agent_dirs.dedup();
    let under_roots = Roots::new(&roots);
    for dir in &agent_dirs {
        pending.walk_agent(dir, &under_roots, configs, overlay)?;
    }
    // A Last Light workflow directory is one unit: crons name workflows, and prompts are read
    // through the workflows that use them. Whatever part was named, read the whole directory.
    let mut walked = HashSet::new();
    for root in &roots {
        if let Some(dir) = find_workflows_dir(root)
            && walked.insert(dir.clone())
        {
            pending.walk(&dir, configs, Role::Context)?;
        }
    }
    let mut bounds = Bounds::new(&roots);
    bounds.cap(configs.ceiling());
    // A project's config names its layout (`[dry-run] cassettes`): its directory is the project's.
    for root in &roots {
        let dir = if root.is_file() { root.parent().unwrap_or(root) } else { root };
        let config = configs.for_dir(dir).ok().and_then(|c| c.path.as_ref()?.parent().map(Path::to_path_buf));
        bounds.extend(config);
    }
    let unsaved = |file: &Path| overlay.contains_key(file);
    bounds.extend(
        roots
            .iter()
            .filter_map(|root| find_sm_dir_with_open(if root.is_file() { root.parent()? } else { root }, &unsaved)),
    );
    bounds.extend(agent_dirs);
    // Skills sit beside `workflows/`, so a workflow directory's parent is read too.
    bounds.extend(roots.iter().filter_map(|root| Some(find_workflows_dir(root)?.parent()?.to_path_buf())));
    let mut workspace = Workspace::new();
    // Markdown the walk read but could not place: a Last Light prompt or skill is known only
    // once the workflows naming it are read, and is then taken from here, not read again.
    let mut unclaimed = FastMap::default();
    read_pending(&mut workspace, pending.take(), overlay, configs, &bounds, &mut unclaimed);
    // What atomic workflows depend on, and the workflows of a base the walk skipped.
    let found = atomic_context(&workspace, &roots, &under_roots, &bounds);
    // Exactly these files may be read, not their directories (the project may be a home).
    bounds.extend(found.context.iter().chain(&found.importers).cloned());
    let mut atomic = pending.empty();
    for path in &found.workflows {
        atomic.push_as(path, configs, Role::Walked, None, Found::Unlisted)?;
    }
    for path in &found.context {
        atomic.push_as(path, configs, Role::Context, Some(FileKind::AtomicContext), Found::Named)?;
    }
    for path in &found.importers {
        atomic.push_as(path, configs, Role::Context, None, Found::Unlisted)?;
    }
    read_pending(&mut workspace, atomic.take(), overlay, configs, &bounds, &mut unclaimed);
    // The prompts and skills that workflows name are read as what they are, whatever their name.
    let mut referenced = pending.empty();
    let named = workflow_references(&workspace, overlay);
    workspace.reserve(named.len());
    for (path, kind) in named {
        let role = if under_roots.holds(&path) { Role::Walked } else { Role::Context };
        // Read by the walk already: placed now, as what the workflow says it is.
        if let Some(walked) = unclaimed.remove(&path) {
            add_file(&mut workspace, configs, path, walked, kind, role);
            continue;
        }
        referenced.push_as(&path, configs, role, Some(kind), Found::Named)?;
    }
    read_pending(&mut workspace, referenced.take(), overlay, configs, &bounds, &mut unclaimed);
    // A registry's or agent.json's `$schema` that names a local file is read too (never fetched).
    // A fresh list: a schema the walk met and classified as nothing must still be read now.
    let mut schema_refs = pending.empty();
    for target in declared_schemas(&workspace) {
        schema_refs.push_as(&target, configs, Role::Context, Some(FileKind::JsonSchema), Found::Named)?;
    }
    // Cassettes kept in `[dry-run] cassettes` directories belong to the stages and workflows
    // that use them.
    let mut cassette_dirs: Vec<PathBuf> = workspace
        .files()
        .iter()
        .filter(|f| matches!(f.kind, FileKind::Stage | FileKind::Workflow))
        .flat_map(|f| f.config.cassette_dirs.iter().cloned())
        .collect();
    cassette_dirs.sort();
    cassette_dirs.dedup();
    for dir in cassette_dirs {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let is_cassette = path.file_name().and_then(|n| n.to_str()).is_some_and(crate::workspace::is_cassette_name);
            if is_cassette && workspace.file_at(&normalize(&path)).is_none() {
                schema_refs.push_as(&path, configs, Role::Context, Some(FileKind::Cassette), Found::Named)?;
            }
        }
    }
    read_pending(&mut workspace, schema_refs.take(), overlay, configs, &bounds, &mut unclaimed);
    add_broken_configs(&mut workspace, configs, &roots, shown_from.is_empty(), &schema_refs, overlay);
    // The climpt release each agent runs on starts from what its Deno project pins.
    let read = |path: &Path| overlay.get(path).cloned().or_else(|| crate::source::read::read_text(path).ok());
    let pins = crate::workspace::climpt::read_pins(&workspace, &|dir: &Path| bounds.holds_dir(dir), &read);
    workspace.set_climpt_pins(pins);
    baselines::add_baselines(&mut workspace, configs, overlay, &schema_refs, &bounds, &roots);
    // Every stage's frontmatter and YAML parse, on all cores; the rules read it from the file.
    crate::util::par_map(workspace.files(), |file| {
        if file.kind == FileKind::Stage {
            file.stage_parts.get_or_init(|| Box::new(crate::workspace::StageParts::parse(&file.text)));
        }
    });
    Ok(workspace)
}

/// Whether `path`, named on the command line (or an editor's scope), is left out: with
/// `force-exclude`, as a walk from the current directory would leave it out; in the editor
/// (`folders`), as a walk of the folder holding it would.
fn excluded_as_named(store: &ConfigStore, path: &Path, folders: &[PathBuf]) -> bool {
    if folders.is_empty() {
        return store.force_excludes(path);
    }
    let path = absolute(path);
    match folders.iter().filter(|f| path.starts_with(f)).max_by_key(|f| f.as_os_str().len()) {
        Some(folder) => path != *folder && store.excludes_below(&path, folder),
        None => false,
    }
}
