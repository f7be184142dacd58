#!/usr/bin/env bash
# Search paths (README "Search paths"): a base class imported from an installed library is read
# from --search-path, the `search-path` setting or the Python environment ($DEVLINT_PYTHON stands
# in for python3), never from an installed transformers; --isolated turns the environment off;
# the finding says where `_no_split_modules` came from; the result cache re-analyzes when a file
# read on a search path changes.
set -u
devlint="$1"
data="$2/tests/data/search_path"
source "$(dirname "$0")/cli_lib.sh"

cp -r "$data/site" "$tmp/site"
cp -r "$data/project" "$tmp/project"
cd "$tmp" || exit 1
export DEVLINT_PYTHON=/bin/false # no environment unless a test sets one
model=project/tiny_vlm

# Without the library, TinyPreTrainedModel is unknown: a PreTrainedModel without
# _no_split_modules refuses device_map="auto", so nothing is split and nothing is reported.
run 0 "the library's base unknown: nothing split" -- \
  "$devlint" check --no-cache --isolated --output-format concise "$model"

# With the library on a search path, its TinyPreTrainedModel declares _no_split_modules through
# a re-export (`if TYPE_CHECKING:` and `import *`) and a relative base in another file.
run 1 "--search-path finds the library's base class" -- \
  "$devlint" check --no-cache --isolated --search-path site --output-format json "$model"
cp "$tmp/out" "$tmp/with_site.json"
python3 - "$tmp/with_site.json" "$tmp/site" <<'PY' || fail=1
import json, os, sys
findings = json.load(open(sys.argv[1]))
site = os.path.abspath(sys.argv[2])
lines = sorted((f["code"], f["location"]["row"]) for f in findings)
# The projector's residual (line 19) may be split, and the root joins the projector's output with
# the embeddings (line 35); the decoder layers are no-split.
if lines != [("DL001", 35), ("DL002", 19)]:
    sys.exit(f"FAIL: expected DL001 at 35 and DL002 at 19, got {lines}")
dl002 = [f for f in findings if f["code"] == "DL002"][0]
message = dl002["message"] + " " + (dl002.get("why") or "")
want = f"(from TinyPreTrainedModel in {site}/fakelib/models/tiny/modeling_tiny.py)"
if "_no_split_modules = ['TinyDecoderLayer']" not in message or want not in message:
    sys.exit(f"FAIL: the source of _no_split_modules is not named: {message}")
print("ok: the finding names the file on the search path")
PY

# The same from the configuration's `search-path`, relative to the configuration file.
printf '[tool.devlint]\nsearch-path = ["../site"]\n' >project/pyproject.toml
run 1 "search-path in the configuration" -- \
  "$devlint" check --no-cache --output-format json "$model"
cmp -s "$tmp/out" "$tmp/with_site.json" || { echo "FAIL: config search-path differs"; fail=1; }
run 0 "--show-settings lists the search path" -- \
  "$devlint" check --show-settings "$model"
grep -q "search-path = \[\"$tmp/site\"\]" "$tmp/out" ||
  { echo "FAIL: --show-settings: $(cat "$tmp/out")"; fail=1; }
rm project/pyproject.toml

# The Python environment's paths, asked from the interpreter; --isolated leaves them out, and a
# missing or failing interpreter only leaves them out.
cat >"$tmp/fake-python" <<PY
#!/bin/sh
printf '%s\n' "" "$tmp/no-such-dir" "$tmp/site"
PY
chmod +x "$tmp/fake-python"
DEVLINT_PYTHON="$tmp/fake-python" run 1 "the environment's site-packages by default" -- \
  "$devlint" check --no-cache --output-format json "$model"
