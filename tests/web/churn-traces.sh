#!/usr/bin/env bash
# churn-traces.sh - records the traces of tests/web/progs/churn.c the viewer tests compare and load: DIR/base.hst (100 leaked
# blocks), DIR/new.hst (1000) and DIR/big.hst (a 6M-event run); usage: churn-traces.sh HEAPSCOPE DIR; prints why on failure
set -u
HS=$1 W=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if ! gcc -std=gnu11 -g -O0 -fno-omit-frame-pointer -o "$W/churn" "$ROOT/tests/web/progs/churn.c" 2>"$W/cc.log" ||
   ! "$HS" record -o "$W/base.hst" -- "$W/churn" 2000 100 >/dev/null 2>"$W/record.log" ||
   ! "$HS" record -o "$W/new.hst" -- "$W/churn" 2000 1000 >/dev/null 2>>"$W/record.log" ||
   ! "$HS" record -o "$W/big.hst" -- "$W/churn" 3000000 0 >/dev/null 2>>"$W/record.log"; then
    head -c 300 "$W/cc.log" "$W/record.log"
    exit 1
fi
