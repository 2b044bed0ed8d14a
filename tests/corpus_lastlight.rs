//! stagelint over Last Light's real workflows, prompts and skills (copied under
//! `tests/corpus/lastlight/`, see its NOTICE.md), at releases on both sides of each change that
//! alters findings: v0.1.15 and the seed commit (bare `{{name}}` reads of phase outputs), the
//! seed and v0.10.1 (keys with `-`), v0.10.1 and v0.10.2 (`prNumber`), v0.22.0 and today's
//! (the PR render context, `prTitle`). Every expected finding below was checked by hand against
//! the files and the sources of that release.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::copy_dir;
use stagelint::config::Config;

/// (file, severity, code) → count, for `root` checked with the config text `toml`.
fn findings(root: &str, toml: &str) -> BTreeMap<(String, &'static str, &'static str), usize> {
    let root = PathBuf::from(root);
    let config_path = std::env::current_dir().unwrap().join(&root).join("stagelint.toml");
    let config = Config::parse(toml, &config_path).expect("config parses");
    let (workspace, diagnostics) = common::check_with(std::slice::from_ref(&root), config);
    let mut counts = BTreeMap::new();
    for d in &diagnostics {
        let file = workspace.file(d.file);
        let path = file.path.strip_prefix(std::env::current_dir().unwrap().join(&root)).unwrap();
        *counts.entry((path.display().to_string(), d.severity.as_str(), d.code)).or_insert(0) += 1;
    }
    counts
}

fn assert_findings(root: &str, toml: &str, expected: &[(&str, &str, &str, usize)]) {
    let expected: BTreeMap<(String, &str, &str), usize> =
        expected.iter().map(|(path, severity, code, n)| ((path.to_string(), *severity, *code), *n)).collect();
    let actual = findings(root, toml);
    let missing: Vec<_> = expected.iter().filter(|(k, n)| actual.get(*k) != Some(n)).collect();
    let extra: Vec<_> = actual.iter().filter(|(k, _)| !expected.contains_key(*k)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "expected but not found (or other count): {missing:#?}\nfound but not expected: {extra:#?}"
    );
}

/// Findings both eras share.
#[rustfmt::skip]
const SHARED: &[(&str, &str, &str, usize)] = &[
    // The examples resolve prompts against `workflows/` (the loader's directory), where
    // `security-review.md`, `linter.md`, `write-test.md` and `implement.md` do not exist; the
    // server never loads `workflows/examples/` (its loader does not recurse), so warnings.
    ("workflows/examples/parallel-review.yaml", "warning", "lastlight/PromptNotFound", 2),
    ("workflows/examples/tdd-loop.yaml", "warning", "lastlight/PromptNotFound", 2),
    // `pr.md` reads `{{review.approved}}`/`{{review.cycles}}`, the reviewer's output_var in
    // build.yaml; parallel-review.yaml uses the same prompt and has no `review`, so both render
    // empty there and `{{#if !review.approved}}` always adds the "unresolved issues" note.
    ("workflows/prompts/pr.md", "warning", "lastlight/UnknownVariable", 2),
    // explore-read.md tells the agent its output is what "the socratic loop will see as
    // `{{baseline}}`"; `baseline` is this phase's own output_var, which does not exist while
    // its prompt renders, so the agent reads "will see as ``" (a real, small defect).
    ("workflows/prompts/explore-read.md", "warning", "lastlight/PhaseOrder", 1),
    // build.yaml's guardrails phase configures `contains_READY`, which the runner never reads.
    ("workflows/build.yaml", "info", "lastlight/NeverEvaluated", 1),
    // `post_architect` and `post_reviewer` pause only if the server config enables them; the
    // corpus has no server config, so stagelint says so (info).
    ("workflows/build.yaml", "info", "lastlight/ApprovalGateUnknown", 2),
];

