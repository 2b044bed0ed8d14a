//! Typed, spanned views of a climpt agent: registry, agent.json, step schemas, prompts and the
//! breakdown config, with the constants of climpt's runtime.

use std::path::{Path, PathBuf};

use crate::diagnostic::FileId;
use crate::families::steps::release::{Layout, Retry, facts_of};
use crate::source::{Entry, Node, Parsed, Span, SyntaxError, Value};
use crate::workspace::climpt::Assumed;
use crate::workspace::{SourceFile, Workspace};

/// The seven intents a structured gate can route on.
pub const INTENTS: [&str; 7] = ["next", "repeat", "jump", "handoff", "escalate", "closing", "abort"];

/// What `StepGateInterpreter` maps the LLM's answer to (lower-cased) besides the intent names:
/// output aliases, never valid in `allowedIntents` or as `transitions` keys.
pub const INTENT_ALIASES: [(&str, &str); 7] = [
    ("continue", "next"),
    ("retry", "repeat"),
    ("wait", "repeat"),
    ("done", "closing"),
    ("finished", "closing"),
    ("pass", "next"),
    ("fail", "repeat"),
];

/// climpt's `STEP_KIND_ALLOWED_INTENTS`. `abort` is in none of them: the docs call it always
/// allowed, the validator rejects it in `allowedIntents` (SR-VALID-001).
pub fn allowed_intents_for(kind: StepKind) -> &'static [&'static str] {
    match kind {
        StepKind::Work => &["next", "repeat", "jump", "handoff"],
        StepKind::Verification => &["next", "repeat", "jump", "escalate"],
        StepKind::Closure => &["closing", "repeat"],
    }
}

/// UV variables the runner and verdict handlers supply (`RUNTIME_SUPPLIED_UV_VARS`).
pub const RUNTIME_SUPPLIED_UV_VARS: [&str; 8] = [
    "iteration",
    "completed_iterations",
    "completion_keyword",
    "max_iterations",
    "remaining",
    "previous_summary",
    "check_count",
    "max_checks",
];

/// Supplied only from the second iteration on; an `initial.*` step never has them.
pub const CONTINUATION_ONLY_UV_VARS: [&str; 2] = ["completed_iterations", "previous_summary"];

/// Extractor names a validator's `extractParams` may use.
pub const EXTRACTORS: [&str; 16] = [
    "parseChangedFiles",
    "parseUntrackedFiles",
    "parseTestOutput",
    "parseTypeErrors",
    "parseLintErrors",
    "parseFormatOutput",
    "extractFiles",
    "generateDiff",
    "stderr",
    "stdout",
    "exitCode",
    "missingPaths",
    "expectedPath",
    "parseBranchName",
    "parseRemoteStatus",
    "parseMergeStatus",
];

/// Default C3L path templates.
pub const DEFAULT_PATH_TEMPLATE: &str = "{c1}/{c2}/{c3}/f_{edition}_{adaptation}.md";
pub const DEFAULT_PATH_TEMPLATE_NO_ADAPTATION: &str = "{c1}/{c2}/{c3}/f_{edition}.md";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    Work,
    Verification,
    Closure,
}

impl StepKind {
    pub fn parse(text: &str) -> Option<StepKind> {
        match text {
            "work" => Some(StepKind::Work),
            "verification" => Some(StepKind::Verification),
            "closure" => Some(StepKind::Closure),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Work => "work",
            StepKind::Verification => "verification",
            StepKind::Closure => "closure",
        }
    }

    /// What climpt infers from `c2` when `stepKind` is absent.
    pub fn from_c2(c2: &str) -> Option<StepKind> {
        match c2 {
            "initial" | "continuation" => Some(StepKind::Work),
            "verification" => Some(StepKind::Verification),
            "closure" => Some(StepKind::Closure),
            _ => None,
        }
    }
}

/// A parsed JSON or YAML file of the family.
#[derive(Debug)]
pub struct Doc<'w> {
    pub file: &'w SourceFile,
    /// The file's own cached parse, or one of text being typed (completion repairs it).
    pub parsed: std::borrow::Cow<'w, Parsed>,
}

