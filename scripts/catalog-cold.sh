#!/usr/bin/env bash
# Catalog and tag pages read cold, two builds side by side: each round
# serves DATA with build A and build B (a fresh server each time; A first
# in odd rounds, B first in even ones, so neither always meets the files
# first), waits until it is idle, and walks PAGES pages of the catalog in
# title order and PAGES pages of a tag, from page 1 by each page's "next"
# link. Every page lists recipes no page before it read, so each is the
# server's first read of its recipes (the files may be in the kernel's
# cache after the first server). For each page it records the store's time
# the server reports (`Server-Timing: store;dur=`) and curl's, from the
# connection made to the first byte back (scale.sh says why).
#
#   scripts/catalog-cold.sh DATA BIN_A BIN_B [ROUNDS] [PAGES] [TAG]
#
# DATA is a seeded store (`forkful seed --data DATA --synthetic N`).
# ROUNDS defaults to 3, PAGES to 10, TAG to `vegan`. The last lines give,
# per build and kind, the median and range over every page of every round.
# With DROP_CACHES=1 (root only) the kernel's page cache is dropped before
# each server starts, so that its pages' reads go to the disk, not to
# what the round before left in memory.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/serving.sh
source scripts/serving.sh
# shellcheck source=scripts/medians.sh
source scripts/medians.sh

data=${1:?usage: scripts/catalog-cold.sh DATA BIN_A BIN_B [ROUNDS] [PAGES] [TAG]}
bins=("${2:?build A}" "${3:?build B}")
rounds=${4:-3}
pages=${5:-10}
tag=${6:-vegan}
drop_caches=${DROP_CACHES:-0}
if [ "$drop_caches" = 1 ] && [ ! -w /proc/sys/vm/drop_caches ]; then
    echo "DROP_CACHES=1 needs root: /proc/sys/vm/drop_caches is not writable" >&2
    exit 1
fi
builds_in_turn catalog-cold "$data, $rounds rounds of $pages pages, DROP_CACHES=$drop_caches" "${bins[@]}"

# Walks `$pages` pages from path `$2`, recording each under kind `$1`.
walk() {
    local kind=$1 path=$2 n status connected first store next
    for n in $(seq 1 "$pages"); do
        read -r status connected first < <(curl -s -D "$work/headers" -o "$work/page" \
            -H 'Accept-Encoding: gzip, deflate, br, zstd' --compressed \
            -w '%{http_code} %{time_connect} %{time_starttransfer}\n' "$address$path")
        [ "$status" = 200 ] || { echo "GET $path answered $status" >&2; exit 1; }
        store=$(sed -n 's/^[Ss]erver-[Tt]iming: store;dur=\([0-9.]*\).*/\1/p' "$work/headers")
        [ -n "$store" ] || { echo "GET $path: no store time in Server-Timing" >&2; exit 1; }
        echo "$name|$kind store|$store" >>"$work/times"
        echo "$name|$kind first byte|$(awk -v a="$connected" -v b="$first" 'BEGIN { printf "%.3f", (b - a) * 1000 }')" >>"$work/times"
        # The last page has no "next" link: grep finds nothing.
        next=$(grep -o 'rel="next" href="[^"]*"' "$work/page" | head -1 | sed 's/.*href="//; s/"$//; s/&amp;/\&/g' || true)
        [ -n "$next" ] || break
        path=$next
    done
}

: >"$work/times"
for round in $(seq 1 "$rounds"); do
    order=(0 1)
    ((round % 2)) || order=(1 0)
    for b in "${order[@]}"; do
        name=$([ "$b" = 0 ] && echo A || echo B)
        if [ "$drop_caches" = 1 ]; then
            sync
            echo 3 >/proc/sys/vm/drop_caches
        fi
        serve_store "${bins[$b]}" "$data" "$work"
        server_settled "$server"
        walk catalog /
        walk tag "/tags/$tag"
        echo "round $round $name: done"
        stop_store
    done
done

echo "A = ${bins[0]}"
echo "B = ${bins[1]}"
echo "build|page|time: median (min-max) ms over every page of every round"
medians "$work/times" 3 pages
rm -rf "$work"
