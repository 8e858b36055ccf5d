#!/usr/bin/env bash
# Searches on a served store, two builds side by side: each round serves
# DATA with build A and then build B (a fresh server each time), waits for
# its search index, and asks each query once cold (the server's first
# search of it) and then again in other spellings (the page cache keeps a
# page by its address, so each is searched again), printing the server's
# time for each: curl's time from the connection made to the first byte
# back (scale.sh says why not from the request sent).
#
#   scripts/search-cold.sh DATA BIN_A BIN_B [ROUNDS] [QUERY...]
#
# DATA is a seeded store (`forkful seed --data DATA --synthetic N`); the
# first server builds its index, which the others read if they share its
# format. Each server is timed once it is idle: once what it reads ahead
# when it starts is read. ROUNDS defaults to 3; the queries to `oil`, a word of about a
# third of the synthetic recipes, `golden`, a word of every one, and
# `olive oil`. The last lines give, per build and query, the median and
# range over the rounds, cold and again.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/serving.sh
source scripts/serving.sh
# shellcheck source=scripts/medians.sh
source scripts/medians.sh

data=${1:?usage: scripts/search-cold.sh DATA BIN_A BIN_B [ROUNDS] [QUERY...]}
bins=("${2:?build A}" "${3:?build B}")
rounds=${4:-3}
shift 4 2>/dev/null || shift $#
queries=("$@")
[ ${#queries[@]} -gt 0 ] || queries=(oil golden "olive oil")
again=10
builds_in_turn search-cold "$data, $rounds rounds" "${bins[@]}"

# Starts `$1` on DATA (`serve_store`: sets `server` and `address`) and
# waits for its search index.
serve() {
    serve_store "$1" "$data" "$work"
    # A word no recipe has: answered once the index is built, without
    # reading any recipe's postings.
    local status
    for _ in $(seq 1 6000); do
        status=$(curl -s -o /dev/null -w '%{http_code}' "$address/search?q=zqxjv")
        [ "$status" != 503 ] && break
        sleep 0.1
    done
    [ "$status" = 200 ] || { echo "GET /search answered $status"; exit 1; }
}

# The server's milliseconds for GET /search?q=$1, which must answer 200.
server_ms() {
    local status connected first
    read -r status connected first < <(curl -s -o /dev/null -G --data-urlencode "q=$1" \
        -H 'Accept-Encoding: gzip, deflate, br, zstd' \
        -w '%{http_code} %{time_connect} %{time_starttransfer}\n' "$address/search")
    [ "$status" = 200 ] || { echo "GET /search?q=$1 answered $status" >&2; exit 1; }
    awk -v a="$connected" -v b="$first" 'BEGIN { printf "%.2f", (b - a) * 1000 }'
}

# `$1` in spelling `$2`: its letters' case flipped by the low bits of `$2`,
# after as many full stops as its high bits say. A search reads neither,
# but the page cache keeps a page under the query as typed (spaces
# trimmed): each spelling is searched.
spelled() {
    local word=$1 n=$2 out= i c letters=${#1}
    ((letters > 16)) && letters=16
    for ((i = 0; i < n >> letters; i++)); do out+='.'; done
    for ((i = 0; i < ${#word}; i++)); do
        c=${word:i:1}
        if ((i < letters && (n >> i) & 1)); then c=${c^^}; fi
        out+=$c
    done
    printf '%s' "$out"
}

: >"$work/times"
for round in $(seq 1 "$rounds"); do
    for b in 0 1; do
        name=$([ "$b" = 0 ] && echo A || echo B)
        serve "${bins[$b]}"
        server_settled "$server"
        for query in "${queries[@]}"; do
            cold=$(server_ms "$query")
            echo "$name|$query|cold|$cold" >>"$work/times"
            warm=()
            for n in $(seq 1 "$again"); do
                ms=$(server_ms "$(spelled "$query" "$n")")
                warm+=("$ms")
                echo "$name|$query|again|$ms" >>"$work/times"
            done
            printf 'round %d %s %-12s cold %7s ms, again %s ms\n' "$round" "$name" "$query" \
                "$cold" "$(printf '%s\n' "${warm[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')"
        done
        stop_store
    done
done

echo "A = ${bins[0]}"
echo "B = ${bins[1]}"
echo "build|query|kind: median (min-max) ms over every run"
medians "$work/times" 2 runs
rm -rf "$work"
