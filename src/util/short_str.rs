//! [`ShortStr`], in a module of its own: its safety rests on no other code building its
//! inline form.

/// A string kept inline when it fits in 22 bytes, as a template field name or a YAML key
/// almost always does: a heap allocation for each weighs more than the text (2,000 stages held
/// 3 MB of placeholder names). Built only from whole `&str`s, so the inline bytes are UTF-8.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ShortStr(Repr);

#[derive(Clone, PartialEq, Eq, Hash)]
enum Repr {
    Inline { len: u8, bytes: [u8; 22] },
    Heap(Box<str>),
}

impl ShortStr {
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // SAFETY: `Repr` is private to this module, which has no child modules, and
            // `From<&str>` is its only inline constructor: it copies a whole `&str`, so
            // `bytes[..len]` is UTF-8. Checking it on every read cost more than the allocation
            // this type saves.
            Repr::Inline { len, bytes } => unsafe { std::str::from_utf8_unchecked(&bytes[..*len as usize]) },
            Repr::Heap(text) => text,
        }
    }

    /// Whether the text is held inline (no allocation).
    pub fn is_inline(&self) -> bool {
        matches!(self.0, Repr::Inline { .. })
    }
}

impl From<&str> for ShortStr {
    fn from(text: &str) -> ShortStr {
        if text.len() <= 22 {
            let mut bytes = [0; 22];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            ShortStr(Repr::Inline { len: text.len() as u8, bytes })
        } else {
            ShortStr(Repr::Heap(text.into()))
        }
    }
}

impl From<String> for ShortStr {
    fn from(text: String) -> ShortStr {
        if text.len() <= 22 { ShortStr::from(text.as_str()) } else { ShortStr(Repr::Heap(text.into_boxed_str())) }
    }
}

impl std::ops::Deref for ShortStr {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Debug for ShortStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for ShortStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for ShortStr {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ShortStr {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}
