//! The `LanguageServer` implementation. State changes happen under one lock with no `.await`
//! inside; analysis runs on a blocking thread, one at a time, always on the newest texts.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use crate::ide;
use crate::lsp::analysis::analysis_loop;
use crate::lsp::convert::{self, Encoding};
use crate::lsp::documents::OpenDocument;
use crate::lsp::state::{Analysis, State, is_untitled, lock, publishing};
use crate::workspace::discover::is_config_name;

/// The code action kind of "apply every safe fix": `source.fixAll` for clients that run all
/// fixers on save, with our name so `editor.codeActionsOnSave` can pick this one.
const FIX_ALL: CodeActionKind = CodeActionKind::new("source.fixAll.stagelint");

/// A request (no parameters) answered `true` once the server is idle: every change analysed,
/// no second pass running or waiting, everything published; `false` after 30 s without.
/// Tests and scripted clients use it instead of guessing how long to wait. When idle, the
/// server also sends the notification [`Idle`]: it travels the way the diagnostics do, so
/// every publish of the analysed changes comes before it (the answer may overtake them).
pub(super) const IDLE: &str = "stagelint/idle";

/// The notification `stagelint/idle` (params: `true`).
enum Idle {}

impl notification::Notification for Idle {
    type Params = bool;
    const METHOD: &'static str = IDLE;
}

pub(super) struct Backend {
    client: Client,
    state: Arc<Mutex<State>>,
    changed: watch::Sender<u64>,
    /// The generation of the newest stored analysis, for requests that need fresh results.
    analysed: watch::Receiver<u64>,
    /// Set by `shutdown`: the process exit code depends on it.
    shut_down: Arc<AtomicBool>,
}

impl Backend {
    pub(super) fn new(client: Client, shut_down: Arc<AtomicBool>) -> Backend {
        let (changed, receiver) = watch::channel(0);
        let (done, analysed) = watch::channel(0);
        let state = Arc::new(Mutex::new(State { wake: Some(changed.clone()), ..State::default() }));
        tokio::spawn(analysis_loop(client.clone(), state.clone(), receiver, done));
        Backend { client, state, changed, analysed, shut_down }
    }

    /// Records that `changed` files changed (`None`: anything may have) and wakes the analysis
    /// task, which coalesces bursts of changes.
    fn touch(&self, changed: Option<&[PathBuf]>) {
        let generation = {
            let mut state = lock(&self.state);
            match changed {
                None => state.dirty.all = true,
                Some(paths) => {
                    for path in paths {
                        if is_config_name(path) {
                            state.dirty_governed(path);
                        } else if path.extension().is_some_and(|e| e == "toml") {
                            // Another TOML file (an editor may send every one): nothing of ours.
                            continue;
                        } else {
                            let scope = state.scope(path);
                            state.dirty.scopes.insert(scope);
                            let readers = state.readers(path);
                            state.dirty.scopes.extend(readers);
                        }
                    }
                }
            }
            state.generation += 1;
            let generation = state.generation;
            for path in changed.into_iter().flatten() {
                state.touched.push((generation, path.clone()));
            }
            generation
        };
        let _ = self.changed.send(generation);
    }

    /// Runs [`ide::lens::PREVIEW_COMMAND`] with the definition's URI and what to preview.
    async fn preview(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        let invalid = |message: &str| tower_lsp_server::jsonrpc::Error::invalid_params(message.to_string());
        let uri = params
            .arguments
            .first()
            .and_then(|a| a.as_str())
            .and_then(|text| text.parse::<Uri>().ok())
            .ok_or_else(|| invalid("expected the workflow's URI and the phase to preview"))?;
        let target = params
            .arguments
            .get(1)
            .and_then(|a| a.as_str())
            .map(str::to_string)
            .ok_or_else(|| invalid("expected the phase to preview as the second argument"))?;
        let path = path_of(&uri).ok_or_else(|| invalid("not a file URI"))?;
        if !is_untitled(&path) && !lock(&self.state).may_read(&path) {
            let message = format!("{} is outside the workspace folders", path.display());
            return Err(tower_lsp_server::jsonrpc::Error::invalid_params(message));
        }
        // Renders from an analysis of the current text.
        let _ = self.with_analysis(&uri, |_, _, _| ()).await;
        crate::lsp::preview::run(&self.client, &self.state, path, target).await.map(Some)
    }

