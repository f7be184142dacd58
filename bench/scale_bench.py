#!/usr/bin/env python3
"""How devlint's time grows with the input (issue 23, item 9): it must stay linear in the number
of classes and in the size of a file or package, or a repository can stall CI.

Usage: bench/scale_bench.py [--devlint build/devlint] [--corpus DIR] [--runs 3]
                            [--classes 2000,4000,...] [--megabytes 1,3,10] [--keep DIR]

Generates, in a temporary directory:
- `classes N`: one file of N small module classes, each reading an attribute its class never
  sets (`torch.cat((x, self.w))`), the shape that made every read scan every class;
- `file X MB`: one modeling file of X MB, real model code (the corpus' modeling_*.py files, the
  transformers tree by default, else the repository's fixtures) concatenated;
- `package X MB`: one directory holding X MB of those files side by side (one package).
Times `devlint check --no-cache --exit-zero -j 1 --output-format json` on each (best of --runs,
CPU time user+sys of the child, and wall time) and prints, per input, the ratio to the previous
size and the growth exponent log(t2/t1) / log(n2/n1): about 1 is linear, 2 quadratic.
"""
import argparse
import glob
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def many_classes(directory, n):
    with open(os.path.join(directory, "modeling_many.py"), "w") as f:
        f.write("import torch\nfrom torch import nn\n")
        for i in range(n):
            f.write(f"\n\nclass Block{i}(nn.Module):\n    def forward(self, x):\n"
                    f"        return torch.cat((x, self.w))\n")


def corpus_files(corpus):
    files = sorted(glob.glob(os.path.join(corpus, "**", "modeling_*.py"), recursive=True))
    if not files:
        files = sorted(glob.glob(os.path.join(HERE, "..", "fixtures", "**", "*.py"),
                                 recursive=True))
    if not files:
        sys.exit("bench: no model files to build inputs from")
    return files


def model_code(files, megabytes):
    """(name, text) pairs of real model files, repeated as needed, about `megabytes` in all."""
    limit, total, out = int(megabytes * (1 << 20)), 0, []
    while total < limit:
        for i, path in enumerate(files):
            text = open(path, encoding="utf-8", errors="replace").read()
            out.append((f"modeling_{len(out)}_{os.path.basename(path)[9:]}", text))
            total += len(text)
            if total >= limit:
                break
    return out


def long_file(directory, files, megabytes):
    with open(os.path.join(directory, "modeling_long.py"), "w") as f:
        f.write("\n\n".join(text for _, text in model_code(files, megabytes)))


def package(directory, files, megabytes):
    for name, text in model_code(files, megabytes):
        with open(os.path.join(directory, name), "w") as f:
            f.write(text)


def timed(devlint, directory, runs):
    """Best CPU seconds (user+sys of the child) and best wall seconds over `runs`."""
    best_cpu = best_wall = math.inf
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        result = subprocess.run([devlint, "check", "--no-cache", "--exit-zero", "-j", "1",
                                 "--output-format", "json", directory],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if result.returncode not in (0, 1):
            sys.exit(f"bench: devlint failed on {directory}: {result.stderr.decode()[-500:]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best_cpu, best_wall = min(best_cpu, cpu), min(best_wall, wall)
    return best_cpu, best_wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devlint", default=os.path.join("build", "devlint"))
    parser.add_argument("--corpus", default="/work/corpus/transformers")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--classes", default="2000,4000,8000,16000,32000")
    parser.add_argument("--megabytes", default="1,3,10")
    parser.add_argument("--keep", help="write the inputs here and keep them")
    args = parser.parse_args()
    devlint = os.path.abspath(args.devlint)
    if not os.access(devlint, os.X_OK):
        sys.exit(f"bench: {devlint} not built")
    root = args.keep or tempfile.mkdtemp(prefix="devlint-scale-")
    files = corpus_files(args.corpus)
    series = [("classes", int(n), lambda d, n: many_classes(d, n))
              for n in args.classes.split(",") if n]
    series += [("file MB", float(m), lambda d, m: long_file(d, files, m))
               for m in args.megabytes.split(",") if m]
    series += [("package MB", float(m), lambda d, m: package(d, files, m))
               for m in args.megabytes.split(",") if m]
    print("| input | size | MB | CPU s | wall s | CPU ratio | exponent |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    previous = {}
    try:
        for kind, size, make in series:
            directory = os.path.join(root, f"{kind.split()[0]}_{size:g}")
            os.makedirs(directory, exist_ok=True)
            make(directory, size)
            megabytes = sum(os.path.getsize(p) for p in glob.glob(os.path.join(directory, "*"))
                            ) / (1 << 20)
            cpu, wall = timed(devlint, directory, args.runs)
            ratio = exponent = "-"
            if kind in previous:
                last_size, last_cpu = previous[kind]
                if last_cpu > 0 and cpu > 0:
                    ratio = f"{cpu / last_cpu:.2f}"
                    exponent = f"{math.log(cpu / last_cpu) / math.log(size / last_size):.2f}"
            previous[kind] = (size, cpu)
            print(f"| {kind} | {size:g} | {megabytes:.1f} | {cpu:.2f} | {wall:.2f} | {ratio} "
                  f"| {exponent} |", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