/// With no stagelint.toml: the engine is detected from `src/workflows/templates.ts` (the
/// seed-era renderer; today's file only re-exports the engine package).
#[test]
fn seed_era_corpus_findings_are_the_checked_ones() {
    let mut expected: Vec<(String, &str, &str, usize)> = SHARED
        .iter()
        .map(|(p, s, c, n)| (format!("workflows/{}", p.trim_start_matches("workflows/")), *s, *c, *n))
        .collect();
    expected.extend([
        // A real defect of the seed-era engine: its key regex is `\w+(\.\w+)*`, so
        // `{{models.pr-fix}}` is never replaced and the phase asks for a model literally named
        // `{{models.pr-fix}}` (`runner.ts` renders `model:`; the current engine allows `-`).
        ("workflows/pr-fix.yaml".to_string(), "warning", "lastlight/TemplateSyntax", 1),
        // The seed-era dispatcher (`src/index.ts`) strips `prNumber` and passes the PR title as
        // `title` (which becomes `issueTitle`), and nothing puts `prNumber` or `prTitle` back on
        // the context: `on_start`'s "PR #{{prNumber}}" and pr-fix.md's `PR #{{prNumber}}:
        // {{prTitle}}` and commit message render them empty.
        ("workflows/pr-fix.yaml".to_string(), "warning", "lastlight/UnknownVariable", 1),
        ("workflows/prompts/pr-fix.md".to_string(), "warning", "lastlight/UnknownVariable", 3),
    ]);
    let expected: Vec<(&str, &str, &str, usize)> =
        expected.iter().map(|(p, s, c, n)| (p.as_str(), *s, *c, *n)).collect();
    assert_findings("tests/corpus/lastlight/_at-dd02adf", "", &expected);
}

/// With no stagelint.toml: the current engine, detected, and the context today's server sets
/// (`botMention`, `baseBranch`, `fix`, `dependencies` on every run, the PR render context on
/// PR-scoped workflows), so today's prompts read no unknown variable.
#[test]
fn current_corpus_findings_are_the_checked_ones() {
    let expected: Vec<(String, &str, &str, usize)> =
        SHARED.iter().map(|(p, s, c, n)| (format!("server/{p}"), *s, *c, *n)).collect();
    let expected: Vec<(&str, &str, &str, usize)> =
        expected.iter().map(|(p, s, c, n)| (p.as_str(), *s, *c, *n)).collect();
    assert_findings("tests/corpus/lastlight/apps", "", &expected);
}

/// A configured engine wins over the detected one.
#[test]
fn a_configured_engine_overrides_detection() {
    let counts = findings("tests/corpus/lastlight/_at-dd02adf", "[lastlight]\nengine = \"head\"\n");
    assert!(!counts.keys().any(|(_, _, code)| *code == "lastlight/TemplateSyntax"), "{counts:#?}");
    let unknown = counts.get(&("workflows/prompts/pr-fix.md".to_string(), "warning", "lastlight/UnknownVariable"));
    assert_eq!(unknown, None, "{counts:#?}");
}

/// Findings every release from 0.2 to today shares on Last Light's own workflows.
#[rustfmt::skip]
const EXAMPLES: &[(&str, &str, &str, usize)] = &[
    // The examples name prompts the `workflows` directory does not have (never loaded: warnings).
    ("examples/parallel-review.yaml", "warning", "lastlight/PromptNotFound", 2),
    ("examples/tdd-loop.yaml", "warning", "lastlight/PromptNotFound", 2),
    // `pr.md` reads `review.approved`/`review.cycles`, which parallel-review.yaml never writes.
    ("prompts/pr.md", "warning", "lastlight/UnknownVariable", 2),
    ("build.yaml", "info", "lastlight/NeverEvaluated", 1),
    ("build.yaml", "info", "lastlight/ApprovalGateUnknown", 2),
];

/// `root`'s findings, its `workflows/` under `prefix`, are `EXAMPLES` and `extra`.
fn assert_release(root: &str, toml: &str, prefix: &str, extra: &[(&str, &str, &str, usize)]) {
    let mut expected: Vec<(String, &str, &str, usize)> =
        EXAMPLES.iter().chain(extra).map(|(p, s, c, n)| (format!("{prefix}{p}"), *s, *c, *n)).collect();
    expected.sort();
    let expected: Vec<(&str, &str, &str, usize)> =
        expected.iter().map(|(p, s, c, n)| (p.as_str(), *s, *c, *n)).collect();
    assert_findings(root, toml, &expected);
}

/// v0.1.15 (2026-04-13; `package.json` 0.1.15 and a schema without `skills`: release 0.1):
/// before e283f09d (2026-05-23) a one-segment `{{name}}` was read from the context alone, so
/// every bare read of a phase output rendered empty, as upstream's own fix says of
/// `{{publishResult}}`; and keys could not hold `-` yet.
#[test]
fn release_0_1_findings_are_the_checked_ones() {
    assert_release(
        "tests/corpus/lastlight/_at-v0.1.15",
        "",
        "workflows/",
        &[
            // explore.yaml's `on_success: "{{publishResult}}"` (the message e283f09d fixed), and
            // `{{baseline}}` in three explore prompts: the socratic loop's baseline never
            // reached them (in explore-read.md it is also its own phase's output).
            ("explore.yaml", "warning", "lastlight/UnknownVariable", 1),
            ("prompts/explore-ask.md", "warning", "lastlight/UnknownVariable", 1),
            ("prompts/explore-read.md", "warning", "lastlight/UnknownVariable", 1),
            ("prompts/explore-synthesize.md", "warning", "lastlight/UnknownVariable", 1),
            // `{{models.pr-fix}}` is never replaced before 0.2 (5cecbdf0 fixed it on 2026-06-15).
            ("pr-fix.yaml", "warning", "lastlight/TemplateSyntax", 1),
            // `prNumber` (0.10.2) and `prTitle` (0.23) are not set: "PR #" and an empty title.
            ("pr-fix.yaml", "warning", "lastlight/UnknownVariable", 1),
            ("prompts/pr-fix.md", "warning", "lastlight/UnknownVariable", 3),
        ],
    );
}

