//! Baselines: the findings a project accepted when it adopted stagelint, so that only new ones
//! are reported. `check` marks each finding its file's baseline accepts ([`apply`]) and reports
//! the entries nothing matches any more (`stagelint/BaselineStale`); `check --write-baseline`
//! writes the file ([`record`]). The file format is `diagnostic::baseline_file`; discovery
//! reads the baselines the configs name.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::diagnostic::baseline_file::{self, BaselineFile, Entry, fingerprint};
use crate::diagnostic::{Applicability, Diagnostic, Edit, Severity};
use crate::families::stagelint::{BaselineStale, InvalidConfig};
use crate::source::Span;
use crate::workspace::discover::normalize;
use crate::workspace::{FileKind, SourceFile, Workspace};

pub use baseline_file::DEFAULT_NAME;

/// Marks the findings the baseline of their file's config accepts (`baselined`), and adds a
/// `stagelint/BaselineStale` for each entry that matches fewer findings than its count.
/// `judged(code, file)` says whether a finding of `code` missing from `file` makes an entry
/// stale (the language server's first pass after a keystroke has not replayed the cassettes).
/// `findings` are sorted as `check` sorts them, and stay so.
pub fn apply(workspace: &Workspace, findings: &mut Vec<Diagnostic>, judged: &dyn Fn(&str, &SourceFile) -> bool) {
    let mut baselines: Vec<Loaded> =
        workspace.files().iter().filter(|f| f.kind == FileKind::Baseline).map(Loaded::read).collect();
    if baselines.is_empty() {
        return;
    }
    // The baseline of each config met, by the path it names (a few configs, many findings).
    let mut by_config: HashMap<&Path, Option<usize>> = HashMap::new();
    for finding in findings.iter_mut() {
        let file = workspace.file(finding.file);
        let Some(named) = file.config.baseline.as_deref() else { continue };
        let at = *by_config
            .entry(named)
            .or_insert_with(|| baselines.iter().position(|b| b.file.path == normalize(named) && b.usable()));
        let Some(baseline) = at.map(|at| &mut baselines[at]) else { continue };
        let key =
            (finding.code.to_string(), relative(&file.path, &baseline.dir), fingerprint(&file.text, finding.span));
        if let Some(slots) = baseline.left.get_mut(&key)
            && let Some(slot) = slots.iter_mut().find(|(_, left)| *left > 0)
        {
            slot.1 -= 1;
            finding.baselined = true;
        }
    }
    let before = findings.len();
    for baseline in &baselines {
        baseline.report(workspace, judged, findings);
    }
    if findings.len() > before {
        findings.sort_by(|a, b| {
            let (fa, fb) = (workspace.file(a.file), workspace.file(b.file));
            (&fa.display, a.span.start, a.code, &a.message).cmp(&(&fb.display, b.span.start, b.code, &b.message))
        });
    }
}

/// The text of the baseline file at `path` for `findings` (what `check` found, baselined or
/// not): an entry per distinct finding, counted. `old` is the file there now: its entries for
/// files this run did not check are kept as they are. Returns the text and the number of
/// findings recorded.
pub fn record(workspace: &Workspace, findings: &[Diagnostic], path: &Path, old: Option<&str>) -> (String, usize) {
    let dir = normalize(path.parent().unwrap_or(Path::new("/")));
    let mut entries: Vec<Entry> = Vec::new();
    let mut index: HashMap<(String, String, String), usize> = HashMap::new();
    let mut recorded = 0;
    for finding in findings {
        let file = workspace.file(finding.file);
        if finding.code == BaselineStale || file.kind == FileKind::Baseline {
            continue;
        }
        recorded += 1;
        let key = (finding.code.to_string(), relative(&file.path, &dir), fingerprint(&file.text, finding.span));
        match index.get(&key) {
            Some(&at) => entries[at].count += 1,
            None => {
                index.insert(key.clone(), entries.len());
                entries.push(Entry {
                    code: key.0,
                    path: key.1,
                    fingerprint: key.2,
                    count: 1,
                    message: finding.message.clone(),
                    span: Span::default(),
                    count_span: None,
                });
            }
        }
    }
    for entry in old.map(baseline_file::parse).map(|b| b.entries).unwrap_or_default() {
        if !checked(workspace, &dir, &entry, &|_, _| true) {
            recorded += entry.count as usize;
            entries.push(Entry { span: Span::default(), count_span: None, ..entry });
        }
    }
    (baseline_file::write(&entries), recorded)
}

/// A baseline file of the workspace, read, with the matches each entry has left.
struct Loaded<'w> {
    file: &'w SourceFile,
    dir: PathBuf,
    parsed: BaselineFile,
    /// Per key (code, path, fingerprint): each entry with that key and how many findings it
    /// still accepts.
    left: HashMap<(String, String, String), Vec<(usize, u32)>>,
}

