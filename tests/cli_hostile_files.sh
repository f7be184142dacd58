#!/usr/bin/env bash
# Files beside the code, stdin and the language server as an attacker would craft them (issue 23,
# items 5, 7, 8, 11 and 12), each in a hostile repository built here: the attack fails (no hang,
# no crash, no unbounded read), devlint says what it refused, and the model's finding is still
# reported. `timeout` turns a regression to a hang into a failure; it measures nothing.
# Usage: cli_hostile_files.sh DEVLINT
set -u
devlint="$1"
source "$(dirname "$0")/cli_lib.sh"
export DEVLINT_CACHE_DIR="$tmp/cache"
limited() { timeout -k 5 "$@"; }


# A two-file model package (configuration class + model) with one DL001 at 29:52.
new_package() {
  rm -rf "$tmp/pkg" && mkdir -p "$tmp/pkg"
  cat >"$tmp/pkg/configuration_tiny.py" <<'EOF'
from transformers import PretrainedConfig


class TinyConfig(PretrainedConfig):
    model_type = "tiny"

    def __init__(self, hidden_size=8, num_layers=2, **kwargs):
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        super().__init__(**kwargs)
EOF
  cat >"$tmp/pkg/modeling_tiny.py" <<'EOF'
import torch
from torch import nn
from transformers import PreTrainedModel

from .configuration_tiny import TinyConfig


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.lin = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, x):
        return self.lin(x)


class TinyModel(PreTrainedModel):
    config_class = TinyConfig
    _no_split_modules = ["Block"]

    def __init__(self, config):
        super().__init__(config)
        self.layers = nn.ModuleList([Block(config) for _ in range(config.num_layers)])

    def forward(self, x):
        presents = None
        for layer in self.layers:
            kv = layer(x)
            presents = kv if presents is None else torch.cat((presents, kv), dim=0)
        return presents
EOF
}
finding="modeling_tiny.py:29:52: DL001"

# --- config.json and configuration_*.py that are not regular files (item 5) -------------------
new_package
ln -s /dev/zero "$tmp/pkg/config.json"
run 1 "config.json -> /dev/zero" -- limited 60 "$devlint" check --output-format concise "$tmp/pkg"
expect err "config.json: not used: a character device, not a regular file"
expect out "$finding"
run 2 "config.json -> /dev/zero, devmap" -- limited 60 "$devlint" devmap "$tmp/pkg"
expect err "config.json\`: a character device, not a regular file"

new_package
mkfifo "$tmp/pkg/config.json"
run 1 "config.json FIFO" -- limited 60 "$devlint" check --output-format concise "$tmp/pkg"
expect err "config.json: not used: a FIFO, not a regular file"
expect out "$finding"
run 1 "config.json FIFO, --no-cache" -- limited 60 "$devlint" check --no-cache --output-format concise "$tmp/pkg"
expect err "config.json: not used: a FIFO"
run 2 "config.json FIFO, devmap" -- limited 60 "$devlint" devmap "$tmp/pkg"
expect err "config.json\`: a FIFO, not a regular file"

new_package
mkfifo "$tmp/pkg/configuration_x.py"
run 2 "configuration_x.py FIFO" -- limited 60 "$devlint" check --output-format concise "$tmp/pkg"
expect err "configuration_x.py: not checked: a FIFO, not a regular file"
expect out "$finding"
run 0 "configuration_x.py FIFO, devmap" -- limited 60 "$devlint" devmap "$tmp/pkg"
expect err "configuration_x.py: not checked: a FIFO"
expect out "total size: 288 B"

# --- pyproject.toml that is not a regular file: said, never ignored silently (item 5) ---------
for kind in fifo directory device; do
  new_package
  case $kind in
  fifo) mkfifo "$tmp/pkg/pyproject.toml" ;;
  directory) mkdir "$tmp/pkg/pyproject.toml" ;;
  device) ln -s /dev/zero "$tmp/pkg/pyproject.toml" ;;
  esac
  run 1 "pyproject.toml as a $kind" -- limited 60 "$devlint" check --no-cache --output-format concise "$tmp/pkg"
  expect err "pyproject.toml: configuration file not read: a"
  expect out "$finding"
done

