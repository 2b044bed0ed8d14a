//! Where the cursor is in a YAML block, read from its lines: the key path above it by
//! indentation (`-` for an item of a list, as in `phases - loop`) and whether a key, a value or a
//! list item is being typed. The tree cannot say this on a blank line, and there is no tree at
//! all while a key is half-typed (`tur` alone on a line does not parse), which is when completion
//! is asked for most. Stage frontmatter, `sm.yaml`/`sm.json`, Last Light workflows, SKILL.md
//! frontmatter and cassettes all complete from it; `block` is the part of the text that is YAML
//! (a frontmatter, or the whole file).

use crate::source::Span;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// A key of the mapping at this path.
    Key(Vec<String>),
    /// The value of the key at the end of `path`; `in_list` for an item of a flow list.
    Value { path: Vec<String>, in_list: bool },
    /// A `- ` item of the block list at this path, nothing typed after the dash but the partial
    /// word: a scalar item, or the first key of a mapping item, which only the caller knows.
    Item(Vec<String>),
}

#[derive(Clone, Debug)]
pub(crate) struct Located {
    pub place: Place,
    /// The partial word before the cursor, which a completion replaces.
    pub partial: Span,
    /// What the same mapping (keys), flow collection or block list (items) already holds, read
    /// from the lines, for when the block does not parse.
    pub present: Vec<String>,
}

impl Located {
    /// For a list of mappings: what a `- ` line starts is its item's first key.
    pub(crate) fn item_as_key(mut self) -> Located {
        if let Place::Item(path) = &mut self.place {
            let mut path = std::mem::take(path);
            path.push("-".into());
            self.place = Place::Key(path);
            self.present.clear();
        }
        self
    }
}

/// A character of a key, a name or an id.
pub(crate) fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '$'
}

/// One line's shape: the dash column of a list item, the key column and the key.
pub(crate) struct Shape<'a> {
    pub dash: Option<usize>,
    pub column: usize,
    /// The key, without quotes.
    pub key: Option<&'a str>,
    /// Text after `key:` (the whole content when there is no key).
    pub rest: &'a str,
}

pub(crate) fn shape(line: &str) -> Shape<'_> {
    let indent = indent_of(line);
    let mut content = &line[indent..];
    let mut dash = None;
    let mut column = indent;
    if let Some(after) = content.strip_prefix("- ").or_else(|| (content == "-").then_some("")) {
        dash = Some(indent);
        let pad = after.len() - after.trim_start_matches(' ').len();
        column = indent + 2 + pad;
        content = after.trim_start_matches(' ');
    }
    match split_key(content) {
        Some((key, rest)) => Shape { dash, column: column + content.find(key).unwrap_or(0), key: Some(key), rest },
        None => Shape { dash, column, key: None, rest: content },
    }
}

/// Where `offset` is in the YAML `block` of `text`.
pub(crate) fn locate(text: &str, block: Span, offset: usize) -> Option<Located> {
    let all = lines(text, block);
    let row = row_of(&all, offset)?;
    let (line_start, line) = all[row];
    let head_and_partial = text.get(line_start..offset)?;
    let partial_len: usize = head_and_partial.chars().rev().take_while(|c| is_word(*c)).map(char::len_utf8).sum();
    let partial = Span::new(offset - partial_len, offset);
    let head = &head_and_partial[..head_and_partial.len() - partial_len];
    let indent = indent_of(head);
    let mut rest = &head[indent..];
    if rest.starts_with('#') || rest.contains(" #") {
        return None;
    }
    let mut dash = None;
    let mut column = indent;
    if let Some(after) = rest.strip_prefix("- ") {
        dash = Some(indent);
        rest = after.trim_start();
        column = head.len() - rest.len();
    }
    let above: Vec<&str> = all[..row].iter().map(|(_, line)| *line).collect();
    let Some((key, after)) = split_key(rest) else {
        // Only an opening quote may stand between the indentation (or the dash) and the word.
        if !matches!(rest, "" | "\"" | "'") {
            return None;
        }
        if dash.is_some() && rest.is_empty() {
            let mut path = parents(&above, column, dash);
            path.pop();
            return Some(Located { place: Place::Item(path), partial, present: block_list_items(text, offset) });
        }
        let present = mapping_keys(&all, row, column);
        return Some(Located { place: Place::Key(parents(&above, column, dash)), partial, present });
    };
    let mut path = parents(&above, column, dash);
    path.push(key.to_string());
    let (place, present) = value_place(path, after, &line[offset - line_start..])?;
    Some(Located { place, partial, present })
}

