//! Templates in prompt files and in the YAML: what the regex engine leaves verbatim (nested or
//! unbalanced `{{#if}}`, unknown helpers, malformed tags), variables that render empty
//! (unknown, read before their phase ran, dotted reads into text, loop variables outside their
//! loop), and `{{` left in a bash command.

use crate::diagnostic::{Applicability, Diagnostic, Edit, FileId};
use crate::families::lastlight::model::{self, EVENT_VARIABLES, LOOP_VARIABLES, OutputShape, SetFor, VARIABLES};
use crate::families::lastlight::rules::Ctx;
use crate::families::lastlight::{
    LoopVariableOutsideLoop, NestedIf, PhaseOrder, TemplateMarkerInShell, TemplateSyntax, UnbalancedIf, UnknownHelper,
    UnknownVariable,
};
use crate::registry::releases::lastlight::{self as releases, Has, ReleaseId, Target};
use crate::source::Span;
use crate::source::node::Node;
use crate::template::lastlight::{self as tpl, Engine, HEAD_HELPERS, Segment, Tag, TagKind};
use crate::template::markdown;
use crate::util::{FastMap, FastSet, did_you_mean};
use crate::workspace::{FileKind, SourceFile};

/// Where a template is rendered.
#[derive(Clone, Copy)]
struct Scope {
    phase: Option<usize>,
    loop_message: bool,
    /// Rendered before the phase runs (its prompt, model, variant or command), where the
    /// phase's own output does not exist yet.
    before_run: bool,
    /// The file the tags are in, and the workflow reference to name when that is a prompt.
    file: FileId,
    used_at: Option<Span>,
    /// How many workflows and phases use the prompt, to name this use when there are several.
    uses: (usize, usize),
}

pub(super) fn check(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    let engine = ctx.config().lastlight.dialect();
    let release = ctx.config().lastlight.release;
    let text = &ctx.file().text;
    let known = Known::new(ctx);
    let mut found = Vec::new();
    for template in model::yaml_templates(ctx.root) {
        let region = model::template_region(text, template.node);
        let tags = tpl::parse(text.get(region.start..region.end).unwrap_or(""), region.start, engine);
        let scope = Scope {
            phase: template.phase,
            loop_message: template.loop_message,
            // `on_start` is posted as the phase starts, before it has an output.
            before_run: matches!(template.key, "model" | "variant" | "command" | "on_start"),
            file: ctx.file().id,
            used_at: None,
            uses: (1, 1),
        };
        if template.shell {
            // A command the engine refuses is one finding; what it would have read does not matter.
            if shell(ctx.file().id, text, region, &tags, &mut found) {
                continue;
            }
        } else {
            let code = markdown::code_regions(text.get(region.start..region.end).unwrap_or(""), region.start);
            structure(ctx.file().id, text, release, &tags, &code, &mut found);
        }
        variables(ctx, &known, scope, &tags, &mut found);
    }
    // A prompt several phases use (the build prompt is often the fix prompt too) is parsed once.
    let mut parsed: FastMap<FileId, Vec<Tag>> = FastMap::default();
    for (i, (reference, _)) in ctx.doc.prompts.iter().enumerate() {
        let Some(prompt) = ctx.doc.prompt_file(i, ctx.workspace).filter(|f| f.kind == FileKind::WorkflowPrompt) else {
            continue;
        };
        let tags = parsed.entry(prompt.id).or_insert_with(|| tpl::parse(&prompt.text, 0, engine));
        if ctx.claim(prompt.id) {
            // Straight to `out`: these findings are the file's own, as when checked alone.
            prompt_structure(prompt, Some((engine, tags)), out);
        }
        let scope = Scope {
            phase: Some(reference.phase),
            loop_message: false,
            before_run: reference.key == "prompt",
            file: prompt.id,
            used_at: Some(reference.node.span),
            uses: ctx.uses.get(prompt.id.0 as usize).map_or((1, 1), |&(w, p)| (w as usize, p as usize)),
        };
        variables(ctx, &known, scope, tags, &mut found);
    }
    // A prompt used by several phases of this workflow gets a finding that does not depend on
    // the phase once.
    let mut seen = FastSet::default();
    found.retain(|d| seen.insert((d.code, d.file, d.span, d.message.clone())));
    out.extend(found);
}

/// The structure of a prompt file's tags; it does not depend on the workflow using it.
pub(super) fn check_prompt_structure(file: &SourceFile, out: &mut Vec<Diagnostic>) {
    prompt_structure(file, None, out);
}

/// [`check_prompt_structure`], reusing `parsed` (the file's tags as an engine reads them) when
/// that engine is the file's own.
fn prompt_structure(file: &SourceFile, parsed: Option<(Engine, &[Tag])>, out: &mut Vec<Diagnostic>) {
    let engine = file.config.lastlight.dialect();
    let own;
    let tags = match parsed {
        Some((read_as, tags)) if read_as == engine => tags,
        _ => {
            own = tpl::parse(&file.text, 0, engine);
            &own
        }
    };
    structure(file.id, &file.text, file.config.lastlight.release, tags, &markdown::code_regions(&file.text, 0), out);
}

