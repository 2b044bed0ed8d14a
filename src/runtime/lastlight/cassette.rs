//! The workflow cassette (`schemas/lastlight-cassette.schema.json`): which workflow it replays,
//! the trigger that started the run, the server's settings, the recorded output of each phase
//! execution (by the label the engine gives it: `reviewer`, `reviewer_fix_1`,
//! `implement_iter_2`), what the run needs from outside (`until_bash` exit codes, answers at
//! approval and reply gates) and what the run must do. Read into a typed model with spans, and
//! every structural problem as a `cassette/` finding.

use serde_json::{Map, Value};

use crate::registry::cassette as rules;
use crate::source::{Node, Span};
use crate::template::lastlight::Engine;

/// The cassette format's version.
pub const VERSION: i64 = 1;

/// One read cassette.
#[derive(Debug, Default)]
pub struct Cassette {
    pub workflow: Option<(String, Span)>,
    pub engine: Option<(Engine, Span)>,
    /// The request that started the run (`owner`, `repo`, `issueNumber`, …).
    pub trigger: Map<String, Value>,
    pub server: Map<String, Value>,
    /// Context values to set after the engine's own (any key).
    pub context: Map<String, Value>,
    pub executions: Vec<Execution>,
    pub gates: Vec<Gate>,
    pub expect: Expect,
    pub problems: Vec<Problem>,
    /// Where the top level's keys are, for findings about a whole section.
    pub keys: Vec<(String, Span)>,
}

/// One recorded execution of a phase (or a loop's review, fix or iteration).
#[derive(Clone, Debug, Default)]
pub struct Execution {
    /// The engine's label for it.
    pub label: String,
    /// The label's key in the cassette.
    pub span: Span,
    /// Which execution of the label it is (0 for the first), when the label lists several.
    pub index: usize,
    pub output: String,
    pub success: bool,
    pub error: Option<String>,
    pub stop_reason: Option<String>,
    /// The exit code of the loop's `until_bash` after this iteration.
    pub until_bash: Option<(i64, Span)>,
    /// What `reviewer-verdict.md` says (the current engine reads it when the output has no
    /// `VERDICT:` line).
    pub verdict_file: Option<String>,
    pub expect: ExecutionExpect,
}

/// What an execution must show.
#[derive(Clone, Debug, Default)]
pub struct ExecutionExpect {
    pub prompt_contains: Vec<(String, Span)>,
    pub prompt_omits: Vec<(String, Span)>,
    pub verdict: Option<(String, Span)>,
    pub blocked: Option<(bool, Span)>,
}

/// The answers given at one gate, in the order the run pauses there.
#[derive(Clone, Debug)]
pub struct Gate {
    pub name: String,
    pub span: Span,
    pub answers: Vec<(Answer, Span)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Approve,
    Reject { reason: Option<String> },
    Reply { text: String, sender: Option<String> },
}

/// What the whole run must show.
#[derive(Clone, Debug, Default)]
pub struct Expect {
    pub status: Option<(String, Span)>,
    /// Per phase: `succeeded`, `failed`, `skipped`, `paused`, `notRun` or `ran`.
    pub phases: Vec<(String, String, Span)>,
    /// Per loop phase: fix cycles (`loop`) or iterations (`generic_loop`).
    pub cycles: Vec<(String, i64, Span)>,
    /// `phaseOutputs` entries at the end of the run.
    pub outputs: Vec<(String, Value, Span)>,
    /// Text the run's error must contain.
    pub error: Option<(String, Span)>,
}

/// A structural problem, with its `cassette/` code.
#[derive(Clone, Debug)]
pub struct Problem {
    pub rule: &'static str,
    pub span: Span,
    pub message: String,
    pub suggestion: Option<String>,
}

pub const STATUSES: &[&str] = &["succeeded", "failed", "paused"];
pub const OUTCOMES: &[&str] = &["succeeded", "failed", "skipped", "paused", "notRun", "ran"];
pub const VERDICTS: &[&str] = &["APPROVED", "REQUEST_CHANGES"];

const TOP: &[&str] =
    &["cassette", "workflow", "engine", "trigger", "server", "context", "executions", "gates", "expect"];
