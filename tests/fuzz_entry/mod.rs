//! The fuzz targets' bodies, shared by `fuzz/fuzz_targets/*.rs` (which include this file) and
//! `tests/fuzz_regressions.rs` (which runs every saved input on stable). Each function takes
//! the raw input bytes, drives one entry point and panics when an invariant breaks: spans out
//! of range or off a character boundary, JSON output that does not parse, a YAML round trip
//! that changes the value.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use stagelint::config::Config;
use stagelint::diagnostic::{Diagnostic, Severity};
use stagelint::source::{LineIndex, Node, Parsed, Span, SyntaxError, Value, frontmatter, json, yaml, yaml_write};
use stagelint::template::{c3l, lastlight, markdown, secrets, stage, until};
use stagelint::workspace::{FileKind, Workspace, classify};

/// A target's body: the input bytes in, a panic when an invariant breaks.
pub type Target = fn(&[u8]);

/// The targets, by the name of their directory under `fuzz/corpus/` and `tests/fuzz_regressions/`.
pub const TARGETS: &[(&str, Target)] = &[
    ("frontmatter", frontmatter_target),
    ("yaml", yaml_target),
    ("json", json_target),
    ("yaml_roundtrip", yaml_roundtrip_target),
    ("stage_template", stage_template_target),
    ("lastlight_template", lastlight_template_target),
    ("c3l", c3l_target),
    ("cassette", cassette_target),
    ("check", check_target),
    ("render", render_target),
    #[cfg(feature = "lsp")]
    ("lsp", lsp_target),
];

fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

#[track_caller]
fn assert_span(text: &str, span: Span, what: &str) {
    assert!(
        span.start <= span.end && span.end <= text.len(),
        "{what}: span {span:?} outside a text of {} bytes",
        text.len()
    );
    assert!(
        text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
        "{what}: span {span:?} splits a character"
    );
}

fn assert_tree(text: &str, node: &Node) {
    assert_span(text, node.span, "node");
    match &node.value {
        Value::Seq(items) => items.iter().for_each(|n| assert_tree(text, n)),
        Value::Map(entries) => entries.iter().for_each(|e| {
            assert_tree(text, &e.key);
            assert_tree(text, &e.value);
        }),
        _ => {}
    }
}

fn assert_errors(text: &str, errors: &[SyntaxError]) {
    for error in errors {
        assert_span(text, error.span, "syntax error");
        if let Some((span, _)) = &error.related {
            assert_span(text, *span, "syntax error's related span");
        }
    }
}

pub fn frontmatter_target(data: &[u8]) {
    let text = text(data);
    if let Some(parts) = frontmatter::split(&text) {
        assert_span(&text, parts.open_fence, "open fence");
        assert_span(&text, parts.yaml, "yaml");
        assert_span(&text, parts.body, "body");
        assert!(parts.open_fence.end <= parts.yaml.start && parts.yaml.end <= parts.body.start);
        if let Some(close) = parts.close_fence {
            assert_span(&text, close, "close fence");
            assert!(parts.yaml.end <= close.start && close.end <= parts.body.start);
        }
    }
    if let Some((start, _)) = frontmatter::late_start(&text) {
        assert!(start <= text.len() && text.is_char_boundary(start));
    }
}

/// A reader's errors and tree keep to the text.
fn assert_parsed(text: &str, parsed: &Parsed) {
    assert_errors(text, &parsed.errors);
    if let Some(root) = &parsed.root {
        assert_tree(text, root);
    }
}

pub fn yaml_target(data: &[u8]) {
    let text = text(data);
    assert_parsed(&text, &yaml::parse(&text));
}

pub fn json_target(data: &[u8]) {
    let text = text(data);
    let parsed = json::parse(&text);
    assert_parsed(&text, &parsed);
    // What serde_json reads without complaint (and is not deeper than our cap) reads without
    // error here too, to the same value.
    let trimmed = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if let Ok(expected) = serde_json::from_str::<serde_json::Value>(trimmed)
        && depth(&expected) <= stagelint::source::MAX_DEPTH
        && !has_duplicate_keys(trimmed)
    {
        assert!(parsed.errors.is_empty(), "serde_json reads {text:?}; stagelint says {:?}", parsed.errors);
        let root = parsed.root.as_ref().expect("a value");
        assert!(same_json(&root.to_json(), &expected), "{text:?} reads as {:?}", root.to_json());
    }
}

