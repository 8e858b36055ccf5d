#!/usr/bin/env bash
# A search engine's pass over a catalog: every recipe page fetched once, as
# a crawler does, from a freshly started server, with 50 connections and a
# crawler's Accept-Encoding (gzip, br); prints pages per second, latency
# percentiles, errors and the server's peak RSS. Then a mixed run on the
# same server (MIXED, default 30s): recipe pages across the whole catalog,
# the index and searches, as browsers send them.
#
#   scripts/crawl.sh                      # seeds 100,000 full recipes first (2 min)
#   RECIPES=10000 scripts/crawl.sh        # a smaller catalog
#   DATA=./big scripts/crawl.sh           # a store already seeded (it is opened
#                                         # and served, not changed by the pass)
#
# The recipe addresses come from the sitemap (its index, then each file),
# read from a first server that also builds the search index if the store
# has none (as a site's first start does) and is then stopped, so the pass
# meets the second server's caches cold. Installs wrk and curl from Debian if missing.
#
# Environment (defaults in brackets): RECIPES [100000], DATA [a temporary
# store seeded with RECIPES full recipes, depth 12, fanout 3], SAMPLE [every
# page; N crawls N of them; either way in a random order, the same each run],
# MIXED [30s; 0 skips the mixed run],
# CONNECTIONS [50], THREADS [2], WORKERS [2], READY_TIMEOUT [600], BIN [the
# release build of this tree; another binary to compare one build with
# another, each on a fresh copy of the same store: sled tidies its files
# while it serves, so a store served once is not the store it was].
set -euo pipefail

RECIPES=${RECIPES:-100000}
CONNECTIONS=${CONNECTIONS:-50}
THREADS=${THREADS:-2}
WORKERS=${WORKERS:-2}
READY_TIMEOUT=${READY_TIMEOUT:-600}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
log() { printf 'crawl: %s\n' "$*"; }
die() {
    printf 'crawl: error: %s\n' "$*" >&2
    exit 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/forkful-crawl.XXXXXX")
server_pid=
stop_server() {
    [[ -n $server_pid ]] || return 0
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
}
cleanup() {
    local rc=$?
    trap - EXIT
    stop_server
    rm -rf "$tmp"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# shellcheck source=scripts/install.sh
source scripts/install.sh
for tool in wrk curl; do
    command -v "$tool" >/dev/null || install_packages "$tool"
    command -v "$tool" >/dev/null || die "could not install $tool"
done

# shellcheck source=scripts/binary.sh
source scripts/binary.sh
# shellcheck source=scripts/serving.sh
source scripts/serving.sh
forkful_binary

data=${DATA:-}
if [[ -z $data ]]; then
    data=$tmp/store
    log "seeding $RECIPES full recipes into $data"
    "$bin" seed --data "$data" --synthetic "$RECIPES" --depth 12 --fanout 3 >/dev/null
fi

# start: serve $data; sets server_pid and base.
start() {
    # Made here: the server's shell may not have opened it yet when the
    # loop below first reads it.
    : >"$tmp/server.out"
    FORKFUL_LOG=warn "$bin" serve --data "$data" --addr 127.0.0.1:0 --workers "$WORKERS" \
        >>"$tmp/server.out" 2>"$tmp/server.err" &
    server_pid=$!
    base=$(serving_address "$tmp/server.out" "$tmp/server.err" "$server_pid") ||
        die "the server did not serve"
}

log "reading the recipe addresses from the sitemap"
start
curl -sS --fail "$base/sitemap.xml" | grep -o '<loc>[^<]*</loc>' | sed 's|<loc>[^/]*//[^/]*||; s|</loc>||' \
    >"$tmp/files"
: >"$tmp/paths"
while read -r file; do
    curl -sS --fail "$base$file" | grep -o '<loc>[^<]*/recipes/[^<]*</loc>' |
        sed 's|<loc>[^/]*//[^/]*||; s|</loc>||' >>"$tmp/paths"
done <"$tmp/files"
pages=$(wc -l <"$tmp/paths")
((pages > 0)) || die "the sitemap lists no recipe"
# In a random order, the same each run (a fixed random source): a search
# engine meets a catalog's pages scattered, not in the order the store
# keeps them, which the sitemap lists them in (by id, so by creation:
# recipes made together lie together, and a crawl in that order read 1.4x
# the pages a second at 100,000 recipes, docs/journal/55-million.md).
sample=$pages
if [[ -n ${SAMPLE:-} ]]; then
    [[ $SAMPLE =~ ^[0-9]+$ && $SAMPLE -gt 0 ]] || die "SAMPLE must be a positive whole number, not '$SAMPLE'"
    if ((SAMPLE < pages)); then
        sample=$SAMPLE
        log "crawling a sample of $SAMPLE of the $pages recipe pages"
    fi
fi
shuf -n "$sample" --random-source=<(yes forkful) "$tmp/paths" >"$tmp/sample"
mv "$tmp/sample" "$tmp/paths"
pages=$sample
# The search index is derived from the store and kept beside it: a store
# without one (a fresh seed) has it built in the background when first
# served. Built here, on the first server, so that the crawl meets a store
# as a restarted site has it, not a build competing for the cores.
index_started=$SECONDS
while [[ $(curl -s -o /dev/null -w '%{http_code}' "$base/search?q=oil") == 503 ]]; do
    ((SECONDS - index_started < READY_TIMEOUT)) || die "search was not ready within $READY_TIMEOUT s"
    sleep 0.2
done
log "search index ready $((SECONDS - index_started)) s after the sitemap was read"
stop_server
log "$pages recipe pages in $(wc -l <"$tmp/files") sitemap files; restarting the server cold"
start
hwm_ready=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$server_pid/status")

# wrk's done() hook, shared by both runs: one machine-readable line;
# latency in milliseconds.
cat >"$tmp/stats.lua" <<'LUA'
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "STATS requests=%d seconds=%.3f p50=%.3f p99=%.3f p999=%.3f errors=%d status=%d\n",
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, latency:percentile(99.9) / 1000,
    e.connect + e.read + e.write + e.timeout, e.status))