pub const TRIGGER: &[&str] = &[
    "owner",
    "repo",
    "issueNumber",
    "prNumber",
    "issueTitle",
    "issueBody",
    "issueLabels",
    "commentBody",
    "sender",
    "triggerId",
    "prePopulateBranch",
    "extra",
];
pub const SERVER: &[&str] = &[
    "approval",
    "models",
    "variants",
    "botName",
    "publicUrl",
    "buildAssets",
    "sandbox",
    "qaImage",
    "runId",
    "bootstrapLabel",
    "fix",
    "dependencies",
];
pub const EXECUTION: &[&str] = &["output", "success", "error", "stopReason", "untilBash", "verdictFile", "expect"];
const EXECUTION_EXPECT: &[&str] = &["promptContains", "promptOmits", "verdict", "blocked"];
const EXPECT: &[&str] = &["status", "phases", "cycles", "outputs", "error"];

/// Reads a cassette's text (`json`: as JSON, else YAML).
pub fn read(text: &str, json: bool) -> Cassette {
    let parsed = if json { crate::source::json::parse(text) } else { crate::source::yaml::parse(text) };
    let mut cassette = Cassette::default();
    for error in &parsed.errors {
        cassette.problem(rules::MalformedTurn, error.span, error.message.clone());
    }
    let Some(root) = &parsed.root else {
        if parsed.errors.is_empty() {
            cassette.problem(
                rules::MalformedTurn,
                Span::empty(0),
                "the cassette is empty: it needs `cassette: 1` and `workflow:`",
            );
        }
        return cassette;
    };
    let Some(entries) = root.as_map() else {
        cassette.problem(rules::MalformedTurn, root.span, format!("a cassette is a mapping, not {}", root.type_name()));
        return cassette;
    };
    cassette.keys = entries.iter().filter_map(|e| e.key_str().map(|k| (k.to_string(), e.key.span))).collect();
    cassette.unknown_keys(root, TOP, "cassette");
    match root.entry("cassette") {
        Some(entry) if entry.value.as_i64() == Some(VERSION) => {}
        Some(entry) => cassette.problem(
            rules::InvalidVersion,
            entry.value.span,
            format!("this stagelint reads workflow cassettes of version {VERSION}; `cassette:` must be {VERSION}"),
        ),
        None => {
            cassette.problem(rules::InvalidVersion, Span::empty(0), "the cassette has no `cassette: 1` version line")
        }
    }
    match root.get("workflow") {
        Some(node) => match node.as_str() {
            Some(name) => cassette.workflow = Some((name.to_string(), node.span)),
            None => cassette.invalid(node, "`workflow` is the name of the workflow the cassette replays (a string)"),
        },
        None => cassette.problem(
            rules::MalformedTurn,
            Span::empty(0),
            "the cassette has no `workflow:`: name the workflow it replays",
        ),
    }
    if let Some(node) = root.get("engine") {
        match node.as_str() {
            Some("seed") => cassette.engine = Some((Engine::Seed, node.span)),
            Some("head") => cassette.engine = Some((Engine::Head, node.span)),
            _ => cassette.invalid(node, "`engine` is `seed` (the seed-era engine) or `head` (the current one)"),
        }
    }
    cassette.trigger = cassette.section(root, "trigger", TRIGGER);
    cassette.check_trigger(root);
    cassette.server = cassette.section(root, "server", SERVER);
    cassette.check_server(root);
    if let Some(node) = root.get("context") {
        match node.as_map() {
            Some(_) => cassette.context = node.to_json().as_object().cloned().unwrap_or_default(),
            None => cassette.invalid(node, "`context` maps context keys to the values the run sets"),
        }
    }
    if let Some(node) = root.get("executions") {
        cassette.read_executions(node);
    }
    if let Some(node) = root.get("gates") {
        cassette.read_gates(node);
    }
    if let Some(node) = root.get("expect") {
        cassette.read_expect(node);
    }
    cassette
}

impl Cassette {
    fn problem(&mut self, rule: &'static str, span: Span, message: impl Into<String>) {
        self.problems.push(Problem { rule, span, message: message.into(), suggestion: None });
    }

