# Sourced by the scripts that start `forkful serve --addr 127.0.0.1:0`.
#
# `serving_address OUT ERR PID` waits until the server PID, its standard
# output in OUT and its errors in ERR, says where it serves, and prints
# that address (`http://127.0.0.1:PORT`). It fails, saying why on standard
# error, if the server exits first or has not said so within READY_TIMEOUT
# seconds (60: opening a store of a million recipes takes a few).
serving_address() {
    local out=$1 err=$2 pid=$3 address
    local deadline=$((SECONDS + ${READY_TIMEOUT:-60}))
    while :; do
        address=$(sed -n 's/^forkful: serving //p' "$out")
        if [[ -n $address ]]; then
            printf '%s\n' "$address"
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || { echo "the server exited: $(cat "$err")" >&2; return 1; }
        ((SECONDS < deadline)) || { echo "the server did not start within ${READY_TIMEOUT:-60} s" >&2; return 1; }
        sleep 0.1
    done
}

# `server_settled PID` waits until the server PID has used under 2% of a
# CPU for two seconds (4 clock ticks at Linux's 100 a second), so that
# what it reads ahead when it starts (the catalog's orders, the search
# index) is done before anything is timed; it fails, saying so, after 30
# minutes. Not nothing at all: sled's flusher wakes every half second, and
# at 1,000,000 recipes each wake costs a tick or so, so a server never
# used no CPU for a second there.
server_settled() {
    local pid=$1 before after
    after=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
    for _ in $(seq 1 900); do
        sleep 2
        before=$after
        after=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
        ((after - before <= 4)) && return 0
    done
    echo "the server was still busy after 30 minutes" >&2
    return 1
}

# `serve_store BIN DATA DIR` starts BIN serving the store DATA on a port
# of its own, its output in DIR/serve.out and DIR/serve.err, and sets
# `server` (its pid) and `address` once it serves.
serve_store() {
    : >"$3/serve.out"
    "$1" serve --data "$2" --addr 127.0.0.1:0 >>"$3/serve.out" 2>"$3/serve.err" &
    server=$!
    address=$(serving_address "$3/serve.out" "$3/serve.err" "$server")
}

# `builds_in_turn NAME WHAT BIN...` starts a script that serves one store
# with each build in turn (catalog-cold.sh, search-cold.sh): exits unless
# every BIN is an executable, sets `work` to a new temporary directory,
# prints the run's header ("forkful NAME: WHAT" and the machine), and
# stops `server`, if one runs, on exit.
builds_in_turn() {
    local name=$1 what=$2 bin
    shift 2
    for bin in "$@"; do
        [ -x "$bin" ] || { echo "$bin is not an executable"; exit 1; }
    done
    work=$(mktemp -d "/tmp/forkful-$name.XXXXXX")
    echo "forkful $name: $what, $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
    server=
    trap '[ -n "$server" ] && kill "$server" 2>/dev/null || true' EXIT
}

# `stop_store` stops the server `serve_store` started, and waits for it.
stop_store() {
    kill "$server"
    wait "$server" 2>/dev/null || true
    server=
}
