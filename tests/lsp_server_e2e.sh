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