    fn invalid(&mut self, node: &Node, message: impl Into<String>) {
        self.problem(rules::InvalidValue, node.span, message);
    }

    /// `UnknownKey` for each key of `node` not in `known`, with a did-you-mean.
    fn unknown_keys(&mut self, node: &Node, known: &[&str], what: &str) {
        for entry in node.as_map().unwrap_or_default() {
            let Some(key) = entry.key_str() else { continue };
            if known.contains(&key) {
                continue;
            }
            let suggestion = crate::util::did_you_mean(key, known.iter().copied()).map(str::to_string);
            let hint = suggestion.as_deref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
            self.problems.push(Problem {
                rule: rules::UnknownKey,
                span: entry.key.span,
                message: format!("`{key}` is not a key of a workflow cassette's {what}{hint}"),
                suggestion,
            });
        }
    }

    /// A mapping section as JSON, its unknown keys reported.
    fn section(&mut self, root: &Node, key: &str, known: &[&str]) -> Map<String, Value> {
        let Some(node) = root.get(key) else { return Map::new() };
        if node.as_map().is_none() {
            self.invalid(node, format!("`{key}` is a mapping"));
            return Map::new();
        }
        self.unknown_keys(node, known, &format!("`{key}`"));
        node.to_json().as_object().cloned().unwrap_or_default()
    }

    fn check_trigger(&mut self, root: &Node) {
        let Some(trigger) = root.get("trigger") else { return };
        for entry in trigger.as_map().unwrap_or_default() {
            let value = &entry.value;
            let ok = match entry.key_str().unwrap_or_default() {
                "issueNumber" | "prNumber" => matches!(value.value, crate::source::Value::Int(n) if n >= 0),
                "issueLabels" => value.as_seq().is_some_and(|s| s.iter().all(|n| n.as_str().is_some())),
                "extra" => value.as_map().is_some(),
                _ => value.as_str().is_some(),
            };
            if !ok {
                let key = entry.key_str().unwrap_or_default();
                let want = match key {
                    "issueNumber" | "prNumber" => "a whole number",
                    "issueLabels" => "a list of label names",
                    "extra" => "a mapping (the request's `extra`: keys the workflow's templates read)",
                    _ => "a string",
                };
                self.invalid(value, format!("`trigger.{key}` is {want}, not {}", value.type_name()));
            }
        }
    }

    fn check_server(&mut self, root: &Node) {
        let Some(server) = root.get("server") else { return };
        for entry in server.as_map().unwrap_or_default() {
            let value = &entry.value;
            let key = entry.key_str().unwrap_or_default();
            let problem = match key {
                "approval" => match value.as_map() {
                    Some(gates) if gates.iter().all(|g| matches!(g.value.value, crate::source::Value::Bool(_))) => None,
                    _ => Some("`server.approval` maps gate names to `true` (the gate pauses) or `false`".to_string()),
                },
                "models" | "variants" | "fix" | "dependencies" => {
                    value.as_map().is_none().then(|| format!("`server.{key}` is a mapping"))
                }
                "qaImage" => (!matches!(value.value, crate::source::Value::Bool(_)))
                    .then(|| "`server.qaImage` is `true` or `false`".to_string()),
                "buildAssets" => (!matches!(value.as_str(), Some("repo" | "server")))
                    .then(|| "`server.buildAssets` is `repo` or `server`".to_string()),
                "sandbox" => (!matches!(value.as_str(), Some("docker" | "gondolin" | "kubernetes" | "none")))
                    .then(|| "`server.sandbox` is `docker`, `gondolin`, `kubernetes` or `none`".to_string()),
                _ => value.as_str().is_none().then(|| format!("`server.{key}` is a string")),
            };
            if let Some(message) = problem {
                self.invalid(value, message);
            }
        }
    }

    fn read_executions(&mut self, node: &Node) {
        let Some(entries) = node.as_map() else {
            self.invalid(
                node,
                "`executions` maps each execution's label (`reviewer`, `reviewer_fix_1`) to what it returned",
            );
            return;
        };
        for entry in entries {
            let Some(label) = entry.key_str() else { continue };
            let runs: Vec<&Node> = match entry.value.as_seq() {
                Some(items) => items.iter().collect(),
                None => vec![&entry.value],
            };
            for (index, run) in runs.into_iter().enumerate() {
                if let Some(execution) = self.read_execution(label, entry.key.span, index, run) {
                    self.executions.push(execution);
                }
            }
        }
    }

