//! A framing filter in front of tower-lsp-server. Its codec ends the input stream at the first
//! frame it cannot decode (the server then exits as if the client had gone), and that cannot be
//! configured. So frames are read here first: a valid one is passed on, re-framed with only its
//! `Content-Length`; a malformed one is answered with a JSON-RPC error (`id: null`, -32700 for
//! bytes that are not JSON, -32600 for JSON that is not a request or response) and dropped.
//!
//! Both the server and this filter write through [`Output`], which takes whole writes into one
//! queue, so an error reply never lands inside a frame the server is writing.

use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// A frame body larger than this is refused (and skipped) rather than buffered.
const MAX_BODY: usize = 64 * 1024 * 1024;
/// A header line longer than this, or more lines than [`MAX_HEADERS`], is garbage.
const MAX_HEADER_LINE: usize = 8 * 1024;
const MAX_HEADERS: usize = 32;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// The write half shared by the server and the filter: every `poll_write` is queued whole and
/// written out in order by [`write_out`]. tower-lsp-server encodes a frame completely before
/// writing it, so each queued chunk holds whole frames.
pub(super) struct Output(mpsc::UnboundedSender<Vec<u8>>);

impl Output {
    pub(super) fn new() -> (Output, mpsc::UnboundedReceiver<Vec<u8>>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (Output(sender), receiver)
    }

    fn send(&self, bytes: Vec<u8>) -> std::io::Result<()> {
        self.0.send(bytes).map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))
    }

    pub(super) fn clone_sender(&self) -> Output {
        Output(self.0.clone())
    }
}

