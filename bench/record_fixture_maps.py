#!/usr/bin/env python3
"""Records accelerate's device maps for the self-written model packages of fixtures/oracle (issue
25): the oracle tests/devmap_oracle.sh compares devlint's simulation with, per parameter, in CI.

For each package DIR (config.json naming its classes in `auto_map` and `architectures`, as a
trust_remote_code checkpoint does) it imports DIR's configuration and modeling modules as the
package they are, builds the configuration from config.json and calls the real

    Cls.from_pretrained(None, config=cfg, state_dict={}, device_map="auto",
                        torch_dtype=..., max_memory=...)

with transformers 4's `get_balanced_memory` and `infer_auto_device_map` (imported by
modeling_utils from accelerate) wrapped, functools.wraps keeping the signatures transformers
inspects (without them it drops `special_dtypes`, the `_keep_in_fp32_modules` sizes). The wrapped
`infer_auto_device_map` records the map and stops the load: no weight is read or allocated and no
GPU is needed (accelerate only warns that the ids in `max_memory` are not there). The map is final
for a string device_map in transformers 4.48: from_pretrained dispatches it unchanged.

Runs: 2, 3 and 4 GPUs with room to spare and a tight 2-GPU budget of a third of the model each that
spills to the CPU, in float32; 2 GPUs in float16. Writes DIR/oracle.json.

Usage: python3 bench/record_fixture_maps.py DIR...
Needs torch, transformers 4.x, accelerate and huggingface_hub importable; it fetches nothing.
How the checked-in recording was made (Debian 12, torch 1.13 from python3-torch, the libraries'
sources of the versions oracle.json names on PYTHONPATH with bench/oracle/shim, which stands in
for safetensors and tokenizers) is in bench/oracle/README.md.
"""

import functools
import importlib
import json
import os
import platform
import sys
import time
import traceback

import torch
from torch import nn


def give_torch_1_the_remove_duplicate_argument():
    """transformers 4.48 calls named_parameters/named_buffers(remove_duplicate=False) (torch 2.0)."""
    try:
        nn.Module().named_parameters(remove_duplicate=False)
        return
    except TypeError:
        pass

    def members(kind):
        def named(self, prefix="", recurse=True, remove_duplicate=True):
            seen = set()
            modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
                if recurse else [(prefix, self)]
            for module_prefix, module in modules:
                for name, value in getattr(module, kind).items():
                    if value is None or (remove_duplicate and id(value) in seen):
                        continue
                    seen.add(id(value))
                    yield (module_prefix + "." if module_prefix else "") + name, value
        return named

    nn.Module.named_parameters = members("_parameters")
    nn.Module.named_buffers = members("_buffers")


give_torch_1_the_remove_duplicate_argument()

import transformers  # noqa: E402
import transformers.modeling_utils as modeling_utils  # noqa: E402
from accelerate import init_empty_weights  # noqa: E402
from accelerate.utils import compute_module_sizes  # noqa: E402

HUGE = 10**15  # bytes: a device that never fills


class MapReady(Exception):
    """Raised by the wrapped infer_auto_device_map to stop from_pretrained once the map exists."""


CURRENT = {}


def install_recorders():
    original_balanced = modeling_utils.get_balanced_memory
    original_infer = modeling_utils.infer_auto_device_map

    @functools.wraps(original_balanced)
    def balanced(*args, **kwargs):
        result = original_balanced(*args, **kwargs)
        CURRENT["balanced_memory"] = {str(k): int(v) for k, v in result.items()}
        return result

    @functools.wraps(original_infer)
    def infer(*args, **kwargs):
        result = original_infer(*args, **kwargs)
        CURRENT["device_map"] = {k: str(v) for k, v in result.items()}
        CURRENT["no_split_module_classes"] = sorted(kwargs.get("no_split_module_classes") or [])
        CURRENT["special_dtypes"] = len(kwargs.get("special_dtypes") or {})
        raise MapReady()

    modeling_utils.get_balanced_memory = balanced
    modeling_utils.infer_auto_device_map = infer


