//! Template parsers with spans: stage bodies (`{{ctx.x}}` and `${ctx.x}`), C3L prompts, Last
//! Light prompts and its `until:` conditions.

pub mod c3l;
pub mod lastlight;
pub mod markdown;
pub mod secrets;
pub mod stage;
pub mod until;
