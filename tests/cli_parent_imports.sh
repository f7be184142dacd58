#!/usr/bin/env bash
# Relative imports from a parent package (issue 24): `from ..layers.position import f` is read
# when the parent directory is a package inside the directory the user asked to check, so a CPU
# table a helper there builds is found where it meets the model's activations. Imports that leave
# the checked directory, or climb above a top-level package, are not followed: a checked
# repository never makes devlint read files beyond what it was asked to check.
set -u
devlint="$1"
data="$2/tests/data/parent_package"
source "$(dirname "$0")/cli_lib.sh"

cp -r "$data/tinyseg" "$data/escape" "$tmp/"
cd "$tmp" || exit 1
export DEVLINT_PYTHON=/bin/false

run 1 "the package's root checked: the parent-package helper is followed" -- \
  "$devlint" check --no-cache --isolated --output-format concise tinyseg
has out "tinyseg/models/modeling_tinyseg.py:20:25: DL005"
has out "Found 1 error."

run 1 "the helper's origin names the file it was read from" -- \
  "$devlint" check --no-cache --isolated tinyseg
has out "tinyseg/layers/position.py:8:17"

run 0 "only the models folder checked: its parent is not read" -- \
  "$devlint" check --no-cache --isolated --output-format concise tinyseg/models
has out "All checks passed!"

# escape/inner: `..outside` is escape/outside.py, outside the checked escape/inner; `........etc`
# climbs past every package. Neither is read, so no zeros tensor from outside.py is reported.
run 0 "imports leaving the checked directory are not followed" -- \
  "$devlint" check --no-cache --isolated --output-format concise escape/inner
lacks out "outside.py"
# Checked from escape/, ..outside is inside the checked directory and escape/ is a package.
run 1 "the same import inside the checked directory is followed" -- \
  "$devlint" check --no-cache --isolated escape
has out "escape/outside.py"
# Without escape/__init__.py, Python would refuse `..outside`: not followed.
rm escape/__init__.py
run 0 "a parent that is no package is not followed" -- \
  "$devlint" check --no-cache --isolated --output-format concise escape
lacks out "outside.py"
exit "$fail"
