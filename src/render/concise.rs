//! One line per finding: `path:line:col: severity[code] message`.

use std::io::{self, Write};

use crate::diagnostic::Diagnostic;
use crate::render::range;
use crate::workspace::Workspace;

pub fn render(out: &mut dyn Write, workspace: &Workspace, diagnostics: &[Diagnostic]) -> io::Result<()> {
    for d in diagnostics {
        let file = workspace.file(d.file);
        let (start, _) = range(file, d.span);
        writeln!(
            out,
            "{}:{}:{}: {}[{}] {}",
            file.display,
            start.line,
            start.column,
            d.severity.as_str(),
            d.code,
            d.message
        )?;
    }
    Ok(())
}
