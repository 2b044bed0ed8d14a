//! The upstream releases each family models, as data: `stagelint explain versions` prints them,
//! and the families name a release (or a range of them) in the notes and messages that depend
//! on it. A finding is only right for a release; this table says which ones stagelint knows.

/// One release range of an upstream system, as stagelint models it.
#[derive(Debug)]
pub struct Release {
    /// The name written in `stagelint.toml` and shown in output (`"1.13"`, `"seed"`).
    pub name: &'static str,
    /// What the range covers, in upstream's own terms: versions, tags or dates.
    pub range: &'static str,
    /// The upstream commit, tag or pull request where this release's format begins.
    pub since: &'static str,
    /// What changed from the release before it, one line each (none for the oldest).
    pub changes: &'static [&'static str],
}

/// An upstream system and the releases of it that a family models, oldest first.
#[derive(Debug)]
pub struct System {
    pub name: &'static str,
    pub family: &'static str,
    /// How a repository's release is found, in one sentence.
    pub detection: &'static str,
    /// The `stagelint.toml` key that overrides detection, or `None` when one release is modelled.
    pub setting: Option<&'static str>,
    pub releases: &'static [Release],
}

impl System {
    /// The release called `name`, if this system models one.
    pub fn release(&self, name: &str) -> Option<&'static Release> {
        self.releases.iter().find(|r| r.name == name)
    }

    /// The newest release modelled.
    pub fn newest(&self) -> &'static Release {
        self.releases.last().expect("every system models at least one release")
    }
}

/// The systems, in family order.
pub static SYSTEMS: &[&System] = &[&STUD_CLI, &CLIMPT, &LAST_LIGHT, &ATOMIC];

/// The system a family lints, if any.
pub fn system_of(family: &str) -> Option<&'static System> {
    SYSTEMS.iter().copied().find(|s| s.family == family)
}

pub static STUD_CLI: System = System {
    name: "stud-cli",
    family: "sm",
    detection: "one release modelled: the State-Machine wiki with stud-cli's code at 5893b9d",
    setting: None,
    releases: &[Release {
        name: "wiki",
        range: "the State-Machine wiki and stud-cli at 5893b9d",
        since: "Z-M-Huang/stud-cli@5893b9d",
        changes: &[],
    }],
};

pub static CLIMPT: System = System {
    name: "climpt",
    family: "steps",
    detection: "one release modelled; a registry with `fallbackKey`, `userPromptsBase` or `schemasBase` is read as the seed-era registry",
    setting: None,
    releases: &[Release {
        name: "1.13",
        range: "v1.13.x (2026-03-12 to 4af87ad, 2026-04-20)",
        since: "tettuan/climpt@v1.13.0",
        changes: &[],
    }],
};

pub static LAST_LIGHT: System = System {
    name: "Last Light",
    family: "lastlight",
    detection: "the engine's sources beside `workflows/`: `src/workflows/templates.ts` is the seed-era renderer, `packages/workflow-engine/` today's; neither means today's",
    setting: Some("[lastlight] engine"),
    releases: &[
        Release {
            name: "seed",
            range: "the seed-era engine in `src/workflows/` (dd02adf, 2026-05-29)",
            since: "nearform/lastlight@dd02adf",
            changes: &[],
        },
        Release {
            name: "head",
            range: "the engine package `packages/workflow-engine/` (2d26144, v0.26.0 and after, 2026-08-20)",
            since: "nearform/lastlight@2d26144",
            changes: &[
                "template keys may contain `-`",
                "helpers `artifactUrl` and `approvalUrl`",
                "phase types `bash`, `script` and `post-review`, `skip_if`, `requires_marker`",
                "the PR render context on PR-scoped workflows",
            ],
        },
    ],
};

pub static ATOMIC: System = System {
    name: "@bastani/atomic",
    family: "atomic",
    detection: "the SDK version a project pins in `package.json`, or `[atomic] sdk-version`",
    setting: Some("[atomic] sdk-version"),
    releases: &[Release {
        name: "0.5",
        range: "v0.5.x: `defineWorkflow({...}).for<agent>().run(...).compile()` from `@bastani/atomic/workflows`",
        since: "bastani-inc/atomic@v0.5.0",
        changes: &[],
    }],
};

/// `stagelint explain versions`: every system, its releases oldest first, and what changed.
pub fn versions_text() -> String {
    let mut out = String::from(
        "# Upstream releases stagelint models\n\nA finding is only right for a release. Each family lints for the release a repository targets: detected from the repository, overridable in `stagelint.toml`, and named in the output.\n",
    );
    for system in SYSTEMS {
        out.push_str(&format!("\n## {} (`{}/`)\n\n", system.name, system.family));
        out.push_str(&format!("Detection: {}.\n", system.detection));
        if let Some(setting) = system.setting {
            out.push_str(&format!("Override: `{setting}`.\n"));
        }
        for release in system.releases {
            out.push_str(&format!("\n- **{}**: {} (from {})\n", release.name, release.range, release.since));
            for change in release.changes {
                out.push_str(&format!("  - {change}\n"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_system_is_a_family_and_names_its_releases_once() {
        for system in SYSTEMS {
            assert!(crate::registry::is_family(system.family), "{} is no family", system.family);
            let mut names: Vec<&str> = system.releases.iter().map(|r| r.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), system.releases.len(), "{}: a release name twice", system.name);
            assert!(system.releases[0].changes.is_empty(), "{}: the oldest release changes nothing", system.name);
        }
        assert_eq!(system_of("lastlight").map(|s| s.newest().name), Some("head"));
    }
}
