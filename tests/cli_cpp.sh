#!/usr/bin/env bash
# The C++ (LibTorch) side of the command line, end to end: directory discovery (sources that
# include a torch header), a header's finding reported (and fixed) once through two including
# files, NOLINT suppressions, code that does not compile (one warning, still analyzed), missing
# headers (one clear error, exit 2, other files still checked), compile_commands.json found by
# walking up or given with -p, and a file without an entry there checked with the default flags.
set -u
devlint="$1"
source "$(dirname "$0")/cli_lib.sh"

# A checkout (.git): Clang reads the project headers under it, not outside (issue 23).
mkdir -p "$tmp/proj/include" "$tmp/proj/src" "$tmp/proj/.git"
cat >"$tmp/proj/include/gated_mlp.h" <<'EOF'
#pragma once
#include <torch/torch.h>

struct GatedMlpImpl : torch::nn::Module {
  explicit GatedMlpImpl(int64_t width) {
    up = register_module("up", torch::nn::Linear(width, 4 * width));
    down = register_module("down", torch::nn::Linear(4 * width, width));
  }
  torch::Tensor forward(torch::Tensor x) {
    auto gate = torch::rand({x.size(0), 1});
    auto hidden = down(torch::gelu(up(x)));
    return hidden * gate;
  }
  torch::nn::Linear up{nullptr}, down{nullptr};
};
TORCH_MODULE(GatedMlp);
EOF
cat >"$tmp/proj/src/train.cpp" <<'EOF'
#include <torch/torch.h>
#include "../include/gated_mlp.h"

torch::Tensor step(torch::Tensor x) {
  GatedMlp mlp(8);
  mlp->to(torch::kCUDA);
  auto noise = torch::randn({4, 8});
  auto out = mlp(x.to(torch::kCUDA) + noise.to(torch::kCUDA));
  auto bias = torch::zeros({4, 8});
  auto a = out + bias; // NOLINT(devlint-DL005)
  // NOLINTNEXTLINE(devlint-fresh-tensor-device)
  auto b = out - bias;
  // NOLINTBEGIN(devlint-DL005)
  auto c = out * bias;
  auto d = out / bias;
  // NOLINTEND(devlint-DL005)
  auto e = out + bias;
  return a + b + c + d + e;
}
EOF
cat >"$tmp/proj/src/serve.cpp" <<'EOF'
#include "../include/gated_mlp.h"

torch::Tensor serve() {
  GatedMlp mlp(8);
  mlp->to(torch::kCUDA);
  return mlp(torch::ones({1, 8}));
}
EOF
# Not a LibTorch file: not picked up from a directory.
printf 'int helper() { return 1; }\n' >"$tmp/proj/src/util.cpp"

run 1 "a C++ directory is checked" -- "$devlint" check --output-format concise "$tmp/proj"
out=$(cat "$tmp/out")
count() { grep -c "$1" <<<"$out" || true; }
[ "$(count 'gated_mlp.h:12:.*DL005')" = 1 ] || { echo "FAIL: the header's finding, once: $out"; fail=1; }
[ "$(count 'train.cpp:17:.*DL005')" = 1 ] || { echo "FAIL: the finding after NOLINTEND: $out"; fail=1; }
[ "$(count 'train.cpp:1[0-6]:')" = 0 ] || { echo "FAIL: NOLINT forms did not suppress: $out"; fail=1; }
[ "$(count 'serve.cpp:6:.*DL008')" = 1 ] || { echo "FAIL: the model fed a CPU tensor: $out"; fail=1; }
[ "$(count 'util.cpp')" = 0 ] || { echo "FAIL: a file without torch was checked: $out"; fail=1; }
[ "$(count 'Found 3 errors')" = 1 ] || { echo "FAIL: expected 3 findings: $out"; fail=1; }
# The header's fix is made once, though two files include it.
run 1 "--diff fixes a header once" -- "$devlint" check --diff "$tmp/proj"
[ "$(grep -c '^+++ .*gated_mlp.h' "$tmp/out")" = 1 ] &&
  [ "$(grep -c '^+ *return hidden \* gate.to(hidden.device());' "$tmp/out")" = 1 ] ||
  { echo "FAIL: the header's fix, once"; cat "$tmp/out"; fail=1; }

# Code that does not compile: one warning with the first error, what Clang recovered is checked.
mkdir -p "$tmp/broken"
cat >"$tmp/broken/broken.cpp" <<'EOF'
#include <torch/torch.h>

torch::Tensor broken(torch::Tensor x) {
  auto y = undefined_helper(x);
  torch::Tensor weights = torch::ones({3});
  weights = weights.cuda();
  return weights + torch::zeros({3});
}
EOF
run 1 "code that does not compile is analyzed where Clang recovers" -- \
  "$devlint" check --output-format concise "$tmp/broken/broken.cpp"
