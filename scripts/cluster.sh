#!/usr/bin/env bash
# A site past one machine, measured on one: PostgreSQL holding the log,
# three forkful nodes following it and nginx in front of them, against one
# embedded node serving the same catalog. docs/BENCHMARKING.md has the
# current figures and their targets; docs/journal/30-log.md ("A site on
# three nodes") every run.
#
#   scripts/cluster.sh                        # the published run
#   DURATION=5 ROUNDS=1 RECIPES=2000 scripts/cluster.sh   # a quick check
#
# It seeds RECIPES full synthetic recipes into a store, serves one copy of
# it embedded, copies another into an empty log (`forkful log push`) and
# starts three nodes on that log (the first on the copy, the other two on
# empty directories, built from the log), and nginx with docs/DEPLOYING.md's
# configuration, used as written but for its addresses. Then, ROUNDS times,
# interleaved, each for DURATION seconds:
#
#   embedded   wrk on the embedded node's recipe pages, across the catalog,
#              with a browser's Accept-Encoding, while the writer loop
#              (scripts/cluster_writer.py) edits and forks at RATE writes a
#              second through it;
#   node       the same on the first node of three, the writer going to
#              each node in turn (not asking the other nodes for each write:
#              that polling took CPU from the node measured, which the
#              embedded run does not pay);
#   nginx      the same through nginx, across the three nodes, the writer
#              timing how long each write takes to show on the other two
#              (replication lag);
#   quiet-embedded, quiet-nodes
#              the writer alone, no reads: the write's own cost in each
#              mode, without wrk and the nodes competing for the CPUs.
#
# and prints read throughput, write latency and replication lag, pooled
# over the rounds, with the ratios the issue's targets are about, and the
# CPU each run took a write acknowledged: the servers' (each node's), the
# PostgreSQL server's and the writers'. With every CPU in use, that CPU is
# what decides how many writes a second a mode can take on this machine. At the
# end the nodes are stopped and their exports compared: they must hold the
# same datoms.
#
# Environment (defaults in brackets):
#   RECIPES      full synthetic recipes in the catalog [10000]
#   DURATION     each run's length in seconds [20]
#   ROUNDS       rounds of the three runs [3]
#   RATE         writes a second, shared by the cooks [20]; 0: as fast as
#                the site acknowledges them (each cook writes as soon as
#                its last write was answered)
#   ONE_NODE     1: a sixth run each round, the writers alone all on the
#                first node: what the log's group append does without the
#                other nodes contending for each row [0]
#   COOKS        cooks writing at once, each its own writer process and
#                account [1]; with more than one, the first cook's writes
#                are the ones whose lag is timed
#   CONNECTIONS  wrk's connections [20]
#   WORKERS      each node's worker threads [2]
#   BIN          the forkful binary [the release build of this tree]; another
#                binary to compare one build with another, run by turns
#   FORKFUL_PG_URL  the PostgreSQL server, where the script makes a database
#                of its own and drops it at the end
#                [postgres://postgres@127.0.0.1:5432/postgres]
#
# Installs wrk, nginx, curl and python3 from Debian's packages if missing.
# Everything shares the machine's CPUs (PostgreSQL, four nodes, nginx, wrk
# and the writer): the figures compare the modes on one machine, they are
# not what each would do on machines of its own.
set -euo pipefail
cd "$(dirname "$0")/.."

RECIPES=${RECIPES:-10000}
DURATION=${DURATION:-20}
ROUNDS=${ROUNDS:-3}
RATE=${RATE:-20}
COOKS=${COOKS:-1}
ONE_NODE=${ONE_NODE:-0}
CONNECTIONS=${CONNECTIONS:-20}
WORKERS=${WORKERS:-2}
server=${FORKFUL_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres}
BROWSER_ENCODINGS='gzip, deflate, br, zstd'

