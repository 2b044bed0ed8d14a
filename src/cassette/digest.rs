//! Canonical JSON (RFC 8785: sorted keys, no whitespace, numbers as ECMAScript prints them)
//! and SHA-256 digests over it, so that argument digests and request fingerprints depend on
//! neither key order nor formatting, and `1.0` and `1` are the same number, as in JavaScript.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// `value` as canonical JSON text (RFC 8785): object keys sorted by their UTF-16 code units,
/// no insignificant whitespace, strings escaped as `JSON.stringify` does, numbers as
/// ECMAScript's `Number.prototype.toString` prints them.
pub fn canonical(value: &Value) -> String {
    json_text(value, &|a, b| a.encode_utf16().cmp(b.encode_utf16()))
}

/// `value` as compact JSON with numbers as ECMAScript prints them and each object's keys in the
/// order `key_order` gives (a stable sort): the canonical form, or `JSON.stringify`'s own order.
pub fn json_text(value: &Value, key_order: &dyn Fn(&str, &str) -> std::cmp::Ordering) -> String {
    let mut out = String::new();
    write(value, key_order, &mut out);
    out
}

fn write(value: &Value, key_order: &dyn Fn(&str, &str) -> std::cmp::Ordering, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| key_order(a.0, b.0));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write(value, key_order, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, key_order, out);
            }
            out.push(']');
        }
        Value::Number(number) => out.push_str(&number_text(number)),
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// A number as RFC 8785 and JavaScript's `String(n)` write it: an IEEE double printed the
/// ECMAScript way. Integers that a double holds exactly print as they are; larger ones go
/// through the double, as in JavaScript.
pub fn number_text(number: &serde_json::Number) -> String {
    const EXACT: u64 = 1 << 53;
    match (number.as_u64(), number.as_i64()) {
        (Some(n), _) if n <= EXACT => n.to_string(),
        (_, Some(n)) if n.unsigned_abs() <= EXACT => n.to_string(),
        _ => number.as_f64().map_or_else(|| number.to_string(), ecmascript),
    }
}

/// ECMAScript `Number::toString(x)` (ECMA-262 §6.1.6.1.20) for a finite double: the shortest
/// digits that round-trip, placed as plain or exponent notation by the decimal exponent.
fn ecmascript(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        // -0 prints as 0; JSON has no NaN or infinity (serde_json never holds them).
        return "0".into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits as `d.ddde±x`.
    let scientific = format!("{:e}", x.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i64;
    // x = 0.d1d2…dk × 10^n
    let n = exponent.parse::<i64>().unwrap_or(0) + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let mantissa = if k == 1 { digits.clone() } else { format!("{}.{}", &digits[..1], &digits[1..]) };
        let e = n - 1;
        format!("{mantissa}e{}{}", if e < 0 { '-' } else { '+' }, e.abs())
    };
    if x < 0.0 { format!("-{body}") } else { body }
}

/// Full SHA-256 hex of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The `argsDigest` of a grant proposal: SHA-256 hex of the canonical arguments.
pub fn args_digest(args: &Value) -> String {
    sha256_hex(canonical(args).as_bytes())
}

/// The `argsDigest` of a proposal whose arguments the model sent as text (`argsRaw`): SHA-256
/// hex of that text as sent, the serialization the model chose.
pub fn raw_args_digest(raw: &str) -> String {
    sha256_hex(raw.as_bytes())
}

/// A short fingerprint for cassettes: `sha256:` and the first 16 hex digits of `text` with its
/// line endings made `\n`, so a CRLF checkout (`core.autocrlf` on Windows) fingerprints a
/// prompt as the LF checkout it came from does. (In canonical JSON a line break inside a string
/// is written `\r\n` escaped, so this changes only text hashed as it is: the system prompt.)
pub fn fingerprint(text: &str) -> String {
    let text = lf_line_endings(text);
    format!("sha256:{}", &sha256_hex(text.as_bytes())[..16])
}

/// `text` with `\r\n` and lone `\r` line endings made `\n`.
fn lf_line_endings(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\r') {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
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
    fn numbers_print_as_ecmascript_prints_them() {
        // RFC 8785 §3.2.2.3 and its Appendix B samples.
        let cases: [(Value, &str); 14] = [
            (json!(1.0), "1"),
            (json!(-0.0), "0"),
            (json!(1.5), "1.5"),
            (json!(-2.5e-3), "-0.0025"),
            (json!(0.1 + 0.2), "0.30000000000000004"),
            (json!(1e21), "1e+21"),
            (json!(1e20), "100000000000000000000"),
            (json!(1e-7), "1e-7"),
            (json!(0.000001), "0.000001"),
            (json!(5e-324), "5e-324"),
            (json!(1.7976931348623157e308), "1.7976931348623157e+308"),
            (json!(9007199254740992_u64), "9007199254740992"),
            (json!(18446744073709551615_u64), "18446744073709552000"),
            (json!(-333333333.3333333), "-333333333.3333333"),
        ];
        for (value, text) in cases {
            assert_eq!(canonical(&value), text, "{value}");
        }
        assert_eq!(args_digest(&json!({"n": 1.0})), args_digest(&json!({"n": 1})));
    }

    #[test]
    fn keys_sort_by_utf16_code_units() {
        // U+1F600 is D83D DE00 in UTF-16, before U+E000; in UTF-8 it sorts after.
        let value = json!({"\u{e000}": 1, "\u{1f600}": 2, "a": 3});
        assert_eq!(canonical(&value), "{\"a\":3,\"\u{1f600}\":2,\"\u{e000}\":1}");
    }

    #[test]
    fn digests_are_sha256() {
        assert_eq!(sha256_hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(fingerprint(""), "sha256:e3b0c44298fc1c14");
        // Issue 16, bug 10: the line endings of a checkout do not change a fingerprint.
        assert_eq!(fingerprint("a\r\nb\r\n"), fingerprint("a\nb\n"));
        assert_eq!(fingerprint("a\rb"), fingerprint("a\nb"));
        assert_ne!(fingerprint("a\r\nb"), fingerprint("ab"));
    }
}
