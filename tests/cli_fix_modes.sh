#!/usr/bin/env bash
# `devlint check --fix / --diff / --fix-only / --show-fixes / --exit-non-zero-on-fix` end to end:
# exit codes as Ruff's, the diff applies with `patch -p1` and `git apply` to exactly what --fix
# writes, --fix matches the fixtures' X.py.fixed, a second --fix changes nothing, and CRLF files,
# files without a trailing newline, read-only files and symlinks are handled.
set -u
devlint="$1"
source_dir="$2"
source "$(dirname "$0")/cli_lib.sh"
bad() { echo "FAIL: $*"; fail=1; }
out_has() { grep -qF -- "$1" "$tmp/out" || { bad "stdout lacks '$1'"; cat "$tmp/out"; }; }
err_has() { grep -qF -- "$1" "$tmp/err" || { bad "stderr lacks '$1'"; cat "$tmp/err"; }; }
fresh_copy() { rm -rf "$1"; mkdir -p "$1"; cp -r "$source_dir/fixtures" "$1/"; }
seed=fixtures/seeds/chatglm3_128k
# The counts below follow the fixtures: every finding with a fix is fixed, the rest remain.
total=$(cd "$source_dir" && "$devlint" check --output-format json-lines fixtures | grep -c '"code"')
unfixable=$(cd "$source_dir" && "$devlint" check --output-format json-lines fixtures |
  grep -c '"fix":null')
fixable=$((total - unfixable))
[ "$fixable" -gt 0 ] && [ "$unfixable" -gt 0 ] || bad "fixtures need fixable and unfixable findings"

# --diff writes nothing, exits 1, and its patch gives exactly what --fix writes.
fresh_copy "$tmp/fix"
cd "$tmp/fix" || exit 1
run 1 "--diff with fixable findings" -- "$devlint" check --diff fixtures
cp "$tmp/out" "$tmp/fixes.patch"
err_has "Would fix $fixable errors."
grep -q '^--- a/fixtures/seeds/chatglm3_128k/modeling_chatglm.py$' "$tmp/fixes.patch" ||
  bad "diff header is not '--- a/<path>'"
diff -r "$source_dir/fixtures" fixtures >/dev/null || bad "--diff changed files"

run 1 "--fix with unfixable findings left" -- "$devlint" check --fix --output-format concise fixtures
out_has "Found $total errors ($fixable fixed, $unfixable remaining)."
grep -q "DL001 \[\*\]" "$tmp/out" && bad "a fixable DL001 is still reported"
for expected in $(cd "$source_dir" && find fixtures -name '*.py.fixed'); do
  cmp -s "${expected%.fixed}" "$source_dir/$expected" ||
    bad "--fix result of ${expected%.fixed} differs from $expected"
done

fresh_copy "$tmp/patched"
(cd "$tmp/patched" && patch -s -p1 <"$tmp/fixes.patch") || bad "patch -p1 failed"
diff -r "$tmp/fix/fixtures" "$tmp/patched/fixtures" || bad "patch -p1 result differs from --fix"
if command -v git >/dev/null; then
  fresh_copy "$tmp/git-applied"
  (cd "$tmp/git-applied" && git apply "$tmp/fixes.patch") || bad "git apply failed"
  diff -r "$tmp/fix/fixtures" "$tmp/git-applied/fixtures" || bad "git apply result differs"
fi

# Idempotent: a second --fix changes nothing and --diff is empty.
find fixtures -type f -exec md5sum {} + | sort >"$tmp/sums.before"
run 1 "second --fix: findings remain, nothing to fix" -- "$devlint" check --fix fixtures
out_has "Found 10 errors."
find fixtures -type f -exec md5sum {} + | sort >"$tmp/sums.after"
cmp -s "$tmp/sums.before" "$tmp/sums.after" || bad "a second --fix changed files"
run 0 "--diff after --fix" -- "$devlint" check --diff fixtures
[ -s "$tmp/out" ] && bad "--diff after --fix printed a diff"

# Exit codes on a package whose findings are all fixable.
fresh_copy "$tmp/all"
cd "$tmp/all" || exit 1
chmod 0754 "$seed/modeling_chatglm.py"
run 0 "--fix fixing everything" -- "$devlint" check --fix --show-fixes $seed
out_has "Found 3 errors (3 fixed, 0 remaining)."
out_has "1 x DL001 (cross-device-concat)"
[ "$(stat -c %a $seed/modeling_chatglm.py)" = 754 ] || bad "--fix changed the file's mode"
cmp -s $seed/modeling_chatglm.py "$source_dir/$seed/modeling_chatglm.py.fixed" || bad "seed not fixed"
fresh_copy "$tmp/all" && cd "$tmp/all"
run 1 "--fix --exit-non-zero-on-fix" -- "$devlint" check --fix --exit-non-zero-on-fix $seed
run 0 "--exit-non-zero-on-fix with nothing left to fix" -- \
  "$devlint" check --fix --exit-non-zero-on-fix $seed
