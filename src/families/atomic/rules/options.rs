//! Keys of the option objects that `types.ts` does not define: the runtime drops them silently
//! (type checking is optional in atomic), so a typo such as `headles` just turns the option off.

use crate::diagnostic::Diagnostic;
use crate::families::atomic::UnknownOption;
use crate::families::atomic::model::{Object, Value, WorkflowFile};
use crate::util::{KeyGuess, did_you_mean_key};
use crate::workspace::SourceFile;

/// `WorkflowOptions`.
const WORKFLOW: &[&str] = &["name", "description", "inputs", "minSDKVersion"];
/// `WorkflowInput`.
const INPUT: &[&str] = &["name", "type", "required", "description", "placeholder", "default", "values"];
/// `SessionRunOptions`, the first argument of `ctx.stage`.
const STAGE: &[&str] = &["name", "description", "headless"];
/// `ClientOptionsMap` and `SessionOptionsMap` (`types.ts`) by agent: the second and third
/// arguments of `ctx.stage`. Copilot's are the Copilot SDK's own types, not checked here.
const CLIENT: &[(&str, &[&str])] =
    &[("claude", &["chatFlags", "readyTimeoutMs"]), ("opencode", &["directory", "experimental_workspaceID"])];
const SESSION: &[(&str, &[&str])] = &[("claude", &[]), ("opencode", &["parentID", "title", "workspaceID"])];

pub(super) fn check(file: &SourceFile, parsed: &WorkflowFile, agent: Option<&str>, out: &mut Vec<Diagnostic>) {
    if let Some(options) = parsed.chain.as_ref().and_then(|c| c.options.as_ref()) {
        unknown_keys(file, options, WORKFLOW, "workflow options (`defineWorkflow`)", out);
        if let Some(Value::Array(inputs, _)) = options.get("inputs").map(|p| &p.value) {
            for input in inputs {
                if let Value::Object(input) = input {
                    unknown_keys(file, input, INPUT, "input fields", out);
                }
            }
        }
    }
    let by_agent = |table: &[(&str, &'static [&'static str])]| {
        table.iter().find(|(a, _)| Some(*a) == agent).map(|(_, keys)| *keys)
    };
    for [stage, client, session] in &parsed.stages {
        if let Some(stage) = stage {
            unknown_keys(file, stage, STAGE, "stage options (`ctx.stage`'s first argument)", out);
        }
        if let (Some(client), Some(known)) = (client, by_agent(CLIENT)) {
            unknown_keys(file, client, known, "client options (`ctx.stage`'s second argument)", out);
        }
        if let (Some(session), Some(known)) = (session, by_agent(SESSION)) {
            unknown_keys(file, session, known, "session options (`ctx.stage`'s third argument)", out);
        }
    }
}

fn unknown_keys(file: &SourceFile, object: &Object, known: &[&'static str], what: &str, out: &mut Vec<Diagnostic>) {
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
                format!("`{}` is not one of the {what}; atomic ignores it{hint}", prop.key),
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
