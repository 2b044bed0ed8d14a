//! The files of one analysis: their text, kind and config; discovery lives in `discover`.

pub mod atomic;
pub mod climpt;
pub mod discover;
pub mod lastlight;
pub mod lastlight_release;
pub mod lastlight_sources;
mod stage_parts;

pub use stage_parts::StageParts;

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
    /// An @bastani/atomic TypeScript workflow (see [`atomic::is_workflow`]).
    AtomicWorkflow,
    /// A file atomic workflows depend on, read for them and never checked itself: a workflows
    /// base's `.gitignore`, a `package.json`, an agent file (`.claude/agents/<name>.md`, …).
    AtomicContext,
    /// The baseline file a config names (`baseline = "…"`, or `--baseline`): read for `check`,
    /// never checked itself.
    Baseline,
    /// Could not be read as UTF-8 text; the message says why and where.
    Unreadable { message: String, offset: usize },
    /// A `stagelint.toml` that cannot be used, met by the language server's tolerant discovery
    /// (the CLI stops with exit code 2 instead); the files it governs were left out.
    BrokenConfig { problems: Vec<crate::config::ConfigProblem> },
}

/// One file of the workspace with its text.
#[derive(Debug)]
pub struct SourceFile {
    pub id: FileId,
    pub path: PathBuf,
    /// The path as shown to people (as given, or relative to the current directory).
    pub display: String,
    pub text: String,
    /// Where lines start, made when first asked for ([`SourceFile::lines`]): most files of a
    /// large check have no finding to place. The parses below are boxed too: unmade, each
    /// costs a pointer instead of its whole size in every file record (a third of the record).
    lines: std::sync::OnceLock<Box<LineIndex>>,
    pub kind: FileKind,
    pub config: Arc<Config>,
    /// Whether findings in this file are reported. Files read only as context (the rest of
    /// the state machine around a file named on the command line) are not.
    pub reported: bool,
    /// The stage parse, made by the first reader (`StageDoc::parse`) and shared by the rest.
    pub(crate) stage_parts: std::sync::OnceLock<Box<StageParts>>,
    /// The parse of a whole-file document ([`SourceFile::document`]): a Last Light workflow,
    /// made by discovery (which follows its prompts and skills), or a climpt JSON file, whose
    /// `$schema` discovery reads; the family's rules read the same parse again.
    pub(crate) document: std::sync::OnceLock<Box<crate::source::Parsed>>,
    /// The comment spans a language parser found (TypeScript), kept by the family's parse so
    /// that suppressions are read without parsing the file again.
    pub(crate) comment_spans: std::sync::OnceLock<Vec<crate::source::Span>>,
}

/// Every file taking part in one check.
#[derive(Debug, Default)]
pub struct Workspace {
    files: Vec<SourceFile>,
    by_path: crate::util::FastMap<PathBuf, FileId>,
    /// Paths known to exist though they were not read (prompt files are checked for existence
    /// without reading all of them); rules ask [`Workspace::exists`] instead of the file system.
    /// In the order discovery met them, so whatever reads [`Workspace::paths`] (a did-you-mean
    /// among equally near names) gives the same answer on every run.
    known_paths: indexmap::IndexSet<PathBuf, foldhash::fast::RandomState>,
    /// What the Deno project around each climpt agent directory pins for climpt.
    climpt_pins: climpt::Pins,
}

impl Workspace {
    /// Drops the parses cached on the files; they are made again when asked for. A language
    /// server keeps a checked workspace per scope, thousands of them, and their parses weigh
    /// several times their text.
    pub fn forget_parses(&mut self) {
        for file in &mut self.files {
            file.stage_parts.take();
            file.document.take();
        }
    }

    pub fn new() -> Workspace {
        Workspace::default()
    }

    /// What the Deno project around the climpt agent in `agent_dir` pins for climpt, if
    /// anything (read by discovery).
    pub fn climpt_pin(&self, agent_dir: &Path) -> Option<&Arc<climpt::Pin>> {
        self.climpt_pins.of(agent_dir)
    }

    pub fn set_climpt_pins(&mut self, pins: climpt::Pins) {
        self.climpt_pins = pins;
    }