# --- JSON nested 10,000 and 100,000 levels deep (item 5) ---------------------------------------
new_package
python3 -c "print('{\"a\":' * 10000 + '1' + '}' * 10000)" >"$tmp/pkg/config.json"
run 1 "config.json 10,000 levels deep" -- limited 60 "$devlint" check --output-format concise "$tmp/pkg"
expect err "config.json: not used: nested more than 100 levels deep"
expect out "$finding"
run 2 "config.json 10,000 levels deep, devmap" -- limited 60 "$devlint" devmap "$tmp/pkg"
expect err "nested more than 100 levels deep"
rm "$tmp/pkg/config.json"
python3 -c "print('{\"a\":' * 100000 + '1' + '}' * 100000)" >"$tmp/deep_map.json"
run 2 "device map 100,000 levels deep, devmap" -- limited 60 "$devlint" devmap "$tmp/pkg" --device-map "$tmp/deep_map.json"
expect err "deep_map.json\`: nested more than 100 levels deep"
run 1 "device map 100,000 levels deep, check" -- limited 60 "$devlint" check --output-format concise "$tmp/pkg" --device-map "$tmp/deep_map.json"
expect err "nested more than 100 levels deep"
mkfifo "$tmp/fifo_map.json"
run 2 "device map FIFO, devmap" -- limited 60 "$devlint" devmap "$tmp/pkg" --device-map "$tmp/fifo_map.json"
expect err "fifo_map.json\`: a FIFO, not a regular file"

# The server with the deep config.json beside the document: diagnostics, then a clean exit.
python3 -c "print('{\"a\":' * 10000 + '1' + '}' * 10000)" >"$tmp/pkg/config.json"
lsp() { # lsp FILE: the bytes of FILE to `devlint server`; its exit code and output
  limited 60 "$devlint" server <"$1" >"$tmp/out" 2>"$tmp/err"
  echo $? >"$tmp/rc"
}
python3 - "$tmp/pkg" "$tmp/messages" <<'EOF'
import json, sys
pkg, out = sys.argv[1], sys.argv[2]
def frame(m):
    body = json.dumps(m).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body
text = open(pkg + "/modeling_tiny.py").read()
messages = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
    {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "file://" + pkg + "/modeling_tiny.py", "languageId": "python", "version": 1,
        "text": text}}},
    {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
    {"jsonrpc": "2.0", "method": "exit"},
]
open(out, "wb").write(b"".join(frame(m) for m in messages))
EOF
lsp "$tmp/messages"
[ "$(cat "$tmp/rc")" = 0 ] || { echo "FAIL: server with a deep config.json: exit $(cat "$tmp/rc")"; fail=1; }
expect out '"code":"DL001"'

# --- the server's framing (item 7) --------------------------------------------------------------
for value in abc "" -5 99999999999999999999999; do
  printf 'Content-Length: %s\r\n\r\n{}' "$value" >"$tmp/messages"
  lsp "$tmp/messages"
  [ "$(cat "$tmp/rc")" = 1 ] || { echo "FAIL: Content-Length '$value': exit $(cat "$tmp/rc")"; fail=1; }
  expect err "bad message header: Content-Length is not a number of bytes"
  expect out '"code":-32700'
done
# Announced 2^63 and 2e9 bytes: skipped, never allocated; the next message is answered.
printf 'Content-Length: 9223372036854775808\r\n\r\n' >"$tmp/messages"
lsp "$tmp/messages"
[ "$(cat "$tmp/rc")" = 1 ] || { echo "FAIL: Content-Length 2^63: exit $(cat "$tmp/rc")"; fail=1; }
expect err "skipped a message of 9223372036854775808 bytes, over the limit"
python3 - "$tmp/messages" <<'EOF'
import sys
shutdown = b'{"jsonrpc":"2.0","id":7,"method":"shutdown"}'
with open(sys.argv[1], "wb") as out:
    out.write(b"Content-Length: 100000000\r\n\r\n" + b" " * 100000000)
    out.write(b"Content-Length: %d\r\n\r\n" % len(shutdown) + shutdown)
EOF
if /usr/bin/time -f "%M" true 2>/dev/null; then
  # The server's resident size before any message (mapped libraries) differs between machines:
  # compare with the same binary answering a single small message.
  printf 'Content-Length: 2\r\n\r\n{}' >"$tmp/small"
  limited 60 /usr/bin/time -o "$tmp/base" -f "%M" "$devlint" server <"$tmp/small" >/dev/null 2>&1
  limited 120 /usr/bin/time -o "$tmp/peak" -f "%M" "$devlint" server <"$tmp/messages" >"$tmp/out" 2>"$tmp/err"
  expect out '"id":7'
  # The skipped 100 MB body was read in chunks: far less than 100 MB held at once.
  grown=$(($(tail -n 1 "$tmp/peak") - $(tail -n 1 "$tmp/base")))
  [ "$grown" -lt 30000 ] || { echo "FAIL: an oversized message took $grown KB more than a small one"; fail=1; }
