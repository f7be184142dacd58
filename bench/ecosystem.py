#!/usr/bin/env python3
"""Ecosystem check: devlint over a directory of real model files, findings per rule and per model.

Like Ruff's ecosystem job: save one run, change the analyzer, run again against the saved run and
read what appeared and what went away.

  bench/ecosystem.py DIR [--devlint build/devlint] [--save RUN.json] [--against OLD.json]
                         [--show N] [-- EXTRA DEVLINT ARGS]

A model is the first directory under DIR holding the file (the corpus has one directory per
model), or the file itself when it sits directly in DIR. Findings are matched between runs by
(file, code, fingerprint): the fingerprint hashes the flagged code, so it survives lines moving.
Exit status: 0, or 2 when devlint fails (a crash is a result worth noticing, not a diff).
"""
import argparse
import collections
import json
import os
import subprocess
import sys


def model_of(rel_path):
    parts = rel_path.split(os.sep)
    return parts[0] if len(parts) > 1 else rel_path


def run_devlint(devlint, directory, extra):
    cmd = [devlint, "check", "--exit-zero", "--no-cache", "--output-format", "json", *extra, directory]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        sys.exit(f"ecosystem: devlint exited with {proc.returncode}: {' '.join(cmd)}")
    findings = []
    for f in json.loads(proc.stdout or "[]"):
        rel = os.path.relpath(f["filename"], directory)
        findings.append({
            "file": rel,
            "model": model_of(rel),
            "code": f["code"],
            "row": f["location"]["row"],
            "column": f["location"]["column"],
            "message": f["message"],
            "fingerprint": f.get("fingerprint", ""),
        })
    return findings


def key(f):
    return (f["file"], f["code"], f["fingerprint"] or f"{f['row']}:{f['column']}")


def print_counts(title, findings):
    by_rule = collections.Counter(f["code"] for f in findings)
    by_model = collections.Counter(f["model"] for f in findings)
    print(f"{title}: {len(findings)} findings in {len(by_model)} models")
    print("  per rule:  " + "  ".join(f"{c} {n}" for c, n in sorted(by_rule.items())))
    print("  per model (most first):")
    for model, n in sorted(by_model.items(), key=lambda kv: (-kv[1], kv[0])):
        rules = collections.Counter(f["code"] for f in findings if f["model"] == model)
        print(f"    {n:4d}  {model:40s} " + " ".join(f"{c}:{k}" for c, k in sorted(rules.items())))


def print_diff(old, new, show):
    old_keys = collections.Counter(key(f) for f in old)
    new_keys = collections.Counter(key(f) for f in new)
    added = [f for f in new if _take(old_keys, key(f))]
    removed = [f for f in old if _take(new_keys, key(f))]
    print(f"\nagainst saved run: +{len(added)} -{len(removed)} "
          f"({len(old)} -> {len(new)} findings)")
    for sign, group in (("+", added), ("-", removed)):
        if not group:
            continue
        rules = collections.Counter(f["code"] for f in group)
        models = collections.Counter(f["model"] for f in group)
        print(f"  {sign} per rule:  " + "  ".join(f"{c} {n}" for c, n in sorted(rules.items())))
        print(f"  {sign} per model: " + ", ".join(
            f"{m} {n}" for m, n in sorted(models.items(), key=lambda kv: (-kv[1], kv[0]))))
        for f in sorted(group, key=lambda f: (f["file"], f["row"], f["code"]))[:show]:
            print(f"  {sign} {f['file']}:{f['row']}:{f['column']}: {f['code']} {f['message'][:160]}")
        if len(group) > show:
            print(f"  {sign} ... {len(group) - show} more (--show N)")


def _take(counter, k):
    """True when k is not (or no longer) in counter; consumes one occurrence otherwise."""
    if counter[k] > 0:
        counter[k] -= 1
        return False
    return True


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--devlint", default="build/devlint")
    parser.add_argument("--save", help="write this run's findings here (JSON)")
    parser.add_argument("--against", help="a run saved with --save to diff against")
    parser.add_argument("--show", type=int, default=40, help="findings listed per side of a diff")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.directory):
        sys.exit(f"ecosystem: no directory {args.directory}")
    if not os.access(args.devlint, os.X_OK):
        sys.exit(f"ecosystem: {args.devlint} not built")
    findings = run_devlint(args.devlint, args.directory, extra)
    if args.save:
        with open(args.save, "w") as out:
            json.dump(findings, out, indent=1, sort_keys=True)
    print_counts(args.directory, findings)
    if args.against:
        with open(args.against) as saved:
            print_diff(json.load(saved), findings, args.show)


if __name__ == "__main__":
    main()
