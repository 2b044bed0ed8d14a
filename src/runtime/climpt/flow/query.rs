//! The model's side of an iteration: what it is sent (the prompt, the system prompt and the
//! output schema, each fingerprinted as a stage cassette fingerprints a request, and compared
//! with the fingerprints the cassette recorded: prompt drift) and the answer the cassette
//! recorded (checked against the output schema, its `stepId` corrected, kept for the steps after).

use std::rc::Rc;

use serde_json::{Value as Json, json};

use super::{Flow, Prompt};
use crate::cassette::digest::{canonical, fingerprint};
use crate::diagnostic::{Applicability, Diagnostic, Edit, FileId, Severity};
use crate::registry::cassette as rules;
use crate::runtime::climpt::cassette::Iteration;
use crate::source::{Node, Span};
use crate::template::secrets;

/// A step's output schema, resolved once per run as climpt resolves it, with its validator and
/// fingerprint.
pub(super) struct OutputSchema {
    /// `outputSchemaRef.file` (under `schemas/`) and `outputSchemaRef.schema`.
    file: String,
    name: String,
    source: Option<FileId>,
    validator: Option<jsonschema::Validator>,
    digest: String,
}

/// The resolution of a step's output schema: none declared, failed (why), or the schema.
pub(super) type Resolved = Option<Result<Rc<OutputSchema>, String>>;

/// One fingerprint of what an iteration sends: the component (`prompt`, `system`, `schema`),
/// the digest, the file it comes from, and what it is, for messages.
struct Sent {
    component: &'static str,
    digest: String,
    source: Option<FileId>,
    what: String,
}

