//! Where the cursor is in a YAML block, read from its lines: the key or value being typed and
//! the keys above it by indentation. The tree cannot say this on a blank line, and there is no
//! tree at all while a key is half-typed (`tur` alone on a line does not parse), which is when
//! completion is asked for most.

use crate::source::Span;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Place {
    /// A key of the mapping at `parents` (keys from the document root).
    Key { parents: Vec<String> },
    /// The value of the key at `path`; `in_list` for an item of a list.
    Value { path: Vec<String>, in_list: bool },
}

#[derive(Clone, Debug)]
pub(super) struct Located {
    pub place: Place,
    /// The partial word before the cursor, which a completion replaces.
    pub partial: Span,
    /// What the same mapping (keys) or list (items) already holds, read from the lines; for
    /// when the block does not parse.
    pub present: Vec<String>,
}

/// A character of a key, a stage id or a tool name.
pub(super) fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '$'
}

/// Where `offset` is in the YAML `block` of `text`.
pub(super) fn locate(text: &str, block: Span, offset: usize) -> Option<Located> {
    let all = lines(text, block);
    let row = row_of(&all, offset)?;
    let (line_start, line) = all[row];
    let prefix = text.get(line_start..offset)?;
    let partial_len: usize = prefix.chars().rev().take_while(|c| is_word(*c)).map(char::len_utf8).sum();
    let partial = Span::new(offset - partial_len, offset);
    let head = &prefix[..prefix.len() - partial_len];
    let indent = indent_of(head);
    let mut rest = &head[indent..];
    if rest.starts_with('#') || rest.contains(" #") {
        return None;
    }
    let in_item = rest.starts_with("- ");
    if in_item {
        rest = rest[2..].trim_start();
    }
    let above = &all[..row];
    let Some((key, after)) = split_key(rest) else {
        // Only an opening quote may stand between the indentation and the word.
        if !matches!(rest, "" | "\"" | "'") {
            return None;
        }
        let path = parents(above, indent, in_item)?;
        let present = same_block(&all, row, indent, in_item);
        let place = if in_item { Place::Value { path, in_list: true } } else { Place::Key { parents: path } };
        return Some(Located { place, partial, present });
    };
    let mut path = parents(above, indent, false)?;
    path.push(key.to_string());
    let after_cursor = &line[offset - line_start..];
    let (place, present) = value_place(path, after, after_cursor)?;
    Some(Located { place, partial, present })
}

/// The key path whose key text is under `offset`, with that span.
pub(super) fn key_at(text: &str, block: Span, offset: usize) -> Option<(Vec<String>, Span)> {
    let all = lines(text, block);
    let row = row_of(&all, offset)?;
    let (start, line) = all[row];
    let indent = indent_of(line);
    let content = &line[indent..];
    let (column, content) = match content.strip_prefix("- ") {
        Some(rest) => (indent + 2, rest),
        None => (indent, content),
    };
    let (key, _) = split_key(content)?;
    let key_start = start + column + content.find(key)?;
    let span = Span::new(key_start, key_start + key.len());
    if !span.contains(offset) {
        return None;
    }
    let mut path = parents(&all[..row], indent, false)?;
    path.push(key.to_string());
    Some((path, span))
}

/// After `key:` on the cursor's line: a scalar, an item of a flow list, or inside a flow mapping.
fn value_place(mut path: Vec<String>, after: &str, after_cursor: &str) -> Option<(Place, Vec<String>)> {
    let after = after.trim_start();
    if matches!(after, "" | "\"" | "'") {
        return Some((Place::Value { path, in_list: false }, Vec::new()));
    }
    let (open, close) = match after.as_bytes()[0] {
        b'[' => ('[', ']'),
        b'{' => ('{', '}'),
        _ => return None,
    };
    let before = &after[1..];
    if before.contains(close) {
        return None;
    }
    // The flow collection's other entries, before and after the cursor.
    let tail = after_cursor.split(close).next().unwrap_or("");
    let mut parts: Vec<&str> = before.split(',').collect();
    let current = parts.pop().unwrap_or("").trim_start();
    parts.extend(tail.split(',').skip(1));
    if open == '[' {
        if !matches!(current, "" | "\"" | "'") {
            return None;
        }
        let items = parts.iter().map(|p| p.trim().trim_matches(['"', '\'']).to_string()).filter(|p| !p.is_empty());
        return Some((Place::Value { path, in_list: true }, items.collect()));
    }
    let keys = parts.iter().filter_map(|p| split_key(p.trim()).map(|(k, _)| k.to_string())).collect();
    match split_key(current) {
        None if current.is_empty() => Some((Place::Key { parents: path }, keys)),
        Some((inner, value)) if matches!(value.trim_start(), "" | "\"" | "'") => {
            path.push(inner.to_string());
            Some((Place::Value { path, in_list: false }, Vec::new()))
        }
        _ => None,
    }
}

/// The lines of `block` as (start offset, text without the line break).
fn lines(text: &str, block: Span) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = block.start;
    for line in text.get(block.start..block.end).unwrap_or("").split('\n') {
        out.push((start, line.strip_suffix('\r').unwrap_or(line)));
        start += line.len() + 1;
    }
    out
}

