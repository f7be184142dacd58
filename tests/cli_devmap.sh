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
# Without an installed transformers, the newest release devlint knows decides the placement code.
has out "transformers: 5.17.0 (not installed"
has out "placement: transformers' integrations/accelerate.py"
# An installed transformers 4 (its dist-info METADATA, read as text) places with accelerate 1.14.
mkdir -p "$tmp/site/transformers-4.47.1.dist-info"
printf 'Metadata-Version: 2.1\nName: transformers\nVersion: 4.47.1\n' \
  >"$tmp/site/transformers-4.47.1.dist-info/METADATA"
run 0 "the installed transformers version decides" -- \
  "$devlint" devmap "$glm" --gpus 2 --search-path "$tmp/site"
has out "transformers: 4.47.1 ($tmp/site/transformers-4.47.1.dist-info/METADATA)"
has out "placement: accelerate 1.14.0"
run 0 "simulated map, json" -- "$devlint" devmap "$tiny" --output-format json
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["lm_head"] == 1 and m["model.embed"] == 0, m' "$tmp/out" ||
  { echo "FAIL: json map"; fail=1; }
run 0 "simulated map, dot" -- "$devlint" devmap "$tiny" --output-format dot
expect out "digraph device_map"
expect out 'cluster_1'
# Which model class the map is for (issue 27, item 8): said, with the others --model-class picks.
run 0 "the picked class is said, with the others" -- "$devlint" devmap "$tiny"
expect out "model class: TinyForCausalLM (the config's architectures); other model classes: TinyModel (pick one with --model-class NAME)"
run 0 "--model-class picks another" -- "$devlint" devmap "$tiny" --model-class TinyModel
expect out "^model: TinyModel "
expect out "model class: TinyModel (--model-class); other model classes: TinyForCausalLM"
run 2 "--model-class of no class lists the model classes" -- "$devlint" devmap "$tiny" --model-class TinyLM
expect err "no class \`TinyLM\` in the package (model classes: TinyModel, TinyForCausalLM)"
run 0 "json: the choice is a note on stderr" -- "$devlint" devmap "$tiny" --output-format json
expect err "note: model class: TinyForCausalLM (the config's architectures); other model classes: TinyModel"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out" || { echo "FAIL: json polluted"; fail=1; }
# A readable picture by default: top to bottom, each device's modules in rows of four.
run 0 "dot: top to bottom, rows" -- "$devlint" devmap "$glm" --gpus 2 --output-format dot
expect out "rankdir=TB;"
expect out '{ rank=same; "transformer.embedding" "transformer.rotary_pos_emb" "transformer.encoder.layers.0" "transformer.encoder.layers.1" }'
expect out '"transformer.encoder.layers.1" -> "transformer.encoder.layers.2" \[constraint=false\];'
expect out '"transformer.embedding" -> "transformer.encoder.layers.2" \[style=invis, weight=10\];'
if command -v dot >/dev/null; then # Debian package graphviz
  dot -Tpng "$tmp/out" -o "$tmp/map.png" || { echo "FAIL: dot rejects the picture"; fail=1; }
  python3 - "$tmp/map.png" <<'PY' || fail=1
import struct, sys
width, height = struct.unpack(">II", open(sys.argv[1], "rb").read()[16:24])
if width > 2 * height:  # the strip was 12247 x 165 px
    print("FAIL: the picture is a strip: %d x %d px" % (width, height)); sys.exit(1)
print("ok: the picture is %d x %d px" % (width, height))
PY
fi
run 0 "offload is said" -- "$devlint" devmap "$tiny" --max-memory 0=300,1=300
expect err "offloaded to disk"
run 1 "stale hand-written map (seed 001)" -- "$devlint" devmap "$glm" --device-map "$glm/load_on_gpus.py"
expect out "did you mean \`transformer.encoder.layers.0\`"
expect out "code not checked under this map"
run 1 "stale map, json" -- "$devlint" devmap "$glm" --device-map "$glm/load_on_gpus.py" --output-format json
expect out '"transformer.rotary_pos_emb.inv_freq"'
expect out '"code_checked": false'
# A map that covers the model, then the code under it: the root hook moves the user's
# position_ids to the main device (cuda:0, the lowest GPU the map uses), where the map puts
# rotary_pos_emb, so the indexing at line 214 meets one device (issue 26: inputs reached through
# the first item of every module above them sit on the main device).
run 0 "corrected map, code under it" -- "$devlint" devmap "$glm" --device-map "$glm/device_map_chatglm3.py" --gpus 4
expect out "the map covers every parameter; no problems found"
expect out "code under this map: no site combines tensors on different devices"
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
# Under the corrected hand-written map nothing fails: the loss shares cuda:0 with the head, and
# position_ids meets rotary_pos_emb on the main device (above).
run 0 "check under the corrected hand-written map" -- "$devlint" check --no-cache --isolated \
  --device-map "$glm/device_map_chatglm3.py" --gpus 3 --output-format concise "$glm"
