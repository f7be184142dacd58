#!/usr/bin/env python3
"""Generates analyzer/model/transformers_summary.cpp: what transformers' own model classes declare.

User packages subclass transformers models (`class LlavaLlamaForCausalLM(LlamaForCausalLM, ...)`)
and inherit `_no_split_modules` and `_skip_keys_device_placement` from classes devlint cannot see
when transformers is not installed (Debian packages none). This script reads a transformers source
tree (parsing only, nothing is imported) and writes, for every `PreTrainedModel` subclass, the
values it ends up with through its bases, so devlint can use them as a last resort.

  tools/gen_transformers_summary.py SRC_TREE [--version 4.47.1] [-o analyzer/model/transformers_summary.cpp]

SRC_TREE is the directory holding `transformers/` (a checkout's `src/`). The version defaults to
`__version__` in the tree's `__init__.py`.
"""
import argparse
import ast
import os
import re
import shutil
import subprocess
import sys


def literal_names(node):
    """A list/tuple of strings, a single string, or None (unset / not a literal)."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return [node.value]
        return None if node.value is None else []
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        names = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return names if len(names) == len(node.elts) else None
    return None


def base_name(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return base_name(node.value)
    return None


def read_classes(root):
    """name -> (bases, {attribute: value or None}); the first definition of a name wins."""
    classes = {}
    models = os.path.join(root, "transformers", "models")
    paths = [os.path.join(root, "transformers", "modeling_utils.py")]
    for dirpath, _, names in os.walk(models):
        for n in sorted(names):
            if n.startswith("modeling_") and n.endswith(".py") and not (
                    n.startswith("modeling_tf_") or n.startswith("modeling_flax_")):
                paths.append(os.path.join(dirpath, n))
    for path in sorted(paths):
        with open(path, encoding="utf-8") as f:
            try:
                tree = ast.parse(f.read())
            except SyntaxError as e:
                print(f"skipping {path}: {e}", file=sys.stderr)
                continue
        for node in tree.body:
            if not isinstance(node, ast.ClassDef) or node.name in classes:
                continue
            attrs = {}
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
                        stmt.targets[0], ast.Name):
                    name = stmt.targets[0].id
                    if name in ("_no_split_modules", "_skip_keys_device_placement"):
                        attrs[name] = literal_names(stmt.value)
            bases = [b for b in (base_name(b) for b in node.bases) if b]
            classes[node.name] = (bases, attrs)
    return classes


def allocates_on_device(node):
    """`torch.zeros(..., device=device)` and the like: storage for state, not a literal table."""
    return (isinstance(node, ast.Call) and any(k.arg == "device" for k in node.keywords)
            and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "torch"
            and node.func.attr in ("zeros", "ones", "empty", "full", "zeros_like", "empty_like"))


def read_held_state(root):
    """class -> attributes its __init__ sets, outside any loop, to one tensor allocated on the
    device it is given: a cache object built once and read by every layer, wherever each runs
    (MambaCache's `ssm_states`). Per-layer allocations in a loop (StaticCache with its
    `layer_device_map`) are not one device and are left out."""
    path = os.path.join(root, "transformers", "cache_utils.py")
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    held = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for fn in node.body:
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "__init__"):
                continue
            for stmt in fn.body:  # top level of __init__ only: no loops
                target = value = None
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                    target, value = stmt.targets[0], stmt.value
                elif isinstance(stmt, ast.AnnAssign):
                    target, value = stmt.target, stmt.value
                if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id == "self" and allocates_on_device(value)):
                    held.setdefault(node.name, ([], []))[0].append(target.attr)
        if node.name not in held:
            continue
        # Methods that hand that state back (`return self.conv_states[layer_idx]`).
        attributes = held[node.name][0]
        for fn in node.body:
            if not isinstance(fn, ast.FunctionDef) or fn.name == "__init__":
                continue
            returns = [r.value for r in ast.walk(fn) if isinstance(r, ast.Return)]
            if returns and all(reads_attribute(v, attributes) for v in returns):
                held[node.name][1].append(fn.name)
    return held


def reads_attribute(node, attributes):
    """`self.x` or `self.x[...]` for one of the attributes."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == "self" and node.attr in attributes)


