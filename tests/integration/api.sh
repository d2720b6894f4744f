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
out=$(cd "$work" && env -u HEAPSCOPE_OUTPUT ./api first.hst second.hst 2>&1)
rc=$?
if [ $rc -ne 0 ] || [ "$out" != ok ]; then
	echo "FAIL api/run: exit $rc, output '$out'"
	exit 0
fi
echo "ok api/run"
for f in first second; do
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
check("first-sites", "first_trace" in at and "before_start" not in at and "between" not in at,
      "allocations outside first_trace() in the first trace")
# the second: 40 callocs of 128 B, stacks numbered afresh in its own file
check("second-counts", (b["allocations"], b["frees"], b["bytes_allocated"], b["calls"]["calloc"]) == (40, 0, 5120, 40),
      f"expected (40, 0, 5120, 40) got {(b['allocations'], b['frees'], b['bytes_allocated'], b['calls']['calloc'])}")
check("second-sites", "second_trace" in bt and "first_trace" not in bt and "between" not in bt,
      "the second trace's backtraces are not second_trace()'s")
PY
