//! Small helpers shared by rules: edit distance suggestions, case conversion.

/// The word with its indefinite article, by its first letter: `an integer`, `a string`,
/// `an opencode`.
pub fn article(word: &str) -> String {
    let an = word.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {word}", if an { "an" } else { "a" })
}

/// Edit distance counting a swap of two neighbours as one edit (optimal string alignment).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best =
                (d[(i - 1) * width + j] + 1).min(d[i * width + j - 1] + 1).min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

/// The did-you-mean of an unknown mapping key: the closest known key, and whether it is `taken`.
/// `siblings` are the mapping's keys in order. The guess is taken when the mapping has it
/// already, or when an unknown key before this one guesses it too (`turncap` then `turn_cap`):
/// a rename onto it would write a duplicate key, so the rules offer no fix then and say that the
/// key is set already. Only the first misspelling of a key gets the rename.
pub fn did_you_mean_key<'a, 's>(
    key: &str,
    known: impl IntoIterator<Item = &'a str> + Clone,
    siblings: impl IntoIterator<Item = &'s str>,
) -> Option<KeyGuess<'a>> {
    let name = did_you_mean(key, known.clone())?;
    let mut before = true;
    let mut taken = false;
    for sibling in siblings {
        if sibling == key {
            before = false;
        } else if sibling == name
            || (before
                && !known.clone().into_iter().any(|k| k == sibling)
                && did_you_mean(sibling, known.clone()) == Some(name))
        {
            taken = true;
        }
    }
    Some(KeyGuess { name, taken })
}

/// See [`did_you_mean_key`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyGuess<'a> {
    pub name: &'a str,
    pub taken: bool,
}

impl<'a> KeyGuess<'a> {
    /// The key to rename to, unless it is taken.
    pub fn rename(guess: Option<KeyGuess<'a>>) -> Option<&'a str> {
        guess.filter(|g| !g.taken).map(|g| g.name)
    }
}

/// The closest candidate when it is close enough to be a likely typo.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = word.to_lowercase();
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        if candidate == word {
            continue;
        }
        let candidate_lower = candidate.to_lowercase();
        // A case-only difference or a truncated word (`exec` for `execute`) is a near miss too.
        let distance = if candidate_lower == lower {
            0
        } else if lower.chars().count() >= 3 && candidate_lower.starts_with(&lower) {
            1
        } else {
            edit_distance(word, candidate)
        };
        // A third of the longer word, and at least one character kept: `x` is not a typo of `d`.
        let (len, other) = (word.chars().count(), candidate.chars().count());
        let limit = (len.max(other) / 3).max(1);
        if distance <= limit && (distance < len.min(other) || distance == 0) && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// `text` without case, separators (`-`, `_`, blanks) and surrounding quotes: two names with
/// the same letters here differ only in how they are written (`WebFetch`, `web-fetch`).
pub fn letters_only(text: &str) -> String {
    let text = text.trim().trim_matches(['"', '\'']);
    text.chars().filter(|c| !matches!(c, '-' | '_' | ' ' | '\t')).flat_map(char::to_lowercase).collect()
}

/// Whether `written` and `meant` name the same words, told apart only by letter case and by the
/// separators `-`, `_` and blanks (`Webfetch` and `WebFetch`, `turncap` and `turnCap`,
/// `retry_later` and `retry-later`); quotes around either do not count. The one test of whether
/// a did-you-mean fix is safe, for every family: such a guess cannot mean another word.
pub fn only_case_or_separators(written: &str, meant: &str) -> bool {
    let (a, b) = (letters_only(written), letters_only(meant));
    written != meant && !a.is_empty() && a == b
}

/// A did-you-mean that knows when it is a toss-up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Guess<'a> {
    One(&'a str),
    /// Several candidates differ from the word only in case and separators, and nothing tells
    /// them apart: a fix towards the first must not count as safe, and the message names all.
    Either(Vec<&'a str>),
}

impl<'a> Guess<'a> {
    /// The name a fix writes.
    pub fn first(&self) -> &'a str {
        match self {
            Guess::One(name) => name,
            Guess::Either(names) => names[0],
        }
    }

    /// `` `WebFetch` `` or `` `WebFetch` or `web-fetch` ``, for messages.
    pub fn shown(&self) -> String {
        match self {
            Guess::One(name) => format!("`{name}`"),
            Guess::Either(names) => names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" or "),
        }
    }
}

