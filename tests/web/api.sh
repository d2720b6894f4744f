#!/usr/bin/env bash
# api.sh - tests of the viewer's HTTP server and JSON API (heapscope view) on a recorded test program, with curl
#
# Run from the repository root: tests/web/api.sh (env BUILD=build, WEB_WORK=tests/web/build).
# Prints one line per check, `ok NAME` or `FAIL NAME: why`; always exits 0.
set -u

ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) BD=$BUILD ;; *) BD=$ROOT/$BUILD ;; esac
HS=$BD/heapscope
W=${WEB_WORK:-$ROOT/tests/web/build}   # WEB_WORK: another scratch folder, for two runs at once
mkdir -p "$W"

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; }
expect() { if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "expected $2, got '$3'"; fi; }
# status NAME CODE URL: the check that URL answers with that HTTP status
status() { expect "$1" "$2" "$(get "$3")"; }

# get [CURL ARGS...] URL: prints the HTTP status then the body (python3's urllib when curl is missing)
get() {
    if command -v curl >/dev/null; then
        curl -s --path-as-is --max-time 10 -o "$W/body" -w '%{http_code}' "$@" 2>/dev/null
    else
        python3 - "$W/body" "$@" <<'PY'
import sys, urllib.request, urllib.error
out, args = sys.argv[1], sys.argv[2:]
headers = {}
while args[0] == "-H":
    k, v = args[1].split(": ", 1); headers[k] = v; args = args[2:]
try:
    r = urllib.request.urlopen(urllib.request.Request(args[0], headers=headers), timeout=10); code, body = r.status, r.read()
except urllib.error.HTTPError as e:
    code, body = e.code, e.read()
except Exception:
    code, body = 0, b""
open(out, "wb").write(body); print(code, end="")
PY
    fi
}
# field EXPR: a value of the last body's JSON (j is the document)
field() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$W/body" "$1" 2>/dev/null || echo "not JSON: $(head -c 200 "$W/body")"; }

if ! gcc -std=gnu11 -g -O0 -fno-omit-frame-pointer -pthread -o "$W/phases" "$ROOT/tests/analysis/progs/phases.c" 2>"$W/cc.log" ||
   ! "$HS" record -o "$W/phases.hst" -- "$W/phases" >/dev/null 2>"$W/record.log"; then
    fail record "$(head -c 300 "$W/cc.log" "$W/record.log")"
    exit 0
fi
ok record
P=$W/phases.hst

