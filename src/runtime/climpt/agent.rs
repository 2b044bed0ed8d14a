//! What the climpt engine needs of an agent, read from the files already in the workspace:
//! `steps_registry.json`, `agent.json`, the step output schemas (resolved as climpt's
//! `SchemaResolver` resolves them) and the C3L prompt files (named as breakdown names them).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json};

use crate::diagnostic::FileId;
use crate::workspace::Workspace;

/// climpt's `AGENT_LIMITS.FALLBACK_MAX_ITERATIONS`: the bound when the verdict config has no
/// `maxIterations`.
const FALLBACK_MAX_ITERATIONS: u64 = 20;

/// `SchemaResolver.MAX_DEPTH`-like bound on `$ref` chains.
const MAX_REF_DEPTH: usize = 32;

/// An agent as the engine runs it.
pub struct Agent<'w> {
    pub workspace: &'w Workspace,
    /// The agent directory (`.agent/<id>`).
    pub dir: PathBuf,
    /// `steps_registry.json`.
    pub registry_file: FileId,
    pub registry: Json,
    /// `agent.json` (`Null` when there is none).
    pub definition: Json,
}

impl<'w> Agent<'w> {
    /// Loads the agent of registry `registry_file`; `Err` says why the registry does not load.
    pub fn load(workspace: &'w Workspace, registry_file: FileId) -> Result<Agent<'w>, String> {
        let file = workspace.file(registry_file);
        let registry: Json = serde_json::from_str(file.text.trim_start_matches('\u{feff}'))
            .map_err(|e| format!("the registry is not valid JSON ({e})"))?;
        if !registry.is_object() {
            return Err("the registry is not a JSON object".into());
        }
        for key in ["agentId", "version", "steps"] {
            if registry.get(key).is_none() {
                return Err(format!("the registry has no `{key}` (climpt: SR-LOAD-001)"));
            }
        }
        if !registry["steps"].is_object() {
            return Err("`steps` is not an object (climpt: SR-LOAD-001)".into());
        }
        let dir = file.path.parent().map(Path::to_path_buf).unwrap_or_default();
        let agent = workspace.file_at(&dir.join("agent.json"));
        let definition = agent
            .and_then(|f| serde_json::from_str::<Json>(f.text.trim_start_matches('\u{feff}')).ok())
            .unwrap_or(Json::Null);
        Ok(Agent { workspace, dir, registry_file, registry, definition })
    }

    pub fn id(&self) -> &str {
        self.registry["agentId"].as_str().unwrap_or("")
    }

    pub fn step(&self, id: &str) -> Option<&Json> {
        self.registry["steps"].get(id)
    }

    pub fn has_step(&self, id: &str) -> bool {
        self.step(id).is_some()
    }

    /// climpt's `inferStepKind`: `stepKind`, else from `c2` (`initial`/`continuation` work,
    /// `verification`, `closure`), else none (a `section`).
    pub fn kind(&self, id: &str) -> Option<&'static str> {
        let step = self.step(id)?;
        let explicit = step.get("stepKind").and_then(Json::as_str);
        let kind = explicit.or_else(|| step.get("c2").and_then(Json::as_str))?;
        match kind {
            "work" | "initial" | "continuation" => Some("work"),
            "verification" => Some("verification"),
            "closure" => Some("closure"),
            _ => None,
        }
    }

    /// `runner.verdict.type` of agent.json.
    pub fn verdict_type(&self) -> Option<&str> {
        self.definition.pointer("/runner/verdict/type").and_then(Json::as_str)
    }

    /// `runner.verdict.config`.
    pub fn verdict_config(&self) -> &Json {
        self.definition.pointer("/runner/verdict/config").unwrap_or(&Json::Null)
    }

    pub fn max_iterations(&self) -> u64 {
        self.verdict_config().get("maxIterations").and_then(Json::as_u64).unwrap_or(FALLBACK_MAX_ITERATIONS)
    }

    /// The entry step for `verdict_type` (`FlowOrchestrator.getStepIdForIteration(1)`).
    pub fn entry(&self, verdict_type: &str) -> Option<&str> {
        let mapped = self.registry.get("entryStepMapping").and_then(|m| m.get(verdict_type)).and_then(Json::as_str);
        mapped.or_else(|| self.registry.get("entryStep").and_then(Json::as_str))
    }

    /// The system prompt (`runner.flow.systemPromptPath`, default `prompts/system.md`) as the
    /// runner resolves it, as far as the dry-run knows: `{uv-agent_name}` filled from agent.json's
    /// `name`, `{uv-verdict_criteria}` (the verdict handler's text) left as written.
    pub fn system_prompt(&self) -> Option<(String, FileId)> {
        let path = self.definition.pointer("/runner/flow/systemPromptPath").and_then(Json::as_str);
        let path = crate::workspace::discover::normalize(&self.dir.join(path.unwrap_or("prompts/system.md")));
        let file = self.workspace.file_at(&path)?;
        let text = match self.definition.get("name").and_then(Json::as_str) {
            Some(name) => file.text.replace("{uv-agent_name}", name),
            None => file.text.clone(),
        };
        Some((text, file.id))
    }

    /// The schema file `file` (under `schemas/`), if it was read.
    pub fn schema_source(&self, file: &str) -> Option<FileId> {
        let path = crate::workspace::discover::normalize(&self.dir.join("schemas").join(file));
        self.workspace.file_at(&path).map(|f| f.id)
    }

