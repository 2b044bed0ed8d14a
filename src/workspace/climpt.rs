//! Which climpt release an agent directory runs on, as ruff infers `target-version`: what
//! `[steps] climpt-version` says, else climpt's own version when the tree is climpt, else what
//! the Deno project pins for `jsr:@aidevtool/climpt`, else what the agent's files are written
//! in, else the newest release. Several releases may stay open; the rules then report what
//! depends on the release as infos.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::registry::releases::{CLIMPT, CLIMPT_NEWEST_KNOWN, Version, climpt_release_index};
use crate::source::Node;
use crate::util::FastMap;

/// A set of climpt releases, by index into `CLIMPT.releases`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Releases(u32);

impl Releases {
    pub fn all() -> Releases {
        Releases((1u32 << CLIMPT.releases.len()) - 1)
    }

    pub fn none() -> Releases {
        Releases(0)
    }

    pub fn one(index: usize) -> Releases {
        Releases(1 << index)
    }

    /// The releases from `first` to `last`, both included.
    pub fn span(first: usize, last: usize) -> Releases {
        Releases((first..=last).fold(0, |bits, i| bits | 1 << i))
    }

    /// The releases named (release names are their first versions).
    fn named(names: &[&str]) -> Releases {
        Releases(names.iter().filter_map(|n| index_of(n)).fold(0, |bits, i| bits | 1 << i))
    }

    pub fn newest() -> Releases {
        Releases::one(CLIMPT.releases.len() - 1)
    }

    pub fn and(self, other: Releases) -> Releases {
        Releases(self.0 & other.0)
    }

