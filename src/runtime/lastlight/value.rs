//! JavaScript's view of the values a Last Light run holds: `String(v)`, `JSON.stringify(v)`,
//! truthiness and property reads, as the engine's TypeScript sees them. The template context is
//! an ordered JavaScript object ([`Ctx`]): key order reaches the prompt through the skills
//! nudge's `Context:` lines and every `JSON.stringify`.

use serde_json::{Map, Value};

/// A JavaScript object of the engine: keys in insertion order, a key may hold `undefined`
/// (`None`), which keeps its place when a later spread sets it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ctx {
    entries: Vec<(String, Option<Value>)>,
}

impl Ctx {
    /// `ctx[key]` when it is neither absent nor `undefined` (`null` is a value).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|(k, _)| k == key).and_then(|(_, v)| v.as_ref())
    }

    /// `ctx[key] = value` (`None`: `undefined`): an existing key keeps its place.
    pub fn set(&mut self, key: &str, value: Option<Value>) {
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key.to_string(), value)),
        }
    }

    /// `{ ...self, ...other }`.
    pub fn spread(&self, other: &Ctx) -> Ctx {
        let mut out = self.clone();
        for (key, value) in &other.entries {
            out.set(key, value.clone());
        }
        out
    }

    /// The entries as `Object.entries` lists them (integer keys first, ascending, then the rest
    /// in insertion order), `undefined` ones included as `None`.
    pub fn entries(&self) -> Vec<(&str, Option<&Value>)> {
        let mut out: Vec<(&str, Option<&Value>)> = self.entries.iter().map(|(k, v)| (k.as_str(), v.as_ref())).collect();
        out.sort_by_key(|(key, _)| key_order(key));
        out
    }

    /// The object as a JSON value (`undefined` entries left out, as `JSON.stringify` does).
    pub fn to_value(&self) -> Value {
        Value::Object(self.entries.iter().filter_map(|(k, v)| v.as_ref().map(|v| (k.clone(), v.clone()))).collect())
    }

    pub fn from_map(map: &Map<String, Value>) -> Ctx {
        Ctx { entries: map.iter().map(|(k, v)| (k.clone(), Some(v.clone()))).collect() }
    }
}

/// A canonical array index (`0`, `17`, not `01`): JavaScript orders such keys first.
fn array_index(key: &str) -> Option<u32> {
    let canonical = !key.is_empty() && (key == "0" || !key.starts_with('0')) && key.bytes().all(|b| b.is_ascii_digit());
    canonical.then(|| key.parse::<u32>().ok()).flatten().filter(|n| *n < u32::MAX)
}

/// Where `key` goes in JavaScript's property order: indexes first, ascending; the rest after,
/// in insertion order (the sort is stable).
fn key_order(key: &str) -> (u8, u32) {
    array_index(key).map_or((1, 0), |n| (0, n))
}

/// `String(value)` for what a template prints: numbers as ECMAScript prints them, arrays as
/// their elements joined by `,`, objects as `[object Object]`.
pub fn string_of(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => crate::cassette::digest::number_text(n),
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::Null => String::new(),
                other => string_of(other),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".into(),
    }
}

/// `String(v)` of a possibly `undefined` value (a template literal's `${v}`).
pub fn string_or_undefined(value: Option<&Value>) -> String {
    value.map_or_else(|| "undefined".into(), string_of)
}

/// `JSON.stringify(value)`: compact, keys in JavaScript's order, strings escaped as JavaScript
/// escapes them, numbers as ECMAScript prints them.
pub fn stringify(value: &Value) -> String {
    crate::cassette::digest::json_text(value, &|a, b| key_order(a).cmp(&key_order(b)))
}

/// What a template prints for a value it found: objects and arrays as JSON, the rest as
/// `String(v)`.
pub fn printed(value: &Value) -> String {
    match value {
        Value::Object(_) | Value::Array(_) => stringify(value),
        other => string_of(other),
    }
}

/// The engine's `{{#if}}` test: not `undefined`, `null`, `""`, `false`, `0` or an empty array
/// (objects, even empty ones, hold).
pub fn if_truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::Array(items)) => !items.is_empty(),
        Some(_) => true,
    }
}

/// JavaScript truthiness (`!!v`): like [`if_truthy`], but an empty array holds.
pub fn js_truthy(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Array(_)) => true,
        other => if_truthy(other),
    }
}

