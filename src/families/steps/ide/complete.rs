//! Completion: registry keys from the schema, values from the agent (step ids, intents,
//! validators, failure patterns, schema files and names) and the schema's enums; after `{uv-`
//! in a C3L prompt, the UV variables its step declares.

use crate::editor::{CompletionItem, CompletionKind, Cursor};
use crate::families::steps::model::{self, Agent, Doc, INTENTS, RUNTIME_SUPPLIED_UV_VARS, Step};
use crate::source::{Entry, Node, Span, json};
use crate::workspace::{FileKind, SourceFile, Workspace};

use super::locate::{self, Site, Slot};
use super::{Scope, Seg, key_at, kinds_allowing, matches, node_at, schema, step_detail, steps_prompting};

pub(crate) fn completions(workspace: &Workspace, at: Cursor) -> Vec<CompletionItem> {
    let file = workspace.file(at.file);
    if !file.text.is_char_boundary(at.offset) {
        return Vec::new();
    }
    match file.kind {
        FileKind::StepsRegistry => registry(workspace, file, at.offset),
        FileKind::AgentJson => agent_json(file, at.offset),
        FileKind::JsonSchema => schema_file(workspace, file, at.offset),
        FileKind::C3lPrompt => prompt(workspace, file, at.offset),
        _ => Vec::new(),
    }
}

/// The completion site in a JSON file, with its tree: parsed, or for a half-typed file the rest
/// of it with the member being typed blanked out.
fn json_site(text: &str, offset: usize) -> Option<(Site, Option<Node>)> {
    match json::parse(text).root {
        Some(root) => locate::site(&root, text, offset).map(|site| (site, Some(root))),
        None => locate::scan(text, offset).map(|(site, member)| (site, locate::repair(text, member))),
    }
}

/// The keys of the mapping at `path` in `root`, without the one being typed.
fn present_keys<'n>(root: Option<&'n Node>, path: &[Seg], offset: usize) -> Vec<&'n str> {
    let node = root.and_then(|root| node_at(root, path));
    let entries = node.and_then(Node::as_map).unwrap_or_default();
    entries.iter().filter(|e| !strictly_holds(e.key.span, offset)).filter_map(Entry::key_str).collect()
}

/// `agent.json`: keys by position and enum values, from `schemas/agent.schema.json`.
fn agent_json(file: &SourceFile, offset: usize) -> Vec<CompletionItem> {
    let Some((site, root)) = json_site(&file.text, offset) else { return Vec::new() };
    let candidates: Vec<Candidate> = match site.slot {
        Slot::Key => {
            let present = present_keys(root.as_ref(), &site.path, offset);
            schema::agent_fields(&site.path)
                .into_iter()
                .filter(|field| !present.contains(&field.name) && !field.deprecated)
                .map(|field| Candidate::new(field.name, CompletionKind::Field).detail(field.detail).doc(field.doc))
                .collect()
        }
        Slot::Value => schema::agent_values(&site.path)
            .into_iter()
            .map(|(value, doc)| Candidate::new(value, CompletionKind::Value).doc(doc))
            .collect(),
    };
    candidates.into_iter().map(|c| c.item(&site)).collect()
}

/// A step schema file: the intents inside the `enum` a step's `intentSchemaRef` points to (or,
/// without a registry to say so, an `enum` under an `action` property), without those listed.
fn schema_file(workspace: &Workspace, file: &SourceFile, offset: usize) -> Vec<CompletionItem> {
    let Some((site, root)) = json_site(&file.text, offset) else { return Vec::new() };
    if site.slot != Slot::Value {
        return Vec::new();
    }
    let n = site.path.len();
    let in_enum = n >= 2 && site.path[n - 2] == Seg::Key("enum".into()) && matches!(site.path[n - 1], Seg::Index(_));
    if !in_enum {
        return Vec::new();
    }
    let enum_path = &site.path[..n - 1];
    let by_name = n >= 3 && site.path[n - 3] == Seg::Key("action".into());
    let referenced = root
        .as_ref()
        .and_then(|root| node_at(root, enum_path))
        .is_some_and(|node| intent_enums(workspace, file).iter().any(|span| span.start == node.span.start));
    if !(by_name || referenced) {
        return Vec::new();
    }
    let listed: Vec<&str> = root
        .as_ref()
        .and_then(|root| node_at(root, enum_path))
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter(|n| !strictly_holds(n.span, offset))
        .filter_map(Node::as_str)
        .collect();
    INTENTS
        .iter()
        .filter(|intent| !listed.contains(intent))
        .map(|intent| intent_candidate(intent, CompletionKind::Value).item(&site))
        .collect()
}

