//! `stagelint.toml`: discovery upward from a path, parsing with positions, resolved settings.

mod defaults;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use globset::{GlobSet, GlobSetBuilder};
use serde::Deserialize;
use toml::Spanned;

use crate::diagnostic::Severity;
use crate::source::{LineIndex, Span};
use crate::template::lastlight::Engine;
use crate::template::stage::Dialect;

pub use defaults::{DEFAULT_BACKOFFS, DEFAULT_EXTRA_VARIABLES, DEFAULT_RESOLUTION_POLICIES, DEFAULT_TOOLS};

/// File names looked for in each ancestor directory, in order.
pub const CONFIG_NAMES: [&str; 2] = ["stagelint.toml", ".stagelint.toml"];

/// Every table of a config file with its keys and what each holds: exactly what
/// [`Config::parse`] accepts (a test parses each key, and refuses one that is not listed), for
/// the editor's completion. `[rules]` and `[per-file-ignores]` are keyed by codes and globs.
pub const TABLES: &[(&str, &[(&str, &str)])] = &[
    ("files", &[("stages", "list of globs"), ("workflows", "list of globs")]),
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
            ("engine", "\"head\" or \"seed\""),
            ("variables", "list of strings"),
            ("extra-variables", "list of strings"),
            ("approval-gates", "list of strings"),
        ],
    ),
    ("steps", &[("validate-parity", "true or false")]),
    ("dry-run", &[("cassettes", "list of directories")]),
    ("rules", &[]),
    ("per-file-ignores", &[]),
];

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
    /// `[lastlight]` settings.
    pub lastlight: Lastlight,
    /// The live tool set: bundled, discovered and MCP names.
    pub tools: HashSet<String>,
    pub dialect: Dialect,
    pub resolution_policies: Vec<String>,
    pub backoffs: Vec<String>,
    /// Per code or per family (`sm`): a severity, or `None` for off.
    pub rules: BTreeMap<String, Level>,
    pub per_file_ignores: Vec<(GlobSet, Vec<String>)>,
    /// `[steps] validate-parity`: raise every `steps/` finding to the level climpt's
    /// `--validate` gives the same check.
    pub validate_parity: bool,
    /// `[dry-run] cassettes`: directories searched for `<stage-id>.cassette.yaml`, after the
    /// stage's own directory.
    pub cassette_dirs: Vec<PathBuf>,
}

/// `[lastlight]`: which engine renders the templates and what the project adds to it.
#[derive(Debug, Clone)]
pub struct Lastlight {
    pub engine: Engine,
    /// Where `engine` came from: the config, the repository's layout, or the default.
    pub engine_source: EngineSource,
    /// Template variables the project passes in `request.extra` (and cron `context:`), on top
    /// of the engine's own.
    pub variables: Vec<String>,
    /// Approval gates enabled in the server config (`approval.<gate>: true`).
    pub approval_gates: Vec<String>,
}

/// How the Last Light engine of a file was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineSource {
    /// `[lastlight] engine` in a config file.
    Configured,
    /// Detected from the repository: the engine's own source file or directory found there.
    Detected(PathBuf),
    /// Nothing configured and nothing found: the current engine.
    Default,
}

/// A `[rules]` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Off,
    /// Enabled with the severity the rule gives each finding (its default, or graded).
    On,
    Is(Severity),
}

