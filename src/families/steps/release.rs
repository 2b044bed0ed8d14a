//! What differs between the climpt releases the `steps/` rules model: one row of facts per
//! release of `registry::releases::CLIMPT`, and how a finding that depends on them is graded
//! for the releases an agent may run on (its target, detected by `workspace::climpt`).

use crate::diagnostic::Severity;
use crate::registry::releases::climpt::{ReleaseId, Releases};
use crate::workspace::climpt::{Assumed, COMPLETION_TYPES, VERDICT_TYPES};

/// What one climpt release does, as far as the rules need to know; `FACTS[i]` is
/// `CLIMPT.releases[i]`.
#[derive(Debug)]
pub struct Facts {
    pub layout: Layout,
    pub retry: Retry,
    /// Which steps' C3L prompts a run sends.
    pub prompts: Prompts,
    /// Whether a step whose C3L prompt file is missing gets the embedded prompt its
    /// `fallbackKey` names (which must be one of [`FALLBACK_KEYS`]).
    pub embedded: bool,
    /// Whether `fallbackKey`, `userPromptsBase`, `schemasBase` and `fallbackDir` are part of the
    /// format (climpt's schema requires `fallbackKey`).
    pub seed_keys: bool,
    /// The UV variables a step prompt is given.
    pub uv: Uv,
    /// Whether a missing system prompt file stops the agent (before: an embedded one is sent).
    pub system_prompt_required: bool,
    /// Whether climpt has `--validate`.
    pub validate: bool,
    /// Which `validationSteps` entry the completion loop validates with.
    pub validation: Validation,
    /// Whether a registry that fails its load checks stops the agent (before 1.13.7 the runner
    /// logs `Failed to load steps registry` and runs on without the registry).
    pub registry_fatal: bool,
}

/// How the completion loop picks its `validationSteps` (`completionSteps`) entry: by the
/// agent's verdict (completion) type, whichever closure step emitted `closing`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Validation {
    /// `closure.<completionType>` if defined, else `closure.iterate` for `iterationBudget`
    /// (`completion-chain.ts` `getCompletionStepId`, up to 1.12.4).
    ByCompletionType,
    /// `VERDICT_CLOSURE_MAP` of 1.12.5: `poll:state` → `closure.externalState`, …
    FirstMap,
    /// `VERDICT_CLOSURE_MAP` from 1.13.0 (75a55cf): `poll:state` → `closure.polling`, …
    Map,
}

/// How agent.json is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `behavior`, `prompts`, `github`, `worktree`, `logging`, `actions` at the top.
    Flat,
    /// `runner.*` with `runner.completion`.
    Completion,
    /// `runner.*` with `runner.verdict`.
    Verdict,
}

/// The names of the completion loop's registry keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retry {
    /// `completionPatterns`, `completionSteps`, `completionConditions`.
    Completion,
    /// `failurePatterns`, `validationSteps`, `validationConditions`.
    Validation,
}

/// Which step prompts a run sends from their C3L files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prompts {
    /// Closure steps only; every other step gets the completion handler's built-in prompt.
    ClosureOnly,
    /// Work and closure steps; a verification step gets the handler's prompt.
    WorkAndClosure,
    /// Every step a run reaches.
    Flow,
}

/// The UV variables a step prompt gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Uv {
    /// Closure prompts get `issue_number` (from `--issue`); no other prompt is read.
    IssueOnly,
    /// `issue_number` and, from the second iteration, `completed_iterations` (closure prompts
    /// `issue_number` only).
    IssueAndIterations,
    /// Every agent.json parameter (and `issue_number` for `issue`), `iteration`,
    /// `completed_iterations` and `completion_keyword`.
    Parameters,
    /// … with a step's `inputs` (handoff), without `issue_number`.
    Handoff,
    /// … and the verdict handler's `max_iterations`, `remaining`, `previous_summary`,
    /// `check_count`, `max_checks`.
    All,
}

