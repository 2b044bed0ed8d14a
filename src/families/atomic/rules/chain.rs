//! The builder chain and what the loader checks of the default export.

use crate::config::SdkVersion;
use crate::diagnostic::{Applicability, Diagnostic, Edit};
use crate::families::atomic::dialect::Dialect;
use crate::families::atomic::model::{RunArg, Value, WorkflowFile};
use crate::families::atomic::{
    AgentMismatch, EmptyWorkflowName, MinSdkVersionFormat, MissingAgent, MissingCompile, MissingDefaultExport,
    MissingRun, NameMismatch, RunCalledTwice, RunNotFunction,
};
use crate::source::Span;
use crate::workspace::SourceFile;

pub(super) fn check(
    file: &SourceFile,
    parsed: &WorkflowFile,
    layout: Option<(&str, &str)>,
    dialect: Dialect,
    out: &mut Vec<Diagnostic>,
) {
    let id = file.id;
    // 0.7 registers a workflow with `hostLocalWorkflows([wf])`; only a file that neither
    // exports nor hosts it leaves nothing to run.
    let hosted = dialect == Dialect::Sdk && file.text.contains("hostLocalWorkflows(");
    match (&parsed.export, &parsed.chain) {
        _ if hosted => {}
        (None, chain) if dialect == Dialect::Sdk => {
            let at = chain.as_ref().map_or(Span::empty(0), |c| c.define);
            out.push(
                Diagnostic::new(
                    MissingDefaultExport,
                    id,
                    at,
                    "the workflow is neither exported nor passed to `hostLocalWorkflows([...])`; no worker CLI and no `atomic workflow` entry can run it",
                )
                .with_help("end the file with `await hostLocalWorkflows([workflow]);` (atomic-managed, 0.7) or `export default` it for a worker CLI"),
            );
        }
        (None, chain) => {
            let at = chain.as_ref().map_or(Span::empty(0), |c| c.define);
            out.push(
                Diagnostic::new(
                    MissingDefaultExport,
                    id,
                    at,
                    "the workflow file has no `export default`; atomic's loader reports it as an invalid workflow",
                )
                .with_help("export the compiled workflow: `export default defineWorkflow({ … }).run(…).compile();`"),
            );
        }
        (Some(export), _) if !export.is_chain => {
            out.push(
                Diagnostic::new(
                    MissingDefaultExport,
                    id,
                    export.span,
                    "the default export is not a `defineWorkflow(…)` chain; atomic's loader reports it as an invalid workflow",
                )
                .with_help("`export default` the `defineWorkflow({ … }).run(…).compile()` chain (or the `const` holding it)"),
            );
        }
        _ => {}
    }
    let Some(chain) = &parsed.chain else { return };
    let options = chain.options.as_ref();
    if !chain.has_options {
        out.push(
            Diagnostic::new(
                EmptyWorkflowName,
                id,
                chain.define,
                "`defineWorkflow()` is called without options; it throws reading their `name`",
            )
            .with_help("pass the options: `defineWorkflow({ name: \"<workflow-name>\" })`"),
        );
    }
    match options.map(|o| (o, o.get("name"))) {
        Some((o, None)) if !o.open => out.push(
            Diagnostic::new(
                EmptyWorkflowName,
                id,
                o.span,
                "the workflow options have no `name`; `defineWorkflow` throws \"Workflow name is required.\"",
            )
            .with_help("add `name: \"<workflow-name>\"`, usually the directory's name"),
        ),
        Some((_, Some(prop))) => {
            if let Value::Str(text, at) = &prop.value
                && text.trim().is_empty()
            {
                out.push(Diagnostic::new(
                    EmptyWorkflowName,
                    id,
                    *at,
                    "the workflow `name` is blank; `defineWorkflow` throws \"Workflow name is required.\"",
                ));
            }
        }
        _ => {}
    }
    let exported = parsed.export.as_ref().is_some_and(|e| e.is_chain);
    if chain.runs.is_empty() {
        out.push(
            Diagnostic::new(
                MissingRun,
                id,
                chain.compile.unwrap_or(chain.define),
                "the workflow has no `.run(…)` callback; `.compile()` throws \"…has no run callback\"",
            )
            .with_help("add `.run(async (ctx) => { … })` before `.compile()`"),
        );
    }
    for run in chain.runs.iter().skip(1) {
        out.push(
            Diagnostic::new(
                RunCalledTwice,
                id,
                run.name,
                "`.run()` is called a second time; it throws \"run() can only be called once per workflow.\"",
            )
            .with_related(id, chain.runs[0].name, "the first `.run()`")
            .with_help("put all the stages in one `.run(async (ctx) => { … })` callback"),
        );
    }
    for run in chain.runs.iter().take(1) {
        let (at, what) = match run.arg {
            RunArg::Missing => (run.name, "nothing".to_string()),
            RunArg::NotFunction(at, what) => (at, what.to_string()),
            _ => continue,
        };
        out.push(
            Diagnostic::new(
                RunNotFunction,
                id,
                at,
                format!("`.run()` is given {what}; it throws \"run() requires a function\""),
            )
            .with_help("pass the workflow's body: `.run(async (ctx) => { … })`"),
        );
    }
    if exported && chain.compile.is_none() {
        out.push(
            Diagnostic::new(
                MissingCompile,
                id,
                Span::empty(chain.end),
                "the exported chain never calls `.compile()`; atomic's loader rejects the builder (WorkflowNotCompiledError)",
            )
            .with_related(id, chain.define, "the chain starts here")
            .with_fix(
                "Append `.compile()`",
                Applicability::Safe,
                vec![Edit { span: Span::empty(chain.end), replacement: ".compile()".into() }],
            ),
        );
    }
    if dialect == Dialect::Sdk && chain.agent_arg.is_none() {
        let (at, message) = match &chain.agent {
            Some((agent, at)) => (*at, format!("`.for<\"{agent}\">()` names the agent only as a type; from 0.6 `.for` takes it as its argument, so `compile()` throws \"…has no agent\"")),
            None => (chain.define, "the workflow never calls `.for(\"<agent>\")`; from 0.6 `compile()` throws \"…has no agent. Call .for(\"copilot\") / .for(\"opencode\") / .for(\"claude\") before .compile()\"".to_string()),
        };
        out.push(
            Diagnostic::new(MissingAgent, id, at, message)
                .with_help("call `.for(\"claude\")` (or `\"copilot\"`, `\"opencode\"`) before `.run(…)`"),
        );
    }
    if let Some(prop) = options.and_then(|o| o.get("minSDKVersion"))
        && let Value::Str(text, at) = &prop.value
        && SdkVersion::parse(text).is_none()
    {
        out.push(
            Diagnostic::new(
                MinSdkVersionFormat,
                id,
                *at,
                format!("`minSDKVersion` \"{text}\" is not MAJOR.MINOR.PATCH[-TAG]; atomic ignores it, so the version gate is off"),
            )
            .with_help("write the version as e.g. \"0.5.24\""),
        );
    }
    let Some((dir_name, dir_agent)) = layout else { return };
    if let Some((agent, at)) = &chain.agent
        && agent != dir_agent
    {
        out.push(
            Diagnostic::new(
                AgentMismatch,
                id,
                *at,
                format!("`.for<\"{agent}\">()` in the `{dir_agent}/` directory; atomic runs it as {} workflow, whatever the type says", crate::util::article(dir_agent)),
            )
            .with_help(format!("write `.for<\"{dir_agent}\">()`, or move the file to `{agent}/index.ts`")),
        );
    }
    if let Some(Value::Str(name, at)) = options.and_then(|o| o.get("name")).map(|p| &p.value)
        && !name.trim().is_empty()
        && name != dir_name
    {
        out.push(
            Diagnostic::new(
                NameMismatch,
                id,
                *at,
                format!("the workflow is named \"{name}\" but lives in `{dir_name}/`; `atomic workflow -n` and the picker use `{dir_name}`, tmux and hints use \"{name}\""),
            )
            .with_help(format!("name it \"{dir_name}\", or rename the directory")),
        );
    }
}
