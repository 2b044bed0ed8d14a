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
    assert_eq!(release_severities("FallbackKeyInvalid/bad-dropped-default-keys", fallback), [Error, Error]);
    // Prompts not read: it may fail; a step no entry reaches: nothing fails yet.
    assert_eq!(release_severities("FallbackKeyInvalid/bad-not-a-default-template", fallback), [Warning, Info]);
}

/// Severities of `code` in a fixture checked with its own `stagelint.toml` (which names the
/// climpt release) when it has one.
fn release_severities(case: &str, code: &str) -> Vec<Severity> {
    let path = PathBuf::from("tests/fixtures/steps").join(case);
    let own = path.join("stagelint.toml");
    let config = if own.is_file() { Config::load(&own).expect("the case's config") } else { Config::defaults(&path) };
    let mut configs = ConfigCache::new(Some(config));
    let workspace = discover(&[path], &mut configs).expect("fixture is discovered");
    stagelint::check::check(&workspace).into_iter().filter(|d| d.code == code).map(|d| d.severity).collect()
}

/// The same construct weighs differently in the climpt releases that treat it differently.
#[test]
fn severities_follow_the_release() {
    use Severity::{Error, Info, Warning};
    // A missing system prompt: fatal from 1.13.23, an embedded one goes instead before.
    assert_eq!(release_severities("PR-SYSTEM-002/bad-no-system-prompt", "steps/PR-SYSTEM-002"), [Error]);
    assert_eq!(release_severities("PR-SYSTEM-002/bad-missing-before-1-13-23", "steps/PR-SYSTEM-002"), [Warning]);
    // Up to 1.12.3 a work step's C3L prompt is never sent: what is in it is latent.
    let placeholder = "steps/UnsubstitutedPlaceholder";
    assert!(
        release_severities("UnsubstitutedPlaceholder/bad-work-prompt-unread-in-1-11", placeholder)
            .iter()
            .all(|s| *s == Info)
    );
    // 1.12.4 passes `issue_number`, not the `issue` parameter; the prompt is replaced, not fatal.
    assert_eq!(release_severities("R-A2/bad-parameter-not-passed-in-1-12-4", "steps/R-A2"), [Warning]);
    // A seed-era registry with no pin: 1.12.5 to 1.13.22 are possible, and only 1.13.0 to 1.13.14
    // read a `fallbackKey`: an info naming them.
    assert_eq!(
        release_severities("FallbackKeyInvalid/bad-release-not-known", "steps/FallbackKeyInvalid"),
        [Info, Info]
    );
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
