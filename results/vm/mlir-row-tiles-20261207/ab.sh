#!/bin/bash
B=/work/main/build/bin/specbench
R=/tmp/Rrt
for r in 1 2; do
  for side in old new new old; do
    n=$(ls $R/out-$side-*.json 2>/dev/null | wc -l)
    $B --root $R/$side --cache-dir $R/cache-$side bench grouped_conv2d grouped_pointwise -b mlir --variant mlir/im2col --repetitions 5 --no-probes --out $R/out-$side-$n.json > $R/log-$side-$n.txt 2>&1
  done
done
echo DONE
