//! `evalUntilExpression` as each engine runs it (`src/workflows/loop-eval.ts` at dd02adf,
//! `packages/workflow-engine/src/core/loop-eval.ts` at 2d26144): four anchored regular
//! expressions, tried in order, written out by hand. Anything else is false, so a loop whose
//! `until` is not one of them runs to `max_iterations`. Which `.contains` a release reads is
//! the release model's (`registry::releases::lastlight`), as for the `lastlight/` rules.

use serde_json::Value;

use crate::registry::releases::lastlight::{self as releases, ReleaseId};
use crate::runtime::lastlight::value::{self, Ctx, Property, is_js_space, string_of};
use crate::template::lastlight::Engine;

/// The expressions one release reads: its engine's coercions, and whether `.contains` is read
/// on any dotted path (0.23 and later) or on `output` alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grammar {
    pub engine: Engine,
    pub dotted_contains: bool,
}

impl Grammar {
    /// The grammar of `release`.
    pub fn at(release: ReleaseId) -> Grammar {
        let engine = if release >= releases::V0_2 { Engine::Head } else { Engine::Seed };
        Grammar { engine, dotted_contains: release >= releases::V0_23 }
    }
}

/// An engine's grammar at the commit the engine models (dd02adf, 2d26144).
impl From<Engine> for Grammar {
    fn from(engine: Engine) -> Grammar {
        Grammar { engine, dotted_contains: engine == Engine::Head }
    }
}

/// What an expression came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub met: bool,
    /// The form the engine read it as, or `None`: no form matched, so it is false.
    pub form: Option<&'static str>,
}

/// Evaluates `expression` against `ctx` (`output`, `scratch` and the context's entries).
pub fn eval(expression: &str, ctx: &Ctx, grammar: impl Into<Grammar>) -> Outcome {
    let grammar = grammar.into();
    let trimmed = expression.trim_matches(is_js_space);
    if let Some((path, needle)) = contains(trimmed, grammar.dotted_contains) {
        let found = read_path(ctx, path);
        let met = match grammar.engine {
            // `String(ctx.output ?? "")`.
            Engine::Seed => found.map_or_else(String::new, |v| string_of(&v)).contains(needle),
            // Strings and numbers only.
            Engine::Head => match found {
                Some(v @ (Value::String(_) | Value::Number(_))) => string_of(&v).contains(needle),
                _ => false,
            },
        };
        return Outcome { met, form: Some("contains") };
    }
    if let Some((path, equal, literal)) = compare_bool(trimmed) {
        let actual = coerce_bool(read_path(ctx, path).as_ref());
        return Outcome { met: (actual == literal) == equal, form: Some("boolean comparison") };
    }
    if let Some((path, value)) = compare_text(trimmed, "==") {
        let actual = read_path(ctx, path).filter(|v| !v.is_null()).map_or_else(String::new, |v| string_of(&v));
        return Outcome { met: actual == value, form: Some("equality") };
    }
    if let Some((path, value)) = compare_text(trimmed, "!=") {
        // An absent variable is false; `null` is compared as `"null"`.
        let met = read_path(ctx, path).is_some_and(|v| string_of(&v) != value);
        return Outcome { met, form: Some("inequality") };
    }
    Outcome { met: false, form: None }
}

/// `output.contains('x')` or (`dotted`) `<dotted.path>.contains('x')`: the path and the needle
/// (`['"](.+)['"]`: any quotes, greedy, on one line).
fn contains(text: &str, dotted: bool) -> Option<(&str, &str)> {
    let run = text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')).unwrap_or(text.len());
    let path = if dotted {
        let head = text[..run].strip_suffix(".contains")?;
        if head.is_empty() || text.as_bytes().get(run) != Some(&b'(') {
            return None;
        }
        head
    } else {
        text.strip_prefix("output.contains(").map(|_| "output")?
    };
    let rest = &text[path.len() + ".contains(".len()..];
    let inner = rest.strip_suffix(')')?;
    quoted_greedy(inner).map(|needle| (path, needle))
}

/// `['"](.+)['"]` over the whole of `text`: the characters between a leading and a trailing
/// quote (either kind), at least one, none a line terminator.
fn quoted_greedy(text: &str) -> Option<&str> {
    let quote = |c: char| c == '\'' || c == '"';
    let mut chars = text.chars();
    let first = chars.next()?;
    let last = chars.next_back()?;
    if !quote(first) || !quote(last) {
        return None;
    }
    let inner = &text[1..text.len() - 1];
    let line_break = |c: char| matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}');
    (!inner.is_empty() && !inner.contains(line_break)).then_some(inner)
}

