//! Where the cursor is in a workflow beyond what `editor::yaml_lines` says: inside a `{{…}}` or
//! `${…}` tag, and the phase a key belongs to.

pub(super) use crate::editor::yaml_lines::{Place, key_at, locate};
use crate::editor::yaml_lines::{Shape, is_word, shape};
use crate::source::Span;

/// Inside an open `{{` (or `${`, the bool) on the cursor's line: the partial name before it.
pub(super) fn template_at(text: &str, offset: usize) -> Option<(Span, bool)> {
    let line_start = text[..offset].rfind('\n').map_or(0, |n| n + 1);
    let before = &text[line_start..offset];
    let partial_len: usize = before.chars().rev().take_while(|c| is_word(*c) || *c == '.').map(char::len_utf8).sum();
    let head = &before[..before.len() - partial_len];
    let head = head
        .strip_suffix("#if !")
        .or_else(|| head.strip_suffix("#if "))
        .or_else(|| head.strip_suffix("slugify "))
        .unwrap_or(head);
    let dollar = head.ends_with("${");
    if !(head.ends_with("{{") || dollar) {
        return None;
    }
    Some((Span::new(offset - partial_len, offset), dollar))
}

/// The `name` of the phase whose key `key_line_offset` is on (read from the lines, so also in
/// half-typed YAML): the nearest `name:` above at the same key column, within the same item.
pub(super) fn phase_name_at(text: &str, key_line_offset: usize) -> Option<String> {
    let line_start = text[..key_line_offset].rfind('\n').map_or(0, |n| n + 1);
    let line_end = text[key_line_offset..].find('\n').map_or(text.len(), |n| key_line_offset + n);
    let here = shape(&text[line_start..line_end]);
    let column = here.column;
    let name_of = |s: &Shape| -> Option<String> {
        (s.key == Some("name")).then(|| s.rest.trim().trim_matches(['"', '\'']).to_string()).filter(|n| !n.is_empty())
    };
    if here.dash.is_some() {
        return name_of(&here);
    }
    for line in text[..line_start].lines().rev() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let s = shape(line);
        if s.column < column {
            return None;
        }
        if s.column == column {
            if let Some(name) = name_of(&s) {
                return Some(name);
            }
            if s.dash.is_some() {
                return None;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phase_of_a_key() {
        let text = "phases:\n  - name: a\n  - name: b\n    depends_on:\n      - a\n      - \n      - c\n    label: B\n";
        let key = text.find("depends_on").unwrap();
        assert_eq!(phase_name_at(text, key).as_deref(), Some("b"));
        assert_eq!(phase_name_at("phases:\n  - depends_on: [x]\n    name: z\n", 14), None);
    }

    #[test]
    fn templates() {
        assert_eq!(template_at("x: \"{{iss", 9), Some((Span::new(6, 9), false)));
        assert_eq!(template_at("${pl", 4), Some((Span::new(2, 4), true)));
        assert_eq!(template_at("{{#if !iss", 10), Some((Span::new(7, 10), false)));
        assert_eq!(template_at("plain", 5), None);
    }
}
