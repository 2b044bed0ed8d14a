//! End-to-end and per-phase benchmarks on generated workspaces: 2,000 stage files (100 state
//! machines x 20 stages; target: a full `check` under 300 ms on 2 cores) and a climpt agent
//! with a 200-step registry and its schemas (target: under 20 ms); 200 atomic workflows made
//! from the corpus shapes of v0.5, and 200 of 0.9 (target: discover + check under 50 ms each). `monorepo`: the binary's
//! `stagelint check DIR` wall time on 2,000 and 20,000 stage files (400 and 4,000 machines of
//! five stages, the same generator), and a pre-commit run naming 10 files of the larger one;
//! the same for 200 / 2,000 climpt agents of ten steps and 2,000 / 20,000 Last Light workflows.

#[allow(dead_code)]
mod generator;

use std::path::PathBuf;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use stagelint::config::Config;
use stagelint::source::{frontmatter, yaml};
use stagelint::workspace::discover::{ConfigCache, discover};
use stagelint::workspace::{FileKind, Workspace};

fn workspace_dir() -> PathBuf {
    let dir = std::env::temp_dir().join("stagelint-bench-2000");
    if !dir.join("sm-0099").join("stage-19.md").is_file() {
        generator::generate(&dir, 100, 20);
    }
    dir
}

fn benches(c: &mut Criterion) {
    let dir = workspace_dir();
    let mut group = c.benchmark_group("2000-stages");
    group.sample_size(20);

    group.bench_function("discover+check (end to end)", |b| {
        b.iter(|| {
            let mut configs = ConfigCache::new(None);
            let workspace = discover(std::slice::from_ref(&dir), &mut configs).expect("no config error");
            let diagnostics = stagelint::check::check(&workspace);
            assert!(diagnostics.is_empty(), "generated workspace must be clean");
            workspace.files().len()
        })
    });

    let workspace = read(&dir);
    assert_eq!(workspace.files().iter().filter(|f| f.kind == FileKind::Stage).count(), 2000);
    group.bench_function("check only (files in memory)", |b| checked_fresh(b, || read(&dir)));

    group.bench_function("frontmatter split + YAML parse", |b| {
        b.iter(|| {
            workspace
                .files()
                .iter()
                .filter_map(|f| frontmatter::split(&f.text).map(|fm| yaml::parse(&f.text[fm.yaml.start..fm.yaml.end])))
                .count()
        })
    });
    group.finish();

    c.bench_function("one stage file (parse + every rule)", |b| checked_fresh(b, || rebuild_one(&workspace)));

    let agent_root = std::env::temp_dir().join("stagelint-bench-agent-200");
    if !agent_root.join(".agent/bench/steps_registry.json").is_file() {
        generator::generate_agent(&agent_root, 200);
    }
    c.bench_function("200-step registry with schemas (check, in memory)", |b| checked_fresh(b, || read(&agent_root)));
    c.bench_function("200-step registry with schemas (discover + check)", |b| {
        b.iter(|| {
            let mut configs = ConfigCache::new(None);
            let agent = discover(std::slice::from_ref(&agent_root), &mut configs).expect("no config error");
            stagelint::check::check(&agent).len()
        })
    });
}

/// 200 Last Light workflow files with their prompts, a skill and crons.
fn lastlight(c: &mut Criterion) {
    let root = std::env::temp_dir().join("stagelint-bench-lastlight-200");
    if !root.join("workflows/flow-199.yaml").is_file() {
        generator::generate_lastlight(&root, 200);
    }
    assert!(stagelint::check::check(&read(&root)).is_empty(), "the generated project is clean");
    c.bench_function("200 lastlight workflows with prompts (check, in memory)", |b| checked_fresh(b, || read(&root)));
    // Unterminated tags once made the template scan quadratic.
    let hostile = format!("{}{}", "{{x ".repeat(250_000), "{".repeat(1_000_000));
    c.bench_function("2 MB of unterminated lastlight tags (template scan)", |b| {
        b.iter(|| {
            stagelint::template::lastlight::parse(&hostile, 0, stagelint::template::lastlight::Engine::Head).len()
        })
    });
    c.bench_function("200 lastlight workflows with prompts (discover + check)", |b| {
        b.iter(|| {
            let mut configs = ConfigCache::new(None);
            let workspace = discover(std::slice::from_ref(&root), &mut configs).expect("no config error");
            stagelint::check::check(&workspace).len()
        })
    });
}

