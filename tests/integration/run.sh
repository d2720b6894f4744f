#!/usr/bin/env bash
# heapscope integration tests.
#
# Run from the repository root:   tests/integration/run.sh   (env BUILD=build)
# Prints exactly one line per check: `ok NAME` or `FAIL NAME: why`.
# No summary (the top-level runner counts lines); always exits 0.
# Artefacts (traces, reports, logs) stay in tests/integration/build/run/.
#
# Oracles:
#  * valgrind (memcheck) HEAP SUMMARY for basic, family, threads, cxx,
#    dlopener, early_late, signals: allocs/frees/bytes/in-use-at-exit must
#    equal heapscope's allocations/frees/bytes_allocated/leaked exactly.
#    valgrind runs with --run-libc-freeres=no --run-cxx-freeres=no: by
#    default valgrind calls glibc's __libc_freeres and libstdc++'s
#    __gnu_cxx::__freeres at exit, which free libc-internal blocks (e.g.
#    the per-thread DTV kept in glibc's thread-stack cache, the libstdc++
#    emergency exception pool) that a native process never frees.  With the
#    flags valgrind's "frees" / "in use at exit" are what a native run has.
#    (Measured: threads gives 5988 frees / 16 blocks in use without freeres
#    vs 5992 / 12 with it; heaptrack - native glibc - agrees with the former.)
#    Other valgrind-vs-native differences found and handled:
#      - valgrind 3.19 does not implement pvalloc (memcheck aborts the
#        program), so the valgrind oracle runs family built -DNO_PVALLOC and
#        the full family is checked against its own printed figures;
#      - realloc(p, 0): valgrind 3.19 behaves like glibc (frees p, returns
#        NULL, counted as 1 free and no alloc) - verified, no special case;
#      - signals: the main loop's iteration count depends on timing, so the
#        program prints it; the timing-independent part (valgrind total minus
#        the printed iterations) is the oracle, re-applied to the iteration
#        count printed by the heapscope run.
#  * the programs' own figures (printed `figures:` lines) where valgrind
#    cannot be used (fork, exec, _exit, closed fds, pvalloc) - the programs
#    use write(2), never stdio, so libc adds no allocations of its own.
#  * heaptrack for sqlite3 and python3 (see the heaptrack section).
set -u

ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) BD=$BUILD ;; *) BD=$ROOT/$BUILD ;; esac
HS=$BD/heapscope
LIB=$BD/libheapscope.so
T=$ROOT/tests/integration
P=$T/build/progs           # compiled test programs
W=$T/build/run             # per-run artefacts
U="python3 $T/lib/hsutil.py"
VG="valgrind --run-libc-freeres=no --run-cxx-freeres=no --leak-check=full"

# a python3 loop the tracer unwinds (with libunwind where its rules cannot), then its first open()
FD_PY='import os
d = {}
for i in range(200000):
    d[str(i)] = [i]
print("first fd", os.open("/dev/null", os.O_RDONLY))'
ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; }
first_line() { head -c 300 "$1" 2>/dev/null | head -n 1; }

mkdir -p "$P"
rm -rf "$W"
mkdir -p "$W"

# says_one_line NAME BASE FIGURES LINE -- CMD...: CMD (a minute at most)
# must end with exit 0, print FIGURES, and say exactly one line on stderr,
# holding LINE; BASE.out and BASE.err keep what it said
says_one_line() {
    local name=$1 base=$2 figures=$3 line=$4 rc; shift 5
    timeout 60 "$@" >"$base.out" 2>"$base.err" </dev/null
    rc=$?
    if [ $rc = 0 ] && grep -q "$figures" "$base.out" && [ "$(wc -l <"$base.err")" = 1 ] && grep -qF "$line" "$base.err"; then
        ok "$name"
    else
        fail "$name" "exit $rc$( [ $rc = 124 ] && echo ' (hung)'), stderr: $(head -c 200 "$base.err")"
    fi
}

# ---------------------------------------------------------------- build progs
CFLAGS="-std=gnu11 -g -O0 -fno-omit-frame-pointer -Wall -pthread"
BUILD_ERR=""
cc_prog() { # out src [extra flags]
    local out=$1 src=$2; shift 2
    if [ ! -x "$P/$out" ] || [ "$T/progs/$src" -nt "$P/$out" ] || [ "$T/progs/tp.h" -nt "$P/$out" ] ||
        [ "$T/progs/unwpipe.h" -nt "$P/$out" ]; then
        case $src in
        *.cpp) g++ -std=c++17 -g -O0 -fno-omit-frame-pointer -Wall -o "$P/$out" "$T/progs/$src" "$@" ;;
        *) gcc $CFLAGS -o "$P/$out" "$T/progs/$src" "$@" ;;
        esac >"$W/cc.$out.log" 2>&1 || BUILD_ERR="$BUILD_ERR $out"
    fi
}
for p in basic family threads forker execer signals early_late closefds exit_thread \
    underscore_exit steady sampled sampledpool zerobytes manythreads smallstack altstack crasher pingpong slotmap handoff \
    wanderer fdnum daemonchild execenv clearenv_exec deeprec stackmix forkwipe; do
    cc_prog $p $p.c
done
cc_prog family_vg family.c -DNO_PVALLOC
cc_prog dlopener dlopener.c -ldl
cc_prog libdlalloc.so libdlalloc.c -shared -fPIC
cc_prog liberrnolib.so errnolib.c -shared -fPIC
cc_prog errnokeep errnokeep.c -ldl
cc_prog libfailbig.so failbig.c -shared -fPIC
cc_prog reloader reloader.c -ldl
cc_prog forkloader forkloader.c -ldl
# optimised, without frame pointers: their frames unwind through CFI
cc_prog libreload_a.so libreload.c -shared -fPIC -O2 -fomit-frame-pointer -DFRAME=200
cc_prog libreload_b.so libreload.c -shared -fPIC -O2 -fomit-frame-pointer -DFRAME=600
cc_prog libreload_c.so libreload.c -shared -fPIC -O2 -fomit-frame-pointer -DFRAME=600 -DSHIFT
cc_prog cxx cxx.cpp
# a library constructor's allocations, optimised without frame pointers (unwind.sh)
cc_prog libctoralloc.so ctoralloc.c -shared -fPIC -O2 -fomit-frame-pointer
cc_prog ctoralloc ctoralloc.c -DMAIN -L"$P" -lctoralloc -Wl,-rpath,"$P"
# a library whose destructor, run after the tracer's, frees what its constructor made
cc_prog libexitfree.so exitfree.c -shared -fPIC
cc_prog exitfree exitfree.c -DMAIN -L"$P" -lexitfree -Wl,-rpath,"$P"
# optimised, without frame pointers: one call site reached by many paths (unwind.sh)
cc_prog paths paths.c -O2 -fomit-frame-pointer
cc_prog fillfile fillfile.c
cc_prog mallocaddr mallocaddr.c -no-pie -fno-pic
cc_prog spawner spawner.c
cc_prog singleflag singleflag.c -ldl
cc_prog jumpout jumpout.c
cc_prog pauses pauses.c -pthread
cc_prog wakeups wakeups.c -pthread
cc_prog alarmjump alarmjump.c
cc_prog ownmalloc ownmalloc.c
cc_prog userns userns.c
cc_prog coroutines coroutines.c
cc_prog stderrfile stderrfile.c
cc_prog idle idle.c
cc_prog deltrace deltrace.c
# Rust with v0 mangling (what current toolchains use for their standard
# library), optimised: std's allocation paths are inlined into our functions
RUSTC=$(command -v rustc || true)
if [ -n "$RUSTC" ] && { [ ! -x "$P/rust_leak" ] || [ "$T/progs/rust_leak.rs" -nt "$P/rust_leak" ]; }; then
    # an older rustc without -C symbol-mangling-version: its legacy names then
    "$RUSTC" -g -C opt-level=2 -C symbol-mangling-version=v0 --crate-name hsrust \
        -o "$P/rust_leak" "$T/progs/rust_leak.rs" >"$W/cc.rust_leak.log" 2>&1 ||
        "$RUSTC" -g -C opt-level=2 --crate-name hsrust \
            -o "$P/rust_leak" "$T/progs/rust_leak.rs" >>"$W/cc.rust_leak.log" 2>&1 || BUILD_ERR="$BUILD_ERR rust_leak"
fi
[ -n "$BUILD_ERR" ] && fail build-progs "could not compile:$BUILD_ERR (see $W/cc.*.log)"

HAVE_HS=1
if [ ! -x "$HS" ] || [ ! -f "$LIB" ]; then
    HAVE_HS=0
    HS_MISSING="$BUILD/heapscope or $BUILD/libheapscope.so not built"
fi

# ------------------------------------------------------------------ helpers
# hs_record TAG [record options] -- prog args...   (runs in $W/TAG.d)
#   -> $W/TAG.out (stdout), $W/TAG.err, $W/TAG.rc
hs_record() {
    local tag=$1; shift
    mkdir -p "$W/$tag.d"
    (cd "$W/$tag.d" && timeout 120 "$HS" record "$@") >"$W/$tag.out" 2>"$W/$tag.err" </dev/null
    echo $? >"$W/$tag.rc"
}
# native TAG prog args...  -> $W/TAG.nat.out / .nat.rc
native() {
    local tag=$1; shift
    mkdir -p "$W/$tag.nat.d"
    (cd "$W/$tag.nat.d" && timeout 60 "$@") >"$W/$tag.nat.out" 2>"$W/$tag.nat.err" </dev/null
    echo $? >"$W/$tag.nat.rc"
}
# hs_report TRACE JSONBASE -> JSONBASE.json / .rerr / .rrc ; returns rc
hs_report() {
    timeout 60 "$HS" report --json "$1" >"$2.json" 2>"$2.rerr" </dev/null
    local rc=$?
    echo $rc >"$2.rrc"
    return $rc
}
# report_ok NAME TRACE JSONBASE: report it, print FAIL and return 1 if unusable
# view_info TRACE FIELD...: start 'heapscope view' on TRACE, print those fields of its /api/info, stop it
view_info() {
    local trace=$1 port pid got=""
    shift
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$HS" view --port "$port" "$trace" >"$W/view-info.out" 2>&1 &
    pid=$!
    for _ in $(seq 1 100); do
        got=$(python3 - "$port" "$@" <<'EOF' 2>/dev/null
import json, sys, urllib.request
try:
    with urllib.request.urlopen("http://127.0.0.1:%s/api/info" % sys.argv[1], timeout=5) as r:
        j = json.load(r)
    print(" ".join(str(j[k]) for k in sys.argv[2:]))
except Exception:
    pass
EOF
)
        [ -n "$got" ] && break
        sleep 0.1
    done
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    echo "$got"
}

