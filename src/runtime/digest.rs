//! Canonical JSON (sorted keys, no whitespace) and SHA-256 digests over it, so that argument
//! digests and request fingerprints do not depend on key order or formatting.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// `value` as canonical JSON text: object keys sorted, no insignificant whitespace.
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write(value, &mut out);
    out
}

fn write(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Full SHA-256 hex of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The `argsDigest` of a grant proposal: SHA-256 hex of the canonical arguments.
pub fn args_digest(args: &Value) -> String {
    sha256_hex(canonical(args).as_bytes())
}

/// A short fingerprint for cassettes: `sha256:` and the first 16 hex digits.
pub fn fingerprint(text: &str) -> String {
    format!("sha256:{}", &sha256_hex(text.as_bytes())[..16])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_form_sorts_keys_at_every_level_and_drops_whitespace() {
        let a = json!({"b": 1, "a": {"y": [1, {"d": 2, "c": 3}], "x": "s"}});
        assert_eq!(canonical(&a), r#"{"a":{"x":"s","y":[1,{"c":3,"d":2}]},"b":1}"#);
        let b: Value = serde_json::from_str(r#"{ "a": {"y": [1, {"c": 3, "d": 2}], "x": "s"}, "b": 1 }"#).unwrap();
        assert_eq!(args_digest(&a), args_digest(&b));
    }

    #[test]
    fn digests_are_sha256() {
        assert_eq!(sha256_hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(fingerprint(""), "sha256:e3b0c44298fc1c14");
    }
}