/// A config that cannot be used; shown with its position and exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub path: PathBuf,
    pub line: usize,
    pub column: usize,
    /// The bytes of the config text the problem is about (empty at 0 when it is the whole file).
    pub span: Span,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Relative to the current directory when under it, as finding paths are.
        let cwd = std::env::current_dir().unwrap_or_default();
        let path = self.path.strip_prefix(&cwd).unwrap_or(&self.path);
        write!(f, "{}:{}:{}: invalid config: {}", path.display(), self.line, self.column, self.message)
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    files: RawFiles,
    #[serde(default)]
    tools: RawTools,
    #[serde(default)]
    sm: RawSm,
    #[serde(default)]
    lastlight: RawLastlight,
    #[serde(default)]
    rules: BTreeMap<Spanned<String>, Spanned<String>>,
    #[serde(default, rename = "per-file-ignores")]
    per_file_ignores: BTreeMap<Spanned<String>, Vec<Spanned<String>>>,
    #[serde(default)]
    steps: RawSteps,
    #[serde(default, rename = "dry-run")]
    dry_run: RawDryRun,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawSteps {
    #[serde(default)]
    validate_parity: bool,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawDryRun {
    #[serde(default)]
    cassettes: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawFiles {
    #[serde(default)]
    stages: Vec<Spanned<String>>,
    #[serde(default)]
    workflows: Vec<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawLastlight {
    engine: Option<Spanned<String>>,
    variables: Option<Vec<String>>,
    #[serde(default)]
    extra_variables: Vec<String>,
    #[serde(default)]
    approval_gates: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTools {
    registered: Option<Vec<String>>,
    #[serde(default)]
    extra: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawSm {
    placeholder_dialect: Option<Spanned<String>>,
    resolution_policies: Option<Vec<String>>,
    backoffs: Option<Vec<String>>,
}

impl Config {
    /// The built-in defaults, rooted at `root`.
    pub fn defaults(root: &Path) -> Config {
        Config {
            path: None,
            root: root.to_path_buf(),
            stage_globs: GlobSet::empty(),
            workflow_globs: GlobSet::empty(),
            lastlight: Lastlight {
                engine: Engine::Head,
                engine_source: EngineSource::Default,
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
            cassette_dirs: Vec::new(),
        }
    }

    /// Parses config text; `path` is where it was read from (for globs and messages).
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let root = path.parent().unwrap_or(Path::new("")).to_path_buf();
        let lines = LineIndex::new(text);
        let error = |span: Option<std::ops::Range<usize>>, message: String| {
            let span = span.map_or(Span::empty(0), |s| Span::new(s.start.min(text.len()), s.end.min(text.len())));
            let at = lines.line_col(text, span.start);
            ConfigError { path: path.to_path_buf(), line: at.line, column: at.column, span, message }
        };
        let raw: RawConfig = toml::from_str(text).map_err(|e| error(e.span(), e.message().to_string()))?;
        let mut config = Config::defaults(&root);
        config.path = Some(path.to_path_buf());
        config.stage_globs = build_globs(&raw.files.stages).map_err(|(span, msg)| error(Some(span), msg))?;
        config.workflow_globs = build_globs(&raw.files.workflows).map_err(|(span, msg)| error(Some(span), msg))?;
        if let Some(engine) = raw.lastlight.engine {
            config.lastlight.engine_source = EngineSource::Configured;
            config.lastlight.engine =
                match [Engine::Head, Engine::Seed].into_iter().find(|e| e.as_str() == engine.get_ref()) {
                    Some(known) => known,
                    None => {
                        let other = engine.get_ref();
                        return Err(error(
                            Some(engine.span()),
                            format!("unknown lastlight engine `{other}`; expected \"head\" or \"seed\""),
                        ));
                    }
                };
        }
        if let Some(variables) = raw.lastlight.variables {
            config.lastlight.variables = variables;
        }
        config.lastlight.variables.extend(raw.lastlight.extra_variables);
        config.lastlight.approval_gates = raw.lastlight.approval_gates;
        if let Some(tools) = raw.tools.registered {
            config.tools = tools.into_iter().collect();
        }
        config.tools.extend(raw.tools.extra);
        if let Some(dialect) = raw.sm.placeholder_dialect {
            config.dialect = match dialect.get_ref().as_str() {
                "mustache" => Dialect::Mustache,
                "dollar" => Dialect::Dollar,
                other => {
                    return Err(error(
                        Some(dialect.span()),
                        format!("unknown placeholder-dialect `{other}`; expected \"mustache\" or \"dollar\""),
                    ));
                }
            };
        }
        if let Some(policies) = raw.sm.resolution_policies {
            config.resolution_policies = policies;
        }
        if let Some(backoffs) = raw.sm.backoffs {
            config.backoffs = backoffs;
        }
        for (code, level) in raw.rules {
            check_code(code.get_ref()).map_err(|msg| error(Some(code.span()), msg))?;
            let level = match level.get_ref().as_str() {
                "off" => Level::Off,
                "on" => Level::On,
                other => Level::Is(Severity::parse(other).ok_or_else(|| {
                    error(
                        Some(level.span()),
                        format!(
                            "unknown level `{other}`; expected \"error\", \"warning\", \"info\", \"hint\", \"on\" or \"off\""
                        ),
                    )
                })?),
            };
            config.rules.insert(primary_code(code.get_ref()), level);
        }
        for (glob, codes) in raw.per_file_ignores {
            let set = build_globs(std::slice::from_ref(&glob)).map_err(|(span, msg)| error(Some(span), msg))?;
            let mut list = Vec::new();
            for code in codes {
                check_code(code.get_ref()).map_err(|msg| error(Some(code.span()), msg))?;
                list.push(primary_code(code.get_ref()));
            }
            config.per_file_ignores.push((set, list));
        }
        config.validate_parity = raw.steps.validate_parity;
        config.cassette_dirs = raw.dry_run.cassettes.iter().map(|dir| root.join(dir)).collect();
        Ok(config)
    }

    /// Reads and parses the config at `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        // Globs match against absolute file paths, so the root must be absolute too.
        let path = &std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        // The capped reader: `--config /dev/zero` is refused, not read forever.
        let text = crate::source::read::read_text(path).map_err(|e| ConfigError {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            span: Span::empty(0),
            message: format!("cannot read: {}", e.message.trim_start_matches("cannot read file: ")),
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

fn build_globs(globs: &[Spanned<String>]) -> Result<GlobSet, (std::ops::Range<usize>, String)> {
    let mut builder = GlobSetBuilder::new();
    for glob in globs {
        let parsed = globset::GlobBuilder::new(glob.get_ref())
            .literal_separator(true)
            .build()
            .map_err(|e| (glob.span(), format!("bad glob: {e}")))?;
        builder.add(parsed);
    }
    builder.build().map_err(|e| (0..0, format!("bad glob: {e}")))
}

/// Aliases are stored under the code their rule reports.
fn primary_code(code: &str) -> String {
    crate::registry::rule(code).map_or_else(|| code.to_string(), |rule| rule.code.to_string())
}

fn check_code(code: &str) -> Result<(), String> {
    if crate::registry::rule(code).is_some() || crate::registry::is_family(code) {
        return Ok(());
    }
    let hint = crate::registry::code_hint(code, false);
    Err(format!("unknown rule code `{code}`{hint}"))
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
}
