#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/ from tests/fixtures/, examples/ and the saved regression inputs.
# The corpora are not committed (.gitignore); run this once before fuzzing, and again to add new
# fixtures. libFuzzer adds what it finds to the same directories.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - <<'PY'
import hashlib, json, os, pathlib

root = pathlib.Path(".")
sources = [root / "tests/fixtures", root / "examples"]
files = sorted(p for s in sources for p in s.rglob("*") if p.is_file() and p.stat().st_size < 64 * 1024)
corpus = root / "fuzz/corpus"

def save(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = corpus / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)

def named(*suffixes):
    return [p for p in files if p.name.endswith(suffixes)]

md, yml, js = named(".md"), named(".yaml", ".yml"), named(".json")
for p in md:
    text = p.read_bytes()
    for t in ("frontmatter", "stage_template"):
        save(t, text)
    save("render", text + b"\0" + hashlib.sha256(text).digest())
    if "lastlight" in str(p) or "workflows" in str(p):
        save("lastlight_template", text)
    if "prompts" in str(p) or "/steps/" in str(p):
        save("c3l", b"\0\0\xff\xff" + text)
for p in yml:
    save("yaml", p.read_bytes())
    if "lastlight" in str(p) or "workflows" in str(p):
        save("lastlight_template", p.read_bytes())
for p in js:
    save("json", p.read_bytes())
    save("yaml_roundtrip", p.read_bytes())
for p in named(".cassette.yaml", ".cassette.yml", ".cassette.json"):
    save("cassette", p.read_bytes())
    save("yaml_roundtrip", json.dumps({"from": p.name, "text": p.read_text(errors="replace")}))

# `check`: each fixture directory as one workspace, its files in the slots of
# `CHECK_FILES` (tests/fuzz_entry/mod.rs), `\0`-separated; a stagelint.toml goes last.
def slot(p):
    n, s = p.name, str(p)
    if n.endswith((".cassette.yaml", ".cassette.yml", ".cassette.json")): return 6
    if n in ("sm.yaml", "sm.yml", "sm.json"): return 1
    if n == "steps_registry.json": return 2
    if "/prompts/" in s and "workflows" in s: return 5
    if "/prompts/" in s: return 3
    if "workflows" in s and n.endswith((".yaml", ".yml")): return 4
    if n == "stagelint.toml": return 7
    if n.endswith(".md") and "SKILL" not in n: return 0
    return None
dirs = {}
for p in files:
    if "atomic" in p.parts:
        continue
    k = slot(p)
    if k is not None:
        dirs.setdefault(p.parent if k in (0, 1, 6, 7) else p.parents[1], {}).setdefault(k, p)
for parts in dirs.values():
    texts = [parts[k].read_bytes() if k in parts else b"" for k in range(8)]
    if 7 not in parts:
        texts.pop()
    save("check", b"\0".join(texts))

# Atomic projects (fixture cases, examples, the corpus per release): the eight parts before
# them empty but the stagelint.toml, then the slots of `CHECK_ATOMIC_FILES`, each filled with
# the first file of its kind.
def atomic_slot(p):
    n, s = p.name, str(p)
    if n == "package.json": return 0
    if s.endswith("extensions/workflow/config.json"): return 7
    if "/agents/" in s and n.endswith(".md"): return 6
    if not n.endswith(".ts"): return None
    text = p.read_text(errors="replace")
    if p.parent.parent.name != "workflows" and p.parent.name in ("claude", "copilot", "opencode"): return 1
    if "/lib/" in s: return 3
    if "@bastani/atomic-sdk" in text: return 5
    if "@bastani/workflows" in text and ".compile()" in text: return 4
    return 2
def atomic_project(p):
    parts = p.parts
    i = parts.index("atomic")
    # tests/fixtures/atomic/<Rule>/<case>, tests/corpus/atomic/<release>, examples/[broken/]atomic
    return pathlib.Path(*parts[: i + (3 if parts[i - 1] == "fixtures" else 2 if parts[i - 1] == "corpus" else 1)])
atomic_files = files + sorted(p for p in (root / "tests/corpus/atomic").rglob("*") if p.is_file() and p.stat().st_size < 64 * 1024)
projects = {}
for p in atomic_files:
    if "atomic" not in p.parts:
        continue
    project = projects.setdefault(atomic_project(p), {})
    if p.name == "stagelint.toml":
        project.setdefault("toml", p)
    elif (k := atomic_slot(p)) is not None:
        project.setdefault(k, p)
for parts in projects.values():
    head = [b""] * 7 + [parts["toml"].read_bytes() if "toml" in parts else b""]
    save("check", b"\0".join(head + [parts[k].read_bytes() if k in parts else b"" for k in range(8)]))

# `lsp`: client messages after the fixed initialize, one framed message after another.
def frames(*messages):
    out = b""
    for m in messages:
        body = json.dumps(m).encode()
        out += b"Content-Length: %d\r\n\r\n" % len(body) + body
    return out
uri = "file:///fuzz/plan.md"
stage = (root / "examples/code-review/review.md").read_text()
opened = {"jsonrpc": "2.0", "method": "textDocument/didOpen",
          "params": {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": stage}}}
def at(method, id, line, character, **extra):
    params = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}, **extra}
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}
change = {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": uri, "version": 2},
          "contentChanges": [{"range": {"start": {"line": 1, "character": 0}, "end": {"line": 3, "character": 2}}, "text": "é😀\r\n---\r"}]}}
save("lsp", frames(opened))
save("lsp", frames(opened, change, at("textDocument/hover", 1, 2, 3)))
save("lsp", frames(opened, at("textDocument/completion", 1, 5, 99)))
save("lsp", frames(opened, at("textDocument/definition", 1, 9, 4), at("textDocument/references", 2, 9, 4, context={"includeDeclaration": True})))
save("lsp", frames(opened, at("textDocument/rename", 1, 1, 5, newName="x")))
save("lsp", frames(opened, {"jsonrpc": "2.0", "id": 1, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 99, "character": 0}}, "context": {"diagnostics": []}}}))
save("lsp", frames(opened, {"jsonrpc": "2.0", "id": 1, "method": "textDocument/documentSymbol", "params": {"textDocument": {"uri": uri}}}, {"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": uri}}}))
save("lsp", frames(opened, {"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}}, {"jsonrpc": "2.0", "id": 9, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}))
save("lsp", b"Content-Length: 5\r\n\r\n{\"a\":Content-Length: x\r\n\r\nContent-Type: y\r\n\r\n")
save("lsp", b"Content-Length: 99999999999999999999\r\n\r\n{}")
PY
