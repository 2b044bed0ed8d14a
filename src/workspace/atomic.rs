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
