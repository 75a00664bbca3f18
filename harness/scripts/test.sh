#!/usr/bin/env bash
# Runs the whole test suite: set-up and build (harness/scripts/setup.sh), then
# `ctest --preset default`. Extra arguments go to ctest, e.g. `harness/scripts/test.sh -L unit`.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

harness/scripts/setup.sh
if [[ -x /usr/local/cuda/bin/nvcc ]] && ! command -v nvcc >/dev/null 2>&1; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
ctest --preset default "$@"
