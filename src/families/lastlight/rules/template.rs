//! Templates in prompt files and in the YAML: what the regex engine leaves verbatim (nested or
//! unbalanced `{{#if}}`, unknown helpers, malformed tags), variables that render empty
//! (unknown, read before their phase ran, loop variables outside their loop), and `{{` left in
//! a bash command.

use std::collections::HashSet;

use crate::diagnostic::{Diagnostic, FileId};
use crate::families::lastlight::model::{self, EVENT_VARIABLES, LOOP_VARIABLES};
use crate::families::lastlight::rules::Ctx;
use crate::families::lastlight::{
    LoopVariableOutsideLoop, NestedIf, PhaseOrder, TemplateMarkerInShell, TemplateSyntax, UnbalancedIf, UnknownHelper,
    UnknownVariable,
};
use crate::source::Span;
use crate::template::lastlight::{self as tpl, Engine, Segment, Tag, TagKind};
use crate::util::did_you_mean;
use crate::workspace::{FileKind, SourceFile};

/// Where a template is rendered.
#[derive(Clone, Copy)]
struct Scope {
    phase: Option<usize>,
    loop_message: bool,
    /// The file the tags are in, and the workflow reference to name when that is a prompt.
    file: FileId,
    used_at: Option<Span>,
}

pub(super) fn check(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let engine = ctx.config().lastlight.engine;
    let text = &ctx.file().text;
    let known = Known::new(ctx);
    for template in model::yaml_templates(ctx.root) {
        let region = model::template_region(text, template.node);
        let tags = tpl::parse(text.get(region.start..region.end).unwrap_or(""), region.start, engine);
        let scope =
            Scope { phase: template.phase, loop_message: template.loop_message, file: ctx.file().id, used_at: None };
        if template.shell {
            shell(ctx.file().id, text, region, &tags, out);
        } else {
            structure(ctx.file().id, engine, &tags, out);
        }
        variables(ctx, &known, scope, &tags, out);
    }
    for reference in model::prompt_references(ctx.root) {
        let Ok(path) = model::resolve_prompt(ctx.doc.prompt_base(), reference.text) else { continue };
        let Some(prompt) = ctx.workspace.file_at(&path).filter(|f| f.kind == FileKind::WorkflowPrompt) else {
            continue;
        };
        let tags = tpl::parse(&prompt.text, 0, engine);
        let scope = Scope {
            phase: Some(reference.phase),
            loop_message: false,
            file: prompt.id,
            used_at: Some(reference.node.span),
        };
        variables(ctx, &known, scope, &tags, out);
    }
}

/// The structure of a prompt file's tags; it does not depend on the workflow using it.
pub(super) fn check_prompt_structure(file: &SourceFile, out: &mut Vec<Diagnostic>) {
    let engine = file.config.lastlight.engine;
    structure(file.id, engine, &tpl::parse(&file.text, 0, engine), out);
}

fn structure(file: FileId, engine: Engine, tags: &[Tag], out: &mut Vec<Diagnostic>) {
    let blocks = tpl::blocks(tags);
    for (inner, outer) in &blocks.nested {
        out.push(
            Diagnostic::new(
                NestedIf,
                file,
                tags[*inner].span,
                "`{{#if}}` inside another `{{#if}}`: the engine cannot nest, so the first `{{/if}}` closes the outer block and the rest leaks into the prompt as raw text",
            )
            .with_related(file, tags[*outer].span, "the enclosing block opens here")
            .with_help("make the blocks siblings, or combine the conditions in the code that fills the variables"),
        );
    }
    for index in &blocks.unclosed {
        out.push(
            Diagnostic::new(
                UnbalancedIf,
                file,
                tags[*index].span,
                "this `{{#if}}` is never closed; the engine leaves it in the prompt verbatim",
            )
            .with_help("close the block with `{{/if}}`"),
        );
    }
    for index in &blocks.orphans {
        out.push(
            Diagnostic::new(
                UnbalancedIf,
                file,
                tags[*index].span,
                "`{{/if}}` without an open `{{#if}}`; the engine leaves it in the prompt verbatim",
            )
            .with_help("remove it, or open the block with `{{#if key}}`"),
        );
    }
    for tag in tags {
        match &tag.kind {
            TagKind::Unknown { name } => {
                let helpers = engine.helpers();
                let bare = name.name.trim_start_matches(['#', '/']);
                let suggestion =
                    did_you_mean(bare, helpers.iter().copied()).filter(|_| !name.name.starts_with(['#', '/']));
                let what = if name.name.starts_with(['#', '/', '^', '>', '!', '&']) {
                    "block or mustache feature"
                } else {
                    "helper"
                };
                out.push(
                    Diagnostic::new(
                        UnknownHelper,
                        file,
                        tag.span,
                        format!(
                            "`{}` is not a {what} the engine knows; the tag stays in the prompt verbatim",
                            name.name
                        ),
                    )
                    .with_suggestion(name.span, suggestion)
                    .with_help(format!(
                        "the engine knows `{{{{key}}}}`, `{{{{#if key}}}}…{{{{/if}}}}` and the helpers {}",
                        helpers.iter().map(|h| format!("`{h}`")).collect::<Vec<_>>().join(", ")
                    )),
                );
            }
            TagKind::Malformed(why) => out.push(Diagnostic::new(TemplateSyntax, file, tag.span, why.clone())),
            _ => {}
        }
    }
}

