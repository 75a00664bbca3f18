#!/usr/bin/env bash
# harness/scripts/gpu-check.sh where there is no GPU: each way of having none ends the script
# with exit status 0 and the message, before it sets up, builds or writes anything.
# usage: gpu_check_no_gpu.sh REPO_ROOT
set -euo pipefail
root=$1
script="$root/harness/scripts/gpu-check.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A PATH holding only what the script needs before its GPU test, and no nvidia-smi.
mkdir -p "$tmp/bin"
for c in dirname head awk bash cat; do ln -s "$(command -v "$c")" "$tmp/bin/$c"; done
before=$(cd "$root" && find results -type f | sort | md5sum)

expect_no_gpu() {  # name, reason pattern, env assignments...
  local name=$1 pattern=$2
  shift 2
  local out rc=0
  out=$(env "$@" bash "$script" 2>&1) || rc=$?
  [[ $rc == 0 ]] || fail "$name: exit status $rc, expected 0; output: $out"
  grep -q "no NVIDIA GPU on this machine ($pattern" <<<"$out" ||
    fail "$name: no '$pattern' message; output: $out"
  grep -q "setting up\|specbench run" <<<"$out" && fail "$name: went past the GPU test: $out"
  echo "ok: $name: $(head -n 1 <<<"$out")"
}

expect_no_gpu "no nvidia-smi" "nvidia-smi not found" -u CUDA_VISIBLE_DEVICES PATH="$tmp/bin"

mkdir -p "$tmp/broken" "$tmp/empty"
printf '#!/bin/sh\necho "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver."\nexit 9\n' >"$tmp/broken/nvidia-smi"
printf '#!/bin/sh\nexit 0\n' >"$tmp/empty/nvidia-smi"
chmod +x "$tmp/broken/nvidia-smi" "$tmp/empty/nvidia-smi"
expect_no_gpu "no driver" "nvidia-smi: NVIDIA-SMI has failed" -u CUDA_VISIBLE_DEVICES \
  PATH="$tmp/broken:$tmp/bin"
expect_no_gpu "no device" "nvidia-smi lists no device" -u CUDA_VISIBLE_DEVICES \
  PATH="$tmp/empty:$tmp/bin"
# Hidden devices win even over a working nvidia-smi (here the fake that lists none would not
# be reached: the message names CUDA_VISIBLE_DEVICES).
expect_no_gpu "hidden (-1)" "CUDA_VISIBLE_DEVICES='-1'" PATH="$tmp/empty:$tmp/bin" \
  CUDA_VISIBLE_DEVICES=-1
expect_no_gpu "hidden (empty)" "CUDA_VISIBLE_DEVICES=''" PATH="$tmp/empty:$tmp/bin" \
  CUDA_VISIBLE_DEVICES=

# An unknown option is a usage error, exit 2.
rc=0
PATH="$tmp/bin" bash "$script" --bogus >/dev/null 2>&1 || rc=$?
[[ $rc == 2 ]] || fail "--bogus: exit status $rc, expected 2"
# gpu-offline.sh refuses a pack folder outside the tree, and a folder that holds no pack.
off="$root/harness/scripts/gpu-offline.sh"
for bad in /tmp/abs ../up ""; do
  rc=0
  bash "$off" pack "$bad" >/dev/null 2>&1 || rc=$?
  [[ $rc == 2 ]] || fail "gpu-offline.sh pack '$bad': exit status $rc, expected 2"
done
rc=0
out=$(bash "$off" run "no-such-pack-$$" 2>&1) || rc=$?
[[ $rc == 1 && $out == *"holds no pack"* ]] || fail "gpu-offline.sh run: $rc, $out"
after=$(cd "$root" && find results -type f | sort | md5sum)
[[ "$before" == "$after" ]] || fail "results/ changed"
echo "gpu_check_no_gpu: all passed"
