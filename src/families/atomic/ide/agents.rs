//! The agents a workflow can name (`--agent x`, `agent: "x"`): the agent files of the projects
//! around it, and the ones atomic installs.

use std::path::{Path, PathBuf};

use crate::workspace::Workspace;

pub(super) use crate::families::atomic::project::INSTALLED;

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
        let Some((root, name)) = crate::workspace::atomic::agent_file(path) else { continue };
        let Some(distance) = workflow.ancestors().position(|dir| dir == root) else { continue };
        out.push((distance, AgentFile { name: name.to_string(), path: path.to_path_buf() }));
    }
    out.sort_by(|a, b| (a.0, &a.1.path).cmp(&(b.0, &b.1.path)));
    out.into_iter().map(|(_, file)| file).collect()
}
