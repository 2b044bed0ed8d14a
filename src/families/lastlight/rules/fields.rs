//! Keys and values: unknown keys (stripped silently upstream), types, enums, required names,
//! and the per-phase rules the engine's schema refinements and runner enforce.

use crate::diagnostic::Diagnostic;
use crate::families::lastlight::model::{Phase, WorkflowDoc, template_region};
use crate::families::lastlight::rules::Ctx;
use crate::families::lastlight::schema::{self, Field, Ty};
use crate::families::lastlight::{
    ApprovalGateUnknown, EmptyPhases, FieldType, GenericLoopNoUntil, InvalidEnum, MissingName, NeverEvaluated,
    NoPromptOrSkill, PhaseTypeField, SkillAndSkills, SkipIfGrammar, TemplateMarkerInShell, UnknownKey, UntilGrammar,
};
use crate::source::{Node, Span, Value};
use crate::template::lastlight::Engine;
use crate::template::until::{self, Condition};
use crate::util::did_you_mean;

/// Unknown keys, types and enums everywhere, and the required names.
pub(super) fn check_keys(doc: &WorkflowDoc, root: &Node, out: &mut Vec<Diagnostic>) {
    let cron = crate::families::lastlight::model::is_cron(root);
    let engine = doc.file.config.lastlight.engine;
    let walker = Walker { doc, engine };
    walker.map(root, if cron { schema::CRON } else { schema::WORKFLOW }, out);
    let first_line = doc.file.text.find('\n').unwrap_or(doc.file.text.len());
    if root.get("name").is_none() {
        let what = if cron { "cron" } else { "workflow" };
        out.push(
            Diagnostic::new(
                MissingName,
                doc.file.id,
                Span::new(0, first_line),
                format!("this {what} has no `name`; the engine rejects the file and skips it"),
            )
            .with_help("add `name: <name>`: workflows are looked up by it"),
        );
    }
    if cron {
        return;
    }
    match root.entry("phases") {
        None => out.push(Diagnostic::new(
            EmptyPhases,
            doc.file.id,
            Span::new(0, first_line),
            "this workflow has no `phases:`; add the phases it runs",
        )),
        Some(entry) if entry.value.as_seq().is_some_and(<[Node]>::is_empty) => out.push(Diagnostic::new(
            EmptyPhases,
            doc.file.id,
            entry.key.span,
            "`phases` is empty, so the workflow does nothing; add at least one phase",
        )),
        Some(_) => {}
    }
    if let Some(items) = root.get("phases").and_then(Node::as_seq) {
        for item in items.iter().filter(|i| i.as_map().is_some()) {
            if item.get("name").is_none() {
                let span = item.as_map().and_then(|m| m.first()).map_or(item.span, |e| e.key.span);
                out.push(
                    Diagnostic::new(
                        MissingName,
                        doc.file.id,
                        span,
                        "this phase has no `name`; the engine rejects the workflow",
                    )
                    .with_help("add `name: <name>`: outputs, `depends_on` and resumes key on it"),
                );
            }
        }
    }
}

struct Walker<'a, 'w> {
    doc: &'a WorkflowDoc<'w>,
    engine: Engine,
}

impl Walker<'_, '_> {
    fn map(&self, node: &Node, fields: &'static [Field], out: &mut Vec<Diagnostic>) {
        let id = self.doc.file.id;
        for entry in node.as_map().unwrap_or_default() {
            let Some(key) = entry.key_str() else { continue };
            let known = fields.iter().find(|f| f.name == key);
            match known {
                Some(field) if !(field.head_only && self.engine == Engine::Seed) => {
                    self.value(field, &entry.value, out)
                }
                Some(_) => out.push(
                    Diagnostic::new(
                        UnknownKey,
                        id,
                        entry.key.span,
                        format!(
                            "`{key}` is only known to the current engine; the seed-era engine strips it without a word"
                        ),
                    )
                    .with_help("remove it, or set `[lastlight] engine = \"head\"` if you run the current engine"),
                ),
                None => {
                    let names = fields.iter().filter(|f| !f.head_only || self.engine == Engine::Head).map(|f| f.name);
                    let suggestion = did_you_mean(key, names);
                    let hint = suggestion.map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
                    out.push(
                        Diagnostic::new(
                            UnknownKey,
                            id,
                            entry.key.span,
                            format!("unknown key `{key}`: the engine strips it silently, so it has no effect{hint}"),
                        )
                        .with_suggestion(entry.key.span, suggestion),
                    );
                }
            }
        }
    }