    /// The C3L prompt file of `c2`/`c3`/`edition`/`adaptation` as breakdown names it:
    /// `prompts/<c1>/<c2>/<c3>/f_<edition>_<adaptation>.md` when an adaptation is given and that
    /// file exists, else `f_<edition>.md`. Returns the path tried and the file if it was read.
    pub fn prompt(
        &self,
        c2: &str,
        c3: &str,
        edition: &str,
        adaptation: Option<&str>,
    ) -> (PathBuf, Option<&'w crate::workspace::SourceFile>) {
        let c1 = self.registry.get("c1").and_then(Json::as_str).unwrap_or("steps");
        let dir = self.dir.join("prompts").join(c1).join(c2).join(c3);
        if let Some(adaptation) = adaptation {
            let path = dir.join(format!("f_{edition}_{adaptation}.md"));
            if let Some(file) = self.workspace.file_at(&path) {
                return (path, Some(file));
            }
        }
        let path = dir.join(format!("f_{edition}.md"));
        let file = self.workspace.file_at(&path);
        (path, file)
    }

    /// The schema `name` in `file` (under `schemas/`), resolved as climpt's `SchemaResolver`
    /// resolves it: every `$ref` inlined, `allOf` merged, and `additionalProperties: false` on
    /// every object schema that does not set it.
    pub fn schema(&self, file: &str, name: &str) -> Result<Json, String> {
        if name.starts_with("##") || name.contains("//") {
            return Err(format!("`{name}` is not a valid schema identifier (climpt: MalformedSchemaIdentifierError)"));
        }
        let path = self.dir.join("schemas").join(file);
        let document = self.schema_file(&path)?;
        let found = match name.strip_prefix('#') {
            Some(pointer) => document.pointer(pointer),
            None => ["definitions", "$defs"]
                .iter()
                .find_map(|section| document.get(*section).and_then(|d| d.get(name)))
                .or_else(|| document.get(name)),
        };
        let schema = found.ok_or_else(|| format!("`{name}` is not in schemas/{file}"))?.clone();
        self.resolve(schema, &path, 0)
    }

    fn schema_file(&self, path: &Path) -> Result<Json, String> {
        let path = crate::workspace::discover::normalize(path);
        let file = self.workspace.file_at(&path).ok_or_else(|| format!("{} was not read", path.display()))?;
        serde_json::from_str(file.text.trim_start_matches('\u{feff}'))
            .map_err(|e| format!("{} is not valid JSON ({e})", file.display))
    }

    fn resolve(&self, schema: Json, file: &Path, depth: usize) -> Result<Json, String> {
        if depth > MAX_REF_DEPTH {
            return Err("the `$ref` chain is too deep or circular (climpt: SchemaCircularReferenceError)".into());
        }
        match schema {
            Json::Array(items) => items
                .into_iter()
                .map(|item| self.resolve(item, file, depth))
                .collect::<Result<Vec<_>, _>>()
                .map(Json::Array),
            Json::Object(record) => {
                if let Some(target) = record.get("$ref").and_then(Json::as_str) {
                    let (file_part, pointer) = target.split_once('#').unwrap_or((target, ""));
                    let target_file = if file_part.is_empty() {
                        file.to_path_buf()
                    } else {
                        file.parent().unwrap_or(Path::new("")).join(file_part)
                    };
                    let document = self.schema_file(&target_file)?;
                    let found =
                        if pointer.is_empty() || pointer == "/" { Some(&document) } else { document.pointer(pointer) };
                    let found = found.ok_or_else(|| format!("`$ref` `{target}` does not resolve"))?.clone();
                    return self.resolve(found, &target_file, depth + 1);
                }
                if let Some(Json::Array(all_of)) = record.get("allOf") {
                    let mut merged = Map::new();
                    for part in all_of.clone() {
                        if let Json::Object(part) = self.resolve(part, file, depth + 1)? {
                            deep_merge(&mut merged, part);
                        }
                    }
                    for (key, value) in record {
                        if key != "allOf" {
                            let value = self.resolve(value, file, depth)?;
                            deep_merge(&mut merged, Map::from_iter([(key, value)]));
                        }
                    }
                    return Ok(closed(merged));
                }
                let mut resolved = Map::new();
                for (key, value) in record {
                    resolved.insert(key, self.resolve(value, file, depth)?);
                }
                Ok(closed(resolved))
            }
            other => Ok(other),
        }
    }
}

/// climpt's `deepMerge`: `required` lists united, `properties` merged (later wins), any other
/// key kept from the first schema that has it.
fn deep_merge(target: &mut Map<String, Json>, source: Map<String, Json>) {
    for (key, value) in source {
        match (key.as_str(), target.get_mut(&key), value) {
            ("required", Some(Json::Array(existing)), Json::Array(incoming)) => {
                for item in incoming {
                    if !existing.contains(&item) {
                        existing.push(item);
                    }
                }
            }
            ("properties", Some(Json::Object(existing)), Json::Object(incoming)) => existing.extend(incoming),
            (_, Some(_), _) => {}
            (_, None, value) => {
                target.insert(key, value);
            }
        }
    }
}

/// `ensureAdditionalPropertiesFalse`: an object schema (`type: object`, or with `properties`)
/// that does not set `additionalProperties` gets `false` (the SDK requires it).
fn closed(mut schema: Map<String, Json>) -> Json {
    let object = schema.get("type").and_then(Json::as_str) == Some("object") || schema.contains_key("properties");
    if object && !schema.contains_key("additionalProperties") {
        schema.insert("additionalProperties".into(), Json::Bool(false));
    }
    Json::Object(schema)
}
