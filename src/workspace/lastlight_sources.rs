//! What Last Light's own sources say about its release: for each modelled change, the text in
//! the engine's or server's code that is there from the commit that made the change on (checked
//! against every tag by hand, `tests/corpus/lastlight/NOTICE.md`). A checkout between two tags
//! still carries the older tag's version in `package.json` while its code already holds some or
//! all of the next release's changes; these markers see them. Only the files a marker names are
//! read, each at most once, and only for releases newer than the version already known.

use std::path::{Path, PathBuf};

use crate::registry::releases::lastlight::{self as releases, ReleaseId};
use crate::source::read::read_text;

/// A file of the engine or the server, by its role; each has had more than one place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// The workflow schema (zod): keys, phase types, cron fields.
    Schema,
    /// The template renderer.
    Templates,
    /// The server's run context (`simple.ts`).
    Context,
    /// The workflow loader.
    Loader,
    /// The server's dispatch (`index.ts`, later `engine/dispatcher.ts`).
    Dispatch,
    /// The PR render context (`engine/pr-decisions.ts`, from 0f1a872c).
    PrDecisions,
}

const ROLES: usize = 6;

impl Role {
    fn index(self) -> usize {
        self as usize
    }
}

/// One change of a release, and the text that proves a tree has it.
struct Marker {
    release: ReleaseId,
    role: Role,
    text: &'static str,
}

const fn m(release: ReleaseId, role: Role, text: &'static str) -> Marker {
    Marker { release, role, text }
}

/// Every marker, oldest release first. 0.16.1's change, the engine package, is the directory
/// itself (see [`Sources::engine`]).
static MARKERS: &[Marker] = &[
    m(releases::SEED, Role::Schema, "skills:"),
    m(releases::SEED, Role::Schema, "fix_variant:"),
    m(releases::SEED, Role::Schema, "unrestricted_egress:"),
    m(releases::SEED, Role::Schema, "web_search:"),
    m(releases::SEED, Role::Context, "prePopulateBranch"),
    m(releases::SEED, Role::Templates, "phaseOutputs?.[key]"),
    m(releases::V0_2, Role::Templates, "[\\w-]+"),
    m(releases::V0_2, Role::Templates, "artifactUrl"),
    m(releases::V0_2, Role::Templates, "approvalUrl"),
    m(releases::V0_2, Role::Schema, "status_checklist:"),
    m(releases::V0_2, Role::Schema, "final_message:"),
    m(releases::V0_2, Role::Schema, "approval_artifact:"),
    m(releases::V0_2, Role::Schema, "requires_sandbox:"),
    m(releases::V0_2, Role::Schema, "sandbox_image:"),
    m(releases::V0_2, Role::Loader, "Invalid workflow in"),
    m(releases::V0_5_1, Role::Schema, "\"bash\""),
    m(releases::V0_5_1, Role::Schema, "\"script\""),
    m(releases::V0_5_1, Role::Dispatch, "extra.baseBranch = pr.base"),
    m(releases::V0_7_7, Role::Schema, "\"post-review\""),
    m(releases::V0_10_2, Role::Context, "issueNumber ?? prNumber ?? 0"),
    m(releases::V0_10_6, Role::Context, "botMention"),
    m(releases::V0_12_2, Role::Dispatch, "getDefaultBranch("),
    m(releases::V0_12_6, Role::Schema, "on_soft_failure:"),
    m(releases::V0_15, Role::Schema, "classification:"),
    m(releases::V0_18_5, Role::Schema, "requires_marker:"),
    m(releases::V0_23, Role::Schema, "skip_if:"),
    m(releases::V0_23, Role::Schema, "pr_scoped:"),
    m(releases::V0_23, Role::Schema, "TemplatedNumberSchema"),
    m(releases::V0_23, Role::Context, "dependencies:"),
    m(releases::V0_23, Role::PrDecisions, "mayMergeReason"),
    m(releases::V0_25_2, Role::Schema, "chat: z"),
    m(releases::V0_25_6, Role::Schema, "handler: z"),
];

/// What the sources show for one release: markers found, markers looked for in files that
/// are there but not found, and markers whose files are absent (no evidence either way).
#[derive(Debug, Default)]
struct Shown {
    found: Vec<String>,
    missing: Vec<String>,
    unknown: usize,
}

impl Shown {
    fn complete(&self) -> bool {
        !self.found.is_empty() && self.missing.is_empty() && self.unknown == 0
    }

