#!/usr/bin/env bash
# A/B of old and new generated modules with ONE harness binary (main's), alternating roots in an
# ABBA order per round, so drift and harness changes cancel. usage:
#   ab2.sh OUTDIR OLDROOT NEWROOT kernel:SIZES...   (env: ROUNDS=5 REPS=2 BACKENDS="cpu mojo mlir")
set -u
OUTDIR=$1 OLDROOT=$2 NEWROOT=$3; shift 3
mkdir -p "$OUTDIR"
ROUNDS=${ROUNDS:-5}; REPS=${REPS:-2}; BACKENDS=${BACKENDS:-"cpu mojo mlir"}
SB=/work/main/build/bin/specbench
bargs=(); for b in $BACKENDS; do bargs+=(-b "$b"); done
for v in ${VARIANTS:-}; do bargs+=(--variant "$v"); done
n=$#; i=0; t0=$(date +%s)
for ks in "$@"; do
  k=${ks%%:*}; sizes=${ks#*:}; i=$((i+1))
  for r in $(seq 1 "$ROUNDS"); do
    order="old new"; [ $((r % 2)) -eq 0 ] && order="new old"
    for side in $order; do
      root=$OLDROOT; [ "$side" = new ] && root=$NEWROOT
      "$SB" --root "$root" bench "$k" "${bargs[@]}" --repetitions "$REPS" --no-probes \
        --sizes "$sizes" --out "$OUTDIR/$side-$k-r$r.json" > "$OUTDIR/$side-$k-r$r.log" 2>&1 \
        || echo "  $k $side r$r: rc=$? (see $OUTDIR/$side-$k-r$r.log)"
    done
  done
  el=$(( $(date +%s) - t0 )); echo "[$i/$n] $k done $(date -u +%T), elapsed ${el}s, eta $(( el * (n - i) / i ))s"
done
