//! `stagelint dry-run --all [DIR]`: every cassette under the directory replayed, a line per
//! cassette and a total, in the formats CI systems read; the exit code as `check` gives it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use stagelint::config::Config;
use stagelint::diagnostic::FileId;
use stagelint::diagnostic::Severity;
use stagelint::render;
use stagelint::runtime::all;
use stagelint::workspace::discover::{ConfigCache, absolute, discover};
use stagelint::workspace::{FileKind, Workspace};

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

pub fn run(paths: &[PathBuf], config: Option<&Path>, args: Args) -> Result<ExitCode, Failure> {
    if let Some(missing) = paths.iter().find(|p| !p.exists()) {
        return Err(format!("{}: no such file or directory", missing.display()).into());
    }
    if args.coverage && !matches!(args.format, Format::Full | Format::Json) {
        return Err("--coverage is printed with --format full or json".into());
    }
    let forced = config.map(Config::load).transpose().map_err(|e| e.to_string())?;
    // As `check`: a config that cannot be used is a finding on itself, and the cassettes it
    // governs are left out while the rest are replayed.
    let mut configs = ConfigCache::new(forced).tolerant();
    let (workspace, cassettes) = cassettes(paths, &mut configs)?;
    let options = stagelint::runtime::Options { strict: args.strict, explain_init: true };
    let runs = all::replay(&workspace, &cassettes, options);
    let totals = all::totals(&runs);
    let broken = all::config_findings(&workspace);
    let mut findings = broken.clone();
    findings.extend(all::findings(&workspace, &runs));
    let coverage = args.coverage.then(|| all::coverage(&workspace, &runs));
    let mut out = Vec::new();
    let rendered = match args.format {
        Format::Full => render::sweep::full(&mut out, &workspace, &runs, &findings, &totals, args.color.for_stdout())
            .and_then(|()| coverage.as_ref().map_or(Ok(()), |c| render::sweep::coverage_text(&mut out, &workspace, c))),
        Format::Json => render::sweep::json(&mut out, &workspace, &runs, &broken, &totals, coverage.as_deref()),
        // No release notes: they are `check`'s, and most are about files no cassette replays.
        Format::Sarif => render::sarif::render(&mut out, &workspace, &findings, &[]),
        Format::Github => render::github::render(&mut out, &workspace, &findings, &[]),
        Format::Junit => render::sweep::junit(&mut out, &workspace, &runs, &broken),
    };
    rendered.map_err(|e| Failure::Output(format!("cannot render the report: {e}")))?;
    super::print(&out)?;
    let failed = findings.iter().any(|d| d.severity == Severity::Error);
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The workspace around `paths` and the cassettes to replay: every cassette under a directory,
/// and those of each file (a pre-commit hook names the changed files). The files are first read
/// with their context; when stagelint reads one of them (a definition, a cassette), the
/// directories of those files and their context (a stage's machine, a climpt prompt's agent)
/// are then read whole, so that the cassettes that replay them are found, while other files (a
/// README) cost nothing.
fn cassettes(paths: &[PathBuf], configs: &mut ConfigCache) -> Result<(Workspace, Vec<FileId>), String> {
    let (files, dirs): (Vec<PathBuf>, Vec<PathBuf>) = paths.iter().map(|p| absolute(p)).partition(|p| p.is_file());
    let mut roots = dirs.clone();
    if !files.is_empty() {
        let named = discover(&files, configs).map_err(|e| e.to_string())?;
        // The directories of the named files stagelint reads and of their context (a stage's
        // machine, a climpt prompt's agent), where the cassettes that replay them are.
        if files.iter().any(|f| named.file_at(f).is_some_and(|file| file.reported)) {
            roots.extend(named.files().iter().filter_map(|f| f.path.parent().map(Path::to_path_buf)));
            // A skill is read by the workflows below its base, wherever they are.
            let skills = named.files().iter().filter(|f| f.kind == FileKind::Skill);
            roots.extend(
                skills.filter_map(|f| stagelint::workspace::lastlight::skill_scope(&f.path).map(Path::to_path_buf)),
            );
        }
    }
    roots.sort();
    roots.dedup();
    // A directory under another one is read with it.
    let mut kept: Vec<PathBuf> = Vec::with_capacity(roots.len());
    for root in roots {
        if kept.last().is_none_or(|last| !root.starts_with(last)) {
            kept.push(root);
        }
    }
    let roots = kept;
    if roots.is_empty() {
        return Ok((Workspace::new(), Vec::new()));
    }
    let workspace = discover(&roots, configs).map_err(|e| e.to_string())?;
    let under_dirs = stagelint::runtime::cassettes(&workspace).filter(|c| dirs.iter().any(|d| c.path.starts_with(d)));
    let mut chosen: Vec<FileId> = under_dirs.map(|c| c.id).collect();
    let changed: Vec<FileId> = files.iter().filter_map(|f| workspace.file_at(f)).map(|f| f.id).collect();
    chosen.extend(all::cassettes_of(&workspace, &changed));
    Ok((workspace, chosen))
}
