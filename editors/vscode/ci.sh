#!/usr/bin/env bash
# CI for the VS Code extension: install from package-lock.json, build (schemas copied from
# ../../schemas, type-check, esbuild bundle), unit tests under plain Node, then stagelint.vsix.
# The server test in test/server.test.ts runs against $STAGELINT_BIN, `stagelint` on PATH or
# ../../target/debug/stagelint, whichever it finds first, and is skipped without one.
set -euo pipefail
cd "$(dirname "$0")"

command -v npm >/dev/null || { echo "ci.sh: Node.js 20 or newer with npm is required" >&2; exit 1; }
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' \
  || { echo "ci.sh: Node.js 20 or newer is required (found $(node --version))" >&2; exit 1; }

# --ignore-scripts: nothing here needs an install script (esbuild finds its platform package
# without one), and skipping them keeps optional native modules (keytar, for publishing) from
# fetching prebuilt binaries.
npm ci --ignore-scripts --no-audit --no-fund
npm run build
npm test
# `vsce package` runs vscode:prepublish (schemas + minified bundle). No repository URL and no
# LICENSE file in this directory: the licence is the package.json `license` field.
npx --no-install @vscode/vsce package --no-dependencies --allow-missing-repository --skip-license -o stagelint.vsix
# The package holds the bundle and every schema a jsonValidation/yamlValidation entry names.
listing=$(npx --no-install @vscode/vsce ls --no-dependencies 2>/dev/null)
for file in dist/extension.js $(node -p 'const c = require("./package.json").contributes;
  [...new Set([...c.jsonValidation, ...c.yamlValidation].map((v) => v.url.slice(2)))].join(" ")'); do
  grep -qx "$file" <<<"$listing" || { echo "ci.sh: $file is missing from stagelint.vsix" >&2; exit 1; }
done
echo "ci.sh: stagelint.vsix OK"