/// Findings about tags the engine leaves verbatim or pairs wrongly. A tag left verbatim is
/// what a code example needs, so inside markdown code (`code`) it is not reported, and outside
/// it only when it looks meant for this engine ([`tpl::looks_meant`]). Tags the engine
/// replaces are reported wherever they are.
fn structure(file: FileId, text: &str, release: Target, tags: &[Tag], code: &[Span], out: &mut Vec<Diagnostic>) {
    let engine = if release.any_has(releases::V0_2) { Engine::Head } else { Engine::Seed };
    let source = |tag: &Tag| text.get(tag.span.start..tag.span.end).unwrap_or("");
    let verbatim_ok = |tag: &Tag| markdown::in_code(code, tag.span) || !tpl::looks_meant(source(tag));
    let blocks = tpl::blocks(tags);
    for nested in &blocks.nested {
        // No `{{/if}}` left over: the outer block was never closed (one `{{/if}}` short), and
        // the engine ends it at the inner block's close. The defect is at the outer tag.
        if nested.leftover.is_none() {
            let (outer, inner, close) = (&tags[nested.outer], &tags[nested.inner], &tags[nested.close]);
            let key = match &outer.kind {
                TagKind::IfOpen { key, negated } => {
                    format!("{}{}", if *negated { "!" } else { "" }, dotted(key))
                }
                _ => String::new(),
            };
            let line = text[..close.span.start].matches('\n').count() + 1;
            out.push(
                Diagnostic::new(
                    UnbalancedIf,
                    file,
                    outer.span,
                    format!(
                        "this `{{{{#if {key}}}}}` has no `{{{{/if}}}}` of its own: the engine ends it at the `{{{{/if}}}}` on line {line}, which closes the `{}` after it, so when the condition fails everything up to line {line} is dropped, that block included, and when it holds `{}` reaches the agent verbatim",
                        source(inner),
                        source(inner)
                    ),
                )
                .with_related(file, inner.span, "this block's `{{/if}}` ends the unclosed one")
                .with_related(file, close.span, "the engine ends the unclosed block here")
                .with_help(format!("close `{{{{#if {key}}}}}` with `{{{{/if}}}}` where its text ends")),
            );
            continue;
        }
        let mut d = Diagnostic::new(
            NestedIf,
            file,
            tags[nested.inner].span,
            "`{{#if}}` inside another block: the engine cannot nest, so it ends the outer block at the first `{{/if}}` after it, and this tag reaches the agent verbatim whenever the outer condition holds",
        )
        .with_related(file, tags[nested.outer].span, "the enclosing block opens here")
        .with_related(file, tags[nested.close].span, "the engine ends the enclosing block here");
        if let Some(leftover) = nested.leftover {
            d = d.with_related(file, tags[leftover].span, "this `{{/if}}` is then left in the prompt as raw text");
        }
        out.push(
            d.with_help("make the blocks siblings, or combine the conditions in the code that fills the variables"),
        );
    }
    for index in blocks.unclosed.iter().filter(|i| !markdown::in_code(code, tags[**i].span)) {
        out.push(
            Diagnostic::new(
                UnbalancedIf,
                file,
                tags[*index].span,
                "no `{{/if}}` follows this `{{#if}}`, so the engine never matches the block: the tag stays in the prompt verbatim and the text after it is always kept",
            )
            .with_help("close the block with `{{/if}}`"),
        );
    }
    for index in blocks.orphans.iter().filter(|i| !markdown::in_code(code, tags[**i].span)) {
        out.push(
            Diagnostic::new(
                UnbalancedIf,
                file,
                tags[*index].span,
                "`{{/if}}` with no open block: the engine pairs each `{{#if}}` with the first `{{/if}}` after it, so this one stays in the prompt verbatim",
            )
            .with_help("remove it, or open the block with `{{#if key}}`"),
        );
    }
    let helpers = engine.helpers();
    let known_helpers = || {
        format!(
            "the engine knows `{{{{key}}}}`, `{{{{#if key}}}}…{{{{/if}}}}` and the helpers {}",
            helpers.iter().map(|h| format!("`{h}`")).collect::<Vec<_>>().join(", ")
        )
    };
    for tag in tags {
        match &tag.kind {
            TagKind::Unknown { name } if name.name == "else" => out.push(
                Diagnostic::new(
                    UnknownHelper,
                    file,
                    tag.span,
                    "`{{else}}` is Handlebars, not this engine: it reads `else` as a variable, which is never set, so the tag renders empty and the text after it is part of the `{{#if}}` body",
                )
                .with_help("write the alternative as its own block: `{{#if !key}}…{{/if}}`"),
            ),
            TagKind::Unknown { .. } | TagKind::Malformed(_) if verbatim_ok(tag) => {}
            TagKind::Unknown { name } => {
                let bare = name.name.trim_start_matches(['#', '/']);
                let suggestion =
                    did_you_mean(bare, helpers.iter().copied()).filter(|_| !name.name.starts_with(['#', '/']));
                let what = if name.name.starts_with(['#', '/', '^', '>', '!', '&']) {
                    "block or mustache feature"
                } else {
                    "helper"
                };
                // A helper of a later release than the repository's.
                let later = if HEAD_HELPERS.contains(&name.name.as_str()) && !helpers.contains(&name.name.as_str()) {
                    format!(" (it exists from Last Light 0.2 on; this repository is at {})", release.describe())
                } else {
                    String::new()
                };
                out.push(
                    Diagnostic::new(
                        UnknownHelper,
                        file,
                        tag.span,
                        format!(
                            "`{}` is not a {what} the engine knows{later}; the tag stays in the prompt verbatim",
                            name.name
                        ),
                    )
                    .with_suggestion(name.span, suggestion)
                    .with_help(known_helpers()),
                );
            }
            TagKind::Malformed(why) => out.push(malformed(file, tag, source(tag), why, engine)),
            TagKind::Braced(path) => {
                let key = dotted(path);
                let written = source(tag);
                let opening = written.len() - written.trim_start_matches('{').len();
                let closing = written.len() - written.trim_end_matches('}').len();
                let (open, close) = ("{".repeat(opening.saturating_sub(2)), "}".repeat(closing.saturating_sub(2)));
                let mut d = Diagnostic::new(
                    TemplateSyntax,
                    file,
                    tag.span,
                    format!(
                        "`{written}` is not a raw-output tag in this engine: pass 4 replaces the inner `{{{{{key}}}}}` and keeps the extra braces, so the agent reads `{open}<value>{close}`"
                    ),
                );
                if written == format!("{{{{{{{key}}}}}}}") {
                    let replacement = format!("{{{{{key}}}}}");
                    d = d.with_fix(
                        format!("Replace with `{replacement}`"),
                        Applicability::Unsafe,
                        vec![Edit { span: tag.span, replacement }],
                    );
                }
                out.push(d.with_help(format!("write `{{{{{key}}}}}`: the engine never escapes values")));
            }
            _ => {}
        }
    }
}

