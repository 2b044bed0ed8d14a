//! Typed, spanned views of stage definitions and state-machine files.

use std::path::Path;

use crate::config::Config;
use crate::diagnostic::FileId;
use crate::source::{Node, Span, SyntaxError, json, yaml};
use crate::workspace::SourceFile;
pub use crate::workspace::StageParts;

/// The eight fields every stage must declare, in the order the wiki lists them.
pub const REQUIRED_FIELDS: [&str; 8] =
    ["id", "name", "allowedTools", "completionTool", "completionSchema", "retryPolicy", "turnCap", "resolutionPolicy"];

/// Optional fields the contract defines, plus `next` (the stage's NextResult).
pub const OPTIONAL_FIELDS: [&str; 4] = ["description", "inputsSchema", "tags", "next"];

/// Fields of a StageResult, as `ctx.upstream[i].<field>` sees them.
pub const STAGE_RESULT_FIELDS: [&str; 6] = ["verdict", "reason", "parsed", "capHit", "attemptCount", "output"];

/// `ctx` names provided by core; everything else is SM-written.
pub const CORE_CTX_FIELDS: [&str; 3] = ["upstream", "workflowRunId", "stageExecutionId"];

/// One parsed stage definition: a view of the file and its parse.
#[derive(Clone, Copy, Debug)]
pub struct StageDoc<'w> {
    pub file: &'w SourceFile,
    parts: &'w StageParts,
}

impl std::ops::Deref for StageDoc<'_> {
    type Target = StageParts;

    fn deref(&self) -> &StageParts {
        self.parts
    }
}

impl<'w> StageDoc<'w> {
    pub fn parse(file: &'w SourceFile) -> StageDoc<'w> {
        StageDoc { file, parts: file.stage_parts.get_or_init(|| Box::new(StageParts::parse(&file.text))) }
    }
}

impl<'w> StageDoc<'w> {
    pub fn id(&self) -> FileId {
        self.file.id
    }

    pub fn config(&self) -> &Config {
        &self.file.config
    }

    /// The value under a top-level frontmatter key.
    pub fn field(&self, key: &str) -> Option<&Node> {
        self.root.as_ref()?.get(key)
    }

    /// The stage id when it is a string.
    pub fn stage_id(&self) -> Option<(&str, Span)> {
        let node = self.field("id")?;
        Some((node.as_str()?, node.span))
    }

    /// The id of a stage whose frontmatter does not parse, read from its `id:` line, so that
    /// the stages naming it are not told it does not exist (its syntax error is the finding).
    pub fn scanned_id(&self) -> Option<&str> {
        if self.root.as_ref().is_some_and(|root| root.as_map().is_some()) {
            return None;
        }
        let fm = self.frontmatter.as_ref()?;
        scan_id(self.file.text.get(fm.yaml.start..fm.yaml.end)?)
    }

    /// The id of a stage whose fields sit in a block after blank or comment lines
    /// (`sm/FrontmatterNotFirst`): the runtime does not read it, but a reference to it can say why.
    pub fn hidden_id(&self) -> Option<&str> {
        if self.frontmatter.is_some() {
            return None;
        }
        let (at, _) = crate::source::frontmatter::late_start(&self.file.text)?;
        let rest = &self.file.text[at..];
        let fm = crate::source::frontmatter::split(rest)?;
        scan_id(&rest[fm.yaml.start..fm.yaml.end])
    }

    pub fn completion_tool(&self) -> Option<(&str, Span)> {
        let node = self.field("completionTool")?;
        Some((node.as_str()?, node.span))
    }

    /// Where "the whole stage" findings point: the opening fence, else the file start.
    pub fn anchor(&self) -> Span {
        self.frontmatter.as_ref().map_or(Span::empty(0), |fm| fm.open_fence)
    }

    /// The text of `span`, shortened for messages.
    pub fn source_text(&self, span: Span) -> String {
        let text = self.file.text.get(span.start..span.end).unwrap_or("").trim();
        match text.char_indices().nth(40) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text.to_string(),
        }
    }

    /// The body text (empty when the frontmatter is unclosed).
    pub fn body(&self) -> &str {
        match &self.frontmatter {
            Some(fm) if fm.close_fence.is_some() => &self.file.text[fm.body.start..fm.body.end],
            _ => "",
        }
    }

    /// The stage's `next`, when it has the right shape (type errors are `sm/FieldType`'s job).
    pub fn next(&self) -> Option<NextPlan> {
        NextPlan::read(self.field("next")?)
    }
}

