//! The language server, model-checked: random sequences of editor actions against the real
//! server (in this process, over a socket pair with real framing), on a small workspace of two
//! state machines (one with machine cassettes), a dry-run stage with cassettes, a climpt agent
//! and a Last Light workflow.
//!
//! Actions: `didOpen`, incremental `didChange` with random ranges and inserts (multi-byte
//! characters, CRLF, lone CR, the frontmatter fence, byte order marks, deleting everything),
//! a leading byte order mark inserted or deleted by an edit or written on disk, `didClose`,
//! saves, files created, deleted and renamed on disk (with `didChangeWatchedFiles`),
//! `stagelint.toml` rewritten (broken too), requests at random positions (past the end of a
//! line or of the document, and inside a multi-byte character or a surrogate pair), and the
//! dry-run command (`workspace/executeCommand`) on stages, machines, directories, files edited
//! into garbage or deleted, files outside the workspace folders and arguments of other shapes.
//!
//! After each sequence: no panic, no internal error (-32603) answering any request, a dry-run
//! answers a report or an error that says why (one outside the workspace is refused), published
//! versions never go backwards, and once the server is idle (`stagelint/idle`) what it last
//! published for every file equals `stagelint check --format json` on the final texts (each
//! open document written to disk first): same codes, severities and ranges, counted as the
//! client does (a leading byte order mark is a character of an open document, none of a file
//! on disk). Allowed on top: findings a dry-run printed for the file, which stay until it is
//! checked again. A broken config is a finding of both (`stagelint/InvalidConfig`), and both
//! leave out the files it governs; configs that exclude files (`[files] exclude`, nested ones
//! too) leave out the same files in both.
//!
//! The workspace starts adopted in part: a root `stagelint.toml` names a baseline of the
//! `handoff/` findings (written by `stagelint check --write-baseline`), which configs the
//! actions write may drop or name again. The server hides what a baseline accepts
//! (`initializationOptions.baselined: "hide"`), as the command line does; the baseline file's
//! own findings (stale entries) are the command line's alone (`tests/lsp.rs` has the hints).
//!
//! CI runs 128 sequences (about 40 s in debug); `PROPTEST_CASES=5000 cargo test --test lsp_model`
//! runs more. A failure shrinks to a short list of actions, printed by file name.

mod lsp_client;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use proptest::prelude::*;
use serde_json::{Value, json};

use lsp_client::{Client, uri};

/// The workspace every sequence starts from: (path in the workspace, file under `examples/`).
const START: &[(&str, &str)] = &[
    ("handoff/sm.yaml", "broken/handoff/sm.yaml"),
    ("handoff/plan.md", "broken/handoff/plan.md"),
    ("handoff/execute.md", "broken/handoff/execute.md"),
    ("handoff/review.md", "broken/handoff/review.md"),
    ("handoff/publish.md", "broken/handoff/publish.md"),
    ("dry/plan.md", "broken/dry-run/plan.md"),
    ("dry/plan.cassette.yaml", "broken/dry-run/plan.cassette.yaml"),
    ("dry/typo.cassette.yaml", "broken/dry-run/typo.cassette.yaml"),
    ("review/sm.yaml", "code-review/sm.yaml"),
    ("review/sm.cassette.yaml", "code-review/sm.cassette.yaml"),
    ("review/failing-lint.cassette.yaml", "code-review/failing-lint.cassette.yaml"),
    ("review/plan.md", "code-review/plan.md"),
    ("review/execute.md", "code-review/execute.md"),
    ("review/test.md", "code-review/test.md"),
    ("review/lint.md", "code-review/lint.md"),
    ("review/review.md", "code-review/review.md"),
    (".agent/fixer/steps_registry.json", "climpt/.agent/fixer/steps_registry.json"),
    (".agent/fixer/agent.json", "climpt/.agent/fixer/agent.json"),
    (".agent/fixer/schemas/fixer.schema.json", "climpt/.agent/fixer/schemas/fixer.schema.json"),
    (".agent/fixer/prompts/system.md", "climpt/.agent/fixer/prompts/system.md"),
    (
        ".agent/fixer/prompts/steps/initial/issue/f_default.md",
        "climpt/.agent/fixer/prompts/steps/initial/issue/f_default.md",
    ),
    (
        ".agent/fixer/prompts/steps/continuation/issue/f_default.md",
        "climpt/.agent/fixer/prompts/steps/continuation/issue/f_default.md",
    ),
    (
        ".agent/fixer/prompts/steps/closure/issue/f_default.md",
        "climpt/.agent/fixer/prompts/steps/closure/issue/f_default.md",
    ),
    ("lastlight/stagelint.toml", "lastlight/stagelint.toml"),
    ("lastlight/workflows/build.yaml", "lastlight/workflows/build.yaml"),
    ("lastlight/workflows/prompts/plan.md", "lastlight/workflows/prompts/plan.md"),
    ("lastlight/workflows/prompts/implement.md", "lastlight/workflows/prompts/implement.md"),
    ("lastlight/workflows/prompts/review.md", "lastlight/workflows/prompts/review.md"),
    ("lastlight/workflows/prompts/pr.md", "lastlight/workflows/prompts/pr.md"),
    ("lastlight/workflows/prompts/fix.md", "lastlight/workflows/prompts/fix.md"),
    ("lastlight/skills/planning/SKILL.md", "lastlight/skills/planning/SKILL.md"),
];

/// Files the actions name: the starting ones, then some that do not exist yet.
const EXTRA: &[&str] = &[
    "stagelint.toml",
    "handoff/extra.md",
    "handoff/stagelint.toml",
    "dry/extra.cassette.yaml",
    "lastlight/workflows/extra.yaml",
    "loose/draft.md",
    "loose/sm.yaml",
];

