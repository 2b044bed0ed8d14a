//! Last Light's prompt template dialect: `{{key}}`, `{{dotted.key}}`, `${phase.output}`,
//! `{{#if [!]key}}…{{/if}}`, `{{slugify x}}`, `{{branchUrl f}}` (and, in the newer engine,
//! `{{artifactUrl f}}`, `{{approvalUrl}}`).
//!
//! The upstream engine is a chain of regex replacements. Whatever no regex matches stays in the
//! rendered prompt verbatim, so this parser classifies every `{{…}}` the way the engine would,
//! and [`blocks`] pairs `{{#if}}` with `{{/if}}` the way its lazy regex does.
//!
//! The scan is linear: each search for a delimiter is remembered until the scan passes it, so
//! text full of unterminated `{{` is not searched again for every one of them.

use crate::source::Span;

/// Which engine's regexes apply: Last Light's template dialect changed once, at 0.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// Before 0.2 (the seed, `dd02adf`, included): keys are `\w+(\.\w+)*`, no
    /// `artifactUrl`/`approvalUrl`.
    Seed,
    /// 0.2 and later: keys may contain `-`; `artifactUrl` and `approvalUrl` helpers.
    Head,
}

/// One template tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    /// The whole tag, delimiters included.
    pub span: Span,
    pub kind: TagKind,
    /// Written right after a `$`, as in the GitHub Actions expression `${{github.sha}}`: the
    /// engine still replaces the `{{…}}` part and leaves the `$`.
    pub after_dollar: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TagKind {
    /// `{{a.b}}`: a variable path.
    Var(Vec<Segment>),
    /// `{{{a.b}}}` (or more braces): pass 4 replaces the inner `{{a.b}}` and the extra braces
    /// stay around the value.
    Braced(Vec<Segment>),
    /// `${name.output}`: a phase output (pass 0).
    PhaseOutput(Segment),
    /// `{{#if key}}` or `{{#if !key}}`.
    IfOpen { negated: bool, key: Vec<Segment> },
    /// `{{/if}}`.
    IfClose,
    /// `{{slugify x}}`, `{{branchUrl f}}`, `{{artifactUrl f}}`, `{{approvalUrl}}`.
    Helper { name: Segment, arg: Option<Segment> },
    /// A helper, block or mustache feature the engine does not know (`{{#each x}}`, `{{else}}`,
    /// `{{upper x}}`, `{{> partial}}`).
    Unknown { name: Segment },
    /// A tag no regex matches for another reason (spaces, `{{{x}}}`, a `-` in a seed-era key,
    /// `{{slugify a.b}}`, `${a-b.output}`, `{{x}` with one closing brace): left verbatim. The
    /// string says why.
    Malformed(String),
}

/// A name with its span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub name: String,
    pub span: Span,
}

/// Helpers each engine knows.
pub const SEED_HELPERS: [&str; 2] = ["slugify", "branchUrl"];
pub const HEAD_HELPERS: [&str; 4] = ["slugify", "branchUrl", "artifactUrl", "approvalUrl"];

impl Engine {
    pub fn helpers(self) -> &'static [&'static str] {
        match self {
            Engine::Seed => &SEED_HELPERS,
            Engine::Head => &HEAD_HELPERS,
        }
    }

    fn key_char(self, c: char) -> bool {
        c.is_ascii_alphanumeric() || c == '_' || (self == Engine::Head && c == '-')
    }
}

impl TagKind {
    /// Whether some pass replaces the tag (rather than leaving it verbatim).
    fn replaced(&self) -> bool {
        matches!(
            self,
            TagKind::Var(_) | TagKind::Braced(_) | TagKind::IfOpen { .. } | TagKind::IfClose | TagKind::Helper { .. }
        )
    }
}

/// The next occurrence of a pattern at or after a position, remembered while the scan has not
/// passed it (positions only grow, so every byte is searched about once).
struct Next {
    pattern: &'static str,
    /// `None`: not searched yet; `Some(None)`: no occurrence after the last search start.
    found: Option<Option<usize>>,
}

