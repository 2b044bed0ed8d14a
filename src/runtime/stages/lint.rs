//! The stage engine's `cassette/` findings: structural ones (call ids, tool fakes) and those
//! only replaying a stage or machine cassette finds.

use std::collections::BTreeMap;

use crate::cassette::{Cassette, Reply};
use crate::diagnostic::{Diagnostic, FileId, Severity};
use crate::registry::cassette::*;
use crate::runtime::run::{DryRun, Options};
use crate::runtime::stages::{self, owners, read_cassette};
use crate::source::Span;
use crate::util::{did_you_mean, did_you_mean_styled, did_you_mean_valid, is_kebab_case};
use crate::workspace::{SourceFile, Workspace};

/// Codes only a replay can find.
pub(super) const REPLAY: [&str; 9] = [
    ExecutionLimit,
    ContextIncomplete,
    StageInitFailed,
    CassetteExhausted,
    CassetteUnconsumed,
    RequestDrift,
    ExpectationFailed,
    ToolFakeMissing,
    ResultIgnored,
];

/// The findings of stage or machine cassette `file`: what reading it finds and, with
/// `replays`, what replaying it finds.
pub(super) fn check(workspace: &Workspace, file: &SourceFile, replays: bool, out: &mut Vec<Diagnostic>) {
    // The one reading path: the dry-run reports the same structural findings.
    let (cassette, found) = read_cassette(file);
    let broken = found.iter().any(|d| d.severity == Severity::Error);
    out.extend(found);
    if replays && !broken {
        replay(workspace, file, &cassette, out);
    }
}

/// The structural findings of a cassette: what the reader found, call ids, and fakes of tools
/// outside the live tool set. `check` and the dry-run both report these, through
/// [`read_cassette`].
pub fn problems(file: &SourceFile, cassette: &Cassette) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = cassette
        .problems
        .iter()
        .map(|p| {
            Diagnostic::new(p.rule, file.id, p.span, p.message.clone()).with_suggestion(p.span, p.suggestion.as_deref())
        })
        .collect();
    call_ids(file.id, cassette, &mut out);
    tools(file, cassette, &mut out);
    out
}

/// Call ids are unique in a cassette; `grant`, `results` and `expect` name calls of their turn.
fn call_ids(file: FileId, cassette: &Cassette, out: &mut Vec<Diagnostic>) {
    let mut seen: BTreeMap<&str, Span> = BTreeMap::new();
    for part in cassette.parts() {
        for turn in part.attempts.iter().flat_map(|a| &a.turns) {
            for (id, span) in &turn.call_spans {
                if let Some(first) = seen.get(id.as_str()) {
                    let message = format!(
                        "call id `{id}` is used twice; results, grants and expectations could not tell them apart"
                    );
                    out.push(
                        Diagnostic::new(DuplicateCallId, file, *span, message)
                            .with_related(file, *first, "first used here")
                            .with_help("number calls `c1`, `c2`, … in the order they appear"),
                    );
                } else {
                    seen.insert(id, *span);
                }
            }
            let Reply::Response(response) = &turn.reply else { continue };
            let ids: Vec<&str> = response.calls().map(|c| c.id.as_str()).collect();
            let mut unknown = |id: &str, span: Span, what: &str| {
                if !ids.contains(&id) && !cassette.unread_calls.contains(id) {
                    let hint = did_you_mean(id, ids.iter().copied())
                        .map_or(String::new(), |s| format!("; did you mean `{s}`?"));
                    let message = format!("{what} names call `{id}`, which this turn's response does not make{hint}");
                    out.push(Diagnostic::new(UnknownCallId, file, span, message));
                }
            };
            for (id, (_, span)) in &turn.grant {
                unknown(id, *span, "`grant`");
            }
            for (id, (_, span)) in &turn.results {
                unknown(id, *span, "`results`");
            }
            for expect in &turn.expect {
                for id in expect.call.iter().chain(expect.calls.iter().flatten()) {
                    unknown(id, expect.span, "an expectation");
                }
            }
        }
    }
}