/// What a created file holds.
const CONTENTS: &[&str] = &[
    "",
    "---\nid: extra\nname: Extra\nallowedTools: [Read]\ncompletionTool: done\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\n---\n\nDo {{ctx.task}}; call done.\n",
    "entry: plan\ncontext:\n  required: [task]\n",
    "[rules]\n\"sm/NextCycle\" = \"off\"\n",
    "[rules]\nsm = \"warn\"\n\"cassette/UnknownTool\" = \"off\"\n",
    "[rules\nbroken = \n",
    "[rules]\n\"sm/NoSuchRule\" = \"off\"\nsm = \"loud\"\n",
    "name: extra\ntrigger: { type: manual }\nphases:\n  - name: plan\n    prompt: prompts/plan.md\n",
    "version: 1\nkind: stage\nstage: plan\nturns: []\n",
    "---\nid: plan\n---\nbody\r\nwith a lone\rcarriage return 😀\n",
    "\u{feff}entry: plna\n",
    "\u{feff}---\nid: extra\nname: Extra\n---\n\nDo {{ctx.tsak}}.\n",
    "[files]\nextend-exclude = [\"loose\", \"*.cassette.yaml\"]\n",
    "[files]\nexclude = [\"handoff/plan.md\", \"extra.md\"]\nforce-exclude = true\n",
    "[files]\nextend-exclude = [\"prompts\", \"dry/\"]\n",
    "[files]\nexclude = [\"[\"]\n",
    "baseline = \"stagelint-baseline.json\"\n[rules]\n\"sm/NextCycle\" = \"off\"\n",
    "baseline = \"stagelint-baseline.json\"\n",
    "baseline = \"stagelint-baseline.json\"\n[files]\nextend-exclude = [\"loose\"]\n",
];

/// What an edit inserts.
const INSERTS: &[&str] = &[
    "",
    "x",
    "😀",
    "é",
    "\r\n",
    "\r",
    "\n",
    "---\n",
    "---",
    "{{ctx.task}}",
    "{{",
    "}}",
    "id: ",
    "  - ",
    "\"",
    ":",
    "[",
    "]",
    "{",
    "}",
    "plan",
    "review",
    "𝕏\u{200d}",
    "\t",
    "\u{2028}",
    "\u{feff}",
];

/// New names offered to rename.
const NAMES: &[&str] = &["plan2", "x", "", "a b", "😀", "review"];

fn path_name(index: usize) -> &'static str {
    let all = START.len() + EXTRA.len();
    let index = index % all;
    if index < START.len() { START[index].0 } else { EXTRA[index - START.len()] }
}

/// A file of the workspace, shown by name.
#[derive(Clone, Copy)]
struct File(usize);

impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}", path_name(self.0))
    }
}

/// A text, shown as itself.
#[derive(Clone, Copy)]
struct Text(&'static [&'static str], usize);

impl Text {
    fn get(self) -> &'static str {
        self.0[self.1 % self.0.len()]
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{:?}", self.get())
    }
}

/// One replacement in a `didChange`: from the `start`th edit boundary (modulo their number),
/// `len` characters long; `past_line_end` sends the end as a column past its line's end (the
/// protocol says: the end of the line).
#[derive(Clone, Debug)]
struct Change {
    start: u16,
    len: u8,
    past_line_end: bool,
    insert: Text,
}

#[derive(Clone, Copy, Debug)]
enum At {
    /// The `n`th character boundary, modulo their number.
    Offset(u16),
    /// Column 10,000 of line `n` (modulo the line count).
    PastLineEnd(u16),
    /// Three lines past the last.
    PastEnd,
    /// One unit into the `n`th character that takes more than one (a surrogate pair in UTF-16).
    InsideCharacter(u16),
}

#[derive(Clone, Copy, Debug)]
enum Request {
    Completion,
    Hover,
    Definition,
    References,
    PrepareRename,
    Rename(Text),
    CodeAction(At),
    CodeLens,
    Symbols,
    Links,
    Folds,
}

#[derive(Clone, Debug)]
enum Op {
    Open(File),
    Edit(File, Vec<Change>),
    DeleteAll(File),
    Close(File),
    Save(File),
    Create(File, Text),
    Delete(File),
    Rename(File, File),
    Config(Text),
    Ask(Request, File, At),
    DryRun(DryRun),
    /// A byte order mark inserted at the start of an open document, or deleted from it, by an
    /// incremental edit (the client counts it as the character it is in its text).
    ToggleBom(File),
    /// A byte order mark written before a file's text on disk.
    BomOnDisk(File),
}

/// A `workspace/executeCommand` of the dry-run, as the code lens sends it or otherwise.
#[derive(Clone, Copy, Debug)]
enum DryRun {
    /// The file alone (a stage, or a state machine; any other file is refused).
    File(File),
    /// The file and a cassette, as a lens names them.
    WithCassette(File, File),
    /// The directory holding the file (a state machine's directory runs the machine).
    Directory(File),
    /// A stage outside the workspace folders (refused).
    Outside,
    /// A workspace file run with a cassette outside the workspace folders (refused).
    OutsideCassette(File),
    /// Arguments of another shape.
    Shape(Text),
}

/// Argument lists the dry-run command does not take (`FILE` is a workspace file's URI).
const SHAPES: &[&str] = &[
    "[]",
    "null",
    "[42]",
    "[null]",
    "[{}]",
    "[\"not a uri\"]",
    "[\"untitled:Untitled-1\"]",
    "[\"https://example.com/plan.md\"]",
    "[\"file:///\"]",
    "[FILE, 42]",
    "[FILE, \"untitled:x\"]",
    "[FILE, FILE, FILE]",
    "{\"uri\": FILE}",
];

fn file() -> impl Strategy<Value = File> {
    (0..START.len() + EXTRA.len()).prop_map(File)
}

fn at() -> impl Strategy<Value = At> {
    prop_oneof![
        4 => any::<u16>().prop_map(At::Offset),
        1 => any::<u16>().prop_map(At::PastLineEnd),
        1 => Just(At::PastEnd),
        1 => any::<u16>().prop_map(At::InsideCharacter),
    ]
}

fn dry_run() -> impl Strategy<Value = DryRun> {
    prop_oneof![
        4 => file().prop_map(DryRun::File),
        2 => (file(), file()).prop_map(|(a, b)| DryRun::WithCassette(a, b)),
        1 => file().prop_map(DryRun::Directory),
        1 => Just(DryRun::Outside),
        1 => file().prop_map(DryRun::OutsideCassette),
        2 => (0..SHAPES.len()).prop_map(|i| DryRun::Shape(Text(SHAPES, i))),
    ]
}

fn request() -> impl Strategy<Value = Request> {
    prop_oneof![
        Just(Request::Completion),
        Just(Request::Hover),
        Just(Request::Definition),
        Just(Request::References),
        Just(Request::PrepareRename),
        (0..NAMES.len()).prop_map(|i| Request::Rename(Text(NAMES, i))),
        at().prop_map(Request::CodeAction),
        Just(Request::CodeLens),
        Just(Request::Symbols),
        Just(Request::Links),
        Just(Request::Folds),
    ]
}

