//! Keys and values: unknown keys (stripped silently upstream), types, enums, required names,
//! and the per-phase rules the engine's schema refinements and runner enforce.

use crate::diagnostic::{Applicability, Diagnostic, Edit, Severity};
use crate::families::lastlight::model::{Phase, WorkflowDoc, template_region};
use crate::families::lastlight::rules::{Ctx, loader_rejects};
use crate::families::lastlight::schema::{self, Field, Ty};
use crate::families::lastlight::{
    ApprovalGateUnknown, EmptyPhases, FieldType, GenericLoopNoUntil, InvalidEnum, MissingField, MissingName,
    NeverEvaluated, NoPromptOrSkill, PhaseTypeField, ReservedIntent, SkillAndSkills, SkipIfGrammar,
    TemplateMarkerInShell, UnknownKey, UntilGrammar,
};
use crate::registry::releases::lastlight::{self as releases, Has, Target};
use crate::source::{Node, Span, Value};
use crate::template::lastlight::{self as tpl, TagKind};
use crate::template::until::{self, Condition};
use crate::util::{KeyGuess, did_you_mean, did_you_mean_key};

/// Unknown keys, types, enums and required keys everywhere, and the required names.
pub(super) fn check_keys(doc: &WorkflowDoc, root: &Node, cron: bool, out: &mut Vec<Diagnostic>) {
    let release = doc.file.config.lastlight.release;
    let walker = Walker { doc, release };
    let first_key = root.as_map().and_then(|m| m.first()).map_or(Span::empty(0), |e| e.key.span);
    walker.map(root, if cron { schema::CRON } else { schema::WORKFLOW }, first_key, "", out);
    let first_line = doc.file.text.find('\n').unwrap_or(doc.file.text.len());
    if root.get("name").is_none() {
        // A stable place: what makes the file a cron or an agent workflow.
        let (what, anchor) = if cron {
            ("cron", root.entry("kind").map(|e| e.key.span.cover(e.value.span)))
        } else {
            ("agent workflow", root.entry("phases").map(|e| e.key.span))
        };
        out.push(
            Diagnostic::new(
                MissingName,
                doc.file.id,
                anchor.unwrap_or(first_key),
                format!("this {what} has no `name`, which the schema requires; {}", loader_rejects(release, doc.file)),
            )
            .with_help("add `name: <name>`: workflows are looked up by it"),
        );
    }
    if cron {
        return;
    }
    match root.entry("phases") {
        None => out.push(
            Diagnostic::new(
                EmptyPhases,
                doc.file.id,
                if root.as_map().is_some_and(|m| !m.is_empty()) { first_key } else { Span::new(0, first_line) },
                format!(
                    "this workflow has no `phases:`, which the schema requires; {}",
                    loader_rejects(release, doc.file)
                ),
            )
            .with_help("add the phases it runs under `phases:`"),
        ),
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
                        format!(
                            "this phase has no `name`, which the schema requires; {}",
                            loader_rejects(release, doc.file)
                        ),
                    )
                    .with_help("add `name: <name>`: outputs, `depends_on` and resumes key on it"),
                );
            }
        }
    }
}

/// Required keys that other rules report: `MissingName`, `EmptyPhases`, `CronSchedule`.
const REPORTED_ELSEWHERE: &[&str] = &["name", "phases", "kind", "schedule"];

/// What `MissingField`'s fix inserts: values the corpus uses, or the engine's usual choice.
fn placeholder(key: &str) -> Option<&'static str> {
    match key {
        "max_cycles" => Some("2"),
        "max_iterations" => Some("5"),
        "action" => Some("fail"),
        _ => None,
    }
}

/// `type: loop` and friends: loops are blocks on a phase, not phase types.
fn loop_type_help(field: &str, value: &str) -> Option<String> {
    let block = match value {
        "loop" | "review_loop" | "review-loop" => "loop",
        "generic_loop" | "generic-loop" | "until" => "generic_loop",
        _ => return None,
    };
    (field == "type").then(|| {
        format!(
            "a loop is not a phase type: keep the phase's type (`agent` by default) and add a `{block}:` block to it"
        )
    })
}

/// The other loop block a key belongs to: `until:` written under `loop:` is a `generic_loop`
/// key, `max_cycles:` under `generic_loop:` a reviewer-loop one.
fn sibling_home(path: &str, key: &str) -> Option<&'static str> {
    let (home, fields) = match path.rsplit('.').next()? {
        "loop" => ("generic_loop", schema::GENERIC_LOOP),
        "generic_loop" => ("loop", schema::LOOP),
        _ => return None,
    };
    fields.iter().any(|f| f.name == key).then_some(home)
}

