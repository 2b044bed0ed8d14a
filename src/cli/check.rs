//! `stagelint check`: discover, check, select, fix, render, and the exit code.

use std::collections::HashMap;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::ValueEnum;

use stagelint::config::Config;
use stagelint::diagnostic::{Diagnostic, Severity};
use stagelint::fix;
use stagelint::render::{self, Summary};
use stagelint::select::Selection;
use stagelint::workspace::Workspace;
use stagelint::workspace::discover::{ConfigCache, ExcludeOptions, absolute, discover_with_overlay};

use super::{Color, Failure};

#[derive(clap::Args)]
pub struct CheckArgs {
    /// Files or directories to check; `-` reads one file's text from standard input (see
    /// --stdin-filename).
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, visible_alias = "output-format", value_enum, default_value_t = Format::Full)]
    format: Format,
    /// Write the report to this file instead of standard output (a format name such as `json`
    /// is refused: that is `--format`).
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
    /// Read the text of this file from standard input (for editors: with `-` as the path, or
    /// alone) and check it with its state machine, agent or workflows from disk; findings name
    /// it. With `--fix`, the fixed text goes to standard output and the report to standard error.
    #[arg(long, value_name = "PATH")]
    stdin_filename: Option<PathBuf>,
    /// Print one line per code (count, code, fix marker, summary) instead of the findings.
    #[arg(long)]
    statistics: bool,
    /// Leave out files and directories matching these patterns, instead of every config's
    /// `[files] exclude` (comma-separated, repeatable; `name` anywhere, `dir/name` from the
    /// current directory).
    #[arg(long, value_name = "PATTERNS", value_delimiter = ',')]
    exclude: Option<Vec<String>>,
    /// Leave out these too, besides what the configs exclude (comma-separated, repeatable).
    #[arg(long, value_name = "PATTERNS", value_delimiter = ',')]
    extend_exclude: Vec<String>,
    /// Apply the excludes to paths named on the command line too (as pre-commit names files).
    #[arg(long)]
    force_exclude: bool,
    /// After the report, list the fixes applied (`--fix`, `--diff`) or available, per file.
    #[arg(long)]
    show_fixes: bool,
    /// Report only findings that are not in this baseline file (instead of the `baseline` the
    /// config names).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Record the current findings in a baseline file (`--write-baseline=FILE`; default: the
    /// config's `baseline`, else `stagelint-baseline.json`) and exit 0; entries of files not
    /// checked in this run are kept.
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true)]
    write_baseline: Option<Option<PathBuf>>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Full,
    Concise,
    Json,
    Sarif,
    Github,
}