# shellcheck source=scripts/run-header.sh
source scripts/run-header.sh
# shellcheck source=scripts/install.sh
source scripts/install.sh
for number in RECIPES DURATION ROUNDS COOKS CONNECTIONS WORKERS; do
    whole_number cluster.sh "${!number}" "$number"
done
# RATE may be 0 (as fast as acknowledged), so it is checked on its own.
[[ $RATE =~ ^[0-9]+$ ]] || {
    printf 'cluster.sh: RATE must be a whole number (0: as fast as acknowledged), not %q\n' "$RATE" >&2
    exit 2
}

log() { printf 'cluster: %s\n' "$*" >&2; }
die() {
    printf 'cluster: error: %s\n' "$*" >&2
    exit 1
}

tmp=$(mktemp -d /tmp/forkful-cluster.XXXXXX)
database=forkful_cluster_$$
log_url="${server%/*}/$database"
pids=()
nginx_pid=
cleanup() {
    local rc=$?
    trap - EXIT
    [[ -z $nginx_pid ]] || kill -QUIT "$nginx_pid" 2>/dev/null || true
    for pid in "${pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    if [[ $rc -ne 0 ]]; then
        for err in "$tmp"/*.err; do
            [[ -s $err ]] || continue
            printf 'cluster: the last lines of %s:\n' "${err##*/}" >&2
            tail -n 10 "$err" >&2
        done
    fi
    psql "$server" -qc "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$tmp"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

command -v wrk >/dev/null || install_packages wrk
command -v curl >/dev/null || install_packages curl
command -v python3 >/dev/null || install_packages python3
[[ -x /usr/bin/time ]] || install_packages time
command -v nginx >/dev/null || install_packages nginx
command -v psql >/dev/null || install_packages postgresql-client
psql "$server" -qc "CREATE DATABASE $database" >/dev/null ||
    die "could not make a database at $server (set FORKFUL_PG_URL to a PostgreSQL server)"

# shellcheck source=scripts/binary.sh
source scripts/binary.sh
forkful_binary
run_header "cluster" "$bin"
pace="$RATE writes/s"
((RATE > 0)) || pace="as fast as acknowledged"
echo "runs:     $ROUNDS rounds of $DURATION s each, $CONNECTIONS wrk connections, $WORKERS workers a node, $COOKS cooks writing, $pace"
echo "catalog:  $RECIPES full synthetic recipes"
echo "postgres: $(psql "$log_url" -Atc 'SHOW server_version'), synchronous_commit $(psql "$log_url" -Atc 'SHOW synchronous_commit')"
echo

# --- the catalog, embedded and in the log -----------------------------------

log "seeding $RECIPES recipes"
"$bin" seed --data "$tmp/embedded" --synthetic "$RECIPES" >/dev/null
"$bin" query --data "$tmp/embedded" '[:find ?s :where [_ :recipe/slug ?s]]' |
    sed -n 's/^"\([a-z0-9][a-z0-9-]*\)"$/\1/p' >"$tmp/slugs"
[[ $(wc -l <"$tmp/slugs") -ge $RECIPES ]] ||
    die "read $(wc -l <"$tmp/slugs") slugs from the store, not $RECIPES or more"
sed 's|^|/recipes/|' "$tmp/slugs" >"$tmp/paths"
cp -a "$tmp/embedded" "$tmp/node1"
log "copying the store into the log"
"$bin" log push --data "$tmp/node1" --database-url "$log_url" >/dev/null

# --- the servers -------------------------------------------------------------

