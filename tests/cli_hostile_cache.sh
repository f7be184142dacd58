#!/usr/bin/env bash
# A repository devlint checks is untrusted input (issue 23, items 3, 4 and 6): each case builds a
# hostile repository in a temporary directory and checks that the attack fails. The cache is the
# user's ($XDG_CACHE_HOME/devlint, private, owner-checked); links planted at the names it writes
# are replaced, never written through; a committed cache is never read; entries are validated and
# what devlint prints from them is escaped; file names that are not UTF-8 work in every format.
# With `cpp`, the same for the precompiled LibTorch header (LibTorch is fuzz/cpp_stub).
# Usage: cli_hostile_cache.sh DEVLINT SOURCE_DIR [cpp]
set -u
devlint="$(realpath "$1")" source_dir="$(realpath "$2")" with_cpp="${3:-}"
source "$(dirname "$0")/cli_lib.sh"
tiny="$source_dir/tests/data/modeling_tiny.py" # one DL001 at 31:28
finding="modeling_tiny.py:31:28: DL001"
cache="$XDG_CACHE_HOME/devlint"

intact() { # intact VICTIM: the file outside the repository still holds what it held
  [ "$(cat "$1")" = "precious user data" ] || { echo "FAIL: $1 was overwritten: $(head -c 200 "$1")"; fail=1; }
}
no_raw_controls() { # no_raw_controls FILE: no ESC, BEL or other C0 control but tab and newline
  if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$tmp/$1"; then
    echo "FAIL: $1 carries raw control characters:"; cat -v "$tmp/$1" | head -20; fail=1
  fi
}
entries_of() { find "$1" -name '*.json' -path '*/results/*' | sort; }
plant() { # plant TARGET NAME...: a link to TARGET at each NAME (one process for thousands)
  python3 -c 'import os, sys; [os.symlink(sys.argv[1], n) for n in sys.argv[2:]]' "$@"
}
next_pids() { # the next 200 process ids the kernel hands out
  local last
  last=$(cat /proc/sys/kernel/ns_last_pid 2>/dev/null || echo 1000)
  seq $((last + 1)) $((last + 200))
}
victim="$tmp/victim.txt"
echo "precious user data" >"$victim"

# --- item 3: links planted at the names the cache writes --------------------------------------
# The old layout: a repository shipping .devlint_cache/<version>/<key>.tmp.<pid>.<n> links. The
# cache is not there any more: nothing in the repository is opened for writing.
repo="$tmp/repo"
mkdir -p "$repo/pkg" "$repo/.devlint_cache/0.2.0"
cp "$tiny" "$repo/pkg/modeling_tiny.py"
cd "$repo" || exit 1
plant "$victim" $(for p in $(next_pids); do for n in 0 1 2 3; do echo ".devlint_cache/0.2.0/k.tmp.$p.$n"; done; done)
run 1 "a repository with planted links in ./.devlint_cache" -- "$devlint" check pkg
has out "$finding"
intact "$victim"
[ "$(find .devlint_cache -type f | wc -l)" = 0 ] || { echo "FAIL: devlint wrote into ./.devlint_cache"; fail=1; }