/// A tag no pass matches. From 0.2 on, where keys may hold `-`, a phase output
/// `${fix-tests.output}` can be read as `{{fix-tests}}`.
fn malformed(file: FileId, tag: &Tag, source: &str, why: &str, engine: Engine) -> Diagnostic {
    let d = Diagnostic::new(TemplateSyntax, file, tag.span, why.to_string());
    let hyphenated = source
        .strip_prefix("${")
        .and_then(|s| s.strip_suffix(".output}"))
        .filter(|name| name.contains('-') && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
    match hyphenated {
        Some(name) if engine == Engine::Head => {
            let replacement = format!("{{{{{name}}}}}");
            d.with_help(format!(
                "keys may hold `-` from Last Light 0.2 on, so `{replacement}` reads the output of phase `{name}`"
            ))
            .with_fix(
                format!("Replace with `{replacement}`"),
                Applicability::Unsafe,
                vec![Edit { span: tag.span, replacement }],
            )
        }
        Some(_) => {
            d.with_help("name the phase with `_` instead of `-` (keys cannot hold `-` before Last Light 0.2 either)")
        }
        None => d,
    }
}

/// A bash `command` is rendered, then refused if a `{{` is left: anything the engine leaves
/// verbatim, and any `{{` that is not a tag at all. One finding per command, at the first such
/// place, says why; returns whether the command is refused.
fn shell(file: FileId, text: &str, region: Span, tags: &[Tag], out: &mut Vec<Diagnostic>) -> bool {
    const TOOL_HELP: &str = "to pass `{{` to a tool (Go templates in `docker --format`, `gh --template`), run it from a `type: script` phase, whose source is not rendered, or build the braces in the shell: `b='{'; docker inspect --format \"$b$b.State.Running}}\" api`";
    let source = |span: Span| text.get(span.start..span.end).unwrap_or("");
    // (where, why it is left, what to do)
    let mut left: Vec<(Span, String, String)> = Vec::new();
    let blocks = tpl::blocks(tags);
    for nested in &blocks.nested {
        let span = tags[nested.inner].span;
        left.push((
            span,
            format!(
                "blocks cannot nest, so the inner `{}` is left as written whenever the outer condition holds",
                source(span)
            ),
            "make the blocks siblings, or test the condition in the shell".into(),
        ));
    }
    for index in &blocks.unclosed {
        let span = tags[*index].span;
        left.push((
            span,
            format!("no `{{{{/if}}}}` follows `{}`, so no pass matches it", source(span)),
            "close the block with `{{/if}}`".into(),
        ));
    }
    for index in &blocks.orphans {
        left.push((tags[*index].span, "this `{{/if}}` has no open block".into(), "remove it".into()));
    }
    for tag in tags {
        let written = source(tag.span);
        match &tag.kind {
            TagKind::Unknown { name } if name.name == "else" => {}
            TagKind::Unknown { .. } | TagKind::Malformed(_) => {
                let spaced = written.strip_prefix("{{").and_then(|w| w.strip_suffix("}}")).map(str::trim);
                let help = match spaced {
                    Some(key) if written.contains(' ') && tpl::looks_meant(written) && !key.contains(' ') => {
                        format!("write `{{{{{key}}}}}` without spaces")
                    }
                    _ => TOOL_HELP.to_string(),
                };
                left.push((tag.span, format!("no pass replaces `{written}`"), help));
            }
            _ => {}
        }
    }
    let raw = source(region);
    let mut from = 0;
    while let Some(n) = raw[from..].find("{{") {
        let at = region.start + from + n;
        if !tags.iter().any(|t| t.span.start <= at && at < t.span.end) {
            left.push((Span::new(at, at + 2), "this `{{` is not part of a template tag".into(), TOOL_HELP.into()));
        }
        from += n + 2;
    }
    left.sort_by_key(|(span, _, _)| span.start);
    let Some((span, why, help)) = left.first() else { return false };
    let more = match left.len() - 1 {
        0 => String::new(),
        n => format!(" ({n} more `{{{{` in this command)"),
    };
    out.push(
        Diagnostic::new(
            TemplateMarkerInShell,
            file,
            *span,
            format!(
                "bash commands may not contain `{{{{` after rendering, and this one does, so the engine refuses to run it (\"contains template marker '{{{{'\"): {why}{more}"
            ),
        )
        .with_help(help.clone()),
    );
    true
}

/// Names a template may read besides the phases: the server's variables at every release the
/// repository may be at (one shared set per release and scope), those a dispatcher adds for this
/// workflow by name, and the config's and crons' extras, built per workflow (usually none).
struct Known<'a> {
    engine: &'static FastSet<&'static str>,
    /// Set for this workflow by name (`baseBranch` for `pr-review` from 0.5.1).
    named: Vec<&'static str>,
    /// Declared extras the engine does not set, and the context keys of the crons that run
    /// the workflow: of unknown shape, so a dotted key may walk into them.
    extra: FastSet<&'a str>,
}

