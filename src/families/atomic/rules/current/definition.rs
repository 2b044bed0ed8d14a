//! The `workflow({...})` spec as `authoring/workflow.ts` validates it when the file loads, and
//! as *The `workflow()` Definition* of `docs/workflows.md` describes it: `description` and
//! `outputs` required, `inputs`/`outputs` schema maps, `run` a function, a non-empty name,
//! `worktreeFromInputs` naming declared inputs, the option keys and their literal values.

use crate::diagnostic::{Applicability, Diagnostic, Edit};
use crate::families::atomic::dialect::Judged;
use crate::families::atomic::keys::Role;
use crate::families::atomic::model::current::{Current, Definition, SchemaKind, SchemaMap};
use crate::families::atomic::model::{Object, Value};
use crate::families::atomic::{
    EmptyWorkflowName, MissingDescription, MissingOutputs, MissingRun, RunNotFunction, SchemaMapShape, WorktreeBinding,
};
use crate::source::Span;
use crate::util::did_you_mean;
use crate::workspace::SourceFile;

use super::options::{keys_and_values, nested};

pub(super) fn check(file: &SourceFile, current: &Current, judged: &Judged, out: &mut Vec<Diagnostic>) {
    // Before 0.8.22 the builder took v0.5's descriptors (`define-workflow.ts` at v0.8.21).
    for builder in current.builders.iter().filter(|_| !judged.before_contracts()) {
        schema_map(file, &builder.map("input"), "inputs", out);
        schema_map(file, &builder.map("output"), "outputs", out);
    }
    for definition in &current.definitions {
        let Some(spec) = &definition.spec else { continue };
        keys_and_values(file, spec, Role::Spec, out);
        nested(file, spec, "budget", Role::Budget, out);
        nested(file, spec, "worktreeFromInputs", Role::Worktree, out);
        name(file, spec, out);
        description(file, spec, out);
        outputs(file, definition, spec, out);
        for map in [&definition.inputs, &definition.outputs].into_iter().flatten() {
            schema_map(file, map, map_name(definition, map), out);
        }
        run(file, definition, spec, out);
        worktree(file, definition, spec, out);
    }
}

fn map_name(definition: &Definition, map: &SchemaMap) -> &'static str {
    match &definition.inputs {
        Some(inputs) if inputs.span == map.span => "inputs",
        _ => "outputs",
    }
}

/// `name` blank, or made only of characters the lookup normalization drops.
fn name(file: &SourceFile, spec: &Object, out: &mut Vec<Diagnostic>) {
    let Some(Value::Str(name, at)) = spec.get("name").map(|p| &p.value) else { return };
    let normalized = name.chars().any(|c| c.is_alphanumeric());
    let message = if name.trim().is_empty() {
        "the workflow `name` is blank; `workflow()` throws \"workflow: name must be a non-empty string\""
    } else if !normalized {
        "the workflow `name` has no letter or digit, so its normalized name is empty; `workflow()` throws \"workflow: normalized name must be a non-empty string\""
    } else {
        return;
    };
    out.push(
        Diagnostic::new(EmptyWorkflowName, file.id, *at, message)
            .with_help("name the workflow with letters or digits, or drop `name` to take the file's name"),
    );
}

/// `description` must be a string.
fn description(file: &SourceFile, spec: &Object, out: &mut Vec<Diagnostic>) {
    let (at, what) = match spec.get("description") {
        None if !spec.open && !spec.has_or_misspells("description") => (spec.span, "has no `description`".to_string()),
        Some(prop) => match &prop.value {
            Value::Num(_, at) => (*at, "gives `description` a number".to_string()),
            Value::Bool(_, at) => (*at, "gives `description` a boolean".to_string()),
            Value::Array(_, at) => (*at, "gives `description` an array".to_string()),
            Value::Object(o) => (o.span, "gives `description` an object".to_string()),
            _ => return,
        },
        None => return,
    };
    let at = if at == spec.span { Span::new(spec.span.start, spec.span.start + 1) } else { at };
    out.push(
        Diagnostic::new(
            MissingDescription,
            file.id,
            at,
            format!("the workflow spec {what}; `workflow()` throws \"workflow: description must be a string\" and discovery reports the file as failing to import"),
        )
        .with_help("add `description: \"<what the workflow does>\"`: listings show it"),
    );
}

/// `outputs` is required, even when it is `{}`.
fn outputs(file: &SourceFile, definition: &Definition, spec: &Object, out: &mut Vec<Diagnostic>) {
    if definition.outputs.is_some() || spec.open || spec.has_or_misspells("outputs") {
        return;
    }
    let text = file.text.as_str();
    // The new key goes before `run` (or before the closing brace), indented like its siblings.
    let before = spec.get("run").map(|p| p.key_span.start);
    let d = Diagnostic::new(
        MissingOutputs,
        file.id,
        Span::new(spec.span.start, spec.span.start + 1),
        "the workflow spec has no `outputs`; it is required (also when empty) and `workflow()` throws \"workflow: outputs must be a schema map\"",
    )
    .with_help("declare what `run` returns, or `outputs: {}` when it returns nothing");
    let edit = match before {
        Some(at) => {
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let indent = &text[line_start..at];
            let inline = !indent.chars().all(|c| c == ' ' || c == '\t');
            let sep = if inline { " ".to_string() } else { format!("\n{indent}") };
            Edit { span: Span::empty(at), replacement: format!("outputs: {{}},{sep}") }
        }
        None => {
            let end = spec.span.end.saturating_sub(1);
            let inside = text[spec.span.start + 1..end].trim_end();
            let comma = if inside.is_empty() || inside.ends_with(',') { "" } else { "," };
            let at = spec.span.start + 1 + inside.len();
            Edit { span: Span::new(at, at), replacement: format!("{comma} outputs: {{}}") }
        }
    };
    out.push(d.with_fix("Add `outputs: {}`", Applicability::Safe, vec![edit]));
}

