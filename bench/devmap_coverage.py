#!/usr/bin/env python3
"""How many models `devlint devmap` sizes from their configuration defaults (issue 25).

Runs `devlint devmap --isolated` on every model folder under MODELS_DIR (one folder per model,
with its modeling_*.py and configuration_*.py, as in transformers' src/transformers/models) whose
modeling code declares `_no_split_modules`, and counts the models with a known size ("sized":
more than 0 bytes) and those with every part sized ("complete"). With --reasons, the most common
things devlint could not evaluate among the sized but incomplete models.

usage: bench/devmap_coverage.py DEVLINT MODELS_DIR [--reasons] [--list]
It reads only the files given; nothing is fetched or imported.
"""
import collections
import os
import re
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    devlint, root = sys.argv[1], sys.argv[2]
    rows = []
    for name in sorted(os.listdir(root)):
        folder = os.path.join(root, name)
        if not os.path.isdir(folder):
            continue
        modeling = [f for f in os.listdir(folder) if f.startswith("modeling_") and f.endswith(".py")]
        text = "".join(open(os.path.join(folder, f), errors="replace").read() for f in modeling)
        if "_no_split_modules" not in text:
            continue
        try:
            run = subprocess.run([devlint, "devmap", "--isolated", folder], capture_output=True,
                                 text=True, timeout=120)
            found = re.search(r"total size: (.*)", run.stdout)
            total = found.group(1) if found else "no size: " + run.stderr.strip()[:100]
            rows.append((name, total, run.stdout))
        except subprocess.TimeoutExpired:
            rows.append((name, "timeout", ""))
    sized = [r for r in rows if re.match(r"(at least )?[0-9.]+ [KMG]?i?B", r[1])
             and not re.match(r"(at least )?0 B", r[1])]
    complete = [r for r in sized if not r[1].startswith("at least")]
    print(f"models declaring _no_split_modules: {len(rows)}; sized: {len(sized)}; "
          f"complete: {len(complete)}")
    if "--list" in sys.argv:
        for name, total, _ in rows:
            print(f"  {name}: {total}")
    if "--reasons" in sys.argv:
        reasons = collections.Counter()
        for name, total, out in rows:
            if total.startswith("at least") and (name, total, out) in sized:
                for line in out.splitlines():
                    if line.startswith("  ") and "parameter(s)" not in line:
                        reason = re.sub(r"`[^`]*`", "`X`", re.sub(r"^\s*\S+:\d+: ", "", line))
                        reasons[reason[:100]] += 1
        for reason, count in reasons.most_common(20):
            print(f"{count:5} {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
