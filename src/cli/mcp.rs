//! `stagelint mcp`: a Model Context Protocol server on standard input and output, for coding
//! agents (Claude Code, Codex, Copilot) that write workflow definitions and cannot see an
//! editor's diagnostics. Tools: `check`, `explain`, `dry_run`, `fix`, `rules`, each calling the
//! library as the command line does.
//!
//! Roots: the client's (`roots/list`, or for a `2026-07-28` client the same request as an
//! input-required result), else the working directory. A path outside them is refused, no
//! config is looked for above them and discovery reads nothing outside them. No tool touches
//! the network; `fix` writes only when asked. A bad argument, a path outside the roots or a
//! failure inside a tool is a tool error with a message, never a protocol error or a crash.

// Roots are deprecated by SEP-2577 (`2026-07-28`), yet they are still how a client says which
// directories it works in, and the SDK still carries them: read them while clients send them.
#![allow(deprecated)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, InputRequest, InputRequiredResult,
    ListRootsRequest, ListRootsResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

use stagelint::diagnostic::Diagnostic;
use stagelint::workspace::discover::{ConfigCache, absolute, discover, normalize};

use super::Failure;

/// Runs the server until the client closes the connection.
pub fn run() -> Result<ExitCode, Failure> {
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the MCP server: {e}"))?;
    runtime
        .block_on(async move {
            let server = Server { cwd, roots: Arc::new(Mutex::new(None)) };
            let running = server.serve(rmcp::transport::stdio()).await.map_err(|e| format!("MCP: {e}"))?;
            running.waiting().await.map_err(|e| format!("MCP: {e}"))?;
            Ok::<_, String>(ExitCode::SUCCESS)
        })
        .map_err(Failure::from)
}

/// The key of the roots request in an input-required result.
const ROOTS_REQUEST: &str = "roots";

