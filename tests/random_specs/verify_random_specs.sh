#!/usr/bin/env bash
# verify_random_specs.sh SPECBENCH CACHE_DIR SEED...
#   For each seed: random_spec.py's spec, in a scratch root; the variants `gen` says do not fit
#   the spec are dropped one by one (a located error at a variant, or a backend left with none);
#   then every variant left is verified on the host backends and the simulators, one random input
#   set per size. Fails when `gen` rejects a spec for another reason, or when a check fails.
#   (A seed's spec is printed by `random_spec.py SEED`; RANDOM_SPEC_KINDS limits the templates.)
set -uo pipefail
specbench=$1 cache=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
failed=0
for seed in "$@"; do
  rm -rf "$root/specs" "$root/generated"
  mkdir -p "$root/specs"
  spec=$root/specs/fz$seed.yaml
  python3 "$here/random_spec.py" "$seed" "${RANDOM_SPEC_KINDS:-}" >"$spec" || exit 1
  ok=0
  for _ in $(seq 1 40); do
    out=$("$specbench" --root "$root" gen 2>&1) && { ok=1; break; }
    backend=$(grep -o "error: variants of backend '[a-z_]*'" <<<"$out" | head -1 | cut -d"'" -f2)
    if [[ -n $backend ]]; then
      sed -i "/^  $backend:\$/d" "$spec"
      continue
    fi
    line=$(grep -Eo "fz$seed\.yaml:[0-9]+:[0-9]+: error: (variant|strategy) " <<<"$out" |
           head -1 | cut -d: -f2)
    [[ -n $line ]] || break
    sed -i "${line}d" "$spec"
  done
  if ((ok == 0)); then
    echo "FAIL seed $seed: gen rejected the spec:"
    echo "$out" | head -5
    cat "$spec"
    failed=$((failed + 1))
    continue
  fi
  out=$("$specbench" --root "$root" --cache-dir "$cache" verify --seeds 1 -b cpu -b vendor_cpu \
          -b mojo -b mlir -b cudasim -b mojo_gpusim 2>&1)
  summary=$(grep -E "checks: " <<<"$out" | tail -1)
  echo "seed $seed: $summary"
  if ! grep -Eq "checks: [0-9]+ passed, 0 failed" <<<"$summary"; then
    grep -E "FAIL|error" <<<"$out" | head -10
    cat "$spec"
    failed=$((failed + 1))
  fi
done
((failed == 0)) || { echo "FAIL: $failed of $# random specs"; exit 1; }
