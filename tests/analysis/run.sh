#!/usr/bin/env bash
# run.sh - tests of the filter engine and the analysis commands (top, flame, leaks, timeline, lifetimes, diff) on programs with known allocation patterns
#
# Run from the repository root: tests/analysis/run.sh (env BUILD=build).
# Prints one line per check, `ok NAME` or `FAIL NAME: why`; always exits 0.
# The programs (progs/) use phases separated by 200 ms sleeps, so time
# windows in the middle of a pause are exact whatever the machine's speed.
set -u

ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) BD=$BUILD ;; *) BD=$ROOT/$BUILD ;; esac
HS=$BD/heapscope
T=$ROOT/tests/analysis
W=$T/build
mkdir -p "$W"

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; }

# expect NAME WANT GOT
expect() {
    if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "expected $2, got '$3'"; fi
}

# total FIELD TRACE [ARGS...]: a field of the total of 'top --json'
total() {
    local field=$1; shift
    "$HS" top --json "$@" 2>"$W/err" | python3 -c 'import json,sys; print("%.0f" % json.load(sys.stdin)["total"][sys.argv[1]])' "$field" 2>/dev/null \
        || echo "error: $(head -c 200 "$W/err")"
}

# row FIELD NAME TRACE [ARGS...]: a field of the row called NAME
row() {
    local field=$1 name=$2; shift 2
    "$HS" top --json -n 0 "$@" 2>"$W/err" | python3 -c '
import json, sys
rows = [r for r in json.load(sys.stdin)["rows"] if r["name"] == sys.argv[2]]
print("%.0f" % rows[0][sys.argv[1]] if rows else "no row " + sys.argv[2])' "$field" "$name" 2>/dev/null \
        || echo "error: $(head -c 200 "$W/err")"
}

# folded_sum TRACE [ARGS...]: sum of the weights of 'flame --folded'
folded_sum() {
    "$HS" flame --folded "$@" 2>"$W/err" | awk '{ s += $NF } END { printf "%.0f\n", s }'
}

if [ ! -x "$HS" ]; then
    fail build "$HS is missing; run make first"
    exit 0
fi

# ------------------------------------------------------------ programs
if gcc -std=gnu11 -g -O0 -fno-omit-frame-pointer -pthread -o "$W/phases" "$T/progs/phases.c" 2>"$W/cc.log" &&
    g++ -g -O0 -fno-omit-frame-pointer -o "$W/newer" "$T/progs/newer.cpp" 2>>"$W/cc.log"; then
    ok build-progs
else
    fail build-progs "$(head -c 300 "$W/cc.log")"
    exit 0
