#!/usr/bin/env bash
# What a team adopting devlint runs into on the command line: selectors, --version, rule listing,
# --diff headers, the result cache, and the options for large codebases.
set -u
devlint="$(realpath "$1")" source_dir="$(realpath "$2")"
source "$(dirname "$0")/cli_lib.sh"

proj="$tmp/proj"
mkdir -p "$proj/models"
cp "$source_dir/tests/data/modeling_tiny.py" "$proj/models/"
cd "$proj"

# Selectors on the command line are checked like those in a configuration file.
run 2 "--select with an unknown code is an error" -- "$devlint" check --select DL99 models
has err "unknown rule selector \`DL99\`"
run 2 "--ignore with an unknown name is an error" -- "$devlint" check --ignore no-such-rule models
run 2 "--extend-select with an unknown code is an error" -- "$devlint" check --extend-select X1 models
run 0 "--ignore takes a rule name" -- "$devlint" check --ignore cross-device-concat models
run 1 "--select takes a rule name" -- "$devlint" check --select cross-device-concat models
has out "DL001"
run 0 "--select by name selects only that rule" -- "$devlint" check --select hardcoded-device models
run 1 "--select takes a prefix" -- "$devlint" check --select DL0,DL9 models

# Versions: -V and --version, the same as SARIF's tool.driver.version.
run 0 "-V" -- "$devlint" -V
version=$(sed -n 's/^devlint \([0-9][0-9.]*\)$/\1/p' "$tmp/out")
[ -n "$version" ] || { echo "FAIL: -V printed '$(cat "$tmp/out")'"; fail=1; }
run 0 "--version" -- "$devlint" --version
has out "devlint $version"
run 1 "sarif" -- "$devlint" check --output-format sarif models
python3 - "$tmp/out" "$version" <<'PY' || fail=1
import json, sys
driver = json.load(open(sys.argv[1]))["runs"][0]["tool"]["driver"]
if driver["version"] != sys.argv[2]:
    sys.exit(f"FAIL: SARIF version {driver['version']} != {sys.argv[2]}")
if "informationUri" in driver or any("helpUri" in r for r in driver["rules"]):
    sys.exit("FAIL: SARIF links to a placeholder without docs-url")
PY

# `devlint rule --all` lists the rules in code order.
run 0 "rule --all" -- "$devlint" rule --all
cut -d' ' -f1 "$tmp/out" > "$tmp/codes"
sort -c "$tmp/codes" || { echo "FAIL: rule --all is not in code order"; cat "$tmp/out"; fail=1; }
[ "$(wc -l < "$tmp/codes")" -ge 9 ] || { echo "FAIL: rule --all lists too few rules"; fail=1; }
run 0 "rule by name" -- "$devlint" rule loss-label-device
has out "# loss-label-device (DL003)"

# --diff with an absolute path: `--- /abs/path`, never `--- a//abs/path`; patch -p0 applies it.
mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
run 1 "--diff with an absolute path" -- "$devlint" check --diff "$proj/models/modeling_tiny.py"
cd "$proj"
has out "--- $proj/models/modeling_tiny.py"
lacks out "a//"
cp "$tmp/out" "$tmp/abs.diff"
cp models/modeling_tiny.py "$tmp/tiny_backup.py"
(cd / && patch -s -p0 < "$tmp/abs.diff") || { echo "FAIL: patch -p0 rejects the diff"; fail=1; }
has_fix=$(grep -c "kv_cache.to(presents.device)" models/modeling_tiny.py)
[ "$has_fix" = 1 ] || { echo "FAIL: the absolute diff did not apply"; fail=1; }
cp "$tmp/tiny_backup.py" models/modeling_tiny.py

# docs-url: links only when a team says where its docs are.
printf '[tool.devlint]\ndocs-url = "https://docs.example/devlint/{code}.html"\n' > pyproject.toml
run 1 "docs-url in json" -- "$devlint" check --output-format json models
has out '"url": "https://docs.example/devlint/DL001.html"'
rm pyproject.toml
run 1 "no docs-url: url is null" -- "$devlint" check --output-format json models
has out '"url": null'

