//! Editor features for atomic workflows: hover on option keys, inputs, stage and agent names
//! (and the `ctx` primitives of `@bastani/workflows`); completion of keys by the object's role,
//! enum values, agent names, input names after `ctx.inputs.` and stage names in
//! `transcript("`; definitions, references and rename of inputs and stage names; agent names →
//! agent files; the outline. Both dialect families: v0.5–0.7 and `@bastani/workflows`.
//!
//! Everything reads the text through `locate` (where the cursor is) and `facts` (the names of
//! the file), never oxc's AST, so it also works while the file does not parse. The option
//! keys and their docs come from `atomic::keys`, the table `atomic/UnknownOption` reads.

mod agents;
mod complete;
mod facts;
mod hover;
mod locate;
mod navigate;

use crate::diagnostic::FileId;
use crate::families::atomic::keys::Role;
use crate::workspace::{FileKind, SourceFile, Workspace, atomic};
use facts::is_stage;
use locate::{Frame, Kind, Spot};

pub(super) use complete::completions;
pub(super) use hover::hover;
pub(super) use navigate::{definitions, links, prepare_rename, references, rename, symbols};

/// An atomic workflow file, or `None`: the family answers nothing for other files.
fn workflow(workspace: &Workspace, id: FileId) -> Option<&SourceFile> {
    Some(workspace.file(id)).filter(|f| f.kind == FileKind::AtomicWorkflow)
}

/// The file's agent: its directory's, as the runtime takes it, else `.for<"x">()` (0.6 and
/// later: `.for("x")`). `@bastani/workflows` files have none.
fn agent_of(file: &SourceFile) -> Option<&str> {
    if facts::is_current(&file.text) {
        return None;
    }
    if let Some((_, agent)) = atomic::layout(&file.path) {
        return Some(agent);
    }
    let at = file
        .text
        .find(".for<")
        .map(|i| i + ".for<".len())
        .or_else(|| file.text.find(".for(").map(|i| i + ".for(".len()))?;
    let rest = file.text[at..].trim_start().strip_prefix(['"', '\''])?;
    let name = &rest[..rest.find(['"', '\''])?];
    atomic::AGENTS.contains(&name).then_some(name)
}

/// The role of the object at `spot`'s path, in its call; `current`: the file is written
/// against `@bastani/workflows`.
fn role_of(spot: &Spot, current: bool) -> Option<Role> {
    let call = spot.call.as_ref()?;
    let path: Vec<&str> = spot.path.iter().map(String::as_str).collect();
    if current {
        let method = call.callee.rsplit('.').next().unwrap_or("");
        let receiver = call.callee.contains('.');
        return match (receiver, method, call.arg, path.as_slice()) {
            (false, "workflow", 0, []) => Some(Role::Spec),
            (false, "workflow", 0, ["budget"]) | (true, "workflow", 1, ["budget"]) => Some(Role::Budget),
            (false, "workflow", 0, ["worktreeFromInputs"]) => Some(Role::Worktree),
            (true, "task", 1, []) => Some(Role::Task),
            (true, "stage", 1, []) => Some(Role::StageOptions),
            (true, "chain" | "parallel", 0, ["[]"]) => Some(Role::Step),
            (true, "chain", 1, []) => Some(Role::Chain),
            (true, "parallel", 1, []) => Some(Role::Parallel),
            (true, "workflow", 1, []) => Some(Role::Child),
            (true, "exit", 0, []) => Some(Role::Exit),
            (true, "tool", 3, []) => Some(Role::Tool),
            _ => None,
        };
    }
    match (call.arg, path.as_slice()) {
        (0, []) if call.callee == "defineWorkflow" => Some(Role::Workflow),
        (0, ["inputs", "[]"]) if call.callee == "defineWorkflow" => Some(Role::Input),
        (arg @ 0..=2, []) if is_stage(&call.callee) => Some([Role::Stage, Role::Client, Role::Session][arg]),
        (1, rest) if call.callee.ends_with("session.query") => match rest {
            [] => Some(Role::Query),
            ["thinking"] => Some(Role::QueryThinking),
            ["outputFormat"] => Some(Role::QueryOutputFormat),
            _ => None,
        },
        _ => None,
    }
}

