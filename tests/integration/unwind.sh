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
# allocations in a library's constructor, which ld.so's _dl_start_user (no CFI) calls
compare ctoralloc "$progs/ctoralloc"
# ... walked to their end without libunwind (started, it moves its pipe to 4000+); so is
# main's allocation, whose walk needs the initial thread's stack bounds (from /proc/self/maps
# and RLIMIT_STACK, as glibc computes them), whatever the stack limit
ctor_check() {
	local name=$1 fast ref
	fast=$("$HS" record -o "$work/ctor.fast.hst" -- "$progs/ctoralloc" 2>/dev/null)
	ref=$(HEAPSCOPE_UNWIND=libunwind "$HS" record -o "$work/ctor.ref.hst" -- "$progs/ctoralloc" 2>/dev/null)
	if [ "$ref" != "constructor blocks kept, libunwind started" ]; then
		echo "FAIL unwind/$name: the program cannot tell whether libunwind started (with HEAPSCOPE_UNWIND=libunwind it said: $ref)"
	elif [ "$fast" != "constructor blocks kept, libunwind not started" ]; then
		echo "FAIL unwind/$name: $fast"
	else
		echo "ok unwind/$name"
	fi
}
ctor_check constructor-without-libunwind
(ulimit -s unlimited && ctor_check stack-unlimited-without-libunwind)
(ulimit -s 1024 && ctor_check stack-1m-without-libunwind)
# 40,000 return addresses (the rule table grows from 1,024 slots; it once stopped at 32,768 rules,
# and the walks through the others were libunwind's): the same backtraces, and libunwind never starts
# heap_untouched NAME PROGRAM MIN WHAT: the calls into the C library's malloc that a
# counter preloaded after the tracer sees (the program's, and any of the tracer's), untraced
# then traced, must differ by at most 16: glibc's own as the tracer starts its threads
# (their TLS, their attributes). Natively the counter must see at least MIN (WHAT).
heap_untouched() {
	local name=$1 prog=$2 min=$3 what=$4 native traced
	MALLOCCOUNT_OUT="$work/$name.native" LD_PRELOAD="$work/malloccount.so" "$prog" >/dev/null 2>&1
	MALLOCCOUNT_OUT="$work/$name.traced" LD_PRELOAD="$BUILD/libheapscope.so:$work/malloccount.so" \
		HEAPSCOPE_OUTPUT="$work/$name.hst" "$prog" >/dev/null 2>&1
	native=$(cat "$work/$name.native" 2>/dev/null)
	traced=$(cat "$work/$name.traced" 2>/dev/null)
	if [ -z "$native" ] || [ -z "$traced" ]; then
		echo "FAIL unwind/$name: the counter wrote nothing (native '$native', traced '$traced')"
	elif [ "$native" -lt "$min" ]; then
		echo "FAIL unwind/$name: the counter saw $native calls of $what"
	elif [ $((traced - native)) -le 16 ]; then
		echo "ok unwind/$name"
	else
		echo "FAIL unwind/$name: $native calls into the C library's malloc natively, $traced traced: the tracer allocated $((traced - native)) blocks in the program's heap"
	fi
}