pub fn run(args: CheckArgs) -> Result<ExitCode, Failure> {
    output_is_no_format(args.output.as_deref())?;
    let stdin = stdin_file(&args)?;
    let forced = match &args.config {
        Some(path) => Some(Config::load(path).map_err(|e| e.to_string())?),
        None => None,
    };
    let selection = Selection::parse(&args.select, &args.ignore)?;
    if args.statistics && matches!(args.format, Format::Sarif | Format::Github) {
        return Err("--statistics prints text or JSON: use it with --format full, concise or json".into());
    }
    let paths = match &stdin {
        Some(stdin) => vec![stdin.path.clone()],
        None if args.paths.is_empty() => vec![PathBuf::from(".")],
        None => args.paths.clone(),
    };
    if stdin.is_none() {
        for path in &paths {
            if !path.exists() {
                return Err(format!("{}: no such file or directory", path.display()).into());
            }
        }
    }
    let overlay: HashMap<PathBuf, String> = stdin.iter().map(|s| (s.path.clone(), s.text.clone())).collect();
    let excludes = ExcludeOptions {
        exclude: args.exclude.clone(),
        extend_exclude: args.extend_exclude.clone(),
        force_exclude: args.force_exclude,
    };
    // A config that cannot be used is a finding on itself (`stagelint/InvalidConfig`); the
    // files it governs are left out and the rest is checked.
    let mut configs = ConfigCache::new(forced).with_overlay(&overlay).with_excludes(&excludes)?.tolerant();
    if let Some(baseline) = &args.baseline {
        if !baseline.is_file() {
            return Err(format!(
                "--baseline {}: no such file (write one with `stagelint check --write-baseline={}`)",
                baseline.display(),
                baseline.display()
            )
            .into());
        }
        configs = configs.with_baseline(baseline.clone());
    }
    if let Some(file) = &args.write_baseline {
        return write_baseline(&args, file.as_deref(), &paths, configs);
    }
    if args.fix || args.diff {
        let select = |diagnostics: Vec<Diagnostic>| {
            // What a baseline accepts is not fixed either (it is counted, not reported).
            let reported = diagnostics.into_iter().map(|d| if d.baselined { Diagnostic { fix: None, ..d } } else { d });
            let selected = selection.apply(reported.collect());
            // Standard input is the one file written back (to standard output): a fix that
            // would also edit another file is not applied.
            if stdin.is_none() { selected } else { selected.into_iter().map(only_own_file_fixes).collect() }
        };
        let fixed = fix::fix_paths(&paths, &mut configs, &select, args.unsafe_fixes, overlay.clone())
            .map_err(|e| e.to_string())?;
        let files = fixed.changed.len();
        let mut err = io::stderr().lock();
        if args.diff {
            let diff: String = fixed.changed.iter().map(fix::unified_diff).collect();
            emit(&args, diff.as_bytes(), false)?;
            let _ = writeln!(err, "stagelint: would apply {} fix(es) to {files} file(s)", fixed.applied);
            if args.show_fixes {
                let _ = write!(err, "{}", fix::applied_list(&fixed.fixes, true));
            }
            unsafe_hint(&mut err, &args, &fixed.diagnostics);
            let changes = !fixed.changed.is_empty() && !args.exit_zero;
            return Ok(if changes { ExitCode::from(1) } else { ExitCode::SUCCESS });
        }
        match &stdin {
            // As ruff does: the fixed text on standard output, the report on standard error.
            Some(stdin) => {
                let after = fixed.changed.iter().find(|c| c.path == stdin.path).map_or(&stdin.text, |c| &c.after);
                super::print(after.as_bytes())?;
            }
            None => fix::write_back(&fixed.changed).map_err(Failure::Output)?,
        }
        if fixed.applied > 0 {
            let _ = writeln!(err, "stagelint: applied {} fix(es) to {files} file(s)", fixed.applied);
        }
        unsafe_hint(&mut err, &args, &fixed.diagnostics);
        drop(err);
        return report(&args, &fixed.workspace, &fixed.diagnostics, stdin.is_some(), Some(&fixed.fixes));
    }
    let workspace = discover_with_overlay(&paths, &mut configs, &overlay).map_err(|e| e.to_string())?;
    let diagnostics = selection.apply(stagelint::check::check(&workspace));
    let code = report(&args, &workspace, &diagnostics, false, None);
    // The process ends next: freeing tens of thousands of parsed files one by one would cost
    // about a tenth of a large run, and the operating system takes the memory back anyway.
    std::mem::forget((workspace, diagnostics));
    code
}

