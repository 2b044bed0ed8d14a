//! Which TypeScript files are @bastani/atomic workflows, and the agent and name their directory
//! gives them (upstream `runtime/discovery.ts`: `<base>/<name>/<agent>/index.ts`).

use std::path::Path;

/// The agents a workflow directory can be named after.
pub const AGENTS: [&str; 3] = ["claude", "copilot", "opencode"];

/// The module the workflow API of this dialect is imported from.
pub const SDK_MODULE: &str = "@bastani/atomic/workflows";

/// `<name>` and `<agent>` of `<base>/<name>/<agent>/index.ts`, where `<base>` is a
/// `.atomic/workflows` directory or a `workflows/builtin` directory; `None` off that layout.
pub fn layout(path: &Path) -> Option<(&str, &str)> {
    let parts: Vec<&str> = path.iter().rev().take(5).map(|p| p.to_str().unwrap_or("")).collect();
    let [file, agent, name, base, parent] = parts.as_slice() else { return None };
    let base_ok = (*base == "workflows" && *parent == ".atomic") || (*base == "builtin" && *parent == "workflows");
    (*file == "index.ts" && AGENTS.contains(agent) && base_ok).then_some((*name, *agent))
}

/// The workflows base directory holding `path` (the nearest `.atomic/workflows` or
/// `workflows/builtin` above it), and whether it is the SDK's `builtin` one.
pub fn base(path: &Path) -> Option<(&Path, bool)> {
    path.ancestors().skip(1).find_map(|dir| {
        let name = dir.file_name()?;
        let parent = dir.parent()?.file_name()?;
        if name == "workflows" && parent == ".atomic" {
            Some((dir, false))
        } else if name == "builtin" && parent == "workflows" {
            Some((dir, true))
        } else {
            None
        }
    })
}

/// The project a workflow under `<root>/.atomic/workflows/` belongs to: `<root>`, where atomic
/// runs and looks for agent files. `None` elsewhere (discovery then takes the nearest
/// directory holding `package.json` or `.git`).
pub fn project_root(path: &Path) -> Option<&Path> {
    let (base, builtin) = base(path)?;
    (!builtin).then(|| base.parent()?.parent()).flatten()
}

/// The agent files atomic's agents are found in, under a project root: `(directory, whether
/// each agent is a directory holding SKILL.md)`.
pub const AGENT_DIRS: [(&str, bool); 4] =
    [(".claude/agents", false), (".agents/skills", true), (".github/agents", false), (".opencode/agents", false)];

/// The agent a file under a project root defines, by its path: `<root>/.claude/agents/<x>.md`
/// (also `.github/agents/<x>.agent.md`, `.opencode/agents/<x>.md`) or
/// `<root>/.agents/skills/<x>/SKILL.md`, with `<root>`.
pub fn agent_file(path: &Path) -> Option<(&Path, &str)> {
    let name = path.file_name()?.to_str()?;
    let dir = path.parent()?;
    if name == "SKILL.md" {
        let skills = dir.parent()?;
        let root = skills.parent()?.parent()?;
        let is_skills = skills.ends_with(".agents/skills");
        return is_skills.then_some((root, dir.file_name()?.to_str()?));
    }
    let stem = name.strip_suffix(".md")?;
    let stem = stem.strip_suffix(".agent").unwrap_or(stem);
    let root = dir.parent()?.parent()?;
    let known = AGENT_DIRS.iter().any(|(d, skills)| !skills && dir.ends_with(d));
    (known && !stem.is_empty()).then_some((root, stem))
}

