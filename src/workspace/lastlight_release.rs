//! Which Last Light release a `workflows/` directory is checked for, from what the repository
//! around it says, as ruff reads `requires-python`: the server's version in the `package.json`
//! beside the directory (`lastlight` at the top level until v0.16.0, `lastlight-core` in
//! `apps/server/` after), refined by the engine's own sources when the version alone is
//! ambiguous (0.1.15 is both the first releases' version and the seed's); without a version, the
//! engine's sources give a range of releases.

use std::path::{Path, PathBuf};

use crate::registry::releases::Version;
use crate::registry::releases::lastlight::{self as releases, ReleaseId, Target};
use crate::source::read::read_text;

/// A release found in a repository: which one (or which ones), the file that said so, and what
/// it said.
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
    let sources = Sources::read(root);
    let package = root.join("package.json");
    if let Some((name, version)) = server_version(&package) {
        let release = ReleaseId::of_version(version);
        let said = format!("`{name}` {}.{}.{}", version.0, version.1, version.2);
        if release != releases::V0_1 {
            return Some(Detected { release: Target::exact(release), marker: package, why: said });
        }
        // 0.1.15 stayed the version until v0.2.0: the seed and later commits carry it too.
        return Some(match sources.first_releases() {
            Some((release, source, what)) => Detected {
                release: Target::exact(release),
                marker: package,
                why: format!("{said}, and `src/workflows/{source}` {what}"),
            },
            None => Detected {
                release: Target { oldest: releases::V0_1, newest: releases::SEED },
                marker: package,
                why: format!("{said}, the version of v0.1.1 to the seed"),
            },
        });
    }
    if let Some(detected) = sources.layout(root) {
        return Some(detected);
    }
    // The engine package above the server (the monorepo): 0.16.1 or later.
    for ancestor in root.ancestors() {
        let engine = ancestor.join("packages").join("workflow-engine");
        if engine.is_dir() {
            let why = "the engine package, there from 0.16.1 on".to_string();
            return Some(Detected {
                release: Target { oldest: releases::V0_16_1, newest: releases::NEWEST },
                marker: engine,
                why,
            });
        }
        if ancestor.join(".git").exists() {
            break;
        }
    }
    None
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

/// The engine's sources beside the workflows, when the server's are there (`src/workflows/`).
struct Sources {
    templates: Option<(PathBuf, String)>,
    schema: Option<(PathBuf, String)>,
}

impl Sources {
    fn read(root: &Path) -> Sources {
        let dir = root.join("src").join("workflows");
        let read = |name: &str| {
            let path = dir.join(name);
            read_text(&path).ok().map(|text| (path, text))
        };
        Sources { templates: read("templates.ts"), schema: read("schema.ts") }
    }

    /// Keys with `-` (`[\w-]+`): the renderer of 5cecbdf0 (2026-06-15) and later.
    fn hyphen_keys(&self) -> bool {
        self.templates.as_ref().is_some_and(|(_, text)| text.contains("[\\w-]+"))
    }

    /// A re-export of the engine package: the server of 0.16.1 and later.
    fn reexports_engine(&self) -> bool {
        self.templates.as_ref().is_some_and(|(_, text)| text.contains("workflow-engine"))
    }

    /// Which release of the 0.1.15 commits the sources are: `skills` in the schema (the seed),
    /// keys with `-` (the 0.2 renderer, two weeks before v0.2.0), or neither (0.1).
    fn first_releases(&self) -> Option<(ReleaseId, &'static str, &'static str)> {
        if self.hyphen_keys() {
            return Some((releases::V0_2, "templates.ts", "reads keys with `-`, as from 0.2 on"));
        }
        let (_, schema) = self.schema.as_ref()?;
        Some(if schema.contains("skills:") {
            (releases::SEED, "schema.ts", "has `skills`, as from the seed on")
        } else {
            (releases::V0_1, "schema.ts", "has no `skills`, as before the seed")
        })
    }

