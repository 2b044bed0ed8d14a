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
/// the versions an npm range allows, as far as its form says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SdkRange {
    /// As written (`^0.5.24`).
    pub text: String,
    pub lowest: SdkVersion,
    pub upper: Upper,
}

/// The top of a range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Upper {
    /// Only `lowest`.
    Exact,
    /// Every version from `lowest` up to, not including, this one.
    Below(SdkVersion),
    /// No top: `*`, `latest`, `>=0.9.0` (a new install gets the newest).
    Open,
}

impl SdkRange {
    pub fn exact(version: SdkVersion) -> SdkRange {
        SdkRange { text: version.to_string(), lowest: version, upper: Upper::Exact }
    }

    /// A dependency of `package.json`, read as npm reads a range: `0.5.24` (also `=`, `v`),
    /// `^0.5.24`, `~0.5.24`, `0.9.x` and `0.9`, `*`, `x`, `latest` and an empty string,
    /// comparators (`>=0.8.0 <0.10.0`, `<0.9.0`), hyphen ranges and `||` (one range from the lowest
    /// bottom to the highest top), `workspace:` followed by any of these. `None` for what names
    /// no version (`file:`, `git+…`, a URL, another tag).
    pub fn parse_dependency(text: &str) -> Option<SdkRange> {
        let trimmed = text.trim();
        let body = trimmed.strip_prefix("workspace:").unwrap_or(trimmed).trim();
        let alternatives: Vec<(SdkVersion, Upper)> =
            body.split("||").map(|a| alternative_bounds(a.trim())).collect::<Option<_>>()?;
        let mut iter = alternatives.into_iter();
        let (mut lowest, mut upper) = iter.next()?;
        for (low, up) in iter {
            // One range from the lowest bottom to the highest top.
            let top = |low: &SdkVersion, up: &Upper| match up {
                Upper::Exact => Some(next_patch(low)),
                Upper::Below(b) => Some(b.clone()),
                Upper::Open => None,
            };
            upper = match (top(&lowest, &upper), top(&low, &up)) {
                (Some(a), Some(b)) => Upper::Below(if a >= b { a } else { b }),
                _ => Upper::Open,
            };
            if low < lowest {
                lowest = low;
            }
        }
        Some(SdkRange { text: trimmed.to_string(), lowest, upper })
    }

    /// Whether every version allowed is older than `version`.
    pub fn all_older_than(&self, version: &SdkVersion) -> bool {
        match &self.upper {
            Upper::Exact => self.lowest < *version,
            Upper::Below(below) => below <= version,
            Upper::Open => false,
        }
    }

    /// Whether some version allowed is `version` or newer.
    pub fn may_reach(&self, version: &SdkVersion) -> bool {
        match &self.upper {
            Upper::Exact => self.lowest >= *version,
            Upper::Below(below) => below > version,
            Upper::Open => true,
        }
    }

    /// Whether every version allowed is `version` or newer.
    pub fn all_at_least(&self, version: &SdkVersion) -> bool {
        self.lowest >= *version
    }
}

/// The bounds of one `||` alternative: a space-separated set of comparators, a hyphen range,
/// or one version form.
fn alternative_bounds(text: &str) -> Option<(SdkVersion, Upper)> {
    if let Some((from, to)) = text.split_once(" - ") {
        let (low, _) = partial(from.trim())?;
        let (to_low, to_up) = partial(to.trim())?;
        let up = match to_up {
            // `1.2.3 - 2.3.4` includes 2.3.4.
            Upper::Exact => Upper::Below(next_patch(&to_low)),
            other => other,
        };
        return Some((low, up));
    }
    let mut low = SdkVersion::plain(0, 0, 0);
    let mut up = Upper::Open;
    let mut any = false;
    for comparator in text.split_whitespace() {
        any = true;
        let (op, rest) = match comparator {
            c if c.starts_with(">=") || c.starts_with("<=") => c.split_at(2),
            c if c.starts_with('>') || c.starts_with('<') => c.split_at(1),
            c => ("", c),
        };
        let (l, u) = match op {
            "" => one_form(rest)?,
            ">=" => (partial(rest)?.0, Upper::Open),
            ">" => {
                let (l, u) = partial(rest)?;
                match u {
                    Upper::Exact => (next_patch(&l), Upper::Open),
                    Upper::Below(b) => (b, Upper::Open),
                    Upper::Open => return None,
                }
            }
            "<" => (SdkVersion::plain(0, 0, 0), Upper::Below(partial(rest)?.0)),
            _ => {
                // `<=`: up to and including.
                let (l, u) = partial(rest)?;
                let top = match u {
                    Upper::Exact => next_patch(&l),
                    Upper::Below(b) => b,
                    Upper::Open => return None,
                };
                (SdkVersion::plain(0, 0, 0), Upper::Below(top))
            }
        };
        // The intersection: the highest bottom, the lowest top.
        if l > low {
            low = l;
        }
        up = match (up, u) {
            (Upper::Open, u) => u,
            (u, Upper::Open) => u,
            (Upper::Exact, _) | (_, Upper::Exact) => Upper::Exact,
            (Upper::Below(a), Upper::Below(b)) => Upper::Below(if a <= b { a } else { b }),
        };
    }
    if !any {
        // An empty range is `*`.
        return Some((low, Upper::Open));
    }
    Some((low, up))
}

