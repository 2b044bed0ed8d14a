//! "Stage cassette v1": a typed, spanned view of a cassette file (YAML or JSON), read from the
//! shared spanned tree. Reading never fails: what does not fit the format becomes a
//! [`Problem`] (reported by the `cassette/` family) and is left out of the model.
//!
//! A stage cassette holds `stage`, `ctx`, `interactor`, `match`, `tools`, `checkGate`,
//! `attempts` and `expectResult`. A machine cassette holds the shared keys and `stages:`, a
//! map from stage id to that stage's `tools`/`attempts`/… (its context flows through Next):
//! one mapping for one execution, or a list with one mapping per execution, in order.

pub mod digest;
pub mod provider;

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::cassette::provider::{Block, ProviderError, Response, Stop, ToolCall};
use crate::registry::cassette as rules;
use crate::source::{Entry, Node, Span, Value, json, yaml};
use crate::util::{KeyGuess, did_you_mean, did_you_mean_key};

pub const FORMAT_VERSION: i64 = 1;

/// A structural defect, with the `cassette/` rule name that reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// The `cassette/` code that reports it.
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
    pub stages: Vec<StageEntry>,
    /// The `stages` key.
    pub stages_key: Option<Span>,
    pub problems: Vec<Problem>,
    /// Ids of tool calls in content blocks that could not be read (already a problem), so
    /// that `grant`/`results`/`expect` naming them are not reported again.
    pub unread_calls: std::collections::BTreeSet<String>,
    /// The whole document as JSON, for `$ref` pointers in `expectResult`.
    pub json: Json,
}

impl Cassette {
    pub fn is_machine(&self) -> bool {
        !self.stages.is_empty()
    }

    /// The cassette for the `execution`-th (1-based) execution of stage `id`: its `stages:`
    /// entry for that execution (with the shared keys as defaults), or the whole cassette when
    /// it is a stage cassette for `id` (which records one execution).
    pub fn for_stage(&self, id: &str, execution: u32) -> Option<StageCassette> {
        if let Some(entry) = self.stages.iter().find(|entry| entry.id == id) {
            let stage = entry.executions.get(execution.checked_sub(1)? as usize)?;
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
            Some((name, _)) if name == id && !self.is_machine() && execution == 1 => Some(self.stage.clone()),
            _ => None,
        }
    }

    /// Every stage part of the cassette: the top level, then each execution of each entry.
    pub fn parts(&self) -> impl Iterator<Item = &StageCassette> {
        std::iter::once(&self.stage).chain(self.stages.iter().flat_map(|e| &e.executions))
    }
}

