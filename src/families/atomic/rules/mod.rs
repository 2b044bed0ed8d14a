//! The `atomic/` rules over one parsed file: the builder chain and loader (`chain`), inputs
//! (`inputs`), option keys (`options`) and literal values (`values`), upstream's provider
//! validators (`providers`), inputs read by name (`input_reads`), what stage callbacks do with
//! their sessions (`session`), the stage graph and transcript reads (`stages`), discovery and
//! the SDK version gate (`discovery`), agent names (`agents`).

mod agents;
mod chain;
mod discovery;
mod input_reads;
mod inputs;
mod options;
mod providers;
mod session;
mod stages;
mod values;

use crate::diagnostic::Diagnostic;
use crate::families::atomic::SyntaxError;
use crate::families::atomic::model::WorkflowFile;
use crate::families::atomic::project::Project;
use crate::workspace::{SourceFile, atomic};

/// Everything the family reports on one file.
pub(super) fn check_file(file: &SourceFile, project: &Project) -> Vec<Diagnostic> {
    let parsed = WorkflowFile::parse(file);
    let mut out = Vec::new();
    if let Some((span, message)) = &parsed.syntax {
        // Past stagelint's nesting limits the file may still load: only the check stops.
        let (message, help) = if parsed.too_deep {
            (message.clone(), "flatten the nesting; no other atomic/ rule runs on this file")
        } else {
            (
                format!("{message}; atomic cannot load this workflow"),
                "fix the syntax; no other atomic/ rule runs on this file until it parses",
            )
        };
        out.push(Diagnostic::new(SyntaxError, file.id, *span, message).with_help(help));
        return out;
    }
    let layout = atomic::layout(&file.path);
    // The runtime takes the agent from the directory; off the layout, `.for<"x">()` tells.
    let declared = parsed.chain.as_ref().and_then(|c| c.agent.as_ref()).map(|(a, _)| a.as_str());
    let agent = layout.map(|(_, agent)| agent).or(declared);
    chain::check(file, &parsed, layout, &mut out);
    inputs::check(file, &parsed, &mut out);
    options::check(file, &parsed, agent, &mut out);
    providers::check(file, &parsed, agent, &mut out);
    values::check(file, &parsed, agent, &mut out);
    input_reads::check(file, &parsed, &mut out);
    session::check(file, &parsed, agent, project, &mut out);
    stages::check(file, &parsed.flow, &mut out);
    discovery::check(file, &parsed, project, &mut out);
    agents::check(file, &parsed, project, &mut out);
    out
}
