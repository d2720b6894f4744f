#!/usr/bin/env bash
# api.sh - tests of the viewer's HTTP server and JSON API (heapscope view) on a recorded test program, with curl
#
# Run from the repository root: tests/web/api.sh (env BUILD=build).
# Prints one line per check, `ok NAME` or `FAIL NAME: why`; always exits 0.
set -u

ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) BD=$BUILD ;; *) BD=$ROOT/$BUILD ;; esac
HS=$BD/heapscope
W=$ROOT/tests/web/build
mkdir -p "$W"

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; }
expect() { if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "expected $2, got '$3'"; fi; }

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

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$HS" view "$P" --port "$PORT" >"$W/view.out" 2>"$W/view.err" &
PID=$!
U=http://127.0.0.1:$PORT
for _ in $(seq 100); do
    grep -q '^Serving' "$W/view.out" 2>/dev/null && break
    kill -0 $PID 2>/dev/null || break
    sleep 0.1
done
if ! grep -q "^Serving http://127.0.0.1:$PORT/" "$W/view.out"; then
    fail start "$(head -c 300 "$W/view.out" "$W/view.err")"
    kill $PID 2>/dev/null
    exit 0
fi
ok start

code=$(get "$U/")
if [ "$code" = 200 ] && grep -q '<script type="module" src="app.js">' "$W/body"; then ok page; else fail page "status $code"; fi
code=$(get "$U/app.js")
if [ "$code" = 200 ] && grep -q "api('info')" "$W/body"; then ok asset-js; else fail asset-js "status $code"; fi

want=$("$HS" report --json "$P" | python3 -c 'import json,sys; print(json.load(sys.stdin)["allocations"])')
code=$(get "$U/api/info")
expect info-status 200 "$code"
expect info-allocations "$want" "$(field 'j["allocations"]')"

want=$("$HS" top --leaked --json "$P" | python3 -c 'import json,sys; t=json.load(sys.stdin)["total"]; print(t["calls"], t["bytes"], t["leaked_bytes"])')
code=$(get "$U/api/top?leaked=1")
expect top-leaked-status 200 "$code"
expect top-leaked-total "$want" "$(field '" ".join(str(j["total"][k]) for k in ("calls", "bytes", "leaked_bytes"))')"

want=$("$HS" top --live-between 150ms 250ms --json "$P" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"]["bytes"])')
code=$(get "$U/api/flame?live-between=150ms,250ms")
expect flame-status 200 "$code"
expect flame-root-total "$want" "$(field 'j["root"]["value"]')"
expect flame-site-first make_node "$(field 'j["root"]["children"][0]["name"]')"
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
exit 0
