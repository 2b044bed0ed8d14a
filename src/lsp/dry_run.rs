//! `stagelint.dryRun` (the code lens command): runs the same dry-run as the CLI on a blocking
//! thread with progress, publishes its findings on the cassette's lines, writes the timeline
//! to a file the client is asked to show, and answers with a JSON summary.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::{MessageType, NumberOrString, ShowDocumentParams, Uri};

use crate::lsp::convert;
use crate::lsp::state::{State, lock};
use crate::runtime::{Options, dry_run_focused, report};
use crate::workspace::discover::ConfigCache;

pub(super) async fn run(
    client: &Client,
    state: &Arc<Mutex<State>>,
    path: PathBuf,
    cassette: Option<PathBuf>,
    focus: Option<String>,
) -> Result<Value> {
    let (overlay, progress, show_document, open) = {
        let state = lock(state);
        let overlay: HashMap<PathBuf, String> = state.documents.iter().map(|(p, d)| (p.clone(), d.text())).collect();
        (overlay, state.progress, state.show_document, state.open_now())
    };
    let token = NumberOrString::String(format!("stagelint-dry-run-{}", path.display()));
    let progress = if progress && client.create_work_done_progress(token.clone()).await.is_ok() {
        Some(client.progress(token, "stagelint: dry-run").with_message(path.display().to_string()).begin().await)
    } else {
        None
    };
    // The report's file is unique per stage file and cassette: two workspaces (or scenarios)
    // with the same stage id do not overwrite each other's report.
    let report_key =
        format!("{}\n{}", path.display(), cassette.as_ref().map(|c| c.display().to_string()).unwrap_or_default());
    let ran = tokio::task::spawn_blocking(move || {
        // Open configs count with their unsaved text, as in the live check.
        let mut configs = ConfigCache::new(None).with_overlay(&overlay);
        let options = Options { strict: false, explain_init: true };
        let (workspace, run) = dry_run_focused(&path, cassette.as_deref(), focus, options, &mut configs, &overlay)?;
        let mut text = report::timeline(&workspace, &run);
        let mut rendered = Vec::new();
        let _ = crate::render::concise::render(&mut rendered, &workspace, &run.findings);
        text.push_str(&String::from_utf8_lossy(&rendered));
        let mut by_file: HashMap<PathBuf, (Uri, Vec<_>)> = HashMap::new();
        for finding in &run.findings {
            let file = workspace.file(finding.file);
            let Some(uri) = convert::uri(file) else { continue };
            let entry = by_file.entry(file.path.clone()).or_insert_with(|| (uri, Vec::new()));
            entry.1.push(convert::diagnostic(&workspace, finding, &open));
        }
        let summary = summary_line(&run);
        let focus = run.focus.as_ref().map(|f| json!({f.key: f.id}));
        Ok::<_, String>((run.title.clone(), text, by_file, summary, run.exit_code(), (run.passed, run.failed), focus))
    })
    .await;
    if let Some(progress) = progress {
        progress.finish().await;
    }
    let (title, text, by_file, summary, exit, (passed, failed), focus) = match ran {
        Ok(Ok(ran)) => ran,
        Ok(Err(message)) => {
            client.show_message(MessageType::ERROR, format!("stagelint dry-run: {message}")).await;
            return Err(Error::invalid_params(message));
        }
        Err(failed) => {
            let message = crashed(failed);
            client.show_message(MessageType::ERROR, &message).await;
            return Err(Error { code: ErrorCode::ServerError(REQUEST_FAILED), message: message.into(), data: None });
        }
    };
    // Findings join what the file already shows (the live check reports most of them too). A
    // pulling client gets them with its next pulls (after a refresh), not pushed.
    let turn = crate::lsp::state::publishing(state).await;
    let mut publish = Vec::new();
    {
        let mut state = lock(state);
        for (path, (uri, found)) in by_file {
            let pull = state.pull;
            let shown = if pull {
                state.dry_run.entry(path.clone()).or_default()
            } else {
                state.published.entry(path.clone()).or_default()
            };
            for diagnostic in found {
                if !shown.contains(&diagnostic) {
                    shown.push(diagnostic);
                }
            }
            let shown = shown.clone();
            let version = state.documents.get(&path).map(|d| d.version);
            let uri = state.uris.get(&path).cloned().unwrap_or(uri);
            publish.push((uri, shown, version));
        }
    }
    crate::lsp::analysis::deliver(client, state, publish).await;
    drop(turn);
    let report_path = write_report(&title, &report_key, &text);
    if show_document && let Some(uri) = report_path.as_ref().and_then(Uri::from_file_path) {
        let params = ShowDocumentParams { uri, external: Some(false), take_focus: Some(true), selection: None };
        let _ = client.show_document(params).await;
    }
    let level = if exit == 0 { MessageType::INFO } else { MessageType::WARNING };
    client.log_message(MessageType::LOG, text).await;
    client.show_message(level, summary.clone()).await;
    let mut answer = json!({
        "title": title,
        "exitCode": exit,
        "expectations": {"passed": passed, "failed": failed},
        "summary": summary,
        "report": report_path.map(|p| p.display().to_string()),
    });
    if let Some(focus) = focus {
        answer["focus"] = focus;
    }
    Ok(answer)
}

