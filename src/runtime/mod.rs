//! The embedded runtime: the state-machine stage lifecycle, run against a recorded provider.

pub mod emit;
pub mod import;
pub mod provider;
#[cfg(feature = "record")]
pub mod record;
pub mod turns;
pub mod wire;
