//! Editor-perceived latency of `stagelint lsp`: the release binary over stdio, driven by a
//! small JSON-RPC client, on generated workspaces. Run with
//!
//! ```text
//! cargo bench --bench lsp_latency
//! ```
//!
//! `cargo bench` builds the `stagelint` binary with the bench profile (release settings) and
//! hands its path to benches as `CARGO_BIN_EXE_stagelint`, so nothing is built here.
//!
//! Scenarios (targets in brackets):
//! 1. one 2,000-line stage open, 200 keystroke edits: edit -> the publish for its version
//!    [p50 < 10 ms, p95 < 30 ms]; every edit changes the findings (odd edits type the `{` that
//!    turns `{env.X}}` into the forbidden `{{env.X}}`, even edits delete it again);
//!    1b. the same in a state machine whose cassettes the re-check replays (the shipped
//!    code-review example) [same targets];
//! 2. a 2,000-file workspace (100 machines x 20 stages): renaming an open stage's `id` ->
//!    the referring stage's diagnostics, and back, 50 times [< 50 ms];
//! 3. 200 completions after `allowedTools: [` [p95 < 20 ms];
//! 4. `initialize` -> first diagnostics on the 2,000-file workspace with one broken stage per
//!    machine, 5 fresh servers [< 300 ms];
//!
//! 5. a 20,000-file workspace (4,000 machines x 5 stages, one broken stage per machine), 3
//!    fresh servers: `initialize` and open one stage -> its first diagnostics [< 100 ms], ->
//!    every broken stage (the whole first index) [< 2 s]; 5b. on the first server, 40
//!    keystrokes in the open stage while the index runs: edit -> the publish for its version
//!    [p99 < 20 ms];
//!
//! 6. 200 atomic workflows from the corpus shapes, `wf-000/claude/index.ts` (the
//!    `deep-research-codebase` shape) open, 200 edits turning a stage's `headless` into the
//!    unknown `headles` and back: edit -> the publish for its version [p50 < 5 ms];
//!
//! 7. a stage of a three-stage pipeline whose machine cassette has 10,000 turns, 200 edits
//!    typing and deleting the `{` of a `{{env.X}}`: edit -> the first publish for its version
//!    (the file's own findings; the replays follow in a second pass) [p95 < 15 ms];
//!
//! plus the servers' peak RSS (VmHWM) [< 150 MB; < 300 MB for the 20,000 files]. Every wait has
//! a timeout. `cargo bench --bench lsp_latency -- monorepo` runs scenario 5 alone.

#[allow(dead_code)]
mod generator;
#[path = "../tests/lsp_client/mod.rs"]
mod lsp_client;

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use lsp_client::{Client, uri};

const MACHINES: usize = 100;
const STAGES: usize = 20;

/// The release server over stdio, through the tests' client (unmatched messages are dropped).
fn start_server() -> Client {
    let mut client = Client::spawn();
    client.keep_backlog = false;
    client
}

fn initialize(server: &mut Client, root: &Path) {
    server.initialize_with(root, json!({"general": {"positionEncodings": ["utf-16"]}}));
}

/// The server's peak resident set size so far, in KiB.
fn peak_rss_kib(server: &Client) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid()?)).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn diagnostics(params: &Value) -> &[Value] {
    params["diagnostics"].as_array().map(Vec::as_slice).unwrap_or(&[])
}

fn has_code(params: &Value, code: &str) -> bool {
    diagnostics(params).iter().any(|d| d["code"] == code)
}

/// Latency samples and their nearest-rank percentiles.
struct Samples {
    name: &'static str,
    values: Vec<Duration>,
}

impl Samples {
    fn new(name: &'static str) -> Samples {
        Samples { name, values: Vec::new() }
    }

    fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.values.clone();
        sorted.sort();
        let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1]
    }

    fn max(&self) -> Duration {
        self.values.iter().copied().max().unwrap_or_default()
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

/// The `(line, column)` of every `{env.` in `text` (ASCII, so UTF-16 columns are byte columns).
fn env_sites(text: &str) -> Vec<(usize, usize)> {
    text.lines().enumerate().filter_map(|(n, line)| line.find("{env.").map(|col| (n, col))).collect()
}

/// A valid stage whose body has 2,000 lines; each body line carries an inert `{env.Vn}}`
/// (one brace short of a placeholder) and every fifth line real `ctx` placeholders.
fn long_stage() -> String {
    let mut text = String::from(
        "---\nid: stage-0\nname: Long stage\ndescription: A stage with a 2,000-line body\nallowedTools: [Read, Grep, Glob, Edit]\ncompletionTool: submit_0\ncompletionSchema:\n  type: object\n  required: [summary]\n  properties:\n    summary: { type: string }\nretryPolicy:\n  maxAttempts: 2\n  backoff: none\nturnCap: 20\nresolutionPolicy: retry-later\n---\n",
    );
    text.push_str("# Long stage\n");
    for i in 0..1998 {
        if i % 5 == 0 {
            text.push_str(&format!(
                "Step {i}: work on {{{{ctx.task}}}} in branch {{{{ctx.branch}}}}; the literal {{env.V{i}}}}} stays text.\n"
            ));
        } else {
            text.push_str(&format!(
                "Step {i}: keep the change small, explain it, and leave {{env.V{i}}}}} alone as plain text.\n"
            ));
        }
    }
    text.push_str("When done, call `submit_0` with a `summary`.\n");
    text
}

const SM_YAML: &str = "entry: stage-0\ncontext:\n  required: [task]\n  optional: [branch]\n";

/// Scenario 1: keystrokes in one 2,000-line stage.
fn long_file(samples: &mut Samples) -> Option<u64> {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = long_stage();
    std::fs::write(dir.path().join("sm.yaml"), SM_YAML).expect("write sm.yaml");
    let path = dir.path().join("stage-0.md");
    std::fs::write(&path, &text).expect("write stage");
    assert!(env_sites(&text).len() >= 1998, "every body line has a `{{env.` site");
    keystrokes(dir.path(), &path, &text, samples)
}

/// Opens the clean stage at `path` and times 200 edits, each turning a `{env.` site into the
/// forbidden `{{env.` placeholder or back: edit -> the publish for its version.
fn keystrokes(root: &Path, path: &Path, text: &str, samples: &mut Samples) -> Option<u64> {
    let sites = env_sites(text);
    let mut server = start_server();
    initialize(&mut server, root);
    server.open(path, text);
    let first = server.published(&uri(path), |p| p["version"] == 1);
    assert!(diagnostics(&first).is_empty(), "the long stage must start clean: {first}");
    for k in 0..200usize {
        let version = k as i64 + 2;
        // Pairs of edits at spread-out lines: type `{`, then delete it.
        let (line, col) = sites[(k / 2 * 397) % sites.len()];
        let start = Instant::now();
        if k % 2 == 0 {
            server.change(path, version, line, col, col, "{");
        } else {
            server.change(path, version, line, col, col + 1, "");
        }
        let params = server.published(&uri(path), |p| p["version"] == version);
        samples.values.push(start.elapsed());
        let expected = if k % 2 == 0 { 1 } else { 0 };
        assert_eq!(diagnostics(&params).len(), expected, "edit {k}: {params}");
        assert_eq!(has_code(&params, "sm/ForbiddenPlaceholder"), expected == 1, "edit {k}: {params}");
    }
    peak_rss_kib(&server)
}

/// Scenario 1b: keystrokes in a 2,000-line stage of the shipped code-review machine, whose
/// cassettes are replayed on every re-check of the machine.
fn long_file_with_cassettes(samples: &mut Samples) -> Option<u64> {
    let dir = tempfile::tempdir().expect("temp dir");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/code-review");
    for entry in std::fs::read_dir(&example).expect("the example").flatten() {
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).expect("copy");
    }
    let path = dir.path().join("execute.md");
    let mut text = std::fs::read_to_string(&path).expect("execute.md");
    for i in 0..2000 {
        text.push_str(&format!("Step {i}: review {{{{ctx.task}}}} with {{{{ctx.upstream[0].parsed.summary}}}}; {{env.V{i}}}}} stays text.\n"));
    }
    std::fs::write(&path, &text).expect("write");
    keystrokes(dir.path(), &path, &text, samples)
}

/// The 2,000-file workspace, with `turnCap: 0` in the last stage of every machine.
fn big_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    generator::generate(dir.path(), MACHINES, STAGES);
    for m in 0..MACHINES {
        let path = broken_stage(dir.path(), m);
        let text = std::fs::read_to_string(&path).expect("read stage");
        assert!(text.contains("\nturnCap: 20\n"));
        std::fs::write(&path, text.replace("\nturnCap: 20\n", "\nturnCap: 0\n")).expect("write stage");
    }
    dir
}

fn broken_stage(root: &Path, machine: usize) -> std::path::PathBuf {
    root.join(format!("sm-{machine:04}")).join(format!("stage-{}.md", STAGES - 1))
}

