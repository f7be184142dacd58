#!/usr/bin/env bash
# `devlint server` end to end with a real LSP client: Neovim (Debian's 0.7.2) in headless mode runs
# tests/lsp_nvim.lua, which opens, edits and saves a model file and checks the pushed diagnostics
# and code actions. Exit 77 = skipped (no Neovim).
set -u
devlint="$(realpath "$1")" source_dir="$(realpath "$2")"
source "$(dirname "$0")/cli_lib.sh"

# The protocol's edges, with a scripted client: requests before initialize, unknown methods,
# malformed JSON, a document that is not Python, exit codes with and without shutdown.
python3 - "$devlint" <<'PY' || exit 1
import json, subprocess, sys
def frame(o):
    body = (o if isinstance(o, str) else json.dumps(o)).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body
def serve(messages):
    r = subprocess.run([sys.argv[1], "server"], input=b"".join(frame(m) for m in messages),
                       capture_output=True, timeout=60)
    out, replies = r.stdout, []
    while out:
        header, _, rest = out.partition(b"\r\n\r\n")
        length = int(header.split(b":")[1])
        replies.append(json.loads(rest[:length]))
        out = rest[length:]
    return r.returncode, replies
init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
code, replies = serve([{"jsonrpc": "2.0", "id": 0, "method": "textDocument/codeAction", "params": {}}, init,
                       "{not json", {"jsonrpc": "2.0", "id": 2, "method": "no/such"},
                       {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                           "uri": "file:///tmp/notes.txt", "languageId": "plaintext", "version": 1, "text": "x"}}},
                       {"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeAction", "params": {}},
                       {"jsonrpc": "2.0", "id": 4, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}])
by_id = {r.get("id"): r for r in replies}
assert by_id[0]["error"]["code"] == -32002, replies          # not initialized
assert by_id[1]["result"]["serverInfo"]["name"] == "devlint", replies
assert by_id[None]["error"]["code"] == -32700, replies       # parse error
assert by_id[2]["error"]["code"] == -32601, replies          # method not found
assert by_id[3]["error"]["code"] == -32600, replies          # malformed params, still serving
assert by_id[4]["result"] is None and code == 0, (code, replies)
assert not any(r.get("method") == "textDocument/publishDiagnostics" for r in replies), replies
code, _ = serve([init, {"jsonrpc": "2.0", "method": "exit"}])
assert code == 1, code                                        # exit without shutdown
code, _ = serve([init])
assert code == 1, code                                        # the client went away
print("ok: the server answers protocol errors and keeps serving; exit codes as the spec says")
PY

# Versioned diagnostics and coalesced bursts (issue 27): each publishDiagnostics carries the
# version it was computed for; changes that arrive together (all of them already waiting on stdin,
# a file here, as fast typing queues them) are analyzed once, at the last version.
python3 - "$devlint" "$source_dir/tests/data/modeling_tiny.py" "$tmp" <<'PY' || exit 1
import json, os, select, subprocess, sys
devlint, model, tmp = sys.argv[1:4]
path = os.path.join(tmp, "versions", "modeling_tiny.py")
os.makedirs(os.path.dirname(path))
text = open(model).read()
open(path, "w").write(text)
uri = "file://" + path
def frame(o):
    body = json.dumps(o).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body
def parse(out):
    replies = []
    while out:
        header, _, rest = out.partition(b"\r\n\r\n")
        length = int(header.split(b":")[1])
        replies.append(json.loads(rest[:length]))
        out = rest[length:]
    return replies
def version_text(v):  # each version moves the finding down by one line
    return "\n" * (v - 1) + text
def change(v):
    return {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": v}, "contentChanges": [{"text": version_text(v)}]}}
init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
opened = {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
    "uri": uri, "languageId": "python", "version": 1, "text": version_text(1)}}}
finding_line = [l.startswith("                presents = torch.cat") for l in text.split("\n")].index(True)

# A burst: the open and five changes wait on stdin before the server reads any of them.
with open(os.path.join(tmp, "burst.lsp"), "wb") as f:
    f.write(b"".join(frame(m) for m in [init, opened] + [change(v) for v in range(2, 7)] + [
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}]))
with open(os.path.join(tmp, "burst.lsp"), "rb") as stdin:
    r = subprocess.run([devlint, "server"], stdin=stdin, capture_output=True, timeout=60, cwd=tmp)
published = [m["params"] for m in parse(r.stdout) if m.get("method") == "textDocument/publishDiagnostics"]
assert r.returncode == 0, r
assert [p.get("version") for p in published] == [6], [p.get("version") for p in published]
lines = [d["range"]["start"]["line"] for d in published[0]["diagnostics"] if d["code"] == "DL001"]
assert lines == [finding_line + 5], (lines, finding_line)
print("ok: a burst of five changes is analyzed once, at the last version, and says so")

