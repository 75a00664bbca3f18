#!/usr/bin/env bash
# Runs one libFuzzer harness for a fixed time on its checked-in corpus (the `fuzz` label).
#   - every corpus input is run first; a corpus that is missing or empty is a failure;
#   - new inputs go to WORK_DIR/new (the source corpus is only read);
#   - a crash, sanitizer report, failed assertion, 10 s timeout on one input or 2 GiB of memory
#     fails the test; the input that did it is saved as WORK_DIR/crash-* (or timeout-*, oom-*).
# Usage: run_fuzzer.sh FUZZER CORPUS_DIR WORK_DIR SECONDS
set -euo pipefail
fuzzer=$1 corpus=$2 work=$3 seconds=$4

if [[ ! -d $corpus ]] || [[ -z $(ls -A "$corpus") ]]; then
  echo "run_fuzzer: the corpus $corpus is missing or empty" >&2
  exit 1
fi
mkdir -p "$work/new"
# UBSan reports abort (the libraries are built with -fno-sanitize-recover); ASan finds leaks too.
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
exec "$fuzzer" "$work/new" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=65536 -print_final_stats=1 -artifact_prefix="$work/"