/// `--write-baseline`: checks `paths` and records every finding (none is reported) in the
/// baseline file, keeping the entries of files this run did not check.
fn write_baseline(
    args: &CheckArgs,
    file: Option<&Path>,
    paths: &[PathBuf],
    configs: ConfigCache,
) -> Result<ExitCode, Failure> {
    let conflicting = [
        (args.fix || args.diff, "--fix and --diff"),
        (
            !args.select.is_empty() || !args.ignore.is_empty(),
            "--select and --ignore (a baseline records every finding; turn rules off in `[rules]`)",
        ),
        (args.stdin_filename.is_some(), "--stdin-filename"),
        (args.statistics || args.show_fixes || args.output.is_some(), "--statistics, --show-fixes and --output"),
    ];
    if let Some((_, what)) = conflicting.iter().find(|(set, _)| *set) {
        return Err(format!("--write-baseline writes the baseline and reports nothing: it does not take {what}").into());
    }
    let mut configs = configs;
    let path = match file {
        Some(file) => absolute(file),
        // The baseline the config of the current directory names, else the default name here.
        None => {
            let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
            let config = configs.for_dir(&cwd).map_err(|e| e.to_string())?;
            config.baseline.clone().unwrap_or_else(|| cwd.join(stagelint::baseline::DEFAULT_NAME))
        }
    };
    // Read as the run's baseline, so that discovery says which files its entries name still
    // exist where this run looks (an entry of a file outside it is kept as it is).
    let mut configs = configs.with_baseline(path.clone());
    let overlay = HashMap::new();
    let workspace = discover_with_overlay(paths, &mut configs, &overlay).map_err(|e| e.to_string())?;
    // The files a broken config governs are not checked: a baseline written then would lack
    // their findings, and record the config's own.
    let broken: Vec<String> = configs.broken().map(|e| e.to_string()).collect();
    if !broken.is_empty() {
        return Err(format!(
            "{}\n--write-baseline: fix the config first (the files it governs are not checked)",
            broken.join("\n")
        )
        .into());
    }
    let diagnostics = stagelint::check::check(&workspace);
    let old = stagelint::source::read::read_text(&path).ok();
    let (text, recorded) = stagelint::baseline::record(&workspace, &diagnostics, &path, old.as_deref());
    stagelint::util::write_new(&path, text.as_bytes()).map_err(|e| Failure::writing_file(&path, &e))?;
    let cwd = std::env::current_dir().unwrap_or_default();
    let shown = path.strip_prefix(&cwd).unwrap_or(&path).display().to_string();
    let _ = writeln!(io::stderr().lock(), "stagelint: recorded {recorded} finding(s) in {shown}");
    Ok(ExitCode::SUCCESS)
}

/// Standard input standing for the file at `path` (absolute).
struct StdinFile {
    path: PathBuf,
    text: String,
}

/// `check -` or `check --stdin-filename PATH`: the text of PATH read from standard input.
fn stdin_file(args: &CheckArgs) -> Result<Option<StdinFile>, String> {
    let dash = args.paths.iter().any(|p| p.as_os_str() == "-");
    let Some(name) = &args.stdin_filename else {
        if dash {
            return Err("`-` reads a file's text from standard input; give --stdin-filename PATH, the file it stands for (its position in the project decides its config and context, and findings name it)".into());
        }
        return Ok(None);
    };
    if let Some(other) = args.paths.iter().find(|p| p.as_os_str() != "-") {
        return Err(format!(
            "--stdin-filename checks standard input alone; `{}` would be checked too (drop it, or drop --stdin-filename)",
            other.display()
        ));
    }
    if name.is_dir() {
        return Err(format!("--stdin-filename {}: a directory, not a file", name.display()));
    }
    let text = super::read_stdin()?;
    Ok(Some(StdinFile { path: absolute(name), text }))
}

/// The finding without its fix when the fix edits another file than the finding's.
fn only_own_file_fixes(mut diagnostic: Diagnostic) -> Diagnostic {
    if diagnostic.fix.as_ref().is_some_and(|fix| fix.files().iter().any(|f| *f != diagnostic.file)) {
        diagnostic.fix = None;
    }
    diagnostic
}

/// `--output json` would write the report to a file named `json`: nearly always `--format json`
/// was meant (ruff's option is `--output-format`), so a bare format name is a usage error.
fn output_is_no_format(output: Option<&Path>) -> Result<(), String> {
    let Some(name) = output.and_then(Path::to_str) else { return Ok(()) };
    let is_format =
        Format::value_variants().iter().filter_map(|f| f.to_possible_value()).any(|v| v.matches(name, true));
    if !is_format {
        return Ok(());
    }
    Err(format!(
        "--output takes the file to write the report to, and `{name}` is a format name; did you mean `--format {name}`? (to write a file of that name, give it as `./{name}`)"
    ))
}

