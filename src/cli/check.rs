//! `stagelint check`: discover, check, select, fix, render, and the exit code.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::ValueEnum;

use stagelint::config::Config;
use stagelint::diagnostic::{Diagnostic, Severity};
use stagelint::fix;
use stagelint::render::{self, Summary};
use stagelint::select::Selection;
use stagelint::workspace::Workspace;
use stagelint::workspace::discover::{ConfigCache, discover};

use super::Color;

#[derive(clap::Args)]
pub struct CheckArgs {
    /// Files or directories to check.
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Full)]
    format: Format,
    /// Write the report to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Use this config file for every path instead of discovering `stagelint.toml`.
    #[arg(long)]
    config: Option<PathBuf>,
    /// When to color human output (`NO_COLOR` is honoured under `auto`).
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
    /// Report only these codes or families (comma-separated, repeatable; after the config).
    #[arg(long, value_name = "CODES")]
    select: Vec<String>,
    /// Do not report these codes or families (comma-separated, repeatable; after the config).
    #[arg(long, value_name = "CODES")]
    ignore: Vec<String>,
    /// Exit 0 even when errors are found (usage and config errors still exit 2).
    #[arg(long)]
    exit_zero: bool,
    /// Apply the safe fixes, write the files back, and report what remains.
    #[arg(long)]
    fix: bool,
    /// Print a unified diff of what `--fix` would change, without writing (exit 1 if any).
    #[arg(long)]
    diff: bool,
    /// With `--fix` or `--diff`, apply unsafe fixes too (review the result).
    #[arg(long)]
    unsafe_fixes: bool,
    /// Print one line per code (count, code, fix marker, summary) instead of the findings.
    #[arg(long)]
    statistics: bool,
    /// After the report, list the fixes applied (`--fix`, `--diff`) or available, per file.
    #[arg(long)]
    show_fixes: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Full,
    Concise,
    Json,
    Sarif,
    Github,
}

pub fn run(args: CheckArgs) -> Result<ExitCode, String> {
    let forced = match &args.config {
        Some(path) => Some(Config::load(path).map_err(|e| e.to_string())?),
        None => None,
    };
    let selection = Selection::parse(&args.select, &args.ignore)?;
    if args.statistics && matches!(args.format, Format::Sarif | Format::Github) {
        return Err("--statistics prints text or JSON: use it with --format full, concise or json".into());
    }
    let paths = if args.paths.is_empty() { vec![PathBuf::from(".")] } else { args.paths.clone() };
    for path in &paths {
        if !path.exists() {
            return Err(format!("{}: no such file or directory", path.display()));
        }
    }
    let mut configs = ConfigCache::new(forced);
    if args.fix || args.diff {
        let select = |diagnostics| selection.apply(diagnostics);
        let fixed = fix::fix_paths(&paths, &mut configs, &select, args.unsafe_fixes).map_err(|e| e.to_string())?;
        let files = fixed.changed.len();
        let mut err = io::stderr().lock();
        if args.diff {
            let diff: String = fixed.changed.iter().map(fix::unified_diff).collect();
            emit(&args, diff.as_bytes())?;
            let _ = writeln!(err, "stagelint: would apply {} fix(es) to {files} file(s)", fixed.applied);
            if args.show_fixes {
                let _ = write!(err, "{}", fix::applied_list(&fixed.fixes, true));
            }
            unsafe_hint(&mut err, &args, &fixed.diagnostics);
            let changes = !fixed.changed.is_empty() && !args.exit_zero;
            return Ok(if changes { ExitCode::from(1) } else { ExitCode::SUCCESS });
        }
        fix::write_back(&fixed.changed)?;
        if fixed.applied > 0 {
            let _ = writeln!(err, "stagelint: applied {} fix(es) to {files} file(s)", fixed.applied);
        }
        unsafe_hint(&mut err, &args, &fixed.diagnostics);
        drop(err);
        return report(&args, &fixed.workspace, &fixed.diagnostics, Some(&fixed.fixes));
    }
    let workspace = discover(&paths, &mut configs).map_err(|e| e.to_string())?;
    let diagnostics = selection.apply(stagelint::check::check(&workspace));
    report(&args, &workspace, &diagnostics, None)
}