impl Next {
    fn new(pattern: &'static str) -> Next {
        Next { pattern, found: None }
    }

    fn from(&mut self, text: &str, from: usize) -> Option<usize> {
        match self.found {
            Some(None) => None,
            Some(Some(at)) if at >= from => Some(at),
            _ => {
                let at = text.get(from..).and_then(|rest| rest.find(self.pattern)).map(|n| from + n);
                self.found = Some(at);
                at
            }
        }
    }
}

/// Parses `text`; spans are shifted by `base` (where `text` starts in its file).
pub fn parse(text: &str, base: usize, engine: Engine) -> Vec<Tag> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let (mut newline, mut close2, mut open2, mut close1) =
        (Next::new("\n"), Next::new("}}"), Next::new("{{"), Next::new("}"));
    let mut i = 0;
    while i + 1 < bytes.len() {
        match (bytes[i], bytes[i + 1]) {
            (b'{', b'{') => {
                if let Some(close) = multiline_if(text, i) {
                    let kind = classify(&text[i + 2..close], base + i + 2, engine);
                    out.push(Tag { span: Span::new(base + i, base + close + 2), kind, after_dollar: false });
                    i = close + 2;
                    continue;
                }
                let after_dollar = i > 0 && bytes[i - 1] == b'$';
                let line_end = newline.from(text, i).unwrap_or(text.len());
                // Extra opening braces (`{{{x}}}`), counted up to a few so a long run stays linear.
                let extra = bytes[i + 2..].iter().take(6).take_while(|b| **b == b'{').count();
                let content = i + 2 + extra;
                let close = close2.from(text, content).filter(|c| *c < line_end);
                let next_open = open2.from(text, content).filter(|o| *o < line_end);
                match close {
                    Some(close) if next_open.is_none_or(|o| o >= close) => {
                        let closing = bytes[close + 2..].iter().take(extra).take_while(|b| **b == b'}').count();
                        let end = close + 2 + closing;
                        let kind = classify(&text[i + 2..close], base + i + 2, engine);
                        // `${{ github.sha }}` and other expressions the engine does not touch
                        // are GitHub Actions syntax, not template tags.
                        if !after_dollar || kind.replaced() {
                            out.push(Tag { span: Span::new(base + i, base + end), kind, after_dollar });
                        }
                        i = end;
                    }
                    _ => {
                        let limit = next_open.unwrap_or(line_end);
                        match one_brace(text, i, limit, base, engine) {
                            Some(tag) => {
                                i = tag.span.end - base;
                                out.push(tag);
                            }
                            None => i += 2,
                        }
                    }
                }
            }
            // `${{`: the `{{` is read on the next step, as a tag after a `$`.
            (b'$', b'{') if bytes.get(i + 2) == Some(&b'{') => i += 1,
            (b'$', b'{') => {
                let line_end = newline.from(text, i).unwrap_or(text.len());
                match close1.from(text, i + 2).filter(|c| *c < line_end).and_then(|c| dollar(text, i, c, base)) {
                    Some((tag, end)) => {
                        out.push(tag);
                        i = end;
                    }
                    None => i += 2,
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// `{{#if` with its key on a later line: pass 1's `\s+` takes line breaks too. Returns where the
/// closing `}}` starts.
fn multiline_if(text: &str, start: usize) -> Option<usize> {
    let rest = text.get(start + 2..)?.strip_prefix("#if")?;
    let after = rest.trim_start();
    let space = &rest[..rest.len() - after.len()];
    if !space.contains('\n') {
        return None;
    }
    let key = after.strip_prefix('!').unwrap_or(after);
    let key_len = key.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))).unwrap_or(key.len());
    let close = start + 2 + 3 + space.len() + (after.len() - key.len()) + key_len;
    (key_len > 0 && text.get(close..)?.starts_with("}}")).then_some(close)
}

/// `{{key}` (one closing brace) before the next `{{` or the end of the line: a tag the author
/// meant, which no pass matches. Other unterminated `{{` are plain text.
fn one_brace(text: &str, start: usize, limit: usize, base: usize, engine: Engine) -> Option<Tag> {
    let region = text.get(start + 2..limit)?;
    let brace = region.find('}')?;
    let inner = &region[..brace];
    if inner.contains('{') || !classify(inner, base + start + 2, engine).replaced() {
        return None;
    }
    let end = start + 2 + brace + 1;
    let why = format!(
        "`{{{{{inner}}}` has one closing brace, so no pass matches it and it stays in the prompt verbatim; write `{{{{{inner}}}}}`"
    );
    Some(Tag { span: Span::new(base + start, base + end), kind: TagKind::Malformed(why), after_dollar: false })
}

/// `${…}` ending at `close`: a phase output (pass 0), or a near miss of one. Other `${…}` (shell
/// variables, JS template literals) are not tags.
fn dollar(text: &str, start: usize, close: usize, base: usize) -> Option<(Tag, usize)> {
    let inner = &text[start + 2..close];
    let (name, field) = inner.split_once('.')?;
    let span = Span::new(base + start, base + close + 1);
    let name_span = Span::new(base + start + 2, base + start + 2 + name.len());
    let segment = Segment { name: name.to_string(), span: name_span };
    let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let kind = if field == "output" {
        if word(name) {
            TagKind::PhaseOutput(segment)
        } else {
            TagKind::Malformed(format!(
                "`${{{name}.output}}` is never replaced: the engine only matches phase names made of ASCII letters, digits and `_` (`\\w` in JavaScript)"
            ))
        }
    } else if word(name) && near_output(field) {
        TagKind::Malformed(format!(
            "`${{{inner}}}` is not a phase output: the engine replaces only `${{name.output}}`, so this stays in the prompt verbatim; write `${{{name}.output}}`"
        ))
    } else {
        return None;
    };
    Some((Tag { span, kind, after_dollar: false }, close + 1))
}

/// `outputs`, `Output`, `ouput`: a misspelt `output` (not any field, so `${user.name}` in a
/// JavaScript example stays text).
fn near_output(field: &str) -> bool {
    let lower = field.to_ascii_lowercase();
    lower == "output" || ((4..=8).contains(&field.len()) && crate::util::edit_distance(&lower, "output") <= 2)
}

fn classify(inner: &str, base: usize, engine: Engine) -> TagKind {
    if inner.starts_with('{') {
        let stripped = inner.trim_start_matches('{');
        let at = base + inner.len() - stripped.len();
        return match key(stripped, at, engine) {
            Ok(path) => TagKind::Braced(path),
            Err(_) => TagKind::Malformed(
                "the engine has no triple-brace tag and no pass matches this one, so it stays in the prompt as written"
                    .into(),
            ),
        };
    }
    if inner.is_empty() {
        return TagKind::Malformed("an empty tag stays in the prompt as written".into());
    }
    if inner.starts_with(char::is_whitespace) || inner.ends_with(char::is_whitespace) {
        return TagKind::Malformed(
            "spaces inside the braces are not allowed; the tag stays in the prompt as written".into(),
        );
    }
    // The helpers' regexes take any run of whitespace (`\s+`) between the word and its argument.
    let (word, arg) = match inner.find(char::is_whitespace) {
        Some(n) => {
            let rest = inner[n..].trim_start();
            (&inner[..n], Some((rest, inner.len() - rest.len())))
        }
        None => (inner, None),
    };
    let word_segment = Segment { name: word.to_string(), span: Span::new(base, base + word.len()) };
    match (word, arg) {
        ("#if", None) => {
            return TagKind::Malformed(
                "`{{#if}}` needs a key (`{{#if issueBody}}…{{/if}}`); without one no pass matches it and it stays in the prompt verbatim".into(),
            );
        }
        ("#if", Some((rest, at))) => {
            let (negated, key_text, key_base) = match rest.strip_prefix('!') {
                Some(key) => (true, key, base + at + 1),
                None => (false, rest, base + at),
            };
            return match key(key_text, key_base, engine) {
                Ok(key) => TagKind::IfOpen { negated, key },
                Err(why) => TagKind::Malformed(format!("`{{{{{inner}}}}}` is not a condition the engine reads: {why}")),
            };
        }
        ("/if", None) => return TagKind::IfClose,
        ("/if", Some(_)) => {
            return TagKind::Malformed(format!(
                "`{{{{{inner}}}}}` is not a block end the engine knows (only `{{{{/if}}}}`); it stays in the prompt verbatim"
            ));
        }
        ("else", None) => return TagKind::Unknown { name: word_segment },
        _ => {}
    }
    if matches!(inner.chars().next(), Some('#' | '/' | '^' | '>' | '!' | '&')) {
        return TagKind::Unknown { name: word_segment };
    }
    let helper = engine.helpers().contains(&word);
    match arg {
        Some((arg, at)) => {
            let arg_segment = Segment { name: arg.to_string(), span: Span::new(base + at, base + inner.len()) };
            match word {
                "slugify" if arg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                    TagKind::Helper { name: word_segment, arg: Some(arg_segment) }
                }
                "slugify" => TagKind::Malformed(format!(
                    "`{{{{{inner}}}}}` is never replaced: `slugify` takes one top-level variable (letters, digits, `_`)"
                )),
                "branchUrl" | "artifactUrl" if helper && !arg.contains(char::is_whitespace) => {
                    TagKind::Helper { name: word_segment, arg: Some(arg_segment) }
                }
                "branchUrl" | "artifactUrl" if helper => TagKind::Malformed(format!(
                    "`{{{{{inner}}}}}` is never replaced: `{word}` takes one file name without spaces"
                )),
                "approvalUrl" if helper => TagKind::Malformed(format!(
                    "`{{{{{inner}}}}}` is never replaced: `approvalUrl` takes no argument (`{{{{approvalUrl}}}}`)"
                )),
                _ => TagKind::Unknown { name: word_segment },
            }
        }
        None if helper && inner == "approvalUrl" => TagKind::Helper { name: word_segment, arg: None },
        // `{{branchUrl}}` without its file is read by pass 4 as a variable (the rules say so).
        None => match key(inner, base, engine) {
            Ok(path) => TagKind::Var(path),
            Err(why) => TagKind::Malformed(format!("`{{{{{inner}}}}}` is never replaced: {why}")),
        },
    }
}

