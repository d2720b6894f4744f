#!/usr/bin/env bash
# bench/run.sh - heapscope benchmark harness (run by `make bench` from the repo root).
#
# Workloads:
#   (a) churn-1t   bench/churn.c, 10M malloc/free pairs at call depth ~15, 1 thread
#   (b) churn-4t   same, 10M pairs over 4 threads
#   (c) sqlite     Debian sqlite3, :memory:, 200k INSERTs into an indexed table, one txn
#   (d) python     PYTHONMALLOC=malloc python3 -c '<dict/list loop, ~2 s natively>'
#   (e) clang      clang -O2 -c src/format/reader.c: a large C++ program (LLVM), 690k
#                  allocations through 145,000 stack nodes; no target, for comparison
#                  (the others' backtraces make a few hundred to 18,000 nodes)
# Modes, run side by side (interleaved, round after round):
#   native | heapscope full | heapscope sampled (--sample 512K) | heaptrack
# Then `heapscope report FILE` (and leaks, flame, timeline) vs `heaptrack_print FILE`
# on each workload's trace: as they run, then both pinned to one core.
#
# Timing: median wall time of 3 runs, or 5 when the projected total stays under
# ~12 min.  Any heapscope failure (not built, crash, timeout) shows as n/a.
#
# Environment: BUILD (default build), RUNS (force 3 or 5), CC (default gcc),
#   PYTHON (default /usr/bin/python3), BENCH_KEEP=1 (keep the temp dir),
#   BENCH_ONLY="churn-1t sqlite" (subset of workloads, for debugging).
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) BDIR=$BUILD ;; *) BDIR=$ROOT/$BUILD ;; esac
HS=$BDIR/heapscope
CC=${CC:-gcc}
if [ -z "${PYTHON:-}" ]; then
    # Prefer Debian's python3 over a pyenv shim (a shell script that would be
    # traced and timed too).
    if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=$(command -v python3); fi
fi
OUT_FILE=$ROOT/bench/results-latest.txt
BUDGET_5=720    # seconds: do 5 runs only if the projected total stays under this
DEADLINE=1080   # seconds: stop starting new rounds after this (keeps make bench < ~20 min)