/// 200 atomic workflows made from the corpus shapes (target: discover + check under 50 ms).
fn atomic(c: &mut Criterion) {
    let root = std::env::temp_dir().join("stagelint-bench-atomic-200");
    if !root.join(".atomic/workflows").is_dir() {
        let bytes = generator::generate_atomic(&root, 200);
        eprintln!("generated 200 atomic workflows, {:.1} MB", bytes as f64 / 1e6);
    }
    let workspace = read(&root);
    let owned = workspace.files().iter().filter(|f| f.kind == FileKind::AtomicWorkflow).count();
    assert_eq!(owned, 200, "every generated index.ts is an atomic workflow");
    let serious = stagelint::check::check(&workspace)
        .into_iter()
        .filter(|d| d.severity >= stagelint::diagnostic::Severity::Warning)
        .map(|d| d.code)
        .collect::<Vec<_>>();
    assert!(serious.is_empty(), "the corpus shapes are clean at warning and above: {serious:?}");
    c.bench_function("200 atomic workflows (check, in memory)", |b| checked_fresh(b, || read(&root)));
    c.bench_function("200 atomic workflows (discover + check)", |b| {
        b.iter(|| {
            let mut configs = ConfigCache::new(None);
            let workspace = discover(std::slice::from_ref(&root), &mut configs).expect("no config error");
            stagelint::check::check(&workspace).len()
        })
    });
}

/// 200 flat 0.9 `workflow({...})` files made from the current corpus shapes, with their `lib/`
/// helpers and a `package.json` pin (target: discover + check under 50 ms).
fn atomic_current(c: &mut Criterion) {
    let root = std::env::temp_dir().join("stagelint-bench-atomic-current-200");
    if !root.join(".atomic/workflows/wf-199.ts").is_file() {
        let bytes = generator::generate_atomic_current(&root, 200);
        eprintln!("generated 200 atomic 0.9 workflows, {:.1} MB", bytes as f64 / 1e6);
    }
    let workspace = read(&root);
    let owned =
        workspace.files().iter().filter(|f| f.kind == FileKind::AtomicWorkflow && f.display.contains("wf-")).count();
    assert_eq!(owned, 200, "every generated wf-NNN.ts is an atomic workflow");
    let serious = stagelint::check::check(&workspace)
        .into_iter()
        .filter(|d| d.severity >= stagelint::diagnostic::Severity::Warning)
        .map(|d| d.code)
        .collect::<Vec<_>>();
    assert!(serious.is_empty(), "the current corpus shapes are clean at warning and above: {serious:?}");
    c.bench_function("200 atomic 0.9 workflows (check, in memory)", |b| checked_fresh(b, || read(&root)));
    c.bench_function("200 atomic 0.9 workflows (discover + check)", |b| {
        b.iter(|| {
            let mut configs = ConfigCache::new(None);
            let workspace = discover(std::slice::from_ref(&root), &mut configs).expect("no config error");
            stagelint::check::check(&workspace).len()
        })
    });
}

/// The shipped code-review machine with its cassettes, one stage grown to 2,000 body lines: what
/// the language server re-checks on a keystroke in that stage (the scope is the machine, and
/// `check` replays its cassettes).
fn keystroke_scope(c: &mut Criterion) {
    let root = std::env::temp_dir().join("stagelint-bench-code-review-long");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).expect("temp dir");
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/code-review");
    for entry in std::fs::read_dir(&example).expect("the example").flatten() {
        std::fs::copy(entry.path(), root.join(entry.file_name())).expect("copy");
    }
    let execute = root.join("execute.md");
    let mut text = std::fs::read_to_string(&execute).expect("execute.md");
    for i in 0..2000 {
        text.push_str(&format!(
            "Step {i}: review the {{{{ctx.task}}}} using {{{{ctx.upstream[0].parsed.summary}}}} carefully.\n"
        ));
    }
    std::fs::write(&execute, text).expect("write");
    assert!(read(&root).files().iter().any(|f| f.kind == FileKind::Cassette), "the cassettes are read");
    c.bench_function("code-review machine, 2,000-line stage, with cassettes (check, in memory)", |b| {
        checked_fresh(b, || read(&root))
    });
}