/// Whether the innermost `ctx.stage` call around `frames` has `headless: true` in its options,
/// read from its first argument's text; `None` outside a stage.
fn headless_stage(text: &str, frames: &[Frame]) -> Option<bool> {
    let stage =
        frames.iter().rev().find(|f| f.kind == Kind::Call && f.callee.as_ref().is_some_and(|c| is_stage(&c.0)))?;
    let start = *stage.starts.first()?;
    let end = stage.starts.get(1).map_or(text.len(), |s| s - 1);
    let mut tokens: Vec<String> = Vec::new();
    locate::tokens(&text[start..end], &mut |token, _| {
        let span = token.span();
        tokens.push(text[start + span.start..start + span.end].to_string());
    });
    Some(tokens.windows(3).any(|w| w[0] == "headless" && w[1] == ":" && w[2] == "true"))
}

/// Why the keys of `role` do nothing at `frames`, if they do nothing there: atomic's headless
/// Claude and OpenCode stages never read client options, and an interactive Claude stage's
/// `s.session.query()` ignores its options.
fn ignored_here(text: &str, frames: &[Frame], role: Role, agent: Option<&str>) -> Option<&'static str> {
    let headless = headless_stage(text, frames)?;
    match role {
        Role::Client if headless && matches!(agent, Some("claude" | "opencode")) => Some(
            "Ignored in this stage: headless Claude and OpenCode stages never read the client options (`atomic/InteractiveOnlyOption`).",
        ),
        Role::Query | Role::QueryThinking | Role::QueryOutputFormat if !headless && agent == Some("claude") => Some(
            "Ignored in this stage: an interactive Claude stage's `s.session.query()` ignores its options; only headless stages pass them to the Agent SDK (`atomic/HeadlessOnlyOption`). Use `chatFlags` in the client options instead.",
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::facts::Facts;
    use super::locate::{self, Inside};
    use crate::source::assert_span_inside;

    const SEED: &str = "export default defineWorkflow({ name: \"wörkflow 😀\", inputs: [{ name: \"a\", type: \"enum\", values: [\"x\"] }] })\n  .for<\"claude\">()\n  .run(async (ctx) => {\n    // a ( comment\n    await ctx.stage({ name: `s-${ctx.inputs.a}`, headless: true }, { chatFlags: [\"--agent\", \"planner\"] }, {}, async (s) => {\n      const r = /[(]\\//g; await s.transcript('s-1'); /* ] */\n    });\n  })\n  .compile();\n";

    /// Every span the locator and the facts give lies inside the text.
    fn check(text: &str) {
        let mut spans = Vec::new();
        locate::tokens(text, &mut |token, frames| {
            spans.push(token.span());
            for frame in frames {
                spans.extend(frame.callee.as_ref().map(|c| c.1));
                assert!(frame.open < text.len() && frame.starts.iter().all(|s| *s <= text.len()));
            }
        });
        let facts = Facts::read(text);
        let names = facts.inputs.iter().filter_map(|i| i.name.as_ref()).chain(&facts.input_uses);
        let names = names.chain(facts.stages.iter().filter_map(|s| s.name.as_ref())).chain(&facts.stage_reads);
        for name in names.chain(&facts.agents).chain(&facts.workflow) {
            spans.extend([name.span, name.hit]);
        }
        spans.extend(facts.stages.iter().map(|s| s.span(text.len())));
        for offset in (0..=text.len()).filter(|o| text.is_char_boundary(*o)) {
            if let Some(located) = locate::locate(text, offset) {
                assert_eq!(located.partial.end, offset);
                if let Inside::Str { content } = located.inside {
                    assert!(content <= offset);
                }
                spans.push(located.partial);
                spans.extend(located.spot.call.map(|c| c.span));
            }
        }
        for span in spans {
            assert_span_inside(text, span);
        }
    }

    fn interesting() -> impl Strategy<Value = char> {
        prop_oneof![
            prop::sample::select(vec![
                '"', '\'', '`', '$', '\\', '/', '*', '{', '}', '[', ']', '(', ')', ',', ':', '<', '>', '=', '.', '?',
                '\n', 'é', '😀'
            ]),
            any::<char>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn never_panics_and_spans_stay_in_bounds(
            random in "\\PC{0,64}",
            edits in prop::collection::vec((any::<u8>(), any::<usize>(), interesting()), 0..8),
        ) {
            check(&random);
            check(&crate::source::mutate(SEED, &edits));
        }
    }
}
