//! What the cassette expects of a stage execution, checked as it runs: per-turn expectations,
//! the StageResult, request drift, turns and attempts the run never used.

use super::*;
use crate::cassette::Attempt;

/// What the runtime did in one turn, for `expect:`.
#[derive(Clone, Debug, Default)]
pub(super) struct Observed {
    pub(super) branch: &'static str,
    pub(super) call: Option<String>,
    pub(super) calls: Vec<String>,
    pub(super) outcome: Option<&'static str>,
    pub(super) error_at: Vec<String>,
    /// The pointers of properties a `required` error says are missing.
    pub(super) missing: Vec<String>,
}

impl Observed {
    fn describe(&self) -> String {
        describe(self.branch, self.call.as_deref(), &self.calls, &self.error_at, self.outcome)
    }

    pub(super) fn to_expect(&self) -> Json {
        let mut out = json!({"branch": self.branch});
        if let Some(call) = &self.call {
            out["call"] = json!(call);
        }
        if !self.calls.is_empty() {
            out["calls"] = json!(self.calls);
        }
        if let Some(outcome) = self.outcome {
            out["outcome"] = json!(outcome);
        }
        if let Some(at) = self.error_at.first() {
            out["errorAt"] = json!(at);
        }
        out
    }

    fn satisfies(&self, expect: &Expect) -> bool {
        self.branch == expect.branch
            && expect.call.as_ref().is_none_or(|c| self.call.as_ref() == Some(c))
            && expect.outcome.as_deref().is_none_or(|o| self.outcome == Some(o))
            && expect.calls.as_ref().is_none_or(|calls| {
                let mut want = calls.clone();
                let mut have = self.calls.clone();
                want.sort();
                have.sort();
                want == have
            })
            && expect.error_at.as_deref().map(pointer).is_none_or(|at| {
                // A `required` error is at the object; `errorAt` may name the missing property.
                self.error_at.iter().chain(&self.missing).any(|have| have == at)
            })
    }
}

/// One expectation a recording carries, as events and messages name it: `turn 2 of attempt 1:
/// completion c1`, `attempt 1 expectEnd.act: completed`, `expectResult.verdict: "ok"`.
#[derive(Clone, Debug)]
pub struct Listed {
    /// `turn`, `act`, `assert` or `result`.
    pub kind: &'static str,
    pub what: String,
}

/// Every expectation of `attempt` (1-based `number`) from turn `from` (0-based) on.
fn attempt_expectations(number: usize, attempt: &Attempt, from: usize) -> Vec<Listed> {
    let mut out = Vec::new();
    for (k, turn) in attempt.turns.iter().enumerate().skip(from) {
        for expect in &turn.expect {
            out.push(Listed { kind: "turn", what: format!("turn {} of attempt {number}: {}", k + 1, wanted(expect)) });
        }
    }
    out.extend(end_expectations(number, attempt));
    out
}

/// The `expectEnd` of attempt `number`.
pub(super) fn end_expectations(number: usize, attempt: &Attempt) -> Vec<Listed> {
    let Some(end) = &attempt.expect_end else { return Vec::new() };
    let act = end.act.iter().map(|(v, _)| Listed { kind: "act", what: format!("attempt {number} expectEnd.act: {v}") });
    let assert = end
        .assert
        .iter()
        .map(|(v, _)| Listed { kind: "assert", what: format!("attempt {number} expectEnd.assert: {v}") });
    act.chain(assert).collect()
}

/// The `expectResult` fields of a recording.
pub(super) fn result_expectations(cassette: &StageCassette) -> Vec<Listed> {
    let fields = cassette.expect_result.iter().flat_map(|r| &r.fields);
    fields
        .map(|(field, value, _)| Listed { kind: "result", what: format!("expectResult.{field}: {}", short(value)) })
        .collect()
}

/// Every expectation of a stage recording, in order.
pub fn all_expectations(cassette: &StageCassette) -> Vec<Listed> {
    let mut out: Vec<Listed> =
        cassette.attempts.iter().enumerate().flat_map(|(i, a)| attempt_expectations(i + 1, a, 0)).collect();
    out.extend(result_expectations(cassette));
    out
}

/// What an `expect:` entry asks for, as messages show it.
fn wanted(expect: &Expect) -> String {
    let error_at: Vec<String> = expect.error_at.iter().map(|at| pointer(at).to_string()).collect();
    let calls = expect.calls.clone().unwrap_or_default();
    describe(&expect.branch, expect.call.as_deref(), &calls, &error_at, expect.outcome.as_deref())
}