T=$(mktemp -d "${TMPDIR:-/tmp}/heapscope-bench.XXXXXX") || exit 1
cleanup() { if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "bench: kept $T" >&2; else rm -rf "$T"; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s\n' "$*" >&2; }
START=$(date +%s.%N)
elapsed() { awk -v s="$START" -v n="$(date +%s.%N)" 'BEGIN{printf "%.0f", n-s}'; }

# ---------------------------------------------------------------- build helpers
log "bench: building workloads in $T"
"$CC" -O2 -Wall -o "$T/timeit" "$ROOT/bench/timeit.c" || { log "bench: cannot build timeit"; exit 1; }
# -O2 -g without frame pointers: unwinding must go through DWARF CFI.
"$CC" -O2 -g -fomit-frame-pointer -fasynchronous-unwind-tables -pthread \
    -o "$T/churn" "$ROOT/bench/churn.c" || { log "bench: cannot build churn"; exit 1; }
TIMEIT=$T/timeit
# the floor of any LD_PRELOAD tracer (bench/floor.c): the family forwarded, then with an idle thread
HAVE_FLOOR=1
"$CC" -O2 -shared -fPIC -o "$T/floor.so" "$ROOT/bench/floor.c" &&
    "$CC" -O2 -shared -fPIC -pthread -DWITH_THREAD -o "$T/floor-thread.so" "$ROOT/bench/floor.c" ||
    { HAVE_FLOOR=0; log "bench: cannot build bench/floor.c: floor columns will be n/a"; }

HAVE_HS=1
if [ ! -x "$HS" ]; then HAVE_HS=0; log "bench: $HS not found: heapscope columns will be n/a"; fi
declare -A DEAD=()      # "wl:mode" -> reason, once a mode has failed (not retried)
HAVE_HT=1
if ! command -v heaptrack >/dev/null || ! command -v heaptrack_print >/dev/null; then
    HAVE_HT=0; log "bench: heaptrack not found: heaptrack columns will be n/a"
fi
HAVE_SQLITE=1
command -v sqlite3 >/dev/null || { HAVE_SQLITE=0; log "bench: sqlite3 not found"; }
HAVE_CLANG=1
command -v clang >/dev/null || { HAVE_CLANG=0; log "bench: clang not found: (e) left out"; }

# (c) SQL script, generated once (deterministic).
"$PYTHON" - "$T/insert.sql" <<'EOF'
import random, sys
r = random.Random(42)
with open(sys.argv[1], "w") as f:
    f.write("CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT);\n")
    f.write("CREATE INDEX t_ab ON t(a, b);\nBEGIN;\n")
    for i in range(200000):
        f.write("INSERT INTO t(a,b) VALUES(%d,'x%08x-%s');\n"
                % (r.randrange(1 << 30), r.randrange(1 << 32), "y" * r.randrange(0, 40)))
    f.write("COMMIT;\nSELECT count(*) FROM t;\n")
EOF

# (d) Python loop: ~2 s natively on the 2-core reference machine.
PY_CODE='d = {}
l = []
for i in range(2700000):
    k = str(i)
    d[k] = [i, k]
    l.append((i, k))
    if len(d) >= 100000:
        d = {}
        l = []'

ALL_WL="churn-1t churn-4t sqlite python clang"
# the analysis commands timed against heaptrack_print on the same traces
HS_TOOLS="hsreport hsleaks hsflame hstimeline"
# the same on one core, as issue 3 asks (the reader's second thread then stays off), and heaptrack_print beside them
HS_TOOLS1="hsreport1 hsleaks1 hsflame1 hstimeline1"
if command -v taskset >/dev/null; then ONE=(taskset -c 0); ONE_HOW="taskset -c 0"
else ONE=(env HEAPSCOPE_READER_THREADS=0); ONE_HOW="HEAPSCOPE_READER_THREADS=0 (no taskset)"; fi
WLS=${BENCH_ONLY:-$ALL_WL}
if [ $HAVE_HS = 0 ]; then
    for wl in $WLS; do for m in full sampled $HS_TOOLS $HS_TOOLS1; do DEAD[$wl:$m]="heapscope not built"; done; done
fi
if [ $HAVE_HT = 0 ]; then
    for wl in $WLS; do for m in heaptrack htprint htprint1; do DEAD[$wl:$m]="heaptrack not installed"; done; done
fi
[ $HAVE_SQLITE = 1 ] || WLS=$(echo "$WLS" | sed 's/sqlite//')
[ $HAVE_CLANG = 1 ] || WLS=$(echo "$WLS" | sed 's/clang//')
declare -A WL_LABEL=([churn-1t]="(a) churn 1t" [churn-4t]="(b) churn 4t" [sqlite]="(c) sqlite" [python]="(d) python"
                     [clang]="(e) clang -c")

# Sets CMD=(...) and WENV=(...) for a workload.
wl_cmd() {
    WENV=()
    case $1 in
        churn-1t) CMD=("$T/churn" 1 10000000) ;;
        churn-4t) CMD=("$T/churn" 4 10000000) ;;
        sqlite)   CMD=(sqlite3 :memory: ".read $T/insert.sql") ;;
        python)   CMD=("$PYTHON" -c "$PY_CODE"); WENV=(PYTHONMALLOC=malloc) ;;
        clang)    CMD=(clang -O2 -c "$ROOT/src/format/reader.c" -I"$ROOT/include" -o "$T/clang.o") ;;
    esac
}

# ---------------------------------------------------------------- state
declare -A TIMES=()     # "wl:mode" -> space-separated wall seconds
declare -A RSS=()       # "wl:mode" -> space-separated max RSS KiB (report modes)
declare -A TIMEOUT=()   # wl -> per-step timeout (s)
NOTES=()

# run_step WL MODE LOGFILE -- cmd...   (records time on success; returns status)
run_step() {
    local wl=$1 mode=$2 lg=$3; shift 4
    local key=$wl:$mode
    [ -n "${DEAD[$key]:-}" ] && return 1
    local to=${TIMEOUT[$wl]:-120}
    env "${WENV[@]}" "$TIMEIT" -t "$to" "$T/res" -- "$@" </dev/null >"$lg.out" 2>"$lg.err"
    local wall rss st
    read -r wall rss st <"$T/res" || { wall=0; rss=0; st=255; }
    if [ "$st" != 0 ]; then
        local why="exit $st"
        [ "$st" = 124 ] && why="timeout after ${to}s"
        [ "$st" -gt 128 ] 2>/dev/null && [ "$st" != 124 ] && why="killed by signal $((st - 128))"
        DEAD[$key]=$why
        NOTES+=("$wl/$mode failed ($why): $(tail -n 3 "$lg.err" 2>/dev/null | tr '\n' ' ' | cut -c1-300)")
        log "  $key FAILED ($why)"
        return 1
    fi
    TIMES[$key]="${TIMES[$key]:-} $wall"
    RSS[$key]="${RSS[$key]:-} $rss"
    log "  $key ${wall}s ${rss}KiB"
    return 0
}

