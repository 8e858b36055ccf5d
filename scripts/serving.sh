# Sourced by the scripts that start `forkful serve --addr 127.0.0.1:0`:
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