impl<'w> Doc<'w> {
    /// The file as its cached parse reads it.
    pub fn of(file: &'w SourceFile) -> Doc<'w> {
        Doc { file, parsed: std::borrow::Cow::Borrowed(file.document()) }
    }

    pub fn root(&self) -> Option<&Node> {
        self.parsed.root.as_ref()
    }

    pub fn errors(&self) -> &[SyntaxError] {
        &self.parsed.errors
    }

    pub fn id(&self) -> FileId {
        self.file.id
    }

    pub fn path(&self) -> &Path {
        &self.file.path
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        self.root()?.get(key)
    }

    /// The value at a dotted path of mapping keys (`runner.verdict.type`).
    pub fn at(&self, dotted: &str) -> Option<&Node> {
        let mut node = self.root()?;
        for key in dotted.split('.') {
            node = node.get(key)?;
        }
        Some(node)
    }

    /// Where "the whole file" findings point: the opening of the top-level value.
    pub fn anchor(&self) -> Span {
        self.root().map_or(Span::empty(0), |r| Span::new(r.span.start, (r.span.start + 1).min(r.span.end)))
    }
}

/// One climpt agent: the directory around a steps registry.
pub struct Agent<'a, 'w> {
    pub workspace: &'w Workspace,
    pub dir: PathBuf,
    /// The climpt releases it may run on, and why.
    pub target: Assumed,
    /// How its agent.json is read: the layout it is written in when a target release has that
    /// layout, else the newest target release's.
    pub layout: Layout,
    /// The names of the completion loop's keys, chosen the same way.
    pub retry: Retry,
    pub registry: &'a Doc<'w>,
    pub agent_json: Option<&'a Doc<'w>>,
    /// JSON files under `<dir>/schemas/`.
    pub schemas: Vec<&'a Doc<'w>>,
    /// Markdown files under `<dir>/prompts/`.
    pub prompts: Vec<&'w SourceFile>,
    /// `<agent>-steps-app.yml` and `<agent>-steps-user.yml`.
    pub breakdown_app: Option<&'a Doc<'w>>,
    pub breakdown_user: Option<&'a Doc<'w>>,
}

/// The layout an agent.json is written in, when it says: `runner.verdict`, `runner.completion`,
/// or a flat `behavior` without `runner`.
pub fn written_layout(agent_json: &Node) -> Option<Layout> {
    match agent_json.get("runner") {
        Some(runner) if runner.get("verdict").is_some() => Some(Layout::Verdict),
        Some(runner) if runner.get("completion").is_some() => Some(Layout::Completion),
        Some(_) => None,
        None => agent_json.get("behavior").map(|_| Layout::Flat),
    }
}

/// The layout agent.json is written in and the retry keys the registry uses, when a release of
/// `target` has them; else the newest target release's (the files are then read as that release
/// reads them, and what it does not know is a defect).
pub fn read_as(target: &Assumed, registry: Option<&Node>, agent_json: Option<&Node>) -> (Layout, Retry) {
    let written_layout = agent_json.and_then(written_layout);
    let written_retry = registry.and_then(|r| {
        if ["failurePatterns", "validationSteps"].iter().any(|k| r.get(k).is_some()) {
            Some(Retry::Validation)
        } else if ["completionPatterns", "completionSteps"].iter().any(|k| r.get(k).is_some()) {
            Some(Retry::Completion)
        } else {
            None
        }
    });
    let newest = facts_of(target).last().expect("a target names a release");
    let layout = written_layout.filter(|l| facts_of(target).any(|f| f.layout == *l)).unwrap_or(newest.layout);
    let retry = written_retry.filter(|r| facts_of(target).any(|f| f.retry == *r)).unwrap_or(newest.retry);
    (layout, retry)
}

impl<'a, 'w> Agent<'a, 'w> {
    /// `[steps] validate-parity` of the registry's config: findings at `--validate`'s levels.
    pub fn validate_parity(&self) -> bool {
        self.registry.file.config.validate_parity
    }

    /// Every `steps` entry whose value is a mapping, in file order.
    pub fn steps(&self) -> Vec<Step<'a>> {
        let Some(steps) = self.registry.get("steps").and_then(Node::as_map) else { return Vec::new() };
        steps.iter().filter(|e| e.value.as_map().is_some()).filter_map(Step::new).collect()
    }

