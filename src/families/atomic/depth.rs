//! A lexical pre-scan that refuses TypeScript too deep to parse on a worker thread's stack.
//! oxc (and any walk over its tree) recurses once per nesting level: per bracket, and per
//! operator of a chain (`!!!…x`, `a=>a=>…`, `1+1+…`, `a?b:a?b:…`). 10,000 nested `[` overflow a
//! 2 MiB stack, so such input is a finding instead of a crash.

use crate::source::MAX_DEPTH;

/// How many operators one expression may chain (summed over the brackets around it).
pub const MAX_CHAIN: usize = 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deep {
    Brackets,
    Operators,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooDeep {
    pub offset: usize,
    pub what: Deep,
}

const OPERATOR: &[u8] = b"!~+-*/%&|^<>=?:.";
const KEYWORDS: [&str; 7] = ["new", "await", "typeof", "void", "delete", "yield", "in"];

/// Where `text` first nests deeper than `MAX_DEPTH` brackets (`(`, `[`, `{`, `${`) or chains
/// more than `MAX_CHAIN` operators, outside strings and comments; `None` when it does not. A
/// statement or element boundary (`;`, `,`, a line break between two operands) ends a chain.
pub fn too_deep(text: &str) -> Option<TooDeep> {
    let bytes = text.as_bytes();
    // Per open bracket: the operators chained at that level so far.
    let mut chains: Vec<usize> = vec![0];
    let mut chained = 0usize;
    // Template literals nest on their own: the bracket depth at each open backtick.
    let mut templates: Vec<usize> = Vec::new();
    // Whether the last token was an operator (a line break after one continues the chain).
    let mut after_operator = false;
    let mut i = 0;
    let deep = |offset, what| Some(TooDeep { offset, what });
    while i < bytes.len() {
        let b = bytes[i];
        if templates.last() == Some(&chains.len()) {
            match b {
                b'\\' => i += 1,
                b'`' => {
                    templates.pop();
                }
                b'$' if bytes.get(i + 1) == Some(&b'{') => {
                    i += 1;
                    chains.push(0);
                    // `chains` holds the top level too.
                    if chains.len() > MAX_DEPTH + 1 {
                        return deep(i, Deep::Brackets);
                    }
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        let mut operator = false;
        match b {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(bytes.len(), |n| i + 2 + n + 2);
                continue;
            }
            b'"' | b'\'' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b && bytes[i] != b'\n' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'`' => templates.push(chains.len()),
            b'(' | b'[' | b'{' => {
                chains.push(0);
                // `chains` holds the top level too.
                if chains.len() > MAX_DEPTH + 1 {
                    return deep(i, Deep::Brackets);
                }
            }
            b')' | b']' | b'}' if chains.len() > 1 => chained -= chains.pop().unwrap_or(0),
            b';' | b',' => end_chain(&mut chains, &mut chained),
            b'\n' => {
                let next = text[i + 1..].trim_start().as_bytes().first();
                if !after_operator && next.is_none_or(|n| !OPERATOR.contains(n)) {
                    end_chain(&mut chains, &mut chained);
                }
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            // Each character counts (`!!x` nests twice; `===` is over-counted, which is harmless).
            _ if OPERATOR.contains(&b) => operator = true,
            _ if b.is_ascii_alphanumeric() || b == b'_' || b == b'$' => {
                let len =
                    bytes[i..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c == b'$').count();
                operator = KEYWORDS.contains(&&text[i..i + len]);
                i += len - 1;
            }
            _ => {}
        }
        if operator {
            if let Some(top) = chains.last_mut() {
                *top += 1;
            }
            chained += 1;
            if chained > MAX_CHAIN {
                return deep(i, Deep::Operators);
            }
        }
        after_operator = operator;
        i += 1;
    }
    None
}

fn end_chain(chains: &mut [usize], chained: &mut usize) {
    if let Some(top) = chains.last_mut() {
        *chained -= *top;
        *top = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_and_chains_are_bounded() {
        assert_eq!(too_deep(&"[".repeat(10_000)).map(|d| d.what), Some(Deep::Brackets));
        assert_eq!(too_deep(&"!".repeat(10_000)).map(|d| d.what), Some(Deep::Operators));
        assert_eq!(too_deep(&"! ".repeat(10_000)).map(|d| d.what), Some(Deep::Operators));
        assert_eq!(too_deep(&"a=>".repeat(2_000)).map(|d| d.what), Some(Deep::Operators));
        assert_eq!(too_deep(&"new ".repeat(2_000)).map(|d| d.what), Some(Deep::Operators));
        assert_eq!(too_deep(&"1 +\n".repeat(2_000)).map(|d| d.what), Some(Deep::Operators));
        // Statements, elements and strings end or hide a chain.
        assert_eq!(too_deep(&"a = b + c;\n".repeat(5_000)), None);
        assert_eq!(too_deep(&"f(a.b),\n".repeat(5_000)), None);
        assert_eq!(too_deep(&"const x = a.b\n".repeat(5_000)), None);
        assert_eq!(too_deep(&format!("\"{}\" `{}` // {}", "[".repeat(500), "(".repeat(500), "{".repeat(500))), None);
        assert_eq!(too_deep(&format!("`{}`", "${".repeat(200))).map(|d| d.what), Some(Deep::Brackets));
    }
}
