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
#   every page type of the demo, keep-alive, as asked with no
#   Accept-Encoding and as a browser asks (`gzip, deflate, br, zstd`,
#   answered with brotli, compressed once and kept):
#     recipe    the recipe page         catalog   `/`
#     tag       /tags/vegan             search    /search?q=pancake
#     history   shakshuka's history     diff      shakshuka's versions 1 to 11
#     forks     the pancakes' 21 forks  cook      a cook's page
#     feed      /feed.xml               sitemap   /sitemaps/1.xml
#   recipe (close)    the recipe page with `Connection: close` (a new
#                     TCP connection per request)
#   recipe (hammered) the recipe page (browser's header, 10 connections)
#                     while another wrk hammers /search with queries never
#                     asked before and the sitemap with 50 connections
#
# and, with NGINX=1, each page type's two runs each right after the same
# run against nginx serving the very bytes forkful sent (saved with curl,
# plain and as a browser gets them, served as static files with
# brotli_static), checked first to answer 200 with the same
# Content-Encoding as forkful's. PAGES=recipe,catalog runs only those.
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
#   NGINX        1: also serve the same bytes from nginx (Debian's, with its
#                brotli_static module, installed if missing), each run
#                interleaved with forkful's, and print the ratio; 0: skip [1]
#   BIN          the server binary [the release build of this tree]; another
#                binary to compare one build with another in turn
#   PAGES        the page types to run, by name, comma-separated [every one]

set -euo pipefail

DURATION=${DURATION:-30s}
CONNECTIONS=${CONNECTIONS:-50}
THREADS=${THREADS:-2}
WORKERS=${WORKERS:-2}
RECIPE=${RECIPE:-milk-bread-sourdough-tangzhong}
WARMUP=${WARMUP:-2s}
READY_TIMEOUT=${READY_TIMEOUT:-120}
NGINX=${NGINX:-1}

