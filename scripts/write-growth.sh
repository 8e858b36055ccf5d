#!/usr/bin/env bash
# Whether a write's cost grows as writes pile up: one embedded server on
# RECIPES synthetic recipes, COOKS cooks writing as fast as it acknowledges
# (scripts/cluster_writer.py, each editing one recipe of their own over and
# over and forking the catalog's), for WINDOWS windows of SECONDS each, one
# after the other on the same store. Prints, for each window, the writes
# acknowledged, the server's CPU a write and the write p50. A cost that
# grows with the history of the recipes written shows as CPU a write that
# climbs window by window. docs/journal/55-million.md has the runs.
#
#   scripts/write-growth.sh
#   PERF=1 scripts/write-growth.sh    # perf record of the last window, 8 s,
#                                     # into write-growth.perf
#
# Environment (defaults in brackets): RECIPES [2000], COOKS [8],
# WINDOWS [5], SECONDS_EACH [15], BIN [the release build of this tree].
# Installs python3, and perf with PERF=1, from Debian's packages if missing.
set -euo pipefail
cd "$(dirname "$0")/.."

RECIPES=${RECIPES:-2000}
COOKS=${COOKS:-8}
WINDOWS=${WINDOWS:-5}
SECONDS_EACH=${SECONDS_EACH:-15}
for number in RECIPES COOKS WINDOWS SECONDS_EACH; do
    [[ ${!number} =~ ^[1-9][0-9]*$ ]] || { echo "write-growth: $number must be a whole number above 0" >&2; exit 2; }
done

log() { printf 'write-growth: %s\n' "$*" >&2; }
die() {
    log "$*"
    exit 1
}

# shellcheck source=scripts/run-header.sh
source scripts/run-header.sh
# shellcheck source=scripts/install.sh
source scripts/install.sh
command -v python3 >/dev/null || install_packages python3
[[ -z ${PERF:-} ]] || command -v perf >/dev/null || install_packages linux-perf
# shellcheck source=scripts/binary.sh
source scripts/binary.sh
# shellcheck source=scripts/serving.sh
source scripts/serving.sh
forkful_binary
run_header "write-growth" "$bin"
echo "runs:     $WINDOWS windows of $SECONDS_EACH s, $COOKS cooks, $RECIPES recipes"

tmp=$(mktemp -d /tmp/forkful-write-growth.XXXXXX)
server=
cleanup() {
    [[ -z $server ]] || kill "$server" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

"$bin" seed --data "$tmp/store" --synthetic "$RECIPES" >/dev/null
"$bin" query --data "$tmp/store" '[:find ?s :where [_ :recipe/slug ?s]]' |
    sed -n 's/^"\([a-z0-9][a-z0-9-]*\)"$/\1/p' >"$tmp/slugs"
: >"$tmp/server.out"
FORKFUL_LOG=warn "$bin" serve --addr 127.0.0.1:0 --workers 2 --data "$tmp/store" \
    >>"$tmp/server.out" 2>"$tmp/server.err" &
server=$!
base=$(serving_address "$tmp/server.out" "$tmp/server.err" "$server") ||
    die "the server did not serve"
port=${base##*:}

# The server's CPU so far, user and system, in clock ticks.
ticks() { sed 's/^.*) //' "/proc/$server/stat" | awk '{ print $12 + $13 }'; }
hz=$(getconf CLK_TCK)

for ((w = 1; w <= WINDOWS; w++)); do
    before=$(ticks)
    writers=()
    for ((c = 1; c <= COOKS; c++)); do
        python3 scripts/cluster_writer.py --nodes "http://127.0.0.1:$port" --slugs "$tmp/slugs" \
            --rate 0 --seconds "$SECONDS_EACH" --run "w$w-$c" --cook "$tmp/cook-$c.json" \
            --no-lag >"$tmp/writer$c.out" 2>"$tmp/writer$c.err" &
        writers+=($!)
    done
    if [[ -n ${PERF:-} ]] && ((w == WINDOWS)); then
        perf record -F 499 --call-graph dwarf,16384 -p "$server" -o write-growth.perf \
            -- sleep 8 >/dev/null 2>&1
    fi
    for ((c = 1; c <= COOKS; c++)); do
        wait "${writers[c - 1]}" || die "writer $c failed: $(cat "$tmp/writer$c.err")"
    done
    after=$(ticks)
    sed -n 's/^WRITE //p' "$tmp"/writer*.out | sort -g >"$tmp/writes"
    awk -v w="$w" -v cpu=$((after - before)) -v hz="$hz" '{ v[NR] = $1 } END {
        printf "window %d: %d writes, server CPU %.2f ms a write, write p50 %.2f ms\n",
            w, NR, cpu * 1000 / hz / NR, v[int((NR + 1) / 2)] }' "$tmp/writes"
done
