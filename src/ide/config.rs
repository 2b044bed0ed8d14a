//! Completion in `stagelint.toml` (`.stagelint.toml`): table names, the keys of each table and
//! their closed values, rule codes and levels in `[rules]`. Config is not a family, so this
//! lives here; the keys come from `config::TABLES` (what the parser accepts) and their
//! documentation from `docs/configuration.md`.

use crate::config::{KEY_VALUES, LEVELS, TABLES, TOP_KEYS};
use crate::ide::{CompletionItem, CompletionKind};
use crate::source::Span;

const DOCS: &str = include_str!("../../docs/configuration.md");

/// The part of `docs/configuration.md` about `[table]`, without its heading.
fn table_doc(table: &str) -> Option<&'static str> {
    let heading = format!("## `[{table}]`\n");
    let start = DOCS.find(&heading)? + heading.len();
    let end = DOCS[start..].find("\n## ").map_or(DOCS.len(), |i| start + i);
    Some(DOCS[start..end].trim())
}

/// What the docs say about `key` of `[table]`: its row of the key table (type, default) and the
/// sentences that start with it.
fn key_doc(table: &str, key: &str, what: &str) -> String {
    let section = table_doc(table).unwrap_or("");
    let name = format!("`{key}`");
    let default = section
        .lines()
        .find(|line| line.starts_with(&format!("| {name} |")))
        .and_then(|row| row.split('|').map(str::trim).filter(|c| !c.is_empty()).nth(2))
        .map(|default| format!(", default {default}"))
        .unwrap_or_default();
    let mut out = format!("`[{table}]` **{key}**: {what}{default}");
    let said: Vec<&str> = section.lines().filter(|line| line.starts_with(&name)).collect();
    if said.is_empty() {
        // `[dry-run]` explains its one key in prose.
        if let Some(first) = section.split("\n\n").find(|p| !p.starts_with("```") && !p.starts_with('|')) {
            out.push_str("\n\n");
            out.push_str(first);
        }
    }
    for line in said {
        out.push_str("\n\n");
        out.push_str(line);
    }
    out
}

/// Where the cursor is in a TOML text.
enum Place<'t> {
    /// A table header being typed (`[fi`).
    Table,
    /// A key of `table` being typed.
    Key { table: Option<&'t str> },
    /// The value of `key` in `table`.
    Value { table: Option<&'t str>, key: String },
}

/// The table a line belongs to: the last `[table]` header above it.
fn table_above(text: &str, line_start: usize) -> Option<&str> {
    text[..line_start].lines().rev().find_map(|line| {
        let line = line.trim();
        let inner = line.strip_prefix('[')?.split(']').next()?;
        (!inner.starts_with('[')).then(|| inner.trim())
    })
}

/// The keys set in `table` (quoted ones without their quotes).
fn keys_in<'t>(text: &'t str, table: Option<&str>) -> Vec<&'t str> {
    let mut current: Option<&str> = None;
    let mut out = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(inner) = trimmed.strip_prefix('[').and_then(|t| t.split(']').next()) {
            current = Some(inner.trim());
            continue;
        }
        if current == table
            && let Some((key, _)) = trimmed.split_once('=')
        {
            out.push(key.trim().trim_matches('"'));
        }
    }
    out
}

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/' | '"' | '.')
}

