#!/usr/bin/env bash
# Builds one mojo_gpu module: generated/<k>/mojo_gpu/<k>.mojo (the kernels) with <k>.launch.cpp
# beside it (the launchers and specbench_module()) into one shared library. The harness runs it as
# the compiler of the mojo_gpu and mojo_gpusim backends (harness/run/runtime_mojo_gpu.cpp), as
#   mojo_gpu_module.sh MODE [OPTIONS] -o MODULE.so KERNEL.mojo
# and its text is part of the modules' cache key. `--version` prints the script's name.
#
# MODE sim (mojo_gpusim): the kernels compiled to NVVM IR by Mojo (with line tables, for the
#   simulator's messages), rewritten for the host by the mojo_gpusim tool, and compiled by clang
#   with the launchers (-DSB_MOJO_GPUSIM), linked against the CUDA simulator's runtime.
#   Options: --mojo PATH --gpusim PATH --clang PATH --abi DIR --cudasim-include DIR
#            --cudasim-lib DIR
# MODE device (mojo_gpu): the kernels compiled to PTX by Mojo for each --arch, each PTX assembled
#   by ptxas -v (its report, printed, gives the kernels' static facts), and the PTX texts and
#   ptxas's cubins built into the module with the launchers, which load one with the CUDA
#   driver API at run time.
#   Options: --mojo PATH --cxx PATH --ptxas PATH --abi DIR --cuda-include DIR --cuda-lib DIR
#            --arch N (repeatable)
#
# Exit status: 0 built; 1 a step failed (the command and its output are printed); 2 usage.
set -uo pipefail
export MODULAR_TELEMETRY_ENABLED=0 MODULAR_CRASH_REPORTING_ENABLED=0

# `--version` names the script alone: its text is part of the key, and the tools it runs answer
# for their own versions (CompileCommand::key_tools), so the key does not depend on the shell's.
if [[ ${1:-} == --version ]]; then
  echo "specbench mojo_gpu_module.sh"
  exit 0
fi

usage() {
  echo "usage: mojo_gpu_module.sh sim|device [OPTIONS] -o MODULE.so KERNEL.mojo" >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
mode=$1
shift
[[ $mode == sim || $mode == device ]] || usage
mojo="" gpusim="" clang="" cxx="" ptxas="" abi="" sim_inc="" sim_lib="" cuda_inc="" cuda_lib=""
out="" src=""
archs=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --mojo | --gpusim | --clang | --cxx | --ptxas | --abi | --cudasim-include | --cudasim-lib | \
      --cuda-include | --cuda-lib | --arch | -o)
      [[ $# -ge 2 ]] || usage
      case $1 in
        --mojo) mojo=$2 ;;
        --gpusim) gpusim=$2 ;;
        --clang) clang=$2 ;;
        --cxx) cxx=$2 ;;
        --ptxas) ptxas=$2 ;;
        --abi) abi=$2 ;;
        --cudasim-include) sim_inc=$2 ;;
        --cudasim-lib) sim_lib=$2 ;;
        --cuda-include) cuda_inc=$2 ;;
        --cuda-lib) cuda_lib=$2 ;;
        --arch)
          [[ $2 =~ ^[0-9]{2,3}$ ]] || { echo "mojo_gpu_module.sh: bad --arch '$2'" >&2; exit 2; }
          archs+=("$2")
          ;;
        -o) out=$2 ;;
      esac
      shift 2
      ;;
    *)
      [[ -z $src && $1 == *.mojo ]] || usage
      src=$1
      shift
      ;;
  esac
done
[[ -n $out && -n $src && -n $mojo && -n $abi ]] || usage
launch=${src%.mojo}.launch.cpp
[[ -f $src ]] || { echo "mojo_gpu_module.sh: no kernel file $src" >&2; exit 1; }
[[ -f $launch ]] || { echo "mojo_gpu_module.sh: no launcher file $launch beside $src" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/specbench-mojo-gpu.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# Runs a command; on failure prints it with its output and exits 1.
step() {
  local log
  log=$("$@" 2>&1)
  local rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "mojo_gpu_module.sh: failed (exit $rc): $*"
    [[ -z $log ]] || echo "$log"
    exit 1
  fi
  [[ -z $log ]] || echo "$log"
}

if [[ $mode == sim ]]; then
  [[ -n $gpusim && -n $clang && -n $sim_inc && -n $sim_lib ]] || usage
  step "$mojo" build -g1 -j 1 --emit llvm --target-triple nvptx64-nvidia-cuda \
    --target-accelerator nvidia:sm_90 -o "$work/kernels.ll" "$src"
  step "$gpusim" "$work/kernels.ll" --emit-ll "$work/host.ll"
  # compiler-rt's builtins: the host code converts f32 and f64 to bf16 and f16 through
  # __truncsfbf2, __truncdfbf2, ..., which libgcc 12 lacks (libclang-rt-19-dev has them).
  step "$clang" -O2 -fPIC -shared -Wno-override-module -rtlib=compiler-rt -o "$out" \
    -x ir "$work/host.ll" \
    -x c++ -std=c++20 -DSB_MOJO_GPUSIM -I"$abi" -I"$sim_inc" "$launch" \
    -L"$sim_lib" -lspecbench_cudasim -lm -Wl,-rpath,"$sim_lib"
  exit 0
fi

[[ -n $cxx && -n $ptxas && -n $cuda_inc && -n $cuda_lib && ${#archs[@]} -gt 0 ]] || usage
images=$work/ptx_images.cpp
: >"$work/cubins.inc"
: >"$work/table.inc"
sorted=$(printf '%s\n' "${archs[@]}" | sort -n -u)
count=0
for arch in $sorted; do
  ptx=$work/kernels.sm_$arch.ptx
  step "$mojo" build -j 1 --emit asm --target-triple nvptx64-nvidia-cuda --target-cpu "sm_$arch" \
    --target-accelerator "nvidia:sm_$arch" -o "$ptx" "$src"
  step "$ptxas" -v -arch="sm_$arch" "$ptx" -o "$work/kernels.sm_$arch.cubin"
  # The PTX as a C++ raw string (PTX has no ')"' sequence of this delimiter), and the cubin
  # ptxas made of it as bytes.
  if grep -q ')sb_ptx"' "$ptx"; then
    echo "mojo_gpu_module.sh: the PTX holds the raw-string delimiter" >&2
    exit 1
  fi
  cubin=$work/kernels.sm_$arch.cubin
  {
    printf 'static const unsigned char sb_cubin_%s[] = {' "$arch"
    od -An -v -tx1 "$cubin" | tr -s ' \n' ' ' | sed -E 's/ ?([0-9a-f]{2})/0x\1,/g'
    printf '};\n'
  } >>"$work/cubins.inc"
  { printf '  {%s, R"sb_ptx(' "$arch"; cat "$ptx"; printf ')sb_ptx", sb_cubin_%s, sizeof sb_cubin_%s},\n' "$arch" "$arch"; } >>"$work/table.inc"
  count=$((count + 1))
done
{
  echo '#include "specbench_mojo_gpu.h"'
  cat "$work/cubins.inc"
  echo 'extern "C" const sb_mojo_ptx_image sb_mojo_ptx_images[] = {'
  cat "$work/table.inc"
  echo '};'
  echo "extern \"C\" const int sb_mojo_ptx_image_count = $count;"
} >"$images"
step "$cxx" -std=c++17 -O2 -fPIC -shared -o "$out" -I"$abi" -I"$cuda_inc" "$launch" "$images" \
  -L"$cuda_lib" -lcudart -ldl -Wl,-rpath,"$cuda_lib"
