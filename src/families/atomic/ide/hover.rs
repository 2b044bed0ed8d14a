//! Hover: the docs of option keys (type, allowed values, and whether the stage ignores them),
//! inputs, stage names and agent names.

use super::agents;
use super::complete::key_doc;
use super::facts::{Facts, Name, is_current};
use super::locate::{self, At, Frame, Token};
use super::{agent_of, ignored_here, role_of, workflow};
use crate::editor::{Cursor, HoverInfo};
use crate::families::atomic::keys;
use crate::workspace::{SourceFile, Workspace};

pub(in crate::families::atomic) fn hover(workspace: &Workspace, at: Cursor) -> Option<HoverInfo> {
    let file = workflow(workspace, at.file)?;
    let text = file.text.as_str();
    if !text.is_char_boundary(at.offset) {
        return None;
    }
    let (token, frames) = token_at(text, at.offset)?;
    let facts = Facts::read(text);
    let span = token.span();
    let named = |names: &[Name]| names.iter().find(|n| n.hit == span || n.span.contains(at.offset)).cloned();
    if let Some(name) = named(&facts.input_uses) {
        return Some(HoverInfo { span: name.span, markdown: input_doc(&facts, &name.text) });
    }
    if let Some(name) = named(&facts.stage_reads) {
        return Some(HoverInfo { span: name.span, markdown: stage_doc(&facts, &name.text) });
    }
    if let Some(name) = named(&facts.agents) {
        return Some(HoverInfo { span: name.span, markdown: agent_doc(workspace, file, &name.text) });
    }
    let defined = facts.inputs.iter().filter_map(|i| i.name.as_ref()).find(|n| n.hit == span);
    if let Some(name) = defined {
        return Some(HoverInfo { span: name.span, markdown: input_doc(&facts, &name.text) });
    }
    let stage = facts.stages.iter().filter_map(|s| s.name.as_ref()).find(|n| n.hit == span);
    if let Some(name) = stage {
        return Some(HoverInfo { span: name.span, markdown: stage_doc(&facts, &name.text) });
    }
    if facts.current
        && let Token::Ident(s) = &token
        && let Some(markdown) = context_doc(text, *s)
    {
        return Some(HoverInfo { span: *s, markdown });
    }
    let spot = locate::spot(&frames);
    let role = role_of(&spot, is_current(text))?;
    let agent = agent_of(file);
    let (name, key_span) = match (&spot.at, &token) {
        (At::Key, Token::Ident(s)) => (&text[s.start..s.end], *s),
        (At::Key, Token::Str { content, .. }) => (&text[content.start..content.end], *content),
        // A value shows its key's doc, with the values allowed.
        (At::Value(key), Token::Ident(_) | Token::Str { .. } | Token::Literal(_)) => (key.as_str(), span),
        _ => return None,
    };
    let note = ignored_here(text, &frames, role, agent);
    let markdown = match keys::key(role, agent, name) {
        Some(k) => key_doc(k, role, note),
        None if role.is_closed() && keys::keys(role, agent).is_some() => {
            format!("`{name}` is not one of the {}; atomic does nothing with it.", role.describe())
        }
        None => return None,
    };
    Some(HoverInfo { span: key_span, markdown })
}

/// The name or string token under `offset` (or ending at it), with the brackets open around it.
fn token_at(text: &str, offset: usize) -> Option<(Token, Vec<Frame>)> {
    let mut found: Option<(Token, Vec<Frame>)> = None;
    locate::tokens(text, &mut |token, frames| {
        let span = token.span();
        let wanted = matches!(token, Token::Ident(_) | Token::Str { .. } | Token::Literal(_));
        let inside = span.start <= offset && offset < span.end;
        let at_end = span.end == offset && found.is_none();
        if wanted && (inside || at_end) {
            found = Some((token.clone(), frames.to_vec()));
        }
    });
    found
}