impl<'a> Known<'a> {
    fn new(ctx: &'a Ctx) -> Known<'a> {
        let oldest = ctx.config().lastlight.release.oldest;
        let engine = engine_variables(oldest, ctx.doc.is_pr_scoped());
        let named = VARIABLES
            .iter()
            .filter(|v| matches!(v.set_for, SetFor::Named(_)) && v.since <= oldest)
            .filter(|v| v.set_for_run(ctx.doc.name(), false) && !engine.contains(v.name))
            .map(|v| v.name)
            .collect();
        let declared = ctx.config().lastlight.variables.iter().map(String::as_str);
        let mut extra: FastSet<&str> = declared.filter(|v| !engine.contains(v)).collect();
        // Crons pass their `context:` to the workflow they run (`request.extra`).
        if let Some(name) = ctx.doc.name() {
            for cron in ctx.index.crons_running(ctx.doc, name).iter().map(|&i| &ctx.all[i]) {
                for entry in cron.get("context").and_then(|c| c.as_map()).unwrap_or_default() {
                    extra.extend(entry.key_str());
                }
            }
        }
        Known { engine, named, extra }
    }

    /// Whether every release the repository may be at, or the workflow's extras, set `name`.
    fn has(&self, name: &str) -> bool {
        self.engine.contains(name) || self.named.contains(&name) || self.extra.contains(name)
    }

    /// Whether `name`'s value may be walked into (an object, an array, or of unknown shape).
    fn walkable(&self, name: &str) -> bool {
        model::OBJECT_VARIABLES.contains(&name) || self.extra.contains(name)
    }

    /// Every name [`Known::has`] knows, sorted.
    fn sorted(&self) -> Vec<&str> {
        let mut names: Vec<&str> =
            self.engine.iter().copied().chain(self.named.iter().copied()).chain(self.extra.iter().copied()).collect();
        names.sort_unstable();
        names.dedup();
        names
    }
}

/// The variables the server sets for every run at the release `at` and after (and the PR
/// render context for a PR-scoped workflow), made once per process for each.
fn engine_variables(at: ReleaseId, pr: bool) -> &'static FastSet<&'static str> {
    static SETS: std::sync::OnceLock<Vec<[FastSet<&'static str>; 2]>> = std::sync::OnceLock::new();
    let sets = SETS.get_or_init(|| {
        let names = |at: ReleaseId, pr: bool| -> FastSet<&'static str> {
            VARIABLES
                .iter()
                .filter(|v| v.since <= at && (v.set_for == SetFor::Every || (pr && v.set_for == SetFor::PrScoped)))
                .map(|v| v.name)
                .collect()
        };
        releases::all().map(|at| [names(at, false), names(at, true)]).collect()
    });
    &sets[at.index()][usize::from(pr)]
}

/// For each tag, the key of the `{{#if key}}` block it is in (its opening tag included), when
/// that block guards reads of the key: the engine drops the block exactly when the key is unset,
/// which is the output its author wants. A negated block guards nothing. A guarded key that
/// looks like a typo of a name the engine sets is still guarded (the key may be real: a
/// dispatcher's extra), and [`guarded_typo`] mentions the likeness as info.
fn guards(tags: &[Tag]) -> Vec<Option<&[Segment]>> {
    let mut out = vec![None; tags.len()];
    for (open, close) in tpl::blocks(tags).pairs {
        let TagKind::IfOpen { negated: false, key } = &tags[open].kind else { continue };
        let key = unprefixed(key);
        if key.is_empty() {
            continue;
        }
        for slot in &mut out[open..=close] {
            *slot = Some(key);
        }
    }
    out
}

/// A path without a leading `phaseOutputs.`, which reads the same output as the bare name.
fn unprefixed(path: &[Segment]) -> &[Segment] {
    match path {
        [first, rest @ ..] if first.name == "phaseOutputs" && !rest.is_empty() => rest,
        _ => path,
    }
}

/// Names a read may mean: the context (and loop) variables and the phases, or only the phases.
fn candidates<'a>(ctx: &'a Ctx, known: &'a Known, phases_only: bool) -> Vec<&'a str> {
    // Sorted: a did-you-mean keeps the first of equally near names, the same one every run.
    let mut phases: Vec<&str> = ctx.producers.by_name.keys().copied().collect();
    phases.sort_unstable();
    if phases_only {
        return phases;
    }
    known.sorted().into_iter().chain(LOOP_VARIABLES.iter().map(|(n, _)| *n)).chain(phases).collect()
}

fn variables(ctx: &Ctx, known: &Known, scope: Scope, tags: &[Tag], out: &mut Vec<Diagnostic>) {
    let guards = guards(tags);
    // An `{{#if}}` that pass 1 never matches (no `{{/if}}` after it, or inside another block's
    // body) stays in the prompt as written: its key is never read, and `UnbalancedIf` or
    // `NestedIf` reports the tag.
    let blocks = tpl::blocks(tags);
    let verbatim: FastSet<usize> =
        blocks.unclosed.iter().copied().chain(blocks.nested.iter().map(|n| n.inner)).collect();
    for (index, (tag, guard)) in tags.iter().zip(guards).enumerate() {
        if verbatim.contains(&index) && matches!(tag.kind, TagKind::IfOpen { .. }) {
            continue;
        }
        // Whether the enclosing `{{#if}}` guards this read (`x` or `x.sub` inside `{{#if x}}`).
        let guarded = |path: &[Segment]| {
            let path = unprefixed(path);
            guard.is_some_and(|g| g.len() <= path.len() && g.iter().zip(path).all(|(a, b)| a.name == b.name))
        };
        if let TagKind::PhaseOutput(segment) = &tag.kind {
            if guarded(std::slice::from_ref(segment)) {
                continue;
            }
            match ctx.producers.by_name.get(segment.name.as_str()) {
                Some((producer, _)) => phase_order(ctx, scope, segment, *producer, out),
                None => unknown(ctx, known, scope, tag, segment, "no phase or output_var is named", out),
            }
            continue;
        }
        if let TagKind::Helper { name, arg: Some(arg) } = &tag.kind
            && name.name == "slugify"
        {
            if !guarded(std::slice::from_ref(arg)) || ctx.producers.by_name.contains_key(arg.name.as_str()) {
                slugify(ctx, known, scope, tag, arg, out);
            }
            continue;
        }
        let Some(path) = tpl::reads(tag) else { continue };
        let Some(first) = path.first() else { continue };
        let name = first.name.as_str();
        // Only findings that a value is unset here give way to a guard; a dotted key into text
        // renders empty whether or not the block is kept.
        let unset_ok = guarded(path);
        if name == "phaseOutputs" {
            if let Some(second) = path.get(1) {
                match ctx.producers.by_name.get(second.name.as_str()) {
                    Some((producer, _)) => {
                        if !dotted_output(ctx, scope, tag, &path[1..], true, out) && !unset_ok {
                            phase_order(ctx, scope, second, *producer, out);
                        }
                    }
                    None if unset_ok => {}
                    None => unknown(ctx, known, scope, tag, second, "no phase or output_var is named", out),
                }
            }
        } else if LOOP_VARIABLES.iter().any(|(n, _)| *n == name) {
            if !unset_ok {
                loop_variable(ctx, scope, first, out);
            }
        } else if EVENT_VARIABLES.iter().any(|(n, _)| *n == name) {
            if !scope.loop_message && !unset_ok {
                let d = Diagnostic::new(
                    UnknownVariable,
                    scope.file,
                    first.span,
                    format!("`{name}` is set only in `loop.messages`; here it renders as an empty string"),
                );
                push(out, scope, ctx, d, false);
            }
        } else if known.has(name) {
            let fields = model::OBJECT_FIELDS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f);
            if let (Some(fields), Some(field)) = (fields, path.get(1))
                && !fields.contains(&field.name.as_str())
            {
                let suggestion = did_you_mean(&field.name, fields.iter().copied());
                let hint = suggestion.map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
                let d = Diagnostic::new(
                    UnknownVariable,
                    scope.file,
                    field.span,
                    format!(
                        "`{name}` has no field `{}`, so `{}` renders as an empty string{hint}",
                        field.name,
                        dotted(path)
                    ),
                )
                .with_suggestion(field.span, suggestion)
                .with_help(format!(
                    "`{name}` holds {}",
                    fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
                ));
                push(out, scope, ctx, d, false);
            } else if path.len() > 1 && !known.walkable(name) {
                let span = first.span.cover(path[path.len() - 1].span);
                let d = Diagnostic::new(
                    UnknownVariable,
                    scope.file,
                    span,
                    format!(
                        "`{name}` is a string or number, and the engine walks dotted keys only into objects, so `{}` renders as an empty string",
                        dotted(path)
                    ),
                )
                .with_help(format!("read `{{{{{name}}}}}` itself"));
                push(out, scope, ctx, d, false);
            }
        } else if let Some((producer, _)) = ctx.producers.by_name.get(name) {
            // A guarded read is dropped with its block: the `{{#if}}` that never holds is the one finding.
            let checked = !unset_ok || matches!(tag.kind, TagKind::IfOpen { .. });
            if path.len() == 1 && checked && bare_output(ctx, scope, tag, first, out) {
                continue;
            }
            // A dotted read that renders empty anyway is one finding, not two.
            if !dotted_output(ctx, scope, tag, path, false, out) && !unset_ok {
                phase_order(ctx, scope, first, *producer, out);
            }
        } else if let Some(helper) = helper_written_as_variable(ctx, tag, path, unset_ok) {
            helper_as_variable(ctx, scope, first, helper, out);
        } else if !unset_ok {
            let field = path.get(1).map(|s| s.name.as_str());
            unknown_read(ctx, known, scope, tag, first, field, out);
        } else if matches!(tag.kind, TagKind::IfOpen { .. }) {
            guarded_typo(ctx, known, scope, first, out);
        }
    }
}

