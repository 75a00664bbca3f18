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
# Each module (after a split marker; the header before the first is no module) runs its own
# transform entry point, the one its sb-pipeline line names, for native vectors of `simd` bytes
# (the runtime puts the host's in place of @simd_bytes@): TILES checks 64, and a spec with
# `# TILES32` directives is also checked for 32.
transform() {  # transform SIMD OUT
  local simd=$1 dest=$2 dir=$root/modules$1
  rm -rf "$dir" && mkdir -p "$dir" || return 1
  awk -v dir="$dir" '/^\/\/ -----$/ { n++; next } n > 0 { print > (dir "/v" n ".mlir") }' "$out" || return 1
  : >"$dest"
  local n=1
  while [[ -f $dir/v$n.mlir ]]; do
    local f=$dir/v$n.mlir interp=--transform-interpreter entry
    entry=$(sed -n 's@^// sb-pipeline: --transform-interpreter=\([^ ]*\) .*@\1@p' "$f")
    [[ -n $entry ]] && interp+="=${entry//@simd_bytes@/$simd}"
    "$mlir_opt" "$interp" --test-transform-dialect-erase-schedule "$f" >>"$dest" || return 1
    n=$((n + 1))
  done
}
transform 64 "$root/transformed.mlir" || { echo "FAIL: the transform schedules failed"; exit 1; }
"$filecheck" --check-prefix=TILES --input-file "$root/transformed.mlir" "$spec" || exit 1
grep -q '^# TILES32' "$spec" || exit 0
transform 32 "$root/transformed32.mlir" || { echo "FAIL: the 32-byte schedules failed"; exit 1; }
"$filecheck" --check-prefix=TILES32 --input-file "$root/transformed32.mlir" "$spec"
