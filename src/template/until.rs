//! Last Light's `until:` / `skip_if:` mini-grammar. Anything outside it evaluates to false at
//! runtime (a loop then runs to `max_iterations`), so parsing says what an expression means.

/// What an expression tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Condition {
    /// `output.contains('x')`.
    OutputContains(String),
    /// `path == true|false`, `path != true|false`, `path == 'v'`, `path != 'v'`.
    Compare { path: String, equal: bool, value: Literal },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Literal {
    Bool(bool),
    Text(String),
}

/// Parses one expression; `Err` says why the engine would read it as false.
pub fn parse(text: &str) -> Result<Condition, String> {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix("output.contains(") {
        let arg = rest.strip_suffix(')').ok_or("`output.contains(` is not closed with `)`")?;
        return quoted(arg.trim())
            .map(Condition::OutputContains)
            .ok_or_else(|| "`output.contains` takes one quoted string: `output.contains('READY')`".to_string());
    }
    let (left, right, equal) = match (text.split_once("!="), text.split_once("==")) {
        (Some((l, r)), _) => (l, r, false),
        (None, Some((l, r))) => (l, r, true),
        (None, None) => {
            return Err("expected `output.contains('…')`, `path == value` or `path != value`".into());
        }
    };
    let path = left.trim();
    let valid_path = !path.is_empty()
        && path.split('.').all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    if !valid_path {
        return Err(format!("`{path}` is not a variable path (letters, digits, `_`, dots)"));
    }
    let right = right.trim();
    let value = match right {
        "true" => Literal::Bool(true),
        "false" => Literal::Bool(false),
        _ => Literal::Text(
            quoted(right)
                .ok_or_else(|| format!("`{right}` must be `true`, `false` or a quoted string (`'{right}'`)"))?,
        ),
    };
    Ok(Condition::Compare { path: path.to_string(), equal, value })
}

/// The contents of `'x'` or `"x"`.
fn quoted(text: &str) -> Option<String> {
    let quote = text.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let inner = text.strip_prefix(quote)?.strip_suffix(quote)?;
    (!inner.contains(quote)).then(|| inner.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar() {
        assert_eq!(parse("output.contains('READY')"), Ok(Condition::OutputContains("READY".into())));
        assert_eq!(parse(" output.contains(\"x y\") "), Ok(Condition::OutputContains("x y".into())));
        assert!(matches!(parse("scratch.done == true"), Ok(Condition::Compare { equal: true, .. })));
        assert!(matches!(parse("reason != 'dirty'"), Ok(Condition::Compare { equal: false, .. })));
        assert!(parse("output.includes('READY')").is_err());
        assert!(parse("output.contains(READY)").is_err());
        assert!(parse("done").is_err());
        assert!(parse("a == b").is_err());
        assert!(parse("a && b == true").is_err());
    }
}