/// Waits until every machine's broken stage has been published with its finding; returns when
/// the first diagnostics (for any file) arrived.
fn wait_for_all_broken(server: &mut Client, root: &Path) -> Instant {
    let wanted: HashSet<String> = (0..MACHINES).map(|m| uri(&broken_stage(root, m))).collect();
    let mut seen = HashSet::new();
    let mut first = None;
    while seen.len() < wanted.len() {
        let message =
            server.wait("the broken stages' diagnostics", |m| m["method"] == "textDocument/publishDiagnostics");
        first.get_or_insert_with(Instant::now);
        let params = &message["params"];
        if let Some(uri) = params["uri"].as_str()
            && wanted.contains(uri)
            && has_code(params, "sm/StageTurnCapTooLow")
        {
            seen.insert(uri.to_string());
        }
    }
    first.unwrap_or_else(Instant::now)
}

/// Scenario 4: fresh servers, `initialize` -> first diagnostics (and -> all broken stages).
fn startup(root: &Path, first: &mut Samples, all: &mut Samples) -> Option<u64> {
    let mut peak = None;
    for _ in 0..5 {
        let mut server = start_server();
        let start = Instant::now();
        initialize(&mut server, root);
        let first_publish = wait_for_all_broken(&mut server, root);
        all.values.push(start.elapsed());
        first.values.push(first_publish - start);
        peak = peak.max(peak_rss_kib(&server));
    }
    peak
}

/// Scenarios 2 and 3 on one server over the 2,000-file workspace.
fn cross_file_and_completion(
    root: &Path,
    rename: &mut Samples,
    revert: &mut Samples,
    complete: &mut Samples,
) -> Option<u64> {
    let mut server = start_server();
    initialize(&mut server, root);
    wait_for_all_broken(&mut server, root);

    // `stage-4` fans out to `stage-5` and `stage-6`; renaming `stage-5` leaves it dangling.
    let machine = root.join("sm-0050");
    let renamed = machine.join("stage-5.md");
    let referrer = uri(&machine.join("stage-4.md"));
    let text = std::fs::read_to_string(&renamed).expect("read stage");
    assert_eq!(text.lines().nth(1), Some("id: stage-5"));
    server.open(&renamed, &text);
    server.published(&uri(&renamed), |p| p["version"] == 1 && diagnostics(p).is_empty());

    let mut version: i64 = 1;
    for _ in 0..50 {
        version += 1;
        let start = Instant::now();
        server.change(&renamed, version, 1, 11, 11, "x");
        server.published(&referrer, |p| has_code(p, "sm/UnknownNextStage"));
        rename.values.push(start.elapsed());

        version += 1;
        let start = Instant::now();
        server.change(&renamed, version, 1, 11, 12, "");
        server.published(&referrer, |p| diagnostics(p).is_empty());
        revert.values.push(start.elapsed());
    }
    // No need to wait for the renamed file's own publish: completion answers from the analysis
    // of the newest text (the server waits for it).

    // `allowedTools: [Read, ...` is line 4; the cursor goes right after `[`.
    assert_eq!(text.lines().nth(4).map(|l| &l[..15]), Some("allowedTools: ["));
    let params = json!({"textDocument": {"uri": uri(&renamed)}, "position": {"line": 4, "character": 15}});
    for i in 0..200 {
        let start = Instant::now();
        let result = server.request("textDocument/completion", params.clone());
        complete.values.push(start.elapsed());
        if i == 0 {
            let items = result.as_array().or_else(|| result["items"].as_array()).map_or(0, Vec::len);
            assert!(items > 0, "completion after `allowedTools: [` offered nothing: {result}");
        }
    }
    peak_rss_kib(&server)
}

const MONO_MACHINES: usize = 4000;
const MONO_STAGES: usize = 5;

/// The 20,000-file workspace, with `turnCap: 0` in the last stage of every machine.
fn monorepo_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    generator::generate(dir.path(), MONO_MACHINES, MONO_STAGES);
    for m in 0..MONO_MACHINES {
        let path = mono_broken(dir.path(), m);
        let text = std::fs::read_to_string(&path).expect("read stage");
        std::fs::write(&path, text.replace("\nturnCap: 20\n", "\nturnCap: 0\n")).expect("write stage");
    }
    dir
}

fn mono_broken(root: &Path, machine: usize) -> std::path::PathBuf {
    root.join(format!("sm-{machine:04}")).join(format!("stage-{}.md", MONO_STAGES - 1))
}