    pub fn step(&self, id: &str) -> Option<Step<'a>> {
        self.steps().into_iter().find(|s| s.id == id)
    }

    pub fn has_step(&self, id: &str) -> bool {
        self.registry.get("steps").and_then(|s| s.get(id)).is_some()
    }

    pub fn step_ids(&self) -> Vec<&'a str> {
        self.registry
            .get("steps")
            .and_then(Node::as_map)
            .unwrap_or_default()
            .iter()
            .filter_map(Entry::key_str)
            .collect()
    }

    pub fn schemas_dir(&self) -> PathBuf {
        self.dir.join("schemas")
    }

    pub fn prompts_dir(&self) -> PathBuf {
        self.dir.join("prompts")
    }

    /// The schema file `name` (relative to `schemas/`), when it was read.
    pub fn schema_file(&self, name: &str) -> Option<&'a Doc<'w>> {
        let path = crate::workspace::discover::normalize(&self.schemas_dir().join(name));
        self.schemas.iter().copied().find(|d| d.file.path == path)
    }

    /// agent.json `parameters` keys.
    pub fn parameter_names(&self) -> Vec<&'a str> {
        self.agent_json
            .and_then(|a| a.get("parameters"))
            .and_then(Node::as_map)
            .unwrap_or_default()
            .iter()
            .filter_map(Entry::key_str)
            .collect()
    }

    /// agent.json `runner.verdict.type` (`runner.completion.type`, `behavior.completionType` in
    /// older layouts).
    pub fn verdict_type(&self) -> Option<(&'a str, Span, FileId)> {
        let agent = self.agent_json?;
        let node = agent.at(self.layout.path("runner.verdict.type"))?;
        Some((node.as_str()?, node.span, agent.id()))
    }

    /// The agent.json value at a `runner.*` path of climpt 1.12.5 and later, read where this
    /// agent's layout keeps it.
    pub fn setting(&self, current: &'static str) -> Option<&'a Node> {
        self.agent_json?.at(self.layout.path(current))
    }

    /// The registry's `c1` (`steps` when absent).
    pub fn c1(&self) -> &'a str {
        self.registry.get("c1").and_then(Node::as_str).unwrap_or("steps")
    }

    /// The prompt files climpt tries for a step-like definition with `adaptation`, in order:
    /// breakdown names them itself, `f_<edition>_<adaptation>.md` when an adaptation is passed
    /// and that file exists, else `f_<edition>.md` (no release reads the registry's
    /// `pathTemplate`).
    pub fn prompt_paths(&self, def: &Node, adaptation: Option<&str>) -> Vec<PathBuf> {
        let field = |key: &str| def.get(key).and_then(Node::as_str).unwrap_or("");
        let edition = def.get("edition").and_then(Node::as_str).unwrap_or("default");
        let dir = self.prompts_dir().join(self.c1()).join(field("c2")).join(field("c3"));
        let mut out = Vec::new();
        if let Some(adaptation) = adaptation {
            out.push(dir.join(format!("f_{edition}_{adaptation}.md")));
        }
        out.push(dir.join(format!("f_{edition}.md")));
        out
    }

    /// [`Agent::prompt_paths`] with the definition's own `adaptation`.
    pub fn prompt_candidates(&self, def: &Node) -> Vec<PathBuf> {
        self.prompt_paths(def, def.get("adaptation").and_then(Node::as_str))
    }

    /// The adaptation climpt passes for a step: for a closure step, the agent's
    /// `defaultClosureAction` when it is not `close` (the closure adapter, unless GitHub is
    /// disabled), in place of the step's own; else the step's own `adaptation`.
    pub fn adaptation(&self, step: &Step<'a>) -> Adaptation<'a> {
        let own = step.str_field("adaptation");
        if step.kind() == Some(StepKind::Closure)
            && let Some(github) = self.setting("runner.integrations.github")
            && github.get("enabled").and_then(Node::as_bool) != Some(false)
            && let Some(action) = github.get("defaultClosureAction").and_then(Node::as_str)
            && action != "close"
        {
            return Adaptation::ClosureAction(action);
        }
        match own {
            Some(own) => Adaptation::Own(own),
            None => Adaptation::None,
        }
    }

    /// The prompt files climpt tries for a step, with the adaptation it passes.
    pub fn step_prompt_paths(&self, step: &Step) -> Vec<PathBuf> {
        self.prompt_paths(step.def, self.adaptation(step).name())
    }

    /// The prompt file a step resolves to, if any candidate exists.
    pub fn prompt_file(&self, step: &Step) -> Option<&'w SourceFile> {
        self.step_prompt_paths(step).iter().find_map(|p| self.workspace.file_at(p))
    }
}

