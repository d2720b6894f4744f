#!/usr/bin/env bash
# e2e.sh - end-to-end tests of the viewer's page (heapscope view) in Debian's headless chromium, driven by playwright-core (e2e.mjs)
#
# Run from the repository root: tests/web/e2e.sh (env BUILD=build, CHROMIUM=/usr/bin/chromium, WEB_WORK=tests/web/build).
# Installs tests/web/node_modules from package-lock.json (npm ci) when missing; no browser download.
# Prints one line per check, `ok NAME` or `FAIL NAME: why`; always exits 0.
# Screenshots of the main views: $BUILD/tests/web/*.png.
set -u

ROOT=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) BD=$BUILD ;; *) BD=$ROOT/$BUILD ;; esac
HS=$BD/heapscope
T=$ROOT/tests/web
W=${WEB_WORK:-$T/build}/e2e   # WEB_WORK: another scratch folder, for two runs at once
ART=$BD/tests/web
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
mkdir -p "$W" "$ART"

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; }

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then fail setup "node and npm are needed (apt-get install nodejs npm)"; exit 0; fi
if [ ! -x "$CHROMIUM" ]; then fail setup "no $CHROMIUM (apt-get install chromium)"; exit 0; fi
if [ ! -d "$T/node_modules/playwright-core" ]; then
    if ! (cd "$T" && npm ci --no-audit --no-fund) >"$W/npm.log" 2>&1; then
        fail setup "npm ci in tests/web failed: $(tail -c 300 "$W/npm.log")"
        exit 0
    fi
fi

if ! gcc -std=gnu11 -g -O0 -fno-omit-frame-pointer -pthread -o "$W/phases" "$ROOT/tests/analysis/progs/phases.c" 2>"$W/cc.log" ||
   ! "$HS" record -o "$W/phases.hst" -- "$W/phases" >/dev/null 2>"$W/record.log"; then
    fail record "$(head -c 300 "$W/cc.log" "$W/record.log")"
    exit 0
fi

# compare mode and loading progress: tests/web/progs/churn.c leaking 100 then 1000 blocks, and a 6M-event run
if ! why=$("$ROOT/tests/web/churn-traces.sh" "$HS" "$W"); then
    fail record-churn "$why"
    exit 0
fi

# the walk up the callers: tests/web/progs/chains.c, one site reached through known call chains
if ! why=$("$ROOT/tests/web/chains-trace.sh" "$HS" "$W"); then
    fail record-chains "$why"
    exit 0
fi

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$HS" view "$W/phases.hst" --port "$PORT" >"$W/view.out" 2>"$W/view.err" &
PID=$!
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

HS="$HS" TRACE="$W/phases.hst" BASE="$W/base.hst" NEW="$W/new.hst" BIG="$W/big.hst" CHAINS="$W/chains.hst" URL="http://127.0.0.1:$PORT/" ART="$ART" PROFILE="$W/profile" CHROMIUM="$CHROMIUM" \
    timeout 120 node "$T/e2e.mjs" || fail e2e "e2e.mjs exited $?"

kill -TERM $PID 2>/dev/null
for _ in $(seq 50); do kill -0 $PID 2>/dev/null || break; sleep 0.1; done
kill -0 $PID 2>/dev/null && kill -9 $PID
wait $PID 2>/dev/null
exit 0