/// A dotted key, split into segments.
fn key(text: &str, base: usize, engine: Engine) -> Result<Vec<Segment>, String> {
    let mut out = Vec::new();
    let mut at = base;
    for part in text.split('.') {
        if part.is_empty() {
            return Err("a key has an empty segment".into());
        }
        if !part.chars().all(|c| engine.key_char(c)) {
            let why = if engine == Engine::Seed && part.chars().all(|c| Engine::Head.key_char(c)) {
                "keys cannot contain `-` before Last Light 0.2 (5cecbdf0), and this repository is older".to_string()
            } else {
                format!("`{part}` is not a key (letters, digits, `_`)")
            };
            return Err(why);
        }
        out.push(Segment { name: part.to_string(), span: Span::new(at, at + part.len()) });
        at += part.len() + 1;
    }
    Ok(out)
}

/// Whether a tag the engine leaves verbatim (`source` is its whole text) looks like one written
/// for this engine, rather than another language's braces in prose: `${x.output}` near misses,
/// a key (`{{ issueTitle }}`, `{{{x}}}`), a block or mustache sigil before a word (`{{#each x}}`,
/// `{{> footer}}`), or a helper call whose name is a known or near-known helper, or whose
/// arguments are keys (`{{upper issueTitle}}`). Go's `{{1, 2}}`, Helm's `{{ .Values.x }}` or
/// `{{- include "a" . }}` and Angular's `{{user?.name}}` are not.
pub fn looks_meant(source: &str) -> bool {
    if source.starts_with("${") {
        return true;
    }
    let content = source.trim_start_matches('{').trim_end_matches('}').trim();
    let word = |w: &str| {
        w.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    let path = |p: &str| p.split('.').all(word);
    if let Some(rest) = content.strip_prefix(['#', '/', '^', '>', '!', '&']) {
        return rest.split_whitespace().next().is_some_and(word);
    }
    let mut parts = content.split_whitespace();
    let Some(first) = parts.next() else { return false };
    let args: Vec<&str> = parts.collect();
    if args.is_empty() {
        return path(first);
    }
    let helper = HEAD_HELPERS.contains(&first) || crate::util::did_you_mean(first, HEAD_HELPERS).is_some();
    word(first) && (helper || args.iter().all(|a| path(a)))
}

/// How the engine pairs `{{#if}}` with `{{/if}}`: pass 1 is a lazy regex, so each opening tag
/// ends at the first `{{/if}}` after it, an `{{#if}}` inside stays in the body as raw text, and
/// the scan resumes after that `{{/if}}`. All indexes are into the tags.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Blocks {
    /// `(open, close)`: the blocks the engine replaces.
    pub pairs: Vec<(usize, usize)>,
    /// `{{#if}}` tags inside another block's body.
    pub nested: Vec<Nested>,
    /// `{{#if}}` tags with no `{{/if}}` after them: left verbatim, their text always kept.
    pub unclosed: Vec<usize>,
    /// `{{/if}}` tags with no block open, left verbatim (except those counted as a nested
    /// block's leftover).
    pub orphans: Vec<usize>,
}

