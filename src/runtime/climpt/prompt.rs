//! Rendering climpt prompts as its runtime does: a C3L prompt's frontmatter removed, `{uv-x}`
//! and `{input_text}` substituted, the result trimmed (`PromptResolver.processContent`); a
//! retry prompt's `{{param}}`, `{{#each}}` and `{{#if}}` filled from a failed validator's
//! parameters (`injectParams`). What the runtime leaves as written is reported, not guessed.

use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

/// JavaScript's `String(value)`.
pub fn js_string(value: &Json) -> String {
    match value {
        Json::String(text) => text.clone(),
        Json::Null => "null".into(),
        Json::Array(items) => {
            items.iter().map(|i| if i.is_null() { String::new() } else { js_string(i) }).collect::<Vec<_>>().join(",")
        }
        Json::Object(_) => "[object Object]".into(),
        other => other.to_string(),
    }
}

/// A rendered C3L prompt.
#[derive(Debug, Default)]
pub struct Rendered {
    pub text: String,
    /// `{uv-x}` names with no value (climpt: PR-RESOLVE-005).
    pub missing: Vec<String>,
    /// The UV names substituted.
    pub substituted: Vec<String>,
    /// Single-brace tags left as written: custom variables the runner supplies, which the
    /// dry-run does not know (`{issue_content}`).
    pub verbatim: Vec<String>,
}

pub fn render(text: &str, uv: &BTreeMap<String, String>, stdin: Option<&str>) -> Rendered {
    let body = remove_frontmatter(text);
    let mut out = Rendered::default();
    let mut result = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(open) = rest.find('{') {
        result.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name_len = after.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-')).unwrap_or(after.len());
        let (name, tail) = after.split_at(name_len);
        if !tail.starts_with('}') || name.is_empty() {
            result.push('{');
            rest = after;
            continue;
        }
        rest = &tail[1..];
        if let Some(uv_name) = name.strip_prefix("uv-").filter(|n| n.chars().all(|c| c.is_alphanumeric() || c == '_')) {
            match uv.get(uv_name) {
                Some(value) => {
                    result.push_str(value);
                    if !out.substituted.iter().any(|n| n == uv_name) {
                        out.substituted.push(uv_name.to_string());
                    }
                }
                None => {
                    out.missing.push(uv_name.to_string());
                    result.push_str(&format!("{{{name}}}"));
                }
            }
        } else if name == "input_text" {
            result.push_str(stdin.unwrap_or(""));
        } else {
            if !out.verbatim.iter().any(|n| n == name) {
                out.verbatim.push(name.to_string());
            }
            result.push_str(&format!("{{{name}}}"));
        }
    }
    result.push_str(rest);
    out.text = result.trim().to_string();
    out
}

/// `removeFrontmatter`: from a leading `---` to the next line that starts with `---`.
fn remove_frontmatter(text: &str) -> &str {
    let text = text.trim_start_matches('\u{feff}');
    if !text.starts_with("---") {
        return text;
    }
    match text[3..].find("\n---") {
        Some(end) => text[3 + end + 4..].trim_start(),
        None => text,
    }
}

/// `injectParams`: `{{#each x}}…{{this}}…{{/each}}`, `{{#if x}}…{{else}}…{{/if}}`, then
/// `{{x}}` (a list joined with `, `, a missing value empty).
pub fn inject_params(template: &str, params: &Map<String, Json>) -> String {
    let each = blocks(template, "each", |name, body| match params.get(name) {
        Some(Json::Array(items)) => items
            .iter()
            .map(|item| {
                let mut text = body.replace("{{this}}", &js_string(item));
                if let Json::Object(fields) = item {
                    for (key, value) in fields {
                        text = text.replace(&format!("{{{{this.{key}}}}}"), &js_string(value));
                    }
                }
                text
            })
            .collect(),
        _ => String::new(),
    });
    let conditional = blocks(&each, "if", |name, body| {
        let (yes, no) = body.split_once("{{else}}").unwrap_or((body, ""));
        if truthy(lookup(params, name)) { yes.to_string() } else { no.to_string() }
    });
    let mut out = String::with_capacity(conditional.len());
    let mut rest = conditional.as_str();
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        match after.find("}}") {
            Some(close) if after[..close].chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.') && close > 0 => {
                let value = lookup(params, &after[..close]);
                out.push_str(&match value {
                    None | Some(Json::Null) => String::new(),
                    Some(Json::Array(items)) => items.iter().map(js_string).collect::<Vec<_>>().join(", "),
                    Some(other) => js_string(other),
                });
                rest = &after[close + 2..];
            }
            _ => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Replaces each `{{#kind name}}body{{/kind}}` by `fill(name, body)` (not nested, as climpt's
/// lazy pattern).
fn blocks(template: &str, kind: &str, fill: impl Fn(&str, &str) -> String) -> String {
    let open_tag = format!("{{{{#{kind} ");
    let close_tag = format!("{{{{/{kind}}}}}");
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find(&open_tag) {
        let after = &rest[start + open_tag.len()..];
        let Some(name_end) = after.find("}}") else { break };
        let name = after[..name_end].trim();
        let body_start = &after[name_end + 2..];
        let Some(end) = body_start.find(&close_tag) else { break };
        out.push_str(&rest[..start]);
        out.push_str(&fill(name, &body_start[..end]));
        rest = &body_start[end + close_tag.len()..];
    }
    out.push_str(rest);
    out
}

fn lookup<'p>(params: &'p Map<String, Json>, path: &str) -> Option<&'p Json> {
    let mut parts = path.split('.');
    let first = params.get(parts.next()?)?;
    parts.try_fold(first, |current, part| current.get(part))
}

/// JavaScript truthiness, with an empty list false (`isTruthy`).
fn truthy(value: Option<&Json>) -> bool {
    match value {
        None | Some(Json::Null) => false,
        Some(Json::Bool(b)) => *b,
        Some(Json::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Json::String(s)) => !s.is_empty(),
        Some(Json::Array(items)) => !items.is_empty(),
        Some(Json::Object(_)) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uv_input_text_and_custom_variables() {
        let uv = BTreeMap::from([("issue".to_string(), "42".to_string())]);
        let rendered = render(
            "---\nstepId: x\n---\n\nFix {uv-issue} {uv-branch} {input_text} {issue_content} {not closed\n",
            &uv,
            Some("in"),
        );
        assert_eq!(rendered.text, "Fix 42 {uv-branch} in {issue_content} {not closed");
        assert_eq!(rendered.missing, ["branch"]);
        assert_eq!(rendered.verbatim, ["issue_content"]);
    }

    #[test]
    fn retry_params_fill_each_if_and_lists() {
        let params =
            serde_json::json!({"files": ["a.rs", "b.rs"], "none": []}).as_object().cloned().unwrap_or_default();
        let text = inject_params(
            "{{#each files}}- {{this}}\n{{/each}}{{#if none}}x{{else}}clean{{/if}} {{files}} {{gone}}.",
            &params,
        );
        assert_eq!(text, "- a.rs\n- b.rs\nclean a.rs, b.rs .");
    }
}
