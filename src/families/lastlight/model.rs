//! Typed, spanned views of Last Light workflow files: phases, the files they name, the template
//! strings they hold, and what a template may read where.

use std::path::{Path, PathBuf};

use crate::diagnostic::FileId;
use crate::families::lastlight::schema::{self, Field, Ty};
use crate::registry::releases::lastlight::{self as releases, ReleaseId};
use crate::source::{Node, Span, SyntaxError};
use crate::util::FastMap;
use crate::workspace::lastlight::phase_nodes;
pub use crate::workspace::lastlight::{
    PathProblem, Ref, is_cron, is_valid_skill_name, prompt_base, prompt_references, resolve_prompt, skill_candidates,
    skill_references,
};
use crate::workspace::{SourceFile, Workspace};

/// One workflow file, parsed.
#[derive(Debug)]
pub struct WorkflowDoc<'w> {
    pub file: &'w SourceFile,
    pub root: Option<&'w Node>,
    pub errors: &'w [SyntaxError],
    /// The prompt paths it names, each with where it resolves: resolved once, read by the
    /// rules that follow prompts (files, templates, how often each prompt is used).
    pub prompts: Vec<(Ref<'w>, Result<PathBuf, PathProblem>)>,
    /// For each of `prompts`, the file of the workspace it names: found by
    /// [`WorkflowDoc::located`] (the family's check); empty in a doc made by `parse` alone.
    pub prompt_files: Vec<Option<FileId>>,
    /// [`prompt_base`] of the file, found once: every lookup by namespace asks for it.
    base: &'w Path,
}

/// One entry of `phases:`.
#[derive(Clone, Copy, Debug)]
pub struct Phase<'a> {
    pub index: usize,
    pub node: &'a Node,
}

/// A template string in the YAML, with where it is rendered.
#[derive(Clone, Copy, Debug)]
pub struct YamlTemplate<'a> {
    pub node: &'a Node,
    /// `None` for workflow-level templates (`final_message`).
    pub phase: Option<usize>,
    /// Loop messages also get `cycle` and `maxCycles`.
    pub loop_message: bool,
    /// A bash `command`: refused at runtime if a `{{` is left after rendering.
    pub shell: bool,
    /// The key it is written under (`model`, `on_start`…).
    pub key: &'static str,
}

impl<'w> WorkflowDoc<'w> {
    pub fn parse(file: &'w SourceFile) -> WorkflowDoc<'w> {
        let parsed = file.document();
        let root = parsed.root.as_ref();
        let base = prompt_base(&file.path);
        let prompts = root
            .map(prompt_references)
            .unwrap_or_default()
            .into_iter()
            .map(|reference| (reference, resolve_prompt(base, reference.text)))
            .collect();
        WorkflowDoc { file, root, errors: &parsed.errors, prompts, prompt_files: Vec::new(), base }
    }

    /// [`WorkflowDoc::parse`], with the file each prompt reference names found once per
    /// distinct path (a workflow often names its build prompt again as the fix prompt): the
    /// rules that follow prompts read [`WorkflowDoc::prompt_file`] instead of looking each path
    /// up again.
    pub fn located(file: &'w SourceFile, workspace: &Workspace) -> WorkflowDoc<'w> {
        let mut doc = WorkflowDoc::parse(file);
        let mut found: Vec<Option<FileId>> = Vec::with_capacity(doc.prompts.len());
        for (i, (_, path)) in doc.prompts.iter().enumerate() {
            let Ok(path) = path else {
                found.push(None);
                continue;
            };
            let same = |(_, earlier): &(Ref, Result<PathBuf, PathProblem>)| {
                earlier.as_ref().is_ok_and(|e| e.as_os_str() == path.as_os_str())
            };
            let id = match doc.prompts[..i].iter().position(same) {
                Some(earlier) => found[earlier],
                None => workspace.file_at(path).map(|f| f.id),
            };
            found.push(id);
        }
        doc.prompt_files = found;
        doc
    }

    /// The file the `i`th prompt reference names, if it is one of the workspace's (in a doc
    /// made by [`WorkflowDoc::located`]).
    pub fn prompt_file<'a>(&self, i: usize, workspace: &'a Workspace) -> Option<&'a SourceFile> {
        self.prompt_files.get(i).copied().flatten().map(|id| workspace.file(id))
    }