impl Flow<'_> {
    /// Asks the model: `prompt` and the step's system prompt and output schema are sent
    /// (compared with what the iteration recorded as sent), and the recorded answer returned.
    pub(super) fn ask(&mut self, step: &str, recorded: &Iteration, prompt: &Prompt) -> Option<Json> {
        let schema = self.output_schema(step);
        if let Some(Err(why)) = &schema {
            self.emit("SchemaResolutionFailed", json!({"iteration": self.iterations, "step": step, "reason": why}));
        }
        let schema = schema.and_then(Result::ok);
        let sent = self.sent(step, prompt, schema.as_deref());
        self.drift(recorded, &sent);
        let request: serde_json::Map<String, Json> =
            sent.iter().map(|s| (s.component.to_string(), json!(s.digest))).collect();
        self.query(step, recorded, schema.as_deref(), Json::Object(request))
    }

    /// The model's answer for this iteration: validated against the step's output schema,
    /// its `stepId` corrected, recorded in the step context.
    fn query(
        &mut self,
        step: &str,
        recorded: &Iteration,
        schema: Option<&OutputSchema>,
        request: Json,
    ) -> Option<Json> {
        let Some((output, span)) = recorded.output.clone() else {
            self.emit(
                "QueryExecuted",
                json!({"iteration": self.iterations, "step": step, "request": request, "structuredOutput": null}),
            );
            return None;
        };
        if let Some(schema) = schema {
            self.check_schema(step, schema, &output, span, recorded.output_node.as_ref());
        }
        let mut output = output;
        if let Some(actual) = output.get("stepId").and_then(Json::as_str).map(str::to_string)
            && actual != step
        {
            output["stepId"] = Json::String(step.to_string());
            self.emit("StepIdCorrected", json!({"iteration": self.iterations, "from": actual, "to": step}));
        }
        self.emit(
            "QueryExecuted",
            json!({"iteration": self.iterations, "step": step, "request": request, "structuredOutput": output}),
        );
        let mut recorded_output = output.as_object().cloned().unwrap_or_default();
        recorded_output.insert("iteration".into(), json!(self.iterations));
        self.context.insert(step.to_string(), recorded_output);
        self.current = Some(step.to_string());
        self.last_output = Some((self.iterations, output.clone()));
        Some(output)
    }

    /// The output schema of `step` (`outputSchemaRef`), resolved the first time a run needs it.
    fn output_schema(&mut self, step: &str) -> Resolved {
        if let Some(resolved) = self.schemas.get(step) {
            return resolved.clone();
        }
        let reference = self.agent.step(step).and_then(|s| s.get("outputSchemaRef"));
        let file = reference.and_then(|r| r.get("file")).and_then(Json::as_str);
        let name = reference.and_then(|r| r.get("schema")).and_then(Json::as_str);
        let resolved = match (file, name) {
            (Some(file), Some(name)) => Some(self.agent.schema(file, name).map(|schema| {
                Rc::new(OutputSchema {
                    file: file.to_string(),
                    name: name.to_string(),
                    source: self.agent.schema_source(file),
                    validator: jsonschema::options().build(&schema).ok(),
                    digest: fingerprint(&canonical(&schema)),
                })
            })),
            _ => None,
        };
        self.schemas.insert(step.to_string(), resolved.clone());
        resolved
    }

    /// The fingerprints of what this iteration sends the model. Each is taken over redacted
    /// text, as a stage request's are: the prompt as the dry-run renders it (tags the runner
    /// fills stay as written), the system prompt file with the agent's name filled in, and the
    /// output schema as resolved (canonical JSON).
    fn sent(&mut self, step: &str, prompt: &Prompt, schema: Option<&OutputSchema>) -> Vec<Sent> {
        let mut out = vec![Sent {
            component: "prompt",
            digest: fingerprint(&secrets::redact(&prompt.text).0),
            source: prompt.file,
            what: match prompt.file {
                Some(file) => format!("the prompt of step `{step}` ({})", self.agent.workspace.file(file).display),
                None => format!("the retry prompt of step `{step}`"),
            },
        }];
        if self.system.is_none() {
            let system = self.agent.system_prompt().map(|(text, file)| (fingerprint(&secrets::redact(&text).0), file));
            self.system = Some(system);
        }
        if let Some(Some((digest, file))) = &self.system {
            let what = format!("the system prompt ({})", self.agent.workspace.file(*file).display);
            out.push(Sent { component: "system", digest: digest.clone(), source: Some(*file), what });
        }
        if let Some(schema) = schema {
            out.push(Sent {
                component: "schema",
                digest: schema.digest.clone(),
                source: schema.source,
                what: format!("the output schema of step `{step}` ({} `{}`)", schema.file, schema.name),
            });
        }
        out
    }

    /// Compares what is sent now with the fingerprints the iteration recorded: a warning per
    /// component that changed, an error under `--strict` or `match.onDrift: fail`, with a fix
    /// that accepts the new digest.
    fn drift(&mut self, recorded: &Iteration, sent: &[Sent]) {
        for (component, value, span) in &recorded.request {
            let Some(now) = sent.iter().find(|s| s.component == component) else { continue };
            if value.as_str() == Some(now.digest.as_str()) {
                continue;
            }
            let shown = value.as_str().map_or_else(|| value.to_string(), str::to_string);
            let message = format!(
                "prompt drift: {} changed since iteration {} was recorded (now {}, recorded {shown})",
                now.what, self.iterations, now.digest
            );
            let fails = self.strict || self.cassette.drift_fails;
            let help = if fails {
                "drift fails this replay (`--strict` or `match.onDrift: fail`); re-record the iteration, or accept the new digest"
            } else {
                "the recorded output still answers this iteration, so drift alone does not fail a dry-run; re-record the iteration, or accept the new digest"
            };
            let mut finding = Diagnostic::new(rules::RequestDrift, self.cassette_file, *span, message)
                .with_severity(if fails { Severity::Error } else { Severity::Warning })
                .with_fix(
                    "Accept the new digest",
                    Applicability::Unsafe,
                    vec![Edit { span: *span, replacement: format!("\"{}\"", now.digest) }],
                )
                .with_help(help);
            if let Some(file) = now.source {
                finding = finding.with_related(file, Span::empty(0), format!("{} comes from here", now.component));
            }
            self.findings.push(finding);
        }
    }

    /// The SDK returns only output its structured-output schema accepts: a recorded output the
    /// schema rejects could not have been returned.
    fn check_schema(&mut self, step: &str, schema: &OutputSchema, output: &Json, span: Span, node: Option<&Node>) {
        let Some(validator) = &schema.validator else { return };
        let mut first_span = None;
        let errors: Vec<String> = validator
            .iter_errors(output)
            .map(|e| {
                let at = e.instance_path().to_string();
                // The part of the output at fault: an unexpected property's key, else the value.
                let mut text = e.to_string();
                let extra = match e.kind() {
                    jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => {
                        unexpected.first().cloned()
                    }
                    // An object schema with no `properties`, to which climpt added
                    // `additionalProperties: false`: the validator names the object and the
                    // value of one property; say which property.
                    jsonschema::error::ValidationErrorKind::FalseSchema => {
                        let object = output.pointer(&at).and_then(Json::as_object);
                        let key = object.and_then(|o| o.iter().find(|(_, v)| *v == e.instance().as_ref()));
                        key.map(|(key, _)| {
                            text =
                                format!("property `{key}` is not allowed (its object's schema lists no such property)");
                            key.clone()
                        })
                    }
                    _ => None,
                };
                let part = node.and_then(|n| match &extra {
                    Some(key) => n.pointer(&at).and_then(|o| o.entry(key)).map(|entry| entry.key.span),
                    None => n.pointer(&at).map(|v| v.span),
                });
                first_span = first_span.or(part);
                if at.is_empty() { text } else { format!("{at}: {text}") }
            })
            .collect();
        let span = first_span.unwrap_or(span);
        let (file, name) = (&schema.file, &schema.name);
        // `file#name`, or `file#/pointer` when the name is a pointer (`#/definitions/…`).
        let reference = format!("{file}#{}", name.strip_prefix('#').unwrap_or(name));
        self.emit(
            "OutputValidated",
            json!({"iteration": self.iterations, "step": step, "schema": reference, "valid": errors.is_empty(), "errors": errors}),
        );
        if let Some(first) = errors.first() {
            let more = if errors.len() > 1 { format!(" (and {} more)", errors.len() - 1) } else { String::new() };
            let message = format!(
                "step `{step}`'s output schema ({file} `{name}`, with the `additionalProperties: false` climpt adds) rejects this output: {first}{more}; the model cannot return it"
            );
            self.findings.push(Diagnostic::new(rules::OutputRejected, self.cassette_file, span, message));
            self.rejected = Some(self.iterations);
        }
    }
}
