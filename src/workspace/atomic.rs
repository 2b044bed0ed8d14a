//! Which TypeScript files are @bastani/atomic workflows, which SDK module they import their
//! authoring API from (the first hint of their dialect), and the names their place gives them:
//! v0.5's `<base>/<name>/<agent>/index.ts` (upstream `runtime/discovery.ts`) and 0.8's flat
//! `.atomic/workflows/<name>.ts` (`extension/discovery.ts`). Package workflows, which a
//! `package.json` names, are the family's business (`families::atomic::project`).

use std::path::Path;

/// The agents a workflow directory can be named after.
pub const AGENTS: [&str; 3] = ["claude", "copilot", "opencode"];

/// The module the workflow API of v0.5 (and 0.6) is imported from.
pub const SDK_MODULE: &str = "@bastani/atomic/workflows";

/// The SDK module a workflow imports its authoring API from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Module {
    /// `@bastani/atomic/workflows`: v0.5 and 0.6.
    AtomicWorkflows,
    /// `@bastani/atomic-sdk` (or a subpath): 0.7.
    AtomicSdk,
    /// `@bastani/workflows`: 0.8's builder and 0.9's `workflow({...})`.
    Workflows,
    /// A relative path to the SDK's own authoring module: atomic's builtins ([`is_own_authoring`]).
    OwnAuthoring,
}

/// The SDK module `text` imports a value from, read from its `from "…"` clauses (also of an
/// import split over lines); a clause in a comment line (` * import …`) does not count.
pub fn sdk_module(text: &str) -> Option<Module> {
    // Cheap first: most TypeScript names none of them.
    if !text.contains("@bastani/") && !text.contains("authoring/workflow") && !text.contains("define-workflow") {
        return None;
    }
    let mut in_type_import = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("import type ") || trimmed.starts_with("export type ") {
            in_type_import = !trimmed.contains(" from ");
            continue;
        }
        if trimmed.starts_with('*') || trimmed.starts_with("//") || trimmed.starts_with("/*") {
            continue;
        }
        let Some(at) = trimmed.find("from ") else { continue };
        let was_type = std::mem::replace(&mut in_type_import, false);
        let before = &trimmed[..at];
        // `from` closes an import (`import … from`, `} from`) or is an export's source.
        if was_type
            || !(before.is_empty()
                || before.starts_with("import ")
                || before.starts_with('}')
                || before.starts_with("export "))
        {
            continue;
        }
        let quoted = trimmed[at + 5..].trim_start();
        let Some(quote) = quoted.chars().next().filter(|c| *c == '"' || *c == '\'') else { continue };
        let Some(module) = quoted[1..].split(quote).next() else { continue };
        match module {
            // From 0.9 the `@bastani/atomic` package also exports the `@bastani/workflows` API
            // at this subpath: `workflow` (not `defineWorkflow`) imported from it is 0.9 code.
            "@bastani/atomic/workflows" if !text.contains("defineWorkflow") && calls_workflow(text) => {
                return Some(Module::Workflows);
            }
            "@bastani/atomic/workflows" => return Some(Module::AtomicWorkflows),
            "@bastani/workflows" => return Some(Module::Workflows),
            m if m == "@bastani/atomic-sdk" || m.starts_with("@bastani/atomic-sdk/") => return Some(Module::AtomicSdk),
            m if is_own_authoring(m) => return Some(Module::OwnAuthoring),
            _ => {}
        }
    }
    None
}

/// Whether `text` calls a function named `workflow` (not `defineWorkflow`, `ctx.workflow`).
fn calls_workflow(text: &str) -> bool {
    text.match_indices("workflow(").any(|(at, _)| {
        let before = text[..at].chars().next_back();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '.')
    })
}

/// Whether `module` is a relative path to the SDK's own authoring module, as atomic's builtins
/// import it: `../src/authoring/workflow.js` (0.9) or `../src/workflows/define-workflow.js` (0.8).
/// The path goes into `src/`: the SDK's own sources reach the module from inside it
/// (`../../workflows/define-workflow.js`) and are no workflows.
pub fn is_own_authoring(module: &str) -> bool {
    let stem = module.strip_suffix(".js").or_else(|| module.strip_suffix(".ts")).unwrap_or(module);
    module.starts_with('.')
        && (stem.ends_with("/src/authoring/workflow") || stem.ends_with("/src/workflows/define-workflow"))
}

/// `<name>` of a top-level `<base>/<name>.ts` in a `.atomic/workflows` directory: 0.8 and
/// later import every such file as a workflow module; `None` elsewhere (a subdirectory of the
/// base holds support modules).
pub fn flat(path: &Path) -> Option<&str> {
    let name = path.file_name()?.to_str()?.strip_suffix(".ts")?;
    let base = path.parent()?;
    let local = base.file_name()? == "workflows" && base.parent()?.file_name()? == ".atomic";
    (local && !name.is_empty() && !name.starts_with('.') && !name.ends_with(".d")).then_some(name)
}

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

/// The project's workflow extension config, whose `workflows.<name>.path` entries (relative to
/// the project) register workflow files and directories besides `.atomic/workflows/`.
pub const WORKFLOW_CONFIGS: [&str; 1] = [".atomic/extensions/workflow/config.json"];

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

