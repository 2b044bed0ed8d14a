//! What `run` returns against the declared `outputs` (`runs/foreground/executor-outputs.ts`;
//! `docs/workflows.md`, *Outputs*): an undeclared key fails the run, a missing required one too;
//! `ctx.exit({ outputs })` may leave keys out but not add any. And `ctx.inputs.x` for an input
//! the `inputs` map does not declare.

use crate::diagnostic::Diagnostic;
use crate::families::atomic::dialect::Judged;
use crate::families::atomic::model::current::{CallKind, Current, Return, SchemaKind, SchemaMap};
use crate::families::atomic::model::{Object, Value};
use crate::families::atomic::{MissingOutput, UndeclaredInput, UndeclaredOutput};
use crate::util::did_you_mean;
use crate::workspace::SourceFile;

pub(super) fn check(file: &SourceFile, current: &Current, judged: &Judged, out: &mut Vec<Diagnostic>) {
    for definition in &current.definitions {
        let Some(outputs) = definition.outputs.as_ref().filter(|m| m.not_map.is_none() && !m.open) else { continue };
        returns(file, current, outputs, definition.run.as_ref(), definition.call, out);
    }
    // 0.8 validates a builder's returns against its `.output(…)` calls the same way, from
    // 0.8.22 (before it a run returned whatever it liked).
    for builder in current.builders.iter().filter(|_| !judged.before_contracts()) {
        let outputs = builder.map("output");
        if !outputs.open {
            returns(file, current, &outputs, builder.run.as_ref(), builder.span, out);
        }
    }
    inputs(file, current, out);
}

/// What `run` returns (and `ctx.exit` gives, inside `within`) against `outputs`.
fn returns(
    file: &SourceFile,
    current: &Current,
    outputs: &SchemaMap,
    run: Option<&crate::families::atomic::model::current::RunFn>,
    within_span: crate::source::Span,
    out: &mut Vec<Diagnostic>,
) {
    {
        if let Some(run) = run {
            for ret in &run.returns {
                if let Return::Object(object) = ret {
                    undeclared(file, object, outputs, "returns", out);
                    missing(file, object, outputs, out);
                }
            }
            let required = required(outputs);
            if run.returns_nothing && run.is_function && !required.is_empty() {
                out.push(
                    Diagnostic::new(
                        MissingOutput,
                        file.id,
                        run.at,
                        format!(
                            "`run` returns nothing, but {}: the run fails with `missing output \"{}\"`",
                            match required.len() {
                                1 => format!("the output {} is required", quoted(&required)),
                                _ => format!("the outputs {} are required", quoted(&required)),
                            },
                            required[0]
                        ),
                    )
                    .with_related(file.id, outputs.span, "the declared outputs")
                    .with_help(
                        "return the declared outputs from `run`, or wrap the optional ones in `Type.Optional(…)`",
                    ),
                );
            }
        }
        let inside = |at: crate::source::Span| within_span.start <= at.start && at.end <= within_span.end;
        for call in current.calls.iter().filter(|c| c.kind == CallKind::Exit && inside(c.call)) {
            if let Some(Value::Object(given)) = call.options.as_ref().and_then(|o| o.get("outputs")).map(|p| &p.value) {
                undeclared(file, given, outputs, "exit", out);
            }
        }
    }
}

fn required(outputs: &SchemaMap) -> Vec<&str> {
    // A schema with a `default` is filled in; one that is no schema is another finding.
    outputs
        .entries
        .iter()
        .filter(|e| !e.optional && !e.default && !matches!(e.kind, SchemaKind::NotSchema(_)))
        .map(|e| e.key.as_str())
        .collect()
}

fn quoted(keys: &[&str]) -> String {
    keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
}

