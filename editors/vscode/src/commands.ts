// The extension's commands and the dry-run lens, written against a small `Host` interface so that
// the unit tests can drive them under plain Node. No `vscode` import: `extension.ts` implements
// `Host` with the editor's API.

/** The server-side command behind the **▶ Dry-run** code lens (`executeCommandProvider`). */
export const DRY_RUN = "stagelint.dryRun";
/**
 * The server-side command behind a Last Light phase's **Preview prompt** code lens: the server
 * writes the rendered prompt to a read-only file and asks the editor to show it
 * (`window/showDocument`), then writes it again as the workflow or its prompts are edited.
 */
export const PREVIEW_PROMPT = "stagelint.previewPrompt";
export const DRY_RUN_CURRENT_FILE = "stagelint.dryRunCurrentFile";
export const RESTART_SERVER = "stagelint.restartServer";
export const SHOW_OUTPUT = "stagelint.showOutput";

/** The server-side command that answers a rule's page, for the rule documents below. */
export const EXPLAIN = "stagelint.explain";

/** Commands the server executes; vscode-languageclient registers them from `executeCommandProvider`. */
export const SERVER_COMMANDS = [DRY_RUN, PREVIEW_PROMPT, EXPLAIN] as const;

/**
 * The scheme of the read-only rule documents (`stagelint:/docs/rules/sm/UnknownTool.md`) that a
 * diagnostic's rule link opens when the server has no local page to link: the client says at
 * `initialize` that it opens them (`initializationOptions.ruleDocuments`).
 */
export const RULE_DOCUMENT_SCHEME = "stagelint";

/** The `initializationOptions` the client sends. */
export const INITIALIZATION_OPTIONS = { ruleDocuments: true } as const;
/** Commands the extension registers itself (and contributes in package.json). */
export const CLIENT_COMMANDS = [DRY_RUN_CURRENT_FILE, RESTART_SERVER, SHOW_OUTPUT] as const;
export type ClientCommand = (typeof CLIENT_COMMANDS)[number];

export const EXECUTE_COMMAND = "workspace/executeCommand";
/** JSON-RPC "invalid params": stagelint answers a failed dry-run with it after showing the reason. */
export const INVALID_PARAMS = -32602;

export interface ExecuteCommandParams {
  command: string;
  arguments: unknown[];
}

/** What `stagelint.dryRun` answers (see `src/lsp/dry_run.rs`). */
export interface DryRunResult {
  title: string;
  exitCode: number;
  expectations: { passed: number; failed: number };
  summary: string;
  report: string | null;
}

export type Level = "info" | "warning" | "error";

