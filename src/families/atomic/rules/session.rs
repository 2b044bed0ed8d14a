//! What a stage's callback does with its session, against what the runtime does with it
//! (`runtime/executor.ts`, `providers/claude.ts`): options a stage of this kind never reads,
//! a human asked in a stage no human watches, `s.save` given another agent's shape, Copilot's
//! `sendAndWait`, and the Claude Agent SDK's `query` called around `s.session`.

use crate::config::SdkVersion;
use crate::diagnostic::{Applicability, Diagnostic, Edit};
use crate::families::atomic::model::session::{Headless, Save, Shape, Source, Stage};
use crate::families::atomic::model::{Value, WorkflowFile};
use crate::families::atomic::project::Project;
use crate::families::atomic::{
    ClaudeSdkQuery, CopilotSendAndWait, ExtractTextWithoutIndex, HeadlessOnlyOption, HumanInputInHeadless,
    InteractiveOnlyOption, SaveShape, WrongSessionMethod,
};
use crate::source::Span;
use crate::workspace::SourceFile;

const CLAUDE_SDK: &str = "@anthropic-ai/claude-agent-sdk";

/// The first SDK that passes `AskUserQuestion` to a headless Claude stage's `disallowedTools`.
static DENIES_ASK: SdkVersion = SdkVersion::plain(0, 5, 27);

pub(super) fn check(
    file: &SourceFile,
    parsed: &WorkflowFile,
    agent: Option<&str>,
    project: &Project,
    out: &mut Vec<Diagnostic>,
) {
    extract_text(file, parsed, out);
    let Some(agent) = agent else { return };
    for stage in &parsed.session.stages {
        wrong_method(file, stage, agent, out);
        let headless = matches!(stage.headless, Headless::Bool(true, _));
        let interactive = matches!(stage.headless, Headless::Absent | Headless::Bool(false, _));
        match agent {
            "claude" if interactive => headless_only(file, stage, out),
            "claude" | "opencode" if headless => interactive_only(file, stage, agent, out),
            _ => {}
        }
        if headless {
            human_input(file, stage, agent, project, out);
        }
        for save in &stage.saves {
            save_shape(file, stage, save, agent, out);
        }
    }
    match agent {
        "copilot" => send_and_wait(file, parsed, out),
        "claude" => sdk_query(file, parsed, out),
        _ => {}
    }
}

/// `ClaudeSessionWrapper.query(prompt, _options)` drops its options.
fn headless_only(file: &SourceFile, stage: &Stage, out: &mut Vec<Diagnostic>) {
    for query in &stage.queries {
        let Some(options) = &query.options else { continue };
        if matches!(options, Value::Object(o) if o.props.is_empty() && !o.open) {
            continue;
        }
        let mut d = Diagnostic::new(
            HeadlessOnlyOption,
            file.id,
            options.span(),
            "options passed to `s.session.query` in an interactive stage are ignored: it types the prompt into the `claude` CLI in a pane, not into the Agent SDK",
        )
        .with_help("set `headless: true` on the stage to run it through the Agent SDK with these options, or pass CLI flags in `chatFlags` (the second argument of `ctx.stage`)");
        if let Some(at) = stage.options {
            d = d.with_related(file.id, at, "this stage has no `headless: true`");
        }
        out.push(d);
    }
}

