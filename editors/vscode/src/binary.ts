// Finding the `stagelint` binary: the `stagelint.path` setting, else the binary bundled in a
// platform .vsix (`bin/stagelint`), else `stagelint` on PATH (honouring PATHEXT on Windows). No
// `vscode` import: the unit tests run this under plain Node with a fake file system and
// environment.

import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

/** The name looked up on PATH when `stagelint.path` is empty. */
export const BINARY_NAME = "stagelint";

/** Where a platform .vsix carries the binary, relative to the extension's directory. */
export const BUNDLED_DIR = "bin";

/** How to install the binary, named in the message shown when it is missing. */
export const INSTALL_COMMANDS = [
  "cargo install --locked --path <your stagelint checkout>",
  "cargo install --locked --git <stagelint repository URL> stagelint",
] as const;

/** The answer buttons of the missing-binary message. */
export const OPEN_SETTINGS_ACTION = "Open Settings";
export const RETRY_ACTION = "Retry";

/** What binary discovery may ask of the file system. */
export interface FileSystem {
  /** True when `file` exists, is a regular file (or a link to one) and may be executed. */
  isExecutableFile(file: string): boolean;
}

/** The process facts binary discovery depends on. */
export interface DiscoveryEnv {
  platform: NodeJS.Platform;
  env: Record<string, string | undefined>;
  homedir: string;
  /** The first workspace folder, for relative paths and `${workspaceFolder}`. */
  workspaceFolder?: string;
  /** The extension's own directory, where a platform .vsix put its binary. */
  extensionPath?: string;
}

/** Where the binary came from: the setting, the platform .vsix, or PATH. */
export type Source = "setting" | "bundled" | "path";

export type Resolution =
  | { ok: true; command: string; source: Source }
  | { ok: false; reason: "not-on-path" | "bad-setting"; message: string };

/** The real file system: a regular file with an execute bit (any regular file on Windows). */
export const nodeFileSystem: FileSystem = {
  isExecutableFile(file: string): boolean {
    try {
      if (!fs.statSync(file).isFile()) {
        return false;
      }
      if (process.platform !== "win32") {
        fs.accessSync(file, fs.constants.X_OK);
      }
      return true;
    } catch {
      return false;
    }
  },
};

function pathApi(platform: NodeJS.Platform): typeof path.posix {
  return platform === "win32" ? path.win32 : path.posix;
}

/** An environment variable; Windows names are case-insensitive (`Path`, `PATHEXT`). */
export function envVar(env: Record<string, string | undefined>, name: string, platform: NodeJS.Platform): string | undefined {
  if (platform !== "win32") {
    return env[name];
  }
  const key = Object.keys(env).find((k) => k.toUpperCase() === name.toUpperCase());
  return key === undefined ? undefined : env[key];
}

/** The directories of PATH, in order, without empty entries or Windows quoting. */
export function pathDirs(de: Pick<DiscoveryEnv, "platform" | "env">): string[] {
  const raw = envVar(de.env, "PATH", de.platform) ?? "";
  const sep = de.platform === "win32" ? ";" : ":";
  return raw
    .split(sep)
    .map((dir) => dir.trim().replace(/^"(.*)"$/, "$1"))
    .filter((dir) => dir.length > 0);
}

/** The file names `name` may have: itself, plus one per PATHEXT extension on Windows. */
export function candidateNames(name: string, de: Pick<DiscoveryEnv, "platform" | "env">): string[] {
  if (de.platform !== "win32") {
    return [name];
  }
  const pathext = envVar(de.env, "PATHEXT", de.platform) || ".COM;.EXE;.BAT;.CMD";
  const exts = pathext
    .split(";")
    .map((e) => e.trim())
    .filter((e) => e.startsWith("."));
  const lower = name.toLowerCase();
  // A name that already ends with one of the extensions is tried as it is first.
  const own = exts.some((e) => lower.endsWith(e.toLowerCase())) ? [name] : [];
  return [...own, ...exts.map((e) => name + e.toLowerCase())];
}

/** The first executable `name` on PATH, or undefined. */
export function findOnPath(name: string, de: Pick<DiscoveryEnv, "platform" | "env">, fsys: FileSystem): string | undefined {
  const p = pathApi(de.platform);
  for (const dir of pathDirs(de)) {
    for (const candidate of candidateNames(name, de)) {
      const file = p.join(dir, candidate);
      if (fsys.isExecutableFile(file)) {
        return file;
      }
    }
  }
  return undefined;
}

/** `~`, `${userHome}` and `${workspaceFolder}` expanded; a relative path made absolute. */
export function expandSetting(raw: string, de: DiscoveryEnv): string | undefined {
  const p = pathApi(de.platform);
  let value = raw.trim();
  if (value === "~" || value.startsWith("~/") || (de.platform === "win32" && value.startsWith("~\\"))) {
    value = p.join(de.homedir, value.slice(1));
  }
  value = value.replace(/\$\{userHome\}/g, de.homedir);
  if (value.includes("${workspaceFolder}")) {
    if (de.workspaceFolder === undefined) {
      return undefined;
    }
    value = value.replace(/\$\{workspaceFolder\}/g, de.workspaceFolder);
  }
  if (p.isAbsolute(value)) {
    return p.normalize(value);
  }
  if (de.workspaceFolder === undefined) {
    return undefined;
  }
  return p.resolve(de.workspaceFolder, value);
}

