//! A soak of `stagelint lsp`: the release binary over stdio, on a generated 2,000-file
//! workspace (100 machines x 20 stages), typed into at 100 keystrokes a second for 60 s. Run
//! with
//!
//! ```text
//! cargo bench --bench lsp_soak
//! SOAK_SECONDS=15 cargo bench --bench lsp_soak      # a quick run
//! ```
//!
//! Three stages in different machines are open; each keystroke types or deletes one character
//! of a sentence with placeholders (`{{ctx.task}}`, the unresolved `{{ctx.tsak}}`), so findings
//! come and go as the text passes through half-typed states. The typing moves to the next
//! document every 200 keystrokes.
//!
//! It prints the server's resident set size (VmRSS) each second and a verdict: no growth after
//! the first 10 s (the highest RSS after 10 s is within 5 % or 4 MiB of the highest before). At
//! the end, one more edit per document must be answered with a publish of its version; once the
//! server is idle (`stagelint/idle`), what it last published for every file must equal
//! `stagelint check --format json` on the final texts. A failed check exits with 1.
//! `SOAK_SECONDS` and `SOAK_RATE` (keystrokes a second) change the load.

#[allow(dead_code)]
mod generator;
#[path = "../tests/lsp_client/mod.rs"]
mod lsp_client;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use lsp_client::{Client, uri};

const MACHINES: usize = 100;
const STAGES: usize = 20;

/// What each document has typed into it, a character at a time, then deleted again.
const SENTENCE: &str = " Also check {{ctx.task}} against {{ctx.tsak}} and {{ctx.branch}}.";

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn rss_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// One open document and where the typing goes: the end of one body line.
struct Typing {
    path: PathBuf,
    text: String,
    version: i64,
    line: usize,
    /// Characters of `SENTENCE` typed so far, and whether they are being deleted.
    typed: usize,
    deleting: bool,
}

impl Typing {
    fn line_start(&self) -> usize {
        self.text.split_inclusive('\n').take(self.line).map(str::len).sum()
    }

    fn line_len(&self) -> usize {
        self.text.split('\n').nth(self.line).map_or(0, str::len)
    }

    /// The next keystroke: (column, characters removed, inserted text); applied to the text.
    fn keystroke(&mut self) -> (usize, usize, String) {
        if !self.deleting && self.typed == SENTENCE.len() {
            self.deleting = true;
        } else if self.deleting && self.typed == 0 {
            self.deleting = false;
        }
        let end = self.line_len();
        let at = self.line_start() + end;
        if self.deleting {
            self.typed -= 1;
            self.text.replace_range(at - 1..at, "");
            (end - 1, 1, String::new())
        } else {
            let c = &SENTENCE[self.typed..self.typed + 1];
            self.typed += 1;
            self.text.insert_str(at, c);
            (end, 0, c.to_string())
        }
    }
}

/// What the server last published for each URI, with the newest version per URI.
#[derive(Default)]
struct Seen {
    last: HashMap<String, Value>,
    versions: HashMap<String, i64>,
    publishes: usize,
    backwards: Vec<String>,
}

impl Seen {
    /// Takes messages in order until `uri` is published at `version`; its diagnostics.
    fn wait_for(&mut self, server: &mut Client, uri: &str, version: i64) -> Option<Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let messages = server.poll();
            let found = messages.iter().rev().find(|m| {
                m["method"] == "textDocument/publishDiagnostics"
                    && m["params"]["uri"] == uri
                    && m["params"]["version"] == version
            });
            let list = found.map(|m| m["params"]["diagnostics"].clone());
            self.take(messages);
            if list.is_some() {
                return list;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        None
    }

