//! Which release line of atomic a workflow file is written for, decided per file from the SDK
//! module it imports (and the API it calls there) with the versions its project pins
//! (`package.json`, `[atomic] sdk-version`), never from its place alone: a 0.9 `workflow({...})`
//! file kept in v0.5's `<name>/<agent>/index.ts` layout is a 0.9 file in the wrong place.

use crate::config::SdkVersion;
use crate::families::atomic::project::{Project, Sdk};
use crate::workspace::{SourceFile, atomic};

/// A dialect of the authoring API, oldest first (`registry::releases::ATOMIC` lists them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dialect {
    /// v0.5: `defineWorkflow({...}).for<"agent">().run(...).compile()` from
    /// `@bastani/atomic/workflows`, discovered at `.atomic/workflows/<name>/<agent>/index.ts`.
    Seed,
    /// 0.6 and 0.7: the same builder with `.for("agent")` taken at run time, from
    /// `@bastani/atomic/workflows` (0.6) or `@bastani/atomic-sdk` (0.7), run by a worker CLI or
    /// registered with `hostLocalWorkflows([...])`; no local discovery.
    Sdk,
    /// 0.8: `defineWorkflow("name").description(…).input(…).output(…).run(…).compile()` from
    /// `@bastani/workflows`, flat files `.atomic/workflows/<name>.ts`.
    Builder,
    /// 0.9 and later: `workflow({ name?, description, inputs, outputs, run })`.
    Current,
}

impl Dialect {
    /// The release line, as `explain versions` names it (`registry::releases::ATOMIC`, oldest
    /// first, one release per dialect).
    pub fn release(self) -> &'static str {
        let index = match self {
            Dialect::Seed => 0,
            Dialect::Sdk => 1,
            Dialect::Builder => 2,
            Dialect::Current => 3,
        };
        crate::registry::releases::ATOMIC.releases[index].name
    }

    /// The packages whose pins say which atomic runs a file of this dialect, most telling first.
    fn packages(self) -> &'static [&'static str] {
        match self {
            // A v0.5 file whose project runs 0.6 or 0.7 is read as that dialect.
            Dialect::Seed => &["@bastani/atomic", "@bastani/atomic-sdk"],
            Dialect::Sdk => &["@bastani/atomic-sdk", "@bastani/atomic"],
            Dialect::Builder | Dialect::Current => &["@bastani/workflows", "@bastani/atomic"],
        }
    }
}

/// The first release of 0.9's `workflow({...})` (atomic PR #1457), which removed the builder.
pub(super) static WORKFLOW_API: SdkVersion = SdkVersion::plain(0, 9, 0);
/// 0.8 moved authoring to `@bastani/workflows` (`@bastani/atomic/workflows` serves it), whose
/// `defineWorkflow` takes the name: the object-form builder of v0.5 to 0.7 no longer loads.
pub(super) static BUILDER_LINE: SdkVersion = SdkVersion::plain(0, 8, 0);
/// 0.8.22 gave the builder TypeBox schemas and explicit outputs (PRs #1177, #1181): before it,
/// `.input(key, …)` took v0.5's `{ type: "text", required }` descriptors and a run returned
/// whatever it liked.
static OUTPUT_CONTRACTS: SdkVersion = SdkVersion::plain(0, 8, 22);
/// 0.6 took `.for("agent")` at run time and dropped v0.5's local discovery.
static SDK_LINE: SdkVersion = SdkVersion::plain(0, 6, 0);
/// The first release past the ones stagelint models (0.5 to 0.9.15).
static TOO_NEW: SdkVersion = SdkVersion::plain(0, 10, 0);
/// The oldest release modelled: 0.4 had another API (`WorkflowSDK` graphs).
static TOO_OLD: SdkVersion = SdkVersion::plain(0, 5, 0);

/// A file's dialect and what decided it.
pub(super) struct Judged {
    pub dialect: Dialect,
    /// The pins consulted, when the project has any.
    pub sdk: Option<Sdk>,
    /// Why stagelint leaves the file alone: the pins name a release it does not model.
    pub unmodeled: Option<String>,
}

impl Judged {
    /// Whether the pins are all older than 0.8.22, where the builder had no output contract and
    /// took input descriptors.
    pub fn before_contracts(&self) -> bool {
        self.sdk.as_ref().is_some_and(|sdk| sdk.range.all_older_than(&OUTPUT_CONTRACTS))
    }
}

/// Decides the dialect of `file`.
pub(super) fn judge(file: &SourceFile, project: &Project) -> Judged {
    let text = file.text.as_str();
    let builder = text.contains("defineWorkflow");
    let mut dialect = match atomic::sdk_module(text) {
        Some(atomic::Module::AtomicWorkflows) => Dialect::Seed,
        Some(atomic::Module::AtomicSdk) => Dialect::Sdk,
        Some(atomic::Module::Workflows | atomic::Module::OwnAuthoring) if builder => Dialect::Builder,
        Some(atomic::Module::Workflows | atomic::Module::OwnAuthoring) => Dialect::Current,
        // No SDK import: only a discovery layout claimed the file; its place is the hint.
        None if atomic::layout(&file.path).is_some() => Dialect::Seed,
        None if builder => Dialect::Builder,
        None => Dialect::Current,
    };
    let sdk = project.sdk_of(file, dialect.packages());
    // `@bastani/atomic/workflows` served 0.6 too, with the agent taken at run time.
    if dialect == Dialect::Seed && sdk.as_ref().is_some_and(|s| s.range.all_at_least(&SDK_LINE)) {
        dialect = Dialect::Sdk;
    }
    let unmodeled = sdk.as_ref().and_then(|sdk| {
        if sdk.range.all_at_least(&TOO_NEW) {
            return Some(format!(
                "this project runs atomic {} (from {}), newer than the releases stagelint models (0.5 to 0.9.15); the file is not checked",
                sdk.range.text,
                sdk.source()
            ));
        }
        sdk.range.all_older_than(&TOO_OLD).then(|| {
            format!(
                "this project runs atomic {} (from {}), older than the releases stagelint models (0.5 to 0.9.15); the file is not checked",
                sdk.range.text,
                sdk.source()
            )
        })
    });
    Judged { dialect, sdk, unmodeled }
}

/// Whether the project's pins admit 0.9 or later (also when nothing is pinned: a new install
/// gets the newest), and whether they require it.
pub(super) fn current_api(sdk: Option<&Sdk>) -> (bool, bool) {
    match sdk {
        None => (true, false),
        Some(sdk) => (sdk.range.may_reach(&WORKFLOW_API), sdk.range.all_at_least(&WORKFLOW_API)),
    }
}