fn change() -> impl Strategy<Value = Change> {
    (any::<u16>(), prop_oneof![3 => 0u8..4, 1 => 0u8..80], prop::bool::weighted(0.1), 0..INSERTS.len()).prop_map(
        |(start, len, past_line_end, insert)| Change { start, len, past_line_end, insert: Text(INSERTS, insert) },
    )
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => file().prop_map(Op::Open),
        8 => (file(), prop::collection::vec(change(), 1..4)).prop_map(|(f, c)| Op::Edit(f, c)),
        1 => file().prop_map(Op::DeleteAll),
        2 => file().prop_map(Op::Close),
        1 => file().prop_map(Op::Save),
        1 => (file(), 0..CONTENTS.len()).prop_map(|(f, c)| Op::Create(f, Text(CONTENTS, c))),
        1 => file().prop_map(Op::Delete),
        1 => (file(), file()).prop_map(|(a, b)| Op::Rename(a, b)),
        1 => prop_oneof![3..7usize, 12..16usize].prop_map(|c| Op::Config(Text(CONTENTS, c))),
        5 => (request(), file(), at()).prop_map(|(r, f, a)| Op::Ask(r, f, a)),
        1 => dry_run().prop_map(Op::DryRun),
        1 => file().prop_map(Op::ToggleBom),
        1 => file().prop_map(Op::BomOnDisk),
    ]
}

// ---------------------------------------------------------------------------------------------
// The client's model of positions: its own, not the server's code.

/// Byte offsets where each line starts, as LSP counts lines (`\n`, `\r\n` and `\r` end one).
fn line_starts(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                i += 2;
                starts.push(i);
            }
            b'\r' | b'\n' => {
                i += 1;
                starts.push(i);
            }
            _ => i += 1,
        }
    }
    starts
}

/// The end of line `line`'s content (before its line break).
fn content_end(text: &str, starts: &[usize], line: usize) -> usize {
    let end = starts.get(line + 1).copied().unwrap_or(text.len());
    let mut end = end;
    while end > starts[line] && matches!(text.as_bytes()[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    end
}

fn units(part: &str, utf16: bool) -> usize {
    if utf16 { part.encode_utf16().count() } else { part.len() }
}

/// The LSP position of byte `offset` (a character boundary, not inside a CRLF).
fn position(text: &str, offset: usize, utf16: bool) -> Value {
    let starts = line_starts(text);
    let line = starts.partition_point(|s| *s <= offset) - 1;
    json!({"line": line, "character": units(&text[starts[line]..offset], utf16)})
}

/// Where an edit may start or end: character boundaries, but not between `\r` and `\n`.
fn boundaries(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    (0..=text.len())
        .filter(|i| text.is_char_boundary(*i))
        .filter(|i| !(*i > 0 && bytes[i - 1] == b'\r' && bytes.get(*i) == Some(&b'\n')))
        .collect()
}

fn place(text: &str, at: At, utf16: bool) -> Value {
    let starts = line_starts(text);
    match at {
        At::Offset(n) => {
            let all = boundaries(text);
            position(text, all[n as usize % all.len()], utf16)
        }
        At::PastLineEnd(n) => json!({"line": n as usize % starts.len(), "character": 10_000}),
        At::PastEnd => json!({"line": starts.len() + 2, "character": 0}),
        At::InsideCharacter(n) => {
            let wide: Vec<usize> =
                text.char_indices().filter(|(_, c)| units(&c.to_string(), utf16) > 1).map(|(i, _)| i).collect();
            if wide.is_empty() {
                return json!({"line": 0, "character": 0});
            }
            let mut inside = position(text, wide[n as usize % wide.len()], utf16);
            inside["character"] = json!(inside["character"].as_u64().unwrap() + 1);
            inside
        }
    }
}

/// The LSP position of a 1-based line and column (in characters) from `stagelint check`, in
/// a text the client sent (`sent`: a leading byte order mark is a character, as the client
/// counts it) or a file on disk (hidden, as editors load it).
fn cli_position(text: &str, at: &Value, utf16: bool, sent: bool) -> Value {
    let starts = line_starts(text);
    let line = at["line"].as_u64().unwrap() as usize - 1;
    let column = at["column"].as_u64().unwrap() as usize - 1;
    let line_start = starts.get(line).copied().unwrap_or(text.len()).min(text.len());
    let mut start = line_start;
    // The command line counts no column for a byte order mark.
    if line == 0 && text.starts_with('\u{feff}') {
        start += 3;
    }
    let rest = &text[start.min(text.len())..];
    let end = start.min(text.len()) + rest.char_indices().nth(column).map_or(rest.len(), |(i, _)| i);
    let from = if sent { line_start } else { start.min(text.len()) };
    json!({"line": line, "character": units(&text[from..end], utf16)})
}

// ---------------------------------------------------------------------------------------------
// Driving the server.

/// Panics on any thread but the test's (the server's tasks), seen through a panic hook.
static PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn watch_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let thread = std::thread::current();
            if !thread.name().is_some_and(|n| n.contains("sequences")) {
                PANICS.lock().unwrap_or_else(|e| e.into_inner()).push(format!("{:?}: {info}", thread.name()));
            }
            previous(info);
        }));
    });
}

struct Session {
    root: tempfile::TempDir,
    /// A stage and its cassette outside the workspace folders.
    outside: tempfile::TempDir,
    client: Client,
    utf16: bool,
    /// Open documents: text and version.
    open: BTreeMap<PathBuf, (String, i64)>,
    /// The last version used for each path (a reopened document continues from it).
    versions: HashMap<PathBuf, i64>,
    /// Every problem found so far.
    problems: Vec<String>,
}

