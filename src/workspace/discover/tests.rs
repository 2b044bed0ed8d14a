//! Discovery's own tests: how often it compares and walks at scale, and atomic workflows' context.

mod scale_tests {
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    use crate::workspace::discover::bounds::Bounds;
    use crate::workspace::discover::paths::{display_path, normalize_components};
    use crate::workspace::discover::pending::COMPARISONS;
    use crate::workspace::discover::walk::{WALKED, WALKERS, walk_files};
    use crate::workspace::discover::{ConfigCache, ConfigStore, discover, normalize};
    use crate::workspace::{FileKind, Workspace};

    #[test]
    fn directories_no_config_governs_share_one_default_config() {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["a", "b", "c"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        std::fs::write(dir.path().join("c").join("stagelint.toml"), "").unwrap();
        let mut configs = ConfigCache::new(None);
        let a = configs.for_dir(&dir.path().join("a")).unwrap();
        let b = configs.for_dir(&dir.path().join("b")).unwrap();
        let c = configs.for_dir(&dir.path().join("c")).unwrap();
        assert!(a.path.is_none() && Arc::ptr_eq(&a, &b), "one shared default");
        assert!(c.path.is_some() && !Arc::ptr_eq(&a, &c), "a config file is its own");
    }

    /// Bounds are decided once per directory: growing them must undo an earlier "outside", and
    /// a file added as a bound of its own is inside though its directory is not.
    #[test]
    fn bounds_answer_again_after_they_grow_and_hold_single_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for name in ["ws/a.md", "other/b.md", "lib/c.md", "lib/d.md"] {
            std::fs::create_dir_all(root.join(name).parent().unwrap()).unwrap();
            std::fs::write(root.join(name), "x").unwrap();
        }
        let mut bounds = Bounds::new(&[root.join("ws")]);
        assert!(bounds.holds(&root.join("ws/a.md"), true));
        assert!(!bounds.holds(&root.join("other/b.md"), true));
        assert!(!bounds.holds_dir(&root.join("other")));
        bounds.extend([root.join("other"), root.join("lib/c.md")]);
        assert!(bounds.holds(&root.join("other/b.md"), true));
        assert!(bounds.holds_dir(&root.join("other")));
        assert!(bounds.holds(&root.join("lib/c.md"), true));
        assert!(!bounds.holds(&root.join("lib/d.md"), true));
    }

    /// The shortcuts for paths spelled normally already give what the general case gives.
    #[test]
    fn normal_paths_are_kept_as_the_general_case_would_spell_them() {
        let slow_display = |path: &Path, cwd: &Path| {
            let shown = path.strip_prefix(cwd).unwrap_or(path);
            let cleaned: PathBuf = shown.components().filter(|c| *c != std::path::Component::CurDir).collect();
            cleaned.to_string_lossy().into_owned()
        };
        let paths = [
            "/",
            "/a",
            "/a/b.md",
            "/a/./b",
            "/a/../b",
            "/a//b",
            "/a/b/",
            "/a/b/.",
            "/a/b/..",
            "/a/.b/..c",
            "a/b",
            "./a/b",
            "../a",
            "a/../b",
            ".",
            "",
            "/w/x/./y",
            "/w/x",
            "/w/x/",
            "/w",
            "/w/..x",
        ];
        for text in paths {
            let path = Path::new(text);
            assert_eq!(normalize(path), normalize_components(path), "normalize {text:?}");
            for cwd in ["/w", "/w/x", "/", "/other"] {
                let cwd = Path::new(cwd);
                assert_eq!(display_path(path, cwd), slow_display(path, cwd), "display {text:?} from {cwd:?}");
            }
        }
    }

