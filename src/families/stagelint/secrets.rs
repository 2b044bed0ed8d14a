//! `stagelint/SecretInSource`: a key or token pasted into text that is sent to the model (a
//! stage body, a C3L prompt, a Last Light prompt template, a skill body). Fenced examples are
//! not reported.

use crate::diagnostic::Diagnostic;
use crate::source::{Span, frontmatter};
use crate::template::secrets::{self, Mode};
use crate::workspace::{FileKind, SourceFile};

use super::SecretInSource;

pub fn check(file: &SourceFile, out: &mut Vec<Diagnostic>) {
    let sent = match file.kind {
        FileKind::Stage | FileKind::Skill => match frontmatter::split(&file.text) {
            Some(fm) if fm.close_fence.is_some() => fm.body,
            _ => return,
        },
        FileKind::C3lPrompt | FileKind::WorkflowPrompt => Span::new(0, file.text.len()),
        _ => return,
    };
    let Some(text) = file.text.get(sent.start..sent.end) else { return };
    for secret in secrets::find(text, Mode::Lint) {
        let what = if file.kind == FileKind::Skill { "skill" } else { "prompt" };
        let message = format!(
            "this {what} holds what looks like a real secret ({}); it is sent with every model call and published with the repository",
            secret.kind
        );
        out.push(Diagnostic::new(SecretInSource, file.id, secret.span.shift(sent.start), message).with_help(
            "revoke the secret and remove it; give the agent credentials through its environment or a tool, never in the prompt",
        ));
    }
}
