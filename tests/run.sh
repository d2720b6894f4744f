#!/bin/bash
# run.sh - runs every test suite and ends with "N passed, N failed"
# Each suite prints one line per check: "ok NAME" or "FAIL NAME: why".
set -u
cd "$(dirname "$0")/.."
export BUILD="${BUILD:-build}"
# the suites' inflated debug files (src/format/debuginfo.c) stay in the build, not in the user's ~/.cache
case $BUILD in /*) export HEAPSCOPE_CACHE_DIR="${HEAPSCOPE_CACHE_DIR:-$BUILD/cache}" ;;
*) export HEAPSCOPE_CACHE_DIR="${HEAPSCOPE_CACHE_DIR:-$PWD/$BUILD/cache}" ;; esac
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run_suite() {
	local name=$1; shift
	if [ ! -x "$1" ]; then
		echo "FAIL suite-$name: $1 is missing" | tee -a "$log"
		return
	fi
	local out rc
	out=$(mktemp)
	echo "== $name" >&2
	"$@" >"$out" 2>&1
	rc=$?
	grep -E '^(ok|FAIL) ' "$out" | tee -a "$log"
	if [ "$rc" -ne 0 ]; then
		tail -n 20 "$out" >&2
		echo "FAIL suite-$name: exited with status $rc" | tee -a "$log"
	fi
	rm -f "$out"
}

run_suite unit tests/unit/run.sh
run_suite fuzz tests/fuzz/run.sh "${FUZZ_SECONDS:-20}"
run_suite integration tests/integration/run.sh
run_suite unwind tests/integration/unwind.sh
run_suite api tests/integration/api.sh
run_suite analysis tests/analysis/run.sh
run_suite web tests/web/api.sh
run_suite browser tests/web/e2e.sh

passed=$(grep -c '^ok ' "$log")
failed=$(grep -c '^FAIL ' "$log")
echo
grep '^FAIL ' "$log" || true
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
