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
# The public headers in the dialects users build with, warnings as errors:
# struct hs_event's unnamed members (C11) failed C99 and C++ -pedantic
hdr_src='#include <heapscope/heapscope.h>
#include <heapscope/reader.h>
int main(void) { struct hs_event ev; ev.ptr = 1; ev.rss = 2; return (int)ev.ptr; }'
for lang in c:gcc:c99 c:gcc:c11 c++:g++:c++11 c++:g++:c++17 c++:clang++:c++17; do
	IFS=: read -r x cc std <<<"$lang"
	if ! command -v "$cc" >/dev/null; then
		echo "FAIL headers/$cc-$std: $cc is not installed"
		continue
	fi
	if err=$(printf '%s\n' "$hdr_src" | "$cc" -x "$x" -std="$std" -Wall -Wextra -Wpedantic -Werror -Iinclude -fsyntax-only - 2>&1); then
		echo "ok headers/$cc-$std"
	else
		echo "FAIL headers/$cc-$std: $(printf '%s\n' "$err" | grep -m1 error)"
	fi
done
exit 0