/// A fake for a tool outside the live tool set can never be dispatched.
fn tools(file: &SourceFile, cassette: &Cassette, out: &mut Vec<Diagnostic>) {
    let known = &file.config.tools;
    for part in cassette.parts() {
        // The other fakes' names tell `WebFetch` from `web-fetch` for a `webfetch`.
        let neighbours: Vec<&str> =
            part.tool_keys.iter().map(|(n, _)| n.as_str()).filter(|n| known.iter().any(|k| k == n)).collect();
        for (name, span) in &part.tool_keys {
            if known.contains(name) {
                continue;
            }
            let suggestion = did_you_mean_styled(name, known.iter().map(String::as_str), &neighbours);
            let hint = suggestion.as_ref().map_or(String::new(), |s| format!("; did you mean {}?", s.shown()));
            let message =
                format!("`tools.{name}` fakes a tool that is not in the live tool set, so no call can reach it{hint}");
            let diagnostic = Diagnostic::new(UnknownTool, file.id, *span, message);
            out.push(match suggestion {
                Some(guess) => diagnostic.with_guess(*span, guess.first().to_string(), &guess),
                None => diagnostic,
            });
        }
    }
}

/// Replays the cassette against its stage or machine and keeps what the replay found in it.
fn replay(workspace: &Workspace, file: &SourceFile, cassette: &Cassette, out: &mut Vec<Diagnostic>) {
    let options = Options { strict: false, explain_init: false };
    let result = match replay_read(workspace, file, cassette, options) {
        Ok(result) => result,
        Err(unowned) => {
            out.extend(unowned);
            return;
        }
    };
    // An execution limit is found by replaying the cassette but points at the stage's `next`.
    let kept = |d: &Diagnostic| (d.file == file.id || d.code == ExecutionLimit) && REPLAY.contains(&d.code);
    for finding in result.findings.into_iter().filter(kept) {
        // Two machine cassettes may find the same loop.
        if !out.contains(&finding) {
            out.push(finding);
        }
    }
}

/// Replays cassette `file`, already read into `cassette`, against the stage or machine it
/// belongs to; `Err` with what says why when it belongs to none (nothing when its reader
/// already said so: a stage cassette without `stage:`).
pub(super) fn replay_read(
    workspace: &Workspace,
    file: &SourceFile,
    cassette: &Cassette,
    options: Options,
) -> Result<DryRun, Vec<Diagnostic>> {
    if cassette.is_machine() {
        let Some(sm) = owners::owning_machine(workspace, file) else {
            let message =
                "a machine cassette (`stages:`) must sit in a state machine's directory, beside its `sm.yaml`";
            return Err(vec![Diagnostic::new(UnknownStage, file.id, Span::empty(0), message)]);
        };
        return Ok(stages::machine(workspace, sm, Some(file.id), options));
    }
    let Some((id, span)) = &cassette.stage.stage else { return Err(Vec::new()) };
    let Some(stage) = owners::stage_for(workspace, file, id) else {
        let near = owners::stages_in_scope(workspace, file);
        // A stage whose id is not kebab-case is about to be renamed: no fix towards it.
        let hint = did_you_mean_valid(id, near.iter().map(|(id, _)| id.as_str()), is_kebab_case);
        let place =
            if owners::owning_machine(workspace, file).is_some() { "this state machine" } else { "this directory" };
        let message = match hint {
            Some((s, true)) => format!("no stage `{id}` in {place}; did you mean `{s}`?"),
            Some((s, false)) => format!(
                "no stage `{id}` in {place}, so this cassette is never replayed; the closest id, `{s}`, is not kebab-case (`sm/InvalidStageId`)"
            ),
            None => format!("no stage `{id}` in {place}, so this cassette is never replayed"),
        };
        let fix = hint.filter(|(_, valid)| *valid).map(|(s, _)| s);
        return Err(vec![Diagnostic::new(UnknownStage, file.id, *span, message).with_suggestion(*span, fix)]);
    };
    // The reader's own problems are reported by `check`; only the replay's findings are new.
    Ok(stages::stage_with(workspace, stage.id, file.id, cassette, Vec::new(), options))
}
