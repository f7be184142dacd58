#!/usr/bin/env bash
# Installation: `cmake --install` into a prefix and the Debian package from `cpack -G DEB` both
# hold a working devlint in bin/ and the rule docs under share/doc/devlint; the version is the
# same everywhere. The pre-commit wrapper prefers an installed devlint and builds quietly.
set -u
build_dir="$(realpath "$1")" source_dir="$(realpath "$2")"
source "$(dirname "$0")/cli_lib.sh"
check() { # check DESCRIPTION command...
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}

version=$(sed -n 's/^project(devlint VERSION \([0-9.]*\) .*/\1/p' "$source_dir/CMakeLists.txt")
check "CMakeLists.txt sets a version" test -n "$version"
check "the CHANGELOG has an entry for $version" grep -q "^## $version\$" "$source_dir/CHANGELOG.md"
check "LICENSE is the Apache License 2.0" grep -q "Apache License" "$source_dir/LICENSE"

run 0 "cmake --install into a prefix" -- cmake --install "$build_dir" --prefix "$tmp/prefix"
run 0 "the installed devlint runs" -- "$tmp/prefix/bin/devlint" --version
check "it reports the project version" grep -qx "devlint $version" "$tmp/out"
for doc in README.md CHANGELOG.md LICENSE rules/index.md; do
  check "share/doc/devlint/$doc is installed" test -s "$tmp/prefix/share/doc/devlint/$doc"
done
for code in $("$tmp/prefix/bin/devlint" rule --all | cut -d' ' -f1); do
  "$tmp/prefix/bin/devlint" rule "$code" > "$tmp/rule.md"
  check "the installed doc of $code is \`devlint rule $code\`" \
    cmp -s "$tmp/rule.md" "$tmp/prefix/share/doc/devlint/rules/$code.md"
done

if command -v cpack >/dev/null && command -v dpkg-deb >/dev/null; then
  run 0 "cpack -G DEB" -- cpack -G DEB --config "$build_dir/CPackConfig.cmake" -B "$tmp/deb"
  deb=$(ls "$tmp"/deb/devlint_"$version"_*.deb 2>/dev/null | head -n 1)
  check "the package is named devlint_${version}_<arch>.deb" test -n "$deb"
  if [ -n "$deb" ]; then
    dpkg-deb -f "$deb" Package Version Depends > "$tmp/control"
    check "Package: devlint" grep -qx "Package: devlint" "$tmp/control"
    check "Version: $version" grep -qx "Version: $version" "$tmp/control"
    check "Depends names the tree-sitter library" grep -q "libtree-sitter" "$tmp/control"
    dpkg-deb -x "$deb" "$tmp/root"
    check "the package installs /usr/bin/devlint" test -x "$tmp/root/usr/bin/devlint"
    check "the package holds the rule docs" test -s "$tmp/root/usr/share/doc/devlint/rules/DL001.md"
    run 0 "the packaged devlint runs" -- "$tmp/root/usr/bin/devlint" -V
  fi
else
  echo "skip: cpack or dpkg-deb missing, no Debian package check"
fi

# The pre-commit wrapper: an installed devlint first; a build only as a last resort, whose log
# does not flood the hook's output (a stand-in cmake prints 500 lines and "builds" a devlint).
hook="$tmp/hookrepo"
mkdir -p "$hook/analyzer/cli" "$tmp/fakebin" "$tmp/installed"
cp -p "$source_dir/analyzer/cli/devlint-pre-commit" "$hook/analyzer/cli/"
printf '#!/bin/sh\necho "installed devlint $*"\n' > "$tmp/installed/devlint"
chmod +x "$tmp/installed/devlint"
cat > "$tmp/fakebin/cmake" <<'SH'
#!/bin/sh
for i in $(seq 500); do echo "[ $i%] Building CXX object noise $i"; done
if [ -n "${FAKE_CMAKE_FAILS:-}" ]; then echo "error: the last line of the build"; exit 1; fi
case "$*" in *--build*)
  dir=$(echo "$*" | sed 's/.*--build \([^ ]*\).*/\1/')
  printf '#!/bin/sh\necho "built devlint $*"\n' > "$dir/devlint"; chmod +x "$dir/devlint";;
*-B*) dir=$(echo "$*" | sed 's/.*-B \([^ ]*\).*/\1/'); mkdir -p "$dir";;
esac
SH
chmod +x "$tmp/fakebin/cmake"
unset DEVLINT
PATH="$tmp/installed:$tmp/fakebin:/usr/bin:/bin" run 0 "the hook uses an installed devlint" -- \
  "$hook/analyzer/cli/devlint-pre-commit" check x.py
check "... and runs it" grep -qx "installed devlint check x.py" "$tmp/out"
check "... without building" test ! -e "$hook/build"
FAKE_CMAKE_FAILS=1 PATH="$tmp/fakebin:/usr/bin:/bin" run 2 "a failed last-resort build exits 2" -- \
  "$hook/analyzer/cli/devlint-pre-commit" check x.py
check "... showing the end of its log" grep -q "error: the last line of the build" "$tmp/err"
check "... but not all of it" test "$(wc -l < "$tmp/err")" -lt 40
rm -rf "$hook/build"
PATH="$tmp/fakebin:/usr/bin:/bin" run 0 "without one, the hook builds once" -- \
  "$hook/analyzer/cli/devlint-pre-commit" check x.py
check "... runs what it built" grep -qx "built devlint check x.py" "$tmp/out"
check "... quietly (one line, the log in a file)" test "$(wc -l < "$tmp/err")" -le 1
PATH="$tmp/fakebin:/usr/bin:/bin" run 0 "the next run reuses the build" -- \
  "$hook/analyzer/cli/devlint-pre-commit" check y.py
check "... without building again" test ! -s "$tmp/err"
exit $fail
