//! Last Light's releases as the `lastlight/` rules reason about them: a release is a position in
//! [`LAST_LIGHT`]'s table, a repository targets a range of them (one, when it is known), and each
//! change of the format is the release that brought it. `{{prNumber}}` renders empty before
//! 0.10.2; a rule asks the target whether it has that release's change, and names the range in
//! its message.

use crate::registry::releases::{LAST_LIGHT, Release};

/// A release of [`LAST_LIGHT`], by its position in the table (oldest first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReleaseId(u8);

/// The releases the rules name, one constant per row of the table (a test holds them to it).
pub const V0_1: ReleaseId = ReleaseId(0);
pub const SEED: ReleaseId = ReleaseId(1);
pub const V0_2: ReleaseId = ReleaseId(2);
pub const V0_5_1: ReleaseId = ReleaseId(3);
pub const V0_7_7: ReleaseId = ReleaseId(4);
pub const V0_10_2: ReleaseId = ReleaseId(5);
pub const V0_10_6: ReleaseId = ReleaseId(6);
pub const V0_12_2: ReleaseId = ReleaseId(7);
pub const V0_12_6: ReleaseId = ReleaseId(8);
pub const V0_15: ReleaseId = ReleaseId(9);
pub const V0_16_1: ReleaseId = ReleaseId(10);
pub const V0_18_5: ReleaseId = ReleaseId(11);
pub const V0_23: ReleaseId = ReleaseId(12);
pub const V0_25_2: ReleaseId = ReleaseId(13);
pub const V0_25_6: ReleaseId = ReleaseId(14);
/// The newest release modelled (`head` in a config).
pub const NEWEST: ReleaseId = V0_25_6;
/// The oldest one: what exists in every release.
pub const OLDEST: ReleaseId = V0_1;

impl ReleaseId {
    /// The release a config names: a row's name, `head` (the newest), or a version
    /// (`0.12.3`, `v0.23.0`), which is read as the release that version belongs to.
    pub fn parse(text: &str) -> Option<ReleaseId> {
        let text = text.trim();
        if text == "head" {
            return Some(NEWEST);
        }
        if let Some(index) = LAST_LIGHT.releases.iter().position(|r| r.name == text) {
            return Some(ReleaseId(index as u8));
        }
        Some(ReleaseId::of_version(version(text)?))
    }

    /// The release a server version belongs to: the newest row whose first version is not
    /// above it. A version older than every row is the oldest; a newer one, the newest.
    /// `seed` has no version of its own (its `package.json` says 0.1.15): never chosen here.
    pub fn of_version(version_of: (u32, u32, u32)) -> ReleaseId {
        let mut found = OLDEST;
        for (index, release) in LAST_LIGHT.releases.iter().enumerate() {
            if let Some(first) = version(release.name)
                && first <= version_of
            {
                found = ReleaseId(index as u8);
            }
        }
        found
    }

    pub fn name(self) -> &'static str {
        self.row().name
    }

    pub fn row(self) -> &'static Release {
        &LAST_LIGHT.releases[usize::from(self.0)]
    }

    /// Its position in the table, oldest first.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// The release before this one, if any.
    pub fn previous(self) -> Option<ReleaseId> {
        self.0.checked_sub(1).map(ReleaseId)
    }
}

/// Every release, oldest first.
pub fn all() -> impl Iterator<Item = ReleaseId> {
    (0..LAST_LIGHT.releases.len()).map(|index| ReleaseId(index as u8))
}

/// `0.12`, `0.12.3` or `v0.12.3-rc.1` as numbers (a pre-release counts as its version).
pub fn version(text: &str) -> Option<(u32, u32, u32)> {
    let text = text.trim().trim_start_matches('v');
    let core = text.split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u32>().ok());
    let major = parts.next()??;
    let minor = parts.next()??;
    let patch = match parts.next() {
        Some(patch) => patch?,
        None => 0,
    };
    parts.next().is_none().then_some((major, minor, patch))
}

/// The releases a repository may be at, oldest and newest inclusive: one when it is known
/// (configured, or read from a version), several when only the engine's layout was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    pub oldest: ReleaseId,
    pub newest: ReleaseId,
}

