//! Typed, spanned views of a climpt agent: registry, agent.json, step schemas, prompts and the
//! breakdown config, with the constants of climpt's runtime.

use std::path::{Path, PathBuf};

use crate::diagnostic::FileId;
use crate::source::{Entry, Node, Parsed, Span, SyntaxError, Value};
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

/// `runner.verdict.type` values.
pub const VERDICT_TYPES: [&str; 8] = [
    "poll:state",
    "count:iteration",
    "count:check",
    "detect:keyword",
    "detect:structured",
    "detect:graph",
    "meta:composite",
    "meta:custom",
];

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

/// `fallbackKey` values the seed-era default template registry knows: exactly the keys of
/// `DefaultFallbackProvider.templates` in climpt 91d13e3's `agents/prompts/fallback.ts`
/// (`system` included: `--validate` checks membership with `key in templates`).
pub const KNOWN_FALLBACK_KEYS: [&str; 26] = [
    "system",
    "initial_iterate",
    "continuation_iterate",
    "initial_manual",
    "continuation_manual",
    "initial_keyword",
    "continuation_keyword",
    "initial_issue",
    "continuation_issue",
    "initial_issue_label_only",
    "continuation_issue_label_only",
    "initial_project",
    "continuation_project",
    "continuation_project_preparation",
    "continuation_project_processing",
    "continuation_project_review",
    "polling_closure_default",
    "issue_closure_default",
    "review_closure_default",
    "facilitation_closure_default",
    "project_closure_default",
    "iteration_closure_default",
    "project_continuation_closure_default",
    "statuscheck_continuation_default",
    "initial_structured_signal",
    "continuation_structured_signal",
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

/// Which registry format a file is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// climpt since 2026-04-10: no `fallbackKey`, `userPromptsBase`, `schemasBase`.
    Current,
    /// The seed-era format (climpt 91d13e3): those keys are part of the format.
    Seed,
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

impl<'a, 'w> Agent<'a, 'w> {
    /// Seed when the registry has the seed-era top-level `userPromptsBase`/`schemasBase`, or when
    /// every step carries `fallbackKey` (the seed schema required it). A `fallbackKey` on only
    /// some steps is a leftover in a current registry (LegacyKey), not a seed-era file.
    pub fn dialect(&self) -> Dialect {
        let root = self.registry.root();
        let legacy_top = ["userPromptsBase", "schemasBase"].iter().any(|k| root.and_then(|r| r.get(k)).is_some());
        let steps = self.steps();
        let legacy_steps = !steps.is_empty() && steps.iter().all(|s| s.def.get("fallbackKey").is_some());
        if legacy_top || legacy_steps { Dialect::Seed } else { Dialect::Current }
    }

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

    /// agent.json `runner.verdict.type`.
    pub fn verdict_type(&self) -> Option<(&'a str, Span, FileId)> {
        let agent = self.agent_json?;
        let node = agent.at("runner.verdict.type")?;
        Some((node.as_str()?, node.span, agent.id()))
    }

    /// The registry's `c1`, `pathTemplate` and `pathTemplateNoAdaptation`.
    pub fn path_templates(&self) -> (&'a str, &'a str, &'a str) {
        let text = |key: &str, default: &'static str| self.registry.get(key).and_then(Node::as_str).unwrap_or(default);
        (
            text("c1", "steps"),
            text("pathTemplate", DEFAULT_PATH_TEMPLATE),
            text("pathTemplateNoAdaptation", DEFAULT_PATH_TEMPLATE_NO_ADAPTATION),
        )
    }

    /// The prompt files climpt tries for a step-like definition, in order (with adaptation first).
    pub fn prompt_candidates(&self, def: &Node) -> Vec<PathBuf> {
        let (c1, with_adaptation, without) = self.path_templates();
        let field = |key: &str| def.get(key).and_then(Node::as_str);
        let mut out = Vec::new();
        let fill = |template: &str| {
            template
                .replace("{c1}", c1)
                .replace("{c2}", field("c2").unwrap_or(""))
                .replace("{c3}", field("c3").unwrap_or(""))
                .replace("{edition}", field("edition").unwrap_or("default"))
                .replace("{adaptation}", field("adaptation").unwrap_or(""))
        };
        if field("adaptation").is_some() {
            out.push(self.prompts_dir().join(fill(with_adaptation)));
        }
        out.push(self.prompts_dir().join(fill(without)));
        out
    }

    /// The prompt file a step resolves to, if any candidate exists.
    pub fn prompt_file(&self, def: &Node) -> Option<&'w SourceFile> {
        self.prompt_candidates(def).iter().find_map(|p| self.workspace.file_at(p))
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
