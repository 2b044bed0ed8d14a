//! What the rules read around a workflow, gathered once per check from the files discovery
//! read as context: the agents each project defines, the atomic packages each `package.json`
//! depends on (the versions it pins) and the workflows it ships (`atomic.workflows`), and each
//! base's `.gitignore`.

use std::collections::HashMap;
use std::path::Path;

use crate::config::{SdkRange, SdkVersion};
use crate::diagnostic::FileId;
use crate::source::Span;
use crate::workspace::{FileKind, SourceFile, Workspace, atomic};

/// The agents `atomic init` installs for every provider (`.claude/agents/`, `.github/agents/`,
/// `.opencode/agents/`): known to every workflow.
pub(super) const INSTALLED: [&str; 12] = [
    "planner",
    "orchestrator",
    "reviewer",
    "debugger",
    "worker",
    "code-simplifier",
    "codebase-analyzer",
    "codebase-locator",
    "codebase-pattern-finder",
    "codebase-online-researcher",
    "codebase-research-analyzer",
    "codebase-research-locator",
];

/// The packages whose version says which atomic a project runs: the CLI and SDK of v0.5 to
/// 0.9 (0.9's `@bastani/workflows` types ship with it), 0.7's SDK package, and the workflow
/// package of 0.8 and 0.9, which is private upstream and always the CLI's version, but which
/// workflow packages declare.
pub(super) const PACKAGES: [&str; 3] = ["@bastani/atomic", "@bastani/workflows", "@bastani/atomic-sdk"];

/// An agent defined by a file of a project.
pub(super) struct Agent {
    pub name: String,
    /// The file defining it, when it was read, and where: its `name:` line, else its first line.
    pub file: Option<(FileId, Span)>,
    /// The provider that reads it (`workspace::atomic::agent_provider`); `None`: any.
    pub provider: Option<&'static str>,
}

/// Where the SDK version a workflow runs on comes from.
pub(super) struct Sdk {
    pub range: SdkRange,
    /// The dependency's value in `package.json`; `None` for `[atomic] sdk-version`.
    pub at: Option<(FileId, Span)>,
    /// The package named (one of [`PACKAGES`]); `None` for `[atomic] sdk-version`.
    pub package: Option<&'static str>,
}

impl Sdk {
    /// Where the version comes from, for messages: "`package.json` `@bastani/workflows ^0.9.3`".
    pub fn source(&self) -> String {
        match self.package {
            Some(package) => format!("`package.json` `{package} {}`", self.range.text),
            None => format!("`[atomic] sdk-version = \"{}\"`", self.range.text),
        }
    }
}

/// What a `package.json` says of an atomic package it is: the workflow entries of its
/// manifest (`atomic.workflows`, also `atomic.workflow` and the legacy `pi.*`), or that it is
/// one by keyword (`atomic-package`, `pi-package`) and ships the conventional directories.
#[derive(Debug)]
pub(super) struct Manifest {
    pub entries: Option<Vec<String>>,
    pub file: FileId,
}

/// A base's `.gitignore`, as upstream reads it.
pub(super) enum Ignore<'w> {
    File(&'w SourceFile),
    /// No file: upstream writes its template and reads that.
    Missing,
    /// It exists but was not read: nothing is known.
    Unknown,
}

/// An atomic package a `package.json` depends on: its name, range (when readable), and where.
type Dependency = (&'static str, Option<SdkRange>, FileId, Span);

pub(super) struct Project<'w> {
    workspace: &'w Workspace,
    /// By project root.
    agents: HashMap<&'w Path, Vec<Agent>>,
    /// By directory: the atomic dependencies a `package.json` there declares (each with its
    /// range, when readable), in [`PACKAGES`] order.
    packages: HashMap<&'w Path, Vec<Dependency>>,
    /// By directory: the package manifests that ship workflows.
    manifests: HashMap<&'w Path, Manifest>,
    /// The files a workflow imports by a relative path (`import child from "./child.js"`):
    /// a definition kept out of discovery's reach may be a child workflow of another.
    imported: std::collections::HashSet<std::path::PathBuf>,
    /// The files and directories a project's `.atomic/extensions/workflow/config.json`
    /// registers (`workflows.<name>.path`, relative to the project), with the config.
    configured: Vec<(std::path::PathBuf, FileId)>,
}