/// Headless Claude and OpenCode stages never read `clientOpts`.
fn interactive_only(file: &SourceFile, stage: &Stage, agent: &str, out: &mut Vec<Diagnostic>) {
    let Some(client) = &stage.client else { return };
    if client.props.is_empty() && !client.open {
        return;
    }
    let keys: Vec<String> = client.props.iter().map(|p| format!("`{}`", p.key)).collect();
    let keys = if keys.is_empty() { "these client options".to_string() } else { keys.join(", ") };
    // Whether removing the options would silently drop a choice the CLI flags make (`--agent`,
    // `--model`, …), which the headless stage needs as SDK options on `s.session.query` instead.
    let mut carries_choice = false;
    let (why, help) = if agent == "claude" {
        let flags = client.get("chatFlags").map(|p| &p.value);
        let (picks, agent_flag) = agent_flag(flags);
        carries_choice = client.open || flags.is_some_and(|f| !matches!(f, Value::Array(items, _) if items.is_empty()));
        (
            "a headless Claude stage runs the Agent SDK in-process and starts no CLI",
            match agent_flag {
                Some(name) => format!("pass `{{ agent: \"{name}\" }}` as the second argument of `s.session.query(prompt, options)` instead, or drop `headless: true`"),
                None if picks => "pass the agent as `{ agent: \"<name>\" }` in the second argument of `s.session.query(prompt, options)` instead, or drop `headless: true`".to_string(),
                None => "pass SDK options as the second argument of `s.session.query(prompt, options)`, or drop `headless: true`".to_string(),
            },
        )
    } else {
        (
            "a headless OpenCode stage starts its own server (`createOpencode({ port: 0 })`) without them",
            "drop them, or drop `headless: true` to connect to the pane's server with these options".to_string(),
        )
    };
    let mut d = Diagnostic::new(
        InteractiveOnlyOption,
        file.id,
        client.span,
        format!("client options {keys} do nothing in a headless stage: {why}"),
    )
    .with_help(help);
    if !carries_choice {
        let edit = Edit { span: client.span, replacement: "{}".to_string() };
        d = d.with_fix("Remove the ignored client options", Applicability::Unsafe, vec![edit]);
    }
    if let Headless::Bool(_, at) = stage.headless {
        d = d.with_related(file.id, at, "the stage is headless here");
    }
    out.push(d);
}

/// What becomes of an allowed `AskUserQuestion` in a headless Claude stage on the SDK versions
/// the project may run: only the case that applies when the version is known.
fn ask_outcome(file: &SourceFile, project: &Project) -> String {
    let denied = "atomic adds it to `disallowedTools` there, so the allowance never takes effect";
    let waits = "the deny is not passed there, so the stage waits for an answer forever";
    let Some(sdk) = project.sdk(file) else {
        return format!("{denied} (from {DENIES_ASK}); before {DENIES_ASK} {waits}");
    };
    let from = match sdk.at {
        Some(_) => format!("`{}` in package.json", sdk.range.text),
        None => format!("{} in `[atomic] sdk-version`", sdk.range.text),
    };
    if sdk.range.lowest >= DENIES_ASK {
        format!("on this project's SDK ({from}) {denied}")
    } else if sdk.range.all_older_than(&DENIES_ASK) {
        format!("on this project's SDK ({from}) {waits} (atomic denies it from {DENIES_ASK})")
    } else {
        format!("{denied} (from {DENIES_ASK}); before {DENIES_ASK}, which `{}` also allows, {waits}", sdk.range.text)
    }
}

/// Whether `chatFlags` may choose an agent (an `--agent` flag, or flags not written as a list of
/// strings), and the agent's name when it is written.
fn agent_flag(flags: Option<&Value>) -> (bool, Option<&str>) {
    let Some(flags) = flags else { return (false, None) };
    let Value::Array(items, _) = flags else { return (true, None) };
    for (at, item) in items.iter().enumerate() {
        match item.as_str() {
            Some("--agent") => return (true, items.get(at + 1).and_then(Value::as_str)),
            Some(flag) if flag.starts_with("--agent=") => return (true, Some(&flag["--agent=".len()..])),
            Some(_) => {}
            None => return (true, None),
        }
    }
    (false, None)
}

/// Headless Claude denies `AskUserQuestion` (passed to the SDK from 0.5.27); headless Copilot
/// excludes `ask_user`.
fn human_input(file: &SourceFile, stage: &Stage, agent: &str, project: &Project, out: &mut Vec<Diagnostic>) {
    let related = |d: Diagnostic| match stage.headless {
        Headless::Bool(_, at) => d.with_related(file.id, at, "the stage is headless here"),
        _ => d,
    };
    match agent {
        "claude" => {
            for query in &stage.queries {
                let Some(Value::Object(options)) = &query.options else { continue };
                let Some(Value::Array(tools, _)) = options.get("allowedTools").map(|p| &p.value) else { continue };
                for tool in tools.iter().filter(|t| t.as_str() == Some("AskUserQuestion")) {
                    out.push(related(
                        Diagnostic::new(
                            HumanInputInHeadless,
                            file.id,
                            tool.span(),
                            format!("`AskUserQuestion` allowed in a headless stage, where no one can answer: {}", ask_outcome(file, project)),
                        )
                        .with_help("remove it; to ask the user, run the stage interactive with `--allowed-tools …,AskUserQuestion` in `chatFlags`, or decide in code with `canUseTool`"),
                    ));
                }
            }
        }
        "copilot" => {
            if let Some(prop) = stage.session.as_ref().and_then(|s| s.get("onUserInputRequest")) {
                out.push(related(
                    Diagnostic::new(
                        HumanInputInHeadless,
                        file.id,
                        prop.key_span,
                        "`onUserInputRequest` in a headless stage is never called: atomic adds `ask_user` to the session's `excludedTools` there, so the agent cannot ask",
                    )
                    .with_help("remove it, or drop `headless: true` so the agent can ask in the pane"),
                ));
            }
        }
        _ => {}
    }
}

