#!/bin/bash
# run.sh [SECONDS] - builds fuzz_reader with clang (libFuzzer + ASan + UBSan, the
# reader sources compiled with the same flags), seeds a corpus and fuzzes for
# SECONDS (default 30). Stdout: "ok fuzz-reader (N runs)" or
# "FAIL fuzz-reader: <summary>, reproducer <path>". Exits 0 either way.
# Every reproducer kept in tests/fuzz/crashes/ is replayed first, one
# "ok/FAIL fuzz-reader-known-crash-NAME" line each. New crashing inputs land in
# $BUILD/tests/fuzz/artifacts/ (move the ones worth keeping to tests/fuzz/crashes/);
# the grown corpus stays in $BUILD/tests/fuzz/corpus for later runs.
set -u
cd "$(dirname "$0")/../.." || exit 0
SECONDS_TO_RUN="${1:-30}"
BUILD="${BUILD:-build}"
CLANG="${CLANG:-clang}"
out="$BUILD/tests/fuzz"
crashes=tests/fuzz/crashes
mkdir -p "$out/obj" "$out/seeds" "$out/corpus" "$out/artifacts"

fail() { echo "FAIL fuzz-reader: $*"; exit 0; }

command -v "$CLANG" >/dev/null || fail "$CLANG not found"
zcflags=$(pkg-config --cflags libzstd libdw 2>/dev/null)
libs=$(pkg-config --libs libdw libzstd 2>/dev/null || echo "-ldw -lelf -lzstd")
# shellcheck disable=SC2054
san=(-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
# shellcheck disable=SC2206
cflags=(-std=c11 -g -O1 -Wall -Wextra -Werror -Wno-unused-command-line-argument -Iinclude -Isrc $zcflags)

objs=()
for src in src/common/crc32c.c src/format/reader.c src/format/ahead.c src/format/symbolize.c src/format/debuginfo.c src/format/encoder.c src/format/builder.c; do
	o="$out/obj/$(basename "$src" .c).o"
	if [ ! -f "$o" ] || [ "$src" -nt "$o" ] || [ tests/fuzz/run.sh -nt "$o" ] ||
		[ -n "$(find src/format src/common include -name '*.h' -newer "$o" 2>/dev/null)" ]; then
		err=$("$CLANG" "${cflags[@]}" "${san[@]/fuzzer/fuzzer-no-link}" -c "$src" -o "$o" 2>&1) ||
			{ echo "$err" >&2; fail "cannot compile $src: $(echo "$err" | grep -m1 error)"; }
	fi
	objs+=("$o")
done
# shellcheck disable=SC2086
err=$("$CLANG" "${cflags[@]}" "${san[@]}" -o "$out/fuzz_reader" tests/fuzz/fuzz_reader.c "${objs[@]}" \
	$libs -liberty -lstdc++ -lm -lpthread 2>&1) || { echo "$err" >&2; fail "cannot build the target: $(echo "$err" | grep -m1 error)"; }

# seeds: synthetic traces, plus real ones when the CLI is built
# shellcheck disable=SC2086
err=$("$CLANG" "${cflags[@]}" -o "$out/make_corpus" tests/fuzz/make_corpus.c src/format/encoder.c src/format/builder.c src/common/crc32c.c \
	$libs -lpthread 2>&1) || { echo "$err" >&2; fail "cannot build make_corpus: $(echo "$err" | grep -m1 error)"; }
recorded=()
if [ -x "$BUILD/heapscope" ] && [ -f "$BUILD/libheapscope.so" ]; then
	for prog in "/bin/true" "/bin/ls /" "/bin/sh -c :"; do
		f="$out/rec-${#recorded[@]}.hst"
		# shellcheck disable=SC2086
		"$BUILD/heapscope" record -o "$f" -- $prog >/dev/null 2>&1 && [ -s "$f" ] && recorded+=("$f")
	done
fi
"$out/make_corpus" "$out/seeds" "${recorded[@]}" || fail "make_corpus failed"
rm -f "${recorded[@]}"

# "why it failed" from a libFuzzer log: the sanitizer's verdict and the first frame in src/
summarize() {
	local what where
	what=$(grep -m1 -E 'runtime error|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)' "$1" |
		sed -E 's/^==[0-9]+== ?//')
	[ -z "$what" ] && what=$(grep -m1 -E '^SUMMARY' "$1")
	where=$(grep -oE ' in [a-zA-Z_0-9]+ [^ ]*src/[^ ]+' "$1" | grep -vE ' in (xrealloc|hs_strndup) ' | head -n1 |
		sed -E 's/^ in //; s#[^ ]*/(src/)#\1#')
	echo "${what:-crashed}${where:+ (at $where)}"
}

# the reproducers we keep must stay fixed once fixed: replay them first
for c in "$crashes"/crash-* "$crashes"/leak-* "$crashes"/oom-* "$crashes"/timeout-*; do
	[ -f "$c" ] || continue
	if ! "$out/fuzz_reader" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 "$c" >"$out/replay.log" 2>&1; then
		echo "FAIL fuzz-reader-repro-$(basename "$c"): $(summarize "$out/replay.log"), reproducer $c"
	else
		echo "ok fuzz-reader-repro-$(basename "$c")"
	fi
done

log="$out/fuzz.log"
"$out/fuzz_reader" "$out/corpus" "$out/seeds" -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -timeout=10 \
	-rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$out/artifacts/" \
	-dict=tests/fuzz/reader.dict >"$log" 2>&1
rc=$?
runs=$(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')
if [ -z "$runs" ]; then
	runs=$(grep -oE '^#[0-9]+' "$log" | tail -n1 | tr -d '#')
fi
if [ "$rc" -eq 0 ]; then
	echo "ok fuzz-reader (${runs:-0} runs)"
else
	art=$(grep -m1 -oE "Test unit written to [^ ]+" "$log" | sed 's/Test unit written to //')
	tail -n 40 "$log" >&2
	echo "FAIL fuzz-reader: $(summarize "$log") after ${runs:-?} runs, reproducer ${art:-none} (log $log)"
fi
exit 0
