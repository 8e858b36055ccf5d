#!/usr/bin/env bash
# Load-tests the release server on the demo seed with wrk.
#
#   scripts/load.sh                          # the published runs: 30 s each
#   DURATION=5s scripts/load.sh              # a quick check
#   RECIPE=shakshuka WORKERS=4 scripts/load.sh
#
# It builds target/release/forkful, starts `forkful serve --demo` on a free
# port, warms up, then drives it with wrk (installed with apt-get if missing):
#
#   recipe            the recipe page, keep-alive
#   index             the catalog `/`, keep-alive
#   recipe (close)    the recipe page with `Connection: close` (a new
#                     TCP connection per request)
#   recipe (br), index (br)
#                     the same pages with a browser's
#                     `Accept-Encoding: gzip, deflate, br, zstd` (answered
#                     with brotli, compressed once and kept)
#
# and prints req/s, latency percentiles (p50, p99, p99.9), errors (socket
# errors and responses with status >= 400), and the server's peak memory
# (VmHWM). Linux only (/proc).
#
# Environment (defaults in brackets):
#   DURATION     each run's length, in wrk's syntax [30s]
#   CONNECTIONS  open connections [50]
#   THREADS      wrk threads [2]
#   WORKERS      server worker threads [2]
#   RECIPE       the recipe: a slug, or a path starting with /
#                [milk-bread-sourdough-tangzhong, the deepest lineage]
#   WARMUP       warm-up per URL before the runs [2s]
#   READY_TIMEOUT  seconds to wait for the server (it seeds first) [120]

set -euo pipefail

DURATION=${DURATION:-30s}
CONNECTIONS=${CONNECTIONS:-50}
THREADS=${THREADS:-2}
WORKERS=${WORKERS:-2}
RECIPE=${RECIPE:-milk-bread-sourdough-tangzhong}
WARMUP=${WARMUP:-2s}
READY_TIMEOUT=${READY_TIMEOUT:-120}

