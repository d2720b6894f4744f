#!/bin/sh
# deps.sh - installs the Debian packages heapscope needs (when root), or prints the command and stops
# usage: build-aux/deps.sh build|test|demo|bench
set -e
want="gcc make pkg-config libunwind-dev libdw-dev libelf-dev libzstd-dev libmicrohttpd-dev libiberty-dev"
case "$1" in
test) want="$want g++ valgrind heaptrack sqlite3 python3 curl clang libclang-rt-14-dev nodejs chromium libjemalloc2 libtcmalloc-minimal4 strace" ;;
# heaptrack-gui: the viewer's load time is compared with it
bench) want="$want valgrind heaptrack heaptrack-gui sqlite3 python3 curl clang libclang-rt-14-dev nodejs chromium" ;;
demo) want="$want" ;;
esac
# the Rust test program: any rustc on PATH (rustup's) will do, else Debian's
if [ "$1" = test ] && ! command -v rustc >/dev/null 2>&1; then want="$want rustc"; fi
missing=""
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	echo "installing missing packages:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	# shellcheck disable=SC2086
	apt-get install -y -qq $missing >&2
else
	echo "missing Debian packages:$missing" >&2
	echo "run: sudo apt-get install -y$missing" >&2
	exit 1
fi
