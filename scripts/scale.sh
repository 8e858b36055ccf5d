#!/usr/bin/env bash
# A store at full size, as a new user meets it: seeds N full synthetic
# recipes (default 100,000) into a fresh directory, exports it and imports
# the export into another, then serves the seeded store and fetches the
# catalog, the deepest recipe, a search (once its index is built: timed)
# and the sitemap. Prints, for each
# step, the wall time and peak RSS, and the size on disk of each store
# beside its export file.
#
#   scripts/scale.sh [N]            (FORKFUL_SCALE_DIR keeps the stores)
#   BIN=/path/to/forkful scripts/scale.sh [N]   (another build, to compare
#                                     two: run each in turn, interleaved)
#
# Installs GNU time from Debian's packages if it is missing. Takes several
# minutes at 100,000 recipes on a 2-core machine; docs/BENCHMARKING.md has
# the current figures, docs/journal/ every run.
set -euo pipefail
cd "$(dirname "$0")/.."

recipes=${1:-100000}
work=${FORKFUL_SCALE_DIR:-$(mktemp -d /tmp/forkful-scale.XXXXXX)}
mkdir -p "$work"
rm -rf "$work/store" "$work/imported" "$work/export.edn"

# shellcheck source=scripts/measure.sh
source scripts/measure.sh
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
for store in store imported; do
    size=$(mib "$work/$store")
    printf '%-8s %8d MiB on disk, %s x the export (%d MiB)\n' "$store" "$size" \
        "$(awk -v s="$size" -v e="$export_mib" 'BEGIN { printf "%.1f", s / (e ? e : 1) }')" "$export_mib"
done

# Serve the seeded store and read the pages a visitor and a crawler read.
# Made first: the loop below may read it before the server's shell opens it.
: >"$work/serve.out"
"$bin" serve --data "$work/store" --addr 127.0.0.1:0 >>"$work/serve.out" 2>"$work/serve.err" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
address=
for _ in $(seq 1 600); do
    address=$(sed -n 's/^forkful: serving //p' "$work/serve.out")
    [ -n "$address" ] && break
    sleep 0.1
done
[ -n "$address" ] || { echo "the server did not start:"; cat "$work/serve.err"; exit 1; }

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

# The deepest recipe of the first tree is recipe `depth` (see synthetic.rs).
for path in / /recipes/synthetic-12 '/search?q=golden' /sitemap.xml; do
    read -r status seconds bytes < <(curl -s -o /dev/null \
        -H 'Accept-Encoding: gzip, deflate, br, zstd' \
        -w '%{http_code} %{time_total} %{size_download}\n' "$address$path")
    [ "$status" = 200 ] || { echo "GET $path answered $status"; exit 1; }
    printf 'GET %-22s %s  %7.1f ms  %8d bytes (first request)\n' "$path" "$status" \
        "$(awk -v s="$seconds" 'BEGIN { print s * 1000 }')" "$bytes"
done
printf 'server   peak RSS %6d MiB\n' $(($(awk '/VmHWM/ { print $2 }' /proc/$server/status) / 1024))
