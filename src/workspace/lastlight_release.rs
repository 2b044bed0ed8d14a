//! Which Last Light release a `workflows/` directory is checked for, from what the repository
//! around it says, as ruff reads `requires-python`: the server's version in the `package.json`
//! beside the directory (`lastlight` at the top level until v0.16.0, `lastlight-core` in
//! `apps/server/` after), and the engine's own sources when they are there
//! (`workspace::lastlight_sources`): a checkout between two tags carries the older tag's version
//! with some or all of the next release's changes. Without sources, the version alone; without
//! a version, the sources alone.

use std::path::{Path, PathBuf};

use crate::registry::releases::Version;
use crate::registry::releases::lastlight::{self as releases, ReleaseId, Target};
use crate::source::read::read_text;
use crate::workspace::lastlight_sources::Sources;

/// A release found in a repository: which one (or which ones), the file that said so, and what
/// was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detected {
    pub release: Target,
    pub marker: PathBuf,
    pub why: String,
}

/// The names the Last Light server's package has had: the repository's own until v0.16.0, the
/// server app's after.
const SERVER_PACKAGES: [&str; 3] = ["lastlight", "@lastlight/core", "lastlight-core"];

/// The release of the server that loads `workflows` (a directory named `workflows`), or `None`
/// when nothing around it says (an overlay repository, a copy of the files).
pub fn detect(workflows: &Path) -> Option<Detected> {
    let root = workflows.parent()?;
    let mut sources = Sources::new(root);
    let package = root.join("package.json");
    let version = server_version(&package);
    let floor = version.as_ref().map(|(_, v)| ReleaseId::of_version(*v));
    let said = version.as_ref().map(|(name, Version(a, b, c))| {
        format!("`{name}` {a}.{b}.{c}, release {}", floor.unwrap_or(releases::OLDEST).name())
    });
    if !sources.present() {
        let (said, floor) = (said?, floor?);
        // 0.1.15 stayed the version until v0.2.0: the seed and later commits carry it too.
        let (release, more) = match floor == releases::V0_1 {
            true => (Target { oldest: releases::V0_1, newest: releases::SEED }, " or, as the seed commit, seed"),
            false => (Target::exact(floor), ""),
        };
        let why = format!("{said}{more}; no engine sources beside it to show a later commit");
        return Some(Detected { release, marker: package, why });
    }
    let evidence = sources.evidence(floor.unwrap_or(releases::OLDEST), version.is_some());
    let release = Target { oldest: evidence.oldest, newest: evidence.newest };
    let (marker, why) = match said {
        Some(said) => (package, format!("{said}; the engine's sources show {}", evidence.said)),
        None => {
            let marker = sources.engine.clone().or_else(|| sources.renderer().map(|(p, _)| p)).unwrap_or_default();
            (
                marker,
                format!("no server `package.json` beside `workflows/`; the engine's sources show {}", evidence.said),
            )
        }
    };
    Some(Detected { release, marker, why })
}

/// The package name and version of `package.json` when it is the Last Light server's.
fn server_version(path: &Path) -> Option<(String, Version)> {
    let text = read_text(path).ok()?;
    let root = crate::source::json::parse(&text).root?;
    let name = root.get("name")?.as_str()?;
    if !SERVER_PACKAGES.contains(&name) {
        return None;
    }
    let version = Version::parse(root.get("version")?.as_str()?)?;
    Some((name.to_string(), version))
}

