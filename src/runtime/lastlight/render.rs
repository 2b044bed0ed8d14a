//! `renderTemplate` as the engine runs it: a chain of global regular-expression replacements
//! over the whole text, each pass reading what the passes before it wrote (a phase output that
//! contains `{{issueTitle}}` has it replaced by pass 4). The passes are written out by hand from
//! the engine's regexes (`src/workflows/templates.ts` at dd02adf, `packages/workflow-engine/
//! src/core/templates.ts` at 2d26144), and every replacement is tracked back to the tag that
//! made it, so a rendered prompt can show each substitution and say where it came from.

use serde_json::Value;

use crate::runtime::lastlight::value::{
    self, Ctx, Property, encode_uri_component, if_truthy, is_js_space, is_word, printed, string_of, string_or_undefined,
};
use crate::template::lastlight::{self as tags, Engine, TagKind};

/// A rendered template: the text the engine sends, what each substitution put where, and the
/// tags of the template that reach the text as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rendered {
    pub text: String,
    pub marks: Vec<Mark>,
    pub blocks: Vec<Block>,
    pub verbatim: Vec<Verbatim>,
}

/// One substitution.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// Where its value is in the rendered text (empty for an empty value); `None` when a later
    /// pass removed or replaced all of it.
    pub range: Option<(usize, usize)>,
    /// The tag as the pass matched it (`{{issueTitle}}`, `${plan.output}`).
    pub tag: String,
    /// Where the tag starts in the template, when it was written there (not in a value an
    /// earlier pass inserted).
    pub origin: Option<usize>,
    pub kind: MarkKind,
    /// The key, phase or helper argument the tag reads.
    pub key: String,
    /// The value was `undefined` or `null`: the tag rendered empty.
    pub missing: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkKind {
    /// `{{key}}` (pass 4).
    Value,
    /// `${name.output}` (pass 0).
    PhaseOutput,
    /// `{{slugify x}}`, `{{branchUrl f}}`, `{{artifactUrl f}}`, `{{approvalUrl}}` (passes 2, 3).
    Helper,
}

/// One `{{#if}}…{{/if}}` block the engine replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub origin: Option<usize>,
    pub key: String,
    pub negated: bool,
    /// Whether its body stayed.
    pub kept: bool,
}

/// A tag of the template that reaches the rendered text as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verbatim {
    /// Where it is in the rendered text.
    pub range: (usize, usize),
    /// Where it is in the template.
    pub origin: usize,
    pub text: String,
    pub why: String,
}

impl Rendered {
    /// The substitutions that rendered empty because their value was missing, in the order of
    /// the text.
    pub fn missing(&self) -> impl Iterator<Item = &Mark> {
        self.marks.iter().filter(|m| m.missing && m.range.is_some())
    }
}

/// Renders `template` with `ctx`, as `engine` does.
pub fn render(template: &str, ctx: &Ctx, engine: Engine) -> Rendered {
    let mut state =
        State { text: template.to_string(), segs: vec![Seg::template(0, template.len(), 0)], marks: Vec::new() };
    let mut blocks = Vec::new();
    // 0. `${name.output}`, only when the context has phase outputs.
    if value::js_truthy(ctx.get("phaseOutputs")) {
        let text = state.text.clone();
        let hits = phase_outputs(&text, ctx, &mut state);
        state.apply(hits);
    }
    // 1. `{{#if [!]key}}…{{/if}}`, lazy: no nesting.
    let hits = if_blocks(&state.text, ctx, engine, &state, &mut blocks);
    state.apply(hits);
    // 2. `{{slugify x}}`: a top-level key only.
    let text = state.text.clone();
    let hits = helper_hits(&text, "{{slugify", HelperArg::Word, &mut state, |arg| {
        let found = ctx.get(arg).filter(|v| !v.is_null());
        (found.map(|v| value::slugify(&string_of(v))).unwrap_or_default(), found.is_none())
    });
    state.apply(hits);
    // 3. `{{branchUrl file}}`.
    let text = state.text.clone();
    let hits =
        helper_hits(&text, "{{branchUrl", HelperArg::NonSpace, &mut state, |file| (branch_url(ctx, file), false));
    state.apply(hits);
    if engine == Engine::Head {
        // 3b. `{{artifactUrl file}}`.
        let text = state.text.clone();
        let hits = helper_hits(&text, "{{artifactUrl", HelperArg::NonSpace, &mut state, |file| {
            (artifact_url(ctx, file), false)
        });
        state.apply(hits);
        // 3c. `{{approvalUrl}}`.
        let text = state.text.clone();
        let hits = approval_url(&text, ctx, &mut state);
        state.apply(hits);
    }
    // 4. `{{key}}` and `{{a.b.c}}`.
    let text = state.text.clone();
    let hits = values(&text, ctx, engine, &mut state);
    state.apply(hits);
    state.finish(template, engine, blocks)
}

