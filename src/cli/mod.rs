//! The binary's commands that need more than a few lines (the library does the work; these
//! parse options, print and pick the exit code).

pub mod check;
pub mod explain;

use std::io::IsTerminal;

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
