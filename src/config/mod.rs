//! `stagelint.toml`: discovery upward from a path, parsing with positions, resolved settings.

mod atomic;
mod defaults;
mod exclude;
mod read;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use globset::GlobSet;

use crate::diagnostic::Severity;
use crate::registry::releases::lastlight::{self as releases, Target};
use crate::source::{LineIndex, Span};
use crate::template::lastlight::Engine;
use crate::template::stage::Dialect;

pub use atomic::{AtomicSettings, SdkRange, SdkVersion, Upper};
pub use defaults::{DEFAULT_BACKOFFS, DEFAULT_EXTRA_VARIABLES, DEFAULT_RESOLUTION_POLICIES, DEFAULT_TOOLS};
pub use exclude::{DEFAULT_EXCLUDES, Excludes};

/// File names looked for in each ancestor directory, in order.
pub const CONFIG_NAMES: [&str; 2] = ["stagelint.toml", ".stagelint.toml"];

/// Every table of a config file with its keys and what each holds: exactly what
/// [`Config::parse`] accepts (a test parses each key, and refuses one that is not listed), for
/// the editor's completion. `[rules]` and `[per-file-ignores]` are keyed by codes and globs.
pub const TABLES: &[(&str, &[(&str, &str)])] = &[
    (
        "files",
        &[
            ("stages", "list of globs"),
            ("workflows", "list of globs"),
            ("exclude", "list of patterns"),
            ("extend-exclude", "list of patterns"),
            ("force-exclude", "true or false"),
        ],
    ),
    ("tools", &[("registered", "list of strings"), ("extra", "list of strings")]),
    (
        "sm",
        &[
            ("placeholder-dialect", "\"mustache\" or \"dollar\""),
            ("resolution-policies", "list of strings"),
            ("backoffs", "list of strings"),
        ],
    ),
    (
        "lastlight",
        &[
            ("release", "a Last Light version such as \"0.23\", \"seed\" or \"head\""),
            ("engine", "\"head\" or \"seed\" (the newest release or the seed's; `release` says more)"),
            ("variables", "list of strings"),
            ("extra-variables", "list of strings"),
            ("approval-gates", "list of strings"),
        ],
    ),
    ("steps", &[("validate-parity", "true or false"), ("climpt-version", "a climpt version such as \"1.13.5\"")]),
    ("dry-run", &[("cassettes", "list of directories")]),
    (
        "atomic",
        &[
            ("sdk-version", "a version such as \"0.5.24\""),
            ("agents", "list of strings"),
            ("reserved-names", "list of strings"),
        ],
    ),
    ("output", &[("docs-url", "a URL such as \"https://example.com/stagelint/\"")]),
    ("rules", &[]),
    ("per-file-ignores", &[]),
];

/// The keys a config file has outside any table, with what each holds.
pub const TOP_KEYS: &[(&str, &str)] = &[("baseline", "a path inside this file's directory")];

/// The values a config key takes from a closed set (`[rules]` entries take [`LEVELS`]).
pub const KEY_VALUES: &[(&str, &[&str])] =
    &[("placeholder-dialect", &["mustache", "dollar"]), ("engine", &["head", "seed"])];

/// The levels a `[rules]` entry sets.
pub const LEVELS: [&str; 6] = ["error", "warning", "info", "hint", "on", "off"];