ht_file() { ls "$T/ht-$1".* 2>/dev/null | head -n 1; }

# One round of everything for one workload.
round_wl() {
    local wl=$1
    wl_cmd "$wl"
    run_step "$wl" native "$T/log-$wl-native" -- "${CMD[@]}"
    if [ $HAVE_FLOOR = 1 ]; then
        run_step "$wl" fwd "$T/log-$wl-fwd" -- env LD_PRELOAD="$T/floor.so" "${CMD[@]}"
        run_step "$wl" fwdthr "$T/log-$wl-fwdthr" -- env LD_PRELOAD="$T/floor-thread.so" "${CMD[@]}"
    fi

    if [ $HAVE_HS = 1 ]; then
        rm -f "$T/hs-$wl.full"
        if run_step "$wl" full "$T/log-$wl-full" -- "$HS" record -o "$T/hs-$wl.full" -- "${CMD[@]}"; then
            if [ ! -s "$T/hs-$wl.full" ]; then
                DEAD[$wl:full]="no trace file"; NOTES+=("$wl/full: record succeeded but wrote no trace")
            fi
        fi
        rm -f "$T/hs-$wl.sampled"
        if run_step "$wl" sampled "$T/log-$wl-sampled" -- "$HS" record -o "$T/hs-$wl.sampled" --sample 512K -- "${CMD[@]}"; then
            if [ ! -s "$T/hs-$wl.sampled" ]; then
                DEAD[$wl:sampled]="no trace file"; NOTES+=("$wl/sampled: record succeeded but wrote no trace")
            fi
        fi
    fi
    if [ $HAVE_HT = 1 ]; then
        rm -f "$T/ht-$wl".*
        if run_step "$wl" heaptrack "$T/log-$wl-heaptrack" -- heaptrack -o "$T/ht-$wl" "${CMD[@]}"; then
            [ -n "$(ht_file "$wl")" ] || { DEAD[$wl:heaptrack]="no trace file"; NOTES+=("$wl/heaptrack: no trace file"); }
        fi
    fi

    # Analysis: heapscope report vs heaptrack_print, on this round's traces.
    WENV=()
    if [ $HAVE_HS = 1 ] && [ -z "${DEAD[$wl:full]:-}" ] && [ -s "$T/hs-$wl.full" ]; then
        local one pin
        # as they run, then pinned to one core (suffix 1)
        for one in "" 1; do
            pin=(); [ -n "$one" ] && pin=("${ONE[@]}")
            run_step "$wl" hsreport$one "$T/log-$wl-hsreport$one" -- "${pin[@]}" "$HS" report "$T/hs-$wl.full"
            run_step "$wl" hsleaks$one "$T/log-$wl-hsleaks$one" -- "${pin[@]}" "$HS" leaks "$T/hs-$wl.full"
            run_step "$wl" hsflame$one "$T/log-$wl-hsflame$one" -- "${pin[@]}" "$HS" flame --folded -o "$T/flame-$wl.folded" "$T/hs-$wl.full"
            run_step "$wl" hstimeline$one "$T/log-$wl-hstimeline$one" -- "${pin[@]}" "$HS" timeline -o "$T/timeline-$wl.svg" "$T/hs-$wl.full"
        done
    else
        for m in $HS_TOOLS $HS_TOOLS1; do DEAD[$wl:$m]=${DEAD[$wl:$m]:-"no heapscope trace"}; done
    fi
    local hf; hf=$(ht_file "$wl")
    if [ -n "$hf" ]; then
        run_step "$wl" htprint "$T/log-$wl-htprint" -- heaptrack_print "$hf"
        run_step "$wl" htprint1 "$T/log-$wl-htprint1" -- "${ONE[@]}" heaptrack_print "$hf"
    else
        DEAD[$wl:htprint]=${DEAD[$wl:htprint]:-"no heaptrack trace"}
        DEAD[$wl:htprint1]=${DEAD[$wl:htprint1]:-"no heaptrack trace"}
    fi
}

# Max RSS of the report tools with /usr/bin/time -f %M when available
# (timeit's wait4 rusage otherwise; both read the same kernel counter).
measure_rss_time() {
    local wl=$1 mode=$2; shift 2
    [ -x /usr/bin/time ] || return 0
    [ -n "${DEAD[$wl:$mode]:-}" ] && return 0
    if /usr/bin/time -f %M -o "$T/rss" "$@" >/dev/null 2>&1; then
        RSS_TIME[$wl:$mode]=$(tail -n 1 "$T/rss")
    fi
}
declare -A RSS_TIME=()