report_ok() {
    local name=$1 trace=$2 base=$3
    if [ ! -s "$trace" ]; then
        fail "$name" "trace $trace missing or empty (traces there: $(ls "$(dirname "$trace")" 2>/dev/null | grep '\.hst' | grep -v '\.hst\.r' | tr '\n' ' '))"
        return 1
    fi
    if ! hs_report "$trace" "$base"; then
        fail "$name" "heapscope report exited $(cat "$base.rrc"): $(first_line "$base.rerr")"
        return 1
    fi
    return 0
}
# the single trace a record run in $W/TAG.d produced
one_trace() { ls "$W/$1.d"/*.hst 2>/dev/null | head -n 1; }

# check_figs NAME TAG TRACE A F B LC LB: report TRACE and compare exactly
check_figs() {
    local name=$1 tag=$2 trace=$3; shift 3
    [ $HAVE_HS = 1 ] || { fail "$name" "$HS_MISSING"; return; }
    report_ok "$name" "$trace" "$W/$tag" || return
    $U cmp "$name" "$W/$tag.json" "$@"
}

# ------------------------------------------------------- valgrind oracle
# vg_oracle NAME prog args...: valgrind figures -> $W/NAME.vg
vg_oracle() {
    local name=$1; shift
    (cd "$W" && timeout 120 $VG "$@") >"$W/$name.vg.out" 2>"$W/$name.vg.log" </dev/null
    $U vg "$W/$name.vg.log" >"$W/$name.vg" 2>"$W/$name.vg.err"
}

run_vg_check() { # NAME prog args...
    local name=$1; shift
    if ! vg_oracle "$name" "$@"; then
        fail "valgrind/$name" "oracle: no valgrind HEAP SUMMARY ($(first_line "$W/$name.vg.err"))"
        return
    fi
    # sanity of the oracle itself: where the program's figures cover all
    # heap activity (no libc-internal allocations), valgrind must agree.
    case $name in basic | family | early_late)
        local f; f=$($U fig "$W/$name.vg.out")
        if [ "$f" != "$(cat "$W/$name.vg")" ]; then
            fail "valgrind/$name" "oracle inconsistent: valgrind says $(cat "$W/$name.vg"), program says $f"
            return
        fi ;;
    esac
    [ $HAVE_HS = 1 ] || { fail "valgrind/$name" "$HS_MISSING"; return; }
    hs_record "vg-$name" -o "$W/vg-$name.hst" -- "$@"
    check_figs "valgrind/$name" "vg-$name" "$W/vg-$name.hst" $(cat "$W/$name.vg")
}

run_vg_check basic "$P/basic"
run_vg_check family "$P/family_vg"
# threads: each pthread_create makes glibc calloc a DTV for the new thread
# (kept in glibc's thread-stack cache, so still in use at exit - valgrind
# and a native run agree on that).  Its size is (max TLS module id + 16) *
# 16 bytes (glibc 2.36 allocate_dtv: calloc(dtv_length + 2, 16) with
# dtv_length = dl_tls_max_dtv_idx + DTV_SURPLUS(14)), i.e. it depends on how
# many loaded objects have a PT_TLS segment - and the LD_PRELOADed tracer
# brings its own (libheapscope.so and the libraries it loads).  That is a
# real property of a traced process, not a valgrind artefact, so the
# oracle's bytes / leaked bytes are shifted by NT * 16 * (tls_traced -
# tls_untraced), both counted here independently with readelf.
tls_modules() { # prog [preload]
    local prog=$1 pre=${2:-} n=0 f
    for f in "$prog" $( (if [ -n "$pre" ]; then LD_PRELOAD=$pre LD_TRACE_LOADED_OBJECTS=1 "$prog"
                         else LD_TRACE_LOADED_OBJECTS=1 "$prog"; fi) 2>/dev/null | grep -o '/[^ ]*'); do
        readelf -lW "$f" 2>/dev/null | grep -q '^ *TLS ' && n=$((n + 1))
    done
    echo $n
}
if vg_oracle threads "$P/threads"; then
    read -r va vf vb vlc vlb <"$W/threads.vg"
    read -r _ _ _ _ flb < <($U fig "$W/threads.vg.out")
    dtv_vg=$((16 * (16 + $(tls_modules "$P/threads"))))
    if [ $((vlb - flb)) != $((4 * dtv_vg)) ]; then
        fail valgrind/threads "oracle inconsistent: valgrind leaks $((vlb - flb)) libc bytes, expected 4 DTVs of $dtv_vg"
        : >"$W/threads.vg"
    elif [ $HAVE_HS = 1 ]; then
        dtv_hs=$((16 * (16 + $(tls_modules "$P/threads" "$LIB"))))
        d=$((4 * (dtv_hs - dtv_vg)))
        echo "$va $vf $((vb + d)) $vlc $((vlb + d))" >"$W/threads.vg"
        hs_record vg-threads -o "$W/vg-threads.hst" -- "$P/threads"
        check_figs valgrind/threads vg-threads "$W/vg-threads.hst" $(cat "$W/threads.vg")
    else
        fail valgrind/threads "$HS_MISSING"
    fi
else
    fail valgrind/threads "oracle: no valgrind HEAP SUMMARY"
fi
run_vg_check cxx "$P/cxx"
run_vg_check dlopener "$P/dlopener" "$P/libdlalloc.so"
run_vg_check early_late "$P/early_late"
if [ -x "$P/rust_leak" ]; then
    run_vg_check rust "$P/rust_leak"
else
    fail valgrind/rust "no rustc to build tests/integration/progs/rust_leak.rs ($(first_line "$W/cc.rust_leak.log"))"
fi

# signals: oracle = valgrind total with the timing-dependent main loop
# (main_iters x malloc(24)) taken out, then the heapscope run's own
# main_iters put back in.
if vg_oracle signals "$P/signals"; then
    read -r va vf vb vlc vlb <"$W/signals.vg"
    vi=$($U kv "$W/signals.vg.out" main_iters)
    if [ $HAVE_HS = 1 ]; then
        hs_record vg-signals -o "$W/vg-signals.hst" -- "$P/signals"
        if hi=$($U kv "$W/vg-signals.out" main_iters 2>/dev/null); then
            d=$((hi - vi))
            check_figs valgrind/signals vg-signals "$W/vg-signals.hst" \
                $((va + d)) $((vf + d)) $((vb + 24 * d)) "$vlc" "$vlb"
        else
            fail valgrind/signals "program under heapscope printed no main_iters (rc $(cat "$W/vg-signals.rc"), stderr: $(first_line "$W/vg-signals.err"))"
        fi
    else
        fail valgrind/signals "$HS_MISSING"
    fi
    # sampled at every byte: the handler often lands while its thread holds
    # the sampled set's lock (it hung there, waiting for it, 5 runs out of 5
    # before the set queued a handler's changes); the figures stay exact
    if [ $HAVE_HS = 1 ]; then
        hs_record sg-sampled --sample 1 -o "$W/sg-sampled.hst" -- "$P/signals"
        if hi=$($U kv "$W/sg-sampled.out" main_iters 2>/dev/null); then
            d=$((hi - vi))
            check_figs sampled/signals-every-byte sg-sampled "$W/sg-sampled.hst" \
                $((va + d)) $((vf + d)) $((vb + 24 * d)) "$vlc" "$vlb"
        else
            fail sampled/signals-every-byte "program printed no main_iters (rc $(cat "$W/sg-sampled.rc"); 124: it hung)"
        fi
    else
        fail sampled/signals-every-byte "$HS_MISSING"
    fi
else
    fail valgrind/signals "oracle: no valgrind HEAP SUMMARY"
    fail sampled/signals-every-byte "oracle: no valgrind HEAP SUMMARY"
fi

# threads again, 3 more times: cross-thread frees under contention must be
# neither lost nor double counted in any run (same oracle as above)
if [ -s "$W/threads.vg" ] && [ $HAVE_HS = 1 ]; then
    res=""
    for i in 1 2 3; do
        hs_record "thr$i" -o "$W/thr$i.hst" -- "$P/threads"
        r=$(check_figs "threads-repeat" "thr$i" "$W/thr$i.hst" $(cat "$W/threads.vg"))
        case $r in ok*) ;; *) res="run $i: ${r#*: }"; break ;; esac
    done
    [ -z "$res" ] && ok threads-repeat || fail threads-repeat "$res"
else
    fail threads-repeat "${HS_MISSING:-no valgrind oracle for threads}"
fi

# sampled mode with a sample point at every byte: every block enters the
# sampled-block set and each free, by its own thread or another, must find it
# there (the set's home bitmap may never say no to a live block): the
# estimates are then valgrind's exact figures
if [ -s "$W/threads.vg" ] && [ $HAVE_HS = 1 ]; then
    hs_record thr-sampled --sample 1 -o "$W/thr-sampled.hst" -- "$P/threads"
    check_figs threads-sampled-every-byte thr-sampled "$W/thr-sampled.hst" $(cat "$W/threads.vg")
else
    fail threads-sampled-every-byte "${HS_MISSING:-no valgrind oracle for threads}"
fi

# ------------------------------------------------- self-computed oracles
if [ $HAVE_HS = 1 ]; then
    # family including pvalloc (valgrind cannot run it)
    hs_record family -o "$W/family.hst" -- "$P/family"
    check_figs figures/family family "$W/family.hst" $($U fig "$W/family.out" 2>/dev/null || echo - - - - -)

    # handoff_figs TAG: from TAG's run and its report, pna/pnf (allocations
    # and frees the program counted), pf (frees/untracked), pa (allocations)
    # and pl (blocks leaked)
    handoff_figs() {
        "$HS" report --json "$W/$1.hst" >"$W/$1.json" 2>/dev/null
        read -r _ pna pnf < <(grep '^figures:' "$W/$1.out")
        pf=$($U get "$W/$1.json" frees 2>/dev/null)/$($U get "$W/$1.json" untracked_frees 2>/dev/null)
        pa=$($U get "$W/$1.json" allocations 2>/dev/null)
        pl=$($U get "$W/$1.json" leaked.count 2>/dev/null)
    }

    # blocks that change threads as fast as a ring lets them, both ways: every
    # free pairs with its allocation (one stamped before its block's
    # allocation in the other thread would count as untracked, the block as
    # leaked); libc's own few blocks aside
    # "late": the program runs alone first (one thread's stamps skip the
    # fence and the slots), and its first messages were allocated then;
    # "clock": every other reading of the clock 300 us behind, as when the
    # writer is preempted while reading it (ticks must still map to times
    # that never go back: 91 untracked frees when each reading re-anchored);
    # "gettime": clock_gettime for every stamp, as on a CPU without an
    # invariant TSC
    for pp in "" late clock gettime; do
        pn=pingpong${pp:+-$pp}
        case $pp in
        clock) HEAPSCOPE_TEST_CLOCK_ERROR=300us hs_record "$pn" -o "$W/$pn.hst" -- "$P/pingpong" ;;
        gettime) HEAPSCOPE_TEST_CLOCK=gettime hs_record "$pn" -o "$W/$pn.hst" -- "$P/pingpong" ;;
        *) hs_record "$pn" -o "$W/$pn.hst" -- "$P/pingpong" $pp ;;
        esac
        handoff_figs "$pn"
        if [ -n "$pnf" ] && [ "$pf" = "$pnf/0" ] && [ -n "$pa" ] && [ -n "$pl" ] && [ $((pa - pna)) = "$pl" ] && [ "$pl" -le 4 ]; then
            ok threads/handoff-pairs${pp:+-$pp}
        else
            fail threads/handoff-pairs${pp:+-$pp} "frees/untracked $pf, allocations $pa, leaked $pl; the program made ${pna:-?} and freed ${pnf:-?} (untracked 0, only libc's few blocks leaked)"
        fi
    done

    # eight threads: blocks of their own, and blocks handed to one another;
    # the writer moves a thread's own-block events ahead of other threads'
    # within a unit of time, at 100 us and at 1 ns: every free still pairs
    # with its allocation, and only libc's few blocks (a DTV per thread) stay;
    # "gettime" stamps with clock_gettime, at 1 ns
    for res in "" 1ns gettime; do
        hn=handoff${res:+-$res}
        if [ "$res" = gettime ]; then
            HEAPSCOPE_TEST_CLOCK=gettime hs_record "$hn" --time-resolution 1ns -o "$W/$hn.hst" -- "$P/handoff"
        else
            hs_record "$hn" ${res:+--time-resolution $res} -o "$W/$hn.hst" -- "$P/handoff"
        fi
        handoff_figs "$hn"
        # libc's own: allocations and frees beyond the program's, at most 10 each
        if [ -n "$pnf" ] && [ -n "$pa" ] && [ -n "$pl" ] && [ "${pf#*/}" = 0 ] &&
            [ "$((pa - pna))" -ge 0 ] && [ "$((pa - pna))" -le 10 ] &&
            [ "$((${pf%/*} - pnf))" -ge 0 ] && [ "$((${pf%/*} - pnf))" -le 10 ] &&
            [ "$pl" = "$((pa - pna - (${pf%/*} - pnf)))" ]; then
            ok threads/handoff-mixed${res:+-$res}
        else
            fail threads/handoff-mixed${res:+-$res} "frees/untracked $pf, allocations $pa, leaked $pl; the program made ${pna:-?} and freed ${pnf:-?}"
        fi
    done

    # fork: with --follow-fork the child writes <path>.<childpid>
    hs_record fork --follow-fork -o "$W/fork.d/f.hst" -- "$P/forker"
    check_figs fork/parent fork-p "$W/fork.d/f.hst" $($U fig "$W/fork.out" "parent: " 2>/dev/null || echo - - - - -)
    cf=$(ls "$W/fork.d"/f.hst.* 2>/dev/null)
    if [ "$(echo "$cf" | grep -c .)" != 1 ]; then
        fail fork/child "expected exactly one child file f.hst.<pid>, got: $(ls "$W/fork.d" | tr '\n' ' ')"
    else
        check_figs fork/child fork-c "$cf" $($U fig "$W/fork.out" "child: " 2>/dev/null || echo - - - - -)
        cpid=${cf##*.}
        if [ -s "$W/fork-c.json" ] && [ -s "$W/fork-p.json" ]; then
            gp=$($U get "$W/fork-c.json" process.pid 2>/dev/null)
            gpp=$($U get "$W/fork-c.json" process.ppid 2>/dev/null)
            pp=$($U get "$W/fork-p.json" process.pid 2>/dev/null)
            if [ "$gp" = "$cpid" ] && [ "$gpp" = "$pp" ]; then ok fork/child-identity
            else fail fork/child-identity "child file suffix $cpid, parent pid $pp; child report says pid=$gp ppid=$gpp"; fi
            # forker maps nothing itself: the child's new trace file and its
            # buffers, set up in the fork handler, are the tracer's own
            cm=$($U get "$W/fork-c.json" calls.mmap 2>/dev/null)/$($U get "$W/fork-c.json" calls.munmap 2>/dev/null)
            if [ "$cm" = 0/0 ]; then ok fork/child-no-tracer-maps
            else fail fork/child-no-tracer-maps "the child's trace counts mmap/munmap calls $cm; forker makes none"; fi
            # the wrapper names the followed processes' traces too
            if grep -q "1 more from followed processes: '$cf'" "$W/fork.err"; then ok fork/wrapper-names-child
            else fail fork/wrapper-names-child "record's stderr does not name '$cf': $(tail -n 1 "$W/fork.err")"; fi
        else
            fail fork/child-identity "no parent/child report"
        fi
    fi
    # fork without following: one file, and the child's events must not end
    # up in the parent's trace
    hs_record forknf -o "$W/forknf.d/f.hst" -- "$P/forker"
    n=$(ls "$W/forknf.d" | grep -c .)
    if [ "$n" != 1 ]; then fail fork/no-follow-one-file "expected 1 trace, got: $(ls "$W/forknf.d" | tr '\n' ' ')"
    else ok fork/no-follow-one-file; fi
    check_figs fork/no-follow-parent forknf "$W/forknf.d/f.hst" $($U fig "$W/forknf.out" "parent: " 2>/dev/null || echo - - - - -)
    # the child that is not followed is counted (4.2): a daemon whose parent
    # exits at once left a trace of a few allocations that did not say why;
    # a followed child is not counted
    u=$($U get "$W/forknf.json" untraced_children 2>/dev/null)/$($U get "$W/fork-p.json" untraced_children 2>/dev/null)
    # the line wrapped within 80 columns, under the text of its first
    "$HS" report "$W/forknf.d/f.hst" >"$W/forknf.report" 2>/dev/null
    if [ "$u" = 1/0 ] && grep -A1 '^children     ' "$W/forknf.report" | tr -s ' \n' ' ' |
        grep -q '^children 1 started, not traced: record with --follow-fork (forked children), --follow-exec (programs they run) $' &&
        [ -z "$(awk 'length > 80 && !/\//' "$W/forknf.report")" ] &&
        grep -q 'the program started 1 child process that was not traced; --follow-fork traces forked children and --follow-exec the programs they run' "$W/forknf.err" &&
        ! grep -q 'not traced' "$W/fork.err"
    then ok fork/untraced-children
    else fail fork/untraced-children "untraced_children without/with --follow-fork: $u (want 1/0), or no 'children' line within 80 columns in the report, or record did not say so (only) without --follow-fork"; fi
    # The tracer's rings, caches, stamps table and chunk buffers are marked
    # wipe-on-fork (src/tracer/util.c): a child gets them zeroed instead of
    # sharing them, and the parent writes them on without copying pages.
    # Untraced, the program marks nothing; traced, at least the stamps
    # table (8 MiB), the chunk buffers (more) and a thread's ring (1 MiB).
    hs_record forkwipe -o "$W/forkwipe.d/f.hst" -- "$P/forkwipe"
    check_figs fork/wipe-parent forkwipe "$W/forkwipe.d/f.hst" $($U fig "$W/forkwipe.out" "parent: " 2>/dev/null || echo - - - - -)
    native forkwipe "$P/forkwipe"
    wt=$(sed -n 's/^wipe-on-fork: \([0-9]*\) KiB$/\1/p' "$W/forkwipe.out"); wn=$(sed -n 's/^wipe-on-fork: \([0-9]*\) KiB$/\1/p' "$W/forkwipe.nat.out")
    if grep -q '^wipe-on-fork: unsupported$' "$W/forkwipe.nat.out"; then
        fail fork/buffers-wiped-in-child "this kernel has no MADV_WIPEONFORK (before 4.14): the tracer shares its buffers with forked children here, and nothing can be checked"
    elif [ "${wt:-0}" -ge 18432 ] 2>/dev/null && [ "$wn" = 0 ]; then ok fork/buffers-wiped-in-child
    else fail fork/buffers-wiped-in-child "KiB marked wipe-on-fork traced/untraced: ${wt:-none}/${wn:-none} (want 18432 or more: the stamps table, chunk buffers and a ring / 0)"; fi
    # A library's destructor that runs after the tracer's (clang: libLLVM's
    # static objects) freed 2,000 blocks after the trace's END, each written
    # in a chunk of its own: 2,003 chunks, 125 KB; now the END waits for an
    # exit handler that runs after every destructor
    hs_record exitfree -o "$W/exitfree.d/t.hst" -- "$P/exitfree"
    hs_report "$W/exitfree.d/t.hst" "$W/exitfree" >/dev/null
    ef=$(python3 - "$W/exitfree.d/t.hst" "$W/exitfree.json" <<'PY' 2>&1
import json, struct, sys
data = open(sys.argv[1], "rb").read()
off, chunks = struct.unpack_from("<I", data, 16)[0], 0
while off + 24 <= len(data):
    off += 24 + struct.unpack_from("<I", data, off + 8)[0]
    chunks += 1
j = json.load(open(sys.argv[2]))
print(j["allocations"], j["frees"], chunks, j["end"])
PY
)
    read -r efa eff efc efe <<<"$ef"
    if grep -q '^blocks 2000$' "$W/exitfree.out" && [ "${efa:-0}" -ge 2000 ] 2>/dev/null && [ "$((efa - eff))" -le 2 ] 2>/dev/null &&
        [ "${efc:-9999}" -le 10 ] 2>/dev/null && [ "${efe:-}" = exit ]; then ok exit/library-destructor-frees-before-end
    else fail exit/library-destructor-frees-before-end "allocations, frees, chunks, end: $ef (want 2,000 or more allocations, at most 2 of them not freed, at most 10 chunks, end exit); out: $(head -c 100 "$W/exitfree.out")"; fi
    # Children started where no fork handler runs: vfork+exec (dash runs
    # commands so), posix_spawn, system, popen. Untraced, they were not
    # counted: a wrapper script's trace held the shell's few allocations,
    # without a word that the program it ran went untraced. With
    # --follow-exec, the spawned ones traced into the root's own file and
    # corrupted it (a checksum mismatch at offset 56); now each program has
    # its own, with the child's 77 blocks
    hs_record spawnnf -o "$W/spawnnf.d/s.hst" -- "$P/spawner"
    hs_report "$W/spawnnf.d/s.hst" "$W/spawnnf" >/dev/null
    u=$($U get "$W/spawnnf.json" untraced_children 2>/dev/null)
    if [ "$u" = 4 ] && grep -q 'figures: children 4' "$W/spawnnf.out" && grep -q 'started 4 child processes that were not traced' "$W/spawnnf.err"
    then ok spawn/untraced-children
    else fail spawn/untraced-children "untraced_children $u (want 4), out: $(tail -c 100 "$W/spawnnf.out"), err: $(tail -c 200 "$W/spawnnf.err")"; fi
    rm -rf "$W/spawnfe.d"
    hs_record spawnfe --follow-exec -o "$W/spawnfe.d/s.hst" -- "$P/spawner"
    why=""
    hs_report "$W/spawnfe.d/s.hst" "$W/spawnfe" >/dev/null || why="$why; root trace: $(head -c 200 "$W/spawnfe.rerr")"
    u=$($U get "$W/spawnfe.json" untraced_children 2>/dev/null)
    [ "$u" = 0 ] || why="$why; untraced_children $u, want 0"
    nk=0
    for f in "$W"/spawnfe.d/s.hst.*; do
        [ -f "$f" ] || continue
        j=$("$HS" report --json "$f" 2>/dev/null | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["process"]["cmdline"][-1], j["leaked"]["count"])' 2>/dev/null)
        [ "$j" = "child 77" ] && nk=$((nk + 1))
    done
    [ $nk = 4 ] || why="$why; $nk child traces with 77 leaked blocks, want 4"
    if [ -z "$why" ]; then ok spawn/follow-exec; else fail spawn/follow-exec "${why#; }"; fi
    # with --follow-exec, a vfork child's exec in an environment of its own
    # mapped the new one in the parent's memory, for good: 4 KiB per command
    rm -rf "$W/vforkloop.d"
    hs_record vforkloop --follow-exec -o "$W/vforkloop.d/s.hst" -- "$P/spawner" vforks 1000
    g=$(sed -n 's/.*vm_growth_kib \(-\?[0-9]*\).*/\1/p' "$W/vforkloop.out")
    if [ -n "$g" ] && [ "$g" -lt 400 ]; then ok spawn/vfork-exec-no-leak
    else fail spawn/vfork-exec-no-leak "1000 vfork+exec grew the parent by '$g' KiB (4,000 before the fix)"; fi
    rm -rf "$W/vforkloop.d"
    # the environment-variable interface, %p expansion, HEAPSCOPE_FOLLOW_FORK
    mkdir -p "$W/forkenv.d"
    (cd "$W/forkenv.d" && LD_PRELOAD=$LIB HEAPSCOPE_OUTPUT=$W/forkenv.d/e.%p.hst HEAPSCOPE_FOLLOW_FORK=1 \
        timeout 60 "$P/forker") >"$W/forkenv.out" 2>"$W/forkenv.err"
    n=$(ls "$W/forkenv.d" | grep -c '^e\.[0-9]*\.hst$')
    if [ "$n" = 2 ]; then ok fork/env-percent-p
    else fail fork/env-percent-p "expected e.<ppid>.hst and e.<cpid>.hst, got: $(ls "$W/forkenv.d" | tr '\n' ' ')"; fi

    # a relative trace path is the start's working directory's: a program
    # that changed directory before it forked or exec'd had its children's
    # traces written where it went, and record named none of them
    rm -rf "$W/wander.d"
    mkdir -p "$W/wander.d/sub"
    hs_record wander --follow-fork --follow-exec -o w.hst -- "$P/wanderer" sub
    here=$(cd "$W/wander.d" && ls w.hst* 2>/dev/null | grep -c .)
    there=$(ls "$W/wander.d/sub" | grep -c .)
    named=$(sed -n "s/.*heapscope: \([0-9]*\) more from followed processes:.*/\1/p" "$W/wander.err")
    leaked=""
    for f in "$W"/wander.d/w.hst*; do
        [ -f "$f" ] && leaked="$leaked $("$HS" report --json "$f" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["leaked"]["bytes"])' 2>/dev/null)"
    done
    leaked=$(echo $leaked | tr ' ' '\n' | sort -n | tr '\n' ' ')
    if [ "$here" = 4 ] && [ "$there" = 0 ] && [ "$named" = 3 ] && [ "$leaked" = "0 100 200 300 " ]; then ok fork/chdir-traces-beside-root
    else fail fork/chdir-traces-beside-root "$here traces where record ran (want 4: root, forked child, exec'd child before and after exec), $there in the directory the program moved to (want 0), record named '$named' followed (want 3), leaked bytes '$leaked' (want 0 100 200 300: the child before its exec has none)"; fi
    # record's last line names a command to copy: a path with a space, a quote
    # or a dollar in it must come out as one word of it, and run as given
    why=""
    for name in "with space.hst" "it's \$HOME.hst" 'say "hi".hst'; do
        rm -rf "$W/quoted.d" && mkdir -p "$W/quoted.d"
        (cd "$W/quoted.d" && timeout 60 "$HS" record -o "$name" -- "$P/basic") >/dev/null 2>"$W/quoted.err"
        # on the line that says where the trace went, or (past 80 columns) on the next
        cmd=$(sed -n "s/^heapscope: \(trace written to .*; \)\{0,1\}see it with 'heapscope \(report .*\)'\$/\2/p" "$W/quoted.err")
        if [ -z "$cmd" ]; then why="$why; $name: no command in '$(tail -n 1 "$W/quoted.err")'"; continue; fi
        [ -z "$(awk 'length > 80' "$W/quoted.err")" ] || why="$why; $name: a line wider than 80 columns: $(awk 'length > 80' "$W/quoted.err" | head -n 1)"
        (cd "$W/quoted.d" && eval "\"\$HS\" $cmd") >"$W/quoted.out" 2>&1 ||
            why="$why; $name: the command '$cmd' failed: $(head -n 1 "$W/quoted.out")"
    done
    if [ -z "$why" ]; then ok record/suggested-command-runs; else fail record/suggested-command-runs "${why#; }"; fi
    # the program's own descriptors are numbered as without the tracer: the
    # files the unwinder reads were kept open, and libunwind's pipe sat at
    # the lowest free numbers (fdnum's first open() got 5, python3's 7, not 3;
    # under a low RLIMIT_NOFILE, none at all)
    want=$(cd "$W" && timeout 60 "$P/fdnum" 2>&1)
    got=$(cd "$W" && timeout 60 env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/fdnum.hst" "$P/fdnum" 2>&1)
    pyw=$(cd "$W" && PYTHONMALLOC=malloc timeout 60 python3 -c "$FD_PY" 2>&1)
    pyg=$(cd "$W" && PYTHONMALLOC=malloc timeout 60 env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/fdpy.hst" python3 -c "$FD_PY" 2>&1)
    if [ "$want" = "first fd 3" ] && [ "$got" = "$want" ] && [ "$pyw" = "first fd 3" ] && [ "$pyg" = "$pyw" ]; then
        ok fds/program-numbers-unchanged
    else
        fail fds/program-numbers-unchanged "fdnum native '$want', traced '$got'; python3 native '$pyw', traced '$pyg'"
    fi
    # the tracer's own failures stay out of the program's errno: its first
    # walk through a library whose file was deleted failed to open it, and
    # the malloc that made the walk came back with errno ENOENT
    rm -rf "$W/errnokeep.d" && mkdir -p "$W/errnokeep.d"
    cp "$P/liberrnolib.so" "$W/errnokeep.d/native.so" && cp "$P/liberrnolib.so" "$W/errnokeep.d/traced.so"
    want=$(timeout 60 "$P/errnokeep" "$W/errnokeep.d/native.so" 2>&1)
    got=$(timeout 60 env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/errnokeep.d/e.hst" "$P/errnokeep" "$W/errnokeep.d/traced.so" 2>&1)
    n=$("$HS" report --json "$W/errnokeep.d/e.hst" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["allocations"])' 2>/dev/null)
    if [ "$want" = "errno changed 0 times" ] && [ "$got" = "$want" ] && [ "${n:-0}" -ge 1000 ]; then
        ok errno/kept-across-tracer-failures
    else
        fail errno/kept-across-tracer-failures "native '$want', traced '$got', $n allocations recorded (want 1,000 or more)"
    fi
    # a followed child that outlives the program still writes its trace when
    # record ends: record says so, and the trace is whole once it exits
    hs_record daemon --follow-fork -o d.hst -- "$P/daemonchild"
    line=$(grep "more from followed processes" "$W/daemon.err")
    sleep 2
    cf=$(ls "$W/daemon.d"/d.hst.* 2>/dev/null | head -n 1)
    got=$("$HS" report --json "$cf" 2>/dev/null | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["end"], j["allocations"], j["bytes_allocated"])' 2>/dev/null)
    case $line in
    *"1 more from followed processes: '${cf##*/}' (still running)") [ "$got" = "exit 1 99" ] && ok fork/daemon-child-still-running ||
        fail fork/daemon-child-still-running "the child's trace, once it exited: '$got' (want 'exit 1 99')" ;;
    *) fail fork/daemon-child-still-running "record's line: '$line'" ;;
    esac
    # what the program hands the programs it runs: without --follow-exec
    # nothing of ours (HEAPSCOPE_FOLLOW_EXEC=0 was left behind); with it, the
    # trace's path made absolute
    hs_record execenv -o ee.hst -- "$P/execenv"
    native execenv "$P/execenv"
    ours=$(diff <(grep -Ev '^(_|PWD|OLDPWD)=' "$W/execenv.nat.out" | sort) <(grep -Ev '^(_|PWD|OLDPWD)=' "$W/execenv.out" | sort) | grep '^[<>]' | tr '\n' ' ')
    hs_record execenvf --follow-exec -o ee.hst -- "$P/execenv"
    out=$(sed -n 's/^HEAPSCOPE_OUTPUT=//p' "$W/execenvf.out")
    if [ -z "$ours" ] && [ "$out" = "$W/execenvf.d/ee.hst" ] && grep -q '^PATH=' "$W/execenv.out"; then
        ok exec/child-environment
    else
        fail exec/child-environment "without --follow-exec the child's environment differs from an untraced run's: '$ours'; with it HEAPSCOPE_OUTPUT='$out' (want '$W/execenvf.d/ee.hst')"
    fi
    # the same without the wrapper: the environment's relative path
    rm -rf "$W/wanderenv.d"
    mkdir -p "$W/wanderenv.d/sub"
    (cd "$W/wanderenv.d" && timeout 60 env LD_PRELOAD=$LIB HEAPSCOPE_OUTPUT=e.%p.hst HEAPSCOPE_FOLLOW_FORK=1 \
        HEAPSCOPE_FOLLOW_EXEC=1 "$P/wanderer" sub) >"$W/wanderenv.out" 2>"$W/wanderenv.err"
    here=$(ls "$W/wanderenv.d" | grep -c '^e\.[0-9.]*hst')
    there=$(ls "$W/wanderenv.d/sub" | grep -c .)
    if [ "$here" = 4 ] && [ "$there" = 0 ]; then ok fork/chdir-env-traces-beside-root
    else fail fork/chdir-env-traces-beside-root "$here traces where the program started (want 4), $there where it moved to (want 0): $(ls "$W/wanderenv.d" "$W/wanderenv.d/sub" | tr '\n' ' ')"; fi

    # the environment's sizes and times read as record's options read them:
    # "1.5M" is 1.5 MiB (it sampled at every byte); a value that is no size
    # or time leaves the program untraced and running as before, with one
    # line that names it (it traced every call, or at 100 us, silently)
    rm -f "$W/envsz.hst"
    LD_PRELOAD=$LIB HEAPSCOPE_OUTPUT=$W/envsz.hst HEAPSCOPE_SAMPLE=1.5M timeout 60 "$P/basic" >/dev/null 2>&1
    got=$(timeout 60 "$HS" report --json "$W/envsz.hst" 2>&1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["sample_bytes"])' 2>&1)
    if [ "$got" = 1572864 ]; then ok env/sample-fraction
    else fail env/sample-fraction "HEAPSCOPE_SAMPLE=1.5M: sample_bytes '$got', want 1572864"; fi
    for bad in HEAPSCOPE_SAMPLE=lots HEAPSCOPE_TIME_RESOLUTION=5s HEAPSCOPE_TIME_RESOLUTION=fast; do
        rm -f "$W/envbad.hst"
        out=$(env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/envbad.hst" "$bad" timeout 60 "$P/basic" 2>"$W/envbad.err")
        rc=$?
        nat=$(timeout 60 "$P/basic" 2>/dev/null)
        if [ $rc = 0 ] && [ "$out" = "$nat" ] && [ ! -e "$W/envbad.hst" ] && [ "$(wc -l <"$W/envbad.err")" = 1 ] &&
            grep -q "bad ${bad%%=*} '${bad#*=}'.*not tracing" "$W/envbad.err"; then ok "env/bad-value-${bad#HEAPSCOPE_}"
        else fail "env/bad-value-${bad#HEAPSCOPE_}" "rc $rc, trace $(ls "$W/envbad.hst" 2>/dev/null || echo none), stderr '$(head -c 300 "$W/envbad.err")'"; fi
    done

    # exec, default output names heapscope.<exe>.<pid>.hst in the cwd; the
    # two traces are told apart by the exe their report names
    hs_record exec --follow-exec -- "$P/execer" "$P/basic"
    fe="" fb=""
    i=0
    for f in "$W/exec.d"/*.hst*; do
        [ -f "$f" ] || continue
        i=$((i + 1))
        hs_report "$f" "$W/exec-scan$i" || continue
        case $($U get "$W/exec-scan$i.json" process.exe 2>/dev/null) in
        */execer | execer) fe=$f ;;
        */basic | basic) fb=$f ;;
        esac
    done
    n=$(ls "$W/exec.d" | grep -c '\.hst')
    if [ "$n" = 2 ] && [ -n "$fe" ] && [ -n "$fb" ]; then ok exec/follow-two-files
    else fail exec/follow-two-files "expected 2 readable traces (exe execer, exe basic), got: $(ls "$W/exec.d" | tr '\n' ' ')"; fi
    # execer's trace: blocks still live at exec count as leaked (the image
    # that owned them is gone)
    check_figs exec/follow-execer exec-e "${fe:-$W/exec.d/none}" $($U fig "$W/exec.out" "execer: " 2>/dev/null || echo - - - - -)
    check_figs exec/follow-target exec-b "${fb:-$W/exec.d/none}" $($U fig "$W/exec.out" 2>/dev/null || echo - - - - -)
    # a program that clears its environment (env -i, a daemon) and execs:
    # the program it runs is followed all the same
    hs_record execclr --follow-exec -- "$P/clearenv_exec" exec "$P/basic"
    cf=""
    for f in "$W/execclr.d"/heapscope.basic.*.hst; do [ -f "$f" ] && cf=$f; done
    check_figs exec/follow-after-clearenv execclr-b "${cf:-$W/none}" $($U fig "$W/execclr.out" 2>/dev/null || echo - - - - -)
    # system() after clearenv cannot be followed (the shell gets environ as
    # it is): record says why, not that --follow-exec was missing
    hs_record sysclr --follow-exec --follow-fork -- "$P/clearenv_exec" system "exit 0"
    if [ "$(cat "$W/sysclr.rc")" = 0 ] && [ "$(ls "$W/sysclr.d" | grep -c '\.hst')" = 1 ] &&
        grep -q "1 child process that was not traced; the program had cleared the tracer's variables" "$W/sysclr.err"; then
        ok exec/system-after-clearenv-said
    else fail exec/system-after-clearenv-said "rc $(cat "$W/sysclr.rc"), traces: $(ls "$W/sysclr.d" | tr '\n' ' '), stderr: $(tail -n 1 "$W/sysclr.err")"; fi

    # exec that skips libc's execve: syscall(SYS_execve), and execveat
    for via in syscall execveat; do
        mkdir -p "$W/execvia-$via.d"
        (cd "$W/execvia-$via.d" && EXECER_VIA=$via timeout 120 "$HS" record --follow-exec -- "$P/execer" "$P/basic") \
            >"$W/execvia-$via.out" 2>"$W/execvia-$via.err" </dev/null
        ev="" bv=""
        for f in "$W/execvia-$via.d"/*.hst; do
            [ -f "$f" ] || continue
            case $(basename "$f") in heapscope.execer.*) ev=$f ;; heapscope.basic.*) bv=$f ;; esac
        done
        check_figs exec/via-$via-execer execvia-$via-e "${ev:-$W/none}" $($U fig "$W/execvia-$via.out" "execer: " 2>/dev/null || echo - - - - -)
        check_figs exec/via-$via-target execvia-$via-b "${bv:-$W/none}" $($U fig "$W/execvia-$via.out" 2>/dev/null || echo - - - - -)
    done
    # default naming after exec: the new image's file is named after the new exe
    if [ -n "$fb" ] && [[ $(basename "$fb") =~ ^heapscope\.basic\.[0-9]+\.hst$ ]]; then ok exec/follow-default-name
    else fail exec/follow-default-name "expected the exec'd image's trace to be heapscope.basic.<pid>.hst, got: $(ls "$W/exec.d" | tr '\n' ' ')"; fi
    hs_record execnf -- "$P/execer" "$P/basic"
    n=$(ls "$W/execnf.d" | grep -c .)
    if [ "$n" = 1 ] && ls "$W/execnf.d"/heapscope.execer.*.hst >/dev/null 2>&1; then ok exec/no-follow-one-file
    else fail exec/no-follow-one-file "expected only heapscope.execer.<pid>.hst, got: $(ls "$W/execnf.d" | tr '\n' ' ')"; fi
    if [ "$(cat "$W/execnf.rc")" = 0 ] && grep -q '^figures: allocs=16 ' "$W/execnf.out"; then ok exec/no-follow-target-runs
    else fail exec/no-follow-target-runs "rc $(cat "$W/execnf.rc"), stdout: $(tr '\n' '|' <"$W/execnf.out" | head -c 200)"; fi
    # record says that what ran in the program's place went untraced, and how to trace it; not when followed
    if grep -q "the program ran another in its place (exec), which was not traced.*--follow-exec traces it too" "$W/execnf.err" &&
        ! grep -q "in its place" "$W/exec.err"; then ok exec/no-follow-said
    else fail exec/no-follow-said "without --follow-exec: '$(tail -n 1 "$W/execnf.err")'; with it: '$(grep "in its place" "$W/exec.err")'"; fi
    check_figs exec/no-follow-execer execnf "$(one_trace execnf)" $($U fig "$W/execnf.out" "execer: " 2>/dev/null || echo - - - - -)

    # all fds closed and re-used (dup2'ed onto 1..1023) by the program
    hs_record closefds -o "$W/closefds.hst" -- "$P/closefds" "$W/closefds.data"
    check_figs closefds/figures closefds "$W/closefds.hst" 25 15 4500 10 2000
    exp=$(for i in $(seq 0 19); do echo "closefds line $i"; done)
    if [ "$(cat "$W/closefds.rc")" = 0 ] && [ "$(cat "$W/closefds.data" 2>/dev/null)" = "$exp" ]; then ok closefds/data-file-intact
    else fail closefds/data-file-intact "rc $(cat "$W/closefds.rc"); data file should hold exactly 20 program lines, has $(wc -c <"$W/closefds.data" 2>/dev/null) bytes / $(grep -vc '^closefds line' "$W/closefds.data" 2>/dev/null) foreign lines (tracer wrote into a re-used fd?)"; fi

    # exit() from a non-main thread while workers keep allocating
    hs_record exitthr -o "$W/exitthr.hst" -- "$P/exit_thread"
    if [ "$(cat "$W/exitthr.rc")" != 3 ]; then
        fail exit_thread "exit status expected 3 got $(cat "$W/exitthr.rc") ($(first_line "$W/exitthr.err"))"
    elif report_ok exit_thread "$W/exitthr.hst" "$W/exitthr"; then
        a=$($U get "$W/exitthr.json" allocations 2>/dev/null || echo 0)
        l=$($U get "$W/exitthr.json" leaked.count 2>/dev/null || echo 0)
        if [ "$a" -ge 6061 ] && [ "$l" -ge 61 ]; then ok exit_thread
        else fail exit_thread "expected allocations >= 6061 (1 + 3*2000*1.01) and leaked.count >= 61, got $a / $l"; fi
    fi

    # _exit(0): no atexit, no destructors - the trace must still be complete
    hs_record uexit -o "$W/uexit.hst" -- "$P/underscore_exit"
    check_figs underscore_exit uexit "$W/uexit.hst" 9 3 1124 6 740
    # quick_exit(0): its _exit is libc's own call, which our hook does not
    # see; the trace kept its header alone until an at_quick_exit handler
    # (registered first, so run last) flushed it
    hs_record qexit -o "$W/qexit.hst" -- "$P/underscore_exit" quick
    check_figs quick_exit qexit "$W/qexit.hst" 9 3 1124 6 740
    # syscall(SYS_exit_group): libc's exit and _exit both skipped; every
    # event of this short run came after the writer's last chunk
    hs_record sexit -o "$W/sexit.hst" -- "$P/underscore_exit" syscall
    check_figs exit_group/syscall sexit "$W/sexit.hst" 9 3 1124 6 740
    if [ "$($U get "$W/sexit.json" end 2>/dev/null)" = _exit ]; then ok exit_group/syscall-clean-end
    else fail exit_group/syscall-clean-end "end '$($U get "$W/sexit.json" end 2>/dev/null)', expected _exit"; fi

    # kill -9 mid-run (env interface, so the pid killed is the program's)
    mkdir -p "$W/kill.d"
    # it would run 30 s: the reads below must find it running, however slow the machine
    kstart=$(date +%s.%N)
    (cd "$W/kill.d" && LD_PRELOAD=$LIB HEAPSCOPE_OUTPUT=$W/kill.d/k.hst exec "$P/steady" 30) \
        >"$W/kill.out" 2>"$W/kill.err" &
    kpid=$!
    sleep 1
    # read while the program runs: a snapshot that says so, not a trace of a killed process
    "$HS" report --json "$W/kill.d/k.hst" >"$W/live.json" 2>"$W/live.err"
    "$HS" report "$W/kill.d/k.hst" >"$W/live.txt" 2>/dev/null
    "$HS" leaks "$W/kill.d/k.hst" >"$W/live-leaks.out" 2>"$W/live-leaks.err"
    live_view=$(view_info "$W/kill.d/k.hst" end being_written)
    live_alive=0; kill -0 $kpid 2>/dev/null && live_alive=1
    kill -9 $kpid 2>/dev/null
    wait $kpid 2>/dev/null
    kelapsed=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$kstart" "$(date +%s.%N)")
    if [ ! -s "$W/kill.d/k.hst" ]; then
        fail sigkill "trace missing or empty after kill -9 at 1 s: $(ls -l "$W/kill.d" | tail -n +2 | tr '\n' ' ')"
    elif report_ok sigkill "$W/kill.d/k.hst" "$W/kill"; then
        a=$($U get "$W/kill.json" allocations 2>/dev/null || echo 0)
        # steady makes at most a batch of 101 allocations a millisecond, until the kill
        amax=$(python3 -c "import sys; print(int(101000 * float(sys.argv[1])) + 10100)" "$kelapsed")
        if [ "$a" -ge 1 ] && [ "$a" -le "$amax" ]; then ok sigkill
        else fail sigkill "expected 0 < allocations <= $amax after ${kelapsed}s, got $a"; fi
        e=$($U get "$W/kill.json" end)/$($U get "$W/kill.json" being_written)
        if [ "$e" = unknown/False ] || [ "$e" = unknown/false ]; then ok sigkill/not-being-written
        else fail sigkill/not-being-written "end/being_written after the kill: $e"; fi
    fi
    # the duration lines that say how a trace ends, wrapped within 80 columns
    # (lines that name paths are as long as the checkout's: not these)
    "$HS" report "$W/kill.d/k.hst" >"$W/kill.txt" 2>/dev/null
    if grep -A1 '^duration     ' "$W/live.txt" | tr -s ' \n' ' ' | grep -q ', no end yet: the process still runs and writes the trace (read up to its last flushed chunk) $' &&
        grep -A1 '^duration     ' "$W/kill.txt" | tr -s ' \n' ' ' | grep -q ', no clean end: killed or crashed (read up to the last flushed chunk) $' &&
        [ -z "$(awk 'length > 80 && !/\//' "$W/live.txt" "$W/kill.txt")" ]; then
        ok sigkill/report-text-80-columns
    else
        fail sigkill/report-text-80-columns "see $W/live.txt and $W/kill.txt"
    fi
    # the tracer holds a flock on the trace while it writes (hs_trace_info.being_written)
    e=$($U get "$W/live.json" end 2>/dev/null)/$($U get "$W/live.json" being_written 2>/dev/null)
    if [ $live_alive = 0 ]; then
        fail live/being-written "steady had ended before the live read (machine too slow?)"
    elif [ "$e" != running/True ] && [ "$e" != running/true ]; then
        fail live/being-written "end/being_written while running: '$e' ($(first_line "$W/live.err"))"
    elif [ "$(grep -c "still being written by pid $kpid (running)" "$W/live.err")" != 1 ]; then
        fail live/being-written "no one warning naming pid $kpid on stderr: $(first_line "$W/live.err")"
    else
        ok live/being-written
    fi
    # the viewer says so too
    if [ "$live_view" = "running True" ]; then ok live/viewer-running
    else fail live/viewer-running "/api/info of the running program's trace says '$live_view'"; fi
    # leaks streams where it can: on a trace being written its end would move, so it reads one snapshot, warned once
    if [ "$(grep -c "still being written by pid $kpid" "$W/live-leaks.err")" = 1 ] && grep -q '^matched' "$W/live-leaks.out"; then
        ok live/leaks-once
    else
        fail live/leaks-once "stderr: $(head -c 300 "$W/live-leaks.err" | tr '\n' '|') stdout: $(head -c 100 "$W/live-leaks.out")"
    fi
else
    for c in figures/family fork/parent fork/child fork/child-identity fork/no-follow-one-file \
        fork/no-follow-parent fork/env-percent-p exec/follow-two-files exec/follow-execer \
        exec/follow-target exec/follow-default-name exec/no-follow-one-file exec/no-follow-target-runs exec/no-follow-execer exec/no-follow-said \
        exec/via-syscall-execer exec/via-syscall-target exec/via-execveat-execer exec/via-execveat-target \
        exec/follow-after-clearenv exec/system-after-clearenv-said \
        closefds/figures closefds/data-file-intact exit_thread underscore_exit exit_group/syscall exit_group/syscall-clean-end \
        sigkill sigkill/not-being-written \
        live/being-written live/viewer-running live/leaks-once; do
        fail $c "$HS_MISSING"
    done
fi

# ------------------------------------------------ the tracer's namespace
# A preloaded library's symbols come before the program's: libheapscope.so defines
# only the entry points it interposes, C++'s operators and the public hs_ API. zstd
# is linked in with its symbols hidden (its static context is zstd's static-linking-
# only API); the CFI reading needs no libdw or libelf any more.
exports_check() {
    local bad needed
    if ! command -v nm >/dev/null || ! command -v readelf >/dev/null; then
        fail tracer/namespace "nm or readelf is not installed (binutils)"
        return
    fi
    bad=$(nm -D --defined-only "$LIB" 2>/dev/null | awk '{print $3}' |
        grep -E '^(ZSTD_|ZDICT_|HUF_|FSE_|HIST_|unw_|_U[A-Z]|dwarf_|elf_|gelf_|hs_)' |
        grep -vxE 'hs_(start|stop|marker|trace_if_requested)' | head -n 5 | tr '\n' ' ')
    needed=$(readelf -d "$LIB" 2>/dev/null | grep NEEDED | grep -oE '\[lib(dw|elf)\.' | tr -d '[.' | tr '\n' ' ')
    case $("${CC:-cc}" -print-file-name=libzstd.a 2>/dev/null) in
    /*) readelf -d "$LIB" 2>/dev/null | grep -q 'NEEDED.*libzstd' && needed="$needed libzstd (libzstd.a exists)" ;;
    esac
    if [ -n "$bad" ]; then
        fail tracer/namespace "libheapscope.so exports $bad"
    elif [ -n "${needed// /}" ]; then
        fail tracer/namespace "libheapscope.so loads $needed"
    else
        ok tracer/namespace
    fi
}
exports_check

# ----------------------------------------------------- behaviour unchanged
# stdout and exit status identical with and without the tracer.  Reuses the
# record runs above.  signals prints a timing-dependent iteration count,
# which is masked; exit_thread's output is deterministic ("exiting", 3).
behave() { # NAME TAG prog args...
    local name=$1 tag=$2; shift 2
    [ $HAVE_HS = 1 ] || { fail "behaviour/$name" "$HS_MISSING"; return; }
    native "$tag" "$@"
    local a b
    a=$(sed 's/^main_iters=.*/main_iters=N/' "$W/$tag.nat.out")
    b=$(sed 's/^main_iters=.*/main_iters=N/' "$W/$tag.out")
    if [ "$(cat "$W/$tag.nat.rc")" != "$(cat "$W/$tag.rc")" ]; then
        fail "behaviour/$name" "exit status native $(cat "$W/$tag.nat.rc") vs traced $(cat "$W/$tag.rc")"
    elif [ "$a" != "$b" ]; then
        fail "behaviour/$name" "stdout differs: native '$(echo "$a" | head -c 120 | tr '\n' '|')' traced '$(echo "$b" | head -c 120 | tr '\n' '|')'"
    else
        ok "behaviour/$name"
    fi
}
behave basic vg-basic "$P/basic"
behave family family "$P/family"
behave threads vg-threads "$P/threads"
behave cxx vg-cxx "$P/cxx"
behave dlopener vg-dlopener "$P/dlopener" "$P/libdlalloc.so"
behave early_late vg-early_late "$P/early_late"
behave signals vg-signals "$P/signals"
behave forker fork "$P/forker"
behave execer exec "$P/execer" "$P/basic"
behave exit_thread exitthr "$P/exit_thread"
behave underscore_exit uexit "$P/underscore_exit"
behave closefds closefds "$P/closefds" "$W/closefds.nat.data"

