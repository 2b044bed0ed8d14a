//! Upstream's provider validators (`providers/*.ts`), which warn about clients and sessions
//! made by hand instead of through `ctx.stage`. Upstream matches regexes on the text with `//`
//! lines stripped, so it also fires on JSDoc, strings and imports; these read calls in the code.

use crate::diagnostic::Diagnostic;
use crate::families::atomic::model::WorkflowFile;
use crate::families::atomic::{
    ClaudeManualQuery, ClaudeManualSession, CopilotManualClient, CopilotManualSession, OpencodeManualClient,
    OpencodeManualSession,
};
use crate::workspace::SourceFile;

/// (agent, code, callee as `model` spells it, what to use instead).
const CHECKS: &[(&str, &str, &str, &str)] = &[
    ("claude", ClaudeManualSession, "createClaudeSession", "`ctx.stage()` creates the Claude session"),
    ("claude", ClaudeManualQuery, "claudeQuery", "use `s.session.query()` inside a stage"),
    ("copilot", CopilotManualClient, "new CopilotClient", "`ctx.stage()` creates the Copilot client"),
    ("copilot", CopilotManualSession, "client.createSession", "`ctx.stage()` creates the session; use `s.session`"),
    (
        "opencode",
        OpencodeManualClient,
        "createOpencodeClient",
        "`ctx.stage()` creates the OpenCode client; use `s.client`",
    ),
    ("opencode", OpencodeManualClient, "createOpencode", "`ctx.stage()` creates the OpenCode client; use `s.client`"),
    ("opencode", OpencodeManualSession, "client.session.create", "`ctx.stage()` creates the session; use `s.session`"),
];

pub(super) fn check(file: &SourceFile, parsed: &WorkflowFile, agent: Option<&str>, out: &mut Vec<Diagnostic>) {
    let Some(agent) = agent else { return };
    for (callee, at) in &parsed.calls {
        for (check_agent, code, name, instead) in CHECKS {
            if *check_agent == agent
                && (callee == name || (name.contains('.') && callee.ends_with(&format!(".{name}"))))
            {
                out.push(
                    Diagnostic::new(
                        code,
                        file.id,
                        *at,
                        format!("`{name}` in a workflow for {agent}: sessions made by hand bypass the runtime's panes, transcripts and cleanup"),
                    )
                    .with_help(*instead),
                );
            }
        }
    }
}
