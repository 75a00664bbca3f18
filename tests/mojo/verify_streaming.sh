#!/usr/bin/env bash
# One test of the `mojo` CTest label:
#   verify_streaming.sh SPECBENCH CACHE_DIR SOURCE_DIR KERNEL...
#     verifies the mojo variants of the KERNELs at their verify sizes with the streaming threshold
#     at 0 bytes, so that every vectorize_parallel output that may stream (non-temporal stores,
#     plain head and tail) does so at those small and unaligned sizes, and with the serial
#     cut-off at 0 iterations, so that every chunked statement runs its chunks through
#     parallelize as at bench sizes. Both are set by a wrapper around the Mojo compiler that adds
#     -D SB_STREAM_MIN_BYTES=0 -D SB_SERIAL_ITERATIONS=0 to `mojo build`; the modules go to their
#     own cache folder. Exits 77 (skipped) when Mojo is not installed.
set -uo pipefail
specbench=$1 cache=$2 source=$3
shift 3
export MODULAR_TELEMETRY_ENABLED=0 MODULAR_CRASH_REPORTING_ENABLED=0

mojo=${SPECBENCH_MOJO:-$source/.venv/bin/mojo}
if ! "$mojo" --version >/dev/null 2>&1; then
  echo "note: Mojo is not installed ($mojo); harness/scripts/setup.sh installs it. Skipped."
  exit 77
fi
mkdir -p "$cache"
wrapper="$cache/mojo-streaming"
cat >"$wrapper" <<WRAP
#!/usr/bin/env bash
if [[ \${1:-} == build ]]; then
  exec "$mojo" build -D SB_STREAM_MIN_BYTES=0 -D SB_SERIAL_ITERATIONS=0 "\${@:2}"
fi
exec "$mojo" "\$@"
WRAP
chmod +x "$wrapper"

out=$(SPECBENCH_MOJO=$wrapper "$specbench" verify "$@" --backend mojo --cache-dir "$cache" 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 0 ]] || exit "$rc"
grep -Eq "checks: [0-9]+ passed, 0 failed, 0 skipped" <<<"$out" ||
  { echo "FAIL: some mojo checks failed or were skipped"; exit 1; }
grep -q "non_temporal=True" "$source"/generated/relu/mojo/relu.mojo ||
  { echo "FAIL: generated/relu/mojo/relu.mojo has no non-temporal store to test"; exit 1; }
