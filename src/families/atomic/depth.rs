//! A lexical pre-scan that bounds how deep oxc (and any walk over its tree) may recurse on a
//! file, and the runner that gives a deep file the stack it needs. The parse recurses once per
//! nesting level: per bracket, per operator of a chain (`!!!…x`, `a=>a=>…`, `1+1+…`), and per
//! nested statement (an `else if` ladder nests each `if` in the one before). Past the limits
//! here the file is a finding instead of a crash; below them, a file deeper than a worker
//! thread's stack allows is parsed on a thread of its own with a stack sized for it.

/// How deep brackets (`(`, `[`, `{`, `${`) may nest; far past hand-written code, well below
/// what the stack given by [`run`] holds (10,000 nested `[` are refused).
pub const MAX_BRACKETS: usize = 1000;
/// How many operators one expression may chain (summed over the brackets around it).
pub const MAX_CHAIN: usize = 20_000;
/// How many statement keywords (`if`, `else`, loops…) a file may hold: each may nest once.
pub const MAX_STATEMENTS: usize = 100_000;
/// How many `<` one expression may chain: oxc tries each as a type argument list, in time
/// quadratic in the chain (1,000 take a third of a second).
pub const MAX_COMPARISONS: usize = 500;

/// Recursion a file may need, in nesting levels, up to which the caller's stack is used: a
/// worker thread's 2 MiB hold this many levels of the parse and the walks many times over.
const INLINE: usize = 256;
/// Stack per nesting level for a deep file, with room to spare (the parse and each walk use
/// well under a kilobyte per level).
const PER_LEVEL: usize = 4 * 1024;

/// Runs `f` (a parse and the walks over its tree) with a stack for `levels` nesting levels:
/// on the caller's thread when that is small, else on a thread of its own. `None` when no such
/// thread can be made.
pub fn run<R: Send>(levels: usize, f: impl FnOnce() -> R + Send) -> Option<R> {
    if levels <= INLINE {
        return Some(f());
    }
    let stack = (1 << 20) + levels.saturating_mul(PER_LEVEL);
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new().stack_size(stack).spawn_scoped(scope, f).ok()?;
        match handle.join() {
            Ok(result) => Some(result),
            // A panic in the parse is a bug; surface it on the caller's thread.
            Err(payload) => std::panic::resume_unwind(payload),
        }
    })
}

/// What the pre-scan found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scan {
    /// The first place past a limit.
    pub too_deep: Option<TooDeep>,
    /// An upper bound of the nesting levels a parse of the file reaches.
    pub levels: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deep {
    Brackets,
    Operators,
    Statements,
    Comparisons,
}

