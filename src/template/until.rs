//! Last Light's `until:` / `skip_if:` mini-grammar. Anything outside it evaluates to false at
//! runtime (a loop then runs to `max_iterations`), so parsing says what an expression means.
//!
//! From Last Light 0.23 on, `evalUntilExpression` (`loop-eval.ts`) also reads
//! `<dotted.path>.contains('x')`, which lets a `skip_if` test another phase's output; before,
//! it reads `.contains` only on `output`.

/// What an expression tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Condition {
    /// `output.contains('x')` (`path` is `output`), or `a.b.contains('x')` from 0.23 on.
    Contains { path: String, needle: String },
    /// `path == true|false`, `path != true|false`, `path == 'v'`, `path != 'v'`.
    Compare { path: String, equal: bool, value: Literal },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Literal {
    Bool(bool),
    Text(String),
}

/// Parses one expression; `Err` says why the engine would read it as false. `dotted_contains`:
/// whether `.contains` is read on any path (0.23 and later), not only on `output`.
pub fn parse(text: &str, dotted_contains: bool) -> Result<Condition, String> {
    let text = text.trim();
    let bare = unquoted(text);
    if bare.contains("||") || bare.contains("&&") {
        return Err("the grammar has no `||` or `&&`: an expression is one condition".into());
    }
    if bare.contains("===") || bare.contains("!==") {
        let op = if bare.contains("!==") { "!=" } else { "==" };
        return Err(format!("`===` and `!==` are not operators here; write `{op}`"));
    }
    if let Some((path, rest)) = text.split_once(".contains(") {
        if !is_path(path) {
            return Err(format!("`{path}` is not a variable path (letters, digits, `_`, dots)"));
        }
        if path != "output" && !dotted_contains {
            return Err(format!(
                "before Last Light 0.23 the engine reads `.contains` only on `output`, so `{path}.contains(…)` never holds"
            ));
        }
        let arg = rest.strip_suffix(')').ok_or("`.contains(` is not closed with `)`")?;
        return quoted(arg.trim()).map(|needle| Condition::Contains { path: path.to_string(), needle }).ok_or_else(
            || format!("`{path}.contains` takes one quoted, non-empty string: `{path}.contains('READY')`"),
        );
    }
    let (left, right, equal) = match (text.split_once("!="), text.split_once("==")) {
        (Some((l, r)), _) => (l, r, false),
        (None, Some((l, r))) => (l, r, true),
        (None, None) if bare.contains('=') => return Err("`=` is not a comparison; write `==`".into()),
        (None, None) => {
            return Err("expected `output.contains('…')`, `path == value` or `path != value`".into());
        }
    };
    let path = left.trim();
    if !is_path(path) {
        return Err(format!("`{path}` is not a variable path (letters, digits, `_`, dots)"));
    }
    let right = right.trim();
    let value = match right {
        "true" => Literal::Bool(true),
        "false" => Literal::Bool(false),
        "''" | "\"\"" => {
            return Err("an empty string never matches: the engine needs a character between the quotes".into());
        }
        _ => Literal::Text(
            quoted(right)
                .ok_or_else(|| format!("`{right}` must be `true`, `false` or a quoted string (`'{right}'`)"))?,
        ),
    };
    Ok(Condition::Compare { path: path.to_string(), equal, value })
}

fn is_path(path: &str) -> bool {
    !path.is_empty()
        && path.split('.').all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

/// The contents of `'x'` or `"x"`, not empty.
fn quoted(text: &str) -> Option<String> {
    let quote = text.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let inner = text.strip_prefix(quote)?.strip_suffix(quote)?;
    (!inner.is_empty() && !inner.contains(quote)).then(|| inner.to_string())
}

/// `text` with quoted parts blanked, so operators inside a quoted needle do not count.
fn unquoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => out.push(' '),
            None if c == '\'' || c == '"' => quote = Some(c),
            None => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> Result<Condition, String> {
        parse(text, true)
    }

    #[test]
    fn the_grammar() {
        let contains = |path: &str, needle: &str| Condition::Contains { path: path.into(), needle: needle.into() };
        assert_eq!(head("output.contains('READY')"), Ok(contains("output", "READY")));
        assert_eq!(head(" output.contains(\"x y\") "), Ok(contains("output", "x y")));
        assert_eq!(head("output.contains('a||b')"), Ok(contains("output", "a||b")));
        assert!(matches!(head("scratch.done == true"), Ok(Condition::Compare { equal: true, .. })));
        assert!(matches!(head("reason != 'dirty'"), Ok(Condition::Compare { equal: false, .. })));
        assert!(head("output.includes('READY')").is_err());
        assert!(head("output.contains(READY)").is_err());
        assert!(head("done").is_err());
        assert!(head("a == b").is_err());
        assert!(head("a == ''").is_err());
        assert!(head("a && b == true").unwrap_err().contains("`||`"));
        assert!(head("output.contains('A') || output.contains('B')").unwrap_err().contains("no `||`"));
        assert!(head("scratch.done === true").unwrap_err().contains("write `==`"));
        assert!(head("reason = 'x'").unwrap_err().contains("write `==`"));
    }

    #[test]
    fn dotted_contains_is_read_from_0_23_on() {
        let text = "phaseOutputs.diagnosis.contains('class=flaky')";
        assert_eq!(
            head(text),
            Ok(Condition::Contains { path: "phaseOutputs.diagnosis".into(), needle: "class=flaky".into() })
        );
        assert!(parse(text, false).unwrap_err().contains("only on `output`"));
    }
}
