// A platform .vsix as VS Code installs it: `ci.sh --target <this platform>` unpacks the package
// it built and sets STAGELINT_UNPACKED_VSIX to its `extension/` directory. The extension's own
// discovery finds the bundled binary and prefers it to a `stagelint` on PATH, and that binary
// runs: its version is Cargo.toml's and it checks the examples. Skipped without a package.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";

import { bundledBinary, nodeFileSystem, probeVersion, resolveBinary, startMessage } from "../src/binary";

const unpacked = process.env.STAGELINT_UNPACKED_VSIX;
const repo = join(__dirname, "..", "..", "..");

/** The version in the repository's Cargo.toml, the one every artifact carries. */
function cargoVersion(): string {
  const match = /^version = "([^"]+)"/m.exec(readFileSync(join(repo, "Cargo.toml"), "utf8"));
  assert.ok(match, "Cargo.toml has a version");
  return match[1];
}

const skip = unpacked === undefined ? "no unpacked platform .vsix (ci.sh --target sets STAGELINT_UNPACKED_VSIX)" : false;

describe("the binary a platform .vsix carries", { skip }, () => {
  // Another `stagelint` on PATH, which the bundled binary is preferred to.
  const elsewhere = mkdtempSync(join(tmpdir(), "stagelint-path-"));
  writeFileSync(join(elsewhere, "stagelint"), "#!/bin/sh\necho 'stagelint 0.0.0-elsewhere'\n");
  chmodSync(join(elsewhere, "stagelint"), 0o755);
  after(() => rmSync(elsewhere, { recursive: true, force: true }));
  const de = { platform: process.platform, env: { PATH: elsewhere }, homedir: homedir(), extensionPath: unpacked };

  test("the extension finds it and prefers it to PATH", () => {
    const resolution = resolveBinary("", de, nodeFileSystem);
    assert.deepEqual(resolution, { ok: true, command: bundledBinary(de), source: "bundled" });
    // Naming PATH's in the setting still wins.
    assert.deepEqual(resolveBinary("stagelint", de, nodeFileSystem), { ok: true, command: join(elsewhere, "stagelint"), source: "setting" });
  });

  test("it runs: Cargo.toml's version, and a check of the examples", async () => {
    const command = bundledBinary(de)!;
    const version = await probeVersion(command);
    assert.equal(version, `stagelint ${cargoVersion()}`);
    assert.equal(startMessage({ command, source: "bundled" }, version), `starting ${command} lsp (bundled with the extension; stagelint ${cargoVersion()})`);
    const report = execFileSync(command, ["check", join(repo, "examples", "code-review")], { encoding: "utf8" });
    assert.equal(report.trim(), "No findings (8 files checked).");
  });

  test("the package is the extension this build made", () => {
    const manifest = JSON.parse(readFileSync(join(unpacked!, "package.json"), "utf8"));
    assert.equal(manifest.version, cargoVersion(), "the extension and the binary carry one version");
    assert.ok(readFileSync(join(unpacked!, "dist", "extension.js"), "utf8").length > 0);
  });
});
