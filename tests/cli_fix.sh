#!/usr/bin/env bash
# Auto-patch mode end to end: --diff, --fix, --fix-only, exit codes, idempotence, and file safety
# (CRLF, modes, read-only files, symlinks, missing trailing newline).
set -u
devlint="$1"
fixtures="$2"
source "$(dirname "$0")/cli_lib.sh"
check() { # check DESCRIPTION CONDITION...
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}

mkdir -p "$tmp/diff" "$tmp/fix"
cp -r "$fixtures/seeds" "$tmp/diff/"
cp -r "$fixtures/seeds" "$tmp/fix/"
find "$tmp" -name '*.py.fixed' -delete
before=$(cd "$tmp/diff" && find . -type f -exec sha256sum {} + | sort)

cd "$tmp/diff"
run 1 "--diff reports a change" -- "$devlint" check --diff seeds
cp "$tmp/out" "$tmp/seeds.diff"
check "--diff writes nothing" test "$before" = "$(find . -type f -exec sha256sum {} + | sort)"
check "diff names a/ and b/ paths" grep -q '^--- a/seeds/glm4v/visual.py' "$tmp/seeds.diff"
check "diff applies with patch -p1" patch -s -p1 < "$tmp/seeds.diff"

cd "$tmp/fix"
run 1 "--fix leaves the unfixable finding and exits 1" -- "$devlint" check --fix --show-fixes seeds
check "--show-fixes lists fixed rules" grep -q 'DL001 (cross-device-concat)' "$tmp/out"
check "--fix equals the applied diff" diff -r "$tmp/diff/seeds" "$tmp/fix/seeds"
for f in $(find "$fixtures/seeds" -name '*.py.fixed'); do
  rel=${f#"$fixtures/"}
  check "fixed $rel matches the expected fixture" cmp -s "$f" "$tmp/fix/${rel%.fixed}"
done
after_first=$(find . -type f -exec sha256sum {} + | sort)
run 1 "second --fix" -- "$devlint" check --fix seeds
check "second --fix changes nothing" test "$after_first" = "$(find . -type f -exec sha256sum {} + | sort)"
run 0 "--diff after --fix is empty" -- "$devlint" check --diff --select DL001,DL003,DL004,DL006 seeds
check "empty diff output" test ! -s "$tmp/out"
run 0 "--fix-only with nothing left to fix" -- "$devlint" check --fix-only seeds

mkdir -p "$tmp/exit" && cp -r "$fixtures/seeds/chatglm3_128k" "$tmp/exit/"
rm -f "$tmp/exit/chatglm3_128k/"*.py.fixed
run 1 "--exit-non-zero-on-fix" -- "$devlint" check --fix-only --exit-non-zero-on-fix "$tmp/exit"
mkdir -p "$tmp/exit2" && cp -r "$fixtures/seeds/chatglm3_128k" "$tmp/exit2/"
rm -f "$tmp/exit2/chatglm3_128k/"*.py.fixed
run 0 "--fix-only exits 0 after fixing" -- "$devlint" check --fix-only "$tmp/exit2"
check "--fix-only reports the count" grep -q 'Fixed 3 errors' "$tmp/out"

# File safety.
model="$fixtures/rules/DL003_loss_label_device/modeling_classifier.py"
mkdir -p "$tmp/crlf" && sed 's/$/\r/' "$model" > "$tmp/crlf/modeling_classifier.py"
run 0 "--fix on a CRLF file" -- "$devlint" check --fix "$tmp/crlf"
check "CRLF kept on every line" test "$(grep -c $'\r$' "$tmp/crlf/modeling_classifier.py")" = "$(wc -l < "$tmp/crlf/modeling_classifier.py")"
check "CRLF file was fixed" grep -q 'labels.view(-1).to(logits.device)' "$tmp/crlf/modeling_classifier.py"

mkdir -p "$tmp/mode" && cp "$model" "$tmp/mode/" && chmod 640 "$tmp/mode/modeling_classifier.py"
run 0 "--fix fixes everything here" -- "$devlint" check --fix "$tmp/mode"
check "file mode kept" test "$(stat -c %a "$tmp/mode/modeling_classifier.py")" = 640

mkdir -p "$tmp/noeol" && printf '%s' "$(cat "$model")" > "$tmp/noeol/modeling_classifier.py"
run 0 "--fix on a file without a final newline" -- "$devlint" check --fix "$tmp/noeol"
check "no final newline added" test "$(tail -c 1 "$tmp/noeol/modeling_classifier.py" | od -An -c | tr -d ' ')" != '\n'

mkdir -p "$tmp/ro" && cp "$model" "$tmp/ro/" && chmod 444 "$tmp/ro/modeling_classifier.py"
ro_before=$(sha256sum < "$tmp/ro/modeling_classifier.py")
run 2 "--fix on a read-only file" -- "$devlint" check --fix "$tmp/ro"
check "read-only message" grep -q 'read-only; not fixed' "$tmp/err"
check "read-only file untouched" test "$ro_before" = "$(sha256sum < "$tmp/ro/modeling_classifier.py")"

mkdir -p "$tmp/real" "$tmp/link" && cp "$model" "$tmp/real/"
ln -s "$tmp/real/modeling_classifier.py" "$tmp/link/modeling_classifier.py"
run 0 "--fix through a symlink" -- "$devlint" check --fix "$tmp/link/modeling_classifier.py"
check "symlink is still a symlink" test -L "$tmp/link/modeling_classifier.py"
check "symlink target was fixed" grep -q 'labels.view(-1).to(logits.device)' "$tmp/real/modeling_classifier.py"
check "no temporary files left" test -z "$(find "$tmp" -name '*.devlint-*')"
exit $fail
