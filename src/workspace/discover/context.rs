//! What the files read so far lead to: the prompts and skills workflows name, atomic
//! workflows' context, and local `$schema` files.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::util::FastMap;
use crate::workspace::discover::bounds::Bounds;
use crate::workspace::discover::paths::{Roots, normalize};
use crate::workspace::{FileKind, Workspace};

/// The existing prompt and skill files that Last Light workflows name and the walk did not read
/// (on disk, or only in the editor's `overlay`). Workflows are parsed here, on all cores; the
/// family's rules read the same parse.
pub(super) fn workflow_references(
    workspace: &Workspace,
    overlay: &HashMap<PathBuf, String>,
) -> Vec<(PathBuf, FileKind)> {
    use crate::workspace::lastlight as model;
    // Most were met by the walk already.
    let exists = |path: &Path| workspace.exists(path) || overlay.contains_key(path) || path.is_file();
    let workflows: Vec<&crate::workspace::SourceFile> =
        workspace.files().iter().filter(|f| f.kind == FileKind::Workflow).collect();
    let named = crate::util::par_map(&workflows, |file| {
        let Some(root) = &file.document().root else { return (Vec::new(), Vec::new()) };
        let base = model::prompt_base(&file.path);
        // A prompt is often named by several phases (the build prompt is also the fix prompt).
        let mut texts: Vec<&str> = model::prompt_references(root).into_iter().map(|r| r.text).collect();
        texts.sort_unstable();
        texts.dedup();
        let prompts = texts
            .into_iter()
            .filter_map(|text| model::resolve_prompt(base, text).ok())
            .filter(|path| workspace.file_at(path).is_none() && exists(path))
            .collect::<Vec<_>>();
        (prompts, model::skill_references(root).into_iter().map(|s| s.text).collect::<Vec<_>>())
    });
    let mut out = Vec::new();
    // Every workflow of a directory names the same few skills: each is looked up once.
    let mut skills = HashSet::new();
    for (file, (prompts, names)) in workflows.iter().zip(named) {
        out.extend(prompts.into_iter().map(|path| (path, FileKind::WorkflowPrompt)));
        let Some(dir) = file.path.parent() else { continue };
        skills.extend(names.into_iter().map(|name| (dir, name)));
    }
    for (dir, name) in skills {
        if let Some(path) = model::skill_candidates(dir, name).find(|p| exists(p))
            && workspace.file_at(&path).is_none()
        {
            out.push((path, FileKind::Skill));
        }
    }
    out.sort_by(|a, b| crate::util::path_order(&a.0, &b.0));
    // Normalized paths: equal exactly when their bytes are.
    out.dedup_by(|a, b| a.0.as_os_str() == b.0.as_os_str());
    out
}

/// What atomic workflows need besides themselves (upstream `runtime/discovery.ts`).
#[derive(Default)]
pub(super) struct AtomicFound {
    /// Workflows of a base under a checked root that the walk skipped (a `.gitignore` above
    /// them): upstream lists the base itself, so they are checked too.
    pub(super) workflows: Vec<PathBuf>,
    /// Each local base's `.gitignore`, the `package.json`s from a workflow up to its project,
    /// and the project's agent files; never a symlink.
    pub(super) context: Vec<PathBuf>,
    /// The top-level files of a base no root holds (a file of it was named): the workflows that
    /// may import the named one, read so that it is known to be imported; not reported.
    pub(super) importers: Vec<PathBuf>,
}