/// A guarded key the engine does not set that is close to one it does: the block renders
/// only when a dispatcher passes the key, so this is no defect by itself (a real extra often
/// looks like a known name: `baseChecksState` and `checksState`), but worth a word.
fn guarded_typo(ctx: &Ctx, known: &Known, scope: Scope, key: &Segment, out: &mut Vec<Diagnostic>) {
    let name = key.name.as_str();
    let Some(suggestion) = did_you_mean(name, candidates(ctx, known, false)) else { return };
    let d = Diagnostic::new(
        UnknownVariable,
        scope.file,
        key.span,
        format!(
            "the engine does not set `{name}`, so this block renders only if a dispatcher passes it; if `{suggestion}` was meant, the block never renders"
        ),
    )
    .with_severity(crate::diagnostic::Severity::Info)
    .with_suggestion(key.span, Some(suggestion))
    .with_help(
        "if the dispatcher passes it in `request.extra`, declare it in stagelint.toml: `[lastlight] extra-variables = [\"…\"]`",
    );
    push(out, scope, ctx, d, false);
}

/// The helper a bare `{{name}}` names: exactly (a helper called without its argument, or one
/// the engine lacks), or in another case from 0.2 on (`{{approvalURL}}`) when the
/// read is not guarded.
fn helper_written_as_variable(ctx: &Ctx, tag: &Tag, path: &[Segment], guarded: bool) -> Option<&'static str> {
    let [first] = path else { return None };
    if !matches!(tag.kind, TagKind::Var(_)) {
        return None;
    }
    let name = first.name.as_str();
    let head = ctx.config().lastlight.dialect() == Engine::Head;
    HEAD_HELPERS.iter().copied().find(|h| *h == name || (head && !guarded && h.eq_ignore_ascii_case(name)))
}