/// Discovers and reads `dir`.
fn read(dir: &PathBuf) -> Workspace {
    let mut configs = ConfigCache::new(None);
    discover(std::slice::from_ref(dir), &mut configs).expect("no config error")
}

/// Times `check` on a workspace fresh from `make` (made and dropped outside the timing): a
/// workspace caches its stage parses, so checking the same one twice would time only the rules.
fn checked_fresh(b: &mut criterion::Bencher, make: impl Fn() -> Workspace) {
    b.iter_batched(
        make,
        |workspace| {
            let found = stagelint::check::check(&workspace).len();
            (workspace, found)
        },
        BatchSize::LargeInput,
    )
}

/// A workspace holding just the first stage file, for the per-file figure.
fn rebuild_one(from: &Workspace) -> Workspace {
    let file = from.files().iter().find(|f| f.kind == FileKind::Stage).expect("a stage");
    let mut one = Workspace::new();
    one.add(
        file.path.clone(),
        file.display.clone(),
        file.text.clone(),
        FileKind::Stage,
        Arc::new(Config::defaults(&dir_of(file))),
    );
    one
}

fn dir_of(file: &stagelint::workspace::SourceFile) -> PathBuf {
    file.path.parent().map(PathBuf::from).unwrap_or_default()
}

/// `stagelint check DIR` end to end (process start, walk, read, check, report) on generated
/// workspaces of 2,000 and 20,000 stage files; the 20,000 must stay within 10x the 2,000.
fn monorepo(c: &mut Criterion) {
    let binary = env!("CARGO_BIN_EXE_stagelint");
    let mut group = c.benchmark_group("monorepo");
    group.sample_size(10);
    let mut pairs: Vec<(&str, Vec<PathBuf>)> = Vec::new();
    for machines in [400, 4000] {
        let dir = std::env::temp_dir().join(format!("stagelint-bench-{machines}x5"));
        push_pair(&mut pairs, "state machines", &dir);
        if !dir.join(format!("sm-{:04}", machines - 1)).join("stage-4.md").is_file() {
            generator::generate(&dir, machines, 5);
        }
        let name = format!("stagelint check DIR, {} stage files", machines * 5);
        group.bench_function(name, |b| b.iter(|| run(binary, &[std::ffi::OsStr::new("check"), dir.as_os_str()])));
        group.bench_function(format!("floor: list and read the {} stage files", machines * 5), |b| {
            b.iter(|| read_everything(&dir))
        });
        if machines == 4000 {
            // A pre-commit hook names the changed files: only their machines are read.
            let named: Vec<PathBuf> = (0..10).map(|m| dir.join(format!("sm-{:04}/stage-2.md", m * 397))).collect();
            let mut args = vec![std::ffi::OsStr::new("check")];
            args.extend(named.iter().map(|p| p.as_os_str()));
            group.bench_function("stagelint check FILES, 10 of 20,000 stage files", |b| b.iter(|| run(binary, &args)));
        }
    }
    // The other families at the same scales: climpt agents of ten steps (200 and 2,000 agents,
    // each its own project), and Last Light workflows with their prompts (2,000 and 20,000).
    for agents in [200, 2000] {
        let dir = std::env::temp_dir().join(format!("stagelint-bench-agents-{agents}"));
        push_pair(&mut pairs, "climpt agents", &dir);
        if !dir.join(format!("a-{:04}/.agent/bench/agent.json", agents - 1)).is_file() {
            for a in 0..agents {
                generator::generate_agent(&dir.join(format!("a-{a:04}")), 10);
            }
        }
        let name = format!("stagelint check DIR, {agents} climpt agents of 10 steps");
        group.bench_function(name, |b| b.iter(|| run(binary, &[std::ffi::OsStr::new("check"), dir.as_os_str()])));
        group.bench_function(format!("floor: list and read the files of {agents} climpt agents"), |b| {
            b.iter(|| read_everything(&dir))
        });
    }
    for workflows in [2000, 20000] {
        let dir = std::env::temp_dir().join(format!("stagelint-bench-lastlight-{workflows}"));
        push_pair(&mut pairs, "Last Light workflows", &dir);
        if !dir.join(format!("workflows/flow-{}.yaml", workflows - 1)).is_file() {
            generator::generate_lastlight(&dir, workflows);
        }
        let name = format!("stagelint check DIR, {workflows} Last Light workflows");
        group.bench_function(name, |b| b.iter(|| run(binary, &[std::ffi::OsStr::new("check"), dir.as_os_str()])));
        group.bench_function(format!("floor: list and read the files of {workflows} Last Light workflows"), |b| {
            b.iter(|| read_everything(&dir))
        });
    }
    group.finish();
    for (family, dirs) in &pairs {
        assert_scales(binary, family, &dirs[0], &dirs[1]);
    }
}