# preloaded without HEAPSCOPE_OUTPUT the library stays inert: stdout and exit
# status as native, stderr empty, no file written (the hooks then pass calls
# straight through: family covers every function, signals interrupts them)
inert() { # NAME TAG prog args...   (TAG: the native run of behave above)
    local name=$1 tag=$2 d=$W/inert.$1.d; shift 2
    [ $HAVE_HS = 1 ] || { fail "inert/$name" "$HS_MISSING"; return; }
    rm -rf "$d"; mkdir -p "$d/cwd"
    (cd "$d/cwd" && env -u HEAPSCOPE_OUTPUT -u HEAPSCOPE_SAMPLE LD_PRELOAD=$LIB timeout 60 "$@") \
        >"$d/out" 2>"$d/err" </dev/null
    local rc=$? a b
    a=$(sed 's/^main_iters=.*/main_iters=N/' "$W/$tag.nat.out")
    b=$(sed 's/^main_iters=.*/main_iters=N/' "$d/out")
    if [ "$rc" != "$(cat "$W/$tag.nat.rc")" ]; then
        fail "inert/$name" "exit status native $(cat "$W/$tag.nat.rc") vs preloaded $rc"
    elif [ "$a" != "$b" ]; then
        fail "inert/$name" "stdout differs from the native run's"
    elif [ -s "$d/err" ]; then
        fail "inert/$name" "stderr: $(head -c 160 "$d/err")"
    elif [ -n "$(ls -A "$d/cwd")" ]; then
        fail "inert/$name" "wrote $(ls -A "$d/cwd" | head -3 | tr '\n' ' ')"
    else
        ok "inert/$name"
    fi
}
inert basic vg-basic "$P/basic"
inert family family "$P/family"
inert threads vg-threads "$P/threads"
inert cxx vg-cxx "$P/cxx"
inert signals vg-signals "$P/signals"
inert forker fork "$P/forker"

