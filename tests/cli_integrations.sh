#!/usr/bin/env bash
# The integration surface of `devlint check` end to end: exit codes, --exit-zero, --output-file,
# output formats, configuration discovery (--config, --isolated, errors), suppressions, colors.
set -u
devlint="$(realpath "$1")" source_dir="$(realpath "$2")"
source "$(dirname "$0")/cli_lib.sh"

proj="$tmp/proj"
mkdir -p "$proj/models" "$proj/scripts"
cp "$source_dir/tests/data/modeling_tiny.py" "$proj/models/"
printf 'def helper():\n    return 1\n' > "$proj/models/utils.py"
cd "$proj"

run 1 "a finding exits 1" -- "$devlint" check models
has out "models/modeling_tiny.py:31:28: DL001"
run 0 "--exit-zero exits 0 with findings" -- "$devlint" check --exit-zero models
has out "DL001"
run 0 "a clean file exits 0" -- "$devlint" check models/utils.py
has out "All checks passed!"
run 2 "a missing path exits 2" -- "$devlint" check nope.py

for format in full concise json json-lines sarif github gitlab junit; do
  run 1 "--output-format $format" -- "$devlint" check --output-format "$format" models
  cp "$tmp/out" "$tmp/$format.out"
  run 1 "--output-format $format is deterministic" -- "$devlint" check --output-format "$format" -j 3 models
  cmp -s "$tmp/out" "$tmp/$format.out" || { echo "FAIL: $format output differs between runs"; fail=1; }
done
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/json.out" || { echo "FAIL: json does not parse"; fail=1; }
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/sarif.out" || { echo "FAIL: sarif does not parse"; fail=1; }
python3 -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])' "$tmp/junit.out" || { echo "FAIL: junit is not XML"; fail=1; }
has github.out "::error file=models/modeling_tiny.py,line=31,col=28,endLine=31,endColumn=66,title=DL001 (cross-device-concat)::"

run 1 "--output-file writes the file, not stdout" -- "$devlint" check --output-format json --output-file "$tmp/report.json" models
[ -s "$tmp/report.json" ] && [ ! -s "$tmp/out" ] || { echo "FAIL: --output-file"; fail=1; }
run 2 "an unwritable --output-file exits 2" -- "$devlint" check --output-file "$tmp/no/such/dir/x" models

# Colors: never when piped, always with --color always, never with NO_COLOR in auto mode.
run 1 "no colors when piped" -- "$devlint" check models
lacks out $'\x1b['
run 1 "--color always" -- "$devlint" check --color always models
has out $'\x1b['
if command -v script >/dev/null; then
  NO_COLOR=1 script -qec "$devlint check models" /dev/null >"$tmp/tty" 2>&1
  ! grep -qF $'\x1b[' "$tmp/tty" || { echo "FAIL: NO_COLOR on a TTY"; fail=1; }
  script -qec "$devlint check models" /dev/null >"$tmp/tty" 2>&1
  grep -qF $'\x1b[' "$tmp/tty" || { echo "FAIL: no colors on a TTY"; fail=1; }
fi

# Configuration: found by walking up from each file; the command line overrides.
printf '[tool.devlint]\nignore = ["DL001"]\n' > pyproject.toml
run 0 "pyproject.toml [tool.devlint] ignore" -- "$devlint" check models
run 1 "--isolated ignores configuration files" -- "$devlint" check --isolated models
printf 'select = ["DL002"]\n' > "$tmp/other.toml"
run 0 "--config uses that file" -- "$devlint" check --config "$tmp/other.toml" models
run 2 "--config and --isolated together" -- "$devlint" check --config "$tmp/other.toml" --isolated models
printf '[tool.devlint]\nignore = []\n[tool.devlint.per-file-ignores]\n"models/modeling_*.py" = ["DL001"]\n' > pyproject.toml
run 0 "per-file-ignores" -- "$devlint" check models
printf '[tool.devlint]\nexclude = ["models/modeling_tiny.py"]\n' > pyproject.toml
run 0 "exclude skips files found in directories" -- "$devlint" check .
run 1 "explicit files are checked despite exclude" -- "$devlint" check models/modeling_tiny.py
run 0 "--force-exclude applies exclude to explicit files" -- "$devlint" check --force-exclude models/modeling_tiny.py
printf '[tool.devlint]\ninclude = ["utils.py"]\n' > pyproject.toml
run 0 "include limits what directories contribute" -- "$devlint" check models
rm pyproject.toml
printf 'ignore = ["DL001"]\n' > models/.devlint.toml
run 0 "the nearest config (models/.devlint.toml) governs its files" -- "$devlint" check .
rm models/.devlint.toml

printf '[tool.devlint]\nselect = ["DL001"]\n\n  selct = ["DL002"]\n' > pyproject.toml
run 2 "an unknown key exits 2" -- "$devlint" check models
has err "pyproject.toml:4: tool.devlint.selct: unknown key"
printf '[tool.devlint]\nignore = ["DL0O1"]\n' > pyproject.toml
run 2 "an unknown rule exits 2" -- "$devlint" check models
has err "pyproject.toml:2: tool.devlint.ignore: unknown rule selector \`DL0O1\`"
printf '[tool.devlint]\nignore = [\n' > pyproject.toml
run 2 "invalid TOML exits 2" -- "$devlint" check models
has err "pyproject.toml:"
has err "invalid TOML"
rm pyproject.toml

# Suppressions.
sed -i 's/presents = torch.cat((presents, kv_cache), dim=0)/& # noqa: DL001/' models/modeling_tiny.py
run 0 "# noqa: DL001 suppresses" -- "$devlint" check models
sed -i 's/# noqa: DL001/# noqa: DL002/' models/modeling_tiny.py
run 1 "# noqa: DL002 does not" -- "$devlint" check models
run 1 "unused suppressions are reported when asked" -- "$devlint" check --report-unused-suppressions --output-format concise models
has out "DL900"
cp "$source_dir/tests/data/modeling_tiny.py" models/
sed -i '1i # devlint: noqa: DL001' models/modeling_tiny.py
run 0 "file-level # devlint: noqa" -- "$devlint" check models

run 0 "devlint rule --all lists every rule" -- "$devlint" rule --all
for code in DL001 DL002 DL003 DL004 DL005 DL006 DL007 DL008 DL900; do has out "$code"; done
run 0 "devlint rule DL900" -- "$devlint" rule unused-suppression
has out "## What it does"
exit $fail
