#!/usr/bin/env bash
# Runs `specbench gen` on one bad spec in a scratch copy of the repository's specs/ with a
# sentinel generated/ tree, and checks that it fails cleanly:
#   - exit code 2, both with the spec named explicitly and when it sits among every good spec;
#   - stderr starts with the root line; its first other line, with the spec's path written as
#     FILE, equals the .expected line;
#   - nothing on stderr looks like a crash (terminate, abort, sanitizer report, internal error);
#   - no file or folder under the scratch root was created, changed or removed.
# Usage: gen_bad_spec.sh SPECBENCH REPO_ROOT BAD_SPEC EXPECTED WORK_DIR
set -euo pipefail

specbench=$(realpath "$1") repo=$(realpath "$2") bad=$(realpath "$3") expected_file=$4 work=$5

mkdir -p "$work"
root=$(mktemp -d "$work/gen-bad.XXXXXX")
trap 'rm -rf "$root"' EXIT

mkdir -p "$root/specs" "$root/generated/sentinel/cpu"
cp "$repo"/specs/*.yaml "$root/specs/"
if [[ -d "$repo/generated" ]]; then cp -R "$repo/generated/." "$root/generated/"; fi
echo "must survive" >"$root/generated/sentinel/cpu/sentinel.cpp"
name=$(basename "$bad")
cp "$bad" "$root/specs/$name"

snapshot() {
  (cd "$root" && find . -mindepth 1 -printf '%y %p\n' | LC_ALL=C sort &&
     find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
}
before=$(snapshot)
expected=$(head -n 1 "$expected_file")
status=0

check_run() {  # check_run DESCRIPTION SPEC_PATH_IN_MESSAGES -- COMMAND...
  local what=$1 spec_path=$2
  shift 3
  local err rc=0
  err=$(cd "$root" && "$@" 2>&1 >/dev/null) || rc=$?
  if [[ $rc -ne 2 ]]; then
    echo "FAIL ($what): exit code $rc, expected 2"; status=1
  fi
  if grep -Eiq 'terminate|abort|core dumped|segmentation|AddressSanitizer|runtime error|internal error|stack trace|backtrace' <<<"$err"; then
    echo "FAIL ($what): stderr looks like a crash"; status=1
  fi
  # The root line comes first (every command that reads the tree names it), then the error.
  if [[ "$(head -n 1 <<<"$err")" != "specbench: root $root" ]]; then
    echo "FAIL ($what): stderr does not start with the root line 'specbench: root $root'"
    status=1
  fi
  local first
  first=$(grep -v '^specbench: root ' <<<"$err" | head -n 1)
  first=${first//"$spec_path"/FILE}
  if [[ "$first" != "$expected" ]]; then
    echo "FAIL ($what): first line of stderr differs"
    echo "  expected: $expected"
    echo "  actual:   $first"
    status=1
  fi
  local after
  after=$(snapshot)
  if [[ "$after" != "$before" ]]; then
    echo "FAIL ($what): the tree under the root changed:"
    diff <(echo "$before") <(echo "$after") | head -20 || true
    status=1
  fi
  echo "--- stderr ($what) ---"
  echo "$err" | head -n 5
}

check_run "explicit spec" "$root/specs/$name" -- "$specbench" gen --root "$root" "$root/specs/$name"
check_run "all specs" "$root/specs/$name" -- "$specbench" gen --root "$root"

exit $status
