//! The upstream releases each family models, as data: `stagelint explain versions` prints them,
//! and the families name a release (or a range of them) in the notes and messages that depend
//! on it. A finding is only right for a release; this table says which ones stagelint knows.

pub mod climpt;
pub mod lastlight;
mod model;

pub use model::{Has, ReleaseId, ReleaseSource, Releases, Target, Upstream, Version, assumed_note};

/// One release range of an upstream system, as stagelint models it.
#[derive(Debug)]
pub struct Release {
    /// The name written in `stagelint.toml` and shown in output (`"1.13"`, `"seed"`).
    pub name: &'static str,
    /// What the range covers, in upstream's own terms: versions, tags or dates.
    pub range: &'static str,
    /// The upstream commit, tag or pull request where this release's format begins.
    pub since: &'static str,
    /// The last version of the range, where its name is its first and the range is closed
    /// (`1.13.6` for `1.13.0`): messages then name the range whole (`climpt 1.13.0 to 1.13.6`).
    pub last: Option<&'static str>,
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
        last: None,
        changes: &[],
    }],
};

pub static CLIMPT: System = System {
    name: "climpt",
    family: "steps",
    detection: "per agent directory: `[steps] climpt-version`, else climpt's own `deno.json` when the tree is climpt, else the version a `deno.lock`, `deno.json` or `deno.jsonc` pins for `jsr:@aidevtool/climpt` (no version: the newest), else the agent's format (agent.json's layout, the `entryStepMapping` keys, the completion loop's keys, `fallbackKey`), else the newest; several releases left open make release-dependent findings infos",
    setting: Some("[steps] climpt-version"),
    releases: &[
        Release {
            name: "1.10.6",
            range: "v1.10.6 to v1.11.24 (2026-01-23 to 2026-02-17)",
            since: "tettuan/climpt@ac5fcb1, 7e47ae5 (v1.10.6: the structured gate as climpt checks it at start)",
            last: Some("1.11.24"),
            changes: &[],
        },
        Release {
            name: "1.12.0",
            range: "v1.12.0 to v1.12.3 (2026-02-21 to 2026-02-27)",
            since: "tettuan/climpt@5d7c983, a571972 (v1.12.0)",
            last: Some("1.12.3"),
            changes: &[
                "agent.json: the flat `behavior`, `prompts`, `github`, `worktree`, `logging` and `actions` move under `runner` (`runner.flow`, `runner.completion`, `runner.boundaries`, `runner.integrations`, `runner.execution`, `runner.actions`, `runner.logging`); the flat format is rejected (f07e562)",
            ],
        },
        Release {
            name: "1.12.4",
            range: "v1.12.4 (2026-03-01)",
            since: "tettuan/climpt@ead1eb7 (v1.12.4)",
            last: None,
            changes: &[
                "work steps' C3L prompts are sent (before, every step but a closure step got the completion handler's built-in prompt); a prompt that fails to resolve is still replaced by the handler's, silently",
            ],
        },
        Release {
            name: "1.12.5",
            range: "v1.12.5 (2026-03-04)",
            since: "tettuan/climpt@6184913, 78d6131 (v1.12.5)",
            last: None,
            changes: &[
                "`runner.completion` becomes `runner.verdict`, its types `poll:state`, `count:iteration`, `count:check`, `detect:keyword`, `detect:structured`, `detect:graph`, `meta:composite`, `meta:custom` (were `externalState`, `iterationBudget`, `checkBudget`, `keywordSignal`, `structuredSignal`, `stepMachine`, `composite`, `custom`), and `completionKeyword` becomes `verdictKeyword` (78d6131)",
                "`completionPatterns`, `completionSteps` and `completionConditions` become `failurePatterns`, `validationSteps` and `validationConditions` (6184913)",
                "`--validate` (167e9a8)",
                "the completion loop validates with the `validationSteps` entry of the verdict type (`VERDICT_CLOSURE_MAP`: `poll:state` → `closure.externalState`, `count:iteration` → `closure.iterate`, …; before, `completionSteps.closure.<completionType>`)",
            ],
        },
        Release {
            name: "1.13.0",
            range: "v1.13.0 to v1.13.6 (2026-03-12 to 2026-03-21)",
            since: "tettuan/climpt@fa5c18a, a6e150d, c069713 (v1.13.0)",
            last: Some("1.13.6"),
            changes: &[
                "every agent.json parameter, `iteration` and `completion_keyword` are UV variables of step prompts (fa5c18a), closure prompts get them too (c069713)",
                "a step whose C3L prompt file is missing gets the embedded prompt its `fallbackKey` names (a6e150d; 26 keys)",
                "`VERDICT_CLOSURE_MAP` names `closure.polling` for `poll:state` and `closure.iteration` for `count:iteration` (75a55cf)",
            ],
        },
        Release {
            name: "1.13.7",
            range: "v1.13.7 to v1.13.14 (2026-03-22 to 2026-03-28)",
            since: "tettuan/climpt@9f9c454, f75f907 (v1.13.7)",
            last: Some("1.13.14"),
            changes: &[
                "work and verification steps' prompts are C3L only: one that fails to resolve stops the run (9f9c454)",
                "a step's `inputs` are UV variables (the handoff channel, f75f907)",
                "a registry that fails its load checks stops the agent (f75f907; before, the runner logged `Failed to load steps registry` and ran on without it)",
            ],
        },
        Release {
            name: "1.13.15",
            range: "v1.13.15 to v1.13.22 (2026-03-30 to 2026-04-08)",
            since: "tettuan/climpt@8ce35ce, 91d13e3 (v1.13.15)",
            last: Some("1.13.22"),
            changes: &[
                "a work or verification step whose C3L prompt file is missing fails with PR-C3L-004: no embedded prompt by `fallbackKey` (8ce35ce)",
                "`max_iterations`, `remaining`, `previous_summary`, `check_count` and `max_checks` are UV variables of step prompts (91d13e3)",
            ],
        },
        Release {
            name: "1.13.23",
            range: "v1.13.23 to 4af87ad (2026-04-11 to 2026-04-20)",
            since: "tettuan/climpt@a1af6c4, c2d9cf6, e223069 (v1.13.23)",
            last: None,
            changes: &[
                "`fallbackKey`, `userPromptsBase`, `schemasBase` and `runner.flow.prompts.fallbackDir` are gone: ignored (c2d9cf6, e223069)",
                "no embedded prompts: a missing system prompt file fails with PR-SYSTEM-002 (a1af6c4)",
            ],
        },
    ],
};