fi
rm -f "$W"/*.hst
if "$HS" record -o "$W/phases.hst" -- "$W/phases" >"$W/phases.out" 2>"$W/record.log" &&
    "$HS" record -o "$W/newer.hst" -- "$W/newer" >/dev/null 2>>"$W/record.log"; then
    ok record
else
    fail record "$(head -c 300 "$W/record.log")"
    exit 0
fi
P=$W/phases.hst
TID=$(sed -n 's/^producer tid //p' "$W/phases.out")

# ------------------------------------------------------------ fate
expect leaked-count 1000 "$(total calls "$P" --leaked --through leak_1000)"
expect leaked-bytes 64000 "$(total leaked_bytes "$P" --leaked --through leak_1000)"
expect leaked-by-function 1000 "$(row calls make_node "$P" --leaked --by function)"
expect temporary-count 5000 "$(total calls "$P" --temporary --through temporaries)"
expect temporary-column 5000 "$(row temporary_count temporaries "$P" --by function)"
expect leaked-and-temporary-is-empty 0 "$(total calls "$P" --leaked --temporary)"

# ------------------------------------------------------------ time
expect live-at-300ms 1350 "$(total calls "$P" --live-at 300ms)"
expect live-at-peak 1350 "$(total calls "$P" --live-at peak)"
expect peak-column-is-live-at-peak "$(total bytes "$P" --live-at peak)" "$(total peak_bytes "$P")"
expect live-at-500ms 1050 "$(total calls "$P" --live-at 500ms)"
expect live-between 1350 "$(total calls "$P" --live-between 250ms 350ms)"
expect allocated-between 300 "$(total calls "$P" --allocated-between 100ms 300ms)"
expect allocated-between-percent 1050 "$(total calls "$P" --allocated-between 0% 9%)"
expect freed-between 300 "$(total calls "$P" --freed-between 350ms 450ms --size-min 128 --size-max 128)"
expect live-at-end 1001 "$(total calls "$P" --live-at end)"
expect queue-backlog-live 100 "$(total calls "$P" --live-at 760ms --through enqueue)"
expect queue-lifetime-min 100 "$(total calls "$P" --lifetime-min 150ms --through enqueue)"
expect queue-lifetime-max 50 "$(total calls "$P" --lifetime-max 100ms --through enqueue)"
expect leaked-or-freed-after 1050 "$(total calls "$P" --leaked-or-freed-after 98% --lifetime-min 2% --not-through pthread_create)"
expect freed-at-exit 50 "$(total calls "$P" --leaked-or-freed-after 98% --temporary --lifetime-min 2%)"

# ------------------------------------------------------------ where, size, thread
expect size-range 1000 "$(total calls "$P" --size-min 64 --size-max 64)"
expect size-units 50 "$(total calls "$P" --size-min 0.25K --size-max 0.25KiB)"
expect through-function 300 "$(total calls "$P" --through '^hold_300$')"
expect through-file 6501 "$(total calls "$P" --through '/phases\.c$')"
expect through-hidden-frame 150 "$(total calls "$P" --through '^start_thread$')"
expect not-through 6051 "$(total calls "$P" --not-through '^(hold_300|enqueue)$')"
expect alloc-site 1000 "$(total calls "$P" --alloc-site '^make_node$')"
expect alloc-site-not-caller 0 "$(total calls "$P" --alloc-site '^leak_1000$')"
expect hide-moves-site 1000 "$(row calls leak_1000 "$P" --by function --hide '^make_node$')"
LINE=$(grep -n 'void \*p = malloc(64)' "$T/progs/phases.c" | cut -d: -f1)
expect by-line "1000" "$(row calls "make_node  phases.c:$LINE" "$P" --by line)"
expect thread 150 "$(total calls "$P" --thread "$TID")"
expect callers-regex 1000 "$(row calls leak_1000 "$P" --by function --callers '^make_node$')"
expect callers-row 5000 "$(row calls main "$P" --by function --sort calls --callers 1)"
expect cxx-operator-new-hidden 10 "$(row calls cxx_site "$W/newer.hst" --by function)"
expect cxx-alloc-site 10 "$(total calls "$W/newer.hst" --alloc-site cxx_site)"

# ------------------------------------------------------------ text output
(cd "$W" && "$HS" top phases.hst --by function) >"$W/top.txt" 2>&1
if [ "$(awk 'length > 80' "$W/top.txt" | wc -l)" = 0 ] && grep -q 'make_node' "$W/top.txt"; then
    ok top-text-80-columns
else
    fail top-text-80-columns "see $W/top.txt"
fi
# a name of 18 bytes: the row's figures and its two spaces leave 17 on the line
cp "$W/newer" "$W/newer_18_charsname"
if "$HS" record -o "$W/n18.hst" -- "$W/newer_18_charsname" >/dev/null 2>>"$W/record.log" &&
    (cd "$W" && "$HS" top n18.hst --by library) >"$W/top-lib.txt" 2>&1 &&
    [ "$(awk 'length > 80' "$W/top-lib.txt" | wc -l)" = 0 ] && grep -q '^       newer_18_charsname$' "$W/top-lib.txt"; then
    ok top-text-80-columns-name-at-the-edge
else
    fail top-text-80-columns-name-at-the-edge "see $W/top-lib.txt"
fi
# the filter as given (each value as a shell reads it back), wrapped under itself
LONGRE='^(leak_1000|a_function_name_long_enough_to_need_a_line_of_its_own)$'
for c in top leaks; do
    (cd "$W" && "$HS" $c phases.hst --through "$LONGRE" --size-min 64) >"$W/$c-filter.txt" 2>&1
done
(cd "$W" && "$HS" diff phases.hst phases.hst --through "$LONGRE" --size-min 64) >"$W/diff-filter.txt" 2>&1
why=
for c in top leaks diff; do
    [ -z "$(awk 'length > 80' "$W/$c-filter.txt")" ] || why="$why $c: wider than 80 columns;"
    sed -n '/^filter     /,/^[a-z]/p' "$W/$c-filter.txt" | sed '$d' | tr -s ' \n' ' ' |
        grep -qxF "filter --through '$LONGRE' --size-min 64 " || why="$why $c: no filter line as given;"
done
if [ -z "$why" ]; then ok text-filter-line-80-columns; else fail text-filter-line-80-columns "$why see $W/*-filter.txt"; fi
(cd "$W" && "$HS" top phases.hst) >"$W/top-bt.txt" 2>&1
if [ "$(awk 'length > 80' "$W/top-bt.txt" | wc -l)" = 0 ] && grep -q 'leak_1000  phases.c' "$W/top-bt.txt"; then
    ok top-text-backtraces
else
    fail top-text-backtraces "see $W/top-bt.txt"
fi
# no line of text ends in spaces (diff's heading padded its last column to 24)
(cd "$W" && "$HS" report phases.hst) >"$W/report-text.txt" 2>&1
why=
for t in top-filter leaks-filter diff-filter top-bt report-text; do
    n=$(grep -c ' $' "$W/$t.txt")
    [ "$n" = 0 ] || why="$why $t: $n lines end in a space, the first: '$(grep -m1 ' $' "$W/$t.txt")';"
done
if [ -z "$why" ]; then ok text-no-trailing-spaces; else fail text-no-trailing-spaces "$why see $W/*.txt"; fi

# ------------------------------------------------------------ folded totals equal top's
for filter in "" "--leaked" "--through enqueue" "--live-between 250ms 350ms" "--size-min 100"; do
    name=${filter:-none}; name=${name// /_}
    # shellcheck disable=SC2086
    expect "folded-bytes-total[$name]" "$(total bytes "$P" $filter)" "$(folded_sum "$P" $filter)"
    # shellcheck disable=SC2086
    expect "folded-count-total[$name]" "$(total calls "$P" $filter)" "$(folded_sum "$P" --weight count $filter)"
done
expect folded-leaked-total "$(total leaked_bytes "$P")" "$(folded_sum "$P" --weight leaked)"
expect folded-live-peak-total "$(total peak_bytes "$P")" "$(folded_sum "$P" --weight live)"
expect folded-live-at-total "$(total bytes "$P" --live-at 760ms)" "$(folded_sum "$P" --weight live --at 760ms)"
expect folded-up-total "$(total bytes "$P")" "$(folded_sum "$P" --direction up)"
expect folded-cxx-total "$(total bytes "$W/newer.hst")" "$(folded_sum "$W/newer.hst")"
if "$HS" record --sample 4K -o "$W/sampled.hst" -- "$W/phases" >/dev/null 2>>"$W/record.log"; then
    expect folded-sampled-bytes-total "$(total bytes "$W/sampled.hst")" "$(folded_sum "$W/sampled.hst")"
    expect folded-sampled-count-total "$(total calls "$W/sampled.hst" --temporary)" "$(folded_sum "$W/sampled.hst" --weight count --temporary)"
else
    fail record-sampled "$(tail -c 300 "$W/record.log")"
fi
"$HS" flame --folded "$P" >"$W/folded.txt" 2>&1
if grep -qx 'main;leak_1000;make_node 64000' "$W/folded.txt" && ! grep -qv '^[^ ;][^;]*\(;[^;]\+\)* [0-9]\+$' "$W/folded.txt"; then
    ok folded-format
else
    fail folded-format "see $W/folded.txt"
fi
# in byte order of their text, one line per text (as stackcollapse writes them): three producer threads' calls
# from three lines of one function were three lines 'producer;enqueue 2400'
for args in "phases.hst" "phases.hst --direction up" "newer.hst" "sampled.hst --weight count"; do
    # shellcheck disable=SC2086
    (cd "$W" && "$HS" flame --folded $args 2>/dev/null) | sed 's/ [0-9]*$//' >"$W/folded-text.txt"
    if [ -s "$W/folded-text.txt" ] && LC_ALL=C sort -c -u "$W/folded-text.txt" 2>"$W/sort.err"; then
        ok "folded-sorted-unique[${args// /_}]"
    else
        fail "folded-sorted-unique[${args// /_}]" "$(head -c 200 "$W/sort.err")"
    fi
done

# ------------------------------------------------------------ SVG
wellformed() {
    python3 -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])' "$1" 2>&1 | tail -n 1
}
i=0
for args in "" "--direction up" "--weight live --at peak" "--weight count --through enqueue" "--weight leaked" "--thread 1"; do
    i=$((i + 1))
    name=${args:-default}; name=${name// /_}
    # shellcheck disable=SC2086
    if "$HS" flame "$P" -o "$W/flame$i.svg" $args 2>"$W/err"; then
        msg=$(wellformed "$W/flame$i.svg")
        if [ -z "$msg" ]; then ok "svg-wellformed[$name]"; else fail "svg-wellformed[$name]" "$msg"; fi
    else
        fail "svg-wellformed[$name]" "$(head -c 200 "$W/err")"
    fi
done
if grep -q '<title>make_node' "$W/flame1.svg" && grep -q "phases.c:$LINE" "$W/flame1.svg" && grep -q 'Search' "$W/flame1.svg"; then
    ok svg-details
else
    fail svg-details "no title/file:line/search in $W/flame1.svg"
fi
if command -v node >/dev/null; then
    sed -n '/<!\[CDATA\[/,/\]\]>/p' "$W/flame1.svg" | sed '1d;$d' >"$W/flame.js"
    if node "$T/svgdom.js" "$W/flame1.svg" >"$W/svgdom.out" 2>&1; then
        ok svg-script
    else
        fail svg-script "$(tail -n 3 "$W/svgdom.out")"
    fi
fi

# ------------------------------------------------------------ leaks (progs/leaky.c: the five patterns of reference 003)
if gcc -std=gnu11 -g -O0 -fno-omit-frame-pointer -o "$W/leaky" "$T/progs/leaky.c" 2>"$W/cc.log" &&
    "$HS" record -o "$W/leaky.hst" -- "$W/leaky" >/dev/null 2>"$W/record.log" &&
    "$HS" record -o "$W/leaky2.hst" -- "$W/leaky" 2 >/dev/null 2>>"$W/record.log"; then
    ok record-leaky
else
    fail record-leaky "$(head -c 300 "$W/cc.log" "$W/record.log")"
fi
L=$W/leaky.hst
# site FIELD FUNCTION TRACE [ARGS...]: a field of the 'leaks --json --all' site whose innermost frame is FUNCTION
site() {
    local field=$1 fn=$2; shift 2
    "$HS" leaks --json --all -n 0 "$@" 2>"$W/err" | python3 -c '
import json, sys
s = [s for s in json.load(sys.stdin)["sites"] if s["frames"] and s["frames"][0]["function"] == sys.argv[2]]
v = s[0][sys.argv[1]] if s else "no site " + sys.argv[2]
print("%.0f" % v if isinstance(v, float) else v)' "$field" "$fn" 2>/dev/null || echo "error: $(head -c 200 "$W/err")"
}
expect verdict-linear-leak "leak: growing" "$(site verdict linear_leak "$L")"
expect verdict-bounded-cache "bounded" "$(site verdict bounded_cache "$L")"
expect verdict-rare-leak "rare leak" "$(site verdict rare_leak "$L")"
expect verdict-kept-until-exit "freed at exit" "$(site verdict kept_until_exit "$L")"
expect verdict-container "growing container" "$(site verdict container_push "$L")"
expect verdict-queue-temporary "temporary" "$(site verdict enqueue "$L")"
expect leaks-linear-leaked 500 "$(site leaked_count linear_leak "$L")"
expect leaks-rare-total 20000 "$(site calls rare_leak "$L")"
expect leaks-rare-leaked 125 "$(site leaked_count rare_leak "$L")"
expect leaks-bounded-leaked 100 "$(site leaked_count bounded_cache "$L")"
expect leaks-exit-freed-end 500 "$(site freed_end_count kept_until_exit "$L")"
expect leaks-filter "leak: growing" "$(site verdict linear_leak "$L" --size-min 100 --size-max 100)"
# the same leak seen only in the first half of the run stops growing there
expect leaks-filter-time "bounded" "$(site verdict linear_leak "$L" --allocated-between 0% 50%)"
# progs/cache.c: kept blocks all freed at exit. A cache that replaces entries
# at random keeps some of them 2% of the run: bounded, not a rare leak; a
# rare leak hidden by the cleanup stays one
if gcc -std=gnu11 -g -O0 -fno-omit-frame-pointer -o "$W/cache" "$T/progs/cache.c" 2>"$W/cc.log" &&
    "$HS" record -o "$W/cache.hst" -- "$W/cache" >/dev/null 2>"$W/record.log"; then
    expect verdict-random-cache "bounded" "$(site verdict random_cache "$W/cache.hst")"
    expect verdict-rare-kept-until-exit "rare leak" "$(site verdict rare_kept "$W/cache.hst")"
else
    for c in verdict-random-cache verdict-rare-kept-until-exit; do
        fail $c "$(head -c 300 "$W/cc.log" "$W/record.log")"
    done
fi
"$HS" leaks "$L" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join(s["frames"][0]["function"] for s in d["sites"][:2]), d["suspects"])' >"$W/leaks-rank.txt" 2>&1
expect leaks-ranking "kept_until_exit linear_leak 5" "$(cat "$W/leaks-rank.txt")"
(cd "$W" && "$HS" leaks leaky.hst) >"$W/leaks.txt" 2>&1
if [ "$(awk 'length > 80' "$W/leaks.txt" | wc -l)" = 0 ] && grep -q 'rare leak' "$W/leaks.txt" && ! grep -q 'enqueue' "$W/leaks.txt"; then
    ok leaks-text
else
    fail leaks-text "see $W/leaks.txt"
fi

# ------------------------------------------------------------ timeline
# csv_check NAME "TIMELINE OPTIONS" FILTERS...: at three moments, the groups plus 'other' equal 'top --live-at' with the same filter
csv_check() {
    local name=$1 opts=$2; shift 2
    # shellcheck disable=SC2086
    if ! "$HS" timeline "$L" --csv --points 101 $opts "$@" >"$W/tl.csv" 2>"$W/err"; then
        fail "$name" "$(head -c 200 "$W/err")"; return
    fi
    local bad=""
    for n in 25 60 90; do
        read -r ns sum heap < <(python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
r = rows[int(sys.argv[2]) + 1]
print(round(float(r[0]) * 1e9), sum(int(v) for v in r[3:]), r[1])' "$W/tl.csv" "$n")
        want=$(total bytes "$L" --live-at "${ns}ns" "$@")
        [ "$sum" = "$want" ] || bad="$bad at ${ns}ns: series sum $sum, top $want;"
        [ $# -gt 0 ] || [ "$heap" = "$want" ] || bad="$bad heap $heap;"
    done
    if [ -z "$bad" ]; then ok "$name"; else fail "$name" "$bad"; fi
}
csv_check timeline-csv-sums ""
csv_check timeline-csv-sums-filtered "--top 1" --through 'enqueue|linear_leak'
csv_check timeline-csv-sums-by-function "--by function --top 3" --leaked-or-freed-after 50%
expect timeline-csv-header 'time_s,heap,rss,"linear_leak",other' "$(cd "$W" && "$HS" timeline leaky.hst --csv --by function --top 1 --leaked | head -n 1)"
if "$HS" timeline "$L" -o "$W/timeline.svg" --top 5 2>"$W/err"; then
    msg=$(wellformed "$W/timeline.svg")
    if [ -z "$msg" ]; then ok svg-wellformed[timeline]; else fail svg-wellformed[timeline] "$msg"; fi
    if grep -q '>half way</text>' "$W/timeline.svg" && grep -q '>drain</text>' "$W/timeline.svg" && grep -q 'MiB\|KiB' "$W/timeline.svg"; then
        ok timeline-markers
    else
        fail timeline-markers "no marker labels or byte units in $W/timeline.svg"
    fi
else
    fail svg-wellformed[timeline] "$(head -c 200 "$W/err")"
fi
if command -v chromium >/dev/null; then
    rm -f "$W/timeline.png"
    chromium --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run \
        --user-data-dir="$(mktemp -d)" --screenshot="$W/timeline.png" --window-size=1200,800 "$W/timeline.svg" >/dev/null 2>&1
    if [ -s "$W/timeline.png" ]; then ok svg-renders[timeline]; else fail svg-renders[timeline] "chromium wrote no PNG"; fi
else
    ok "svg-renders[timeline] (skipped: no chromium)"
fi

# ------------------------------------------------------------ lifetimes
if "$HS" lifetimes "$L" -o "$W/lifetimes.svg" 2>"$W/err"; then
    msg=$(wellformed "$W/lifetimes.svg")
    if [ -z "$msg" ]; then ok svg-wellformed[lifetimes]; else fail svg-wellformed[lifetimes] "$msg"; fi
    if grep -q 'allocations drawn: one in 2' "$W/lifetimes.svg"; then ok lifetimes-downsampled; else fail lifetimes-downsampled "no note in $W/lifetimes.svg"; fi
else
    fail svg-wellformed[lifetimes] "$(head -c 200 "$W/err")"
fi
"$HS" lifetimes "$L" --tsv --through enqueue >"$W/lifetimes.tsv" 2>"$W/err"
expect lifetimes-tsv-rows 1500 "$(grep -vc '^#' "$W/lifetimes.tsv")"
# the backlog grows by one item per tick: items queued late wait longer than items queued early
expect lifetimes-backlog-grows yes "$(awk '!/^#/ { if ($1 < 0.3) { a += $2; na++ } else if ($1 > 0.7 && $1 < 1.0) { b += $2; nb++ } }
    END { print (nb && na && b / nb > 2 * a / na) ? "yes" : "no: " a / na " vs " b / nb }' "$W/lifetimes.tsv")"
expect lifetimes-leaked-marked 500 "$("$HS" lifetimes "$L" --tsv --through linear_leak 2>/dev/null | awk '$5 == 1' | wc -l)"

# ------------------------------------------------------------ diff
"$HS" diff "$L" "$W/leaky2.hst" --json 2>"$W/err" | python3 -c '
import json, sys
r = json.load(sys.stdin)["rows"][0]
print(r["frames"][0]["function"], r["delta"]["leaked_count"], r["delta"]["leaked_bytes"], r["status"])' >"$W/diff.txt" 2>&1
expect diff-larger-leak "linear_leak 500 50000 both" "$(cat "$W/diff.txt")"
expect diff-same-trace "no site changed" "$("$HS" diff "$L" "$L" 2>&1 | grep -o 'no site changed')"
# sites match by name: two different programs make a long list that means nothing, so diff says so on stderr
expect diff-same-program-quiet "" "$("$HS" diff "$L" "$W/leaky2.hst" 2>&1 >/dev/null)"
expect diff-other-program-warned "diff compares two runs of one program" \
    "$("$HS" diff "$L" "$W/phases.hst" 2>&1 >/dev/null | grep -o 'diff compares two runs of one program')"
# a sampled trace's estimates against a full trace's figures: their error shows as changes
expect diff-other-mode-warned "is a full trace and '$W/sampled.hst' sampled every 4.00 KiB" \
    "$("$HS" diff "$W/phases.hst" "$W/sampled.hst" 2>&1 >/dev/null | grep -o "is a full trace and '$W/sampled.hst' sampled every 4.00 KiB")"
expect diff-by-function "linear_leak" "$("$HS" diff "$L" "$W/leaky2.hst" --by function --sort leaked --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0]["name"])')"
(cd "$W" && "$HS" diff leaky.hst leaky2.hst) >"$W/diff-text.txt" 2>&1
if [ "$(awk 'length > 80' "$W/diff-text.txt" | wc -l)" = 0 ] && grep -q '+48.8 KiB' "$W/diff-text.txt"; then
    ok diff-text
else
    fail diff-text "see $W/diff-text.txt"
fi

# ------------------------------------------------------------ custom analysis in C (docs/examples/queue_lifetimes.c)
EX=$ROOT/docs/examples/queue_lifetimes.c
if gcc -std=c11 -Wall -Wextra -Werror -I"$ROOT/include" -o "$W/queue_lifetimes" "$EX" "$BD/libheapscope-reader.a" \
    $(pkg-config --libs libdw libzstd) -liberty -lstdc++ -lm -lpthread 2>"$W/cc.log"; then
    ok example-builds
    if "$W/queue_lifetimes" "$L" enqueue 0.25 >"$W/example.txt" 2>"$W/err"; then
        # one line per quarter second; the median lifetime grows along with the backlog
        expect example-output yes "$(awk '/^[0-9]/ { n++; med[n] = $4; cnt += $2 } END { print (n >= 4 && cnt == 1500 && med[4] > med[1]) ? "yes" : "no" }' "$W/example.txt")"
    else
        fail example-output "$(head -c 200 "$W/err")"
    fi
else
    fail example-builds "$(head -c 300 "$W/cc.log")"
fi

# ------------------------------------------------------------ streaming pass vs table
# leaks, flame and timeline stream over the trace when the filter allows it; the table
# path (HEAPSCOPE_STREAM=off, and every filter that needs the peak or a
# thread) must give the very same output. must: no silent fallback.
same_both() {
    local name=$1; shift
    HEAPSCOPE_STREAM=must "$HS" "$@" >"$W/stream.out" 2>"$W/stream.err"
    local rs=$?
    HEAPSCOPE_STREAM=off "$HS" "$@" >"$W/table.out" 2>"$W/table.err"
    local rt=$?
    if [ $rs != 0 ] || [ $rt != 0 ]; then
        fail "$name" "exit $rs (stream) / $rt (table): $(head -c 200 "$W/stream.err" "$W/table.err")"
    elif [ ! -s "$W/stream.out" ]; then
        fail "$name" "no output"
    elif cmp -s "$W/stream.out" "$W/table.out"; then
        ok "$name"
    else
        fail "$name" "outputs differ: $(diff "$W/stream.out" "$W/table.out" | head -c 300)"
    fi
}
n=0
for tr in "$L" "$W/leaky2.hst" "$P" "$W/newer.hst" "$W/sampled.hst"; do
    n=$((n + 1))
    same_both "stream-leaks-$n" leaks --json --all -n 0 "$tr"
    same_both "stream-leaks-by-function-$n" leaks --json --all -n 0 --by function "$tr"
    same_both "stream-flame-bytes-$n" flame --folded "$tr"
    same_both "stream-flame-count-$n" flame --folded --weight count "$tr"
    same_both "stream-flame-leaked-$n" flame --folded --weight leaked "$tr"
    same_both "stream-timeline-$n" timeline --json "$tr"
    same_both "stream-timeline-calls-by-line-$n" timeline --csv --sort calls --by line --points 37 "$tr"
done
same_both stream-timeline-filter timeline --json "$L" --live-between 10% 70% --size-min 64
same_both stream-timeline-through timeline --csv "$P" --not-through temporaries --sort leaked
# bytes and counts by backtrace need no fates: the pass pairs no frees (hs_alloctab_scan)
same_both stream-flame-window flame --folded "$L" --allocated-between 10% 60% --size-min 64
same_both stream-flame-through-count flame --folded --weight count "$P" --not-through temporaries --size-max 4096
same_both stream-leaks-size leaks --json --all -n 0 "$L" --size-min 100 --size-max 100
same_both stream-leaks-window leaks --json --all -n 0 "$L" --allocated-between 0% 50%
same_both stream-leaks-live leaks --json --all -n 0 "$L" --live-between 20% 60%
same_both stream-leaks-lifetime leaks --json --all -n 0 "$L" --lifetime-min 1ms --temporary

# the peak amid other events of its instant (a coarse time resolution): the
# blocks live at it are those of the file's order, in every command alike
if gcc -std=c11 -Wall -Wextra -Werror -I"$ROOT/tests/unit" -I"$ROOT/src" -I"$ROOT/include" -o "$W/peakunit" \
    "$T/progs/peakunit.c" "$BD/libheapscope-reader.a" $(pkg-config --libs libdw libzstd) -liberty -lstdc++ -lm \
    -lpthread 2>"$W/cc.log" && "$W/peakunit" "$W/peakunit.hst"; then
    PU=$W/peakunit.hst
    expect peak-unit-report 100000 "$("$HS" report --json "$PU" | python3 -c 'import json,sys; print(json.load(sys.stdin)["peak_heap"]["bytes"])')"
    expect peak-unit-top-column "100000 100000,0" "$("$HS" top --json --sort peak "$PU" | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(round(j["total"]["peak_bytes"]), ",".join(str(round(r["peak_bytes"])) for r in j["rows"]))')"
    expect peak-unit-live-at-peak "1000 100000" "$("$HS" top --json --live-at peak "$PU" | python3 -c '
import json, sys
t = json.load(sys.stdin)["total"]
print(round(t["calls"]), round(t["bytes"]))')"
    expect peak-unit-flame "100000" "$("$HS" flame --folded --weight live --at peak "$PU" | awk '{ s += $NF } END { print s }')"
    same_both peak-unit-timeline timeline --json --sort peak "$PU"
    # peak as a bound of the other time conditions: the same order decides
    expect peak-unit-allocated-until-peak 1050 "$(total calls "$PU" --allocated-between start peak)"
    expect peak-unit-allocated-from-peak 101 "$(total calls "$PU" --allocated-between peak end)"
    expect peak-unit-live-until-peak 1050 "$(total calls "$PU" --live-between start peak)"
    expect peak-unit-live-from-peak 1100 "$(total calls "$PU" --live-between peak end)"
    expect peak-unit-freed-until-peak 50 "$(total calls "$PU" --freed-between start peak)"
    expect peak-unit-freed-from-peak 1100 "$(total calls "$PU" --freed-between peak end)"
    expect peak-unit-leaked-or-freed-after 1100 "$(total calls "$PU" --leaked-or-freed-after peak)"
    # and a time near it stays a time: the whole unit is at or before peak+1us
    expect peak-unit-allocated-until-time 1150 "$(total calls "$PU" --allocated-between start peak+1us)"
else
    fail peak-unit "cannot build or run peakunit: $(head -c 300 "$W/cc.log")"
fi

# a peak made by an event that came late (stamped before a free that comes
# before it in the file): the blocks live at the peak are those of the
# file's order, B and C, not A (freed before C in the file, though after
# C's time), so that they add up to the peak; streaming and the table
# alike, however many blocks went out between (far)
if gcc -std=c11 -Wall -Wextra -Werror -I"$ROOT/tests/unit" -I"$ROOT/src" -I"$ROOT/include" -o "$W/latepeak" \
    "$T/progs/latepeak.c" "$BD/libheapscope-reader.a" $(pkg-config --libs libdw libzstd) -liberty -lstdc++ -lm \
    -lpthread 2>"$W/cc.log" && "$W/latepeak" "$W/latepeak.hst" && "$W/latepeak" far "$W/latepeak-far.hst" &&
    "$W/latepeak" instant "$W/latepeak-instant.hst"; then
    same_both stream-timeline-late-peak timeline --json "$W/latepeak.hst"
    same_both stream-timeline-late-peak-csv timeline --csv --sort peak "$W/latepeak.hst"
    same_both stream-timeline-late-peak-far timeline --json "$W/latepeak-far.hst"
    same_both stream-timeline-late-peak-far-csv timeline --csv --sort peak "$W/latepeak-far.hst"
    for tr in latepeak latepeak-far; do
        expect "late-peak-contributions[$tr]" "250 250 150,100,0" "$("$HS" top --json --sort peak "$W/$tr.hst" | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["peak_heap"]["bytes"], round(j["total"]["peak_bytes"]), ",".join(str(round(r["peak_bytes"])) for r in j["rows"]))')"
    done
    same_both stream-timeline-late-peak-instant timeline --json "$W/latepeak-instant.hst"
else
    fail stream-timeline-late-peak "cannot build or run latepeak: $(head -c 300 "$W/cc.log")"
fi
same_both stream-leaks-through leaks --json --all -n 0 "$L" --not-through rare_leak
same_both stream-flame-through flame --folded "$P" --through make_node --leaked-or-freed-after 50%
same_both stream-flame-live flame --folded "$P" --weight live --at 40%
same_both stream-flame-svg flame -o - "$L" --weight count
# a filter the streaming pass cannot take (the peak) goes to the table: leaks
# must then count what top counts for it (top never streams)
matched() { "$HS" "$@" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["matched_records"])' 2>/dev/null; }
want=$(matched top --json -n 1 "$L" --live-at peak)
expect stream-fallback-peak "${want:-no count from top}" "$(matched leaks --json -n 1 "$L" --live-at peak)"

# ------------------------------------------------------------ errors
# experr NAME PATTERN ARGS...: the command fails and its message matches PATTERN
experr() {
    local name=$1 pat=$2; shift 2
    if "$HS" "$@" >/dev/null 2>"$W/err"; then
        fail "$name" "succeeded"
    elif grep -q -- "$pat" "$W/err"; then
        ok "$name"
    else
        fail "$name" "message: $(head -c 200 "$W/err")"
    fi
}
experr error-time-no-unit "bad time '12' for --live-at; use 1.5s, 250ms" top "$P" --live-at 12
experr error-time-word "bad time 'soon' for --freed-between" top "$P" --freed-between 1s soon
experr error-duration-peak "bad duration 'peak' for --lifetime-min; use" top "$P" --lifetime-min peak
experr error-percent-range "bad time '120%'" top "$P" --live-at 120%
experr error-missing-value "allocated-between needs two times" top "$P" --allocated-between 1s
experr error-size "bad size '4Q' for --size-max; use bytes" top "$P" --size-max 4Q
experr error-regex "bad regex '(' for --through" top "$P" --through '('
experr error-sort "bad value 'size' for --sort" top "$P" --sort size
experr error-flame-output "flame needs '-o OUT.svg'" flame "$P"
experr error-at-weight "--at applies to --weight live" flame "$P" -o "$W/x.svg" --weight bytes --at peak
experr error-callers "no row matches 'nosuchfn' for --callers" top "$P" --callers nosuchfn
experr error-bad-file "cannot open" top "$W/missing.hst"
experr error-leaks-option "unknown option '--frob' for leaks" leaks "$L" --frob
experr error-leaks-bad-file "cannot open" leaks "$W/missing.hst"
experr error-timeline-output "timeline needs '-o OUT.svg'" timeline "$L"
experr error-timeline-top "bad value 'x' for --top" timeline "$L" --csv --top x
experr error-lifetimes-output "lifetimes needs '-o OUT.svg'" lifetimes "$L"
experr error-diff-third "diff takes two traces" diff "$L" "$L" "$L"
experr error-report-two "report takes one trace, got '$L' and '$P'; run it once per trace" report "$L" "$P"
experr error-diff-sort "bad value 'size' for --sort" diff "$L" "$L" --sort size
experr error-not-a-trace "leaky.c" leaks "$T/progs/leaky.c"

# flame --json: the tree's root is top's total, children never outweigh their parent; lifetimes --json: every allocation
"$HS" flame --json "$L" --weight leaked >"$W/flame.json" 2>"$W/err"
got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
def walk(n):
    kids = n.get("children", [])
    if sum(c["value"] for c in kids) > n["value"] + 0.5: bad.append(n["name"])
    if [c["value"] for c in kids] != sorted((c["value"] for c in kids), reverse=True): bad.append(n["name"] + " order")
    for c in kids: walk(c)
walk(d["root"])
names = set()
def names_of(n):
    names.add(n["name"])
    for c in n.get("children", []): names_of(c)
names_of(d["root"])
print(d["schema"], d["weight"], "%.0f" % d["root"]["value"], "linear_leak" in names, bad or "ok")' "$W/flame.json" 2>&1)
expect flame-json "heapscope-flame/1 leaked $(total leaked_bytes "$L") True ok" "$got"
got=$("$HS" lifetimes --json "$P" --through enqueue 2>"$W/err" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["schema"], len(d["allocations"]), d["matched_records"], sum(1 for a in d["allocations"] if a[4]))' 2>&1)
expect lifetimes-json "heapscope-lifetimes/1 $(total calls "$P" --through enqueue) $(total calls "$P" --through enqueue) $(total calls "$P" --through enqueue --leaked)" "$got"
experr error-flame-two-formats "--folded and --json are two formats" flame "$P" --folded --json

# every command that writes a file says where; "-o -" is stdout, as for flame (it made a file called '-')
rm -f ./-
if "$HS" timeline "$P" -o "$W/said.svg" 2>&1 >/dev/null | grep -q "timeline written to '$W/said.svg'" &&
   "$HS" lifetimes "$P" --tsv -o "$W/said.tsv" 2>&1 >/dev/null | grep -q "lifetimes TSV written to '$W/said.tsv'" &&
   "$HS" timeline "$P" --csv -o - 2>/dev/null | head -n 1 | grep -q '^time_s,heap' && [ ! -e ./- ]; then
    ok output-written-said
else
    fail output-written-said "no 'written to' line for timeline/lifetimes -o, or '-o -' wrote a file named '-'"
fi
rm -f ./-

# a range that ends before it starts matched blocks allocated by its end and freed after its start
experr error-range-reversed "the range '350ms 250ms' of --live-between ends before it starts: no allocation matches; give the earlier time first" \
    top "$P" --live-between 350ms 250ms
experr error-range-reversed-percent "the range '90% 10%' of --allocated-between ends before it starts" leaks "$L" --allocated-between 90% 10%
experr error-lifetime-order "lifetime-min '1s' is longer than --lifetime-max '1ms'" top "$P" --lifetime-min 1s --lifetime-max 1ms
experr error-size-order "size-min '100' is more than --size-max '10'" flame --folded "$P" --size-max 10 --size-min 100
# anchors that differ: only the trace tells the order, then nothing matches and stderr says why
expect range-reversed-in-trace 0 "$(total calls "$P" --live-between end-1ms 10%)"
if grep -q "the range 'end-1ms 10%' of --live-between ends before it starts in this trace" "$W/err"; then
    ok range-reversed-in-trace-warns
else
    fail range-reversed-in-trace-warns "stderr: $(head -c 200 "$W/err")"
fi
# the streaming pass prepares the filter itself: its warning too
n=$("$HS" leaks --json "$L" --lifetime-min 50% --lifetime-max 1us 2>"$W/err" | python3 -c 'import json,sys; print(json.load(sys.stdin)["matched_records"])' 2>/dev/null)
if [ "$n" = 0 ] && grep -q "lifetime-min '50%' is longer than --lifetime-max '1us' in this trace" "$W/err"; then
    ok stream-lifetime-order-warns
else
    fail stream-lifetime-order-warns "matched '$n', stderr: $(head -c 200 "$W/err")"
fi
# times from the start are not clamped to the run: past its end, say so
"$HS" top "$P" --live-at 1000s >/dev/null 2>"$W/err"
if grep -q "time '1000s' of --live-at is past the end of the run" "$W/err"; then
    ok time-past-end-warns
else
    fail time-past-end-warns "stderr: $(head -c 200 "$W/err")"
fi
# a lifetime longer than the run matches nothing: say so (it was a silent empty table)
"$HS" top "$P" --lifetime-min 1000s >/dev/null 2>"$W/err"
n=$("$HS" top --json "$P" --lifetime-min 1000s 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"]["calls"])' 2>/dev/null)
if grep -q "duration '1000s' of --lifetime-min is longer than the run" "$W/err" && [ "$n" = 0 ]; then
    ok lifetime-longer-than-run-warns
else
    fail lifetime-longer-than-run-warns "calls '$n', stderr: $(head -c 200 "$W/err")"
fi

# 65,536 backtraces, each its own site: memory follows the sites, not the
# folded trie's nodes (keyed by node, the streaming pass took 475 MB for
# them, the table path 220 MB; a million such backtraces took 4 GB and 11 s)
maxrss() { # command... -> its peak RSS in KiB (stdout and stderr to $W/maxrss.out)
    python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "w"), stderr=subprocess.STDOUT)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$W/maxrss.out" "$@"
}
if gcc -std=gnu11 -g -O0 -fno-omit-frame-pointer -o "$W/manystacks" "$T/progs/manystacks.c" 2>"$W/cc.log" &&
    "$HS" record -o "$W/manystacks.hst" -- "$W/manystacks" 16 >/dev/null 2>&1; then
    why=""
    for m in must off; do
        kb=$(HEAPSCOPE_STREAM=$m maxrss "$HS" leaks --all --json -n 0 "$W/manystacks.hst")
        got=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(len(j["sites"]), round(sum(s["leaked_count"] for s in j["sites"])))' "$W/maxrss.out" 2>/dev/null)
        [ "$got" = "65536 64" ] || why="$why; HEAPSCOPE_STREAM=$m: sites and leaked blocks '$got', want '65536 64' ($(head -c 200 "$W/maxrss.out"))"
        [ -n "$kb" ] && [ "$kb" -lt 150000 ] || why="$why; HEAPSCOPE_STREAM=$m: peak RSS $kb KiB, want under 150,000"
    done
    if [ -z "$why" ]; then ok leaks-memory-follows-sites; else fail leaks-memory-follows-sites "${why#; }"; fi
else
    fail leaks-memory-follows-sites "cannot build or record manystacks: $(head -c 200 "$W/cc.log")"
fi

# a trace of 64 KiB or more runs its command again with glibc's heap on
# transparent huge pages (where the kernel gives them on request, glibc 2.35
# on): the same output, the tunable added to the user's own, and no rerun
# when asked not to, when the user chose the tunable, or for a small trace
execs() { # ENV-ASSIGNMENTS... -- command...: the execve calls and the last one's GLIBC_TUNABLES (the output goes to $W/execs.out)
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    env "${envs[@]}" strace -f -v -s 4096 -e trace=execve -o "$W/strace.log" "$@" >"$W/execs.out" 2>/dev/null
    echo "$(grep -c 'execve(' "$W/strace.log") $(grep 'execve(' "$W/strace.log" | tail -n 1 | grep -o 'GLIBC_TUNABLES=[^"]*' || echo -)"
}
why=""
MS=$W/manystacks.hst
if ! command -v strace >/dev/null; then
    why="strace is missing (make test installs it)"
elif [ "$(stat -c %s "$MS" 2>/dev/null || echo 0)" -lt 65536 ]; then
    why="manystacks.hst is $(stat -c %s "$MS" 2>/dev/null) bytes, want 64 KiB or more"
else
    rerun=2; tun=GLIBC_TUNABLES=glibc.malloc.hugetlb=1
    ldd --version | head -n 1 | grep -Eq ' 2\.(3[5-9]|[4-9][0-9])$' && grep -q '\[madvise\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null ||
        { rerun=1; tun=-; }
    for c in report leaks top "flame --folded" "timeline --csv" "diff $MS"; do
        HEAPSCOPE_HUGE_PAGES=0 "$HS" $c "$MS" >"$W/plain.out" 2>/dev/null
        got=$(execs -u GLIBC_TUNABLES -- "$HS" $c "$MS")
        [ "$got" = "$rerun $tun" ] || why="$why; ${c%% *}: execve calls and tunables '$got', want '$rerun $tun'"
        cmp -s "$W/plain.out" "$W/execs.out" || why="$why; ${c%% *}: output differs from HEAPSCOPE_HUGE_PAGES=0's"
    done
    got=$(execs HEAPSCOPE_HUGE_PAGES=0 -- "$HS" report "$MS")
    [ "${got%% *}" = 1 ] || why="$why; HEAPSCOPE_HUGE_PAGES=0: $got"
    got=$(execs GLIBC_TUNABLES=glibc.malloc.hugetlb=0 -- "$HS" report "$MS")
    [ "$got" = "1 GLIBC_TUNABLES=glibc.malloc.hugetlb=0" ] || why="$why; the user's hugetlb=0: $got"
    want="$rerun GLIBC_TUNABLES=glibc.malloc.check=0"; [ $rerun = 2 ] && want="$want:glibc.malloc.hugetlb=1"
    got=$(execs GLIBC_TUNABLES=glibc.malloc.check=0 -- "$HS" leaks "$MS")
    [ "$got" = "$want" ] || why="$why; the user's own tunable: '$got', want '$want'"
    got=$(execs -u GLIBC_TUNABLES -- "$HS" report "$W/phases.hst")
    [ "${got%% *}" = 1 ] || why="$why; a small trace ($(stat -c %s "$W/phases.hst") bytes): $got"
fi
if [ -z "$why" ]; then ok huge-pages-rerun; else fail huge-pages-rerun "${why#; }"; fi

# the progress line: on a terminal only, once loading has taken its time
# (1 s; HEAPSCOPE_TEST_PROGRESS_AFTER=0 here, as the trace loads at once),
# for every command that reads a trace, and cleared before the output
cat >"$W/ptyrun.py" <<'EOF'
import os, pty, subprocess, sys
m, s = pty.openpty()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=s, stdin=subprocess.DEVNULL)
os.close(s)
out = b""
while True:
    try:
        d = os.read(m, 65536)
    except OSError:
        break
    if not d:
        break
    out += d
p.wait()
sys.stdout.write(out.decode("utf-8", "replace").replace("\r", "<CR>").replace("\x1b[K", "<EL>") + "\n")
EOF
why=""
gcc -O1 -o "$W/pairs" "$T/progs/pairs.c" 2>"$W/cc.log" && "$HS" record -o "$W/pairs.hst" -- "$W/pairs" 1500000 2>"$W/record.log" ||
    why="; cannot record pairs: $(head -c 200 "$W/cc.log" "$W/record.log")"
PT=$W/pairs.hst
for c in report leaks top "flame --folded" "timeline --csv" "lifetimes --tsv" "diff $PT"; do
    [ -s "$PT" ] || break
    got=$(HEAPSCOPE_TEST_PROGRESS_AFTER=0 timeout 60 python3 "$W/ptyrun.py" "$HS" $c "$PT" 2>&1)
    n=$(grep -o "<CR>heapscope: loading $PT: *[0-9]*%" <<<"$got" | wc -l)
    want=1; [ "${c%% *}" = diff ] && want=2
    [ "$(grep -o '<CR><EL>' <<<"$got" | wc -l)" = $want ] && [ "$n" -ge $want ] ||
        why="$why; ${c%% *}: '$(head -c 160 <<<"$got")'"
    # not on a pipe, nor on a terminal before the second
    HEAPSCOPE_TEST_PROGRESS_AFTER=0 "$HS" $c "$PT" 2>&1 >/dev/null | grep -q loading && why="$why; ${c%% *} shows it on a pipe"
    got=$(timeout 60 python3 "$W/ptyrun.py" "$HS" $c "$PT" 2>&1)
    grep -q loading <<<"$got" && why="$why; ${c%% *} shows it before a second"
done
if [ -z "$why" ]; then ok progress-line-on-terminal; else fail progress-line-on-terminal "${why#; }"; fi

# help: 'heapscope help CMD' is 'heapscope CMD --help'; every line fits an 80-column terminal
why=""
"$HS" --help >"$W/help-main.txt" 2>&1 || why="$why; heapscope --help failed"
for c in record report leaks top flame timeline lifetimes diff view dump; do
    grep -q "^  $c " "$W/help-main.txt" || why="$why; --help does not list $c"
    "$HS" help "$c" >"$W/help.$c" 2>&1 || why="$why; help $c failed"
    "$HS" "$c" --help >"$W/help2.$c" 2>&1 || why="$why; $c --help failed"
    head -n 1 "$W/help.$c" | grep -q "^usage: heapscope $c " || why="$why; help $c starts '$(head -n 1 "$W/help.$c")'"
    cmp -s "$W/help.$c" "$W/help2.$c" || why="$why; help $c differs from $c --help"
    long=$(awk -v c="$c" 'length($0) > 80 { print c ": " $0; exit }' "$W/help.$c")
    [ -n "$long" ] && why="$why; wider than 80 columns: $long"
done
long=$(awk 'length($0) > 80 { print; exit }' "$W/help-main.txt")
[ -n "$long" ] && why="$why; --help wider than 80 columns: $long"
"$HS" help nosuch >/dev/null 2>"$W/help.err"
[ $? = 1 ] && grep -q "unknown command 'nosuch'; run 'heapscope --help' for the list" "$W/help.err" || why="$why; help nosuch: $(head -c 200 "$W/help.err")"
if [ -z "$why" ]; then ok help-every-command-80-columns; else fail help-every-command-80-columns "${why#; }"; fi
exit 0