/// `wrapMessages` tells the provider by shape: a string is a Claude session id, an array is
/// Copilot events, an object with `info` and `parts` is an OpenCode response, anything else
/// saves nothing.
fn save_shape(file: &SourceFile, stage: &Stage, save: &Save, agent: &str, out: &mut Vec<Diagnostic>) {
    let param = stage.param.as_deref();
    let (what, fix): (&str, Option<(&str, Edit)>) = match (agent, &save.shape) {
        ("claude", Shape::Result(Source::Query, path)) if path.is_empty() => (
            "the messages `s.session.query` returned, an array that `wrapMessages` saves as Copilot events; Claude's transcript is read from the session id",
            param.map(|p| ("Save `s.sessionId`", Edit { span: save.arg, replacement: format!("{p}.sessionId") })),
        ),
        ("copilot" | "opencode", Shape::Id) => (
            "a string, which `wrapMessages` reads as a Claude session id, so the transcript is empty",
            match agent {
                "copilot" => param.map(|p| {
                    (
                        "Save `await s.session.getMessages()`",
                        Edit { span: save.arg, replacement: format!("await {p}.session.getMessages()") },
                    )
                }),
                _ => None,
            },
        ),
        ("opencode", Shape::Result(Source::Prompt, path)) if path.is_empty() => (
            "the whole `s.client.session.prompt` response (`{ data, error, … }`), which has no `info` and `parts`, so `wrapMessages` saves nothing",
            Some(("Save `.data!`", Edit { span: Span::empty(save.arg.end), replacement: ".data!".to_string() })),
        ),
        ("opencode", Shape::Result(Source::Prompt, path)) if path.len() > 1 && path[0] == "data" => (
            "a part of the response, not the `{ info, parts }` object; `wrapMessages` saves it as Copilot events or not at all",
            None,
        ),
        (_, Shape::Pending(source)) => (
            "a promise that is never awaited, which `wrapMessages` saves as nothing",
            (*source == Source::GetMessages && agent == "copilot")
                .then(|| ("Await it", Edit { span: Span::empty(save.arg.start), replacement: "await ".to_string() })),
        ),
        _ => return,
    };
    let right = match agent {
        "claude" => "a Claude stage saves with `s.save(s.sessionId)`",
        "copilot" => "a Copilot stage saves with `s.save(await s.session.getMessages())`",
        _ => {
            "an OpenCode stage saves with `s.save(result.data!)`, `result` being what `s.client.session.prompt` resolved to"
        }
    };
    let d = Diagnostic::new(SaveShape, file.id, save.arg, format!("`s.save` is given {what}")).with_help(right);
    out.push(match fix {
        Some((title, edit)) => d.with_fix(title, Applicability::Unsafe, vec![edit]),
        None => d,
    });
}

/// Copilot's `sendAndWait` throws after its 60 s default timeout.
fn send_and_wait(file: &SourceFile, parsed: &WorkflowFile, out: &mut Vec<Diagnostic>) {
    for call in &parsed.session.send_and_wait {
        let d = Diagnostic::new(
            CopilotSendAndWait,
            file.id,
            call.name,
            "`sendAndWait` throws when its timeout (60 s by default) runs out, and the throw ends the workflow; in a stage `s.session.send` already waits for `session.idle`, with no timeout",
        );
        // `send` resolves to a message id, so the swap is only sound where the reply is unused
        // and the call awaited.
        if !call.discarded {
            out.push(d.with_help("no fix here, as the reply is used or the call is not awaited: `send` resolves to the message id, not the reply; call `await s.session.send(…)`, then read the reply from `await s.session.getMessages()`"));
            continue;
        }
        let mut edits = vec![Edit { span: call.name, replacement: "send".to_string() }];
        if let (Some(end), Some(timeout)) = (call.first_end, call.timeout) {
            edits.push(Edit { span: Span::new(end, timeout.end), replacement: String::new() });
        }
        out.push(
            d.with_help("use `send`, which waits for the reply without a timeout; the value is not used here, so its message-id result changes nothing")
                .with_fix("Use `send`", Applicability::Unsafe, edits),
        );
    }
}

