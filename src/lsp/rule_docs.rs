//! Where a diagnostic's rule link (`codeDescription`) leads. With `[output] docs-url` set, to
//! the page under that base, as in JSON and SARIF. Without it, to something local, since the
//! published branch may be ahead of or behind the running binary: the generated page in the
//! checkout the binary was built from, when that page is there and current; else, for a client
//! that said it opens them (`initializationOptions.ruleDocuments`), a read-only
//! `stagelint:/docs/rules/<family>/<Name>.md` document whose text the `stagelint.explain`
//! command gives; else the published page.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use tower_lsp_server::ls_types::Uri;

use crate::registry::docs;

/// The URI scheme of the read-only rule documents.
pub const SCHEME: &str = "stagelint";

/// The command that answers a rule's page: its argument is a code, or a `stagelint:` URI.
pub const EXPLAIN_COMMAND: &str = "stagelint.explain";

/// How this server links rules: decided once, at `initialize`.
#[derive(Clone, Debug, Default)]
pub struct RuleLinks {
    /// The client opens `stagelint:` documents by asking [`EXPLAIN_COMMAND`].
    pub explain_documents: bool,
    /// The checkout whose `docs/rules` may hold the pages.
    checkout: Option<PathBuf>,
    /// The codes whose page there is what this binary would generate, read on first use.
    current: Arc<OnceLock<HashSet<&'static str>>>,
}

impl RuleLinks {
    /// Links for a client; the pages looked for in the checkout this binary was built from.
    pub fn new(explain_documents: bool) -> RuleLinks {
        RuleLinks::with_checkout(explain_documents, Some(PathBuf::from(env!("CARGO_MANIFEST_DIR"))))
    }

    /// Links with the pages looked for under `checkout` (`None`: nowhere).
    pub fn with_checkout(explain_documents: bool, checkout: Option<PathBuf>) -> RuleLinks {
        RuleLinks { explain_documents, checkout, current: Arc::default() }
    }

    /// The link of `code`'s page, for a file whose configuration sets `docs_base` or not.
    pub fn href(&self, docs_base: Option<&str>, code: &str) -> Option<Uri> {
        if let Some(base) = docs_base {
            return docs::url(base, code).parse().ok();
        }
        if let Some(checkout) = &self.checkout
            && self.current.get_or_init(|| current_pages(checkout)).contains(code)
        {
            return Uri::from_file_path(checkout.join(docs::path(code)));
        }
        if self.explain_documents {
            return format!("{SCHEME}:/{}", docs::path(code)).parse().ok();
        }
        docs::url(docs::DEFAULT_BASE, code).parse().ok()
    }
}

/// The page of the rule a code or a `stagelint:` document URI names (an alias or old name
/// gives its rule's page).
pub fn explain(argument: &str) -> Option<String> {
    let code = match argument.strip_prefix(SCHEME).and_then(|rest| rest.strip_prefix(":/")) {
        Some(path) => path.strip_prefix(docs::DIR)?.strip_prefix('/')?.strip_suffix(".md")?,
        None => argument,
    };
    crate::registry::rule(code).map(docs::page)
}

/// The codes whose page under `checkout` equals the generated one (a checkout that moved on
/// since the build may have pages this binary does not match).
fn current_pages(checkout: &Path) -> HashSet<&'static str> {
    crate::registry::all_rules()
        .filter(|rule| {
            let path = checkout.join(docs::path(rule.code));
            crate::source::read::read_text(&path).is_ok_and(|text| text == docs::page(rule))
        })
        .map(|rule| rule.code)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_base_wins() {
        let links = RuleLinks::new(true);
        let href = links.href(Some("https://example.com/s/"), "sm/UnknownTool").expect("a URI");
        assert_eq!(href.as_str(), "https://example.com/s/docs/rules/sm/UnknownTool.md");
    }

    #[test]
    fn without_a_base_the_current_page_of_the_checkout() {
        let checkout = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let href = RuleLinks::new(true).href(None, "sm/UnknownTool").expect("a URI");
        let expected = Uri::from_file_path(checkout.join("docs/rules/sm/UnknownTool.md")).expect("a file URI");
        assert_eq!(href, expected);
    }

    #[test]
    fn a_missing_or_stale_page_is_a_document_the_client_opens_or_the_published_page() {
        let temp = tempfile::tempdir().expect("temp dir");
        let dir = temp.path().to_path_buf();
        let page = dir.join("docs/rules/sm/UnknownTool.md");
        std::fs::create_dir_all(page.parent().expect("parent")).expect("dir");
        std::fs::write(&page, "# sm/UnknownTool\n\nAn older text.\n").expect("write");
        let links = RuleLinks::with_checkout(true, Some(dir.clone()));
        assert_eq!(
            links.href(None, "sm/UnknownTool").expect("a URI").as_str(),
            "stagelint:/docs/rules/sm/UnknownTool.md"
        );
        let links = RuleLinks::with_checkout(false, Some(dir.clone()));
        let published = format!("{}docs/rules/sm/UnknownTool.md", docs::DEFAULT_BASE);
        assert_eq!(links.href(None, "sm/UnknownTool").expect("a URI").as_str(), published);
    }

    /// Every rule, each way a link can go without a base: the checkout's page, a `stagelint:`
    /// document `explain` answers, the published page (a path that exists here).
    #[test]
    fn every_rule_links_to_a_page_that_exists() {
        let checkout = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let local = RuleLinks::new(false);
        let documents = RuleLinks::with_checkout(true, None);
        let published = RuleLinks::with_checkout(false, None);
        for rule in crate::registry::all_rules() {
            let page = checkout.join(docs::path(rule.code));
            assert!(page.is_file(), "{}", page.display());
            assert_eq!(local.href(None, rule.code), Uri::from_file_path(&page), "{}", rule.code);
            let document = documents.href(None, rule.code).expect("a URI");
            assert_eq!(explain(document.as_str()), Some(docs::page(rule)), "{}", rule.code);
            let url = published.href(None, rule.code).expect("a URI");
            assert_eq!(url.as_str().strip_prefix(docs::DEFAULT_BASE), Some(docs::path(rule.code).as_str()));
        }
    }

    #[test]
    fn explain_answers_codes_aliases_and_document_uris() {
        let rule = crate::registry::rule("steps/SR-ENTRY-002").expect("rule");
        assert_eq!(explain("steps/SR-ENTRY-002"), Some(docs::page(rule)));
        assert_eq!(explain("stagelint:/docs/rules/steps/SR-ENTRY-002.md"), Some(docs::page(rule)));
        assert_eq!(explain("steps/R-A6"), Some(docs::page(rule)), "an alias");
        assert_eq!(explain("stagelint:/docs/rules/sm/Nope.md"), None);
        assert_eq!(explain("stagelint:/elsewhere/sm/UnknownTool.md"), None);
    }
}
