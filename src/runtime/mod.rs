//! The embedded runtime: the state-machine stage lifecycle, run against a recorded provider.

pub mod provider;