fn depth(value: &serde_json::Value) -> usize {
    match value {
        serde_json::Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        serde_json::Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// serde_json keeps the last of duplicate keys and says nothing; the reader reports them.
fn has_duplicate_keys(text: &str) -> bool {
    struct Check;
    impl<'de> serde::de::Visitor<'de> for Check {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any JSON")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while seq.next_element_seed(Seed)?.is_some() {}
            Ok(())
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if !seen.insert(key) {
                    return Err(serde::de::Error::custom("duplicate key"));
                }
                map.next_value_seed(Seed)?;
            }
            Ok(())
        }
    }
    struct Seed;
    impl<'de> serde::de::DeserializeSeed<'de> for Seed {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(Check)
        }
    }
    // Past serde_json's own depth limit this is an error too: the caller skips the input.
    let mut deserializer = serde_json::Deserializer::from_str(text);
    serde::de::DeserializeSeed::deserialize(Seed, &mut deserializer).is_err()
}

/// Equal values, numbers compared as numbers (`1.0` and `1`, or an integer too large for
/// `i64` read as a float, are the same number).
fn same_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as J;
    match (a, b) {
        (J::Number(x), J::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (J::Array(x), J::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_json(a, b)),
        (J::Object(x), J::Object(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((ka, va), (kb, vb))| ka == kb && same_json(va, vb))
        }
        _ => a == b,
    }
}

/// A JSON value from the input: the input itself when it is JSON, else one built from its
/// bytes (so mutations reach every branch of the writer).
fn value_from(data: &[u8]) -> serde_json::Value {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        return value;
    }
    let mut bytes = Bytes { data, at: 0 };
    build_value(&mut bytes, 0)
}

struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    fn string(&mut self) -> String {
        let len = usize::from(self.byte() % 24);
        let end = (self.at + len).min(self.data.len());
        let s = String::from_utf8_lossy(&self.data[self.at.min(end)..end]).into_owned();
        self.at = end;
        s
    }

    fn done(&self) -> bool {
        self.at >= self.data.len()
    }
}

fn build_value(bytes: &mut Bytes, depth: usize) -> serde_json::Value {
    use serde_json::Value as J;
    let kind = if depth >= 8 { bytes.byte() % 5 } else { bytes.byte() % 7 };
    match kind {
        0 => J::Null,
        1 => J::Bool(bytes.byte() & 1 == 1),
        2 => {
            let raw = i64::from_le_bytes(std::array::from_fn(|_| bytes.byte()));
            J::from(raw >> (bytes.byte() % 64))
        }
        3 => {
            let raw = f64::from_bits(u64::from_le_bytes(std::array::from_fn(|_| bytes.byte())));
            serde_json::Number::from_f64(raw).map_or(J::Null, J::Number)
        }
        4 => J::String(bytes.string()),
        5 => {
            let len = bytes.byte() % 5;
            let mut items = Vec::new();
            for _ in 0..len {
                if bytes.done() {
                    break;
                }
                items.push(build_value(bytes, depth + 1));
            }
            J::Array(items)
        }
        _ => {
            let len = bytes.byte() % 5;
            let mut map = serde_json::Map::new();
            for _ in 0..len {
                if bytes.done() {
                    break;
                }
                let key = bytes.string();
                map.insert(key, build_value(bytes, depth + 1));
            }
            J::Object(map)
        }
    }
}

pub fn yaml_roundtrip_target(data: &[u8]) {
    let value = value_from(data);
    if depth(&value) > stagelint::source::MAX_DEPTH / 2 {
        return;
    }
    let written = yaml_write::to_yaml(&value);
    let parsed = yaml::parse(&written);
    assert!(parsed.errors.is_empty(), "{value:?} written as\n{written}\nreads with errors {:?}", parsed.errors);
    let back = parsed.root.as_ref().map_or(serde_json::Value::Null, Node::to_json);
    assert!(same_json(&back, &value), "{value:?} written as\n{written}\nreads back as {back:?}");
}