    /// Answers [`IDLE`]. Publishes are queued before the state says they are done, so every
    /// diagnostic of the analysed changes precedes the [`Idle`] notification on the same queue.
    pub(super) async fn idle(&self) -> Result<bool> {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
        while tokio::time::Instant::now() < deadline {
            let settled = {
                let state = lock(&self.state);
                *self.analysed.borrow() >= state.generation
                    && state.dirty.is_empty()
                    && !state.analysing
                    && !state.replaying
                    && state.replay_next.is_none()
            };
            if settled {
                self.client.send_notification::<Idle>(true).await;
                return Ok(true);
            }
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
        Ok(false)
    }

    /// Runs `f` on the analysis of the newest text for the file at `uri`: the stored one when it
    /// read the open document's current version, else the one being made (waited for, briefly).
    /// `f` is also given how the client sees the analysis' files (its encoding, the open
    /// documents' URIs and the versions the analysis read), to name and convert positions.
    async fn with_analysis<T>(
        &self,
        uri: &Uri,
        f: impl FnOnce(&Analysis, &crate::workspace::SourceFile, &convert::Open) -> T,
    ) -> Option<T> {
        let path = path_of(uri)?;
        let (wanted, fresh) = {
            let state = lock(&self.state);
            (state.generation, state.fresh(&path))
        };
        if !fresh {
            let mut analysed = self.analysed.clone();
            // A slow analysis must not hang the editor: after a while, answer from the last results.
            let wait = analysed.wait_for(|g| *g >= wanted);
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), wait).await;
        }
        let (analysis, open) = {
            let state = lock(&self.state);
            let analysis = state.analysis_for(&path)?;
            let open = state.open_in(&analysis);
            (analysis, open)
        };
        let file = analysis.workspace.file_at(&path)?;
        // A bug in a feature must not leave the request unanswered (the client would wait for
        // good): it answers nothing and says so.
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&analysis, file, &open))) {
            Ok(answer) => Some(answer),
            Err(_) => {
                let message = format!(
                    "stagelint: a bug in stagelint stopped a request on {}; it is answered with nothing. Please report it.",
                    path.display()
                );
                self.client.log_message(MessageType::ERROR, message).await;
                None
            }
        }
    }
}

/// A pulled report's items with the dry-run's findings for the file, each once.
fn with_dry_run(items: &mut Vec<Diagnostic>, found: Option<&Vec<Diagnostic>>) {
    for diagnostic in found.into_iter().flatten() {
        if !items.contains(diagnostic) {
            items.push(diagnostic.clone());
        }
    }
}