impl Session {
    fn start(utf16: bool) -> Session {
        let root = tempfile::tempdir().expect("temp dir");
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
        for (to, from) in START {
            let to = root.path().join(to);
            std::fs::create_dir_all(to.parent().unwrap()).expect("mkdir");
            std::fs::copy(examples.join(from), to).expect("copy");
        }
        let outside = tempfile::tempdir().expect("temp dir");
        for (to, from) in
            [("plan.md", "broken/dry-run/plan.md"), ("plan.cassette.yaml", "broken/dry-run/plan.cassette.yaml")]
        {
            std::fs::copy(examples.join(from), outside.path().join(to)).expect("copy");
        }
        // Adopted in part: the findings of `handoff/` baselined.
        let adopted = Command::new(env!("CARGO_BIN_EXE_stagelint"))
            .args(["check", "--write-baseline=stagelint-baseline.json", "handoff"])
            .current_dir(root.path())
            .output()
            .expect("stagelint check runs");
        assert!(adopted.status.success(), "{}", String::from_utf8_lossy(&adopted.stderr));
        std::fs::write(root.path().join("stagelint.toml"), "baseline = \"stagelint-baseline.json\"\n").expect("write");
        let mut client = Client::in_process();
        let encodings: &[&str] = if utf16 { &["utf-16"] } else { &["utf-8", "utf-16"] };
        client.initialize_options(root.path(), encodings, json!({"baselined": "hide"}));
        Session { root, outside, client, utf16, open: BTreeMap::new(), versions: HashMap::new(), problems: Vec::new() }
    }

    fn path(&self, file: File) -> PathBuf {
        self.root.path().join(path_name(file.0))
    }

    fn watched(&mut self, changes: &[(&Path, u8)]) {
        let changes: Vec<Value> = changes.iter().map(|(p, kind)| json!({"uri": uri(p), "type": kind})).collect();
        self.client.notify("workspace/didChangeWatchedFiles", json!({"changes": changes}));
    }

    fn next_version(&mut self, path: &Path) -> i64 {
        let version = self.versions.entry(path.to_path_buf()).or_insert(0);
        *version += 1;
        *version
    }