fn row_of(all: &[(usize, &str)], offset: usize) -> Option<usize> {
    let row = all.iter().rposition(|(start, _)| *start <= offset)?;
    let (start, line) = all[row];
    (offset <= start + line.len()).then_some(row)
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Splits `key: value` (or `key:`) at the first colon followed by a space or the end.
fn split_key(text: &str) -> Option<(&str, &str)> {
    let colon = text
        .char_indices()
        .find(|&(i, c)| c == ':' && text[i + 1..].chars().next().is_none_or(|n| n == ' ' || n == '\t'))?
        .0;
    let key = text[..colon].trim().trim_matches(['"', '\'']);
    (!key.is_empty() && key.chars().all(is_word)).then_some((key, &text[colon + 1..]))
}

/// The keys of the mappings enclosing a line indented by `indent`, read upwards; an item line
/// (`- x`) may hang at its key's own indentation. `None` when a line above is not a mapping key.
fn parents(above: &[(usize, &str)], indent: usize, item: bool) -> Option<Vec<String>> {
    let (mut limit, mut item) = (indent, item);
    let mut out = Vec::new();
    for (_, line) in above.iter().rev() {
        if limit == 0 && !item {
            break;
        }
        let content = line.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let ind = indent_of(line);
        if !(ind < limit || item && ind == limit && !content.starts_with('-')) {
            continue;
        }
        // The root of a JSON document.
        if content == "{" {
            break;
        }
        let (key, _) = split_key(content.strip_prefix("- ").unwrap_or(content))?;
        out.push(key.to_string());
        (limit, item) = (ind, false);
    }
    out.reverse();
    Some(out)
}

/// The keys (or, with `items`, the `- item` values) of the other lines of the block the line
/// `row` is in: lines at the same indentation, up to one that is less indented.
fn same_block(all: &[(usize, &str)], row: usize, indent: usize, items: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut visit = |line: &str| -> bool {
        let content = line.trim();
        if content.is_empty() || content.starts_with('#') {
            return true;
        }
        let ind = indent_of(line);
        if ind < indent || ind == indent && content.starts_with("- ") != items {
            return false;
        }
        if ind == indent {
            let found = if items {
                Some(content[2..].trim().trim_matches(['"', '\'']))
            } else {
                split_key(content).map(|(key, _)| key)
            };
            out.extend(found.filter(|f| !f.is_empty()).map(str::to_string));
        }
        true
    };
    for (_, line) in all[..row].iter().rev() {
        if !visit(line) {
            break;
        }
    }
    for (_, line) in &all[row + 1..] {
        if !visit(line) {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Option<Located> {
        let offset = text.find('|').expect("cursor");
        let text = text.replace('|', "");
        locate(&text, Span::new(0, text.len()), offset)
    }

    fn place(text: &str) -> Place {
        at(text).expect("located").place
    }

    fn path(keys: &[&str]) -> Vec<String> {
        keys.iter().map(|k| k.to_string()).collect()
    }

    #[test]
    fn keys_by_indentation() {
        assert_eq!(place("id: a\ntur|\nname: b"), Place::Key { parents: vec![] });
        assert_eq!(place("next:\n  nextStages: [a]\n  ex|"), Place::Key { parents: path(&["next"]) });
        assert_eq!(place("next:\n  # note\n\n  |"), Place::Key { parents: path(&["next"]) });
        assert_eq!(place("retryPolicy: {maxAttempts: 2, |}"), Place::Key { parents: path(&["retryPolicy"]) });
    }

    #[test]
    fn values() {
        let value = |keys: &[&str], in_list| Place::Value { path: path(keys), in_list };
        assert_eq!(place("next:\n  execution: par|"), value(&["next", "execution"], false));
        assert_eq!(place("allowedTools: [Read, G|, Bash]"), value(&["allowedTools"], true));
        assert_eq!(place("allowedTools:\n- Read\n- |"), value(&["allowedTools"], true));
        assert_eq!(place("next:\n  nextStages:\n    - |"), value(&["next", "nextStages"], true));
        assert_eq!(place("retryPolicy: { backoff: \"|"), value(&["retryPolicy", "backoff"], false));
        assert_eq!(place("{\n  \"entry\": \"pl|\"\n}"), value(&["entry"], false));
    }

    #[test]
    fn what_is_already_there() {
        assert_eq!(at("id: a\n|\nname: b\nnext:\n  join: x").expect("key").present, ["id", "name", "next"]);
        assert_eq!(at("allowedTools: [Read, |, Bash]").expect("list").present, ["Read", "Bash"]);
        assert_eq!(at("allowedTools:\n  - Read\n  - |\n  - Grep\nid: x").expect("items").present, ["Read", "Grep"]);
        assert_eq!(at("retryPolicy: {maxAttempts: 2, |}").expect("flow").present, ["maxAttempts"]);
    }

    #[test]
    fn nothing_to_offer() {
        assert!(at("name: My Pla|").is_none());
        assert!(at("# a comm|").is_none());
        assert!(at("id: a # com|").is_none());
    }

    #[test]
    fn key_under_cursor() {
        let text = "next:\n  join: review\n";
        let (keys, span) = key_at(text, Span::new(0, text.len()), 9).expect("key");
        assert_eq!((keys, &text[span.start..span.end]), (path(&["next", "join"]), "join"));
        assert_eq!(key_at(text, Span::new(0, text.len()), 16), None);
    }
}