/// An unset top-level read, `field` the key read inside it (`review` of `review.approved`).
/// A loop output's field read from a name no phase writes gets its own message; anything else
/// is [`unknown`].
fn unknown_read(
    ctx: &Ctx,
    known: &Known,
    scope: Scope,
    tag: &Tag,
    first: &Segment,
    field: Option<&str>,
    out: &mut Vec<Diagnostic>,
) {
    let name = first.name.as_str();
    let loop_field =
        field.filter(|f| OutputShape::Loop.fields().contains(f) || OutputShape::GenericLoop.fields().contains(f));
    if let Some(field) = loop_field {
        let shape = if OutputShape::Loop.fields().contains(&field) {
            "a reviewer `loop` phase's `output_var` (`{approved, cycles}`)"
        } else {
            "a `generic_loop` phase's `output_var` (`{completed, iterations}`)"
        };
        let d = Diagnostic::new(
            UnknownVariable,
            scope.file,
            first.span,
            format!(
                "no phase of this workflow writes `{name}`, so `{name}.{field}` renders as an empty string; `{field}` is a field of {shape}"
            ),
        )
        .with_help(format!("give the loop phase `output_var: {name}`"));
        push(out, scope, ctx, d, false);
        return;
    }
    unknown(ctx, known, scope, tag, first, "not a context variable, phase name or output_var:", out);
}

/// `a.b.c`.
fn dotted(path: &[Segment]) -> String {
    path.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(".")
}

/// `{{slugify x}}` reads only the top-level context: no dotted key, no phase output fallback.
fn slugify(ctx: &Ctx, known: &Known, scope: Scope, tag: &Tag, arg: &Segment, out: &mut Vec<Diagnostic>) {
    let name = arg.name.as_str();
    if known.has(name) || LOOP_VARIABLES.iter().any(|(n, _)| *n == name) {
        return;
    }
    if ctx.producers.by_name.contains_key(name) {
        let d = Diagnostic::new(
            UnknownVariable,
            scope.file,
            arg.span,
            format!(
                "`slugify` reads only the top-level context, not phase outputs: `{name}` is a phase output here, so `{{{{slugify {name}}}}}` renders as an empty string"
            ),
        )
        .with_help("slugify a context variable, or have the phase write the slug itself");
        push(out, scope, ctx, d, false);
        return;
    }
    unknown(ctx, known, scope, tag, arg, "not a context variable, phase name or output_var:", out);
}

/// A bare `{{name}}` of a phase output: before the seed (e283f09d) a one-segment key is read
/// from the context alone, so it renders empty. Returns whether it reported one.
fn bare_output(ctx: &Ctx, scope: Scope, tag: &Tag, name: &Segment, out: &mut Vec<Diagnostic>) -> bool {
    let release = ctx.config().lastlight.release;
    let has = release.has(releases::SEED);
    if has == Has::Yes {
        return false;
    }
    let replacement = format!("${{{}.output}}", name.name);
    let at = match has {
        Has::From(_) => format!("at {}, which this repository may be at,", release.before(releases::SEED)),
        _ => format!("at {}", release.describe()),
    };
    let mut d = Diagnostic::new(
        UnknownVariable,
        scope.file,
        name.span,
        format!(
            "before the seed (e283f09d) the engine reads a one-segment `{{{{{}}}}}` from the context alone, not from the phase outputs: {at} it renders as an empty string",
            name.name
        ),
    );
    if matches!(tag.kind, TagKind::Var(_)) && !tag.after_dollar {
        d = d.with_fix(
            format!("Replace with `{replacement}`"),
            Applicability::Unsafe,
            vec![Edit { span: tag.span, replacement: replacement.clone() }],
        );
    }
    d = d.with_help(format!("read the output as `{replacement}`"));
    if matches!(has, Has::From(_)) {
        d = d.with_severity(crate::diagnostic::Severity::Info);
    }
    push(out, scope, ctx, d, false);
    true
}

/// A dotted key that walks into a phase output: text has no fields, and loop outputs have
/// only theirs. Returns whether it reported one.
fn dotted_output(
    ctx: &Ctx,
    scope: Scope,
    tag: &Tag,
    path: &[Segment],
    via_phase_outputs: bool,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let (Some(owner), Some(field)) = (path.first(), path.get(1)) else { return false };
    let Some(shape) = model::output_shape(&ctx.phases, &owner.name) else { return false };
    let written = if via_phase_outputs { format!("phaseOutputs.{}", dotted(path)) } else { dotted(path) };
    let span = owner.span.cover(path[path.len() - 1].span);
    let d = match shape {
        OutputShape::Text => {
            let producer = ctx.producers.by_name.get(owner.name.as_str()).map_or("?", |(i, _)| ctx.phase_name(*i));
            let mut d = Diagnostic::new(
                UnknownVariable,
                scope.file,
                span,
                format!(
                    "`{}` holds the output text of phase `{producer}`, and the engine walks dotted keys only into objects, so `{written}` renders as an empty string",
                    owner.name
                ),
            );
            let replacement = format!("${{{}.output}}", owner.name);
            if field.name == "output" && path.len() == 2 && matches!(tag.kind, TagKind::Var(_)) && !tag.after_dollar {
                d = d.with_help(format!("write `{replacement}` (or `{{{{{}}}}}`)", owner.name)).with_fix(
                    format!("Replace with `{replacement}`"),
                    Applicability::Unsafe,
                    vec![Edit { span: tag.span, replacement }],
                );
            } else {
                d = d.with_help(format!("read the whole output: `{replacement}` or `{{{{{}}}}}`", owner.name));
            }
            d
        }
        OutputShape::Loop | OutputShape::GenericLoop => {
            let fields = shape.fields();
            if fields.contains(&field.name.as_str()) && path.len() == 2 {
                return false;
            }
            let what = if shape == OutputShape::Loop { "a reviewer `loop`" } else { "a `generic_loop`" };
            let listed = fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(" and ");
            let suggestion = if path.len() == 2 { did_you_mean(&field.name, fields.iter().copied()) } else { None };
            let hint = suggestion.map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
            Diagnostic::new(
                UnknownVariable,
                scope.file,
                span,
                format!(
                    "`{}` is the output_var of {what}, which holds only {listed}, so `{written}` renders as an empty string{hint}",
                    owner.name
                ),
            )
            .with_suggestion(field.span, suggestion)
        }
    };
    push(out, scope, ctx, d, false);
    true
}