    fn value(&self, field: &'static Field, node: &Node, out: &mut Vec<Diagnostic>) {
        let id = self.doc.file.id;
        let wrong = |expected: &str| {
            Diagnostic::new(
                FieldType,
                id,
                node.span,
                format!("`{}` must be {expected}, not {}", field.name, node.type_name()),
            )
        };
        match &field.ty {
            Ty::Str | Ty::Template | Ty::Path => {
                if node.as_str().is_none() {
                    out.push(wrong("a string"));
                } else if field.name == "variant" {
                    self.variant(node, out);
                }
            }
            Ty::Bool => {
                if !matches!(node.value, Value::Bool(_)) {
                    out.push(wrong("`true` or `false`"));
                }
            }
            Ty::PositiveInt | Ty::Count => {
                let min = if matches!(field.ty, Ty::Count) { 0 } else { 1 };
                let from_config = self.engine == Engine::Head && node.get("from").is_some();
                if !from_config && node.as_i64().is_none_or(|n| n < min) {
                    let expected =
                        if min == 0 { "a whole number of 0 or more" } else { "a whole number greater than 0" };
                    let d = match node.as_i64() {
                        Some(n) => Diagnostic::new(
                            FieldType,
                            id,
                            node.span,
                            format!("`{}` must be {expected}, not {n}", field.name),
                        ),
                        None => wrong(expected),
                    };
                    out.push(d);
                }
            }
            Ty::Enum(values) => {
                let values: &[&str] =
                    if field.name == "type" && self.engine == Engine::Seed { schema::SEED_PHASE_TYPES } else { values };
                match node.as_str() {
                    None => out.push(wrong("a string")),
                    Some(value) if !values.contains(&value) => {
                        let suggestion = did_you_mean(value, values.iter().copied());
                        out.push(
                            Diagnostic::new(
                                InvalidEnum,
                                id,
                                node.span,
                                format!(
                                    "`{value}` is not a valid `{}`; expected one of {}",
                                    field.name,
                                    values.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
                                ),
                            )
                            .with_suggestion(node.span, suggestion),
                        );
                    }
                    Some(_) => {}
                }
            }
            Ty::StrList => match node.as_seq() {
                Some(items) => {
                    if field.name == "skills" && items.is_empty() {
                        out.push(Diagnostic::new(FieldType, id, node.span, "`skills` needs at least one skill"));
                    }
                    for item in items.iter().filter(|i| i.as_str().is_none()) {
                        out.push(Diagnostic::new(
                            FieldType,
                            id,
                            item.span,
                            format!("items of `{}` must be strings, not {}", field.name, item.type_name()),
                        ));
                    }
                }
                None => out.push(wrong("a list of strings")),
            },
            Ty::StrOrList => match &node.value {
                Value::String(_) => {}
                Value::Seq(items) if !items.is_empty() && items.iter().all(|i| i.as_str().is_some()) => {}
                _ => out.push(wrong("a string or a non-empty list of strings")),
            },
            Ty::StrMap => match node.as_map() {
                Some(entries) => {
                    for entry in entries.iter().filter(|e| e.value.as_str().is_none()) {
                        out.push(Diagnostic::new(
                            FieldType,
                            id,
                            entry.value.span,
                            format!("values of `{}` must be strings, not {}", field.name, entry.value.type_name()),
                        ));
                    }
                }
                None => out.push(wrong("a mapping of strings")),
            },
            Ty::Map(inner) => match node.as_map() {
                Some(_) => self.map(node, inner, out),
                None => out.push(wrong("a mapping")),
            },
            Ty::List(inner) => match node.as_seq() {
                Some(items) => {
                    for item in items {
                        match item.as_map() {
                            Some(_) => self.map(item, inner, out),
                            None => out.push(Diagnostic::new(
                                FieldType,
                                id,
                                item.span,
                                format!("each entry of `{}` must be a mapping, not {}", field.name, item.type_name()),
                            )),
                        }
                    }
                }
                None => out.push(wrong("a list")),
            },
            Ty::Any => {}
        }
    }

