//! A workflow as the engine holds it after its schema parsed it: the phases and the fields the
//! scheduler and the phase bodies read, with the schema's defaults applied (`type: agent`,
//! `trigger_rule: all_success`) and the spans findings point at.

use serde_json::Value;

use crate::families::lastlight::model::{WorkflowDoc, phases, template_region};
use crate::source::{Node, Span};

/// A template string of the YAML, with where its text is in the file.
#[derive(Clone, Debug, Default)]
pub struct Text {
    pub text: String,
    /// The node's span, quotes included.
    pub span: Span,
    /// Where the template text starts in the file when it is written there byte for byte
    /// (plain and quoted scalars without escapes); `None` for block scalars and escapes.
    pub at: Option<usize>,
}

#[derive(Clone, Debug, Default)]
pub struct Workflow {
    pub name: String,
    pub name_span: Span,
    pub phases: Vec<Phase>,
    pub final_message: Option<Text>,
}

#[derive(Clone, Debug, Default)]
pub struct Phase {
    pub name: String,
    pub span: Span,
    pub label: Option<String>,
    /// `type`, `agent` when absent.
    pub kind: String,
    pub prompt: Option<(String, Span)>,
    pub skill: Option<String>,
    pub skills: Vec<String>,
    pub model: Option<Text>,
    pub variant: Option<Text>,
    pub approval_gate: Option<String>,
    pub approval_gate_message: Option<Text>,
    /// `messages.*` by key.
    pub messages: Vec<(String, Text)>,
    pub review_loop: Option<ReviewLoop>,
    pub generic_loop: Option<GenericLoop>,
    pub blocked_rule: Option<OutputRule>,
    pub ready_rule: bool,
    pub requires_marker: Option<String>,
    pub set_phase: Option<String>,
    pub depends_on: Vec<String>,
    pub trigger_rule: String,
    pub output_var: Option<String>,
    pub command: Option<Text>,
    pub script: Option<Text>,
    pub skip_if: Vec<String>,
    pub requires_sandbox: Option<String>,
    pub sandbox_image: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct ReviewLoop {
    pub max_cycles: i64,
    pub fix_prompt: (String, Span),
    pub fix_model: Option<Text>,
    pub fix_variant: Option<Text>,
    pub re_review_prompt: (String, Span),
    pub approval_gate: Option<String>,
    pub messages: Vec<(String, Text)>,
}

#[derive(Clone, Debug, Default)]
pub struct GenericLoop {
    pub max_iterations: Budget,
    pub until: Option<(String, Span)>,
    pub until_bash: Option<(String, Span)>,
    pub interactive: bool,
    pub gate_message: Option<Text>,
    pub gate_kind: Option<String>,
    pub scratch_key: Option<String>,
    pub fresh_context: bool,
    /// `on_soft_failure`: retries and what then (`fail` or `complete`).
    pub soft_failure: (i64, String),
    pub span: Span,
}

/// A number, or `{ from, default }` read from the context (the current engine).
#[derive(Clone, Debug, Default)]
pub enum Budget {
    Fixed(i64),
    From {
        from: String,
        default: i64,
    },
    #[default]
    None,
}

#[derive(Clone, Debug, Default)]
pub struct OutputRule {
    pub action: String,
    pub message: Option<Text>,
    pub unless_label: Option<String>,
    pub unless_title_matches: Option<String>,
    pub bypass_message: Option<Text>,
}

impl Workflow {
    /// The workflow of a parsed file (one the loader accepts: the caller has checked).
    pub fn read(doc: &WorkflowDoc) -> Workflow {
        let Some(root) = doc.root else { return Workflow::default() };
        let text = &doc.file.text;
        let name_node = root.get("name");
        Workflow {
            name: name_node.and_then(Node::as_str).unwrap_or_default().to_string(),
            name_span: name_node.map_or(Span::empty(0), |n| n.span),
            phases: phases(root).iter().map(|p| read_phase(p.node, text)).collect(),
            final_message: root.get("final_message").and_then(|n| template(n, text)),
        }
    }

