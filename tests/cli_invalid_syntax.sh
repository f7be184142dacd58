#!/usr/bin/env bash
# Issue 27, item 1: code that does not parse fails the run (exit 1) in every output format, as in
# Ruff, while the parts that parse are still analyzed; Python 2 syntax is invalid syntax; a file
# that could not be checked is reported in every format too (exit 2).
set -u
devlint="$(realpath "$1")" source_dir="$(realpath "$2")"
source "$(dirname "$0")/cli_lib.sh"

proj="$tmp/proj"
mkdir -p "$proj/models" "$proj/py2" "$proj/clean"
cd "$proj"
# The tiny model's DL001 in one method, an unclosed parenthesis in another: the finding stays.
cp "$source_dir/tests/data/modeling_tiny.py" models/modeling_tiny.py
cat >> models/modeling_tiny.py <<'PY'


class Broken(nn.Module):
    def forward(self, x):
        return torch.relu(x
PY
printf 'import torch\n\ndef f():\n    print "hello"\n' > py2/modeling_print.py

formats=(full concise json json-lines sarif github gitlab junit)
for format in "${formats[@]}"; do
  run 1 "invalid syntax fails the run in $format" -- \
    "$devlint" check --no-cache --output-format "$format" models/modeling_tiny.py
  has out "invalid-syntax"
  has out "DL001" # the parts that parse are still analyzed
  lacks out "All checks passed"
done
run 1 "the message says the rest was checked" -- "$devlint" check --no-cache models
has out 'models/modeling_tiny.py:48:9: invalid-syntax: unexpected `return torch.relu(x`: `(` was never closed'
has out "devlint checked the parts that parse"
has out "1 of them is invalid syntax"
lacks err "syntax"
run 0 "--exit-zero" -- "$devlint" check --no-cache --exit-zero models

# JSON as Ruff's: no code, the name where a rule would be.
run 1 "json" -- "$devlint" check --no-cache --output-format json models
python3 - "$tmp/out" <<'PY' || fail=1
import json, sys
items = json.load(open(sys.argv[1]))
syntax = [i for i in items if i["rule"] == "invalid-syntax"]
assert len(syntax) == 1 and syntax[0]["code"] is None, items
assert syntax[0]["location"]["row"] == 48, syntax
PY
# JUnit counts it as a failure; SARIF has a result with no rule.
run 1 "junit" -- "$devlint" check --no-cache --output-format junit models
has out 'failures="2"'
run 1 "sarif" -- "$devlint" check --no-cache --output-format sarif models
python3 - "$tmp/out" <<'PY' || fail=1
import json, sys
results = json.load(open(sys.argv[1]))["runs"][0]["results"]
assert any("ruleId" not in r and "invalid-syntax" in r["message"]["text"] for r in results), results
PY

# Python 2, which tree-sitter-python parses without an error node.
for snippet in 'print "x"' 'exec "x = 1"' 'y = `x`' 'if a <> b: pass' 'raise E, "m"' 'x = 0777' \
  $'try:\n    pass\nexcept E, e:\n    pass'; do
  printf 'import torch\n%s\n' "$snippet" > py2/modeling_print.py
  run 1 "Python 2: $snippet" -- "$devlint" check --no-cache --output-format concise py2
  has out "invalid-syntax: Python 2"
done
printf 'import torch\nprint("x")\nprint (a), b\nexec("x")\nprint\nx = 0o777 + 0 + 00\n' > py2/modeling_print.py
run 0 "Python 3 print and exec calls are fine" -- "$devlint" check --no-cache py2

# Files that cannot be checked: in every format, exit 2.
printf '\x00\x01binary' > clean/modeling_blob.py
for format in "${formats[@]}"; do
  run 2 "a binary file is reported in $format" -- \
    "$devlint" check --no-cache --output-format "$format" clean
  has out "not-checked"
  has out "binary"
done
run 2 "junit counts it" -- "$devlint" check --no-cache --output-format junit clean
has out 'failures="1"'
lacks out "No findings"
run 2 "sarif: a notification, the invocation failed" -- \
  "$devlint" check --no-cache --output-format sarif clean
python3 - "$tmp/out" <<'PY' || fail=1
import json, sys
invocation = json.load(open(sys.argv[1]))["runs"][0]["invocations"][0]
assert invocation["executionSuccessful"] is False, invocation
assert "binary" in invocation["toolExecutionNotifications"][0]["message"]["text"], invocation
PY
exit $fail
