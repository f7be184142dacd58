#!/usr/bin/env bash
# tests/include_order.sh must catch what runs back up the stages however it is spelled: an
# include indented inside an `#if` block, `# include`, and a stage header in angle brackets.
# Each case is planted in a copy of analyzer/ and rules/; the check must fail and name it.
set -u
source_dir=$(cd "${1:?usage: include_order_selftest.sh SOURCE_DIR}" && pwd)
source "$(dirname "$0")/cli_lib.sh"

bash "$source_dir/tests/include_order.sh" "$source_dir" >/dev/null ||
  { echo "FAIL: the tree itself does not pass include_order.sh"; exit 1; }
plant() { # plant DESCRIPTION LINES...: a copy whose model/syntax.h ends with LINES
  local what=$1
  shift
  rm -rf "$tmp/tree"
  mkdir -p "$tmp/tree"
  cp -r "$source_dir/analyzer" "$source_dir/rules" "$tmp/tree/"
  printf '%s\n' "$@" >>"$tmp/tree/analyzer/model/syntax.h"
  run 1 "$what is caught" -- bash "$source_dir/tests/include_order.sh" "$tmp/tree"
  grep -q 'analyzer/model/syntax.h:.*includes "driver/check_run.h"' "$tmp/out" ||
    { echo "FAIL: $what: the report does not name it"; cat "$tmp/out"; fail=1; }
}
plant "an include at the start of a line" '#include "driver/check_run.h"'
plant "an indented include inside #if" '#if DEVLINT_HAS_CPP' '  #include "driver/check_run.h"' \
  '#endif'
plant "a tab-indented '# include'" $'\t# include "driver/check_run.h"'
plant "a stage header in angle brackets" '#include <driver/check_run.h>'
# System headers in angle brackets are no stage.
rm -rf "$tmp/tree" && mkdir -p "$tmp/tree" && cp -r "$source_dir/analyzer" "$source_dir/rules" "$tmp/tree/"
printf '%s\n' '#if 1' '  #include <vector>' '#endif' >>"$tmp/tree/analyzer/model/syntax.h"
run 0 "an indented system header passes" -- bash "$source_dir/tests/include_order.sh" "$tmp/tree"
exit "$fail"