# ---------------------------------------------------------------- run
# Warm-up (page cache, binaries), and per-workload timeouts: 30x native, >= 60 s.
log "bench: warm-up"
for wl in $WLS; do
    wl_cmd "$wl"
    env "${WENV[@]}" "$TIMEIT" -t 300 "$T/res" -- "${CMD[@]}" </dev/null >/dev/null 2>&1
    read -r wall _ st <"$T/res"
    if [ "$st" != 0 ]; then log "bench: native $wl fails (exit $st)"; fi
    TIMEOUT[$wl]=$(awk -v w="$wall" 'BEGIN{t=w*30; if (t<60) t=60; printf "%.0f", t}')
done

RUN_START=$(date +%s.%N)
RUNS_DONE=0
target=${RUNS:-3}
r=1
while [ $r -le "$target" ]; do
    if [ "$(elapsed)" -gt $DEADLINE ]; then
        NOTES+=("stopped after $RUNS_DONE rounds: time budget"); break
    fi
    log "bench: round $r/$target (t=$(elapsed)s)"
    for wl in $WLS; do round_wl "$wl"; done
    RUNS_DONE=$r
    if [ $r = 3 ] && [ -z "${RUNS:-}" ]; then
        # Project the total if 2 more rounds were run.
        spent=$(awk -v s="$RUN_START" -v n="$(date +%s.%N)" 'BEGIN{printf "%.0f", n-s}')
        proj=$(awk -v e="$(elapsed)" -v s="$spent" 'BEGIN{printf "%.0f", e + s*2/3 + 30}')
        if [ "$proj" -le $BUDGET_5 ]; then target=5; fi
        log "bench: 3 rounds took ${spent}s, projected total with 5 = ${proj}s -> $target runs"
    fi
    r=$((r + 1))
done

for wl in $WLS; do
    measure_rss_time "$wl" hsreport "$HS" report "$T/hs-$wl.full"
    measure_rss_time "$wl" htprint heaptrack_print "$(ht_file "$wl")"
done

# The viewer on the largest trace: from `heapscope view` to the first page's
# data (info, timeline, flame, table answered), then one Apply of a filter.
VIEW_LINE="viewer: n/a"
now_s() { date +%s.%N; }
view_get() { # PORT PATH -> 0 when the API answered 200
    # with curl where there is one: a python start per request (~50 ms) was part of the figure
    if command -v curl >/dev/null; then
        [ "$(curl -s -o /dev/null --max-time 120 -w '%{http_code}' "http://127.0.0.1:$1$2")" = 200 ]
        return
    fi
    python3 - "$1" "$2" <<'PY'
import sys, urllib.request
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}{sys.argv[2]}", timeout=120) as r:
        r.read()
        sys.exit(0 if r.status == 200 else 1)
except Exception:
    sys.exit(1)
PY
}
vwl=churn-1t
if [ $HAVE_HS = 1 ] && [ -s "$T/hs-$vwl.full" ]; then
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    t0=$(now_s)
    "$HS" view --port "$port" "$T/hs-$vwl.full" >"$T/view.log" 2>&1 &
    vpid=$!
    ready=""
    for _ in $(seq 1 3000); do
        if view_get "$port" /api/info; then ready=1; break; fi
        sleep 0.02
    done
    if [ -n "$ready" ] && view_get "$port" "/api/timeline" && view_get "$port" "/api/flame" && view_get "$port" "/api/top"; then
        t1=$(now_s)
        f='live-between=25%25,75%25'
        view_get "$port" "/api/timeline?$f" && view_get "$port" "/api/flame?$f" && view_get "$port" "/api/top?$f"
        t2=$(now_s)
        VIEW_LINE=$(awk -v a="$t0" -v b="$t1" -v c="$t2" \
            'BEGIN{printf "viewer on (a), 20M events: first page data in %.2f s, Apply of a live-between filter %.2f s", b-a, c-b}')
    else
        VIEW_LINE="viewer: n/a ($(tail -n 1 "$T/view.log"))"
    fi
    kill "$vpid" 2>/dev/null
    wait "$vpid" 2>/dev/null