/// v0.10.1 (2026-07-09; `package.json` 0.10.1: release 0.7.7): keys with `-` are read, and
/// the server does not put `prNumber` on the context yet (6606b716, the next tag) nor `prTitle`
/// (0.23): pr-fix's "On it — fixing PR #" and pr-fix.md's `PR #: ` render them empty.
#[test]
fn release_0_7_7_findings_are_the_checked_ones() {
    let pr_fix = [
        ("pr-fix.yaml", "warning", "lastlight/UnknownVariable", 1),
        ("prompts/pr-fix.md", "warning", "lastlight/UnknownVariable", 3),
        // explore-read.md's `{{baseline}}` is the phase's own output.
        ("prompts/explore-read.md", "warning", "lastlight/PhaseOrder", 1),
    ];
    assert_release("tests/corpus/lastlight/_at-v0.10.1", "", "workflows/", &pr_fix);
    // v0.10.2's workflows are these files, byte for byte: `prNumber` is set there, `prTitle` not.
    let later = [
        ("prompts/pr-fix.md", "warning", "lastlight/UnknownVariable", 1),
        ("prompts/explore-read.md", "warning", "lastlight/PhaseOrder", 1),
    ];
    assert_release("tests/corpus/lastlight/_at-v0.10.1", "[lastlight]\nrelease = \"0.10.2\"\n", "workflows/", &later);
}

/// The same tree without its `package.json`: the renderer reads keys with `-` beside a
/// top-level `workflows/`, which is 0.2 to 0.15 (until v0.16.0). `prNumber` renders empty only
/// before 0.10.2, within that range: an info; `prTitle` is empty in all of it: a warning.
#[test]
fn a_range_makes_what_only_some_of_its_releases_read_an_info() {
    let dir = tempfile::tempdir().unwrap();
    let from = Path::new("tests/corpus/lastlight/_at-v0.10.1");
    for sub in ["workflows", "skills", "src"] {
        copy_dir(&from.join(sub), &dir.path().join(sub));
    }
    let root = dir.path().to_str().unwrap();
    let counts = findings(root, "");
    let unknown = |file: &str, severity: &'static str| {
        counts.get(&(file.to_string(), severity, "lastlight/UnknownVariable")).copied()
    };
    assert_eq!(unknown("workflows/prompts/pr-fix.md", "warning"), Some(1), "{counts:#?}");
    assert_eq!(unknown("workflows/prompts/pr-fix.md", "info"), Some(2), "{counts:#?}");
    assert_eq!(unknown("workflows/pr-fix.yaml", "info"), Some(1), "{counts:#?}");
    assert_eq!(unknown("workflows/pr-fix.yaml", "warning"), None, "{counts:#?}");
}

/// v0.22.0 (2026-07-31; `apps/server/package.json` lastlight-core 0.22.0: release 0.18.5, the
/// engine in `packages/workflow-engine/`): `prNumber` is set, but the PR render context, and
/// with it `prTitle`, comes with 0.23 (0f1a872c); today's tree reads it silently (above).
#[test]
fn release_0_18_5_findings_are_the_checked_ones() {
    let pr_fix = [
        ("prompts/pr-fix.md", "warning", "lastlight/UnknownVariable", 1),
        ("prompts/explore-read.md", "warning", "lastlight/PhaseOrder", 1),
    ];
    assert_release("tests/corpus/lastlight/_at-v0.22.0", "", "apps/server/workflows/", &pr_fix);
}