pub static LAST_LIGHT: System = System {
    name: "Last Light",
    family: "lastlight",
    detection: "the server's version in the `package.json` beside `workflows/` (`lastlight` at the top level until v0.16.0, `lastlight-core` in `apps/server/` after), and the engine's and server's own sources when they are there (the schema, the renderer, `simple.ts`, the loader, the dispatcher, `pr-decisions.ts`, in `src/` or the monorepo's packages): each modelled change has a text those files hold from its commit on, and the release assumed is the newest whose changes are all there, never older than the version; a release shown in part (a checkout between two tags) or contradicted gives a range; without sources, the version alone (0.1.15, the version of both v0.1.x and the seed, gives 0.1 to seed); without a version, the sources alone; with nothing found, the newest release",
    setting: Some("[lastlight] release"),
    releases: &[
        Release {
            name: "0.1",
            range: "v0.0.2 and v0.1.1 to v0.1.15 (2026-04-12 and 13); the commits after v0.1.15 that hold some of the seed's changes are read as the range 0.1 to seed",
            since: "nearform/lastlight@v0.1.1",
            last: None,
            changes: &[],
        },
        Release {
            name: "seed",
            range: "dd02adf (2026-05-29; `package.json` still says 0.1.15), the commit the seed documents describe, and the 0.1.15 commits after it until the first of 0.2's changes",
            since: "nearform/lastlight@dd02adf",
            last: None,
            changes: &[
                "phases may name `skills` (staged beside the agent, never rendered; `skill` is sugar for one), `variant` and `loop.on_request_changes.fix_variant` (d91adb16), `unrestricted_egress` (13457ef1), `web_search` (6cf493b6); a skill's frontmatter is read by the agent's skill loader",
                "`{{name}}` reads a phase's output by its bare name too (e283f09d)",
                "variables `prePopulateBranch` (4b806995) and `variants` (d91adb16)",
            ],
        },
        Release {
            name: "0.2",
            range: "v0.2.0 to v0.4.0 (2026-06-26); keys with `-` from 5cecbdf0 (2026-06-15)",
            since: "nearform/lastlight@v0.2.0",
            last: None,
            changes: &[
                "template keys may contain `-`, as in `{{models.pr-fix}}` (5cecbdf0)",
                "helpers `artifactUrl` (2428b304) and `approvalUrl` (1b6bd6c0); variables `externalizeArtifacts`, `publicUrl`, `artifactBaseUrl` and `approvalId`",
                "keys `status_checklist` and `final_message` (4bd8f10d), `approval_artifact` (1b6bd6c0), `requires_sandbox` and `sandbox_image` (4400fda4, 2324e29a)",
                "an invalid workflow file throws (`Invalid workflow in <file>`) instead of being skipped, and two files of one `name` throw (0a5f4c53)",
            ],
        },
        Release {
            name: "0.5.1",
            range: "v0.5.1 to v0.7.6 (2026-06-27 to 07-05)",
            since: "nearform/lastlight@v0.5.1",
            last: None,
            changes: &[
                "phase types `bash` and `script`, with `command`, `script`, `runtime` and `timeout_seconds` (f744a963)",
                "`baseBranch` for the workflows run on a PR's head (`pr-review`, `demo`, `qa-test`, `verify`; caf81450)",
            ],
        },
        Release {
            name: "0.7.7",
            range: "v0.7.7 to v0.10.1 (2026-07-05 to 07-09)",
            since: "nearform/lastlight@v0.7.7",
            last: None,
            changes: &["phase type `post-review` (a4ae59b5)"],
        },
        Release {
            name: "0.10.2",
            range: "v0.10.2 to v0.10.5 (2026-07-09 to 07-12)",
            since: "nearform/lastlight@v0.10.2",
            last: None,
            changes: &["`prNumber` on the context (6606b716)"],
        },
        Release {
            name: "0.10.6",
            range: "v0.10.6 to v0.12.1 (2026-07-12)",
            since: "nearform/lastlight@v0.10.6",
            last: None,
            changes: &["`botMention` (5c7bb68b)"],
        },
        Release {
            name: "0.12.2",
            range: "v0.12.2 to v0.12.5 (2026-07-12)",
            since: "nearform/lastlight@v0.12.2",
            last: None,
            changes: &["`baseBranch` on every run (a23a2c97)"],
        },
        Release {
            name: "0.12.6",
            range: "v0.12.6 to v0.14.0 (2026-07-13)",
            since: "nearform/lastlight@v0.12.6",
            last: None,
            changes: &["`generic_loop.on_soft_failure` (6eca4b4f)"],
        },
        Release {
            name: "0.15",
            range: "v0.15.0 to v0.16.0 (2026-07-13 to 07-15)",
            since: "nearform/lastlight@v0.15.0",
            last: None,
            changes: &["`classification` (1506ffdc)"],
        },
        Release {
            name: "0.16.1",
            range: "v0.16.1 to v0.18.3 (2026-07-17 to 07-18)",
            since: "nearform/lastlight@v0.16.1",
            last: None,
            changes: &[
                "the engine moves to `packages/workflow-engine/`, the server and its `workflows/` to `apps/server/` (47721408, f67ecc88); the format does not change",
            ],
        },
        Release {
            name: "0.18.5",
            range: "v0.18.5 to v0.22.0 (2026-07-18 to 07-31)",
            since: "nearform/lastlight@v0.18.5",
            last: None,
            changes: &["`on_output.requires_marker` (b8b46fd4)"],
        },
        Release {
            name: "0.23",
            range: "v0.23.0 to v0.25.1 (2026-08-01 to 08-07)",
            since: "nearform/lastlight@v0.23.0",
            last: None,
            changes: &[
                "the PR render context (`prTitle`, `checksState`, `mayMerge`, `notesFile`, ...) on PR-scoped workflows: `pr_scoped: true`, or `pr-fix`, `pr-review`, `dependabot-ci-fix`, `dependabot-pr-merge` (0f1a872c, 76a23d8e)",
                "variables `fix` and `dependencies` (f4373ceb)",
                "`skip_if`, and `<path>.contains('x')` in conditions (33449be9)",
                "`max_iterations` and `timeout_seconds` may be `{ from, default }` (76a23d8e)",
            ],
        },
        Release {
            name: "0.25.2",
            range: "v0.25.2 to v0.25.5 (2026-08-07 to 08-10)",
            since: "nearform/lastlight@v0.25.2",
            last: None,
            changes: &["`chat` (f43dcc0f)"],
        },
        Release {
            name: "0.25.6",
            range: "v0.25.6 to v0.26.0 and 2d26144 (2026-08-13 to 08-20), the newest",
            since: "nearform/lastlight@v0.25.6",
            last: None,
            changes: &["a cron may run a `handler` instead of a `workflow` (2f2f6591)"],
        },
    ],
};

