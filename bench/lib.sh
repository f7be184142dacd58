# Shared by the fix benches (fix_safety.sh, fix_line_length.sh): `source` it, then
#   bench_fix_setup "$@"
# reads [DIR] [BUILD_DIR] (defaults: /work/corpus/transformers, build), checks that devlint is
# built and python3 is there, and copies DIR to "$tmp/tree" (removed on exit). Sets dir, build,
# devlint and tmp.
bench_fix_setup() {
  dir=${1:-/work/corpus/transformers}
  build=${2:-build}
  devlint=$(realpath "$build/devlint")
  [ -x "$devlint" ] || { echo "bench: $devlint not built" >&2; exit 2; }
  [ -d "$dir" ] || { echo "bench: no directory $dir" >&2; exit 2; }
  command -v python3 >/dev/null || { echo "bench: python3 is needed" >&2; exit 2; }
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cp -r "$dir" "$tmp/tree"
}