/// An `{{#if}}` inside the body of another block.
#[derive(Debug, PartialEq, Eq)]
pub struct Nested {
    pub inner: usize,
    pub outer: usize,
    /// The `{{/if}}` that ends the outer block (the inner block's, as written).
    pub close: usize,
    /// The `{{/if}}` written to close the outer block, which is left over as raw text.
    pub leftover: Option<usize>,
}

pub fn blocks(tags: &[Tag]) -> Blocks {
    let mut out = Blocks::default();
    let mut open: Option<usize> = None;
    let mut inside: Vec<usize> = Vec::new();
    // Nested blocks (indexes into `out.nested`) whose outer `{{/if}}` may follow as a leftover.
    let mut waiting: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
    for (index, tag) in tags.iter().enumerate() {
        match tag.kind {
            TagKind::IfOpen { .. } => match open {
                Some(_) => inside.push(index),
                None => {
                    open = Some(index);
                    waiting.clear();
                }
            },
            TagKind::IfClose => match open.take() {
                Some(outer) => {
                    out.pairs.push((outer, index));
                    for inner in inside.drain(..) {
                        out.nested.push(Nested { inner, outer, close: index, leftover: None });
                        waiting.push_back(out.nested.len() - 1);
                    }
                }
                None => match waiting.pop_front() {
                    Some(n) => out.nested[n].leftover = Some(index),
                    None => out.orphans.push(index),
                },
            },
            _ => {}
        }
    }
    // With no `{{/if}}` after the outer tag, none follows the ones inside it either.
    if let Some(outer) = open {
        out.unclosed.push(outer);
        out.unclosed.extend(inside);
    }
    out
}