# The result cache: the user's ($XDG_CACHE_HOME/devlint), same results warm and cold, re-analysis
# when any file of a package, the settings or the configuration change.
cache="$XDG_CACHE_HOME/devlint"
rm -rf "$cache"
pkg="$tmp/pkg"
mkdir -p "$pkg"
python3 - "$source_dir/tests/data/modeling_tiny.py" "$pkg" <<'PY'
import sys
src = open(sys.argv[1]).read()
i = src.index("class TinyModel")
open(sys.argv[2] + "/modeling_tiny.py", "w").write(src[:i])
open(sys.argv[2] + "/modeling_tiny_top.py", "w").write(
    "import torch\nfrom transformers import PreTrainedModel\n\nfrom .modeling_tiny import TinyStack\n\n\n" + src[i:])
PY
cd "$pkg"
run 1 "uncached reference" -- "$devlint" check --no-cache --output-format json .
cp "$tmp/out" "$tmp/reference.json"
[ ! -e "$cache" ] || { echo "FAIL: --no-cache wrote a cache"; fail=1; }
run 1 "cold run" -- "$devlint" check --output-format json .
cmp -s "$tmp/out" "$tmp/reference.json" || { echo "FAIL: cold run differs"; fail=1; }
entries=$(find "$cache" -name '*.json' | wc -l)
[ "$entries" -ge 1 ] || { echo "FAIL: no cache entries written"; fail=1; }
[ -f "$cache/CACHEDIR.TAG" ] || { echo "FAIL: the cache directory is not tagged"; fail=1; }
[ ! -e .devlint_cache ] || { echo "FAIL: a cache was written into the checked directory"; fail=1; }
for d in "$cache" "$cache"/results "$cache"/results/*; do
  [ "$(stat -c %a "$d")" = 700 ] || { echo "FAIL: $d is not private: $(stat -c %a "$d")"; fail=1; }
done
[ "$(cat "$cache"/results/pkg-*/PROJECT)" = "$pkg" ] || { echo "FAIL: the project folder"; fail=1; }
run 1 "warm run" -- "$devlint" check --output-format json .
cmp -s "$tmp/out" "$tmp/reference.json" || { echo "FAIL: warm run differs from an uncached one"; fail=1; }
# Another file of the package decides the finding: changing it re-analyzes the package.
sed -i 's/_no_split_modules = \["TinyBlock"\]/_no_split_modules = ["TinyStack"]/' modeling_tiny_top.py
run 0 "a changed sibling file re-analyzes the package" -- "$devlint" check .
sed -i 's/_no_split_modules = \["TinyStack"\]/_no_split_modules = ["TinyBlock"]/' modeling_tiny_top.py
run 1 "and back" -- "$devlint" check --output-format json .
cmp -s "$tmp/out" "$tmp/reference.json" || { echo "FAIL: result after reverting differs"; fail=1; }
run 0 "settings are part of the key" -- "$devlint" check --ignore DL001 .
printf '[tool.devlint]\nno-split-modules = ["TinyStack"]\n' > pyproject.toml
run 0 "the configuration is part of the key" -- "$devlint" check .
rm pyproject.toml
printf 'def helper():\n    return 1\n' > helpers.py
run 1 "a new file beside the package" -- "$devlint" check --output-format json .
cmp -s "$tmp/out" "$tmp/reference.json" || { echo "FAIL: result with a new helper differs"; fail=1; }
# Checking one file, the sibling it imports is read as context: it is part of the key too. A warm
# run finds its entry without lowering (the manifest lists the sibling), and a changed sibling is a
# miss that stores a new entry.
rm -rf "$cache"
run 0 "one file, cold" -- "$devlint" check --output-format json modeling_tiny_top.py
cold_entries=$(find "$cache" -name '*.json' | wc -l)
run 0 "one file, warm" -- "$devlint" check --output-format json modeling_tiny_top.py
[ "$(find "$cache" -name '*.json' | wc -l)" = "$cold_entries" ] ||
  { echo "FAIL: a warm run of an unchanged package stored a new entry"; fail=1; }
