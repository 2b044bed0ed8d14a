//! Last Light's file conventions, which discovery follows: what marks a cron, which prompt
//! and skill files a workflow names, and where they resolve.

use std::path::{Path, PathBuf};

use crate::source::Node;
use crate::workspace::discover::normalize;

/// A string in the YAML that names a file or skill.
#[derive(Clone, Copy, Debug)]
pub struct Ref<'a> {
    pub text: &'a str,
    pub node: &'a Node,
    /// Index of the phase that holds it.
    pub phase: usize,
    /// The key it is written under (`prompt`, `fix_prompt`, `re_review_prompt`, `skill`, `skills`).
    pub key: &'static str,
}

/// Why a prompt path cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathProblem {
    Empty,
    Absolute,
    Escapes,
}

pub fn is_cron(root: &Node) -> bool {
    root.get("kind").and_then(Node::as_str) == Some("cron")
}

/// The mapping items of `phases:`, with their index in the list.
pub fn phase_nodes(root: &Node) -> impl Iterator<Item = (usize, &Node)> {
    root.get("phases")
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .enumerate()
        .filter(|(_, n)| n.as_map().is_some())
}

/// The prompt paths a workflow names: `prompt`, `fix_prompt`, `re_review_prompt`.
pub fn prompt_references(root: &Node) -> Vec<Ref<'_>> {
    let mut out = Vec::new();
    if is_cron(root) {
        return out;
    }
    for (index, phase) in phase_nodes(root) {
        let fix = phase.get("loop").and_then(|l| l.get("on_request_changes"));
        let candidates = [
            ("prompt", phase.get("prompt")),
            ("fix_prompt", fix.and_then(|f| f.get("fix_prompt"))),
            ("re_review_prompt", fix.and_then(|f| f.get("re_review_prompt"))),
        ];
        for (key, node) in candidates {
            if let Some(node) = node
                && let Some(text) = node.as_str()
            {
                out.push(Ref { text, node, phase: index, key });
            }
        }
    }
    out
}

/// The skill names a workflow's phases name (`skill`, `skills`).
pub fn skill_references(root: &Node) -> Vec<Ref<'_>> {
    let mut out = Vec::new();
    if is_cron(root) {
        return out;
    }
    for (index, phase) in phase_nodes(root) {
        if let Some(node) = phase.get("skill")
            && let Some(text) = node.as_str()
        {
            out.push(Ref { text, node, phase: index, key: "skill" });
        }
        for node in phase.get("skills").and_then(Node::as_seq).unwrap_or_default() {
            if let Some(text) = node.as_str() {
                out.push(Ref { text, node, phase: index, key: "skills" });
            }
        }
    }
    out
}

/// The directory prompt paths resolve against: the workflow loader's directory, which is the
/// nearest ancestor named `workflows` (so `workflows/examples/x.yaml` reads `prompts/a.md` from
/// `workflows/prompts/`), else the file's own directory.
pub fn prompt_base(workflow: &Path) -> &Path {
    let dir = workflow.parent().unwrap_or(Path::new("/"));
    dir.ancestors().find(|a| a.file_name().is_some_and(|n| n == "workflows")).unwrap_or(dir)
}

/// The directory below `workflows/` holding a workflow the server never loads: its loader lists
/// only the files directly in `workflows/` (`readdirSync`, not recursive, at every release), so
/// `workflows/examples/x.yaml` is an example to copy, never a workflow that runs.
pub fn unloaded_subdirectory(workflow: &Path) -> Option<&Path> {
    let parent = workflow.parent()?;
    let below = parent.ancestors().skip(1).any(|a| a.file_name().is_some_and(|n| n == "workflows"));
    (below && parent.file_name().is_some_and(|n| n != "workflows")).then_some(parent)
}

/// Where a prompt path points, or why the engine refuses it.
pub fn resolve_prompt(dir: &Path, text: &str) -> Result<PathBuf, PathProblem> {
    if text.trim().is_empty() {
        return Err(PathProblem::Empty);
    }
    if Path::new(text).is_absolute() || text.starts_with('/') || text.starts_with('\\') {
        return Err(PathProblem::Absolute);
    }
    let path = normalize(&dir.join(text));
    if !path.starts_with(dir) {
        return Err(PathProblem::Escapes);
    }
    Ok(path)
}

/// Skill names the engine accepts.
pub fn is_valid_skill_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Where the skill `name` may live, in lookup order: `skills/<name>/SKILL.md`, then
/// `.claude/skills/` and `.agents/skills/`, in the workflow directory's ancestors, nearest first.
/// Made one at a time: the first that exists is the one used, and it is usually near.
pub fn skill_candidates<'a>(dir: &'a Path, name: &'a str) -> impl Iterator<Item = PathBuf> + 'a {
    let valid = is_valid_skill_name(name);
    dir.ancestors()
        .filter(move |_| valid)
        .flat_map(|ancestor| ["skills", ".claude/skills", ".agents/skills"].map(|base| (ancestor, base)))
        .map(move |(ancestor, base)| ancestor.join(base).join(name).join("SKILL.md"))
}

/// The directory whose workflows may name the skill at `skill` (`<dir>/skills/<name>/SKILL.md`,
/// or under `<dir>/.claude/` or `<dir>/.agents/`): a workflow finds skills in its own
/// directory's ancestors, so every workflow under `<dir>` may.
pub fn skill_scope(skill: &Path) -> Option<&Path> {
    let skills = skill.parent()?.parent()?;
    let above = skills.parent()?;
    match above.file_name().and_then(|n| n.to_str()) {
        Some(".claude" | ".agents") => above.parent(),
        _ => Some(above),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skill_is_in_scope_of_the_workflows_below_its_base() {
        assert_eq!(skill_scope(Path::new("/r/skills/plan/SKILL.md")), Some(Path::new("/r")));
        assert_eq!(skill_scope(Path::new("/r/.claude/skills/plan/SKILL.md")), Some(Path::new("/r")));
        assert_eq!(skill_scope(Path::new("/r/a/.agents/skills/plan/SKILL.md")), Some(Path::new("/r/a")));
    }

    #[test]
    fn plain_paths_resolve_as_normalized_ones_do() {
        let dir = Path::new("/repo/workflows");
        for text in ["prompts/a.md", "./prompts/a.md", "prompts//a.md", "prompts/x/../a.md", "a.md/", "p/./a.md"] {
            let slow = normalize(&dir.join(text));
            assert_eq!(resolve_prompt(dir, text), Ok(slow), "{text}");
        }
        assert_eq!(resolve_prompt(dir, "../secrets.md"), Err(PathProblem::Escapes));
        assert_eq!(resolve_prompt(dir, "/etc/passwd"), Err(PathProblem::Absolute));
    }
}
