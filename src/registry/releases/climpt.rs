//! climpt's releases as the `steps/` rules reason about them: the shared release model
//! ([`super::model`]) over [`CLIMPT`]'s table, whose rows are named by the first version of
//! their range.

use super::model;
use super::{CLIMPT, Version};

/// climpt, as the shared release model names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Climpt;

impl model::Upstream for Climpt {
    const SYSTEM: &'static super::System = &CLIMPT;
}

pub type ReleaseId = model::ReleaseId<Climpt>;
pub type Target = model::Target<Climpt>;
pub type Releases = model::Releases<Climpt>;

/// The newest climpt tag stagelint has read (4af87ad); a later version is checked as the newest
/// release modelled.
pub const NEWEST_KNOWN: Version = Version(1, 13, 27);

/// The release named `name` (a row of the table, such as `1.12.5`).
pub fn named(name: &str) -> Option<ReleaseId> {
    CLIMPT.releases.iter().position(|r| r.name == name).map(ReleaseId::at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_climpt_version_falls_in_the_range_named_by_its_first_version() {
        let of = |text: &str| ReleaseId::containing(Version::parse(text).unwrap()).map(ReleaseId::name);
        assert_eq!(of("1.10.5"), None);
        assert_eq!(of("1.10.6"), Some("1.10.6"));
        assert_eq!(of("v1.11.24"), Some("1.10.6"));
        assert_eq!(of("1.12.3"), Some("1.12.0"));
        assert_eq!(of("1.13.14"), Some("1.13.7"));
        assert_eq!(of("1.13.27"), Some("1.13.23"));
        assert_eq!(of("2.0.0"), Some("1.13.23"));
        // Release names are versions, oldest first.
        let versions: Vec<Version> = CLIMPT.releases.iter().map(|r| Version::parse(r.name).unwrap()).collect();
        assert!(versions.windows(2).all(|w| w[0] < w[1]));
        assert!(*versions.last().unwrap() <= NEWEST_KNOWN);
        // A closed range's last version is in it, and before the next range.
        for (i, row) in CLIMPT.releases.iter().enumerate() {
            let Some(last) = row.last.and_then(Version::parse) else { continue };
            assert_eq!(ReleaseId::containing(last), Some(ReleaseId::at(i)), "{last}");
        }
        assert_eq!(CLIMPT.newest().last, None, "the newest range is open");
    }

    #[test]
    fn a_set_of_releases_is_named_by_its_runs() {
        let set = |names: &[&str]| names.iter().fold(Releases::none(), |s, n| s.with(named(n).unwrap()));
        assert_eq!(set(&["1.13.23"]).describe(), "1.13.23");
        assert_eq!(set(&["1.12.0", "1.12.4", "1.12.5"]).describe(), "1.12.0 to 1.12.5");
        assert_eq!(set(&["1.10.6", "1.12.5", "1.13.0"]).describe(), "1.10.6 to 1.11.24, 1.12.5 to 1.13.6");
        assert_eq!(set(&["1.13.0"]).named(), "climpt 1.13.0 to 1.13.6");
        assert_eq!(Releases::none().describe(), "no release");
        assert_eq!(Releases::all().len(), CLIMPT.releases.len());
    }
}