printf '\n# changed\n' >> modeling_tiny.py
run 0 "one file, its imported sibling changed" -- "$devlint" check --output-format json modeling_tiny_top.py
[ "$(find "$cache" -name '*.json' | wc -l)" -gt "$cold_entries" ] ||
  { echo "FAIL: a changed imported sibling was not re-analyzed"; fail=1; }
# Corrupt and truncated entries fall back to analysis.
for entry in $(find "$cache" -name '*.json'); do
  head -c 40 "$entry" > "$entry.cut" && mv "$entry.cut" "$entry"
done
run 1 "truncated cache entries" -- "$devlint" check --output-format json .
cmp -s "$tmp/out" "$tmp/reference.json" || { echo "FAIL: truncated cache changed the result"; fail=1; }
for entry in $(find "$cache" -name '*.json'); do
  python3 - "$entry" <<'PY'
import json, sys
entry = json.load(open(sys.argv[1]))
entry["findings"] = [{"file": 7, "code": "DL001"}]  # well-formed JSON, wrong content
json.dump(entry, open(sys.argv[1], "w"))
PY
done
run 1 "corrupt cache entries" -- "$devlint" check --output-format json .
cmp -s "$tmp/out" "$tmp/reference.json" || { echo "FAIL: corrupt cache changed the result"; fail=1; }
for entry in $(find "$cache" -name '*.json'); do printf '\x00\xff garbage' > "$entry"; done
run 1 "binary garbage in the cache" -- "$devlint" check --output-format json .
cmp -s "$tmp/out" "$tmp/reference.json" || { echo "FAIL: garbage cache changed the result"; fail=1; }
# Concurrent runs on one cold cache: every run reports the same, no temporary files are left.
rm -rf "$cache"
for i in 1 2 3 4 5 6; do
  "$devlint" check --output-format json . > "$tmp/concurrent$i.json" 2>&1 &
done
wait
for i in 1 2 3 4 5 6; do
  cmp -s "$tmp/concurrent$i.json" "$tmp/reference.json" || { echo "FAIL: concurrent run $i differs"; fail=1; }
done
[ -z "$(find "$cache" -name '*.tmp.*')" ] || { echo "FAIL: temporary cache files left"; fail=1; }
# Where the cache lives, and `devlint clean`.
run 1 "--cache-dir" -- "$devlint" check --cache-dir "$tmp/c1" .
[ -f "$tmp/c1/CACHEDIR.TAG" ] || { echo "FAIL: --cache-dir not used"; fail=1; }
DEVLINT_CACHE_DIR="$tmp/c2" run 1 "DEVLINT_CACHE_DIR" -- "$devlint" check .
[ -f "$tmp/c2/CACHEDIR.TAG" ] || { echo "FAIL: DEVLINT_CACHE_DIR not used"; fail=1; }
XDG_CACHE_HOME=relative/cache run 1 "a relative XDG_CACHE_HOME is ignored" -- "$devlint" check .
[ ! -e relative ] || { echo "FAIL: a relative XDG_CACHE_HOME put the cache here"; fail=1; }
# `devlint clean` removes this project's entries, and only those, and says what it removed.
(cd "$proj" && "$devlint" check models >/dev/null)
other_entries=$(find "$cache"/results/proj-* -name '*.json' | wc -l)
[ "$other_entries" -ge 1 ] || { echo "FAIL: no entries for the other project"; fail=1; }
mine=$(find "$cache"/results/pkg-* -name '*.json' | wc -l)
run 0 "clean" -- "$devlint" clean
has err "Removed $mine entries for $pkg: $cache/results/pkg-"
[ -z "$(ls -d "$cache"/results/pkg-* 2>/dev/null)" ] || { echo "FAIL: clean left this project's entries"; fail=1; }
[ "$(find "$cache"/results/proj-* -name '*.json' | wc -l)" = "$other_entries" ] ||
  { echo "FAIL: clean removed another project's entries"; fail=1; }
