//! How every family reasons about upstream releases, whichever the system: a release is a row of
//! its system's table ([`ReleaseId`]), a repository targets a range of rows ([`Target`]: one
//! when it is known), a rule asks the target whether it has what a release brought ([`Has`]) or
//! collects the rows a finding holds for ([`Releases`]), and messages and notes name releases
//! and ranges one way (`1.12.0`, `0.2 to 0.15`). A system is a marker type ([`Upstream`]) so
//! that a climpt release is never taken for a Last Light one.

use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use super::System;

/// An upstream system whose table the rules reason about.
pub trait Upstream: Copy + Eq + Ord + std::hash::Hash + fmt::Debug + 'static {
    const SYSTEM: &'static System;
}

/// A release of system `S`, by its position in `S`'s table (oldest first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReleaseId<S>(u8, PhantomData<S>);

impl<S: Upstream> ReleaseId<S> {
    /// The row at `index`; the release constants of each system are made with it (a test per
    /// system holds them to the table).
    pub const fn at(index: usize) -> ReleaseId<S> {
        ReleaseId(index as u8, PhantomData)
    }

    pub fn oldest() -> ReleaseId<S> {
        ReleaseId::at(0)
    }

    pub fn newest() -> ReleaseId<S> {
        ReleaseId::at(S::SYSTEM.releases.len() - 1)
    }

    /// The release a config names: a row's name, `head` (the newest), or a version (`0.12.3`,
    /// `v1.13.5`), read as the release that version belongs to (see [`ReleaseId::of_version`]).
    pub fn parse(text: &str) -> Option<ReleaseId<S>> {
        let text = text.trim();
        if text == "head" {
            return Some(ReleaseId::newest());
        }
        if let Some(index) = S::SYSTEM.releases.iter().position(|r| r.name == text) {
            return Some(ReleaseId::at(index));
        }
        Some(ReleaseId::of_version(Version::parse(text)?))
    }

    /// The release a version belongs to: the newest row named by a version not above it (rows
    /// are named by the first version of their range; a row named otherwise, such as Last
    /// Light's `seed`, is never chosen here). `None` for a version older than every row.
    pub fn containing(version: Version) -> Option<ReleaseId<S>> {
        S::SYSTEM
            .releases
            .iter()
            .rposition(|r| Version::parse(r.name).is_some_and(|first| first <= version))
            .map(ReleaseId::at)
    }

    /// [`ReleaseId::containing`], with an older version read as the oldest release.
    pub fn of_version(version: Version) -> ReleaseId<S> {
        ReleaseId::containing(version).unwrap_or_else(ReleaseId::oldest)
    }

    pub fn name(self) -> &'static str {
        self.row().name
    }

    pub fn row(self) -> &'static super::Release {
        &S::SYSTEM.releases[usize::from(self.0)]
    }

    /// Its position in the table, oldest first.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// The release before this one, if any.
    pub fn previous(self) -> Option<ReleaseId<S>> {
        self.0.checked_sub(1).map(|i| ReleaseId(i, PhantomData))
    }

    /// Every release of `S`, oldest first.
    pub fn all() -> impl DoubleEndedIterator<Item = ReleaseId<S>> {
        (0..S::SYSTEM.releases.len()).map(ReleaseId::at)
    }
}

/// The releases a repository may be at, oldest and newest inclusive: one when it is known
/// (configured, or read from a version), several when only the layout or format was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target<S> {
    pub oldest: ReleaseId<S>,
    pub newest: ReleaseId<S>,
}

/// Whether a target has a change that a release brought.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Has<S> {
    /// Every release of the target has it.
    Yes,
    /// None does.
    No,
    /// Only its releases from this one on: the older ones lack it.
    From(ReleaseId<S>),
}

impl<S: Upstream> Target<S> {
    pub fn exact(release: ReleaseId<S>) -> Target<S> {
        Target { oldest: release, newest: release }
    }

    /// Every release of `S`.
    pub fn all() -> Target<S> {
        Target { oldest: ReleaseId::oldest(), newest: ReleaseId::newest() }
    }

    /// Whether the target has what `since` brought.
    pub fn has(self, since: ReleaseId<S>) -> Has<S> {
        if self.oldest >= since {
            Has::Yes
        } else if self.newest < since {
            Has::No
        } else {
            Has::From(since)
        }
    }

    /// Whether any release of the target has what `since` brought (the lenient reading of a
    /// range, for what must be decided one way).
    pub fn any_has(self, since: ReleaseId<S>) -> bool {
        self.newest >= since
    }

    pub fn is_exact(self) -> bool {
        self.oldest == self.newest
    }

    /// The releases both targets hold, if any.
    pub fn and(self, other: Target<S>) -> Option<Target<S>> {
        let (oldest, newest) = (self.oldest.max(other.oldest), self.newest.min(other.newest));
        (oldest <= newest).then_some(Target { oldest, newest })
    }

    /// Its releases, oldest first.
    pub fn iter(self) -> impl DoubleEndedIterator<Item = ReleaseId<S>> {
        (self.oldest.index()..=self.newest.index()).map(ReleaseId::at)
    }

    /// `0.7.7`, or `0.2 to 0.15` for a range, as messages and notes name it.
    pub fn describe(self) -> String {
        Releases::from(self).describe()
    }

    /// [`Target::describe`] with the system's name, as a finding's message names it:
    /// `climpt 1.12.0 to 1.12.5`.
    pub fn named(self) -> String {
        Releases::from(self).named()
    }

    /// The releases of the target before `since` (for an info about a range): `0.2 to 0.7.7`.
    pub fn before(self, since: ReleaseId<S>) -> String {
        let last = since.previous().unwrap_or(ReleaseId::oldest()).min(self.newest);
        Target { oldest: self.oldest, newest: last }.describe()
    }
}

