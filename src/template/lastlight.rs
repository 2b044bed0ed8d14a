//! Last Light's prompt template dialect: `{{key}}`, `{{dotted.key}}`, `${phase.output}`,
//! `{{#if [!]key}}…{{/if}}`, `{{slugify x}}`, `{{branchUrl f}}` (and, in the newer engine,
//! `{{artifactUrl f}}`, `{{approvalUrl}}`).
//!
//! The upstream engine is a chain of regex replacements. Whatever no regex matches stays in the
//! rendered prompt verbatim, so this parser classifies every `{{…}}` the way the engine would,
//! and [`blocks`] pairs `{{#if}}` with `{{/if}}` the way its lazy regex does not.

use crate::source::Span;

/// Which engine's regexes apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The seed-era engine (`dd02adf`): keys are `\w+(\.\w+)*`, no `artifactUrl`/`approvalUrl`.
    Seed,
    /// The current engine: keys may contain `-`; `artifactUrl` and `approvalUrl` helpers.
    Head,
}

/// One template tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    /// The whole tag, delimiters included.
    pub span: Span,
    pub kind: TagKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TagKind {
    /// `{{a.b}}`: a variable path.
    Var(Vec<Segment>),
    /// `${name.output}`: a phase output (pass 0).
    PhaseOutput(Segment),
    /// `{{#if key}}` or `{{#if !key}}`.
    IfOpen { negated: bool, key: Vec<Segment> },
    /// `{{/if}}`.
    IfClose,
    /// `{{slugify x}}`, `{{branchUrl f}}`, `{{artifactUrl f}}`, `{{approvalUrl}}`.
    Helper { name: Segment, arg: Option<Segment> },
    /// A helper, block or mustache feature the engine does not know (`{{#each x}}`, `{{else}}`,
    /// `{{upper x}}`, `{{> partial}}`): left verbatim.
    Unknown { name: Segment },
    /// A tag no regex matches for another reason (spaces, `{{{x}}}`, a `-` in a seed-era key,
    /// `{{slugify a.b}}`, `${a-b.output}`): left verbatim. The string says why.
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

/// Parses `text`; spans are shifted by `base` (where `text` starts in its file).
pub fn parse(text: &str, base: usize, engine: Engine) -> Vec<Tag> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'{' && bytes[i + 1] == b'{' {
            match tag_end(text, i) {
                Some(end) => {
                    let kind = classify(&text[i + 2..end - 2], base + i + 2, engine);
                    out.push(Tag { span: Span::new(base + i, base + end), kind });
                    i = end;
                }
                None => i += 2,
            }
        } else if bytes[i] == b'$' && bytes[i + 1] == b'{' {
            match phase_output(text, i, base) {
                Some((tag, end)) => {
                    out.push(tag);
                    i = end;
                }
                None => i += 2,
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The end (exclusive) of the `{{…}}` starting at `start`, on the same line; a third brace
/// (`{{{x}}}`) is taken into the tag.
fn tag_end(text: &str, start: usize) -> Option<usize> {
    let line_end = text[start..].find('\n').map_or(text.len(), |n| start + n);
    let close = text[start + 2..line_end].find("}}")? + start + 2;
    let end = if text[close..line_end].starts_with("}}}") && text[start..].starts_with("{{{") {
        close + 3
    } else {
        close + 2
    };
    Some(end)
}

/// `${name.output}`; other `${…}` (shell variables, JS template literals) are not tags.
fn phase_output(text: &str, start: usize, base: usize) -> Option<(Tag, usize)> {
    let line_end = text[start..].find('\n').map_or(text.len(), |n| start + n);
    let close = text[start + 2..line_end].find('}')? + start + 2;
    let inner = &text[start + 2..close];
    let name = inner.strip_suffix(".output")?;
    let span = Span::new(base + start, base + close + 1);
    let name_span = Span::new(base + start + 2, base + start + 2 + name.len());
    let segment = Segment { name: name.to_string(), span: name_span };
    let kind = if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        TagKind::PhaseOutput(segment)
    } else {
        TagKind::Malformed(format!(
            "`${{{name}.output}}` is never replaced: the engine only matches phase names made of letters, digits and `_`"
        ))
    };
    Some((Tag { span, kind }, close + 1))
}

fn classify(inner: &str, base: usize, engine: Engine) -> TagKind {
    if inner.starts_with('{') {
        return TagKind::Malformed("triple braces are not supported; the tag stays in the prompt as written".into());
    }
    if inner.is_empty() {
        return TagKind::Malformed("an empty tag stays in the prompt as written".into());
    }
    if inner.starts_with(char::is_whitespace) || inner.ends_with(char::is_whitespace) {
        return TagKind::Malformed(
            "spaces inside the braces are not allowed; the tag stays in the prompt as written".into(),
        );
    }
    if let Some(rest) = inner.strip_prefix("#if ") {
        let (negated, key_text, key_base) = match rest.strip_prefix('!') {
            Some(key) => (true, key, base + 5),
            None => (false, rest, base + 4),
        };
        return match key(key_text, key_base, engine) {
            Ok(key) => TagKind::IfOpen { negated, key },
            Err(why) => TagKind::Malformed(format!("`{{{{#if {rest}}}}}` is not a condition the engine reads: {why}")),
        };
    }
    if inner == "/if" {
        return TagKind::IfClose;
    }
    if let Some(first) = inner.chars().next()
        && matches!(first, '#' | '/' | '^' | '>' | '!' | '&')
    {
        let word_end = inner[1..].find(char::is_whitespace).map_or(inner.len(), |n| n + 1);
        return TagKind::Unknown {
            name: Segment { name: inner[..word_end].to_string(), span: Span::new(base, base + word_end) },
        };
    }
    if let Some((word, arg)) = inner.split_once(' ') {
        let name = Segment { name: word.to_string(), span: Span::new(base, base + word.len()) };
        let arg_span = Span::new(base + word.len() + 1, base + inner.len());
        let arg_segment = Segment { name: arg.to_string(), span: arg_span };
        return match word {
            "slugify" => match key(arg, arg_span.start, Engine::Seed) {
                Ok(path) if path.len() == 1 => TagKind::Helper { name, arg: Some(arg_segment) },
                _ => TagKind::Malformed(format!(
                    "`{{{{slugify {arg}}}}}` is never replaced: `slugify` takes one top-level variable (letters, digits, `_`)"
                )),
            },
            "branchUrl" | "artifactUrl" if engine.helpers().contains(&word) && !arg.contains(char::is_whitespace) => {
                TagKind::Helper { name, arg: Some(arg_segment) }
            }
            _ => TagKind::Unknown { name },
        };
    }
    if engine.helpers().contains(&inner) && inner == "approvalUrl" {
        return TagKind::Helper {
            name: Segment { name: inner.into(), span: Span::new(base, base + inner.len()) },
            arg: None,
        };
    }
    match key(inner, base, engine) {
        Ok(path) => TagKind::Var(path),
        Err(why) => TagKind::Malformed(format!("`{{{{{inner}}}}}` is never replaced: {why}")),
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
                "this engine's keys cannot contain `-` (the newer engine allows it)".to_string()
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

/// How `{{#if}}` blocks pair up, as written and as the engine reads them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Blocks {
    /// `(inner open, enclosing open)`: an `{{#if}}` inside another. The engine closes the outer
    /// block at the inner `{{/if}}` and leaves the rest as raw text.
    pub nested: Vec<(usize, usize)>,
    /// `{{#if}}` tags that are never closed (indexes into the tags).
    pub unclosed: Vec<usize>,
    /// `{{/if}}` tags with no open block.
    pub orphans: Vec<usize>,
}

/// Pairs the `{{#if}}` tags of `tags` by nesting, as the author meant them.
pub fn blocks(tags: &[Tag]) -> Blocks {
    let mut out = Blocks::default();
    let mut open: Vec<usize> = Vec::new();
    for (index, tag) in tags.iter().enumerate() {
        match tag.kind {
            TagKind::IfOpen { .. } => {
                if let Some(outer) = open.last() {
                    out.nested.push((index, *outer));
                }
                open.push(index);
            }
            TagKind::IfClose if open.pop().is_none() => out.orphans.push(index),
            _ => {}
        }
    }
    out.unclosed = open;
    out
}

/// The variable paths a tag reads: its key, a condition's key, or a helper's argument.
pub fn reads(tag: &Tag) -> Option<&[Segment]> {
    match &tag.kind {
        TagKind::Var(path) | TagKind::IfOpen { key: path, .. } => Some(path),
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
        assert!(parse("echo ${HOME} ${x:-y}", 0, Engine::Head).is_empty());
    }

    #[test]
    fn what_the_engine_leaves_verbatim() {
        assert!(matches!(&kinds("{{ x }}", Engine::Head)[0], TagKind::Malformed(_)));
        assert!(matches!(&kinds("{{{x}}}", Engine::Head)[0], TagKind::Malformed(_)));
        assert!(matches!(&kinds("{{models.pr-fix}}", Engine::Seed)[0], TagKind::Malformed(m) if m.contains('-')));
        assert!(matches!(&kinds("{{models.pr-fix}}", Engine::Head)[0], TagKind::Var(_)));
        assert!(matches!(&kinds("{{slugify a.b}}", Engine::Head)[0], TagKind::Malformed(_)));
        assert!(matches!(&kinds("{{upper x}}", Engine::Head)[0], TagKind::Unknown { name } if name.name == "upper"));
        assert!(matches!(&kinds("{{#each x}}", Engine::Head)[0], TagKind::Unknown { name } if name.name == "#each"));
        assert!(matches!(&kinds("{{artifactUrl a.md}}", Engine::Seed)[0], TagKind::Unknown { .. }));
        assert!(matches!(&kinds("${a-b.output}", Engine::Head)[0], TagKind::Malformed(_)));
        assert!(kinds("{{ not closed\n}}", Engine::Head).is_empty());
    }

    #[test]
    fn if_blocks() {
        let tags = parse("{{#if a}}x{{#if !b}}y{{/if}}z{{/if}}{{/if}}{{#if c}}", 0, Engine::Head);
        let b = blocks(&tags);
        assert_eq!(b.nested, vec![(1, 0)]);
        assert_eq!(b.orphans, vec![4]);
        assert_eq!(b.unclosed, vec![5]);
        assert!(matches!(&tags[1].kind, TagKind::IfOpen { negated: true, key } if key[0].name == "b"));
    }
}