    pub fn phase(&self, name: &str) -> Option<&Phase> {
        self.phases.iter().find(|p| p.name == name)
    }

    /// Whether any phase declares `depends_on` (the seed-era engine then runs a DAG).
    pub fn has_dependencies(&self) -> bool {
        self.phases.iter().any(|p| !p.depends_on.is_empty())
    }
}

impl Phase {
    /// `skills`, else `[skill]` (`phaseSkillNames`).
    pub fn skill_names(&self) -> Vec<String> {
        if !self.skills.is_empty() {
            return self.skills.clone();
        }
        self.skill.iter().cloned().collect()
    }

    pub fn message(&self, key: &str) -> Option<&Text> {
        self.messages.iter().find(|(k, _)| k == key).map(|(_, t)| t)
    }
}

impl ReviewLoop {
    pub fn message(&self, key: &str) -> Option<&Text> {
        self.messages.iter().find(|(k, _)| k == key).map(|(_, t)| t)
    }
}

fn string(node: &Node, key: &str) -> Option<String> {
    node.get(key).and_then(Node::as_str).map(str::to_string)
}

fn spanned(node: &Node, key: &str) -> Option<(String, Span)> {
    node.get(key).and_then(|n| n.as_str().map(|s| (s.to_string(), n.span)))
}

fn boolean(node: &Node, key: &str) -> bool {
    matches!(node.get(key).map(|n| &n.value), Some(crate::source::Value::Bool(true)))
}

/// A template string, with where its text is in `file_text` when the scalar holds it as written.
fn template(node: &Node, file_text: &str) -> Option<Text> {
    let text = node.as_str()?.to_string();
    let region = template_region(file_text, node);
    let written = file_text.get(region.start..region.end);
    let at = (written == Some(text.as_str())).then_some(region.start);
    Some(Text { text, span: node.span, at })
}

fn messages(node: Option<&Node>, file_text: &str) -> Vec<(String, Text)> {
    node.and_then(Node::as_map)
        .unwrap_or_default()
        .iter()
        .filter_map(|e| Some((e.key_str()?.to_string(), template(&e.value, file_text)?)))
        .collect()
}

fn budget(node: Option<&Node>) -> Budget {
    match node {
        Some(n) => match n.as_i64() {
            Some(v) => Budget::Fixed(v),
            None => match (n.get("from").and_then(Node::as_str), n.get("default").and_then(Node::as_i64)) {
                (Some(from), Some(default)) => Budget::From { from: from.to_string(), default },
                _ => Budget::None,
            },
        },
        None => Budget::None,
    }
}

fn read_phase(node: &Node, text: &str) -> Phase {
    let name_node = node.get("name");
    let on_output = node.get("on_output");
    let blocked = on_output.and_then(|o| o.get("contains_BLOCKED"));
    Phase {
        name: name_node.and_then(Node::as_str).unwrap_or_default().to_string(),
        span: name_node.map_or(node.span, |n| n.span),
        label: string(node, "label"),
        kind: string(node, "type").unwrap_or_else(|| "agent".into()),
        prompt: spanned(node, "prompt"),
        skill: string(node, "skill"),
        skills: node
            .get("skills")
            .and_then(Node::as_seq)
            .map(|s| s.iter().filter_map(|n| n.as_str().map(str::to_string)).collect())
            .unwrap_or_default(),
        model: node.get("model").and_then(|n| template(n, text)),
        variant: node.get("variant").and_then(|n| template(n, text)),
        approval_gate: string(node, "approval_gate"),
        approval_gate_message: node.get("approval_gate_message").and_then(|n| template(n, text)),
        messages: messages(node.get("messages"), text),
        review_loop: node.get("loop").map(|l| read_loop(l, text)),
        generic_loop: node.get("generic_loop").map(|l| read_generic_loop(l, text)),
        blocked_rule: blocked.map(|rule| OutputRule {
            action: string(rule, "action").unwrap_or_default(),
            message: rule.get("message").and_then(|n| template(n, text)),
            unless_label: string(rule, "unless_label"),
            unless_title_matches: string(rule, "unless_title_matches"),
            bypass_message: rule.get("bypass_message").and_then(|n| template(n, text)),
        }),
        ready_rule: on_output.is_some_and(|o| o.get("contains_READY").is_some()),
        requires_marker: on_output.and_then(|o| string(o, "requires_marker")),
        set_phase: node.get("on_success").and_then(|s| string(s, "set_phase")),
        depends_on: node
            .get("depends_on")
            .and_then(Node::as_seq)
            .map(|s| s.iter().filter_map(|n| n.as_str().map(str::to_string)).collect())
            .unwrap_or_default(),
        trigger_rule: string(node, "trigger_rule").unwrap_or_else(|| "all_success".into()),
        output_var: string(node, "output_var"),
        command: node.get("command").and_then(|n| template(n, text)),
        script: node.get("script").and_then(|n| template(n, text)),
        skip_if: match node.get("skip_if") {
            Some(n) => match n.as_str() {
                Some(s) => vec![s.to_string()],
                None => n.as_seq().unwrap_or_default().iter().filter_map(|n| n.as_str().map(str::to_string)).collect(),
            },
            None => Vec::new(),
        },
        requires_sandbox: string(node, "requires_sandbox"),
        sandbox_image: string(node, "sandbox_image"),
    }
}

fn read_loop(node: &Node, text: &str) -> ReviewLoop {
    let changes = node.get("on_request_changes");
    let path = |key: &str| changes.and_then(|c| spanned(c, key)).unwrap_or_default();
    ReviewLoop {
        max_cycles: node.get("max_cycles").and_then(Node::as_i64).unwrap_or(1),
        fix_prompt: path("fix_prompt"),
        fix_model: changes.and_then(|c| c.get("fix_model")).and_then(|n| template(n, text)),
        fix_variant: changes.and_then(|c| c.get("fix_variant")).and_then(|n| template(n, text)),
        re_review_prompt: path("re_review_prompt"),
        approval_gate: string(node, "approval_gate"),
        messages: messages(node.get("messages"), text),
    }
}

fn read_generic_loop(node: &Node, text: &str) -> GenericLoop {
    let soft = node.get("on_soft_failure");
    GenericLoop {
        max_iterations: budget(node.get("max_iterations")),
        until: spanned(node, "until"),
        until_bash: spanned(node, "until_bash"),
        interactive: boolean(node, "interactive"),
        gate_message: node.get("gate_message").and_then(|n| template(n, text)),
        gate_kind: string(node, "gate_kind"),
        scratch_key: string(node, "scratch_key"),
        fresh_context: boolean(node, "fresh_context"),
        soft_failure: (
            soft.and_then(|s| s.get("retries")).and_then(Node::as_i64).unwrap_or(0),
            soft.and_then(|s| string(s, "then")).unwrap_or_else(|| "fail".into()),
        ),
        span: node.span,
    }
}

/// A budget resolved against the context (`resolveTemplatedNumber`): a positive number from
/// `from`, rounded up, else `default`.
pub fn resolve_budget(budget: &Budget, ctx: &crate::runtime::lastlight::value::Ctx) -> Option<i64> {
    match budget {
        Budget::Fixed(n) => Some(*n),
        Budget::None => None,
        Budget::From { from, default } => {
            let raw = crate::runtime::lastlight::render::walk_key(ctx, from);
            let n = match &raw {
                Some(Value::Number(n)) => n.as_f64(),
                Some(Value::String(s)) => crate::runtime::lastlight::value::number_of_text(s),
                _ => None,
            };
            match n {
                Some(n) if n.is_finite() && n > 0.0 => Some(n.ceil() as i64),
                _ => Some(*default),
            }
        }
    }
}
