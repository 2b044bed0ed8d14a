//! The one diagnostic type, severities, fixes and suppressions.

pub mod baseline_file;
pub(crate) mod suppress;

use serde::Serialize;

use crate::source::Span;

pub use crate::registry::Severity;

/// A secondary location: another file or place the finding involves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Related {
    /// Index of the file in the analysis' file table (`None` = the diagnostic's own file).
    pub file: Option<FileId>,
    pub span: Span,
    pub message: String,
}

/// Identifies a file inside one analysis run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// One text replacement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub span: Span,
    pub replacement: String,
}

/// Whether a fix may be applied without review.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Applicability {
    Safe,
    Unsafe,
}

/// A set of edits, with a title saying what it does. Each edit names its file: usually the
/// diagnostic's own, sometimes another (a schema's enum for a finding on a registry), sometimes
/// several (a stage id kebab-cased together with its uses in other files).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub title: String,
    pub applicability: Applicability,
    pub edits: Vec<(FileId, Edit)>,
    /// A did-you-mean: each edit replaces what was written with a guess at what was meant.
    /// `check` makes it safe when the guess differs only in case and separators
    /// ([`only_case_or_separators`]).
    pub did_you_mean: bool,
}

impl Fix {
    /// The files the edits touch, each once, in the order first met.
    pub fn files(&self) -> Vec<FileId> {
        let mut out: Vec<FileId> = Vec::new();
        for (file, _) in &self.edits {
            if !out.contains(file) {
                out.push(*file);
            }
        }
        out
    }
}

pub use crate::util::only_case_or_separators;

/// One finding. `span` is the primary location in `file`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: &'static str,
    pub severity: Severity,
    pub file: FileId,
    pub span: Span,
    pub message: String,
    pub related: Vec<Related>,
    pub help: Option<String>,
    pub fix: Option<Fix>,
    /// In the baseline of its file's config (`check` marks it): SARIF reports it as suppressed,
    /// the language server as a hint (or not at all), every other output leaves it out.
    pub baselined: bool,
}

impl Diagnostic {
    /// A diagnostic at the rule's default severity; the collector remaps it from config later.
    pub fn new(code: &'static str, file: FileId, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            severity: crate::registry::default_severity(code),
            file,
            span,
            message: message.into(),
            related: Vec::new(),
            help: None,
            fix: None,
            baselined: false,
        }
    }

    pub fn with_related(mut self, file: FileId, span: Span, message: impl Into<String>) -> Diagnostic {
        self.related.push(Related { file: Some(file), span, message: message.into() });
        self
    }

    /// For rules whose findings differ in weight (climpt grades some checks per case).
    pub fn with_severity(mut self, severity: Severity) -> Diagnostic {
        self.severity = severity;
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn with_fix(self, title: impl Into<String>, applicability: Applicability, edits: Vec<Edit>) -> Diagnostic {
        let file = self.file;
        self.with_fix_in(file, title, applicability, edits)
    }

    /// A fix whose edits apply to another file than the diagnostic's.
    pub fn with_fix_in(
        mut self,
        file: FileId,
        title: impl Into<String>,
        applicability: Applicability,
        edits: Vec<Edit>,
    ) -> Diagnostic {
        let edits = edits.into_iter().map(|edit| (file, edit)).collect();
        self.fix = Some(Fix { title: title.into(), applicability, edits, did_you_mean: false });
        self
    }

    /// Offers replacing `span` with a did-you-mean `suggestion`, when there is one.
    pub fn with_suggestion(self, span: Span, suggestion: Option<&str>) -> Diagnostic {
        match suggestion {
            Some(s) => self.with_did_you_mean(span, s.to_string(), s),
            None => self,
        }
    }

    /// A did-you-mean fix from a [`Guess`](crate::util::Guess): a toss-up between names that
    /// differ only in case and separators stays unsafe (`check` does not promote it).
    pub fn with_guess(self, span: Span, replacement: String, guess: &crate::util::Guess) -> Diagnostic {
        match guess {
            crate::util::Guess::One(name) => self.with_did_you_mean(span, replacement, name),
            crate::util::Guess::Either(_) => self.with_fix(
                format!("Replace with `{}`", guess.first()),
                Applicability::Unsafe,
                vec![Edit { span, replacement }],
            ),
        }
    }

    /// A did-you-mean fix: `span` (in the diagnostic's file) becomes `replacement`, which
    /// writes `suggestion` (quoted, say). Unsafe, as the guess may be wrong and a rename can
    /// change behaviour, unless `check` finds it differs only in case and separators.
    pub fn with_did_you_mean(self, span: Span, replacement: String, suggestion: &str) -> Diagnostic {
        let mut d = self.with_fix(
            format!("Replace with `{suggestion}`"),
            Applicability::Unsafe,
            vec![Edit { span, replacement }],
        );
        if let Some(fix) = &mut d.fix {
            fix.did_you_mean = true;
        }
        d
    }

    /// Makes a did-you-mean fix safe when every edit only changes case or separators of the
    /// text it replaces in `text_of(file)`.
    pub fn settle_did_you_mean<'t>(&mut self, text_of: impl Fn(FileId) -> &'t str) {
        let Some(fix) = &mut self.fix else { return };
        if !fix.did_you_mean || fix.applicability == Applicability::Safe {
            return;
        }
        let harmless = fix.edits.iter().all(|(file, edit)| {
            text_of(*file)
                .get(edit.span.start..edit.span.end)
                .is_some_and(|written| only_case_or_separators(written, &edit.replacement))
        });
        if harmless {
            fix.applicability = Applicability::Safe;
        }
    }

    /// The family part of the code (`sm` for `sm/UnknownTool`).
    pub fn family(&self) -> &'static str {
        crate::registry::family_of(self.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_and_separator_only_guesses() {
        for (written, meant) in [
            ("Webfetch", "WebFetch"),
            ("turncap", "turnCap"),
            ("retry_later", "retry-later"),
            ("retrylater", "retry-later"),
            ("\"Webfetch\"", "\"WebFetch\""),
        ] {
            assert!(only_case_or_separators(written, meant), "{written} -> {meant}");
        }
        for (written, meant) in [("Grpe", "Grep"), ("plan", "plan"), ("exec", "execute"), ("", "-"), ("a-b", "ab-c")] {
            assert!(!only_case_or_separators(written, meant), "{written} -> {meant}");
        }
    }
}
