#!/usr/bin/env bash
# Hostile input (issue 8), one case each: every input gets a correct analysis or a clear message,
# the other files of the run are still checked, and nothing crashes, hangs or reads without
# bound. Inputs are generated here, in a temporary directory. Timeouts are generous (sanitizer
# builds run this too); they catch hangs and blow-ups, they do not measure speed.
# Usage: cli_hostile_input.sh DEVLINT SOURCE_DIR
set -u
devlint="$1"
source_dir="$2"
source "$(dirname "$0")/cli_lib.sh"
tiny="$source_dir/tests/data/modeling_tiny.py" # one DL001 at 31:28
export DEVLINT_CACHE_DIR="$tmp/cache"

# The good file checked next to each hostile one: its finding must still be reported.
mkdir -p "$tmp/good"
cp "$tiny" "$tmp/good/modeling_tiny.py"
good="$tmp/good/modeling_tiny.py"
good_finding="modeling_tiny.py:31:28: DL001"
limited() { timeout -k 5 "$@"; }

# --- size ------------------------------------------------------------------------------------
# 10 MB: a model every 50 KB, the rest long docstrings; every model's finding is reported.
python3 - "$tiny" "$tmp/modeling_10mb.py" <<'EOF'
import sys
model = open(sys.argv[1]).read()
doc = '"""' + ("A docstring line of a large generated file. " * 20 + "\n") * 55 + '"""\n'
parts, n = [], 0
while sum(map(len, parts)) < 10_000_000:
    text = model
    for name in ("TinyBlock", "TinyStack", "TinyModel"):
        text = text.replace(name, "%s%d" % (name, n))
    parts.append(text)
    parts.append(doc)
    n += 1
open(sys.argv[2], "w").write("".join(parts))
open(sys.argv[2] + ".count", "w").write(str(n))
EOF
run 1 "10 MB file" -- limited 300 "$devlint" check --output-format concise "$tmp/modeling_10mb.py"
got=$(grep -c ": DL001" "$tmp/out")
[ "$got" = "$(cat "$tmp/modeling_10mb.py.count")" ] ||
  { echo "FAIL: 10 MB file: $got DL001 findings, expected $(cat "$tmp/modeling_10mb.py.count")"; fail=1; }

truncate -s 40M "$tmp/modeling_huge.py"
run 2 "file over the size limit" -- limited 60 "$devlint" check --output-format concise "$tmp/modeling_huge.py" "$good"
expect err "modeling_huge.py: not checked: file is 41943040 bytes, over the limit"
expect out "$good_finding"
expect out "1 file could not be checked"
absent out "All checks passed"

# --- nesting, 100,000 deep -------------------------------------------------------------------
for case in \
  "brackets|'x = ' + '(' * 100000 + '1' + ')' * 100000" \
  "lists|'x = ' + '[' * 100000 + ']' * 100000" \
  "calls|'x = ' + 'f(' * 100000 + ')' * 100000" \
  "binary_operators|'x = 1' + ' + 1' * 100000" \
  "unary_operators|'x = ' + '-' * 100000 + '1'" \
  "attribute_chain|'x = torch' + '.a' * 100000" \
  "subscripts|'x = y' + '[0]' * 100000" \
  "not_chain|'x = ' + 'not ' * 100000 + 'y'"; do
  name=${case%%|*}
  python3 -c "import sys; open(sys.argv[1], 'w').write('import torch\n' + ${case#*|} + '\n')" "$tmp/$name.py"
  run 1 "100,000-deep $name" -- limited 120 "$devlint" check --output-format concise "$tmp/$name.py" "$good"
  expect out "$good_finding"
  expect err "$name.py:2:[0-9]*: nested more than 400 levels deep; the code inside was not analyzed"
done
# Lambda bodies are not analyzed at any depth; 100,000 of them must still not crash.
python3 -c "import sys; open(sys.argv[1], 'w').write('import torch\nx = ' + 'lambda: ' * 100000 + '1\n')" "$tmp/lambdas.py"
run 1 "100,000-deep lambdas" -- limited 120 "$devlint" check --output-format concise "$tmp/lambdas.py" "$good"
expect out "$good_finding"
# Blocks: indentation makes the text quadratic in the depth, so 3,000 levels (4.5 MB). CPython
# itself stops at 100 levels, and tree-sitter's indentation stack before 3,000: a syntax error.
python3 -c "
import sys
out = ['import torch\n']
for d in range(3000):
    out.append(' ' * d + 'if x:\n')
