import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  bundledBinary,
  candidateNames,
  DiscoveryEnv,
  expandSetting,
  FileSystem,
  findOnPath,
  INSTALL_COMMANDS,
  missingBinaryMessage,
  pathDirs,
  probeVersion,
  resolveBinary,
  serverExecutable,
  startMessage,
} from "../src/binary";

/** A file system holding exactly these executables. */
function fakeFs(...executables: string[]): FileSystem & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    isExecutableFile(file: string) {
      asked.push(file);
      return executables.includes(file);
    },
  };
}

const linux = (env: Record<string, string>, workspaceFolder?: string): DiscoveryEnv => ({
  platform: "linux",
  env,
  homedir: "/home/ada",
  workspaceFolder,
});

const windows = (env: Record<string, string>, workspaceFolder?: string): DiscoveryEnv => ({
  platform: "win32",
  env,
  homedir: "C:\\Users\\ada",
  workspaceFolder,
});

describe("PATH lookup", () => {
  test("the first directory holding an executable wins", () => {
    const fs = fakeFs("/usr/local/bin/stagelint", "/home/ada/.cargo/bin/stagelint");
    const de = linux({ PATH: "/usr/bin:/home/ada/.cargo/bin:/usr/local/bin" });
    assert.equal(findOnPath("stagelint", de, fs), "/home/ada/.cargo/bin/stagelint");
    assert.deepEqual(fs.asked, ["/usr/bin/stagelint", "/home/ada/.cargo/bin/stagelint"]);
  });

  test("empty PATH entries are skipped rather than meaning the current directory", () => {
    assert.deepEqual(pathDirs(linux({ PATH: ":/usr/bin::" })), ["/usr/bin"]);
    assert.deepEqual(pathDirs(linux({})), []);
  });

  test("nothing found", () => {
    assert.equal(findOnPath("stagelint", linux({ PATH: "/usr/bin:/bin" }), fakeFs()), undefined);
  });

  test("POSIX tries the bare name only, whatever PATHEXT says", () => {
    assert.deepEqual(candidateNames("stagelint", linux({ PATHEXT: ".EXE" })), ["stagelint"]);
  });

  test("Windows: Path is case-insensitive, ';'-separated, and quoted entries are unquoted", () => {
    const de = windows({ Path: 'C:\\Windows;"C:\\Program Files\\stagelint";', PATHEXT: ".COM;.EXE" });
    assert.deepEqual(pathDirs(de), ["C:\\Windows", "C:\\Program Files\\stagelint"]);
    const fs = fakeFs("C:\\Program Files\\stagelint\\stagelint.exe");
    assert.equal(findOnPath("stagelint", de, fs), "C:\\Program Files\\stagelint\\stagelint.exe");
  });

  test("Windows: PATHEXT order decides, in lower case", () => {
    const de = windows({ PATH: "C:\\bin", PATHEXT: ".CMD;.EXE" });
    assert.deepEqual(candidateNames("stagelint", de), ["stagelint.cmd", "stagelint.exe"]);
    const fs = fakeFs("C:\\bin\\stagelint.exe", "C:\\bin\\stagelint.cmd");
    assert.equal(findOnPath("stagelint", de, fs), "C:\\bin\\stagelint.cmd");
  });

  test("Windows: a missing PATHEXT falls back to .COM;.EXE;.BAT;.CMD", () => {
    assert.deepEqual(candidateNames("stagelint", windows({})), ["stagelint.com", "stagelint.exe", "stagelint.bat", "stagelint.cmd"]);
  });

  test("Windows: a name that already has an extension is tried as it is first", () => {
    assert.deepEqual(candidateNames("stagelint.exe", windows({ PATHEXT: ".EXE" })), ["stagelint.exe", "stagelint.exe.exe"]);
  });
});