    pub fn or(self, other: Releases) -> Releases {
        Releases(self.0 | other.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn contains(self, index: usize) -> bool {
        self.0 & (1 << index) != 0
    }

    /// The indices, oldest first.
    pub fn iter(self) -> impl DoubleEndedIterator<Item = usize> {
        (0..CLIMPT.releases.len()).filter(move |i| self.contains(*i))
    }

    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// "climpt 1.13.23", "climpt 1.12.5 to 1.13.22" (runs of adjacent releases joined), with the
    /// range of the last release spelt out to its last version.
    pub fn describe(self) -> String {
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for i in self.iter() {
            match runs.last_mut() {
                Some((_, last)) if *last + 1 == i => *last = i,
                _ => runs.push((i, i)),
            }
        }
        let parts: Vec<String> = runs
            .iter()
            .map(|&(first, last)| match last_version(last) {
                Some(end) if end != CLIMPT.releases[first].name => format!("{} to {end}", CLIMPT.releases[first].name),
                Some(end) => end.to_string(),
                None => format!("{} and later", CLIMPT.releases[first].name),
            })
            .collect();
        format!("climpt {}", parts.join(", "))
    }
}

/// The last version of release `index`'s range, where stagelint knows it (the newest range is
/// open: `None`).
fn last_version(index: usize) -> Option<&'static str> {
    const LAST: [&str; 7] = ["1.11.24", "1.12.3", "1.12.4", "1.12.5", "1.13.6", "1.13.14", "1.13.22"];
    LAST.get(index).copied()
}

/// The index of the release named `name`.
pub fn index_of(name: &str) -> Option<usize> {
    CLIMPT.releases.iter().position(|r| r.name == name)
}

/// What a Deno project around an agent says about climpt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pin {
    /// The file that says it.
    pub file: PathBuf,
    pub kind: PinKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PinKind {
    /// The tree is climpt itself (`deno.json` named `@aidevtool/climpt`) at this version.
    Climpt(Version),
    /// `jsr:@aidevtool/climpt` specifiers (a lock file's resolved versions, or what
    /// `deno.json` writes: `@1.13.5`, `@^1.13.0`, none), and the releases they allow.
    Pinned { specs: Vec<String>, releases: Releases },
}

/// The climpt release an agent directory is checked for, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assumed {
    /// Never empty.
    pub releases: Releases,
    pub source: Source,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// `[steps] climpt-version` in this config file.
    Configured { version: Version, config: Option<PathBuf> },
    /// The pin (and, when it left several releases, what the agent's format narrowed them to).
    Pinned { pin: Arc<Pin>, format: Vec<&'static str> },
    /// Nothing pins climpt; the agent's format.
    Format(Vec<&'static str>),
    /// Nothing pins climpt, and the format tells nothing: the newest release.
    Default,
}

impl Assumed {
    /// Why these releases, for the note the check prints.
    pub fn why(&self, cwd: &Path) -> String {
        let shown = |path: &Path| path.strip_prefix(cwd).unwrap_or(path).display().to_string();
        let format = |evidence: &[&str]| evidence.join(", ");
        match &self.source {
            Source::Configured { version, config } => match config {
                Some(path) => format!("`climpt-version = \"{version}\"` in {}", shown(path)),
                None => format!("`climpt-version = \"{version}\"`"),
            },
            Source::Pinned { pin, format: evidence } => {
                let what = match &pin.kind {
                    PinKind::Climpt(version) if climpt_release_index(*version).is_none() => format!(
                        "the tree is climpt {version}, older than {}, the oldest release stagelint models",
                        CLIMPT.releases[0].name
                    ),
                    PinKind::Climpt(version) if beyond_known(*version) => format!(
                        "the tree is climpt {version}, newer than {CLIMPT_NEWEST_KNOWN}, the newest release stagelint has read"
                    ),
                    PinKind::Climpt(version) => format!("the tree is climpt {version}"),
                    PinKind::Pinned { specs, .. } => format!("`{}`", specs.join("`, `")),
                };
                let narrowed = match evidence.is_empty() {
                    true => String::new(),
                    false => format!("; the agent's format: {}", format(evidence)),
                };
                format!("detected from {}: {what}{narrowed}", shown(&pin.file))
            }
            Source::Format(evidence) => format!("detected from the agent's format: {}", format(evidence)),
            Source::Default => "the default: nothing pins climpt and the agent's format fits every release".to_string(),
        }
    }
}

/// The target of an agent directory: its config's `[steps] climpt-version`, its pin, or the
/// format of its registry and agent.json.
pub fn target(config: &Config, pin: Option<&Arc<Pin>>, registry: Option<&Node>, agent_json: Option<&Node>) -> Assumed {
    if let Some(setting) = config.climpt_version {
        let source = Source::Configured { version: setting.version, config: config.path.clone() };
        return Assumed { releases: Releases::one(setting.release), source };
    }
    let (format, evidence) = format_releases(registry, agent_json);
    if let Some(pin) = pin {
        let pinned = match &pin.kind {
            PinKind::Climpt(version) => Releases::one(release_at(*version)),
            PinKind::Pinned { releases, .. } => *releases,
        };
        // The runtime is what the project pins; its files may be written for another release
        // (then their keys are defects of the pinned one).
        let narrowed = pinned.and(format);
        let (releases, evidence) = match narrowed.is_empty() || narrowed == pinned {
            true => (pinned, Vec::new()),
            false => (narrowed, evidence),
        };
        return Assumed { releases, source: Source::Pinned { pin: pin.clone(), format: evidence } };
    }
    if evidence.is_empty() {
        return Assumed { releases: Releases::newest(), source: Source::Default };
    }
    Assumed { releases: format, source: Source::Format(evidence) }
}

/// The release holding `version`; the oldest for an older one.
fn release_at(version: Version) -> usize {
    climpt_release_index(version).unwrap_or(0)
}

/// `runner.verdict.type` values (climpt 1.12.5 and later).
pub const VERDICT_TYPES: [&str; 8] = [
    "poll:state",
    "count:iteration",
    "count:check",
    "detect:keyword",
    "detect:structured",
    "detect:graph",
    "meta:composite",
    "meta:custom",
];

/// The completion types of climpt up to 1.12.4 (`behavior.completionType`,
/// `runner.completion.type`), in the order of the verdict types they became (78d6131).
pub const COMPLETION_TYPES: [&str; 8] = [
    "externalState",
    "iterationBudget",
    "checkBudget",
    "keywordSignal",
    "structuredSignal",
    "stepMachine",
    "composite",
    "custom",
];

/// What an agent's files are written in says about its release: each marker narrows the set;
/// one that contradicts the markers before it is left out (its keys are then defects).
fn format_releases(registry: Option<&Node>, agent_json: Option<&Node>) -> (Releases, Vec<&'static str>) {
    let mut markers: Vec<(Releases, &'static str)> = Vec::new();
    if let Some(agent) = agent_json.filter(|a| a.as_map().is_some()) {
        let runner = agent.get("runner");
        if let Some(runner) = runner {
            if runner.get("verdict").is_some() {
                markers.push((from("1.12.5"), "`runner.verdict` in agent.json"));
            } else if runner.get("completion").is_some() {
                markers.push((Releases::named(&["1.12.0", "1.12.4"]), "`runner.completion` in agent.json"));
            } else {
                markers.push((from("1.12.0"), "`runner` in agent.json"));
            }
        } else if agent.get("behavior").is_some() {
            markers.push((Releases::named(&["1.10.6"]), "`behavior` in agent.json"));
        }
    }
    if let Some(registry) = registry.filter(|r| r.as_map().is_some()) {
        let mapped: Vec<&str> = registry
            .get("entryStepMapping")
            .and_then(Node::as_map)
            .unwrap_or_default()
            .iter()
            .filter_map(crate::source::Entry::key_str)
            .collect();
        if mapped.iter().any(|k| VERDICT_TYPES.contains(k)) {
            markers.push((from("1.12.5"), "`entryStepMapping` keyed by verdict types"));
        } else if mapped.iter().any(|k| COMPLETION_TYPES.contains(k)) {
            markers.push((until("1.12.4"), "`entryStepMapping` keyed by completion types"));
        }
        if ["failurePatterns", "validationSteps"].iter().any(|k| registry.get(k).is_some()) {
            markers.push((from("1.12.5"), "`failurePatterns`/`validationSteps` in the registry"));
        } else if ["completionPatterns", "completionSteps"].iter().any(|k| registry.get(k).is_some()) {
            markers.push((until("1.12.4"), "`completionPatterns`/`completionSteps` in the registry"));
        }
        let steps: Vec<&Node> = registry
            .get("steps")
            .and_then(Node::as_map)
            .unwrap_or_default()
            .iter()
            .map(|e| &e.value)
            .filter(|s| s.as_map().is_some())
            .collect();
        let keyed = steps.iter().filter(|s| s.get("fallbackKey").is_some()).count();
        let bases = ["userPromptsBase", "schemasBase"].iter().any(|k| registry.get(k).is_some());
        // climpt's schema requires `fallbackKey` up to 1.13.22, but its runtime never checked
        // (the loader's full validation is off): only a registry keyed throughout, or one with
        // none, tells the era it was written in.
        if bases {
            markers.push((until("1.13.15"), "`userPromptsBase`/`schemasBase` in the registry (gone in 1.13.23)"));
        } else if !steps.is_empty() && keyed == steps.len() {
            markers.push((until("1.13.15"), "`fallbackKey` on every step (required until 1.13.22)"));
        } else if !steps.is_empty() && keyed == 0 {
            markers.push((from("1.13.23"), "no step with `fallbackKey` (required until 1.13.22)"));
        }
    }
    let mut releases = Releases::all();
    let mut evidence = Vec::new();
    for (marker, why) in markers {
        let narrowed = releases.and(marker);
        if !narrowed.is_empty() {
            releases = narrowed;
            evidence.push(why);
        }
    }
    (releases, evidence)
}

/// The release named `name` and every later one.
fn from(name: &str) -> Releases {
    let first = index_of(name).unwrap_or(0);
    Releases::span(first, CLIMPT.releases.len() - 1)
}

/// Every release up to the one named `name`.
fn until(name: &str) -> Releases {
    Releases::span(0, index_of(name).unwrap_or(0))
}

/// The Deno project files an agent directory's pin is read from: the nearest ancestor that
/// holds `deno.json`, `deno.jsonc` or `deno.lock`, inside the bounds (`inside` says which
/// directories may be read).
pub fn project_files(agent_dir: &Path, inside: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    for dir in agent_dir.ancestors() {
        if !inside(dir) {
            break;
        }
        let files: Vec<PathBuf> =
            ["deno.json", "deno.jsonc", "deno.lock"].iter().map(|n| dir.join(n)).filter(|p| is_plain_file(p)).collect();
        if !files.is_empty() {
            return files;
        }
        if dir.join(".git").exists() {
            break;
        }
    }
    Vec::new()
}

/// A regular file that is no symlink: a link could lead outside the workspace.
fn is_plain_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_file())
}

/// What a Deno project's files (path and text, from [`project_files`]) pin for climpt.
pub fn read_pin(files: &[(PathBuf, String)]) -> Option<Pin> {
    // climpt's own tree.
    for (path, text) in files.iter().filter(|(p, _)| !is_lock(p)) {
        let Some(root) = crate::source::json::parse(&strip_jsonc(text)).root else { continue };
        if root.get("name").and_then(Node::as_str) == Some("@aidevtool/climpt")
            && let Some(version) = root.get("version").and_then(Node::as_str).and_then(Version::parse)
        {
            return Some(Pin { file: path.clone(), kind: PinKind::Climpt(version) });
        }
    }
    // A lock file's resolved versions win over what deno.json asks for.
    for (path, text) in files.iter().filter(|(p, _)| is_lock(p)) {
        let versions: Vec<Version> = specifiers(text, false).iter().filter_map(|s| Version::parse(s)).collect();
        if versions.is_empty() {
            continue;
        }
        let releases = versions.iter().fold(Releases(0), |set, v| set.or(Releases::one(release_at(*v))));
        let specs = versions.iter().map(|v| format!("jsr:@aidevtool/climpt@{v}")).collect();
        return Some(Pin { file: path.clone(), kind: PinKind::Pinned { specs: dedup(specs), releases } });
    }
    for (path, text) in files.iter().filter(|(p, _)| !is_lock(p)) {
        let found = specifiers(text, true);
        if found.is_empty() {
            continue;
        }
        let releases = found.iter().fold(Releases(0), |set, spec| set.or(spec_releases(spec)));
        let specs =
            found
                .iter()
                .map(|s| {
                    if s.is_empty() {
                        "jsr:@aidevtool/climpt".to_string()
                    } else {
                        format!("jsr:@aidevtool/climpt@{s}")
                    }
                })
                .collect();
        return Some(Pin { file: path.clone(), kind: PinKind::Pinned { specs: dedup(specs), releases } });
    }
    None
}

fn is_lock(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "deno.lock")
}