/// After `--fix`/`--diff` without `--unsafe-fixes`: how many findings left have a fix that
/// only `--unsafe-fixes` applies (most did-you-mean fixes are unsafe), so none is a surprise.
fn unsafe_hint(err: &mut impl Write, args: &CheckArgs, diagnostics: &[Diagnostic]) {
    if args.unsafe_fixes {
        return;
    }
    let unsafe_fixes = diagnostics
        .iter()
        .filter(|d| d.fix.as_ref().is_some_and(|f| f.applicability == stagelint::diagnostic::Applicability::Unsafe))
        .count();
    if unsafe_fixes > 0 {
        let _ = writeln!(
            err,
            "stagelint: {unsafe_fixes} more fix(es) available with --unsafe-fixes (review them with --diff --unsafe-fixes)"
        );
    }
}

/// Renders the findings in the chosen format (or their `--statistics`), then what
/// `--show-fixes` lists (`applied` after `--fix`), and maps the findings to the exit code.
fn report(
    args: &CheckArgs,
    workspace: &Workspace,
    diagnostics: &[Diagnostic],
    applied: Option<&[fix::Applied]>,
) -> Result<ExitCode, String> {
    let summary = Summary::new(workspace, diagnostics);
    let mut out = Vec::new();
    let human = matches!(args.format, Format::Full | Format::Concise);
    let rendered = match args.format {
        Format::Json if args.statistics => render::statistics::render_json(&mut out, diagnostics),
        _ if args.statistics => render::statistics::render(&mut out, diagnostics)
            .and_then(|()| closing_lines(&mut out, workspace, &summary)),
        Format::Json => render::json::render(&mut out, workspace, diagnostics),
        Format::Sarif => render::sarif::render(&mut out, workspace, diagnostics),
        Format::Github => render::github::render(&mut out, workspace, diagnostics),
        Format::Concise => render::concise::render(&mut out, workspace, diagnostics)
            .and_then(|()| closing_lines(&mut out, workspace, &summary)),
        Format::Full => {
            let color = if args.output.is_some() { args.color.enabled(false) } else { args.color.for_stdout() };
            render::full::render(&mut out, workspace, diagnostics, color)
                .and_then(|()| closing_lines(&mut out, workspace, &summary))
        }
    };
    rendered.map_err(|e| format!("cannot render the report: {e}"))?;
    if args.show_fixes {
        // After the report for people; on standard error when the report is for machines.
        let mut list = Vec::new();
        match applied {
            Some(fixes) => list.extend_from_slice(fix::applied_list(fixes, false).as_bytes()),
            None => render::statistics::available_fixes(&mut list, workspace, diagnostics)
                .map_err(|e| format!("cannot render the fixes: {e}"))?,
        }
        if human {
            out.extend_from_slice(&list);
        } else {
            let _ = io::stderr().lock().write_all(&list);
        }
    }
    emit(args, &out)?;
    let failed = diagnostics.iter().any(|d| d.severity == Severity::Error);
    Ok(if failed && !args.exit_zero { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The notes about assumptions the run made (the Last Light engine), then the summary.
fn closing_lines(out: &mut Vec<u8>, workspace: &Workspace, summary: &Summary) -> io::Result<()> {
    for note in stagelint::families::lastlight::engine_notes(workspace) {
        writeln!(out, "note: {note}")?;
    }
    writeln!(out, "{}", summary.line())
}

/// Writes `bytes` to `--output` or standard output (a closed pipe is not an error).
fn emit(args: &CheckArgs, bytes: &[u8]) -> Result<(), String> {
    match &args.output {
        Some(path) => std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display())),
        None => match io::stdout().lock().write_all(bytes) {
            Err(error) if error.kind() != io::ErrorKind::BrokenPipe => Err(format!("cannot write output: {error}")),
            _ => Ok(()),
        },
    }
}
