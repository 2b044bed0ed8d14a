//! Editor features for stage definitions and state-machine files: completion (also while the
//! frontmatter is half-typed), hover, navigation between stage ids, renaming them, outlines.
//!
//! Everything is read through the family's model (`StageDoc`, `SmDoc`, `group`); `lines` only
//! says where the cursor is inside a YAML block, which the tree cannot tell on a blank or
//! half-typed line.

mod complete;
mod hover;
mod json_schema;
mod navigate;
mod schema;
mod symbols;

use std::path::{Path, PathBuf};

use crate::diagnostic::FileId;
use crate::families::sm::model::{self, Machine, SmDoc, StageDoc};
use crate::families::sm::rules::upstream;
use crate::source::{Node, Span};
use crate::template::stage::Segment;
use crate::workspace::{FileKind, SourceFile, Workspace};

pub(super) use complete::completions;
pub(super) use hover::hover;
pub(super) use navigate::{definitions, prepare_rename, references, rename, renamed_files};
pub(super) use symbols::symbols;

/// The file under the cursor with the state machine around it, parsed through the model.
struct Scope<'w> {
    file: &'w SourceFile,
    sms: Vec<SmDoc<'w>>,
    stages: Vec<StageDoc<'w>>,
    /// Index in `sms` of the state machine that owns the file.
    owner: Option<usize>,
    /// The cassettes that may replay these stages: in the machine's directory (not a nested
    /// machine's), beside a loose stage, or in a `[dry-run] cassettes` directory.
    cassettes: Vec<&'w SourceFile>,
}

impl<'w> Scope<'w> {
    /// `None` for files the family does not own.
    fn new(workspace: &'w Workspace, id: FileId) -> Option<Scope<'w>> {
        let file = workspace.file(id);
        if !matches!(file.kind, FileKind::Stage | FileKind::StateMachine) {
            return None;
        }
        let sm_files: Vec<&SourceFile> =
            workspace.files().iter().filter(|f| f.kind == FileKind::StateMachine).collect();
        let holds_sm = |dir: &Path| sm_files.iter().any(|f| f.path.parent() == Some(dir));
        let dir = match file.kind {
            FileKind::StateMachine => file.path.parent(),
            _ => file.path.ancestors().skip(1).find(|dir| holds_sm(dir)),
        };
        let Some(dir) = dir else {
            let cassettes = cassettes_of(workspace, file.path.parent(), &[file], &holds_sm);
            return Some(Scope { file, sms: Vec::new(), stages: vec![StageDoc::parse(file)], owner: None, cassettes });
        };
        // Nested state machines below `dir` are parsed too, so `group` gives their stages to them.
        let sms: Vec<SmDoc> = sm_files.iter().filter(|f| f.path.starts_with(dir)).map(|f| SmDoc::parse(f)).collect();
        let owner = sms.iter().position(|sm| sm.dir() == dir);
        let stage_files: Vec<&SourceFile> =
            workspace.files().iter().filter(|f| f.kind == FileKind::Stage && f.path.starts_with(dir)).collect();
        let cassettes = cassettes_of(workspace, Some(dir), &stage_files, &holds_sm);
        let stages = stage_files.into_iter().map(StageDoc::parse).collect();
        Some(Scope { file, sms, stages, owner, cassettes })
    }

    /// The scope of a cursor; `None` also when the offset is not a character boundary of the file.
    fn at(workspace: &'w Workspace, at: crate::editor::Cursor) -> Option<Scope<'w>> {
        let scope = Scope::new(workspace, at.file)?;
        scope.file.text.is_char_boundary(at.offset).then_some(scope)
    }

    fn machine(&self) -> Option<Machine<'_, 'w>> {
        let owner = self.owner?;
        model::group(&self.sms, &self.stages).into_iter().nth(owner)
    }

    /// The cursor's file as a stage definition.
    fn stage(&self) -> Option<&StageDoc<'w>> {
        self.stages.iter().find(|stage| stage.id() == self.file.id)
    }

    /// The cursor's file as a state-machine file.
    fn sm(&self) -> Option<&SmDoc<'w>> {
        self.sms.iter().find(|sm| sm.file.id == self.file.id)
    }

