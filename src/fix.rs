//! `check --fix` and `--diff`: apply the fixes findings offer (the editor's quick fixes), in
//! memory, round after round until none applies, then hand back what changed.
//!
//! A round checks the current texts, takes each fixable finding's fix unless one of its edits
//! overlaps an edit already taken for that file (the rest wait for the next round, on the new
//! text), and applies each file's edits from the last-starting one back, so earlier offsets
//! stay valid. Only the edited spans change: comments and formatting elsewhere are kept byte
//! for byte.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::config::ConfigError;
use crate::diagnostic::{Applicability, Diagnostic, Edit, FileId};
use crate::workspace::Workspace;
use crate::workspace::discover::{ConfigCache, discover_with_overlay};

/// Rounds before giving up on fixes that keep producing new fixes.
pub const MAX_ROUNDS: usize = 10;

/// One file whose text the fixes changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Changed {
    pub path: PathBuf,
    pub display: String,
    pub before: String,
    pub after: String,
}

/// One fix that was applied: in which file (as displayed), for which code, and its title.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    pub display: String,
    pub code: &'static str,
    pub title: String,
}

/// The outcome of fixing: the workspace and findings after the last round, the changed files
/// (not yet written), and how many fixes were applied, and which.
pub struct Fixed {
    pub workspace: Workspace,
    pub diagnostics: Vec<Diagnostic>,
    pub changed: Vec<Changed>,
    pub applied: usize,
    pub fixes: Vec<Applied>,
}

/// Checks `paths`, keeps the findings `select` keeps, and applies their safe fixes (and the
/// unsafe ones too with `unsafe_fixes`) until none is left or [`MAX_ROUNDS`] have run. `overlay`
/// holds texts read instead of the files (standard input standing for a file).
pub fn fix_paths(
    paths: &[PathBuf],
    configs: &mut ConfigCache,
    select: &dyn Fn(Vec<Diagnostic>) -> Vec<Diagnostic>,
    unsafe_fixes: bool,
    mut overlay: HashMap<PathBuf, String>,
) -> Result<Fixed, ConfigError> {
    let mut originals: BTreeMap<PathBuf, (String, String)> = BTreeMap::new();
    let mut fixes: Vec<Applied> = Vec::new();
    let mut round = 0;
    loop {
        let workspace = discover_with_overlay(paths, configs, &overlay)?;
        let diagnostics = select(crate::check::check(&workspace));
        let planned = if round < MAX_ROUNDS { plan(&workspace, &diagnostics, unsafe_fixes) } else { Plan::default() };
        if planned.fixes == 0 {
            let changed = originals
                .into_iter()
                .filter_map(|(path, (display, before))| {
                    let after = overlay.remove(&path)?;
                    (after != before).then_some(Changed { path, display, before, after })
                })
                .collect();
            return Ok(Fixed { workspace, diagnostics, changed, applied: fixes.len(), fixes });
        }
        for (file, code, title) in planned.chosen {
            fixes.push(Applied { display: workspace.file(file).display.clone(), code, title });
        }
        round += 1;
        for (id, edits) in planned.edits {
            let file = workspace.file(id);
            originals.entry(file.path.clone()).or_insert_with(|| (file.display.clone(), file.text.clone()));
            overlay.insert(file.path.clone(), apply_edits(&file.text, &edits));
        }
    }
}

