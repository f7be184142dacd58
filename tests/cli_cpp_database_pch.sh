#!/usr/bin/env bash
# C++ files with a compile_commands.json (issue 28): a precompiled LibTorch header per set of the
# database's allowed flags, built with them and shared by the files that use them (two sets: two
# PCHs for three files); the files of one directory analysed in parallel under -j 2 give the same
# report as -j 1 (a header two files include is reported by the first, in path order).
set -u
devlint="$1"
source "$(dirname "$0")/cli_lib.sh"
export DEVLINT_PCH_DIR="$tmp/pch"
api=/usr/include/torch/csrc/api/include

mkdir -p "$tmp/proj/.git" "$tmp/proj/src" "$tmp/proj/build"
cat >"$tmp/proj/src/gated_mlp.h" <<'HEADER'
#pragma once
#include <torch/torch.h>

struct GatedMlpImpl : torch::nn::Module {
  explicit GatedMlpImpl(int64_t width) {
    up = register_module("up", torch::nn::Linear(width, width));
  }
  torch::Tensor forward(torch::Tensor x) { return up(x) * torch::rand({x.size(0), 1}); }
  torch::nn::Linear up{nullptr};
};
TORCH_MODULE(GatedMlp);
HEADER
for name in serve train; do
  cat >"$tmp/proj/src/$name.cpp" <<'SOURCE'
#include "gated_mlp.h"

torch::Tensor run_model() {
  GatedMlp mlp(8);
  mlp->to(torch::kCUDA);
  return mlp(torch::ones({1, 8}));
}
SOURCE
done
cp "$2/fixtures/cpp/losses.cpp" "$tmp/proj/src/losses.cpp"
entry() { # FILE DEFINE
  printf '{"directory": "%s", "file": "../src/%s", "arguments": ["c++", "-std=c++17", "-isystem", "%s", "-D%s", "-O2", "-c", "../src/%s"]}' \
    "$tmp/proj/build" "$1" "$api" "$2" "$1"
}
printf '[%s,\n%s,\n%s]\n' "$(entry serve.cpp SHARED)" "$(entry train.cpp SHARED)" \
  "$(entry losses.cpp OTHER)" >"$tmp/proj/build/compile_commands.json"

run 1 "three files with a database, -j 2" -- "$devlint" check --no-cache -j 2 "$tmp/proj/src"
cp "$tmp/out" "$tmp/parallel.out"
lacks err "precompiled LibTorch header:"
lacks err "cannot build the precompiled"
pchs=$(find "$tmp/pch" -name 'torch-*.pch' | wc -l)
[ "$pchs" = 2 ] || { echo "FAIL: expected a PCH per set of flags (2), found $pchs"; ls -l "$tmp/pch"; fail=1; }
[ "$(grep -c 'gated_mlp.h:.*DL005' "$tmp/out")" = 1 ] ||
  { echo "FAIL: the header's finding, once"; cat "$tmp/out"; fail=1; }
expect out 'serve.cpp:6:.*DL008'
expect out 'train.cpp:6:.*DL008'
expect out 'losses.cpp:.*DL00'

run 1 "the same three files, -j 1" -- "$devlint" check --no-cache -j 1 "$tmp/proj/src"
cmp -s "$tmp/out" "$tmp/parallel.out" ||
  { echo "FAIL: -j 1 and -j 2 differ"; diff "$tmp/parallel.out" "$tmp/out"; fail=1; }
# Warm: the PCHs are reused, none is built again.
run 1 "a second run reuses the PCHs" -- "$devlint" check --no-cache -j 2 "$tmp/proj/src"
lacks err "building the precompiled"
[ "$(find "$tmp/pch" -name 'torch-*.pch' | wc -l)" = 2 ] || { echo "FAIL: a PCH was added"; fail=1; }
exit $fail
