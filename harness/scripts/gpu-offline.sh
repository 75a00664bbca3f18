#!/usr/bin/env bash
# gpu-check.sh on a GPU machine that cannot install packages or build specbench (no network),
# with a specbench built on another x86-64 Linux machine:
#   here:  harness/scripts/gpu-offline.sh pack DIR [ARCH]
#          after setup.sh: copies build/bin/specbench, build/lib, the shared libraries it needs
#          that are not part of the C and C++ runtimes (yaml-cpp, Google Benchmark,
#          Boost.Context; libcudart as a fallback), and the GPU backends' modules compiled for
#          ARCH (default 90) into DIR, which must be ignored by git so that it can travel beside
#          the tree;
#   there: harness/scripts/gpu-offline.sh run DIR [gpu-check.sh options and kernels]
#          in a copy of the same tree: puts the binary back under build/, makes the path it was
#          built at (its ABI headers, probe sources and run path are absolute) lead to this tree,
#          sets LD_LIBRARY_PATH and SPECBENCH_CACHE_DIR, puts a stand-in for Mojo where the pack's
#          Mojo was when this machine has none (it answers --version only, so that the packed
#          mojo_gpu modules are found in the cache), and runs gpu-check.sh --no-setup.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

usage() {
  echo "usage: harness/scripts/gpu-offline.sh pack DIR [ARCH] | run DIR [gpu-check options]" >&2
  exit 2
}
(($# >= 2)) || usage
mode=$1
pack=$2
shift 2
case "$pack" in
  /* | *..* | "" | .) echo "gpu-offline: DIR must be a relative path inside the tree" >&2; exit 2 ;;
esac

if [[ $mode == pack ]]; then
  arch=${1:-90}
  [[ "$arch" =~ ^[0-9]{2,3}$ ]] || { echo "gpu-offline: bad ARCH '$arch'" >&2; exit 2; }
  git check-ignore -q "$pack/specbench" || { echo "gpu-offline: $pack is not ignored by git" >&2; exit 2; }
  sb=build/bin/specbench
  [[ -x $sb ]] || { echo "gpu-offline: build specbench first (harness/scripts/setup.sh)" >&2; exit 1; }
  rm -rf "$pack"
  mkdir -p "$pack/bin" "$pack/own" "$pack/lib" "$pack/fallback"
  cp "$sb" "$pack/bin/"
  cp build/lib/*.so "$pack/own/"
  while read -r name path; do
    case "$name" in
      libc.so* | libm.so* | libdl.so* | librt.so* | libpthread.so* | ld-linux*) ;;
      libstdc++.so* | libgcc_s.so* | libcudart.so*) cp -L "$path" "$pack/fallback/" ;;
      libspecbench_*) ;;
      *) cp -L "$path" "$pack/lib/" ;;
    esac
  done < <(ldd "$sb" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
  pwd >"$pack/built-at"
  mapfile -t backends < <("$sb" list --backends-json |
    python3 harness/scripts/gpu_summary.py --backends -)
  bargs=()
  for b in "${backends[@]}"; do bargs+=(-b "$b"); done
  "$sb" gen >/dev/null
  "$sb" build "${bargs[@]}" --cuda-arch "$arch" --cache-dir "$PWD/$pack/module-cache"
  # Mojo cannot be carried (its package is far larger than a pack may be). The mojo_gpu modules
  # built above are in the pack; there, a stand-in at the same path answers `--version` as this
  # Mojo does, so that their cache keys match, and compiles nothing.
  mojo=${SPECBENCH_MOJO:-$PWD/.venv/bin/mojo}
  if MODULAR_TELEMETRY_ENABLED=0 "$mojo" --version >"$pack/mojo-version" 2>/dev/null; then
    echo "$mojo" >"$pack/mojo-path"
  else
    rm -f "$pack/mojo-version"
  fi
  du -sh "$pack"
  echo "gpu-offline: packed into $pack; there: harness/scripts/gpu-offline.sh run $pack"
elif [[ $mode == run ]]; then
  [[ -f "$pack/built-at" ]] || { echo "gpu-offline: $pack holds no pack" >&2; exit 1; }
  built_at=$(cat "$pack/built-at")
  if [[ "$(pwd -P)" != "$(cd "$built_at" 2>/dev/null && pwd -P)" ]]; then
    if [[ -e "$built_at" || -L "$built_at" ]]; then
      echo "gpu-offline: $built_at (where specbench was built) exists and is not this tree" >&2
      exit 1
    fi
    mkdir -p "$(dirname "$built_at")"
    ln -s "$PWD" "$built_at"
    echo "gpu-offline: $built_at -> $PWD"
  fi
  mkdir -p build/bin build/lib
  cp "$pack/bin/specbench" build/bin/
  cp "$pack"/own/*.so build/lib/
  export LD_LIBRARY_PATH="$PWD/$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # The machine's own C++ runtime and CUDA runtime first; the packed ones where it has none.
  if ldd build/bin/specbench | grep -q 'not found'; then
    export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$PWD/$pack/fallback"
  fi
  export SPECBENCH_CACHE_DIR="$PWD/$pack/module-cache"
  if [[ -f "$pack/mojo-path" ]]; then
    mojo=$(cat "$pack/mojo-path")
    if ! "$mojo" --version >/dev/null 2>&1; then
      # No Mojo here: the stand-in (see pack) lets the packed mojo_gpu modules be found; a module
      # not in the pack fails to build, saying so.
      mkdir -p "$(dirname "$mojo")"
      cat >"$mojo" <<'STANDIN'
#!/usr/bin/env bash
# gpu-offline.sh's stand-in for Mojo on a machine without it: the version of the Mojo that built
# the packed modules, and no compiler.
if [[ ${1:-} == --version ]]; then cat "$(dirname "$0")/.sb-mojo-version"; exit 0; fi
echo "gpu-offline: Mojo is not installed here, and this module is not in the pack" >&2
exit 1
STANDIN
      cp "$pack/mojo-version" "$(dirname "$mojo")/.sb-mojo-version"
      chmod +x "$mojo"
      echo "gpu-offline: $mojo is a stand-in for Mojo (the packed mojo_gpu modules only)"
    fi
  fi
  exec harness/scripts/gpu-check.sh --no-setup "$@"
else
  usage
fi