pub fn stage_template_target(data: &[u8]) {
    let text = text(data);
    for tag in stage::parse(&text, 0) {
        assert_span(&text, tag.span, "stage tag");
        assert_span(&text, tag.inner, "stage tag's inside");
        if let stage::TagKind::Control(control) = &tag.kind {
            let _ = control.describe();
        }
    }
    for region in markdown::code_regions(&text, 0) {
        assert_span(&text, region, "code region");
    }
    for mode in [secrets::Mode::Lint, secrets::Mode::Redact] {
        for secret in secrets::find(&text, mode) {
            assert_span(&text, secret.span, "secret");
        }
    }
    let _ = secrets::redact(&text);
}

pub fn lastlight_template_target(data: &[u8]) {
    let text = text(data);
    for engine in [lastlight::Engine::Head, lastlight::Engine::Seed] {
        let tags = lastlight::parse(&text, 0, engine);
        for tag in &tags {
            assert_span(&text, tag.span, "Last Light tag");
            for segment in lastlight::reads(tag).unwrap_or_default() {
                assert_span(&text, segment.span, "Last Light path segment");
            }
        }
        let blocks = lastlight::blocks(&tags);
        for (open, close) in &blocks.pairs {
            assert!(open < close && *close < tags.len(), "block ({open}, {close}) of {} tags", tags.len());
        }
        // Each line is also an `until:` expression.
        for line in text.lines().take(64) {
            let _ = until::parse(line, engine == lastlight::Engine::Head);
        }
        let _ = until::parse(&text, engine == lastlight::Engine::Head);
        // The dry-run's renderer and `until` evaluator: every substitution's range in the text.
        let ctx = serde_json::json!({"issueTitle": text, "phaseOutputs": {"plan": text}, "output": text, "n": [1, 2]});
        let ctx = stagelint::runtime::lastlight::value::Ctx::from_map(ctx.as_object().expect("object"));
        let rendered = stagelint::runtime::lastlight::render::render(&text, &ctx, engine);
        for mark in &rendered.marks {
            if let Some((start, end)) = mark.range {
                assert_span(&rendered.text, Span::new(start, end), "rendered substitution");
            }
        }
        for verbatim in &rendered.verbatim {
            assert_span(&rendered.text, Span::new(verbatim.range.0, verbatim.range.1), "verbatim tag");
            assert_span(&text, Span::new(verbatim.origin, verbatim.origin + verbatim.text.len()), "verbatim origin");
        }
        for line in text.lines().take(64) {
            let _ = stagelint::runtime::lastlight::until::eval(line, &ctx, engine);
        }
    }
    let _ = lastlight::looks_meant(&text);
}

pub fn c3l_target(data: &[u8]) {
    // The first four bytes pick the range scanned.
    let (head, rest) = data.split_at(data.len().min(4));
    let text = text(rest);
    let a = usize::from(u16::from_le_bytes([head.first().copied().unwrap_or(0), head.get(1).copied().unwrap_or(0)]));
    let b =
        usize::from(u16::from_le_bytes([head.get(2).copied().unwrap_or(0xff), head.get(3).copied().unwrap_or(0xff)]));
    let mut start = a.min(b).min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let range = Span::new(start, a.max(b).max(start));
    for placeholder in c3l::scan(&text, range) {
        assert_span(&text, placeholder.span, "C3L placeholder");
        assert_span(&text, placeholder.name, "C3L name");
        assert!(placeholder.span.start >= range.start && placeholder.span.end <= range.end.min(text.len()));
    }
    for placeholder in c3l::scan(&text, Span::new(0, text.len())) {
        assert_span(&text, placeholder.span, "C3L placeholder");
    }
}

pub fn cassette_target(data: &[u8]) {
    let text = text(data);
    for json_syntax in [false, true] {
        let (cassette, errors) = stagelint::cassette::read(&text, json_syntax);
        assert_errors(&text, &errors);
        for problem in &cassette.problems {
            assert_span(&text, problem.span, problem.rule);
        }
        // A Last Light workflow cassette, read by its own reader.
        let workflow = stagelint::runtime::lastlight::cassette::read(&text, json_syntax);
        for problem in &workflow.problems {
            assert_span(&text, problem.span, problem.rule);
        }
        for execution in &workflow.executions {
            assert_span(&text, execution.span, "execution label");
        }
    }
}