/// The adaptation climpt passes when it resolves a step's prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adaptation<'a> {
    None,
    /// The step's own `adaptation`.
    Own(&'a str),
    /// agent.json's `defaultClosureAction`, for a closure step.
    ClosureAction(&'a str),
}

impl<'a> Adaptation<'a> {
    pub fn name(self) -> Option<&'a str> {
        match self {
            Adaptation::None => None,
            Adaptation::Own(name) | Adaptation::ClosureAction(name) => Some(name),
        }
    }
}

/// One entry of `steps`.
#[derive(Clone, Copy, Debug)]
pub struct Step<'a> {
    pub key: &'a Node,
    pub id: &'a str,
    pub def: &'a Node,
}

impl<'a> Step<'a> {
    fn new(entry: &'a Entry) -> Option<Step<'a>> {
        Some(Step { key: &entry.key, id: entry.key_str()?, def: &entry.value })
    }

    pub fn get(&self, key: &str) -> Option<&'a Node> {
        self.def.get(key)
    }

    pub fn str_field(&self, key: &str) -> Option<&'a str> {
        self.def.get(key).and_then(Node::as_str)
    }

    pub fn c2(&self) -> Option<&'a str> {
        self.str_field("c2")
    }

    /// The explicit `stepKind`, else the one inferred from `c2`.
    pub fn kind(&self) -> Option<StepKind> {
        match self.str_field("stepKind") {
            Some(kind) => StepKind::parse(kind),
            None => self.c2().and_then(StepKind::from_c2),
        }
    }

    pub fn is_section(&self) -> bool {
        self.c2() == Some("section")
    }

    pub fn gate(&self) -> Option<&'a Node> {
        self.def.get("structuredGate").filter(|g| g.as_map().is_some())
    }

    /// A step with a structured gate or transitions takes part in routing.
    pub fn is_flow_step(&self) -> bool {
        self.def.get("structuredGate").is_some() || self.def.get("transitions").is_some()
    }

    /// `structuredGate.allowedIntents` string entries with their spans.
    pub fn allowed_intents(&self) -> Vec<(&'a str, Span)> {
        self.gate()
            .and_then(|g| g.get("allowedIntents"))
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .filter_map(|n| Some((n.as_str()?, n.span)))
            .collect()
    }

    pub fn allows(&self, intent: &str) -> bool {
        self.allowed_intents().iter().any(|(i, _)| *i == intent)
    }

    /// `transitions` entries: (intent key node, rule node).
    pub fn transitions(&self) -> Vec<(&'a Node, &'a Node)> {
        self.def
            .get("transitions")
            .and_then(Node::as_map)
            .unwrap_or_default()
            .iter()
            .map(|e| (&e.key, &e.value))
            .collect()
    }

    pub fn transition(&self, intent: &str) -> Option<&'a Node> {
        self.def.get("transitions")?.get(intent)
    }

    /// `uvVariables` string entries.
    pub fn uv_variables(&self) -> Vec<(&'a str, Span)> {
        self.def
            .get("uvVariables")
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .filter_map(|n| Some((n.as_str()?, n.span)))
            .collect()
    }
}

/// Where a transition rule sends the flow.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    /// `None` for `null` (terminal).
    pub step: Option<&'a str>,
    pub node: &'a Node,
    pub via: TargetVia,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetVia {
    Direct,
    Fallback,
    Conditional,
}

/// Every target a transition rule names: `target`, `fallback`, and `targets.*`.
pub fn rule_targets(rule: &Node) -> Vec<Target<'_>> {
    let conditional = rule
        .get("targets")
        .and_then(Node::as_map)
        .unwrap_or_default()
        .iter()
        .map(|e| (&e.value, TargetVia::Conditional));
    let direct = rule.get("target").map(|n| (n, TargetVia::Direct));
    let fallback = rule.get("fallback").map(|n| (n, TargetVia::Fallback));
    direct
        .into_iter()
        .chain(fallback)
        .chain(conditional)
        .filter_map(|(node, via)| {
            let step = match &node.value {
                Value::String(s) => Some(s.as_str()),
                Value::Null => None,
                _ => return None,
            };
            Some(Target { step, node, via })
        })
        .collect()
}

/// The directory a registry belongs to.
pub fn agent_dir(registry: &SourceFile) -> PathBuf {
    registry.path.parent().map(Path::to_path_buf).unwrap_or_default()
}
