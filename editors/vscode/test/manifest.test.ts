// package.json against the code and the repository: commands, activation, settings, schemas,
// pinned versions. Reads files only; no VS Code needed.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";

import { CLIENT_COMMANDS, SERVER_COMMANDS } from "../src/commands";
import { SETTING_PATH, SETTING_TRACE, TRACE_LEVELS } from "../src/settings";

const root = join(__dirname, "..");
const repo = join(root, "..", "..");
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const contributes = manifest.contributes;

interface Validation {
  fileMatch: string | string[];
  url: string;
}

/** The schema file a contribution points at: `./schemas/<name>`. */
function schemaName(url: string): string {
  const match = /^\.\/schemas\/([^/]+\.json)$/.exec(url);
  assert.ok(match, `${url} should be ./schemas/<file>.json`);
  return match[1];
}

/**
 * VS Code's fileMatch semantics (vscode-json-languageservice, and the YAML extension's copy):
 * each pattern is a glob matched as `**\/<pattern>`, `*` stays within one path segment, and a
 * `!` pattern excludes; the last matching pattern decides.
 */
function globRegExp(pattern: string): RegExp {
  let out = "";
  const glob = "**/" + pattern.replace(/^\//, "");
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (glob.startsWith("**/", i)) {
      out += "(?:.*/)?";
      i += 2;
    } else if (c === "*") {
      out += "[^/]*";
    } else if (c === "?") {
      out += "[^/]";
    } else {
      out += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
    }
  }
  return new RegExp(`^${out}$`);
}

function matches(fileMatch: string | string[], file: string): boolean {
  let matched = false;
  for (const pattern of Array.isArray(fileMatch) ? fileMatch : [fileMatch]) {
    const exclude = pattern.startsWith("!");
    if (globRegExp(exclude ? pattern.slice(1) : pattern).test(file)) {
      matched = !exclude;
    }
  }
  return matched;
}

/** The schemas VS Code would give `file`. */
function schemasFor(file: string): string[] {
  const all: Validation[] = file.endsWith(".json") ? contributes.jsonValidation : contributes.yamlValidation;
  return all.filter((v) => matches(v.fileMatch, file)).map((v) => schemaName(v.url));
}

describe("commands", () => {
  const contributed: string[] = contributes.commands.map((c: { command: string }) => c.command);

  test("the commands the extension registers are exactly those package.json contributes", () => {
    assert.deepEqual([...contributed].sort(), [...CLIENT_COMMANDS].sort());
    for (const command of contributes.commands) {
      assert.ok(command.title && command.category === "stagelint", JSON.stringify(command));
    }
  });

  test("the server's commands (stagelint.dryRun, stagelint.previewPrompt) are left to vscode-languageclient, not contributed", () => {
    for (const command of SERVER_COMMANDS) {
      assert.ok(!contributed.includes(command), `${command} must not be a palette command (it needs the lens's argument)`);
    }
  });

  test("every palette menu entry names a contributed command", () => {
    for (const entry of contributes.menus.commandPalette) {
      assert.ok(contributed.includes(entry.command), entry.command);
    }
  });

  test("each command activates the extension", () => {
    for (const command of CLIENT_COMMANDS) {
      assert.ok(manifest.activationEvents.includes(`onCommand:${command}`), command);
    }
  });
});

