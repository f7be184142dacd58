#!/usr/bin/env bash
# Issue 27, items 4 (discovery), 5 (command-line mistakes) and 6 (Ruff habits): what a new user
# coming from Ruff types, and what devlint must make of it.
set -u
devlint="$(realpath "$1")" source_dir="$(realpath "$2")"
source "$(dirname "$0")/cli_lib.sh"
tiny="$source_dir/tests/data/modeling_tiny.py"
proj="$tmp/proj"
mkdir -p "$proj/models"
cp "$tiny" "$proj/models/"
cd "$proj"

# Item 5: did-you-mean and valid values.
run 2 "a mistyped subcommand" -- "$devlint" chek models
has err "unknown command \`chek\`; did you mean \`check\`?"
lacks err "A subcommand is required"
run 2 "a mistyped option" -- "$devlint" check --output-fromat json models
has err "unknown option \`--output-fromat\`; did you mean \`--output-format\`?"
run 2 "a mistyped option with =" -- "$devlint" check --selct=DL001 models
has err "did you mean \`--select\`?"
run 2 "an unknown format lists the valid ones" -- "$devlint" check --output-format text models
has err "unknown output format \`text\`"
has err "full, concise, json, json-lines, sarif, github, gitlab, junit"
run 2 "a mistyped format" -- "$devlint" check --output-format jsonl models
has err "did you mean \`json\`?"
run 2 "a mistyped rule code" -- "$devlint" check --select DL0001 models
has err "did you mean \`DL001\`?"
run 2 "a mistyped rule name" -- "$devlint" rule cross-device-concatt
has err "did you mean \`cross-device-concat\`?"
printf '[tool.devlint]\nselcet = ["DL001"]\n' > pyproject.toml
run 2 "a mistyped configuration key" -- "$devlint" check models
has err "tool.devlint.selcet: unknown key; did you mean \`select\`?"
rm pyproject.toml

# Item 5: --fixable / --extend-fixable / --unfixable and the configuration's fixable.
run 1 "--fixable without DL001 withholds its fix" -- "$devlint" check --no-cache --fixable DL005 models
has out "no automatic fix: fixes for DL001 are not in \`fixable\`"
run 1 "--extend-fixable adds" -- "$devlint" check --no-cache --fixable DL005 --extend-fixable DL001 models
has out "help: Move"
run 1 "--unfixable" -- "$devlint" check --no-cache --unfixable DL001 models
has out "turned off by \`unfixable\`"
printf '[tool.devlint.lint]\nfixable = ["DL005"]\nextend-unfixable = ["DL002"]\n' > pyproject.toml
run 1 "fixable in the configuration" -- "$devlint" check --no-cache models
has out "are not in \`fixable\`"
rm pyproject.toml

# Item 5: --fix on stdin prints the fixed source, as `ruff check --fix -`.
run 0 "--fix - prints the fixed text" -- \
  "$devlint" check --no-cache --fix --stdin-filename models/modeling_tiny.py - < "$tiny"
has out "presents = torch.cat((presents, kv_cache.to(presents.device)), dim=0)"
has out "class TinyModel(PreTrainedModel):"
cmp -s "$tiny" models/modeling_tiny.py || { echo "FAIL: --fix - wrote a file"; fail=1; }
run 1 "--diff - prints the patch" -- \
  "$devlint" check --no-cache --diff --stdin-filename models/modeling_tiny.py - < "$tiny"
has out "+                presents = torch.cat((presents, kv_cache.to(presents.device)), dim=0)"
run 1 "--fix - with --unfixable: the text unchanged, the finding on stderr" -- \
  "$devlint" check --no-cache --fix --unfixable DL001 - < "$tiny"
cmp -s "$tiny" "$tmp/out" || { echo "FAIL: --fix - changed unfixable text"; fail=1; }
has err "DL001"

# Item 6: Ruff's [tool.X.lint] layout and extend-per-file-ignores.
printf '[tool.devlint.lint]\nignore = ["DL001"]\n' > pyproject.toml
run 0 "[tool.devlint.lint] is read" -- "$devlint" check --no-cache models
printf '[tool.devlint]\nselect = ["DL005"]\n[tool.devlint.lint]\nselect = ["DL001"]\n' > pyproject.toml
run 1 "[tool.devlint.lint] wins over the top level" -- "$devlint" check --no-cache models
printf '[tool.devlint.lint.extend-per-file-ignores]\n"models/*" = ["DL001"]\n' > pyproject.toml
run 0 "extend-per-file-ignores" -- "$devlint" check --no-cache models
printf 'ignore = ["DL001"]\n' > devlint.toml
printf '[lint]\nselect = ["DL001"]\n' > .devlint.toml
run 1 "[lint] in .devlint.toml" -- "$devlint" check --no-cache models
rm -f pyproject.toml devlint.toml .devlint.toml