# start_view NAME ARGS...: starts heapscope view, sets VPID and VU; 0 when it serves
start_view() {
    local name=$1
    shift
    VPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$HS" view "$@" --port "$VPORT" >"$W/$name.out" 2>"$W/$name.err" &
    VPID=$!
    VU=http://127.0.0.1:$VPORT
    for _ in $(seq 100); do
        grep -q '^Serving' "$W/$name.out" 2>/dev/null && return 0
        kill -0 $VPID 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
stop_view() {
    kill -TERM $VPID 2>/dev/null
    for _ in $(seq 50); do kill -0 $VPID 2>/dev/null || break; sleep 0.1; done
    kill -0 $VPID 2>/dev/null && kill -9 $VPID
    wait $VPID 2>/dev/null
}

# the trace loads in the background: wait until /api/status says ready
wait_ready() { # URL -> 0 when ready
    for _ in $(seq 100); do
        [ "$(get "$1/api/status")" = 200 ] && [ "$(field 'j["state"]')" = ready ] && return 0
        sleep 0.1
    done
    return 1
}

start_view view "$P"
PID=$VPID PORT=$VPORT U=$VU
if ! grep -q "^Serving http://127.0.0.1:$PORT/" "$W/view.out"; then
    fail start "$(head -c 300 "$W/view.out" "$W/view.err")"
    kill $PID 2>/dev/null
    exit 0
fi
ok start
if wait_ready "$U"; then ok ready; else fail ready "$(head -c 200 "$W/body")"; fi

code=$(get "$U/")
if [ "$code" = 200 ] && grep -q '<script type="module" src="app.js">' "$W/body"; then ok page; else fail page "status $code"; fi
code=$(get "$U/app.js")
if [ "$code" = 200 ] && grep -q "api('info')" "$W/body"; then ok asset-js; else fail asset-js "status $code"; fi

want=$("$HS" report --json "$P" | python3 -c 'import json,sys; print(json.load(sys.stdin)["allocations"])')
code=$(get "$U/api/info")
expect info-status 200 "$code"
expect info-allocations "$want" "$(field 'j["allocations"]')"
want=$("$HS" report --json "$P" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["end"], j["signal"])')
expect info-end-as-report "$want" "$(field 'j["end"], j["signal"]' | tr -d "(),'")"

want=$("$HS" top --leaked --json "$P" | python3 -c 'import json,sys; t=json.load(sys.stdin)["total"]; print(t["calls"], t["bytes"], t["leaked_bytes"])')
code=$(get "$U/api/top?leaked=1")
expect top-leaked-status 200 "$code"
expect top-leaked-total "$want" "$(field '" ".join(str(j["total"][k]) for k in ("calls", "bytes", "leaked_bytes"))')"

want=$("$HS" top --live-between 150ms 250ms --json "$P" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"]["bytes"])')
code=$(get "$U/api/flame?live-between=150ms,250ms")
expect flame-status 200 "$code"
expect flame-root-total "$want" "$(field 'j["root"]["value"]')"
expect flame-site-first make_node "$(field 'j["root"]["children"][0]["name"]')"
# what the command line says on stderr comes in a header (percent-encoded): the filter's warnings
warning() { # URL -> the X-Heapscope-Warning header, decoded
    python3 - "$1" <<'PY'
import sys, urllib.request, urllib.error, urllib.parse
try:
    r = urllib.request.urlopen(sys.argv[1], timeout=10)
    print(urllib.parse.unquote(r.headers.get("X-Heapscope-Warning", "")))
except Exception as e:
    print("request failed: %s" % e)
PY
}
want=$("$HS" top --live-between end-1ms 10% "$P" 2>&1 >/dev/null | sed -n 's/^heapscope: warning: //p')
case $want in *"ends before it starts"*) expect warning-header-as-cli "$want" "$(warning "$U/api/top?live-between=end-1ms,10%25")" ;;
*) fail warning-header-as-cli "the command line gave no warning for a range that ends before it starts: '$want'" ;; esac
expect warning-header-none "" "$(warning "$U/api/top?live-between=150ms,250ms")"
code=$(get "$U/api/flame?weight=count&min=0.5")
expect flame-min-other "True 6501" "$(field 'any(c.get("other") for c in j["root"]["children"]), sum(c["value"] for c in j["root"]["children"])' | tr -d '(),')"

code=$(get "$U/api/timeline?points=11&leaked=1")
expect timeline "200 11" "$code $(field 'len(j["heap"])')"
code=$(get "$U/api/leaks?n=3")
expect leaks "200 heapscope-leaks/1" "$code $(field 'j["schema"]')"

code=$(get "$U/api/leaks?n=3")
expect leaks-kept-live "True" "$(field 'len(j["kept_live"]) == len(j["sites"]) and all(len(k) == 50 for k in j["kept_live"])')"