/// The spans of the `enum` arrays in `file` that steps' `intentSchemaRef`s point to.
fn intent_enums(workspace: &Workspace, file: &SourceFile) -> Vec<Span> {
    let Some(scope) = Scope::schema(workspace, file) else { return Vec::new() };
    let agent = scope.agent();
    let mut out = Vec::new();
    for step in agent.steps() {
        let gate = step.get("structuredGate");
        let Some(pointer) = gate.and_then(|g| g.get("intentSchemaRef")).and_then(Node::as_str) else { continue };
        let Some(reference) = step.get("outputSchemaRef") else { continue };
        let (Some(name), Some(schema)) =
            (reference.get("file").and_then(Node::as_str), reference.get("schema").and_then(Node::as_str))
        else {
            continue;
        };
        let Ok(start) = crate::families::steps::schema_ref::step_schema(&agent, name, schema) else { continue };
        let Some(pointer) = pointer.strip_prefix('#') else { continue };
        if let Ok(Some(found)) = crate::families::steps::schema_ref::walk_pointer(&agent, start, pointer)
            && found.file() == file.id
            && let Some(list) = found.node.get("enum")
        {
            out.push(list.span);
        }
    }
    out
}

/// What one completion offers, before it is fitted to the site.
struct Candidate {
    label: String,
    kind: CompletionKind,
    detail: Option<String>,
    doc: Option<String>,
}

impl Candidate {
    fn new(label: impl Into<String>, kind: CompletionKind) -> Candidate {
        Candidate { label: label.into(), kind, detail: None, doc: None }
    }

    fn detail(mut self, detail: Option<String>) -> Candidate {
        self.detail = detail;
        self
    }

    fn doc(mut self, doc: Option<&str>) -> Candidate {
        self.doc = doc.map(str::to_string);
        self
    }

    /// Inside quotes the text goes in as is; elsewhere quoted, a key with its `: `.
    fn item(self, site: &Site) -> CompletionItem {
        let quoted = serde_json::Value::String(self.label.clone()).to_string();
        let escaped = &quoted[1..quoted.len() - 1];
        let comma = if site.comma { ", " } else { "" };
        let insert = match (site.quoted, site.slot) {
            (true, _) => (escaped != self.label).then(|| escaped.to_string()),
            (false, Slot::Key) => Some(format!("{comma}{quoted}: ")),
            (false, Slot::Value) => Some(format!("{comma}{quoted}")),
        };
        CompletionItem {
            label: self.label,
            kind: self.kind,
            detail: self.detail,
            documentation: self.doc,
            insert,
            replace: site.replace,
        }
    }
}

fn registry(workspace: &Workspace, file: &SourceFile, offset: usize) -> Vec<CompletionItem> {
    let parsed = json::parse(&file.text);
    let (site, root) = match parsed.root {
        Some(root) => match locate::site(&root, &file.text, offset) {
            Some(site) => (site, Some(root)),
            None => return Vec::new(),
        },
        // Mid-typing: where the cursor is comes from the text; the rest of the file, with the
        // half-typed member blanked out, still gives the model.
        None => match locate::scan(&file.text, offset) {
            Some((site, member)) => (site, locate::repair(&file.text, member)),
            None => return Vec::new(),
        },
    };
    let parsed = std::borrow::Cow::Owned(crate::source::Parsed { root, errors: parsed.errors });
    let scope = Scope::new(workspace, Doc { file, parsed });
    let agent = scope.agent();
    let candidates = match site.slot {
        Slot::Key => keys(&agent, &site, offset),
        Slot::Value => values(&agent, &site, offset),
    };
    candidates.into_iter().map(|c| c.item(&site)).collect()
}

/// Entries of the mapping at `path`, without the one being typed.
fn entries_at<'a>(agent: &Agent<'a, '_>, path: &[Seg], offset: usize) -> Vec<&'a Entry> {
    let node = agent.registry.root().and_then(|root| node_at(root, path));
    node.and_then(Node::as_map).unwrap_or_default().iter().filter(|e| !strictly_holds(e.key.span, offset)).collect()
}

/// The cursor is inside `span`, not at either end (the text being typed).
fn strictly_holds(span: Span, offset: usize) -> bool {
    span.start < offset && offset < span.end
}

fn keys(agent: &Agent, site: &Site, offset: usize) -> Vec<Candidate> {
    let path = &site.path;
    let present: Vec<&str> = entries_at(agent, path, offset).into_iter().filter_map(Entry::key_str).collect();
    // Without the step (a registry too broken to read), the schema lists every intent.
    if matches(path, &["steps", "*", "transitions"])
        && let Some(step) = agent.step(key_at(path, 1))
    {
        return step_intents(&step)
            .into_iter()
            .filter(|intent| !present.contains(intent))
            .map(|intent| intent_candidate(intent, CompletionKind::Field))
            .collect();
    }
    if matches(path, &["validationSteps"]) {
        let closures = agent.steps().into_iter().filter(|s| s.kind() == Some(model::StepKind::Closure));
        return closures.filter(|s| !present.contains(&s.id)).map(|s| step_candidate(&s)).collect();
    }
    let seed = crate::families::steps::release::facts_of(&agent.target).any(|f| f.seed_keys);
    schema::fields(path)
        .into_iter()
        .filter(|field| !present.contains(&field.name) && (seed || !field.deprecated))
        .map(|field| Candidate::new(field.name, CompletionKind::Field).detail(field.detail).doc(field.doc))
        .collect()
}