    fn read_execution(&mut self, label: &str, span: Span, index: usize, node: &Node) -> Option<Execution> {
        if node.as_map().is_none() {
            self.invalid(node, format!("execution `{label}` is a mapping with its `output` (or a list of them)"));
            return None;
        }
        self.unknown_keys(node, EXECUTION, &format!("execution `{label}`"));
        let mut execution = Execution { label: label.to_string(), span, index, success: true, ..Execution::default() };
        for entry in node.as_map().unwrap_or_default() {
            let value = &entry.value;
            match entry.key_str().unwrap_or_default() {
                "output" => match value.as_str() {
                    Some(text) => execution.output = text.to_string(),
                    None => self.invalid(value, "`output` is the text the phase returned"),
                },
                "success" => match value.value {
                    crate::source::Value::Bool(b) => execution.success = b,
                    _ => self.invalid(value, "`success` is `true` or `false`"),
                },
                "error" => match value.as_str() {
                    Some(text) => execution.error = Some(text.to_string()),
                    None => self.invalid(value, "`error` is the text of the execution's error"),
                },
                "stopReason" => match value.as_str() {
                    Some(text) => execution.stop_reason = Some(text.to_string()),
                    None => self.invalid(value, "`stopReason` is a string (`unknown`, `error_truncated`, …)"),
                },
                "untilBash" => match value.as_i64() {
                    Some(code) if (0..=255).contains(&code) => execution.until_bash = Some((code, value.span)),
                    _ => self
                        .invalid(value, "`untilBash` is the exit code of the loop's `until_bash` command (0 to 255)"),
                },
                "verdictFile" => match value.as_str() {
                    Some(v) if VERDICTS.contains(&v) => execution.verdict_file = Some(v.to_string()),
                    _ => self.invalid(value, "`verdictFile` is `APPROVED` or `REQUEST_CHANGES`"),
                },
                "expect" => execution.expect = self.read_execution_expect(value),
                _ => {}
            }
        }
        Some(execution)
    }

    fn read_execution_expect(&mut self, node: &Node) -> ExecutionExpect {
        let mut expect = ExecutionExpect::default();
        if node.as_map().is_none() {
            self.invalid(node, "an execution's `expect` is a mapping");
            return expect;
        }
        self.unknown_keys(node, EXECUTION_EXPECT, "execution `expect`");
        for entry in node.as_map().unwrap_or_default() {
            let value = &entry.value;
            match entry.key_str().unwrap_or_default() {
                key @ ("promptContains" | "promptOmits") => {
                    let texts = self.texts(value, key);
                    if key == "promptContains" {
                        expect.prompt_contains = texts;
                    } else {
                        expect.prompt_omits = texts;
                    }
                }
                "verdict" => match value.as_str() {
                    Some(v) if VERDICTS.contains(&v) => expect.verdict = Some((v.to_string(), value.span)),
                    _ => self.invalid(value, "`verdict` is `APPROVED` or `REQUEST_CHANGES`"),
                },
                "blocked" => match value.value {
                    crate::source::Value::Bool(b) => expect.blocked = Some((b, value.span)),
                    _ => self.invalid(value, "`blocked` is `true` (the BLOCKED rule fails the workflow) or `false`"),
                },
                _ => {}
            }
        }
        expect
    }

    /// A string or a list of strings.
    fn texts(&mut self, node: &Node, key: &str) -> Vec<(String, Span)> {
        let items: Vec<&Node> = match node.as_seq() {
            Some(items) => items.iter().collect(),
            None => vec![node],
        };
        let mut out = Vec::new();
        for item in items {
            match item.as_str() {
                Some(text) if !text.is_empty() => out.push((text.to_string(), item.span)),
                _ => self.invalid(item, format!("`{key}` takes non-empty strings")),
            }
        }
        out
    }