    /// The state machine's file (`sm.yaml`), whichever file the cursor is in.
    fn owner_sm(&self) -> Option<&SmDoc<'w>> {
        self.sms.get(self.owner?)
    }

    /// The stages of the state machine with their ids, in workspace order.
    fn stage_ids(&self) -> Vec<(&str, &StageDoc<'w>)> {
        let Some(machine) = self.machine() else {
            return Vec::new();
        };
        machine.stages.into_iter().filter_map(|stage| Some((stage.stage_id()?.0, stage))).collect()
    }

    /// The stages whose result `ctx.upstream[index]` can be in `stage`.
    fn predecessors(&self, stage: &StageDoc, index: usize) -> Vec<&StageDoc<'w>> {
        let (Some(machine), Some((id, _))) = (self.machine(), stage.stage_id()) else {
            return Vec::new();
        };
        upstream::predecessors(&machine, id, index)
    }
}

/// The cassette files of the stages in `dir`: under it but not under a nested state machine (for
/// a loose stage, `dir` is its own directory and only files directly in it count), and in the
/// stages' `[dry-run] cassettes` directories.
fn cassettes_of<'w>(
    workspace: &'w Workspace,
    dir: Option<&Path>,
    stages: &[&SourceFile],
    holds_sm: &dyn Fn(&Path) -> bool,
) -> Vec<&'w SourceFile> {
    let loose = dir.is_some_and(|d| !holds_sm(d));
    let mut extra: Vec<&Path> =
        stages.iter().flat_map(|s| s.config.cassette_dirs.iter().map(PathBuf::as_path)).collect();
    extra.sort();
    extra.dedup();
    workspace
        .files()
        .iter()
        .filter(|f| f.kind == FileKind::Cassette)
        .filter(|f| {
            let parent = f.path.parent();
            let own = dir.is_some_and(|dir| {
                if loose {
                    parent == Some(dir)
                } else {
                    // The nearest directory holding a state machine is this one.
                    f.path.starts_with(dir) && f.path.ancestors().skip(1).find(|a| holds_sm(a)) == Some(dir)
                }
            });
            own || parent.is_some_and(|p| extra.contains(&p))
        })
        .collect()
}

/// The span of a scalar's text without its quotes (what a rename replaces).
fn unquoted(text: &str, span: Span) -> Span {
    let raw = text.get(span.start..span.end).unwrap_or("");
    let quoted =
        raw.len() >= 2 && (raw.starts_with('"') && raw.ends_with('"') || raw.starts_with('\'') && raw.ends_with('\''));
    if quoted { Span::new(span.start + 1, span.end - 1) } else { span }
}

/// Follows a `parsed.<a>.<b>` path through a completion schema: `properties` for names,
/// `items` for indexes. Returns the schema at the path.
fn schema_at<'n>(schema: &'n Node, path: &[Segment]) -> Option<&'n Node> {
    path.iter().try_fold(schema, |node, segment| match segment {
        Segment::Field { name, .. } => node.get("properties")?.get(name),
        Segment::Index { .. } => node.get("items"),
    })
}

/// A JSON Schema's `type` as text (`string`, `string | null`).
fn schema_type(schema: &Node) -> Option<String> {
    let node = schema.get("type")?;
    match node.as_seq() {
        Some(items) => Some(items.iter().filter_map(Node::as_str).collect::<Vec<_>>().join(" | ")),
        None => node.as_str().map(str::to_string),
    }
}

/// What each StageResult field holds.
fn result_field_doc(field: &str) -> &'static str {
    match field {
        "verdict" => "the Assert verdict the stage ended with",
        "reason" => "the reason given with the verdict",
        "parsed" => "the completion payload, typed by the predecessor's `completionSchema`",
        "capHit" => "`true` when Act reached `turnCap` before a valid completion call",
        "attemptCount" => "how many attempts the stage used (bounded by `retryPolicy.maxAttempts`)",
        "output" => "the stage's output",
        _ => "",
    }
}

/// What each core-provided ctx field holds.
fn core_ctx_doc(field: &str) -> &'static str {
    match field {
        "upstream" => "the StageResults of this stage's predecessors, in order (`ctx.upstream[0]`, ...)",
        "workflowRunId" => "the id of the workflow run",
        "stageExecutionId" => "the id of this stage execution",
        _ => "",
    }
}

/// Which `context` list of the state machine declares the ctx field `name`.
fn declared_in<'n>(sm: &'n SmDoc, name: &str) -> Option<(&'static str, &'n Node)> {
    let context = sm.root.as_ref()?.get("context")?;
    ["required", "optional"].into_iter().find_map(|list| {
        let item = context.get(list)?.as_seq()?.iter().find(|item| item.as_str() == Some(name))?;
        Some((list, item))
    })
}
