//! What a set of dry-runs exercised of the definitions they replay, for every engine that can
//! say: per part of a definition (a stage), the ways it can go (branches, outcomes, paths) and
//! how often the runs took each. An engine builds these from its runs' events alone
//! ([`crate::runtime::Engine::coverage`]); the renderers list what no run took.

use crate::diagnostic::FileId;
use crate::source::Span;

/// One part of a definition and what the runs did with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// What it is, as output names it (`stage plan`).
    pub name: String,
    pub file: FileId,
    /// Where it is named in its file.
    pub span: Span,
    pub items: Vec<Item>,
}

/// One way a part can go, and how many times the runs took it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// The kind of way (`completion channel`, `Assert`, `Next`).
    pub group: &'static str,
    pub name: String,
    pub hits: u32,
}

impl Part {
    /// The items no run took.
    pub fn missed(&self) -> impl Iterator<Item = &Item> {
        self.items.iter().filter(|item| item.hits == 0)
    }
}