    fn open(&mut self, path: &Path) {
        if self.open.contains_key(path) {
            return;
        }
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let version = self.next_version(path);
        self.client.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri(path), "languageId": "plaintext", "version": version, "text": text}}),
        );
        self.open.insert(path.to_path_buf(), (text, version));
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Open(file) => self.open(&self.path(*file)),
            Op::Edit(file, changes) => {
                let path = self.path(*file);
                self.open(&path);
                let mut text = self.open[&path].0.clone();
                let mut sent = Vec::new();
                for change in changes {
                    let all = boundaries(&text);
                    let first = change.start as usize % all.len();
                    let start = all[first];
                    let mut end = all[(first + change.len as usize).min(all.len() - 1)];
                    let mut end_at = position(&text, end, self.utf16);
                    if change.past_line_end {
                        let starts = line_starts(&text);
                        let line = starts.partition_point(|s| *s <= start) - 1;
                        end = content_end(&text, &starts, line).max(start);
                        end_at = json!({"line": line, "character": 10_000});
                    }
                    let range = json!({"start": position(&text, start, self.utf16), "end": end_at});
                    sent.push(json!({"range": range, "text": change.insert.get()}));
                    text.replace_range(start..end, change.insert.get());
                }
                self.change(&path, text, sent);
            }
            Op::DeleteAll(file) => {
                let path = self.path(*file);
                self.open(&path);
                let text = &self.open[&path].0;
                let end = position(text, text.len(), self.utf16);
                let sent = vec![json!({"range": {"start": {"line": 0, "character": 0}, "end": end}, "text": ""})];
                self.change(&path, String::new(), sent);
            }
            Op::Close(file) => {
                let path = self.path(*file);
                if self.open.remove(&path).is_some() {
                    self.client.notify("textDocument/didClose", json!({"textDocument": {"uri": uri(&path)}}));
                }
            }
            Op::Save(file) => {
                let path = self.path(*file);
                let Some((text, _)) = self.open.get(&path) else { return };
                let existed = path.exists();
                std::fs::create_dir_all(path.parent().unwrap()).expect("mkdir");
                std::fs::write(&path, text).expect("write");
                self.client.notify("textDocument/didSave", json!({"textDocument": {"uri": uri(&path)}}));
                self.watched(&[(&path, if existed { 2 } else { 1 })]);
            }
            Op::Create(file, content) => {
                let path = self.path(*file);
                let existed = path.exists();
                std::fs::create_dir_all(path.parent().unwrap()).expect("mkdir");
                std::fs::write(&path, content.get()).expect("write");
                self.watched(&[(&path, if existed { 2 } else { 1 })]);
            }
            Op::Delete(file) => {
                let path = self.path(*file);
                if std::fs::remove_file(&path).is_ok() {
                    self.watched(&[(&path, 3)]);
                }
            }
            Op::Rename(from, to) => {
                let (from, to) = (self.path(*from), self.path(*to));
                // An open document moves with its editor tab: not modelled; only closed files move.
                if from == to || self.open.contains_key(&from) || self.open.contains_key(&to) || !from.exists() {
                    return;
                }
                let existed = to.exists();
                std::fs::create_dir_all(to.parent().unwrap()).expect("mkdir");
                std::fs::rename(&from, &to).expect("rename");
                self.watched(&[(&from, 3), (&to, if existed { 2 } else { 1 })]);
            }
            Op::Config(content) => {
                let path = self.root.path().join("stagelint.toml");
                let existed = path.exists();
                std::fs::write(&path, content.get()).expect("write");
                self.watched(&[(&path, if existed { 2 } else { 1 })]);
            }
            Op::Ask(request, file, at) => self.ask(*request, *file, *at),
            Op::DryRun(run) => self.dry_run(*run),
            Op::ToggleBom(file) => {
                let path = self.path(*file);
                self.open(&path);
                let text = &self.open[&path].0;
                let (end, text, insert) = match text.strip_prefix('\u{feff}') {
                    Some(rest) => (position(text, 3, self.utf16), rest.to_string(), ""),
                    None => (json!({"line": 0, "character": 0}), format!("\u{feff}{text}"), "\u{feff}"),
                };
                let sent = vec![json!({"range": {"start": {"line": 0, "character": 0}, "end": end}, "text": insert})];
                self.change(&path, text, sent);
            }
            Op::BomOnDisk(file) => {
                let path = self.path(*file);
                let Ok(text) = std::fs::read_to_string(&path) else { return };
                std::fs::write(&path, format!("\u{feff}{text}")).expect("write");
                self.watched(&[(&path, 2)]);
            }
        }
    }

    /// The dry-run command: a report, or an error that says why (never an internal error);
    /// anything outside the workspace folders is refused.
    fn dry_run(&mut self, run: DryRun) {
        let named = |session: &Session, file: File| json!(uri(&session.path(file)));
        let stage_outside = json!(uri(&self.outside.path().join("plan.md")));
        let cassette_outside = json!(uri(&self.outside.path().join("plan.cassette.yaml")));
        let arguments = match run {
            DryRun::File(file) => json!([named(self, file)]),
            DryRun::WithCassette(file, cassette) => json!([named(self, file), named(self, cassette)]),
            DryRun::Directory(file) => json!([uri(self.path(file).parent().expect("a directory"))]),
            DryRun::Outside => json!([stage_outside]),
            DryRun::OutsideCassette(file) => json!([named(self, file), cassette_outside]),
            DryRun::Shape(shape) => {
                let shape = shape.get().replace("FILE", &named(self, File(0)).to_string());
                serde_json::from_str(&shape).expect("a JSON shape")
            }
        };
        let params = json!({"command": "stagelint.dryRun", "arguments": arguments});
        let refused = matches!(run, DryRun::Outside | DryRun::OutsideCassette(_));
        match self.client.try_request("workspace/executeCommand", params.clone()) {
            Ok(report) if refused => self.problems.push(format!("{params} ran a file outside the workspace: {report}")),
            Ok(report) if !report["exitCode"].is_i64() || !report["summary"].is_string() => {
                self.problems.push(format!("{params} answered no report: {report}"))
            }
            Ok(_) => {}
            Err(error) if error["code"] == -32603 => {
                self.problems.push(format!("{params} answered with an internal error: {error}"))
            }
            Err(error) if error["message"].as_str().is_none_or(|m| m.trim().is_empty()) => {
                self.problems.push(format!("{params} was refused without a reason: {error}"))
            }
            Err(error)
                if refused && !error["message"].as_str().is_some_and(|m| m.contains("outside the workspace")) =>
            {
                self.problems.push(format!("{params} was refused for another reason than being outside: {error}"))
            }
            Err(_) => {}
        }
    }

    fn change(&mut self, path: &Path, text: String, sent: Vec<Value>) {
        let version = self.next_version(path);
        self.client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri(path), "version": version}, "contentChanges": sent}),
        );
        self.open.insert(path.to_path_buf(), (text, version));
    }

    fn ask(&mut self, request: Request, file: File, at: At) {
        let path = self.path(file);
        let text = match self.open.get(&path) {
            Some((text, _)) => text.clone(),
            None => std::fs::read_to_string(&path).unwrap_or_default(),
        };
        let document = json!({"uri": uri(&path)});
        let position = place(&text, at, self.utf16);
        let at_position = json!({"textDocument": document, "position": position});
        let (method, params) = match request {
            Request::Completion => ("textDocument/completion", at_position),
            Request::Hover => ("textDocument/hover", at_position),
            Request::Definition => ("textDocument/definition", at_position),
            Request::References => (
                "textDocument/references",
                json!({"textDocument": document, "position": position, "context": {"includeDeclaration": true}}),
            ),
            Request::PrepareRename => ("textDocument/prepareRename", at_position),
            Request::Rename(name) => {
                ("textDocument/rename", json!({"textDocument": document, "position": position, "newName": name.get()}))
            }
            Request::CodeAction(end) => (
                "textDocument/codeAction",
                json!({"textDocument": document, "range": {"start": position, "end": place(&text, end, self.utf16)},
                       "context": {"diagnostics": []}}),
            ),
            Request::CodeLens => ("textDocument/codeLens", json!({"textDocument": document})),
            Request::Symbols => ("textDocument/documentSymbol", json!({"textDocument": document})),
            Request::Links => ("textDocument/documentLink", json!({"textDocument": document})),
            Request::Folds => ("textDocument/foldingRange", json!({"textDocument": document})),
        };
        if let Err(error) = self.client.try_request(method, params.clone())
            && error["code"] == -32603
        {
            self.problems.push(format!("{method} {params} answered with an internal error: {error}"));
        }
    }

    /// Waits for the server to be idle, then checks every invariant on what it sent.
    fn finish(mut self) -> Vec<String> {
        let idle = self.client.request("stagelint/idle", json!(null));
        if idle != json!(true) {
            self.problems.push(format!("the server did not become idle: {idle}"));
            return self.problems;
        }
        // Sent the way diagnostics are: every publish before idleness precedes it.
        self.client.wait("the idle notification", |m| m["method"] == "stagelint/idle");
        let mut last: HashMap<String, Value> = HashMap::new();
        let mut versions: HashMap<String, i64> = HashMap::new();
        // What each dry-run found, by file: its timeline, logged, ends with them (`concise`).
        let mut dry_run_found: HashMap<String, Vec<(String, Value)>> = HashMap::new();
        for message in self.client.take_backlog() {
            if message["method"] == "window/logMessage"
                && let Some(timeline) = message["params"]["message"].as_str().filter(|m| m.starts_with("dry-run "))
            {
                for (path, at, code) in timeline.lines().filter_map(concise_line) {
                    dry_run_found.entry(uri(&path)).or_default().push((code, at));
                }
            }
            let shown = ["window/logMessage", "window/showMessage"].contains(&message["method"].as_str().unwrap_or(""));
            // A dry-run that cannot run says why in a message too (a bug of ours never).
            let text = message["params"]["message"].as_str().unwrap_or("");
            let refused_dry_run = text.starts_with("stagelint dry-run: ") && !text.contains("bug in stagelint");
            if shown && message["params"]["type"] == 1 && !refused_dry_run {
                self.problems.push(format!("the server logged an error: {}", message["params"]["message"]));
            }
            if message["method"] != "textDocument/publishDiagnostics" {
                continue;
            }
            let params = &message["params"];
            let uri = params["uri"].as_str().unwrap_or_default().to_string();
            if let Some(version) = params["version"].as_i64() {
                let before = versions.insert(uri.clone(), version);
                if before.is_some_and(|b| b > version) {
                    self.problems.push(format!("{uri}: version {version} published after {before:?}"));
                }
            }
            last.insert(uri, params["diagnostics"].clone());
        }
        // The final texts on disk, as the editor would save them.
        for (path, (text, _)) in &self.open {
            std::fs::create_dir_all(path.parent().unwrap()).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        let sent = self.sent();
        let expected = cli_findings(self.root.path(), self.utf16, &sent);
        let mut uris: Vec<&String> = expected.keys().chain(last.keys()).collect();
        uris.sort();
        uris.dedup();
        for uri in uris {
            let mut shown: Vec<Value> = last
                .get(uri)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|d| json!({"code": d["code"], "severity": d["severity"], "range": d["range"]}))
                .collect();
            // The command line's column 1 on the first line is before or after a byte order
            // mark: in an open document, where the server counts it, either is right.
            let sent_bom =
                self.open.iter().any(|(p, (text, _))| lsp_client::uri(p) == *uri && text.starts_with('\u{feff}'));
            if sent_bom {
                let after = if self.utf16 { 1 } else { 3 };
                for d in &mut shown {
                    for at in ["/range/start", "/range/end", "/start"] {
                        if let Some(at) = d.pointer_mut(at)
                            && at["line"] == 0
                            && at["character"] == 0
                        {
                            at["character"] = json!(after);
                        }
                    }
                }
            }
            shown.sort_by_key(Value::to_string);
            let wanted = expected.get(uri).cloned().unwrap_or_default();
            // A dry-run's findings join what a file shows until it is checked again.
            let found = dry_run_found.get(uri.as_str()).map(Vec::as_slice).unwrap_or_default();
            if shown != wanted && !self.shown_after_dry_run(uri, &shown, &wanted, found) {
                self.problems.push(format!(
                    "{uri}: the server shows\n  {}\nbut `stagelint check` reports\n  {}",
                    Value::from(shown),
                    Value::from(wanted)
                ));
            }
        }
        self.problems
    }
}

