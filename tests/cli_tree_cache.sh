#!/usr/bin/env bash
# The result cache inside transformers' own source tree: a composite model is ranked with the
# packages its configuration names and the tree's helpers read (driver/placement_rank.cpp), so a
# change to one of those files re-analyzes the model; a change elsewhere in the tree does not.
# The same for a diffusers-style tree: a model ranked with the files its __init__s import
# relatively from above its directory (driver/model_setup_imports.h), transitively.
set -u
devlint="$1"
source "$(dirname "$0")/cli_lib.sh"
cp -r "$2/fixtures/devmap/transformers_tree_composite/models" "$tmp/models"
cd "$tmp" || exit 1
export DEVLINT_PYTHON=/bin/false
run 1 "cold run" -- "$devlint" check --isolated --output-format json models/wrapper
has out "fails with 2 GPUs"
mark() {
  for entry in $(find "$XDG_CACHE_HOME/devlint" -name '*.json'); do
    sed -i 's/fails with/MARKED-CACHE-ENTRY fails with/' "$entry"
  done
}
mark
run 1 "warm run, nothing changed" -- "$devlint" check --isolated --output-format json models/wrapper
has out MARKED-CACHE-ENTRY
# A package the wrapper's configuration does not name: the entry stays valid.
mkdir -p models/unrelated
printf 'X = 1\n' >models/unrelated/modeling_unrelated.py
run 1 "an unrelated package added" -- "$devlint" check --isolated --output-format json models/wrapper
has out MARKED-CACHE-ENTRY
# The language model's package, which the wrapper builds with AutoModel.from_config.
printf '\n# edited\n' >>models/textlm/modeling_textlm.py
run 1 "a sibling the model builds changed: re-analyzed" -- "$devlint" check --isolated \
  --output-format json models/wrapper
lacks out MARKED-CACHE-ENTRY
has out "fails with 2 GPUs"

# A diffusers-style tree: the model builds classes of ../normalization.py, ../attention.py and,
# through attention.py, ../activations.py.
cp -r "$2/fixtures/devmap/diffusers_tree_imports/pkg" "$tmp/pkg"
run 1 "diffusers tree: cold run" -- "$devlint" check --isolated --output-format json pkg/models/transformers
has out "fails with 2 GPUs"
mark
run 1 "diffusers tree: warm run" -- "$devlint" check --isolated --output-format json pkg/models/transformers
has out MARKED-CACHE-ENTRY
printf 'X = 1\n' >pkg/models/unrelated.py
run 1 "diffusers tree: a file the model does not import added" -- "$devlint" check --isolated \
  --output-format json pkg/models/transformers
has out MARKED-CACHE-ENTRY
printf '\n# edited\n' >>pkg/models/activations.py
run 1 "diffusers tree: a file imported through another changed: re-analyzed" -- "$devlint" check \
  --isolated --output-format json pkg/models/transformers
lacks out MARKED-CACHE-ENTRY
has out "fails with 2 GPUs"
exit $fail