cmp -s "$tmp/out" "$tmp/with_site.json" || { echo "FAIL: environment search differs"; fail=1; }
# Asked only when a module is not found on the other search paths: a package whose bases are
# all its own or PyTorch's never starts the interpreter.
cat >"$tmp/counting-python" <<PY
#!/bin/sh
echo asked >>"$tmp/asked"
printf '%s\n' "$tmp/site"
PY
chmod +x "$tmp/counting-python"
mkdir -p "$tmp/plain"
printf 'import torch\nfrom torch import nn\n\n\nclass Block(nn.Module):\n    def forward(self, x):\n        return x\n' \
  >"$tmp/plain/modeling_plain.py"
DEVLINT_PYTHON="$tmp/counting-python" run 0 "no absolute-import base: the environment is not asked" -- \
  "$devlint" check --no-cache --output-format concise "$tmp/plain"
[ ! -e "$tmp/asked" ] || { echo "FAIL: python3 was asked without need"; fail=1; }
DEVLINT_PYTHON="$tmp/counting-python" run 1 "found on --search-path: the environment is not asked" -- \
  "$devlint" check --no-cache --search-path "$tmp/site" --output-format concise "$tmp/plain" "$model"
[ ! -e "$tmp/asked" ] || { echo "FAIL: python3 was asked though --search-path had it"; fail=1; }
DEVLINT_PYTHON="$tmp/counting-python" run 1 "asked once when needed" -- \
  "$devlint" check --no-cache --output-format concise "$model"
[ "$(cat "$tmp/asked" 2>/dev/null)" = asked ] || { echo "FAIL: python3 not asked exactly once"; fail=1; }
DEVLINT_PYTHON="$tmp/fake-python" run 0 "--isolated ignores the environment" -- \
  "$devlint" check --no-cache --isolated --output-format concise "$model"
# devlint devmap reads the same places: the library's no-split classes shape the map.
run 0 "devmap --isolated: the library's base unknown" -- "$devlint" devmap --isolated "$model"
grep -q "no-split classes: (none)" "$tmp/out" || { echo "FAIL: devmap --isolated: $(cat "$tmp/out")"; fail=1; }
run 0 "devmap --search-path" -- "$devlint" devmap --isolated --search-path site "$model"
grep -q "no-split classes: TinyDecoderLayer" "$tmp/out" ||
  { echo "FAIL: devmap --search-path: $(cat "$tmp/out")"; fail=1; }
DEVLINT_PYTHON="$tmp/fake-python" run 0 "devmap asks the environment" -- "$devlint" devmap "$model"
grep -q "no-split classes: TinyDecoderLayer" "$tmp/out" ||
  { echo "FAIL: devmap with the environment: $(cat "$tmp/out")"; fail=1; }
DEVLINT_PYTHON="$tmp/no-such-python" run 0 "no interpreter: the run goes on" -- \
  "$devlint" check --no-cache --output-format concise "$model"
printf '#!/bin/sh\nsleep 30\n' >"$tmp/slow-python"
chmod +x "$tmp/slow-python"
start=$(date +%s)
DEVLINT_PYTHON="$tmp/slow-python" run 0 "a hanging interpreter is given up" -- \
  "$devlint" check --no-cache --output-format concise "$model"
[ $(($(date +%s) - start)) -lt 25 ] || { echo "FAIL: waited for a hanging interpreter"; fail=1; }

# A package directory wins over a module file of the same name, as Python imports it.
cp -r site "$tmp/shadowed"
printf 'class TinyPreTrainedModel:\n    pass\n' >"$tmp/shadowed/fakelib.py"
run 1 "a package wins over a module of the same name" -- \
  "$devlint" check --no-cache --isolated --search-path "$tmp/shadowed" --output-format json "$model"
python3 - "$tmp/out" "$tmp/with_site.json" <<'PY' || fail=1
import json, sys
a, b = (sorted((f["code"], f["location"]["row"]) for f in json.load(open(p))) for p in sys.argv[1:])
if a != b:
    sys.exit(f"FAIL: the module file shadowed the package: {a} != {b}")
PY

