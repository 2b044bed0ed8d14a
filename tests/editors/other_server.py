"""A second language server for the editor test: it offers `workspace/executeCommand` and rejects
every command, as a server that does not know `stagelint.dryRun` must. Requests meant for
stagelint alone must never reach it."""
import json
import sys


def read():
    headers = {}
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        line = line.decode().strip()
        if not line:
            break
        key, value = line.split(":", 1)
        headers[key.lower()] = value.strip()
    return json.loads(sys.stdin.buffer.read(int(headers["content-length"])))


def send(message):
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


while True:
    message = read()
    method = message.get("method")
    if "id" in message and method:
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": None}
        if method == "initialize":
            reply["result"] = {"capabilities": {"executeCommandProvider": {"commands": ["other.cmd"]}}}
        elif method == "workspace/executeCommand":
            del reply["result"]
            reply["error"] = {"code": -32602, "message": "other: unknown command " + message["params"]["command"]}
        send(reply)
    elif method == "exit":
        sys.exit(0)
