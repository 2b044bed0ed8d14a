//! Editor-neutral features on byte offsets: what is under the cursor, which fixes apply.
//! Plain data only; `lsp/` converts it to protocol types.

pub mod actions;
pub mod hover;
