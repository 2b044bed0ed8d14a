//! `SKILL.md` files (the Agent Skills format): the frontmatter the tool that loads the skill
//! reads. Claude Code (`.claude/skills/`, plugins) keeps a skill whose frontmatter it cannot
//! read and drops the fields; the agent loaders Last Light runs (pi) skip such a skill.

use std::path::{Component, Path};

use crate::config::ReleaseSource;
use crate::diagnostic::{Diagnostic, Severity};
use crate::families::stagelint::SkillFrontmatter;
use crate::registry::releases::lastlight::{self as releases, Has};
use crate::source::{Node, Span, Value, frontmatter, yaml};
use crate::workspace::{SourceFile, is_skill_name};

/// Which tool loads a skill, from where it lives.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Loader {
    /// `.claude/skills/<name>/SKILL.md`, or a Claude Code plugin's `plugins/<p>/skills/`.
    ClaudeCode,
    /// Any other `skills/<name>/SKILL.md`: an agent harness's skill loader.
    Agent,
}

fn loader(path: &Path) -> Loader {
    let names: Vec<&std::ffi::OsStr> =
        path.components().filter_map(|c| if let Component::Normal(n) = c { Some(n) } else { None }).collect();
    let claude =
        names.iter().any(|n| *n == ".claude") || names.windows(3).any(|w| w[0] == "plugins" && w[2] == "skills");
    if claude { Loader::ClaudeCode } else { Loader::Agent }
}

/// A SKILL.md's frontmatter, judged by what its loader does with it. Last Light before the seed
/// put a skill phase's whole SKILL.md into the prompt and read no frontmatter: its skills are
/// not judged by the agent loaders of later releases (at most an info, when the repository may
/// be at either).
pub(super) fn check_skill(file: &SourceFile, out: &mut Vec<Diagnostic>) {
    let loader = loader(&file.path);
    let lastlight = &file.config.lastlight;
    let read_by_agent_loader = match lastlight.release_source {
        ReleaseSource::Default => Has::Yes,
        _ => lastlight.release.has(releases::SEED),
    };
    if loader == Loader::ClaudeCode || read_by_agent_loader == Has::Yes {
        return frontmatter_findings(file, loader, out);
    }
    if read_by_agent_loader == Has::No {
        return;
    }
    let mut found = Vec::new();
    frontmatter_findings(file, loader, &mut found);
    let before = lastlight.release.before(releases::SEED);
    out.extend(found.into_iter().map(|mut d| {
        d.severity = d.severity.min(Severity::Info);
        d.message.push_str(&format!(
            " (from Last Light's seed on; at {before}, which this repository may be at, the whole SKILL.md goes into the prompt and nothing reads the frontmatter)"
        ));
        d
    }));
}

fn frontmatter_findings(file: &SourceFile, loader: Loader, out: &mut Vec<Diagnostic>) {
    let id = file.id;
    let text = &file.text;
    let first_line = Span::new(0, text.find('\n').unwrap_or(text.len()));
    let Some(fm) = frontmatter::split(text).filter(|fm| fm.close_fence.is_some()) else {
        let d = match loader {
            Loader::Agent => Diagnostic::new(
                SkillFrontmatter,
                id,
                first_line,
                "this SKILL.md has no `---` frontmatter; the skill loader skips it",
            ),
            Loader::ClaudeCode => Diagnostic::new(
                SkillFrontmatter,
                id,
                first_line,
                "this SKILL.md has no `---` frontmatter: Claude Code names the skill after its directory and describes it by its first paragraph",
            )
            .with_severity(Severity::Info),
        };
        out.push(d.with_help("start the file with `---`, `name: <name>`, `description: <when to use it>`, `---`"));
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
                    "the frontmatter is not valid YAML ({}); {}",
                    error.message.trim_start_matches("invalid YAML: "),
                    match loader {
                        Loader::Agent => "the skill loader skips the skill",
                        Loader::ClaudeCode => "Claude Code loads the skill but drops every frontmatter field: its `description` becomes the first paragraph, and `allowed-tools` and the rest are lost",
                    }
                ),
            )
            .with_help("quote a value that holds `: ` or ` #`, or starts with a YAML indicator: `description: \"…\"`"),
            None => Diagnostic::new(
                SkillFrontmatter,
                id,
                fm.open_fence,
                match loader {
                    Loader::Agent => "the frontmatter is not a YAML mapping; the skill loader skips it",
                    Loader::ClaudeCode => "the frontmatter is not a YAML mapping; Claude Code loads the skill without its fields",
                },
            ),
        };
        out.push(d);
        return;
    };
    let shifted = |node: &Node| node.span.shift(fm.yaml.start);
    model_invocation(file, &root, fm.yaml.start, out);
    if loader == Loader::ClaudeCode {
        claude_code_fields(file, &root, fm.yaml.start, out);
        return;
    }
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
}

/// Claude Code's fields: `name` and `description` are optional (the directory name and the
/// first paragraph stand in), so only values it cannot use are findings.
fn claude_code_fields(file: &SourceFile, root: &Node, offset: usize, out: &mut Vec<Diagnostic>) {
    let shifted = |node: &Node| node.span.shift(offset);
    for key in ["name", "description"] {
        if let Some(node) = root.get(key)
            && node.as_str().is_none()
        {
            out.push(Diagnostic::new(
                SkillFrontmatter,
                file.id,
                shifted(node),
                format!("`{key}` must be a string; Claude Code ignores a `{key}` of another type"),
            ));
        }
    }
}

/// `disable-model-invocation`, which every loader reads as a boolean.
fn model_invocation(file: &SourceFile, root: &Node, offset: usize, out: &mut Vec<Diagnostic>) {
    if let Some(node) = root.get("disable-model-invocation")
        && !matches!(node.value, Value::Bool(_))
    {
        out.push(Diagnostic::new(
            SkillFrontmatter,
            file.id,
            node.span.shift(offset),
            "`disable-model-invocation` must be `true` or `false`",
        ));
    }
}
