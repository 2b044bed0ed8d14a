//! Cron files (`kind: cron`): the schedule parses, and `workflow` names an agent workflow.

use crate::diagnostic::{Applicability, Diagnostic, Edit};
use crate::families::lastlight::model::{self, WorkflowDoc};
use crate::families::lastlight::rules::index::Index;
use crate::families::lastlight::rules::loader_rejects;
use crate::families::lastlight::{CronKindMissing, CronSchedule, CronWorkflowUnknown};
use crate::registry::releases::lastlight::{self as releases, Has};
use crate::source::{Node, Span};
use crate::util::did_you_mean;

pub(super) fn check(doc: &WorkflowDoc, root: &Node, all: &[WorkflowDoc], index: &Index, out: &mut Vec<Diagnostic>) {
    let id = doc.file.id;
    let first_line = Span::new(0, doc.file.text.find('\n').unwrap_or(doc.file.text.len()));
    match root.get("schedule") {
        None => out.push(
            Diagnostic::new(
                CronSchedule,
                id,
                first_line,
                format!(
                    "this cron has no `schedule`, which the cron schema requires; {}",
                    loader_rejects(doc.file.config.lastlight.release, doc.file)
                ),
            )
            .with_help("add `schedule: \"0 9 * * 1\"` (minute, hour, day of month, month, day of week)"),
        ),
        Some(node) => {
            if let Some(text) = node.as_str()
                && let Err(why) = parse_schedule(text)
            {
                out.push(
                    Diagnostic::new(CronSchedule, id, node.span, format!("`{text}` is not a valid cron schedule: {why}"))
                        .with_help("write five fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12), day of week (0-7)"),
                );
            }
        }
    }
    let Some(node) = root.get("workflow") else {
        let release = doc.file.config.lastlight.release;
        let handler = root.entry("handler").map(|e| e.key.span);
        let d = match (handler, release.has(releases::V0_25_6)) {
            (Some(_), Has::Yes | Has::From(_)) => return,
            (None, Has::Yes) => {
                Diagnostic::new(CronWorkflowUnknown, id, first_line, "this cron names no `workflow` to run")
            }
            // Before 0.25.6 a cron has no `handler`, and its schema requires `workflow`.
            (handler, _) => Diagnostic::new(
                CronWorkflowUnknown,
                id,
                handler.unwrap_or(first_line),
                format!(
                    "this cron names no `workflow`, which the cron schema requires before Last Light 0.25.6 (a `handler` runs from then on; this repository is at {}): {}",
                    release.describe(),
                    loader_rejects(release, doc.file)
                ),
            ),
        };
        out.push(d.with_help("add `workflow: <name>` with the `name` of an agent workflow"));
        return;
    };
    let Some(name) = node.as_str() else { return };
    // Workflows are looked up by `name`, then by file name, in the cron's `workflows` directory
    // and its subdirectories.
    if index.has_agent(all, doc, name) {
        return;
    }
    // Not found: only now list the namespace's agent workflows, for the suggestion.
    // `workflow: build.yaml` names the file, which the loader would look for as `build.yaml.yaml`.
    let stem =
        name.strip_suffix(".yaml").or_else(|| name.strip_suffix(".yml")).filter(|stem| index.has_agent(all, doc, stem));
    // The nearest name is searched among at most this many workflows: every broken cron of a
    // huge namespace comparing itself with all of it would make the check quadratic.
    const NEAREST_AMONG: usize = 2_000;
    let agents = index.agents(all, doc);
    let suggestion = stem.or_else(|| {
        (agents.len() <= NEAREST_AMONG).then(|| did_you_mean(name, agents.iter().filter_map(|w| w.name()))).flatten()
    });
    let hint = suggestion.map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
    out.push(
        Diagnostic::new(
            CronWorkflowUnknown,
            id,
            node.span,
            format!(
                "no agent workflow named `{name}` in this workflows directory (subdirectories included), so every scheduled run fails{hint}"
            ),
        )
        .with_suggestion(node.span, suggestion),
    );
}

