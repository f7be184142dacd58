#!/usr/bin/env python3
"""Are devlint's model sizes the sizes of the models transformers builds? (issue 25)

`devlint devmap` sizes a model from its configuration's defaults without running anything. This
script checks those sizes against the model transformers really builds from the same defaults,
for a seeded sample of the models of a transformers tree, in three steps:

  plan DEVLINT TREE PLAN.json [--sample N] [--seed S]
      (here) runs `devlint devmap --isolated --dtype fp32 --tensors` on each model folder of
      TREE/models that declares `_no_split_modules` and keeps the class devlint picked, whether it
      built every part, its element count (parameters and buffers, each tied group once) and its
      total size as printed.
  record PLAN.json RECORDED.json [--deadline SECONDS]
      (a machine with that transformers version and torch installed: the device machine) builds
      each planned class with `cls.config_class()` on the meta device, float32, and records
      accelerate's `compute_module_sizes` total and the element count of its unique parameters
      and buffers. Nothing is downloaded; no weights exist.
  compare PLAN.json RECORDED.json
      (here) prints each model whose element count differs and the totals: complete models must
      all agree. Exit status 1 when a complete model differs.
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys
import time

UNITS = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]


def human(n):
    for unit, size in UNITS:
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} B"


def plan(args):
    models_dir = os.path.join(args.tree, "models")
    folders = []
    for name in sorted(os.listdir(models_dir)):
        folder = os.path.join(models_dir, name)
        modeling = [f for f in os.listdir(folder) if f.startswith("modeling_") and f.endswith(".py")] \
            if os.path.isdir(folder) else []
        if any("_no_split_modules" in open(os.path.join(folder, f), encoding="utf-8").read()
               for f in modeling):
            folders.append(name)
    random.Random(args.seed).shuffle(folders)
    folders = sorted(folders[: args.sample]) if args.sample else folders
    rows = []
    for name in folders:
        done = subprocess.run(
            [args.devlint, "devmap", "--isolated", "--dtype", "fp32", "--tensors",
             os.path.join(models_dir, name)],
            capture_output=True, text=True, timeout=300,
            env={**os.environ, "DEVLINT_PYTHON": "false", "NO_COLOR": "1"})
        text = done.stdout
        model = re.search(r"^model: (\w+)", text, re.M)
        total = re.search(r"^total size: (.*)$", text, re.M)
        if done.returncode != 0 or not model or not total:
            rows.append({"folder": name, "error": (done.stderr or text).strip()[:300]})
            continue
        tied_names = {n for line in re.findall(r"^tied: (.*)$", text, re.M) for n in line.split()[1:]}
        elements = 0
        # `name  numel`, `name  numel  buffer`, `name  numel  buffer (not persistent)`.
        for tensor, numel, kind in re.findall(r"^(\S+)  (\d+)((?:  buffer.*)?)$", text, re.M):
            if tensor not in tied_names and "not persistent" not in kind:
                elements += int(numel)
        rows.append({
            "folder": name,
            "class": model.group(1),
            "complete": "parts not evaluated" not in total.group(1),
            "total": total.group(1),
            "elements": elements,
        })
        print(f"{name}: {model.group(1)} {total.group(1)} ({elements} elements)", file=sys.stderr)
    with open(args.plan, "w", encoding="utf-8") as out:
        json.dump({"tree": os.path.abspath(args.tree), "seed": args.seed, "models": rows}, out,
                  indent=1)
    return 0


def record(args):
    import signal

    import torch
    import transformers
    from transformers.integrations.accelerate import compute_module_sizes

    planned = json.load(open(args.plan, encoding="utf-8"))["models"]
    result = {"transformers": transformers.__version__, "torch": torch.__version__, "models": {}}
    started = time.time()

    def give_up(signum, frame):
        raise TimeoutError("over 20 s")

    signal.signal(signal.SIGALRM, give_up)
    for row in planned:
        if "class" not in row:
            continue
        if time.time() - started > args.deadline:
            break
        entry = result["models"].setdefault(row["folder"], {"class": row["class"]})
        signal.alarm(20)
        try:
            cls = getattr(transformers, row["class"])
            config = cls.config_class()
            torch.set_default_dtype(torch.float32)
            with torch.device("meta"):
                model = cls._from_config(config) if hasattr(cls, "_from_config") else cls(config)
            sizes = compute_module_sizes(model)
            sizes = sizes[0] if isinstance(sizes, tuple) else sizes
            entry["total_bytes"] = int(sizes[""])
            # Unique parameters and persistent buffers: what a checkpoint holds and what
            # devlint lists (a non-persistent buffer such as rotary inv_freq is not listed).
            persistent = sum(
                buffer.numel()
                for module in model.modules()
                for name, buffer in module.named_buffers(recurse=False)
                if name not in module._non_persistent_buffers_set)
            entry["elements"] = sum(p.numel() for p in model.parameters()) + persistent
            if row["folder"] in args.names or ("complete" in args.names and row["complete"]):
                entry["tensors"] = {
                    **{n: p.numel() for n, p in model.named_parameters()},
                    **{f"{prefix}.{n}".lstrip("."): b.numel()
                       for prefix, module in model.named_modules()
                       for n, b in module.named_buffers(recurse=False)
                       if n not in module._non_persistent_buffers_set},
                }
        except BaseException as error:  # noqa: BLE001 - a model that does not build is recorded
            entry["error"] = f"{type(error).__name__}: {error}"[:300]
        finally:
            signal.alarm(0)
        with open(args.recorded, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=1)
    return 0


def compare(args):
    planned = json.load(open(args.plan, encoding="utf-8"))["models"]
    recorded = json.load(open(args.recorded, encoding="utf-8"))["models"]
    counts = {"complete agree": 0, "complete differ": 0, "partial agree": 0, "partial differ": 0,
              "not built by transformers": 0, "not recorded": 0, "not sized by devlint": 0}
    for row in planned:
        got = recorded.get(row["folder"])
        if "class" not in row:
            counts["not sized by devlint"] += 1
            continue
        if not got:
            counts["not recorded"] += 1
            continue
        if "error" in got:
            counts["not built by transformers"] += 1
            continue
        agree = got["elements"] == row["elements"]
        kind = ("complete " if row["complete"] else "partial ") + ("agree" if agree else "differ")
        counts[kind] += 1
        if not agree:
            print(f"{row['folder']} {row['class']}: devlint {row['elements']} elements "
                  f"({row['total']}), transformers {got['elements']} ({human(got['total_bytes'])})"
                  + ("" if row["complete"] else " [devlint: parts not evaluated]"))
    print("; ".join(f"{k}: {v}" for k, v in counts.items()))
    return 1 if counts["complete differ"] else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    steps = parser.add_subparsers(dest="step", required=True)
    p = steps.add_parser("plan")
    p.add_argument("devlint")
    p.add_argument("tree")
    p.add_argument("plan")
    p.add_argument("--sample", type=int, default=0)
    p.add_argument("--seed", type=int, default=20261127)
    r = steps.add_parser("record")
    r.add_argument("plan")
    r.add_argument("recorded")
    r.add_argument("--deadline", type=float, default=240)
    r.add_argument("--names", nargs="*", default=[],
                   help="model folders whose tensors are listed by name (to find a difference); "
                   "`complete`: every model devlint built whole")
    c = steps.add_parser("compare")
    c.add_argument("plan")
    c.add_argument("recorded")
    args = parser.parse_args()
    return {"plan": plan, "record": record, "compare": compare}[args.step](args)


if __name__ == "__main__":
    sys.exit(main())
