//! `stagelint mcp` driven by a real MCP client (the official Rust SDK, `rmcp`) over the real
//! binary's standard input and output: the tool list, `check` on `examples/broken` (the same
//! findings as `stagelint check --format json`), `dry_run` on `examples/code-review`, `fix`
//! returning a diff and writing only when asked, bad arguments and a path outside the roots as
//! tool errors, roots from the client in both protocol generations (a `roots/list` request
//! before `2026-07-28`, an input-required result from it on).
// Roots are deprecated by SEP-2577 but are what the server reads (`src/cli/mcp.rs`).
#![allow(deprecated)]

mod common;

use std::path::{Path, PathBuf};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation, ListRootsResult,
    ProtocolVersion, Root,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};

use common::{repo, stagelint};

/// A client that declares `roots` (or not) and answers with `roots`, speaking `version`.
struct Client {
    roots: Option<Vec<PathBuf>>,
    version: ProtocolVersion,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let capabilities = match self.roots {
            Some(_) => ClientCapabilities::builder().enable_roots().build(),
            None => ClientCapabilities::default(),
        };
        let mut config = ClientConfig::new(capabilities, Implementation::new("stagelint-test", "0"));
        config.protocol_version = self.version.clone();
        config
    }

    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        let roots = self.roots.iter().flatten().map(|p| Root::new(format!("file://{}", p.display()))).collect();
        Ok(ListRootsResult::new(roots))
    }
}

async fn start(
    cwd: &Path,
    roots: Option<Vec<PathBuf>>,
    version: ProtocolVersion,
) -> RunningService<RoleClient, Client> {
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_stagelint")).configure(|cmd| {
        cmd.arg("mcp").current_dir(cwd);
    });
    let transport = TokioChildProcess::new(command).expect("the server starts");
    Client { roots, version }.serve(transport).await.expect("the client connects")
}

async fn call(client: &RunningService<RoleClient, Client>, tool: &'static str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else { panic!("arguments are an object") };
    client.call_tool(CallToolRequestParams::new(tool).with_arguments(arguments)).await.expect("the call is answered")
}

fn error_text(result: &CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    serde_json::to_string(&result.content).unwrap()
}

