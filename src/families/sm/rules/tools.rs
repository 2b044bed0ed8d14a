//! Tool names: `allowedTools` against the live tool set, the completion channel's name.

use crate::diagnostic::Diagnostic;
use crate::families::sm::model::StageDoc;
use crate::families::sm::{CompletionToolCollision, CompletionToolNotMentioned, UnknownTool};
use crate::source::Node;
use crate::util::{did_you_mean, did_you_mean_styled, letters_only};

pub(super) fn check(stage: &StageDoc, out: &mut Vec<Diagnostic>) {
    let file = stage.id();
    let tools = &stage.config().tools;
    let completion = stage.completion_tool();
    if let Some(items) = stage.field("allowedTools").and_then(|n| n.as_seq()) {
        // The tools the other entries name (as written, or their one guess): their style tells
        // `WebFetch` from `web-fetch` for a `webfetch`.
        let named: Vec<&str> = items
            .iter()
            .filter_map(Node::as_str)
            .filter_map(|n| if tools.contains(n) { Some(n) } else { did_you_mean(n, tools.iter().map(String::as_str)) })
            .collect();
        for item in items {
            let Some(name) = item.as_str() else { continue };
            if tools.contains(name) {
                continue;
            }
            if completion.is_some_and(|(c, _)| c == name) {
                out.push(Diagnostic::new(
                    UnknownTool,
                    file,
                    item.span,
                    format!("`{name}` is this stage's completion tool, not a registered tool; remove it from `allowedTools` (the completion channel is always injected)"),
                ));
                continue;
            }
            let neighbours: Vec<&str> =
                named.iter().copied().filter(|n| letters_only(n) != letters_only(name)).collect();
            let suggestion = did_you_mean_styled(name, tools.iter().map(String::as_str), &neighbours);
            let message = match &suggestion {
                Some(s) => format!("`{name}` is not in the live tool set; did you mean {}?", s.shown()),
                None => format!("`{name}` is not in the live tool set; the stage fails Init on unknown tool names"),
            };
            let mut diagnostic = Diagnostic::new(UnknownTool, file, item.span, message).with_help(
                "register extra tools (MCP servers, plugins) under `[tools] registered` or `extra` in stagelint.toml",
            );
            if let Some(guess) = suggestion {
                let s = guess.first();
                let replacement = if item.span.len() == name.len() { s.to_string() } else { format!("\"{s}\"") };
                diagnostic = diagnostic.with_guess(item.span, replacement, &guess);
            }
            out.push(diagnostic);
        }
    }
    let Some((name, span)) = completion else {
        return;
    };
    if tools.contains(name) {
        out.push(Diagnostic::new(
            CompletionToolCollision,
            file,
            span,
            format!("completionTool `{name}` has the name of a registered tool; core rejects the stage at Init. Pick a stage-local name such as `submit_{}`", stage.stage_id().map_or("result".to_string(), |(id, _)| id.replace('-', "_"))),
        ));
        // The name has to change anyway: a hint to mention this one would be a second finding
        // about the same defect.
        return;
    }
    if !stage.body().contains(name) {
        out.push(Diagnostic::new(
            CompletionToolNotMentioned,
            file,
            span,
            format!("the body never mentions `{name}`; tell the model to call it when it is done, and with what"),
        ));
    }
}