    /// Nothing of it found where it would be: the tree is older than this release.
    fn excluded(&self) -> bool {
        self.found.is_empty() && !self.missing.is_empty()
    }
}

/// The release range the sources give, above `floor` (what a version already says).
#[derive(Debug)]
pub struct Evidence {
    pub oldest: ReleaseId,
    pub newest: ReleaseId,
    /// What was read, in words.
    pub said: String,
}

/// The engine's and server's sources around a `workflows/` directory, read on demand.
pub struct Sources {
    /// Candidate paths per role, the server's own first.
    paths: [Vec<PathBuf>; ROLES],
    texts: [Option<Vec<(PathBuf, String)>>; ROLES],
    /// The engine package (`packages/workflow-engine`), from 0.16.1 on.
    pub engine: Option<PathBuf>,
    /// The server's `templates.ts` re-exports the engine package (0.16.1 on), which is not here.
    reexport: bool,
    root: PathBuf,
}

impl Sources {
    /// The places of each file beside `root` (the directory holding `workflows/`): the server's
    /// `src/` there, and the engine and shared packages of the monorepo around it.
    pub fn new(root: &Path) -> Sources {
        let engine = engine_package(root);
        let src = root.join("src");
        let wf = src.join("workflows");
        let mut paths: [Vec<PathBuf>; ROLES] = Default::default();
        paths[Role::Schema.index()] = vec![wf.join("schema.ts")];
        paths[Role::Templates.index()] = vec![wf.join("templates.ts")];
        paths[Role::Context.index()] = vec![wf.join("simple.ts")];
        paths[Role::Loader.index()] = vec![wf.join("loader.ts")];
        paths[Role::Dispatch.index()] = vec![src.join("index.ts"), src.join("engine").join("dispatcher.ts")];
        paths[Role::PrDecisions.index()] = vec![src.join("engine").join("pr-decisions.ts")];
        if let Some(engine) = &engine {
            let core = engine.join("src").join("core");
            paths[Role::Schema.index()].push(core.join("schema.ts"));
            paths[Role::Templates.index()].push(core.join("templates.ts"));
            if let Some(packages) = engine.parent() {
                paths[Role::Loader.index()].push(packages.join("shared").join("src").join("workflow-loader.ts"));
            }
        }
        Sources { paths, texts: Default::default(), engine, reexport: false, root: root.to_path_buf() }
    }

    fn texts(&mut self, role: Role) -> &[(PathBuf, String)] {
        let paths = &self.paths[role.index()];
        self.texts[role.index()]
            .get_or_insert_with(|| {
                // The server's files of the monorepo re-export the engine's: not its text.
                let own = |text: &String| !(text.len() < 200 && text.contains("workflow-engine"));
                paths
                    .iter()
                    .filter_map(|path| read_text(path).ok().filter(own).map(|text| (path.clone(), text)))
                    .collect()
            })
            .as_slice()
    }

    /// The server's `src/workflows/templates.ts`, when there is one.
    pub fn renderer(&self) -> Option<(PathBuf, String)> {
        let path = self.paths[Role::Templates.index()][0].clone();
        read_text(&path).ok().map(|text| (path, text))
    }

    /// Whether the engine's sources are here at all: the engine package, or a server renderer
    /// that is Last Light's (it replaces `{{…}}` tags, or re-exports the engine package, as
    /// from 0.16.1 on).
    pub fn present(&mut self) -> bool {
        if self.engine.is_some() {
            return true;
        }
        self.reexport = self.renderer().is_some_and(|(_, text)| text.contains("workflow-engine"));
        self.reexport || self.texts(Role::Templates).iter().any(|(_, text)| text.contains("\\{\\{"))
    }

    /// Whether a file of `role` holds `text`: `Some(false)` when its files are there without
    /// it, `None` when none of them is.
    fn holds(&mut self, role: Role, text: &str) -> Option<(bool, PathBuf)> {
        let texts = self.texts(role);
        // Absent, it is named in the file read last: the engine's own where there is one.
        let last = texts.last()?.0.clone();
        Some(match texts.iter().find(|(_, t)| t.contains(text)) {
            Some((path, _)) => (true, path.clone()),
            None => (false, last),
        })
    }