/// `obj[key]` for an object or array value; strings, numbers and booleans have no properties
/// a template can read (`typeof v !== "object"`).
pub fn property<'v>(value: &'v Value, key: &str) -> Property<'v> {
    match value {
        Value::Object(map) => map.get(key).map_or(Property::Undefined, Property::Value),
        Value::Array(items) => {
            if key == "length" {
                return Property::Length(items.len());
            }
            match array_index(key) {
                Some(n) => items.get(n as usize).map_or(Property::Undefined, Property::Value),
                None => Property::Undefined,
            }
        }
        _ => Property::Undefined,
    }
}

/// What reading a property gives.
pub enum Property<'v> {
    Undefined,
    Value(&'v Value),
    /// An array's `length`.
    Length(usize),
}

/// `encodeURIComponent(text)`.
pub fn encode_uri_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        let keep = byte.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&byte);
        if keep {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// JavaScript's `\s`.
pub fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

/// JavaScript's `\w` on one byte (ASCII letters, digits, `_`).
pub fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The engine's `slugify`: lower case, runs of anything but `a-z0-9` become `-`, one `-` off
/// each end, at most 40 characters.
pub fn slugify(text: &str) -> String {
    let lower = text.to_lowercase();
    let mut out = String::new();
    let mut dash = false;
    for c in lower.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
            dash = false;
        } else if !dash {
            out.push('-');
            dash = true;
        }
    }
    let out = out.strip_prefix('-').unwrap_or(&out);
    let out = out.strip_suffix('-').unwrap_or(out);
    out.chars().take(40).collect()
}

/// JavaScript's `Number(text)` for what a context holds as text: `NaN` as `None`.
pub fn number_of_text(text: &str) -> Option<f64> {
    let trimmed = text.trim_matches(is_js_space);
    if trimmed.is_empty() {
        return Some(0.0);
    }
    let lower = trimmed.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16).ok().map(|n| n as f64);
    }
    match trimmed {
        "Infinity" | "+Infinity" => return Some(f64::INFINITY),
        "-Infinity" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    // Rust reads `inf` and `nan` too; JavaScript does not.
    if lower.contains("inf") || lower.contains("nan") {
        return None;
    }
    trimmed.parse::<f64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_as_javascript_prints_them() {
        assert_eq!(string_of(&json!(1.0)), "1");
        assert_eq!(string_of(&json!(2.5)), "2.5");
        assert_eq!(string_of(&json!(["a", null, 3])), "a,,3");
        assert_eq!(string_of(&json!({"a": 1})), "[object Object]");
        assert_eq!(printed(&json!({"b": 1, "a": [true, 1.5]})), r#"{"b":1,"a":[true,1.5]}"#);
        assert_eq!(printed(&json!({"x": 1, "2": 0, "10": 0})), r#"{"2":0,"10":0,"x":1}"#);
    }

    #[test]
    fn truthiness() {
        assert!(!if_truthy(None));
        assert!(!if_truthy(Some(&json!(0))));
        assert!(!if_truthy(Some(&json!(0.0))));
        assert!(!if_truthy(Some(&json!([]))));
        assert!(if_truthy(Some(&json!({}))));
        assert!(if_truthy(Some(&json!("0"))));
        assert!(js_truthy(Some(&json!([]))));
    }

    #[test]
    fn slugs_and_uris() {
        assert_eq!(slugify("Add a --dry-run flag!"), "add-a-dry-run-flag");
        assert_eq!(slugify("---x---"), "x");
        assert_eq!(slugify(&"a ".repeat(40)).len(), 40);
        assert_eq!(encode_uri_component("lastlight/42-a b"), "lastlight%2F42-a%20b");
        assert_eq!(encode_uri_component("é"), "%C3%A9");
    }

    #[test]
    fn ctx_keeps_order_and_undefined_places() {
        let mut ctx = Ctx::default();
        ctx.set("a", Some(json!(1)));
        ctx.set("b", None);
        ctx.set("c", Some(json!(3)));
        let mut extra = Ctx::default();
        extra.set("b", Some(json!(2)));
        extra.set("d", Some(json!(4)));
        let spread = ctx.spread(&extra);
        let keys: Vec<&str> = spread.entries().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["a", "b", "c", "d"]);
        assert_eq!(ctx.get("b"), None);
        assert_eq!(number_of_text(" 12 "), Some(12.0));
        assert_eq!(number_of_text("0x10"), Some(16.0));
        assert_eq!(number_of_text("inf"), None);
        assert_eq!(number_of_text(""), Some(0.0));
    }
}
