//! The one analysis entry point: run every family, then apply config and suppressions.

use crate::diagnostic::suppress::{self, BadSuppression, SuppressedCode, Suppression};
use crate::diagnostic::{Applicability, Diagnostic, Edit, FileId, Severity};
use crate::families::stagelint::{InvalidSuppression, UnusedSuppression};
use crate::families::{self, Family, atomic, lastlight, sm, stagelint, steps};
use crate::runtime::lint::Cassettes;
use crate::source::Span;
use crate::workspace::{FileKind, SourceFile, Workspace};

/// Every family, in the order of the registry's tables (`registry::TABLES`): the one list the
/// analysis and the editor dispatch (`ide`) run. It lives here, at the top, because the
/// families live on two floors (the cassette rules are the runtime's own linting).
pub static FAMILIES: &[&dyn Family] =
    &[&stagelint::Stagelint, &sm::Sm, &steps::Steps, &lastlight::Lastlight, &atomic::Atomic, &Cassettes];

/// What every family assumed for this workspace (the upstream release it linted for, and why).
pub fn notes(workspace: &Workspace) -> Vec<families::Note> {
    FAMILIES
        .iter()
        .flat_map(|family| {
            family.notes(workspace).into_iter().map(|message| families::Note { family: family.name(), message })
        })
        .collect()
}

/// Checks every file of the workspace; diagnostics come back sorted by file and position.
pub fn check(workspace: &Workspace) -> Vec<Diagnostic> {
    check_with(workspace, true, &|_| true)
}

/// [`check`] without replaying cassettes, and without reading the cassettes `cassettes` does
/// not take (the language server's first pass after a keystroke takes the ones being edited:
/// a long cassette beside the edited stage costs nothing until the second pass). A suppression
/// of a replay code, or in a cassette left out, is not reported unused here.
pub fn check_without_replays(workspace: &Workspace, cassettes: &dyn Fn(&SourceFile) -> bool) -> Vec<Diagnostic> {
    check_with(workspace, false, cassettes)
}

fn check_with(workspace: &Workspace, replays: bool, cassettes: &dyn Fn(&SourceFile) -> bool) -> Vec<Diagnostic> {
    let mut raw = Vec::new();
    for family in FAMILIES {
        if !replays && family.name() == Cassettes.name() {
            crate::runtime::lint::check_cassettes(workspace, false, cassettes, &mut raw);
        } else {
            family.check(workspace, &mut raw);
        }
    }
    let mut suppressions: Vec<Vec<Suppression>> = Vec::with_capacity(workspace.files().len());
    let mut result = Vec::new();
    // Every file's comments, on all cores.
    let scanned = crate::util::par_map(workspace.files(), scan_suppressions);
    for (file, (mut found, bad)) in workspace.files().iter().zip(scanned) {
        if !replays {
            let skipped = file.kind == FileKind::Cassette && !cassettes(file);
            for code in found.iter_mut().flat_map(|s| s.codes.iter_mut()) {
                code.used |= skipped || crate::runtime::lint::is_replay_code(&code.code);
            }
        }
        suppressions.push(found);
        for problem in bad {
            let mut diagnostic = Diagnostic::new(InvalidSuppression, file.id, problem.span, problem.message);
            if let Some(span) = problem.removal {
                let edit = Edit { span, replacement: String::new() };
                diagnostic = diagnostic.with_fix("Remove the empty entry", Applicability::Safe, vec![edit]);
            }
            result.push(diagnostic);
        }
    }
    for mut diagnostic in raw {
        workspace.settle_did_you_mean(&mut diagnostic);
        let file = workspace.file(diagnostic.file);
        let Some(severity) = enabled(file, diagnostic.code, diagnostic.severity) else {
            continue;
        };
        diagnostic.severity = severity;
        if !suppressed(&mut suppressions[diagnostic.file.0 as usize], file, &diagnostic) {
            result.push(diagnostic);
        }
    }
    report_foreign(workspace, &mut suppressions, &mut result);
    for (file, found) in workspace.files().iter().zip(&suppressions) {
        report_unused(file, found, &mut result);
    }
    let mut result: Vec<Diagnostic> = result
        .into_iter()
        .filter_map(|mut d| {
            let file = workspace.file(d.file);
            d.severity = enabled(file, d.code, d.severity)?;
            file.reported.then_some(d)
        })
        .collect();
    result.sort_by(|a, b| {
        let (fa, fb) = (workspace.file(a.file), workspace.file(b.file));
        (&fa.display, a.span.start, a.code, &a.message).cmp(&(&fb.display, b.span.start, b.code, &b.message))
    });
    // Without the replays, a replay finding (or any finding of a cassette left out) missing from
    // a file says nothing about the baseline entry that accepts it.
    let judged = |code: &str, file: &SourceFile| {
        replays
            || !(crate::runtime::lint::is_replay_code(code) || (file.kind == FileKind::Cassette && !cassettes(file)))
    };
    crate::baseline::apply(workspace, &mut result, &judged);
    result
}