/// [`did_you_mean`], aware of names that differ only in case and separators. When several
/// candidates are such twins of `word`, the one written in the style of `neighbours` (the
/// names beside it in its list: kebab-case or not) is meant; when the neighbours do not tell,
/// the guess is [`Guess::Either`].
pub fn did_you_mean_styled<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    neighbours: &[&str],
) -> Option<Guess<'a>> {
    let candidates: Vec<&'a str> = candidates.into_iter().collect();
    let mut twins: Vec<&'a str> = candidates.iter().copied().filter(|c| only_case_or_separators(word, c)).collect();
    if twins.len() < 2 {
        return did_you_mean(word, candidates).map(Guess::One);
    }
    twins.sort_unstable();
    twins.dedup();
    let kebab = neighbours.iter().filter(|n| is_kebab_case(n)).count();
    let style = match kebab {
        0 if !neighbours.is_empty() => Some(false),
        k if k > 0 && k == neighbours.len() => Some(true),
        _ => None,
    };
    let styled: Vec<&'a str> = twins.iter().copied().filter(|t| Some(is_kebab_case(t)) == style).collect();
    match styled.as_slice() {
        [one] => Some(Guess::One(one)),
        _ => Some(Guess::Either(twins)),
    }
}

/// The did-you-mean of a name among `candidates`, preferring the ones `valid` accepts (a stage
/// id that is kebab-case): a fix towards a name that is itself invalid trades one finding for
/// another. The bool says whether the guess is valid; callers offer a fix only then.
pub fn did_you_mean_valid<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    valid: impl Fn(&str) -> bool,
) -> Option<(&'a str, bool)> {
    let candidates: Vec<&'a str> = candidates.into_iter().collect();
    if let Some(guess) = did_you_mean(word, candidates.iter().copied().filter(|c| valid(c))) {
        return Some((guess, true));
    }
    did_you_mean(word, candidates).map(|guess| (guess, false))
}

/// `PlanStage`, `plan_stage`, `Plan Stage` → `plan-stage`.
pub fn to_kebab_case(text: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && prev_lower && !out.ends_with('-') {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !out.is_empty() && !out.ends_with('-') {
                out.push('-');
            }
            prev_lower = false;
        }
    }
    out.trim_end_matches('-').to_string()
}

/// Whether `text` is kebab-case: `^[a-z0-9]+(-[a-z0-9]+)*$`.
pub fn is_kebab_case(text: &str) -> bool {
    !text.is_empty()
        && text
            .split('-')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
}

mod par;
mod short_str;
pub use par::{PAR_MIN_ITEMS, par_join, par_map, par_map_consume};
pub use short_str::ShortStr;

/// Hash maps and sets for the check's own indexes (paths, names): foldhash, seeded per process
/// like hashbrown's default, instead of SipHash, which made hashing paths a tenth of a large
/// check.
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
pub type FastSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// The order of `Path`'s `Ord` for paths without `.`, `..` or doubled separators (what a walk
/// lists, and normalized paths), compared as bytes with the separator lowest: sorting tens of
/// thousands of paths by their components costs more than the walk that found them.
pub fn path_order(a: &std::path::Path, b: &std::path::Path) -> std::cmp::Ordering {
    let (a, b) = (a.as_os_str().as_encoded_bytes(), b.as_os_str().as_encoded_bytes());
    let i = common_prefix(a, b);
    match (a.get(i), b.get(i)) {
        (Some(&x), Some(&y)) => {
            let rank = |byte: u8| if byte == b'/' { 0 } else { u16::from(byte) + 1 };
            rank(x).cmp(&rank(y))
        }
        _ => a.len().cmp(&b.len()),
    }
}

/// The length of the longest common prefix of `a` and `b`, eight bytes at a time: paths
/// sorted together share long prefixes, and a byte loop made sorting the slowest step left in
/// discovery.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let len = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= len {
        let word = |s: &[u8]| u64::from_le_bytes(s[i..i + 8].try_into().unwrap_or_default());
        let diff = word(a) ^ word(b);
        if diff != 0 {
            // Little-endian: the lowest set bit is in the first differing byte.
            return i + diff.trailing_zeros() as usize / 8;
        }
        i += 8;
    }
    i + a[i..len].iter().zip(&b[i..len]).take_while(|(x, y)| x == y).count()
}

/// Where `needle` (lowercase ASCII) first occurs in `hay`, ignoring ASCII case, without
/// lowercasing a copy of `hay` (the secret scanner runs this on every line of every prompt).
pub fn find_ignoring_case(hay: &str, needle: &str) -> Option<usize> {
    hay.as_bytes().windows(needle.len()).position(|window| window.eq_ignore_ascii_case(needle.as_bytes()))
}

