#!/usr/bin/env bash
# Runs the whole test suite: set-up and build (harness/scripts/setup.sh), then
# `ctest --preset default`; then, on a full run, the hostile-input trees:
#   - the `fuzz` preset (clang-19, libFuzzer, ASan, UBSan; build-fuzz/): each fuzzer of
#     tests/fuzz/ for SPECBENCH_FUZZ_SECONDS (default 60) seconds on its corpus (`-L fuzz`);
#   - the `sanitize` preset (ASan, UBSan; build-sanitize/): the unit, errors and history labels;
# and last harness/scripts/gpu-check.sh, which exits 0 at once where there is no GPU.
# Extra arguments go to the default ctest only, e.g. `harness/scripts/test.sh -L unit`, and then
# the two extra trees are skipped. SPECBENCH_EXTRA_TESTS=0 skips them on a full run too, and
# SPECBENCH_EXTRA_TESTS=1 runs them even with arguments.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

harness/scripts/setup.sh
if [[ -x /usr/local/cuda/bin/nvcc ]] && ! command -v nvcc >/dev/null 2>&1; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
extra=${SPECBENCH_EXTRA_TESTS:-$(($# == 0 ? 1 : 0))}

status=0
ctest --preset default "$@" || status=$?

if [[ $extra == 1 ]]; then
  start=$SECONDS
  cmake --preset fuzz -DSPECBENCH_FUZZ_SECONDS="${SPECBENCH_FUZZ_SECONDS:-60}" >/dev/null
  cmake --build --preset fuzz
  ctest --preset fuzz || status=$?
  echo "test.sh: fuzz tree built and run in $((SECONDS - start)) s"
  start=$SECONDS
  cmake --preset sanitize >/dev/null
  cmake --build --preset sanitize
  ctest --preset sanitize || status=$?
  echo "test.sh: sanitize tree built and run in $((SECONDS - start)) s"
fi
# The device check: on a machine with an NVIDIA GPU, a full run also verifies and times the GPU
# backends there (about 8 minutes); elsewhere it says there is no GPU and exits 0 at once.
# SPECBENCH_GPU_CHECK=0 skips it.
if [[ $extra == 1 && ${SPECBENCH_GPU_CHECK:-1} != 0 ]]; then
  harness/scripts/gpu-check.sh --no-setup || status=$?
fi
exit "$status"