def resolve(classes, name, attribute, seen=()):
    """The attribute as Python's MRO finds it (depth-first is enough for these single chains)."""
    if name not in classes or name in seen:
        return None, False
    bases, attrs = classes[name]
    if attribute in attrs:
        return attrs[attribute], True
    for b in bases:
        value, found = resolve(classes, b, attribute, seen + (name,))
        if found:
            return value, True
    return None, False


def is_pretrained(classes, name, seen=()):
    if name == "PreTrainedModel":
        return True
    if name not in classes or name in seen:
        return False
    return any(is_pretrained(classes, b, seen + (name,)) for b in classes[name][0])


def cpp_list(names):
    """Comma-separated in one literal: a constant table, no start-up work."""
    return '"' + ",".join(names) + '"'


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src_tree")
    parser.add_argument("--version")
    parser.add_argument("-o", "--output", default="analyzer/model/transformers_summary.cpp")
    args = parser.parse_args()
    init = os.path.join(args.src_tree, "transformers", "__init__.py")
    if not os.path.isfile(init):
        sys.exit(f"gen_transformers_summary: no transformers/__init__.py under {args.src_tree}")
    m = re.search(r'^__version__ = "([^"]+)"', open(init, encoding="utf-8").read(), re.M)
    tree_version = m.group(1) if m else "unknown"
    version = args.version or tree_version
    origin = version if version == tree_version else f"{version} (the tree's __version__: {tree_version})"
    classes = read_classes(args.src_tree)
    held_state = read_held_state(args.src_tree)
    rows = []
    for name in sorted(classes):
        if name == "PreTrainedModel" or not is_pretrained(classes, name):
            continue
        no_split, _ = resolve(classes, name, "_no_split_modules")
        skip, _ = resolve(classes, name, "_skip_keys_device_placement")
        rows.append((name, no_split, skip or []))
    with open(args.output, "w", encoding="utf-8") as out:
        out.write(f"""// GENERATED by tools/gen_transformers_summary.py: do not edit.
// Source: transformers {origin}.
// Every PreTrainedModel subclass of that release with the `_no_split_modules` and
// `_skip_keys_device_placement` it ends up with through its bases, and the cache classes
// holding one tensor allocated on one device for every layer.
#include "model/transformers_summary.h"

#include <algorithm>
#include <iterator>

namespace devlint {{
namespace {{

const TransformersModelFacts kModels[] = {{
""")
        for name, no_split, skip in rows:
            declares = "true" if no_split is not None else "false"
            out.write(f'    {{"{name}", {declares}, {cpp_list(no_split or [])}, {cpp_list(skip)}}},\n')
        out.write("""};

const TransformersHeldState kHeldState[] = {
""")
        for name in sorted(held_state):
            attributes, methods = held_state[name]
            out.write(f'    {{"{name}", {cpp_list(attributes)}, {cpp_list(methods)}}},\n')
        out.write(f"""}};

}} // namespace

const char *const kTransformersSummaryVersion = "{version}";

const TransformersHeldState *find_transformers_held_state(std::string_view class_name) {{
  for (const TransformersHeldState &h : kHeldState)
    if (h.class_name == class_name)
      return &h;
  return nullptr;
}}

const TransformersModelFacts *find_transformers_model(std::string_view class_name) {{
  auto it = std::lower_bound(std::begin(kModels), std::end(kModels), class_name,
                             [](const TransformersModelFacts &m, std::string_view n) {{
                               return std::string_view(m.class_name) < n;
                             }});
  return it != std::end(kModels) && it->class_name == class_name ? &*it : nullptr;
}}

}} // namespace devlint
""")
    # The repository's style: format the generated file when clang-format is at hand.
    if shutil.which("clang-format"):
        subprocess.run(["clang-format", "-i", args.output], check=False)
    print(f"{len(rows)} PreTrainedModel classes, {len(held_state)} state-holding caches from "
          f"transformers {version} -> {args.output}")


if __name__ == "__main__":
    main()
