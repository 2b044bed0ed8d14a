//! The `atomic/` rules over one parsed file: the builder chain and loader (`chain`), inputs
//! (`inputs`), option keys (`options`), upstream's provider validators (`providers`), the stage
//! graph and transcript reads (`stages`).

mod chain;
mod inputs;
mod options;
mod providers;
mod stages;

use crate::diagnostic::Diagnostic;
use crate::families::atomic::SyntaxError;
use crate::families::atomic::model::WorkflowFile;
use crate::workspace::{SourceFile, atomic};

/// Everything the family reports on one file.
pub(super) fn check_file(file: &SourceFile) -> Vec<Diagnostic> {
    let parsed = WorkflowFile::parse(file);
    let mut out = Vec::new();
    if let Some((span, message)) = &parsed.syntax {
        out.push(
            Diagnostic::new(SyntaxError, file.id, *span, format!("{message}; atomic cannot load this workflow"))
                .with_help("fix the syntax; no other atomic/ rule runs on this file until it parses"),
        );
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
    stages::check(file, &parsed.flow, &mut out);
    out
}
