#!/usr/bin/env bash
# mlir.verify_diagnostics: every checked-in generated/*/mlir/*.mlir parses and verifies under
#   mlir-opt-19 --split-input-file --verify-diagnostics
# (no diagnostic at all may be emitted). Exits 77 (skipped) when mlir-opt-19 is not installed.
#   verify_diagnostics.sh MLIR_OPT SOURCE_DIR
set -uo pipefail
opt=$1 source=$2
if [[ -z $opt || ! -x $opt ]]; then
  echo "note: mlir-opt-19 not found (package mlir-19-tools). Skipped."
  exit 77
fi
n=0 bad=0
for f in "$source"/generated/*/mlir/*.mlir; do
  n=$((n + 1))
  if ! "$opt" --split-input-file --verify-diagnostics "$f" >/dev/null; then
    echo "FAIL: $f"
    bad=$((bad + 1))
  fi
done
echo "$n files, $bad failed"
[[ $n -gt 0 && $bad -eq 0 ]]