def import_package(directory):
    """The configuration class and the model class config.json names, imported as DIR's package."""
    directory = os.path.abspath(directory)
    with open(os.path.join(directory, "config.json")) as f:
        config_json = json.load(f)
    parent, package = os.path.split(directory)
    if parent not in sys.path:
        sys.path.insert(0, parent)
    config_module, config_name = config_json["auto_map"]["AutoConfig"].rsplit(".", 1)
    config_class = getattr(importlib.import_module(f"{package}.{config_module}"), config_name)
    class_name = config_json["architectures"][0]
    model_class = None
    for value in config_json["auto_map"].values():
        module, name = value.rsplit(".", 1)
        if name == class_name:
            model_class = getattr(importlib.import_module(f"{package}.{module}"), name)
    if model_class is None:
        raise ValueError(f"{directory}: auto_map names no class {class_name}")
    return config_class, model_class, config_json


def model_facts(model_class, config):
    with init_empty_weights():
        model = model_class(config)
    sizes = compute_module_sizes(model)
    tied = getattr(model, "_tied_weights_keys", None)
    return {
        "model_class": model_class.__name__,
        "total_bytes": int(sizes[""]),
        "parameters": sum(p.numel() for p in model.parameters()),
        "no_split_modules": None if model._no_split_modules is None
        else sorted(model._no_split_modules),
        "keep_in_fp32_modules": sorted(model._keep_in_fp32_modules or []),
        "tied_weights_keys": sorted(tied) if tied else [],
        # Every name of every parameter and persistent buffer: a tied or shared tensor under each
        # of its names, so that each name's device is compared.
        "parameter_names": [n for n, _ in model.named_parameters(remove_duplicate=False)],
        "buffer_names": [n for n, _ in model.named_buffers(remove_duplicate=False)
                         if n.rsplit(".", 1)[-1] not in _non_persistent(model, n)],
        "top_level": [n for n, _ in model.named_children()],
    }


def _non_persistent(model, name):
    owner = model.get_submodule(name.rsplit(".", 1)[0]) if "." in name else model
    return owner._non_persistent_buffers_set


def one_run(model_class, config, name, dtype, max_memory):
    CURRENT.clear()
    run = {"name": name, "dtype": str(dtype),
           "max_memory": {str(k): int(v) for k, v in max_memory.items()}}
    start = time.time()
    try:
        model_class.from_pretrained(None, config=config, state_dict={}, device_map="auto",
                                    torch_dtype=dtype, max_memory=max_memory)
        run["error"] = "from_pretrained returned without reaching infer_auto_device_map"
    except MapReady:
        pass
    except Exception as error:
        run["error"] = f"{type(error).__name__}: {error}"[:500]
        run["traceback"] = traceback.format_exc()[-1500:]
    run.update(CURRENT)
    run["seconds"] = round(time.time() - start, 2)
    return run


def versions():
    import accelerate
    import huggingface_hub

    return {"transformers": transformers.__version__, "accelerate": accelerate.__version__,
            "huggingface_hub": huggingface_hub.__version__, "torch": torch.__version__,
            "python": platform.python_version()}


def record(directory, recorded_with):
    config_class, model_class, _ = import_package(directory)
    config = config_class.from_json_file(os.path.join(directory, "config.json"))
    facts = model_facts(model_class, config)
    total = facts["total_bytes"]
    plans = [(f"{n}_gpus", torch.float32, {**{i: HUGE for i in range(n)}, "cpu": HUGE})
             for n in (2, 3, 4)]
    plans.append(("tight_2_gpus_cpu", torch.float32, {0: total // 3, 1: total // 3, "cpu": HUGE}))
    plans.append(("fp16_2_gpus", torch.float16, {0: HUGE, 1: HUGE, "cpu": HUGE}))
    runs = []
    for name, dtype, max_memory in plans:
        config = config_class.from_json_file(os.path.join(directory, "config.json"))
        run = one_run(model_class, config, name, dtype, max_memory)
        runs.append(run)
        print(os.path.basename(directory), model_class.__name__, name,
              run.get("error") or f"{len(set(run['device_map'].values()))} devices", flush=True)
    return {"recorded_with": recorded_with, **facts, "runs": runs}


def main():
    directories = sys.argv[1:]
    if not directories:
        print(__doc__)
        return 2
    install_recorders()
    recorded_with = versions()
    failed = 0
    for directory in directories:
        directory = directory.rstrip("/")
        result = record(directory, recorded_with)
        failed += any("error" in run for run in result["runs"])
        with open(os.path.join(directory, "oracle.json"), "w") as out:
            json.dump(result, out, indent=1, sort_keys=True)
            out.write("\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
