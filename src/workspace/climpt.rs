//! Which climpt release an agent directory runs on, as ruff infers `target-version`: what
//! `[steps] climpt-version` says, else climpt's own version when the tree is climpt, else what
//! the Deno project pins for `jsr:@aidevtool/climpt`, else what the agent's files are written
//! in, else the newest release. Several releases may stay open; the rules then report what
//! depends on the release as infos.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::registry::releases::climpt::{NEWEST_KNOWN, ReleaseId, Target, named};
use crate::registry::releases::{CLIMPT, ReleaseSource, Version};
use crate::source::Node;
use crate::util::FastMap;

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
    Pinned { specs: Vec<String>, releases: Target },
}

/// The climpt releases an agent directory is checked for, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assumed {
    pub releases: Target,
    pub source: ReleaseSource,
}

/// What the note says when nothing pins climpt and the agent's format fits every release.
pub const UNDETECTED: &str = "nothing pins climpt, and the agent's format fits every release";

/// The target of an agent directory (`dir`): its config's `[steps] climpt-version`, its pin, or
/// the format of its registry and agent.json.
pub fn target(
    config: &Config,
    dir: &Path,
    pin: Option<&Arc<Pin>>,
    registry: Option<&Node>,
    agent_json: Option<&Node>,
) -> Assumed {
    if let Some(setting) = config.climpt_version {
        return Assumed { releases: Target::exact(setting.release), source: ReleaseSource::Configured };
    }
    let (format, evidence) = format_releases(registry, agent_json);
    if let Some(pin) = pin {
        let (pinned, what) = match &pin.kind {
            PinKind::Climpt(version) => (Target::exact(ReleaseId::of_version(*version)), pinned_climpt(*version)),
            PinKind::Pinned { specs, releases } => (*releases, format!("`{}`", specs.join("`, `"))),
        };
        // The runtime is what the project pins; its files may be written for another release
        // (then their keys are defects of the pinned one).
        let (releases, why) = match pinned.and(format) {
            Some(narrowed) if narrowed != pinned => {
                (narrowed, format!("{what}; the agent's format: {}", evidence.join(", ")))
            }
            _ => (pinned, what),
        };
        return Assumed { releases, source: ReleaseSource::Detected { marker: pin.file.clone(), why } };
    }
    if evidence.is_empty() {
        return Assumed { releases: Target::exact(ReleaseId::newest()), source: ReleaseSource::Default };
    }
    let why = format!("the agent's format: {}", evidence.join(", "));
    Assumed { releases: format, source: ReleaseSource::Detected { marker: dir.to_path_buf(), why } }
}

