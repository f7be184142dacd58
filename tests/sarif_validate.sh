#!/usr/bin/env bash
# Validates devlint's SARIF with Microsoft's SARIF Multitool (`validate`: the SARIF 2.1.0 schema
# plus its SARIF and GitHub ingestion rules). The Multitool ships as a self-contained Linux binary
# in an npm package, fetched with `npm pack` at a pinned version, checked against the registry's
# sha512 and cached in the build directory. Exit 77 = skipped (the tool cannot be obtained).
set -u
devlint="$(realpath "$1")" source_dir="$(realpath "$2")" cache="$3"
version=5.7.0
integrity="sha512-NxUbpq6ISCWoTQ/NfOYEwEDKq1Heka/rMoJ5R5LMydcAZQX/X7g5mWHcgxDub+0M07LC96tZ5LZHvF1Qy3gjTA=="
tarball="$cache/microsoft-sarif-multitool-linux-$version.tgz"
tool="$cache/package/Sarif.Multitool"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

command -v python3 >/dev/null || skip "python3 is needed to read the validator's report"
mkdir -p "$cache"
if [ ! -f "$tarball" ]; then
  command -v npm >/dev/null || skip "npm is not installed"
  (cd "$cache" && npm pack --silent "@microsoft/sarif-multitool-linux@$version" >/dev/null 2>&1) ||
    skip "npm pack @microsoft/sarif-multitool-linux@$version failed (offline?)"
fi
actual="sha512-$(python3 -c 'import base64,hashlib,sys; print(base64.b64encode(hashlib.sha512(open(sys.argv[1],"rb").read()).digest()).decode())' "$tarball")"
if [ "$actual" != "$integrity" ]; then
  rm -f "$tarball"
  fail "the Multitool tarball does not match the pinned integrity ($actual)"
fi
if [ ! -x "$tool" ]; then
  tar -xzf "$tarball" -C "$cache" || fail "cannot unpack $tarball"
  chmod +x "$tool"
fi
export DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 # the binary then needs no ICU

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/xdg-cache" # devlint's cache: never the real home in tests
# Inputs: a finding with origins and a fix, a path with a space and non-ASCII text before the site
# (URI encoding, code point columns), an unused suppression (DL900), and a clean run.
mkdir -p "$tmp/src/my models"
cp "$source_dir/tests/data/modeling_tiny.py" "$tmp/src/my models/modeling_tiny.py"
sed 's/presents = torch.cat((presents, kv_cache), dim=0)/presents = torch.cat((presents, kv_cache), dim=0)  # Ünïcode/; s/^import torch$/import torch  # noqa: DL002/' \
  "$source_dir/tests/data/modeling_tiny.py" > "$tmp/src/modeling_ünï.py"
printf 'import torch\n\nx = torch.zeros(3)\n' > "$tmp/clean.py"

validate() { # validate NAME devlint-args...
  local name=$1; shift
  (cd "$tmp/src" && "$devlint" check --report-unused-suppressions --output-format sarif \
    --output-file "$tmp/$name.sarif" "$@")
  [ -s "$tmp/$name.sarif" ] || fail "$name: devlint wrote no SARIF"
  "$tool" validate --rule-kind "Sarif;Gh" --level "Error;Warning;Note" \
    --json-schema "$cache/package/sarif-2.1.0.json" -o "$tmp/$name.report.sarif" \
    "$tmp/$name.sarif" >"$tmp/$name.log" 2>&1
  [ -s "$tmp/$name.report.sarif" ] || { cat "$tmp/$name.log"; fail "$name: the validator ran not"; }
  # Notes a careful producer may leave: message ids instead of text (SARIF2002), version control
  # details (SARIF2003, the caller's CI knows them), a reachable $schema (SARIF2006, offline here),
  # embedded file contents (SARIF2013, large). Without a `docs-url` setting devlint has no page to
  # link (SARIF2005 informationUri, SARIF2012 helpUri): help.markdown carries the docs instead.
  # Everything else, and every warning or error, fails.
  python3 - "$tmp/$name.report.sarif" "$name" "$(test -f "$tmp/src/devlint.toml" && echo linked)" <<'PY' || { cat "$tmp/$name.log"; exit 1; }
import json, sys
report = json.load(open(sys.argv[1], encoding="utf-8-sig"))
accepted = {"SARIF2002", "SARIF2003", "SARIF2006", "SARIF2013"}
if sys.argv[3] != "linked":
    accepted |= {"SARIF2005", "SARIF2012"}
problems = []
for run in report["runs"]:
    for note in run.get("invocations", [{}])[0].get("toolExecutionNotifications", []):
        if note.get("level", "warning") in ("error", "warning"):
            problems.append("tool: " + note["message"]["text"])
    for result in run.get("results", []):
        level = result.get("level", "warning")
        if result["ruleId"] not in accepted or level == "error":
            problems.append(f'{level} {result["ruleId"]}: {result["message"].get("text", result["message"])}')
for p in problems:
    print(f"FAIL: {sys.argv[2]}: {p}")
sys.exit(1 if problems else 0)
PY
  echo "ok: $name validates"
}
validate findings .
printf 'docs-url = "https://docs.example.com/devlint/rules/{code}.html"\n' > "$tmp/src/devlint.toml"
validate clean "$tmp/clean.py"
validate linked .
python3 - "$tmp/findings.sarif" <<'PY' || exit 1
import json, sys
log = json.load(open(sys.argv[1]))
results = log["runs"][0]["results"]
codes = sorted(r["ruleId"] for r in results)
assert codes == ["DL001", "DL001", "DL900"], codes
assert all(r["relatedLocations"] and r["fixes"] for r in results if r["ruleId"] == "DL001")
# GitHub links related locations only when the message embeds them.
assert all("](1)" in r["message"]["text"] and "](2)" in r["message"]["text"]
           for r in results if r["ruleId"] == "DL001"), [r["message"]["text"] for r in results]
uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
assert "my%20models/modeling_tiny.py" in uris, uris
print("ok: results, related locations, fixes and URIs as expected")
PY