    /// Adds a file whose findings are reported; `kind` comes from [`classify`].
    pub fn add(&mut self, path: PathBuf, display: String, text: String, kind: FileKind, config: Arc<Config>) -> FileId {
        let id = FileId(self.files.len() as u32);
        self.by_path.insert(path.clone(), id);
        let file = SourceFile {
            id,
            path,
            display,
            text,
            lines: std::sync::OnceLock::new(),
            kind,
            config,
            reported: true,
            stage_parts: std::sync::OnceLock::new(),
            document: std::sync::OnceLock::new(),
            comment_spans: std::sync::OnceLock::new(),
        };
        self.files.push(file);
        id
    }

    /// Room for `additional` more files: a file record is large, and doubling the list as it
    /// fills keeps up to half of it unused.
    pub fn reserve(&mut self, additional: usize) {
        self.files.reserve_exact(additional);
        self.by_path.reserve(additional);
        // A file read but not checked is a known path instead (a prompt no workflow names yet).
        self.known_paths.reserve(additional);
    }

    /// Treats the file `id` as a `kind` (a file named explicitly as what it is, whatever its
    /// name), and reports its findings.
    pub fn set_kind(&mut self, id: FileId, kind: FileKind) {
        let file = &mut self.files[id.0 as usize];
        file.kind = kind;
        file.reported = true;
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

    /// Makes `diagnostic`'s did-you-mean fix safe when it only changes case or separators of
    /// the workspace's text; `check` and the dry-run both settle their findings here, so they
    /// label a fix alike.
    pub fn settle_did_you_mean(&self, diagnostic: &mut crate::diagnostic::Diagnostic) {
        diagnostic.settle_did_you_mean(|id| self.file(id).text.as_str());
    }
}

impl SourceFile {
    /// Where the text's lines start.
    pub fn lines(&self) -> &LineIndex {
        self.lines.get_or_init(|| Box::new(LineIndex::new(&self.text)))
    }

