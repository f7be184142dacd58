#!/usr/bin/env bash
# A hostile repository against the C++ frontend and discovery (issue 23, items 1 and 2), built
# here in a temporary directory, one attack at a time: its compile_commands.json tries to make
# devlint write a file of the attacker's choosing, or to print a file outside the checkout on
# stderr (CI logs); its sources #include such a file; a model file is a symlink out of the
# checkout. Each attack must fail (no file written, no secret text printed), devlint must say what
# it refused, and the repository's other files must still be checked. LibTorch is the stand-in of
# fuzz/cpp_stub. Usage: cli_hostile_repo_cpp.sh DEVLINT SOURCE_DIR
set -u
devlint="$1"
stub="$2/fuzz/cpp_stub"
tiny="$2/tests/data/modeling_tiny.py" # one DL001 at 31:28
source "$(dirname "$0")/cli_lib.sh"

expect() { # expect FILE TEXT: FILE (out or err) contains TEXT
  if ! grep -qF -- "$2" "$tmp/$1"; then
    echo "FAIL: $1 lacks '$2'"
    head -c 3000 "$tmp/$1"
    fail=1
  fi
}
no_secret() { # the secret's text appears nowhere in what devlint printed
  if grep -qE 'SECRETHASH|AWS_SECRET|TOPSECRET' "$tmp/out" "$tmp/err"; then
    echo "FAIL: $1: the secret was printed"
    cat "$tmp/out" "$tmp/err"
    fail=1
  fi
}

# The victim's files, outside the repository.
printf 'root:$y$SECRETHASH:19000:0:99999:7:::\nAWS_SECRET_KEY=abc123\n' >"$tmp/secret"
mkdir -p "$tmp/victim"
echo "precious user data" >"$tmp/victim/rc"

# The repository: a checkout with a model (one DL008) and an unrelated second model (one DL008).
repo="$tmp/repo"
mkdir -p "$repo/.git" "$repo/src"
cat >"$repo/src/model.cpp" <<'EOF'
#include <torch/torch.h>