# The worst case: the user points --cache-dir into the repository, whose links git makes as this
# user. Learn the names once, then plant a link at every name devlint writes or reads: the tag,
# the project file, each entry, the old temporary names; and a linked folder below the root.
shipped="$repo/.shipped"
run 1 "learning the entry names" -- "$devlint" check --cache-dir "$shipped" pkg
project_dir=$(ls -d "$shipped"/results/repo-*)
names=$(cd "$project_dir/0.2.0" && ls)
[ -n "$names" ] || { echo "FAIL: no entries to learn"; fail=1; }
rm -f "$project_dir/0.2.0"/* "$shipped/CACHEDIR.TAG" "$project_dir/PROJECT"
ln -s "$victim" "$shipped/CACHEDIR.TAG"
ln -s "$victim" "$project_dir/PROJECT"
pids=$(next_pids)
for name in $names; do
  plant "$victim" "$project_dir/0.2.0/$name" $(for p in $pids; do for n in 0 1; do
    echo "$project_dir/0.2.0/${name%.json}.tmp.$p.$n" "$project_dir/0.2.0/$name.tmp.$p.$n"
  done; done)
done
run 1 "links at every cache file name are replaced, not written through" -- \
  "$devlint" check --cache-dir "$shipped" pkg
has out "$finding"
intact "$victim"
for name in $names CACHEDIR.TAG PROJECT; do
  f=$(find "$shipped" -name "$name" | head -1)
  [ -f "$f" ] && [ ! -L "$f" ] || { echo "FAIL: $name is still a link"; fail=1; }
done
# An entry that is a link is not read either: a link to findings-free JSON is a miss.
for name in $names; do
  python3 - "$project_dir/0.2.0/$name" "$tmp/outside-$name" <<'PY'
import json, sys
entry = json.load(open(sys.argv[1]))
if "findings" in entry:
    entry["findings"] = []
json.dump(entry, open(sys.argv[2], "w"))
PY
  rm "$project_dir/0.2.0/$name" && ln -s "$tmp/outside-$name" "$project_dir/0.2.0/$name"
done
run 1 "an entry that is a link is not followed" -- "$devlint" check --cache-dir "$shipped" pkg
has out "$finding"
# A folder below the cache root that is a link (to a directory outside) is refused: no cache.
rm -rf "$project_dir/0.2.0" && mkdir "$tmp/elsewhere" && ln -s "$tmp/elsewhere" "$project_dir/0.2.0"
run 1 "a linked folder inside the cache" -- "$devlint" check --cache-dir "$shipped" pkg
has out "$finding"
has err "warning: not using the result cache: \`$project_dir/0.2.0\` is a symbolic link"
[ -z "$(ls "$tmp/elsewhere")" ] || { echo "FAIL: written through a linked folder"; fail=1; }

# --- ownership and permissions ----------------------------------------------------------------
mkdir -p "$tmp/shared-cache" && chmod 777 "$tmp/shared-cache"
run 1 "a cache directory others may write to is not used" -- \
  "$devlint" check --cache-dir "$tmp/shared-cache" pkg
has out "$finding"
has err "warning: not using the result cache: \`$tmp/shared-cache\` may be written by other users"
[ -z "$(ls "$tmp/shared-cache")" ] || { echo "FAIL: wrote into a shared directory"; fail=1; }
run 1 "-s: silent about it" -- "$devlint" check -s --cache-dir "$tmp/shared-cache" pkg
[ ! -s "$tmp/err" ] || { echo "FAIL: -s printed: $(cat "$tmp/err")"; fail=1; }
# Another user's directory (as /tmp/devlint made by someone else): refused.
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$tmp/theirs" && chown nobody "$tmp/theirs" && chmod 700 "$tmp/theirs"
  foreign="$tmp/theirs"
else
  foreign=/usr/share # root's
fi
run 1 "another user's cache directory is not used" -- "$devlint" check --cache-dir "$foreign" pkg
has out "$finding"
has err "belongs to another user"
# A fresh cache: every folder private to the user.
run 1 "the default cache" -- "$devlint" check pkg
for d in "$cache" "$cache/results" "$cache"/results/repo-* "$cache"/results/repo-*/*/; do
  [ "$(stat -c %a "$d")" = 700 ] || { echo "FAIL: $d is $(stat -c %a "$d"), not 700"; fail=1; }
done
[ -z "$(find "$cache" -type f ! -perm 600)" ] || { echo "FAIL: cache files others may read"; fail=1; }