describe("the stagelint.path setting", () => {
  test("empty: stagelint from PATH", () => {
    const result = resolveBinary("  ", linux({ PATH: "/opt/bin" }), fakeFs("/opt/bin/stagelint"));
    assert.deepEqual(result, { ok: true, command: "/opt/bin/stagelint", source: "path" });
  });

  test("empty and not on PATH: the message names the install commands and the setting", () => {
    const result = resolveBinary("", linux({ PATH: "/usr/bin" }), fakeFs());
    assert.equal(result.ok, false);
    assert.ok(!result.ok && result.reason === "not-on-path");
    assert.ok(!result.ok && result.message === missingBinaryMessage());
    for (const command of INSTALL_COMMANDS) {
      assert.match(missingBinaryMessage(), new RegExp(command.replace(/[.*+?^${}()|[\]\\<>]/g, "\\$&")));
    }
    assert.match(missingBinaryMessage(), /stagelint\.path/);
    assert.match(missingBinaryMessage(), /not found on PATH/);
  });

  test("an absolute path is used when it is executable", () => {
    const result = resolveBinary("/opt/stagelint/bin/stagelint", linux({ PATH: "" }), fakeFs("/opt/stagelint/bin/stagelint"));
    assert.deepEqual(result, { ok: true, command: "/opt/stagelint/bin/stagelint", source: "setting" });
  });

  test("an absolute path that is not executable is reported, not replaced by PATH", () => {
    const result = resolveBinary("/opt/nothing", linux({ PATH: "/usr/bin" }), fakeFs("/usr/bin/stagelint"));
    assert.ok(!result.ok);
    assert.equal(result.reason, "bad-setting");
    assert.match(result.message, /"\/opt\/nothing", which is not an executable file/);
  });

  test("a relative path is resolved against the workspace folder", () => {
    const de = linux({}, "/work/project");
    assert.equal(expandSetting("target/debug/stagelint", de), "/work/project/target/debug/stagelint");
    const result = resolveBinary("./target/debug/stagelint", de, fakeFs("/work/project/target/debug/stagelint"));
    assert.deepEqual(result, { ok: true, command: "/work/project/target/debug/stagelint", source: "setting" });
  });

  test("a relative path without a workspace folder is reported", () => {
    const result = resolveBinary("bin/stagelint", linux({}), fakeFs());
    assert.ok(!result.ok);
    assert.match(result.message, /relative but no workspace folder is open/);
  });

  test("~, ${userHome} and ${workspaceFolder} are expanded", () => {
    const de = linux({}, "/work/project");
    assert.equal(expandSetting("~/.cargo/bin/stagelint", de), "/home/ada/.cargo/bin/stagelint");
    assert.equal(expandSetting("${userHome}/bin/stagelint", de), "/home/ada/bin/stagelint");
    assert.equal(expandSetting("${workspaceFolder}/../target/stagelint", de), "/work/target/stagelint");
    assert.equal(expandSetting("${workspaceFolder}/stagelint", linux({})), undefined);
  });

  test("a bare command name is looked up on PATH", () => {
    const de = linux({ PATH: "/usr/bin:/opt/bin" });
    const result = resolveBinary("stagelint-nightly", de, fakeFs("/opt/bin/stagelint-nightly"));
    assert.deepEqual(result, { ok: true, command: "/opt/bin/stagelint-nightly", source: "setting" });
    const missing = resolveBinary("stagelint-nightly", de, fakeFs());
    assert.ok(!missing.ok);
    assert.match(missing.message, /"stagelint-nightly", which was not found on PATH/);
  });

  test("Windows: a configured path without extension gets PATHEXT", () => {
    const de = windows({ PATHEXT: ".EXE" }, "C:\\src\\flows");
    const result = resolveBinary("C:\\tools\\stagelint", de, fakeFs("C:\\tools\\stagelint.exe"));
    assert.deepEqual(result, { ok: true, command: "C:\\tools\\stagelint.exe", source: "setting" });
    const relative = resolveBinary("target\\debug\\stagelint.exe", de, fakeFs("C:\\src\\flows\\target\\debug\\stagelint.exe"));
    assert.deepEqual(relative, { ok: true, command: "C:\\src\\flows\\target\\debug\\stagelint.exe", source: "setting" });
  });
});

describe("the binary a platform .vsix bundles", () => {
  const ext = "/home/ada/.vscode/extensions/stagelint.stagelint-0.1.0-linux-x64";
  const bundled = `${ext}/bin/stagelint`;

  test("it is preferred to stagelint on PATH", () => {
    const de = { ...linux({ PATH: "/home/ada/.cargo/bin" }), extensionPath: ext };
    const result = resolveBinary("", de, fakeFs(bundled, "/home/ada/.cargo/bin/stagelint"));
    assert.deepEqual(result, { ok: true, command: bundled, source: "bundled" });
  });

  test("the setting names another: a path, or a name looked up on PATH", () => {
    const de = { ...linux({ PATH: "/home/ada/.cargo/bin" }), extensionPath: ext };
    const fs = fakeFs(bundled, "/home/ada/.cargo/bin/stagelint", "/opt/stagelint");
    assert.deepEqual(resolveBinary("/opt/stagelint", de, fs), { ok: true, command: "/opt/stagelint", source: "setting" });
    assert.deepEqual(resolveBinary("stagelint", de, fs), { ok: true, command: "/home/ada/.cargo/bin/stagelint", source: "setting" });
  });

  test("the generic .vsix has none: stagelint from PATH", () => {
    const de = { ...linux({ PATH: "/home/ada/.cargo/bin" }), extensionPath: ext };
    const result = resolveBinary("", de, fakeFs("/home/ada/.cargo/bin/stagelint"));
    assert.deepEqual(result, { ok: true, command: "/home/ada/.cargo/bin/stagelint", source: "path" });
  });

  test("Windows: bin\\stagelint.exe", () => {
    const de = { ...windows({}), extensionPath: "C:\\ext" };
    assert.equal(bundledBinary(de), "C:\\ext\\bin\\stagelint.exe");
    assert.equal(bundledBinary(linux({})), undefined);
  });

  test("the output channel says which binary runs, from where, and its version", () => {
    assert.equal(
      startMessage({ command: bundled, source: "bundled" }, "stagelint 0.1.0"),
      `starting ${bundled} lsp (bundled with the extension; stagelint 0.1.0)`,
    );
    assert.match(startMessage({ command: "/usr/bin/stagelint", source: "path" }, undefined), /\(from PATH; its version unknown/);
    assert.match(startMessage({ command: "/x", source: "setting" }, "stagelint 9.9.9"), /from `stagelint.path`; stagelint 9.9.9/);
  });

  test("probing the version of something that does not run gives undefined", async () => {
    assert.equal(await probeVersion("/nonexistent/stagelint"), undefined);
  });
});

test("the server runs as `<binary> lsp`", () => {
  assert.deepEqual(serverExecutable("/opt/bin/stagelint"), { command: "/opt/bin/stagelint", args: ["lsp"] });
});
