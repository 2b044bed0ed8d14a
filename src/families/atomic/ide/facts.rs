//! The names of one workflow, read in one lexical scan (so also in half-typed code): the
//! workflow's name, its inputs and their uses (`ctx.inputs.x`), its stages and the transcript
//! reads naming them, and the agents it asks for (`--agent x`, `agent: "x"`). A workflow of
//! `@bastani/workflows` (`Facts::current`) has its inputs as the keys of `workflow({ inputs })`
//! and its stages as the names given to `ctx.task`, `ctx.stage`, `ctx.tool`, steps and child
//! boundaries.

use super::locate::{self, At, Frame, Kind, Spot, Token};
use crate::families::atomic::model::flow;
use crate::source::Span;

/// A name written as a string (or a member name, for `ctx.inputs.x`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Name {
    pub text: String,
    /// The name without quotes.
    pub span: Span,
    /// Where the cursor finds it: the literal with its quotes.
    pub hit: Span,
    /// A template with `${…}`: its text is not the name at run time.
    pub dynamic: bool,
}

impl Name {
    /// The name as the stage rules compare names: a template's literal parts around its holes.
    pub(super) fn as_flow(&self) -> flow::Name {
        if !self.dynamic {
            return flow::Name::Static(self.text.clone());
        }
        let mut parts = vec![String::new()];
        let mut depth = 0usize;
        let mut chars = self.text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '$' if depth == 0 && chars.peek() == Some(&'{') => {
                    chars.next();
                    depth = 1;
                }
                '{' if depth > 0 => depth += 1,
                '}' if depth > 0 => {
                    depth -= 1;
                    if depth == 0 {
                        parts.push(String::new());
                    }
                }
                _ if depth > 0 => {}
                c => parts.last_mut().map_or((), |p| p.push(c)),
            }
        }
        flow::Name::Pattern(parts)
    }
}

#[derive(Debug, Default)]
pub(super) struct Input {
    pub name: Option<Name>,
    /// `type`, `description`, `default` and `values` as written (string literals only); for
    /// `@bastani/workflows`, the TypeBox builder (`String`).
    pub ty: Option<String>,
    pub description: Option<String>,
    pub required: bool,
    /// `@bastani/workflows`: wrapped in `Type.Optional(…)`, or given a `default`.
    pub optional: bool,
    pub defaulted: bool,
    /// The input's object literal.
    open: usize,
}

#[derive(Debug)]
pub(super) struct Stage {
    pub name: Option<Name>,
    pub description: Option<String>,
    pub headless: bool,
    /// What makes it in `@bastani/workflows`: `task`, `stage`, `tool`, `step`, `child workflow`.
    pub kind: Option<&'static str>,
    /// The callee's start.
    pub start: usize,
    /// After the closing parenthesis, once it is read.
    pub end: Option<usize>,
    /// The `(` of the call.
    open: usize,
}

#[derive(Debug, Default)]
pub(super) struct Facts {
    /// The file is written against `@bastani/workflows` (0.8 and 0.9).
    pub current: bool,
    /// `name` of `defineWorkflow({ … })` (0.9: `workflow({ … })`), and the callee.
    pub workflow: Option<Name>,
    pub define: Option<Span>,
    pub inputs: Vec<Input>,
    pub input_uses: Vec<Name>,
    pub stages: Vec<Stage>,
    /// `ctx.transcript("x")`, `s.getMessages("x")`.
    pub stage_reads: Vec<Name>,
    pub agents: Vec<Name>,
}

/// Whether a call's callee is `ctx.stage` (or `s.stage`): a path ending in `.stage`.
pub(super) fn is_stage(callee: &str) -> bool {
    callee.ends_with(".stage")
}

/// Whether `text` is written against `@bastani/workflows`.
pub(super) fn is_current(text: &str) -> bool {
    use crate::workspace::atomic::{Module, sdk_module};
    matches!(sdk_module(text), Some(Module::Workflows | Module::OwnAuthoring))
}

/// What a `@bastani/workflows` call that makes a stage named by its first argument makes.
fn current_stage(callee: &str) -> Option<&'static str> {
    [(".task", "task"), (".stage", "stage"), (".tool", "tool")]
        .into_iter()
        .find(|(m, _)| callee.ends_with(m))
        .map(|(_, k)| k)
}

/// The entry of `workflow({ inputs: { … } })` that `frames` are in: the index of the inputs
/// map's frame and the entry's key.
fn input_entry(frames: &[Frame]) -> Option<(usize, String)> {
    let i = frames.iter().rposition(|f| f.kind == Kind::Object && f.slot.as_deref() == Some("inputs"))?;
    inputs_map(frames, i).then(|| Some((i, frames[i].key.clone()?))).flatten()
}

