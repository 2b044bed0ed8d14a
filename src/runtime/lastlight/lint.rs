//! What a replay finds on the cassette once the run ended: the run's expectations, the
//! recordings and gate answers it never read, and the prompt tags that reached the model empty
//! or as written.

use crate::diagnostic::Diagnostic;
use crate::families::lastlight::model::{LOOP_VARIABLES, VARIABLES, Variable};
use crate::registry::cassette as rules;
use crate::runtime::lastlight::runner::{Runner, TagUse};
use crate::runtime::lastlight::schedule::End;
use crate::source::Span;

/// Checks the run-level expectations and reports what the run never read.
pub fn after_run(runner: &mut Runner, end: &End) {
    let stopped = end.status == "stopped";
    let why_stopped = "the replay stopped before the run ended".to_string();
    let expect = runner.cassette.expect.clone();
    if let Some((status, span)) = &expect.status {
        if stopped {
            runner.unreached("status", format!("status {status}"), why_stopped.clone(), *span);
        } else {
            let actual = (status != end.status).then(|| said(end));
            runner.expectation("status", format!("status {status}"), actual, *span);
        }
    }
    for (phase, expected, span) in &expect.phases {
        if runner.wf.phase(phase).is_none() {
            let actual = Some(format!("no phase `{phase}` in the workflow"));
            runner.expectation("phase", format!("phase `{phase}` {expected}"), actual, *span);
            continue;
        }
        let actual = runner.outcome(phase).map_or("notRun", |o| o.as_str());
        if stopped && actual == "notRun" {
            runner.unreached("phase", format!("phase `{phase}` {expected}"), why_stopped.clone(), *span);
            continue;
        }
        let holds = actual == expected || (expected == "ran" && matches!(actual, "succeeded" | "failed"));
        let wrong = (!holds).then(|| outcome_words(actual).to_string());
        runner.expectation("phase", format!("phase `{phase}` {expected}"), wrong, *span);
    }
    for (phase, cycles, span) in &expect.cycles {
        let loop_kind =
            runner.wf.phase(phase).map(|p| if p.review_loop.is_some() { "fix cycles" } else { "iterations" });
        let expected = format!("{cycles} {} of `{phase}`", loop_kind.unwrap_or("cycles"));
        match runner.cycles.get(phase).copied() {
            Some(actual) => {
                let wrong = (actual != *cycles).then(|| actual.to_string());
                runner.expectation("cycles", expected, wrong, *span);
            }
            None if stopped => runner.unreached("cycles", expected, why_stopped.clone(), *span),
            None => {
                let why = if loop_kind.is_none() { "no such phase in the workflow" } else { "a loop that never ran" };
                runner.expectation("cycles", expected, Some(why.to_string()), *span);
            }
        }
    }
    for (key, value, span) in &expect.outputs {
        let expected = format!("phaseOutputs.{key} to be {}", crate::runtime::lastlight::value::stringify(value));
        if stopped {
            runner.unreached("output", expected, why_stopped.clone(), *span);
            continue;
        }
        let wrong = match runner.outputs.get(key) {
            Some(actual) if actual == value => None,
            Some(actual) => Some(crate::runtime::lastlight::value::stringify(actual)),
            None => Some("nothing (it is not set)".to_string()),
        };
        runner.expectation("output", expected, wrong, *span);
    }
    if let Some((text, span)) = &expect.error {
        let expected = format!("the run's error to contain {text:?}");
        if stopped {
            runner.unreached("error", expected, why_stopped.clone(), *span);
        } else {
            let wrong = match &end.error {
                Some(error) if error.contains(text.as_str()) => None,
                Some(error) => Some(format!("{error:?}")),
                None => Some(format!("no error (the run {})", said(end))),
            };
            runner.expectation("error", expected, wrong, *span);
        }
    }
    unread(runner, end);
    tags(runner);
}

fn said(end: &End) -> String {
    match end.status {
        "succeeded" => "succeeded".into(),
        "failed" => "failed".into(),
        "paused" => "paused at a gate".into(),
        other => other.to_string(),
    }
}

fn outcome_words(outcome: &str) -> &str {
    match outcome {
        "notRun" => "never run",
        "paused" => "paused at a gate",
        other => other,
    }
}