/// One `stages.<id>` entry of a machine cassette.
#[derive(Clone, Debug)]
pub struct StageEntry {
    pub id: String,
    /// The entry's key.
    pub span: Span,
    /// What each execution of the stage replays, in order.
    pub executions: Vec<StageCassette>,
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

impl StageCassette {
    /// How many expectations it holds (`expect`, `expectEnd`, `expectResult`), counted as the
    /// replay counts them; not running a part that has some fails them.
    pub fn expectation_count(&self) -> u32 {
        let attempts: u32 = self.attempts.iter().map(Attempt::expectation_count).sum();
        let result = self.expect_result.as_ref().map_or(0, |r| r.fields.len());
        attempts.saturating_add(u32::try_from(result).unwrap_or(u32::MAX))
    }
}

impl Attempt {
    /// Its turns' `expect` entries and its `expectEnd` fields.
    pub fn expectation_count(&self) -> u32 {
        let turns: usize = self.turns.iter().map(|t| t.expect.len()).sum();
        let end =
            self.expect_end.as_ref().map_or(0, |e| usize::from(e.act.is_some()) + usize::from(e.assert.is_some()));
        u32::try_from(turns + end).unwrap_or(u32::MAX)
    }
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
pub const OUTCOMES: [&str; 5] = ["dispatched", "approved", "denied", "deferred", "invalidArguments"];
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

pub use crate::workspace::is_cassette_name;

/// Reads a cassette from its text (`json` picks the JSON reader).
pub fn read(text: &str, json_syntax: bool) -> (Cassette, Vec<crate::source::SyntaxError>) {
    let parsed = if json_syntax { json::parse(text) } else { yaml::parse(text) };
    let document = parsed.root.as_ref().map_or(Json::Null, Node::to_json);
    let mut reader =
        Reader { problems: Vec::new(), unread_calls: std::collections::BTreeSet::new(), document: &document };
    let cassette = match &parsed.root {
        Some(root) if root.as_map().is_some() => reader.cassette(root),
        Some(root) => {
            reader.problem(
                rules::MalformedTurn,
                root.span,
                "a cassette is a mapping with `cassette: 1`, `stage` and `attempts`",
            );
            Cassette::default()
        }
        None => {
            if parsed.errors.is_empty() {
                reader.problem(
                    rules::MalformedTurn,
                    Span::empty(0),
                    "the cassette is empty; start it with `cassette: 1`",
                );
            }
            Cassette::default()
        }
    };
    let mut cassette = cassette;
    cassette.problems = reader.problems;
    cassette.unread_calls = reader.unread_calls;
    cassette.json = document;
    (cassette, parsed.errors)
}

struct Reader<'d> {
    problems: Vec<Problem>,
    unread_calls: std::collections::BTreeSet<String>,
    /// The whole document, where `$ref` pointers must land.
    document: &'d Json,
}

/// The Assert outcomes a cassette may script or expect.
/// The values of each closed key, for the reader and the editor alike.
pub const VERDICTS: [&str; 4] = ["ok", "retry", "skip", "fail"];
pub const STOPS: [&str; 4] = ["end_turn", "tool_use", "max_tokens", "refusal"];
pub const DECISIONS: [&str; 3] = ["approve", "deny", "defer"];
pub const DRIFT_MODES: [&str; 2] = ["warn", "fail"];
pub const GATE_OUTCOMES: [&str; 3] = ["proceed", "retry", "skip"];
const BLOCKS: [&str; 3] = ["text", "toolCall", "thinking"];
const FINGERPRINTS: [&str; 3] = ["system", "tools", "messages"];

impl Reader<'_> {
    fn problem(&mut self, rule: &'static str, span: Span, message: impl Into<String>) {
        self.problems.push(Problem { rule, span, message: message.into(), suggestion: None });
    }

    fn keys(&mut self, node: &Node, allowed: &[&str], what: &str) {
        for entry in node.as_map().unwrap_or_default() {
            // A key that is not a string (`1:`) is unknown too, by its text.
            let key = entry.key.scalar_text();
            let key = key.as_str();
            if allowed.contains(&key) {
                continue;
            }
            // No rename onto a key the mapping has already: that would write a duplicate key.
            let guess = did_you_mean_key(key, allowed.iter().copied(), node.keys());
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

    /// The node's entries, or a `MalformedTurn` saying what it should be.
    fn mapping<'n>(&mut self, node: &'n Node, what: &str) -> Option<&'n [Entry]> {
        let entries = node.as_map();
        if entries.is_none() {
            self.problem(rules::MalformedTurn, node.span, format!("{what}, found {}", node.type_name()));
        }
        entries
    }

    fn string(&mut self, node: &Node, what: &str) -> Option<(String, Span)> {
        match node.as_str() {
            Some(text) => Some((text.to_string(), node.span)),
            None => {
                self.problem(
                    rules::MalformedTurn,
                    node.span,
                    format!("{what} must be a string, found {}", node.type_name()),
                );
                None
            }
        }
    }

    /// A call id or an error code: a string or an integer.
    fn call_id(&mut self, node: &Node, what: &str) -> Option<String> {
        match &node.value {
            Value::String(_) | Value::Int(_) => Some(node.scalar_text()),
            _ => {
                let message = format!("{what} must be a string or an integer, found {}", node.type_name());
                self.problem(rules::MalformedTurn, node.span, message);
                None
            }
        }
    }

    fn boolean(&mut self, node: &Node, what: &str) -> Option<bool> {
        match node.value {
            Value::Bool(b) => Some(b),
            _ => {
                let message = format!("{what} must be `true` or `false`, found {}", node.type_name());
                self.problem(rules::InvalidValue, node.span, message);
                None
            }
        }
    }