# Item 6: `# flake8: noqa` exempts the file, as in Ruff; with codes, only those.
{ echo "# flake8: noqa"; cat "$tiny"; } > models/modeling_tiny.py
run 0 "# flake8: noqa" -- "$devlint" check --no-cache --report-unused-suppressions models
{ echo "# flake8: noqa: E501"; cat "$tiny"; } > models/modeling_tiny.py
run 1 "# flake8: noqa: E501 leaves DL001" -- "$devlint" check --no-cache models
{ echo "x = 1  # flake8: noqa"; cat "$tiny"; } > models/modeling_tiny.py
run 1 "# flake8: noqa after code is no file exemption" -- "$devlint" check --no-cache models
cp "$tiny" models/

# Item 6: --statistics claims nothing when nothing was checked.
mkdir empty
run 0 "--statistics on nothing" -- "$devlint" check --no-cache --statistics empty
lacks out "All checks passed!"
has out "No files were checked."
run 1 "--statistics counts invalid syntax" -- "$devlint" check --no-cache --statistics - <<< 'print "x"'
has out "invalid-syntax"

# Item 4: .gitignore is respected (default), built-in excludes are shown and can be replaced.
git init -q .
mkdir -p dist/pkg ignored keep
cp "$tiny" dist/pkg/ && cp "$tiny" ignored/ && cp "$tiny" keep/
printf 'ignored/\n*.tmp.py\n' > .gitignore
cp "$tiny" keep/modeling_x.tmp.py
run 0 "discovery" -- "$devlint" check --no-cache --show-files .
has out "models/modeling_tiny.py"
has out "keep/modeling_tiny.py"
lacks out "ignored/"
lacks out "modeling_x.tmp.py"
lacks out "dist/"
run 0 "--no-respect-gitignore" -- "$devlint" check --no-cache --show-files --no-respect-gitignore .
has out "ignored/modeling_tiny.py"
has out "keep/modeling_x.tmp.py"
printf '[tool.devlint]\nrespect-gitignore = false\n' > pyproject.toml
run 0 "respect-gitignore = false" -- "$devlint" check --no-cache --show-files .
has out "ignored/modeling_tiny.py"
rm pyproject.toml
# A nested .gitignore negates its parent's pattern; one above the checked directory applies.
printf '!modeling_x.tmp.py\n' > keep/.gitignore
run 0 "a nested negation" -- "$devlint" check --no-cache --show-files keep
has out "keep/modeling_x.tmp.py"
rm keep/.gitignore
run 0 "the repository's .gitignore applies below it" -- "$devlint" check --no-cache --show-files keep
lacks out "modeling_x.tmp.py"
run 0 "--show-settings shows the built-in excludes" -- "$devlint" check --show-settings .
has out '"dist"'
has out '"node_modules"'
has out "respect-gitignore = true"
run 0 "--exclude replaces them" -- "$devlint" check --no-cache --show-files --exclude keep .
has out "dist/pkg/modeling_tiny.py"
lacks out "keep/"
run 0 "extend-exclude keeps them" -- "$devlint" check --no-cache --show-files --extend-exclude keep .
lacks out "dist/"
# A .gitignore that is no regular file is not read, and says so.
rm .gitignore && mkfifo .gitignore
run 0 "a FIFO as .gitignore" -- timeout 20 "$devlint" check --no-cache --show-files .
has err ".gitignore: not read"
rm -f .gitignore
# Files kept by content: a monkeypatch file that imports only transformers binds a patched
# forward defined beside it; checking the folder reads both (issue 24, patched forwards).
cp -r "$source_dir/fixtures/recall/installed_forward_imported" patches
run 1 "a monkeypatch file without torch is checked" -- \
  "$devlint" check --no-cache --output-format concise patches
has out "patches/llama_sink_patch.py:15:18: DL005"
run 0 "it is listed among the files checked" -- "$devlint" check --no-cache --show-files patches
has out "patches/monkeypatch.py"
exit $fail
