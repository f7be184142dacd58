#!/usr/bin/env bash
# Bad input gets a clear message and a defined exit code, never a crash.
set -u
devlint="$1"
source "$(dirname "$0")/cli_lib.sh"
expect_stderr() {
  if ! grep -q -- "$1" "$tmp/err"; then echo "FAIL: stderr lacks '$1'"; cat "$tmp/err"; fail=1; fi
}

run 2 "missing path" -- "$devlint" check "$tmp/nope.py"
expect_stderr "no such file"
printf 'class A(nn.Module):\n    def forward(self, x):\n        return x +\n' > "$tmp/broken.py"
run 1 "syntax error (invalid syntax fails the run)" -- "$devlint" check "$tmp/broken.py"
grep -q "invalid-syntax" "$tmp/out" || { echo "FAIL: stdout lacks invalid-syntax"; cat "$tmp/out"; fail=1; }
printf '\x00\x01\x02binary' > "$tmp/blob.py"
run 2 "binary file (not checked: exit 2)" -- "$devlint" check "$tmp/blob.py"
expect_stderr "binary"
printf 'x = "\xff\xfe"\n' > "$tmp/latin1.py"
run 2 "non-UTF-8 file (not checked: exit 2)" -- "$devlint" check "$tmp/latin1.py"
expect_stderr "UTF-8"
: > "$tmp/empty.py"
run 0 "empty file" -- "$devlint" check "$tmp/empty.py"
python3 -c "print('x = ' + '(' * 100000 + '1' + ')' * 100000)" > "$tmp/deep.py" 2>/dev/null ||
  { printf 'x = '; for i in $(seq 20000); do printf '('; done; printf 1; for i in $(seq 20000); do printf ')'; done; echo; } > "$tmp/deep.py"
run 0 "deeply nested file" -- "$devlint" check "$tmp/deep.py"
# 25 nested loops over a ModuleList and a chain of helpers calling three others each: the
# analysis must stay bounded (an exponential blow-up would never finish).
{
  printf 'import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n'
  printf '    def __init__(self):\n        super().__init__()\n'
  printf '        self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])\n\n'
  printf '    def forward(self, x):\n'
  indent="        "
  for i in $(seq 25); do printf '%sfor l%d in self.layers:\n' "$indent" "$i"; indent="$indent    "; done
  printf '%sx = x + l1(x)\n' "$indent"
  for k in $(seq 200); do
    printf '\n    def helper%d(self, x):\n' "$k"
    printf '        return self.helper%d(x) + self.helper%d(x) + self.helper%d(x)\n' $((k + 1)) $((k + 2)) $((k + 3))
  done
} > "$tmp/nested_loops.py"
# (a plain nn.Module: checked as a hand-made map splits it, where `x + l1(x)` is a finding)
run 1 "deeply nested loops and helper chains" -- "$devlint" check --hand-made-maps "$tmp/nested_loops.py"
mkdir -p "$tmp/many"
for i in $(seq 3000); do printf 'import torch\nx = torch.zeros(%d)\n' "$i" > "$tmp/many/f$i.py"; done
run 0 "directory with 3000 files" -- "$devlint" check "$tmp/many"
if [ "$(id -u)" != 0 ]; then
  printf 'x = 1\n' > "$tmp/secret.py"; chmod 000 "$tmp/secret.py"
  run 2 "unreadable file" -- "$devlint" check "$tmp/secret.py"
fi
run 2 "unknown output format" -- "$devlint" check --output-format nope "$tmp/empty.py"
run 2 "unknown rule selector" -- "$devlint" check --select XYZ1 "$tmp/empty.py"
run 2 "unknown rule doc" -- "$devlint" rule DL999
run 0 "rule doc" -- "$devlint" rule DL001
grep -q "cross-device-concat" "$tmp/out" || { echo "FAIL: rule doc"; fail=1; }
exit $fail