pub static ATOMIC: System = System {
    name: "@bastani/atomic",
    family: "atomic",
    detection: "per workflow file, from the SDK module it imports (`@bastani/atomic/workflows`, `@bastani/atomic-sdk`, `@bastani/workflows`) and the API it calls there (`defineWorkflow` or `workflow`), with the versions its project pins: the nearest `package.json` declaring `@bastani/atomic`, `@bastani/workflows` or `@bastani/atomic-sdk` (atomic's own packages pin their own version), else `[atomic] sdk-version`; a project pinning only releases older than 0.5 or from 0.10 on is not checked (`atomic/UnmodeledDialect`)",
    setting: Some("[atomic] sdk-version"),
    releases: &[
        Release {
            name: "0.5",
            range: "v0.5.x (v0.5.0 to v0.5.34): `defineWorkflow({...}).for<\"agent\">().run(...).compile()` from `@bastani/atomic/workflows`, discovered at `.atomic/workflows/<name>/<agent>/index.ts`",
            since: "bastani-inc/atomic@v0.5.0",
            last: None,
            changes: &[],
        },
        Release {
            name: "0.6–0.7",
            range: "v0.6.0 to v0.7.17: the same builder from `@bastani/atomic/workflows` (0.6) or `@bastani/atomic-sdk` (0.7), run by a worker CLI or registered with `hostLocalWorkflows([...])`",
            since: "bastani-inc/atomic@v0.6.0 (`@bastani/atomic-sdk` from v0.7.0, `hostLocalWorkflows` from v0.7.11)",
            last: None,
            changes: &[
                "`.for(\"agent\")` takes the agent as its argument; `compile()` throws without it (`atomic/MissingAgent`)",
                "no local discovery: a workflow is exported for a worker CLI or passed to `hostLocalWorkflows([...])` and registered in `.atomic/settings.json`",
                "inputs of type `\"integer\"`; input names `name`, `agent`, `detach`, `list`, `help`, `version`, `session`, `status` reserved (`atomic/ReservedInputName`)",
                "workflow option `source`; OpenCode session option `permission`",
            ],
        },
        Release {
            name: "0.8",
            range: "v0.8.0 to 0.8.31: `defineWorkflow(\"name\").description(…).input(…).output(…).worktreeFromInputs(…).run(…).compile()` from `@bastani/workflows`, with `Type` re-exported",
            since: "bastani-inc/atomic PR #936 (first released in v0.8.0)",
            last: None,
            changes: &[
                "flat files `.atomic/workflows/<name>.ts` (a subdirectory holds support modules) and package workflows named by `package.json` `atomic.workflows`; every export of a workflow file is shape-checked",
                "TypeBox schemas for inputs and outputs, and `run` returning the declared outputs, from v0.8.22 (PRs #1177, #1181); until v0.8.21 `.input(key, { type, required })` took v0.5's descriptors and there was no `.output`",
                "`ctx.task`, `ctx.chain`, `ctx.parallel`, `ctx.stage(name, options)`, `ctx.workflow`, `ctx.tool`, `ctx.ui`, `ctx.exit` replace the `ctx.stage(opts, client, session, callback)` sessions",
            ],
        },
        Release {
            name: "0.9",
            range: "0.9.0 and later (0.9.15 modelled): `export default workflow({ name?, description, inputs, outputs, run })` from `@bastani/workflows`, `Type` from `typebox`",
            since: "bastani-inc/atomic PR #1457 (first released in 0.9.0)",
            last: None,
            changes: &[
                "the builder removed with no shim: `defineWorkflow` and `Type` are no longer exported and `.compile()` is gone (`atomic/BuilderRemoved`, `atomic/RemovedImport`, each with a fix)",
                "`outputs` required (`outputs: {}` when there are none), `description` required, `name` optional (derived from the file name)",
            ],
        },
    ],
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
        assert_eq!(system_of("lastlight").map(|s| s.newest().name), Some("0.25.6"));
        assert_eq!(system_of("atomic").map(|s| s.newest().name), Some("0.9"));
    }

    #[test]
    fn versions_parse_as_tags_and_configs_write_them() {
        assert_eq!(Version::parse("v1.13.5"), Some(Version(1, 13, 5)));
        assert_eq!(Version::parse("0.12"), Some(Version(0, 12, 0)));
        assert_eq!(Version::parse("0.23.0-rc.1"), Some(Version(0, 23, 0)));
        for bad in ["1.13.x", "1..2", "1.2.3.4", "", "1.2.-3", "latest"] {
            assert_eq!(Version::parse(bad), None, "{bad}");
        }
    }
}