torch::Tensor serve() {
  torch::nn::Linear head(8, 2);
  head->to(torch::kCUDA);
  return head(torch::ones({1, 8}));
}
EOF
sed 's/serve/other/' "$repo/src/model.cpp" >"$repo/src/other.cpp"
cd "$repo" || exit 1
check=("$devlint" check --no-cache --output-format concise --libtorch "$stub")
finding="src/model.cpp:6:"
other_finding="src/other.cpp:6:"
database() { # database ARG...: the compile command of src/model.cpp, with these arguments
  python3 - "$repo" "$stub" "$@" <<'EOF'
import json, sys
repo, stub, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
args = ["c++", "-std=c++17", "-isystem", stub + "/include/torch/csrc/api/include",
        "-isystem", stub + "/include"] + extra + ["-c", "src/model.cpp"]
json.dump([{"directory": repo, "file": repo + "/src/model.cpp", "arguments": args}],
          open(repo + "/compile_commands.json", "w"))
EOF
}
victim_untouched() {
  if [ "$(cat "$tmp/victim/rc")" != "precious user data" ] ||
    [ "$(find "$tmp/victim" -type f | wc -l)" != 1 ]; then
    echo "FAIL: $1: devlint wrote into the victim's directory"
    ls -la "$tmp/victim"
    cat "$tmp/victim/rc"
    fail=1
  fi
  rm -f "$tmp/victim"/*.PWNED
  echo "precious user data" >"$tmp/victim/rc"
}

# --- item 1: options that write files never reach Clang -----------------------------------------
v="$tmp/victim/rc"
for attack in \
  "-Xclang|-dependency-file|-Xclang|$v|-Wp,-MT,touch $v.PWNED;#" \
  "-Xclang|-diagnostic-log-file|-Xclang|$v" \
  "--serialize-diagnostics|$v" \
  "-H|-Xclang|-header-include-file|-Xclang|$v" \
  "-MD|-MF|$v|-MT|touch $v.PWNED;#" \
  "-Xclang|-stats-file=$v|-Xclang|-print-stats" \
  "-save-temps=obj|-o|$tmp/victim/model.o" \
  "-fplugin=$tmp/victim/plugin.so" \
  "-Xclang|-load|-Xclang|$tmp/victim/plugin.so"; do
  IFS='|' read -r -a args <<<"$attack"
  database "${args[@]}"
  run 1 "compile database writing a file: ${args[0]} ${args[1]:-}" -- "${check[@]}" src
  victim_untouched "${args[0]} ${args[1]:-}"
  expect err "refused ${args[0]}"
  expect out "$finding"
  expect out "$other_finding"
done

# --- item 2: no file outside the checkout reaches a message ---------------------------------------
for attack in "@$tmp/secret" "-fsanitize-ignorelist=$tmp/secret" "-include|$tmp/secret" \
  "-Xclang|-include|-Xclang|$tmp/secret" "-imacros|$tmp/secret" "-ivfsoverlay|$tmp/secret" \
  "-fmodule-map-file=$tmp/secret" "--config|$tmp/secret"; do
  IFS='|' read -r -a args <<<"$attack"
  database "${args[@]}"
  run 1 "compile database reading a file: ${args[0]}" -- "${check[@]}" src
  no_secret "${args[0]}"
  expect err "refused ${args[0]}"
  expect out "$finding"
  expect out "$other_finding"
done

# An include directory outside the checkout is dropped with a note, its files are not opened.
database -isystem "$tmp" -I/etc
printf '#include <secret>\n' >"$repo/src/model.h"
sed -i '1i #include "model.h"' "$repo/src/model.cpp"
run 2 "an include directory outside the checkout" -- "${check[@]}" src
no_secret "-isystem outside"
expect err "dropped the include directories $tmp, /etc (outside the checkout"
expect err "'secret' file not found"
expect out "$other_finding"
rm "$repo/src/model.h"
sed -i '1d' "$repo/src/model.cpp"
rm compile_commands.json

# Without a database: #include of an absolute path, and of a header symlinked out of the checkout.
printf '#include "%s"\n#include <torch/torch.h>\nint f() { return 1; }\n' "$tmp/secret" \
  >"$repo/src/leak.cpp"
ln -s "$tmp/secret" "$repo/src/evil.h"
printf '#include "evil.h"\n#include <torch/torch.h>\nint g() { return 1; }\n' >"$repo/src/leak2.cpp"
run 2 "#include of a file outside the checkout" -- \
  "${check[@]}" src/leak.cpp src/leak2.cpp src/model.cpp
no_secret "#include"
expect err "src/leak.cpp:1:10: '$tmp/secret' not opened: devlint lets Clang read only files under the checkout"
expect err "src/leak2.cpp:1:10: '$repo/src/evil.h' not opened"
expect out "$finding"
rm "$repo/src/leak.cpp" "$repo/src/leak2.cpp" "$repo/src/evil.h"

# A malformed database is named, not ignored; the file is checked with the default flags.
printf '[{"directory": ' >compile_commands.json
run 1 "a malformed compile_commands.json" -- "${check[@]}" src
expect err "compile_commands.json (compile_commands.json) not valid: not JSON"
expect out "$finding"
# A FIFO in its place does not hang devlint.
rm compile_commands.json
mkfifo compile_commands.json
run 1 "a FIFO compile_commands.json" -- timeout -k 5 60 "${check[@]}" src
expect err "compile_commands.json (compile_commands.json) not read: a FIFO, not a regular file"
expect out "$finding"
rm compile_commands.json
# A symlink leaving the project is not read.
printf '[]' >"$tmp/outside.json"
ln -s "$tmp/outside.json" compile_commands.json
run 1 "a compile_commands.json symlinked out of the project" -- "${check[@]}" src
expect err "not read: a symlink leaving the project"
expect out "$finding"
rm compile_commands.json

# Model files symlinked out of the checkout are skipped, with a warning; other files are checked.
mkdir -p "$tmp/elsewhere" "$repo/py"
cp "$tiny" "$tmp/elsewhere/modeling_secret.py"
cp "$tiny" "$repo/py/modeling_tiny.py"
ln -s "$tmp/elsewhere/modeling_secret.py" "$repo/py/modeling_evil.py"
ln -s "$tmp/secret" "$repo/py/modeling_shadow.py"
ln -s modeling_tiny.py "$repo/py/modeling_alias.py" # inside the checkout: followed
run 1 "a model file symlinked out of the checkout" -- "${check[@]}" py
expect err "py/modeling_evil.py: skipped: a symlink to a file outside the checkout"
expect err "py/modeling_shadow.py: skipped: a symlink to a file outside the checkout"
no_secret "symlinked .py"
grep -q "modeling_evil.py:31" "$tmp/out" && { echo "FAIL: the symlinked file was read"; fail=1; }
expect out "py/modeling_tiny.py:31:28"
expect out "Found 2 errors." # modeling_tiny.py and its alias inside the checkout

exit $fail