# ------------------------------------------------------------------ symbols
if [ $HAVE_HS = 1 ] && [ -s "$W/vg-basic.json" ]; then
    line=$(grep -n 'HS-LEAK-SITE' "$T/progs/basic.c" | cut -d: -f1)
    $U sym_site symbols/basic-leak-site "$W/vg-basic.json" leaky_alloc basic.c "$line"
else
    fail symbols/basic-leak-site "${HS_MISSING:-no basic report}"
fi
if [ $HAVE_HS = 1 ] && [ -s "$W/vg-dlopener.json" ]; then
    # the library was dlclose()d before exit: symbols must still resolve
    line=$(grep -n 'HS-DL-LEAK-SITE' "$T/progs/libdlalloc.c" | cut -d: -f1)
    $U sym_site symbols/dlclosed-leak-site "$W/vg-dlopener.json" dl_alloc_leak libdlalloc.c "$line"
else
    fail symbols/dlclosed-leak-site "${HS_MISSING:-no dlopener report}"
fi
# a library replaced by another at the same addresses within one writer tick:
# the new return addresses must bring the module map up to date (load of the
# second library and unload of the first) before their stack nodes are written
# (libreload_c's code sits elsewhere than libreload_a's, so it makes new nodes;
# one with the very same return addresses makes none, and waits for the tick)
if [ $HAVE_HS = 1 ]; then
    hs_record reload -o "$W/reload.hst" -- "$P/reloader" "$P/libreload_a.so" "$P/libreload_c.so"
    "$HS" dump "$W/reload.hst" >"$W/reload.dump" 2>&1
    a=$(grep -c ' module .*libreload_a\.so$' "$W/reload.dump"); c=$(grep -c ' module .*libreload_c\.so$' "$W/reload.dump")
    u=$(grep -c ' module-unload ' "$W/reload.dump")
    if [ "$a" -ge 1 ] && [ "$c" -ge 1 ] && [ "$u" -ge 1 ]; then
        ok modules/replaced-at-same-address
    else
        fail modules/replaced-at-same-address "module records: libreload_a $a, libreload_c $c, unloads $u (want each >= 1)"
    fi
else
    fail modules/replaced-at-same-address "$HS_MISSING"
fi

# dlopen'ed by a relative name: the loader knows it by that name only, the
# trace must name the file so that a report run elsewhere still finds it
if [ $HAVE_HS = 1 ]; then
    mkdir -p "$W/dlrel.d"
    rel=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$P/libdlalloc.so" "$W/dlrel.d")
    hs_record dlrel -o "$W/dlrel.hst" -- "$P/dlopener" "$rel"
    line=$(grep -n 'HS-DL-LEAK-SITE' "$T/progs/libdlalloc.c" | cut -d: -f1)
    if report_ok symbols/dlopen-relative-path "$W/dlrel.hst" "$W/dlrel"; then
        $U sym_site symbols/dlopen-relative-path "$W/dlrel.json" dl_alloc_leak libdlalloc.c "$line"
    fi
else
    fail symbols/dlopen-relative-path "$HS_MISSING"
fi
# No debug info: names from the symbol table (symbolize.c keeps its sized
# globals and locals sorted; libdw scanned all of them for each address), a
# static function's from .symtab's locals; stripped, every frame of the
# program is named by module and offset, none by a wrong neighbour
if [ $HAVE_HS = 1 ]; then
    for how in symtab stripped; do
        flags="-O1 -fno-omit-frame-pointer"
        [ $how = stripped ] && flags="$flags -s"
        if ! gcc $flags -o "$P/nodebug-$how" "$T/progs/nodebug.c" 2>"$W/nodebug-$how.cc"; then
            fail symbols/no-debug-info-$how "cannot build nodebug.c: $(first_line "$W/nodebug-$how.cc")"
            continue
        fi
        hs_record nodebug-$how -o "$W/nodebug-$how.hst" -- "$P/nodebug-$how"
        got=$(timeout 60 "$HS" flame --folded --weight count "$W/nodebug-$how.hst" -o - 2>/dev/null |
            sed "s/nodebug-$how+0x[0-9a-f]*/OFF/g" | sort | tr '\n' '|')
        if [ $how = symtab ]; then want="main;nd_static 100|main;nd_weak;nd_global;nd_static 100|"
        else want="OFF;OFF;OFF 100|OFF;OFF;OFF;OFF;OFF 100|"; fi
        if [ "$got" = "$want" ]; then ok symbols/no-debug-info-$how
        else fail symbols/no-debug-info-$how "folded stacks '$got', want '$want'"; fi
    done
else
    fail symbols/no-debug-info "$HS_MISSING"
fi
if [ $HAVE_HS = 1 ] && [ -s "$W/vg-cxx.json" ]; then
    $U sym_any symbols/cxx-demangled "$W/vg-cxx.json" "ns::Widget::make("
else
    fail symbols/cxx-demangled "${HS_MISSING:-no cxx report}"
fi
# C++ over jemalloc and tcmalloc: they serve operator new and delete
# themselves, without malloc and free; the program's figures must equal
# valgrind's for the same program over glibc (the allocators' own start-up
# calls to malloc left out by --not-through)
for alloc in libjemalloc.so.2 libtcmalloc_minimal.so.4; do
    name=cxx-over-${alloc%%.so*}
    lib=/usr/lib/x86_64-linux-gnu/$alloc
    if [ $HAVE_HS != 1 ] || [ ! -s "$W/cxx.vg" ]; then
        fail "valgrind/$name" "${HS_MISSING:-no valgrind oracle for cxx}"
        continue
    fi
    if [ ! -e "$lib" ]; then
        fail "valgrind/$name" "$lib is missing (Debian packages libjemalloc2 and libtcmalloc-minimal4)"
        continue
    fi
    mkdir -p "$W/$name.d"
    (cd "$W/$name.d" && LD_PRELOAD=$lib timeout 60 "$HS" record -o "$W/$name.hst" -- "$P/cxx") >"$W/$name.out" 2>"$W/$name.err"
    timeout 60 "$HS" top --json --not-through 'libjemalloc|libtcmalloc' "$W/$name.hst" >"$W/$name.json" 2>"$W/$name.terr"
    read -r va _ vb vlc vlb <"$W/cxx.vg"
    got=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["total"]; print(t["calls"], t["bytes"], t["leaked_count"], t["leaked_bytes"])' "$W/$name.json" 2>/dev/null)
    if [ "$got" = "$va $vb $vlc $vlb" ]; then ok "valgrind/$name"
    else fail "valgrind/$name" "allocations, bytes, leaked blocks and bytes: valgrind over glibc $va $vb $vlc $vlb, heapscope over $alloc '$got' ($(first_line "$W/$name.err"))"; fi
done

# Rust: v0 names demangled, the leaking line of our own function (inlined
# Box::new and DWARF whose functions sit in namespace DIEs), and the text
# report's first frame is ours, not the allocator's
if [ $HAVE_HS = 1 ] && [ -s "$W/vg-rust.json" ]; then
    line=$(grep -n 'HS-RUST-LEAK-SITE' "$T/progs/rust_leak.rs" | cut -d: -f1)
    $U sym_site symbols/rust-v0-leak-site "$W/vg-rust.json" hsrust::leak_node rust_leak.rs "$line"
    line=$(grep -n 'HS-RUST-FILL-SITE' "$T/progs/rust_leak.rs" | cut -d: -f1)
    $U sym_frame symbols/rust-inlined-std "$W/vg-rust.json" hsrust::fill rust_leak.rs "$line"
    $U no_mangled symbols/rust-no-mangled-names "$W/vg-rust.json"
    timeout 60 "$HS" report "$W/vg-rust.hst" >"$W/vg-rust.txt" 2>&1
    first=$(sed -n '/^top [0-9]* sites by leaked bytes/,$p' "$W/vg-rust.txt" | sed -n '3p' | awk '{print $1}')
    if [ "$first" = hsrust::leak_node ]; then
        ok report/rust-first-frame-ours
    else
        fail report/rust-first-frame-ours "the leaked site's first frame is '$first', not hsrust::leak_node"
    fi
else
    fail symbols/rust-v0-leak-site "${HS_MISSING:-no rust report}"
fi
# The binary at a module's path is another build (rebuilt since), or gone
# (a trace from another machine): its frames are left unnamed with a
# warning that says why and what to do (it was silent), and --binaries
# finds the build that ran: under its recorded path, by its name, or by
# build-id below the directory
if [ $HAVE_HS = 1 ]; then
    rb="$W/rebuilt.d"
    rm -rf "$rb"
    mkdir -p "$rb/kept/deeper/still" "$rb/byname"
    line=$(grep -n 'HS-REBUILT-LEAK' "$T/progs/rebuilt.c" | cut -d: -f1)
    why=""
    if gcc $CFLAGS -I"$T/progs" -o "$rb/prog" "$T/progs/rebuilt.c" 2>"$W/rebuilt.cc"; then
        (cd "$rb" && timeout 60 "$HS" record -o r.hst -- ./prog) >/dev/null 2>&1
        cp "$rb/prog" "$rb/kept/deeper/still/prog.as-run"
        cp "$rb/prog" "$rb/byname/prog"
        gcc $CFLAGS -DOTHER -I"$T/progs" -o "$rb/prog" "$T/progs/rebuilt.c" 2>>"$W/rebuilt.cc" || why="$why; the second build failed"
        timeout 60 "$HS" report --json "$rb/r.hst" >"$rb/other.json" 2>"$rb/other.err"
        first=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["top"]["leaked"][0]["frames"][0]["function"] or "")' "$rb/other.json" 2>/dev/null)
        case "$first" in ""|prog+0x*) ;; *) why="$why; the other build named the leak '$first'" ;; esac
        grep -q "addresses in '$rb/prog' left unnamed: the file there is another build (rebuilt since the trace was recorded?); give the directory that holds the binary that ran with --binaries DIR" "$rb/other.err" ||
            why="$why; no warning of another build: $(first_line "$rb/other.err")"
        timeout 60 "$HS" report --json --binaries "$rb/kept" "$rb/r.hst" >"$rb/byid.json" 2>"$rb/byid.err"
        [ -s "$rb/byid.err" ] && why="$why; warned with the build that ran found by build-id: $(first_line "$rb/byid.err")"
        rm -f "$rb/prog"
        timeout 60 "$HS" leaks --all "$rb/r.hst" >"$rb/gone.txt" 2>"$rb/gone.err"
        grep -q "addresses in '$rb/prog' left unnamed: no such file; give" "$rb/gone.err" ||
            why="$why; no warning of a missing file: $(first_line "$rb/gone.err")"
        timeout 60 "$HS" report --json --binaries "$rb/byname" "$rb/r.hst" >"$rb/byname.json" 2>"$rb/byname.err"
        timeout 60 "$HS" report --binaries "$rb/kept/deeper" --binaries "$rb/nothing-here" "$rb/r.hst" >/dev/null 2>"$rb/baddir.err"
        [ $? = 1 ] && grep -q "'$rb/nothing-here' is not a directory; give --binaries the directory that holds the traced binaries" "$rb/baddir.err" ||
            why="$why; a --binaries that is no directory: $(first_line "$rb/baddir.err")"
    else
        why="; cannot build rebuilt.c: $(first_line "$W/rebuilt.cc")"
    fi
    if [ -z "$why" ]; then ok symbols/other-build-unnamed-with-warning; else fail symbols/other-build-unnamed-with-warning "${why#; }"; fi
    $U sym_site symbols/binaries-by-build-id "$rb/byid.json" leak_site rebuilt.c "$line"
    $U sym_site symbols/binaries-by-name "$rb/byname.json" leak_site rebuilt.c "$line"
fi
# a thread that only maps memory, sharing the main thread's prediction slot
# (tid mod 16), its records between the main thread's in the same chunks:
# the trace reads back whole (the reader once took the slot over at the
# switch and called the main thread's next free corrupt)
if [ $HAVE_HS = 1 ]; then
    hs_record slotmap -o "$W/slotmap.hst" -- "$P/slotmap"
    if ! grep -q '^shared=1 ' "$W/slotmap.out"; then
        fail slotmap/figures "no thread got the main thread's slot: $(first_line "$W/slotmap.out") $(first_line "$W/slotmap.err")"
    elif timeout 60 "$HS" top --json --through churn "$W/slotmap.hst" >"$W/slotmap.json" 2>"$W/slotmap.terr"; then
        got=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["total"]; print(round(t["calls"]), round(t["leaked_count"]))' "$W/slotmap.json" 2>/dev/null)
        maps=$("$HS" report --json "$W/slotmap.hst" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["calls"]["mmap"] > 0)' 2>/dev/null)
        if [ "$got $maps" = "400000 0 True" ]; then ok slotmap/figures
        else fail slotmap/figures "churn's allocations and leaks, mmap seen: expected '400000 0 True' got '$got $maps'"; fi
    else
        fail slotmap/figures "heapscope top: $(first_line "$W/slotmap.terr")"
    fi
else
    fail slotmap/figures "$HS_MISSING"
fi

# Symbols from a separate debug file with compressed DWARF, the way Debian's
# -dbg packages ship them: found by .gnu_debuglink in the program's .debug
# directory, inflated once into the cache, read from the cache after; the
# leaking line is named with the cache cold, warm and off, and a cache file
# of another build is not taken
sepdebug() { # NAME CACHE_DIR
    HEAPSCOPE_CACHE_DIR=$2 timeout 60 "$HS" report --json "$SD/sep.hst" >"$SD/$1.json" 2>"$SD/$1.err"
    $U sym_site "symbols/sepdebug-$1" "$SD/$1.json" leaky_alloc basic.c "$line"
}
SD=$W/sepdebug
rm -rf "$SD"
mkdir -p "$SD/bin/.debug"
line=$(grep -n 'HS-LEAK-SITE' "$T/progs/basic.c" | cut -d: -f1)
if [ $HAVE_HS != 1 ]; then
    fail symbols/sepdebug-build "$HS_MISSING"
elif ! { gcc -g -O0 -Wl,--build-id -o "$SD/bin/basic" "$T/progs/basic.c" &&
    objcopy --only-keep-debug --compress-debug-sections=zlib "$SD/bin/basic" "$SD/bin/.debug/basic.debug" &&
    objcopy --strip-debug --add-gnu-debuglink="$SD/bin/.debug/basic.debug" "$SD/bin/basic"; } >"$SD/cc.log" 2>&1; then
    fail symbols/sepdebug-build "$(first_line "$SD/cc.log")"
elif ! (cd "$SD" && timeout 60 "$HS" record -o "$SD/sep.hst" -- "$SD/bin/basic") >/dev/null 2>"$SD/record.err"; then
    fail symbols/sepdebug-build "record: $(first_line "$SD/record.err")"