/// What climpt's own `deno.json` says, for the note.
fn pinned_climpt(version: Version) -> String {
    if ReleaseId::containing(version).is_none() {
        format!(
            "the tree is climpt {version}, older than {}, the oldest release stagelint models",
            CLIMPT.releases[0].name
        )
    } else if beyond_known(version) {
        format!("the tree is climpt {version}, newer than {NEWEST_KNOWN}, the newest release stagelint has read")
    } else {
        format!("the tree is climpt {version}")
    }
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
fn format_releases(registry: Option<&Node>, agent_json: Option<&Node>) -> (Target, Vec<&'static str>) {
    let mut markers: Vec<(Target, &'static str)> = Vec::new();
    if let Some(agent) = agent_json.filter(|a| a.as_map().is_some()) {
        let runner = agent.get("runner");
        if let Some(runner) = runner {
            if runner.get("verdict").is_some() {
                markers.push((from("1.12.5"), "`runner.verdict` in agent.json"));
            } else if runner.get("completion").is_some() {
                markers.push((span("1.12.0", "1.12.4"), "`runner.completion` in agent.json"));
            } else {
                markers.push((from("1.12.0"), "`runner` in agent.json"));
            }
        } else if agent.get("behavior").is_some() {
            markers.push((span("1.10.6", "1.10.6"), "`behavior` in agent.json"));
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
    let mut releases = Target::all();
    let mut evidence = Vec::new();
    for (marker, why) in markers {
        if let Some(narrowed) = releases.and(marker) {
            releases = narrowed;
            evidence.push(why);
        }
    }
    (releases, evidence)
}

/// The release named `name` (a row of `CLIMPT`, which a test holds the names here to).
fn release(name: &str) -> ReleaseId {
    named(name).unwrap_or_else(ReleaseId::oldest)
}

/// The releases named `first` to `last`.
fn span(first: &str, last: &str) -> Target {
    Target { oldest: release(first), newest: release(last) }
}

/// The release named `name` and every later one.
fn from(name: &str) -> Target {
    Target { oldest: release(name), newest: ReleaseId::newest() }
}

/// Every release up to the one named `name`.
fn until(name: &str) -> Target {
    Target { oldest: ReleaseId::oldest(), newest: release(name) }
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
        let releases = span_of(versions.iter().map(|v| Target::exact(ReleaseId::of_version(*v))));
        let specs = versions.iter().map(|v| format!("jsr:@aidevtool/climpt@{v}")).collect();
        return Some(Pin { file: path.clone(), kind: PinKind::Pinned { specs: dedup(specs), releases } });
    }
    for (path, text) in files.iter().filter(|(p, _)| !is_lock(p)) {
        let found = specifiers(text, true);
        if found.is_empty() {
            continue;
        }
        let releases = span_of(found.iter().map(|spec| spec_releases(spec)));
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
fn spec_releases(spec: &str) -> Target {
    let of = ReleaseId::of_version;
    let releases = if let Some(rest) = spec.strip_prefix('^').or_else(|| spec.strip_prefix(">=")) {
        Version::parse(rest).map(|v| Target { oldest: of(v), newest: ReleaseId::newest() })
    } else if let Some(rest) = spec.strip_prefix('~') {
        Version::parse(rest).map(|v| Target { oldest: of(v), newest: of(Version(v.0, v.1, u32::MAX)) })
    } else {
        Version::parse(spec).map(|v| Target::exact(of(v)))
    };
    releases.unwrap_or_else(|| Target::exact(ReleaseId::newest()))
}

/// The smallest range holding every one of `targets` (several specifiers or resolved versions
/// in one project: the agent may run on any of them).
fn span_of(targets: impl Iterator<Item = Target>) -> Target {
    targets
        .reduce(|a, b| Target { oldest: a.oldest.min(b.oldest), newest: a.newest.max(b.newest) })
        .unwrap_or_else(|| Target::exact(ReleaseId::newest()))
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
    version > NEWEST_KNOWN
}

#[cfg(test)]
mod tests {
    use super::*;

    fn releases_of(text: &str, name: &str) -> Option<String> {
        let pin = read_pin(&[(PathBuf::from(name), text.to_string())])?;
        Some(match pin.kind {
            PinKind::Climpt(version) => format!("climpt {version}"),
            PinKind::Pinned { releases, .. } => format!("climpt {}", releases.describe()),
        })
    }

    #[test]
    fn the_names_the_format_markers_use_are_releases() {
        for name in ["1.10.6", "1.12.0", "1.12.4", "1.12.5", "1.13.15", "1.13.23"] {
            assert!(named(name).is_some(), "{name}");
        }
    }

    #[test]
    fn pins_are_read_from_deno_files() {
        let own = "{\n  // climpt itself\n  \"name\": \"@aidevtool/climpt\",\n  \"version\": \"1.13.14\"\n}";
        assert_eq!(releases_of(own, "/r/deno.jsonc").as_deref(), Some("climpt 1.13.14"));
        let exact = r#"{"tasks": {"agent": "deno run -A jsr:@aidevtool/climpt@1.12.2/agents/runner --agent x"}}"#;
        assert_eq!(releases_of(exact, "/r/deno.json").as_deref(), Some("climpt 1.12.0 to 1.12.3"));
        let caret = r#"{"imports": {"@aidevtool/climpt": "jsr:@aidevtool/climpt@^1.13.0"}}"#;
        assert_eq!(releases_of(caret, "/r/deno.json").as_deref(), Some("climpt 1.13.0 to 1.13.23"));
        let tilde = r#"{"imports": {"@aidevtool/climpt": "jsr:@aidevtool/climpt@~1.12.4"}}"#;
        assert_eq!(releases_of(tilde, "/r/deno.json").as_deref(), Some("climpt 1.12.4 to 1.12.5"));
        let unpinned = r#"{"tasks": {"iterate": "deno run -A jsr:@aidevtool/climpt/agents/iterator"}}"#;
        assert_eq!(releases_of(unpinned, "/r/deno.json").as_deref(), Some("climpt 1.13.23"));
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
        let dir = Path::new("/r/.agent/a");
        let found = target(&config, dir, None, Some(&registry), Some(&flat));
        assert_eq!(found.releases.describe(), "1.10.6 to 1.11.24");
        let current = parse(r#"{"runner": {"verdict": {"type": "poll:state"}}}"#);
        let registry = parse(r#"{"failurePatterns": {}, "steps": {"a": {"c2": "initial"}}}"#);
        assert_eq!(target(&config, dir, None, Some(&registry), Some(&current)).releases.describe(), "1.13.23");
        let seed = parse(r#"{"steps": {"a": {"fallbackKey": "x"}}}"#);
        assert_eq!(target(&config, dir, None, Some(&seed), Some(&current)).releases.describe(), "1.12.5 to 1.13.22");
        // Some steps keyed, some not (climpt's own 1.11 quickstart): no sign of the era.
        let partly = parse(r#"{"steps": {"a": {"fallbackKey": "x"}, "b": {"c2": "closure"}}}"#);
        assert_eq!(target(&config, dir, None, Some(&partly), Some(&current)).releases.describe(), "1.12.5 to 1.13.23");
        // Nothing to go by: the newest.
        let bare = parse(r#"{"steps": {}}"#);
        assert_eq!(target(&config, dir, None, Some(&bare), None).source, ReleaseSource::Default);
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
            target(&config, dir, Some(&pin), Some(&registry), Some(&flat)).releases.describe(),
            "1.13.15 to 1.13.22"
        );
    }
}
