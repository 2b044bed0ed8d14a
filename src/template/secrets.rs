//! Secrets in text: provider API keys, tokens, private keys, `Authorization: Bearer` values and
//! dotenv lines that name a secret. One detector for the `cassette/SecretInRecording` and
//! `stagelint/SecretInSource` rules, for redaction on import and recording, and for request
//! fingerprints (which hash redacted text, so a redacted cassette replays without drift).
//!
//! Hand-written and linear: every scanner moves forward over the text once per start position
//! it accepts, and a prefix is tried only at a token boundary. Placeholders (`sk-…`,
//! `YOUR_API_KEY`, `<redacted>`, `«redacted:…»`, `${VAR}`, `***`, `XXXX`) and low-entropy values
//! never count: a pattern alone is weak evidence, a long random value after it is strong.

use std::borrow::Cow;

use crate::source::Span;
use crate::template::markdown;

/// One secret: where its value is in the scanned text, and what it is (`anthropic-key`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Secret {
    pub span: Span,
    pub kind: &'static str,
}

/// Where a secret counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Linting: values inside fenced code blocks are examples and stay silent.
    Lint,
    /// Redacting traffic: everywhere (a real key in a fenced block is still a real key).
    Redact,
}

/// The placeholder a redacted secret of `kind` becomes; stable, so fingerprints stay stable.
pub fn placeholder(kind: &str) -> String {
    format!("«redacted:{kind}»")
}

/// The secrets of `text`, in order and disjoint.
pub fn find(text: &str, mode: Mode) -> Vec<Secret> {
    let mut found = Vec::new();
    tokens(text, &mut found);
    private_keys(text, &mut found);
    assignments(text, &mut found);
    found.sort_by_key(|s| (s.span.start, std::cmp::Reverse(s.span.end)));
    let mut out: Vec<Secret> = Vec::with_capacity(found.len());
    for secret in found {
        if out.last().is_none_or(|last| secret.span.start >= last.span.end) {
            out.push(secret);
        }
    }
    if mode == Mode::Lint && !out.is_empty() {
        let fences: Vec<Span> =
            markdown::code_regions(text, 0).into_iter().filter(|r| closed_fence(&text[r.start..r.end])).collect();
        out.retain(|s| !markdown::in_code(&fences, s.span));
    }
    out
}

/// Whether `code` is a fenced block that is closed. A fence left open runs to the end of the
/// text in markdown, but an example is not what the rest of a prompt is: the keys after it are
/// still sent to the model, so they are not excused.
fn closed_fence(code: &str) -> bool {
    let code = code.trim_start().trim_end();
    let Some(mark) = code.bytes().next().filter(|b| *b == b'`' || *b == b'~') else { return false };
    let opening = code.bytes().take_while(|b| *b == mark).count();
    let Some((_, last)) = code.rsplit_once('\n') else { return false };
    let last = last.trim();
    opening >= 3 && last.len() >= opening && last.bytes().all(|b| b == mark)
}

/// `text` with every secret replaced by its placeholder, and how many were replaced.
pub fn redact(text: &str) -> (Cow<'_, str>, usize) {
    let found = find(text, Mode::Redact);
    if found.is_empty() {
        return (Cow::Borrowed(text), 0);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for secret in &found {
        out.push_str(&text[at..secret.span.start]);
        out.push_str(&placeholder(secret.kind));
        at = secret.span.end;
    }
    out.push_str(&text[at..]);
    (Cow::Owned(out), found.len())
}

/// Redacts every string (and object key's value) of a JSON value in place; returns the count.
pub fn redact_json(value: &mut serde_json::Value) -> usize {
    match value {
        serde_json::Value::String(s) => {
            let (redacted, n) = redact(s);
            if n > 0 {
                *s = redacted.into_owned();
            }
            n
        }
        serde_json::Value::Array(items) => items.iter_mut().map(redact_json).sum(),
        serde_json::Value::Object(map) => map.values_mut().map(redact_json).sum(),
        _ => 0,
    }
}

fn token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Length of the run of bytes from `at` that satisfy `ok`.
fn run(bytes: &[u8], at: usize, ok: impl Fn(u8) -> bool) -> usize {
    bytes[at.min(bytes.len())..].iter().take_while(|b| ok(**b)).count()
}

/// Prefixed tokens, tried only where a token starts (the byte before is not a token byte).
fn tokens(text: &str, out: &mut Vec<Secret>) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_alphabetic() || (i > 0 && token_byte(bytes[i - 1])) {
            i += 1;
            continue;
        }
        // Every prefix below starts with one of these; other words are skipped whole.
        if !matches!(bytes[i], b's' | b'g' | b'A' | b'x' | b'e') {
            i += run(bytes, i, token_byte).max(1);
            continue;
        }
        match token_at(text, i) {
            Some(secret) => {
                i = secret.span.end;
                out.push(secret);
            }
            // Skip the rest of this word: nothing starts inside it.
            None => i += run(bytes, i, token_byte).max(1),
        }
    }
}