/// The values of `next.execution`.
pub const EXECUTIONS: [&str; 2] = ["sequential", "parallel"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Execution {
    Sequential,
    Parallel,
}

/// A stage's declared successors.
#[derive(Clone, Debug)]
pub struct NextPlan {
    pub span: Span,
    pub stages: Vec<(String, Span)>,
    /// Span of the `nextStages`/`stages` value, when present.
    pub stages_span: Option<Span>,
    pub execution: Execution,
    /// Whether `execution` is a value no did-you-mean reads (`sm/FieldType`): the plan's shape is
    /// then unknown, and the rules that depend on it stay silent.
    pub execution_unknown: bool,
    pub execution_span: Option<Span>,
    pub join: Option<(String, Span)>,
    /// Span of the `join` key, for findings about the key itself.
    pub join_key: Option<Span>,
}

impl NextPlan {
    fn read(node: &Node) -> Option<NextPlan> {
        node.as_map()?;
        let list = node.get("nextStages").or_else(|| node.get("stages"));
        let stages = list
            .and_then(Node::as_seq)
            .map(|items| items.iter().filter_map(|n| Some((n.as_str()?.to_string(), n.span))).collect())
            .unwrap_or_default();
        let execution_node = node.get("execution");
        // A misspelt value (`Parallel`) is `sm/FieldType`, with its did-you-mean as the fix; the
        // graph rules read what it means rather than report its consequences as well.
        let written = execution_node.and_then(Node::as_str).unwrap_or("sequential");
        let meant = crate::util::did_you_mean(written, EXECUTIONS).unwrap_or(written);
        let execution = match meant {
            "parallel" => Execution::Parallel,
            _ => Execution::Sequential,
        };
        let join_entry = node.entry("join");
        let join = join_entry.and_then(|e| Some((e.value.as_str()?.to_string(), e.value.span)));
        Some(NextPlan {
            span: node.span,
            stages,
            stages_span: list.map(|n| n.span),
            execution,
            execution_unknown: !EXECUTIONS.contains(&meant),
            execution_span: execution_node.map(|n| n.span),
            join,
            join_key: join_entry.map(|e| e.key.span),
        })
    }
}

/// One `sm.yaml` / `sm.json`.
#[derive(Debug)]
pub struct SmDoc<'w> {
    pub file: &'w SourceFile,
    pub root: Option<Node>,
    pub syntax_errors: Vec<SyntaxError>,
}

impl<'w> SmDoc<'w> {
    pub fn parse(file: &'w SourceFile) -> SmDoc<'w> {
        let parsed = if file.path.extension().is_some_and(|e| e == "json") {
            json::parse(&file.text)
        } else {
            yaml::parse(&file.text)
        };
        SmDoc { file, root: parsed.root, syntax_errors: parsed.errors }
    }

    /// The directory the state machine owns.
    pub fn dir(&self) -> &Path {
        self.file.path.parent().unwrap_or(Path::new("/"))
    }

    pub fn entry(&self) -> Option<(&str, Span)> {
        let node = self.root.as_ref()?.get("entry")?;
        Some((node.as_str()?, node.span))
    }

    /// The declared ctx fields, when `context` is declared with the right shape.
    pub fn context(&self) -> Option<ContextDecl> {
        let node = self.root.as_ref()?.get("context")?;
        node.as_map()?;
        let listed = |key: &str| -> Vec<String> {
            let items = node.get(key).and_then(Node::as_seq).unwrap_or_default();
            items.iter().filter_map(|n| n.as_str().map(str::to_string)).collect()
        };
        let optional = listed("optional");
        let mut names = listed("required");
        names.extend(optional.iter().cloned());
        Some(ContextDecl { span: node.span, names, optional })
    }
}

/// The SM's declared ctx fields.
#[derive(Clone, Debug)]
pub struct ContextDecl {
    pub span: Span,
    /// Every declared field, required then optional.
    pub names: Vec<String>,
    /// The fields the state machine may leave out: a placeholder reading one renders empty.
    pub optional: Vec<String>,
}

/// A state machine: its file (when there is one) and the stages under its directory.
#[derive(Debug)]
pub struct Machine<'a, 'w> {
    pub sm: &'a SmDoc<'w>,
    pub stages: Vec<&'a StageDoc<'w>>,
}

/// Groups stages under the nearest state-machine directory above them.
pub fn group<'a, 'w>(sms: &'a [SmDoc<'w>], stages: &'a [StageDoc<'w>]) -> Vec<Machine<'a, 'w>> {
    let mut machines: Vec<Machine<'a, 'w>> = sms.iter().map(|sm| Machine { sm, stages: Vec::new() }).collect();
    // The first SM file of a directory owns it; a second one is reported by its own checks.
    let mut by_dir: crate::util::FastMap<&Path, usize> = Default::default();
    for (index, sm) in sms.iter().enumerate() {
        by_dir.entry(sm.dir()).or_insert(index);
    }
    for stage in stages {
        let owner = stage.file.path.ancestors().skip(1).find_map(|dir| by_dir.get(dir));
        if let Some(&index) = owner {
            machines[index].stages.push(stage);
        }
    }
    machines
}

/// The value of a top-level `id:` line, read textually.
fn scan_id(yaml: &str) -> Option<&str> {
    yaml.lines().find_map(|line| {
        let value = line.strip_prefix("id:")?;
        let value = value.split(" #").next().unwrap_or("").trim().trim_matches(|c| c == '"' || c == '\'');
        (!value.is_empty()).then_some(value)
    })
}
