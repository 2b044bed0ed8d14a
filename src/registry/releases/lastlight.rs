//! Last Light's releases as the `lastlight/` rules reason about them: a release is a position in
//! [`LAST_LIGHT`]'s table, a repository targets a range of them (one, when it is known), and each
//! change of the format is the release that brought it. `{{prNumber}}` renders empty before
//! 0.10.2; a rule asks the target whether it has that release's change, and names the range in
//! its message.

use super::model;
use crate::registry::releases::LAST_LIGHT;

/// Last Light, as the shared release model names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LastLight;

impl model::Upstream for LastLight {
    const SYSTEM: &'static super::System = &LAST_LIGHT;
}

pub type ReleaseId = model::ReleaseId<LastLight>;
pub type Target = model::Target<LastLight>;
pub type Has = model::Has<LastLight>;

/// The releases the rules name, one constant per row of the table (a test holds them to it).
pub const V0_1: ReleaseId = ReleaseId::at(0);
pub const SEED: ReleaseId = ReleaseId::at(1);
pub const V0_2: ReleaseId = ReleaseId::at(2);
pub const V0_5_1: ReleaseId = ReleaseId::at(3);
pub const V0_7_7: ReleaseId = ReleaseId::at(4);
pub const V0_10_2: ReleaseId = ReleaseId::at(5);
pub const V0_10_6: ReleaseId = ReleaseId::at(6);
pub const V0_12_2: ReleaseId = ReleaseId::at(7);
pub const V0_12_6: ReleaseId = ReleaseId::at(8);
pub const V0_15: ReleaseId = ReleaseId::at(9);
pub const V0_16_1: ReleaseId = ReleaseId::at(10);
pub const V0_18_5: ReleaseId = ReleaseId::at(11);
pub const V0_23: ReleaseId = ReleaseId::at(12);
pub const V0_25_2: ReleaseId = ReleaseId::at(13);
pub const V0_25_6: ReleaseId = ReleaseId::at(14);
/// The newest release modelled (`head` in a config).
pub const NEWEST: ReleaseId = V0_25_6;
/// The oldest one: what exists in every release.
pub const OLDEST: ReleaseId = V0_1;

/// Every release, oldest first.
pub fn all() -> impl Iterator<Item = ReleaseId> {
    ReleaseId::all()
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