/// The intents `step` lists in `allowedIntents`, else those its kind allows.
fn step_intents<'a>(step: &Step<'a>) -> Vec<&'a str> {
    let listed: Vec<&str> =
        step.allowed_intents().into_iter().map(|(i, _)| i).filter(|i| INTENTS.contains(i)).collect();
    if !listed.is_empty() {
        return listed;
    }
    step.kind().map(|kind| model::allowed_intents_for(kind).to_vec()).unwrap_or_default()
}

fn intent_candidate(intent: &str, kind: CompletionKind) -> Candidate {
    let kinds = kinds_allowing(intent);
    let detail = if kinds.is_empty() { "intent".to_string() } else { format!("intent ({})", kinds.join(", ")) };
    Candidate::new(intent, kind).detail(Some(detail)).doc(schema::intent_doc(intent))
}

fn step_candidate(step: &Step) -> Candidate {
    Candidate::new(step.id, CompletionKind::Reference).detail(step_detail(step))
}

/// Values that name a step.
const STEP_SLOTS: [&[&str]; 6] = [
    &["entryStep"],
    &["entryStepMapping", "*"],
    &["steps", "*", "transitions", "*", "target"],
    &["steps", "*", "transitions", "*", "fallback"],
    &["steps", "*", "transitions", "*", "targets", "*"],
    &["validationSteps", "*", "stepId"],
];

fn values(agent: &Agent, site: &Site, offset: usize) -> Vec<Candidate> {
    let path = &site.path;
    let root = agent.registry.root();
    let names_in = |key: &str| -> Vec<&str> {
        root.and_then(|r| r.get(key))
            .and_then(Node::as_map)
            .unwrap_or_default()
            .iter()
            .filter_map(Entry::key_str)
            .collect()
    };
    if STEP_SLOTS.iter().any(|pattern| matches(path, pattern)) {
        return agent.steps().iter().map(step_candidate).collect();
    }
    if matches(path, &["steps", "*", "structuredGate", "allowedIntents", "#"]) {
        let step = agent.step(key_at(path, 1));
        let list = root.and_then(|r| node_at(r, &path[..path.len() - 1])).and_then(Node::as_seq).unwrap_or_default();
        let listed: Vec<&str> =
            list.iter().filter(|n| !strictly_holds(n.span, offset)).filter_map(Node::as_str).collect();
        let allowed = match step.and_then(|s| s.kind()) {
            Some(kind) => model::allowed_intents_for(kind).to_vec(),
            None => INTENTS.iter().copied().filter(|i| *i != "abort").collect(),
        };
        return allowed
            .into_iter()
            .filter(|i| !listed.contains(i))
            .map(|i| intent_candidate(i, CompletionKind::Value))
            .collect();
    }
    if matches(path, &["validationSteps", "*", "validationConditions", "#", "validator"]) {
        return names_in("validators")
            .into_iter()
            .map(|name| {
                let kind = root.and_then(|r| node_at(r, &seg_path(&["validators", name, "type"])));
                let detail = kind.and_then(Node::as_str).map(|t| format!("validator ({t})"));
                Candidate::new(name, CompletionKind::Reference).detail(detail.or(Some("validator".into())))
            })
            .collect();
    }
    if matches(path, &["validators", "*", "failurePattern"]) {
        return names_in("failurePatterns")
            .into_iter()
            .map(|name| {
                let description = root.and_then(|r| node_at(r, &seg_path(&["failurePatterns", name, "description"])));
                Candidate::new(name, CompletionKind::Reference)
                    .detail(Some("failure pattern".into()))
                    .doc(description.and_then(Node::as_str))
            })
            .collect();
    }
    if matches(path, &["*", "*", "outputSchemaRef", "file"]) {
        return schema_files(agent);
    }
    if matches(path, &["*", "*", "outputSchemaRef", "schema"]) {
        let file = root.and_then(|r| node_at(r, &path[..path.len() - 1])).and_then(|r| r.get("file"));
        let Some(doc) = file.and_then(Node::as_str).and_then(|name| agent.schema_file(name)) else {
            return Vec::new();
        };
        return schema_names(doc);
    }
    let mut values = schema::values(path);
    if matches(path, &["steps", "*", "structuredGate", "fallbackIntent"])
        && let Some(kind) = agent.step(key_at(path, 1)).and_then(|s| s.kind())
    {
        values.retain(|(value, _)| model::allowed_intents_for(kind).contains(value));
    }
    values.into_iter().map(|(value, doc)| Candidate::new(value, CompletionKind::Value).doc(doc)).collect()
}

