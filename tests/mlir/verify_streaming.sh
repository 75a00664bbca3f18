#!/usr/bin/env bash
# One test of the `mlir` CTest label:
#   verify_streaming.sh SPECBENCH CACHE_DIR SPEC...
#     generates each SPEC in a scratch root and verifies its mlir variants at its verify sizes,
#     which are past the streaming threshold: their rows take the streamed form (non-temporal
#     stores by whole lines), which the library's verify sizes never reach. Fails when a generated
#     file has no streamed form, or when any check fails or is skipped; exits 77 (skipped) when
#     the mlir backend is unavailable.
set -uo pipefail
specbench=$1 cache=$2
shift 2
if "$specbench" list 2>&1 | grep -Eq "^ *mlir .*skipped"; then
  echo "note: the mlir backend is unavailable here"
  exit 77
fi
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/specs"
cp "$@" "$root/specs/" || exit 1
"$specbench" --root "$root" gen >/dev/null || { echo "FAIL: gen"; exit 1; }
for f in "$root"/generated/*/mlir/*.mlir; do
  grep -q "Non-temporal stores" "$f" || { echo "FAIL: $f has no streamed form"; exit 1; }
done
out=$("$specbench" --root "$root" verify --backend mlir --cache-dir "$cache" 2>&1)
rc=$?
echo "$out" | tail -5
[[ $rc -eq 0 ]] || exit "$rc"
grep -Eq "checks: [1-9][0-9]* passed, 0 failed, 0 skipped" <<<"$out" ||
  { echo "FAIL: some mlir checks failed or were skipped"; exit 1; }