    pub fn dir(&self) -> &'w Path {
        self.file.path.parent().unwrap_or(Path::new("/"))
    }

    /// The directory prompt paths are relative to (see [`prompt_base`]). It is also the
    /// workflow's namespace: the workflows and crons under one `workflows` directory, its
    /// subdirectories included, look each other up by name and must not share one.
    pub fn prompt_base(&self) -> &'w Path {
        self.base
    }

    /// Whether `other` is loaded with this file (see [`WorkflowDoc::prompt_base`]).
    pub fn same_namespace(&self, other: &WorkflowDoc) -> bool {
        self.prompt_base() == other.prompt_base()
    }

    pub fn is_cron(&self) -> bool {
        self.root.is_some_and(is_cron)
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        self.root?.get(key)
    }

    /// The workflow's `name`, the key crons and lookups use.
    pub fn name(&self) -> Option<&str> {
        self.get("name")?.as_str()
    }

    /// Whether the server (0.23 and later) renders this workflow with a PR's context: `pr_scoped: true`,
    /// or a name the server always treats so.
    pub fn is_pr_scoped(&self) -> bool {
        // The server adds the legacy names whatever `pr_scoped` says (`pr-scope.ts`).
        self.get("pr_scoped").is_some_and(|scoped| matches!(scoped.value, crate::source::Value::Bool(true)))
            || self.name().is_some_and(|name| LEGACY_PR_SCOPED.contains(&name))
    }

    pub fn phases(&self) -> Vec<Phase<'_>> {
        match self.root {
            Some(root) if !is_cron(root) => phases(root),
            _ => Vec::new(),
        }
    }
}

/// The mapping entries of `phases:`.
pub fn phases(root: &Node) -> Vec<Phase<'_>> {
    phase_nodes(root).map(|(index, node)| Phase { index, node }).collect()
}

impl<'a> Phase<'a> {
    pub fn get(&self, key: &str) -> Option<&'a Node> {
        self.node.get(key)
    }

    pub fn name_node(&self) -> Option<&'a Node> {
        self.get("name").filter(|n| n.as_str().is_some())
    }

    pub fn name(&self) -> Option<&'a str> {
        self.get("name")?.as_str()
    }

    /// `type`, `agent` when absent.
    pub fn kind(&self) -> &'a str {
        self.get("type").and_then(Node::as_str).unwrap_or("agent")
    }

    pub fn depends_on(&self) -> Vec<&'a Node> {
        self.get("depends_on")
            .and_then(Node::as_seq)
            .map(|s| s.iter().filter(|n| n.as_str().is_some()).collect())
            .unwrap_or_default()
    }

    pub fn output_var(&self) -> Option<&'a Node> {
        self.get("output_var").filter(|n| n.as_str().is_some())
    }

    pub fn has_loop(&self) -> bool {
        self.get("loop").is_some()
    }

    pub fn has_generic_loop(&self) -> bool {
        self.get("generic_loop").is_some()
    }

    pub fn fresh_context(&self) -> Option<&'a Node> {
        self.get("generic_loop")?.get("fresh_context").filter(|n| matches!(n.value, crate::source::Value::Bool(true)))
    }
}

/// Phase names and output_vars of a workflow, each with the phase that produces it.
#[derive(Debug, Default)]
pub struct Producers<'a> {
    pub by_name: FastMap<&'a str, (usize, &'a Node)>,
}

