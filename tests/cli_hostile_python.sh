#!/usr/bin/env bash
# The Python environment probe on a hostile checkout (issue 23, item 10): devlint asks an
# interpreter for the environment's import paths, and nothing the checked repository supplies may
# run on the way: a `python3` on a relative PATH entry or on an absolute entry inside the checkout,
# a `sitecustomize.py` reached through PYTHONPATH=., a `.pth` file's import line, a
# `.python-version` choosing the interpreter. Each payload touches a RAN_* marker. The installed
# packages are still found: the user's site-packages with a `.pth` path line, a virtual
# environment (pyvenv.cfg) outside the checkout and one inside it.
set -u
devlint="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
data="$2/tests/data/search_path"
source "$(dirname "$0")/cli_lib.sh"
unset DEVLINT_PYTHON VIRTUAL_ENV PYTHONPATH PYTHONHOME

# The real interpreter behind python3 (a pyenv shim, a venv link, ...) and its version.
real_python=$(cd / && python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
version=$(cd / && python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
[ -x "$real_python" ] || { echo "SKIP: no python3"; exit 77; }
base_path=/usr/bin:/bin

payload() { # payload NAME: a shell script that touches $tmp/RAN_NAME, then runs the interpreter
  printf '#!/bin/sh\ntouch %s/RAN_%s\nexec %s "$@"\n' "$tmp" "$1" "$real_python"
}
markers() { (cd "$tmp" && ls -d RAN_* 2>/dev/null | tr '\n' ' '); }
no_payload_ran() { # no_payload_ran DESCRIPTION
  if [ -n "$(markers)" ]; then
    echo "FAIL: $1: a planted payload ran: $(markers)"
    fail=1
    rm -f "$tmp"/RAN_*
  fi
}
# The findings the model has with the library found (see cli_search_path.sh).
found_library() { # found_library DESCRIPTION WHERE: fakelib was read from WHERE
  python3 - "$tmp/out" "$2" "$1" <<'PY' || fail=1
import json, sys
findings = json.load(open(sys.argv[1]))
lines = sorted((f["code"], f["location"]["row"]) for f in findings)
if lines != [("DL001", 35), ("DL002", 19)]:
    sys.exit(f"FAIL: {sys.argv[3]}: the library was not found: {lines}")
dl002 = [f for f in findings if f["code"] == "DL002"][0]
text = dl002["message"] + " " + (dl002.get("why") or "")
if f"in {sys.argv[2]}/fakelib/" not in text:
    sys.exit(f"FAIL: {sys.argv[3]}: fakelib not read from {sys.argv[2]}: {text}")
print(f"ok: {sys.argv[3]}: the library found in {sys.argv[2]}")
PY
}

# The checkout: a model whose base class comes from the installed fakelib, and the plants.
repo="$tmp/repo"
mkdir -p "$repo/bin" "$repo/.venv-planted/bin"
cp -r "$data/project/tiny_vlm" "$repo/tiny_vlm"
payload relative_path_python3 >"$repo/python3"
payload relative_bin_python3 >"$repo/bin/python3"
payload checkout_path_python3 >"$repo/.venv-planted/bin/python3"
chmod +x "$repo/python3" "$repo/bin/python3" "$repo/.venv-planted/bin/python3"
printf 'home = /usr/bin\ninclude-system-site-packages = true\n' >"$repo/.venv-planted/pyvenv.cfg"
printf 'open("%s/RAN_sitecustomize", "w")\n' "$tmp" >"$repo/sitecustomize.py"
printf 'open("%s/RAN_usercustomize", "w")\n' "$tmp" >"$repo/usercustomize.py"
echo planted-version >"$repo/.python-version"
cd "$repo" || exit 1

# The user's own interpreter: a wrapper outside the checkout (as a pyenv shim is) that reports
# whether it saw the checkout's .python-version, and the user's site-packages in $HOME, where a
# .pth file's path line points to the library and another's import line is a payload.
mkdir -p "$tmp/shims"
cat >"$tmp/shims/python3" <<SH
#!/bin/sh
pwd >"$tmp/shim_cwd"
[ -e .python-version ] && touch "$tmp/RAN_python_version"
exec "$real_python" "\$@"
SH
chmod +x "$tmp/shims/python3"
home="$tmp/home"
user_site="$home/.local/lib/python$version/site-packages"
mkdir -p "$user_site" "$tmp/library"
cp -r "$data/site/fakelib" "$tmp/library/fakelib"
printf '# the library, installed in development mode\n%s/library\n' "$tmp" >"$user_site/fakelib.pth"
printf 'import os; open("%s/RAN_pth_import", "w")\n' "$tmp" >"$user_site/evil.pth"
printf 'open("%s/RAN_site_sitecustomize", "w")\n' "$tmp" >"$user_site/sitecustomize.py"

run 1 "relative PATH entries, PYTHONPATH=., a .python-version" -- \
  env HOME="$home" PATH=":bin:$repo/bin:$tmp/shims:$base_path" PYTHONPATH=. \
  "$devlint" check --no-cache --output-format json tiny_vlm
no_payload_ran "relative PATH entries, PYTHONPATH=., a .python-version"
found_library "the user's site-packages through a .pth path line" "$tmp/library"
[ "$(cat "$tmp/shim_cwd" 2>/dev/null)" = / ] ||
  { echo "FAIL: the interpreter ran in $(cat "$tmp/shim_cwd" 2>/dev/null), not /"; fail=1; }

# An absolute PATH entry inside the checkout: its python3 is not run (the planted
# .venv-planted/bin/python3 is a script, not a link to an interpreter outside the checkout).
run 1 "python3 on absolute PATH entries inside the checkout" -- \
  env HOME="$home" PATH="$repo/.venv-planted/bin:$repo/bin:$tmp/shims:$base_path" \
  "$devlint" check --no-cache --output-format json tiny_vlm
no_payload_ran "python3 on absolute PATH entries inside the checkout"
found_library "the next python3 on PATH" "$tmp/library"

# A virtual environment outside the checkout: its site-packages, not the user's.
make_venv() { # make_venv DIR: bin/python3 linked to the real interpreter, fakelib installed
  mkdir -p "$1/bin" "$1/lib/python$version/site-packages"
  ln -s "$real_python" "$1/bin/python3"
  printf 'home = %s\ninclude-system-site-packages = false\n' "$(dirname "$real_python")" \
    >"$1/pyvenv.cfg"
  cp -r "$data/site/fakelib" "$1/lib/python$version/site-packages/fakelib"
  printf 'import os; open("%s/RAN_venv_pth_import", "w")\n' "$tmp" \
    >"$1/lib/python$version/site-packages/evil.pth"
}
make_venv "$tmp/venv"
run 1 "an activated virtual environment" -- \
  env HOME="$home" PATH="$tmp/venv/bin:$base_path" PYTHONPATH=. \
  "$devlint" check --no-cache --output-format json tiny_vlm
no_payload_ran "an activated virtual environment"
found_library "the virtual environment's site-packages" \
  "$tmp/venv/lib/python$version/site-packages"

# A virtual environment inside the checkout (a project's .venv, activated): read as data, its
# interpreter run as the real file it links to.
make_venv "$repo/.venv"
run 1 "a virtual environment inside the checkout" -- \
  env HOME="$home" PATH="$repo/.venv/bin:$base_path" \
  "$devlint" check --no-cache --output-format json tiny_vlm
no_payload_ran "a virtual environment inside the checkout"
found_library "the checkout's virtual environment" \
  "$repo/.venv/lib/python$version/site-packages"

# No interpreter outside the checkout: the run goes on without the environment.
run 0 "only planted interpreters: none runs" -- \
  env HOME="$home" PATH=":bin:$repo/bin" \
  "$devlint" check --no-cache --output-format concise tiny_vlm
no_payload_ran "only planted interpreters"
run 0 "a relative DEVLINT_PYTHON is not run" -- \
  env HOME="$home" PATH="$base_path" DEVLINT_PYTHON=bin/python3 \
  "$devlint" check --no-cache --output-format concise tiny_vlm
no_payload_ran "a relative DEVLINT_PYTHON"

# The language server asks the same way.
python3 - "$devlint" "$repo" "$home" ":bin:$tmp/shims:$base_path" <<'PY' || fail=1
import json, os, subprocess, sys
root = sys.argv[2]
path = os.path.join(root, "tiny_vlm/modeling_tiny_vlm.py")
def frame(o):
    body = json.dumps(o).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body
messages = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
    {"jsonrpc": "2.0", "method": "initialized", "params": {}},
    {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "file://" + path, "languageId": "python", "version": 1, "text": open(path).read()}}},
    {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}]
environment = dict(os.environ, HOME=sys.argv[3], PATH=sys.argv[4], PYTHONPATH=".")
r = subprocess.run([sys.argv[1], "server"], input=b"".join(frame(m) for m in messages),
                   capture_output=True, timeout=60, cwd=root, env=environment)
out, codes = r.stdout, set()
while out:
    header, _, rest = out.partition(b"\r\n\r\n")
    length = int(header.split(b":")[1])
    reply, out = json.loads(rest[:length]), rest[length:]
    if reply.get("method") == "textDocument/publishDiagnostics":
        codes = set(d["code"] for d in reply["params"]["diagnostics"])
codes = sorted(codes)
if codes != ["DL001", "DL002"]:
    sys.exit(f"FAIL: server: the library was not found: {codes}")
print("ok: the server finds the library the same way")
PY
no_payload_ran "the language server"

exit $fail
