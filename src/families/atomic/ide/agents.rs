//! The agents a workflow can name (`--agent x`, `agent: "x"`): the agent files of the projects
//! around it, and the ones atomic installs.

use std::path::{Path, PathBuf};

use crate::workspace::Workspace;

/// The agents `atomic init` installs (`.claude/agents/`, `.github/agents/`, `.opencode/agents/`).
pub(super) const INSTALLED: &[&str] = &[
    "planner",
    "orchestrator",
    "reviewer",
    "debugger",
    "worker",
    "code-simplifier",
    "codebase-analyzer",
    "codebase-locator",
    "codebase-pattern-finder",
    "codebase-online-researcher",
    "codebase-research-analyzer",
    "codebase-research-locator",
];

/// An agent defined by a file discovery saw.
pub(super) struct AgentFile {
    pub name: String,
    pub path: PathBuf,
}

/// The agent files in the agent directories of the workflow's ancestors, nearest first:
/// `.claude/agents/<x>.md`, `.github/agents/<x>.md` (or `<x>.agent.md`), `.opencode/agents/<x>.md`
/// and the skills `.agents/skills/<x>/SKILL.md`.
pub(super) fn files(workspace: &Workspace, workflow: &Path) -> Vec<AgentFile> {
    let mut out: Vec<(usize, AgentFile)> = Vec::new();
    for path in workspace.paths() {
        let Some((root, name)) = agent_file(path) else { continue };
        let Some(distance) = workflow.ancestors().position(|dir| dir == root) else { continue };
        out.push((distance, AgentFile { name: name.to_string(), path: path.to_path_buf() }));
    }
    out.sort_by(|a, b| (a.0, &a.1.path).cmp(&(b.0, &b.1.path)));
    out.into_iter().map(|(_, file)| file).collect()
}

/// The project directory and agent name of an agent file, or `None`.
fn agent_file(path: &Path) -> Option<(&Path, &str)> {
    let name = path.file_name()?.to_str()?;
    let dir = path.parent()?;
    if name == "SKILL.md" {
        let skills = dir.parent()?;
        let dot_agents = skills.parent()?;
        let ok = skills.file_name()? == "skills" && dot_agents.file_name()? == ".agents";
        return ok.then_some((dot_agents.parent()?, dir.file_name()?.to_str()?));
    }
    let stem = name.strip_suffix(".md")?;
    let base = dir.parent()?;
    let ok = dir.file_name()? == "agents" && matches!(base.file_name()?.to_str()?, ".claude" | ".github" | ".opencode");
    let stem = match base.file_name()?.to_str()? {
        ".github" => stem.strip_suffix(".agent").unwrap_or(stem),
        _ => stem,
    };
    ok.then_some((base.parent()?, stem))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_files_by_their_directories() {
        let p = |s: &str| agent_file(Path::new(s)).map(|(root, name)| (root.to_path_buf(), name.to_string()));
        assert_eq!(p("/r/.claude/agents/planner.md"), Some((PathBuf::from("/r"), "planner".into())));
        assert_eq!(p("/r/.github/agents/x.agent.md"), Some((PathBuf::from("/r"), "x".into())));
        assert_eq!(p("/r/.agents/skills/tidy/SKILL.md"), Some((PathBuf::from("/r"), "tidy".into())));
        assert_eq!(p("/r/docs/agents/x.md"), None);
        assert_eq!(p("/r/.claude/agents/x.txt"), None);
    }
}
