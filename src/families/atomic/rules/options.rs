//! Keys of the option objects that `types.ts` does not define: the runtime drops them silently
//! (type checking is optional in atomic), so a typo such as `headles` just turns the option off.
//! The keys come from `atomic::keys`, which the editor's hover and completion read too.

use crate::diagnostic::Diagnostic;
use crate::families::atomic::UnknownOption;
use crate::families::atomic::keys::{self, Role};
use crate::families::atomic::model::{Object, Value, WorkflowFile};
use crate::util::{KeyGuess, did_you_mean_key};
use crate::workspace::SourceFile;

/// `seed`: the file is v0.5's, which lacks the keys later releases added (`Key::since`).
pub(super) fn check(
    file: &SourceFile,
    parsed: &WorkflowFile,
    agent: Option<&str>,
    seed: bool,
    out: &mut Vec<Diagnostic>,
) {
    if let Some(options) = parsed.chain.as_ref().and_then(|c| c.options.as_ref()) {
        unknown_keys(file, options, Role::Workflow, agent, seed, out);
        if let Some(Value::Array(inputs, _)) = options.get("inputs").map(|p| &p.value) {
            for input in inputs {
                if let Value::Object(input) = input {
                    unknown_keys(file, input, Role::Input, agent, seed, out);
                }
            }
        }
    }
    for [stage, client, session] in &parsed.stages {
        for (object, role) in [(stage, Role::Stage), (client, Role::Client), (session, Role::Session)] {
            if let Some(object) = object {
                unknown_keys(file, object, role, agent, seed, out);
            }
        }
    }
}

/// Reports the keys of `object` that `role` does not have (nothing when its keys are unknown).
pub(in crate::families::atomic::rules) fn unknown_keys(
    file: &SourceFile,
    object: &Object,
    role: Role,
    agent: Option<&str>,
    seed: bool,
    out: &mut Vec<Diagnostic>,
) {
    let Some(table) = keys::keys(role, agent).filter(|_| role.is_closed()) else { return };
    let known: Vec<&'static str> = table.iter().filter(|k| !seed || k.since.is_none()).map(|k| k.name).collect();
    let what = role.describe();
    for prop in &object.props {
        if known.contains(&prop.key.as_str()) {
            continue;
        }
        let guess = did_you_mean_key(&prop.key, known.iter().copied(), object.props.iter().map(|p| p.key.as_str()));
        let hint = match guess {
            Some(KeyGuess { name, taken: false }) => format!("; did you mean `{name}`?"),
            Some(KeyGuess { name, taken: true }) => format!(" (`{name}`, which it may mean, is set already)"),
            None => String::new(),
        };
        out.push(
            Diagnostic::new(
                UnknownOption,
                file.id,
                prop.key_span,
                if role.is_current() {
                    format!("`{}` is not one of the {what}: the types of `@bastani/workflows` reject it, and atomic does nothing with it{hint}", prop.key)
                } else {
                    format!("`{}` is not one of the {what}; atomic ignores it{hint}", prop.key)
                },
            )
            .with_help(if known.is_empty() {
                "this agent takes no keys here; pass `{}`".to_string()
            } else {
                format!("known keys: {}", known.join(", "))
            })
            .with_suggestion(prop.key_span, KeyGuess::rename(guess)),
        );
    }
}