fn dedup(mut specs: Vec<String>) -> Vec<String> {
    specs.sort();
    specs.dedup();
    specs
}

/// The version part of every `@aidevtool/climpt` specifier in a text: `1.13.5`, `^1.13.0`, or
/// empty for none (`jsr:@aidevtool/climpt/agents/runner`). With `jsr_only`, only `jsr:`
/// specifiers count (in `deno.json` the bare name is an import map key); a lock file's
/// resolved versions are keys without the prefix.
fn specifiers(text: &str, jsr_only: bool) -> Vec<String> {
    const NAME: &str = "@aidevtool/climpt";
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(NAME).map(|i| from + i) {
        from = at + NAME.len();
        if jsr_only && !text[..at].ends_with("jsr:") {
            continue;
        }
        let rest = &text[from..];
        // `@aidevtool/climpt-foo` is another package.
        if rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            continue;
        }
        let spec = match rest.strip_prefix('@') {
            Some(spec) => {
                let end =
                    spec.find(|c: char| c == '"' || c == '/' || c == '\'' || c.is_whitespace()).unwrap_or(spec.len());
                &spec[..end]
            }
            None => "",
        };
        out.push(spec.to_string());
    }
    out
}

/// The releases a `deno.json` specifier allows: an exact version, `^`, `~`, `>=`, or none
/// (the newest: an unpinned specifier runs whatever JSR serves).
fn spec_releases(spec: &str) -> Releases {
    let newest = CLIMPT.releases.len() - 1;
    let at_least = |text: &str| Version::parse(text).map(|v| Releases::span(release_at(v), newest));
    let releases = if let Some(rest) = spec.strip_prefix('^').or_else(|| spec.strip_prefix(">=")) {
        at_least(rest)
    } else if let Some(rest) = spec.strip_prefix('~') {
        Version::parse(rest).map(|v| Releases::span(release_at(v), release_at(Version(v.0, v.1, u32::MAX))))
    } else {
        Version::parse(spec).map(|v| Releases::one(release_at(v)))
    };
    releases.unwrap_or_else(Releases::newest)
}