/// Scenario 5: fresh servers on the 20,000-file workspace; the first also takes keystrokes in
/// the open stage while it indexes. Returns the peak RSS and how many edits were answered
/// before the index ended.
fn monorepo(root: &Path, first: &mut Samples, all: &mut Samples, during: &mut Samples) -> (Option<u64>, usize) {
    let wanted: HashSet<String> = (0..MONO_MACHINES).map(|m| uri(&mono_broken(root, m))).collect();
    let path = root.join("sm-2000").join("stage-2.md");
    let own = uri(&path);
    let text = std::fs::read_to_string(&path).expect("read stage");
    // `turnCap: 20` is line 17; `20` -> `0` adds `sm/StageTurnCapTooLow`, and back.
    assert_eq!(text.lines().nth(17), Some("turnCap: 20"));
    let (mut peak, mut in_index) = (None, 0);
    for run in 0..3 {
        let mut server = start_server();
        let mut seen = HashSet::new();
        let track = |m: &Value, seen: &mut HashSet<String>| {
            let params = &m["params"];
            if m["method"] == "textDocument/publishDiagnostics"
                && let Some(uri) = params["uri"].as_str()
                && wanted.contains(uri)
                && has_code(params, "sm/StageTurnCapTooLow")
            {
                seen.insert(uri.to_string());
            }
        };
        let start = Instant::now();
        initialize(&mut server, root);
        server.open(&path, &text);
        server.wait("the open stage's first diagnostics", |m| {
            track(m, &mut seen);
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == own.as_str()
        });
        first.values.push(start.elapsed());
        if run == 0 {
            for k in 0..40usize {
                let version = k as i64 + 2;
                let edit_start = Instant::now();
                if k % 2 == 0 {
                    server.change(&path, version, 17, 9, 11, "0");
                } else {
                    server.change(&path, version, 17, 9, 10, "20");
                }
                server.wait("the edit's publish", |m| {
                    track(m, &mut seen);
                    m["method"] == "textDocument/publishDiagnostics"
                        && m["params"]["uri"] == own.as_str()
                        && m["params"]["version"] == version
                });
                during.values.push(edit_start.elapsed());
                if seen.len() < wanted.len() {
                    in_index += 1;
                }
            }
        }
        while seen.len() < wanted.len() {
            let message =
                server.wait("the broken stages' diagnostics", |m| m["method"] == "textDocument/publishDiagnostics");
            track(&message, &mut seen);
        }
        all.values.push(start.elapsed());
        peak = peak.max(peak_rss_kib(&server));
    }
    (peak, in_index)
}

/// Scenario 6: keystrokes in the largest atomic workflow shape among 200 generated workflows.
fn atomic_edits(samples: &mut Samples) -> Option<u64> {
    let dir = tempfile::tempdir().expect("temp dir");
    generator::generate_atomic(dir.path(), 200);
    let path = dir.path().join(".atomic/workflows/wf-000/claude/index.ts");
    let text = std::fs::read_to_string(&path).expect("the deep-research shape");
    let (line, col) = text
        .lines()
        .enumerate()
        .find_map(|(n, l)| l.find("headless: true").map(|c| (n, c + "headles".len())))
        .expect("a headless stage");
    let mut server = start_server();
    initialize(&mut server, dir.path());
    server.open(&path, &text);
    let first = server.published(&uri(&path), |p| p["version"] == 1);
    assert!(!has_code(&first, "atomic/UnknownOption"), "the shape starts without unknown options: {first}");
    for k in 0..200usize {
        let version = k as i64 + 2;
        let start = Instant::now();
        if k % 2 == 0 {
            server.change(&path, version, line, col, col + 1, "");
        } else {
            server.change(&path, version, line, col, col, "s");
        }
        let params = server.published(&uri(&path), |p| p["version"] == version);
        samples.values.push(start.elapsed());
        assert_eq!(has_code(&params, "atomic/UnknownOption"), k % 2 == 0, "edit {k}: {params}");
    }
    peak_rss_kib(&server)
}

/// Scenario 7: keystrokes in a stage whose machine has a 10,000-turn cassette.
fn long_cassette(samples: &mut Samples) -> Option<u64> {
    let dir = tempfile::tempdir().expect("temp dir");
    generator::generate_pipeline(dir.path(), [("plan", 5999), ("execute", 2999), ("review", 999)], 10_000);
    let path = dir.path().join("execute.md");
    let text = std::fs::read_to_string(&path).expect("execute.md") + "Leave {env.HOME}} as text.\n";
    std::fs::write(&path, &text).expect("write execute.md");
    let cassette = std::fs::read_to_string(dir.path().join("sm.cassette.yaml")).expect("cassette");
    assert_eq!(cassette.matches("- response:").count(), 10_000, "10,000 turns");
    keystrokes(dir.path(), &path, &text, samples)
}