impl<'a> Producers<'a> {
    /// The first phase named or aliased `name` wins (later ones are reported as duplicates).
    pub fn of(phases: &[Phase<'a>]) -> Producers<'a> {
        let mut by_name = FastMap::default();
        for phase in phases {
            if let Some(node) = phase.name_node() {
                by_name.entry(node.as_str().unwrap_or_default()).or_insert((phase.index, node));
            }
        }
        for phase in phases {
            if let Some(node) = phase.output_var() {
                by_name.entry(node.as_str().unwrap_or_default()).or_insert((phase.index, node));
            }
        }
        Producers { by_name }
    }
}

/// Whether the workflow runs as a DAG (any phase has `depends_on`).
pub fn is_dag(phases: &[Phase]) -> bool {
    phases.iter().any(|p| p.get("depends_on").is_some())
}

/// The part of the file a string node's template text occupies: quotes and a block scalar's
/// header are left out. Tags never span lines, so parsing the raw text finds the same tags
/// at their real offsets.
pub fn template_region(text: &str, node: &Node) -> Span {
    let raw = text.get(node.span.start..node.span.end).unwrap_or("");
    match raw.as_bytes().first() {
        Some(b'|' | b'>') => match raw.find('\n') {
            Some(nl) => Span::new(node.span.start + nl + 1, node.span.end),
            None => Span::empty(node.span.end),
        },
        Some(b'"' | b'\'') if raw.len() >= 2 => Span::new(node.span.start + 1, node.span.end - 1),
        _ => node.span,
    }
}

/// Every template string of an agent workflow, by walking the schema's `Template` fields.
pub fn yaml_templates(root: &Node) -> Vec<YamlTemplate<'_>> {
    let mut out = Vec::new();
    if is_cron(root) {
        return out;
    }
    walk_templates(root, schema::WORKFLOW, None, false, &mut out);
    for phase in phases(root) {
        walk_templates(phase.node, schema::PHASE, Some(phase.index), false, &mut out);
    }
    out
}

fn walk_templates<'a>(
    node: &'a Node,
    fields: &'static [Field],
    phase: Option<usize>,
    in_loop: bool,
    out: &mut Vec<YamlTemplate<'a>>,
) {
    for entry in node.as_map().unwrap_or_default() {
        let Some(field) = fields.iter().find(|f| Some(f.name) == entry.key_str()) else { continue };
        match &field.ty {
            Ty::Template if entry.value.as_str().is_some() => out.push(YamlTemplate {
                node: &entry.value,
                phase,
                loop_message: in_loop && std::ptr::eq(fields, schema::LOOP_MESSAGES),
                shell: field.name == "command",
                key: field.name,
            }),
            Ty::Map(inner) => walk_templates(&entry.value, inner, phase, in_loop || field.name == "loop", out),
            _ => {}
        }
    }
}

/// A context variable the server sets: what it holds, the release that brought it and the
/// runs it is set for.
#[derive(Debug)]
pub struct Variable {
    pub name: &'static str,
    pub doc: &'static str,
    pub since: ReleaseId,
    pub set_for: SetFor,
}

/// The runs a variable is set for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetFor {
    Every,
    /// The runs of these workflows, by name (what a dispatcher adds for them).
    Named(&'static [&'static str]),
    /// PR-scoped workflows: the PR render context (`pr_scoped: true`, or one of
    /// [`LEGACY_PR_SCOPED`]).
    PrScoped,
}

const fn every(name: &'static str, since: ReleaseId, doc: &'static str) -> Variable {
    Variable { name, doc, since, set_for: SetFor::Every }
}

const fn pr(name: &'static str, doc: &'static str) -> Variable {
    Variable { name, doc, since: releases::V0_23, set_for: SetFor::PrScoped }
}

/// The workflows the dispatcher ran on a PR's head from 0.5.1 on, with the PR's base branch.
const HEAD_REF_WORKFLOWS: &[&str] = &["pr-review", "demo", "qa-test", "verify"];