# start NAME FLAGS...: serves in the background; sets port_NAME.
start() {
    local name=$1 pid port= started=$SECONDS
    shift
    # Made here: the server's shell may not have opened them yet when the
    # loop below first reads its output.
    : >"$tmp/$name.out"
    FORKFUL_LOG=warn "$bin" serve --addr 127.0.0.1:0 --workers "$WORKERS" "$@" \
        >>"$tmp/$name.out" 2>"$tmp/$name.err" &
    pid=$!
    pids+=("$pid")
    printf -v "pid_$name" '%s' "$pid"
    while [[ -z $port ]]; do
        port=$(sed -n 's|^forkful: serving http://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$tmp/$name.out")
        kill -0 "$pid" 2>/dev/null || die "$name exited before serving"
        ((SECONDS - started < 300)) || die "$name did not serve within 300 s"
        sleep 0.1
    done
    printf -v "port_$name" '%s' "$port"
    log "$name serves on port $port, ready after $((SECONDS - started)) s"
}
start embedded --data "$tmp/embedded"
for n in 1 2 3; do
    start "node$n" --data "$tmp/node$n" --database-url "$log_url" --trusted-proxy 127.0.0.1
done
nodes="http://127.0.0.1:$port_node1,http://127.0.0.1:$port_node2,http://127.0.0.1:$port_node3"

# nginx, with DEPLOYING.md's configuration: its upstream on the three
# nodes, listening here without TLS, and its own files in $tmp.
nginx_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
awk '/^```nginx$/ { on = 1; next } on && /^```$/ { exit } on' docs/DEPLOYING.md >"$tmp/site.conf"
grep -q 'upstream forkful' "$tmp/site.conf" || die "no nginx configuration in docs/DEPLOYING.md"
substitute() { # PATTERN REPLACEMENT: each must match in the configuration
    grep -q -- "$1" "$tmp/site.conf" || die "DEPLOYING.md's nginx configuration has no '$1'"
    sed -i "s|$1|$2|" "$tmp/site.conf"
}
substitute 'server 10.0.0.11:8080;' "server 127.0.0.1:$port_node1;"
substitute 'server 10.0.0.12:8080;' "server 127.0.0.1:$port_node2;"
substitute 'server 10.0.0.13:8080;' "server 127.0.0.1:$port_node3;"
substitute 'listen 443 ssl;' "listen 127.0.0.1:$nginx_port;"
sed -i '/ssl_certificate/d' "$tmp/site.conf"
cat >"$tmp/nginx.conf" <<NGINX
daemon off;
worker_processes 1;
pid $tmp/nginx.pid;
error_log $tmp/nginx.err warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $tmp/nginx-body;
    proxy_temp_path $tmp/nginx-proxy;
    fastcgi_temp_path $tmp/nginx-fastcgi;
    uwsgi_temp_path $tmp/nginx-uwsgi;
    scgi_temp_path $tmp/nginx-scgi;
    include $tmp/site.conf;
}
NGINX
nginx -c "$tmp/nginx.conf" -p "$tmp" >"$tmp/nginx.out" 2>&1 &
nginx_pid=$!
proxy=http://127.0.0.1:$nginx_port
for ((i = 0; i < 50; i++)); do
    curl -s -o /dev/null "$proxy/" && break
    sleep 0.1
done
first=$(head -n 1 "$tmp/paths")
answer=$(curl -sS -o /dev/null -w '%{http_code} %header{content-encoding}' \
    -H "Accept-Encoding: $BROWSER_ENCODINGS" "$proxy$first") || die "nginx did not answer"
# Compressed as the node sent it: gzip for a page made for one request,
# brotli once it is kept and asked for again.
[[ $answer == "200 br" || $answer == "200 gzip" ]] ||
    die "nginx answered $first with '$answer', not '200 br' or '200 gzip'"
metrics=$(curl -sS -o /dev/null -w '%{http_code}' "$proxy/metrics")
[[ $metrics == 403 ]] || die "nginx answered /metrics from outside its network with $metrics, not 403"
log "nginx $(nginx -v 2>&1 | sed 's/^nginx version: //') on port $nginx_port, upstream the three nodes"

# --- the runs ----------------------------------------------------------------

