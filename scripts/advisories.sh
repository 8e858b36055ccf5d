#!/usr/bin/env bash
# Refreshes tests/fixtures/advisories from a clone of the RustSec advisory
# database (github.com/rustsec/advisory-db): the advisories of every crate
# Cargo.lock names, and the database's commit, which the test
# `licences::no_crate_built_has_a_rustsec_advisory_not_answered` checks
# the lock against. Run it where the database can be fetched (this
# project's machines reach only package registries), then run the test.
#
#   scripts/advisories.sh PATH_TO_ADVISORY_DB_CLONE
set -euo pipefail

db=${1:?usage: scripts/advisories.sh PATH_TO_ADVISORY_DB_CLONE}
repo=$(git rev-parse --show-toplevel)
out=$repo/tests/fixtures/advisories
commit=$(git -C "$db" rev-parse HEAD)
date=$(git -C "$db" log -1 --format=%cs)

rm -rf "$out/crates"
mkdir -p "$out/crates"
sed -n 's/^name = "\(.*\)"$/\1/p' "$repo/Cargo.lock" | sort -u | while read -r crate; do
    if git -C "$db" cat-file -e "HEAD:crates/$crate" 2>/dev/null; then
        mkdir -p "$out/crates/$crate"
        git -C "$db" ls-tree --name-only "HEAD:crates/$crate" | while read -r file; do
            git -C "$db" show "HEAD:crates/$crate/$file" > "$out/crates/$crate/$file"
        done
    fi
done
printf '%s %s\n' "$commit" "$date" > "$out/SNAPSHOT"
# The crates looked for: a crate built that is not among them was added
# since, and its advisories were never copied (the test says so).
sed -n 's/^name = "\(.*\)"$/\1/p' "$repo/Cargo.lock" | sort -u > "$out/CRATES"
echo "advisories of $(ls "$out/crates" | wc -l) crates, from $commit ($date)"
