//! The pre-commit hooks' `files` patterns (`.pre-commit-hooks.yaml`) against the classification
//! `stagelint check` itself makes (`workspace::discover::discover`): over the examples, the
//! fixtures, the upstream corpus and a tree of every file kind, each file discovery lints is
//! matched (or the hook would never check it on commit), and nothing is matched that stagelint
//! never reads. pre-commit matches paths relative to the repository with Python's `re.search`;
//! the pattern keeps to the syntax Python and the `regex` crate read alike.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use stagelint::workspace::FileKind;
use stagelint::workspace::discover::{ConfigCache, discover};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// One hook of the manifest: its `files` and `exclude` patterns.
struct Hook {
    id: String,
    files: regex::Regex,
    exclude: Option<regex::Regex>,
}

impl Hook {
    fn runs_on(&self, path: &str) -> bool {
        self.files.is_match(path) && !self.exclude.as_ref().is_some_and(|e| e.is_match(path))
    }

    /// Whether the hook is for files of `kind` (a `FileKind` name): the lint hooks for every
    /// kind, `stagelint-dry-run` for what a replay reads (no atomic workflow has a dry-run, and a
    /// config replays nothing).
    fn wants(&self, kind: &str) -> bool {
        self.id != "stagelint-dry-run" || !matches!(kind, "AtomicWorkflow" | "Config" | "Baseline")
    }
}

fn hooks() -> Vec<Hook> {
    let text = std::fs::read_to_string(repo().join(".pre-commit-hooks.yaml")).expect("the manifest");
    let parsed = stagelint::source::yaml::parse(&text);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let root = parsed.root.expect("a list of hooks");
    let pattern = |hook: &stagelint::source::Node, key: &str| {
        hook.get(key).and_then(|p| p.as_str()).map(|p| regex::Regex::new(p).unwrap_or_else(|e| panic!("{key}: {e}")))
    };
    root.as_seq()
        .expect("a list of hooks")
        .iter()
        .map(|hook| Hook {
            id: hook.get("id").and_then(|id| id.as_str()).expect("an id").to_string(),
            files: pattern(hook, "files").expect("a files pattern"),
            exclude: pattern(hook, "exclude"),
        })
        .collect()
}

/// The files discovery reads under `root` as one of stagelint's kinds (not the context an atomic
/// workflow reads, which is never checked itself), relative to `base` as pre-commit names them.
/// A tree whose config cannot be used (a fixture of `stagelint/InvalidConfig`) gives nothing.
fn linted(root: &Path, base: &Path) -> BTreeSet<(String, String)> {
    let mut configs = ConfigCache::new(None);
    let Ok(workspace) = discover(&[root.to_path_buf()], &mut configs) else { return BTreeSet::new() };
    workspace
        .reported_files()
        .filter(|file| !matches!(file.kind, FileKind::AtomicContext | FileKind::Unreadable { .. }))
        .filter_map(|file| {
            let relative = file.path.strip_prefix(base).ok()?;
            Some((relative.to_string_lossy().replace('\\', "/"), format!("{:?}", file.kind)))
        })
        .collect()
}

#[test]
fn every_file_discovery_lints_in_the_repository_is_matched() {
    let hooks = hooks();
    let ids: Vec<&str> = hooks.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids, ["stagelint", "stagelint-system", "stagelint-dry-run"]);
    let mut seen = BTreeSet::new();
    let mut missed = Vec::new();
    // Each fixture is a tree of its own (some have a config that cannot be used). More trees,
    // whole upstream checkouts say, with STAGELINT_PRECOMMIT_TREES=dir:dir.
    let mut trees: Vec<PathBuf> = vec![repo().join("examples"), repo().join("tests/corpus")];
    let extra: Vec<PathBuf> =
        std::env::split_paths(&std::env::var_os("STAGELINT_PRECOMMIT_TREES").unwrap_or_default()).collect();
    for family in read_dirs(&repo().join("tests/fixtures")) {
        for rule in read_dirs(&family) {
            trees.extend(read_dirs(&rule));
        }
    }
    let in_repo = trees.iter().map(|tree| (tree, repo()));
    for (tree, base) in in_repo.chain(extra.iter().map(|tree| (tree, tree.as_path()))) {
        for (path, kind) in linted(tree, base) {
            for hook in hooks.iter().filter(|hook| hook.wants(&kind)) {
                if !hook.runs_on(&path) {
                    missed.push(format!("{}: {path} ({kind})", hook.id));
                }
            }
            seen.insert(kind);
        }
    }
    assert!(missed.is_empty(), "{} files discovery lints are not matched:\n{}", missed.len(), missed.join("\n"));
    for kind in ["Stage", "StateMachine", "StepsRegistry", "AgentJson", "JsonSchema", "C3lPrompt", "BreakdownConfig"] {
        assert!(seen.contains(kind), "the trees hold a {kind}: {seen:?}");
    }
    for kind in ["Workflow", "WorkflowPrompt", "Skill", "Cassette", "AtomicWorkflow"] {
        assert!(seen.contains(kind), "the trees hold a {kind}: {seen:?}");
    }
}

const SDK_WORKFLOW: &str = "import { defineWorkflow } from \"@bastani/atomic/workflows\";\n\
export default defineWorkflow({ name: \"hello\", description: \"Say hello\" })\n  .run(async (ctx) => {})\n  .compile();\n";

const HEAD_WORKFLOW: &str = "import { workflow } from \"@bastani/workflows\";\n\
export default workflow({ name: \"publish\", description: \"Publish\" });\n";

const STAGE: &str = "---\nid: plan\nname: Plan\nallowedTools: [Read]\ncompletionTool: submit_plan\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: 5\nresolutionPolicy: retry-later\n---\nPlan {{ctx.task}}, then call submit_plan.\n";