/// `deno.jsonc` with its comments blanked out, so the JSON reader can read it.
fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// The pin of every agent directory (a steps registry's directory) of `workspace`, each Deno
/// project read once; `inside` bounds the directories looked in, `read` reads a file.
pub fn read_pins(
    workspace: &crate::workspace::Workspace,
    inside: &dyn Fn(&Path) -> bool,
    read: &dyn Fn(&Path) -> Option<String>,
) -> Pins {
    let mut pins = Pins::default();
    let mut by_project: FastMap<PathBuf, Option<Arc<Pin>>> = FastMap::default();
    let mut dirs: Vec<&Path> = workspace
        .files()
        .iter()
        .filter(|f| f.kind == crate::workspace::FileKind::StepsRegistry)
        .filter_map(|f| f.path.parent())
        .collect();
    dirs.sort();
    dirs.dedup();
    for dir in dirs {
        let files = project_files(dir, inside);
        let Some(project) = files.first().and_then(|f| f.parent()) else { continue };
        let pin = by_project
            .entry(project.to_path_buf())
            .or_insert_with(|| {
                let texts: Vec<(PathBuf, String)> = files.iter().filter_map(|f| Some((f.clone(), read(f)?))).collect();
                read_pin(&texts).map(Arc::new)
            })
            .clone();
        if let Some(pin) = pin {
            pins.insert(dir.to_path_buf(), pin);
        }
    }
    pins
}

