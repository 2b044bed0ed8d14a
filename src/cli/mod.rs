//! The binary's commands that need more than a few lines (the library does the work; these
//! parse options, print and pick the exit code).

pub mod check;
pub mod explain;

use std::io::{IsTerminal, Read};

use clap::ValueEnum;

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
