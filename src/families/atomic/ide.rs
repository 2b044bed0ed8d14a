//! Editor features for atomic workflows.

mod locate;