fn token_at(text: &str, at: usize) -> Option<Secret> {
    let rest = &text[at..];
    let bytes = text.as_bytes();
    let word = run(bytes, at, token_byte);
    let secret = |len: usize, kind| Some(Secret { span: Span::new(at, at + len), kind });
    // (prefix, kind, shortest body, charset of the body)
    let prefixed: [(&str, &'static str, usize); 10] = [
        ("sk-ant-", "anthropic-key", 32),
        ("sk-proj-", "openai-key", 32),
        ("sk-", "openai-key", 20),
        ("github_pat_", "github-token", 22),
        ("ghp_", "github-token", 30),
        ("gho_", "github-token", 30),
        ("ghs_", "github-token", 30),
        ("ghu_", "github-token", 30),
        ("ghr_", "github-token", 30),
        ("AIza", "google-api-key", 30),
    ];
    for (prefix, kind, shortest) in prefixed {
        if rest.starts_with(prefix) {
            let body = &rest[prefix.len()..word];
            // Keys are random over both cases and digits; `sk-learn-compatible-wrapper` is prose.
            let keyish = body.len() >= shortest && classes(body) == 3 && random(body, 3.0);
            return keyish.then_some(()).and_then(|()| secret(word, kind));
        }
    }
    if (rest.starts_with("AKIA") || rest.starts_with("ASIA")) && word == 20 {
        let body = &rest[4..20];
        let upper = body.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
        return (upper && random(body, 2.5)).then_some(()).and_then(|()| secret(20, "aws-access-key"));
    }
    if rest.len() > 5 && rest.starts_with("xox") && b"abprs".contains(&bytes[at + 3]) && bytes[at + 4] == b'-' {
        let body = &rest[5..word];
        let keyish = body.len() >= 20 && classes(body) >= 2 && random(body, 3.0);
        return keyish.then_some(()).and_then(|()| secret(word, "slack-token"));
    }
    if rest.starts_with("eyJ") {
        return jwt(text, at);
    }
    None
}

/// `header.payload.signature`, base64url, the header JSON naming an `alg`.
fn jwt(text: &str, at: usize) -> Option<Secret> {
    let bytes = text.as_bytes();
    let b64 = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    let header = run(bytes, at, b64);
    let mut end = at + header;
    for _ in 0..2 {
        if bytes.get(end) != Some(&b'.') {
            return None;
        }
        let segment = run(bytes, end + 1, b64);
        if segment < 8 {
            return None;
        }
        end += 1 + segment;
    }
    let decoded = base64url(&text[at..at + header])?;
    let json: serde_json::Value = serde_json::from_slice(&decoded).ok()?;
    json.get("alg")?;
    Some(Secret { span: Span::new(at, end), kind: "jwt" })
}

fn base64url(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for b in text.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// `-----BEGIN … PRIVATE KEY-----` through its `-----END … -----` line (or the text's end).
fn private_keys(text: &str, out: &mut Vec<Secret>) {
    let mut from = 0;
    while let Some(found) = text[from..].find("-----BEGIN ") {
        let start = from + found;
        let line_end = text[start..].find('\n').map_or(text.len(), |n| start + n);
        let header = &text[start..line_end];
        from = line_end;
        if !header.trim_end().ends_with("PRIVATE KEY-----") {
            continue;
        }
        let end = match text[line_end..].find("-----END ") {
            Some(n) => {
                let close = line_end + n + "-----END ".len();
                text[close..].find("-----").map_or(text.len(), |m| close + m + 5)
            }
            None => text.len(),
        };
        let body: String = text[line_end..end].chars().filter(|c| c.is_ascii_alphanumeric()).collect();
        if body.len() >= 32 && random(&body, 3.5) {
            out.push(Secret { span: Span::new(start, end), kind: "private-key" });
        }
        from = end;
    }
}

/// Values after a name that says they are secret: `Authorization: Bearer x`,
/// `aws_secret_access_key = x` and dotenv lines `API_TOKEN=x`.
fn assignments(text: &str, out: &mut Vec<Secret>) {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let line = line.trim_end_matches(['\n', '\r']);
        bearer(line, start, out);
        if let Some(secret) = named(line, start) {
            out.push(secret);
        }
    }
}

fn bearer(line: &str, base: usize, out: &mut Vec<Secret>) {
    let Some(auth) = crate::util::find_ignoring_case(line, "authorization") else { return };
    let Some(word) = crate::util::find_ignoring_case(&line[auth..], "bearer ") else { return };
    let mut start = auth + word + "bearer ".len();
    start += run(line.as_bytes(), start, |b| b == b' ');
    let ok = |b: u8| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b);
    let len = run(line.as_bytes(), start, ok);
    let value = &line[start..start + len];
    if len >= 16 && classes(value) >= 2 && random(value, 3.0) {
        out.push(Secret { span: Span::new(base + start, base + start + len), kind: "bearer-token" });
    }
}