/// `query` of the Claude Agent SDK called in a stage: it runs a second Claude beside the stage's
/// own session (F16).
fn sdk_query(file: &SourceFile, parsed: &WorkflowFile, out: &mut Vec<Diagnostic>) {
    let imports: Vec<(String, Span)> = parsed
        .session
        .imports
        .iter()
        .filter(|i| i.module == CLAUDE_SDK)
        .filter_map(|i| match i.imported.as_deref() {
            Some("query") => Some((i.local.clone(), i.span)),
            Some(_) => None,
            None => Some((format!("{}.query", i.local), i.span)),
        })
        .collect();
    if imports.is_empty() {
        return;
    }
    for stage in &parsed.session.stages {
        for (callee, at) in &stage.calls {
            let Some((_, import)) = imports.iter().find(|(name, _)| name == callee) else { continue };
            let (why, help) = if matches!(stage.headless, Headless::Bool(true, _)) {
                (
                    "it bypasses `s.session`, so the stage's session id, saved transcript and headless defaults do not apply",
                    "call `s.session.query(prompt, options)`: in a headless stage it forwards `options` to the Agent SDK",
                )
            } else {
                (
                    "the stage's Claude pane sits idle while a second Claude runs in-process (twice the processes and tokens)",
                    "call `s.session.query(prompt)` (CLI flags go in `chatFlags`), or make the stage `headless: true` and pass SDK options as `s.session.query(prompt, options)`",
                )
            };
            out.push(
                Diagnostic::new(
                    ClaudeSdkQuery,
                    file.id,
                    *at,
                    format!("`query` from {CLAUDE_SDK} called in a stage: {why}"),
                )
                .with_related(file.id, *import, "imported here")
                .with_help(help),
            );
        }
    }
}

/// `extractAssistantText(messages)` without its index: `providers/claude.ts` loops from
/// `afterIndex`, and `undefined < n` is false, so it returns `""`.
fn extract_text(file: &SourceFile, parsed: &WorkflowFile, out: &mut Vec<Diagnostic>) {
    for (callee, args, first_end) in &parsed.extract_text {
        if *args != 1 {
            continue;
        }
        out.push(
            Diagnostic::new(
                ExtractTextWithoutIndex,
                file.id,
                *callee,
                "`extractAssistantText` is called without its index: it reads from `afterIndex`, which is `undefined`, so it returns \"\" and an empty text is handed on",
            )
            .with_help("pass the index to read from: `extractAssistantText(messages, 0)` for the whole transcript")
            .with_fix(
                "Read from index 0",
                Applicability::Safe,
                vec![Edit { span: Span::empty(*first_end), replacement: ", 0".to_string() }],
            ),
        );
    }
}

/// A method `s.session` of this provider does not have: Claude's wrapper has `query`,
/// Copilot's `CopilotSession` has `send`, OpenCode's session is data (prompt through
/// `s.client.session.prompt`).
fn wrong_method(file: &SourceFile, stage: &Stage, agent: &str, out: &mut Vec<Diagnostic>) {
    for (method, at) in &stage.session_calls {
        let (has, instead) = match (agent, method.as_str()) {
            ("claude", "send" | "sendAndWait" | "prompt") => ("`query(prompt)`", "await s.session.query(prompt)"),
            ("copilot", "query" | "prompt") => ("`send({ prompt })`", "await s.session.send({ prompt })"),
            ("opencode", "query" | "send" | "sendAndWait" | "prompt") => (
                "no prompt method (it is the session's data; prompt through the client)",
                "await s.client.session.prompt({ sessionID: s.session.id, parts: [{ type: \"text\", text: prompt }] })",
            ),
            _ => continue,
        };
        out.push(
            Diagnostic::new(
                WrongSessionMethod,
                file.id,
                *at,
                format!("`s.session.{method}` does not exist on {} session, which has {has}: the call is a `TypeError` when the stage runs", crate::util::article(agent)),
            )
            .with_help(format!("write `{instead}`")),
        );
    }
}