/// Any set of releases of `S` (those a finding holds for, those a pin allows), named as
/// [`Target::describe`] names a range: adjacent releases joined (`1.12.0 to 1.13.7`), separate
/// runs listed (`1.10.6, 1.12.5 to 1.13.0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Releases<S>(u32, PhantomData<S>);

impl<S: Upstream> Releases<S> {
    pub fn none() -> Releases<S> {
        Releases(0, PhantomData)
    }

    pub fn all() -> Releases<S> {
        Target::all().into()
    }

    pub fn one(release: ReleaseId<S>) -> Releases<S> {
        Releases(1 << release.index(), PhantomData)
    }

    pub fn and(self, other: Releases<S>) -> Releases<S> {
        Releases(self.0 & other.0, PhantomData)
    }

    pub fn or(self, other: Releases<S>) -> Releases<S> {
        Releases(self.0 | other.0, PhantomData)
    }

    pub fn with(self, release: ReleaseId<S>) -> Releases<S> {
        self.or(Releases::one(release))
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn contains(self, release: ReleaseId<S>) -> bool {
        self.0 & (1 << release.index()) != 0
    }

    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Its releases, oldest first.
    pub fn iter(self) -> impl DoubleEndedIterator<Item = ReleaseId<S>> {
        ReleaseId::all().filter(move |r| self.contains(*r))
    }

    /// The smallest range holding every release of the set (`None` when it is empty).
    pub fn span(self) -> Option<Target<S>> {
        Some(Target { oldest: self.iter().next()?, newest: self.iter().next_back()? })
    }

    /// `1.13.23`, `0.2 to 0.15`, `1.13.0 to 1.13.6` (one release whose table row knows its last
    /// version), `1.10.6 to 1.11.24, 1.12.5`; `no release` when empty.
    pub fn describe(self) -> String {
        let mut runs: Vec<(ReleaseId<S>, ReleaseId<S>)> = Vec::new();
        for release in self.iter() {
            match runs.last_mut() {
                Some((_, last)) if last.index() + 1 == release.index() => *last = release,
                _ => runs.push((release, release)),
            }
        }
        if runs.is_empty() {
            return "no release".to_string();
        }
        // A range ends at its last release's last version, where the table knows it.
        let run = |&(first, last): &(ReleaseId<S>, ReleaseId<S>)| match last.row().last.unwrap_or(last.name()) {
            end if end == first.name() => end.to_string(),
            end => format!("{} to {end}", first.name()),
        };
        runs.iter().map(run).collect::<Vec<_>>().join(", ")
    }
}

impl<S: Upstream> Releases<S> {
    /// [`Releases::describe`] with the system's name: `climpt 1.10.6, 1.12.5 to 1.13.0`.
    pub fn named(self) -> String {
        format!("{} {}", S::SYSTEM.name, self.describe())
    }
}

impl<S: Upstream> From<Target<S>> for Releases<S> {
    fn from(target: Target<S>) -> Releases<S> {
        target.iter().fold(Releases::none(), Releases::with)
    }
}

/// `MAJOR.MINOR.PATCH`, compared numerically: `0.12` (patch 0), `v1.13.5` (a tag) and
/// `0.23.0-rc.1` (a pre-release counts as its version) parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version(pub u32, pub u32, pub u32);

impl Version {
    pub fn parse(text: &str) -> Option<Version> {
        let text = text.trim().strip_prefix('v').unwrap_or(text.trim());
        let core = text.split(['-', '+']).next()?;
        let number = |part: &str| match !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
            true => part.parse::<u32>().ok(),
            false => None,
        };
        let mut parts = core.split('.');
        let major = number(parts.next()?)?;
        let minor = number(parts.next()?)?;
        let patch = match parts.next() {
            Some(patch) => number(patch)?,
            None => 0,
        };
        parts.next().is_none().then_some(Version(major, minor, patch))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// Why a family checks files for the release it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReleaseSource {
    /// Its setting in a config file (`[lastlight] release`, `[steps] climpt-version`).
    Configured,
    /// Detected from the repository: the file or directory read, and what it said.
    Detected { marker: PathBuf, why: String },
    /// Nothing configured and nothing found: the newest release.
    Default,
}

/// The note `check` prints about a release it assumed, the same for every system:
/// `climpt release 1.13.7 assumed for `.agent/a/` (from `deno.json`: …); set …`.
/// `place` names what it was assumed for when a system assumes per directory; `undetected`
/// says what was looked for when nothing was found. `None` for a configured release (the user
/// chose it).
pub fn assumed_note<S: Upstream>(
    target: Target<S>,
    source: &ReleaseSource,
    place: Option<&str>,
    undetected: &str,
    cwd: &Path,
) -> Option<String> {
    let system = S::SYSTEM;
    let place = place.map(|p| format!(" for {p}")).unwrap_or_default();
    let choose = match system.setting {
        Some(setting) => format!("; set `{setting}` in stagelint.toml to choose"),
        None => String::new(),
    };
    match source {
        ReleaseSource::Configured => None,
        ReleaseSource::Detected { marker, why } => {
            let marker = marker.strip_prefix(cwd).unwrap_or(marker).display();
            let range = match target.is_exact() {
                true => "",
                false => "; what only some of these releases read is reported as info",
            };
            Some(format!(
                "{} release {} assumed{place} (from `{marker}`: {why}){range}{choose}",
                system.name,
                target.describe()
            ))
        }
        ReleaseSource::Default => Some(format!(
            "{} release {} assumed{place}, the newest stagelint models ({undetected}){choose}",
            system.name,
            target.describe()
        )),
    }
}
