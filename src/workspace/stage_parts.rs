//! A stage file's parse, kept on its [`SourceFile`](super::SourceFile).

use std::sync::Arc;

use crate::source::frontmatter::{self, Frontmatter};
use crate::source::{Node, SyntaxError, yaml};
use crate::template::stage::{self, Tag};

/// What parsing a stage file yields. It is computed once per file and kept on the
/// [`SourceFile`]: the rules, the runtime's replays and the editor features all read the same
/// parse (a keystroke's re-check replays cassettes, which read every stage again).
#[derive(Debug)]
pub struct StageParts {
    /// `None` when the file has no frontmatter at all (only possible through `[files] stages`).
    pub frontmatter: Option<Frontmatter>,
    /// The frontmatter mapping with spans in file offsets; `None` when it did not parse.
    pub root: Option<Node>,
    pub syntax_errors: Vec<SyntaxError>,
    /// Shared with the runtime's `StageSpec`, which renders from them.
    pub tags: Arc<[Tag]>,
}

impl StageParts {
    pub(crate) fn parse(text: &str) -> StageParts {
        let Some(fm) = frontmatter::split(text) else {
            return StageParts { frontmatter: None, root: None, syntax_errors: Vec::new(), tags: Arc::new([]) };
        };
        let parsed = yaml::parse(&text[fm.yaml.start..fm.yaml.end]);
        let root = parsed.root.map(|mut node| {
            node.shift(fm.yaml.start);
            node
        });
        let syntax_errors = parsed
            .errors
            .into_iter()
            .map(|mut e| {
                e.span = e.span.shift(fm.yaml.start);
                if let Some((span, _)) = &mut e.related {
                    *span = span.shift(fm.yaml.start);
                }
                e
            })
            .collect();
        let tags = match fm.close_fence {
            Some(_) => stage::parse(&text[fm.body.start..fm.body.end], fm.body.start).into(),
            None => Arc::new([]) as Arc<[Tag]>,
        };
        StageParts { frontmatter: Some(fm), root, syntax_errors, tags }
    }
}