out.append(' ' * 3000 + 'y = 1\n')
open(sys.argv[1], 'w').write(''.join(out))" "$tmp/blocks.py"
run 1 "3,000-deep blocks" -- limited 120 "$devlint" check --output-format concise "$tmp/blocks.py" "$good"
expect out "$good_finding"
cat "$tmp/out" >> "$tmp/err" # invalid syntax is in the report, depth warnings on stderr
expect err "blocks.py:[0-9]*:[0-9]*: \(nested more than 400 levels deep\|invalid-syntax\)"

# 100,000 classes, each with a finding of its own: all reported.
python3 - "$tmp/classes.py" <<'EOF'
import sys
out = ["import torch\nfrom torch import nn\n\n"]
for i in range(100000):
    out.append(f"class C{i}(nn.Module):\n    def forward(self, x):\n        return x.to('cuda:0')\n\n")
open(sys.argv[1], "w").write("".join(out))
EOF
run 1 "100,000 classes" -- limited 300 "$devlint" check --output-format concise "$tmp/classes.py"
[ "$(grep -c ": DL007" "$tmp/out")" = 100000 ] || { echo "FAIL: 100,000 classes: $(grep -c ": DL007" "$tmp/out") DL007 findings"; fail=1; }

# A 5 MB line, then the model with its finding (two lines further down than in the original).
python3 -c "
import sys
open(sys.argv[1], 'w').write('import torch\nsizes = [' + '1, ' * 1700000 + ']\n' + open(sys.argv[2]).read())" "$tmp/modeling_long_line.py" "$tiny"
run 1 "a 5 MB line" -- limited 120 "$devlint" check --output-format concise "$tmp/modeling_long_line.py"
expect out "modeling_long_line.py:33:28: DL001"
# The same line as a comment full of suppression codes.
python3 -c "
import sys
open(sys.argv[1], 'w').write('import torch\ny = torch.zeros(1).cuda()  # noqa: ' + 'DL001, ' * 700000 + 'DL007\n')" "$tmp/long_noqa.py"
run 0 "a 5 MB suppression comment" -- limited 120 "$devlint" check --output-format concise "$tmp/long_noqa.py"

# --- bytes -----------------------------------------------------------------------------------
printf 'import torch\nx = 1\x00\n' > "$tmp/nul.py"
run 2 "NUL bytes" -- "$devlint" check --output-format concise "$tmp/nul.py" "$good"
expect err "nul.py:2:6: not checked: binary file"
expect out "$good_finding"
for bytes in '\xff\xfe' '\xc0\xaf' '\xed\xa0\x80' '\xf4\x90\x80\x80' '\xe2\x82'; do
  printf "import torch\nx = '$bytes'\n" > "$tmp/bad_utf8.py"
  run 2 "invalid UTF-8 ($bytes)" -- "$devlint" check --output-format json "$tmp/bad_utf8.py" "$good"
  expect err "bad_utf8.py:2:6: not checked: not valid UTF-8"
  python3 -c 'import json,sys; assert [i["rule"] for i in json.load(open(sys.argv[1]))] == ["not-checked", "cross-device-concat"]' "$tmp/out" ||
    { echo "FAIL: invalid UTF-8: json output"; fail=1; }
done
printf '\xef\xbb\xbf' > "$tmp/modeling_bom.py" && cat "$tiny" >> "$tmp/modeling_bom.py"
run 1 "a byte order mark" -- "$devlint" check --output-format concise "$tmp/modeling_bom.py"
expect out "modeling_bom.py:31:28: DL001"
absent err "syntax error"
tr '\n' '\r' < "$tiny" > "$tmp/modeling_cr.py"
run 1 "CR-only line endings" -- "$devlint" check --output-format concise "$tmp/modeling_cr.py"
expect out "modeling_cr.py:31:28: DL001"
python3 -c "
import sys
lines = open(sys.argv[1]).read().split('\n')
ends = ['\r\n', '\n', '\r']
out = ''.join(l + (ends[i % 3] if lines[i + 1] else '\n') for i, l in enumerate(lines[:-1]))
open(sys.argv[2], 'w', newline='').write(out)" "$tiny" "$tmp/modeling_mixed.py"
run 1 "mixed line endings" -- "$devlint" check --output-format concise "$tmp/modeling_mixed.py"
expect out "modeling_mixed.py:31:28: DL001"

