#!/usr/bin/env bash
# The stages include only downwards (ARCHITECTURE.md): every `#include "stage/..."` in analyzer/
# and rules/, indented or not, is checked against the stages its own stage may use. An include that runs back up
# fails this test.
# usage: include_order.sh SOURCE_DIR
set -u
cd "${1:?usage: include_order.sh SOURCE_DIR}" || exit 2

# stage: the stages it may include (besides itself).
declare -A allowed=(
  [model]=""
  [diagnostics]="model"
  [simulation]="model diagnostics"
  [frontend]="model diagnostics"
  [placement]="model diagnostics"
  [fixes]="model diagnostics placement"
  [rules]="model diagnostics placement fixes"
  [findings]="model diagnostics placement fixes rules"
  [render]="model diagnostics placement fixes rules findings"
  [config]="model diagnostics frontend placement fixes rules"
  [driver]="model diagnostics simulation frontend placement fixes rules findings render config"
  [cli]="model diagnostics simulation frontend placement fixes rules findings render config driver server"
  [server]="model diagnostics simulation frontend placement fixes rules findings render config driver"
)

# Upward includes that are known and still to be removed (ARCHITECTURE.md). None are left;
# nothing may join this list: fix the include instead.
known_exceptions=()
is_known_exception() {
  local e
  for e in ${known_exceptions[@]+"${known_exceptions[@]}"}; do [ "$e" = "$1" ] && return 0; done
  return 1
}

stage_of() { # path -> stage
  case "$1" in
  rules/*) echo rules ;;
  analyzer/*) local rest=${1#analyzer/}; echo "${rest%%/*}" ;;
  esac
}

# Every include of a stage header, as `LINE:stage/path`: indented ones (`  #include` inside an
# `#if` block) and `# include` too; quoted, or in angle brackets when the path starts with a
# stage (`<placement/site.h>`, where `<vector>` is a system header).
stage_includes() { # stage_includes FILE
  grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' "$1" |
    sed -E 's/^([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*(["<])([^">]*)[">].*/\1:\2:\3/' |
    while IFS=: read -r line delimiter target; do
      if [ "$delimiter" = '"' ] || [ -n "${allowed[${target%%/*}]+set}" ]; then
        echo "$line:$target"
      fi
    done
}

fail=0
checked=0
while IFS= read -r file; do
  from=$(stage_of "$file")
  if [ -z "${allowed[$from]+set}" ]; then
    echo "FAIL: $file is in no known stage ($from): add it to ARCHITECTURE.md and this test"
    fail=1
    continue
  fi
  while IFS=: read -r line target; do
    to=${target%%/*}
    checked=$((checked + 1))
    [ "$to" = "$from" ] && continue
    case " ${allowed[$from]} " in
    *" $to "*) ;;
    *)
      is_known_exception "$file:$target" && continue
      echo "FAIL: $file:$line includes \"$target\": $from may not include $to"
      fail=1
      ;;
    esac
  done < <(stage_includes "$file")
done < <(find analyzer rules -name '*.cpp' -o -name '*.h' | sort)

[ "$checked" -gt 100 ] || { echo "FAIL: only $checked includes found: wrong directory?"; fail=1; }
[ "$fail" = 0 ] && echo "ok: $checked includes follow the stage order"
exit "$fail"
