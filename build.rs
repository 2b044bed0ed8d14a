//! Which outside tools the tests that drive them find on `PATH`: each tool in [`TOOLS`] on
//! `PATH` sets the cfg `tool_<name>` (`-` written `_`), and a test that needs it carries
//! `#[cfg_attr(not(tool_<name>), ignore = "<name> is not on PATH …")]`, so that without the tool
//! the test is reported as ignored, with the reason, instead of passing without running.
//!
//! With `STAGELINT_REQUIRE_TOOLS` set (CI sets it after installing the tools, `.ci/run`), every
//! cfg is set whatever `PATH` holds: the tests run, and fail when a tool is missing.
//!
//! Nothing is run: a tool is found when `PATH` has an executable file of its name. A change of
//! `PATH` runs this script again, which rebuilds the crate.

use std::path::Path;

/// The tools tests drive: Neovim (`tests/editor.rs`), pre-commit and git (`tests/precommit.rs`),
/// maturin (`tests/wheel.rs`, with the `python3` of its environment).
const TOOLS: &[&str] = &["nvim", "pre-commit", "git", "maturin"];

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    for tool in TOOLS {
        println!("cargo::rustc-check-cfg=cfg(tool_{})", tool.replace('-', "_"));
    }
    // Tests build with `debug` (the dev and test profiles). An optimized build (`release`,
    // `dist`, `bench`) has no tool tests, and must not be rebuilt when only PATH changed: the
    // wheel's build (maturin, with its environment's scripts first on PATH) and the
    // extension's would otherwise each compile the fat-LTO binary again.
    if std::env::var("PROFILE").as_deref() != Ok("debug") {
        return;
    }
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-env-changed=STAGELINT_REQUIRE_TOOLS");
    let required = std::env::var_os("STAGELINT_REQUIRE_TOOLS").is_some_and(|value| !value.is_empty());
    let path = std::env::var_os("PATH").unwrap_or_default();
    for tool in TOOLS {
        let cfg = format!("tool_{}", tool.replace('-', "_"));
        let found = std::env::split_paths(&path)
            .any(|dir| is_executable(&dir.join(tool)) || is_executable(&dir.join(format!("{tool}.exe"))));
        if required || found {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else { return false };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}