# A bad search path (missing, a file) finds nothing and is no error; a cycle of re-exports ends.
printf 'x' >"$tmp/a-file"
run 0 "missing and non-directory search paths" -- \
  "$devlint" check --no-cache --isolated --search-path "$tmp/nowhere" --search-path "$tmp/a-file" \
  --output-format concise "$model"
mkdir -p "$tmp/cycle/fakelib"
printf 'from fakelib.other import TinyPreTrainedModel\n' >"$tmp/cycle/fakelib/__init__.py"
printf 'from fakelib import TinyPreTrainedModel\n' >"$tmp/cycle/fakelib/other.py"
run 0 "a cycle of re-exports" -- \
  "$devlint" check --no-cache --isolated --search-path "$tmp/cycle" --output-format concise "$model"

# The result cache: a warm run answers from the cache (a marked entry shows through), and a change
# to a file read on the search path re-analyzes.
run 1 "cold run with the cache" -- \
  "$devlint" check --isolated --search-path site --output-format json "$model"
cmp -s "$tmp/out" "$tmp/with_site.json" || { echo "FAIL: cached run differs"; fail=1; }
for entry in $(find "$XDG_CACHE_HOME/devlint" -name '*.json'); do
  sed -i 's/may split it/MARKED-CACHE-ENTRY may split it/' "$entry"
done
run 1 "warm run" -- "$devlint" check --isolated --search-path site --output-format json "$model"
grep -q MARKED-CACHE-ENTRY "$tmp/out" || { echo "FAIL: the warm run did not use the cache"; fail=1; }
sed -i 's/_no_split_modules = \["TinyDecoderLayer"\]/_no_split_modules = ["TinyDecoderLayer", "TinyVisionProjector"]/' \
  site/fakelib/models/tiny/modeling_tiny.py
run 1 "a changed file on the search path re-analyzes" -- \
  "$devlint" check --isolated --search-path site --output-format concise "$model"
grep -q MARKED-CACHE-ENTRY "$tmp/out" && { echo "FAIL: stale cache entry used"; fail=1; }
grep -q 'DL002' "$tmp/out" && { echo "FAIL: the projector is no-split now: $(cat "$tmp/out")"; fail=1; }
# Another search path is another key, even with the same files found.
cp -r site site2
sed -i 's/, "TinyVisionProjector"//' site2/fakelib/models/tiny/modeling_tiny.py
run 1 "another search path re-analyzes" -- \
  "$devlint" check --isolated --search-path site2 --output-format concise "$model"
grep -q 'DL002' "$tmp/out" || { echo "FAIL: site2 not read"; fail=1; }
# A module that appears on an earlier search path shadows the one read: a warm run notices.
mkdir -p first
run 1 "cold run, an empty first search path" -- \
  "$devlint" check --isolated --search-path first --search-path site2 --output-format json "$model"
for entry in $(find "$XDG_CACHE_HOME/devlint" -name '*.json'); do
  sed -i 's/may split it/MARKED-CACHE-ENTRY may split it/' "$entry"
done
run 1 "warm run, nothing new" -- \
  "$devlint" check --isolated --search-path first --search-path site2 --output-format json "$model"
grep -q MARKED-CACHE-ENTRY "$tmp/out" || { echo "FAIL: the warm run did not use the cache"; fail=1; }
mkdir -p first/fakelib
printf 'class TinyPreTrainedModel:\n    pass\n' >first/fakelib/__init__.py
# The shadowing base declares no list: transformers 5 (none installed) loads the model with an
# empty one, so a balanced map may cut anywhere, and the findings say so.
run 1 "a new shadowing module re-analyzes" -- \
  "$devlint" check --isolated --search-path first --search-path site2 --output-format json "$model"
grep -q MARKED-CACHE-ENTRY "$tmp/out" && { echo "FAIL: stale entry despite a shadowing module"; fail=1; }
grep -q 'empty _no_split_modules' "$tmp/out" || { echo "FAIL: the shadowing base's empty list not used"; fail=1; }

exit $fail
