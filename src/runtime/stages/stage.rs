//! What the runtime needs of a stage definition, read from the linter's `StageDoc`, the
//! definition contract Setup and Init enforce (the linter's own error findings on the stage),
//! and Init's rendering of the body with the linter's own template parser.

use serde_json::{Value as Json, json};

use crate::diagnostic::{Diagnostic, FileId};
use crate::families::sm::model::{Execution, StageDoc};
use crate::families::sm::{self as lint};
use crate::source::{Node, Span};
use crate::template::stage::{Dialect, Segment, TagKind};

/// A stage as the runtime executes it.
#[derive(Clone, Debug)]
pub struct StageSpec {
    pub file: FileId,
    /// The stage file as shown to the user (the timeline names where each stage came from).
    pub path: String,
    /// Where "the stage" is in its file (the `id:` value, else the opening fence).
    pub anchor: Span,
    pub id: String,
    pub name: String,
    pub allowed_tools: Vec<String>,
    pub completion_tool: String,
    pub completion_schema: Json,
    pub inputs_schema: Option<Json>,
    pub max_attempts: u32,
    pub turn_cap: u32,
    pub next: Option<Next>,
    /// The `next` key in the stage file, for findings about where the run goes.
    pub next_key: Option<Span>,
    /// The `inputsSchema` key in the stage file.
    pub inputs_schema_key: Option<Span>,
    /// The frontmatter as JSON, for `{{stage.*}}`.
    pub frontmatter: Json,
    /// The placeholder dialect Init renders (`[sm] placeholder-dialect` of the stage's config).
    pub dialect: Dialect,
    /// Why the definition fails Setup or Init, whatever the context (the linter's errors).
    pub definition: Vec<InitFailure>,
    /// The ctx fields its state machine declares `optional`: absent, they render empty.
    pub optional_ctx: Vec<String>,
    body: String,
    body_offset: usize,
    tags: std::sync::Arc<[crate::template::stage::Tag]>,
}

/// The stage's declared successors (NextResult, normalized).
#[derive(Clone, Debug, PartialEq)]
pub struct Next {
    pub stages: Vec<String>,
    pub parallel: bool,
    pub join: Option<String>,
}

impl Next {
    pub fn to_json(&self) -> Json {
        let mut out = json!({
            "nextStages": self.stages,
            "execution": if self.parallel { "parallel" } else { "sequential" },
        });
        if let Some(join) = &self.join {
            out["join"] = json!(join);
        }
        out
    }
}

/// The phase a stage fails in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Setup,
    Init,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Setup => "Setup",
            Phase::Init => "Init",
        }
    }
}

/// One reason a stage fails Setup or Init (each emitted as `StageInitFailed`).
#[derive(Clone, Debug)]
pub struct InitFailure {
    pub phase: Phase,
    /// `StageDefinitionInvalid`, `InputsSchemaInvalid`, `UnknownTool`, … (docs/dry-run.md).
    pub reason: &'static str,
    pub detail: String,
    /// Where in the stage file, when it is one place.
    pub at: Option<Span>,
    /// Caused by the context the cassette supplies, not by the stage.
    pub from_ctx: bool,
    /// The `ctx.upstream` element that failed `inputsSchema`.
    pub upstream: Option<usize>,
}

/// The phase and reason name of a linter error that makes a stage fail, by rule code. Codes
/// not listed are not about executing the stage (or, like `sm/UnknownStageField`, are found by
/// Init's rendering as an unresolved placeholder).
fn failure_of(code: &str) -> Option<(Phase, &'static str)> {
    Some(match code {
        lint::FrontmatterSyntax
        | lint::MissingRequiredField
        | lint::FieldType
        | lint::InvalidStageId
        | lint::StageTurnCapTooLow
        | lint::InvalidRetryPolicy
        | lint::InvalidResolutionPolicy => (Phase::Setup, "StageDefinitionInvalid"),
        lint::InputsSchemaInvalid => (Phase::Setup, "InputsSchemaInvalid"),
        lint::UnknownTool => (Phase::Init, "UnknownTool"),
        lint::CompletionToolCollision => (Phase::Init, "CompletionToolCollision"),
        lint::StageCompletionSchemaInvalid => (Phase::Init, "CompletionSchemaInvalid"),
        lint::TemplateControlFlow | lint::MalformedPlaceholder => (Phase::Init, "TemplateInvalid"),
        lint::ForbiddenPlaceholder => (Phase::Init, "ForbiddenPlaceholder"),
        _ => return None,
    })
}

fn definition_failures(doc: &StageDoc) -> Vec<InitFailure> {
    lint::init_errors(doc)
        .into_iter()
        .filter_map(|d: Diagnostic| {
            let (phase, reason) = failure_of(d.code)?;
            Some(InitFailure { phase, reason, detail: d.message, at: Some(d.span), from_ctx: false, upstream: None })
        })
        .collect()
}