# --- things that are not files ---------------------------------------------------------------
mkfifo "$tmp/fifo.py"
run 2 "a FIFO on the command line" -- limited 20 "$devlint" check --output-format concise "$tmp/fifo.py" "$good"
expect err "fifo.py: not checked: a FIFO, not a regular file"
expect out "$good_finding"
run 2 "/dev/zero on the command line" -- limited 20 "$devlint" check --output-format concise /dev/zero "$good"
expect err "/dev/zero: not checked: a character device"
expect out "$good_finding"
run 2 "a FIFO as the configuration" -- limited 20 "$devlint" check --config "$tmp/fifo.py" "$good"

mkdir -p "$tmp/loops/pkg"
cp "$tiny" "$tmp/loops/pkg/modeling_tiny.py"
ln -s .. "$tmp/loops/pkg/up"
ln -s modeling_b.py "$tmp/loops/pkg/modeling_a.py"
ln -s modeling_a.py "$tmp/loops/pkg/modeling_b.py"
run 2 "symlink loops" -- limited 60 "$devlint" check --output-format concise "$tmp/loops"
expect err "modeling_a.py: not checked: .*symbolic links"
expect out "pkg/$good_finding"
run 2 "a symlink loop named on the command line" -- limited 20 "$devlint" check "$tmp/loops/pkg/modeling_a.py"
expect err "not checked: .*symbolic links"

ln -s "$tmp/nowhere.py" "$tmp/good/modeling_vanished.py"
run 2 "a file that vanished before it was read" -- "$devlint" check --output-format concise "$tmp/good"
expect err "modeling_vanished.py: not checked: No such file"
expect out "$good_finding"
rm "$tmp/good/modeling_vanished.py"

mkdir -p "$tmp/many"
python3 -c "
import sys
for i in range(20000):
    open(f'{sys.argv[1]}/f{i}.py', 'w').write(f'import torch\nx{i} = torch.zeros({i})\n')" "$tmp/many"
cp "$tiny" "$tmp/many/modeling_tiny.py"
run 1 "20,000 files in a directory" -- limited 300 "$devlint" check --output-format concise "$tmp/many"
expect out "$good_finding"
rm -rf "$tmp/many"

# --- permissions (as root, through an unprivileged user) ---------------------------------------
as_user=()
if [ "$(id -u)" = 0 ]; then
  command -v setpriv >/dev/null && as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
if [ "$(id -u)" != 0 ] || [ "${#as_user[@]}" -gt 0 ]; then
  mkdir -p "$tmp/perm/locked" "$tmp/perm/open"
  cp "$tiny" "$tmp/perm/open/modeling_tiny.py"
  cp "$tiny" "$tmp/perm/locked/modeling_tiny.py"
  cp "$tiny" "$tmp/perm/open/modeling_secret.py"
  chmod 755 "$tmp" "$tmp/perm" "$tmp/perm/open"
  chmod 644 "$tmp/perm/open/modeling_tiny.py"
  chmod 000 "$tmp/perm/open/modeling_secret.py" "$tmp/perm/locked"
  run 2 "an unreadable file" -- "${as_user[@]}" "$devlint" check --output-format concise "$tmp/perm/open"
  expect err "modeling_secret.py: not checked: cannot open: Permission denied"
  expect out "$good_finding"
  run 2 "an unreadable subdirectory" -- "${as_user[@]}" "$devlint" check --output-format concise "$tmp/perm"
  expect err "locked: not checked: cannot list the directory: Permission denied"
  expect out "open/$good_finding"
  run 2 "an unreadable directory" -- "${as_user[@]}" "$devlint" check "$tmp/perm/locked"
  expect err "not checked: cannot list the directory"
  absent out "All checks passed"
  chmod 755 "$tmp/perm/locked"
else
  echo "skip: permissions (root without setpriv)"
fi

# --- the current directory -------------------------------------------------------------------
mkdir "$tmp/gone"
(cd "$tmp/gone" && rmdir "$tmp/gone" &&
  "$devlint" check --output-format json "$good" >"$tmp/out" 2>"$tmp/err"; echo $? >"$tmp/rc")
[ "$(cat "$tmp/rc")" = 1 ] || { echo "FAIL: deleted cwd: exit $(cat "$tmp/rc")"; cat "$tmp/err"; fail=1; }
expect out '"code": "DL001"'