    /// A literal `variant` (not a template) must be a level the providers know.
    fn variant(&self, node: &Node, out: &mut Vec<Diagnostic>) {
        let Some(value) = node.as_str() else { return };
        if value.contains("{{") || schema::VARIANTS.contains(&value) {
            return;
        }
        let suggestion = did_you_mean(value, schema::VARIANTS.iter().copied());
        out.push(
            Diagnostic::new(
                InvalidEnum,
                self.doc.file.id,
                node.span,
                format!("`{value}` is not a reasoning variant; expected one of `off`, `minimal`, `low`, `medium`, `high`, `xhigh`"),
            )
            .with_suggestion(node.span, suggestion),
        );
    }
}

/// Per-phase rules.
pub(super) fn check(ctx: &Ctx, out: &mut Vec<Diagnostic>) {
    for phase in &ctx.phases {
        skill_and_skills(ctx, phase, out);
        prompt_or_skill(ctx, phase, out);
        type_fields(ctx, phase, out);
        generic_loop(ctx, phase, out);
        skip_if(ctx, phase, out);
        on_output(ctx, phase, out);
        approval_gates(ctx, phase, out);
    }
}

fn key_span(node: &Node, key: &str) -> Option<Span> {
    node.entry(key).map(|e| e.key.span)
}

/// Where to point for a finding about the whole phase: its name, else its first key.
pub(super) fn phase_anchor(phase: &Phase) -> Span {
    phase
        .name_node()
        .map(|n| n.span)
        .or_else(|| phase.node.as_map().and_then(|m| m.first()).map(|e| e.key.span))
        .unwrap_or(phase.node.span)
}

fn skill_and_skills(ctx: &Ctx, phase: &Phase, out: &mut Vec<Diagnostic>) {
    let (Some(skill), Some(skills)) = (key_span(phase.node, "skill"), key_span(phase.node, "skills")) else { return };
    out.push(
        Diagnostic::new(
            SkillAndSkills,
            ctx.file().id,
            skill,
            "phase cannot specify both `skill` and `skills` — use `skills` for multiple",
        )
        .with_related(ctx.file().id, skills, "`skills` is set here")
        .with_help("move the `skill` value into the `skills` list (the first entry is the primary skill)"),
    );
}

fn prompt_or_skill(ctx: &Ctx, phase: &Phase, out: &mut Vec<Diagnostic>) {
    if phase.kind() != "agent" || ["prompt", "skill", "skills"].iter().any(|k| phase.get(k).is_some()) {
        return;
    }
    let name = phase.name().unwrap_or("?");
    out.push(
        Diagnostic::new(
            NoPromptOrSkill,
            ctx.file().id,
            phase_anchor(phase),
            format!("agent phase `{name}` has neither `prompt:` nor `skill:`/`skills:`; the run fails with \"cannot build prompt\""),
        )
        .with_help("add `prompt: prompts/<file>.md` or `skills: [<name>]`, or make it `type: context` if it is a checkpoint"),
    );
}

fn type_fields(ctx: &Ctx, phase: &Phase, out: &mut Vec<Diagnostic>) {
    let id = ctx.file().id;
    let kind = phase.kind();
    let required = match kind {
        "bash" => Some(("command", "phase type `bash` requires `command:`")),
        "script" => Some(("script", "phase type `script` requires `script:`")),
        _ => None,
    };
    if let Some((key, message)) = required
        && phase.get(key).is_none()
    {
        let span = phase.get("type").map_or(phase_anchor(phase), |n| n.span);
        out.push(Diagnostic::new(PhaseTypeField, id, span, message));
    }
    for (key, owner) in [("command", "bash"), ("script", "script"), ("runtime", "script")] {
        if kind != owner
            && let Some(span) = key_span(phase.node, key)
        {
            let mut d = Diagnostic::new(
                PhaseTypeField,
                id,
                span,
                format!("`{key}:` is only valid on type `{owner}`; this phase is `{kind}`"),
            )
            .with_help(format!("set `type: {owner}`, or remove `{key}:`"));
            if let Some(type_node) = phase.get("type") {
                d = d.with_related(id, type_node.span, "the phase type");
            }
            out.push(d);
        }
    }
}

