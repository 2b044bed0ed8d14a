//! "Flow cassette v1": what a climpt agent's run needs from outside, read from YAML or JSON
//! into a typed, spanned model. Reading never fails: what does not fit becomes a [`Problem`]
//! with its `cassette/` code, and is left out of the model.
//!
//! `cassette: 1`, `agent` (the agentId), optional `verdictType`, `args` (the CLI parameters,
//! climpt's UV values), `stdin`, then `iterations`, one per iteration of climpt's loop, each
//! with the model's structured `output`, the `validators` results the iteration asks for,
//! `expect`ations and the `request` fingerprints of what the model was sent; and the run's own
//! `expect`.

use serde_json::Value as Json;

use crate::cassette::Problem;
use crate::registry::cassette as rules;
use crate::source::{Node, Span, Value, json, yaml};
use crate::util::{KeyGuess, did_you_mean, did_you_mean_key};

pub const TOP_KEYS: [&str; 9] =
    ["cassette", "agent", "provenance", "verdictType", "args", "stdin", "match", "iterations", "expect"];
pub const ITERATION_KEYS: [&str; 4] = ["output", "validators", "expect", "request"];
/// The fingerprint components of what an iteration sends the model: its prompt, the system
/// prompt and the output schema.
pub const REQUEST_KEYS: [&str; 3] = ["prompt", "system", "schema"];
pub const VALIDATOR_KEYS: [&str; 4] = ["exitCode", "stdout", "stderr", "params"];
pub const ITERATION_EXPECT_KEYS: [&str; 5] = ["step", "intent", "route", "prompt", "verdict"];
pub const RUN_EXPECT_KEYS: [&str; 4] = ["outcome", "iterations", "step", "error"];
pub const PROMPT_EXPECT_KEYS: [&str; 2] = ["contains", "notContains"];
/// How a run ends, as `expect.outcome` names it.
pub const OUTCOMES: [&str; 3] = ["completed", "failed", "maxIterations"];

#[derive(Debug, Default)]
pub struct FlowCassette {
    pub agent: Option<(String, Span)>,
    pub verdict_type: Option<(String, Span)>,
    /// The CLI parameters, in source order.
    pub args: Vec<(String, Json)>,
    pub stdin: Option<String>,
    pub iterations: Vec<Iteration>,
    /// The `iterations` key, for a run that needs more than are recorded.
    pub iterations_key: Option<Span>,
    pub expect: Vec<Expectation>,
    /// `match.onDrift: fail`: drift fails the run, as `--strict` makes it.
    pub drift_fails: bool,
    pub problems: Vec<Problem>,
}

#[derive(Clone, Debug)]
pub struct Iteration {
    pub span: Span,
    /// `None`: the model gave no structured output; `Some` with the value and its span.
    pub output: Option<(Json, Span)>,
    /// The output as written, for the spans of its parts.
    pub output_node: Option<Node>,
    pub validators: Vec<ValidatorResult>,
    pub expect: Vec<Expectation>,
    /// The `request` fingerprints recorded with the iteration: (component, digest, its span).
    pub request: Vec<(String, Json, Span)>,
    /// The `request` key, when the iteration has one.
    pub request_span: Option<Span>,
}

#[derive(Clone, Debug)]
pub struct ValidatorResult {
    pub id: String,
    /// The validator's key in `validators:`.
    pub span: Span,
    pub exit_code: i64,
    pub stdout: String,
    pub stderr: String,
    /// Extracted parameters, as given (they win over what the runtime extracts).
    pub params: serde_json::Map<String, Json>,
}

/// One expectation: `key` (`step`, `intent`, `route`, `prompt.contains`, `outcome`, …) and the
/// value expected.
#[derive(Clone, Debug)]
pub struct Expectation {
    pub key: String,
    pub value: Json,
    pub span: Span,
}

impl FlowCassette {
    /// How many expectations the cassette holds.
    pub fn expectation_count(&self) -> usize {
        self.expect.len() + self.iterations.iter().map(|i| i.expect.len()).sum::<usize>()
    }
}