/// The pins of agent directories, read once per Deno project by discovery.
#[derive(Debug, Default)]
pub struct Pins {
    by_agent: FastMap<PathBuf, Arc<Pin>>,
}

impl Pins {
    pub fn insert(&mut self, agent_dir: PathBuf, pin: Arc<Pin>) {
        self.by_agent.insert(agent_dir, pin);
    }

    pub fn of(&self, agent_dir: &Path) -> Option<&Arc<Pin>> {
        self.by_agent.get(agent_dir)
    }
}

/// Whether `version` is later than every climpt tag stagelint has read.
pub fn beyond_known(version: Version) -> bool {
    version > CLIMPT_NEWEST_KNOWN
}

#[cfg(test)]
mod tests {
    use super::*;

    fn releases_of(text: &str, name: &str) -> Option<String> {
        let pin = read_pin(&[(PathBuf::from(name), text.to_string())])?;
        Some(match pin.kind {
            PinKind::Climpt(version) => format!("climpt {version}"),
            PinKind::Pinned { releases, .. } => releases.describe(),
        })
    }

    #[test]
    fn every_closed_range_names_its_last_version() {
        for i in 0..CLIMPT.releases.len() - 1 {
            let last = Version::parse(last_version(i).expect("a closed range")).unwrap();
            assert_eq!(climpt_release_index(last), Some(i), "{last}");
            assert!(Version::parse(CLIMPT.releases[i + 1].name).unwrap() > last);
        }
        assert_eq!(last_version(CLIMPT.releases.len() - 1), None);
    }