case $RECIPE in
    /*) recipe_path=$RECIPE ;;
    *) recipe_path=/recipes/$RECIPE ;;
esac

# Every page type of the demo: its name, and the path loaded.
all_pages=(
    "recipe $recipe_path"
    "catalog /"
    "tag /tags/vegan"
    "search /search?q=pancake"
    "history /recipes/shakshuka/history"
    "diff /recipes/shakshuka/diff?from=1&to=11"
    "forks /recipes/buttermilk-pancakes/forks"
    "cook /cooks/mateo"
    "feed /feed.xml"
    "sitemap /sitemaps/1.xml"
)
pages=()
for page in "${all_pages[@]}"; do
    if [[ -z ${PAGES:-} || ,$PAGES, == *,${page%% *},* ]]; then
        pages+=("$page")
    fi
done
((${#pages[@]})) || { echo "load: error: no page type in PAGES=$PAGES" >&2; exit 1; }

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

nginx_pid=
nginx_base=
stop_nginx() {
    [[ -n $nginx_pid ]] || return 0
    kill -QUIT "$nginx_pid" 2>/dev/null || true
    wait "$nginx_pid" 2>/dev/null || true
    nginx_pid=
}

cleanup() {
    local rc=$?
    trap - EXIT
    stop_nginx
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

# --- tools: wrk, nginx with its brotli_static module, curl ------------------

# shellcheck source=scripts/install.sh
source scripts/install.sh

command -v wrk >/dev/null || install_packages wrk
command -v wrk >/dev/null || die "wrk is still not on PATH after installing it"
command -v curl >/dev/null || install_packages curl
nginx_module=/usr/share/nginx/modules/ngx_http_brotli_static_module.so
if [[ $NGINX != 0 ]]; then
    command -v nginx >/dev/null || install_packages nginx
    [[ -f $nginx_module ]] || install_packages libnginx-mod-http-brotli-static
    [[ -f $nginx_module ]] || die "no brotli_static module at $nginx_module after installing it"
fi
echo "wrk:      $( (wrk -v 2>&1 || true) | head -n 1)"
echo "runs:     $DURATION each, $CONNECTIONS connections, $THREADS wrk threads, $WORKERS server workers"
echo "note:     wrk and the server share the machine's $cpus CPUs, so the server gets"
echo "          less than all of them; figures are lower than with a separate client"
echo "note:     the server's request logs are off during the runs (FORKFUL_LOG=warn)"
echo

# --- build and start the server ---------------------------------------------

# shellcheck source=scripts/binary.sh
source scripts/binary.sh
# shellcheck source=scripts/serving.sh
source scripts/serving.sh
forkful_binary
if [[ -n ${BIN:-} ]]; then
    # The binary may be another commit's: say which ran.
    commit="$commit (this tree), binary $bin"
else
    [[ -x $bin ]] || die "no binary at $bin"
fi

log "starting $bin serve --demo (seeds the demo first)"
# Made first: the loop below may read it before the server's shell opens it.
: >"$tmp/server.out"
FORKFUL_LOG=warn "$bin" serve --demo --addr 127.0.0.1:0 --workers "$WORKERS" \
    >>"$tmp/server.out" 2>"$tmp/server.err" &
server_pid=$!
started=$SECONDS

base=$(serving_address "$tmp/server.out" "$tmp/server.err" "$server_pid") ||
    die "the server did not serve: $(cat "$tmp/server.out")"
port=${base##*:}
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
# (not a redirect) before loading it, and that a browser gets the recipe
# page in brotli once it is kept (made for one request, it is gzipped
# fast). What each page type comes as, to a browser, is printed.
declare -A browser_coding
for page in "${pages[@]}"; do
    name=${page%% *} path=${page#* }
    status=$(http_status "$path")
    [[ $status == 200 ]] || die "GET $path answered ${status:-nothing}, not 200"
    http_encoding "$path" >/dev/null
    coding=$(http_encoding "$path")
    browser_coding[$name]=${coding:-identity}
    log "$name: GET $path is 200; to a browser, once kept, ${coding:-identity}"
done
if [[ -n ${browser_coding[recipe]:-} && ${browser_coding[recipe]} != br ]]; then
    die "the recipe page came to a browser as '${browser_coding[recipe]}', not br, once kept"
fi

# --- nginx, serving the same bytes ------------------------------------------

if [[ $NGINX != 0 ]]; then
    # nginx's workers run as nobody: the files must be readable by anyone.
    www=$tmp/www
    mkdir -p "$www/recipes"
    chmod 755 "$tmp" "$www" "$www/recipes"
    save() { # PATH FILE [ENCODING]
        curl -sS --fail -o "$2" ${3:+-H "Accept-Encoding: $3"} "$base$1"
    }
    # Each page type as /NAME, its bytes as forkful sent them: plain, and
    # (where forkful compressed it for a browser) as brotli beside them.
    for page in "${pages[@]}"; do
        name=${page%% *} path=${page#* }
        save "$path" "$www/$name.page"
        if [[ ${browser_coding[$name]} == br ]]; then
            save "$path" "$www/$name.page.br" br
        fi
    done
    chmod 644 "$www"/*
    nginx_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    cat >"$tmp/nginx.conf" <<NGINX
load_module $nginx_module;
daemon off;
worker_processes $WORKERS;
pid $tmp/nginx.pid;
error_log $tmp/nginx.err warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    default_type text/html;
    client_body_temp_path $tmp/nginx-body;
    proxy_temp_path $tmp/nginx-proxy;
    fastcgi_temp_path $tmp/nginx-fastcgi;
    uwsgi_temp_path $tmp/nginx-uwsgi;
    scgi_temp_path $tmp/nginx-scgi;
    server {
        listen 127.0.0.1:$nginx_port;
        root $www;
        brotli_static on;
        location / { try_files \$uri.page =404; }
    }
}
NGINX
    nginx -c "$tmp/nginx.conf" -p "$tmp" >"$tmp/nginx.out" 2>&1 &
    nginx_pid=$!
    nginx_base=http://127.0.0.1:$nginx_port
    for ((i = 0; i < 50; i++)); do
        curl -s -o /dev/null "$nginx_base/" && break
        sleep 0.1
    done
    for page in "${pages[@]}"; do
        name=${page%% *}
        expected=${browser_coding[$name]/identity/}
        coding=$(curl -sS -o /dev/null -w '%{http_code} %header{content-encoding}' \
            -H "Accept-Encoding: $BROWSER_ENCODINGS" "$nginx_base/$name") ||
            die "nginx did not answer /$name: $(cat "$tmp/nginx.out" "$tmp/nginx.err" 2>/dev/null)"
        [[ $coding == "200 $expected" ]] || die "nginx answered /$name with '$coding', not '200 $expected'"
        status=$(curl -sS -o /dev/null -w '%{http_code}' "$nginx_base/$name")
        [[ $status == 200 ]] || die "nginx answered /$name with $status"
    done
    log "nginx $(nginx -v 2>&1 | sed 's/^nginx version: //') serves the same bytes at $nginx_base"
fi

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

for page in "${pages[@]}"; do
    path=${page#* }
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
    last_rps=$(awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "rps") print kv[2] } }' <<<"$stats")
    summary+=("$(awk -v name="$name" '{
        for (i = 2; i <= NF; i++) { split($i, kv, "="); s[kv[1]] = kv[2] }
        errors = s["connect"] + s["read"] + s["write"] + s["status"] + s["timeout"]
        detail = errors ? sprintf(" (connect %d, read %d, write %d, status %d, timeout %d)",
            s["connect"], s["read"], s["write"], s["status"], s["timeout"]) : ""
        printf "%-20s %10.0f %9.2f %9.2f %9.2f %7d%s", name, s["rps"], s["p50"], s["p99"],
            s["p999"], errors, detail
    }' <<<"$stats")")
    awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); s[kv[1]] = kv[2] }
        printf "   %d requests in %.1f s, %.1f KiB per response\n\n",
            s["requests"], s["seconds"], s["requests"] ? s["bytes"] / s["requests"] / 1024 : 0
    }' <<<"$stats"
}

# pair NAME PATH NGINX-PATH [wrk options...]: forkful's run, then nginx's.
ratios=()
pair() {
    local name=$1 path=$2 nginx_path=$3
    shift 3
    run "$name" "$path" "$@"
    [[ -n $nginx_base ]] || return 0
    local ours=$last_rps
    base_saved=$base
    base=$nginx_base
    run "$name, nginx" "$nginx_path" "$@"
    base=$base_saved
    ratios+=("$(awk -v n="$name" -v a="$ours" -v b="$last_rps" \
        'BEGIN { printf "%-16s %8.2f  (%.0f against %.0f req/s)", n, a / b, a, b }')")
}

for page in "${pages[@]}"; do
    name=${page%% *} path=${page#* }
    pair "$name" "$path" "/$name"
    pair "$name (${browser_coding[$name]})" "$path" "/$name" -H "Accept-Encoding: $BROWSER_ENCODINGS"
done
run "recipe (close)" "$recipe_path" -H 'Connection: close'
stop_nginx

# --- a recipe page while 50 clients hammer search and the sitemap ------------

# Each hammering request is a search nobody asked before (a common word and
# a random prefix, so the page cache cannot answer it) or, one in four, the
# sitemap (scripts/new-searches.lua).
hammer_seconds=$(( ${DURATION%s} + 4 ))
echo "== hammer: $CONNECTIONS connections on /search (new queries) and the sitemap, ${hammer_seconds}s, in the background"
SITEMAP_EVERY=4 wrk -t1 -c"$CONNECTIONS" -d"${hammer_seconds}s" -s scripts/new-searches.lua "$base/" \
    >"$tmp/hammer.out" 2>&1 &
hammer_pid=$!
sleep 2
CONNECTIONS_SAVED=$CONNECTIONS
CONNECTIONS=10
run "recipe (hammered)" "$recipe_path" -H "Accept-Encoding: $BROWSER_ENCODINGS"
CONNECTIONS=$CONNECTIONS_SAVED
wait "$hammer_pid" || die "the hammering wrk failed: $(cat "$tmp/hammer.out")"
hammer_rps=$(awk '/^Requests\/sec:/ { print $2 }' "$tmp/hammer.out")
hammer_errors=$(awk '/Non-2xx|Socket errors/ { print }' "$tmp/hammer.out")
echo "   the hammer: $hammer_rps req/s${hammer_errors:+; $hammer_errors}"
echo

alive "$server_pid" || die "the server died during the runs"
hwm=$(vm VmHWM)
rss=$(vm VmRSS)

# --- summary -----------------------------------------------------------------

echo "== summary: commit $commit; $cpus CPUs, ${model:-unknown model}; wrk shares the CPUs"
echo "   $DURATION per run, $CONNECTIONS connections, $THREADS wrk threads, $WORKERS server workers, latencies in ms"
printf '%-20s %10s %9s %9s %9s %7s\n' run req/s p50 p99 p99.9 errors
printf '%s\n' "${summary[@]}"
echo "errors: socket errors (connect/read/write/timeout) plus responses with status >= 400"
if ((${#ratios[@]})); then
    echo
    echo "forkful against nginx serving the same bytes (each pair run back to back):"
    printf '%s\n' "${ratios[@]}"
fi
echo
echo "server peak memory (VmHWM): $(kib_to_mib "$hwm") MiB after the runs" \
    "($(kib_to_mib "$hwm_ready") MiB once seeded and serving, before any load);" \
    "resident now (VmRSS): $(kib_to_mib "$rss") MiB"

log "stopping the server (SIGTERM)"
stop_server
grep '^forkful: stopped' "$tmp/server.out" | sed 's/^/load: /' || true
[[ $server_status -eq 0 ]] || die "the server exited with status $server_status"
