//! The one diagnostic type, severities, fixes and suppressions.

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
        self.fix = Some(Fix { title: title.into(), applicability, edits });
        self
    }

    /// Offers replacing `span` with a did-you-mean `suggestion`, when there is
    /// one. Unsafe, since the guess may be wrong, unless the two differ only in case and
    /// separators (`util::same_spelling`): then it is the same word.
    pub fn with_suggestion(self, span: Span, suggestion: Option<&str>) -> Diagnostic {
        self.with_suggestion_for(span, None, suggestion)
    }

    /// [`Diagnostic::with_suggestion`], knowing the text replaced, which makes a respelling safe.
    pub fn with_suggestion_for(self, span: Span, word: Option<&str>, suggestion: Option<&str>) -> Diagnostic {
        match suggestion {
            Some(s) => {
                let safe = word.is_some_and(|word| crate::util::same_spelling(word, s));
                let applicability = if safe { Applicability::Safe } else { Applicability::Unsafe };
                self.with_fix(
                    format!("Replace with `{s}`"),
                    applicability,
                    vec![Edit { span, replacement: s.to_string() }],
                )
            }
            None => self,
        }
    }

    /// The family part of the code (`sm` for `sm/UnknownTool`).
    pub fn family(&self) -> &'static str {
        crate::registry::family_of(self.code)
    }
}
