#!/usr/bin/env bash
# One test of the mojo-gpusim label: verify_spec.sh SPECBENCH KERNEL CACHE_DIR
# verifies every mojo_gpu variant of KERNEL on the simulator (specbench verify --backend
# mojo_gpusim) at every verify size. Exits 77 (skipped) with the reason where the backend is
# unavailable (no Mojo, clang-19 or LLVM 19's development files), and fails when any check fails
# or is skipped.
set -uo pipefail
specbench=$1 kernel=$2 cache=$3
export MODULAR_TELEMETRY_ENABLED=0 MODULAR_CRASH_REPORTING_ENABLED=0
if line=$("$specbench" list 2>&1 | grep -E "^mojo_gpusim .*skipped"); then
  echo "SKIPPED: ${line#*skipped: }"
  exit 77
fi
out=$("$specbench" verify "$kernel" --backend mojo_gpusim --cache-dir "$cache" 2>&1)
rc=$?
echo "$out" | tail -12
[[ $rc -eq 0 ]] || exit "$rc"
grep -Eq "checks: [1-9][0-9]* passed, 0 failed, 0 skipped" <<<"$out" ||
  { echo "FAIL: some mojo_gpusim checks of $kernel failed or were skipped"; exit 1; }
