#!/usr/bin/env python3
"""Re-checks a judged sample: runs devlint on the tree the sample was drawn from and says, for
each judged finding, whether it is still reported (same file, line and code) or gone, and which
findings are new on the judged lines. No network; the tree is a local path.

usage: bench/judged/recheck.py JUDGED.json TREE [--devlint BUILD/devlint] [-- DEVLINT ARGS...]
  JUDGED.json  a judged list: {"tree", "sample", "args"?, "findings": [{file, line, code,
               message, verdict, reason, commit}]}, `file` relative to TREE
  TREE         the directory devlint checks (the sample's `tree`, as a path on this machine)
Extra devlint arguments (e.g. --hand-made-maps) default to the list's "args".
A judged finding counts as still reported only at the level it was judged at (a finding's
`level`, when the list records it); reported at another level it is shown as `level`.
Exit status: 0 when no judged false finding is still reported as judged, 1 otherwise, 2 on bad
input.
"""
import argparse
import json
import os
import subprocess
import sys
from collections import Counter


def run_devlint(devlint, tree, extra):
    cmd = [devlint, "check", "--output-format", "json", "--no-cache", "--exit-zero"] + extra + [tree]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"recheck: devlint failed ({proc.returncode}): {proc.stderr.strip()[:500]}")
    return json.loads(proc.stdout or "[]")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("judged")
    parser.add_argument("tree")
    parser.add_argument("--devlint", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                          "build", "devlint"))
    parser.add_argument("extra", nargs="*", help="devlint arguments after --")
    args = parser.parse_args()
    try:
        with open(args.judged) as f:
            judged = json.load(f)
        items = judged["findings"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"recheck: cannot read {args.judged}: {e}", file=sys.stderr)
        return 2
    if not os.path.isdir(args.tree):
        print(f"recheck: {args.tree} is not a directory", file=sys.stderr)
        return 2
    extra = args.extra or judged.get("args", [])
    tree = os.path.realpath(args.tree)
    findings = run_devlint(args.devlint, tree, extra)
    by_place = {}
    for f in findings:
        rel = os.path.relpath(os.path.realpath(f["filename"]), tree)
        by_place.setdefault((rel, f["location"]["row"]), []).append(f)

    counts = Counter()
    false_left = 0
    judged_places = set()
    for item in items:
        place = (item["file"], item["line"])
        judged_places.add((place, item["code"]))
        here = [f for f in by_place.get(place, []) if f["code"] == item["code"]]
        judged_level = item.get("level")
        levels = sorted({f.get("level") for f in here})
        if not here:
            state = "gone"
        elif judged_level is None or judged_level in levels:
            state = "still"
        else:
            # Reported at another level than the one judged (an error now ranked a warning): the
            # verdict was about the finding as it was, so it no longer holds as stated.
            state = "level"
        counts[(item["verdict"], state)] += 1
        if state == "still" and item["verdict"] == "false":
            false_left += 1
        shown = f" ({judged_level} -> {', '.join(map(str, levels))})" if state == "level" else ""
        print(f"{state:5} {item['verdict']:9} {item['code']} {item['file']}:{item['line']}{shown}")
    for item in items:
        place = (item["file"], item["line"])
        for f in by_place.get(place, []):
            if (place, f["code"]) not in judged_places:
                judged_places.add((place, f["code"]))
                print(f"new   {'':9} {f['code']} {place[0]}:{place[1]}: {f['message'][:100]}")
                counts[("new", "new")] += 1
    summary = ", ".join(f"{v} {k[0]} {k[1]}" for k, v in sorted(counts.items()))
    print(f"{len(findings)} findings on the tree; judged: {summary}")
    return 1 if false_left else 0


if __name__ == "__main__":
    sys.exit(main())