grep -q "does not compile (1 error(s), first at broken.cpp:4" "$tmp/err" ||
  { echo "FAIL: no compile warning"; cat "$tmp/err"; fail=1; }
grep -q "broken.cpp:7:.*DL005" "$tmp/out" || { echo "FAIL: nothing analyzed"; cat "$tmp/out"; fail=1; }

# Missing headers: one error saying what to pass, exit 2, the other files still checked.
mkdir -p "$tmp/missing"
printf '#include <torch/torch.h>\n#include "config/torch_settings.h"\nint main() { return 0; }\n' \
  >"$tmp/missing/app.cpp"
run 2 "a missing project header exits 2" -- \
  "$devlint" check --output-format concise "$tmp/missing/app.cpp" "$tmp/proj/src/serve.cpp"
grep -q "app.cpp:2:.*'config/torch_settings.h' file not found; the analysis of this file is partial.*-p BUILD_DIR" "$tmp/err" ||
  { echo "FAIL: unclear missing-header error"; cat "$tmp/err"; fail=1; }
# LibTorch was found: a project header with "torch" in its name does not blame it.
! grep -q "LibTorch's headers were not found" "$tmp/err" ||
  { echo "FAIL: LibTorch blamed for a project header"; cat "$tmp/err"; fail=1; }
grep -q "serve.cpp:6:.*DL008" "$tmp/out" || { echo "FAIL: other files not checked"; fail=1; }
run 2 "LibTorch not found under --libtorch exits 2" -- \
  "$devlint" check --libtorch "$tmp/no-libtorch" "$tmp/proj/src/serve.cpp"
grep -q "torch/torch.h' file not found; LibTorch's headers were not found: pass \`--libtorch DIR\`" \
  "$tmp/err" || { echo "FAIL: unclear LibTorch error"; cat "$tmp/err"; fail=1; }
[ "$(grep -c 'error' "$tmp/err")" = 1 ] || { echo "FAIL: more than one error"; cat "$tmp/err"; fail=1; }

# Clang 14 itself crashes on some malformed C++ (a stack overflow in its parser, found by the
# fuzzer): that file is reported as not analyzed, exit 2, and the other files are still checked.
cp "$(dirname "$0")/../fuzz/regressions/cpp_frontend/clang_parser_recursion.cpp" "$tmp/crasher.cpp"
run 2 "a file Clang crashes on is not analyzed, the others are" -- \
  "$devlint" check --output-format concise "$tmp/crasher.cpp" "$tmp/proj/src/serve.cpp"
grep -q "crasher.cpp.*Clang crashed while parsing this file" "$tmp/err" ||
  { echo "FAIL: no message for the Clang crash"; cat "$tmp/err"; fail=1; }
grep -q "serve.cpp:6:.*DL008" "$tmp/out" || { echo "FAIL: other files not checked"; fail=1; }

# compile_commands.json: found by walking up from the file, or given with -p.
mkdir -p "$tmp/cc/src" "$tmp/cc/include/net" "$tmp/cc/build"
printf '#pragma once\ninline int width() { return 4; }\n' >"$tmp/cc/include/net/config.h"
printf '#include "net/config.h"\nint main() { return width(); }\n' >"$tmp/cc/src/net.cpp"
run 2 "without compile_commands.json the include is missing" -- \
  "$devlint" check "$tmp/cc/src/net.cpp"
# In a checkout, the project's include/ folders are added without a database.
mkdir "$tmp/cc/.git"
run 0 "the checkout's include/ is searched without a database" -- \
  "$devlint" check "$tmp/cc/src/net.cpp"
rmdir "$tmp/cc/.git"
cat >"$tmp/cc/build/compile_commands.json" <<EOF
[{"directory": "$tmp/cc/build", "file": "$tmp/cc/src/net.cpp",
  "arguments": ["c++", "-std=c++17", "-I$tmp/cc/include", "-c", "$tmp/cc/src/net.cpp", "-o", "net.o"]}]
EOF
run 0 "-p BUILD_DIR gives the real flags" -- "$devlint" check -p "$tmp/cc/build" "$tmp/cc/src/net.cpp"
cp "$tmp/cc/build/compile_commands.json" "$tmp/cc/compile_commands.json"
run 0 "compile_commands.json found walking up" -- "$devlint" check "$tmp/cc/src/net.cpp"
# A file the database has no entry for gets the default flags (LibTorch found on the machine).
cat >"$tmp/cc/src/serve.cpp" <<'EOF'
#include <torch/torch.h>

