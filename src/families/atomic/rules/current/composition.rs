//! Workflow composition (`docs/workflows.md`, *Workflow Composition*, *Common Mistakes*;
//! `engine/primitives/workflow.ts`): `ctx.workflow(…)` takes an imported definition, never a
//! name, path or object; a workflow that runs itself is a cycle; calling a definition's `run`
//! by hand skips the tracked boundary.

use crate::diagnostic::Diagnostic;
use crate::families::atomic::model::current::{CallKind, Child, Current};
use crate::families::atomic::{ChildRunCalled, SelfComposition, WorkflowByName};
use crate::workspace::SourceFile;

pub(super) fn check(file: &SourceFile, current: &Current, out: &mut Vec<Diagnostic>) {
    let own_stem = file.path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    for call in current.calls.iter().filter(|c| c.kind == CallKind::Workflow) {
        match &call.child {
            Some(Child::Literal(at, what)) => out.push(
                Diagnostic::new(
                    WorkflowByName,
                    file.id,
                    *at,
                    format!("`ctx.workflow` is given {what}: it takes only a definition made by `workflow({{…}})`, never a registry name, path or alias, and throws \"ctx.workflow(definition) requires a workflow definition\""),
                )
                .with_help("import the child (`import research from \"./research.js\";` or from `@bastani/workflows/builtin`) and pass it: `ctx.workflow(research, { inputs })`"),
            ),
            Some(Child::Name(name, at)) => {
                let own = current.definitions.iter().find(|d| {
                    d.binding.as_deref() == Some(name.as_str()) && d.call.start <= call.call.start && call.call.end <= d.call.end
                });
                // `import me from "./me.js"` in `me.ts`.
                let imports_itself = current.imports.iter().any(|i| {
                    let stem = i.module.rsplit('/').next().unwrap_or("");
                    let stem = stem.strip_suffix(".js").or_else(|| stem.strip_suffix(".ts")).unwrap_or(stem);
                    i.module.starts_with("./") && stem == own_stem && i.specifiers.iter().any(|s| s.local == *name)
                });
                if own.is_some() || imports_itself {
                    out.push(
                        Diagnostic::new(
                            SelfComposition,
                            file.id,
                            *at,
                            "the workflow runs itself as its own child: a self-edge, which atomic's graphs may not have; each level starts another until the depth limit (4) fails the run",
                        )
                        .with_help("run a different child workflow, or a bounded loop of distinct tasks inside this one"),
                    );
                }
            }
            _ => {}
        }
    }
    for (name, at) in &current.run_calls {
        out.push(
            Diagnostic::new(
                ChildRunCalled,
                file.id,
                *at,
                format!("`{name}.run(…)` calls a workflow definition's body directly: no child run, no boundary stage, no replay, and its inputs and outputs are never validated"),
            )
            .with_help(format!("compose through the tracked boundary: `await ctx.workflow({name}, {{ inputs }})`")),
        );
    }
}
