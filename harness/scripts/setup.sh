#!/usr/bin/env bash
# Sets up a machine for specbench and builds it:
#   1. installs the Debian packages the build needs (only those missing; `apt-get update` once,
#      through sudo when not root), among them the mlir backend's tools: mlir-opt-19,
#      mlir-translate-19, clang-19, LLVM's libomp, and FileCheck-19 for its golden tests, and
#      clang-19's sanitizer and libFuzzer runtimes (libclang-rt-19-dev) for the fuzz tests, and
#      LLVM 19's C++ libraries and headers (llvm-19-dev) for mojo_gpusim;
#   2. puts the CUDA toolkit's nvcc on PATH when it is installed in /usr/local/cuda (optional:
#      without it the CUDA backend is generated but not compiled);
#   3. installs the pinned Mojo compiler (mojo 1.2.0, with max-core 26.7.0 for the `max` Mojo
#      package) into the project-local virtual environment .venv/ when missing (optional:
#      without it the mojo backend is generated but skipped; SPECBENCH_SKIP_MOJO=1 skips this);
#   4. installs matplotlib (and pandas, for the CSV export's test) into .venv/ for the report
#      (optional; Chromium, for the report's browser test, is a package of step 1);
#   5. configures and builds with the `default` CMake preset (Release, Ninja, build/).
# Safe to run again: a set-up machine only rebuilds what changed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

packages=(
  cmake ninja-build g++ git
  libyaml-cpp-dev libbenchmark-dev libgtest-dev libcli11-dev nlohmann-json3-dev
  libboost-context-dev libopenblas-dev
  mlir-19-tools llvm-19-tools llvm-19-dev clang-19 libclang-rt-19-dev libomp-19-dev
  chromium
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

# Mojo, for the mojo backend: a pinned compiler in .venv/ (gitignored), where the harness looks
# for it (SPECBENCH_MOJO overrides). `max-core` brings the `max` Mojo package (parallelize, the
# GPU API) and the runtime library that parallel Mojo code links against. About 1 GB.
mojo_version=1.2.0
max_version=26.7.0
mojo_ok() {
  [[ -x .venv/bin/mojo ]] && .venv/bin/python - "$mojo_version" "$max_version" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
sys.exit(0 if (version("mojo"), version("max-core")) == (sys.argv[1], sys.argv[2]) else 1)
PY
}
if [[ "${SPECBENCH_SKIP_MOJO:-0}" != 1 ]] && ! mojo_ok; then
  echo "setup: installing mojo==$mojo_version and max-core==$max_version into .venv/"
  if { [[ -x .venv/bin/python ]] || python3 -m venv .venv; } &&
    .venv/bin/python -m pip install --disable-pip-version-check --quiet \
      "mojo==$mojo_version" "max-core==$max_version" && mojo_ok; then
    MODULAR_TELEMETRY_ENABLED=0 MODULAR_CRASH_REPORTING_ENABLED=0 .venv/bin/mojo --version
  else
    echo "setup: could not install Mojo; the mojo backend will be reported as skipped" >&2
  fi
fi

# The report (`specbench report`, `nightly`): matplotlib (pinned) in .venv/ draws the charts;
# Chromium (a Debian package of step 1) renders the site in the `report` tests. pandas (pinned)
# loads `specbench export --format csv` in the history test (without it the test reads the CSV
# with Python's csv module). Optional: without matplotlib the report fails with a message naming
# what is missing.
matplotlib_version=3.11.2
pandas_version=2.3.3
if ! { [[ -x .venv/bin/python ]] &&
  .venv/bin/python - "$matplotlib_version" "$pandas_version" <<'PY' 2>/dev/null; }; then
import sys
from importlib.metadata import version
sys.exit(0 if (version("matplotlib"), version("pandas")) == (sys.argv[1], sys.argv[2]) else 1)
PY
  echo "setup: installing matplotlib==$matplotlib_version and pandas==$pandas_version into .venv/"
  if ! { { [[ -x .venv/bin/python ]] || python3 -m venv .venv; } &&
    .venv/bin/python -m pip install --disable-pip-version-check --quiet \
      "matplotlib==$matplotlib_version" "pandas==$pandas_version"; }; then
    echo "setup: could not install matplotlib and pandas; specbench report will not work" >&2
  fi
fi

cmake --preset default
cmake --build --preset default