[ -f "$cache/CACHEDIR.TAG" ] || { echo "FAIL: clean removed the whole cache"; fail=1; }
run 0 "clean again: nothing left" -- "$devlint" clean
has err "No cache entries for $pkg in $cache."
run 0 "clean --cache-dir" -- "$devlint" clean --cache-dir "$tmp/c1"
has err "Removed 2 entries for $pkg: $tmp/c1/results/pkg-"
[ -z "$(find "$tmp/c1" -name '*.json')" ] || { echo "FAIL: clean --cache-dir left entries"; fail=1; }
mkdir "$tmp/not-a-cache"
run 2 "clean refuses a directory that is not a cache" -- "$devlint" clean --cache-dir "$tmp/not-a-cache"
[ -d "$tmp/not-a-cache" ] || { echo "FAIL: clean removed a foreign directory"; fail=1; }
rm -f helpers.py
cd "$proj"

# --statistics: a count per rule and the fixable ones.
run 1 "--statistics" -- "$devlint" check --statistics models
has out $'1\tDL001\t[*] cross-device-concat'
has out "[*] 1 fixable with the \`--fix\` option."
lacks out "torch.cat"
run 1 "--statistics as json" -- "$devlint" check --statistics --output-format json models
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s==[{"code":"DL001","name":"cross-device-concat","count":1,"fixable":True,"fixable_count":1}], s' "$tmp/out" ||
  { echo "FAIL: --statistics json"; fail=1; }

# --show-files and --show-settings.
printf 'def helper():\n    return 1\n' > models/utils.py
run 0 "--show-files" -- "$devlint" check --show-files .
[ "$(cat "$tmp/out")" = "models/modeling_tiny.py" ] || { echo "FAIL: --show-files: $(cat "$tmp/out")"; fail=1; }
printf '[tool.devlint]\nignore = ["DL007"]\n' > pyproject.toml
run 0 "--show-settings" -- "$devlint" check --show-settings --extend-exclude legacy models
has out "configuration file: pyproject.toml"
has out 'ignore = ["DL007"]'
has out '"venv","legacy"]' # the built-in excludes, then --extend-exclude's
rm pyproject.toml

# -q prints findings without the summary; -s prints nothing; both keep the exit code.
run 1 "-q" -- "$devlint" check -q models
has out "DL001"
lacks out "Found 1 error"
run 0 "-q on a clean run says nothing" -- "$devlint" check -q --ignore DL001 models
[ ! -s "$tmp/out" ] || { echo "FAIL: -q printed on a clean run"; fail=1; }
run 1 "-s" -- "$devlint" check -s models
[ ! -s "$tmp/out" ] && [ ! -s "$tmp/err" ] || { echo "FAIL: -s printed something"; fail=1; }

# --exclude / --extend-exclude / --per-file-ignores on the command line.
run 0 "--extend-exclude by name" -- "$devlint" check --extend-exclude 'modeling_tiny.py' .
run 0 "--exclude with a path glob" -- "$devlint" check --exclude 'models/*.py' .
run 1 "--exclude replaces the configuration's" -- "$devlint" check --exclude 'other' .
run 0 "--per-file-ignores" -- "$devlint" check --per-file-ignores 'models/*.py:DL001' .
run 0 "--per-file-ignores takes rule names" -- "$devlint" check --per-file-ignores 'modeling_*.py:cross-device-concat,DL002' .
run 1 "--per-file-ignores for other files" -- "$devlint" check --per-file-ignores 'tests/*.py:DL001' .
run 2 "--per-file-ignores without codes" -- "$devlint" check --per-file-ignores 'models/*.py' .
run 2 "--per-file-ignores with an unknown code" -- "$devlint" check --per-file-ignores 'models/*.py:DL77' .