/// Whether a target has a change that a release brought.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Has {
    /// Every release of the target has it.
    Yes,
    /// None does.
    No,
    /// Only its releases from this one on: the older ones lack it.
    From(ReleaseId),
}

impl Target {
    pub fn exact(release: ReleaseId) -> Target {
        Target { oldest: release, newest: release }
    }

    /// Whether the target has what `since` brought.
    pub fn has(self, since: ReleaseId) -> Has {
        if self.oldest >= since {
            Has::Yes
        } else if self.newest < since {
            Has::No
        } else {
            Has::From(since)
        }
    }

    /// Whether every release of the target has what `since` brought (the lenient reading of a
    /// range, for what must be decided one way: which tags the template scan recognises).
    pub fn any_has(self, since: ReleaseId) -> bool {
        self.newest >= since
    }

    pub fn is_exact(self) -> bool {
        self.oldest == self.newest
    }

    /// `0.7.7`, or `0.2 to 0.15` for a range, as messages name it.
    pub fn describe(self) -> String {
        if self.is_exact() {
            self.oldest.name().to_string()
        } else {
            format!("{} to {}", self.oldest.name(), self.newest.name())
        }
    }

    /// The releases of the target before `since` (for an info about a range): `0.2 to 0.7.7`.
    pub fn before(self, since: ReleaseId) -> String {
        let last = since.previous().unwrap_or(OLDEST).min(self.newest);
        Target { oldest: self.oldest, newest: last }.describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_constants_are_the_rows_of_the_table() {
        let constants = [
            (V0_1, "0.1"),
            (SEED, "seed"),
            (V0_2, "0.2"),
            (V0_5_1, "0.5.1"),
            (V0_7_7, "0.7.7"),
            (V0_10_2, "0.10.2"),
            (V0_10_6, "0.10.6"),
            (V0_12_2, "0.12.2"),
            (V0_12_6, "0.12.6"),
            (V0_15, "0.15"),
            (V0_16_1, "0.16.1"),
            (V0_18_5, "0.18.5"),
            (V0_23, "0.23"),
            (V0_25_2, "0.25.2"),
            (V0_25_6, "0.25.6"),
        ];
        assert_eq!(constants.len(), LAST_LIGHT.releases.len());
        for (id, name) in constants {
            assert_eq!(id.name(), name);
        }
        assert_eq!(NEWEST.name(), LAST_LIGHT.newest().name);
    }

    #[test]
    fn versions_belong_to_the_release_they_fall_in() {
        let of = |text: &str| ReleaseId::parse(text).map(ReleaseId::name);
        assert_eq!(of("0.1.15"), Some("0.1"));
        assert_eq!(of("v0.0.2"), Some("0.1"));
        assert_eq!(of("seed"), Some("seed"));
        assert_eq!(of("0.2.0"), Some("0.2"));
        assert_eq!(of("0.7.6"), Some("0.5.1"));
        assert_eq!(of("0.10.1"), Some("0.7.7"));
        assert_eq!(of("v0.10.2"), Some("0.10.2"));
        assert_eq!(of("0.22.0"), Some("0.18.5"));
        assert_eq!(of("0.23"), Some("0.23"));
        assert_eq!(of("0.26.0"), Some("0.25.6"));
        assert_eq!(of("1.0.0-rc.1"), Some("0.25.6"));
        assert_eq!(of("head"), Some("0.25.6"));
        assert_eq!(of("latest"), None);
        assert_eq!(of("0.x"), None);
    }

    #[test]
    fn a_range_has_a_change_from_the_release_that_brought_it() {
        let range = Target { oldest: V0_2, newest: V0_15 };
        assert_eq!(range.has(V0_2), Has::Yes);
        assert_eq!(range.has(V0_10_2), Has::From(V0_10_2));
        assert_eq!(range.has(V0_23), Has::No);
        assert_eq!(range.before(V0_10_2), "0.2 to 0.7.7");
        assert_eq!(range.describe(), "0.2 to 0.15");
        assert_eq!(Target::exact(V0_7_7).describe(), "0.7.7");
    }
}