impl StageSpec {
    /// Reads what the runtime executes. A definition that breaks the contract still gives a
    /// spec (missing values take neutral defaults) whose `definition` says why Setup or Init
    /// fails, so the run can report it as events.
    pub fn read(doc: &StageDoc) -> StageSpec {
        let anchor = doc.stage_id().map_or(doc.anchor(), |(_, span)| span);
        let text = |field: &str| doc.field(field).and_then(Node::as_str).map(str::to_string);
        let stem = doc.file.path.file_stem().and_then(|s| s.to_str()).unwrap_or("stage").to_string();
        let id = text("id").unwrap_or(stem);
        let name = text("name").unwrap_or_else(|| id.clone());
        let allowed_tools = doc
            .field("allowedTools")
            .and_then(Node::as_seq)
            .map(|items| items.iter().map(Node::scalar_text).collect())
            .unwrap_or_default();
        let completion_tool = text("completionTool").unwrap_or_default();
        let completion_schema =
            doc.field("completionSchema").filter(|n| n.as_map().is_some()).map_or_else(|| json!({}), Node::to_json);
        let max_attempts = doc
            .field("retryPolicy")
            .and_then(|p| p.get("maxAttempts"))
            .and_then(Node::as_i64)
            .filter(|n| *n >= 1)
            .unwrap_or(1);
        let turn_cap = doc.field("turnCap").and_then(Node::as_i64).filter(|n| *n >= 1).unwrap_or(1);
        // Empty `nextStages` is `terminate`: no next, as when none is declared.
        let next = doc.next().filter(|plan| !plan.stages.is_empty()).map(|plan| Next {
            stages: plan.stages.iter().map(|(s, _)| s.clone()).collect(),
            parallel: plan.execution == Execution::Parallel,
            join: plan.join.map(|(j, _)| j),
        });
        let (body, body_offset) = match &doc.frontmatter {
            Some(fm) if fm.close_fence.is_some() => (doc.body().to_string(), fm.body.start),
            _ => (String::new(), 0),
        };
        StageSpec {
            file: doc.id(),
            path: doc.file.display.clone(),
            anchor,
            id,
            name,
            allowed_tools,
            completion_tool,
            completion_schema,
            inputs_schema: doc.field("inputsSchema").map(Node::to_json),
            max_attempts: u32::try_from(max_attempts).unwrap_or(u32::MAX),
            turn_cap: u32::try_from(turn_cap).unwrap_or(u32::MAX),
            next,
            next_key: doc.root.as_ref().and_then(|root| root.entry("next")).map(|e| e.key.span),
            inputs_schema_key: doc.root.as_ref().and_then(|root| root.entry("inputsSchema")).map(|e| e.key.span),
            frontmatter: doc.root.as_ref().map_or(Json::Null, Node::to_json),
            dialect: doc.config().dialect,
            definition: definition_failures(doc),
            optional_ctx: Vec::new(),
            body,
            body_offset,
            tags: doc.tags.clone(),
        }
    }

    /// Renders the body against `ctx` (Init). Placeholders of `dialect` are substituted; the
    /// other dialect and control tags stay verbatim, as the upstream engine leaves them. A value
    /// the context may lack renders empty, as the upstream engine renders a missing key:
    /// `ctx.upstream…` (empty on the entry stage and on parallel siblings) and the fields the
    /// state machine declares `optional` (`docs/decisions.md`).
    pub fn render(&self, ctx: &Json) -> Rendered {
        let dialect = self.dialect;
        let scope = json!({ "ctx": ctx, "stage": self.frontmatter });
        let mut text = String::with_capacity(self.body.len());
        let mut cursor = 0;
        let mut rendered = Rendered::default();
        for tag in self.tags.iter() {
            let TagKind::Path(path) = &tag.kind else { continue };
            if tag.dialect != dialect {
                rendered.verbatim += 1;
                continue;
            }
            let start = tag.span.start - self.body_offset;
            let end = tag.span.end - self.body_offset;
            text.push_str(&self.body[cursor..start]);
            cursor = end;
            match resolve(&scope, &path.segments) {
                Some(value) => {
                    text.push_str(&as_text(value));
                    rendered.resolved.push(path.text());
                }
                None if self.may_be_absent(&path.segments) => rendered.empty.push(path.text()),
                None => rendered.unresolved.push((path.text(), tag.span, path.root() == Some("ctx"))),
            }
        }
        text.push_str(&self.body[cursor..]);
        rendered.text = text;
        rendered
    }
}

impl StageSpec {
    /// Whether a `ctx` path names a value the context may lack.
    fn may_be_absent(&self, segments: &[Segment]) -> bool {
        let name = |i: usize| segments.get(i).and_then(Segment::name);
        name(0) == Some("ctx")
            && name(1).is_some_and(|field| field == "upstream" || self.optional_ctx.iter().any(|o| o == field))
    }
}

/// The rendered body and what happened to its placeholders.
#[derive(Clone, Debug, Default)]
pub struct Rendered {
    pub text: String,
    pub resolved: Vec<String>,
    /// Placeholders whose value the context may lack and lacks: they rendered empty.
    pub empty: Vec<String>,
    /// Placeholders with nothing behind them, with their span in the stage file and whether
    /// they read `ctx` (else `stage`: the definition's own defect).
    pub unresolved: Vec<(String, Span, bool)>,
    /// Tags of the other dialect, left as written.
    pub verbatim: usize,
}

fn resolve<'j>(scope: &'j Json, segments: &[Segment]) -> Option<&'j Json> {
    let mut at = scope;
    for segment in segments {
        at = match segment {
            Segment::Field { name, .. } => at.as_object()?.get(name.as_str())?,
            Segment::Index { index, .. } => at.as_array()?.get(*index)?,
        };
    }
    Some(at)
}

/// Strings as they are, anything else as JSON (what the upstream engine does).
fn as_text(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}
