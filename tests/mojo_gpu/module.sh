#!/usr/bin/env bash
# One test of the mojo-gpu-compile label: module.sh SPECBENCH CACHE_DIR
# builds the mojo_gpu module of the dot spec as the harness does for a GPU
# (harness/scripts/mojo_gpu_module.sh device: Mojo's PTX for sm_80 and sm_90, ptxas -v, the PTX and
# cubins built in with the launchers) and checks that ptxas's facts of its kernels come back
# (`specbench build --facts`). Exits 77 (skipped) with the reason where Mojo is not installed.
set -uo pipefail
specbench=$1 cache=$2
export MODULAR_TELEMETRY_ENABLED=0 MODULAR_CRASH_REPORTING_ENABLED=0
mojo=${SPECBENCH_MOJO:-$PWD/.venv/bin/mojo}
if ! "$mojo" --version >/dev/null 2>&1; then
  echo "SKIPPED: Mojo is not installed ($mojo); harness/scripts/setup.sh installs it."
  exit 77
fi
out=$("$specbench" build dot --backend mojo_gpu --facts --cache-dir "$cache" 2>&1)
rc=$?
echo "$out" | tail -25
[[ $rc -eq 0 ]] || exit "$rc"
grep -q "1 of 1 modules built" <<<"$out" || { echo "FAIL: the module was not built"; exit 1; }
for arch in sm_80 sm_90; do
  grep -Eq "^dot +mojo_gpu +block_reduce +sb_block_reduce_s0_partial +$arch " <<<"$out" ||
    { echo "FAIL: no ptxas facts for sb_block_reduce_s0_partial on $arch"; exit 1; }
done