impl Deep {
    /// Why the file is not parsed, for the finding.
    pub fn message(self) -> String {
        match self {
            Deep::Brackets => format!("brackets nested deeper than {MAX_BRACKETS} levels"),
            Deep::Operators => format!("an expression chains more than {MAX_CHAIN} operators"),
            Deep::Statements => format!("more than {MAX_STATEMENTS} statement keywords (`if`, `else`, loops)"),
            Deep::Comparisons => format!("an expression chains more than {MAX_COMPARISONS} `<` comparisons"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooDeep {
    pub offset: usize,
    pub what: Deep,
}

const OPERATOR: &[u8] = b"!~+-*/%&|^<>=?:.";
const KEYWORDS: [&str; 7] = ["new", "await", "typeof", "void", "delete", "yield", "in"];
/// Keywords of statements that hold a statement, which may nest without brackets.
const STATEMENTS: [&str; 7] = ["if", "else", "for", "while", "do", "with", "switch"];

/// Scans `text` outside strings and comments: where it first nests deeper than
/// `MAX_BRACKETS` brackets, chains more than `MAX_CHAIN` operators or holds more than
/// `MAX_STATEMENTS` statement keywords, and how deep a parse of it may recurse. A statement or
/// element boundary (`;`, `,`, a line break between two operands) ends a chain.
pub fn scan(text: &str) -> Scan {
    let mut deepest = 0usize;
    let mut statements = 0usize;
    let too_deep = walk(text, &mut deepest, &mut statements);
    Scan { too_deep, levels: deepest.saturating_add(statements) }
}

/// The scan itself: `deepest` gets the most brackets plus chained operators open at once,
/// `statements` the statement keywords.
fn walk(text: &str, deepest: &mut usize, statements: &mut usize) -> Option<TooDeep> {
    let bytes = text.as_bytes();
    // Per open bracket: the operators chained at that level so far.
    let mut chains: Vec<[usize; 2]> = vec![[0, 0]];
    let mut chained = 0usize;
    // `<` comparisons chained in the open expressions: oxc reads each as a possible type
    // argument list and backtracks, so a long chain costs time quadratic in its length.
    let mut compared = 0usize;
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
                    chains.push([0, 0]);
                    *deepest = (*deepest).max(chains.len() + chained);
                    // `chains` holds the top level too.
                    if chains.len() > MAX_BRACKETS + 1 {
                        return deep(i, Deep::Brackets);
                    }
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        let mut operator = false;
        let mut weight = 1;
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
                chains.push([0, 0]);
                *deepest = (*deepest).max(chains.len() + chained);
                // `chains` holds the top level too.
                if chains.len() > MAX_BRACKETS + 1 {
                    return deep(i, Deep::Brackets);
                }
            }
            b')' | b']' | b'}' if chains.len() > 1 => {
                let [ops, lts] = chains.pop().unwrap_or([0, 0]);
                chained -= ops;
                compared -= lts;
            }
            b';' | b',' => end_chain(&mut chains, &mut chained, &mut compared),
            b'\n' => {
                let next = text[i + 1..].trim_start().as_bytes().first();
                if !after_operator && next.is_none_or(|n| !OPERATOR.contains(n)) {
                    end_chain(&mut chains, &mut chained, &mut compared);
                }
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            // A run of operator characters is one operator (`&&`, `===`, `=>`), but each prefix
            // `!`, `~`, `+`, `-` in it may nest once more (`!!x`, `a+-+-b`).
            _ if OPERATOR.contains(&b) => {
                let mut end = i;
                while end < bytes.len() && OPERATOR.contains(&bytes[end]) {
                    if end > i && bytes[end] == b'/' && matches!(bytes.get(end + 1), Some(b'/' | b'*')) {
                        break;
                    }
                    end += 1;
                }
                let run = &bytes[i..end];
                weight = run.iter().filter(|c| b"!~+-".contains(c)).count().max(1);
                if run.contains(&b'<') {
                    if let Some(top) = chains.last_mut() {
                        top[1] += 1;
                    }
                    compared += 1;
                    if compared > MAX_COMPARISONS {
                        return deep(i, Deep::Comparisons);
                    }
                }
                operator = true;
                i = end - 1;
            }
            _ if b.is_ascii_alphanumeric() || b == b'_' || b == b'$' => {
                let len =
                    bytes[i..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c == b'$').count();
                let word = &text[i..i + len];
                operator = KEYWORDS.contains(&word);
                if STATEMENTS.contains(&word) {
                    *statements += 1;
                    if *statements > MAX_STATEMENTS {
                        return deep(i, Deep::Statements);
                    }
                }
                i += len - 1;
            }
            _ => {}
        }
        if operator {
            if let Some(top) = chains.last_mut() {
                top[0] += weight;
            }
            chained += weight;
            *deepest = (*deepest).max(chains.len() + chained);
            if chained > MAX_CHAIN {
                return deep(i, Deep::Operators);
            }
        }
        after_operator = operator;
        i += 1;
    }
    None
}

fn end_chain(chains: &mut [[usize; 2]], chained: &mut usize, compared: &mut usize) {
    if let Some(top) = chains.last_mut() {
        *chained -= top[0];
        *compared -= top[1];
        *top = [0, 0];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn too_deep(text: &str) -> Option<TooDeep> {
        scan(text).too_deep
    }

    #[test]
    fn brackets_and_chains_are_bounded() {
        assert_eq!(too_deep(&"[".repeat(10_000)).map(|d| d.what), Some(Deep::Brackets));
        assert_eq!(too_deep(&"[".repeat(MAX_BRACKETS)), None);
        assert_eq!(too_deep(&"!".repeat(30_000)).map(|d| d.what), Some(Deep::Operators));
        assert_eq!(too_deep(&"! ".repeat(30_000)).map(|d| d.what), Some(Deep::Operators));
        assert_eq!(too_deep(&"a=>".repeat(20_001)).map(|d| d.what), Some(Deep::Operators));
        assert_eq!(too_deep(&"new ".repeat(20_001)).map(|d| d.what), Some(Deep::Operators));
        assert_eq!(too_deep(&"1 +\n".repeat(20_001)).map(|d| d.what), Some(Deep::Operators));
        assert_eq!(too_deep(&"1 +\n".repeat(2_000)), None);
        // `&&` is one operator, not two; `!!` nests twice.
        assert_eq!(too_deep(&format!("a{}", " && a".repeat(15_000))), None);
        assert_eq!(too_deep(&"!!".repeat(10_001)).map(|d| d.what), Some(Deep::Operators));
        assert_eq!(too_deep(&format!("x{}", " < x".repeat(501))).map(|d| d.what), Some(Deep::Comparisons));
        assert_eq!(too_deep(&"a < b;\n".repeat(5_000)), None);
        assert_eq!(too_deep(&"if (a) {} else ".repeat(100_001)).map(|d| d.what), Some(Deep::Statements));
        // Statements, elements and strings end or hide a chain.
        assert_eq!(too_deep(&"a = b + c;\n".repeat(5_000)), None);
        assert_eq!(too_deep(&"f(a.b),\n".repeat(5_000)), None);
        assert_eq!(too_deep(&"const x = a.b\n".repeat(5_000)), None);
        assert_eq!(too_deep(&format!("\"{}\" `{}` // {}", "[".repeat(500), "(".repeat(500), "{".repeat(500))), None);
        assert_eq!(too_deep(&format!("`{}`", "${".repeat(1_001))).map(|d| d.what), Some(Deep::Brackets));
    }

    #[test]
    fn levels_bound_the_recursion() {
        assert!(scan("a = b;").levels < 5);
        assert!(scan(&"[".repeat(300)).levels >= 300);
        assert!(scan(&"if (a) {} else ".repeat(300)).levels >= 600);
        assert!(scan(&"x = 1 +\n".repeat(300)).levels >= 300);
    }

    #[test]
    fn a_deep_closure_gets_its_stack() {
        fn down(n: usize) -> usize {
            let pad = std::hint::black_box([0u8; 512]);
            if n == 0 { pad[0] as usize } else { down(n - 1) + 1 }
        }
        // About 20 MiB of frames: more than any default stack, inside the one `run` sizes.
        assert_eq!(run(20_000, || down(20_000)), Some(20_000));
        assert_eq!(run(1, || 7), Some(7));
    }
}
