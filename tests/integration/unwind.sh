#!/bin/bash
# unwind.sh - the fast unwinder against libunwind: same backtraces, allocation by allocation
# Each program runs twice, once with HEAPSCOPE_UNWIND=libunwind (the reference); the
# multisets of symbolized backtraces of all allocations must be equal.
set -u
cd "$(dirname "$0")/../.."
BUILD="${BUILD:-build}"
HS="$BUILD/heapscope"
progs=tests/integration/build/progs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

compare() {
	local name=$1; shift
	"$HS" record -o "$work/$name.fast.hst" -- "$@" >/dev/null 2>&1
	HEAPSCOPE_UNWIND=libunwind "$HS" record -o "$work/$name.ref.hst" -- "$@" >/dev/null 2>&1
	if [ ! -s "$work/$name.fast.hst" ] || [ ! -s "$work/$name.ref.hst" ]; then
		echo "FAIL unwind/$name: no trace recorded"
		return
	fi
	"$HS" dump --backtraces "$work/$name.fast.hst" >"$work/$name.fast.txt" 2>&1
	"$HS" dump --backtraces "$work/$name.ref.hst" >"$work/$name.ref.txt" 2>&1
	python3 - "$name" "$work/$name.fast.txt" "$work/$name.ref.txt" <<'PY'
import collections, sys
name, fast, ref = sys.argv[1:4]
def stacks(path):
    out, cur = collections.Counter(), None
    for line in open(path, errors="replace"):
        if line.startswith("    "):
            if cur is not None:
                cur.append(line.split()[0])
            continue
        if cur is not None:
            out[tuple(cur)] += 1
        f = line.split()
        cur = [] if len(f) > 2 and f[2] == "alloc" else None
    if cur is not None:
        out[tuple(cur)] += 1
    return out
a, b = stacks(fast), stacks(ref)
n = sum(b.values())
if n == 0:
    print(f"FAIL unwind/{name}: no allocations in the reference trace")
elif a == b:
    print(f"ok unwind/{name} ({n} allocations, {len(b)} distinct backtraces)")
else:
    diff = (a - b) + (b - a)
    first = next(iter(diff))
    print(f"FAIL unwind/{name}: {sum(diff.values())} of {n} allocations differ, e.g. {' < '.join(first[:8])}"
          f" (fast {a[first]}x, libunwind {b[first]}x)")
PY
}

[ -x "$progs/basic" ] || { echo "FAIL unwind/setup: build the integration programs first (tests/integration/run.sh)"; exit 0; }
compare basic "$progs/basic"
compare cxx "$progs/cxx"
compare family "$progs/family"
compare dlopener "$progs/dlopener" "$progs/libdlalloc.so"
compare threads "$progs/threads"
# libraries replaced at the same addresses: their unwind rules must be forgotten with them
compare reloader "$progs/reloader" "$progs/libreload_a.so" "$progs/libreload_b.so"
printf 'create table t(a integer primary key, b text);\n' >"$work/w.sql"
for i in $(seq 1 3000); do printf "insert into t values(%d, 'row %d %s');\n" "$i" "$i" "$(printf '%*s' $((i % 50)) '' | tr ' ' x)"; done >>"$work/w.sql"
printf 'create index ib on t(b);\nselect count(*) from t;\n' >>"$work/w.sql"
compare sqlite3 sqlite3 :memory: -init "$work/w.sql" -batch </dev/null
PYTHONHASHSEED=0 PYTHONMALLOC=malloc compare python3 /usr/bin/python3 -c 'd = {str(i): [i] * (i % 7) for i in range(20000)}; print(len(d))'