impl<'w> Project<'w> {
    pub fn new(workspace: &'w Workspace) -> Project<'w> {
        let mut agents: HashMap<&'w Path, Vec<Agent>> = HashMap::new();
        for file in workspace.files() {
            if let Some((root, stem)) = atomic::agent_file(&file.path) {
                let first = Span::new(0, file.text.find('\n').unwrap_or(file.text.len()));
                let named = frontmatter_name(&file.text);
                let at = named.map_or(first, |(_, line)| line);
                let list = agents.entry(root).or_default();
                let provider = atomic::agent_provider(&file.path);
                list.push(Agent { name: stem.to_string(), file: Some((file.id, at)), provider });
                if let Some((name, _)) = named.filter(|(n, _)| *n != stem) {
                    list.push(Agent { name: name.to_string(), file: Some((file.id, at)), provider });
                }
            }
        }
        for path in workspace.paths() {
            if workspace.file_at(path).is_none()
                && let Some((root, stem)) = atomic::agent_file(path)
            {
                let provider = atomic::agent_provider(path);
                agents.entry(root).or_default().push(Agent { name: stem.to_string(), file: None, provider });
            }
        }
        let mut packages = HashMap::new();
        let mut manifests = HashMap::new();
        let mut configured = Vec::new();
        for file in workspace.files().iter().filter(|f| f.kind == FileKind::AtomicContext) {
            if let Some(root) = atomic::WORKFLOW_CONFIGS
                .iter()
                .find(|c| file.path.ends_with(c))
                .and_then(|c| file.path.ancestors().nth(Path::new(c).components().count()))
                && let Some(config) = crate::source::json::parse(&file.text).root
                && let Some(entries) = config.get("workflows").and_then(|w| w.as_map())
            {
                for entry in entries {
                    if let Some(path) = entry.value.get("path").and_then(|p| p.as_str()) {
                        let target = if Path::new(path).is_absolute() {
                            Path::new(path).to_path_buf()
                        } else {
                            resolve_dir(root, path)
                        };
                        configured.push((target, file.id));
                    }
                }
                continue;
            }
            if file.path.file_name().is_some_and(|n| n == "package.json")
                && let Some(dir) = file.path.parent()
                && let Some(root) = crate::source::json::parse(&file.text).root
            {
                let found = dependencies(&root, file.id);
                if !found.is_empty() {
                    packages.insert(dir, found);
                }
                if let Some(entries) = manifest(&root) {
                    manifests.insert(dir, Manifest { entries, file: file.id });
                }
            }
        }
        let mut imported = std::collections::HashSet::new();
        for file in workspace.files().iter().filter(|f| f.kind == FileKind::AtomicWorkflow) {
            let Some(dir) = file.path.parent() else { continue };
            imported.extend(relative_imports(&file.text).filter_map(|module| resolve(dir, module)));
        }
        Project { workspace, agents, packages, manifests, imported, configured }
    }

    /// The config that registers `path` (itself or a directory above it), if one does.
    pub fn configured(&self, path: &Path) -> Option<FileId> {
        self.configured.iter().find(|(target, _)| path.starts_with(target)).map(|(_, id)| *id)
    }

    /// Whether another workflow imports `path` by a relative path.
    pub fn is_imported(&self, path: &Path) -> bool {
        self.imported.contains(path)
    }

    /// The package directory whose manifest ships `path` as a workflow (its `atomic.workflows`
    /// entries, or the conventional `workflows/` and `workflow/` directories), and that manifest.
    pub fn package_of(&self, path: &Path) -> Option<(&'w Path, &Manifest)> {
        path.ancestors().skip(1).find_map(|dir| {
            let manifest = self.manifests.get(dir)?;
            let rel = path.strip_prefix(dir).ok()?;
            shipped(rel, manifest.entries.as_deref()).then_some((*self.manifests.get_key_value(dir)?.0, manifest))
        })
    }

    /// The agents defined around `path`: in the agent directories of each directory above it.
    pub fn agents(&self, path: &Path) -> impl Iterator<Item = &Agent> {
        path.ancestors().filter_map(|dir| self.agents.get(dir)).flatten()
    }

    /// The SDK versions `file` may run on: `[atomic] sdk-version`, else the first of
    /// `packages` that the nearest `package.json` declaring one of them pins, when its range
    /// says (`^`/`~`/exact/`*`/…).
    pub fn sdk(&self, file: &SourceFile) -> Option<Sdk> {
        self.sdk_of(file, &["@bastani/atomic"])
    }

    /// [`Project::sdk`] from the first of `packages` declared.
    pub fn sdk_of(&self, file: &SourceFile, packages: &[&str]) -> Option<Sdk> {
        if let Some(version) = &file.config.atomic.sdk_version {
            return Some(Sdk { range: SdkRange::exact(version.clone()), at: None, package: None });
        }
        let found = file.path.ancestors().find_map(|dir| {
            let declared = self.packages.get(dir)?;
            packages.iter().find_map(|wanted| declared.iter().find(|d| d.0 == *wanted))
        })?;
        let (package, range, id, span) = found;
        Some(Sdk { range: range.clone()?, at: Some((*id, *span)), package: Some(package) })
    }

    /// The `.gitignore` of `base`.
    pub fn ignore(&self, base: &Path) -> Ignore<'w> {
        let path = base.join(".gitignore");
        match self.workspace.file_at(&path) {
            Some(file) => Ignore::File(file),
            None if self.workspace.exists(&path) => Ignore::Unknown,
            None => Ignore::Missing,
        }
    }