/// The `workflows` directory whose repository's release governs `path`: the nearest ancestor
/// named `workflows` (a workflow or prompt), or for a skill, `workflows` beside the `skills`
/// directory that holds it (where the server looks for both).
pub fn governing_workflows(path: &Path, is_skill: bool) -> Option<PathBuf> {
    if !is_skill {
        return path.ancestors().find(|a| a.file_name().is_some_and(|n| n == "workflows")).map(Path::to_path_buf);
    }
    let skills = path.ancestors().find(|a| a.file_name().is_some_and(|n| n == "skills"))?;
    let workflows = skills.parent()?.join("workflows");
    workflows.is_dir().then_some(workflows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect_in(files: &[(&str, &str)]) -> Option<(String, String)> {
        let dir = tempfile::tempdir().unwrap();
        // The search for the engine package stops at the repository's root.
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::create_dir_all(dir.path().join("workflows")).unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        detect(&dir.path().join("workflows")).map(|d| (d.release.describe(), d.why))
    }

    const SEED_RENDERER: &str = r"result.replace(/\{\{(\w+(?:\.\w+)*)\}\}/g";
    const HYPHEN_RENDERER: &str = r"result.replace(/\{\{([\w-]+(?:\.[\w-]+)*)\}\}/g; return ctx.phaseOutputs?.[key];";
    const SEED_SCHEMA: &str = "skills: z, fix_variant: z, unrestricted_egress: z, web_search: z";

    fn package(name: &str, version: &str) -> String {
        format!("{{\"name\": \"{name}\", \"version\": \"{version}\"}}")
    }

    #[test]
    fn the_server_version_names_the_release() {
        let found = detect_in(&[("package.json", &package("lastlight", "0.10.0"))]);
        assert_eq!(found.map(|(r, _)| r), Some("0.7.7".to_string()));
        let found = detect_in(&[("package.json", &package("lastlight-core", "0.23.4"))]);
        let why = "`lastlight-core` 0.23.4, release 0.23; no engine sources beside it to show a later commit";
        assert_eq!(found, Some(("0.23".into(), why.into())));
        // Another project's package.json says nothing about Last Light.
        assert_eq!(detect_in(&[("package.json", &package("my-bot", "0.23.0"))]), None);
    }

    #[test]
    fn version_0_1_15_is_refined_by_the_engine_sources() {
        let old = package("lastlight", "0.1.15");
        let of = |files: &[(&str, &str)]| detect_in(files).map(|(r, _)| r);
        assert_eq!(of(&[("package.json", &old)]).as_deref(), Some("0.1 to seed"));
        // A renderer without the seed's bare-name fallback: before the seed.
        assert_eq!(
            of(&[("package.json", &old), ("src/workflows/templates.ts", SEED_RENDERER)]).as_deref(),
            Some("0.1")
        );
        let seed = [
            ("package.json", old.as_str()),
            ("src/workflows/templates.ts", "/\\{\\{(\\w+)\\}\\}/ return ctx.phaseOutputs?.[key];"),
            ("src/workflows/schema.ts", SEED_SCHEMA),
            ("src/workflows/simple.ts", "prePopulateBranch: request.prePopulateBranch"),
        ];
        assert_eq!(of(&seed).as_deref(), Some("seed"));
        // Some of the seed's changes (151b83c7: everything but `skills`): between the two.
        let before = [seed[0], seed[1], ("src/workflows/schema.ts", "fix_variant: z, web_search: z"), seed[3]];
        assert_eq!(of(&before).as_deref(), Some("0.1 to seed"));
        assert_eq!(
            of(&[("package.json", &old), ("src/workflows/templates.ts", HYPHEN_RENDERER)]).as_deref(),
            Some("seed to 0.2")
        );
    }

    #[test]
    fn a_checkout_after_its_tag_is_read_from_its_sources() {
        let of = |files: &[(&str, &str)]| detect_in(files).map(|(r, _)| r);
        // a69ad81f: 0.4.0 with the bash and script phases and the PR head's base branch.
        let after = [
            ("package.json", package("lastlight", "0.4.0")),
            ("src/workflows/templates.ts", HYPHEN_RENDERER.to_string()),
            ("src/workflows/schema.ts", "z.enum([\"context\", \"agent\", \"bash\", \"script\"])".to_string()),
            ("src/index.ts", "if (pr.base?.ref) extra.baseBranch = pr.base.ref;".to_string()),
        ];
        let files: Vec<(&str, &str)> = after.iter().map(|(p, t)| (*p, t.as_str())).collect();
        assert_eq!(of(&files).as_deref(), Some("0.5.1"));
        // Without the dispatcher, 0.5.1 is not shown whole: the range, 0.2 kept from the version.
        assert_eq!(of(&files[..3]).as_deref(), Some("0.2 to 0.5.1"));
        // Contradictory: 0.10.6's change without 0.10.2's, in the same file.
        let old = package("lastlight", "0.10.1");
        let files = [
            ("package.json", old.as_str()),
            ("src/workflows/templates.ts", HYPHEN_RENDERER),
            ("src/workflows/simple.ts", "botMention: `@${getBotName()}`"),
        ];
        let (release, why) = detect_in(&files).unwrap();
        assert_eq!(release, "0.7.7 to 0.10.6");
        assert!(why.contains("though nothing of 0.10.2: contradictory"), "{why}");
    }

    #[test]
    fn the_monorepo_engine_package_is_read_too() {
        let core = "../../packages/workflow-engine/src/core";
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let server = dir.path().join("apps/server");
        std::fs::create_dir_all(server.join("workflows")).unwrap();
        std::fs::create_dir_all(server.join(core)).unwrap();
        std::fs::write(server.join("package.json"), package("lastlight-core", "0.22.0")).unwrap();
        std::fs::write(server.join(core).join("schema.ts"), "requires_marker: z, skip_if: z").unwrap();
        let found = detect(&server.join("workflows")).unwrap();
        assert_eq!(found.release.describe(), "0.18.5 to 0.23");
        assert!(found.why.contains("`skip_if:` in `packages/workflow-engine/src/core/schema.ts`"), "{}", found.why);
        assert!(found.why.contains("not all of it (`pr_scoped:`"), "{}", found.why);
    }

    #[test]
    fn without_a_version_the_sources_give_a_range() {
        let of = |files: &[(&str, &str)]| detect_in(files).map(|(r, _)| r);
        assert_eq!(of(&[("src/workflows/templates.ts", SEED_RENDERER)]).as_deref(), Some("0.1"));
        let seed = [
            ("src/workflows/templates.ts", "/\\{\\{(\\w+)\\}\\}/ return ctx.phaseOutputs?.[key];"),
            ("src/workflows/schema.ts", SEED_SCHEMA),
        ];
        assert_eq!(of(&seed).as_deref(), Some("0.1 to seed"));
        assert_eq!(of(&[("src/workflows/templates.ts", HYPHEN_RENDERER)]).as_deref(), Some("seed to 0.15"));
        let reexport = "export * from \"lastlight-workflow-engine\";\n";
        assert_eq!(of(&[("src/workflows/templates.ts", reexport)]).as_deref(), Some("0.16.1 to 0.25.6"));
        assert_eq!(of(&[("src/workflows/templates.ts", "export const x = 1;")]), None);
        assert_eq!(of(&[("packages/workflow-engine/package.json", "{}")]).as_deref(), Some("0.16.1 to 0.25.6"));
        assert_eq!(of(&[]), None);
    }
}
