//! 0.8's builder and the migration off it (`docs/workflows.md`, *Migrating from the
//! `defineWorkflow()` Builder API*): a builder chain where the pins admit 0.9, which removed it
//! with no shim (PR #1457), with the documented conversion as one fix per file; `Type` and the
//! other runtime names 0.9 no longer exports; `workflow({...})` where the pins are all 0.8; and
//! what 0.8's own `compile()` throws.

use crate::diagnostic::{Applicability, Diagnostic, Edit, Severity};
use crate::families::atomic::dialect::{Dialect, Judged, current_api};
use crate::families::atomic::model::current::{Builder, Current, ImportDecl};
use crate::families::atomic::{BuilderRemoved, IncompatibleSdk, MissingCompile, MissingRun, RemovedImport};
use crate::source::Span;
use crate::workspace::SourceFile;

use super::{pins, with_pin};

/// Runtime names `@bastani/workflows` stopped exporting in 0.9, and what to use instead.
const REMOVED: [(&str, &str); 3] = [
    ("Type", "import it from `typebox`: `import { Type } from \"typebox\";`"),
    ("defineWorkflow", "write the definition as `workflow({ … })`"),
    ("runWorkflow", "run a definition with the exported `run(definition, inputs)`"),
];

pub(super) fn check(file: &SourceFile, current: &Current, judged: &Judged, out: &mut Vec<Diagnostic>) {
    let (admits, requires) = current_api(judged.sdk.as_ref());
    if judged.dialect == Dialect::Builder {
        for builder in &current.builders {
            compile_rules(file, builder, out);
        }
        if admits && let Some(first) = current.builders.first() {
            removed_builder(file, current, first, judged, requires, out);
        }
        return;
    }
    if !admits {
        for definition in current.definitions.iter().take(1) {
            let d = Diagnostic::new(
                IncompatibleSdk,
                file.id,
                definition.callee,
                format!("`workflow({{…}})` arrived in atomic 0.9.0 (PR #1457), but {}: 0.8's `@bastani/workflows` has no `workflow` export, so the file fails to load", pins(judged)),
            )
            .with_help("upgrade atomic to 0.9 or later, or write the workflow with 0.8's `defineWorkflow(\"name\")…compile()` builder");
            out.push(with_pin(d, judged));
        }
        return;
    }
    removed_imports(file, current, judged, requires, out);
}

/// What 0.8's `compile()` and discovery refuse: no `.run(…)`, an exported chain never compiled.
fn compile_rules(file: &SourceFile, builder: &Builder, out: &mut Vec<Diagnostic>) {
    let compiles = builder.links.iter().any(|l| l.method == "compile");
    if builder.run.is_none() && compiles {
        out.push(
            Diagnostic::new(
                MissingRun,
                file.id,
                builder.define,
                "the builder has no `.run(…)`; `compile()` throws \"`.run(fn)` must be called before .compile()\"",
            )
            .with_help("add `.run(async (ctx) => { … })` before `.compile()`"),
        );
    }
    if !compiles && builder.run.is_some() {
        let end = builder.span.end;
        out.push(
            Diagnostic::new(
                MissingCompile,
                file.id,
                Span::empty(end),
                "the builder chain never calls `.compile()`: discovery gets a builder, not a branded definition, and rejects it (INVALID_DEFINITION)",
            )
            .with_related(file.id, builder.define, "the chain starts here")
            .with_fix("Append `.compile()`", Applicability::Safe, vec![Edit { span: Span::empty(end), replacement: ".compile()".into() }]),
        );
    }
}

