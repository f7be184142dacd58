#!/usr/bin/env python3
"""Compares `devlint devmap` with accelerate's recorded maps per parameter (issue 25).

Every fixtures/oracle/<model>/oracle.json was written by bench/record_fixture_maps.py: the maps
transformers 4.48's `from_pretrained(device_map="auto")` computed with accelerate 1.14 for the
package beside it. For each recorded run this calls

    devlint devmap DIR --isolated --search-path fixtures/oracle/site --gpus N
        --max-memory <the run's max_memory> --dtype <the run's dtype> --output-format json

(the site folder holds only a transformers 4.48 dist-info, so devlint places as that release
does) and gives every recorded parameter and persistent buffer, under each of its names, the
device of the longest map key that is the name or one of its ancestors, in both maps. A run
agrees when every name does.

A run listed in KNOWN (lines `<model dir> <run name> <reason>`) is expected to differ: it fails
the test if it agrees now (the list must shrink when devlint learns the rule). Any other
difference fails. Exit status 0 when all agree as expected, 1 otherwise, 2 on bad usage.
Needs only the standard library.
usage: devmap_oracle.py DEVLINT ORACLE_DIR KNOWN [--verbose]
"""

import json
import os
import subprocess
import sys

DTYPES = {"torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16"}


def device_of(device_map, name):
    """The device of the longest key of `device_map` that is `name` or one of its ancestors."""
    best = None
    for key in device_map:
        if key == "" or name == key or name.startswith(key + "."):
            if best is None or len(key) > len(best):
                best = key
    return None if best is None else str(device_map[best])


def devlint_map(devlint, directory, site, entry, run):
    max_memory = run["max_memory"]
    gpus = sorted((k for k in max_memory if k.isdigit()), key=int)
    spec = ",".join(f"{k}={max_memory[k]}" for k in gpus + [k for k in ("cpu", "disk") if k in max_memory])
    command = [devlint, "devmap", directory, "--isolated", "--search-path", site,
               "--model-class", entry["model_class"], "--gpus", str(len(gpus)),
               "--max-memory", spec, "--dtype", DTYPES[run["dtype"]], "--output-format", "json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "DEVLINT_PYTHON": "false", "NO_COLOR": "1"})
    try:
        return json.loads(done.stdout), None
    except ValueError:
        return None, f"devlint exit {done.returncode}: {(done.stderr or done.stdout).strip()[:400]}"


def read_known(path):
    known = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                model, run, reason = line.split(None, 2)
                known[(model, run)] = reason
    return known


def main():
    if len(sys.argv) < 4:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    devlint, oracle_dir, known_path = sys.argv[1:4]
    verbose = "--verbose" in sys.argv[4:]
    site = os.path.join(oracle_dir, "site")
    known = read_known(known_path)
    seen_known = set()
    failures = runs = agreeing = names_total = names_agreeing = 0
    for model in sorted(os.listdir(oracle_dir)):
        path = os.path.join(oracle_dir, model, "oracle.json")
        if not os.path.isfile(path):
            continue
        with open(path) as f:
            entry = json.load(f)
        names = entry["parameter_names"] + entry["buffer_names"]
        if not names or not entry["runs"]:
            print(f"FAIL: {model}: the recording holds no names or runs")
            failures += 1
            continue
        for run in entry["runs"]:
            runs += 1
            key = (model, run["name"])
            if "device_map" not in run:
                print(f"FAIL: {model} {run['name']}: accelerate recorded no map ({run.get('error')})")
                failures += 1
                continue
            ours_map, error = devlint_map(devlint, os.path.join(oracle_dir, model), site, entry, run)
            if ours_map is None:
                differing = names
                detail = error
            else:
                differing = [n for n in names
                             if device_of(ours_map, n) != device_of(run["device_map"], n)]
                detail = ", ".join(f"{n} devlint {device_of(ours_map, n)} accelerate "
                                   f"{device_of(run['device_map'], n)}" for n in differing[:3])
            names_total += len(names)
            names_agreeing += len(names) - len(differing)
            if key in known:
                seen_known.add(key)
                if differing:
                    print(f"known difference: {model} {run['name']}: {len(differing)}/{len(names)} "
                          f"names differ ({known[key]})")
                else:
                    print(f"FAIL: {model} {run['name']} agrees now: drop it from {known_path}")
                    failures += 1
                continue
            if differing:
                print(f"FAIL: {model} {run['name']}: {len(differing)}/{len(names)} names differ: "
                      f"{detail}")
                if verbose and ours_map is not None:
                    print("   devlint:   ", json.dumps(ours_map, sort_keys=True))
                    print("   accelerate:", json.dumps(run["device_map"], sort_keys=True))
                failures += 1
            else:
                agreeing += 1
    for key in sorted(set(known) - seen_known):
        print(f"FAIL: {known_path} lists {key[0]} {key[1]}, which is not recorded")
        failures += 1
    print(f"runs agreeing on every name: {agreeing}/{runs}; names agreeing: "
          f"{names_agreeing}/{names_total}")
    if runs == 0:
        print("FAIL: no oracle.json found")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
