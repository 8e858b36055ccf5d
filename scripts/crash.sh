#!/usr/bin/env bash
# The long crash test: writers killed with SIGKILL, 1,000 times over.
#
#   scripts/crash.sh         # 1,000 rounds, the figure in docs/SECURITY.md ("Long runs")
#   scripts/crash.sh 100     # a shorter run
#
# Runs tests/it/crash.rs with FORKFUL_CRASH_ROUNDS set: each round starts a
# child with several writer threads, kills it a moment into its writing,
# reopens the store and checks every acknowledged transaction and every
# current-entity entry. It prints the test's own summary line, then the
# rounds run and the time the run took (the build not included).
#
# The dev profile, not --release: the dev profile already builds every
# dependency, sled included, at opt-level 2 (Cargo.toml), and the test's
# time goes to the children's startup, sled and fsync, not to our code;
# a release build of the test binary and its dev-dependencies costs many
# minutes on a small machine and would test a build nobody else tests.

set -euo pipefail

rounds=${1:-1000}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=scripts/run-header.sh
source "$root/scripts/run-header.sh"
whole_number crash "$rounds" "the number of rounds"

echo "crash: building (cargo test --test it --no-run)"
cargo test --quiet --test it --no-run

# The header after the build: its format is the one the tested code writes
# (the binary is built from the same library as the test).
run_header "crash test: $rounds rounds" "$root/target/debug/forkful"

log=$(mktemp "${TMPDIR:-/tmp}/forkful-crash.XXXXXX")
trap 'rm -f "$log"' EXIT

started=$SECONDS
status=0
# `crash::` also names `app_crash::` (scripts/app-crash.sh runs that one).
FORKFUL_CRASH_ROUNDS=$rounds cargo test --test it crash:: -- --nocapture --skip app_crash:: 2>&1 |
    tee "$log" || status=$?
elapsed=$((SECONDS - started))

echo
# The test's summary line (test output may share its line).
if ! grep -o 'crash: [0-9]* rounds,.*' "$log"; then
    # No summary line: the filter ran no test, which is no pass.
    echo "crash: the test printed no summary line"
    [[ $status -ne 0 ]] || status=1
fi
if [[ $status -ne 0 ]]; then
    echo "crash: FAILED after ${elapsed} s ($rounds rounds asked for); see the output above"
    exit "$status"
fi
echo "crash: passed, $rounds rounds in ${elapsed} s ($(date -u -d "@$elapsed" +%H:%M:%S))"
