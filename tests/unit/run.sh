#!/bin/bash
# run.sh - builds the unit tests into $BUILD/tests/unit and runs them.
# Stdout carries only "ok NAME" / "FAIL NAME: why" lines; a test that does not
# build gives "FAIL build-NAME: ...", one that crashes "FAIL run-NAME: ...".
# Exits 0 even when checks fail: the top-level runner counts the lines.
# SANITIZE=1 builds the tests with -fsanitize=address,undefined.
set -u
cd "$(dirname "$0")/../.." || exit 0
BUILD="${BUILD:-build}"
CC="${CC:-cc}"
out="$BUILD/tests/unit"
lib="$BUILD/libheapscope-reader.a"
mkdir -p "$out"

cflags=(-std=c11 -Wall -Wextra -Werror -Iinclude -Isrc -O1 -g)
# shellcheck disable=SC2054
[ "${SANITIZE:-0}" = 1 ] && cflags+=(-fsanitize=address,undefined -fno-omit-frame-pointer)
libs=$(pkg-config --libs libdw libzstd 2>/dev/null || echo "-ldw -lelf -lzstd")

for src in tests/unit/test_*.c; do
	name=$(basename "$src" .c)
	name=${name#test_}
	bin="$out/$name"
	if [ ! -f "$lib" ]; then
		echo "FAIL build-$name: $lib is missing (run make first)"
		continue
	fi
	# shellcheck disable=SC2086
	if ! err=$("$CC" "${cflags[@]}" -o "$bin" "$src" "$lib" $libs -liberty -lstdc++ -lm -lpthread 2>&1); then
		echo "$err" >&2
		first=$(printf '%s\n' "$err" | grep -m1 -E 'error|undefined' || printf '%s\n' "$err" | head -n1)
		echo "FAIL build-$name: ${first:-compiler failed}"
		continue
	fi
	log=$(mktemp)
	(cd "$out" && TMPDIR="${TMPDIR:-/tmp}" timeout 60 "./$name") >"$log" 2>"$log.err"
	rc=$?
	grep -E '^(ok|FAIL) ' "$log"
	grep -vE '^(ok|FAIL) ' "$log" >&2
	cat "$log.err" >&2
	if [ "$rc" -ne 0 ]; then
		why="exited with status $rc"
		[ "$rc" -eq 124 ] && why="timed out after 60 s"
		[ "$rc" -gt 128 ] && [ "$rc" -ne 124 ] && why="killed by signal $((rc - 128))"
		echo "FAIL run-$name: $why"
	fi
	rm -f "$log" "$log.err"
done
exit 0