/// What `lookupContextKey` (`walkKey`) finds for a dotted key: `ctx` first, then the phase
/// outputs for the first segment, then object properties. `None` is `undefined`.
pub fn walk_key(ctx: &Ctx, key: &str) -> Option<Value> {
    let mut parts = key.split('.');
    let first = parts.next().unwrap_or_default();
    let outputs = || ctx.get("phaseOutputs").and_then(|o| own(value::property(o, first)));
    let mut current = match ctx.get(first).filter(|v| !v.is_null()) {
        Some(v) => Some(v.clone()),
        None => outputs(),
    };
    for part in parts {
        let object = current.filter(|v| v.is_object() || v.is_array())?;
        current = own(value::property(&object, part));
    }
    current
}

fn own(property: Property) -> Option<Value> {
    match property {
        Property::Undefined => None,
        Property::Value(v) => Some(v.clone()),
        Property::Length(n) => Some(Value::from(n)),
    }
}

/// Where a stretch of the current text came from.
#[derive(Clone, Copy, Debug)]
enum Src {
    /// The template, from this offset.
    Template(usize),
    /// The value of a mark.
    Mark(usize),
}

#[derive(Clone, Copy, Debug)]
struct Seg {
    start: usize,
    end: usize,
    src: Src,
}

impl Seg {
    fn template(start: usize, end: usize, at: usize) -> Seg {
        Seg { start, end, src: Src::Template(at) }
    }
}

/// What a match is replaced with.
enum With {
    /// A value, made by mark `.1`.
    Text(String, usize),
    /// Part of the matched text, kept (a kept `{{#if}}` body).
    Keep(usize, usize),
    /// Nothing: the match and everything in it are gone (a dropped `{{#if}}` block).
    Drop,
}

struct Hit {
    start: usize,
    end: usize,
    with: With,
}

struct State {
    text: String,
    segs: Vec<Seg>,
    marks: Vec<Mark>,
}

impl State {
    /// A new mark for the tag at `start..end` of the current text.
    fn mark(&mut self, start: usize, end: usize, kind: MarkKind, key: &str, missing: bool) -> usize {
        let origin = self.origin(start, end);
        let tag = self.text[start..end].to_string();
        self.marks.push(Mark { range: None, tag, origin, kind, key: key.to_string(), missing });
        self.marks.len() - 1
    }

    /// The template offset of `start..end` when one stretch of template text holds all of it.
    fn origin(&self, start: usize, end: usize) -> Option<usize> {
        self.segs.iter().find_map(|seg| match seg.src {
            Src::Template(at) if seg.start <= start && end <= seg.end => Some(at + (start - seg.start)),
            _ => None,
        })
    }