/// Every context variable the server sets (`simple.ts`, `pr-decisions.ts`), with the release
/// that set it; a variable set for more runs in a later release has a row for each.
pub const VARIABLES: &[Variable] = &[
    every("owner", releases::OLDEST, "Repository owner of the triggering issue or PR."),
    every("repo", releases::OLDEST, "Repository name."),
    every("issueNumber", releases::OLDEST, "Issue number (the PR number on PR triggers; 0 when there is none)."),
    every("issueTitle", releases::OLDEST, "Issue title (the PR title on PR triggers)."),
    every("issueBody", releases::OLDEST, "Issue body."),
    every("issueLabels", releases::OLDEST, "Issue labels."),
    every("commentBody", releases::OLDEST, "Body of the triggering comment."),
    every("sender", releases::OLDEST, "Who triggered the run."),
    every(
        "branch",
        releases::OLDEST,
        "Working branch (`lastlight/{issueNumber}-{slug}` for builds; the PR head for PR-scoped workflows).",
    ),
    every("taskId", releases::OLDEST, "`{repo}-{issueNumber}-{workflowName}-{runId[0..8]}`."),
    every(
        "issueDir",
        releases::OLDEST,
        "`.lastlight/issue-{N}` (or `.lastlight/{workflowName}-{id}`): where phases hand files over.",
    ),
    every("bootstrapLabel", releases::OLDEST, "Label that marks bootstrap tasks (default `lastlight:bootstrap`)."),
    every("contextSnapshot", releases::OLDEST, "Wrapped untrusted user content, branch and sender."),
    every("models", releases::OLDEST, "Model map from the config: `{{models.<phase>}}`."),
    every("triggerIdOverride", releases::OLDEST, "Slack thread override."),
    every("phaseOutputs", releases::OLDEST, "Outputs of the phases that ran, by phase name and `output_var`."),
    every("scratch", releases::OLDEST, "Mutable per-run JSON state (`generic_loop` replies land here)."),
    every("prePopulateBranch", releases::SEED, "Branch to pre-clone (PR reviews, builds)."),
    every("variants", releases::SEED, "Reasoning variant map from the config: `{{variants.<phase>}}`."),
    every("externalizeArtifacts", releases::V0_2, "Whether artifacts are published outside the repository."),
    every("publicUrl", releases::V0_2, "Public URL of the server."),
    every("artifactBaseUrl", releases::V0_2, "Base URL of published artifacts."),
    every("approvalId", releases::V0_2, "Id of the pending approval."),
    Variable {
        name: "baseBranch",
        doc: "The base branch: the PR's base for PR-scoped workflows, else the repository's default branch.",
        since: releases::V0_5_1,
        set_for: SetFor::Named(HEAD_REF_WORKFLOWS),
    },
    every(
        "prNumber",
        releases::V0_10_2,
        "Pull request number (empty when the trigger is not a PR; before 0.10.2 the PR's number is `issueNumber`).",
    ),
    every("botMention", releases::V0_10_6, "`@` and the bot's name."),
    every(
        "baseBranch",
        releases::V0_12_2,
        "The base branch: the PR's base for PR-scoped workflows, else the repository's default branch.",
    ),
    every("fix", releases::V0_23, "The fix settings of the server config: `{{fix.maxAttempts}}` and the other fields."),
    every(
        "dependencies",
        releases::V0_23,
        "The dependency-update settings of the server config: `{{dependencies.autoMergeMaxImpact}}`, ...",
    ),
    pr("headSha", "The PR head commit."),
    pr("prTitle", "Pull request title (before 0.23 the PR's title is `issueTitle`)."),
    pr("prLabels", "The PR's labels."),
    pr("isDraft", "Whether the PR is a draft."),
    pr("checksState", "`passing`, `failing`, `pending` or `none`."),
    pr("checksSettledPassing", "Whether the settled checks pass."),
    pr("settledCheckCount", "How many checks have settled."),
    pr("mayMerge", "Whether the merge policy allows merging."),
    pr("mayMergeReason", "Why merging is or is not allowed."),
    pr("baseChecksState", "The checks state of the base branch: `passing`, `failing`, `pending` or `none`."),
    pr("failedChecks", "The failed checks, as text (may be empty)."),
    pr("ciSection", "The CI failure section for the prompt (may be empty)."),
    pr("ciLogsAvailable", "Whether CI logs could be fetched."),
    pr("ciLogsUnavailable", "Whether CI logs could not be fetched."),
    pr("attempt", "The fix attempt."),
    pr("maxAttempts", "The most fix attempts."),
    pr("priorAttempts", "Notes of earlier attempts."),
    pr("priorNotes", "The notes file of earlier attempts, as text."),
    pr("notesFile", "`.git/lastlight-notes`."),
    pr("verifyScript", "`.git/lastlight-verify.sh`."),
    pr("flakyDeferrals", "How often a flaky failure was deferred."),
    pr("maxFlakyDeferrals", "The most deferrals of a flaky failure."),
    pr("flakyPromoted", "Whether a flaky failure was promoted to a real one."),
    pr("prState", "The whole PR snapshot."),
];

