#!/usr/bin/env bash
# One test of the mojo-gpu-compile label: launchers.sh CXX ABI_DIR CUDA_INCLUDE FILE...
# compiles each mojo_gpu launcher (<kernel>.launch.cpp, the host side of a mojo_gpu module) as the
# device build does (harness/scripts/mojo_gpu_module.sh device: C++17 against the ABI headers and
# the CUDA driver API's header), syntax only, so that a launcher that would not build on a GPU
# machine fails here. Exits 77 (skipped) where the CUDA headers are absent.
set -uo pipefail
cxx=$1 abi=$2 cuda_inc=$3
shift 3
if [[ -z $cuda_inc || ! -f $cuda_inc/cuda.h ]]; then
  echo "SKIPPED: the CUDA toolkit's headers were not found ('$cuda_inc')"
  exit 77
fi
(($# > 0)) || { echo "FAIL: no launcher files given"; exit 1; }
failed=0
for f in "$@"; do
  if ! "$cxx" -std=c++17 -fsyntax-only -Wall -Werror=implicit-function-declaration \
      -I"$abi" -I"$cuda_inc" "$f"; then
    echo "FAIL: $f"
    failed=$((failed + 1))
  fi
done
echo "$(($# - failed)) of $# launchers compiled"
((failed == 0))
