#!/usr/bin/env bash
# Sets up a machine for specbench and builds it:
#   1. installs the Debian packages the build needs (only those missing; `apt-get update` once,
#      through sudo when not root);
#   2. puts the CUDA toolkit's nvcc on PATH when it is installed in /usr/local/cuda (optional:
#      without it the CUDA backend is generated but not compiled);
#   3. configures and builds with the `default` CMake preset (Release, Ninja, build/).
# Safe to run again: a set-up machine only rebuilds what changed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

packages=(
  cmake ninja-build g++ git
  libyaml-cpp-dev libbenchmark-dev libgtest-dev libcli11-dev nlohmann-json3-dev
  libboost-context-dev libopenblas-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} > 0)); then
  echo "setup: installing ${missing[*]}"
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "setup: missing packages (${missing[*]}) and no sudo to install them; run as root" >&2
      exit 1
    fi
    sudo=(sudo)
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    "${missing[@]}"
fi

if ! command -v nvcc >/dev/null 2>&1; then
  if [[ -x /usr/local/cuda/bin/nvcc ]]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  else
    echo "setup: no CUDA toolkit found; CUDA code is generated but not compiled" >&2
  fi
fi

cmake --preset default
cmake --build --preset default
