//! The rule registry, as data: every family's codes, default severities, docs and aliases,
//! and the lookups over them. The lowest floor that knows rules: `Diagnostic`, the config and
//! the renderers read it; the families implement the rules declared here.

pub mod atomic;
pub mod cassette;
pub mod docs;
pub mod lastlight;
pub mod releases;
pub mod sm;
pub mod stagelint;
pub mod steps;

use serde::Serialize;

/// How bad a finding is. Ordered: `Hint < Info < Warning < Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Hint,
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Hint => "hint",
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    pub fn parse(text: &str) -> Option<Severity> {
        match text {
            "hint" => Some(Severity::Hint),
            "info" => Some(Severity::Info),
            "warning" | "warn" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        }
    }
}

/// What every rule says about itself; `stagelint rules`, `explain`, config validation and
/// (later) SARIF descriptors and hover all read this.
#[derive(Debug)]
pub struct RuleMeta {
    pub code: &'static str,
    pub severity: Severity,
    /// The rule's explanation in markdown (`# code`, a summary line, then sections).
    pub doc: &'static str,
    /// Whether the rule offers a fix on at least some findings.
    pub fixable: bool,
    /// Upstream ids that name the same check (`R-A6` for `SR-ENTRY-002`), without the family.
    /// They work wherever a code is accepted: `[rules]`, suppressions, `explain`.
    pub aliases: &'static [&'static str],
}

impl RuleMeta {
    /// The summary sentence: the first non-heading line of the doc.
    pub fn summary(&self) -> &'static str {
        self.doc.lines().map(str::trim).find(|line| !line.is_empty() && !line.starts_with('#')).unwrap_or("")
    }

    pub fn family(&self) -> &'static str {
        family_of(self.code)
    }
}

/// The family of a code (`sm` of `sm/UnknownField`), or the text itself when it names a
/// family. The one place that splits a code.
pub fn family_of(code: &str) -> &str {
    code.split_once('/').map_or(code, |(family, _)| family)
}

/// Every family's rule table, in the order findings and listings use.
pub static TABLES: &[(&str, &[RuleMeta])] = &[
    ("stagelint", stagelint::RULES),
    ("sm", sm::RULES),
    ("steps", steps::RULES),
    ("lastlight", lastlight::RULES),
    ("atomic", atomic::RULES),
    ("cassette", cassette::RULES),
];

/// Declares a family's rule table from `Name => Severity` pairs; each rule's explanation is
/// read from `<docs><Name>.md`, `docs` relative to the invoking file. A code that is not an identifier
/// (climpt's `SR-VALID-003`) is written `SR_VALID_003 = "SR-VALID-003" => Error`.
macro_rules! declare_rules {
    ($family:literal, $docs:literal; $( $name:ident $(= $code:literal)? => $severity:ident $(, fix = $fix:literal)? $(, aliases = [$($alias:literal),*])? ; )*) => {
        pub static RULES: &[$crate::registry::RuleMeta] = &[
            $( $crate::registry::RuleMeta {
                code: declare_rules!(@code $family, $name, [$($code)?]),
                severity: $crate::registry::Severity::$severity,
                doc: declare_rules!(@doc $docs, $name, [$($code)?]),
                fixable: declare_rules!(@fix $($fix)?),
                aliases: &[$($($alias),*)?],
            }, )*
        ];
        $( #[allow(non_upper_case_globals, dead_code)]
           pub const $name: &str = declare_rules!(@code $family, $name, [$($code)?]); )*
    };
    (@code $family:literal, $name:ident, []) => { concat!($family, "/", stringify!($name)) };
    (@code $family:literal, $name:ident, [$code:literal]) => { concat!($family, "/", $code) };
    (@doc $docs:literal, $name:ident, []) => { include_str!(concat!($docs, stringify!($name), ".md")) };
    (@doc $docs:literal, $name:ident, [$code:literal]) => { include_str!(concat!($docs, $code, ".md")) };
    (@fix) => { false };
    (@fix $fix:literal) => { $fix };
}
pub(crate) use declare_rules;

/// Every rule of every family.
pub fn all_rules() -> impl Iterator<Item = &'static RuleMeta> {
    TABLES.iter().flat_map(|(_, rules)| rules.iter())
}

/// `; did you mean …?` for an unknown code, or nothing: a rule name without its family
/// (`SkipIfGrammar`, as people say it) names every code that ends with it, anything else the
/// closest code (or family, with `families`).
pub fn code_hint(code: &str, families: bool) -> String {
    let bare: Vec<String> = all_rules()
        .map(|r| r.code)
        .filter(|c| c.rsplit_once('/').is_some_and(|(_, name)| name.eq_ignore_ascii_case(code)))
        .map(|c| format!("`{c}`"))
        .collect();
    if !bare.is_empty() {
        return format!("; did you mean {}?", bare.join(" or "));
    }
    let family_names = TABLES.iter().map(|(name, _)| *name).filter(|_| families);
    crate::util::did_you_mean(code, family_names.chain(all_rules().map(|r| r.code)))
        .map(|s| format!("; did you mean `{s}`?"))
        .unwrap_or_default()
}

/// Codes that moved to another family, old → new: configs, suppressions and `explain` keep
/// working with the old one.
pub const RENAMED: &[(&str, &str)] = &[("lastlight/SkillFrontmatter", "stagelint/SkillFrontmatter")];

/// The rule for `code`, or for an alias of it (`steps/R-A6`), or for its old name. Every
/// finding asks (for its default severity and its config level), so it is a map lookup.
pub fn rule(code: &str) -> Option<&'static RuleMeta> {
    static BY_CODE: std::sync::OnceLock<std::collections::HashMap<String, &'static RuleMeta>> =
        std::sync::OnceLock::new();
    let by_code = BY_CODE.get_or_init(|| {
        let mut map = std::collections::HashMap::new();
        // Aliases and old names first, so a real code always wins over them.
        for rule in all_rules() {
            for alias in rule.aliases {
                map.insert(format!("{}/{alias}", rule.family()), rule);
            }
        }
        for (old, new) in RENAMED {
            if let Some(rule) = all_rules().find(|r| r.code == *new) {
                map.insert(old.to_string(), rule);
            }
        }
        for rule in all_rules() {
            map.insert(rule.code.to_string(), rule);
        }
        map
    });
    by_code.get(code).copied()
}

pub fn is_family(name: &str) -> bool {
    TABLES.iter().any(|(family, _)| *family == name)
}

/// The declared severity of `code` (`Error` for a code no family declares, which a test forbids).
pub fn default_severity(code: &str) -> Severity {
    rule(code).map_or(Severity::Error, |rule| rule.severity)
}