/// `{{branchUrl}}` without its file: pass 3 needs the argument, so pass 4 reads a variable.
fn helper_as_variable(ctx: &Ctx, scope: Scope, first: &Segment, helper: &str, out: &mut Vec<Diagnostic>) {
    let name = first.name.as_str();
    if name != helper {
        let d = Diagnostic::new(
            UnknownVariable,
            scope.file,
            first.span,
            format!("`{name}` is not a context variable, so it renders as an empty string; the helper is `{helper}` (names are case-sensitive)"),
        )
        .with_suggestion(first.span, Some(helper))
        .with_help(format!("write `{{{{{helper}}}}}`"));
        push(out, scope, ctx, d, false);
        return;
    }
    let engine = ctx.config().lastlight.dialect();
    let argument = if name == "slugify" {
        "a variable argument (`{{slugify issueTitle}}`)".to_string()
    } else {
        format!("a file argument (`{{{{{name} plan.md}}}}`)")
    };
    let message = if !engine.helpers().contains(&name) {
        format!(
            "the `{name}` helper exists from Last Light 0.2 on, and this repository is at {}: the engine reads `{{{{{name}}}}}` as a variable, which is never set, so it renders as an empty string",
            ctx.config().lastlight.release.describe()
        )
    } else {
        format!(
            "`{name}` needs {argument}; without one the engine reads `{name}` as a variable, which is never set, so it renders as an empty string"
        )
    };
    push(out, scope, ctx, Diagnostic::new(UnknownVariable, scope.file, first.span, message), false);
}

fn unknown(
    ctx: &Ctx,
    known: &Known,
    scope: Scope,
    tag: &Tag,
    segment: &Segment,
    what: &str,
    out: &mut Vec<Diagnostic>,
) {
    let name = segment.name.as_str();
    if tag.after_dollar {
        let source = ctx.workspace.file(scope.file).text.get(tag.span.start..tag.span.end).unwrap_or("");
        let d = Diagnostic::new(
            UnknownVariable,
            scope.file,
            segment.span,
            format!(
                "the engine replaces `{source}` inside the GitHub Actions expression `${source}`: `{name}` is not a context variable, so the expression is destroyed and only `$` is left"
            ),
        )
        .with_help(format!(
            "write the expression with spaces, `${{{{ {} }}}}`, which the engine leaves alone",
            source.trim_start_matches('{').trim_end_matches('}')
        ));
        push(out, scope, ctx, d, false);
        return;
    }
    let phase_only = !what.ends_with(':');
    // A key of the workflow's own `variables:` map looks declared, but the engine never reads
    // that map: say so rather than "not a context variable".
    let declared = (!phase_only)
        .then(|| ctx.root.get("variables").and_then(Node::as_map))
        .flatten()
        .and_then(|entries| entries.iter().find(|e| e.key_str() == Some(name)));
    if let Some(entry) = declared {
        let d = Diagnostic::new(
            UnknownVariable,
            scope.file,
            segment.span,
            format!(
                "`{name}` is declared under the workflow's `variables:`, which the engine never reads: it renders as an empty string"
            ),
        )
        .with_related(ctx.file().id, entry.key.span, "declared here, but never passed to templates")
        .with_help(
            "pass it from the dispatcher (`request.extra`, declared in stagelint.toml: `[lastlight] extra-variables = [\"…\"]`) or from a cron's `context:`",
        );
        push(out, scope, ctx, d, false);
        return;
    }
    if !phase_only && let Some(d) = set_elsewhere(ctx, scope, segment) {
        push(out, scope, ctx, d, false);
        return;
    }
    let suggestion = did_you_mean(name, candidates(ctx, known, phase_only));
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
    push(out, scope, ctx, d, false);
}