/// Keys of a returned object that `outputs` does not declare.
fn undeclared(file: &SourceFile, object: &Object, outputs: &SchemaMap, how: &str, out: &mut Vec<Diagnostic>) {
    let declared: Vec<&str> = outputs.entries.iter().map(|e| e.key.as_str()).collect();
    for prop in &object.props {
        if declared.contains(&prop.key.as_str()) {
            continue;
        }
        let guess = did_you_mean(&prop.key, declared.iter().copied());
        let hint = guess.map(|g| format!("; did you mean `{g}`?")).unwrap_or_default();
        let (failure, what) = if how == "returns" {
            ("returned undeclared output", format!("`run` returns `{}`", prop.key))
        } else {
            ("provided undeclared output", format!("`ctx.exit` is given the output `{}`", prop.key))
        };
        out.push(
            Diagnostic::new(
                UndeclaredOutput,
                file.id,
                prop.key_span,
                format!(
                    "{what}, which `outputs` does not declare: the run fails with `{failure} \"{}\"`{hint}",
                    prop.key
                ),
            )
            .with_related(file.id, outputs.span, "the declared outputs")
            .with_help(format!(
                "declare it in `outputs` (`{}: Type.…`; with 0.8's builder `.output(\"{}\", Type.…)`), or leave it out",
                prop.key, prop.key
            ))
            .with_suggestion(prop.key_span, guess),
        );
    }
}

/// Required outputs a returned object literal leaves out (or sets to `undefined`).
fn missing(file: &SourceFile, object: &Object, outputs: &SchemaMap, out: &mut Vec<Diagnostic>) {
    if object.open {
        return;
    }
    let given = |key: &str| {
        object.get(key).is_some_and(
            |p| !matches!(&p.value, Value::Other(at) if file.text.get(at.start..at.end) == Some("undefined")),
        )
    };
    let absent: Vec<&str> = required(outputs).into_iter().filter(|k| !given(k)).collect();
    if absent.is_empty() {
        return;
    }
    out.push(
        Diagnostic::new(
            MissingOutput,
            file.id,
            object.span,
            format!(
                "`run` returns an object without the required output{} {}: the run fails with `missing output \"{}\"`",
                if absent.len() == 1 { "" } else { "s" },
                quoted(&absent),
                absent[0]
            ),
        )
        .with_related(file.id, outputs.span, "the declared outputs")
        .with_help("return every required output, or wrap the ones that may be absent in `Type.Optional(…)`"),
    );
}

/// `ctx.inputs.x` for an `x` the definition around it does not declare.
fn inputs(file: &SourceFile, current: &Current, out: &mut Vec<Diagnostic>) {
    for read in &current.inputs {
        let inside = |at: crate::source::Span| at.start <= read.span.start && read.span.end <= at.end;
        let (declared, map_span): (Vec<String>, Option<crate::source::Span>) =
            match current.builders.iter().find(|b| inside(b.span)) {
                Some(builder) => {
                    let map = builder.map("input");
                    if map.open {
                        continue;
                    }
                    (map.entries.into_iter().map(|e| e.key).collect(), None)
                }
                None => {
                    let Some(definition) = current.definitions.iter().find(|d| inside(d.call)) else { continue };
                    match &definition.inputs {
                        Some(map) if map.not_map.is_none() && !map.open => {
                            (map.entries.iter().map(|e| e.key.clone()).collect(), Some(map.span))
                        }
                        None if definition.spec.as_ref().is_some_and(|s| !s.open) => (Vec::new(), None),
                        _ => continue,
                    }
                }
            };
        let declared: Vec<&str> = declared.iter().map(String::as_str).collect();
        if declared.contains(&read.name.as_str()) {
            continue;
        }
        let guess = did_you_mean(&read.name, declared.iter().copied());
        let hint = guess.map(|g| format!("; did you mean `{g}`?")).unwrap_or_default();
        let which = if declared.is_empty() {
            "the workflow declares no inputs".to_string()
        } else {
            format!("the inputs are {}", quoted(&declared))
        };
        let mut d = Diagnostic::new(
            UndeclaredInput,
            file.id,
            read.span,
            format!("input `{}` is not declared ({which}): atomic rejects undeclared inputs before `run` starts, so `ctx.inputs.{}` is always `undefined`{hint}", read.name, read.name),
        )
        .with_help(format!("declare it in `inputs`: `{}: Type.String({{ description: \"…\" }})`", read.name));
        if let Some(at) = map_span {
            d = d.with_related(file.id, at, "the declared inputs");
        }
        out.push(d.with_suggestion(read.span, guess));
    }
}