    /// Whether the SDK `file` runs on may be `version` or newer (also when nothing is known:
    /// a new project installs the newest).
    pub fn may_reach(&self, file: &SourceFile, version: &SdkVersion) -> bool {
        self.sdk(file).is_none_or(|sdk| sdk.range.may_reach(version))
    }
}

/// The atomic packages a `package.json` depends on, in [`PACKAGES`] order: each with its
/// range (`None` when its form names no version) and the span of its value.
fn dependencies(root: &crate::source::Node, id: FileId) -> Vec<Dependency> {
    let tables = ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"];
    // atomic's own packages run at their own version (its builtins, at each tag).
    let own = root.get("name").and_then(|n| n.as_str()).and_then(|name| PACKAGES.iter().find(|p| **p == name));
    if let (Some(package), Some(version)) = (own, root.get("version")) {
        let range = version.as_str().and_then(crate::config::SdkVersion::parse).map(SdkRange::exact);
        return vec![(package, range, id, version.span)];
    }
    PACKAGES
        .iter()
        .filter_map(|package| {
            let value = tables.iter().find_map(|table| root.get(table)?.get(package))?;
            Some((*package, value.as_str().and_then(SdkRange::parse_dependency), id, value.span))
        })
        .collect()
}

/// The workflow entries of a package manifest (`atomic.workflows`, `atomic.workflow`,
/// `pi.workflows`, `pi.workflow`: `Some(entries)`), or `Some(None)` for a package that says it
/// is one by keyword and so ships its conventional directories; `None` for any other package.
fn manifest(root: &crate::source::Node) -> Option<Option<Vec<String>>> {
    for key in ["atomic", "pi"] {
        let Some(table) = root.get(key) else { continue };
        for field in ["workflows", "workflow"] {
            if let Some(list) = table.get(field).and_then(|v| v.as_seq()) {
                return Some(Some(list.iter().filter_map(|v| v.as_str().map(str::to_string)).collect()));
            }
        }
        // A manifest without workflow entries: upstream falls back to the conventional
        // directories for workflows.
        return Some(None);
    }
    let keywords = root.get("keywords").and_then(|v| v.as_seq())?;
    keywords.iter().any(|k| matches!(k.as_str(), Some("atomic-package" | "pi-package"))).then_some(None)
}