/// Returns the allocator's free memory to the system. A long-lived server allocates and frees
/// a workspace's worth on every keystroke; without this the resident size would wait for the
/// allocator's own purge timers, which only run while it is busy.
pub fn release_free_memory() {
    unsafe extern "C" {
        fn mi_collect(force: bool);
    }
    // SAFETY: mimalloc (the global allocator, see lib.rs) is linked in every build; `mi_collect`
    // takes no pointers and only returns this thread's and the abandoned free pages to the OS.
    unsafe {
        mi_collect(true);
    }
}

/// When the allocator hands freed memory back to the system. The language server
/// (`long_lived`) does after 1 ms instead of mimalloc's default second: it frees a workspace's
/// worth on every keystroke, and its resident size should follow what it holds. A one-shot
/// command never does: the system takes everything back when it exits a moment later, and
/// memory handed back mid-run is faulted in again when reused (20,000 Last Light workflows: a
/// quarter fewer page faults and 6 % less time, for 2 to 4 % more peak).
pub fn tune_allocator(long_lived: bool) {
    unsafe extern "C" {
        fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    }
    // `mi_option_purge_delay` in the `mi_option_e` enum of mimalloc 3.3's `mimalloc.h`, the C
    // source `libmimalloc-sys` 0.1.49 builds (pinned in Cargo.toml for this number).
    const PURGE_DELAY: std::ffi::c_int = 15;
    // SAFETY: sets one integer option; mimalloc reads options at any time and takes no pointer.
    unsafe {
        mi_option_set(PURGE_DELAY, if long_lived { 1 } else { -1 });
    }
}

/// At most `max` characters of `text` for a message, with `…` when cut.
pub fn shorten(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        Some((cut, _)) => std::borrow::Cow::Owned(format!("{}…", &text[..cut])),
        None => std::borrow::Cow::Borrowed(text),
    }
}

/// Writes `bytes` to a new file at `path` without following a link there: whatever entry is
/// at `path` (a file, or a symlink someone planted in a shared directory) is removed, not
/// written through, and the file is created with `create_new` (`O_CREAT | O_EXCL`, which
/// refuses any entry that appears in between, symlinks included).
/// A character device or a pipe named itself (`/dev/null`, `/dev/full`, a FIFO) is written to
/// as it is, since git can store neither, so none is planted; anything else that is no regular
/// file or link to one (a link to a device such as `/dev/stdout`, a block device, a socket) is
/// an error, never removed: as root, removing `/dev/stdout` would break the system's own link.
pub fn write_new(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            return Err(std::io::Error::new(std::io::ErrorKind::IsADirectory, "is a directory"));
        }
        Ok(meta) if is_stream(&meta) => return std::fs::OpenOptions::new().write(true).open(path)?.write_all(bytes),
        Ok(meta) if !meta.is_file() && !meta.is_symlink() => {
            return Err(std::io::Error::other("neither a regular file nor a character device or pipe"));
        }
        Ok(meta)
            if meta.is_symlink()
                && std::fs::metadata(path).is_ok_and(|target| !target.is_file() && !target.is_dir()) =>
        {
            return Err(std::io::Error::other(
                "a link to a device or pipe; stagelint writes through no link (without the option, the output goes to standard output)",
            ));
        }
        Ok(_) => std::fs::remove_file(path)?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(error),
    }
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(path)?;
    file.write_all(bytes)
}