/// The files of the workspace the `check` target builds, one per `\0`-separated part of the
/// input; a part after them is a `stagelint.toml`.
pub const CHECK_FILES: &[(&str, FileKind)] = &[
    ("plan.md", FileKind::Stage),
    ("sm.yaml", FileKind::StateMachine),
    (".agent/fixer/steps_registry.json", FileKind::StepsRegistry),
    (".agent/fixer/prompts/steps/initial/issue/f_default.md", FileKind::C3lPrompt),
    ("workflows/build.yaml", FileKind::Workflow),
    ("workflows/prompts/plan.md", FileKind::WorkflowPrompt),
    ("plan.cassette.yaml", FileKind::Cassette),
];

/// The atomic project's files, in the parts after the `stagelint.toml`: a `package.json` (its
/// pins decide the dialect), a workflow on each layout (v0.5's `<name>/<agent>/index.ts`, a flat
/// file, a child under `lib/`, a package workflow, one elsewhere), an agent and the extension's
/// config. What the file imports decides its dialect, so any dialect may sit in any slot; a `.ts`
/// part is a workflow even when discovery would not claim it.
pub const CHECK_ATOMIC_FILES: &[(&str, FileKind)] = &[
    ("package.json", FileKind::AtomicContext),
    (".atomic/workflows/hello/claude/index.ts", FileKind::AtomicWorkflow),
    (".atomic/workflows/review.ts", FileKind::AtomicWorkflow),
    (".atomic/workflows/lib/research.ts", FileKind::AtomicWorkflow),
    ("workflows/builder.ts", FileKind::AtomicWorkflow),
    ("flows/sdk.ts", FileKind::AtomicWorkflow),
    (".claude/agents/planner.md", FileKind::AtomicContext),
    (".atomic/extensions/workflow/config.json", FileKind::AtomicContext),
];

/// A workspace in memory from `\0`-separated parts of the input.
pub fn workspace_from(data: &[u8]) -> Workspace {
    let text = text(data);
    let mut parts = text.split('\0');
    let files: Vec<&str> = parts.by_ref().take(CHECK_FILES.len()).collect();
    let root = Path::new("/fuzz");
    let config = match parts.next() {
        Some(toml) => Config::parse(toml, &root.join("stagelint.toml")).unwrap_or_else(|_| Config::defaults(root)),
        None => Config::defaults(root),
    };
    let config = Arc::new(config);
    let mut workspace = Workspace::new();
    for ((name, fallback), text) in CHECK_FILES.iter().zip(files) {
        let path = PathBuf::from("/fuzz").join(name);
        let kind = classify(&path, text, &config).unwrap_or_else(|| fallback.clone());
        workspace.add(path, (*name).into(), text.to_string(), kind, config.clone());
    }
    for ((name, kind), text) in CHECK_ATOMIC_FILES.iter().zip(parts) {
        let path = PathBuf::from("/fuzz").join(name);
        workspace.add(path, (*name).into(), text.to_string(), kind.clone(), config.clone());
    }
    workspace
}

fn assert_diagnostics(workspace: &Workspace, diagnostics: &[Diagnostic]) {
    for d in diagnostics {
        assert_span(&workspace.file(d.file).text, d.span, d.code);
        for related in &d.related {
            let file = related.file.unwrap_or(d.file);
            assert_span(&workspace.file(file).text, related.span, d.code);
        }
        for (file, edit) in d.fix.iter().flat_map(|f| &f.edits) {
            assert_span(&workspace.file(*file).text, edit.span, d.code);
        }
    }
}

pub fn check_target(data: &[u8]) {
    let workspace = workspace_from(data);
    let diagnostics = stagelint::check::check(&workspace);
    assert_diagnostics(&workspace, &diagnostics);
    render_all(&workspace, &diagnostics);
}

/// Every renderer over `diagnostics`; the JSON and SARIF outputs must parse.
pub fn render_all(workspace: &Workspace, diagnostics: &[Diagnostic]) {
    use stagelint::render;
    let mut out = Vec::new();
    render::full::render(&mut out, workspace, diagnostics, false).expect("full");
    render::full::render(&mut out, workspace, diagnostics, true).expect("full in colour");
    render::concise::render(&mut out, workspace, diagnostics).expect("concise");
    let notes = stagelint::check::notes(workspace);
    render::github::render(&mut out, workspace, diagnostics, &notes).expect("github");
    for (name, render) in [("json", render::json::render as Renderer), ("sarif", render::sarif::render)] {
        let mut out = Vec::new();
        render(&mut out, workspace, diagnostics, &notes).expect(name);
        let parsed: Result<serde_json::Value, _> = serde_json::from_slice(&out);
        assert!(parsed.is_ok(), "{name} output is not JSON: {parsed:?}\n{}", String::from_utf8_lossy(&out));
    }
    let _ = render::Summary::new(workspace, diagnostics).line();
}