/// The edits one round applies, per file, and how many fixes they come from.
#[derive(Default)]
pub struct Plan {
    pub edits: BTreeMap<FileId, Vec<Edit>>,
    pub fixes: usize,
    /// Each chosen fix: the finding's file, its code and the fix's title.
    pub chosen: Vec<(FileId, &'static str, String)>,
}

/// Chooses the fixes of one round: in finding order, each fix whole or not at all, skipping a
/// fix whose edits overlap one already chosen for the same file, fall outside its text, or
/// would make it parse worse together with the edits already chosen.
pub fn plan(workspace: &Workspace, diagnostics: &[Diagnostic], unsafe_fixes: bool) -> Plan {
    let mut plan = Plan::default();
    // Suppression removals go last, and wait a round when another fix edits their line: that
    // edit may bring back the finding the comment suppresses (a `"Read, x"` string, where
    // nothing is reported, becoming the list `[Read, x]`, where `x` is).
    let (removals, others): (Vec<&Diagnostic>, Vec<&Diagnostic>) =
        diagnostics.iter().partition(|d| d.code == crate::families::stagelint::UnusedSuppression);
    for d in others.into_iter().chain(removals) {
        let Some(fix) = &d.fix else { continue };
        if fix.edits.is_empty() || (fix.applicability == Applicability::Unsafe && !unsafe_fixes) {
            continue;
        }
        // A fix may edit several files; it is taken only if it fits in every one of them.
        let mut fits = true;
        let mut by_file: Vec<(FileId, Vec<Edit>)> = Vec::new();
        for id in fix.files() {
            let edits: Vec<Edit> = fix.edits.iter().filter(|(f, _)| *f == id).map(|(_, e)| e.clone()).collect();
            let file = workspace.file(id);
            let text = &file.text;
            let valid = edits.iter().all(|e| {
                e.span.start <= e.span.end
                    && e.span.end <= text.len()
                    && text.is_char_boundary(e.span.start)
                    && text.is_char_boundary(e.span.end)
            });
            let taken = plan.edits.get(&id).map(Vec::as_slice).unwrap_or_default();
            let clashes = edits.iter().enumerate().any(|(i, e)| {
                taken.iter().any(|t| overlaps(t, e)) || edits[..i].iter().any(|other| overlaps(other, e))
            });
            // Checked with the edits taken before it: two renames, each fine alone, may write
            // the same key twice in one mapping.
            let line_edited = d.code == crate::families::stagelint::UnusedSuppression
                && valid
                && edits.iter().any(|e| taken.iter().any(|t| same_line(text, t, e)));
            fits &= valid && !clashes && !line_edited && !breaks_syntax(file, &[taken, &edits].concat());
            by_file.push((id, edits));
        }
        if fits {
            for (id, edits) in by_file {
                plan.edits.entry(id).or_default().extend(edits);
            }
            plan.fixes += 1;
            plan.chosen.push((d.file, d.code, fix.title.clone()));
        }
    }
    plan.edits.retain(|_, edits| !edits.is_empty());
    plan
}

/// Whether `edits` would leave `file` with more parse problems than it has: a fix must never
/// turn a file that reads into one that does not (a block line added to flow-style YAML, a key
/// renamed onto one that exists).
pub fn breaks_syntax(file: &crate::workspace::SourceFile, edits: &[Edit]) -> bool {
    let after = apply_edits(&file.text, edits);
    syntax_errors(file, &after) > syntax_errors(file, &file.text)
}

/// The parse problems of `text` read the way `file`'s kind is read.
fn syntax_errors(file: &crate::workspace::SourceFile, text: &str) -> usize {
    use crate::source::{frontmatter, json, yaml};
    use crate::workspace::FileKind;
    let is_json = file.path.extension().is_some_and(|e| e == "json");
    match file.kind {
        FileKind::Stage | FileKind::C3lPrompt | FileKind::WorkflowPrompt | FileKind::Skill => {
            frontmatter::split(text).map_or(0, |fm| yaml::parse(&text[fm.yaml.start..fm.yaml.end]).errors.len())
        }
        FileKind::StepsRegistry | FileKind::AgentJson | FileKind::JsonSchema | FileKind::Baseline => {
            json::parse(text).errors.len()
        }
        FileKind::StateMachine | FileKind::Cassette if is_json => json::parse(text).errors.len(),
        FileKind::StateMachine | FileKind::Cassette | FileKind::Workflow | FileKind::BreakdownConfig => {
            yaml::parse(text).errors.len()
        }
        FileKind::AtomicWorkflow => crate::families::atomic::syntax_errors(text),
        FileKind::AtomicContext | FileKind::Unreadable { .. } | FileKind::BrokenConfig { .. } => 0,
    }
}

/// Whether edit `b` touches a line that edit `a` touches.
fn same_line(text: &str, a: &Edit, b: &Edit) -> bool {
    let line_start = |at: usize| text[..at.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    let line_end = |at: usize| text[at.min(text.len())..].find('\n').map_or(text.len(), |i| at + i);
    line_start(a.span.start) <= line_end(b.span.end) && line_start(b.span.start) <= line_end(a.span.end)
}

/// Two edits clash when their spans share a byte, or when both insert at the same offset (their
/// order would be a guess).
fn overlaps(a: &Edit, b: &Edit) -> bool {
    (a.span.start < b.span.end && b.span.start < a.span.end) || a.span.start == b.span.start
}

/// Applies non-overlapping edits to `text`, the last-starting first.
pub fn apply_edits(text: &str, edits: &[Edit]) -> String {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by(|a, b| b.span.start.cmp(&a.span.start).then(b.span.end.cmp(&a.span.end)));
    let mut out = text.to_string();
    for edit in sorted {
        out.replace_range(edit.span.start..edit.span.end, &edit.replacement);
    }
    out
}

/// `--show-fixes` with `--fix`: the fixes applied, per file (in path order), each code once with
/// how many times and the titles.
pub fn applied_list(fixes: &[Applied], would: bool) -> String {
    if fixes.is_empty() {
        return format!("No fixes {}.\n", if would { "to apply" } else { "applied" });
    }
    let verb = if would { "Would apply" } else { "Applied" };
    let mut out = format!("{verb} {} fix{}:\n", fixes.len(), if fixes.len() == 1 { "" } else { "es" });
    let mut grouped: BTreeMap<&str, Vec<(&str, &str, usize)>> = BTreeMap::new();
    for fix in fixes {
        let list = grouped.entry(&fix.display).or_default();
        match list.iter_mut().find(|(code, title, _)| *code == fix.code && *title == fix.title) {
            Some(entry) => entry.2 += 1,
            None => list.push((fix.code, &fix.title, 1)),
        }
    }
    for (display, list) in grouped {
        out.push_str(&format!("  {display}:\n"));
        for (code, title, n) in list {
            out.push_str(&format!("    {n} × {code}: {title}\n"));
        }
    }
    out
}

/// A unified diff of one changed file (`a/` and `b/` prefixes, three lines of context). An
/// absolute path loses its leading `/` under the prefix, as in `git diff --no-index`
/// (`a/tmp/x.yaml`, not `a//tmp/x.yaml`).
pub fn unified_diff(changed: &Changed) -> String {
    let display = changed.display.replace('\\', "/");
    let display = display.trim_start_matches('/');
    similar::TextDiff::from_lines(&changed.before, &changed.after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{display}"), &format!("b/{display}"))
        .to_string()
}

/// Writes the changed files back.
pub fn write_back(changed: &[Changed]) -> Result<(), String> {
    for file in changed {
        std::fs::write(&file.path, &file.after).map_err(|e| format!("cannot write {}: {e}", display(&file.path)))?;
    }
    Ok(())
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Span;

    fn edit(start: usize, end: usize, replacement: &str) -> Edit {
        Edit { span: Span::new(start, end), replacement: replacement.to_string() }
    }

    #[test]
    fn absolute_paths_in_diff_headers_have_one_slash() {
        let changed = Changed {
            path: PathBuf::from("/tmp/w/a.yaml"),
            display: "/tmp/w/a.yaml".to_string(),
            before: "a: 1\n".to_string(),
            after: "a: 2\n".to_string(),
        };
        let diff = unified_diff(&changed);
        assert!(diff.starts_with("--- a/tmp/w/a.yaml\n+++ b/tmp/w/a.yaml\n"), "{diff}");
    }

    #[test]
    fn edits_apply_back_to_front() {
        let text = "alpha beta gamma";
        let out = apply_edits(text, &[edit(0, 5, "A"), edit(11, 16, "GAMMA"), edit(6, 6, "[")]);
        assert_eq!(out, "A [beta GAMMA");
    }

    #[test]
    fn overlap_rules() {
        assert!(overlaps(&edit(0, 5, ""), &edit(4, 6, "")));
        assert!(!overlaps(&edit(0, 5, ""), &edit(5, 6, "")), "touching spans do not clash");
        assert!(overlaps(&edit(3, 3, "a"), &edit(3, 3, "b")), "two inserts at one offset clash");
        assert!(overlaps(&edit(3, 3, "a"), &edit(3, 6, "b")));
        assert!(!overlaps(&edit(3, 6, "a"), &edit(6, 6, "b")));
    }

    #[test]
    fn diff_has_headers_and_hunks() {
        let changed = Changed {
            path: PathBuf::from("/x/plan.md"),
            display: "plan.md".into(),
            before: "a\nb\nc\n".into(),
            after: "a\nB\nc\n".into(),
        };
        assert_eq!(unified_diff(&changed), "--- a/plan.md\n+++ b/plan.md\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    }
}