/// Whether `meta` is a character device or a pipe: a stream to write to, not a file to replace.
fn is_stream(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        meta.file_type().is_char_device() || meta.file_type().is_fifo()
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option number `tune_allocator` sets is the purge delay: it reads that option's
    /// default in mimalloc 3.3's `options.c` (1,000 ms) before, then what each kind of process
    /// sets. (The only test that tunes it.)
    #[test]
    fn the_allocator_option_set_is_the_purge_delay() {
        unsafe extern "C" {
            fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
        }
        // SAFETY: reads one integer option.
        let read = || unsafe { mi_option_get(15) };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(read(), 1000);
        }
        tune_allocator(false);
        assert_eq!(read(), -1);
        tune_allocator(true);
        assert_eq!(read(), 1);
    }

    #[test]
    fn path_order_is_the_order_of_path_components() {
        let paths = [
            "/r/a", "/r/a/b", "/r/a-b/c", "/r/a.b", "/r/a b/c", "/r/a/b-c", "/r/a/bc", "/r/a/b/c", "/r/ab", "/r/A",
            "/r/a0", "/r/é/x", "/r/e/x", "/r", "/", "r/a", "a",
        ];
        // Long shared prefixes, differing before, at and after each 8-byte word boundary.
        let long: Vec<String> = (5..19)
            .map(|cut| &"/repo/workflows/prompts"[..cut])
            .filter(|stem| !stem.ends_with('/'))
            .flat_map(|stem| {
                [stem.to_string(), format!("{stem}/x"), format!("{stem}-x"), format!("{stem}x/y"), format!("{stem} /y")]
            })
            .collect();
        let paths: Vec<&str> = paths.into_iter().chain(long.iter().map(String::as_str)).collect();
        for &a in &paths {
            for &b in &paths {
                // No trailing separators: a walk and `normalize` spell them away.
                let (a, b) = (std::path::Path::new(a), std::path::Path::new(b));
                assert_eq!(path_order(a, b), a.cmp(b), "{} vs {}", a.display(), b.display());
            }
        }
    }

    #[test]
    fn short_strings_read_back_whatever_their_length() {
        for text in ["", "ctx", "exactly_twenty_two_byt", "twenty-three bytes long", "näme"] {
            let short = ShortStr::from(text);
            assert_eq!(short.as_str(), text);
            assert_eq!(short.is_inline(), text.len() <= 22);
        }
        assert_eq!(std::mem::size_of::<ShortStr>(), 24);
    }

    #[test]
    fn articles_follow_the_first_letter() {
        assert_eq!(article("opencode"), "an opencode");
        assert_eq!(article("claude"), "a claude");
        assert_eq!(article("integer"), "an integer");
    }

    #[test]
    fn a_second_misspelling_of_a_key_finds_it_taken() {
        let known = ["turnCap", "retryPolicy"];
        let siblings = ["turncap", "turn_cap"];
        let guess = |key| did_you_mean_key(key, known, siblings);
        assert_eq!(guess("turncap"), Some(KeyGuess { name: "turnCap", taken: false }));
        assert_eq!(guess("turn_cap"), Some(KeyGuess { name: "turnCap", taken: true }));
        assert_eq!(did_you_mean_key("turncap", known, ["turnCap", "turncap"]).map(|g| g.taken), Some(true));
    }

    #[test]
    fn suggestions() {
        assert_eq!(did_you_mean("turncap", ["turnCap", "tags"]), Some("turnCap"));
        assert_eq!(did_you_mean("Raed", ["Read", "Write"]), Some("Read"));
        assert_eq!(did_you_mean("zzzz", ["Read"]), None);
        assert_eq!(did_you_mean("Grpe", ["Grep", "Glob"]), Some("Grep"));
        assert_eq!(did_you_mean("exec", ["execute", "review"]), Some("execute"));
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        // A suggestion keeps at least one character: `x` is not a typo of `d`.
        assert_eq!(did_you_mean("x", ["d", "owner"]), None);
        assert_eq!(did_you_mean("c9", ["c1"]), Some("c1"));
        assert_eq!(did_you_mean("X", ["x"]), Some("x"));
    }

    #[test]
    fn twins_that_differ_only_in_case_and_separators() {
        let tools = ["Read", "Grep", "WebFetch", "web-fetch"];
        // The neighbours are PascalCase tools: `WebFetch`.
        assert_eq!(did_you_mean_styled("webfetch", tools, &["Read", "Grep"]), Some(Guess::One("WebFetch")));
        assert_eq!(did_you_mean_styled("webfetch", tools, &["bash-run"]), Some(Guess::One("web-fetch")));
        // Alone, or among mixed styles, it is a toss-up.
        let either = did_you_mean_styled("webfetch", tools, &[]).expect("a guess");
        assert_eq!(either, Guess::Either(vec!["WebFetch", "web-fetch"]));
        assert_eq!(either.shown(), "`WebFetch` or `web-fetch`");
        assert_eq!(did_you_mean_styled("Raed", tools, &[]), Some(Guess::One("Read")));
    }

    #[test]
    fn valid_guesses_first() {
        let ids = ["publish_release", "publish-releases"];
        assert_eq!(did_you_mean_valid("publish-release", ids, is_kebab_case), Some(("publish-releases", true)));
        assert_eq!(
            did_you_mean_valid("publish-release", ["publish_release"], is_kebab_case),
            Some(("publish_release", false))
        );
    }

    #[test]
    fn kebab() {
        assert_eq!(to_kebab_case("PlanStage"), "plan-stage");
        assert_eq!(to_kebab_case("plan_stage 2"), "plan-stage-2");
        assert!(is_kebab_case("plan-2"));
        assert!(!is_kebab_case("Plan"));
        assert!(!is_kebab_case("a--b"));
    }
}