end
LUA

# Each wrk thread takes every THREADS-th address from its own offset and
# stops when it has asked for all of them: every page once.
cat >"$tmp/crawl.lua" <<'LUA'
local paths = {}
for line in io.lines(os.getenv("CRAWL_PATHS")) do paths[#paths + 1] = line end
local threads = tonumber(os.getenv("CRAWL_THREADS"))
local counter = 0
function setup(thread)
  thread:set("offset", counter)
  counter = counter + 1
end
local next_index
function init(args)
  next_index = offset + 1
end
local finished = false
function request()
  local path = paths[next_index]
  if path == nil then
    -- wrk sleeps for its whole duration whatever its threads do: a file
    -- per thread tells the script to stop it (SIGINT) once all are done.
    if not finished then
      finished = true
      local f = io.open(os.getenv("CRAWL_DONE") .. offset, "w")
      f:close()
    end
    path = paths[1]
  end
  next_index = next_index + threads
  return wrk.format("GET", path, { ["Accept-Encoding"] = "gzip, br" })
end
LUA

cat "$tmp/stats.lua" >>"$tmp/crawl.lua"

log "crawling: $CONNECTIONS connections, $THREADS wrk threads, $WORKERS server workers"
CRAWL_PATHS=$tmp/paths CRAWL_THREADS=$THREADS CRAWL_DONE=$tmp/done. \
    wrk -t"$THREADS" -c"$CONNECTIONS" -d3600s --latency -s "$tmp/crawl.lua" "$base" \
    >"$tmp/wrk.out" 2>&1 &
wrk_pid=$!
# Counted with a glob, not find and wc: the loop took 2.7% of the two
# cores the crawl shares with them, 1.0% now (bash and sleep; perf -a).
shopt -s nullglob
while :; do
    done_files=("$tmp"/done.*)
    ((${#done_files[@]} < THREADS)) || break
    kill -0 "$wrk_pid" 2>/dev/null || die "wrk stopped early: $(cat "$tmp/wrk.out")"
    sleep 0.1
done
shopt -u nullglob
kill -INT "$wrk_pid"
wait "$wrk_pid" || true
out=$(cat "$tmp/wrk.out")
stats=$(grep '^STATS ' <<<"$out") || die "wrk printed no statistics: $out"
hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$server_pid/status")
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
# With BIN= the binary may be another commit's: say which binary ran.
build="commit $commit"
[[ -z ${BIN:-} ]] || build="binary $bin (this tree: $commit)"
echo "== crawl: $build, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, wrk on the same CPUs"
awk -v pages="$pages" '{
    for (i = 2; i <= NF; i++) { split($i, kv, "="); s[kv[1]] = kv[2] }
    printf "%d pages in %.1f s: %.0f pages/s (%d requests: a thread done early asks for its first page again until wrk stops)\n",
        pages, s["seconds"], pages / s["seconds"], s["requests"]
    printf "latency p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms; socket errors %d, status >= 400: %d\n",
        s["p50"], s["p99"], s["p999"], s["errors"], s["status"]
}' <<<"$stats"
echo "server peak memory (VmHWM): $((hwm / 1024)) MiB ($((hwm_ready / 1024)) MiB once started)"

# --- then a mixed run on the same server ---------------------------------
# Eight requests in ten a random recipe page of the whole catalog, one the
# index, one a search for a common word; a browser's Accept-Encoding.
cat >"$tmp/mixed.lua" <<'LUA'
local paths = {}
for line in io.lines(os.getenv("CRAWL_PATHS")) do paths[#paths + 1] = line end
local words = { "oil", "rice", "eggs", "spinach", "butter", "stock", "flour", "feta" }
local headers = { ["Accept-Encoding"] = "gzip, deflate, br, zstd" }
function request()
  local roll = math.random(10)
  local path
  if roll == 1 then
    path = "/"
  elseif roll == 2 then
    path = "/search?q=" .. words[math.random(#words)]
  else
    path = paths[math.random(#paths)]
  end
  return wrk.format("GET", path, headers)
end
LUA
cat "$tmp/stats.lua" >>"$tmp/mixed.lua"
MIXED=${MIXED:-30s}
[[ $MIXED != 0 ]] || exit 0
log "mixed run: $MIXED, $CONNECTIONS connections (recipe pages across the catalog, the index, search)"
out=$(CRAWL_PATHS=$tmp/paths wrk -t"$THREADS" -c"$CONNECTIONS" -d"$MIXED" --latency \
    -s "$tmp/mixed.lua" "$base")
stats=$(grep '^STATS ' <<<"$out") || die "wrk printed no statistics: $out"
hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$server_pid/status")
awk '{
    for (i = 2; i <= NF; i++) { split($i, kv, "="); s[kv[1]] = kv[2] }
    printf "mixed: %d requests in %.1f s: %.0f req/s; p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms; socket errors %d, status >= 400: %d\n",
        s["requests"], s["seconds"], s["requests"] / s["seconds"], s["p50"], s["p99"], s["p999"],
        s["errors"], s["status"]
}' <<<"$stats"
echo "server peak memory (VmHWM) after both: $((hwm / 1024)) MiB"
