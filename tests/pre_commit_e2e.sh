#!/usr/bin/env bash
# End to end with the real pre-commit: a project repository with a buggy model file uses this
# checkout's .pre-commit-hooks.yaml. Mode `check`: the devlint hook fails and names the finding.
# Mode `fix`: the devlint-fix hook rewrites the file, and the next run passes.
# Runs offline: `language: script` hooks need no package index. Exit 77 = skipped.
set -u
devlint="$1" source_dir="$2" mode="$3"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; [ -f "$tmp/out" ] && cat "$tmp/out"; exit 1; }
command -v pre-commit >/dev/null || skip "pre-commit is not installed (Debian package pre-commit)"
command -v git >/dev/null || skip "git is not installed"
if [ "$mode" = fix ] && ! "$devlint" check --help | grep -q -- '--fix'; then
  skip "this devlint has no \`check --fix\` yet (issue 3); the devlint-fix hook needs it"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/xdg-cache" # devlint's cache: never the real home in tests
export PRE_COMMIT_HOME="$tmp/pre-commit-cache" HOME="$tmp/home"
export GIT_AUTHOR_NAME=devlint GIT_AUTHOR_EMAIL=devlint@localhost
export GIT_COMMITTER_NAME=devlint GIT_COMMITTER_EMAIL=devlint@localhost
export GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME" "$tmp/bin"
git config --global init.defaultBranch main
git config --global --add safe.directory '*'
unset DEVLINT
ln -s "$(cd "$(dirname "$devlint")" && pwd)/$(basename "$devlint")" "$tmp/bin/devlint"
export PATH="$tmp/bin:$PATH"

# The hook repository: this checkout's hook definitions and wrapper, as committed files (pre-commit
# clones the repository at `rev`, so uncommitted edits would be invisible otherwise).
hooks="$tmp/devlint-checkout"
mkdir -p "$hooks/analyzer/cli"
cp "$source_dir/.pre-commit-hooks.yaml" "$hooks/"
cp -p "$source_dir/analyzer/cli/devlint-pre-commit" "$hooks/analyzer/cli/"
[ -x "$hooks/analyzer/cli/devlint-pre-commit" ] || fail "analyzer/cli/devlint-pre-commit is not executable"
if git -C "$source_dir" ls-files --error-unmatch analyzer/cli/devlint-pre-commit >/dev/null 2>&1; then
  git -C "$source_dir" ls-files -s analyzer/cli/devlint-pre-commit | grep -q '^100755' ||
    fail "analyzer/cli/devlint-pre-commit is committed without the executable bit"
fi
(cd "$hooks" && git init -q && git add -A && git commit -qm hooks) || fail "cannot create the hook repo"
rev=$(git -C "$hooks" rev-parse HEAD)

project="$tmp/project"
mkdir -p "$project/models"
cp "$source_dir/tests/data/modeling_tiny.py" "$project/models/"
hook_ids=(devlint)
[ "$mode" = fix ] && hook_ids=(devlint-fix devlint)
{
  echo "repos:"
  echo "  - repo: $hooks"
  echo "    rev: $rev"
  echo "    hooks:"
  for id in "${hook_ids[@]}"; do echo "      - id: $id"; done
} > "$project/.pre-commit-config.yaml"
(cd "$project" && git init -q && git add -A) || fail "cannot create the project repo"

cd "$project"
pre-commit run --all-files >"$tmp/out" 2>&1
status=$?
if [ "$mode" = check ]; then
  [ "$status" = 1 ] || fail "pre-commit exited $status, expected 1 (a finding)"
  grep -q 'models/modeling_tiny.py:31:28: DL001' "$tmp/out" || fail "the output lacks the DL001 finding"
  grep -q 'devlint.*Failed' "$tmp/out" || fail "the devlint hook did not fail"
  echo "ok: the devlint hook fails with the finding"
  exit 0
fi
[ "$status" = 1 ] || fail "first run exited $status, expected 1 (files modified by the fix hook)"
grep -q 'kv_cache.to(presents.device)' models/modeling_tiny.py || fail "the fix was not applied"
git add -A
pre-commit run --all-files >"$tmp/out" 2>&1 || fail "pre-commit still fails after the fix hook"
echo "ok: the devlint-fix hook fixes the file and the next run passes"