/// Whether `frames[i]` is the inputs map of a `workflow({ … })` spec.
fn inputs_map(frames: &[Frame], i: usize) -> bool {
    let (Some(map), Some(spec), Some(call)) =
        (frames.get(i), i.checked_sub(1).and_then(|j| frames.get(j)), i.checked_sub(2).and_then(|j| frames.get(j)))
    else {
        return false;
    };
    map.kind == Kind::Object
        && map.slot.as_deref() == Some("inputs")
        && spec.kind == Kind::Object
        && call.kind == Kind::Call
        && call.index == 0
        && call.callee.as_ref().is_some_and(|(c, _)| c == "workflow")
}

/// Whether a call reads a finished stage by name.
pub(super) fn is_read(callee: &str) -> bool {
    callee.ends_with(".transcript") || callee.ends_with(".getMessages")
}

impl Stage {
    /// From the callee to the closing parenthesis, or to `text_end` when it is not closed.
    pub(super) fn span(&self, text_end: usize) -> Span {
        Span::new(self.start, self.end.unwrap_or(text_end))
    }

    /// Whether this is the call whose `(` is at `open`.
    pub(super) fn is_call_at(&self, open: usize) -> bool {
        self.open == open
    }
}

impl Facts {
    pub(super) fn read(text: &str) -> Facts {
        let mut facts = Facts { current: is_current(text), ..Facts::default() };
        // The last three tokens, for `.inputs.x` and `.inputs["x"]`.
        let mut recent: [Option<Token>; 3] = [None, None, None];
        locate::tokens(text, &mut |token, frames| {
            facts.take(text, token, frames, &recent);
            recent.rotate_left(1);
            recent[2] = Some(token.clone());
        });
        facts
    }

    pub(super) fn input(&self, name: &str) -> Option<&Input> {
        self.inputs.iter().find(|i| i.name.as_ref().is_some_and(|n| n.text == name))
    }

    pub(super) fn stage(&self, name: &str) -> Option<&Stage> {
        self.stages.iter().find(|s| s.name.as_ref().is_some_and(|n| !n.dynamic && n.text == name))
    }

    /// The stages named at run time (`plan-${i}`) that may be called `name`, as
    /// `atomic/UnknownStageRef` matches them.
    pub(super) fn stages_matching(&self, name: &str) -> Vec<&Name> {
        let wanted = flow::Name::Static(name.to_string());
        self.stages
            .iter()
            .filter_map(|s| s.name.as_ref())
            .filter(|n| n.dynamic && n.as_flow().may_equal(&wanted))
            .collect()
    }

    fn take(&mut self, text: &str, token: &Token, frames: &[Frame], recent: &[Option<Token>; 3]) {
        let word = |t: &Option<Token>| match t {
            Some(Token::Ident(span)) => Some(&text[span.start..span.end]),
            _ => None,
        };
        let punct = |t: &Option<Token>| match t {
            Some(Token::Punct(c, _)) => Some(*c),
            _ => None,
        };
        // `.inputs.` or `.inputs[` just before this token.
        let after_inputs = |open: char| {
            punct(&recent[2]) == Some(open) && word(&recent[1]) == Some("inputs") && punct(&recent[0]) == Some('.')
        };
        if self.current {
            self.take_current(text, token, frames);
        }
        match token {
            Token::Ident(span) => {
                let name = &text[span.start..span.end];
                if after_inputs('.') {
                    let name = Name { text: name.to_string(), span: *span, hit: *span, dynamic: false };
                    self.input_uses.push(name);
                } else if matches!(name, "true" | "false") {
                    self.flag(name == "true", frames);
                }
            }
            Token::Str { span, content, dynamic } => {
                let value = &text[content.start..content.end];
                let name = Name { text: value.to_string(), span: *content, hit: *span, dynamic: *dynamic };
                if after_inputs('[') {
                    self.input_uses.push(name);
                    return;
                }
                self.string(name, frames);
            }
            Token::Punct(')', at) => {
                if let Some(frame) = frames.last()
                    && frame.kind == Kind::Call
                    && let Some(stage) = self.stages.iter_mut().rev().find(|s| s.open == frame.open)
                {
                    stage.end = Some(at.end);
                }
            }
            // A stage call is known from its `(`, before its options are read.
            Token::Punct('(', at) => {
                let Some(Frame { kind: Kind::Call, callee: Some((callee, callee_span)), .. }) = frames.last() else {
                    return;
                };
                let define = if self.current { "workflow" } else { "defineWorkflow" };
                if callee == define && self.define.is_none() {
                    self.define = Some(*callee_span);
                } else if self.current
                    && let Some(kind) = current_stage(callee)
                {
                    let stage = Stage {
                        name: None,
                        description: None,
                        headless: false,
                        kind: Some(kind),
                        start: callee_span.start,
                        end: None,
                        open: at.start,
                    };
                    self.stages.push(stage);
                } else if !self.current && is_stage(callee) {
                    let stage = Stage {
                        name: None,
                        description: None,
                        headless: false,
                        kind: None,
                        start: callee_span.start,
                        end: None,
                        open: at.start,
                    };
                    self.stages.push(stage);
                }
            }
            Token::Punct(_, _) | Token::Literal(_) => {}
        }
    }