/// The variable paths a tag reads: its key, a condition's key, or a helper's argument.
pub fn reads(tag: &Tag) -> Option<&[Segment]> {
    match &tag.kind {
        TagKind::Var(path) | TagKind::Braced(path) | TagKind::IfOpen { key: path, .. } => Some(path),
        TagKind::PhaseOutput(segment) => Some(std::slice::from_ref(segment)),
        TagKind::Helper { name, arg: Some(arg) } if name.name == "slugify" => Some(std::slice::from_ref(arg)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str, engine: Engine) -> Vec<TagKind> {
        parse(text, 0, engine).into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn variables_and_outputs() {
        let tags = parse("a {{issueDir}}/x ${plan.output} {{models.architect}}", 0, Engine::Head);
        assert_eq!(tags.len(), 3);
        assert!(matches!(&tags[0].kind, TagKind::Var(p) if p[0].name == "issueDir" && p[0].span == Span::new(4, 12)));
        assert!(matches!(&tags[1].kind, TagKind::PhaseOutput(s) if s.name == "plan" && s.span == Span::new(19, 23)));
        assert!(matches!(&tags[2].kind, TagKind::Var(p) if p.len() == 2 && p[1].span == Span::new(41, 50)));
        assert!(parse("echo ${HOME} ${x:-y} ${user.name}", 0, Engine::Head).is_empty());
    }

    #[test]
    fn what_the_engine_leaves_verbatim() {
        assert!(matches!(&kinds("{{ x }}", Engine::Head)[0], TagKind::Malformed(_)));
        assert!(matches!(&kinds("{{{x.y}}}", Engine::Head)[0], TagKind::Braced(p) if p.len() == 2));
        assert!(matches!(&kinds("{{{ x }}}", Engine::Head)[0], TagKind::Malformed(_)));
        assert!(matches!(&kinds("{{models.pr-fix}}", Engine::Seed)[0], TagKind::Malformed(m) if m.contains('-')));
        assert!(matches!(&kinds("{{models.pr-fix}}", Engine::Head)[0], TagKind::Var(_)));
        assert!(matches!(&kinds("{{slugify a.b}}", Engine::Head)[0], TagKind::Malformed(_)));
        assert!(matches!(&kinds("{{upper x}}", Engine::Head)[0], TagKind::Unknown { name } if name.name == "upper"));
        assert!(matches!(&kinds("{{#each x}}", Engine::Head)[0], TagKind::Unknown { name } if name.name == "#each"));
        assert!(matches!(&kinds("{{else}}", Engine::Head)[0], TagKind::Unknown { name } if name.name == "else"));
        assert!(matches!(&kinds("{{artifactUrl a.md}}", Engine::Seed)[0], TagKind::Unknown { .. }));
        assert!(matches!(&kinds("${a-b.output}", Engine::Head)[0], TagKind::Malformed(_)));
        assert!(
            matches!(&kinds("${plan.outputs}", Engine::Head)[0], TagKind::Malformed(m) if m.contains("${plan.output}"))
        );
        assert!(matches!(&kinds("{{#if}}", Engine::Head)[0], TagKind::Malformed(m) if m.contains("needs a key")));
        assert!(kinds("{{ not closed\n}}", Engine::Head).is_empty());
    }

    #[test]
    fn whitespace_runs_after_helpers_and_if() {
        let tags = kinds("{{#if  issueBody}}ok{{/if}} {{slugify \t issueTitle}} {{branchUrl   a.md}}", Engine::Head);
        assert!(matches!(&tags[0], TagKind::IfOpen { key, .. } if key[0].name == "issueBody"));
        assert!(matches!(&tags[1], TagKind::IfClose));
        assert!(matches!(&tags[2], TagKind::Helper { arg: Some(a), .. } if a.name == "issueTitle"));
        assert!(matches!(&tags[3], TagKind::Helper { arg: Some(a), .. } if a.name == "a.md"));
        let spans = parse("{{#if   !x}}", 0, Engine::Head);
        assert!(matches!(&spans[0].kind, TagKind::IfOpen { negated: true, key } if key[0].span == Span::new(9, 10)));
    }

    #[test]
    fn extra_braces_around_a_key() {
        // Pass 4 replaces the inner `{{key}}`; the tag covers the extra braces on both sides.
        let tags = parse("a {{{issueTitle}}} b {{{{repo}}}} c", 0, Engine::Head);
        assert_eq!(tags.len(), 2);
        assert_eq!((tags[0].span, tags[1].span), (Span::new(2, 18), Span::new(21, 33)));
        assert!(matches!(&tags[1].kind, TagKind::Braced(p) if p[0].name == "repo" && p[0].span == Span::new(25, 29)));
    }

    #[test]
    fn an_if_key_on_the_next_line() {
        // The engine's `\s+` after `#if` takes line breaks too.
        let tags = parse("{{#if\n  !issueTitle}}x{{/if}} {{#if\n}}", 0, Engine::Head);
        assert!(matches!(&tags[0].kind, TagKind::IfOpen { negated: true, key } if key[0].span == Span::new(9, 19)));
        assert_eq!(tags[0].span, Span::new(0, 21));
        assert!(matches!(tags[1].kind, TagKind::IfClose));
        assert_eq!(tags.len(), 2, "an `{{#if` with no key on the next line is not a tag: {tags:?}");
    }

    #[test]
    fn tags_meant_for_this_engine() {
        for meant in [
            "{{ issueTitle }}",
            "{{ models.pr-fix }}",
            "{{{x}}}",
            "{{#each items}}",
            "{{/each}}",
            "{{> footer}}",
            "{{slugfy issueTitle}}",
            "{{upper issueTitle}}",
            "{{ slugify issue.title }}",
            "${a-b.output}",
        ] {
            assert!(looks_meant(meant), "{meant}");
        }
        for other in [
            "{{1, 2}",
            "{{\"a\", 1}",
            "{{ .Values.replicaCount }}",
            "{{- include \"app.labels\" . | nindent 4 }}",
            "{{ count * 2 }}",
            "{{user?.name}}",
            "{{}}",
            "{{range .}}",
            "{{\"\\n\"}}",
            "{{ include \"app.fullname\" . }}",
        ] {
            assert!(!looks_meant(other), "{other}");
        }
    }

    #[test]
    fn one_closing_brace() {
        let tags = parse("a {{issueTitle} and {{branch}}", 0, Engine::Head);
        assert_eq!(tags.len(), 2);
        assert_eq!(tags[0].span, Span::new(2, 15));
        assert!(matches!(&tags[0].kind, TagKind::Malformed(m) if m.contains("one closing brace")));
        assert!(matches!(&tags[1].kind, TagKind::Var(p) if p[0].name == "branch"));
        // Not a tag the author meant: plain text.
        assert!(parse("const o = {{a: 1}, b};", 0, Engine::Head).is_empty());
    }

    #[test]
    fn github_actions_expressions() {
        let tags = parse("${{github.sha}} ${{ secrets.X }} ${{ github.event_name == 'push' }}", 0, Engine::Head);
        assert_eq!(tags.len(), 1);
        assert_eq!(tags[0].span, Span::new(1, 15));
        assert!(tags[0].after_dollar);
    }

    #[test]
    fn if_blocks_pair_like_the_lazy_regex() {
        // The inner `{{/if}}` closes the outer block; the outer `{{/if}}` is left over.
        let tags = parse("{{#if a}}x{{#if !b}}y{{/if}}z{{/if}}{{/if}}{{#if c}}", 0, Engine::Head);
        let b = blocks(&tags);
        assert_eq!(b.pairs, vec![(0, 2)]);
        assert_eq!(b.nested, vec![Nested { inner: 1, outer: 0, close: 2, leftover: Some(3) }]);
        assert_eq!(b.orphans, vec![4]);
        assert_eq!(b.unclosed, vec![5]);
        assert!(matches!(&tags[1].kind, TagKind::IfOpen { negated: true, key } if key[0].name == "b"));
        // A nested block with no leftover, then an ordinary block.
        let tags =
            parse("{{#if issueBody}}x{{#if issueTitle}}y{{/if}}\n{{#if !issueLabels}}none{{/if}}", 0, Engine::Head);
        let b = blocks(&tags);
        assert_eq!(b.nested, vec![Nested { inner: 1, outer: 0, close: 2, leftover: None }]);
        assert_eq!(b.pairs, vec![(0, 2), (3, 4)]);
        assert!(b.orphans.is_empty() && b.unclosed.is_empty());
        // No `{{/if}}` at all: every opening tag stays.
        let b = blocks(&parse("{{#if a}}{{#if b}}", 0, Engine::Head));
        assert_eq!(b.unclosed, vec![0, 1]);
    }

    #[test]
    fn linear_on_unterminated_tags() {
        // Quadratic scanning took seconds here; the test harness timeout is the guard.
        let text = "{{x ".repeat(250_000) + &"{".repeat(1_000_000);
        assert!(parse(&text, 0, Engine::Head).is_empty());
        let text = "${x ".repeat(250_000);
        assert!(parse(&text, 0, Engine::Head).is_empty());
    }
}
