#!/usr/bin/env bash
# The result cache for C++ translation units (README "Adopting devlint"): a warm re-check answers
# from the cache (a marked entry shows through), a changed compile flag in compile_commands.json
# or a changed project header re-analyzes, and corrupt entries fall back to analysis. LibTorch is
# the stand-in of fuzz/cpp_stub, so each analysis takes milliseconds.
set -u
devlint="$1"
stub="$2/fuzz/cpp_stub"
source "$(dirname "$0")/cli_lib.sh"

mkdir -p "$tmp/proj/src" "$tmp/proj/include" "$tmp/proj/build"
cd "$tmp/proj" || exit 1
cat >include/scaled_head.h <<'EOF2'
#pragma once
#include <torch/torch.h>

struct ScaledHeadImpl : torch::nn::Module {
  ScaledHeadImpl() { proj = register_module("proj", torch::nn::Linear(8, 8)); }
  torch::Tensor forward(torch::Tensor x) {
    auto scale = torch::ones({1, 8});
    return proj(x) * scale;
  }
  torch::nn::Linear proj{nullptr};
};
TORCH_MODULE(ScaledHead);
EOF2
cat >src/serve.cpp <<'EOF2'
#include <torch/torch.h>
#include "scaled_head.h"

torch::Tensor serve(torch::Tensor x) {
  ScaledHead head;
  head->to(torch::kCUDA);
#ifdef FEED_HOST_TENSOR
  return head(torch::ones({1, 8}));
#else
  return head(x.to(torch::kCUDA));
#endif
}
EOF2
database() { # the compile command, with extra flags
  cat >build/compile_commands.json <<EOF2
[{"directory": "$tmp/proj/build", "file": "$tmp/proj/src/serve.cpp",
  "arguments": ["clang++", "-std=c++17", "-isystem", "$stub/include/torch/csrc/api/include",
                "-isystem", "$stub/include", "-I$tmp/proj/include" $1, "-c", "$tmp/proj/src/serve.cpp"]}]
EOF2
}
database ""
check=("$devlint" check --libtorch "$stub" -p build --output-format concise)
mark() { for e in $(find "$XDG_CACHE_HOME/devlint" -name '*.json'); do sed -i 's/may be on/MARKED may be on/g' "$e"; done; }

run 1 "uncached" -- "${check[@]}" --no-cache src/serve.cpp
cp "$tmp/out" "$tmp/uncached"
grep -q 'scaled_head.h:8:.*DL005' "$tmp/out" || { echo "FAIL: no finding in the header"; cat "$tmp/out"; fail=1; }
grep -q 'serve.cpp' "$tmp/out" && { echo "FAIL: FEED_HOST_TENSOR is not defined"; fail=1; }
[ ! -e "$XDG_CACHE_HOME/devlint" ] || { echo "FAIL: --no-cache wrote a cache"; fail=1; }

run 1 "cold" -- "${check[@]}" src/serve.cpp
cmp -s "$tmp/out" "$tmp/uncached" || { echo "FAIL: cold run differs"; diff "$tmp/out" "$tmp/uncached"; fail=1; }
[ "$(find "$XDG_CACHE_HOME/devlint" -name '*.json' | wc -l)" -ge 1 ] || { echo "FAIL: no C++ cache entry"; fail=1; }
mark
run 1 "warm: from the cache" -- "${check[@]}" src/serve.cpp
grep -q 'MARKED' "$tmp/out" || { echo "FAIL: the warm run did not use the cache"; cat "$tmp/out"; fail=1; }

database ', "-DFEED_HOST_TENSOR"'
run 1 "a changed compile flag re-analyzes" -- "${check[@]}" src/serve.cpp
grep -q 'MARKED' "$tmp/out" && { echo "FAIL: stale entry used after a flag change"; fail=1; }
grep -q 'serve.cpp:8:.*DL008' "$tmp/out" || { echo "FAIL: the flag's code not analyzed"; cat "$tmp/out"; fail=1; }

mark
sed -i 's|^#pragma once|#pragma once\n// The head of the serving model.|' include/scaled_head.h
run 1 "a changed project header re-analyzes" -- "${check[@]}" src/serve.cpp
grep -q 'MARKED' "$tmp/out" && { echo "FAIL: stale entry used after a header change"; fail=1; }
grep -q 'scaled_head.h:9:.*DL005' "$tmp/out" || { echo "FAIL: header not re-read"; cat "$tmp/out"; fail=1; }
cp "$tmp/out" "$tmp/current"

for e in $(find "$XDG_CACHE_HOME/devlint" -name '*.json'); do head -c 40 "$e" >"$e.cut" && mv "$e.cut" "$e"; done
run 1 "truncated entries fall back to analysis" -- "${check[@]}" src/serve.cpp
cmp -s "$tmp/out" "$tmp/current" || { echo "FAIL: truncated entry changed the result"; fail=1; }
for e in $(find "$XDG_CACHE_HOME/devlint" -name '*.json'); do
  python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); e["headers"]=[{"path":1}]; json.dump(e,open(sys.argv[1],"w"))' "$e" 2>/dev/null
done
run 1 "malformed entries fall back to analysis" -- "${check[@]}" src/serve.cpp
cmp -s "$tmp/out" "$tmp/current" || { echo "FAIL: malformed entry changed the result"; fail=1; }
exit $fail
