// Against the real `stagelint lsp`, when a binary is at hand (STAGELINT_BIN, `stagelint` on
// PATH, or the repository's target/debug/stagelint): the server offers the command the lens
// uses, the lens carries the file's URI, and the commands' requests get the answer they parse.
// Skipped, with a note, when there is no binary.
import assert from "node:assert/strict";
import { ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";

import { nodeFileSystem, resolveBinary, serverExecutable } from "../src/binary";
import {
  DRY_RUN,
  DRY_RUN_CURRENT_FILE,
  createHandlers,
  executeCommandMiddleware,
  INITIALIZATION_OPTIONS,
  ruleDocumentText,
  SERVER_COMMANDS,
} from "../src/commands";
import { fakeHost } from "./fakeHost";

const repo = join(__dirname, "..", "..", "..");
const folder = join(repo, "examples", "code-review");
const machine = join(folder, "sm.yaml");
const brokenStage = join(repo, "examples", "broken", "dry-run", "plan.md");

function findBinary(): string | undefined {
  const de = { platform: process.platform, env: process.env, homedir: homedir(), workspaceFolder: repo };
  // STAGELINT_BIN alone when set; else `stagelint` on PATH, else the repository's debug build.
  const settings = process.env.STAGELINT_BIN ? [process.env.STAGELINT_BIN] : ["", "target/debug/stagelint"];
  for (const setting of settings) {
    const found = resolveBinary(setting, de, nodeFileSystem);
    if (found.ok) {
      return found.command;
    }
  }
  return undefined;
}

const binary = findBinary();

/** Waits up to 5 s for `condition`. */
async function eventually(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !condition(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.ok(condition(), String(condition));
}

describe("with stagelint lsp", { skip: binary === undefined ? "no stagelint binary (set STAGELINT_BIN)" : false, timeout: 120_000 }, () => {
  let server: ChildProcess;
  let connection: MessageConnection;
  let capabilities: Record<string, any>;
  const shown: string[] = [];
  const messages: string[] = [];

  before(async () => {
    const { command, args } = serverExecutable(binary!);
    server = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
    connection = createMessageConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
    connection.onRequest((method: string, params: any) => {
      if (method === "window/showDocument") {
        shown.push(params.uri);
        return { success: true };
      }
      return null;
    });
    connection.onNotification((method: string, params: any) => {
      if (method === "window/showMessage") {
        messages.push(params.message);
      }
    });
    connection.listen();
    const result: any = await connection.sendRequest("initialize", {
      processId: process.pid,
      rootUri: pathToFileURL(folder).href,
      workspaceFolders: [{ uri: pathToFileURL(folder).href, name: "code-review" }],
      capabilities: {
        window: { showDocument: { support: true }, workDoneProgress: true },
        workspace: { executeCommand: { dynamicRegistration: true }, workspaceFolders: true },
        textDocument: { codeLens: { dynamicRegistration: true }, synchronization: { didSave: true } },
      },
      initializationOptions: INITIALIZATION_OPTIONS,
    });
    capabilities = result.capabilities;
    await connection.sendNotification("initialized", {});
  });

  after(async () => {
    try {
      await connection.sendRequest("shutdown");
      await connection.sendNotification("exit");
    } catch {
      // already gone
    }
    connection.dispose();
    server.kill();
  });

  test("a rule document shows the server's page of the rule, as `stagelint explain` prints it", async () => {
    const host = fakeHost({ answer: (method, params) => connection.sendRequest(method, params) });
    const text = await ruleDocumentText(host, "stagelint:/docs/rules/sm/UnknownTool.md");
    assert.equal(text, readFileSync(join(repo, "docs", "rules", "sm", "UnknownTool.md"), "utf8"));
    assert.match(await ruleDocumentText(host, "stagelint:/docs/rules/sm/Nope.md"), /^No rule page for/);
  });

  test("the server executes stagelint.dryRun and stagelint.previewPrompt and offers code lenses", () => {
    assert.deepEqual(capabilities.executeCommandProvider.commands, [...SERVER_COMMANDS]);
    assert.ok(capabilities.codeLensProvider);
  });

  test("the ▶ Dry-run lens runs through the middleware: summary, report opened", async () => {
    const uri = pathToFileURL(machine).href;
    await connection.sendNotification("textDocument/didOpen", {
      textDocument: { uri, languageId: "yaml", version: 1, text: readFileSync(machine, "utf8") },
    });
    let lenses: any[] = [];
    for (let i = 0; i < 100 && lenses.length === 0; i++) {
      lenses = ((await connection.sendRequest("textDocument/codeLens", { textDocument: { uri } })) as any[]) ?? [];
      if (lenses.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    assert.ok(lenses.length > 0, "no code lens on sm.yaml");
    const { command, arguments: args } = lenses[0].command;
    assert.equal(command, DRY_RUN);
    // The file, then the cassette this lens replays (a stage may have several).
    assert.deepEqual(args, [uri, pathToFileURL(join(dirname(machine), "sm.cassette.yaml")).href]);

    const host = fakeHost({ answer: (method, params) => connection.sendRequest(method, params) });
    const value: any = await executeCommandMiddleware(host)(command, args, () => assert.fail("next"));
    assert.equal(value.exitCode, 0, JSON.stringify(value));
    assert.match(value.summary, /^stagelint dry-run .*: passed · expectations (\d+)\/\1/);
    assert.deepEqual(host.statuses, [value.summary]);
    assert.ok(existsSync(value.report), value.report);
    await eventually(() => shown.some((shownUri) => fileURLToPath(shownUri) === value.report));
    await eventually(() => messages.includes(value.summary));
  });

  test("a climpt registry's step lens runs through the middleware with its step", async () => {
    const agent = join(repo, "examples", "climpt", ".agent", "fixer");
    // Outside the workspace folder: the server dry-runs it because both files are open.
    for (const [file, languageId] of [["steps_registry.json", "json"], ["agent.cassette.yaml", "yaml"]]) {
      await connection.sendNotification("textDocument/didOpen", {
        textDocument: { uri: pathToFileURL(join(agent, file)).href, languageId, version: 1, text: readFileSync(join(agent, file), "utf8") },
      });
    }
    const uri = pathToFileURL(join(agent, "steps_registry.json")).href;
    let lenses: any[] = [];
    for (let i = 0; i < 100 && lenses.length < 4; i++) {
      lenses = ((await connection.sendRequest("textDocument/codeLens", { textDocument: { uri } })) as any[]) ?? [];
      if (lenses.length < 4) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    // The entry, then each step the cassette reaches.
    assert.deepEqual(
      lenses.map((lens) => lens.command.arguments[2] ?? null),
      [null, "initial.issue", "continuation.issue", "closure.issue"],
    );
    const { command, arguments: args } = lenses[2].command;
    const host = fakeHost({ answer: (method, params) => connection.sendRequest(method, params) });
    const value: any = await executeCommandMiddleware(host)(command, args, () => assert.fail("next"));
    assert.equal(value.exitCode, 0, JSON.stringify(value));
    assert.match(value.summary, /^stagelint dry-run agent fixer \(step continuation\.issue\): passed/);
  });

  test("Dry-run Current File on a stage whose cassette finds a mismatch", async () => {
    const uri = pathToFileURL(brokenStage).href;
    // The active editor's document is open: the server dry-runs only open documents and files
    // of the workspace folders, and this stage lies outside the folder.
    await connection.sendNotification("textDocument/didOpen", {
      textDocument: { uri, languageId: "markdown", version: 1, text: readFileSync(brokenStage, "utf8") },
    });
    const host = fakeHost({
      document: { uri, scheme: "file", languageId: "markdown" },
      answer: (method, params) => connection.sendRequest(method, params),
    });
    const result = await createHandlers(host)[DRY_RUN_CURRENT_FILE]();
    assert.ok(result, JSON.stringify(host.logs));
    const value = result as { exitCode: number; summary: string };
    assert.notEqual(value.exitCode, 0);
    assert.deepEqual(host.requests, [{ method: "workspace/executeCommand", params: { command: DRY_RUN, arguments: [uri] } }]);
    assert.deepEqual(host.statuses, [value.summary]);
  });

  test("a file without a cassette: the server refuses with invalid params and says why", async () => {
    // A lone stage: no cassette beside it and no state machine whose cassette could replay it.
    const lone = join(repo, "examples", "broken", "lone", "draft.md");
    const uri = pathToFileURL(lone).href;
    await connection.sendNotification("textDocument/didOpen", {
      textDocument: { uri, languageId: "markdown", version: 1, text: readFileSync(lone, "utf8") },
    });
    const host = fakeHost({
      document: { uri, scheme: "file", languageId: "markdown" },
      answer: (method, params) => connection.sendRequest(method, params),
    });
    assert.equal(await createHandlers(host)[DRY_RUN_CURRENT_FILE](), undefined);
    assert.equal(host.statuses.length, 1);
    assert.match(host.statuses[0], /^stagelint dry-run failed: .*no cassette/);
    assert.deepEqual(host.notifications, [], "the server already showed the reason");
    // The server's window/showMessage may arrive after its answer.
    await eventually(() => messages.some((m) => /no cassette/.test(m)));
  });
});