/// A bash `command` is rendered, then refused if a `{{` is left: anything the engine leaves
/// verbatim, and any `{{` that is not a tag at all.
fn shell(file: FileId, text: &str, region: Span, tags: &[Tag], out: &mut Vec<Diagnostic>) {
    let mut found = Vec::new();
    structure(file, Engine::Head, tags, &mut found);
    for d in found {
        out.push(Diagnostic::new(
            TemplateMarkerInShell,
            file,
            d.span,
            format!("{}; the bash phase then fails: command rejected, it contains template marker '{{{{'", d.message),
        ));
    }
    let raw = text.get(region.start..region.end).unwrap_or("");
    let mut from = 0;
    while let Some(n) = raw[from..].find("{{") {
        let at = region.start + from + n;
        if !tags.iter().any(|t| t.span.start <= at && at < t.span.end) {
            out.push(
                Diagnostic::new(
                    TemplateMarkerInShell,
                    file,
                    Span::new(at, at + 2),
                    "this `{{` is not a template tag, so it stays in the command and the engine refuses to run it (contains template marker '{{')",
                )
                .with_help("close the tag on the same line, or avoid `{{` in shell commands"),
            );
        }
        from += n + 2;
    }
}

/// Names a template may read besides the phases.
struct Known {
    variables: HashSet<String>,
}

impl Known {
    fn new(ctx: &Ctx) -> Known {
        let head = ctx.config().lastlight.engine == Engine::Head;
        let mut variables: HashSet<String> = model::BASE_VARIABLES.iter().map(|(n, _)| n.to_string()).collect();
        if head {
            variables.extend(model::HEAD_VARIABLES.iter().map(|(n, _)| n.to_string()));
        }
        variables.extend(ctx.config().lastlight.variables.iter().cloned());
        // Crons pass their `context:` to the workflow they run (`request.extra`).
        if let Some(name) = ctx.doc.name() {
            for cron in
                ctx.all.iter().filter(|d| d.is_cron() && d.get("workflow").and_then(|n| n.as_str()) == Some(name))
            {
                for entry in cron.get("context").and_then(|c| c.as_map()).unwrap_or_default() {
                    variables.extend(entry.key_str().map(str::to_string));
                }
            }
        }
        Known { variables }
    }
}

fn variables(ctx: &Ctx, known: &Known, scope: Scope, tags: &[Tag], out: &mut Vec<Diagnostic>) {
    for tag in tags {
        if let TagKind::PhaseOutput(segment) = &tag.kind {
            match ctx.producers.by_name.get(segment.name.as_str()) {
                Some((producer, _)) => phase_order(ctx, scope, segment, *producer, out),
                None => unknown(ctx, known, scope, segment, "no phase or output_var is named", out),
            }
            continue;
        }
        let Some(path) = tpl::reads(tag) else { continue };
        let Some(first) = path.first() else { continue };
        let name = first.name.as_str();
        if name == "phaseOutputs" {
            if let Some(second) = path.get(1) {
                match ctx.producers.by_name.get(second.name.as_str()) {
                    Some((producer, _)) => phase_order(ctx, scope, second, *producer, out),
                    None => unknown(ctx, known, scope, second, "no phase or output_var is named", out),
                }
            }
        } else if LOOP_VARIABLES.iter().any(|(n, _)| *n == name) {
            loop_variable(ctx, scope, first, out);
        } else if EVENT_VARIABLES.iter().any(|(n, _)| *n == name) {
            if !scope.loop_message {
                push(
                    out,
                    scope,
                    ctx,
                    Diagnostic::new(
                        UnknownVariable,
                        scope.file,
                        first.span,
                        format!("`{name}` is set only in `loop.messages`; here it renders as an empty string"),
                    ),
                );
            }
        } else if known.variables.contains(name) {
        } else if let Some((producer, _)) = ctx.producers.by_name.get(name) {
            phase_order(ctx, scope, first, *producer, out);
        } else {
            unknown(ctx, known, scope, first, "not a context variable, phase name or output_var:", out);
        }
    }
}