/// `NAME=value` or `name: value` where the name is a secret's: the AWS secret key anywhere, and
/// dotenv-style names (`*_KEY`, `*_TOKEN`, `*_SECRET`, `PASSWORD`, …) at the start of a line.
fn named(line: &str, base: usize) -> Option<Secret> {
    let indent = line.len() - line.trim_start().len();
    let mut name_start = indent;
    if line[indent..].starts_with("export ") {
        name_start += "export ".len();
    }
    let bytes = line.as_bytes();
    let aws = crate::util::find_ignoring_case(line, "aws_secret_access_key");
    if let Some(found) = aws {
        name_start = found;
    }
    let name_len = run(bytes, name_start, |b| b.is_ascii_alphanumeric() || b == b'_');
    if name_len == 0 {
        return None;
    }
    let mut i = name_start + name_len;
    i += run(bytes, i, |b| b == b' ' || b == b'"' || b == b'\'');
    match bytes.get(i) {
        Some(b'=') => {}
        Some(b':') if aws.is_some() => {}
        _ => return None,
    }
    i += 1;
    i += run(bytes, i, |b| b == b' ' || b == b'"' || b == b'\'');
    let ok = |b: u8| b > b' ' && b != b'"' && b != b'\'' && b != b'#' && b < 0x80;
    let len = run(bytes, i, ok);
    let value = &line[i..i + len];
    let span = Span::new(base + i, base + i + len);
    if aws.is_some() {
        let shaped = len == 40 && value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'/' || b == b'+');
        return (shaped && random(value, 3.5)).then_some(Secret { span, kind: "aws-secret-key" });
    }
    let name = line[name_start..name_start + name_len].to_ascii_uppercase();
    let secret_name = ["_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_PASS", "_PWD"].iter().any(|s| name.ends_with(s))
        || ["PASSWORD", "SECRET", "TOKEN", "APIKEY"].contains(&name.as_str());
    (secret_name && len >= 12 && classes(value) >= 2 && random(value, 3.2))
        .then_some(Secret { span, kind: "dotenv-secret" })
}

/// Words placeholders are made of; a random value contains none of them.
fn placeholder_like(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    ["xxx", "***", "...", "<", ">", "${", "your", "example", "redacted", "placeholder", "changeme", "dummy"]
        .iter()
        .any(|w| lower.contains(w))
        || value.starts_with('$')
        || value.contains('…')
        || value.contains('«')
}

/// Long enough randomness: not a placeholder, and at least `bits` of Shannon entropy per byte.
fn random(value: &str, bits: f64) -> bool {
    !value.is_empty() && !placeholder_like(value) && entropy(value) >= bits
}

/// How many of lowercase letters, uppercase letters and digits `value` mixes.
fn classes(value: &str) -> usize {
    let has = |f: fn(&u8) -> bool| usize::from(value.as_bytes().iter().any(f));
    has(u8::is_ascii_lowercase) + has(u8::is_ascii_uppercase) + has(u8::is_ascii_digit)
}