/// The builder where the pins admit 0.9: one finding per file, with the whole migration.
fn removed_builder(
    file: &SourceFile,
    current: &Current,
    first: &Builder,
    judged: &Judged,
    requires: bool,
    out: &mut Vec<Diagnostic>,
) {
    let outcome = if requires { "the file fails to load" } else { "on 0.9 and later the file fails to load" };
    let mut d = Diagnostic::new(
        BuilderRemoved,
        file.id,
        first.define,
        format!(
            "`defineWorkflow(…)…compile()` is 0.8's builder, which atomic 0.9 removed with no shim (PR #1457), and {}: {outcome} (`defineWorkflow` is no longer exported, `.compile()` is a `TypeError`)",
            pins(judged)
        ),
    )
    .with_help("convert it to `export default workflow({ name, description, inputs: {…}, outputs: {…}, run })` with `Type` from `typebox` (`docs/workflows.md`, *Conversion checklist*)");
    if requires {
        d = d.with_severity(Severity::Error);
    }
    for other in current.builders.iter().skip(1) {
        d = d.with_related(file.id, other.define, "another builder, converted by the same fix");
    }
    if let Some((edits, safe)) = migration(file, current) {
        let applicability = if safe { Applicability::Safe } else { Applicability::Unsafe };
        d = d.with_fix("Convert to `workflow({ … })`", applicability, edits);
    }
    out.push(with_pin(d, judged));
}

/// The conversion checklist as edits: each chain becomes one object literal (`name`,
/// `description`, `inputs`, `outputs` (`{}` when there were none), `worktreeFromInputs`, `run`,
/// the callback's text kept byte for byte), `.compile()` goes, and the import takes `workflow`
/// from `@bastani/workflows` and `Type` from `typebox`. Safe unless a comment between the links
/// would be lost; `None` when a chain has a link the object form has no key for.
fn migration(file: &SourceFile, current: &Current) -> Option<(Vec<Edit>, bool)> {
    let text = file.text.as_str();
    let mut edits = Vec::new();
    let mut safe = true;
    for builder in &current.builders {
        let arg = |span: Span| text.get(span.start..span.end).unwrap_or("");
        let line_start = text[..builder.span.start].rfind('\n').map_or(0, |i| i + 1);
        let indent: String = text[line_start..].chars().take_while(|c| *c == ' ' || *c == '\t').collect();
        let inner = format!("{indent}  ");
        let mut name = builder.name_arg.map(arg);
        let mut description = None;
        let mut inputs = Vec::new();
        let mut outputs = Vec::new();
        let mut worktree = None;
        let mut run = None;
        for link in &builder.links {
            match (link.method.as_str(), link.args.as_slice()) {
                ("description", [a]) => description = Some(arg(*a)),
                ("input", [k, s]) => inputs.push((arg(*k), arg(*s))),
                ("output", [k, s]) => outputs.push((arg(*k), arg(*s))),
                ("worktreeFromInputs", [b]) => worktree = Some(arg(*b)),
                ("run", [f]) => run = Some(arg(*f)),
                ("compile", []) => {}
                _ => return None,
            }
        }
        let run = run?;
        let mut body = String::from("workflow({\n");
        if let Some(name) = name.take() {
            body.push_str(&format!("{inner}name: {name},\n"));
        }
        body.push_str(&format!("{inner}description: {},\n", description.unwrap_or("\"\"")));
        let map = |entries: &[(&str, &str)]| -> String {
            if entries.is_empty() {
                return "{}".to_string();
            }
            let mut out = String::from("{\n");
            for (key, schema) in entries {
                out.push_str(&format!("{inner}  {}: {schema},\n", object_key(key)));
            }
            out.push_str(&format!("{inner}}}"));
            out
        };
        if !inputs.is_empty() {
            body.push_str(&format!("{inner}inputs: {},\n", map(&inputs)));
        }
        body.push_str(&format!("{inner}outputs: {},\n", map(&outputs)));
        if let Some(worktree) = worktree {
            body.push_str(&format!("{inner}worktreeFromInputs: {worktree},\n"));
        }
        body.push_str(&format!("{inner}run: {run},\n{indent}}})"));
        safe &= !builder.loose_comments;
        edits.push(Edit { span: builder.span, replacement: body });
    }
    edits.extend(import_edits(text, current));
    Some((edits, safe))
}

/// A key written as a quoted string literal, unquoted when it is a plain identifier.
fn object_key(written: &str) -> String {
    let inner = written.trim_matches(['"', '\'']);
    let plain = written.len() == inner.len() + 2
        && inner.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if plain { inner.to_string() } else { written.to_string() }
}