    /// The range the renderer's layout gives when no version does.
    fn layout(&self, root: &Path) -> Option<Detected> {
        let (path, _) = self.templates.as_ref()?;
        let marker = path.clone();
        let (oldest, newest, why) = if self.reexports_engine() {
            (releases::V0_16_1, releases::NEWEST, "it re-exports the engine package, as from 0.16.1 on")
        } else if self.hyphen_keys() {
            // The renderer of the top-level `src/workflows/`, before the monorepo (v0.16.0).
            (
                releases::V0_2,
                releases::V0_15,
                "it reads keys with `-` beside a top-level `workflows/`, as from 0.2 to 0.16.0",
            )
        } else if self.templates.as_ref().is_some_and(|(_, text)| text.contains("(\\w+(?:\\.\\w+)*)")) {
            return Some(match self.first_releases() {
                Some((release, source, what)) => Detected {
                    release: Target::exact(release),
                    marker: root.join("src").join("workflows").join(source),
                    why: format!("`{source}` {what}"),
                },
                None => Detected {
                    release: Target { oldest: releases::V0_1, newest: releases::SEED },
                    marker,
                    why: "it reads keys without `-`, as before 0.2".to_string(),
                },
            });
        } else {
            // Any other file of that name is not a renderer.
            return None;
        };
        Some(Detected { release: Target { oldest, newest }, marker, why: why.to_string() })
    }
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
    const HYPHEN_RENDERER: &str = r"result.replace(/\{\{([\w-]+(?:\.[\w-]+)*)\}\}/g";

    #[test]
    fn the_server_version_names_the_release() {
        let package = |name: &str, version: &str| format!("{{\"name\": \"{name}\", \"version\": \"{version}\"}}");
        let found = detect_in(&[("package.json", &package("lastlight", "0.10.0"))]);
        assert_eq!(found.map(|(r, _)| r), Some("0.7.7".to_string()));
        let found = detect_in(&[("package.json", &package("lastlight-core", "0.23.4"))]);
        assert_eq!(found, Some(("0.23".into(), "`lastlight-core` 0.23.4".into())));
        // Another project's package.json says nothing about Last Light.
        assert_eq!(detect_in(&[("package.json", &package("my-bot", "0.23.0"))]), None);
    }

    #[test]
    fn version_0_1_15_is_refined_by_the_engine_sources() {
        let old = "{\"name\": \"lastlight\", \"version\": \"0.1.15\"}";
        let of = |files: &[(&str, &str)]| detect_in(files).map(|(r, _)| r);
        assert_eq!(of(&[("package.json", old)]).as_deref(), Some("0.1 to seed"));
        assert_eq!(
            of(&[("package.json", old), ("src/workflows/schema.ts", "skill: z.string()")]).as_deref(),
            Some("0.1")
        );
        let seed = [("package.json", old), ("src/workflows/schema.ts", "skills: z.array(z.string())")];
        assert_eq!(of(&seed).as_deref(), Some("seed"));
        assert_eq!(
            of(&[("package.json", old), ("src/workflows/templates.ts", HYPHEN_RENDERER)]).as_deref(),
            Some("0.2")
        );
    }

    #[test]
    fn without_a_version_the_layout_gives_a_range() {
        let of = |files: &[(&str, &str)]| detect_in(files).map(|(r, _)| r);
        assert_eq!(of(&[("src/workflows/templates.ts", SEED_RENDERER)]).as_deref(), Some("0.1 to seed"));
        let seed = [("src/workflows/templates.ts", SEED_RENDERER), ("src/workflows/schema.ts", "skills: z")];
        assert_eq!(of(&seed).as_deref(), Some("seed"));
        assert_eq!(of(&[("src/workflows/templates.ts", HYPHEN_RENDERER)]).as_deref(), Some("0.2 to 0.15"));
        let reexport = "export * from \"lastlight-workflow-engine\";\n";
        assert_eq!(of(&[("src/workflows/templates.ts", reexport)]).as_deref(), Some("0.16.1 to 0.25.6"));
        assert_eq!(of(&[("src/workflows/templates.ts", "export const x = 1;")]), None);
        assert_eq!(of(&[("packages/workflow-engine/package.json", "{}")]).as_deref(), Some("0.16.1 to 0.25.6"));
        assert_eq!(of(&[]), None);
    }
}
