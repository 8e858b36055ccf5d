#!/usr/bin/env bash
# The soak test: the release server under steady reads and writes for a
# while, checked for errors, lost writes and memory that does not level off.
#
#   scripts/soak.sh          # 300 s
#   scripts/soak.sh 60       # a shorter run
#   scripts/soak.sh 300 log  # the server on a log in PostgreSQL
#
# Builds target/release/forkful and runs tests/it/soak.rs against it
# (FORKFUL_BIN) with FORKFUL_SOAK_SECONDS set: one server on a durable
# store, four readers (recipe pages, JSON, history, lineage, family pages,
# the catalog and search, half with `Accept-Encoding: gzip, br`) and two
# cooks writing (new recipes, edits, forks) for the first two thirds, on
# loopback. It prints the test's table of samples (elapsed s, requests,
# writes, RSS MiB, store MiB) and its summary line; the test fails on any
# unexpected answer, any acknowledged write that does not read back, and,
# in a run of 30 s or more, memory that grows faster than the store while
# cooks write, or at all (past a small bound) once they stop.
#
# The test binary is the dev profile, as in scripts/crash.sh; the server
# is the release build people run.

set -euo pipefail

seconds=${1:-300}
mode=${2:-embedded}
case $mode in
embedded) log_mode=0 ;;
log) log_mode=1 ;;
*)
    echo "soak: the mode is embedded or log, not $mode" >&2
    exit 2
    ;;
esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=scripts/run-header.sh
source "$root/scripts/run-header.sh"
whole_number soak "$seconds" "the number of seconds"

echo "soak: building (cargo build --release --locked, cargo test --test it --no-run)"
cargo build --release --locked --quiet --bin forkful
cargo test --quiet --test it --no-run

# The header after the build: its format is the one the server run writes.
run_header "soak test: $seconds s, $mode" "$root/target/release/forkful"

log=$(mktemp "${TMPDIR:-/tmp}/forkful-soak.XXXXXX")
trap 'rm -f "$log"' EXIT

status=0
FORKFUL_BIN="$root/target/release/forkful" FORKFUL_SOAK_SECONDS=$seconds FORKFUL_SOAK_LOG=$log_mode \
    cargo test --test it soak:: -- --nocapture 2>&1 | tee "$log" || status=$?
if ! grep -q 'soak: [0-9.]* s, [0-9]* requests' "$log"; then
    # No summary line: the filter ran no test, which is no pass.
    echo "soak: the test printed no summary line"
    [[ $status -ne 0 ]] || status=1
fi
if [[ $status -ne 0 ]]; then
    echo "soak: FAILED; see the output above"
    exit "$status"
fi
echo "soak: passed"
