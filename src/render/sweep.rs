//! `stagelint dry-run --all`: a line per cassette and the total (full), the JSON report, JUnit
//! XML (one test case per cassette: GitLab, Jenkins and most CI systems read it), and the
//! coverage of the runs. SARIF and GitHub annotations of a sweep are the `check` renderers over
//! its findings, which sit on cassette and stage lines.

use std::fmt::Write as _;
use std::io::{self, Write};

use serde_json::json;

use crate::diagnostic::{Diagnostic, FileId, Severity};
use crate::runtime::all::{Replayed, Totals};
use crate::runtime::coverage::Part;
use crate::runtime::text::escape;
use crate::workspace::Workspace;

/// The coverage of each engine that reports it.
pub type Coverage = [(&'static str, Vec<Part>)];

/// A line per cassette, the findings (as `check` shows them), then the total.
pub fn full(
    out: &mut dyn Write,
    workspace: &Workspace,
    runs: &[Replayed],
    findings: &[Diagnostic],
    totals: &Totals,
    color: bool,
) -> io::Result<()> {
    for replayed in runs {
        writeln!(out, "{}", line(workspace, replayed))?;
    }
    if !findings.is_empty() {
        writeln!(out)?;
        crate::render::full::render(out, workspace, findings, color)?;
    }
    writeln!(out, "{}", total(totals))
}

/// `✓ path: title · expectations 3/3 · drift 0 · unused 0 · mismatches 0`, or why it did not run.
fn line(workspace: &Workspace, replayed: &Replayed) -> String {
    let path = escape(&workspace.file(replayed.cassette).display).into_owned();
    let mark = if replayed.passed() { "✓" } else { "✗" };
    let run = match &replayed.run {
        Ok(run) if run.refused.is_none() => run,
        Ok(run) => {
            let why = run.refused.as_deref().unwrap_or_default();
            return format!("{mark} {path}: {} not run: {}", escape(&run.title), escape(why));
        }
        Err(findings) => {
            let why = findings.first().map_or("it replays nothing here", |d| d.message.as_str());
            return format!("{mark} {path}: not replayed: {}", escape(why));
        }
    };
    let unchecked = if run.unchecked > 0 { format!(" ({} never checked)", run.unchecked) } else { String::new() };
    format!(
        "{mark} {path}: {} · expectations {}/{}{unchecked} · drift {} · unused {} · mismatches {}",
        escape(&run.title),
        run.passed,
        run.passed + run.failed,
        replayed.count(crate::registry::cassette::RequestDrift),
        replayed.count(crate::registry::cassette::CassetteUnconsumed),
        replayed.mismatches()
    )
}

fn total(totals: &Totals) -> String {
    format!(
        "Total: {} cassette{}, {} replayed, {} passed · expectations {}/{} · drift {} · unused turns {} · mismatches {}",
        totals.cassettes,
        if totals.cassettes == 1 { "" } else { "s" },
        totals.replayed,
        totals.passed,
        totals.expectations_passed,
        totals.expectations_passed + totals.expectations_failed,
        totals.drift,
        totals.unused,
        totals.mismatches
    )
}

/// Per part, what its runs took (with how often) and what none took.
pub fn coverage_text(out: &mut dyn Write, workspace: &Workspace, coverage: &Coverage) -> io::Result<()> {
    for (engine, parts) in coverage {
        let items = parts.iter().flat_map(|p| &p.items);
        let (all, taken) = items.fold((0, 0), |(all, taken), i| (all + 1, taken + usize::from(i.hits > 0)));
        let percent = (taken * 100).checked_div(all).unwrap_or(100);
        writeln!(out, "\nCoverage ({engine}): {taken} of {all} ways taken ({percent} %)")?;
        for part in parts {
            let file = workspace.file(part.file);
            let at = file.lines().line_col(&file.text, part.span.start);
            writeln!(out, "  {}  {}:{}", escape(&part.name), escape(&file.display), at.line)?;
            let mut groups: Vec<&str> = part.items.iter().map(|i| i.group).collect();
            groups.dedup();
            for group in groups {
                let of_group = || part.items.iter().filter(move |i| i.group == group);
                let taken: Vec<String> =
                    of_group().filter(|i| i.hits > 0).map(|i| format!("{} {}", i.name, i.hits)).collect();
                let missed: Vec<&str> = of_group().filter(|i| i.hits == 0).map(|i| i.name.as_str()).collect();
                let mut text = if taken.is_empty() { "none taken".to_string() } else { taken.join(", ") };
                if !missed.is_empty() && !taken.is_empty() {
                    let _ = write!(text, " · not taken: {}", missed.join(", "));
                } else if !missed.is_empty() {
                    let _ = write!(text, ": {}", missed.join(", "));
                }
                writeln!(out, "    {group}: {}", escape(&text))?;
            }
        }
    }
    Ok(())
}

/// The JSON report: version, each cassette with its counts and findings, the total, and the
/// coverage when asked for.
pub fn json(
    out: &mut dyn Write,
    workspace: &Workspace,
    runs: &[Replayed],
    configs: &[Diagnostic],
    totals: &Totals,
    coverage: Option<&Coverage>,
) -> io::Result<()> {
    let cassettes: Vec<serde_json::Value> = runs
        .iter()
        .map(|replayed| {
            let mut value = json!({
                "path": workspace.file(replayed.cassette).display,
                "engine": replayed.engine,
                "replayed": replayed.run.is_ok(),
                "passed": replayed.passed(),
                "drift": replayed.count(crate::registry::cassette::RequestDrift),
                "unused": replayed.count(crate::registry::cassette::CassetteUnconsumed),
                "mismatches": replayed.mismatches(),
                "findings": replayed.findings().iter().map(|d| crate::render::json::finding(workspace, d)).collect::<Vec<_>>(),
            });
            if let Ok(run) = &replayed.run {
                value["title"] = json!(run.title);
                value["expectations"] = json!({"passed": run.passed, "failed": run.failed, "unchecked": run.unchecked});
                if let Some(why) = &run.refused {
                    value["refused"] = json!(why);
                }
            }
            value
        })
        .collect();
    let mut report = json!({"version": 1, "cassettes": cassettes, "total": totals});
    if !configs.is_empty() {
        // Findings on no cassette: the configs that left theirs out.
        let configs: Vec<_> = configs.iter().map(|d| crate::render::json::finding(workspace, d)).collect();
        report["findings"] = json!(configs);
    }
    if let Some(coverage) = coverage {
        let engines: Vec<serde_json::Value> = coverage
            .iter()
            .map(|(engine, parts)| {
                let parts: Vec<serde_json::Value> = parts
                    .iter()
                    .map(|part| {
                        let file = workspace.file(part.file);
                        let at = file.lines().line_col(&file.text, part.span.start);
                        let items: Vec<serde_json::Value> = part
                            .items
                            .iter()
                            .map(|i| json!({"group": i.group, "name": i.name, "hits": i.hits}))
                            .collect();
                        json!({"name": part.name, "path": file.display, "line": at.line, "items": items})
                    })
                    .collect();
                json!({"engine": engine, "parts": parts})
            })
            .collect();
        report["coverage"] = json!(engines);
    }
    serde_json::to_writer_pretty(&mut *out, &report)?;
    writeln!(out)
}

/// JUnit XML: one test case per cassette (its engine as the class), a `failure` for a run
/// with errors, an `error` for one that could not run, and every finding in its body as the
/// concise format prints it.
pub fn junit(out: &mut dyn Write, workspace: &Workspace, runs: &[Replayed], configs: &[Diagnostic]) -> io::Result<()> {
    let not_run = |r: &Replayed| r.run.as_ref().map_or(true, |run| run.refused.is_some());
    // A config that cannot be used is one test case in error: the cassettes it governs did not run.
    let mut broken: Vec<FileId> = configs.iter().map(|d| d.file).collect();
    broken.dedup();
    let errors = runs.iter().filter(|r| not_run(r)).count() + broken.len();
    let failures = runs.iter().filter(|r| !not_run(r) && !r.passed()).count();
    let tests = runs.len() + broken.len();
    let counts = format!("tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\"");
    writeln!(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")?;
    writeln!(out, "<testsuites name=\"stagelint dry-run\" {counts}>")?;
    writeln!(out, "  <testsuite name=\"stagelint dry-run\" {counts} skipped=\"0\">")?;
    for file in broken {
        let path = xml(&workspace.file(file).display);
        let own: Vec<Diagnostic> = configs.iter().filter(|d| d.file == file).cloned().collect();
        let mut body = Vec::new();
        crate::render::concise::render(&mut body, workspace, &own)?;
        writeln!(out, "    <testcase classname=\"stagelint.config\" name=\"{path}\" file=\"{path}\">")?;
        let message = xml(&own[0].message);
        let body = xml(&String::from_utf8_lossy(&body));
        writeln!(out, "      <error type=\"{}\" message=\"{message}\">{body}</error>", own[0].code)?;
        writeln!(out, "    </testcase>")?;
    }
    for replayed in runs {
        let path = xml(&workspace.file(replayed.cassette).display);
        let head = format!("    <testcase classname=\"stagelint.{}\" name=\"{path}\" file=\"{path}\"", replayed.engine);
        let findings = replayed.findings();
        if !not_run(replayed) && replayed.passed() && findings.is_empty() {
            writeln!(out, "{head}/>")?;
            continue;
        }
        writeln!(out, "{head}>")?;
        let mut body = Vec::new();
        crate::render::concise::render(&mut body, workspace, findings)?;
        let body = xml(&String::from_utf8_lossy(&body));
        let first_error = findings.iter().find(|d| d.severity == Severity::Error);
        match (not_run(replayed), first_error) {
            (true, _) => {
                let why = match &replayed.run {
                    Ok(run) => run.refused.clone().unwrap_or_default(),
                    Err(found) => found.first().map_or_else(|| "it replays nothing here".into(), |d| d.message.clone()),
                };
                writeln!(out, "      <error type=\"not replayed\" message=\"{}\">{body}</error>", xml(&why))?;
            }
            (false, Some(first)) => {
                let message = xml(&first.message);
                writeln!(out, "      <failure type=\"{}\" message=\"{message}\">{body}</failure>", first.code)?;
            }
            // Warnings (drift) alone pass: they are output, not a failure.
            (false, None) => writeln!(out, "      <system-out>{body}</system-out>")?,
        }
        writeln!(out, "    </testcase>")?;
    }
    writeln!(out, "  </testsuite>")?;
    writeln!(out, "</testsuites>")
}

/// Text for an XML attribute or element: markup escaped, and characters XML 1.0 cannot hold
/// (controls other than tab and line breaks) replaced by U+FFFD.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_text_is_escaped_and_controls_replaced() {
        assert_eq!(xml("a<b>&\"c'\u{1b}[0m\n"), "a&lt;b&gt;&amp;&quot;c&apos;\u{fffd}[0m\n");
    }
}
