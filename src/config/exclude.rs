//! `[files] exclude` and `extend-exclude` (and the command line's `--exclude`), read as ruff
//! reads its own: a pattern without `/` matches a file or directory of that name anywhere
//! (`node_modules`, `*.draft.md`); a pattern with `/` is anchored at the directory of the config
//! that holds it (`legacy/old.md`, `tests/**/fixtures`), or at the current directory on the
//! command line. A directory a pattern matches is not walked into.

use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// What `exclude` is when a config does not set it: ruff's defaults, less what stagelint's own
/// files may be named (`build`, `dist`: an atomic workflow can be; `.vscode`, `.local`), and
/// with `.git` (which a walk skips anyway).
pub const DEFAULT_EXCLUDES: &[&str] = &[
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    "__pypackages__",
    "_build",
    "buck-out",
    "node_modules",
    "site-packages",
    "venv",
];

/// A compiled list of exclude patterns.
#[derive(Debug, Clone)]
pub struct Excludes {
    /// Patterns without `/`: matched against a path's last component.
    names: GlobSet,
    /// Patterns with `/`, joined to their directory: matched against the whole path.
    anchored: GlobSet,
    /// The patterns as written, for messages.
    patterns: Vec<String>,
}

impl Excludes {
    /// No pattern.
    pub fn none() -> Arc<Excludes> {
        static NONE: OnceLock<Arc<Excludes>> = OnceLock::new();
        NONE.get_or_init(|| Arc::new(Excludes::compile(&[], Path::new("/")).0)).clone()
    }

    /// [`DEFAULT_EXCLUDES`], compiled once per process: every directory no config governs
    /// shares it.
    pub fn defaults() -> Arc<Excludes> {
        static DEFAULTS: OnceLock<Arc<Excludes>> = OnceLock::new();
        DEFAULTS
            .get_or_init(|| {
                let patterns: Vec<(&str, Range<usize>)> = DEFAULT_EXCLUDES.iter().map(|p| (*p, 0..0)).collect();
                Arc::new(Excludes::compile(&patterns, Path::new("/")).0)
            })
            .clone()
    }

    /// Compiles `patterns` (each with where it was written), anchoring those with `/` at
    /// `root` (absolute). A pattern that does not parse is left out and returned with its
    /// span and why.
    pub fn compile(patterns: &[(&str, Range<usize>)], root: &Path) -> (Excludes, Vec<(Range<usize>, String)>) {
        let (mut names, mut anchored, mut problems) = (GlobSetBuilder::new(), GlobSetBuilder::new(), Vec::new());
        let mut kept = Vec::new();
        for (pattern, span) in patterns {
            // `build/`, as a `.gitignore` writes a directory, is `build`; `./build` is anchored.
            let trimmed = pattern.strip_suffix('/').unwrap_or(pattern);
            let anchored_here = trimmed.contains('/');
            let trimmed = trimmed.strip_prefix("./").unwrap_or(trimmed);
            let (builder, glob) = if anchored_here {
                let root = globset::escape(&root.to_string_lossy());
                let joined = if trimmed.starts_with('/') { trimmed.to_string() } else { format!("{root}/{trimmed}") };
                (&mut anchored, joined)
            } else {
                (&mut names, trimmed.to_string())
            };
            if trimmed.is_empty() {
                problems.push((span.clone(), format!("`{pattern}` names nothing to exclude")));
                continue;
            }
            match GlobBuilder::new(&glob).literal_separator(true).build() {
                Ok(glob) => {
                    builder.add(glob);
                    kept.push(pattern.to_string());
                }
                Err(e) => problems.push((span.clone(), format!("bad glob: {e}"))),
            }
        }
        let names = names.build().unwrap_or_else(|_| GlobSet::empty());
        let anchored = anchored.build().unwrap_or_else(|_| GlobSet::empty());
        (Excludes { names, anchored, patterns: kept }, problems)
    }

    /// Whether `path` (absolute and normalized) is a file or directory these patterns exclude.
    pub fn matches(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| self.names.is_match(Path::new(name))) || self.anchored.is_match(path)
    }

    /// The patterns as written.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compiled(patterns: &[&str]) -> Excludes {
        let patterns: Vec<(&str, Range<usize>)> = patterns.iter().map(|p| (*p, 0..0)).collect();
        let (excludes, problems) = Excludes::compile(&patterns, Path::new("/repo/sub"));
        assert!(problems.is_empty(), "{problems:?}");
        excludes
    }

    #[test]
    fn a_name_matches_anywhere_and_a_path_from_the_config() {
        let excludes = compiled(&["vendor", "*.draft.md", "legacy/old.md", "docs/*.md", "build/", "./top"]);
        for path in [
            "/repo/sub/vendor",
            "/elsewhere/deep/vendor",
            "/repo/sub/a/plan.draft.md",
            "/repo/sub/legacy/old.md",
            "/repo/sub/docs/x.md",
            "/repo/sub/x/build",
            "/repo/sub/top",
        ] {
            assert!(excludes.matches(Path::new(path)), "{path}");
        }
        for path in [
            "/repo/sub/vendored",
            "/repo/sub/plan.md",
            "/repo/sub/x/legacy/old.md",
            "/repo/legacy/old.md",
            "/repo/sub/docs/deep/x.md",
            "/repo/sub/x/top",
        ] {
            assert!(!excludes.matches(Path::new(path)), "{path}");
        }
    }

    #[test]
    fn a_root_with_glob_characters_is_taken_literally() {
        let patterns = [("a/*.md", 0..0)];
        let (excludes, _) = Excludes::compile(&patterns, Path::new("/w/[x]"));
        assert!(excludes.matches(Path::new("/w/[x]/a/b.md")));
        assert!(!excludes.matches(Path::new("/w/x/a/b.md")));
    }

    #[test]
    fn the_defaults_skip_tool_directories_and_keep_agent_directories() {
        let defaults = Excludes::defaults();
        assert!(defaults.matches(Path::new("/p/node_modules")));
        assert!(defaults.matches(Path::new("/p/.venv")));
        for ours in ["/p/.agent", "/p/.atomic", "/p/.claude", "/p/.github", "/p/build", "/p/dist", "/p/workflows"] {
            assert!(!defaults.matches(Path::new(ours)), "{ours}");
        }
    }

    #[test]
    fn a_bad_or_empty_pattern_is_a_problem_and_left_out() {
        let patterns = [("a/[", 3..8), ("/", 10..13), ("ok", 15..19)];
        let (excludes, problems) = Excludes::compile(&patterns, Path::new("/r"));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(problems[0].0, 3..8);
        assert!(problems[0].1.starts_with("bad glob:"), "{problems:?}");
        assert_eq!(problems[1].1, "`/` names nothing to exclude");
        assert_eq!(excludes.patterns(), ["ok"]);
    }
}