fn unknown(ctx: &Ctx, known: &Known, scope: Scope, segment: &Segment, what: &str, out: &mut Vec<Diagnostic>) {
    let name = segment.name.as_str();
    let phase_only = !what.ends_with(':');
    let variables = known.variables.iter().map(String::as_str).chain(LOOP_VARIABLES.iter().map(|(n, _)| *n));
    let candidates: Vec<&str> = if phase_only {
        ctx.producers.by_name.keys().copied().collect()
    } else {
        variables.chain(ctx.producers.by_name.keys().copied()).collect()
    };
    let suggestion = did_you_mean(name, candidates.iter().copied());
    let hint = suggestion.map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
    let message = if !phase_only {
        format!("`{name}` is {what} it renders as an empty string{hint}")
    } else {
        format!("`{name}`: {what} `{name}`, so this renders as an empty string{hint}")
    };
    let help = if phase_only {
        "name a phase or `output_var` of this workflow"
    } else {
        "if the dispatcher passes it in `request.extra`, declare it in stagelint.toml: `[lastlight] extra-variables = [\"…\"]`"
    };
    let d = Diagnostic::new(UnknownVariable, scope.file, segment.span, message)
        .with_suggestion(segment.span, suggestion)
        .with_help(help);
    push(out, scope, ctx, d);
}

fn phase_order(ctx: &Ctx, scope: Scope, segment: &Segment, producer: usize, out: &mut Vec<Diagnostic>) {
    let Some(consumer) = scope.phase else { return };
    if consumer == producer || ctx.before.get(consumer).is_some_and(|set| set.contains(&producer)) {
        return;
    }
    let (producer_name, consumer_name) = (ctx.phase_name(producer), ctx.phase_name(consumer));
    let message = if ctx.dag {
        format!(
            "`{}` is the output of phase `{producer_name}`, which is not an ancestor of `{consumer_name}` in `depends_on`: it may not have run yet and renders as an empty string",
            segment.name
        )
    } else {
        format!(
            "`{}` is the output of phase `{producer_name}`, which runs after `{consumer_name}`: here it renders as an empty string",
            segment.name
        )
    };
    let help = if ctx.dag {
        format!("add `{producer_name}` to the `depends_on` of `{consumer_name}` (or of one of its ancestors)")
    } else {
        format!("move `{producer_name}` before `{consumer_name}`, or read the output in a later phase")
    };
    let mut d = Diagnostic::new(PhaseOrder, scope.file, segment.span, message).with_help(help);
    if let Some((_, node)) = ctx.producers.by_name.get(segment.name.as_str()) {
        d = d.with_related(ctx.file().id, node.span, format!("`{}` is produced here", segment.name));
    }
    push(out, scope, ctx, d);
}

fn loop_variable(ctx: &Ctx, scope: Scope, segment: &Segment, out: &mut Vec<Diagnostic>) {
    let name = segment.name.as_str();
    let phase = scope.phase.and_then(|i| ctx.phases.iter().find(|p| p.index == i));
    let message = match (name, phase) {
        ("fixCycle", Some(p)) if p.has_loop() => return,
        ("fixCycle", _) => {
            "`fixCycle` is set only in phases with a `loop:` (reviewer/fix cycle); here it renders as an empty string"
                .to_string()
        }
        ("previousOutput", Some(p)) if p.has_generic_loop() => match p.fresh_context() {
            None => return,
            Some(fresh) => {
                let d = Diagnostic::new(
                    LoopVariableOutsideLoop,
                    scope.file,
                    segment.span,
                    "`previousOutput` is dropped by `fresh_context: true`; here it renders as an empty string",
                )
                .with_related(ctx.file().id, fresh.span, "fresh_context is set here")
                .with_help("set `fresh_context: false`, or stop reading `previousOutput`");
                push(out, scope, ctx, d);
                return;
            }
        },
        (_, Some(p)) if p.has_generic_loop() => return,
        _ => format!("`{name}` is set only in phases with a `generic_loop:`; here it renders as an empty string"),
    };
    let d = Diagnostic::new(LoopVariableOutsideLoop, scope.file, segment.span, message)
        .with_help("read it only in the prompts and messages of a phase with that loop");
    push(out, scope, ctx, d);
}

/// A finding in a prompt file names the workflow phase that uses the prompt.
fn push(out: &mut Vec<Diagnostic>, scope: Scope, ctx: &Ctx, d: Diagnostic) {
    let d = match scope.used_at {
        Some(span) => {
            let phase = scope.phase.map(|i| ctx.phase_name(i)).unwrap_or("?");
            let workflow = ctx.doc.name().unwrap_or("?");
            let mut d = d;
            d.related.insert(
                0,
                crate::diagnostic::Related {
                    file: Some(ctx.file().id),
                    span,
                    message: format!("rendered for phase `{phase}` of workflow `{workflow}`"),
                },
            );
            d
        }
        None => d,
    };
    out.push(d);
}