# --- configuration ---------------------------------------------------------------------------
cfg() { printf '%s\n' "$@" > "$tmp/devlint.toml"; }
python3 -c "print('[' + '.'.join(['a'] * 100000) + ']')" > "$tmp/devlint.toml"
run 2 "config: 100,000-deep table" -- limited 20 "$devlint" check --config "$tmp/devlint.toml" "$good"
expect err "nested more than 128 levels deep"
python3 -c "print('select = ' + '[' * 100000 + ']' * 100000)" > "$tmp/devlint.toml"
run 2 "config: 100,000-deep array" -- limited 20 "$devlint" check --config "$tmp/devlint.toml" "$good"
expect err "devlint.toml:1:"
python3 -c "print('no-split-modules = [' + ', '.join('\"B%d\"' % i for i in range(300000)) + ']')" > "$tmp/devlint.toml"
run 1 "config: a 300,000-name array" -- limited 120 "$devlint" check --output-format json --config "$tmp/devlint.toml" "$good"
[ "$(wc -c < "$tmp/out")" -lt 100000 ] || { echo "FAIL: the list is repeated in the report"; fail=1; }
for bad in 'select = 5' 'no-split-modules = "GLMBlock"' 'exclude = [1, 2]' '[per-file-ignores]
"*" = 3' 'select = { a = 1 }'; do
  cfg "$bad"
  run 2 "config: wrong type ($bad)" -- "$devlint" check --config "$tmp/devlint.toml" "$good"
  expect err "devlint.toml:[0-9]*: "
done

# --- nothing to check ------------------------------------------------------------------------
mkdir "$tmp/empty"
rm -f "$tmp/devlint.toml"
run 0 "an empty directory" -- "$devlint" check "$tmp/empty"
expect err "no Python files"
absent out "All checks passed"
run 2 "a missing path" -- "$devlint" check "$tmp/nonexistent"
absent out "All checks passed"

# --- bounded work ----------------------------------------------------------------------------
# One function of 40,000 statements with a branch every ten: the environment copies at each
# branch once made this quadratic (140 s); it must now take about as long as reading it.
python3 - "$tmp/long_function.py" <<'EOF'
import sys
out = ["import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
       "        super().__init__()\n        self.a = nn.Linear(2, 2)\n\n    def forward(self, x0):\n"]
for i in range(1, 40000):
    if i % 10 == 0:
        out.append(f"        if x{i-1} is None:\n            x{i} = x{i-1}\n        else:\n"
                   f"            x{i} = self.a(x{i-1}) + x{i-1}\n")
    else:
        out.append(f"        x{i} = x{i-1} * 2\n")
out.append("        return x39999\n")
open(sys.argv[1], "w").write("".join(out))
EOF
run 0 "a 40,000-statement function" -- limited 120 "$devlint" check "$tmp/long_function.py"
# The README's bounds per MB of input (2 s and 100 MB of memory per MB of model code), checked
# loosely, ten times over, for slow and sanitizer builds: on 2 MB of dense model code.
python3 - "$tiny" "$tmp/modeling_dense.py" <<'EOF'
import sys
model = open(sys.argv[1]).read()
parts, n = [], 0
while sum(map(len, parts)) < 2_000_000:
    text = model
    for name in ("TinyBlock", "TinyStack", "TinyModel"):
        text = text.replace(name, "%s%d" % (name, n))
    parts.append(text)
    n += 1
open(sys.argv[2], "w").write("".join(parts))
EOF
# CPU time (user + system), not wall time: a loaded CI machine must not fail a bound on work done.
if /usr/bin/time -f "%U %S %M" true 2>/dev/null; then
  /usr/bin/time -o "$tmp/time" -f "%U %S %M" "$devlint" check --no-cache --output-format concise \
    "$tmp/modeling_dense.py" >/dev/null 2>&1
  read -r user_seconds system_seconds kilobytes < <(tail -n 1 "$tmp/time")
  seconds=$(python3 -c "import sys; print(float(sys.argv[1]) + float(sys.argv[2]))" "$user_seconds" "$system_seconds")
  python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 40 and int(sys.argv[2]) < 2000 * 1024 else 1)" \
    "$seconds" "$kilobytes" ||
    { echo "FAIL: bounds per MB: ${seconds} s of CPU and ${kilobytes} KB for 2 MB"; fail=1; }
  echo "ok: 2 MB of model code in ${seconds} s, ${kilobytes} KB peak"
fi
exit $fail