struct Server {
    cwd: PathBuf,
    /// The roots a client before `2026-07-28` listed (asked once, again after it says they
    /// changed).
    roots: Arc<Mutex<Option<Vec<PathBuf>>>>,
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let instructions = "stagelint lints and dry-runs LLM agent-workflow definitions: stud-cli stage files and state machines (sm.yaml), climpt agents (steps_registry.json, agent.json), Last Light workflows (workflows/*.yaml) and @bastani/atomic TypeScript workflows. After writing or editing such files, call `check` on them and fix what it reports (`explain` says what a code means, `fix` applies the fixes stagelint knows); call `dry_run` on a stage, state machine, climpt agent or Last Light workflow that has a cassette to replay it.";
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(rmcp::model::Implementation::new("stagelint", env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let roots = match self.roots(&request, &context).await {
            Ok(roots) => roots,
            Err(ask) => return Ok(ask),
        };
        let name = request.name.to_string();
        let arguments = request.arguments.unwrap_or_default();
        // The work reads files and replays cassettes: off the protocol task, and a panic in it
        // is a tool error, not the end of the server.
        let done = tokio::task::spawn_blocking(move || call(&name, &arguments, &roots)).await;
        let result = match done {
            Ok(Ok(value)) => CallToolResult::structured(value),
            Ok(Err(message)) => CallToolResult::error(vec![ContentBlock::text(message)]),
            Err(_) => CallToolResult::error(vec![ContentBlock::text(
                "internal error: the tool failed (a bug in stagelint; please report it with the files involved)",
            )]),
        };
        Ok(CallToolResponse::Complete(result))
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        *self.roots.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }
}

impl Server {
    /// The roots for this call: what the client answered, what it listed before, or the
    /// working directory when it has none to give; `Err` with the input-required result that
    /// asks a `2026-07-28` client for them.
    async fn roots(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Vec<PathBuf>, CallToolResponse> {
        if let Some(answer) = request.input_responses.as_ref().and_then(|r| r.get(ROOTS_REQUEST)) {
            let listed: Option<ListRootsResult> = serde_json::from_value(answer.clone()).ok();
            return Ok(self.or_cwd(listed.map(|l| paths_of(&l)).unwrap_or_default()));
        }
        let offers_roots = context.client_capabilities().is_some_and(|c| c.roots.is_some());
        if !offers_roots {
            return Ok(vec![self.cwd.clone()]);
        }
        let stateless = context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        if stateless {
            // Servers may not send requests to these clients: the call asks for the roots instead.
            let ask = ListRootsRequest { method: Default::default(), extensions: Default::default() };
            let requests = [(ROOTS_REQUEST.to_string(), InputRequest::ListRoots(ask))].into_iter().collect();
            return Err(CallToolResponse::InputRequired(InputRequiredResult::from_input_requests(requests)));
        }
        if let Some(known) = self.roots.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone() {
            return Ok(known);
        }
        #[allow(deprecated)]
        let listed = context.peer.list_roots().await.ok().map(|l| paths_of(&l)).unwrap_or_default();
        let roots = self.or_cwd(listed);
        *self.roots.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(roots.clone());
        Ok(roots)
    }

    fn or_cwd(&self, roots: Vec<PathBuf>) -> Vec<PathBuf> {
        if roots.is_empty() { vec![self.cwd.clone()] } else { roots }
    }
}

/// The local directories among a client's roots (`file://` URIs).
fn paths_of(listed: &ListRootsResult) -> Vec<PathBuf> {
    listed
        .roots
        .iter()
        .filter_map(|root| root.uri.strip_prefix("file://"))
        .map(|path| PathBuf::from(percent_decode(path)))
        .filter(|path| path.is_absolute())
        .map(|path| std::fs::canonicalize(&path).unwrap_or(path))
        .collect()
}

/// `%XX` escapes of a URI path decoded (invalid ones kept as written).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) =
                (bytes.get(i + 1).and_then(|b| hex(*b)), bytes.get(i + 2).and_then(|b| hex(*b)))
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The tools, with descriptions written for an agent: what each returns and when to call it.
fn tools() -> Vec<Tool> {
    let paths = json!({
        "type": "array", "items": {"type": "string"},
        "description": "Files or directories, absolute or relative to the first root. Default: the roots."
    });
    let codes = |what: &str| json!({"type": "array", "items": {"type": "string"}, "description": what});
    let read_only = ToolAnnotations::new().read_only(true).destructive(false).idempotent(true).open_world(false);
    let tool = |name: &'static str, description: &'static str, schema: Value, annotations: &ToolAnnotations| {
        let schema = match schema {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Tool::new(name, description, schema).with_annotations(annotations.clone())
    };
    vec![
        tool(
            "check",
            "Lint agent-workflow definitions (stages, state machines, climpt agents, Last Light and atomic workflows, dry-run cassettes). Returns the findings as `stagelint check --format json` does: `diagnostics` (each with `path`, `code`, `severity`, `message`, 1-based `range`, `help` and a `fix` when stagelint has one) and a `summary`. Call it after writing or editing such files; an empty `diagnostics` list means clean. Findings a baseline accepts are counted in the summary, not listed.",
            json!({"type": "object", "properties": {
                "paths": paths,
                "select": codes("Report only these codes or families (`sm`, `sm/UnknownTool`)."),
                "ignore": codes("Do not report these codes or families."),
            }, "additionalProperties": false}),
            &read_only,
        ),
        tool(
            "explain",
            "Explain a rule code (such as `sm/UnknownTool`, or its name alone) or a topic (`dry-run`, `decisions`, `configuration`, `versions`, `security`): what it checks, why, an example that fires and what to write instead. Returns `text` (Markdown). Call it when a finding's message is not enough to fix it.",
            json!({"type": "object", "properties": {
                "topic": {"type": "string", "description": "A rule code, a rule name, a family (`sm`) or a topic; omit it for the list of all."},
            }, "additionalProperties": false}),
            &read_only,
        ),
        tool(
            "dry_run",
            "Replay a stage, a whole state machine, a climpt agent or a Last Light workflow against its recorded cassette, with no model and no network: every tool and model call is answered from the cassette. Returns `events` (the event stream, one object per event), `timeline` (the same for reading), `findings` (mismatches on cassette lines, as `check` reports them) and `exitCode` (0: every expectation held, 1: a mismatch, 2: the definitions or the cassette stop the run). Call it after changing a stage that has a `<id>.cassette.yaml`, a state machine with `sm.cassette.yaml`, a climpt agent with `agent.cassette.yaml`, or a Last Light workflow with `cassettes/<name>.cassette.yaml` beside it.",
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "A stage file, a state machine (its directory or sm.yaml), a climpt agent (its directory or steps_registry.json), or a Last Light workflow (workflows/<name>.yaml)."},
                "cassette": {"type": "string", "description": "The cassette to replay (default: the definition's own, by convention beside it)."},
                "strict": {"type": "boolean", "description": "Request drift (a changed prompt or tool set) fails the run."},
            }, "required": ["path"], "additionalProperties": false}),
            &read_only,
        ),
        tool(
            "fix",
            "Compute the fixes stagelint knows for the findings in `paths` and return them as a unified `diff`, with `applied` (how many) and `files` (which would change). Safe fixes only unless `unsafe` is true (did-you-mean renames, which need review). Nothing is written unless `apply` is true; then the files are written and `remaining` lists the findings left. Call it without `apply` first and read the diff.",
            json!({"type": "object", "properties": {
                "paths": paths,
                "unsafe": {"type": "boolean", "description": "Apply unsafe fixes too."},
                "apply": {"type": "boolean", "description": "Write the fixed files (default: only return the diff)."},
            }, "additionalProperties": false}),
            &ToolAnnotations::new().read_only(false).destructive(false).idempotent(true).open_world(false),
        ),
        tool(
            "rules",
            "List every rule: `code`, default `severity`, whether it has a `fix`, and a one-line `summary`. Call it to find the code to pass to `explain`, `select` or `ignore`.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            &read_only,
        ),
    ]
}

