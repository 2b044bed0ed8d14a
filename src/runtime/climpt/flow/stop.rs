//! Why a run stopped (one of climpt's error ids), and where the agent says what made it stop:
//! the transition, the step, the gate field or the prompt tag, shown as the related location of
//! the `cassette/FlowStopped` finding, so that a registry defect is found from the cassette.

use crate::diagnostic::{Diagnostic, FileId};
use crate::source::{Node, Span, Value};

use super::Flow;

/// A stop: climpt's error id, its message, and the cause in the agent's files, if any.
#[derive(Debug)]
pub(super) struct Stop {
    pub code: String,
    pub message: String,
    pub cause: Option<Cause>,
}

/// What in the agent made the run stop.
#[derive(Debug)]
pub(super) enum Cause {
    /// A place in `steps_registry.json` (a JSON pointer, made of raw segments) and what it is.
    /// When the place is absent (a missing `transitions.escalate`), the nearest part of it that
    /// exists is shown.
    Registry(Vec<String>, String),
    /// A span of another file (a prompt) and what it is.
    File(FileId, Span, String),
}

pub(super) fn stop(code: &str, message: impl Into<String>) -> Stop {
    Stop { code: code.to_string(), message: message.into(), cause: None }
}

impl Stop {
    /// The registry entry at `path` (`["steps", "initial.a", "transitions", "next"]`) caused
    /// the stop; `note` says what it is.
    pub fn at(mut self, path: &[impl AsRef<str>], note: impl Into<String>) -> Stop {
        self.cause = Some(Cause::Registry(path.iter().map(|s| s.as_ref().to_string()).collect(), note.into()));
        self
    }

    /// `span` of `file` caused the stop.
    pub fn in_file(mut self, file: FileId, span: Span, note: impl Into<String>) -> Stop {
        self.cause = Some(Cause::File(file, span, note.into()));
        self
    }
}

impl Flow<'_> {
    /// `finding` with the cause of the stop as its related location.
    pub(super) fn with_cause(&self, finding: Diagnostic, cause: Option<&Cause>) -> Diagnostic {
        match cause {
            Some(Cause::File(file, span, note)) => finding.with_related(*file, *span, note.clone()),
            Some(Cause::Registry(path, note)) => {
                let file = self.agent.registry_file;
                let text = &self.agent.workspace.file(file).text;
                let Some(root) = crate::source::json::parse(text).root else { return finding };
                let span = registry_span(&root, path);
                finding.with_related(file, span, note.clone())
            }
            None => finding,
        }
    }
}

/// The span to show for `path` in the registry: a scalar's value, else the key that holds the
/// mapping or list; the nearest existing ancestor when `path` is absent.
fn registry_span(root: &Node, path: &[String]) -> Span {
    let mut node = root;
    let mut key: Option<Span> = None;
    for segment in path {
        let next = match &node.value {
            Value::Map(_) => node.entry(segment).map(|e| (&e.value, Some(e.key.span))),
            Value::Seq(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)).map(|n| (n, None)),
            _ => None,
        };
        let Some((child, child_key)) = next else { break };
        node = child;
        key = child_key.or(Some(child.span));
    }
    match (&node.value, key) {
        (Value::Map(_) | Value::Seq(_), Some(key)) => key,
        (Value::Map(_) | Value::Seq(_), None) => Span::empty(node.span.start),
        _ => node.span,
    }
}
