//! "Stage cassette v1": a typed, spanned view of a cassette file (YAML or JSON), read from the
//! shared spanned tree. Reading never fails: what does not fit the format becomes a
//! [`Problem`] (reported by the `cassette/` family) and is left out of the model.
//!
//! A stage cassette holds `stage`, `ctx`, `interactor`, `match`, `tools`, `checkGate`,
//! `attempts` and `expectResult`. A machine cassette holds the shared keys and `stages:`, a
//! map from stage id to that stage's `tools`/`attempts`/… (its context flows through Next).

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::runtime::provider::{Block, ProviderError, Response, Stop, ToolCall};
use crate::source::{Node, Span, Value, json, yaml};
use crate::util::did_you_mean;

pub const FORMAT_VERSION: i64 = 1;

/// A structural defect, with the `cassette/` rule name that reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    pub rule: &'static str,
    pub span: Span,
    pub message: String,
    /// A replacement for `span` (did-you-mean), when there is an obvious one.
    pub suggestion: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Approve,
    Deny,
    Defer,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::Deny => "deny",
            Decision::Defer => "defer",
        }
    }
}

/// CheckGate and Assert outcomes a cassette may script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    Retry,
    Skip,
    Fail,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Retry => "retry",
            Verdict::Skip => "skip",
            Verdict::Fail => "fail",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    Proceed,
    Retry,
    Skip,
}

#[derive(Debug, Default)]
pub struct Cassette {
    pub version: Option<(i64, Span)>,
    /// The stage cassette's own content (for a machine cassette: the shared keys).
    pub stage: StageCassette,
    /// `stages:` of a machine cassette, in source order.
    pub stages: Vec<(String, Span, StageCassette)>,
    pub problems: Vec<Problem>,
    /// The whole document as JSON, for `$ref` pointers in `expectResult`.
    pub json: Json,
}

impl Cassette {
    pub fn is_machine(&self) -> bool {
        !self.stages.is_empty()
    }