    /// Replaces every hit (in order, not overlapping) and carries the sources along.
    fn apply(&mut self, hits: Vec<Hit>) {
        if hits.is_empty() {
            return;
        }
        let mut text = String::with_capacity(self.text.len());
        let mut segs = Vec::with_capacity(self.segs.len() + hits.len() * 2);
        let mut at = 0;
        for hit in &hits {
            copy(&self.text, &self.segs, at, hit.start, &mut text, &mut segs);
            match &hit.with {
                With::Text(value, mark) => {
                    segs.push(Seg { start: text.len(), end: text.len() + value.len(), src: Src::Mark(*mark) });
                    text.push_str(value);
                }
                With::Keep(a, b) => copy(&self.text, &self.segs, *a, *b, &mut text, &mut segs),
                With::Drop => {}
            }
            at = hit.end;
        }
        copy(&self.text, &self.segs, at, self.text.len(), &mut text, &mut segs);
        self.text = text;
        self.segs = segs;
    }

    fn finish(mut self, template: &str, engine: Engine, blocks: Vec<Block>) -> Rendered {
        for seg in &self.segs {
            if let Src::Mark(i) = seg.src {
                let range = &mut self.marks[i].range;
                *range = Some(match *range {
                    Some((a, b)) => (a.min(seg.start), b.max(seg.end)),
                    None => (seg.start, seg.end),
                });
            }
        }
        let verbatim = self.verbatim(template, engine);
        Rendered { text: self.text, marks: self.marks, blocks, verbatim }
    }

    /// The template's tags whose whole text reached the rendered text unchanged.
    fn verbatim(&self, template: &str, engine: Engine) -> Vec<Verbatim> {
        let parsed = tags::parse(template, 0, engine);
        let mut out = Vec::new();
        for tag in &parsed {
            let (start, end) = (tag.span.start, tag.span.end);
            let copied = self.segs.iter().find_map(|seg| match seg.src {
                Src::Template(at) if at <= start && end <= at + (seg.end - seg.start) => Some(seg.start + (start - at)),
                _ => None,
            });
            let Some(at) = copied else { continue };
            let why = match &tag.kind {
                TagKind::Malformed(why) => why.clone(),
                TagKind::Unknown { name } => format!("`{}` is no helper or block the engine knows", name.name),
                TagKind::IfOpen { .. } => "no `{{/if}}` follows it, so the block is never replaced".to_string(),
                TagKind::IfClose => "no `{{#if}}` block is open here".to_string(),
                _ => "no pass of the engine replaced it".to_string(),
            };
            out.push(Verbatim {
                range: (at, at + (end - start)),
                origin: start,
                text: template[start..end].to_string(),
                why,
            });
        }
        out
    }
}

/// Copies `text[a..b]` with its sources (an empty source at `a..=b`, an empty value, is kept).
fn copy(text: &str, segs: &[Seg], a: usize, b: usize, out: &mut String, out_segs: &mut Vec<Seg>) {
    if a > b {
        return;
    }
    let base = out.len();
    for seg in segs {
        let empty = seg.start == seg.end;
        let overlaps = if empty { a <= seg.start && seg.start <= b } else { seg.start < b && a < seg.end };
        if !overlaps {
            continue;
        }
        let start = seg.start.max(a);
        let end = seg.end.min(b);
        let src = match seg.src {
            Src::Template(at) => Src::Template(at + (start - seg.start)),
            mark => mark,
        };
        out_segs.push(Seg { start: base + (start - a), end: base + (end - a), src });
    }
    out.push_str(&text[a..b]);
}

/// Pass 0: `\$\{(\w+)\.output\}`.
fn phase_outputs(text: &str, ctx: &Ctx, state: &mut State) -> Vec<Hit> {
    let bytes = text.as_bytes();
    let mut hits = Vec::new();
    let mut i = 0;
    while let Some(found) = text[i..].find("${") {
        let start = i + found;
        let mut j = start + 2;
        while j < bytes.len() && is_word(bytes[j]) {
            j += 1;
        }
        if j == start + 2 || !text[j..].starts_with(".output}") {
            i = start + 1;
            continue;
        }
        let end = j + ".output}".len();
        let name = &text[start + 2..j];
        let found = ctx.get("phaseOutputs").and_then(|o| own(value::property(o, name))).filter(|v| !v.is_null());
        let text_value = match &found {
            None => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(Value::Object(map)) if map.get("output").is_some_and(|o| !o.is_null()) => string_of(&map["output"]),
            Some(other) => value::stringify(other),
        };
        let mark = state.mark(start, end, MarkKind::PhaseOutput, name, found.is_none());
        hits.push(Hit { start, end, with: With::Text(text_value, mark) });
        i = end;
    }
    hits
}

