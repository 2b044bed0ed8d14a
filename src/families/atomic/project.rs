//! What the rules read around a workflow, gathered once per check from the files discovery
//! read as context: the agents each project defines, the `@bastani/atomic` dependency of each
//! `package.json`, and each base's `.gitignore`.

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

/// The package whose version gates `minSDKVersion`.
const SDK_PACKAGE: &str = "@bastani/atomic";

/// An agent defined by a file of a project.
pub(super) struct Agent {
    pub name: String,
    /// The file defining it, when it was read, and where: its `name:` line, else its first line.
    pub file: Option<(FileId, Span)>,
}

/// Where the SDK version a workflow runs on comes from.
pub(super) struct Sdk {
    pub range: SdkRange,
    /// The dependency's value in `package.json`; `None` for `[atomic] sdk-version`.
    pub at: Option<(FileId, Span)>,
}

/// A base's `.gitignore`, as upstream reads it.
pub(super) enum Ignore<'w> {
    File(&'w SourceFile),
    /// No file: upstream writes its template and reads that.
    Missing,
    /// It exists but was not read: nothing is known.
    Unknown,
}

pub(super) struct Project<'w> {
    workspace: &'w Workspace,
    /// By project root.
    agents: HashMap<&'w Path, Vec<Agent>>,
    /// By directory: the dependency a `package.json` there declares (its range, when readable).
    packages: HashMap<&'w Path, (Option<SdkRange>, FileId, Span)>,
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
                list.push(Agent { name: stem.to_string(), file: Some((file.id, at)) });
                if let Some((name, _)) = named.filter(|(n, _)| *n != stem) {
                    list.push(Agent { name: name.to_string(), file: Some((file.id, at)) });
                }
            }
        }
        for path in workspace.paths() {
            if workspace.file_at(path).is_none()
                && let Some((root, stem)) = atomic::agent_file(path)
            {
                agents.entry(root).or_default().push(Agent { name: stem.to_string(), file: None });
            }
        }
        let mut packages = HashMap::new();
        for file in workspace.files().iter().filter(|f| f.kind == FileKind::AtomicContext) {
            if file.path.file_name().is_some_and(|n| n == "package.json")
                && let Some(dir) = file.path.parent()
                && let Some((range, span)) = dependency(&file.text)
            {
                packages.insert(dir, (range, file.id, span));
            }
        }
        Project { workspace, agents, packages }
    }

    /// The agents defined around `path`: in the agent directories of each directory above it.
    pub fn agents(&self, path: &Path) -> impl Iterator<Item = &Agent> {
        path.ancestors().filter_map(|dir| self.agents.get(dir)).flatten()
    }

    /// The SDK versions `file` may run on: `[atomic] sdk-version`, else the `@bastani/atomic`
    /// dependency of the nearest `package.json` declaring it, when its form says (`^`/`~`/exact).
    pub fn sdk(&self, file: &SourceFile) -> Option<Sdk> {
        if let Some(version) = &file.config.atomic.sdk_version {
            return Some(Sdk { range: SdkRange::exact(version.clone()), at: None });
        }
        let (range, id, span) = file.path.ancestors().find_map(|dir| self.packages.get(dir))?;
        Some(Sdk { range: range.clone()?, at: Some((*id, *span)) })
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

/// The `@bastani/atomic` dependency of a `package.json` text: its range (`None` when the form
/// says too little) and the span of its value.
fn dependency(text: &str) -> Option<(Option<SdkRange>, Span)> {
    let root = crate::source::json::parse(text).root?;
    ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"].iter().find_map(|table| {
        let value = root.get(table)?.get(SDK_PACKAGE)?;
        Some((value.as_str().and_then(SdkRange::parse_dependency), value.span))
    })
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