fresh_copy "$tmp/all" && cd "$tmp/all"
run 0 "--fix-only" -- "$devlint" check --fix-only fixtures
grep -q ": DL0" "$tmp/out" && bad "--fix-only reported findings"
out_has "Fixed $fixable errors."
fresh_copy "$tmp/all" && cd "$tmp/all"
run 1 "--fix-only --exit-non-zero-on-fix" -- \
  "$devlint" check --fix-only --exit-non-zero-on-fix fixtures
run 0 "--fix-only --exit-non-zero-on-fix, nothing left" -- \
  "$devlint" check --fix-only --exit-non-zero-on-fix fixtures
fresh_copy "$tmp/all" && cd "$tmp/all"
run 0 "--diff --exit-zero" -- "$devlint" check --diff --exit-zero fixtures
run 1 "--fix --unsafe-fixes" -- "$devlint" check --fix --unsafe-fixes fixtures
run 2 "--fix on a missing path" -- "$devlint" check --fix "$tmp/nope.py"

# CRLF and a missing trailing newline survive --fix and --diff | patch.
fresh_copy "$tmp/crlf"
cd "$tmp/crlf" || exit 1
sed -i 's/$/\r/' $seed/modeling_chatglm.py
sed 's/$/\r/' "$source_dir/$seed/modeling_chatglm.py.fixed" >"$tmp/expected_crlf.py"
cp -r fixtures "$tmp/crlf_patched"
run 1 "--diff on a CRLF file" -- "$devlint" check --diff $seed
(cd "$tmp/crlf_patched" && patch -s -p2 <"$tmp/out") || bad "patch of a CRLF file failed"
run 0 "--fix on a CRLF file" -- "$devlint" check --fix $seed
cmp -s $seed/modeling_chatglm.py "$tmp/expected_crlf.py" || bad "CRLF not kept by --fix"
cmp -s "$tmp/crlf_patched/seeds/chatglm3_128k/modeling_chatglm.py" "$tmp/expected_crlf.py" ||
  bad "CRLF diff did not patch to the --fix result"

mkdir -p "$tmp/eof/models" && cd "$tmp/eof" || exit 1
model='import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        h = self.proj(x)
        return torch.cat([h, torch.zeros(1, 4)], dim=0)'
printf %s "$model" >models/modeling_head.py
printf %s "${model/zeros(1, 4)/zeros(1, 4, device=h.device)}" >"$tmp/expected_eof.py"
cp -r models "$tmp/eof_patched"
run 1 "--diff on a file without a final newline" -- "$devlint" check --diff models
out_has '\ No newline at end of file'
(cd "$tmp/eof_patched" && patch -s -p2 <"$tmp/out") || bad "patch without final newline failed"
run 0 "--fix on a file without a final newline" -- "$devlint" check --fix models
cmp -s models/modeling_head.py "$tmp/expected_eof.py" || bad "missing final newline not kept"
cmp -s "$tmp/eof_patched/modeling_head.py" "$tmp/expected_eof.py" ||
  bad "diff without final newline did not patch to the --fix result"

# A read-only file: exit 2, a clear message, nothing written.
fresh_copy "$tmp/ro"
cd "$tmp/ro" || exit 1
chmod 0444 $seed/modeling_chatglm.py
run 2 "--fix on a read-only file" -- "$devlint" check --fix $seed
err_has "read-only"
cmp -s $seed/modeling_chatglm.py "$source_dir/$seed/modeling_chatglm.py" || bad "read-only file written"
out_has "Found 3 errors." # what is on disk, not the fixes that were not written

# A symlink: its target is fixed and the link stays a link.
fresh_copy "$tmp/link"
cd "$tmp/link" || exit 1
mkdir real && mv $seed/modeling_chatglm.py real/ && ln -s ../../../real/modeling_chatglm.py $seed/modeling_chatglm.py
run 0 "--fix through a symlink" -- "$devlint" check --fix $seed/modeling_chatglm.py
err_has "is a symlink; fixed its target"
[ -L $seed/modeling_chatglm.py ] || bad "the symlink was replaced by a file"
cmp -s real/modeling_chatglm.py "$source_dir/$seed/modeling_chatglm.py.fixed" || bad "target not fixed"

exit $fail