fn input_doc(facts: &Facts, name: &str) -> String {
    if facts.current {
        let Some(input) = facts.input(name) else {
            return format!(
                "`{name}` is not a declared input: atomic rejects undeclared inputs, so it is always undefined (`atomic/UndeclaredInput`)."
            );
        };
        let ty = input.ty.as_deref().map_or(String::new(), |t| format!(" · `Type.{t}`"));
        let need = if input.optional {
            " · optional"
        } else if input.defaulted {
            " · has a default"
        } else {
            " · required"
        };
        let mut out = format!("**input** `{name}`{ty}{need}");
        if let Some(description) = &input.description {
            out.push_str(&format!("\n\n{description}"));
        }
        out.push_str(&format!(
            "\n\nGiven as `/workflow <name> {name}=<value>` (or a child's `inputs`); read as `ctx.inputs.{name}`."
        ));
        return out;
    }
    let Some(input) = facts.input(name) else {
        return match facts.inputs.is_empty() {
            true => format!(
                "`{name}`: this workflow declares no inputs, so it takes a free-form positional prompt as `ctx.inputs.prompt`; any other name is undefined (`atomic/UndeclaredInput`)."
            ),
            false => format!("`{name}` is not a declared input: it is always undefined (`atomic/UndeclaredInput`)."),
        };
    };
    let ty = input.ty.as_deref().unwrap_or("string");
    let mut out = format!("**input** `{name}` · `{ty}`");
    if input.required {
        out.push_str(" · required");
    }
    if let Some(description) = &input.description {
        out.push_str(&format!("\n\n{description}"));
    }
    out.push_str(&format!(
        "\n\nSet with `--{name}=<value>` or the picker's form; read as `ctx.inputs.{name}` (undefined when not given)."
    ));
    out
}

/// `ctx.<member>`: its signature and what it does; `workflow` of `workflow({ … })`: the spec.
fn context_doc(text: &str, at: crate::source::Span) -> Option<String> {
    let name = &text[at.start..at.end];
    let receiver = text[..at.start].strip_suffix('.').or_else(|| text[..at.start].strip_suffix("?."))?;
    let owner: String =
        receiver.chars().rev().take_while(|c| locate::is_word(*c)).collect::<Vec<_>>().into_iter().rev().collect();
    if owner != "ctx" {
        return None;
    }
    let (ty, doc) = keys::context_member(name)?;
    Some(format!("**ctx.{name}** `{ty}` · `@bastani/workflows`\n\n{doc}"))
}

fn stage_doc(facts: &Facts, name: &str) -> String {
    if facts.current {
        let all: Vec<_> = facts.stages.iter().filter(|s| s.name.as_ref().is_some_and(|n| n.text == name)).collect();
        let kind = all.first().and_then(|s| s.kind).unwrap_or("stage");
        let mut out = format!(
            "**{kind}** `{name}`\n\nThe stage's name in status views and the graph; attach, send, pause and interrupt target it by name."
        );
        if all.len() > 1 {
            out.push_str(&format!(
                "\n\n{} stages are named so: targeting the name is ambiguous (`atomic/AmbiguousStageName`).",
                all.len()
            ));
        }
        return out;
    }
    let Some(stage) = facts.stage(name) else {
        let built: Vec<String> = facts.stages_matching(name).iter().map(|n| format!("`{}`", n.text)).collect();
        if !built.is_empty() {
            return format!("`{name}` may be the stage named at run time {}.", built.join(", "));
        }
        return format!(
            "No stage of this workflow is named `{name}`: the read throws \"No transcript for\" (`atomic/UnknownStageRef`)."
        );
    };
    let kind = if stage.headless { "headless stage" } else { "stage" };
    let mut out = format!("**{kind}** `{name}`");
    if let Some(description) = &stage.description {
        out.push_str(&format!("\n\n{description}"));
    }
    let reads = facts.stage_reads.iter().filter(|r| r.text == name).count();
    out.push_str(&match reads {
        0 => "\n\nNo transcript read names it.".to_string(),
        1 => "\n\nRead by 1 transcript read.".to_string(),
        n => format!("\n\nRead by {n} transcript reads."),
    });
    out
}

fn agent_doc(workspace: &Workspace, file: &SourceFile, name: &str) -> String {
    let files = agents::files(workspace, &file.path);
    let defined: Vec<String> = files
        .iter()
        .filter(|a| a.name == name)
        .map(|a| workspace.file_at(&a.path).map_or_else(|| a.path.display().to_string(), |f| f.display.clone()))
        .collect();
    if !defined.is_empty() {
        return format!(
            "**agent** `{name}`\n\nDefined in {}.",
            defined.iter().map(|d| format!("`{d}`")).collect::<Vec<_>>().join(", ")
        );
    }
    if agents::INSTALLED.contains(&name) {
        return format!(
            "**agent** `{name}`\n\nOne of the agents `atomic init` installs; no agent file for it was found around this workflow."
        );
    }
    format!(
        "**agent** `{name}`\n\nNo agent file defines it (`.claude/agents/{name}.md`, `.github/agents/{name}.md`, `.opencode/agents/{name}.md`, `.agents/skills/{name}/SKILL.md`), and atomic does not install it."
    )
}