#[tokio::test]
async fn tools_check_explain_dry_run_and_rules() {
    let root = std::fs::canonicalize(repo()).unwrap();
    let client = start(&root, Some(vec![root.clone()]), ProtocolVersion::LATEST).await;
    let tools = client.list_all_tools().await.expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["check", "explain", "dry_run", "fix", "rules"]);
    assert!(tools.iter().all(|t| t.description.as_ref().is_some_and(|d| d.len() > 80)), "descriptions for an agent");

    // `check` gives what `stagelint check --format json` gives.
    let result = call(&client, "check", json!({"paths": ["examples/broken"]})).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let found = result.structured_content.expect("structured JSON");
    let cli = stagelint(&["check", "examples/broken", "--format", "json"], &root);
    let wanted: Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(found, wanted);
    assert!(found["diagnostics"].as_array().unwrap().iter().any(|d| d["code"] == "sm/EntryStageMissing"));

    let explained = call(&client, "explain", json!({"topic": "sm/unknowntool"})).await;
    let text = explained.structured_content.expect("the doc")["text"].as_str().unwrap().to_string();
    assert!(text.starts_with("`sm/unknowntool` is reported as `sm/UnknownTool`."), "{text}");

    let run = call(&client, "dry_run", json!({"path": "examples/code-review"})).await;
    let run = run.structured_content.expect("structured JSON");
    assert_eq!(run["exitCode"], 0, "{run}");
    assert_eq!(run["title"], "machine code-review");
    let events = run["events"].as_array().unwrap();
    assert_eq!(events[0]["event"], "MachineStart");
    assert_eq!(events.last().unwrap()["event"], "DryRunSummary");
    assert!(run["timeline"].as_str().unwrap().contains("Result: expectations 26/26 ✓"), "{}", run["timeline"]);

    // The other engines answer the same tool: a climpt agent and a Last Light workflow.
    for (path, title) in
        [("examples/climpt/.agent/fixer", "agent fixer"), ("examples/lastlight/workflows/build.yaml", "workflow build")]
    {
        let run = call(&client, "dry_run", json!({"path": path})).await.structured_content.expect("structured JSON");
        assert_eq!((&run["exitCode"], &run["title"]), (&json!(0), &json!(title)), "{run}");
    }

    let rules = call(&client, "rules", json!({})).await.structured_content.unwrap();
    let codes: Vec<&str> = rules["rules"].as_array().unwrap().iter().map(|r| r["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"sm/UnknownTool") && codes.contains(&"stagelint/BaselineStale"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn paths_outside_the_roots_and_bad_arguments_are_tool_errors() {
    let root = std::fs::canonicalize(repo().join("examples/code-review")).unwrap();
    let client = start(&root, Some(vec![root.clone()]), ProtocolVersion::LATEST).await;
    let outside = repo().join("examples/broken").display().to_string();
    let refused = call(&client, "check", json!({"paths": [outside]})).await;
    assert!(error_text(&refused).contains("is outside the roots"), "{refused:?}");
    let refused = call(&client, "dry_run", json!({"path": "../broken/dry-run/plan.md"})).await;
    assert!(error_text(&refused).contains("is outside the roots"));
    for (tool, arguments, wanted) in [
        ("check", json!({"paths": 42}), "`paths` of `check` is a list of strings"),
        ("check", json!({"path": "x"}), "`check` takes no argument `path`"),
        ("dry_run", json!({}), "`dry_run` needs `path`"),
        ("dry_run", json!({"path": "nope.md"}), "nope.md: no such file or directory"),
        ("explain", json!({"topic": "sm/NoSuchRule"}), "unknown rule code or topic"),
        ("fix", json!({"apply": "yes"}), "`apply` of `fix` is true or false"),
        ("lint", json!({}), "unknown tool `lint`"),
    ] {
        let result = call(&client, tool, arguments).await;
        assert!(error_text(&result).contains(wanted), "{tool}: {result:?}");
    }
    // The server is still there.
    let clean = call(&client, "check", json!({})).await.structured_content.unwrap();
    assert_eq!(clean["summary"]["files"], 8);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn fix_returns_a_diff_and_writes_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let stage = "---\nid: plan\nname: Plan\nallowedTools: [Read]\ncompletionTool: submit_plan\ncompletionSchema: { type: object }\nretryPolicy: { maxAttempts: 1, backoff: none }\nturnCap: \"5\"\nresolutionPolicy: retry-later\n---\n\nTask: {{ctx.task}}. Call submit_plan.\n";
    std::fs::write(root.join("plan.md"), stage).unwrap();
    // Without roots from the client: the working directory.
    let client = start(&root, None, ProtocolVersion::LATEST).await;
    let dry = call(&client, "fix", json!({})).await.structured_content.unwrap();
    assert_eq!(dry["applied"], 1, "{dry}");
    assert!(dry["diff"].as_str().unwrap().contains("-turnCap: \"5\"\n+turnCap: 5\n"), "{dry}");
    assert_eq!(std::fs::read_to_string(root.join("plan.md")).unwrap(), stage, "nothing written");
    let applied = call(&client, "fix", json!({"paths": ["plan.md"], "apply": true})).await.structured_content.unwrap();
    assert_eq!(applied["written"], true);
    assert_eq!(applied["remaining"], json!([]));
    assert!(std::fs::read_to_string(root.join("plan.md")).unwrap().contains("turnCap: 5\n"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn roots_come_from_the_client_in_both_protocol_generations() {
    let root = std::fs::canonicalize(repo().join("examples/code-review")).unwrap();
    // The server starts elsewhere: only the roots let it find `plan.md`.
    let elsewhere = std::fs::canonicalize(repo().join("examples/climpt")).unwrap();
    for version in [ProtocolVersion::V_2025_06_18, ProtocolVersion::LATEST] {
        let client = start(&elsewhere, Some(vec![root.clone()]), version.clone()).await;
        let result = call(&client, "check", json!({"paths": ["plan.md"]})).await;
        assert_eq!(result.is_error, Some(false), "{version:?}: {result:?}");
        assert_eq!(result.structured_content.unwrap()["summary"]["files"], 1, "{version:?}");
        client.cancel().await.unwrap();
    }
}