    /// The releases the sources show, never older than `floor` (what a version already says).
    /// Markers persist once made, so a tree with some of a release's changes has all of the
    /// release before it: it is at that release or between its tag and the next. The newest
    /// release is extended past the last one shown while the files that would show the next
    /// one are absent, and stops at one whose files are there without its changes; with a
    /// version (`versioned`), absent files are no evidence against it and nothing is extended.
    pub fn evidence(&mut self, floor: ReleaseId, versioned: bool) -> Evidence {
        let mut oldest = floor;
        let mut shown_last: Option<(ReleaseId, Shown)> = None;
        let mut newest = floor;
        let mut unseen = Vec::new();
        // A release whose files are here without its changes; a later one shown after it is a
        // contradiction, read as the range between them.
        let mut lacking: Option<ReleaseId> = None;
        for release in releases::all().filter(|r| *r > floor) {
            let shown = self.shown(release);
            if shown.excluded() {
                lacking.get_or_insert(release);
                continue;
            }
            if shown.found.is_empty() {
                if !versioned && lacking.is_none() {
                    newest = release;
                    unseen.push(release.name());
                }
                continue;
            }
            newest = release;
            unseen.clear();
            if lacking.is_none() {
                oldest = match shown.complete() {
                    true => release,
                    false => release.previous().unwrap_or(floor).max(oldest),
                };
            }
            shown_last = Some((release, shown));
        }
        let mut said = match (&shown_last, lacking) {
            (None, Some(lacking)) => {
                let missing = self.shown(lacking).missing;
                format!("nothing of {} (not {})", lacking.name(), missing.join(", "))
            }
            (None, None) => "nothing of a later release".to_string(),
            (Some((release, shown)), _) => format!("what {} brought ({})", release.name(), shown.found.join(", ")),
        };
        if let Some((release, shown)) = &shown_last
            && !shown.complete()
        {
            let mut lacks = shown.missing.clone();
            if shown.unknown > 0 {
                lacks.push(format!("{} more in files not here", shown.unknown));
            }
            said.push_str(&format!(
                " but not all of it ({}): between {} and {}",
                lacks.join(", "),
                oldest.name(),
                release.name()
            ));
        }
        if let Some(lacking) = lacking.filter(|l| *l < newest) {
            said.push_str(&format!(", though nothing of {}: contradictory, so read as a range", lacking.name()));
        }
        if let (Some(first), Some(last)) = (unseen.first(), unseen.last()) {
            let range = if first == last { first.to_string() } else { format!("{first} to {last}") };
            said.push_str(&format!("; the files that would show {range} are not here"));
        }
        Evidence { oldest, newest: newest.max(oldest), said }
    }

    fn shown(&mut self, release: ReleaseId) -> Shown {
        let mut shown = Shown::default();
        if release == releases::V0_16_1 {
            match &self.engine {
                Some(engine) => shown.found.push(format!("`{}`", self.relative(engine))),
                None if self.reexport => shown.found.push("a re-export of the engine package".to_string()),
                None => shown.missing.push("`packages/workflow-engine`".to_string()),
            }
            return shown;
        }
        for marker in MARKERS.iter().filter(|m| m.release == release) {
            match self.holds(marker.role, marker.text) {
                Some((true, path)) => shown.found.push(format!("`{}` in `{}`", marker.text, self.relative(&path))),
                Some((false, path)) => shown.missing.push(format!("`{}` in `{}`", marker.text, self.relative(&path))),
                None => shown.unknown += 1,
            }
        }
        shown
    }

    /// A path as the note shows it: relative to the directory holding `workflows/`, or to the
    /// monorepo's root for the engine's packages.
    fn relative(&self, path: &Path) -> String {
        let base = match path.strip_prefix(&self.root) {
            Ok(rel) => return rel.display().to_string(),
            Err(_) => self.engine.as_ref().and_then(|e| e.parent()).and_then(|p| p.parent()),
        };
        base.and_then(|b| path.strip_prefix(b).ok()).unwrap_or(path).display().to_string()
    }
}

/// The engine package above the server (the monorepo, 0.16.1 on), searched up to the
/// repository's root.
fn engine_package(root: &Path) -> Option<PathBuf> {
    for ancestor in root.ancestors() {
        let engine = ancestor.join("packages").join("workflow-engine");
        if engine.is_dir() {
            return Some(engine);
        }
        if ancestor.join(".git").exists() {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_release_after_the_oldest_has_a_marker() {
        for release in releases::all().filter(|r| *r > releases::OLDEST && *r != releases::V0_16_1) {
            assert!(MARKERS.iter().any(|m| m.release == release), "{} has no marker", release.name());
        }
        assert!(MARKERS.windows(2).all(|w| w[0].release <= w[1].release), "markers oldest first");
    }
}