/// Reads a flow cassette from its text (`json` picks the JSON reader); the syntax errors come
/// as `MalformedTurn` problems.
pub fn read(text: &str, json_syntax: bool) -> FlowCassette {
    let parsed = if json_syntax { json::parse(text) } else { yaml::parse(text) };
    let mut reader = Reader { problems: Vec::new() };
    for error in &parsed.errors {
        reader.problem(rules::MalformedTurn, error.span, error.message.clone());
    }
    let mut cassette = match &parsed.root {
        Some(root) if root.as_map().is_some() => reader.cassette(root),
        Some(root) => {
            let message = "a flow cassette is a mapping with `cassette: 1`, `agent` and `iterations`";
            reader.problem(rules::MalformedTurn, root.span, message);
            FlowCassette::default()
        }
        None => {
            if parsed.errors.is_empty() {
                reader.problem(
                    rules::MalformedTurn,
                    Span::empty(0),
                    "the cassette is empty; start it with `cassette: 1`",
                );
            }
            FlowCassette::default()
        }
    };
    cassette.problems = reader.problems;
    cassette
}

struct Reader {
    problems: Vec<Problem>,
}

impl Reader {
    fn problem(&mut self, rule: &'static str, span: Span, message: impl Into<String>) {
        self.problems.push(Problem { rule, span, message: message.into(), suggestion: None });
    }

    fn keys(&mut self, node: &Node, allowed: &[&str], what: &str) {
        for entry in node.as_map().unwrap_or_default() {
            let key = entry.key.scalar_text();
            if allowed.contains(&key.as_str()) {
                continue;
            }
            let guess = did_you_mean_key(&key, allowed.iter().copied(), node.keys());
            let suggestion = KeyGuess::rename(guess).map(str::to_string);
            let hint = match guess {
                Some(KeyGuess { name, taken: false }) => format!("; did you mean `{name}`?"),
                Some(KeyGuess { name, taken: true }) => format!(" (`{name}` is set already)"),
                None => String::new(),
            };
            let message = format!("unknown key `{key}` in {what}: the runtime never reads it{hint}");
            self.problems.push(Problem { rule: rules::UnknownKey, span: entry.key.span, message, suggestion });
        }
    }

    fn string(&mut self, node: &Node, what: &str) -> Option<(String, Span)> {
        match node.as_str() {
            Some(text) => Some((text.to_string(), node.span)),
            None => {
                let message = format!("{what} must be a string, found {}", node.type_name());
                self.problem(rules::MalformedTurn, node.span, message);
                None
            }
        }
    }

