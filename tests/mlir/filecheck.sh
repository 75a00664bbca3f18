#!/usr/bin/env bash
# One FileCheck test of the `mlir` CTest label:
#   filecheck.sh SPECBENCH FILECHECK SPEC WORK_DIR
# generates SPEC (a spec whose `# CHECK` comments are the FileCheck directives) into a scratch
# root under WORK_DIR with `specbench gen --root`, then runs FileCheck on the emitted
# generated/<name>/mlir/<name>.mlir. Exits 77 (skipped) when FileCheck is not installed.
set -uo pipefail
specbench=$1 filecheck=$2 spec=$3 work=$4
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
