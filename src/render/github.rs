//! GitHub Actions workflow commands: one `::error`, `::warning` or `::notice` annotation per
//! finding, with 1-based lines and columns (in characters) and GitHub's escaping; then a
//! `::notice` without a file for each assumption of the run (the upstream release linted for).

use std::io::{self, Write};

use crate::diagnostic::{Diagnostic, Severity};
use crate::families::Note;
use crate::render::range;
use crate::workspace::Workspace;

pub fn render(
    out: &mut dyn Write,
    workspace: &Workspace,
    diagnostics: &[Diagnostic],
    notes: &[Note],
) -> io::Result<()> {
    for d in diagnostics {
        let file = workspace.file(d.file);
        let (start, end) = range(file, d.span);
        let mut message = d.message.clone();
        if let Some(help) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        writeln!(
            out,
            "::{} file={},line={},col={},endLine={},endColumn={},title={}::{}",
            command(d.severity),
            escape_property(&file.display),
            start.line,
            start.column,
            end.line,
            end.column,
            escape_property(d.code),
            escape_data(&message)
        )?;
    }
    for note in notes {
        writeln!(
            out,
            "::notice title={}::{}",
            escape_property(&format!("stagelint ({})", note.family)),
            escape_data(&note.message)
        )?;
    }
    Ok(())
}

/// GitHub has three annotation levels; info and hint findings are notices.
pub fn command(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info | Severity::Hint => "notice",
    }
}

/// The message part: `%`, carriage return and line feed are percent-encoded.
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A property value: as data, plus `:` and `,`, which separate properties.
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_escapes_percent_and_line_breaks_only() {
        assert_eq!(escape_data("100% done\r\nnext: a, b"), "100%25 done%0D%0Anext: a, b");
        assert_eq!(escape_data("%0A"), "%250A", "an existing escape is escaped again");
    }

    #[test]
    fn properties_also_escape_colons_and_commas() {
        assert_eq!(escape_property("C:\\a,b%\n.md"), "C%3A\\a%2Cb%25%0A.md");
        assert_eq!(escape_property("sm/UnknownTool"), "sm/UnknownTool");
    }

    #[test]
    fn levels() {
        assert_eq!(command(Severity::Error), "error");
        assert_eq!(command(Severity::Warning), "warning");
        assert_eq!(command(Severity::Info), "notice");
        assert_eq!(command(Severity::Hint), "notice");
    }
}
