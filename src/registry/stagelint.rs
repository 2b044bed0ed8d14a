//! The `stagelint/` rules: codes, default severities and docs (`src/families/stagelint/docs/`).

use crate::registry::declare_rules;

declare_rules! { "stagelint", "../families/stagelint/docs/";
    IoError => Error;
    UnusedSuppression => Warning, fix = true;
    InvalidSuppression => Warning, fix = true;
    InvalidConfig => Error;
    SkillFrontmatter => Warning;
    ForeignSuppression => Hint, fix = true;
    SecretInSource => Warning;
    BaselineStale => Info, fix = true;
}
