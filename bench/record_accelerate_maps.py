#!/usr/bin/env python3
"""Records the device maps transformers and accelerate really compute for `device_map="auto"`,
the oracle devlint's placement simulation is compared with (issue 25).

For each model class, built from its configuration's defaults, it calls the real
`Cls.from_pretrained(None, config=cfg, state_dict={}, device_map="auto", max_memory=..., dtype=...)`
with transformers' `_get_device_map`, `get_balanced_memory` and `infer_auto_device_map` wrapped
(functools.wraps keeps their signatures, which transformers inspects) to record what they compute,
and stops the load once the map exists: no weights are read or allocated, so no GPU is needed
beyond what `max_memory` names. Where from_pretrained cannot start without a checkpoint, the model
is built on the meta device and `_get_device_map` is called the same way; each run says which.

Usage: python3 bench/record_accelerate_maps.py OUT.json [model_type ...]
Runs: 2, 3 and 4 GPUs with room to spare, a tight 2-GPU budget that spills to the CPU, all in
float32, and 2 GPUs in float16. It fetches nothing: transformers, accelerate and torch must be
installed (transformers 5 needs torch 2: record those on a machine that has them).
"""

import functools
import json
import sys
import time
import traceback

import torch
import transformers
from transformers import AutoConfig

MODELS = [  # (model_type, class name): dense, tied, encoder-decoder, mixture of experts, composite
    ("llama", "LlamaForCausalLM"),
    ("mistral", "MistralForCausalLM"),
    ("qwen2", "Qwen2ForCausalLM"),
    ("phi3", "Phi3ForCausalLM"),
    ("gpt2", "GPT2LMHeadModel"),
    ("gemma", "GemmaForCausalLM"),
    ("opt", "OPTForCausalLM"),
    ("bloom", "BloomForCausalLM"),
    ("t5", "T5ForConditionalGeneration"),
    ("bart", "BartForConditionalGeneration"),
    ("whisper", "WhisperForConditionalGeneration"),
    ("mixtral", "MixtralForCausalLM"),
    ("qwen2_moe", "Qwen2MoeForCausalLM"),
    ("llava", "LlavaForConditionalGeneration"),
    ("qwen2_vl", "Qwen2VLForConditionalGeneration"),
    ("paligemma", "PaliGemmaForConditionalGeneration"),
    ("blip-2", "Blip2ForConditionalGeneration"),
    ("idefics3", "Idefics3ForConditionalGeneration"),
]

HUGE = 10**15  # bytes: a device that never fills


class MapReady(Exception):
    """Raised by the wrapped _get_device_map to stop from_pretrained once the map exists."""


CURRENT = {}  # the record of the run in progress; the wrappers write into it


def install_recorders():
    """Wraps the functions that compute the map, once, wherever modeling_utils looks them up."""
    record = CURRENT
    import transformers.integrations.accelerate as hf_accelerate
    import transformers.modeling_utils as modeling_utils

    original_get_device_map = hf_accelerate._get_device_map
    original_balanced = hf_accelerate.get_balanced_memory
    original_infer = hf_accelerate.infer_auto_device_map

    @functools.wraps(original_balanced)
    def balanced(*args, **kwargs):
        result = original_balanced(*args, **kwargs)
        record["balanced_memory"] = {str(k): int(v) for k, v in result.items()}
        return result

    @functools.wraps(original_infer)
    def infer(*args, **kwargs):
        result = original_infer(*args, **kwargs)
        record["inferred_map"] = {k: str(v) for k, v in result.items()}
        return result

    @functools.wraps(original_get_device_map)
    def get_device_map(*args, **kwargs):
        result = original_get_device_map(*args, **kwargs)
        record["device_map"] = {k: str(v) for k, v in result.items()}
        if record.get("stop", True):
            raise MapReady()
        return result

    hf_accelerate.get_balanced_memory = balanced
    hf_accelerate.infer_auto_device_map = infer
    hf_accelerate._get_device_map = get_device_map
    if hasattr(modeling_utils, "_get_device_map"):
        modeling_utils._get_device_map = get_device_map
    return original_get_device_map


