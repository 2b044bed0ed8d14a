//! Files a workflow names: prompt templates (found, inside the workflow directory, asking for
//! the reviewer verdict where a loop parses one) and skills (valid names, found).

use std::path::Path;

use crate::diagnostic::Diagnostic;
use crate::families::lastlight::model::{self, PathProblem};
use crate::families::lastlight::rules::Ctx;
use crate::families::lastlight::{
    InvalidSkillName, PromptNotFound, PromptPathEscapes, SkillNotFound, VerdictMarkerMissing,
};
use crate::source::Span;
use crate::util::did_you_mean;
use crate::workspace::FileKind;

pub(super) fn check(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    prompts(ctx, out);
    skills(ctx, out);
    verdicts(ctx, out);
}

fn prompts(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let id = ctx.file().id;
    let dir = ctx.doc.prompt_base();
    for (i, (reference, path)) in ctx.doc.prompts.iter().enumerate() {
        let span = reference.node.span;
        match path {
            Ok(path) if ctx.doc.prompt_file(i, ctx.workspace).is_some() || ctx.workspace.exists(path) => {}
            Ok(_) => {
                let existing = existing_prompts(ctx, dir);
                // Compare file names within the directory the path names: a typo is in the name.
                let (folder, name) = reference.text.rsplit_once('/').unwrap_or(("", reference.text));
                let siblings = existing.iter().filter_map(|p| {
                    let (f, n) = p.rsplit_once('/').unwrap_or(("", p.as_str()));
                    (f == folder).then_some(n)
                });
                let suggestion = did_you_mean(name, siblings)
                    .map(|n| if folder.is_empty() { n.to_string() } else { format!("{folder}/{n}") })
                    // A path written from the project root (`workflows/prompts/plan.md`) names an
                    // existing prompt once its leading directories are dropped.
                    .or_else(|| {
                        let text = reference.text.trim_start_matches("./");
                        let mut tails = text.match_indices('/').map(|(i, _)| &text[i + 1..]);
                        tails.find(|tail| existing.iter().any(|p| p == tail)).map(str::to_string)
                    });
                let suggestion = suggestion.as_deref();
                let hint = suggestion.map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
                out.push(
                    Diagnostic::new(
                        PromptNotFound,
                        id,
                        span,
                        format!(
                            "Prompt template not found: `{}` (relative to the workflows directory){hint}",
                            reference.text
                        ),
                    )
                    .with_suggestion(span, suggestion)
                    .with_help("create the file, or fix the path; it is resolved against the workflows directory (the nearest ancestor named `workflows`, else this file's directory)"),
                );
            }
            Err(PathProblem::Empty) => out.push(Diagnostic::new(
                PromptNotFound,
                id,
                span,
                format!("Prompt path is empty: `{}` names no file", reference.key),
            )),
            Err(problem) => {
                let why = if *problem == PathProblem::Absolute { "an absolute path" } else { "a path that leaves it" };
                out.push(
                    Diagnostic::new(
                        PromptPathEscapes,
                        id,
                        span,
                        format!("Prompt path escapes workflow directory: `{}` is {why}", reference.text),
                    )
                    .with_help("keep prompts under the workflow directory, e.g. `prompts/<name>.md`"),
                );
            }
        }
    }
}

/// Markdown files under `dir`, relative to it.
fn existing_prompts(ctx: &Ctx, dir: &Path) -> Vec<String> {
    ctx.workspace
        .paths()
        .filter(|p| p.extension().is_some_and(|e| e == "md") && p.starts_with(dir))
        .filter_map(|p| p.strip_prefix(dir).ok()?.to_str().map(|s| s.replace('\\', "/")))
        .collect()
}

fn skills(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let id = ctx.file().id;
    let dir = ctx.doc.dir();
    for reference in model::skill_references(ctx.root) {
        let span = reference.node.span;
        if !model::is_valid_skill_name(reference.text) {
            out.push(
                Diagnostic::new(
                    InvalidSkillName,
                    id,
                    span,
                    format!("Invalid skill name `{}`: use letters, digits, `_` and `-` only", reference.text),
                )
                .with_help("name the skill by its directory: `skills/<name>/SKILL.md`"),
            );
            continue;
        }
        if model::skill_candidates(dir, reference.text).any(|p| ctx.workspace.exists(&p)) {
            continue;
        }
        let known = known_skills(ctx);
        let suggestion = did_you_mean(reference.text, known.iter().map(String::as_str));
        let hint = suggestion.map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
        out.push(
            Diagnostic::new(
                SkillNotFound,
                id,
                span,
                format!("Skill not found: skills/{}/SKILL.md{hint}", reference.text),
            )
            .with_suggestion(span, suggestion)
            .with_help("skills are looked up as `skills/<name>/SKILL.md` (then `.claude/skills/`, `.agents/skills/`) next to the workflows directory or above it"),
        );
    }
}

/// Names of the skills in the workspace (`…/skills/<name>/SKILL.md`).
fn known_skills(ctx: &Ctx) -> Vec<String> {
    let mut out: Vec<String> = ctx
        .workspace
        .paths()
        .filter(|p| p.file_name().is_some_and(|n| n == "SKILL.md"))
        .filter(|p| p.parent().and_then(Path::parent).and_then(Path::file_name).is_some_and(|n| n == "skills"))
        .filter_map(|p| Some(p.parent()?.file_name()?.to_str()?.to_string()))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A reviewer loop parses `VERDICT: APPROVED|REQUEST_CHANGES`; a prompt that never asks for it
/// leaves the runner to guess from the first word.
fn verdicts(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let id = ctx.file().id;
    for (i, (reference, _)) in ctx.doc.prompts.iter().enumerate() {
        if !matches!(reference.key, "prompt" | "re_review_prompt") {
            continue;
        }
        let Some(phase) = ctx.phases.iter().find(|p| p.index == reference.phase) else { continue };
        if !phase.has_loop() {
            continue;
        }
        // A prompt that could not be read (a link out of the workspace) is reported as such.
        let Some(prompt) = ctx.doc.prompt_file(i, ctx.workspace).filter(|f| f.kind == FileKind::WorkflowPrompt) else {
            continue;
        };
        if prompt.text.to_ascii_lowercase().contains("verdict:") {
            continue;
        }
        out.push(
            Diagnostic::new(
                VerdictMarkerMissing,
                id,
                reference.node.span,
                format!(
                    "`{}` is the reviewer prompt of a `loop`, but it never asks for the `VERDICT:` line the loop parses",
                    reference.text
                ),
            )
            .with_related(prompt.id, Span::empty(0), "this prompt")
            .with_help("ask for a first line `VERDICT: APPROVED` or `VERDICT: REQUEST_CHANGES`; without it the runner approves only output that starts with APPROVED"),
        );
    }
}
