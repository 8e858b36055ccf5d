#!/usr/bin/env bash
# Fuzzes the readers of outside input with cargo-fuzz (libFuzzer, address
# sanitizer), one target after another.
#
#   scripts/fuzz.sh          # each target for 60 s (about 8 minutes in all)
#   scripts/fuzz.sh 5        # a quick look: each target for 5 s
#   scripts/fuzz.sh 600 edn  # one target (or several), for longer
#
# Needs the nightly toolchain (`rustup toolchain install nightly`);
# installs cargo-fuzz if it is missing. The targets are in fuzz/ (their
# own workspace and target dir); each is one call into
# tests/support/fuzz_checks.rs, which the test suite runs too (tests/it/fuzz.rs).
# Each target starts from a scratch corpus, fuzz/corpus/<target>, seeded
# from the committed inputs in tests/fixtures/fuzz/<target>/ and kept
# between runs. It prints, per target, the executions run, executions per
# second, peak RSS and whether it crashed (with the crashing input, which
# libFuzzer writes to fuzz/artifacts/<target>/); it exits non-zero if any
# target crashed. Save a crashing input as
# tests/fixtures/fuzz/<target>/crash-<what> once it is fixed, so that the
# test suite keeps it fixed.

set -euo pipefail

seconds=${1:-60}
shift || true

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=scripts/run-header.sh
source "$root/scripts/run-header.sh"
whole_number fuzz "$seconds" "the seconds per target"

# The longest input each target is given, in bytes: room for the largest
# seed input (an export excerpt, a seed file), and no more, since libFuzzer
# spends its time in proportion.
declare -A max_len=(
    [datalog_query]=4096
    [edn]=16384
    [ingredient_line]=1024
    [seed_files]=32768
    [export_file]=32768
    [recipe_page]=32768
    [markdown]=16384
)
all_targets=(datalog_query edn ingredient_line seed_files export_file recipe_page markdown)
if (($#)); then
    targets=("$@")
else
    targets=("${all_targets[@]}")
fi
for target in "${targets[@]}"; do
    [[ -n ${max_len[$target]:-} ]] || {
        printf 'fuzz: no target %q (the targets: %s)\n' "$target" "${all_targets[*]}" >&2
        exit 2
    }
done

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

run_header "fuzz: ${targets[*]}, ${seconds} s each"
echo "fuzz: building the targets (cargo +nightly fuzz build)"
cargo +nightly fuzz build

# A figure from libFuzzer's final stats (-print_final_stats=1) in log $1.
final_stat() { awk -v key="stat::$2:" '$1 == key { print $2 }' "$1" | tail -n 1; }

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
crashed=0
summary=()
for target in "${targets[@]}"; do
    corpus=fuzz/corpus/$target
    mkdir -p "$corpus"
    # File by file: `cp -n` fails on files that exist in some coreutils.
    for seed in tests/fixtures/fuzz/"$target"/*; do
        [[ -e $corpus/${seed##*/} ]] || cp "$seed" "$corpus"/
    done
    log=$logs/$target.log
    echo "fuzz: $target for ${seconds} s"
    status=0
    cargo +nightly fuzz run "$target" "$corpus" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=30 \
        -max_len="${max_len[$target]}" -print_final_stats=1 >"$log" 2>&1 || status=$?
    runs=$(final_stat "$log" number_of_executed_units)
    per_sec=$(final_stat "$log" average_exec_per_sec)
    rss=$(final_stat "$log" peak_rss_mb)
    if [[ $status -eq 0 ]]; then
        outcome="no crash"
    else
        crashed=1
        # None when libFuzzer wrote no input (killed for memory, say).
        artifact=$(grep -o 'Test unit written to [^ ]*' "$log" | tail -n 1 | cut -d' ' -f5 || true)
        outcome="CRASHED (exit $status)${artifact:+: $artifact}"
        grep -m 1 -A 3 -E "panicked at|ERROR: (libFuzzer|AddressSanitizer)" "$log" >&2 || tail -n 20 "$log" >&2
    fi
    summary+=("$(printf '%-16s %12s %8s %9s  %s' "$target" "${runs:-?}" "${per_sec:-?}" "${rss:-?} MB" "$outcome")")
done

echo
printf '%-16s %12s %8s %9s  %s\n' target executions exec/s "peak RSS" outcome
printf '%s\n' "${summary[@]}"
exit $crashed