/// Gathers [`AtomicFound`] for the atomic workflows read so far, and the bases at or under
/// `roots`. Each directory is looked at once, and a base is listed, not walked.
pub(super) fn atomic_context(
    workspace: &Workspace,
    roots: &[PathBuf],
    under_roots: &Roots,
    bounds: &Bounds,
) -> AtomicFound {
    use crate::workspace::atomic;
    let read: Vec<&Path> =
        workspace.files().iter().filter(|f| f.kind == FileKind::AtomicWorkflow).map(|f| f.path.as_path()).collect();
    let mut bases = std::collections::BTreeSet::new();
    for root in roots.iter().filter(|r| r.is_dir()) {
        let local = root.join(".atomic").join("workflows");
        bases.extend(local.is_dir().then_some(local));
        bases.extend(atomic::base(&root.join("_")).map(|(base, _)| base.to_path_buf()));
    }
    bases.extend(read.iter().filter_map(|path| Some(atomic::base(path)?.0.to_path_buf())));
    let mut found = AtomicFound::default();
    let add = |path: PathBuf, found: &mut AtomicFound| {
        let link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
        if workspace.file_at(&path).is_none() && !link {
            found.context.push(path);
        }
    };
    for base in &bases {
        let builtin = atomic::base(&base.join("_")).is_some_and(|(_, builtin)| builtin);
        let ignore = base.join(".gitignore");
        if !builtin && ignore.is_file() {
            add(ignore, &mut found);
        }
        // Only a file below the top level needs them (a top-level file is discovered anyway):
        // an editor re-checking a top-level workflow on each keystroke reads nothing more.
        let nested = read.iter().any(|p| p.starts_with(base) && p.parent() != Some(base.as_path()));
        if !under_roots.holds(base) && !builtin && nested {
            let mut flat: Vec<PathBuf> = std::fs::read_dir(base)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "ts") && p.is_file())
                .filter(|p| workspace.file_at(p).is_none())
                .collect();
            flat.sort();
            found.importers.extend(flat);
        }
        // The workflow directories to list: all of a base under a root, else the ones roots are in.
        let names: Vec<PathBuf> = if under_roots.holds(base) {
            std::fs::read_dir(base).into_iter().flatten().flatten().map(|e| e.path()).collect()
        } else {
            let inside = roots.iter().filter_map(|r| r.strip_prefix(base).ok()?.components().next());
            inside.map(|c| base.join(c)).collect()
        };
        for name in names {
            for agent in atomic::AGENTS {
                let index = name.join(agent).join("index.ts");
                if workspace.file_at(&index).is_none() && under_roots.holds(&index) && index.is_file() {
                    found.workflows.push(index);
                }
            }
        }
    }
    found.workflows.sort();
    found.workflows.dedup();
    // Per directory: whether it holds `package.json`, and whether it is a repository root.
    let mut marks: FastMap<PathBuf, (bool, bool)> = FastMap::default();
    let mut packages = std::collections::BTreeSet::new();
    let mut projects = std::collections::BTreeSet::new();
    for path in read.iter().copied().chain(found.workflows.iter().map(PathBuf::as_path)) {
        // Under `.atomic/`, the directory above it; elsewhere the nearest directory holding
        // `package.json` or `.git`, within the bounds.
        let fixed = atomic::project_root(path);
        let mut project = path.parent().map(Path::to_path_buf);
        for dir in path.ancestors().skip(1) {
            if fixed.is_none() && !bounds.holds_dir(dir) {
                break;
            }
            let (package, git) = *marks
                .entry(dir.to_path_buf())
                .or_insert_with(|| (dir.join("package.json").is_file(), dir.join(".git").exists()));
            if package {
                packages.insert(dir.join("package.json"));
            }
            if fixed.map_or(package || git, |root| root == dir) {
                project = Some(dir.to_path_buf());
                break;
            }
        }
        projects.extend(project);
    }
    for package in packages {
        add(package, &mut found);
    }
    for project in &projects {
        for config in atomic::WORKFLOW_CONFIGS.map(|c| project.join(c)).into_iter().filter(|c| c.is_file()) {
            add(config, &mut found);
        }
        for (dir, skills) in atomic::AGENT_DIRS {
            let mut entries: Vec<PathBuf> =
                std::fs::read_dir(project.join(dir)).into_iter().flatten().flatten().map(|e| e.path()).collect();
            entries.sort();
            for entry in entries {
                let path = if skills { entry.join("SKILL.md") } else { entry };
                if path.is_file() && atomic::agent_file(&path).is_some() {
                    add(path, &mut found);
                }
            }
        }
    }
    found
}

/// Local files named by `$schema` in registries and agent.json files. Their parses are made
/// here, on all cores, and kept for the steps family's rules.
pub(super) fn declared_schemas(workspace: &Workspace) -> Vec<PathBuf> {
    let files: Vec<&crate::workspace::SourceFile> =
        workspace.files().iter().filter(|f| matches!(f.kind, FileKind::StepsRegistry | FileKind::AgentJson)).collect();
    let named = crate::util::par_map(&files, |file| {
        let target = file.document().root.as_ref()?.get("$schema")?.as_str()?;
        if target.contains("://") {
            return None;
        }
        let path = normalize(&file.path.parent()?.join(target));
        (path.is_file() && workspace.file_at(&path).is_none()).then_some(path)
    });
    let mut out: Vec<PathBuf> = named.into_iter().flatten().collect();
    out.sort();
    out.dedup();
    out
}