    fn read_gates(&mut self, node: &Node) {
        let Some(entries) = node.as_map() else {
            self.invalid(
                node,
                "`gates` maps gate names to their answers (`approve`, `{ reject: why }`, `{ reply: text }`)",
            );
            return;
        };
        for entry in entries {
            let Some(name) = entry.key_str() else { continue };
            let items: Vec<&Node> = match entry.value.as_seq() {
                Some(items) => items.iter().collect(),
                None => vec![&entry.value],
            };
            let mut answers = Vec::new();
            for item in items {
                if let Some(answer) = self.answer(item) {
                    answers.push((answer, item.span));
                }
            }
            self.gates.push(Gate { name: name.to_string(), span: entry.key.span, answers });
        }
    }

    fn answer(&mut self, node: &Node) -> Option<Answer> {
        const SHAPE: &str =
            "a gate's answer is `approve`, `reject`, `{ reject: <reason> }` or `{ reply: <text>, sender: <who> }`";
        if let Some(word) = node.as_str() {
            return match word {
                "approve" => Some(Answer::Approve),
                "reject" => Some(Answer::Reject { reason: None }),
                _ => {
                    let suggestion = crate::util::did_you_mean(word, ["approve", "reject"]).map(str::to_string);
                    self.problems.push(Problem {
                        rule: rules::InvalidValue,
                        span: node.span,
                        message: format!("`{word}`: {SHAPE}"),
                        suggestion,
                    });
                    None
                }
            };
        }
        if node.as_map().is_none() {
            self.invalid(node, SHAPE);
            return None;
        }
        self.unknown_keys(node, &["approve", "reject", "reply", "sender"], "gate answer");
        let text = |key: &str| node.get(key).and_then(Node::as_str).map(str::to_string);
        if let Some(reply) = node.get("reply") {
            return match reply.as_str() {
                Some(text_value) => Some(Answer::Reply { text: text_value.to_string(), sender: text("sender") }),
                None => {
                    self.invalid(reply, "`reply` is the text of the reply");
                    None
                }
            };
        }
        if let Some(reject) = node.get("reject") {
            if !matches!(reject.value, crate::source::Value::String(_) | crate::source::Value::Null) {
                self.invalid(reject, "`reject` is the reason for the rejection (a string), or empty");
                return None;
            }
            return Some(Answer::Reject { reason: text("reject") });
        }
        if let Some(approve) = node.get("approve") {
            if !matches!(approve.value, crate::source::Value::Bool(_) | crate::source::Value::Null) {
                self.invalid(approve, "`approve` is `true`, or empty");
                return None;
            }
            return Some(Answer::Approve);
        }
        self.invalid(node, SHAPE);
        None
    }