type Renderer =
    fn(&mut dyn std::io::Write, &Workspace, &[Diagnostic], &[stagelint::families::Note]) -> std::io::Result<()>;

/// The text is everything before the first `\0`; each 8 bytes after it make one finding (rule,
/// severity, span, a related span, a fix) with spans anywhere in the text, mid-character too (at most 24, so inputs stay fast).
pub fn render_target(data: &[u8]) {
    let split = data.iter().position(|b| *b == 0).unwrap_or(data.len());
    let text = text(&data[..split]);
    let rest = data.get(split + 1..).unwrap_or_default();
    let config = Arc::new(Config::defaults(Path::new("/fuzz")));
    let mut workspace = Workspace::new();
    let file = workspace.add(PathBuf::from("/fuzz/plan.md"), "plan.md".into(), text.clone(), FileKind::Stage, config);
    let rules: Vec<&'static str> = stagelint::registry::all_rules().map(|r| r.code).collect();
    let len = text.len();
    let at = |b: u8, c: u8| if len == 0 { 0 } else { usize::from(u16::from_le_bytes([b, c])) % (len + 1) };
    let span = |x: usize, y: usize| Span::new(x.min(y), x.max(y));
    let mut diagnostics = Vec::new();
    for chunk in rest.chunks_exact(8).take(24) {
        let severity = [Severity::Error, Severity::Warning, Severity::Info, Severity::Hint][usize::from(chunk[1] % 4)];
        let main = span(at(chunk[2], chunk[3]), at(chunk[4], chunk[5]));
        let other = span(at(chunk[6], chunk[3]), at(chunk[7], chunk[5]));
        let message = text.get(other.start..other.end.min(other.start + 200)).unwrap_or("message").to_string();
        let mut d = Diagnostic::new(rules[usize::from(chunk[0]) % rules.len()], file, main, message)
            .with_severity(severity)
            .with_related(file, other, "related");
        if chunk[1] & 0x10 != 0 {
            let edit = stagelint::diagnostic::Edit { span: other, replacement: "fix\n\u{e9}".into() };
            d = d.with_fix("Fix it", stagelint::diagnostic::Applicability::Safe, vec![edit]);
        }
        if chunk[1] & 0x20 != 0 {
            d = d.with_help("help");
        }
        diagnostics.push(d);
    }
    render_all(&workspace, &diagnostics);
    // Line and column conversion at every offset, past the end too.
    let lines = LineIndex::new(&text);
    for offset in (0..=len + 2).step_by(1 + len / 512) {
        let lc = lines.line_col(&text, offset);
        let utf16 = lines.line_col_utf16(&text, offset);
        assert!(lc.line >= 1 && lc.column >= 1 && lc.line == utf16.line && utf16.column >= lc.column);
        let _ = stagelint::render::range(workspace.file(file), Span::new(offset.min(len), len));
        #[cfg(feature = "lsp")]
        for (position, back, again) in stagelint::lsp::position_round_trip(&text, &lines, offset) {
            assert!(back <= len && text.is_char_boundary(back), "{position:?} at offset {offset} reads back as {back}");
            assert_eq!(position, again, "offset {offset} -> {position:?} -> {back} -> {again:?}");
        }
    }
}

/// The bytes are the client's side of the stream after a fixed `initialize`: frames (well
/// formed or not) and requests the server answers or refuses. Time is paused, so the server's
/// timeouts pass at once. Only with the `lsp` feature, which builds the server.
#[cfg(feature = "lsp")]
pub fn lsp_target(data: &[u8]) {
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{"general":{"positionEncodings":["utf-16"]}},"rootUri":null,"workspaceFolders":[]}}"#;
    let initialized = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
    let mut input = Vec::new();
    for frame in [init, initialized] {
        input.extend_from_slice(format!("Content-Length: {}\r\n\r\n{frame}", frame.len()).as_bytes());
    }
    input.extend_from_slice(data);
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().expect("runtime");
    runtime.block_on(stagelint::lsp::serve(&input[..], tokio::io::sink()));
    runtime.shutdown_background();
}
