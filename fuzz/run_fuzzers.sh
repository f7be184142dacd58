#!/usr/bin/env bash
# Longer local fuzzing: each target for SECONDS (default 600) with a corpus kept in
# fuzz/corpus/<target> (gitignored) between runs; crashes land in fuzz/crashes/<target>.
# Build first: CC=clang-14 CXX=clang++-14 cmake -S . -B build-asan -DDEVLINT_FUZZ=ON
#              cmake --build build-asan -j2 --target fuzz_check_file fuzz_fix fuzz_config \
#                fuzz_compile_database fuzz_cpp_frontend
# Usage: fuzz/run_fuzzers.sh [SECONDS] [TARGET...]   (targets: check_file fix config compile_database
#                                              cpp_frontend)
set -euo pipefail
# Clang crashes recovered from leave their objects behind on purpose (lsan.supp).
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp"
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(check_file fix config compile_database cpp_frontend)
build=${DEVLINT_FUZZ_BUILD:-build-asan}
for target in "${targets[@]}"; do
  dict=fuzz/python.dict
  case $target in
  config) seeds=(fuzz/seeds/config) ;;
  compile_database) seeds=(fuzz/seeds/compile_database) dict=fuzz/compile_database.dict ;;
  cpp_frontend) seeds=(fixtures/cpp) dict=fuzz/cpp.dict ;;
  *) seeds=(fixtures fuzz/seeds/python) ;;
  esac
  [ -x "$build/fuzz/fuzz_$target" ] || { echo "== $target: not built, skipped"; continue; }
  mkdir -p "fuzz/corpus/$target" "fuzz/crashes/$target"
  echo "== $target for ${seconds}s"
  "$build/fuzz/fuzz_$target" -max_total_time="$seconds" -dict="$dict" -max_len=65536 \
    -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="fuzz/crashes/$target/" "fuzz/corpus/$target" "${seeds[@]}" \
    "fuzz/regressions/$target" 2>&1 | grep -E '^#[0-9]+ +(DONE|pulse)|^stat::|ERROR|SUMMARY|invariant' || true
done
ls -l fuzz/crashes/*/ 2>/dev/null | grep -v '^total' || true
