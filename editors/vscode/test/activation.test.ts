// extension.ts itself, bundled as for the .vsix and loaded with a stand-in `vscode` module: which
// commands activation registers, and what a user without the binary is told. (Starting the
// client needs the real editor; test/server.test.ts covers the server side of the wiring.)
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import Module from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { buildSync } from "esbuild";

import { missingBinaryMessage, OPEN_SETTINGS_ACTION, RETRY_ACTION } from "../src/binary";
import { CLIENT_COMMANDS, DRY_RUN, RESTART_SERVER, RULE_DOCUMENT_SCHEME } from "../src/commands";
import { SETTING_PATH } from "../src/settings";

const out = mkdtempSync(join(tmpdir(), "stagelint-vscode-"));
after(() => rmSync(out, { recursive: true, force: true }));

interface Recorded {
  commands: Map<string, (...args: unknown[]) => unknown>;
  providers: Map<string, { provideTextDocumentContent(uri: { toString(skipEncoding?: boolean): string }): unknown }>;
  executed: unknown[][];
  errors: { message: string; actions: string[] }[];
  answers: (string | undefined)[];
  settings: Record<string, unknown>;
}

/** Anything the language client touches while loading: a callable, constructible no-op. */
function anything(): any {
  const fn = function () {};
  return new Proxy(fn, { get: (_t, key) => (key === Symbol.toPrimitive ? () => "" : anything()), construct: () => anything(), apply: () => anything() });
}

function fakeVscode(rec: Recorded): unknown {
  const disposable = { dispose() {} };
  const api = {
    window: {
      createOutputChannel: () => ({ appendLine() {}, append() {}, show() {}, dispose() {} }),
      showErrorMessage: async (message: string, ...actions: string[]) => {
        rec.errors.push({ message, actions });
        return rec.answers.shift();
      },
      showWarningMessage: async () => undefined,
      showInformationMessage: async () => undefined,
      setStatusBarMessage: () => disposable,
      activeTextEditor: undefined,
    },
    commands: {
      registerCommand: (id: string, handler: (...args: unknown[]) => unknown) => {
        assert.ok(!rec.commands.has(id), `${id} registered twice`);
        rec.commands.set(id, handler);
        return { dispose: () => rec.commands.delete(id) };
      },
      executeCommand: async (...args: unknown[]) => void rec.executed.push(args),
    },
    workspace: {
      workspaceFolders: undefined,
      isTrusted: true,
      getConfiguration: (section: string) => ({ get: (key: string) => rec.settings[`${section}.${key}`] }),
      onDidChangeConfiguration: () => disposable,
      onDidGrantWorkspaceTrust: () => disposable,
      registerTextDocumentContentProvider: (scheme: string, provider: any) => {
        rec.providers.set(scheme, provider);
        return disposable;
      },
    },
  };
  return new Proxy(api, { get: (target, key) => (key in target ? (target as any)[key] : anything()) });
}

/** Loads the bundle with `vscode` resolved to the stand-in. */
function loadExtension(rec: Recorded): { activate(context: unknown): Promise<void>; deactivate(): Promise<void> } {
  const file = join(out, `extension-${Math.random().toString(36).slice(2)}.js`);
  buildSync({ entryPoints: [join(__dirname, "..", "src", "extension.ts")], bundle: true, outfile: file, external: ["vscode"], format: "cjs", platform: "node", logLevel: "silent" });
  const vscode = fakeVscode(rec);
  const load = (Module as any)._load;
  (Module as any)._load = function (request: string, ...rest: unknown[]) {
    return request === "vscode" ? vscode : load.call(this, request, ...rest);
  };
  try {
    return require(file);
  } finally {
    (Module as any)._load = load;
  }
}

function recorder(settings: Record<string, unknown>, answers: (string | undefined)[] = []): Recorded {
  return { commands: new Map(), providers: new Map(), executed: [], errors: [], answers, settings };
}

async function activateWithout(rec: Recorded) {
  const saved = process.env.PATH;
  process.env.PATH = out; // an empty directory: no stagelint on PATH
  try {
    const extension = loadExtension(rec);
    const context = { subscriptions: [] as { dispose(): void }[] };
    await extension.activate(context);
    // The missing-binary message is not awaited by activation.
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { extension, context };
  } finally {
    process.env.PATH = saved;
  }
}

test("activation registers the client commands; stagelint.dryRun is left to the language client", async () => {
  const rec = recorder({});
  const { extension, context } = await activateWithout(rec);
  assert.deepEqual([...rec.commands.keys()].sort(), [...CLIENT_COMMANDS].sort());
  assert.ok(!rec.commands.has(DRY_RUN));
  for (const d of context.subscriptions) d.dispose();
  await extension.deactivate();
});

test("no binary on PATH: an error naming the install command, with Open Settings", async () => {
  const rec = recorder({}, [OPEN_SETTINGS_ACTION]);
  const { extension } = await activateWithout(rec);
  assert.deepEqual(rec.errors, [{ message: missingBinaryMessage(), actions: [OPEN_SETTINGS_ACTION, RETRY_ACTION] }]);
  assert.match(rec.errors[0].message, /cargo install --locked --path/);
  assert.deepEqual(rec.executed, [["workbench.action.openSettings", SETTING_PATH]]);
  await extension.deactivate();
});

test("a stagelint.path that does not exist is reported as the setting's fault", async () => {
  const rec = recorder({ "stagelint.path": "/nonexistent/stagelint" });
  const { extension } = await activateWithout(rec);
  assert.equal(rec.errors.length, 1);
  assert.match(rec.errors[0].message, /`stagelint.path` is set to "\/nonexistent\/stagelint", which is not an executable file/);
  await extension.deactivate();
});

test("Restart Server retries the lookup (and reports again)", async () => {
  const rec = recorder({});
  const { extension } = await activateWithout(rec);
  assert.equal(rec.errors.length, 1);
  const saved = process.env.PATH;
  process.env.PATH = out;
  try {
    await rec.commands.get(RESTART_SERVER)!();
    await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    process.env.PATH = saved;
  }
  assert.equal(rec.errors.length, 2);
  await extension.deactivate();
});

test("rule links: the stagelint: documents have a provider, which says when the server is not running", async () => {
  const rec = recorder({});
  const { extension } = await activateWithout(rec);
  const provider = rec.providers.get(RULE_DOCUMENT_SCHEME);
  assert.ok(provider, "a provider for stagelint: documents");
  const text = await provider.provideTextDocumentContent({ toString: () => "stagelint:/docs/rules/sm/UnknownTool.md" });
  assert.match(String(text), /not running/);
  await extension.deactivate();
});
