#!/usr/bin/env bash
# One test of the `mlir` CTest label:
#   verify.sh SPECBENCH KERNEL CACHE_DIR
#     verifies every mlir variant of KERNEL at all of its verify sizes; exits 77 (skipped) when the
#     mlir backend is unavailable (its tools are not installed), and fails when any check fails
#     or is skipped while it is available.
#   verify.sh SPECBENCH KERNEL CACHE_DIR absent
#     with SPECBENCH_MLIR_OPT naming a tool that does not exist: the mlir variants must be
#     reported as skipped, with the reason, and the command must succeed.
set -uo pipefail
specbench=$1 kernel=$2 cache=$3 mode=${4:-}

if [[ $mode == absent ]]; then
  out=$(SPECBENCH_MLIR_OPT=/nonexistent/mlir-opt-19 "$specbench" verify "$kernel" --backend mlir \
    --cache-dir "$cache" 2>&1)
  rc=$?
  echo "$out"
  [[ $rc -eq 0 ]] || { echo "FAIL: exit $rc without the mlir tools (expected 0)"; exit 1; }
  grep -q "cannot run \`/nonexistent/mlir-opt-19 --version\`" <<<"$out" ||
    { echo "FAIL: no skip reason"; exit 1; }
  grep -Eq "checks: 0 passed, 0 failed, [1-9][0-9]* skipped" <<<"$out" ||
    { echo "FAIL: the mlir variants were not all skipped"; exit 1; }
  exit 0
fi

if "$specbench" list 2>&1 | grep -Eq "^ *mlir .*skipped"; then
  echo "note: the mlir backend is unavailable here:"
  "$specbench" list 2>&1 | grep -E "^ *mlir "
  exit 77
fi
out=$("$specbench" verify "$kernel" --backend mlir --cache-dir "$cache" 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 0 ]] || exit "$rc"
if ! grep -Eq "checks: [1-9][0-9]* passed, 0 failed, 0 skipped" <<<"$out"; then
  echo "FAIL: some mlir checks were skipped although the backend is available"
  exit 1
fi