pub static FACTS: [Facts; 8] = [
    // 1.10.6
    Facts {
        layout: Layout::Flat,
        retry: Retry::Completion,
        prompts: Prompts::ClosureOnly,
        embedded: false,
        seed_keys: true,
        uv: Uv::IssueOnly,
        system_prompt_required: false,
        validation: Validation::ByCompletionType,
        registry_fatal: false,
        validate: false,
    },
    // 1.12.0
    Facts {
        layout: Layout::Completion,
        retry: Retry::Completion,
        prompts: Prompts::ClosureOnly,
        embedded: false,
        seed_keys: true,
        uv: Uv::IssueOnly,
        system_prompt_required: false,
        validation: Validation::ByCompletionType,
        registry_fatal: false,
        validate: false,
    },
    // 1.12.4
    Facts {
        layout: Layout::Completion,
        retry: Retry::Completion,
        prompts: Prompts::WorkAndClosure,
        embedded: false,
        seed_keys: true,
        uv: Uv::IssueAndIterations,
        system_prompt_required: false,
        validation: Validation::ByCompletionType,
        registry_fatal: false,
        validate: false,
    },
    // 1.12.5
    Facts {
        layout: Layout::Verdict,
        retry: Retry::Validation,
        prompts: Prompts::WorkAndClosure,
        embedded: false,
        seed_keys: true,
        uv: Uv::IssueAndIterations,
        system_prompt_required: false,
        validation: Validation::FirstMap,
        registry_fatal: false,
        validate: true,
    },
    // 1.13.0
    Facts {
        layout: Layout::Verdict,
        retry: Retry::Validation,
        prompts: Prompts::WorkAndClosure,
        embedded: true,
        seed_keys: true,
        uv: Uv::Parameters,
        system_prompt_required: false,
        validation: Validation::Map,
        registry_fatal: false,
        validate: true,
    },
    // 1.13.7
    Facts {
        layout: Layout::Verdict,
        retry: Retry::Validation,
        prompts: Prompts::Flow,
        embedded: true,
        seed_keys: true,
        uv: Uv::Handoff,
        system_prompt_required: false,
        validation: Validation::Map,
        registry_fatal: true,
        validate: true,
    },
    // 1.13.15
    Facts {
        layout: Layout::Verdict,
        retry: Retry::Validation,
        prompts: Prompts::Flow,
        embedded: false,
        seed_keys: true,
        uv: Uv::All,
        system_prompt_required: false,
        validation: Validation::Map,
        registry_fatal: true,
        validate: true,
    },
    // 1.13.23
    Facts {
        layout: Layout::Verdict,
        retry: Retry::Validation,
        prompts: Prompts::Flow,
        embedded: false,
        seed_keys: false,
        uv: Uv::All,
        system_prompt_required: true,
        validation: Validation::Map,
        registry_fatal: true,
        validate: true,
    },
];

/// The keys of the embedded prompts of climpt 1.13.0 to 1.13.22 (`agents/prompts/fallback.ts`,
/// `DefaultFallbackProvider.templates`; `system` included: `--validate` checks membership with
/// `key in templates`). Releases before 1.13.0 never use a step's `fallbackKey`.
pub const FALLBACK_KEYS: [&str; 26] = [
    "system",
    "initial_iterate",
    "continuation_iterate",
    "initial_manual",
    "continuation_manual",
    "initial_keyword",
    "continuation_keyword",
    "initial_issue",
    "continuation_issue",
    "initial_issue_label_only",
    "continuation_issue_label_only",
    "initial_project",
    "continuation_project",
    "continuation_project_preparation",
    "continuation_project_processing",
    "continuation_project_review",
    "polling_closure_default",
    "issue_closure_default",
    "review_closure_default",
    "facilitation_closure_default",
    "project_closure_default",
    "iteration_closure_default",
    "project_continuation_closure_default",
    "statuscheck_continuation_default",
    "initial_structured_signal",
    "continuation_structured_signal",
];