/// A key of `engine`'s pattern at `at`: `\w+(?:\.\w+)*` (seed) or `[\w-]+(?:\.[\w-]+)*`
/// (current). Returns where it ends.
fn key_at(bytes: &[u8], at: usize, engine: Engine) -> Option<usize> {
    let key_byte = |b: u8| is_word(b) || (engine == Engine::Head && b == b'-');
    let segment = |from: usize| {
        let mut j = from;
        while j < bytes.len() && key_byte(bytes[j]) {
            j += 1;
        }
        (j > from).then_some(j)
    };
    let mut end = segment(at)?;
    while bytes.get(end) == Some(&b'.') {
        match segment(end + 1) {
            Some(next) => end = next,
            None => break,
        }
    }
    Some(end)
}

/// Skips one or more JavaScript spaces (`\s+`) from `at`; `None` when there is none.
fn spaces(text: &str, at: usize) -> Option<usize> {
    let rest = &text[at..];
    let skipped: usize = rest.chars().take_while(|c| is_js_space(*c)).map(char::len_utf8).sum();
    (skipped > 0).then_some(at + skipped)
}

/// Pass 1: `\{\{#if\s+(!?)(key)\}\}([\s\S]*?)\{\{\/if\}\}`.
fn if_blocks(text: &str, ctx: &Ctx, engine: Engine, state: &State, blocks: &mut Vec<Block>) -> Vec<Hit> {
    let bytes = text.as_bytes();
    let mut hits = Vec::new();
    let mut i = 0;
    while let Some(found) = text[i..].find("{{#if") {
        let start = i + found;
        let matched = (|| {
            let mut j = spaces(text, start + 5)?;
            let negated = bytes.get(j) == Some(&b'!');
            if negated {
                j += 1;
            }
            let key_end = key_at(bytes, j, engine)?;
            if !text[key_end..].starts_with("}}") {
                return None;
            }
            let body = key_end + 2;
            let close = body + text[body..].find("{{/if}}")?;
            Some((negated, &text[j..key_end], body, close))
        })();
        let Some((negated, key, body, close)) = matched else {
            i = start + 1;
            continue;
        };
        let end = close + "{{/if}}".len();
        let holds = if_truthy(walk_key(ctx, key).as_ref());
        let kept = holds != negated;
        blocks.push(Block { origin: state.origin(start, body), key: key.to_string(), negated, kept });
        let with = if kept { With::Keep(body, close) } else { With::Drop };
        hits.push(Hit { start, end, with });
        i = end;
    }
    hits
}

#[derive(Clone, Copy)]
enum HelperArg {
    /// `\w+`.
    Word,
    /// `\S+` (greedy: up to the last `}}` before a space).
    NonSpace,
}