/// Whether a `.ts` file is an atomic workflow: on the discovery layout, or anywhere when it
/// imports the SDK module and has an `export default` of a `defineWorkflow` chain (a textual
/// check; the parse decides the rest). Files of the later `@bastani/workflows` dialect, helpers
/// and declaration files are never claimed.
pub fn is_workflow(path: &Path, text: &str) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
    if !name.ends_with(".ts") || name.ends_with(".d.ts") || name.ends_with(".test.ts") {
        return false;
    }
    if imports(text, "@bastani/workflows") {
        return false;
    }
    if layout(path).is_some() {
        return true;
    }
    if path.parent().and_then(Path::file_name).is_some_and(|d| d == "helpers") {
        return false;
    }
    imports(text, SDK_MODULE)
        && text.lines().any(|line| line.starts_with("export default") && !line.starts_with("export default function"))
        && text.contains("defineWorkflow")
}

/// Whether a line of `text` starting with `import` names `module` quoted (so a JSDoc example
/// of an import, ` * import …`, is not one).
fn imports(text: &str, module: &str) -> bool {
    let (double, single) = (format!("\"{module}\""), format!("'{module}'"));
    text.lines().any(|line| line.starts_with("import ") && (line.contains(&double) || line.contains(&single)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_gives_name_and_agent() {
        assert_eq!(layout(Path::new("p/.atomic/workflows/hello/claude/index.ts")), Some(("hello", "claude")));
        assert_eq!(layout(Path::new("src/sdk/workflows/builtin/ralph/copilot/index.ts")), Some(("ralph", "copilot")));
        assert_eq!(layout(Path::new("p/.atomic/workflows/hello/codex/index.ts")), None);
        assert_eq!(layout(Path::new("p/workflows/hello/claude/index.ts")), None);
        assert_eq!(layout(Path::new("p/.atomic/workflows/hello/helpers/index.ts")), None);
    }

    #[test]
    fn bases_projects_and_agent_files() {
        let local = Path::new("/p/.atomic/workflows/a/claude/index.ts");
        assert_eq!(base(local), Some((Path::new("/p/.atomic/workflows"), false)));
        assert_eq!(project_root(local), Some(Path::new("/p")));
        let builtin = Path::new("/s/src/sdk/workflows/builtin/ralph/claude/index.ts");
        assert_eq!(base(builtin), Some((Path::new("/s/src/sdk/workflows/builtin"), true)));
        assert_eq!(project_root(builtin), None);
        assert_eq!(base(Path::new("/p/flows/a.ts")), None);
        assert_eq!(agent_file(Path::new("/p/.claude/agents/planner.md")), Some((Path::new("/p"), "planner")));
        assert_eq!(agent_file(Path::new("/p/.github/agents/x.agent.md")), Some((Path::new("/p"), "x")));
        assert_eq!(agent_file(Path::new("/p/.agents/skills/s/SKILL.md")), Some((Path::new("/p"), "s")));
        assert_eq!(agent_file(Path::new("/p/docs/agents/x.md")), None);
        assert_eq!(agent_file(Path::new("/p/.claude/skills/s/SKILL.md")), None);
    }

    #[test]
    fn ownership_needs_the_layout_or_the_sdk_import() {
        let sdk = "import { defineWorkflow } from \"@bastani/atomic/workflows\";\nexport default defineWorkflow({});";
        assert!(is_workflow(Path::new("x/.atomic/workflows/a/claude/index.ts"), ""));
        assert!(is_workflow(Path::new("x/anywhere.ts"), sdk));
        assert!(!is_workflow(Path::new("x/helpers/a.ts"), sdk));
        assert!(!is_workflow(Path::new("x/types.d.ts"), sdk));
        assert!(!is_workflow(Path::new("x/other.ts"), "export default 1;"));
        let jsdoc = "/**\n * import { defineWorkflow } from \"@bastani/atomic/workflows\";\n * export default defineWorkflow({})\n */";
        assert!(!is_workflow(Path::new("x/define-workflow.ts"), jsdoc));
        let head = "import { workflow } from \"@bastani/workflows\";\nexport default workflow({});";
        assert!(!is_workflow(Path::new("x/.atomic/workflows/a/claude/index.ts"), head));
    }
}
