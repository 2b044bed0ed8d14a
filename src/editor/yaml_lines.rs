//! Where the cursor is in a YAML text, read from the lines: the key path above it (`-` for a
//! list item, as in `phases - loop`) and whether a key or a value is being typed. The tree cannot
//! say this while a line is half-typed. Last Light workflows, SKILL.md frontmatter and cassettes
//! complete from it.

use crate::source::Span;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// A key of the mapping at this path.
    Key(Vec<String>),
    /// The value of the key at this path (the last element).
    Value(Vec<String>),
}

#[derive(Clone, Debug)]
pub(crate) struct Located {
    pub place: Place,
    /// The partial word before the cursor.
    pub partial: Span,
    /// Keys (or list items) already in the same mapping or flow list.
    pub present: Vec<String>,
}

pub(crate) fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// One line's shape: the dash column of a list item, the key column and the key.
pub(crate) struct Shape<'a> {
    pub dash: Option<usize>,
    pub column: usize,
    pub key: Option<&'a str>,
    /// Text after `key:`.
    pub rest: &'a str,
}

pub(crate) fn shape(line: &str) -> Shape<'_> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let mut content = &line[indent..];
    let mut dash = None;
    let mut column = indent;
    if let Some(after) = content.strip_prefix("- ").or_else(|| (content == "-").then_some("")) {
        dash = Some(indent);
        let pad = after.len() - after.trim_start_matches(' ').len();
        column = indent + 2 + pad;
        content = after.trim_start_matches(' ');
    }
    let (key, rest) =
        match content.find(':').filter(|i| content[i + 1..].is_empty() || content[i + 1..].starts_with([' ', '\t'])) {
            Some(i) if content[..i].chars().all(is_word) && i > 0 => (Some(&content[..i]), &content[i + 1..]),
            _ => (None, content),
        };
    Shape { dash, column, key, rest }
}

/// The key path of the mappings enclosing a line whose key sits at `column`; `dash` when the
/// line itself opens a list item.
fn parents(lines: &[&str], mut limit: usize, dash: Option<usize>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if let Some(d) = dash {
        out.push("-".into());
        limit = d;
    }
    for line in lines.iter().rev() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
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

/// Where `offset` is.
pub(crate) fn locate(text: &str, offset: usize) -> Option<Located> {
    let line_start = text[..offset].rfind('\n').map_or(0, |n| n + 1);
    let before = &text[line_start..offset];
    let partial_len: usize = before.chars().rev().take_while(|c| is_word(*c)).map(char::len_utf8).sum();
    let partial = Span::new(offset - partial_len, offset);
    let above: Vec<&str> = text[..line_start].lines().collect();
    let line_end = text[offset..].find('\n').map_or(text.len(), |n| offset + n);
    let s = shape(&text[line_start..line_end]);
    let head = &before[..before.len() - partial_len];
    if let Some(key) = s.key.filter(|_| head.contains(':')) {
        let mut path = parents(&above, s.column, s.dash);
        path.push(key.to_string());
        let rest = s.rest.trim_start();
        let present = match rest.strip_prefix('[') {
            Some(list) => {
                list.trim_end_matches(']').split(',').map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
            }
            None => Vec::new(),
        };
        return Some(Located { place: Place::Value(path), partial, present });
    }
    let trimmed = head.trim_start();
    if !(trimmed.is_empty() || trimmed.trim_end() == "-") {
        return None;
    }
    let column = head.len();
    let path = parents(&above, column, s.dash);
    // Keys already in this mapping: lines above at the same column, up to the item or parent.
    let mut present = Vec::new();
    for line in above.iter().rev() {
        if line.trim().is_empty() || line.trim().starts_with('#') {
            continue;
        }
        let other = shape(line);
        if other.column < column {
            break;
        }
        if other.column == column {
            present.extend(other.key.map(str::to_string));
            if other.dash.is_some() {
                break;
            }
        }
    }
    Some(Located { place: Place::Key(path), partial, present })
}

/// The items of the block list (`- x` lines at one dash column) holding the line of `offset`,
/// except that line's own.
pub(crate) fn block_list_items(text: &str, offset: usize) -> Vec<String> {
    let line_start = text[..offset].rfind('\n').map_or(0, |n| n + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |n| offset + n);
    let Some(dash) = shape(&text[line_start..line_end]).dash else { return Vec::new() };
    let item = |line: &str| -> Option<Option<String>> {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            return Some(None);
        }
        let s = shape(line);
        (s.dash == Some(dash)).then(|| Some(line.trim_start()[1..].trim().trim_matches(['"', '\'']).to_string()))
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

/// The key under `offset` with its path and span.
pub(crate) fn key_at(text: &str, offset: usize) -> Option<(Vec<String>, Span)> {
    let line_start = text[..offset].rfind('\n').map_or(0, |n| n + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |n| offset + n);
    let s = shape(&text[line_start..line_end]);
    let key = s.key?;
    let span = Span::new(line_start + s.column, line_start + s.column + key.len());
    if !span.contains(offset) {
        return None;
    }
    let above: Vec<&str> = text[..line_start].lines().collect();
    let mut path = parents(&above, s.column, s.dash);
    path.push(key.to_string());
    Some((path, span))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Located {
        let offset = text.find('|').expect("cursor");
        locate(&text.replace('|', ""), offset).expect("located")
    }

    fn keys(path: &[&str]) -> Vec<String> {
        path.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn keys_in_phases() {
        assert_eq!(at("name: x\nphases:\n  - name: a\n    |").place, Place::Key(keys(&["phases", "-"])));
        assert_eq!(at("phases:\n  - name: a\n    loop:\n      max|").place, Place::Key(keys(&["phases", "-", "loop"])));
        assert_eq!(at("phases:\n- name: a\n  |").place, Place::Key(keys(&["phases", "-"])));
        assert_eq!(at("phases:\n  - |").place, Place::Key(keys(&["phases", "-"])));
        assert_eq!(at("na|").place, Place::Key(keys(&[])));
    }

    #[test]
    fn values() {
        assert_eq!(at("phases:\n  - name: a\n    type: ag|").place, Place::Value(keys(&["phases", "-", "type"])));
        let deps = at("phases:\n  - name: b\n    depends_on: [a, |]");
        assert_eq!(deps.place, Place::Value(keys(&["phases", "-", "depends_on"])));
        assert_eq!(deps.present, ["a"]);
    }

    #[test]
    fn block_lists() {
        let text = "phases:\n  - name: a\n  - name: b\n    depends_on:\n      - a\n      - \n      - c\n    label: B\n";
        let offset = text.find("      - \n").unwrap() + 8;
        assert_eq!(block_list_items(text, offset), ["a", "c"]);
    }
}