/// Whether a package ships the file at `rel` (relative to the package root) as a workflow:
/// under an entry (a file, a directory walked recursively, or a glob; `!` excludes), else under
/// `workflows/` or `workflow/` (upstream `collectFiles`: names starting with `.` and
/// `node_modules` are skipped).
fn shipped(rel: &Path, entries: Option<&[String]>) -> bool {
    let hidden = rel.iter().any(|part| part.to_str().is_none_or(|p| p.starts_with('.') || p == "node_modules"));
    if hidden {
        return false;
    }
    let Some(entries) = entries else {
        return rel
            .components()
            .next()
            .is_some_and(|first| first.as_os_str() == "workflows" || first.as_os_str() == "workflow");
    };
    let clean = |entry: &str| entry.trim().trim_start_matches("./").trim_end_matches('/').to_string();
    let matches = |entry: &str| {
        let entry = clean(entry);
        if entry.contains(['*', '?', '[', '{']) {
            return globset::Glob::new(&entry).is_ok_and(|g| g.compile_matcher().is_match(rel));
        }
        entry.is_empty() || rel.starts_with(&entry)
    };
    let mut included = false;
    for entry in entries {
        if let Some(excluded) = entry.strip_prefix('!').or_else(|| entry.strip_prefix('-')) {
            if matches(excluded) {
                included = false;
            }
        } else if matches(entry.strip_prefix('+').unwrap_or(entry)) {
            included = true;
        }
    }
    included
}

/// The relative modules `text` imports (`from "./child.js"`, `from '../lib/x'`), read from its
/// lines as `workspace::atomic::sdk_module` reads them.
fn relative_imports(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter_map(|line| {
        let at = line.find("from ")?;
        let rest = line[at + 5..].trim_start();
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let module = rest[1..].split(quote).next()?;
        module.starts_with('.').then_some(module)
    })
}

/// `path` (relative, with `.` and `..`) resolved against `dir`, lexically.
fn resolve_dir(dir: &Path, path: &str) -> std::path::PathBuf {
    let mut out = dir.to_path_buf();
    for part in path.split(['/', '\\']) {
        match part {
            "." | "" => {}
            ".." => {
                out.pop();
            }
            part => out.push(part),
        }
    }
    out
}

/// The `.ts` file a relative module names from `dir`: `./child.js` is `child.ts` (TypeScript
/// imports name the emitted file), `./child` too.
fn resolve(dir: &Path, module: &str) -> Option<std::path::PathBuf> {
    let mut path = dir.to_path_buf();
    for part in module.split('/') {
        match part {
            "." | "" => {}
            ".." => {
                path.pop();
            }
            part => path.push(part),
        }
    }
    let name = path.file_name()?.to_str()?.to_string();
    let stem = name.strip_suffix(".js").or_else(|| name.strip_suffix(".ts")).unwrap_or(&name);
    Some(path.with_file_name(format!("{stem}.ts")))
}

/// `name:` in a markdown file's frontmatter (Claude Code knows an agent by it), and its line.
fn frontmatter_name(text: &str) -> Option<(&str, Span)> {
    let fm = crate::source::frontmatter::split(text)?;
    let yaml = text.get(fm.yaml.start..fm.yaml.end)?;
    let mut start = fm.yaml.start;
    for line in yaml.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        if let Some(value) = content.strip_prefix("name:") {
            let value = value.trim().trim_matches(['"', '\'']);
            return (!value.is_empty()).then_some((value, Span::new(start, start + content.len())));
        }
        start += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_manifests_ship_their_entries_or_conventional_directories() {
        let entries = vec!["./workflows".to_string(), "src/flows/*.ts".to_string(), "!workflows/wip/**".to_string()];
        assert!(shipped(Path::new("workflows/review.ts"), Some(&entries)));
        assert!(shipped(Path::new("workflows/team/plan.ts"), Some(&entries)));
        assert!(shipped(Path::new("src/flows/a.ts"), Some(&entries)));
        assert!(!shipped(Path::new("workflows/wip/a.ts"), Some(&entries)));
        assert!(!shipped(Path::new("src/other/a.ts"), Some(&entries)));
        assert!(!shipped(Path::new("workflows/.hidden/a.ts"), Some(&entries)));
        assert!(shipped(Path::new("workflow/a.ts"), None));
        assert!(!shipped(Path::new("src/a.ts"), None));
    }

    #[test]
    fn relative_imports_resolve_to_typescript_files() {
        let text = "import child from \"./child.js\";\nimport { x } from '../lib/x';\nimport { workflow } from \"@bastani/workflows\";";
        let found: Vec<_> =
            relative_imports(text).filter_map(|m| resolve(Path::new("/p/.atomic/workflows"), m)).collect();
        assert_eq!(found, [Path::new("/p/.atomic/workflows/child.ts"), Path::new("/p/.atomic/lib/x.ts")]);
    }
}