impl AsyncWrite for Output {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Poll::Ready(self.send(buf.to_vec()).map(|()| buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Writes the queued chunks to `output` until every [`Output`] is dropped, or until writing
/// fails, which it returns.
pub(super) async fn write_out(
    mut queue: mpsc::UnboundedReceiver<Vec<u8>>,
    output: impl AsyncWrite,
) -> Option<std::io::Error> {
    let mut output = std::pin::pin!(output);
    while let Some(chunk) = queue.recv().await {
        let written = match output.write_all(&chunk).await {
            Ok(()) => output.flush().await,
            Err(error) => Err(error),
        };
        if let Err(error) = written {
            return Some(error);
        }
    }
    None
}

/// Reads frames from `input` until it ends or an `exit` notification has been passed on: valid
/// ones go to `server`, malformed ones are answered on `replies`.
pub(super) async fn filter(input: impl AsyncRead + Unpin, mut server: impl AsyncWrite + Unpin, replies: Output) {
    let mut input = BufReader::new(input);
    loop {
        let length = match read_headers(&mut input).await {
            Headers::End => return,
            Headers::Length { length, skipped } => {
                if skipped
                    && reply(&replies, PARSE_ERROR, "Parse error: skipped bytes that were not a message").is_err()
                {
                    return;
                }
                length
            }
            Headers::Malformed => {
                if reply(&replies, PARSE_ERROR, "Parse error: malformed message headers").is_err() {
                    return;
                }
                continue;
            }
        };
        if length > MAX_BODY {
            // Skip the body without keeping it.
            let skipped = tokio::io::copy(&mut (&mut input).take(length as u64), &mut tokio::io::sink()).await;
            if skipped.map_or(true, |n| n < length as u64)
                || reply(&replies, INVALID_REQUEST, "Invalid request: message too large").is_err()
            {
                return;
            }
            continue;
        }
        let mut body = vec![0; length];
        if input.read_exact(&mut body).await.is_err() {
            return;
        }
        let sent = match judge(&body) {
            Ok(message) => {
                let mut frame = format!("Content-Length: {length}\r\n\r\n").into_bytes();
                frame.extend_from_slice(&body);
                let sent = server.write_all(&frame).await.and(server.flush().await);
                // The server reads nothing after `exit`.
                if message == Message::Exit {
                    return;
                }
                sent
            }
            Err((code, message)) => reply(&replies, code, message),
        };
        if sent.is_err() {
            return;
        }
    }
}

enum Headers {
    /// The input ended (cleanly or mid-header).
    End,
    /// A frame's length; `skipped` when garbage before its `Content-Length` was dropped.
    Length { length: usize, skipped: bool },
    /// The header block has no usable `Content-Length`.
    Malformed,
}

/// Reads one header block, up to and including its empty line.
async fn read_headers<R: AsyncRead + Unpin>(input: &mut BufReader<R>) -> Headers {
    let mut length = None;
    let mut malformed = false;
    let mut skipped = false;
    let mut lines = 0;
    loop {
        let mut line = Vec::new();
        match (&mut *input).take(MAX_HEADER_LINE as u64).read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return Headers::End,
            Ok(_) => {}
        }
        if !line.ends_with(b"\n") {
            // Too long for a header: part of some garbage; the rest of it is read as more lines.
            malformed = true;
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if lines == 0 {
                // Blank lines between frames are tolerated.
                continue;
            }
            break;
        }
        // Resynchronize: a `Content-Length` after garbage (a stray byte glued to the header, the
        // rest of a body whose length was wrong, a line of noise) starts the frame afresh;
        // otherwise every later frame would be read out of step, and none would be served.
        let text = match crate::util::find_ignoring_case(text, "content-length:") {
            Some(at) if at > 0 || malformed => {
                (skipped, malformed, length, lines) = (true, false, None, 0);
                &text[at..]
            }
            _ => text,
        };
        lines += 1;
        malformed |= lines > MAX_HEADERS;
        match text.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                match value.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    Err(_) => malformed = true,
                }
            }
            Some(_) => {}
            None => malformed = true,
        }
    }
    match length {
        Some(length) if !malformed => Headers::Length { length, skipped },
        _ => Headers::Malformed,
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Message {
    Exit,
    Other,
}

/// Whether tower-lsp-server will decode `body`: UTF-8 JSON that is a response or a request
/// (its codec tries them in that order). The error says which JSON-RPC error it is not.
fn judge(body: &[u8]) -> Result<Message, (i64, &'static str)> {
    use tower_lsp_server::jsonrpc::{Request, Response};
    let text = std::str::from_utf8(body).map_err(|_| (PARSE_ERROR, "Parse error: the body is not UTF-8"))?;
    // Requests first: they are most messages, and one parse is enough for them.
    if let Ok(request) = serde_json::from_str::<Request>(text) {
        // What also reads as a response is one to the codec, never `exit`.
        let exit = request.method() == "exit" && serde_json::from_str::<Response>(text).is_err();
        return Ok(if exit { Message::Exit } else { Message::Other });
    }
    if serde_json::from_str::<Response>(text).is_ok() {
        return Ok(Message::Other);
    }
    if serde_json::from_str::<serde::de::IgnoredAny>(text).is_err() {
        return Err((PARSE_ERROR, "Parse error: the body is not JSON"));
    }
    Err((INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 request, notification or response"))
}

fn reply(replies: &Output, code: i64, message: &str) -> std::io::Result<()> {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}}).to_string();
    replies.send(format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judges_bodies_as_the_codec_would() {
        assert_eq!(judge(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#), Ok(Message::Other));
        assert_eq!(judge(br#"{"jsonrpc":"2.0","method":"exit"}"#), Ok(Message::Exit));
        assert_eq!(judge(br#"{"jsonrpc":"2.0","id":1,"result":null}"#), Ok(Message::Other));
        assert_eq!(judge(b"{bad}").map_err(|e| e.0), Err(PARSE_ERROR));
        assert_eq!(judge(br#"{"jsonrpc":"2.0""#).map_err(|e| e.0), Err(PARSE_ERROR));
        assert_eq!(judge(b"\xff\xfe").map_err(|e| e.0), Err(PARSE_ERROR));
        assert_eq!(judge(b"[1]").map_err(|e| e.0), Err(INVALID_REQUEST));
        assert_eq!(judge(br#"{"jsonrpc":"2.0","method":"x","id":{}}"#).map_err(|e| e.0), Err(INVALID_REQUEST));
        assert_eq!(judge(br#"{"jsonrpc":"1.0","method":"x"}"#).map_err(|e| e.0), Err(INVALID_REQUEST));
    }
}
