//! What the runtime needs of a stage definition, read from the linter's `StageDoc`, and Init's
//! rendering of the body with the linter's own template parser.

use serde_json::{Value as Json, json};

use crate::diagnostic::FileId;
use crate::families::sm::model::{Execution, StageDoc};
use crate::source::{Node, Span};
use crate::template::stage::{Dialect, Segment, TagKind};

/// A stage as the runtime executes it.
#[derive(Clone, Debug)]
pub struct StageSpec {
    pub file: FileId,
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
    /// The frontmatter as JSON, for `{{stage.*}}`.
    pub frontmatter: Json,
    body: String,
    body_offset: usize,
    tags: Vec<crate::template::stage::Tag>,
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

/// Why a stage cannot be executed at all (a required field is missing or has the wrong type).
#[derive(Clone, Debug)]
pub struct Unusable {
    pub span: Span,
    pub message: String,
}

impl StageSpec {
    pub fn read(doc: &StageDoc) -> Result<StageSpec, Unusable> {
        let anchor = doc.stage_id().map_or(doc.anchor(), |(_, span)| span);
        let missing = |field: &str, what: &str| Unusable {
            span: doc.field(field).map_or(doc.anchor(), |n| n.span),
            message: format!("`{field}` must be {what}; the stage fails Init without it"),
        };
        let root = doc.root.as_ref().ok_or_else(|| Unusable {
            span: doc.anchor(),
            message: "the frontmatter does not parse; the stage fails Init".into(),
        })?;
        let text = |field: &str| doc.field(field).and_then(Node::as_str).map(str::to_string);
        let id = text("id").ok_or_else(|| missing("id", "a string"))?;
        let name = text("name").unwrap_or_else(|| id.clone());
        let allowed_tools = match doc.field("allowedTools").map(|n| n.as_seq()) {
            Some(Some(items)) => items.iter().map(Node::scalar_text).collect(),
            _ => return Err(missing("allowedTools", "a list of tool names")),
        };
        let completion_tool = text("completionTool").ok_or_else(|| missing("completionTool", "a tool name"))?;
        let completion_schema = doc
            .field("completionSchema")
            .filter(|n| n.as_map().is_some())
            .map(Node::to_json)
            .ok_or_else(|| missing("completionSchema", "a JSON Schema object"))?;
        let max_attempts = doc
            .field("retryPolicy")
            .and_then(|p| p.get("maxAttempts"))
            .and_then(Node::as_i64)
            .filter(|n| *n >= 1)
            .ok_or_else(|| missing("retryPolicy", "`{ maxAttempts: n ≥ 1, backoff }`"))?;
        let turn_cap = doc
            .field("turnCap")
            .and_then(Node::as_i64)
            .filter(|n| *n >= 1)
            .ok_or_else(|| missing("turnCap", "a positive integer"))?;
        let next = doc.next().map(|plan| Next {
            stages: plan.stages.iter().map(|(s, _)| s.clone()).collect(),
            parallel: plan.execution == Execution::Parallel,
            join: plan.join.map(|(j, _)| j),
        });
        let (body, body_offset) = match &doc.frontmatter {
            Some(fm) => (doc.body().to_string(), fm.body.start),
            None => (String::new(), 0),
        };
        Ok(StageSpec {
            file: doc.id(),
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
            frontmatter: root.to_json(),
            body,
            body_offset,
            tags: doc.tags.clone(),
        })
    }

    /// Renders the body against `ctx` (Init). Placeholders of `dialect` are substituted; the
    /// other dialect and control tags stay verbatim, as the upstream engine leaves them.
    pub fn render(&self, ctx: &Json, dialect: Dialect) -> Rendered {
        let scope = json!({ "ctx": ctx, "stage": self.frontmatter });
        let mut text = String::with_capacity(self.body.len());
        let mut cursor = 0;
        let mut rendered = Rendered::default();
        for tag in &self.tags {
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
                None => rendered.unresolved.push((path.text(), tag.span)),
            }
        }
        text.push_str(&self.body[cursor..]);
        rendered.text = text;
        rendered
    }
}

/// The rendered body and what happened to its placeholders.
#[derive(Clone, Debug, Default)]
pub struct Rendered {
    pub text: String,
    pub resolved: Vec<String>,
    /// Placeholders with nothing behind them, with their span in the stage file.
    pub unresolved: Vec<(String, Span)>,
    /// Tags of the other dialect, left as written.
    pub verbatim: usize,
}

fn resolve<'j>(scope: &'j Json, segments: &[Segment]) -> Option<&'j Json> {
    let mut at = scope;
    for segment in segments {
        at = match segment {
            Segment::Field { name, .. } => at.as_object()?.get(name)?,
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