pub fn completions(text: &str, offset: usize) -> Vec<CompletionItem> {
    if !text.is_char_boundary(offset) {
        return Vec::new();
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..offset];
    let trimmed = before.trim_start();
    let partial_len: usize = before.chars().rev().take_while(|c| is_key_char(*c)).map(char::len_utf8).sum();
    let table = table_above(text, line_start);
    let place = if let Some(header) = trimmed.strip_prefix('[') {
        if header.contains(']') || header.starts_with('[') {
            return Vec::new();
        }
        Place::Table
    } else if let Some((key, value)) = trimmed.split_once('=') {
        if value.contains('#') {
            return Vec::new();
        }
        Place::Value { table, key: key.trim().trim_matches('"').to_string() }
    } else if trimmed.len() == partial_len && !trimmed.contains('#') {
        Place::Key { table }
    } else {
        return Vec::new();
    };
    match place {
        Place::Table => {
            let start = line_start + before.find('[').map_or(0, |i| i + 1);
            let present: Vec<&str> =
                text.lines().filter_map(|l| l.trim().strip_prefix('[')?.split(']').next()).collect();
            TABLES
                .iter()
                .filter(|(name, _)| !present.contains(name))
                .map(|(name, _)| CompletionItem {
                    label: name.to_string(),
                    kind: CompletionKind::Field,
                    detail: Some("table".into()),
                    documentation: table_doc(name).map(str::to_string),
                    insert: Some(if text[offset..].starts_with(']') { name.to_string() } else { format!("{name}]") }),
                    replace: Span::new(start, offset),
                })
                .collect()
        }
        Place::Key { table: Some("rules") } => {
            let present = keys_in(text, Some("rules"));
            let replace = Span::new(offset - partial_len, offset);
            let families =
                crate::registry::TABLES.iter().map(|(name, _)| (*name, format!("Every rule of the `{name}` family.")));
            let rules = crate::registry::all_rules().map(|r| (r.code, format!("**{}**: {}", r.code, r.summary())));
            families
                .chain(rules)
                .filter(|(code, _)| !present.contains(code))
                .map(|(code, doc)| CompletionItem {
                    label: code.to_string(),
                    kind: CompletionKind::Field,
                    detail: Some("rule level".into()),
                    documentation: Some(doc),
                    insert: Some(format!("\"{code}\" = ")),
                    replace,
                })
                .collect()
        }
        Place::Key { table: Some(table) } => {
            let Some((_, keys)) = TABLES.iter().find(|(name, _)| *name == table) else { return Vec::new() };
            let present = keys_in(text, Some(table));
            keys.iter()
                .filter(|(key, _)| !present.contains(key))
                .map(|(key, what)| CompletionItem {
                    label: key.to_string(),
                    kind: CompletionKind::Field,
                    detail: Some(what.to_string()),
                    documentation: Some(key_doc(table, key, what)),
                    insert: Some(format!("{key} = ")),
                    replace: Span::new(offset - partial_len, offset),
                })
                .collect()
        }
        // Above every table: the keys outside a table (`baseline`).
        Place::Key { table: None } => {
            let present = keys_in(text, None);
            TOP_KEYS
                .iter()
                .filter(|(key, _)| !present.contains(key))
                .map(|(key, what)| CompletionItem {
                    label: key.to_string(),
                    kind: CompletionKind::Field,
                    detail: Some(what.to_string()),
                    documentation: Some(format!("`{key}`: {what}. See `stagelint explain configuration`.")),
                    insert: Some(format!("{key} = ")),
                    replace: Span::new(offset - partial_len, offset),
                })
                .collect()
        }
        Place::Value { table, key } => {
            let values: Vec<&str> = if table == Some("rules") {
                LEVELS.to_vec()
            } else {
                KEY_VALUES.iter().find(|(k, _)| *k == key).map(|(_, v)| v.to_vec()).unwrap_or_default()
            };
            let value_start = offset - before.len() + before.rfind('=').map_or(0, |i| i + 1);
            let typed = &text[value_start..offset];
            let start = value_start + (typed.len() - typed.trim_start().len());
            let closes = text[offset..].starts_with('"');
            values
                .into_iter()
                .map(|value| CompletionItem {
                    label: value.to_string(),
                    kind: CompletionKind::Value,
                    detail: Some(key.clone()),
                    documentation: None,
                    insert: Some(format!("\"{value}\"")),
                    replace: Span::new(start, if closes { offset + 1 } else { offset }),
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(text: &str) -> Vec<String> {
        let offset = text.find('|').expect("cursor");
        completions(&text.replace('|', ""), offset).into_iter().map(|i| i.label).collect()
    }

    #[test]
    fn tables_keys_and_values() {
        assert!(labels("[files]\n[|").contains(&"tools".to_string()));
        assert!(!labels("[files]\n[|").contains(&"files".to_string()));
        assert_eq!(labels("[sm]\nbackoffs = []\n|"), ["placeholder-dialect", "resolution-policies"]);
        assert_eq!(labels("[sm]\nplaceholder-dialect = |"), ["mustache", "dollar"]);
        assert!(labels("[rules]\n\"sm/Unk|").contains(&"sm/UnknownTool".to_string()));
        assert_eq!(labels("[rules]\n\"sm\" = |").len(), 6);
        assert_eq!(labels("|"), ["baseline"]);
        assert!(labels("baseline = \"b.json\"\n|").is_empty());
        let docs = completions("[tools]\n", 8);
        let registered = docs.iter().find(|i| i.label == "registered").expect("registered");
        assert!(registered.documentation.as_deref().unwrap_or("").contains("replaces the default tool set"));
    }
}
