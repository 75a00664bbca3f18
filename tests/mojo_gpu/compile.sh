#!/usr/bin/env bash
# One test of the `mojo-gpu-compile` CTest label:
#   compile.sh MOJO_FILE WORK_DIR SOURCE_DIR [ARCH...]
# compiles a generated mojo_gpu module (generated/<kernel>/mojo_gpu/<kernel>.mojo) to PTX for each
# ARCH (default: 80 90) with Mojo's compiler, assembles each PTX with ptxas and prints ptxas's
# report (registers, spills per kernel). Fails on a compiler error or warning, on a ptxas error, or
# when the PTX does not define every kernel the file exports. Exits 77 (reported by CTest as
# skipped) with the reason when Mojo (SPECBENCH_MOJO, else SOURCE_DIR/.venv/bin/mojo) or ptxas
# (on PATH, else /usr/local/cuda/bin) is not installed.
set -uo pipefail
file=$1 work=$2 source=$3
shift 3
archs=("$@")
[[ ${#archs[@]} -gt 0 ]] || archs=(80 90)
export MODULAR_TELEMETRY_ENABLED=0 MODULAR_CRASH_REPORTING_ENABLED=0

mojo=${SPECBENCH_MOJO:-$source/.venv/bin/mojo}
if ! "$mojo" --version >/dev/null 2>&1; then
  echo "SKIPPED: Mojo is not installed ($mojo); harness/scripts/setup.sh installs it."
  exit 77
fi
ptxas=$(command -v ptxas || true)
[[ -n $ptxas ]] || ptxas=/usr/local/cuda/bin/ptxas
if ! "$ptxas" --version >/dev/null 2>&1; then
  echo "SKIPPED: ptxas (the CUDA toolkit) is not installed."
  exit 77
fi

name=$(basename "$file" .mojo)
mkdir -p "$work"
exported=$(grep -c '^@export(' "$file")
for arch in "${archs[@]}"; do
  ptx=$work/$name.sm_$arch.ptx
  rm -f "$ptx"
  log=$("$mojo" build -j 1 --emit asm --target-triple nvptx64-nvidia-cuda --target-cpu "sm_$arch" \
    --target-accelerator "nvidia:sm_$arch" -o "$ptx" "$file" 2>&1)
  rc=$?
  [[ -z $log ]] || echo "$log"
  [[ $rc -eq 0 && -s $ptx ]] || { echo "FAIL: mojo build for sm_$arch exited $rc"; exit 1; }
  if grep -q 'warning:' <<<"$log"; then
    echo "FAIL: mojo build for sm_$arch warned"
    exit 1
  fi
  entries=$(grep -c '^\.visible \.entry ' "$ptx")
  if [[ $entries -ne $exported ]]; then
    echo "FAIL: sm_$arch PTX defines $entries kernels, the file exports $exported"
    exit 1
  fi
  "$ptxas" -v -arch="sm_$arch" "$ptx" -o "$work/$name.sm_$arch.cubin" 2>&1 || {
    echo "FAIL: ptxas -arch=sm_$arch"
    exit 1
  }
  echo "sm_$arch: $entries kernels assembled"
done
