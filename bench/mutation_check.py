#!/usr/bin/env python3
"""Mutation check: take away one device move the model's engineers wrote, see whether devlint notices.

For every `modeling_*.py` under CORPUS (one directory per model) whose model declares
`_no_split_modules`, each `.to(X.device)` (X a name or attribute chain, in code: not in comments or docstrings) is
removed on its own, in a copy of the model's directory; devlint runs on that copy. A mutation is
*detected* when the mutated file has a finding that the untouched file does not have (matched by
line and code: removing text on a line moves no line). It is *at the statement* when such a new
finding overlaps the lines of the statement the move was removed from. Some moves are defensive
(both operands already share a device), so read the misses (--list-misses) before chasing them.

  bench/mutation_check.py [CORPUS] [--devlint build/devlint] [--jobs 1] [--save RUN.json]
                          [--against OLD.json] [--list-misses] [--list-detected]
                          [--only SUBSTRING] [-- EXTRA DEVLINT ARGS]

CORPUS defaults to /work/corpus/transformers (see bench/README.md for how it is made).
"""
import argparse
import ast
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tokenize
import io

MOVE = re.compile(r"\.to\(\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\.device\s*\)")


def statement_spans(source):
    """(first line, last line) of every simple statement, innermost first when searched."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not hasattr(node, "body"):
            spans.append((node.lineno, node.end_lineno))
    return spans


def statement_of(spans, line):
    best = (line, line)
    for first, last in spans:
        if first <= line <= last and (best == (line, line) or last - first < best[1] - best[0]):
            best = (first, last)
    return best


def string_and_comment_spans(source):
    """Character spans of strings (docstring examples included) and comments: not code to mutate."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    spans = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in (tokenize.STRING, tokenize.COMMENT) or tok.type == getattr(
                    tokenize, "FSTRING_START", -1):
                (r0, c0), (r1, c1) = tok.start, tok.end
                spans.append((starts[r0 - 1] + c0, starts[r1 - 1] + c1))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return spans


def mutations(path, any_model=False):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    if not any_model and not re.search(r"^\s*_no_split_modules\s*=", source, re.M):
        return source, []
    spans = statement_spans(source)
    not_code = string_and_comment_spans(source)
    found = []
    offset = 0
    for number, text in enumerate(source.splitlines(keepends=True), start=1):
        for m in MOVE.finditer(text):
            at = offset + m.start()
            if any(a <= at < b for a, b in not_code):
                continue
            found.append({
                "line": number,
                "start": offset + m.start(),
                "end": offset + m.end(),
                "anchor": m.group(1),
                "text": text.strip(),
                "statement": statement_of(spans, number),
            })
        offset += len(text)
    return source, found


def run_devlint(devlint, directory, extra):
    cmd = [devlint, "check", "--exit-zero", "--no-cache", "-j", "1", "--output-format", "json", *extra,
           directory]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"devlint exited with {proc.returncode}: {proc.stderr[-400:]}")
    return json.loads(proc.stdout or "[]")


def findings_in(findings, name):
    return [f for f in findings if os.path.basename(f["filename"]) == name]


def check_file(devlint, path, extra, any_model=False):
    source, muts = mutations(path, any_model)
    if not muts:
        return []
    model_dir = os.path.dirname(path)
    name = os.path.basename(path)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, os.path.basename(model_dir))
        shutil.copytree(model_dir, copy)
        target = os.path.join(copy, name)
        before = findings_in(run_devlint(devlint, copy, extra), name)
        before_keys = collections.Counter((f["location"]["row"], f["code"]) for f in before)
        for m in muts:
            with open(target, "w", encoding="utf-8") as out:
                out.write(source[:m["start"]] + source[m["end"]:])
            after = findings_in(run_devlint(devlint, copy, extra), name)
            remaining = collections.Counter(before_keys)
            new = []
            for f in after:
                k = (f["location"]["row"], f["code"])
                if remaining[k] > 0:
                    remaining[k] -= 1
                else:
                    new.append(f)
            first, last = m["statement"]
            at_statement = [f for f in new
                            if f["location"]["row"] <= last and f["end_location"]["row"] >= first]
            results.append({
                "file": os.path.relpath(path, os.path.dirname(model_dir)),
                "line": m["line"],
                "anchor": m["anchor"],
                "text": m["text"],
                "detected": bool(new),
                "at_statement": bool(at_statement),
                "new": [f"{f['location']['row']}:{f['location']['column']} {f['code']} "
                        f"{f['message']}" for f in new],
            })
        with open(target, "w", encoding="utf-8") as out:
            out.write(source)
    return results