describe("activation", () => {
  const contains: string[] = manifest.activationEvents
    .filter((e: string) => e.startsWith("workspaceContains:"))
    .map((e: string) => e.slice("workspaceContains:".length));

  test("workspaces with state machines, registries, agents, workflows, cassettes or a config", () => {
    for (const file of [
      "app/.atomic/workflows/review/claude/index.ts",
      "app/.atomic/workflows/review.ts",
      "flows/sm.yaml",
      "flows/sm.yml",
      "flows/sm.json",
      ".agent/iterator/steps_registry.json",
      ".agent/iterator/agent.json",
      "lastlight/workflows/build.yaml",
      "flows/plan.cassette.yaml",
      "flows/plan.cassette.json",
      "stagelint.toml",
    ]) {
      assert.ok(
        contains.some((pattern) => globRegExp(pattern.replace(/^\*\*\//, "")).test(file)),
        `no workspaceContains pattern matches ${file}`,
      );
    }
  });

  test("the repository's examples activate it", () => {
    for (const example of ["code-review", "climpt", "lastlight", "atomic"]) {
      const files = walk(join(repo, "examples", example)).map((f) => f.slice(repo.length + 1).replace(/\\/g, "/"));
      assert.ok(
        files.some((file) => contains.some((pattern) => globRegExp(pattern.replace(/^\*\*\//, "")).test(file))),
        `examples/${example}`,
      );
    }
  });

  test("the entry point is the bundle", () => {
    assert.equal(manifest.main, "./dist/extension.js");
    assert.match(readFileSync(join(root, "scripts", "bundle.mjs"), "utf8"), /outfile: "dist\/extension\.js"/);
  });
});

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

describe("settings", () => {
  const properties = contributes.configuration.properties;

  test("stagelint.path: a string, empty by default (PATH lookup), restricted in untrusted workspaces", () => {
    assert.equal(properties[SETTING_PATH].type, "string");
    assert.equal(properties[SETTING_PATH].default, "");
    assert.ok(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations.includes(SETTING_PATH));
  });

  test("stagelint.trace.server: off, messages, verbose", () => {
    assert.deepEqual(properties[SETTING_TRACE].enum, [...TRACE_LEVELS]);
    assert.equal(properties[SETTING_TRACE].default, "off");
  });

  test("no other settings", () => {
    assert.deepEqual(Object.keys(properties).sort(), [SETTING_PATH, SETTING_TRACE].sort());
  });
});

describe("schemas", () => {
  const shipped = readdirSync(join(repo, "schemas")).filter((f) => f.endsWith(".json"));
  const validations: Validation[] = [...contributes.jsonValidation, ...contributes.yamlValidation];

  test("every schema a contribution names exists in ../../schemas", () => {
    for (const { url } of validations) {
      assert.ok(existsSync(join(repo, "schemas", schemaName(url))), url);
    }
  });

  // Markdown frontmatter is out of reach of jsonValidation/yamlValidation.
  test("every schema is associated, but the stage frontmatter's", () => {
    const used = new Set(validations.map((v) => schemaName(v.url)));
    assert.deepEqual(
      shipped.filter((f) => !used.has(f)).sort(),
      ["stage-frontmatter.schema.json"],
    );
  });

  test("each file gets the schema the schemas README gives it, and only that one", () => {
    const expected: [string, string[]][] = [
      ["examples/code-review/sm.yaml", ["sm.schema.json"]],
      ["flows/sm.yml", ["sm.schema.json"]],
      ["flows/sm.json", ["sm.schema.json"]],
      ["examples/code-review/sm.cassette.yaml", ["cassette.schema.json"]],
      ["examples/code-review/failing-lint.cassette.yaml", ["cassette.schema.json"]],
      ["flows/plan.cassette.yml", ["cassette.schema.json"]],
      ["flows/plan.cassette.json", ["cassette.schema.json"]],
      ["examples/climpt/.agent/fixer/steps_registry.json", ["steps-registry.schema.json"]],
      ["examples/climpt/.agent/fixer/agent.json", ["agent.schema.json"]],
      ["examples/lastlight/workflows/build.yaml", ["lastlight-workflow.schema.json"]],
      ["examples/lastlight/workflows/cron-build.yaml", ["lastlight-workflow.schema.json"]],
      ["workflows/deploy.yml", ["lastlight-workflow.schema.json"]],
      // A Last Light workflow cassette, where the dry-run looks for it (not the stage cassette's).
      ["examples/lastlight/workflows/cassettes/build.cassette.yaml", ["lastlight-cassette.schema.json"]],
      ["workflows/cassettes/deploy.cassette.yml", ["lastlight-cassette.schema.json"]],
      ["workflows/cassettes/deploy.cassette.json", ["lastlight-cassette.schema.json"]],
      // A climpt flow cassette, in its agent's directory (not the stage cassette's).
      ["examples/climpt/.agent/fixer/agent.cassette.yaml", ["flow-cassette.schema.json"]],
      [".agent/fixer/retry.cassette.yml", ["flow-cassette.schema.json"]],
      [".agent/fixer/agent.cassette.json", ["flow-cassette.schema.json"]],
      // Not ours: GitHub Actions, a workflow's cassette, prompts, other agent.json and JSON files.
      [".github/workflows/ci.yaml", []],
      [".github/workflows/ci.yml", []],
      ["workflows/build.cassette.yaml", ["cassette.schema.json"]],
      ["workflows/prompts/plan.yaml", []],
      ["tools/agent.json", []],
      ["package.json", []],
      ["docs/sm.yaml.example.yaml", []],
    ];
    for (const [file, schemas] of expected) {
      assert.deepEqual(schemasFor(file), schemas, file);
    }
  });

  test("the schemas the build copied into the extension are current", () => {
    const copied = join(root, "schemas");
    if (!existsSync(copied)) {
      return; // not built yet; `npm run build` copies them
    }
    for (const name of shipped) {
      assert.equal(
        readFileSync(join(copied, name), "utf8"),
        readFileSync(join(repo, "schemas", name), "utf8"),
        `schemas/${name} is stale: run npm run build`,
      );
    }
  });
});

describe("dependencies", () => {
  test("pinned to exact versions", () => {
    for (const group of ["dependencies", "devDependencies"]) {
      for (const [name, version] of Object.entries<string>(manifest[group])) {
        assert.match(version, /^\d+\.\d+\.\d+$/, `${group}.${name} = ${version}`);
      }
    }
  });

  test("package-lock.json matches package.json", () => {
    const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));
    assert.equal(lock.packages[""].version, manifest.version);
    assert.deepEqual(lock.packages[""].dependencies, manifest.dependencies);
    assert.deepEqual(lock.packages[""].devDependencies, manifest.devDependencies);
  });

  test("engines.vscode covers @types/vscode and what vscode-languageclient needs", () => {
    const minimum = (range: string) => range.replace(/^[\^~>=]+/, "").split(".").map(Number);
    const atLeast = (a: number[], b: number[]) => a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] >= b[2];
    const ours = minimum(manifest.engines.vscode);
    assert.ok(atLeast(ours, minimum(manifest.devDependencies["@types/vscode"])), "@types/vscode is newer than engines.vscode");
    const client = JSON.parse(readFileSync(join(root, "node_modules", "vscode-languageclient", "package.json"), "utf8"));
    assert.ok(atLeast(ours, minimum(client.engines.vscode)), `vscode-languageclient needs ${client.engines.vscode}`);
  });
});

test("only extension.ts imports vscode, so the rest runs under plain Node", () => {
  const sources = readdirSync(join(root, "src")).filter((f) => f.endsWith(".ts"));
  assert.ok(sources.includes("extension.ts"));
  for (const file of sources.filter((f) => f !== "extension.ts")) {
    const text = readFileSync(join(root, "src", file), "utf8");
    assert.doesNotMatch(text, /from\s+["']vscode(-languageclient[^"']*)?["']|require\(\s*["']vscode/, `src/${file} imports vscode`);
  }
});