/// Passes 2, 3 and 3b: `\{\{<name>\s+(<arg>)\}\}`. `value` gives the replacement and whether
/// it is empty for want of a value.
fn helper_hits(
    text: &str,
    opener: &str,
    arg: HelperArg,
    state: &mut State,
    value: impl Fn(&str) -> (String, bool),
) -> Vec<Hit> {
    let bytes = text.as_bytes();
    let mut hits = Vec::new();
    let mut i = 0;
    while let Some(found) = text[i..].find(opener) {
        let start = i + found;
        let matched = (|| {
            let from = spaces(text, start + opener.len())?;
            match arg {
                HelperArg::Word => {
                    let mut j = from;
                    while j < bytes.len() && is_word(bytes[j]) {
                        j += 1;
                    }
                    (j > from && text[j..].starts_with("}}")).then_some((from, j))
                }
                HelperArg::NonSpace => {
                    let run: usize = text[from..].chars().take_while(|c| !is_js_space(*c)).map(char::len_utf8).sum();
                    let first = text[from..].chars().next()?.len_utf8();
                    if run <= first {
                        return None;
                    }
                    // The last `}}` of the run with at least one character before it.
                    let last = text[from + first..from + run].rfind("}}").map(|n| from + first + n)?;
                    Some((from, last))
                }
            }
        })();
        let Some((arg_start, arg_end)) = matched else {
            i = start + 1;
            continue;
        };
        let end = arg_end + 2;
        let argument = &text[arg_start..arg_end];
        let (replacement, missing) = value(argument);
        let mark = state.mark(start, end, MarkKind::Helper, argument, missing);
        hits.push(Hit { start, end, with: With::Text(replacement, mark) });
        i = end;
    }
    hits
}

/// `https://github.com/${owner}/${repo}/blob/${encodeURIComponent(branch)}/${issueDir}/${file}`.
fn branch_url(ctx: &Ctx, file: &str) -> String {
    format!(
        "https://github.com/{}/{}/blob/{}/{}/{file}",
        string_or_undefined(ctx.get("owner")),
        string_or_undefined(ctx.get("repo")),
        encode_uri_component(&string_or_undefined(ctx.get("branch"))),
        string_or_undefined(ctx.get("issueDir")),
    )
}

/// The current engine's `{{artifactUrl file}}`: the branch URL, or the dashboard's asset view
/// when artifacts are kept on the server and it has a public URL.
fn artifact_url(ctx: &Ctx, file: &str) -> String {
    let branch = branch_url(ctx, file);
    if !value::js_truthy(ctx.get("externalizeArtifacts")) || !value::js_truthy(ctx.get("publicUrl")) {
        return branch;
    }
    let issue_dir = string_or_undefined(ctx.get("issueDir"));
    let issue_key = issue_dir.strip_prefix(".lastlight/").unwrap_or(&issue_dir);
    let base = string_or_undefined(ctx.get("publicUrl"));
    let base = base.trim_end_matches('/');
    let repo = format!("{}/{}", string_or_undefined(ctx.get("owner")), string_or_undefined(ctx.get("repo")));
    format!(
        "{base}/admin/?tab=repos&rtab=assets&repo={}&key={}&doc={}",
        encode_uri_component(&repo),
        encode_uri_component(issue_key),
        encode_uri_component(file)
    )
}

/// Pass 3c: `{{approvalUrl}}`, empty without a public URL or an approval.
fn approval_url(text: &str, ctx: &Ctx, state: &mut State) -> Vec<Hit> {
    let mut hits = Vec::new();
    let tag = "{{approvalUrl}}";
    let mut i = 0;
    while let Some(found) = text[i..].find(tag) {
        let start = i + found;
        let end = start + tag.len();
        let (public, id) = (ctx.get("publicUrl"), ctx.get("approvalId"));
        let missing = !value::js_truthy(public) || !value::js_truthy(id);
        let url = if missing {
            String::new()
        } else {
            let base = string_or_undefined(public);
            format!("{}/admin/?approval={}", base.trim_end_matches('/'), encode_uri_component(&string_or_undefined(id)))
        };
        let mark = state.mark(start, end, MarkKind::Helper, "approvalUrl", missing);
        hits.push(Hit { start, end, with: With::Text(url, mark) });
        i = end;
    }
    hits
}

