//! Rule families: each declares its rules once and checks the workspace files it owns.

pub mod cassette;
pub mod lastlight;
pub mod sm;
pub mod stagelint;
pub mod steps;

use std::path::PathBuf;

use crate::diagnostic::{Diagnostic, FileId, Severity};
use crate::ide;
use crate::source::Span;
use crate::workspace::Workspace;

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
        self.code.split_once('/').map_or(self.code, |(family, _)| family)
    }
}

/// A rule family. A family added later implements this and is listed in [`FAMILIES`]; the CLI
/// (and the editor features built on the same analysis) pick it up from there.
pub trait Family: Sync {
    fn name(&self) -> &'static str;
    fn rules(&self) -> &'static [RuleMeta];
    /// Runs every rule of the family over the files it owns. Rules are pure: no IO, no config
    /// filtering (the collector in `check` applies `[rules]` and suppressions).
    fn check(&self, workspace: &Workspace, out: &mut Vec<Diagnostic>);

    // Editor features (see `crate::ide`). Each returns nothing for files the family does not
    // own, so the server can ask every family.

    fn completions(&self, _workspace: &Workspace, _at: ide::Cursor) -> Vec<ide::CompletionItem> {
        Vec::new()
    }

    fn hover(&self, _workspace: &Workspace, _at: ide::Cursor) -> Option<ide::HoverInfo> {
        None
    }

    fn definitions(&self, _workspace: &Workspace, _at: ide::Cursor) -> Vec<ide::Target> {
        Vec::new()
    }

    fn references(&self, _workspace: &Workspace, _at: ide::Cursor) -> Vec<ide::Target> {
        Vec::new()
    }

    /// `None` when the cursor is not on something of this family; `Some(Err)` to refuse.
    fn prepare_rename(&self, _workspace: &Workspace, _at: ide::Cursor) -> Option<Result<Span, String>> {
        None
    }

    fn rename(&self, _workspace: &Workspace, _at: ide::Cursor, _new_name: &str) -> Option<ide::RenameResult> {
        None
    }

    /// Files a rename to `new_name` renames too (a stage's `<id>.cassette.yaml`), with their new
    /// path; clients that cannot rename files keep the old names.
    fn renamed_files(&self, _workspace: &Workspace, _at: ide::Cursor, _new_name: &str) -> Vec<(FileId, PathBuf)> {
        Vec::new()
    }

    fn symbols(&self, _workspace: &Workspace, _file: FileId) -> Vec<ide::Symbol> {
        Vec::new()
    }

    fn links(&self, _workspace: &Workspace, _file: FileId) -> Vec<ide::Link> {
        Vec::new()
    }

    fn folds(&self, _workspace: &Workspace, _file: FileId) -> Vec<ide::Fold> {
        Vec::new()
    }
}

/// Every family, in a stable order.
pub static FAMILIES: &[&dyn Family] =
    &[&stagelint::Stagelint, &sm::Sm, &steps::Steps, &lastlight::Lastlight, &cassette::Cassettes];

/// Declares a family's rule table from `Name => Severity` pairs; each rule's explanation is
/// read from `docs/<Name>.md` next to the invoking module. A code that is not an identifier
/// (climpt's `SR-VALID-003`) is written `SR_VALID_003 = "SR-VALID-003" => Error`.
macro_rules! declare_rules {
    ($family:literal; $( $name:ident $(= $code:literal)? => $severity:ident $(, fix = $fix:literal)? $(, aliases = [$($alias:literal),*])? ; )*) => {
        pub static RULES: &[$crate::families::RuleMeta] = &[
            $( $crate::families::RuleMeta {
                code: declare_rules!(@code $family, $name, [$($code)?]),
                severity: $crate::diagnostic::Severity::$severity,
                doc: declare_rules!(@doc $name, [$($code)?]),
                fixable: declare_rules!(@fix $($fix)?),
                aliases: &[$($($alias),*)?],
            }, )*
        ];
        $( #[allow(non_upper_case_globals, dead_code)]
           pub const $name: &str = declare_rules!(@code $family, $name, [$($code)?]); )*
    };
    (@code $family:literal, $name:ident, []) => { concat!($family, "/", stringify!($name)) };
    (@code $family:literal, $name:ident, [$code:literal]) => { concat!($family, "/", $code) };
    (@doc $name:ident, []) => { include_str!(concat!("docs/", stringify!($name), ".md")) };
    (@doc $name:ident, [$code:literal]) => { include_str!(concat!("docs/", $code, ".md")) };
    (@fix) => { false };
    (@fix $fix:literal) => { $fix };
}
pub(crate) use declare_rules;

/// Every rule of every family.
pub fn all_rules() -> impl Iterator<Item = &'static RuleMeta> {
    FAMILIES.iter().flat_map(|family| family.rules().iter())
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
    let family_names = FAMILIES.iter().map(|f| f.name()).filter(|_| families);
    crate::util::did_you_mean(code, family_names.chain(all_rules().map(|r| r.code)))
        .map(|s| format!("; did you mean `{s}`?"))
        .unwrap_or_default()
}

/// Codes that moved to another family, old → new: configs, suppressions and `explain` keep
/// working with the old one.
pub const RENAMED: &[(&str, &str)] = &[("lastlight/SkillFrontmatter", "stagelint/SkillFrontmatter")];

/// The rule for `code`, or for an alias of it (`steps/R-A6`), or for its old name.
pub fn rule(code: &str) -> Option<&'static RuleMeta> {
    all_rules()
        .find(|rule| rule.code == code)
        .or_else(|| {
            let (family, name) = code.split_once('/')?;
            all_rules().find(|rule| rule.family() == family && rule.aliases.contains(&name))
        })
        .or_else(|| RENAMED.iter().find(|(old, _)| *old == code).and_then(|(_, new)| rule(new)))
}

pub fn is_family(name: &str) -> bool {
    FAMILIES.iter().any(|family| family.name() == name)
}

/// The declared severity of `code` (`Error` for a code no family declares, which a test forbids).
pub fn default_severity(code: &str) -> Severity {
    rule(code).map_or(Severity::Error, |rule| rule.severity)
}