    /// The file's text parsed as one document (JSON for climpt's JSON files, else YAML), made
    /// once and shared.
    pub fn document(&self) -> &crate::source::Parsed {
        self.document.get_or_init(|| {
            let json = matches!(self.kind, FileKind::StepsRegistry | FileKind::AgentJson | FileKind::JsonSchema);
            Box::new(if json { crate::source::json::parse(&self.text) } else { crate::source::yaml::parse(&self.text) })
        })
    }
}

/// Stage-defining frontmatter keys: any one of them makes a markdown file a stage definition.
pub const STAGE_KEYS: [&str; 6] =
    ["completionTool", "completionSchema", "turnCap", "allowedTools", "retryPolicy", "resolutionPolicy"];

/// The top-level keys that, with `cassette:`, make a text with no file name a cassette: what
/// a cassette replays (a stage, a machine's stages, a Last Light workflow).
const CASSETTE_SUBJECTS: [&str; 4] = ["stage", "stages", "attempts", "workflow"];

/// Whether `name` is a cassette file name.
pub fn is_cassette_name(name: &str) -> bool {
    [".cassette.yaml", ".cassette.yml", ".cassette.json"].iter().any(|suffix| name.ends_with(suffix))
}

/// State-machine file names.
pub const SM_FILE_NAMES: [&str; 3] = ["sm.yaml", "sm.yml", "sm.json"];

/// Decides the kind of a readable file, or `None` when stagelint has nothing to say about it.
pub fn classify(path: &Path, text: &str, config: &Config) -> Option<FileKind> {
    let name = path.file_name()?.to_str()?;
    if SM_FILE_NAMES.contains(&name) {
        return Some(FileKind::StateMachine);
    }
    if is_cassette_name(name) {
        return Some(FileKind::Cassette);
    }
    if name.ends_with(".ts") {
        return atomic::is_workflow(path, text).then_some(FileKind::AtomicWorkflow);
    }
    if name.ends_with(".json") {
        return is_steps_registry(name, text).then_some(FileKind::StepsRegistry);
    }
    if name.ends_with(".yaml") || name.ends_with(".yml") {
        if config.is_workflow_glob(path) {
            return Some(FileKind::Workflow);
        }
        // GitHub Actions workflows are never Last Light's, whatever their keys.
        if parent_named(path, "workflows") && path.parent().is_some_and(|dir| parent_named(dir, ".github")) {
            return None;
        }
        // Where a Last Light loader reads (a `workflows/` directory), a file with a workflow's
        // keys is one; elsewhere only a file of a workflow's shape (other tools' YAML has
        // `phases:` too: a mapping of an orchestrator's phases, a reference document).
        let claimed = if in_workflows_dir(path) {
            is_workflow(text) || looks_like_workflow(text)
        } else {
            has_workflow_shape(text)
        };
        return claimed.then_some(FileKind::Workflow);
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

/// The kind of a text that has no file name (an editor's `untitled:` document), from its
/// content alone: a stage by its frontmatter keys, a workflow by `phases:` or `kind: cron`, a
/// steps registry by `steps` and `agentId`, a cassette by `cassette:` with `stage:`, `stages:`,
/// `attempts:` or `workflow:`.
pub fn classify_content(text: &str) -> Option<FileKind> {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') {
        let root = crate::source::json::parse(text).root?;
        let has = |key: &str| root.get(key).is_some();
        return if has("steps") && has("agentId") {
            Some(FileKind::StepsRegistry)
        } else if has("cassette") && CASSETTE_SUBJECTS.iter().any(|k| has(k)) {
            Some(FileKind::Cassette)
        } else {
            None
        };
    }
    if has_stage_keys(text) {
        return Some(FileKind::Stage);
    }
    if is_workflow(text) {
        return Some(FileKind::Workflow);
    }
    let keys: Vec<&str> = top_level_keys(text).map(|(key, _)| key).collect();
    let cassette = keys.contains(&"cassette") && CASSETTE_SUBJECTS.iter().any(|k| keys.contains(k));
    cassette.then_some(FileKind::Cassette)
}

/// A Last Light workflow: `phases:` or `kind: cron` at the top level, read textually so a file
/// whose YAML is broken is still recognised (and its syntax error reported). Quotes, comments,
/// a space before the colon and a flow mapping around the whole file are allowed.
pub fn is_workflow(text: &str) -> bool {
    top_level_keys(text).any(|(key, value)| key == "phases" || (key == "kind" && scalar(value) == "cron"))
        || flow_root(text).is_some_and(|root| root.get("phases").is_some() || model_is_cron(&root))
}

/// A Last Light workflow outside a `workflows/` directory: a `name` and a `phases` list, or a
/// `name` and `kind: cron`, at the top.
fn has_workflow_shape(text: &str) -> bool {
    if let Some(root) = flow_root(text) {
        let named = root.get("name").is_some();
        return named && (root.get("phases").is_some_and(|p| p.as_seq().is_some()) || model_is_cron(&root));
    }
    let keys: Vec<(&str, &str)> = top_level_keys(text).collect();
    let named = keys.iter().any(|(key, _)| *key == "name");
    let cron = keys.iter().any(|(key, value)| *key == "kind" && scalar(value) == "cron");
    let phases = keys.iter().any(|(key, value)| *key == "phases" && holds_list(text, value));
    named && (cron || phases)
}

/// Whether a top-level key's `value` (the rest of its line, a slice of `text`) holds a list:
/// `[` after the colon, or a `-` item on the next line with content.
fn holds_list(text: &str, value: &str) -> bool {
    let inline = scalar(value);
    if !inline.is_empty() {
        return inline.starts_with('[');
    }
    // `value` is a slice of `text`, so the lines after it start where it ends.
    let after = value.as_ptr() as usize - text.as_ptr() as usize + value.len();
    let next = yaml_lines(&text[after..]).map(str::trim_start).find(|l| !l.is_empty() && !l.starts_with('#'));
    next.is_some_and(|l| l == "-" || l.starts_with("- "))
}

/// Whether a directory named `workflows` holds `path` (`workflows/x.yaml`, and one level of
/// subdirectory such as `workflows/examples/x.yaml`).
fn in_workflows_dir(path: &Path) -> bool {
    path.ancestors().skip(1).take(2).any(|dir| dir.file_name().is_some_and(|n| n == "workflows"))
}

/// Keys the loader reads besides `phases:` and `kind: cron`: with `name`, any of them marks a
/// YAML file in a `workflows` directory as a workflow the loader will try to load (a cron that
/// forgot `kind: cron`, a workflow that forgot `phases:`).
const WORKFLOW_KEYS: [&str; 12] = [
    "schedule",
    "workflow",
    "handler",
    "condition",
    "context",
    "description",
    "trigger",
    "variables",
    "status_checklist",
    "final_message",
    "classification",
    "pr_scoped",
];

/// A top level with `name` and another key of the workflow or cron schema, and none of the
/// keys that mark other tools' YAML (Kubernetes and Argo `apiVersion`, CI `jobs`/`on`/`steps`
/// stay out unless they come with such keys).
fn looks_like_workflow(text: &str) -> bool {
    let (mut name, mut other, mut foreign) = (false, false, false);
    for (key, _) in top_level_keys(text) {
        match key {
            "name" => name = true,
            "apiVersion" | "jobs" | "on" => foreign = true,
            _ if WORKFLOW_KEYS.contains(&key) => other = true,
            _ => {}
        }
    }
    name && other && !foreign
}

/// The top-level keys of a YAML text, with the rest of their line: `key: value`,
/// `"key": value`, `key : value`. They are at the indentation of the first line with content,
/// usually column 0 (an indented top-level mapping is valid YAML too). Read by lines, so a
/// file whose YAML is broken still has them; a flow mapping around the whole file has none.
pub fn top_level_keys(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let indent = root_indent(text);
    yaml_lines(text).filter_map(move |line| {
        let line = line.strip_prefix(indent)?;
        if line.starts_with([' ', '\t', '#', '-']) {
            return None;
        }
        let (key, rest) = match line.strip_prefix(['"', '\'']) {
            Some(quoted) => {
                let quote = &line[..1];
                let (key, rest) = quoted.split_once(quote)?;
                (key, rest.trim_start().strip_prefix(':')?)
            }
            None => {
                let (key, rest) = line.split_once(':')?;
                (key.trim_end(), rest)
            }
        };
        (rest.is_empty() || rest.starts_with([' ', '\t'])).then_some((key, rest))
    })
}

/// The lines of YAML text: a lone CR breaks a line too, as it does for the YAML readers of
/// the runtimes (CRLF gives an empty line between, which nothing here reads).
fn yaml_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split(['\n', '\r'])
}

/// The spaces before the first line with content (not blank, a comment, a directive or a
/// document marker).
fn root_indent(text: &str) -> &str {
    let first = yaml_lines(text).find(|line| {
        let trimmed = line.trim_start_matches(' ');
        !(trimmed.trim().is_empty()
            || trimmed.starts_with(['#', '%'])
            || line.starts_with("---")
            || line.starts_with("..."))
    });
    first.map_or("", |line| &line[..line.len() - line.trim_start_matches(' ').len()])
}

/// A plain scalar's text without quotes and a trailing comment (the values read here, such as
/// `cron`, hold no `#` of their own).
fn scalar(value: &str) -> &str {
    value.split(" #").next().unwrap_or("").trim().trim_matches(['"', '\''])
}

/// A document written as one flow mapping (`{name: x, phases: [...]}`), parsed.
fn flow_root(text: &str) -> Option<crate::source::Node> {
    let body = text.trim_start_matches('\u{feff}');
    let first = yaml_lines(body).map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#') && *l != "---")?;
    if !first.starts_with('{') {
        return None;
    }
    crate::source::yaml::parse(text).root.filter(|root| root.as_map().is_some())
}

fn model_is_cron(root: &crate::source::Node) -> bool {
    lastlight::is_cron(root)
}

/// Whether the directory holding `path` is named `name`.
fn parent_named(path: &Path, name: &str) -> bool {
    path.parent().and_then(Path::file_name).is_some_and(|n| n == name)
}

/// A skill name as the Agent Skills format allows it: lowercase letters and digits in
/// `-`-separated words, at most 64 characters.
pub fn is_skill_name(name: &str) -> bool {
    name.len() <= 64
        && !name.is_empty()
        && name.split('-').all(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
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
    // A frontmatter after blank or comment lines is no frontmatter to the runtime, but a block
    // that reads as a stage's (a mapping with two stage keys, not a page's horizontal rules
    // around one) is a stage definition gone wrong (`sm/FrontmatterNotFirst`).
    if let Some((late, _)) = crate::source::frontmatter::late_start(text) {
        let Some(fm) = crate::source::frontmatter::split(&text[late..]) else { return false };
        let parsed = crate::source::yaml::parse(&text[late..][fm.yaml.start..fm.yaml.end]);
        let found = parsed.root.map_or(0, |root| STAGE_KEYS.iter().filter(|key| root.get(key).is_some()).count());
        return parsed.errors.is_empty() && found >= 2;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(path: &str, text: &str) -> Option<FileKind> {
        classify(Path::new(path), text, &Config::defaults(Path::new("/p")))
    }

    #[test]
    fn workflows_with_comments_quotes_and_flow_style() {
        let workflow = Some(FileKind::Workflow);
        assert_eq!(kind("/p/a.yaml", "kind: cron   # nightly\nname: c\n"), workflow);
        assert_eq!(kind("/p/a.yaml", "kind: 'cron'\nname: c\n"), workflow);
        assert_eq!(kind("/p/a.yaml", "kind: \"cron\"  # schedule\nname: c\n"), workflow);
        assert_eq!(kind("/p/a.yaml", "name: r\nphases:   # the steps\n  - name: a\n"), workflow);
        assert_eq!(kind("/p/a.yaml", "name: r\nphases :\n  - name: a\n"), workflow);
        assert_eq!(kind("/p/a.yaml", "name: r\n\"phases\":\n  - name: a\n"), workflow);
        assert_eq!(kind("/p/a.yaml", "name: r\nphases:\n- name: a\n"), workflow);
        assert_eq!(kind("/p/a.yaml", "name: r\nphases: [a]\n"), workflow);
        assert_eq!(kind("/p/a.yaml", "{name: s, phases: [{name: a}]}\n"), workflow);
        assert_eq!(kind("/p/a.yaml", "# indented, still valid YAML\n  name: r\n  phases:\n    - name: a\n"), workflow);
        assert_eq!(kind("/p/a.yaml", "%YAML 1.2\n---\n  kind: cron\n  name: c\n"), workflow);
        assert_eq!(kind("/p/a.yaml", "name: r\nx:\n  phases: []\n"), None);
        assert_eq!(kind("/p/a.yaml", "kind: cronjob\nname: c\n"), None);
        assert_eq!(kind("/p/a.yaml", "name: x\nsteps: []\n"), None);
    }

    #[test]
    fn phases_outside_a_workflows_directory_need_a_workflows_shape() {
        let workflow = Some(FileKind::Workflow);
        // climpt's orchestrator reference: `phases` is a mapping, and there is no `name`.
        let reference = "$schema: \"x.json\"\nversion: \"1.0.0\"\nphases:\n  plan:\n    type: actionable\n";
        assert_eq!(kind("/p/agents/docs/reference/workflow.yaml", reference), None);
        assert_eq!(kind("/p/a.yaml", "name: r\nphases:\n  plan: {}\n"), None);
        assert_eq!(kind("/p/a.yaml", "phases:\n  - name: a\n"), None);
        // Where a loader reads, a file with `phases:` is a workflow, broken or not.
        assert_eq!(kind("/p/workflows/a.yaml", reference), workflow);
        assert_eq!(kind("/p/workflows/a.yaml", "phases:\n  - name: a\n"), workflow);
        assert_eq!(kind("/p/workflows/examples/a.yaml", "phases:\n  - name: a\n"), workflow);
    }

    #[test]
    fn files_in_a_workflows_directory_that_forgot_kind_or_phases() {
        let workflow = Some(FileKind::Workflow);
        assert_eq!(kind("/p/workflows/nightly.yaml", "name: n\nschedule: \"0 3 * * *\"\nworkflow: t\n"), workflow);
        assert_eq!(kind("/p/workflows/x.yaml", "name: x\ndescription: forgot phases\n"), workflow);
        // Elsewhere, or without Last Light's keys, it is someone else's YAML.
        assert_eq!(kind("/p/config/nightly.yaml", "name: n\nschedule: \"0 3 * * *\"\n"), None);
        assert_eq!(kind("/p/workflows/argo.yaml", "apiVersion: v1\nname: x\ndescription: y\n"), None);
        assert_eq!(kind("/p/workflows/x.yaml", "name: x\nsteps: []\n"), None);
    }

    #[test]
    fn github_actions_workflows_are_never_claimed() {
        let ci =
            "name: nightly\ndescription: d\non:\n  schedule:\n    - cron: \"0 3 * * *\"\njobs:\n  a:\n    steps: []\n";
        assert_eq!(kind("/p/.github/workflows/nightly.yml", ci), None);
        // Even one that looks like Last Light's: the directory decides.
        assert_eq!(kind("/p/.github/workflows/odd.yaml", "name: x\nkind: cron\nschedule: \"0 3 * * *\"\n"), None);
        assert_eq!(kind("/p/.github/workflows/odd.yaml", "name: x\nphases: []\n"), None);
    }
}
