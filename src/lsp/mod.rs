//! `stagelint lsp`: protocol glue over the same analysis as `stagelint check`. Nothing here
//! decides what is wrong; it keeps documents, schedules analysis and converts results.

mod analysis;
pub mod convert;
pub mod documents;
mod dry_run;
mod server;

/// Serves LSP over stdin/stdout until the client exits.
pub fn run() -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(serve(tokio::io::stdin(), tokio::io::stdout()));
    Ok(())
}

/// Serves LSP over any byte streams (stdio, or a socket pair in tests) until the client exits.
/// Must run inside a tokio runtime.
pub async fn serve(input: impl tokio::io::AsyncRead + Unpin, output: impl tokio::io::AsyncWrite) {
    let (service, socket) = tower_lsp_server::LspService::new(server::Backend::new);
    // One handler at a time: edits must apply in the order they were sent.
    tower_lsp_server::Server::new(input, output, socket).concurrency_level(1).serve(service).await;
}