/// Pass 4: `\{\{(key)\}\}`.
fn values(text: &str, ctx: &Ctx, engine: Engine, state: &mut State) -> Vec<Hit> {
    let bytes = text.as_bytes();
    let mut hits = Vec::new();
    let mut i = 0;
    while let Some(found) = text[i..].find("{{") {
        let start = i + found;
        let matched = key_at(bytes, start + 2, engine).filter(|end| text[*end..].starts_with("}}"));
        let Some(key_end) = matched else {
            i = start + 1;
            continue;
        };
        let end = key_end + 2;
        let key = &text[start + 2..key_end];
        let found = walk_key(ctx, key).filter(|v| !v.is_null());
        let replacement = found.as_ref().map(printed).unwrap_or_default();
        let mark = state.mark(start, end, MarkKind::Value, key, found.is_none());
        hits.push(Hit { start, end, with: With::Text(replacement, mark) });
        i = end;
    }
    hits
}

/// The prompt of a phase with skills and no `prompt:`: the engine's nudge to the primary skill,
/// then `Context:` and one `key: value` line per context entry that is set. The seed-era
/// engine also says where the skill's file is.
pub fn skills_nudge(skills: &[String], ctx: &Ctx, engine: Engine) -> String {
    let Some((primary, rest)) = skills.split_first() else { return String::new() };
    let context: Vec<String> = ctx
        .entries()
        .into_iter()
        .filter_map(|(key, value)| value.filter(|v| !v.is_null()).map(|v| format!("{key}: {}", printed(v))))
        .collect();
    let mut lines = vec![format!("Use the **{primary}** skill to handle this request.")];
    if engine == Engine::Seed {
        let same = if rest.is_empty() { "" } else { "; the other skills work the same way" };
        lines.push(format!("Read `.agents/skills/{primary}/SKILL.md` for the full instructions{same}."));
    }
    if !rest.is_empty() {
        lines.push(format!("Other skills available if you need them: {}.", rest.join(", ")));
    }
    lines.push("Context:".into());
    lines.push(context.join("\n"));
    lines.retain(|line| !line.is_empty());
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx(value: Value) -> Ctx {
        Ctx::from_map(value.as_object().expect("object"))
    }

    fn text(template: &str, context: Value) -> String {
        render(template, &ctx(context), Engine::Head).text
    }

    #[test]
    fn the_passes_in_order() {
        let c = json!({"issueTitle": "Add a flag", "phaseOutputs": {"plan": "Plan for {{issueTitle}}"}});
        // Pass 4 reads what pass 0 inserted.
        assert_eq!(text("${plan.output}", c.clone()), "Plan for Add a flag");
        assert_eq!(text("{{#if issueTitle}}yes{{/if}}{{#if !issueTitle}}no{{/if}}", c.clone()), "yes");
        assert_eq!(text("{{slugify issueTitle}}", c.clone()), "add-a-flag");
        // Unknown helpers, spaced tags and `{{else}}` (the missing key `else`).
        assert_eq!(text("{{upper issueTitle}} {{ issueTitle }}", c.clone()), "{{upper issueTitle}} {{ issueTitle }}");
        assert_eq!(text("{{#if issueTitle}}a{{else}}b{{/if}}", c.clone()), "ab");
        // Triple braces keep the outer ones.
        assert_eq!(text("{{{issueTitle}}}", c.clone()), "{Add a flag}");
        // A missing phase output, and no pass 0 at all without phase outputs.
        assert_eq!(text("[${nope.output}]", c), "[]");
        assert_eq!(text("[${nope.output}]", json!({})), "[${nope.output}]");
    }

    #[test]
    fn if_blocks_do_not_nest() {
        let c = json!({"a": true, "b": false});
        // The inner `{{/if}}` closes the outer block; the outer one is left over.
        assert_eq!(text("{{#if a}}x{{#if b}}y{{/if}}z{{/if}}", c), "x{{#if b}}yz{{/if}}");
    }

    #[test]
    fn dotted_reads_walk_objects_and_arrays() {
        let c = json!({"issueLabels": ["bug", "ui"], "models": {"pr-fix": "m"}, "phaseOutputs": {"review": {"approved": true, "cycles": 1}}});
        assert_eq!(
            text("{{issueLabels.length}} {{issueLabels.1}} {{issueLabels}}", c.clone()),
            "2 ui [\"bug\",\"ui\"]"
        );
        assert_eq!(
            text("{{review.approved}}/{{review.cycles}} ${review.output}", c.clone()),
            "true/1 {\"approved\":true,\"cycles\":1}"
        );
        assert_eq!(text("{{models.pr-fix}}", c.clone()), "m");
        assert_eq!(render("{{models.pr-fix}}", &ctx(c), Engine::Seed).text, "{{models.pr-fix}}");
        assert_eq!(text("{{issueTitle.length}}", json!({"issueTitle": "abc"})), "");
    }

    #[test]
    fn branch_url_takes_the_last_closing_braces() {
        let c = json!({"owner": "o", "repo": "r", "branch": "lastlight/1-a b", "issueDir": ".lastlight/issue-1"});
        assert_eq!(
            text("{{branchUrl plan.md}}", c.clone()),
            "https://github.com/o/r/blob/lastlight%2F1-a%20b/.lastlight/issue-1/plan.md"
        );
        assert_eq!(
            text("{{branchUrl a}}b}} c", c),
            "https://github.com/o/r/blob/lastlight%2F1-a%20b/.lastlight/issue-1/a}}b c"
        );
        assert!(
            text("{{branchUrl x}}", json!({})).starts_with("https://github.com/undefined/undefined/blob/undefined/")
        );
    }

    #[test]
    fn marks_say_what_came_from_where() {
        let template = "Title: {{issueTitle}}\nPR: {{prTitle}}\n{{#each x}}";
        let rendered = render(template, &ctx(json!({"issueTitle": "T"})), Engine::Head);
        assert_eq!(rendered.text, "Title: T\nPR: \n{{#each x}}");
        let title = &rendered.marks[0];
        assert_eq!((title.range, title.origin, title.missing), (Some((7, 8)), Some(7), false));
        let missing: Vec<&str> = rendered.missing().map(|m| m.key.as_str()).collect();
        assert_eq!(missing, ["prTitle"]);
        assert_eq!(rendered.verbatim.len(), 1);
        assert_eq!(rendered.verbatim[0].text, "{{#each x}}");
        assert_eq!(rendered.verbatim[0].range, (14, 25));
        // A value inserted by pass 0 and replaced by pass 4 has no origin in the template.
        let rendered = render("${p.output}", &ctx(json!({"a": "A", "phaseOutputs": {"p": "{{a}}"}})), Engine::Head);
        assert_eq!(rendered.text, "A");
        assert_eq!(rendered.marks[1].origin, None);
        // A tag in a block the engine dropped is not in the text, nor is an empty value there.
        let rendered = render("{{#if no}}{{#each x}}{{/if}}", &ctx(json!({})), Engine::Head);
        assert!(rendered.verbatim.is_empty(), "{rendered:?}");
        let rendered = render("{{#if p}}${p.output}{{/if}}x", &ctx(json!({"phaseOutputs": {}})), Engine::Head);
        assert_eq!(rendered.text, "x");
        assert_eq!(rendered.missing().count(), 0, "{rendered:?}");
    }

    #[test]
    fn the_skills_nudge() {
        let c = ctx(json!({"owner": "o", "issueLabels": ["a"], "gone": null}));
        let skills = vec!["plan".to_string(), "review".to_string()];
        assert_eq!(
            skills_nudge(&skills, &c, Engine::Seed),
            "Use the **plan** skill to handle this request.\nRead `.agents/skills/plan/SKILL.md` for the full instructions; the other skills work the same way.\nOther skills available if you need them: review.\nContext:\nowner: o\nissueLabels: [\"a\"]"
        );
        assert_eq!(
            skills_nudge(&skills[..1], &c, Engine::Head),
            "Use the **plan** skill to handle this request.\nContext:\nowner: o\nissueLabels: [\"a\"]"
        );
    }
}