impl Layout {
    /// What gives a step its prompt when climpt does not send the C3L file.
    pub fn handler(self) -> &'static str {
        match self {
            Layout::Verdict => "verdict handler",
            Layout::Flat | Layout::Completion => "completion handler",
        }
    }

    /// The agent.json types this layout's verdict (or completion) names.
    pub fn types(self) -> &'static [&'static str; 8] {
        match self {
            Layout::Verdict => &VERDICT_TYPES,
            Layout::Flat | Layout::Completion => &COMPLETION_TYPES,
        }
    }

    /// The dotted path of a setting in this layout, given by its `runner.*` path of climpt
    /// 1.12.5 and later (`runner.verdict.type` is `behavior.completionType` in the flat layout).
    pub fn path(self, current: &'static str) -> &'static str {
        const FLAT: &[(&str, &str)] = &[
            ("runner.verdict", "behavior"),
            ("runner.verdict.type", "behavior.completionType"),
            ("runner.verdict.config", "behavior.completionConfig"),
            ("runner.flow.systemPromptPath", "behavior.systemPromptPath"),
            ("runner.flow.defaultModel", "behavior.defaultModel"),
            ("runner.flow.prompts", "prompts"),
            ("runner.flow.prompts.registry", "prompts.registry"),
            ("runner.boundaries.permissionMode", "behavior.permissionMode"),
            ("runner.integrations.github", "github"),
            ("runner.integrations.github.enabled", "github.enabled"),
            ("runner.integrations.github.defaultClosureAction", "github.defaultClosureAction"),
            ("runner.logging.format", "logging.format"),
        ];
        match self {
            Layout::Verdict => current,
            Layout::Completion => match current {
                "runner.verdict" => "runner.completion",
                "runner.verdict.type" => "runner.completion.type",
                "runner.verdict.config" => "runner.completion.config",
                other => other,
            },
            Layout::Flat => FLAT.iter().find(|(c, _)| *c == current).map_or(current, |(_, flat)| flat),
        }
    }

    /// The config key of a `detect:keyword` verdict (`keywordSignal` completion).
    pub fn keyword(self) -> &'static str {
        match self {
            Layout::Verdict => "verdictKeyword",
            Layout::Flat | Layout::Completion => "completionKeyword",
        }
    }

    /// How the verdict is called in messages.
    pub fn noun(self) -> &'static str {
        match self {
            Layout::Verdict => "verdict",
            Layout::Flat | Layout::Completion => "completion",
        }
    }
}

impl Retry {
    /// `failurePatterns` (or `completionPatterns`).
    pub fn patterns(self) -> &'static str {
        match self {
            Retry::Completion => "completionPatterns",
            Retry::Validation => "failurePatterns",
        }
    }

    /// `validationSteps` (or `completionSteps`).
    pub fn steps(self) -> &'static str {
        match self {
            Retry::Completion => "completionSteps",
            Retry::Validation => "validationSteps",
        }
    }

    /// `validationConditions` (or `completionConditions`).
    pub fn conditions(self) -> &'static str {
        match self {
            Retry::Completion => "completionConditions",
            Retry::Validation => "validationConditions",
        }
    }
}

/// The `validationSteps` (`completionSteps`) key a run of the agent type `kind` validates with
/// in a release (`kind` in either naming), in climpt's lookup order.
pub fn validation_step_ids(facts: &Facts, kind: &str) -> Vec<String> {
    const FIRST_MAP: [&str; 8] = [
        "closure.externalState",
        "closure.iterate",
        "closure.check",
        "closure.keyword",
        "closure.structured",
        "closure.graph",
        "closure.composite",
        "closure.custom",
    ];
    const MAP: [&str; 8] = [
        "closure.polling",
        "closure.iteration",
        "closure.check",
        "closure.keyword",
        "closure.structured",
        "closure.graph",
        "closure.composite",
        "closure.custom",
    ];
    let verdict_index = VERDICT_TYPES.iter().chain(COMPLETION_TYPES.iter()).position(|t| *t == kind).map(|i| i % 8);
    match facts.validation {
        Validation::ByCompletionType => {
            let completion = verdict_index.map_or(kind, |i| COMPLETION_TYPES[i]);
            let own = format!("closure.{completion}");
            match completion {
                "iterationBudget" => vec![own, "closure.iterate".to_string()],
                _ => vec![own],
            }
        }
        Validation::FirstMap => verdict_index.map(|i| vec![FIRST_MAP[i].to_string()]).unwrap_or_default(),
        Validation::Map => verdict_index.map(|i| vec![MAP[i].to_string()]).unwrap_or_default(),
    }
}

