//! C3L prompts: path templates, prompt and system prompt files, `{uv-*}` and `{input_text}` in
//! prompt bodies, placeholders nothing substitutes, prompt frontmatter, retry prompts and the
//! breakdown config (`<agent>-steps-{app,user}.yml`). Where UV variables come from is `uv`.
//!
//! Prompt-file checks run only when `<agent>/prompts/` exists: a registry alone (a test
//! fixture, say) is checked for its own consistency only.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::flow::StepIndex;
use super::reach::{Live, Reach, reach};
use super::validators::string_inner;
use crate::diagnostic::{Applicability, Diagnostic, Edit, Severity};
use crate::families::steps::model::{
    Adaptation, Agent, DEFAULT_PATH_TEMPLATE, DEFAULT_PATH_TEMPLATE_NO_ADAPTATION, RUNTIME_SUPPLIED_UV_VARS, Step,
    StepKind,
};
use crate::families::steps::release::{self, Fate, Graded, PromptGrade, prompt_grade};
use crate::families::steps::{
    BreakdownConfigMissing, C3lPatternMismatch, PR_C3L_001, PR_C3L_004, PR_RESOLVE_004, PR_RESOLVE_005, PR_SYSTEM_002,
    PromptFrontmatterMismatch, UnsubstitutedPlaceholder, UnusedUvVariable,
};
use crate::source::{Entry, Node, Span, Value, frontmatter, yaml};
use crate::template::c3l::{self, C3lKind};
use crate::util::did_you_mean;
use crate::workspace::SourceFile;

/// The placeholders a C3L path template may use.
const TEMPLATE_VARS: [&str; 5] = ["c1", "c2", "c3", "edition", "adaptation"];

pub(super) fn check(agent: &Agent, index: &StepIndex, live: &Live, out: &mut Vec<Diagnostic>) {
    check_path_templates(agent, out);
    let steps = &index.steps;
    check_c3l_patterns(agent, live, out);
    check_breakdown_files(agent, out);
    if agent.prompts.is_empty() {
        return;
    }
    check_system_prompt(agent, out);
    for step in steps {
        check_step_prompt(agent, step, live, out);
    }
    check_retry_prompts(agent, out);
}

pub(super) fn uses(value: &str, list: &[&str]) -> bool {
    list.contains(&value)
}

