//! The binary's commands that need more than a few lines (the library does the work; these
//! parse options, print and pick the exit code).

pub mod check;
pub mod dry_run_all;
pub mod explain;
#[cfg(feature = "mcp")]
pub mod mcp;

use std::io::{self, IsTerminal, Read, Write};

use clap::ValueEnum;

/// Why a command stopped before its own exit code: every command maps its failures to one of
/// these, and `main` to the exit code and message.
#[derive(Debug)]
pub enum Failure {
    /// A usage or configuration error: the message on standard error, exit code 2.
    Usage(String),
    /// The output could not be written (a full disk): the message on standard error, exit 1.
    Output(String),
    /// The reader of standard output went away (`stagelint rules | head`): nothing more is
    /// written and the command ends quietly with exit code 0, as ruff and ripgrep do.
    ClosedPipe,
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure::Usage(message)
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Failure {
        Failure::Usage(message.to_string())
    }
}

impl Failure {
    /// A failed write to standard output.
    pub fn writing(error: &io::Error) -> Failure {
        match error.kind() {
            io::ErrorKind::BrokenPipe => Failure::ClosedPipe,
            _ => Failure::Output(format!("cannot write output: {error}")),
        }
    }

    /// A failed write to the file `path` a command was told to write.
    pub fn writing_file(path: &std::path::Path, error: &io::Error) -> Failure {
        Failure::Output(format!("cannot write {}: {error}", path.display()))
    }
}

/// Writes `bytes` to standard output and flushes it, so that a full disk is seen here and not
/// lost when the process exits.
pub fn print(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = io::stdout().lock();
    out.write_all(bytes).and_then(|()| out.flush()).map_err(|e| Failure::writing(&e))
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Color {
    Auto,
    Always,
    Never,
}

impl Color {
    /// Whether to color output going to standard output (`to_terminal`) or elsewhere: `auto`
    /// colors a terminal unless `NO_COLOR` is set to a non-empty value.
    pub fn enabled(self, to_terminal: bool) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => to_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    /// [`Color::enabled`] for standard output.
    pub fn for_stdout(self) -> bool {
        self.enabled(std::io::stdout().is_terminal())
    }
}

/// Standard input as text, read up to the 16 MiB any file may have.
pub fn read_stdin() -> Result<String, String> {
    let limit = stagelint::source::read::MAX_FILE_BYTES;
    let mut text = String::new();
    std::io::stdin()
        .take(limit + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    if text.len() as u64 > limit {
        return Err("standard input is larger than the 16 MiB stagelint reads".into());
    }
    Ok(text)
}
