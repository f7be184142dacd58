#!/usr/bin/env bash
# Issue 27, item 2: the README's pre-commit block works exactly as written for a user who cloned
# this repository: a fresh `git clone` (no tags, committed files only), `pre-commit try-repo`, then
# the .pre-commit-config.yaml the block writes, with the real pre-commit, offline. devlint itself
# is "installed" as the README's Installation section leaves it: on PATH. Exit 77 = skipped.
set -u
devlint="$1" source_dir="$2"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; [ -f "$tmp/out" ] && cat "$tmp/out"; exit 1; }
command -v pre-commit >/dev/null || skip "pre-commit is not installed (Debian package pre-commit)"
command -v git >/dev/null || skip "git is not installed"
git -C "$source_dir" rev-parse HEAD >/dev/null 2>&1 || skip "$source_dir is not a git repository"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PRE_COMMIT_HOME="$tmp/pre-commit-cache" HOME="$tmp/home"
export GIT_AUTHOR_NAME=devlint GIT_AUTHOR_EMAIL=devlint@localhost
export GIT_COMMITTER_NAME=devlint GIT_COMMITTER_EMAIL=devlint@localhost
export GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME/src" "$tmp/bin"
git config --global init.defaultBranch main
git config --global --add safe.directory '*'
unset DEVLINT
ln -s "$(cd "$(dirname "$devlint")" && pwd)/$(basename "$devlint")" "$tmp/bin/devlint"
export PATH="$tmp/bin:$PATH"

# The user's clone: what is committed, no tags (a clone of a clone keeps none it did not get).
git clone -q --no-tags "$source_dir" "$HOME/src/devlint" || fail "git clone failed"
[ -z "$(git -C "$HOME/src/devlint" tag)" ] || fail "the clone has tags; the test wants none"

# The block under the README's marker, as written.
awk '/tests\/pre_commit_readme.sh runs this block/ {found=1; next}
     found && /^```sh/ {inside=1; next}
     inside && /^```/ {exit}
     inside {print}' "$HOME/src/devlint/README.md" > "$tmp/block.sh"
[ -s "$tmp/block.sh" ] || fail "the README has no pre-commit block under the marker"
grep -q 'pre-commit try-repo' "$tmp/block.sh" || fail "the block does not try the hook first"

project="$tmp/project"
mkdir -p "$project/models"
cp "$source_dir/tests/data/modeling_tiny.py" "$project/models/"
(cd "$project" && git init -q && git add -A) || fail "cannot create the project repo"
cd "$project"
bash "$tmp/block.sh" >"$tmp/out" 2>&1
status=$?
[ "$status" = 1 ] || fail "the README block exited $status, expected 1 (pre-commit finds the bug)"
[ "$(grep -c 'models/modeling_tiny.py:31:28: DL001' "$tmp/out")" = 2 ] ||
  fail "try-repo and the configured hook should each report the DL001 finding"
grep -q 'devlint.*Failed' "$tmp/out" || fail "the devlint hook did not fail"
grep -q "rev: $(git -C "$HOME/src/devlint" rev-parse HEAD)" .pre-commit-config.yaml ||
  fail "the configuration does not name the clone's commit"
! grep -qi 'error has occurred\|InvalidManifestError\|did not find' "$tmp/out" || fail "pre-commit erred"
echo "ok: the README's pre-commit block works from a fresh clone"
