//! Rule families: each declares its rules once and checks the workspace files it owns.

pub mod atomic;
pub mod lastlight;
pub mod sm;
pub mod stagelint;
pub mod steps;

use crate::diagnostic::Diagnostic;
use crate::editor;
use crate::workspace::Workspace;

pub use crate::registry::{RENAMED, RuleMeta, all_rules, code_hint, default_severity, is_family, rule};

/// What a family assumed for a run ([`Family::notes`]), as every output format carries it:
/// `note:` lines, the JSON `notes`, SARIF's invocation notifications, GitHub `::notice`s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub family: &'static str,
    pub message: String,
}

/// A rule family. A family added later implements this and is listed in [`FAMILIES`]; the CLI
/// (and the editor features built on the same analysis) pick it up from there.
pub trait Family: Sync {
    fn name(&self) -> &'static str;
    fn rules(&self) -> &'static [RuleMeta];
    /// Runs every rule of the family over the files it owns. Rules are pure: no IO, no config
    /// filtering (the collector in `check` applies `[rules]` and suppressions).
    fn check(&self, workspace: &Workspace, out: &mut Vec<Diagnostic>);

    /// What the family assumed about the workspace that the output should say (the upstream
    /// release it checked for, and why), one sentence each; printed after the findings.
    fn notes(&self, _workspace: &Workspace) -> Vec<String> {
        Vec::new()
    }

    /// Its editor features (see `crate::editor::Hooks`).
    fn editor(&self) -> &'static editor::Hooks {
        &editor::Hooks::NONE
    }
}
