//! The declared `inputs`, as `compile()` validates them (`validateWorkflowInput`).

use std::collections::HashMap;

use crate::diagnostic::Diagnostic;
use crate::families::atomic::dialect::Dialect;
use crate::families::atomic::model::{Value, WorkflowFile};
use crate::families::atomic::{
    DuplicateInput, EnumDefaultNotInValues, EnumWithoutValues, InvalidInputName, ReservedInputName,
};

/// Input names 0.6 and 0.7 refuse: they collide with the `atomic workflow` command's flags and
/// subcommands (`RESERVED_INPUT_NAMES` of `define-workflow.ts`).
const RESERVED: [&str; 8] = ["name", "agent", "detach", "list", "help", "version", "session", "status"];
use crate::source::Span;
use crate::workspace::SourceFile;

pub(super) fn check(file: &SourceFile, parsed: &WorkflowFile, dialect: Dialect, out: &mut Vec<Diagnostic>) {
    let id = file.id;
    let Some(options) = parsed.chain.as_ref().and_then(|c| c.options.as_ref()) else { return };
    let Some(Value::Array(inputs, _)) = options.get("inputs").map(|p| &p.value) else { return };
    let mut seen: HashMap<&str, Span> = HashMap::new();
    for input in inputs {
        let Value::Object(input) = input else { continue };
        let name = input.get("name").and_then(|p| p.value.as_str().map(|n| (n, p.value.span())));
        if let Some((name, at)) = name {
            if !is_input_name(name) {
                let why = if name.trim().is_empty() { "is empty" } else { "is not a valid `--flag` name" };
                out.push(
                    Diagnostic::new(
                        InvalidInputName,
                        id,
                        at,
                        format!("input name \"{name}\" {why}; `compile()` throws"),
                    )
                    .with_help("start with a letter and use only letters, digits, `_` and `-` (it becomes `--<name>`)"),
                );
            } else if dialect == Dialect::Sdk && RESERVED.contains(&name) {
                out.push(
                    Diagnostic::new(
                        ReservedInputName,
                        id,
                        at,
                        format!("input name \"{name}\" is reserved by the `atomic workflow` command (its `--{name}` flag or subcommand); from 0.6 `defineWorkflow` throws"),
                    )
                    .with_help(format!("rename the input (reserved: {})", RESERVED.join(", "))),
                );
            } else if let Some(first) = seen.get(name) {
                out.push(
                    Diagnostic::new(
                        DuplicateInput,
                        id,
                        at,
                        format!("input \"{name}\" is declared twice; `compile()` throws \"duplicate input name\""),
                    )
                    .with_related(id, *first, "first declared here")
                    .with_help("rename or remove one of them"),
                );
            } else {
                seen.insert(name, at);
            }
        }
        let Some(kind) = input.get("type").filter(|p| p.value.as_str() == Some("enum")) else { continue };
        let values = input.get("values");
        match values.map(|p| &p.value) {
            None if !input.open => out.push(
                Diagnostic::new(
                    EnumWithoutValues,
                    id,
                    kind.value.span(),
                    "an enum input without `values`; `compile()` throws \"…is an enum but declares no `values`\"",
                )
                .with_help("add `values: [\"a\", \"b\"]`"),
            ),
            Some(Value::Array(items, at)) if items.is_empty() => out.push(
                Diagnostic::new(
                    EnumWithoutValues,
                    id,
                    *at,
                    "an enum input with empty `values`; `compile()` throws \"…is an enum but declares no `values`\"",
                )
                .with_help("list the allowed values"),
            ),
            Some(Value::Array(items, at)) => {
                let literals: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
                let default = input.get("default").and_then(|p| p.value.as_str().map(|d| (d, p.value.span())));
                if let (Some(literals), Some((default, default_at))) = (literals, default)
                    && !literals.contains(&default)
                {
                    out.push(
                        Diagnostic::new(
                            EnumDefaultNotInValues,
                            id,
                            default_at,
                            format!("default \"{default}\" is not one of the enum's `values`; `compile()` throws"),
                        )
                        .with_related(id, *at, "the allowed values")
                        .with_help(format!("use one of: {}", literals.join(", "))),
                    );
                }
            }
            _ => {}
        }
    }
}

/// `^[a-zA-Z][a-zA-Z0-9_-]*$`.
fn is_input_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