fi
# The analysis medians above are warm runs: the first command on a machine
# inflates the compressed debug files it meets into the cache
# (src/format/debuginfo.c). Medians of 3: cold (an empty cache), warm, and with no cache.
CACHE_LINE="debug-file cache: n/a"
if [ $HAVE_HS = 1 ] && [ -s "$T/hs-sqlite.full" ]; then
    cold=() warm=() off=()
    for _ in 1 2 3; do
        rm -rf "$T/coldcache"
        c0=$(now_s)
        HEAPSCOPE_CACHE_DIR="$T/coldcache" "$HS" report "$T/hs-sqlite.full" >/dev/null 2>&1
        c1=$(now_s)
        HEAPSCOPE_CACHE_DIR="$T/coldcache" "$HS" report "$T/hs-sqlite.full" >/dev/null 2>&1
        c2=$(now_s)
        HEAPSCOPE_CACHE_DIR=off "$HS" report "$T/hs-sqlite.full" >/dev/null 2>&1
        c3=$(now_s)
        cold+=("$(awk -v a="$c0" -v b="$c1" 'BEGIN{print b-a}')")
        warm+=("$(awk -v a="$c1" -v b="$c2" 'BEGIN{print b-a}')")
        off+=("$(awk -v a="$c2" -v b="$c3" 'BEGIN{print b-a}')")
    done
    m3() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
    CACHE_LINE=$(awk -v a="$(m3 "${cold[@]}")" -v b="$(m3 "${warm[@]}")" -v c="$(m3 "${off[@]}")" \
        -v n="$(du -sk "$T/coldcache" 2>/dev/null | cut -f1)" \
        'BEGIN{printf "report of (c) with the debug-file cache cold %.3f s (it wrote %d KiB), warm %.3f s, off %.3f s (medians of 3)", a, n, b, c}')
fi
# The same in headless chromium: to the first rendered page, and an Apply typed in the filter panel.
BROWSER_LINE="viewer in chromium: n/a (needs node, chromium and tests/web/node_modules: run make test once)"
if [ $HAVE_HS = 1 ] && [ -s "$T/hs-$vwl.full" ] && command -v node >/dev/null && [ -x /usr/bin/chromium ] &&
   [ -d "$ROOT/tests/web/node_modules/playwright-core" ]; then
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    out=$(HS="$HS" TRACE="$T/hs-$vwl.full" PORT="$port" CHROMIUM=/usr/bin/chromium PW="$ROOT/tests/web" \
          node "$ROOT/bench/view-time.mjs" 2>&1 | tail -n 1)
    case $out in
        first-page*) BROWSER_LINE=$(echo "$out" | awk '{printf "viewer in chromium on (a): first rendered page %s s after starting heapscope view, Apply of a live-between filter %s s", $2, $4}') ;;
        *) BROWSER_LINE="viewer in chromium: n/a ($out)" ;;
    esac