# --- item 4: a committed cache with the findings removed ---------------------------------------
# The attacker's clone makes a cache inside the repository (the old default place, or an explicit
# --cache-dir), removes the findings from it and commits it; CI checks out elsewhere.
attacker="$tmp/attacker"
mkdir -p "$attacker/pkg" && cp "$tiny" "$attacker/pkg/modeling_tiny.py"
(cd "$attacker" && "$devlint" check --cache-dir .devlint_cache pkg >/dev/null 2>&1)
for entry in $(entries_of "$attacker/.devlint_cache"); do
  python3 - "$entry" <<'PY'
import json, sys
entry = json.load(open(sys.argv[1]))
if "findings" in entry:
    entry["findings"] = []
    json.dump(entry, open(sys.argv[1], "w"))
PY
done
[ -n "$(entries_of "$attacker/.devlint_cache")" ] || { echo "FAIL: the attacker made no cache"; fail=1; }
cp -a "$attacker" "$tmp/ci_checkout"
cd "$tmp/ci_checkout" || exit 1
run 1 "a committed .devlint_cache is not read" -- "$devlint" check pkg
has out "$finding"
# Even named on the command line, its entries are keyed to the attacker's checkout: misses.
run 1 "a shipped cache named with --cache-dir is keyed to another checkout" -- \
  "$devlint" check --cache-dir .devlint_cache pkg
has out "$finding"

# --- entries validated when read, what is printed from them escaped ----------------------------
rm -rf "$cache"
run 1 "cold run" -- "$devlint" check --output-format json pkg
cp "$tmp/out" "$tmp/reference.json"
inject() { # inject PYTHON-EXPRESSION-ON-f: edits every finding of every entry in the user cache
  for entry in $(entries_of "$cache"); do
    python3 - "$entry" "$1" <<'PY'
import json, sys
entry = json.load(open(sys.argv[1]))
for f in entry.get("findings", []):
    exec(sys.argv[2])
json.dump(entry, open(sys.argv[1], "w"))
PY
  done
}
inject 'f["message"] = "\x1b]0;owned\x07\x1b[2J\x1b[31mred " + f["message"]; f["summary"] = "\x1b]0;owned\x07\x1b[2J " + f["summary"]; f["origins"][0]["path"] = "evil\x1b[1m.py"'
for format in full concise github; do
  run 1 "terminal escapes in a cache entry: $format" -- "$devlint" check --output-format "$format" pkg
  no_raw_controls out
  has out "␛]0;owned␇␛[2J"
  [ "$format" = full ] && has out "evil␛[1m.py" # the origin's path
done
run 1 "the same entry in json" -- "$devlint" check --output-format json pkg
has out '\u001b]0;owned\u0007'
rm -rf "$cache" && "$devlint" check pkg >/dev/null 2>&1
inject 'f["range"][2] = 1000000000; f["range"][3] = 2000000000'
run 1 "positions outside the file are a miss" -- "$devlint" check --output-format json pkg
cmp -s "$tmp/out" "$tmp/reference.json" || { echo "FAIL: an out-of-file position was used"; fail=1; }
rm -rf "$cache" && "$devlint" check pkg >/dev/null 2>&1
inject 'f["message"] = 7; f["file"] = "0"'
run 1 "fields of the wrong type are a miss" -- "$devlint" check --output-format json pkg
cmp -s "$tmp/out" "$tmp/reference.json" || { echo "FAIL: a mistyped entry was used"; fail=1; }
for entry in $(entries_of "$cache"); do
  python3 -c 'import sys; open(sys.argv[1], "w").write("[" * 100000 + "]" * 100000)' "$entry"
done
run 1 "an entry nested 10^5 deep is a miss" -- "$devlint" check --output-format json pkg
cmp -s "$tmp/out" "$tmp/reference.json" || { echo "FAIL: a deep entry changed the result"; fail=1; }
# Escapes in the checked file itself: its name and its source lines print escaped too.
mkdir -p esc && python3 - "$tiny" "esc/$(printf 'modeling_\x1b[2Jx.py')" <<'PY'
import sys
src = open(sys.argv[1]).read().replace("\n", "  # \x1b]0;title\x07\n", 32)
open(sys.argv[2], "w").write(src)
PY
for format in full concise github; do
  run 1 "escapes in a file name and its lines: $format" -- "$devlint" check --output-format "$format" esc
  no_raw_controls out
  has out "modeling_␛[2Jx.py"