def model_facts(model):
    from transformers.integrations.accelerate import compute_module_sizes

    sizes = compute_module_sizes(model)
    sizes = sizes[0] if isinstance(sizes, tuple) else sizes
    facts = {
        "total_bytes": int(sizes[""]),
        "parameters": sum(p.numel() for p in model.parameters()),
        "no_split_modules": sorted(model._no_split_modules or [])
        if getattr(model, "_no_split_modules", None) is not None
        else None,
        "keep_in_fp32_modules": sorted(getattr(model, "_keep_in_fp32_modules", None) or []),
        "parameter_names": [n for n, _ in model.named_parameters()],
        "top_level": [n for n, _ in model.named_children()],
    }
    tied = getattr(model, "all_tied_weights_keys", None)
    if tied is None:
        tied = getattr(model, "_tied_weights_keys", None)
    if isinstance(tied, dict):
        facts["tied_weights"] = {str(k): str(v) for k, v in tied.items()}
    elif tied:
        facts["tied_weights"] = [str(k) for k in tied]
    return facts


def build_on_meta(cls, config, dtype):
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device("meta"):
            return cls._from_config(config) if hasattr(cls, "_from_config") else cls(config)
    finally:
        torch.set_default_dtype(previous)


def one_run(cls, config, dtype, max_memory, original_get_device_map):
    record = CURRENT
    record.clear()
    record.update({"max_memory": {str(k): int(v) for k, v in max_memory.items()},
                   "dtype": str(dtype)})
    start = time.time()
    try:
        try:
            cls.from_pretrained(
                None, config=config, state_dict={}, device_map="auto", max_memory=max_memory,
                dtype=dtype,
            )
        except TypeError:
            cls.from_pretrained(
                None, config=config, state_dict={}, device_map="auto", max_memory=max_memory,
                torch_dtype=dtype,
            )
        record["method"] = "from_pretrained (returned without reaching the map)"
    except MapReady:
        record["method"] = "from_pretrained"
    except Exception as error:  # the load stopped before the map: compute it directly
        record["from_pretrained_error"] = f"{type(error).__name__}: {error}"[:500]
        record.pop("device_map", None)
        try:
            model = build_on_meta(cls, config, dtype)
            record["stop"] = False
            record["device_map"] = {
                k: str(v)
                for k, v in original_get_device_map(model, "auto", max_memory, None).items()
            }
            record["method"] = "meta model + _get_device_map"
        except Exception as direct_error:
            record["error"] = f"{type(direct_error).__name__}: {direct_error}"[:500]
            record["traceback"] = traceback.format_exc()[-1500:]
    record.pop("stop", None)
    record["seconds"] = round(time.time() - start, 2)
    return dict(record)


def main():
    out_path = sys.argv[1]
    wanted = set(sys.argv[2:])
    result = {
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "models": {},
    }
    try:
        import accelerate

        result["accelerate"] = accelerate.__version__
    except ImportError:
        result["accelerate"] = None
    original_get_device_map = install_recorders()
    for model_type, class_name in MODELS:
        if wanted and model_type not in wanted:
            continue
        entry = result["models"].setdefault(class_name, {"model_type": model_type, "runs": []})
        try:
            cls = getattr(transformers, class_name)
            config = AutoConfig.for_model(model_type)
            facts32 = model_facts(build_on_meta(cls, config, torch.float32))
            entry.update(facts32)
            total = facts32["total_bytes"]
            plans = [(f"{n}_gpus", torch.float32, {**{i: HUGE for i in range(n)}, "cpu": HUGE})
                     for n in (2, 3, 4)]
            plans.append(("tight_2_gpus_cpu", torch.float32, {0: total // 3, 1: total // 3,
                                                              "cpu": HUGE}))
            plans.append(("fp16_2_gpus", torch.float16, {0: HUGE, 1: HUGE, "cpu": HUGE}))
            for name, dtype, max_memory in plans:
                run = one_run(cls, config, dtype, max_memory, original_get_device_map)
                run["name"] = name
                entry["runs"].append(run)
                print(class_name, name, run.get("method"), run.get("error", ""), flush=True)
        except Exception as error:
            entry["error"] = f"{type(error).__name__}: {error}"[:500]
            print(class_name, "ERROR", entry["error"], flush=True)
        with open(out_path, "w") as out:  # after every model: a run cut short keeps what it had
            json.dump(result, out, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
