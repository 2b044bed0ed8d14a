//! Inputs read by name that the CLI never sets (`src/commands/cli/workflow.ts`): a workflow with
//! declared inputs gets exactly those (a positional prompt is refused), one without gets only
//! `prompt`.

use crate::diagnostic::Diagnostic;
use crate::families::atomic::UndeclaredInput;
use crate::families::atomic::model::{Value, WorkflowFile};
use crate::util::did_you_mean;
use crate::workspace::SourceFile;

pub(super) fn check(file: &SourceFile, parsed: &WorkflowFile, out: &mut Vec<Diagnostic>) {
    let Some(chain) = &parsed.chain else { return };
    // The declared names, or `None` when they are not all literals.
    let (declared, at): (Option<Vec<&str>>, _) = match &chain.options {
        None => (if chain.has_options { None } else { Some(Vec::new()) }, None),
        Some(options) => match options.get("inputs") {
            None => (if options.open { None } else { Some(Vec::new()) }, None),
            Some(prop) => match &prop.value {
                Value::Array(items, at) => (
                    items
                        .iter()
                        .map(|item| match item {
                            Value::Object(input) => input.get("name").and_then(|p| p.value.as_str()),
                            _ => None,
                        })
                        .collect(),
                    Some(*at),
                ),
                _ => (None, None),
            },
        },
    };
    let Some(declared) = declared else { return };
    for read in &parsed.session.inputs {
        let name = read.name.as_str();
        let (message, candidates): (String, Vec<&str>) = if declared.is_empty() {
            if name == "prompt" {
                continue;
            }
            (
                format!(
                    "input `{name}` is never set: this workflow declares no inputs, so atomic passes only `prompt` (the positional prompt)"
                ),
                vec!["prompt"],
            )
        } else {
            if declared.contains(&name) {
                continue;
            }
            let why = if name == "prompt" {
                "a workflow with declared inputs refuses a positional prompt, so `prompt` is never set".to_string()
            } else {
                format!("atomic passes only the declared inputs ({})", declared.join(", "))
            };
            (format!("input `{name}` is not declared; {why}"), declared.clone())
        };
        let guess = did_you_mean(name, candidates.iter().copied());
        let hint = guess.map(|g| format!("; did you mean `{g}`?")).unwrap_or_default();
        let mut d = Diagnostic::new(UndeclaredInput, file.id, read.span, format!("{message}{hint}"))
            .with_help(format!("declare it in `defineWorkflow({{ inputs: [{{ name: \"{name}\", type: \"string\" }}] }})`, or read a declared one"));
        if let Some(at) = at {
            d = d.with_related(file.id, at, "the declared inputs");
        }
        out.push(d.with_suggestion(read.span, guess));
    }
}
