#!/usr/bin/env bash
# The nemesis run: three nodes on one log in PostgreSQL, four cooks writing
# (new recipes, edits, forks, suggestions of their forks, accepts and
# declines of the suggestions made to them) and reading through all three
# at random, while nodes are killed and started again, paused (SIGSTOP),
# PostgreSQL is restarted, and a proxy between the nodes and PostgreSQL
# drops or stalls every connection, at random.
#
#   scripts/nemesis.sh          # 600 s of faults
#   scripts/nemesis.sh 60       # a shorter run
#
# Builds target/release/forkful and runs tests/it/nemesis.rs against it
# (FORKFUL_BIN) with FORKFUL_NEMESIS_SECONDS set. PostgreSQL is a cluster
# of the test's own (Debian's postgresql, installed if missing). At the end
# the checker reads every client's history: every acknowledged write in
# the log once (suggestions with their state), no version or suggestion
# number acknowledged twice, no client's read going back in time after its
# own write, no 500, and the three nodes' exports equal. It prints the minutes, operations, faults by kind and
# anomalies (which must be 0); the test fails on any anomaly.

set -euo pipefail

seconds=${1:-600}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=scripts/run-header.sh
source "$root/scripts/run-header.sh"
whole_number nemesis "$seconds" "the number of seconds"

echo "nemesis: building (cargo build --release --locked, cargo test --test it --no-run)"
cargo build --release --locked --quiet --bin forkful
cargo test --quiet --test it --no-run

run_header "nemesis: $seconds s of faults, log mode" "$root/target/release/forkful"

log=$(mktemp "${TMPDIR:-/tmp}/forkful-nemesis.XXXXXX")
trap 'rm -f "$log"' EXIT

status=0
FORKFUL_BIN="$root/target/release/forkful" FORKFUL_NEMESIS_SECONDS=$seconds \
    cargo test --test it nemesis:: -- --nocapture 2>&1 | tee "$log" || status=$?
if ! grep -q 'nemesis: [0-9]* s, seed' "$log"; then
    echo "nemesis: the test printed no summary line"
    [[ $status -ne 0 ]] || status=1
fi
if [[ $status -ne 0 ]]; then
    echo "nemesis: FAILED; see the output above"
    exit "$status"
fi
echo "nemesis: passed"
