//! Reading files as text, bounded: the one way stagelint reads a file (discovery, configs,
//! cassettes named on the command line).

use std::path::Path;

/// Files larger than this are reported instead of read.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Why a file could not be read as text.
#[derive(Debug)]
pub struct Unreadable {
    pub message: String,
    /// Byte offset the problem concerns (0 when it is the whole file).
    pub offset: usize,
    /// The text with invalid sequences replaced, so the position can still be shown.
    pub lossy_text: String,
}

impl Unreadable {
    pub(crate) fn whole(message: String) -> Unreadable {
        Unreadable { message, offset: 0, lossy_text: String::new() }
    }
}

/// Reads a file as UTF-8 text.
pub fn read_text(path: &Path) -> Result<String, Unreadable> {
    read_bytes(path).map_err(Unreadable::whole).and_then(decode)
}

/// Reads a regular file of at most [`MAX_FILE_BYTES`]. A device, FIFO or directory is refused
/// before it is opened (`/dev/zero` never ends, a FIFO without a writer blocks), and the read
/// itself stops at the cap, so a file that grows while it is read is refused too.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read file: {e}"))?;
    regular_within_cap(&meta)?;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read file: {e}"))?;
    read_open(file, meta.len())
}

/// [`read_text`] of a file a directory listing just reported as a regular file (never a link):
/// opened first and measured through the handle, so the path is looked up once, not twice (a
/// walk reads thousands). What it opened is measured again, so a file swapped for a directory
/// since the listing is still refused.
pub fn read_listed_text(path: &Path) -> Result<String, Unreadable> {
    let read = || {
        let file = std::fs::File::open(path).map_err(|e| format!("cannot read file: {e}"))?;
        let meta = file.metadata().map_err(|e| format!("cannot read file: {e}"))?;
        regular_within_cap(&meta)?;
        read_open(file, meta.len())
    };
    read().map_err(Unreadable::whole).and_then(decode)
}

fn regular_within_cap(meta: &std::fs::Metadata) -> Result<(), String> {
    if !meta.is_file() {
        return Err("not a regular file (a directory, device or FIFO); stagelint reads files only".into());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!("file is {} bytes, larger than the 16 MiB stagelint reads", meta.len()));
    }
    Ok(())
}

/// The rest of `file`, `len` bytes long when measured, up to the cap.
fn read_open(mut file: std::fs::File, len: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let len = usize::try_from(len).unwrap_or(0);
    // One byte more than the size: a read that stops exactly at the size is the end of the file,
    // so the usual extra read that returns nothing is saved (one system call in five per file).
    let mut bytes = vec![0; len + 1];
    let mut filled = 0;
    while filled < bytes.len() {
        match file.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("cannot read file: {e}")),
        }
        if filled == len {
            break;
        }
    }
    bytes.truncate(filled);
    if filled > len {
        // It grew since it was measured: read the rest, up to the cap.
        (&mut file)
            .take(MAX_FILE_BYTES + 1 - filled as u64)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read file: {e}"))?;
    }
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("file grew past the 16 MiB stagelint reads while it was read ({} bytes)", bytes.len()));
    }
    Ok(bytes)
}

/// Text an editor holds, judged as [`read_text`] judges a file (it is UTF-8 already).
pub(crate) fn check_text(text: &str) -> Result<String, Unreadable> {
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(Unreadable::whole(format!("file is {} bytes, larger than the 16 MiB stagelint reads", text.len())));
    }
    if text.as_bytes()[..text.len().min(8192)].contains(&0) {
        // The same message and position as the file on disk gets.
        return decode(text.as_bytes().to_vec());
    }
    Ok(text.to_string())
}

/// UTF-8 decoding with the two failure modes people hit: binary data and another encoding.
pub fn decode(bytes: Vec<u8>) -> Result<String, Unreadable> {
    if bytes[..bytes.len().min(8192)].contains(&0) {
        // Keep a lossy copy so the NUL can still be shown where it is, as a visible `␀` (a raw
        // NUL would reach the terminal); only the first NUL's offset is used, and it stays valid.
        let lossy_text = String::from_utf8_lossy(&bytes).into_owned();
        let offset = lossy_text.find('\0').unwrap_or(0);
        let lossy_text = lossy_text.replace('\0', "\u{2400}");
        return Err(Unreadable {
            message: "file looks binary (it contains a NUL byte); stagelint reads UTF-8 text only".into(),
            offset,
            lossy_text,
        });
    }
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        // The replacement keeps every byte before `offset` in place, so the offset stays valid.
        let lossy_text = String::from_utf8_lossy(e.as_bytes()).into_owned();
        Unreadable {
            message: format!("file is not valid UTF-8 (invalid byte sequence at byte {offset}); save it as UTF-8"),
            offset,
            lossy_text,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_of_every_size_around_the_read_boundaries_come_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        for len in [0, 1, 31, 32, 33, 4095, 4096, 4097, 8192, 65_537] {
            let path = dir.path().join(format!("f{len}"));
            let bytes: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            std::fs::write(&path, &bytes).unwrap();
            assert_eq!(read_bytes(&path).unwrap(), bytes, "{len} bytes");
        }
    }

    #[test]
    fn a_listed_file_reads_like_any_other_and_a_directory_is_still_refused() {
        let dir = tempfile::tempdir().unwrap();
        for len in [0, 1, 4096, 65_537] {
            let path = dir.path().join(format!("f{len}"));
            let text: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            std::fs::write(&path, &text).unwrap();
            assert_eq!(read_listed_text(&path).unwrap(), text, "{len} bytes");
        }
        // A listing saw a file there; it is a directory by the time it is read.
        let message = read_listed_text(dir.path()).unwrap_err().message;
        assert!(message.contains("not a regular file"), "{message}");
        let big = dir.path().join("big");
        std::fs::File::create(&big).unwrap().set_len(MAX_FILE_BYTES + 1).unwrap();
        assert!(read_listed_text(&big).unwrap_err().message.contains("larger than the 16 MiB"));
    }

    #[test]
    fn a_file_over_the_cap_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        std::fs::File::create(&path).unwrap().set_len(MAX_FILE_BYTES + 1).unwrap();
        assert!(read_bytes(&path).unwrap_err().contains("larger than the 16 MiB"));
    }
}
