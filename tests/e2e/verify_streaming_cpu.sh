#!/usr/bin/env bash
# One test of the `e2e` CTest label:
#   verify_streaming_cpu.sh SPECBENCH CACHE_DIR CXX SPECS_DIR...
#     verifies the cpu and vendor_cpu variants of every spec in the SPECS_DIRs (the library's and
#     the golden ones), generated in a scratch root, at their verify sizes with the streaming
#     threshold at 0 bytes: every elementwise statement of a parallel variant then takes its
#     streaming form (non-temporal stores by whole lines, plain stores at unaligned ends; the
#     tiled form of a transpose), which the verify sizes, all below the 48 MiB threshold, never
#     reach otherwise. The threshold is set by a wrapper around the C++ compiler CXX that adds
#     -D SB_STREAM_MIN_BYTES=0 (named by SPECBENCH_CXX); modules go to their own cache folder.
set -uo pipefail
specbench=$1 cache=$2 cxx=$3
shift 3
mkdir -p "$cache"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/specs"
for dir in "$@"; do cp "$dir"/*.yaml "$root/specs/"; done
"$specbench" --root "$root" gen >/dev/null || { echo "FAIL: gen"; exit 1; }
grep -lq "sb_stream_fence" "$root"/generated/*/cpu/*.cpp ||
  { echo "FAIL: no generated cpu file has a streaming form to test"; exit 1; }

wrapper="$cache/cxx-streaming"
cat >"$wrapper" <<WRAP
#!/usr/bin/env bash
exec "$cxx" -DSB_STREAM_MIN_BYTES=0 "\$@"
WRAP
chmod +x "$wrapper"

out=$(SPECBENCH_CXX=$wrapper "$specbench" --root "$root" verify --backend cpu --backend vendor_cpu \
        --cache-dir "$cache" 2>&1)
rc=$?
echo "$out" | tail -5
[[ $rc -eq 0 ]] || exit "$rc"
grep -Eq "checks: [1-9][0-9]* passed, 0 failed, 0 skipped" <<<"$out" ||
  { echo "FAIL: some cpu checks failed or were skipped"; exit 1; }