expect out "All checks passed!"
if grep -q DL003 "$tmp/out"; then echo "FAIL: the loss shares cuda:0 with the head under that map"; fail=1; fi
run 1 "check --min-level error keeps errors" -- "$devlint" check --no-cache --isolated --min-level error "$glm"
run 2 "check with a bad --max-memory" -- "$devlint" check --no-cache --isolated --max-memory 0=x "$glm"
# Models that refuse string maps (ChatGLM-6B's first release: no _no_split_modules, under the
# transformers 4 it pins, whose dist-info the fixture's site/ holds) are split by hand-written
# maps: --hand-made-maps (or hand-made-maps = true, as the fixture's devlint.toml says) checks
# them, sites only a split separates as warnings.
hand="$root/fixtures/devmap/chatglm6b_hand_map"
run 1 "refusing model, default: only what fails on one GPU" -- "$devlint" check --no-cache --isolated \
  --search-path "$hand/site" --output-format concise "$hand"
expect out "modeling_chatglm.py:141:30: DL005 "
if grep -q "DL00[236]" "$tmp/out"; then echo "FAIL: split-only sites reported without --hand-made-maps"; fail=1; fi
# transformers 5 refuses no string map: the same model loads with an empty list, split anywhere,
# and the balanced maps rank its sites.
run 1 "transformers 5: a model without a list is split by device_map=\"auto\"" -- "$devlint" check \
  --no-cache --isolated --output-format concise "$hand"
expect out "modeling_chatglm.py:51:18: DL006 \`.masked_fill\`"
expect out "4 at level error, 1 at level warning"
run 1 "--hand-made-maps" -- "$devlint" check --no-cache --isolated --search-path "$hand/site" \
  --hand-made-maps --output-format json "$hand"
python3 - "$tmp/out" <<'PY' || fail=1
import json, sys
got = {(f["location"]["row"], f["code"], f["level"]) for f in json.load(open(sys.argv[1]))}
want = {(51, "DL006", "warning"), (93, "DL002", "warning"), (97, "DL002", "warning"),
        (141, "DL005", "error"), (180, "DL003", "warning")}
if got != want:
    print("FAIL: --hand-made-maps findings", sorted(got)); sys.exit(1)
PY
expect out 'from_pretrained refuses device_map=\\"auto\\" for this model'
run 1 "hand-made-maps = true in devlint.toml" -- "$devlint" check --no-cache --output-format concise "$hand"
expect out "Found 5 errors"
expect out "1 at level error, 4 at level warning"
expect out "modeling_chatglm.py:180:20: DL003 (warning)"
run 0 "--show-settings says hand-made-maps" -- "$devlint" check --show-settings "$hand"
expect out "hand-made-maps = true"
run 1 "--min-level error drops the hand-made-only warnings" -- "$devlint" check --no-cache --min-level error \
  --output-format concise "$hand"
expect out "Found 1 error"
run 1 "devmap --device-map on a refusing model: the map, then the code under it" -- \
  "$devlint" devmap "$hand" --device-map "$hand/load_on_gpus.py" --gpus 4
expect out "the map covers every parameter; no problems found"
expect out "code under this map: 1 site(s)"
expect out "DL005"
if grep -q "DL003" "$tmp/out"; then echo "FAIL: the map puts lm_head with the labels on cuda:0"; fail=1; fi
run 1 "devmap --device-map, json" -- "$devlint" devmap "$hand" --device-map "$hand/load_on_gpus.py" \
  --gpus 4 --output-format json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["problems"] == [] and d["code_checked"] and [f["code"] for f in d["findings"]] == ["DL005"], d' "$tmp/out" ||
  { echo "FAIL: devmap json findings"; fail=1; }

# The rank in every output format: gpt2_untied_ranks has one finding that no balanced map on 2 to 8
# GPUs separates (warning) and one that 2 GPUs already do (error).
ranks="$root/fixtures/devmap/gpt2_untied_ranks"
run 1 "ranks, full" -- "$devlint" check --no-cache --isolated "$ranks"
expect out "placement: fails with 2 GPUs: \`shift_labels.view(-1)\` on cuda:0, \`shift_logits.view(-1, shift_logits.size(-1))\` on cuda:1"
expect out "modeling_gpt2.py:98:25: DL002 (warning)"
expect out "1 at level error, 1 at level warning"
run 1 "ranks, concise" -- "$devlint" check --no-cache --isolated --output-format concise "$ranks"
expect out "modeling_gpt2.py:98:25: DL002 (warning) "
expect out "modeling_gpt2.py:126:20: DL003 \[\*\]"
run 1 "ranks, json" -- "$devlint" check --no-cache --isolated --output-format json "$ranks"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [(f["code"], f["level"]) for f in d] == [("DL002", "warning"), ("DL003", "error")], d' "$tmp/out" ||
  { echo "FAIL: json levels"; fail=1; }
