//! Files a workflow names: prompt templates (found, inside the workflow directory, asking for
//! the reviewer verdict where a loop parses one) and skills (valid names, found, frontmatter).

use std::path::Path;

use crate::diagnostic::Diagnostic;
use crate::families::lastlight::model::{self, PathProblem};
use crate::families::lastlight::rules::Ctx;
use crate::families::lastlight::{
    InvalidSkillName, PromptNotFound, PromptPathEscapes, SkillFrontmatter, SkillNotFound, VerdictMarkerMissing,
};
use crate::source::{Node, Span, Value, frontmatter, yaml};
use crate::util::did_you_mean;
use crate::workspace::SourceFile;

pub(super) fn check(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    prompts(ctx, out);
    skills(ctx, out);
    verdicts(ctx, out);
}

fn prompts(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let id = ctx.file().id;
    let dir = ctx.doc.prompt_base();
    for reference in model::prompt_references(ctx.root) {
        let span = reference.node.span;
        match model::resolve_prompt(dir, reference.text) {
            Ok(path) if ctx.workspace.exists(&path) => {}
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
                let why = if problem == PathProblem::Absolute { "an absolute path" } else { "a path that leaves it" };
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
        if model::skill_candidates(dir, reference.text).iter().any(|p| ctx.workspace.exists(p)) {
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
    for reference in model::prompt_references(ctx.root) {
        if !matches!(reference.key, "prompt" | "re_review_prompt") {
            continue;
        }
        let Some(phase) = ctx.phases.iter().find(|p| p.index == reference.phase) else { continue };
        if !phase.has_loop() {
            continue;
        }
        let Ok(path) = model::resolve_prompt(ctx.doc.prompt_base(), reference.text) else { continue };
        let Some(prompt) = ctx.workspace.file_at(&path) else { continue };
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

/// A SKILL.md's frontmatter: the loader silently drops skills without `name` or `description`.
pub(super) fn check_skill(file: &SourceFile, out: &mut Vec<Diagnostic>) {
    let id = file.id;
    let text = &file.text;
    let first_line = Span::new(0, text.find('\n').unwrap_or(text.len()));
    let Some(fm) = frontmatter::split(text).filter(|fm| fm.close_fence.is_some()) else {
        out.push(
            Diagnostic::new(
                SkillFrontmatter,
                id,
                first_line,
                "this SKILL.md has no `---` frontmatter; the skill loader skips it",
            )
            .with_help("start the file with `---`, `name: <name>`, `description: <when to use it>`, `---`"),
        );
        return;
    };
    let parsed = yaml::parse(&text[fm.yaml.start..fm.yaml.end]);
    let Some(root) = parsed.root.filter(|r| r.as_map().is_some()) else {
        // A syntax error is said as such (a `description:` with `: ` in it is the usual one).
        let d = match parsed.errors.first() {
            Some(error) => Diagnostic::new(
                SkillFrontmatter,
                id,
                error.span.shift(fm.yaml.start),
                format!(
                    "the frontmatter is not valid YAML ({}); the skill loader skips the skill",
                    error.message.trim_start_matches("invalid YAML: ")
                ),
            )
            .with_help("quote a value that holds `: ` or ` #`, or starts with a YAML indicator: `description: \"…\"`"),
            None => Diagnostic::new(
                SkillFrontmatter,
                id,
                fm.open_fence,
                "the frontmatter is not a YAML mapping; the skill loader skips it",
            ),
        };
        out.push(d);
        return;
    };
    let shifted = |node: &Node| node.span.shift(fm.yaml.start);
    let dir_name = file.path.parent().and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or("");
    match root.get("name") {
        None => out.push(
            Diagnostic::new(SkillFrontmatter, id, fm.open_fence, "the frontmatter has no `name`; the skill loader skips the skill")
                .with_help(format!("add `name: {dir_name}`")),
        ),
        Some(node) => match node.as_str() {
            None => out.push(Diagnostic::new(SkillFrontmatter, id, shifted(node), "`name` must be a string")),
            Some(name) if !is_skill_name(name) => out.push(Diagnostic::new(
                SkillFrontmatter,
                id,
                shifted(node),
                format!("skill name `{name}` must be lowercase letters and digits in `-`-separated words, at most 64 characters"),
            )),
            Some(name) if !dir_name.is_empty() && name != dir_name => out.push(
                Diagnostic::new(
                    SkillFrontmatter,
                    id,
                    shifted(node),
                    format!("skill name `{name}` differs from its directory `{dir_name}`; workflows find skills by directory"),
                )
                .with_help(format!("rename one of them so both read `{dir_name}`")),
            ),
            Some(_) => {}
        },
    }
    match root.get("description") {
        None => out.push(
            Diagnostic::new(
                SkillFrontmatter,
                id,
                fm.open_fence,
                "the frontmatter has no `description`; the skill loader skips the skill",
            )
            .with_help("add `description:` saying what the skill does and when to use it"),
        ),
        Some(node) => match node.as_str() {
            None => out.push(Diagnostic::new(SkillFrontmatter, id, shifted(node), "`description` must be a string")),
            Some(d) if d.trim().is_empty() => out.push(Diagnostic::new(
                SkillFrontmatter,
                id,
                shifted(node),
                "`description` is empty; the skill loader skips the skill",
            )),
            Some(d) if d.chars().count() > 1024 => out.push(Diagnostic::new(
                SkillFrontmatter,
                id,
                shifted(node),
                format!("`description` has {} characters; at most 1024 are allowed", d.chars().count()),
            )),
            Some(_) => {}
        },
    }
    if let Some(node) = root.get("disable-model-invocation")
        && !matches!(node.value, Value::Bool(_))
    {
        out.push(Diagnostic::new(
            SkillFrontmatter,
            id,
            shifted(node),
            "`disable-model-invocation` must be `true` or `false`",
        ));
    }
}

fn is_skill_name(name: &str) -> bool {
    name.len() <= 64
        && !name.is_empty()
        && name.split('-').all(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
}
