//! The render-only preview: a phase's prompt as the engine would send it from a context given
//! by hand (`stagelint render WORKFLOW --phase NAME --var key=value`, and the editor's
//! "Preview prompt" lens), with every substitution marked and the values it lacked shown as
//! such. No cassette, nothing run.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::families::lastlight::model::{VARIABLES, WorkflowDoc};
use crate::registry::releases::lastlight::ReleaseId;
use crate::runtime::engine::Preview;
use crate::runtime::lastlight::context;
use crate::runtime::lastlight::render::{self, Rendered};
use crate::runtime::lastlight::workflow::{Workflow, resolve_budget};
use crate::template::lastlight::Engine;
use crate::workspace::lastlight::{PathProblem, prompt_base, resolve_prompt};
use crate::workspace::{SourceFile, Workspace};

/// A phase's prompt, rendered for a preview.
#[derive(Debug)]
pub struct Previewed {
    /// `phase architect of workflow build`.
    pub title: String,
    /// The template's path as shown, `skills nudge` or `command`.
    pub source: String,
    pub engine: Engine,
    /// The release rendered for (the newest the repository may be at).
    pub release: ReleaseId,
    /// The workflow's name and whether it is PR-scoped: which variables its runs get.
    pub workflow: (String, bool),
    pub rendered: Rendered,
    /// Where the template's text starts, for line numbers of its tags (`None`: no template).
    pub template: Option<String>,
}

/// One "Preview prompt" lens per phase that sends a prompt, on its `name:`.
pub fn lenses(file: &SourceFile) -> Vec<Preview> {
    let doc = WorkflowDoc::parse(file);
    if doc.is_cron() {
        return Vec::new();
    }
    doc.phases()
        .into_iter()
        .filter(|p| p.kind() != "context")
        .filter_map(|p| {
            let name = p.name()?;
            let span = p.node.entry("name")?.key.span;
            let title = if p.kind() == "bash" || p.kind() == "script" { "Preview command" } else { "Preview prompt" };
            Some(Preview { span, title: title.into(), target: name.to_string() })
        })
        .collect()
}

/// Renders the prompt phase `phase` of workflow `file` sends first, from `vars` alone.
pub fn render_phase(
    workspace: &Workspace,
    file: &SourceFile,
    phase_name: &str,
    vars: &[(String, Value)],
) -> Result<Previewed, String> {
    let doc = WorkflowDoc::parse(file);
    if doc.is_cron() {
        return Err(format!("{}: a cron schedule has no phases", file.display));
    }
    let wf = Workflow::read(&doc);
    let engine = file.config.lastlight.dialect();
    let Some(phase) = wf.phase(phase_name) else {
        let names: Vec<&str> = wf.phases.iter().map(|p| p.name.as_str()).collect();
        let hint = crate::util::did_you_mean(phase_name, names.iter().copied())
            .map(|n| format!("; did you mean `{n}`?"))
            .unwrap_or_default();
        return Err(format!(
            "workflow `{}` has no phase `{phase_name}`{hint} (its phases: {})",
            wf.name,
            names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
        ));
    };
    let title = format!("phase {} of workflow {}", phase.name, wf.name);
    if phase.kind == "context" {
        return Err(format!("phase `{phase_name}` is a context phase: it runs no agent and sends no prompt"));
    }
    let mut loop_vars: Vec<(&str, Value)> = Vec::new();
    if phase.review_loop.is_some() {
        loop_vars.push(("fixCycle", json!(0)));
    }
    let ctx0 = context::preview(vars, &[]);
    if let Some(lp) = &phase.generic_loop {
        let max = resolve_budget(&lp.max_iterations, &ctx0).unwrap_or(1);
        loop_vars.extend([("iteration", json!(1)), ("maxIterations", json!(max)), ("previousOutput", json!(""))]);
    }
    let ctx = context::preview(vars, &loop_vars);
    let previewed = |source: String, rendered: Rendered, template: Option<String>| Previewed {
        title: title.clone(),
        source,
        engine,
        release: file.config.lastlight.release.newest,
        workflow: (wf.name.clone(), doc.is_pr_scoped()),
        rendered,
        template,
    };
    if let Some(text) = phase
        .command
        .as_ref()
        .filter(|_| phase.kind == "bash")
        .or(phase.script.as_ref().filter(|_| phase.kind == "script"))
    {
        let rendered = render::render(&text.text, &ctx, engine);
        return Ok(previewed(phase.kind.clone(), rendered, Some(text.text.clone())));
    }
    if let Some((path, _)) = &phase.prompt {
        let base = prompt_base(&file.path);
        let resolved = match resolve_prompt(base, path) {
            Ok(resolved) => resolved,
            Err(PathProblem::Empty) => return Err(format!("phase `{phase_name}`: its prompt path is empty")),
            Err(_) => return Err(format!("phase `{phase_name}`: prompt path `{path}` escapes the workflow directory")),
        };
        let Some(template) = workspace.file_at(&resolved) else {
            return Err(format!("phase `{phase_name}`: prompt template not found: {}", resolved.display()));
        };
        let rendered = render::render(&template.text, &ctx, engine);
        return Ok(previewed(template.display.clone(), rendered, Some(template.text.clone())));
    }
    let skills = phase.skill_names();
    if skills.is_empty() {
        return Err(format!(
            "phase `{phase_name}` has neither prompt: nor skills: — the engine cannot build its prompt"
        ));
    }
    if engine == Engine::Seed && phase.skill.is_none() {
        return Err(format!(
            "phase `{phase_name}` has only `skills:`, and the seed-era runner skips such a phase (it reads `skill:`): it sends no prompt"
        ));
    }
    let text = render::skills_nudge(&skills, &ctx, engine);
    Ok(previewed("skills nudge".into(), Rendered { text, ..Rendered::default() }, None))
}