/// The import of `@bastani/workflows` rewritten: `defineWorkflow` becomes `workflow`, `Type`
/// moves to a `typebox` import (unless one already brings it), the other names stay.
fn import_edits(text: &str, current: &Current) -> Vec<Edit> {
    let Some(import) = sdk_import(current) else { return Vec::new() };
    let mut names: Vec<String> = Vec::new();
    let mut moved_type = false;
    for s in &import.specifiers {
        let written = text.get(s.span.start..s.span.end).unwrap_or("").to_string();
        match s.imported.as_deref() {
            Some("defineWorkflow") if !s.is_type => names.push("workflow".into()),
            Some("Type") if !s.is_type => moved_type = true,
            Some(_) => names.push(written),
            // A default or namespace import: left as it is.
            None => return Vec::new(),
        }
    }
    if !names.iter().any(|n| n == "workflow") {
        names.insert(0, "workflow".into());
    }
    names.dedup();
    let has_typebox = current.local_of(|m| m == "typebox", "Type").is_some();
    let mut replacement = format!("import {{ {} }} from \"{}\";", names.join(", "), import.module);
    if moved_type && !has_typebox {
        replacement.push_str("\nimport { Type } from \"typebox\";");
    }
    vec![Edit { span: import.span, replacement }]
}

/// The (value) import of `@bastani/workflows`.
fn sdk_import(current: &Current) -> Option<&ImportDecl> {
    current
        .imports
        .iter()
        .find(|i| matches!(i.module.as_str(), "@bastani/workflows" | "@bastani/atomic/workflows") && !i.type_only)
}

/// `import { Type } from "@bastani/workflows"` and the other runtime names 0.9 dropped.
fn removed_imports(file: &SourceFile, current: &Current, judged: &Judged, requires: bool, out: &mut Vec<Diagnostic>) {
    let Some(import) = sdk_import(current) else { return };
    for specifier in import.specifiers.iter().filter(|s| !s.is_type) {
        let Some((name, instead)) = REMOVED.iter().find(|(n, _)| specifier.imported.as_deref() == Some(*n)) else {
            continue;
        };
        let used = format!("{}.", specifier.local);
        let called = format!("{}(", specifier.local);
        let is_used = file.text.contains(&used) || file.text.contains(&called);
        let what =
            if is_used { ", so the file fails where it uses it" } else { " (unused here, so nothing fails yet)" };
        let mut d = Diagnostic::new(
            RemovedImport,
            file.id,
            specifier.span,
            format!(
                "`@bastani/workflows` no longer exports `{name}` from 0.9 (PR #1457): the import is `undefined`{what}"
            ),
        )
        .with_help(instead.to_string());
        if requires && is_used {
            d = d.with_severity(Severity::Error);
        }
        if *name == "Type" {
            let edits = type_edits(file.text.as_str(), current, import);
            d = d.with_fix("Import `Type` from `typebox`", Applicability::Safe, edits);
        }
        out.push(with_pin(d, judged));
    }
}

/// Moves `Type` from the `@bastani/workflows` import to its own `typebox` import.
fn type_edits(text: &str, current: &Current, import: &ImportDecl) -> Vec<Edit> {
    let kept: Vec<&str> = import
        .specifiers
        .iter()
        .filter(|s| s.imported.as_deref() != Some("Type") || s.is_type)
        .map(|s| text.get(s.span.start..s.span.end).unwrap_or(""))
        .collect();
    let has_typebox = current.local_of(|m| m == "typebox", "Type").is_some();
    let mut replacement = if kept.is_empty() {
        String::new()
    } else {
        format!("import {{ {} }} from \"@bastani/workflows\";", kept.join(", "))
    };
    if !has_typebox {
        if !replacement.is_empty() {
            replacement.push('\n');
        }
        replacement.push_str("import { Type } from \"typebox\";");
    }
    vec![Edit { span: import.span, replacement }]
}
