#!/usr/bin/env bash
# chains-trace.sh - records the trace of tests/web/progs/chains.c (one site reached through known call chains) the viewer
# tests walk up level by level: DIR/chains.hst; usage: chains-trace.sh HEAPSCOPE DIR; prints why on failure
set -u
HS=$1 W=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if ! gcc -std=gnu11 -g -O0 -fno-omit-frame-pointer -o "$W/chains" "$ROOT/tests/web/progs/chains.c" 2>"$W/cc-chains.log" ||
   ! "$HS" record -o "$W/chains.hst" -- "$W/chains" >/dev/null 2>"$W/record-chains.log"; then
    head -c 300 "$W/cc-chains.log" "$W/record-chains.log"
    exit 1
fi