/// The settings for the files under one config (or the defaults when there is none).
#[derive(Debug, Clone)]
pub struct Config {
    /// The file these settings came from; `None` for the built-in defaults.
    pub path: Option<PathBuf>,
    /// Directory relative to which globs match.
    pub root: PathBuf,
    pub stage_globs: GlobSet,
    /// `[files] workflows`: YAML files checked as Last Light workflows whatever their content.
    pub workflow_globs: GlobSet,
    /// `[files] exclude` ([`DEFAULT_EXCLUDES`] unless set): files and directories never read.
    pub exclude: Arc<Excludes>,
    /// `[files] extend-exclude`: excluded too.
    pub extend_exclude: Arc<Excludes>,
    /// `[files] force-exclude`: the excludes apply to paths named on the command line too.
    pub force_exclude: bool,
    /// `[lastlight]` settings.
    pub lastlight: Lastlight,
    /// The live tool set: bundled, discovered and MCP names. Ordered, so a did-you-mean among
    /// equally near names is the same on every run.
    pub tools: BTreeSet<String>,
    pub dialect: Dialect,
    pub resolution_policies: Vec<String>,
    pub backoffs: Vec<String>,
    /// Per code or per family (`sm`): a severity, or `None` for off.
    pub rules: BTreeMap<String, Level>,
    pub per_file_ignores: Vec<(GlobSet, Vec<String>)>,
    /// `[steps] validate-parity`: raise every `steps/` finding to the level climpt's
    /// `--validate` gives the same check.
    pub validate_parity: bool,
    /// `[steps] climpt-version`: the climpt release the agents run on, instead of the one
    /// detected per agent directory.
    pub climpt_version: Option<ClimptVersion>,
    /// `[dry-run] cassettes`: directories searched for `<stage-id>.cassette.yaml`, after the
    /// stage's own directory.
    pub cassette_dirs: Vec<PathBuf>,
    /// `[atomic]` settings.
    pub atomic: AtomicSettings,
    /// `baseline`: the baseline file of the findings this config governs (absolute), or the
    /// one `--baseline` names for every config.
    pub baseline: Option<PathBuf>,
    /// `[output] docs-url`: the base that findings link to their rule's page under
    /// (`<base>docs/rules/<family>/<Name>.md`); `None`: the published repository's.
    pub docs_url: Option<String>,
}

/// `[lastlight]`: the Last Light release the files are checked for, and what the project adds
/// to its context.
#[derive(Debug, Clone)]
pub struct Lastlight {
    /// The releases the repository may be at (one, unless only the engine's layout was found).
    pub release: Target,
    /// Where `release` came from: the config, the repository, or the default.
    pub release_source: ReleaseSource,
    /// Template variables the project passes in `request.extra` (and cron `context:`), on top
    /// of the engine's own.
    pub variables: Vec<String>,
    /// Approval gates enabled in the server config (`approval.<gate>: true`).
    pub approval_gates: Vec<String>,
}

impl Lastlight {
    /// The template dialect the release's engine reads: keys with `-` and the helpers
    /// `artifactUrl`/`approvalUrl` from 0.2 on. A range across 0.2 reads the newer one (detection
    /// never gives one: the layouts that give a range lie on one side of it).
    pub fn dialect(&self) -> Engine {
        if self.release.any_has(releases::V0_2) { Engine::Head } else { Engine::Seed }
    }
}

/// `[steps] climpt-version`: the version written and the release range that holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClimptVersion {
    pub version: crate::registry::releases::Version,
    pub release: crate::registry::releases::climpt::ReleaseId,
}

/// How the release a family checks for was chosen (every system has the same three ways).
pub use crate::registry::releases::ReleaseSource;

/// A `[rules]` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Off,
    /// Enabled with the severity the rule gives each finding (its default, or graded).
    On,
    Is(Severity),
}

/// A config that cannot be used, with every problem found in it; shown with positions and exit
/// code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub path: PathBuf,
    /// In the order of the text; never empty.
    pub problems: Vec<ConfigProblem>,
}

/// One problem of a config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    pub line: usize,
    pub column: usize,
    /// The bytes of the config text the problem is about (empty at 0 when it is the whole file).
    pub span: Span,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    /// One line per problem.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Relative to the current directory when under it, as finding paths are.
        let cwd = std::env::current_dir().unwrap_or_default();
        let path = self.path.strip_prefix(&cwd).unwrap_or(&self.path);
        for (i, problem) in self.problems.iter().enumerate() {
            let separator = if i == 0 { "" } else { "\n" };
            let (line, column, message) = (problem.line, problem.column, &problem.message);
            write!(f, "{separator}{}:{line}:{column}: invalid config: {message}", path.display())?;
        }
        Ok(())
    }
}

