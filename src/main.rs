//! The `stagelint` command line: parse arguments, call the library, map results to exit codes.

mod cli;

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

use cli::check::CheckArgs;
use cli::{Color, Failure};
use stagelint::config::Config;
use stagelint::families;
use stagelint::render;
use stagelint::workspace::discover::ConfigCache;

#[derive(Parser)]
#[command(
    name = "stagelint",
    version,
    about = "Lint LLM agent-workflow definitions: stud-cli state machines (stage files and sm.yaml), climpt agents, Last Light workflows and @bastani/atomic workflows"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check files and directories (default: the current directory).
    Check(CheckArgs),
    /// List every rule with its default severity.
    Rules,
    /// Run the language server on stdin/stdout.
    #[cfg(feature = "lsp")]
    Lsp,
    /// Run a Model Context Protocol server on stdin/stdout, for coding agents: tools check,
    /// explain, dry_run, fix and rules, inside the client's roots (or the current directory).
    #[cfg(feature = "mcp")]
    Mcp,
    /// Run a stage, a whole state machine, a climpt agent or a Last Light workflow against a recorded provider (a cassette).
    DryRun(DryRunArgs),
    /// Print the prompt a Last Light workflow's phase sends, rendered as its engine renders it
    /// from the context given with `--var` (no cassette, nothing run).
    Render(RenderArgs),
    /// Explain a rule (what it checks, why, an example) or a topic; alone, list them.
    Explain {
        /// A rule code such as `sm/StageJoinDangling` (or `stagejoindangling`: the name alone,
        /// in any case, when one family has it), or a topic: dry-run, decisions, configuration.
        topic: Option<String>,
    },
    /// Work with dry-run cassettes.
    Cassette {
        #[command(subcommand)]
        command: CassetteCommand,
    },
    /// Write a commented `stagelint.toml` for the project in the current directory.
    Init {
        /// Replace an existing `stagelint.toml`.
        #[arg(long)]
        force: bool,
    },
    /// Print a shell completion script (for example `stagelint completions bash`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(clap::Args)]
struct DryRunArgs {
    /// A stage file (without a cassette of its own, a stage of a state machine runs its machine),
    /// a state machine (its directory or `sm.yaml`), a climpt agent (its directory or
    /// `steps_registry.json`), or a Last Light workflow; with `--all`, directories whose
    /// cassettes are all replayed (default: the current directory) and files whose cassettes
    /// are (a changed cassette, those beside a changed definition).
    #[arg(required_unless_present = "all")]
    paths: Vec<PathBuf>,
    /// Replay every cassette under the directories (or of the files) given, each against what
    /// it records, with a line per cassette and a total (for CI; exit codes as `check`).
    #[arg(long, conflicts_with = "cassette")]
    all: bool,
    /// With `--all`: which completion-channel branches, Assert outcomes and `next` paths of
    /// each stage the cassettes exercise, and which none does.
    #[arg(long, requires = "all")]
    coverage: bool,
    /// The cassette (default: `<stage-id>.cassette.yaml` beside the stage, else the machine's
    /// `sm.cassette.yaml`; a climpt agent's `agent.cassette.yaml`; `cassettes/<name>.cassette.yaml`
    /// beside a workflow).
    #[arg(long)]
    cassette: Option<PathBuf>,
    /// Show each prompt sent in full in the timeline (by default, its first lines).
    #[arg(long)]
    show_prompts: bool,
    /// Output: a readable timeline, or the JSON Lines event stream; with `--all` also
    /// `sarif`, `github` and `junit`.
    #[arg(long, value_enum, default_value_t = RunFormat::Full)]
    format: RunFormat,
    /// Request drift (an edited prompt or tool set) fails the run.
    #[arg(long)]
    strict: bool,
    /// Use this config file instead of discovering `stagelint.toml`.
    #[arg(long)]
    config: Option<PathBuf>,
    /// When to color the findings after the timeline (`NO_COLOR` is honoured under `auto`).
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
    /// Record a new cassette from a live endpoint instead of replaying (feature `record`).
    #[cfg(feature = "record")]
    #[command(flatten)]
    record: RecordArgs,
}

