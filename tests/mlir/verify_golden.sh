#!/usr/bin/env bash
# One test of the `mlir` CTest label:
#   verify_golden.sh SPECBENCH GOLDEN_SPECS_DIR CACHE_DIR
#     generates the golden specs (tests/golden/specs, hand-written to reach every corner of the
#     emitters) in a scratch root and verifies every mlir variant of them; exits 77 (skipped) when
#     the mlir backend is unavailable, and fails when any check fails or is skipped.
set -uo pipefail
specbench=$1 specs=$2 cache=$3

if "$specbench" list 2>&1 | grep -Eq "^ *mlir .*skipped"; then
  echo "note: the mlir backend is unavailable here"
  exit 77
fi
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/specs"
cp "$specs"/*.yaml "$root/specs/"
"$specbench" --root "$root" gen >/dev/null || { echo "FAIL: gen"; exit 1; }
out=$("$specbench" --root "$root" verify --backend mlir --cache-dir "$cache" 2>&1)
rc=$?
echo "$out" | tail -5
[[ $rc -eq 0 ]] || exit "$rc"
grep -Eq "checks: [1-9][0-9]* passed, 0 failed, 0 skipped" <<<"$out" ||
  { echo "FAIL: some mlir checks of the golden specs failed or were skipped"; exit 1; }