/// Runs tool `name`; `Err` is the message of a tool error.
fn call(name: &str, arguments: &Map<String, Value>, roots: &[PathBuf]) -> Result<Value, String> {
    let known: &[&str] = match name {
        "check" => &["paths", "select", "ignore"],
        "explain" => &["topic"],
        "dry_run" => &["path", "cassette", "strict"],
        "fix" => &["paths", "unsafe", "apply"],
        "rules" => &[],
        _ => return Err(format!("unknown tool `{name}`; the tools are check, explain, dry_run, fix and rules")),
    };
    if let Some(other) = arguments.keys().find(|k| !known.contains(&k.as_str())) {
        let expected = if known.is_empty() { "none".to_string() } else { known.join(", ") };
        return Err(format!("`{name}` takes no argument `{other}` (it takes: {expected})"));
    }
    let args = Args { name, arguments, roots };
    match name {
        "check" => check(&args),
        "explain" => {
            let topic = args.string("topic")?;
            Ok(json!({"text": super::explain::text(topic.as_deref())?}))
        }
        "dry_run" => dry_run(&args),
        "fix" => fix(&args),
        _ => Ok(rules()),
    }
}

/// A call's arguments, read with messages that say what was expected.
struct Args<'a> {
    name: &'a str,
    arguments: &'a Map<String, Value>,
    roots: &'a [PathBuf],
}

impl Args<'_> {
    fn string(&self, key: &str) -> Result<Option<String>, String> {
        match self.arguments.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(other) => Err(format!("`{key}` of `{}` is a string, not {other}", self.name)),
        }
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, String> {
        match self.arguments.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| format!("`{key}` of `{}` is a list of strings", self.name)),
            Some(Value::String(one)) => Ok(vec![one.clone()]),
            Some(other) => Err(format!("`{key}` of `{}` is a list of strings, not {other}", self.name)),
        }
    }

    fn flag(&self, key: &str) -> Result<bool, String> {
        match self.arguments.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(on)) => Ok(*on),
            Some(other) => Err(format!("`{key}` of `{}` is true or false, not {other}", self.name)),
        }
    }

    /// `paths` resolved inside the roots (default: the roots themselves).
    fn paths(&self) -> Result<Vec<PathBuf>, String> {
        let named = self.strings("paths")?;
        if named.is_empty() {
            return Ok(self.roots.to_vec());
        }
        named.iter().map(|p| self.inside(p)).collect()
    }

    /// `path` made absolute (relative to the first root) and refused unless it exists and its
    /// real path is inside a root.
    fn inside(&self, path: &str) -> Result<PathBuf, String> {
        if path.is_empty() {
            return Err("an empty path names nothing".into());
        }
        let given = Path::new(path);
        let joined = if given.is_absolute() { given.to_path_buf() } else { self.roots[0].join(given) };
        let Ok(real) = std::fs::canonicalize(&joined) else {
            return Err(format!("{path}: no such file or directory"));
        };
        if !self.roots.iter().any(|root| real.starts_with(root)) {
            let shown: Vec<String> = self.roots.iter().map(|r| r.display().to_string()).collect();
            return Err(format!(
                "{path} is outside the roots this server may read ({}); name a file inside them",
                shown.join(", ")
            ));
        }
        Ok(real)
    }

    /// The configs of a run: nothing looked for, or read, outside the roots.
    fn configs(&self) -> ConfigCache {
        ConfigCache::new(None).with_ceiling(self.roots.to_vec())
    }
}