fi
# heaptrack_gui on heaptrack's trace of the same program: it never exits by
# itself, so its load ends when its CPU time (all threads) stops growing for
# 2 s; drawn offscreen (no display needed).
GUI_LINE="heaptrack_gui: n/a (not installed)"
if command -v heaptrack_gui >/dev/null && [ -n "$(ht_file "$vwl")" ]; then
    GUI_LINE=$(python3 - "$(ht_file "$vwl")" <<'PY'
import os, subprocess, sys, time
env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
t0 = time.time()
p = subprocess.Popen(["heaptrack_gui", sys.argv[1]], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
hz = os.sysconf("SC_CLK_TCK")
def cpu():
    tot = 0
    try:
        for t in os.listdir(f"/proc/{p.pid}/task"):
            f = open(f"/proc/{p.pid}/task/{t}/stat").read().rsplit(")", 1)[1].split()
            tot += int(f[11]) + int(f[12])
    except OSError:
        pass
    return tot / hz
last, changed = -1.0, t0
while time.time() - t0 < 300 and p.poll() is None:
    c, now = cpu(), time.time()
    if c > last + 0.02:
        last, changed = c, now
    elif now - changed > 2.0:
        break
    time.sleep(0.05)
alive = p.poll() is None
p.kill()
p.wait()
if alive and last > 0:
    print(f"heaptrack_gui (offscreen) on the same program's trace: loaded in {changed - t0:.2f} s ({last:.2f} s of CPU)")
else:
    print("heaptrack_gui: n/a (exited or never started)")
PY
)
fi

# ---------------------------------------------------------------- results
median() { # numbers on stdin (whitespace separated) -> median, or empty
    tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{if (NR==0) exit; if (NR%2) print a[(NR+1)/2]; else printf "%.4f\n", (a[NR/2]+a[NR/2+1])/2}'
}
med() { # WL MODE -> median or empty (empty if the mode failed in any round)
    [ -n "${DEAD[$1:$2]:-}" ] && return 0
    echo "${TIMES[$1:$2]:-}" | median
}
ratio() { # A B -> A/B formatted as 1.23x, or n/a
    if [ -z "$1" ] || [ -z "$2" ]; then echo n/a; return; fi
    awk -v a="$1" -v b="$2" 'BEGIN{ if (b<=0) print "n/a"; else printf "%.2fx\n", a/b }'
}
rawratio() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN{ if (b>0) printf "%.4f\n", a/b }'; }
# WL A B -> median over rounds of that round's A/B, or empty. Each round runs
# every mode back to back, so the machine's drift between rounds (its speed
# here varies up to 2x from minute to minute) cancels out of each ratio.
pmed() {
    { [ -n "${DEAD[$1:$2]:-}" ] || [ -n "${DEAD[$1:$3]:-}" ]; } && return 0
    local a=(${TIMES[$1:$2]:-}) b=(${TIMES[$1:$3]:-}) i r=()
    { [ ${#a[@]} -gt 0 ] && [ ${#a[@]} = ${#b[@]} ]; } || return 0
    for i in "${!a[@]}"; do r+=("$(rawratio "${a[$i]}" "${b[$i]}")"); done
    echo "${r[*]}" | median
}
xfmt() { if [ -n "$1" ]; then printf '%.2fx' "$1"; else echo n/a; fi; }
fsize() { [ -n "$1" ] && [ -f "$1" ] && stat -c %s "$1"; }

# events = allocations + frees from `heapscope report --json` on the full trace
declare -A EVENTS=() EV_APPROX=()
for wl in $WLS; do
    ev=
    if [ $HAVE_HS = 1 ] && [ -z "${DEAD[$wl:full]:-}" ] && [ -s "$T/hs-$wl.full" ]; then
        if "$HS" report --json "$T/hs-$wl.full" >"$T/json-$wl" 2>"$T/json-$wl.err"; then
            ev=$("$PYTHON" - "$T/json-$wl" <<'EOF'
import json, sys
def find(o, k):
    if isinstance(o, dict):
        if k in o and isinstance(o[k], int): return o[k]
        for v in o.values():
            r = find(v, k)
            if r is not None: return r
    elif isinstance(o, list):
        for v in o:
            r = find(v, k)
            if r is not None: return r
    return None
try:
    o = json.load(open(sys.argv[1]))
    a, f = find(o, "allocations"), find(o, "frees")
    if a is not None and f is not None: print(a + f)
except Exception as e:
    print("bad json: %s" % e, file=sys.stderr)
EOF
)
        fi
        [ -n "$ev" ] || NOTES+=("$wl: 'heapscope report --json' gave no allocations/frees: $(head -c 200 "$T/json-$wl.err" 2>/dev/null)")
    fi
    if [ -z "$ev" ] && [ -n "$(ht_file "$wl")" ] && [ -s "$T/log-$wl-htprint.out" ]; then
        # Fallback until heapscope works: 2 x heaptrack's allocation calls (approx.)
        a=$(sed -n 's/^calls to allocation functions: \([0-9]*\).*/\1/p' "$T/log-$wl-htprint.out" | tail -n 1)
        [ -n "$a" ] && { ev=$((2 * a)); EV_APPROX[$wl]="~"; }
    fi
    EVENTS[$wl]=$ev
done

bpe() { # FILE WL -> bytes/event, three digits: python3's 0.011 and heaptrack's 0.0083 were both 0.01
    local s; s=$(fsize "$1")
    if [ -z "$s" ] || [ -z "${EVENTS[$2]:-}" ] || [ "${EVENTS[$2]}" = 0 ]; then echo n/a; return; fi
    awk -v s="$s" -v e="${EVENTS[$2]}" -v p="${EV_APPROX[$2]:-}" 'BEGIN{printf "%s%.3g\n", p, s/e}'
}
rss_of() { # WL MODE -> KiB
    if [ -n "${RSS_TIME[$1:$2]:-}" ]; then echo "${RSS_TIME[$1:$2]}"; return; fi
    [ -n "${DEAD[$1:$2]:-}" ] && return 0
    echo "${RSS[$1:$2]:-}" | median
}
fmt_s() { if [ -n "$1" ]; then printf '%.3f' "$1"; else echo n/a; fi; }
fmt_mb() { if [ -n "$1" ]; then awk -v k="$1" 'BEGIN{printf "%.0fM", k/1024}'; else echo n/a; fi; }

REP=$T/report.txt
{
    echo "heapscope benchmark  $(date -u '+%Y-%m-%d %H:%M UTC')  $(uname -m), $(nproc) cores, $(uname -r)"
    echo "heapscope: $( [ $HAVE_HS = 1 ] && echo "$HS" || echo "not built ($HS missing)" )   heaptrack: $(heaptrack --version 2>/dev/null | head -n 1 || echo none)"
    echo "python: $PYTHON ($("$PYTHON" -c 'import sys;print(sys.version.split()[0])'))   sqlite3: $(sqlite3 --version 2>/dev/null | cut -d' ' -f1)"
    echo "runs: $RUNS_DONE (seconds: median of $RUNS_DONE runs; ratios: median of the $RUNS_DONE rounds' own ratios, modes interleaved)"
    echo "RSS source: $( [ -x /usr/bin/time ] && echo '/usr/bin/time -f %M' || echo 'wait4() rusage (bench/timeit.c)')"
    echo
    printf '%-13s %8s %8s %8s %9s | %9s %9s | %8s %8s %7s | %7s %7s\n' \
        workload native_s hs-full hs-samp heaptrack "B/ev hs" "B/ev ht" rep_s htprt_s speedup rep_RSS ht_RSS
    printf '%s\n' "-----------------------------------------------------------------------------------------------------------------"
    for wl in $WLS; do
        n=$(med "$wl" native); f=$(med "$wl" full); s=$(med "$wl" sampled); h=$(med "$wl" heaptrack)
        rp=$(med "$wl" hsreport); hp=$(med "$wl" htprint)
        sp=$(xfmt "$(pmed "$wl" htprint hsreport)")
        printf '%-13s %8s %8s %8s %9s | %9s %9s | %8s %8s %7s | %7s %7s\n' \
            "${WL_LABEL[$wl]}" "$(fmt_s "$n")" "$(xfmt "$(pmed "$wl" full native)")" "$(xfmt "$(pmed "$wl" sampled native)")" \
            "$(xfmt "$(pmed "$wl" heaptrack native)")" \
            "$(bpe "$T/hs-$wl.full" "$wl")" "$(bpe "$(ht_file "$wl")" "$wl")" \
            "$(fmt_s "$rp")" "$(fmt_s "$hp")" "$sp" \
            "$(fmt_mb "$(rss_of "$wl" hsreport)")" "$(fmt_mb "$(rss_of "$wl" htprint)")"
    done
    echo
    echo "columns: hs-full/hs-samp/heaptrack = wall time / native (per round); B/ev = trace bytes / (allocations+frees"
    echo "  from 'heapscope report --json'$( [ ${#EV_APPROX[@]} -gt 0 ] && echo '; ~ = 2 x heaptrack alloc calls, heapscope n/a')); rep_s = 'heapscope report',"
    echo "  htprt_s = heaptrack_print (same workload), speedup = htprt_s/rep_s; RSS = max RSS of each."
    echo
    # what any LD_PRELOAD tracer pays before it records anything (bench/floor.c)
    echo "floor of a preloaded tracer, wall time / native: the malloc family forwarded, then also an idle thread"
    echo "(glibc's malloc takes its arena lock once a second thread exists); hs-samp and hs-full beside them:"
    printf '%-13s %11s %14s %8s %8s\n' workload forwarded "+idle thread" hs-samp hs-full
    for wl in $WLS; do
        printf '%-13s %11s %14s %8s %8s\n' "${WL_LABEL[$wl]}" "$(xfmt "$(pmed "$wl" fwd native)")" \
            "$(xfmt "$(pmed "$wl" fwdthr native)")" "$(xfmt "$(pmed "$wl" sampled native)")" "$(xfmt "$(pmed "$wl" full native)")"
    done
    echo
    # analysis_table TOOLS HTPRINT: each tool's median seconds (HTPRINT's time / theirs) per workload
    analysis_table() {
        local m t row
        printf '%-13s %16s %16s %16s %16s\n' workload report leaks "flame --folded" timeline
        for wl in $WLS; do
            row=()
            for m in $1; do
                t=$(med "$wl" "$m")
                row+=("$(fmt_s "$t") ($(xfmt "$(pmed "$wl" "$2" "$m")"))")
            done
            printf '%-13s %16s %16s %16s %16s\n' "${WL_LABEL[$wl]}" "${row[@]}"
        done
    }
    echo "analysis commands on the full-mode trace, seconds (heaptrack_print's time / theirs):"
    analysis_table "$HS_TOOLS" htprint
    # the reader's probe (docs/analysis.md): whether a second thread decoded, as the cache remembers it
    pv="${HEAPSCOPE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/heapscope}/reader-probe"
    if [ -s "$pv" ]; then
        echo "reader: one core, as the probe found on this machine ($(sed -n 3p "$pv" | cut -d' ' -f2-))"
    else
        echo "reader: a second thread decodes where the probe finds it faster (no verdict against it kept)"
    fi
    echo
    echo "the same on one core ($ONE_HOW; heaptrack_print too), seconds (heaptrack_print's time / theirs):"
    analysis_table "$HS_TOOLS1" htprint1

    # ---- targets
    verdict() { # list of 0/1/"" -> MET / NOT MET / n/a
        local any_na=0 any_fail=0 v
        [ $# -gt 0 ] || { echo "n/a"; return; }
        for v in "$@"; do case $v in 1) ;; 0) any_fail=1 ;; *) any_na=1 ;; esac; done
        if [ $any_fail = 1 ]; then echo "NOT MET"; elif [ $any_na = 1 ]; then echo "n/a"; else echo "MET"; fi
    }
    le() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN{print (a<=b)?1:0}'; }
    ge() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN{print (a>=b)?1:0}'; }
    inwl() { case " $WLS " in *" $1 "*) return 0 ;; esac; return 1; }
    c1=(); c2=(); c3=(); c4=(); c5=(); c6=(); c7=()
    for wl in $WLS; do
        [ "$wl" = clang ] && continue   # (e): for comparison, no target
        n=$(med "$wl" native)
        fr=$(pmed "$wl" full native)
        case $wl in churn-*) c1+=("$(le "$fr" 3)") ;; *) c2+=("$(le "$fr" 1.3)") ;; esac
        c3+=("$(le "$(pmed "$wl" sampled native)" 1.05)")
        hsz=$(fsize "$T/hs-$wl.full"); htz=$(fsize "$(ht_file "$wl")")
        c4+=("$(le "$hsz" "$htz")")
        for m in $HS_TOOLS; do c5+=("$(ge "$(pmed "$wl" htprint "$m")" 4)"); done
        for m in $HS_TOOLS1; do c7+=("$(ge "$(pmed "$wl" htprint1 "$m")" 4)"); done
        c6+=("$(le "$(rss_of "$wl" hsreport)" "$(rss_of "$wl" htprint)")")
    done
    echo
    echo "targets: full<=3x (a,b): $(verdict "${c1[@]}") | full<=1.3x (c,d): $(verdict "${c2[@]}") | sampled<=1.05x (all): $(verdict "${c3[@]}") | trace<=heaptrack: $(verdict "${c4[@]}") | report/leaks/flame/timeline>=4x faster: $(verdict "${c5[@]}"), on one core: $(verdict "${c7[@]}") | report RSS<=heaptrack_print: $(verdict "${c6[@]}")"
    inwl churn-1t && inwl churn-4t && inwl sqlite && inwl python || echo "(subset of workloads only: $WLS)"
    inwl clang && echo "(e) has no target: a large C++ program beside the issue's four, for comparison"

    # ---- details
    echo
    echo "details (per-run wall seconds; trace sizes in bytes; events = allocations+frees):"
    for wl in $WLS; do
        printf '  %-9s events=%s%s  trace bytes: hs-full=%s hs-sampled=%s heaptrack=%s\n' "$wl" "${EV_APPROX[$wl]:-}" "${EVENTS[$wl]:-n/a}" \
            "$(fsize "$T/hs-$wl.full" || echo n/a)" "$(fsize "$T/hs-$wl.sampled" || echo n/a)" "$(fsize "$(ht_file "$wl")" || echo n/a)"
        for m in native fwd fwdthr full sampled heaptrack $HS_TOOLS htprint $HS_TOOLS1 htprint1; do
            printf '    %-9s %s%s\n' "$m" "${TIMES[$wl:$m]:-}" "${DEAD[$wl:$m]:+  [n/a: ${DEAD[$wl:$m]}]}"
        done
    done
    if [ ${#NOTES[@]} -gt 0 ]; then
        echo
        echo "notes:"
        printf '  %s\n' "${NOTES[@]}"
    fi
    echo
    echo "$CACHE_LINE"
    echo "$VIEW_LINE (heaptrack_print on the same program: $(fmt_s "$(med churn-1t htprint)") s)"
    echo "$BROWSER_LINE"
    echo "$GUI_LINE"
    echo
    echo "total bench time: $(elapsed)s"
} >"$REP"

cat "$REP"
cp "$REP" "$OUT_FILE" 2>/dev/null && log "bench: written to ${OUT_FILE#"$ROOT"/}"
exit 0