    /// `headless: true` in a stage's options, `required: true` in an input's.
    fn flag(&mut self, value: bool, frames: &[Frame]) {
        let spot = locate::spot(frames);
        let Some(call) = spot.call.as_ref() else { return };
        let object = frames.last().map_or(0, |f| f.open);
        if spot.at == At::Value("headless".into()) && stage_arg(&spot, 0) && spot.path.is_empty() {
            let open = frames.len().checked_sub(2).map(|i| frames[i].open);
            if let Some(stage) = self.stages.iter_mut().rev().find(|s| Some(s.open) == open) {
                stage.headless = value;
            }
        } else if spot.at == At::Value("required".into())
            && call.callee == "defineWorkflow"
            && spot.path == ["inputs", "[]"]
        {
            self.input_at(object).required = value;
        }
    }

    /// The input whose object literal opens at `object`, added when new.
    fn input_at(&mut self, object: usize) -> &mut Input {
        let index = match self.inputs.iter().position(|i| i.open == object) {
            Some(index) => index,
            None => {
                self.inputs.push(Input { open: object, ..Input::default() });
                self.inputs.len() - 1
            }
        };
        &mut self.inputs[index]
    }

    /// The names of a `@bastani/workflows` file: input keys and their schemas, stage names.
    fn take_current(&mut self, text: &str, token: &Token, frames: &[Frame]) {
        let spot = locate::spot(frames);
        let (name, hit) = match token {
            Token::Ident(span) => {
                (Name { text: text[span.start..span.end].to_string(), span: *span, hit: *span, dynamic: false }, *span)
            }
            Token::Str { span, content, dynamic } => (
                Name {
                    text: text[content.start..content.end].to_string(),
                    span: *content,
                    hit: *span,
                    dynamic: *dynamic,
                },
                *span,
            ),
            _ => return,
        };
        // An input: a key of the inputs map.
        if spot.at == At::Key && frames.len().checked_sub(1).is_some_and(|last| inputs_map(frames, last)) {
            let open = hit.start;
            self.input_at(open).name = Some(name);
            return;
        }
        // `Type.String({ description, default })` of an input.
        if let Some((i, key)) = input_entry(frames)
            && i + 1 < frames.len()
        {
            let builder = frames[i + 1..]
                .iter()
                .filter_map(|f| f.callee.as_ref().map(|(c, _)| c.as_str()))
                .filter_map(|c| c.strip_prefix("Type."))
                .find(|b| *b != "Optional");
            let optional = frames[i + 1..].iter().any(|f| f.callee.as_ref().is_some_and(|(c, _)| c == "Type.Optional"));
            let Some(input) = self.inputs.iter_mut().rev().find(|x| x.name.as_ref().is_some_and(|n| n.text == key))
            else {
                return;
            };
            if let Some(builder) = builder {
                input.ty = Some(builder.to_string());
            }
            input.optional = optional;
            if matches!(token, Token::Str { .. }) && spot.at == At::Value("description".into()) {
                input.description = Some(name.text.clone());
            }
            if spot.at == At::Value("default".into()) {
                input.defaulted = true;
            }
            return;
        }
        let Some(call) = spot.call.as_ref() else { return };
        if !matches!(token, Token::Str { .. }) {
            return;
        }
        if call.callee == "workflow" && call.arg == 0 && spot.path.is_empty() && spot.at == At::Value("name".into()) {
            self.workflow = Some(name);
            return;
        }
        let open = frames.last().map_or(0, |f| f.open);
        let step = (call.callee.ends_with(".parallel") || call.callee.ends_with(".chain"))
            && call.arg == 0
            && spot.path == ["[]"];
        let boundary = call.callee.ends_with(".workflow") && call.arg == 1 && spot.path.is_empty();
        if (step && spot.at == At::Value("name".into())) || (boundary && spot.at == At::Value("stageName".into())) {
            let kind = if step { "step" } else { "child workflow" };
            self.stages.push(Stage {
                name: Some(name),
                description: None,
                headless: false,
                kind: Some(kind),
                start: hit.start,
                end: Some(hit.end),
                open,
            });
            return;
        }
        if current_stage(&call.callee).is_some()
            && call.arg == 0
            && spot.at == At::Argument
            && let Some(stage) = self.stages.iter_mut().rev().find(|s| s.open == open && s.name.is_none())
        {
            stage.name = Some(name);
        }
    }

