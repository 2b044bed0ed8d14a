//! The `atomic/` rules over one parsed file, by its dialect (`dialect`). For v0.5 to 0.7: the
//! builder chain and loader (`chain`), inputs (`inputs`), option keys (`options`) and literal
//! values (`values`), upstream's provider validators (`providers`), inputs read by name
//! (`input_reads`), what stage callbacks do with their sessions (`session`), the stage graph and
//! transcript reads (`stages`), discovery and the SDK version gate (`discovery`), agent names
//! (`agents`). For `@bastani/workflows` (0.8 and 0.9): `current`.

mod agents;
mod chain;
mod current;
mod discovery;
mod input_reads;
mod inputs;
mod options;
mod providers;
mod session;
mod stages;
mod values;

use crate::diagnostic::Diagnostic;
use crate::families::atomic::dialect::{self, Dialect};
use crate::families::atomic::model::WorkflowFile;
use crate::families::atomic::project::Project;
use crate::families::atomic::{SyntaxError, UnmodeledDialect};
use crate::source::Span;
use crate::workspace::{SourceFile, atomic};

/// Everything the family reports on one file.
pub(super) fn check_file(file: &SourceFile, project: &Project) -> Vec<Diagnostic> {
    let judged = dialect::judge(file, project);
    if let Some(why) = &judged.unmodeled {
        let first = Span::new(0, file.text.find('\n').unwrap_or(file.text.len()));
        let mut d = Diagnostic::new(UnmodeledDialect, file.id, first, why.clone())
            .with_help("`stagelint explain versions` lists the releases stagelint models; set `[atomic] sdk-version` to check the file as one of them");
        if let Some((id, at)) = judged.sdk.as_ref().and_then(|s| s.at) {
            d = d.with_related(id, at, "the pinned version");
        }
        return vec![d];
    }
    let modern = matches!(judged.dialect, Dialect::Builder | Dialect::Current);
    let parsed = WorkflowFile::parse(file, modern);
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
    if modern {
        current::check(file, &parsed.current, &judged, project, &mut out);
        return out;
    }
    if discovery::superseded(file, &parsed, judged.sdk.as_ref(), &mut out) {
        return out;
    }
    let seed = judged.dialect == Dialect::Seed;
    // v0.5 runs the agent of the directory; 0.6 and later the one `.for("x")` names.
    let layout = atomic::layout(&file.path).filter(|_| seed);
    let declared = parsed.chain.as_ref().and_then(|c| c.agent.as_ref()).map(|(a, _)| a.as_str());
    // A 0.6–0.7 file may define one workflow per agent: then no one agent's rules apply to all.
    let mixed = parsed.for_agents.iter().any(|a| Some(a.as_str()) != declared);
    let agent = layout.map(|(_, agent)| agent).or(declared.filter(|_| !mixed));
    chain::check(file, &parsed, layout, judged.dialect, &mut out);
    inputs::check(file, &parsed, judged.dialect, &mut out);
    options::check(file, &parsed, agent, seed, &mut out);
    providers::check(file, &parsed, agent, &mut out);
    values::check(file, &parsed, agent, judged.dialect, &mut out);
    input_reads::check(file, &parsed, &mut out);
    session::check(file, &parsed, agent, project, &mut out);
    stages::check(file, &parsed.flow, &mut out);
    if seed {
        discovery::check(file, &parsed, project, &mut out);
    } else {
        discovery::incompatible(file, &parsed, judged.sdk.as_ref(), &mut out);
    }
    agents::check(file, &parsed, project, agent, &mut out);
    out
}
