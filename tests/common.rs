//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use stagelint::config::{Config, Level};
use stagelint::diagnostic::Diagnostic;
use stagelint::workspace::Workspace;
use stagelint::workspace::discover::{ConfigCache, discover};

/// Checks `paths` with `config` for every file (no discovery of `stagelint.toml`).
pub fn check_with(paths: &[PathBuf], config: Config) -> (Workspace, Vec<Diagnostic>) {
    let mut configs = ConfigCache::new(Some(config));
    let workspace = discover(paths, &mut configs).expect("config is valid");
    let diagnostics = stagelint::check::check(&workspace);
    (workspace, diagnostics)
}

/// The fixture's own `stagelint.toml` when it has one, else the defaults.
pub fn fixture_config(dir: &Path) -> Config {
    let path = dir.join("stagelint.toml");
    if path.is_file() { Config::load(&path).expect("fixture config parses") } else { Config::defaults(dir) }
}

/// Turns every rule off except `code`, which keeps its default severity.
pub fn only(mut config: Config, code: &str) -> Config {
    config.rules.clear();
    for family in stagelint::check::FAMILIES {
        config.rules.insert(family.name().to_string(), Level::Off);
    }
    let rule = stagelint::families::rule(code).expect("known code");
    config.rules.insert(rule.code.to_string(), Level::On);
    config
}

/// Renders diagnostics in the `full` format without color.
pub fn render_full(workspace: &Workspace, diagnostics: &[Diagnostic]) -> String {
    let mut out = Vec::new();
    stagelint::render::full::render(&mut out, workspace, diagnostics, false).expect("render");
    String::from_utf8(out).expect("utf-8")
}

pub fn render_json(workspace: &Workspace, diagnostics: &[Diagnostic]) -> String {
    let mut out = Vec::new();
    stagelint::render::json::render(&mut out, workspace, diagnostics, &[]).expect("render");
    String::from_utf8(out).expect("utf-8")
}

/// `line:code` pairs, for precise assertions.
pub fn lines_and_codes(workspace: &Workspace, diagnostics: &[Diagnostic]) -> Vec<(String, usize, &'static str)> {
    diagnostics
        .iter()
        .map(|d| {
            let file = workspace.file(d.file);
            let at = file.lines().line_col(&file.text, d.span.start);
            (file.path.file_name().unwrap().to_string_lossy().into_owned(), at.line, d.code)
        })
        .collect()
}

/// Writes `files` (paths relative to `dir`) with the first `$0` removed; returns where it was,
/// as the normalized path and the byte offset, for an editor-feature cursor.
pub fn write_marked<N: AsRef<Path>, S: AsRef<str>>(dir: &Path, files: &[(N, S)]) -> Option<(PathBuf, usize)> {
    let mut marked = None;
    for (name, text) in files {
        let text = text.as_ref();
        let path = stagelint::workspace::discover::normalize(&dir.join(name));
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        if let Some(offset) = text.find("$0") {
            marked = Some((path.clone(), offset));
        }
        std::fs::write(&path, text.replacen("$0", "", 1)).expect("write");
    }
    marked
}

/// The cursor at `marked` (from [`write_marked`]) in `workspace`.
pub fn cursor_at(workspace: &Workspace, marked: Option<(PathBuf, usize)>) -> Option<stagelint::ide::Cursor> {
    marked.map(|(path, offset)| stagelint::ide::Cursor {
        file: workspace.file_at(&path).unwrap_or_else(|| panic!("{} was read", path.display())).id,
        offset,
    })
}

/// A checked workspace in a temp dir with an editor cursor (`$0`), for editor-feature tests.
pub struct IdeFixture {
    pub _dir: tempfile::TempDir,
    pub workspace: Workspace,
    pub cursor: Option<stagelint::ide::Cursor>,
}

impl IdeFixture {
    /// `files` written to a temp dir (`$0` marks the cursor), read and checked with the
    /// default settings.
    pub fn new<N: AsRef<Path>, S: AsRef<str>>(files: &[(N, S)]) -> IdeFixture {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
        let marked = write_marked(dir.path(), files);
        let (workspace, _) = check_with(&[dir.path().to_path_buf()], Config::defaults(dir.path()));
        let cursor = cursor_at(&workspace, marked);
        IdeFixture { _dir: dir, workspace, cursor }
    }

    pub fn at(&self) -> stagelint::ide::Cursor {
        self.cursor.expect("a `$0` cursor in the fixture")
    }

    pub fn file(&self, name: &str) -> stagelint::diagnostic::FileId {
        self.workspace.files().iter().find(|f| f.path.ends_with(name)).map(|f| f.id).expect("file in workspace")
    }

    pub fn text(&self, file: stagelint::diagnostic::FileId, span: stagelint::source::Span) -> &str {
        &self.workspace.file(file).text[span.start..span.end]
    }

    /// A target as (file name, text under its span).
    pub fn show(&self, target: &stagelint::ide::Target) -> (String, String) {
        let file = self.workspace.file(target.file);
        let name = file.path.file_name().expect("name").to_string_lossy().into_owned();
        (name, self.text(target.file, target.span).to_string())
    }

    pub fn completions(&self) -> Vec<stagelint::ide::CompletionItem> {
        stagelint::ide::completions(&self.workspace, self.at())
    }

    pub fn labels(&self) -> Vec<String> {
        self.completions().into_iter().map(|item| item.label).collect()
    }

    pub fn hover(&self) -> Option<(String, String)> {
        let info = stagelint::ide::hover(&self.workspace, self.at())?;
        Some((self.text(self.at().file, info.span).to_string(), info.markdown))
    }
}

/// Runs the real binary in `cwd` with color variables cleared.
pub fn stagelint(args: &[&str], cwd: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_stagelint"))
        .args(args)
        .current_dir(cwd)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .expect("binary runs")
}

/// Runs the binary in `cwd` with `input` on standard input.
pub fn stagelint_stdin(args: &[&str], cwd: &std::path::Path, input: &str) -> std::process::Output {
    use std::io::Write as _;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_stagelint"))
        .args(args)
        .current_dir(cwd)
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("binary runs");
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write stdin");
    child.wait_with_output().expect("output")
}

/// The repository root.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Writes `text` to `dir/name`, creating directories.
pub fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(path, text).expect("write");
}

/// A temporary directory holding `files` (paths relative to it).
pub fn temp_files(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        write(dir.path(), name, text);
    }
    dir
}

/// The official SARIF 2.1.0 schema (`tests/sarif/`), compiled.
pub fn sarif_validator() -> jsonschema::Validator {
    let path = repo().join("tests/sarif/sarif-schema-2.1.0.json");
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    // Draft 4 is built in; the schema's `id` and `$schema` are names, never fetched (the
    // crate is built without its resolvers).
    jsonschema::draft4::options().should_validate_formats(true).build(&schema).expect("the SARIF schema compiles")
}

pub fn assert_valid_sarif(validator: &jsonschema::Validator, sarif: &serde_json::Value) {
    let errors: Vec<String> = validator.iter_errors(sarif).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "SARIF does not match the 2.1.0 schema:\n{}", errors.join("\n"));
}

/// Copies the tree at `from` into `to` (created when missing).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
