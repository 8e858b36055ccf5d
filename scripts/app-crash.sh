#!/usr/bin/env bash
# The long crash test of the whole app: the release server, killed with
# SIGKILL 1,000 times while cooks write through its forms.
#
#   scripts/app-crash.sh         # 1,000 rounds
#   scripts/app-crash.sh 100     # a shorter run
#
# Builds target/release/forkful and runs tests/it/app_crash.rs against it
# (FORKFUL_BIN) with FORKFUL_APP_CRASH_ROUNDS set: each round starts the
# server on a durable store, has four cooks create, edit and fork recipes
# over HTTP, kills the server a moment into the writing (now and then while
# it starts), opens the store and checks every acknowledged write, lineage,
# history and search, then starts the server again on the same store. It
# prints the test's summary line, then the rounds run and the time the run
# took (the builds not included).
#
# The test binary itself is the dev profile, as in scripts/crash.sh (its
# dependencies, sled included, are built at opt-level 2); the server, whose
# start-up and request handling the rounds spend their time in, is the
# release build people run.

set -euo pipefail

rounds=${1:-1000}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=scripts/run-header.sh
source "$root/scripts/run-header.sh"
whole_number app-crash "$rounds" "the number of rounds"

echo "app-crash: building (cargo build --release --locked, cargo test --test it --no-run)"
cargo build --release --locked --quiet --bin forkful
cargo test --quiet --test it --no-run

# The header after the build: its format is the one the server run writes.
run_header "app crash test: $rounds rounds" "$root/target/release/forkful"

log=$(mktemp "${TMPDIR:-/tmp}/forkful-app-crash.XXXXXX")
trap 'rm -f "$log"' EXIT

started=$SECONDS
status=0
FORKFUL_BIN="$root/target/release/forkful" FORKFUL_APP_CRASH_ROUNDS=$rounds \
    cargo test --test it app_crash:: -- --nocapture 2>&1 | tee "$log" || status=$?
elapsed=$((SECONDS - started))

echo
# The test's summary line (test output may share its line).
if ! grep -o 'app_crash: [0-9]* rounds,.*' "$log"; then
    # No summary line: the filter ran no test, which is no pass.
    echo "app-crash: the test printed no summary line"
    [[ $status -ne 0 ]] || status=1
fi
if [[ $status -ne 0 ]]; then
    echo "app-crash: FAILED after ${elapsed} s ($rounds rounds asked for); see the output above"
    exit "$status"
fi
echo "app-crash: passed, $rounds rounds in ${elapsed} s ($(date -u -d "@$elapsed" +%H:%M:%S))"
