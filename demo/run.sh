#!/bin/sh
# run.sh - make demo: records the bundled leaky server and prints its report
set -e
BUILD=${BUILD:-build}
mkdir -p "$BUILD/demo"
cc -g -O1 -o "$BUILD/demo/leaky" demo/leaky.c
echo "== heapscope record -o $BUILD/demo/leaky.hst -- $BUILD/demo/leaky 20000"
"$BUILD/heapscope" record -o "$BUILD/demo/leaky.hst" -- "$BUILD/demo/leaky" 20000
echo
echo "== heapscope report $BUILD/demo/leaky.hst"
"$BUILD/heapscope" report "$BUILD/demo/leaky.hst"
echo
echo "The top site by leaked bytes is audit_copy (demo/leaky.c), called from handle():"
echo "one block in ten requests is never freed. Try 'heapscope report --json $BUILD/demo/leaky.hst'."