# wrk: a random recipe page of the catalog per request, with a browser's
# Accept-Encoding; its done() prints one machine-readable line (ms).
cat >"$tmp/catalog.lua" <<LUA
local paths = {}
for line in io.lines("$tmp/paths") do paths[#paths + 1] = line end
wrk.headers["Accept-Encoding"] = "$BROWSER_ENCODINGS"
function setup(thread) thread:set("seed", math.random(1, 1e9)) end
function init() math.randomseed(seed) end
function request() return wrk.format("GET", paths[math.random(#paths)]) end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("READS rps=%.1f p50=%.3f p99=%.3f errors=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000,
    e.connect + e.read + e.write + e.status + e.timeout))
end
LUA

field() { # LINE KEY
    tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"
}

log "warming up every node's pages ($DURATION s each)"
for origin in "http://127.0.0.1:$port_embedded" "$proxy"; do
    wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" -s "$tmp/catalog.lua" "$origin" >/dev/null
done

percentile() { # FILE P: nearest rank
    sort -g "$1" | awk -v p="$2" '{ v[NR] = $1 } END {
        if (NR == 0) { printf "-"; exit }
        r = int((NR * p + 99) / 100); if (r < 1) r = 1; printf "%.2f", v[r] }'
}
median() { percentile "$1" 50; }
range() { sort -g "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.0f-%.0f", lo, hi }'; }

# cpu_ticks PID...: the CPU time, user and system, the processes have
# used so far, in clock ticks (0 for one that is gone).
cpu_ticks() {
    local pid total=0
    for pid in "$@"; do
        # Fields 14 and 15 after the command's name, which may hold spaces.
        total=$((total + $(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null |
            awk '{ t = $12 + $13 } END { print t + 0 }')))
    done
    echo "$total"
}
# The CPU every part of the site used: each server the run wrote to (the
# embedded one, or the three nodes), and PostgreSQL (its processes at the
# time: a connection opened and closed between two readings is not
# counted; the nodes keep theirs open). Prints four numbers, the servers'
# (the second and third 0 for the embedded one) and PostgreSQL's.
cpu_now() { # SERVERS: embedded or log
    if [[ $1 == embedded ]]; then
        echo "$(cpu_ticks "$pid_embedded") 0 0"
    else
        echo "$(cpu_ticks "$pid_node1") $(cpu_ticks "$pid_node2") $(cpu_ticks "$pid_node3")"
    fi
    # shellcheck disable=SC2046 # one word a process
    cpu_ticks $(pgrep -x postgres)
}
ticks_a_second=$(getconf CLK_TCK)

# measure NAME READ-ORIGIN WRITE-ORIGINS RUN [WRITER-OPTION]: wrk and the
# writers at once; with no READ-ORIGIN, the writers alone. Each cook keeps
# their account from one run to the next, one set on the embedded node and
# one on the log.
measure() {
    local name=$1 reads=$2 writes=$3 run=$4 c status store=log writers=() per_cook
    [[ $writes == *,* || $name == *node* ]] || store=embedded
    per_cook=$(awk -v r="$RATE" -v n="$COOKS" 'BEGIN { print r / n }')
    local cpu_before
    cpu_before=$(cpu_now "$store")
    for ((c = 1; c <= COOKS; c++)); do
        local lag_option=${5:-}
        ((c == 1)) || lag_option=--no-lag
        # shellcheck disable=SC2086 # the option, when given, is one word
        /usr/bin/time -f '%U %S' -o "$tmp/writer$c.cpu" \
            python3 scripts/cluster_writer.py --nodes "$writes" --slugs "$tmp/slugs" \
            --rate "$per_cook" --seconds "$DURATION" --run "$run-$c" \
            --cook "$tmp/cook-$store-$c.json" $lag_option >"$tmp/writer$c.out" 2>"$tmp/writer$c.err" &
        writers+=($!)
    done
    if [[ -n $reads ]]; then
        wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" -s "$tmp/catalog.lua" "$reads" >"$tmp/wrk.out"
    else
        echo "READS rps=0 p50=- p99=- errors=0" >"$tmp/wrk.out"
    fi
    for ((c = 1; c <= COOKS; c++)); do
        status=0
        wait "${writers[c - 1]}" || status=$?
        grep -q '^WRITER ' "$tmp/writer$c.out" ||
            die "writer $c printed no figures for $name: $(cat "$tmp/writer$c.err")"
        ((status == 0)) ||
            die "a write failed or never showed ($name, cook $c): $(grep '^WRITER ' "$tmp/writer$c.out") $(cat "$tmp/writer$c.err")"
    done
    # CPU a write, in ms: the servers', PostgreSQL's and the writers'
    # (the cooks' own clients, which the site does not pay for but which
    # share the machine's CPUs with it). Where the CPUs are all in use,
    # what the modes do a write is what decides their writes a second.
    local cpu_after acknowledged cpu_line
    cpu_after=$(cpu_now "$store")
    acknowledged=$(cat "$tmp"/writer*.out | grep -c '^WRITE ' || true)
    # Its columns: all servers, PostgreSQL, the writers, and each server.
    cpu_line=$(cat "$tmp"/writer*.cpu | awk -v before="$cpu_before" -v after="$cpu_after" \
        -v hz="$ticks_a_second" -v n="$acknowledged" '
        { writers += $1 + $2 }
        END {
            split(before, b, /[ \n]+/); split(after, a, /[ \n]+/)
            if (n == 0) n = 1
            for (i = 1; i <= 4; i++) ms[i] = (a[i] - b[i]) * 1000 / hz / n
            printf "%.2f %.2f %.2f %.2f %.2f %.2f", ms[1] + ms[2] + ms[3], ms[4],
                writers * 1000 / n, ms[1], ms[2], ms[3]
        }')
    echo "$cpu_line" >>"$tmp/$name.cpu"
    local read_line rate
    read_line=$(grep '^READS ' "$tmp/wrk.out") || die "wrk printed no figures for $name"
    [[ $(field "$read_line" errors) == 0 ]] || die "wrk saw errors ($name): $read_line"
    field "$read_line" rps >>"$tmp/$name.rps"
    # Acknowledged writes a second: each cook's, summed.
    rate=$(cat "$tmp"/writer*.out | sed -n 's/^WRITER .* rate=\([0-9.]*\) .*/\1/p' |
        awk '{ s += $1 } END { printf "%.1f", s }')
    echo "$rate" >>"$tmp/$name.rate"
    cat "$tmp"/writer*.out | sed -n 's/^WRITE //p' >"$tmp/round.writes"
    cat "$tmp"/writer*.out | sed -n 's/^LAG //p' >"$tmp/round.lags"
    cat "$tmp/round.writes" >>"$tmp/$name.writes"
    cat "$tmp/round.lags" >>"$tmp/$name.lags"
    local lag50=- lag99=-
    if [[ -s $tmp/round.lags ]]; then
        lag50=$(percentile "$tmp/round.lags" 50) lag99=$(percentile "$tmp/round.lags" 99)
    fi
    printf '%-14s round %s: %8.0f req/s (p50 %s ms, p99 %s ms); %s writes/s, p50 %s ms, p99 %s ms; lag p50 %s ms, p99 %s ms\n' \
        "$name" "${run##*-}" "$(field "$read_line" rps)" "$(field "$read_line" p50)" \
        "$(field "$read_line" p99)" "$rate" "$(percentile "$tmp/round.writes" 50)" \
        "$(percentile "$tmp/round.writes" 99)" "$lag50" "$lag99"
    local servers_ms postgres_ms writers_ms n1 n2 n3 each=
    read -r servers_ms postgres_ms writers_ms n1 n2 n3 <<<"$cpu_line"
    [[ $store == embedded ]] || each=" (node1 $n1, node2 $n2, node3 $n3)"
    printf '%-14s          CPU a write: servers %s ms%s, postgres %s ms, writers %s ms\n' \
        "" "$servers_ms" "$each" "$postgres_ms" "$writers_ms"
    rm -f "$tmp"/writer*.out "$tmp"/writer*.err "$tmp"/writer*.cpu
}

for ((round = 1; round <= ROUNDS; round++)); do
    measure embedded "http://127.0.0.1:$port_embedded" "http://127.0.0.1:$port_embedded" "e-$round"
    measure node "http://127.0.0.1:$port_node1" "$nodes" "n-$round" --no-lag
    measure nginx "$proxy" "$nodes" "x-$round"
    measure quiet-embedded "" "http://127.0.0.1:$port_embedded" "qe-$round"
    # With many cooks, their throughput alone is what this run is for: the
    # first cook's asking the other nodes for each write would slow it, as
    # it does not in the embedded run (lag is timed through nginx).
    quiet_lag=
    ((COOKS == 1)) || quiet_lag=--no-lag
    # shellcheck disable=SC2086 # the option, when given, is one word
    measure quiet-nodes "" "$nodes" "qn-$round" $quiet_lag
    if ((ONE_NODE)); then
        measure quiet-node1 "" "http://127.0.0.1:$port_node1" "q1-$round" --no-lag
    fi
done

# --- the figures ---------------------------------------------------------------

echo
echo "== pooled over $ROUNDS rounds"
printf '%-26s %10s %10s %10s\n' "" embedded node nginx
printf '%-26s %10s %10s %10s\n' "reads/s (median of rounds)" \
    "$(median "$tmp/embedded.rps" | cut -d. -f1)" "$(median "$tmp/node.rps" | cut -d. -f1)" \
    "$(median "$tmp/nginx.rps" | cut -d. -f1)"
printf '%-26s %10s %10s %10s\n' "  (range)" "$(range "$tmp/embedded.rps")" \
    "$(range "$tmp/node.rps")" "$(range "$tmp/nginx.rps")"
printf '%-26s %10s %10s %10s\n' "writes/s (median of rounds)" "$(median "$tmp/embedded.rate")" \
    "$(median "$tmp/node.rate")" "$(median "$tmp/nginx.rate")"
for p in 50 99; do
    printf '%-26s %10s %10s %10s\n' "write p$p (ms)" "$(percentile "$tmp/embedded.writes" $p)" \
        "$(percentile "$tmp/node.writes" $p)" "$(percentile "$tmp/nginx.writes" $p)"
done
cat "$tmp/nginx.lags" "$tmp/quiet-nodes.lags" >"$tmp/all.lags"
for p in 50 99; do
    printf '%-26s %10s %10s %10s\n' "lag p$p (ms)" - - "$(percentile "$tmp/nginx.lags" $p)"
done
if ((ONE_NODE)); then
    awk -v n="$(median "$tmp/quiet-node1.rate")" -v e="$(median "$tmp/quiet-embedded.rate")" \
        'BEGIN { printf "the writers alone on one node of three, through the log: %.2f writes/s, %.2f of embedded'"'"'s\n", n, n / e }'
    echo "    write p50 $(percentile "$tmp/quiet-node1.writes" 50) ms, p99 $(percentile "$tmp/quiet-node1.writes" 99) ms"
fi
echo "the writers alone, no reads (quiet): embedded $(median "$tmp/quiet-embedded.rate") writes/s (rounds $(range "$tmp/quiet-embedded.rate")), nodes $(median "$tmp/quiet-nodes.rate") (rounds $(range "$tmp/quiet-nodes.rate"));"
echo "    embedded write p50 $(percentile "$tmp/quiet-embedded.writes" 50) ms, p99 $(percentile "$tmp/quiet-embedded.writes" 99) ms;"
echo "    nodes write p50 $(percentile "$tmp/quiet-nodes.writes" 50) ms, p99 $(percentile "$tmp/quiet-nodes.writes" 99) ms, lag p50 $(percentile "$tmp/quiet-nodes.lags" 50) ms, p99 $(percentile "$tmp/quiet-nodes.lags" 99) ms"
echo "writes: $(wc -l <"$tmp/embedded.writes") embedded, $(cat "$tmp/node.writes" "$tmp/nginx.writes" | wc -l) on the nodes; lags: $(wc -l <"$tmp/all.lags") (each write on each other node)"
echo
# column_median FILE K: the median of the K-th column of FILE's lines.
column_median() {
    awk -v k="$2" '{ print $k }' "$1" >"$tmp/column"
    median "$tmp/column"
}
printf '%-26s %10s %10s %10s %10s %12s\n' "CPU a write, ms (median)" servers postgres writers total \
    "first server"
cpu_runs=(quiet-embedded quiet-nodes)
((ONE_NODE)) && cpu_runs+=(quiet-node1)
for run in "${cpu_runs[@]}" embedded node; do
    printf '%-26s %10s %10s %10s %10s %12s\n' "$run" "$(column_median "$tmp/$run.cpu" 1)" \
        "$(column_median "$tmp/$run.cpu" 2)" "$(column_median "$tmp/$run.cpu" 3)" \
        "$(awk '{ print $1 + $2 + $3 }' "$tmp/$run.cpu" >"$tmp/total"; median "$tmp/total")" \
        "$(column_median "$tmp/$run.cpu" 4)"
done
awk '{ print $1 + $2 + $3 }' "$tmp/quiet-embedded.cpu" >"$tmp/embedded.total"
awk '{ print $1 + $2 + $3 }' "$tmp/quiet-nodes.cpu" >"$tmp/nodes.total"
awk -v e="$(median "$tmp/embedded.total")" -v n="$(median "$tmp/nodes.total")" 'BEGIN {
    printf "the writers alone: a write through three nodes takes %.2fx the CPU of an embedded one,\n", n / e
    printf "    all on this machine; with its CPUs in use, the log'"'"'s writes a second come to about %.2f of embedded'"'"'s\n", e / n }'
echo
awk -v n="$(median "$tmp/node.rps")" -v e="$(median "$tmp/embedded.rps")" \
    'BEGIN { printf "a node'\''s reads against the embedded node'\''s: %.2f (target: at least 0.9)\n", n / e }'
awk -v n="$(median "$tmp/quiet-nodes.rate")" -v e="$(median "$tmp/quiet-embedded.rate")" \
    'BEGIN { printf "the log'\''s writes a second against embedded: %.2f, the writers alone (target: at least 0.8)\n", n / e }'
awk -v n="$(median "$tmp/node.rate")" -v e="$(median "$tmp/embedded.rate")" \
    'BEGIN { printf "                                           %.2f under read load\n", n / e }'
awk -v n="$(percentile "$tmp/node.writes" 99)" -v e="$(percentile "$tmp/embedded.writes" 99)" \
    'BEGIN { printf "write p99 on the nodes against embedded:   %.2fx under load (target: at most 2x)\n", n / e }'
awk -v n="$(percentile "$tmp/quiet-nodes.writes" 99)" -v e="$(percentile "$tmp/quiet-embedded.writes" 99)" \
    'BEGIN { printf "                                           %.2fx with the writer alone\n", n / e }'
echo "replication lag, nginx and quiet runs:     p50 $(percentile "$tmp/all.lags" 50) ms (target: under 10), p99 $(percentile "$tmp/all.lags" 99) ms (target: under 50)"

# --- the nodes agree ---------------------------------------------------------

log "stopping the nodes and comparing their stores"
kill -QUIT "$nginx_pid" 2>/dev/null || true
for pid in "${pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
done
for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
done
pids=()
for n in 1 2 3; do
    "$bin" export --data "$tmp/node$n" --database-url "$log_url" "$tmp/node$n.edn" >/dev/null
    grep -v '^#keyspace' "$tmp/node$n.edn" >"$tmp/node$n.datoms"
done
cmp -s "$tmp/node1.datoms" "$tmp/node2.datoms" && cmp -s "$tmp/node1.datoms" "$tmp/node3.datoms" ||
    die "the three nodes' stores differ after the run"
echo "the three nodes hold the same $(wc -l <"$tmp/node1.datoms") lines of datoms at t $(psql "$log_url" -Atc 'SELECT max(t) FROM forkful_log')"