fn push_pair<'a>(pairs: &mut Vec<(&'a str, Vec<PathBuf>)>, family: &'a str, dir: &std::path::Path) {
    match pairs.iter_mut().find(|(f, _)| *f == family) {
        Some((_, dirs)) => dirs.push(dir.to_path_buf()),
        None => pairs.push((family, vec![dir.to_path_buf()])),
    }
}

/// Fails the benchmark when ten times the files cost more than 25 times the time (best of three
/// runs each): linear growth gives about 10, a return to comparing every file with every
/// other gives about 100. A generous bound, so a loaded machine does not trip it.
fn assert_scales(binary: &str, family: &str, small: &std::path::Path, large: &std::path::Path) {
    let best = |dir: &std::path::Path| {
        (0..3)
            .map(|_| {
                let start = std::time::Instant::now();
                run(binary, &[std::ffi::OsStr::new("check"), dir.as_os_str()]);
                start.elapsed()
            })
            .min()
            .unwrap_or_default()
    };
    let (small_time, large_time) = (best(small), best(large));
    let ratio = large_time.as_secs_f64() / small_time.as_secs_f64().max(1e-6);
    eprintln!("{family}: {small_time:?} -> {large_time:?} for ten times the files ({ratio:.1} x)");
    assert!(ratio < 25.0, "{family}: ten times the files took {ratio:.1} times as long (quadratic growth?)");
}

/// What any tool that reads these files pays before it parses a byte: list the tree and read
/// every file, on all cores, in this process (no process start). `stagelint check DIR` is
/// compared with it in the README, to tell the machine's file-system cost from ours.
fn read_everything(dir: &std::path::Path) -> usize {
    let files = std::sync::Mutex::new(Vec::new());
    ignore::WalkBuilder::new(dir).standard_filters(false).build_parallel().run(|| {
        let files = &files;
        Box::new(move |entry| {
            if let Ok(entry) = entry
                && entry.file_type().is_some_and(|t| t.is_file())
            {
                files.lock().unwrap().push(entry.into_path());
            }
            ignore::WalkState::Continue
        })
    });
    let files = files.into_inner().unwrap();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(files.len().div_ceil(threads).max(1))
            .map(|part| {
                scope.spawn(move || part.iter().map(|f| std::fs::read(f).map_or(0, |b| b.len())).sum::<usize>())
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    })
}

/// Runs the binary and asserts a clean result.
fn run(binary: &str, args: &[&std::ffi::OsStr]) {
    let out = std::process::Command::new(binary).args(args).output().expect("run stagelint");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

criterion_group!(check, benches, lastlight, atomic, atomic_current, keystroke_scope, monorepo);
criterion_main!(check);