    #[test]
    fn pins_are_read_from_deno_files() {
        let own = "{\n  // climpt itself\n  \"name\": \"@aidevtool/climpt\",\n  \"version\": \"1.13.14\"\n}";
        assert_eq!(releases_of(own, "/r/deno.jsonc").as_deref(), Some("climpt 1.13.14"));
        let exact = r#"{"tasks": {"agent": "deno run -A jsr:@aidevtool/climpt@1.12.2/agents/runner --agent x"}}"#;
        assert_eq!(releases_of(exact, "/r/deno.json").as_deref(), Some("climpt 1.12.0 to 1.12.3"));
        let caret = r#"{"imports": {"@aidevtool/climpt": "jsr:@aidevtool/climpt@^1.13.0"}}"#;
        assert_eq!(releases_of(caret, "/r/deno.json").as_deref(), Some("climpt 1.13.0 and later"));
        let tilde = r#"{"imports": {"@aidevtool/climpt": "jsr:@aidevtool/climpt@~1.12.4"}}"#;
        assert_eq!(releases_of(tilde, "/r/deno.json").as_deref(), Some("climpt 1.12.4 to 1.12.5"));
        let unpinned = r#"{"tasks": {"iterate": "deno run -A jsr:@aidevtool/climpt/agents/iterator"}}"#;
        assert_eq!(releases_of(unpinned, "/r/deno.json").as_deref(), Some("climpt 1.13.23 and later"));
        let lock = r#"{"version": "4", "specifiers": {"jsr:@aidevtool/climpt@^1.13.0": "1.13.5"}, "jsr": {"@aidevtool/climpt@1.13.5": {}}}"#;
        assert_eq!(releases_of(lock, "/r/deno.lock").as_deref(), Some("climpt 1.13.0 to 1.13.6"));
        assert_eq!(releases_of(r#"{"imports": {"x": "jsr:@aidevtool/climpt-extra@1.0.0"}}"#, "/r/deno.json"), None);
    }

    #[test]
    fn the_format_narrows_the_releases() {
        let parse = |text: &str| crate::source::json::parse(text).root.expect("json");
        let flat = parse(r#"{"behavior": {"completionType": "externalState"}}"#);
        let registry = parse(r#"{"completionPatterns": {}, "steps": {"a": {"fallbackKey": "x"}}}"#);
        let config = Config::defaults(Path::new("/"));
        let found = target(&config, None, Some(&registry), Some(&flat));
        assert_eq!(found.releases.describe(), "climpt 1.10.6 to 1.11.24");
        let current = parse(r#"{"runner": {"verdict": {"type": "poll:state"}}}"#);
        let registry = parse(r#"{"failurePatterns": {}, "steps": {"a": {"c2": "initial"}}}"#);
        assert_eq!(
            target(&config, None, Some(&registry), Some(&current)).releases.describe(),
            "climpt 1.13.23 and later"
        );
        let seed = parse(r#"{"steps": {"a": {"fallbackKey": "x"}}}"#);
        assert_eq!(target(&config, None, Some(&seed), Some(&current)).releases.describe(), "climpt 1.12.5 to 1.13.22");
        // Some steps keyed, some not (climpt's own 1.11 quickstart): no sign of the era.
        let partly = parse(r#"{"steps": {"a": {"fallbackKey": "x"}, "b": {"c2": "closure"}}}"#);
        assert_eq!(target(&config, None, Some(&partly), Some(&current)).releases.describe(), "climpt 1.12.5 and later");
        // Nothing to go by: the newest.
        let bare = parse(r#"{"steps": {}}"#);
        assert_eq!(target(&config, None, Some(&bare), None).source, Source::Default);
        // The pin rules the format: a flat agent.json under a pinned 1.13 is the 1.13 runtime's
        // defect, not a reason to assume 1.11.
        let pin = Arc::new(
            read_pin(&[(
                PathBuf::from("/r/deno.json"),
                "{\"imports\": {\"c\": \"jsr:@aidevtool/climpt@1.13.20\"}}".into(),
            )])
            .unwrap(),
        );
        assert_eq!(
            target(&config, Some(&pin), Some(&registry), Some(&flat)).releases.describe(),
            "climpt 1.13.15 to 1.13.22"
        );
    }
}