# `-` reads stdin; --stdin-filename names it (for settings and reports).
run 1 "stdin with --stdin-filename" -- sh -c "\"$devlint\" check --output-format concise --stdin-filename models/modeling_stdin.py - < models/modeling_tiny.py"
has out "models/modeling_stdin.py:31:28: DL001"
[ ! -e models/modeling_stdin.py ] || { echo "FAIL: stdin was written to disk"; fail=1; }
run 0 "stdin follows per-file-ignores by its name" -- sh -c "\"$devlint\" check --per-file-ignores 'models/*:DL001' --stdin-filename models/x.py - < models/modeling_tiny.py"
run 1 "stdin without a name" -- sh -c "\"$devlint\" check - < models/modeling_tiny.py"

# --add-noqa: every finding suppressed, idempotent, other comments kept.
cp models/modeling_tiny.py "$tmp/before_noqa.py"
sed -i 's/presents = torch.cat((presents, kv_cache), dim=0)/presents = torch.cat((presents, kv_cache), dim=0)  # noqa: E501/' models/modeling_tiny.py
run 0 "--add-noqa" -- "$devlint" check --add-noqa models
has err "Added 1 noqa directive."
grep -qF 'dim=0)  # noqa: E501, DL001' models/modeling_tiny.py || { echo "FAIL: --add-noqa did not extend the noqa"; grep -n noqa models/modeling_tiny.py; fail=1; }
run 0 "after --add-noqa the check is clean" -- "$devlint" check models
cp models/modeling_tiny.py "$tmp/after_noqa.py"
run 0 "--add-noqa again" -- "$devlint" check --add-noqa models
has err "Added 0 noqa directives."
cmp -s models/modeling_tiny.py "$tmp/after_noqa.py" || { echo "FAIL: --add-noqa is not idempotent"; fail=1; }
cp "$tmp/before_noqa.py" models/modeling_tiny.py
run 0 "--add-noqa on a line without a comment" -- "$devlint" check --add-noqa models
grep -qF 'dim=0)  # noqa: DL001' models/modeling_tiny.py || { echo "FAIL: --add-noqa"; fail=1; }
python3 -c 'import ast,sys; ast.parse(open(sys.argv[1]).read())' models/modeling_tiny.py || { echo "FAIL: --add-noqa broke the syntax"; fail=1; }
cp "$tmp/before_noqa.py" models/modeling_tiny.py

# A progress bar on a terminal for long runs, never on a pipe or in machine formats.
mkdir -p "$tmp/many_pkgs"
for i in $(seq 1 220); do mkdir -p "$tmp/many_pkgs/p$i"; cp models/modeling_tiny.py "$tmp/many_pkgs/p$i/modeling_p.py"; done
run 1 "no progress bar on a pipe" -- "$devlint" check --no-cache --output-format concise "$tmp/many_pkgs"
lacks err "files,"
if command -v script >/dev/null; then
  # Small runs past 2 s show the bar too: the delay is out of reach here, so that a loaded machine
  # changes nothing.
  export DEVLINT_PROGRESS_AFTER_MS=600000
  script -qec "\"$devlint\" check --no-cache --output-format concise \"$tmp/many_pkgs\"" /dev/null > "$tmp/tty" 2>&1
  has tty "220/220 files"
  script -qec "\"$devlint\" check --no-cache --output-format json \"$tmp/many_pkgs\"" /dev/null > "$tmp/tty" 2>&1
  lacks tty "files,"
  script -qec "\"$devlint\" check --no-cache models" /dev/null > "$tmp/tty" 2>&1
  lacks tty "files,"
  # Any run past the delay (2 s; 0 here, so that the test does not depend on time) shows it.
  DEVLINT_PROGRESS_AFTER_MS=0 script -qec "\"$devlint\" check --no-cache models" /dev/null > "$tmp/tty" 2>&1
  has tty "2/2 files"
  unset DEVLINT_PROGRESS_AFTER_MS
fi

exit $fail
