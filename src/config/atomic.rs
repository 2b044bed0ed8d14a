//! `[atomic]` settings, and the SDK version syntax atomic's loader reads
//! (`runtime/version-compat.ts`), shared by the config, `package.json` and the rules.

use std::cmp::Ordering;

/// `[atomic]`: the SDK version the workflows run on and the names the project adds.
#[derive(Debug, Clone, Default)]
pub struct AtomicSettings {
    /// `sdk-version`; without it the family reads the nearest `package.json`.
    pub sdk_version: Option<SdkVersion>,
    /// `agents`: agent names known besides the agent files and the ones atomic installs.
    pub agents: Vec<String>,
    /// `reserved-names`: workflow names reserved besides atomic's builtins.
    pub reserved_names: Vec<String>,
}

/// `MAJOR.MINOR.PATCH[-TAG]`, compared as upstream's `compareVersions` does: a version without
/// a tag outranks the same one with a tag, and tags compare as strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SdkVersion {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub tag: String,
}

impl SdkVersion {
    /// `^(\d+)\.(\d+)\.(\d+)(?:-(.+))?$` on the trimmed text, as upstream parses; `None` when
    /// it does not match (upstream then ignores the version).
    pub fn parse(text: &str) -> Option<SdkVersion> {
        let text = text.trim();
        let (core, tag) = match text.split_once('-') {
            Some((core, tag)) => (core, Some(tag)),
            None => (text, None),
        };
        let mut numbers = [0u64; 3];
        let mut parts = core.split('.');
        for number in &mut numbers {
            let part = parts.next().filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))?;
            // Upstream's `Number()` never fails on digits; a huge one only needs to stay huge.
            *number = part.parse().unwrap_or(u64::MAX);
        }
        if parts.next().is_some() || tag.is_some_and(|t| t.is_empty() || t.contains(['\n', '\r'])) {
            return None;
        }
        Some(SdkVersion { major: numbers[0], minor: numbers[1], patch: numbers[2], tag: tag.unwrap_or("").into() })
    }

    /// `major.minor.patch` without a tag.
    pub const fn plain(major: u64, minor: u64, patch: u64) -> SdkVersion {
        SdkVersion { major, minor, patch, tag: String::new() }
    }
}

impl Ord for SdkVersion {
    fn cmp(&self, other: &SdkVersion) -> Ordering {
        let numbers = (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch));
        numbers.then_with(|| match (self.tag.is_empty(), other.tag.is_empty()) {
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => self.tag.cmp(&other.tag),
        })
    }
}

impl PartialOrd for SdkVersion {
    fn partial_cmp(&self, other: &SdkVersion) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for SdkVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.tag.is_empty() {
            write!(f, "-{}", self.tag)?;
        }
        Ok(())
    }
}

/// The SDK versions a project may run: one version (`sdk-version`, or an exact dependency), or
/// the versions a `^`/`~` dependency range allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SdkRange {
    /// As written (`^0.5.24`).
    pub text: String,
    pub lowest: SdkVersion,
    /// The first version the range no longer allows; `None` for one exact version.
    pub below: Option<SdkVersion>,
}

impl SdkRange {
    pub fn exact(version: SdkVersion) -> SdkRange {
        SdkRange { text: version.to_string(), lowest: version, below: None }
    }

    /// A dependency of `package.json`: `0.5.24` (also `=0.5.24`, `v0.5.24`), `^0.5.24` or
    /// `~0.5.24`. Other forms (`>=`, `||`, `*`, tags, `workspace:`) say too little: `None`.
    pub fn parse_dependency(text: &str) -> Option<SdkRange> {
        let trimmed = text.trim();
        let (kind, rest) = match trimmed.chars().next()? {
            c @ ('^' | '~') => (Some(c), &trimmed[1..]),
            '=' | 'v' => (None, &trimmed[1..]),
            _ => (None, trimmed),
        };
        let lowest = SdkVersion::parse(rest.trim_start_matches('v'))?;
        let (major, minor, patch) = (lowest.major, lowest.minor, lowest.patch);
        let next = |n: u64| n.saturating_add(1);
        let below = match kind {
            None => None,
            Some('~') => Some(SdkVersion::plain(major, next(minor), 0)),
            // `^` keeps the leftmost non-zero part.
            _ if major > 0 => Some(SdkVersion::plain(next(major), 0, 0)),
            _ if minor > 0 => Some(SdkVersion::plain(0, next(minor), 0)),
            _ => Some(SdkVersion::plain(0, 0, next(patch))),
        };
        Some(SdkRange { text: trimmed.to_string(), lowest, below })
    }

    /// Whether every version allowed is older than `version`.
    pub fn all_older_than(&self, version: &SdkVersion) -> bool {
        match &self.below {
            None => self.lowest < *version,
            Some(below) => below <= version,
        }
    }

    /// Whether some version allowed is `version` or newer.
    pub fn may_reach(&self, version: &SdkVersion) -> bool {
        match &self.below {
            None => self.lowest >= *version,
            Some(below) => below > version,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> SdkVersion {
        SdkVersion::parse(text).expect(text)
    }

    #[test]
    fn sdk_versions_follow_the_upstream_pattern() {
        for ok in ["0.5.24", "1.0.0-beta.1", "10.20.30-x", " 0.5.24 "] {
            assert!(SdkVersion::parse(ok).is_some(), "{ok}");
        }
        for bad in ["0.5", "v0.5.24", "0.5.x", "0.5.24-", "", "1.2.3.4", "^0.5.24"] {
            assert!(SdkVersion::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn versions_compare_as_upstream() {
        assert!(v("0.5.26") > v("0.5.24"));
        assert!(v("0.10.0") > v("0.9.9"));
        assert!(v("1.0.0") > v("1.0.0-0"));
        assert!(v("1.0.0-b") > v("1.0.0-a"));
        assert_eq!(v("0.5.24").cmp(&v("0.5.24")), Ordering::Equal);
    }

    #[test]
    fn dependency_ranges() {
        let caret = SdkRange::parse_dependency("^0.5.24").unwrap();
        assert_eq!(caret.below, Some(v("0.6.0")));
        assert!(caret.may_reach(&v("0.5.26")) && !caret.all_older_than(&v("0.5.99")));
        assert!(caret.all_older_than(&v("0.6.0")) && !caret.may_reach(&v("0.6.0")));
        assert_eq!(SdkRange::parse_dependency("^1.2.3").unwrap().below, Some(v("2.0.0")));
        assert_eq!(SdkRange::parse_dependency("^0.0.3").unwrap().below, Some(v("0.0.4")));
        assert_eq!(SdkRange::parse_dependency("~1.2.3").unwrap().below, Some(v("1.3.0")));
        let exact = SdkRange::parse_dependency("=0.5.24").unwrap();
        assert!(exact.below.is_none() && exact.all_older_than(&v("0.5.25")) && !exact.may_reach(&v("0.5.26")));
        for vague in [">=0.5.0", "latest", "*", "workspace:*", "0.5.x", "^0.5.0 || ^0.6.0"] {
            assert_eq!(SdkRange::parse_dependency(vague), None, "{vague}");
        }
    }
}