done

# --- item 6: a file name that is not UTF-8, in every format, with the cache on ------------------
mkdir -p "$tmp/nonutf8/pkg"
cd "$tmp/nonutf8" || exit 1
cp "$tiny" "pkg/$(printf 'modeling_\xff\xfe.py')"
for format in full concise json json-lines sarif github gitlab junit; do
  run 1 "a non-UTF-8 file name, $format, cold" -- "$devlint" check --output-format "$format" pkg
  cp "$tmp/out" "$tmp/cold"
  run 1 "a non-UTF-8 file name, $format, warm" -- "$devlint" check --output-format "$format" pkg
  cmp -s "$tmp/out" "$tmp/cold" || { echo "FAIL: $format: warm differs from cold"; diff "$tmp/cold" "$tmp/out" | head; fail=1; }
  case $format in full | concise | github) has out 'modeling_\xff\xfe.py' ;; esac
done
# The warm run answered from the cache (a marked entry shows through), name and all.
inject 'f["message"] = "MARKED " + f["message"]; f["summary"] = "MARKED " + f["summary"]'
run 1 "a non-UTF-8 file name round-trips through the cache" -- "$devlint" check --output-format concise pkg
has out 'pkg/modeling_\xff\xfe.py:31:28: DL001 [*] MARKED'
run 0 "devlint clean says what it removed" -- "$devlint" clean
has err "Removed 2 entries for $tmp/nonutf8: $cache/results/nonutf8-"

# --- the precompiled header: the same rules ----------------------------------------------------
if [ "$with_cpp" = cpp ]; then
  stub="$source_dir/fuzz/cpp_stub"
  mkdir -p "$tmp/cpp/src" && cd "$tmp/cpp" || exit 1
  cat >src/serve.cpp <<'EOF'
#include <torch/torch.h>

struct ScaledHeadImpl : torch::nn::Module {
  ScaledHeadImpl() { proj = register_module("proj", torch::nn::Linear(8, 8)); }
  torch::Tensor forward(torch::Tensor x) {
    auto scale = torch::ones({1, 8});
    return proj(x) * scale;
  }
  torch::nn::Linear proj{nullptr};
};
EOF
  cpp_finding="src/serve.cpp:7:12: DL005"
  export DEVLINT_PCH_DIR="$tmp/cpp/pch" # the worst case again: a folder inside the repository
  run 1 "C++: learning the precompiled header's name" -- "$devlint" check --no-cache --libtorch "$stub" src
  has out "$cpp_finding"
  pch=$(ls pch/torch-*.pch)
  [ -n "$pch" ] && [ "$(stat -c %a pch)" = 700 ] || { echo "FAIL: no private PCH folder"; fail=1; }
  rm pch/*
  ln -s "$victim" "$pch" && ln -s "$victim" pch/devlint-torch-pch.h
  plant "$victim" $(for p in $(next_pids); do echo "$pch.tmp$p" "pch/devlint-torch-pch.h.tmp$p"; done)
  run 1 "C++: links at the precompiled header's names are replaced" -- \
    "$devlint" check --no-cache --libtorch "$stub" src
  has out "$cpp_finding"
  intact "$victim"
  [ -f "$pch" ] && [ ! -L "$pch" ] && [ ! -L pch/devlint-torch-pch.h ] ||
    { echo "FAIL: the precompiled header is still a link"; fail=1; }
  chmod 777 pch
  run 1 "C++: a PCH folder others may write to is not used" -- \
    "$devlint" check --no-cache --libtorch "$stub" src
  has out "$cpp_finding"
  has err "not using a precompiled LibTorch header: \`$tmp/cpp/pch\` may be written by other users"
  intact "$victim"
fi
exit $fail