    fn take(&mut self, messages: Vec<Value>) {
        for message in messages {
            if message["method"] != "textDocument/publishDiagnostics" {
                continue;
            }
            self.publishes += 1;
            let params = &message["params"];
            let uri = params["uri"].as_str().unwrap_or_default().to_string();
            if let Some(version) = params["version"].as_i64() {
                let before = self.versions.insert(uri.clone(), version);
                if before.is_some_and(|b| b > version) {
                    self.backwards.push(format!("{uri}: {version} after {before:?}"));
                }
            }
            self.last.insert(uri, params["diagnostics"].clone());
        }
    }
}

/// `stagelint check --format json` on `root`: (code, range) by URI, ASCII texts only.
fn cli_findings(root: &Path) -> HashMap<String, Vec<String>> {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_stagelint"))
        .args(["check", "--format", "json", "."])
        .current_dir(root)
        .output()
        .expect("stagelint check runs");
    let report: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for d in report["diagnostics"].as_array().expect("diagnostics") {
        let at = |p: &Value| (p["line"].as_u64().unwrap() - 1, p["column"].as_u64().unwrap() - 1);
        let (start, end) = (at(&d["range"]["start"]), at(&d["range"]["end"]));
        let key = format!("{} {}:{}-{}:{}", d["code"], start.0, start.1, end.0, end.1);
        out.entry(uri(&root.join(d["path"].as_str().unwrap()))).or_default().push(key);
    }
    out
}

fn shown(list: &Value) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            let r = &d["range"];
            format!(
                "{} {}:{}-{}:{}",
                d["code"], r["start"]["line"], r["start"]["character"], r["end"]["line"], r["end"]["character"]
            )
        })
        .collect()
}