/** True when the setting is a bare command name (`stagelint-nightly`), looked up on PATH. */
function isBareName(value: string, platform: NodeJS.Platform): boolean {
  return !value.includes("/") && !(platform === "win32" && value.includes("\\")) && !value.startsWith("~") && !value.includes("${");
}

/** The binary a platform .vsix bundles: `<extension>/bin/stagelint` (`.exe` on Windows). */
export function bundledBinary(de: Pick<DiscoveryEnv, "platform" | "extensionPath">): string | undefined {
  if (de.extensionPath === undefined) {
    return undefined;
  }
  const name = de.platform === "win32" ? `${BINARY_NAME}.exe` : BINARY_NAME;
  return pathApi(de.platform).join(de.extensionPath, BUNDLED_DIR, name);
}

/** The message shown when no binary was found on PATH. */
export function missingBinaryMessage(): string {
  return (
    `stagelint: the \`${BINARY_NAME}\` binary was not found on PATH, so the language server cannot start. ` +
    "Install the stagelint extension for your platform (it bundles the binary), " +
    `or install the binary with \`${INSTALL_COMMANDS[0]}\` (or \`${INSTALL_COMMANDS[1]}\`), ` +
    "or set `stagelint.path` to the binary."
  );
}

/** Why `stagelint.path` could not be used. */
export type BadSetting = "not-executable" | "not-on-path" | "needs-workspace";

/** The message shown when `stagelint.path` names something that cannot be run. */
export function badSettingMessage(setting: string, resolved: string | undefined, why: BadSetting): string {
  const where = resolved !== undefined && resolved !== setting ? ` (${resolved})` : "";
  const text = {
    "not-executable": "is not an executable file",
    "not-on-path": "was not found on PATH",
    "needs-workspace": "is relative but no workspace folder is open",
  }[why];
  return (
    `stagelint: \`stagelint.path\` is set to "${setting}"${where}, which ${text}. ` +
    `Fix the setting, or clear it to use \`${BINARY_NAME}\` from PATH (install with \`${INSTALL_COMMANDS[0]}\`).`
  );
}

/**
 * Decides which binary to run: the `stagelint.path` setting when set (a bare name such as
 * `stagelint` is looked up on PATH), else the binary this platform's .vsix bundles, which is
 * the server this extension was built with, else `stagelint` on PATH (the generic .vsix).
 */
export function resolveBinary(setting: string, de: DiscoveryEnv, fsys: FileSystem): Resolution {
  const value = setting.trim();
  if (value === "") {
    const bundled = bundledBinary(de);
    if (bundled !== undefined && fsys.isExecutableFile(bundled)) {
      return { ok: true, command: bundled, source: "bundled" };
    }
    const found = findOnPath(BINARY_NAME, de, fsys);
    return found !== undefined
      ? { ok: true, command: found, source: "path" }
      : { ok: false, reason: "not-on-path", message: missingBinaryMessage() };
  }
  if (isBareName(value, de.platform)) {
    const found = findOnPath(value, de, fsys);
    return found !== undefined
      ? { ok: true, command: found, source: "setting" }
      : { ok: false, reason: "bad-setting", message: badSettingMessage(value, undefined, "not-on-path") };
  }
  const resolved = expandSetting(value, de);
  if (resolved !== undefined) {
    const names = de.platform === "win32" ? candidateNames(resolved, de) : [resolved];
    const found = names.find((name) => fsys.isExecutableFile(name));
    if (found !== undefined) {
      return { ok: true, command: found, source: "setting" };
    }
  }
  const why = resolved === undefined ? "needs-workspace" : "not-executable";
  return { ok: false, reason: "bad-setting", message: badSettingMessage(value, resolved, why) };
}

/** How the language server is started: `<binary> lsp` on stdin/stdout. */
export function serverExecutable(command: string): { command: string; args: string[] } {
  return { command, args: ["lsp"] };
}

/** Where a binary came from, as the output channel says it. */
export function sourceLabel(source: Source): string {
  return { setting: "from `stagelint.path`", bundled: "bundled with the extension", path: "from PATH" }[source];
}

/** The line the output channel shows when the server starts: which binary, and its version. */
export function startMessage(resolution: { command: string; source: Source }, version: string | undefined): string {
  const about = version ?? "its version unknown: `--version` failed";
  return `starting ${resolution.command} lsp (${sourceLabel(resolution.source)}; ${about})`;
}

/** `<binary> --version`'s first line (`stagelint 0.1.0`), or undefined when it does not run. */
export function probeVersion(command: string, timeoutMs = 5000): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(command, ["--version"], { timeout: timeoutMs, windowsHide: true }, (error, stdout) => {
      const line = String(stdout).split(/\r?\n/)[0]?.trim();
      resolve(error === null && line ? line : undefined);
    });
  });
}