impl Session {
    /// Whether `shown` is `wanted` and findings of a dry-run (`found`: code and 1-based
    /// position, as the dry-run printed them).
    fn shown_after_dry_run(&self, uri: &str, shown: &[Value], wanted: &[Value], found: &[(String, Value)]) -> bool {
        if found.is_empty() {
            return false;
        }
        let relative = uri.strip_prefix(&format!("{}/", lsp_client::uri(self.root.path()))).unwrap_or("");
        let path = self.root.path().join(relative);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let sent = self.sent().contains(Path::new(relative));
        let mut extra: Vec<&Value> = shown.iter().collect();
        for finding in wanted {
            match extra.iter().position(|d| *d == finding) {
                Some(i) => extra.remove(i),
                None => return false,
            };
        }
        extra.iter().all(|d| {
            found.iter().any(|(code, at)| {
                d["code"] == *code && d["range"]["start"] == cli_position(&text, at, self.utf16, sent)
            })
        })
    }

    /// The open documents, relative to the root: texts the client sent.
    fn sent(&self) -> HashSet<PathBuf> {
        self.open.keys().map(|p| p.strip_prefix(self.root.path()).expect("under the root").to_path_buf()).collect()
    }
}

/// A line of `concise` output: the file, the position (1-based line and column), the code.
fn concise_line(line: &str) -> Option<(PathBuf, Value, String)> {
    let (at, rest) = line.split_once(": ")?;
    let code = rest.split_once('[')?.1.split_once(']')?.0.to_string();
    let mut parts = at.rsplitn(3, ':');
    let column: u64 = parts.next()?.parse().ok()?;
    let line: u64 = parts.next()?.parse().ok()?;
    let path = std::env::current_dir().expect("a directory").join(parts.next()?);
    Some((path, json!({"line": line, "column": column}), code))
}

/// Findings by file URI.
type Findings = HashMap<String, Vec<Value>>;

/// `stagelint check --format json` on `root`, by file URI, in the client's positions, sorted.
/// `sent` names the open documents (relative to `root`), whose positions count a byte order mark.
fn cli_findings(root: &Path, utf16: bool, sent: &HashSet<PathBuf>) -> Findings {
    let output = Command::new(env!("CARGO_BIN_EXE_stagelint"))
        .args(["check", "--format", "json", "."])
        .current_dir(root)
        .output()
        .expect("stagelint check runs");
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
    let mut out: HashMap<String, Vec<Value>> = HashMap::new();
    let mut texts: HashMap<String, String> = HashMap::new();
    for d in report["diagnostics"].as_array().expect("diagnostics") {
        let relative = d["path"].as_str().expect("path").trim_start_matches("./");
        // The baseline's own findings: the command line's alone.
        if relative == "stagelint-baseline.json" {
            continue;
        }
        let path = root.join(relative);
        let text = texts
            .entry(d["path"].to_string())
            .or_insert_with(|| String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_default()).into_owned());
        let severity = match d["severity"].as_str() {
            Some("error") => 1,
            Some("warning") => 2,
            Some("info") => 3,
            _ => 4,
        };
        let range = json!({
            "start": cli_position(text, &d["range"]["start"], utf16, sent.contains(Path::new(relative))),
            "end": cli_position(text, &d["range"]["end"], utf16, sent.contains(Path::new(relative))),
        });
        out.entry(uri(&path)).or_default().push(json!({"code": d["code"], "severity": severity, "range": range}));
    }
    for list in out.values_mut() {
        list.sort_by_key(Value::to_string);
    }
    out
}

fn run(utf16: bool, ops: &[Op]) -> Vec<String> {
    PANICS.lock().unwrap_or_else(|e| e.into_inner()).clear();
    let mut session = Session::start(utf16);
    for op in ops {
        session.apply(op);
    }
    let mut problems = session.finish();
    problems.extend(PANICS.lock().unwrap_or_else(|e| e.into_inner()).drain(..).map(|p| format!("panic: {p}")));
    problems
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(128)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), max_shrink_iters: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_editor_sequences_end_where_the_command_line_does(
        utf16 in any::<bool>(),
        ops in prop::collection::vec(op(), 1..24),
    ) {
        watch_panics();
        let problems = run(utf16, &ops);
        prop_assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}

// ---------------------------------------------------------------------------------------------
// What the sequences found, each a fixed sequence now.

/// The workspace file named `name`.
fn named(name: &str) -> File {
    let index = (0..START.len() + EXTRA.len()).find(|i| path_name(*i) == name).expect("a workspace file");
    File(index)
}

