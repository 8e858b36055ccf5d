#!/usr/bin/env bash
# A node built from the log in PostgreSQL, at full size: seeds N full
# synthetic recipes (default 100,000) into a store, copies it into an
# empty log (`forkful log push`), then builds a second node from the log
# alone (an empty --data catching up), starts it again (the start's checks
# against the log, beside the same query with no log), and checks that its
# export is the first store's. Prints each step's wall time and peak RSS.
#
#   scripts/log-rebuild.sh [N]
#
# PostgreSQL: the server FORKFUL_PG_URL names (default
# postgres://postgres@127.0.0.1:5432/postgres), where the script makes a
# database of its own and drops it at the end. Installs GNU time from
# Debian's packages if it is missing. docs/BENCHMARKING.md has the current
# figures, docs/journal/30-log.md every run.
set -euo pipefail
cd "$(dirname "$0")/.."

recipes=${1:-100000}
server=${FORKFUL_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres}
work=$(mktemp -d /tmp/forkful-log-rebuild.XXXXXX)
database=forkful_rebuild_$$
log_url="${server%/*}/$database"
trap 'psql "$server" -qc "DROP DATABASE IF EXISTS $database" >/dev/null 2>&1; rm -rf "$work"' EXIT

# shellcheck source=scripts/measure.sh
source scripts/measure.sh
cargo build --release --quiet
bin=$PWD/target/release/forkful
psql "$server" -qc "CREATE DATABASE $database" >/dev/null

echo "forkful log-rebuild: $recipes full recipes, depth 12, fanout 3"
measure seed "$bin" seed --data "$work/first" --synthetic "$recipes" --depth 12 --fanout 3
measure push "$bin" log push --data "$work/first" --database-url "$log_url"
transactions=$(psql "$log_url" -Atc "SELECT count(*) FROM forkful_log")
echo "the log: $transactions transactions, $(psql "$log_url" -Atc \
    "SELECT pg_size_pretty(pg_total_relation_size('forkful_log'))")"
# A node from the log alone: opening an empty --data on the log catches it
# up, then one small query answers.
measure rebuild "$bin" query --data "$work/second" --database-url "$log_url" \
    '[:find (count ?e) :where [?e :recipe/slug]]'
cat "$work/rebuild.out"
# The same node started again on the store it built: attaching to the log
# checks the store against it (its newest transaction's datoms, and the
# history applied since it was last summed, which the build summed as it
# went), then the same query. Beside it, the query on the store alone,
# which checks nothing: the difference is the check.
measure restart "$bin" query --data "$work/second" --database-url "$log_url" \
    '[:find (count ?e) :where [?e :recipe/slug]]'
measure unchecked "$bin" query --data "$work/second" \
    '[:find (count ?e) :where [?e :recipe/slug]]'
"$bin" export --data "$work/first" "$work/first.edn" >/dev/null
"$bin" export --data "$work/second" "$work/second.edn" >/dev/null
if cmp -s <(grep -v '^#keyspace' "$work/first.edn") <(grep -v '^#keyspace' "$work/second.edn"); then
    echo "the node built from the log holds the first store's datoms"
else
    echo "the node built from the log differs from the first store" >&2
    exit 1
fi
