//! `stagelint dry-run --all [DIR]`: every cassette under the directory replayed, a line per
//! cassette and a total, in the formats CI systems read; the exit code as `check` gives it.

use std::path::Path;
use std::process::ExitCode;

use stagelint::config::Config;
use stagelint::diagnostic::Severity;
use stagelint::render;
use stagelint::runtime::all;
use stagelint::workspace::discover::{ConfigCache, discover};

use super::{Color, Failure};

#[derive(Clone, Copy)]
pub enum Format {
    Full,
    Json,
    Sarif,
    Github,
    Junit,
}

pub struct Args {
    pub format: Format,
    pub strict: bool,
    pub coverage: bool,
    pub color: Color,
}

pub fn run(dir: &Path, config: Option<&Path>, args: Args) -> Result<ExitCode, Failure> {
    if !dir.is_dir() {
        return Err(format!("{}: --all replays the cassettes under a directory; this is none", dir.display()).into());
    }
    if args.coverage && !matches!(args.format, Format::Full | Format::Json) {
        return Err("--coverage is printed with --format full or json".into());
    }
    let forced = config.map(Config::load).transpose().map_err(|e| e.to_string())?;
    let mut configs = ConfigCache::new(forced);
    let workspace = discover(&[dir.to_path_buf()], &mut configs).map_err(|e| e.to_string())?;
    let options = stagelint::runtime::Options { strict: args.strict, explain_init: true };
    let runs = all::replay_all(&workspace, options);
    let totals = all::totals(&runs);
    let findings = all::findings(&workspace, &runs);
    let coverage = args.coverage.then(|| all::coverage(&workspace, &runs));
    let mut out = Vec::new();
    let rendered = match args.format {
        Format::Full => render::sweep::full(&mut out, &workspace, &runs, &findings, &totals, args.color.for_stdout())
            .and_then(|()| coverage.as_ref().map_or(Ok(()), |c| render::sweep::coverage_text(&mut out, &workspace, c))),
        Format::Json => render::sweep::json(&mut out, &workspace, &runs, &totals, coverage.as_deref()),
        Format::Sarif => render::sarif::render(&mut out, &workspace, &findings),
        Format::Github => render::github::render(&mut out, &workspace, &findings),
        Format::Junit => render::sweep::junit(&mut out, &workspace, &runs),
    };
    rendered.map_err(|e| Failure::Output(format!("cannot render the report: {e}")))?;
    super::print(&out)?;
    let failed = findings.iter().any(|d| d.severity == Severity::Error);
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