want=$("$HS" top --leaked --json "$P" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"]["calls"])')
code=$(get "$U/api/lifetimes?leaked=1&points=10000")
expect lifetimes-status 200 "$code"
expect lifetimes-schema heapscope-viewer-lifetimes/1 "$(field 'j["schema"]')"
expect lifetimes-count "$want $want 1 True" "$(field 'j["count"], len(j["points"]), j["stride"], all(p[3] == 1 for p in j["points"])' | tr -d '(),')"
want=$("$HS" report --json "$P" | python3 -c 'import json,sys; print(json.load(sys.stdin)["allocations"])')
code=$(get "$U/api/lifetimes?points=100")
expect lifetimes-downsampled "200 $want True" "$code $(field 'j["matched_records"], len(j["points"]) <= 100' | tr -d '(),')"
code=$(get "$U/api/lifetimes?points=0")
expect lifetimes-bad-points 400 "$code"

want=$("$HS" flame --folded --weight count --live-between 150ms 250ms "$P" | sort)
code=$(get "$U/api/folded?weight=count&live-between=150ms,250ms")
got=$(sort "$W/body")
if [ "$code" = 200 ] && [ -n "$want" ] && [ "$got" = "$want" ]; then ok folded-like-cli; else fail folded-like-cli "status $code, $(echo "$got" | head -c 200)"; fi
code=$(get "$U/api/diff")
expect diff-single-trace "400 True" "$code $(field '"two traces" in j["error"]')"
status compare-single-trace 400 "$U/api/flame?compare=1"
status trace-new-single 400 "$U/api/top?trace=new"
status status-bad-param 400 "$U/api/status?x=1"

code=$(get "$U/api/top?live-at=12")
expect bad-time-status 400 "$code"
case $(field 'j["error"]') in *"bad time '12' for --live-at"*) ok bad-time-message ;; *) fail bad-time-message "$(head -c 200 "$W/body")" ;; esac
code=$(get "$U/api/top?colour=red")
expect unknown-param "400 True" "$code $(field '"unknown parameter" in j["error"]')"
code=$(get "$U/api/top?n=lots")
expect bad-number 400 "$code"
code=$(get "$U/api/nothing")
expect unknown-api 404 "$code"
code=$(get "$U/nothing.html")
expect unknown-path 404 "$code"
code=$(get -H "Host: evil.example:$PORT" "$U/api/info")
expect foreign-host "403 True" "$code $(field '"error" in j')"
code=$(get -H "Host: localhost:$PORT" "$U/api/info")
expect localhost-host 200 "$code"
code=$(get "$U/../Makefile")
expect dotdot 404 "$code"
code=$(get "$U/%2e%2e/Makefile")
expect dotdot-escaped 404 "$code"
code=$(get -X POST "$U/api/info")
expect post 405 "$code"

python3 - "$PORT" <<'PY' >/dev/null 2>&1
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
try:
    s.sendall(b"GET /api/info?" + b"x" * 300000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    s.recv(100)
except OSError:
    pass
PY
code=$(get "$U/api/info")
if [ "$code" = 200 ] && kill -0 $PID 2>/dev/null; then ok oversized; else fail oversized "server answers $code after an oversized request"; fi

kill -TERM $PID
rc=0
for _ in $(seq 50); do kill -0 $PID 2>/dev/null || break; sleep 0.1; done
if kill -0 $PID 2>/dev/null; then
    fail exit "still running 5 s after SIGTERM"
    kill -9 $PID
else
    wait $PID
    rc=$?
    expect exit 0 "$rc"
fi

# ---- the walk up the callers: tests/web/progs/chains.c, whose call chains and figures are known (see its comment) ----
if ! why=$("$ROOT/tests/web/chains-trace.sh" "$HS" "$W"); then
    fail record-chains "$why"
elif start_view chains "$W/chains.hst" && wait_ready "$VU"; then
    ok chains-start
    # callers ROWS: "name calls bytes peak leaked temporary" of each row, ';'-separated
    rows() { field '";".join(" ".join([r["name"]] + [str(r[k]) for k in ("calls", "bytes", "peak_bytes", "leaked_bytes", "temporary_bytes")]) for r in j["rows"])'; }
    code=$(get "$VU/api/top?by=function&callers=1")
    expect callers-level1 "200 mid_a 30 3000 3000 2000 1000;mid_b 5 1500 0 0 1500" "$code $(rows)"
    code=$(get "$VU/api/top?by=function&callers=1&path=1")
    expect callers-level2 "200 top_x 20 2000 2000 2000 0;top_y 10 1000 1000 0 1000" "$code $(rows)"
    expect callers-level2-path "leaf/1 mid_a/1 mid_a" "$(field '" ".join("%s/%d" % (p["name"], p["rank"]) for p in j["caller_path"]) + " " + j["callers_of"]["name"]')"
    code=$(get "$VU/api/top?by=function&callers=1&path=1,1")
    expect callers-level3 "200 main 20 2000 2000 2000 0" "$code $(rows)"
    code=$(get "$VU/api/top?by=function&callers=1&path=1,2")
    expect callers-level3-other "200 main 10 1000 1000 0 1000" "$code $(rows)"
    code=$(get "$VU/api/top?by=function&callers=1&path=2")
    expect callers-level2-mid-b "200 top_y 5 1500 0 0 1500" "$code $(rows)"
    code=$(get "$VU/api/top?by=function&callers=1&path=1,1,1")
    expect callers-outermost "200 (no caller: outermost frame) 20 2000 2000 2000 0" "$code $(rows)"
    code=$(get "$VU/api/top?by=function&callers=1&path=1&sort=calls&leaked=1")
    expect callers-filtered "200 top_x 20 2000 2000 2000 0" "$code $(rows)"
    code=$(get "$VU/api/top?by=line&callers=1&path=1")
    expect callers-by-line "200 top_x 20 2000;top_y 10 1000" "$code $(field '";".join("%s %d %d" % (r["name"].split()[0], r["calls"], r["bytes"]) for r in j["rows"])')"
    code=$(get "$VU/api/top?callers=1&path=1,1")
    expect callers-by-backtrace "200 main 2000 2000" "$code $(field '" ".join([j["rows"][0]["name"].split()[0], str(j["rows"][0]["bytes"]), str(j["total"]["bytes"])])')"
    want=$("$HS" top "$W/chains.hst" --by function --callers 1 --json | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["rows"]))')
    code=$(get "$VU/api/top?by=function&callers=1")
    got=$(field 'json.dumps(j["rows"])')
    if [ "$want" = "$got" ]; then ok callers-level1-like-cli; else fail callers-level1-like-cli "$(echo "$got" | head -c 200)"; fi
    for bad in "path=1" "callers=1&path=" "callers=1&path=0" "callers=1&path=1,,1" "callers=1&path=1," "callers=1&path=x" \
               "callers=1&path=-1" "callers=1&path=99999999999" "callers=1&path=$(python3 -c 'print(",".join(["1"] * 65))')"; do
        code=$(get "$VU/api/top?by=function&$bad")
        expect "callers-malformed-path-400 ($bad)" "400 True" "$code $(field '"path" in j["error"]')"
    done
    code=$(get "$VU/api/top?by=function&callers=1&path=3")
    expect callers-path-no-row "400 True" "$code $(field '"no row 3 at level 1 of path" in j["error"]')"
    code=$(get "$VU/api/top?by=function&callers=1&path=1,1,1,1,1")
    expect callers-path-past-outermost "400 True" "$code $(field '"no row 1 at level 5" in j["error"]')"
    status callers-path-on-leaks 400 "$VU/api/leaks?callers=1&path=1"
