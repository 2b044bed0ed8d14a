//! A small JSON-RPC client for `stagelint lsp`, shared by the protocol tests and the latency
//! benchmark. It talks to the real binary over stdio ([`Client::spawn`]) or to the server
//! running in this process over a socket pair ([`Client::in_process`]); both use the same
//! framing, so every test exercises the real protocol code.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub const TIMEOUT: Duration = Duration::from_secs(30);

enum Server {
    Process(Child),
    Thread(Option<std::thread::JoinHandle<()>>),
}

pub struct Client {
    server: Server,
    writer: Box<dyn Write + Send>,
    messages: Receiver<Value>,
    /// Messages seen while waiting for something else, kept for a later `wait`.
    backlog: Vec<Value>,
    /// Drop unmatched messages instead (the benchmark waits on long streams).
    pub keep_backlog: bool,
    next_id: i64,
    /// Documents opened so far, with their last version.
    versions: Vec<(PathBuf, i64)>,
}

impl Client {
    /// The `stagelint` binary cargo built for this test or bench, over its stdio.
    pub fn spawn() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_stagelint"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("server starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        Client::over(Server::Process(child), Box::new(stdin), stdout)
    }

    /// The server of the library, on its own thread, over a Unix socket pair.
    #[cfg(unix)]
    pub fn in_process() -> Client {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().expect("socket pair");
        let handle = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            runtime.block_on(async move {
                theirs.set_nonblocking(true).expect("non-blocking");
                let stream = tokio::net::UnixStream::from_std(theirs).expect("tokio stream");
                let (read, write) = tokio::io::split(stream);
                stagelint::lsp::serve(read, write).await;
            });
        });
        let reader = ours.try_clone().expect("clone");
        Client::over(Server::Thread(Some(handle)), Box::new(ours), reader)
    }

    fn over(server: Server, writer: Box<dyn Write + Send>, reader: impl Read + Send + 'static) -> Client {
        let (tx, messages) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(reader);
            while let Some(message) = read_message(&mut reader) {
                if tx.send(message).is_err() {
                    return;
                }
            }
        });
        Client { server, writer, messages, backlog: Vec::new(), keep_backlog: true, next_id: 1, versions: Vec::new() }
    }

    /// The server process id (none in process).
    pub fn pid(&self) -> Option<u32> {
        match &self.server {
            Server::Process(child) => Some(child.id()),
            Server::Thread(_) => None,
        }
    }

    pub fn send(&mut self, message: &Value) {
        let body = message.to_string();
        write!(self.writer, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write to server");
        self.writer.flush().expect("flush");
    }

    /// Writes `bytes` as they are: malformed frames, for robustness tests.
    pub fn write_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("write to server");
        self.writer.flush().expect("flush");
    }

    /// Waits for the server process to end (it must within the timeout) and returns its exit code.
    pub fn exit_code(&mut self) -> Option<i32> {
        let Server::Process(child) = &mut self.server else { return None };
        let deadline = Instant::now() + TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the server did not exit within {TIMEOUT:?}");
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its id without waiting.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The result of a request, or its error object.
    pub fn try_request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.send_request(method, params);
        let answer = self.wait(method, |m| m.get("id") == Some(&json!(id)) && m.get("method").is_none());
        match answer.get("error") {
            Some(error) => Err(error.clone()),
            None => Ok(answer["result"].clone()),
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.try_request(method, params).unwrap_or_else(|e| panic!("{method} failed: {e}"))
    }

    /// The next message matching `wanted` (`what` names it if it never comes). Server requests
    /// (registerCapability, workDoneProgress/create) are acknowledged on the way.
    pub fn wait(&mut self, what: &str, mut wanted: impl FnMut(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&mut wanted) {
            return self.backlog.remove(i);
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .messages
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("timed out after {TIMEOUT:?} waiting for {what}"));
            if message.get("method").is_some() && message.get("id").is_some() {
                let id = message["id"].clone();
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
            }
            if wanted(&message) {
                return message;
            }
            if self.keep_backlog {
                self.backlog.push(message);
            }
        }
    }

    /// Messages received but not yet matched by a `wait`.
    pub fn backlog(&self) -> &[Value] {
        &self.backlog
    }

    /// Every message received so far, without waiting: the backlog, then what has arrived
    /// (server requests are acknowledged on the way).
    pub fn poll(&mut self) -> Vec<Value> {
        let mut out = std::mem::take(&mut self.backlog);
        while let Ok(message) = self.messages.try_recv() {
            if message.get("method").is_some() && message.get("id").is_some() {
                let id = message["id"].clone();
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
            }
            out.push(message);
        }
        out
    }

    /// Takes the messages received but not yet matched, in the order they came.
    pub fn take_backlog(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.backlog)
    }

    /// The params of the next `publishDiagnostics` for `uri` that satisfy `check`.
    pub fn published(&mut self, uri: &str, check: impl Fn(&Value) -> bool) -> Value {
        self.wait(&format!("diagnostics for {uri}"), |m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri && check(&m["params"])
        })["params"]
            .take()
    }

    /// The next diagnostics list published for `uri` that satisfies `check`, with its version.
    pub fn diagnostics(&mut self, uri: &str, check: impl Fn(&[Value]) -> bool) -> (Vec<Value>, Value) {
        let params = self.published(uri, |p| check(p["diagnostics"].as_array().map_or(&[], Vec::as_slice)));
        (params["diagnostics"].as_array().cloned().unwrap_or_default(), params["version"].clone())
    }

    /// `initialize` (with `capabilities`) and `initialized`; returns the server's capabilities.
    pub fn initialize_with(&mut self, root: &Path, capabilities: Value) -> Value {
        self.initialize_with_options(root, capabilities, Value::Null)
    }

    /// [`Client::initialize_with`], with `initializationOptions`.
    pub fn initialize_with_options(&mut self, root: &Path, capabilities: Value, options: Value) -> Value {
        let result = self.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": uri(root),
                "workspaceFolders": [{"uri": uri(root), "name": "test"}],
                "capabilities": capabilities,
                "initializationOptions": options
            }),
        );
        self.notify("initialized", json!({}));
        result
    }

    /// `initialize` offering `encodings` and dynamic file watching.
    pub fn initialize(&mut self, root: &Path, encodings: &[&str]) -> Value {
        self.initialize_options(root, encodings, Value::Null)
    }

    /// [`Client::initialize`] with `initializationOptions`.
    pub fn initialize_options(&mut self, root: &Path, encodings: &[&str], options: Value) -> Value {
        let capabilities = json!({
            "general": {"positionEncodings": encodings},
            "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}
        });
        self.initialize_with_options(root, capabilities, options)
    }

    pub fn open(&mut self, path: &Path, text: &str) {
        self.set(path, text);
    }

    /// Makes `text` the open text of `path`: `didOpen` the first time, then a whole-text change.
    pub fn set(&mut self, path: &Path, text: &str) {
        match self.versions.iter_mut().find(|(p, _)| p == path) {
            Some((_, version)) => {
                *version += 1;
                let version = *version;
                self.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri(path), "version": version}, "contentChanges": [{"text": text}]}),
                );
            }
            None => {
                self.versions.push((path.to_path_buf(), 1));
                let language = match path.extension().and_then(|e| e.to_str()) {
                    Some("json") => "json",
                    Some("yaml" | "yml") => "yaml",
                    Some("ts") => "typescript",
                    _ => "markdown",
                };
                self.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {"uri": uri(path), "languageId": language, "version": 1, "text": text}}),
                );
            }
        }
    }

    /// `didOpen` with a given version, whatever was opened before.
    pub fn open_versioned(&mut self, path: &Path, text: &str, version: i64) {
        self.versions.retain(|(p, _)| p != path);
        self.versions.push((path.to_path_buf(), version));
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri(path), "languageId": "markdown", "version": version, "text": text}}),
        );
    }

    /// The diagnostics of the newest text of `path`, pulled (`textDocument/diagnostic`), sorted.
    pub fn pulled(&mut self, path: &Path) -> Vec<Value> {
        let report = self.request("textDocument/diagnostic", json!({"textDocument": {"uri": uri(path)}}));
        let mut list = report["items"].as_array().cloned().unwrap_or_default();
        list.sort_by_key(|d| (d["range"].to_string(), d["code"].to_string(), d["message"].to_string()));
        list
    }

    /// One incremental edit of an open document: replaces `line`:`start`..`end` with `text`.
    pub fn change(&mut self, path: &Path, version: i64, line: usize, start: usize, end: usize, text: &str) {
        let range = json!({"start": {"line": line, "character": start}, "end": {"line": line, "character": end}});
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri(path), "version": version},
                "contentChanges": [{"range": range, "text": text}]
            }),
        );
        if let Some((_, v)) = self.versions.iter_mut().find(|(p, _)| p == path) {
            *v = version;
        }
    }

    /// Sets the text of `path` to `marked` without its `$0` and returns position params there
    /// (UTF-16 columns).
    pub fn at(&mut self, path: &Path, marked: &str) -> Value {
        let offset = marked.find("$0").expect("a `$0` cursor");
        let text = marked.replacen("$0", "", 1);
        self.set(path, &text);
        let before = &text[..offset];
        let line = before.matches('\n').count();
        let column: usize = before[before.rfind('\n').map_or(0, |i| i + 1)..].chars().map(char::len_utf16).sum();
        json!({"textDocument": {"uri": uri(path)}, "position": {"line": line, "character": column}})
    }

    /// A request whose only parameter is the document.
    pub fn document(&mut self, method: &str, path: &Path) -> Value {
        self.request(method, json!({"textDocument": {"uri": uri(path)}}))
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let id = self.next_id;
        let _ = write_message(&mut self.writer, &json!({"jsonrpc": "2.0", "id": id, "method": "shutdown"}));
        let _ = write_message(&mut self.writer, &json!({"jsonrpc": "2.0", "method": "exit", "params": null}));
        let deadline = Instant::now() + Duration::from_secs(5);
        match &mut self.server {
            Server::Process(child) => {
                while Instant::now() < deadline {
                    if let Ok(Some(_)) = child.try_wait() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                let _ = child.kill();
            }
            Server::Thread(handle) => {
                while Instant::now() < deadline && handle.as_ref().is_some_and(|h| !h.is_finished()) {
                    std::thread::sleep(Duration::from_millis(5));
                }
                if let Some(handle) = handle.take().filter(|h| h.is_finished()) {
                    // A panic on the server thread fails the test that caused it.
                    if handle.join().is_err() && !std::thread::panicking() {
                        panic!("the in-process server panicked");
                    }
                }
            }
        }
    }
}

fn write_message(writer: &mut dyn Write, message: &Value) -> std::io::Result<()> {
    let body = message.to_string();
    write!(writer, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    writer.flush()
}

/// One framed message, or `None` at the end of the stream or on a framing error.
fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = n.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// `value` with `root` replaced by `[ROOT]`, ready to snapshot; objects keyed by URI are sorted.
pub fn redact(root: &Path, value: &Value) -> Value {
    let text = value.to_string().replace(&root.display().to_string(), "[ROOT]");
    let mut value = serde_json::from_str(&text).expect("still JSON");
    sort_uri_keys(&mut value);
    value
}

fn sort_uri_keys(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.keys().all(|k| k.starts_with("file://")) {
                map.sort_keys();
            }
            map.values_mut().for_each(sort_uri_keys);
        }
        Value::Array(items) => items.iter_mut().for_each(sort_uri_keys),
        _ => {}
    }
}
