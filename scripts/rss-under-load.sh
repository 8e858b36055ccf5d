#!/usr/bin/env bash
# The demo server's resident memory (VmRSS) after each of a row of loads,
# with wrk (installed if missing), to see whether it levels off:
#
#   scripts/rss-under-load.sh [BIN]
#
# BIN serves the demo [the release build of this tree]; then 3 x 10 s of
# searches never asked before (50 connections), then 6 x 10 s of kept
# pages (a history page, the feed, the history again), and nothing scrapes
# /metrics. It prints each load's requests per second and VmRSS after it.
# Linux only (/proc).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=scripts/install.sh
source scripts/install.sh
# shellcheck source=scripts/serving.sh
source scripts/serving.sh
command -v wrk >/dev/null || install_packages wrk
if [[ -n ${1:-} ]]; then
    bin=$1
else
    cargo build --release --locked >&2
    bin=$root/target/release/forkful
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/forkful-rss.XXXXXX")
FORKFUL_LOG=warn "$bin" serve --demo --addr 127.0.0.1:0 --workers 2 >"$dir/out" 2>"$dir/err" &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
base=$(serving_address "$dir/out" "$dir/err" "$pid")
port=${base##*:}
rss() { awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' "/proc/$pid/status"; }
rate() { awk '/Requests\/sec/ { printf "%.0f", $2 }'; }
echo "binary: $bin; $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
echo "serving:          $(rss) MiB"
for i in 1 2 3; do
    echo "searches $i:       $(wrk -t1 -c50 -d10s -s scripts/new-searches.lua "http://127.0.0.1:$port/" | rate) req/s, $(rss) MiB"
done
for path in /recipes/shakshuka/history /recipes/shakshuka/history /feed.xml /feed.xml \
    /recipes/shakshuka/history /recipes/shakshuka/history; do
    printf '%-17s %s req/s, %s MiB\n' "$path:" \
        "$(wrk -t2 -c50 -d10s "http://127.0.0.1:$port$path" | rate)" "$(rss)"
done
