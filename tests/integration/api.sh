#!/bin/bash
# api.sh - a program linked with libheapscope.so drives tracing itself (include/heapscope/heapscope.h)
set -u
cd "$(dirname "$0")/../.."
BUILD="${BUILD:-build}"
HS="$BUILD/heapscope"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! gcc -std=gnu11 -g -O0 -Iinclude -o "$work/api" tests/integration/progs/api.c \
	-L"$BUILD" -lheapscope -Wl,-rpath,"$(cd "$BUILD" && pwd)" 2>"$work/cc.log"; then
	echo "FAIL api/build: $(head -c 300 "$work/cc.log")"
	exit 0
fi
# full mode, then sampled with a mean of 1 byte (every block sampled, each its own weight of 1)
out=$(cd "$work" && env -u HEAPSCOPE_OUTPUT ./api first.hst second.hst 2>&1 &&
	env -u HEAPSCOPE_OUTPUT HEAPSCOPE_SAMPLE=1 ./api sfirst.hst ssecond.hst 2>&1)
rc=$?
if [ $rc -ne 0 ] || [ "$out" != "ok
ok" ]; then
	echo "FAIL api/run: exit $rc, output '$out'"
	exit 0
fi
echo "ok api/run"
for f in first second sfirst ssecond; do
	"$HS" report --json "$work/$f.hst" >"$work/$f.json" 2>"$work/$f.err" || echo "FAIL api/$f-reads: $(head -c 200 "$work/$f.err")"
	"$HS" dump --backtraces "$work/$f.hst" >"$work/$f.txt" 2>&1
done
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
def load(n):
    return json.load(open(f"{w}/{n}.json")), open(f"{w}/{n}.txt").read()
def check(name, cond, why):
    print(f"ok api/{name}" if cond else f"FAIL api/{name}: {why}")
a, at = load("first")
b, bt = load("second")
# the first trace sees exactly first_trace(): 300 mallocs, 100 frees, 200 live at its end
check("first-counts", (a["allocations"], a["frees"], a["leaked"]["count"], a["bytes_allocated"]) == (300, 100, 200, 19200),
      f"expected (300, 100, 200, 19200) got {(a['allocations'], a['frees'], a['leaked']['count'], a['bytes_allocated'])}")
check("first-end", a["end"] == "stop", f"expected end 'stop' got {a['end']!r}")
check("marker", at.count(" marker half-way") == 1 and "not tracing" not in at, "expected one 'half-way' marker")
# the program's text stays one word on its record's line: its newline and escape as $'...' escapes
check("marker-quoted", at.count(" marker $'two\\nlines \\x1b[2J'\n") == 1 and "\x1b" not in at,
      "expected the label 'two<newline>lines <ESC>[2J' as $'two\\nlines \\x1b[2J' on one line")
check("first-sites", "first_trace" in at and "before_start" not in at and "between" not in at,
      "allocations outside first_trace() in the first trace")
# calls are counted while tracing is on only: not before_start()'s nor between()'s
check("first-calls", (a["calls"]["malloc"], a["calls"]["free"], a["calls"]["calloc"]) == (300, 100, 0),
      f"expected malloc/free/calloc calls (300, 100, 0) got {(a['calls']['malloc'], a['calls']['free'], a['calls']['calloc'])}")
# the second: 40 callocs of 128 B, stacks numbered afresh in its own file; its 50
# frees of the first trace's blocks are calls, but of blocks it never saw
check("second-counts", (b["allocations"], b["frees"], b["bytes_allocated"], b["calls"]["calloc"]) == (40, 0, 5120, 40),
      f"expected (40, 0, 5120, 40) got {(b['allocations'], b['frees'], b['bytes_allocated'], b['calls']['calloc'])}")
check("second-calls", (b["calls"]["malloc"], b["calls"]["free"], b["untracked_frees"]) == (0, 50, 50),
      f"expected malloc/free calls and untracked frees (0, 50, 50) got {(b['calls']['malloc'], b['calls']['free'], b['untracked_frees'])}")
# sampled: the same figures; the second trace starts from an empty sampled set,
# so the first trace's blocks are not sampled blocks of the second and their
# frees are not recorded at all
sa, _ = load("sfirst")
sb, _ = load("ssecond")
check("sampled-first", (sa["mode"], round(sa["allocations"]), round(sa["frees"]), round(sa["leaked"]["count"]), sa["calls"]["malloc"]) == ("sampled", 300, 100, 200, 300),
      f"expected (sampled, 300, 100, 200, 300) got {(sa['mode'], sa['allocations'], sa['frees'], sa['leaked']['count'], sa['calls']['malloc'])}")
check("sampled-second", (round(sb["allocations"]), round(sb["frees"]), sb["untracked_frees"], sb["calls"]["free"], sb["calls"]["malloc"]) == (40, 0, 0, 50, 0),
      f"expected allocations, frees, untracked frees, free calls, malloc calls (40, 0, 0, 50, 0) got "
      f"{(sb['allocations'], sb['frees'], sb['untracked_frees'], sb['calls']['free'], sb['calls']['malloc'])}")
check("second-sites", "second_trace" in bt and "first_trace" not in bt and "between" not in bt,
      "the second trace's backtraces are not second_trace()'s")
PY