/// A substitution as the views mark it.
#[derive(Clone, Debug)]
pub struct Marked {
    pub start: usize,
    pub end: usize,
    pub missing: bool,
    pub key: String,
}

/// `text` with each substitution's value between `⟦` and `⟧`, and each that rendered empty
/// for want of a value as `⟦∅ key⟧` (nested substitutions: the outermost only).
pub fn mark(text: &str, marks: &[Marked]) -> String {
    let mut sorted: Vec<&Marked> = marks.iter().filter(|m| m.end <= text.len() && m.start <= m.end).collect();
    sorted.sort_by_key(|m| (m.start, std::cmp::Reverse(m.end)));
    let mut out = String::with_capacity(text.len() + marks.len() * 6);
    let mut at = 0;
    for m in sorted {
        if m.start < at || !text.is_char_boundary(m.start) || !text.is_char_boundary(m.end) {
            continue;
        }
        out.push_str(&text[at..m.start]);
        if m.missing && m.start == m.end {
            let _ = write!(out, "⟦∅ {}⟧", m.key);
        } else {
            let _ = write!(out, "⟦{}⟧", &text[m.start..m.end]);
        }
        at = m.end;
    }
    out.push_str(&text[at..]);
    out
}

/// The marks of a rendered text.
pub fn marks_of(rendered: &Rendered) -> Vec<Marked> {
    rendered
        .marks
        .iter()
        .filter_map(|m| m.range.map(|(start, end)| Marked { start, end, missing: m.missing, key: m.key.clone() }))
        .collect()
}

/// The preview as a person reads it: a header, the prompt with its substitutions marked (or
/// exactly as sent, with `exact`), then the values it lacked and the tags it sends as written.
pub fn text(previewed: &Previewed, exact: bool) -> String {
    if exact {
        return previewed.rendered.text.clone();
    }
    let rendered = &previewed.rendered;
    let engine = match previewed.engine {
        Engine::Seed => "seed-era engine",
        Engine::Head => "current engine",
    };
    let release = previewed.release;
    let mut out =
        format!("# {} · {} · Last Light {} · {}\n", previewed.title, previewed.source, release.name(), engine);
    out.push_str("# ⟦…⟧ marks each substituted value, ⟦∅ key⟧ a value the context lacks (sent as an empty string)\n\n");
    out.push_str(&mark(&rendered.text, &marks_of(rendered)));
    if !out.ends_with('\n') {
        out.push('\n');
    }
    let line_of = |origin: Option<usize>| match (&previewed.template, origin) {
        (Some(template), Some(at)) => format!("line {}", template[..at.min(template.len())].matches('\n').count() + 1),
        _ => "from a value".to_string(),
    };
    // A variable the release does not set for this workflow stays empty whatever is given.
    let (name, pr_scoped) = (&previewed.workflow.0, previewed.workflow.1);
    let unset = |key: &str| {
        let first = key.split('.').next().unwrap_or(key);
        let rows = || VARIABLES.iter().filter(|v| v.name == first);
        let here = rows().filter(|v| v.set_for_run(Some(name), pr_scoped)).map(|v| v.since).min();
        match here {
            Some(since) if since > release => {
                format!(": set from Last Light {} on, not at {}", since.name(), release.name())
            }
            None if rows().next().is_some() => ": the server sets it only for other workflows".to_string(),
            _ => String::new(),
        }
    };
    let missing: Vec<String> =
        rendered.missing().map(|m| format!("  {} ({}){}", m.tag, line_of(m.origin), unset(&m.key))).collect();
    if !missing.is_empty() {
        let _ = writeln!(out, "\n# sent empty, no value in the context (give them with --var key=value):");
        for line in missing {
            let _ = writeln!(out, "{line}");
        }
    }
    if !rendered.verbatim.is_empty() {
        let _ = writeln!(out, "\n# sent as written (no pass of the engine replaces them):");
        for v in &rendered.verbatim {
            let _ = writeln!(out, "  {} ({}): {}", v.text, line_of(Some(v.origin)), v.why);
        }
    }
    out
}

/// The preview as JSON: the exact text, the substitutions and the verbatim tags.
pub fn json(previewed: &Previewed) -> Value {
    let rendered = &previewed.rendered;
    json!({
        "title": previewed.title,
        "source": previewed.source,
        "engine": match previewed.engine { Engine::Seed => "seed", Engine::Head => "head" },
        "release": previewed.release.name(),
        "prompt": rendered.text,
        "substitutions": crate::runtime::lastlight::substitutions_json(rendered),
        "missing": rendered.missing().map(|m| m.tag.clone()).collect::<Vec<_>>(),
        "verbatim": rendered.verbatim.iter().map(|v| json!({"tag": v.text, "why": v.why})).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_wrap_values_and_show_missing_ones() {
        let marks = vec![
            Marked { start: 7, end: 8, missing: false, key: "issueTitle".into() },
            Marked { start: 13, end: 13, missing: true, key: "prTitle".into() },
        ];
        assert_eq!(mark("Title: T\nPR: \n", &marks), "Title: ⟦T⟧\nPR: ⟦∅ prTitle⟧\n");
    }
}