/// LSP's `RequestFailed`: the request was well formed, the server could not carry it out.
const REQUEST_FAILED: i64 = -32803;

/// What the client is told when the dry-run's thread panicked (a bug of ours, never of the
/// user's files): the panic's message and where to report it, rather than JSON-RPC's bare
/// "Internal error".
fn crashed(failed: tokio::task::JoinError) -> String {
    let reason = match failed.try_into_panic() {
        Ok(payload) => payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".into()),
        Err(_) => "the dry-run was cancelled".into(),
    };
    format!(
        "stagelint dry-run: stopped by a bug in stagelint ({reason}); the files are not at fault. \
         Please report it with the stage and cassette."
    )
}

fn summary_line(run: &crate::runtime::DryRun) -> String {
    let outcome = match run.exit_code() {
        0 => "passed",
        1 => "mismatch",
        _ => "authoring error",
    };
    let focus = run.focus.as_ref().map_or(String::new(), |f| format!(" ({} {})", f.key, f.id));
    format!(
        "stagelint dry-run {}{focus}: {outcome} · expectations {}/{} · findings {}",
        run.title,
        run.passed,
        run.passed + run.failed,
        run.findings.len()
    )
}

/// The timeline as a file in the temp directory, for `window/showDocument`. The temp
/// directory is shared with other users: the report is never written through a symlink,
/// neither one in place of the file nor one in place of its directory.
fn write_report(title: &str, key: &str, text: &str) -> Option<PathBuf> {
    write_report_at(&report_path(title, key), text)
}

fn write_report_at(path: &std::path::Path, text: &str) -> Option<PathBuf> {
    let dir = path.parent()?;
    std::fs::create_dir_all(dir).ok()?;
    if std::fs::symlink_metadata(dir).ok()?.file_type().is_symlink() {
        return None;
    }
    crate::util::write_new(path, text.as_bytes()).ok()?;
    Some(path.to_path_buf())
}

/// `<temp>/stagelint-dry-run/<title>-<8 hex of the key>.txt`; `key` names the stage file (and
/// cassette) absolutely, so equal titles from different files get different reports.
fn report_path(title: &str, key: &str) -> PathBuf {
    let name: String = title.chars().map(|c| if c.is_alphanumeric() || c == '-' { c } else { '_' }).collect();
    let hash = crate::cassette::digest::sha256_hex(key.as_bytes());
    std::env::temp_dir().join("stagelint-dry-run").join(format!("{name}-{}.txt", &hash[..8]))
}

#[cfg(test)]
mod tests {
    use super::{report_path, write_report_at};

    /// Issue 19: a symlink planted where the report goes is replaced, never written through;
    /// a linked report directory is refused.
    #[cfg(unix)]
    #[test]
    fn the_report_is_not_written_through_a_planted_symlink() {
        let dir = tempfile::tempdir().expect("temp dir");
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, "precious").expect("write");
        let reports = dir.path().join("stagelint-dry-run");
        std::fs::create_dir(&reports).expect("mkdir");
        let report = reports.join("stage_plan-0123abcd.txt");
        std::os::unix::fs::symlink(&victim, &report).expect("symlink");
        assert_eq!(write_report_at(&report, "timeline"), Some(report.clone()));
        assert_eq!(std::fs::read_to_string(&victim).expect("read"), "precious");
        assert!(!std::fs::symlink_metadata(&report).expect("meta").file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&report).expect("read"), "timeline");

        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).expect("mkdir");
        let linked = dir.path().join("linked");
        std::os::unix::fs::symlink(&elsewhere, &linked).expect("symlink");
        assert_eq!(write_report_at(&linked.join("r.txt"), "timeline"), None);
        assert!(!elsewhere.join("r.txt").exists());
    }

    /// A dry-run whose thread panics answers a request failure naming the panic, not the
    /// internal error (-32603) JSON-RPC would give.
    #[test]
    fn a_panicking_dry_run_is_told_as_a_bug_with_its_message() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        let failed = runtime
            .block_on(async {
                tokio::task::spawn_blocking(|| -> () { std::panic::panic_any("span out of range".to_string()) }).await
            })
            .expect_err("it panicked");
        let message = super::crashed(failed);
        assert!(
            message.starts_with("stagelint dry-run: stopped by a bug in stagelint (span out of range)"),
            "{message}"
        );
    }

    #[test]
    fn reports_of_stages_with_the_same_id_in_different_places_do_not_collide() {
        let a = report_path("stage plan", "/work/a/plan.md\n");
        let b = report_path("stage plan", "/work/b/plan.md\n");
        assert_ne!(a, b);
        assert!(a.starts_with(std::env::temp_dir()), "{}", a.display());
        assert_eq!(a, report_path("stage plan", "/work/a/plan.md\n"), "stable for one stage file");
        let name = a.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        assert!(name.starts_with("stage_plan-") && name.ends_with(".txt"), "{name}");
    }
}
