//! Text from cassettes and definitions, made safe for a terminal, and the readers of event
//! fields every engine's timeline uses.

use std::borrow::Cow;
use std::fmt::Write;

use crate::runtime::events::Event;

/// `text` with control and bidirectional-formatting characters escaped (`\u{1b}`), so
/// cassette-supplied strings cannot move the cursor, recolor or reorder a terminal.
pub fn escape(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{061c}')
    };
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A string field of an event, escaped for the terminal.
pub fn text<'e>(event: &'e Event, key: &str) -> Cow<'e, str> {
    escape(event.str(key))
}

/// A JSON string, escaped for the terminal.
pub fn esc(value: &serde_json::Value) -> Cow<'_, str> {
    escape(value.as_str().unwrap_or(""))
}

/// A JSON pointer as the timeline shows it: the root is `(root)`.
pub fn pointer(at: &str) -> Cow<'_, str> {
    if at.is_empty() { Cow::Borrowed("(root)") } else { escape(at) }
}