fn assert_agrees(utf16: bool, ops: &[Op]) {
    watch_panics();
    let problems = run(utf16, ops);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A skill beside `workflows/` moved away: the workflow naming it is checked again
/// (`lastlight/SkillNotFound`), though the skill is in no scope of the workflow's directory.
#[test]
fn sequences_a_skill_moved_away_rechecks_its_workflow() {
    // A request first waits for the first index, which would otherwise see the move.
    let indexed = Op::Ask(Request::Completion, named("handoff/sm.yaml"), At::Offset(0));
    let skill = named("lastlight/skills/planning/SKILL.md");
    assert_agrees(false, &[indexed.clone(), Op::Rename(skill, named("handoff/sm.yaml"))]);
    assert_agrees(true, &[indexed, Op::Delete(skill)]);
}

/// A stage emptied on disk, then a change in another scope before the stage's second pass
/// ran: that pass was dropped as stale, and its closed cassette kept the replay findings of
/// the old stage for good (the first pass keeps a closed cassette's findings until the second
/// pass is in) instead of `cassette/UnknownStage`.
#[test]
fn sequences_a_second_pass_made_stale_by_another_scope_still_runs() {
    for _ in 0..3 {
        assert_agrees(
            false,
            &[
                Op::Ask(Request::Completion, named("handoff/plan.md"), At::Offset(0)),
                Op::Open(named("handoff/sm.yaml")),
                Op::Create(named("dry/plan.md"), Text(CONTENTS, 0)),
                // Answered once the first pass is in: the second is running.
                Op::Ask(Request::Completion, named("handoff/sm.yaml"), At::PastLineEnd(0)),
                Op::Create(named("handoff/sm.yaml"), Text(CONTENTS, 0)),
            ],
        );
    }
}

/// `sm.yaml` deleted on disk while it is open: the open text still makes the directory a
/// state machine (the stages were shown `sm/StageOutsideMachine`, and `sm.yaml` lost its stages).
#[test]
fn sequences_an_open_state_machine_deleted_on_disk_still_holds_its_stages() {
    let sm = named("handoff/sm.yaml");
    let nothing = Change { start: 0, len: 0, past_line_end: false, insert: Text(INSERTS, 0) };
    assert_agrees(false, &[Op::Edit(sm, vec![nothing]), Op::Delete(sm)]);
}

/// A document opened while the first index ran (here, behind a dry-run) is checked at once,
/// but the index's end then forgot its scope, which its listing (made before the open) did not
/// have, and published nothing for it: `loose/sm.yaml`, empty, lost `sm/StateMachineInvalid`.
#[test]
fn sequences_a_document_opened_during_the_index_keeps_its_findings() {
    let sm = named("handoff/sm.yaml");
    for _ in 0..3 {
        assert_agrees(false, &[Op::DryRun(DryRun::WithCassette(sm, sm)), Op::Open(named("loose/sm.yaml"))]);
    }
}

/// A dry-run's findings join what its files show until they are checked again: a machine
/// without a cassette shows `cassette/UnknownStage` on its entry, which `stagelint check`
/// does not report. Refused dry-runs (outside the workspace, arguments of another shape)
/// answer an error that says why.
#[test]
fn sequences_dry_runs_show_their_findings_or_say_why_they_cannot_run() {
    let sm = named("handoff/sm.yaml");
    let stage = named("dry/plan.md");
    assert_agrees(false, &[Op::DryRun(DryRun::File(sm))]);
    assert_agrees(
        true,
        &[
            Op::DryRun(DryRun::File(stage)),
            Op::DryRun(DryRun::WithCassette(stage, named("dry/typo.cassette.yaml"))),
            Op::DryRun(DryRun::Directory(named("review/sm.yaml"))),
            Op::DryRun(DryRun::Outside),
            Op::DryRun(DryRun::OutsideCassette(stage)),
        ],
    );
    let shapes: Vec<Op> = (0..SHAPES.len()).map(|i| Op::DryRun(DryRun::Shape(Text(SHAPES, i)))).collect();
    assert_agrees(false, &shapes);
    // A stage emptied, then run; a stage deleted, then run.
    assert_agrees(false, &[Op::DeleteAll(stage), Op::DryRun(DryRun::File(stage)), Op::Delete(stage)]);
    assert_agrees(
        false,
        &[Op::Delete(stage), Op::DryRun(DryRun::WithCassette(stage, named("dry/plan.cassette.yaml")))],
    );
}

/// A broken `stagelint.toml` (the command line stops with exit 2): the editor shows its
/// problems where `stagelint check` prints them, nothing on the files it governs, and the
/// rest as `stagelint check` reports it without them.
#[test]
fn sequences_a_broken_config_shows_its_problems_and_leaves_out_what_it_governs() {
    let broken = Text(CONTENTS, 5);
    assert!(broken.get().starts_with("[rules\n"));
    assert_agrees(false, &[Op::Config(broken)]);
    assert_agrees(true, &[Op::Create(named("handoff/stagelint.toml"), broken), Op::Open(named("handoff/plan.md"))]);
    assert_agrees(
        false,
        &[
            // Two problems in one config, a broken one above it, a sound one beside.
            Op::Create(named("lastlight/stagelint.toml"), Text(CONTENTS, 6)),
            Op::Open(named("lastlight/stagelint.toml")),
            Op::Config(broken),
            Op::Create(named("handoff/stagelint.toml"), Text(CONTENTS, 3)),
        ],
    );
}

/// A stage edited while the first index ran is checked aside (a first pass, its cassettes'
/// replays to follow), and the index leaves its scope out. A change elsewhere then made that
/// second pass stale, and it was dropped as if the index would check the scope: the closed
/// cassettes beside the stage never showed their findings.
#[test]
fn sequences_a_second_pass_of_an_edit_during_the_index_is_not_lost() {
    let sm = named("handoff/sm.yaml");
    for _ in 0..3 {
        assert_agrees(
            false,
            &[
                Op::DeleteAll(named("dry/plan.md")),
                // Refused at once: the next change lands while the index runs.
                Op::DryRun(DryRun::OutsideCassette(sm)),
                Op::Create(sm, Text(CONTENTS, 0)),
            ],
        );
    }
}

/// A byte order mark in a document the client sent is a character, in its edits and in the
/// positions the server sends back; in a file read from disk it is none, as editors load it.
/// Before, edits counted it and positions did not: findings on the first line of an open
/// document were one character off, and the client's edits after a BOM it typed went astray.
#[test]
fn sequences_a_byte_order_mark_counts_in_open_documents_only() {
    let loose = named("loose/sm.yaml");
    let bom_sm = Text(CONTENTS, CONTENTS.iter().position(|c| c.starts_with("\u{feff}entry")).expect("a BOM sm.yaml"));
    let typo = Change { start: 9, len: 2, past_line_end: false, insert: Text(INSERTS, 1) };
    for utf16 in [false, true] {
        // Closed, then open; the BOM deleted, typed again, and the line edited after it.
        assert_agrees(utf16, &[Op::Create(loose, bom_sm)]);
        assert_agrees(utf16, &[Op::Create(loose, bom_sm), Op::Open(loose)]);
        assert_agrees(
            utf16,
            &[
                Op::Create(loose, bom_sm),
                Op::ToggleBom(loose),
                Op::ToggleBom(loose),
                Op::Edit(loose, vec![typo.clone()]),
            ],
        );
        // A stage with a BOM on disk, opened and closed again.
        let stage = named("handoff/plan.md");
        assert_agrees(
            utf16,
            &[Op::BomOnDisk(stage), Op::Open(stage), Op::Edit(stage, vec![typo.clone()]), Op::Close(stage)],
        );
    }
}

/// A config opened (unsaved, broken) while the first index ran: the index's later batches,
/// made with the texts of before, were published as if the config did not exist, since a
/// missing config is no file an analysis reads.
#[test]
fn sequences_a_config_opened_during_the_index_governs_its_later_batches() {
    let sm = named("handoff/sm.yaml");
    let fence = Change { start: 0, len: 0, past_line_end: false, insert: Text(INSERTS, 7) };
    assert_eq!(fence.insert.get(), "---\n");
    for _ in 0..3 {
        assert_agrees(
            false,
            &[Op::DryRun(DryRun::WithCassette(sm, sm)), Op::Edit(named("stagelint.toml"), vec![fence.clone()])],
        );
    }
}

/// Issue 32: configs that exclude files leave out the same files in the editor as in `check`:
/// names and paths, a nested config's own patterns, prompts a workflow names (read for it,
/// never reported), an agent's prompts (then missing for its registry), open documents in an
/// excluded directory, and a pattern that does not parse (a broken config in both).
#[test]
fn sequences_excludes_leave_out_the_same_files() {
    let fence = Change { start: 0, len: 0, past_line_end: false, insert: Text(INSERTS, 7) };
    for content in 12..16 {
        let config = Text(CONTENTS, content);
        assert_agrees(false, &[Op::Config(config)]);
        assert_agrees(
            true,
            &[
                Op::Config(config),
                Op::Open(named("dry/plan.md")),
                Op::Edit(named("handoff/plan.md"), vec![fence.clone()]),
                Op::Create(named("loose/draft.md"), Text(CONTENTS, 1)),
            ],
        );
        assert_agrees(
            false,
            &[Op::Create(named("handoff/stagelint.toml"), config), Op::Open(named("handoff/plan.md"))],
        );
    }
    // Found by the random sequences: an open prompt of an excluded directory, deleted on disk,
    // made the editor read it (and then miss the agent's other prompts) where `check` of the
    // saved files never enters the directory.
    let prompt = named(".agent/fixer/prompts/system.md");
    assert_agrees(false, &[Op::Config(Text(CONTENTS, 14)), Op::Delete(prompt), Op::Edit(prompt, vec![fence])]);
    // Found by the random sequences: a config that no longer excludes `dry/` left its cassettes
    // unchecked in the editor, as no analysis had their scope to re-check.
    let ask = Op::Ask(Request::Completion, named("handoff/sm.yaml"), At::Offset(0));
    assert_agrees(false, &[Op::Config(Text(CONTENTS, 14)), ask, Op::Config(Text(CONTENTS, 3))]);
}

/// A hover in a cassette just after an emoji (`😀x`) panicked (the word's start was one byte
/// after the emoji's first), and the request was never answered.
#[test]
fn sequences_a_hover_after_an_emoji_in_a_cassette_is_answered() {
    let cassette = named("dry/extra.cassette.yaml");
    let insert = |text: &str| Change {
        start: 0,
        len: 0,
        past_line_end: false,
        insert: Text(INSERTS, INSERTS.iter().position(|i| *i == text).expect("an insert")),
    };
    let typed = Op::Edit(cassette, vec![insert("x"), insert("😀")]);
    // The boundaries of `😀x` are 0, 4 and 5: the second is `x`.
    assert_agrees(false, &[typed, Op::Ask(Request::Hover, cassette, At::Offset(1))]);
}

/// A skill's first line ended by a CRLF: `stagelint/SkillFrontmatter` spans it up to the `\n`,
/// and the command line put the end one column past the line (the server, at its end).
#[test]
fn sequences_a_span_ending_inside_a_crlf_ends_its_line_in_both() {
    let skill = named("lastlight/skills/planning/SKILL.md");
    // The description line's end replaced by a CRLF, then the lines before it deleted.
    let crlf = Change { start: 36555, len: 0, past_line_end: true, insert: Text(INSERTS, 4) };
    let head = Change { start: 5975, len: 19, past_line_end: false, insert: Text(INSERTS, 0) };
    assert_eq!(crlf.insert.get(), "\r\n");
    assert_agrees(false, &[Op::Edit(skill, vec![crlf, head])]);
}

/// The baseline of `handoff/` (named by the root config): what it accepts stays hidden while
/// the file is edited elsewhere, shows once its text changes, and every finding shows when a
/// config without the baseline replaces the root one (or with a rule turned off, its entries
/// stale on the command line only).
#[test]
fn sequences_a_baseline_hides_what_it_accepts_until_its_text_changes() {
    let plan = named("handoff/plan.md");
    let edit = |start, len, insert| Change { start, len, past_line_end: false, insert: Text(INSERTS, insert) };
    assert_agrees(false, &[Op::Open(plan), Op::Edit(plan, vec![edit(0, 0, 4)])]);
    assert_agrees(false, &[Op::Open(plan), Op::Edit(plan, vec![edit(120, 6, 1)]), Op::Save(plan)]);
    assert_agrees(true, &[Op::Open(plan), Op::Config(Text(CONTENTS, 3))]);
    assert_agrees(false, &[Op::Config(Text(CONTENTS, 12)), Op::Open(named("handoff/review.md"))]);
}
