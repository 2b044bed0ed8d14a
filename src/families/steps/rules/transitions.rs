//! The `steps/` transitions rules (see the codes declared in `families/steps/mod.rs`).

use crate::diagnostic::Diagnostic;
use crate::families::steps::model::Agent;

pub(super) fn check(_agent: &Agent, _out: &mut Vec<Diagnostic>) {}