/// The configured severity of `code` in `file`, or `None` when it is turned off there.
/// `current` is what the rule said (usually its default; some rules grade findings).
fn enabled(file: &SourceFile, code: &str, current: Severity) -> Option<Severity> {
    let severity = file.config.severity(code, current)?;
    (!file.config.ignored_for(&file.path, code)).then_some(severity)
}

fn scan_suppressions(file: &SourceFile) -> (Vec<Suppression>, Vec<BadSuppression>) {
    let mut found = Vec::new();
    let mut bad = Vec::new();
    // Every directive starts so: most files have none, and need no comment search.
    if !file.text.contains("stagelint:") {
        return (found, bad);
    }
    for region in stagelint::comment_regions(file) {
        let text = &file.text;
        suppress::scan(text, file.lines(), region.span, region.style, region.body, &mut found, &mut bad);
    }
    if file.kind == FileKind::AtomicWorkflow {
        let comments = file.comment_spans.get_or_init(|| atomic::comments(&file.text));
        suppress::scan_comments(&file.text, file.lines(), comments, &mut found, &mut bad);
    }
    for suppression in &mut found {
        for code in &mut suppression.codes {
            // Aliases (`steps/R-A6`) suppress their primary code.
            if let Some(rule) = families::rule(&code.code) {
                code.code = rule.code.to_string();
            } else if !families::is_family(&code.code) {
                let hint = families::code_hint(&code.code, false);
                bad.push(BadSuppression {
                    span: code.span,
                    message: format!("unknown rule code `{}`{hint}", code.code),
                    removal: None,
                });
            }
        }
    }
    (found, bad)
}

fn suppressed(found: &mut [Suppression], file: &SourceFile, diagnostic: &Diagnostic) -> bool {
    if diagnostic.code == UnusedSuppression || diagnostic.code == InvalidSuppression {
        return false;
    }
    let line = file.lines().line_of(diagnostic.span.start);
    let family = diagnostic.family();
    for suppression in found.iter_mut() {
        if !suppression.scope.covers(line) {
            continue;
        }
        if let Some(code) = suppression.codes.iter_mut().find(|c| c.code == diagnostic.code || c.code == family) {
            code.used = true;
            return true;
        }
    }
    false
}

fn report_unused(file: &SourceFile, found: &[Suppression], out: &mut Vec<Diagnostic>) {
    for suppression in found {
        let known: Vec<_> = suppression
            .codes
            .iter()
            .filter(|c| families::rule(&c.code).is_some() || families::is_family(&c.code))
            .collect();
        let unused: Vec<&SuppressedCode> =
            known.into_iter().filter(|c| !c.used && rule_enabled(file, &c.code)).collect();
        let all_unused = unused.len() == suppression.codes.len();
        for &code in &unused {
            let span = if all_unused {
                removal(file, suppression.comment)
            } else {
                code_removal(&suppression.codes, code, |c| unused.iter().any(|u| std::ptr::eq(*u, c)))
            };
            let edit = Edit { span, replacement: String::new() };
            let title = if all_unused { "Remove the suppression comment" } else { "Remove the unused code" };
            out.push(
                Diagnostic::new(
                    UnusedSuppression,
                    file.id,
                    code.span,
                    format!("suppression of `{}` is unused: nothing here reports it; remove it", code.code),
                )
                .with_fix(title, Applicability::Safe, vec![edit]),
            );
        }
    }
}

