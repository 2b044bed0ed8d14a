//! `steps/` findings graded by the runtime (how far a run gets to the step, whether the C3L
//! prompt loads) and raised by `[steps] validate-parity`, through the whole check.

use std::path::PathBuf;

use stagelint::config::Config;
use stagelint::diagnostic::Severity;
use stagelint::workspace::discover::{ConfigCache, discover};

/// Severities of `code` in a fixture checked with the default config (the fixture runner
/// pins every rule to its default severity, which hides graded findings).
fn severities(case: &str, code: &str) -> Vec<Severity> {
    let path = PathBuf::from("tests/fixtures/steps").join(case);
    let mut configs = ConfigCache::new(Some(Config::defaults(&path)));
    let workspace = discover(&[path], &mut configs).expect("fixture is discovered");
    stagelint::check::check(&workspace).into_iter().filter(|d| d.code == code).map(|d| d.severity).collect()
}

#[test]
fn graded_findings_keep_their_severity() {
    use Severity::{Error, Warning};
    assert_eq!(severities("R-A2/bad-work-step-no-supply-source", "steps/R-A2"), [Error]);
    // A closure prompt that fails to resolve is replaced by the verdict handler's, silently.
    assert_eq!(severities("R-A2/bad-no-supply-source", "steps/R-A2"), [Warning]);
    assert_eq!(severities("R-A2/bad-step-of-another-mode", "steps/R-A2"), [Warning]);
    assert_eq!(severities("PR-C3L-004/bad-missing-work-prompt", "steps/PR-C3L-004"), [Error]);
    assert_eq!(severities("PR-C3L-004/bad-missing-prompt", "steps/PR-C3L-004"), [Warning]);
    assert_eq!(severities("PR-C3L-004/bad-missing-retry-prompt", "steps/PR-C3L-004"), [Warning]);
    let frontmatter = "steps/PromptFrontmatterMismatch";
    assert_eq!(severities("PromptFrontmatterMismatch/bad-frontmatter-lists-undeclared", frontmatter), [Error]);
    assert_eq!(severities("PromptFrontmatterMismatch/bad-frontmatter-misses-declared", frontmatter), [Warning]);
}

#[test]
fn findings_in_steps_no_run_resolves_are_info() {
    use Severity::{Error, Info, Warning};
    assert_eq!(severities("R-A2/bad-unreached-and-section-steps", "steps/R-A2"), [Info, Info]);
    let placeholder = "steps/UnsubstitutedPlaceholder";
    assert_eq!(
        severities("UnsubstitutedPlaceholder/bad-custom-variable-and-blocks", placeholder),
        [Info, Warning, Warning, Warning, Warning, Warning]
    );
    let fallback = "steps/FallbackKeyInvalid";
    // The C3L prompt cannot load (breakdown rejects c3 `default`): the key is used and fails.
    assert_eq!(severities("FallbackKeyInvalid/bad-dropped-default-keys", fallback), [Error, Error]);
    // Prompts not read: it may fail; a step no entry reaches: nothing fails yet.
    assert_eq!(severities("FallbackKeyInvalid/bad-not-a-default-template", fallback), [Warning, Info]);
}

#[test]
fn validate_parity_raises_to_the_level_of_validate() {
    use Severity::{Error, Info, Warning};
    let parity = |case: &str, code: &str| {
        let path = PathBuf::from("tests/fixtures/steps").join(case);
        let config = Config::load(&path.join("stagelint.toml")).expect("the case's config");
        let mut configs = ConfigCache::new(Some(config));
        let workspace = discover(&[path], &mut configs).expect("fixture is discovered");
        stagelint::check::check(&workspace)
            .into_iter()
            .filter(|d| d.code == code)
            .map(|d| d.severity)
            .collect::<Vec<_>>()
    };
    let kinds = "steps/FLOW-KindBoundary";
    assert_eq!(severities("FLOW-KindBoundary/bad-crossing-kinds", kinds), [Info, Info, Info]);
    assert_eq!(parity("FLOW-KindBoundary/bad-validate-parity", kinds), [Error, Error, Error]);
    let orphan = "steps/FLOW-OrphanStep";
    assert_eq!(severities("FLOW-OrphanStep/bad-unreachable-steps", orphan), [Info, Info]);
    assert_eq!(parity("FLOW-OrphanStep/bad-validate-parity", orphan), [Error, Warning]);
}