impl Config {
    /// The built-in defaults, rooted at `root`.
    pub fn defaults(root: &Path) -> Config {
        Config {
            path: None,
            root: root.to_path_buf(),
            stage_globs: GlobSet::empty(),
            workflow_globs: GlobSet::empty(),
            exclude: Excludes::defaults(),
            extend_exclude: Excludes::none(),
            force_exclude: false,
            lastlight: Lastlight {
                release: Target::exact(releases::NEWEST),
                release_source: ReleaseSource::Default,
                variables: DEFAULT_EXTRA_VARIABLES.iter().map(|s| s.to_string()).collect(),
                approval_gates: Vec::new(),
            },
            tools: DEFAULT_TOOLS.iter().map(|t| t.to_string()).collect(),
            dialect: Dialect::Mustache,
            resolution_policies: DEFAULT_RESOLUTION_POLICIES.iter().map(|s| s.to_string()).collect(),
            backoffs: DEFAULT_BACKOFFS.iter().map(|s| s.to_string()).collect(),
            rules: BTreeMap::new(),
            per_file_ignores: Vec::new(),
            validate_parity: false,
            climpt_version: None,
            cassette_dirs: Vec::new(),
            atomic: AtomicSettings::default(),
            baseline: None,
            docs_url: None,
        }
    }

    /// Parses config text; `path` is where it was read from (for globs and messages). Every
    /// problem of the text is in the error, not only the first.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let root = path.parent().unwrap_or(Path::new("")).to_path_buf();
        let mut config = Config::defaults(&root);
        config.path = Some(path.to_path_buf());
        let problems = read::apply(text, &mut config);
        if problems.is_empty() {
            return Ok(config);
        }
        let lines = LineIndex::new(text);
        let problems = problems
            .into_iter()
            .map(|(span, message)| {
                let span = Span::new(span.start.min(text.len()), span.end.min(text.len()));
                let at = lines.line_col(text, span.start);
                ConfigProblem { line: at.line, column: at.column, span, message }
            })
            .collect();
        Err(ConfigError { path: path.to_path_buf(), problems })
    }

    /// Reads and parses the config at `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        // Globs match against absolute file paths, so the root must be absolute too.
        let path = &std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        // The capped reader: `--config /dev/zero` is refused, not read forever.
        let text = crate::source::read::read_text(path).map_err(|e| ConfigError {
            path: path.to_path_buf(),
            problems: vec![ConfigProblem {
                line: 1,
                column: 1,
                span: Span::empty(0),
                message: format!("cannot read: {}", e.message.trim_start_matches("cannot read file: ")),
            }],
        })?;
        Config::parse(&text, path)
    }

    /// The severity for `code` after `[rules]` (the code's own entry wins over its family's),
    /// or `None` when the rule is off. `current` is what the rule reported.
    pub fn severity(&self, code: &str, current: Severity) -> Option<Severity> {
        let family = crate::registry::family_of(code);
        match self.rules.get(code).or_else(|| self.rules.get(family)) {
            Some(Level::Off) => None,
            Some(Level::Is(severity)) => Some(*severity),
            Some(Level::On) | None => Some(current),
        }
    }

    /// Whether `per-file-ignores` turns `code` off for `path`.
    pub fn ignored_for(&self, path: &Path, code: &str) -> bool {
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        let family = crate::registry::family_of(code);
        self.per_file_ignores
            .iter()
            .any(|(set, codes)| set.is_match(relative) && codes.iter().any(|c| c == code || c == family))
    }

    /// Whether `[files] workflows` names `path` as a Last Light workflow.
    pub fn is_workflow_glob(&self, path: &Path) -> bool {
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        self.workflow_globs.is_match(relative)
    }

    /// Whether `[files] stages` names `path` as a stage definition.
    pub fn is_stage_glob(&self, path: &Path) -> bool {
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        self.stage_globs.is_match(relative)
    }
}

/// Finds the nearest config file at or above `dir`.
pub fn discover(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .flat_map(|d| CONFIG_NAMES.iter().map(move |name| d.join(name)))
        .find(|candidate| candidate.is_file())
}