/// A file with a cron's keys (`schedule`, `workflow`, `handler`) and no `phases` that does not
/// say `kind: cron`: the loader reads it as an agent workflow, finds no phases and skips it, so
/// the schedule never runs. Returns whether it reported that.
pub(super) fn missing_kind(doc: &WorkflowDoc, root: &Node, out: &mut Vec<Diagnostic>) -> bool {
    if model::is_cron(root) || root.get("phases").is_some() {
        return false;
    }
    let Some(entry) = ["schedule", "workflow", "handler"].iter().find_map(|key| root.entry(key)) else {
        return false;
    };
    let text = &doc.file.text;
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let edit = match root.entry("kind") {
        Some(kind) => Edit { span: kind.value.span, replacement: "cron".into() },
        None => {
            let first = root.as_map().and_then(|m| m.first()).map_or(0, |e| e.key.span.start);
            let line_start = text[..first].rfind('\n').map_or(0, |n| n + 1);
            Edit { span: Span::empty(line_start), replacement: format!("kind: cron{newline}") }
        }
    };
    let (what, title) = match root.get("kind").and_then(Node::as_str) {
        Some(kind) => (format!("`kind: {kind}`"), "Set `kind: cron`"),
        None => ("no `kind: cron`".to_string(), "Add `kind: cron`"),
    };
    let key = entry.key_str().unwrap_or("schedule");
    out.push(
        Diagnostic::new(
            CronKindMissing,
            doc.file.id,
            entry.key.span,
            format!(
                "this file has a cron's `{key}` but {what}, so the loader reads it as an agent workflow, finds no `phases` and skips it: the schedule never runs"
            ),
        )
        .with_help("add `kind: cron` at the top")
        .with_fix(title, Applicability::Unsafe, vec![edit]),
    );
    true
}

/// Checks a five-field cron expression (six with seconds first).
pub(crate) fn parse_schedule(text: &str) -> Result<(), String> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    const FIVE: [(&str, u32, u32); 5] =
        [("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 7)];
    let ranges: Vec<(&str, u32, u32)> = match fields.len() {
        5 => FIVE.to_vec(),
        6 => std::iter::once(("second", 0, 59)).chain(FIVE).collect(),
        1 if text.trim_start().starts_with('@') => {
            return Err(
                "cron macros such as `@daily` are not supported; write five fields (`0 0 * * *` for daily)".into()
            );
        }
        n => return Err(format!("it has {n} fields; a schedule has 5 (or 6 with seconds)")),
    };
    for (field, (what, min, max)) in fields.iter().zip(ranges) {
        for part in field.split(',') {
            check_part(part, what, min, max)?;
        }
    }
    Ok(())
}

const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

fn check_part(part: &str, what: &str, min: u32, max: u32) -> Result<(), String> {
    let (range, step) = match part.split_once('/') {
        Some((range, step)) => (range, Some(step)),
        None => (part, None),
    };
    if let Some(step) = step
        && step.parse::<u32>().map_or(true, |s| s == 0 || s > max.max(1))
    {
        return Err(format!("`{step}` is not a step for the {what} field"));
    }
    if range == "*" {
        return Ok(());
    }
    let value = |text: &str| -> Result<u32, String> {
        let lower = text.to_ascii_lowercase();
        let named = match what {
            "month" => MONTHS.iter().position(|m| *m == lower).map(|i| i as u32 + 1),
            "day of week" => DAYS.iter().position(|d| *d == lower).map(|i| i as u32),
            _ => None,
        };
        let n = named
            .or_else(|| text.parse().ok())
            .ok_or_else(|| format!("`{text}` is not a value of the {what} field"))?;
        if n < min || n > max {
            return Err(format!("{n} is out of range for the {what} field ({min}-{max})"));
        }
        Ok(n)
    };
    match range.split_once('-') {
        Some((a, b)) => {
            let (a, b) = (value(a)?, value(b)?);
            if a > b {
                return Err(format!("the range `{range}` runs backwards"));
            }
        }
        None => {
            value(range)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_schedule;

    #[test]
    fn schedules() {
        assert!(parse_schedule("*/15 * * * *").is_ok());
        assert!(parse_schedule("0 9 * * 1").is_ok());
        assert!(parse_schedule("0 9-17/2 1,15 jan-jun mon-fri").is_ok());
        assert!(parse_schedule("0 0 * * * *").is_ok());
        assert!(parse_schedule("60 * * * *").is_err());
        assert!(parse_schedule("* * * *").is_err());
        assert!(parse_schedule("*/0 * * * *").is_err());
        assert!(parse_schedule("@daily").is_err());
        assert!(parse_schedule("0 9 * * funday").is_err());
    }
}