/// Recordings and gate answers the run never read: their expectations count as failed, the
/// rest is a warning.
fn unread(runner: &mut Runner, end: &End) {
    let why = match end.status {
        "paused" => " (the run ended paused at a gate)",
        "stopped" => " (the replay stopped early)",
        "failed" => " (the run failed before it)",
        _ => "",
    };
    let executions = runner.cassette.executions.clone();
    for (i, execution) in executions.iter().enumerate() {
        if runner.used[i] {
            if let Some((verdict, span)) = &execution.expect.verdict
                && !runner.verdict_checked.contains(&i)
            {
                let what = format!("verdict {verdict} for `{}`", execution.label);
                runner.unreached("verdict", what, "the execution is no review of a `loop` phase".into(), *span);
            }
            if let Some((_, span)) = &execution.expect.blocked
                && !runner.blocked_checked.contains(&i)
            {
                let what = format!("the BLOCKED rule on `{}`", execution.label);
                runner.unreached(
                    "blocked",
                    what,
                    "its phase has no `on_output.contains_BLOCKED` that was evaluated".into(),
                    *span,
                );
            }
            continue;
        }
        let never = format!("execution `{}` never ran{why}", execution.label);
        let expect = &execution.expect;
        let mut expected: Vec<(String, Span)> = Vec::new();
        for (text, span) in &expect.prompt_contains {
            expected.push((format!("the prompt of `{}` to contain {text:?}", execution.label), *span));
        }
        for (text, span) in &expect.prompt_omits {
            expected.push((format!("the prompt of `{}` not to contain {text:?}", execution.label), *span));
        }
        if let Some((verdict, span)) = &expect.verdict {
            expected.push((format!("verdict {verdict} for `{}`", execution.label), *span));
        }
        if let Some((blocked, span)) = &expect.blocked {
            expected.push((format!("BLOCKED to {}fail the workflow", if *blocked { "" } else { "not " }), *span));
        }
        if !expected.is_empty() {
            for (what, span) in expected {
                runner.unreached("execution", what, never.clone(), span);
            }
            continue;
        }
        let hint = runner
            .missing_label
            .as_deref()
            .filter(|missing| crate::util::did_you_mean(&execution.label, [*missing]).is_some())
            .map(|missing| format!("; the run needed `{missing}`"))
            .unwrap_or_default();
        let message = format!("{never}, so this recording is never replayed{hint}");
        runner.findings.push(Diagnostic::new(rules::CassetteUnconsumed, runner.cassette_file, execution.span, message));
    }
    let gates = runner.cassette.gates.clone();
    for gate in &gates {
        let used = runner.answers_used.get(&gate.name).copied().unwrap_or(0);
        for (n, (_, span)) in gate.answers.iter().enumerate().skip(used) {
            let message = if n == 0 {
                format!("the run never pauses at gate `{}`{why}, so this answer is never given", gate.name)
            } else {
                format!("the run pauses at gate `{}` {used} time(s), so answer {} is never given", gate.name, n + 1)
            };
            runner.findings.push(Diagnostic::new(rules::CassetteUnconsumed, runner.cassette_file, *span, message));
        }
    }
}

/// `RenderedEmpty` and `RenderedVerbatim`, once per tag, on the first recording that sent it.
fn tags(runner: &mut Runner) {
    let uses = std::mem::take(&mut runner.tags);
    for tag in uses {
        let span = runner
            .cassette
            .executions
            .get(tag.recording)
            .map_or_else(|| runner.cassette.key_span("executions"), |e| e.span);
        let prompt = runner.workspace.file(tag.file);
        let at = prompt.lines().line_col(&prompt.text, tag.span.start);
        let sent = sent_by(&tag);
        let finding = match &tag.verbatim {
            Some(why) => Diagnostic::new(
                rules::RenderedVerbatim,
                runner.cassette_file,
                span,
                format!("{sent} `{}` as written ({}:{}): {why}", tag.tag, prompt.display, at.line),
            ),
            None => Diagnostic::new(
                rules::RenderedEmpty,
                runner.cassette_file,
                span,
                format!(
                    "{sent} `{}` as an empty string ({}:{}): {}",
                    tag.tag,
                    prompt.display,
                    at.line,
                    why_empty(runner, &tag)
                ),
            ),
        };
        runner.findings.push(finding.with_related(tag.file, tag.span, "the tag"));
    }
}

fn sent_by(tag: &TagUse) -> String {
    match tag.labels.as_slice() {
        [one] => format!("`{one}` was sent"),
        many => format!("{} were sent", many.iter().map(|l| format!("`{l}`")).collect::<Vec<_>>().join(", ")),
    }
}

/// Why a tag had no value in this run.
fn why_empty(runner: &Runner, tag: &TagUse) -> String {
    let key = tag.key.as_str();
    if tag.tag.starts_with("${") {
        return format!(
            "phase output `{key}` is not set when it runs (the phase did not run before it, was skipped, or the run resumed after a gate: the engine keeps no phase outputs across a resume)"
        );
    }
    let first = key.split('.').next().unwrap_or(key);
    let known = |table: &[(&str, &str)]| table.iter().any(|(name, _)| *name == first);
    let producer = runner.wf.phases.iter().any(|p| p.name == first || p.output_var.as_deref() == Some(first));
    if producer {
        return format!("`{first}` is a phase output that is not set when it runs");
    }
    if known(LOOP_VARIABLES) {
        return format!("`{first}` is set only inside a loop's executions");
    }
    if runner.file.config.lastlight.variables.iter().any(|v| v == first) {
        return format!(
            "`{first}` reaches the context through the dispatcher's `request.extra` (`[lastlight] variables`): give it in the cassette's `trigger.extra`"
        );
    }
    let rows: Vec<&Variable> = VARIABLES.iter().filter(|v| v.name == first).collect();
    let release = runner.release();
    let pr_scoped = crate::families::lastlight::model::WorkflowDoc::parse(runner.file).is_pr_scoped();
    let set_here = |v: &&&Variable| v.set_for_run(Some(&runner.wf.name), pr_scoped);
    if let Some(since) = rows.iter().filter(set_here).map(|v| v.since).min()
        && since > release
    {
        return format!(
            "the server sets `{first}` from Last Light {} on; this run models {}, where it is undefined",
            since.name(),
            release.name()
        );
    }
    if !rows.is_empty() && !rows.iter().any(|v| set_here(&v)) {
        return format!(
            "the server sets `{first}` only for other workflows (PR-scoped ones, or by name), not for this one"
        );
    }
    if !rows.is_empty() {
        let what = if key == first { String::new() } else { format!(" for `{key}`") };
        return format!(
            "the server sets `{first}` for some runs, but this run's context has no value{what}: give it in the cassette's `trigger`, `trigger.extra` or `context`"
        );
    }
    format!(
        "no context variable, phase or `output_var` is named `{first}` (give it in `trigger.extra` if the server passes it)"
    )
}
