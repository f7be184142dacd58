#!/usr/bin/env bash
# `devlint devmap` end to end: the simulated map in each format, hand-written maps (seed 001's
# stale ChatGLM map and its corrected form) and bad input.
set -u
devlint="$1"
root="$2"
source "$(dirname "$0")/cli_lib.sh"
expect() { # expect FILE PATTERN
  if ! grep -q -- "$2" "$tmp/$1"; then echo "FAIL: $1 lacks '$2'"; cat "$tmp/$1"; fail=1; fi
}
glm="$root/fixtures/devmap/chatglm3_stale_map"
tiny="$root/tests/data/devmap_tiny"

run 0 "simulated map, table" -- "$devlint" devmap "$glm" --gpus 2
expect out "transformer.encoder.layers.13 .*cuda:1"
expect out "accelerate 1.14.0"
run 0 "simulated map, json" -- "$devlint" devmap "$tiny" --output-format json
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["lm_head"] == 1 and m["model.embed"] == 0, m' "$tmp/out" ||
  { echo "FAIL: json map"; fail=1; }
run 0 "simulated map, dot" -- "$devlint" devmap "$tiny" --output-format dot
expect out "digraph device_map"
expect out 'cluster_1'
run 0 "offload is said" -- "$devlint" devmap "$tiny" --max-memory 0=300,1=300
expect err "offloaded to disk"
run 1 "stale hand-written map (seed 001)" -- "$devlint" devmap "$glm" --device-map "$glm/load_on_gpus.py"
expect out "did you mean \`transformer.encoder.layers.0\`"
run 1 "stale map, json" -- "$devlint" devmap "$glm" --device-map "$glm/load_on_gpus.py" --output-format json
expect out '"transformer.rotary_pos_emb.inv_freq"'
run 0 "corrected map" -- "$devlint" devmap "$glm" --device-map "$glm/device_map_chatglm3.py" --gpus 4
run 1 "JSON map that cuts a no-split block" -- "$devlint" devmap "$tiny" --device-map \
  '{"model.embed": 0, "model.layers.0.fc": 0, "model.layers.0.act": 1, "model.layers.1": 1, "model.layers.2": 1, "model.layers.3": 1, "model.norm": 1, "lm_head": 1}'
expect out "no-split module cut"
run 2 "bad --max-memory" -- "$devlint" devmap "$tiny" --max-memory 0=lots
expect err "a size is bytes"
run 2 "not a directory" -- "$devlint" devmap "$tmp/none"
expect err "is not a directory"
run 2 "map that is not JSON" -- "$devlint" devmap "$tiny" --device-map '{"a": '
expect err "not a JSON dict"
run 2 "unknown function" -- "$devlint" devmap "$glm" --device-map "$glm/load_on_gpus.py:nope"
expect err "no function \`nope\`"

# devlint check narrowed and ranked by the placement.
run 1 "check ranks by balanced maps" -- "$devlint" check --no-cache --isolated "$glm"
expect out "placement: fails with 2 GPUs: \`shift_labels.view(-1)\` on cuda:0"
run 1 "check --gpus 2, json level" -- "$devlint" check --no-cache --isolated --gpus 2 --output-format json "$glm"
expect out '"level": "error"'
run 1 "check under the corrected hand-written map" -- "$devlint" check --no-cache --isolated \
  --device-map "$glm/device_map_chatglm3.py" --gpus 3 --output-format concise "$glm"
expect out "Found 1 error"
if grep -q DL003 "$tmp/out"; then echo "FAIL: the loss shares cuda:0 with the head under that map"; fail=1; fi
run 1 "check --min-level error keeps errors" -- "$devlint" check --no-cache --isolated --min-level error "$glm"
run 2 "check with a bad --max-memory" -- "$devlint" check --no-cache --isolated --max-memory 0=x "$glm"
exit $fail