/// Other tools' suppression comments on lines that still have findings, or naming our codes;
/// our own suppressions apply to these findings too.
fn report_foreign(workspace: &Workspace, suppressions: &mut [Vec<Suppression>], result: &mut Vec<Diagnostic>) {
    let mut by_file: Vec<Vec<(usize, &'static str)>> = vec![Vec::new(); workspace.files().len()];
    for d in result.iter() {
        if d.code != UnusedSuppression && d.code != InvalidSuppression {
            let file = workspace.file(d.file);
            by_file[d.file.0 as usize].push((file.lines().line_of(d.span.start), d.code));
        }
    }
    // A comment's message lists the codes it leaves reported in the order they occur in the
    // file, whatever order the families found them in.
    by_file.iter_mut().for_each(|found| found.sort_unstable());
    // Every reported file's comments are read for other tools' suppressions: on all cores.
    let reported: Vec<_> = workspace.files().iter().zip(&by_file).filter(|(file, _)| file.reported).collect();
    let foreign = crate::util::par_map(&reported, |(file, findings)| {
        let mut found = Vec::new();
        stagelint::foreign_suppressions(file, findings, &mut found);
        found
    });
    for ((file, _), found) in reported.iter().zip(foreign) {
        for mut d in found {
            let Some(severity) = enabled(file, d.code, d.severity) else { continue };
            d.severity = severity;
            if !suppressed(&mut suppressions[file.id.0 as usize], file, &d) {
                result.push(d);
            }
        }
    }
}

/// What removing one code from a list that keeps others deletes: the code with the `,` and
/// blanks up to the next code when a kept code follows it (`[a, b]` → `[b]`), else the `,` and
/// blanks from the code before it (`[a, b]` → `[a]`). Never an empty entry; and the removals of
/// several codes of one list only touch, so one `--fix` round applies them all.
fn code_removal(codes: &[SuppressedCode], code: &SuppressedCode, removed: impl Fn(&SuppressedCode) -> bool) -> Span {
    let index = codes.iter().position(|c| std::ptr::eq(c, code)).unwrap_or(0);
    let kept_after = codes[index + 1..].iter().any(|c| !removed(c));
    match (codes.get(index + 1), index.checked_sub(1).map(|i| &codes[i])) {
        (Some(next), _) if kept_after => Span::new(code.span.start, next.span.start),
        (_, Some(previous)) => Span::new(previous.span.end, code.span.end),
        (Some(next), None) => Span::new(code.span.start, next.span.start),
        (None, None) => code.span,
    }
}

/// What removing a suppression comment deletes: its whole line when the comment stands alone,
/// the blanks before it when it trails code, the blanks after it when code follows it, so the
/// fix leaves no empty line or stray blank.
fn removal(file: &SourceFile, comment: Span) -> Span {
    let text = &file.text;
    let line = file.lines().line_of(comment.start);
    // A byte order mark before the comment stays.
    let (start, end) = (file.lines().column_start(line), file.lines().line_end(text, line));
    if comment.end > end {
        return comment;
    }
    let after = &text[comment.end..end];
    if !after.trim().is_empty() {
        // Code follows (`/* … */ code`): take the blanks after the comment too.
        return Span::new(comment.start, end - after.trim_start_matches([' ', '\t']).len());
    }
    let before = &text[start..comment.start];
    if before.trim().is_empty() {
        Span::new(start, file.lines().line_start(line + 1))
    } else {
        Span::new(start + before.trim_end_matches([' ', '\t']).len(), comment.end)
    }
}

/// A suppression for a rule the config turns off is not "unused".
fn rule_enabled(file: &SourceFile, code: &str) -> bool {
    match families::rule(code) {
        Some(rule) => enabled(file, rule.code, rule.severity).is_some(),
        None => {
            families::all_rules().filter(|r| r.family() == code).any(|r| enabled(file, r.code, r.severity).is_some())
        }
    }
}

/// Convenience for tests and tools that hold one file's diagnostics.
pub fn for_file(diagnostics: &[Diagnostic], file: FileId) -> impl Iterator<Item = &Diagnostic> {
    diagnostics.iter().filter(move |d| d.file == file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::discover::{ConfigCache, discover};

    /// The language server's first pass after a keystroke leaves out only what a replay finds.
    #[test]
    fn a_check_without_replays_leaves_out_only_replay_findings() {
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/cassette/ExpectationFailed/bad-branch");
        let workspace = discover(&[fixture], &mut ConfigCache::new(None)).unwrap();
        let full = check(&workspace);
        let first = check_without_replays(&workspace, &|_| true);
        let replayed = |d: &&Diagnostic| crate::runtime::lint::is_replay_code(d.code);
        assert!(full.iter().any(|d| d.code == "cassette/ExpectationFailed"), "{full:?}");
        assert!(!first.iter().any(|d| replayed(&d)), "{first:?}");
        let rest: Vec<&Diagnostic> = full.iter().filter(|d| !replayed(d)).collect();
        assert_eq!(rest.len(), first.len());
    }

    /// A first pass that leaves a cassette out does not read it: none of its findings, and a
    /// suppression in it is not reported unused.
    #[test]
    fn a_first_pass_reads_only_the_cassettes_it_is_given() {
        let fixture =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cassette/UnknownKey/bad-top-level");
        let workspace = discover(&[fixture], &mut ConfigCache::new(None)).unwrap();
        let cassette = |d: &Diagnostic| workspace.file(d.file).kind == FileKind::Cassette;
        assert!(check_without_replays(&workspace, &|_| true).iter().any(|d| d.code == "cassette/UnknownKey"));
        let first = check_without_replays(&workspace, &|_| false);
        assert!(!first.iter().any(cassette), "{first:?}");
    }
}