else
    fail chains-start "$(head -c 300 "$W/chains.out" "$W/chains.err")"
fi
stop_view

# ---- compare mode: two runs of tests/web/progs/churn.c, the new one leaking 1000 blocks instead of 100 ----
if ! why=$("$ROOT/tests/web/churn-traces.sh" "$HS" "$W"); then
    fail record-churn "$why"
    exit 0
fi
ok record-churn

if start_view compare "$W/base.hst" "$W/new.hst" && wait_ready "$VU"; then
    ok compare-start
    code=$(get "$VU/api/info")
    expect compare-info "200 $W/base.hst $W/new.hst 1000" "$code $(field 'j["file"], j["compare"]["file"], j["compare"]["leaked"]["count"]' | tr -d "(),'")"
    want=$("$HS" diff "$W/base.hst" "$W/new.hst" --json -n 5 | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["rows"], sort_keys=True))')
    code=$(get "$VU/api/diff?n=5")
    expect compare-diff-status 200 "$code"
    got=$(field 'json.dumps(j["rows"], sort_keys=True)' | sed 's/^/x/')
    if [ "x$want" = "$got" ]; then ok compare-diff-like-cli; else fail compare-diff-like-cli "$(echo "$got" | head -c 200)"; fi
    expect compare-diff-first "leak_blocks 86400 86400" "$(field 'j["rows"][0]["name"].split()[0], j["rows"][0]["delta"]["bytes"], j["rows"][0]["delta"]["leaked_bytes"]' | tr -d "(),'")"
    code=$(get "$VU/api/diff?sort=calls&by=function&leaked=1")
    expect compare-diff-filtered "200 leak_blocks 900 calls function" "$code $(field 'j["rows"][0]["name"].split()[0], j["rows"][0]["delta"]["calls"], j["sort"], j["by"]' | tr -d "(),'")"
    code=$(get "$VU/api/flame?compare=1&weight=leaked")
    expect compare-flame "200 True 96000 9600 leak_blocks 96000 9600" "$code $(field 'j["compare"], j["root"]["value"], j["root"]["base"], j["root"]["children"][0]["name"], j["root"]["children"][0]["value"], j["root"]["children"][0]["base"]' | tr -d "(),'")"
    code=$(get "$VU/api/flame?compare=1&through=steady")
    expect compare-flame-filtered "200 100000 100000" "$code $(field 'j["root"]["value"], j["root"]["base"]' | tr -d "(),'")"
    code=$(get "$VU/api/top?trace=new&leaked=1")
    expect compare-top-new "200 1000" "$code $(field 'j["total"]["calls"]')"
    code=$(get "$VU/api/top?leaked=1")
    expect compare-top-base "200 100" "$code $(field 'j["total"]["calls"]')"
    code=$(get "$VU/api/diff?callers=1")
    expect compare-callers "200 1 main 9600 96000 86400" "$code $(field 'len(j["rows"]), j["rows"][0]["name"].split()[0], j["rows"][0]["base"]["bytes"], j["rows"][0]["new"]["bytes"], j["rows"][0]["delta"]["bytes"]' | tr -d "(),'")"
    code=$(get "$VU/api/diff?callers=1&path=1")
    expect compare-callers-level2 "200 (no caller: outermost frame) 9600 96000 main" "$code $(field '"%s %d %d %s" % (j["rows"][0]["name"], j["rows"][0]["base"]["bytes"], j["rows"][0]["new"]["bytes"], j["callers_of"]["name"].split()[0])')"
    code=$(get "$VU/api/diff?callers=1&by=function&leaked=1")
    expect compare-callers-filtered "200 main 100 1000 900" "$code $(field '"%s %d %d %d" % (j["rows"][0]["name"], j["rows"][0]["base"]["calls"], j["rows"][0]["new"]["calls"], j["rows"][0]["delta"]["calls"])')"
    status compare-callers-no-row 400 "$VU/api/diff?callers=1&path=7"
    status compare-callers-bad-path 400 "$VU/api/diff?callers=1&path=1,a"
    code=$(get "$VU/api/diff?sort=temporary")
    expect compare-bad-sort "400 True" "$code $(field '"bad value" in j["error"]')"
    status compare-bad-value 400 "$VU/api/flame?compare=2"
    status compare-and-trace 400 "$VU/api/flame?compare=1&trace=new"
    status compare-diff-trace 400 "$VU/api/diff?trace=new"
    status compare-bad-trace 400 "$VU/api/top?trace=third"
    status compare-bad-filter 400 "$VU/api/diff?live-at=soon"
