//! Template parsers with spans: stage bodies (`{{ctx.x}}` and `${ctx.x}`).

pub mod c3l;
pub mod stage;