else
    bid=$(readelf -n "$SD/bin/basic" | sed -n 's/.*Build ID: *//p')
    cached=$SD/cache/debug/.build-id/${bid:0:2}/${bid:2}.debug
    if readelf -S "$SD/bin/.debug/basic.debug" 2>/dev/null | grep -A1 debug_info | grep -q ' C '; then ok symbols/sepdebug-build
    else fail symbols/sepdebug-build "objcopy left .debug_info uncompressed"; fi
    # what writers killed midway left: the file of one dead 20 minutes ago goes, a live writer's stays
    mkdir -p "$(dirname "$cached")"
    touch -d '20 minutes ago' "$cached.4000001.tmp"
    touch "$cached.4000002.tmp"
    sepdebug cold "$SD/cache"
    if [ ! -e "$cached.4000001.tmp" ] && [ -e "$cached.4000002.tmp" ]; then ok symbols/sepdebug-stale-tmp-swept
    else fail symbols/sepdebug-stale-tmp-swept "left: $(ls "$(dirname "$cached")" | tr '\n' ' ')"; fi
    if [ -s "$cached" ] && ! readelf -S "$cached" 2>/dev/null | grep -A1 debug_info | grep -q ' C '; then
        ok symbols/sepdebug-cached-inflated
    else
        fail symbols/sepdebug-cached-inflated "no inflated copy at $cached ($(ls -R "$SD/cache" 2>&1 | tr '\n' ' '))"
    fi
    # the cached copy is the one read now: a run that could not find the original must still name the line
    mv "$SD/bin/.debug" "$SD/bin/.debug.away"
    sepdebug warm "$SD/cache"
    mv "$SD/bin/.debug.away" "$SD/bin/.debug"
    sepdebug off off
    if cmp -s "$SD/cold.json" "$SD/warm.json" && cmp -s "$SD/cold.json" "$SD/off.json"; then
        ok symbols/sepdebug-same-report
    else
        fail symbols/sepdebug-same-report "reports differ with the cache cold, warm and off"
    fi
    # a file of another build under this build-id's name is passed over (and left for the real one to replace)
    cp "$P/basic" "$cached"
    sepdebug foreign "$SD/cache"
    if [ "$(readelf -n "$cached" 2>/dev/null | sed -n 's/.*Build ID: *//p')" = "$bid" ]; then ok symbols/sepdebug-foreign-replaced
    else fail symbols/sepdebug-foreign-replaced "the cache still holds another build's file at $cached"; fi
    # a hit marks its file used (mtime), at most once an hour
    touch -d '2 hours ago' "$cached"
    sepdebug hit "$SD/cache"
    age=$(( $(date +%s) - $(stat -c %Y "$cached" 2>/dev/null || echo 0) ))
    if [ "$age" -lt 600 ]; then ok symbols/sepdebug-hit-marks-used
    else fail symbols/sepdebug-hit-marks-used "the cached file's mtime is ${age}s old after a hit"; fi
    # past HEAPSCOPE_CACHE_MAX the file used least lately goes: room for one file, a second build comes in
    mkdir -p "$SD/bin2/.debug"
    if { gcc -g -O1 -Wl,--build-id -o "$SD/bin2/basic" "$T/progs/basic.c" &&
        objcopy --only-keep-debug --compress-debug-sections=zlib "$SD/bin2/basic" "$SD/bin2/.debug/basic.debug" &&
        objcopy --strip-debug --add-gnu-debuglink="$SD/bin2/.debug/basic.debug" "$SD/bin2/basic"; } >"$SD/cc2.log" 2>&1 &&
        (cd "$SD" && timeout 60 "$HS" record -o "$SD/sep2.hst" -- "$SD/bin2/basic") >/dev/null 2>"$SD/record2.err"; then
        bid2=$(readelf -n "$SD/bin2/basic" | sed -n 's/.*Build ID: *//p')
        cached2=$SD/cache/debug/.build-id/${bid2:0:2}/${bid2:2}.debug
        size1=$(stat -c %s "$cached")
        touch -d '2 hours ago' "$cached"
        HEAPSCOPE_CACHE_MAX=$(( size1 * 3 / 2 )) HEAPSCOPE_CACHE_DIR=$SD/cache timeout 60 "$HS" report --json "$SD/sep2.hst" \
            >"$SD/evict.json" 2>"$SD/evict.err"
        $U sym_site symbols/sepdebug-evicting-report "$SD/evict.json" leaky_alloc basic.c "$line"
        if [ "$bid2" != "$bid" ] && [ -s "$cached2" ] && [ ! -e "$cached" ]; then ok symbols/sepdebug-evicted-over-max
        else fail symbols/sepdebug-evicted-over-max "cache holds: $(find "$SD/cache" -type f -printf '%P ' 2>&1)"; fi
        # room for the new file and one more: of an old file and a recently used one, the old one goes
        c3=$SD/cache3/debug/.build-id
        mkdir -p "$c3/${bid:0:2}" "$c3/ff"
        [ -s "$cached2" ] && cp "$SD/bin/basic" "$c3/${bid:0:2}/${bid:2}.debug"
        head -c 1000 /dev/zero >"$c3/ff/recent.debug"
        touch -d '3 hours ago' "$c3/${bid:0:2}/${bid:2}.debug"
        touch -d '1 hour ago' "$c3/ff/recent.debug"
        HEAPSCOPE_CACHE_MAX=$(( $(stat -c %s "$cached2" 2>/dev/null || echo 0) + 1500 )) HEAPSCOPE_CACHE_DIR=$SD/cache3 \
            timeout 60 "$HS" report --json "$SD/sep2.hst" >/dev/null 2>&1
        if [ -s "$c3/${bid2:0:2}/${bid2:2}.debug" ] && [ -e "$c3/ff/recent.debug" ] && [ ! -e "$c3/${bid:0:2}/${bid:2}.debug" ]
        then ok symbols/sepdebug-evicted-least-used
        else fail symbols/sepdebug-evicted-least-used "cache holds: $(find "$SD/cache3" -type f -printf '%P ' 2>&1)"; fi
        # the file just written stays even when another claims a later use (a clock set back)
        c4=$SD/cache4/debug/.build-id
        mkdir -p "$c4/ee"
        head -c 1000 /dev/zero >"$c4/ee/future.debug"
        touch -d 'tomorrow' "$c4/ee/future.debug"
        HEAPSCOPE_CACHE_MAX=$(( $(stat -c %s "$cached2" 2>/dev/null || echo 0) + 500 )) HEAPSCOPE_CACHE_DIR=$SD/cache4 \
            timeout 60 "$HS" report --json "$SD/sep2.hst" >/dev/null 2>&1
        if [ -s "$c4/${bid2:0:2}/${bid2:2}.debug" ] && [ ! -e "$c4/ee/future.debug" ]; then ok symbols/sepdebug-keeps-new-file
        else fail symbols/sepdebug-keeps-new-file "cache holds: $(find "$SD/cache4" -type f -printf '%P ' 2>&1)"; fi
        # a file larger than the whole cache inflated (not compressed) is read compressed and not kept
        HEAPSCOPE_CACHE_MAX=$(stat -c %s "$SD/bin2/.debug/basic.debug") HEAPSCOPE_CACHE_DIR=$SD/cache2 timeout 60 "$HS" report --json "$SD/sep2.hst" \
            >"$SD/toobig.json" 2>"$SD/toobig.err"
        if cmp -s "$SD/evict.json" "$SD/toobig.json" && [ -z "$(find "$SD/cache2" -type f 2>/dev/null)" ]; then
            ok symbols/sepdebug-too-big-not-kept
        else
            fail symbols/sepdebug-too-big-not-kept "report differs or files kept: $(find "$SD/cache2" -type f -printf '%P ' 2>&1)"
        fi
    else
        fail symbols/sepdebug-evicted-least-used "second build: $(first_line "$SD/cc2.log") $(first_line "$SD/record2.err")"
    fi
    # a malformed limit is refused with the fix
    if ! HEAPSCOPE_CACHE_MAX=lots "$HS" report "$SD/sep.hst" >/dev/null 2>"$SD/badmax.err" &&
        grep -q "bad HEAPSCOPE_CACHE_MAX 'lots'" "$SD/badmax.err"; then ok symbols/cache-max-malformed
    else fail symbols/cache-max-malformed "got: $(first_line "$SD/badmax.err")"; fi
fi

if [ $HAVE_HS = 1 ]; then
    $U no_hs symbols/no-tracer-frames $(ls "$W"/vg-*.json 2>/dev/null)
else
    fail symbols/no-tracer-frames "$HS_MISSING"
fi

# ------------------------------------------------- death by a signal
# The tracer catches the signals whose default action ends the process,
# flushes, and lets the signal kill as before (same exit status): the
# trace holds every allocation, not only those of the last flushed chunk.
for m in segv:11 abort:6 term:15 reraise:11; do
    mode=${m%%:*} sig=${m#*:}
    if [ $HAVE_HS = 1 ]; then
        hs_record "crash-$mode" -o "$W/crash-$mode.hst" -- "$P/crasher" "$mode"
        rc=$(cat "$W/crash-$mode.rc")
        if [ "$rc" != $((128 + sig)) ]; then
            fail "signal/$mode-status" "heapscope record exited $rc, the program dies by signal $sig ($((128 + sig)))"
        else
            ok "signal/$mode-status"
        fi
        check_figs "signal/$mode-figures" "crash-$mode" "$W/crash-$mode.hst" 1000 0 64000 1000 64000
        e=$($U get "$W/crash-$mode.json" end 2>/dev/null)/$($U get "$W/crash-$mode.json" signal 2>/dev/null)
        if [ "$e" = "signal/$sig" ]; then ok "signal/$mode-end"
        else fail "signal/$mode-end" "report says end/signal $e, expected signal/$sig"; fi
    else
        fail "signal/$mode-status" "$HS_MISSING"
    fi
done
# the viewer says the same of the crashed run
if [ $HAVE_HS = 1 ] && [ -s "$W/crash-segv.hst" ]; then
    got=$(view_info "$W/crash-segv.hst" end signal)
    if [ "$got" = "signal 11" ]; then ok signal/viewer-end
    else fail signal/viewer-end "/api/info of the crashed run says '$got'"; fi
else
    fail signal/viewer-end "${HS_MISSING:-no crash trace}"
fi
# Why the viewer cannot listen: every failure read "no free port from 8080
# to 8179; give one with --port", for a --port given that was in use and
# for an address that is not this machine's (192.0.2.1, TEST-NET-1)
if [ $HAVE_HS = 1 ] && [ -s "$W/crash-segv.hst" ]; then
    why=""
    python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(20)' >"$W/busyport" &
    bpid=$!
    for _ in $(seq 1 50); do [ -s "$W/busyport" ] && break; sleep 0.1; done
    bport=$(cat "$W/busyport")
    timeout 10 "$HS" view --port "$bport" "$W/crash-segv.hst" >/dev/null 2>"$W/view-busy.err"
    rc=$?
    [ $rc = 1 ] && grep -qx "heapscope: port $bport on 127.0.0.1 is in use; pick another --port" "$W/view-busy.err" ||
        why="$why; --port in use: exit $rc, $(head -c 200 "$W/view-busy.err")"
    kill $bpid 2>/dev/null; wait $bpid 2>/dev/null
    timeout 10 "$HS" view --host 192.0.2.1 "$W/crash-segv.hst" >/dev/null 2>"$W/view-host.err"
    rc=$?
    [ $rc = 1 ] && grep -q "'192.0.2.1' is not an address of this machine; give --host 127.0.0.1" "$W/view-host.err" ||
        why="$why; --host not ours: exit $rc, $(head -c 200 "$W/view-host.err")"
    if [ -z "$why" ]; then ok view/cannot-listen-says-why; else fail view/cannot-listen-says-why "${why#; }"; fi
else
    fail view/cannot-listen-says-why "${HS_MISSING:-no crash trace}"
fi
# the handlers are invisible: the program finds SIG_DFL and its own handler wins
if [ $HAVE_HS = 1 ]; then
    hs_record crash-query -o "$W/crash-query.hst" -- "$P/crasher" query
    got=$(grep -o 'sysv=.*' "$W/crash-query.out")
    if [ "$got" = "sysv=own usr1=dfl sigint=dfl sigterm-prev=dfl survived" ]; then ok signal/handlers-invisible
    else fail signal/handlers-invisible "the traced program printed '$got'"; fi
    # CPython installs its KeyboardInterrupt handler only over SIG_DFL
    hs_record crash-py -o "$W/crash-py.hst" -- python3 -c 'import signal; print(signal.getsignal(signal.SIGINT).__name__)'
    got=$(cat "$W/crash-py.out")
    if [ "$got" = default_int_handler ]; then ok signal/python-keyboardinterrupt
    else fail signal/python-keyboardinterrupt "python's SIGINT handler under the tracer: '$got'"; fi
else
    fail signal/handlers-invisible "$HS_MISSING"
fi

# an output path that cannot be created is refused before the program runs
# (the program would otherwise run untraced): a missing directory, a
# directory as the file, a file as the directory
if [ $HAVE_HS = 1 ]; then
    for o in "$W/no-such-dir/x.hst" "$W" "$T/progs/basic.c/x.hst"; do
        rm -f "$W/ran-anyway"
        (cd "$W" && timeout 30 "$HS" record -o "$o" -- sh -c ': >"$1"' sh "$W/ran-anyway") >"$W/badout.out" 2>"$W/badout.err"
        rc=$?
        if [ $rc = 1 ] && [ ! -e "$W/ran-anyway" ] && grep -q "$o" "$W/badout.err"; then
            ok "record/bad-output $(basename "$(dirname "$o")")/$(basename "$o")"
        else
            fail "record/bad-output $(basename "$o")" "rc $rc, program ran: $([ -e "$W/ran-anyway" ] && echo yes || echo no), stderr: $(first_line "$W/badout.err")"
        fi
    done
else
    fail record/bad-output "$HS_MISSING"
fi

# --------------------------------------------------- real programs/heaptrack
# heaptrack 1.4 (heaptrack_preload.cpp) intercepts malloc, calloc, realloc,
# posix_memalign, aligned_alloc, valloc (+free) - not memalign, pvalloc or
# reallocarray, which glibc implements without going through an
# interposable malloc/realloc.  A call is recorded only when it returns
# non-NULL, and realloc(p, n) -> q is recorded as free(p) + alloc(q): so
# "calls to allocation functions" is valgrind's "allocs" restricted to the
# intercepted functions.  Like with like: heapscope's allocations minus its
# memalign/pvalloc/reallocarray calls.  (heaptrack's figure also includes
# one allocation of its own: libheaptrack_preload.so pulls in libstdc++,
# whose emergency EH pool is malloc'd at load time - irrelevant at 0.1%.)
# Both tools run the same command in the same directory with
# PYTHONHASHSEED=0, so the workload is the same.
ht_check() { # NAME STDIN-FILE cmd...
    local name=$1 in=$2; shift 2
    mkdir -p "$W/ht-$name.d"
    (cd "$W/ht-$name.d" && timeout 300 heaptrack -o "$W/ht-$name.d/ht" "$@") <"$in" >"$W/ht-$name.log" 2>&1
    local z; z=$(ls "$W/ht-$name.d"/ht*.zst "$W/ht-$name.d"/ht*.gz 2>/dev/null | head -n 1)
    heaptrack_print -p 0 -a 0 -T 0 -f "$z" >"$W/ht-$name.print" 2>&1
    local htn
    if ! htn=$($U ht "$W/ht-$name.print" 2>/dev/null); then
        fail "heaptrack/$name" "oracle: heaptrack produced no summary (see $W/ht-$name.log)"
        return
    fi
    [ $HAVE_HS = 1 ] || { fail "heaptrack/$name" "$HS_MISSING"; return; }
    mkdir -p "$W/hs-$name.d"
    (cd "$W/hs-$name.d" && timeout 300 "$HS" record -o "$W/hs-$name.hst" -- "$@") <"$in" >"$W/hs-$name.out" 2>"$W/hs-$name.err"
    report_ok "heaptrack/$name" "$W/hs-$name.hst" "$W/hs-$name" || return
    python3 - "$W/hs-$name.json" "$htn" "heaptrack/$name" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1])); ht = int(sys.argv[2]); name = sys.argv[3]
c = r.get("calls", {})
hs = r["allocations"] - sum(c.get(k, 0) for k in ("memalign", "pvalloc", "reallocarray"))
err = abs(hs - ht) / ht * 100
if err <= 0.1:
    print("ok %s" % name)
else:
    print("FAIL %s: heaptrack counted %d allocation calls, heapscope %d (allocations %d) - %.3f%% off, limit 0.1%%"
          % (name, ht, hs, r["allocations"], err))
EOF
}
python3 - "$W/sqlite.sql" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, val INTEGER);\n"
            "CREATE INDEX t_name ON t(name);\nBEGIN;\n")
    for i in range(20000):
        f.write("INSERT INTO t(name,val) VALUES('name-%05d-%d', %d);\n" % ((i * 7919) % 20000, i, i * 31 % 1000))
    f.write("COMMIT;\nSELECT count(*), sum(val) FROM t;\nSELECT name FROM t ORDER BY name LIMIT 3;\n")
EOF
ht_check sqlite3 "$W/sqlite.sql" sqlite3 :memory:
# sqlite3 again: Debian's library has no symbols for its static functions.
# Two runs of the same program must match site for site in `diff`, by
# function too: such a function is named by its module and the address
# there, which ASLR does not move (absolute addresses never matched)
if [ $HAVE_HS = 1 ] && [ -s "$W/hs-sqlite3.hst" ]; then
    (cd "$W/hs-sqlite3.d" && timeout 300 "$HS" record -o "$W/hs-sqlite3b.hst" -- sqlite3 :memory:) \
        <"$W/sqlite.sql" >"$W/hs-sqlite3b.out" 2>"$W/hs-sqlite3b.err"
    # by backtrace, sites are the distinct sequences of visible frames: a
    # known function by its file:line, an unknown one by its address (the
    # same in one trace); matching must merge none of them
    timeout 120 "$HS" top --json --by backtrace -n 1000000 "$W/hs-sqlite3.hst" >"$W/sqlite-top-all.json" 2>&1
    timeout 120 "$HS" top --json --by function -n 1000000 "$W/hs-sqlite3.hst" >"$W/sqlite-top-fn.json" 2>&1
    for by in function backtrace; do
        timeout 120 "$HS" diff --json --by $by "$W/hs-sqlite3.hst" "$W/hs-sqlite3b.hst" >"$W/sqlite-diff-$by.json" 2>&1
        python3 - "$W/sqlite-diff-$by.json" "diff/unsymbolized-runs-match-$by" "$W/sqlite-top-all.json" "$W/sqlite-top-fn.json" <<'EOF'
import json, re, sys
name = sys.argv[2]
try:
    d = json.load(open(sys.argv[1]))
    top = json.load(open(sys.argv[3]))
    topfn = json.load(open(sys.argv[4]))
except Exception as e:  # noqa: BLE001
    print("FAIL %s: no diff or top JSON (%s)" % (name, e)); sys.exit()
# diff lists the changed sites only: two runs of a deterministic program may
# change none, so the unsymbolized names are looked for in the trace's own rows
rows = d.get("rows") or []
alone = [r for r in rows if r.get("status") != "both"]
unsym = re.compile(r"libsqlite3\.so[.0-9]*\+0x[0-9a-f]+")
named_top = [r.get("name") for r in topfn.get("rows") or [] if unsym.search(r.get("name") or "")]
sites = {tuple((f["function"], (f["file"] or "").split("/")[-1], f["line"]) if f["function"] else (f["module"], f["address"])
               for f in r["frames"]) for r in top["rows"]}
if d.get("by") == "function" and not named_top:
    print("FAIL %s: no site named libsqlite3.so.0+0x... by function; rows: %s" % (name, [r.get("name") for r in (topfn.get("rows") or [])[:5]]))
elif d.get("by") == "function" and d.get("rows_total") != len(topfn.get("rows") or []):
    print("FAIL %s: diff matched %s rows where top has %d functions" % (name, d.get("rows_total"), len(topfn.get("rows") or [])))
elif alone:
    print("FAIL %s: %d of %d sites only in one run, e.g. %s" % (name, len(alone), len(rows), alone[0].get("name")))
elif d.get("by") == "backtrace" and d.get("rows_total") != len(sites):
    print("FAIL %s: %s rows where the trace has %d distinct visible backtraces (unknown frames merged?)"
          % (name, d.get("rows_total"), len(sites)))
else:
    print("ok %s" % name)
EOF
    done
else
    fail diff/unsymbolized-runs-match-function "${HS_MISSING:-no sqlite3 trace}"
