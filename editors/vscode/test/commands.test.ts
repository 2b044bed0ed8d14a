import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  CLIENT_COMMANDS,
  createHandlers,
  DRY_RUN,
  DRY_RUN_CURRENT_FILE,
  dryRunParams,
  EXPLAIN,
  executeCommandMiddleware,
  INVALID_PARAMS,
  parseDryRunResult,
  RESTART_ACTION,
  RESTART_SERVER,
  ruleDocumentText,
  SHOW_OUTPUT,
  SHOW_OUTPUT_ACTION,
  summaryMessage,
  uriArgument,
} from "../src/commands";
import { fakeHost } from "./fakeHost";

const STAGE = { uri: "file:///work/flows/plan.md", scheme: "file", languageId: "markdown" };

/** What stagelint answers (src/lsp/dry_run.rs). */
const PASSED = {
  title: "sm",
  exitCode: 0,
  expectations: { passed: 26, failed: 0 },
  summary: "stagelint dry-run sm: passed · expectations 26/26 · findings 0",
  report: "/tmp/stagelint-dry-run/sm.txt",
};

describe("the executeCommand request", () => {
  test("stagelint.dryRun with the file URI as its only argument", () => {
    assert.deepEqual(dryRunParams(STAGE.uri), { command: "stagelint.dryRun", arguments: [STAGE.uri] });
  });

  test("a URI argument: a string, or a vscode.Uri-like object", () => {
    assert.equal(uriArgument(["file:///a.md"]), "file:///a.md");
    assert.equal(uriArgument([{ scheme: "file", toString: () => "file:///b.md" }]), "file:///b.md");
    assert.equal(uriArgument([]), undefined);
    assert.equal(uriArgument([""]), undefined);
    assert.equal(uriArgument([42]), undefined);
  });
});

describe("the dry-run answer", () => {
  test("parsed as the server sends it", () => {
    assert.deepEqual(parseDryRunResult(PASSED), PASSED);
  });

  test("a missing report is null, missing counts are 0; no exit code is no answer", () => {
    assert.deepEqual(parseDryRunResult({ exitCode: 2, report: null }), {
      title: "",
      exitCode: 2,
      expectations: { passed: 0, failed: 0 },
      summary: "",
      report: null,
    });
    assert.equal(parseDryRunResult(null), undefined);
    assert.equal(parseDryRunResult({ summary: "x" }), undefined);
    assert.equal(parseDryRunResult([1]), undefined);
  });

  test("the summary: the server's line, at a level from the exit code", () => {
    assert.deepEqual(summaryMessage(PASSED), { level: "info", text: PASSED.summary });
    assert.equal(summaryMessage({ ...PASSED, exitCode: 1 }).level, "warning");
    assert.equal(summaryMessage({ ...PASSED, exitCode: 2 }).level, "error");
  });

  test("the summary without the server's line is built from the counts", () => {
    const result = { title: "plan", exitCode: 1, expectations: { passed: 3, failed: 1 }, summary: "", report: null };
    assert.deepEqual(summaryMessage(result), { level: "warning", text: "stagelint dry-run plan: mismatch · expectations 3/4" });
    assert.equal(summaryMessage({ ...result, exitCode: 2, title: "" }).text, "stagelint dry-run: authoring error · expectations 3/4");
  });
});

describe("stagelint: Dry-run Current File", () => {
  test("sends workspace/executeCommand for the active file and shows the summary", async () => {
    const host = fakeHost({ document: STAGE, answer: async () => PASSED });
    const result = await createHandlers(host)[DRY_RUN_CURRENT_FILE]();
    assert.deepEqual(result, PASSED);
    assert.deepEqual(host.requests, [{ method: "workspace/executeCommand", params: dryRunParams(STAGE.uri) }]);
    assert.deepEqual(host.statuses, [PASSED.summary]);
    assert.ok(host.logs.some((line) => line.includes(PASSED.summary) && line.includes(PASSED.report)));
    // The server already raised the notification and opened the report.
    assert.deepEqual(host.notifications, []);
  });

  test("a URI argument wins over the active editor", async () => {
    const host = fakeHost({ document: STAGE, answer: async () => PASSED });
    await createHandlers(host)[DRY_RUN_CURRENT_FILE]("file:///work/flows/sm.yaml");
    assert.deepEqual(host.requests[0].params, dryRunParams("file:///work/flows/sm.yaml"));
  });

  test("no editor: a warning, no request", async () => {
    const host = fakeHost();
    assert.equal(await createHandlers(host)[DRY_RUN_CURRENT_FILE](), undefined);
    assert.equal(host.requests.length, 0);
    assert.equal(host.notifications[0].level, "warning");
    assert.match(host.notifications[0].message, /open a stage definition/);
  });

  test("an untitled document: a warning, no request", async () => {
    const host = fakeHost({ document: { uri: "untitled:Untitled-1", scheme: "untitled", languageId: "markdown" } });
    await createHandlers(host)[DRY_RUN_CURRENT_FILE]();
    assert.equal(host.requests.length, 0);
    assert.match(host.notifications[0].message, /saved on disk/);
  });

  test("server not running: an error offering a restart", async () => {
    const host = fakeHost({ document: STAGE, running: false, pick: RESTART_ACTION });
    await createHandlers(host)[DRY_RUN_CURRENT_FILE]();
    assert.equal(host.requests.length, 0);
    assert.deepEqual(host.notifications[0].actions, [RESTART_ACTION, SHOW_OUTPUT_ACTION]);
    assert.equal(host.restarts, 1);
  });

  test("a dry-run the server refused (invalid params): status bar only, the server showed why", async () => {
    const error = { code: INVALID_PARAMS, message: "no cassette: pass --cassette" };
    const host = fakeHost({ document: STAGE, answer: () => Promise.reject(error) });
    assert.equal(await createHandlers(host)[DRY_RUN_CURRENT_FILE](), undefined);
    assert.deepEqual(host.statuses, ["stagelint dry-run failed: no cassette: pass --cassette"]);
    assert.deepEqual(host.notifications, []);
  });

  test("any other failure is a notification that can open the output", async () => {
    const host = fakeHost({ document: STAGE, answer: () => Promise.reject(new Error("connection closed")), pick: SHOW_OUTPUT_ACTION });
    await createHandlers(host)[DRY_RUN_CURRENT_FILE]();
    assert.equal(host.notifications[0].level, "error");
    assert.equal(host.notifications[0].message, "stagelint dry-run failed: connection closed");
    assert.equal(host.outputShown, 1);
  });

  test("an answer of the wrong shape is logged", async () => {
    const host = fakeHost({ document: STAGE, answer: async () => "surprise" });
    assert.equal(await createHandlers(host)[DRY_RUN_CURRENT_FILE](), undefined);
    assert.match(host.logs[0], /unexpected answer "surprise"/);
    assert.deepEqual(host.statuses, []);
  });
});