    /// `machines` state machines of five stages each under a fresh directory.
    fn machines(machines: usize) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for m in 0..machines {
            let sm = dir.path().join(format!("sm-{m:04}"));
            std::fs::create_dir(&sm).unwrap();
            std::fs::write(sm.join("sm.yaml"), "entry: stage-0\n").unwrap();
            for s in 0..5 {
                let stage = format!("---\nid: stage-{s}\ncompletionTool: submit\n---\nStage {s}.\n");
                std::fs::write(sm.join(format!("stage-{s}.md")), stage).unwrap();
            }
        }
        dir
    }

    /// Discovers `paths`, giving the workspace, the path comparisons and the files walked.
    fn counted(paths: &[PathBuf]) -> (Workspace, usize, usize) {
        COMPARISONS.with(|c| c.set(0));
        WALKED.with(|w| w.set(0));
        let workspace = discover(paths, &mut ConfigCache::new(None)).unwrap();
        (workspace, COMPARISONS.with(|c| c.get()), WALKED.with(|w| w.get()))
    }

    #[test]
    fn discovery_compares_each_file_a_bounded_number_of_times() {
        // A search of the files seen so far for each new file (issue 18) made 600 files cost
        // about 180,000 comparisons; a lookup costs one or two, however many files there are.
        for count in [20, 100] {
            let dir = machines(count);
            let (workspace, comparisons, _) = counted(&[dir.path().to_path_buf()]);
            assert_eq!(workspace.files().len(), count * 6);
            assert!(comparisons <= 2 * workspace.files().len(), "{comparisons} comparisons for {count} machines");
        }
    }

    #[test]
    fn named_files_read_only_their_machines() {
        let dir = machines(200);
        let named: Vec<PathBuf> = (0..10).map(|m| dir.path().join(format!("sm-{:04}/stage-2.md", m * 20))).collect();
        let (workspace, comparisons, walked) = counted(&named);
        // The ten files and the other five files of each of their machines, nothing else.
        assert_eq!(workspace.files().len(), 60);
        assert_eq!(workspace.reported_files().count(), 10);
        assert_eq!(walked, 60, "only the named files' machines are walked");
        assert!(comparisons <= 120, "{comparisons} comparisons");
    }

    #[test]
    fn a_breakdown_config_named_alone_is_read_with_its_agent() {
        // `.agent/climpt/config/<agent>-steps-app.yml` lies outside `.agent/<agent>/`: named
        // alone (a pre-commit run of that one file), it is still checked, as its agent's.
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join(".agent/fixer");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::write(agent.join("steps_registry.json"), r#"{"agentId": "fixer", "steps": {}}"#).unwrap();
        let config = dir.path().join(".agent/climpt/config/fixer-steps-app.yml");
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        std::fs::write(&config, "working_dir: .agent/fixer\n").unwrap();
        let mut configs = ConfigCache::new(None);
        let workspace = discover(std::slice::from_ref(&config), &mut configs).unwrap();
        let named = workspace.file_at(&normalize(&config)).expect("the config is read");
        assert_eq!((&named.kind, named.reported), (&FileKind::BreakdownConfig, true));
        assert!(workspace.file_at(&normalize(&agent.join("steps_registry.json"))).is_some_and(|f| !f.reported));
    }

    #[test]
    fn a_batch_of_directories_is_listed_by_one_walker() {
        // An editor's index names machine directories in batches; a walker per directory read
        // the git config and probed every ancestor for ignore files each time (issue 18).
        let dir = machines(40);
        let dirs: Vec<PathBuf> = (0..40).map(|m| dir.path().join(format!("sm-{m:04}"))).collect();
        WALKERS.with(|w| w.set(0));
        let (workspace, _, walked) = counted(&dirs);
        assert_eq!(WALKERS.with(|w| w.get()), 1);
        assert_eq!((walked, workspace.reported_files().count()), (240, 240));
        // Each directory's files are its own: the first stage of each machine is where it was.
        for m in [0, 17, 39] {
            let stage = dir.path().join(format!("sm-{m:04}/stage-0.md"));
            assert!(workspace.file_at(&normalize(&stage)).is_some(), "{}", stage.display());
        }
    }

    #[test]
    fn agents_under_a_walked_directory_are_listed_not_walked_again() {
        // Each agent's files come from the walk of the repository (issue 18: a second walk per
        // agent made 2,000 agents cost 23 times 200), and are placed as the agent's own.
        let dir = tempfile::tempdir().unwrap();
        for a in 0..30 {
            let agent = dir.path().join(format!("a-{a:02}/.agent/bench"));
            std::fs::create_dir_all(agent.join("schemas")).unwrap();
            std::fs::create_dir_all(agent.join("prompts/steps/initial/bench")).unwrap();
            std::fs::write(agent.join("steps_registry.json"), r#"{"agentId": "bench", "steps": {}}"#).unwrap();
            std::fs::write(agent.join("agent.json"), r#"{"name": "bench"}"#).unwrap();
            std::fs::write(agent.join("schemas/bench.schema.json"), r#"{"type": "object"}"#).unwrap();
            std::fs::write(agent.join("prompts/steps/initial/bench/f_default.md"), "Work.\n").unwrap();
        }
        let cwd = std::env::current_dir().unwrap();
        let relative = pathdiff(dir.path(), &cwd);
        for root in [dir.path().to_path_buf(), relative] {
            let (workspace, _, walked) = counted(std::slice::from_ref(&root));
            assert_eq!(walked, 30 * 4, "the agents were walked again from {}", root.display());
            let kinds = |kind: FileKind| workspace.files().iter().filter(|f| f.kind == kind).count();
            assert_eq!((kinds(FileKind::JsonSchema), kinds(FileKind::C3lPrompt)), (30, 30), "from {}", root.display());
        }
    }

    /// `path` relative to `base` through `..`s, so a walk's paths are spelled relative.
    fn pathdiff(path: &Path, base: &Path) -> PathBuf {
        let common = path.ancestors().find(|a| base.starts_with(a)).unwrap();
        let ups = base.strip_prefix(common).unwrap().components().count();
        let mut out: PathBuf = std::iter::repeat_n("..", ups).collect();
        out.push(path.strip_prefix(common).unwrap());
        out
    }

    #[test]
    fn a_walk_lists_files_in_depth_first_name_order() {
        let dir = tempfile::tempdir().unwrap();
        for path in ["b/x.md", "b.md", "a/z/y.md", "a/a.md", "c.md"] {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let found: Vec<PathBuf> =
            walk_files(dir.path(), &std::sync::Arc::new(ConfigStore::plain(None, Default::default())))
                .into_iter()
                .map(|p| p.strip_prefix(dir.path()).unwrap().to_path_buf())
                .collect();
        let expected: Vec<PathBuf> =
            ["a/a.md", "a/z/y.md", "b/x.md", "b.md", "c.md"].iter().map(PathBuf::from).collect();
        assert_eq!(found, expected);
    }
}

mod atomic_tests {
    use std::path::Path;

    use crate::workspace::discover::{ConfigCache, discover, scope_of};
    use crate::workspace::{FileKind, Workspace};

    const WORKFLOW: &str = "import { defineWorkflow } from \"@bastani/atomic/workflows\";\nexport default defineWorkflow({ name: \"x\" }).run(async () => {}).compile();\n";

    /// A project with two workflows (one `.gitignore`d), a `package.json` and agent files.
    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        for (path, text) in [
            (".atomic/workflows/.gitignore", "wip/\n"),
            (".atomic/workflows/hello/claude/index.ts", WORKFLOW),
            (".atomic/workflows/wip/claude/index.ts", WORKFLOW),
            ("package.json", "{\"devDependencies\": {\"@bastani/atomic\": \"^0.5.24\"}}"),
            (".claude/agents/planner.md", "---\nname: planner\n---\n"),
            (".agents/skills/notes/SKILL.md", "---\nname: notes\ndescription: d\n---\n"),
            ("src/index.ts", "export const x = 1;\n"),
        ] {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn kinds(workspace: &Workspace, root: &Path) -> Vec<(String, FileKind, bool)> {
        let mut out: Vec<_> = workspace
            .files()
            .iter()
            .map(|f| (f.path.strip_prefix(root).unwrap().display().to_string(), f.kind.clone(), f.reported))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    #[test]
    fn a_walk_reads_the_context_and_the_workflows_the_gitignore_hides() {
        let dir = project();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let workspace = discover(std::slice::from_ref(&root), &mut ConfigCache::new(None)).unwrap();
        let context = |p: &str| (p.to_string(), FileKind::AtomicContext, false);
        let workflow = |p: &str| (p.to_string(), FileKind::AtomicWorkflow, true);
        let mut expected = vec![
            // A skill the walk meets is checked as one (and still names an agent).
            (".agents/skills/notes/SKILL.md".to_string(), FileKind::Skill, true),
            workflow(".atomic/workflows/hello/claude/index.ts"),
            workflow(".atomic/workflows/wip/claude/index.ts"),
            context(".atomic/workflows/.gitignore"),
            context(".claude/agents/planner.md"),
            context("package.json"),
        ];
        expected.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(kinds(&workspace, &root), expected);
    }

    #[test]
    fn a_base_holding_only_hidden_workflows_still_gets_their_context() {
        let dir = project();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::remove_dir_all(root.join(".atomic/workflows/hello")).unwrap();
        std::fs::write(root.join(".gitignore"), ".atomic/workflows/wip/\n").unwrap();
        let workspace = discover(std::slice::from_ref(&root), &mut ConfigCache::new(None)).unwrap();
        let found = kinds(&workspace, &root);
        assert!(found.iter().any(|f| f.0 == ".atomic/workflows/wip/claude/index.ts" && f.2), "{found:?}");
        assert!(found.iter().any(|f| f.0 == "package.json"), "{found:?}");
        assert!(found.iter().any(|f| f.0 == ".claude/agents/planner.md"), "{found:?}");
    }

    #[test]
    fn a_named_workflow_reads_its_context_and_no_other_workflow() {
        let dir = project();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let named = root.join(".atomic/workflows/hello");
        let workspace = discover(std::slice::from_ref(&named), &mut ConfigCache::new(None)).unwrap();
        let found = kinds(&workspace, &root);
        let reported: Vec<&str> = found.iter().filter(|f| f.2).map(|f| f.0.as_str()).collect();
        assert_eq!(reported, [".atomic/workflows/hello/claude/index.ts"], "{found:?}");
        assert!(found.iter().any(|f| f.0 == ".atomic/workflows/.gitignore"), "{found:?}");
        assert!(found.iter().any(|f| f.0 == "package.json"), "{found:?}");
        assert!(found.iter().any(|f| f.0 == ".claude/agents/planner.md"), "{found:?}");
        assert!(!found.iter().any(|f| f.0.contains("wip")), "the base is not read whole: {found:?}");
    }

    #[cfg(unix)]
    #[test]
    fn context_files_that_are_links_are_not_read() {
        let dir = project();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.md"), "---\nname: secret\n---\n").unwrap();
        std::fs::write(outside.path().join("package.json"), "{}").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), root.join(".claude/agents/evil.md")).unwrap();
        std::fs::remove_file(root.join("package.json")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("package.json"), root.join("package.json")).unwrap();
        let named = root.join(".atomic/workflows/hello");
        let workspace = discover(std::slice::from_ref(&named), &mut ConfigCache::new(None)).unwrap();
        let found = kinds(&workspace, &root);
        assert!(!found.iter().any(|f| f.0.contains("evil") || f.0 == "package.json"), "{found:?}");
        assert!(found.iter().any(|f| f.0 == ".claude/agents/planner.md"), "{found:?}");
    }

    #[test]
    fn an_atomic_workflow_is_rechecked_with_its_own_directory() {
        let base = Path::new("/p/.atomic/workflows");
        assert_eq!(scope_of(&base.join("hello/claude/index.ts")), base.join("hello"));
        assert_eq!(scope_of(&base.join("hello/helpers/prompts.ts")), base.join("hello"));
        assert_eq!(scope_of(&base.join(".gitignore")), base);
        let builtin = Path::new("/s/src/sdk/workflows/builtin");
        assert_eq!(scope_of(&builtin.join("ralph/copilot/index.ts")), builtin.join("ralph"));
    }
}