    fn read_expect(&mut self, node: &Node) {
        if node.as_map().is_none() {
            self.invalid(node, "`expect` is a mapping");
            return;
        }
        self.unknown_keys(node, EXPECT, "`expect`");
        for entry in node.as_map().unwrap_or_default() {
            let value = &entry.value;
            match entry.key_str().unwrap_or_default() {
                "status" => match value.as_str() {
                    Some(s) if STATUSES.contains(&s) => self.expect.status = Some((s.to_string(), value.span)),
                    other => {
                        let suggestion = other.and_then(|s| crate::util::did_you_mean(s, STATUSES.iter().copied()));
                        self.problems.push(Problem {
                            rule: rules::InvalidValue,
                            span: value.span,
                            message: "`expect.status` is `succeeded`, `failed` or `paused`".into(),
                            suggestion: suggestion.map(str::to_string),
                        });
                    }
                },
                "phases" => {
                    for phase in value.as_map().unwrap_or_default() {
                        let Some(name) = phase.key_str() else { continue };
                        match phase.value.as_str() {
                            Some(o) if OUTCOMES.contains(&o) => {
                                self.expect.phases.push((name.to_string(), o.to_string(), phase.value.span))
                            }
                            other => {
                                let suggestion =
                                    other.and_then(|s| crate::util::did_you_mean(s, OUTCOMES.iter().copied()));
                                self.problems.push(Problem {
                                    rule: rules::InvalidValue,
                                    span: phase.value.span,
                                    message: format!("a phase's expected outcome is one of {}", OUTCOMES.join(", ")),
                                    suggestion: suggestion.map(str::to_string),
                                });
                            }
                        }
                    }
                    if value.as_map().is_none() {
                        self.invalid(value, "`expect.phases` maps phase names to outcomes");
                    }
                }
                "cycles" => {
                    for phase in value.as_map().unwrap_or_default() {
                        let Some(name) = phase.key_str() else { continue };
                        match phase.value.as_i64() {
                            Some(n) if n >= 0 => self.expect.cycles.push((name.to_string(), n, phase.value.span)),
                            _ => self.invalid(&phase.value, "a loop's expected cycles are a whole number"),
                        }
                    }
                    if value.as_map().is_none() {
                        self.invalid(value, "`expect.cycles` maps loop phases to their fix cycles or iterations");
                    }
                }
                "outputs" => match value.as_map() {
                    Some(outputs) => {
                        for output in outputs {
                            let Some(name) = output.key_str() else { continue };
                            self.expect.outputs.push((name.to_string(), output.value.to_json(), output.value.span));
                        }
                    }
                    None => self.invalid(value, "`expect.outputs` maps `phaseOutputs` keys to their values"),
                },
                "error" => match value.as_str() {
                    Some(text) => self.expect.error = Some((text.to_string(), value.span)),
                    None => self.invalid(value, "`expect.error` is text the run's error contains"),
                },
                _ => {}
            }
        }
    }

    /// The recordings of `label`, in order.
    pub fn executions_of<'c>(&'c self, label: &'c str) -> impl Iterator<Item = &'c Execution> + 'c {
        self.executions.iter().filter(move |e| e.label == label)
    }

    pub fn gate(&self, name: &str) -> Option<&Gate> {
        self.gates.iter().find(|g| g.name == name)
    }

    /// The span of a top-level key (the start of the file when it is not there).
    pub fn key_span(&self, key: &str) -> Span {
        self.keys.iter().find(|(k, _)| k == key).map_or(Span::empty(0), |(_, span)| *span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_cassette() {
        let text = "cassette: 1\nworkflow: build\nengine: seed\ntrigger: { owner: o, repo: r, issueNumber: 4, issueLabels: [a] }\nserver: { approval: { post_architect: true } }\nexecutions:\n  reviewer: { output: 'VERDICT: APPROVED', expect: { verdict: APPROVED } }\n  implement_iter_1: [ { output: a, untilBash: 1 }, { output: b } ]\ngates:\n  post_architect: approve\n  explore_iter_1: [ { reply: yes, sender: bob }, { reject: no } ]\nexpect: { status: succeeded, phases: { pr: succeeded }, cycles: { reviewer: 0 } }\n";
        let c = read(text, false);
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(c.workflow.as_ref().map(|w| w.0.as_str()), Some("build"));
        assert_eq!(c.executions.len(), 3);
        assert_eq!(c.executions[2].index, 1);
        assert_eq!(c.executions[1].until_bash.map(|u| u.0), Some(1));
        assert_eq!(c.gate("explore_iter_1").map(|g| g.answers.len()), Some(2));
        assert_eq!(c.expect.status.as_ref().map(|s| s.0.as_str()), Some("succeeded"));
    }

    #[test]
    fn structural_problems() {
        let c = read(
            "cassette: 2\nworkflo: x\nexecutions: { a: { outptu: x, untilBash: 300 } }\ngates: { g: aprove }\n",
            false,
        );
        let found: Vec<(&str, Option<&str>)> = c.problems.iter().map(|p| (p.rule, p.suggestion.as_deref())).collect();
        assert!(found.contains(&(rules::UnknownKey, Some("workflow"))), "{found:?}");
        assert!(found.contains(&(rules::InvalidVersion, None)), "{found:?}");
        assert!(found.contains(&(rules::UnknownKey, Some("output"))), "{found:?}");
        assert!(found.contains(&(rules::InvalidValue, Some("approve"))), "{found:?}");
        assert!(found.iter().any(|(r, _)| *r == rules::MalformedTurn), "no workflow: {found:?}");
    }
}