fi
# /usr/bin/python3 explicitly: a `python3` on PATH may be a pyenv shim (a
# shell script), and heaptrack would then profile the shell.
PYPROG='d = {}; l = []
for i in range(100000):
    d["k%d" % i] = [i, str(i)]
    if i % 3 == 0: l.append(d.pop("k%d" % (i // 2), None))
print(len(d), len(l))'
export PYTHONHASHSEED=0 PYTHONMALLOC=malloc
ht_check python /dev/null /usr/bin/python3 -c "$PYPROG"
unset PYTHONHASHSEED PYTHONMALLOC

# A recursion deeper than the 128 frames the tracer keeps: the backtrace's
# outermost frame is "[truncated]" (address 1), where the frames it lost
# were; one within the limit still ends at main
if [ $HAVE_HS = 1 ]; then
    for depth in 20 500; do
        hs_record deeprec$depth -o "$W/deeprec$depth.hst" -- "$P/deeprec" $depth
        check_figs deeprec/figures-$depth deeprec$depth "$W/deeprec$depth.hst" 10 10 240 0 0
        got=$(timeout 60 "$HS" flame --folded --weight count "$W/deeprec$depth.hst" -o - 2>/dev/null | grep ';down ' |
            awk -F';' '{ print $1, NF }')
        # main and 21 calls of down; the 128 frames kept, the truncated one included
        if [ $depth = 20 ]; then want="main 22"; else want="[truncated] 128"; fi
        if [ "$got" = "$want" ]; then ok deeprec/outermost-frame-$depth
        else fail deeprec/outermost-frame-$depth "folded stack starts '${got:-nothing}', want '$want' (outermost frame, frames)"; fi
    done
else
    fail deeprec/outermost-frame "$HS_MISSING"
fi

# Names without DWARF: symbolize.c answers from its own sorted tables what
# libdw's dwfl_module_addrinfo answers by scanning the whole symbol table
# (python3's 12,000 symbols, clang's libLLVM's 45,000, at each address).
# HEAPSCOPE_TEST_LIBDW_NAMES=1 asks libdw for every such name: the two must
# agree frame for frame, on Debian's stripped binaries and on a function
# written in assembly without a size, which only libdw's fallback names
if [ $HAVE_HS = 1 ]; then
    if gcc -O1 -fno-omit-frame-pointer -o "$P/asmlabel" "$T/progs/asmlabel.c" 2>"$W/asmlabel.cc"; then
        hs_record asmlabel -o "$W/asmlabel.hst" -- "$P/asmlabel"
    fi
    for t in sqlite3 python asmlabel; do
        case $t in asmlabel) f=$W/asmlabel.hst ;; *) f=$W/hs-$t.hst ;; esac
        if [ ! -s "$f" ]; then fail symbols/names-as-libdw-$t "no trace $f"; continue; fi
        timeout 120 "$HS" flame --folded --weight count "$f" -o "$W/names-$t.ours" 2>"$W/names-$t.err"
        HEAPSCOPE_TEST_LIBDW_NAMES=1 timeout 300 "$HS" flame --folded --weight count "$f" -o "$W/names-$t.libdw" 2>>"$W/names-$t.err"
        if [ -s "$W/names-$t.ours" ] && cmp -s "$W/names-$t.ours" "$W/names-$t.libdw"; then ok symbols/names-as-libdw-$t
        else fail symbols/names-as-libdw-$t "$(diff "$W/names-$t.ours" "$W/names-$t.libdw" 2>&1 | head -n 4 | tr '\n' '|')"; fi
    done
    got=$(sort "$W/names-asmlabel.ours" 2>/dev/null | tr '\n' '|')
    if [ "$got" = "main;asm_sizeless_alloc 100|main;sized_static 100|" ]; then ok symbols/sizeless-symbol-named
    else fail symbols/sizeless-symbol-named "folded stacks '$got'"; fi
else
    fail symbols/names-as-libdw "$HS_MISSING"
fi

# ------------------------------------------------------------ sampled mode
if [ $HAVE_HS = 1 ]; then
    hs_record sampled --sample 512K -o "$W/sampled.hst" -- "$P/sampled"
    if read -r sa _ sb _ _ < <($U fig "$W/sampled.out" 2>/dev/null) &&
        report_ok sampled/mode "$W/sampled.hst" "$W/sampled"; then
        python3 - "$W/sampled.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
why = []
if r.get("mode") != "sampled": why.append("mode expected sampled got %r" % r.get("mode"))
if r.get("sample_bytes") != 512 * 1024: why.append("sample_bytes expected 524288 got %r" % r.get("sample_bytes"))
if r.get("estimated") is not True: why.append("estimated expected true got %r" % r.get("estimated"))
print("ok sampled/mode" if not why else "FAIL sampled/mode: " + "; ".join(why))
EOF
        $U within sampled/bytes "$W/sampled.json" bytes_allocated "$sb" 5
        $U within sampled/count "$W/sampled.json" allocations "$sa" 10
        "$HS" report "$W/sampled.hst" >"$W/sampled.txt" 2>&1
        if grep -q '^mode         sampled (every 512.0 KiB on average): figures below are estimates$' "$W/sampled.txt" &&
            [ -z "$(awk 'length > 80 && !/\//' "$W/sampled.txt")" ]; then ok sampled/text-80-columns
        else fail sampled/text-80-columns "see $W/sampled.txt"; fi
    else
        [ -s "$W/sampled.out" ] || fail sampled/mode "program printed no figures (rc $(cat "$W/sampled.rc"))"
        fail sampled/bytes "no sampled report"
        fail sampled/count "no sampled report"
        fail sampled/text-80-columns "no sampled report"
    fi
else
    for c in sampled/mode sampled/bytes sampled/count sampled/text-80-columns; do fail $c "$HS_MISSING"; done
fi

# Too little address space (ulimit -v) for the tracer: it says so in one
# line, and the program runs as it does natively (its exit status), since
# what start-up mapped goes back (at 10-12 MB, 'basic' got NULL from malloc
# and crashed; at 14-40 MB the trace was left empty without a word)
if [ $HAVE_HS = 1 ]; then
    why=""
    for lim in 8000 10000 12000 14000 20000 40000; do
        rm -f "$W/ulimit.hst"
        (ulimit -v $lim; LD_PRELOAD="$BD/libheapscope.so" HEAPSCOPE_OUTPUT="$W/ulimit.hst" "$P/basic") >/dev/null 2>"$W/ulimit.err"
        rc=$?
        (ulimit -v $lim; "$P/basic") >/dev/null 2>&1
        nrc=$?
        [ "$rc" = "$nrc" ] || why="$why; at $lim KB exit $rc traced, $nrc native"
        if [ ! -s "$W/ulimit.hst" ] && ! grep -q '^heapscope: ' "$W/ulimit.err"; then
            why="$why; at $lim KB no trace and no message"
        fi
    done
    [ -z "$why" ] && ok robust/address-space-limit || fail robust/address-space-limit "${why#; }"
else
    fail robust/address-space-limit "$HS_MISSING"
fi

# The tracer stopping itself mid-run (HEAPSCOPE_TEST_FAIL_THREAD=100: the
# 100th thread's state cannot be mapped, as out of memory): one line on
# stderr, and the trace keeps every event recorded until then, then says
# why it ends (before, a trace whose tracer stopped kept only its header:
# 56 bytes under ulimit -v 200 MB)
if [ $HAVE_HS = 1 ]; then
    rm -f "$W/failthread.hst"
    timeout 60 env HEAPSCOPE_TEST_FAIL_THREAD=100 LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/failthread.hst" "$P/manythreads" \
        >/dev/null 2>"$W/failthread.err"
    frc=$?
    if report_ok robust/stopped-mid-run "$W/failthread.hst" "$W/failthread"; then
        python3 - "$W/failthread.json" "$frc" "$W/failthread.err" <<'EOF2'
import json, sys
r = json.load(open(sys.argv[1])); err = open(sys.argv[3]).read()
why = []
if sys.argv[2] != "0": why.append("program exit %s" % sys.argv[2])
if "event buffer" not in err: why.append("no line on stderr (%r)" % err[:100])
if r.get("end") != "disabled" or "event buffer" not in (r.get("disabled") or ""):
    why.append("end %r, disabled %r" % (r.get("end"), r.get("disabled")))
if r["allocations"] < 100: why.append("only %d allocations kept" % r["allocations"])
print("ok robust/stopped-mid-run" if not why else "FAIL robust/stopped-mid-run: " + "; ".join(why))
EOF2
    fi
else
    fail robust/stopped-mid-run "$HS_MISSING"
fi

# The trace meeting the file size limit (ulimit -f, systemd's LimitFSIZE).
# A write that starts at the limit makes the kernel send SIGXFSZ to the
# process: before, that killed the traced program at every limit tried
# when the program's own thread met it, writing at exit (exit 153; 20,000
# iterations at 1 and 64 KiB). The tracer now never writes past the limit:
# the program runs to its end, one line on stderr says why tracing
# stopped, and the trace reads to its last whole chunk, then says why. The
# writer thread meets the limit mid-run at 2,000,000 iterations.
if [ $HAVE_HS = 1 ]; then
    why=""
    for lim_n in 1:20000 64:20000 64:2000000 2000:2000000; do   # KiB:iterations
        lim=${lim_n%:*} n=${lim_n#*:}
        rm -f "$W/fsize$lim.hst"
        ( ulimit -f $lim; exec timeout 60 env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/fsize$lim.hst" "$P/fillfile" $n ) \
            >"$W/fsize$lim.out" 2>"$W/fsize$lim.err"
        echo $? >"$W/fsize$lim.rc"
        if ! hs_report "$W/fsize$lim.hst" "$W/fsize$lim"; then
            why="$why; at $lim KiB: report exited $(cat "$W/fsize$lim.rrc"): $(first_line "$W/fsize$lim.rerr")"
            continue
        fi
        why="$why$(python3 - "$W/fsize$lim" $lim $n <<'EOF2'
import json, os, sys
b, lim, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = json.load(open(b + ".json")); err = open(b + ".err").read(); out = open(b + ".out").read()
rc = open(b + ".rc").read().strip(); rerr = open(b + ".rerr").read()
why = []
if rc != "0" or "figures: iterations %d" % n not in out: why.append("program exit %s, output %r" % (rc, out[:60]))
if err.count("\n") != 1 or "file size limit" not in err: why.append("stderr %r" % err[:200])
if os.path.getsize(b + ".hst") > lim * 1024: why.append("trace %d bytes past the limit" % os.path.getsize(b + ".hst"))
if rerr.strip(): why.append("report said %r" % rerr[:200])
if r.get("end") != "disabled" or "file size limit" not in (r.get("disabled") or ""):
    why.append("end %r, disabled %r" % (r.get("end"), r.get("disabled")))
if lim >= 2000 and r["allocations"] < 10000: why.append("only %d allocations kept" % r["allocations"])
print("".join("; at %d KiB, %d iterations: %s" % (lim, n, w) for w in why), end="")
EOF2
)"
    done
    [ -z "$why" ] && ok robust/file-size-limit || fail robust/file-size-limit "${why#; }"
else
    fail robust/file-size-limit "$HS_MISSING"
fi

# No room at all (ulimit -f 0): the tracer says so, and record must not then
# say "trace written to" the empty file as if all went well
if [ $HAVE_HS = 1 ]; then
    rm -f "$W/fsize0.hst"
    # stderr through a pipe: a file would be past the limit too
    ( ulimit -f 0; exec "$HS" record -o "$W/fsize0.hst" -- "$P/basic" 2>&1 >/dev/null ) | cat >"$W/fsize0.err"
    if grep -q "no trace in '$W/fsize0.hst'" "$W/fsize0.err" && ! grep -q 'trace written' "$W/fsize0.err"; then
        ok robust/record-no-room
    else
        fail robust/record-no-room "stderr: $(head -c 300 "$W/fsize0.err" | tr '\n' '|')"
    fi
else
    fail robust/record-no-room "$HS_MISSING"
fi

# A program that closed standard error and opened its own file there
# (descriptor 2), traced until the file size limit stops the tracer: its
# line on stderr went into the program's file, between its two lines. It
# goes out only while descriptor 2 is the standard error tracing started
# with; the trace says why it ends anyway
if [ $HAVE_HS = 1 ]; then
    rm -f "$W/stderrfile.hst" "$W/stderrfile.data"
    ( ulimit -f 256; exec timeout 60 env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/stderrfile.hst" "$P/stderrfile" \
        "$W/stderrfile.data" 2000000 ) >"$W/stderrfile.out" 2>/dev/null
    rc=$?
    want=$(printf 'user data\nmore user data\n')
    if [ $rc != 0 ]; then
        fail robust/stderr-reused "program exit $rc"
    elif [ "$(cat "$W/stderrfile.data")" != "$want" ]; then
        fail robust/stderr-reused "the program's file holds: $(head -c 300 "$W/stderrfile.data" | tr '\n' '|')"
    elif ! "$HS" report --json "$W/stderrfile.hst" 2>/dev/null | grep -q '"end": "disabled"'; then
        fail robust/stderr-reused "the trace does not end as disabled"
    else
        ok robust/stderr-reused
    fi
else
    fail robust/stderr-reused "$HS_MISSING"
fi

# An idle program: RSS is read every 10 ms but written only when it
# changed, or once a second. Written every tick, 10 s of sleep made 990
# RSS records and 101 chunks (12.7 KB, 110 MB a day); the readers hold
# each value until the next, so the timeline keeps RSS all along
if [ $HAVE_HS = 1 ]; then
    hs_record idle -o "$W/idle.hst" -- "$P/idle" 2
    n=$("$HS" dump "$W/idle.hst" 2>/dev/null | awk '$3 == "rss"' | wc -l)
    d=$("$HS" report --json "$W/idle.hst" 2>/dev/null | python3 -c 'import json,sys; r=json.load(sys.stdin); print(int(r["duration_ns"] >= 2e9 and r["peak_rss"]["bytes"] > 0))' 2>/dev/null)
    # rows before the first reading have none (a loaded machine starts the program late); none after it
    holes=$("$HS" timeline --csv "$W/idle.hst" 2>/dev/null | awk -F, 'NR > 1 && $3 != "" { seen = 1 } seen && $3 == ""' | wc -l)
    if [ "$(cat "$W/idle.rc")" = 0 ] && [ "$n" -ge 2 ] && [ "$n" -le 20 ] && [ "$d" = 1 ] && [ "$holes" = 0 ]; then
        ok rss/idle-not-repeated
    else
        fail rss/idle-not-repeated "exit $(cat "$W/idle.rc"), $n RSS records in 2 s of sleep (want 2-20: start-up changes, a heartbeat a second, the end), duration and peak RSS ok: $d, timeline rows without RSS: $holes"
    fi
else
    fail rss/idle-not-repeated "$HS_MISSING"
fi

# The trace file deleted mid-run: no one can read what follows, and the
# tracer went on writing it (and costing the program) to the end: it now
# stops with one line, and the program runs on
if [ $HAVE_HS = 1 ]; then
    rm -f "$W/deltrace.hst"
    says_one_line robust/trace-deleted "$W/deltrace" 'figures: iterations 1000000' 'the trace file was deleted; tracing stopped' \
        -- env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/deltrace.hst" "$P/deltrace" "$W/deltrace.hst" 500000
else
    fail robust/trace-deleted "$HS_MISSING"
fi

# jemalloc ahead of us in LD_PRELOAD: its first malloc called sbrk holding
# its own lock, our sbrk started tracing there, and starting allocated:
# the program hung for good. Now it runs, and one line says that its
# malloc is not traced and what to do
je=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
if [ $HAVE_HS = 1 ] && [ -f "$je" ]; then
    says_one_line robust/allocator-preloaded-first "$W/jefirst" 'figures: iterations 1000' 'put libheapscope.so first in LD_PRELOAD' \
        -- env LD_PRELOAD="$je:$LIB" HEAPSCOPE_OUTPUT="$W/jefirst.hst" "$P/fillfile" 1000
else
    fail robust/allocator-preloaded-first "${HS_MISSING:-$je is missing (Debian package libjemalloc2)}"
fi

# A non-PIE program that takes malloc's address (python3 does) makes the
# PLT slot in its own image malloc's address: every python3 run was told
# that the program's malloc came first and was not traced. Its calls are
# traced, with no word on stderr; jemalloc ahead of us is still named
if [ $HAVE_HS = 1 ]; then
    why=""
    timeout 60 env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/maddr.hst" "$P/mallocaddr" 1000 >"$W/maddr.out" 2>"$W/maddr.err" || why="$why; exit $?"
    [ -s "$W/maddr.err" ] && why="$why; stderr: $(head -c 200 "$W/maddr.err")"
    got=$("$HS" report --json "$W/maddr.hst" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["calls"]["malloc"])' 2>/dev/null)
    [ "$got" = 1000 ] || why="$why; malloc calls '$got', expected 1000"
    if [ -f "$je" ]; then
        timeout 60 env LD_PRELOAD="$je:$LIB" HEAPSCOPE_OUTPUT="$W/maddrje.hst" "$P/mallocaddr" 10 >/dev/null 2>"$W/maddrje.err"
        grep -qF "libjemalloc.so.2', loaded before libheapscope.so" "$W/maddrje.err" || why="$why; jemalloc first: $(head -c 200 "$W/maddrje.err")"
    fi
    if [ -z "$why" ]; then ok robust/malloc-address-taken; else fail robust/malloc-address-taken "${why#; }"; fi
else
    fail robust/malloc-address-taken "$HS_MISSING"
fi

# Our writer thread made every traced program multi-threaded for glibc,
# for good: malloc took its arena lock (python3 7% slower), and a signal
# handler that allocates hung the program (3 runs of 3). The flag is set
# again once the writer runs; the program sees 1 until its own first
# thread, then 0, in its own copy of the flag (a copy relocation) and in
# libc's. Before the copy was fixed too, the program read 1 beside its
# own thread, and libstdc++ would have counted references without atomics
if [ $HAVE_HS = 1 ]; then
    timeout 60 env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/sflag.hst" "$P/singleflag" >"$W/sflag.out" 2>"$W/sflag.err"
    rc=$?
    if [ $rc = 0 ] && grep -q '^figures: before own 1 libc 1 after own 0 libc 0$' "$W/sflag.out" && [ ! -s "$W/sflag.err" ]; then
        ok threads/glibc-single-flag
    else
        fail threads/glibc-single-flag "exit $rc, $(cat "$W/sflag.out") $(head -c 200 "$W/sflag.err") (want: before own 1 libc 1 after own 0 libc 0)"
    fi
    # as root, a daemon that drops to nobody: with the flag set, glibc
    # changed the identity of the calling thread alone, and our writer
    # stayed root; the setxid calls now clear it first
    if [ "$(id -u)" = 0 ] && getent passwd nobody >/dev/null; then
        timeout 60 env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/sflagu.hst" "$P/singleflag" setuid >"$W/sflagu.out" 2>"$W/sflagu.err"
        rc=$?
        if [ $rc = 0 ] && grep -q '^figures: threads not nobody 0$' "$W/sflagu.out" && "$HS" report "$W/sflagu.hst" >/dev/null 2>&1; then
            ok threads/setuid-reaches-writer
        else
            fail threads/setuid-reaches-writer "exit $rc, $(cat "$W/sflagu.out") $(head -c 200 "$W/sflagu.err")"
        fi
    else
        echo "threads/setuid-reaches-writer: not run (needs root and user nobody)" >&2
    fi
else
    fail threads/glibc-single-flag "$HS_MISSING"
fi

# A signal handler that jumps out of a hook it landed in (siglongjmp, as
# code that times out a call with alarm does) left the hook's nesting
# behind: the thread's events were never published again, its ring
# filled, and the program hung (17,385 of 100,000 iterations in 20 s, 999
# recorded). The tracer raises the signal the 3rd time it looks for room in
# the ring, with a slot taken and not yet written: the program
# runs to its end, and every event but the one jumped out of is recorded.
# ring-full: the jump comes while the hook waits for room in a full ring
# (the writer stalled, as a busy machine did to it): the slots left behind
# were published past the ring's room, overwrote unwritten events, and the
# writer never drained the thread again (10 hangs in 45 runs beside two busy
# loops; every run with the stall)
if [ $HAVE_HS = 1 ]; then
    for mode in full sampled ring-full; do
        extra=""; [ $mode = sampled ] && extra="HEAPSCOPE_SAMPLE=1"
        [ $mode = ring-full ] && extra="HEAPSCOPE_TEST_RAISE_FULL=1"
        timeout 60 env $extra HEAPSCOPE_TEST_RAISE_AT=3 LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/jump-$mode.hst" \
            "$P/jumpout" 100000 >"$W/jump-$mode.out" 2>"$W/jump-$mode.err"
        rc=$?
        got=$("$HS" report --json "$W/jump-$mode.hst" 2>/dev/null | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["calls"]["malloc"], round(j["allocations"]), round(j["frees"]), round(j["leaked"]["count"]), j["end"])' 2>/dev/null)
        # the event jumped out of is an allocation (its block, never freed by the program, is not in
        # the trace) or a free (never made: its block is leaked), whichever had taken the slot
        if [ $rc = 0 ] && grep -q '^figures: iterations 100000 jumps 1$' "$W/jump-$mode.out" &&
            { [ "$got" = "100000 99999 99999 0 exit" ] || [ "$got" = "100000 100000 99999 1 exit" ]; }; then
            ok signals/handler-jumps-out-$mode
        else
            fail signals/handler-jumps-out-$mode "exit $rc$( [ $rc = 124 ] && echo ' (hung)'), $(cat "$W/jump-$mode.out"), trace: '$got' (want 100000 calls and 99999 99999 0 or 100000 99999 1 allocations, frees, leaks, exit)"
        fi
    done
else
    fail signals/handler-jumps-out-full "$HS_MISSING"
fi

# A SIGTERM to a program whose 200 us timer handler siglongjmps: our
# handler flushed with the other signals open, the timer's jumped out of
# it before it sent the SIGTERM again, and the program lived on (2 runs of
# 3, to the SIGKILL). Untraced it ends at once (exit 143); now it does
# traced too, three runs of three, its trace ending with the signal
if [ $HAVE_HS = 1 ]; then
    why=""
    for k in 1 2 3; do
        timeout -s KILL 20 env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/ajump.hst" "$P/alarmjump" >"$W/ajump.out" 2>"$W/ajump.err" &
        apid=$!
        for _ in $(seq 1 100); do grep -q spinning "$W/ajump.out" 2>/dev/null && break; sleep 0.05; done
        sleep 0.2
        kill -TERM $apid 2>/dev/null
        wait $apid
        rc=$?
        [ $rc = 143 ] || why="$why; run $k: exit $rc (want 143)"
    done
    e=$($U get <("$HS" report --json "$W/ajump.hst" 2>/dev/null) signal 2>/dev/null)
    [ "$e" = 15 ] || why="$why; the trace's signal '$e', want 15"
    if [ -z "$why" ]; then ok signals/sigterm-beside-jumping-timer; else fail signals/sigterm-beside-jumping-timer "${why#; }"; fi
else
    fail signals/sigterm-beside-jumping-timer "$HS_MISSING"
fi

# An allocator linked into the program comes before any preload: the
# line said to put libheapscope.so first in LD_PRELOAD, which cannot help,
# and the report's calls were an empty list
if [ $HAVE_HS = 1 ]; then
    says_one_line robust/allocator-linked-in "$W/ownm" 'figures: calls 1000' \
        "malloc here is the program's own, linked into '$P/ownmalloc': preloading cannot trace its calls" \
        -- env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/ownm.hst" "$P/ownmalloc"
    if ! "$HS" report "$W/ownm.hst" 2>/dev/null | grep -q '^  (none: the program made no call, or has an allocator of its own linked in)$'; then
        fail robust/allocator-linked-in-report "the report's calls do not say why there are none: $("$HS" report "$W/ownm.hst" 2>&1 | sed -n '/^calls/,/^allocations/p' | head -4 | tr '\n' '|')"
    else
        ok robust/allocator-linked-in-report
    fi
else
    fail robust/allocator-linked-in "$HS_MISSING"
fi

# unshare(CLONE_NEWUSER) wants a single-threaded process: beside our
# writer it failed with EINVAL where the program ran untraced. The writer
# steps out for the call; every allocation is still recorded
if [ $HAVE_HS = 1 ]; then
    timeout 60 "$P/userns" >"$W/userns.nat.out" 2>&1
    if grep -q '^figures: unshare ok$' "$W/userns.nat.out"; then
        timeout 60 env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/userns.hst" "$P/userns" >"$W/userns.out" 2>"$W/userns.err"
        got=$("$HS" report --json "$W/userns.hst" 2>/dev/null | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["calls"]["malloc"] >= 1000, j["end"])' 2>/dev/null)
        if grep -q '^figures: unshare ok$' "$W/userns.out" && [ "$got" = "True exit" ] && [ ! -s "$W/userns.err" ]; then
            ok robust/unshare-user-namespace
        else
            fail robust/unshare-user-namespace "traced: $(cat "$W/userns.out") $(head -c 200 "$W/userns.err"), trace: '$got' (untraced: unshare ok)"
        fi
    else
        echo "robust/unshare-user-namespace: not run (user namespaces unavailable here: $(cat "$W/userns.nat.out"))" >&2
    fi
else
    fail robust/unshare-user-namespace "$HS_MISSING"
fi

# Paths and command lines are bytes: a program named in Latin-1, or given
# such an argument, put bytes into the JSON that are not UTF-8, and
# Python's json.loads on the file raised UnicodeDecodeError. They become
# U+FFFD; well-formed UTF-8 stays as it is
if [ $HAVE_HS = 1 ]; then
    lat=$(printf '%s/lat\351n-\342\202\254' "$W")
    cp "$P/basic" "$lat"
    timeout 60 env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/latin.hst" "$lat" "$(printf 'arg\377')" >/dev/null 2>&1
    why=""
    for cmd in report leaks; do
        "$HS" $cmd --json "$W/latin.hst" >"$W/latin-$cmd.json" 2>/dev/null || why="$why; $cmd failed"
        python3 - "$W/latin-$cmd.json" <<'EOF' 2>>"$W/latin.err" || why="$why; $cmd --json: $(tail -n 1 "$W/latin.err")"
import json, sys
j = json.loads(open(sys.argv[1], "rb").read())
if "process" in j:
    c = j["process"]["cmdline"]
    assert c[0].endswith("lat\ufffdn-\u20ac") and c[1] == "arg\ufffd", c
EOF
    done
    if [ -z "$why" ]; then ok json/bytes-not-utf8; else fail json/bytes-not-utf8 "${why#; }"; fi
else
    fail json/bytes-not-utf8 "$HS_MISSING"
fi

# A program that cannot be run: the line was strerror's, capitalised, with
# nothing to do; now it says what is wrong and how to fix it, alone
if [ $HAVE_HS = 1 ]; then
    why=""
    echo 'not a program' >"$W/notexec"; chmod 644 "$W/notexec"
    for c in "/nonexistent/prog|no such file; check the path" "nosuchprog-$$|not found in PATH; give its path, e.g. ./prog" \
             "$W/notexec|not executable; check that it is a program and has execute permission (chmod +x)"; do
        prog=${c%%|*}; want="heapscope: cannot run '$prog': ${c#*|}"
        (cd "$W" && timeout 20 "$HS" record -o "$W/cantrun.hst" -- "$prog") >/dev/null 2>"$W/cantrun.err"
        rc=$?
        [ $rc = 127 ] && [ "$(cat "$W/cantrun.err")" = "$want" ] || why="$why; $prog: exit $rc, $(head -c 200 "$W/cantrun.err")"
    done
    if [ -z "$why" ]; then ok record/cannot-run-says-why; else fail record/cannot-run-says-why "${why#; }"; fi
    # the program starts by posix_spawnp, which runs no file without a #! line: execvp hands it to /bin/sh
    printf 'echo "no #! line, run by $0"\n' >"$W/noshebang"; chmod 755 "$W/noshebang"
    got=$(cd "$W" && timeout 20 "$HS" record -o "$W/noshebang.hst" -- ./noshebang 2>/dev/null); rc=$?
    if [ $rc = 0 ] && [ "$got" = "no #! line, run by ./noshebang" ]; then ok record/script-without-shebang
    else fail record/script-without-shebang "exit $rc, printed '$got'"; fi
    # SIGINT ignored where record runs (nohup, a background job): ignored in the program too, as
    # untraced (not under timeout, which catches SIGINT and so gives its command the default)
    got=$(trap '' INT; "$HS" record -o "$W/sigign.hst" -- python3 -c 'import signal; print(signal.getsignal(signal.SIGINT))' 2>/dev/null)
    want=$(trap '' INT; python3 -c 'import signal; print(signal.getsignal(signal.SIGINT))')
    if [ "$got" = "$want" ] && [ -n "$got" ]; then ok record/ignored-sigint-stays-ignored
    else fail record/ignored-sigint-stays-ignored "the traced program found '$got', untraced '$want'"; fi
else
    fail record/cannot-run-says-why "$HS_MISSING"
fi

# Event stamps: a thread's run of events shares its first stamp while the
# writer keeps ending the runs (hooks.c unfenced), which took reading the
# TSC (7.7 ns) off most events. A run must never reach over a pause: after
# each 30 ms sleep the next burst's stamps are 30 ms on, in every round,
# alone and beside a thread whose stream of events keeps runs going
if [ $HAVE_HS = 1 ]; then
    for how in alone busy; do
        timeout 60 env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/pauses-$how.hst" "$P/pauses" 20 5 30 $how >"$W/pauses-$how.out" 2>&1
        rc=$?
        got=$("$HS" lifetimes "$W/pauses-$how.hst" --tsv --size-min 100000 --size-max 100019 2>&1 | python3 -c '
import sys
t = {}
for l in sys.stdin:
    f = l.split()
    if len(f) == 5 and not l.startswith("#"):
        t.setdefault(int(f[2]) - 100000, []).append(round(float(f[0]) * 1e9))
bad = [r for r in range(1, 20) if r not in t or r - 1 not in t or min(t[r]) - max(t[r - 1]) < 25000000]
print("rounds %d, %d of 5 events each, gaps under 25 ms after rounds %s" % (len(t), sum(len(v) == 5 for v in t.values()), bad))')
        if [ $rc = 0 ] && [ "$got" = "rounds 20, 20 of 5 events each, gaps under 25 ms after rounds []" ]; then
            ok time/stamps-follow-pauses-$how
        else
            fail time/stamps-follow-pauses-$how "exit $rc, $got"
        fi
    done
else
    fail time/stamps-follow-pauses "$HS_MISSING"
fi

# The writer passes every 100 us only while events come fast enough for
# runs of shared stamps to pay (HS_STAMP_RUN_GAP_NS). Four threads churning
# sampled at 512 KiB make a few dozen events a millisecond: the tracer's
# threads were switched out 1,900 times in 300 ms when the writer passed
# at every tick that saw an event (12% of a 2-core machine), 30 now
if [ $HAVE_HS = 1 ]; then
    out=$(timeout 60 env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$W/wakeups.hst" HEAPSCOPE_SAMPLE=512K "$P/wakeups" 4 300 2>&1)
    rc=$?
    n=$(printf '%s\n' "$out" | sed -n 's/.*other-tasks \([0-9]*\) other-switches \([0-9]*\).*/\1 \2/p')
    if [ $rc = 0 ] && [ -n "$n" ] && [ "${n% *}" -ge 1 ] && [ "${n#* }" -lt 300 ]; then
        ok tracer/sampled-writer-sleeps
    else
        fail tracer/sampled-writer-sleeps "exit $rc, want at least one tracer thread switched out under 300 times in 300 ms: $out"
    fi
else
    fail tracer/sampled-writer-sleeps "$HS_MISSING"
fi

# A full disk: mid-run on a 4 MiB tmpfs (needs root, for a mount namespace
# of its own; the program's trace takes 10 MB, in chunks of 1.2 MB), and at
# the start on /dev/full. Before, the chunk cut short
# by the full disk stayed in the file and the last records came after a
# hole of zeros: the trace was corrupt from that offset on.
if [ $HAVE_HS = 1 ]; then
    why=""
    timeout 60 env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT=/dev/full "$P/fillfile" 1000 >"$W/devfull.out" 2>"$W/devfull.err"
    rc=$?
    grep -q "figures: iterations 1000" "$W/devfull.out" && [ $rc = 0 ] || why="$why; /dev/full: program exit $rc"
    [ "$(wc -l <"$W/devfull.err")" = 1 ] && grep -q "disk is full" "$W/devfull.err" ||
        why="$why; /dev/full: stderr $(head -c 200 "$W/devfull.err")"
    if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
        mkdir -p "$W/tinyfs"
        rm -f "$W/diskfull.hst"
        unshare -m sh -c 'mount -t tmpfs -o size=4m tmpfs "$1" || exit 99
            timeout 60 env LD_PRELOAD="$2" HEAPSCOPE_OUTPUT="$1/t.hst" "$3" 2000000 >"$4.out" 2>"$4.err"
            echo $? >"$4.rc"; cp "$1/t.hst" "$4.hst"' sh "$W/tinyfs" "$LIB" "$P/fillfile" "$W/diskfull"
        if [ $? = 99 ]; then
            why="$why; cannot mount a tmpfs as root"
        elif ! hs_report "$W/diskfull.hst" "$W/diskfull"; then
            why="$why; report exited $(cat "$W/diskfull.rrc"): $(first_line "$W/diskfull.rerr")"
        else
            why="$why$(python3 - "$W/diskfull" <<'EOF2'
import json, sys
b = sys.argv[1]
r = json.load(open(b + ".json")); err = open(b + ".err").read(); out = open(b + ".out").read()
rc = open(b + ".rc").read().strip(); rerr = open(b + ".rerr").read()
why = []
if rc != "0" or "figures: iterations 2000000" not in out: why.append("program exit %s, output %r" % (rc, out[:60]))
if err.count("\n") != 1 or "disk that holds the trace is full" not in err: why.append("stderr %r" % err[:200])
if rerr.strip(): why.append("report said %r" % rerr[:200])
if r.get("end") != "disabled" or "full" not in (r.get("disabled") or ""):
    why.append("end %r, disabled %r" % (r.get("end"), r.get("disabled")))
if r["allocations"] < 10000: why.append("only %d allocations kept" % r["allocations"])
print("".join("; " + w for w in why), end="")
EOF2
)"
        fi
    else
        echo "robust/disk-full: mid-run case not run (needs root and unshare -m); /dev/full case run" >&2
    fi
    [ -z "$why" ] && ok robust/disk-full || fail robust/disk-full "${why#; }"
else
    fail robust/disk-full "$HS_MISSING"
fi

# A signal handler allocating on an 8 KiB alternate stack (enough
# untraced), raised by the program or by a timer: the tracer's backtrace
# off the thread's stack overflowed it (SIGSEGV); then it recorded those
# allocations without a backtrace; now libunwind walks on the thread's
# own walk stack, and every size has its backtrace through the handler
if [ $HAVE_HS = 1 ]; then
    why=""
    for sz in 8192 65536; do
        hs_record "alt$sz" -o "$W/alt$sz.hst" -- "$P/altstack" $sz
        if [ "$(cat "$W/alt$sz.rc")" != 0 ] || [ "$($U kv "$W/alt$sz.out" handled 2>/dev/null)" != 100 ]; then
            why="$why; $sz B: exit $(cat "$W/alt$sz.rc")"
        elif ! "$HS" report --json "$W/alt$sz.hst" >"$W/alt$sz.json" 2>/dev/null ||
            [ "$($U get "$W/alt$sz.json" frees 2>/dev/null)" -lt 100 ]; then
            why="$why; $sz B: the handler's 100 frees are not in the trace"
        fi
    done
    for sz in 8192 65536; do
        "$HS" report "$W/alt$sz.hst" 2>/dev/null | grep -q '^      handler ' || why="$why; $sz B: no backtrace through the handler"
    done
    # from a timer, interrupting the tracer's own walk of the main loop: the
    # handler's capture took libunwind's walk without the check (SIGSEGV 5
    # runs out of 5 until both walks went through one function)
    hs_record alttimer -o "$W/alttimer.hst" -- "$P/altstack" 8192 timer
    if [ "$(cat "$W/alttimer.rc")" != 0 ] || [ "$($U kv "$W/alttimer.out" handled 2>/dev/null)" != 100 ]; then
        why="$why; 8 KiB from a timer: exit $(cat "$W/alttimer.rc")"
    fi
    [ -z "$why" ] && ok signals/small-alternate-stack || fail signals/small-alternate-stack "${why#; }"
else
    fail signals/small-alternate-stack "$HS_MISSING"
fi

# Coroutines (ucontext) on malloc'd stacks of 64, 16 and 8 KiB (4.4 KiB
# is enough untraced): libunwind's walk ran on the coroutine's stack, and
# at 8 KiB wrote over the heap below it (glibc aborted: "unaligned tcache
# chunk"). Now it runs on the thread's own walk stack: the figures are the program's to
# the byte, backtraces go through co_mid to co_body, and the hook adds at
# most 1 KiB to the most of a coroutine stack used
if [ $HAVE_HS = 1 ]; then
    why=""
    native coront "$P/coroutines" 64
    for kib in 64 16 8; do
        hs_record "coro$kib" -o "$W/coro$kib.hst" -- "$P/coroutines" $kib
        if [ "$(cat "$W/coro$kib.rc")" != 0 ]; then
            why="$why; $kib KiB: exit $(cat "$W/coro$kib.rc")"
            continue
        fi
        if ! hs_report "$W/coro$kib.hst" "$W/coro$kib"; then
            why="$why; $kib KiB: report exited $(cat "$W/coro$kib.rrc")"
            continue
        fi
        c=$($U cmp "coroutines/$kib" "$W/coro$kib.json" $($U fig "$W/coro$kib.out"))
        case $c in ok*) ;; *) why="$why; $kib KiB: ${c#*: }" ;; esac
        "$HS" report "$W/coro$kib.hst" 2>/dev/null | grep -A3 '^      co_leaf ' | grep -q '^      co_mid ' ||
            why="$why; $kib KiB: no backtrace from co_leaf through co_mid"
        "$HS" report "$W/coro$kib.hst" 2>/dev/null | grep -q '^      co_body ' || why="$why; $kib KiB: no co_body frame"
        used=$($U kv "$W/coro$kib.out" stack_used) nat=$($U kv "$W/coront.nat.out" stack_used)
        [ "${used:-99999}" -le $((${nat:-0} + 1024)) ] || why="$why; $kib KiB: $used B of coroutine stack used (untraced $nat)"
    done
    [ -z "$why" ] && ok stacks/coroutines || fail stacks/coroutines "${why#; }"
else
    fail stacks/coroutines "$HS_MISSING"
fi

# exec from a thread with a 16 KiB stack: through a forked child (the exec
# hook's 40 KiB of stack killed it: exit 3), and by the thread itself with
# --follow-exec (two traces, the first ended by the exec)
if [ $HAVE_HS = 1 ]; then
    why=""
    hs_record smallfork -o "$W/smallfork.hst" -- "$P/smallstack" fork
    [ "$(cat "$W/smallfork.rc")" = 0 ] || why="fork and exec: exit $(cat "$W/smallfork.rc")"
    hs_record smallfe --follow-exec -o "$W/smallfe.hst" -- "$P/smallstack" fork
    [ "$(cat "$W/smallfe.rc")" = 0 ] || why="$why; fork and exec, --follow-exec: exit $(cat "$W/smallfe.rc")"
    rm -f "$W"/smallexec.hst*
    hs_record smallexec --follow-exec -o "$W/smallexec.hst" -- "$P/smallstack" exec
    [ "$(cat "$W/smallexec.rc")" = 0 ] || why="$why; exec: exit $(cat "$W/smallexec.rc")"
    "$HS" report "$W/smallexec.hst" 2>/dev/null | grep -q 'ended by exec' || why="$why; exec: the first trace does not end by exec"
    [ "$(ls "$W"/smallexec.hst* 2>/dev/null | wc -l)" = 2 ] || why="$why; exec: $(ls "$W"/smallexec.hst* 2>/dev/null | wc -l) traces, 2 expected"
    [ -z "$why" ] && ok exec/small-thread-stack || fail exec/small-thread-stack "${why#; }"
else
    fail exec/small-thread-stack "$HS_MISSING"
fi

# Forks while another thread is in dlopen/dlclose (forkloader): a child
# forked then finds the loader's lock held for good. The tracer's child
# scanned the modules through the loader and hung there (7th child of 300
# here); now it writes the parent's module records and finds unwind rules
# without the loader: every child ends, its trace reads, and its
# allocations have their whole backtrace (leaf, in libreload_c.so)
if [ $HAVE_HS = 1 ]; then
    mkdir -p "$W/forkloader.d"
    (cd "$W/forkloader.d" && timeout -s KILL 90 "$HS" record --follow-fork -o fl.hst -- "$P/forkloader" \
        "$P/libreload_a.so" "$P/libreload_b.so" "$P/libreload_c.so" 200) >"$W/forkloader.out" 2>"$W/forkloader.err" </dev/null
    echo $? >"$W/forkloader.rc"
    pkill -KILL -f "$P/forkloader" 2>/dev/null
    nf=$(ls "$W/forkloader.d" | grep -c '^fl\.hst\.')
    nleaf=0
    for f in "$W/forkloader.d"/fl.hst.*; do
        [ -e "$f" ] || continue
        "$HS" report "$f" 2>/dev/null | grep -q 'leaf  libreload.c' && nleaf=$((nleaf + 1))
    done
    if [ "$(cat "$W/forkloader.rc")" = 0 ] && [ "$($U kv "$W/forkloader.out" bad 2>/dev/null)" = 0 ] && [ "$nf" = 200 ] && [ "$nleaf" = 200 ]; then
        ok fork/loader-lock-held
    else
        fail fork/loader-lock-held "rc $(cat "$W/forkloader.rc") (137: hung), $(tr '\n' ' ' < "$W/forkloader.out"), $nf child traces, $nleaf with the leaf frame (200 expected)"
    fi
else
    fail fork/loader-lock-held "$HS_MISSING"
fi

# 400 threads with events at once (the writer merged at most 256 in one
# pass: the others' events came later, frees before their allocations:
# 55-89 untracked frees a run), then 3,000 short threads 8 at a time, whose
# states are reused: no free may be untracked, nothing of the program's
# leaks (libc keeps a few blocks of its own), and the program's blocks
# are all there (libc adds its per-thread ones)
if [ $HAVE_HS = 1 ]; then
    hs_record manythreads -o "$W/manythreads.hst" -- "$P/manythreads"
    if ma=$($U kv "$W/manythreads.out" allocs 2>/dev/null) && mb=$($U kv "$W/manythreads.out" bytes 2>/dev/null) &&
        report_ok threads/many-at-once "$W/manythreads.hst" "$W/manythreads"; then
        python3 - "$W/manythreads.json" "$ma" "$mb" <<'EOF2'
import json, sys
r = json.load(open(sys.argv[1])); ma, mb = int(sys.argv[2]), int(sys.argv[3])
why = []
if r["untracked_frees"] != 0: why.append("%d untracked frees (expected 0)" % r["untracked_frees"])
if r["leaked"]["count"] > 8: why.append("%d blocks leaked (expected libc's few, at most 8)" % r["leaked"]["count"])
if r["allocations"] < ma or r["bytes_allocated"] < mb:
    why.append("allocations %d, bytes %d: fewer than the program's %d, %d" % (r["allocations"], r["bytes_allocated"], ma, mb))
if r["allocations"] - r["frees"] != r["leaked"]["count"]: why.append("allocations - frees != leaked")
print("ok threads/many-at-once" if not why else "FAIL threads/many-at-once: " + "; ".join(why))
EOF2
    else
        fail threads/many-at-once "no figures (rc $(cat "$W/manythreads.rc"): $(first_line "$W/manythreads.err"))"
    fi
else
    fail threads/many-at-once "$HS_MISSING"
fi

# 4 threads allocate through 16,384 call paths they share, more than a
# thread's cache of stack nodes holds: they find nodes other threads made
# (without the table's lock) while others add nodes and the table grows.
# Each block's size names its path, which its backtrace must show
if [ $HAVE_HS = 1 ]; then
    hs_record stackmix -o "$W/stackmix.hst" -- "$P/stackmix"
    if sa=$($U kv "$W/stackmix.out" allocs 2>/dev/null) && [ -s "$W/stackmix.hst" ] &&
        timeout 120 "$HS" dump --backtraces "$W/stackmix.hst" >"$W/stackmix.dump" 2>"$W/stackmix.dump.err"; then
        python3 - "$W/stackmix.dump" "$sa" <<'EOF2'
import sys
bad = checked = 0
why = []
cur = None
def finish(c):
    global bad, checked
    if c is None:
        return
    size, frames = c
    depth, bits = (size - 1) >> 14, (size - 1) & 0x3fff
    want = ["leaf"] + ["right" if (bits >> i) & 1 else "left" for i in range(depth - 1, -1, -1)] + ["worker"]
    checked += 1
    if frames[:len(want)] != want:
        bad += 1
        if len(why) < 3:
            why.append("size %d: %s, want %s" % (size, " ".join(frames[:len(want)]), " ".join(want)))
for line in open(sys.argv[1]):
    if line.startswith("    "):
        if cur is not None:
            cur[1].append(line.split()[0])
        continue
    finish(cur)
    cur = None
    f = line.split()
    if len(f) >= 6 and f[2] == "alloc" and f[3] == "malloc" and int(f[5]) > 1 << 14:
        cur = (int(f[5]), [])
finish(cur)
if checked != int(sys.argv[2]) or bad:
    print("FAIL stacks/shared-paths: %d of %s blocks checked, %d with a wrong backtrace %s" % (checked, sys.argv[2], bad, "; ".join(why)))
else:
    print("ok stacks/shared-paths")
EOF2
    else
        fail stacks/shared-paths "no trace or dump (rc $(cat "$W/stackmix.rc"): $(first_line "$W/stackmix.err") $(first_line "$W/stackmix.dump.err"))"
    fi
    rm -f "$W/stackmix.dump"
else
    fail stacks/shared-paths "$HS_MISSING"
fi

# Sampled, each thread's countdown is drawn at its first allocation: it
# started at 0, so every thread's first block was sampled for sure and
# weighed as if by chance (the 3,400 threads above, 3.2 MB in all, were
# estimated at 17 MB sampled every 4 KiB, 1.78 GB every 512 KiB). Sampled
# every 4 KiB (about 800 samples), the estimates are within 20% of the
# full-mode trace's figures
if [ $HAVE_HS = 1 ] && [ -s "$W/manythreads.json" ]; then
    hs_record manythreads-s --sample 4K -o "$W/manythreads-s.hst" -- "$P/manythreads"
    if report_ok sampled/short-threads "$W/manythreads-s.hst" "$W/manythreads-s"; then
        python3 - "$W/manythreads.json" "$W/manythreads-s.json" <<'EOF2'
import json, sys
f, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
why = ["%s: estimated %d, full mode %d" % (k, s[k], f[k]) for k in ("allocations", "bytes_allocated")
       if abs(s[k] - f[k]) > 0.2 * f[k]]
print("ok sampled/short-threads" if not why else "FAIL sampled/short-threads: " + "; ".join(why))
EOF2
    else
        fail sampled/short-threads "no figures (rc $(cat "$W/manythreads-s.rc"): $(first_line "$W/manythreads-s.err"))"
    fi
else
    fail sampled/short-threads "${HS_MISSING:-no full-mode figures of manythreads}"
fi

# Requests of 0 bytes take blocks too: sampled as 1 byte each (format 4.1;
# before, never sampled, so a leak of them was invisible), their estimates
# hold (a sample point every 8 bytes: 1 request in 8.5 is kept, so that 5%
# is over 5 standard deviations of the estimates)
if [ $HAVE_HS = 1 ]; then
    hs_record zerobytes --sample 8 -o "$W/zerobytes.hst" -- "$P/zerobytes"
    if za=$($U kv "$W/zerobytes.out" allocs 2>/dev/null) &&
        report_ok sampled/zero-byte-requests "$W/zerobytes.hst" "$W/zerobytes"; then
        $U within sampled/zero-byte-requests "$W/zerobytes.json" allocations "$za" 5
        $U within sampled/zero-byte-leaks "$W/zerobytes.json" leaked.count "$($U kv "$W/zerobytes.out" leaked)" 5
    else
        fail sampled/zero-byte-requests "no figures (rc $(cat "$W/zerobytes.rc"): $(first_line "$W/zerobytes.err"))"
        fail sampled/zero-byte-leaks "no figures"
    fi
else
    for c in sampled/zero-byte-requests sampled/zero-byte-leaks; do fail $c "$HS_MISSING"; done
fi

# Samples that keep joining and leaving the sampled-block set (a sample
# point every 1 KiB, 20,000 live blocks at scattered addresses): the
# tracer's memory stays put (each table the set outgrew stayed mapped:
# 7.4 MB more over the last 3M iterations), no sampled block's free is
# missed (nothing leaked), and the estimates hold
if [ $HAVE_HS = 1 ]; then
    native sampledpool "$P/sampledpool"
    hs_record sampledpool --sample 1K -o "$W/sampledpool.hst" -- "$P/sampledpool"
    ng=$($U kv "$W/sampledpool.nat.out" rss_growth_kib 2>/dev/null)
    if tg=$($U kv "$W/sampledpool.out" rss_growth_kib 2>/dev/null) && [ -n "$ng" ] &&
        report_ok sampled/set-memory "$W/sampledpool.hst" "$W/sampledpool"; then
        if [ $((tg - ng)) -lt 2048 ]; then ok sampled/set-memory
        else fail sampled/set-memory "resident memory grew ${tg} KiB traced against ${ng} KiB natively over 3M iterations"; fi
        $U cmp sampled/set-no-lost-free "$W/sampledpool.json" - - - 0 0
        $U within sampled/set-bytes "$W/sampledpool.json" bytes_allocated "$($U kv "$W/sampledpool.out" bytes)" 5
    else
        for c in sampled/set-memory sampled/set-no-lost-free sampled/set-bytes; do
            fail $c "no figures (rc $(cat "$W/sampledpool.rc"), native rc $(cat "$W/sampledpool.nat.rc"): $(first_line "$W/sampledpool.err"))"
        done
    fi
else
    for c in sampled/set-memory sampled/set-no-lost-free sampled/set-bytes; do fail $c "$HS_MISSING"; done
fi

# ------------------------------------------------------ older trace formats
# A trace that heapscope wrote in format 2.1 (sqlite3 :memory: <
# data/sqlite-format-2.1.sql, recorded by commit a9f4aea): 3.0 predicts
# addresses differently, so reading it as 3.0 would give other addresses.
# The digest is that commit's 'heapscope dump' of the file.
if [ $HAVE_HS = 1 ]; then
    got=$(timeout 60 "$HS" dump "$ROOT/tests/integration/data/sqlite-format-2.1.hst" 2>"$W/v21.err" | sha256sum | cut -d' ' -f1)
    if [ "$got" = 0c62b13459ad69d9b3254d4287caabbe681d6ad4651e7e703f9fd4b41019fd01 ]; then
        ok format/reads-2.1
    else
        fail format/reads-2.1 "dump of the 2.1 trace differs from 2.1's own reader (sha256 $got; $(head -c 200 "$W/v21.err"))"
    fi
else
    fail format/reads-2.1 "$HS_MISSING"
fi
# reads_old VERSION DUMP_SHA256 BACKTRACES_SHA256: data/sqlite-format-VERSION.hst
# must give the events (its dump) and every allocation's backtrace (page
# offsets of the return addresses, from tests/integration/lib/ips.c) that
# the reader of its own version gave.
reads_old() {
    local v=$1 f=$ROOT/tests/integration/data/sqlite-format-$1.hst got
    if [ $HAVE_HS != 1 ] || [ ! -x "$W/ips" ]; then
        fail "format/reads-$v" "${HS_MISSING:-cannot build the address lister: $(first_line "$W/ips.log")}"
        return
    fi
    got=$(timeout 60 "$HS" dump "$f" 2>"$W/v$v.err" | sha256sum | cut -d' ' -f1)
    if [ "$got" = "$2" ]; then ok "format/reads-$v"
    else fail "format/reads-$v" "dump of the $v trace differs from $v's own reader (sha256 $got; $(first_line "$W/v$v.err"))"; fi
    got=$(timeout 60 "$W/ips" "$f" 2>"$W/v${v}ips.err" | sha256sum | cut -d' ' -f1)
    if [ "$got" = "$3" ]; then ok "format/reads-$v-backtraces"
    else fail "format/reads-$v-backtraces" "the $v trace's backtraces differ from $v's reader's (sha256 $got; $(first_line "$W/v${v}ips.err"))"; fi
}
rm -f "$W/ips"
[ $HAVE_HS = 1 ] && gcc -std=c11 -O1 -I"$ROOT/include" -o "$W/ips" "$T/lib/ips.c" "$BD/libheapscope-reader.a" \
    $(pkg-config --libs libdw libzstd) -liberty -lstdc++ -lm -lpthread 2>"$W/ips.log"
# Format 3.0 (the same SQL, recorded by commit 3f891ed): its STACK records
# name their ids, which 4.0 leaves out.
reads_old 3.0 337078fea7121730601a7ab2bd6da21451a8d49ff4bd468a3d2c620edb7cbcac \
    133ec12c85d2a9e591175336344bb596e734334797c280b52565d1b54ee57fb4
# Format 4.2 (the same SQL, recorded by commit 78613d0): a time delta per
# event, where 5.0 writes runs.
reads_old 4.2 09decb8fa5fa766c1dca2605f723d7111d6ac44cdc05cd0a4a4f50cf44d3be8d \
    3a4aa49cefd54babf60a1f6eb8b89ad31ae656f98a8a63d1c795116eeee5e215
# Format 5.0 (the same SQL, recorded by commit 7af4a91): no ALLOC_TOP, so
# the 6.0 reader's top must not name any of its blocks.
reads_old 5.0 de296f5ac47083ba83e5e0fa4dc4e9e919b8d59ba00360280896e2a0cf67d3c5 \
    3a4aa49cefd54babf60a1f6eb8b89ad31ae656f98a8a63d1c795116eeee5e215
# Format 6.0 (the same SQL, recorded by commit b08f355): sizes and stacks
# each in its stream, where 7.0 names pairs of them.
reads_old 6.0 007e7658b9be99f4342f1c6c992c5f6405e5167c4af5f5f9727ab2d47dcaaca4 \
    3a4aa49cefd54babf60a1f6eb8b89ad31ae656f98a8a63d1c795116eeee5e215

# --------------------------------------------------------------- robustness
# heapscope report on damaged input: either exit != 0 with a one-line error
# mentioning an offset, or (damage inside the chunk stream) exit 0 with a
# stderr warning mentioning an offset.  Never a crash, never a hang.
robust() { # NAME FILE [allow-warn]
    local name=$1 f=$2 allow=${3:-}
    [ $HAVE_HS = 1 ] || { fail "robust/$name" "$HS_MISSING"; return; }
    timeout 20 "$HS" report --json "$f" >"$f.rout" 2>"$f.rerr" </dev/null
    local rc=$?
    local lines; lines=$(grep -c . "$f.rerr")
    if [ $rc = 124 ]; then fail "robust/$name" "hung (killed by timeout 20)"
    elif [ $rc -ge 128 ] || grep -q Segmentation "$f.rerr"; then fail "robust/$name" "crashed: exit $rc $(first_line "$f.rerr")"
    elif [ $rc != 0 ]; then
        if [ "$lines" != 1 ]; then fail "robust/$name" "exit $rc but stderr has $lines lines, expected one: $(head -c 200 "$f.rerr" | tr '\n' '|')"
        elif ! grep -qi offset "$f.rerr"; then fail "robust/$name" "error does not mention an offset: $(first_line "$f.rerr")"
        else ok "robust/$name"; fi
    else
        if [ -z "$allow" ]; then fail "robust/$name" "exit 0 on a file that is not a usable trace"
        elif ! grep -qi offset "$f.rerr"; then fail "robust/$name" "exit 0 without a warning mentioning an offset (stderr: $(first_line "$f.rerr"))"
        elif ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f.rout" 2>/dev/null; then fail "robust/$name" "exit 0 with a warning but stdout is not valid JSON"
        else ok "robust/$name"; fi
    fi
}
R=$W/robust
mkdir -p "$R"
: >"$R/empty.hst"
robust empty "$R/empty.hst"
cp /etc/passwd "$R/passwd.hst"
robust not-a-trace "$R/passwd.hst"
# a good source trace: the sqlite3 run (several chunks), else threads.
# The file header is 56 bytes (HS_FILE_HEADER_SIZE, src/format/records.h):
# cuts at 4 and 30 are inside it and must be hard errors; 58 is inside the
# first chunk's header, the others inside the chunk stream.
src=$W/hs-sqlite3.hst
[ -s "$src" ] || src=$W/vg-threads.hst
if [ $HAVE_HS = 1 ] && [ -s "$src" ]; then
    sz=$(stat -c %s "$src")
    for off in 4 30 58 $((sz / 3)) $((sz / 2)) $((sz - 3)); do
        [ "$off" -ge 1 ] && [ "$off" -lt "$sz" ] || continue
        head -c "$off" "$src" >"$R/trunc-$off.hst"
        if [ "$off" -lt 56 ]; then robust "truncated-header-at-$off" "$R/trunc-$off.hst"
        else robust "truncated-at-$off" "$R/trunc-$off.hst" allow-warn; fi
    done
    cp "$src" "$R/flipped.hst"
    python3 - "$R/flipped.hst" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
m = len(b) // 2
for i in range(m, min(m + 64, len(b))):
    b[i] ^= 0xFF
open(sys.argv[1], "wb").write(b)
EOF
    robust flipped-bytes "$R/flipped.hst" allow-warn
    # memory refused (every allocation from some size on fails): one line
    # that says so and what to do, exit 1; never an abort. 200,000 bytes:
    # the reader (143 KB) opens, a chunk's buffer does not. For the tables,
    # a trace with many blocks (python3's) at the smallest limit at which
    # the reader reads it whole: then it is the analysis' tables that
    # cannot grow. sqlite3's small trace no longer does it: its 2 MiB chunk
    # takes the reader more than its tables take.
    big=$W/hs-python.hst
    table=1000000
    while [ $table -lt 6000000 ] &&
        ! FAILBIG_BYTES=$table LD_PRELOAD="$P/libfailbig.so" timeout 20 "$HS" dump "$big" >/dev/null 2>&1 </dev/null; do
        table=$((table + 500000))
    done
    for cmd in dump leaks; do
        case $cmd in
            dump) bytes=200000 want=offset f=$src ;;
            *) bytes=$table want=--sample f=$big ;;
        esac
        if [ ! -s "$f" ]; then
            fail "robust/out-of-memory-$cmd" "no trace '$f' (python3's comes from the heaptrack checks above)"
            continue
        fi
        FAILBIG_BYTES=$bytes LD_PRELOAD="$P/libfailbig.so" timeout 20 "$HS" "$cmd" "$f" >/dev/null 2>"$R/oom-$cmd.err" </dev/null
        rc=$?
        if [ $rc = 1 ] && [ "$(grep -c . "$R/oom-$cmd.err")" = 1 ] && grep -q "out of memory" "$R/oom-$cmd.err" &&
            grep -q -- "$want" "$R/oom-$cmd.err"; then
            ok "robust/out-of-memory-$cmd"
        else
            fail "robust/out-of-memory-$cmd" "exit $rc, stderr: $(head -c 300 "$R/oom-$cmd.err" | tr '\n' '|') (wanted one line with 'out of memory' and '$want')"
        fi
    done