fn generic_loop(ctx: &Ctx, phase: &Phase, out: &mut Vec<Diagnostic>) {
    let id = ctx.file().id;
    let Some(entry) = phase.node.entry("generic_loop") else { return };
    let node = &entry.value;
    if node.as_map().is_none() {
        return;
    }
    if node.get("until").is_none() && node.get("until_bash").is_none() {
        out.push(
            Diagnostic::new(
                GenericLoopNoUntil,
                id,
                entry.key.span,
                "generic_loop requires at least one of: until, until_bash",
            )
            .with_help(
                "add `until: \"output.contains('DONE')\"` or an `until_bash:` command whose exit code 0 ends the loop",
            ),
        );
    }
    if let Some(until_node) = node.get("until")
        && let Some(text) = until_node.as_str()
        && let Err(why) = until::parse(text)
    {
        out.push(
            Diagnostic::new(
                UntilGrammar,
                id,
                until_node.span,
                format!("`until` is outside the engine's grammar, so it is always false and the loop runs all `max_iterations`: {why}"),
            )
            .with_help("write `output.contains('X')`, `path == true`, `path == 'value'` or `path != 'value'`"),
        );
    }
    if let Some(bash) = node.get("until_bash")
        && let Some(text) = bash.as_str()
    {
        let region = template_region(&ctx.file().text, bash);
        let raw = ctx.file().text.get(region.start..region.end).unwrap_or("");
        let at = raw.find("{{").map_or(bash.span, |n| Span::new(region.start + n, region.start + n + 2));
        if text.contains("{{") {
            out.push(
                Diagnostic::new(
                    TemplateMarkerInShell,
                    id,
                    at,
                    "until_bash is not rendered and is rejected when it contains '{{': the condition is never met and the loop runs all `max_iterations`",
                )
                .with_help("read values from the environment or files instead, or move the condition to `until:`"),
            );
        }
    }
}

fn skip_if(ctx: &Ctx, phase: &Phase, out: &mut Vec<Diagnostic>) {
    let Some(node) = phase.get("skip_if") else { return };
    let items: Vec<&Node> = match &node.value {
        Value::String(_) => vec![node],
        Value::Seq(items) => items.iter().filter(|i| i.as_str().is_some()).collect(),
        _ => return,
    };
    for item in items {
        let text = item.as_str().unwrap_or_default();
        let message = match until::parse(text) {
            Err(why) => format!("`skip_if` condition is outside the `until` grammar, so it is always false and never skips: {why}"),
            Ok(Condition::OutputContains(_)) => {
                "`skip_if` is evaluated before the phase runs, when `output` is empty: `output.contains` never holds here"
                    .to_string()
            }
            Ok(_) => continue,
        };
        out.push(
            Diagnostic::new(SkipIfGrammar, ctx.file().id, item.span, message)
                .with_help("test a variable instead: `path == 'value'`, `path != 'value'`, `path == true`"),
        );
    }
}

fn on_output(ctx: &Ctx, phase: &Phase, out: &mut Vec<Diagnostic>) {
    let Some(span) = phase.get("on_output").and_then(|n| key_span(n, "contains_READY")) else { return };
    out.push(
        Diagnostic::new(
            NeverEvaluated,
            ctx.file().id,
            span,
            "`contains_READY` is accepted by the schema but the runner never evaluates it; this rule has no effect",
        )
        .with_help(
            "remove it, or use `requires_marker: \"READY\"` (current engine) to fail the phase without the marker",
        ),
    );
}

fn approval_gates(ctx: &Ctx, phase: &Phase, out: &mut Vec<Diagnostic>) {
    let gates = &ctx.config().lastlight.approval_gates;
    let nodes = [phase.get("approval_gate"), phase.get("loop").and_then(|l| l.get("approval_gate"))];
    for node in nodes.into_iter().flatten() {
        let Some(gate) = node.as_str() else { continue };
        if gates.iter().any(|g| g == gate) {
            continue;
        }
        out.push(
            Diagnostic::new(
                ApprovalGateUnknown,
                ctx.file().id,
                node.span,
                format!("approval gate `{gate}` pauses only if the server config sets `approval.{gate}: true`; otherwise it is silently skipped"),
            )
            .with_help(format!("if your server enables it, add it to `[lastlight] approval-gates = [\"{gate}\"]` in stagelint.toml")),
        );
    }
}
