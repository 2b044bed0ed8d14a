//! Placeholders in a stage body: syntax, namespaces, dialect, `stage.*` fields, declared ctx.

use crate::diagnostic::{Applicability, Diagnostic, Edit};
use crate::families::sm::model::{CORE_CTX_FIELDS, Machine, StageDoc};
use crate::families::sm::{
    ForbiddenPlaceholder, MalformedPlaceholder, PlaceholderDialect, StageCtxUnresolved, TemplateControlFlow,
    UnknownStageField,
};
use crate::source::Node;
use crate::template::stage::{Control, Dialect, Path, Segment, Tag, TagKind};
use crate::util::did_you_mean;

pub(super) fn check(stage: &StageDoc, out: &mut Vec<Diagnostic>) {
    let mixed = stage.tags.iter().any(|t| t.dialect == Dialect::Mustache && matches!(t.kind, TagKind::Path(_)))
        && stage.tags.iter().any(|t| t.dialect == Dialect::Dollar);
    for tag in stage.tags.iter() {
        check_tag(stage, tag, mixed, out);
    }
}

/// The findings on the tags Init renders: those of the configured dialect.
pub(super) fn check_rendered(stage: &StageDoc, out: &mut Vec<Diagnostic>) {
    let dialect = stage.config().dialect;
    for tag in stage.tags.iter().filter(|t| t.dialect == dialect) {
        check_tag(stage, tag, false, out);
    }
}

fn check_tag(stage: &StageDoc, tag: &Tag, mixed: bool, out: &mut Vec<Diagnostic>) {
    let dialect = stage.config().dialect;
    match &tag.kind {
        TagKind::Unclosed => out.push(Diagnostic::new(
            MalformedPlaceholder,
            stage.id(),
            tag.span,
            "this `{{` is never closed on its line; add `}}` or remove it",
        )),
        TagKind::Empty => out.push(Diagnostic::new(
            MalformedPlaceholder,
            stage.id(),
            tag.span,
            "empty placeholder; name a field such as `{{ctx.task}}` or remove it",
        )),
        TagKind::BadPath(reason) => out.push(Diagnostic::new(
            MalformedPlaceholder,
            stage.id(),
            tag.span,
            format!("malformed placeholder: {reason}"),
        )),
        TagKind::Control(control) => out.push(Diagnostic::new(
            TemplateControlFlow,
            stage.id(),
            tag.span,
            format!("{} is not supported: {}", control.describe(), control_advice(control)),
        )),
        TagKind::Path(path) => check_path(stage, tag, path, dialect, mixed, out),
    }
}

fn check_path(stage: &StageDoc, tag: &Tag, path: &Path, dialect: Dialect, mixed: bool, out: &mut Vec<Diagnostic>) {
    let file = stage.id();
    if tag.dialect != dialect {
        let text = path.text();
        let also = if mixed { "; this body mixes both placeholder styles" } else { "" };
        let diagnostic = Diagnostic::new(
                PlaceholderDialect,
                file,
                tag.span,
                format!(
                    "`{}` is the {} dialect, but this project renders the {} dialect, so it reaches the model verbatim{also}",
                    &stage.file.text[tag.span.start..tag.span.end],
                    tag.dialect.as_str(),
                    dialect.as_str()
                ),
                        )
            .with_help("set `[sm] placeholder-dialect` in stagelint.toml to match your runtime");
        // The dollar dialect substitutes only `${ctx.<name>}`; converting anything else would
        // trade one verbatim placeholder for another.
        if dialect == Dialect::Mustache || dollar_substitutes(path) {
            out.push(diagnostic.with_fix(
                format!("Convert to `{}`", dialect.render(&text)),
                Applicability::Safe,
                vec![Edit { span: tag.span, replacement: dialect.render(&text) }],
            ));
        } else {
            out.push(diagnostic);
        }
    } else if dialect == Dialect::Dollar && !dollar_substitutes(path) {
        out.push(Diagnostic::new(
            MalformedPlaceholder,
            file,
            tag.span,
            format!(
                "the dollar dialect only substitutes `${{ctx.<name>}}` with a single name; `{}` is sent verbatim",
                &stage.file.text[tag.span.start..tag.span.end]
            ),
        ));
    }
    let root = path.root().unwrap_or("");
    let second = path.segments.get(1);
    match root {
        "ctx" => match second.and_then(Segment::name) {
            Some(name @ ("attempts" | "host")) => {
                let why = if name == "attempts" {
                    "the body is rendered once at Init and retries do not re-render it; per-attempt signals arrive as transcript messages"
                } else {
                    "`ctx.host` is the runtime's Host API, not data"
                };
                out.push(Diagnostic::new(
                    ForbiddenPlaceholder,
                    file,
                    path.span(),
                    format!("`ctx.{name}` is not template-addressable: {why}"),
                ));
            }
            Some(_) => {}
            None => out.push(Diagnostic::new(
                MalformedPlaceholder,
                file,
                tag.span,
                "a placeholder must name a field of `ctx`, such as `ctx.task`",
            )),
        },
        "stage" => check_stage_field(stage, path, out),
        "env" => out.push(Diagnostic::new(
            ForbiddenPlaceholder,
            file,
            path.span(),
            "environment values never enter a stage prompt (LLM context isolation); pass what the stage needs through `ctx`",
        )),
        other => out.push(Diagnostic::new(
            ForbiddenPlaceholder,
            file,
            path.span(),
            format!("`{other}` is not a template namespace; only `ctx.*` and `stage.*` exist (did you mean `ctx.{other}`?)"),
        )),
    }
}