else
    for c in truncated-header-at-4 truncated-header-at-30 truncated-at-58 truncated-mid flipped-bytes out-of-memory-dump out-of-memory-leaks; do  # names approximate: sizes unknown
        fail "robust/$c" "${HS_MISSING:-no source trace}"
    done
fi

# not a file: a trace through a pipe, or a FIFO nobody writes to, gets one
# line that says to save the trace to a file (it used to read as a trace
# "truncated inside its header", or to wait forever in open)
not_file() { # NAME PATH-EXPR (evaluated by bash -c, so that <(...) works)
    local name=$1 rc
    timeout 20 bash -c "\"\$0\" report $2" "$HS" >"$R/$name.out" 2>"$R/$name.err" </dev/null
    rc=$?
    if [ $rc = 124 ]; then fail "robust/$name" "hung (killed by timeout 20)"
    elif [ $rc != 1 ] || [ "$(grep -c . "$R/$name.err")" != 1 ] || ! grep -q "not a regular file.*save the trace to a file" "$R/$name.err"; then
        fail "robust/$name" "exit $rc, stderr: $(head -c 200 "$R/$name.err" | tr '\n' '|')"
    else ok "robust/$name"; fi
}
if [ $HAVE_HS = 1 ] && [ -s "$W/vg-basic.hst" ]; then
    # basic's calloc site is one call, its leak site five: the report's rows say "1 call", "5 calls"
    "$HS" report "$W/vg-basic.hst" >"$R/basic-report.txt" 2>&1
    if grep -q '^  #[0-9 ]* 128 B / 1 call   peak' "$R/basic-report.txt" &&
        grep -q '^  #[0-9 ]* 1.63 KiB / 5 calls   peak' "$R/basic-report.txt" && ! grep -q ' / 1 calls ' "$R/basic-report.txt"; then
        ok report/one-call-singular
    else
        fail report/one-call-singular "$(grep -m3 ' / .* call' "$R/basic-report.txt" | tr '\n' '|')"
    fi
    not_file trace-through-a-pipe "<(cat '$W/vg-basic.hst')"
    rm -f "$R/fifo.hst" && mkfifo "$R/fifo.hst"
    not_file fifo-without-writer "'$R/fifo.hst'"
    # a FIFO where the trace's program was (a trace read elsewhere): the
    # symbolizer skips that module instead of waiting in open, and the
    # report still has its figures
    mkdir -p "$R/fifomod" && cp "$P/basic" "$R/fifomod/prog"
    (cd "$R/fifomod" && timeout 60 "$HS" record -o "$R/fifomod.hst" -- ./prog) >/dev/null 2>&1 </dev/null
    rm -f "$R/fifomod/prog" && mkfifo "$R/fifomod/prog"
    timeout 20 "$HS" report --json "$R/fifomod.hst" >"$R/fifomod.json" 2>"$R/fifomod.err" </dev/null
    rc=$?
    base=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["allocations"])' "$W/vg-basic.json" 2>/dev/null)
    got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["allocations"])' "$R/fifomod.json" 2>/dev/null)
    if [ $rc = 124 ]; then fail robust/fifo-at-module-path "report hung (killed by timeout 20)"
    elif [ $rc != 0 ] || [ -z "$got" ] || [ "$got" != "$base" ]; then
        fail robust/fifo-at-module-path "exit $rc, allocations '$got' (basic: '$base'), stderr: $(first_line "$R/fifomod.err")"
    else ok robust/fifo-at-module-path; fi
    # and the other way: recording into a pipe writes the whole trace (the
    # writer only appends), and record's last line does not offer a report of it
    (cd "$R" && timeout 60 bash -c '"$0" record -o >(cat >"$1") -- "$2"; wait' "$HS" "$R/piped.hst" "$P/basic") \
        >"$R/piped.out" 2>"$R/piped.err" </dev/null
    sleep 0.2
    got=$(timeout 20 "$HS" report --json "$R/piped.hst" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["allocations"])' 2>/dev/null)
    if [ "$got" != "$base" ]; then fail robust/record-into-a-pipe "allocations '$got' (basic: '$base'); record said: $(tail -n 1 "$R/piped.err")"
    elif ! tail -n 1 "$R/piped.err" | grep -q "not a regular file"; then fail robust/record-into-a-pipe "last line: $(tail -n 1 "$R/piped.err")"
    else ok robust/record-into-a-pipe; fi
    # a pipe whose reader goes away after 100 bytes: the tracer's write at
    # exit raised SIGPIPE at the program's thread, which died of it (exit
    # 141); now tracing stops with one line and the program ends as it would
    rm -f "$R/shortpipe" && mkfifo "$R/shortpipe"
    (timeout 30 head -c 100 "$R/shortpipe" >/dev/null &)
    says_one_line robust/pipe-reader-gone "$R/shortpipe" 'figures: iterations 20000' "reader of the trace's pipe went away" \
        -- env LD_PRELOAD="$LIB" HEAPSCOPE_OUTPUT="$R/shortpipe" "$P/fillfile" 20000
else
    for c in trace-through-a-pipe fifo-without-writer fifo-at-module-path record-into-a-pipe pipe-reader-gone; do fail "robust/$c" "${HS_MISSING:-no basic trace}"; done
fi
exit 0
