#!/usr/bin/env bash
# One test of the label of BACKEND (cpu, cudasim, mlir, mojo):
#   verify_golden.sh BACKEND SPECBENCH GOLDEN_SPECS_DIR CACHE_DIR [FORM]
#     generates the golden specs (tests/golden/specs, hand-written to reach every corner of the
#     emitters) in a scratch root and verifies every BACKEND variant of them; exits 77 (skipped)
#     when the backend is unavailable, and fails when any check fails or is skipped. With FORM,
#     it also fails when a generated file of BACKEND (generated/*/BACKEND/*) lacks that text: the
#     specs must reach that form (mlir.verify_streaming: the streamed rows' comment).
set -uo pipefail
backend=$1 specbench=$2 specs=$3 cache=$4 form=${5:-}
export MODULAR_TELEMETRY_ENABLED=0 MODULAR_CRASH_REPORTING_ENABLED=0

if "$specbench" list 2>&1 | grep -Eq "^ *$backend .*skipped"; then
  echo "note: the $backend backend is unavailable here"
  exit 77
fi
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/specs"
cp "$specs"/*.yaml "$root/specs/"
"$specbench" --root "$root" gen >/dev/null || { echo "FAIL: gen"; exit 1; }
if [[ -n $form ]]; then
  for f in "$root"/generated/*/"$backend"/*; do
    grep -qF "$form" "$f" || { echo "FAIL: $f does not reach the form \"$form\""; exit 1; }
  done
fi
out=$("$specbench" --root "$root" verify --backend "$backend" --cache-dir "$cache" 2>&1)
rc=$?
echo "$out" | tail -5
[[ $rc -eq 0 ]] || exit "$rc"
grep -Eq "checks: [1-9][0-9]* passed, 0 failed, 0 skipped" <<<"$out" ||
  { echo "FAIL: some $backend checks of the specs failed or were skipped"; exit 1; }