/// Checkouts between two tags, whose `package.json` still has the older tag's version while
/// the code has the next release's changes; the engine's sources say which (the outside audit's
/// commits). a69ad81f (`lastlight` 0.4.0, release 0.2): its schema has the `bash` and `script`
/// phases of 0.5.1 (f744a963), and the corpus keeps no dispatcher to show 0.5.1's other change,
/// so the range 0.2 to 0.5.1: `examples/bash-smoke.yaml`'s phases are infos, not errors.
#[test]
fn a_checkout_with_part_of_the_next_release_is_a_range() {
    let counts = findings("tests/corpus/lastlight/_at-a69ad81f", "");
    let at = |file: &str, severity: &'static str, code: &'static str| {
        counts.get(&(format!("workflows/{file}"), severity, code)).copied()
    };
    assert_eq!(at("examples/bash-smoke.yaml", "info", "lastlight/InvalidEnum"), Some(4), "{counts:#?}");
    assert_eq!(at("examples/bash-smoke.yaml", "info", "lastlight/UnknownKey"), Some(7), "{counts:#?}");
    // demo.md's `{{baseBranch}}` (set for the PR-head workflows from caf81450, 0.5.1) is silent.
    assert!(counts.keys().all(|(_, severity, _)| *severity == "info"), "{counts:#?}");
}

/// 6606b716 (`lastlight` 0.10.1, release 0.7.7) is the commit that put `prNumber` on the
/// context: `simple.ts` shows it, so 0.10.2, and only `prTitle` (0.23) renders empty.
#[test]
fn a_checkout_with_the_next_release_whole_is_that_release() {
    assert_findings(
        "tests/corpus/lastlight/_at-6606b716",
        "",
        &[("workflows/prompts/pr-fix.md", "warning", "lastlight/UnknownVariable", 1)],
    );
}

/// 7e59c541 (`lastlight-core` 0.22.0, release 0.18.5), 17 commits after v0.22.0: the engine's
/// schema has 0.23's `skip_if` (33449be9) but not its `pr_scoped` (76a23d8e, three commits
/// later), so 0.18.5 to 0.23: `skip_if` and the PR render context (0f1a872c, which this commit
/// has) are infos naming 0.18.5, where they would be defects.
#[test]
fn a_checkout_between_0_22_and_0_23_reads_the_pr_render_context_as_info() {
    let prefix = "apps/server/workflows/";
    let expected = [
        ("pr-fix.yaml", "info", "lastlight/UnknownKey", 1),
        ("prompts/pr-fix.md", "info", "lastlight/UnknownVariable", 2),
        ("prompts/diagnose-ci.md", "info", "lastlight/UnknownVariable", 1),
        ("prompts/dependabot-pr-merge.md", "info", "lastlight/UnknownVariable", 12),
    ];
    let expected: Vec<(String, &str, &str, usize)> =
        expected.iter().map(|(p, s, c, n)| (format!("{prefix}{p}"), *s, *c, *n)).collect();
    let expected: Vec<(&str, &str, &str, usize)> =
        expected.iter().map(|(p, s, c, n)| (p.as_str(), *s, *c, *n)).collect();
    assert_findings("tests/corpus/lastlight/_at-7e59c541", "", &expected);
}

/// The Claude Code plugin skill that routes users (`plugins/lastlight/skills/`): its
/// `description` holds `: ` unquoted (`lastlight-evals-loop: invoke`), so the frontmatter is no
/// YAML and Claude Code drops its fields; the Last Light server never reads it.
#[test]
fn the_plugin_skill_with_a_broken_frontmatter_is_reported_as_claude_code_reads_it() {
    let counts = findings("tests/corpus/lastlight/plugins", "");
    let key = ("lastlight/skills/lastlight-guide/SKILL.md".to_string(), "warning", "stagelint/SkillFrontmatter");
    assert_eq!(counts.get(&key), Some(&1), "{counts:#?}");
    assert_eq!(counts.len(), 1, "{counts:#?}");
}

#[test]
fn every_corpus_workflow_and_skill_is_read() {
    let root = Path::new("tests/corpus/lastlight");
    let (workspace, _) = common::check_with(&[root.to_path_buf()], Config::defaults(root));
    let count = |kind: stagelint::workspace::FileKind| workspace.files().iter().filter(|f| f.kind == kind).count();
    assert_eq!(count(stagelint::workspace::FileKind::Workflow), 105);
    assert!(count(stagelint::workspace::FileKind::WorkflowPrompt) >= 30);
    assert!(count(stagelint::workspace::FileKind::Skill) >= 20);
}

/// A 200-line prompt with code examples in several languages (Helm, Go, C++, Jinja, Vue,
/// Angular, Handlebars, Rust, shell, CI, JavaScript, Python): the engine leaves their braces
/// alone, which is what a code example needs, so it is clean with every rule on.
#[test]
fn a_prompt_full_of_code_examples_is_clean() {
    assert_findings("tests/fixtures/lastlight/TemplateSyntax/ok-code-examples", "", &[]);
}
