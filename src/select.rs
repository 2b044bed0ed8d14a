//! `--select` and `--ignore`: which codes or families a run reports, applied after the config.

use crate::diagnostic::Diagnostic;
use crate::families;

/// The codes and families a run keeps. Entries are primary codes (aliases resolved) or
/// family names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// `None`: every code; otherwise only these.
    select: Option<Vec<String>>,
    ignore: Vec<String>,
}

impl Selection {
    /// Parses the option values (each comma-separated, the options repeatable). An unknown code
    /// is an error naming the option, with a did-you-mean.
    pub fn parse(select: &[String], ignore: &[String]) -> Result<Selection, String> {
        let select = if select.is_empty() { None } else { Some(resolve_all(select, "--select")?) };
        // `--select "$UNSET"` would otherwise keep nothing and pass silently.
        if select.as_ref().is_some_and(Vec::is_empty) {
            return Err("--select: no rule code or family given; name at least one, or drop the option".into());
        }
        Ok(Selection { select, ignore: resolve_all(ignore, "--ignore")? })
    }

    /// Whether findings of `code` are kept. A config that cannot be used is reported whatever
    /// `--select` names (as ruff reports a syntax error): the files it governs went unchecked.
    pub fn allows(&self, code: &str) -> bool {
        let family = crate::registry::family_of(code);
        let matches = |entries: &[String]| entries.iter().any(|e| e == code || e == family);
        let selected = code == crate::families::stagelint::InvalidConfig || self.select.as_deref().is_none_or(matches);
        selected && !matches(&self.ignore)
    }

    pub fn apply(&self, diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
        diagnostics.into_iter().filter(|d| self.allows(d.code)).collect()
    }
}

fn resolve_all(values: &[String], option: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for entry in values.iter().flat_map(|v| v.split(',')).map(str::trim).filter(|e| !e.is_empty()) {
        out.push(resolve(entry).map_err(|message| format!("{option}: {message}"))?);
    }
    Ok(out)
}

/// A code (or alias) to its primary code; a family name to itself.
fn resolve(entry: &str) -> Result<String, String> {
    if let Some(rule) = families::rule(entry) {
        return Ok(rule.code.to_string());
    }
    if families::is_family(entry) {
        return Ok(entry.to_string());
    }
    let hint = families::code_hint(entry, true);
    Err(format!("unknown rule code or family `{entry}`{hint} (`stagelint rules` lists them all)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(values: &[&str]) -> Vec<String> {
        values.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_empty_select_is_an_error() {
        let error = Selection::parse(&strings(&[""]), &[]).unwrap_err();
        assert!(error.starts_with("--select: no rule code"), "{error}");
        assert!(Selection::parse(&strings(&[" , "]), &[]).is_err());
        assert!(Selection::parse(&[], &strings(&[""])).is_ok(), "an empty --ignore ignores nothing");
    }

    #[test]
    fn select_restricts_and_ignore_removes() {
        let all = Selection::parse(&[], &[]).unwrap();
        assert!(all.allows("sm/UnknownTool"));
        let some = Selection::parse(&strings(&["sm", "steps/SR-VALID-003"]), &strings(&["sm/UnknownTool"])).unwrap();
        assert!(some.allows("sm/UnknownField"));
        assert!(some.allows("steps/SR-VALID-003"));
        assert!(!some.allows("sm/UnknownTool"));
        assert!(!some.allows("lastlight/UnknownKey"));
    }

    #[test]
    fn comma_lists_and_aliases() {
        let rule = families::all_rules().find(|r| !r.aliases.is_empty()).expect("a rule with an alias");
        let alias = format!("{}/{}", rule.family(), rule.aliases[0]);
        let selection = Selection::parse(&[format!("sm/UnknownTool, {alias}")], &[]).unwrap();
        assert!(selection.allows(rule.code));
        assert!(selection.allows("sm/UnknownTool"));
        assert!(!selection.allows("sm/UnknownField"));
    }

    #[test]
    fn unknown_codes_are_errors_with_a_suggestion() {
        let error = Selection::parse(&[], &strings(&["sm/UnknownTol"])).unwrap_err();
        assert!(error.starts_with("--ignore: unknown rule code or family `sm/UnknownTol`"), "{error}");
        assert!(error.contains("did you mean `sm/UnknownTool`?"), "{error}");
        let error = Selection::parse(&strings(&["stesp"]), &[]).unwrap_err();
        assert!(error.contains("did you mean `steps`?"), "{error}");
    }
}
