#!/usr/bin/env bash
# One FileCheck test of the `mlir` CTest label:
#   filecheck.sh SPECBENCH FILECHECK SPEC WORK_DIR [MLIR_OPT]
# generates SPEC (a spec whose `# CHECK` comments are the FileCheck directives) into a scratch
# root under WORK_DIR with `specbench gen --root`, then runs FileCheck on the emitted
# generated/<name>/mlir/<name>.mlir. A spec with `# TILES` directives is also checked after its
# modules' transform schedules ran (mlir-opt --transform-interpreter, each module on its own):
# prefix TILES. Exits 77 (skipped) when FileCheck, or mlir-opt for TILES, is not installed.
set -uo pipefail
specbench=$1 filecheck=$2 spec=$3 work=$4 mlir_opt=${5:-}
if [[ -z $filecheck || ! -x $filecheck ]]; then
  echo "note: FileCheck-19 not found (package llvm-19-tools, installed by harness/scripts/setup.sh). Skipped."
  exit 77
fi
name=$(basename "$spec" .yaml)
root=$work/$name
rm -rf "$root" && mkdir -p "$root/specs" && cp "$spec" "$root/specs/" || exit 1
"$specbench" gen --root "$root" >/dev/null || { echo "FAIL: specbench gen failed"; exit 1; }
out=$root/generated/$name/mlir/$name.mlir
[[ -f $out ]] || { echo "FAIL: $out was not written"; exit 1; }
"$filecheck" --input-file "$out" "$spec"
rc=$?
[[ $rc -eq 0 ]] || exit "$rc"
grep -q '^# TILES' "$spec" || exit 0
if [[ -z $mlir_opt || ! -x $mlir_opt ]]; then
  echo "note: mlir-opt-19 not found (package mlir-19-tools). The TILES checks are skipped."
  exit 77
fi
# The modules start after the first split marker (the header before it is no module).
awk 'f; /^\/\/ -----/ && !f {f=1}' "$out" >"$root/modules.mlir" || exit 1
"$mlir_opt" --split-input-file --transform-interpreter --test-transform-dialect-erase-schedule \
  "$root/modules.mlir" -o "$root/transformed.mlir" || { echo "FAIL: the transform schedules failed"; exit 1; }
"$filecheck" --check-prefix=TILES --input-file "$root/transformed.mlir" "$spec"