run 1 "ranks, json-lines" -- "$devlint" check --no-cache --isolated --output-format json-lines "$ranks"
expect out '"level":"warning"'
expect out '"level":"error"'
run 1 "ranks, sarif" -- "$devlint" check --no-cache --isolated --output-format sarif "$ranks"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][0]["results"]; assert [x["level"] for x in r] == ["warning", "error"], r' "$tmp/out" ||
  { echo "FAIL: sarif levels"; fail=1; }
run 1 "ranks, github" -- "$devlint" check --no-cache --isolated --output-format github "$ranks"
expect out "^::warning file=.*modeling_gpt2.py,line=98,"
expect out "^::error file=.*modeling_gpt2.py,line=126,"
run 1 "ranks, gitlab" -- "$devlint" check --no-cache --isolated --output-format gitlab "$ranks"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert [x["severity"] for x in r] == ["minor", "major"], r' "$tmp/out" ||
  { echo "FAIL: gitlab severities"; fail=1; }
run 1 "ranks, junit: both are failures" -- "$devlint" check --no-cache --isolated --output-format junit "$ranks"
expect out 'failures="2"'
expect out "DL002 (warning) "
run 1 "ranks, --min-level error" -- "$devlint" check --no-cache --isolated --min-level error --output-format concise "$ranks"
expect out "Found 1 error"
if grep -q DL002 "$tmp/out"; then echo "FAIL: --min-level error kept the warning"; fail=1; fi
# check ranks with the placement of the transformers release installed (issue 25), as devmap
# does: an encoder whose input meets its last block's output fails on 2 GPUs only where the
# encoder is split, which accelerate 1.14's budget (transformers 4) does and transformers 5.17's
# larger one (the largest no-split block) does not.
cp -r "$root/fixtures/devmap/t5_style_budget" "$tmp/encdec" && rm -f "$tmp/encdec/"*.snap
python3 - "$tmp/encdec/modeling_encdec.py" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
loop = "        for block in self.blocks:\n            hidden_states = block(hidden_states)\n"
text = text.replace("    def forward(self, hidden_states):\n" + loop + "        return hidden_states\n",
                    "    def forward(self, hidden_states):\n        first = hidden_states\n" + loop +
                    "        return hidden_states + first\n")
open(path, "w").write(text)
PY
has encdec/modeling_encdec.py "return hidden_states + first"
run 0 "check, transformers 5 (none installed): the encoder stays whole on 2 GPUs" -- \
  "$devlint" check --no-cache --isolated --gpus 2 "$tmp/encdec"
run 1 "check, transformers 4 installed: accelerate 1.14 splits the encoder" -- \
  "$devlint" check --no-cache --isolated --gpus 2 --search-path "$tmp/site" "$tmp/encdec"
has out "placement: fails with 2 GPUs"
# A layer list's element returns where its last part is (issue 26): a map that cuts inside the
# first head but keeps every head's last layer on cuda:1 leaves all stacked outputs there.
heads="$root/fixtures/precision/split_list_element_outputs"
run 0 "check --device-map: a cut inside one list element" -- \
  "$devlint" check --no-cache --isolated --device-map "$heads/map_cut_inside_first_head.json" "$heads"
run 1 "check --device-map: a cut between list elements" -- "$devlint" check --no-cache --isolated \
  --output-format concise --device-map "$heads/map_cut_between_heads.json" "$heads"
expect out "modeling_tiny_detector.py:54:16: DL001"
# An argument handed down unchanged through split modules stays where the root's hook put it
# (issue 26): the mask meets the scores of an attention split across cuda:1 and cuda:2 from
# cuda:0, although the entry listed before the attention is on cuda:1.
mask="$root/fixtures/recall/passed_down_mask"
run 1 "check --device-map: a mask handed down from the root" -- "$devlint" check --no-cache \
  --isolated --output-format concise --device-map "$mask/map_split_self_attention.json" "$mask"
expect out "modeling_tiny_bert.py:22:18: DL002"
# An argument the caller computes is where the caller's value is (issue 26), not on the entry
# listed before the callee: ids from the classifier on cuda:1 meet the reading-order projection
# there, although the backbone listed before the reading order is on cuda:0.
computed="$root/fixtures/precision/computed_argument_follows_caller"
run 0 "check --device-map: an argument the caller computes" -- "$devlint" check --no-cache \
  --isolated --output-format concise --device-map "$computed/map_reader_beside_classifier.json" \
  "$computed"
exit $fail