/// One version form without an operator: `^v`, `~v`, `=v`, `v`, `1.2.x`, `1.2`, `*`, `latest`.
fn one_form(text: &str) -> Option<(SdkVersion, Upper)> {
    let next = |n: u64| n.saturating_add(1);
    if let Some(rest) = text.strip_prefix('^') {
        let (low, up) = partial(rest)?;
        let (major, minor, patch) = (low.major, low.minor, low.patch);
        // `^` keeps the leftmost non-zero part; a partial version (`^0.9`) its last given part.
        let top = match up {
            Upper::Below(b) if b.minor == 0 && b.patch == 0 => b,
            _ if major > 0 => SdkVersion::plain(next(major), 0, 0),
            _ if minor > 0 => SdkVersion::plain(0, next(minor), 0),
            Upper::Below(b) => b,
            _ => SdkVersion::plain(0, 0, next(patch)),
        };
        return Some((low, Upper::Below(top)));
    }
    if let Some(rest) = text.strip_prefix('~') {
        let (low, up) = partial(rest)?;
        let top = match up {
            Upper::Below(b) if b.minor == 0 && b.patch == 0 => b,
            _ => SdkVersion::plain(low.major, next(low.minor), 0),
        };
        return Some((low, Upper::Below(top)));
    }
    partial(text.strip_prefix('=').unwrap_or(text))
}

/// A version that may leave parts out or write them `x`/`*`: `0.9.4` is exact, `0.9` and `0.9.x`
/// are every 0.9 release, `*`, `x` and `latest` any.
fn partial(text: &str) -> Option<(SdkVersion, Upper)> {
    let text = text.trim().trim_start_matches('v');
    if matches!(text, "" | "*" | "x" | "X" | "latest") {
        return Some((SdkVersion::plain(0, 0, 0), Upper::Open));
    }
    if let Some(version) = SdkVersion::parse(text) {
        return Some((version, Upper::Exact));
    }
    let wild = |p: &str| matches!(p, "x" | "X" | "*");
    let parts: Vec<&str> = text.split('.').collect();
    let number =
        |p: &str| (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())).then(|| p.parse().unwrap_or(u64::MAX));
    let next = |n: u64| n.saturating_add(1);
    match parts.as_slice() {
        [major] => {
            Some((SdkVersion::plain(number(major)?, 0, 0), Upper::Below(SdkVersion::plain(next(number(major)?), 0, 0))))
        }
        [major, minor] | [major, minor, _] if parts.len() == 2 || wild(parts[2]) => {
            let major = number(major)?;
            if wild(minor) {
                return Some((SdkVersion::plain(major, 0, 0), Upper::Below(SdkVersion::plain(next(major), 0, 0))));
            }
            let minor = number(minor)?;
            Some((SdkVersion::plain(major, minor, 0), Upper::Below(SdkVersion::plain(major, next(minor), 0))))
        }
        _ => None,
    }
}

fn next_patch(version: &SdkVersion) -> SdkVersion {
    SdkVersion::plain(version.major, version.minor, version.patch.saturating_add(1))
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
        let below = |r: &SdkRange| match &r.upper {
            Upper::Below(b) => Some(b.clone()),
            _ => None,
        };
        let caret = SdkRange::parse_dependency("^0.5.24").unwrap();
        assert_eq!(below(&caret), Some(v("0.6.0")));
        assert!(caret.may_reach(&v("0.5.26")) && !caret.all_older_than(&v("0.5.99")));
        assert!(caret.all_older_than(&v("0.6.0")) && !caret.may_reach(&v("0.6.0")));
        assert_eq!(below(&SdkRange::parse_dependency("^1.2.3").unwrap()), Some(v("2.0.0")));
        assert_eq!(below(&SdkRange::parse_dependency("^0.0.3").unwrap()), Some(v("0.0.4")));
        assert_eq!(below(&SdkRange::parse_dependency("~1.2.3").unwrap()), Some(v("1.3.0")));
        let exact = SdkRange::parse_dependency("=0.5.24").unwrap();
        assert!(exact.upper == Upper::Exact && exact.all_older_than(&v("0.5.25")) && !exact.may_reach(&v("0.5.26")));
        for open in ["*", "latest", "", "x", "workspace:*", ">=0.8.0"] {
            let range = SdkRange::parse_dependency(open).expect(open);
            assert_eq!(range.upper, Upper::Open, "{open}");
            assert!(range.may_reach(&v("0.9.15")) && !range.all_older_than(&v("9.0.0")), "{open}");
        }
        assert!(SdkRange::parse_dependency(">=0.9.0").unwrap().all_at_least(&v("0.9.0")));
        let minor = SdkRange::parse_dependency("0.9.x").unwrap();
        assert!(minor.all_at_least(&v("0.9.0")) && minor.all_older_than(&v("0.10.0")));
        assert_eq!(SdkRange::parse_dependency("0.9").unwrap(), SdkRange { text: "0.9".into(), ..minor.clone() });
        let both = SdkRange::parse_dependency(">=0.8.0 <0.9.0").unwrap();
        assert!(both.all_at_least(&v("0.8.0")) && both.all_older_than(&v("0.9.0")));
        let union = SdkRange::parse_dependency("^0.8.30 || ^0.9.3").unwrap();
        assert!(
            union.may_reach(&v("0.9.15")) && !union.all_at_least(&v("0.9.0")) && union.all_older_than(&v("0.10.0"))
        );
        let hyphen = SdkRange::parse_dependency("0.8.24 - 0.8.30").unwrap();
        assert!(hyphen.may_reach(&v("0.8.30")) && hyphen.all_older_than(&v("0.8.31")));
        assert!(SdkRange::parse_dependency("<0.9.0").unwrap().all_older_than(&v("0.9.0")));
        for none in ["file:../x", "git+https://x", "github:a/b", "0.5.x.y", "next-tag"] {
            assert_eq!(SdkRange::parse_dependency(none), None, "{none}");
        }
    }
}