    fn cassette(&mut self, root: &Node) -> FlowCassette {
        self.keys(root, &TOP_KEYS, "a flow cassette");
        let mut out = FlowCassette::default();
        match root.get("cassette").map(|n| (n, n.as_i64())) {
            Some((_, Some(crate::cassette::FORMAT_VERSION))) => {}
            Some((node, Some(version))) => {
                let message = format!(
                    "cassette format {version} is not supported; this stagelint reads format {}",
                    crate::cassette::FORMAT_VERSION
                );
                self.problem(rules::InvalidVersion, node.span, message);
            }
            Some((node, None)) => {
                self.problem(rules::InvalidVersion, node.span, "`cassette` is the format version, the number 1")
            }
            None => self.problem(
                rules::InvalidVersion,
                Span::empty(root.span.start),
                "missing `cassette: 1` (the format version)",
            ),
        }
        match root.get("agent") {
            Some(node) => out.agent = self.string(node, "`agent` (the agentId)"),
            None => self.problem(
                rules::MalformedTurn,
                Span::empty(root.span.start),
                "missing `agent:` (the agentId this cassette replays)",
            ),
        }
        if let Some(node) = root.get("verdictType") {
            out.verdict_type = self.string(node, "`verdictType`");
        }
        if let Some(node) = root.get("args") {
            match node.as_map() {
                Some(entries) => {
                    out.args =
                        entries.iter().filter_map(|e| Some((e.key_str()?.to_string(), e.value.to_json()))).collect()
                }
                None => self.problem(
                    rules::MalformedTurn,
                    node.span,
                    "`args` maps agent.json parameter names to their values",
                ),
            }
        }
        if let Some(node) = root.get("stdin") {
            out.stdin = self.string(node, "`stdin`").map(|(text, _)| text);
        }
        if let Some(node) = root.get("match") {
            if node.as_map().is_some() {
                self.keys(node, &["onDrift"], "`match`");
                out.drift_fails = node.get("onDrift").is_some_and(|mode| self.drift_mode(mode));
            } else {
                self.problem(rules::MalformedTurn, node.span, "`match` is a mapping such as `{onDrift: fail}`");
            }
        }
        out.iterations_key = root.entry("iterations").map(|e| e.key.span);
        match root.get("iterations").map(|n| (n, n.as_seq())) {
            Some((_, Some(items))) => out.iterations = items.iter().filter_map(|item| self.iteration(item)).collect(),
            Some((node, None)) => {
                self.problem(rules::MalformedTurn, node.span, "`iterations` is a list, one entry per iteration")
            }
            None => self.problem(
                rules::MalformedTurn,
                Span::empty(root.span.start),
                "missing `iterations:` (what the model answers, one entry per iteration)",
            ),
        }
        if let Some(node) = root.get("expect") {
            out.expect = self.expectations(node, &RUN_EXPECT_KEYS, "the run's `expect`");
        }
        out
    }

    fn iteration(&mut self, node: &Node) -> Option<Iteration> {
        if node.as_map().is_none() {
            let message = format!("an iteration is a mapping with `output:`, found {}", node.type_name());
            self.problem(rules::MalformedTurn, node.span, message);
            return None;
        }
        self.keys(node, &ITERATION_KEYS, "an iteration");
        // `output: null` is no structured output, as an absent one.
        let output = node.get("output").filter(|o| !matches!(o.value, Value::Null)).map(|o| (o.to_json(), o.span));
        let mut validators = Vec::new();
        if let Some(list) = node.get("validators") {
            match list.as_map() {
                Some(entries) => {
                    for entry in entries {
                        let Some(id) = entry.key_str() else { continue };
                        if let Some(result) = self.validator(id, entry.key.span, &entry.value) {
                            validators.push(result);
                        }
                    }
                }
                None => self.problem(
                    rules::MalformedTurn,
                    list.span,
                    "`validators` maps validator ids to `{exitCode, stdout}`",
                ),
            }
        }
        let expect = node
            .get("expect")
            .map(|e| self.expectations(e, &ITERATION_EXPECT_KEYS, "an iteration's `expect`"))
            .unwrap_or_default();
        let (request, request_span) = match node.entry("request") {
            Some(entry) => (self.request(&entry.value), Some(entry.key.span)),
            None => (Vec::new(), None),
        };
        Some(Iteration {
            span: node.span,
            output,
            output_node: node.get("output").cloned(),
            validators,
            expect,
            request,
            request_span,
        })
    }

    /// `match.onDrift`: `fail` (true) or `warn`.
    fn drift_mode(&mut self, node: &Node) -> bool {
        let modes = crate::cassette::DRIFT_MODES;
        match node.as_str() {
            Some(mode) if modes.contains(&mode) => mode == "fail",
            _ => {
                let text = node.scalar_text();
                let suggestion = did_you_mean(&text, modes).map(str::to_string);
                let message = format!("`{text}` is not a valid `onDrift`; expected one of {}", modes.join(", "));
                self.problems.push(Problem { rule: rules::InvalidValue, span: node.span, message, suggestion });
                false
            }
        }
    }