fi
rm -f "$tmp/messages"

# --- stdin gets a file's checks (item 8) -------------------------------------------------------
printf 'import torch\nx = 1\x00\n' >"$tmp/nul.py"
run 2 "NUL bytes on stdin" -- "$devlint" check --no-cache --stdin-filename modeling_nul.py - <"$tmp/nul.py"
expect err "modeling_nul.py:2:6: not checked: binary file (a NUL byte)"
absent out "All checks passed"
printf 'import torch\ny = "\xff"\n' >"$tmp/bad.py"
run 2 "invalid UTF-8 on stdin" -- "$devlint" check --no-cache --stdin-filename modeling_bad.py - <"$tmp/bad.py"
expect err "modeling_bad.py:2:6: not checked: not valid UTF-8"
run 2 "/dev/zero on stdin" -- limited 60 "$devlint" check --no-cache --stdin-filename m.py - </dev/zero
expect err "m.py: not checked: file is 33554433 bytes, over the limit of 33554432 bytes"
run 2 "a directory on stdin" -- limited 60 "$devlint" check --no-cache - <"$tmp"
expect err "cannot read stdin"
run 1 "a model on stdin" -- "$devlint" check --no-cache --output-format concise --stdin-filename modeling_tiny.py - <"$tmp/pkg/modeling_tiny.py"
expect out "modeling_tiny.py:29:52: DL001"

# --- devmap on absurd configuration values (item 11) -------------------------------------------
new_package
for config in '{"hidden_size": 1e30, "num_layers": 2}' '{"hidden_size": 18446744073709551615, "num_layers": 2}' \
  '{"hidden_size": -8, "num_layers": 2}' '{"hidden_size": 8, "num_layers": -5}'; do
  echo "$config" >"$tmp/pkg/config.json"
  run 0 "devmap with $config" -- limited 60 "$devlint" devmap "$tmp/pkg" --gpus 2
  expect out "total size: at least 0 B (parts not evaluated, listed below)"
  expect out "Not evaluated"
done
expect out "range(-5): a negative count"
echo '{"hidden_size": 18446744073709551615, "num_layers": 2}' >"$tmp/pkg/config.json"
run 0 "devmap with 2^64-1" -- limited 60 "$devlint" devmap "$tmp/pkg" --gpus 2
expect out "config.hidden_size: 18446744073709551615, an integer over 64 bits"
expect out "of no known size"

# 100,000 keys that match nothing (10^6 ran for minutes: a suggestion per key against every
# path, and a scan of the whole map per module): every key reported, the model still checked.
echo '{"hidden_size": 8, "num_layers": 150}' >"$tmp/pkg/config.json"
python3 -c "
import json, sys
keys = {'': 0}
keys.update({'layers.%d.x' % i: 0 for i in range(100000)})
json.dump(keys, open(sys.argv[1], 'w'))" "$tmp/map.json"
run 1 "a device map with 100,000 unknown keys" -- limited 300 "$devlint" devmap "$tmp/pkg" --device-map "$tmp/map.json"
expect out "100000 problem(s)"
expect out "code under this map"
rm -f "$tmp/map.json"

# --- --fix on a hard-linked file (item 12): written in place, every name fixed, said --------
mkdir -p "$tmp/links"
cat >"$tmp/links/modeling_fix.py" <<'EOF'
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        mask = torch.ones(4)
        return h * mask
EOF
cp "$tmp/links/modeling_fix.py" "$tmp/original.py"
ln "$tmp/links/modeling_fix.py" "$tmp/other_name.py"
inode_before=$(stat -c %i "$tmp/links/modeling_fix.py")
run 0 "--fix on a hard-linked file" -- "$devlint" check --no-cache --fix "$tmp/links/modeling_fix.py"
expect err "modeling_fix.py\` has 2 hard links: written in place, so every name holds the fixes"
cmp -s "$tmp/links/modeling_fix.py" "$tmp/original.py" && { echo "FAIL: --fix changed nothing"; fail=1; }
cmp -s "$tmp/links/modeling_fix.py" "$tmp/other_name.py" || { echo "FAIL: the hard link was split"; fail=1; }
[ "$(stat -c %i "$tmp/links/modeling_fix.py")" = "$inode_before" ] || { echo "FAIL: inode changed"; fail=1; }
[ "$(stat -c %h "$tmp/links/modeling_fix.py")" = 2 ] || { echo "FAIL: link count changed"; fail=1; }
exit $fail