    /// The cassette for `id`: its `stages:` entry (with the shared keys as defaults), or the
    /// whole cassette when it is a stage cassette for `id`.
    pub fn for_stage(&self, id: &str) -> Option<StageCassette> {
        if let Some((_, _, stage)) = self.stages.iter().find(|(name, _, _)| name == id) {
            let mut merged = stage.clone();
            merged.ctx = self.stage.ctx.clone();
            merged.grant_default = merged.grant_default.or(self.stage.grant_default);
            merged.drift_fails = merged.drift_fails.or(self.stage.drift_fails);
            merged.check_gate = merged.check_gate.or(self.stage.check_gate);
            for (tool, fakes) in &self.stage.tools {
                merged.tools.entry(tool.clone()).or_insert_with(|| fakes.clone());
            }
            return Some(merged);
        }
        match &self.stage.stage {
            Some((name, _)) if name == id && !self.is_machine() => Some(self.stage.clone()),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct StageCassette {
    pub span: Span,
    pub stage: Option<(String, Span)>,
    pub ctx: Option<(Json, Span)>,
    pub grant_default: Option<Decision>,
    /// `match.onDrift: fail`.
    pub drift_fails: Option<bool>,
    pub check_gate: Option<(Gate, Span)>,
    pub tools: BTreeMap<String, Vec<Fake>>,
    /// The `tools:` keys with their spans, in source order.
    pub tool_keys: Vec<(String, Span)>,
    pub attempts: Vec<Attempt>,
    pub attempts_span: Option<Span>,
    pub expect_result: Option<ExpectResult>,
}

/// One entry of the closed-world `tools:` table.
#[derive(Clone, Debug)]
pub struct Fake {
    pub span: Span,
    /// `None` with `anyArgs: true`.
    pub args: Option<Json>,
    pub result: FakeResult,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FakeResult {
    pub content: String,
    pub is_error: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Attempt {
    pub span: Span,
    pub check_gate: Option<(Gate, Span)>,
    /// A scripted Assert outcome (the SM's assert hook).
    pub assert: Option<(Verdict, Span)>,
    pub turns: Vec<Turn>,
    pub expect_end: Option<ExpectEnd>,
}

#[derive(Clone, Debug)]
pub enum Reply {
    Response(Response),
    Error(ProviderError),
}

#[derive(Clone, Debug)]
pub struct Turn {
    pub span: Span,
    pub reply: Reply,
    /// Span of each tool call, by call id.
    pub call_spans: BTreeMap<String, Span>,
    pub grant: BTreeMap<String, (Decision, Span)>,
    pub results: BTreeMap<String, (FakeResult, Span)>,
    pub expect: Vec<Expect>,
    pub request: Option<Fingerprint>,
}

/// What the runtime must do with a turn (or one call of it).
#[derive(Clone, Debug)]
pub struct Expect {
    pub span: Span,
    pub branch: String,
    pub call: Option<String>,
    pub calls: Option<Vec<String>>,
    pub outcome: Option<String>,
    pub error_at: Option<String>,
}

#[derive(Clone, Debug)]
pub struct ExpectEnd {
    pub span: Span,
    pub act: Option<(String, Span)>,
    pub assert: Option<(String, Span)>,
}

#[derive(Clone, Debug)]
pub struct ExpectResult {
    pub span: Span,
    pub fields: Vec<(String, Json, Span)>,
}

/// Digests of the request the runtime sent when the turn was recorded.
#[derive(Clone, Debug)]
pub struct Fingerprint {
    pub span: Span,
    pub components: Vec<(String, Json, Span)>,
}

pub const BRANCHES: [&str; 6] = ["completion", "parseFailure", "steer", "batchRejected", "tool", "providerError"];
pub const OUTCOMES: [&str; 4] = ["dispatched", "approved", "denied", "deferred"];
pub const ACT_ENDS: [&str; 4] = ["completed", "capHit", "providerError", "gated"];
const TOP_KEYS: [&str; 11] = [
    "cassette",
    "stage",
    "provenance",
    "ctx",
    "interactor",
    "match",
    "tools",
    "checkGate",
    "attempts",
    "expectResult",
    "stages",
];
const STAGE_ENTRY_KEYS: [&str; 6] = ["tools", "checkGate", "attempts", "expectResult", "interactor", "match"];
const ATTEMPT_KEYS: [&str; 5] = ["attempt", "checkGate", "assert", "turns", "expectEnd"];
const TURN_KEYS: [&str; 6] = ["response", "error", "grant", "results", "expect", "request"];
const EXPECT_KEYS: [&str; 5] = ["branch", "call", "calls", "outcome", "errorAt"];

/// Whether `name` is a cassette file name.
pub fn is_cassette_name(name: &str) -> bool {
    [".cassette.yaml", ".cassette.yml", ".cassette.json"].iter().any(|suffix| name.ends_with(suffix))
}

/// Reads a cassette from its text (`json` picks the JSON reader).
pub fn read(text: &str, json_syntax: bool) -> (Cassette, Vec<crate::source::SyntaxError>) {
    let parsed = if json_syntax { json::parse(text) } else { yaml::parse(text) };
    let mut reader = Reader { problems: Vec::new() };
    let cassette = match &parsed.root {
        Some(root) if root.as_map().is_some() => reader.cassette(root),
        Some(root) => {
            reader.problem(
                "MalformedTurn",
                root.span,
                "a cassette is a mapping with `cassette: 1`, `stage` and `attempts`",
            );
            Cassette::default()
        }
        None => Cassette::default(),
    };
    let mut cassette = cassette;
    cassette.problems = reader.problems;
    cassette.json = parsed.root.as_ref().map_or(Json::Null, Node::to_json);
    (cassette, parsed.errors)
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
            let Some(key) = entry.key_str() else { continue };
            if allowed.contains(&key) {
                continue;
            }
            let suggestion = did_you_mean(key, allowed.iter().copied()).map(str::to_string);
            let hint = suggestion.as_ref().map_or(String::new(), |s| format!("; did you mean `{s}`?"));
            let message = format!("unknown key `{key}` in {what}{hint} The runtime would never read it.");
            self.problems.push(Problem { rule: "UnknownKey", span: entry.key.span, message, suggestion });
        }
    }

    fn string(&mut self, node: &Node, what: &str) -> Option<(String, Span)> {
        match node.as_str() {
            Some(text) => Some((text.to_string(), node.span)),
            None => {
                self.problem(
                    "MalformedTurn",
                    node.span,
                    format!("{what} must be a string, found {}", node.type_name()),
                );
                None
            }
        }
    }

    fn one_of(&mut self, node: &Node, allowed: &[&str], what: &str) -> Option<(String, Span)> {
        let (text, span) = self.string(node, what)?;
        if allowed.contains(&text.as_str()) {
            return Some((text, span));
        }
        let suggestion = did_you_mean(&text, allowed.iter().copied()).map(str::to_string);
        let message = format!("`{text}` is not a valid {what}; expected one of {}", allowed.join(", "));
        self.problems.push(Problem { rule: "InvalidValue", span, message, suggestion });
        None
    }

    fn cassette(&mut self, root: &Node) -> Cassette {
        self.keys(root, &TOP_KEYS, "a cassette");
        let mut cassette = Cassette::default();
        match root.get("cassette") {
            Some(node) => match node.as_i64() {
                Some(version) => {
                    if version != FORMAT_VERSION {
                        let message = format!(
                            "cassette format {version} is not supported; this stagelint reads format {FORMAT_VERSION}"
                        );
                        self.problem("InvalidVersion", node.span, message);
                    }
                    cassette.version = Some((version, node.span));
                }
                None => self.problem("InvalidVersion", node.span, "`cassette` is the format version, the number 1"),
            },
            None => self.problem(
                "InvalidVersion",
                Span::empty(root.span.start),
                "missing `cassette: 1` (the format version)",
            ),
        }
        cassette.stage = self.stage_cassette(root, true);
        if let Some(ctx) = root.get("ctx") {
            if ctx.as_map().is_some() {
                cassette.stage.ctx = Some((ctx.to_json(), ctx.span));
            } else {
                self.problem("MalformedTurn", ctx.span, "`ctx` is a mapping of context fields");
            }
        }
        if let Some(stages) = root.get("stages") {
            match stages.as_map() {
                Some(entries) => {
                    for entry in entries {
                        let Some(id) = entry.key_str() else { continue };
                        if entry.value.as_map().is_none() {
                            self.problem("MalformedTurn", entry.value.span, format!("`stages.{id}` is a mapping"));
                            continue;
                        }
                        self.keys(&entry.value, &STAGE_ENTRY_KEYS, &format!("`stages.{id}`"));
                        let mut stage = self.stage_cassette(&entry.value, false);
                        stage.stage = Some((id.to_string(), entry.key.span));
                        cassette.stages.push((id.to_string(), entry.key.span, stage));
                    }
                }
                None => self.problem("MalformedTurn", stages.span, "`stages` maps stage ids to their turns"),
            }
            if let Some(entry) = root.entry("expectResult") {
                let message = "`expectResult` of a machine cassette belongs to a stage: move it under `stages.<id>`";
                self.problem("UnknownKey", entry.key.span, message);
            }
            if root.get("stage").is_some() || root.get("attempts").is_some() {
                let span = root.entry("stages").map_or(stages.span, |e| e.key.span);
                self.problem(
                    "MalformedTurn",
                    span,
                    "a cassette has either `stage` and `attempts` or `stages`, not both",
                );
            }
        } else if root.get("stage").is_none() {
            self.problem(
                "MalformedTurn",
                Span::empty(root.span.start),
                "missing `stage:` (the id of the stage this cassette replays)",
            );
        }
        cassette
    }

    fn stage_cassette(&mut self, node: &Node, top: bool) -> StageCassette {
        let mut out = StageCassette { span: node.span, ..StageCassette::default() };
        if top && let Some(stage) = node.get("stage") {
            out.stage = self.string(stage, "`stage`");
        }
        if let Some(interactor) = node.get("interactor") {
            self.keys(interactor, &["grantStageTool"], "`interactor`");
            if let Some(grant) = interactor.get("grantStageTool") {
                out.grant_default = self.decision(grant);
            }
        }
        if let Some(matching) = node.get("match") {
            self.keys(matching, &["onDrift"], "`match`");
            if let Some(on_drift) = matching.get("onDrift") {
                out.drift_fails = self.one_of(on_drift, &["warn", "fail"], "`onDrift`").map(|(v, _)| v == "fail");
            }
        }
        if let Some(gate) = node.get("checkGate") {
            out.check_gate = self.gate(gate);
        }
        if let Some(tools) = node.get("tools") {
            out.tools = self.tools(tools);
            out.tool_keys = tools
                .as_map()
                .unwrap_or_default()
                .iter()
                .filter_map(|e| Some((e.key_str()?.to_string(), e.key.span)))
                .collect();
        }
        if let Some(attempts) = node.get("attempts") {
            out.attempts_span = Some(attempts.span);
            match attempts.as_seq() {
                Some(items) => out.attempts = items.iter().map(|item| self.attempt(item)).collect(),
                None => self.problem("MalformedTurn", attempts.span, "`attempts` is a list of `{attempt, turns}`"),
            }
        }
        if let Some(expect) = node.get("expectResult") {
            match expect.as_map() {
                Some(entries) => {
                    let fields = entries
                        .iter()
                        .filter_map(|e| Some((e.key_str()?.to_string(), e.value.to_json(), e.value.span)))
                        .collect();
                    out.expect_result = Some(ExpectResult { span: expect.span, fields });
                }
                None => self.problem("MalformedTurn", expect.span, "`expectResult` maps StageResult fields to values"),
            }
        }
        out
    }

    fn decision(&mut self, node: &Node) -> Option<Decision> {
        let (text, _) = self.one_of(node, &["approve", "deny", "defer"], "grant decision")?;
        Some(match text.as_str() {
            "approve" => Decision::Approve,
            "defer" => Decision::Defer,
            _ => Decision::Deny,
        })
    }

    fn gate(&mut self, node: &Node) -> Option<(Gate, Span)> {
        let (text, span) = self.one_of(node, &["proceed", "retry", "skip"], "CheckGate outcome")?;
        let gate = match text.as_str() {
            "retry" => Gate::Retry,
            "skip" => Gate::Skip,
            _ => Gate::Proceed,
        };
        Some((gate, span))
    }

    fn tools(&mut self, node: &Node) -> BTreeMap<String, Vec<Fake>> {
        let mut out = BTreeMap::new();
        let Some(entries) = node.as_map() else {
            self.problem("MalformedTurn", node.span, "`tools` maps tool names to lists of `{args, result}` fakes");
            return out;
        };
        for entry in entries {
            let Some(name) = entry.key_str() else { continue };
            let Some(items) = entry.value.as_seq() else {
                self.problem(
                    "MalformedTurn",
                    entry.value.span,
                    format!("`tools.{name}` is a list of `{{args, result}}`"),
                );
                continue;
            };
            let mut fakes = Vec::new();
            for item in items {
                self.keys(item, &["args", "anyArgs", "result", "isError"], &format!("a `tools.{name}` fake"));
                let any = item.get("anyArgs").and_then(|n| match n.value {
                    Value::Bool(b) => Some(b),
                    _ => None,
                });
                let args = item.get("args").map(Node::to_json);
                if args.is_none() && any != Some(true) {
                    self.problem("MalformedTurn", item.span, "a fake needs `args:` to match, or `anyArgs: true`");
                    continue;
                }
                let Some(result) = item.get("result") else {
                    self.problem("MalformedTurn", item.span, "a fake needs the `result:` the tool returns");
                    continue;
                };
                let is_error = matches!(item.get("isError").map(|n| &n.value), Some(Value::Bool(true)));
                let content = result_text(result);
                let args = if any == Some(true) { None } else { args };
                fakes.push(Fake { span: item.span, args, result: FakeResult { content, is_error } });
            }
            out.insert(name.to_string(), fakes);
        }
        out
    }

    fn attempt(&mut self, node: &Node) -> Attempt {
        let mut attempt = Attempt { span: node.span, ..Attempt::default() };
        if node.as_map().is_none() {
            self.problem("MalformedTurn", node.span, "an attempt is a mapping with `turns:`");
            return attempt;
        }
        self.keys(node, &ATTEMPT_KEYS, "an attempt");
        if let Some(gate) = node.get("checkGate") {
            attempt.check_gate = self.gate(gate);
        }
        if let Some(assert) = node.get("assert") {
            attempt.assert =
                self.one_of(assert, &["ok", "retry", "skip", "fail"], "Assert outcome").map(|(text, span)| {
                    let verdict = match text.as_str() {
                        "retry" => Verdict::Retry,
                        "skip" => Verdict::Skip,
                        "fail" => Verdict::Fail,
                        _ => Verdict::Ok,
                    };
                    (verdict, span)
                });
        }
        match node.get("turns").map(|t| (t, t.as_seq())) {
            Some((_, Some(items))) => attempt.turns = items.iter().filter_map(|item| self.turn(item)).collect(),
            Some((turns, None)) => self.problem("MalformedTurn", turns.span, "`turns` is a list of model responses"),
            None => {}
        }
        if let Some(end) = node.get("expectEnd") {
            self.keys(end, &["act", "assert"], "`expectEnd`");
            let act = end.get("act").and_then(|n| self.one_of(n, &ACT_ENDS, "Act ending"));
            let assert =
                end.get("assert").and_then(|n| self.one_of(n, &["ok", "retry", "skip", "fail"], "Assert outcome"));
            attempt.expect_end = Some(ExpectEnd { span: end.span, act, assert });
        }
        attempt
    }

    fn turn(&mut self, node: &Node) -> Option<Turn> {
        if node.as_map().is_none() {
            self.problem("MalformedTurn", node.span, "a turn is a mapping with `response:` (or `error:`)");
            return None;
        }
        self.keys(node, &TURN_KEYS, "a turn");
        let reply = match (node.get("response"), node.get("error")) {
            (Some(_), Some(error)) => {
                let span = node.entry("error").map_or(error.span, |e| e.key.span);
                self.problem("MalformedTurn", span, "a turn has `response:` or `error:`, not both");
                return None;
            }
            (Some(response), None) => self.response(response)?,
            (None, Some(error)) => {
                self.keys(error, &["class", "code"], "`error`");
                let class = error.get("class").and_then(Node::as_str).unwrap_or("ProviderTransient");
                if !["ProviderTransient", "ProviderCapability"].contains(&class) {
                    let span = error.get("class").map_or(error.span, |n| n.span);
                    self.problem("InvalidValue", span, "`class` is `ProviderTransient` or `ProviderCapability`");
                }
                let code = error.get("code").map(Node::scalar_text).unwrap_or_else(|| "unknown".into());
                (Reply::Error(ProviderError { class: class.to_string(), code }), BTreeMap::new())
            }
            (None, None) => {
                self.problem(
                    "MalformedTurn",
                    node.span,
                    "a turn needs the model's `response:` (or a provider `error:`)",
                );
                return None;
            }
        };
        let (reply, call_spans) = reply;
        let mut turn = Turn {
            span: node.span,
            reply,
            call_spans,
            grant: BTreeMap::new(),
            results: BTreeMap::new(),
            expect: Vec::new(),
            request: None,
        };
        if let Some(grant) = node.get("grant") {
            for entry in grant.as_map().unwrap_or_default() {
                let Some(id) = entry.key_str() else { continue };
                if let Some(decision) = self.decision(&entry.value) {
                    turn.grant.insert(id.to_string(), (decision, entry.key.span));
                }
            }
        }
        if let Some(results) = node.get("results") {
            for entry in results.as_map().unwrap_or_default() {
                let Some(id) = entry.key_str() else { continue };
                let value = &entry.value;
                let content = value.get("content").map_or_else(|| result_text(value), result_text);
                let is_error = matches!(value.get("isError").map(|n| &n.value), Some(Value::Bool(true)));
                turn.results.insert(id.to_string(), (FakeResult { content, is_error }, entry.key.span));
            }
        }
        if let Some(expect) = node.get("expect") {
            let items: Vec<&Node> = match expect.as_seq() {
                Some(items) => items.iter().collect(),
                None => vec![expect],
            };
            for item in items {
                if let Some(expect) = self.expect(item) {
                    turn.expect.push(expect);
                }
            }
        }
        if let Some(request) = node.get("request") {
            let components = request
                .as_map()
                .unwrap_or_default()
                .iter()
                .filter_map(|e| Some((e.key_str()?.to_string(), e.value.to_json(), e.value.span)))
                .collect();
            turn.request = Some(Fingerprint { span: request.span, components });
        }
        Some(turn)
    }

    fn response(&mut self, node: &Node) -> Option<(Reply, BTreeMap<String, Span>)> {
        if node.as_map().is_none() {
            self.problem("MalformedTurn", node.span, "`response` is a mapping with `stop` and `content`");
            return None;
        }
        self.keys(node, &["stop", "content", "chunks"], "`response`");
        let stop = match node.get("stop") {
            Some(stop) => {
                let (text, _) = self.one_of(stop, &["end_turn", "tool_use", "max_tokens", "refusal"], "stop reason")?;
                Stop::parse(&text)?
            }
            None => Stop::EndTurn,
        };
        let mut content = Vec::new();
        let mut spans = BTreeMap::new();
        let items = node.get("content").and_then(Node::as_seq).unwrap_or_default();
        if let Some(bad) = node.get("content").filter(|c| c.as_seq().is_none()) {
            self.problem(
                "MalformedTurn",
                bad.span,
                "`content` is a list of `text:`, `toolCall:` and `thinking:` blocks",
            );
        }
        for item in items {
            match item.as_map().and_then(|entries| entries.first()).and_then(|e| Some((e.key_str()?, &e.value))) {
                Some(("text", value)) => content.push(Block::Text(value.scalar_text())),
                Some(("thinking", value)) => content.push(Block::Thinking(value.scalar_text())),
                Some(("toolCall", call)) => {
                    if let Some((tool_call, span)) = self.tool_call(call) {
                        if spans.contains_key(&tool_call.id) {
                            let message = format!(
                                "call id `{}` is used twice in this response; results, grants and expectations could not tell the calls apart",
                                tool_call.id
                            );
                            self.problem("DuplicateCallId", span, message);
                            continue;
                        }
                        spans.insert(tool_call.id.clone(), span);
                        content.push(Block::ToolCall(tool_call));
                    }
                }
                _ => self.problem("MalformedTurn", item.span, "a content block is `text:`, `toolCall:` or `thinking:`"),
            }
        }
        Some((Reply::Response(Response { stop, content }), spans))
    }

    fn tool_call(&mut self, node: &Node) -> Option<(ToolCall, Span)> {
        if node.as_map().is_none() {
            self.problem("MalformedTurn", node.span, "`toolCall` is `{id, name, args}`");
            return None;
        }
        self.keys(node, &["id", "name", "args", "argsRaw"], "a `toolCall`");
        let (Some(id), Some(name)) = (node.get("id"), node.get("name")) else {
            self.problem("MalformedTurn", node.span, "a `toolCall` needs an `id` and a `name`");
            return None;
        };
        let id = id.scalar_text();
        let (name, _) = self.string(name, "a tool name")?;
        let (args, args_raw) = match (node.get("args"), node.get("argsRaw")) {
            (Some(args), _) => (Some(args.to_json()), None),
            (None, Some(raw)) => (None, Some(raw.scalar_text())),
            (None, None) => (Some(Json::Object(serde_json::Map::new())), None),
        };
        Some((ToolCall { id, name, args, args_raw }, node.span))
    }

    fn expect(&mut self, node: &Node) -> Option<Expect> {
        if node.as_map().is_none() {
            self.problem("MalformedTurn", node.span, "an expectation is `{branch, call?, outcome?}`");
            return None;
        }
        self.keys(node, &EXPECT_KEYS, "an expectation");
        let Some(branch) = node.get("branch") else {
            self.problem("MalformedTurn", node.span, "an expectation needs the `branch:` the runtime must take");
            return None;
        };
        let (branch, _) = self.one_of(branch, &BRANCHES, "Act branch")?;
        let outcome = node.get("outcome").and_then(|n| self.one_of(n, &OUTCOMES, "tool outcome")).map(|(v, _)| v);
        let calls = node.get("calls").and_then(Node::as_seq).map(|items| items.iter().map(Node::scalar_text).collect());
        Some(Expect {
            span: node.span,
            branch,
            call: node.get("call").map(Node::scalar_text),
            calls,
            outcome,
            error_at: node.get("errorAt").map(Node::scalar_text),
        })
    }
}

/// A tool result's text: strings as they are, anything else as compact JSON.
fn result_text(node: &Node) -> String {
    match &node.value {
        Value::String(text) => text.clone(),
        _ => node.to_json().to_string(),
    }
}
