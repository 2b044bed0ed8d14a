//! The files of one analysis: their text, kind and config; discovery lives in `discover`.

pub mod discover;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::diagnostic::FileId;
use crate::source::LineIndex;

/// What a file is to stagelint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// Markdown with stage frontmatter.
    Stage,
    /// `sm.yaml`, `sm.yml` or `sm.json`.
    StateMachine,
    /// A climpt `steps_registry.json` (or the file `agent.json` names as its registry).
    StepsRegistry,
    /// A climpt `agent.json` next to a registry.
    AgentJson,
    /// A JSON Schema under a climpt agent's `schemas/` directory, or one a registry's `$schema` names.
    JsonSchema,
    /// A C3L prompt under a climpt agent's `prompts/` directory.
    C3lPrompt,
    /// A climpt breakdown config `.agent/climpt/config/<agent>-steps-{app,user}.yml`.
    BreakdownConfig,
    /// A Last Light workflow (`phases:` or `kind: cron` at the top, or `[files] workflows`).
    Workflow,
    /// A Last Light prompt template that a workflow's `prompt:`, `fix_prompt:` or
    /// `re_review_prompt:` names.
    WorkflowPrompt,
    /// An agent skill, `skills/<name>/SKILL.md` (also under `.claude/` or `.agents/`).
    Skill,
    /// A dry-run cassette, `*.cassette.yaml|yml|json`.
    Cassette,
    /// Could not be read as UTF-8 text; the message says why and where.
    Unreadable { message: String, offset: usize },
    /// A `stagelint.toml` that cannot be used, met by the language server's tolerant discovery
    /// (the CLI stops with exit code 2 instead); the files it governs were left out.
    BrokenConfig { message: String, span: crate::source::Span },
}

/// One file of the workspace with its text.
#[derive(Debug)]
pub struct SourceFile {
    pub id: FileId,
    pub path: PathBuf,
    /// The path as shown to people (as given, or relative to the current directory).
    pub display: String,
    pub text: String,
    pub lines: LineIndex,
    pub kind: FileKind,
    pub config: Arc<Config>,
    /// Whether findings in this file are reported. Files read only as context (the rest of
    /// the state machine around a file named on the command line) are not.
    pub reported: bool,
}

/// Every file taking part in one check.
#[derive(Debug, Default)]
pub struct Workspace {
    files: Vec<SourceFile>,
    by_path: std::collections::HashMap<PathBuf, FileId>,
    /// Paths known to exist though they were not read (prompt files are checked for existence
    /// without reading all of them); rules ask [`Workspace::exists`] instead of the file system.
    known_paths: std::collections::HashSet<PathBuf>,
}

impl Workspace {
    pub fn new() -> Workspace {
        Workspace::default()
    }

    /// Adds a file whose findings are reported; `kind` comes from [`classify`].
    pub fn add(&mut self, path: PathBuf, display: String, text: String, kind: FileKind, config: Arc<Config>) -> FileId {
        let id = FileId(self.files.len() as u32);
        let lines = LineIndex::new(&text);
        self.by_path.insert(path.clone(), id);
        self.files.push(SourceFile { id, path, display, text, lines, kind, config, reported: true });
        id
    }

    /// Records that `path` exists without reading it.
    pub fn add_known_path(&mut self, path: PathBuf) {
        self.known_paths.insert(path);
    }

    /// The file read at `path`, if any.
    pub fn file_at(&self, path: &Path) -> Option<&SourceFile> {
        self.by_path.get(path).map(|id| self.file(*id))
    }

    /// Whether `path` exists, as far as discovery saw.
    pub fn exists(&self, path: &Path) -> bool {
        self.by_path.contains_key(path) || self.known_paths.contains(path)
    }

    /// Adds a file that other files need (cross-file rules) but whose own findings are not wanted.
    pub fn add_context(
        &mut self,
        path: PathBuf,
        display: String,
        text: String,
        kind: FileKind,
        config: Arc<Config>,
    ) -> FileId {
        let id = self.add(path, display, text, kind, config);
        self.files[id.0 as usize].reported = false;
        id
    }

