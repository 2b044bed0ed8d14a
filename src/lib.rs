//! stagelint: a linter and language server for LLM agent-workflow definitions.
//!
//! Data flows one way: text → parsed, spanned model → workspace → rules → diagnostics →
//! renderer. The CLI and (later) the language server call the same [`check::check`].

pub mod baseline;
pub mod cassette;
pub mod check;
pub mod config;
pub mod diagnostic;
pub mod editor;
pub mod families;
pub mod fix;
pub mod ide;
pub mod init;
#[cfg(feature = "lsp")]
pub mod lsp;
pub mod registry;
pub mod render;
pub mod runtime;
pub mod select;
pub mod source;
pub mod template;
pub mod util;
pub mod workspace;

/// mimalloc for every build of the library (the binary, tests and benchmarks alike): a check
/// allocates a small string or node per YAML scalar and frees them from other threads, where
/// glibc's allocator spent a fifth of a 20,000-file check and kept more memory. Transparent huge
/// pages are off (`no_thp`): with them the small checks' peak RSS rose by half.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
