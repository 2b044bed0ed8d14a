//! Recording: runs a stage with a live provider in place of the cassette's turns and writes
//! what happened as a new cassette. Tools still never run: the seed cassette's `tools:` answer
//! what they can and everything else gets a placeholder result to fill in. The written
//! cassette carries request fingerprints and the branches the runtime took as `expect:`, so
//! replaying it right away passes.

use serde_json::{Map, Value as Json, json};

use crate::cassette::StageCassette;
use crate::cassette::provider::Provider;
use crate::diagnostic::FileId;
use crate::families::sm::model::StageDoc;
use crate::runtime::run::{DryRun, Options};
use crate::runtime::stages::lifecycle::{Env, Live, Run};
use crate::runtime::stages::stage::StageSpec;
use crate::runtime::stages::{ending_of, finish_stages, optional_ctx, read_cassette};
use crate::workspace::Workspace;

/// Replaces every secret of a recorded cassette by its placeholder; returns how many.
/// Fingerprints are taken over redacted text, so the redacted cassette still replays green.
pub fn redact(cassette: &mut Json) -> usize {
    crate::template::secrets::redact_json(cassette)
}

/// Records stage `stage_file` against `provider`. `seed` is an existing cassette whose `ctx`,
/// `interactor` and `tools` are reused. Returns the run and the new cassette as JSON.
pub fn record_stage(
    workspace: &Workspace,
    stage_file: FileId,
    seed: Option<FileId>,
    provider: &mut dyn Provider,
    provenance: Json,
) -> Result<(DryRun, Json), String> {
    let file = workspace.file(stage_file);
    let doc = StageDoc::parse(file);
    let mut spec = StageSpec::read(&doc);
    spec.optional_ctx = optional_ctx(workspace, file);
    let (cassette, seed_json) = match seed {
        Some(id) => {
            let (cassette, problems) = read_cassette(workspace.file(id));
            if let Some(problem) = problems.first() {
                return Err(format!("{}: {}", workspace.file(id).display, problem.message));
            }
            let part = cassette.for_stage(&spec.id, 1).unwrap_or_else(|| cassette.stage.clone());
            (part, cassette.json.clone())
        }
        None => (StageCassette::default(), Json::Null),
    };
    let env = Env { cassette_file: stage_file, strict: false };
    let mut run = Run::new(env, &Json::Null);
    run.live = Some(Live { provider, recorded: Vec::new(), calls: 0 });
    let ctx = cassette.ctx.clone().map_or_else(|| json!({}), |(ctx, _)| ctx);
    let ended = run.stage(&spec, &cassette, ctx.clone(), 1);
    let recorded = run.live.take().map(|live| live.recorded).unwrap_or_default();
    let attempts: Vec<Json> = recorded
        .into_iter()
        .flat_map(|(_, attempts)| attempts)
        .enumerate()
        .map(|(i, turns)| json!({"attempt": i + 1, "turns": turns}))
        .collect();
    let mut out = Map::new();
    out.insert("cassette".into(), json!(1));
    out.insert("stage".into(), json!(spec.id));
    out.insert("provenance".into(), provenance);
    out.insert("ctx".into(), ctx);
    for key in ["interactor", "match", "tools"] {
        if let Some(value) = seed_json.get(key) {
            out.insert(key.into(), value.clone());
        }
    }
    out.insert("attempts".into(), Json::Array(attempts));
    let options = Options { strict: false, explain_init: true };
    let init_failed = matches!(ended, crate::runtime::stages::lifecycle::Ended::InitFailed);
    let stages = [stage_file];
    let explain = options.explain_init.then_some(&stages[..]);
    let title = format!("record stage {}", spec.id);
    let ending = ending_of(run, init_failed);
    Ok((finish_stages(workspace, ending, title, Some(stage_file), explain), Json::Object(out)))
}