fn main() {
    let began = Instant::now();
    // `cargo bench` passes `--bench`; a `monorepo` filter runs scenario 5 alone.
    let only_monorepo = std::env::args().any(|a| a == "monorepo");
    let mut mono_first = Samples::new("5. 20,000 files: initialize+open -> its diagnostics (3)");
    let mut mono_all = Samples::new("5b. 20,000 files: initialize -> whole first index (3)");
    let mut mono_during = Samples::new("5c. 20,000 files: edit during the index -> publish (40)");
    let mono_root = monorepo_workspace();
    let (rss_mono, in_index) = monorepo(mono_root.path(), &mut mono_first, &mut mono_all, &mut mono_during);
    drop(mono_root);
    let mono_rows: [(&Samples, &str); 3] = [(&mono_first, "< 100"), (&mono_all, "< 2000"), (&mono_during, "p99 < 20")];
    if only_monorepo {
        print_rows(&mono_rows);
        println!("edits answered while the index ran: {in_index} of 40");
        println!("peak RSS (VmHWM), 20,000 files (max of 3), target < 300 MB: {}", mib(rss_mono));
        return;
    }

    let mut edit = Samples::new("1. 2,000-line file: edit -> publish (200)");
    let rss_long = long_file(&mut edit);
    let mut edit_replayed = Samples::new("1b. same, in a machine with cassettes (200)");
    let rss_replayed = long_file_with_cassettes(&mut edit_replayed);

    let root = big_workspace();
    let mut init_first = Samples::new("4. initialize -> first diagnostics (5)");
    let mut init_all = Samples::new("4b. initialize -> all 100 broken stages (5)");
    let rss_start = startup(root.path(), &mut init_first, &mut init_all);

    let mut rename = Samples::new("2. cross-file: rename id -> referrer (50)");
    let mut revert = Samples::new("2b. cross-file: revert id -> referrer (50)");
    let mut complete = Samples::new("3. completion `allowedTools: [` (200)");
    let rss_big = cross_file_and_completion(root.path(), &mut rename, &mut revert, &mut complete);

    let mut atomic = Samples::new("6. atomic deep-research workflow: edit -> publish (200)");
    let rss_atomic = atomic_edits(&mut atomic);

    let mut cassette = Samples::new("7. stage with a 10,000-turn cassette: edit -> 1st publish (200)");
    let rss_cassette = long_cassette(&mut cassette);

    let rows: [(&Samples, &str); 12] = [
        (&edit, "p50 < 10, p95 < 30"),
        (&edit_replayed, "p50 < 10, p95 < 30"),
        (&rename, "< 50"),
        (&revert, "< 50"),
        (&complete, "p95 < 20"),
        (&init_first, "< 300"),
        (&init_all, "-"),
        (&atomic, "p50 < 5"),
        (&cassette, "p95 < 15"),
        mono_rows[0],
        mono_rows[1],
        mono_rows[2],
    ];
    print_rows(&rows);
    println!("20,000 files: edits answered while the index ran: {in_index} of 40");
    println!("peak RSS (VmHWM), target < 150 MB (20,000 files: < 300 MB):");
    println!("  20,000-file workspace (max of 3):       {}", mib(rss_mono));
    println!("  2,000-line file server:                 {}", mib(rss_long));
    println!("  2,000-line stage with cassettes:        {}", mib(rss_replayed));
    println!("  2,000-file workspace, startup (max of 5): {}", mib(rss_start));
    println!("  2,000-file workspace, edits+completion:   {}", mib(rss_big));
    println!("  200 atomic workflows, edits:              {}", mib(rss_atomic));
    println!("  stage with a 10,000-turn cassette:        {}", mib(rss_cassette));
    println!();
    println!("total bench time: {:.1} s", began.elapsed().as_secs_f64());
}

fn print_rows(rows: &[(&Samples, &str)]) {
    println!();
    println!("stagelint lsp latency (ms; {} CPUs)", std::thread::available_parallelism().map_or(0, |n| n.get()));
    println!("{:<56} {:>8} {:>8} {:>8} {:>8}   target (ms)", "scenario", "p50", "p95", "p99", "max");
    println!("{}", "-".repeat(110));
    for (samples, target) in rows {
        println!(
            "{:<56} {:>8} {:>8} {:>8} {:>8}   {target}",
            samples.name,
            ms(samples.percentile(50.0)),
            ms(samples.percentile(95.0)),
            ms(samples.percentile(99.0)),
            ms(samples.max()),
        );
    }
    println!();
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or("n/a".to_string(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
}