#[cfg(feature = "record")]
#[derive(clap::Args)]
struct RecordArgs {
    /// Record: run the stage against `--endpoint` and write what it answered as a cassette.
    #[arg(long, requires_all = ["endpoint", "api", "model"])]
    record: bool,
    /// Base URL of an Anthropic- or OpenAI-compatible API (refused under `CI` unless local).
    #[arg(long)]
    endpoint: Option<String>,
    /// The wire format: anthropic-messages, openai-chat or openai-responses.
    #[arg(long)]
    api: Option<String>,
    #[arg(long)]
    model: Option<String>,
    /// The environment variable holding the API key.
    #[arg(long)]
    api_key_env: Option<String>,
    /// Where to write the cassette (default: `<stage-id>.cassette.yaml` beside the stage, which
    /// must not exist yet).
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Keep secrets (API keys, tokens, private keys) in the recording instead of replacing them
    /// with `«redacted:<kind>»` placeholders.
    #[arg(long, requires = "record")]
    no_redact: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum RunFormat {
    Full,
    Json,
    Sarif,
    Github,
    Junit,
}

#[derive(clap::Args)]
struct RenderArgs {
    /// The workflow file.
    workflow: PathBuf,
    /// The phase whose prompt to render.
    #[arg(long)]
    phase: String,
    /// A context value, `key=value` (repeatable). The value is JSON when it parses as JSON
    /// (`false`, `3`, `["bug"]`, `"text"`), else text; a dotted key sets a field of an object
    /// (`models.plan=opus`, `phaseOutputs.plan=...`).
    #[arg(long = "var", value_name = "KEY=VALUE", value_parser = parse_var)]
    vars: Vec<(String, String)>,
    /// Print the prompt exactly as it would be sent: no marks, no notes.
    #[arg(long)]
    exact: bool,
    /// Output: the prompt for people, or JSON (the exact text, its substitutions and the tags
    /// sent as written).
    #[arg(long, value_enum, default_value_t = RenderFormat::Text)]
    format: RenderFormat,
    /// Use this config file instead of discovering `stagelint.toml`.
    #[arg(long)]
    config: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum RenderFormat {
    Text,
    Json,
}

/// `key=value`, split at the first `=`.
fn parse_var(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some(("", _)) => Err(format!("`{text}` has no key before `=`: write key=value")),
        Some((key, value)) => Ok((key.to_string(), value.to_string())),
        None => Err(format!("`{text}` has no `=`: write key=value")),
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return parse_error(&error),
    };
    #[cfg(feature = "lsp")]
    stagelint::util::tune_allocator(matches!(cli.command, Command::Lsp));
    #[cfg(not(feature = "lsp"))]
    stagelint::util::tune_allocator(false);
    let result = match cli.command {
        Command::Check(args) => cli::check::run(args),
        Command::Rules => run_rules(),
        #[cfg(feature = "lsp")]
        Command::Lsp => run_lsp(),
        #[cfg(feature = "mcp")]
        Command::Mcp => cli::mcp::run(),
        Command::DryRun(args) => run_dry_run(args),
        Command::Render(args) => run_render(args),
        Command::Explain { topic } => cli::explain::run(topic.as_deref()),
        Command::Cassette { command: CassetteCommand::Import(args) } => run_cassette_import(args),
        Command::Init { force } => run_init(force),
        Command::Completions { shell } => {
            // Made whole first: clap_complete panics on a write error.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "stagelint", &mut script);
            cli::print(&script).map(|()| ExitCode::SUCCESS)
        }
    };
    let (error, code) = match result {
        Ok(code) => return code,
        Err(Failure::ClosedPipe) => return ExitCode::SUCCESS,
        Err(Failure::Usage(error)) => (error, 2),
        Err(Failure::Output(error)) => (error, 1),
    };
    // One error may be several lines (every problem of a config); each is prefixed, and
    // indented lines continue the one above.
    let mut err = io::stderr().lock();
    for line in error.lines() {
        let prefix = if line.starts_with(char::is_whitespace) { "" } else { "stagelint: " };
        let _ = writeln!(err, "{prefix}{line}");
    }
    ExitCode::from(code)
}

/// Help and the version go to standard output, written here so that a write error is seen
/// (clap ignores it); clap prints every other parse error itself, on standard error.
fn parse_error(error: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if !matches!(error.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        error.exit()
    }
    let text = if io::stdout().is_terminal() { error.render().ansi().to_string() } else { error.to_string() };
    match cli::print(text.as_bytes()) {
        Ok(()) | Err(Failure::ClosedPipe) => ExitCode::SUCCESS,
        Err(Failure::Output(message) | Failure::Usage(message)) => {
            let _ = writeln!(io::stderr().lock(), "stagelint: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The language server: 0 after `shutdown` then `exit`, 1 when the client left without them
/// (a closed standard output is the client leaving), or when the output cannot be written.
#[cfg(feature = "lsp")]
fn run_lsp() -> Result<ExitCode, Failure> {
    match stagelint::lsp::run() {
        Ok(stagelint::lsp::Ended::Exited { clean: true }) => Ok(ExitCode::SUCCESS),
        Ok(stagelint::lsp::Ended::Exited { clean: false }) => Ok(ExitCode::FAILURE),
        Ok(stagelint::lsp::Ended::Unwritable(error)) if error.kind() == io::ErrorKind::BrokenPipe => {
            Ok(ExitCode::FAILURE)
        }
        Ok(stagelint::lsp::Ended::Unwritable(error)) => Err(Failure::writing(&error)),
        Err(error) => Err(format!("language server: {error}").into()),
    }
}

fn run_dry_run(args: DryRunArgs) -> Result<ExitCode, Failure> {
    #[cfg(feature = "record")]
    if args.record.record {
        return run_record(&args);
    }
    if args.all {
        let format = match args.format {
            RunFormat::Full => cli::dry_run_all::Format::Full,
            RunFormat::Json => cli::dry_run_all::Format::Json,
            RunFormat::Sarif => cli::dry_run_all::Format::Sarif,
            RunFormat::Github => cli::dry_run_all::Format::Github,
            RunFormat::Junit => cli::dry_run_all::Format::Junit,
        };
        let paths = if args.paths.is_empty() { vec![PathBuf::from(".")] } else { args.paths };
        let options =
            cli::dry_run_all::Args { format, strict: args.strict, coverage: args.coverage, color: args.color };
        return cli::dry_run_all::run(&paths, args.config.as_deref(), options);
    }
    if args.paths.len() > 1 {
        return Err("dry-run runs one definition (a stage, machine, climpt agent or Last Light workflow); give one path, or --all to replay the cassettes of several".into());
    }
    if matches!(args.format, RunFormat::Sarif | RunFormat::Github | RunFormat::Junit) {
        return Err("--format sarif, github and junit report a run over every cassette: add --all".into());
    }
    let json = matches!(args.format, RunFormat::Json);
    let result = replay(args);
    // The JSON stream ends with a summary even when nothing could be run; the message still
    // goes to standard error, with the same exit code.
    if json && let Err(Failure::Usage(error)) = &result {
        cli::print(stagelint::runtime::error_stream(error).as_bytes())?;
    }
    result
}

fn replay(args: DryRunArgs) -> Result<ExitCode, Failure> {
    let forced = args.config.as_deref().map(Config::load).transpose().map_err(|e| e.to_string())?;
    let mut configs = ConfigCache::new(forced);
    let options = stagelint::runtime::Options { strict: args.strict, explain_init: true };
    let overlay = std::collections::HashMap::new();
    let path = args.paths.into_iter().next().unwrap_or_default();
    let (workspace, run) =
        stagelint::runtime::dry_run_path(&path, args.cassette.as_deref(), options, &mut configs, &overlay)?;
    let mut out = Vec::new();
    match args.format {
        RunFormat::Json => out.extend_from_slice(run.trace.to_json_lines().as_bytes()),
        _ => {
            let color = args.color.for_stdout();
            out.extend_from_slice(
                stagelint::runtime::report::timeline_with(&workspace, &run, args.show_prompts).as_bytes(),
            );
            render::full::render(&mut out, &workspace, &run.findings, color)
                .map_err(|e| Failure::Output(format!("cannot render the findings: {e}")))?;
        }
    }
    cli::print(&out)?;
    Ok(ExitCode::from(run.exit_code()))
}

fn run_render(args: RenderArgs) -> Result<ExitCode, Failure> {
    let forced = args.config.as_deref().map(Config::load).transpose().map_err(|e| e.to_string())?;
    let mut configs = ConfigCache::new(forced);
    let path = stagelint::workspace::discover::absolute(&args.workflow);
    if !path.is_file() {
        return Err(format!("{}: cannot read file: no such file", args.workflow.display()).into());
    }
    let workspace = stagelint::workspace::discover::discover(std::slice::from_ref(&path), &mut configs)
        .map_err(|e| e.to_string())?;
    let file = workspace
        .file_at(&path)
        .filter(|f| f.kind == stagelint::workspace::FileKind::Workflow)
        .ok_or_else(|| format!("{}: not a Last Light workflow", args.workflow.display()))?;
    let vars: Vec<(String, serde_json::Value)> =
        args.vars.iter().map(|(k, v)| (k.clone(), stagelint::runtime::var_value(v))).collect();
    let rendering = stagelint::runtime::preview(&workspace, file.id, &args.phase, &vars)
        .map_err(|why| format!("{}: {why}", args.workflow.display()))?;
    let text = match args.format {
        RenderFormat::Json => rendering.json.to_string() + "\n",
        RenderFormat::Text if args.exact => rendering.exact,
        RenderFormat::Text => rendering.marked,
    };
    cli::print(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

fn run_init(force: bool) -> Result<ExitCode, Failure> {
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let written = stagelint::init::write(&cwd, force)?;
    let found = written.families.into_iter().collect::<Vec<_>>().join(", ");
    let found = if found.is_empty() { "none".to_string() } else { found };
    let name = written.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    cli::print(format!("wrote {name} (families found: {found})\n").as_bytes())?;
    if let Some(parent) = written.shadows {
        let _ = writeln!(
            io::stderr().lock(),
            "note: {} governed this directory until now; {name} replaces it here (configs are not merged)",
            parent.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn run_rules() -> Result<ExitCode, Failure> {
    let width = families::all_rules().map(|r| r.code.len()).max().unwrap_or(0);
    let mut out = String::new();
    for rule in families::all_rules() {
        let fix = if rule.fixable { "fix" } else { "   " };
        let line = format!("{:width$}  {:7}  {fix}  {}", rule.code, rule.severity.as_str(), rule.summary());
        out.push_str(line.trim_end());
        out.push('\n');
    }
    cli::print(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Subcommand)]
enum CassetteCommand {
    /// Turn recorded provider exchanges (JSON Lines of {"request", "response"}) into a stage cassette.
    Import(ImportArgs),
}

#[derive(clap::Args)]
struct ImportArgs {
    /// JSON Lines files, oldest exchange first; `-` reads standard input.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The stage the cassette is for: its file (then `ctx:` is scaffolded from its
    /// placeholders), or its id (the stage is then looked up beside `--output`).
    #[arg(long, value_name = "FILE|ID")]
    stage: String,
    /// The wire format (default: detected from the exchanges).
    #[arg(long, value_enum)]
    provider: Option<WireArg>,
    /// Write the cassette here instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = CassetteFormat::Yaml)]
    format: CassetteFormat,
    /// Keep secrets (API keys, tokens, private keys) in the cassette instead of replacing them
    /// with `«redacted:<kind>»` placeholders.
    #[arg(long)]
    no_redact: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum WireArg {
    #[value(name = "anthropic-messages")]
    AnthropicMessages,
    #[value(name = "openai-chat")]
    OpenaiChat,
    #[value(name = "openai-responses")]
    OpenaiResponses,
}

#[derive(Clone, Copy, ValueEnum)]
enum CassetteFormat {
    Yaml,
    Json,
}

fn run_cassette_import(args: ImportArgs) -> Result<ExitCode, Failure> {
    use stagelint::runtime::import::{ImportOptions, Input, import};
    use stagelint::runtime::wire::WireFormat;

    let mut inputs = Vec::new();
    for path in &args.inputs {
        let (name, text) = if path.as_os_str() == "-" {
            ("-".to_string(), cli::read_stdin()?)
        } else {
            let bytes = stagelint::source::read::read_bytes(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let text = String::from_utf8(bytes).map_err(|e| format!("{}: not UTF-8 text ({e})", path.display()))?;
            (path.display().to_string(), text)
        };
        inputs.push(Input { name, text });
    }
    let format = args.provider.map(|p| match p {
        WireArg::AnthropicMessages => WireFormat::AnthropicMessages,
        WireArg::OpenaiChat => WireFormat::OpenAiChat,
        WireArg::OpenaiResponses => WireFormat::OpenAiResponses,
    });
    let stage = stagelint::runtime::import::import_stage(&args.stage, args.output.as_deref())?;
    let options = ImportOptions { stage: stage.id.clone(), format, ctx: stage.ctx.clone(), redact: !args.no_redact };
    let imported = import(&inputs, &options)?;
    let mut err = io::stderr().lock();
    redaction_note(&mut err, !args.no_redact, imported.redacted);
    let _ = match (&stage.ctx, &stage.file) {
        (Some(ctx), Some(file)) => {
            let fields: Vec<&str> = ctx.as_object().into_iter().flat_map(|m| m.keys()).map(String::as_str).collect();
            if fields.is_empty() {
                writeln!(err, "stagelint: `ctx:` is empty: the body of {} reads no ctx field", file.display())
            } else {
                let fields = fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ");
                writeln!(
                    err,
                    "stagelint: scaffolded `ctx:` from {}: replace the TODO values of {fields}",
                    file.display()
                )
            }
        }
        _ if !stage.others.is_empty() => {
            // Written anyway: the stage may not exist yet; the dry-run reports a cassette no
            // stage owns.
            let hint = stagelint::util::did_you_mean(&stage.id, stage.others.iter().map(String::as_str))
                .map(|near| format!(" (did you mean `{near}`?)"))
                .unwrap_or_default();
            let listed = stage.others.iter().map(|id| format!("`{id}`")).collect::<Vec<_>>().join(", ");
            writeln!(
                err,
                "stagelint: warning: no stage `{}` near the output{hint}; the stages there are {listed}. The cassette is written for `{}` all the same, without a `ctx:` scaffold",
                stage.id, stage.id
            )
        }
        _ => writeln!(
            err,
            "stagelint: no `ctx:` scaffolded: stage `{}` was not found (pass its file as --stage, or --output beside it); add the ctx its placeholders read by hand",
            stage.id
        ),
    };
    for warning in &imported.warnings {
        let _ = writeln!(err, "stagelint: warning: {warning}");
    }
    let text = match args.format {
        CassetteFormat::Yaml => stagelint::source::yaml_write::to_yaml(&imported.cassette),
        CassetteFormat::Json => format!("{:#}\n", imported.cassette),
    };
    match &args.output {
        Some(path) => {
            stagelint::util::write_new(path, text.as_bytes()).map_err(|e| Failure::writing_file(path, &e))?;
        }
        None => cli::print(text.as_bytes())?,
    }
    let _ = writeln!(err, "stagelint: imported {} turn(s) from {}", imported.turns, imported.format.name());
    Ok(ExitCode::SUCCESS)
}

/// Says on stderr how many secrets were redacted, or warns that none were looked for.
fn redaction_note(err: &mut impl Write, redacted: bool, count: usize) {
    let _ = if !redacted {
        writeln!(
            err,
            "stagelint: warning: --no-redact: API keys, tokens and private keys are written as recorded; do not commit this cassette before checking it (`cassette/SecretInRecording`)"
        )
    } else {
        writeln!(err, "stagelint: redacted {count} secret value(s) (`--no-redact` keeps them)")
    };
}

#[cfg(feature = "record")]
fn run_record(args: &DryRunArgs) -> Result<ExitCode, Failure> {
    use stagelint::runtime::wire::WireFormat;
    let record = &args.record;
    let api_name = record.api.as_deref().unwrap_or_default();
    let api = WireFormat::parse(api_name).ok_or_else(|| format!("unknown --api `{api_name}`"))?;
    let model = record.model.clone().unwrap_or_default();
    let key = record.api_key_env.as_ref().and_then(|var| std::env::var(var).ok());
    let endpoint = record.endpoint.clone().unwrap_or_default();
    let mut provider = stagelint::runtime::record::LiveProvider::new(&endpoint, api, &model, key)?;
    provider.redact = !record.no_redact;
    let forced = args.config.as_deref().map(Config::load).transpose().map_err(|e| e.to_string())?;
    let mut configs = ConfigCache::new(forced);
    let path = args.paths.first().cloned().ok_or("--record needs the stage file")?;
    let mut paths = vec![path.clone()];
    paths.extend(args.cassette.clone());
    let workspace = stagelint::workspace::discover::discover(&paths, &mut configs).map_err(|e| e.to_string())?;
    let absolute = stagelint::workspace::discover::absolute;
    let stage = workspace.file_at(&absolute(&path)).ok_or("the stage was not read")?;
    let seed = args.cassette.as_deref().and_then(|c| workspace.file_at(&absolute(c))).map(|f| f.id);
    let provenance = serde_json::json!({"source": "recorded", "provider": api.name(), "model": model, "tool": format!("stagelint {}", env!("CARGO_PKG_VERSION"))});
    let (run, mut cassette) =
        stagelint::runtime::recording::record_stage(&workspace, stage.id, seed, &mut provider, provenance)?;
    let redacted = if record.no_redact { 0 } else { stagelint::runtime::recording::redact(&mut cassette) };
    redaction_note(&mut io::stderr().lock(), !record.no_redact, redacted);
    let id = cassette["stage"].as_str().unwrap_or("stage").to_string();
    let output = match &record.output {
        Some(path) => path.clone(),
        None => {
            let path = stage.path.with_file_name(format!("{id}.cassette.yaml"));
            if path.exists() {
                return Err(
                    format!("{} exists; pass --output to choose where the recording goes", path.display()).into()
                );
            }
            path
        }
    };
    stagelint::util::write_new(&output, stagelint::source::yaml_write::to_yaml(&cassette).as_bytes())
        .map_err(|e| Failure::writing_file(&output, &e))?;
    let report = stagelint::runtime::report::timeline(&workspace, &run);
    cli::print(format!("{report}recorded {}\n", output.display()).as_bytes())?;
    Ok(ExitCode::from(run.exit_code()))
}
