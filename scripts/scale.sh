#!/usr/bin/env bash
# A store at full size, as a new user meets it: seeds N full synthetic
# recipes (default 100,000) into a fresh directory, exports it and imports
# the export into another, then serves the seeded store and fetches, each
# once and cold, the catalog, the deepest recipe, a tag, the sitemap index,
# its last file and a common word's search (once its index is built:
# timed), and crawls a sample of the recipe pages (scripts/crawl.sh).
# Prints, for each step, the wall time and peak RSS, and the size on disk of
# each store beside its export file; the last line, `SCALE ...`, holds them
# all for scripts/scale-chart.py.
#
#   scripts/scale.sh [N]            (FORKFUL_SCALE_DIR keeps the stores)
#   BIN=/path/to/forkful scripts/scale.sh [N]   (another build, to compare
#                                     two: run each in turn, interleaved)
#   CRAWL=200000 scripts/scale.sh [N]   (the crawl's sample [200,000, or
#                                     every page of a smaller catalog];
#                                     CRAWL=0 skips it)
#
# A cold page's time is the server's: curl's time from the connection made
# (`time_connect`, stamped before the request is sent) to the first byte
# back. Not from `time_pretransfer`: curl may stamp that only after the
# response has begun to arrive when it is short of CPU (curl's own tests
# allow it), and a cold page then read 0.01 ms.
#
# Installs GNU time from Debian's packages if it is missing. Takes several
# minutes at 100,000 recipes on a 2-core machine, some 20 at 1,000,000;
# docs/BENCHMARKING.md has the current figures, docs/journal/ every run.
set -euo pipefail
cd "$(dirname "$0")/.."

recipes=${1:-100000}
work=${FORKFUL_SCALE_DIR:-$(mktemp -d /tmp/forkful-scale.XXXXXX)}
mkdir -p "$work"
rm -rf "$work/store" "$work/imported" "$work/export.edn"

# shellcheck source=scripts/measure.sh
source scripts/measure.sh
# shellcheck source=scripts/serving.sh
source scripts/serving.sh
if [ -n "${BIN:-}" ]; then
    bin=$BIN
    [ -x "$bin" ] || { echo "BIN=$bin is not an executable"; exit 1; }
else
    cargo build --release --quiet
    bin=$PWD/target/release/forkful
fi

mib() { du -sm "$1" | cut -f1; }

echo "forkful scale: $recipes full recipes, depth 12, fanout 3, in $work"
echo "build: $bin ($("$bin" --version 2>/dev/null || echo forkful)), $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
measure seed "$bin" seed --data "$work/store" --synthetic "$recipes" --depth 12 --fanout 3
measure export "$bin" export --data "$work/store" "$work/export.edn"
measure import "$bin" import --data "$work/imported" "$work/export.edn"

export_mib=$(mib "$work/export.edn")
declare -A size_mib
for store in store imported; do
    size=$(mib "$work/$store")
    size_mib[$store]=$size
    printf '%-8s %8d MiB on disk, %s x the export (%d MiB)\n' "$store" "$size" \
        "$(awk -v s="$size" -v e="$export_mib" 'BEGIN { printf "%.1f", s / (e ? e : 1) }')" "$export_mib"
done

# Serve the seeded store and read the pages a visitor and a crawler read.
# Made first: the loop below may read it before the server's shell opens it.
: >"$work/serve.out"
"$bin" serve --data "$work/store" --addr 127.0.0.1:0 >>"$work/serve.out" 2>"$work/serve.err" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
address=$(serving_address "$work/serve.out" "$work/serve.err" "$server")

# Search answers 503 until the server has built its index from the store
# (in the background, from start): how long that takes is timed first.
started=$(date +%s.%N)
for _ in $(seq 1 3000); do
    status=$(curl -s -o /dev/null -w '%{http_code}' "$address/search?q=golden")
    [ "$status" != 503 ] && break
    sleep 0.1
done
[ "$status" = 200 ] || { echo "GET /search answered $status"; exit 1; }
printf 'search   index built and answering %.1f s after the server served\n' \
    "$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"

# Each page asked once, cold: the server's time from the connection made
# to the first byte back. The deepest recipe of the first tree is recipe
# `depth` (see synthetic.rs); the last sitemap file, the one furthest into
# the catalog, is read from the index once the index was timed.
declare -A cold
time_cold() {
    local path=$1 status connected first bytes
    read -r status connected first bytes < <(curl -s -o /dev/null \
        -H 'Accept-Encoding: gzip, deflate, br, zstd' \
        -w '%{http_code} %{time_connect} %{time_starttransfer} %{size_download}\n' "$address$path")
    [ "$status" = 200 ] || { echo "GET $path answered $status"; exit 1; }
    cold[$path]=$(awk -v a="$connected" -v b="$first" 'BEGIN { printf "%.2f", (b - a) * 1000 }')
    printf 'GET %-22s %s  %7s ms  %8d bytes (first request, server time)\n' "$path" "$status" \
        "${cold[$path]}" "$bytes"
}
for path in /sitemap.xml / /recipes/synthetic-12 /tags/vegan '/search?q=oil'; do
    time_cold "$path"
done
files=$(curl -s "$address/sitemap.xml" | grep -c '<sitemap>')
time_cold "/sitemaps/$files.xml"
server_mib=$(($(awk '/VmHWM/ { print $2 }' /proc/$server/status) / 1024))
printf 'server   peak RSS %6d MiB\n' "$server_mib"
kill "$server"
wait "$server" 2>/dev/null || true
trap - EXIT

crawl_rate=- crawl_p99=- crawl_mib=-
sample=${CRAWL:-200000}
if [ "$sample" != 0 ]; then
    # On a copy: sled tidies its files while it serves, and the store's
    # size above is the seed's.
    rm -rf "$work/crawled"
    cp -r "$work/store" "$work/crawled"
    DATA=$work/crawled SAMPLE=$sample MIXED=0 BIN=$bin scripts/crawl.sh | tee "$work/crawl.out"
    crawl_rate=$(sed -n 's/.*s: \([0-9]*\) pages\/s.*/\1/p' "$work/crawl.out")
    crawl_p99=$(sed -n 's/.*p99 \([0-9.]*\) ms,.*/\1/p' "$work/crawl.out" | head -1)
    crawl_mib=$(sed -n 's/^server peak memory (VmHWM): \([0-9]*\) MiB.*/\1/p' "$work/crawl.out")
    rm -rf "$work/crawled"
fi

# One line for scripts/scale-chart.py: seconds and MiB of each step, MiB
# on disk, the crawl, and each cold page's milliseconds.
read -r seed_s seed_kib < <(awk '{ print $1, $2 }' "$work/seed.time")
read -r import_s import_kib < <(awk '{ print $1, $2 }' "$work/import.time")
echo "SCALE recipes=$recipes seed_s=$seed_s seed_mib=$((seed_kib / 1024))" \
    "import_s=$import_s import_mib=$((import_kib / 1024))" \
    "store_mib=${size_mib[store]} export_mib=$export_mib" \
    "crawl_pages_s=$crawl_rate crawl_p99_ms=$crawl_p99 crawl_mib=$crawl_mib server_mib=$server_mib" \
    "catalog_ms=${cold[/]} recipe_ms=${cold[/recipes/synthetic-12]} tag_ms=${cold[/tags/vegan]}" \
    "sitemap_ms=${cold[/sitemap.xml]} sitemap_file_ms=${cold[/sitemaps/$files.xml]} search_ms=${cold[/search?q=oil]}"