case $RECIPE in
    /*) recipe_path=$RECIPE ;;
    *) recipe_path=/recipes/$RECIPE ;;
esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

log() { printf 'load: %s\n' "$*"; }
die() {
    printf 'load: error: %s\n' "$*" >&2
    exit 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/forkful-load.XXXXXX")
server_pid=

# Whether process $1 exists and is not a zombie.
alive() {
    local state
    state=$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
    [[ -n $state && $state != Z ]]
}

# SIGTERM to the server, then wait for it (SIGKILL after 35 s: actix gives
# requests in flight 30 s). Sets server_status.
server_status=
stop_server() {
    local pid=$server_pid i
    server_pid=
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 350; i++)); do
        alive "$pid" || break
        sleep 0.1
    done
    if alive "$pid"; then
        log "the server did not stop within 35 s of SIGTERM; sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    server_status=0
    wait "$pid" 2>/dev/null || server_status=$?
}

cleanup() {
    local rc=$?
    trap - EXIT
    if [[ -n $server_pid ]]; then
        stop_server
        if [[ $rc -ne 0 && -s $tmp/server.err ]]; then
            printf 'load: the server'\''s last log lines:\n' >&2
            tail -n 20 "$tmp/server.err" >&2
        fi
    fi
    rm -rf "$tmp"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- what this runs on, so the figures can be quoted ------------------------

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ $commit != unknown && -n $(git status --porcelain --untracked-files=no 2>/dev/null) ]]; then
    commit="$commit (working tree has uncommitted changes)"
fi
cpus=$(nproc)
model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
echo "== forkful load test"
echo "date:     $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "commit:   $commit"
echo "machine:  $cpus CPUs, ${model:-unknown model}, Linux $(uname -r)"

# --- wrk ---------------------------------------------------------------------

if ! command -v wrk >/dev/null; then
    if [[ $(id -u) -eq 0 ]]; then
        apt=(env DEBIAN_FRONTEND=noninteractive apt-get)
    elif command -v sudo >/dev/null; then
        apt=(sudo DEBIAN_FRONTEND=noninteractive apt-get)
    else
        die "wrk is not installed, and installing it needs root or sudo (apt-get install wrk)"
    fi
    log "wrk is not installed; ${apt[*]} install -y wrk"
    if ! "${apt[@]}" install -y -q wrk >"$tmp/apt.log" 2>&1; then
        log "the install failed; apt-get update, then again"
        if ! { "${apt[@]}" update -q && "${apt[@]}" install -y -q wrk; } >>"$tmp/apt.log" 2>&1; then
            tail -n 20 "$tmp/apt.log" >&2
            die "could not install wrk"
        fi
    fi
    command -v wrk >/dev/null || die "wrk is still not on PATH after installing it"
fi
echo "wrk:      $( (wrk -v 2>&1 || true) | head -n 1)"
echo "runs:     $DURATION each, $CONNECTIONS connections, $THREADS wrk threads, $WORKERS server workers"
echo "note:     wrk and the server share the machine's $cpus CPUs, so the server gets"
echo "          less than all of them; figures are lower than with a separate client"
echo "note:     the server's request logs are off during the runs (FORKFUL_LOG=warn)"
echo

# --- build and start the server ---------------------------------------------

log "building (cargo build --release --locked)"
cargo build --release --locked --quiet
bin=${CARGO_TARGET_DIR:-$root/target}/release/forkful
[[ -x $bin ]] || die "no binary at $bin"

log "starting $bin serve --demo (seeds the demo first)"
FORKFUL_LOG=warn "$bin" serve --demo --addr 127.0.0.1:0 --workers "$WORKERS" \
    >"$tmp/server.out" 2>"$tmp/server.err" &
server_pid=$!
started=$SECONDS

port=
deadline=$((started + READY_TIMEOUT))
while :; do
    port=$(sed -n 's|^forkful: serving http://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$tmp/server.out")
    [[ -z $port ]] || break
    alive "$server_pid" || die "the server exited before serving: $(cat "$tmp/server.out" "$tmp/server.err")"
    ((SECONDS < deadline)) || die "the server did not start serving within $READY_TIMEOUT s"
    sleep 0.2
done
base=http://127.0.0.1:$port
grep '^forkful: seeded' "$tmp/server.out" | sed 's/^/load: /' || true
log "serving $base (pid $server_pid, ready after $((SECONDS - started)) s)"

kib_to_mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
vm() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$server_pid/status"; }
hwm_ready=$(vm VmHWM)

# The status code of GET $1 (a path), with bash's /dev/tcp: no curl needed.
http_status() {
    local fd line
    exec {fd}<>"/dev/tcp/127.0.0.1/$port"
    printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\n\r\n' "$1" "$port" >&"$fd"
    IFS= read -r line <&"$fd" || true
    exec {fd}>&-
    line=${line%$'\r'}
    line=${line#HTTP/* }
    echo "${line%% *}"
}

# The Content-Encoding of GET $1 asked for with a browser's Accept-Encoding.
BROWSER_ENCODINGS='gzip, deflate, br, zstd'
http_encoding() {
    local fd line coding=
    exec {fd}<>"/dev/tcp/127.0.0.1/$port"
    printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nAccept-Encoding: %s\r\nConnection: close\r\n\r\n' \
        "$1" "$port" "$BROWSER_ENCODINGS" >&"$fd"
    while IFS= read -r line <&"$fd"; do
        line=${line%$'\r'}
        [[ -n $line ]] || break
        if [[ ${line,,} == content-encoding:* ]]; then
            coding=${line#*: }
        fi
    done
    exec {fd}>&-
    echo "$coding"
}

# wrk counts only statuses >= 400 as errors, so make sure each page is a 200
# (not a redirect) before loading it, and that a browser gets it in brotli.
for path in "$recipe_path" /; do
    status=$(http_status "$path")
    [[ $status == 200 ]] || die "GET $path answered ${status:-nothing}, not 200"
    coding=$(http_encoding "$path")
    [[ $coding == br ]] || die "GET $path with a browser's Accept-Encoding came as '${coding:-identity}', not br"
done

# --- the runs ----------------------------------------------------------------

# wrk's done() hook: one machine-readable line; latency is in microseconds.
lua=$tmp/stats.lua
cat >"$lua" <<'LUA'
done = function(summary, latency, requests)
  local e = summary.errors
  local seconds = summary.duration / 1e6
  io.write(string.format(
    "STATS requests=%d seconds=%.3f rps=%.1f bytes=%d p50=%.3f p99=%.3f p999=%.3f " ..
    "connect=%d read=%d write=%d status=%d timeout=%d\n",
    summary.requests, seconds, summary.requests / seconds, summary.bytes,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    latency:percentile(99.9) / 1000,
    e.connect, e.read, e.write, e.status, e.timeout))
end
LUA

for path in "$recipe_path" /; do
    log "warming up $path for $WARMUP"
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" "$base$path" >/dev/null
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -H "Accept-Encoding: $BROWSER_ENCODINGS" \
        "$base$path" >/dev/null
done
echo

summary=()
# run NAME PATH [wrk options...]
run() {
    local name=$1 path=$2 out stats
    shift 2
    echo "== $name: GET $path, $DURATION, $CONNECTIONS connections${*:+, $*}"
    out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$lua" "$@" "$base$path")
    grep -v '^STATS ' <<<"$out" || true
    stats=$(grep '^STATS ' <<<"$out") || die "wrk printed no statistics for $name"
    summary+=("$(awk -v name="$name" '{
        for (i = 2; i <= NF; i++) { split($i, kv, "="); s[kv[1]] = kv[2] }
        errors = s["connect"] + s["read"] + s["write"] + s["status"] + s["timeout"]
        detail = errors ? sprintf(" (connect %d, read %d, write %d, status %d, timeout %d)",
            s["connect"], s["read"], s["write"], s["status"], s["timeout"]) : ""
        printf "%-16s %10.0f %9.2f %9.2f %9.2f %7d%s", name, s["rps"], s["p50"], s["p99"],
            s["p999"], errors, detail
    }' <<<"$stats")")
    awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); s[kv[1]] = kv[2] }
        printf "   %d requests in %.1f s, %.1f KiB per response\n\n",
            s["requests"], s["seconds"], s["requests"] ? s["bytes"] / s["requests"] / 1024 : 0
    }' <<<"$stats"
}

run "recipe" "$recipe_path"
run "index" /
run "recipe (close)" "$recipe_path" -H 'Connection: close'
run "recipe (br)" "$recipe_path" -H "Accept-Encoding: $BROWSER_ENCODINGS"
run "index (br)" / -H "Accept-Encoding: $BROWSER_ENCODINGS"

alive "$server_pid" || die "the server died during the runs"
hwm=$(vm VmHWM)
rss=$(vm VmRSS)

# --- summary -----------------------------------------------------------------

echo "== summary: commit $commit; $cpus CPUs, ${model:-unknown model}; wrk shares the CPUs"
echo "   $DURATION per run, $CONNECTIONS connections, $THREADS wrk threads, $WORKERS server workers, latencies in ms"
printf '%-16s %10s %9s %9s %9s %7s\n' run req/s p50 p99 p99.9 errors
printf '%s\n' "${summary[@]}"
echo "errors: socket errors (connect/read/write/timeout) plus responses with status >= 400"
echo
echo "server peak memory (VmHWM): $(kib_to_mib "$hwm") MiB after the runs" \
    "($(kib_to_mib "$hwm_ready") MiB once seeded and serving, before any load);" \
    "resident now (VmRSS): $(kib_to_mib "$rss") MiB"

log "stopping the server (SIGTERM)"
stop_server
grep '^forkful: stopped' "$tmp/server.out" | sed 's/^/load: /' || true
[[ $server_status -eq 0 ]] || die "the server exited with status $server_status"
