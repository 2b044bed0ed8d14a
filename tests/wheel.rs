//! The wheel (`pyproject.toml`: maturin, `bindings = "bin"`): `pip wheel` builds it from this
//! checkout with no network (maturin taken from the environment, no build isolation, no index),
//! `pip install` puts it into a fresh virtual environment, and the `stagelint` it installed runs,
//! at the version `Cargo.toml` gives, and checks the examples as the test binary does.
//!
//! It needs a Python with `pip` and `maturin` (`STAGELINT_PYTHON`, else `python3`): CI installs
//! them from PyPI (`.ci/run`) and builds the artifact profile (`cargo build --profile dist`)
//! first, which the wheel's build then reuses. Elsewhere the test is reported as ignored when
//! `maturin` is not on `PATH` (`build.rs`).
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Why the wheel cannot be built here, or `None` when it can: the one question the skip asks.
fn missing_tool(python: &str) -> Option<String> {
    let probe = Command::new(python).args(["-c", "import pip, maturin"]).output();
    match probe {
        Ok(output) if output.status.success() => None,
        Ok(_) => Some(format!("{python} has no pip or no maturin (pip install maturin)")),
        Err(_) => Some(format!("{python} is not installed")),
    }
}

fn python() -> String {
    std::env::var("STAGELINT_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// The scripts directory of `python`'s environment, where `maturin` is (its build backend calls
/// the executable).
fn scripts_dir(python: &str) -> PathBuf {
    let output = Command::new(python)
        .args(["-c", "import sysconfig; print(sysconfig.get_path('scripts'))"])
        .output()
        .expect("python runs");
    PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
}

fn run(command: &mut Command) -> Output {
    let output = command.output().expect("runs");
    assert!(output.status.success(), "{command:?} failed:\n{}", text(&output));
    output
}

#[test]
#[cfg_attr(not(tool_maturin), ignore = "maturin is not on PATH (pip install maturin; CI installs it: .ci/run)")]
fn the_wheel_builds_installs_into_a_fresh_venv_and_runs() {
    let python = python();
    // Run without it only when STAGELINT_REQUIRE_TOOLS says the tools must be there (CI).
    if let Some(why) = missing_tool(&python) {
        panic!("the wheel cannot be built here, and STAGELINT_REQUIRE_TOOLS requires it (see .ci/run): {why}");
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let temp = tempfile::tempdir().expect("temp dir");
    let wheels = temp.path().join("wheels");
    let path = std::env::join_paths(
        std::iter::once(scripts_dir(&python))
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .expect("PATH");
    run(Command::new(&python)
        .args(["-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "--quiet", "-w"])
        .arg(&wheels)
        .arg(repo)
        .env("PATH", &path)
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1"));
    let built: Vec<PathBuf> =
        std::fs::read_dir(&wheels).expect("the wheel directory").flatten().map(|e| e.path()).collect();
    let [wheel] = built.as_slice() else { panic!("one wheel: {built:?}") };
    let name = wheel.file_name().and_then(|n| n.to_str()).expect("a name");
    // The version is Cargo.toml's; the tag says a binary wheel for any Python 3.
    assert!(name.starts_with(&format!("stagelint-{}-py3-none-", env!("CARGO_PKG_VERSION"))), "{name}");

    let venv = temp.path().join("venv");
    run(Command::new(&python).args(["-m", "venv"]).arg(&venv));
    run(Command::new(venv.join("bin/python"))
        .args(["-m", "pip", "install", "--no-index", "--no-deps", "--quiet"])
        .arg(wheel)
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1"));
    let installed = venv.join("bin/stagelint");
    let version = run(Command::new(&installed).arg("--version"));
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), format!("stagelint {}", env!("CARGO_PKG_VERSION")));
    let clean = run(Command::new(&installed).args(["check", "examples/code-review"]).current_dir(repo));
    assert_eq!(String::from_utf8_lossy(&clean.stdout).trim(), "No findings (8 files checked).");
    let broken =
        Command::new(&installed).args(["check", "--format", "concise", "examples/broken"]).current_dir(repo).output();
    let broken = broken.expect("runs");
    assert_eq!(broken.status.code(), Some(1), "{}", text(&broken));
    let expected = Command::new(env!("CARGO_BIN_EXE_stagelint"))
        .args(["check", "--format", "concise", "examples/broken"])
        .current_dir(repo)
        .output()
        .expect("runs");
    assert_eq!(broken.stdout, expected.stdout, "the wheel's binary reports what this build reports");
}