/// Span of a byte range, for callers that report config problems as diagnostics.
pub fn span_of(range: std::ops::Range<usize>) -> Span {
    Span::new(range.start, range.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value of the kind `what` says.
    fn value(key: &str, what: &str) -> String {
        match KEY_VALUES.iter().find(|(k, _)| *k == key) {
            Some((_, values)) => format!("\"{}\"", values[0]),
            None if what.starts_with("list") => "[]".into(),
            None if what == "true or false" => "true".into(),
            None if what.starts_with("a climpt version") => "\"1.13.5\"".into(),
            None if what.contains("version such as") => "\"0.5.24\"".into(),
            None if what.starts_with("a URL") => "\"https://example.com/stagelint/\"".into(),
            None => panic!("no sample value for {key}: {what}"),
        }
    }

    #[test]
    fn the_key_table_is_what_the_parser_accepts() {
        let path = Path::new("/p/stagelint.toml");
        for (table, keys) in TABLES {
            assert!(Config::parse(&format!("[{table}]\n"), path).is_ok(), "[{table}]");
            for (key, what) in *keys {
                let text = format!("[{table}]\n{key} = {}\n", value(key, what));
                assert!(Config::parse(&text, path).is_ok(), "{text}");
            }
            if !keys.is_empty() {
                assert!(Config::parse(&format!("[{table}]\nnot-a-key = []\n"), path).is_err(), "[{table}]");
            }
        }
        assert!(Config::parse("[not-a-table]\n", path).is_err());
        for level in LEVELS {
            assert!(Config::parse(&format!("[rules]\n\"sm\" = \"{level}\"\n"), path).is_ok(), "{level}");
        }
    }

    /// Issue 16 audit: `warn` is accepted as `warning`, so the error for another spelling says so
    /// (and guesses the level meant).
    #[test]
    fn warn_is_an_alias_the_error_names() {
        let path = Path::new("/p/stagelint.toml");
        assert!(Config::parse("[rules]\n\"sm\" = \"warn\"\n", path).is_ok());
        let error = Config::parse("[rules]\n\"sm\" = \"Warning\"\n", path).expect_err("unknown level");
        assert_eq!(
            error.problems[0].message,
            "unknown level `Warning` (did you mean `warning`?); expected \"error\", \"warning\", \"info\", \"hint\", \"on\" or \"off\" (`warn` is `warning`)"
        );
    }

    /// Issue 16 audit: the TOML parser's recovery reports an error twice and out of order;
    /// each is reported once, by position.
    #[test]
    fn syntax_errors_are_unique_and_in_order_of_the_text() {
        let text = "[tools]\nextra = [\"a\",\n[rules\nfoo = \n";
        let error = Config::parse(text, Path::new("/p/stagelint.toml")).expect_err("broken");
        let found: Vec<(usize, usize, &str)> =
            error.problems.iter().map(|p| (p.line, p.column, p.message.as_str())).collect();
        let mut sorted = found.clone();
        sorted.sort_by_key(|(line, column, _)| (*line, *column));
        assert_eq!(found, sorted);
        assert!(found.iter().enumerate().all(|(i, p)| !found[..i].contains(p)), "{found:?}");
        assert_eq!(found.iter().filter(|p| p.2.contains("unclosed array")).count(), 1, "{found:?}");
        assert_eq!(found.first().map(|p| (p.0, p.1)), Some((3, 2)), "{found:?}");
    }

    /// Issue 16: every problem of a config in one run, in the order of the text, each at its
    /// own position, and the settings around them still read.
    #[test]
    fn every_problem_is_reported_at_once() {
        let text = "[tool]\n[tools]\nregistred = []\nextra = [\"a\", 3]\n[sm]\nplaceholder-dialect = \"x\"\n[rules]\n\"sm/UnknownTol\" = \"loud\"\n\"steps\" = \"off\"\n[per-file-ignores]\n\"a/[\" = [\"smm\"]\n[steps]\nvalidate-parity = 1\n";
        let error = Config::parse(text, Path::new("/p/stagelint.toml")).expect_err("broken");
        let found: Vec<(usize, usize, &str)> =
            error.problems.iter().map(|p| (p.line, p.column, p.message.as_str())).collect();
        assert_eq!(
            found,
            [
                (1, 2, "unknown table `[tool]`; did you mean `tools`?"),
                (3, 1, "unknown key `registred` in `[tools]`; did you mean `registered`?"),
                (4, 15, "`extra` in `[tools]` takes a list of strings; this entry is an integer"),
                (6, 23, "unknown placeholder-dialect `x`; expected \"mustache\" or \"dollar\""),
                (8, 1, "unknown rule code or family `sm/UnknownTol`; did you mean `sm/UnknownTool`?"),
                (
                    8,
                    19,
                    "unknown level `loud`; expected \"error\", \"warning\", \"info\", \"hint\", \"on\" or \"off\" (`warn` is `warning`)"
                ),
                (11, 1, "bad glob: error parsing glob 'a/[': unclosed character class; missing ']'"),
                (11, 10, "unknown rule code or family `smm`; did you mean `sm`?"),
                (13, 19, "`validate-parity` in `[steps]` takes true or false, not an integer"),
            ]
        );
        let shown = error.to_string();
        assert_eq!(shown.lines().count(), 9, "{shown}");
        assert!(shown.starts_with("/p/stagelint.toml:1:2: invalid config: unknown table"), "{shown}");
    }

    /// TOML syntax errors are reported together too, and alone: what the parser recovered
    /// around them is not checked.
    #[test]
    fn syntax_errors_are_reported_together() {
        let text = "[tools\nx = = 1\n[nope]\n";
        let error = Config::parse(text, Path::new("/p/stagelint.toml")).expect_err("broken");
        assert!(error.problems.len() >= 2, "{error}");
        assert!(error.problems.iter().all(|p| !p.message.contains("nope")), "{error}");
    }

    #[test]
    fn atomic_settings_are_read_and_checked() {
        let path = Path::new("/p/stagelint.toml");
        let text = "[atomic]\nsdk-version = \"0.5.26-1\"\nagents = [\"scribe\"]\nreserved-names = [\"release\"]\n";
        let config = Config::parse(text, path).expect("parses");
        assert_eq!(config.atomic.sdk_version.as_ref().map(ToString::to_string).as_deref(), Some("0.5.26-1"));
        assert_eq!(config.atomic.agents, ["scribe"]);
        assert_eq!(config.atomic.reserved_names, ["release"]);
        assert!(Config::defaults(Path::new("/p")).atomic.sdk_version.is_none());
        let text = "[atomic]\nsdk-version = \"^0.5.24\"\nagent = []\nreserved-names = \"ralph\"\n";
        let error = Config::parse(text, path).expect_err("broken");
        let found: Vec<(usize, usize, &str)> =
            error.problems.iter().map(|p| (p.line, p.column, p.message.as_str())).collect();
        assert_eq!(
            found,
            [
                (
                    2,
                    15,
                    "`sdk-version` in `[atomic]` takes a version MAJOR.MINOR.PATCH[-TAG] such as \"0.5.24\", not `^0.5.24`"
                ),
                (3, 1, "unknown key `agent` in `[atomic]`; did you mean `agents`?"),
                (4, 18, "`reserved-names` in `[atomic]` takes a list of strings, not a string"),
            ]
        );
    }

    /// `[lastlight] release` takes a version, read as the release range it falls in, or a
    /// row's name; with `engine` too, or an unknown name, it is a problem at that value.
    #[test]
    fn the_last_light_release_is_read_and_checked() {
        let path = Path::new("/p/stagelint.toml");
        let release =
            |text: &str| Config::parse(&format!("[lastlight]\nrelease = {text}\n"), path).map(|c| c.lastlight.release);
        assert_eq!(release("\"0.10\"").ok(), Some(Target::exact(releases::V0_7_7)));
        assert_eq!(release("\"v0.23.4\"").ok(), Some(Target::exact(releases::V0_23)));
        assert_eq!(release("\"head\"").ok(), Some(Target::exact(releases::NEWEST)));
        let problem = |text: &str| {
            let error = Config::parse(text, path).expect_err("broken");
            error.problems.iter().map(|p| (p.line, p.column, p.message.clone())).collect::<Vec<_>>()
        };
        let unknown = problem("[lastlight]\nrelease = \"latest\"\n");
        assert_eq!((unknown[0].0, unknown[0].1), (2, 11));
        assert!(unknown[0].2.starts_with("unknown Last Light release `latest`"), "{unknown:?}");
        let both = problem("[lastlight]\nrelease = \"0.23\"\nengine = \"seed\"\n");
        assert_eq!((both[0].0, both[0].1), (3, 1), "{both:?}");
        assert!(both[0].2.contains("keep one"), "{both:?}");
        assert!(release("3").is_err());
    }

    #[test]
    fn climpt_version_is_read_into_its_release() {
        let path = Path::new("/p/stagelint.toml");
        let config = Config::parse("[steps]\nclimpt-version = \"1.13.10\"\n", path).expect("parses");
        assert_eq!(config.climpt_version.map(|v| v.release.name()), Some("1.13.7"));
        let config = Config::parse("[steps]\nclimpt-version = \"1.12\"\n", path).expect("parses");
        assert_eq!(config.climpt_version.map(|v| v.release.name()), Some("1.12.0"));
        let text = "[steps]\nclimpt-version = \"1.13.5\"\n[steps]\n";
        assert!(Config::parse(text, path).is_err());
        assert!(Config::parse("[steps]\nclimpt-version = \"1.13.x\"\n", path).is_err());
        let error = Config::parse("[steps]\nclimpt-version = \"1.9.33\"\n", path).expect_err("too old");
        assert_eq!(
            error.problems[0].message,
            "stagelint models climpt from 1.10.6 on, not 1.9.33; see `stagelint explain versions`"
        );
        let error = Config::parse("[steps]\nclimpt-version = 1.13\n", path).expect_err("a number");
        assert_eq!(
            error.problems[0].message,
            "`climpt-version` in `[steps]` takes a version string such as \"1.13.5\", not a float"
        );
    }

    #[test]
    fn the_docs_url_is_an_absolute_url() {
        let path = Path::new("/p/stagelint.toml");
        let config =
            Config::parse("[output]\ndocs-url = \"https://git.example.com/mirror/stagelint/-/blob/main/\"\n", path)
                .expect("parses");
        assert_eq!(config.docs_url.as_deref(), Some("https://git.example.com/mirror/stagelint/-/blob/main/"));
        assert_eq!(Config::defaults(Path::new("/p")).docs_url, None);
        for bad in [
            "\"docs/rules\"",
            "\"https://\"",
            "\"https://a b/\"",
            "\"1x://a/\"",
            "\"https://x/docs#f\"",
            "\"http://x/?q=\"",
            "true",
        ] {
            let error = Config::parse(&format!("[output]\ndocs-url = {bad}\n"), path).expect_err(bad);
            assert_eq!((error.problems[0].line, error.problems[0].column), (2, 12), "{bad}");
            assert!(error.problems[0].message.starts_with("`docs-url` in `[output]` takes"), "{error}");
        }
    }

    #[test]
    fn settings_are_read() {
        let text = "[tools]\nextra = [\"mcp__x\"]\nregistered = [\"Read\"]\n[lastlight]\nextra-variables = [\"a\"]\nvariables = [\"b\"]\nengine = \"seed\"\n[rules]\n\"steps/R-A6\" = \"off\"\nsm = \"warning\"\n";
        let config = Config::parse(text, Path::new("/p/stagelint.toml")).expect("parses");
        assert_eq!(config.tools, BTreeSet::from(["Read".to_string(), "mcp__x".to_string()]));
        assert_eq!(config.lastlight.variables, ["b", "a"]);
        assert_eq!(config.lastlight.release_source, ReleaseSource::Configured);
        assert_eq!(config.lastlight.release, Target::exact(releases::SEED));
        assert_eq!(config.rules.get("sm"), Some(&Level::Is(Severity::Warning)));
        let aliased = crate::registry::rule("steps/R-A6").expect("alias").code;
        assert_eq!(config.rules.get(aliased), Some(&Level::Off));
    }
}
