// The VS Code side: starts `stagelint lsp` with vscode-languageclient and wires the commands.
// Everything that does not need the editor lives in binary.ts, settings.ts and commands.ts.

import * as os from "node:os";
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions, State } from "vscode-languageclient/node";

import {
  nodeFileSystem,
  OPEN_SETTINGS_ACTION,
  probeVersion,
  resolveBinary,
  RETRY_ACTION,
  serverExecutable,
  startMessage,
} from "./binary";
import {
  CLIENT_COMMANDS,
  createHandlers,
  executeCommandMiddleware,
  Host,
  INITIALIZATION_OPTIONS,
  Level,
  RULE_DOCUMENT_SCHEME,
  ruleDocumentText,
} from "./commands";
import {
  CLIENT_ID,
  CLIENT_NAME,
  documentSelector,
  needsRestart,
  normalizeSettings,
  SECTION,
  SETTING_PATH,
  Settings,
} from "./settings";

let client: LanguageClient | undefined;
let output: vscode.OutputChannel | undefined;
let current: Settings | undefined;
/** The extension's directory: a platform .vsix carries the binary in its `bin/`. */
let extensionPath: string | undefined;
/** Serialises starts and restarts (a settings change during a restart waits for it). */
let pending: Promise<void> = Promise.resolve();

function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  return normalizeSettings({ path: config.get("path"), trace: config.get("trace.server") });
}

function channel(): vscode.OutputChannel {
  output ??= vscode.window.createOutputChannel(CLIENT_NAME);
  return output;
}

function log(message: string): void {
  channel().appendLine(`[${new Date().toLocaleTimeString()}] ${message}`);
}

function notify(level: Level, message: string, ...actions: string[]): Promise<string | undefined> {
  const show =
    level === "error"
      ? vscode.window.showErrorMessage
      : level === "warning"
        ? vscode.window.showWarningMessage
        : vscode.window.showInformationMessage;
  return Promise.resolve(show(message, ...actions));
}

const host: Host = {
  activeDocument() {
    const doc = vscode.window.activeTextEditor?.document;
    if (doc === undefined) {
      return undefined;
    }
    // The URI exactly as the client sent it in didOpen, so the server finds its document.
    const uri = client !== undefined ? client.code2ProtocolConverter.asUri(doc.uri) : doc.uri.toString();
    return { uri, scheme: doc.uri.scheme, languageId: doc.languageId };
  },
  isRunning() {
    return client !== undefined && (client.state === State.Running || client.state === State.Starting);
  },
  sendRequest(method, params) {
    if (client === undefined) {
      return Promise.reject(new Error("the language server is not running"));
    }
    return client.sendRequest(method, params);
  },
  notify,
  setStatus(message) {
    vscode.window.setStatusBarMessage(message, 15_000);
  },
  log,
  showOutput() {
    channel().show(true);
  },
  restart() {
    return restart();
  },
};

async function missingBinary(message: string): Promise<void> {
  log(message);
  const picked = await notify("error", message, OPEN_SETTINGS_ACTION, RETRY_ACTION);
  if (picked === OPEN_SETTINGS_ACTION) {
    await vscode.commands.executeCommand("workbench.action.openSettings", SETTING_PATH);
  } else if (picked === RETRY_ACTION) {
    await restart();
  }
}

async function start(): Promise<void> {
  current = readSettings();
  const resolution = resolveBinary(
    current.path,
    {
      platform: process.platform,
      env: process.env,
      homedir: os.homedir(),
      workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
      extensionPath,
    },
    nodeFileSystem,
  );
  if (!resolution.ok) {
    // Not awaited: the message stays up without holding back activation.
    void missingBinary(resolution.message);
    return;
  }
  const executable = serverExecutable(resolution.command);
  // Which binary runs, and its version: the bundled one, the setting's, or PATH's.
  log(startMessage(resolution, await probeVersion(resolution.command)));
  const serverOptions: ServerOptions = { run: executable, debug: executable };
  const clientOptions: LanguageClientOptions = {
    documentSelector: documentSelector(),
    outputChannel: channel(),
    // The server may link rules to read-only `stagelint:` documents, which the provider below opens.
    initializationOptions: INITIALIZATION_OPTIONS,
    middleware: { executeCommand: executeCommandMiddleware(host) },
  };
  const created = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
  client = created;
  try {
    await created.start();
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    log(`the language server did not start: ${text}`);
    if (client === created) {
      client = undefined;
    }
    const picked = await notify("error", `stagelint: the language server did not start: ${text}`, OPEN_SETTINGS_ACTION);
    if (picked === OPEN_SETTINGS_ACTION) {
      await vscode.commands.executeCommand("workbench.action.openSettings", SETTING_PATH);
    }
  }
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  if (running === undefined) {
    return;
  }
  try {
    await running.dispose(2000);
  } catch (error) {
    log(`stopping the language server: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function restart(): Promise<void> {
  pending = pending.then(async () => {
    await stop();
    await start();
  });
  return pending;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extensionPath = context.extensionPath;
  const handlers = createHandlers(host);
  for (const id of CLIENT_COMMANDS) {
    context.subscriptions.push(vscode.commands.registerCommand(id, handlers[id]));
  }
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(SECTION) && current !== undefined && needsRestart(current, readSettings())) {
        void restart();
      }
    }),
    // Workspace values of `stagelint.path` only apply once the workspace is trusted.
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      if (current !== undefined && needsRestart(current, readSettings())) {
        void restart();
      }
    }),
    // A rule link without a local page opens the server's page for the rule, read-only.
    vscode.workspace.registerTextDocumentContentProvider(RULE_DOCUMENT_SCHEME, {
      provideTextDocumentContent: (uri) => ruleDocumentText(host, uri.toString(true)),
    }),
    { dispose: () => void stop() },
  );
  pending = start();
  await pending;
}

export async function deactivate(): Promise<void> {
  await stop();
}