fn main() {
    let seconds = env_number("SOAK_SECONDS", 60);
    let rate = env_number("SOAK_RATE", 100).max(1);
    let dir = tempfile::tempdir().expect("temp dir");
    generator::generate(dir.path(), MACHINES, STAGES);
    println!(
        "lsp_soak: {} files, {rate} keystrokes/s for {seconds} s, release server over stdio",
        MACHINES * (STAGES + 1)
    );

    let mut server = Client::spawn();
    let pid = server.pid().expect("a server process");
    server.initialize_with(dir.path(), json!({"general": {"positionEncodings": ["utf-16"]}}));
    let mut docs: Vec<Typing> = [(0, 3), (50, 7), (99, 12)]
        .iter()
        .map(|(m, s)| {
            let path = dir.path().join(format!("sm-{m:04}/stage-{s}.md"));
            let text = std::fs::read_to_string(&path).expect("a generated stage");
            // The last body paragraph, before the closing instruction.
            let line = text.lines().position(|l| l.starts_with("Paragraph 11")).expect("a paragraph line");
            server.open(&path, &text);
            Typing { path, text, version: 1, line, typed: 0, deleting: false }
        })
        .collect();
    let mut seen = Seen::default();

    let began = Instant::now();
    let interval = Duration::from_secs_f64(1.0 / rate as f64);
    let total = seconds * rate;
    let mut rss: Vec<(u64, u64)> = Vec::new();
    let mut next_sample = began + Duration::from_secs(1);
    for k in 0..total {
        let due = began + interval * k as u32;
        while Instant::now() < due {
            seen.take(server.poll());
            std::thread::sleep(Duration::from_micros(500).min(due.saturating_duration_since(Instant::now())));
        }
        let doc = &mut docs[(k / 200) as usize % 3];
        let (column, removed, inserted) = doc.keystroke();
        doc.version += 1;
        let (path, version, line) = (doc.path.clone(), doc.version, doc.line);
        server.change(&path, version, line, column, column + removed, &inserted);
        if Instant::now() >= next_sample {
            let second = next_sample.duration_since(began).as_secs();
            rss.push((second, rss_kib(pid, "VmRSS:").unwrap_or(0)));
            next_sample += Duration::from_secs(1);
        }
    }
    let typing = began.elapsed();
    rss.push((seconds, rss_kib(pid, "VmRSS:").unwrap_or(0)));
    let peak = rss_kib(pid, "VmHWM:").unwrap_or(0);

    // One more edit per document, which always changes its findings: the half-typed sentence
    // becomes one unresolved placeholder. It must be answered.
    let mut failures = Vec::new();
    for doc in &mut docs {
        let start = doc.line_start();
        let (typed_from, end) = (doc.line_len() - doc.typed, doc.line_len());
        doc.text.replace_range(start + typed_from..start + end, " {{ctx.soak_final}}");
        doc.version += 1;
        let (path, version) = (doc.path.clone(), doc.version);
        server.change(&path, version, doc.line, typed_from, end, " {{ctx.soak_final}}");
        let target = uri(&path);
        let answer = Instant::now();
        let Some(list) = seen.wait_for(&mut server, &target, version) else {
            failures.push(format!("{target}: no publish for the final version {version} within 30 s"));
            continue;
        };
        let codes = shown(&list);
        println!("final edit of {}: answered in {:?} ({} findings)", path.display(), answer.elapsed(), codes.len());
        if !codes.iter().any(|c| c.contains("StageCtxUnresolved")) {
            failures.push(format!("{target}: the final edit's finding is missing: {codes:?}"));
        }
    }
    let idle = server.request("stagelint/idle", json!(null));
    server.wait("the idle notification", |m| m["method"] == "stagelint/idle");
    seen.take(server.poll());
    if idle != json!(true) {
        failures.push("the server did not become idle".into());
    }

    // Every file: what the server shows equals `stagelint check` on the final texts.
    for doc in &docs {
        std::fs::write(&doc.path, &doc.text).expect("write the final text");
    }
    let expected = cli_findings(dir.path());
    let mut uris: Vec<&String> = expected.keys().chain(seen.last.keys()).collect();
    uris.sort();
    uris.dedup();
    let mut compared = 0;
    for target in uris {
        compared += 1;
        let mut server_list = seen.last.get(target).map(shown).unwrap_or_default();
        let mut cli_list = expected.get(target).cloned().unwrap_or_default();
        server_list.sort();
        cli_list.sort();
        if server_list != cli_list {
            failures.push(format!("{target}: server {server_list:?}, check {cli_list:?}"));
        }
    }
    failures.extend(seen.backwards.iter().map(|b| format!("version went backwards: {b}")));

    // The RSS series and its verdict.
    println!("RSS (MiB) each second:");
    let line: Vec<String> = rss.iter().map(|(s, kib)| format!("{s}:{:.1}", *kib as f64 / 1024.0)).collect();
    for chunk in line.chunks(10) {
        println!("  {}", chunk.join("  "));
    }
    let early = rss.iter().filter(|(s, _)| *s <= 10).map(|(_, k)| *k).max().unwrap_or(0);
    let late = rss.iter().filter(|(s, _)| *s > 10).map(|(_, k)| *k).max().unwrap_or(early);
    let allowed = (early / 20).max(4 * 1024);
    let growth = late.saturating_sub(early);
    let stable = growth <= allowed;
    println!(
        "keystrokes: {total} in {:.1} s; publishes: {}; files compared with `stagelint check`: {compared}",
        typing.as_secs_f64(),
        seen.publishes
    );
    println!(
        "RSS: highest in the first 10 s {:.1} MiB, highest after {:.1} MiB (growth {:.1} MiB, allowed {:.1}); peak (VmHWM) {:.1} MiB: {}",
        early as f64 / 1024.0,
        late as f64 / 1024.0,
        growth as f64 / 1024.0,
        allowed as f64 / 1024.0,
        peak as f64 / 1024.0,
        if stable { "stable" } else { "GROWING" }
    );
    if !stable {
        failures.push("RSS grew after the first 10 s".into());
    }
    if failures.is_empty() {
        println!("verdict: pass (every final edit answered, diagnostics equal `stagelint check`, RSS stable)");
    } else {
        for failure in &failures {
            println!("FAIL: {failure}");
        }
        std::process::exit(1);
    }
}