pub(super) fn names(list: &[&str]) -> String {
    list.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// A path as climpt's messages show it: relative to the agent directory.
fn shown(agent: &Agent, path: &Path) -> String {
    path.strip_prefix(&agent.dir).unwrap_or(path).to_string_lossy().into_owned()
}

/// The `uvVariables` key of a step (the step's key when it has none).
pub(super) fn uv_key(step: &Step) -> Span {
    step.def.entry("uvVariables").map_or(step.key.span, |e| e.key.span)
}

pub(super) fn opening(node: &Node) -> Span {
    Span::new(node.span.start, (node.span.start + 1).min(node.span.end))
}

// ---------------------------------------------------------------------------------------------
// PR-C3L-001: path templates
// ---------------------------------------------------------------------------------------------

/// PR-C3L-001: a `pathTemplate`/`pathTemplateNoAdaptation` other than the default. climpt's
/// types declare them, but no release stagelint models reads them (breakdown names the files
/// itself), so prompts are looked for where breakdown puts them; a malformed one is named too.
fn check_path_templates(agent: &Agent, out: &mut Vec<Diagnostic>) {
    let file = agent.registry.id();
    let text = &agent.registry.file.text;
    for (key, default) in
        [("pathTemplate", DEFAULT_PATH_TEMPLATE), ("pathTemplateNoAdaptation", DEFAULT_PATH_TEMPLATE_NO_ADAPTATION)]
    {
        let Some(node) = agent.registry.get(key) else { continue };
        let Some(template) = node.as_str() else { continue };
        if template == default {
            continue;
        }
        let inner = string_inner(text, node);
        let mapped = inner != node.span;
        let at = |start: usize, end: usize| {
            if mapped { Span::new(inner.start + start, inner.start + end) } else { node.span }
        };
        let mut besides = None;
        let mut span = node.span;
        let mut rest = 0;
        while let Some(open) = template[rest..].find('{').map(|i| rest + i) {
            let Some(close) = template[open..].find('}').map(|i| open + i) else {
                besides = Some("it has a `{` that is never closed".to_string());
                span = at(open, template.len());
                break;
            };
            let name = &template[open + 1..close];
            let allowed = TEMPLATE_VARS.contains(&name) && !(key == "pathTemplateNoAdaptation" && name == "adaptation");
            if !allowed {
                let near = did_you_mean(name, TEMPLATE_VARS)
                    .map(|n| format!(" (did you mean `{{{n}}}`?)"))
                    .unwrap_or_default();
                besides = Some(if TEMPLATE_VARS.contains(&name) {
                    "it uses `{adaptation}`, which steps without an adaptation have no value for".to_string()
                } else {
                    format!("`{{{name}}}` is not a C3L path variable{near}")
                });
                span = at(open, close + 1);
                break;
            }
            rest = close + 1;
        }
        if besides.is_none() && !template.ends_with(".md") {
            besides = Some("it does not end in `.md`, as C3L prompt files do".to_string());
        }
        let besides = besides.map(|b| format!("; besides, {b}")).unwrap_or_default();
        out.push(
            Diagnostic::new(
                PR_C3L_001,
                file,
                span,
                format!(
                    "`{key}` is read by no climpt release: breakdown names each prompt file itself (`{default}`), so prompts are looked for there, not where this template says{besides}"
                ),
            )
            .with_severity(Severity::Info)
            .with_help(format!("remove `{key}`, and keep prompt files at `{default}` under `prompts/`")),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Breakdown config: C3lPatternMismatch, BreakdownConfigMissing
// ---------------------------------------------------------------------------------------------

/// The alternatives of a `^(a|b|c)$` pattern; `None` for any other shape.
fn alternatives(pattern: &str) -> Option<Vec<&str>> {
    let inner = pattern.strip_prefix("^(")?.strip_suffix(")$")?;
    let alts: Vec<&str> = inner.split('|').collect();
    let literal = |a: &&str| !a.is_empty() && a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    alts.iter().all(literal).then_some(alts)
}

/// Whether climpt can load a step's C3L prompt, as far as the workspace tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum C3lLoad {
    /// The prompt file exists and the breakdown config allows the step's c2/c3.
    Loads,
    /// It cannot load: the reason.
    Fails(&'static str),
    /// The agent's prompts were not read (a registry checked alone).
    Unknown,
}

/// Whether breakdown's user.yml patterns reject a definition's c2 or c3.
fn pattern_rejects(agent: &Agent, def: &Node) -> bool {
    let Some(user) = agent.breakdown_user else { return false };
    [("c2", "directiveType"), ("c3", "layerType")].iter().any(|(field, kind)| {
        let alts = user.at(&format!("params.two.{kind}.pattern")).and_then(Node::as_str).and_then(alternatives);
        let value = def.get(field).and_then(Node::as_str).filter(|v| !v.is_empty());
        matches!((alts, value), (Some(alts), Some(value)) if !alts.contains(&value))
    })
}

pub(super) fn c3l_load(agent: &Agent, step: &Step) -> C3lLoad {
    if pattern_rejects(agent, step.def) {
        return C3lLoad::Fails("breakdown's config does not allow its c2 or c3");
    }
    if agent.prompts.is_empty() {
        return C3lLoad::Unknown;
    }
    match agent.prompt_file(step) {
        Some(_) => C3lLoad::Loads,
        None => C3lLoad::Fails("its prompt file does not exist"),
    }
}

/// How far a run gets to a step, its kind, and whether it has a `fallbackKey`.
type StepFacts = (Reach, Option<StepKind>, bool);

fn check_c3l_patterns(agent: &Agent, live: &Live, out: &mut Vec<Diagnostic>) {
    let Some(user) = agent.breakdown_user else { return };
    let user_name = user.path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut checks = Vec::new();
    for (field, kind) in [("c2", "directiveType"), ("c3", "layerType")] {
        let Some(node) = user.at(&format!("params.two.{kind}.pattern")) else { continue };
        let Some(pattern) = node.as_str() else { continue };
        let Some(alts) = alternatives(pattern) else { continue };
        checks.push((field, kind, pattern, node.span, alts));
    }
    if checks.is_empty() {
        return;
    }
    let registry = agent.registry;
    let handler = agent.layout.handler();
    let steps_key = agent.retry.steps();
    // Each owner of a c2/c3: its name, its definition and, for a step, its facts.
    let mut owners: Vec<(String, &Node, Option<StepFacts>)> = agent
        .steps()
        .iter()
        .map(|s| (format!("steps.{}", s.id), s.def, Some((reach(live, s), s.kind(), s.get("fallbackKey").is_some()))))
        .collect();
    for entry in registry.get(steps_key).and_then(Node::as_map).unwrap_or_default() {
        let runs = entry.key_str().and_then(|key| super::validators::validation_step_runs(agent, key));
        if entry.value.as_map().is_some() && !matches!(runs, Some(Graded::All(_))) {
            owners.push((format!("{steps_key}.{}", entry.key_str().unwrap_or("?")), &entry.value, None));
        }
    }
    for (owner, def, step) in owners {
        for (field, kind, pattern, span, alts) in &checks {
            let Some(node) = def.get(field) else { continue };
            let Some(value) = node.as_str() else { continue };
            if value.is_empty() || alts.contains(&value) {
                continue;
            }
            // What each release does when breakdown rejects the path: the newest one's words.
            let consequence = |facts: &release::Facts| -> Option<(Severity, String)> {
                let Some((_, step_kind, keyed)) = &step else {
                    return Some((
                        Severity::Error,
                        "its retry prompts cannot load, and climpt sends the generic retry message instead".into(),
                    ));
                };
                match release::fate(facts, *step_kind) {
                    Fate::Unread => None,
                    _ if facts.embedded && *keyed => Some((
                        Severity::Error,
                        "the C3L prompt cannot load, and climpt sends the embedded template of the step's `fallbackKey` instead (or fails when it knows no such key)".into(),
                    )),
                    Fate::Fatal => {
                        Some((Severity::Error, "the C3L prompt cannot load, and the step fails with PR-C3L-002 when it runs".into()))
                    }
                    Fate::Replaced => Some((
                        Severity::Warning,
                        format!("the C3L prompt cannot load, and climpt sends the {handler}'s built-in prompt instead, silently"),
                    )),
                }
            };
            let graded = release::grade(&agent.target, |facts| consequence(facts).map(|(level, _)| level));
            let newest = release::facts_of(&agent.target).rev().find_map(&consequence);
            let (level, runtime, partly) = match (graded, newest) {
                (Graded::All(level), Some((_, runtime))) => (level, runtime, None),
                (Graded::Some(releases), Some((_, runtime))) => (Severity::Info, runtime, Some(releases)),
                _ => match prompt_grade(&agent.target, step.as_ref().and_then(|s| s.1)) {
                    PromptGrade::Unread { now, later } => (
                        Severity::Info,
                        format!("the C3L prompt cannot load once climpt reads it ({now} never does; {later} do)"),
                        None,
                    ),
                    _ => continue,
                },
            };
            let mut d = Diagnostic::new(
                C3lPatternMismatch,
                registry.id(),
                node.span,
                format!(
                    "`{owner}.{field}` is `{value}`, which `{kind}.pattern` in {user_name} does not allow: breakdown rejects the prompt path, so {runtime}"
                ),
            )
            .with_related(user.id(), *span, format!("`{pattern}` allows {}", names(alts)))
            .with_severity(level);
            if let Some(releases) = partly {
                d.message.push_str(&format!(
                    " (only in {releases}; the other releases this agent may run on do not read this prompt)"
                ));
            }
            if let Some((reached, ..)) = &step
                && let Some(note) = reached.note()
            {
                d.message.push_str(&format!(" ({note})"));
                let graded = reached.grade(d.severity);
                d = d.with_severity(graded);
            }
            d = match did_you_mean(value, alts.iter().copied()) {
                Some(near) => d.with_help(format!("did you mean `{near}`? Otherwise add `{value}` to the pattern")),
                None => d.with_help(format!("add `{value}` to `{kind}.pattern`")),
            };
            out.push(d);
        }
    }
}

/// Whether the project has breakdown configs but none with this agent's prompt root
/// (`<agent>-steps-app.yml`): then breakdown loads none of its C3L prompts.
fn no_app_config(agent: &Agent) -> bool {
    agent.breakdown_app.is_none()
        && agent.dir.parent().is_some_and(|p| agent.workspace.exists(&p.join("climpt").join("config")))
}

fn check_breakdown_files(agent: &Agent, out: &mut Vec<Diagnostic>) {
    let Some(name) = agent.dir.file_name().and_then(|n| n.to_str()) else { return };
    let Some(config_dir) = agent.dir.parent().map(|p| p.join("climpt").join("config")) else { return };
    let present = agent.breakdown_app.is_some() || agent.breakdown_user.is_some();
    if !present && !agent.workspace.exists(&config_dir) {
        return;
    }
    let validate = release::facts_of(&agent.target).all(|f| f.validate);
    for (side, doc, holds) in [
        ("app", agent.breakdown_app, "the prompt root (`app_prompt.base_dir`)"),
        ("user", agent.breakdown_user, "the allowed c2/c3 values (`directiveType`/`layerType` patterns)"),
    ] {
        if doc.is_some() {
            continue;
        }
        out.push(
            Diagnostic::new(
                BreakdownConfigMissing,
                agent.registry.id(),
                agent.registry.anchor(),
                format!(
                    "this project has `.agent/climpt/config/` but no `{name}-steps-{side}.yml`, which holds {holds}; climpt loads the agent's C3L prompts through it{}",
                    if validate { ", and its `--validate` reports it missing" } else { ", so none of them loads" }
                ),
            )
            .with_help(format!("create `.agent/climpt/config/{name}-steps-{side}.yml` (see the other agents' files there)")),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Prompt files: PR-SYSTEM-002, PR-C3L-004 and the template checks
// ---------------------------------------------------------------------------------------------

fn check_system_prompt(agent: &Agent, out: &mut Vec<Diagnostic>) {
    let path_key = agent.layout.path("runner.flow.systemPromptPath");
    let configured = agent.setting("runner.flow.systemPromptPath").and_then(Node::as_str);
    let relative = configured.unwrap_or("prompts/system.md");
    let path = crate::workspace::discover::normalize(&agent.dir.join(relative));
    if agent.workspace.exists(&path) {
        return;
    }
    // Up to 1.13.22 climpt sends its embedded generic system prompt instead (a1af6c4).
    let graded = release::grade(&agent.target, |facts| match facts.system_prompt_required {
        true => Some(Severity::Error),
        false => Some(Severity::Warning),
    });
    let source = if configured.is_some() { format!("`{path_key}` names") } else { "climpt reads".to_string() };
    let consequence = match graded {
        Graded::All(Severity::Error) => "the agent fails at start (PR-SYSTEM-002)".to_string(),
        _ => {
            let fatal = release::facts_of(&agent.target).filter(|f| f.system_prompt_required).count();
            match fatal {
                0 => format!("{} sends its embedded generic system prompt instead", agent.target.releases.named()),
                _ => "the agent fails at start from climpt 1.13.23 on (PR-SYSTEM-002), and earlier releases send their embedded generic system prompt instead".to_string(),
            }
        }
    };
    let level = match graded {
        Graded::All(level) => level,
        _ => Severity::Warning,
    };
    out.push(
        Diagnostic::new(
            PR_SYSTEM_002,
            agent.registry.id(),
            agent.registry.anchor(),
            format!("the system prompt is missing: {source} `{relative}`, which does not exist; {consequence}"),
        )
        .with_severity(level)
        .with_help(format!("create `{}` with the agent's role and rules", shown(agent, &path))),
    );
}

fn check_step_prompt(agent: &Agent, step: &Step, live: &Live, out: &mut Vec<Diagnostic>) {
    // A closure step with a `runner` spawns a subprocess instead of prompting the model.
    if step.get("runner").is_some() {
        return;
    }
    let filled = |key: &str| step.str_field(key).is_some_and(|v| !v.is_empty());
    if !filled("c2") || !filled("c3") {
        return;
    }
    let handler = agent.layout.handler();
    let candidates = agent.step_prompt_paths(step);
    let Some(found) = candidates.iter().find(|p| agent.workspace.exists(p)) else {
        if let Some(mut d) = graded_missing(agent, step, &candidates) {
            let reached = reach(live, step);
            if let Some(note) = reached.note() {
                d.message.push_str(&format!(" ({note})"));
                let graded = reached.grade(d.severity);
                d = d.with_severity(graded);
            }
            out.push(d);
        }
        return;
    };
    let grade = prompt_grade(&agent.target, step.kind());
    // A path breakdown rejects never loads: the file is never sent (C3lPatternMismatch or
    // SR-VALID-004 says why).
    let rejected = pattern_rejects(agent, step.def)
        || step.str_field("c3").is_some_and(|c3| !super::structure::is_c3(c3))
        || no_app_config(agent);
    if let Some(prompt) = agent.workspace.file_at(found) {
        let mut found_out = Vec::new();
        check_prompt_text(agent, step, prompt, live, &mut found_out);
        for d in found_out {
            let mut d = grade_prompt_finding(agent, &grade, d, handler);
            if rejected {
                d.message.push_str(
                    " (breakdown cannot load this step's prompt, so climpt never sends this file: its c2/c3 or its breakdown config is the defect to fix first)",
                );
                d = d.with_severity(Severity::Info);
            }
            out.push(d);
        }
    }
    // A closure action's variant goes instead of the prompt the step names itself: that one is
    // checked too, as what this agent does not send.
    if let Adaptation::ClosureAction(action) = agent.adaptation(step)
        && let Some(own) = agent.prompt_candidates(step.def).iter().find_map(|p| agent.workspace.file_at(p))
        && own.path != *found
    {
        let mut own_out = Vec::new();
        check_prompt_text(agent, step, own, live, &mut own_out);
        let sent = found.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for mut d in own_out {
            d.message.push_str(&format!(
                " (this agent sends `{sent}` instead: its `defaultClosureAction` is `{action}`, and climpt passes it as the closure prompt's adaptation)"
            ));
            out.push(d.with_severity(Severity::Info));
        }
    }
}

/// The checks of a prompt file's text against its step.
fn check_prompt_text(agent: &Agent, step: &Step, prompt: &SourceFile, live: &Live, out: &mut Vec<Diagnostic>) {
    let unsubstituted = check_unsubstituted(agent, step, prompt, live, out);
    check_template(agent, step, prompt, &unsubstituted, out);
    check_frontmatter(agent, step, prompt, out);
}

/// A finding in a step prompt, graded by what the releases the agent may run on do with it:
/// text that reaches the model counts wherever the prompt is sent; a failure to resolve weighs
/// less where climpt replaces the prompt silently.
fn grade_prompt_finding(agent: &Agent, grade: &PromptGrade, d: Diagnostic, handler: &str) -> Diagnostic {
    match d.code {
        PR_RESOLVE_005 => grade.apply(d, handler),
        // `--validate`'s frontmatter check: no runtime reads the frontmatter's lists, so it
        // counts only in the releases that have `--validate`.
        code if code == PromptFrontmatterMismatch => {
            let level = d.severity;
            match release::grade(&agent.target, |facts| facts.validate.then_some(level)) {
                Graded::All(_) => d,
                Graded::Some(releases) => {
                    let mut d = d.with_severity(Severity::Info);
                    d.message
                        .push_str(&format!(" (only `--validate` reads the frontmatter, which only {releases} have)"));
                    d
                }
                Graded::None => {
                    let mut d = d.with_severity(Severity::Info);
                    d.message.push_str(&format!(
                        " ({} never reads the frontmatter: only `--validate`, from climpt 1.12.5, checks it)",
                        agent.target.releases.named()
                    ));
                    d
                }
            }
        }
        _ => grade.apply_when_sent(d, handler),
    }
}

/// PR-C3L-004 for a step whose prompt file is missing, by release: a defect where the run
/// reads the prompt and has no embedded one of the step's `fallbackKey` to send instead.
fn graded_missing(agent: &Agent, step: &Step, candidates: &[PathBuf]) -> Option<Diagnostic> {
    let keyed = step.str_field("fallbackKey").is_some();
    let kind = step.kind();
    let graded = release::grade(&agent.target, |facts| match release::fate(facts, kind) {
        _ if facts.embedded && keyed => None,
        Fate::Fatal => Some(Severity::Error),
        Fate::Replaced => Some(Severity::Warning),
        Fate::Unread => None,
    });
    let d = missing_prompt(agent, step, candidates);
    let handler = agent.layout.handler();
    match graded {
        Graded::All(Severity::Error) => Some(d),
        Graded::All(level) => {
            let mut d = d.with_severity(level);
            d.message = format!(
                "step `{}` has no prompt file: `{}` does not exist; climpt sends the {handler}'s built-in prompt instead, silently",
                step.id,
                candidates.first().map(|p| shown(agent, p)).unwrap_or_default()
            );
            Some(d)
        }
        Graded::Some(releases) => {
            let mut d = d.with_severity(Severity::Info);
            d.message.push_str(&format!(
                " (a defect only in {releases}; the other releases this agent may run on do not read this prompt or send an embedded one)"
            ));
            Some(d)
        }
        // No release reads the prompt, or each sends the embedded prompt of the step's
        // `fallbackKey` (a bad key is FallbackKeyInvalid's finding).
        Graded::None => match prompt_grade(&agent.target, kind) {
            grade @ PromptGrade::Unread { .. } => Some(grade.apply(d, handler)),
            _ => None,
        },
    }
}

fn missing_prompt(agent: &Agent, step: &Step, candidates: &[PathBuf]) -> Diagnostic {
    let first = candidates.first().map(|p| shown(agent, p)).unwrap_or_default();
    let tried = candidates.iter().map(|p| format!("`{}`", shown(agent, p))).collect::<Vec<_>>().join(", ");
    let mut help = format!("tried {tried}");
    // Near misses: other prompts in the directory the step resolves to.
    if let Some(dir) = candidates.first().and_then(|p| p.parent()) {
        let siblings: Vec<String> = agent
            .prompts
            .iter()
            .filter(|f| f.path.parent() == Some(dir))
            .filter_map(|f| f.path.file_name().map(|n| format!("`{}`", n.to_string_lossy())))
            .collect();
        if !siblings.is_empty() {
            help.push_str(&format!("; that directory has {}", siblings.join(", ")));
        }
    }
    Diagnostic::new(
        PR_C3L_004,
        agent.registry.id(),
        step.key.span,
        format!(
            "step `{}` has no prompt file: `{first}` does not exist; climpt fails with PR-C3L-004 when the step runs",
            step.id
        ),
    )
    .with_help(help)
}

/// The span of a prompt's body (after the frontmatter, when it is closed).
fn body_span(text: &str) -> Span {
    match frontmatter::split(text) {
        Some(fm) if fm.close_fence.is_some() => fm.body,
        _ => Span::new(0, text.len()),
    }
}

fn check_template(
    agent: &Agent,
    step: &Step,
    prompt: &SourceFile,
    unsubstituted: &[String],
    out: &mut Vec<Diagnostic>,
) {
    let registry = agent.registry.id();
    let declared = step.uv_variables();
    let declared_names: Vec<&str> = declared.iter().map(|(n, _)| *n).collect();
    let declaration = uv_key(step);
    let placeholders = c3l::scan(&prompt.text, body_span(&prompt.text));
    let mut used = HashSet::new();
    let uses_stdin = matches!(step.get("usesStdin").map(|n| &n.value), Some(Value::Bool(true)));
    let mut reported_stdin = false;
    for placeholder in &placeholders {
        match placeholder.kind {
            C3lKind::Uv(name) => {
                used.insert(name);
                if declared_names.contains(&name) || uses(name, &RUNTIME_SUPPLIED_UV_VARS) {
                    continue;
                }
                let mut d = Diagnostic::new(
                    PR_RESOLVE_005,
                    prompt.id,
                    placeholder.span,
                    format!(
                        "`{{uv-{name}}}` is not declared in the `uvVariables` of step `{}`; climpt fails with PR-RESOLVE-005 when it resolves this prompt",
                        step.id
                    ),
                )
                .with_related(registry, declaration, format!("`{}` declares its UV variables here", step.id));
                d = match did_you_mean(name, declared_names.iter().copied()) {
                    Some(near) => {
                        d.with_help(format!("did you mean `{{uv-{near}}}`? Otherwise add `{name}` to `uvVariables`"))
                    }
                    None => d.with_help(format!("add `\"{name}\"` to the step's `uvVariables`")),
                };
                out.push(d);
            }
            C3lKind::InputText if !uses_stdin && !reported_stdin => {
                reported_stdin = true;
                let related = step.get("usesStdin").map_or(step.key.span, |n| n.span);
                out.push(
                    Diagnostic::new(
                        PR_RESOLVE_004,
                        prompt.id,
                        placeholder.span,
                        format!(
                            "`{{input_text}}` is filled from stdin only for steps with `usesStdin: true`, and step `{}` does not set it, so it is never filled",
                            step.id
                        ),
                    )
                    .with_related(registry, related, format!("set `\"usesStdin\": true` on `{}`", step.id)),
                );
            }
            _ => {}
        }
    }
    for (name, span) in &declared {
        // `{{name}}`/`{name}` instead of `{uv-name}`: one defect, UnsubstitutedPlaceholder's.
        if used.contains(name) || unsubstituted.iter().any(|u| u == name) {
            continue;
        }
        let mut d = Diagnostic::new(
            UnusedUvVariable,
            registry,
            *span,
            format!(
                "step `{}` declares `{name}`, but its prompt `{}` has no `{{uv-{name}}}`: climpt still requires a value for it at run time and sends the model none of it",
                step.id,
                shown(agent, &prompt.path)
            ),
        );
        // `{name}` or `{{name}}` in the body: the author meant the UV variable.
        let look_alike = placeholders.iter().find(|p| p.kind == C3lKind::Custom(name));
        match look_alike {
            Some(p) => {
                let text = prompt.text.as_bytes();
                let doubled = p.span.start > 0
                    && text.get(p.span.start - 1) == Some(&b'{')
                    && text.get(p.span.end) == Some(&b'}');
                let written = if doubled { format!("{{{{{name}}}}}") } else { format!("{{{name}}}") };
                let at = if doubled { Span::new(p.span.start - 1, p.span.end + 1) } else { p.span };
                d = d
                    .with_related(prompt.id, at, format!("`{written}` is not a UV placeholder"))
                    .with_help(format!("the prompt writes `{written}`, which climpt does not fill from `uvVariables`; write `{{uv-{name}}}`"));
            }
            None => {
                d = d.with_help(format!("use `{{uv-{name}}}` in the prompt, or remove `{name}` from `uvVariables`"))
            }
        }
        out.push(d);
    }
}

/// Placeholders breakdown fills itself (its standard variables), not climpt.
const BREAKDOWN_STANDARD_VARS: [&str; 2] = ["input_text_file", "destination_path"];

/// A `{{…}}` tag of a step prompt: its span and its trimmed inside.
fn handlebars_tags<'t>(text: &'t str, body: Span, code: &[Span]) -> Vec<(Span, &'t str)> {
    let mut out = Vec::new();
    let mut at = body.start;
    let end = body.end.min(text.len());
    while let Some(open) = text[at..end].find("{{").map(|i| at + i) {
        let line_end = text[open..end].find('\n').map_or(end, |i| open + i);
        let Some(close) = text[open + 2..line_end].find("}}").map(|i| open + 2 + i) else {
            at = open + 2;
            continue;
        };
        let span = Span::new(open, close + 2);
        let inner = text[open + 2..close].trim();
        if !inner.is_empty() && !code.iter().any(|c| c.start <= open && open < c.end) {
            out.push((span, inner));
        }
        at = close + 2;
    }
    out
}

/// The frontmatter's `customVariables` names.
fn frontmatter_custom(prompt: &SourceFile) -> Vec<String> {
    let Some(fm) = frontmatter::split(&prompt.text) else { return Vec::new() };
    if fm.close_fence.is_none() {
        return Vec::new();
    }
    let Some(root) = yaml::parse(&prompt.text[fm.yaml.start..fm.yaml.end]).root else { return Vec::new() };
    root.get("customVariables")
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|n| n.as_str().map(str::to_string))
        .collect()
}

/// UnsubstitutedPlaceholder: `{{x}}` and custom `{x}` in a step prompt. climpt resolves step
/// prompts with `PromptResolver`, which replaces `{uv-x}` and `{input_text}` only (custom keys
/// too, but no production caller passes any); breakdown leaves unknown names as they are. So
/// these reach the model verbatim. Retry prompts (`{{…}}` injector) are not step prompts, and
/// code in the markdown is an example. Returns the names reported, for UnusedUvVariable.
fn check_unsubstituted(
    agent: &Agent,
    step: &Step,
    prompt: &SourceFile,
    live: &Live,
    out: &mut Vec<Diagnostic>,
) -> Vec<String> {
    // A `section.*` step's prompt is never resolved, so nothing of it reaches the model.
    if step.is_section() {
        return Vec::new();
    }
    let text = &prompt.text;
    let body = body_span(text);
    let code = crate::template::markdown::code_regions(&text[body.start..body.end], body.start);
    let tags = handlebars_tags(text, body, &code);
    let declared: Vec<&str> = step.uv_variables().iter().map(|(n, _)| *n).collect();
    let custom_declared = frontmatter_custom(prompt);
    let reached = reach(live, step);
    let registry = agent.registry.id();
    let mut found: Vec<(Span, String, Option<&str>, bool)> = Vec::new();
    for (span, inner) in &tags {
        let variable = !inner.starts_with(['#', '/', '!', '>', '^', '&']) && *inner != "else" && !inner.contains(' ');
        found.push((*span, inner.to_string(), variable.then_some(*inner), true));
    }
    for p in c3l::scan(text, body) {
        let C3lKind::Custom(name) = p.kind else { continue };
        let inside_tag = tags.iter().any(|(t, _)| t.start <= p.span.start && p.span.end <= t.end);
        if inside_tag || code.iter().any(|c| c.start <= p.span.start && p.span.start < c.end) {
            continue;
        }
        if BREAKDOWN_STANDARD_VARS.contains(&name) {
            continue;
        }
        found.push((p.span, name.to_string(), Some(name), false));
    }
    found.sort_by_key(|(span, ..)| span.start);
    let mut reported = Vec::new();
    for (span, inner, variable, handlebars) in found {
        let written = &text[span.start..span.end];
        let why = if handlebars {
            "climpt's prompt resolver replaces only `{uv-…}` and `{input_text}` in step prompts (Handlebars `{{…}}` is filled only in retry prompts)"
        } else {
            "climpt's prompt resolver replaces only `{uv-…}` and `{input_text}` in step prompts, and no caller supplies custom variables"
        };
        let mut message = format!("`{written}` reaches the model verbatim: {why}");
        if !handlebars && custom_declared.contains(&inner) {
            message.push_str(&format!("; the frontmatter lists `{inner}` in `customVariables`, which nothing reads"));
        }
        let target = variable.and_then(|v| {
            let v = v.strip_prefix("uv.").unwrap_or(v);
            declared.iter().copied().find(|d| *d == v).or_else(|| did_you_mean(v, declared.iter().copied()))
        });
        if let Some(uv) = target {
            message.push_str(&format!(
                "; step `{}` declares `{uv}` in `uvVariables`, which the prompt never uses",
                step.id
            ));
        }
        let mut d = Diagnostic::new(UnsubstitutedPlaceholder, prompt.id, span, message);
        match &reached {
            Reach::Active => {}
            Reach::OtherMode(why) => d.message.push_str(&format!(" ({why}, and sends it in that mode)")),
            Reach::Never(why) => {
                d.message.push_str(&format!(" ({why}, so nothing is sent yet)"));
                d = d.with_severity(Severity::Info);
            }
        }
        d = match target {
            Some(uv) => d
                .with_related(registry, uv_key(step), format!("`{}` declares its UV variables here", step.id))
                .with_help(format!("did you mean `{{uv-{uv}}}`? climpt fills it from the step's `uvVariables`"))
                .with_fix(
                    format!("Replace with `{{uv-{uv}}}`"),
                    Applicability::Unsafe,
                    vec![Edit { span, replacement: format!("{{uv-{uv}}}") }],
                ),
            None if handlebars && variable.is_none() => d.with_help(
                "step prompts have no conditionals or loops: write the text plainly, or pass the value as a UV variable (`{uv-x}`) the step declares",
            ),
            None => d.with_help(format!(
                "pass the value as a UV variable: declare `{name}` in the step's `uvVariables` (an agent.json parameter, a runtime variable or a handoff input supplies it) and write `{{uv-{name}}}`",
                name = variable.unwrap_or("x").strip_prefix("uv.").unwrap_or(variable.unwrap_or("x"))
            )),
        };
        out.push(d);
        if let Some(v) = variable {
            reported.push(v.to_string());
        }
        if let Some(uv) = target {
            reported.push(uv.to_string());
        }
    }
    reported
}

/// The frontmatter's `uvVariables`: (name, span in the prompt) for a list or a comma string.
fn frontmatter_uv(prompt: &SourceFile) -> Option<(Span, Vec<(String, Span)>)> {
    let fm = frontmatter::split(&prompt.text)?;
    fm.close_fence?;
    let root = yaml::parse(&prompt.text[fm.yaml.start..fm.yaml.end]).root?;
    let entry: &Entry = root.entry("uvVariables")?;
    let shift = |s: Span| s.shift(fm.yaml.start);
    let items = match &entry.value.value {
        Value::Seq(items) => items
            .iter()
            .filter_map(|n| Some((n.as_str()?.trim().to_string(), shift(n.span))))
            .filter(|(n, _)| !n.is_empty())
            .collect(),
        Value::String(text) => text
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| (n.to_string(), shift(entry.value.span)))
            .collect(),
        _ => return None,
    };
    Some((shift(entry.key.span), items))
}

fn check_frontmatter(agent: &Agent, step: &Step, prompt: &SourceFile, out: &mut Vec<Diagnostic>) {
    let Some((key_span, listed)) = frontmatter_uv(prompt) else { return };
    let registry = agent.registry.id();
    let declared = step.uv_variables();
    let declaration = uv_key(step);
    for (name, span) in &listed {
        if declared.iter().any(|(d, _)| d == name) || uses(name, &RUNTIME_SUPPLIED_UV_VARS) {
            continue;
        }
        out.push(
            Diagnostic::new(
                PromptFrontmatterMismatch,
                prompt.id,
                *span,
                format!(
                    "the frontmatter lists `{name}`, but step `{}` does not declare it in `uvVariables`; the registry supplies only what it declares",
                    step.id
                ),
            )
            .with_related(registry, declaration, format!("`{}` declares its UV variables here", step.id))
            .with_help(format!("add `\"{name}\"` to the step's `uvVariables`, or remove it from the frontmatter")),
        );
    }
    for (name, span) in &declared {
        if listed.iter().any(|(l, _)| l == name) || uses(name, &RUNTIME_SUPPLIED_UV_VARS) {
            continue;
        }
        out.push(
            Diagnostic::new(
                PromptFrontmatterMismatch,
                prompt.id,
                key_span,
                format!(
                    "step `{}` declares `{name}` in `uvVariables`, but this prompt's frontmatter does not list it",
                    step.id
                ),
            )
            .with_severity(Severity::Warning)
            .with_related(registry, *span, format!("`{}` declares `{name}` here", step.id))
            .with_help(format!("add `{name}` to the frontmatter's `uvVariables`")),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Retry prompts of the completion loop
// ---------------------------------------------------------------------------------------------

fn string_node(text: &str) -> Node {
    Node::new(Span::empty(0), Value::String(text.into()))
}

/// A step-like definition holding only C3L coordinates, for `Agent::prompt_candidates`.
fn coordinates(fields: &[(&str, &str)]) -> Node {
    let entries = fields.iter().map(|(k, v)| Entry { key: string_node(k), value: string_node(v) }).collect();
    Node::new(Span::empty(0), Value::Map(entries))
}

fn check_retry_prompts(agent: &Agent, out: &mut Vec<Diagnostic>) {
    let registry = agent.registry;
    let validators = registry.get("validators");
    let patterns = registry.get(agent.retry.patterns());
    for vstep in registry.get(agent.retry.steps()).and_then(Node::as_map).unwrap_or_default() {
        let Some(key) = vstep.key_str() else { continue };
        // An entry the completion loop never reads has no retry prompt to send.
        let runs = super::validators::validation_step_runs(agent, key);
        if matches!(runs, Some(Graded::All(_))) {
            continue;
        }
        let field = |k: &str| vstep.value.get(k).and_then(Node::as_str).filter(|v| !v.is_empty());
        let (Some(c2), Some(c3)) = (field("c2"), field("c3")) else { continue };
        let mut seen = HashSet::new();
        for condition in vstep.value.get(agent.retry.conditions()).and_then(Node::as_seq).unwrap_or_default() {
            let Some(reference) = condition.get("validator") else { continue };
            let Some(validator) = reference.as_str() else { continue };
            let Some(pattern_name) =
                validators.and_then(|v| v.get(validator)).and_then(|v| v.get("failurePattern")).and_then(Node::as_str)
            else {
                continue;
            };
            let Some(pattern_entry) = patterns.and_then(|p| p.entry(pattern_name)) else { continue };
            let Some(edition) = pattern_entry.value.get("edition").and_then(Node::as_str) else { continue };
            if !seen.insert(pattern_name) {
                continue;
            }
            let mut fields = vec![("c2", c2), ("c3", c3), ("edition", edition)];
            if let Some(adaptation) = pattern_entry.value.get("adaptation").and_then(Node::as_str) {
                fields.push(("adaptation", adaptation));
            }
            let mut candidates = agent.prompt_candidates(&coordinates(&fields));
            for fallback in agent.prompt_candidates(&coordinates(&[("c2", c2), ("c3", c3), ("edition", "failed")])) {
                if !candidates.contains(&fallback) {
                    candidates.push(fallback);
                }
            }
            if candidates.iter().any(|p| agent.workspace.exists(p)) {
                continue;
            }
            let tried = candidates.iter().map(|p| format!("`{}`", shown(agent, p))).collect::<Vec<_>>().join(", ");
            let (severity, only) = match &runs {
                Some(Graded::Some(releases)) => (
                    Severity::Info,
                    format!(
                        " (this entry runs only in {releases}; the other releases this agent may run on never read it)"
                    ),
                ),
                _ => (Severity::Warning, String::new()),
            };
            let noun = if agent.retry == release::Retry::Validation { "validation step" } else { "completion step" };
            out.push(
                Diagnostic::new(
                    PR_C3L_004,
                    registry.id(),
                    reference.span,
                    format!(
                        "{noun} `{key}` has no retry prompt for failure pattern `{pattern_name}` of validator `{validator}`; when the check fails, climpt sends its generic retry message instead{only}"
                    ),
                )
                .with_severity(severity)
                .with_related(registry.id(), pattern_entry.key.span, format!("failure pattern `{pattern_name}`"))
                .with_help(format!("tried {tried}")),
            );
        }
    }
}