/// The `[\w.]+` path at the start of `text`, and the rest after it.
fn path_prefix(text: &str) -> Option<(&str, &str)> {
    let run = text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')).unwrap_or(text.len());
    (run > 0).then(|| text.split_at(run))
}

/// `^([\w.]+)\s*(==|!=)\s*(true|false)$`.
fn compare_bool(text: &str) -> Option<(&str, bool, bool)> {
    let (path, rest) = path_prefix(text)?;
    let rest = rest.trim_start_matches(is_js_space);
    let (equal, rest) = match (rest.strip_prefix("=="), rest.strip_prefix("!=")) {
        (Some(r), _) => (true, r),
        (_, Some(r)) => (false, r),
        _ => return None,
    };
    let literal = match rest.trim_start_matches(is_js_space) {
        "true" => true,
        "false" => false,
        _ => return None,
    };
    Some((path, equal, literal))
}

/// `^([\w.]+)\s*<op>\s*['"](.+)['"]$`.
fn compare_text<'t>(text: &'t str, op: &str) -> Option<(&'t str, &'t str)> {
    let (path, rest) = path_prefix(text)?;
    let rest = rest.trim_start_matches(is_js_space).strip_prefix(op)?;
    quoted_greedy(rest.trim_start_matches(is_js_space)).map(|value| (path, value))
}

/// `readPath`: the first segment from the context, the rest through own properties.
fn read_path(ctx: &Ctx, path: &str) -> Option<Value> {
    let mut parts = path.split('.');
    let mut current = ctx.get(parts.next().unwrap_or_default()).cloned();
    for part in parts {
        let object = current.filter(|v| v.is_object() || v.is_array())?;
        current = match value::property(&object, part) {
            Property::Undefined => None,
            Property::Value(v) => Some(v.clone()),
            Property::Length(n) => Some(Value::from(n)),
        };
    }
    current
}

/// `coerceBool`: booleans as they are, numbers other than 0, `"true"`, `"1"` or `"yes"` in any
/// case; anything else is false.
fn coerce_bool(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(s)) => matches!(s.to_lowercase().as_str(), "true" | "1" | "yes"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx(value: Value) -> Ctx {
        Ctx::from_map(value.as_object().expect("object"))
    }

    #[test]
    fn the_four_forms() {
        let c = ctx(json!({"output": "all tests PASS", "scratch": {"done": "yes", "n": 0}, "mode": "scan"}));
        let met = |e: &str| eval(e, &c, Engine::Head).met;
        assert!(met("output.contains('PASS')"));
        assert!(met(" output.contains(\"tests P\") "));
        assert!(!met("output.contains('FAIL')"));
        assert!(met("scratch.done == true"));
        assert!(met("scratch.n == false"));
        assert!(met("mode == 'scan'"));
        assert!(met("mode != 'fix'"));
        assert!(!met("missing != 'x'"), "an absent variable is false");
        assert!(met("scratch.done.contains('y')"), "the current engine reads any path");
        assert!(!eval("scratch.done.contains('y')", &c, Engine::Seed).met, "the seed-era engine reads only `output`");
    }

    #[test]
    fn anything_else_is_false() {
        let c = ctx(json!({"output": "DONE"}));
        for expression in
            ["output contains DONE", "output.includes('DONE')", "output.contains(DONE)", "done", "output == DONE"]
        {
            let outcome = eval(expression, &c, Engine::Head);
            assert_eq!(outcome, Outcome { met: false, form: None }, "{expression}");
        }
    }

    #[test]
    fn dotted_contains_is_the_current_engines() {
        let c = ctx(json!({"output": "", "phaseOutputs": {"diagnosis": "class=flaky"}}));
        assert!(eval("phaseOutputs.diagnosis.contains('flaky')", &c, Engine::Head).met);
        assert_eq!(eval("phaseOutputs.diagnosis.contains('flaky')", &c, Engine::Seed).form, None);
        // The release model: the current engine reads it from 0.23 on.
        assert_eq!(eval("phaseOutputs.diagnosis.contains('flaky')", &c, Grammar::at(releases::V0_18_5)).form, None);
        assert!(eval("phaseOutputs.diagnosis.contains('flaky')", &c, Grammar::at(releases::V0_23)).met);
        assert_eq!(Grammar::at(releases::V0_1).engine, Engine::Seed);
    }
}