/// What to do instead, by kind of mustache feature.
fn control_advice(control: &Control) -> &'static str {
    match control {
        Control::Comment => {
            "the engine has no comments, so this text reaches the model verbatim; use an HTML comment or delete it"
        }
        Control::Partial => "the engine cannot include other files; inline the text or split the stage",
        Control::Unescaped => "the engine has no escaping modes; write `{{ctx.x}}`",
        Control::Helper(_) | Control::Pipe | Control::Expression => {
            "placeholders are plain paths with no helpers, filters or expressions; compute the value into `ctx` before Setup"
        }
        _ => {
            "stage templates have no conditionals or loops; move the branching into the state machine (split the stage or prepare `ctx` before Setup)"
        }
    }
}

/// What the stud-cli code matches: `${ctx.<word>}` exactly.
fn dollar_substitutes(path: &Path) -> bool {
    path.segments.len() == 2
        && path.root() == Some("ctx")
        && path.segments[1].name().is_some_and(|n| n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
}

fn check_stage_field(stage: &StageDoc, path: &Path, out: &mut Vec<Diagnostic>) {
    let Some(segment) = path.segments.get(1) else {
        out.push(Diagnostic::new(
            MalformedPlaceholder,
            stage.id(),
            path.span(),
            "a placeholder must name a frontmatter field, such as `stage.id`",
        ));
        return;
    };
    let Some(name) = segment.name() else { return };
    let keys: Vec<&str> =
        stage.root.as_ref().and_then(Node::as_map).unwrap_or_default().iter().filter_map(|e| e.key_str()).collect();
    if keys.contains(&name) {
        return;
    }
    let suggestion = did_you_mean(name, keys.iter().copied());
    let message = match suggestion {
        Some(s) => format!("`stage.{name}` is not a frontmatter field of this stage; did you mean `stage.{s}`?"),
        None => {
            format!("`stage.{name}` is not a frontmatter field of this stage; it renders empty")
        }
    };
    out.push(
        Diagnostic::new(UnknownStageField, stage.id(), segment.span(), message)
            .with_suggestion(segment.span(), suggestion),
    );
}

/// `{{ctx.x}}` must be declared in the SM's `context`, when the SM declares one.
pub(super) fn check_context(machine: &Machine, out: &mut Vec<Diagnostic>) {
    let Some(context) = machine.sm.context() else {
        return;
    };
    for stage in &machine.stages {
        for tag in stage.tags.iter() {
            let TagKind::Path(path) = &tag.kind else {
                continue;
            };
            if path.root() != Some("ctx") {
                continue;
            }
            let Some(segment) = path.segments.get(1) else {
                continue;
            };
            let Some(name) = segment.name() else { continue };
            if CORE_CTX_FIELDS.contains(&name) || matches!(name, "attempts" | "host") {
                continue;
            }
            if context.names.iter().any(|n| n == name) {
                continue;
            }
            let suggestion = did_you_mean(name, context.names.iter().map(String::as_str).chain(CORE_CTX_FIELDS));
            let hint = suggestion.map(|s| format!("; did you mean `ctx.{s}`?")).unwrap_or_else(|| {
                "; declare it under `context.required` or `context.optional` in the state machine file".into()
            });
            let diagnostic = Diagnostic::new(
                StageCtxUnresolved,
                stage.id(),
                segment.span(),
                format!("`ctx.{name}` is not declared in the state machine's `context`{hint}"),
            )
            .with_related(
                machine.sm.file.id,
                context.span,
                "the state machine declares its ctx fields here",
            );
            out.push(diagnostic.with_suggestion(segment.span(), suggestion));
        }
    }
}