/// A variable the server sets, but not here: at a later release than the repository's (a
/// warning, or an info when only some of the releases it may be at lack it), or only for
/// PR-scoped workflows and this one is not.
fn set_elsewhere(ctx: &Ctx, scope: Scope, segment: &Segment) -> Option<Diagnostic> {
    let name = segment.name.as_str();
    let rows: Vec<&model::Variable> = VARIABLES.iter().filter(|v| v.name == name).collect();
    let first = rows.iter().map(|v| v.since).min()?;
    let release = ctx.config().lastlight.release;
    let pr_scoped = ctx.doc.is_pr_scoped();
    let for_run = rows.iter().filter(|v| v.set_for_run(ctx.doc.name(), pr_scoped)).map(|v| v.since).min();
    // Before 0.23 the dispatcher passed a PR's title as the issue's. Its number reached no
    // variable before 0.10.2 (`issueNumber` was 0 on PR runs) but the run's directory and id.
    let instead = (name == "prTitle").then_some("issueTitle");
    let instead_help =
        |other: &str| format!("the dispatcher passes the PR's value as `{other}` there: read `{{{{{other}}}}}`");
    let fallback_help = || {
        match name {
        "prNumber" => "before 0.10.2 no variable holds the PR's number (`issueNumber` is 0 on PR runs); `{{issueDir}}` (`.lastlight/issue-<N>`) and `{{taskId}}` contain it".to_string(),
        _ => "read a variable this release sets, or pass it from the dispatcher and declare it in `[lastlight] extra-variables`".to_string(),
    }
    };
    let d = match for_run.map(|since| (since, release.has(since))) {
        Some((since, Has::From(_))) => Diagnostic::new(
            UnknownVariable,
            scope.file,
            segment.span,
            format!(
                "`{name}` is set from Last Light {} on; at {}, which this repository may be at, it renders as an empty string",
                since.name(),
                release.before(since)
            ),
        )
        .with_severity(crate::diagnostic::Severity::Info)
        .with_help("set `[lastlight] release` in stagelint.toml to the release your server runs"),
        Some((since, _)) => {
            let help = match instead {
                Some(other) => instead_help(other),
                None => fallback_help(),
            };
            Diagnostic::new(
                UnknownVariable,
                scope.file,
                segment.span,
                format!(
                    "`{name}` is set from Last Light {} on, and this repository is at {}: it renders as an empty string",
                    since.name(),
                    release.describe()
                ),
            )
            .with_suggestion(segment.span, instead)
            .with_help(help)
        }
        None if rows.iter().any(|v| v.set_for == SetFor::PrScoped) && release.has(releases::V0_23) != Has::No => {
            Diagnostic::new(
                UnknownVariable,
                scope.file,
                segment.span,
                format!(
                    "`{name}` is set only for PR-scoped workflows, and this one is not (`pr_scoped: true` is missing), so it renders as an empty string"
                ),
            )
            .with_help("add `pr_scoped: true` to the workflow if it runs on a pull request")
        }
        None => {
            let help = match instead {
                Some(other) => instead_help(other),
                None => "pass it from the dispatcher and declare it in `[lastlight] extra-variables`".to_string(),
            };
            let runs = match rows.iter().find_map(|v| match v.set_for {
                SetFor::Named(names) => Some(names),
                _ => None,
            }) {
                Some(names) => format!("the runs of {}", names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")),
                None => "PR-scoped workflows".to_string(),
            };
            Diagnostic::new(
                UnknownVariable,
                scope.file,
                segment.span,
                format!(
                    "`{name}` is set from Last Light {} on, for {runs}; this repository is at {} and this workflow is not one of them, so it renders as an empty string",
                    first.name(),
                    release.describe()
                ),
            )
            .with_suggestion(segment.span, instead)
            .with_help(help)
        }
    };
    Some(d)
}

fn phase_order(ctx: &Ctx, scope: Scope, segment: &Segment, producer: usize, out: &mut Vec<Diagnostic>) {
    let Some(consumer) = scope.phase else { return };
    if consumer == producer {
        self_reference(ctx, scope, segment, producer, out);
        return;
    }
    if ctx.before.get(consumer).is_some_and(|set| set.contains(&producer)) {
        return;
    }
    let (producer_name, consumer_name) = (ctx.phase_name(producer), ctx.phase_name(consumer));
    // `${classify.output}` names the phase itself; `{{category}}` names its output_var.
    let subject = if segment.name == producer_name {
        format!("the output of phase `{producer_name}` is read here, but `{producer_name}`")
    } else {
        format!("`{}` is the output of phase `{producer_name}`, which", segment.name)
    };
    let message = if ctx.dag {
        format!(
            "{subject} is not an ancestor of `{consumer_name}` in `depends_on`: it may not have run yet and renders as an empty string"
        )
    } else {
        format!("{subject} runs after `{consumer_name}`: here it renders as an empty string")
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
    push(out, scope, ctx, d, true);
}

/// A phase reading its own output before it ran (its prompt, model or command). Loops are
/// left alone: their later rounds may see an earlier round's output.
fn self_reference(ctx: &Ctx, scope: Scope, segment: &Segment, phase: usize, out: &mut Vec<Diagnostic>) {
    let Some(p) = ctx.phases.iter().find(|p| p.index == phase) else { return };
    if !scope.before_run || p.has_loop() || p.has_generic_loop() {
        return;
    }
    let name = ctx.phase_name(phase);
    let d = Diagnostic::new(
        PhaseOrder,
        scope.file,
        segment.span,
        format!(
            "`{}` is the output of phase `{name}` itself, which does not exist before the phase has run: here it renders as an empty string",
            segment.name
        ),
    )
    .with_help("read the output in a later phase");
    push(out, scope, ctx, d, true);
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
                push(out, scope, ctx, d, true);
                return;
            }
        },
        (_, Some(p)) if p.has_generic_loop() => return,
        _ => format!("`{name}` is set only in phases with a `generic_loop:`; here it renders as an empty string"),
    };
    let d = Diagnostic::new(LoopVariableOutsideLoop, scope.file, segment.span, message)
        .with_help("read it only in the prompts and messages of a phase with that loop");
    push(out, scope, ctx, d, true);
}

/// A finding in a prompt file names the workflow phase that uses the prompt; when several
/// workflows (or, for a finding that depends on the phase, several phases) use it, the message
/// says which one, so each line of the report stands on its own.
fn push(out: &mut Vec<Diagnostic>, scope: Scope, ctx: &Ctx, mut d: Diagnostic, per_phase: bool) {
    let Some(span) = scope.used_at else {
        out.push(d);
        return;
    };
    let phase = scope.phase.map(|i| ctx.phase_name(i)).unwrap_or("?");
    let workflow = ctx.doc.name().unwrap_or("?");
    let (workflows, phases) = scope.uses;
    if per_phase && phases > 1 {
        d.message.push_str(&format!(" (phase `{phase}` of workflow `{workflow}`)"));
    } else if workflows > 1 {
        d.message.push_str(&format!(" (in workflow `{workflow}`)"));
    }
    d.related.insert(
        0,
        crate::diagnostic::Related {
            file: Some(ctx.file().id),
            span,
            message: format!("rendered for phase `{phase}` of workflow `{workflow}`"),
        },
    );
    out.push(d);
}
