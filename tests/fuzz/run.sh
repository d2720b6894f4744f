#!/bin/bash
# run.sh [SECONDS] - builds the fuzz targets with clang (libFuzzer + ASan + UBSan,
# the sources they reach compiled with the same flags), seeds a corpus and
# fuzzes: fuzz_reader (the trace reader) for SECONDS (default 30), then
# fuzz_analysis (report, the allocation table and the streaming pass over the
# events the reader lets through, which must agree) for half as long, and
# fuzz_ehframe (the tracer's unwind-table reader, on segment bytes it must
# never read past) for a quarter.
# Stdout: "ok fuzz-NAME (N runs, M new inputs kept)" or "FAIL fuzz-NAME:
# <summary>, reproducer <path>" per target. Exits 0 either way.
# Every reproducer kept in tests/fuzz/crashes/ (reader) and
# tests/fuzz/crashes-analysis/ is replayed first, one "ok/FAIL
# fuzz-NAME-repro-FILE" line each. New crashing inputs land in
# $BUILD/tests/fuzz/artifacts/ (move the ones worth keeping to the crashes
# directories); the grown corpora stay in $BUILD/tests/fuzz/corpus* for later
# runs, merged down to the inputs that add coverage once they grow past a cap.
set -u
cd "$(dirname "$0")/../.." || exit 0
SECONDS_TO_RUN="${1:-30}"
BUILD="${BUILD:-build}"
CLANG="${CLANG:-clang}"
out="$BUILD/tests/fuzz"
mkdir -p "$out/obj" "$out/seeds" "$out/artifacts"
# fuzz_analysis symbolizes: inflated debug files go to the build, not to ~/.cache
case $out in /*) cache=$out/cache ;; *) cache=$PWD/$out/cache ;; esac
export HEAPSCOPE_CACHE_DIR="${HEAPSCOPE_CACHE_DIR:-$cache}"

fail() { echo "FAIL fuzz-reader: $*"; exit 0; }

command -v "$CLANG" >/dev/null || fail "$CLANG not found"
zcflags=$(pkg-config --cflags libzstd libdw 2>/dev/null)
libs=$(pkg-config --libs libdw libzstd 2>/dev/null || echo "-ldw -lelf -lzstd")
# shellcheck disable=SC2054
san=(-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
# shellcheck disable=SC2206
cflags=(-std=c11 -g -O1 -Wall -Wextra -Werror -Wno-unused-command-line-argument -Iinclude -Isrc $zcflags)

objs=()
# the reader's library as the Makefile builds it (a listed subset missed keyed.c when it came)
# and the renderers fuzz_analysis writes with (flame.c twice: objects named by directory too)
for src in src/common/crc32c.c src/common/shellword.c src/format/*.c src/analysis/*.c src/render/*.c; do
	o="$out/obj/$(basename "$(dirname "$src")")-$(basename "$src" .c).o"
	if [ ! -f "$o" ] || [ "$src" -nt "$o" ] || [ tests/fuzz/run.sh -nt "$o" ] ||
		[ -n "$(find src/format src/common src/analysis src/render include -name '*.h' -newer "$o" 2>/dev/null)" ]; then
		err=$("$CLANG" "${cflags[@]}" "${san[@]/fuzzer/fuzzer-no-link}" -c "$src" -o "$o" 2>&1) ||
			{ echo "$err" >&2; fail "cannot compile $src: $(echo "$err" | grep -m1 error)"; }
	fi
	objs+=("$o")
done
for target in fuzz_reader fuzz_analysis; do
	# shellcheck disable=SC2086
	err=$("$CLANG" "${cflags[@]}" "${san[@]}" -o "$out/$target" "tests/fuzz/$target.c" "${objs[@]}" \
		$libs -liberty -lstdc++ -lm -lpthread 2>&1) || { echo "$err" >&2; fail "cannot build $target: $(echo "$err" | grep -m1 error)"; }
done
err=$("$CLANG" "${cflags[@]}" "${san[@]}" -o "$out/fuzz_ehframe" tests/fuzz/fuzz_ehframe.c src/common/ehframe.c 2>&1) ||
	{ echo "$err" >&2; fail "cannot build fuzz_ehframe: $(echo "$err" | grep -m1 error)"; }
rm -rf "$out/seeds-ehframe"
python3 tests/fuzz/ehframe_seeds.py "$out/seeds-ehframe" || fail "ehframe_seeds.py failed"

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
	# sampled: fractional weights, which the folded lines round to their total
	f="$out/rec-${#recorded[@]}.hst"
	"$BUILD/heapscope" record --sample 1K -o "$f" -- /bin/ls -l / >/dev/null 2>&1 && [ -s "$f" ] && recorded+=("$f")
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

# fuzz NAME SECONDS CRASHDIR CAP [SEEDS DICT]: replays the kept reproducers, then fuzzes
# (first merging the kept corpus down to the inputs that add coverage once it
# holds more than CAP: a grown corpus took the analysis target's whole time
# to replay, 1,672 inputs in 15 s, and left none for new ones)
fuzz() {
	local name=$1 secs=$2 crashes=$3 cap=$4 seeds=${5:-$out/seeds} dict=${6-tests/fuzz/reader.dict}
	local target=$out/fuzz_$1 log=$out/fuzz-$1.log rc runs added art c
	# the reproducers we keep must stay fixed once fixed: replay them first
	for c in "$crashes"/crash-* "$crashes"/leak-* "$crashes"/oom-* "$crashes"/timeout-*; do
		[ -f "$c" ] || continue
		if ! "$target" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 "$c" >"$out/replay.log" 2>&1; then
			echo "FAIL fuzz-$name-repro-$(basename "$c"): $(summarize "$out/replay.log"), reproducer $c"
		else
			echo "ok fuzz-$name-repro-$(basename "$c")"
		fi
	done
	mkdir -p "$out/corpus-$name"
	if [ "$(find "$out/corpus-$name" -type f | wc -l)" -gt "$cap" ]; then
		rm -rf "$out/corpus-$name.min" && mkdir -p "$out/corpus-$name.min"
		if "$target" -merge=1 "$out/corpus-$name.min" "$out/corpus-$name" -max_len=65536 -timeout=10 \
			-rss_limit_mb=2048 -malloc_limit_mb=1024 >"$out/merge-$name.log" 2>&1; then
			rm -rf "$out/corpus-$name" && mv "$out/corpus-$name.min" "$out/corpus-$name"
		else
			rm -rf "$out/corpus-$name.min"
		fi
	fi
	"$target" "$out/corpus-$name" "$seeds" -max_total_time="$secs" -max_len=65536 -timeout=10 \
		-rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$out/artifacts/" \
		${dict:+-dict="$dict"} >"$log" 2>&1
	rc=$?
	runs=$(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')
	if [ -z "$runs" ]; then
		runs=$(grep -oE '^#[0-9]+' "$log" | tail -n1 | tr -d '#')
	fi
	added=$(grep -m1 -oE 'stat::new_units_added: *[0-9]+' "$log" | grep -oE '[0-9]+$')
	if [ "$rc" -eq 0 ]; then
		echo "ok fuzz-$name (${runs:-0} runs, ${added:-0} new inputs kept)"
	else
		art=$(grep -m1 -oE "Test unit written to [^ ]+" "$log" | sed 's/Test unit written to //')
		tail -n 40 "$log" >&2
		echo "FAIL fuzz-$name: $(summarize "$log") after ${runs:-?} runs, reproducer ${art:-none} (log $log)"
	fi
}

fuzz reader "$SECONDS_TO_RUN" tests/fuzz/crashes 10000
fuzz analysis "$(( (SECONDS_TO_RUN + 1) / 2 ))" tests/fuzz/crashes-analysis 800
fuzz ehframe "$(( (SECONDS_TO_RUN + 3) / 4 ))" tests/fuzz/crashes-ehframe 2000 "$out/seeds-ehframe" ""
exit 0
