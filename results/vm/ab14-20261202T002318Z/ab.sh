#!/usr/bin/env bash
# Alternating A/B benchmark of two checkouts, kernel by kernel: old then new, same flags, each
# kernel at its largest bench size. usage: ab.sh OUTDIR kernel=SIZES...
set -u
OUTDIR=$1; shift
mkdir -p "$OUTDIR"
REPS=${REPS:-10}
n=$#; i=0; t0=$(date +%s)
for ks in "$@"; do
  k=${ks%%:*}; sizes=${ks#*:}
  i=$((i+1))
  for side in old new; do
    root=/work/old; [ $side = new ] && root=/work/main
    echo "[$i/$n] $k ($sizes) $side $(date -u +%T)"
    (cd $root && build/bin/specbench bench $k -b cpu -b mojo -b mlir --repetitions $REPS --no-probes \
        --sizes "$sizes" --out "$OUTDIR/$side-$k.json" > "$OUTDIR/$side-$k.log" 2>&1) || echo "  rc=$? (see $OUTDIR/$side-$k.log)"
  done
  el=$(( $(date +%s) - t0 )); echo "  elapsed ${el}s, eta $(( el * (n - i) / i ))s"
done