/// `inputs`/`outputs` must be maps of schemas.
fn schema_map(file: &SourceFile, map: &SchemaMap, which: &str, out: &mut Vec<Diagnostic>) {
    if let Some(what) = map.not_map {
        let help = if what == "an array" && which == "inputs" {
            "0.9 declares inputs as a map from name to TypeBox schema: `inputs: { prompt: Type.String({ description: \"…\" }) }` (v0.5's `[{ name, type }]` list is gone)"
        } else {
            "write an object literal mapping each key to a TypeBox schema: `{ summary: Type.String() }`"
        };
        out.push(
            Diagnostic::new(
                SchemaMapShape,
                file.id,
                map.span,
                format!("`{which}` is {what}, not a schema map; `workflow()` throws \"workflow: {which} must be a schema map\""),
            )
            .with_help(help),
        );
        return;
    }
    for entry in &map.entries {
        let SchemaKind::NotSchema(what) = entry.kind else { continue };
        let written = file.text.get(entry.value.start..entry.value.end).unwrap_or("");
        let guess = match written.trim_matches(['"', '\'', '`']) {
            "string" | "text" => "Type.String()",
            "number" => "Type.Number()",
            "integer" => "Type.Integer()",
            "boolean" => "Type.Boolean()",
            _ => "Type.String()",
        };
        out.push(
            Diagnostic::new(
                SchemaMapShape,
                file.id,
                entry.value,
                format!("`{which}.{}` is {what}, not a TypeBox schema; validating it fails (inputs before `run` starts, outputs when it returns)", entry.key),
            )
            .with_help(format!("write a schema, e.g. `{}: {guess}` with `Type` from `typebox`", entry.key)),
        );
    }
}

/// `run` must be a function.
fn run(file: &SourceFile, definition: &Definition, spec: &Object, out: &mut Vec<Diagnostic>) {
    match &definition.run {
        None if !spec.open && !spec.has_or_misspells("run") => out.push(
            Diagnostic::new(
                MissingRun,
                file.id,
                Span::new(spec.span.start, spec.span.start + 1),
                "the workflow spec has no `run`; `workflow()` throws \"workflow: run must be a function\"",
            )
            .with_help("add `run: async (ctx) => { … return { … }; }`"),
        ),
        Some(run) => {
            if let Some((at, what)) = run.not_function {
                out.push(
                    Diagnostic::new(
                        RunNotFunction,
                        file.id,
                        at,
                        format!("`run` is {what}; `workflow()` throws \"workflow: run must be a function\""),
                    )
                    .with_help("give `run` the workflow's body: `run: async (ctx) => { … }`"),
                );
            }
        }
        None => {}
    }
}

/// `worktreeFromInputs` names inputs, and needs `gitWorktreeDir`
/// (`runs/foreground/executor-inputs.ts` `resolveInputRuntimeDefaults`).
fn worktree(file: &SourceFile, definition: &Definition, spec: &Object, out: &mut Vec<Diagnostic>) {
    let Some(Value::Object(binding)) = spec.get("worktreeFromInputs").map(|p| &p.value) else { return };
    if binding.get("gitWorktreeDir").is_none() && !binding.open {
        out.push(
            Diagnostic::new(
                WorktreeBinding,
                file.id,
                binding.span,
                "`worktreeFromInputs` has no `gitWorktreeDir`: atomic reads `baseBranch` only with it, so this binding does nothing",
            )
            .with_help("add `gitWorktreeDir: \"<name of the input holding the worktree path>\"`"),
        );
    }
    let Some(inputs) = definition.inputs.as_ref().filter(|m| m.not_map.is_none() && !m.open) else {
        if definition.inputs.is_none() && !spec.open {
            declared_names(file, binding, &[], None, out);
        }
        return;
    };
    let names: Vec<&str> = inputs.entries.iter().map(|e| e.key.as_str()).collect();
    declared_names(file, binding, &names, Some(inputs.span), out);
}

fn declared_names(file: &SourceFile, binding: &Object, names: &[&str], at: Option<Span>, out: &mut Vec<Diagnostic>) {
    for key in ["gitWorktreeDir", "baseBranch"] {
        let Some(Value::Str(name, span)) = binding.get(key).map(|p| &p.value) else { continue };
        if names.contains(&name.as_str()) {
            continue;
        }
        let guess = did_you_mean(name, names.iter().copied());
        let hint = guess.map(|g| format!("; did you mean `{g}`?")).unwrap_or_default();
        let declared = if names.is_empty() {
            "the workflow declares no inputs".to_string()
        } else {
            format!("the inputs are {}", names.join(", "))
        };
        let mut d = Diagnostic::new(
            WorktreeBinding,
            file.id,
            *span,
            format!("`worktreeFromInputs.{key}` names the input `{name}`, which is not declared ({declared}): its value is always missing, so no stage gets the worktree{hint}"),
        )
        .with_help(format!("name a declared input (the value is an input's name, not a path), or declare `{name}` in `inputs`"));
        if let Some(at) = at {
            d = d.with_related(file.id, at, "the declared inputs");
        }
        let inner = Span::new(span.start + 1, span.end.saturating_sub(1).max(span.start + 1));
        out.push(d.with_suggestion(inner, guess));
    }
}