/// After `--fix`/`--diff` without `--unsafe-fixes`: how many findings left have a fix that
/// only `--unsafe-fixes` applies (most did-you-mean fixes are unsafe), so none is a surprise.
fn unsafe_hint(err: &mut impl Write, args: &CheckArgs, diagnostics: &[Diagnostic]) {
    if args.unsafe_fixes {
        return;
    }
    let unsafe_fixes = render::with_distinct_fixes(diagnostics)
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
/// `--show-fixes` lists (`applied` after `--fix`), to standard error with `to_stderr` (when
/// standard output carries the fixed text), and maps the findings to the exit code.
fn report(
    args: &CheckArgs,
    workspace: &Workspace,
    diagnostics: &[Diagnostic],
    to_stderr: bool,
    applied: Option<&[fix::Applied]>,
) -> Result<ExitCode, Failure> {
    let summary = Summary::new(workspace, diagnostics);
    let run_notes = stagelint::check::notes(workspace);
    // Baselined findings reach SARIF (as suppressed results) and the JSON summary's count only.
    let all = diagnostics;
    let reported: Vec<Diagnostic> = diagnostics.iter().filter(|d| !d.baselined).cloned().collect();
    let diagnostics = &reported[..];
    let mut out = Vec::new();
    let human = matches!(args.format, Format::Full | Format::Concise);
    let rendered = match args.format {
        Format::Json if args.statistics => render::statistics::render_json(&mut out, diagnostics),
        _ if args.statistics => {
            render::statistics::render(&mut out, diagnostics).and_then(|()| writeln!(out, "{}", summary.line()))
        }
        Format::Json => render::json::render(&mut out, workspace, all, &run_notes),
        Format::Sarif => render::sarif::render(&mut out, workspace, all, &run_notes),
        Format::Github => render::github::render(&mut out, workspace, diagnostics, &run_notes),
        Format::Concise => {
            render::concise::render(&mut out, workspace, diagnostics).and_then(|()| writeln!(out, "{}", summary.line()))
        }
        Format::Full => {
            let color = match (&args.output, to_stderr) {
                (Some(_), _) => args.color.enabled(false),
                (None, true) => args.color.enabled(io::stderr().is_terminal()),
                (None, false) => args.color.for_stdout(),
            };
            render::full::render(&mut out, workspace, diagnostics, color)
                .and_then(|()| notes(&mut out, &run_notes))
                .and_then(|()| writeln!(out, "{}", summary.line()))
        }
    };
    rendered.map_err(|e| Failure::Output(format!("cannot render the report: {e}")))?;
    if !matches!(args.format, Format::Full) || args.statistics {
        // Where a program reads the report, a note is no line of it.
        let mut err = Vec::new();
        let _ = notes(&mut err, &run_notes);
        let _ = io::stderr().lock().write_all(&err);
    }
    if args.show_fixes {
        // After the report for people; on standard error when the report is for machines.
        let mut list = Vec::new();
        match applied {
            Some(fixes) => list.extend_from_slice(fix::applied_list(fixes, false).as_bytes()),
            None => render::statistics::available_fixes(&mut list, workspace, diagnostics)
                .map_err(|e| Failure::Output(format!("cannot render the fixes: {e}")))?,
        }
        if human {
            out.extend_from_slice(&list);
        } else {
            let _ = io::stderr().lock().write_all(&list);
        }
    }
    emit(args, &out, to_stderr)?;
    let failed = diagnostics.iter().any(|d| d.severity == Severity::Error);
    Ok(if failed && !args.exit_zero { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The notes about assumptions the run made (each family's): in the `full` report, and on
/// standard error in every other format (where JSON, SARIF and GitHub also carry them).
fn notes(out: &mut Vec<u8>, notes: &[stagelint::families::Note]) -> io::Result<()> {
    for note in notes {
        writeln!(out, "note: {}", note.message)?;
    }
    Ok(())
}

/// Writes `bytes` to `--output`, or else standard output (standard error with `to_stderr`).
fn emit(args: &CheckArgs, bytes: &[u8], to_stderr: bool) -> Result<(), Failure> {
    match &args.output {
        Some(path) => stagelint::util::write_new(path, bytes).map_err(|e| Failure::writing_file(path, &e)),
        None if to_stderr => {
            let _ = io::stderr().lock().write_all(bytes);
            Ok(())
        }
        None => super::print(bytes),
    }
}