struct Walker<'a, 'w> {
    doc: &'a WorkflowDoc<'w>,
    release: Target,
}

impl Walker<'_, '_> {
    /// Checks a mapping's keys; `at` is where to report a missing key (the key holding the
    /// mapping), `path` its dotted name (`loop.on_request_changes`).
    fn map(&self, node: &Node, fields: &'static [Field], at: Span, path: &str, out: &mut Vec<Diagnostic>) {
        let id = self.doc.file.id;
        for entry in node.as_map().unwrap_or_default() {
            let Some(key) = entry.key_str() else { continue };
            let known = fields.iter().find(|f| f.name == key);
            // Top-level and phase keys (most of them) are named as they are: no copy.
            let inner = || -> std::borrow::Cow<str> {
                if path.is_empty() || path == "phases" { key.into() } else { format!("{path}.{key}").into() }
            };
            match known.map(|field| (field, self.release.has(field.since))) {
                Some((field, Has::Yes)) => self.value(field, &entry.value, entry.key.span, &inner(), out),
                Some((field, Has::From(since))) => {
                    out.push(
                        Diagnostic::new(
                            UnknownKey,
                            id,
                            entry.key.span,
                            format!(
                                "`{key}` is read from Last Light {} on; at {}, which this repository may be at, the engine strips it without a word",
                                since.name(),
                                self.release.before(since)
                            ),
                        )
                        .with_severity(Severity::Info)
                        .with_help("set `[lastlight] release` in stagelint.toml to the release your server runs"),
                    );
                    self.value(field, &entry.value, entry.key.span, &inner(), out)
                }
                // A cron's `handler` before 0.25.6: the cron has no `workflow` then, and
                // `CronWorkflowUnknown` says that the file is rejected.
                Some((field, _))
                    if field.name == "handler" && std::ptr::eq(fields, schema::CRON) && node.get("workflow").is_none() => {}
                Some((field, _)) => out.push(
                    Diagnostic::new(
                        UnknownKey,
                        id,
                        entry.key.span,
                        format!(
                            "`{key}` is read from Last Light {} on, and this repository is at {}: the engine strips it without a word",
                            field.since.name(),
                            self.release.describe()
                        ),
                    )
                    .with_help("remove it, or set `[lastlight] release` in stagelint.toml if your server runs a later release"),
                ),
                None => {
                    let names = fields.iter().filter(|f| self.release.any_has(f.since)).map(|f| f.name);
                    let guess = did_you_mean_key(key, names, node.keys());
                    let suggestion = KeyGuess::rename(guess);
                    let anchor = self.anchor_of(entry);
                    if let (Some(anchor), None) = (anchor, guess) {
                        // A key that only exists to hold an anchor for aliases: stripping it is
                        // what its author wants, once the aliases have copied its value.
                        if !key.starts_with("x-") {
                            out.push(
                                Diagnostic::new(
                                    UnknownKey,
                                    id,
                                    entry.key.span,
                                    format!("unknown key `{key}` looks like an anchor holder (`&{anchor}`): the engine strips the key, and only aliases (`*{anchor}`) keep its value"),
                                )
                                .with_help(format!("name it `x-{key}` (stagelint does not report `x-` keys that hold an anchor), keep the anchor inside a key the schema knows, or suppress this finding")),
                            );
                        }
                        continue;
                    }
                    let hint = match guess {
                        Some(KeyGuess { name, taken: false }) => format!("; did you mean `{name}`?"),
                        Some(KeyGuess { name, taken: true }) => format!(" (`{name}` is set already)"),
                        None => sibling_home(path, key)
                            .map(|home| format!("; `{key}` belongs in `{home}:`"))
                            .unwrap_or_default(),
                    };
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
        let missing = fields.iter().filter(|f| {
            f.required
                && self.release.has(f.since) == Has::Yes
                && !REPORTED_ELSEWHERE.contains(&f.name)
                && node.get(f.name).is_none()
        });
        for field in missing {
            let mut d = Diagnostic::new(
                MissingField,
                id,
                at,
                format!(
                    "`{path}` has no `{}`, which the engine's schema requires; {}",
                    field.name,
                    loader_rejects(self.release, self.doc.file)
                ),
            )
            .with_help(format!("add `{}:` ({})", field.name, field.doc));
            if let (Some(value), Some(edit)) = (placeholder(field.name), self.insertion(node)) {
                let (line_start, indent) = edit;
                let newline = if self.doc.file.text.contains("\r\n") { "\r\n" } else { "\n" };
                d = d.with_fix(
                    format!("Add `{}: {value}`", field.name),
                    Applicability::Unsafe,
                    vec![Edit {
                        span: Span::empty(line_start),
                        replacement: format!("{indent}{}: {value}{newline}", field.name),
                    }],
                );
            }
            out.push(d);
        }
    }

    /// The anchor name written right after `entry`'s key (`x-defaults: &defaults`), if any.
    fn anchor_of<'t>(&'t self, entry: &crate::source::Entry) -> Option<&'t str> {
        let text = &self.doc.file.text;
        let rest = text.get(entry.key.span.end..)?.trim_start_matches([' ', '\t', '"', '\'']);
        let rest = rest.strip_prefix(':')?.trim_start_matches([' ', '\t']).strip_prefix('&')?;
        let len =
            rest.find(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']' | '{' | '}')).unwrap_or(rest.len());
        (len > 0).then(|| &rest[..len])
    }