    /// Every path discovery saw: the files read and the paths only known to exist.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.files.iter().map(|f| f.path.as_path()).chain(self.known_paths.iter().map(PathBuf::as_path))
    }

    /// The files whose findings are reported.
    pub fn reported_files(&self) -> impl Iterator<Item = &SourceFile> {
        self.files.iter().filter(|f| f.reported)
    }

    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }

    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }
}

/// Stage-defining frontmatter keys: any one of them makes a markdown file a stage definition.
pub const STAGE_KEYS: [&str; 6] =
    ["completionTool", "completionSchema", "turnCap", "allowedTools", "retryPolicy", "resolutionPolicy"];

/// State-machine file names.
pub const SM_FILE_NAMES: [&str; 3] = ["sm.yaml", "sm.yml", "sm.json"];

/// Decides the kind of a readable file, or `None` when stagelint has nothing to say about it.
pub fn classify(path: &Path, text: &str, config: &Config) -> Option<FileKind> {
    let name = path.file_name()?.to_str()?;
    if SM_FILE_NAMES.contains(&name) {
        return Some(FileKind::StateMachine);
    }
    if crate::runtime::cassette::is_cassette_name(name) {
        return Some(FileKind::Cassette);
    }
    if name.ends_with(".json") {
        return is_steps_registry(name, text).then_some(FileKind::StepsRegistry);
    }
    if name.ends_with(".yaml") || name.ends_with(".yml") {
        return (config.is_workflow_glob(path) || is_workflow(text)).then_some(FileKind::Workflow);
    }
    let is_markdown = path.extension().is_some_and(|ext| ext == "md" || ext == "markdown");
    if !is_markdown {
        return None;
    }
    if config.is_stage_glob(path) || has_stage_keys(text) {
        return Some(FileKind::Stage);
    }
    if name == "SKILL.md" && is_skill_path(path) {
        return Some(FileKind::Skill);
    }
    None
}

/// A Last Light workflow: `phases:` or `kind: cron` at column 0, read textually so a file whose
/// YAML is broken is still recognised (and its syntax error reported).
pub fn is_workflow(text: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim_end();
        line.strip_prefix("phases:").is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '#']))
            || line.strip_prefix("kind:").is_some_and(|rest| matches!(rest.trim().trim_matches(['"', '\'']), "cron"))
    })
}

/// `<dir>/skills/<name>/SKILL.md`.
fn is_skill_path(path: &Path) -> bool {
    path.parent().and_then(Path::parent).and_then(Path::file_name).is_some_and(|dir| dir == "skills")
}

/// A climpt steps registry: by name, or a JSON object with `steps` and `agentId` at the top.
fn is_steps_registry(name: &str, text: &str) -> bool {
    if name == "steps_registry.json" {
        return true;
    }
    if !(text.contains("\"steps\"") && text.contains("\"agentId\"")) {
        return false;
    }
    crate::source::json::parse(text)
        .root
        .is_some_and(|root| root.get("steps").is_some() && root.get("agentId").is_some())
}

/// Looks for a stage key at the top level of the frontmatter, textually, so that a file whose
/// YAML is broken is still recognised (and its syntax error reported).
fn has_stage_keys(text: &str) -> bool {
    let Some(fm) = crate::source::frontmatter::split(text) else {
        return false;
    };
    let yaml = &text[fm.yaml.start..fm.yaml.end];
    let by_line = yaml.lines().any(|line| {
        STAGE_KEYS.iter().any(|key| {
            let quoted = line.strip_prefix('"').and_then(|l| l.strip_prefix(key)).and_then(|l| l.strip_prefix('"'));
            line.strip_prefix(key).or(quoted).is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
    });
    // Flow-style frontmatter (`{ turnCap: 3, ... }`) hides its keys from the line scan.
    by_line
        || (yaml.contains('{')
            && crate::source::yaml::parse(yaml)
                .root
                .is_some_and(|root| STAGE_KEYS.iter().any(|key| root.get(key).is_some())))
}