    /// `request`: the fingerprints of what the iteration sent the model, by component.
    fn request(&mut self, node: &Node) -> Vec<(String, Json, Span)> {
        let Some(entries) = node.as_map() else {
            let message = "`request` maps fingerprint components (`prompt`, `system`, `schema`) to digests";
            self.problem(rules::MalformedTurn, node.span, message);
            return Vec::new();
        };
        self.keys(node, &REQUEST_KEYS, "`request`");
        let mut out = Vec::new();
        for entry in entries {
            let Some(key) = entry.key_str().filter(|k| REQUEST_KEYS.contains(k)) else { continue };
            if let Some((digest, span)) = self.string(&entry.value, &format!("`request.{key}` (a digest)")) {
                out.push((key.to_string(), Json::String(digest), span));
            }
        }
        out
    }

    fn validator(&mut self, id: &str, span: Span, node: &Node) -> Option<ValidatorResult> {
        if node.as_map().is_none() {
            let message =
                format!("`validators.{id}` is a mapping `{{exitCode, stdout, stderr}}`, found {}", node.type_name());
            self.problem(rules::MalformedTurn, node.span, message);
            return None;
        }
        self.keys(node, &VALIDATOR_KEYS, &format!("`validators.{id}`"));
        let exit_code = match node.get("exitCode") {
            Some(code) => match code.as_i64() {
                Some(n) => n,
                None => {
                    let message = format!("`validators.{id}.exitCode` must be an integer");
                    self.problem(rules::InvalidValue, code.span, message);
                    return None;
                }
            },
            None => 0,
        };
        let text = |key: &str| node.get(key).map(|n| n.scalar_text()).unwrap_or_default();
        let params = match node.get("params").map(Node::to_json) {
            Some(Json::Object(map)) => map,
            Some(_) => {
                self.problem(
                    rules::MalformedTurn,
                    node.span,
                    format!("`validators.{id}.params` maps parameter names to values"),
                );
                serde_json::Map::new()
            }
            None => serde_json::Map::new(),
        };
        Some(ValidatorResult {
            id: id.to_string(),
            span,
            exit_code,
            stdout: text("stdout"),
            stderr: text("stderr"),
            params,
        })
    }

    fn expectations(&mut self, node: &Node, allowed: &[&str], what: &str) -> Vec<Expectation> {
        let Some(entries) = node.as_map() else {
            self.problem(
                rules::MalformedTurn,
                node.span,
                format!("{what} is a mapping such as `{{step: initial.issue}}`"),
            );
            return Vec::new();
        };
        self.keys(node, allowed, what);
        let mut out = Vec::new();
        for entry in entries {
            let Some(key) = entry.key_str().filter(|k| allowed.contains(k)) else { continue };
            if key == "prompt" {
                let Some(parts) = entry.value.as_map() else {
                    self.problem(
                        rules::MalformedTurn,
                        entry.value.span,
                        "`prompt` is `{contains: [...], notContains: [...]}`",
                    );
                    continue;
                };
                self.keys(&entry.value, &PROMPT_EXPECT_KEYS, "`expect.prompt`");
                for part in parts {
                    let Some(which) = part.key_str().filter(|k| PROMPT_EXPECT_KEYS.contains(k)) else { continue };
                    let texts: Vec<&Node> = match part.value.as_seq() {
                        Some(items) => items.iter().collect(),
                        None => vec![&part.value],
                    };
                    for text in texts {
                        if let Some((value, span)) = self.string(text, &format!("`prompt.{which}`")) {
                            out.push(Expectation { key: format!("prompt.{which}"), value: Json::String(value), span });
                        }
                    }
                }
                continue;
            }
            if key == "outcome"
                && let Some(value) = entry.value.as_str()
                && !OUTCOMES.contains(&value)
            {
                let suggestion = did_you_mean(value, OUTCOMES).map(str::to_string);
                let message = format!("`{value}` is not a run outcome; expected one of {}", OUTCOMES.join(", "));
                self.problems.push(Problem { rule: rules::InvalidValue, span: entry.value.span, message, suggestion });
                continue;
            }
            let value = match &entry.value.value {
                Value::Null => Json::Null,
                _ => entry.value.to_json(),
            };
            out.push(Expectation { key: key.to_string(), value, span: entry.value.span });
        }
        out
    }
}
