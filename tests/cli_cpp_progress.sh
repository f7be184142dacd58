#!/usr/bin/env bash
# The first C++ run builds the shared precompiled LibTorch header: it says so on stderr (issue 27,
# item 9), on a pipe too (CI logs), with a second line when the header is ready; a run that finds
# the header says nothing; --quiet says nothing. LibTorch is the stand-in of fuzz/cpp_stub, so the
# header builds in a moment. On a terminal (script(1)) the progress bar may show as well.
set -u
devlint="$1"
stub="$2/fuzz/cpp_stub"
source "$(dirname "$0")/cli_lib.sh"
has() { grep -q -- "$2" "$tmp/$1" || { echo "FAIL: $1 lacks '$2'"; cat "$tmp/$1"; fail=1; }; }
lacks() { ! grep -q -- "$2" "$tmp/$1" || { echo "FAIL: $1 has '$2'"; cat "$tmp/$1"; fail=1; }; }

mkdir -p "$tmp/proj"
cat >"$tmp/proj/serve.cpp" <<'EOF2'
#include <torch/torch.h>

torch::Tensor serve(torch::Tensor x) {
  auto scale = torch::ones({1, 8});
  return x.to(torch::kCUDA) * scale;
}
EOF2
export DEVLINT_PCH_DIR="$tmp/pch"
check=("$devlint" check --no-cache --isolated --libtorch "$stub" --output-format concise "$tmp/proj")

run 1 "first run: the header is built" -- "${check[@]}"
has err "devlint: building the precompiled LibTorch header, once (about a minute; later runs reuse it): $tmp/pch/torch-"
has err "devlint: precompiled LibTorch header ready after "
has out "serve.cpp:5:"
ls "$tmp"/pch/torch-*.pch >/dev/null 2>&1 || { echo "FAIL: no header in $tmp/pch"; fail=1; }
run 1 "second run: the header is reused, nothing said" -- "${check[@]}"
lacks err "precompiled"
rm -rf "$tmp/pch"
run 1 "--quiet says nothing" -- "${check[@]}" --quiet
lacks err "precompiled"
ls "$tmp"/pch/torch-*.pch >/dev/null 2>&1 || { echo "FAIL: --quiet built no header"; fail=1; }
exit $fail
