//! Editor features for climpt agents: completion in `steps_registry.json` (also while it is
//! half-typed) and after `{uv-` in C3L prompts, hover, navigation between step ids and their
//! references, validators, failure patterns and output schemas, renaming step ids, outlines
//! and links.
//!
//! Everything is read through the family's model: the `Agent` comes from the same
//! `build_agent` the rules use. `locate` only says where the cursor is: in the parsed tree, or,
//! when the registry does not parse mid-typing, from the braces and quotes around it.

mod complete;
mod hover;
mod locate;
mod navigate;
mod outline;
mod schema;

use std::path::Path;

use crate::families::steps::model::{self, Agent, Doc, Step, StepKind};
use crate::families::steps::{Owned, build_agent};
use crate::source::{Node, Span};
use crate::workspace::{FileKind, SourceFile, Workspace};

pub(super) use complete::completions;
pub(super) use hover::hover;
pub(super) use navigate::{definitions, prepare_rename, references, rename};
pub(super) use outline::{links, symbols};

/// One segment of a path from the document root: a mapping key or a list index.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

impl Seg {
    fn key(&self) -> Option<&str> {
        match self {
            Seg::Key(key) => Some(key),
            Seg::Index(_) => None,
        }
    }
}

/// Whether `path` has the shape of `pattern`: a literal key, `*` for any key, `#` for any index.
fn matches(path: &[Seg], pattern: &[&str]) -> bool {
    path.len() == pattern.len()
        && path.iter().zip(pattern).all(|(seg, want)| match (seg, *want) {
            (Seg::Index(_), "#") => true,
            (Seg::Key(_), "*") => true,
            (Seg::Key(key), want) => key == want,
            _ => false,
        })
}

/// The key at `index` of `path` (`""` when it is an index or missing).
fn key_at(path: &[Seg], index: usize) -> &str {
    path.get(index).and_then(Seg::key).unwrap_or("")
}

/// The node at `path` below `root`.
fn node_at<'n>(root: &'n Node, path: &[Seg]) -> Option<&'n Node> {
    path.iter().try_fold(root, |node, seg| match seg {
        Seg::Key(key) => node.get(key),
        Seg::Index(index) => node.as_seq()?.get(*index),
    })
}

/// The text of a JSON string node without its quotes; the node's span for anything else.
fn inner(node: &Node) -> Span {
    if node.as_str().is_some() && node.span.len() >= 2 {
        Span::new(node.span.start + 1, node.span.end - 1)
    } else {
        node.span
    }
}

/// A step's name and kind (`Initial Issue · work`; an inferred kind says so).
fn step_detail(step: &Step) -> Option<String> {
    let kind = step.kind().map(|kind| match step.get("stepKind") {
        Some(_) => kind.as_str().to_string(),
        None => format!("{} (from c2)", kind.as_str()),
    });
    let parts: Vec<String> = [step.str_field("name").map(str::to_string), kind].into_iter().flatten().collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// The step kinds that may list `intent` in `allowedIntents`.
fn kinds_allowing(intent: &str) -> Vec<&'static str> {
    [StepKind::Work, StepKind::Verification, StepKind::Closure]
        .into_iter()
        .filter(|kind| model::allowed_intents_for(*kind).contains(&intent))
        .map(StepKind::as_str)
        .collect()
}

/// The agent around a file, parsed through the model. The registry's tree may be replaced (a
/// half-typed registry repaired for completion).
struct Scope<'w> {
    workspace: &'w Workspace,
    docs: Vec<Doc<'w>>,
    registry: usize,
}

impl<'w> Scope<'w> {
    /// The agent of `registry`, read as `doc` (its parsed tree, or a repaired one).
    fn new(workspace: &'w Workspace, doc: Doc<'w>) -> Scope<'w> {
        let registry = doc.file;
        let dir = model::agent_dir(registry);
        let config_dir = dir.parent().map(|p| p.join("climpt").join("config"));
        let belongs =
            |f: &SourceFile| f.path.starts_with(&dir) || config_dir.as_deref().is_some_and(|c| f.path.starts_with(c));
        let kinds = |f: &SourceFile| {
            matches!(f.kind, FileKind::AgentJson | FileKind::JsonSchema | FileKind::BreakdownConfig)
                || (f.kind == FileKind::StepsRegistry && f.id != registry.id)
        };
        let mut docs: Vec<Doc> = workspace.files().iter().filter(|f| kinds(f) && belongs(f)).map(Doc::of).collect();
        docs.push(doc);
        Scope { workspace, registry: docs.len() - 1, docs }
    }

    /// The scope of the registry whose file is `file`; `None` for other files.
    fn registry(workspace: &'w Workspace, file: &'w SourceFile) -> Option<Scope<'w>> {
        (file.kind == FileKind::StepsRegistry).then(|| Scope::new(workspace, Doc::of(file)))
    }

    /// The scope of the agent whose `prompts/` holds `file`.
    fn prompt(workspace: &'w Workspace, file: &'w SourceFile) -> Option<Scope<'w>> {
        if file.kind != FileKind::C3lPrompt {
            return None;
        }
        let registry = workspace.files().iter().find(|f| {
            f.kind == FileKind::StepsRegistry && file.path.starts_with(model::agent_dir(f).join("prompts"))
        })?;
        Some(Scope::new(workspace, Doc::of(registry)))
    }

    /// The scope of the agent whose schema file is `file`.
    fn schema(workspace: &'w Workspace, file: &'w SourceFile) -> Option<Scope<'w>> {
        if file.kind != FileKind::JsonSchema {
            return None;
        }
        let registry = workspace
            .files()
            .iter()
            .find(|f| f.kind == FileKind::StepsRegistry && file.path.starts_with(model::agent_dir(f)))?;
        Some(Scope::new(workspace, Doc::of(registry)))
    }

    /// The agent, built by the same `build_agent` the rules use.
    fn agent(&self) -> Agent<'_, 'w> {
        let by_path: crate::util::FastMap<&Path, &Doc<'w>> = self.docs.iter().map(|d| (d.path(), d)).collect();
        build_agent(self.workspace, &self.docs[self.registry], &Owned::collect(self.workspace, &self.docs), &by_path)
    }
}

/// The steps whose prompt file is `file`.
fn steps_prompting<'a>(agent: &Agent<'a, '_>, file: &SourceFile) -> Vec<Step<'a>> {
    agent.steps().into_iter().filter(|step| agent.prompt_file(step).is_some_and(|f| f.id == file.id)).collect()
}