fn seg_path(keys: &[&str]) -> Vec<Seg> {
    keys.iter().map(|k| Seg::Key(k.to_string())).collect()
}

/// The agent's schema files, relative to `schemas/`.
fn schema_files(agent: &Agent) -> Vec<Candidate> {
    let dir = agent.schemas_dir();
    let mut names: Vec<String> = agent
        .schemas
        .iter()
        .filter_map(|d| Some(d.path().strip_prefix(&dir).ok()?.to_string_lossy().replace('\\', "/")))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| Candidate::new(name, CompletionKind::Value).detail(Some("schema file".into())))
        .collect()
}

/// Keywords whose mapping values are not schemas `outputSchemaRef.schema` would name.
const SCHEMA_KEYWORDS: [&str; 5] =
    ["definitions", "properties", "patternProperties", "dependentSchemas", "dependencies"];

/// The names `outputSchemaRef.schema` can take in a schema file: `definitions`, `$defs`, then
/// the top-level schemas (climpt keys each step schema by its step id there).
fn schema_names(doc: &Doc) -> Vec<Candidate> {
    let Some(root) = doc.root() else { return Vec::new() };
    let section = |key: &'static str| {
        let entries = root.get(key).and_then(Node::as_map).unwrap_or_default().iter();
        entries.filter_map(move |e| Some((e.key_str()?, key)))
    };
    let top = root
        .as_map()
        .unwrap_or_default()
        .iter()
        .filter(|e| e.value.as_map().is_some())
        .filter_map(|e| e.key_str())
        .filter(|k| !k.starts_with('$') && !SCHEMA_KEYWORDS.contains(k))
        .map(|k| (k, "top level"));
    let mut seen: Vec<&str> = Vec::new();
    section("definitions")
        .chain(section("$defs"))
        .chain(top)
        .filter(|(name, _)| {
            let new = !seen.contains(name);
            seen.push(name);
            new
        })
        .map(|(name, section)| {
            Candidate::new(name, CompletionKind::Reference).detail(Some(format!("schema in {section}")))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// C3L prompts

fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-'
}

/// After `{` (a placeholder started: `{`, `{inp`, `{uv-`, `{uv-is`): the UV variables the steps
/// using this prompt declare, as `{uv-<name>}`, and `{input_text}`.
fn prompt(workspace: &Workspace, file: &SourceFile, offset: usize) -> Vec<CompletionItem> {
    let bytes = file.text.as_bytes();
    let Some(open) = file.text[..offset].rfind('{') else { return Vec::new() };
    let typed = &file.text[open + 1..offset];
    if !typed.bytes().all(is_name_byte) {
        return Vec::new();
    }
    let uv = typed.starts_with("uv-");
    let start = if uv { open + "{uv-".len() } else { open + 1 };
    let end = offset + bytes[offset..].iter().take_while(|b| is_name_byte(**b)).count();
    let closed = bytes.get(end) == Some(&b'}');
    let Some(scope) = Scope::prompt(workspace, file) else { return Vec::new() };
    let agent = scope.agent();
    let parameters = agent.parameter_names();
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    if !uv && "input_text".starts_with(typed) {
        out.push(CompletionItem {
            label: "input_text".into(),
            kind: CompletionKind::Variable,
            detail: Some("C3L input".into()),
            documentation: Some("The text piped to climpt on stdin (or given with `-i`).".into()),
            insert: (!closed).then(|| "input_text}".to_string()),
            replace: Span::new(start, end),
        });
    }
    for step in steps_prompting(&agent, file) {
        for (name, _) in step.uv_variables() {
            if seen.contains(&name) {
                continue;
            }
            seen.push(name);
            let source = if parameters.contains(&name) {
                Some(format!("Filled from the `agent.json` parameter `{name}`."))
            } else if RUNTIME_SUPPLIED_UV_VARS.contains(&name) {
                Some("Supplied by the runner.".to_string())
            } else {
                None
            };
            // After `{` alone, the item writes the `uv-` prefix too.
            let (label, text) =
                if uv { (name.to_string(), name.to_string()) } else { (format!("uv-{name}"), format!("uv-{name}")) };
            out.push(CompletionItem {
                label,
                kind: CompletionKind::Variable,
                detail: Some(format!("uvVariables of {}", step.id)),
                documentation: source,
                insert: Some(if closed { text } else { format!("{text}}}") }),
                replace: Span::new(start, end),
            });
        }
    }
    out
}