else
    fail compare-start "$(head -c 300 "$W/compare.out" "$W/compare.err")"
fi
stop_view

# ---- loading: a 6M-event trace, slowed down so the loading state can be watched ----
export HEAPSCOPE_VIEW_LOAD_DELAY_MS=400
if start_view loading "$W/big.hst"; then
    ok loading-start
    code=$(get "$VU/api/status")
    expect loading-status "200 loading True" "$code $(field 'j["state"], 0 <= j["fraction"] < 1' | tr -d "(),'")"
    code=$(get "$VU/api/flame")
    expect loading-503 "503 loading True" "$code $(field 'j["state"], "still loading" in j["error"]' | tr -d "(),'")"
    status loading-malformed-400 400 "$VU/api/top?n=lots"
    status loading-page 200 "$VU/"
    # with the delay set the loader waits at each step until a reply has told it, so a loaded machine's slow
    # polls still see every step; polled by curl and the shell alone, to keep the loop cheap all the same
    fracs="" s=""
    for _ in $(seq 400); do
        get "$VU/api/status" >/dev/null
        body=$(cat "$W/body")
        if [[ $body =~ \"state\":\ \"([a-z]+)\",\ \"fraction\":\ ([0-9.]+) ]]; then
            s=${BASH_REMATCH[1]}
        else
            s="not JSON: ${body:0:200}"
        fi
        [ "$s" = loading ] || break
        fracs="$fracs ${BASH_REMATCH[2]}"
        sleep 0.05
    done
    expect loading-ready ready "$s"
    if python3 -c 'import sys; f=[float(x) for x in sys.argv[1:]]; sys.exit(not (len(set(f)) >= 2 and f == sorted(f)))' $fracs; then
        ok loading-fraction-grows
    else
        fail loading-fraction-grows "fractions seen:$fracs"
    fi
    code=$(get "$VU/api/top")
    expect loading-then-top "200 3000500" "$code $(field 'j["total"]["calls"]')"
else
    fail loading-start "$(head -c 300 "$W/loading.out" "$W/loading.err")"
fi
stop_view
if [ "$(cat "$W/loading.err" 2>/dev/null)" = "" ]; then ok loading-quiet-log; else fail loading-quiet-log "$(head -c 200 "$W/loading.err")"; fi

# stopped while loading: exits at once, without crashing
if start_view loading-stop "$W/big.hst"; then
    kill -TERM $VPID
    for _ in $(seq 30); do kill -0 $VPID 2>/dev/null || break; sleep 0.1; done
    if kill -0 $VPID 2>/dev/null; then fail stop-while-loading "still running 3 s after SIGTERM"; kill -9 $VPID; wait $VPID 2>/dev/null
    else wait $VPID; expect stop-while-loading 0 "$?"; fi
else
    fail stop-while-loading "$(head -c 300 "$W/loading-stop.out" "$W/loading-stop.err")"
fi
unset HEAPSCOPE_VIEW_LOAD_DELAY_MS

# a trace whose program is gone: the answers say which frames are unnamed and what to do, as the
# command line does; given the binary's directory (--binaries), the names come back and the warning goes
rm -rf "$W/gone.d" && mkdir -p "$W/gone.d/kept"
cp "$W/phases" "$W/gone.d/phases"
if "$HS" record -o "$W/gone.d/g.hst" -- "$W/gone.d/phases" >/dev/null 2>&1; then
    mv "$W/gone.d/phases" "$W/gone.d/kept/phases"
    want=$("$HS" top "$W/gone.d/g.hst" 2>&1 >/dev/null | sed -n 's/^heapscope: warning: //p')
    if start_view gone "$W/gone.d/g.hst" && wait_ready "$VU"; then
        got=$(warning "$VU/api/top")
        case $want in *"left unnamed: no such file"*) expect unnamed-warning-as-cli "$want" "$got" ;;
        *) fail unnamed-warning-as-cli "the command line gave no warning for a missing binary: '$want'" ;; esac
    else
        fail unnamed-warning-as-cli "$(head -c 300 "$W/gone.out" "$W/gone.err")"
    fi
    stop_view
    if start_view gone-found "$W/gone.d/g.hst" --binaries "$W/gone.d/kept" && wait_ready "$VU"; then
        got=$(warning "$VU/api/top?leaked=1")
        get "$VU/api/top?leaked=1" >/dev/null
        expect unnamed-found-with-binaries " make_node" "$got $(field '" ".join(r["frames"][0]["function"] or "" for r in j["rows"][:1])')"
    else
        fail unnamed-found-with-binaries "$(head -c 300 "$W/gone-found.out" "$W/gone-found.err")"
    fi
    stop_view
else
    fail unnamed-warning-as-cli "cannot record the copy of phases"
fi

# a trace corrupt in its middle: the server has started, then loading fails; the viewer says why and exits 1
python3 - "$W/big.hst" "$W/bad.hst" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
for i in range(len(d) // 2, len(d) // 2 + 100):
    d[i] ^= 0x5A
open(sys.argv[2], "wb").write(d)
PY
if start_view bad "$W/bad.hst" || grep -q . "$W/bad.err"; then
    for _ in $(seq 50); do kill -0 $VPID 2>/dev/null || break; sleep 0.1; done
    if kill -0 $VPID 2>/dev/null; then fail corrupt-trace "still serving a trace that cannot load"; stop_view
    else wait $VPID; rc=$?
        if [ "$rc" = 1 ] && grep -q "^heapscope: .*corrupt" "$W/bad.err"; then ok corrupt-trace; else fail corrupt-trace "exit $rc, $(head -c 200 "$W/bad.err")"; fi
    fi
else
    fail corrupt-trace "$(head -c 300 "$W/bad.out" "$W/bad.err")"
fi
exit 0