# One change at a time, each waiting for its diagnostics: every version is published with it.
server = subprocess.Popen([devlint, "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=tmp)
buffer = b""
def receive():
    global buffer
    while True:
        replies = []
        try:
            header, sep, rest = buffer.partition(b"\r\n\r\n")
            if sep and len(rest) >= int(header.split(b":")[1]):
                length = int(header.split(b":")[1])
                buffer = rest[length:]
                return json.loads(rest[:length])
        except ValueError:
            pass
        assert select.select([server.stdout], [], [], 60)[0], "no answer in 60 s"
        chunk = os.read(server.stdout.fileno(), 65536)
        assert chunk, "the server closed its output"
        buffer += chunk
def publish():
    while True:
        m = receive()
        if m.get("method") == "textDocument/publishDiagnostics":
            return m["params"]
def send(m):
    server.stdin.write(frame(m))
    server.stdin.flush()
send(init)
send(opened)
got = publish()
assert got.get("version") == 1 and [d["range"]["start"]["line"] for d in got["diagnostics"]] == [finding_line], got
for v in (2, 3):
    send(change(v))
    got = publish()
    assert got.get("version") == v, got
    assert [d["range"]["start"]["line"] for d in got["diagnostics"]] == [finding_line + v - 1], got
send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
while receive().get("id") != 2:
    pass
send({"jsonrpc": "2.0", "method": "exit"})
assert server.wait(timeout=60) == 0
print("ok: publishDiagnostics carries the version of each change it answers")
PY

# Search paths as `devlint check` has them: the Python environment's ($DEVLINT_PYTHON stands in
# for python3) unless `isolated`, and `searchPaths` from initializationOptions.
cp -r "$source_dir/tests/data/search_path" "$tmp/search_path"
printf '#!/bin/sh\nprintf "%%s\\n" "%s"\n' "$tmp/search_path/site" > "$tmp/fake-python"
chmod +x "$tmp/fake-python"
DEVLINT_PYTHON="$tmp/fake-python" python3 - "$devlint" "$tmp/search_path" <<'PY' || exit 1
import json, os, subprocess, sys
root = sys.argv[2]
path = os.path.join(root, "project/tiny_vlm/modeling_tiny_vlm.py")
def frame(o):
    body = json.dumps(o).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body
def diagnostics(options):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"capabilities": {}, "initializationOptions": options}}
    opened = {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "file://" + path, "languageId": "python", "version": 1, "text": open(path).read()}}}
    messages = [init, {"jsonrpc": "2.0", "method": "initialized", "params": {}}, opened,
                {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}]
    r = subprocess.run([sys.argv[1], "server"], input=b"".join(frame(m) for m in messages),
                       capture_output=True, timeout=60, cwd=root)
    out, found = r.stdout, []
    while out:
        header, _, rest = out.partition(b"\r\n\r\n")
        length = int(header.split(b":")[1])
        reply = json.loads(rest[:length])
        if reply.get("method") == "textDocument/publishDiagnostics":
            found = sorted((d["code"], d["range"]["start"]["line"] + 1) for d in reply["params"]["diagnostics"])
        out = rest[length:]
    return found
want = [("DL001", 35), ("DL002", 19)]
assert diagnostics({}) == want, diagnostics({})
assert diagnostics({"isolated": True}) == [], diagnostics({"isolated": True})
site = os.path.join(root, "site")
assert diagnostics({"isolated": True, "searchPaths": [site]}) == want
print("ok: the server reads base classes from the environment and from searchPaths")
PY

command -v nvim >/dev/null || { echo "SKIP: nvim is not installed (Debian package neovim)"; exit 77; }

project="$tmp/project"
mkdir -p "$project/models" "$project/configured"
# The tiny model with a hard-coded device too (DL007, turned off by initializationOptions).
sed 's/        out = self.proj(hidden_states)/        out = self.proj(hidden_states.cuda())/' \
  "$source_dir/tests/data/modeling_tiny.py" > "$project/models/modeling_two.py"
cp "$project/models/modeling_two.py" "$project/configured/"
printf '[tool.devlint]\nignore = ["DL001"]\n' > "$project/configured/pyproject.toml"
grep -q 'hidden_states.cuda()' "$project/models/modeling_two.py" || { echo "FAIL: fixture edit"; exit 1; }

export DEVLINT_BIN="$devlint" LSP_PROJECT="$project" LSP_RESULT="$tmp/result"
export HOME="$tmp/home" XDG_STATE_HOME="$tmp/state" XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config"
mkdir -p "$HOME"
cd "$project"
timeout 120 nvim --headless -u NONE -i NONE -n -c "luafile $source_dir/tests/lsp_nvim.lua" \
  </dev/null >"$tmp/nvim.out" 2>&1
status=$?
cat "$tmp/result" 2>/dev/null || { echo "FAIL: Neovim wrote no result (exit $status)"; cat "$tmp/nvim.out"; exit 1; }
if [ "$status" != 0 ] || ! grep -qx PASS "$tmp/result"; then
  echo "FAIL: the Neovim client run failed (exit $status)"
  cat "$tmp/nvim.out"
  cat "$HOME/.cache/nvim/lsp.log" "$tmp/state/nvim/lsp.log" 2>/dev/null | tail -20
  exit 1
fi
grep -q 'noqa: DL001' "$project/models/modeling_two.py" || { echo "FAIL: the saved file lacks the noqa"; exit 1; }
echo "ok: Neovim's LSP client sees devlint's diagnostics and applies its code actions"
