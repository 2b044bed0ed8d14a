//! Agent names a workflow uses (`--agent x` in Claude's `chatFlags`, `agent: "x"` in session
//! and query options) that no agent file its provider reads, atomic install or `[atomic] agents`
//! defines: Claude Code reads `.claude/agents/`, Copilot CLI `.github/agents/`, OpenCode
//! `.opencode/agents/` (skills in `.agents/skills/` count for each).

use crate::diagnostic::Diagnostic;
use crate::families::atomic::UnknownAgent;
use crate::families::atomic::model::WorkflowFile;
use crate::families::atomic::project::{INSTALLED, Project};
use crate::util::did_you_mean;
use crate::workspace::SourceFile;

pub(super) fn check(
    file: &SourceFile,
    parsed: &WorkflowFile,
    project: &Project,
    agent: Option<&str>,
    out: &mut Vec<Diagnostic>,
) {
    if parsed.agent_refs.is_empty() {
        return;
    }
    let all: Vec<_> = project.agents(&file.path).collect();
    // The agents the workflow's provider reads (all of them when the provider is not known).
    let serves =
        |a: &&crate::families::atomic::project::Agent| a.provider.is_none() || agent.is_none() || a.provider == agent;
    let defined: Vec<_> = all.iter().copied().filter(serves).collect();
    let configured = &file.config.atomic.agents;
    for reference in &parsed.agent_refs {
        let name = reference.name.as_str();
        // A provider's name (`agent: "claude"`) is not a subagent's: some other option.
        let provider = crate::workspace::atomic::AGENTS.contains(&name);
        if provider
            || INSTALLED.contains(&name)
            || configured.iter().any(|a| a == name)
            || defined.iter().any(|a| a.name == name)
        {
            continue;
        }
        // Defined, but for another provider: the agent's CLI never sees it.
        if let Some(elsewhere) = all.iter().find(|a| a.name == name)
            && let (Some(owner), Some(provider)) = (elsewhere.provider, agent)
        {
            let dir = |p: &str| match p {
                "claude" => "`.claude/agents/`",
                "copilot" => "`.github/agents/`",
                _ => "`.opencode/agents/`",
            };
            let mut d = Diagnostic::new(
                UnknownAgent,
                file.id,
                reference.name_span.unwrap_or(reference.span),
                format!(
                    "agent `{name}` is defined only in {}, which {} does not read (it reads {}): this {provider} stage starts without it",
                    dir(owner),
                    cli(provider),
                    dir(provider)
                ),
            )
            .with_help(format!("add `{name}` to {} as well (atomic installs its agents into each provider's directory)", dir(provider)));
            if let Some((id, at)) = elsewhere.file {
                d = d.with_related(id, at, format!("`{name}` for {}", cli(owner)));
            }
            out.push(d);
            continue;
        }
        let known = INSTALLED.iter().copied().chain(configured.iter().map(String::as_str));
        let guess = did_you_mean(name, known.chain(defined.iter().map(|a| a.name.as_str())));
        let hint = guess.map(|g| format!("; did you mean `{g}`?")).unwrap_or_default();
        let mut d = Diagnostic::new(
            UnknownAgent,
            file.id,
            reference.name_span.unwrap_or(reference.span),
            format!("no agent `{name}` is defined: not in the project's agent files, not among the agents atomic installs, not in `[atomic] agents`{hint}"),
        )
        .with_help(format!(
            "define it in `.claude/agents/{name}.md` (or `.github/agents/`, `.opencode/agents/`, `.agents/skills/{name}/SKILL.md`), or list it in `[atomic] agents` in stagelint.toml"
        ));
        if let Some(guess) = guess {
            if let Some((id, at)) = defined.iter().find(|a| a.name == guess).and_then(|a| a.file) {
                d = d.with_related(id, at, format!("`{guess}` is defined here"));
            }
            if let Some(span) = reference.name_span {
                d = d.with_did_you_mean(span, guess.to_string(), guess);
            }
        }
        out.push(d);
    }
}

/// The CLI of a provider, for messages.
fn cli(provider: &str) -> &'static str {
    match provider {
        "claude" => "Claude Code",
        "copilot" => "Copilot CLI",
        _ => "OpenCode",
    }
}