torch::Tensor serve() {
  torch::nn::Linear head(8, 2);
  head->to(torch::kCUDA);
  return head(torch::ones({1, 8}));
}
EOF
run 1 "a file without a compile_commands.json entry falls back to the defaults" -- \
  "$devlint" check --output-format concise "$tmp/cc/src/serve.cpp"
grep -q "serve.cpp:6:.*DL008" "$tmp/out" || { echo "FAIL: no finding with the defaults"; cat "$tmp/out" "$tmp/err"; fail=1; }
[ ! -s "$tmp/err" ] || { echo "FAIL: the fallback is not silent"; cat "$tmp/err"; fail=1; }
run 1 "-p BUILD_DIR without an entry for the file falls back too" -- \
  "$devlint" check --output-format concise -p "$tmp/cc/build" "$tmp/cc/src/serve.cpp"
grep -q "serve.cpp:6:.*DL008" "$tmp/out" || { echo "FAIL: -p without an entry"; cat "$tmp/out" "$tmp/err"; fail=1; }

# A directory's source that uses torch only through a header found in an include/ folder (two
# quoted includes deep) is LibTorch code: it is checked. Outside a checkout, an include/ folder
# above the checked directory is not looked in.
mkdir -p "$tmp/inc/.git" "$tmp/inc/app/include"
printf '#pragma once\n#include "scorer_impl.hpp"\n' >"$tmp/inc/app/include/scorer.hpp"
printf '#pragma once\n#include <torch/torch.h>\n' >"$tmp/inc/app/include/scorer_impl.hpp"
cat >"$tmp/inc/app/main.cpp" <<'EOF'
#include "scorer.hpp"

torch::Tensor score() {
  torch::nn::Linear head(8, 2);
  head->to(torch::kCUDA);
  return head(torch::ones({1, 8}));
}
EOF
run 1 "a source using torch through include/ headers is found in its directory" -- \
  "$devlint" check --output-format concise "$tmp/inc"
grep -q "main.cpp:6:.*DL008" "$tmp/out" || { echo "FAIL: include/ header not followed"; cat "$tmp/out" "$tmp/err"; fail=1; }
mkdir -p "$tmp/inc/app/src" && mv "$tmp/inc/app/main.cpp" "$tmp/inc/app/src/"
run 1 "so is one whose include/ folder is above the checked directory, in the checkout" -- \
  "$devlint" check --output-format concise "$tmp/inc/app/src"
rmdir "$tmp/inc/.git"
run 0 "outside a checkout, an include/ folder above the checked directory is not read" -- \
  "$devlint" check --output-format concise "$tmp/inc/app/src"

# C++ is read as Clang reads it: a file whose comments are GBK (not UTF-8) is checked, and its fix
# keeps those bytes exactly as they were (Python files stay refused; cli_bad_input).
mkdir -p "$tmp/gbk"
{
  printf '#include <torch/torch.h>\n\n'
  printf '// \xc4\xa3\xd0\xcd\xd4\xda GPU \xc9\xcf\n' # "the model is on the GPU", in GBK
  printf 'torch::Tensor classify() {\n'
  printf '  torch::nn::Linear head(8, 2);\n'
  printf '  head->to(torch::kCUDA);\n'
  printf '  return head(torch::ones({1, 8})); // \xca\xe4\xc8\xeb\n'
  printf '}\n'
} >"$tmp/gbk/classify.cpp"
cp "$tmp/gbk/classify.cpp" "$tmp/gbk.orig"
run 1 "a C++ file with GBK comments is checked" -- \
  "$devlint" check --output-format json "$tmp/gbk/classify.cpp"
grep -q '"code": "DL008"' "$tmp/out" || { echo "FAIL: GBK file not analyzed"; cat "$tmp/out" "$tmp/err"; fail=1; }
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/out" ||
  { echo "FAIL: JSON output of a GBK file is not valid JSON"; fail=1; }
run 0 "its fix is applied" -- "$devlint" check --fix --unsafe-fixes --no-cache "$tmp/gbk/classify.cpp"
grep -aqF 'return head(torch::ones({1, 8}, torch::TensorOptions().device(torch::kCUDA))); // ' "$tmp/gbk/classify.cpp" ||
  { echo "FAIL: GBK file not fixed"; cat "$tmp/gbk/classify.cpp"; fail=1; }
# Everything but the fixed line is byte for byte what it was, the GBK comments included.
cmp -s <(sed 7d "$tmp/gbk.orig") <(sed 7d "$tmp/gbk/classify.cpp") &&
  cmp -s <(sed -n '7s/.*\/\/ //p' "$tmp/gbk.orig") <(sed -n '7s/.*\/\/ //p' "$tmp/gbk/classify.cpp") ||
  { echo "FAIL: the fix changed bytes it did not fix"; fail=1; }

exit $fail