/// The key under `offset` in the YAML `block` of `text`, with its path and span.
pub(crate) fn key_at(text: &str, block: Span, offset: usize) -> Option<(Vec<String>, Span)> {
    let all = lines(text, block);
    let row = row_of(&all, offset)?;
    let (start, line) = all[row];
    let s = shape(line);
    let key = s.key?;
    let span = Span::new(start + s.column, start + s.column + key.len());
    if !span.contains(offset) {
        return None;
    }
    let above: Vec<&str> = all[..row].iter().map(|(_, line)| *line).collect();
    let mut path = parents(&above, s.column, s.dash);
    path.push(key.to_string());
    Some((path, span))
}

/// The items of the block list (`- x` lines at one dash column) holding the line of `offset`,
/// except that line's own.
pub(crate) fn block_list_items(text: &str, offset: usize) -> Vec<String> {
    let line_start = text[..offset].rfind('\n').map_or(0, |n| n + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |n| offset + n);
    let Some(dash) = shape(&text[line_start..line_end]).dash else { return Vec::new() };
    let item = |line: &str| -> Option<Option<String>> {
        if blank(line) {
            return Some(None);
        }
        (shape(line).dash == Some(dash))
            .then(|| Some(line.trim_start()[1..].trim().trim_matches(['"', '\'']).to_string()))
    };
    let mut out = Vec::new();
    for line in text[..line_start].lines().rev() {
        match item(line) {
            Some(found) => out.extend(found),
            None => break,
        }
    }
    for line in text[line_end..].lines().skip(1) {
        match item(line) {
            Some(found) => out.extend(found),
            None => break,
        }
    }
    out.retain(|item| !item.is_empty());
    out
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
        None if current.is_empty() => Some((Place::Key(path), keys)),
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

fn blank(line: &str) -> bool {
    let content = line.trim();
    content.is_empty() || content.starts_with('#')
}

/// Splits `key: value` (or `key:`, `"key": value`) at the first colon followed by a space or
/// the end.
fn split_key(text: &str) -> Option<(&str, &str)> {
    let colon = text
        .char_indices()
        .find(|&(i, c)| c == ':' && text[i + 1..].chars().next().is_none_or(|n| n == ' ' || n == '\t'))?
        .0;
    let key = text[..colon].trim().trim_matches(['"', '\'']);
    (!key.is_empty() && key.chars().all(is_word)).then_some((key, &text[colon + 1..]))
}

/// The key path of the mappings enclosing a line whose key sits at `column`; `dash` when the
/// line itself opens a list item.
fn parents(above: &[&str], column: usize, dash: Option<usize>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut limit = column;
    if let Some(d) = dash {
        out.push("-".into());
        limit = d;
    }
    for line in above.iter().rev() {
        if blank(line) {
            continue;
        }
        // The root of a JSON document.
        if line.trim() == "{" {
            break;
        }
        if limit == 0 && out.last().is_none_or(|l| l != "-") {
            break;
        }
        let s = shape(line);
        if s.column < limit || (out.last().is_some_and(|l| l == "-") && s.dash.is_none() && s.column == limit) {
            let Some(key) = s.key else { continue };
            out.push(key.to_string());
            limit = s.column;
            if let Some(d) = s.dash {
                out.push("-".into());
                limit = d;
            }
        } else if s.dash.is_some() && s.column == limit {
            out.push("-".into());
            limit = s.dash.unwrap_or(0);
        }
    }
    out.reverse();
    out
}

/// The keys of the mapping whose keys sit at `column` around line `row` (its item's first key
/// included), the line's own aside.
fn mapping_keys(all: &[(usize, &str)], row: usize, column: usize) -> Vec<String> {
    let mut out = Vec::new();
    for (_, line) in all[..row].iter().rev() {
        if blank(line) {
            continue;
        }
        let s = shape(line);
        if s.column < column {
            break;
        }
        if s.column == column {
            out.extend(s.key.map(str::to_string));
            if s.dash.is_some() {
                break;
            }
        }
    }
    for (_, line) in &all[row + 1..] {
        if blank(line) {
            continue;
        }
        let s = shape(line);
        if s.column < column || s.column == column && s.dash.is_some() {
            break;
        }
        if s.column == column {
            out.extend(s.key.map(str::to_string));
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

    fn keys(path: &[&str]) -> Vec<String> {
        path.iter().map(|s| s.to_string()).collect()
    }

    fn value(path: &[&str], in_list: bool) -> Place {
        Place::Value { path: keys(path), in_list }
    }

    #[test]
    fn keys_by_indentation() {
        assert_eq!(place("id: a\ntur|\nname: b"), Place::Key(vec![]));
        assert_eq!(place("na|"), Place::Key(vec![]));
        assert_eq!(place("next:\n  nextStages: [a]\n  ex|"), Place::Key(keys(&["next"])));
        assert_eq!(place("next:\n  # note\n\n  |"), Place::Key(keys(&["next"])));
        assert_eq!(place("retryPolicy: {maxAttempts: 2, |}"), Place::Key(keys(&["retryPolicy"])));
    }

    #[test]
    fn keys_in_list_items() {
        assert_eq!(place("name: x\nphases:\n  - name: a\n    |"), Place::Key(keys(&["phases", "-"])));
        assert_eq!(place("phases:\n  - name: a\n    loop:\n      max|"), Place::Key(keys(&["phases", "-", "loop"])));
        assert_eq!(place("phases:\n- name: a\n  |"), Place::Key(keys(&["phases", "-"])));
        assert_eq!(place("phases:\n  - |"), Place::Item(keys(&["phases"])));
    }

    #[test]
    fn values() {
        assert_eq!(place("next:\n  execution: par|"), value(&["next", "execution"], false));
        assert_eq!(place("phases:\n  - name: a\n    type: ag|"), value(&["phases", "-", "type"], false));
        assert_eq!(place("allowedTools: [Read, G|, Bash]"), value(&["allowedTools"], true));
        assert_eq!(place("retryPolicy: { backoff: \"|"), value(&["retryPolicy", "backoff"], false));
        assert_eq!(place("{\n  \"entry\": \"pl|\"\n}"), value(&["entry"], false));
        assert_eq!(place("allowedTools:\n- Read\n- |"), Place::Item(keys(&["allowedTools"])));
        assert_eq!(place("next:\n  nextStages:\n    - |"), Place::Item(keys(&["next", "nextStages"])));
    }

    #[test]
    fn what_is_already_there() {
        assert_eq!(at("id: a\n|\nname: b\nnext:\n  join: x").expect("key").present, ["id", "name", "next"]);
        assert_eq!(at("allowedTools: [Read, |, Bash]").expect("list").present, ["Read", "Bash"]);
        assert_eq!(at("allowedTools:\n  - Read\n  - |\n  - Grep\nid: x").expect("items").present, ["Read", "Grep"]);
        assert_eq!(at("retryPolicy: {maxAttempts: 2, |}").expect("flow").present, ["maxAttempts"]);
        assert_eq!(at("phases:\n  - name: b\n    depends_on: [a, |]").expect("deps").present, ["a"]);
        let item = at("phases:\n  - name: a\n    |\n    type: agent\n  - name: b").expect("item keys");
        assert_eq!(item.present, ["name", "type"]);
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
        let (path, span) = key_at(text, Span::new(0, text.len()), 9).expect("key");
        assert_eq!((path, &text[span.start..span.end]), (keys(&["next", "join"]), "join"));
        assert_eq!(key_at(text, Span::new(0, text.len()), 16), None);
        let text = "{\n  \"entry\": \"plan\"\n}";
        let (path, span) = key_at(text, Span::new(0, text.len()), 5).expect("quoted key");
        assert_eq!((path, &text[span.start..span.end]), (keys(&["entry"]), "entry"));
    }

    #[test]
    fn block_lists() {
        let text = "phases:\n  - name: a\n  - name: b\n    depends_on:\n      - a\n      - \n      - c\n    label: B\n";
        let offset = text.find("      - \n").unwrap() + 8;
        assert_eq!(block_list_items(text, offset), ["a", "c"]);
    }
}