fn check(args: &Args) -> Result<Value, String> {
    let paths = args.paths()?;
    let selection = stagelint::select::Selection::parse(&args.strings("select")?, &args.strings("ignore")?)?;
    // As `stagelint check`: a broken config is a finding on itself, the rest is checked.
    let mut configs = args.configs().tolerant();
    let workspace = discover(&paths, &mut configs).map_err(|e| e.to_string())?;
    let diagnostics = selection.apply(stagelint::check::check(&workspace));
    json_report(&workspace, &diagnostics)
}

/// The findings as `--format json` gives them.
fn json_report(workspace: &stagelint::workspace::Workspace, diagnostics: &[Diagnostic]) -> Result<Value, String> {
    let mut out = Vec::new();
    stagelint::render::json::render(&mut out, workspace, diagnostics, &stagelint::check::notes(workspace))
        .map_err(|e| e.to_string())?;
    serde_json::from_slice(&out).map_err(|e| e.to_string())
}

fn dry_run(args: &Args) -> Result<Value, String> {
    let path = args.string("path")?.ok_or("`dry_run` needs `path`: a stage file or a state machine")?;
    let path = args.inside(&path)?;
    let cassette = args.string("cassette")?.map(|c| args.inside(&c)).transpose()?;
    let options = stagelint::runtime::Options { strict: args.flag("strict")?, explain_init: true };
    let mut configs = args.configs();
    let (workspace, run) =
        stagelint::runtime::dry_run_path(&path, cassette.as_deref(), options, &mut configs, &HashMap::new())?;
    let events: Vec<Value> = run.trace.events.iter().map(|e| e.to_json()).collect();
    let findings: Vec<Value> = run.findings.iter().map(|d| stagelint::render::json::finding(&workspace, d)).collect();
    Ok(json!({
        "title": run.title,
        "exitCode": run.exit_code(),
        "events": events,
        "timeline": stagelint::runtime::report::timeline(&workspace, &run),
        "findings": findings,
    }))
}

fn fix(args: &Args) -> Result<Value, String> {
    let paths = args.paths()?;
    let (unsafe_fixes, apply) = (args.flag("unsafe")?, args.flag("apply")?);
    let mut configs = args.configs().tolerant();
    // What a baseline accepts is not fixed (as on the command line).
    let select = |found: Vec<Diagnostic>| {
        found.into_iter().map(|d| if d.baselined { Diagnostic { fix: None, ..d } } else { d }).collect()
    };
    let fixed = stagelint::fix::fix_paths(&paths, &mut configs, &select, unsafe_fixes, HashMap::new())
        .map_err(|e| e.to_string())?;
    let diff: String = fixed.changed.iter().map(stagelint::fix::unified_diff).collect();
    let files: Vec<String> = fixed.changed.iter().map(|c| c.path.display().to_string()).collect();
    if let Some(outside) =
        fixed.changed.iter().find(|c| !args.roots.iter().any(|r| normalize(&absolute(&c.path)).starts_with(r)))
    {
        return Err(format!("a fix would write {}, outside the roots; nothing was written", outside.path.display()));
    }
    if apply {
        stagelint::fix::write_back(&fixed.changed)?;
    }
    let remaining = json_report(&fixed.workspace, &fixed.diagnostics)?;
    Ok(json!({
        "applied": fixed.applied,
        "written": apply && !fixed.changed.is_empty(),
        "files": files,
        "diff": diff,
        "remaining": if apply { remaining["diagnostics"].clone() } else { Value::Null },
    }))
}

fn rules() -> Value {
    let rules: Vec<Value> = stagelint::families::all_rules()
        .map(|r| json!({"code": r.code, "severity": r.severity.as_str(), "fix": r.fixable, "summary": r.summary()}))
        .collect();
    json!({"rules": rules})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_paths_are_percent_decoded() {
        assert_eq!(percent_decode("/a%20b/%C3%9F"), "/a b/ß");
        assert_eq!(percent_decode("/100%"), "/100%");
    }
}