/// The verdict type of climpt 1.12.5 and later that a completion type became, and back.
pub fn renamed_type(name: &str) -> Option<&'static str> {
    let at =
        |list: &[&'static str; 8], other: &[&'static str; 8]| list.iter().position(|t| *t == name).map(|i| other[i]);
    at(&COMPLETION_TYPES, &VERDICT_TYPES).or_else(|| at(&VERDICT_TYPES, &COMPLETION_TYPES))
}

/// The releases of a target with their facts, oldest first.
pub fn facts_of(target: &Assumed) -> impl DoubleEndedIterator<Item = &'static Facts> + '_ {
    target.releases.iter().map(|r| &FACTS[r.index()])
}

/// What a run of one release does with a step's C3L prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Sends it; a prompt that fails to resolve stops the run.
    Fatal,
    /// Sends it; one that fails to resolve is replaced, silently, by the handler's built-in
    /// prompt (closure steps in every release: the closure adapter catches the failure).
    Replaced,
    /// Never reads it: the handler's built-in prompt is sent.
    Unread,
}

/// What `facts`' release does with the prompt of a step of kind `kind`.
pub fn fate(facts: &Facts, kind: Option<crate::families::steps::model::StepKind>) -> Fate {
    use crate::families::steps::model::StepKind;
    match (facts.prompts, kind) {
        (_, Some(StepKind::Closure)) => Fate::Replaced,
        (Prompts::ClosureOnly, _) => Fate::Unread,
        (Prompts::WorkAndClosure, Some(StepKind::Work)) => Fate::Replaced,
        (Prompts::WorkAndClosure, _) => Fate::Unread,
        (Prompts::Flow, _) => Fate::Fatal,
    }
}

/// How a defect of a step's prompt weighs across the releases an agent may run on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptGrade {
    /// Every release sends the prompt and stops on a failure.
    Fatal,
    /// Every release sends it; in these a failure is replaced by the handler's prompt (`all`:
    /// in every release of the target).
    Replaced { releases: String, all: bool },
    /// Only these releases send it.
    Partly(String),
    /// No release of the target (`now`) reads it; `later` ones do.
    Unread { now: String, later: String },
}

/// The [`PromptGrade`] of a step of kind `kind` for an agent's target.
pub fn prompt_grade(target: &Assumed, kind: Option<crate::families::steps::model::StepKind>) -> PromptGrade {
    let (mut fatal, mut replaced, mut unread) = (Releases::none(), Releases::none(), Releases::none());
    for release in target.releases.iter() {
        match fate(&FACTS[release.index()], kind) {
            Fate::Fatal => fatal = fatal.with(release),
            Fate::Replaced => replaced = replaced.with(release),
            Fate::Unread => unread = unread.with(release),
        }
    }
    let sent = fatal.or(replaced);
    if sent.is_empty() {
        let later = ReleaseId::all()
            .filter(|r| fate(&FACTS[r.index()], kind) != Fate::Unread)
            .fold(Releases::none(), Releases::with);
        return PromptGrade::Unread { now: target.releases.named(), later: later.named() };
    }
    if !unread.is_empty() {
        return PromptGrade::Partly(sent.named());
    }
    match replaced.is_empty() {
        true => PromptGrade::Fatal,
        false => PromptGrade::Replaced { releases: replaced.named(), all: fatal.is_empty() },
    }
}

impl PromptGrade {
    /// A finding about the step's prompt whose `default` severity and `consequence` hold where
    /// the run stops on it: graded, with what happens instead where it does not.
    pub fn apply(&self, d: crate::diagnostic::Diagnostic, handler: &str) -> crate::diagnostic::Diagnostic {
        self.apply_with(d, handler, true)
    }