    /// Where a new first key of the block mapping `node` goes: the start of its first key's
    /// line, with that key's indentation. `None` for flow mappings (`{a: 1}`).
    fn insertion(&self, node: &Node) -> Option<(usize, String)> {
        let first = node.as_map()?.first()?;
        let text = &self.doc.file.text;
        let line_start = text[..first.key.span.start].rfind('\n').map_or(0, |n| n + 1);
        let indent = &text[line_start..first.key.span.start];
        indent.chars().all(|c| c == ' ').then(|| (line_start, indent.to_string()))
    }

    fn value(&self, field: &'static Field, node: &Node, key: Span, path: &str, out: &mut Vec<Diagnostic>) {
        let id = self.doc.file.id;
        // `phases:` with nothing after it is a null of no width; point at the key instead.
        let span = if node.span.is_empty() { key } else { node.span };
        let wrong = |expected: &str| {
            Diagnostic::new(
                FieldType,
                id,
                span,
                format!("`{}` must be {expected}, not {}", field.name, node.type_name()),
            )
        };
        match &field.ty {
            Ty::Str | Ty::Template | Ty::Path => {
                if let Some(d) = self.unquoted(field, node) {
                    out.push(d);
                } else if node.as_str().is_none() {
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
            Ty::TemplatedInt if node.as_map().is_some() => self.templated_int(field, node, out),
            Ty::PositiveInt if node.get("from").is_some() => out.push(Diagnostic::new(
                FieldType,
                id,
                span,
                format!(
                    "`{}` must be a positive integer: only `max_iterations` and `timeout_seconds` take `{{ from, default }}` (from Last Light 0.23 on)",
                    field.name
                ),
            )),
            Ty::PositiveInt | Ty::TemplatedInt | Ty::Count => {
                let min = if matches!(field.ty, Ty::Count) { 0 } else { 1 };
                if node.as_i64().is_none_or(|n| n < min) {
                    let expected = if min == 0 {
                        "a whole number of 0 or more"
                    } else {
                        "a positive integer (a whole number greater than 0)"
                    };
                    let written = self.doc.file.text.get(node.span.start..node.span.end).unwrap_or("").trim();
                    let shown = match &node.value {
                        Value::String(_) => format!("a string ({written})"),
                        _ if !written.is_empty() && node.as_map().is_none() && node.as_seq().is_none() => {
                            format!("`{written}`")
                        }
                        _ => node.type_name().to_string(),
                    };
                    out.push(Diagnostic::new(
                        FieldType,
                        id,
                        span,
                        format!("`{}` must be {expected}, not {shown}", field.name),
                    ));
                }
            }
            Ty::Enum(values) => {
                if field.name == "type" && self.later_phase_type(node, out) {
                    return;
                }
                let own: Vec<&str>;
                let values: &[&str] = if field.name == "type" {
                    own = schema::PHASE_TYPE_SINCE
                        .iter()
                        .filter(|(_, since)| self.release.any_has(*since))
                        .map(|(name, _)| *name)
                        .collect();
                    &own
                } else {
                    values
                };
                match node.as_str() {
                    None => out.push(wrong("a string")),
                    // A cron's `kind: cron` is the only enum `kind`; any other value makes the
                    // file an agent workflow, a free label there, and `CronKindMissing` says so.
                    Some(_) if field.name == "kind" => {}
                    Some(value) if !values.contains(&value) => {
                        let suggestion = did_you_mean(value, values.iter().copied());
                        let mut d = Diagnostic::new(
                                InvalidEnum,
                                id,
                                node.span,
                                format!(
                                    "`{value}` is not a valid `{}`; expected one of {}",
                                    field.name,
                                    values.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
                                ),
                            )
                            .with_suggestion(node.span, suggestion);
                        if let Some(help) = loop_type_help(field.name, value) {
                            d = d.with_help(help);
                        }
                        out.push(d);
                    }
                    Some(_) => {}
                }
            }
            Ty::NotIn(reserved) => match node.as_str() {
                None => out.push(wrong("a string")),
                Some(value) if reserved.contains(&value) => out.push(
                    Diagnostic::new(
                        ReservedIntent,
                        id,
                        node.span,
                        format!(
                            "`{value}` is a control intent the harness owns ({}); a workflow may not claim it, so the loader rejects the workflow",
                            reserved.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
                        ),
                    )
                    .with_help("name the intent after what the workflow does (`build`, `triage`, `qa-test`…)"),
                ),
                Some(_) => {}
            },
            Ty::StrList | Ty::NonEmptyStrList => match node.as_seq() {
                Some(items) => {
                    if matches!(field.ty, Ty::NonEmptyStrList) && items.is_empty() {
                        out.push(Diagnostic::new(
                            FieldType,
                            id,
                            span,
                            format!("`{}` is an empty list; it needs at least one entry", field.name),
                        ));
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
                Value::Seq(items) if items.is_empty() => out.push(Diagnostic::new(
                    FieldType,
                    id,
                    span,
                    format!(
                        "`{}` is an empty list; it must be a condition or a non-empty list of conditions",
                        field.name
                    ),
                )),
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
                Some(_) => self.map(node, inner, key, path, out),
                None => out.push(wrong("a mapping")),
            },
            Ty::List(inner) => match node.as_seq() {
                Some(items) => {
                    for item in items {
                        match item.as_map() {
                            Some(_) => {
                                let at = item.as_map().and_then(|m| m.first()).map_or(item.span, |e| e.key.span);
                                self.map(item, inner, at, path, out)
                            }
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

    /// A phase type of a later release than the repository's: the schema of the releases before
    /// it rejects the workflow. Returns whether it reported one.
    fn later_phase_type(&self, node: &Node, out: &mut Vec<Diagnostic>) -> bool {
        let Some(value) = node.as_str() else { return false };
        let Some(&(_, since)) = schema::PHASE_TYPE_SINCE.iter().find(|(name, _)| *name == value) else {
            return false;
        };
        let d = match self.release.has(since) {
            Has::Yes => return false,
            Has::From(_) => Diagnostic::new(
                InvalidEnum,
                self.doc.file.id,
                node.span,
                format!(
                    "phase type `{value}` exists from Last Light {} on; at {}, which this repository may be at, the schema rejects it: {}",
                    since.name(),
                    self.release.before(since),
                    loader_rejects(Target { oldest: self.release.oldest, newest: since.previous().unwrap_or(since) }, self.doc.file)
                ),
            )
            .with_severity(Severity::Info)
            .with_help("set `[lastlight] release` in stagelint.toml to the release your server runs"),
            Has::No => Diagnostic::new(
                InvalidEnum,
                self.doc.file.id,
                node.span,
                format!(
                    "phase type `{value}` exists from Last Light {} on, and this repository is at {}, whose schema rejects it: {}",
                    since.name(),
                    self.release.describe(),
                    loader_rejects(self.release, self.doc.file)
                ),
            ),
        };
        out.push(d);
        true
    }

    /// `{ from, default }`, which `max_iterations` and `timeout_seconds` take from 0.23 on: a
    /// dotted path into the run's context and the number used when it resolves to nothing.
    fn templated_int(&self, field: &Field, node: &Node, out: &mut Vec<Diagnostic>) {
        let id = self.doc.file.id;
        match self.release.has(releases::V0_23) {
            Has::No => {
                out.push(Diagnostic::new(
                    FieldType,
                    id,
                    node.span,
                    format!(
                        "`{}` must be a positive integer: `{{ from, default }}` is read from Last Light 0.23 on, and this repository is at {}",
                        field.name,
                        self.release.describe()
                    ),
                ));
                return;
            }
            Has::From(since) => out.push(
                Diagnostic::new(
                    FieldType,
                    id,
                    node.span,
                    format!(
                        "`{}` as `{{ from, default }}` is read from Last Light 0.23 on; at {}, which this repository may be at, the schema rejects it",
                        field.name,
                        self.release.before(since)
                    ),
                )
                .with_severity(Severity::Info),
            ),
            Has::Yes => {}
        }
        let from_ok = node.get("from").and_then(Node::as_str).is_some_and(|f| !f.is_empty());
        let default_ok = node.get("default").and_then(Node::as_i64).is_some_and(|n| n > 0);
        let stray = node.as_map().unwrap_or_default().iter().find(|e| !matches!(e.key_str(), Some("from" | "default")));
        let problem = if let Some(entry) = stray {
            Some((
                entry.key.span,
                format!("`{}` takes only `from` and `default`, not `{}`", field.name, entry.key_str().unwrap_or("?")),
            ))
        } else if !from_ok {
            Some((node.span, format!("`{}.from` must be a non-empty dotted path into the run's context", field.name)))
        } else if !default_ok {
            Some((
                node.span,
                format!("`{}.default` must be a positive integer, used when `from` resolves to nothing", field.name),
            ))
        } else {
            None
        };
        if let Some((span, message)) = problem {
            out.push(Diagnostic::new(FieldType, id, span, format!("{message}; the schema rejects the workflow")));
        }
    }

    /// A string value YAML reads as something else because it is not quoted: `{{models.x}}`
    /// (a flow mapping) or `2024-05-01` (a date for js-yaml, though the core schema keeps a
    /// string). The fix quotes it.
    fn unquoted(&self, field: &Field, node: &Node) -> Option<Diagnostic> {
        let raw = self.doc.file.text.get(node.span.start..node.span.end)?;
        let why = match &node.value {
            Value::Map(_) if raw.starts_with("{{") => "YAML reads an unquoted `{{…}}` as a mapping",
            Value::String(_) if is_timestamp(raw) => {
                "the workflow loader (js-yaml) reads the unquoted value as a date, which the schema rejects"
            }
            _ => return None,
        };
        let replacement = crate::source::yaml_write::quoted_scalar(raw);
        Some(
            Diagnostic::new(
                FieldType,
                self.doc.file.id,
                node.span,
                format!("`{}` must be a string: {why}; quote it", field.name),
            )
            .with_fix(
                format!("Quote it: `{replacement}`"),
                Applicability::Safe,
                vec![Edit { span: node.span, replacement }],
            ),
        )
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
    // Before 0.5.1 there are no `bash` or `script` phases and their keys are stripped: the
    // type and the keys are reported as such.
    if ctx.config().lastlight.release.has(releases::V0_5_1) == Has::No {
        return;
    }
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
    let release = ctx.config().lastlight.release;
    if let Some(until_node) = node.get("until")
        && let Some(text) = until_node.as_str()
    {
        let why = match until::parse(text, release.any_has(releases::V0_23)) {
            Err(why) => why,
            Ok(condition) => {
                dotted_contains(ctx, until_node, &condition, out);
                return until_bash_of(ctx, node, out);
            }
        };
        let help = if text.contains("||") || text.contains("&&") {
            "`until` holds one condition; combine several in an `until_bash` command (exit code 0 ends the loop)"
        } else {
            "write `output.contains('X')`, `path == true`, `path == 'value'` or `path != 'value'`"
        };
        out.push(
            Diagnostic::new(
                UntilGrammar,
                id,
                until_node.span,
                format!("`until` is outside the engine's grammar, so it is always false and the loop runs all `max_iterations`: {why}"),
            )
            .with_help(help),
        );
    }
    until_bash_of(ctx, node, out);
}

fn until_bash_of(ctx: &Ctx, generic_loop: &Node, out: &mut Vec<Diagnostic>) {
    if let Some(bash) = generic_loop.get("until_bash")
        && bash.as_str().is_some()
    {
        until_bash(ctx, bash, out);
    }
}

/// `<path>.contains('x')` on a path other than `output`, when only some of the releases the
/// repository may be at read it (0.23 on): an info.
fn dotted_contains(ctx: &Ctx, node: &Node, condition: &Condition, out: &mut Vec<Diagnostic>) {
    let release = ctx.config().lastlight.release;
    let (Condition::Contains { path, .. }, Has::From(since)) = (condition, release.has(releases::V0_23)) else {
        return;
    };
    if path == "output" {
        return;
    }
    out.push(
        Diagnostic::new(
            UntilGrammar,
            ctx.file().id,
            node.span,
            format!(
                "`{path}.contains(…)` is read from Last Light 0.23 on; at {}, which this repository may be at, `.contains` is read only on `output` and this never holds",
                release.before(since)
            ),
        )
        .with_severity(Severity::Info)
        .with_help("set `[lastlight] release` in stagelint.toml to the release your server runs"),
    );
}

/// `until_bash` is not rendered: a `{{` makes the engine refuse the command (the condition is
/// never met), and `${name.output}` reaches bash as a bad substitution.
fn until_bash(ctx: &Ctx, bash: &Node, out: &mut Vec<Diagnostic>) {
    let id = ctx.file().id;
    let text = &ctx.file().text;
    let region = template_region(text, bash);
    let raw = text.get(region.start..region.end).unwrap_or("");
    let tags = tpl::parse(raw, region.start, ctx.config().lastlight.dialect());
    let mut reported = Vec::new();
    for tag in &tags {
        let source = &text[tag.span.start..tag.span.end];
        let message = if matches!(tag.kind, TagKind::PhaseOutput(_)) {
            format!(
                "`{source}` in `until_bash` is never rendered: bash reads it as a parameter expansion and fails (\"bad substitution\"), so the condition is never met and the loop runs all `max_iterations`"
            )
        } else if source.starts_with("{{") {
            format!(
                "`{source}` in `until_bash` is never rendered, and the engine refuses a command that contains '{{{{': the condition is never met and the loop runs all `max_iterations`"
            )
        } else {
            continue;
        };
        reported.push(tag.span);
        out.push(
            Diagnostic::new(TemplateMarkerInShell, id, tag.span, message)
                .with_help("read values from the environment or files instead, or move the condition to `until:`"),
        );
    }
    // A `{{` that is not part of any tag is refused all the same.
    let mut from = 0;
    while let Some(n) = raw[from..].find("{{") {
        let at = region.start + from + n;
        if !reported.iter().any(|s: &Span| s.start <= at && at < s.end) {
            out.push(
                Diagnostic::new(
                    TemplateMarkerInShell,
                    id,
                    Span::new(at, at + 2),
                    "until_bash is not rendered and is rejected when it contains '{{': the condition is never met and the loop runs all `max_iterations`",
                )
                .with_help("read values from the environment or files instead, or move the condition to `until:`"),
            );
            break;
        }
        from += n + 2;
    }
}

fn skip_if(ctx: &Ctx, phase: &Phase, out: &mut Vec<Diagnostic>) {
    // Before 0.23 the key is stripped (`UnknownKey` says so); its conditions mean nothing.
    if ctx.config().lastlight.release.has(releases::V0_23) == Has::No {
        return;
    }
    let Some(node) = phase.get("skip_if") else { return };
    let items: Vec<&Node> = match &node.value {
        Value::String(_) => vec![node],
        Value::Seq(items) => items.iter().filter(|i| i.as_str().is_some()).collect(),
        _ => return,
    };
    for item in items {
        let text = item.as_str().unwrap_or_default();
        let mut help = "test a variable instead: `path == 'value'`, `path != 'value'`, `path == true`";
        let message = match until::parse(text, true) {
            Err(why) => {
                if text.contains("||") {
                    help = "a `skip_if` list skips when any entry holds: put each condition in its own entry";
                }
                format!("`skip_if` condition is outside the `until` grammar, so it is always false and never skips: {why}")
            }
            Ok(Condition::Contains { path, .. }) if path == "output" => {
                "`skip_if` is evaluated before the phase runs, when `output` is empty: `output.contains` never holds here"
                    .to_string()
            }
            Ok(_) => continue,
        };
        out.push(Diagnostic::new(SkipIfGrammar, ctx.file().id, item.span, message).with_help(help));
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
        .with_help(never_evaluated_help(ctx.config().lastlight.release)),
    );
}

/// `requires_marker` replaces it only where the repository's release reads it.
fn never_evaluated_help(release: Target) -> String {
    let since = releases::V0_18_5;
    match release.has(since) {
        Has::Yes => "remove it, or use `requires_marker: \"READY\"` to fail the phase without the marker".to_string(),
        Has::From(_) => format!(
            "remove it; from Last Light {} on, `requires_marker: \"READY\"` fails the phase without the marker (at {} the engine strips that key too)",
            since.name(),
            release.before(since)
        ),
        Has::No => format!(
            "remove it: at {}, nothing fails a phase whose output lacks a marker (`requires_marker` comes with Last Light {})",
            release.describe(),
            since.name()
        ),
    }
}

fn approval_gates(ctx: &Ctx, phase: &Phase, out: &mut Vec<Diagnostic>) {
    let gates = &ctx.config().lastlight.approval_gates;
    let nodes = [phase.get("approval_gate"), phase.get("loop").and_then(|l| l.get("approval_gate"))];
    for node in nodes.into_iter().flatten() {
        let Some(gate) = node.as_str() else { continue };
        if gates.iter().any(|g| g == gate) {
            continue;
        }
        let suggestion = did_you_mean(gate, gates.iter().map(String::as_str));
        let hint = suggestion.map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
        out.push(
            Diagnostic::new(
                ApprovalGateUnknown,
                ctx.file().id,
                node.span,
                format!("approval gate `{gate}` pauses only if the server config sets `approval.{gate}: true`; otherwise it is silently skipped{hint}"),
            )
            .with_help(match suggestion {
                Some(s) => format!("fix the name if you meant `{s}`; if your server enables `{gate}`, add it to `[lastlight] approval-gates` in stagelint.toml"),
                None => format!("if your server enables it, add it to `[lastlight] approval-gates = [\"{gate}\"]` in stagelint.toml"),
            })
            .with_suggestion(node.span, suggestion),
        );
    }
}

/// A YAML 1.1 timestamp as js-yaml resolves it: `2024-05-01`, or a date with a time
/// (`2024-05-01T10:00:00Z`, `2024-5-1 10:00:00 +02:00`).
fn is_timestamp(text: &str) -> bool {
    let digits =
        |s: &str, min: usize, max: usize| (min..=max).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit());
    let date_end = text.find(['T', 't', ' ', '\t']).unwrap_or(text.len());
    let (date, rest) = text.split_at(date_end);
    let parts: Vec<&str> = date.split('-').collect();
    let [year, month, day] = parts[..] else { return false };
    if rest.is_empty() {
        return digits(year, 4, 4) && digits(month, 2, 2) && digits(day, 2, 2);
    }
    if !(digits(year, 4, 4) && digits(month, 1, 2) && digits(day, 1, 2)) {
        return false;
    }
    let rest = rest.strip_prefix(['T', 't']).unwrap_or(rest).trim_start_matches([' ', '\t']);
    // The time, then an optional fraction and zone (`Z`, `+2`, `-05:30`).
    let time_end = rest.find(|c: char| !(c.is_ascii_digit() || c == ':')).unwrap_or(rest.len());
    let clock: Vec<&str> = rest[..time_end].split(':').collect();
    let [hour, minute, second] = clock[..] else { return false };
    if !(digits(hour, 1, 2) && digits(minute, 2, 2) && digits(second, 2, 2)) {
        return false;
    }
    let mut zone = &rest[time_end..];
    if let Some(fraction) = zone.strip_prefix('.') {
        zone = fraction.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    let zone = zone.trim_start_matches([' ', '\t']);
    if zone.is_empty() || zone == "Z" {
        return true;
    }
    let Some(offset) = zone.strip_prefix(['+', '-']) else { return false };
    match offset.split_once(':') {
        Some((h, m)) => digits(h, 1, 2) && digits(m, 2, 2),
        None => digits(offset, 1, 2),
    }
}

#[cfg(test)]
mod tests {
    use super::is_timestamp;

    #[test]
    fn timestamps_as_js_yaml_reads_them() {
        for yes in [
            "2024-05-01",
            "2024-5-1 10:00:00",
            "2024-05-01T10:00:00Z",
            "2024-05-01t1:02:03.5 +02:00",
            "2001-12-14 21:59:43.10 -5",
        ] {
            assert!(is_timestamp(yes), "{yes}");
        }
        for no in [
            "2024-5-1",
            "2024-05",
            "24-05-01",
            "2024-05-01x",
            "2024-05-01T10:00",
            "v2024-05-01",
            "2024-05-01 10:00:00 CET",
        ] {
            assert!(!is_timestamp(no), "{no}");
        }
    }
}