/// The path a document is keyed by: its file's, or for an `untitled:` document its URI as a
/// relative path (see `analysis::is_untitled`).
pub(super) fn path_of(uri: &Uri) -> Option<PathBuf> {
    if uri.scheme().as_str().eq_ignore_ascii_case("untitled") {
        return Some(PathBuf::from(uri.as_str()));
    }
    uri.to_file_path().map(|p| crate::workspace::discover::normalize(&p))
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let offered = params.capabilities.general.as_ref().and_then(|g| g.position_encodings.as_deref());
        let encoding = Encoding::negotiate(offered);
        let mut roots: Vec<PathBuf> =
            params.workspace_folders.unwrap_or_default().iter().filter_map(|folder| path_of(&folder.uri)).collect();
        #[allow(deprecated)]
        if roots.is_empty()
            && let Some(root) = params.root_uri.as_ref().and_then(path_of)
        {
            roots.push(root);
        }
        // A client that opens `stagelint:` rule documents (the VS Code extension) says so.
        let explain_documents = params
            .initialization_options
            .as_ref()
            .and_then(|options| options.get("ruleDocuments"))
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        let document_changes = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.workspace_edit.as_ref())
            .and_then(|e| e.document_changes)
            .unwrap_or(false);
        let rename_files = document_changes
            && params
                .capabilities
                .workspace
                .as_ref()
                .and_then(|w| w.workspace_edit.as_ref())
                .and_then(|e| e.resource_operations.as_ref())
                .is_some_and(|kinds| kinds.contains(&ResourceOperationKind::Rename));
        let show_document =
            params.capabilities.window.as_ref().and_then(|w| w.show_document.as_ref()).is_some_and(|d| d.support);
        let pull = params.capabilities.text_document.as_ref().and_then(|t| t.diagnostic.as_ref()).is_some();
        let refresh = pull
            && params
                .capabilities
                .workspace
                .as_ref()
                .and_then(|w| w.diagnostics.as_ref())
                .and_then(|d| d.refresh_support)
                .unwrap_or(false);
        let progress = params.capabilities.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false);
        let dynamic_watchers = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|w| w.dynamic_registration)
            .unwrap_or(false);
        // `"baselined": "hide"` leaves out what a baseline accepts; anything else shows it as hints.
        let hide_baselined = params
            .initialization_options
            .as_ref()
            .and_then(|o| o.get("baselined"))
            .is_some_and(|v| v.as_str() == Some("hide"));
        {
            let mut state = lock(&self.state);
            state.hide_baselined = hide_baselined;
            state.encoding = Some(encoding);
            state.roots = roots;
            state.dynamic_watchers = dynamic_watchers;
            state.pull = pull;
            state.refresh = refresh;
            state.document_changes = document_changes;
            state.rename_files = rename_files;
            state.show_document = show_document;
            state.progress = progress;
            state.rule_links = crate::lsp::rule_docs::RuleLinks::new(explain_documents);
        }
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(encoding.kind()),
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                    ..TextDocumentSyncOptions::default()
                })),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                completion_provider: Some(CompletionOptions {
                    trigger_characters: Some(
                        [".", "{", "[", ":", " ", "\"", "$"].iter().map(|c| c.to_string()).collect(),
                    ),
                    ..CompletionOptions::default()
                }),
                definition_provider: Some(OneOf::Left(true)),
                references_provider: Some(OneOf::Left(true)),
                rename_provider: Some(OneOf::Right(RenameOptions {
                    prepare_provider: Some(true),
                    work_done_progress_options: WorkDoneProgressOptions::default(),
                })),
                document_symbol_provider: Some(OneOf::Left(true)),
                document_link_provider: Some(DocumentLinkOptions {
                    resolve_provider: Some(false),
                    work_done_progress_options: WorkDoneProgressOptions::default(),
                }),
                folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
                code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: vec![
                        ide::lens::DRY_RUN_COMMAND.to_string(),
                        ide::lens::PREVIEW_COMMAND.to_string(),
                        crate::lsp::rule_docs::EXPLAIN_COMMAND.to_string(),
                    ],
                    work_done_progress_options: WorkDoneProgressOptions::default(),
                }),
                diagnostic_provider: pull.then(|| {
                    DiagnosticServerCapabilities::Options(DiagnosticOptions {
                        identifier: Some("stagelint".into()),
                        inter_file_dependencies: true,
                        workspace_diagnostics: true,
                        ..DiagnosticOptions::default()
                    })
                }),
                code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                    code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, FIX_ALL]),
                    ..CodeActionOptions::default()
                })),
                workspace: Some(WorkspaceServerCapabilities {
                    workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                        supported: Some(true),
                        change_notifications: Some(OneOf::Left(true)),
                    }),
                    file_operations: None,
                }),
                ..ServerCapabilities::default()
            },
            server_info: Some(ServerInfo { name: "stagelint".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        let watch = lock(&self.state).dynamic_watchers;
        if watch {
            // Files that are not open still feed cross-file rules; hear about their changes.
            let options = DidChangeWatchedFilesRegistrationOptions {
                watchers: vec![FileSystemWatcher {
                    glob_pattern: GlobPattern::String("**/*.{md,markdown,yaml,yml,json,toml}".into()),
                    kind: None,
                }],
            };
            let registration = Registration {
                id: "stagelint-watch".into(),
                method: "workspace/didChangeWatchedFiles".into(),
                register_options: serde_json::to_value(options).ok(),
            };
            if let Err(error) = self.client.register_capability(vec![registration]).await {
                self.client.log_message(MessageType::WARNING, format!("stagelint: no file watcher: {error}")).await;
            }
        }
        self.touch(None);
    }

    async fn shutdown(&self) -> Result<()> {
        self.shut_down.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let Some(path) = path_of(&doc.uri) else { return };
        {
            let mut state = lock(&self.state);
            state.documents.insert(path.clone(), OpenDocument::new(&doc.text, doc.version));
            state.uris.insert(path.clone(), doc.uri);
            // An open `sm.yaml` counts as a file: scopes may change (see `scope_of_with_open`).
            state.scopes.clear();
        }
        self.touch(Some(&[path]));
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let Some(path) = path_of(&params.text_document.uri) else { return };
        {
            let mut state = lock(&self.state);
            let encoding = state.encoding();
            let Some(doc) = state.documents.get_mut(&path) else { return };
            // Versions only grow; an older change arriving late is dropped.
            if params.text_document.version <= doc.version {
                return;
            }
            for change in &params.content_changes {
                doc.apply(change, encoding);
            }
            doc.version = params.text_document.version;
        }
        self.touch(Some(&[path]));
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        if let Some(path) = path_of(&params.text_document.uri) {
            self.touch(Some(&[path]));
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let Some(path) = path_of(&params.text_document.uri) else { return };
        let turn = publishing(&self.state).await;
        let shown = {
            let mut state = lock(&self.state);
            state.documents.remove(&path);
            state.uris.remove(&path);
            state.scopes.clear();
            if is_untitled(&path) {
                // Nothing on disk replaces it: it is gone, with what it showed.
                state.scoped.remove(&path);
                state.published.remove(&path).is_some_and(|d| !d.is_empty())
            } else {
                false
            }
        };
        if is_untitled(&path) {
            if shown {
                let cleared = vec![(params.text_document.uri, Vec::new(), None)];
                crate::lsp::analysis::deliver(&self.client, &self.state, cleared).await;
            }
            return;
        }
        drop(turn);
        // The file on disk replaces the closed text.
        self.touch(Some(&[path]));
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        let paths: Vec<PathBuf> = params.changes.iter().filter_map(|change| path_of(&change.uri)).collect();
        let moved: Vec<PathBuf> = params
            .changes
            .iter()
            .filter(|change| change.typ != FileChangeType::CHANGED)
            .filter_map(|change| path_of(&change.uri))
            .collect();
        if !moved.is_empty() {
            let mut state = lock(&self.state);
            // A created or deleted file can move other files into another scope.
            state.scopes.clear();
            // The scopes analysed with the file there are re-checked too: a deleted `sm.yaml`
            // leaves the stages of its directory loose, and they must hear it.
            let held: Vec<PathBuf> =
                state.scoped.keys().filter(|scope| moved.iter().any(|path| path.starts_with(scope))).cloned().collect();
            state.dirty.scopes.extend(held);
        }
        self.touch(Some(&paths));
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        let added: Vec<PathBuf> = params.event.added.iter().filter_map(|f| path_of(&f.uri)).collect();
        let removed: Vec<PathBuf> = params.event.removed.iter().filter_map(|f| path_of(&f.uri)).collect();
        let turn = publishing(&self.state).await;
        let cleared = {
            let mut state = lock(&self.state);
            state.roots.retain(|root| !removed.contains(root));
            for folder in &added {
                if !state.roots.contains(folder) {
                    state.roots.push(folder.clone());
                }
            }
            state.scopes.clear();
            // What only a removed folder held is forgotten, and its files shown clean.
            let roots = state.roots.clone();
            let gone = |path: &std::path::Path| {
                removed.iter().any(|folder| path.starts_with(folder))
                    && !roots.iter().any(|root| path.starts_with(root))
            };
            state.scoped.retain(|scope, _| !gone(scope));
            state.dirty.scopes.retain(|scope| !gone(scope));
            state.dry_run.retain(|path, _| !gone(path));
            let cleared: Vec<PathBuf> = state.published.keys().filter(|path| gone(path)).cloned().collect();
            let mut publish = Vec::new();
            for path in cleared {
                state.published.remove(&path);
                let uri = state.uris.get(&path).cloned().or_else(|| Uri::from_file_path(&path));
                publish.extend(uri.map(|uri| (uri, Vec::new(), state.documents.get(&path).map(|d| d.version))));
            }
            state.dirty.folders.extend(added);
            publish
        };
        crate::lsp::analysis::deliver(&self.client, &self.state, cleared).await;
        drop(turn);
        self.touch(Some(&[]));
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let at = params.text_document_position_params;
        Ok(self
            .with_analysis(&at.text_document.uri, |analysis, file, open| {
                let offset = convert::offset_in(file, at.position, open);
                let cursor = ide::Cursor { file: file.id, offset };
                let family = ide::hover(&analysis.workspace, cursor);
                let finding = ide::hover::diagnostics_at(&analysis.diagnostics, file.id, offset);
                let (span, markdown) = match (family, finding) {
                    (Some(info), Some((span, text))) => {
                        (info.span.cover(span), format!("{text}\n\n---\n\n{}", info.markdown))
                    }
                    (Some(info), None) => (info.span, info.markdown),
                    (None, Some(found)) => found,
                    (None, None) => return None,
                };
                Some(Hover {
                    contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: markdown }),
                    range: Some(convert::range(file, span, open)),
                })
            })
            .await
            .flatten())
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let document_changes = lock(&self.state).document_changes;
        // `only` asks for some kinds (and their sub-kinds): `source.fixAll` on save, `quickfix`
        // in a light bulb. Without it, both.
        let only = params.context.only.clone();
        let wanted = |kind: &CodeActionKind| {
            only.as_ref().is_none_or(|only| {
                only.iter().any(|k| {
                    let (kind, k) = (kind.as_str(), k.as_str());
                    kind == k || kind.strip_prefix(k).is_some_and(|rest| rest.starts_with('.'))
                })
            })
        };
        let (quick_fixes, fix_all) = (wanted(&CodeActionKind::QUICKFIX), wanted(&FIX_ALL));
        Ok(self
            .with_analysis(&params.text_document.uri, |analysis, file, open| {
                let span = convert::span(file, params.range, open);
                let mut out: Vec<CodeActionOrCommand> = Vec::new();
                if quick_fixes {
                    for action in ide::actions::actions_for(&analysis.workspace, &analysis.diagnostics, file, span) {
                        if !open.shows(&analysis.diagnostics[action.diagnostic]) {
                            continue;
                        }
                        let diagnostic =
                            convert::diagnostic(&analysis.workspace, &analysis.diagnostics[action.diagnostic], open);
                        out.push(CodeActionOrCommand::CodeAction(CodeAction {
                            title: action.title,
                            kind: Some(CodeActionKind::QUICKFIX),
                            diagnostics: Some(vec![diagnostic]),
                            edit: Some(convert::workspace_edit(
                                &analysis.workspace,
                                &action.edits,
                                document_changes,
                                open,
                            )),
                            is_preferred: Some(action.preferred),
                            ..CodeAction::default()
                        }));
                    }
                }
                let edits = if fix_all {
                    ide::actions::fix_all(&analysis.workspace, &analysis.diagnostics, file)
                } else {
                    Vec::new()
                };
                if !edits.is_empty() {
                    let edits: Vec<_> = edits.into_iter().map(|edit| (file.id, edit)).collect();
                    out.push(CodeActionOrCommand::CodeAction(CodeAction {
                        title: "Fix all safe stagelint findings".into(),
                        kind: Some(FIX_ALL),
                        edit: Some(convert::workspace_edit(&analysis.workspace, &edits, document_changes, open)),
                        ..CodeAction::default()
                    }));
                }
                out
            })
            .await)
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let at = params.text_document_position;
        // A config file is no family's: its completion reads the open text alone.
        if let Some(path) = path_of(&at.text_document.uri).filter(|p| is_config_name(p)) {
            let (text, encoding) = {
                let state = lock(&self.state);
                (state.documents.get(&path).map(OpenDocument::text), state.encoding())
            };
            let Some(text) = text else { return Ok(None) };
            let lines = crate::source::LineIndex::new(&text);
            // The open text, as the client sent it.
            let columns = convert::Columns::sent(encoding);
            let offset = convert::offset(&text, &lines, at.position, columns);
            let items: Vec<CompletionItem> = ide::config::completions(&text, offset)
                .into_iter()
                .map(|item| convert::completion_in(&text, &lines, item, columns))
                .collect();
            return Ok((!items.is_empty()).then_some(CompletionResponse::Array(items)));
        }
        Ok(self
            .with_analysis(&at.text_document.uri, |analysis, file, open| {
                let offset = convert::offset_in(file, at.position, open);
                let items: Vec<CompletionItem> =
                    ide::completions(&analysis.workspace, ide::Cursor { file: file.id, offset })
                        .into_iter()
                        .map(|item| convert::completion(file, item, open))
                        .collect();
                (!items.is_empty()).then_some(CompletionResponse::Array(items))
            })
            .await
            .flatten())
    }

    async fn goto_definition(&self, params: GotoDefinitionParams) -> Result<Option<GotoDefinitionResponse>> {
        let at = params.text_document_position_params;
        Ok(self
            .with_analysis(&at.text_document.uri, |analysis, file, open| {
                let offset = convert::offset_in(file, at.position, open);
                let targets = ide::definitions(&analysis.workspace, ide::Cursor { file: file.id, offset });
                let locations = convert::locations(&analysis.workspace, &targets, open);
                (!locations.is_empty()).then_some(GotoDefinitionResponse::Array(locations))
            })
            .await
            .flatten())
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let at = params.text_document_position;
        Ok(self
            .with_analysis(&at.text_document.uri, |analysis, file, open| {
                let offset = convert::offset_in(file, at.position, open);
                let cursor = ide::Cursor { file: file.id, offset };
                let mut targets = ide::references(&analysis.workspace, cursor);
                if params.context.include_declaration {
                    targets.extend(ide::definitions(&analysis.workspace, cursor));
                }
                convert::locations(&analysis.workspace, &targets, open)
            })
            .await)
    }

    async fn prepare_rename(&self, params: TextDocumentPositionParams) -> Result<Option<PrepareRenameResponse>> {
        let answer = self
            .with_analysis(&params.text_document.uri, |analysis, file, open| {
                let offset = convert::offset_in(file, params.position, open);
                ide::prepare_rename(&analysis.workspace, ide::Cursor { file: file.id, offset })
                    .map(|span| PrepareRenameResponse::Range(convert::range(file, span, open)))
            })
            .await;
        match answer {
            Some(Ok(range)) => Ok(Some(range)),
            Some(Err(reason)) => Err(tower_lsp_server::jsonrpc::Error::invalid_params(reason)),
            None => Ok(None),
        }
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let at = params.text_document_position;
        let (document_changes, rename_files) = {
            let state = lock(&self.state);
            (state.document_changes, state.rename_files)
        };
        let answer = self
            .with_analysis(&at.text_document.uri, |analysis, file, open| {
                let offset = convert::offset_in(file, at.position, open);
                let cursor = ide::Cursor { file: file.id, offset };
                let edits: Vec<_> = ide::rename(&analysis.workspace, cursor, &params.new_name)?;
                // A stage cassette named after the id follows it, when the client can rename
                // files; otherwise its name stays as it is.
                if rename_files {
                    let files = ide::renamed_files(&analysis.workspace, cursor, &params.new_name);
                    return Ok(convert::workspace_edit_renaming(&analysis.workspace, &edits, &files, open));
                }
                Ok::<_, String>(convert::workspace_edit(&analysis.workspace, &edits, document_changes, open))
            })
            .await;
        match answer {
            Some(Ok(edit)) => Ok(Some(edit)),
            Some(Err(reason)) => Err(tower_lsp_server::jsonrpc::Error::invalid_params(reason)),
            None => Ok(None),
        }
    }

    async fn document_symbol(&self, params: DocumentSymbolParams) -> Result<Option<DocumentSymbolResponse>> {
        Ok(self
            .with_analysis(&params.text_document.uri, |analysis, file, open| {
                let symbols = ide::symbols(&analysis.workspace, file.id);
                DocumentSymbolResponse::Nested(symbols.into_iter().map(|s| convert::symbol(file, s, open)).collect())
            })
            .await)
    }

    async fn document_link(&self, params: DocumentLinkParams) -> Result<Option<Vec<DocumentLink>>> {
        Ok(self
            .with_analysis(&params.text_document.uri, |analysis, file, open| {
                ide::links(&analysis.workspace, file.id)
                    .into_iter()
                    .map(|link| DocumentLink {
                        range: convert::range(file, link.span, open),
                        target: Uri::from_file_path(&link.target),
                        tooltip: None,
                        data: None,
                    })
                    .collect()
            })
            .await)
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        Ok(self
            .with_analysis(&params.text_document.uri, |analysis, file, open| {
                let uri = serde_json::json!(params.text_document.uri.as_str());
                let mut lenses: Vec<CodeLens> = ide::lens::lenses(&analysis.workspace, file.id)
                    .into_iter()
                    .map(|lens| {
                        let cassette = open.uri(analysis.workspace.file(lens.cassette));
                        let mut arguments = vec![uri.clone()];
                        arguments.extend(cassette.map(|uri| serde_json::json!(uri.as_str())));
                        // A lens about one part of the run (a registry's step) names it third.
                        arguments.extend(lens.focus.map(|focus| serde_json::json!(focus)));
                        CodeLens {
                            range: convert::range(file, lens.span, open),
                            command: Some(Command {
                                title: lens.title,
                                command: ide::lens::DRY_RUN_COMMAND.to_string(),
                                arguments: Some(arguments),
                            }),
                            data: None,
                        }
                    })
                    .collect();
                lenses.extend(ide::lens::previews(&analysis.workspace, file.id).into_iter().map(|preview| CodeLens {
                    range: convert::range(file, preview.span, open),
                    command: Some(Command {
                        title: preview.title,
                        command: ide::lens::PREVIEW_COMMAND.to_string(),
                        arguments: Some(vec![uri.clone(), serde_json::json!(preview.target)]),
                    }),
                    data: None,
                }));
                lenses
            })
            .await)
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        if params.command == ide::lens::PREVIEW_COMMAND {
            return self.preview(params).await;
        }
        if params.command == crate::lsp::rule_docs::EXPLAIN_COMMAND {
            // A rule's page, for the read-only document a rule link opens.
            let argument = params.arguments.first().and_then(|a| a.as_str()).unwrap_or_default();
            return match crate::lsp::rule_docs::explain(argument) {
                Some(page) => Ok(Some(LSPAny::String(page))),
                None => Err(tower_lsp_server::jsonrpc::Error::invalid_params(format!(
                    "expected a rule code or a `stagelint:/docs/rules/<family>/<Name>.md` URI, not `{argument}`"
                ))),
            };
        }
        if params.command != ide::lens::DRY_RUN_COMMAND {
            return Err(tower_lsp_server::jsonrpc::Error::invalid_params(format!(
                "unknown command `{}`",
                params.command
            )));
        }
        let uri =
            params.arguments.first().and_then(|a| a.as_str()).and_then(|text| text.parse::<Uri>().ok()).ok_or_else(
                || tower_lsp_server::jsonrpc::Error::invalid_params("expected the stage's URI as the argument"),
            )?;
        let path = path_of(&uri)
            .filter(|path| !is_untitled(path))
            .ok_or_else(|| tower_lsp_server::jsonrpc::Error::invalid_params("not a file URI (save the file first)"))?;
        // The lens names its cassette; without one, the conventional cassette is used, else the
        // file's only cassette (several: the client must choose).
        let cassette = match params.arguments.get(1) {
            Some(argument) => Some(
                argument.as_str().and_then(|text| text.parse::<Uri>().ok()).and_then(|uri| path_of(&uri)).ok_or_else(
                    || tower_lsp_server::jsonrpc::Error::invalid_params("expected the cassette's file URI"),
                )?,
            ),
            None => {
                let chosen = self
                    .with_analysis(&uri, |analysis, file, _| {
                        ide::lens::cassette_to_run(&analysis.workspace, file.id)
                            .map(|found| found.map(|id| analysis.workspace.file(id).path.clone()))
                    })
                    .await;
                match chosen {
                    Some(Err(message)) => {
                        self.client.show_message(MessageType::ERROR, format!("stagelint dry-run: {message}")).await;
                        return Err(tower_lsp_server::jsonrpc::Error::invalid_params(message));
                    }
                    Some(Ok(found)) => found,
                    None => None,
                }
            }
        };
        // An untrusted client argument must not point the dry-run at files outside the workspace.
        let outside = {
            let state = lock(&self.state);
            std::iter::once(&path).chain(cassette.as_ref()).find(|p| !state.may_read(p)).cloned()
        };
        if let Some(outside) = outside {
            let message = format!(
                "{} is outside the workspace folders; stagelint dry-runs only files of the workspace or open documents",
                outside.display()
            );
            return Err(tower_lsp_server::jsonrpc::Error::invalid_params(message));
        }
        let focus = params.arguments.get(2).and_then(|a| a.as_str()).map(str::to_string);
        crate::lsp::dry_run::run(&self.client, &self.state, path, cassette, focus).await.map(Some)
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        Ok(self
            .with_analysis(&params.text_document.uri, |analysis, file, _| {
                ide::folds(&analysis.workspace, file.id)
                    .into_iter()
                    .map(|fold| FoldingRange {
                        start_line: fold.start_line as u32,
                        end_line: fold.end_line as u32,
                        kind: Some(FoldingRangeKind::Region),
                        ..FoldingRange::default()
                    })
                    .collect()
            })
            .await)
    }

    async fn workspace_diagnostic(&self, _: WorkspaceDiagnosticParams) -> Result<WorkspaceDiagnosticReportResult> {
        let wanted = lock(&self.state).generation;
        let mut analysed = self.analysed.clone();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), analysed.wait_for(|g| *g >= wanted)).await;
        let state = lock(&self.state);
        // Each file from the freshest analysis that covers it.
        let mut reports: HashMap<PathBuf, WorkspaceDocumentDiagnosticReport> = HashMap::new();
        for analysis in state.scoped.values() {
            for file in analysis.workspace.reported_files() {
                let Some(fresh) = state.analysis_for(&file.path) else { continue };
                if !Arc::ptr_eq(&fresh, analysis) {
                    continue;
                }
                let Some(uri) = state.uris.get(&file.path).cloned().or_else(|| convert::uri(file)) else { continue };
                let open = state.open_in(analysis);
                let mut items: Vec<_> = analysis
                    .diagnostics
                    .iter()
                    .filter(|d| d.file == file.id && open.shows(d))
                    .map(|d| convert::diagnostic(&analysis.workspace, d, &open))
                    .collect();
                with_dry_run(&mut items, state.dry_run.get(&file.path));
                let version = state.documents.get(&file.path).map(|d| i64::from(d.version));
                reports.insert(
                    file.path.clone(),
                    WorkspaceDocumentDiagnosticReport::Full(WorkspaceFullDocumentDiagnosticReport {
                        uri,
                        version,
                        full_document_diagnostic_report: FullDocumentDiagnosticReport { result_id: None, items },
                    }),
                );
            }
        }
        Ok(WorkspaceDiagnosticReportResult::Report(WorkspaceDiagnosticReport {
            items: reports.into_values().collect(),
        }))
    }

    async fn diagnostic(&self, params: DocumentDiagnosticParams) -> Result<DocumentDiagnosticReportResult> {
        let mut items: Vec<_> = self
            .with_analysis(&params.text_document.uri, |analysis, file, open| {
                analysis
                    .diagnostics
                    .iter()
                    .filter(|d| d.file == file.id && open.shows(d))
                    .map(|d| convert::diagnostic(&analysis.workspace, d, open))
                    .collect()
            })
            .await
            .unwrap_or_default();
        if let Some(path) = path_of(&params.text_document.uri) {
            with_dry_run(&mut items, lock(&self.state).dry_run.get(&path));
        }
        Ok(DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(
            RelatedFullDocumentDiagnosticReport {
                related_documents: None,
                full_document_diagnostic_report: FullDocumentDiagnosticReport { result_id: None, items },
            },
        )))
    }
}