many_check() {
	local out
	python3 - "$work/sites.S" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("\t.text\n\t.globl many_sites\n\t.type many_sites, @function\nmany_sites:\n\t.cfi_startproc\n"
            "\tpushq %rbx\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset %rbx, -16\n")
    for i in range(40000):
        f.write("\tmovl $%d, %%edi\n\tcall malloc@PLT\n\tmovq %%rax, %%rdi\n\tcall free@PLT\n" % (16 + i % 7))
    f.write("\tpopq %rbx\n\t.cfi_def_cfa_offset 8\n\tret\n\t.cfi_endproc\n\t.size many_sites, .-many_sites\n"
            "\t.section .note.GNU-stack,\"\",@progbits\n")
PY
	if ! gcc -O0 -Itests/integration/progs -o "$work/manysites" tests/integration/progs/manysites.c "$work/sites.S" 2>"$work/manysites.log"; then
		echo "FAIL unwind/many-return-addresses: cannot build the program: $(head -c 200 "$work/manysites.log")"
		return
	fi
	compare manysites "$work/manysites"
	out=$("$HS" record -o "$work/many.hst" -- "$work/manysites" 2>/dev/null)
	if [ "$out" = "libunwind not started" ]; then
		echo "ok unwind/many-return-addresses-without-libunwind"
	else
		echo "FAIL unwind/many-return-addresses-without-libunwind: $out"
	fi
	# each of the 40,000 walks needs a new unwind rule and a new stack node: one section,
	# one pair of signal-mask calls (2 us a pair in a KVM guest), not a pair for each
	if ! gcc -std=c11 -O2 -shared -fPIC -o "$work/sigcount.so" tests/integration/lib/sigcount.c -ldl 2>"$work/sigcount.log"; then
		echo "FAIL unwind/one-section-per-walk: cannot build the counter: $(head -c 200 "$work/sigcount.log")"
		return
	fi
	SIGCOUNT_OUT="$work/sigcount.out" LD_PRELOAD="$work/sigcount.so:$BUILD/libheapscope.so" \
		HEAPSCOPE_OUTPUT="$work/many.sig.hst" "$work/manysites" >/dev/null 2>&1
	out=$(cat "$work/sigcount.out" 2>/dev/null)
	if [ -z "$out" ]; then
		echo "FAIL unwind/one-section-per-walk: the counter wrote nothing"
	elif [ "$out" -lt 2000 ]; then
		echo "FAIL unwind/one-section-per-walk: the counter saw $out calls only: it did not stand before the tracer's"
	elif [ "$out" -lt 100000 ]; then
		echo "ok unwind/one-section-per-walk"
	else
		echo "FAIL unwind/one-section-per-walk: $out pthread_sigmask calls for 40,000 walks with a new rule and node each (a pair per walk is 80,000; two pairs, one per step, 160,000)"
	fi
	# the walks' 40,000 new unwind rules are read from the loaded .eh_frame in place: the
	# program's heap gets no block of the tracer's (libdw's CFI reading made 40,090 calls
	# into the C library's malloc here). A counter preloaded after the tracer sees the
	# calls that reach the C library: the program's, and any of the tracer's.
	if ! gcc -std=c11 -O2 -shared -fPIC -o "$work/malloccount.so" tests/integration/lib/malloccount.c 2>"$work/malloccount.log"; then
		echo "FAIL unwind/walks-allocate-nothing: cannot build the counter: $(head -c 200 "$work/malloccount.log")"
		return
	fi
	heap_untouched walks-allocate-nothing "$work/manysites" 40000 "the program's 40,000"
	# Each thread's stack bounds come from glibc's pthread_getattr_np, which copies the
	# thread's CPU set (malloc, realloc, free): 3 calls into the C library's malloc for
	# each of manythreads' 3,400 threads (29,105 in all against 18,900), until those
	# blocks came from the tracer's own buffer.
	if [ -x "$progs/manythreads" ]; then
		heap_untouched thread-setup-allocates-nothing "$progs/manythreads" 17000 "the program's 17,000 (3,400 threads)"
	else
		echo "FAIL unwind/thread-setup-allocates-nothing: $progs/manythreads is not built"
	fi
}
many_check
# walks that start with the same frame and differ further out, more of them than a set of kept walks holds
compare paths "$progs/paths"
# A library replaced at the same addresses by another (other code, other frames):
# the old one's unwind rules must be gone before the new one's frames are walked.
# libunwind itself keeps stale unwind info here, so the oracle is the libraries'
# own code: the return addresses after each call, from objdump.
reload_check() {
	local ips=$work/ips
	if ! gcc -std=c11 -O1 -Iinclude -o "$ips" tests/integration/lib/ips.c "$BUILD/libheapscope-reader.a" \
		$(pkg-config --libs libdw libzstd) -liberty -lstdc++ -lm -lpthread 2>"$work/ips.log"; then
		echo "FAIL unwind/replaced-library: cannot build the address lister: $(head -c 200 "$work/ips.log")"
		return
	fi
	"$HS" record -o "$work/reload.hst" -- "$progs/reloader" "$progs/libreload_a.so" "$progs/libreload_c.so" >/dev/null 2>&1
	"$ips" "$work/reload.hst" >"$work/reload.ips" 2>"$work/ips.err"
	for l in a c; do objdump -d "$progs/libreload_$l.so"; done >"$work/reload.objdump" 2>/dev/null
	python3 - "$work/reload.ips" "$work/reload.objdump" <<'PY'
import re, sys
ips, dis = sys.argv[1:3]
# per library, the offsets (in their page) of the return addresses of leaf -> malloc, mid -> leaf, top -> mid, work -> top
chains, cur, fn, rets = [], None, None, {}
for line in open(dis):
    m = re.match(r"^[0-9a-f]+ <(\w+)>:", line)
    if m:
        fn = m.group(1)
        continue
    if line.startswith("Disassembly") or "file format" in line:
        if rets:
            chains.append(rets)
        rets = {}
        continue
    m = re.match(r"^\s+([0-9a-f]+):", line)
    if m and fn in ("leaf", "mid", "top", "work"):
        addr = int(m.group(1), 16)
        if cur is not None and fn not in rets:
            rets[fn] = addr & 0xfff
        cur = addr if "call" in line else None
if rets:
    chains.append(rets)
want = [tuple(c[f] for f in ("leaf", "mid", "top", "work")) for c in chains if len(c) == 4]
leaves = {w[0]: w for w in want}
n = bad = 0
for line in open(ips):
    fr = [int(x, 16) for x in line.split(":")[1].split()]
    if not fr or fr[0] not in leaves:
        continue
    n += 1
    if tuple(fr[:4]) != leaves[fr[0]]:
        bad += 1
        example = " ".join("%x" % x for x in fr[:4])
if len(want) != 2 or len(set(leaves)) != 2:
    print("FAIL unwind/replaced-library: could not read both libraries' call sites from objdump")
elif n == 0:
    print("FAIL unwind/replaced-library: no allocation of the libraries in the trace")
elif bad:
    print("FAIL unwind/replaced-library: %d of %d allocations walked wrongly, e.g. %s, want %s" % (bad, n, example, " ".join("%x" % x for x in leaves[int(example.split()[0], 16)])))
else:
    print("ok unwind/replaced-library (%d allocations, leaf < mid < top < work in both libraries)" % n)
PY
}
reload_check
printf 'create table t(a integer primary key, b text);\n' >"$work/w.sql"
for i in $(seq 1 3000); do printf "insert into t values(%d, 'row %d %s');\n" "$i" "$i" "$(printf '%*s' $((i % 50)) '' | tr ' ' x)"; done >>"$work/w.sql"
printf 'create index ib on t(b);\nselect count(*) from t;\n' >>"$work/w.sql"
compare sqlite3 sqlite3 :memory: -init "$work/w.sql" -batch </dev/null
PYTHONHASHSEED=0 PYTHONMALLOC=malloc compare python3 /usr/bin/python3 -c 'd = {str(i): [i] * (i % 7) for i in range(20000)}; print(len(d))'