impl Variable {
    /// Whether it is set for a run of the workflow `name` (PR-scoped or not), at a release
    /// that has it.
    pub fn set_for_run(&self, name: Option<&str>, pr_scoped: bool) -> bool {
        match self.set_for {
            SetFor::Every => true,
            SetFor::Named(names) => name.is_some_and(|n| names.contains(&n)),
            SetFor::PrScoped => pr_scoped,
        }
    }
}

/// Workflows the server treats as PR-scoped without `pr_scoped: true` (with a warning), from 0.23 on.
pub const LEGACY_PR_SCOPED: &[&str] = &["pr-fix", "dependabot-ci-fix", "dependabot-pr-merge", "pr-review"];

/// Fields of the object variables the server sets (0.23 and later), for dotted reads into them.
pub const OBJECT_FIELDS: &[(&str, &[&str])] = &[
    (
        "fix",
        &[
            "maxAttempts",
            "localIterations",
            "gateTimeoutSeconds",
            "escalateModelAfterAttempt",
            "maxCostUsd",
            "maxFlakyDeferrals",
            "retryableClasses",
        ],
    ),
    ("dependencies", &["autoMergeMaxImpact", "requireSettledChecks", "minSettledChecks", "auditComment"]),
];

/// Phase-scoped variables: set only inside some loops.
pub const LOOP_VARIABLES: &[(&str, &str)] = &[
    ("fixCycle", "The fix cycle of a `loop` phase (undefined on the first review, 0 on fix cycle 1)."),
    ("iteration", "The iteration of a `generic_loop` phase."),
    ("maxIterations", "`generic_loop.max_iterations`."),
    ("previousOutput", "The previous iteration's output in a `generic_loop` (absent with `fresh_context: true`)."),
];

/// Context variables that hold objects or arrays, which a dotted key may walk into; the others
/// are strings, numbers or booleans, where `{{issueTitle.length}}` renders empty.
pub const OBJECT_VARIABLES: &[&str] = &[
    "models",
    "variants",
    "phaseOutputs",
    "scratch",
    "issueLabels",
    "fix",
    "dependencies",
    "prState",
    "prLabels",
    "priorAttempts",
];

/// What a phase output holds, for a dotted key that walks into it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputShape {
    /// The raw output text (a phase name, or a plain `output_var`).
    Text,
    /// A reviewer `loop`'s `output_var`: `{approved, cycles}`.
    Loop,
    /// A `generic_loop`'s `output_var`: `{completed, iterations}`.
    GenericLoop,
}

impl OutputShape {
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            OutputShape::Text => &[],
            OutputShape::Loop => &["approved", "cycles"],
            OutputShape::GenericLoop => &["completed", "iterations"],
        }
    }
}

/// What `phaseOutputs[name]` holds, when exactly one phase writes it (with several, the last
/// writer wins and `OutputVarCollision` says so).
pub fn output_shape(phases: &[Phase], name: &str) -> Option<OutputShape> {
    let mut writers = phases.iter().filter(|p| p.name() == Some(name)).map(|_| OutputShape::Text).chain(
        phases.iter().filter(|p| p.output_var().and_then(Node::as_str) == Some(name)).map(|p| {
            if p.has_loop() {
                OutputShape::Loop
            } else if p.has_generic_loop() {
                OutputShape::GenericLoop
            } else {
                OutputShape::Text
            }
        }),
    );
    let shape = writers.next()?;
    writers.next().is_none().then_some(shape)
}

/// Variables of loop messages only.
pub const EVENT_VARIABLES: &[(&str, &str)] = &[
    ("cycle", "The current review cycle (loop messages only)."),
    ("maxCycles", "`loop.max_cycles` (loop messages only)."),
];
