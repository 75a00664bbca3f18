#!/usr/bin/env bash
# One test of the `mojo` CTest label:
#   verify.sh SPECBENCH KERNEL CACHE_DIR SOURCE_DIR
#     verifies every mojo variant of KERNEL at all of its verify sizes; exits 77 (reported by
#     CTest as skipped) when Mojo is not installed, and fails when any check fails or is skipped
#     while Mojo is installed.
#   verify.sh SPECBENCH KERNEL CACHE_DIR SOURCE_DIR absent
#     with SPECBENCH_MOJO naming a compiler that does not exist: the mojo variants must be
#     reported as skipped, with the reason, and the command must succeed.
set -uo pipefail
specbench=$1 kernel=$2 cache=$3 source=$4 mode=${5:-}
export MODULAR_TELEMETRY_ENABLED=0 MODULAR_CRASH_REPORTING_ENABLED=0

if [[ $mode == absent ]]; then
  out=$(SPECBENCH_MOJO=/nonexistent/mojo "$specbench" verify "$kernel" --backend mojo \
    --cache-dir "$cache" 2>&1)
  rc=$?
  echo "$out"
  [[ $rc -eq 0 ]] || { echo "FAIL: exit $rc without Mojo (expected 0)"; exit 1; }
  grep -q "mojo not found at /nonexistent/mojo" <<<"$out" || { echo "FAIL: no skip reason"; exit 1; }
  grep -Eq "checks: 0 passed, 0 failed, [1-9][0-9]* skipped" <<<"$out" ||
    { echo "FAIL: the mojo variants were not all skipped"; exit 1; }
  exit 0
fi

mojo=${SPECBENCH_MOJO:-$source/.venv/bin/mojo}
if ! "$mojo" --version >/dev/null 2>&1; then
  echo "note: Mojo is not installed ($mojo); harness/scripts/setup.sh installs it. Skipped."
  exit 77
fi
out=$("$specbench" verify "$kernel" --backend mojo --cache-dir "$cache" 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 0 ]] || exit "$rc"
if ! grep -Eq "checks: [0-9]+ passed, 0 failed, 0 skipped" <<<"$out"; then
  echo "FAIL: some mojo checks were skipped although Mojo is installed"
  exit 1
fi
