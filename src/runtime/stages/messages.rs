//! The texts the runtime itself puts on the transcript. They are part of every request
//! fingerprint after the turn that adds them, so changing a word here is a contract change:
//! bump [`CONTRACT`] and say so in the changelog.

use crate::runtime::stages::stage::StageSpec;

/// The version of these texts.
/// `/2` added [`invalid_arguments`].
pub const CONTRACT: &str = "stagelint-runtime-messages/2";

pub const FAKE_MISSING: &str = "error: the dry-run has no recorded result for this call";

/// The first user message of a fresh transcript.
pub fn start(stage: &StageSpec) -> String {
    format!("Begin stage `{}`. Call `{}` when you are done.", stage.id, stage.completion_tool)
}

/// The steering message after a plain-text reply.
pub fn steer(stage: &StageSpec) -> String {
    format!("Plain text does not end this stage. Call `{}` with your result when you are done.", stage.completion_tool)
}

/// The synthetic result for every call of a batch that holds the completion tool with siblings.
pub fn batch(stage: &StageSpec) -> String {
    format!(
        "error: `{}` must be the sole tool call in its response; no call of this batch was run.",
        stage.completion_tool
    )
}

/// The typed denied-tool-call result.
pub fn denied(stage: &StageSpec, tool: &str) -> String {
    format!("error: tool `{tool}` is not allowed in stage `{}` and was not granted.", stage.id)
}

/// The synthetic result of a call whose arguments do not parse (`why`: `not valid JSON`, `not
/// a JSON object`): it is neither run nor proposed for a grant.
pub fn invalid_arguments(tool: &str, why: &str) -> String {
    format!("error: the arguments of `{tool}` are {why}; the call was not run. Send them as a JSON object.")
}

/// The completion payload's validation errors, returned as the call's result.
pub fn parse_failure(stage: &StageSpec, errors: &[crate::runtime::stages::lifecycle::PayloadError]) -> String {
    let listed: Vec<String> = errors
        .iter()
        .map(|e| if e.at.is_empty() { e.message.clone() } else { format!("{}: {}", e.at, e.message) })
        .collect();
    format!(
        "error: the `{}` payload does not match completionSchema: {}. Fix it and call `{}` again.",
        stage.completion_tool,
        listed.join("; "),
        stage.completion_tool
    )
}

/// The runtime's retry reason, appended before Act is re-entered on the same transcript.
pub fn retry(stage: &StageSpec, attempt: u32, reason: &str) -> String {
    format!(
        "Attempt {attempt} of {}: the previous attempt ended with `{reason}`. Continue, then call `{}`.",
        stage.max_attempts, stage.completion_tool
    )
}

/// The description of the synthesized completion tool.
pub fn completion_description(stage: &StageSpec) -> String {
    format!("Ends stage `{}`: call it alone, with a payload matching completionSchema.", stage.id)
}

/// The result a recording gives a call no fake answers (never a real tool run).
pub fn record_placeholder(tool: &str) -> String {
    format!("TODO: recorded without running `{tool}`; replace this with the result the tool would give")
}