impl<'w> Loaded<'w> {
    fn read(file: &'w SourceFile) -> Loaded<'w> {
        let parsed = baseline_file::parse(&file.text);
        let mut left: HashMap<_, Vec<(usize, u32)>> = HashMap::new();
        for (at, entry) in parsed.entries.iter().enumerate() {
            let key = (entry.code.clone(), entry.path.clone(), entry.fingerprint.clone());
            left.entry(key).or_default().push((at, entry.count));
        }
        let dir = file.path.parent().unwrap_or(Path::new("/")).to_path_buf();
        Loaded { file, dir, parsed, left }
    }

    fn usable(&self) -> bool {
        self.parsed.problems.is_empty()
    }

    /// The findings about this baseline: why it cannot be used, or its stale entries.
    fn report(&self, workspace: &Workspace, judged: &dyn Fn(&str, &SourceFile) -> bool, out: &mut Vec<Diagnostic>) {
        let config = &self.file.config;
        for (span, problem) in &self.parsed.problems {
            let message = format!("this baseline cannot be used, so no finding is baselined: {problem}");
            out.push(
                Diagnostic::new(InvalidConfig, self.file.id, *span, message).with_help(
                    "write it again with `stagelint check --write-baseline` (it records the current findings)",
                ),
            );
        }
        let Some(severity) = config.severity(BaselineStale, Severity::Info) else { return };
        if !self.usable() || config.ignored_for(&self.file.path, BaselineStale) {
            return;
        }
        let mut left = vec![0; self.parsed.entries.len()];
        for slots in self.left.values() {
            for (at, count) in slots {
                left[*at] = *count;
            }
        }
        for (entry, left) in self.parsed.entries.iter().zip(left) {
            if left == 0 || !checked(workspace, &self.dir, entry, judged) {
                continue;
            }
            out.push(self.stale(workspace, entry, left).with_severity(severity));
        }
    }

    /// The finding for `entry`, of which `left` matched nothing.
    fn stale(&self, workspace: &Workspace, entry: &Entry, left: u32) -> Diagnostic {
        let found = entry.count - left;
        let (code, path) = (&entry.code, &entry.path);
        let target = workspace.file_at(&normalize(&self.dir.join(path)));
        let (message, edit, title) = if found == 0 {
            let why = match target {
                Some(_) => "no longer found there (fixed, its text changed or its rule is off)",
                None => "the file no longer exists",
            };
            let message = format!("`{code}` in `{path}` is baselined but {why}; remove the entry");
            (message, self.removal(entry.span), "Remove the entry".to_string())
        } else {
            let message = format!(
                "`{code}` in `{path}` is baselined {} times but found {found} time{}; lower its count to {found}",
                entry.count,
                if found == 1 { "" } else { "s" }
            );
            let edit = entry.count_span.map(|span| Edit { span, replacement: found.to_string() });
            (message, edit, format!("Lower the count to {found}"))
        };
        let mut finding = Diagnostic::new(BaselineStale, self.file.id, entry.span, message)
            .with_help("`stagelint check --write-baseline` rewrites the baseline from the current findings");
        if let Some(target) = target {
            finding = finding.with_related(target.id, Span::empty(0), "the file it names");
        }
        match edit {
            Some(edit) => finding.with_fix(title, Applicability::Safe, vec![edit]),
            None => finding,
        }
    }

    /// The edit that removes the entry at `span` with the comma that separates it from the
    /// next one (or, for the last, from the one before), so that the list stays valid JSON.
    fn removal(&self, span: Span) -> Option<Edit> {
        let text = &self.file.text;
        let after = text.get(span.end..)?;
        let gap = after.len() - after.trim_start().len();
        let replacement = String::new();
        if after[gap..].starts_with(',') {
            let rest = &after[gap + 1..];
            let next = span.end + gap + 1 + (rest.len() - rest.trim_start().len());
            return Some(Edit { span: Span::new(span.start, next), replacement });
        }
        let before = text.get(..span.start)?.trim_end();
        let start = if before.ends_with(',') { before.len() - 1 } else { span.start };
        Some(Edit { span: Span::new(start, span.end), replacement })
    }
}

/// Whether this run checked what `entry` names (so a finding missing there is gone): its file
/// was checked, or it no longer exists (discovery counts a file outside what the run reads as
/// existing: `check sub/` knows nothing of `other/`).
fn checked(workspace: &Workspace, dir: &Path, entry: &Entry, judged: &dyn Fn(&str, &SourceFile) -> bool) -> bool {
    let target = normalize(&dir.join(&entry.path));
    match workspace.file_at(&target) {
        Some(file) => file.reported && file.kind != FileKind::Baseline && judged(&entry.code, file),
        None => !workspace.exists(&target),
    }
}

/// `path` relative to `dir`, `/`-separated (`../` where it lies outside).
fn relative(path: &Path, dir: &Path) -> String {
    let path_parts: Vec<_> = path.components().collect();
    let dir_parts: Vec<_> = dir.components().collect();
    let common = path_parts.iter().zip(&dir_parts).take_while(|(a, b)| a == b).count();
    let ups = std::iter::repeat_n("..".to_string(), dir_parts.len() - common);
    let downs = path_parts[common..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned());
    ups.chain(downs).collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_use_slashes_and_climb_out() {
        assert_eq!(relative(Path::new("/r/a/b.md"), Path::new("/r")), "a/b.md");
        assert_eq!(relative(Path::new("/r/a/b.md"), Path::new("/r/c")), "../a/b.md");
        assert_eq!(relative(Path::new("/x.md"), Path::new("/r/c")), "../../x.md");
    }
}
