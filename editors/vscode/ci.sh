#!/usr/bin/env bash
# CI for the VS Code extension: install from package-lock.json, build (schemas copied from
# ../../schemas, type-check, esbuild bundle), unit tests under plain Node, then the package.
#
#   ./ci.sh                                   stagelint.vsix: no binary; the extension runs the
#                                             `stagelint` on PATH (users install it themselves)
#   ./ci.sh --target linux-x64                stagelint-linux-x64.vsix carrying the binary of the
#                                             artifact profile, built here (cargo build --profile dist)
#   ./ci.sh --target darwin-arm64 --binary F  a platform package around a binary built elsewhere
#   ./ci.sh --target generic --target linux-x64   both, from one install and build
#
# The server test in test/server.test.ts runs against $STAGELINT_BIN, `stagelint` on PATH or
# ../../target/debug/stagelint, whichever it finds first, and is skipped without one.
set -euo pipefail
cd "$(dirname "$0")"

targets=()
binary=""
while [ $# -gt 0 ]; do
  case "$1" in
    --target) targets+=("${2:?--target needs a VS Code platform such as linux-x64, or generic}"); shift 2 ;;
    --binary) binary=${2:?--binary needs a path}; shift 2 ;;
    *) echo "ci.sh: unknown argument $1 (--target PLATFORM|generic [--binary FILE])" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(generic)
platforms=0
for t in "${targets[@]}"; do [ "$t" = generic ] || platforms=$((platforms + 1)); done
[ -z "$binary" ] || [ "$platforms" -eq 1 ] || { echo "ci.sh: --binary needs exactly one platform --target" >&2; exit 2; }

command -v npm >/dev/null || { echo "ci.sh: Node.js 20 or newer with npm is required" >&2; exit 1; }
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' \
  || { echo "ci.sh: Node.js 20 or newer is required (found $(node --version))" >&2; exit 1; }

# --ignore-scripts: nothing here needs an install script (esbuild finds its platform package
# without one), and skipping them keeps optional native modules (keytar, for publishing) from
# fetching prebuilt binaries.
npm ci --ignore-scripts --no-audit --no-fund
npm run build
npm test

# A binary is packaged only into a platform .vsix; the generic one never carries one.
rm -rf bin
trap 'rm -rf bin' EXIT

# The VS Code platform, the Rust target that builds for it, and the binary's file name.
host_platform() {
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) echo linux-x64 ;; Linux-aarch64) echo linux-arm64 ;;
    Darwin-arm64) echo darwin-arm64 ;; Darwin-x86_64) echo darwin-x64 ;;
    *) echo unknown ;;
  esac
}
rust_target() {
  case "$1" in
    linux-x64) echo x86_64-unknown-linux-gnu ;; linux-arm64) echo aarch64-unknown-linux-gnu ;;
    darwin-x64) echo x86_64-apple-darwin ;; darwin-arm64) echo aarch64-apple-darwin ;;
    win32-x64) echo x86_64-pc-windows-msvc ;; win32-arm64) echo aarch64-pc-windows-msvc ;;
    *) echo "ci.sh: unknown target $1 (linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64, win32-arm64)" >&2; exit 2 ;;
  esac
}
exe_name() { case "$1" in win32-*) echo stagelint.exe ;; *) echo stagelint ;; esac; }

package() {
  local target=$1 file=$binary triple name out listing wanted extra unpacked
  if [ "$target" != generic ]; then
    triple=$(rust_target "$target")
    name=$(exe_name "$target")
    if [ -z "$file" ]; then
      # The artifact profile (fat LTO), as the wheel is built; a no-op when CI built it already.
      if [ "$target" = "$(host_platform)" ]; then
        (cd ../.. && cargo build --locked --profile dist --bin stagelint)
        file=../../target/dist/$name
      else
        # Needs the target's standard library and linker (rustup target add "$triple").
        (cd ../.. && cargo build --locked --profile dist --bin stagelint --target "$triple")
        file=../../target/$triple/dist/$name
      fi
    fi
    [ -f "$file" ] || { echo "ci.sh: no binary at $file" >&2; exit 1; }
    mkdir -p bin
    cp "$file" "bin/$name"
    chmod 755 "bin/$name"
    out="stagelint-$target.vsix"
    npx --no-install @vscode/vsce package --target "$target" --no-dependencies --allow-missing-repository --skip-license -o "$out"
  else
    out="stagelint.vsix"
    # `vsce package` runs vscode:prepublish (schemas + minified bundle). No repository URL and no
    # LICENSE file in this directory: the licence is the package.json `license` field.
    npx --no-install @vscode/vsce package --no-dependencies --allow-missing-repository --skip-license -o "$out"
  fi

  # The package holds the bundle and every schema a jsonValidation/yamlValidation entry names,
  # and a platform package its binary.
  listing=$(unzip -Z1 "$out")
  wanted=$(node -p 'const c = require("./package.json").contributes;
    [...new Set([...c.jsonValidation, ...c.yamlValidation].map((v) => v.url.slice(2)))].join(" ")')
  extra=""
  [ "$target" = generic ] || extra="bin/$name"
  for file in dist/extension.js $wanted $extra; do
    grep -qx "extension/$file" <<<"$listing" || { echo "ci.sh: $file is missing from $out" >&2; exit 1; }
  done
  if [ "$target" = generic ] && grep -q '^extension/bin/' <<<"$listing"; then
    echo "ci.sh: the generic $out carries a binary" >&2; exit 1
  fi

  # A platform package for this machine: unpack it as VS Code installs it, and let the
  # extension's own discovery find the bundled binary, prefer it to PATH's, and run it.
  if [ "$target" = "$(host_platform)" ]; then
    unpacked=$(mktemp -d)
    unzip -q "$out" -d "$unpacked"
    STAGELINT_UNPACKED_VSIX="$unpacked/extension" node --import tsx --test --test-reporter=spec test/bundled.test.ts
    rm -rf "$unpacked"
  fi
  rm -rf bin
  echo "ci.sh: $out OK"
}

for target in "${targets[@]}"; do
  package "$target"
done
