#!/usr/bin/env bash
# Compares one criterion bench between two commits by interleaved runs, the
# method of docs/BENCHMARKING.md ("Comparing two builds"):
#
#   scripts/compare.sh BENCH BEFORE AFTER [ROUNDS] [FILTER]
#
# builds `cargo bench --bench BENCH` at each commit (in a worktree under
# $WORK, sharing one target directory so dependencies build once), then runs
# before, after, before, after, ... ROUNDS times each (default 3), saving
# criterion baselines b1/a1, b2/a2, ... in one criterion folder, and prints
# each benchmark's medians per round and both ranges. FILTER is criterion's
# name filter (default: every benchmark of BENCH).
set -euo pipefail

bench=${1:?usage: scripts/compare.sh BENCH BEFORE AFTER [ROUNDS] [FILTER]}
before=${2:?the commit before}
after=${3:?the commit after}
rounds=${4:-3}
filter=${5:-}
repo=$(git rev-parse --show-toplevel)
# Commits as this repository names them (a worktree's own HEAD is another).
before=$(git -C "$repo" rev-parse --verify "$before^{commit}")
after=$(git -C "$repo" rev-parse --verify "$after^{commit}")
work=${WORK:-/tmp/forkful-compare}
target=${CARGO_TARGET_DIR:-$work/target}
mkdir -p "$work"

build() { # commit name -> path of the bench binary
    local commit=$1 name=$2 tree=$work/$2
    if [ ! -d "$tree" ]; then
        git -C "$repo" worktree add --detach "$tree" "$commit" >&2
    else
        git -C "$tree" checkout --quiet --detach "$commit"
    fi
    local binary
    binary=$(cd "$tree" && CARGO_TARGET_DIR=$target cargo bench --bench "$bench" --no-run \
        --message-format=json 2>/dev/null |
        jq -r 'select(.reason == "compiler-artifact" and .target.kind == ["bench"]
                      and .target.name == "'"$bench"'") | .executable' | tail -1)
    cp "$binary" "$work/$bench-$name"
    echo "$work/$bench-$name"
}

command -v jq >/dev/null || { sudo apt-get install -y jq >/dev/null || apt-get install -y jq >/dev/null; }
echo "building $bench at $before and $after" >&2
before_bin=$(build "$before" before)
after_bin=$(build "$after" after)

# Baselines land in $target/criterion: run from a crate root with that target.
cd "$work/after"
export CARGO_TARGET_DIR=$target
for round in $(seq 1 "$rounds"); do
    echo "round $round: before" >&2
    "$before_bin" --bench --save-baseline "b$round" $filter >/dev/null
    echo "round $round: after" >&2
    "$after_bin" --bench --save-baseline "a$round" $filter >/dev/null
done

# Every benchmark that has baselines: medians per round, and both ranges.
printf '%-55s %-28s %-28s\n' benchmark "before: medians" "after: medians"
find "$target/criterion" -path '*/b1/estimates.json' | sort | while read -r first; do
    dir=${first%/b1/estimates.json}
    name=${dir#"$target/criterion/"}
    medians() {
        for round in $(seq 1 "$rounds"); do
            jq -r '.median.point_estimate' "$dir/$1$round/estimates.json" 2>/dev/null
        done | awk '{ printf "%s%.4g", (NR > 1 ? " / " : ""), $1 / 1e3 } END { printf " µs" }'
    }
    [ -f "$dir/a1/estimates.json" ] || continue
    printf '%-55s %-28s %-28s\n' "$name" "$(medians b)" "$(medians a)"
done
