// The extension's settings and what the language client is told about documents. No `vscode`
// import: the unit tests run this under plain Node.

/** The client id: vscode-languageclient reads `<id>.trace.server` itself. */
export const CLIENT_ID = "stagelint";
export const CLIENT_NAME = "stagelint";

export const SECTION = "stagelint";
export const SETTING_PATH = "stagelint.path";
export const SETTING_TRACE = "stagelint.trace.server";

export const TRACE_LEVELS = ["off", "messages", "verbose"] as const;
export type TraceLevel = (typeof TRACE_LEVELS)[number];

export interface Settings {
  /** `stagelint.path`, trimmed; empty means "find `stagelint` on PATH". */
  path: string;
  /** `stagelint.trace.server`. */
  trace: TraceLevel;
}

/** Settings as read from the configuration, with wrong types and values replaced by defaults. */
export function normalizeSettings(raw: { path?: unknown; trace?: unknown }): Settings {
  const path = typeof raw.path === "string" ? raw.path.trim() : "";
  const trace =
    typeof raw.trace === "string" && (TRACE_LEVELS as readonly string[]).includes(raw.trace)
      ? (raw.trace as TraceLevel)
      : "off";
  return { path, trace };
}

/**
 * Whether a settings change needs a new server process. The trace level does not:
 * vscode-languageclient applies `stagelint.trace.server` to the running client.
 */
export function needsRestart(before: Settings, after: Settings): boolean {
  return before.path !== after.path;
}

/** The languages whose documents go to `stagelint lsp`, as in the Neovim and Helix setups. */
export const LANGUAGES = ["markdown", "yaml", "json"] as const;

/** The config files, sent too so that unsaved edits to them re-check what they govern. */
export const CONFIG_PATTERNS = ["**/stagelint.toml", "**/.stagelint.toml"] as const;

/**
 * TypeScript only where @bastani/atomic workflows live (`.atomic/workflows/`, and a package's
 * conventional `workflows/` or `workflow/` directory): other TypeScript is tsserver's, and the
 * server answers nothing for it.
 */
export const TYPESCRIPT_PATTERN = "**/{.atomic/workflows,workflows,workflow}/**";

export type DocumentFilter =
  | { scheme: string; language: string; pattern?: string }
  | { scheme: string; pattern: string };

/**
 * The client's document selector: files on disk in those languages, atomic workflows, and the
 * config files.
 */
export function documentSelector(): DocumentFilter[] {
  return [
    ...LANGUAGES.map((language) => ({ scheme: "file", language })),
    { scheme: "file", language: "typescript", pattern: TYPESCRIPT_PATTERN },
    ...CONFIG_PATTERNS.map((pattern) => ({ scheme: "file", pattern })),
  ];
}