/** The `workspace/executeCommand` params for a dry-run of the file at `uri`. */
export function dryRunParams(uri: string): ExecuteCommandParams {
  return { command: DRY_RUN, arguments: [uri] };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The server's answer, if it has the expected shape. */
export function parseDryRunResult(value: unknown): DryRunResult | undefined {
  if (!isObject(value) || typeof value.exitCode !== "number") {
    return undefined;
  }
  const exp = isObject(value.expectations) ? value.expectations : {};
  const count = (n: unknown): number => (typeof n === "number" && Number.isFinite(n) ? n : 0);
  return {
    title: typeof value.title === "string" ? value.title : "",
    exitCode: value.exitCode,
    expectations: { passed: count(exp.passed), failed: count(exp.failed) },
    summary: typeof value.summary === "string" ? value.summary : "",
    report: typeof value.report === "string" ? value.report : null,
  };
}

/** The one-line summary of a dry-run and how loud it should be (exit 0 passed, 1 mismatch, else error). */
export function summaryMessage(result: DryRunResult): { level: Level; text: string } {
  const level: Level = result.exitCode === 0 ? "info" : result.exitCode === 1 ? "warning" : "error";
  if (result.summary !== "") {
    return { level, text: result.summary };
  }
  const outcome = result.exitCode === 0 ? "passed" : result.exitCode === 1 ? "mismatch" : "authoring error";
  const { passed, failed } = result.expectations;
  const title = result.title === "" ? "" : ` ${result.title}`;
  return { level, text: `stagelint dry-run${title}: ${outcome} · expectations ${passed}/${passed + failed}` };
}

/** The file a code lens or a caller passed: a URI string, or anything whose `toString()` is one. */
export function uriArgument(args: unknown[]): string | undefined {
  const first = args[0];
  if (typeof first === "string" && first !== "") {
    return first;
  }
  if (isObject(first) && typeof first.scheme === "string" && typeof first.toString === "function") {
    return String(first.toString());
  }
  return undefined;
}

export interface ActiveDocument {
  /** The URI as the language client sends it to the server. */
  uri: string;
  scheme: string;
  languageId: string;
}

/** What the commands need from the editor and the language client. */
export interface Host {
  activeDocument(): ActiveDocument | undefined;
  /** Whether a language client exists and is starting or running. */
  isRunning(): boolean;
  sendRequest(method: string, params: unknown): Promise<unknown>;
  /** A notification; resolves to the action the user picked. */
  notify(level: Level, message: string, ...actions: string[]): Promise<string | undefined>;
  /** A transient status-bar message. */
  setStatus(message: string): void;
  log(message: string): void;
  showOutput(): void;
  restart(): Promise<void>;
}

export const SHOW_OUTPUT_ACTION = "Show Output";
export const RESTART_ACTION = "Restart Server";

function errorCode(error: unknown): number | undefined {
  return isObject(error) && typeof error.code === "number" ? error.code : undefined;
}

function errorText(error: unknown): string {
  if (isObject(error) && typeof error.message === "string") {
    return error.message;
  }
  return String(error);
}

/**
 * Reports a finished dry-run. The server has already shown the summary (`window/showMessage`)
 * and opened the report (`window/showDocument`), so this only logs it and puts the summary in
 * the status bar rather than raising a second notification.
 */
export function reportDryRun(host: Host, uri: string, value: unknown): DryRunResult | undefined {
  const result = parseDryRunResult(value);
  if (result === undefined) {
    host.log(`dry-run ${uri}: unexpected answer ${JSON.stringify(value)}`);
    return undefined;
  }
  const { text } = summaryMessage(result);
  host.log(result.report === null ? text : `${text}\n  report: ${result.report}`);
  host.setStatus(text);
  return result;
}

/**
 * Reports a failed dry-run. "Invalid params" is how stagelint answers a dry-run it could not run
 * (no cassette, a broken stage), after showing the reason itself: that goes to the status bar.
 * Anything else (the server crashed, the request was refused) is a notification.
 */
export async function reportDryRunError(host: Host, uri: string, error: unknown): Promise<void> {
  const text = `stagelint dry-run failed: ${errorText(error)}`;
  host.log(`dry-run ${uri}: ${errorText(error)}`);
  if (errorCode(error) === INVALID_PARAMS) {
    host.setStatus(text);
    return;
  }
  if ((await host.notify("error", text, SHOW_OUTPUT_ACTION)) === SHOW_OUTPUT_ACTION) {
    host.showOutput();
  }
}

/** Sends `stagelint.dryRun` for `uri` and reports the outcome. */
export async function runDryRun(host: Host, uri: string): Promise<DryRunResult | undefined> {
  let value: unknown;
  try {
    value = await host.sendRequest(EXECUTE_COMMAND, dryRunParams(uri));
  } catch (error) {
    await reportDryRunError(host, uri, error);
    return undefined;
  }
  return reportDryRun(host, uri, value);
}

/** `stagelint: Dry-run Current File`: the lens's command for the active editor (or a URI argument). */
export async function dryRunCurrentFile(host: Host, ...args: unknown[]): Promise<DryRunResult | undefined> {
  let uri = uriArgument(args);
  if (uri === undefined) {
    const doc = host.activeDocument();
    if (doc === undefined) {
      await host.notify("warning", "stagelint: open a stage definition, state machine or cassette to dry-run it.");
      return undefined;
    }
    if (doc.scheme !== "file") {
      await host.notify("warning", "stagelint: only files saved on disk can be dry-run.");
      return undefined;
    }
    uri = doc.uri;
  }
  if (!host.isRunning()) {
    const picked = await host.notify("error", "stagelint: the language server is not running.", RESTART_ACTION, SHOW_OUTPUT_ACTION);
    if (picked === RESTART_ACTION) {
      await host.restart();
    } else if (picked === SHOW_OUTPUT_ACTION) {
      host.showOutput();
    }
    return undefined;
  }
  return runDryRun(host, uri);
}

/** The handlers `extension.ts` registers, one per client command. */
export function createHandlers(host: Host): Record<ClientCommand, (...args: unknown[]) => Promise<unknown>> {
  return {
    [DRY_RUN_CURRENT_FILE]: (...args: unknown[]) => dryRunCurrentFile(host, ...args),
    [RESTART_SERVER]: () => host.restart(),
    [SHOW_OUTPUT]: async () => host.showOutput(),
  };
}

/**
 * The language client's `executeCommand` middleware. The code lens runs `stagelint.dryRun`, which
 * vscode-languageclient registered from `executeCommandProvider`; the middleware sends it itself
 * with the lens's own arguments, so a lens click is reported like the palette command, and a
 * failed dry-run is not announced a second time as "Request workspace/executeCommand failed".
 * Other server commands take the client's usual path.
 */
export function executeCommandMiddleware(host: Host) {
  return async (command: string, args: unknown[], next: (command: string, args: unknown[]) => unknown): Promise<unknown> => {
    if (command !== DRY_RUN) {
      return next(command, args);
    }
    const uri = uriArgument(args) ?? "";
    let value: unknown;
    try {
      value = await host.sendRequest(EXECUTE_COMMAND, { command, arguments: args });
    } catch (error) {
      await reportDryRunError(host, uri, error);
      return undefined;
    }
    reportDryRun(host, uri, value);
    return value;
  };
}

/**
 * The text of a rule document: the page `stagelint.explain` answers for its URI. While the
 * server is not running, or for a URI that names no rule, a line that says so.
 */
export async function ruleDocumentText(host: Host, uri: string): Promise<string> {
  if (!host.isRunning()) {
    return `The stagelint language server is not running; \`stagelint explain\` in a terminal shows the same page.\n`;
  }
  try {
    const page = await host.sendRequest(EXECUTE_COMMAND, { command: EXPLAIN, arguments: [uri] });
    return typeof page === "string" ? page : `No rule page for ${uri}.\n`;
  } catch (error) {
    return `No rule page for ${uri}: ${error instanceof Error ? error.message : String(error)}\n`;
  }
}