fn entropy(value: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in value.bytes() {
        counts[b as usize] += 1;
    }
    let n = value.len() as f64;
    counts.iter().filter(|c| **c > 0).map(|c| f64::from(*c) / n).map(|p| -p * p.log2()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANTHROPIC: &str = "sk-ant-api03-Qx7fK2mZp9LwR4tYb8NcV1sD6hJ3gE5uA0oIxMzWqRkTyUiOpLk";

    fn kinds(text: &str) -> Vec<&'static str> {
        find(text, Mode::Lint).into_iter().map(|s| s.kind).collect()
    }

    #[test]
    fn each_pattern_fires() {
        let cases = [
            (ANTHROPIC, "anthropic-key"),
            ("key sk-proj-Zr8Kq2LmX4vN7bT1yW9cH3fJ6dP0sG5aE2uR", "openai-key"),
            ("sk-Zr8Kq2LmX4vN7bT1yW9cH3fJ6dP0sG5a", "openai-key"),
            ("ghp_Zr8Kq2LmX4vN7bT1yW9cH3fJ6dP0sG5aE2uR", "github-token"),
            ("github_pat_11ABCDEFG0Zr8Kq2LmX4vN_7bT1yW9cH3fJ6dP0sG5aE2uR", "github-token"),
            ("AKIAZ7QW3RT5YU2IO9PX", "aws-access-key"),
            ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Hk3mN2T", "aws-secret-key"),
            ("xoxb-2048671234-Zr8Kq2LmX4vN7bT1yW9cH3fJ", "slack-token"),
            ("AIzaSyZr8Kq2LmX4vN7bT1yW9cH3fJ6dP0sG5aE2", "google-api-key"),
            (
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
                "jwt",
            ),
            ("Authorization: Bearer Zr8Kq2LmX4vN7bT1yW9cH3fJ6dP0", "bearer-token"),
            ("  export DEPLOY_TOKEN=\"Zr8Kq2LmX4vN7bT1yW9c\"", "dotenv-secret"),
        ];
        for (text, kind) in cases {
            assert_eq!(kinds(text), [kind], "{text}");
        }
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAz8Kq2LmX4vN7bT1yW9cH3fJ6dP0sG5aE2uRqwe\n-----END RSA PRIVATE KEY-----\n";
        let found = find(pem, Mode::Lint);
        assert_eq!(found.len(), 1);
        assert_eq!(&pem[found[0].span.start..found[0].span.end], pem.trim_end());
    }

    #[test]
    fn placeholders_and_examples_stay_silent() {
        let silent = [
            "sk-…",
            "sk-xxx",
            "sk-ant-api03-XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
            "YOUR_API_KEY",
            "OPENAI_API_KEY=<redacted>",
            "OPENAI_API_KEY=«redacted:openai-key»",
            "ANTHROPIC_API_KEY=${ANTHROPIC_API_KEY}",
            "ANTHROPIC_API_KEY=$ANTHROPIC_API_KEY",
            "API_TOKEN=***",
            "API_TOKEN=aaaaaaaaaaaaaaaaaaaaaaaaa",
            "AKIAIOSFODNN7EXAMPLE",
            "Authorization: Bearer <token>",
            "task-management and desk-organisation are fine",
            "PRIMARY_KEY=id",
            "PRIMARY_KEY=customer_order_identifier",
            "uses sk-learn-compatible-estimator-wrappers",
            "Authorization: Bearer the-token-from-the-vault",
        ];
        for text in silent {
            assert!(kinds(text).is_empty(), "{text}: {:?}", kinds(text));
        }
        let fenced = format!("Set it:\n\n```sh\nexport KEY={ANTHROPIC}\n```\n");
        assert!(kinds(&fenced).is_empty());
        assert_eq!(find(&fenced, Mode::Redact).len(), 1);
        let tildes = format!("~~~~\n{ANTHROPIC}\n~~~~\n");
        assert!(kinds(&tildes).is_empty());
    }

    #[test]
    fn a_fence_never_closed_excuses_nothing_after_it() {
        // Markdown runs an open fence to the end of the text; the prompt is still sent whole.
        let open = format!("Notes:\n```\nnot closed\nthe deploy token {ANTHROPIC}\n");
        assert_eq!(kinds(&open), ["anthropic-key"]);
        // A shorter run does not close a longer fence.
        let short = format!("````\nexample\n```\n{ANTHROPIC}\n");
        assert_eq!(kinds(&short), ["anthropic-key"]);
    }

    #[test]
    fn redaction_is_stable() {
        let text = format!("use {ANTHROPIC} now");
        let (once, n) = redact(&text);
        assert_eq!((once.as_ref(), n), ("use «redacted:anthropic-key» now", 1));
        let (twice, n) = redact(&once);
        assert_eq!((twice.as_ref(), n), (once.as_ref(), 0));
    }

    #[test]
    fn long_inputs_stay_linear() {
        // 1.6 MB of near-misses: a scanner that backtracks per prefix would not finish this test
        // (its speed is a benchmark's business, not a timed assertion); none of them is a secret.
        let text = "sk-".repeat(200_000) + &"-----BEGIN ".repeat(50_000) + &"Authorization ".repeat(50_000);
        assert!(find(&text, Mode::Lint).is_empty());
    }
}