describe("the other commands", () => {
  test("one handler per client command", () => {
    assert.deepEqual(Object.keys(createHandlers(fakeHost())).sort(), [...CLIENT_COMMANDS].sort());
  });

  test("restart and show output", async () => {
    const host = fakeHost();
    const handlers = createHandlers(host);
    await handlers[RESTART_SERVER]();
    await handlers[SHOW_OUTPUT]();
    assert.equal(host.restarts, 1);
    assert.equal(host.outputShown, 1);
  });

  test("the server's command is not a client command", () => {
    assert.ok(!(CLIENT_COMMANDS as readonly string[]).includes(DRY_RUN));
  });
});

describe("the code lens (executeCommand middleware)", () => {
  test("stagelint.dryRun goes to the server with the lens's arguments and is reported", async () => {
    const host = fakeHost({ answer: async () => PASSED });
    let nextCalled = false;
    const middleware = executeCommandMiddleware(host);
    const value = await middleware(DRY_RUN, ["file:///work/flows/sm.yaml"], () => {
      nextCalled = true;
    });
    assert.deepEqual(value, PASSED);
    assert.equal(nextCalled, false);
    assert.deepEqual(host.requests, [
      { method: "workspace/executeCommand", params: { command: DRY_RUN, arguments: ["file:///work/flows/sm.yaml"] } },
    ]);
    assert.deepEqual(host.statuses, [PASSED.summary]);
  });

  test("a failed lens dry-run resolves (no 'command failed' popup) and is reported once", async () => {
    const host = fakeHost({ answer: () => Promise.reject({ code: INVALID_PARAMS, message: "broken stage" }) });
    const value = await executeCommandMiddleware(host)(DRY_RUN, ["file:///x.md"], () => assert.fail("next"));
    assert.equal(value, undefined);
    assert.deepEqual(host.statuses, ["stagelint dry-run failed: broken stage"]);
    assert.deepEqual(host.notifications, []);
  });

  test("other commands take the client's own path", async () => {
    const host = fakeHost();
    const value = await executeCommandMiddleware(host)("other.command", [1], (command, args) => ({ command, args }));
    assert.deepEqual(value, { command: "other.command", args: [1] });
    assert.equal(host.requests.length, 0);
  });
});

describe("rule documents (stagelint: URIs a rule link opens)", () => {
  const uri = "stagelint:/docs/rules/sm/UnknownTool.md";

  test("the text is the page stagelint.explain answers for the URI", async () => {
    const host = fakeHost({ answer: async () => "# sm/UnknownTool\n\nAn allowedTools entry is not in the live tool set\n" });
    assert.match(await ruleDocumentText(host, uri), /^# sm\/UnknownTool\n/);
    assert.deepEqual(host.requests, [{ method: "workspace/executeCommand", params: { command: EXPLAIN, arguments: [uri] } }]);
  });

  test("a refusal or a server that is not running is said in the document", async () => {
    const refused = fakeHost({ answer: async () => Promise.reject(new Error("expected a rule code")) });
    assert.match(await ruleDocumentText(refused, uri), /No rule page for stagelint:.*expected a rule code/);
    const stopped = fakeHost({ running: false });
    assert.match(await ruleDocumentText(stopped, uri), /not running/);
    assert.deepEqual(stopped.requests, []);
  });
});
