# Shared by the command-line test scripts: a scratch directory and an exit-code assertion.
# The sourcing script sets `set -u`; results accumulate in $fail.
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
# devlint's cache belongs to the user ($XDG_CACHE_HOME/devlint): the tests keep theirs in the
# scratch directory, never in the real home.
export XDG_CACHE_HOME="$tmp/xdg-cache"
run() { # run WANT_EXIT DESCRIPTION -- command...   (stdout/stderr land in $tmp/out, $tmp/err)
  local want=$1 what=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"; cat "$tmp/out" "$tmp/err"; fail=1
  else
    echo "ok: $what (exit $got)"
  fi
}
# Assertions on $tmp/out or $tmp/err. has / lacks: the text as written; expect / absent: a
# grep pattern.
has() { grep -qF -- "$2" "$tmp/$1" || { echo "FAIL: $1 lacks '$2'"; head -c 3000 "$tmp/$1"; fail=1; }; }
lacks() { ! grep -qF -- "$2" "$tmp/$1" || { echo "FAIL: $1 has '$2'"; head -c 3000 "$tmp/$1"; fail=1; }; }
expect() { grep -q -- "$2" "$tmp/$1" || { echo "FAIL: $1 lacks '$2'"; head -c 2000 "$tmp/$1"; fail=1; }; }
absent() { ! grep -q -- "$2" "$tmp/$1" || { echo "FAIL: $1 has '$2'"; fail=1; }; }
