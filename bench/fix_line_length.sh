#!/usr/bin/env bash
# Fix style over real model code (issue 11): runs `devlint check --fix` on a copy of DIR and
# checks that no line the fixes wrote is longer than the limit fixes keep to: the `line-length`
# of the nearest Ruff (.ruff.toml, ruff.toml, [tool.ruff]) or Black ([tool.black]) configuration
# above the file, else the file's own longest line before the fix.
# Usage: bench/fix_line_length.sh [DIR] [BUILD_DIR]   (defaults: /work/corpus/transformers, build)
# Compiling, idempotence and findings added are bench/fix_safety.sh's.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_fix_setup "$@"
"$devlint" check --isolated --no-cache --exit-zero --output-format json "$tmp/tree" \
  > "$tmp/before.json"
set +e
"$devlint" check --isolated --no-cache --fix --output-format concise "$tmp/tree" \
  > /dev/null 2> "$tmp/fix.stderr"
fix_exit=$?
set -e
[ "$fix_exit" -le 1 ] || { echo "--fix exited with $fix_exit:"; tail -5 "$tmp/fix.stderr"; exit 1; }

python3 - "$dir" "$tmp/tree" "$tmp/before.json" <<'PY'
import difflib, json, os, sys

original_root, fixed_root, before = sys.argv[1:4]
try:
    import tomllib
except ImportError:  # Python < 3.11: the limit falls back to the file's longest line
    tomllib = None


def configured(directory):
    """line-length of the nearest Ruff/Black configuration at or above `directory`."""
    while True:
        for name, keys in ((".ruff.toml", ()), ("ruff.toml", ()),
                           ("pyproject.toml", ("tool", "ruff")),
                           ("pyproject.toml", ("tool", "black"))):
            path = os.path.join(directory, name)
            if tomllib and os.path.isfile(path):
                try:
                    table = tomllib.load(open(path, "rb"))
                except (OSError, ValueError):
                    continue
                for key in keys:
                    table = table.get(key, {})
                if isinstance(table.get("line-length"), int):
                    return table["line-length"]
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


fixable = sum(1 for f in json.load(open(before)) if f["fix"])
changed = over = 0
worst = []
for root, _, files in os.walk(original_root):
    for name in sorted(files):
        if not name.endswith(".py"):
            continue
        old_path = os.path.join(root, name)
        new_path = os.path.join(fixed_root, os.path.relpath(old_path, original_root))
        old = open(old_path, encoding="utf-8", errors="replace").read().splitlines()
        new = open(new_path, encoding="utf-8", errors="replace").read().splitlines()
        if old == new:
            continue
        changed += 1
        limit = configured(os.path.dirname(os.path.abspath(old_path))) or max(map(len, old), default=0)
        for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            if tag in ("replace", "insert"):
                for line in new[j1:j2]:
                    if len(line) > limit:
                        over += 1
                        worst.append((len(line) - limit, new_path, line.strip()))
print(f"findings with a fix before: {fixable}, files changed by --fix: {changed}")
print(f"lines written over the limit: {over}")
for excess, path, line in sorted(worst, reverse=True)[:10]:
    print(f"  +{excess}: {os.path.relpath(path, fixed_root)}: {line[:100]}")
print("fix line length: OK" if over == 0 else "fix line length: FAILED")
sys.exit(1 if over else 0)
PY
