#!/usr/bin/env bash
# The device check: everything specbench does on a GPU, in one command, for the day a machine
# with an NVIDIA GPU is at hand.
#   1. Finds the GPU with nvidia-smi. Where there is none (no nvidia-smi, no driver, no device,
#      or CUDA_VISIBLE_DEVICES hiding every device) it says so and exits 0, before touching
#      anything: the test command runs it up to there on every machine.
#   2. Sets up and builds (harness/scripts/setup.sh), unless --no-setup: then the existing
#      build/bin/specbench is used, for a GPU machine that cannot install packages itself.
#   3. Runs `specbench nightly` on the GPU backends of the backend records (every timed backend
#      whose device is the GPU: cuda, vendor_cuda and mojo_gpu), compiled for
#      this GPU's architecture only: gen --check, build, verify on the device at the verify sizes,
#      time the variants that passed at the bench sizes (10 repetitions), probes at the start and
#      end, compare with the previous GPU run, report (build/gpu-report/). Every timed case is
#      checkpointed as it is measured: a check killed at a time limit keeps its measurements, and
#      running it again with the same options resumes it. The results go to
#      results/<host>/<UTC time>.json with the run's summary beside it (.md); SPECBENCH_HOST
#      names <host> (default: the host name).
#   4. Prints the GPU summary of that file (harness/scripts/gpu_summary.py) and writes it beside
#      the results as <UTC time>.gpu.md: per kernel and size the best variant of each GPU
#      backend, its rate against the measured triad and against the memory's theoretical peak,
#      x vs the vendor libraries, and CUDA against Mojo GPU.
# Exit status: 0 when every step ran, every variant verified and nothing regressed, or when there
# is no GPU; otherwise nightly's status (1: a build, a check, a GPU case skipped or a regression
# against the previous run; 2: a user error), or the summary's.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

usage() {
  cat <<'EOF'
usage: harness/scripts/gpu-check.sh [--no-setup] [--repetitions N] [--min-time S] [kernels...]

Verifies and times specbench's GPU backends on this machine's NVIDIA GPU; exits 0 with a message
where there is no GPU.
  --no-setup         use the existing build/bin/specbench instead of running setup.sh
  --repetitions N    repetitions of every timed case (default 10)
  --min-time S       minimum seconds of GPU time per repetition (default 0.002)
  kernels...         only these kernels (default: every spec)
EOF
}

setup=1
repetitions=10
min_time=0.002
kernels=()
while (($# > 0)); do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --no-setup) setup=0 ;;
    --repetitions) repetitions="${2:?--repetitions needs a value}"; shift ;;
    --min-time) min_time="${2:?--min-time needs a value}"; shift ;;
    -*) echo "gpu-check: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *) kernels+=("$1") ;;
  esac
  shift
done

say() { echo "gpu-check: $*"; }

# 1. The GPU. nvidia-smi answers for the driver; CUDA_VISIBLE_DEVICES set to nothing or to -1
#    hides every device from CUDA, and then there is nothing to check either.
no_gpu() {
  say "no NVIDIA GPU on this machine ($1); nothing to check, exiting 0."
  say "on a machine with one, this verifies and times cuda, vendor_cuda and mojo_gpu there."
  exit 0
}
if [[ -n "${CUDA_VISIBLE_DEVICES+set}" && ( -z "$CUDA_VISIBLE_DEVICES" || "$CUDA_VISIBLE_DEVICES" == -1 ) ]]; then
  no_gpu "CUDA_VISIBLE_DEVICES='${CUDA_VISIBLE_DEVICES}' hides every device"
fi
if ! command -v nvidia-smi >/dev/null 2>&1; then
  no_gpu "nvidia-smi not found"
fi
if ! gpus=$(nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version \
  --format=csv,noheader 2>&1); then
  no_gpu "nvidia-smi: $(head -n 1 <<<"$gpus")"
fi
if [[ -z "$gpus" ]]; then
  no_gpu "nvidia-smi lists no device"
fi
say "GPU: $(head -n 1 <<<"$gpus")"
# The first device is the one specbench uses (cudaSetDevice(0)); its architecture, "9.0" -> 90.
cap=$(head -n 1 <<<"$gpus" | awk -F', ' '{print $2}')
arch=${cap/./}
if ! [[ "$arch" =~ ^[0-9]{2,3}$ ]]; then
  echo "gpu-check: cannot read the GPU's compute capability from nvidia-smi ('$cap')" >&2
  exit 1
fi

start=$SECONDS
# 2. Set-up and build.
if ((setup)); then
  say "setting up and building (harness/scripts/setup.sh)"
  harness/scripts/setup.sh
else
  say "--no-setup: using the existing build/bin/specbench"
fi
if [[ -x /usr/local/cuda/bin/nvcc ]] && ! command -v nvcc >/dev/null 2>&1; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
sb=build/bin/specbench
if ! "$sb" --version >/dev/null; then
  echo "gpu-check: $sb does not run; build it first (harness/scripts/setup.sh)" >&2
  exit 1
fi

# 3. The GPU backends, from the backend records: timed, on the GPU.
mapfile -t backends < <("$sb" list --backends-json |
  python3 harness/scripts/gpu_summary.py --backends -)
if ((${#backends[@]} == 0)); then
  echo "gpu-check: this build has no timed GPU backend" >&2
  exit 1
fi
for want in cuda vendor_cuda mojo_gpu; do
  if ! printf '%s\n' "${backends[@]}" | grep -qx "$want"; then
    say "$want: not a backend of this build; its column stays empty"
  fi
done
host=${SPECBENCH_HOST:-$(hostname -s 2>/dev/null || hostname)}
export SPECBENCH_HOST="$host"
dir="results/$host"
report="build/gpu-report"
bargs=()
for b in "${backends[@]}"; do bargs+=(-b "$b"); done
say "specbench nightly ${bargs[*]} --cuda-arch $arch --repetitions $repetitions --min-time $min_time"
mkdir -p build
log="build/gpu-check.log"
rc=0
"$sb" nightly "${kernels[@]}" "${bargs[@]}" --cuda-arch "$arch" --repetitions "$repetitions" \
  --min-time "$min_time" --results-dir "$dir" --report-dir "$report" 2>&1 | tee "$log" ||
  rc=${PIPESTATUS[0]}
# nightly names the file it stored; without it, nothing was stored (its checkpoint stays).
out=$(sed -n 's/^results: //p' "$log" | tail -n 1)

# 4. The GPU summary, also after a failed check (the results file records the failures).
if [[ -n "$out" && -f "$out" ]]; then
  md="${out%.json}.gpu.md"
  src=0
  # Written whole, then renamed: an interrupted summary never leaves half a file.
  python3 harness/scripts/gpu_summary.py --strict "$out" >"$md.tmp.$$" || src=$?
  mv "$md.tmp.$$" "$md"
  cat "$md"
  ((rc != 0)) || rc=$src
  say "results: $out, summary: $md, report: $report/index.html"
else
  echo "gpu-check: nightly stored no results file (exit status $rc); run again to resume" >&2
  ((rc != 0)) || rc=1
fi
say "done in $((SECONDS - start)) s, exit status $rc"
exit "$rc"
