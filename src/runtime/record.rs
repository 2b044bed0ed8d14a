//! Live recording (cargo feature `record`): a [`Provider`] that calls a real API, non-streaming.
//!
//! Wrap it in [`crate::runtime::turns::Recorder`] to save the run as cassette turns. Headers
//! (and so the API key) are never recorded; the optional raw sidecar holds request and response
//! bodies only, one `{"request", "response"}` line per call, which `cassette import` reads back.

use std::io::Write;
use std::time::Duration;

use serde_json::{Value, json};

use crate::cassette::provider::{Provider, ProviderError, Request, Response};
use crate::runtime::wire::{WireError, WireFormat, api_error, error_body};

pub struct LiveProvider {
    /// Base URL, e.g. `https://api.anthropic.com`; the API path (`/v1/messages`, …) is appended.
    pub endpoint: String,
    pub api: WireFormat,
    pub model: String,
    pub api_key: Option<String>,
    agent: ureq::Agent,
    raw: Option<Box<dyn Write + Send>>,
    /// Redact secrets in the raw sidecar (on unless `--no-redact`); counted in `redacted`.
    pub redact: bool,
    pub redacted: usize,
}

impl LiveProvider {
    /// Refuses when the `CI` environment variable is set and the endpoint is not on this machine:
    /// CI replays shipped cassettes and must never reach a real provider.
    pub fn new(endpoint: &str, api: WireFormat, model: &str, api_key: Option<String>) -> Result<LiveProvider, String> {
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
        check_endpoint(endpoint, ci)?;
        // A `/v1` suffix is dropped so both `https://api.openai.com` and `…/v1` work.
        let endpoint = endpoint.trim_end_matches('/');
        let endpoint = endpoint.strip_suffix("/v1").unwrap_or(endpoint).to_string();
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(600)))
            .build();
        Ok(LiveProvider {
            endpoint,
            api,
            model: model.into(),
            api_key,
            agent: ureq::Agent::new_with_config(config),
            raw: None,
            redact: true,
            redacted: 0,
        })
    }

    /// Also write every request and response body to `sink`, one JSON line per call.
    pub fn keep_raw(&mut self, sink: Box<dyn Write + Send>) {
        self.raw = Some(sink);
    }

    fn post(&self, body: &Value) -> Result<(u16, String), ProviderError> {
        let url = format!("{}{}", self.endpoint, self.api.path());
        let mut request = self.agent.post(&url).header("content-type", "application/json");
        if let Some(key) = &self.api_key {
            request = match self.api {
                WireFormat::AnthropicMessages => request.header("x-api-key", key),
                _ => request.header("authorization", &format!("Bearer {key}")),
            };
        }
        if self.api == WireFormat::AnthropicMessages {
            request = request.header("anthropic-version", "2023-06-01");
        }
        let mut response = request.send(body.to_string()).map_err(|error| {
            let code = match error {
                ureq::Error::Timeout(_) => "timeout",
                ureq::Error::Io(_) | ureq::Error::ConnectionFailed | ureq::Error::HostNotFound => "connection_failed",
                _ => "http_client_error",
            };
            transient(code)
        })?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().map_err(|_| transient("unreadable_body"))?;
        Ok((status, text))
    }
}

/// `Ok` when `endpoint` is an http(s) URL that may be used (`ci`: only this machine).
pub fn check_endpoint(endpoint: &str, ci: bool) -> Result<(), String> {
    let rest = endpoint
        .strip_prefix("http://")
        .or_else(|| endpoint.strip_prefix("https://"))
        .ok_or_else(|| format!("endpoint `{endpoint}` must start with http:// or https://"))?;
    let authority = rest.split('/').next().unwrap_or_default();
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    };
    if host.is_empty() {
        return Err(format!("endpoint `{endpoint}` has no host"));
    }
    let local = matches!(host, "127.0.0.1" | "localhost" | "::1");
    if ci && !local {
        return Err(format!(
            "refusing to call `{host}` because CI is set: CI replays shipped cassettes; record on a workstation, or point the endpoint at 127.0.0.1"
        ));
    }
    Ok(())
}

fn transient(code: &str) -> ProviderError {
    ProviderError { class: "ProviderTransient".into(), code: code.into() }
}

impl Provider for LiveProvider {
    fn respond(&mut self, request: &Request) -> Result<Response, ProviderError> {
        let body = self.api.request_body(request, &self.model);
        let (status, text) = self.post(&body)?;
        let parsed = serde_json::from_str::<Value>(&text);
        if let Some(raw) = &mut self.raw {
            let response = parsed.as_ref().cloned().unwrap_or_else(|_| Value::String(text.clone()));
            // The sidecar is a debugging aid: failing to write it must not fail the run.
            let mut line = json!({"request": body, "response": response});
            if self.redact {
                self.redacted += crate::template::secrets::redact_json(&mut line);
            }
            let _ = writeln!(raw, "{line}");
        }
        let ok = (200..300).contains(&status);
        let Ok(parsed) = parsed else {
            let code = if ok { "invalid_json" } else { &format!("http_{status}") };
            return Err(api_error(code, Some(status)));
        };
        if !ok {
            return Err(
                error_body(&parsed, Some(status)).unwrap_or_else(|| api_error(&format!("http_{status}"), Some(status)))
            );
        }
        self.api.parse_response(&parsed).map_err(|error| match error {
            WireError::Api(error) => error,
            WireError::Shape(_) => api_error("unexpected_response", Some(status)),
        })
    }
}