    /// An integer of at least `min`.
    fn integer(&mut self, node: &Node, min: i64, what: &str) -> Option<i64> {
        match node.as_i64() {
            Some(n) if n >= min => Some(n),
            _ => {
                let message = format!("{what} must be an integer of at least {min}, found {}", shown(node));
                self.problem(rules::InvalidValue, node.span, message);
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
        self.problems.push(Problem { rule: rules::InvalidValue, span, message, suggestion });
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
                        self.problem(rules::InvalidVersion, node.span, message);
                    }
                    cassette.version = Some((version, node.span));
                }
                None => {
                    self.problem(rules::InvalidVersion, node.span, "`cassette` is the format version, the number 1")
                }
            },
            None => self.problem(
                rules::InvalidVersion,
                Span::empty(root.span.start),
                "missing `cassette: 1` (the format version)",
            ),
        }
        if let Some(provenance) = root.get("provenance")
            && let Some(entries) = self.mapping(provenance, "`provenance` is a mapping of informational strings")
        {
            for entry in entries {
                let key = entry.key_str().unwrap_or("");
                if ["source", "provider", "model", "capturedAt", "tool"].contains(&key) {
                    self.string(&entry.value, &format!("`provenance.{key}`"));
                }
            }
        }
        cassette.stage = self.stage_cassette(root, true);
        if let Some(ctx) = root.get("ctx")
            && self.mapping(ctx, "`ctx` is a mapping of context fields").is_some()
        {
            if let Some(upstream) = ctx.get("upstream").filter(|u| u.as_seq().is_none()) {
                let message = format!("`ctx.upstream` is a list of StageResults, found {}", upstream.type_name());
                self.problem(rules::MalformedTurn, upstream.span, message);
            }
            for key in ["workflowRunId", "stageExecutionId"] {
                if let Some(id) = ctx.get(key) {
                    self.string(id, &format!("`ctx.{key}`"));
                }
            }
            cassette.stage.ctx = Some((ctx.to_json(), ctx.span));
        }
        cassette.stages_key = root.entry("stages").map(|e| e.key.span);
        if let Some(stages) = root.get("stages") {
            if let Some(entries) = self.mapping(stages, "`stages` maps stage ids to their turns") {
                if entries.is_empty() {
                    self.problem(
                        rules::MalformedTurn,
                        stages.span,
                        "`stages` names no stage; add `<stage-id>: {attempts: …}`",
                    );
                }
                for entry in entries {
                    let Some(id) = entry.key_str() else { continue };
                    let executions = match entry.value.as_seq() {
                        Some([]) => {
                            let message = format!("`stages.{id}` lists no execution; give at least one");
                            self.problem(rules::MalformedTurn, entry.value.span, message);
                            Vec::new()
                        }
                        Some(items) => items.iter().filter_map(|item| self.stage_entry(id, item)).collect(),
                        None => self.stage_entry(id, &entry.value).into_iter().collect(),
                    };
                    cassette.stages.push(StageEntry { id: id.to_string(), span: entry.key.span, executions });
                }
            }
            if let Some(entry) = root.entry("expectResult") {
                let message = "`expectResult` of a machine cassette belongs to a stage: move it under `stages.<id>`";
                self.problem(rules::UnknownKey, entry.key.span, message);
            }
            if root.get("stage").is_some() || root.get("attempts").is_some() {
                let span = root.entry("stages").map_or(stages.span, |e| e.key.span);
                self.problem(
                    rules::MalformedTurn,
                    span,
                    "a cassette has either `stage` and `attempts` or `stages`, not both",
                );
            }
        } else if root.get("stage").is_none() {
            self.problem(
                rules::MalformedTurn,
                Span::empty(root.span.start),
                "missing `stage:` (the id of the stage this cassette replays)",
            );
        }
        cassette
    }

    /// One execution of `stages.<id>`.
    fn stage_entry(&mut self, id: &str, node: &Node) -> Option<StageCassette> {
        let what = format!("`stages.{id}` is a mapping (one execution) or a list of them (one per execution)");
        self.mapping(node, &what)?;
        self.keys(node, &STAGE_ENTRY_KEYS, &format!("`stages.{id}`"));
        let mut stage = self.stage_cassette(node, false);
        stage.stage = Some((id.to_string(), node.span));
        Some(stage)
    }

    fn stage_cassette(&mut self, node: &Node, top: bool) -> StageCassette {
        let mut out = StageCassette { span: node.span, ..StageCassette::default() };
        if top && let Some(stage) = node.get("stage") {
            out.stage = self.string(stage, "`stage`");
            if out.stage.as_ref().is_some_and(|(id, _)| id.is_empty()) {
                self.problem(
                    rules::InvalidValue,
                    stage.span,
                    "`stage` is empty; name the stage id this cassette replays",
                );
            }
        }
        if let Some(interactor) = node.get("interactor")
            && self.mapping(interactor, "`interactor` is a mapping such as `{grantStageTool: deny}`").is_some()
        {
            self.keys(interactor, &["grantStageTool"], "`interactor`");
            if let Some(grant) = interactor.get("grantStageTool") {
                out.grant_default = self.decision(grant);
            }
        }
        if let Some(matching) = node.get("match")
            && self.mapping(matching, "`match` is a mapping such as `{onDrift: warn}`").is_some()
        {
            self.keys(matching, &["onDrift"], "`match`");
            if let Some(on_drift) = matching.get("onDrift") {
                out.drift_fails = self.one_of(on_drift, &DRIFT_MODES, "`onDrift`").map(|(v, _)| v == "fail");
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
                None => self.problem(rules::MalformedTurn, attempts.span, "`attempts` is a list of `{attempt, turns}`"),
            }
        }
        if let Some(expect) = node.get("expectResult") {
            out.expect_result = self.expect_result(expect);
        }
        out
    }

    fn expect_result(&mut self, node: &Node) -> Option<ExpectResult> {
        let entries = self.mapping(node, "`expectResult` maps StageResult fields to values")?;
        for entry in entries {
            let value = &entry.value;
            // `{$ref: "#/…"}` stands for a value elsewhere in the cassette; one that points
            // nowhere would silently compare with null.
            if let Some(reference) = value.get("$ref") {
                self.reference(reference);
                continue;
            }
            match entry.key_str().unwrap_or("") {
                "verdict" => {
                    self.one_of(value, &VERDICTS, "StageResult verdict");
                }
                "reason" => {
                    self.string(value, "`expectResult.reason`");
                }
                "capHit" => {
                    self.boolean(value, "`expectResult.capHit`");
                }
                "attemptCount" => {
                    self.integer(value, 1, "`expectResult.attemptCount`");
                }
                _ => {}
            }
        }
        let fields = entries.iter().filter_map(|e| Some((e.key_str()?.to_string(), e.value.to_json(), e.value.span)));
        Some(ExpectResult { span: node.span, fields: fields.collect() })
    }

    /// A `$ref` must be `#` and a JSON pointer to a value of this cassette.
    fn reference(&mut self, node: &Node) {
        let Some(text) = node.as_str() else {
            let message =
                format!("`$ref` is a string `#/…` (a JSON pointer into this cassette), found {}", node.type_name());
            self.problem(rules::InvalidValue, node.span, message);
            return;
        };
        let message = match text.strip_prefix('#') {
            None => {
                format!("`$ref` \"{text}\" must start with `#`: it points into this cassette, as in \"#/attempts/0/…\"")
            }
            Some(pointer) if !pointer.is_empty() && !pointer.starts_with('/') => {
                format!("`$ref` \"{text}\" is not a JSON pointer: after `#` it starts with `/`")
            }
            Some(pointer) if self.document.pointer(pointer).is_none() => {
                format!("`$ref` \"{text}\" points to nothing in this cassette, so the expectation could never hold")
            }
            Some(_) => return,
        };
        self.problem(rules::InvalidValue, node.span, message);
    }

    fn decision(&mut self, node: &Node) -> Option<Decision> {
        let (text, _) = self.one_of(node, &DECISIONS, "grant decision")?;
        Some(match text.as_str() {
            "approve" => Decision::Approve,
            "defer" => Decision::Defer,
            _ => Decision::Deny,
        })
    }

    fn gate(&mut self, node: &Node) -> Option<(Gate, Span)> {
        let (text, span) = self.one_of(node, &GATE_OUTCOMES, "CheckGate outcome")?;
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
            self.problem(rules::MalformedTurn, node.span, "`tools` maps tool names to lists of `{args, result}` fakes");
            return out;
        };
        for entry in entries {
            let Some(name) = entry.key_str() else { continue };
            let Some(items) = entry.value.as_seq() else {
                self.problem(
                    rules::MalformedTurn,
                    entry.value.span,
                    format!("`tools.{name}` is a list of `{{args, result}}`"),
                );
                continue;
            };
            let mut fakes = Vec::new();
            for item in items {
                if self.mapping(item, &format!("a `tools.{name}` fake is a mapping `{{args, result}}`")).is_none() {
                    continue;
                }
                self.keys(item, &["args", "anyArgs", "result", "isError"], &format!("a `tools.{name}` fake"));
                let any = item.get("anyArgs").and_then(|n| self.boolean(n, "`anyArgs`"));
                let is_error = item.get("isError").and_then(|n| self.boolean(n, "`isError`")) == Some(true);
                let args = item.get("args").map(Node::to_json);
                if args.is_none() && any != Some(true) {
                    self.problem(rules::MalformedTurn, item.span, "a fake needs `args:` to match, or `anyArgs: true`");
                    continue;
                }
                let Some(result) = item.get("result") else {
                    self.problem(rules::MalformedTurn, item.span, "a fake needs the `result:` the tool returns");
                    continue;
                };
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
        if self.mapping(node, "an attempt is a mapping with `turns:`").is_none() {
            return attempt;
        }
        self.keys(node, &ATTEMPT_KEYS, "an attempt");
        if let Some(number) = node.get("attempt") {
            self.integer(number, 1, "`attempt` (the 1-based attempt number)");
        }
        if let Some(gate) = node.get("checkGate") {
            attempt.check_gate = self.gate(gate);
        }
        if let Some(assert) = node.get("assert") {
            attempt.assert = self.one_of(assert, &VERDICTS, "Assert outcome").map(|(text, span)| {
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
            Some((turns, None)) => {
                self.problem(rules::MalformedTurn, turns.span, "`turns` is a list of model responses")
            }
            None => {}
        }
        if let Some(end) = node.get("expectEnd")
            && self.mapping(end, "`expectEnd` is a mapping `{act, assert}`").is_some()
        {
            self.keys(end, &["act", "assert"], "`expectEnd`");
            let act = end.get("act").and_then(|n| self.one_of(n, &ACT_ENDS, "Act ending"));
            let assert = end.get("assert").and_then(|n| self.one_of(n, &VERDICTS, "Assert outcome"));
            attempt.expect_end = Some(ExpectEnd { span: end.span, act, assert });
        }
        attempt
    }

    /// A turn; every problem in it is reported, and a turn whose reply cannot be read is
    /// left out.
    fn turn(&mut self, node: &Node) -> Option<Turn> {
        self.mapping(node, "a turn is a mapping with `response:` (or `error:`)")?;
        self.keys(node, &TURN_KEYS, "a turn");
        let reply = match (node.get("response"), node.get("error")) {
            (Some(_), Some(error)) => {
                let span = node.entry("error").map_or(error.span, |e| e.key.span);
                self.problem(rules::MalformedTurn, span, "a turn has `response:` or `error:`, not both");
                None
            }
            (Some(response), None) => self.response(response),
            (None, Some(error)) => self.error(error),
            (None, None) => {
                self.problem(
                    rules::MalformedTurn,
                    node.span,
                    "a turn needs the model's `response:` (or a provider `error:`)",
                );
                None
            }
        };
        let mut grant = BTreeMap::new();
        if let Some(node) = node.get("grant") {
            for entry in self.mapping(node, "`grant` maps call ids to approve, deny or defer").unwrap_or_default() {
                // `1: approve` names call `1`, as `id: 1` does: keys are read by their text.
                let Some(id) = self.call_id(&entry.key, "a `grant` key (a call id)") else { continue };
                if let Some(decision) = self.decision(&entry.value) {
                    grant.insert(id, (decision, entry.key.span));
                }
            }
        }
        let mut results = BTreeMap::new();
        if let Some(node) = node.get("results") {
            for entry in self.mapping(node, "`results` maps call ids to tool results").unwrap_or_default() {
                let Some(id) = self.call_id(&entry.key, "a `results` key (a call id)") else { continue };
                let value = &entry.value;
                let content = value.get("content").map_or_else(|| result_text(value), result_text);
                let is_error = value.get("isError").and_then(|n| self.boolean(n, "`isError`")) == Some(true);
                results.insert(id, (FakeResult { content, is_error }, entry.key.span));
            }
        }
        let mut expect = Vec::new();
        if let Some(node) = node.get("expect") {
            let items: Vec<&Node> = match node.as_seq() {
                Some(items) => items.iter().collect(),
                None => vec![node],
            };
            expect = items.into_iter().filter_map(|item| self.expect(item)).collect();
        }
        let request = node.get("request").and_then(|request| self.request(request));
        let (reply, call_spans) = reply?;
        Some(Turn { span: node.span, reply, call_spans, grant, results, expect, request })
    }

    fn error(&mut self, node: &Node) -> Option<(Reply, BTreeMap<String, Span>)> {
        self.mapping(node, "`error` is a mapping `{class, code}`")?;
        self.keys(node, &["class", "code"], "`error`");
        let class = match node.get("class") {
            Some(class) => self.one_of(class, &["ProviderTransient", "ProviderCapability"], "provider error class")?.0,
            None => "ProviderTransient".to_string(),
        };
        let code = match node.get("code") {
            Some(code) => self.call_id(code, "`error.code`")?,
            None => "unknown".into(),
        };
        Some((Reply::Error(ProviderError { class, code }), BTreeMap::new()))
    }

    fn request(&mut self, node: &Node) -> Option<Fingerprint> {
        let entries = self.mapping(node, "`request` maps fingerprint components to digests")?;
        let mut components = Vec::new();
        for entry in entries {
            let Some(key) = entry.key_str() else { continue };
            let valid = if FINGERPRINTS.contains(&key) {
                self.string(&entry.value, &format!("`request.{key}` (a digest)")).is_some()
            } else if key == "count" {
                self.integer(&entry.value, 0, "`request.count`").is_some()
            } else {
                true
            };
            if valid {
                components.push((key.to_string(), entry.value.to_json(), entry.value.span));
            }
        }
        Some(Fingerprint { span: node.span, components })
    }

    fn response(&mut self, node: &Node) -> Option<(Reply, BTreeMap<String, Span>)> {
        self.mapping(node, "`response` is a mapping with `stop` and `content`")?;
        self.keys(node, &["stop", "content", "chunks"], "`response`");
        // A bad stop reason is reported; the rest of the response is still read, for its problems.
        let stop = match node.get("stop") {
            Some(stop) => self.one_of(stop, &STOPS, "stop reason").and_then(|(text, _)| Stop::parse(&text)),
            None => Some(Stop::EndTurn),
        };
        let mut content = Vec::new();
        let mut spans = BTreeMap::new();
        let items = node.get("content").and_then(Node::as_seq).unwrap_or_default();
        if let Some(bad) = node.get("content").filter(|c| c.as_seq().is_none()) {
            self.problem(
                rules::MalformedTurn,
                bad.span,
                "`content` is a list of `text:`, `toolCall:` and `thinking:` blocks",
            );
        }
        for item in items {
            let entries = item.as_map().unwrap_or_default();
            // Exactly one key: a block with two would lose one of them, so nothing is guessed.
            let block = match entries {
                [entry] => entry.key_str().filter(|k| BLOCKS.contains(k)).map(|k| (k, &entry.value)),
                _ => None,
            };
            let Some((kind, value)) = block else {
                let call = entries.iter().find(|e| e.key_str() == Some("toolCall")).and_then(|e| e.value.get("id"));
                self.unread_calls.extend(call.map(Node::scalar_text));
                let message = if entries.len() > 1 {
                    let keys: Vec<&str> = entries.iter().filter_map(|e| e.key_str()).collect();
                    format!(
                        "a content block has exactly one key, `text:`, `toolCall:` or `thinking:`; this one has {}: split it into one block per key",
                        keys.join(", ")
                    )
                } else {
                    "a content block is `text:`, `toolCall:` or `thinking:`".to_string()
                };
                self.problem(rules::MalformedTurn, item.span, message);
                continue;
            };
            match kind {
                "text" => content.push(Block::Text(value.scalar_text())),
                "thinking" => content.push(Block::Thinking(value.scalar_text())),
                _ => {
                    let Some((tool_call, span)) = self.tool_call(value) else {
                        // Already a problem: what names the call is not reported again.
                        self.unread_calls.extend(value.get("id").map(Node::scalar_text));
                        continue;
                    };
                    if spans.contains_key(&tool_call.id) {
                        let message = format!(
                            "call id `{}` is used twice in this response; results, grants and expectations could not tell the calls apart",
                            tool_call.id
                        );
                        self.problem(rules::DuplicateCallId, span, message);
                        continue;
                    }
                    spans.insert(tool_call.id.clone(), span);
                    content.push(Block::ToolCall(tool_call));
                }
            }
        }
        Some((Reply::Response(Response { stop: stop?, content }), spans))
    }

    fn tool_call(&mut self, node: &Node) -> Option<(ToolCall, Span)> {
        self.mapping(node, "`toolCall` is `{id, name, args}`")?;
        self.keys(node, &["id", "name", "args", "argsRaw"], "a `toolCall`");
        let (Some(id), Some(name)) = (node.get("id"), node.get("name")) else {
            self.problem(rules::MalformedTurn, node.span, "a `toolCall` needs an `id` and a `name`");
            return None;
        };
        let id = self.call_id(id, "a `toolCall` id");
        let name = self.string(name, "a tool name");
        let (args, args_raw) = match (node.get("args"), node.get("argsRaw")) {
            (Some(_), Some(_)) => {
                let span = node.entry("argsRaw").map_or(node.span, |e| e.key.span);
                let message = "a `toolCall` has `args` (JSON) or `argsRaw` (the text as sent), not both: the runtime could not tell which the model sent";
                self.problem(rules::MalformedTurn, span, message);
                return None;
            }
            (Some(args), None) => (Some(args.to_json()), None),
            (None, Some(raw)) => (None, Some(self.string(raw, "`argsRaw`")?.0)),
            (None, None) => (Some(Json::Object(serde_json::Map::new())), None),
        };
        Some((ToolCall { id: id?, name: name?.0, args, args_raw }, node.span))
    }

    fn expect(&mut self, node: &Node) -> Option<Expect> {
        self.mapping(node, "an expectation is `{branch, call?, outcome?}`")?;
        self.keys(node, &EXPECT_KEYS, "an expectation");
        let branch = match node.get("branch") {
            Some(branch) => self.one_of(branch, &BRANCHES, "Act branch"),
            None => {
                self.problem(
                    rules::MalformedTurn,
                    node.span,
                    "an expectation needs the `branch:` the runtime must take",
                );
                None
            }
        };
        let outcome = node.get("outcome").and_then(|n| self.one_of(n, &OUTCOMES, "tool outcome")).map(|(v, _)| v);
        let call = node.get("call").and_then(|n| self.call_id(n, "`call`"));
        let calls = match node.get("calls") {
            Some(list) => match list.as_seq() {
                Some(items) => Some(items.iter().filter_map(|n| self.call_id(n, "a `calls` entry")).collect()),
                None => {
                    self.problem(rules::MalformedTurn, list.span, "`calls` is a list of call ids");
                    None
                }
            },
            None => None,
        };
        let error_at = node.get("errorAt").and_then(|n| self.string(n, "`errorAt` (a JSON pointer)")).map(|(p, _)| p);
        Some(Expect { span: node.span, branch: branch?.0, call, calls, outcome, error_at })
    }
}

/// A value as a message shows it.
fn shown(node: &Node) -> String {
    match &node.value {
        Value::String(text) => format!("\"{text}\""),
        Value::Seq(_) | Value::Map(_) | Value::Null => node.type_name().to_string(),
        _ => node.scalar_text(),
    }
}

/// A tool result's text: strings as they are, anything else as compact JSON.
fn result_text(node: &Node) -> String {
    match &node.value {
        Value::String(text) => text.to_string(),
        _ => node.to_json().to_string(),
    }
}
