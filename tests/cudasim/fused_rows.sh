#!/usr/bin/env bash
# Fused row groups of the cuda backend (warp_per_row, block_per_row), checked on cudasim:
#  1. each row group of softmax, layernorm and rmsnorm is one kernel per variant: the generated
#     file declares exactly one __global__ kernel of that variant and that launches (staged and
#     global form, of which one runs), nothing per statement;
#  2. the global-memory sectors the simulator counts at the largest verify size are at most
#     LIMIT times the sectors the spec implies (the verify table's sectors/spec column).
# Usage: fused_rows.sh SPECBENCH SOURCE_DIR CACHE_DIR
set -euo pipefail
specbench=$1 src=$2 cache=$3
fail=0
for k in softmax layernorm rmsnorm; do
  cu="$src/generated/$k/cuda/$k.cu"
  for v in warp_per_row block_per_row; do
    # Kernels of the variant: sb_<v>_s<k>..., one statement kernel each before fusion.
    n=$(grep -cE "^__global__ void .*sb_${v}_s[0-9]+_rows\(" "$cu" || true)
    per_stmt=$(grep -cE "^__global__ void .*sb_${v}_s[0-9]+\(" "$cu" || true)
    if [[ $n -ne 1 || $per_stmt -ne 0 ]]; then
      echo "FAIL $k/$v: $n fused kernels, $per_stmt per-statement kernels (want 1 and 0)"
      fail=1
    fi
  done
done
cd "$src"
out=$("$specbench" verify softmax layernorm rmsnorm --backend cudasim --cache-dir "$cache")
# The bound: at most 1.2 times the sectors the spec implies, for every fused variant.
while read -r kernel backend variant sizes requests sectors spec ratio rest; do
  case $variant in
    block_per_row | warp_per_row) limit=1.20 ;;
    *) continue ;;
  esac
  echo "$kernel $variant: $sectors sectors, spec $spec, ratio $ratio (limit $limit)"
  if ! awk -v r="$ratio" -v l="$limit" 'BEGIN { exit !(r <= l) }'; then
    echo "FAIL $kernel/$variant: sectors/spec $ratio > $limit"
    fail=1
  fi
  seen=$((${seen:-0} + 1))
done < <(printf '%s\n' "$out" | awk '$2 == "cudasim" && NF == 9 && $4 ~ /=/')
if [[ ${seen:-0} -ne 6 ]]; then
  echo "FAIL: expected 6 traffic rows for the fused variants, read ${seen:-0}"
  fail=1
fi
exit $fail