    /// [`PromptGrade::apply`] for a defect that is one whether or not a failure stops the run
    /// (text that reaches the model as it is): only where the prompt is read.
    pub fn apply_when_sent(&self, d: crate::diagnostic::Diagnostic, handler: &str) -> crate::diagnostic::Diagnostic {
        self.apply_with(d, handler, false)
    }

    fn apply_with(
        &self,
        mut d: crate::diagnostic::Diagnostic,
        handler: &str,
        fails: bool,
    ) -> crate::diagnostic::Diagnostic {
        match self {
            PromptGrade::Fatal => d,
            PromptGrade::Replaced { releases, all } if fails => {
                let instead = format!("climpt sends the {handler}'s built-in prompt instead, silently");
                match d.message.find("; climpt fails with") {
                    // Every release replaces the prompt: say that instead of the failure.
                    Some(at) if *all => {
                        let end = d.message[at + 2..].find(" (").map_or(d.message.len(), |i| at + 2 + i);
                        d.message.replace_range(at..end, &format!("; the prompt fails to resolve, and {instead}"));
                    }
                    None if *all => d.message.push_str(&format!(" (the prompt cannot load, so {instead})")),
                    _ => d.message.push_str(&format!(" (in {releases} the run does not stop: {instead})")),
                }
                let level = d.severity.min(Severity::Warning);
                d.with_severity(level)
            }
            PromptGrade::Replaced { .. } => d,
            PromptGrade::Partly(releases) => {
                d.message.push_str(&format!(
                    " (only {releases} send this prompt; the other releases this agent may run on send the {handler}'s built-in one)"
                ));
                d.with_severity(Severity::Info)
            }
            PromptGrade::Unread { now, later } => {
                d.message.push_str(&format!(
                    " ({now} never sends this prompt: the {handler}'s built-in one goes instead; {later} send it)"
                ));
                d.with_severity(Severity::Info)
            }
        }
    }
}

/// How a finding whose weight depends on the release reads for a target.
#[derive(Debug, PartialEq, Eq)]
pub enum Graded {
    /// A defect in no release the agent may run on.
    None,
    /// A defect in every one: at the lowest severity they give it.
    All(Severity),
    /// A defect only in some: an info naming them ("climpt 1.13.7 to 1.13.22").
    Some(String),
}

/// Grades a finding by release: `severity` says what the defect weighs in one release (`None`:
/// no defect there).
pub fn grade(target: &Assumed, severity: impl Fn(&Facts) -> Option<Severity>) -> Graded {
    let mut defect = Releases::none();
    let mut lowest: Option<Severity> = None;
    let mut all = true;
    for release in target.releases.iter() {
        match severity(&FACTS[release.index()]) {
            Some(level) => {
                defect = defect.with(release);
                lowest = Some(lowest.map_or(level, |l| l.min(level)));
            }
            None => all = false,
        }
    }
    match lowest {
        None => Graded::None,
        Some(level) if all => Graded::All(level),
        Some(_) => Graded::Some(defect.named()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::releases::CLIMPT;

    #[test]
    fn the_facts_follow_the_release_table() {
        // One row per release, in the same order (each row is commented with its name).
        assert_eq!(FACTS.len(), CLIMPT.releases.len());
        assert_eq!(renamed_type("externalState"), Some("poll:state"));
        assert_eq!(renamed_type("meta:custom"), Some("custom"));
        assert_eq!(Layout::Flat.path("runner.verdict.type"), "behavior.completionType");
        assert_eq!(Layout::Completion.path("runner.verdict.config"), "runner.completion.config");
        let ids = |release: usize, kind: &str| validation_step_ids(&FACTS[release], kind);
        assert_eq!(ids(0, "iterationBudget"), ["closure.iterationBudget", "closure.iterate"]);
        assert_eq!(ids(0, "externalState"), ["closure.externalState"]);
        assert_eq!(ids(3, "poll:state"), ["closure.externalState"]);
        assert_eq!(ids(7, "poll:state"), ["closure.polling"]);
        assert_eq!(ids(7, "externalState"), ["closure.polling"]);
    }
}
