//! Fuzz target `c3l`: its body is `c3l_target` in `tests/fuzz_entry/mod.rs`, which
//! `tests/fuzz_regressions.rs` also runs on every saved input.

#![no_main]

#[path = "../../tests/fuzz_entry/mod.rs"]
mod entry;

libfuzzer_sys::fuzz_target!(|data: &[u8]| entry::c3l_target(data));
