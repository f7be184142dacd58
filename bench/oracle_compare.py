#!/usr/bin/env python3
"""Compares devlint's simulated device maps with accelerate's recorded ones (issue 25).

Usage: python3 bench/oracle_compare.py TREE ORACLE.json [--devlint BIN] [--model CLASS ...]

TREE is a transformers source tree (its `models/<model_type>/` packages), ORACLE.json a file
written by bench/record_accelerate_maps.py. For every model and run it calls

    devlint devmap TREE/models/<model_type> --model-class CLASS --gpus N
        --max-memory <the run's max_memory> --dtype <the run's dtype> --output-format json --isolated

and gives each recorded parameter the device of the longest map key that prefixes it, in both
maps. It prints per run the parameters that agree out of all, the first differing modules with
both devices, and per model the bytes devlint counts against accelerate's `total_bytes`. Exit
status 1 when any run differs, 2 on bad usage. It imports nothing of torch or transformers.
"""

import argparse
import json
import os
import re
import subprocess
import sys

DTYPES = {"torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16"}


def device_of(device_map, name):
    """The device of the longest key of `device_map` that is `name` or one of its ancestors."""
    best = None
    for key, device in device_map.items():
        if key == "" or name == key or name.startswith(key + "."):
            if best is None or len(key) > len(best):
                best = key
    return None if best is None else str(device_map[best])


def max_memory_spec(max_memory):
    gpus = sorted((k for k in max_memory if k.isdigit()), key=int)
    others = [k for k in ("cpu", "disk") if k in max_memory]
    return ",".join(f"{k}={int(max_memory[k])}" for k in gpus + others), len(gpus)


def run_devlint(binary, model_dir, class_name, run, output_format, extra=()):
    spec, gpus = max_memory_spec(run["max_memory"])
    command = [binary, "devmap", model_dir, "--model-class", class_name, "--gpus", str(gpus),
               "--max-memory", spec, "--dtype", DTYPES.get(run["dtype"], run["dtype"]),
               "--output-format", output_format, "--isolated", *extra]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "DEVLINT_PYTHON": "false", "NO_COLOR": "1"})
    return done, command


def parse_bytes(text):
    """'474.70 MiB' -> bytes (as devlint's format_bytes rounds them)."""
    match = re.match(r"([0-9.]+) (B|KiB|MiB|GiB|TiB)", text)
    if not match:
        return None
    units = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
    return float(match.group(1)) * units[match.group(2)]


def format_bytes(value):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} B" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024


def first_differences(names, ours, theirs, limit=3):
    """The first differing parameters, grouped by the module (of both maps' keys) holding them."""
    out = []
    for name in names:
        if ours[name] != theirs[name]:
            module = name.rsplit(".", 1)[0]
            if not out or out[-1][0] != module:
                out.append((module, ours[name], theirs[name]))
            if len(out) == limit:
                break
    return out


def compare_model(binary, tree, class_name, entry, args):
    model_dir = os.path.join(tree, "models", entry["model_type"].replace("-", "_"))
    names = entry.get("parameter_names") or []
    results = []
    if entry.get("error") or not names:
        print(f"{class_name}: not recorded ({entry.get('error', 'no parameters')}); skipped")
        return results
    for run in entry["runs"]:
        if "device_map" not in run:
            print(f"{class_name} {run['name']}: accelerate recorded no map; skipped")
            continue
        done, command = run_devlint(binary, model_dir, class_name, run, "json")
        theirs_map = run["device_map"]
        try:
            ours_map = json.loads(done.stdout)
        except ValueError:
            ours_map = None
        if done.returncode not in (0, 1) or not isinstance(ours_map, dict):
            print(f"{class_name} {run['name']}: devlint failed (exit {done.returncode}): "
                  f"{(done.stderr or done.stdout).strip()[:300]}")
            results.append((class_name, run["name"], 0, len(names)))
            continue
        ours = {n: device_of(ours_map, n) for n in names}
        theirs = {n: device_of(theirs_map, n) for n in names}
        agree = sum(ours[n] == theirs[n] for n in names)
        line = f"{class_name} {run['name']}: {agree}/{len(names)} parameters agree"
        if agree != len(names):
            diffs = first_differences(names, ours, theirs)
            line += "; first differing: " + ", ".join(
                f"{m} devlint {o} accelerate {t}" for m, o, t in diffs)
        table, _ = run_devlint(binary, model_dir, class_name, run, "table")
        total = re.search(r"^total size: (.*)$", table.stdout, re.M)
        ours_total = total.group(1) if total else "?"
        line += f"; total devlint {ours_total}"
        if run["dtype"] == "torch.float32":
            line += f" accelerate {format_bytes(entry['total_bytes'])}"
        print(line)
        if args.verbose and agree != len(names):
            print("   devlint:   ", json.dumps(ours_map)[:2000])
            print("   accelerate:", json.dumps(theirs_map)[:2000])
        results.append((class_name, run["name"], agree, len(names)))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tree", help="transformers source tree (holding models/)")
    parser.add_argument("oracle", help="JSON written by bench/record_accelerate_maps.py")
    parser.add_argument("--devlint", default="build/devlint", help="devlint binary")
    parser.add_argument("--model", action="append", default=[], help="only this class")
    parser.add_argument("-v", "--verbose", action="store_true", help="print both maps on a diff")
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(args.tree, "models")):
        print(f"{args.tree}: no models/ folder", file=sys.stderr)
        return 2
    try:
        with open(args.oracle) as f:
            oracle = json.load(f)
    except (OSError, ValueError) as error:
        print(f"{args.oracle}: {error}", file=sys.stderr)
        return 2
    print(f"oracle: transformers {oracle.get('transformers')}, accelerate "
          f"{oracle.get('accelerate')}, torch {oracle.get('torch')}")
    results = []
    for class_name, entry in sorted(oracle.get("models", {}).items()):
        if args.model and class_name not in args.model:
            continue
        results.extend(compare_model(args.devlint, args.tree, class_name, entry, args))
    runs_agreeing = sum(agree == total for _, _, agree, total in results)
    parameters = sum(total for *_, total in results)
    agreeing = sum(agree for _, _, agree, _ in results)
    print(f"runs agreeing on every parameter: {runs_agreeing}/{len(results)}; parameters "
          f"agreeing: {agreeing}/{parameters}")
    return 0 if results and runs_agreeing == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