impl Run<'_> {
    /// Counts one checked expectation and records its outcome as an event.
    fn checked(&mut self, kind: &'static str, expected: String, actual: String, held: bool) {
        if held {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        let outcome = if held { "held" } else { "failed" };
        self.trace.emit(
            "ExpectationOutcome",
            json!({"kind": kind, "expected": expected, "actual": actual, "outcome": outcome}),
        );
    }

    /// Expectations that were never checked did not hold: each counts as failed and is
    /// recorded as an `unchecked` outcome saying `why`.
    pub fn unchecked(&mut self, listed: &[Listed], why: &str) {
        let count = u32::try_from(listed.len()).unwrap_or(u32::MAX);
        self.failed = self.failed.saturating_add(count);
        self.unchecked = self.unchecked.saturating_add(count);
        for item in listed {
            self.trace.emit(
                "ExpectationOutcome",
                json!({"kind": item.kind, "expected": item.what, "outcome": "unchecked", "why": why}),
            );
        }
    }

    pub(super) fn expectations(&mut self, turn: &Turn, observed: &[Observed]) {
        for expect in &turn.expect {
            let held = observed.iter().find(|o| o.satisfies(expect));
            if let Some(took) = held {
                self.checked("turn", wanted(expect), took.describe(), true);
                continue;
            }
            // An expectation about one call is answered with what happened to that call; the
            // rest of the turn is shown only when the call took no branch at all.
            let about = |o: &&Observed| {
                expect.call.as_deref().is_some_and(|c| o.call.as_deref() == Some(c) || o.calls.iter().any(|x| x == c))
            };
            let related: Vec<&Observed> = observed.iter().filter(about).collect();
            let shown = if related.is_empty() { observed.iter().collect() } else { related };
            let actual: Vec<String> = shown.into_iter().map(Observed::describe).collect();
            let wanted = wanted(expect);
            self.checked("turn", wanted.clone(), actual.join("; "), false);
            let message = format!("expected {wanted}, but the runtime took {}", actual.join("; "));
            self.finding(rules::ExpectationFailed, expect.span, message);
        }
    }

    pub(super) fn expect_value(&mut self, kind: &'static str, span: Span, what: &str, expected: &str, actual: &str) {
        self.checked(kind, expected.to_string(), actual.to_string(), expected == actual);
        if expected != actual {
            let message = format!("expected {what} `{expected}`, but it was `{actual}`");
            self.finding(rules::ExpectationFailed, span, message);
        }
    }

    pub(super) fn expect_result(&mut self, cassette: &StageCassette, result: &StageResult) {
        let Some(expect) = &cassette.expect_result else { return };
        let actual = result.to_json();
        for (field, wanted, span) in &expect.fields {
            let wanted = match wanted.get("$ref").and_then(Json::as_str) {
                Some(reference) => {
                    let pointer = reference.trim_start_matches('#');
                    self.cassette_json.pointer(pointer).cloned().unwrap_or(Json::Null)
                }
                None => wanted.clone(),
            };
            let got = actual.get(field).cloned().unwrap_or(Json::Null);
            let held = canonical(&wanted) == canonical(&got);
            self.checked("result", format!("{field}: {}", short(&wanted)), short(&got), held);
            if !held {
                let message =
                    format!("expected StageResult `{field}` to be {}, but it is {}", short(&wanted), short(&got));
                self.finding(rules::ExpectationFailed, *span, message);
            }
        }
    }

    /// Compares the request with the digests recorded with the turn.
    pub(super) fn drift(&mut self, turn: &Turn, request: &Request, stage: &StageSpec, cassette: &StageCassette) {
        let Some(recorded) = &turn.request else { return };
        let now = fingerprints(request);
        for (component, value, span) in &recorded.components {
            let Some(current) = now.get(component.as_str()) else { continue };
            if canonical(value) == canonical(current) {
                continue;
            }
            let what = match component.as_str() {
                "system" => "the rendered system prompt (stage body or ctx) changed",
                "tools" => "the tool manifest (allowedTools, completionTool or completionSchema) changed",
                "messages" => "the transcript before this turn changed",
                "count" => "the number of messages before this turn changed",
                _ => "this request component changed",
            };
            let message = format!(
                "request drift: {what} since this turn was recorded (now {}, recorded {})",
                short(current),
                short(value)
            );
            // `--strict` or the cassette's own `match.onDrift: fail` make drift an error.
            let fails = self.env.strict || cassette.drift_fails == Some(true);
            let severity = if fails { Severity::Error } else { Severity::Warning };
            let help = if fails {
                "drift fails this replay (`--strict` or `match.onDrift: fail`); re-record, or accept the new digest"
            } else {
                "replay is turn by turn, so drift alone does not fail a dry-run; re-record, or accept the new digest"
            };
            let replacement = match current {
                Json::String(s) => format!("\"{s}\""),
                other => other.to_string(),
            };
            let finding = self
                .diagnostic(rules::RequestDrift, *span, message)
                .with_related(stage.file, stage.anchor, "the stage whose request changed")
                .with_severity(severity)
                .with_fix(
                    "Accept the new digest",
                    crate::diagnostic::Applicability::Unsafe,
                    vec![crate::diagnostic::Edit { span: *span, replacement }],
                )
                .with_help(help);
            self.findings.push(finding);
        }
    }

    pub(super) fn exhausted(&mut self, act: &Act, index: usize) {
        let attempts = &act.cassette.attempts;
        let span = match attempts.get(act.attempt as usize - 1) {
            Some(attempt) => attempt.span,
            None => act.cassette.attempts_span.unwrap_or(act.cassette.span),
        };
        let message = match attempts.get(act.attempt as usize - 1) {
            Some(attempt) => format!(
                "the runtime needs turn {} of attempt {}, but the cassette has {} there; record more turns or lower turnCap/maxAttempts",
                index + 1,
                act.attempt,
                attempt.turns.len(),
            ),
            // Assert retried into an attempt the cassette does not record at all.
            None => format!(
                "Assert retried, so the runtime needs attempt {}, but the cassette records {} attempt(s); record attempt {} or lower retryPolicy.maxAttempts",
                act.attempt,
                attempts.len(),
                act.attempt,
            ),
        };
        self.finding(rules::CassetteExhausted, span, message);
    }

    /// Recorded turns and attempts the stage never asked for. An expectation on them was never
    /// checked, so it did not hold: one `ExpectationFailed` per such turn (per attempt, for an
    /// attempt that never ran), counted as failed. Only what expects nothing is unused material
    /// (`CassetteUnconsumed`), so a turn is never reported twice. `ended` says how the stage
    /// ended (`the stage exited`, `the replay stopped`).
    pub(super) fn unconsumed(&mut self, cassette: &StageCassette, used: &[Used], ended: &str) {
        for (index, attempt) in cassette.attempts.iter().enumerate() {
            let number = index + 1;
            let Some(ran) = used.get(index) else {
                let why = format!("attempt {number} is never run: {ended} after attempt {}", used.len());
                let listed = attempt_expectations(number, attempt, 0);
                let expectations = listed.len();
                if expectations > 0 {
                    self.unchecked(&listed, &why);
                    let message = format!("{why}, so its {expectations} expectation(s) were never checked");
                    self.finding(rules::ExpectationFailed, attempt.span, message);
                } else if !attempt.turns.is_empty() {
                    let message = format!("{why} ({} turn(s) unused)", attempt.turns.len());
                    self.finding(rules::CassetteUnconsumed, attempt.span, message);
                }
                continue;
            };
            let why = match ran.gate {
                Some(gate) => format!("CheckGate said {gate}, so Act never ran in attempt {number}"),
                None => format!("Act ended after turn {} of attempt {number}", ran.turns),
            };
            let mut quiet: Vec<(usize, &Turn)> = Vec::new();
            for (k, turn) in attempt.turns.iter().enumerate().skip(ran.turns) {
                let expectations = turn.expect.len();
                if expectations == 0 {
                    quiet.push((k + 1, turn));
                    continue;
                }
                let listed: Vec<Listed> =
                    attempt_expectations(number, attempt, k).into_iter().take(expectations).collect();
                self.unchecked(&listed, &why);
                let message = format!(
                    "turn {} of attempt {number} is never replayed, so its {expectations} expectation(s) were never checked: {why}",
                    k + 1
                );
                self.finding(rules::ExpectationFailed, turn.span, message);
            }
            if let Some((_, first)) = quiet.first() {
                let numbers: Vec<String> = quiet.iter().map(|(k, _)| k.to_string()).collect();
                let message = format!(
                    "{} turn(s) of attempt {number} are never replayed (turn {}): {why}",
                    quiet.len(),
                    numbers.join(", ")
                );
                self.finding(rules::CassetteUnconsumed, first.span, message);
            }
        }
    }
}

/// What one attempt of a stage execution used of its recording.
pub(super) struct Used {
    /// Turns Act asked for.
    pub(super) turns: usize,
    /// The CheckGate outcome when it skipped Act.
    pub(super) gate: Option<&'static str>,
}

/// A branch as a message shows it: `tool c1 (denied)`, `batchRejected [c2, c3]`,
/// `parseFailure c4 at /steps`.
fn describe(branch: &str, call: Option<&str>, calls: &[String], error_at: &[String], outcome: Option<&str>) -> String {
    let mut text = branch.to_string();
    if let Some(call) = call {
        text.push_str(&format!(" {call}"));
    }
    if !calls.is_empty() {
        text.push_str(&format!(" [{}]", calls.join(", ")));
    }
    if !error_at.is_empty() {
        let mut shown: Vec<String> = error_at.iter().map(|at| show_pointer(at)).collect();
        shown.dedup();
        text.push_str(&format!(" at {}", shown.join(", ")));
    }
    if let Some(outcome) = outcome {
        text.push_str(&format!(" ({outcome})"));
    }
    text
}
