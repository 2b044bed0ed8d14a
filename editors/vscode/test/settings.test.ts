import assert from "node:assert/strict";
import { test } from "node:test";

import { CLIENT_ID, documentSelector, needsRestart, normalizeSettings, SETTING_TRACE, TRACE_LEVELS } from "../src/settings";

test("defaults: PATH lookup, no tracing", () => {
  assert.deepEqual(normalizeSettings({}), { path: "", trace: "off" });
});

test("the path is trimmed; a non-string path means the default", () => {
  assert.deepEqual(normalizeSettings({ path: "  /opt/bin/stagelint \n" }).path, "/opt/bin/stagelint");
  assert.equal(normalizeSettings({ path: 42 }).path, "");
  assert.equal(normalizeSettings({ path: null }).path, "");
});

test("trace levels: the three known ones, anything else is off", () => {
  for (const level of TRACE_LEVELS) {
    assert.equal(normalizeSettings({ trace: level }).trace, level);
  }
  assert.equal(normalizeSettings({ trace: "Verbose" }).trace, "off");
  assert.equal(normalizeSettings({ trace: true }).trace, "off");
});

test("only a new path restarts the server; the client applies the trace level itself", () => {
  const base = normalizeSettings({ path: "/a", trace: "off" });
  assert.equal(needsRestart(base, normalizeSettings({ path: "/a", trace: "verbose" })), false);
  assert.equal(needsRestart(base, normalizeSettings({ path: "/b", trace: "off" })), true);
  assert.equal(needsRestart(base, normalizeSettings({ path: " /a ", trace: "off" })), false);
});

test("vscode-languageclient reads `<client id>.trace.server`, which is our setting", () => {
  assert.equal(`${CLIENT_ID}.trace.server`, SETTING_TRACE);
});

test("the document selector: markdown, YAML and JSON files on disk, atomic workflows, and stagelint's config files", () => {
  assert.deepEqual(documentSelector(), [
    { scheme: "file", language: "markdown" },
    { scheme: "file", language: "yaml" },
    { scheme: "file", language: "json" },
    { scheme: "file", language: "typescript", pattern: "**/{.atomic/workflows,workflows,workflow}/**" },
    { scheme: "file", pattern: "**/stagelint.toml" },
    { scheme: "file", pattern: "**/.stagelint.toml" },
  ]);
});