    /// A string literal: a name, a read, an agent, or an input's or stage's field.
    fn string(&mut self, name: Name, frames: &[Frame]) {
        let spot = locate::spot(frames);
        let Some(call) = spot.call.as_ref() else { return };
        let object = frames.last().map_or(0, |f| f.open);
        let at_value = |key: &str| spot.at == At::Value(key.to_string());
        if call.callee == "defineWorkflow" && call.arg == 0 {
            if spot.path.is_empty() && at_value("name") {
                self.workflow = Some(name);
            } else if spot.path == ["inputs", "[]"] {
                let input = self.input_at(object);
                match &spot.at {
                    At::Value(key) if key == "name" => input.name = Some(name),
                    At::Value(key) if key == "type" => input.ty = Some(name.text),
                    At::Value(key) if key == "description" => input.description = Some(name.text),
                    _ => {}
                }
            }
            return;
        }
        if stage_arg(&spot, 0) && spot.path.is_empty() {
            let open = frames.len().checked_sub(2).map(|i| frames[i].open);
            if let Some(stage) = self.stages.iter_mut().rev().find(|s| Some(s.open) == open) {
                match &spot.at {
                    At::Value(key) if key == "name" => stage.name = Some(name),
                    At::Value(key) if key == "description" => stage.description = Some(name.text),
                    _ => {}
                }
            }
            return;
        }
        if is_read(&call.callee) && call.arg == 0 && spot.at == At::Argument && !name.dynamic {
            self.stage_reads.push(name);
            return;
        }
        if let Some(agent) = agent_named(&spot, name) {
            self.agents.push(agent);
        }
    }
}

/// Whether `spot` is in argument `arg` of a `ctx.stage` call.
pub(super) fn stage_arg(spot: &Spot, arg: usize) -> bool {
    spot.call.as_ref().is_some_and(|c| is_stage(&c.callee) && c.arg == arg)
}

/// The agent a string names: an item after `"--agent"` (or `"--agent=x"`) in `chatFlags`, or the
/// value of `agent` in Claude query options or stage session options.
fn agent_named(spot: &Spot, name: Name) -> Option<Name> {
    if name.dynamic {
        return None;
    }
    let in_flags = stage_arg(spot, 1) && spot.path == ["chatFlags"];
    if in_flags && matches!(&spot.at, At::Item { previous: Some(p) } if p == "--agent") {
        return Some(name);
    }
    if in_flags && let Some(rest) = name.text.strip_prefix("--agent=") {
        let start = name.span.start + "--agent=".len();
        return Some(Name { text: rest.to_string(), span: Span::new(start, name.span.end), ..name });
    }
    is_agent_value(spot).then_some(name)
}

/// Whether `spot` is the value of `agent` in options that name an agent: a Claude
/// `s.session.query(p, { agent })`, a stage's session options (Copilot), an OpenCode
/// `s.client.session.prompt({ agent })`.
pub(super) fn is_agent_value(spot: &Spot) -> bool {
    let Some(call) = spot.call.as_ref() else { return false };
    let options = (call.callee.ends_with(".query") && call.arg == 1)
        || stage_arg(spot, 2)
        || (call.callee.ends_with("session.prompt") && call.arg == 0);
    options && spot.path.is_empty() && spot.at == At::Value("agent".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_name_is_its_literal_parts() {
        let name = |text: &str| Name { text: text.into(), span: Span::empty(0), hit: Span::empty(0), dynamic: true };
        let parts = |v: &[&str]| flow::Name::Pattern(v.iter().map(|s| s.to_string()).collect());
        assert_eq!(name("plan-${i}").as_flow(), parts(&["plan-", ""]));
        assert_eq!(name("${a}-x-${f({b})}!").as_flow(), parts(&["", "-x-", "!"]));
        let facts =
            Facts::read("ctx.stage({ name: `plan-${i}` }, {}, {}, async (s) => {}); ctx.stage({ name: \"plain\" })");
        assert_eq!(facts.stages_matching("plan-2").len(), 1);
        assert!(facts.stages_matching("review").is_empty());
    }
}