const LASTLIGHT: &str = "name: build\nphases:\n  - name: plan\n    prompt: prompts/plan.md\n";

/// A repository of every layout the hooks are meant for, and of files they are not: each file,
/// and whether the hooks run on it. Atomic's layouts from 0.5 (`<name>/<agent>/index.ts`, a
/// builtin), 0.9 (a flat `<name>.ts`, `lib/` helpers, a package's `atomic.workflows`) and an
/// off-layout file that imports the SDK are all TypeScript, which the hooks pass whatever the
/// path: whether each is a workflow is discovery's to say.
const TREE: &[(&str, &str, bool)] = &[
    ("machines/review/sm.yaml", "entry: plan\n", true),
    ("machines/review/plan.md", STAGE, true),
    ("machines/review/plan.cassette.yaml", "cassette: 1\nstage: plan\nattempts: []\n", true),
    ("machines/review/NOTES.md", "# Notes\n", true),
    ("workflows/build.yaml", LASTLIGHT, true),
    ("workflows/prompts/plan.md", "Plan {{issueTitle}}.\n", true),
    ("skills/triage/SKILL.md", "---\nname: triage\ndescription: Triage issues\n---\nTriage.\n", true),
    (".atomic/workflows/hello/claude/index.ts", SDK_WORKFLOW, true),
    (".atomic/workflows/hello/helpers/format.ts", "export const x = 1;\n", true),
    (".atomic/workflows/publish.ts", HEAD_WORKFLOW, true),
    (".atomic/workflows/lib/publish.ts", "export function run() {}\n", true),
    (
        "packages/flows/package.json",
        "{\"name\": \"flows\", \"atomic\": {\"workflows\": [\"src/flows/*.ts\"]}}\n",
        false,
    ),
    ("packages/flows/src/flows/triage.ts", HEAD_WORKFLOW, true),
    ("tools/scripts/flow.ts", SDK_WORKFLOW, true),
    ("tools/scripts/flow.test.ts", SDK_WORKFLOW, false),
    ("tools/scripts/types.d.ts", "export declare const x: number;\n", false),
    ("stagelint.toml", "[rules]\n", true),
    ("stagelint-baseline.json", "{\"version\": 1, \"findings\": []}\n", true),
    // Not stagelint's: never passed.
    (".github/workflows/ci.yml", "name: ci\non: [push]\njobs: {}\n", false),
    ("package.json", "{\"name\": \"repo\"}\n", false),
    ("tsconfig.json", "{\"compilerOptions\": {}}\n", false),
    ("config/settings.yaml", "name: app\nport: 8080\n", false),
    ("data/records.json", "[1, 2, 3]\n", false),
    ("src/app.js", "export default 1;\n", false),
    ("src/view.tsx", "export default 1;\n", false),
    ("Cargo.toml", "[package]\nname = \"x\"\n", false),
];

/// Files discovery reads that a path pattern cannot see, by design: docs/pre-commit.md says how
/// to widen `files` for them. Each must still be one discovery lints (else this list is stale).
const BEYOND_THE_PATTERN: &[(&str, &str)] = &[
    // A Last Light workflow outside `workflows/`, by its shape.
    ("ops/nightly.yaml", "name: nightly\nphases:\n  - name: run\n    prompt: ../workflows/prompts/plan.md\n"),
];

#[test]
fn the_hooks_run_on_every_layout_and_on_nothing_else() {
    let hooks = hooks();
    let temp = tempfile::tempdir().expect("temp dir");
    let root = temp.path().canonicalize().expect("a real path");
    std::fs::create_dir(root.join(".git")).expect("a repository");
    for (path, text) in TREE.iter().map(|(p, t, _)| (p, t)).chain(BEYOND_THE_PATTERN.iter().map(|(p, t)| (p, t))) {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("dir");
        std::fs::write(file, text).expect("write");
    }
    let kinds: std::collections::BTreeMap<String, String> = linted(&root, &root).into_iter().collect();
    let linted: BTreeSet<String> = kinds.keys().cloned().collect();
    // The kind of a file discovery reads, else what its name says (a helper is TypeScript).
    let kind_of = |path: &str| match kinds.get(path) {
        Some(kind) => kind.clone(),
        None if path.ends_with(".ts") => "AtomicWorkflow".to_string(),
        None if path.ends_with(".toml") => "Config".to_string(),
        None if path.ends_with("stagelint-baseline.json") => "Baseline".to_string(),
        None => String::new(),
    };
    for (path, _, passed) in TREE {
        for hook in &hooks {
            let wanted = *passed && hook.wants(&kind_of(path));
            assert_eq!(hook.runs_on(path), wanted, "{}: {path}", hook.id);
        }
        // What the hooks leave out, discovery does not lint either.
        assert!(*passed || !linted.contains(*path), "{path} is linted but never passed");
    }
    for path in &linted {
        let beyond = BEYOND_THE_PATTERN.iter().any(|(p, _)| p == path);
        for hook in hooks.iter().filter(|hook| hook.wants(&kind_of(path))) {
            assert_eq!(hook.runs_on(path), !beyond, "{}: {path}", hook.id);
        }
    }
    for (path, _) in BEYOND_THE_PATTERN {
        assert!(linted.contains(*path), "{path} is no longer linted: drop it here and in docs/pre-commit.md");
    }
    for wanted in ["machines/review/plan.md", "workflows/build.yaml", ".atomic/workflows/hello/claude/index.ts"] {
        assert!(linted.contains(wanted), "{wanted} is linted: {linted:?}");
    }
}

/// The directories in `dir`, sorted.
fn read_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();
    dirs
}