/// The provider whose CLI reads an agent file, by its directory: `.claude/agents/` Claude Code,
/// `.github/agents/` Copilot CLI, `.opencode/agents/` OpenCode; `None` for a skill
/// (`.agents/skills/`), which is not tied to one.
pub fn agent_provider(path: &Path) -> Option<&'static str> {
    let dir = path.parent()?;
    [(".claude/agents", "claude"), (".github/agents", "copilot"), (".opencode/agents", "opencode")]
        .into_iter()
        .find(|(d, _)| dir.ends_with(d))
        .map(|(_, provider)| provider)
}

/// Whether a `.ts` file is an atomic workflow: on a discovery layout (v0.5's
/// `<name>/<agent>/index.ts`, 0.8's flat `.atomic/workflows/<name>.ts`), or anywhere when it
/// imports an SDK module and defines a workflow there (a textual check; the parse decides the
/// rest): an exported `defineWorkflow`/`workflow` call, or 0.7's `hostLocalWorkflows([...])`.
/// Helpers (`helpers/*.ts` of v0.5, modules that only import types), declaration files and
/// tests are never claimed.
pub fn is_workflow(path: &Path, text: &str) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
    if !name.ends_with(".ts") || name.ends_with(".d.ts") || name.ends_with(".test.ts") {
        return false;
    }
    if layout(path).is_some() || flat(path).is_some() {
        return true;
    }
    if path.parent().and_then(Path::file_name).is_some_and(|d| d == "helpers") {
        return false;
    }
    let exported =
        || text.lines().any(|line| line.starts_with("export default") && !line.starts_with("export default function"));
    match sdk_module(text) {
        Some(Module::AtomicWorkflows) => imports(text, SDK_MODULE) && exported() && text.contains("defineWorkflow"),
        // 0.7 registers a workflow with `hostLocalWorkflows([...])` or exports it for a worker;
        // one that does neither is still a workflow, and `atomic/MissingDefaultExport` says so.
        Some(Module::AtomicSdk) => text.contains("defineWorkflow("),
        Some(Module::Workflows | Module::OwnAuthoring) => {
            let defines = text.contains("workflow(") || text.contains("defineWorkflow(");
            defines && text.lines().any(|line| line.starts_with("export "))
        }
        None => false,
    }
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
        assert_eq!(agent_provider(Path::new("/p/.github/agents/x.agent.md")), Some("copilot"));
        assert_eq!(agent_provider(Path::new("/p/.agents/skills/s/SKILL.md")), None);
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
        // The dialect is judged by the family, not by where the file is.
        assert!(is_workflow(Path::new("x/.atomic/workflows/a/claude/index.ts"), head));
        assert!(is_workflow(Path::new("x/.atomic/workflows/review.ts"), ""));
        assert!(is_workflow(Path::new("x/src/flows/review.ts"), head));
        assert!(is_workflow(Path::new("x/.atomic/workflows/lib/child.ts"), head));
        let types = "import type { WorkflowCustomUiFactory } from \"@bastani/workflows\";\nexport const f = 1;";
        assert!(!is_workflow(Path::new("x/.atomic/workflows/lib/table.ts"), types));
        assert!(!is_workflow(Path::new("x/.atomic/workflows/review.d.ts"), head));
        let host = "import { defineWorkflow, hostLocalWorkflows } from \"@bastani/atomic-sdk\";\nconst wf = defineWorkflow({ name: \"x\" });\nawait hostLocalWorkflows([wf]);";
        assert!(is_workflow(Path::new("x/.atomic/workflows/x/index.ts"), host));
        let own = "import { Type } from \"typebox\";\nimport { workflow } from \"../src/authoring/workflow.js\";\nexport default workflow({});";
        assert!(is_workflow(Path::new("x/packages/workflows/builtin/goal.ts"), own));
        let own_08 = "import { defineWorkflow } from \"../src/workflows/define-workflow.js\";\nexport default defineWorkflow(\"goal\");";
        assert!(is_workflow(Path::new("x/packages/workflows/builtin/goal.ts"), own_08));
        // The SDK's own sources reach the module from inside `src/` (0.8.27's executor builds a
        // definition there); they are no workflows.
        let inside = "import { stampWorkflowDefinition } from \"../../workflows/define-workflow.js\";\nexport function run() { return ctx.workflow(child); }";
        assert!(!is_workflow(Path::new("x/packages/workflows/src/runs/foreground/executor.ts"), inside));
    }

    #[test]
    fn sdk_modules_from_import_clauses() {
        assert_eq!(sdk_module("import {\n  workflow,\n} from \"@bastani/workflows\";"), Some(Module::Workflows));
        assert_eq!(
            sdk_module("import { defineWorkflow } from '@bastani/atomic-sdk/workflows';"),
            Some(Module::AtomicSdk)
        );
        assert_eq!(
            sdk_module("import { defineWorkflow } from \"@bastani/atomic/workflows\";"),
            Some(Module::AtomicWorkflows)
        );
        assert_eq!(sdk_module(" * import { workflow } from \"@bastani/workflows\";"), None);
        let reexported = "import { workflow } from \"@bastani/atomic/workflows\";\nexport default workflow({});";
        assert_eq!(sdk_module(reexported), Some(Module::Workflows));
        assert_eq!(sdk_module("import type { Static } from \"@bastani/workflows\";"), None);
        assert_eq!(sdk_module("import type {\n  Static,\n} from \"@bastani/workflows\";"), None);
        assert_eq!(sdk_module("const s = \"@bastani/workflows\";"), None);
        assert_eq!(flat(Path::new("p/.atomic/workflows/review.ts")), Some("review"));
        assert_eq!(flat(Path::new("p/.atomic/workflows/lib/review.ts")), None);
        assert_eq!(flat(Path::new("p/workflows/review.ts")), None);
    }
}
