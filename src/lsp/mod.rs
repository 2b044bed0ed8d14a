//! `stagelint lsp`: protocol glue over the same analysis as `stagelint check`. Nothing here
//! decides what is wrong; it keeps documents, schedules analysis and converts results.

mod analysis;
pub(crate) mod convert;
pub(crate) mod documents;
mod dry_run;
mod framing;
mod preview;
pub(crate) mod rule_docs;
mod server;
mod state;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Serves LSP over stdin/stdout until the client exits. Returns whether the client asked for a
/// `shutdown` first: the process exits with 0 then, else with 1 (as the protocol says for `exit`
/// without `shutdown`, and for a client that just went away).
pub fn run() -> std::io::Result<Ended> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let ended = runtime.block_on(serve_until_unwritable(tokio::io::stdin(), tokio::io::stdout()));
    // A read of stdin may still be blocked on its thread; do not wait for it.
    runtime.shutdown_background();
    Ok(ended)
}

/// How a server on stdio ended.
#[derive(Debug)]
pub enum Ended {
    /// The client sent `exit` or went away; `clean` when `shutdown` came first.
    Exited { clean: bool },
    /// Its output could not be written (a closed pipe: the client is gone): the server stops
    /// at once instead of reading requests it can never answer.
    Unwritable(std::io::Error),
}

/// An LSP position as `(line, character)`.
#[doc(hidden)]
pub type LineCharacter = (u32, u32);

/// For the fuzz targets and their regression tests (`tests/fuzz_entry`): `offset` as an LSP
/// position in each encoding, for a text read from disk and one the client sent (a byte order
/// mark hidden or counted), the offset that position reads back as, and that offset's position.
#[doc(hidden)]
pub fn position_round_trip(
    text: &str,
    lines: &crate::source::LineIndex,
    offset: usize,
) -> [(LineCharacter, usize, LineCharacter); 4] {
    use convert::{Columns, Encoding};
    let all = [Encoding::Utf8, Encoding::Utf16];
    [Columns::read(all[0]), Columns::read(all[1]), Columns::sent(all[0]), Columns::sent(all[1])].map(|columns| {
        let position = convert::position(text, lines, offset, columns);
        let back = convert::offset(text, lines, position, columns);
        let again = convert::position(text, lines, back, columns);
        ((position.line, position.character), back, (again.line, again.character))
    })
}

/// Serves LSP over any byte streams (stdio, or a socket pair in tests) until the client exits;
/// returns whether `shutdown` was received. Must run inside a tokio runtime.
pub async fn serve(input: impl tokio::io::AsyncRead + Unpin, output: impl tokio::io::AsyncWrite) -> bool {
    match serve_until_unwritable(input, output).await {
        Ended::Exited { clean } => clean,
        Ended::Unwritable(_) => false,
    }
}

/// [`serve`], saying whether it stopped because its output could not be written.
async fn serve_until_unwritable(input: impl tokio::io::AsyncRead + Unpin, output: impl tokio::io::AsyncWrite) -> Ended {
    let shut_down = Arc::new(AtomicBool::new(false));
    let flag = shut_down.clone();
    let (service, socket) = tower_lsp_server::LspService::build(move |client| server::Backend::new(client, flag))
        .custom_method(server::IDLE, server::Backend::idle)
        .finish();
    let (out, queue) = framing::Output::new();
    // Frames reach the server through this pipe once the filter has checked them.
    let (to_server, from_filter) = tokio::io::duplex(64 * 1024);
    let run = async {
        let filter = std::pin::pin!(framing::filter(input, to_server, out.clone_sender()));
        // One handler at a time: edits must apply in the order they were sent.
        let server = tower_lsp_server::Server::new(from_filter, out, socket).concurrency_level(1);
        let mut server = std::pin::pin!(server.serve(service));
        tokio::select! {
            () = &mut server => {}
            // `exit`, or the input ended. The server stops reading then, but a handler still
            // awaiting the client's answer to a request would keep it from ending.
            () = filter => {
                let _ = tokio::time::timeout(std::time::Duration::from_secs(1), server).await;
            }
        }
    };
    let run = std::pin::pin!(run);
    let mut writer = std::pin::pin!(framing::write_out(queue, output));
    let unwritable = tokio::select! {
        // What the server queued before it ended is still written.
        () = run => writer.await,
        // A failed write ends the server; the writer only returns early when one failed.
        failed = &mut writer => failed,
    };
    match unwritable {
        Some(error) => Ended::Unwritable(error),
        None => Ended::Exited { clean: shut_down.load(Ordering::SeqCst) },
    }
}