def key(r):
    return (r["file"], r["line"], r["anchor"], r["text"])


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", default="/work/corpus/transformers")
    parser.add_argument("--devlint", default="build/devlint")
    parser.add_argument("--jobs", type=int, default=1, help="files checked at once (default 1)")
    parser.add_argument("--save", help="write every mutation's result here (JSON)")
    parser.add_argument("--against", help="a run saved with --save: list what changed")
    parser.add_argument("--list-misses", action="store_true")
    parser.add_argument("--list-detected", action="store_true")
    parser.add_argument("--only", help="only files whose path contains this")
    parser.add_argument("--prefix", default="modeling_",
                        help="files whose name starts with this (default modeling_; pipeline_ for "
                             "diffusers pipelines)")
    parser.add_argument("--any-model", action="store_true",
                        help="also files that declare no _no_split_modules (pipelines, scripts)")
    args = parser.parse_args(argv)
    if not os.access(args.devlint, os.X_OK):
        sys.exit(f"mutation_check: {args.devlint} not built")
    devlint = os.path.abspath(args.devlint)
    files = sorted(
        os.path.join(root, n) for root, _, names in os.walk(args.corpus) for n in names
        if n.startswith(args.prefix) and n.endswith(".py") and (not args.only or args.only in
                                                                  os.path.join(root, n)))
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for file_results in pool.map(lambda p: check_file(devlint, p, extra, args.any_model),
                                     files):
            results.extend(file_results)
    results.sort(key=key)

    total = len(results)
    detected = sum(r["detected"] for r in results)
    at_statement = sum(r["at_statement"] for r in results)
    nfiles = len({r["file"] for r in results})
    pct = (lambda n: 100.0 * n / total if total else 0.0)
    print(f"mutations        {total} moves removed, one at a time, in {nfiles} files")
    print(f"detected         {detected} ({pct(detected):.1f}%): a new finding in the file")
    print(f"at statement     {at_statement} ({pct(at_statement):.1f}%): a new finding on the "
          f"statement of the removed move")
    misses = collections.Counter(r["anchor"] for r in results if not r["detected"])
    print("missed by anchor " + ", ".join(f"{a} {n}" for a, n in misses.most_common(12)))
    if args.list_misses:
        for r in results:
            if not r["detected"]:
                print(f"  miss {r['file']}:{r['line']}: {r['text']}")
    if args.list_detected:
        for r in results:
            if r["detected"]:
                mark = "@" if r["at_statement"] else " "
                print(f"  hit{mark} {r['file']}:{r['line']}: {r['text']}")
                for n in r["new"][:3]:
                    print(f"        {n[:200]}")
    if args.save:
        with open(args.save, "w") as out:
            json.dump(results, out, indent=1)
    if args.against:
        with open(args.against) as saved:
            old = {key(r): r for r in json.load(saved)}
        gained = [r for r in results if r["detected"] and not old.get(key(r), {}).get("detected")]
        lost = [r for r in results if not r["detected"] and old.get(key(r), {}).get("detected")]
        print(f"against saved    +{len(gained)} newly detected, -{len(lost)} no longer detected")
        for sign, group in (("+", gained), ("-", lost)):
            for r in group:
                print(f"  {sign} {r['file']}:{r['line']}: {r['text']}")


if __name__ == "__main__":
    main()
